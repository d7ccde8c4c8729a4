//! How many dirty pages InnoDB's page cleaner flushes each second (MySQL 5.7), and the
//! redo log's checkpoint ages that drive it.
//!
//! Mechanism. The page cleaner coordinator wakes about once a second. When the server
//! was active since its last pass, it asks `page_cleaner_flush_pages_recommendation()` how
//! many pages to take from the flush lists (oldest modification first); when the server
//! was idle, it flushes `innodb_io_capacity` pages (PCT_IO(100)). The recommendation is
//! the mean of three numbers, capped at `innodb_io_capacity_max`:
//! - `PCT_IO(pct)`, the percentage of io_capacity the larger of two pressures asks for:
//!   dirty pages (`af_get_pct_for_dirty`: 100 % at `innodb_max_dirty_pages_pct` when no
//!   low-water mark is set, else `dirty_pct * 100 / (max_pct + 1)` from the mark on) and
//!   redo age (`af_get_pct_for_lsn`: from `innodb_adaptive_flushing_lwm` % of the log's
//!   capacity, `(io_capacity_max / io_capacity) * f * sqrt(f) / 7.5` with `f` the age in
//!   percent of `max_modified_age_async`, integer division first, as the source has it);
//! - the pages flushed per second, averaged every `innodb_flushing_avg_loops` passes
//!   (`avg_page_rate = (pages / seconds + avg_page_rate) / 2`);
//! - the pages whose oldest modification is older than `oldest + lsn_avg_rate * 3`
//!   (`buf_flush_lsn_scan_factor`), divided by 3, at most `2 * io_capacity_max`;
//!   `lsn_avg_rate` is averaged as the page rate is.
//!
//! The ages come from the log group's size (`log_calc_max_ages`): capacity = (file size −
//! 2 KiB header) × files, less a tenth; less the free space reserved per thread (4 pages
//! per thread for 10 + `innodb_thread_concurrency` threads and 8 pages); less a tenth
//! again: that is `max_checkpoint_age`; `max_modified_age_async` and `_sync` keep 1/8
//! and 1/16 of it free, `max_checkpoint_age_async` 1/32.
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/buf/buf0flu.cc` (`af_get_pct_for_dirty`,
//! `af_get_pct_for_lsn`, `page_cleaner_flush_pages_recommendation`,
//! `buf_flush_page_cleaner_coordinator`), `log/log0log.cc` (`log_calc_max_ages`,
//! `log_group_get_capacity`, LOG_POOL_*_RATIO_*), `include/log0log.h`
//! (LOG_CHECKPOINT_FREE_PER_THREAD, LOG_CHECKPOINT_EXTRA_FREE, LOG_FILE_HDR_SIZE),
//! `srv/srv0srv.cc` (defaults), `handler/ha_innodb.cc` (innodb_io_capacity_max's default).
//!
//! Simplifications:
//! 1. One buffer pool instance: the per-instance split of the request
//!    (`n_pages_requested`) is the whole request.
//! 2. Times are simulated seconds; the source's `ut_time_monotonic()` has whole seconds
//!    too, and its pass takes the time its flushing takes, which the caller decides.
//! 3. MariaDB 10.5+ rewrote the page cleaner (flushing driven by the checkpoint age and
//!    `innodb_max_dirty_pages_pct_lwm` alone); only MySQL 5.7's is modelled here.

/// Bytes of a redo log file's header (LOG_FILE_HDR_SIZE: 4 blocks of 512).
pub const LOG_FILE_HDR_SIZE: u64 = 4 * 512;

/// `buf_flush_lsn_scan_factor`.
const LSN_SCAN_FACTOR: u64 = 3;

/// SRV_MAX_IO_CAPACITY_LIMIT (innodb_io_capacity_max's upper bound).
const MAX_IO_CAPACITY_LIMIT: u64 = u32::MAX as u64;

/// The page cleaner's parameters, named as MySQL's options, with MySQL 5.7's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlushParams {
    /// innodb_io_capacity: 200.
    pub io_capacity: u64,
    /// innodb_io_capacity_max: 0 = unset, then `max(2 * io_capacity, 2000)`.
    pub io_capacity_max: u64,
    /// innodb_max_dirty_pages_pct: 75.
    pub max_dirty_pages_pct: f64,
    /// innodb_max_dirty_pages_pct_lwm: 0 (no pre-flushing below the high-water mark).
    pub max_dirty_pages_pct_lwm: f64,
    /// innodb_adaptive_flushing: on.
    pub adaptive_flushing: bool,
    /// innodb_adaptive_flushing_lwm: 10 (% of the log's capacity).
    pub adaptive_flushing_lwm: u64,
    /// innodb_flushing_avg_loops: 30.
    pub flushing_avg_loops: u64,
}

impl Default for FlushParams {
    fn default() -> Self {
        FlushParams {
            io_capacity: 200,
            io_capacity_max: 0,
            max_dirty_pages_pct: 75.0,
            max_dirty_pages_pct_lwm: 0.0,
            adaptive_flushing: true,
            adaptive_flushing_lwm: 10,
            flushing_avg_loops: 30,
        }
    }
}

impl FlushParams {
    /// innodb_io_capacity_max as the server sets it (`innodb_init_params`).
    pub fn io_capacity_max(&self) -> u64 {
        match self.io_capacity_max {
            0 if self.io_capacity >= MAX_IO_CAPACITY_LIMIT / 2 => MAX_IO_CAPACITY_LIMIT,
            0 => (2 * self.io_capacity).max(2000),
            n => n.max(self.io_capacity),
        }
    }

    /// PCT_IO(p): `p` percent of innodb_io_capacity.
    fn pct_io(&self, pct: u64) -> u64 {
        (self.io_capacity as f64 * (pct as f64 / 100.0)) as u64
    }
}

/// The redo log's ages (`log_sys` after `log_calc_max_ages`), in LSN bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAges {
    /// log_group_capacity: the group's bytes less a tenth.
    pub capacity: u64,
    /// max_modified_age_async: past it, flushing is at least adaptive's full rate.
    pub max_modified_age_async: u64,
    /// max_modified_age_sync: past it, user threads flush (sync flush).
    pub max_modified_age_sync: u64,
    /// max_checkpoint_age_async: past it, a checkpoint is written asynchronously.
    pub max_checkpoint_age_async: u64,
    /// max_checkpoint_age: the margin itself.
    pub max_checkpoint_age: u64,
}

impl LogAges {
    /// The ages of `files` redo files of `file_size` bytes each (innodb_log_file_size,
    /// innodb_log_files_in_group), with `page_size` (innodb_page_size) and
    /// `thread_concurrency` (innodb_thread_concurrency, 0 by default). None when the
    /// files are too small for the threads (the server refuses to start).
    pub fn new(file_size: u64, files: u64, page_size: u64, thread_concurrency: u64) -> Option<LogAges> {
        let group = file_size.checked_sub(LOG_FILE_HDR_SIZE)?.checked_mul(files)?;
        let smallest = group - group / 10;
        let free = 4 * page_size * (10 + thread_concurrency) + 8 * page_size;
        if free >= smallest / 2 {
            return None;
        }
        let margin = smallest - free;
        let margin = margin - margin / 10;
        Some(LogAges {
            capacity: smallest,
            max_modified_age_async: margin - margin / 8,
            max_modified_age_sync: margin - margin / 16,
            max_checkpoint_age_async: margin - margin / 32,
            max_checkpoint_age: margin,
        })
    }
}

/// `af_get_pct_for_dirty`: percent of io_capacity that `dirty_pct` (modified pages in
/// percent of the buffer pool's pages) asks for.
pub fn pct_for_dirty(p: &FlushParams, dirty_pct: f64) -> u64 {
    if dirty_pct == 0.0 {
        0
    } else if p.max_dirty_pages_pct_lwm == 0.0 {
        if dirty_pct >= p.max_dirty_pages_pct {
            100
        } else {
            0
        }
    } else if dirty_pct >= p.max_dirty_pages_pct_lwm {
        ((dirty_pct * 100.0) / (p.max_dirty_pages_pct + 1.0)) as u64
    } else {
        0
    }
}

/// `af_get_pct_for_lsn`: percent of io_capacity that a redo age of `age` asks for.
pub fn pct_for_lsn(p: &FlushParams, log: &LogAges, age: u64) -> u64 {
    let lwm = p.adaptive_flushing_lwm * log.capacity / 100;
    if age < lwm {
        return 0;
    }
    let max_async = log.max_modified_age_async.max(1);
    if age < max_async && !p.adaptive_flushing {
        return 0;
    }
    let factor = (age * 100 / max_async) as f64;
    // Integer division first, as in the source (ulint / ulint).
    let ratio = (p.io_capacity_max() / p.io_capacity.max(1)) as f64;
    (ratio * (factor * factor.sqrt()) / 7.5) as u64
}

/// What the page cleaner saw on one pass, for the recommendation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassInput {
    /// The pass's time, whole seconds (`ut_time_monotonic`).
    pub now_s: u64,
    /// The log's current LSN (`log_get_lsn`).
    pub lsn: u64,
    /// The oldest modification in the flush list (`buf_pool_get_oldest_modification`;
    /// the current LSN when nothing is dirty).
    pub oldest_lsn: u64,
    /// Modified pages in percent of the pool (`buf_get_modified_ratio_pct`).
    pub dirty_pct: f64,
    /// Pages the previous pass flushed from the flush list.
    pub last_pages: u64,
}

/// The recommendation's state (the function's `static` variables and `lsn_avg_rate`).
#[derive(Debug, Clone, Default)]
pub struct PageCleaner {
    prev_lsn: u64,
    prev_time: u64,
    sum_pages: u64,
    avg_page_rate: u64,
    n_iterations: u64,
    lsn_avg_rate: u64,
}

impl PageCleaner {
    /// `page_cleaner_flush_pages_recommendation`: pages to flush from the flush list on
    /// this pass. `pages_older_than(lsn)` counts the dirty pages whose oldest
    /// modification is at most `lsn` (the flush list scanned from its tail).
    pub fn recommend(
        &mut self,
        p: &FlushParams,
        log: &LogAges,
        at: &PassInput,
        pages_older_than: impl Fn(u64) -> u64,
    ) -> u64 {
        if self.prev_lsn == 0 {
            self.prev_lsn = at.lsn;
            self.prev_time = at.now_s;
            return 0;
        }
        if self.prev_lsn == at.lsn {
            return 0;
        }
        self.sum_pages += at.last_pages;
        let mut elapsed = at.now_s.saturating_sub(self.prev_time);
        let avg_loops = p.flushing_avg_loops;
        self.n_iterations += 1;
        if self.n_iterations >= avg_loops || elapsed >= avg_loops {
            elapsed = elapsed.max(1);
            self.avg_page_rate =
                ((self.sum_pages as f64 / elapsed as f64) + self.avg_page_rate as f64) as u64 / 2;
            let lsn_rate = (at.lsn.saturating_sub(self.prev_lsn) as f64 / elapsed as f64) as u64;
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) / 2;
            self.prev_lsn = at.lsn;
            self.prev_time = at.now_s;
            self.n_iterations = 0;
            self.sum_pages = 0;
        }
        let age = at.lsn.saturating_sub(at.oldest_lsn);
        let pct = pct_for_dirty(p, at.dirty_pct).max(pct_for_lsn(p, log, age));
        let target = at.oldest_lsn.saturating_add(self.lsn_avg_rate.saturating_mul(LSN_SCAN_FACTOR));
        let for_lsn = (pages_older_than(target) / LSN_SCAN_FACTOR).max(1);
        let max_io = p.io_capacity_max();
        let for_lsn = for_lsn.min(max_io.saturating_mul(2));
        ((p.pct_io(pct) + self.avg_page_rate + for_lsn) / 3).min(max_io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two 48 MiB files (5.7's default), 16K pages, no thread limit.
    fn default_log() -> LogAges {
        LogAges::new(48 << 20, 2, 16384, 0).unwrap()
    }

    #[test]
    fn log_ages_follow_log_calc_max_ages() {
        let l = default_log();
        // (48 MiB - 2 KiB) x 2 = 100,659,200; less a tenth: 90,593,280.
        assert_eq!(l.capacity, 90_593_280);
        // Less 4 x 16K x 10 + 8 x 16K = 786,432: 89,806,848; less a tenth: 80,826,164.
        assert_eq!(l.max_checkpoint_age, 80_826_164);
        assert_eq!(l.max_modified_age_async, 80_826_164 - 10_103_270);
        assert_eq!(l.max_modified_age_sync, 80_826_164 - 5_051_635);
        assert_eq!(l.max_checkpoint_age_async, 80_826_164 - 2_525_817);
        // Files too small for the reserved space: the server does not start.
        assert_eq!(LogAges::new(512 << 10, 2, 16384, 0), None);
        assert!(LogAges::new(1 << 20, 2, 16384, 0).is_some());
    }

    #[test]
    fn io_capacity_max_defaults_as_the_server_sets_it() {
        let mut p = FlushParams::default();
        assert_eq!(p.io_capacity_max(), 2000);
        p.io_capacity = 3000;
        assert_eq!(p.io_capacity_max(), 6000);
        p.io_capacity_max = 1000;
        assert_eq!(p.io_capacity_max(), 3000); // never below io_capacity
    }

    #[test]
    fn dirty_pressure_is_all_or_nothing_without_a_low_water_mark() {
        let mut p = FlushParams::default();
        assert_eq!(pct_for_dirty(&p, 0.0), 0);
        assert_eq!(pct_for_dirty(&p, 74.9), 0);
        assert_eq!(pct_for_dirty(&p, 75.0), 100);
        p.max_dirty_pages_pct_lwm = 10.0;
        assert_eq!(pct_for_dirty(&p, 9.0), 0);
        assert_eq!(pct_for_dirty(&p, 38.0), 50); // 3800 / 76
    }

    #[test]
    fn redo_pressure_grows_as_age_to_the_power_one_and_a_half() {
        let p = FlushParams::default();
        let l = default_log();
        // Below 10 % of the capacity: nothing.
        assert_eq!(pct_for_lsn(&p, &l, l.capacity / 10 - 1), 0);
        // At max_modified_age_async: (2000 / 200) x 100^1.5 / 7.5 = 1333.
        assert_eq!(pct_for_lsn(&p, &l, l.max_modified_age_async), 1333);
        // A quarter of that age: 10 x 25^1.5 / 7.5 = 166.
        assert_eq!(pct_for_lsn(&p, &l, l.max_modified_age_async / 4 + 1), 166);
        // Adaptive flushing off: nothing until max_modified_age_async.
        let off = FlushParams { adaptive_flushing: false, ..p };
        assert_eq!(pct_for_lsn(&off, &l, l.max_modified_age_async / 2), 0);
        assert_eq!(pct_for_lsn(&off, &l, l.max_modified_age_async), 1333);
    }

    #[test]
    fn the_recommendation_is_the_mean_of_three_capped_at_io_capacity_max() {
        let p = FlushParams::default();
        let l = default_log();
        let mut pc = PageCleaner::default();
        let at = |s: u64, lsn: u64, oldest: u64, last: u64| PassInput {
            now_s: s,
            lsn,
            oldest_lsn: oldest,
            dirty_pct: 10.0,
            last_pages: last,
        };
        // First pass: remembers, asks nothing.
        assert_eq!(pc.recommend(&p, &l, &at(1, 1_000, 1_000, 0), |_| 0), 0);
        // No new redo: nothing.
        assert_eq!(pc.recommend(&p, &l, &at(2, 1_000, 1_000, 0), |_| 0), 0);
        // A young log (no pressure), 300 pages old enough: (0 + 0 + 300/3) / 3 = 33.
        assert_eq!(pc.recommend(&p, &l, &at(3, 2_000, 1_000, 0), |_| 300), 33);
        // Past max_modified_age_async: 1333 % of 200 = 2666 pages, capped at 2000.
        let old = at(4, l.max_modified_age_async + 2_000, 1_000, 0);
        assert_eq!(pc.recommend(&p, &l, &old, |_| 1_000_000), 2000);
        // After flushing_avg_loops seconds the rates are averaged in: 30 passes that
        // flushed 100 pages each over 30 s give avg_page_rate (3000/30 + 0) / 2 = 50.
        let mut pc = PageCleaner::default();
        pc.recommend(&p, &l, &at(0, 1, 1, 0), |_| 0);
        let mut n = 0;
        for s in 1..=30 {
            n = pc.recommend(&p, &l, &at(s, 1 + s * 1000, 1, 100), |_| 0);
        }
        assert_eq!(pc.avg_page_rate, 50);
        assert_eq!(pc.lsn_avg_rate, 500); // (0 + 30000 / 30) / 2
        assert_eq!(n, (50 + 1) / 3);
    }
}
