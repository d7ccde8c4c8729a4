//! The two file LRU lists, reclaim and workingset refaults (mm/swap.c, mm/vmscan.c,
//! mm/workingset.c in 6.1; see the module doc of [`super`]).
//!
//! Storage: a slab of 32-byte pages made once at the capacity, with a free list and two
//! intrusive doubly linked lists; a key table from (file, index) to the slot or, for an
//! evicted page, to its shadow in a ring of the last `capacity` evictions.

use super::*;

/// No slot.
pub(super) const NIL: u32 = u32::MAX;
/// Table values with this bit are shadow ring slots.
pub(super) const SHADOW: u32 = 1 << 31;
/// A ring slot never used.
pub(super) const NO_KEY: u64 = u64::MAX - 1;
/// `io_until` of a page whose I/O the caller has not reported yet.
pub(super) const PENDING: Nanos = Nanos::MAX;

/// PG_active: on the active list.
pub(super) const F_ACTIVE: u16 = 1;
/// PG_referenced.
pub(super) const F_REFERENCED: u16 = 1 << 1;
/// PG_workingset: deactivated from the active list once.
pub(super) const F_WORKINGSET: u16 = 1 << 2;
/// PG_dirty.
pub(super) const F_DIRTY: u16 = 1 << 3;
/// PG_writeback.
pub(super) const F_WRITEBACK: u16 = 1 << 4;
/// PG_readahead: the first page of a readahead window's async part.
pub(super) const F_READAHEAD: u16 = 1 << 5;
/// PG_reclaim: reclaim found it dirty or under writeback.
pub(super) const F_RECLAIM: u16 = 1 << 6;

/// Index of the inactive file list.
pub(super) const INACTIVE: usize = 0;
/// Index of the active file list.
pub(super) const ACTIVE: usize = 1;

/// The table key of page `index` of `file`.
#[inline]
pub(super) fn page_key(file: FileId, index: u64) -> u64 {
    debug_assert!(index < MAX_FILE_PAGES);
    (u64::from(file) << 40) | index
}

/// The file of a page key.
#[inline]
pub(super) fn key_file(key: u64) -> FileId {
    (key >> 40) as FileId
}

/// The page index of a page key.
#[inline]
pub(super) fn key_index(key: u64) -> u64 {
    key & (MAX_FILE_PAGES - 1)
}

/// The list a page with `flags` is on.
#[inline]
fn list_of(flags: u16) -> usize {
    if flags & F_ACTIVE != 0 {
        ACTIVE
    } else {
        INACTIVE
    }
}

impl PageCache {
    /// The slot of page `index` of `file`, if cached.
    #[inline]
    pub(super) fn slot_of(&self, file: FileId, index: u64) -> Option<u32> {
        if index >= MAX_FILE_PAGES {
            return None;
        }
        match self.table.get(page_key(file, index)) {
            Some(v) if v & SHADOW == 0 => Some(v),
            _ => None,
        }
    }

    /// Takes slot `s` off its list.
    fn unlink(&mut self, s: u32) {
        let Page { prev, next, flags, .. } = self.pages[s as usize];
        let l = list_of(flags);
        if prev != NIL {
            self.pages[prev as usize].next = next;
        } else {
            self.lists[l].0 = next;
        }
        if next != NIL {
            self.pages[next as usize].prev = prev;
        } else {
            self.lists[l].1 = prev;
        }
        self.nr[l] -= 1;
    }

    /// Puts slot `s` at the head of the list its flags name.
    fn link_head(&mut self, s: u32) {
        let l = list_of(self.pages[s as usize].flags);
        let old = self.lists[l].0;
        self.pages[s as usize].prev = NIL;
        self.pages[s as usize].next = old;
        if old != NIL {
            self.pages[old as usize].prev = s;
        } else {
            self.lists[l].1 = s;
        }
        self.lists[l].0 = s;
        self.nr[l] += 1;
    }

    /// Puts slot `s` at the tail of the list its flags name.
    fn link_tail(&mut self, s: u32) {
        let l = list_of(self.pages[s as usize].flags);
        let old = self.lists[l].1;
        self.pages[s as usize].next = NIL;
        self.pages[s as usize].prev = old;
        if old != NIL {
            self.pages[old as usize].next = s;
        } else {
            self.lists[l].0 = s;
        }
        self.lists[l].1 = s;
        self.nr[l] += 1;
    }

