//! The OpenZFS ARC (adaptive replacement cache), byte-sized, per release.
//!
//! # Theory
//!
//! One [`Arc::read`] is one `arc_read()` (or `arc_buf_access()`) of a block by the ZFS read
//! path. The model keeps a header per block in one of the states MRU, MFU, MRU_GHOST,
//! MFU_GHOST (and UNCACHED in 2.2), each with a data list and a metadata list in LRU order,
//! and applies the release's `arc_access()` transitions, target adaptation and eviction:
//!
//! - **0.8 / 2.1** (`module/zfs/arc.c` at zfs-0.8.6 / zfs-2.1.16): `arc_access()`,
//!   `arc_adapt()` (byte-valued `arc_p`, grown on MRU-ghost hits and shrunk on MFU-ghost
//!   hits with the ghost-size ratio as multiplier; `arc_c` grows by the allocation while
//!   `size >= c - 32 MiB`), `arc_get_data_impl()` (arc_p growth on anonymous allocations),
//!   `arc_adjust()` (renamed `arc_evict()` in 2.1): first `arc_adjust_meta_balanced()` when
//!   `arc_meta_used > arc_meta_limit`, then MRU down towards `arc_p`, then MFU, choosing the
//!   type with the older tail (`arc_adjust_type()`) unless `arc_meta_used <= arc_meta_min`,
//!   then ghost trimming (`mru + mru_ghost <= c`, `mru_ghost + mfu_ghost <= c`).
//!   `arc_init()` / `arc_tuning_update()` for the limits. 2.1 differs only in the initial
//!   `arc_c` (c_min instead of c_max), the `p < c/2` condition on the two p growth rules,
//!   and how a small `zfs_arc_max` lowers `c_min` (2.1 `arc_init`; 0.8 ignores such a
//!   `zfs_arc_max`).
//! - **0.6** (the illumos ARC of 2012 that FreeBSD 8.3-9.x shipped; arc.c at zfs-0.6.1,
//!   line for line the same): 0.8's `arc_access()`, `arc_adapt()` and arc_p growth on
//!   anonymous allocations (no 2.1.7 guard), `arc_c` starting at `c_max`,
//!   `arc_meta_limit` = `c_max / 4`, no compressed ARC (see simplification 10 for its
//!   eviction).
//! - **2.2** (arc.c at zfs-2.2.0, PR #14359): no arc_p; `arc_meta`, `arc_pd`, `arc_pm`
//!   fixed-point fractions (2^32 = 1) adjusted at every `arc_evict()` pass by
//!   `arc_evict_adj()` from the ghost-hit bytes since the previous pass, against the ghost
//!   caps computed at the end of the previous pass; eviction order MRU metadata, MFU
//!   metadata, MRU data, MFU data; each ghost list capped at half of the other three live
//!   lists; `arc_adapt()` only grows `c` by `max(bytes, 128 KiB)`; a block flagged
//!   uncacheable enters `arc_uncached`.
//!
//! Sizes: a cached block occupies `arc_hdr_size()` = psize with compressed ARC
//! (`zfs_compressed_arc_enabled`), else lsize, in `data_size` / `metadata_size` and in its
//! state's size; ghost states count lsize (as `arc_change_state()` does). Every header,
//! cached or ghost, costs `HDR_FULL_SIZE` bytes of `hdr_size`, which is part of `size`.
//! `HDR_FULL_SIZE` per release, from the struct layout on 64-bit Linux (non-debug build,
//! kernel `struct mutex` of 32 B, SPL `kmutex_t` 48 B, `kcondvar_t` 72 B,
//! `zfs_refcount_t` 8 B): the common part (`b_dva` .. `b_spa`) is 56 B and the L2 part
//! 40 B (the 96 B L2-only header); the L1 part is 232 B in 0.8 (freeze lock, freeze
//! checksum, `b_buf`, `b_bufcnt`, `b_cv`, ...), 224 B in 2.1 (fields reordered); in 2.2 the
//! L1 part lost the lock and condvar (88 B) but `HDR_FULL_SIZE` became
//! `sizeof (arc_buf_hdr_t)`, including the 56 B crypt part. Hence 328 B (0.8), 320 B (2.1),
//! 240 B (2.2).
//!
//! # Simplifications (numbered; each is a deliberate departure from OpenZFS)
//!
//! 1. Lists are exact LRU; OpenZFS uses multilists with max(ncpu, 4) sublists and evicts
//!    from a randomly chosen sublist, so its order is only approximately LRU.
//! 2. Eviction runs synchronously inside [`Arc::read`] whenever an insertion leaves
//!    `size > c` (an allocation in `arc_get_data_impl()` is what wakes the eviction
//!    thread; a hit allocates nothing and evicts nothing). The real `arc_evict` thread runs asynchronously; in 0.8/2.1 it is woken
//!    only once `size >= c + max(16 MiB, c >> 8)` (`arc_is_overflowing`) and then evicts
//!    down to `c`, so the real ARC floats a little above `c`.
//! 3. No memory pressure: `arc_no_grow` is always false, `arc_reclaim_needed()` false,
//!    `c` never shrinks (no `arc_shrink`, no `arc_reap`).
//! 4. References are the dbufs' only: a header a dbuf holds (`add_reference`, with its
//!    buffer: [`Arc::dbuf_created`]) is off its evictable list until the dbuf goes
//!    (`bufs.rs`); reads take and drop theirs at once, and I/O completes instantly in the
//!    ARC (no `IO_IN_PROGRESS` state: the driver knows which reads are in flight and calls
//!    [`Arc::io_wait`] for a read that finds one, the 2.2 iohit), and
//!    `arc_prune_async()` (dnode/dentry release) is a no-op.
//!    A demand access re-inserts the header at the head of its list (as `remove_reference`
//!    does); a prefetch access that finds the block cached takes no reference and leaves it
//!    in place.
//! 5. The consumers' memory (the dbufs' decompressed copies, `overhead_size`; dbufs,
//!    dnodes, bonus buffers) is modelled in `bufs.rs`, with its own simplifications; the
//!    dbuf cache itself is the caller's.
//! 6. `uncacheable` reads (primarycache excludes the block): 0.8/2.1 apply the normal
//!    transitions and counters and then destroy the header outright (the dbuf release calls
//!    `arc_freed()`), so no ghost is left; 2.2 puts a new block in UNCACHED: a demand read
//!    is destroyed at once (`remove_reference`), a prefetch stays until
//!    `arc_min_prefetch_ms` (1 s) after its last access and is then flushed (the real flush
//!    runs every 500 ms, so it lives 1 to 1.5 s). A hit or ghost hit on a block already
//!    known to the ARC follows the normal rules in 2.2 (as the source does).
//! 7. Prescient prefetch and encryption are not modelled (the L2ARC and `l2c_only` are:
//!    [`crate::cache::l2arc`], `l2.rs`). The minimum
//!    life of prefetched and indirect buffers (`zfs_arc_min_prefetch_ms`, 1 s) is
//!    honoured, but an eviction scan passes at most [`MAX_SKIP_SCAN`] protected headers
//!    before giving up on that list (OpenZFS scans whole sublists).
//! 8. `arc_adjust_meta_balanced()` restarts up to `zfs_arc_meta_adjust_restarts` (4096)
//!    times with the stale `meta_used` it was given, as in the source (so one pass can
//!    evict far more than the excess); the model stops restarting once a data pass and a
//!    metadata pass both evict nothing, which cannot change the outcome.
//! 9. The 2.2 `arc_evict_adj()` result is clamped to [0, 2^32]; C would wrap.
//! 10. 0.6 evicts on each allocation (`arc_get_data_buf`: an MRU or anonymous insert takes
//!     the MFU tail if `arc_p > anon + mru`, else the MRU tail; an MFU insert takes the MRU
//!     tail if `arc_c - arc_p > mfu`, else the MFU tail) and its `arc_adjust()` runs once a
//!     second; the model uses 0.8's `arc_adjust()` after each insert, which evicts MRU down
//!     to `arc_p` first and then MFU: the same victim whenever the ARC is full.
//!
//! Where the source disagrees with OPENZFS-FACTS.md we follow the source: in 0.8/2.1 a
//! demand hit on a prefetched MRU block clears ARC_FLAG_PREFETCH in `add_reference()`
//! *before* `arc_access()`, so it is promoted to MFU if more than 62 ms passed since the
//! prefetch (2.2 fixed this with `was_prefetch`).
//!
//! # Tunables (zfs(4) names; value 0 in [`ArcTunables`] = release default)
//!
//! - `zfs_arc_max`: 0 = RAM/2 (`arc_default_max`, 2.x: max(RAM/2, c_min)); applied only if
//!   at least 64 MiB and below RAM; 0.8 also ignores it unless above c_min
//!   (`arc_tuning_update`); 2.1+ lowers c_min to max(zfs_arc_max/2, 32 MiB) when c_min is
//!   not below it (`arc_init`).
//! - `zfs_arc_min`: 0 = max(RAM/32, 32 MiB); applied if >= 32 MiB and <= c_max.
//! - `zfs_arc_meta_limit` (0.8/2.1): 0 = `zfs_arc_meta_limit_percent` (75) % of c_max.
//! - `zfs_arc_meta_min` (0.8/2.1): 0 = 16 MiB (1 << SPA_MAXBLOCKSHIFT).
//! - `zfs_arc_meta_balance` (2.2): 0 = 500.
//! - `zfs_compressed_arc_enabled`: taken as given (OpenZFS default 1 since 0.7.0).
//! - Fixed at their defaults: `zfs_arc_p_min_shift` 4, `zfs_arc_p_dampener_disable` 1
//!   (multiplier uncapped), `zfs_arc_meta_adjust_restarts` 4096, `zfs_arc_meta_strategy`
//!   balanced, `zfs_arc_min_prefetch_ms` 1000, ARC_MINTIME 62 ms (hz >> 4 at HZ=1000).

