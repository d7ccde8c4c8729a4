//! The page cleaner of Percona Server 5.7 (`buf_flush_page_cleaner_coordinator` and its
//! workers): flush-list flushing only, `page_cleaner_flush_pages_recommendation` with
//! `innodb_cleaner_lsn_age_factor`, the per-instance split of `pc_request`, and the sync
//! flush a thread past `max_modified_age_sync` asks for. See the parent module's doc.

use super::{LsnAgeFactor, Resolved, LSN_MAX, LSN_SCAN_FACTOR, MAX_BUFFER_POOLS};
use crate::db::innodb::page_cleaner::LogAges;
use crate::sim::time::{Nanos, SEC};

/// What the page cleaner reads when it decides (dirty reads of the lists, as the source's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CleanerObs {
    /// Simulated time.
    pub now_ns: Nanos,
    /// `log_get_lsn()`.
    pub lsn: u64,
    /// `buf_pool_get_oldest_modification()`: the smallest oldest modification over the
    /// instances' flush lists, 0 when no page is dirty.
    pub oldest_lsn: u64,
    /// Dirty pages (the flush lists' lengths).
    pub dirty_pages: u64,
    /// Pages in the LRU lists.
    pub lru_len: u64,
    /// Frames on the free lists.
    pub free_len: u64,
    /// `srv_get_activity_count()`: row changes and commits so far (any counter that moves
    /// with them).
    pub activity_count: u64,
    /// `buf_get_n_pending_read_ios() > 0`.
    pub pending_reads: bool,
}

impl CleanerObs {
    /// `buf_get_modified_ratio_pct`: `100 * dirty / (1 + LRU + free)`.
    pub fn dirty_pct(&self) -> f64 {
        (100 * self.dirty_pages) as f64 / (1 + self.lru_len + self.free_len) as f64
    }
}

/// `af_get_pct_for_dirty`: percent of innodb_io_capacity the dirty share asks for: 100 at
/// `innodb_max_dirty_pages_pct` when no low-water mark is set, else `dirty * 100 /
/// (max_pct + 1)` from the mark on.
pub fn pct_for_dirty(r: &Resolved, dirty_pct: f64) -> u64 {
    let max = r.p.innodb_max_dirty_pages_pct;
    if dirty_pct == 0.0 {
        0
    } else if r.max_dirty_pages_pct_lwm == 0.0 {
        if dirty_pct >= max {
            100
        } else {
            0
        }
    } else if dirty_pct >= r.max_dirty_pages_pct_lwm {
        ((dirty_pct * 100.0) / (max + 1.0)) as u64
    } else {
        0
    }
}

/// `af_get_pct_for_lsn`: percent of innodb_io_capacity a redo age of `age` asks for. None
/// below `innodb_adaptive_flushing_lwm` % of the log capacity (or below
/// `max_modified_age_async` with adaptive flushing off). Else, with `f = age * 100 /
/// max_modified_age_async` (integer) and `ratio = io_capacity_max / io_capacity` (integer
/// division): `ratio * f^1.5 / 7.5` (legacy, MySQL's) or `ratio * f^2.5 / 700.5`
/// (high_checkpoint). The two meet at f = 700.5 / 7.5 ≈ 93: below, high_checkpoint asks
/// less; above, more.
pub fn pct_for_lsn(r: &Resolved, log: &LogAges, age: u64) -> u64 {
    let lwm = r.p.innodb_adaptive_flushing_lwm * log.capacity / 100;
    if age < lwm {
        return 0;
    }
    let max_async = log.max_modified_age_async.max(1);
    if age < max_async && !r.p.innodb_adaptive_flushing {
        return 0;
    }
    let f = age.saturating_mul(100) / max_async;
    let ratio = (r.io_capacity_max / r.io_capacity.max(1)) as f64;
    let ff = f as f64;
    match r.p.innodb_cleaner_lsn_age_factor {
        LsnAgeFactor::Legacy => (ratio * (ff * ff.sqrt()) / 7.5) as u64,
        LsnAgeFactor::HighCheckpoint => (ratio * ((f.saturating_mul(f)) as f64 * ff.sqrt()) / 700.5) as u64,
    }
}

