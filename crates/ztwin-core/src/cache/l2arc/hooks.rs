//! The ARC's side of the L2ARC: attaching a device, and the hooks the ARC's read and
//! eviction paths call: may a read use a header's L2 copy (`arc_read()`), the
//! ARC_FLAG_L2CACHE eligibility a read sets, the `evict_l2_*` counters of
//! `arc_evict_hdr()`, a ghost header becoming L2-only (`arc_hdr_realloc()` to
//! `HDR_L2ONLY_SIZE`), and the read of a block known only to the L2ARC
//! (`arc_l2c_only`). Theory (the `arc_read()`, `arc_evict_hdr()`, `arc_access()` and
//! header-cap paragraphs), sources and simplifications: [`crate::cache::l2arc`].
//!
//! These methods are the ARC's ([`Arc`]): they read and write its headers (the
//! `pub(in crate::cache)` fields of `cache::arc`).
//!
//! Every `expect` of the cache device here holds by construction: these methods run only
//! while a device is attached (the driver feeds, restarts and rebuilds only a pool whose
//! `cache_devices` is not empty, and `new_arc` attached those devices, `attach_l2arc` having
//! succeeded; a header has `F_L2` or is L2-only only while its device is attached; a packed location
//! names a device the ARC has, `attach_l2arc` having sized the packing for them).

use super::attached::{seq_width, Dwpd, L2Dev, L2};
use super::device::L2arcDeviceState;
use super::index::{L2Index, L2Loc, SEQ_MASK};
use super::{L2arcParams, L2arcTunables, HDR_L2ONLY_SIZE, MAX_CACHE_DEVICES};
use crate::cache::arc::slab::{
    Header, State, F2_PREDICTIVE, F_INDIRECT, F_L2, F_L2CACHE, F_L2PF, F_META, F_PREFETCH, NIL,
};
use crate::cache::arc::{Arc, ArcAccess, ArcStats, BlockInfo, BlockKey, BufType, ReadFlags};
use crate::config::ArcAccessRules;
use crate::error::Result;
use crate::sim::time::{Nanos, SEC};

/// What the read path needs to know about a block's L2 copy before the ARC transition.
#[derive(Clone, Copy)]
pub(crate) struct L2Probe {
    /// The block has an L2 copy that this read may use.
    pub read: bool,
    /// A cache device exists.
    pub attached: bool,
}

