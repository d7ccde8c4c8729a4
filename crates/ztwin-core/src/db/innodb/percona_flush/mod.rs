//! How Percona Server 5.7 frees and flushes buffer pool pages: one LRU manager thread per
//! buffer pool instance refilling that instance's free list on a self-adjusting timer, user
//! threads that back off on an empty free list instead of evicting or writing pages, a page
//! cleaner left with flush-list flushing only (with Percona's "high_checkpoint" redo
//! pressure), and the buffer pool instances all of it is split over.
//!
//! Mechanism.
//! - Instances ([`Resolved`], [`instance_of`]). `innodb_buffer_pool_instances` unset (0)
//!   means 8 from 1 GiB of pool on, else 1. The pool size is rounded up to a multiple of
//!   `innodb_buffer_pool_chunk_size * instances`; each instance has its own LRU list, free
//!   list, flush list, `try_LRU_scan` flag and LRU manager thread, and
//!   `innodb_lru_scan_depth` applies to each. A page belongs to instance
//!   `((space << 20) + space + (page_no >> 6)) % instances` (`buf_pool_get`: the fold of the
//!   space id and the page number with its low 6 bits dropped, so every 64-page extent, and
//!   every neighbour area, is in one instance). `innodb_page_cleaners` (4) is capped at the
//!   instances.
//! - LRU manager ([`LruManager`], [`lru_manager::lru_list_batch`]), one thread per instance,
//!   started with a 1000 ms sleep and its first loop one second after startup. Each
//!   iteration: sleep until `next_loop_time` (at most 1 s; a timer, no event wakes it
//!   earlier); adapt the sleep ([`lru_manager::adapt_sleep_time`]: with `max_free =
//!   min(LRU length, innodb_lru_scan_depth)`, under 1 % of it free after a batch that wrote
//!   or evicted something: 0; over 20 % free, or under 1 % after a batch that did nothing:
//!   +1 ms up to 1000; under 5 % with at least 50 ms: −50 ms; else unchanged); set
//!   `next_loop_time` to now plus that sleep; run one LRU batch (`buf_flush_LRU_list`: at most
//!   `min(innodb_lru_scan_depth, LRU length)` pages written or evicted, from the tail, while
//!   fewer than `innodb_lru_scan_depth` frames are free and the LRU list is longer than
//!   `BUF_LRU_MIN_LEN`: clean idle pages go to the free list, dirty idle pages are written
//!   with their neighbours, the others are passed over); wait until every write of the batch
//!   has completed (`buf_flush_wait_batch_end`; each written page is freed as its write
//!   completes); add the pages written plus evicted to `Innodb_buffer_pool_pages_flushed`.
//!   A batch that wrote pages ends (`buf_flush_end`) by writing them out: with
//!   `innodb_doublewrite` off, by waiting until no data file write is pending anywhere
//!   (`os_aio_wait_until_no_pending_writes`) and fsyncing every data file written
//!   (`fil_flush_file_spaces`; `innodb_flush_method` = O_DSYNC opens only the redo log
//!   O_SYNC, data files are fsynced).
//! - A thread needing a free frame ([`FreeFrames::get_free_block`]). With
//!   `innodb_empty_free_list_algorithm` = backoff (the default; forced to legacy when an
//!   instance would have fewer than `5 * BUF_LRU_MIN_LEN` pages, 20 MiB of 16K pages) it
//!   loops on the free list: rounds 0-2 yield the CPU twice (`os_thread_yield`), later rounds
//!   sleep 1, 2, 4, 16, 16, 32, 32, 32, 64, 128 … 8192, then 10000 µs (divided by 100 for a
//!   master or purge thread given priority); every round adds 1 to
//!   `Innodb_buffer_pool_wait_free`. It never scans the LRU list, evicts or writes a page,
//!   and never signals anyone: only the LRU manager's next batch frees frames. With legacy
//!   (MySQL 5.7's): scan 100 pages of the LRU tail for a clean page (the whole list from the
//!   second round; a failed first scan clears `try_LRU_scan`, which every batch end sets
//!   again), then signal the page cleaner (which in Percona Server does no LRU flushing), from
//!   the third round sleep 10 ms, then free or write one page from the tail itself
//!   (`buf_flush_single_page_from_LRU`: a synchronous write and an fsync of its tablespace),
//!   one `Innodb_buffer_pool_wait_free` per round.
//! - Page cleaner ([`Coordinator`]): a coordinator and `innodb_page_cleaners - 1` workers
//!   that take the instances' slots in turn; each slot is a flush-list batch of its instance
//!   only (no LRU batch, unlike MySQL 5.7). The coordinator sleeps until one second after its
//!   previous timed pass (or a signal) unless the server is idle with no read pending and its
//!   last pass flushed pages. A pass woken by a signal with a sync flush asked flushes in every
//!   instance all pages older than the target; an active server's timed pass asks
//!   `page_cleaner_flush_pages_recommendation`; an active server woken early flushes nothing;
//!   an idle server's timed pass flushes `ceil(innodb_io_capacity / instances)` pages per
//!   instance. The recommendation ([`cleaner::Recommender`]) takes
//!   `PCT_IO(max(pct_for_dirty, pct_for_lsn))`, and only below `max_modified_age_async` of
//!   redo age averages it with `avg_page_rate` and the pages old enough
//!   (`min(pages_for_lsn, 2 * io_capacity_max)`); past that age it asks PCT_IO itself (MySQL
//!   always averages); at most `innodb_io_capacity_max`. `pct_for_lsn`
//!   ([`cleaner::pct_for_lsn`]) with `innodb_cleaner_lsn_age_factor` = high_checkpoint (the
//!   default) is `(io_capacity_max / io_capacity) * f^2.5 / 700.5` where `f` is the redo age
//!   in percent of `max_modified_age_async`, against legacy's `... * f^1.5 / 7.5`: lower
//!   below f ≈ 93, higher above. Each instance is asked `n_pages / instances` pages, or, when
//!   `pct_for_lsn > 30`, a share proportional to its pages old enough.
//! - `log_free_check` past `max_modified_age_sync` ([`PerconaFlush::log_free_check`]):
//!   `innodb_foreground_preflush` of Percona Server 5.6 is gone in 5.7 ("removed as the
//!   upstream implemented a similar feature", `changed_in_57.rst`): the thread computes the
//!   target `lsn - max_modified_age_sync`, asks a sync flush (`buf_flush_request_force`: to
//!   the target plus `3 * lsn_avg_rate`, with `innodb_flush_sync` on) and polls every 10 ms
//!   (`buf_flush_wait_flushed`) until every instance's oldest modification reaches the target.
//! - Status variables ([`Stats`]; `srv_export_innodb_status`, `innodb_status_variables`).
//!   `Innodb_buffer_pool_pages_flushed` counts the flush-list pages written and the LRU
//!   managers' pages written and evicted (not single-page flushes).
//!   `Innodb_buffer_pool_pages_LRU_flushed` (Percona's) reads a per-instance counter nothing
//!   increments and `buf_get_total_stat` does not sum: always 0 in 5.7.22.
//!   `Innodb_buffer_pool_wait_free` counts rounds, not threads. Percona's
//!   `Innodb_checkpoint_age` is `lsn - last_checkpoint_lsn` and `Innodb_checkpoint_max_age`
//!   is `max_checkpoint_age` ([`PerconaFlush::checkpoint_age`]); its `Innodb_lsn_current`,
//!   `_flushed`, `_last_checkpoint`, `Innodb_master_thread_active_loops`, `_idle_loops` and
//!   `Innodb_background_log_sync` belong to the redo log and master thread, and
//!   `Innodb_ibuf_free_list` / `Innodb_ibuf_segment_size` (the change buffer's free pages and
//!   file segment, `ibuf_export_ibuf_status`) to the change buffer: none is kept here.
//!
//! What matters for experiment 2 (60G pool, 16K pages, innodb_io_capacity 600, O_DSYNC,
//! doublewrite off, 16 threads): 8 instances of 491,460 frames (3,931,680 in all), 4 page
//! cleaner threads, 8 LRU manager threads; `io_capacity_max` 2000, so the redo pressure's
//! ratio is 3. Material: (1) the redo pressure formula: high_checkpoint asks far less at low
//! ages (f = 13: 2 % of io_capacity against legacy's 18 %), so the checkpoint age and the
//! dirty pages settle higher, and past `max_modified_age_async` the cleaner asks
//! `innodb_io_capacity_max` (2000) pages a second outright; (2) every batch of every
//! instance ends with its own wait for all pending writes and fsync of the data files
//! written: up to 8 flush-list batches a second plus one per LRU manager iteration that
//! wrote pages, each an fsync (a ZIL commit on ZFS), 4 flush-list batches at a time;
//! (3) free frames come only from the LRU managers: a read that finds its instance's free
//! list empty waits up to the manager's next batch (backoff sleeps up to 10 ms a round),
//! so the timer's adaptation decides read stalls once reads outrun 1024 frames per instance
//! per sleep (with 8 instances at 1000 ms, about 8,000 reads a second before any stall;
//! below that, the managers refill at their 1000 ms pace and no read waits). Not material:
//! the per-instance rounding of the requests (under 8 pages a pass), the 8 × 1024 free
//! frames held back (0.2 % of the pool), the instances' separate LRU lists under uniformly
//! spread pages. So a driver may run one merged instance with the per-instance limits
//! multiplied by the instances (`merged`, below), provided it ends each pass's batches as
//! the instances would (one end per instance that wrote: [`instance_of`] groups a batch's
//! pages; [`CleanerPass::batches`]).
//!
//! How a driver calls it (the run's is `db::innodb::writes`, merged: its `percona` module
//! and `cleaner`'s `Cleaner::Percona`; one [`PerconaFlush`]; `V` is the buffer pool's
//! [`mariadb_flush::PoolView`](crate::db::innodb::mariadb_flush::PoolView): a page written
//! by an LRU batch or a single-page flush is freed when its write completes, one written by
//! a flush-list batch stays cached, clean):
//! - Setup: `PerconaFlush::new(params, log_ages, now, merged)`. `merged`: one LRU manager and
//!   one free list stand for all instances (limits multiplied, decisions on per-instance
//!   averages); else one of each per instance, and the driver keeps the instances' lists
//!   apart (a view per instance).
//! - Each LRU manager thread `i`: sleep until `fl.lru_wake_at(i, now)`; then
//!   `let b = fl.lru_begin(i, now, free_len, lru_len)`; `let res = fl.lru_batch(i, &mut view,
//!   &b)`; queue the written pages' writes (in place, asynchronous), then the batch end
//!   (doublewrite off: wait for every pending write, fsync the data files written; once per
//!   instance that wrote in the merged mode); when every write of the batch completed (pages
//!   freed), `fl.lru_end(i, &res)`; loop.
//! - Page cleaner: sleep per `fl.cleaner_wait(&obs)` ([`CleanerWait`]; a sync request or a
//!   legacy thread's signal cuts it short); `let pass = fl.cleaner_pass(&obs, |target,
//!   counts| ...)` (counts: each instance's dirty pages with oldest modification ≤ target; in
//!   the merged mode the merged count split evenly, [`even_share`]); per instance with
//!   `pass.per_instance[i] > 0`, `fl.flush_list_batch(i, &mut view, oldest_first,
//!   pass.per_instance[i], pass.lsn_limit)` and its batch end, `innodb_page_cleaners`
//!   batches at a time (merged: one batch of `pass.requested()` pages, whose written pages
//!   [`instance_of_key`] splits into the instances' batch ends); then
//!   `fl.cleaner_end(&pass, pages_written)`.
//! - A thread needing a frame: `let mut w = FrameWaiter::default()`, then loop on
//!   `fl.get_free_block(i, &mut w, free_len, lru_batch_running, false)`: [`FrameStep::Take`]
//!   takes one; `Yield`/`Sleep` wait and ask again; legacy's `ScanLru` runs
//!   [`free_block::scan_and_free`] and calls `fl.after_scan`; `SinglePageFlush` sleeps, runs
//!   [`free_block::single_page_from_lru`] (its write and fsync), and calls
//!   `fl.after_single_page_flush`.
//! - Before a row change: `fl.log_free_check(lsn, oldest_lsn)`; on `Some(target)` signal the
//!   page cleaner and poll every [`WAIT_FLUSHED_POLL_NS`] until the oldest modification is
//!   at least `target` (or nothing is dirty).
//! - Counters: `fl.stats` ([`Stats`]), [`PerconaFlush::checkpoint_age`].
//!
//! Sources: Percona Server 5.7.22-22 (`VERSION`: MYSQL_VERSION 5.7.22, EXTRA -22), a plain
//! copy of its release source (github gaopengcarl/percona-server-locks-detail-5.7.22, whose
//! own edits touch none of these files), `storage/innobase/`: `buf/buf0flu.cc`
//! (`buf_lru_manager`, `buf_lru_manager_sleep_if_needed`, `buf_lru_manager_adapt_sleep_time`,
//! `buf_flush_LRU_list`, `buf_do_LRU_batch`, `buf_flush_LRU_list_batch`,
//! `buf_do_flush_list_batch`, `buf_flush_try_neighbors`, `buf_flush_check_neighbor`,
//! `buf_flush_page_and_try_neighbors`, `buf_flush_ready_for_flush`, `buf_flush_do_batch`,
//! `buf_flush_end`, `buf_flush_lists`, `buf_flush_single_page_from_LRU`,
//! `buf_flush_write_block_low`, `buf_flush_wait_flushed`, `buf_flush_request_force`,
//! `af_get_pct_for_dirty`, `af_get_pct_for_lsn`, `page_cleaner_flush_pages_recommendation`,
//! `pc_request`, `pc_flush_slot`, `pc_sleep_if_needed`,
//! `buf_flush_page_cleaner_coordinator`), `buf/buf0lru.cc` (`buf_LRU_get_free_block`,
//! `MAX_FREE_LIST_BACKOFF_SLEEP`, `FREE_LIST_BACKOFF_*_PRIO_DIVIDER`,
//! `buf_LRU_scan_and_free_block`, `buf_LRU_free_from_common_LRU_list`), `buf/buf0buf.cc`
//! (`buf_pool_init_instance`: `read_ahead_area`; `buf_pool_get_oldest_modification`,
//! `buf_get_modified_ratio_pct`, `buf_get_total_stat`, `buf_page_io_complete`: LRU writes
//! evicted), `buf/buf0dblwr.cc` (`buf_dblwr_flush_buffered_writes`,
//! `buf_dblwr_sync_datafiles`), `include/buf0buf.ic` (`buf_pool_get`, `buf_pool_size_align`),
//! `include/buf0buf.h` (`page_id_t::fold`, `buf_pool_stat_t`), `include/buf0flu.h`
//! (`BUF_LRU_MIN_LEN`), `include/ut0counter.h` (`ib_counter_t::add(index, n)`),
//! `srv/srv0srv.cc` (defaults: `srv_LRU_scan_depth` 1024, `srv_cleaner_max_lru_time` 1000,
//! `srv_cleaner_lsn_age_factor` high_checkpoint, `srv_empty_free_list_algorithm` backoff,
//! `srv_n_page_cleaners` 4; `srv_export_innodb_status`, `srv_check_activity`),
//! `srv/srv0start.cc` (instances from `BUF_POOL_SIZE_THRESHOLD`, the chunk and size
//! alignment, page cleaners capped, one `buf_lru_manager` per instance),
//! `handler/ha_innodb.cc` (the system variables and their defaults; `innobase_init`'s
//! io_capacity_max and lwm rules; `innodb_empty_free_list_algorithm_allowed`; the status
//! variables), `log/log0log.cc` (`log_checkpoint_margin`, `log_preflush_pool_modified_pages`;
//! `log_calc_max_ages` as MySQL's, [`LogAges`]); `doc/source/`
//! (`performance/xtradb_performance_improvements_for_io-bound_highly-concurrent_workloads.rst`,
//! `changed_in_57.rst`, release notes 5.7.10-1 to 5.7.21-21). Experiment 2 ran 5.7.19-17:
//! the release notes of 5.7.19-17, 5.7.20-18, 5.7.20-19, 5.7.21-20 and 5.7.21-21 list no
//! change to LRU flushing, the free list or the page cleaner (the last ones: the LRU
//! manager's heuristics fixed in 5.7.18-14, bug 1631309, and its shutdown synchronisation in
//! 5.7.18-16); MySQL's own changes to these files between 5.7.19 and 5.7.22 were not
//! checked. `innodb_cleaner_max_lru_time` exists only in debug builds (release builds keep
//! 1000 ms).
//!
//! Simplifications:
//! 1. Pages are in one of four states ([`PageState`]): busy (I/O-fixed or buffer-fixed) pages
//!    are neither evicted nor written (the real LRU batch writes a buffer-fixed idle dirty
//!    page, and a batch's victim may be buffer-fixed); no compressed pages (`unzip_LRU`), no
//!    temporary tablespace, no pool resizing (`withdraw_depth` 0).
//! 2. A batch runs at one instant on the lists as they are at its start; its writes take the
//!    time the driver's I/O gives them.
//! 3. In the merged mode one LRU manager, one free list and one `try_LRU_scan` stand for all
//!    instances: the adaptation reads the per-instance averages (`free / instances`), the
//!    batch's limits are the per-instance ones times the instances (so the 1 % threshold of
//!    the merged list is 8 × 10 frames, not 81), the instances' timers run in step, and a
//!    flush-list pass takes the merged list's oldest pages rather than each instance's
//!    oldest.
//! 4. The scans of legacy user threads and single-page flushes start at the LRU tail (the
//!    source resumes from `lru_scan_itr` / `single_scan_itr`); the legacy thread's 2-second
//!    warning and the InnoDB monitor output it starts are not modelled.
//! 5. With `innodb_doublewrite` on, Percona Server 5.7.11+ writes each batch first to its
//!    shard of the parallel doublewrite file (`xb_doublewrite`: one shard of
//!    `srv_doublewrite_batch_size` pages per instance and batch kind); that is not planned
//!    here (experiment 2 runs without doublewrite).
//! 6. The sync checkpoint of `log_checkpoint_margin` (checkpoint age past
//!    `max_checkpoint_age`) and the checkpoint writes are left to the driver.

