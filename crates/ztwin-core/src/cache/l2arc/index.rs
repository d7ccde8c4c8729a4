//! The index of blocks on the cache device: block key -> the sequence number of its live
//! ring entry and the prefetch flag of its in-memory header, packed in 32 bits (31 bits
//! of the sequence number: the ring never holds 2^31 entries, see [`SEQ_MASK`]).
//!
//! With tens of millions of blocks on the device the index is far larger than any cache,
//! and every ARC miss probes it: an L2 read needs nothing else (the block's size comes
//! from its block pointer), and the driver prefetches the probe's line as soon as it knows
//! the block (see `run`).
//!
//! Two layouts, the smaller for the run (results do not depend on the choice):
//! - dense: when the dataset's blocks are known (every block of every level of every file,
//!   [`L2KeySpace`]) and an array of 4 bytes per block is no larger than the hash table
//!   would be, each block owns one u32 of an array, found from its key by arithmetic. A
//!   cat, the feed and ring eviction walk it in order (the blocks come in file order), and
//!   a random probe is one read with no hash and no probing;
//! - hashed: a [`KeyTable`] of 12-byte slots, 55 to 70% full (about 18 bytes per block).
//!
//! The dense array cannot hold the one packed value it uses for "absent", nor keys outside
//! the space: those few go to the hashed table beside it, which stays empty otherwise.

use crate::support::key_table::{KeyTable, EMPTY};
use crate::support::mem_hint::prefetch;

/// The bits of a ring sequence number an index slot (and an ARC header's `l2seq`) keeps:
/// a ring holds at most one entry per sector of the device, and attaching a device of
/// 2^31 sectors or more is refused.
pub(crate) const SEQ_MASK: u32 = (1 << 31) - 1;
/// Bit of the value: the in-memory header has ARC_FLAG_PREFETCH.
const PF: u32 = 1 << 31;
/// A dense cell holds the packed value's complement, so that a zeroed array is empty: the
/// packed value `u32::MAX` (sequence bits all ones, prefetch set) is stored in the table.
const DENSE_EMPTY: u32 = 0;

/// What the index holds of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct L2Loc {
    /// The [`SEQ_MASK`] bits of the sequence number of its ring entry.
    pub seq: u32,
    /// The block's in-memory header is flagged as prefetched (its ring entry has the flag
    /// as written).
    pub prefetch: bool,
}

impl L2Loc {
    fn pack(self) -> u32 {
        debug_assert!(self.seq & !SEQ_MASK == 0);
        self.seq | if self.prefetch { PF } else { 0 }
    }
    fn unpack(v: u32) -> L2Loc {
        L2Loc { seq: v & SEQ_MASK, prefetch: v & PF != 0 }
    }
}

/// The blocks of a dataset: for each object number (the vector's index), the number of
/// blocks at each level (level 0 first). Objects absent from the dataset have none.
pub type L2KeySpace = Vec<Vec<u64>>;

/// The dense layout: one cell per block of the key space.
struct Dense {
    /// Per (object, level), at `object * levels + level`: the first cell and the count.
    ranges: Vec<(u64, u64)>,
    levels: usize,
    /// Complements of packed values; [`DENSE_EMPTY`] = not held here.
    cells: Vec<u32>,
    /// Cells holding a block.
    len: usize,
}

impl Dense {
    fn new(space: &L2KeySpace) -> Dense {
        let levels = space.iter().map(Vec::len).max().unwrap_or(0);
        let mut ranges = vec![(0, 0); space.len() * levels];
        let mut next = 0u64;
        for (o, counts) in space.iter().enumerate() {
            for (l, &n) in counts.iter().enumerate() {
                ranges[o * levels + l] = (next, n);
                next += n;
            }
        }
        Dense { ranges, levels, cells: vec![DENSE_EMPTY; next as usize], len: 0 }
    }

    /// The cell of `key`, if the key is in the space.
    #[inline]
    fn cell(&self, key: u64) -> Option<usize> {
        let object = (key >> 40) as usize;
        let level = ((key >> crate::cache::arc::BlockKey::BLKID_BITS) & 0xf) as usize;
        let blkid = key & ((1 << crate::cache::arc::BlockKey::BLKID_BITS) - 1);
        if level >= self.levels {
            return None;
        }
        let &(first, n) = self.ranges.get(object * self.levels + level)?;
        (blkid < n).then_some((first + blkid) as usize)
    }
}

/// Blocks of the key space per block expected on the device up to which the dense array
/// is no larger than the hashed table (4 bytes per block against 12 bytes per slot at 65%).
fn dense_fits(space_blocks: u64, expected: u64) -> bool {
    space_blocks > 0 && space_blocks * 4 * 13 <= expected * 12 * 20
}

