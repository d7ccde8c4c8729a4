//! The resolved configuration of one variant: what the Python front hands the core.
//!
//! Python reads the scenario TOML, validates it (pydantic), resolves presets, sizes
//! ("16K", "2.5GiB") and durations, merges the variant over the base, and sends one
//! `VariantConfig` per variant as JSON with every value explicit: bytes are integers of
//! bytes, times are integers of nanoseconds. The core validates again
//! (`deny_unknown_fields` plus [`VariantConfig::validate`]) because Rust tests and
//! benchmarks bypass Python.

use serde::{Deserialize, Serialize};

use crate::cache::l2arc::L2arcTunables;
use crate::error::{Error, Result};

mod zfs_features;
pub use zfs_features::{
    ArcAccessRules, ArcAdaptation, ArcFeatures, ArcStructSizes, L2arcFeatures, MgAliquot, PoolFeatures,
    PrefetchRead, ZfetchFeatures, ZfsFeatures,
};

/// One variant of a scenario, fully resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    /// Scenario name (for messages and reports).
    pub scenario: String,
    /// Variant name (for messages and reports).
    pub variant: String,
    /// Seed of every random stream of the run; same seed, same numbers.
    pub seed: u64,
    /// The machine: vCPUs, RAM and CPU costs.
    pub machine: MachineConfig,
    /// Every block device of the machine, by name.
    pub devices: Vec<DeviceConfig>,
    /// The filesystem holding the database files.
    pub filesystem: FsConfig,
    /// The database engine above the filesystem (None for a fio workload: fio reads the
    /// files itself).
    pub database: Option<DatabaseConfig>,
    /// What is stored: the files the workload touches.
    pub dataset: DatasetConfig,
    /// The load: client threads and their queries.
    pub workload: WorkloadConfig,
    /// Warm-up, measured window, reporting interval.
    pub run: RunConfig,
    /// The run as a sequence of phases on the same state (caches carry over); empty means
    /// one workload phase with `run`'s warm-up and duration.
    pub phases: Vec<PhaseConfig>,
}

/// One phase of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum PhaseConfig {
    /// The workload's clients for a warm-up and a measured window.
    Workload(WorkloadPhase),
    /// Read every data file once from start to end, as `cat *.ibd > /dev/null` does.
    Cat(CatPhase),
    /// The machine restarts: the ARC and the buffer pool start empty.
    Restart(RestartPhase),
    /// fio jobs of a fio workload, run together once (fio's own results per job).
    Fio(FioPhase),
    /// Module parameters set at run time, between phases (`echo N >
    /// /sys/module/zfs/parameters/...`); a restart returns to the scenario's values.
    Tune(TunePhase),
}

/// L2ARC module parameters set between phases.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunePhase {
    /// Name in reports.
    pub name: String,
    /// The parameters set (the others keep their values).
    pub l2arc: L2arcTunables,
}

/// A run of some jobs of the fio workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioPhase {
    /// Name in reports ("read-1", ...).
    pub name: String,
    /// Indices into the workload's `jobs`, run concurrently as fio runs the jobs of one
    /// job file.
    pub jobs: Vec<u32>,
}

/// A phase of the workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadPhase {
    /// Name in reports.
    pub name: String,
    /// Time before the measured window, ns.
    pub warmup_ns: u64,
    /// Measured window, ns.
    pub duration_ns: u64,
}

/// Sequential reads of every table file by one process.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatPhase {
    /// Name in reports.
    pub name: String,
    /// Bytes per read(2): coreutils cat uses max(128 KiB, st_blksize) (io_blksize).
    pub read_size: u32,
    /// How many times the files are read, one pass after the other.
    pub passes: u32,
}

/// A restart of the machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartPhase {
    /// Name in reports.
    pub name: String,
    /// The VM was stopped and started on another host: ephemeral devices come back empty.
    pub vm_moved: bool,
}

/// The machine the database runs on.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Preset or user name of the machine (reporting only).
    pub name: String,
    /// Number of vCPUs that run the database, the client and the filesystem.
    pub vcpus: u32,
    /// RAM in bytes; ARC defaults derive from it as OpenZFS does (arc_c_max = RAM/2 ...).
    pub ram_bytes: u64,
    /// CPU time of each kind of work, on a reference core.
    pub cpu: CpuCosts,
}

/// CPU time of each unit of work, in nanoseconds of a reference core, divided by `speed`.
///
/// These are properties of the machine and software stack (measured, not fitted per
/// scenario); see `python/ztwin/presets/machines.toml` for where each preset's values come
/// from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuCosts {
    /// Speed of one vCPU relative to the reference core (0.25 = four times slower).
    pub speed: f64,
    /// Per SQL statement: client (sysbench, same machine), network loopback, parser,
    /// optimizer, executor, result send.
    pub statement_ns: u64,
    /// Per row returned by a statement.
    pub row_ns: u64,
    /// Per InnoDB page access (buffer-pool lookup, latch, page search).
    pub page_access_ns: u64,
    /// Per read system call that reaches the filesystem (VFS, context switches).
    pub syscall_ns: u64,
    /// Per block device I/O (submission, interrupt, completion).
    pub device_io_ns: u64,
    /// ZFS: per block looked up in the ARC (dbuf hold, hash lookup).
    pub zfs_block_ns: u64,
    /// ZFS: per zio sent to a device, beyond `device_io_ns`: the zio pipeline stages, the
    /// vdev queue, and the hand-offs to the z_rd_iss / z_rd_int taskq threads.
    pub zio_ns: u64,
    /// Memory copy throughput, bytes per second: ZFS copies every read from the ARC/dbuf
    /// buffer to the caller (uiomove; no O_DIRECT bypass before 2.3).
    pub memcpy_bytes_per_sec: u64,
    /// ZFS: checksum (fletcher4) throughput, bytes per second, on every block read from a device.
    pub checksum_bytes_per_sec: u64,
    /// ZFS: decompression throughput (lz4), bytes of output per second.
    pub decompress_bytes_per_sec: u64,
}

/// One block device with its limits and service time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Name used by the filesystem config (e.g. "ebs", "nvme0").
    pub name: String,
    /// Preset the device came from (reporting only).
    pub kind: String,
    /// Operations per second the device admits (reads and writes together); None = no cap.
    pub iops_limit: Option<f64>,
    /// Bytes per second the device admits; None = no cap.
    pub throughput_limit_bytes_per_sec: Option<f64>,
    /// Median service time of a small read once admitted, ns.
    pub read_latency_ns: u64,
    /// Median service time of a small write once admitted, ns.
    pub write_latency_ns: u64,
    /// Log-normal sigma of the service time (0 = constant).
    pub latency_sigma: f64,
    /// Internal transfer rate, bytes per second (adds size / rate to each service time).
    pub transfer_bytes_per_sec: f64,
    /// Requests the device serves at once (NVMe queues, EBS, one for a disk arm).
    pub parallelism: u32,
    /// Usable size in bytes, when known (required for an L2ARC cache device).
    pub capacity_bytes: Option<u64>,
    /// Instance storage that comes back empty when the VM moves to another host (AWS
    /// instance store, Azure temporary disk).
    pub ephemeral: bool,
    /// A spinning disk: its mechanics replace the log-normal service time (the latencies
    /// above become the controller's command overhead); None = solid state or virtual.
    pub rotational: Option<RotationalConfig>,
}

