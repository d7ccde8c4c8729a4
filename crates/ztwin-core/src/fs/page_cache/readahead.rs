//! Buffered reads and readahead (mm/filemap.c `filemap_read`, `filemap_get_pages`;
//! mm/readahead.c; see the module doc of [`super`]).

use super::lru::{F_READAHEAD, F_WRITEBACK, PENDING};
use super::*;

/// `force_page_cache_ra`'s chunk: 2 MiB of pages.
const FORCE_CHUNK_PAGES: u64 = (2 << 20) / PAGE_SIZE;

/// An open file's readahead state (`struct file_ra_state` and FMODE_RANDOM): one per file
/// descriptor, kept by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRa {
    /// First page of the last readahead window.
    pub start: u64,
    /// Its pages.
    pub size: u64,
    /// Pages of its async tail.
    pub async_size: u64,
    /// Largest window, pages (`ra_pages`: the bdi's, doubled by POSIX_FADV_SEQUENTIAL).
    pub ra_pages: u64,
    /// Byte just past the previous read (-1: none yet).
    pub prev_pos: i64,
    /// FMODE_RANDOM (POSIX_FADV_RANDOM): every miss reads exactly the request.
    pub random: bool,
}

impl FileRa {
    /// `file_ra_state_init` for a bdi with `ra_pages`.
    pub fn new(ra_pages: u64) -> FileRa {
        FileRa { start: 0, size: 0, async_size: 0, ra_pages, prev_pos: -1, random: false }
    }

    /// posix_fadvise(POSIX_FADV_RANDOM) (`generic_fadvise`): sets FMODE_RANDOM.
    pub fn fadvise_random(&mut self) {
        self.random = true;
    }

    /// posix_fadvise(POSIX_FADV_SEQUENTIAL): twice the bdi's window, not random.
    pub fn fadvise_sequential(&mut self, bdi_ra_pages: u64) {
        self.ra_pages = 2 * bdi_ra_pages;
        self.random = false;
    }

    /// posix_fadvise(POSIX_FADV_NORMAL): the bdi's window, not random.
    pub fn fadvise_normal(&mut self, bdi_ra_pages: u64) {
        self.ra_pages = bdi_ra_pages;
        self.random = false;
    }
}

