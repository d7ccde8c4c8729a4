//! The ARC side of the L2ARC: the index of blocks on the cache device, L2-only headers,
//! the feed (`l2arc_feed_thread` + `l2arc_evict` + `l2arc_write_buffers`), device loss
//! and the persistent-L2ARC rebuild. Theory, sources and simplifications:
//! [`crate::cache::l2arc`].
//!
//! Memory: a block on the device costs one 16-byte ring entry (in 4096-entry chunks that
//! are recycled) plus its share of the index ([`super::l2index`]): 4 bytes per block of
//! the dataset when the index is the dense array (about 21.5 bytes per L2 block in
//! experiment 1, where the device holds 72% of the dataset's blocks), or a 12-byte slot
//! 55 to 70% full in the hashed table (33 to 38 bytes per block once the device is full);
//! an L2-only block has no ARC slab header. A block also in the
//! ARC only sets `F_L2` in its slab header.

use super::l2index::{L2Index, L2Loc, SEQ_MASK};
use super::slab::{list_index, State, F_L2, F_L2CACHE, F_L2PF, F_META, F_PREFETCH, NIL};
use super::{Arc, BufType, T_DATA, T_META};
use crate::cache::l2arc::{
    L2Ent, L2Feed, L2Rebuild, L2arcDeviceState, L2arcParams, L2arcSettings, PrefetchRead, HDR_L2ONLY_SIZE,
    LOG_BLK_SIZE,
};
use crate::config::{CacheProperty, ZfsRelease};
use crate::error::Result;
use crate::sim::time::{Nanos, MS, SEC};

/// The bits of sequence number `seq` that index slots and headers keep.
#[inline]
fn seq_bits(seq: u64) -> u32 {
    seq as u32 & SEQ_MASK
}

/// sizeof (l2arc_dev_hdr_phys_t): the device header read at the start of a rebuild.
const DEV_HDR_SIZE: u64 = 512;

/// The attached cache device and its bookkeeping.
pub(crate) struct L2 {
    pub s: L2arcSettings,
    /// The module parameters `s` was resolved from, and the 2.2 patch level.
    tunables: crate::cache::l2arc::L2arcTunables,
    patch: u16,
    pub dev: Box<L2arcDeviceState>,
    /// Block key -> ring sequence number (low 32 bits) of its live entry, its psize and
    /// the prefetch flag of its in-memory header (which the ring entry has as written).
    index: L2Index,
    pub secondarycache: CacheProperty,
    /// Headers only on L2 (arc_l2c_only), each HDR_L2ONLY_SIZE in l2_hdr_size.
    pub l2only: u64,
    /// arcstat_l2_lsize / arcstat_l2_psize.
    pub lsize_sum: u64,
    pub psize_sum: u64,
    /// l2_log_blk_count / l2_log_blk_asize.
    pub lb_count: u64,
    pub lb_asize: u64,
}

const _: () = assert!(std::mem::size_of::<L2Ent>() == 16);

/// Ring entries ahead of the one being evicted whose lookups are prefetched.
const EVICT_LOOKAHEAD: u64 = 16;

