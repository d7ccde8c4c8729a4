//! How MariaDB 10.11 writes dirty pages: the page cleaner's passes, the user thread that
//! needs a free frame, the LRU and flush-list batches with their neighbours, and the
//! doublewrite buffer the writes go through.
//!
//! Mechanism.
//! - One page cleaner thread (`buf_flush_page_cleaner`). At the top of its loop it sleeps
//!   unless a free frame is needed (`buf_pool_t::need_LRU_eviction`: a user thread found no
//!   free frame, or fewer than `innodb_lru_scan_depth / 2` frames are free with more than
//!   `BUF_LRU_MIN_LEN` pages in the LRU list) or a furious flush is asked
//!   (`buf_flush_sync_lsn`). When it has nothing to do it is "idle" and, with
//!   `innodb_max_dirty_pages_pct_lwm` = 0 (the default) or no dirty page, waits without a
//!   timeout until a thread wakes it; otherwise it waits until one second after its previous
//!   pass began (after a furious pass: after that pass ended).
//!   Wake-ups: a user thread whose allocation left fewer than `innodb_lru_scan_depth / 2`
//!   frames free or that found none (`page_cleaner_wakeup(true)`); a mini-transaction commit
//!   that dirtied pages (`mtr_t::commit` calls `page_cleaner_wakeup(false)` after adding them
//!   to the flush list) while the cleaner is idle and the dirty share is at least
//!   `innodb_max_dirty_pages_pct`; a mini-transaction commit past
//!   `max_modified_age_async` of checkpoint age (`buf_flush_ahead`: a background target
//!   wakes only an idle cleaner, a furious one always).
//! - A pass ([`MariadbFlush::begin_pass`]): a furious flush when `buf_flush_sync_lsn` is
//!   set (`innodb_flush_sync` on): an LRU batch of `innodb_io_capacity` if frames are
//!   needed, a flush-list batch of `innodb_io_capacity_max` pages up to that LSN, a wait for
//!   every write, an fsync of the data files and a checkpoint (written at the oldest
//!   modification). Else, when frames are needed
//!   and no background target is set: wait for every pending write, then an LRU batch of up
//!   to `innodb_io_capacity_max` writes. Else, when the dirty share is below
//!   `innodb_max_dirty_pages_pct` (90) and the redo age at most `innodb_adaptive_flushing_lwm`
//!   (10 %) of the log capacity and no background target is set: idle. Else a flush-list
//!   batch (background: `innodb_io_capacity_max` pages up to `buf_flush_async_lsn`;
//!   adaptive: `page_cleaner_flush_pages_recommendation`'s count) followed by an LRU batch of
//!   `max(innodb_io_capacity_max - written, min(innodb_io_capacity_max,
//!   innodb_lru_scan_depth))` writes. Each pass ends with the partial doublewrite batch
//!   submitted and a checkpoint attempt (`log_checkpoint`: fsync of the data files written,
//!   none with O_DIRECT_NO_FSYNC or nosync, then a checkpoint write if the oldest
//!   modification moved).
//! - The recommendation (10.11.18) is `(innodb_io_capacity * ratio + avg_page_rate +
//!   pages_for_lsn) / 3`, at most `innodb_io_capacity_max`, where `ratio` is 1 unless
//!   `innodb_max_dirty_pages_pct_lwm` is set (then the larger of the redo pressure
//!   `af_get_pct_for_lsn / 100` and `dirty_pct / innodb_max_dirty_pages_pct`): with the
//!   default lwm of 0 the redo pressure does not scale it. `avg_page_rate` and
//!   `lsn_avg_rate` are averaged every `innodb_flushing_avg_loops` (30) passes or seconds;
//!   `pages_for_lsn` is a third of the dirty pages older than `oldest + 3 * lsn_avg_rate`
//!   (counted up to `innodb_io_capacity_max`). When the redo pressure is nil the count is
//!   `innodb_io_capacity` (or the dirty pages when fewer).
//! - LRU batch (`buf_flush_LRU_list_batch`, [`MariadbFlush::lru_flush`]): from the LRU
//!   tail, while the list is longer than `min(usable_size / 20 - 1, BUF_LRU_MIN_LEN)` and fewer
//!   than `innodb_lru_scan_depth` frames are free: a clean page is evicted to the free
//!   list; a dirty one is written (with its neighbours only once half the free target is
//!   reached), until `max` writes; a busy one is skipped. When the write quota was used up,
//!   a second pass evicts clean pages only (`buf_flush_LRU`). A written page is NOT freed
//!   when its write completes (`buf_page_write_complete` frees only temporary-tablespace
//!   pages; MDEV-33613 removed the eviction of LRU-flushed pages): it stays where it is in
//!   the LRU list, clean, for the next batch or a user thread's scan to evict.
//! - A user thread needing a frame (`buf_LRU_get_free_block`,
//!   [`MariadbFlush::get_free_block`]) takes one from the free list; when there is none and
//!   `buf_pool.try_LRU_scan` is set it scans at most 100 pages from the LRU tail (or from
//!   where the previous scan stopped, `lru_scan_itr`) for a clean
//!   page to evict; failing that it clears `try_LRU_scan` (so the next threads do not scan)
//!   and waits on `buf_pool.done_free` (one-second timeouts), having woken the page
//!   cleaner unless it is active; every round of that wait counts
//!   `Innodb_buffer_pool_wait_free`, and it does not scan again. It never writes a page
//!   itself (only the page cleaner calls `buf_flush_LRU`: no single-page flush).
//! - Neighbours (`buf_flush_try_neighbors`, `innodb_flush_neighbors` = 1): only when the
//!   tablespace is on rotational storage (`fil_space_t::is_rotational`: a file whose
//!   `fil_node_t::on_ssd` is false, i.e. whose `st_dev` is not among the non-rotational
//!   block devices `fil_system` listed at startup; a ZFS dataset's anonymous device never is)
//!   and the LRU list holds at least `BUF_LRU_OLD_MIN_LEN` pages: the contiguous run of
//!   dirty, not-in-flight pages around the page inside its aligned area of
//!   `min(read_ahead_area, curr_size / 16)` = 64 pages (capped below the tablespace's last
//!   page) is written, lowest first, each counted against the batch's quota (the page itself
//!   is always written). With 2, every dirty page of the area. The LRU batch uses
//!   neighbours only once half of `innodb_lru_scan_depth` frames are free.
//! - Doublewrite ([`dblwr`]): pages are copied into a slot of `2 * FSP_EXTENT_SIZE` (128)
//!   pages; a full slot, or the partial one at the end of a batch, is written to ibdata1
//!   at the first doublewrite block (page 64) in one write when the two blocks are
//!   contiguous (they are when the buffer was created by `buf_dblwr_t::create`), then
//!   ibdata1 is fsynced (not with `innodb_flush_method = O_DIRECT_NO_FSYNC`), then each page
//!   is written in place asynchronously; when
//!   the last in-place write completes the data files are fsynced (`fil_flush_file_spaces`,
//!   skipped only with `innodb_flush_method = O_DIRECT_NO_FSYNC`) and the next batch may be
//!   written: one batch in flight at a time.
//! - Redo limits (`log_t::set_capacity`): capacity = (`innodb_log_file_size` − 12 KiB) less
//!   a tenth; margin = capacity − 48 pages, less a tenth; `max_checkpoint_age` = margin,
//!   `max_modified_age_async` = margin − margin / 8. A mini-transaction committing past
//!   `max_modified_age_async` of checkpoint age (`log_close`) sets the background target
//!   (`buf_flush_async_lsn`), at `max_checkpoint_age` or more the furious target
//!   (`buf_flush_sync_lsn`, and `check_for_checkpoint`), both to its end LSN less
//!   `max_modified_age_async` (made even; the low bit carries the furious flag). A user
//!   thread in `log_free_check` with the checkpoint age past `max_checkpoint_age`
//!   (`log_t::checkpoint_margin`) waits until the oldest modification reaches its LSN less
//!   `max_checkpoint_age` (`buf_flush_wait(lsn, false)`, which sets the furious target when
//!   below it), then checks again at once.
//!
//! How a driver calls it (one [`MariadbFlush`] per server; `V` is the buffer pool's
//! [`PoolView`]):
//! - page cleaner thread: `match fl.wait(&obs)`: [`Wait::None`] run now, [`Wait::Until`]
//!   sleep until then or a signal, [`Wait::Untimed`] sleep until a signal. Then
//!   `let pass = fl.begin_pass(&obs, |lsn| flush_list.count_older_than(lsn))`; if
//!   `pass.wait_writes_first`, wait until no page write is in flight; then
//!   `let n_list = pass.flush_list.map_or(0, |b| fl.flush_list_batch(&mut view,
//!   oldest_first, b.max_pages, b.lsn_limit))`; then
//!   `let n_lru = pass.lru_max(&fl.params, n_list).map_or(0, |m| fl.lru_flush(&mut view, m))`;
//!   then submit the partial doublewrite batch ([`dblwr::DoublewriteBuffer::flush_buffered_writes`]);
//!   if `pass.sync_after`, wait for every write and fsync the data files; if
//!   `pass.checkpoint`, fsync the data files written and write a checkpoint at the oldest
//!   modification; finally `fl.end_pass(&pass, &obs_after, n_list, n_lru)`.
//! - user thread needing a frame: `fl.get_free_block(&mut view, cleaner_busy)`; on
//!   [`FreeBlock::Wait`] block until a frame is freed or one second passes, then
//!   `fl.after_wait(&view, cleaner_busy)`. A `signal` in either answer interrupts the
//!   page cleaner's wait.
//! - a mini-transaction commit that dirtied pages: `fl.on_page_dirtied(&obs)` with the
//!   flush list after it (signal when true); a mini-transaction
//!   commit ending at `lsn`: [`log_close`], and unless [`FlushAhead::No`],
//!   `fl.flush_ahead(lsn, furious)` (signal when true); before a statement
//!   (`log_free_check`): [`checkpoint_margin`], and when it answers a target above the
//!   oldest modification, `fl.wait_flushed(target)` and wait until the oldest modification
//!   reaches it, then ask again.
//! - any frame freed outside this module: `fl.frame_freed()`.
//!
//! Sources: checked against the MariaDB 10.11.18 release source, `storage/innobase/`:
//! `buf/buf0flu.cc` (`buf_flush_page_cleaner`, `page_cleaner_flush_pages_recommendation`,
//! `af_get_pct_for_lsn`, `af_needed_for_redo`, `buf_pool_t::need_LRU_eviction`,
//! `buf_pool_t::page_cleaner_wakeup`, `buf_flush_LRU`, `buf_do_LRU_batch`,
//! `buf_flush_LRU_list_batch`, `buf_do_flush_list_batch`, `buf_flush_list_holding_mutex`,
//! `buf_flush_try_neighbors`, `buf_flush_check_neighbors`, `buf_flush_check_neighbor`,
//! `buf_flush_ahead`, `buf_flush_wait`, `buf_flush_sync_for_checkpoint`, `log_checkpoint`,
//! `buf_page_write_complete`, `buf_page_t::write_complete`, `buf_page_t::flush`),
//! `buf/buf0lru.cc` (`buf_LRU_get_free_block`, `buf_LRU_scan_and_free_block`,
//! `buf_LRU_free_from_common_LRU_list`, `buf_LRU_free_page`,
//! `buf_LRU_block_free_non_file_page`), `buf/buf0dblwr.cc` (`buf_dblwr_t::create`,
//! `add_to_batch`, `flush_buffered_writes`, `flush_buffered_writes_completed`,
//! `write_completed`), `buf/buf0buf.cc` (`buf_pool_t::create`: `read_ahead_area`,
//! `BUF_READ_AHEAD_PORTION`), `include/buf0buf.h` (`LRUItr::start`, `LRUHp::adjust`,
//! `page_cleaner_active`, `curr_size`, `usable_size`, `READ_AHEAD_PAGES`,
//! `BUF_LRU_MIN_LEN`), `include/buf0lru.h` (`BUF_LRU_OLD_MIN_LEN`), `include/buf0dblwr.h`
//! (`block_size`, `batches`, `written`), `fil/fil0fil.cc` (`fil_flush_file_spaces`,
//! `fil_node_t::complete_write`, `fil_system_t::create`'s list of non-rotational devices),
//! `os/os0file.cc` (`fil_node_t::find_metadata`), `include/fil0fil.h`
//! (`fil_space_t::is_rotational`, `fil_system_t::is_ssd`, `use_doublewrite`,
//! `fil_space_t::flush`), `log/log0log.cc` (`log_t::set_capacity`,
//! `log_t::checkpoint_margin`, `log_free_check`), `mtr/mtr0mtr.cc` (`log_close`,
//! `mtr_flush_ahead`, `mtr_t::commit`), `srv/srv0srv.cc` (`srv_export_innodb_status`),
//! `handler/ha_innodb.cc` (`innodb_init_params`, the system variables,
//! `innodb_status_variables`). 10.11.18 has the LRU write quota after a flush-list batch and
//! the evict-only second LRU pass (MDEV-36226), write completion that frees only
//! temporary-tablespace pages (MDEV-33613), and the buffer pool of MDEV-29445 (`usable_size`,
//! shrinking). The module was first written from stored copies of a 10.11.12-or-later tree
//! (buf0flu.cc and buf0dblwr.cc at commit 00c6033349382e6e3f79084c701f475bdf2a1e48) and was
//! corrected where 10.11.18 differs. Defaults (`handler/ha_innodb.cc`): `innodb_io_capacity`
//! 200, `innodb_io_capacity_max` unset = max(2 × io_capacity, 2000),
//! `innodb_max_dirty_pages_pct` 90, `_lwm` 0, `innodb_adaptive_flushing` ON,
//! `innodb_adaptive_flushing_lwm` 10, `innodb_flushing_avg_loops` 30,
//! `innodb_lru_scan_depth` 1536, `innodb_flush_neighbors` 1, `innodb_flush_sync` ON,
//! `innodb_doublewrite` ON, `innodb_flush_method` O_DIRECT (not on Windows).
//!
//! Simplifications:
//! 1. One tablespace kind: every data file is on rotational storage or none is (one
//!    `rotational` flag), no temporary tablespace (its pages are freed at write
//!    completion), no ROW_FORMAT=COMPRESSED (`unzip_LRU`), no freed-page ranges
//!    (`flush_freed`), no buffer-pool shrinking (`to_withdraw` = 0, so `usable_size` =
//!    `curr_size` = the frames), no crash recovery.
//! 2. A batch runs at one instant: the pages it picks are those a real batch would pick
//!    given the lists at its start; the time its writes take is the doublewrite model's
//!    (the real thread blocks in `add_to_batch` while a doublewrite batch is in flight).
//! 3. Busy pages (buffer-fixed, latched, being read or written) are one state: neither
//!    evicted nor written (the real LRU batch can write a buffer-fixed unlatched page, and
//!    `buf_flush_check_neighbor` counts a latched or buffer-fixed dirty page in the
//!    contiguous run, only an I/O-fixed one ends it).
//! 4. After an LRU batch or going idle with frames needed, the real loop re-enters the
//!    decision with the furious target it read before (not read again); here the next pass
//!    starts at the top and reads it.
//! 5. `page_cleaner_active()` (`page_cleaner_status > PAGE_CLEANER_IDLE`: a flush-list
//!    batch active or an LRU flush pending) is the driver's `cleaner_busy`: the page cleaner
//!    is between `begin_pass` and `end_pass` of a pass with batches.
//! 6. The user thread's LRU scan resumes from `lru_scan_itr` only if that page is still
//!    cached and young (`LRUItr::start`); when that page leaves the LRU list the real
//!    iterator moves to the page before it (`LRUHp::adjust`), here the scan restarts at the
//!    tail. (10.11.18's scan does not make pages young.)
//! 7. `innodb_flush_method` = nosync is treated as fsync: 10.11.18 skips only the data-file
//!    fsync before a checkpoint (`log_checkpoint`, `buf_flush_sync_for_checkpoint`) for it.
//!    littlesync behaves as fsync in every path modelled here, and O_DSYNC data files are
//!    opened with O_DIRECT and fsynced as with O_DIRECT (its difference is the redo log's).
//!    `innodb_lru_flush_size` (32) is deprecated with no effect in 10.11.18.
//! 8. A user thread whose one-second wait for a frame times out also calls
//!    `buf_pool_t::LRU_warn` (clears `try_LRU_scan`, warns once); [`MariadbFlush::after_wait`]
//!    cannot tell a timeout from a signal and leaves `try_LRU_scan` as it is.

