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

use std::collections::VecDeque;

use hashbrown::HashMap;

/// The dirty pages, oldest modification first at the tail.
#[derive(Debug, Clone, Default)]
pub struct FlushList {
    /// (oldest_modification, page key) in the order pages were first dirtied: the front
    /// is the list's tail (oldest). Entries of pages that left are skipped.
    order: VecDeque<(u64, u64)>,
    /// Dirty pages: key -> oldest_modification.
    dirty: HashMap<u64, u64>,
}

impl FlushList {
    /// An empty list with room for `capacity` dirty pages.
    pub fn with_capacity(capacity: usize) -> FlushList {
        FlushList { order: VecDeque::with_capacity(capacity), dirty: HashMap::with_capacity(capacity) }
    }

    /// Dirty pages (`UT_LIST_GET_LEN(flush_list)`).
    pub fn len(&self) -> usize {
        self.dirty.len()
    }

    /// Whether no page is dirty.
    pub fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// Whether `key` is dirty.
    pub fn contains(&self, key: u64) -> bool {
        self.dirty.contains_key(&key)
    }

    /// An mtr that started at `lsn` modified page `key` (LSNs arrive in order): a clean
    /// page joins the head with `oldest_modification = lsn`; a dirty one keeps its place.
    pub fn note_modification(&mut self, key: u64, lsn: u64) {
        if let hashbrown::hash_map::Entry::Vacant(e) = self.dirty.entry(key) {
            e.insert(lsn);
            self.order.push_back((lsn, key));
        }
    }

    /// Drops entries of pages that left at the tail.
    fn trim(&mut self) {
        while let Some(&(lsn, key)) = self.order.front() {
            if self.dirty.get(&key) == Some(&lsn) {
                break;
            }
            self.order.pop_front();
        }
    }

    /// The oldest modification (`buf_pool_get_oldest_modification`), None when clean.
    pub fn oldest(&mut self) -> Option<u64> {
        self.trim();
        self.order.front().map(|&(lsn, _)| lsn)
    }

    /// The oldest modification, without dropping stale entries (for reports).
    pub fn peek_oldest(&self) -> Option<u64> {
        self.order.iter().find(|&&(lsn, key)| self.dirty.get(&key) == Some(&lsn)).map(|&(lsn, _)| lsn)
    }

    /// Takes the oldest dirty page for a flush-list batch, if its oldest modification is
    /// below `lsn_limit` (LSN_MAX: any).
    pub fn pop_oldest(&mut self, lsn_limit: u64) -> Option<u64> {
        self.trim();
        let &(lsn, key) = self.order.front()?;
        if lsn >= lsn_limit {
            return None;
        }
        self.order.pop_front();
        self.dirty.remove(&key);
        Some(key)
    }

    /// Page `key` was written by another flush (the LRU's) and is clean again.
    pub fn remove(&mut self, key: u64) -> bool {
        let was = self.dirty.remove(&key).is_some();
        // Its entry leaves the tail at once if it was the oldest (else when it gets there).
        self.trim();
        was
    }

    /// The dirty pages from the tail (oldest modification first) as (page key, oldest
    /// modification), without removing them: MariaDB's flush-list batch walks the list and
    /// leaves each written page in it until its write completes (`buf_do_flush_list_batch`).
    pub fn iter_oldest(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.order.iter().filter(|&&(l, key)| self.dirty.get(&key) == Some(&l)).map(|&(l, key)| (key, l))
    }

    /// Dirty pages whose oldest modification is at most `lsn`, scanned from the tail as
    /// the page cleaner's estimate does.
    pub fn count_older_than(&self, lsn: u64) -> u64 {
        self.order
            .iter()
            .take_while(|&&(l, _)| l <= lsn)
            .filter(|&&(l, key)| self.dirty.get(&key) == Some(&l))
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_page_keeps_its_first_modification_and_the_tail_is_the_oldest() {
        let mut f = FlushList::default();
        f.note_modification(7, 100);
        f.note_modification(8, 200);
        f.note_modification(7, 300); // already dirty: stays at 100
        assert_eq!((f.len(), f.oldest()), (2, Some(100)));
        assert_eq!(f.count_older_than(150), 1);
        assert_eq!(f.count_older_than(300), 2);
        // A flush-list batch up to LSN 150 takes page 7 only.
        assert_eq!(f.pop_oldest(150), Some(7));
        assert_eq!(f.pop_oldest(150), None);
        // Page 8 written by the LRU flush; re-dirtied later it joins the head anew.
        assert!(f.remove(8));
        assert_eq!(f.oldest(), None);
        f.note_modification(8, 400);
        assert_eq!((f.oldest(), f.count_older_than(u64::MAX)), (Some(400), 1));
        f.note_modification(9, 500);
        assert_eq!(f.iter_oldest().collect::<Vec<_>>(), [(8, 400), (9, 500)]);
    }

    proptest! {
        /// Whatever the modifications and flushes, the list pops pages in the order of
        /// their oldest modification, each dirty page once.
        #[test]
        fn pops_follow_oldest_modification(ops in proptest::collection::vec((0u64..50, 0u8..3), 1..300)) {
            let mut f = FlushList::default();
            let mut model: std::collections::BTreeMap<u64, u64> = Default::default();
            for (lsn, (key, op)) in ops.into_iter().enumerate() {
                let lsn = lsn as u64 + 1;
                match op {
                    0 | 1 => { f.note_modification(key, lsn); model.entry(key).or_insert(lsn); }
                    _ => { prop_assert_eq!(f.remove(key), model.remove(&key).is_some()); }
                }
                prop_assert_eq!(f.len(), model.len());
            }
            let mut last = 0;
            while let Some(oldest) = f.oldest() {
                let key = f.pop_oldest(u64::MAX).unwrap();
                prop_assert_eq!(model.remove(&key), Some(oldest));
                prop_assert!(oldest >= last);
                last = oldest;
            }
            prop_assert!(model.is_empty());
        }
    }
}
