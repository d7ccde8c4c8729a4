//! The driver: builds the stack of one resolved variant and runs it on the simulated clock.
//!
//! Each sysbench thread is a closed-loop client: it issues a statement, waits for it, and
//! issues the next. A client is a small state machine stepped by events; each step does
//! the functional work of one layer at the current simulated time (a buffer-pool lookup,
//! one ARC lookup of one tree level) and either continues at once or waits for a resource:
//!
//! ```text
//!  Start ─► NextPage ─┬─ BP hit ─────────────────────────────────────► NextPage (next page)
//!                     └─ BP miss ─► ReadStart (CPU so far runs) ─┬─ XFS/ext4: device read ─► PageDone
//!                                                                └─ ZFS, per record of the page:
//!     ZfsRecord: the lowest level whose dbuf exists (one ARC access there; see fs::zfs::dbuf)
//!     ZfsWalk:   each level below it: arc_read; a miss goes to the device at once; an
//!                indirect block is waited for (the next level needs it), data is not
//!     ZfsPageEnd: wait for the page's data reads, copy out, release the dbufs ─► NextPage
//!  ... last page of the last lookup ─► Finish (CPU runs, latency recorded) ─► Start
//! ```
//!
//! CPU work accumulates per client and runs on the vCPUs (FCFS) before the client starts a
//! file read and before it finishes a statement, so CPU contention delays I/O issue as a
//! busy machine does; the CPU a read costs after it completes (interrupt, zio pipeline,
//! checksum, decompression) joins the next burst. A page another client is reading is
//! waited for (InnoDB's io_fix), and so is a block (a dbuf in DB_READ): never read twice.

use hashbrown::HashMap;
use serde_json::{json, Map, Value};

use crate::cache::arc::{Arc, ArcAccess, ArcParams, ArcStats, BufType, ReadFlags};
use crate::cache::l2arc::{L2arcConfig, L2arcDeviceConfig, L2arcParams};
use crate::config::{
    CacheProperty, DatabaseConfig, DatasetConfig, FsConfig, PhaseConfig, VariantConfig, WorkloadConfig,
    ZfsRelease,
};
use crate::db::innodb::btree::{TableLayout, MAX_DEPTH};
use crate::db::innodb::buffer_pool::{BufferPool, PageKey};
use crate::dev::cpu::Cpus;
use crate::dev::device::{Device, DeviceCounters, Op};
use crate::error::{Error, Result};
use crate::fs::extent::ExtentFs;
use crate::fs::zfs::compression::CompressionModel;
use crate::fs::zfs::dbuf::{DbufLayer, DBUF_CACHE_SHIFT};
use crate::fs::zfs::geometry::FileGeometry;
use crate::fs::zfs::read_path::ZfsLayout;
use crate::sim::queue::EventQueue;
use crate::sim::time::{Nanos, SEC};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::series::Series;
use crate::workload::sysbench::{Index, Statement, SysbenchGen};

/// Where a client is in its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    NextPage,
    /// A buffer-pool miss: run the CPU work so far, then start the file read.
    ReadStart,
    ZfsRecord,
    ZfsWalk,
    ZfsAdvance,
    /// Every record of the page is walked; wait for the data reads still in flight.
    ZfsPageEnd,
    /// The page's device read (XFS/ext4) completed.
    PageDone,
    Finish,
    Blocked,
    /// Nothing more to issue in this phase.
    Idle,
}

/// What the clients of the current phase do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// sysbench statements until `issue_until`; statements in progress then finish.
    Workload { issue_until: Nanos },
    /// One reader going through every table file (`cat`), `read_size` bytes a read.
    Cat { read_size: u32, passes: u32, pass: u32, table: u32, offset: u64 },
}

/// A page another client is reading, that this client waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    None,
    Page(u64),
}

#[derive(Debug, Clone, Copy)]
struct Client {
    state: State,
    wait: Wait,
    lookup: usize,
    path: [u64; MAX_DEPTH],
    path_len: usize,
    path_pos: usize,
    space: u32,
    page: u64,
    /// The file read in progress: bytes [read_offset, read_offset + read_len) of table `space`.
    read_offset: u64,
    read_len: u32,
    rec: u64,
    rec_last: u64,
    level: u8,
    /// Completion of the page's data (L0) reads in flight: they are issued together, as
    /// dmu_buf_hold_array_by_dnode issues every record read of one request before waiting.
    data_done: Nanos,
    cpu_pending: Nanos,
    started: Nanos,
}

/// CPU costs in simulated ns on this machine's vCPUs (reference costs / speed).
#[derive(Debug, Clone, Copy)]
struct Costs {
    statement: Nanos,
    row: Nanos,
    page_access: Nanos,
    syscall: Nanos,
    device_io: Nanos,
    zfs_block: Nanos,
    zio: Nanos,
    memcpy_ns_per_byte: f64,
    checksum_ns_per_byte: f64,
    decompress_ns_per_byte: f64,
}

// One per run: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Fs {
    Zfs {
        arc: Box<Arc>,
        dbufs: Box<DbufLayer>,
        /// The L2ARC cache device, if any.
        cache_device: Option<usize>,
        layout: ZfsLayout,
        vdev_device: Vec<usize>,
        data_flags: ReadFlags,
        meta_flags: ReadFlags,
    },
    Extent(ExtentFs),
}

/// Counters that the window and the intervals difference.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    time: Nanos,
    statements: u64,
    rows: u64,
    bp_requests: u64,
    bp_reads: u64,
    cpu_busy: Nanos,
    devices: Vec<DeviceCounters>,
    arc: Option<ArcStats>,
}

/// The series being recorded across phases.
struct Recorder {
    series: Series,
    prev: Snapshot,
    next_report: Nanos,
}

fn secs(t: Nanos) -> f64 {
    t as f64 / SEC as f64
}

/// Result of one variant: the summary document and the per-interval series.
#[derive(Debug, Clone)]
pub struct VariantResult {
    /// Summary over the measured window (see [`run_variant_json`] for the shape).
    pub summary: Value,
    /// Per-interval columns over warm-up and window.
    pub series: Series,
}

