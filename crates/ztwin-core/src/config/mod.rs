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
    /// The database engine above the filesystem.
    pub database: DatabaseConfig,
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
}

/// The filesystem under the database files (one per variant, so its size is no matter).
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
    /// Device holding the filesystem.
    pub device: String,
    /// Filesystem block size in bytes (4096 for both by default).
    pub block_size: u32,
}

/// The OpenZFS release whose behaviour is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZfsRelease {
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

/// A ZFS pool and dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZfsConfig {
    /// Release whose ARC behaviour is modelled.
    pub release: ZfsRelease,
    /// Devices striped in the pool (top-level vdevs, each a single device for now).
    pub vdevs: Vec<String>,
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
}

/// The stored data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatasetConfig {
    /// Tables as `sysbench oltp_common prepare` creates them.
    Sysbench(SysbenchDataset),
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
    /// data, per block, before rounding to sectors (sysbench data with lz4: 1.28).
    pub compress_ratio: f64,
}

/// The load.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// A sysbench OLTP test.
    Sysbench(SysbenchWorkload),
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
    /// Number of tables of the dataset.
    pub fn dataset_tables(&self) -> u32 {
        let DatasetConfig::Sysbench(ds) = &self.dataset;
        ds.tables
    }

    /// The phases to run: `phases`, or one workload phase from `run` when it is empty.
    pub fn effective_phases(&self) -> Vec<PhaseConfig> {
        if self.phases.is_empty() {
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
        }
        let has = |n: &str| self.devices.iter().any(|d| d.name == n);
        match &self.filesystem {
            FsConfig::Zfs(z) => {
                ensure(!z.vdevs.is_empty(), "filesystem.vdevs", "needs at least one device")?;
                for v in &z.vdevs {
                    ensure(has(v), "filesystem.vdevs", &format!("names unknown device '{v}'"))?;
                }
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
            }
        }
        let DatabaseConfig::Innodb(db) = &self.database;
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
        let DatasetConfig::Sysbench(ds) = &self.dataset;
        // Object numbers of the ARC's block keys have 24 bits (BlockKey).
        ensure((1..1 << 24).contains(&ds.tables), "dataset.tables", "must be 1 to 16777215")?;
        // sysbench's id column is a signed 32-bit INTEGER.
        ensure(
            (1..=i32::MAX as u64).contains(&ds.table_size),
            "dataset.table_size",
            "must be 1 to 2147483647 (sysbench's id is a 32-bit INTEGER)",
        )?;
        ensure(
            ds.compress_ratio >= 1.0 && ds.compress_ratio.is_finite(),
            "dataset.compress_ratio",
            "must be at least 1.0",
        )?;
        let WorkloadConfig::Sysbench(w) = &self.workload;
        ensure((1..=4096).contains(&w.threads), "workload.threads", "must be 1 to 4096")?;
        ensure(
            w.random_points >= 1 && w.random_points <= 1000,
            "workload.random_points",
            "must be 1 to 1000",
        )?;
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
        let mut workload_ns: u64 = 0;
        for (i, p) in self.phases.iter().enumerate() {
            let at = |f: &str| format!("phases[{i}].{f}");
            match p {
                PhaseConfig::Workload(w) => {
                    ensure(w.duration_ns > 0, &at("duration"), "must be positive")?;
                    workload_ns = workload_ns.saturating_add(w.warmup_ns).saturating_add(w.duration_ns);
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
            }
        }
        if !self.phases.is_empty() {
            ensure(
                self.phases.iter().any(|p| matches!(p, PhaseConfig::Workload(_))),
                "phases",
                "needs at least one workload phase (the one measured)",
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
        }],
        filesystem: FsConfig::Zfs(ZfsConfig {
            release: ZfsRelease::V0_8,
            vdevs: vec!["disk".into()],
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
        database: DatabaseConfig::Innodb(InnodbConfig {
            innodb_buffer_pool_size: 16 << 20,
            innodb_page_size: 16384,
            innodb_old_blocks_pct: 37,
            innodb_old_blocks_time_ns: 1000 * MS,
            innodb_flush_method: "O_DIRECT".into(),
        }),
        dataset: DatasetConfig::Sysbench(SysbenchDataset {
            tables: 4,
            table_size: 200_000,
            compress_ratio: 1.28,
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
            let DatabaseConfig::Innodb(db) = &mut c.database;
            db.innodb_buffer_pool_size = u64::MAX;
        });
        rejected("dataset.tables", |c| {
            let DatasetConfig::Sysbench(ds) = &mut c.dataset;
            ds.tables = 1 << 24;
        });
        rejected("dataset.table_size", |c| {
            let DatasetConfig::Sysbench(ds) = &mut c.dataset;
            ds.table_size = u64::MAX;
        });
        rejected("workload.rand_pareto_h", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload;
            w.rand_pareto_h = 0.0;
        });
        rejected("workload.rand_zipfian_exp", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload;
            w.rand_zipfian_exp = f64::NAN;
        });
        rejected("workload.rand_spec_iter", |c| {
            let WorkloadConfig::Sysbench(w) = &mut c.workload;
            w.rand_spec_iter = 0;
        });
        rejected("run.duration", |c| c.run.warmup_ns = u64::MAX);
        rejected("run.report_interval", |c| c.run.report_interval_ns = 1);
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
