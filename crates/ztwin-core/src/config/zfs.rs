//! A ZFS pool and dataset: the release, vdevs, dataset properties and module parameters
//! (ARC, L2ARC, zfetch, txg and write throttle, the intent log, allocation and mirrors).

use serde::{Deserialize, Serialize};

/// The OpenZFS release whose behaviour is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZfsRelease {
    /// The illumos ZFS of pool version 28 (2012), as FreeBSD 8.3 to 9.x and ZoL 0.6.1
    /// shipped it: arc_p, no dbuf cache, no compressed ARC, no ABD (see
    /// [`ZfsFeatures`](super::ZfsFeatures)); its other mechanisms are modelled as 0.8's
    /// where they are the same code (arc_p adaptation and growth), and each model says
    /// where it takes 0.8's.
    #[serde(rename = "0.6")]
    V0_6,
    /// ZoL 0.7/0.8 (2018-2020): arc_p, arc_meta_limit.
    #[serde(rename = "0.8")]
    V0_8,
    /// OpenZFS 2.1: as 0.8 but arc_c starts at c_min.
    #[serde(rename = "2.1")]
    V2_1,
    /// OpenZFS 2.2 and later up to 2.2.11: arc_meta/arc_pd/arc_pm eviction.
    #[serde(rename = "2.2")]
    V2_2,
    /// OpenZFS 2.3.0 to 2.3.2: 2.2's ARC with a larger default `zfs_arc_max`, Direct I/O
    /// (the `direct` property), the prescient indirect prefetch; each difference from
    /// 2.2.11 is a feature of [`ZfsFeatures`](super::ZfsFeatures) citing its commit.
    #[serde(rename = "2.3")]
    V2_3,
}

impl ZfsRelease {
    /// The release as users write it ("0.8", "2.1", "2.2", "2.3").
    pub fn name(self) -> &'static str {
        match self {
            ZfsRelease::V0_6 => "0.6",
            ZfsRelease::V0_8 => "0.8",
            ZfsRelease::V2_1 => "2.1",
            ZfsRelease::V2_2 => "2.2",
            ZfsRelease::V2_3 => "2.3",
        }
    }
}

/// Compression algorithm (zfs property `compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// compression=off
    Off,
    /// compression=lz4 (the default "on" since 2.0)
    Lz4,
    /// compression=lzjb
    Lzjb,
    /// compression=zstd
    Zstd,
    /// compression=gzip
    Gzip,
}

/// primarycache / secondarycache property values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheProperty {
    /// Cache data and metadata.
    All,
    /// Cache metadata only.
    Metadata,
    /// Cache nothing.
    None,
}

/// The dataset's `sync` property (zfs(8)): when writes reach the intent log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncProperty {
    /// O_SYNC / O_DSYNC writes and fsync commit the log (the default).
    #[default]
    Standard,
    /// Every write (and every read) commits the log before it returns.
    Always,
    /// Nothing commits the log: fsync returns at once, O_SYNC writes are plain writes.
    Disabled,
}

/// The dataset's `logbias` property (zfs(8)): how sync writes use the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Logbias {
    /// Small sync writes are copied into log blocks (on the SLOG when there is one).
    #[default]
    Latency,
    /// Every sync write's data goes to the main pool (WR_INDIRECT); the log holds a block
    /// pointer.
    Throughput,
}

/// The dataset's `direct` property (zfs(8), 2.3+): what O_DIRECT does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirectProperty {
    /// O_DIRECT is ignored: every read and write goes through the ARC (as before 2.3).
    Disabled,
    /// O_DIRECT reads and writes bypass the ARC; a request not page aligned is EINVAL
    /// (2.3's default).
    Standard,
    /// Every page-aligned read, and every page-aligned write of at least a block, is
    /// direct; others go through the ARC.
    Always,
}