pub mod cleaner;
pub mod dblwr;
pub mod lru;

pub use cleaner::{ListBatch, Pass, PassKind, Wait};
pub use lru::{FreeBlock, PageState, PoolView};

use super::buffer_pool::{PageKey, BUF_LRU_MIN_LEN};
use crate::sim::time::Nanos;

/// LSN_MAX: no LSN limit for a flush-list batch.
pub const LSN_MAX: u64 = u64::MAX;
/// `log_t::START_OFFSET`: bytes of ib_logfile0 before the first log block (the header and
/// the two checkpoint blocks of 4 KiB each; 10.8+ log format).
pub const LOG_START_OFFSET: u64 = 12_288;
/// Pages of margin `log_t::set_capacity` keeps below the capacity (`48 << srv_page_size_shift`).
pub const LOG_MARGIN_PAGES: u64 = 48;
/// `buf_LRU_get_free_block`: pages a user thread scans from the LRU tail for a clean page.
pub const LRU_SEARCH_SCAN: u64 = 100;
/// `BUF_READ_AHEAD_PORTION`: read-ahead area is at most the pool's frames / 32.
pub const BUF_READ_AHEAD_PORTION: u64 = 32;
/// `buf_pool_t::READ_AHEAD_PAGES`: the read-ahead (and neighbour) area's maximum.
pub const READ_AHEAD_PAGES: u64 = 64;
/// `buf_flush_lsn_scan_factor`.
pub const LSN_SCAN_FACTOR: u64 = 3;
/// `SRV_MAX_IO_CAPACITY_LIMIT` (`UINT32_MAX`, `include/srv0srv.h`): the largest
/// innodb_io_capacity and innodb_io_capacity_max.
pub const SRV_MAX_IO_CAPACITY_LIMIT: u64 = u32::MAX as u64;

