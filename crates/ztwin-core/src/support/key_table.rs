//! A map from 64-bit keys (block keys, page keys) to 32-bit values (a ring position, a
//! slot index), built for tables far larger than the CPU caches: the L2ARC index (tens of
//! millions of blocks), the ARC header table and the InnoDB buffer pool's page table.
//!
//! Why not hashbrown: its control bytes and buckets are two arrays, and the buckets hold
//! indices whose keys live elsewhere, so a lookup is two or three dependent memory reads.
//! Here the key and value share a 12-byte slot, a lookup usually reads one cache line, and
//! that line's address follows from the key alone: a caller that knows a key an event
//! ahead can [`KeyTable::prefetch`] it, so that the read overlaps other work.
//!
//! Layout: open addressing over a slot array of any length (homes are Fibonacci hashing,
//! one multiply, then a multiply-shift onto the length,
//! so the table grows by about 1.27x, not by doubling, and stays between 55% and 70%
//! full: 17 to 22 bytes per key; below the count it is expected to hold it grows in
//! larger steps toward it), linear probing in Robin Hood order (a lookup stops once it
//! has gone further than the resident it meets would have), backward-shift deletion. The
//! four keys of an aligned run (consecutive block ids or page numbers) get consecutive
//! homes: `cat` reads, the L2 feed writes and the ring evicts blocks in runs, so their
//! probes share cache lines. Longer runs would cluster (with runs of 16 and 16-byte slots
//! the mean probe at 87.5% full was 49 slots); with runs of 4 at 70% full the mean probe
//! is 0.2 slots past home for runs and 1.2 for random keys (`probes_stay_short_when_full`).
//! Fibonacci hashing replaced a two-multiply finalizer here: lookups sit on the critical
//! path of every query, and the full L2ARC case ran 7% faster with the same results.

use super::mem_hint::prefetch;

/// Bits of the run of keys that share consecutive homes.
const RUN_BITS: u32 = 2;
/// The key of an empty slot (for block keys: object 2^24 - 1, level 15); never stored.
pub(crate) const EMPTY: u64 = u64::MAX;

/// splitmix64 finalizer: a fast, deterministic hash of a packed key.
#[inline]
pub(crate) fn hash_key(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One entry (12 bytes, alignment 4).
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The key, low word first.
    key: [u32; 2],
    val: u32,
}

impl Slot {
    #[inline]
    fn key(&self) -> u64 {
        self.key[0] as u64 | (self.key[1] as u64) << 32
    }
    fn new(key: u64, val: u32) -> Slot {
        Slot { key: [key as u32, (key >> 32) as u32], val }
    }
}

const FREE: Slot = Slot { key: [u32::MAX; 2], val: 0 };

/// Bytes of one slot.
pub(crate) const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

/// Bytes a table holds at most while `keys` keys are inserted one by one with no
/// expected count: its slots after the last growth (55% full), and during that growth
/// the slots it was rebuilt from (70% full) beside them.
pub(crate) fn grown_bytes(keys: u64) -> u64 {
    let new = (keys.saturating_mul(20) / 11).max(64);
    let old = keys.saturating_mul(10) / 7;
    new.saturating_add(old).saturating_mul(SLOT_BYTES)
}

/// Bytes of a table made at once for `keys` keys `full_per_20` / 20 full (11: 55%, as
/// [`KeyTable::with_expected`] makes it; 13: 65%, as [`KeyTable::presize`] does).
pub(crate) fn sized_bytes(keys: u64, full_per_20: u64) -> u64 {
    (keys.saturating_mul(20) / full_per_20).max(64).saturating_mul(SLOT_BYTES)
}

/// Key -> value, see the module documentation.
#[derive(Default, Clone)]
pub(crate) struct KeyTable {
    slots: Vec<Slot>,
    len: usize,
    /// Keys the table is expected to hold at most (0: unknown): below it the table grows
    /// in steps of up to 4x toward it (each growth is a rehash of every slot and fresh
    /// memory to fault in; filling a 475 GB L2ARC device in 1.27x steps cost a sixth of a
    /// cat).
    expected: usize,
}

impl std::fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyTable").field("len", &self.len).field("slots", &self.slots.len()).finish()
    }
}

impl KeyTable {
    /// An empty table expecting at most `expected` keys (0: unknown), with room for
    /// `capacity` of them.
    pub(crate) fn with_expected(expected: usize, capacity: usize) -> KeyTable {
        let mut t = KeyTable { expected, ..KeyTable::default() };
        t.reserve(capacity);
        t
    }

    /// Number of keys held.
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

    /// Forgets every key, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(FREE);
        self.len = 0;
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        let n = self.slots.len();
        // Fibonacci hashing: the product's high bits, which multiply-shift takes, depend on
        // every bit of the key (one multiply, where `hash_key` chains two).
        let run =
            (((key >> RUN_BITS).wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128 * n as u128) >> 64) as usize;
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

    /// Starts bringing the home slot of `key` into the CPU caches; changes nothing.
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