struct Sim<'a> {
    cfg: &'a VariantConfig,
    costs: Costs,
    page_size: u32,
    cpus: Cpus,
    devices: Vec<Device>,
    bp: BufferPool,
    table: TableLayout,
    fs: Fs,
    /// One generator per client: sysbench threads draw from their own streams (and, for
    /// select_random_points, their own slice of k).
    gens: Vec<SysbenchGen>,
    /// The statement each client is executing (kept apart so a client step copies little).
    stmts: Vec<Statement>,
    clients: Vec<Client>,
    queue: EventQueue,
    bp_inflight: HashMap<u64, u32>,
    /// Blocks being read from a device, with their completion time; a reader that finds
    /// one waits until then (dbuf_read on a dbuf in DB_READ). The reader that issued the
    /// read removes the entry when its page is done.
    block_inflight: HashMap<u64, Nanos>,
    /// Per client, the blocks it has in flight (removed from `block_inflight` at page end).
    owned_inflight: Vec<Vec<u64>>,
    statements: u64,
    rows: u64,
    bp_requests: u64,
    bp_reads: u64,
    window_hist: LatencyHistogram,
    interval_hist: LatencyHistogram,
    measuring: bool,
    mode: Mode,
    /// Bytes and read calls served to `cat` phases.
    cat_bytes: u64,
    cat_reads: u64,
    /// Simulated time of the last event processed.
    clock: Nanos,
    /// Index of the phase running (a series column).
    phase_index: usize,
    /// When the l2arc_feed_thread next runs (None without a cache device).
    next_feed: Option<Nanos>,
    events: u64,
    block_lookups: u64,
    /// Block lookups that found the block being read by another client and waited.
    block_waits: u64,
}

fn scaled(ns: u64, speed: f64) -> Nanos {
    (ns as f64 / speed).round() as Nanos
}