pub mod batch;
pub mod cleaner;
pub mod free_block;
pub mod lru_manager;

pub use batch::{flush_area, FlushKind, Neighbours};
pub use cleaner::{CleanerObs, CleanerPass, CleanerWait, Coordinator, PassKind, Recommendation, Recommender};
pub use free_block::{FrameStep, FrameWaiter, FreeFrames, SinglePage};
pub use lru_manager::{LruBatch, LruBatchResult, LruManager};

use crate::db::innodb::buffer_pool::{PageKey, BUF_LRU_MIN_LEN};
#[cfg(doc)]
use crate::db::innodb::mariadb_flush::PageState;
use crate::db::innodb::mariadb_flush::PoolView;
use crate::db::innodb::page_cleaner::LogAges;
use crate::sim::time::{Nanos, MS};

/// `MAX_BUFFER_POOLS` (`include/buf0buf.h`): at most 64 instances.
pub const MAX_BUFFER_POOLS: usize = 64;
/// `BUF_POOL_SIZE_THRESHOLD` (`include/srv0start.h`): from 1 GiB of pool on, 8 instances by
/// default.
pub const BUF_POOL_SIZE_THRESHOLD: u64 = 1 << 30;
/// The instances an unset `innodb_buffer_pool_instances` gives from
/// `BUF_POOL_SIZE_THRESHOLD` on (`srv_start`).
pub const DEFAULT_INSTANCES: u64 = 8;
/// `srv_buf_pool_min_size` (`srv/srv0srv.cc`): 5 MiB.
pub const BUF_POOL_MIN_SIZE: u64 = 5 << 20;
/// `BUF_READ_AHEAD_PAGES`: the read-ahead (and neighbour) area's maximum.
pub const BUF_READ_AHEAD_PAGES: u64 = 64;
/// `BUF_READ_AHEAD_PORTION`: the read-ahead area is at most an instance's frames / 32.
pub const BUF_READ_AHEAD_PORTION: u64 = 32;
/// `buf_flush_lsn_scan_factor`.
pub const LSN_SCAN_FACTOR: u64 = 3;
/// `LSN_MAX`.
pub const LSN_MAX: u64 = u64::MAX;
/// `SRV_MAX_IO_CAPACITY_LIMIT` (`ULONG_MAX` on 64-bit Linux; 2^32 - 1 kept, as the other
/// modules do, to stay clear of overflow).
pub const SRV_MAX_IO_CAPACITY_LIMIT: u64 = u32::MAX as u64;
/// `srv_cleaner_max_lru_time` (ms): the longest LRU manager sleep (`innodb_cleaner_max_lru_time`
/// exists only in debug builds).
pub const CLEANER_MAX_LRU_TIME_MS: u64 = 1000;
/// `MAX_FREE_LIST_BACKOFF_SLEEP` (`buf0lru.cc`): the longest backoff sleep, µs.
pub const MAX_FREE_LIST_BACKOFF_SLEEP_US: u64 = 10_000;
/// `FREE_LIST_BACKOFF_HIGH_PRIO_DIVIDER`.
pub const FREE_LIST_BACKOFF_HIGH_PRIO_DIVIDER: u64 = 100;
/// `FREE_LIST_BACKOFF_LOW_PRIO_DIVIDER`.
pub const FREE_LIST_BACKOFF_LOW_PRIO_DIVIDER: u64 = 1;
/// The legacy thread's sleep from its third round on (`os_thread_sleep(10000)`), µs.
pub const LEGACY_FREE_WAIT_US: u64 = 10_000;
/// `buf_flush_wait_flushed_sleep_time`: a thread waiting for a sync flush polls this often.
pub const WAIT_FLUSHED_POLL_NS: Nanos = 10 * MS;