impl L2 {
    /// Sequence number of the live entry of `key`.
    pub(crate) fn find(&self, key: u64) -> Option<u64> {
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

    /// The full sequence number of an entry from its [`SEQ_MASK`] bits (the ring never
    /// holds 2^31 entries: at most one per sector, and larger devices are refused).
    #[inline]
    pub(crate) fn seq(&self, low: u32) -> u64 {
        let head = self.dev.ring.head;
        head + (low.wrapping_sub(head as u32) & SEQ_MASK) as u64
    }

    /// Indexes ring entry `seq`; its header's prefetch flag is the entry's as written.
    fn index_insert(&mut self, seq: u64) {
        let e = self.dev.ring.get(seq);
        let loc = L2Loc { seq: seq_bits(seq), prefetch: e.prefetch() };
        self.index.insert(e.key, loc);
    }

    /// Indexes the data entries from `from` to the ring's tail (one feed's writes): their
    /// home slots are prefetched first, all at once, then inserted.
    fn index_feed(&mut self, from: u64) {
        let ring = &self.dev.ring;
        let live = |s: &u64| !ring.get(*s).is_log();
        let n = (from..ring.tail).filter(live).count();
        self.index.reserve(n);
        for s in (from..ring.tail).filter(live) {
            self.index.prefetch(ring.get(s).key);
        }
        for seq in from..self.dev.ring.tail {
            if !self.dev.ring.get(seq).is_log() {
                self.index_insert(seq);
            }
        }
    }

    fn index_remove(&mut self, key: u64, seq: u64) {
        let l = self.index.remove(key).expect("indexed L2 entry");
        debug_assert_eq!(l.seq, seq_bits(seq), "the index points at the live entry");
    }

    /// arc_hdr_l2hdr_destroy: the entry loses its in-memory header; space and sizes return.
    fn kill(&mut self, seq: u64) {
        let e = *self.dev.ring.get(seq);
        debug_assert!(!e.is_dead() && !e.is_log());
        self.index_remove(e.key, seq);
        self.lsize_sum -= e.lsize() as u64;
        self.psize_sum -= e.psize() as u64;
        self.dev.alloc -= self.dev.asize(e.psize() as u64);
        self.dev.ring.get_mut(seq).set_dead(true);
    }

    /// Blocks on the device reachable from memory.
    pub(crate) fn blocks(&self) -> usize {
        self.index.len()
    }

    /// May a read of a header with this prefetch state use the L2 copy?
    fn read_ok(&self, hdr_prefetch: bool, read_prefetch: bool) -> bool {
        match self.s.prefetch_read {
            PrefetchRead::HeaderFlag => !(self.s.noprefetch && hdr_prefetch),
            PrefetchRead::ReadFlag => !(self.s.noprefetch && read_prefetch),
            PrefetchRead::Always => true,
        }
    }

    fn l2cacheable(&self, meta: bool) -> bool {
        match self.secondarycache {
            CacheProperty::All => true,
            CacheProperty::Metadata => meta,
            CacheProperty::None => false,
        }
    }
}

/// What the read path needs to know about a block's L2 copy before the ARC transition.
#[derive(Clone, Copy)]
pub(crate) struct L2Probe {
    /// The block has an L2 copy that this read may use.
    pub read: bool,
    /// A cache device exists.
    pub attached: bool,
}

impl Arc {
    /// Attaches an (empty) cache device: `l2arc_add_vdev()`. Errors if the tunables do not
    /// exist in the ARC's release.
    pub fn attach_l2arc(&mut self, params: &L2arcParams) -> Result<()> {
        let s = params.config.tunables.resolve(self.release, params.patch)?;
        let d = &params.config.device;
        if d.capacity >> d.ashift > SEQ_MASK as u64 {
            return Err(crate::error::Error::config(
                "filesystem.cache",
                format!(
                    "a cache device of {} bytes at ashift {} is not modelled: at most 2^31 - 1 sectors (1 TiB at ashift 9, 8 TiB at ashift 12)",
                    d.capacity, d.ashift
                ),
            ));
        }
        let dev = Box::new(L2arcDeviceState::new(d, s.persistent));
        let index =
            L2Index::new(params.expected_blocks.min(d.capacity >> d.ashift) as usize, &params.key_space);
        self.warm_on_evict = params.arc_warm_at_first_eviction;
        self.l2 = Some(Box::new(L2 {
            s,
            tunables: params.config.tunables.clone(),
            patch: params.patch,
            dev,
            index,
            secondarycache: params.config.secondarycache,
            l2only: 0,
            lsize_sum: 0,
            psize_sum: 0,
            lb_count: 0,
            lb_asize: 0,
        }));
        Ok(())
    }

    /// Sets L2ARC module parameters at run time (`echo N >
    /// /sys/module/zfs/parameters/l2arc_*`): the ones `t` sets replace the current values,
    /// and the feed uses them from its next pass. Errors if no cache device is attached or
    /// a parameter does not exist in the release.
    pub fn retune_l2arc(&mut self, t: &crate::cache::l2arc::L2arcTunables) -> Result<()> {
        let release = self.release;
        let Some(l2) = self.l2.as_mut() else {
            return Err(crate::error::Error::config("phases", "L2ARC parameters set with no cache device"));
        };
        let tunables = l2.tunables.overridden_by(t);
        l2.s = tunables.resolve(release, l2.patch)?;
        l2.tunables = tunables;
        Ok(())
    }

    /// True once a cache device is attached.
    pub fn has_l2arc(&self) -> bool {
        self.l2.is_some()
    }

    /// Sets `arc_warm` (OpenZFS: on the first memory reclaim); ends the write boost and
    /// makes the feed scan from the cold ends.
    pub fn set_arc_warm(&mut self, warm: bool) {
        self.arc_warm = warm;
    }

    /// `arc_warm`.
    pub fn arc_warm(&self) -> bool {
        self.arc_warm
    }