mod bufs;
mod l2;
mod l2index;
#[cfg(test)]
mod l2tests;
mod slab;
#[cfg(test)]
mod tests;

use slab::{
    list_index, Header, Slab, State, F2_HELD, F2_PREDICTIVE, F_INDIRECT, F_L2, F_LCOPY, F_META, F_PREFETCH,
    F_SKIPWIN, NIL,
};

pub use bufs::{dbuf_copy_bytes, struct_sizes, ABD_SCATTER_MIN_SIZE};
pub use l2index::L2KeySpace;

use crate::config::{ArcTunables, ZfsRelease};
use crate::sim::time::Nanos;

/// Identity of a block: object, level, block id packed in one u64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockKey(pub u64);

impl BlockKey {
    /// Bits of the block id.
    pub const BLKID_BITS: u32 = 36;
    /// Bits of the level.
    pub const LEVEL_BITS: u32 = 4;
    /// Packs object (< 2^24), level (< 16) and block id (< 2^36).
    pub fn new(object: u32, level: u8, blkid: u64) -> Self {
        debug_assert!(object < (1 << 24) && level < 16 && blkid < (1 << Self::BLKID_BITS));
        BlockKey(((object as u64) << 40) | ((level as u64) << Self::BLKID_BITS) | blkid)
    }
    /// Object number.
    pub fn object(self) -> u32 {
        (self.0 >> 40) as u32
    }
    /// Indirection level (0 = data record).
    pub fn level(self) -> u8 {
        ((self.0 >> Self::BLKID_BITS) & 0xf) as u8
    }
    /// Block id within the level.
    pub fn blkid(self) -> u64 {
        self.0 & ((1 << Self::BLKID_BITS) - 1)
    }
}

/// Data or metadata, as arc_buf_contents_t (ARC_BUFC_DATA / ARC_BUFC_METADATA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufType {
    /// ZPL file and zvol records.
    Data,
    /// Indirect blocks, dnodes, ZAP, ... (dbuf_is_metadata).
    Metadata,
}

/// Sizes and type of a block, as its block pointer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Logical (uncompressed) size, bytes.
    pub lsize: u32,
    /// Physical size after compression and rounding to the sector, bytes (= lsize if stored uncompressed).
    pub psize: u32,
    /// Data or metadata.
    pub kind: BufType,
}

/// How the block is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadFlags {
    /// ARC_FLAG_PREFETCH: a speculative read.
    pub prefetch: bool,
    /// false when primarycache excludes this block (it is read but not kept).
    pub uncacheable: bool,
}

/// Outcome of one ARC read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcRead {
    /// Served from memory.
    Hit,
    /// Must be read from the pool; `ghost` tells whether the header was on a ghost list.
    Miss {
        /// The block was in MRU-ghost or MFU-ghost.
        ghost: bool,
    },
}

/// Outcome of one ARC read with a possible L2ARC ([`Arc::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcAccess {
    /// Served from memory.
    Hit,
    /// Absent from memory (an ARC miss in arcstats) but valid on the cache device: the
    /// caller reads `asize` bytes from the cache device (`psize` of them are the block);
    /// the block is then in the ARC as after any miss.
    L2Hit {
        /// HDR_GET_PSIZE: the block's physical size (`l2_read_bytes` counts this).
        psize: u32,
        /// Bytes read from the cache device: arc_hdr_size rounded up to its sector.
        asize: u32,
    },
    /// Must be read from the pool; `ghost` tells whether the header was on a ghost list.
    Miss {
        /// The block was in MRU-ghost or MFU-ghost.
        ghost: bool,
    },
}

/// Parameters of the ARC: the release, the machine's RAM and the tunables.
#[derive(Debug, Clone)]
pub struct ArcParams {
    /// Release whose behaviour is modelled.
    pub release: ZfsRelease,
    /// Physical memory, bytes (defaults of c_max and c_min derive from it).
    pub ram_bytes: u64,
    /// Module parameters.
    pub tunables: ArcTunables,
}

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

/// 32 MiB: 2 << SPA_MAXBLOCKSHIFT, the floor of c_min and the growth window of arc_adapt.
const TWO_MAXBLOCKS: u64 = 2 << 24;
/// 16 MiB: 1 << SPA_MAXBLOCKSHIFT, default arc_meta_min.
const META_MIN_DEFAULT: u64 = 1 << 24;
/// 64 MiB: MIN_ARC_MAX, the smallest zfs_arc_max accepted.
const MIN_ARC_MAX: u64 = 64 << 20;
/// ARC_MINTIME: hz >> 4 ticks = 62 ms at HZ=1000.
pub const ARC_MINTIME: Nanos = 62_000_000;
/// arc_min_prefetch_ms = 1000 (zfs_arc_min_prefetch_ms = 0 default).
pub const ARC_MIN_PREFETCH: Nanos = 1_000_000_000;
/// zfs_arc_meta_adjust_restarts default (0.8/2.1).
const META_ADJUST_RESTARTS: u32 = 4096;
/// arc_p_min_shift default (0.8/2.1).
const P_MIN_SHIFT: u32 = 4;
/// SPA_OLD_MAXBLOCKSIZE: 2.2 arc_adapt grows c by at least this.
const OLD_MAXBLOCKSIZE: u64 = 128 << 10;
/// Fixed-point one for arc_meta / arc_pd / arc_pm.
const FRAC_ONE: u64 = 1 << 32;
/// At most this many protected (prefetch/indirect, younger than 1 s) headers are passed
/// over per list scan (simplification 7).
pub const MAX_SKIP_SCAN: u32 = 64;

/// sizeof the full (L1 + L2) ARC header counted in hdr_size, per release (64-bit Linux).
pub fn hdr_full_size(release: ZfsRelease) -> u64 {
    match release {
        // zfs-0.6.1 arc.c `struct arc_buf_hdr`: one struct with the freeze lock, a
        // condvar and the L2 pointer and list node.
        ZfsRelease::V0_6 => 288,
        ZfsRelease::V0_8 => 328,
        ZfsRelease::V2_1 => 320,
        ZfsRelease::V2_2 => 240,
    }
}

/// The limits arc_init()/arc_tuning_update() derive from RAM and the tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcLimits {
    /// arc_c_min
    pub c_min: u64,
    /// arc_c_max
    pub c_max: u64,
    /// initial arc_c
    pub c: u64,
    /// initial arc_p (0.8/2.1)
    pub p: u64,
    /// arc_meta_limit (0.8/2.1)
    pub meta_limit: u64,
    /// arc_meta_min (0.8/2.1)
    pub meta_min: u64,
}

