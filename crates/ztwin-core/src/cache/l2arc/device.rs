//! The cache device: its content in write order (a ring of 16-byte entries, one per
//! buffer or log block), its write and evict hands, and what is allocated on it. It
//! outlives an ARC across a simulated export/import (persistent L2ARC).
//!
//! Sources: `module/zfs/arc.c` (`l2arc_dev_t`, `l2arc_log_blk_phys_t`,
//! `l2arc_log_blk_overhead()`) at zfs-0.8.6, zfs-2.1.16, zfs-2.2.0 .. zfs-2.2.11.
//! Simplification 5 of [`crate::cache::l2arc`] applies (usable capacity, log block size).

use super::{L2arcDeviceConfig, LOG_BLK_MAX_ENTRIES, LOG_BLK_SIZE, REBUILD_MIN_L2SIZE};

/// SPA_MAXBLOCKSHIFT: l2ad_log_entries = dev size >> 24 (capped at 1022).
const SPA_MAXBLOCKSHIFT: u32 = 24;
/// Estimated lz4-compressed size of a full log block (simplification 5).
const LOG_BLK_PSIZE_EST: u64 = LOG_BLK_SIZE / 2;

/// One block (or log block) on the device, in write order: 16 bytes.
///
/// Sizes are kept in 512-byte units (SPA_MINBLOCKSIZE: every lsize and psize is a
/// multiple, at most SPA_MAXBLOCKSIZE), less one, in 15 bits each; a log block keeps the
/// number of entries it describes in place of its lsize. The flags take the spare bits.
/// (The type and state of the header when written, which le_prop also records, are not
/// kept: no rebuild of the model restores them.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct L2Ent {
    /// BlockKey.0 (log blocks: 0).
    pub key: u64,
    /// Device address in 2^ashift units from l2ad_start (a device has fewer than 2^31
    /// sectors), and DEAD_BIT.
    addr: u32,
    /// lsize field (bits 0..15), psize field (15..30), PREFETCH_BIT, LOG_BIT.
    sizes: u32,
}

/// `addr`: no in-memory header refers to the entry (destroyed or dropped).
const DEAD_BIT: u32 = 1 << 31;
/// `sizes`: the header was a prefetch when written (le_prop PREFETCH, what a rebuild
/// restores); the in-memory header's flag since then is in the ARC's L2 index.
const PREFETCH_BIT: u32 = 1 << 30;
/// `sizes`: a log block (persistent L2ARC), not a data buffer.
const LOG_BIT: u32 = 1 << 31;
const SIZE_BITS: u32 = 15;
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;

impl L2Ent {
    fn pack_size(bytes: u32) -> u32 {
        assert!(
            // Invariant: block sizes are multiples of 512 up to recordsize <= 16 MiB (check_recordsize,
            // FileGeometry rounds a small file's block to 512); a log block's is LOG_BLK_PSIZE_EST.
            bytes >= 512 && bytes.is_multiple_of(512) && bytes <= 512 << SIZE_BITS,
            "L2 entry size {bytes}"
        );
        (bytes >> 9) - 1
    }

    /// A data (or metadata) buffer of `lsize` / `psize` bytes at sector `daddr`.
    pub(crate) fn block(key: u64, daddr: u32, lsize: u32, psize: u32, prefetch: bool) -> L2Ent {
        // Guaranteed by `attach_l2arc`, which refuses a device of 2^31 sectors or more.
        assert!(daddr & DEAD_BIT == 0, "L2 address past 2^31 sectors");
        let pf = if prefetch { PREFETCH_BIT } else { 0 };
        L2Ent { key, addr: daddr, sizes: Self::pack_size(lsize) | Self::pack_size(psize) << SIZE_BITS | pf }
    }

    /// A log block of `psize` bytes at sector `daddr` describing `entries` buffers.
    pub(crate) fn log_block(daddr: u32, entries: u32, psize: u32) -> L2Ent {
        // Guaranteed by `attach_l2arc` (at most 2^31 - 1 sectors) and LOG_BLK_MAX_ENTRIES < SIZE_MASK.
        assert!(daddr & DEAD_BIT == 0 && entries <= SIZE_MASK, "L2 log block");
        L2Ent { key: 0, addr: daddr, sizes: entries | Self::pack_size(psize) << SIZE_BITS | LOG_BIT }
    }

    /// Device address in 2^ashift units.
    pub(crate) fn daddr(&self) -> u32 {
        self.addr & !DEAD_BIT
    }
    /// Logical size, bytes (log blocks: number of entries it describes).
    pub(crate) fn lsize(&self) -> u32 {
        let f = self.sizes & SIZE_MASK;
        if self.is_log() {
            f
        } else {
            (f + 1) << 9
        }
    }
    /// Physical size, bytes (log blocks: its asize).
    pub(crate) fn psize(&self) -> u32 {
        ((self.sizes >> SIZE_BITS & SIZE_MASK) + 1) << 9
    }
    /// The header was a prefetch when written.
    pub(crate) fn prefetch(&self) -> bool {
        self.sizes & PREFETCH_BIT != 0
    }
    /// A log block.
    pub(crate) fn is_log(&self) -> bool {
        self.sizes & LOG_BIT != 0
    }
    /// No in-memory header refers to it.
    pub(crate) fn is_dead(&self) -> bool {
        self.addr & DEAD_BIT != 0
    }
    pub(crate) fn set_dead(&mut self, dead: bool) {
        self.addr = if dead { self.addr | DEAD_BIT } else { self.addr & !DEAD_BIT };
    }
}