    /// `folio_mark_accessed` (no MGLRU): set PG_referenced; a referenced inactive page is
    /// activated (bit cleared, `workingset_activation` ages the lruvec).
    pub(super) fn mark_accessed(&mut self, s: u32) {
        let f = self.pages[s as usize].flags;
        if f & F_REFERENCED == 0 {
            self.pages[s as usize].flags |= F_REFERENCED;
        } else if f & F_ACTIVE == 0 {
            self.unlink(s);
            self.pages[s as usize].flags = (f | F_ACTIVE) & !F_REFERENCED;
            self.link_head(s);
            self.stats.pgactivate += 1;
            self.nonresident_age += 1;
        }
    }

    /// `inactive_is_low` for the file lists.
    pub(super) fn inactive_is_low(&self) -> bool {
        let (inactive, active) = (self.nr[INACTIVE], self.nr[ACTIVE]);
        let gb = (inactive + active) >> (30 - PAGE_SHIFT);
        let ratio = if gb > 0 { (10 * gb).isqrt() } else { 1 };
        inactive * ratio < active
    }

    /// Adds page `index` of `file` (not cached) at the head of the inactive list, or of the
    /// active list when `refault` and its shadow says so (`filemap_add_folio`,
    /// `workingset_refault`). May reclaim; `None` when nothing could be freed.
    pub(super) fn add_page(&mut self, file: FileId, index: u64, now: Nanos, refault: bool) -> Option<u32> {
        if self.free == NIL {
            self.reclaim(now);
            if self.free == NIL {
                return None;
            }
        }
        let s = self.free;
        self.free = self.pages[s as usize].next;
        let key = page_key(file, index);
        let mut flags = 0;
        match self.table.get(key) {
            Some(v) => {
                debug_assert!(v & SHADOW != 0, "add_page of a cached page");
                if refault {
                    flags = self.refault(v & !SHADOW);
                }
                if let Some(slot) = self.table.get_mut(key) {
                    *slot = s;
                }
            }
            None => self.table.insert(key, s),
        }
        self.pages[s as usize] = Page { key, io_until: 0, prev: NIL, next: NIL, flags };
        self.link_head(s);
        self.files[file as usize].nr_cached += 1;
        Some(s)
    }

    /// `workingset_refault` of the shadow in ring slot `ring`: the flags the new page gets.
    fn refault(&mut self, ring: u32) -> u16 {
        let sh = self.shadows[ring as usize];
        self.stats.workingset_refault_file += 1;
        let eviction = sh.eviction & !(1 << 63);
        let workingset = sh.eviction >> 63 != 0;
        let distance = self.nonresident_age.wrapping_sub(eviction);
        // No anonymous memory competes (simplification 2): the workingset is the active
        // file list.
        if distance > self.nr[ACTIVE] {
            return 0;
        }
        self.nonresident_age += 1;
        self.stats.workingset_activate_file += 1;
        if workingset {
            self.stats.workingset_restore_file += 1;
            F_ACTIVE | F_WORKINGSET
        } else {
            F_ACTIVE
        }
    }

    /// Frees clean slot `s` from the inactive list, leaving a shadow entry
    /// (`__remove_mapping`, `workingset_eviction`).
    fn evict(&mut self, s: u32) {
        let pg = self.pages[s as usize];
        debug_assert!(pg.flags & (F_DIRTY | F_WRITEBACK | F_ACTIVE) == 0);
        self.unlink(s);
        if self.p.workingset {
            let r = self.shadow_head;
            self.shadow_head = if r + 1 >= self.cap { 0 } else { r + 1 };
            let old = self.shadows[r as usize];
            if old.key != NO_KEY && self.table.get(old.key) == Some(SHADOW | r) {
                self.table.remove(old.key);
            }
            let ws = if pg.flags & F_WORKINGSET != 0 { 1 << 63 } else { 0 };
            self.shadows[r as usize] = Shadow { key: pg.key, eviction: self.nonresident_age | ws };
            if let Some(v) = self.table.get_mut(pg.key) {
                *v = SHADOW | r;
            }
        } else {
            self.table.remove(pg.key);
        }
        self.nonresident_age += 1;
        self.release(s, pg.key);
        self.stats.pgsteal_file += 1;
    }