impl ArcLimits {
    /// Computes the limits as the release's arc_init() + arc_tuning_update() do.
    pub fn from_params(params: &ArcParams) -> ArcLimits {
        let ram = params.ram_bytes;
        let t = &params.tunables;
        let mut c_min = (ram / 32).max(TWO_MAXBLOCKS);
        let (mut c_max, mut c, mut p);
        match params.release {
            // 0.6 (zfs-0.6.1 arc_init; FreeBSD's takes c_max from vfs.zfs.arc_max the same
            // way): c = c_max, p = c / 2.
            ZfsRelease::V0_6 | ZfsRelease::V0_8 => {
                c_max = ram / 2;
                c = c_max;
                p = c >> 1;
                // arc_tuning_update: zfs_arc_max first, and only above c_min.
                if t.zfs_arc_max != 0
                    && t.zfs_arc_max >= MIN_ARC_MAX
                    && t.zfs_arc_max < ram
                    && t.zfs_arc_max > c_min
                {
                    c_max = t.zfs_arc_max;
                    c = c_max;
                    p = c >> 1;
                }
                if t.zfs_arc_min != 0 && t.zfs_arc_min >= TWO_MAXBLOCKS && t.zfs_arc_min <= c_max {
                    c_min = t.zfs_arc_min;
                    c = c.max(c_min);
                }
            }
            ZfsRelease::V2_1 | ZfsRelease::V2_2 => {
                c_max = (ram / 2).max(c_min);
                if t.zfs_arc_max != 0 && t.zfs_arc_max >= MIN_ARC_MAX && t.zfs_arc_max < ram {
                    c_max = t.zfs_arc_max;
                    if c_min >= c_max {
                        c_min = (t.zfs_arc_max / 2).max(TWO_MAXBLOCKS);
                    }
                }
                c = c_min;
                p = c >> 1;
                if t.zfs_arc_min != 0 && t.zfs_arc_min >= TWO_MAXBLOCKS && t.zfs_arc_min <= c_max {
                    c_min = t.zfs_arc_min;
                    c = c.max(c_min);
                }
            }
        }
        c = c.max(c_min);
        // arc_meta_min / arc_meta_limit (0.8/2.1; computed for 2.2 too but unused there).
        let mut meta_min = META_MIN_DEFAULT;
        let pct = params.release.features().meta_limit_pct;
        let mut meta_limit = meta_min.max(pct * c_max / 100);
        if t.zfs_arc_meta_min != 0 && t.zfs_arc_meta_min >= META_MIN_DEFAULT && t.zfs_arc_meta_min <= c_max {
            meta_min = t.zfs_arc_meta_min;
            meta_limit = meta_limit.max(meta_min);
        }
        let limit = if t.zfs_arc_meta_limit != 0 { t.zfs_arc_meta_limit } else { pct * c_max / 100 };
        if limit >= meta_min && limit <= c_max {
            meta_limit = limit;
        }
        ArcLimits { c_min, c_max, c, p, meta_limit, meta_min }
    }
}

/// The ARC of one pool (all datasets share it).
pub struct Arc {
    release: ZfsRelease,
    compressed: bool,
    hdr_full: u64,
    slab: Slab,
    c: u64,
    c_min: u64,
    c_max: u64,
    p: u64,
    meta_limit: u64,
    meta_min: u64,
    meta_max: u64,
    // 2.2 fractions and eviction memory.
    meta: u64,
    pd: u64,
    pm: u64,
    meta_balance: u64,
    /// Ghost-hit bytes since the last arc_evict pass: [mru_ghost data, mru_ghost meta,
    /// mfu_ghost data, mfu_ghost meta].
    ghost_hit_bytes: [u64; 4],
    /// Ghost caps from the last arc_evict pass (gsrd, gsrm, gsfd, gsfm).
    ghost_caps: [u64; 4],
    data_size: u64,
    metadata_size: u64,
    uncompressed_size: u64,
    /// What dbufs, dnodes and bonus buffers hold (`bufs.rs`).
    consumers: bufs::Consumers,
    /// 0.6: blocks whose header was evicted or destroyed while an unheld dbuf had its
    /// buffer (F2_USER): the eviction callbacks the dbuf layer runs.
    user_evicts: Vec<BlockKey>,
    st: ArcStats,
    /// The cache device, if any.
    l2: Option<Box<l2::L2>>,
    /// arc_warm: ends the L2ARC write boost and head-first feed scans.
    arc_warm: bool,
    /// Turn arc_warm on at the first eviction of a live buffer (facts-page rule).
    warm_on_evict: bool,
    /// Use the remembered skip windows (off only in tests that compare both ways).
    skip_memo: bool,
    /// Resume L2 feed scans after their ineligible tail runs (off only in tests that
    /// compare both ways).
    l2run_memo: bool,
    /// Scans answered from a remembered skip window, and scans that slid one forward.
    #[cfg(test)]
    skip_memo_used: u64,
    /// Feed scans that resumed after an L2 run.
    #[cfg(test)]
    l2run_resumed: u64,
    #[cfg(test)]
    skip_memo_slid: u64,
    /// Windows that expired out of order and were passed again from their records.
    #[cfg(test)]
    skip_memo_rescanned: u64,
}

const T_DATA: bool = false;
const T_META: bool = true;

impl Arc {
    /// Builds an empty ARC with the release's limits for this RAM and these tunables.
    pub fn new(params: &ArcParams) -> Arc {
        let l = ArcLimits::from_params(params);
        let mb = params.tunables.zfs_arc_meta_balance;
        Arc {
            release: params.release,
            compressed: params.tunables.zfs_compressed_arc_enabled
                && params.release.features().compressed_arc,
            hdr_full: hdr_full_size(params.release),
            slab: Slab::new(),
            c: l.c,
            c_min: l.c_min,
            c_max: l.c_max,
            p: l.p,
            meta_limit: l.meta_limit,
            meta_min: l.meta_min,
            meta_max: 0,
            meta: FRAC_ONE / 4,
            pd: FRAC_ONE / 2,
            pm: FRAC_ONE / 2,
            meta_balance: if mb == 0 { 500 } else { mb },
            ghost_hit_bytes: [0; 4],
            ghost_caps: [0; 4],
            data_size: 0,
            metadata_size: 0,
            uncompressed_size: 0,
            consumers: bufs::Consumers::new(params.release),
            user_evicts: Vec::new(),
            st: ArcStats::default(),
            l2: None,
            arc_warm: false,
            warm_on_evict: false,
            skip_memo: true,
            l2run_memo: true,
            #[cfg(test)]
            skip_memo_used: 0,
            #[cfg(test)]
            l2run_resumed: 0,
            #[cfg(test)]
            skip_memo_slid: 0,
            #[cfg(test)]
            skip_memo_rescanned: 0,
        }
    }

    /// arc_p may grow past arc_c / 2 (no 2.1.7 guard).
    fn p_grows_past_half(&self) -> bool {
        !self.release.features().arc_p_growth_guard
    }

    fn v22(&self) -> bool {
        self.release == ZfsRelease::V2_2
    }

    /// arcstat size: data + metadata + headers + L2-only headers, and what consumers
    /// hold (their buffers' copies, dbufs, dnodes, bonus buffers: `bufs.rs`).
    pub fn size(&self) -> u64 {
        self.data_size + self.metadata_size + self.hdr_size() + self.l2_hdr_size() + self.consumers.size()
    }

    /// arc_c, the target size.
    pub fn c(&self) -> u64 {
        self.c
    }

    fn hdr_size(&self) -> u64 {
        self.slab.len() as u64 * self.hdr_full
    }

    /// arc_meta_used (0.8/2.1): everything but data (the headers' data buffers and the
    /// dbufs' copies of data blocks).
    fn meta_used(&self) -> u64 {
        self.size() - self.data_size - self.consumers.overhead()[0]
    }

    /// A state's arcs_size (evictable, held, and the held headers' copies).
    fn ssize(&self, s: State) -> u64 {
        self.state_size(s, T_DATA) + self.state_size(s, T_META)
    }

    fn lbytes(&self, s: State, meta: bool) -> u64 {
        self.slab.lists[list_index(s, meta)].bytes
    }

    fn sbytes(&self, s: State) -> u64 {
        self.lbytes(s, T_DATA) + self.lbytes(s, T_META)
    }

    /// True if the block is cached with data (MRU, MFU or UNCACHED), not ghost.
    pub fn contains(&self, key: BlockKey) -> bool {
        self.slab.find(key.0).is_some_and(|i| self.slab.hdrs[i as usize].state.is_live())
    }

