//! A thread that needs a free frame (`buf_LRU_get_free_block`) with
//! `innodb_empty_free_list_algorithm` = backoff (it waits for the LRU manager, never scanning
//! or flushing) or legacy (MySQL 5.7's: scan the LRU tail, then write one page itself). See
//! the parent module's doc.

use super::{
    EmptyFreeListAlgorithm, Stats, FREE_LIST_BACKOFF_HIGH_PRIO_DIVIDER, FREE_LIST_BACKOFF_LOW_PRIO_DIVIDER,
    LEGACY_FREE_WAIT_US, MAX_FREE_LIST_BACKOFF_SLEEP_US,
};
use crate::db::innodb::buffer_pool::{PageKey, BUF_LRU_SEARCH_SCAN_THRESHOLD};
use crate::db::innodb::mariadb_flush::{PageState, PoolView};

/// One thread's search for a frame (the locals of `buf_LRU_get_free_block`): start one with
/// `FrameWaiter::default()` for each frame the thread needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameWaiter {
    /// `n_iterations`: rounds that found the free list empty and did not get a frame.
    pub n_iterations: u64,
    /// `flush_failures`: single-page flushes that found nothing to free (legacy).
    pub flush_failures: u64,
}

/// What the thread does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStep {
    /// A frame is on the free list: take it (`buf_LRU_get_free_only`).
    Take,
    /// Backoff: `sched_yield` this many times (`os_thread_yield`), then ask again.
    Yield {
        /// 2 for a user thread, 1 for a thread with `srv_current_thread_priority` set.
        times: u32,
    },
    /// Backoff: sleep this long (`os_thread_sleep`), then ask again.
    Sleep {
        /// Microseconds.
        us: u64,
    },
    /// Legacy, doublewrite on: an LRU batch of the instance is running; wait for its end
    /// (`buf_flush_wait_batch_end`), then ask again (the round is not counted).
    WaitLruBatchEnd,
    /// Legacy: look for a clean page to evict from the LRU tail
    /// (`buf_LRU_scan_and_free_block`: [`scan_and_free`] with `whole_list`), then call
    /// [`FreeFrames::after_scan`].
    ScanLru {
        /// Scan the whole LRU list (every round after the first), not only
        /// `BUF_LRU_SEARCH_SCAN_THRESHOLD` pages.
        whole_list: bool,
    },
    /// Legacy: sleep `sleep_first_us` (10 ms from the third round on), then write or free one
    /// page from the LRU tail ([`single_page_from_lru`]), then call
    /// [`FreeFrames::after_single_page_flush`] and ask again.
    SinglePageFlush {
        /// Microseconds to sleep first (0 in the first two rounds).
        sleep_first_us: u64,
    },
}

/// The sleep of a backoff round `n` (`n_iterations` before the round): None for the first
/// three (yields), else `2^i` µs with `i` = n − 3 for n < 6, 4 for n < 8, 5 for n < 11,
/// n − 5 after, capped at `MAX_FREE_LIST_BACKOFF_SLEEP` (10 ms) and divided by 100 for a
/// thread with priority (`buf_LRU_get_free_block`): 1, 2, 4, 16, 16, 32, 32, 32, 64, 128 …
/// 8192, then 10000 µs.
pub fn backoff_sleep_us(n: u64, high_priority: bool) -> Option<u64> {
    if n < 3 {
        return None;
    }
    let i = match n {
        3..=5 => n - 3,
        6..=7 => 4,
        8..=10 => 5,
        _ => n - 5,
    };
    let b = if i >= 63 {
        MAX_FREE_LIST_BACKOFF_SLEEP_US
    } else {
        (1u64 << i).min(MAX_FREE_LIST_BACKOFF_SLEEP_US)
    };
    let div =
        if high_priority { FREE_LIST_BACKOFF_HIGH_PRIO_DIVIDER } else { FREE_LIST_BACKOFF_LOW_PRIO_DIVIDER };
    Some(b / div)
}

/// The free-frame policy of an instance (or of the merged pool): the algorithm and the
/// instance's `try_LRU_scan` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeFrames {
    /// `innodb_empty_free_list_algorithm` as the server runs it.
    pub algorithm: EmptyFreeListAlgorithm,
    /// `innodb_doublewrite` (legacy waits for a running LRU batch only with it).
    pub doublewrite: bool,
    /// `buf_pool->try_LRU_scan`.
    pub try_lru_scan: bool,
}

impl FreeFrames {
    /// The policy for `algorithm` (already resolved) and `innodb_doublewrite`.
    pub fn new(algorithm: EmptyFreeListAlgorithm, doublewrite: bool) -> FreeFrames {
        FreeFrames { algorithm, doublewrite, try_lru_scan: true }
    }