/// Mechanics of a rotational disk (see `dev::disk`); values from the drive's data sheet.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationalConfig {
    /// Spindle speed, revolutions per minute (7200: one revolution in 8.33 ms).
    pub rpm: u32,
    /// Seek between adjacent tracks, read, ns (data sheet "single track" or "track-to-track").
    pub track_to_track_seek_ns: u64,
    /// Mean read seek over all pairs of tracks, ns (data sheet "average seek").
    pub average_seek_ns: u64,
    /// Seek across the whole stroke, read, ns (data sheet "full stroke").
    pub full_stroke_seek_ns: u64,
    /// Extra settle time of a write seek over a read seek, ns (data sheet write minus read).
    pub write_settle_ns: u64,
    /// Media transfer rate at the outer edge (start of the LBA range), bytes per second.
    pub outer_rate_bytes_per_sec: f64,
    /// Media transfer rate at the inner edge (end of the LBA range), bytes per second.
    pub inner_rate_bytes_per_sec: f64,
    /// Bytes the drive reads ahead into its cache after a read (0 = no read-ahead).
    pub readahead_bytes: u64,
}

/// The filesystem under the database files.
// One per variant: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum FsConfig {
    /// OpenZFS dataset on a pool.
    Zfs(ZfsConfig),
    /// XFS: extent-mapped, no per-record metadata reads.
    Xfs(ExtentFsConfig),
    /// ext4: extent-mapped, no per-record metadata reads.
    Ext4(ExtentFsConfig),
}

/// Extent-mapped filesystem (XFS, ext4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtentFsConfig {
    /// Device holding the filesystem (with bcache: its backing device).
    pub device: String,
    /// Filesystem block size in bytes (4096 for both by default).
    pub block_size: u32,
    /// bcache between the filesystem and `device`: the filesystem is made on
    /// /dev/bcache0, `device` is the backing device; None = directly on `device`.
    pub bcache: Option<BcacheConfig>,
}

/// bcache's `cache_mode` (sysfs of the backing device; `CACHE_MODE_*` in bcache.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcacheCacheMode {
    /// Writes go to the backing device and the cache; reads are cached (the default:
    /// make-bcache without --writeback).
    Writethrough,
    /// Writes go to the cache only (dirty), written back later.
    Writeback,
    /// Writes go to the backing device only and drop cached copies; reads are cached.
    Writearound,
    /// Nothing new is cached; reads still hit what the cache holds.
    None,
}

/// `cache_replacement_policy` of the cache device (`CACHE_REPLACEMENT_*`, alloc.c
/// `invalidate_buckets_lru/fifo/random()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcacheReplacement {
    /// Least recently used bucket first (bucket `prio`); make-bcache's default.
    Lru,
    /// Buckets in device order.
    Fifo,
    /// Random buckets.
    Random,
}

/// A bcache cache set of one cache device with one backing device attached. Names and
/// defaults as in the kernel's Documentation/admin-guide/bcache.rst and bcache-tools'
/// make-bcache; the model is `cache::bcache`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcacheConfig {
    /// The cache device (a name of the scenario's devices; needs a size).
    pub cache_device: String,
    /// cache_mode: writethrough (default), writeback, writearound, none.
    pub cache_mode: BcacheCacheMode,
    /// sequential_cutoff, bytes: a task's sequential I/O bypasses the cache once its
    /// stream (or the running average of its streams) reaches this; 0 = never.
    /// Default 4 MiB (super.c `cached_dev_init()`: `dc->sequential_cutoff = 4 << 20`).
    pub sequential_cutoff: u64,
    /// Bucket size, bytes: the cache device's allocation and eviction unit. make-bcache
    /// --bucket, default 1024 sectors = 512 KiB.
    pub bucket_size: u64,
    /// cache_replacement_policy: lru (make-bcache default), fifo, random.
    pub cache_replacement_policy: BcacheReplacement,
    /// readahead, bytes: a cache miss also reads and caches up to this much beyond the
    /// request (`cached_dev_cache_miss()`, kernels up to 5.x); default 0.
    pub readahead: u64,
    /// congested_read_threshold_us: cache reads slower than this make bcache bypass the
    /// cache for sequential-ish I/O (`bch_get_congested()`); default 2000, 0 = off.
    pub congested_read_threshold_us: u64,
    /// congested_write_threshold_us: the same for cache writes; default 20000, 0 = off.
    pub congested_write_threshold_us: u64,
}

/// The OpenZFS release whose behaviour is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZfsRelease {
    /// The illumos ZFS of pool version 28 (2012), as FreeBSD 8.3 to 9.x and ZoL 0.6.1
    /// shipped it: arc_p, no dbuf cache, no compressed ARC, no ABD (see
    /// [`ZfsFeatures`]); its other mechanisms are modelled as 0.8's where they are the
    /// same code (arc_p adaptation and growth), and each model says where it takes 0.8's.
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
}

