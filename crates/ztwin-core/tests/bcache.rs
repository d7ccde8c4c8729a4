//! bcache under XFS, end to end, with bands from first principles on small datasets.

use ztwin_core::config::*;
use ztwin_core::db::innodb::btree::TableLayout;
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::{SEC, US};

fn f(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} missing in {v}"))
}

fn bcache(cutoff: u64) -> BcacheConfig {
    BcacheConfig {
        cache_device: "nvme".into(),
        cache_mode: BcacheCacheMode::Writethrough,
        sequential_cutoff: cutoff,
        bucket_size: 512 << 10,
        cache_replacement_policy: BcacheReplacement::Lru,
        readahead: 0,
        congested_read_threshold_us: 2000,
        congested_write_threshold_us: 20000,
        ..BcacheConfig::with_defaults("")
    }
}

/// 8 tables of 2M rows (about 3.8 GB) on a 3000-IOPS volume, 8 vCPUs (not the bound),
/// and a fast NVMe of `cache_gib` GiB as bcache, warmed by one `cat` of every table.
fn variant(cache_gib: u64, with_bcache: bool) -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "bcache".into();
    c.machine.vcpus = 8;
    c.machine.ram_bytes = 4 << 30;
    c.devices[0].name = "ebs".into();
    let mut nvme = c.devices[0].clone();
    nvme.name = "nvme".into();
    nvme.iops_limit = Some(400_000.0);
    nvme.read_latency_ns = 90 * US;
    nvme.write_latency_ns = 30 * US;
    nvme.transfer_bytes_per_sec = 2e9;
    nvme.capacity_bytes = Some(cache_gib << 30);
    nvme.ephemeral = true;
    c.devices.push(nvme);
    c.filesystem = FsConfig::Xfs(ExtentFsConfig {
        device: "ebs".into(),
        block_size: 4096,
        bcache: with_bcache.then(|| bcache(0)),
    });
    c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 8,
        table_size: 2_000_000,
        compress_ratio: Some(1.0),
        prepare_rand_type: Default::default(),
    });
    // Room for every non-leaf page, as experiment 1's pool has: page reads are leaf reads.
    let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
    db.innodb_buffer_pool_size = 128 << 20;
    c.run = RunConfig { warmup_ns: 10 * SEC, duration_ns: 30 * SEC, report_interval_ns: 10 * SEC };
    c.phases = vec![
        PhaseConfig::Cat(CatPhase { name: "cat".into(), read_size: 128 << 10, passes: 1 }),
        PhaseConfig::Workload(WorkloadPhase {
            name: "benchmark".into(),
            warmup_ns: 10 * SEC,
            duration_ns: 30 * SEC,
            test: None,
        }),
    ];
    c
}

/// With a share f of the page reads served by the cache device, the 3000 IOPS of the
/// volume carry only the other 1 - f: a disk-bound run reaches IOPS / (1 - f) reads per
/// second, i.e. plain XFS's queries per second divided by 1 - f. Point selects read
/// clustered-index leaves uniformly; once LRU has replaced what `cat` brought and they
/// never read (secondary index, non-leaf pages), the cache holds only such leaves and a
/// read hits with probability (bytes cached) / (bytes of leaves).
#[test]
fn a_hit_share_f_multiplies_disk_bound_qps_by_one_over_one_minus_f() {
    let long = |mut c: VariantConfig| {
        let PhaseConfig::Workload(w) = &mut c.phases[1] else { unreachable!() };
        w.warmup_ns = 150 * SEC;
        c
    };
    let x = run_variant(&long(variant(2, false))).unwrap().summary;
    let b = run_variant(&long(variant(2, true))).unwrap().summary;
    let bc = &b["bcache"];
    let share = f(bc, &["read_share", "bcache"]);
    let leaves = 8.0 * (TableLayout::sysbench(2_000_000, 16384).clustered.leaf_pages() * 16384) as f64;
    let held = f(bc, &["size"]) / leaves;
    assert!((0.3..0.8).contains(&share), "{bc}");
    assert!((share - held).abs() < 0.03, "hit share {share} vs share of the leaves cached {held}");
    // The volume is saturated in both runs: reads there are the bound.
    for r in [&x, &b] {
        let iops = f(r, &["devices", "ebs", "read_iops"]);
        assert!(iops > 2900.0 && iops <= 3000.0 * 1.001, "{iops}");
    }
    let expected = f(&x, &["qps"]) / (1.0 - share);
    let qps = f(&b, &["qps"]);
    assert!((qps / expected - 1.0).abs() < 0.05, "qps {qps} expected {expected}");
    // Each page read is either a hit on the NVMe or a miss on the volume whose data is
    // then written to the NVMe, uncompressed (16 KiB per miss).
    let window = f(&b, &["window_s"]);
    let nvme_reads = f(&b, &["devices", "nvme", "read_iops"]) * window;
    assert!((nvme_reads - f(bc, &["hits"])).abs() <= 1.0 + nvme_reads * 1e-9);
    let misses = f(bc, &["cache_misses"]);
    assert!((f(bc, &["written"]) - misses * 16384.0).abs() <= 16384.0 * 8.0, "{bc}");
}