    /// The cache device, if attached.
    pub fn l2arc_device(&self) -> Option<&L2arcDeviceState> {
        self.l2.as_ref().map(|l| &*l.dev)
    }

    /// True if `key` has a copy on the cache device reachable from memory.
    pub fn l2_contains(&self, key: super::BlockKey) -> bool {
        self.l2.as_ref().is_some_and(|l| l.find(key.0).is_some())
    }

    /// Blocks on the cache device reachable from memory (in the ARC or L2-only).
    pub fn l2arc_blocks(&self) -> usize {
        self.l2.as_ref().map_or(0, |l| l.blocks())
    }

    /// l2_hdr_size: L2-only headers.
    pub(crate) fn l2_hdr_size(&self) -> u64 {
        self.l2.as_ref().map_or(0, |l| l.l2only * HDR_L2ONLY_SIZE)
    }

    // ---- hooks used by the read and eviction paths ----------------------------------

    /// Before a ghost transition: may this read use the header's L2 copy?
    pub(crate) fn l2_probe_hdr(&self, i: u32, read_prefetch: bool) -> L2Probe {
        let Some(l2) = &self.l2 else { return L2Probe { read: false, attached: false } };
        let h = &self.slab.hdrs[i as usize];
        if h.flags & F_L2 == 0 {
            return L2Probe { read: false, attached: true };
        }
        // 0.8/2.1: arc_read sets ARC_FLAG_PREFETCH on a prefetch; a stale flag stays.
        let hdr_pf = h.flags & F_PREFETCH != 0 || read_prefetch;
        L2Probe { read: l2.read_ok(hdr_pf, read_prefetch), attached: true }
    }

    /// After any read: ARC_FLAG_L2CACHE from secondarycache (arc_read / arc_access), and,
    /// for reads that completed from a device (`done`), arc_read_done clears it when
    /// `l2arc_noprefetch` and the header was a prefetch (`pf_at_done`).
    /// `i` is the header's slot; it is left alone if the read destroyed the header.
    pub(crate) fn l2_after_read(&mut self, i: u32, key: u64, meta: bool, done: bool, pf_at_done: bool) {
        let Some(l2) = &self.l2 else { return };
        let set = l2.l2cacheable(meta) && !(done && l2.s.noprefetch && pf_at_done);
        let h = &mut self.slab.hdrs[i as usize];
        if h.state != State::Free && h.key == key {
            if set {
                let became_eligible = h.flags & (F_L2 | F_L2CACHE) == 0;
                h.flags |= F_L2CACHE;
                if became_eligible {
                    self.slab.l2_eligibility_changed(i);
                }
            } else {
                h.flags &= !F_L2CACHE;
            }
        }
    }

    /// arc_evict_hdr on a live header: the evict_l2_* counters.
    pub(crate) fn l2_count_evict(&mut self, i: u32, state: State) {
        if self.l2.is_none() {
            return;
        }
        let h = self.slab.hdrs[i as usize];
        let lsize = h.lsize as u64;
        if h.flags & F_L2 != 0 {
            self.st.evict_l2_cached += lsize;
        } else if h.flags & F_L2CACHE != 0 {
            self.st.evict_l2_eligible += lsize;
            if self.release != ZfsRelease::V0_8 {
                match state {
                    State::Mru => self.st.evict_l2_eligible_mru += lsize,
                    State::Mfu => self.st.evict_l2_eligible_mfu += lsize,
                    _ => {}
                }
            }
        } else {
            self.st.evict_l2_ineligible += lsize;
        }
    }

    /// Deletion of ghost header `i` (already unlinked): with an L2 copy it becomes
    /// arc_l2c_only (arc_hdr_realloc to HDR_L2ONLY_SIZE), else it is destroyed.
    pub(crate) fn delete_ghost(&mut self, i: u32) {
        let h = self.slab.hdrs[i as usize];
        if h.flags & F_L2 != 0 {
            let l2 = self.l2.as_mut().expect("F_L2 without a device");
            let seq = l2.seq(h.l2seq);
            debug_assert_eq!(l2.find(h.key), Some(seq), "l2seq locates the header's L2 copy");
            // The L2-only header keeps the prefetch flag (b_flags), in the index; the slot
            // is only visited when it changes. The device's log keeps the flag as written.
            let pf = h.flags & F_PREFETCH != 0;
            if pf != (h.flags & F_L2PF != 0) {
                l2.index.set_prefetch(h.key, pf);
            }
            l2.l2only += 1;
            self.slab.free(i);
        } else {
            self.destroy(i);
        }
    }