    /// Number of headers (cached and ghost).
    pub fn headers(&self) -> usize {
        self.slab.len()
    }

    /// A snapshot of the counters and current sizes.
    pub fn stats(&self) -> ArcStats {
        let mut s = self.st.clone();
        s.size = self.size();
        s.c = self.c;
        s.c_min = self.c_min;
        s.c_max = self.c_max;
        let [od, om] = self.consumers.overhead();
        s.data_size = self.data_size + od;
        s.metadata_size = self.metadata_size + om;
        s.overhead_size = od + om;
        s.dbuf_size = self.consumers.dbuf_size();
        s.dnode_size = self.consumers.dnode_size();
        s.bonus_size = self.consumers.bonus_size();
        s.hdr_size = self.hdr_size() + self.consumers.buf_hdrs();
        s.compressed_size = self.data_size + self.metadata_size;
        s.uncompressed_size = self.uncompressed_size;
        s.mru_data = self.state_size(State::Mru, T_DATA);
        s.mru_metadata = self.state_size(State::Mru, T_META);
        s.mru_size = s.mru_data + s.mru_metadata;
        s.mfu_data = self.state_size(State::Mfu, T_DATA);
        s.mfu_metadata = self.state_size(State::Mfu, T_META);
        s.mfu_size = s.mfu_data + s.mfu_metadata;
        s.mru_ghost_size = self.sbytes(State::MruGhost);
        s.mfu_ghost_size = self.sbytes(State::MfuGhost);
        if self.v22() {
            s.meta = self.meta;
            s.pd = self.pd;
            s.pm = self.pm;
            s.uncached_size = self.ssize(State::Uncached);
        } else {
            s.p = self.p;
            s.arc_meta_used = self.meta_used();
            s.arc_meta_limit = self.meta_limit;
            s.arc_meta_min = self.meta_min;
            s.arc_meta_max = self.meta_max;
        }
        self.l2_fill_stats(&mut s);
        s
    }

    // ---- state changes with accounting -------------------------------------------------

    /// Moves header `i` (already unlinked) to `to` at the head of its list, fixing sizes.
    fn enter(&mut self, i: u32, to: State) {
        let h = &mut self.slab.hdrs[i as usize];
        let was_live = h.state.is_live();
        let from = h.state;
        h.state = to;
        if h.flags2 & F2_HELD != 0 {
            self.held_moves(i, from, to);
        }
        let h = &mut self.slab.hdrs[i as usize];
        let (meta, asize, lsize) = (h.is_meta(), h.asize() as u64, h.lsize as u64);
        let now_live = to.is_live();
        if was_live != now_live {
            let sz = if meta { &mut self.metadata_size } else { &mut self.data_size };
            if now_live {
                *sz += asize;
                self.uncompressed_size += lsize;
            } else {
                *sz -= asize;
                self.uncompressed_size -= lsize;
            }
        }
        self.slab.push_head(i);
    }

    /// Destroys header `i` (already unlinked): its data and its header bytes go, and
    /// its L2 copy becomes unreachable.
    fn destroy(&mut self, i: u32) {
        self.user_evict(i);
        let h = self.slab.hdrs[i as usize];
        if h.flags2 & F2_HELD != 0 {
            // The model destroyed a header a dbuf holds (simplification 4): the copy stays.
            self.held_moves(i, h.state, State::Free);
        }
        if h.flags & F_L2 != 0 {
            self.l2_destroy_hdr(h.l2seq);
        }
        if h.state.is_live() {
            if h.is_meta() {
                self.metadata_size -= h.asize() as u64;
            } else {
                self.data_size -= h.asize() as u64;
            }
            self.uncompressed_size -= h.lsize as u64;
        }
        self.slab.free(i);
    }

    fn note_meta_max(&mut self) {
        if !self.v22() {
            let m = self.meta_used();
            if m > self.meta_max {
                self.meta_max = m;
            }
        }
    }

    // ---- the read ----------------------------------------------------------------------

    /// One arc_read()/arc_buf_access() of `key` without an L2ARC: hit or miss, with the
    /// release's state transitions, adaptation and (synchronous) eviction. Allocates
    /// nothing once the header slab and table have reached their high-water mark. With a
    /// cache device attached use [`Arc::access`] (an L2 hit would read as a miss here).
    pub fn read(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) -> ArcRead {
        debug_assert!(self.l2.is_none(), "Arc::read with an L2ARC attached: use Arc::access");
        match self.access(key, info, flags, now) {
            ArcAccess::Hit => ArcRead::Hit,
            ArcAccess::Miss { ghost } => ArcRead::Miss { ghost },
            ArcAccess::L2Hit { .. } => ArcRead::Miss { ghost: false },
        }
    }

    /// Starts bringing into the CPU caches what a coming [`Arc::access`] of `key` reads
    /// first (its L2ARC index slot); changes nothing.
    #[inline]
    pub fn prefetch(&self, key: BlockKey) {
        self.slab.prefetch(key.0);
        if let Some(l2) = &self.l2 {
            l2.prefetch(key.0);
        }
    }

    /// One arc_read()/arc_buf_access() of `key`, with the L2ARC if attached: a block
    /// absent from memory but on the cache device is an [`ArcAccess::L2Hit`] (l2_hits),
    /// any other miss counts l2_misses. Same transitions, adaptation and eviction as
    /// [`Arc::read`]; allocates nothing in steady state.
    pub fn access(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) -> ArcAccess {
        if self.v22() {
            self.flush_uncached(now);
        }
        let meta = info.kind == BufType::Metadata;
        let found = self.slab.find(key.0);
        let r = match found {
            Some(i) if self.slab.hdrs[i as usize].state.is_live() => {
                if self.v22() {
                    self.hit_22(i, flags, now, false)
                } else {
                    self.hit_08(i, flags, now)
                }
                self.l2_after_read(i, key.0, meta, false, false);
                ArcAccess::Hit
            }
            Some(i) => {
                let probe = self.l2_probe_hdr(i, flags.prefetch);
                let h = self.slab.hdrs[i as usize];
                if self.v22() {
                    self.ghost_22(i, info, flags, now)
                } else {
                    self.ghost_08(i, info, flags, now)
                }
                if probe.attached {
                    let stale = h.flags & F_PREFETCH != 0;
                    let pf_done = if self.v22() { flags.prefetch } else { stale || flags.prefetch };
                    self.l2_after_read(i, key.0, meta, true, pf_done);
                }
                self.l2_outcome(probe.read, probe.attached, h.psize, h.asize(), true)
            }
            None => match self.l2.as_ref().and_then(|l| l.locate(key.0)) {
                Some(loc) => match self.l2only_read(key, info, flags, loc, now) {
                    Some((psize, asize)) => {
                        self.st.l2_hits += 1;
                        self.st.l2_read_bytes += psize as u64;
                        ArcAccess::L2Hit { psize, asize }
                    }
                    None => {
                        self.st.l2_misses += 1;
                        ArcAccess::Miss { ghost: false }
                    }
                },
                None => {
                    let i = self.new_block(key, info, flags, now, true);
                    if self.l2.is_some() {
                        self.l2_after_read(i, key.0, meta, true, flags.prefetch);
                        self.st.l2_misses += 1;
                    }
                    ArcAccess::Miss { ghost: false }
                }
            },
        };
        self.note_meta_max();
        if r != ArcAccess::Hit {
            // Only an allocation (arc_get_data_impl) wakes the eviction thread: a hit
            // allocates nothing and evicts nothing (arc.c@zfs-0.8.6, @zfs-2.2.0).
            self.evict_if_over(now);
        }
        r
    }

    /// arc_get_data_impl's wake-up of arc_adjust / arc_evict: eviction runs (at once, see
    /// simplification 2) when the allocation leaves `size > c`.
    fn evict_if_over(&mut self, now: Nanos) {
        if self.size() > self.c {
            if self.v22() {
                self.evict_22(now);
            } else {
                self.adjust_08(now);
            }
        }
    }