/// Entries per chunk of the ring (chunks recycle; no allocation in steady state).
const CHUNK: usize = 4096;

/// Bytes of simulator memory a ring of `entries` entries takes (whole chunks).
pub(crate) fn ring_memory_bytes(entries: u64) -> u64 {
    entries.div_ceil(CHUNK as u64).saturating_mul((CHUNK * std::mem::size_of::<L2Ent>()) as u64)
}

/// The device's content in write order: a FIFO of chunks addressed by sequence number.
#[derive(Default)]
pub(crate) struct Ring {
    chunks: std::collections::VecDeque<Box<[L2Ent]>>,
    spare: Vec<Box<[L2Ent]>>,
    /// Sequence number of the oldest entry.
    pub head: u64,
    /// Sequence number one past the newest entry.
    pub tail: u64,
}

impl Ring {
    fn base(&self) -> u64 {
        self.head - self.head % CHUNK as u64
    }
    pub(crate) fn len(&self) -> u64 {
        self.tail - self.head
    }
    pub(crate) fn get(&self, seq: u64) -> &L2Ent {
        let off = (seq - self.base()) as usize;
        &self.chunks[off / CHUNK][off % CHUNK]
    }
    pub(crate) fn get_mut(&mut self, seq: u64) -> &mut L2Ent {
        let off = (seq - self.base()) as usize;
        &mut self.chunks[off / CHUNK][off % CHUNK]
    }
    pub(crate) fn push(&mut self, e: L2Ent) -> u64 {
        let off = (self.tail - self.base()) as usize;
        if off / CHUNK == self.chunks.len() {
            let c = self.spare.pop().unwrap_or_else(|| vec![L2Ent::default(); CHUNK].into_boxed_slice());
            self.chunks.push_back(c);
        }
        self.chunks[off / CHUNK][off % CHUNK] = e;
        self.tail += 1;
        self.tail - 1
    }
    pub(crate) fn front(&self) -> Option<&L2Ent> {
        (self.head < self.tail).then(|| self.get(self.head))
    }
    pub(crate) fn pop_front(&mut self) {
        debug_assert!(self.head < self.tail);
        self.head += 1;
        if self.head.is_multiple_of(CHUNK as u64) || self.head == self.tail {
            if self.head.is_multiple_of(CHUNK as u64) {
                // Invariant: head < tail, so the chunk holding the entry just passed exists.
                let c = self.chunks.pop_front().expect("chunk");
                self.spare.push(c);
            }
            self.restart_if_empty();
        }
    }

    /// Empty: restart at a chunk boundary so the first chunk is reused.
    fn restart_if_empty(&mut self) {
        if self.head == self.tail {
            while let Some(c) = self.chunks.pop_front() {
                self.spare.push(c);
            }
            let next = self.tail.div_ceil(CHUNK as u64) * CHUNK as u64;
            self.head = next;
            self.tail = next;
        }
    }
    /// Drops entries from the back down to sequence `to` (exclusive end).
    pub(crate) fn truncate(&mut self, to: u64) {
        debug_assert!(to >= self.head && to <= self.tail);
        self.tail = to;
        let need = (self.tail - self.base()).div_ceil(CHUNK as u64) as usize;
        while self.chunks.len() > need {
            // Invariant: the loop runs while chunks.len() > need >= 0.
            let c = self.chunks.pop_back().expect("chunk");
            self.spare.push(c);
        }
        self.restart_if_empty();
    }
    /// Bytes of simulator memory held (entries and spare chunks).
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.chunks.len() + self.spare.len()) * CHUNK * std::mem::size_of::<L2Ent>()
    }
}

/// The cache device: ring of blocks, hands, and what it holds. It outlives an ARC across
/// a simulated export/import when persistent ([`crate::cache::arc::Arc::l2arc_detach`]).
pub struct L2arcDeviceState {
    pub(crate) ring: Ring,
    /// Sector shift.
    pub(crate) ashift: u8,
    /// Usable bytes.
    pub(crate) capacity: u64,
    /// l2ad_hand, bytes from l2ad_start.
    pub(crate) hand: u64,
    /// l2ad_evict (2.1+), bytes from l2ad_start.
    pub(crate) evict: u64,
    /// l2ad_first: the first sweep, nothing to evict.
    pub(crate) first: bool,
    /// l2ad_log_entries (0: no log blocks).
    pub(crate) log_entries: u64,
    /// Entries in the open log block (l2ad_log_ent_idx).
    pub(crate) log_ent_idx: u64,
    /// vdev space allocated: data asize + log blocks.
    pub alloc: u64,
}