impl ZfsRelease {
    /// The release as users write it ("0.8", "2.1", "2.2").
    pub fn name(self) -> &'static str {
        match self {
            ZfsRelease::V0_6 => "0.6",
            ZfsRelease::V0_8 => "0.8",
            ZfsRelease::V2_1 => "2.1",
            ZfsRelease::V2_2 => "2.2",
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
    /// one leaf, so the most a child's queue length (its mirror load) can show.
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
    /// Separate intent-log vdevs (SLOG); validated and kept, not used by the model yet.
    pub log: Vec<VdevConfig>,
    /// Allocation and mirror tunables.
    pub pool: PoolTunables,
    /// Write path tunables: dirty data, txgs, the write throttle, async write queueing.
    pub txg: TxgTunables,
    /// Pool sector size exponent (ashift); sizes round up to 2^ashift.
    pub ashift: u8,
    /// Dataset recordsize in bytes (power of two, 512 B to 16 MiB).
    pub recordsize: u32,
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
    /// zfs_compressed_arc_enabled (default true since 0.7.0).
    pub zfs_compressed_arc_enabled: bool,
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

/// The database above the filesystem.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatabaseConfig {
    /// MySQL / MariaDB InnoDB.
    Innodb(InnodbConfig),
}

/// InnoDB settings (names as in the MySQL manual).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InnodbConfig {
    /// innodb_buffer_pool_size, bytes.
    pub innodb_buffer_pool_size: u64,
    /// innodb_page_size, bytes (16384 default).
    pub innodb_page_size: u32,
    /// innodb_old_blocks_pct (37 default): share of the LRU list for the old sublist.
    pub innodb_old_blocks_pct: u32,
    /// innodb_old_blocks_time, ns (1000 ms default).
    pub innodb_old_blocks_time_ns: u64,
    /// innodb_flush_method ("O_DIRECT" or "fsync").
    pub innodb_flush_method: String,
    /// innodb_lru_scan_depth (0: the server's default, 1024 in MySQL 5.7, per buffer pool
    /// instance; 1536 in MariaDB 10.11, for the one pool): the free frames the page cleaner
    /// keeps (see `db::innodb::buffer_pool`).
    #[serde(default)]
    pub innodb_lru_scan_depth: u32,
    /// The server that wrote the pages (their bytes: see `db::innodb::page_image`).
    #[serde(default)]
    pub server: InnodbServer,
    /// character_set_server when the tables were created (sysbench names none): it
    /// decides how `CHAR` columns are stored (see `db::innodb::page_image`).
    #[serde(default)]
    pub character_set_server: CharacterSet,
}

/// A server character set, as far as it decides the bytes of a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CharacterSet {
    /// latin1: the compiled default of MySQL 5.7 and MariaDB 10.11 (one byte per
    /// character, `CHAR(n)` fixed length).
    #[default]
    Latin1,
    /// utf8mb4: MySQL 8.0's default and what Debian's and Ubuntu's MariaDB packages set
    /// (`50-server.cnf`); `CHAR(n)` then has a length byte.
    Utf8mb4,
}

/// The server behind `[database] type = "innodb"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum InnodbServer {
    /// MySQL 5.7 (and Percona Server 5.7).
    #[default]
    #[serde(rename = "mysql-5.7")]
    Mysql57,
    /// MariaDB 10.11.
    #[serde(rename = "mariadb-10.11")]
    Mariadb1011,
}

/// `--rand-type` when `sysbench prepare` drew k.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrepareRandType {
    /// sysbench 1.0.x's default.
    #[default]
    Special,
    /// --rand-type=uniform.
    Uniform,
}

/// The stored data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatasetConfig {
    /// Tables as `sysbench oltp_common prepare` creates them.
    Sysbench(SysbenchDataset),
    /// Plain files, as a fio job file names them; they exist once a fio job lays them out
    /// or writes them.
    Files(FilesDataset),
}

/// Plain files (object numbers 1..=N in the order given).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesDataset {
    /// The files.
    pub files: Vec<FileConfig>,
}

/// One plain file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Path as fio names it (reporting).
    pub name: String,
    /// Size in bytes once laid out.
    pub size: u64,
}

/// sysbench tables: sbtest1..N with `table_size` rows each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchDataset {
    /// --tables
    pub tables: u32,
    /// --table-size (rows per table)
    pub table_size: u64,
    /// Mean ratio (uncompressed / compressed) the dataset's compression achieves on this
    /// data, per block, before rounding to sectors: for data other than sysbench's (a
    /// measured `zfs get compressratio`). None: the pages are generated as prepare leaves
    /// them and each record's stored size follows from its bytes
    /// (`db::innodb::ibd_records`).
    #[serde(default)]
    pub compress_ratio: Option<f64>,
    /// --rand-type of the prepare (k's distribution in the rows).
    #[serde(default)]
    pub prepare_rand_type: PrepareRandType,
}

/// The load.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// A sysbench OLTP test.
    Sysbench(SysbenchWorkload),
    /// fio jobs over the `files` dataset.
    Fio(FioWorkload),
}

/// A fio job file, resolved (python/ztwin/fio.py parses fio's ini dialect and command
/// line; see `crate::workload::fio` for what each field does).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioWorkload {
    /// fio release whose buffer contents are modelled, "major.minor[.patch]" (2.0 or
    /// later): what laying out a file writes and how compressible buffers are built
    /// changed between releases (`crate::workload::fio::buffers`).
    pub fio_version: String,
    /// The jobs (sections) in job-file order.
    pub jobs: Vec<FioJob>,
}

/// fio `rw` (readwrite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioRw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed reads and writes (rwmixread).
    Rw,
    /// Random mixed reads and writes (rwmixread).
    Randrw,
}

/// fio `random_distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioDistribution {
    /// Uniform (fio's default `random`).
    Random,
    /// zipf:theta
    Zipf,
    /// pareto:h
    Pareto,
    /// normal:sigma (fio's gauss), sigma in percent of the range.
    Normal,
}

/// fio `file_service_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioFileService {
    /// Round robin over the open files (fio's default).
    Roundrobin,
    /// One file until it is done, then the next.
    Sequential,
    /// A uniformly random file.
    Random,
}

/// One fio job (section) with its options resolved ([global] merged in, sizes in bytes,
/// times in ns).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioJob {
    /// Section name.
    pub name: String,
    /// rw
    pub rw: FioRw,
    /// rwmixread, percent of reads in rw/randrw.
    pub rwmixread: u32,
    /// bs of reads, bytes.
    pub bs_read: u32,
    /// bs of writes, bytes.
    pub bs_write: u32,
    /// numjobs: clones of the job, each with its own offsets and random state.
    pub numjobs: u32,
    /// Files of each clone: indices into the `files` dataset (clones share a file when
    /// the job names it with `filename`).
    pub clone_files: Vec<Vec<u32>>,
    /// offset: where in each file the job's range starts, bytes.
    pub offset: u64,
    /// Bytes of each file the job covers (fio's per-file io size: size / nrfiles).
    pub file_range: u64,
    /// io_size (default size): bytes one loop of one clone transfers.
    pub io_size: u64,
    /// loops
    pub loops: u32,
    /// runtime, ns (0: none).
    pub runtime_ns: u64,
    /// time_based
    pub time_based: bool,
    /// ramp_time, ns.
    pub ramp_time_ns: u64,
    /// ioengine (psync, sync, pvsync, pvsync2, libaio, io_uring).
    pub ioengine: String,
    /// iodepth
    pub iodepth: u32,
    /// direct (O_DIRECT)
    pub direct: bool,
    /// file_service_type
    pub file_service_type: FioFileService,
    /// The `:N` of file_service_type (I/Os per file before switching), >= 1.
    pub file_service_nr: u32,
    /// random_distribution
    pub random_distribution: FioDistribution,
    /// Its parameter: zipf theta, pareto h, normal sigma (percent); 0 for random.
    pub distribution_param: f64,
    /// norandommap
    pub norandommap: bool,
    /// randrepeat (default true: the same offsets every run).
    pub randrepeat: bool,
    /// randseed (default 0xb1899bed, FIO_RANDSEED).
    pub randseed: u64,
    /// group_reporting (reporting only).
    pub group_reporting: bool,
    /// The buffer options (what writes and layouts put in the files).
    pub buffers: FioBuffers,
}