/// `innodb_flush_method` (10.11 values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMethod {
    /// fsync.
    Fsync,
    /// O_DSYNC.
    ODsync,
    /// littlesync (testing only).
    Littlesync,
    /// nosync (testing only).
    Nosync,
    /// O_DIRECT: the 10.11 default on Linux.
    ODirect,
    /// O_DIRECT_NO_FSYNC: data files are never fsynced (`fil_node_t::complete_write` does
    /// not list them in `fil_system.unflushed_spaces`), nor ibdata1 after a doublewrite
    /// copy (`fil_space_t::flush`).
    ODirectNoFsync,
}

impl FlushMethod {
    /// The method named `s` (as in my.cnf, any case), None if unknown.
    pub fn parse(s: &str) -> Option<FlushMethod> {
        const NAMES: [(&str, FlushMethod); 6] = [
            ("fsync", FlushMethod::Fsync),
            ("O_DSYNC", FlushMethod::ODsync),
            ("littlesync", FlushMethod::Littlesync),
            ("nosync", FlushMethod::Nosync),
            ("O_DIRECT", FlushMethod::ODirect),
            ("O_DIRECT_NO_FSYNC", FlushMethod::ODirectNoFsync),
        ];
        NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)).map(|&(_, m)| m)
    }

    /// Whether written data files, and ibdata1 after a doublewrite copy, are fsynced
    /// (`fil_flush_file_spaces` has work; `fil_space_t::flush` calls `flush_low`).
    pub fn fsyncs_data_files(self) -> bool {
        self != FlushMethod::ODirectNoFsync
    }
}