/// `innodb_cleaner_lsn_age_factor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LsnAgeFactor {
    /// `legacy`: MySQL's `f^1.5 / 7.5`.
    Legacy,
    /// `high_checkpoint` (the default): `f^2.5 / 700.5`.
    HighCheckpoint,
}

/// `innodb_empty_free_list_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyFreeListAlgorithm {
    /// `legacy`: MySQL 5.7's scan and single-page flush.
    Legacy,
    /// `backoff` (the default): wait for the LRU manager.
    Backoff,
}

/// The parameters, named as Percona Server 5.7's system variables, with its defaults
/// (`handler/ha_innodb.cc` `MYSQL_SYSVAR_*`; `srv/srv0srv.cc`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// innodb_buffer_pool_size: 128 MiB (bytes).
    pub innodb_buffer_pool_size: u64,
    /// innodb_page_size: 16384.
    pub innodb_page_size: u64,
    /// innodb_buffer_pool_instances: 0 = unset (`srv_buf_pool_instances_default`), then 8 from
    /// 1 GiB of pool on, else 1 (`srv_start`); a pool under 1 GiB always has 1.
    pub innodb_buffer_pool_instances: u64,
    /// innodb_buffer_pool_chunk_size: 128 MiB.
    pub innodb_buffer_pool_chunk_size: u64,
    /// innodb_page_cleaners: 4 (at most the instances, `srv_start`).
    pub innodb_page_cleaners: u64,
    /// innodb_lru_scan_depth: 1024 (per instance).
    pub innodb_lru_scan_depth: u64,
    /// innodb_io_capacity: 200.
    pub innodb_io_capacity: u64,
    /// innodb_io_capacity_max: 0 = unset (`SRV_MAX_IO_CAPACITY_DUMMY_DEFAULT`), then
    /// `max(2 * innodb_io_capacity, 2000)` (`innobase_init`).
    pub innodb_io_capacity_max: u64,
    /// innodb_max_dirty_pages_pct: 75.
    pub innodb_max_dirty_pages_pct: f64,
    /// innodb_max_dirty_pages_pct_lwm: 0 (above innodb_max_dirty_pages_pct it is lowered to it).
    pub innodb_max_dirty_pages_pct_lwm: f64,
    /// innodb_adaptive_flushing: ON.
    pub innodb_adaptive_flushing: bool,
    /// innodb_adaptive_flushing_lwm: 10 (% of the log capacity).
    pub innodb_adaptive_flushing_lwm: u64,
    /// innodb_flushing_avg_loops: 30.
    pub innodb_flushing_avg_loops: u64,
    /// innodb_flush_sync: ON.
    pub innodb_flush_sync: bool,
    /// innodb_flush_neighbors: 1.
    pub innodb_flush_neighbors: u64,
    /// innodb_doublewrite: ON.
    pub innodb_doublewrite: bool,
    /// innodb_cleaner_lsn_age_factor: high_checkpoint.
    pub innodb_cleaner_lsn_age_factor: LsnAgeFactor,
    /// innodb_empty_free_list_algorithm: backoff.
    pub innodb_empty_free_list_algorithm: EmptyFreeListAlgorithm,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            innodb_buffer_pool_size: 128 << 20,
            innodb_page_size: 16384,
            innodb_buffer_pool_instances: 0,
            innodb_buffer_pool_chunk_size: 128 << 20,
            innodb_page_cleaners: 4,
            innodb_lru_scan_depth: 1024,
            innodb_io_capacity: 200,
            innodb_io_capacity_max: 0,
            innodb_max_dirty_pages_pct: 75.0,
            innodb_max_dirty_pages_pct_lwm: 0.0,
            innodb_adaptive_flushing: true,
            innodb_adaptive_flushing_lwm: 10,
            innodb_flushing_avg_loops: 30,
            innodb_flush_sync: true,
            innodb_flush_neighbors: 1,
            innodb_doublewrite: true,
            innodb_cleaner_lsn_age_factor: LsnAgeFactor::HighCheckpoint,
            innodb_empty_free_list_algorithm: EmptyFreeListAlgorithm::Backoff,
        }
    }
}

