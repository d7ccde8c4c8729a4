//! The batches that write and evict pages (LRU and flush list, with neighbours) and a user
//! thread's search for a free frame (`buf_LRU_get_free_block`), executed on the buffer
//! pool through [`PoolView`]. See the parent module's doc for the mechanism and sources.

use super::{flush_area, MariadbFlush, LRU_SEARCH_SCAN};
use crate::db::innodb::buffer_pool::{PageKey, BUF_LRU_MIN_LEN, BUF_LRU_OLD_MIN_LEN};

/// A cached page as the flushing sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// Not in the buffer pool.
    Absent,
    /// Clean (`oldest_modification` 0, or 1: written, still on the flush list): evictable.
    Clean,
    /// Dirty and idle (`oldest_modification` > 1, not I/O-fixed): can be written.
    Dirty,
    /// Being read or written, or fixed/latched by a thread: neither evicted nor written.
    Busy,
}

/// What the flushing needs of the buffer pool (the API buffer_pool.rs would grow: a dirty
/// bit and an I/O-fix per page, eviction of a given page, an LRU walk from the tail).
pub trait PoolView {
    /// `UT_LIST_GET_LEN(buf_pool.LRU)`.
    fn lru_len(&self) -> u64;
    /// `UT_LIST_GET_LEN(buf_pool.free)`.
    fn free_len(&self) -> u64;
    /// The page after `at` toward the LRU head, or the tail when `at` is None.
    fn lru_prev(&self, at: Option<PageKey>) -> Option<PageKey>;
    /// Whether a cached page is in the old sublist (None: not cached).
    fn is_old(&self, key: PageKey) -> Option<bool>;
    /// The page's state.
    fn page_state(&self, key: PageKey) -> PageState;
    /// `fil_space_t::last_page_number`: the last page of tablespace `space_id`.
    fn last_page_no(&self, space_id: u32) -> u64;
    /// `buf_LRU_free_page`: a clean page leaves the LRU list, its frame goes to the free
    /// list (and the page leaves the flush list if it was still on it).
    fn evict(&mut self, key: PageKey);
    /// `buf_page_t::flush`: a dirty page is write-fixed (Busy until its write completes,
    /// then Clean) and its write queued (doublewrite batch, or in place without it).
    fn write(&mut self, key: PageKey);
}

/// The answer to a user thread that needs a free frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreeBlock {
    /// Take a frame from the free list now. `signal`: wake the page cleaner
    /// (`page_cleaner_wakeup(true)`: the allocation left fewer than
    /// `innodb_lru_scan_depth / 2` free).
    Got {
        /// Interrupt the page cleaner's wait.
        signal: bool,
    },
    /// No frame: wait on `buf_pool.done_free` until a frame is freed or one second passes,
    /// then call [`MariadbFlush::after_wait`]. `signal`: wake the page cleaner.
    Wait {
        /// Interrupt the page cleaner's wait.
        signal: bool,
    },
}

impl MariadbFlush {
    /// `buf_LRU_get_free_block` for a thread that needs a frame: take one if the free list
    /// has any; else, if `try_LRU_scan` is set, evict the first clean page among the 100 at
    /// the LRU tail (resuming where the previous scan stopped if that page is young) and
    /// take its frame; else clear `try_LRU_scan` and wait. `cleaner_busy`: the page cleaner
    /// is running a pass (`page_cleaner_active()`), so it is not woken.
    pub fn get_free_block<V: PoolView>(&mut self, view: &mut V, cleaner_busy: bool) -> FreeBlock {
        if view.free_len() > 0 {
            return self.got_block(view, cleaner_busy);
        }
        if self.try_lru_scan {
            if self.scan_and_free(view, LRU_SEARCH_SCAN) && view.free_len() > 0 {
                return self.got_block(view, cleaner_busy);
            }
            self.try_lru_scan = false;
        }
        self.wait_round(cleaner_busy)
    }