/// The flushing parameters, named as MariaDB's system variables, with 10.11's defaults
/// (`Params::default`; sources in the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// innodb_io_capacity: 200.
    pub innodb_io_capacity: u64,
    /// innodb_io_capacity_max: 0 = unset (the server's `SRV_MAX_IO_CAPACITY_DUMMY_DEFAULT`),
    /// then `max(2 * innodb_io_capacity, 2000)` (`innodb_init_params`); set below
    /// innodb_io_capacity, it lowers innodb_io_capacity to itself.
    pub innodb_io_capacity_max: u64,
    /// innodb_max_dirty_pages_pct: 90.
    pub innodb_max_dirty_pages_pct: f64,
    /// innodb_max_dirty_pages_pct_lwm: 0.
    pub innodb_max_dirty_pages_pct_lwm: f64,
    /// innodb_adaptive_flushing: ON.
    pub innodb_adaptive_flushing: bool,
    /// innodb_adaptive_flushing_lwm: 10 (% of the log capacity).
    pub innodb_adaptive_flushing_lwm: f64,
    /// innodb_flushing_avg_loops: 30.
    pub innodb_flushing_avg_loops: u64,
    /// innodb_lru_scan_depth: 1536 (`buf_pool.LRU_scan_depth`).
    pub innodb_lru_scan_depth: u64,
    /// innodb_flush_neighbors: 1 (0 off, 1 contiguous, 2 the whole area).
    pub innodb_flush_neighbors: u8,
    /// innodb_flush_sync: ON (furious flushing past the checkpoint age).
    pub innodb_flush_sync: bool,
    /// innodb_doublewrite: ON.
    pub innodb_doublewrite: bool,
    /// innodb_flush_method: O_DIRECT.
    pub innodb_flush_method: FlushMethod,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            innodb_io_capacity: 200,
            innodb_io_capacity_max: 0,
            innodb_max_dirty_pages_pct: 90.0,
            innodb_max_dirty_pages_pct_lwm: 0.0,
            innodb_adaptive_flushing: true,
            innodb_adaptive_flushing_lwm: 10.0,
            innodb_flushing_avg_loops: 30,
            innodb_lru_scan_depth: 1536,
            innodb_flush_neighbors: 1,
            innodb_flush_sync: true,
            innodb_doublewrite: true,
            innodb_flush_method: FlushMethod::ODirect,
        }
    }
}

