//! The buffer pool's page table: which frame holds page (file, page number), the
//! simulator's `buf_pool->page_hash`.
//!
//! InnoDB finds a page through a hash table (`buf_page_hash_get_low`, `buf0buf.ic`); what
//! the model needs is only the answer, and how it is found changes no result. It is the
//! hottest lookup of a database run (every page access of every statement), over tables
//! far larger than the CPU caches, so the layout is chosen for speed within a memory bound:
//!
//! - Dense: one 4-byte slot per page of every file (the frame's index, or none), in one
//!   array per file indexed by the page number. A lookup is one read at an address the key
//!   gives, with no probing; pages of the same extent share cache lines. Its size follows
//!   the data set, not the pool.
//! - Hashed: a [`KeyTable`] sized for the pool's frames (about 22 bytes a frame), whatever
//!   the data set.
//!
//! A pool takes the dense table when it costs at most twice the hashed one (the data set
//! has at most about 11 pages per frame: experiment 2's 150 GB under a 60 GiB pool), the
//! hashed one otherwise (experiment 1's 749 GB under 12 GB would take 190 MB dense). In
//! experiment 2's 2 h read-only warm-up (197 million page accesses) the dense table ran
//! 20% faster than the hashed one, with identical results.
//!
//! Files grow (inserts extend a table, undo pages fill the system tablespace): a page
//! beyond its file's array grows the array by at least an eighth, so growth is rare and
//! bounded by the pages the run creates.

use super::buffer_pool::{PageKey, NIL};
use crate::support::key_table::{self, KeyTable};
use crate::support::mem_hint::prefetch;

/// Bytes of a dense slot.
const DENSE_SLOT_BYTES: u64 = 4;

/// Page key -> frame index; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) enum PageTable {
    /// `files[f][p]`: the frame of page `p` of file `f`, or [`NIL`].
    Dense { files: Vec<Vec<u32>> },
    /// Any key, in a table sized for the frames.
    Hashed(KeyTable),
}

/// Splits a page key into (file, page number).
#[inline]
fn split(key: u64) -> (usize, usize) {
    let k = PageKey(key);
    (k.space_id() as usize, k.page_no() as usize)
}

/// Whether a pool of `frames` frames over files of `file_pages` pages takes the dense
/// table: it costs at most twice the hashed one.
fn dense_fits(frames: u64, file_pages: &[u64]) -> bool {
    let dense = dense_bytes(file_pages);
    !file_pages.is_empty() && dense <= key_table::sized_bytes(frames, 11).saturating_mul(2)
}

fn dense_bytes(file_pages: &[u64]) -> u64 {
    file_pages.iter().fold(0u64, |s, &p| s.saturating_add(p)).saturating_mul(DENSE_SLOT_BYTES)
}

/// Bytes of the table a pool of `frames` frames over files of `file_pages` pages takes at
/// its start, as an estimate that never falls when the pool or the files grow: the dense
/// table's bytes when it is taken, else twice the hashed one's (the most a dense table is
/// allowed, so more files never estimate less). The dense table's growth with the files
/// is not counted.
pub(crate) fn memory_bytes(frames: u64, file_pages: &[u64]) -> u64 {
    let hashed = key_table::sized_bytes(frames, 11);
    if file_pages.is_empty() {
        hashed
    } else {
        dense_bytes(file_pages).min(hashed.saturating_mul(2))
    }
}

impl PageTable {
    /// The hashed table for `frames` frames (no file sizes known).
    pub(crate) fn hashed(frames: usize) -> PageTable {
        PageTable::Hashed(KeyTable::with_expected(frames, frames))
    }

    /// The table for `frames` frames over files of `file_pages` pages (file `f`'s pages
    /// are keyed `f`): dense when it fits (see [`dense_fits`]), else hashed.
    pub(crate) fn for_files(frames: usize, file_pages: &[u64]) -> PageTable {
        if dense_fits(frames as u64, file_pages) {
            PageTable::Dense { files: file_pages.iter().map(|&p| vec![NIL; p as usize]).collect() }
        } else {
            PageTable::hashed(frames)
        }
    }

    /// The same table with no page (a restarted server's pool).
    pub(crate) fn emptied(&self) -> PageTable {
        match self {
            PageTable::Dense { files } => {
                PageTable::Dense { files: files.iter().map(|f| vec![NIL; f.len()]).collect() }
            }
            PageTable::Hashed(t) => {
                let mut t = t.clone();
                t.clear();
                PageTable::Hashed(t)
            }
        }
    }

    /// Whether the table is dense.
    #[cfg(test)]
    pub(crate) fn is_dense(&self) -> bool {
        matches!(self, PageTable::Dense { .. })
    }