/// Intent-log module parameters, named as in zfs(4); None = the release's default (see
/// `fs::zfs::zil`, which also refuses one the release lacks). Defaults as module/zfs of
/// each tag sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZilTunables {
    /// zfs_immediate_write_sz (zfs_log.c), bytes: without a SLOG, a sync write of at least
    /// this many bytes (per record) is logged WR_INDIRECT: 32768 in every modelled release.
    pub zfs_immediate_write_sz: Option<u64>,
    /// zil_slog_bulk (zil.c), bytes: log bytes per commit burst written to a SLOG at sync
    /// priority, the rest at async priority: 768 KiB; 64 MiB from 2.2.1 (6d693e20a2).
    pub zil_slog_bulk: Option<u64>,
    /// zfs_commit_timeout_pct (zil.c), percent of the last log block's latency a commit
    /// waits for more records before it writes an open log block: 5; 10 from 2.2.4
    /// (7ea8331009).
    pub zfs_commit_timeout_pct: Option<u32>,
    /// zil_maxblocksize (zil.c, a module parameter from 0.8.3, b8738257c2's backport),
    /// bytes: the largest log block: 131072 (SPA_OLD_MAXBLOCKSIZE).
    pub zil_maxblocksize: Option<u32>,
    /// zil_min_commit_timeout (zil.c, 2.1.10 to 2.2.3: 0f740a4f1d), ns: a lone commit whose
    /// wait would be shorter writes its log block at once: 5000.
    pub zil_min_commit_timeout: Option<u64>,
    /// zil_maxcopied (zil.c, 2.2.0+: 9be8ddfb3c), bytes: the largest sync write copied into
    /// its log record (WR_COPIED): 7680.
    pub zil_maxcopied: Option<u32>,
}

/// A top-level vdev: one device by name, or an n-way mirror (`{"mirror": ["d1", "d2"]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VdevConfig {
    /// A single device (zpool create tank d1).
    Disk(String),
    /// A mirror of two or more devices (zpool create tank mirror d1 d2).
    Mirror(MirrorVdev),
}

/// The children of a mirror vdev.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MirrorVdev {
    /// Device names, two or more.
    pub mirror: Vec<String>,
}

impl VdevConfig {
    /// The leaf devices of this vdev, in child order.
    pub fn devices(&self) -> &[String] {
        match self {
            VdevConfig::Disk(d) => std::slice::from_ref(d),
            VdevConfig::Mirror(m) => &m.mirror,
        }
    }
}

impl From<&str> for VdevConfig {
    fn from(name: &str) -> Self {
        VdevConfig::Disk(name.to_string())
    }
}

/// How a mirror picks the child that serves a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MirrorReadPolicy {
    /// ZoL 0.7 to OpenZFS 2.x, FreeBSD 10+ (FreeBSD r256956, 2013): least loaded child, with seek
    /// penalties (vdev_mirror_child_select, vdev_mirror_load).
    Load,
    /// OpenSolaris, illumos and FreeBSD before 10 (pool v28 era): child
    /// `(offset >> vdev_mirror_shift) % children`, 2 MiB stripes alternating sides.
    Offset,
}

/// Write-path module parameters (dirty data, txgs, the vdev queue's async writes), named
/// as in zfs(4); zero means the default of every modelled release (see `fs::zfs::txg`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TxgTunables {
    /// zfs_dirty_data_max, bytes (0 = 10% of RAM capped by zfs_dirty_data_max_max).
    pub zfs_dirty_data_max: u64,
    /// zfs_dirty_data_max_max, bytes (0 = min(4 GiB, 25% of RAM)).
    pub zfs_dirty_data_max_max: u64,
    /// zfs_dirty_data_sync_percent (0 = 20).
    pub zfs_dirty_data_sync_percent: u32,
    /// zfs_delay_min_dirty_percent (0 = 60).
    pub zfs_delay_min_dirty_percent: u32,
    /// zfs_delay_scale, ns (0 = 500000).
    pub zfs_delay_scale: u64,
    /// zfs_txg_timeout, seconds (0 = 5).
    pub zfs_txg_timeout: u32,
    /// zfs_vdev_aggregation_limit, bytes (0 = 1 MiB).
    pub zfs_vdev_aggregation_limit: u32,
    /// zfs_vdev_aggregation_limit_non_rotating, bytes (0 = 128 KiB).
    pub zfs_vdev_aggregation_limit_non_rotating: u32,
    /// zfs_vdev_async_write_min_active (0 = 2).
    pub zfs_vdev_async_write_min_active: u32,
    /// zfs_vdev_async_write_max_active (0 = 10).
    pub zfs_vdev_async_write_max_active: u32,
}

