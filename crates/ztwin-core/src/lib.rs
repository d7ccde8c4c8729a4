//! # ztwin-core
//!
//! The models and the simulation engine of ztwin, a performance digital twin of ZFS under
//! database workloads. No Python here: the `ztwin` package drives this crate through
//! `ztwin-py`.
//!
//! Modules mirror the I/O stack, top to bottom, one layer each. One sysbench point select,
//! followed down and back up (the driver's step is `run::step`):
//!
//! 1. [`workload`] draws the row id as sysbench does (`workload::rand`,
//!    `workload::sysbench`) and hands the client a statement: the index lookups it makes
//!    (`workload::statement`: table, index, key), from the client's statement source
//!    ([`workload::StatementSource`]; other benchmarks are other sources of the same).
//! 2. [`db`] (the layer: [`db::Database`]) maps the key to the B+tree path of pages of the
//!    table's layout (`db::innodb::btree`: a schema's record sizes set the fan-out) and
//!    looks each page up in the buffer pool
//!    (`db::innodb::buffer_pool`); a missing page is a read of the data file at
//!    `page_no * innodb_page_size`.
//! 3. [`fs`] turns the file read into block reads: the ZFS layer (`fs::zfs::layer`) walks
//!    the block-pointer tree from the dnode down (`fs::zfs::geometry`, `fs::zfs::read_path`),
//!    asking the ARC at each level and starting prefetch reads (`fs::zfs::prefetch`);
//!    XFS/ext4 map the offset through extents with no metadata read (`fs::extent`).
//! 4. [`cache::arc`] answers hit or miss, with OpenZFS's MRU/MFU/ghost lists and the
//!    release's adaptive targets; sizes are compressed sizes (`fs::zfs::compression`).
//! 5. On ZFS each leaf's vdev queue (`fs::zfs::vdev_queue`: priority classes, their
//!    minimum and maximum in flight, aggregation) decides when a read goes to its device;
//!    [`dev`] queues each device I/O behind the device's IOPS and throughput caps and its
//!    parallelism (through a RAID controller's cache, `dev::controller`, and a Linux md
//!    array's mapping, `dev::md_raid10`, where the scenario has them); [`dev::cpu`] queues
//!    the CPU work on the vCPUs.
//! 6. [`sim`] orders all of it on one integer-nanosecond clock; [`stats`] counts it in
//!    the terms users read (arcstats names, latency percentiles, per-interval series).
//!
//! On the way back up: the device's completion wakes the client (`run::events`), the
//! filesystem layer's read step returns `Done` (the ZFS layer copies the chunk out and
//! releases its dbufs), the database takes the page into its buffer pool
//! (`Database::read_done`), and the statement goes on to its next page or finishes.
//! [`config`] is data only (it imports no model); [`support`] holds the generic maps and
//! memory hints the models share.
//!
//! A write goes down the same way into the filesystem's write path: on ZFS
//! (`fs::zfs::write_path`) each record is dirtied in the open txg, which the txg sync
//! writes later, and logged for the intent log (`fs::zfs::zil`); an fsync or a
//! synchronous write commits that log, writing log blocks (to the SLOG when there is one)
//! and flushing the devices written, and returns when they are stable.
//!
//! [`run`] wires one resolved [`config::VariantConfig`] into that stack and runs it: it
//! keeps the clients, the CPUs and the typed event queue (`run::events`: clients, prefetch
//! reads, the L2ARC feed, the txg sync and the intent log), and each request goes down the
//! layers and comes back up.

pub mod cache;
pub mod config;
pub mod db;
pub mod dev;
pub mod error;
pub mod fs;
pub mod replay;
pub mod run;
pub mod sim;
pub mod stats;
pub mod support;
pub mod workload;

pub use error::{Error, Result};