    /// arc_read of a block whose read is in progress (the caller waits for it, or a
    /// prefetch finds it already coming). 0.8/2.1 clear ARC_FLAG_PREDICTIVE_PREFETCH
    /// without counting, so a later demand hit does not count either, and change nothing
    /// else. 2.2 counts an iohit and calls arc_access: the prefetch flag follows the read,
    /// ARC_FLAG_L2CACHE is set, the header goes to its list's head as the read completes,
    /// without promotion. If the model has evicted the header meanwhile (it has no
    /// references to stop that; the real ARC cannot), the iohit is only counted.
    pub fn io_wait(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        if !self.v22() {
            if let Some(i) = self.slab.find(key.0) {
                self.slab.hdrs[i as usize].flags2 &= !F2_PREDICTIVE;
            }
            return;
        }
        self.flush_uncached(now);
        let meta = info.kind == BufType::Metadata;
        match self.slab.find(key.0).filter(|&i| self.slab.hdrs[i as usize].state.is_live()) {
            Some(i) => {
                self.hit_22(i, flags, now, true);
                self.l2_after_read(i, key.0, meta, false, false);
            }
            None => self.count_iohit(flags.prefetch, meta),
        }
    }

    /// arc_write_done of a block's new version (copy on write): the old version's header
    /// and its L2 copy go (its DVA is freed), and the new buffer moves from anon to MRU
    /// by arc_access (2.2: UNCACHED if the dataset caches no data), counting neither a
    /// hit nor a miss. Eviction as after a read.
    pub fn write_done(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        if self.v22() {
            self.flush_uncached(now);
        }
        if let Some(i) = self.slab.find(key.0) {
            self.slab.unlink(i);
            self.destroy(i);
        } else if let Some(seq) = self.l2.as_ref().and_then(|l| l.find(key.0)) {
            self.l2_destroy_l2only(seq);
        }
        self.new_block(key, info, ReadFlags { prefetch: false, ..flags }, now, false);
        self.note_meta_max();
        self.evict_if_over(now);
    }

    /// The read's outcome for a header that was on a ghost list.
    fn l2_outcome(
        &mut self,
        l2_read: bool,
        attached: bool,
        psize: u32,
        hsize: u32,
        ghost: bool,
    ) -> ArcAccess {
        if l2_read {
            self.st.l2_hits += 1;
            self.st.l2_read_bytes += psize as u64;
            let asize = self.l2.as_ref().map_or(hsize as u64, |l| l.dev.asize(hsize as u64)) as u32;
            ArcAccess::L2Hit { psize, asize }
        } else {
            if attached {
                self.st.l2_misses += 1;
            }
            ArcAccess::Miss { ghost }
        }
    }

    /// 2.2 arc_read's iohit: iohits and the per-type counter.
    fn count_iohit(&mut self, prefetch: bool, meta: bool) {
        let s = &mut self.st;
        s.iohits += 1;
        *match (prefetch, meta) {
            (false, false) => &mut s.demand_data_iohits,
            (false, true) => &mut s.demand_metadata_iohits,
            (true, false) => &mut s.prefetch_data_iohits,
            (true, true) => &mut s.prefetch_metadata_iohits,
        } += 1;
    }

