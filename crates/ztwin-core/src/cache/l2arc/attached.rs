//! The attached cache device as the ARC keeps it: the device, the index of the blocks on
//! it reachable from memory, the resolved settings, and the counters of what it holds.
//!
//! Memory: a block on the device costs one 16-byte ring entry (in 4096-entry chunks that
//! are recycled) plus its share of the index (`index.rs`): 4 bytes per block of
//! the dataset when the index is the dense array (about 21.5 bytes per L2 block in
//! experiment 1, where the device holds 72% of the dataset's blocks), or a 12-byte slot
//! 55 to 70% full in the hashed table (33 to 38 bytes per block once the device is full);
//! an L2-only block has no ARC slab header. A block also in the
//! ARC only sets `F_L2` in its slab header.
//!
//! Several cache devices (`l2arc_dev_t` each, on `l2arc_dev_list`): one index for all of
//! them, as OpenZFS has one hash table of headers whose `b_l2hdr.b_dev` names the device.
//! An index slot (and a header's `l2seq`) packs the device's number above the bits of
//! its ring sequence number: with `n` devices, `ceil(log2 n)` bits of the 31 go to the
//! device, so each device may have at most `2^(31 - ceil(log2 n))` sectors (one device:
//! all 31 bits, the layout of a single device unchanged).

use super::device::{L2Ent, L2arcDeviceState};
use super::index::{L2Index, L2Loc, SEQ_MASK};
use super::{L2arcSettings, L2arcTunables};
use crate::config::{CacheProperty, PrefetchRead};

/// Bits of a packed location (31) a pool of `ndev` cache devices gives the ring sequence
/// number: the rest, `ceil(log2 ndev)`, name the device.
pub(crate) fn seq_width(ndev: usize) -> u32 {
    31 - (ndev.max(1) as u32).next_power_of_two().trailing_zeros()
}

/// One attached cache device (`l2arc_dev_t`): its content and its DWPD budget.
pub(crate) struct L2Dev {
    pub dev: Box<L2arcDeviceState>,
    /// The DWPD budget's state (master's feed only).
    pub dwpd: Dwpd,
}

/// The attached cache devices and their bookkeeping.
pub(crate) struct L2 {
    pub s: L2arcSettings,
    /// The module parameters `s` was resolved from, and the point-release level.
    pub tunables: L2arcTunables,
    pub patch: u16,
    /// The pool's cache devices, in the order of `filesystem.cache`.
    pub devs: Vec<L2Dev>,
    /// `l2arc_dev_last`: the device the rotating feed thread fed last (None: none yet).
    pub dev_last: Option<usize>,
    /// Bits of a packed location that hold the ring sequence number ([`seq_width`]).
    pub seq_width: u32,
    /// Block key -> device and ring sequence number (low bits, packed) of its live entry,
    /// and the prefetch flag of its in-memory header (which the ring entry has as written).
    pub index: L2Index,
    pub secondarycache: CacheProperty,
    /// Headers only on L2 (arc_l2c_only), each HDR_L2ONLY_SIZE in l2_hdr_size.
    pub l2only: u64,
    /// arcstat_l2_lsize / arcstat_l2_psize.
    pub lsize_sum: u64,
    pub psize_sum: u64,
    /// l2_log_blk_count / l2_log_blk_asize (sums over the devices, as arcstats are).
    pub lb_count: u64,
    pub lb_asize: u64,
}

/// A device's DWPD tracking (d1f290f1ea, `l2arc_dev_t`): `l2ad_dwpd_writes` (bytes written
/// in the 24 h period), `l2ad_dwpd_start` (the period's start, seconds), `l2ad_dwpd_accumulated`
/// (the last period's unused budget), and a pending `l2arc_dwpd_bump` (the parameter
/// changed: the next rate computation resets the budget without carry-over).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Dwpd {
    pub writes: u64,
    pub start_s: u64,
    pub accumulated: u64,
    pub bump_pending: bool,
}

