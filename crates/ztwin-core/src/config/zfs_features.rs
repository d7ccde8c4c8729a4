//! What each modelled ZFS release does, as named features: models read a feature, never
//! compare releases.
//!
//! One table, [`ZfsFeatures::resolve`], gives the features of a release at a point release
//! (`release_patch`): one row per release, with the rules that changed inside 2.1 and 2.2
//! chosen by the patch level. Each feature cites the commit that introduced it
//! (openzfs/zfs history; where a release branch got a backport, its hash is given with the
//! upstream one; the illumos-era code is read at zfs-0.6.1, whose ARC and dbuf code is line
//! for line the illumos 2012 code FreeBSD 8.3 to 9.x shipped). Models take the resolved
//! features (or the sub-table they need: [`ArcFeatures`], [`L2arcFeatures`],
//! [`ZfetchFeatures`], [`PoolFeatures`]) when they are built and copy them; a new release
//! is a new row, and every `match` on the enums here is exhaustive, so the compiler shows
//! each place that must handle a new variant.
//!
//! What depends on the point release: the L2ARC (2.2.1, 2.2.3, 2.2.6, 2.2.7), the
//! prefetcher (2.1.6, 2.1.10, 2.2.4), the intent log (2.1.10, 2.2.1, 2.2.3, 2.2.4) and a
//! prefetch's buffer (2.3.1, [`ZfsFeatures::prefetch_fills_buf`]). The ARC, dbuf, pool and
//! txg rows are the release's (0.8 is modelled as 0.8.6, 2.1 as 2.1.16, 2.2 as 2.2.0 ..
//! 2.2.11, 2.3 as 2.3.0 .. 2.3.2), whatever the patch.
//!
//! The 2.3 row was read from `git log zfs-2.2.0..zfs-2.3.2` of module/zfs/{arc,dbuf,
//! dmu_zfetch,zil,zfs_log,txg,dsl_pool,vdev_queue,dmu,zfs_vnops,dmu_tx,metaslab,zio}.c and
//! module/os/linux/zfs/arc_os.c, each file diffed between the tags zfs-2.2.11 and
//! zfs-2.3.2 (commits in that log that 2.2.x got as backports are 2.2's already). What
//! differs and is modelled: `arc_default_max` (6a629f3234), the dnode's size (d54d0fff39),
//! `zfetch_max_idistance` and the prescient indirect prefetch (84d7d53e91), a prefetch's
//! buffer (67f0469f70, 2.3.1), the ZIL's commit rules (c3773de168) and kstats (7ddc1f737f),
//! Direct I/O (a10e552b99, 26ecd8b993, bc06d8164b). What differs and is not modelled (no
//! model has the mechanism): `zfs_arc_shrinker_limit` 0 (c2d9494f99, memory pressure), the
//! dbuf cache counting attached dnode_t's (92dc4ad83d: only the meta-dnode's blocks have
//! them), the L2ARC's header stats counted at write issue (025f8b2e74), metaslab selection
//! (c2668b2d10, 5551dcd762: metaslabs are not modelled), `zfs_sync_taskq_batch_pct` gone
//! (the sync's CPU is not modelled). The same in both: vdev_queue.c, txg.c, dsl_pool.c's
//! throttle, dmu_tx.c's delay, the L2ARC feed (2.2.7's 022bf86370 and 2.2.3's 2e259c6f00
//! are upstream 887a3c533b and 35da345160), `arc_evict_adj()` (2.3.0 .. 2.3.2 have the
//! form 2.2.0 .. 2.2.7 had; be72364ad6 reached 2.2.8 and 2.3.3).

use super::ZfsRelease;

/// Release behaviour the models read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZfsFeatures {
    /// The dbuf cache: an unheld dbuf stays, with its buffer and its header referenced
    /// (not evictable), in an LRU of `arc_c >> dbuf_cache_shift` bytes, and is destroyed
    /// when it ages out. Without it (illumos / ZoL 0.6), an unheld dbuf keeps its
    /// `arc_buf` but drops its reference (`arc_buf_remove_ref`), so the ARC may evict the
    /// header, and the eviction callback (`dbuf_do_evict`) destroys the dbuf.
    /// From 0.7.0: d3c2ae1c08 (OpenZFS 6950, "ARC should cache compressed data").
    pub dbuf_cache: bool,
    /// Holding an existing dbuf is an ARC access (`arc_buf_access`: a hit, `arc_access`)
    /// whatever its hold count. Before: only a hold of a dbuf at zero holds reached the
    /// ARC (`arc_buf_add_ref` in `dbuf_hold_impl`, 2006 Sun code), so an indirect block
    /// held by live children was never counted again; 0.7.0 to 0.7.5 counted nothing.
    /// From 0.7.6: 0873bb6337 ("Fix ARC hit rate").
    pub hold_accesses_arc: bool,
    /// Compressed ARC (`zfs_compressed_arc_enabled` exists): from 0.7.0, d3c2ae1c08.
    pub compressed_arc: bool,
    /// ARC buffer data (ABD; `zfs_abd_scatter_enabled` exists on Linux): from 0.7.0,
    /// 7657defc48 ("Introduce ARC Buffer Data (ABD)").
    pub abd: bool,
    /// The twin models this release's L2ARC (the feed, header sizes, persistence): not
    /// 0.6's (no compressed L2, an older feed), which is refused.
    pub l2arc_modelled: bool,
    /// When a txg syncs early: dirty data past `zfs_dirty_data_sync_percent` of the
    /// maximum, compared as the pool's total (`dp_dirty_total`, in the sync thread's loop)
    /// when true, else as the open txg's own (`dp_dirty_pertxg`, checked in
    /// `dsl_pool_dirty_space`, which kicks the sync thread). The per-txg rule: 50e09eddd0
    /// ("Optimize txg_kick() process", 2.2.0; 2.1.6 backport 999830a021). 2.1.0 .. 2.1.5
    /// still compared the total; the twin's 2.1 takes the later rule at every patch level.
    /// 0.6's write throttle (the 2012 one, before the dirty-data throttle of 0.6.3) is not
    /// modelled: 0.8's stands in for it.
    pub sync_on_total: bool,
    /// compression=zstd exists: from 2.0.0, 10b3c7f5e4 ("Add zstd support to zfs").
    pub zstd: bool,
    /// The largest recordsize a dataset takes, the default of `zfs_max_recordsize`: 128 KiB
    /// (SPA_MAXBLOCKSIZE) before large blocks (f1512ee61e, "Illumos 5027 - zfs large block
    /// support", 0.6.5); 1 MiB from then; 16 MiB from 2.2.0 (f2330bd156, "Default
    /// zfs_max_recordsize to 16M").
    pub max_recordsize: u32,
    /// `zio_taskq_batch_pct` (`spa.c`): the write issue taskq's threads as a percentage of
    /// the CPUs (see `fs::zfs::wr_iss`): 75 in 0.6.5 to 0.8.6, 80 from 2.1.0 (read at
    /// zfs-0.6.5.11, 0.7.13, 0.8.6, 2.1.16, 2.2.7, 2.3.2).
    pub zio_taskq_batch_pct: u32,
    /// The ARC.
    pub arc: ArcFeatures,
    /// When an allocation wakes the ARC's eviction thread (point-release dependent in 2.2).
    pub arc_overflow: ArcOverflow,
    /// The L2ARC (point-release dependent in 2.2).
    pub l2arc: L2arcFeatures,
    /// Predictive prefetch (point-release dependent in 2.1 and 2.2).
    pub zfetch: ZfetchFeatures,
    /// Allocation across top-level vdevs.
    pub pool: PoolFeatures,
    /// The intent log (point-release dependent in 2.1 and 2.2).
    pub zil: ZilFeatures,
    /// A prefetch read's completion fills a buffer for its callback (`arc_read_done` calls
    /// `arc_buf_alloc_impl` for every callback but one with `acb_nobuf`, which the miss path
    /// of `arc_read` did not set): a compressed block is decompressed then, and the buffer
    /// freed by `dbuf_issue_final_prefetch_done`. 2.1.0 added the callback (af20b97078);
    /// 0.8 passed none; 67f0469f70 ("Avoid ARC buffer transfrom operations in prefetch",
    /// 2.3.1) sets `acb_nobuf` on the miss path too.
    pub prefetch_fills_buf: bool,
    /// The vdev queue (module/zfs/vdev_queue.c).
    pub vdev_queue: VdevQueueFeatures,
    /// Direct I/O: the `direct` dataset property (disabled | standard | always, default
    /// standard), `zfs_dio_enabled` (1 on Linux), `dmu_read_uio_direct` /
    /// `dmu_write_uio_direct` (module/zfs/dmu_direct.c). a10e552b99 ("Adding Direct IO
    /// Support", 2.3.0), read checksums always verified 26ecd8b993, enabled by default on
    /// Linux bc06d8164b (2.3.0).
    pub direct_io: bool,
    /// What an open objset (a mounted dataset, the MOS) keeps in the ARC
    /// (`fs::zfs::objset`).
    pub objset: ObjsetFeatures,
}

