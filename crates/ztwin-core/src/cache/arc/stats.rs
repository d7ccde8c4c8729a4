//! arcstats: the ARC's counters and sizes, named as in /proc/spl/kstat/zfs/arcstats, and
//! how a read is counted.
//!
//! # Sizes
//!
//! A cached block occupies `arc_hdr_size()` = psize with compressed ARC
//! (`zfs_compressed_arc_enabled`), else lsize, in `data_size` / `metadata_size` and in its
//! state's size; ghost states count lsize (as `arc_change_state()` does). Every header,
//! cached or ghost, costs `HDR_FULL_SIZE` bytes of `hdr_size`, which is part of `size`:
//! 288 B (0.6), 328 B (0.8), 320 B (2.1), 240 B (2.2), from the struct layout
//! ([`crate::config::ArcStructSizes::hdr_full`] gives the derivation and the commits).
//! What dbufs, dnodes and bonus buffers hold is counted by `bufs.rs`; L2-only headers by
//! the L2ARC ([`crate::cache::l2arc`]).
//!
//! # Counters per release
//!
//! The counters follow `arc_read()` (`module/zfs/arc.c` at zfs-0.8.6, zfs-2.1.16,
//! zfs-2.2.0): hits and misses by demand/prefetch and data/metadata, per-state hits,
//! `demand_hit_predictive_prefetch`; with [`crate::config::ArcAccessRules::WasPrefetch`]
//! (2.2) also the iohits of reads that found the block's I/O in progress; with
//! [`crate::config::ArcAdaptation::ArcP`] (0.6 .. 2.1) `p` and the `arc_meta_*` limits,
//! else (2.2) `meta`, `pd`, `pm`; `uncached_*` with the uncached state.

use super::slab::State;
use super::{Arc, T_DATA, T_META};
use crate::config::ArcAdaptation;

/// arcstats counters and sizes, named as in /proc/spl/kstat/zfs/arcstats.
///
/// Release-specific fields read 0 where the release has no such arcstat (`p`,
/// `arc_meta_*` before 2.2; `meta`, `pd`, `pm`, `uncached_*` in 2.2).
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)]
pub struct ArcStats {
    pub hits: u64,
    pub misses: u64,
    pub demand_data_hits: u64,
    pub demand_data_misses: u64,
    pub demand_metadata_hits: u64,
    pub demand_metadata_misses: u64,
    pub prefetch_data_hits: u64,
    pub prefetch_data_misses: u64,
    pub prefetch_metadata_hits: u64,
    pub prefetch_metadata_misses: u64,
    pub mru_hits: u64,
    pub mfu_hits: u64,
    pub mru_ghost_hits: u64,
    pub mfu_ghost_hits: u64,
    /// 2.2: hits on blocks in the UNCACHED state.
    pub uncached_hits: u64,
    pub deleted: u64,
    /// arcstats `arc_prune` (0.8/2.1): `arc_prune_async()` calls times the prune callbacks
    /// registered (taken as one: the mounted dataset the files are on). The balanced
    /// strategy's restarts call it on every second pass: 2048 times per
    /// `arc_adjust_meta_balanced` call (the source restarts 4096 times against its stale
    /// `arc_meta_used`; the model stops once passes evict nothing but counts them all).
    pub arc_prune: u64,
    /// Demand reads that found a block a predictive (zfetch) prefetch had read: 0.8/2.1
    /// count a read that did not wait for the prefetch; 2.2 any read that finds the
    /// prefetch flag (its in-progress reads count here too, not in
    /// demand_iohit_predictive_prefetch: 2.2 iohits are counted as hits).
    pub demand_hit_predictive_prefetch: u64,
    /// 2.2: reads that found the block's I/O in progress (arc_read's iohit path), in total
    /// and by type; they are in neither hits nor misses.
    pub iohits: u64,
    pub demand_data_iohits: u64,
    pub demand_metadata_iohits: u64,
    pub prefetch_data_iohits: u64,
    pub prefetch_metadata_iohits: u64,
    /// 2.2: iohits of demand reads on a predictive prefetch's block.
    pub demand_iohit_predictive_prefetch: u64,
    pub evict_skip: u64,
    pub size: u64,
    pub c: u64,
    pub c_min: u64,
    pub c_max: u64,
    /// 0.8/2.1: MRU target, bytes.
    pub p: u64,
    /// 2.2: metadata share of the live target, fixed point (2^32 = 1).
    pub meta: u64,
    /// 2.2: MRU share of data, fixed point.
    pub pd: u64,
    /// 2.2: MRU share of metadata, fixed point.
    pub pm: u64,
    pub data_size: u64,
    pub metadata_size: u64,
    pub hdr_size: u64,
    /// Separate (decompressed) buffers of dbufs, counted in data_size / metadata_size too.
    pub overhead_size: u64,
    /// sizeof (dmu_buf_impl_t) per live dbuf.
    pub dbuf_size: u64,
    /// sizeof (dnode_t) per dnode alive.
    pub dnode_size: u64,
    /// Bonus buffers of the dnodes alive.
    pub bonus_size: u64,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
    pub mru_size: u64,
    pub mru_data: u64,
    pub mru_metadata: u64,
    pub mfu_size: u64,
    pub mfu_data: u64,
    pub mfu_metadata: u64,
    pub mru_ghost_size: u64,
    pub mfu_ghost_size: u64,
    /// 2.2: bytes in the UNCACHED state.
    pub uncached_size: u64,
    /// 0.8/2.1: everything but data_size (here metadata buffers + headers).
    pub arc_meta_used: u64,
    pub arc_meta_limit: u64,
    pub arc_meta_min: u64,
    pub arc_meta_max: u64,
    // ---- L2ARC (zero without a cache device; see crate::cache::l2arc) ----
    pub l2_hits: u64,
    pub l2_misses: u64,
    pub l2_feeds: u64,
    pub l2_read_bytes: u64,
    /// Data psize plus log blocks written to the cache device.
    pub l2_write_bytes: u64,
    pub l2_writes_sent: u64,
    pub l2_writes_done: u64,
    pub l2_evict_l1cached: u64,
    /// 2.1+: feeds skipped by l2arc_hdr_limit_reached.
    pub l2_abort_lowmem: u64,
    /// Logical bytes on the cache device (arcstat_l2_lsize).
    pub l2_size: u64,
    /// Physical (psize, unrounded) bytes on the cache device (arcstat_l2_psize).
    pub l2_asize: u64,
    /// L2-only headers, HDR_L2ONLY_SIZE (96 B) each; part of `size`.
    pub l2_hdr_size: u64,
    pub evict_l2_cached: u64,
    pub evict_l2_eligible: u64,
    /// 2.1+.
    pub evict_l2_eligible_mfu: u64,
    /// 2.1+.
    pub evict_l2_eligible_mru: u64,
    pub evict_l2_ineligible: u64,
    /// 2.1+ persistent L2ARC.
    pub l2_log_blk_writes: u64,
    pub l2_log_blk_asize: u64,
    pub l2_log_blk_count: u64,
    pub l2_rebuild_success: u64,
    /// arcstat "l2_rebuild_lowmem".
    pub l2_rebuild_lowmem: u64,
    pub l2_rebuild_size: u64,
    pub l2_rebuild_asize: u64,
    pub l2_rebuild_bufs: u64,
    pub l2_rebuild_log_blks: u64,
}