/// What one recommendation asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recommendation {
    /// Pages to flush in all (`n_pages`), at most `innodb_io_capacity_max`.
    pub n_pages: u64,
    /// `slots[i].n_pages_requested`: the pages asked of each instance; the first
    /// `instances` are valid.
    pub per_instance: [u64; MAX_BUFFER_POOLS],
    /// Instances.
    pub instances: usize,
    /// `af_get_pct_for_dirty` and `af_get_pct_for_lsn` of this pass.
    pub pct_for_dirty: u64,
    /// See `pct_for_dirty`.
    pub pct_for_lsn: u64,
    /// `sum_pages_for_lsn` (divided by the scan factor, at least 1).
    pub pages_for_lsn: u64,
}

impl Recommendation {
    fn none(instances: usize) -> Recommendation {
        Recommendation {
            n_pages: 0,
            per_instance: [0; MAX_BUFFER_POOLS],
            instances,
            pct_for_dirty: 0,
            pct_for_lsn: 0,
            pages_for_lsn: 0,
        }
    }

    /// The pages asked of all instances (the sum of `per_instance`).
    pub fn requested(&self) -> u64 {
        self.per_instance[..self.instances].iter().fold(0u64, |a, &n| a.saturating_add(n))
    }
}

/// The recommendation's state (the function's `static` variables and `lsn_avg_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recommender {
    prev_lsn: u64,
    prev_time_s: u64,
    sum_pages: u64,
    /// `avg_page_rate`.
    pub avg_page_rate: u64,
    n_iterations: u64,
    /// `lsn_avg_rate` (also used by `buf_flush_request_force`).
    pub lsn_avg_rate: u64,
}

impl Recommender {
    /// `page_cleaner_flush_pages_recommendation(lsn_limit, last_pages_in)` of Percona Server
    /// 5.7. `pages_for_lsn(target, counts)` fills `counts[i]` with the dirty pages of
    /// instance `i` whose oldest modification is at most `target` (each flush list scanned
    /// from its tail).
    ///
    /// The rates are averaged every `innodb_flushing_avg_loops` passes or seconds. Then
    /// `n_pages = PCT_IO(max(pct_for_dirty, pct_for_lsn))`; below `max_modified_age_async` of
    /// redo age it is averaged with `avg_page_rate` and `min(pages_for_lsn, 2 *
    /// io_capacity_max)` (MySQL always averages; Percona Server does not past that age); at
    /// most `innodb_io_capacity_max`. Each instance is asked `n_pages / instances`, or, when
    /// `pct_for_lsn > 30`, its share of the pages old enough: `(count / 3 + 1) * n_pages /
    /// pages_for_lsn + 1`.
    pub fn recommend(
        &mut self,
        r: &Resolved,
        log: &LogAges,
        obs: &CleanerObs,
        last_pages_in: u64,
        mut pages_for_lsn: impl FnMut(u64, &mut [u64]),
    ) -> Recommendation {
        let n_inst = (r.instances as usize).clamp(1, MAX_BUFFER_POOLS);
        let cur_lsn = obs.lsn;
        let now_s = obs.now_ns / SEC;
        if self.prev_lsn == 0 {
            self.prev_lsn = cur_lsn;
            self.prev_time_s = now_s;
            return Recommendation::none(n_inst);
        }
        if self.prev_lsn == cur_lsn {
            return Recommendation::none(n_inst);
        }
        self.sum_pages = self.sum_pages.saturating_add(last_pages_in);
        let mut elapsed = now_s.saturating_sub(self.prev_time_s);
        self.n_iterations += 1;
        let loops = r.p.innodb_flushing_avg_loops;
        if self.n_iterations >= loops || elapsed >= loops {
            elapsed = elapsed.max(1);
            self.avg_page_rate =
                ((self.sum_pages as f64 / elapsed as f64) + self.avg_page_rate as f64) as u64 / 2;
            let lsn_rate = (cur_lsn.saturating_sub(self.prev_lsn) as f64 / elapsed as f64) as u64;
            self.lsn_avg_rate = (self.lsn_avg_rate + lsn_rate) / 2;
            self.prev_lsn = cur_lsn;
            self.prev_time_s = now_s;
            self.n_iterations = 0;
            self.sum_pages = 0;
        }
        let age = cur_lsn.saturating_sub(obs.oldest_lsn);
        let pct_dirty = pct_for_dirty(r, obs.dirty_pct());
        let pct_lsn = pct_for_lsn(r, log, age);
        let pct_total = pct_dirty.max(pct_lsn);
        let target = obs.oldest_lsn.saturating_add(self.lsn_avg_rate.saturating_mul(LSN_SCAN_FACTOR));
        let mut rec = Recommendation::none(n_inst);
        let counts = &mut rec.per_instance[..n_inst];
        pages_for_lsn(target, counts);
        let mut sum = 0u64;
        for c in counts.iter_mut() {
            sum = sum.saturating_add(*c);
            *c = *c / LSN_SCAN_FACTOR + 1;
        }
        let sum = (sum / LSN_SCAN_FACTOR).max(1);
        let mut n_pages = r.pct_io(pct_total);
        if age < log.max_modified_age_async {
            let for_lsn = sum.min(r.io_capacity_max.saturating_mul(2));
            n_pages = n_pages.saturating_add(self.avg_page_rate).saturating_add(for_lsn) / 3;
        }
        let n_pages = n_pages.min(r.io_capacity_max);
        for c in counts.iter_mut() {
            *c = if pct_lsn > 30 { c.saturating_mul(n_pages) / sum + 1 } else { n_pages / n_inst as u64 };
        }
        rec.n_pages = n_pages;
        rec.pct_for_dirty = pct_dirty;
        rec.pct_for_lsn = pct_lsn;
        rec.pages_for_lsn = sum;
        if n_pages == 0 {
            // pc_request(0): no slot flushes.
            rec.per_instance = [0; MAX_BUFFER_POOLS];
        }
        rec
    }
}