/// Pool allocation and mirror module parameters, named as in zfs(4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolTunables {
    /// metaslab_aliquot, bytes (0 = the release's default: 512 KiB through 2.1, 1 MiB from 2.2).
    pub metaslab_aliquot: u64,
    /// metaslab_bias_enabled (1): bias the rotor towards vdevs with more free space.
    pub metaslab_bias_enabled: bool,
    /// Which child of a mirror serves a read.
    pub mirror_read_policy: MirrorReadPolicy,
    /// zfs_vdev_mirror_rotating_inc (0): load added to a rotating child when the read
    /// follows its last I/O.
    pub zfs_vdev_mirror_rotating_inc: u32,
    /// zfs_vdev_mirror_rotating_seek_inc (5): load added to a rotating child that must seek
    /// (half of it within zfs_vdev_mirror_rotating_seek_offset).
    pub zfs_vdev_mirror_rotating_seek_inc: u32,
    /// zfs_vdev_mirror_rotating_seek_offset (1 MiB), bytes.
    pub zfs_vdev_mirror_rotating_seek_offset: u64,
    /// zfs_vdev_mirror_non_rotating_inc (0).
    pub zfs_vdev_mirror_non_rotating_inc: u32,
    /// zfs_vdev_mirror_non_rotating_seek_inc (1).
    pub zfs_vdev_mirror_non_rotating_seek_inc: u32,
    /// zfs_vdev_sync_read_max_active (10): the most sync reads the vdev queue keeps issued to
    /// one leaf (`fs::zfs::vdev_queue`).
    pub zfs_vdev_sync_read_max_active: u32,
}

impl Default for PoolTunables {
    fn default() -> Self {
        PoolTunables {
            metaslab_aliquot: 0,
            metaslab_bias_enabled: true,
            mirror_read_policy: MirrorReadPolicy::Load,
            zfs_vdev_mirror_rotating_inc: 0,
            zfs_vdev_mirror_rotating_seek_inc: 5,
            zfs_vdev_mirror_rotating_seek_offset: 1 << 20,
            zfs_vdev_mirror_non_rotating_inc: 0,
            zfs_vdev_mirror_non_rotating_seek_inc: 1,
            zfs_vdev_sync_read_max_active: 10,
        }
    }
}

/// A ZFS pool and dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZfsConfig {
    /// Release whose ARC behaviour is modelled.
    pub release: ZfsRelease,
    /// Top-level vdevs the pool stripes across: single devices or mirrors.
    pub vdevs: Vec<VdevConfig>,
    /// Separate intent-log vdevs (SLOG): the ZIL's blocks go there first (`fs::zfs::zil`).
    pub log: Vec<VdevConfig>,
    /// Allocation and mirror tunables.
    pub pool: PoolTunables,
    /// Write path tunables: dirty data, txgs, the write throttle, async write queueing.
    pub txg: TxgTunables,
    /// Pool sector size exponent (ashift); sizes round up to 2^ashift.
    pub ashift: u8,
    /// Dataset recordsize in bytes (power of two, 512 B to 16 MiB).
    pub recordsize: u32,
    /// recordsize of a second dataset of the pool holding the database's logs (its redo
    /// log and binary log), as experiment 2 keeps them on a 128K dataset beside the
    /// 16K data directory; None: the logs are in the dataset of the data.
    #[serde(default)]
    pub log_recordsize: Option<u32>,
    /// Indirect block size in bytes (128 KiB since 0.7.0; 16 KiB in 0.6.x).
    pub indirect_block_size: u32,
    /// Dataset compression property.
    pub compression: Compression,
    /// Dataset primarycache property.
    pub primarycache: CacheProperty,
    /// ARC tunables (module parameters).
    pub arc: ArcTunables,
    /// With release 2.2, the point release (0 to 11): L2ARC defaults changed in 2.2.7 and
    /// its prefetch rules in 2.2.1, the prefetcher in 2.2.4. With release 2.1 it selects
    /// only the prefetcher (2.1.0 to 2.1.5, 2.1.6 to 2.1.9, 2.1.10+); ignored for 0.8.
    pub release_patch: u16,
    /// Cache vdevs (L2ARC); at most one for now.
    pub cache: Vec<String>,
    /// Dataset secondarycache property.
    pub secondarycache: CacheProperty,
    /// L2ARC module parameters (None = the release's default).
    pub l2arc: L2arcTunables,
    /// arc_warm, which ends l2arc_write_boost and makes the feed scan from the cold end,
    /// turns true only on memory reclaim in OpenZFS (arc_reclaim); with no memory pressure
    /// modelled, true here makes it turn at the first ARC eviction instead.
    pub arc_warm_at_first_eviction: bool,
    /// Predictive prefetch (zfetch) module parameters.
    pub zfetch: ZfetchTunables,
    /// Dataset sync property (default standard).
    #[serde(default)]
    pub sync: SyncProperty,
    /// Dataset logbias property (default latency).
    #[serde(default)]
    pub logbias: Logbias,
    /// Intent-log (ZIL) module parameters.
    #[serde(default)]
    pub zil: ZilTunables,
    /// Dataset direct property (2.3+); None = the release's default: standard in 2.3
    /// (zfs_prop.c `ZFS_PROP_DIRECT`), and no Direct I/O before (refused unless disabled).
    #[serde(default)]
    pub direct: Option<DirectProperty>,
}

