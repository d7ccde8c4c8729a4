//! InnoDB's flush list: the dirty pages of the buffer pool in the order they were first
//! modified, which is the order the page cleaner writes them and what the checkpoint
//! waits for.
//!
//! Mechanism. When a mini-transaction that modified a clean page commits
//! (`buf_flush_note_modification` → `buf_flush_insert_into_flush_list`), the page gets
//! its `oldest_modification` (the mtr's start LSN) and goes to the head of the flush
//! list; a page already dirty keeps its place and its oldest modification (only its
//! `newest_modification` moves on). The tail is thus the oldest: a flush-list batch
//! (`buf_flush_do_batch(BUF_FLUSH_LIST)`) writes from the tail up to a count or an LSN;
//! `buf_pool_get_oldest_modification` (the checkpoint's limit) is the tail's; the page
//! cleaner's estimate scans from the tail counting pages older than a target LSN. A page
//! written by the LRU flush (it reached the LRU's tail dirty) leaves the list from
//! wherever it is.
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/buf/buf0flu.cc`
//! (`buf_flush_insert_into_flush_list`, `buf_flush_remove`, `buf_flush_do_batch`,
//! `page_cleaner_flush_pages_recommendation`'s scan), `include/buf0flu.ic`
//! (`buf_flush_note_modification`), `buf/buf0buf.cc` (`buf_pool_get_oldest_modification`).
//!
//! Simplifications: 1. one buffer pool instance; 2. pages leaving from the middle are
//! marked and skipped at the tail (the order of the rest is unchanged, as in the list).
//!
//! Representation. As InnoDB's `buf_page_t` carries its flush-list links, a cached page's
//! control block (the buffer pool's node) holds the number of its entry here
//! ([`BufferPool::flush_slot`]), so noting a modification touches only the page's own
//! node; a page on the list without a frame (the system tablespace's pages, which the
//! buffer pool does not hold: simplification 1 of the write path) is kept in a small map.
//! Entries are numbered in the order they are pushed; an entry whose page left is marked
//! and dropped when it reaches the tail, so the tail is always a page on the list.

use std::collections::VecDeque;

use hashbrown::HashMap;

use super::buffer_pool::{BufferPool, PageKey};

/// The key of an entry whose page left the list.
const LEFT: u64 = u64::MAX;

/// The dirty pages, oldest modification first at the tail.
#[derive(Debug, Clone)]
pub struct FlushList {
    /// (oldest_modification, page key) in the order pages were first dirtied: the front
    /// is the list's tail (oldest), never an entry that left. Entries of pages that left
    /// have the key [`LEFT`].
    order: VecDeque<(u64, u64)>,
    /// The number of `order`'s front entry (entries are numbered from 1 as pushed; 0 is
    /// "none" in a page's slot).
    base: u64,
    /// Pages on the list.
    len: usize,
    /// Pages on the list the buffer pool has no frame for: key -> entry number.
    unframed: HashMap<u64, u64>,
}

impl Default for FlushList {
    fn default() -> FlushList {
        FlushList::with_capacity(0)
    }
}

impl FlushList {
    /// An empty list with room for `capacity` dirty pages.
    pub fn with_capacity(capacity: usize) -> FlushList {
        FlushList { order: VecDeque::with_capacity(capacity), base: 1, len: 0, unframed: HashMap::new() }
    }

    /// Dirty pages (`UT_LIST_GET_LEN(flush_list)`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no page is dirty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `key` is dirty (`bp`: the pool whose pages are on this list).
    pub fn contains(&self, bp: &BufferPool, key: PageKey) -> bool {
        bp.flush_seq(key).is_some_and(|s| s != 0) || self.unframed.contains_key(&key.0)
    }

    /// Appends an entry; returns its number.
    fn push(&mut self, lsn: u64, key: u64) -> u64 {
        debug_assert!(key != LEFT, "a page key of all ones");
        let seq = self.base + self.order.len() as u64;
        self.order.push_back((lsn, key));
        self.len += 1;
        seq
    }

    /// Entry `seq`'s page left the list.
    fn leave(&mut self, seq: u64) {
        let i = (seq - self.base) as usize;
        self.order[i].1 = LEFT;
        self.len -= 1;
        self.trim();
    }

    /// An mtr that started at `lsn` modified page `key` of `bp` (LSNs arrive in order): the
    /// page is dirty in the pool; a page not on the list joins the head with
    /// `oldest_modification = lsn`; one on it keeps its place.
    pub fn note_modification(&mut self, bp: &mut BufferPool, key: PageKey, lsn: u64) {
        match bp.set_dirty(key) {
            Some(slot) => {
                if *slot == 0 && (self.unframed.is_empty() || !self.unframed.contains_key(&key.0)) {
                    *slot = self.push(lsn, key.0);
                }
            }
            None => {
                if !self.unframed.contains_key(&key.0) {
                    let seq = self.push(lsn, key.0);
                    self.unframed.insert(key.0, seq);
                }
            }
        }
    }

    /// Drops entries of pages that left at the tail.
    fn trim(&mut self) {
        while self.order.front().is_some_and(|&(_, key)| key == LEFT) {
            self.order.pop_front();
            self.base += 1;
        }
    }

    /// The oldest modification (`buf_pool_get_oldest_modification`), None when clean.
    pub fn oldest(&self) -> Option<u64> {
        self.order.front().map(|&(lsn, _)| lsn)
    }

    /// Takes the oldest dirty page of `bp` for a flush-list batch, if its oldest
    /// modification is below `lsn_limit` (LSN_MAX: any).
    pub fn pop_oldest(&mut self, bp: &mut BufferPool, lsn_limit: u64) -> Option<u64> {
        let &(lsn, key) = self.order.front()?;
        if lsn >= lsn_limit {
            return None;
        }
        match bp.flush_slot(PageKey(key)) {
            Some(slot) if *slot == self.base => *slot = 0,
            _ => {
                self.unframed.remove(&key);
            }
        }
        self.order.pop_front();
        self.base += 1;
        self.len -= 1;
        self.trim();
        Some(key)
    }

    /// Page `key` of `bp` was written by another flush (the LRU's) and is clean again.
    pub fn remove(&mut self, bp: &mut BufferPool, key: PageKey) -> bool {
        let seq = match bp.flush_slot(key) {
            Some(slot) if *slot != 0 => std::mem::take(slot),
            _ => match self.unframed.remove(&key.0) {
                Some(seq) => seq,
                None => return false,
            },
        };
        self.leave(seq);
        true
    }

    /// The dirty pages from the tail (oldest modification first) as (page key, oldest
    /// modification), without removing them: MariaDB's flush-list batch walks the list and
    /// leaves each written page in it until its write completes (`buf_do_flush_list_batch`).
    pub fn iter_oldest(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.order.iter().filter(|&&(_, key)| key != LEFT).map(|&(l, key)| (key, l))
    }

    /// Dirty pages whose oldest modification is at most `lsn`, scanned from the tail as
    /// the page cleaner's estimate does.
    pub fn count_older_than(&self, lsn: u64) -> u64 {
        self.order.iter().take_while(|&&(l, _)| l <= lsn).filter(|&&(_, key)| key != LEFT).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn k(n: u64) -> PageKey {
        PageKey::new(1, n)
    }

    #[test]
    fn a_page_keeps_its_first_modification_and_the_tail_is_the_oldest() {
        let mut bp = BufferPool::with_capacity(64, 37, 0);
        for n in [7, 8] {
            bp.insert(k(n), 0);
        }
        let mut f = FlushList::default();
        f.note_modification(&mut bp, k(7), 100);
        f.note_modification(&mut bp, k(8), 200);
        f.note_modification(&mut bp, k(7), 300); // already dirty: stays at 100
        assert_eq!((f.len(), f.oldest()), (2, Some(100)));
        assert!(bp.is_dirty(k(7)) && f.contains(&bp, k(7)));
        assert_eq!(f.count_older_than(150), 1);
        assert_eq!(f.count_older_than(300), 2);
        // A flush-list batch up to LSN 150 takes page 7 only.
        assert_eq!(f.pop_oldest(&mut bp, 150), Some(k(7).0));
        assert_eq!(f.pop_oldest(&mut bp, 150), None);
        assert!(!f.contains(&bp, k(7)));
        // Page 8 written by the LRU flush; re-dirtied later it joins the head anew.
        assert!(f.remove(&mut bp, k(8)));
        assert!(!f.remove(&mut bp, k(8)));
        assert_eq!(f.oldest(), None);
        f.note_modification(&mut bp, k(8), 400);
        assert_eq!((f.oldest(), f.count_older_than(u64::MAX)), (Some(400), 1));
        // A page the pool has no frame for is on the list all the same.
        f.note_modification(&mut bp, k(9), 500);
        assert!(!bp.contains(k(9)) && f.contains(&bp, k(9)));
        assert_eq!(f.iter_oldest().collect::<Vec<_>>(), [(k(8).0, 400), (k(9).0, 500)]);
        // Read into the pool while dirty, it keeps its place.
        bp.insert(k(9), 0);
        f.note_modification(&mut bp, k(9), 600);
        assert_eq!(f.iter_oldest().collect::<Vec<_>>(), [(k(8).0, 400), (k(9).0, 500)]);
        assert_eq!(f.pop_oldest(&mut bp, u64::MAX), Some(k(8).0));
        assert_eq!(f.pop_oldest(&mut bp, u64::MAX), Some(k(9).0));
        assert!(f.is_empty() && !f.contains(&bp, k(9)));
    }

    proptest! {
        /// Whatever the modifications, flushes and reads into the pool, the list holds each
        /// dirty page once at its first modification, counts and lists them as a map of
        /// them would, and pops them in the order of their oldest modification.
        #[test]
        fn pops_follow_oldest_modification(ops in proptest::collection::vec((0u64..50, 0u8..4), 1..300)) {
            let mut bp = BufferPool::with_capacity(64, 37, 0);
            for n in 0..25 {
                bp.insert(k(n), 0);
            }
            let mut f = FlushList::default();
            let mut model: std::collections::BTreeMap<u64, u64> = Default::default();
            for (lsn, (n, op)) in ops.into_iter().enumerate() {
                let lsn = lsn as u64 + 1;
                match op {
                    0 | 1 => { f.note_modification(&mut bp, k(n), lsn); model.entry(n).or_insert(lsn); }
                    2 => { prop_assert_eq!(f.remove(&mut bp, k(n)), model.remove(&n).is_some()); }
                    _ => bp.insert(k(n), 0),
                }
                prop_assert_eq!(f.len(), model.len());
                prop_assert_eq!(f.contains(&bp, k(n)), model.contains_key(&n));
                let mut by_age: Vec<(u64, u64)> = model.iter().map(|(&n, &l)| (k(n).0, l)).collect();
                by_age.sort_by_key(|&(_, l)| l);
                prop_assert_eq!(f.iter_oldest().collect::<Vec<_>>(), by_age);
                let mid = lsn / 2;
                prop_assert_eq!(f.count_older_than(mid), model.values().filter(|&&l| l <= mid).count() as u64);
            }
            let mut last = 0;
            while let Some(oldest) = f.oldest() {
                let key = f.pop_oldest(&mut bp, u64::MAX).unwrap();
                prop_assert_eq!(model.remove(&PageKey(key).page_no()), Some(oldest));
                prop_assert!(oldest >= last);
                last = oldest;
            }
            prop_assert!(model.is_empty());
        }
    }
}