    /// Slot `s`, which held `key` and is off its list and out of the table as a page,
    /// goes back to the free slots.
    fn release(&mut self, s: u32, key: u64) {
        self.files[key_file(key) as usize].nr_cached -= 1;
        self.pages[s as usize].flags = 0;
        self.pages[s as usize].next = self.free;
        self.free = s;
    }

    /// Frees cached slot `s` (holding `key`) with no shadow entry.
    fn free_unshadowed(&mut self, s: u32, key: u64) {
        self.unlink(s);
        self.table.remove(key);
        self.release(s, key);
    }

    /// posix_fadvise(POSIX_FADV_DONTNEED) of bytes [offset, offset + len) of `file` at `now`
    /// (mm/fadvise.c `generic_fadvise` -> `invalidate_mapping_pages` ->
    /// `mapping_evict_folio`): every whole page of the range that is clean, not under
    /// writeback and not being read leaves the cache with no shadow entry (`remove_mapping`
    /// does not call `workingset_eviction`); a partial page at either end is kept, except the last one of the file. The
    /// WB_SYNC_NONE writeback the call starts for dirty pages is left to the flusher here.
    /// Returns the pages dropped.
    pub fn fadvise_dontneed(&mut self, file: FileId, offset: u64, len: u64, now: Nanos) -> u64 {
        self.retire(now);
        let first = offset.div_ceil(PAGE_SIZE);
        let end = offset.saturating_add(len);
        // The last page is dropped when the range covers it whole or ends at i_size.
        let size = self.files[file as usize].size;
        let last_excl = if end >= size { size.div_ceil(PAGE_SIZE) } else { end >> PAGE_SHIFT };
        let last_excl = last_excl.min(MAX_FILE_PAGES);
        if first >= last_excl || self.files[file as usize].nr_cached == 0 {
            return 0;
        }
        let mut dropped = 0;
        if last_excl - first <= u64::from(self.cap) {
            for idx in first..last_excl {
                if let Some(s) = self.slot_of(file, idx) {
                    dropped += u64::from(self.drop_clean(s, now));
                }
            }
        } else {
            // A range larger than the cache: walk the lists instead.
            dropped = self.drop_listed(|pc, s, key| {
                let idx = key_index(key);
                key_file(key) == file && (first..last_excl).contains(&idx) && pc.drop_clean(s, now)
            });
        }
        self.stats.invalidated_pages += dropped;
        dropped
    }

    /// A new, empty file takes `file`'s place at `now` (the file before it deleted, a new
    /// one created: its i_size is 0). What the old inode's final truncation does
    /// (mm/truncate.c `truncate_inode_pages_final` -> `truncate_inode_pages_range`): every
    /// cached page leaves the cache, a dirty one with its dirty accounting cancelled
    /// (`truncate_cleanup_folio` -> `folio_cancel_dirty`), and with no shadow entry; the
    /// file's shadow entries go too (`truncate_folio_batch_exceptionals`). A page under
    /// writeback stays until its write completes (the kernel waits for it; here it is kept
    /// in the cache under the file's key, clean once written: simplification 8). Returns
    /// the pages dropped.
    pub fn truncate(&mut self, file: FileId, now: Nanos) -> u64 {
        self.retire(now);
        let size = self.files[file as usize].size;
        let npages = size.div_ceil(PAGE_SIZE).min(MAX_FILE_PAGES);
        let mut dropped = 0;
        if npages <= u64::from(self.cap) {
            for idx in 0..npages {
                match self.table.get(page_key(file, idx)) {
                    Some(v) if v & SHADOW != 0 => {
                        self.table.remove(page_key(file, idx));
                    }
                    Some(s) => dropped += u64::from(self.drop_truncated(s, idx)),
                    None => {}
                }
            }
        } else {
            // A file larger than the cache: walk the lists and the shadow ring instead.
            dropped =
                self.drop_listed(|pc, s, key| key_file(key) == file && pc.drop_truncated(s, key_index(key)));
            for r in 0..self.shadows.len() {
                let key = self.shadows[r].key;
                if key != NO_KEY && key_file(key) == file && self.table.get(key) == Some(SHADOW | r as u32) {
                    self.table.remove(key);
                }
            }
        }
        let f = &mut self.files[file as usize];
        f.size = 0;
        f.writeback_index = 0;
        dropped
    }