    /// After a wait on `buf_pool.done_free` (a frame freed or one second passed): take a
    /// frame if there is one, else wait another round (the source does not scan the LRU
    /// list again in this call).
    pub fn after_wait<V: PoolView>(&mut self, view: &V, cleaner_busy: bool) -> FreeBlock {
        if view.free_len() > 0 {
            self.got_block(view, cleaner_busy)
        } else {
            self.wait_round(cleaner_busy)
        }
    }

    fn wait_round(&mut self, cleaner_busy: bool) -> FreeBlock {
        self.stats.buffer_pool_wait_free += 1;
        if !cleaner_busy {
            self.wake_for_lru();
        }
        FreeBlock::Wait { signal: !cleaner_busy }
    }

    /// `got_block`: the frame is taken; wake the page cleaner when fewer than half the
    /// scan depth stays free and the LRU list is longer than `BUF_LRU_MIN_LEN`.
    fn got_block<V: PoolView>(&mut self, view: &V, cleaner_busy: bool) -> FreeBlock {
        let available = view.free_len().saturating_sub(1);
        let signal = available < self.params.innodb_lru_scan_depth / 2
            && view.lru_len() > BUF_LRU_MIN_LEN as u64
            && !cleaner_busy;
        if signal {
            self.wake_for_lru();
        }
        FreeBlock::Got { signal }
    }

    /// `buf_LRU_free_from_common_LRU_list`: evict the first clean page among `limit` pages
    /// from where the scan iterator starts (`LRUItr::start`: the saved page if it is still
    /// cached and young, else the tail).
    fn scan_and_free<V: PoolView>(&mut self, view: &mut V, limit: u64) -> bool {
        let mut cur = match self.scan_cursor {
            Some(k) if view.is_old(k) == Some(false) => Some(k),
            _ => view.lru_prev(None),
        };
        let mut scanned = 0;
        while let Some(page) = cur {
            if scanned >= limit {
                break;
            }
            let prev = view.lru_prev(Some(page));
            self.scan_cursor = prev;
            if view.page_state(page) == PageState::Clean {
                view.evict(page);
                self.try_lru_scan = true;
                return true;
            }
            scanned += 1;
            cur = prev;
        }
        false
    }

    /// `buf_flush_LRU(max)`: an LRU batch of at most `max` writes; when the quota is used
    /// up, a second pass that only evicts. Updates `try_LRU_scan` and the counters; returns
    /// the pages written.
    pub fn lru_flush<V: PoolView>(&mut self, view: &mut V, max: u64) -> u64 {
        let (flushed, mut evicted) = self.lru_list_batch(view, max);
        if flushed >= max {
            evicted += self.lru_list_batch(view, 0).1;
        }
        if evicted > 0 {
            self.try_lru_scan = true;
        }
        self.stats.buffer_pool_pages_lru_flushed += flushed;
        self.stats.buffer_pool_pages_lru_freed += evicted;
        self.stats.buffer_pool_pages_flushed += flushed;
        self.cleaner.note_lru_pages(flushed);
        flushed
    }

    /// `buf_flush_LRU_list_batch`: (written, evicted).
    fn lru_list_batch<V: PoolView>(&mut self, view: &mut V, max: u64) -> (u64, u64) {
        let free_limit = self.params.innodb_lru_scan_depth;
        let neighbors =
            if view.lru_len() < BUF_LRU_OLD_MIN_LEN as u64 { 0 } else { self.params.innodb_flush_neighbors };
        // The LRU list's floor: BUF_LRU_MIN_LEN, lower for pools under about 80 MiB.
        let min_len = (self.pool_frames / 20).saturating_sub(1).min(BUF_LRU_MIN_LEN as u64);
        let (mut flushed, mut evicted) = (0u64, 0u64);
        // A view that loops cannot keep the batch going: at most one visit per page.
        let mut budget = view.lru_len();
        let mut cur = view.lru_prev(None);
        while let Some(page) = cur {
            if budget == 0 || view.lru_len() <= min_len || view.free_len() >= free_limit {
                break;
            }
            budget -= 1;
            let prev = view.lru_prev(Some(page));
            match view.page_state(page) {
                PageState::Clean => {
                    view.evict(page);
                    evicted += 1;
                }
                PageState::Dirty => {
                    if flushed >= max {
                        break;
                    }
                    if neighbors != 0 && self.rotational && view.free_len().saturating_mul(2) >= free_limit {
                        flushed += self.try_neighbors(view, page, neighbors == 1, flushed, max);
                    } else {
                        view.write(page);
                        flushed += 1;
                    }
                }
                PageState::Busy | PageState::Absent => {}
            }
            cur = prev;
        }
        (flushed, evicted)
    }

