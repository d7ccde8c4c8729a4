//! The checks serde cannot make ([`VariantConfig::validate`]): ranges, cross references
//! between the parts of a variant, sizes that fit the machine.

use super::{
    ArcAdaptation, BcacheConfig, Compression, DatabaseConfig, DatasetConfig, DirectProperty, FsConfig,
    InnodbConfig, MachineConfig, PhaseConfig, SysbenchDataset, SysbenchTest, SysbenchWorkload, VariantConfig,
    VdevConfig, WorkloadConfig, ZfsFeatures,
};
use crate::error::{Error, Result};
use crate::sim::time::SEC;
use crate::support::gib;

// The models' own rules (a disk's mechanics, the ARC's limits, bcache's index, fio's job
// rules) are the models', applied when the run builds them (`run::check_variant` builds
// the stack without running it, so they too refuse a variant before any run).

const SEC_F: f64 = SEC as f64;
/// Longest run (warm-up plus window) the core accepts: 30 days.
pub const MAX_SIMULATED_NS: u64 = 30 * 86_400 * SEC;
/// Most rows a run's series may have.
pub const MAX_SERIES_ROWS: u64 = 1_000_000;

/// The most vCPUs a machine may have.
pub const MAX_VCPUS: u32 = 4096;
/// The most requests a device may serve at once (an NVMe device's queues times their depth
/// is far beyond what any device serves in parallel).
pub const MAX_PARALLELISM: u32 = 65536;
/// The most RAM a machine may have: 64 TiB.
pub const MAX_RAM_BYTES: u64 = 64 << 40;
/// `innodb_lru_scan_depth`'s minimum, the same in MySQL 5.7, Percona Server 5.7 and
/// MariaDB 10.11 (`handler/ha_innodb.cc`, `MYSQL_SYSVAR_ULONG(lru_scan_depth, ...)`).
pub const MIN_LRU_SCAN_DEPTH: u32 = 100;

