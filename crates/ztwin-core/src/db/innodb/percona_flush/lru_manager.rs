//! The LRU manager thread of one buffer pool instance (`buf_lru_manager`): when it runs,
//! how its sleep adapts to the free list, and the LRU batch it runs each time
//! (`buf_flush_LRU_list` → `buf_do_LRU_batch` → `buf_flush_LRU_list_batch`). See the parent
//! module's doc for the mechanism, the sources and how a driver runs it.

use super::batch::{try_neighbors, FlushKind, Neighbours};
use super::{Resolved, CLEANER_MAX_LRU_TIME_MS};
use crate::db::innodb::buffer_pool::BUF_LRU_MIN_LEN;
use crate::db::innodb::mariadb_flush::{PageState, PoolView};
use crate::sim::time::{Nanos, MS, SEC};

/// `buf_lru_manager_adapt_sleep_time`: the next sleep (ms) of an instance's LRU manager from
/// its free list (`free_len`), its LRU list (`lru_len`), `innodb_lru_scan_depth`, the pages
/// its last batch wrote or evicted (`last_processed`, `lru_n_flushed`) and the current sleep.
///
/// With `max_free = min(lru_len, innodb_lru_scan_depth)` (integer divisions, as the source):
/// under 1 % of it free after a batch that did something: no sleep; over 20 % free, or under
/// 1 % after a batch that did nothing: one millisecond more (at most
/// `srv_cleaner_max_lru_time`, 1000); under 5 % with at least 50 ms of sleep: 50 ms less;
/// otherwise unchanged.
pub fn adapt_sleep_time(
    free_len: u64,
    lru_len: u64,
    lru_scan_depth: u64,
    last_processed: u64,
    sleep_ms: u64,
) -> u64 {
    let max_free = lru_len.min(lru_scan_depth);
    if free_len < max_free / 100 && last_processed > 0 {
        0
    } else if free_len > max_free / 5 || (free_len < max_free / 100 && last_processed == 0) {
        (sleep_ms + 1).min(CLEANER_MAX_LRU_TIME_MS)
    } else if free_len < max_free / 20 && sleep_ms >= 50 {
        sleep_ms - 50
    } else {
        sleep_ms
    }
}

/// The limits of one LRU batch (`buf_flush_LRU_list` and the loop of
/// `buf_flush_LRU_list_batch`), for `fold` instances at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LruBatch {
    /// Pages to write or evict at most: `min(innodb_lru_scan_depth, LRU length)` per instance
    /// (`scan_depth`, the batch's `max`).
    pub max: u64,
    /// The batch stops once this many frames are free (`srv_LRU_scan_depth` per instance).
    pub free_target: u64,
    /// The batch stops once the LRU list is this short (`BUF_LRU_MIN_LEN` per instance).
    pub lru_min: u64,
    /// Instances the batch stands for (1 per instance; all of them in the merged mode).
    pub fold: u64,
}

/// What an LRU batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LruBatchResult {
    /// Pages whose write it queued (neighbours included): each is freed when its write
    /// completes (`buf_page_io_complete` evicts pages of `BUF_FLUSH_LRU` writes).
    pub written: u64,
    /// Clean pages it moved to the free list.
    pub evicted: u64,
    /// Pages of the LRU list it looked at.
    pub scanned: u64,
}

impl LruBatchResult {
    /// `n_processed` of `buf_flush_do_batch`: written plus evicted (the LRU manager's
    /// `lru_n_flushed`, and what it adds to `Innodb_buffer_pool_pages_flushed`).
    pub fn processed(&self) -> u64 {
        self.written + self.evicted
    }
}

/// The state of one LRU manager thread (the loop's locals in `buf_lru_manager`), or of all
/// of them at once in the merged mode (`fold` instances, see the parent module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LruManager {
    /// `lru_sleep_time` (ms): 1000 at start.
    pub sleep_ms: u64,
    /// `lru_n_flushed`: pages the last batch wrote or evicted (1 before the first batch).
    pub last_processed: u64,
    /// `next_loop_time`.
    next_loop_ns: Nanos,
    /// Instances this manager stands for.
    fold: u64,
}

impl LruManager {
    /// The thread started at `now` (`buf_lru_manager`: sleep 1000 ms, first loop one
    /// second after the start), standing for `fold` instances.
    pub fn new(now: Nanos, fold: u64) -> LruManager {
        LruManager { sleep_ms: 1000, last_processed: 1, next_loop_ns: now + SEC, fold: fold.max(1) }
    }

    /// Instances this manager stands for.
    pub fn fold(&self) -> u64 {
        self.fold
    }

    /// `buf_lru_manager_sleep_if_needed`: when the thread, done with its last batch at
    /// `now`, starts its next iteration: `next_loop_time` if that is ahead (at most one
    /// second ahead), else now. Nothing wakes it earlier: it sleeps on a timer, not an event.
    pub fn wake_at(&self, now: Nanos) -> Nanos {
        if self.next_loop_ns > now {
            now + (self.next_loop_ns - now).min(SEC)
        } else {
            now
        }
    }

    /// An iteration starting at `now` with `free_len` frames free and `lru_len` pages in the
    /// LRU list (of the instances it stands for): the sleep adapted to them, the next
    /// iteration's time set (`now` + the sleep: the batch's time counts against it), and the
    /// batch's limits.
    pub fn begin(&mut self, r: &Resolved, now: Nanos, free_len: u64, lru_len: u64) -> LruBatch {
        let depth = r.p.innodb_lru_scan_depth;
        let fold = self.fold;
        self.sleep_ms =
            adapt_sleep_time(free_len / fold, lru_len / fold, depth, self.last_processed, self.sleep_ms);
        self.next_loop_ns = now + self.sleep_ms * MS;
        LruBatch {
            max: fold * depth.min(lru_len / fold),
            free_target: fold * depth,
            lru_min: fold * BUF_LRU_MIN_LEN as u64,
            fold,
        }
    }

    /// The iteration's batch is done (its writes completed: `buf_flush_wait_batch_end`).
    pub fn end(&mut self, done: &LruBatchResult) {
        self.last_processed = done.processed();
    }
}

/// `buf_flush_LRU_list_batch`: from the LRU tail, while fewer than `b.max` pages were written
/// or evicted, fewer than `b.free_target` frames are free and the LRU list is longer than
/// `b.lru_min`: a clean idle page is evicted to the free list; a dirty idle page is written
/// with its neighbours (`buf_flush_page_and_try_neighbors`, counted against `b.max`); a busy
/// one is passed over. The walk goes on from the page that preceded the one handled (the
/// hazard pointer `lru_hp`).
pub fn lru_list_batch<V: PoolView>(view: &mut V, b: &LruBatch, nb: &Neighbours) -> LruBatchResult {
    let mut res = LruBatchResult::default();
    // A view that loops cannot keep the batch going: at most one visit per page.
    let mut budget = view.lru_len();
    let mut cur = view.lru_prev(None);
    while let Some(page) = cur {
        if res.processed() >= b.max
            || view.free_len() >= b.free_target
            || view.lru_len() <= b.lru_min
            || budget == 0
        {
            break;
        }
        budget -= 1;
        res.scanned += 1;
        let prev = view.lru_prev(Some(page));
        match view.page_state(page) {
            PageState::Clean => {
                view.evict(page);
                res.evicted += 1;
            }
            PageState::Dirty => {
                res.written += try_neighbors(view, page, FlushKind::Lru, res.written, b.max, nb, b.fold);
            }
            PageState::Busy | PageState::Absent => {}
        }
        cur = prev;
    }
    res
}
