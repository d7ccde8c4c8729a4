//! The page cleaner thread of MariaDB 10.11 (`buf_flush_page_cleaner`): when it wakes,
//! what each pass does, and `page_cleaner_flush_pages_recommendation`. See the parent
//! module's doc for the mechanism, the sources and how a driver runs a pass.

use super::{LogLimits, MariadbFlush, Observation, Params, LSN_MAX, LSN_SCAN_FACTOR};
use crate::sim::time::{Nanos, SEC};

/// How the page cleaner waits at the top of its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Run a pass now (frames needed, or a furious flush asked).
    None,
    /// Until this time (one second after the previous pass began, or after a furious pass
    /// ended) or a signal.
    Until(Nanos),
    /// Until a signal (idle, with no `innodb_max_dirty_pages_pct_lwm` or no dirty page).
    Untimed,
}

/// Which branch of the loop a pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassKind {
    /// `buf_flush_sync_for_checkpoint`: furious flushing to `buf_flush_sync_lsn`.
    Furious,
    /// Frames needed: wait for the writes in flight, then an LRU batch only.
    LruOnly,
    /// `buf_flush_async_lsn` set: flush-list batch of `innodb_io_capacity_max` to it.
    Background,
    /// `innodb_adaptive_flushing` off, or the lwm's idle flushing: `innodb_io_capacity`.
    IoCapacity,
    /// `page_cleaner_flush_pages_recommendation`'s count.
    Adaptive,
    /// The recommendation asked nothing but frames are needed (or a target is pending):
    /// wait for the writes in flight, then an LRU batch.
    LruAfterNothing,
    /// Nothing to write; not idle.
    Nothing,
    /// Idle: a checkpoint attempt, then the untimed wait.
    Idle,
}

/// A flush-list batch: at most `max_pages` writes, pages older than `lsn_limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListBatch {
    /// Pages to write at most (neighbours count).
    pub max_pages: u64,
    /// Stop at a page whose oldest modification is at least this ([`LSN_MAX`]: none).
    pub lsn_limit: u64,
}

/// One pass of the page cleaner, in the order the driver executes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// The branch taken.
    pub kind: PassKind,
    /// Wait until no page write is in flight before the batches
    /// (`os_aio_wait_until_no_pending_writes`).
    pub wait_writes_first: bool,
    /// The flush-list batch, if any.
    pub flush_list: Option<ListBatch>,
    /// Run the LRU batch before the flush-list batch (furious flushing), not after.
    pub lru_first: bool,
    /// LRU batch: None, or the write quota; `lru_after_list` computes it from the pages the
    /// flush-list batch wrote.
    lru: Option<u64>,
    lru_after_list: bool,
    /// After the batches: wait for every write and fsync the data files (furious).
    pub sync_after: bool,
    /// End with `log_checkpoint` (fsync of the data files written, checkpoint write when
    /// the oldest modification moved).
    pub checkpoint: bool,
}

impl Pass {
    fn new(kind: PassKind) -> Pass {
        Pass {
            kind,
            wait_writes_first: false,
            flush_list: None,
            lru_first: false,
            lru: None,
            lru_after_list: false,
            sync_after: false,
            checkpoint: true,
        }
    }

    /// The LRU batch's write quota given the pages the flush-list batch wrote; None when
    /// the pass has no LRU batch. After a flush-list batch it is
    /// `max(innodb_io_capacity_max - written, min(innodb_io_capacity_max,
    /// innodb_lru_scan_depth))` (MDEV-36226).
    pub fn lru_max(&self, p: &Params, list_written: u64) -> Option<u64> {
        if self.lru_after_list {
            let io_max = p.io_capacity_max();
            Some(io_max.saturating_sub(list_written).max(io_max.min(p.innodb_lru_scan_depth)))
        } else {
            self.lru
        }
    }
}