impl Params {
    /// `srv_max_io_capacity` as `innodb_init_params` sets it: unset, `SRV_MAX_IO_CAPACITY_LIMIT`
    /// when innodb_io_capacity is at least half of it, else `max(2 * innodb_io_capacity,
    /// 2000)`; set, the value (at most the limit).
    pub fn io_capacity_max(&self) -> u64 {
        match self.innodb_io_capacity_max {
            0 if self.innodb_io_capacity >= SRV_MAX_IO_CAPACITY_LIMIT / 2 => SRV_MAX_IO_CAPACITY_LIMIT,
            0 => (2 * self.innodb_io_capacity).max(2000),
            n => n.min(SRV_MAX_IO_CAPACITY_LIMIT),
        }
    }

    /// `srv_io_capacity`: innodb_io_capacity, lowered to innodb_io_capacity_max when that is
    /// set below it (`innodb_init_params`); at least 1 (the divisions by it in the source
    /// assume so).
    fn io_capacity(&self) -> u64 {
        self.innodb_io_capacity.min(self.io_capacity_max()).max(1)
    }
}

/// The redo log's limits (`log_sys` after `log_t::set_capacity`), in LSN bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    /// `log_sys.log_capacity`.
    pub log_capacity: u64,
    /// `log_sys.max_modified_age_async`: past it a commit sets the background target.
    pub max_modified_age_async: u64,
    /// `log_sys.max_checkpoint_age`: at or past it a commit sets the furious target; past it
    /// user threads wait in `log_t::checkpoint_margin`.
    pub max_checkpoint_age: u64,
}