    /// Visits every cached page on the lists once, inactive then active, each as
    /// `drop(self, slot, key)`, which may drop it (its successor is taken before it
    /// leaves); returns how many it dropped.
    fn drop_listed(&mut self, mut drop: impl FnMut(&mut Self, u32, u64) -> bool) -> u64 {
        let mut dropped = 0;
        for l in [INACTIVE, ACTIVE] {
            let mut s = self.lists[l].0;
            while s != NIL {
                let next = self.pages[s as usize].next;
                let key = self.pages[s as usize].key;
                dropped += u64::from(drop(self, s, key));
                s = next;
            }
        }
        dropped
    }

    /// Truncation of cached page `idx` (slot `s`) of its file: a page under writeback
    /// stays; otherwise its dirty state is cancelled and it is freed with no shadow entry.
    /// Whether it was freed.
    fn drop_truncated(&mut self, s: u32, idx: u64) -> bool {
        let pg = self.pages[s as usize];
        if pg.flags & F_WRITEBACK != 0 {
            return false;
        }
        if pg.flags & F_DIRTY != 0 {
            self.pages[s as usize].flags &= !F_DIRTY;
            self.nr_dirty -= 1;
            self.files[key_file(pg.key) as usize].clear_dirty(idx);
        }
        self.free_unshadowed(s, pg.key);
        true
    }

    /// Frees slot `s` with no shadow entry if it is clean, not under writeback and not
    /// being read (`mapping_evict_folio`); whether it did.
    fn drop_clean(&mut self, s: u32, now: Nanos) -> bool {
        let pg = self.pages[s as usize];
        if pg.flags & (F_DIRTY | F_WRITEBACK) != 0 || pg.io_until > now {
            return false;
        }
        self.free_unshadowed(s, pg.key);
        true
    }

    /// Moves up to `n` pages from the active tail to the inactive head with PG_workingset
    /// (`shrink_active_list` of unmapped pages).
    fn deactivate(&mut self, n: u64) {
        for _ in 0..n {
            let s = self.lists[ACTIVE].1;
            if s == NIL {
                return;
            }
            self.unlink(s);
            let f = &mut self.pages[s as usize].flags;
            *f = (*f & !F_ACTIVE) | F_WORKINGSET;
            self.link_head(s);
            self.stats.pgrefill += 1;
            self.stats.pgdeactivate += 1;
        }
    }

    /// One reclaim: frees up to SWAP_CLUSTER_MAX pages from the inactive tail
    /// (`shrink_inactive_list` -> `shrink_folio_list`) and, when `prepare_scan_count` allows
    /// it, deactivates active pages in proportion to the list sizes (simplification 2).
    pub(super) fn reclaim(&mut self, now: Nanos) {
        let target = SWAP_CLUSTER_MAX.min(u64::from(self.cap) / 8).max(1);
        let refaulted = self.stats.workingset_activate_file != self.refault_snapshot;
        let mut freed = 0;
        for pass in 0..4 {
            // A pass that freed nothing forces deactivation (`sc->force_deactivate`).
            let may_deactivate = pass > 0 || refaulted || self.inactive_is_low();
            let (inactive0, active0) = (self.nr[INACTIVE], self.nr[ACTIVE]);
            let mut scanned = 0;
            let mut budget = inactive0;
            while freed < target && budget > 0 {
                budget -= 1;
                let s = self.lists[INACTIVE].1;
                if s == NIL {
                    break;
                }
                scanned += 1;
                self.stats.pgscan_file += 1;
                let pg = self.pages[s as usize];
                if pg.io_until > now && pg.flags & F_WRITEBACK == 0 {
                    // Locked (its read is in flight): kept, back to the head.
                    self.unlink(s);
                    self.link_head(s);
                } else if pg.flags & (F_DIRTY | F_WRITEBACK) != 0 {
                    // Out of the way until written (PG_reclaim, activate_locked); the move
                    // back onto an LRU ages the lruvec (`move_folios_to_lru`).
                    if pg.flags & F_WRITEBACK == 0 {
                        self.stats.nr_vmscan_immediate_reclaim += 1;
                    }
                    self.unlink(s);
                    self.pages[s as usize].flags |= F_RECLAIM | F_ACTIVE;
                    self.link_head(s);
                    self.stats.pgactivate += 1;
                    self.nonresident_age += 1;
                } else {
                    // Unmapped and clean: freed whatever PG_referenced says
                    // (`folio_check_references` clears it and returns RECLAIM(_CLEAN)).
                    self.evict(s);
                    freed += 1;
                }
            }
            if may_deactivate && active0 > 0 {
                let n = if inactive0 == 0 {
                    target
                } else {
                    let num = scanned.max(1) * active0 + self.deactivate_carry;
                    self.deactivate_carry = num % inactive0;
                    num / inactive0
                };
                self.deactivate(n.max(1).min(active0));
            }
            if freed >= target || (freed > 0 && pass > 0) {
                break;
            }
        }
        self.refault_snapshot = self.stats.workingset_activate_file;
    }