/// The page cleaner's state: its targets, idleness, and the recommendation's averages
/// (the function's `static` variables and `lsn_avg_rate`).
#[derive(Debug, Clone, Default)]
pub struct CleanerState {
    /// `page_cleaner_idle()`.
    idle: bool,
    /// `abstime`: one second after the last pass began (a furious pass: ended).
    deadline: Nanos,
    /// The thread's `last_activity_count`.
    last_activity_count: u64,
    /// `buf_pool.last_activity_count` (`page_cleaner_wakeup`'s idle test).
    pool_last_activity_count: u64,
    /// `buf_flush_async_lsn`: background flushing target (0: none).
    async_lsn: u64,
    /// `buf_flush_sync_lsn`: furious flushing target (0: none).
    sync_lsn: u64,
    /// `last_pages`: pages written since the last adaptive batch (that batch's and every
    /// LRU batch's since).
    last_pages: u64,
    prev_lsn: u64,
    prev_time_s: u64,
    sum_pages: u64,
    avg_page_rate: u64,
    n_iterations: u64,
    lsn_avg_rate: u64,
}

impl CleanerState {
    /// `buf_flush_async_lsn`.
    pub fn async_lsn(&self) -> u64 {
        self.async_lsn
    }

    /// `buf_flush_sync_lsn`.
    pub fn sync_lsn(&self) -> u64 {
        self.sync_lsn
    }

    /// `page_cleaner_idle()`.
    pub fn idle(&self) -> bool {
        self.idle
    }

    /// The averaged page rate (`avg_page_rate`).
    pub fn avg_page_rate(&self) -> u64 {
        self.avg_page_rate
    }

    /// The averaged redo rate in bytes per second (`lsn_avg_rate`).
    pub fn lsn_avg_rate(&self) -> u64 {
        self.lsn_avg_rate
    }

    /// An adaptive flush batch (and the LRU batch after it) wrote `n` pages
    /// (`last_pages = n`).
    pub(super) fn set_last_pages(&mut self, n: u64) {
        self.last_pages = n;
    }

    /// An LRU batch wrote `n` pages (`last_pages += n`).
    pub(super) fn note_lru_pages(&mut self, n: u64) {
        self.last_pages = self.last_pages.saturating_add(n);
    }

    /// `page_cleaner_flush_pages_recommendation(last_pages, oldest_lsn, pct_lwm,
    /// dirty_blocks, dirty_pct)` at `o` (whole seconds of `o.now_ns` as `time()`).
    /// `pages_older_than(lsn)` counts the dirty pages whose oldest modification is at most
    /// `lsn`, from the flush list's tail.
    pub fn recommend(
        &mut self,
        p: &Params,
        log: &LogLimits,
        o: &Observation,
        pct_lwm: f64,
        pages_older_than: impl FnOnce(u64) -> u64,
    ) -> u64 {
        let cur_lsn = o.lsn;
        let pct_for_lsn = pct_for_lsn(p, log, cur_lsn.saturating_sub(o.oldest_lsn));
        let now_s = o.now_ns / SEC;
        let max_pct = p.innodb_max_dirty_pages_pct;
        let io_cap = p.io_capacity();
        let io_max = p.io_capacity_max();
        let dirty_pct = o.dirty_pct();
        if self.prev_lsn == 0 || pct_for_lsn == 0 {
            self.prev_time_s = now_s;
            self.prev_lsn = cur_lsn;
            let dirty = o.dirty_pages;
            if io_cap >= dirty {
                return dirty;
            }
            let ratio = if max_pct > 1.0 { dirty_pct / max_pct } else { dirty_pct };
            let n = (ratio * io_cap as f64) as u64;
            return if n < dirty { io_cap } else { io_max.min(dirty) };
        }
        self.sum_pages = self.sum_pages.saturating_add(self.last_pages);
        let elapsed = now_s.saturating_sub(self.prev_time_s).max(1);
        self.n_iterations += 1;
        if self.n_iterations >= p.innodb_flushing_avg_loops || elapsed >= p.innodb_flushing_avg_loops {
            self.avg_page_rate = (self.sum_pages / elapsed).saturating_add(self.avg_page_rate) / 2;
            let lsn_rate = cur_lsn.saturating_sub(self.prev_lsn) / elapsed;
            self.lsn_avg_rate = self.lsn_avg_rate / 2 + lsn_rate / 2 + (self.lsn_avg_rate & lsn_rate & 1);
            self.prev_lsn = cur_lsn;
            self.prev_time_s = now_s;
            self.n_iterations = 0;
            self.sum_pages = 0;
        }
        let total_ratio = if pct_lwm == 0.0 || max_pct == 0.0 {
            1.0
        } else {
            (pct_for_lsn as f64 / 100.0).max(dirty_pct / max_pct)
        };
        let target = o.oldest_lsn.saturating_add(self.lsn_avg_rate.saturating_mul(LSN_SCAN_FACTOR));
        let pages_for_lsn = (pages_older_than(target).min(io_max) / LSN_SCAN_FACTOR).max(1);
        let n = ((io_cap as f64 * total_ratio) as u64)
            .saturating_add(self.avg_page_rate)
            .saturating_add(pages_for_lsn)
            / 3;
        n.min(io_max)
    }
}

