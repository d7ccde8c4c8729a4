//! The memory estimate against the measured peak heap: for small configs whose caches
//! fill during the run, `estimate_memory` lies between half and twice the peak of live
//! heap bytes a counting allocator sees while the variant runs. (The bundled scenarios,
//! measured with `examples/mem_peak.rs`: 1.0x to 1.4x for every one whose caches fill,
//! 0.8 GiB for the L2ARC case.)

// A counting global allocator is the one place that needs unsafe; test code only.
#![allow(unsafe_code)]

#[path = "support/peak_alloc.rs"]
mod peak_alloc;
use peak_alloc::{LIVE, PEAK};
use std::sync::atomic::Ordering;
use ztwin_core::config::*;
use ztwin_core::run::{estimate_memory, run_variant};
use ztwin_core::sim::time::{SEC, US};

/// Peak live heap while `cfg` runs, bytes above what was live before.
fn measured_peak(cfg: &VariantConfig) -> u64 {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    run_variant(cfg).unwrap();
    (PEAK.load(Ordering::Relaxed) - base) as u64
}

/// A sysbench variant whose caches fill in the warm-up (40 s): 50,000-IOPS disk, 16
/// clients, 8 tables of 2M rows (about 3.8 GB).
fn sysbench(fs: FsConfig, buffer_pool: u64) -> VariantConfig {
    let mut c = test_variant();
    c.machine.vcpus = 4;
    let d = &mut c.devices[0];
    d.iops_limit = Some(50_000.0);
    d.read_latency_ns = 200 * US;
    d.parallelism = 16;
    c.filesystem = fs;
    let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
    db.innodb_buffer_pool_size = buffer_pool;
    c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 8,
        table_size: 2_000_000,
        compress_ratio: Some(1.28),
        prepare_rand_type: Default::default(),
    });
    let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
    w.threads = 16;
    c.machine.ram_bytes = 8 << 30;
    c.run = RunConfig { warmup_ns: 40 * SEC, duration_ns: 5 * SEC, report_interval_ns: SEC };
    c
}

fn zfs(arc_max: u64) -> FsConfig {
    let FsConfig::Zfs(mut z) = test_variant().filesystem else { unreachable!() };
    z.release = ZfsRelease::V2_2;
    z.arc.zfs_arc_max = arc_max;
    FsConfig::Zfs(z)
}

fn cases() -> Vec<(&'static str, VariantConfig)> {
    let xfs = FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    let mut l2 = sysbench(zfs(256 << 20), 16 << 20);
    let mut nvme = l2.devices[0].clone();
    nvme.name = "nvme".into();
    nvme.iops_limit = None;
    nvme.read_latency_ns = 90 * US;
    nvme.capacity_bytes = Some(1 << 30);
    l2.devices.push(nvme.clone());
    if let FsConfig::Zfs(z) = &mut l2.filesystem {
        z.cache = vec!["nvme".into()];
    }
    let mut bcache = sysbench(
        FsConfig::Xfs(ExtentFsConfig {
            device: "disk".into(),
            block_size: 4096,
            bcache: Some(BcacheConfig {
                cache_device: "nvme".into(),
                cache_mode: BcacheCacheMode::Writethrough,
                sequential_cutoff: 4 << 20,
                bucket_size: 256 << 10,
                cache_replacement_policy: BcacheReplacement::Lru,
                readahead: 0,
                congested_read_threshold_us: 2000,
                congested_write_threshold_us: 20000,
                ..BcacheConfig::with_defaults("")
            }),
        }),
        16 << 20,
    );
    bcache.devices.push(nvme);
    vec![
        ("zfs, 256 MiB ARC", sysbench(zfs(256 << 20), 16 << 20)),
        ("zfs, 1 GiB ARC", sysbench(zfs(1 << 30), 16 << 20)),
        ("xfs, 1 GiB buffer pool", sysbench(xfs, 1 << 30)),
        ("zfs with a 1 GiB L2ARC", l2),
        ("xfs on bcache", bcache),
    ]
}

#[test]
fn the_estimate_is_within_half_and_twice_the_measured_peak() {
    let mut failed = Vec::new();
    for (name, cfg) in cases() {
        let est = estimate_memory(&cfg).unwrap();
        let peak = measured_peak(&cfg);
        let ratio = est.total() as f64 / peak as f64;
        eprintln!(
            "{name}: estimate {:.1} MiB, peak {:.1} MiB ({ratio:.2}x) {:?}",
            est.total() as f64 / (1 << 20) as f64,
            peak as f64 / (1 << 20) as f64,
            est.parts
        );
        if !(0.5..=2.0).contains(&ratio) {
            failed.push(format!("{name}: {ratio:.2}x"));
        }
    }
    assert!(failed.is_empty(), "outside 0.5x .. 2x: {failed:?}");
}