/// The parameters as the server runs with them (`innobase_init`, `srv_start`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolved {
    /// The parameters as given.
    pub p: Params,
    /// `srv_buf_pool_instances`.
    pub instances: u64,
    /// `srv_buf_pool_size` after `buf_pool_size_align`.
    pub pool_size: u64,
    /// `srv_n_page_cleaners`: at most the instances.
    pub page_cleaners: u64,
    /// `srv_io_capacity`: at most `srv_max_io_capacity`, at least 1.
    pub io_capacity: u64,
    /// `srv_max_io_capacity`.
    pub io_capacity_max: u64,
    /// `srv_max_dirty_pages_pct_lwm`: at most innodb_max_dirty_pages_pct.
    pub max_dirty_pages_pct_lwm: f64,
    /// Frames of one instance (`curr_size`).
    pub instance_frames: u64,
    /// The free-list algorithm in effect.
    pub algorithm: EmptyFreeListAlgorithm,
}

impl Params {
    /// The parameters as the server runs with them.
    pub fn resolve(&self) -> Resolved {
        let ps = self.innodb_page_size.max(1);
        let size = self.innodb_buffer_pool_size.max(BUF_POOL_MIN_SIZE);
        let instances = if size >= BUF_POOL_SIZE_THRESHOLD {
            match self.innodb_buffer_pool_instances {
                0 => DEFAULT_INSTANCES,
                n => n.min(MAX_BUFFER_POOLS as u64),
            }
        } else {
            1
        };
        // srv_start: a chunk larger than an instance's share shrinks to it.
        let mut chunk = self.innodb_buffer_pool_chunk_size.max(ps);
        if chunk.saturating_mul(instances) > size {
            chunk = size / instances + u64::from(!size.is_multiple_of(instances));
        }
        let m = chunk.saturating_mul(instances).max(1);
        let pool_size = size.div_ceil(m).saturating_mul(m);
        let per = pool_size / instances;
        // One frame per chunk goes to the block descriptors and alignment (`buf_chunk_init`,
        // as `buffer_pool::pool_frames` has it for one instance).
        let instance_frames = (per / ps).saturating_sub(per.div_ceil(chunk));
        let io_capacity_max = match self.innodb_io_capacity_max {
            0 if self.innodb_io_capacity >= SRV_MAX_IO_CAPACITY_LIMIT / 2 => SRV_MAX_IO_CAPACITY_LIMIT,
            0 => (2 * self.innodb_io_capacity).max(2000),
            n => n.min(SRV_MAX_IO_CAPACITY_LIMIT),
        };
        // innodb_empty_free_list_algorithm_allowed: backoff needs 5 * BUF_LRU_MIN_LEN pages
        // per instance.
        let allowed = pool_size / ps / instances >= 5 * BUF_LRU_MIN_LEN as u64;
        let algorithm =
            if allowed { self.innodb_empty_free_list_algorithm } else { EmptyFreeListAlgorithm::Legacy };
        Resolved {
            p: *self,
            instances,
            pool_size,
            page_cleaners: self.innodb_page_cleaners.clamp(1, instances),
            io_capacity: self.innodb_io_capacity.min(io_capacity_max).max(1),
            io_capacity_max,
            max_dirty_pages_pct_lwm: self.innodb_max_dirty_pages_pct_lwm.min(self.innodb_max_dirty_pages_pct),
            instance_frames,
            algorithm,
        }
    }
}