/// What an open objset holds in the ARC beside its files (`fs::zfs::objset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjsetFeatures {
    /// `DN_MAX_INDBLKSHIFT`, the indirect block shift `dmu_objset_create_impl` gives a
    /// dataset's meta-dnode: 14 (16 KiB) before d7958b4cda ("OpenZFS 7104 - increase
    /// indirect block size", 0.7.0), 17 (128 KiB) from then (`include/sys/dnode.h`).
    pub meta_dnode_indblkshift: u32,
    /// `dnode_t`s `dmu_objset_open_impl` opens for an objset's special objects: the
    /// meta-dnode, userused and groupused (an `os_phys` of 2048 B or more), projectused
    /// (4096 B, `OBJSET_BUF_HAS_PROJECTUSED`, 9c5167d19f "Project Quota on ZFS", 0.8.0).
    /// A pool created by the release writes `sizeof (objset_phys_t)`: 2048 B in 0.6
    /// (`OBJSET_PHYS_SIZE`, zfs-0.6.5.11), 4096 B from 0.8. So 3, then 4.
    pub special_dnodes: u64,
    /// The mount holds the root directory's inode, so its znode's dnode and bonus buffer,
    /// for the mount's life: Linux `zfs_domount` gives it to `d_make_root`
    /// (`module/os/linux/zfs/zfs_vfsops.c`). False for the 0.6 row, whose platform
    /// (illumos, FreeBSD 8.3) looks the root vnode up per `VFS_ROOT` call (not read: taken
    /// as not held).
    pub root_dir_held: bool,
}

/// 0.6's objset (the 2012 illumos code).
const OBJSET_0_6: ObjsetFeatures =
    ObjsetFeatures { meta_dnode_indblkshift: 14, special_dnodes: 3, root_dir_held: false };
/// 0.8 and later (read at zfs-0.8.6, 2.1.16, 2.2.11).
const OBJSET_0_8: ObjsetFeatures =
    ObjsetFeatures { meta_dnode_indblkshift: 17, special_dnodes: 4, root_dir_held: true };

/// How `arc_read()` / `arc_access()` treat a read (the ARC's state transitions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcAccessRules {
    /// 0.6 .. 2.1: a demand hit's `add_reference()` clears ARC_FLAG_PREFETCH *before*
    /// `arc_access()`, so a prefetched MRU block older than ARC_MINTIME is promoted to MFU
    /// on its first demand hit; a ghost hit keeps the flag of the header's previous life;
    /// a block brought in by a prefetch carries ARC_FLAG_PREDICTIVE_PREFETCH until its
    /// first read (`demand_hit_predictive_prefetch`, 7f60329a26, Illumos 5987); a read that
    /// finds the block's I/O in progress is not counted; an `arc_l2c_only` header read back
    /// goes to MFU.
    AddReferenceFirst,
    /// 2.2: `arc_access()` sees `was_prefetch` (no promotion on the hit that clears the
    /// flag), a read finding the I/O in progress counts an iohit and calls `arc_access`
    /// (`iohits`, `demand_iohit_predictive_prefetch`), an `arc_l2c_only` header read back
    /// is "treated as new" (MRU). c935fe2e92 ("arc_read()/arc_access() refactoring and
    /// cleanup", 2.2.0).
    WasPrefetch,
}

/// How the ARC adapts its targets and evicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcAdaptation {
    /// 0.6 .. 2.1: a byte-valued MRU target `arc_p`, grown on MRU-ghost hits and shrunk on
    /// MFU-ghost hits by `arc_adapt()`, grown by `arc_get_data_impl()` on anonymous
    /// allocations; `arc_adjust()` / `arc_evict()` evicts metadata above
    /// `arc_meta_limit` first (`arc_adjust_meta_balanced()`), then MRU down to `arc_p`,
    /// then MFU; ghosts trimmed to `c` (the 2005 Sun ARC, with ZoL's metadata limits).
    ArcP,
    /// 2.2: no `arc_p`; fixed-point fractions `arc_meta`, `arc_pd`, `arc_pm` adjusted at
    /// every `arc_evict()` pass from the ghost-hit bytes (`arc_evict_adj()`), eviction
    /// order MRU metadata, MFU metadata, MRU data, MFU data, each ghost list capped at half
    /// of the other three live lists, `arc_adapt()` only grows `c` (by at least
    /// SPA_OLD_MAXBLOCKSIZE). a8d83e2a24 ("More adaptive ARC eviction", PR #14359, 2.2.0).
    MetaBalance,
}