    /// The value of `key`, if held.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        self.position(key).map(|p| self.slots[p].val)
    }

    /// The value of `key`, to change in place.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: u64) -> Option<&mut u32> {
        self.position(key).map(|p| &mut self.slots[p].val)
    }

    /// Adds `key` (which must not be held yet) with `val`.
    pub(crate) fn insert(&mut self, key: u64, val: u32) {
        // Invariant: the keys are block keys (levels below DN_MAX_LEVELS, never EMPTY's 15) or
        // page keys (space ids below 2^24, validate's table limit), never EMPTY.
        assert!(key != EMPTY, "key table: the reserved key");
        debug_assert!(self.position(key).is_none(), "key table: key already held");
        self.reserve(1);
        let mut cur = Slot::new(key, val);
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

    /// Removes `key`; returns its value.
    pub(crate) fn remove(&mut self, key: u64) -> Option<u32> {
        let mut pos = self.position(key)?;
        let val = self.slots[pos].val;
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
        Some(val)
    }

    /// Sets the number of keys the table is expected to hold (see `expected`).
    pub(crate) fn expect(&mut self, keys: usize) {
        self.expected = keys;
    }

    /// Sizes an empty table for its expected count at once (65% full when it arrives):
    /// growing toward it would rehash a third of it and fault in a third more memory.
    pub(crate) fn presize(&mut self) {
        let n = (self.expected * 20 / 13).max(64);
        if self.len == 0 && self.expected > 0 && self.slots.len() < n {
            self.slots = vec![FREE; n];
        }
    }

    /// Makes room for `more` keys without a rehash in between: past 70% full, the table
    /// is rebuilt 55% full, or, while below the expected count, 65% full for up to four
    /// times the keys.
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
                self.insert(s.key(), s.val);
            }
        }
    }

    /// Longest and mean probe distance of the held keys (tests).
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
            let mut t = KeyTable::default();
            t.expect(expected);
            let mut sizes = vec![];
            for i in 0..n {
                t.insert(i as u64, i);
                if sizes.last() != Some(&t.slots.len()) {
                    sizes.push(t.slots.len());
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

    /// A table made for its expected count never grows while it holds at most that many.
    #[test]
    fn sized_for_its_count_never_grows() {
        let mut t = KeyTable::with_expected(10_000, 10_000);
        let slots = t.slots.len();
        for i in 0..10_000u64 {
            t.insert(i * 7919, i as u32);
        }
        assert_eq!(t.slots.len(), slots);
    }

    /// A presized table is 65% full at its expected count and never grows up to it.
    #[test]
    fn presized_for_its_count_never_grows() {
        let mut t = KeyTable::default();
        t.expect(10_000);
        t.presize();
        assert_eq!(t.slots.len(), 10_000 * 20 / 13);
        for i in 0..10_000u64 {
            t.insert(i * 7919, i as u32);
        }
        assert_eq!(t.slots.len(), 10_000 * 20 / 13);
        t.presize();
        assert_eq!(t.len(), 10_000, "presizing a table in use changes nothing");
    }

    #[test]
    fn slots_are_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

    /// Dense runs of keys (as a cat fills the device) and random keys both keep probes
    /// short at the fullest the table gets (70%).
    #[test]
    fn probes_stay_short_when_full() {
        for dense in [true, false] {
            let mut t = KeyTable::default();
            let mut x = 1u64;
            let mut i = 0u32;
            while t.len() < 200_000 || (t.len() + 2) * 10 <= t.slots.len() * 7 {
                x = hash_key(x);
                let key = if dense { (1 << 40) | i as u64 } else { x >> 28 };
                if t.get(key).is_none() {
                    t.insert(key, i);
                }
                i += 1;
            }
            let (max, mean) = t.probe_stats();
            // Measured: mean 0.18 and max 2 for the runs, mean 1.15 and max 16 at random.
            assert!(mean < 6.0 && max < 120, "dense {dense}: mean {mean} max {max}");
        }
    }

    proptest! {
        /// The table answers as a map does, through inserts, removals, changes in place
        /// and growth.
        #[test]
        fn behaves_as_a_map(ops in prop::collection::vec((0u8..4, 0u64..3000, any::<u32>()), 1..3000)) {
            let mut t = KeyTable::default();
            let mut m: HashMap<u64, u32> = HashMap::new();
            for (op, k, v) in ops {
                // Keys in runs and far apart.
                let key = if k % 2 == 0 { k } else { (k << 30) | 5 };
                match op {
                    0 | 1 => if let std::collections::hash_map::Entry::Vacant(e) = m.entry(key) {
                        e.insert(v);
                        t.insert(key, v);
                    },
                    2 => prop_assert_eq!(t.remove(key), m.remove(&key)),
                    _ => {
                        if let Some(x) = t.get_mut(key) { *x = v; }
                        if let Some(x) = m.get_mut(&key) { *x = v; }
                    }
                }
                prop_assert_eq!(t.len(), m.len());
            }
            for k in 0..3000u64 {
                for key in [k, (k << 30) | 5] {
                    prop_assert_eq!(t.get(key), m.get(&key).copied());
                }
            }
        }
    }
}