impl Resolved {
    /// `PCT_IO(p)`: `p` percent of `srv_io_capacity`.
    pub fn pct_io(&self, pct: u64) -> u64 {
        (self.io_capacity as f64 * (pct as f64 / 100.0)) as u64
    }

    /// The neighbour flushing of an instance.
    pub fn neighbours(&self) -> Neighbours {
        Neighbours { mode: self.p.innodb_flush_neighbors, area: flush_area(self.instance_frames) }
    }
}

/// `buf_pool_get(page_id)`: the instance of page `page_no` of tablespace `space_id`:
/// `((space << 20) + space + (page_no >> 6)) % instances` (`page_id_t::fold` of the page
/// number without its low 6 bits).
pub fn instance_of(space_id: u32, page_no: u64, instances: u64) -> usize {
    let space = u64::from(space_id);
    let fold = (space << 20).wrapping_add(space).wrapping_add(page_no >> 6);
    (fold % instances.max(1)) as usize
}

/// [`instance_of`] for a page key.
pub fn instance_of_key(key: PageKey, instances: u64) -> usize {
    instance_of(key.space_id(), key.page_no(), instances)
}

/// `total` split over `n` parts as evenly as integers allow: part `i`'s share (the first
/// `total % n` parts get one more).
pub fn even_share(total: u64, n: u64, i: u64) -> u64 {
    let n = n.max(1);
    total / n + u64::from(i < total % n)
}