/// Struct sizes on 64-bit Linux (non-debug build, kernel `struct mutex` 32 B, SPL
/// `kmutex_t` 48 B, `kcondvar_t` 72 B, `zfs_refcount_t` 8 B), estimated from each tag's
/// struct layout: what one header, dbuf, dnode or buffer costs in arcstats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcStructSizes {
    /// `HDR_FULL_SIZE`: the full (L1 + L2) ARC header counted in `hdr_size` for every
    /// header, cached or ghost. The common part (`b_dva` .. `b_spa`) is 56 B and the L2
    /// part 40 B (the 96 B L2-only header). 0.6 (zfs-0.6.1 `struct arc_buf_hdr`): one
    /// struct with the freeze lock, a condvar and the L2 pointer and list node, 288 B.
    /// 0.8: the L1 part is 232 B (freeze lock, freeze checksum, `b_buf`, `b_bufcnt`,
    /// `b_cv`, ...), 328 B. 2.1: 224 B, 320 B (40e02f49e9, 2.1.1: `b_l2_hits` removed,
    /// `b_bufcnt` and `b_buf` moved). 2.2: the L1 part lost the condvar (bc77a0c85e),
    /// `b_bufcnt` (ba7797c8db) and the freeze lock and checksum (under ZFS_DEBUG,
    /// bacf366fe2), 88 B, but `HDR_FULL_SIZE` became `sizeof (arc_buf_hdr_t)`, including
    /// the 56 B crypt part (3158b5d718): 240 B.
    pub hdr_full: u64,
    /// `sizeof (dmu_buf_impl_t)` (`dbuf_size` per dbuf): 312 B (0.8.6), 376 B (2.2.11);
    /// 0.6 and 2.1 taken as 0.8 (not computed).
    pub dmu_buf_impl: u64,
    /// `sizeof (dnode_t)` (`dnode_size` per dnode alive): 912 B (0.8.6), 984 B (2.2.11),
    /// 992 B (2.3.2: `dn_storage_type`, a 4-byte enum after `dn_zfetch`, d54d0fff39); 0.6
    /// and 2.1 taken as 0.8 (not computed). `dmu_buf_impl_t`, `arc_buf_hdr_t` and
    /// `arc_buf_t` are the same size in 2.3.2 as in 2.2.11 (`db_dnode_handle` became
    /// `db_dnode`, a pointer either way; 2.2.x got 7e3ce4efaa as 1f5e1b919f).
    pub dnode: u64,
    /// `sizeof (arc_buf_t)` (in `hdr_size` per buffer): 136 B in 0.6 (an evict mutex and a
    /// data rwlock, zfs-0.6.1 arc.h), 80 B in 0.8 / 2.1 (the evict mutex), 32 B in 2.2
    /// (289f7e6adb, "Remove some dead ARC code": `b_evict_lock` removed).
    pub arc_buf: u64,
}

/// `arc_is_overflowing()`: how far above `arc_c` an allocation may leave the ARC before
/// it wakes the eviction thread, which then evicts down to `arc_c` (`arc_adjust_cb` /
/// `arc_evict_cb`: again while it evicted something and the ARC is still over `arc_c`).
/// So the real ARC floats up to this much above `arc_c` (read at zfs-0.8.6, 2.1.16,
/// 2.2.0, 2.2.8, 2.2.9, 2.2.11, 2.3.2 `module/zfs/arc.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcOverflow {
    /// Any allocation that leaves `size > arc_c` evicts (illumos / ZoL 0.6: `arc_evict_needed`
    /// is `arc_size > arc_c`, and `arc_get_data_buf` recycles or evicts at once).
    AtC,
    /// `size >= arc_c + overflow`, `overflow = max(SPA_MAXBLOCKSIZE (16 MiB), arc_c >>
    /// zfs_arc_overflow_shift (8))`; `halved`: `overflow / 2` (2.1 and 2.2.0 to 2.2.8,
    /// `over = size - arc_c - overflow / 2`, the ARC_OVF_SOME level; 0.8 waits for the
    /// whole `overflow`).
    Shift {
        /// Half the overflow (2.1, 2.2.0 .. 2.2.8).
        halved: bool,
    },
    /// `size >= arc_c + zfs_max_recordsize` (16 MiB, [`ZfsFeatures::max_recordsize`]):
    /// 67ea51710a ("Several improvements to ARC shrinking", 2.2.9 and 2.3.0). Its second
    /// trigger, `arcstat_dnode_size` over `arc_dnode_limit`, is not modelled (the model's
    /// few open files hold little dnode memory).
    MaxRecordsize {
        /// `zfs_max_recordsize`'s default, bytes.
        bytes: u32,
    },
}

impl ArcOverflow {
    /// The bytes above `c` at which an allocation wakes the eviction thread.
    pub fn margin(self, c: u64) -> u64 {
        const SPA_MAXBLOCKSIZE: u64 = 16 << 20;
        const ZFS_ARC_OVERFLOW_SHIFT: u32 = 8;
        match self {
            ArcOverflow::AtC => 0,
            ArcOverflow::Shift { halved } => {
                let overflow = SPA_MAXBLOCKSIZE.max(c >> ZFS_ARC_OVERFLOW_SHIFT);
                if halved {
                    overflow / 2
                } else {
                    overflow
                }
            }
            ArcOverflow::MaxRecordsize { bytes } => u64::from(bytes),
        }
    }
}

/// The ARC's row: release-level (no point-release dependence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcFeatures {
    /// `arc_read()` / `arc_access()` transitions.
    pub access: ArcAccessRules,
    /// Target adaptation and eviction.
    pub adaptation: ArcAdaptation,
    /// The `arc_uncached` state: a block the dataset does not cache (`primarycache`) is
    /// kept in UNCACHED, a demand read destroyed on release, a prefetch flushed
    /// `arc_min_prefetch_ms` after its last access. ed2f7ba08d ("Implement uncached
    /// prefetch", 2.2.0). Modelled with [`ArcAccessRules::WasPrefetch`] only.
    pub uncached_state: bool,
    /// Compressed ARC: as [`ZfsFeatures::compressed_arc`] (d3c2ae1c08, 0.7.0).
    pub compressed_arc: bool,
    /// `arc_default_max()` = max(RAM / 2, `arc_c_min`) (else RAM / 2): 9a51738b60 ("Let
    /// default arc_c_max be platform dependent", 2.0.0).
    pub c_max_floor_c_min: bool,
    /// `arc_init()` starts `arc_c` at `arc_c_min` (else at `arc_c_max`): 17ca30185a ("Set
    /// initial arc_c to arc_c_min instead of arc_c_max", 2.0.0).
    pub c_starts_at_min: bool,
    /// Linux `arc_default_max()` (module/os/linux/zfs/arc_os.c) is max(RAM * 5 / 8,
    /// RAM - 1 GiB), or max(RAM * 5 / 8, `arc_c_min`) below 1 GiB of RAM (else max(RAM / 2,
    /// `arc_c_min`)): 6a629f3234 ("arc_default_max on Linux should match FreeBSD", 2.3.0).
    pub c_max_five_eighths: bool,
    /// A `zfs_arc_max` set at module load is applied by `arc_init()` even when it is not
    /// above `arc_c_min`, which is lowered to max(`zfs_arc_max` / 2, 32 MiB) (else
    /// `arc_tuning_update()` applies it only above `arc_c_min`): e945e8d7f4 ("Restore
    /// FreeBSD sysctl processing for arc.min and arc.max", 2.2.0; 2.1.1 backport
    /// 24e51e3749).
    pub arc_max_lowers_c_min: bool,
    /// `arc_meta_limit` default as a percentage of `arc_c_max`: 25 in illumos and ZoL
    /// 0.6.1 (`arc_init`: `arc_c_max / 4`), 75 from ZoL 0.6.3 (2b13331d62, "Set
    /// arc_meta_limit to 3/4 arc_c_max by default"; illumos kept 1/4). Read with
    /// [`ArcAdaptation::ArcP`] only (2.2 has no `arc_meta_limit`).
    pub meta_limit_pct: u64,
    /// `arc_adapt` and `arc_get_data_impl` grow `arc_p` only while `arc_p < arc_c / 2`:
    /// from 2.1.7, d9de079a4b ("Fix arc_p aggressive increase"; the model's 2.1 is 2.1.16).
    /// 2.2 has no arc_p.
    pub p_growth_guard: bool,
    /// Eviction happens on each allocation (`arc_get_data_buf` → `arc_evict(..., recycle)`):
    /// a buffer going to MRU (or anonymous) takes the MFU tail if `arc_p > anon + mru`,
    /// else the MRU tail; one going to MFU takes the MRU tail if `arc_c - arc_p > mfu`, else
    /// the MFU tail (each only if that list holds enough of the buffer's type), and
    /// `arc_adjust` runs once a second. Without it the allocation only wakes the eviction
    /// thread, whose `arc_adjust` evicts MRU down to `arc_p` first, then MFU, comparing
    /// MRU plus `arc_meta_used` with `arc_p` and taking the older type first. Until
    /// ca0bf58d65 ("Illumos 5497 - lock contention on arcs_mtx", ZoL 0.6.5). The victims
    /// differ: 0.6 recycles the buffer's own type, judges on the sizes before the buffer
    /// joins its list, and leaves `arc_meta_used` out of the MRU test.
    pub evicts_on_allocation: bool,
    /// Struct sizes.
    pub sizes: ArcStructSizes,
}