/// fio's buffer options; None = not given (fio_option_is_set matters to fio).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioBuffers {
    /// zero_buffers
    pub zero_buffers: Option<bool>,
    /// refill_buffers
    pub refill_buffers: Option<bool>,
    /// scramble_buffers (fio default 1)
    pub scramble_buffers: Option<bool>,
    /// buffer_compress_percentage
    pub buffer_compress_percentage: Option<u32>,
    /// buffer_compress_chunk, bytes
    pub buffer_compress_chunk: Option<u32>,
}

/// sysbench test name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SysbenchTest {
    /// SELECT c FROM sbtestN WHERE id = ?
    OltpPointSelect,
    /// SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ... ?)
    SelectRandomPoints,
}

/// sysbench --rand-type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    /// uniform
    Uniform,
    /// special (sysbench's default in 1.0)
    Special,
    /// gaussian
    Gaussian,
    /// pareto
    Pareto,
    /// zipfian
    Zipfian,
}

/// sysbench options of the test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchWorkload {
    /// Test name.
    pub test: SysbenchTest,
    /// --threads: closed-loop clients.
    pub threads: u32,
    /// --rand-type
    pub rand_type: RandType,
    /// --rand-spec-iter (12)
    pub rand_spec_iter: u32,
    /// --rand-spec-pct (1)
    pub rand_spec_pct: f64,
    /// --rand-spec-res (75)
    pub rand_spec_res: f64,
    /// --rand-pareto-h (0.2)
    pub rand_pareto_h: f64,
    /// --rand-zipfian-exp (0.8)
    pub rand_zipfian_exp: f64,
    /// --random_points (10), select_random_points only
    pub random_points: u32,
}

/// Timing of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Warm-up before the measured window, ns (counters reset after it).
    pub warmup_ns: u64,
    /// Measured window, ns.
    pub duration_ns: u64,
    /// Interval of the time series, ns.
    pub report_interval_ns: u64,
}

impl VariantConfig {
    /// The phases to run: `phases`, or when it is empty one workload phase from `run`
    /// (sysbench), or one fio phase running every job (fio, as `fio jobfile` does).
    pub fn effective_phases(&self) -> Vec<PhaseConfig> {
        if let (true, WorkloadConfig::Fio(f)) = (self.phases.is_empty(), &self.workload) {
            vec![PhaseConfig::Fio(FioPhase { name: "fio".into(), jobs: (0..f.jobs.len() as u32).collect() })]
        } else if self.phases.is_empty() {
            vec![PhaseConfig::Workload(WorkloadPhase {
                name: "benchmark".into(),
                warmup_ns: self.run.warmup_ns,
                duration_ns: self.run.duration_ns,
            })]
        } else {
            self.phases.clone()
        }
    }