    /// `buf_LRU_get_free_block` for a thread (`w`) of priority `high_priority`
    /// (`srv_current_thread_priority`: only master and purge threads with
    /// innodb_priority_master / innodb_priority_purge; user threads have none), with
    /// `free_len` frames on the free list and `lru_batch_running` (an LRU batch of the
    /// instance being put together, `init_flush[BUF_FLUSH_LRU]`: between `buf_flush_start`
    /// and `buf_flush_end`, before its writes complete; with batches run at one instant,
    /// false).
    ///
    /// Backoff (while the LRU manager threads run): every round that finds the free list
    /// empty yields (rounds 0-2) or sleeps ([`backoff_sleep_us`]), counts
    /// `Innodb_buffer_pool_wait_free`, and asks again: it never scans the LRU list, evicts or
    /// writes a page. Legacy: see [`FrameStep`].
    pub fn get_free_block(
        &mut self,
        w: &mut FrameWaiter,
        free_len: u64,
        lru_batch_running: bool,
        high_priority: bool,
        stats: &mut Stats,
    ) -> FrameStep {
        if free_len > 0 {
            return FrameStep::Take;
        }
        stats.lru_get_free_loops += 1;
        match self.algorithm {
            EmptyFreeListAlgorithm::Backoff => {
                let step = match backoff_sleep_us(w.n_iterations, high_priority) {
                    None => FrameStep::Yield { times: if high_priority { 1 } else { 2 } },
                    Some(us) => FrameStep::Sleep { us },
                };
                w.n_iterations += 1;
                stats.buffer_pool_wait_free += 1;
                step
            }
            EmptyFreeListAlgorithm::Legacy => {
                if lru_batch_running && self.doublewrite {
                    FrameStep::WaitLruBatchEnd
                } else if self.try_lru_scan || w.n_iterations > 0 {
                    FrameStep::ScanLru { whole_list: w.n_iterations > 0 }
                } else {
                    self.flush_step(w, stats)
                }
            }
        }
    }

    /// Legacy: the scan asked by [`FrameStep::ScanLru`] freed a frame (`freed`: take it, the
    /// answer is [`FrameStep::Take`]) or not (a failed first-round scan clears
    /// `try_LRU_scan`; then the single-page flush).
    pub fn after_scan(&mut self, w: &mut FrameWaiter, freed: bool, stats: &mut Stats) -> FrameStep {
        if freed {
            return FrameStep::Take;
        }
        if w.n_iterations == 0 {
            self.try_lru_scan = false;
        }
        self.flush_step(w, stats)
    }

    /// The step after a failed scan: the page cleaner is signalled (`buf_flush_event`: in
    /// Percona Server it does no LRU flushing, so this only cuts its sleep short), a 10 ms
    /// sleep from the third round on, then a single-page flush.
    fn flush_step(&mut self, w: &FrameWaiter, stats: &mut Stats) -> FrameStep {
        let sleep_first_us = if w.n_iterations > 1 {
            stats.lru_get_free_waits += 1;
            LEGACY_FREE_WAIT_US
        } else {
            0
        };
        FrameStep::SinglePageFlush { sleep_first_us }
    }

    /// Legacy: the single-page flush of [`FrameStep::SinglePageFlush`] freed a frame or
    /// issued a write (`freed`), or found nothing; the round is counted and the thread asks
    /// again.
    pub fn after_single_page_flush(&mut self, w: &mut FrameWaiter, freed: bool, stats: &mut Stats) {
        if !freed {
            w.flush_failures += 1;
            stats.lru_single_flush_failure_count += 1;
        }
        stats.buffer_pool_wait_free += 1;
        w.n_iterations += 1;
    }

    /// `buf_flush_end`: any batch of the instance ended; threads may scan again.
    pub fn batch_ended(&mut self) {
        self.try_lru_scan = true;
    }
}

/// `buf_LRU_free_from_common_LRU_list`: evict the first clean idle page among
/// `BUF_LRU_SEARCH_SCAN_THRESHOLD` pages from the LRU tail (every page with `whole_list`).
/// True if one was evicted.
pub fn scan_and_free<V: PoolView>(view: &mut V, whole_list: bool) -> bool {
    let limit = if whole_list { view.lru_len() } else { BUF_LRU_SEARCH_SCAN_THRESHOLD as u64 };
    let mut cur = view.lru_prev(None);
    let mut scanned = 0;
    while let Some(page) = cur {
        if scanned >= limit {
            break;
        }
        let prev = view.lru_prev(Some(page));
        if view.page_state(page) == PageState::Clean {
            view.evict(page);
            return true;
        }
        scanned += 1;
        cur = prev;
    }
    false
}

/// What a single-page flush did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinglePage {
    /// A clean page found first was evicted: its frame is free.
    Evicted(PageKey),
    /// A dirty page found first was write-fixed: the thread writes it in place and waits
    /// (synchronous `fil_io`), fsyncs its tablespace (`fil_flush`), then the page is freed
    /// (`buf_page_io_complete(bpage, true)`). Through the doublewrite buffer's
    /// single-page slots when `innodb_doublewrite` is on (not planned here).
    Written(PageKey),
    /// Nothing in the LRU list could be freed or written.
    Nothing,
}

/// `buf_flush_single_page_from_LRU`: from the LRU tail, the first clean idle page is evicted,
/// or the first dirty idle page written (whichever comes first).
pub fn single_page_from_lru<V: PoolView>(view: &mut V) -> SinglePage {
    let mut budget = view.lru_len();
    let mut cur = view.lru_prev(None);
    while let Some(page) = cur {
        if budget == 0 {
            break;
        }
        budget -= 1;
        let prev = view.lru_prev(Some(page));
        match view.page_state(page) {
            PageState::Clean => {
                view.evict(page);
                return SinglePage::Evicted(page);
            }
            PageState::Dirty => {
                view.write(page);
                return SinglePage::Written(page);
            }
            PageState::Busy | PageState::Absent => {}
        }
        cur = prev;
    }
    SinglePage::Nothing
}