impl LogLimits {
    /// The limits of an ib_logfile0 of `innodb_log_file_size` bytes with `page_size`-byte
    /// pages; None when the file is too small for the margin.
    pub fn new(innodb_log_file_size: u64, page_size: u64) -> Option<LogLimits> {
        let smallest = innodb_log_file_size.checked_sub(LOG_START_OFFSET)?;
        let smallest = smallest - smallest / 10;
        let margin = smallest.checked_sub(LOG_MARGIN_PAGES.checked_mul(page_size)?)?;
        let margin = margin - margin / 10;
        if margin == 0 {
            return None;
        }
        Some(LogLimits {
            log_capacity: smallest,
            max_modified_age_async: margin - margin / 8,
            max_checkpoint_age: margin,
        })
    }
}

/// What a mini-transaction's commit asks of the page cleaner (`log_close`'s answer, which
/// `mtr_t::commit` passes to `buf_flush_ahead` through `mtr_flush_ahead`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushAhead {
    /// 0: no `buf_flush_ahead`.
    No,
    /// `buf_flush_ahead(target, false)`: [`MariadbFlush::flush_ahead`]`(lsn, false)`.
    Async,
    /// `buf_flush_ahead(target, true)`, and `log_sys.set_check_for_checkpoint(true)`: user
    /// threads will check the checkpoint margin ([`checkpoint_margin`]).
    Sync,
}