/// When nearly every read hits the cache, the vCPUs bind before the volume does.
#[test]
fn the_cpus_bind_when_the_cache_serves_most_reads() {
    let mut c = variant(5, true);
    c.machine.vcpus = 2;
    c.machine.cpu.statement_ns = 300_000;
    let r = run_variant(&c).unwrap().summary;
    let share = f(&r["bcache"], &["read_share", "bcache"]);
    assert!(share > 0.95, "{}", r["bcache"]);
    assert!(f(&r, &["cpu_utilization"]) > 0.95);
    assert!(f(&r, &["devices", "ebs", "read_iops"]) < 0.8 * 3000.0);
    // 2 vCPUs, at least 300 us of CPU per query.
    assert!(f(&r, &["qps"]) < 2.0 / 300e-6);
}

/// The default sequential_cutoff (4 MiB) bypasses cat's sequential reads: a cat warm-up
/// leaves bcache nearly empty (the first 4 MiB only) and counts the rest as bypassed.
#[test]
fn the_default_cutoff_leaves_a_cat_warm_up_uncached() {
    let mut c = variant(2, true);
    let FsConfig::Xfs(x) = &mut c.filesystem else { unreachable!() };
    x.bcache = Some(bcache(4 << 20));
    let r = run_variant(&c).unwrap().summary;
    let cat = &r["phases"][0]["bcache"];
    assert_eq!(f(cat, &["written"]), f64::from(4u32 << 20) - f64::from(128u32 << 10), "{cat}");
    let bytes = f(&r["phases"][0], &["bytes_read"]);
    assert_eq!(f(cat, &["bypassed"]), bytes - f64::from(4u32 << 20) + f64::from(128u32 << 10));
}

/// A restart keeps a persistent cache; after the VM moved, the ephemeral NVMe comes back
/// blank and the cache set starts empty.
#[test]
fn a_restart_after_the_vm_moved_empties_an_ephemeral_cache() {
    for vm_moved in [false, true] {
        let mut c = variant(2, true);
        c.phases.insert(
            1,
            PhaseConfig::Restart(RestartPhase { name: "reboot".into(), vm_moved, recreate_cache: false }),
        );
        // A short benchmark right after the reboot: a cold cache has little time to refill.
        let PhaseConfig::Workload(w) = &mut c.phases[2] else { unreachable!() };
        (w.warmup_ns, w.duration_ns) = (0, 5 * SEC);
        let r = run_variant(&c).unwrap().summary;
        let restart = &r["phases"][1]["bcache"];
        assert_eq!(restart["cache_set_lost"], vm_moved);
        let share = f(&r["bcache"], &["read_share", "bcache"]);
        if vm_moved {
            assert_eq!(f(restart, &["size"]), 0.0);
            assert!(share < 0.15, "{share}");
        } else {
            assert!(f(restart, &["size"]) > 1e9);
            assert!(f(restart, &["btree_check_read_bytes"]) > 0.0);
            assert!(share > 0.3, "{share}");
        }
    }
}
