//! The index of blocks on the cache device: block key -> the sequence number of its live
//! ring entry and the prefetch flag of its in-memory header, in one 12-byte slot (31 bits
//! of the sequence number: the ring never holds 2^31 entries, see [`SEQ_MASK`]).
//!
//! Why not a general hash table: with tens of millions of blocks on the device the index
//! is far larger than any cache, and every ARC miss probes it. A table with a separate
//! control array whose slots hold ring positions (hashbrown, as before) costs the control
//! byte, the slot and the ring entry (to compare keys): three dependent memory accesses
//! per L2 hit. Here the key is in the slot, and a read needs nothing else (the block's
//! size comes from its block pointer), so a probe usually touches one cache line.
//!
//! Layout: open addressing over a slot array of any length (homes are a multiply-shift,
//! so the table grows by about 1.27x, not by doubling, and stays between 55% and 70%
//! full: 17 to 22 bytes per block; below the count a full device is expected to hold it
//! grows in larger steps toward it), linear probing in Robin Hood order (a lookup stops
//! once it has gone further than the resident it meets would have), backward-shift
//! deletion. The four blocks of an aligned run of block ids get consecutive homes: `cat`
//! reads, the feed writes and the ring evicts blocks in runs, so their probes share cache
//! lines. Longer runs would cluster (with runs of 16 and 16-byte slots the mean probe at
//! 87.5% full was 49 slots); with runs of 4 the mean probe is 2.4 to 4.7 slots.

use super::slab::hash_key as hash;
use crate::sim::mem_hint::prefetch;

/// Bits of the run of block ids that share consecutive homes.
const RUN_BITS: u32 = 2;
/// The key with no block (object 2^24 - 1, level 15): marks an empty slot.
const EMPTY: u64 = u64::MAX;
/// The bits of a ring sequence number an index slot (and an ARC header's `l2seq`) keeps:
/// a ring holds at most one entry per sector of the device, and attaching a device of
/// 2^31 sectors or more is refused.
pub(crate) const SEQ_MASK: u32 = (1 << 31) - 1;
/// Bit of `Slot::seq_pf`: the in-memory header has ARC_FLAG_PREFETCH.
const PF: u32 = 1 << 31;

/// One indexed block (12 bytes, alignment 4).
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The block key, low word first.
    key: [u32; 2],
    /// Sequence number bits ([`SEQ_MASK`]) of the block's live ring entry, and [`PF`].
    seq_pf: u32,
}

impl Slot {
    #[inline]
    fn key(&self) -> u64 {
        self.key[0] as u64 | (self.key[1] as u64) << 32
    }
    fn new(key: u64, loc: L2Loc) -> Slot {
        debug_assert!(loc.seq & !SEQ_MASK == 0);
        Slot { key: [key as u32, (key >> 32) as u32], seq_pf: loc.seq | if loc.prefetch { PF } else { 0 } }
    }
    fn loc(&self) -> L2Loc {
        L2Loc { seq: self.seq_pf & SEQ_MASK, prefetch: self.seq_pf & PF != 0 }
    }
}

const FREE: Slot = Slot { key: [u32::MAX; 2], seq_pf: 0 };

/// What the index holds of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct L2Loc {
    /// The [`SEQ_MASK`] bits of the sequence number of its ring entry.
    pub seq: u32,
    /// The block's in-memory header is flagged as prefetched (its ring entry has the flag
    /// as written).
    pub prefetch: bool,
}

/// Block key -> [`L2Loc`].
#[derive(Default)]
pub(crate) struct L2Index {
    slots: Vec<Slot>,
    len: usize,
    /// Blocks a full device is expected to hold (0: unknown): below it the table grows in
    /// steps of up to 4x toward it (each growth is a rehash of every slot and fresh
    /// memory to fault in; filling a 475 GB device in 1.27x steps cost a sixth of a cat).
    expected: usize,
}