/// SHOW GLOBAL STATUS and INFORMATION_SCHEMA.INNODB_METRICS counters of the flushing,
/// named after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Innodb_buffer_pool_pages_flushed (`srv_stats.buf_pool_flushed`): the flush-list
    /// batches' pages written plus the LRU managers' pages written *and evicted*
    /// (`buf_lru_manager` adds `n_processed`); single-page flushes are not counted.
    pub buffer_pool_pages_flushed: u64,
    /// Innodb_buffer_pool_pages_LRU_flushed: exports `buf_pool_stat_t::buf_lru_flush_page_count`,
    /// which nothing increments and `buf_get_total_stat` does not sum: always 0 in 5.7.22.
    pub buffer_pool_pages_lru_flushed: u64,
    /// Innodb_buffer_pool_wait_free: one per round of a thread that found the free list
    /// empty (backoff: every yield or sleep; legacy: every round after its single-page flush).
    pub buffer_pool_wait_free: u64,
    /// The pages LRU batches wrote (the file-static `buf_lru_flush_page_count` of
    /// `buf0flu.cc`, exported nowhere).
    pub lru_batch_written: u64,
    /// buffer_LRU_batch_flush_total_pages (`MONITOR_LRU_BATCH_FLUSH_TOTAL_PAGE`): the LRU
    /// managers' pages written plus evicted.
    pub lru_batch_flush_total_pages: u64,
    /// buffer_LRU_batch_evict_total_pages: clean pages the LRU batches evicted.
    pub lru_batch_evict_total_pages: u64,
    /// buffer_LRU_batch_scanned: LRU pages the LRU batches looked at.
    pub lru_batch_scanned: u64,
    /// LRU manager iterations.
    pub lru_manager_loops: u64,
    /// buffer_LRU_get_free_loops: rounds that found the free list empty.
    pub lru_get_free_loops: u64,
    /// buffer_LRU_get_free_waits: legacy rounds that slept 10 ms.
    pub lru_get_free_waits: u64,
    /// buffer_LRU_single_flush_failure_count: legacy single-page flushes that found nothing.
    pub lru_single_flush_failure_count: u64,
    /// Pages legacy single-page flushes wrote (MONITOR_LRU_SINGLE_FLUSH_* kin).
    pub lru_single_flush_pages: u64,
    /// buffer_flush_adaptive_total_pages: pages of active timed passes.
    pub flush_adaptive_total_pages: u64,
    /// buffer_flush_sync_total_pages: pages of sync passes.
    pub flush_sync_total_pages: u64,
    /// buffer_flush_background_total_pages: pages of idle passes.
    pub flush_background_total_pages: u64,
    /// buffer_flush_n_to_flush_requested: the last recommendation's `n_pages` (a gauge).
    pub flush_n_to_flush_requested: u64,
    /// buffer_flush_pct_for_lsn and buffer_flush_pct_for_dirty of the last recommendation.
    pub flush_pct_for_lsn: u64,
    /// See `flush_pct_for_lsn`.
    pub flush_pct_for_dirty: u64,
    /// Page cleaner passes (any kind).
    pub cleaner_passes: u64,
    /// Threads that asked a sync flush in `log_free_check`.
    pub sync_preflush_waits: u64,
}