impl ZfsConfig {
    /// The `direct` property in force: the release's default when not set.
    pub fn direct(&self) -> DirectProperty {
        let f = super::ZfsFeatures::resolve(self.release, self.release_patch);
        match self.direct {
            Some(d) if f.direct_io => d,
            None if f.direct_io => DirectProperty::Standard,
            _ => DirectProperty::Disabled,
        }
    }
}

/// ARC module parameters, named as in zfs(4). Zero means "the release's default", as
/// OpenZFS itself treats a zero tunable.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcTunables {
    /// zfs_arc_max, bytes (0 = default: RAM/2 through 2.2).
    pub zfs_arc_max: u64,
    /// zfs_arc_min, bytes (0 = default: max(RAM/32, 32 MiB)).
    pub zfs_arc_min: u64,
    /// zfs_arc_meta_limit, bytes (0.8/2.1 only; 0 = 75% of arc_c_max).
    pub zfs_arc_meta_limit: u64,
    /// zfs_arc_meta_min, bytes (0.8/2.1 only; 0 = 16 MiB).
    pub zfs_arc_meta_min: u64,
    /// zfs_arc_meta_balance (2.2+; 0 = 500).
    pub zfs_arc_meta_balance: u64,
    /// zfs_arc_meta_strategy (0.8/2.1; None = 1, ARC_STRATEGY_META_BALANCED): what
    /// `arc_adjust` does when `arc_meta_used` passes `arc_meta_limit` (zfs-0.8.6 `arc.c`
    /// `arc_adjust_meta`): 1 `arc_adjust_meta_balanced` (data and metadata, restarting
    /// against the stale `arc_meta_used`), 0 `arc_adjust_meta_only` (the excess of
    /// metadata only, MRU down to `arc_p`, then MFU down to `arc_c - arc_p`).
    #[serde(default)]
    pub zfs_arc_meta_strategy: Option<u32>,
    /// zfs_compressed_arc_enabled (0.7+; None = 1, the default since 0.7.0). A release
    /// without compressed ARC refuses it set to 1.
    #[serde(default)]
    pub zfs_compressed_arc_enabled: Option<bool>,
    /// zfs_abd_scatter_enabled (Linux, 0.7+; None = 1): ARC buffers of
    /// `zfs_abd_scatter_min_size` (1536 B) or more are scatter lists, so a dbuf never
    /// shares them (see `cache::arc::dbuf_copy_bytes`); 0 makes every buffer linear, as
    /// ZFS before ABD (0.7.0, and FreeBSD's of that era) had them.
    #[serde(default)]
    pub zfs_abd_scatter_enabled: Option<bool>,
}

/// Predictive prefetch (zfetch) module parameters, named as in zfs(4); None = the
/// release's default. Defaults and the releases each exists in are documented (with
/// sources) in [`crate::fs::zfs::zfetch`]; one the release lacks is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZfetchTunables {
    /// zfs_prefetch_disable: false.
    pub zfs_prefetch_disable: Option<bool>,
    /// zfetch_max_streams, streams per file: 8.
    pub zfetch_max_streams: Option<u32>,
    /// zfetch_min_sec_reap, seconds: 2 (0.8 to 2.1.5), 1 (2.1.6+).
    pub zfetch_min_sec_reap: Option<u32>,
    /// zfetch_max_sec_reap, seconds (2.1.6+): 2.
    pub zfetch_max_sec_reap: Option<u32>,
    /// zfetch_min_distance, bytes (2.1.6+): 4 MiB.
    pub zfetch_min_distance: Option<u32>,
    /// zfetch_max_distance, bytes: 8 MiB (0.8 to 2.1.5), 64 MiB (2.1.6+).
    pub zfetch_max_distance: Option<u32>,
    /// zfetch_max_idistance, bytes (a module parameter from 2.0): 64 MiB.
    pub zfetch_max_idistance: Option<u32>,
    /// zfetch_max_reorder, bytes (2.2.4+): 16 MiB.
    pub zfetch_max_reorder: Option<u32>,
    /// zfetch_hole_shift (2.2.4+): 2.
    pub zfetch_hole_shift: Option<u32>,
    /// zfetch_array_rd_sz, bytes (0.8, 2.1): 1 MiB.
    pub zfetch_array_rd_sz: Option<u64>,
}