    /// Pages held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            PageTable::Dense { files } => files.iter().flatten().filter(|&&i| i != NIL).count(),
            PageTable::Hashed(t) => t.len(),
        }
    }

    /// The frame of `key`, if held.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        match self {
            PageTable::Dense { files } => {
                let (f, p) = split(key);
                match files.get(f).and_then(|v| v.get(p)) {
                    Some(&i) if i != NIL => Some(i),
                    _ => None,
                }
            }
            PageTable::Hashed(t) => t.get(key),
        }
    }

    /// Starts bringing the slot of `key` into the CPU caches; changes nothing.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        match self {
            PageTable::Dense { files } => {
                let (f, p) = split(key);
                if let Some(slot) = files.get(f).and_then(|v| v.get(p)) {
                    prefetch(slot);
                }
            }
            PageTable::Hashed(t) => t.prefetch(key),
        }
    }

    /// Adds `key` (not held) in frame `frame`.
    pub(crate) fn insert(&mut self, key: u64, frame: u32) {
        debug_assert!(frame != NIL);
        match self {
            PageTable::Dense { files } => {
                let (f, p) = split(key);
                if files.len() <= f {
                    files.resize_with(f + 1, Vec::new);
                }
                let v = &mut files[f];
                if v.len() <= p {
                    let grown = (p + 1).max(v.len() + v.len() / 8);
                    v.resize(grown, NIL);
                }
                debug_assert_eq!(v[p], NIL, "page table: page already held");
                v[p] = frame;
            }
            PageTable::Hashed(t) => t.insert(key, frame),
        }
    }

    /// Removes `key`; returns its frame.
    pub(crate) fn remove(&mut self, key: u64) -> Option<u32> {
        match self {
            PageTable::Dense { files } => {
                let (f, p) = split(key);
                let slot = files.get_mut(f)?.get_mut(p)?;
                if *slot == NIL {
                    return None;
                }
                Some(std::mem::replace(slot, NIL))
            }
            PageTable::Hashed(t) => t.remove(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(f: u64, p: u64) -> u64 {
        f << 32 | p
    }

    #[test]
    fn dense_only_within_twice_the_hashed_bytes() {
        // 60 GiB of 16K frames over 150 GB of tables: dense, and smaller than hashed.
        let frames = 3_931_680u64;
        let pages = vec![9_155_274u64 / 8; 8];
        assert!(dense_fits(frames, &pages));
        assert!(memory_bytes(frames, &pages) < key_table::sized_bytes(frames, 11));
        // 12 GB over 749 GB: hashed, estimated at twice its bytes (see memory_bytes).
        assert!(!dense_fits(786_000, &[749_000_000_000 / 16384]));
        assert_eq!(
            memory_bytes(786_000, &[749_000_000_000 / 16384]),
            2 * key_table::sized_bytes(786_000, 11)
        );
        // No file sizes: hashed.
        assert!(!PageTable::for_files(1000, &[]).is_dense());
        assert!(PageTable::for_files(1000, &[5000, 20]).is_dense());
    }

    #[test]
    fn dense_grows_for_pages_beyond_its_files() {
        let mut t = PageTable::for_files(100, &[10]);
        assert!(t.is_dense());
        t.insert(key(0, 3), 7);
        t.insert(key(0, 500), 8); // the file grew
        t.insert(key(3, 2), 9); // a file not sized (the system tablespace)
        assert_eq!((t.get(key(0, 3)), t.get(key(0, 500)), t.get(key(3, 2))), (Some(7), Some(8), Some(9)));
        assert_eq!((t.get(key(0, 4)), t.get(key(9, 0)), t.len()), (None, None, 3));
        assert_eq!((t.remove(key(0, 500)), t.remove(key(0, 500)), t.len()), (Some(8), None, 2));
        let e = t.emptied();
        assert!(e.is_dense() && e.len() == 0 && e.get(key(0, 3)).is_none());
    }

    proptest! {
        /// The estimate never falls when the pool or the files grow, and covers the table taken.
        #[test]
        fn the_estimate_grows_and_covers(frames in 1u64..10_000_000, more in 0u64..10_000_000, pages in 1u64..100_000_000, more_pages in 0u64..100_000_000) {
            let e = memory_bytes(frames, &[pages]);
            prop_assert!(memory_bytes(frames + more, &[pages]) >= e);
            prop_assert!(memory_bytes(frames, &[pages + more_pages]) >= e);
            let taken = if dense_fits(frames, &[pages]) { dense_bytes(&[pages]) } else { key_table::sized_bytes(frames, 11) };
            prop_assert!(e >= taken);
        }

        /// Dense and hashed answer alike under any sequence of inserts and removes.
        #[test]
        fn dense_and_hashed_agree(ops in proptest::collection::vec((0u64..4, 0u64..300, any::<bool>()), 1..400)) {
            let mut d = PageTable::for_files(64, &[100, 100, 50]);
            let mut h = PageTable::hashed(64);
            prop_assert!(d.is_dense() && !h.is_dense());
            let mut next = 0u32;
            for (f, p, ins) in ops {
                let k = key(f, p);
                if ins && d.get(k).is_none() {
                    d.insert(k, next);
                    h.insert(k, next);
                    next += 1;
                } else if !ins {
                    prop_assert_eq!(d.remove(k), h.remove(k));
                }
                prop_assert_eq!(d.get(k), h.get(k));
                prop_assert_eq!(d.len(), h.len());
            }
        }
    }
}