impl Arc {
    /// Attaches the pool's (empty) cache devices, in order: `l2arc_add_vdev()` of each.
    /// Errors if the tunables do not exist in the ARC's release, if there is no device or
    /// more than [`MAX_CACHE_DEVICES`], or if a device has more sectors than a packed
    /// location holds (`attached.rs`).
    pub fn attach_l2arc(&mut self, params: &L2arcParams) -> Result<()> {
        let s = params.config.tunables.resolve(self.release, params.patch)?;
        let devices = &params.config.devices;
        let n = devices.len();
        if n == 0 || n > MAX_CACHE_DEVICES {
            return Err(crate::error::Error::config(
                "filesystem.cache",
                format!("{n} cache devices: 1 to {MAX_CACHE_DEVICES} are modelled"),
            ));
        }
        let width = seq_width(n);
        let max_sectors = (1u64 << width) - 1;
        let mut devs = Vec::with_capacity(n);
        for d in devices {
            if d.capacity >> d.ashift > max_sectors {
                return Err(crate::error::Error::config(
                    "filesystem.cache",
                    format!(
                        "a cache device of {} bytes at ashift {} is not modelled: with {n} cache devices at most 2^{width} - 1 sectors each ({} GiB at ashift 9, {} GiB at ashift 12)",
                        d.capacity,
                        d.ashift,
                        (max_sectors + 1) >> 21,
                        (max_sectors + 1) >> 18
                    ),
                ));
            }
            devs.push(L2Dev {
                dev: Box::new(L2arcDeviceState::new(d, s.features.persistent)),
                dwpd: Dwpd::default(),
            });
        }
        debug_assert!(width <= 31 && SEQ_MASK as u64 >= max_sectors);
        let sectors: u64 = devices.iter().map(|d| d.capacity >> d.ashift).sum();
        let index = L2Index::new(params.expected_blocks.min(sectors) as usize, &params.key_space);
        self.warm_on_evict = params.arc_warm_at_first_eviction;
        self.l2 = Some(Box::new(L2 {
            s,
            tunables: params.config.tunables.clone(),
            patch: params.patch,
            devs,
            dev_last: None,
            seq_width: width,
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

    /// The cache devices were attached (`l2arc_add_vdev()`) at `now`: their DWPD periods
    /// start then (`l2ad_dwpd_start`). Devices attached with the pool at time 0 need no call.
    pub fn l2arc_attached_at(&mut self, now: Nanos) {
        if let Some(l2) = self.l2.as_mut() {
            for d in &mut l2.devs {
                d.dwpd.start_s = now / SEC;
            }
        }
    }

    /// Sets L2ARC module parameters at run time (`echo N >
    /// /sys/module/zfs/parameters/l2arc_*`): the ones `t` sets replace the current values,
    /// and the feed uses them from its next pass. Errors if no cache device is attached or
    /// a parameter does not exist in the release.
    pub fn retune_l2arc(&mut self, t: &L2arcTunables) -> Result<()> {
        let release = self.release;
        let Some(l2) = self.l2.as_mut() else {
            return Err(crate::error::Error::config("phases", "L2ARC parameters set with no cache device"));
        };
        let tunables = l2.tunables.overridden_by(t);
        let s = tunables.resolve(release, l2.patch)?;
        if s.per_device_feed != l2.s.per_device_feed {
            // Master's threads come with the devices (l2arc_add_vdev); there is no switch.
            return Err(crate::error::Error::config(
                "l2arc.per_device_feed",
                "is not a module parameter (master's per-device feed threads come with the devices): set it in [filesystem.l2arc], not in a tune phase",
            ));
        }
        // param_set_l2arc_dwpd_limit: a changed value bumps l2arc_dwpd_bump.
        if s.dwpd_limit != l2.s.dwpd_limit {
            for d in &mut l2.devs {
                d.dwpd.bump_pending = true;
            }
        }
        l2.s = s;
        l2.tunables = tunables;
        Ok(())
    }

    /// Master's per-device feed threads (the what-if `per_device_feed`, b525525b44): the
    /// driver runs one feed thread per device ([`Arc::l2arc_feed_dev`]) instead of the
    /// releases' one ([`Arc::l2arc_feed`]). False without a cache device.
    pub fn l2arc_per_device_feed(&self) -> bool {
        self.l2.as_ref().is_some_and(|l| l.s.per_device_feed)
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

    /// The (first) cache device, if attached.
    pub fn l2arc_device(&self) -> Option<&L2arcDeviceState> {
        self.l2arc_device_at(0)
    }

    /// Cache device `d` (in the order of `filesystem.cache`), if attached.
    pub fn l2arc_device_at(&self, d: usize) -> Option<&L2arcDeviceState> {
        self.l2.as_ref().and_then(|l| l.devs.get(d)).map(|x| &*x.dev)
    }

    /// Cache devices attached.
    pub fn l2arc_ndev(&self) -> usize {
        self.l2.as_ref().map_or(0, |l| l.devs.len())
    }

    /// True if `key` has a copy on a cache device reachable from memory.
    pub fn l2_contains(&self, key: BlockKey) -> bool {
        self.l2.as_ref().is_some_and(|l| l.find(key.0).is_some())
    }

    /// The byte address on its cache device (`b_l2hdr.b_daddr`) of the copy an
    /// [`ArcAccess::L2Hit`] named by its `loc` (valid until the next feed pass).
    pub fn l2_daddr(&self, loc: u32) -> u64 {
        self.l2.as_ref().map_or(0, |l| l.daddr_of(loc))
    }

    /// The cache device (its number) holding the copy of `key` reachable from memory.
    pub fn l2_device_of(&self, key: BlockKey) -> Option<usize> {
        self.l2.as_ref().and_then(|l| l.find(key.0)).map(|(d, _)| d)
    }

    /// Blocks on the cache device reachable from memory (in the ARC or L2-only).
    pub fn l2arc_blocks(&self) -> usize {
        self.l2.as_ref().map_or(0, |l| l.blocks())
    }

    /// l2_hdr_size: L2-only headers.
    pub(in crate::cache) fn l2_hdr_size(&self) -> u64 {
        self.l2.as_ref().map_or(0, |l| l.l2only * HDR_L2ONLY_SIZE)
    }

    // ---- hooks used by the read and eviction paths ----------------------------------

    /// Before a ghost transition: may this read use the header's L2 copy?
    pub(in crate::cache) fn l2_probe_hdr(&self, i: u32, read_prefetch: bool) -> L2Probe {
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
    pub(in crate::cache) fn l2_after_read(
        &mut self,
        i: u32,
        key: u64,
        meta: bool,
        done: bool,
        pf_at_done: bool,
    ) {
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

    /// After a write: `arc_write()` sets ARC_FLAG_L2CACHE when `dbuf_write()` passes
    /// `l2arc` (the dataset's `secondarycache` covers the block), or in 2.2+ ARC_FLAG_UNCACHED
    /// instead when the dataset caches no data (`uncached`; arc.c zfs-0.8.6, zfs-2.1.16,
    /// zfs-2.2.7, zfs-2.3.2 `arc_write()`). `i` is the new header's slot; left alone if it
    /// is already gone.
    pub(in crate::cache) fn l2_after_write(&mut self, i: u32, key: u64, meta: bool, uncached: bool) {
        if self.l2.is_some() && !uncached {
            self.l2_after_read(i, key, meta, false, false);
        }
    }

    /// arc_evict_hdr on a live header: the evict_l2_* counters.
    pub(in crate::cache) fn l2_count_evict(&mut self, i: u32, state: State) {
        let Some(l2) = &self.l2 else { return };
        let by_state = l2.s.features.eligible_by_state;
        let h = self.slab.hdrs[i as usize];
        let lsize = h.lsize as u64;
        if h.flags & F_L2 != 0 {
            self.st.evict_l2_cached += lsize;
        } else if h.flags & F_L2CACHE != 0 {
            self.st.evict_l2_eligible += lsize;
            if by_state {
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
    pub(in crate::cache) fn delete_ghost(&mut self, i: u32) {
        let h = self.slab.hdrs[i as usize];
        if h.flags & F_L2 != 0 {
            let l2 = self.l2.as_mut().expect("F_L2 only with a cache device (module note)");
            debug_assert_eq!(l2.find(h.key), Some(l2.seq(h.l2seq)), "l2seq locates the header's L2 copy");
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
    pub(in crate::cache) fn l2_destroy_hdr(&mut self, l2seq: u32) {
        let l2 = self.l2.as_mut().expect("F_L2 only with a cache device (module note)");
        let (d, seq) = l2.seq(l2seq);
        l2.kill(d, seq);
    }

    /// arc_hdr_destroy of an L2-only header (arc_l2c_only), at entry `seq` of device `d`:
    /// a write replaced the block, so the copy becomes unreachable and the header goes.
    pub(in crate::cache) fn l2_destroy_l2only(&mut self, (d, seq): (usize, u64)) {
        let l2 = self.l2.as_mut().expect("L2-only headers only with a cache device (module note)");
        l2.kill(d, seq);
        l2.l2only -= 1;
    }

    /// A read of a block known only to the L2ARC (arc_l2c_only): realloc to a full header,
    /// arc_access (0.6 .. 2.1 -> MFU, 2.2 -> MRU), data allocation. Returns the device read
    /// (psize, asize, the device's number) if the L2 copy is used, else None (read from
    /// the pool).
    pub(in crate::cache) fn l2only_read(
        &mut self,
        key: BlockKey,
        info: BlockInfo,
        flags: ReadFlags,
        loc: L2Loc,
        now: Nanos,
    ) -> Option<(u32, u32, u8)> {
        let rules = self.f.access;
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        // The caller reads the copy's address (`Arc::l2_daddr`) after the work below.
        l2.prefetch_entry(loc.seq);
        l2.l2only -= 1;
        let stale_pf = loc.prefetch;
        // Header flags after arc_read: 0.6 .. 2.1 keep the stale flag and add a prefetch;
        // 2.2's arc_access sets or clears it per this read.
        let pf = match rules {
            ArcAccessRules::AddReferenceFirst => stale_pf || flags.prefetch,
            ArcAccessRules::WasPrefetch => flags.prefetch,
        };
        let read = l2.read_ok(pf, flags.prefetch);
        let meta = info.kind == BufType::Metadata;
        let mut f = F_L2 | if meta { F_META } else { 0 };
        if key.level() > 0 {
            f |= F_INDIRECT;
        }
        if pf {
            f |= F_PREFETCH;
        }
        if stale_pf {
            f |= F_L2PF;
        }
        let asize = self.asize_of(&info);
        let i = self.slab.alloc(Header {
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
            flags2: match rules {
                ArcAccessRules::AddReferenceFirst if flags.prefetch => F2_PREDICTIVE,
                ArcAccessRules::AddReferenceFirst | ArcAccessRules::WasPrefetch => 0,
            },
        });
        // arc_adapt sees an arc_l2c_only header: no ghost adaptation.
        self.adapt(asize as u64, Some(State::L2cOnly), meta);
        match rules {
            ArcAccessRules::AddReferenceFirst => {
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
            ArcAccessRules::WasPrefetch => {
                // "Treat it as new": MRU.
                self.enter(i, State::Mru);
                self.count(false, flags.prefetch, meta);
            }
        }
        self.l2_after_read(i, key.0, meta, true, pf);
        let l2 = self.l2.as_ref().expect("a cache device is attached (module note)");
        let (d, seq) = l2.seq(loc.seq);
        let dev = &l2.devs[d].dev;
        // The copy's size is the block's (a rewrite would have dropped the copy).
        debug_assert_eq!(dev.ring.get(seq).psize(), info.psize);
        read.then(|| (info.psize, dev.asize(asize as u64) as u32, d as u8))
    }

    /// The read's outcome for a header that was on a ghost list (its L2 copy, if any, at
    /// packed location `l2seq`).
    pub(in crate::cache) fn l2_outcome(
        &mut self,
        l2_read: bool,
        attached: bool,
        (psize, hsize, l2seq): (u32, u32, u32),
        ghost: bool,
    ) -> ArcAccess {
        if l2_read {
            self.st.l2_hits += 1;
            self.st.l2_read_bytes += psize as u64;
            let l2 = self.l2.as_ref().expect("an L2 read needs a cache device (module note)");
            let dev = (l2seq >> l2.seq_width) as u8;
            let asize = l2.dev_of(l2seq).asize(hsize as u64) as u32;
            ArcAccess::L2Hit { psize, asize, dev, loc: l2seq }
        } else {
            if attached {
                self.st.l2_misses += 1;
            }
            ArcAccess::Miss { ghost }
        }
    }

    /// Fills the L2 sizes of `s` (stats()).
    pub(in crate::cache) fn l2_fill_stats(&self, s: &mut ArcStats) {
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
        self.l2.as_ref().map_or(0, |l| {
            l.devs.iter().map(|d| d.dev.ring.heap_bytes()).sum::<usize>() + l.index.allocation_size()
        })
    }
}