    fn count(&mut self, hit: bool, prefetch: bool, meta: bool) {
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

    /// F_LCOPY when buffers are kept uncompressed (zfs_compressed_arc_enabled = 0).
    fn copy_flag(&self) -> u8 {
        if self.compressed {
            0
        } else {
            F_LCOPY
        }
    }

    fn asize_of(&self, info: &BlockInfo) -> u32 {
        if self.compressed {
            info.psize
        } else {
            info.lsize
        }
    }

    /// A new header: arc_hdr_alloc (header bytes), arc_adapt + data allocation in anon,
    /// then arc_access (anon -> MRU, or UNCACHED in 2.2).
    /// Returns the header's slot (freed again if the block is not kept).
    fn new_block(
        &mut self,
        key: BlockKey,
        info: BlockInfo,
        flags: ReadFlags,
        now: Nanos,
        demand: bool,
    ) -> u32 {
        let meta = info.kind == BufType::Metadata;
        let mut f = if meta { F_META } else { 0 };
        if key.level() > 0 {
            f |= F_INDIRECT;
        }
        if flags.prefetch {
            f |= F_PREFETCH;
        }
        let asize = self.asize_of(&info);
        let h = Header {
            key: key.0,
            access: now,
            prev: NIL,
            next: NIL,
            lsize: info.lsize,
            psize: info.psize,
            l2seq: 0,
            state: State::Free,
            flags: f | self.copy_flag(),
            flags2: if flags.prefetch && !self.v22() { F2_PREDICTIVE } else { 0 },
        };
        // The header is allocated (hdr_size grows) before its data buffer.
        let i = self.slab.alloc(h);
        let bytes = asize as u64;
        if self.v22() {
            self.adapt_22(bytes);
            let to = if flags.uncacheable { State::Uncached } else { State::Mru };
            self.enter(i, to);
            if demand {
                self.count(false, flags.prefetch, meta);
            }
            if flags.uncacheable && !flags.prefetch {
                // remove_reference: a demand-read uncached buffer dies on release.
                self.slab.unlink(i);
                self.destroy(i);
            }
        } else {
            self.adapt_08(bytes, None);
            // arc_get_data_impl: anonymous data outgrowing arc_p while below c grows p.
            let size_after = self.size() + bytes;
            let mru_anon = self.ssize(State::Mru) + bytes;
            if size_after < self.c && mru_anon > self.p && (self.p_grows_past_half() || self.p < self.c >> 1)
            {
                self.p = self.c.min(self.p + bytes);
            }
            self.enter(i, State::Mru);
            if demand {
                self.count(false, flags.prefetch, meta);
            }
            if flags.uncacheable {
                self.slab.unlink(i);
                self.destroy(i);
            }
        }
        i
    }

    /// 0.8/2.1 hit on MRU or MFU.
    fn hit_08(&mut self, i: u32, flags: ReadFlags, now: Nanos) {
        let h = &mut self.slab.hdrs[i as usize];
        if !flags.prefetch && h.flags2 & F2_PREDICTIVE != 0 {
            // A read with a done callback finding the completed predictive prefetch.
            h.flags2 &= !F2_PREDICTIVE;
            self.st.demand_hit_predictive_prefetch += 1;
        }
        let h = &mut self.slab.hdrs[i as usize];
        // add_reference() on a demand read clears the prefetch flag; a prefetch read with
        // no reference held sets it (arc_read hit path).
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        let meta = h.is_meta();
        let state = h.state;
        let mut to = state;
        match state {
            State::Mru => {
                if h.flags & F_PREFETCH != 0 {
                    // Another prefetch, refcount 0: only the access time moves.
                    h.access = now;
                } else {
                    if now > h.access + ARC_MINTIME {
                        h.access = now;
                        to = State::Mfu;
                    }
                    self.st.mru_hits += 1;
                }
            }
            State::Mfu => {
                h.access = now;
                self.st.mfu_hits += 1;
            }
            _ => unreachable!("hit on a non-cached state"),
        }
        self.count(true, flags.prefetch, meta);
        if flags.uncacheable {
            // dbuf release of an uncacheable dbuf: arc_freed() destroys the header.
            self.slab.unlink(i);
            self.destroy(i);
        } else if !flags.prefetch || to != state {
            self.slab.unlink(i);
            self.enter(i, to);
        } else {
            self.touched_in_place(i);
        }
    }

    /// 0.8/2.1 hit on a ghost header: arc_adapt, arc_access, data allocation.
    fn ghost_08(&mut self, i: u32, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        let _ = info;
        let h = self.slab.hdrs[i as usize];
        let bytes = h.asize() as u64;
        self.adapt_08(bytes, Some(h.state));
        // arc_access sees the flag left from the header's previous life, refcount 0.
        let stale_prefetch = h.flags & F_PREFETCH != 0;
        let to = match h.state {
            State::MruGhost => {
                self.st.mru_ghost_hits += 1;
                if stale_prefetch {
                    State::Mru
                } else {
                    State::Mfu
                }
            }
            State::MfuGhost => {
                self.st.mfu_ghost_hits += 1;
                if stale_prefetch {
                    State::Mru
                } else {
                    State::Mfu
                }
            }
            _ => unreachable!(),
        };
        let hm = &mut self.slab.hdrs[i as usize];
        hm.access = now;
        if flags.prefetch {
            // arc_read's miss path: the final prefetch of dbuf_prefetch is predictive (a
            // flag left from the header's previous life stays, as in the source).
            hm.flags |= F_PREFETCH;
            hm.flags2 |= F2_PREDICTIVE;
        }
        // Counted with the header's flag after arc_read set it (a stale prefetch flag makes
        // a demand ghost miss count as a prefetch miss, as in the source).
        let pf = hm.flags & F_PREFETCH != 0;
        let meta = hm.is_meta();
        self.slab.unlink(i);
        self.enter(i, to);
        self.count(false, pf, meta);
        if !flags.prefetch {
            // arc_read_done: the demand buffer's add_reference clears the flag.
            self.slab.hdrs[i as usize].flags &= !F_PREFETCH;
        }
        if flags.uncacheable {
            self.slab.unlink(i);
            self.destroy(i);
        }
    }

    /// 0.8/2.1 arc_adapt: arc_p on ghost hits, arc_c (and arc_p for anon) growth.
    fn adapt_08(&mut self, bytes: u64, ghost: Option<State>) {
        let p_min = self.c >> P_MIN_SHIFT;
        let mrug = self.sbytes(State::MruGhost);
        let mfug = self.sbytes(State::MfuGhost);
        match ghost {
            Some(State::MruGhost) => {
                // zfs_arc_p_dampener_disable = 1: the multiplier is not capped at 10.
                let mult = if mrug >= mfug { 1 } else { mfug / mrug };
                self.p = (self.c - p_min).min(self.p + bytes * mult);
            }
            Some(State::MfuGhost) => {
                let mult = if mfug >= mrug { 1 } else { mrug / mfug };
                let delta = (bytes * mult).min(self.p);
                self.p = p_min.max(self.p - delta);
            }
            _ => {}
        }
        if self.c >= self.c_max {
            return;
        }
        if self.size() >= self.c.saturating_sub(TWO_MAXBLOCKS) {
            self.c += bytes;
            if self.c > self.c_max {
                self.c = self.c_max;
            } else if ghost.is_none() && (self.p_grows_past_half() || self.p < self.c >> 1) {
                self.p += bytes;
            }
            if self.p > self.c {
                self.p = self.c;
            }
        }
    }

    /// 2.2 hit on MRU, MFU or UNCACHED.
    /// 2.2 arc_access of a cached header: a hit, or (`io`) an iohit, a read finding the
    /// header's I/O in progress, which counts in iohits, neither promotes nor counts
    /// mru/mfu/uncached hits.
    fn hit_22(&mut self, i: u32, flags: ReadFlags, now: Nanos, io: bool) {
        let h = &mut self.slab.hdrs[i as usize];
        let was_prefetch = h.flags & F_PREFETCH != 0;
        if was_prefetch && !flags.prefetch {
            // arc_access: the prefetch flag goes (ARC_FLAG_PRESCIENT_PREFETCH is never set:
            // the model's prefetches are zfetch's, predictive).
            if io {
                self.st.demand_iohit_predictive_prefetch += 1;
            } else {
                self.st.demand_hit_predictive_prefetch += 1;
            }
        }
        let h = &mut self.slab.hdrs[i as usize];
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        let meta = h.is_meta();
        let state = h.state;
        let mut to = state;
        match state {
            State::Mru if io => h.access = now,
            State::Mru => {
                self.st.mru_hits += 1;
                if was_prefetch {
                    h.access = now;
                } else if now > h.access + ARC_MINTIME {
                    h.access = now;
                    to = State::Mfu;
                }
            }
            State::Mfu => {
                self.st.mfu_hits += u64::from(!io);
                h.access = now;
            }
            State::Uncached => {
                self.st.uncached_hits += u64::from(!io);
                h.access = now;
            }
            _ => unreachable!("hit on a non-cached state"),
        }
        if io {
            self.count_iohit(flags.prefetch, meta);
        } else {
            self.count(true, flags.prefetch, meta);
        }
        if state == State::Uncached && !flags.prefetch {
            self.slab.unlink(i);
            self.destroy(i);
        } else if !flags.prefetch || to != state {
            self.slab.unlink(i);
            self.enter(i, to);
        } else {
            self.touched_in_place(i);
        }
    }

    /// 2.2 hit on a ghost header: arc_access (ghost-hit bytes recorded), then the data
    /// allocation runs arc_adapt.
    fn ghost_22(&mut self, i: u32, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        let _ = info;
        let h = &mut self.slab.hdrs[i as usize];
        let was_prefetch = h.flags & F_PREFETCH != 0;
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        h.access = now;
        let meta = h.is_meta();
        let bytes = h.asize() as u64;
        let to = match h.state {
            State::MruGhost => {
                self.st.mru_ghost_hits += 1;
                self.ghost_hit_bytes[meta as usize] += bytes;
                if was_prefetch {
                    State::Mru
                } else {
                    State::Mfu
                }
            }
            State::MfuGhost => {
                self.st.mfu_ghost_hits += 1;
                self.ghost_hit_bytes[2 + meta as usize] += bytes;
                State::Mfu
            }
            _ => unreachable!(),
        };
        self.slab.unlink(i);
        // arc_hdr_alloc_abd -> arc_get_data_impl -> arc_adapt sees size before the data.
        self.adapt_22(bytes);
        self.enter(i, to);
        self.count(false, flags.prefetch, meta);
    }

    /// 2.2 arc_adapt: grow c only.
    fn adapt_22(&mut self, bytes: u64) {
        if self.c >= self.c_max {
            return;
        }
        if self.size() + TWO_MAXBLOCKS >= self.c {
            self.c = (self.c + bytes.max(OLD_MAXBLOCKSIZE)).min(self.c_max);
        }
    }

    /// 2.2: prefetched uncached buffers are flushed once past their minimum life.
    fn flush_uncached(&mut self, now: Nanos) {
        for meta in [T_DATA, T_META] {
            loop {
                let t = self.slab.lists[list_index(State::Uncached, meta)].tail;
                if t == NIL || self.slab.hdrs[t as usize].access + ARC_MIN_PREFETCH > now {
                    break;
                }
                self.slab.unlink(t);
                self.destroy(t);
            }
        }
    }

    // ---- eviction ----------------------------------------------------------------------

    /// arc_evict_state for one list: evicts from the tail until `bytes` (state bytes) are
    /// gone. Live headers become ghosts (UNCACHED ones are destroyed); ghost headers are
    /// deleted. Prefetched and indirect buffers younger than 1 s are skipped. (A remembered
    /// window that answers the whole scan is taken by [`Arc::window_answers`] first.)
    #[inline(never)]
    fn evict_list(&mut self, state: State, meta: bool, bytes: u64, now: Nanos) -> u64 {
        let li = list_index(state, meta);
        if state.is_ghost() {
            return self.evict_ghosts(li, bytes);
        }
        let mut scan = Scan { evicted: 0, skips: 0, until: Nanos::MAX, mono: true, last_exp: 0, last: NIL };
        let mut cur = self.slab.lists[li].tail;
        let w = self.slab.skip[li];
        if w.skips > 0 {
            if self.skip_memo && (now < w.until || w.mono) {
                // Protection ends in window order (or not yet at all), so what expired is
                // a tail prefix: the scan evicts it, passes the rest of the window and goes
                // on beyond it.
                let mut left = w.skips;
                if now >= w.until {
                    while left > 0 && scan.evicted < bytes {
                        let h = self.slab.hdrs[cur as usize];
                        if protected(&h, now) {
                            break;
                        }
                        self.evict_live(cur, state, &mut scan);
                        left -= 1;
                        cur = h.prev;
                    }
                    if scan.evicted >= bytes {
                        return scan.evicted;
                    }
                }
                if left > 0 {
                    #[cfg(test)]
                    {
                        self.skip_memo_slid += 1;
                    }
                    let w = self.slab.skip[li];
                    self.st.evict_skip += left as u64;
                    // The window's remaining members are its first `left` recorded (the
                    // evicted ones left it through `unlink`); the scan records after them.
                    scan.skips = left;
                    scan.until = if now < w.until {
                        w.until
                    } else {
                        self.slab.hdrs[cur as usize].access + ARC_MIN_PREFETCH
                    };
                    scan.mono = w.mono;
                    scan.last_exp = w.last_exp;
                    scan.last = w.last;
                    cur = self.slab.hdrs[w.last as usize].prev;
                    if cur == NIL || left >= MAX_SKIP_SCAN {
                        // The scan gives up here: it passed the whole list, or as many
                        // protected headers as it may (`until` may have been a lower bound,
                        // its earliest member having left).
                        self.remember_window(li, &scan);
                        return scan.evicted;
                    }
                }
            } else if self.skip_memo {
                // Its protection no longer ends in order: the scan starts over from the
                // tail, where the window's members are, deciding each from its recorded
                // end of protection; then it goes on beyond them.
                match self.rescan_window(li, state, bytes, now, &mut scan) {
                    Some(beyond) => cur = beyond,
                    None => {
                        self.remember_window(li, &scan);
                        return scan.evicted;
                    }
                }
            } else {
                // Shortcuts off: the scan starts over from the tail.
                self.slab.forget_window(li);
            }
        }
        while scan.evicted < bytes && cur != NIL {
            let h = self.slab.hdrs[cur as usize];
            let prev = h.prev;
            if protected(&h, now) {
                self.st.evict_skip += 1;
                scan.pass(&mut self.slab.win[li], cur, h.access + ARC_MIN_PREFETCH);
                self.slab.hdrs[cur as usize].flags |= F_SKIPWIN;
                if scan.skips >= MAX_SKIP_SCAN || prev == NIL {
                    // Gave up, or passed the whole list.
                    break;
                }
            } else {
                self.evict_live(cur, state, &mut scan);
            }
            cur = prev;
        }
        // What the scan passed is the list's tail-most run, all protected: the headers
        // between them were evicted.
        self.remember_window(li, &scan);
        scan.evicted
    }

    /// The first part of a scan of live list `li` whose remembered window has expired out
    /// of order: passes or evicts each member, tail first, as a scan from the tail would
    /// (`scan` records what it passed). Returns the list's first header beyond the window,
    /// where the scan goes on, or None when it ends there (enough evicted, or
    /// `MAX_SKIP_SCAN` passed, or the window was the whole list).
    fn rescan_window(
        &mut self,
        li: usize,
        state: State,
        bytes: u64,
        now: Nanos,
        scan: &mut Scan,
    ) -> Option<u32> {
        let w = self.slab.skip[li];
        let n = w.skips as usize;
        // The list's first header beyond the window (evicting members leaves it in place).
        let beyond = self.slab.hdrs[w.last as usize].prev;
        self.slab.skip[li] = slab::SkipWindow::default();
        #[cfg(test)]
        {
            self.skip_memo_rescanned += 1;
        }
        // The members passed again are recorded in place (never after the one being read).
        for k in 0..n {
            let (i, exp) = (self.slab.win[li].slot[k], self.slab.win[li].exp[k]);
            if scan.evicted >= bytes {
                // Not reached: no longer a member.
                self.slab.hdrs[i as usize].flags &= !F_SKIPWIN;
                continue;
            }
            debug_assert_eq!(exp, self.slab.hdrs[i as usize].access + ARC_MIN_PREFETCH);
            if now < exp {
                self.st.evict_skip += 1;
                scan.pass(&mut self.slab.win[li], i, exp);
            } else {
                self.slab.hdrs[i as usize].flags &= !F_SKIPWIN;
                self.evict_live(i, state, scan);
            }
        }
        let ends = scan.evicted >= bytes || scan.skips >= MAX_SKIP_SCAN || beyond == NIL;
        (!ends).then_some(beyond)
    }

    /// Records the protected headers `scan` passed as list `li`'s window (none: no window).
    fn remember_window(&mut self, li: usize, scan: &Scan) {
        self.slab.skip[li] = if scan.skips == 0 {
            slab::SkipWindow::default()
        } else {
            slab::SkipWindow {
                until: scan.until,
                skips: scan.skips,
                whole: self.slab.hdrs[scan.last as usize].prev == NIL,
                mono: scan.mono,
                last: scan.last,
                last_exp: scan.last_exp,
            }
        };
    }

    /// Ghost lists: deletes headers from the tail until `bytes` (lsize) are gone.
    fn evict_ghosts(&mut self, li: usize, bytes: u64) -> u64 {
        let mut evicted = 0u64;
        let mut cur = self.slab.lists[li].tail;
        while evicted < bytes && cur != NIL {
            let h = self.slab.hdrs[cur as usize];
            self.slab.unlink(cur);
            self.delete_ghost(cur);
            self.st.deleted += 1;
            evicted += h.lsize as u64;
            cur = h.prev;
        }
        evicted
    }

    /// arc_evict_hdr of a live header: to its ghost list (UNCACHED: destroyed).
    fn evict_live(&mut self, i: u32, state: State, scan: &mut Scan) {
        scan.evicted += self.slab.hdrs[i as usize].asize() as u64;
        self.user_evict(i);
        self.l2_count_evict(i, state);
        if self.warm_on_evict {
            self.arc_warm = true;
        }
        self.slab.unlink(i);
        match state {
            State::Mru => self.enter(i, State::MruGhost),
            State::Mfu => self.enter(i, State::MfuGhost),
            _ => self.destroy(i),
        }
    }

    /// A header's access time moved forward in place (it stays where it is in its list): a
    /// remembered window it belongs to may no longer expire in order.
    fn touched_in_place(&mut self, i: u32) {
        let h = &self.slab.hdrs[i as usize];
        if h.flags & F_SKIPWIN != 0 {
            let (li, exp) = (h.list(), h.access + ARC_MIN_PREFETCH);
            let w = &mut self.slab.skip[li];
            w.mono = false;
            let m = &mut self.slab.win[li];
            let k = m.position(i, w.skips as usize);
            m.exp[k] = exp;
        }
    }

    /// arc_adjust_impl / arc_evict_impl: evict at most `bytes` (if positive) of the list.
    /// Inlined: most calls of an adjust find nothing to do.
    #[inline]
    fn evict_impl(&mut self, state: State, meta: bool, bytes: i64, now: Nanos) -> u64 {
        let have = self.lbytes(state, meta);
        if bytes <= 0 || have == 0 || (!state.is_ghost() && self.window_answers(list_index(state, meta), now))
        {
            return 0;
        }
        self.evict_list(state, meta, (bytes as u64).min(have), now)
    }

    /// True when live list `li`'s remembered window answers a scan at `now`: the tail is
    /// the window of protected headers and the scan would pass exactly those and give up
    /// (a shortcut of the simulator, same outcome); counts the skips.
    #[inline]
    fn window_answers(&mut self, li: usize, now: Nanos) -> bool {
        let w = self.slab.skip[li];
        if !(self.skip_memo && w.skips > 0 && now < w.until && (w.whole || w.skips >= MAX_SKIP_SCAN)) {
            return false;
        }
        self.st.evict_skip += w.skips as u64;
        #[cfg(test)]
        {
            self.skip_memo_used += 1;
            // The scan it answers for: passes exactly the window and gives up.
            let (mut c, mut n) = (self.slab.lists[li].tail, 0u32);
            while c != NIL && n < MAX_SKIP_SCAN {
                let h = self.slab.hdrs[c as usize];
                assert!(protected(&h, now), "list {li}: window member {n} unprotected");
                n += 1;
                c = h.prev;
            }
            assert_eq!(n, w.skips, "list {li}: the scan would pass another number of headers");
        }
        true
    }

    /// arc_adjust_type: the type whose tail header is older.
    fn older_type(&self, state: State) -> bool {
        let d = self.slab.lists[list_index(state, T_DATA)].tail;
        let m = self.slab.lists[list_index(state, T_META)].tail;
        match (d == NIL, m == NIL) {
            (true, true) => T_DATA,
            (true, false) => T_META,
            (false, true) => T_DATA,
            (false, false) => {
                if self.slab.hdrs[d as usize].access < self.slab.hdrs[m as usize].access {
                    T_DATA
                } else {
                    T_META
                }
            }
        }
    }

    /// 0.8 arc_adjust_meta_balanced (strategy balanced).
    fn adjust_meta_balanced(&mut self, meta_used: u64, now: Nanos) -> u64 {
        let mut total = 0u64;
        let mut ty = T_DATA;
        let mut restarts = META_ADJUST_RESTARTS;
        let mut idle_passes = 0;
        let limit = self.meta_limit as i64;
        loop {
            let mut pass = 0u64;
            let mut adj = meta_used as i64 - limit;
            for s in [State::Mru, State::Mfu] {
                let have = self.lbytes(s, ty) as i64;
                if adj > 0 && have > 0 {
                    let delta = have.min(adj);
                    pass += self.evict_impl(s, ty, delta, now);
                    if s == State::Mru {
                        adj -= delta;
                    }
                }
            }
            adj = meta_used as i64 - limit;
            for s in [State::MruGhost, State::MfuGhost] {
                let have = self.lbytes(s, ty) as i64;
                if adj > 0 && have > 0 {
                    let delta = have.min(adj);
                    pass += self.evict_impl(s, ty, delta, now);
                    adj -= delta;
                }
            }
            total += pass;
            if meta_used as i64 <= limit {
                break;
            }
            // The source keeps restarting with the stale meta_used; once a data and a
            // metadata pass both evict nothing, further restarts cannot either.
            idle_passes = if pass == 0 { idle_passes + 1 } else { 0 };
            ty = !ty;
            if restarts == 0 || idle_passes >= 2 {
                break;
            }
            restarts -= 1;
        }
        total
    }

    /// Evicts `target` from `state`, older type first unless meta_used <= arc_meta_min,
    /// spilling into the other type.
    fn adjust_state_08(&mut self, state: State, target: i64, ameta: u64, now: Nanos) {
        let first = if self.older_type(state) == T_META && ameta > self.meta_min { T_META } else { T_DATA };
        let b = self.evict_impl(state, first, target, now);
        self.evict_impl(state, !first, target - b as i64, now);
    }

    /// 0.8 arc_adjust / 2.1 arc_evict.
    fn adjust_08(&mut self, now: Nanos) {
        // Sampled once before the metadata pass; the MRU step uses these stale values.
        let asize = self.size() as i64;
        let ameta = self.meta_used();
        if ameta > self.meta_limit {
            self.adjust_meta_balanced(ameta, now);
        }
        let c = self.c as i64;
        let target = (asize - c).min(self.ssize(State::Mru) as i64 + ameta as i64 - self.p as i64);
        self.adjust_state_08(State::Mru, target, ameta, now);
        let asize = self.size() as i64;
        let ameta = self.meta_used();
        self.adjust_state_08(State::Mfu, asize - c, ameta, now);
        // Ghosts: mru + mru_ghost <= c, mru_ghost + mfu_ghost <= c.
        let target = self.ssize(State::Mru) as i64 + self.sbytes(State::MruGhost) as i64 - c;
        let b = self.evict_impl(State::MruGhost, T_DATA, target, now);
        self.evict_impl(State::MruGhost, T_META, target - b as i64, now);
        let target = self.sbytes(State::MruGhost) as i64 + self.sbytes(State::MfuGhost) as i64 - c;
        let b = self.evict_impl(State::MfuGhost, T_DATA, target, now);
        self.evict_impl(State::MfuGhost, T_META, target - b as i64, now);
    }

    /// 2.2 arc_evict.
    fn evict_22(&mut self, now: Nanos) {
        let mut mrud = self.state_size(State::Mru, T_DATA) as i64;
        let mut mrum = self.state_size(State::Mru, T_META) as i64;
        let mut mfud = self.state_size(State::Mfu, T_DATA) as i64;
        let mut mfum = self.state_size(State::Mfu, T_META) as i64;
        let m = mrum + mfum;
        let t = mrud + mfud + m;
        let [grd, grm, gfd, gfm] = self.ghost_hit_bytes;
        self.ghost_hit_bytes = [0; 4];
        let [gsrd, gsrm, gsfd, gsfm] = self.ghost_caps;
        self.meta = evict_adj(self.meta, gsrd + gsrm + gsfd + gsfm, grm + gfm, grd + gfd, self.meta_balance);
        self.pd = evict_adj(self.pd, gsrd + gsfd, grd, gfd, 100);
        self.pm = evict_adj(self.pm, gsrm + gsfm, grm, gfm, 100);

        let c = self.c as i64;
        let mut asize = self.size() as i64;
        let mut wt = t - (asize - c);
        let mut total = 0i64;
        // MRU metadata down to wt * meta * pm.
        let w = (wt * ((self.meta as u128 * self.pm as u128) >> 48) as i64) >> 16;
        let b = self.evict_impl(State::Mru, T_META, (asize - c).min(mrum - w), now) as i64;
        total += b;
        mrum -= b;
        asize -= b;
        // All metadata down to wt * meta (from MFU).
        let w = (wt * (self.meta >> 16) as i64) >> 16;
        let b = self.evict_impl(State::Mfu, T_META, (asize - c).min(m - w), now) as i64;
        total += b;
        mfum -= b;
        asize -= b;
        // MRU data down to the remainder * pd.
        wt -= m - total;
        let w = (wt * (self.pd >> 16) as i64) >> 16;
        let b = self.evict_impl(State::Mru, T_DATA, (asize - c).min(mrud - w), now) as i64;
        mrud -= b;
        asize -= b;
        // MFU data takes the rest.
        let b = self.evict_impl(State::Mfu, T_DATA, asize - c, now) as i64;
        mfud -= b;
        // Ghost caps: half of the other three live lists each.
        let caps = [
            (mrum + mfud + mfum) / 2,
            (mrud + mfud + mfum) / 2,
            (mrud + mrum + mfum) / 2,
            (mrud + mrum + mfud) / 2,
        ];
        for (k, (s, meta)) in [
            (State::MruGhost, T_DATA),
            (State::MruGhost, T_META),
            (State::MfuGhost, T_DATA),
            (State::MfuGhost, T_META),
        ]
        .into_iter()
        .enumerate()
        {
            let cap = caps[k].max(0);
            self.ghost_caps[k] = cap as u64;
            let e = self.lbytes(s, meta) as i64 - cap;
            self.evict_impl(s, meta, e, now);
        }
    }
}

/// Running totals of one eviction scan of a live list.
/// (The protected headers passed are recorded, tail first, in the list's
/// [`slab::WindowMembers`] as they are passed.)
struct Scan {
    evicted: u64,
    /// Protected headers passed.
    skips: u32,
    /// Earliest end of protection among them.
    until: Nanos,
    /// Their protection ends in list order (tail first).
    mono: bool,
    /// End of protection of the last one passed.
    last_exp: Nanos,
    /// The last one passed (the head-most).
    last: u32,
}

impl Scan {
    /// Passes protected header `i` (protected until `exp`), recording it as the next member
    /// of the list's window `m`.
    #[inline]
    fn pass(&mut self, m: &mut slab::WindowMembers, i: u32, exp: Nanos) {
        m.slot[self.skips as usize] = i;
        m.exp[self.skips as usize] = exp;
        self.skips += 1;
        self.until = self.until.min(exp);
        self.mono &= exp >= self.last_exp;
        self.last_exp = exp;
        self.last = i;
    }
}

/// arc_evict_hdr's minimum lifespan: prefetched and indirect buffers younger than
/// zfs_arc_min_prefetch_ms are skipped.
#[inline]
fn protected(h: &Header, now: Nanos) -> bool {
    h.flags & (F_PREFETCH | F_INDIRECT) != 0 && now.saturating_sub(h.access) < ARC_MIN_PREFETCH
}

/// 2.2 arc_evict_adj: moves a 2^32 fixed-point fraction up by `up` and down by
/// `down * 100 / balance` ghost-hit bytes relative to the ghost total, damped near the
/// extremes.
pub fn evict_adj(frac: u64, total: u64, up: u64, down: u64, balance: u64) -> u64 {
    if total < 8 || up + down == 0 {
        return frac;
    }
    let (mut up, mut down) = (up, down);
    if up + down >= total / 4 {
        let scale = (up + down) / (total / 8);
        up /= scale;
        down /= scale;
    }
    let hb = 64 - total.leading_zeros(); // highbit64
    let s = (64 - hb).min(32);
    let ofrac = FRAC_ONE - frac.min(FRAC_ONE);
    if frac >= 4 * ofrac {
        up /= frac / (2 * ofrac + 1);
    }
    let up = ((up as u128) << s) as u64 / (total >> (32 - s));
    if ofrac >= 4 * frac {
        down /= ofrac / (2 * frac + 1);
    }
    let down = ((down as u128) << s) as u64 / (total >> (32 - s));
    let down = down * 100 / balance;
    (frac + up).saturating_sub(down).min(FRAC_ONE)
}