/// How the coordinator waits at the top of its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanerWait {
    /// Until this time (`next_loop_time`: one second after the previous timed pass) or a
    /// signal (`buf_flush_event`: a sync flush request, or a legacy thread short of frames).
    Until(Nanos),
    /// No sleep: the server is idle, no read is pending and the last pass flushed pages.
    Now,
}

/// Which branch of the coordinator's loop a pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassKind {
    /// Woken by a signal with a sync flush asked (`innodb_flush_sync`): every instance
    /// flushes all pages older than the target.
    Sync,
    /// Active server, timed pass: the recommendation.
    Adaptive,
    /// Active server woken before its time: `pc_request(0)`, nothing flushed.
    ActiveWoken,
    /// Idle server, timed pass: `buf_flush_lists(PCT_IO(100), LSN_MAX)`,
    /// `ceil(innodb_io_capacity / instances)` pages per instance.
    Idle,
    /// Idle server woken before its time: nothing.
    Nothing,
}

/// One pass of the page cleaner: per instance, a flush-list batch of at most
/// `per_instance[i]` pages older than `lsn_limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanerPass {
    /// The branch.
    pub kind: PassKind,
    /// Pages asked of each instance (`u64::MAX`: all older than `lsn_limit`); the first
    /// `instances` are valid.
    pub per_instance: [u64; MAX_BUFFER_POOLS],
    /// Instances.
    pub instances: usize,
    /// Pages older than this only ([`LSN_MAX`]: no limit).
    pub lsn_limit: u64,
    /// The recommendation, for an adaptive pass.
    pub rec: Option<Recommendation>,
}

impl CleanerPass {
    /// The pages asked of all instances (saturating: a sync pass asks everything).
    pub fn requested(&self) -> u64 {
        self.per_instance[..self.instances].iter().fold(0u64, |a, &n| a.saturating_add(n))
    }

    /// Instances with a batch to run (each ends with its own `buf_flush_end`).
    pub fn batches(&self) -> usize {
        self.per_instance[..self.instances].iter().filter(|&&n| n > 0).count()
    }
}

/// The coordinator thread's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coordinator {
    /// The recommendation's state.
    pub rec: Recommender,
    next_loop_ns: Nanos,
    last_activity: u64,
    last_pages: u64,
    n_flushed: u64,
    /// `buf_flush_sync_lsn`: 0 when no sync flush is asked.
    pub sync_lsn: u64,
    /// Whether the pass in progress is a timed one (`ret_sleep == OS_SYNC_TIME_EXCEEDED`).
    timed: bool,
}