/// `log_close`: what a commit ending at `lsn` asks, the last checkpoint being at
/// `last_checkpoint_lsn`: nothing up to `max_modified_age_async` of checkpoint age,
/// furious flushing from `max_checkpoint_age` on, background flushing between. Either
/// way the target is `lsn - max_modified_age_async` ([`MariadbFlush::flush_ahead`]).
pub fn log_close(log: &LogLimits, lsn: u64, last_checkpoint_lsn: u64) -> FlushAhead {
    let age = lsn.saturating_sub(last_checkpoint_lsn);
    if age <= log.max_modified_age_async {
        FlushAhead::No
    } else if age < log.max_checkpoint_age {
        FlushAhead::Async
    } else {
        FlushAhead::Sync
    }
}

/// `log_t::checkpoint_margin` (from `log_free_check`): when the checkpoint age is past
/// `max_checkpoint_age`, the LSN the oldest modification must reach before the thread may go
/// on: `lsn - max_checkpoint_age` (`buf_flush_wait(lsn - max_age, false)`; the thread then
/// checks again at once, with the new checkpoint); None when it may go on.
pub fn checkpoint_margin(log: &LogLimits, lsn: u64, last_checkpoint_lsn: u64) -> Option<u64> {
    (lsn.saturating_sub(last_checkpoint_lsn) > log.max_checkpoint_age).then(|| lsn - log.max_checkpoint_age)
}

/// The neighbour area in pages: `min(buf_pool.read_ahead_area, curr_size / 16)`, where
/// `read_ahead_area` is `READ_AHEAD_PAGES` or, for small pools, `curr_size / 32` rounded up
/// to a power of two. At least 1.
pub fn flush_area(pool_frames: u64) -> u64 {
    let s = pool_frames / BUF_READ_AHEAD_PORTION;
    let read_ahead = if s >= READ_AHEAD_PAGES { READ_AHEAD_PAGES } else { s.next_power_of_two() };
    read_ahead.min(pool_frames / 16).max(1)
}

/// SHOW GLOBAL STATUS counters of the flushing, named after the status variables (bound
/// to these server variables in 10.11.18's `handler/ha_innodb.cc`
/// `innodb_status_variables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlushStats {
    /// Innodb_buffer_pool_pages_flushed (`buf_pool.stat.n_pages_written`): pages written
    /// by flush-list batches (`buf_flush_list_holding_mutex`) and LRU batches
    /// (`buf_do_LRU_batch`).
    pub buffer_pool_pages_flushed: u64,
    /// Innodb_buffer_pool_pages_LRU_flushed (`buf_lru_flush_page_count`): pages the LRU
    /// batches wrote (`buf_do_LRU_batch`).
    pub buffer_pool_pages_lru_flushed: u64,
    /// Innodb_buffer_pool_pages_LRU_freed (`buf_lru_freed_page_count`): clean pages the
    /// LRU batches evicted (`buf_do_LRU_batch`; not the user threads' scans).
    pub buffer_pool_pages_lru_freed: u64,
    /// Innodb_buffer_pool_wait_free (`buf_pool.stat.LRU_waits`): rounds a user thread
    /// waited for a free frame (`buf_LRU_get_free_block`).
    pub buffer_pool_wait_free: u64,
}