    /// arc_hdr_destroy of a header with an L2 copy (`l2seq` from its header): the copy
    /// becomes unreachable.
    pub(crate) fn l2_destroy_hdr(&mut self, l2seq: u32) {
        let l2 = self.l2.as_mut().expect("F_L2 without a device");
        let seq = l2.seq(l2seq);
        l2.kill(seq);
    }

    /// arc_hdr_destroy of an L2-only header (arc_l2c_only), at entry `seq` of the device:
    /// a write replaced the block, so the copy becomes unreachable and the header goes.
    pub(crate) fn l2_destroy_l2only(&mut self, seq: u64) {
        let l2 = self.l2.as_mut().expect("an L2-only header without a device");
        l2.kill(seq);
        l2.l2only -= 1;
    }

    /// A read of a block known only to the L2ARC (arc_l2c_only): realloc to a full header,
    /// arc_access (0.8/2.1 -> MFU, 2.2 -> MRU), data allocation. Returns the device read
    /// (psize, asize) if the L2 copy is used, else None (read from the pool).
    pub(crate) fn l2only_read(
        &mut self,
        key: super::BlockKey,
        info: super::BlockInfo,
        flags: super::ReadFlags,
        loc: L2Loc,
        now: Nanos,
    ) -> Option<(u32, u32)> {
        let v22 = self.v22();
        let l2 = self.l2.as_mut().expect("device");
        l2.l2only -= 1;
        let stale_pf = loc.prefetch;
        // Header flags after arc_read: 0.8/2.1 keep the stale flag and add a prefetch;
        // 2.2's arc_access sets or clears it per this read.
        let pf = if v22 { flags.prefetch } else { stale_pf || flags.prefetch };
        let read = l2.read_ok(pf, flags.prefetch);
        let meta = info.kind == BufType::Metadata;
        let mut f = F_L2 | if meta { F_META } else { 0 };
        if key.level() > 0 {
            f |= super::slab::F_INDIRECT;
        }
        if pf {
            f |= F_PREFETCH;
        }
        if stale_pf {
            f |= F_L2PF;
        }
        let asize = self.asize_of(&info);
        let i = self.slab.alloc(super::slab::Header {
            key: key.0,
            access: now,
            prev: NIL,
            next: NIL,
            lsize: info.lsize,
            psize: info.psize,
            l2seq: loc.seq,
            state: State::Free,
            flags: f | self.copy_flag(),
            // The L2-only header's own flag is not kept (simplification): a prefetch read
            // sets it, as arc_read's miss path does.
            flags2: if flags.prefetch && !v22 { super::slab::F2_PREDICTIVE } else { 0 },
        });
        if v22 {
            self.adapt_22(asize as u64);
            self.enter(i, State::Mru);
            self.count(false, flags.prefetch, meta);
        } else {
            self.adapt_08(asize as u64, Some(State::L2cOnly));
            self.enter(i, State::Mfu);
            self.count(false, pf, meta);
            if !flags.prefetch {
                self.slab.hdrs[i as usize].flags &= !F_PREFETCH;
            }
            if flags.uncacheable {
                self.slab.unlink(i);
                self.destroy(i);
            }
        }
        self.l2_after_read(i, key.0, meta, true, pf);
        let l2 = self.l2.as_ref().expect("device");
        // The copy's size is the block's (a rewrite would have dropped the copy).
        debug_assert_eq!(l2.dev.ring.get(l2.seq(loc.seq)).psize(), info.psize);
        read.then(|| (info.psize, l2.dev.asize(asize as u64) as u32))
    }

    // ---- the feed -----------------------------------------------------------------------

    /// l2arc_hdr_limit_reached (2.1+; memory pressure is not modelled).
    fn l2_hdr_limit_reached(&self) -> bool {
        let l2 = self.l2.as_ref().expect("device");
        let s = self.l2_hdr_size();
        let Some(pct) = l2.s.meta_percent else { return false };
        let base = if self.arc_warm { self.c } else { self.c_max };
        (l2.s.hdr_limit_meta_limit && s > self.meta_limit * 3 / 4) || s > base * pct / 100
    }