impl Coordinator {
    /// The coordinator started at `now`: its first timed pass one second later.
    pub fn new(now: Nanos) -> Coordinator {
        Coordinator {
            rec: Recommender::default(),
            next_loop_ns: now + SEC,
            last_activity: 0,
            last_pages: 0,
            n_flushed: 0,
            sync_lsn: 0,
            timed: false,
        }
    }

    /// The top of the loop: it sleeps until `next_loop_time` (or a signal) when the server
    /// was active since the last timed pass, a read is pending, or the last pass flushed
    /// nothing; else it runs again at once.
    pub fn wait(&self, obs: &CleanerObs) -> CleanerWait {
        if obs.activity_count != self.last_activity || obs.pending_reads || self.n_flushed == 0 {
            CleanerWait::Until(self.next_loop_ns.max(obs.now_ns))
        } else {
            CleanerWait::Now
        }
    }

    /// `buf_flush_request_force(lsn_limit)`: a sync flush to `lsn_limit + 3 * lsn_avg_rate`
    /// (kept if a higher one is pending); the caller signals the coordinator.
    pub fn request_sync(&mut self, lsn_limit: u64) {
        let target = if lsn_limit == LSN_MAX {
            LSN_MAX
        } else {
            lsn_limit.saturating_add(self.rec.lsn_avg_rate.saturating_mul(3))
        };
        self.sync_lsn = self.sync_lsn.max(target);
    }

    /// The pass starting at `obs.now_ns` (timed when `next_loop_time` is reached; a signal
    /// brings it earlier). `pages_for_lsn` as for [`Recommender::recommend`].
    pub fn begin_pass(
        &mut self,
        r: &Resolved,
        log: &LogAges,
        obs: &CleanerObs,
        pages_for_lsn: impl FnMut(u64, &mut [u64]),
    ) -> CleanerPass {
        let n_inst = (r.instances as usize).clamp(1, MAX_BUFFER_POOLS);
        let timed = obs.now_ns >= self.next_loop_ns;
        self.timed = timed;
        if timed {
            self.next_loop_ns = obs.now_ns + SEC;
        }
        let mut pass = CleanerPass {
            kind: PassKind::Nothing,
            per_instance: [0; MAX_BUFFER_POOLS],
            instances: n_inst,
            lsn_limit: LSN_MAX,
            rec: None,
        };
        if !timed && r.p.innodb_flush_sync && self.sync_lsn > 0 {
            pass.kind = PassKind::Sync;
            pass.lsn_limit = std::mem::take(&mut self.sync_lsn);
            pass.per_instance[..n_inst].fill(u64::MAX);
        } else if obs.activity_count != self.last_activity {
            if timed {
                self.last_activity = obs.activity_count;
                let rec = self.rec.recommend(r, log, obs, self.last_pages, pages_for_lsn);
                pass.per_instance = rec.per_instance;
                pass.rec = Some(rec);
                pass.kind = PassKind::Adaptive;
            } else {
                pass.kind = PassKind::ActiveWoken;
            }
        } else if timed {
            pass.kind = PassKind::Idle;
            // buf_flush_lists: min_n spread evenly, rounded up.
            let per = r.pct_io(100).div_ceil(n_inst as u64);
            pass.per_instance[..n_inst].fill(per);
        }
        pass
    }

    /// The pass's batches wrote `n_flushed_list` pages in all.
    pub fn end_pass(&mut self, pass: &CleanerPass, n_flushed_list: u64) {
        match pass.kind {
            PassKind::Sync | PassKind::Idle => self.n_flushed = n_flushed_list,
            PassKind::Adaptive | PassKind::ActiveWoken => {
                if self.timed {
                    self.last_pages = n_flushed_list;
                }
                self.n_flushed = n_flushed_list;
            }
            // "no activity, but woken up by event": n_flushed = 0, so the next wait sleeps.
            PassKind::Nothing => self.n_flushed = 0,
        }
    }
}