    /// Ends the writebacks completed by `now` (`__folio_end_writeback`, `folio_end_writeback`:
    /// a page with PG_reclaim goes to the inactive tail, `folio_rotate_reclaimable`).
    pub(super) fn retire(&mut self, now: Nanos) {
        let mut any = false;
        while let Some(&Reverse((done, key, n))) = self.inflight.peek() {
            if done > now {
                break;
            }
            self.inflight.pop();
            any = true;
            let (file, first) = (key_file(key), key_index(key));
            for idx in first..first + u64::from(n) {
                let Some(s) = self.slot_of(file, idx) else { continue };
                let pg = self.pages[s as usize];
                if pg.flags & F_WRITEBACK == 0 || pg.io_until != done {
                    continue;
                }
                self.pages[s as usize].flags &= !F_WRITEBACK;
                self.nr_writeback -= 1;
                self.stats.nr_written += 1;
                self.wb.stat_written += 1;
                if pg.flags & F_RECLAIM != 0 {
                    self.pages[s as usize].flags &= !F_RECLAIM;
                    if pg.flags & F_DIRTY == 0 {
                        self.unlink(s);
                        self.pages[s as usize].flags &= !F_ACTIVE;
                        self.link_tail(s);
                        self.stats.pgrotated += 1;
                    }
                }
            }
        }
        if any {
            self.writeback_ended(now);
        }
    }

    /// The time a request that found nothing to free retries: the next I/O completion,
    /// else a tenth of a second (`reclaim_throttle`'s timeout).
    pub(super) fn retry_time(&self, now: Nanos) -> Nanos {
        match self.inflight.peek() {
            Some(&Reverse((done, _, _))) if done > now => done,
            _ => now + SEC / 10,
        }
    }

    /// Checks the lists, counters and table against each other (tests).
    #[cfg(test)]
    pub(super) fn check(&self) {
        let mut seen = 0u64;
        for l in [INACTIVE, ACTIVE] {
            let mut s = self.lists[l].0;
            let mut n = 0;
            let mut prev = NIL;
            while s != NIL {
                let pg = self.pages[s as usize];
                assert_eq!(list_of(pg.flags), l, "page on the wrong list");
                assert_eq!(pg.prev, prev);
                assert_eq!(self.table.get(pg.key), Some(s), "table disagrees");
                prev = s;
                s = pg.next;
                n += 1;
            }
            assert_eq!(self.lists[l].1, prev);
            assert_eq!(n, self.nr[l], "list count");
            seen += n;
        }
        assert!(seen <= u64::from(self.cap));
        let mut free = 0;
        let mut s = self.free;
        while s != NIL {
            free += 1;
            s = self.pages[s as usize].next;
        }
        assert_eq!(free + seen, u64::from(self.cap), "slots lost");
        let (mut dirty, mut wb) = (0, 0);
        for l in [INACTIVE, ACTIVE] {
            let mut s = self.lists[l].0;
            while s != NIL {
                let pg = self.pages[s as usize];
                let f = &self.files[key_file(pg.key) as usize];
                assert_eq!(pg.flags & F_DIRTY != 0, f.is_dirty(key_index(pg.key)), "dirty bit");
                dirty += u64::from(pg.flags & F_DIRTY != 0);
                wb += u64::from(pg.flags & F_WRITEBACK != 0);
                s = pg.next;
            }
        }
        assert_eq!(dirty, self.nr_dirty);
        assert_eq!(wb, self.nr_writeback);
        let file_dirty: u64 = self.files.iter().map(|f| f.nr_dirty).sum();
        assert_eq!(file_dirty, self.nr_dirty, "a dirty bit without a cached dirty page");
        let cached: u64 = self.files.iter().map(|f| f.nr_cached).sum();
        assert_eq!(cached, seen);
    }
}