/// `af_get_pct_for_lsn`: percent of `innodb_io_capacity` a redo age of `age` asks for
/// (0 below `innodb_adaptive_flushing_lwm` % of the capacity).
pub fn pct_for_lsn(p: &Params, log: &LogLimits, age: u64) -> u64 {
    let af_lwm = (p.innodb_adaptive_flushing_lwm * log.log_capacity as f64 / 100.0) as u64;
    if age < af_lwm {
        return 0;
    }
    let factor = age.saturating_mul(100) / log.max_modified_age_async.max(1);
    // Integer product first, as in the source.
    let scaled = (p.io_capacity_max() / p.io_capacity()).saturating_mul(factor) as f64;
    (scaled * (factor as f64).sqrt() / 7.5) as u64
}

/// `af_needed_for_redo`: the redo age is past `innodb_adaptive_flushing_lwm` % of the
/// log capacity.
pub fn af_needed_for_redo(p: &Params, log: &LogLimits, lsn: u64, oldest_lsn: u64) -> bool {
    let af_lwm = (p.innodb_adaptive_flushing_lwm * log.log_capacity as f64 / 100.0) as u64;
    lsn.saturating_sub(oldest_lsn) > af_lwm
}

impl MariadbFlush {
    /// How the page cleaner waits at the top of its loop.
    pub fn wait(&self, o: &Observation) -> Wait {
        let c = &self.cleaner;
        if (c.sync_lsn != 0 && self.params.innodb_flush_sync) || self.need_lru_eviction(o.lru_len, o.free_len)
        {
            Wait::None
        } else if c.idle && (o.dirty_pages == 0 || self.params.innodb_max_dirty_pages_pct_lwm == 0.0) {
            Wait::Untimed
        } else {
            Wait::Until(c.deadline)
        }
    }

    /// `buf_pool_t::page_cleaner_wakeup(true)`: a thread needs frames; the page cleaner is
    /// no longer idle and its wait is interrupted.
    pub fn wake_for_lru(&mut self) {
        self.cleaner.idle = false;
    }

    /// `buf_pool_t::page_cleaner_wakeup(false)` at the end of a mini-transaction commit that
    /// added pages to the flush list (`mtr_t::commit`; `o` seen after them): true if the
    /// page cleaner was idle and is woken (dirty share at `innodb_max_dirty_pages_pct`, or
    /// past the lwm, or the lwm set and no commit since the last idle flush).
    pub fn on_page_dirtied(&mut self, o: &Observation) -> bool {
        let c = &mut self.cleaner;
        if !c.idle {
            return false;
        }
        let dirty_pct = o.dirty_pct();
        let lwm = self.params.innodb_max_dirty_pages_pct_lwm;
        let wake = (lwm != 0.0 && (lwm <= dirty_pct || c.pool_last_activity_count == o.activity_count))
            || self.params.innodb_max_dirty_pages_pct <= dirty_pct;
        if wake {
            c.idle = false;
        }
        wake
    }