/// Bytes of simulator memory the index of a device expected to hold `expected` blocks of
/// a key space of `space_blocks` blocks takes: the dense array or the presized table,
/// whichever [`L2Index::new`] picks.
pub(crate) fn memory_bytes(expected: u64, space_blocks: u64) -> u64 {
    if dense_fits(space_blocks, expected) {
        space_blocks.saturating_mul(std::mem::size_of::<u32>() as u64)
    } else {
        crate::support::key_table::sized_bytes(expected, 13)
    }
}

/// Block key -> [`L2Loc`].
#[derive(Default)]
pub(crate) struct L2Index {
    dense: Option<Dense>,
    /// Keys outside the dense space, or every key when there is none.
    table: KeyTable,
}

impl L2Index {
    /// An empty index for a device expected to hold at most `expected` blocks (0:
    /// unknown), dense over `space` when that is no larger.
    pub(crate) fn new(expected: usize, space: &L2KeySpace) -> L2Index {
        let blocks: u64 = space.iter().flatten().sum();
        let mut ix = L2Index::default();
        if dense_fits(blocks, expected as u64) {
            ix.dense = Some(Dense::new(space));
        } else {
            ix.table.expect(expected);
            ix.table.presize();
        }
        ix
    }

    /// True when the index is the dense array (tests and the bench's accounting).
    #[cfg(test)]
    pub(crate) fn is_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// Number of indexed blocks.
    pub(crate) fn len(&self) -> usize {
        self.dense.as_ref().map_or(0, |d| d.len) + self.table.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of simulator memory held.
    pub(crate) fn allocation_size(&self) -> usize {
        self.dense.as_ref().map_or(0, |d| d.cells.capacity() * 4 + d.ranges.capacity() * 16)
            + self.table.allocation_size()
    }

    /// Forgets every block, keeping the memory.
    pub(crate) fn clear(&mut self) {
        if let Some(d) = self.dense.as_mut() {
            d.cells.fill(DENSE_EMPTY);
            d.len = 0;
        }
        self.table.clear()
    }

    /// Starts bringing the slot of `key` into the CPU caches.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        match self.dense.as_ref().and_then(|d| d.cell(key).map(|c| (d, c))) {
            Some((d, c)) => prefetch(&d.cells[c]),
            None => self.table.prefetch(key),
        }
    }

    /// The block's entry, if indexed.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<L2Loc> {
        if let Some(d) = self.dense.as_ref() {
            if let Some(c) = d.cell(key) {
                let v = d.cells[c];
                if v != DENSE_EMPTY {
                    return Some(L2Loc::unpack(!v));
                }
            }
            if self.table.is_empty() {
                return None;
            }
        }
        self.table.get(key).map(L2Loc::unpack)
    }

    /// Sets the prefetch flag of an indexed block; false if `key` is not indexed.
    pub(crate) fn set_prefetch(&mut self, key: u64, prefetch: bool) -> bool {
        if let Some(d) = self.dense.as_mut() {
            if let Some(c) = d.cell(key) {
                let v = d.cells[c];
                if v != DENSE_EMPTY {
                    let l = L2Loc { prefetch, ..L2Loc::unpack(!v) };
                    if l.pack() == u32::MAX {
                        // Not representable in a cell: to the table.
                        d.cells[c] = DENSE_EMPTY;
                        d.len -= 1;
                        self.table.insert(key, l.pack());
                    } else {
                        d.cells[c] = !l.pack();
                    }
                    return true;
                }
            }
        }
        let Some(v) = self.table.get_mut(key) else { return false };
        *v = L2Loc { prefetch, ..L2Loc::unpack(*v) }.pack();
        true
    }

    /// Indexes `key` (which must not be indexed yet).
    pub(crate) fn insert(&mut self, key: u64, loc: L2Loc) {
        // Invariant: block keys never equal EMPTY (level 15: levels are below DN_MAX_LEVELS).
        assert!(key != EMPTY, "L2 index: the reserved key");
        let v = loc.pack();
        if let Some(d) = self.dense.as_mut() {
            if let Some(c) = d.cell(key).filter(|_| v != u32::MAX) {
                debug_assert!(
                    d.cells[c] == DENSE_EMPTY && self.table.get(key).is_none(),
                    "L2 index: key held"
                );
                d.cells[c] = !v;
                d.len += 1;
                return;
            }
        }
        self.table.insert(key, v);
    }

    /// Removes `key`; returns what was indexed.
    pub(crate) fn remove(&mut self, key: u64) -> Option<L2Loc> {
        if let Some(d) = self.dense.as_mut() {
            if let Some(c) = d.cell(key) {
                let v = d.cells[c];
                if v != DENSE_EMPTY {
                    d.cells[c] = DENSE_EMPTY;
                    d.len -= 1;
                    return Some(L2Loc::unpack(!v));
                }
            }
            if self.table.is_empty() {
                return None;
            }
        }
        self.table.remove(key).map(L2Loc::unpack)
    }

    /// Makes room for `more` blocks without a rehash in between (the hashed layout).
    pub(crate) fn reserve(&mut self, more: usize) {
        if self.dense.is_none() {
            self.table.reserve(more)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A space over objects 0 to 2 (object 2 has no level-0 blocks), and keys in and out of it.
    fn space() -> L2KeySpace {
        vec![vec![2000, 16], vec![100, 1], vec![0, 3]]
    }

    #[test]
    fn a_block_keeps_its_location_and_flag() {
        for mut ix in [L2Index::default(), L2Index::new(1 << 20, &space())] {
            for key in [(0xff_ffff << 40) | (7 << 36) | ((1 << 36) - 1), 1999, (1 << 40) | (1 << 36)] {
                // The value a dense cell cannot hold, and one it can.
                for loc in [L2Loc { seq: SEQ_MASK, prefetch: true }, L2Loc { seq: 0, prefetch: false }] {
                    ix.insert(key, loc);
                    assert_eq!(ix.get(key), Some(loc));
                    assert!(ix.set_prefetch(key, !loc.prefetch) && !ix.set_prefetch(43, true));
                    assert_eq!(ix.get(key), Some(L2Loc { prefetch: !loc.prefetch, ..loc }));
                    assert!(ix.set_prefetch(key, loc.prefetch));
                    assert_eq!(ix.remove(key), Some(loc));
                    assert!(ix.is_empty() && ix.get(key).is_none() && ix.remove(key).is_none());
                }
            }
        }
    }

    #[test]
    fn dense_when_no_larger_than_the_table() {
        // 2120 blocks in the space: 8.5 KB dense against 18.5 bytes per expected block.
        assert!(L2Index::new(1000, &space()).is_dense());
        assert!(!L2Index::new(100, &space()).is_dense());
        assert!(!L2Index::new(1000, &Vec::new()).is_dense());
        let ix = L2Index::new(1000, &space());
        assert_eq!(
            ix.dense.as_ref().map(|d| (d.cell(2000), d.cell(1999), d.cell((1 << 36) | 15))),
            Some((None, Some(1999), Some(2015)))
        );
        assert_eq!(
            ix.dense.as_ref().map(|d| (d.cell(2 << 40), d.cell((2 << 40) | (1 << 36) | 2), d.cell(3 << 40))),
            Some((None, Some(2119), None))
        );
    }

    proptest! {
        /// The index answers as a map does, through inserts, removals, flag changes and
        /// growth.
        #[test]
        fn behaves_as_a_map(
            dense in any::<bool>(),
            ops in prop::collection::vec((0u8..4, 0u64..3000, any::<u32>()), 1..3000),
        ) {
            let mut ix = if dense { L2Index::new(1 << 20, &space()) } else { L2Index::default() };
            prop_assert_eq!(ix.is_dense(), dense);
            let mut m: HashMap<u64, L2Loc> = HashMap::new();
            for (op, k, v) in ops {
                // Keys in runs and far apart, in the dense space and out of it.
                let key = if k % 2 == 0 { k } else { (k << 30) | 5 };
                match op {
                    0 | 1 => if let std::collections::hash_map::Entry::Vacant(e) = m.entry(key) {
                        // Often the sequence bits a dense cell cannot hold with the flag.
                        let seq = if v % 4 == 0 { SEQ_MASK } else { v & SEQ_MASK };
                        let l = L2Loc { seq, prefetch: v & 2 == 2 };
                        e.insert(l);
                        ix.insert(key, l);
                    },
                    2 => prop_assert_eq!(ix.remove(key), m.remove(&key)),
                    _ => {
                        let pf = v & 2 == 2;
                        prop_assert_eq!(ix.set_prefetch(key, pf), m.contains_key(&key));
                        if let Some(l) = m.get_mut(&key) { l.prefetch = pf; }
                    }
                }
                prop_assert_eq!(ix.len(), m.len());
            }
            for k in 0..3000u64 {
                for key in [k, (k << 30) | 5] {
                    prop_assert_eq!(ix.get(key), m.get(&key).copied());
                }
            }
            ix.clear();
            prop_assert!(ix.is_empty());
            for k in 0..3000u64 {
                for key in [k, (k << 30) | 5] {
                    prop_assert_eq!(ix.get(key), None);
                }
            }
        }
    }
}