impl ArcFeatures {
    /// arcstats has `iohits` and its per-type counters, and a read that finds the block's
    /// I/O in progress is an ARC access ([`ArcAccessRules::WasPrefetch`]).
    pub fn iohits(&self) -> bool {
        match self.access {
            ArcAccessRules::AddReferenceFirst => false,
            ArcAccessRules::WasPrefetch => true,
        }
    }

    /// arcstats has `p` and `arc_meta_used` / `_limit` / `_min` / `_max` (with
    /// [`ArcAdaptation::ArcP`]), else `meta`, `pd`, `pm`.
    pub fn has_arc_p(&self) -> bool {
        match self.adaptation {
            ArcAdaptation::ArcP => true,
            ArcAdaptation::MetaBalance => false,
        }
    }
}

/// How `arc_read()` treats a prefetch whose block is on L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchRead {
    /// 0.8 / 2.1: skip L2 if `l2arc_noprefetch` and the header is a prefetch.
    HeaderFlag,
    /// 2.2.0: skip L2 if `l2arc_noprefetch` and this read is a prefetch (c935fe2e92).
    ReadFlag,
    /// 2.2.1+: always read from L2 (7aef672b77, "Read prefetched buffers from L2ARC").
    Always,
}

/// The L2ARC's row (0.8 and later; 0.6's is not modelled, see
/// [`ZfsFeatures::l2arc_modelled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2arcFeatures {
    /// Persistent L2ARC: log blocks on devices of at least 1 GiB, their room reserved in
    /// every fit check of the feed, the rebuild at import, `l2arc_rebuild_enabled`;
    /// `l2arc_headroom` = 0 scans whole lists (0.8 then writes nothing). 77f6826b83
    /// ("Persistent L2ARC", 2.0.0).
    pub persistent: bool,
    /// `l2arc_evict()` wraps the hand itself: it evicts to the end when `hand + distance`
    /// passes it, then wraps and evicts again (`rerun`) with an evict hand (`l2ad_evict`),
    /// and `l2arc_write_size()` resets a write size larger than the device. Before,
    /// `l2arc_evict()` evicted to the end once the hand was within `2 * distance` of it and
    /// `l2arc_write_buffers()` wrapped the hand once within `target` of the end.
    /// 37c22948e5 ("Reset l2ad_hand and l2ad_first in l2arc_evict", 2.0.0).
    pub evict_rerun: bool,
    /// `evict_l2_eligible_mru` / `_mfu` arcstats: 085321621e ("Add L2ARC arcstats for
    /// MFU/MRU buffers and buffer content type", 2.1.0).
    pub eligible_by_state: bool,
    /// Largest `l2arc_mfuonly`: 0 (no such parameter), 1 (MFU only: feb3a7eef1, 2.1.0),
    /// 2 (all metadata and MFU data: cd42e992b5, 2.2.6).
    pub mfuonly_max: u8,
    /// `l2arc_hdr_limit_reached()` and `l2arc_meta_percent`: feeds stop while the L2-only
    /// headers exceed a share of the ARC. 523e1295fe ("Introduce limit on size of L2ARC
    /// headers", 2.1.0).
    pub hdr_limit: bool,
    /// `l2arc_hdr_limit_reached()` also when `l2_hdr_size > arc_meta_limit * 3 / 4`
    /// (523e1295fe; gone with `arc_meta_limit` in 2.2, a8d83e2a24).
    pub hdr_limit_meta_limit: bool,
    /// Reading prefetches from L2.
    pub prefetch_read: PrefetchRead,
    /// `l2arc_write_size()` caps the write size at a quarter of the device, rounded up to
    /// its sector: 2e259c6f00 ("L2ARC: Restrict write size to 1/4 of the device", 2.2.3).
    pub quarter_cap: bool,
    /// Default `l2arc_write_max` and `l2arc_write_boost` (what 2.1 .. 2.2.2 reset them to):
    /// 8 MiB, 32 MiB from 2.2.7 (022bf86370, "Increase L2ARC write rate and headroom").
    pub write_default: u64,
    /// Default `l2arc_headroom`: 2, 8 from 2.2.7 (022bf86370).
    pub headroom_default: u64,
    /// The DWPD feed of master (no release has it; a what-if on the modelled release, see
    /// [`crate::cache::l2arc`]): `l2arc_write_max` a rate per second, fed in bursts of at
    /// most 64 MiB at adaptive intervals, limited by `l2arc_dwpd_limit` once the device
    /// has wrapped; no `l2arc_write_boost`. d1f290f1ea ("L2ARC: Implement DWPD-based rate
    /// limiting with adaptive feed intervals", master, Feb 2026). False here means the
    /// key `l2arc_dwpd_limit` is unset unless the scenario sets it.
    pub dwpd_feed: bool,
    /// Master's per-device feed threads (no release has them; a what-if on the modelled
    /// release, see [`crate::cache::l2arc`]): each cache device has its own
    /// `l2arc_feed_thread(dev)`, created by `l2arc_add_vdev()`, with its own schedule,
    /// instead of one thread feeding the devices in turn (`l2arc_dev_get_next()`).
    /// b525525b44 ("L2ARC: Implement per-device feed threads for parallel writes",
    /// master, Dec 2025). Master has no switch for it; false here means the scenario key
    /// `l2arc.per_device_feed` (the model's name, not a module parameter) is false unless
    /// set.
    pub per_device_feed: bool,
}