    /// l2arc_write_size.
    fn l2_write_size(&self) -> u64 {
        let l2 = self.l2.as_ref().expect("device");
        let (s, dev) = (&l2.s, &l2.dev);
        let boost = if self.arc_warm { 0 } else { s.write_boost };
        let mut size = s.write_max + boost;
        if s.evict_08 {
            // 0.8 has no check; keep the ring sane on tiny devices (see l2arc_evict 0.8).
            return size.min(dev.capacity / 2);
        }
        size += dev.log_blk_overhead(size);
        let len = dev.capacity;
        if s.quarter_cap {
            size = dev.asize(size.min(len / 4));
        } else if size > len {
            // 2.1 .. 2.2.2: both tunables reset to the default (the model does not persist
            // the reset across feeds).
            size = s.default_write + if self.arc_warm { 0 } else { s.default_write };
            size += dev.log_blk_overhead(size);
            size = size.min(len);
        }
        size
    }

    /// One pass of the L2ARC feed thread at `now`: l2arc_write_size, l2arc_evict,
    /// l2arc_write_buffers, l2arc_write_interval. The driver charges `asize_written` bytes
    /// of writes to the cache device and calls again at `next_feed_at`.
    pub fn l2arc_feed(&mut self, now: Nanos) -> L2Feed {
        if self.l2.is_none() {
            return L2Feed { next_feed_at: now + SEC, ..Default::default() };
        }
        if self.l2_hdr_limit_reached() {
            self.st.l2_abort_lowmem += 1;
            return L2Feed { next_feed_at: now + SEC, ..Default::default() };
        }
        self.st.l2_feeds += 1;
        let size = self.l2_write_size();
        self.l2_evict(size);
        let mut feed = self.l2_write_buffers(size);
        feed.target = size;
        feed.fed = true;
        let s = &self.l2.as_ref().expect("device").s;
        let interval = if s.feed_again && feed.asize_written > size / 2 {
            s.feed_min_ms * MS
        } else {
            s.feed_secs * SEC
        };
        feed.next_feed_at = now + interval;
        feed
    }

    /// Evicts the entry at the front of the ring.
    fn l2_evict_front(&mut self) {
        let l2 = self.l2.as_mut().expect("device");
        let seq = l2.dev.ring.head;
        let e = *l2.dev.ring.get(seq);
        // The ring is evicted in order: the index and header-table slots of an entry a
        // little ahead start coming into the CPU caches (changes nothing).
        let ahead = seq + EVICT_LOOKAHEAD;
        if ahead < l2.dev.ring.tail {
            let k = l2.dev.ring.get(ahead).key;
            l2.prefetch(k);
            self.slab.prefetch(k);
        }
        if !e.is_dead() {
            if e.is_log() {
                l2.lb_count -= 1;
                l2.lb_asize -= e.psize() as u64;
                l2.dev.alloc -= e.psize() as u64;
            } else {
                l2.kill(seq);
                match self.slab.find(e.key) {
                    Some(i) => {
                        self.st.l2_evict_l1cached += 1;
                        self.slab.hdrs[i as usize].flags &= !(F_L2 | F_L2PF);
                        self.slab.l2_eligibility_changed(i);
                    }
                    None => l2.l2only -= 1,
                }
            }
        }
        self.l2.as_mut().expect("device").dev.ring.pop_front();
    }

    /// Evicts ring entries with addresses in [hand, taddr).
    fn l2_evict_range(&mut self, taddr: u64) {
        loop {
            let l2 = self.l2.as_ref().expect("device");
            let Some(e) = l2.dev.ring.front() else { break };
            let a = (e.daddr() as u64) << l2.dev.ashift;
            if a >= taddr || a < l2.dev.hand {
                break;
            }
            self.l2_evict_front();
        }
    }

    /// l2arc_evict(dev, distance, B_FALSE), per release.
    fn l2_evict(&mut self, distance: u64) {
        let l2 = self.l2.as_mut().expect("device");
        let end = l2.dev.capacity;
        if l2.s.evict_08 {
            if l2.dev.first {
                return;
            }
            let taddr =
                if l2.dev.hand >= end.saturating_sub(2 * distance) { end } else { l2.dev.hand + distance };
            self.l2_evict_range(taddr);
            return;
        }
        loop {
            let l2 = self.l2.as_mut().expect("device");
            let rerun = l2.dev.hand + distance > end;
            let taddr = if rerun { end } else { l2.dev.hand + distance };
            if !l2.dev.first {
                l2.dev.evict = l2.dev.evict.max(taddr);
                let ev = l2.dev.evict;
                self.l2_evict_range(ev);
            }
            if !rerun {
                break;
            }
            let l2 = self.l2.as_mut().expect("device");
            l2.dev.hand = 0;
            l2.dev.evict = 0;
            l2.dev.first = false;
        }
    }