impl VariantConfig {
    /// Checks what serde cannot: ranges, cross references, sizes that fit the machine.
    pub fn validate(&self) -> Result<()> {
        let m = &self.machine;
        // Bounded above so that what they size (the vCPUs' queues, every limit derived
        // from RAM as a percentage) stays small and far from overflow.
        ensure((1..=MAX_VCPUS).contains(&m.vcpus), "machine.vcpus", &format!("must be 1 to {MAX_VCPUS}"))?;
        ensure(
            (64 << 20..=MAX_RAM_BYTES).contains(&m.ram_bytes),
            "machine.ram_bytes",
            "must be from 64 MiB to 64 TiB",
        )?;
        ensure(
            m.cpu.speed > 0.0 && m.cpu.speed <= 1000.0,
            "machine.cpu.speed",
            "must be a positive number, at most 1000 (times the reference core)",
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
            ("l2arc_hdr_ns", c.l2arc_hdr_ns),
        ] {
            ensure(
                ns as f64 / c.speed <= SEC_F,
                &format!("machine.cpu.{name}"),
                "must be at most 1 s of CPU per unit of work (after dividing by speed)",
            )?;
        }
        // A request that costs no time would let simulated time stand still: every
        // statement and every system call takes at least a nanosecond.
        for (name, ns) in [("statement_ns", c.statement_ns), ("syscall_ns", c.syscall_ns)] {
            ensure(
                (ns as f64 / c.speed).round() >= 1.0,
                &format!("machine.cpu.{name}"),
                "must be at least 1 ns after dividing by speed (simulated time must advance)",
            )?;
        }
        for (name, bps) in [
            ("checksum_bytes_per_sec", c.checksum_bytes_per_sec),
            ("decompress_bytes_per_sec", c.decompress_bytes_per_sec),
            ("compress_bytes_per_sec", c.compress_bytes_per_sec),
            ("memcpy_bytes_per_sec", c.memcpy_bytes_per_sec),
        ] {
            ensure(
                bps as f64 * c.speed >= 1e6,
                &format!("machine.cpu.{name}"),
                "must be at least 1 MB/s (after multiplying by speed)",
            )?;
        }
        // The page cache's memory and sysctls (`fs::page_cache`): the kernel's own ranges.
        if let Some(b) = m.mem_available_bytes {
            ensure(
                (256 << 10..=m.ram_bytes).contains(&b),
                "machine.mem_available_bytes",
                "must be from 256 KiB (64 pages) to the machine's RAM",
            )?;
        }
        let vm = &m.vm;
        for (name, v) in
            [("dirty_ratio", vm.dirty_ratio), ("dirty_background_ratio", vm.dirty_background_ratio)]
        {
            ensure(v.is_none_or(|v| v <= 100), &format!("machine.vm.{name}"), "is a percentage: 0 to 100")?;
        }
        for (name, v) in
            [("dirty_bytes", vm.dirty_bytes), ("dirty_background_bytes", vm.dirty_background_bytes)]
        {
            // mm/page-writeback.c: vm.dirty_bytes at least two pages (`dirty_bytes_min`).
            ensure(
                v.is_none_or(|v| v == 0 || (2 * 4096..=m.ram_bytes).contains(&v)),
                &format!("machine.vm.{name}"),
                "must be 0 (the ratio applies) or from 8 KiB (two pages) to the machine's RAM",
            )?;
        }
        ensure(
            vm.min_free_kbytes.is_none_or(|k| k.saturating_mul(1024) <= m.ram_bytes / 2),
            "machine.vm.min_free_kbytes",
            "must be at most half the machine's RAM",
        )?;
        // mm/page_alloc.c: watermark_scale_factor from 1 to 3000 (30% of a zone).
        ensure(
            vm.watermark_scale_factor.is_none_or(|f| (1..=3000).contains(&f)),
            "machine.vm.watermark_scale_factor",
            "must be 1 to 3000",
        )?;
        for (i, d) in self.devices.iter().enumerate() {
            let at = |f: &str| format!("devices[{i}] ({}).{f}", d.name);
            if let Some(iops) = d.iops_limit {
                ensure(iops > 0.0 && iops.is_finite(), &at("iops_limit"), "must be a positive number")?;
            }
            if let Some(t) = d.throughput_limit_bytes_per_sec {
                ensure(t > 0.0 && t.is_finite(), &at("throughput_limit"), "must be a positive number")?;
            }
            // Each parallel slot is a queue entry of the device model.
            ensure(
                (1..=MAX_PARALLELISM).contains(&d.parallelism),
                &at("parallelism"),
                &format!("must be 1 to {MAX_PARALLELISM}"),
            )?;
            ensure(d.transfer_bytes_per_sec > 0.0, &at("transfer_bytes_per_sec"), "must be positive")?;
            for (name, ns) in [
                ("read_latency_ns", d.read_latency_ns),
                ("write_latency_ns", d.write_latency_ns),
                ("flush_latency_ns", d.flush_latency_ns),
            ] {
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
            if d.rotational.is_some() {
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
            }
        }
        self.validate_host_io()?;
        let has = |n: &str| self.devices.iter().any(|d| d.name == n);
        self.validate_arrays()?;
        // The array the filesystem sits on, if any: its members serve nothing else.
        let array = match &self.filesystem {
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => self.arrays.iter().find(|a| a.name == x.device),
            FsConfig::Zfs(_) => None,
        };
        match &self.filesystem {
            FsConfig::Zfs(z) => {
                ensure(!z.vdevs.is_empty(), "filesystem.vdevs", "needs at least one device")?;
                let mut used: Vec<&str> = Vec::new();
                for (field, list) in [("filesystem.vdevs", &z.vdevs), ("filesystem.log", &z.log)] {
                    for (k, v) in list.iter().enumerate() {
                        let at = format!("{field}[{k}]");
                        match v {
                            VdevConfig::Mirror(m) => {
                                ensure(m.mirror.len() >= 2, &at, "a mirror needs at least two devices")?
                            }
                            VdevConfig::Disk(_) => {}
                        }
                        for d in v.devices() {
                            if let Some(a) = self.arrays.iter().find(|a| &a.name == d) {
                                return Err(Error::config(
                                    at,
                                    format!(
                                        "names md array '{}': ZFS on an md array is not modelled; give ZFS the devices ({})",
                                        a.name,
                                        a.members.join(", ")
                                    ),
                                ));
                            }
                            ensure(has(d), &at, &self.unknown_device(d))?;
                            ensure(
                                !used.contains(&d.as_str()),
                                &at,
                                &format!("device '{d}' is used twice in the pool"),
                            )?;
                            used.push(d);
                        }
                    }
                }
                // Several cache devices are fed in turn by the release's feed thread (or each
                // by its own with master's per-device threads); the model bounds their number
                // (a packed L2 location names the device, `cache::l2arc`).
                let max = crate::cache::l2arc::MAX_CACHE_DEVICES;
                ensure(
                    z.cache.len() <= max,
                    "filesystem.cache",
                    &format!("{} cache devices: at most {max} are modelled", z.cache.len()),
                )?;
                let mut sized = Vec::new();
                for (k, c) in z.cache.iter().enumerate() {
                    let Some((i, dev)) = self.devices.iter().enumerate().find(|(_, d)| &d.name == c) else {
                        return Err(Error::config("filesystem.cache", self.unknown_device(c)));
                    };
                    ensure(
                        !used.contains(&c.as_str()),
                        "filesystem.cache",
                        &format!("device '{c}' is already a data or log vdev"),
                    )?;
                    ensure(
                        !z.cache[..k].contains(c),
                        "filesystem.cache",
                        &format!("device '{c}' is named twice"),
                    )?;
                    sized.push((i, dev));
                }
                ensure(
                    z.cache.is_empty() || z.release.features().l2arc_modelled,
                    "filesystem.cache",
                    &format!(
                        "the L2ARC of release {} is not modelled (use release 0.8 or later)",
                        z.release.name()
                    ),
                )?;
                for (i, dev) in sized {
                    ensure(
                        dev.capacity_bytes.is_some(),
                        &format!("devices[{i}] ({}).capacity_bytes", dev.name),
                        "a cache device needs a size (the L2ARC's capacity)",
                    )?;
                }
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
                let features = z.release.features();
                ensure(
                    z.compression != Compression::Zstd || features.zstd,
                    "filesystem.compression",
                    &format!(
                        "zstd exists from release 2.0 (10b3c7f5e4); release {} has lz4, lzjb and gzip",
                        z.release.name()
                    ),
                )?;
                if let Some(rs) = z.log_recordsize {
                    ensure(
                        rs.is_power_of_two() && (512..=features.max_recordsize).contains(&rs),
                        "filesystem.log_recordsize",
                        "must be a power of two from 512 B to the release's largest recordsize",
                    )?;
                }
                ensure(
                    z.recordsize <= features.max_recordsize,
                    "filesystem.recordsize",
                    &format!(
                        "release {} allows at most {} (the default of zfs_max_recordsize)",
                        z.release.name(),
                        if features.max_recordsize >= 1 << 20 {
                            format!("{}M", features.max_recordsize >> 20)
                        } else {
                            format!("{}K", features.max_recordsize >> 10)
                        }
                    ),
                )?;
                ensure(
                    ZfsFeatures::resolve(z.release, z.release_patch).direct_io
                        || matches!(z.direct, None | Some(DirectProperty::Disabled)),
                    "filesystem.direct",
                    &format!(
                        "release {} has no Direct I/O (the direct property exists from 2.3.0, a10e552b99): leave it out or set it to disabled",
                        z.release.name()
                    ),
                )?;
                ensure(
                    features.compressed_arc || z.arc.zfs_compressed_arc_enabled != Some(true),
                    "filesystem.arc.zfs_compressed_arc_enabled",
                    &format!(
                        "release {} has no compressed ARC (added in 0.7.0, d3c2ae1c08): leave it out or set it to 0",
                        z.release.name()
                    ),
                )?;
                ensure(
                    features.abd || z.arc.zfs_abd_scatter_enabled != Some(true),
                    "filesystem.arc.zfs_abd_scatter_enabled",
                    &format!(
                        "release {} has no ABD (added in 0.7.0, 7657defc48): leave it out or set it to 0",
                        z.release.name()
                    ),
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
                        &format!("must be less than the machine's RAM ({})", gib(m.ram_bytes)),
                    )?;
                }
                if a.zfs_arc_min != 0 && a.zfs_arc_max != 0 {
                    ensure(
                        a.zfs_arc_min <= a.zfs_arc_max,
                        "filesystem.arc.zfs_arc_min",
                        "must not exceed zfs_arc_max",
                    )?;
                }
                // The tunables of the release's ARC generation (arc_p's, or 2.2's balance).
                match z.release.features().arc.adaptation {
                    ArcAdaptation::MetaBalance => {
                        ensure(
                            a.zfs_arc_meta_limit == 0,
                            "filesystem.arc.zfs_arc_meta_limit",
                            &format!(
                                "does not exist in release {} (removed in 2.2 by PR #14359); 2.2 and later tune metadata with zfs_arc_meta_balance",
                                z.release.name()
                            ),
                        )?;
                        ensure(
                            a.zfs_arc_meta_min == 0,
                            "filesystem.arc.zfs_arc_meta_min",
                            &format!(
                                "does not exist in release {} (removed in 2.2 by PR #14359); 2.2 and later tune metadata with zfs_arc_meta_balance",
                                z.release.name()
                            ),
                        )?;
                        ensure(
                            a.zfs_arc_meta_strategy.is_none(),
                            "filesystem.arc.zfs_arc_meta_strategy",
                            &format!(
                                "does not exist in release {} (removed in 2.2 by PR #14359); 2.2 and later tune metadata with zfs_arc_meta_balance",
                                z.release.name()
                            ),
                        )?;
                    }
                    ArcAdaptation::ArcP => {
                        ensure(
                            a.zfs_arc_meta_strategy.is_none_or(|v| v <= 1),
                            "filesystem.arc.zfs_arc_meta_strategy",
                            "must be 0 (meta_only: evict metadata alone) or 1 (balanced, the default)",
                        )?;
                        ensure(
                            a.zfs_arc_meta_strategy.is_none() || z.release != crate::config::ZfsRelease::V0_6,
                            "filesystem.arc.zfs_arc_meta_strategy",
                            "does not exist in release 0.6 (the illumos ARC of 2012, before ZoL's arc_adjust_meta strategies)",
                        )?;
                        ensure(
                            a.zfs_arc_meta_balance == 0,
                            "filesystem.arc.zfs_arc_meta_balance",
                            "exists only from release 2.2 (0.8 and 2.1 use zfs_arc_meta_limit and zfs_arc_meta_min)",
                        )?;
                        ensure(
                            a.zfs_arc_max == 0 || a.zfs_arc_meta_limit <= a.zfs_arc_max,
                            "filesystem.arc.zfs_arc_meta_limit",
                            "must not exceed zfs_arc_max",
                        )?;
                    }
                }
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                ensure(
                    has(&x.device) || array.is_some(),
                    "filesystem.device",
                    &self.unknown_device(&x.device),
                )?;
                if let (Some(a), Some(b)) = (array, &x.bcache) {
                    ensure(
                        !a.members.contains(&b.cache_device),
                        "filesystem.bcache.cache_device",
                        &format!("device '{}' is a member of md array '{}'", b.cache_device, a.name),
                    )?;
                }
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
        // Each workload with the dataset and database it runs on; every variant of the three
        // is named, so a new one is placed here.
        let sysbench_tables = match &self.dataset {
            DatasetConfig::Sysbench(ds) => Some(ds),
            DatasetConfig::Files(_) | DatasetConfig::Tpcc(_) => None,
        };
        let files = match &self.dataset {
            DatasetConfig::Files(files) => Some(files),
            DatasetConfig::Sysbench(_) | DatasetConfig::Tpcc(_) => None,
        };
        let tpcc_tables = match &self.dataset {
            DatasetConfig::Tpcc(ds) => Some(ds),
            DatasetConfig::Sysbench(_) | DatasetConfig::Files(_) => None,
        };
        let innodb = self.database.as_ref().map(|d| match d {
            DatabaseConfig::Innodb(db) => db,
        });
        match &self.workload {
            WorkloadConfig::Sysbench(w) if w.test == SysbenchTest::Tpcc || tpcc_tables.is_some() => {
                let (Some(ds), Some(db)) = (tpcc_tables, innodb) else {
                    return Err(Error::config(
                        "workload.test",
                        "tpcc needs [dataset] type = \"tpcc\" and an innodb database; a tpcc dataset runs test = \"tpcc\"",
                    ));
                };
                ensure(w.test == SysbenchTest::Tpcc, "workload.test", "a tpcc dataset runs test = \"tpcc\"")?;
                for (i, p) in self.phases.iter().enumerate() {
                    if let PhaseConfig::Workload(ph) = p {
                        ensure(
                            ph.test.is_none_or(|t| t == SysbenchTest::Tpcc),
                            &format!("phases[{i}].test"),
                            "a tpcc dataset runs test = \"tpcc\"",
                        )?;
                    }
                }
                validate_innodb(db, m)?;
                validate_tpcc(w, ds)?;
            }
            WorkloadConfig::Sysbench(w) => {
                for (i, p) in self.phases.iter().enumerate() {
                    if let PhaseConfig::Workload(ph) = p {
                        ensure(
                            ph.test != Some(SysbenchTest::Tpcc),
                            &format!("phases[{i}].test"),
                            "tpcc needs [dataset] type = \"tpcc\"",
                        )?;
                    }
                }
                let (Some(ds), Some(db)) = (sysbench_tables, innodb) else {
                    return Err(Error::config(
                        "workload",
                        "a sysbench workload needs a sysbench dataset and an innodb database",
                    ));
                };
                validate_innodb(db, m)?;
                validate_sysbench(w, ds)?;
            }
            WorkloadConfig::Fio(_) => {
                let (Some(_), None) = (files, &self.database) else {
                    return Err(Error::config(
                        "workload",
                        "a fio workload needs a files dataset and no database (fio reads the files itself)",
                    ));
                };
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
                    match &self.filesystem {
                        FsConfig::Zfs(z) => !z.cache.is_empty(),
                        FsConfig::Xfs(_) | FsConfig::Ext4(_) => false,
                    },
                    &at("type"),
                    "a tune phase sets L2ARC module parameters: it needs a ZFS pool with a cache device (filesystem.cache)",
                )?,
                PhaseConfig::Fio(_) => {
                    if fio.is_none() {
                        return Err(Error::config(at("type"), "phases of type fio need a fio workload"));
                    }
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
        &format!("must not exceed the machine's RAM ({})", gib(m.ram_bytes)),
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
    // MYSQL_SYSVAR_ULONG(lru_scan_depth, ..., 1024, 100, ~0UL, 0) in MySQL 5.7's and
    // Percona Server 5.7's `handler/ha_innodb.cc`; MariaDB 10.11's minimum is 100 too. Below
    // it a batch frees a frame or two a pass: a Percona Server LRU manager one a second for
    // thousands of backing-off threads, a MariaDB page cleaner that never sees frames needed.
    ensure(
        db.innodb_lru_scan_depth == 0 || db.innodb_lru_scan_depth >= MIN_LRU_SCAN_DEPTH,
        "database.innodb_lru_scan_depth",
        "must be 0 (the server's default) or at least 100 (the servers' minimum)",
    )?;
    ensure(
        crate::db::innodb::writes::FlushMethod::parse(&db.innodb_flush_method).is_some(),
        "database.innodb_flush_method",
        "must be fsync, O_DSYNC, O_DIRECT or O_DIRECT_NO_FSYNC",
    )?;
    Ok(())
}

fn validate_tpcc(w: &SysbenchWorkload, ds: &crate::config::TpccDataset) -> Result<()> {
    // Nine files a set; object numbers of the ARC's block keys have 24 bits.
    ensure((1..=100_000).contains(&ds.tables), "dataset.tables", "must be 1 to 100000")?;
    // w_id is a SMALLINT.
    ensure((1..=32_767).contains(&ds.scale), "dataset.scale", "must be 1 to 32767 (w_id is a SMALLINT)")?;
    ensure(
        (3000..=1_000_000).contains(&ds.order_capacity),
        "dataset.order_capacity",
        "must be 3000 (the loaded orders) to 1000000",
    )?;
    // The growing tables are laid out for order_capacity orders a district (tpcc_schema):
    // order_line's positions bound the layout's size and its page numbers (32-bit).
    ensure(
        u64::from(ds.scale) * 10 * u64::from(ds.order_capacity) * 10 <= 1 << 36,
        "dataset.order_capacity",
        "with scale: order_line's laid-out rows (scale x 10 districts x order_capacity x 10 lines) must be at most 2^36 (the model's bound)",
    )?;
    ensure(
        ds.compress_ratio >= 1.0 && ds.compress_ratio.is_finite(),
        "dataset.compress_ratio",
        "must be at least 1.0",
    )?;
    ensure((1..=4096).contains(&w.threads), "workload.threads", "must be 1 to 4096")?;
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
    /// The message for a device name that is not one of the scenario's.
    fn unknown_device(&self, name: &str) -> String {
        let names: Vec<&str> = self
            .devices
            .iter()
            .map(|d| d.name.as_str())
            .chain(self.arrays.iter().map(|a| a.name.as_str()))
            .collect();
        format!("names unknown device '{name}'; devices of this scenario: {}", names.join(", "))
    }

    /// The md arrays' names and members (their layout and chunk are the model's rules,
    /// `dev::md_raid10`, checked when the run builds the array the filesystem uses).
    /// Burst credits, the machine's shared throttles and its host cache (`dev::throttle`,
    /// `dev::host_cache`).
    fn validate_host_io(&self) -> Result<()> {
        let m = &self.machine;
        let rate = |v: Option<f64>, field: &str| {
            ensure(v.is_none_or(|v| v > 0.0 && v.is_finite()), field, "must be a positive number")
        };
        for (i, l) in m.io_limits.iter().enumerate() {
            let at = |f: &str| format!("machine.io_limits[{i}] ({}).{f}", l.name);
            ensure(!l.name.is_empty(), &at("name"), "must not be empty")?;
            if m.io_limits[..i].iter().any(|o| o.name == l.name) {
                return Err(Error::config(at("name"), "names must be unique"));
            }
            rate(l.iops_limit, &at("iops_limit"))?;
            rate(l.throughput_limit_bytes_per_sec, &at("throughput_limit_bytes_per_sec"))?;
            ensure(l.iops_size_bytes.is_none_or(|n| n > 0), &at("iops_size_bytes"), "must be positive")?;
        }
        let known = |name: &str, at: &str| {
            if m.io_limits.iter().any(|l| l.name == name) {
                Ok(())
            } else {
                let names: Vec<&str> = m.io_limits.iter().map(|l| l.name.as_str()).collect();
                Err(Error::config(
                    at,
                    format!("names unknown limit '{name}'; machine.io_limits: {}", names.join(", ")),
                ))
            }
        };
        if let Some(h) = &m.host_cache {
            let max = crate::dev::host_cache::MAX_EXTENTS << crate::dev::host_cache::EXTENT_SHIFT;
            ensure(
                (1 << crate::dev::host_cache::EXTENT_SHIFT..=max).contains(&h.cache_bytes),
                "machine.host_cache.cache_bytes",
                "must be from 256 KiB (one extent) to 4 TiB",
            )?;
            if let Some(n) = &h.io_limit {
                known(n, "machine.host_cache.io_limit")?;
            }
            ensure(
                h.read_latency_ns <= 60 * SEC,
                "machine.host_cache.read_latency_ns",
                "must be at most 60 s",
            )?;
            ensure(
                h.latency_sigma >= 0.0 && h.latency_sigma < 5.0,
                "machine.host_cache.latency_sigma",
                "must be in [0, 5)",
            )?;
            rate(Some(h.transfer_bytes_per_sec), "machine.host_cache.transfer_bytes_per_sec")?;
            ensure(
                (1..=MAX_PARALLELISM).contains(&h.parallelism),
                "machine.host_cache.parallelism",
                &format!("must be 1 to {MAX_PARALLELISM}"),
            )?;
        }
        for (i, d) in self.devices.iter().enumerate() {
            let at = |f: &str| format!("devices[{i}] ({}).{f}", d.name);
            if let Some(n) = &d.io_limit {
                known(n, &at("io_limit"))?;
            }
            let behind_controller = self.controllers.iter().any(|c| c.volumes.contains(&d.name));
            if d.host_cache {
                ensure(
                    m.host_cache.is_some(),
                    &at("host_cache"),
                    "needs the machine's host cache (machine.host_cache); this machine has none",
                )?;
                ensure(
                    !behind_controller,
                    &at("host_cache"),
                    "a device behind a RAID controller has no host cache",
                )?;
                let bcache_backing = matches!(&self.filesystem,
                    FsConfig::Xfs(x) | FsConfig::Ext4(x) if x.bcache.is_some() && x.device == d.name);
                ensure(
                    !bcache_backing,
                    &at("host_cache"),
                    "host caching of bcache's backing device is not modelled yet (its I/O carries no offsets here): \
                     host_cache = \"none\" there",
                )?;
            }
            let Some(b) = &d.burst else { continue };
            let at = |f: &str| format!("devices[{i}] ({}).burst.{f}", d.name);
            ensure(
                b.iops_limit.is_some() || b.throughput_limit_bytes_per_sec.is_some(),
                &at("iops_limit"),
                "a burst needs a burst IOPS or a burst throughput",
            )?;
            // Credits up to a million years at a million IOPS, or bytes at 1 PB/s: bounds
            // that keep every level an exact enough f64.
            let credits = |v: Option<f64>, field: &str| {
                ensure(v.is_none_or(|v| (0.0..=1e19).contains(&v)), &at(field), "must be from 0 to 1e19")
            };
            credits(b.io_credits, "io_credits")?;
            credits(b.byte_credits, "byte_credits")?;
            if let Some(r) = b.iops_limit {
                ensure(r.is_finite(), &at("iops_limit"), "must be a positive number")?;
                let Some(own) = d.iops_limit else {
                    return Err(Error::config(
                        at("iops_limit"),
                        "a burst IOPS needs the device's iops_limit (the provisioned rate)",
                    ));
                };
                ensure(r > own, &at("iops_limit"), "must be above the device's iops_limit")?;
                ensure(
                    b.io_credits.is_some(),
                    &at("io_credits"),
                    "a burst IOPS needs its credit bucket's size",
                )?;
            } else {
                ensure(
                    b.io_credits.is_none(),
                    &at("io_credits"),
                    "I/O credits need a burst IOPS (burst.iops_limit)",
                )?;
            }
            if let Some(r) = b.throughput_limit_bytes_per_sec {
                ensure(r.is_finite(), &at("throughput_limit_bytes_per_sec"), "must be a positive number")?;
                let Some(own) = d.throughput_limit_bytes_per_sec else {
                    return Err(Error::config(
                        at("throughput_limit_bytes_per_sec"),
                        "a burst throughput needs the device's throughput_limit (the provisioned rate)",
                    ));
                };
                ensure(
                    r > own,
                    &at("throughput_limit_bytes_per_sec"),
                    "must be above the device's throughput_limit",
                )?;
                ensure(
                    b.byte_credits.is_some() || b.io_credits.is_some(),
                    &at("byte_credits"),
                    "a burst throughput needs byte credits, or I/O credits it lasts with (gp2)",
                )?;
            } else {
                ensure(
                    b.byte_credits.is_none(),
                    &at("byte_credits"),
                    "byte credits need a burst throughput (burst.throughput_limit_bytes_per_sec)",
                )?;
            }
        }
        Ok(())
    }

    fn validate_arrays(&self) -> Result<()> {
        let mut members: Vec<(&str, &str)> = Vec::new();
        for (k, a) in self.arrays.iter().enumerate() {
            let at = |f: &str| format!("arrays[{k}] ({}).{f}", a.name);
            ensure(
                !self.devices.iter().any(|d| d.name == a.name),
                &at("name"),
                "an array's name must differ from every device's",
            )?;
            ensure(
                !self.arrays[..k].iter().any(|o| o.name == a.name),
                &at("name"),
                "array names must be unique",
            )?;
            ensure(
                (2..=256).contains(&a.members.len()),
                &at("members"),
                "an array needs 2 to 256 member devices",
            )?;
            for m in &a.members {
                ensure(self.devices.iter().any(|d| &d.name == m), &at("members"), &self.unknown_device(m))?;
                if let Some((_, other)) = members.iter().find(|(d, _)| d == m) {
                    let what = if *other == a.name.as_str() {
                        format!("device '{m}' is listed twice")
                    } else {
                        format!("device '{m}' is already a member of array '{other}'")
                    };
                    return Err(Error::config(at("members"), what));
                }
                members.push((m, &a.name));
            }
        }
        Ok(())
    }

    fn validate_bcache(&self, b: &BcacheConfig, backing: &str) -> Result<()> {
        let f = |name: &str| format!("filesystem.bcache.{name}");
        let Some(dev) = self.devices.iter().find(|d| d.name == b.cache_device) else {
            return Err(Error::config(f("cache_device"), self.unknown_device(&b.cache_device)));
        };
        ensure(
            b.cache_device != backing,
            &f("cache_device"),
            "must differ from filesystem.device (the backing device)",
        )?;
        let Some(capacity) = dev.capacity_bytes else {
            let i = self.devices.iter().position(|d| d.name == dev.name).unwrap_or(0);
            return Err(Error::config(
                format!("devices[{i}] ({}).capacity_bytes", dev.name),
                "a bcache cache device needs a size (the cache's capacity)",
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
        // sysfs.c's clamps (sysfs_strtoul_clamp) and writeback.h's WRITEBACK_RATE_UPDATE_SECS_MAX.
        ensure(
            b.writeback_percent <= 40,
            &f("writeback_percent"),
            "must be from 0 to 40 (sysfs.c clamps it)",
        )?;
        ensure(
            (1..=60).contains(&b.writeback_rate_update_seconds),
            &f("writeback_rate_update_seconds"),
            "must be from 1 to 60 (WRITEBACK_RATE_UPDATE_SECS_MAX)",
        )?;
        for (name, v) in [
            ("writeback_rate_p_term_inverse", b.writeback_rate_p_term_inverse),
            ("writeback_rate_i_term_inverse", b.writeback_rate_i_term_inverse),
            ("writeback_rate_minimum", b.writeback_rate_minimum),
        ] {
            ensure(v >= 1, &f(name), "must be at least 1 (sysfs.c clamps it)")?;
        }
        Ok(())
    }
}

fn ensure(ok: bool, field: &str, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::config(field, what))
    }
}