    /// Parses and validates a resolved variant from JSON.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: VariantConfig =
            serde_json::from_str(text).map_err(|e| Error::config("<json>", e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks what serde cannot: ranges, cross references, sizes that fit the machine.
    pub fn validate(&self) -> Result<()> {
        let m = &self.machine;
        ensure(m.vcpus >= 1, "machine.vcpus", "must be at least 1")?;
        ensure(m.ram_bytes >= 64 << 20, "machine.ram_bytes", "must be at least 64 MiB")?;
        ensure(
            m.cpu.speed > 0.0 && m.cpu.speed.is_finite(),
            "machine.cpu.speed",
            "must be a positive number",
        )?;
        // Bounds that keep every sum of simulated nanoseconds far from u64 overflow: a
        // cost of more than a second per unit of work, or a copy slower than 1 MB/s, is
        // a unit mistake, not a machine.
        let c = &m.cpu;
        for (name, ns) in [
            ("statement_ns", c.statement_ns),
            ("row_ns", c.row_ns),
            ("page_access_ns", c.page_access_ns),
            ("syscall_ns", c.syscall_ns),
            ("device_io_ns", c.device_io_ns),
            ("zfs_block_ns", c.zfs_block_ns),
            ("zio_ns", c.zio_ns),
        ] {
            ensure(
                ns as f64 / c.speed <= SEC_F,
                &format!("machine.cpu.{name}"),
                "must be at most 1 s of CPU per unit of work (after dividing by speed)",
            )?;
        }
        for (name, bps) in [
            ("checksum_bytes_per_sec", c.checksum_bytes_per_sec),
            ("decompress_bytes_per_sec", c.decompress_bytes_per_sec),
            ("memcpy_bytes_per_sec", c.memcpy_bytes_per_sec),
        ] {
            ensure(
                bps as f64 * c.speed >= 1e6,
                &format!("machine.cpu.{name}"),
                "must be at least 1 MB/s (after multiplying by speed)",
            )?;
        }
        for (i, d) in self.devices.iter().enumerate() {
            let at = |f: &str| format!("devices[{i}] ({}).{f}", d.name);
            if let Some(iops) = d.iops_limit {
                ensure(iops > 0.0 && iops.is_finite(), &at("iops_limit"), "must be a positive number")?;
            }
            if let Some(t) = d.throughput_limit_bytes_per_sec {
                ensure(t > 0.0 && t.is_finite(), &at("throughput_limit"), "must be a positive number")?;
            }
            ensure(d.parallelism >= 1, &at("parallelism"), "must be at least 1")?;
            ensure(d.transfer_bytes_per_sec > 0.0, &at("transfer_bytes_per_sec"), "must be positive")?;
            for (name, ns) in
                [("read_latency_ns", d.read_latency_ns), ("write_latency_ns", d.write_latency_ns)]
            {
                ensure(ns <= 60 * SEC, &at(name), "must be at most 60 s")?;
            }
            ensure(
                d.latency_sigma >= 0.0 && d.latency_sigma < 5.0,
                &at("latency_sigma"),
                "must be in [0, 5)",
            )?;
            if self.devices[..i].iter().any(|o| o.name == d.name) {
                return Err(Error::config(at("name"), "device names must be unique"));
            }
            if let Some(r) = &d.rotational {
                ensure(
                    d.parallelism == 1,
                    &at("parallelism"),
                    "a rotational disk serves one request at a time: 1",
                )?;
                ensure(
                    d.capacity_bytes.is_some_and(|c| c >= 1 << 20),
                    &at("capacity_bytes"),
                    "a rotational disk needs its size (seek distances are fractions of it), at least 1 MiB",
                )?;
                crate::dev::disk::DiskMechanics::new(
                    r,
                    d.capacity_bytes.unwrap_or(0),
                    d.transfer_bytes_per_sec,
                )
                .map_err(|e| match e {
                    Error::Config { field, message } => {
                        Error::config(at(&format!("rotational.{field}")), message)
                    }
                    other => other,
                })?;
            }
        }
        let has = |n: &str| self.devices.iter().any(|d| d.name == n);
        match &self.filesystem {
            FsConfig::Zfs(z) => {
                ensure(!z.vdevs.is_empty(), "filesystem.vdevs", "needs at least one device")?;
                let mut used: Vec<&str> = Vec::new();
                for (field, list) in [("filesystem.vdevs", &z.vdevs), ("filesystem.log", &z.log)] {
                    for (k, v) in list.iter().enumerate() {
                        let at = format!("{field}[{k}]");
                        if let VdevConfig::Mirror(m) = v {
                            ensure(m.mirror.len() >= 2, &at, "a mirror needs at least two devices")?;
                        }
                        for d in v.devices() {
                            ensure(has(d), &at, &format!("names unknown device '{d}'"))?;
                            ensure(
                                !used.contains(&d.as_str()),
                                &at,
                                &format!("device '{d}' is used twice in the pool"),
                            )?;
                            used.push(d);
                        }
                    }
                }
                for c in &z.cache {
                    ensure(
                        !used.contains(&c.as_str()),
                        "filesystem.cache",
                        &format!("device '{c}' is already a data or log vdev"),
                    )?;
                }
                ensure(
                    z.cache.is_empty() || z.release.features().l2arc_modelled,
                    "filesystem.cache",
                    &format!(
                        "the L2ARC of release {} is not modelled (use release 0.8 or later)",
                        z.release.name()
                    ),
                )?;
                let p = &z.pool;
                ensure(
                    p.metaslab_aliquot == 0 || (4096..=1 << 30).contains(&p.metaslab_aliquot),
                    "filesystem.pool.metaslab_aliquot",
                    "must be 0 (the release's default) or 4 KiB to 1 GiB",
                )?;
                ensure(
                    (1..=1000).contains(&p.zfs_vdev_sync_read_max_active),
                    "filesystem.pool.zfs_vdev_sync_read_max_active",
                    "must be 1 to 1000 (zfs_vdev_max_active)",
                )?;
                for (name, inc) in [
                    ("zfs_vdev_mirror_rotating_inc", p.zfs_vdev_mirror_rotating_inc),
                    ("zfs_vdev_mirror_rotating_seek_inc", p.zfs_vdev_mirror_rotating_seek_inc),
                    ("zfs_vdev_mirror_non_rotating_inc", p.zfs_vdev_mirror_non_rotating_inc),
                    ("zfs_vdev_mirror_non_rotating_seek_inc", p.zfs_vdev_mirror_non_rotating_seek_inc),
                ] {
                    ensure(
                        inc <= i32::MAX as u32 / 2,
                        &format!("filesystem.pool.{name}"),
                        "must fit an int with room for the queue length",
                    )?;
                }
                ensure(
                    p.zfs_vdev_mirror_rotating_seek_offset <= i32::MAX as u64,
                    "filesystem.pool.zfs_vdev_mirror_rotating_seek_offset",
                    "must fit an int (at most 2147483647)",
                )?;
                let t = &z.txg;
                for (name, v) in [
                    ("zfs_dirty_data_sync_percent", t.zfs_dirty_data_sync_percent),
                    ("zfs_delay_min_dirty_percent", t.zfs_delay_min_dirty_percent),
                ] {
                    ensure(v <= 100, &format!("filesystem.txg.{name}"), "must be 0 (default) to 100")?;
                }
                ensure(
                    t.zfs_delay_scale <= 1 << 40,
                    "filesystem.txg.zfs_delay_scale",
                    "must be at most 2^40 ns (zfs_delay_scale * zfs_dirty_data_max must fit 64 bits)",
                )?;
                ensure(t.zfs_txg_timeout <= 3600, "filesystem.txg.zfs_txg_timeout", "must be 0 to 3600 s")?;
                for (name, v) in [
                    ("zfs_vdev_aggregation_limit", t.zfs_vdev_aggregation_limit),
                    ("zfs_vdev_aggregation_limit_non_rotating", t.zfs_vdev_aggregation_limit_non_rotating),
                ] {
                    ensure(v <= 16 << 20, &format!("filesystem.txg.{name}"), "must be at most 16 MiB")?;
                }
                let (lo, hi) = (t.zfs_vdev_async_write_min_active, t.zfs_vdev_async_write_max_active);
                ensure(
                    lo <= 1000 && hi <= 1000 && (lo == 0 || hi == 0 || lo <= hi),
                    "filesystem.txg.zfs_vdev_async_write_min_active",
                    "must be at most zfs_vdev_async_write_max_active, both 0 (default) to 1000",
                )?;
                ensure((9..=16).contains(&z.ashift), "filesystem.ashift", "must be 9 to 16")?;
                ensure(
                    z.recordsize.is_power_of_two() && (512..=16 << 20).contains(&z.recordsize),
                    "filesystem.recordsize",
                    "must be a power of two from 512 B to 16 MiB",
                )?;
                ensure(
                    z.indirect_block_size.is_power_of_two()
                        && (4096..=128 << 10).contains(&z.indirect_block_size),
                    "filesystem.indirect_block_size",
                    "must be a power of two from 4 KiB to 128 KiB",
                )?;
                let a = &z.arc;
                if a.zfs_arc_max != 0 {
                    ensure(
                        a.zfs_arc_max >= 64 << 20,
                        "filesystem.arc.zfs_arc_max",
                        "must be at least 64 MiB",
                    )?;
                    ensure(
                        a.zfs_arc_max < m.ram_bytes,
                        "filesystem.arc.zfs_arc_max",
                        "must be less than the machine's RAM",
                    )?;
                }
                if a.zfs_arc_min != 0 && a.zfs_arc_max != 0 {
                    ensure(
                        a.zfs_arc_min <= a.zfs_arc_max,
                        "filesystem.arc.zfs_arc_min",
                        "must not exceed zfs_arc_max",
                    )?;
                }
                // OpenZFS ignores out-of-range tunables without a word (arc_tuning_update);
                // we refuse them instead, saying what the release would have done.
                let limits = crate::cache::arc::ArcLimits::from_params(&crate::cache::arc::ArcParams {
                    release: z.release,
                    ram_bytes: m.ram_bytes,
                    tunables: a.clone(),
                });
                if a.zfs_arc_max != 0 && limits.c_max != a.zfs_arc_max {
                    return Err(Error::config(
                        "filesystem.arc.zfs_arc_max",
                        format!(
                            "release {} ignores zfs_arc_max = {} bytes here (it must exceed arc_c_min = {} bytes, the default max(RAM/32, 32 MiB), in 0.8; be at least 64 MiB and below RAM in every release); arc_c_max would stay {} bytes",
                            z.release.name(), a.zfs_arc_max, limits.c_min, limits.c_max
                        ),
                    ));
                }
                if a.zfs_arc_min != 0 && limits.c_min != a.zfs_arc_min {
                    return Err(Error::config(
                        "filesystem.arc.zfs_arc_min",
                        format!(
                            "release {} ignores zfs_arc_min = {} bytes here (it must be at least 32 MiB and at most arc_c_max = {} bytes)",
                            z.release.name(), a.zfs_arc_min, limits.c_max
                        ),
                    ));
                }
                if z.release == ZfsRelease::V2_2 {
                    ensure(
                        a.zfs_arc_meta_limit == 0,
                        "filesystem.arc.zfs_arc_meta_limit",
                        "does not exist in release 2.2 (removed by PR #14359)",
                    )?;
                    ensure(
                        a.zfs_arc_meta_min == 0,
                        "filesystem.arc.zfs_arc_meta_min",
                        "does not exist in release 2.2 (removed by PR #14359)",
                    )?;
                } else {
                    ensure(
                        a.zfs_arc_meta_balance == 0,
                        "filesystem.arc.zfs_arc_meta_balance",
                        "exists only from release 2.2",
                    )?;
                }
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                ensure(has(&x.device), "filesystem.device", &format!("names unknown device '{}'", x.device))?;
                ensure(
                    x.block_size.is_power_of_two() && (512..=65536).contains(&x.block_size),
                    "filesystem.block_size",
                    "must be a power of two from 512 to 64K",
                )?;
                if let Some(b) = &x.bcache {
                    self.validate_bcache(b, &x.device)?;
                }
            }
        }
        match (&self.workload, &self.dataset, &self.database) {
            (WorkloadConfig::Sysbench(w), DatasetConfig::Sysbench(ds), Some(DatabaseConfig::Innodb(db))) => {
                validate_innodb(db, m)?;
                validate_sysbench(w, ds)?;
            }
            (WorkloadConfig::Sysbench(_), _, _) => {
                return Err(Error::config(
                    "workload",
                    "a sysbench workload needs a sysbench dataset and an innodb database",
                ))
            }
            (WorkloadConfig::Fio(f), DatasetConfig::Files(files), None) => {
                crate::workload::fio::validate(f, files, &self.filesystem)?;
            }
            (WorkloadConfig::Fio(_), _, _) => {
                return Err(Error::config(
                    "workload",
                    "a fio workload needs a files dataset and no database (fio reads the files itself)",
                ))
            }
        }
        let r = &self.run;
        ensure(r.duration_ns > 0, "run.duration", "must be positive")?;
        ensure(
            r.warmup_ns.checked_add(r.duration_ns).is_some_and(|t| t <= MAX_SIMULATED_NS),
            "run.duration",
            "warm-up plus duration must be at most 30 days of simulated time",
        )?;
        ensure(r.report_interval_ns > 0, "run.report_interval", "must be positive")?;
        ensure(
            (r.warmup_ns + r.duration_ns) / r.report_interval_ns <= MAX_SERIES_ROWS,
            "run.report_interval",
            "too short: the series would have more than 1,000,000 rows",
        )?;
        let fio = match &self.workload {
            WorkloadConfig::Fio(f) => Some(f),
            WorkloadConfig::Sysbench(_) => None,
        };
        let mut workload_ns: u64 = 0;
        let mut measured = false;
        for (i, p) in self.phases.iter().enumerate() {
            let at = |f: &str| format!("phases[{i}].{f}");
            match p {
                PhaseConfig::Workload(w) => {
                    ensure(
                        fio.is_none(),
                        &at("type"),
                        "a fio workload runs phases of type fio, not workload",
                    )?;
                    ensure(w.duration_ns > 0, &at("duration"), "must be positive")?;
                    workload_ns = workload_ns.saturating_add(w.warmup_ns).saturating_add(w.duration_ns);
                    measured = true;
                }
                PhaseConfig::Cat(c) => {
                    ensure(
                        (512..=16 << 20).contains(&c.read_size),
                        &at("read_size"),
                        "must be from 512 B to 16 MiB",
                    )?;
                    ensure((1..=100).contains(&c.passes), &at("passes"), "must be 1 to 100")?;
                }
                PhaseConfig::Restart(_) => {}
                PhaseConfig::Tune(_) => ensure(
                    matches!(&self.filesystem, FsConfig::Zfs(z) if !z.cache.is_empty()),
                    &at("type"),
                    "a tune phase sets L2ARC module parameters: it needs a ZFS pool with a cache device (filesystem.cache)",
                )?,
                PhaseConfig::Fio(ph) => {
                    let Some(f) = fio else {
                        return Err(Error::config(at("type"), "phases of type fio need a fio workload"));
                    };
                    crate::workload::fio::validate_phase(f, ph, &at("jobs"))?;
                    measured = true;
                }
            }
        }
        if !self.phases.is_empty() {
            ensure(
                measured,
                "phases",
                if fio.is_some() {
                    "needs at least one fio phase (the one measured)"
                } else {
                    "needs at least one workload phase (the one measured)"
                },
            )?;
            ensure(
                workload_ns <= MAX_SIMULATED_NS,
                "phases",
                "workload phases must add up to at most 30 days of simulated time",
            )?;
            ensure(
                workload_ns / r.report_interval_ns <= MAX_SERIES_ROWS,
                "run.report_interval",
                "too short: the series would have more than 1,000,000 rows",
            )?;
        } else if let Some(f) = fio {
            let all = FioPhase { name: "fio".into(), jobs: (0..f.jobs.len() as u32).collect() };
            crate::workload::fio::validate_phase(f, &all, "workload.jobs")?;
        }
        Ok(())
    }
}

fn validate_innodb(db: &InnodbConfig, m: &MachineConfig) -> Result<()> {
    ensure(
        [4096, 8192, 16384, 32768, 65536].contains(&db.innodb_page_size),
        "database.innodb_page_size",
        "must be 4K, 8K, 16K, 32K or 64K",
    )?;
    ensure(
        db.innodb_buffer_pool_size >= 5 << 20,
        "database.innodb_buffer_pool_size",
        "must be at least 5 MiB",
    )?;
    ensure(
        db.innodb_buffer_pool_size <= m.ram_bytes,
        "database.innodb_buffer_pool_size",
        "must not exceed the machine's RAM",
    )?;
    ensure(
        db.innodb_buffer_pool_size / u64::from(db.innodb_page_size) <= 1 << 30,
        "database.innodb_buffer_pool_size",
        "must hold at most 2^30 pages (the model keeps about 40 bytes per page)",
    )?;
    ensure(
        (5..=95).contains(&db.innodb_old_blocks_pct),
        "database.innodb_old_blocks_pct",
        "must be 5 to 95",
    )?;
    ensure(
        db.innodb_flush_method == "O_DIRECT" || db.innodb_flush_method == "fsync",
        "database.innodb_flush_method",
        "must be O_DIRECT or fsync",
    )?;
    Ok(())
}

fn validate_sysbench(w: &SysbenchWorkload, ds: &SysbenchDataset) -> Result<()> {
    // Object numbers of the ARC's block keys have 24 bits (BlockKey).
    ensure((1..1 << 24).contains(&ds.tables), "dataset.tables", "must be 1 to 16777215")?;
    // sysbench's id column is a signed 32-bit INTEGER.
    ensure(
        (1..=i32::MAX as u64).contains(&ds.table_size),
        "dataset.table_size",
        "must be 1 to 2147483647 (sysbench's id is a 32-bit INTEGER)",
    )?;
    ensure(
        ds.compress_ratio.is_none_or(|r| r >= 1.0 && r.is_finite()),
        "dataset.compress_ratio",
        "must be at least 1.0",
    )?;
    ensure((1..=4096).contains(&w.threads), "workload.threads", "must be 1 to 4096")?;
    ensure(w.random_points >= 1 && w.random_points <= 1000, "workload.random_points", "must be 1 to 1000")?;
    ensure(w.rand_spec_iter >= 1, "workload.rand_spec_iter", "must be at least 1")?;
    ensure((0.0..=100.0).contains(&w.rand_spec_pct), "workload.rand_spec_pct", "must be 0 to 100")?;
    ensure((0.0..=100.0).contains(&w.rand_spec_res), "workload.rand_spec_res", "must be 0 to 100")?;
    ensure(
        w.rand_pareto_h > 0.0 && w.rand_pareto_h < 1.0,
        "workload.rand_pareto_h",
        "must be between 0 and 1 (exclusive)",
    )?;
    ensure(
        w.rand_zipfian_exp >= 0.0 && w.rand_zipfian_exp.is_finite(),
        "workload.rand_zipfian_exp",
        "must be a number >= 0",
    )?;
    Ok(())
}

impl VariantConfig {
    fn validate_bcache(&self, b: &BcacheConfig, backing: &str) -> Result<()> {
        let f = |name: &str| format!("filesystem.bcache.{name}");
        let Some(dev) = self.devices.iter().find(|d| d.name == b.cache_device) else {
            return Err(Error::config(
                f("cache_device"),
                format!("names unknown device '{}'", b.cache_device),
            ));
        };
        ensure(
            b.cache_device != backing,
            &f("cache_device"),
            "must differ from filesystem.device (the backing device)",
        )?;
        let Some(capacity) = dev.capacity_bytes else {
            return Err(Error::config(
                f("cache_device"),
                format!("device '{}' needs a size (the cache's capacity)", dev.name),
            ));
        };
        ensure(
            b.bucket_size.is_power_of_two() && (4096..=16 << 20).contains(&b.bucket_size),
            &f("bucket_size"),
            "must be a power of two from 4K to 16M (make-bcache --bucket)",
        )?;
        let nbuckets = capacity / b.bucket_size;
        ensure(
            nbuckets > 512,
            &f("bucket_size"),
            &format!(
                "gives {nbuckets} buckets on a {capacity}-byte cache device; bcache needs more than 512 (super.c cache_alloc())"
            ),
        )?;
        ensure(
            nbuckets < crate::cache::bcache::MAX_BUCKETS,
            &f("bucket_size"),
            &format!(
                "gives {nbuckets} buckets; the model indexes at most {} (use larger buckets)",
                crate::cache::bcache::MAX_BUCKETS - 1
            ),
        )?;
        for (name, v) in [
            ("sequential_cutoff", b.sequential_cutoff),
            ("readahead", b.readahead),
            ("congested_read_threshold_us", b.congested_read_threshold_us),
            ("congested_write_threshold_us", b.congested_write_threshold_us),
        ] {
            ensure(
                v <= u32::MAX as u64,
                &f(name),
                "must fit the kernel's unsigned int (at most 4294967295)",
            )?;
        }
        Ok(())
    }
}

const SEC: u64 = crate::sim::time::SEC;
const SEC_F: f64 = SEC as f64;
/// Longest run (warm-up plus window) the core accepts: 30 days.
pub const MAX_SIMULATED_NS: u64 = 30 * 86_400 * SEC;
/// Most rows a run's series may have.
pub const MAX_SERIES_ROWS: u64 = 1_000_000;

fn ensure(ok: bool, field: &str, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::config(field, what))
    }
}