    /// l2arc_write_buffers: four passes over the ARC lists.
    fn l2_write_buffers(&mut self, target: u64) -> L2Feed {
        let mut feed = L2Feed::default();
        let (s08, mfuonly, headroom_mult, hboost) = {
            let s = &self.l2.as_ref().expect("device").s;
            (s.evict_08, s.mfuonly, s.headroom, s.headroom_boost)
        };
        let from_head = !self.arc_warm;
        let mut headroom = target * headroom_mult;
        if self.compressed {
            headroom = headroom * hboost / 100;
        }
        // 2.x reserves room for the pending log block in every fit check.
        let lb_reserve = if s08 { 0 } else { LOG_BLK_SIZE };
        let first_seq = self.l2.as_ref().expect("device").dev.ring.tail;
        let mut write_asize = 0u64;
        let mut write_psize = 0u64;
        let mut full = false;
        let passes = [(State::Mfu, T_META), (State::Mru, T_META), (State::Mfu, T_DATA), (State::Mru, T_DATA)];
        for (pass, &(state, meta)) in passes.iter().enumerate() {
            if (mfuonly == 1 && (pass == 1 || pass == 3)) || (mfuonly > 1 && pass == 3) {
                continue;
            }
            let li = list_index(state, meta);
            let mut passed = 0u64;
            let mut cur = if from_head { self.slab.lists[li].head } else { self.slab.lists[li].tail };
            // Scans from the tail resume after the run they left ineligible (see L2Run).
            let memo = self.l2run_memo && !from_head;
            if memo && self.slab.l2run[li].count > 0 {
                let r = self.slab.l2run[li];
                passed = r.bytes;
                if (s08 || headroom_mult != 0) && passed > headroom {
                    // The scan would stop inside the run, having written nothing.
                    continue;
                }
                cur = self.slab.hdrs[r.last as usize].prev;
                #[cfg(test)]
                {
                    self.l2run_resumed += 1;
                }
            }
            while cur != NIL {
                let h = self.slab.hdrs[cur as usize];
                let nxt = if from_head { h.next } else { h.prev };
                passed += h.lsize as u64;
                if (s08 || headroom_mult != 0) && passed > headroom {
                    break;
                }
                if h.flags & F_L2 != 0 || h.flags & F_L2CACHE == 0 {
                    if memo {
                        self.slab.join_l2run(cur);
                    }
                    cur = nxt;
                    continue;
                }
                let l2 = self.l2.as_mut().expect("device");
                let psize = h.psize as u64;
                let asize = l2.dev.asize(psize);
                if write_asize + asize + lb_reserve > target {
                    full = true;
                    break;
                }
                let daddr = l2.dev.hand;
                debug_assert!(daddr + asize <= l2.dev.capacity, "L2 write past the end of the device");
                let prefetch = h.flags & F_PREFETCH != 0;
                let seq = l2.dev.ring.push(L2Ent::block(
                    h.key,
                    (daddr >> l2.dev.ashift) as u32,
                    h.lsize,
                    h.psize,
                    prefetch,
                ));
                l2.lsize_sum += h.lsize as u64;
                l2.psize_sum += psize;
                l2.dev.alloc += asize;
                l2.dev.hand += asize;
                write_asize += asize;
                write_psize += psize;
                feed.buffers += 1;
                let hm = &mut self.slab.hdrs[cur as usize];
                hm.flags = (hm.flags & !F_L2PF) | F_L2 | if prefetch { F_L2PF } else { 0 };
                hm.l2seq = seq_bits(seq);
                if memo {
                    self.slab.join_l2run(cur);
                }
                let l2 = self.l2.as_mut().expect("device");
                if l2.dev.log_entries > 0 {
                    l2.dev.log_ent_idx += 1;
                    if l2.dev.log_ent_idx == l2.dev.log_entries {
                        // l2arc_log_blk_commit: the log block follows its payload.
                        let lb = l2.dev.log_blk_asize();
                        let daddr = l2.dev.hand;
                        l2.dev.ring.push(L2Ent::log_block(
                            (daddr >> l2.dev.ashift) as u32,
                            l2.dev.log_entries as u32,
                            lb as u32,
                        ));
                        l2.dev.hand += lb;
                        l2.dev.alloc += lb;
                        l2.dev.log_ent_idx = 0;
                        l2.lb_count += 1;
                        l2.lb_asize += lb;
                        write_asize += lb;
                        feed.log_blocks += 1;
                        self.st.l2_log_blk_writes += 1;
                        self.st.l2_write_bytes += lb;
                    }
                }
                cur = nxt;
            }
            if full {
                break;
            }
        }
        self.l2.as_mut().expect("device").index_feed(first_seq);
        if feed.buffers > 0 {
            self.st.l2_writes_sent += 1;
            self.st.l2_writes_done += 1;
            self.st.l2_write_bytes += write_psize;
        }
        let l2 = self.l2.as_mut().expect("device");
        if s08 && l2.dev.hand >= l2.dev.capacity.saturating_sub(target) {
            // 0.8: bump the hand to the start when approaching the end.
            l2.dev.hand = 0;
            l2.dev.first = false;
        }
        feed.bytes_written = write_psize;
        feed.asize_written = write_asize;
        feed
    }