impl<'a> Sim<'a> {
    fn new(cfg: &'a VariantConfig) -> Result<Self> {
        let DatabaseConfig::Innodb(db) = &cfg.database;
        let DatasetConfig::Sysbench(ds) = &cfg.dataset;
        let WorkloadConfig::Sysbench(wl) = &cfg.workload;
        let c = &cfg.machine.cpu;
        let costs = Costs {
            statement: scaled(c.statement_ns, c.speed),
            row: scaled(c.row_ns, c.speed),
            page_access: scaled(c.page_access_ns, c.speed),
            syscall: scaled(c.syscall_ns, c.speed),
            device_io: scaled(c.device_io_ns, c.speed),
            zfs_block: scaled(c.zfs_block_ns, c.speed),
            zio: scaled(c.zio_ns, c.speed),
            memcpy_ns_per_byte: SEC as f64 / c.memcpy_bytes_per_sec as f64 / c.speed,
            checksum_ns_per_byte: SEC as f64 / c.checksum_bytes_per_sec as f64 / c.speed,
            decompress_ns_per_byte: SEC as f64 / c.decompress_bytes_per_sec as f64 / c.speed,
        };
        let device_index = |name: &str, field: &str| {
            cfg.devices
                .iter()
                .position(|d| d.name == name)
                .ok_or_else(|| Error::config(field, format!("names unknown device '{name}'")))
        };
        let devices: Vec<Device> = cfg
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| Device::new(d, cfg.seed ^ (0xd1b5_4a32_d192_ed03u64.wrapping_mul(i as u64 + 1))))
            .collect();
        let table = TableLayout::sysbench(ds.table_size, db.innodb_page_size);
        let fs = match &cfg.filesystem {
            FsConfig::Zfs(z) => {
                let geometry = FileGeometry::new(table.file_size(), z.recordsize, z.indirect_block_size);
                let compression =
                    CompressionModel::new(z.compression, ds.compress_ratio, z.ashift, cfg.seed)?;
                let vdev_device = z
                    .vdevs
                    .iter()
                    .map(|v| device_index(v, "filesystem.vdevs"))
                    .collect::<Result<Vec<_>>>()?;
                let layout = ZfsLayout {
                    geometry,
                    compression,
                    indirect_block_size: z.indirect_block_size,
                    nvdevs: vdev_device.len() as u32,
                };
                let cache_device = match z.cache.first() {
                    Some(name) => Some(device_index(name, "filesystem.cache")?),
                    None => None,
                };
                let arc = new_arc(cfg, z, cache_device)?;
                let data_flags =
                    ReadFlags { prefetch: false, uncacheable: z.primarycache != CacheProperty::All };
                let meta_flags =
                    ReadFlags { prefetch: false, uncacheable: z.primarycache == CacheProperty::None };
                Fs::Zfs {
                    arc: Box::new(arc),
                    dbufs: Box::new(DbufLayer::new()),
                    cache_device,
                    layout,
                    vdev_device,
                    data_flags,
                    meta_flags,
                }
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                if db.innodb_flush_method != "O_DIRECT" {
                    return Err(Error::config(
                        "database.innodb_flush_method",
                        "fsync (buffered I/O through the Linux page cache) is not modelled yet on XFS/ext4; use O_DIRECT",
                    ));
                }
                Fs::Extent(ExtentFs {
                    device: device_index(&x.device, "filesystem.device")?,
                    block_size: x.block_size,
                })
            }
        };
        let threads = wl.threads as usize;
        let fs_has_cache = matches!(&fs, Fs::Zfs { cache_device: Some(_), .. });
        let gens = (0..wl.threads).map(|t| SysbenchGen::for_thread(cfg.seed, t, wl, ds)).collect();
        let stmts = (0..threads).map(|_| Statement::default()).collect();
        let client = Client {
            state: State::Start,
            wait: Wait::None,
            lookup: 0,
            path: [0; MAX_DEPTH],
            path_len: 0,
            path_pos: 0,
            space: 0,
            page: 0,
            read_offset: 0,
            read_len: 0,
            rec: 0,
            rec_last: 0,
            level: 0,
            data_done: 0,
            cpu_pending: 0,
            started: 0,
        };
        let queue = EventQueue::with_capacity(threads + 1);
        Ok(Sim {
            cfg,
            costs,
            page_size: db.innodb_page_size,
            cpus: Cpus::new(cfg.machine.vcpus),
            devices,
            bp: BufferPool::new(db),
            table,
            fs,
            gens,
            stmts,
            clients: vec![client; threads],
            queue,
            bp_inflight: HashMap::with_capacity(threads * 4),
            block_inflight: HashMap::with_capacity(threads * 16),
            owned_inflight: (0..threads).map(|_| Vec::with_capacity(16)).collect(),
            statements: 0,
            rows: 0,
            bp_requests: 0,
            bp_reads: 0,
            window_hist: LatencyHistogram::new(),
            interval_hist: LatencyHistogram::new(),
            measuring: false,
            mode: Mode::Workload { issue_until: 0 },
            cat_bytes: 0,
            cat_reads: 0,
            clock: 0,
            phase_index: 0,
            // The l2arc_feed_thread first wakes after l2arc_feed_secs.
            next_feed: fs_has_cache.then_some(SEC),
            events: 0,
            block_lookups: 0,
            block_waits: 0,
        })
    }

    fn snapshot(&self, time: Nanos) -> Snapshot {
        Snapshot {
            time,
            statements: self.statements,
            rows: self.rows,
            bp_requests: self.bp_requests,
            bp_reads: self.bp_reads,
            cpu_busy: self.cpus.busy_ns_at(time),
            devices: self.devices.iter().map(|d| d.counters_at(time)).collect(),
            arc: match &self.fs {
                Fs::Zfs { arc, .. } => Some(arc.stats()),
                Fs::Extent(_) => None,
            },
        }
    }

    /// Sets the path of lookup `c.lookup` of the client's statement.
    fn start_lookup(&self, i: usize, c: &mut Client) {
        let l = self.stmts[i].lookups[c.lookup];
        c.space = l.table;
        c.path_len = match l.index {
            Index::Clustered => self.table.clustered_path(l.key, &mut c.path),
            Index::Secondary => self.table.secondary_path(l.key, &mut c.path),
        };
        c.path_pos = 0;
    }

    /// Steps client `i` at `now` until it must wait; schedules its next event.
    fn step(&mut self, i: usize, now: Nanos) {
        let mut c = self.clients[i];
        loop {
            match c.state {
                State::Start => {
                    match self.mode {
                        Mode::Workload { issue_until } if now >= issue_until => {
                            c.state = State::Idle;
                            break;
                        }
                        Mode::Workload { .. } => {}
                        Mode::Cat { .. } => {
                            let Some((table, offset, len)) = self.cat_next() else {
                                c.state = State::Idle;
                                break;
                            };
                            c.space = table;
                            c.read_offset = offset;
                            c.read_len = len;
                            c.started = now;
                            c.cpu_pending += self.costs.syscall;
                            c.state = State::ReadStart;
                            continue;
                        }
                    }
                    self.gens[i].next(&mut self.stmts[i]);
                    c.started = now;
                    c.cpu_pending += self.costs.statement + self.costs.row * self.stmts[i].rows as u64;
                    c.lookup = 0;
                    if self.stmts[i].n == 0 {
                        c.state = State::Finish;
                        continue;
                    }
                    self.start_lookup(i, &mut c);
                    c.state = State::NextPage;
                }
                State::NextPage => {
                    if c.path_pos == c.path_len {
                        c.lookup += 1;
                        if c.lookup == self.stmts[i].n {
                            c.state = State::Finish;
                            continue;
                        }
                        self.start_lookup(i, &mut c);
                    }
                    c.page = c.path[c.path_pos];
                    let key = PageKey::new(c.space, c.page);
                    c.cpu_pending += self.costs.page_access;
                    if let Some(waiters) = self.bp_inflight.get_mut(&key.0) {
                        *waiters += 1;
                        c.wait = Wait::Page(key.0);
                        c.state = State::Blocked;
                        break;
                    }
                    self.bp_requests += 1;
                    if self.bp.access(key, now) {
                        c.path_pos += 1;
                        continue;
                    }
                    self.bp_reads += 1;
                    self.bp_inflight.insert(key.0, 0);
                    c.cpu_pending += self.costs.syscall;
                    c.read_offset = c.page * self.page_size as u64;
                    c.read_len = self.page_size;
                    c.state = State::ReadStart;
                }
                State::ReadStart => {
                    if self.run_pending_cpu(i, &mut c, now) {
                        break;
                    }
                    match &self.fs {
                        Fs::Extent(x) => {
                            let bytes = x.read_bytes(c.read_offset, c.read_len);
                            let done = self.devices[x.device].submit(now, Op::Read, bytes);
                            c.cpu_pending += self.costs.device_io;
                            c.state = State::PageDone;
                            self.queue.push(done, i as u32);
                            break;
                        }
                        Fs::Zfs { layout, .. } => {
                            let (first, last) = layout.records(c.read_offset, c.read_len);
                            c.rec = first;
                            c.rec_last = last;
                            c.data_done = now;
                            c.state = State::ZfsRecord;
                        }
                    }
                }
                State::ZfsRecord => {
                    // dbuf_hold of the record: one access at the lowest level whose dbuf
                    // exists, then a read of every level below it (see fs::zfs::dbuf).
                    let Fs::Zfs { arc, dbufs, layout, .. } = &mut self.fs else {
                        unreachable!("ZfsRecord only on ZFS")
                    };
                    let object = c.space + 1;
                    let nlevels = layout.nlevels();
                    let found = (0..nlevels).find(|&l| dbufs.exists(layout.block(object, c.rec, l).0));
                    let Some(level) = found else {
                        // No dbuf on the path: start at the dnode's block pointer.
                        c.level = nlevels - 1;
                        c.state = State::ZfsWalk;
                        continue;
                    };
                    let (key, info) = layout.block(object, c.rec, level);
                    dbufs.hold_existing(key);
                    c.level = level;
                    c.state = State::ZfsAdvance;
                    c.cpu_pending += self.costs.zfs_block;
                    if let Some(&done) = self.block_inflight.get(&key.0) {
                        // The dbuf is being read (DB_READ): dbuf_read waits on db_changed,
                        // with no ARC access.
                        self.block_lookups += 1;
                        self.block_waits += 1;
                        if level == 0 {
                            c.data_done = c.data_done.max(done);
                        } else if done > now {
                            self.queue.push(done, i as u32);
                            break;
                        }
                        continue;
                    }
                    if info.psize != 0 && arc.contains(key) {
                        // arc_buf_access(): an ARC hit, no copy, no decompression. (If the
                        // ARC model evicted the header, the dbuf still serves its data: the
                        // real ARC cannot evict a buffer a dbuf references.)
                        self.block_lookups += 1;
                        let flags = ReadFlags::default();
                        let hit = arc.access(key, info, flags, now);
                        debug_assert_eq!(hit, ArcAccess::Hit);
                    }
                }
                State::ZfsWalk => {
                    let Fs::Zfs { arc, dbufs, cache_device, layout, vdev_device, data_flags, meta_flags } =
                        &mut self.fs
                    else {
                        unreachable!("ZfsWalk only on ZFS")
                    };
                    let object = c.space + 1;
                    let (key, info) = layout.block(object, c.rec, c.level);
                    let flags = if info.kind == BufType::Data { *data_flags } else { *meta_flags };
                    // dbuf_create under the parent (held by the new child from now on), then
                    // the reader's own hold on the parent is dropped.
                    let parent =
                        (c.level + 1 < layout.nlevels()).then(|| layout.block(object, c.rec, c.level + 1).0);
                    dbufs.create(key, parent, info.lsize, !flags.uncacheable);
                    if let Some(p) = parent {
                        let target = arc.c() >> DBUF_CACHE_SHIFT;
                        dbufs.release(p, target, |k| layout.parent_of(k));
                    }
                    c.cpu_pending += self.costs.zfs_block;
                    if info.psize == 0 {
                        // A hole or an embedded block: the block pointer itself holds the
                        // content (BP_IS_HOLE / BP_IS_EMBEDDED), nothing to read or cache.
                        c.state = State::ZfsAdvance;
                        continue;
                    }
                    self.block_lookups += 1;
                    debug_assert!(
                        !self.block_inflight.contains_key(&key.0),
                        "a new dbuf cannot be in flight"
                    );
                    // arc_read: the new dbuf gets its own decompressed copy (arc_buf_fill).
                    let decompress = if info.psize < info.lsize {
                        (info.lsize as f64 * self.costs.decompress_ns_per_byte) as Nanos
                    } else {
                        0
                    };
                    let read = match arc.access(key, info, flags, now) {
                        ArcAccess::Hit => None,
                        // l2arc_read: the block's asize from the cache device.
                        ArcAccess::L2Hit { asize, .. } => {
                            Some((cache_device.expect("L2 hit without a cache device"), asize))
                        }
                        ArcAccess::Miss { .. } => Some((vdev_device[layout.vdev_of(key)], info.psize)),
                    };
                    match read {
                        None => {
                            c.cpu_pending += decompress;
                            c.state = State::ZfsAdvance;
                        }
                        Some((device, bytes)) => {
                            // The zio goes out now; its CPU (pipeline, interrupt, checksum,
                            // decompression) is charged before the client's next wait.
                            let done = self.devices[device].submit(now, Op::Read, bytes);
                            self.block_inflight.insert(key.0, done);
                            self.owned_inflight[i].push(key.0);
                            c.cpu_pending += self.costs.device_io
                                + self.costs.zio
                                + (info.psize as f64 * self.costs.checksum_ns_per_byte) as Nanos
                                + decompress;
                            c.state = State::ZfsAdvance;
                            if c.level == 0 {
                                // Data: the next record's read goes out at once.
                                c.data_done = c.data_done.max(done);
                            } else {
                                // An indirect block: the level below cannot be located
                                // before it arrives.
                                self.queue.push(done, i as u32);
                                break;
                            }
                        }
                    }
                }
                State::ZfsAdvance => {
                    if c.level > 0 {
                        c.level -= 1;
                        c.state = State::ZfsWalk;
                    } else if c.rec < c.rec_last {
                        c.rec += 1;
                        c.state = State::ZfsRecord;
                    } else {
                        c.state = State::ZfsPageEnd;
                        if c.data_done > now {
                            self.queue.push(c.data_done, i as u32);
                            break;
                        }
                    }
                }
                State::ZfsPageEnd => {
                    // dmu_read_uio: copy the page out of the dbufs into InnoDB's buffer,
                    // then dmu_buf_rele_array: the record dbufs go to the dbuf cache.
                    c.cpu_pending += (c.read_len as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
                    self.release_records(&c);
                    for key in self.owned_inflight[i].drain(..) {
                        self.block_inflight.remove(&key);
                    }
                    self.page_read_done(&mut c, now);
                }
                State::PageDone => self.page_read_done(&mut c, now),
                State::Finish => {
                    if self.run_pending_cpu(i, &mut c, now) {
                        break;
                    }
                    // Counted always (the series covers the warm-up); the summary takes
                    // differences over the window, and only the window's latencies.
                    self.statements += 1;
                    self.rows += self.stmts[i].rows as u64;
                    self.interval_hist.record(now - c.started);
                    if self.measuring {
                        self.window_hist.record(now - c.started);
                    }
                    c.state = State::Start;
                }
                State::Blocked | State::Idle => unreachable!("a blocked or idle client has no event"),
            }
        }
        self.clients[i] = c;
    }

    /// Runs the client's accumulated CPU work on the vCPUs and schedules it to resume
    /// (same state) when that work is done; false if there was none.
    fn run_pending_cpu(&mut self, i: usize, c: &mut Client, now: Nanos) -> bool {
        if c.cpu_pending == 0 {
            return false;
        }
        let done = self.cpus.run(now, c.cpu_pending);
        c.cpu_pending = 0;
        self.queue.push(done, i as u32);
        true
    }

    /// dmu_buf_rele_array: the reader drops its holds on the page's record dbufs.
    fn release_records(&mut self, c: &Client) {
        let Fs::Zfs { arc, dbufs, layout, .. } = &mut self.fs else { return };
        let target = arc.c() >> DBUF_CACHE_SHIFT;
        let (first, last) = layout.records(c.read_offset, c.read_len);
        for rec in first..=last {
            let key = layout.block(c.space + 1, rec, 0).0;
            dbufs.release(key, target, |k| layout.parent_of(k));
        }
    }

    /// The page is in memory: insert it in the buffer pool and release its waiters.
    fn page_read_done(&mut self, c: &mut Client, now: Nanos) {
        if let Mode::Cat { .. } = self.mode {
            self.cat_reads += 1;
            self.cat_bytes += c.read_len as u64;
            c.state = State::Start;
            return;
        }
        let key = PageKey::new(c.space, c.page);
        self.bp.insert(key, now);
        let waiters = self.bp_inflight.remove(&key.0).unwrap_or(0);
        if waiters > 0 {
            self.wake(Wait::Page(key.0), now);
        }
        c.path_pos += 1;
        c.state = State::NextPage;
    }

    /// Reschedules every client blocked on `what` at `now`.
    fn wake(&mut self, what: Wait, now: Nanos) {
        for (j, other) in self.clients.iter_mut().enumerate() {
            if other.state == State::Blocked && other.wait == what {
                other.wait = Wait::None;
                other.state = State::NextPage;
                // Re-run the page access now that the page is in the pool.
                other.cpu_pending = other.cpu_pending.saturating_sub(self.costs.page_access);
                self.queue.push(now, j as u32);
            }
        }
    }

    /// The next read of a `cat` phase: table, offset, length; None when every pass is done.
    fn cat_next(&mut self) -> Option<(u32, u64, u32)> {
        let tables = self.cfg.dataset_tables();
        let file_size = self.table.file_size();
        let Mode::Cat { read_size, passes, pass, table, offset } = &mut self.mode else { return None };
        if *offset >= file_size {
            *offset = 0;
            *table += 1;
        }
        if *table >= tables {
            *table = 0;
            *pass += 1;
        }
        if *pass >= *passes {
            return None;
        }
        let len = (*read_size as u64).min(file_size - *offset) as u32;
        let at = (*table, *offset, len);
        *offset += len as u64;
        Some(at)
    }

    /// The machine restarts: the ARC, the dbufs and the buffer pool start empty. The
    /// L2ARC device keeps its content unless it is ephemeral and the VM moved; a release
    /// with persistent L2ARC (2.0+, l2arc_rebuild_enabled) then rebuilds its headers from
    /// the log blocks, reading them from the device (l2arc_rebuild). Returns when the
    /// machine is ready again.
    fn restart(&mut self, vm_moved: bool) -> Result<Nanos> {
        let DatabaseConfig::Innodb(db) = &self.cfg.database;
        self.bp = BufferPool::new(db);
        let mut ready = self.clock;
        if let (Fs::Zfs { arc, dbufs, cache_device, .. }, FsConfig::Zfs(z)) =
            (&mut self.fs, &self.cfg.filesystem)
        {
            let old = arc.l2arc_detach();
            **arc = new_arc(self.cfg, z, *cache_device)?;
            **dbufs = DbufLayer::new();
            if let (Some(old), Some(d)) = (old, *cache_device) {
                if !(vm_moved && self.cfg.devices[d].ephemeral) {
                    let r = arc.l2arc_rebuild(old);
                    let per_read = r.read_bytes.checked_div(r.reads).unwrap_or(0).max(1);
                    for _ in 0..r.reads {
                        let done = self.devices[d].submit(
                            self.clock,
                            Op::Read,
                            per_read.min(u32::MAX as u64) as u32,
                        );
                        ready = ready.max(done);
                    }
                }
                self.next_feed = Some(ready + SEC);
            }
        }
        Ok(ready)
    }

    /// Processes events until none is left (clients stop issuing at the phase's end and
    /// finish what they started), emitting series rows on the way. Returns the snapshots
    /// taken at `window` (start, end) if given.
    fn drain(&mut self, rec: &mut Recorder, window: Option<(Nanos, Nanos)>) -> Option<(Snapshot, Snapshot)> {
        let mut start_snap = None;
        let mut end_snap = None;
        // A workload phase reports up to its window's end; the drain after it is not an interval.
        let report_limit = window.map_or(Nanos::MAX, |w| w.1);
        while let Some(t) = self.queue.peek_time() {
            if let Some(feed_at) = self.next_feed {
                if feed_at <= t {
                    self.l2arc_feed(feed_at);
                    continue;
                }
            }
            if t > crate::config::MAX_SIMULATED_NS {
                // Only a device that never answers gets here (saturated clocks): what is
                // still in progress is abandoned rather than simulated to the end of time.
                self.abandon_in_progress();
                break;
            }
            self.report_until(rec, t.min(report_limit));
            if let Some((ws, we)) = window {
                if start_snap.is_none() && t >= ws {
                    self.window_hist.reset();
                    self.measuring = true;
                    start_snap = Some(self.snapshot(ws));
                }
                if end_snap.is_none() && t >= we {
                    self.measuring = false;
                    end_snap = Some(self.snapshot(we));
                }
            }
            let (now, i) = self.queue.pop().expect("peeked");
            self.events += 1;
            self.clock = now;
            self.step(i as usize, now);
        }
        let (ws, we) = window?;
        let start = start_snap.unwrap_or_else(|| self.snapshot(ws));
        let end = end_snap.unwrap_or_else(|| self.snapshot(we));
        self.measuring = false;
        Some((start, end))
    }

    /// One pass of the l2arc_feed_thread: the ARC picks what to write, the cache device
    /// writes it (aggregated by the vdev queue into writes of up to 1 MiB,
    /// zfs_vdev_aggregation_limit), and the thread sleeps until the time the feed chose.
    fn l2arc_feed(&mut self, now: Nanos) {
        let Fs::Zfs { arc, cache_device: Some(d), .. } = &mut self.fs else {
            self.next_feed = None;
            return;
        };
        let feed = arc.l2arc_feed(now);
        let mut left = feed.asize_written;
        while left > 0 {
            let chunk = left.min(1 << 20);
            self.devices[*d].submit(now, Op::Write, chunk as u32);
            left -= chunk;
        }
        self.next_feed = Some(feed.next_feed_at.max(now + 1));
    }

    /// Drops every pending event and in-flight read (see `drain`).
    fn abandon_in_progress(&mut self) {
        while self.queue.pop().is_some() {}
        self.bp_inflight.clear();
        self.block_inflight.clear();
        for owned in &mut self.owned_inflight {
            owned.clear();
        }
        for c in &mut self.clients {
            c.state = State::Idle;
            c.wait = Wait::None;
        }
    }

    /// Emits the series rows of every report boundary up to `t`.
    fn report_until(&mut self, rec: &mut Recorder, t: Nanos) {
        // Bounded: a device that never answers (saturated clocks) must not mean endless rows.
        while t >= rec.next_report && (rec.series.rows() as u64) < crate::config::MAX_SERIES_ROWS {
            let now = self.snapshot(rec.next_report);
            self.emit_row(&mut rec.series, &rec.prev, &now);
            rec.prev = now;
            rec.next_report += self.cfg.run.report_interval_ns;
        }
    }

    fn run(mut self) -> Result<VariantResult> {
        let mut rec = Recorder {
            series: Series::default(),
            prev: self.snapshot(0),
            next_report: self.cfg.run.report_interval_ns,
        };
        let threads = self.clients.len();
        let mut phases = Vec::new();
        let mut main = Value::Null;
        // Where the series ends: a run that ends with a workload phase ends at its window's
        // end (the statements that finish after it are not part of any interval).
        let mut series_end = 0;
        for (index, phase) in self.cfg.effective_phases().iter().enumerate() {
            self.phase_index = index;
            let start = self.clock;
            match phase {
                PhaseConfig::Restart(r) => {
                    // arcstats start again from zero after a reboot: close the interval
                    // before it, and start the next one from the fresh counters.
                    if rec.prev.time < start {
                        let now = self.snapshot(start);
                        self.emit_row(&mut rec.series, &rec.prev, &now);
                    }
                    let ready = self.restart(r.vm_moved)?;
                    rec.prev = self.snapshot(start);
                    self.clock = ready;
                    let mut doc = json!({"name": r.name, "type": "restart", "start_s": secs(start), "end_s": secs(ready)});
                    if let Fs::Zfs { arc, cache_device: Some(_), .. } = &self.fs {
                        let st = arc.stats();
                        doc["l2arc_rebuild"] = json!({
                            "l2_rebuild_bufs": st.l2_rebuild_bufs,
                            "l2_rebuild_size": st.l2_rebuild_size,
                            "l2_rebuild_asize": st.l2_rebuild_asize,
                            "l2_rebuild_log_blks": st.l2_rebuild_log_blks,
                        });
                    }
                    phases.push(doc);
                }
                PhaseConfig::Workload(w) => {
                    let window = (start + w.warmup_ns, start + w.warmup_ns + w.duration_ns);
                    self.mode = Mode::Workload { issue_until: window.1 };
                    for i in 0..threads {
                        self.clients[i].state = State::Start;
                        self.queue.push(start, i as u32);
                    }
                    let (a, b) = self.drain(&mut rec, Some(window)).expect("a window was given");
                    let mut doc = self.window_summary(&a, &b, w.warmup_ns);
                    main = doc.clone();
                    doc["name"] = json!(w.name);
                    doc["type"] = json!("workload");
                    doc["start_s"] = json!(secs(start));
                    doc["end_s"] = json!(secs(self.clock.max(window.1)));
                    phases.push(doc);
                    self.clock = self.clock.max(window.1);
                    series_end = window.1;
                }
                PhaseConfig::Cat(c) => {
                    self.mode =
                        Mode::Cat { read_size: c.read_size, passes: c.passes, pass: 0, table: 0, offset: 0 };
                    let (bytes0, reads0) = (self.cat_bytes, self.cat_reads);
                    let a = self.snapshot(start);
                    self.clients[0].state = State::Start;
                    self.queue.push(start, 0);
                    self.drain(&mut rec, None);
                    let b = self.snapshot(self.clock);
                    let elapsed = (b.time - a.time).max(1) as f64 / SEC as f64;
                    let bytes = self.cat_bytes - bytes0;
                    let mut doc = json!({
                        "name": c.name,
                        "type": "cat",
                        "start_s": secs(start),
                        "end_s": secs(self.clock),
                        "bytes_read": bytes,
                        "reads": self.cat_reads - reads0,
                        "read_mbps": bytes as f64 / 1e6 / elapsed,
                        "devices": self.devices_window(&a, &b),
                    });
                    if let Some(arc) = self.arc_window_of(&a, &b) {
                        doc["arc"] = arc;
                    }
                    phases.push(doc);
                    series_end = self.clock;
                }
            }
            if let PhaseConfig::Restart(_) = phase {
                series_end = self.clock;
            }
        }
        let end = self.clock;
        if rec.prev.time < series_end {
            self.report_until(&mut rec, series_end);
            if rec.prev.time < series_end && (rec.series.rows() as u64) < crate::config::MAX_SERIES_ROWS {
                let now = self.snapshot(series_end);
                self.emit_row(&mut rec.series, &rec.prev, &now);
            }
        }
        main["scenario"] = json!(self.cfg.scenario);
        main["variant"] = json!(self.cfg.variant);
        main["phases"] = Value::Array(phases);
        // Work the simulator did over the whole run, for `ztwin bench`.
        main["engine"] = json!({
            "events": self.events,
            "page_lookups": self.bp_requests,
            "block_lookups": self.block_lookups,
            "device_ios": self.devices.iter().map(|d| d.counters().reads + d.counters().writes).sum::<u64>(),
            "simulated_s": secs(end),
        });
        Ok(VariantResult { summary: main, series: rec.series })
    }

    fn emit_row(&mut self, s: &mut Series, a: &Snapshot, b: &Snapshot) {
        let dt = (b.time - a.time).max(1) as f64 / SEC as f64;
        s.set("time_s", b.time as f64 / SEC as f64);
        s.set("phase", self.phase_index as f64);
        s.set("measured", if self.measuring { 1.0 } else { 0.0 });
        s.set("qps", (b.statements - a.statements) as f64 / dt);
        s.set("latency_p50_ms", self.interval_hist.quantile_ms(0.50));
        s.set("latency_p95_ms", self.interval_hist.quantile_ms(0.95));
        s.set("latency_p99_ms", self.interval_hist.quantile_ms(0.99));
        self.interval_hist.reset();
        let vcpus = self.cpus.vcpus() as f64;
        s.set("cpu_utilization", ((b.cpu_busy - a.cpu_busy) as f64 / SEC as f64 / dt / vcpus).min(1.0));
        let req = b.bp_requests - a.bp_requests;
        let reads = b.bp_reads - a.bp_reads;
        s.set(
            "innodb_buffer_pool_hit_ratio",
            if req > 0 { 1.0 - reads as f64 / req as f64 } else { f64::NAN },
        );
        for (k, d) in self.devices.iter().enumerate() {
            let (x, y) = (&a.devices[k], &b.devices[k]);
            let name = d.name();
            s.set(&format!("{name}_read_iops"), (y.reads - x.reads) as f64 / dt);
            s.set(&format!("{name}_write_iops"), (y.writes - x.writes) as f64 / dt);
            s.set(&format!("{name}_read_mbps"), (y.read_bytes - x.read_bytes) as f64 / 1e6 / dt);
            s.set(
                &format!("{name}_utilization"),
                ((y.busy_ns - x.busy_ns) as f64 / SEC as f64 / dt).min(1.0),
            );
        }
        if let (Some(x), Some(y)) = (&a.arc, &b.arc) {
            s.set("arc_hits", (y.hits - x.hits) as f64);
            s.set("arc_misses", (y.misses - x.misses) as f64);
            s.set("arc_demand_data_hits", (y.demand_data_hits - x.demand_data_hits) as f64);
            s.set("arc_demand_data_misses", (y.demand_data_misses - x.demand_data_misses) as f64);
            s.set("arc_demand_metadata_hits", (y.demand_metadata_hits - x.demand_metadata_hits) as f64);
            s.set("arc_demand_metadata_misses", (y.demand_metadata_misses - x.demand_metadata_misses) as f64);
            s.set("arc_size", y.size as f64);
            s.set("arc_c", y.c as f64);
            s.set("arc_data_size", y.data_size as f64);
            s.set("arc_metadata_size", y.metadata_size as f64);
        }
        s.end_row();
    }

    /// Devices over a window, as iostat would show them.
    fn devices_window(&self, a: &Snapshot, b: &Snapshot) -> Value {
        let window_s = (b.time - a.time).max(1) as f64 / SEC as f64;
        let mut devices = Map::new();
        for (k, d) in self.devices.iter().enumerate() {
            let (x, y) = (&a.devices[k], &b.devices[k]);
            devices.insert(
                d.name().to_string(),
                json!({
                    "read_iops": (y.reads - x.reads) as f64 / window_s,
                    "write_iops": (y.writes - x.writes) as f64 / window_s,
                    "read_mbps": (y.read_bytes - x.read_bytes) as f64 / 1e6 / window_s,
                    "write_mbps": (y.write_bytes - x.write_bytes) as f64 / 1e6 / window_s,
                    "utilization": ((y.busy_ns - x.busy_ns) as f64 / SEC as f64 / window_s).min(1.0),
                }),
            );
        }
        Value::Object(devices)
    }

    /// arcstats over a window, for ZFS.
    fn arc_window_of(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Some(x), Some(y), FsConfig::Zfs(z)) = (&a.arc, &b.arc, &self.cfg.filesystem) else {
            return None;
        };
        Some(arc_window(x, y, z.release))
    }

    /// The summary of a workload phase's measured window.
    fn window_summary(&self, a: &Snapshot, b: &Snapshot, warmup_ns: Nanos) -> Value {
        let window_s = (b.time - a.time).max(1) as f64 / SEC as f64;
        let statements = b.statements - a.statements;
        let qps = statements as f64 / window_s;
        let req = b.bp_requests - a.bp_requests;
        let reads = b.bp_reads - a.bp_reads;
        let mut out = json!({
            "window_s": window_s,
            "warmup_s": secs(warmup_ns),
            "queries": statements,
            "rows": b.rows - a.rows,
            "qps": qps,
            // oltp_point_select and select_random_points run one statement per event,
            // outside an explicit transaction: sysbench counts each as a transaction.
            "tps": qps,
            "latency_ms": {
                "p50": self.window_hist.quantile_ms(0.50),
                "p95": self.window_hist.quantile_ms(0.95),
                "p99": self.window_hist.quantile_ms(0.99),
                "max": self.window_hist.max_ms(),
                "mean": self.window_hist.mean_ms(),
            },
            "cpu_utilization": ((b.cpu_busy - a.cpu_busy) as f64 / SEC as f64 / window_s / self.cpus.vcpus() as f64).min(1.0),
            "devices": self.devices_window(a, b),
            "innodb": {
                "buffer_pool_hit_ratio": if req > 0 { 1.0 - reads as f64 / req as f64 } else { 0.0 },
                "pages_read": reads,
                "read_requests": req,
                "buffer_pool_pages": self.bp.capacity(),
            },
        });
        if let Some(arc) = self.arc_window_of(a, b) {
            out["arc"] = arc;
        }
        if let Some(l2) = self.l2arc_window(a, b) {
            out["l2arc"] = l2;
        }
        out
    }

    /// L2ARC arcstats over a window, and the share of demand block reads each tier served.
    fn l2arc_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Fs::Zfs { cache_device: Some(_), .. }, Some(x), Some(y)) = (&self.fs, &a.arc, &b.arc) else {
            return None;
        };
        let mut m = Map::new();
        macro_rules! counters {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f.saturating_sub(x.$f))); )* };
        }
        macro_rules! sizes {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f)); )* };
        }
        counters!(
            l2_hits,
            l2_misses,
            l2_feeds,
            l2_read_bytes,
            l2_write_bytes,
            l2_writes_sent,
            l2_writes_done,
            l2_abort_lowmem,
            l2_log_blk_writes,
            evict_l2_cached,
            evict_l2_eligible,
            evict_l2_ineligible
        );
        sizes!(l2_size, l2_asize, l2_hdr_size);
        let hits = y.hits.saturating_sub(x.hits) as f64;
        let misses = y.misses.saturating_sub(x.misses) as f64;
        let l2_hits = y.l2_hits.saturating_sub(x.l2_hits) as f64;
        let total = (hits + misses).max(1.0);
        m.insert(
            "read_share".into(),
            json!({"arc": hits / total, "l2arc": l2_hits / total, "pool": (misses - l2_hits) / total}),
        );
        Some(Value::Object(m))
    }
}