/// The prefetcher's row (`module/zfs/dmu_zfetch.c` and its caller in `dmu.c`). Each rule
/// implies the ones before it in this list (the releases added them in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZfetchFeatures {
    /// `zfetch_max_idistance` is a module parameter: c71847b77b ("Expose
    /// zfetch_max_idistance tunable", 2.0.0).
    pub idistance_tunable: bool,
    /// `dmu_zfetch_prepare()` before the demand reads and `dmu_zfetch_run()` after them
    /// (0.8: one `dmu_zfetch()`, which ignores access to block 0 and frees a removed
    /// stream at once): data is prefetched only once the stream saw a demand miss
    /// (`zs_missed`), a stream goes when an access reaches `dn_maxblkid`, files with
    /// `dn_maxblkid < 2` are skipped, a stream with prefetch reads in flight (`zs_refs`)
    /// is not reaped. 891568c990 ("Split dmu_zfetch() speculation and execution parts",
    /// 2.1.0). 0.6's 2006 stream and colinear-stride algorithm is not modelled: 0.8's
    /// rules stand in for it (scenarios using 0.6 say so).
    pub prepare_run: bool,
    /// zfetchstats `io_issued`: af20b97078 ("zfetch: Don't issue new streams when old have
    /// not completed", 2.1.0).
    pub io_issued_kstat: bool,
    /// Distances in bytes (`zs_pf_dist`: the access size, doubled on each hit up to
    /// `zfetch_min_distance`, then +1/8 after a prefetch completed too late, `zs_more`),
    /// idle streams reused (`zfetch_max_sec_reap`). 884364ea85 ("More speculative
    /// prefetcher improvements", 2.1.6; upstream 6aa8c21a2a, 2.2.0).
    pub byte_distances: bool,
    /// The doubling stops beyond one block while prefetch blocks in flight (zfetchstats
    /// `io_active`) reach `arc_c_max >> (4 + datablkshift)`. 9d2e5c14b2 ("System-wide
    /// speculative prefetch limit", 2.1.10; upstream 5f42d1dbf2, 2.2.0).
    pub io_active_limit: bool,
    /// The caller prefetches only requests of at most `zfetch_array_rd_sz` on a dnode whose
    /// metadata may be cached, and data only if data may be (`primarycache`). Both went in
    /// 2.2.0: ed2f7ba08d ("Implement uncached prefetch": `primarycache`) and 81be809a25
    /// ("Adjust prefetch parameters": `zfetch_array_rd_sz`; upstream 34b3d498a9).
    pub caller_limits: bool,
    /// Reordered requests: future ranges (`zs_ranges`), `zfetch_max_reorder`,
    /// `zfetch_hole_shift`, zfetchstats `future` / `stride` / `past`, stream times in whole
    /// seconds. 026fe79646 ("Speculative prefetch for reordered requests", 2.2.4; upstream
    /// 5e5fd0a178).
    pub reorder: bool,
    /// The prescient indirect prefetch: `dmu_zfetch_prepare()` itself prefetches, at sync
    /// read priority, the L1 blocks that begin inside the access beyond those the stream
    /// prefetched (from `max(zs_ipf_end, blkid + 1)` to the access's end, rounded up to
    /// whole L1 blocks), also on a miss; and `zfetch_max_idistance` defaults to 128 MiB.
    /// 84d7d53e91 ("Improve speculative prefetcher for block cloning", 2.3.0).
    pub prescient_indirect: bool,
}

/// The vdev queue's row (`module/zfs/vdev_queue.c`; the same in 2.2.11 and 2.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VdevQueueFeatures {
    /// `vdev_queue_class_to_issue` looks for a class under its minimum starting after the
    /// last class issued (`vq_last_prio`), round-robin; before, in priority order.
    /// 6f5aac3ca0 ("Reduce latency effects of non-interactive I/O", 2.1.0).
    pub round_robin: bool,
    /// Offset-ordered classes sort by 2^29 ns buckets of queueing time before offset and
    /// look for the next offset within the oldest bucket; FIFO classes are lists.
    /// 8469b5aac0 ("Another set of vdev queue optimizations", 2.2.0).
    pub lba_deadline: bool,
    /// `zfs_vdev_scrub_max_active` default: 2, 3 from 2.1.0 (6f5aac3ca0).
    pub scrub_max_active: u32,
}

/// How `metaslab_group_activate()` sizes a vdev's turn of the allocation rotor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MgAliquot {
    /// `metaslab_aliquot * max(1, vdev_children)`: a two-way mirror gets twice a single
    /// disk's turn.
    VdevChildren,
    /// `metaslab_aliquot * max(1, ndisks - nparity)` (`vdev_get_ndisks`; a mirror counts
    /// one disk): c55b293287 ("Improve mg_aliquot math", 2.2.0).
    DataDisks,
}

/// The pool's row (`module/zfs/metaslab.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolFeatures {
    /// `metaslab_aliquot` default: 512 KiB, 1 MiB from 2.2.0 (c55b293287).
    pub metaslab_aliquot: u64,
    /// A vdev's turn of the rotor.
    pub mg_aliquot: MgAliquot,
}

/// How the size of the next log block is chosen when one is issued (module/zfs/zil.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LwbSizing {
    /// `zil_block_buckets`: the smallest bucket holding the log bytes committed since the
    /// last commit that found the ZIL idle (`zl_cur_used`) plus the block's chain header,
    /// then the largest of the last 16 choices (`ZIL_PREV_BLKS`). With `split_128k` a
    /// bucket of 132 KiB gives 68 KiB blocks (a 128 KiB record as two halves, 0.8.6 and
    /// 2.1); removed by 1e1d748cae ("ZIL: Remove 128K into 2x68K LWB split
    /// optimization", 2.2.3).
    Buckets {
        /// The 128K-to-2x68K bucket.
        split_128k: bool,
    },
    /// Bursts (`zil_lwb_plan`, `zil_lwb_predict`): what is left of the commit's burst, or
    /// a prediction from the last 8 bursts (`ZIL_BURSTS`), rounded up to 4 KiB.
    /// 25ea8ce94b ("ZIL: Improve next log block size prediction", 2.2.4).
    Bursts,
}

/// When a commit writes its open log block at once instead of waiting
/// `zfs_commit_timeout_pct` of the last block's latency for more records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyIssue {
    /// Never: the block goes out when it is full or when the waiter times out (0.8,
    /// 2.1.0 .. 2.1.9).
    Never,
    /// When no block was open or in flight (`first`) and the wait would be shorter than
    /// `zil_min_commit_timeout` (5 us) or the block is 7/8 full. 0f740a4f1d ("Introduce
    /// minimal ZIL block commit delay", 2.2.0; in 2.1.10).
    MinCommitTimeout,
    /// When the workload is single-threaded (`zl_parallel` is 0: no commit found an open
    /// block during the last 8 bursts). 7ea8331009 ("ZIL: Detect single-threaded
    /// workloads", 2.2.4).
    SingleThreaded,
}