    // ---- device loss, export and rebuild --------------------------------------------

    /// Drops every header's L2 part (l2arc_evict(dev, 0, B_TRUE)): L2-only headers are
    /// destroyed, headers in the ARC keep their L1 part. The device is not touched.
    fn l2_forget_all(&mut self) {
        let Some(l2) = self.l2.as_mut() else { return };
        let (head, tail) = (l2.dev.ring.head, l2.dev.ring.tail);
        for seq in head..tail {
            let l2 = self.l2.as_mut().expect("device");
            let e = *l2.dev.ring.get(seq);
            if e.is_dead() || e.is_log() {
                continue;
            }
            if let Some(i) = self.slab.find(e.key) {
                self.slab.hdrs[i as usize].flags &= !(F_L2 | F_L2PF);
                self.slab.l2_eligibility_changed(i);
                self.st.l2_evict_l1cached += 1;
            }
        }
        let l2 = self.l2.as_mut().expect("device");
        l2.index.clear();
        l2.l2only = 0;
        l2.lsize_sum = 0;
        l2.psize_sum = 0;
        l2.lb_count = 0;
        l2.lb_asize = 0;
    }

    /// The cache device's content is lost (an ephemeral device after a VM move, or a
    /// failed device replaced by an empty one): every L2 header goes and the device
    /// starts empty, still attached.
    pub fn l2arc_drop_all(&mut self) {
        self.l2_forget_all();
        if let Some(l2) = self.l2.as_mut() {
            let cfg =
                crate::cache::l2arc::L2arcDeviceConfig { capacity: l2.dev.capacity, ashift: l2.dev.ashift };
            let persistent = l2.s.persistent;
            *l2.dev = L2arcDeviceState::new(&cfg, persistent);
        }
    }

    /// Pool export or shutdown: the ARC forgets the device (its L2 headers go) and hands
    /// back the device with its content, to be given to [`Arc::l2arc_rebuild`] of the ARC
    /// built after the import/boot.
    pub fn l2arc_detach(&mut self) -> Option<Box<L2arcDeviceState>> {
        self.l2_forget_all();
        let l2 = self.l2.take()?;
        self.warm_on_evict = false;
        let mut dev = l2.dev;
        // Unreachable entries were still written and logged: a rebuild may restore them.
        let (head, tail) = (dev.ring.head, dev.ring.tail);
        for seq in head..tail {
            dev.ring.get_mut(seq).set_dead(false);
        }
        Some(dev)
    }