/// A fresh ARC for the variant, with its L2ARC device attached when there is one.
fn new_arc(cfg: &VariantConfig, z: &crate::config::ZfsConfig, cache_device: Option<usize>) -> Result<Arc> {
    let mut arc = Arc::new(&ArcParams {
        release: z.release,
        ram_bytes: cfg.machine.ram_bytes,
        tunables: z.arc.clone(),
    });
    if let Some(d) = cache_device {
        let dev = &cfg.devices[d];
        arc.attach_l2arc(&L2arcParams {
            patch: z.release_patch,
            config: L2arcConfig {
                device: L2arcDeviceConfig { capacity: dev.capacity_bytes.unwrap_or(0), ashift: z.ashift },
                secondarycache: z.secondarycache,
                tunables: z.l2arc.clone(),
            },
            arc_warm_at_first_eviction: z.arc_warm_at_first_eviction,
        })
        .map_err(|e| match e {
            Error::Config { field, message } => Error::config(format!("filesystem.l2arc.{field}"), message),
            other => other,
        })?;
    }
    Ok(arc)
}

/// Only the arcstats the modelled release has are reported (0.8/2.1: p and the
/// arc_meta_* limits; 2.2: meta, pd, pm and the uncached state).
fn arc_window(a: &ArcStats, b: &ArcStats, release: ZfsRelease) -> Value {
    let mut m = Map::new();
    macro_rules! counters {
        ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(b.$f - a.$f)); )* };
    }
    macro_rules! sizes {
        ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(b.$f)); )* };
    }
    counters!(
        hits,
        misses,
        demand_data_hits,
        demand_data_misses,
        demand_metadata_hits,
        demand_metadata_misses,
        prefetch_data_hits,
        prefetch_data_misses,
        prefetch_metadata_hits,
        prefetch_metadata_misses,
        mru_hits,
        mfu_hits,
        mru_ghost_hits,
        mfu_ghost_hits,
        deleted,
        evict_skip
    );
    sizes!(
        size,
        c,
        c_min,
        c_max,
        data_size,
        metadata_size,
        hdr_size,
        compressed_size,
        uncompressed_size,
        mru_size,
        mfu_size,
        mru_ghost_size,
        mfu_ghost_size,
        mru_data,
        mru_metadata,
        mfu_data,
        mfu_metadata
    );
    match release {
        ZfsRelease::V0_8 | ZfsRelease::V2_1 => {
            sizes!(p, arc_meta_used, arc_meta_limit, arc_meta_min, arc_meta_max);
        }
        ZfsRelease::V2_2 => {
            counters!(uncached_hits);
            sizes!(meta, pd, pm, uncached_size);
        }
    }
    Value::Object(m)
}