/// The intent log's row (module/zfs/zil.c, zfs_log.c, zio.c `zio_alloc_zil`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZilFeatures {
    /// The twin models this release's ZIL. 0.6's (the 2012 illumos zil.c, before the
    /// commit waiters of OpenZFS 8585) is not: sync writes are refused there.
    pub modelled: bool,
    /// The next block's size.
    pub sizing: LwbSizing,
    /// Lone commits that skip the wait.
    pub early_issue: EarlyIssue,
    /// `zl_last_lwb_latency` is averaged: new = (old * (2^k - 1) + latest) / 2^k; 0 keeps
    /// the latest (0.8, 2.1.0 .. 2.1.9), 2 from 2.1.10 (with 0f740a4f1d's backport), 3 from
    /// 2.2.0.
    pub latency_shift: u8,
    /// `zfs_commit_timeout_pct` default: 5, 10 from 2.2.4 (with 7ea8331009).
    pub commit_timeout_pct: u32,
    /// `zil_slog_bulk` default: 768 KiB, 64 MiB from 2.2.1 (6d693e20a2, "Large sync
    /// writes perform worse with slog").
    pub slog_bulk: u64,
    /// `zil_maxcopied` (the largest WR_COPIED record, and `zil_max_waste_space` is a 16th
    /// of a block's room instead of an 8th): 7680 from 2.2.0 (9be8ddfb3c, "ZIL: Reduce
    /// maximum size of WR_COPIED to 7.5K"); None: half a maximal block's room.
    pub maxcopied: Option<u32>,
    /// 2.2's issue pipeline (df8c9f351d, "ZIL: Second attempt to reduce scope of
    /// zl_issuer_lock", and 62677576a7, 2.2.0): a record's data is fetched (copied, or its
    /// block written by dmu_sync) when its block is issued, not when it is assigned; a
    /// block without waiters defers its flushes only to a next block already issued.
    pub issue_pipeline: bool,
    /// The zil_itx_metaslab_{normal,slog}_* counters count a block by its own class
    /// (f63811f072, 2.2.0); before, by the class of the next block allocated when it is
    /// issued. The `_write` and `_alloc` counters: b6fbe61fa6 (2.2.0).
    pub metaslab_stats_own_block: bool,
    /// The embedded log metaslab (`spa_embedded_log_class`): without a SLOG, log blocks go
    /// to one metaslab set aside per vdev of more than `zfs_embedded_slog_min_ms` (64)
    /// metaslabs. aa755b3549 ("Set aside a metaslab for ZIL blocks", 2.1.0).
    pub embedded_log: bool,
    /// `zfs_log_write` copies a small write into its record (WR_COPIED) when the write
    /// commits (`commit`: O_SYNC, O_DSYNC or `sync=always`) rather than only for O_SYNC /
    /// O_DSYNC, and an itx is synchronous only while the file is open O_SYNC
    /// (`z_sync_cnt`); `zfs_fsync`'s fsyncer count is gone. c3773de168 ("ZIL: Cleanup sync
    /// and commit handling", 2.3.0).
    pub copied_on_commit: bool,
    /// The `zil_commit_error_count`, `zil_commit_stall_count` and
    /// `zil_commit_suspend_count` kstats: 7ddc1f737f ("zil: add stats for commit
    /// failure/fallback", 2.3.0).
    pub commit_failure_stats: bool,
}

/// 0.8.6's ZIL (OpenZFS 8585's commit waiters; zil_maxblocksize from 0.8.3).
const ZIL_0_8: ZilFeatures = ZilFeatures {
    modelled: true,
    sizing: LwbSizing::Buckets { split_128k: true },
    early_issue: EarlyIssue::Never,
    latency_shift: 0,
    commit_timeout_pct: 5,
    slog_bulk: 768 << 10,
    maxcopied: None,
    issue_pipeline: false,
    metaslab_stats_own_block: false,
    embedded_log: false,
    copied_on_commit: false,
    commit_failure_stats: false,
};

/// `zfs_max_recordsize`'s default from 2.2.0 (f2330bd156, "Default zfs_max_recordsize to
/// 16M"; `dsl_dataset.c`): the largest recordsize and, from 2.2.9, the ARC's overflow margin.
const MAX_RECORDSIZE_2_2: u32 = 16 << 20;

/// The rows of the 2016-2020 ARC (0.8 and 2.1): the same code but for 2.0's and 2.1's
/// limits and headers.
const ARC_0_8: ArcFeatures = ArcFeatures {
    access: ArcAccessRules::AddReferenceFirst,
    adaptation: ArcAdaptation::ArcP,
    uncached_state: false,
    compressed_arc: true,
    c_max_floor_c_min: false,
    c_starts_at_min: false,
    c_max_five_eighths: false,
    arc_max_lowers_c_min: false,
    meta_limit_pct: 75,
    p_growth_guard: false,
    evicts_on_allocation: false,
    sizes: ArcStructSizes { hdr_full: 328, dmu_buf_impl: 312, dnode: 912, arc_buf: 80 },
};

/// 0.8's L2ARC (0.8.6).
const L2ARC_0_8: L2arcFeatures = L2arcFeatures {
    persistent: false,
    evict_rerun: false,
    eligible_by_state: false,
    mfuonly_max: 0,
    hdr_limit: false,
    hdr_limit_meta_limit: false,
    prefetch_read: PrefetchRead::HeaderFlag,
    quarter_cap: false,
    write_default: 8 << 20,
    headroom_default: 2,
    dwpd_feed: false,
    per_device_feed: false,
};

/// 0.8's prefetcher (0.8.6, and 0.7.x).
const ZFETCH_0_8: ZfetchFeatures = ZfetchFeatures {
    idistance_tunable: false,
    prepare_run: false,
    io_issued_kstat: false,
    byte_distances: false,
    io_active_limit: false,
    caller_limits: true,
    reorder: false,
    prescient_indirect: false,
};

/// 0.8.6's vdev queue.
const VDEV_QUEUE_0_8: VdevQueueFeatures =
    VdevQueueFeatures { round_robin: false, lba_deadline: false, scrub_max_active: 2 };

/// Allocation before 2.2.
const POOL_0_8: PoolFeatures =
    PoolFeatures { metaslab_aliquot: 512 << 10, mg_aliquot: MgAliquot::VdevChildren };