/// The flushing of one Percona Server 5.7 server.
#[derive(Debug, Clone)]
pub struct PerconaFlush {
    /// The parameters in effect.
    pub r: Resolved,
    /// The redo log's ages (`log_calc_max_ages`).
    pub log: LogAges,
    /// The LRU manager threads: one per instance, or one for all (merged).
    pub lru: Vec<LruManager>,
    /// The instances' free-frame policies (`try_LRU_scan`), as many as `lru`.
    pub free: Vec<FreeFrames>,
    /// The page cleaner coordinator.
    pub cleaner: Coordinator,
    /// Counters.
    pub stats: Stats,
}

impl PerconaFlush {
    /// The server started at `now` with `params` and the redo log's `log` ages; `merged`: one
    /// LRU manager and free list stand for all instances (see the module doc).
    pub fn new(params: Params, log: LogAges, now: Nanos, merged: bool) -> PerconaFlush {
        let r = params.resolve();
        let (n, fold) = if merged { (1, r.instances) } else { (r.instances as usize, 1) };
        PerconaFlush {
            r,
            log,
            lru: vec![LruManager::new(now, fold); n],
            free: vec![FreeFrames::new(r.algorithm, params.innodb_doublewrite); n],
            cleaner: Coordinator::new(now),
            stats: Stats::default(),
        }
    }

    /// Instances (or the one merged) the driver runs LRU managers and free lists for.
    pub fn lru_instances(&self) -> usize {
        self.lru.len()
    }

    /// When LRU manager `i`, done with its last batch at `now`, starts its next iteration.
    pub fn lru_wake_at(&self, i: usize, now: Nanos) -> Nanos {
        self.lru[i].wake_at(now)
    }

    /// LRU manager `i` starts an iteration at `now` with `free_len` free frames and
    /// `lru_len` LRU pages in its instance(s): the batch's limits.
    pub fn lru_begin(&mut self, i: usize, now: Nanos, free_len: u64, lru_len: u64) -> LruBatch {
        self.stats.lru_manager_loops += 1;
        self.lru[i].begin(&self.r, now, free_len, lru_len)
    }

    /// LRU manager `i`'s batch `b` on `view` (its instance, or the merged pool): pages
    /// evicted now, pages written queued (`view.write`); the batch's end lets legacy threads
    /// scan again.
    pub fn lru_batch<V: PoolView>(&mut self, i: usize, view: &mut V, b: &LruBatch) -> LruBatchResult {
        let res = lru_manager::lru_list_batch(view, b, &self.r.neighbours());
        self.free[i].batch_ended();
        self.stats.lru_batch_written += res.written;
        self.stats.lru_batch_evict_total_pages += res.evicted;
        self.stats.lru_batch_scanned += res.scanned;
        res
    }