impl L2arcDeviceState {
    pub(crate) fn new(dev: &L2arcDeviceConfig, persistent: bool) -> L2arcDeviceState {
        let sector = 1u64 << dev.ashift;
        let capacity = dev.capacity / sector * sector;
        // Guaranteed by `attach_l2arc` (at most 2^31 - 1 sectors), the only caller.
        assert!(capacity >> dev.ashift <= u32::MAX as u64, "cache device too large for u32 sector addresses");
        let log_entries = if persistent && capacity >= REBUILD_MIN_L2SIZE {
            (capacity >> SPA_MAXBLOCKSHIFT).min(LOG_BLK_MAX_ENTRIES)
        } else {
            0
        };
        L2arcDeviceState {
            ring: Ring::default(),
            ashift: dev.ashift,
            capacity,
            hand: 0,
            evict: 0,
            first: true,
            log_entries,
            log_ent_idx: 0,
            alloc: 0,
        }
    }
    /// vdev_psize_to_asize on the cache device.
    pub(crate) fn asize(&self, psize: u64) -> u64 {
        let s = 1u64 << self.ashift;
        psize.div_ceil(s) * s
    }
    /// Allocated size of one log block (simplification 5).
    pub(crate) fn log_blk_asize(&self) -> u64 {
        self.asize(LOG_BLK_PSIZE_EST)
    }
    /// l2arc_log_blk_overhead: worst case (uncompressed) log blocks for `write_sz`.
    pub(crate) fn log_blk_overhead(&self, write_sz: u64) -> u64 {
        if self.log_entries == 0 {
            0
        } else {
            let entries = write_sz >> 9;
            entries.div_ceil(self.log_entries) * self.asize(LOG_BLK_SIZE)
        }
    }
    /// Usable bytes of the device.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Write hand, bytes from the start of the usable region.
    pub fn hand(&self) -> u64 {
        self.hand
    }
    /// Entries (blocks and log blocks, including unreachable ones) on the device.
    pub fn entries(&self) -> u64 {
        self.ring.len()
    }
}

#[cfg(test)]
mod ring_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The ring behaves as a FIFO addressed by sequence number, across chunk
        /// boundaries, emptying and truncation.
        #[test]
        fn ring_is_a_fifo(ops in prop::collection::vec((0u8..3, 1usize..3 * CHUNK), 1..40)) {
            let mut r = Ring::default();
            let mut model = std::collections::VecDeque::new();
            let mut next = 0u64;
            for (op, n) in ops {
                match op {
                    0 => {
                        for _ in 0..n {
                            let seq = r.push(L2Ent { key: next, ..Default::default() });
                            model.push_back((seq, next));
                            next += 1;
                        }
                    }
                    1 => {
                        for _ in 0..n.min(model.len()) {
                            r.pop_front();
                            model.pop_front();
                        }
                    }
                    _ => {
                        let keep = model.len().saturating_sub(n);
                        let to = model.get(keep).map_or(r.tail, |&(s, _)| s);
                        r.truncate(to);
                        model.truncate(keep);
                    }
                }
                prop_assert_eq!(r.len(), model.len() as u64);
                if let Some(&(s, _)) = model.front() {
                    prop_assert_eq!(r.head, s);
                }
                for &(s, k) in &model {
                    prop_assert_eq!(r.get(s).key, k);
                }
                prop_assert!(r.chunks.len() as u64 <= r.len().div_ceil(CHUNK as u64) + 1);
            }
        }
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// An entry gives back what it was made of, dead or alive.
        #[test]
        fn entries_keep_what_they_are_made_of(
            key in any::<u64>(),
            daddr in 0u32..(1 << 31),
            lunits in 1u32..=(1 << 15),
            punits in 1u32..=(1 << 15),
            prefetch in any::<bool>(),
            entries in 0u32..(1 << 15),
            dead in any::<bool>(),
        ) {
            let (lsize, psize) = (lunits << 9, punits << 9);
            let mut e = L2Ent::block(key, daddr, lsize, psize, prefetch);
            e.set_dead(dead);
            prop_assert_eq!((e.key, e.daddr(), e.lsize(), e.psize()), (key, daddr, lsize, psize));
            prop_assert_eq!((e.prefetch(), e.is_log(), e.is_dead()), (prefetch, false, dead));
            e.set_dead(!dead);
            prop_assert_eq!((e.is_dead(), e.daddr()), (!dead, daddr));
            let mut l = L2Ent::log_block(daddr, entries, psize);
            l.set_dead(dead);
            prop_assert_eq!((l.daddr(), l.lsize(), l.psize()), (daddr, entries, psize));
            prop_assert_eq!((l.prefetch(), l.is_log(), l.is_dead()), (false, true, dead));
        }
    }

    #[test]
    #[should_panic(expected = "L2 entry size")]
    fn a_size_off_the_512_byte_grid_is_a_bug() {
        L2Ent::block(1, 0, 1000, 512, false);
    }
}