/// L2ARC module parameters, named as in zfs(4). `None` = the release's default: the model
/// fills the defaults in and rejects what the release lacks (`L2arcTunables::resolve` in
/// [`crate::cache::l2arc`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct L2arcTunables {
    /// l2arc_write_max, bytes per feed: 8 MiB (0.8 .. 2.2.6), 32 MiB (2.2.7+, 022bf86370).
    /// 0 is reset to the default (`l2arc_write_size()`).
    pub l2arc_write_max: Option<u64>,
    /// l2arc_write_boost, extra bytes per feed while `arc_warm` is false: same defaults
    /// as l2arc_write_max.
    pub l2arc_write_boost: Option<u64>,
    /// l2arc_headroom, multiple of the write size scanned per list: 2 (0.8 .. 2.2.6), 8
    /// (2.2.7+). 0 = scan whole lists (2.1+; in 0.8 it writes nothing).
    pub l2arc_headroom: Option<u64>,
    /// l2arc_headroom_boost, percent applied to the headroom with compressed ARC: 200.
    pub l2arc_headroom_boost: Option<u64>,
    /// l2arc_feed_secs, seconds between feeds when the last wrote little: 1.
    pub l2arc_feed_secs: Option<u64>,
    /// l2arc_feed_min_ms, milliseconds between feeds when the last wrote more than half
    /// its target: 200.
    pub l2arc_feed_min_ms: Option<u64>,
    /// l2arc_feed_again, use l2arc_feed_min_ms after a busy feed: true.
    pub l2arc_feed_again: Option<bool>,
    /// l2arc_noprefetch, do not cache blocks only prefetched (and, 0.8 .. 2.2.0, do not
    /// read prefetches from L2): true.
    pub l2arc_noprefetch: Option<bool>,
    /// l2arc_mfuonly (2.1+): 0 all, 1 MFU only, 2 (2.2.6+) all metadata and MFU data. 0.
    pub l2arc_mfuonly: Option<u8>,
    /// l2arc_meta_percent (2.1+): feeds stop while l2_hdr_size exceeds this percent of
    /// arc_c: 33.
    pub l2arc_meta_percent: Option<u64>,
    /// l2arc_rebuild_enabled (2.0+): rebuild a persistent L2ARC at import: true.
    pub l2arc_rebuild_enabled: Option<bool>,
    /// WHAT-IF from master (d1f290f1ea; no release has it, every release accepts it):
    /// l2arc_dwpd_limit, the cache device's Drive Writes Per Day in percent (100 = 1.0
    /// DWPD, master's default; 0 = no DWPD limit). Set, the feed is master's: the write
    /// size and interval follow `l2arc_write_max` as a rate per second
    /// (`l2arc_write_size()`, `l2arc_get_write_rate()`, `l2arc_dwpd_rate_limit()`) and
    /// `l2arc_write_boost` does not exist. Unset: the release's feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2arc_dwpd_limit: Option<u64>,
    /// WHAT-IF from master (b525525b44; no release has it, every release accepts it): one
    /// feed thread per cache device, each with its own schedule and CPU bursts, instead
    /// of the releases' one thread feeding the devices in turn. NOT a module parameter:
    /// master has no switch (its threads are unconditional); this is the model's name for
    /// the what-if. Unset or false: the release's one thread. Set only here (a `tune`
    /// phase cannot change it: the threads come with the devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_device_feed: Option<bool>,
}

impl L2arcTunables {
    /// These tunables with those `over` sets replacing them (as writing
    /// /sys/module/zfs/parameters/* at run time does).
    pub fn overridden_by(&self, over: &L2arcTunables) -> L2arcTunables {
        macro_rules! pick {
            ($($f:ident),*) => { L2arcTunables { $($f: over.$f.or(self.$f)),* } };
        }
        pick!(
            l2arc_write_max,
            l2arc_write_boost,
            l2arc_headroom,
            l2arc_headroom_boost,
            l2arc_feed_secs,
            l2arc_feed_min_ms,
            l2arc_feed_again,
            l2arc_noprefetch,
            l2arc_mfuonly,
            l2arc_meta_percent,
            l2arc_rebuild_enabled,
            l2arc_dwpd_limit,
            per_device_feed
        )
    }
}