    /// LRU manager `i`'s batch is over (every write completed).
    pub fn lru_end(&mut self, i: usize, res: &LruBatchResult) {
        self.lru[i].end(res);
        self.stats.buffer_pool_pages_flushed += res.processed();
        self.stats.lru_batch_flush_total_pages += res.processed();
    }

    /// How the page cleaner waits now.
    pub fn cleaner_wait(&self, obs: &CleanerObs) -> CleanerWait {
        self.cleaner.wait(obs)
    }

    /// A page cleaner pass at `obs.now_ns`; `pages_for_lsn(target, counts)` fills each
    /// instance's count of dirty pages with oldest modification at most `target`.
    pub fn cleaner_pass(
        &mut self,
        obs: &CleanerObs,
        pages_for_lsn: impl FnMut(u64, &mut [u64]),
    ) -> CleanerPass {
        self.stats.cleaner_passes += 1;
        let pass = self.cleaner.begin_pass(&self.r, &self.log, obs, pages_for_lsn);
        if let Some(rec) = &pass.rec {
            self.stats.flush_n_to_flush_requested = rec.n_pages;
            self.stats.flush_pct_for_lsn = rec.pct_for_lsn;
            self.stats.flush_pct_for_dirty = rec.pct_for_dirty;
        }
        pass
    }

    /// Instance `i`'s flush-list batch (`buf_flush_do_batch(BUF_FLUSH_LIST)`, see
    /// [`batch::flush_list_batch`]) on `view` (that instance, or the merged pool with `i` 0).
    /// Returns the pages written; its end lets legacy threads of the instance scan again.
    pub fn flush_list_batch<V: PoolView, I: IntoIterator<Item = (PageKey, u64)>>(
        &mut self,
        i: usize,
        view: &mut V,
        oldest_first: I,
        min_n: u64,
        lsn_limit: u64,
    ) -> u64 {
        let fold = self.lru[i].fold();
        let n = batch::flush_list_batch(view, oldest_first, min_n, lsn_limit, &self.r.neighbours(), fold);
        self.free[i].batch_ended();
        n
    }

    /// The pass's batches wrote `written` pages.
    pub fn cleaner_end(&mut self, pass: &CleanerPass, written: u64) {
        self.cleaner.end_pass(pass, written);
        self.stats.buffer_pool_pages_flushed += written;
        match pass.kind {
            PassKind::Sync => self.stats.flush_sync_total_pages += written,
            PassKind::Adaptive | PassKind::ActiveWoken => self.stats.flush_adaptive_total_pages += written,
            PassKind::Idle => self.stats.flush_background_total_pages += written,
            PassKind::Nothing => {}
        }
    }

    /// A thread needs a frame from instance `i` (see [`FreeFrames::get_free_block`]).
    pub fn get_free_block(
        &mut self,
        i: usize,
        w: &mut FrameWaiter,
        free_len: u64,
        lru_batch_running: bool,
        high_priority: bool,
    ) -> FrameStep {
        self.free[i].get_free_block(w, free_len, lru_batch_running, high_priority, &mut self.stats)
    }

    /// Legacy: the scan of [`FrameStep::ScanLru`] freed a frame or not.
    pub fn after_scan(&mut self, i: usize, w: &mut FrameWaiter, freed: bool) -> FrameStep {
        self.free[i].after_scan(w, freed, &mut self.stats)
    }

    /// Legacy: the single-page flush of [`FrameStep::SinglePageFlush`] did `what`.
    pub fn after_single_page_flush(&mut self, i: usize, w: &mut FrameWaiter, what: SinglePage) {
        if let SinglePage::Written(_) = what {
            self.stats.lru_single_flush_pages += 1;
        }
        self.free[i].after_single_page_flush(w, what != SinglePage::Nothing, &mut self.stats);
    }

    /// `log_free_check` → `log_checkpoint_margin` before a change, with the current `lsn` and
    /// the oldest modification (0 when nothing is dirty, taken as `lsn`): past
    /// `max_modified_age_sync` of age, the target `lsn - max_modified_age_sync` the thread
    /// waits for (polling every [`WAIT_FLUSHED_POLL_NS`]); a sync flush is asked of the page
    /// cleaner with `innodb_flush_sync` (the driver signals it). None: the thread goes on.
    pub fn log_free_check(&mut self, lsn: u64, oldest_lsn: u64) -> Option<u64> {
        let oldest = if oldest_lsn == 0 { lsn } else { oldest_lsn };
        let age = lsn.saturating_sub(oldest);
        if age <= self.log.max_modified_age_sync {
            return None;
        }
        let target = oldest + (age - self.log.max_modified_age_sync);
        self.stats.sync_preflush_waits += 1;
        if self.r.p.innodb_flush_sync {
            self.cleaner.request_sync(target);
        }
        Some(target)
    }

    /// Innodb_checkpoint_age: `lsn - last_checkpoint_lsn`.
    pub fn checkpoint_age(lsn: u64, last_checkpoint_lsn: u64) -> u64 {
        lsn.saturating_sub(last_checkpoint_lsn)
    }

    /// Innodb_checkpoint_max_age: `max_checkpoint_age`.
    pub fn checkpoint_max_age(&self) -> u64 {
        self.log.max_checkpoint_age
    }
}

#[cfg(test)]
mod tests;