impl ZfsFeatures {
    /// The table: the features of `release` at point release `patch` (2.1.x and 2.2.x;
    /// ignored for 0.6 and 0.8).
    pub fn resolve(release: ZfsRelease, patch: u16) -> ZfsFeatures {
        match release {
            ZfsRelease::V0_6 => ZfsFeatures {
                dbuf_cache: false,
                hold_accesses_arc: false,
                compressed_arc: false,
                abd: false,
                l2arc_modelled: false,
                sync_on_total: true,
                zstd: false,
                max_recordsize: 128 << 10,
                zio_taskq_batch_pct: 75,
                arc: ArcFeatures {
                    compressed_arc: false,
                    meta_limit_pct: 25,
                    evicts_on_allocation: true,
                    sizes: ArcStructSizes { hdr_full: 288, arc_buf: 136, ..ARC_0_8.sizes },
                    ..ARC_0_8
                },
                arc_overflow: ArcOverflow::AtC,
                // Not modelled (refused by the config check): 0.8's row stands in.
                l2arc: L2ARC_0_8,
                zfetch: ZFETCH_0_8,
                pool: POOL_0_8,
                // Not modelled (refused by the ZIL's parameters): 0.8's row stands in.
                zil: ZilFeatures { modelled: false, ..ZIL_0_8 },
                vdev_queue: VDEV_QUEUE_0_8,
                prefetch_fills_buf: false,
                direct_io: false,
                objset: OBJSET_0_6,
            },
            ZfsRelease::V0_8 => ZfsFeatures {
                dbuf_cache: true,
                hold_accesses_arc: true,
                compressed_arc: true,
                abd: true,
                l2arc_modelled: true,
                sync_on_total: true,
                zstd: false,
                max_recordsize: 1 << 20,
                zio_taskq_batch_pct: 75,
                arc: ARC_0_8,
                arc_overflow: ArcOverflow::Shift { halved: false },
                l2arc: L2ARC_0_8,
                zfetch: ZFETCH_0_8,
                pool: POOL_0_8,
                zil: ZIL_0_8,
                vdev_queue: VDEV_QUEUE_0_8,
                prefetch_fills_buf: false,
                direct_io: false,
                objset: OBJSET_0_8,
            },
            ZfsRelease::V2_1 => ZfsFeatures {
                dbuf_cache: true,
                hold_accesses_arc: true,
                compressed_arc: true,
                abd: true,
                l2arc_modelled: true,
                sync_on_total: false,
                zstd: true,
                max_recordsize: 1 << 20,
                zio_taskq_batch_pct: 80,
                arc: ArcFeatures {
                    c_max_floor_c_min: true,
                    c_starts_at_min: true,
                    arc_max_lowers_c_min: true,
                    p_growth_guard: true,
                    sizes: ArcStructSizes { hdr_full: 320, ..ARC_0_8.sizes },
                    ..ARC_0_8
                },
                arc_overflow: ArcOverflow::Shift { halved: true },
                l2arc: L2arcFeatures {
                    persistent: true,
                    evict_rerun: true,
                    eligible_by_state: true,
                    mfuonly_max: 1,
                    hdr_limit: true,
                    hdr_limit_meta_limit: true,
                    ..L2ARC_0_8
                },
                zfetch: ZfetchFeatures {
                    idistance_tunable: true,
                    prepare_run: true,
                    io_issued_kstat: true,
                    byte_distances: patch >= 6,
                    io_active_limit: patch >= 10,
                    ..ZFETCH_0_8
                },
                pool: POOL_0_8,
                zil: ZilFeatures {
                    early_issue: if patch >= 10 { EarlyIssue::MinCommitTimeout } else { EarlyIssue::Never },
                    latency_shift: if patch >= 10 { 2 } else { 0 },
                    embedded_log: true,
                    ..ZIL_0_8
                },
                vdev_queue: VdevQueueFeatures { round_robin: true, scrub_max_active: 3, ..VDEV_QUEUE_0_8 },
                // Not yet (the existing prefetch CPU model takes 0.8's rule: see the
                // feature's docs).
                prefetch_fills_buf: false,
                direct_io: false,
                objset: OBJSET_0_8,
            },
            ZfsRelease::V2_2 => ZfsFeatures {
                dbuf_cache: true,
                hold_accesses_arc: true,
                compressed_arc: true,
                abd: true,
                l2arc_modelled: true,
                sync_on_total: false,
                zstd: true,
                max_recordsize: MAX_RECORDSIZE_2_2,
                zio_taskq_batch_pct: 80,
                arc: ArcFeatures {
                    access: ArcAccessRules::WasPrefetch,
                    adaptation: ArcAdaptation::MetaBalance,
                    uncached_state: true,
                    compressed_arc: true,
                    c_max_floor_c_min: true,
                    c_starts_at_min: true,
                    c_max_five_eighths: false,
                    arc_max_lowers_c_min: true,
                    meta_limit_pct: 75,
                    p_growth_guard: true,
                    evicts_on_allocation: false,
                    sizes: ArcStructSizes { hdr_full: 240, dmu_buf_impl: 376, dnode: 984, arc_buf: 32 },
                },
                arc_overflow: if patch >= 9 {
                    ArcOverflow::MaxRecordsize { bytes: MAX_RECORDSIZE_2_2 }
                } else {
                    ArcOverflow::Shift { halved: true }
                },
                l2arc: L2arcFeatures {
                    persistent: true,
                    evict_rerun: true,
                    eligible_by_state: true,
                    mfuonly_max: if patch >= 6 { 2 } else { 1 },
                    hdr_limit: true,
                    hdr_limit_meta_limit: false,
                    prefetch_read: if patch >= 1 { PrefetchRead::Always } else { PrefetchRead::ReadFlag },
                    quarter_cap: patch >= 3,
                    write_default: if patch >= 7 { 32 << 20 } else { 8 << 20 },
                    headroom_default: if patch >= 7 { 8 } else { 2 },
                    ..L2ARC_0_8
                },
                zfetch: ZfetchFeatures {
                    idistance_tunable: true,
                    prepare_run: true,
                    io_issued_kstat: true,
                    byte_distances: true,
                    io_active_limit: true,
                    caller_limits: false,
                    reorder: patch >= 4,
                    prescient_indirect: false,
                },
                pool: PoolFeatures { metaslab_aliquot: 1 << 20, mg_aliquot: MgAliquot::DataDisks },
                zil: ZilFeatures {
                    modelled: true,
                    sizing: if patch >= 4 {
                        LwbSizing::Bursts
                    } else {
                        LwbSizing::Buckets { split_128k: patch < 3 }
                    },
                    early_issue: if patch >= 4 {
                        EarlyIssue::SingleThreaded
                    } else {
                        EarlyIssue::MinCommitTimeout
                    },
                    latency_shift: 3,
                    commit_timeout_pct: if patch >= 4 { 10 } else { 5 },
                    slog_bulk: if patch >= 1 { 64 << 20 } else { 768 << 10 },
                    maxcopied: Some(7680),
                    issue_pipeline: true,
                    metaslab_stats_own_block: true,
                    embedded_log: true,
                    copied_on_commit: false,
                    commit_failure_stats: false,
                },
                vdev_queue: VdevQueueFeatures { round_robin: true, lba_deadline: true, scrub_max_active: 3 },
                // Not yet (the existing prefetch CPU model takes 0.8's rule: see the
                // feature's docs).
                prefetch_fills_buf: false,
                direct_io: false,
                objset: OBJSET_0_8,
            },
            ZfsRelease::V2_3 => {
                let f = ZfsFeatures::resolve(ZfsRelease::V2_2, 11);
                ZfsFeatures {
                    arc: ArcFeatures {
                        c_max_five_eighths: true,
                        sizes: ArcStructSizes { dnode: 992, ..f.arc.sizes },
                        ..f.arc
                    },
                    zfetch: ZfetchFeatures { prescient_indirect: true, ..f.zfetch },
                    zil: ZilFeatures { copied_on_commit: true, commit_failure_stats: true, ..f.zil },
                    prefetch_fills_buf: patch < 1,
                    direct_io: true,
                    ..f
                }
            }
        }
    }
}

impl ZfsRelease {
    /// The release's row at point release 0. Only its release-level features (all but
    /// `l2arc`, `zfetch` and `zil`) are the same at every point release: read those from here,
    /// and the rest from [`ZfsFeatures::resolve`] with the patch.
    pub fn features(self) -> ZfsFeatures {
        ZfsFeatures::resolve(self, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ZfsRelease; 5] =
        [ZfsRelease::V0_6, ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3];

    #[test]
    fn the_illumos_era_has_none_of_the_2016_arc_rewrite() {
        let f = ZfsRelease::V0_6.features();
        assert!(!f.dbuf_cache && !f.hold_accesses_arc && !f.compressed_arc && !f.abd);
        for r in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3] {
            let f = r.features();
            assert!(f.dbuf_cache && f.hold_accesses_arc && f.compressed_arc && f.abd);
        }
    }