/// Runs one resolved, validated variant.
pub fn run_variant(cfg: &VariantConfig) -> Result<VariantResult> {
    cfg.validate()?;
    Sim::new(cfg)?.run()
}

/// Runs one resolved variant given as JSON and returns its result as JSON.
///
/// Input: a [`VariantConfig`]. Output: the summary over the measured window ("qps",
/// "tps", "queries", "window_s", "latency_ms" {p50, p95, p99, max, mean},
/// "cpu_utilization", "devices" {NAME: {read_iops, write_iops, read_mbps, write_mbps,
/// utilization}}, "innodb" {buffer_pool_hit_ratio, pages_read, ...}, "arc" {arcstats
/// names} for ZFS) plus "series": columns of equal length, one row per report interval
/// from the start of the warm-up ("time_s" is the interval's end).
pub fn run_variant_json(config_json: &str) -> Result<String> {
    let cfg = VariantConfig::from_json(config_json)?;
    let r = run_variant(&cfg)?;
    let mut doc = r.summary;
    doc["series"] = serde_json::to_value(&r.series).map_err(|e| Error::Simulation {
        component: "stats.series".into(),
        time_ns: 0,
        message: e.to_string(),
    })?;
    serde_json::to_string(&doc).map_err(|e| Error::Simulation {
        component: "result".into(),
        time_ns: 0,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{test_variant, ZfsRelease};

    /// Runs the event loop of `cfg` up to its end, without the reporting.
    fn simulate(cfg: &VariantConfig) -> Sim<'_> {
        let mut sim = Sim::new(cfg).unwrap();
        let end = cfg.run.warmup_ns + cfg.run.duration_ns;
        sim.mode = Mode::Workload { issue_until: end };
        for i in 0..sim.clients.len() {
            sim.queue.push(0, i as u32);
        }
        while let Some((t, i)) = sim.queue.pop() {
            if t >= end {
                break;
            }
            sim.step(i as usize, t);
        }
        sim
    }

    /// Records of 128K hold 8 pages of 16K and one 128K L1 covers a whole table, so 32
    /// clients starting cold often want a block another client is reading. As in
    /// dbuf_read (a dbuf in DB_READ is waited for on db_changed), the waiter does not go
    /// to the ARC: no hit is counted for it, and the block is never read twice at once,
    /// even when the ARC does not keep it (primarycache=metadata).
    #[test]
    fn a_block_in_flight_is_waited_for_without_an_arc_access() {
        for release in [ZfsRelease::V0_8, ZfsRelease::V2_2] {
            for primarycache in [CacheProperty::All, CacheProperty::Metadata] {
                let mut cfg = test_variant();
                let WorkloadConfig::Sysbench(w) = &mut cfg.workload;
                w.threads = 32;
                let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
                z.recordsize = 128 << 10;
                z.release = release;
                z.primarycache = primarycache;
                let sim = simulate(&cfg);
                let Fs::Zfs { arc, .. } = &sim.fs else { unreachable!() };
                let st = arc.stats();
                assert!(sim.block_waits > 0, "the test needs concurrent reads of one block");
                assert_eq!(
                    st.hits + st.misses + sim.block_waits,
                    sim.block_lookups,
                    "{release:?} {primarycache:?}: every lookup is one ARC access or one wait"
                );
            }
        }
    }

    /// The series covers the warm-up: its rows show the queries served then too (they
    /// showed 0 queries/s and 0 ms latency while the devices were busy).
    #[test]
    fn warm_up_rows_count_queries() {
        let cfg = test_variant();
        let r = run_variant(&cfg).unwrap();
        let qps = r.series.column("qps").unwrap();
        let measured = r.series.column("measured").unwrap();
        let p50 = r.series.column("latency_p50_ms").unwrap();
        assert_eq!(measured, &[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        for k in 0..qps.len() {
            assert!(qps[k] > 0.0 && p50[k] > 0.0, "row {k}: qps {} p50 {}", qps[k], p50[k]);
        }
        let window: f64 = qps[2..].iter().sum::<f64>() / 4.0;
        assert!((window / r.summary["qps"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    }
}