    /// `buf_do_flush_list_batch(max_n, lsn_limit)`: write dirty pages from the flush list's
    /// tail (`oldest_first`: (page, oldest_modification), oldest first) until `max_n` are
    /// written or a page's oldest modification reaches `lsn_limit`; pages in flight or
    /// already clean are passed over. Returns the pages written (neighbours included).
    pub fn flush_list_batch<V: PoolView, I: IntoIterator<Item = (PageKey, u64)>>(
        &mut self,
        view: &mut V,
        oldest_first: I,
        max_n: u64,
        lsn_limit: u64,
    ) -> u64 {
        let neighbors =
            if view.lru_len() < BUF_LRU_OLD_MIN_LEN as u64 { 0 } else { self.params.innodb_flush_neighbors };
        let mut count = 0;
        for (key, oldest) in oldest_first {
            if count >= max_n || oldest >= lsn_limit {
                break;
            }
            if view.page_state(key) != PageState::Dirty {
                continue;
            }
            if neighbors != 0 && self.rotational {
                count += self.try_neighbors(view, key, neighbors == 1, count, max_n);
            } else {
                view.write(key);
                count += 1;
            }
        }
        self.stats.buffer_pool_pages_flushed += count;
        count
    }

    /// `buf_flush_try_neighbors`: write `page` and the dirty pages around it in its aligned
    /// area (`contiguous`: only the unbroken run of dirty pages around it), lowest first,
    /// while `n_flushed` + written < `n_to_flush`; the page itself is always written.
    fn try_neighbors<V: PoolView>(
        &mut self,
        view: &mut V,
        page: PageKey,
        contiguous: bool,
        n_flushed: u64,
        n_to_flush: u64,
    ) -> u64 {
        let (space, no) = (page.space_id(), page.page_no());
        let key = |n: u64| PageKey((u64::from(space) << 32) | (n & 0xFFFF_FFFF));
        let area = flush_area(self.pool_frames);
        let mut low = no - no % area;
        // `high` is capped at the last page number, as the source does (the last page of a
        // file is never a neighbour).
        let mut high = low.saturating_add(area).min(view.last_page_no(space));
        if !contiguous {
            high = high.max(no + 1);
        } else {
            // buf_flush_check_neighbors: the run of dirty pages below and above.
            if no > low {
                let mut i = no - 1;
                loop {
                    if view.page_state(key(i)) != PageState::Dirty {
                        low = i + 1;
                        break;
                    }
                    if i == low {
                        break;
                    }
                    i -= 1;
                }
            }
            let mut i = no + 1;
            while i < high && view.page_state(key(i)) == PageState::Dirty {
                i += 1;
            }
            high = i;
        }
        high = high.min(u64::from(u32::MAX) + 1);
        let mut count = 0;
        let mut id = low;
        while id < high {
            if count + n_flushed >= n_to_flush {
                if id > no {
                    break;
                }
                // The page the batch chose is written whatever the quota.
                id = no;
            }
            if id == no || view.page_state(key(id)) == PageState::Dirty {
                view.write(key(id));
                count += 1;
            }
            id += 1;
        }
        count
    }
}