impl L2Index {
    /// Number of indexed blocks.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of simulator memory held.
    pub(crate) fn allocation_size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
    }

    /// Forgets every block, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(FREE);
        self.len = 0;
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        let n = self.slots.len();
        let run = ((hash(key >> RUN_BITS) as u128 * n as u128) >> 64) as usize;
        let h = run + (key & ((1 << RUN_BITS) - 1)) as usize;
        if h >= n {
            h - n
        } else {
            h
        }
    }

    /// How far slot `pos` is from the home of `key`.
    #[inline]
    fn distance(&self, pos: usize, key: u64) -> usize {
        let h = self.home(key);
        if pos >= h {
            pos - h
        } else {
            pos + self.slots.len() - h
        }
    }

    #[inline]
    fn next(&self, pos: usize) -> usize {
        if pos + 1 == self.slots.len() {
            0
        } else {
            pos + 1
        }
    }

    /// Starts bringing the home slot of `key` into the CPU caches (see [`prefetch`]).
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(key)]);
        }
    }

    /// Slot holding `key`.
    #[inline]
    fn position(&self, key: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut pos = self.home(key);
        let mut d = 0;
        loop {
            let k = self.slots[pos].key();
            if k == key {
                return Some(pos);
            }
            if k == EMPTY || self.distance(pos, k) < d {
                return None;
            }
            pos = self.next(pos);
            d += 1;
        }
    }

    /// The block's entry, if indexed.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<L2Loc> {
        self.position(key).map(|p| self.slots[p].loc())
    }

    /// Sets the prefetch flag of an indexed block; false if `key` is not indexed.
    pub(crate) fn set_prefetch(&mut self, key: u64, prefetch: bool) -> bool {
        let Some(p) = self.position(key) else { return false };
        let s = &mut self.slots[p];
        s.seq_pf = (s.seq_pf & SEQ_MASK) | if prefetch { PF } else { 0 };
        true
    }

    /// Indexes `key` (which must not be indexed yet).
    pub(crate) fn insert(&mut self, key: u64, loc: L2Loc) {
        assert!(key != EMPTY, "L2 index: the reserved key");
        debug_assert!(self.position(key).is_none(), "L2 index: key already indexed");
        self.reserve(1);
        let mut cur = Slot::new(key, loc);
        let mut cur_key = key;
        let mut pos = self.home(key);
        let mut d = 0;
        loop {
            let s = self.slots[pos];
            let k = s.key();
            if k == EMPTY {
                self.slots[pos] = cur;
                self.len += 1;
                return;
            }
            let sd = self.distance(pos, k);
            if sd < d {
                // Robin Hood: the entry being placed takes the place of one nearer its home.
                self.slots[pos] = cur;
                cur = s;
                cur_key = k;
                d = sd;
            }
            debug_assert_eq!(self.distance(pos, cur_key), d);
            pos = self.next(pos);
            d += 1;
        }
    }

    /// Removes `key`; returns what was indexed.
    pub(crate) fn remove(&mut self, key: u64) -> Option<L2Loc> {
        let mut pos = self.position(key)?;
        let s = self.slots[pos];
        // Backward shift: the displaced entries that follow move one slot nearer home.
        loop {
            let n = self.next(pos);
            let t = self.slots[n];
            let k = t.key();
            if k == EMPTY || self.distance(n, k) == 0 {
                self.slots[pos] = FREE;
                break;
            }
            self.slots[pos] = t;
            pos = n;
        }
        self.len -= 1;
        Some(s.loc())
    }

    /// Sets the number of blocks a full device is expected to hold (see `expected`).
    pub(crate) fn expect(&mut self, blocks: usize) {
        self.expected = blocks;
    }

    /// Makes room for `more` blocks without a rehash in between: past 70% full, the
    /// table is rebuilt 55% full, or, while below the expected count, 65% full for up to
    /// four times the blocks.
    pub(crate) fn reserve(&mut self, more: usize) {
        let need = self.len + more;
        if need * 10 > self.slots.len() * 7 {
            let mut n = need * 20 / 11;
            if need < self.expected {
                n = n.max(self.expected.min(4 * need) * 20 / 13);
            }
            let n = n.max(64);
            let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
            self.len = 0;
            for s in old.into_iter().filter(|s| s.key() != EMPTY) {
                self.insert(s.key(), s.loc());
            }
        }
    }

    /// Reads the home slot of each key, so that inserting or finding them next finds their
    /// lines in the cache: these loads do not depend on one another and overlap, where
    /// the probes would wait for one after the other. (Safe Rust has no prefetch.)
    pub(crate) fn touch(&self, keys: impl Iterator<Item = u64>) {
        if self.slots.is_empty() {
            return;
        }
        let mut acc = 0u32;
        for k in keys {
            acc ^= self.slots[self.home(k)].seq_pf;
        }
        std::hint::black_box(acc);
    }

    /// Longest and mean probe distance of the indexed blocks (tests).
    #[cfg(test)]
    fn probe_stats(&self) -> (usize, f64) {
        let mut max = 0;
        let mut sum = 0;
        for (p, s) in self.slots.iter().enumerate().filter(|(_, s)| s.key() != EMPTY) {
            let d = self.distance(p, s.key());
            max = max.max(d);
            sum += d;
        }
        (max, sum as f64 / self.len.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// With an expected count, growth jumps toward it (fewer rehashes) and stops at it;
    /// past it, the table grows as without one.
    #[test]
    fn growth_jumps_toward_the_expected_count() {
        let fill = |expected: usize, n: u32| {
            let mut ix = L2Index::default();
            ix.expect(expected);
            let mut sizes = vec![];
            for i in 0..n {
                ix.insert(i as u64, L2Loc { seq: i, prefetch: false });
                if sizes.last() != Some(&ix.slots.len()) {
                    sizes.push(ix.slots.len());
                }
            }
            sizes
        };
        let plain = fill(0, 100_000);
        let jumping = fill(100_000, 100_000);
        assert!(jumping.len() < plain.len() / 2, "{jumping:?} vs {plain:?}");
        assert_eq!(*jumping.last().unwrap(), 100_000 * 20 / 13, "65% full at the expected count");
        assert!(jumping.windows(2).all(|w| w[1] <= 4 * w[0] * 20 / 11 * 13 / 20 + 64));
        let past = fill(50_000, 100_000);
        let beyond: Vec<_> = past.iter().copied().skip_while(|&n| n < 50_000 * 20 / 13).collect();
        assert!(beyond.len() > 2 && beyond.windows(2).all(|w| w[1] * 10 <= w[0] * 13), "{past:?}");
    }

    #[test]
    fn slots_are_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

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

    /// Dense runs of blocks (as a cat fills the device) and random keys both keep probes
    /// short at the fullest the table gets (70%).
    #[test]
    fn probes_stay_short_when_full() {
        for dense in [true, false] {
            let mut ix = L2Index::default();
            let mut x = 1u64;
            let mut i = 0u32;
            while ix.len() < 200_000 || (ix.len() + 2) * 10 <= ix.slots.len() * 7 {
                x = hash(x);
                let key = if dense { (1 << 40) | i as u64 } else { x >> 28 };
                if ix.get(key).is_none() {
                    ix.insert(key, L2Loc { seq: i & SEQ_MASK, prefetch: false });
                }
                i += 1;
            }
            let (max, mean) = ix.probe_stats();
            assert!(mean < 6.0 && max < 120, "dense {dense}: mean {mean} max {max}");
        }
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