    /// A commit ending at `commit_lsn` that [`log_close`](super::log_close) found past
    /// `max_modified_age_async` (`furious` false) or at `max_checkpoint_age` (true):
    /// `buf_flush_ahead(target, furious)` with `target = (commit_lsn -
    /// max_modified_age_async) & !1 | furious` (`log_close`'s answer: the furious flag in the
    /// low bit), which raises the background or furious target to it. True when the page
    /// cleaner is signalled: always for a furious target raised, for a background one only
    /// when the cleaner was idle (its timed one-second wait is not interrupted).
    pub fn flush_ahead(&mut self, commit_lsn: u64, furious: bool) -> bool {
        let target = (commit_lsn.saturating_sub(self.log.max_modified_age_async) & !1) | u64::from(furious);
        let c = &mut self.cleaner;
        let limit = if furious { &mut c.sync_lsn } else { &mut c.async_lsn };
        if *limit >= target {
            return false;
        }
        *limit = target;
        if furious || c.idle {
            c.idle = false;
            true
        } else {
            false
        }
    }

    /// `buf_flush_wait(lsn, false)` for a thread that must see every page older than `lsn`
    /// written (from `log_t::checkpoint_margin`): raises the furious target; true when raised
    /// (the page cleaner is woken). The thread then waits until the oldest modification
    /// reaches `lsn` (the page cleaner broadcasts at the end of each furious pass, after its
    /// checkpoint). The server sets nothing when the oldest modification is already at
    /// `lsn`: call this only when it is below.
    pub fn wait_flushed(&mut self, lsn: u64) -> bool {
        let c = &mut self.cleaner;
        if c.sync_lsn < lsn {
            c.sync_lsn = lsn;
            c.idle = false;
            true
        } else {
            false
        }
    }