    /// The ARC, dbuf, pool and txg rows do not depend on the point release; the two
    /// compressed-ARC flags agree; the uncached state comes with 2.2's arc_access.
    #[test]
    fn release_level_rows_ignore_the_patch() {
        for r in ALL {
            let f0 = r.features();
            assert_eq!(f0.arc.compressed_arc, f0.compressed_arc);
            assert!(!f0.arc.uncached_state || f0.arc.access == ArcAccessRules::WasPrefetch);
            for patch in 0..=16 {
                let f = ZfsFeatures::resolve(r, patch);
                assert_eq!((f.arc, f.pool, f.sync_on_total), (f0.arc, f0.pool, f0.sync_on_total));
                assert_eq!(
                    (f.dbuf_cache, f.hold_accesses_arc, f.abd, f.l2arc_modelled),
                    (f0.dbuf_cache, f0.hold_accesses_arc, f0.abd, f0.l2arc_modelled)
                );
            }
        }
    }

    /// Each prefetcher rule implies the ones the releases added before it.
    #[test]
    fn zfetch_rules_accumulate() {
        for r in ALL {
            for patch in 0..=16 {
                let z = ZfsFeatures::resolve(r, patch).zfetch;
                assert!(!z.prepare_run || z.idistance_tunable);
                assert_eq!(z.prepare_run, z.io_issued_kstat);
                assert!(!z.byte_distances || z.prepare_run);
                assert!(!z.io_active_limit || z.byte_distances);
                assert!(z.caller_limits || z.io_active_limit);
                assert!(!z.reorder || !z.caller_limits);
                assert!(!z.prescient_indirect || z.reorder);
            }
        }
        let at = |r, p| ZfsFeatures::resolve(r, p).zfetch;
        assert!(!at(ZfsRelease::V2_1, 5).byte_distances && at(ZfsRelease::V2_1, 6).byte_distances);
        assert!(!at(ZfsRelease::V2_1, 9).io_active_limit && at(ZfsRelease::V2_1, 10).io_active_limit);
        assert!(!at(ZfsRelease::V2_2, 3).reorder && at(ZfsRelease::V2_2, 4).reorder);
    }

    /// The ZIL's point-release changes, each where the tag's zil.c has it.
    #[test]
    fn the_zil_changes_with_the_patch() {
        let at = |r, p| ZfsFeatures::resolve(r, p).zil;
        assert!(!at(ZfsRelease::V0_6, 0).modelled);
        assert_eq!(at(ZfsRelease::V0_8, 0), ZIL_0_8);
        assert_eq!(
            (at(ZfsRelease::V2_1, 9).early_issue, at(ZfsRelease::V2_1, 9).latency_shift),
            (EarlyIssue::Never, 0)
        );
        assert_eq!(at(ZfsRelease::V2_1, 10).early_issue, EarlyIssue::MinCommitTimeout);
        assert!(!at(ZfsRelease::V0_8, 0).embedded_log && at(ZfsRelease::V2_1, 0).embedded_log);
        let z = |p| at(ZfsRelease::V2_2, p);
        assert_eq!((z(0).slog_bulk, z(1).slog_bulk), (768 << 10, 64 << 20));
        assert_eq!(z(2).sizing, LwbSizing::Buckets { split_128k: true });
        assert_eq!(z(3).sizing, LwbSizing::Buckets { split_128k: false });
        assert_eq!((z(4).sizing, z(4).early_issue), (LwbSizing::Bursts, EarlyIssue::SingleThreaded));
        assert_eq!((z(3).commit_timeout_pct, z(4).commit_timeout_pct), (5, 10));
        for r in [ZfsRelease::V0_8, ZfsRelease::V2_1] {
            assert!(at(r, 16).maxcopied.is_none() && !at(r, 16).issue_pipeline);
        }
        assert!(z(0).maxcopied == Some(7680) && z(0).issue_pipeline && z(0).metaslab_stats_own_block);
    }

    #[test]
    fn the_l2arc_of_22_changes_with_the_patch() {
        let at = |p| ZfsFeatures::resolve(ZfsRelease::V2_2, p).l2arc;
        assert_eq!(at(0).prefetch_read, PrefetchRead::ReadFlag);
        assert_eq!(at(1).prefetch_read, PrefetchRead::Always);
        assert!(!at(2).quarter_cap && at(3).quarter_cap);
        assert_eq!((at(5).mfuonly_max, at(6).mfuonly_max), (1, 2));
        assert_eq!((at(6).write_default, at(7).write_default), (8 << 20, 32 << 20));
        assert_eq!((at(6).headroom_default, at(7).headroom_default), (2, 8));
        let l21 = ZfsFeatures::resolve(ZfsRelease::V2_1, 16).l2arc;
        assert!(l21.hdr_limit_meta_limit && !at(11).hdr_limit_meta_limit);
        assert!(!ZfsRelease::V0_8.features().l2arc.persistent && l21.persistent);
    }

    /// The L2ARC feed of master (d1f290f1ea's DWPD feed) is in no modelled release: it is
    /// a what-if a scenario asks for.
    #[test]
    fn no_release_has_the_feed_of_master() {
        for (r, patches) in [
            (ZfsRelease::V0_6, 0..=0),
            (ZfsRelease::V0_8, 0..=0),
            (ZfsRelease::V2_1, 0..=16),
            (ZfsRelease::V2_2, 0..=11),
            (ZfsRelease::V2_3, 0..=2),
        ] {
            for p in patches {
                let l = ZfsFeatures::resolve(r, p).l2arc;
                assert!(!l.dwpd_feed, "{r:?}.{p}");
                assert!(!l.per_device_feed, "{r:?}.{p}");
            }
        }
    }

    /// 2.3.2 is 2.2.11 but for the features the 2.3 row names (see the module docs).
    #[test]
    fn the_23_row_is_2211_with_its_differences() {
        let f22 = ZfsFeatures::resolve(ZfsRelease::V2_2, 11);
        let f23 = ZfsFeatures::resolve(ZfsRelease::V2_3, 2);
        assert!(f23.arc.c_max_five_eighths && !f22.arc.c_max_five_eighths);
        assert_eq!((f22.arc.sizes.dnode, f23.arc.sizes.dnode), (984, 992));
        assert_eq!(ArcFeatures { c_max_five_eighths: false, sizes: f22.arc.sizes, ..f23.arc }, f22.arc);
        assert!(f23.zfetch.prescient_indirect && !f22.zfetch.prescient_indirect);
        assert_eq!(ZfetchFeatures { prescient_indirect: false, ..f23.zfetch }, f22.zfetch);
        assert!(f23.zil.copied_on_commit && f23.zil.commit_failure_stats);
        assert_eq!(ZilFeatures { copied_on_commit: false, commit_failure_stats: false, ..f23.zil }, f22.zil);
        assert_eq!((f23.l2arc, f23.pool, f23.sync_on_total), (f22.l2arc, f22.pool, f22.sync_on_total));
        assert!(f23.direct_io && !f22.direct_io);
        assert!(ZfsFeatures::resolve(ZfsRelease::V2_3, 0).prefetch_fills_buf && !f23.prefetch_fills_buf);
    }
}