impl Arc {
    /// A snapshot of the counters and current sizes.
    pub fn stats(&self) -> ArcStats {
        let mut s = self.st.clone();
        s.size = self.size();
        s.c = self.c;
        s.c_min = self.c_min;
        s.c_max = self.c_max;
        let [od, om] = self.consumers.overhead();
        s.data_size = self.data_size + od;
        let pins = self.consumers.pins;
        s.metadata_size = self.metadata_size + om + pins.hdr_bytes;
        s.overhead_size = od + om;
        s.dbuf_size = self.consumers.dbuf_size();
        s.dnode_size = self.consumers.dnode_size();
        s.bonus_size = self.consumers.bonus_size();
        s.hdr_size = self.hdr_size() + self.consumers.buf_hdrs();
        s.compressed_size = self.data_size + self.metadata_size + pins.hdr_bytes;
        s.uncompressed_size = self.uncompressed_size + pins.lsize;
        s.mru_data = self.state_size(State::Mru, T_DATA);
        s.mru_metadata = self.state_size(State::Mru, T_META);
        s.mru_size = s.mru_data + s.mru_metadata;
        s.mfu_data = self.state_size(State::Mfu, T_DATA);
        s.mfu_metadata = self.state_size(State::Mfu, T_META);
        s.mfu_size = s.mfu_data + s.mfu_metadata;
        s.mru_ghost_size = self.sbytes(State::MruGhost);
        s.mfu_ghost_size = self.sbytes(State::MfuGhost);
        match self.f.adaptation {
            ArcAdaptation::MetaBalance => {
                s.meta = self.meta;
                s.pd = self.pd;
                s.pm = self.pm;
            }
            ArcAdaptation::ArcP => {
                s.p = self.p;
                s.arc_meta_used = self.meta_used();
                s.arc_meta_limit = self.meta_limit;
                s.arc_meta_min = self.meta_min;
                s.arc_meta_max = self.meta_max;
            }
        }
        if self.f.uncached_state {
            s.uncached_size = self.ssize(State::Uncached);
        }
        self.l2_fill_stats(&mut s);
        s
    }

    /// 2.2 arc_read's iohit: iohits and the per-type counter.
    pub(super) fn count_iohit(&mut self, prefetch: bool, meta: bool) {
        let s = &mut self.st;
        s.iohits += 1;
        *match (prefetch, meta) {
            (false, false) => &mut s.demand_data_iohits,
            (false, true) => &mut s.demand_metadata_iohits,
            (true, false) => &mut s.prefetch_data_iohits,
            (true, true) => &mut s.prefetch_metadata_iohits,
        } += 1;
    }

    /// One hit or miss of a read, by type.
    pub(in crate::cache) fn count(&mut self, hit: bool, prefetch: bool, meta: bool) {
        let s = &mut self.st;
        let c = match (hit, prefetch, meta) {
            (true, false, false) => &mut s.demand_data_hits,
            (true, false, true) => &mut s.demand_metadata_hits,
            (true, true, false) => &mut s.prefetch_data_hits,
            (true, true, true) => &mut s.prefetch_metadata_hits,
            (false, false, false) => &mut s.demand_data_misses,
            (false, false, true) => &mut s.demand_metadata_misses,
            (false, true, false) => &mut s.prefetch_data_misses,
            (false, true, true) => &mut s.prefetch_metadata_misses,
        };
        *c += 1;
        if hit {
            s.hits += 1;
        } else {
            s.misses += 1;
        }
    }

    /// arcstat_meta_max (0.6 .. 2.1): the largest `arc_meta_used` seen.
    pub(super) fn note_meta_max(&mut self) {
        match self.f.adaptation {
            ArcAdaptation::ArcP => {
                let m = self.meta_used();
                if m > self.meta_max {
                    self.meta_max = m;
                }
            }
            ArcAdaptation::MetaBalance => {}
        }
    }
}