/// `get_init_ra_size`.
pub(super) fn init_ra_size(size: u64, max: u64) -> u64 {
    let n = size.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// `get_next_ra_size`.
pub(super) fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl PageCache {
    /// A buffered read of `len` bytes at `offset` of `file` through open file `ra` at
    /// `now` (`filemap_read`): see [`ReadPlan`] and the module doc for the protocol.
    pub fn read(&mut self, ra: &mut FileRa, file: FileId, offset: u64, len: u64, now: Nanos) -> ReadPlan {
        self.retire(now);
        let mut plan = ReadPlan::new(now);
        let isize = self.files[file as usize].size;
        if len == 0 || offset >= isize {
            return plan;
        }
        let end = offset.saturating_add(len).min(isize);
        // `filemap_get_pages` sizes the request from the caller's count, not i_size.
        let last_index = offset.saturating_add(len).div_ceil(PAGE_SIZE);
        let mut pos = offset;
        let mut first = true;
        while pos < end {
            let idx = pos >> PAGE_SHIFT;
            let mut slot = self.slot_of(file, idx);
            let mut hit = slot.is_some();
            if slot.is_none() {
                self.sync_ra(ra, &mut plan, file, idx, last_index - idx, now);
                slot = self.slot_of(file, idx);
            }
            let s = match slot {
                Some(s) => s,
                None => {
                    // `filemap_create_folio`: this page alone.
                    if plan.full() {
                        plan.resume_at = Some(now);
                        break;
                    }
                    let Some(s) = self.add_page(file, idx, now, true) else {
                        plan.resume_at = Some(self.retry_time(now));
                        break;
                    };
                    self.pages[s as usize].io_until = PENDING;
                    self.push_read(&mut plan, file, idx, 1);
                    s
                }
            };
            if self.pages[s as usize].flags & F_READAHEAD != 0 && ra.ra_pages > 0 {
                // `page_cache_async_ra` (PG_readahead shares its bit with PG_reclaim: a page
                // under writeback starts nothing).
                if self.pages[s as usize].flags & F_WRITEBACK == 0 {
                    self.pages[s as usize].flags &= !F_READAHEAD;
                    self.ondemand(ra, &mut plan, file, idx, true, last_index - idx, now);
                }
            }
            let until = self.pages[s as usize].io_until;
            if until == PENDING {
                hit = false;
            } else if until > now {
                hit = false;
                plan.wait_until = plan.wait_until.max(until);
            }
            // The first page is not marked again when the previous read ended in it.
            let same = first && ra.prev_pos > 0 && ((ra.prev_pos - 1) as u64 >> PAGE_SHIFT) == idx;
            if !same {
                self.mark_accessed(s);
            }
            first = false;
            if hit {
                plan.hit_pages += 1;
            } else {
                plan.miss_pages += 1;
            }
            pos = end.min((idx + 1) << PAGE_SHIFT);
            ra.prev_pos = pos as i64;
            plan.done_bytes = pos - offset;
        }
        self.stats.read_hit_pages += u64::from(plan.hit_pages);
        self.stats.read_miss_pages += u64::from(plan.miss_pages);
        plan
    }

    /// Adds a device read of `n` pages from `idx` to `plan`.
    fn push_read(&mut self, plan: &mut ReadPlan, file: FileId, idx: u64, n: u64) {
        plan.push(DevIo { op: Op::Read, file, offset: idx << PAGE_SHIFT, bytes: (n * PAGE_SIZE) as u32 });
        self.stats.pgpgin += n * PAGE_SIZE / 1024;
    }

    /// `page_cache_sync_ra` for a miss at `idx` with `req` pages asked.
    fn sync_ra(
        &mut self,
        ra: &mut FileRa,
        plan: &mut ReadPlan,
        file: FileId,
        idx: u64,
        req: u64,
        now: Nanos,
    ) {
        let (mut req, mut forced) = (req, ra.random);
        if ra.ra_pages == 0 {
            req = 1;
            forced = true;
        }
        if forced {
            // `force_page_cache_ra`.
            let mut nr = req.min(self.io_pages.max(ra.ra_pages));
            let mut index = idx;
            while nr > 0 {
                let chunk = nr.min(FORCE_CHUNK_PAGES);
                self.do_ra(plan, file, index, chunk, 0, now);
                index += chunk;
                nr -= chunk;
            }
            return;
        }
        self.ondemand(ra, plan, file, idx, false, req, now);
    }

    /// `ondemand_readahead` at `idx` (`hit_marker`: called for a PG_readahead page).
    #[allow(clippy::too_many_arguments)]
    fn ondemand(
        &mut self,
        ra: &mut FileRa,
        plan: &mut ReadPlan,
        file: FileId,
        idx: u64,
        hit_marker: bool,
        req: u64,
        now: Nanos,
    ) {
        let mut max = ra.ra_pages;
        if req > max && self.io_pages > max {
            max = req.min(self.io_pages);
        }
        let initial = if idx == 0 {
            true
        } else if idx == ra.start + ra.size - ra.async_size || idx == ra.start + ra.size {
            // The expected index: ramp up and push the window forward.
            ra.start += ra.size;
            ra.size = next_ra_size(ra.size, max);
            ra.async_size = ra.size;
            false
        } else if hit_marker {
            // A marked page without valid state (interleaved streams).
            let start = self.next_miss(file, idx + 1, max);
            if start == 0 || start - idx > max {
                return;
            }
            ra.start = start;
            ra.size = next_ra_size(start - idx + req, max);
            ra.async_size = ra.size;
            false
        } else if req > max {
            true
        } else if idx.wrapping_sub((ra.prev_pos as u64) >> PAGE_SHIFT) <= 1 {
            // A sequential miss (the previous read ended in or just before this page).
            true
        } else if self.context_ra(ra, file, idx, req, max) {
            false
        } else {
            // A standalone small random read: as is, the state untouched.
            self.do_ra(plan, file, idx, req, 0, now);
            return;
        };
        if initial {
            ra.start = idx;
            ra.size = init_ra_size(req, max);
            ra.async_size = if ra.size > req { ra.size - req } else { ra.size };
        }
        // Would the read hit its own marker? Merge the next window now.
        if idx == ra.start && ra.size == ra.async_size {
            let add = next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        // `page_cache_ra_order` without large folios falls back to this.
        let (start, size, async_size) = (ra.start, ra.size, ra.async_size);
        self.do_ra(plan, file, start, size, async_size, now);
    }

    /// `try_context_readahead`: more cached pages just before `idx` than the request make
    /// a window of history + request.
    fn context_ra(&mut self, ra: &mut FileRa, file: FileId, idx: u64, req: u64, max: u64) -> bool {
        let mut size = self.history_pages(file, idx, max);
        if size <= req {
            return false;
        }
        if size >= idx {
            size *= 2;
        }
        ra.start = idx;
        ra.size = (size + req).min(max);
        ra.async_size = 1;
        true
    }

    /// `count_history_pages`: `idx - 1 - page_cache_prev_miss(idx - 1, max)`.
    pub(super) fn history_pages(&self, file: FileId, idx: u64, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        for k in 1..=max {
            if k > idx {
                // Cached down to page 0: the scan wraps to ULONG_MAX.
                return idx;
            }
            if self.slot_of(file, idx - k).is_none() {
                return k - 1;
            }
        }
        max - 1
    }

    /// `page_cache_next_miss(from, max)`: the first page not cached from `from`, or the
    /// last one looked at.
    fn next_miss(&self, file: FileId, from: u64, max: u64) -> u64 {
        for k in 0..max {
            if self.slot_of(file, from + k).is_none() {
                return from + k;
            }
        }
        from + max.saturating_sub(1)
    }

    /// `do_page_cache_ra`: `nr` pages from `index`, clipped to the end of file, the page
    /// `lookahead` from the end marked PG_readahead.
    fn do_ra(&mut self, plan: &mut ReadPlan, file: FileId, index: u64, nr: u64, lookahead: u64, now: Nanos) {
        let isize = self.files[file as usize].size;
        if isize == 0 {
            return;
        }
        let end_index = (isize - 1) >> PAGE_SHIFT;
        if index > end_index {
            return;
        }
        let nr = nr.min(end_index - index + 1);
        // `page_cache_ra_unbounded`: cached pages are skipped and split the reads.
        let (mut run_start, mut run_len) = (0, 0);
        for i in 0..nr {
            let idx = index + i;
            if self.slot_of(file, idx).is_some() {
                if run_len > 0 {
                    self.push_read(plan, file, run_start, run_len);
                    run_len = 0;
                }
                continue;
            }
            if run_len == 0 && plan.full() {
                break;
            }
            let Some(s) = self.add_page(file, idx, now, true) else { break };
            self.pages[s as usize].io_until = PENDING;
            self.stats.readahead_pages += 1;
            // `nr` may have been cut at the end of file: the kernel's unsigned difference then
            // wraps and marks nothing.
            if lookahead > 0 && lookahead <= nr && i == nr - lookahead {
                self.pages[s as usize].flags |= F_READAHEAD;
            }
            if run_len == 0 {
                run_start = idx;
            }
            run_len += 1;
            if run_len == BIO_MAX_VECS {
                self.push_read(plan, file, run_start, run_len);
                run_len = 0;
            }
        }
        if run_len > 0 {
            self.push_read(plan, file, run_start, run_len);
        }
    }
}
