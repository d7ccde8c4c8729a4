//! The index of blocks on the cache device: block key -> the sequence number of its live
//! ring entry and the prefetch flag of its in-memory header, packed in the 32-bit value of
//! a [`KeyTable`] slot (31 bits of the sequence number: the ring never holds 2^31
//! entries, see [`SEQ_MASK`]).
//!
//! With tens of millions of blocks on the device the index is far larger than any cache,
//! and every ARC miss probes it: the key is in the slot, and an L2 read needs nothing else
//! (the block's size comes from its block pointer), so a probe usually touches one cache
//! line, and the driver prefetches it as soon as it knows the block (see `run`).

use crate::sim::key_table::{KeyTable, EMPTY};

/// The bits of a ring sequence number an index slot (and an ARC header's `l2seq`) keeps:
/// a ring holds at most one entry per sector of the device, and attaching a device of
/// 2^31 sectors or more is refused.
pub(crate) const SEQ_MASK: u32 = (1 << 31) - 1;
/// Bit of the value: the in-memory header has ARC_FLAG_PREFETCH.
const PF: u32 = 1 << 31;

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

/// Block key -> [`L2Loc`].
#[derive(Default)]
pub(crate) struct L2Index {
    table: KeyTable,
}

impl L2Index {
    /// Number of indexed blocks.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Bytes of simulator memory held.
    pub(crate) fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }

    /// Forgets every block, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.table.clear()
    }

    /// Starts bringing the slot of `key` into the CPU caches.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        self.table.prefetch(key)
    }

    /// The block's entry, if indexed.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<L2Loc> {
        self.table.get(key).map(L2Loc::unpack)
    }

    /// Sets the prefetch flag of an indexed block; false if `key` is not indexed.
    pub(crate) fn set_prefetch(&mut self, key: u64, prefetch: bool) -> bool {
        let Some(v) = self.table.get_mut(key) else { return false };
        *v = L2Loc { prefetch, ..L2Loc::unpack(*v) }.pack();
        true
    }

    /// Indexes `key` (which must not be indexed yet).
    pub(crate) fn insert(&mut self, key: u64, loc: L2Loc) {
        assert!(key != EMPTY, "L2 index: the reserved key");
        self.table.insert(key, loc.pack());
    }

    /// Removes `key`; returns what was indexed.
    pub(crate) fn remove(&mut self, key: u64) -> Option<L2Loc> {
        self.table.remove(key).map(L2Loc::unpack)
    }

    /// Sets the number of blocks the device is expected to hold at most, and sizes the
    /// empty index for them.
    pub(crate) fn expect(&mut self, blocks: usize) {
        self.table.expect(blocks);
        self.table.presize();
    }

    /// Makes room for `more` blocks without a rehash in between.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.table.reserve(more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn a_block_keeps_its_location_and_flag() {
        let mut ix = L2Index::default();
        let key = (0xff_ffff << 40) | (7 << 36) | ((1 << 36) - 1);
        let loc = L2Loc { seq: SEQ_MASK, prefetch: true };
        ix.insert(key, loc);
        assert_eq!(ix.get(key), Some(loc));
        assert!(ix.set_prefetch(key, false) && !ix.set_prefetch(43, true));
        assert_eq!(ix.get(key), Some(L2Loc { prefetch: false, ..loc }));
        assert_eq!(ix.remove(key), Some(L2Loc { prefetch: false, ..loc }));
        assert!(ix.is_empty() && ix.get(key).is_none());
    }

    proptest! {
        /// The index answers as a map does, through inserts, removals, flag changes and
        /// growth.
        #[test]
        fn behaves_as_a_map(ops in prop::collection::vec((0u8..4, 0u64..3000, any::<u32>()), 1..3000)) {
            let mut ix = L2Index::default();
            let mut m: HashMap<u64, L2Loc> = HashMap::new();
            for (op, k, v) in ops {
                // Keys in runs and far apart.
                let key = if k % 2 == 0 { k } else { (k << 30) | 5 };
                match op {
                    0 | 1 => if let std::collections::hash_map::Entry::Vacant(e) = m.entry(key) {
                        let l = L2Loc { seq: v & SEQ_MASK, prefetch: v & 1 == 1 };
                        e.insert(l);
                        ix.insert(key, l);
                    },
                    2 => prop_assert_eq!(ix.remove(key), m.remove(&key)),
                    _ => {
                        let pf = v & 1 == 1;
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
        }
    }
}