/// Seconds of a DWPD period (24 * 3600).
const DWPD_PERIOD_S: u64 = 24 * 3600;

impl Dwpd {
    /// `l2arc_dwpd_rate_limit()` at `now_s` for a device of `device_size` bytes and
    /// `l2arc_dwpd_limit` = `limit`: the bytes per second left of the period's budget
    /// (the daily budget, the carried-over budget and one 64 MiB burst, less what was
    /// written) spread over the period's remaining seconds. A new period (24 h after the
    /// start) carries the unused budget over; a parameter change resets without it.
    pub(crate) fn rate_limit(&mut self, device_size: u64, limit: u64, now_s: u64) -> u64 {
        let daily = device_size.saturating_mul(limit) / 100;
        if self.bump_pending || now_s.saturating_sub(self.start_s) >= DWPD_PERIOD_S {
            if self.bump_pending {
                self.accumulated = 0;
                self.bump_pending = false;
            } else {
                self.accumulated = daily.saturating_sub(self.writes);
            }
            self.writes = 0;
            self.start_s = now_s;
        }
        let elapsed = now_s.saturating_sub(self.start_s);
        let remaining = DWPD_PERIOD_S.saturating_sub(elapsed).max(1);
        let total = daily.saturating_add(self.accumulated).saturating_add(super::BURST_SIZE_MAX);
        total.saturating_sub(self.writes) / remaining
    }

    /// The write hand wrapped (`l2arc_evict()`'s `rerun`): a new period starts, nothing
    /// carried over (every wrap, not only the first, in the source).
    pub(crate) fn wrapped(&mut self, now_s: u64) {
        *self = Dwpd { start_s: now_s, ..Dwpd::default() };
    }
}

const _: () = assert!(std::mem::size_of::<L2Ent>() == 16);

impl L2 {
    /// Mask of the sequence bits of a packed location.
    #[inline]
    fn seq_mask(&self) -> u32 {
        // seq_width is 28 ..= 31.
        ((1u64 << self.seq_width) - 1) as u32
    }

    /// The packed location (index slot, header `l2seq`) of entry `seq` of device `d`.
    #[inline]
    pub(crate) fn loc(&self, d: usize, seq: u64) -> u32 {
        ((d as u32) << self.seq_width & SEQ_MASK) | (seq as u32 & self.seq_mask())
    }

    /// Device and full sequence number of a packed location (a ring never holds
    /// `2^seq_width` entries: at most one per sector, and larger devices are refused).
    #[inline]
    pub(crate) fn seq(&self, low: u32) -> (usize, u64) {
        let d = (low >> self.seq_width) as usize;
        let head = self.devs[d].dev.ring.head;
        (d, head + (low.wrapping_sub(head as u32) & self.seq_mask()) as u64)
    }

    /// Device and sequence number of the live entry of `key`.
    pub(crate) fn find(&self, key: u64) -> Option<(usize, u64)> {
        self.index.get(key).map(|l| self.seq(l.seq))
    }