    /// One pass of `buf_flush_page_cleaner` after its wait, at `o`: the branch and its
    /// batches. `pages_older_than` is the recommendation's flush-list count (see
    /// [`CleanerState::recommend`]).
    pub fn begin_pass(&mut self, o: &Observation, pages_older_than: impl FnOnce(u64) -> u64) -> Pass {
        let p = self.params;
        let io_max = p.io_capacity_max();
        self.cleaner.deadline = o.now_ns.saturating_add(SEC);
        let need_lru = self.need_lru_eviction(o.lru_len, o.free_len);
        if self.cleaner.sync_lsn != 0 && p.innodb_flush_sync {
            // buf_flush_sync_for_checkpoint.
            self.cleaner.last_pages = 0;
            let mut pass = Pass::new(PassKind::Furious);
            if need_lru {
                self.cleaner.idle = false;
                pass.lru = Some(p.io_capacity());
                pass.lru_first = true;
            }
            pass.flush_list = Some(ListBatch { max_pages: io_max, lsn_limit: self.cleaner.sync_lsn });
            pass.sync_after = true;
            return pass;
        }
        let oldest = o.oldest_lsn;
        if oldest == 0 {
            // fully_unemployed.
            self.cleaner.sync_lsn = 0;
            self.cleaner.idle = true;
            if !need_lru {
                return Pass::new(PassKind::Idle);
            }
        }
        let mut soft = self.cleaner.async_lsn;
        let sync = self.cleaner.sync_lsn;
        if sync != 0 {
            // innodb_flush_sync=OFF: the furious target is a background one.
            if oldest >= sync {
                self.cleaner.sync_lsn = 0;
            } else if sync > soft {
                soft = sync;
            }
        }
        if soft != 0 {
            if oldest >= soft {
                self.cleaner.async_lsn = 0;
                soft = 0;
            }
        } else if need_lru {
            self.cleaner.idle = false;
            let mut pass = Pass::new(PassKind::LruOnly);
            pass.wait_writes_first = true;
            pass.lru = Some(io_max);
            return pass;
        }
        let dirty_pct = o.dirty_pct();
        let mut pct_lwm = p.innodb_max_dirty_pages_pct_lwm;
        let idle_now = |fl: &mut MariadbFlush, soft: u64| {
            if soft == 0 && !af_needed_for_redo(&p, &fl.log, o.lsn, oldest) {
                fl.cleaner.idle = true;
                true
            } else {
                false
            }
        };
        if pct_lwm != 0.0 {
            let c = &mut self.cleaner;
            if o.activity_count == c.last_activity_count && c.idle && !o.pending_reads {
                // No commit since the last pass, idle, no reads: idle flushing.
                c.pool_last_activity_count = o.activity_count;
                let mut pass = Pass::new(PassKind::IoCapacity);
                pass.flush_list = Some(ListBatch { max_pages: p.io_capacity(), lsn_limit: LSN_MAX });
                pass.lru_after_list = true;
                return pass;
            }
            c.last_activity_count = o.activity_count;
            if dirty_pct < pct_lwm {
                pct_lwm = 0.0;
                if idle_now(self, soft) {
                    return Pass::new(PassKind::Idle);
                }
            }
        } else if dirty_pct < p.innodb_max_dirty_pages_pct && idle_now(self, soft) {
            return Pass::new(PassKind::Idle);
        }
        self.cleaner.idle = false;
        let mut pass = if soft != 0 {
            let mut pass = Pass::new(PassKind::Background);
            pass.flush_list = Some(ListBatch { max_pages: io_max, lsn_limit: soft });
            pass
        } else if !p.innodb_adaptive_flushing {
            let mut pass = Pass::new(PassKind::IoCapacity);
            pass.flush_list = Some(ListBatch { max_pages: p.io_capacity(), lsn_limit: LSN_MAX });
            pass
        } else {
            let log = self.log;
            let n = self.cleaner.recommend(&p, &log, o, pct_lwm, pages_older_than);
            if n != 0 {
                let mut pass = Pass::new(PassKind::Adaptive);
                pass.flush_list = Some(ListBatch { max_pages: n, lsn_limit: LSN_MAX });
                pass
            } else if self.cleaner.async_lsn <= oldest && !need_lru {
                return Pass::new(PassKind::Nothing);
            } else {
                let mut pass = Pass::new(PassKind::LruAfterNothing);
                pass.wait_writes_first = true;
                pass
            }
        };
        pass.lru_after_list = true;
        pass
    }

    /// The end of a pass: `n_list` and `n_lru` pages written by its batches, `o` seen after
    /// them (the oldest modification). Resets the targets reached and the idle state
    /// (`check_oldest_and_set_idle`, or the furious flush's end).
    pub fn end_pass(&mut self, pass: &Pass, o: &Observation, n_list: u64, n_lru: u64) {
        let c = &mut self.cleaner;
        match pass.kind {
            PassKind::Furious => {
                // buf_flush_page_cleaner: set_timespec(abstime, 1) after the furious flush.
                c.deadline = o.now_ns.saturating_add(SEC);
                c.last_pages = 0;
                let measure = if o.oldest_lsn == 0 { LSN_MAX } else { o.oldest_lsn };
                if measure >= c.sync_lsn {
                    c.sync_lsn = 0;
                } else if measure >= c.async_lsn {
                    c.async_lsn = 0;
                }
            }
            PassKind::Idle => {}
            kind => {
                if kind == PassKind::Adaptive {
                    // last_pages = the flush-list batch's pages; the LRU batch's were added
                    // by lru_flush before this.
                    c.set_last_pages(n_list.saturating_add(n_lru));
                }
                if o.oldest_lsn == 0 {
                    c.sync_lsn = 0;
                    c.idle = true;
                } else {
                    if o.oldest_lsn >= c.async_lsn {
                        c.async_lsn = 0;
                    }
                    c.idle = false;
                }
            }
        }
    }
}