    /// Persistent L2ARC (2.0+): puts `old` (from [`Arc::l2arc_detach`]) under the attached
    /// device and restores L2-only headers from its committed log blocks, newest first
    /// (l2arc_rebuild / l2arc_log_blk_restore / l2arc_hdr_restore), stopping when
    /// l2arc_hdr_limit_reached (l2_rebuild_lowmem). Blocks after the last committed log
    /// block are lost and the write hand resumes after that log block. In 0.8, or with
    /// l2arc_rebuild_enabled = 0, or on a device too small for log blocks, nothing is
    /// restored and the device starts empty. Must be called right after attach_l2arc.
    pub fn l2arc_rebuild(&mut self, old: Box<L2arcDeviceState>) -> L2Rebuild {
        let mut r = L2Rebuild::default();
        let Some(l2) = self.l2.as_mut() else { return r };
        assert!(l2.index.is_empty() && l2.dev.ring.len() == 0, "rebuild onto a used device");
        if !l2.s.persistent {
            return r;
        }
        r.reads = 1;
        r.read_bytes = l2.dev.asize(DEV_HDR_SIZE);
        if !l2.s.rebuild_enabled || old.log_entries == 0 || old.capacity != l2.dev.capacity {
            return r;
        }
        l2.dev = old;
        let ring = &l2.dev.ring;
        // Log blocks whose whole payload is still on the device, oldest first.
        let mut run = 0u64;
        let mut valid: Vec<u64> = Vec::new();
        for seq in ring.head..ring.tail {
            let e = ring.get(seq);
            if e.is_log() {
                if run >= e.lsize() as u64 || !valid.is_empty() {
                    valid.push(seq);
                }
                run = 0;
            } else {
                run += 1;
            }
        }
        // Everything is unreachable until restored.
        let (head, tail) = (ring.head, ring.tail);
        for seq in head..tail {
            l2.dev.ring.get_mut(seq).set_dead(true);
        }
        l2.dev.alloc = 0;
        let Some(&last) = valid.last() else {
            let cfg =
                crate::cache::l2arc::L2arcDeviceConfig { capacity: l2.dev.capacity, ashift: l2.dev.ashift };
            *l2.dev = L2arcDeviceState::new(&cfg, true);
            return r;
        };
        // The open log block's payload is lost; the hand resumes after the newest log block.
        let lb = *l2.dev.ring.get(last);
        l2.dev.ring.truncate(last + 1);
        l2.dev.hand = ((lb.daddr() as u64) << l2.dev.ashift) + lb.psize() as u64;
        l2.dev.log_ent_idx = 0;
        l2.dev.evict = l2.dev.evict.max(l2.dev.hand);
        for &lbseq in valid.iter().rev() {
            if self.l2_hdr_limit_reached() {
                self.st.l2_rebuild_lowmem += 1;
                break;
            }
            let l2 = self.l2.as_mut().expect("device");
            let lb = *l2.dev.ring.get(lbseq);
            let n = lb.lsize() as u64;
            r.reads += 1;
            r.read_bytes += lb.psize() as u64;
            // arc_adapt(log_entries * HDR_L2ONLY_SIZE) lets arc_c grow for the headers.
            let grow = n * HDR_L2ONLY_SIZE;
            if self.v22() {
                self.adapt_22(grow);
            } else {
                self.adapt_08(grow, Some(State::L2cOnly));
            }
            let l2 = self.l2.as_mut().expect("device");
            l2.dev.ring.get_mut(lbseq).set_dead(false);
            l2.lb_count += 1;
            l2.lb_asize += lb.psize() as u64;
            l2.dev.alloc += lb.psize() as u64;
            for seq in (lbseq - n..lbseq).rev() {
                let l2 = self.l2.as_mut().expect("device");
                let e = *l2.dev.ring.get(seq);
                if l2.find(e.key).is_some() {
                    continue; // a newer copy was restored already
                }
                let asize = l2.dev.asize(e.psize() as u64);
                l2.dev.ring.get_mut(seq).set_dead(false);
                l2.index_insert(seq);
                l2.lsize_sum += e.lsize() as u64;
                l2.psize_sum += e.psize() as u64;
                l2.dev.alloc += asize;
                r.headers += 1;
                r.bytes += e.lsize() as u64;
                r.asize += asize;
                match self.slab.find(e.key) {
                    Some(i) => {
                        let h = &mut self.slab.hdrs[i as usize];
                        h.flags = (h.flags & !F_L2PF) | F_L2 | if e.prefetch() { F_L2PF } else { 0 };
                        h.l2seq = seq_bits(seq);
                    }
                    None => self.l2.as_mut().expect("device").l2only += 1,
                }
            }
            r.log_blocks += 1;
        }
        self.st.l2_rebuild_bufs += r.headers;
        self.st.l2_rebuild_size += r.bytes;
        self.st.l2_rebuild_asize += r.asize;
        self.st.l2_rebuild_log_blks += r.log_blocks;
        if r.log_blocks > 0 {
            self.st.l2_rebuild_success += 1;
        }
        r
    }

    /// Fills the L2 sizes of `s` (stats()).
    pub(crate) fn l2_fill_stats(&self, s: &mut super::ArcStats) {
        if let Some(l2) = &self.l2 {
            s.l2_size = l2.lsize_sum;
            s.l2_asize = l2.psize_sum;
            s.l2_hdr_size = l2.l2only * HDR_L2ONLY_SIZE;
            s.l2_log_blk_count = l2.lb_count;
            s.l2_log_blk_asize = l2.lb_asize;
        }
    }

    /// Simulator heap held by the L2ARC structures (ring chunks and index), bytes.
    pub fn l2arc_heap_bytes(&self) -> usize {
        self.l2.as_ref().map_or(0, |l| l.dev.ring.heap_bytes() + l.index.allocation_size())
    }
}