    /// Starts bringing the index slot of `key` into the CPU caches.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        self.index.prefetch(key);
    }

    /// What the index holds of `key`.
    pub(crate) fn locate(&self, key: u64) -> Option<L2Loc> {
        self.index.get(key)
    }

    /// Starts bringing the ring entry at a packed location into the CPU caches (its
    /// address is read when the copy is read); changes nothing.
    #[inline]
    pub(crate) fn prefetch_entry(&self, low: u32) {
        let (d, seq) = self.seq(low);
        crate::support::mem_hint::prefetch(self.devs[d].dev.ring.get(seq));
    }

    /// The byte address of the copy at a packed location on its device (`b_daddr`).
    #[inline]
    pub(crate) fn daddr_of(&self, low: u32) -> u64 {
        let (d, seq) = self.seq(low);
        let dev = &self.devs[d].dev;
        u64::from(dev.ring.get(seq).daddr()) << dev.ashift
    }

    /// The device that holds a packed location.
    #[inline]
    pub(crate) fn dev_of(&self, low: u32) -> &L2arcDeviceState {
        &self.devs[(low >> self.seq_width) as usize].dev
    }

    /// Indexes ring entry `seq` of device `d`; its header's prefetch flag is the entry's
    /// as written.
    pub(super) fn index_insert(&mut self, d: usize, seq: u64) {
        let e = self.devs[d].dev.ring.get(seq);
        let loc = L2Loc { seq: self.loc(d, seq), prefetch: e.prefetch() };
        self.index.insert(e.key, loc);
    }

    /// Indexes the data entries of device `d` from `from` to its ring's tail (one feed's
    /// writes): their home slots are prefetched first, all at once, then inserted.
    pub(super) fn index_feed(&mut self, d: usize, from: u64) {
        let ring = &self.devs[d].dev.ring;
        let live = |s: &u64| !ring.get(*s).is_log();
        let n = (from..ring.tail).filter(live).count();
        self.index.reserve(n);
        for s in (from..ring.tail).filter(live) {
            self.index.prefetch(ring.get(s).key);
        }
        for seq in from..self.devs[d].dev.ring.tail {
            if !self.devs[d].dev.ring.get(seq).is_log() {
                self.index_insert(d, seq);
            }
        }
    }

    pub(super) fn index_remove(&mut self, key: u64, d: usize, seq: u64) {
        // Invariant: a live ring entry is indexed (index_insert on write, index_remove on kill only).
        let l = self.index.remove(key).expect("indexed L2 entry");
        debug_assert_eq!(l.seq, self.loc(d, seq), "the index points at the live entry");
    }

    /// arc_hdr_l2hdr_destroy: entry `seq` of device `d` loses its in-memory header; space
    /// and sizes return.
    pub(super) fn kill(&mut self, d: usize, seq: u64) {
        let e = *self.devs[d].dev.ring.get(seq);
        debug_assert!(!e.is_dead() && !e.is_log());
        self.index_remove(e.key, d, seq);
        self.lsize_sum -= e.lsize() as u64;
        self.psize_sum -= e.psize() as u64;
        let dev = &mut self.devs[d].dev;
        dev.alloc -= dev.asize(e.psize() as u64);
        dev.ring.get_mut(seq).set_dead(true);
    }

    /// `l2arc_dev_get_next()`: the device after `l2arc_dev_last` on `l2arc_dev_list`,
    /// which `l2arc_add_vdev()` fills with `list_insert_head()` as the pool adds its cache
    /// devices in order: the list runs from the last device of `filesystem.cache` to the
    /// first, and the feed takes them in that order, round and round. (No device of the
    /// model is dead, rebuilding or trimming when the feed runs: see `rebuild.rs`.)
    pub(crate) fn dev_get_next(&mut self) -> usize {
        let n = self.devs.len();
        let next = match self.dev_last {
            Some(0) | None => n - 1,
            Some(d) => d - 1,
        };
        self.dev_last = Some(next);
        next
    }

    /// Blocks on the devices reachable from memory.
    pub(crate) fn blocks(&self) -> usize {
        self.index.len()
    }

    /// `spa_l2arc_info.l2arc_total_capacity` (master): the pool's cache devices' usable bytes.
    pub(crate) fn total_capacity(&self) -> u64 {
        self.devs.iter().map(|d| d.dev.capacity).sum()
    }
    /// May a read of a header with this prefetch state use the L2 copy?
    pub(super) fn read_ok(&self, hdr_prefetch: bool, read_prefetch: bool) -> bool {
        match self.s.features.prefetch_read {
            PrefetchRead::HeaderFlag => !(self.s.noprefetch && hdr_prefetch),
            PrefetchRead::ReadFlag => !(self.s.noprefetch && read_prefetch),
            PrefetchRead::Always => true,
        }
    }

    pub(super) fn l2cacheable(&self, meta: bool) -> bool {
        match self.secondarycache {
            CacheProperty::All => true,
            CacheProperty::Metadata => meta,
            CacheProperty::None => false,
        }
    }
}