/// What the page cleaner sees when it decides (dirty reads of the lists, as the source's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Observation {
    /// Simulated time.
    pub now_ns: Nanos,
    /// `log_sys.get_lsn()`.
    pub lsn: u64,
    /// `buf_pool.get_oldest_modification(0)`: 0 when no page is dirty.
    pub oldest_lsn: u64,
    /// `UT_LIST_GET_LEN(buf_pool.flush_list)`: dirty pages.
    pub dirty_pages: u64,
    /// `UT_LIST_GET_LEN(buf_pool.LRU)`.
    pub lru_len: u64,
    /// `UT_LIST_GET_LEN(buf_pool.free)`.
    pub free_len: u64,
    /// `srv_get_activity_count()`: committed transactions so far (only read when
    /// `innodb_max_dirty_pages_pct_lwm` is set).
    pub activity_count: u64,
    /// Whether page reads are in flight (`os_aio_pending_reads()`; lwm idle flushing only).
    pub pending_reads: bool,
}

impl Observation {
    /// `100 * flush_list / (LRU + free)`, the dirty share the page cleaner uses.
    pub fn dirty_pct(&self) -> f64 {
        let all = self.lru_len.saturating_add(self.free_len);
        if all == 0 {
            0.0
        } else {
            self.dirty_pages as f64 * 100.0 / all as f64
        }
    }
}

/// The flushing of one MariaDB 10.11 server: the page cleaner's state, the buffer pool's
/// `try_LRU_scan` flag and scan iterator, and the counters.
#[derive(Debug, Clone)]
pub struct MariadbFlush {
    /// The parameters.
    pub params: Params,
    /// The redo log's limits.
    pub log: LogLimits,
    /// `buf_pool.curr_size()`: the pool's frames.
    pool_frames: u64,
    /// Whether the data files are on rotational storage (`fil_space_t::is_rotational`).
    rotational: bool,
    /// The page cleaner thread's state.
    pub cleaner: cleaner::CleanerState,
    /// `buf_pool.try_LRU_scan`.
    try_lru_scan: bool,
    /// `buf_pool.lru_scan_itr`: where the last user-thread scan stopped.
    scan_cursor: Option<PageKey>,
    /// Counters.
    pub stats: FlushStats,
}

impl MariadbFlush {
    /// The flushing of a pool of `pool_frames` frames whose data files are (`rotational`)
    /// or are not on rotational storage.
    pub fn new(params: Params, log: LogLimits, pool_frames: u64, rotational: bool) -> MariadbFlush {
        MariadbFlush {
            params,
            log,
            pool_frames,
            rotational,
            cleaner: cleaner::CleanerState::default(),
            try_lru_scan: true,
            scan_cursor: None,
            stats: FlushStats::default(),
        }
    }

    /// `buf_pool.try_LRU_scan`.
    pub fn try_lru_scan(&self) -> bool {
        self.try_lru_scan
    }

    /// `buf_pool_t::need_LRU_eviction`: a thread waits for a frame, or fewer than
    /// `innodb_lru_scan_depth / 2` are free with more than `BUF_LRU_MIN_LEN` pages cached.
    pub fn need_lru_eviction(&self, lru_len: u64, free_len: u64) -> bool {
        !self.try_lru_scan
            || (lru_len > BUF_LRU_MIN_LEN as u64 && free_len < self.params.innodb_lru_scan_depth / 2)
    }

    /// A frame went to the free list outside this module's batches
    /// (`buf_LRU_block_free_non_file_page` sets `try_LRU_scan`).
    pub fn frame_freed(&mut self) {
        self.try_lru_scan = true;
    }
}

#[cfg(test)]
mod tests;