/// A small valid variant for tests (unit and integration): 8 clients on 2 vCPUs, one
/// 3000-IOPS device "disk", ZFS 0.8 (recordsize 16K, 128 MiB ARC) over 4 tables of 200k
/// rows, 16 MiB buffer pool. Tests change what they study and keep the rest.
#[doc(hidden)]
pub fn test_variant() -> VariantConfig {
    use crate::sim::time::{MS, SEC, US};
    VariantConfig {
        scenario: "test".into(),
        variant: "v".into(),
        seed: 7,
        machine: MachineConfig {
            name: "test".into(),
            vcpus: 2,
            ram_bytes: 2 << 30,
            cpu: CpuCosts {
                speed: 1.0,
                statement_ns: 20_000,
                row_ns: 1_000,
                page_access_ns: 500,
                syscall_ns: 2_000,
                device_io_ns: 5_000,
                zfs_block_ns: 1_000,
                zio_ns: 5_000,
                memcpy_bytes_per_sec: 8_000_000_000,
                checksum_bytes_per_sec: 4_000_000_000,
                decompress_bytes_per_sec: 2_000_000_000,
            },
        },
        devices: vec![DeviceConfig {
            name: "disk".into(),
            kind: "test".into(),
            iops_limit: Some(3000.0),
            throughput_limit_bytes_per_sec: None,
            read_latency_ns: 500 * US,
            write_latency_ns: 500 * US,
            latency_sigma: 0.2,
            transfer_bytes_per_sec: 1e9,
            parallelism: 64,
            capacity_bytes: None,
            ephemeral: false,
            rotational: None,
        }],
        filesystem: FsConfig::Zfs(ZfsConfig {
            release: ZfsRelease::V0_8,
            vdevs: vec!["disk".into()],
            log: vec![],
            pool: PoolTunables::default(),
            txg: TxgTunables::default(),
            ashift: 12,
            recordsize: 16384,
            indirect_block_size: 131072,
            compression: Compression::Lz4,
            primarycache: CacheProperty::All,
            arc: ArcTunables {
                zfs_arc_max: 128 << 20,
                zfs_compressed_arc_enabled: true,
                ..Default::default()
            },
            release_patch: 11,
            cache: vec![],
            secondarycache: CacheProperty::All,
            l2arc: Default::default(),
            arc_warm_at_first_eviction: false,
            zfetch: Default::default(),
        }),
        database: Some(DatabaseConfig::Innodb(InnodbConfig {
            innodb_buffer_pool_size: 16 << 20,
            innodb_page_size: 16384,
            innodb_old_blocks_pct: 37,
            innodb_old_blocks_time_ns: 1000 * MS,
            innodb_lru_scan_depth: 0,
            character_set_server: CharacterSet::Latin1,
            innodb_flush_method: "O_DIRECT".into(),
            server: InnodbServer::Mysql57,
        })),
        dataset: DatasetConfig::Sysbench(SysbenchDataset {
            tables: 4,
            table_size: 200_000,
            compress_ratio: Some(1.28),
            prepare_rand_type: PrepareRandType::Special,
        }),
        workload: WorkloadConfig::Sysbench(SysbenchWorkload {
            test: SysbenchTest::OltpPointSelect,
            threads: 8,
            rand_type: RandType::Uniform,
            rand_spec_iter: 12,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
            rand_pareto_h: 0.2,
            rand_zipfian_exp: 0.8,
            random_points: 10,
        }),
        run: RunConfig { warmup_ns: 2 * SEC, duration_ns: 4 * SEC, report_interval_ns: SEC },
        phases: vec![],
    }
}

/// A small valid fio variant for tests: the test variant's machine, device and ZFS
/// (recordsize 128K, lz4, 128 MiB ARC) with one 256 MiB file and three jobs on it:
/// "seqread" (read, bs 128K), "randread" (16K, 4 jobs, time based 10 s, randrepeat=0,
/// norandommap) and "write" (write, bs 128K); fio 3.36; one phase running "seqread".
/// Tests change what they study.
#[doc(hidden)]
pub fn test_fio_variant() -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "test-fio".into();
    if let FsConfig::Zfs(z) = &mut c.filesystem {
        z.recordsize = 128 << 10;
    }
    c.database = None;
    let size = 256u64 << 20;
    c.dataset =
        DatasetConfig::Files(FilesDataset { files: vec![FileConfig { name: "/tank/f".into(), size }] });
    let job = |name: &str, rw: FioRw, bs: u32| FioJob {
        name: name.into(),
        rw,
        rwmixread: 50,
        bs_read: bs,
        bs_write: bs,
        numjobs: 1,
        clone_files: vec![vec![0]],
        offset: 0,
        file_range: size,
        io_size: size,
        loops: 1,
        runtime_ns: 0,
        time_based: false,
        ramp_time_ns: 0,
        ioengine: "psync".into(),
        iodepth: 1,
        direct: false,
        file_service_type: FioFileService::Roundrobin,
        file_service_nr: 1,
        random_distribution: FioDistribution::Random,
        distribution_param: 0.0,
        norandommap: false,
        randrepeat: true,
        randseed: 0xb189_9bed,
        group_reporting: true,
        buffers: FioBuffers::default(),
    };
    let mut rand = job("randread", FioRw::Randread, 16384);
    rand.numjobs = 4;
    rand.clone_files = vec![vec![0]; 4];
    rand.time_based = true;
    rand.runtime_ns = 10 * SEC;
    rand.randrepeat = false;
    rand.norandommap = true;
    c.workload = WorkloadConfig::Fio(FioWorkload {
        fio_version: "3.36".into(),
        jobs: vec![job("seqread", FioRw::Read, 128 << 10), rand, job("write", FioRw::Write, 128 << 10)],
    });
    c.phases = vec![PhaseConfig::Fio(FioPhase { name: "seqread".into(), jobs: vec![0] })];
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::run_variant;

    fn rejected(field: &str, change: impl FnOnce(&mut VariantConfig)) {
        let mut cfg = test_variant();
        change(&mut cfg);
        match run_variant(&cfg) {
            Err(Error::Config { field: f, .. }) => assert!(f.contains(field), "{f} is not {field}"),
            other => panic!("{field}: expected a configuration error, got {other:?}"),
        }
    }

    #[test]
    fn the_test_variant_is_valid() {
        test_variant().validate().unwrap();
    }

    /// Inputs that used to overflow, loop for ages, or collide keys are refused by name
    /// (before the run, so no panic reaches a user).
    #[test]
    fn out_of_range_inputs_are_configuration_errors() {
        rejected("machine.cpu.statement_ns", |c| c.machine.cpu.speed = 1e-300);
        rejected("machine.cpu.row_ns", |c| c.machine.cpu.row_ns = u64::MAX);
        rejected("machine.cpu.memcpy_bytes_per_sec", |c| c.machine.cpu.memcpy_bytes_per_sec = 1);
        rejected("read_latency_ns", |c| c.devices[0].read_latency_ns = u64::MAX);
        rejected("database.innodb_buffer_pool_size", |c| {
            let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
            db.innodb_buffer_pool_size = u64::MAX;
        });
        rejected("dataset.tables", |c| {
            let DatasetConfig::Sysbench(ds) = &mut c.dataset else { unreachable!() };
            ds.tables = 1 << 24;
        });
        rejected("dataset.table_size", |c| {
            let DatasetConfig::Sysbench(ds) = &mut c.dataset else { unreachable!() };
            ds.table_size = u64::MAX;
        });
        rejected("workload.rand_pareto_h", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
            w.rand_pareto_h = 0.0;
        });
        rejected("workload.rand_zipfian_exp", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
            w.rand_zipfian_exp = f64::NAN;
        });
        rejected("workload.rand_spec_iter", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
            w.rand_spec_iter = 0;
        });
        rejected("run.duration", |c| c.run.warmup_ns = u64::MAX);
        rejected("run.report_interval", |c| c.run.report_interval_ns = 1);
        // A release whose L2ARC the twin does not model, with a cache device: refused
        // before the run, by the key the user wrote.
        let mut c = test_variant();
        let mut l2 = c.devices[0].clone();
        l2.name = "l2".into();
        c.devices.push(l2);
        let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
        z.release = ZfsRelease::V0_6;
        z.cache = vec!["l2".into()];
        match run_variant(&c) {
            Err(Error::Config { field, .. }) => assert_eq!(field, "filesystem.cache"),
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }

    /// Devices at the edge of what validation lets through run to the end without a panic.
    #[test]
    fn absurd_but_valid_devices_run() {
        let mut cfg = test_variant();
        cfg.devices[0].iops_limit = Some(1e-300);
        cfg.devices[0].latency_sigma = 4.99;
        let r = run_variant(&cfg).unwrap();
        assert_eq!(r.summary["queries"], 0);
    }
}
