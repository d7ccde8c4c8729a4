//! Scenario tests with bands derived from first principles, on small datasets so they run
//! in seconds. Each states the reasoning that fixes its band.

use ztwin_core::config::*;
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::SEC;

fn base(fs: FsConfig, iops: f64) -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "first-principles".into();
    c.machine.vcpus = 8;
    c.machine.ram_bytes = 4 << 30;
    c.devices[0].name = "ebs".into();
    c.devices[0].iops_limit = Some(iops);
    c.filesystem = fs;
    c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 8,
        table_size: 2_000_000,
        compress_ratio: Some(1.28),
        prepare_rand_type: Default::default(),
    });
    c.run = RunConfig { warmup_ns: 20 * SEC, duration_ns: 30 * SEC, report_interval_ns: 10 * SEC };
    c
}

fn xfs() -> FsConfig {
    FsConfig::Xfs(ExtentFsConfig { device: "ebs".into(), block_size: 4096, bcache: None })
}

fn zfs(arc_max: u64, arc_min: u64) -> FsConfig {
    FsConfig::Zfs(ZfsConfig {
        release: ZfsRelease::V0_8,
        vdevs: vec!["ebs".into()],
        log: vec![],
        pool: Default::default(),
        txg: Default::default(),
        ashift: 9,
        recordsize: 16384,
        log_recordsize: None,
        indirect_block_size: 16384,
        compression: Compression::Lz4,
        primarycache: CacheProperty::All,
        arc: ArcTunables { zfs_arc_max: arc_max, zfs_arc_min: arc_min, ..Default::default() },
        release_patch: 11,
        cache: vec![],
        secondarycache: CacheProperty::All,
        l2arc: Default::default(),
        arc_warm_at_first_eviction: false,
        zfetch: Default::default(),
        sync: Default::default(),
        logbias: Default::default(),
        zil: Default::default(),
        direct: None,
    })
}

fn f(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} missing in {v}"))
}

/// XFS with O_DIRECT reads one page per buffer-pool miss and nothing else: device reads
/// equal InnoDB page reads, and a 3000-IOPS cap bounds queries at 3000 / miss ratio.
#[test]
fn xfs_reads_one_page_per_miss_and_respects_the_iops_cap() {
    let r = run_variant(&base(xfs(), 3000.0)).unwrap().summary;
    let qps = f(&r, &["qps"]);
    let iops = f(&r, &["devices", "ebs", "read_iops"]);
    let pages_read = f(&r, &["innodb", "pages_read"]);
    let window = f(&r, &["window_s"]);
    assert!(iops <= 3000.0 * 1.001, "iops {iops}");
    assert!(iops > 3000.0 * 0.97, "IO bound: iops {iops}");
    assert!((pages_read / window / iops - 1.0).abs() < 0.01, "one device read per page read");
    let miss = 1.0 - f(&r, &["innodb", "buffer_pool_hit_ratio"]);
    assert!(qps <= 3000.0 / miss * 1.02, "qps {qps} vs bound {}", 3000.0 / miss);
}

/// With an ARC larger than all indirect blocks (about 30 MB logical here) but far smaller
/// than the data (3.8 GB), after warm-up every BP miss costs exactly one device read (the
/// L0 record): demand metadata misses vanish, indirect blocks being hit on every query.
///
/// Predictive prefetch is off: its reads are not page reads (the B-tree's internal pages,
/// read again as the small buffer pool evicts them, sometimes form sequential streams).
#[test]
fn zfs_with_all_metadata_cached_reads_one_record_per_page() {
    let mut fs = zfs(512 << 20, 0);
    let FsConfig::Zfs(z) = &mut fs else { unreachable!() };
    z.zfetch.zfs_prefetch_disable = Some(true);
    let r = run_variant(&base(fs, 3000.0)).unwrap().summary;
    let iops = f(&r, &["devices", "ebs", "read_iops"]);
    let window = f(&r, &["window_s"]);
    let pages_read = f(&r, &["innodb", "pages_read"]) / window;
    let meta_misses = f(&r, &["arc", "demand_metadata_misses"]);
    let data_misses = f(&r, &["arc", "demand_data_misses"]) / window;
    assert_eq!(meta_misses, 0.0, "{r}");
    // The dbuf layer: a read touches the ARC at the lowest level whose dbuf exists and
    // below. These 4-level trees (29.5k records, fanout 128) would cost 3 metadata accesses
    // per page read if every level went through the ARC; the live L2 and L1 dbufs cut that.
    let meta_accesses = f(&r, &["arc", "demand_metadata_hits"]) / window;
    assert!(meta_accesses / pages_read > 0.9 && meta_accesses / pages_read < 2.5, "{r}");
    assert!((iops - data_misses).abs() / iops < 0.01);
    assert!(data_misses <= pages_read * 1.0001);
}

/// Experiment 1 in miniature: when the indirect blocks (here 100 tables of 2M rows, about
/// 130 MB of them as stored) do not fit in the ARC (64 MiB), page reads also miss on L1
/// blocks, each page read costs more than one device read, and ZFS serves fewer queries
/// than XFS at the same IOPS cap.
#[test]
fn zfs_with_an_arc_smaller_than_its_metadata_is_below_xfs() {
    let mut cx = base(xfs(), 3000.0);
    let mut cz = base(zfs(64 << 20, 32 << 20), 3000.0);
    cz.machine.ram_bytes = 1 << 30; // arc_c_min = 32 MiB, so release 0.8 honours zfs_arc_max
    for c in [&mut cx, &mut cz] {
        c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
            tables: 100,
            table_size: 2_000_000,
            compress_ratio: Some(1.28),
            prepare_rand_type: Default::default(),
        });
        // Room for every non-leaf InnoDB page (100 x 24), as experiment 1's 2.5 GB pool has.
        let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
        db.innodb_buffer_pool_size = 128 << 20;
    }
    let x = run_variant(&cx).unwrap().summary;
    let z = run_variant(&cz).unwrap().summary;
    let reads_per_query = |r: &serde_json::Value| f(r, &["devices", "ebs", "read_iops"]) / f(r, &["qps"]);
    assert!(reads_per_query(&z) > reads_per_query(&x) * 1.1, "zfs {z:#} xfs {x:#}");
    assert!(f(&z, &["arc", "demand_metadata_misses"]) > 0.0);
    assert!(f(&z, &["qps"]) < f(&x, &["qps"]), "zfs {} xfs {}", f(&z, &["qps"]), f(&x, &["qps"]));
}

/// Same config, same seed: the same numbers.
#[test]
fn runs_are_deterministic() {
    let a = run_variant(&base(zfs(256 << 20, 0), 3000.0)).unwrap();
    let b = run_variant(&base(zfs(256 << 20, 0), 3000.0)).unwrap();
    assert_eq!(a.summary, b.summary);
}

/// When the disk is fast and uncapped, queries are bounded by CPU: qps <= vcpus / cpu per query.
#[test]
fn cpu_bounds_qps_when_io_is_free() {
    let mut c = base(xfs(), 1e9);
    c.machine.vcpus = 2;
    c.devices[0].read_latency_ns = 1_000;
    c.devices[0].latency_sigma = 0.0;
    let r = run_variant(&c).unwrap().summary;
    let qps = f(&r, &["qps"]);
    // The least CPU a point select costs: statement + one row + the pages of its path.
    let min_cpu_ns = 20_000.0 + 1_000.0 + 3.0 * 500.0;
    assert!(qps <= 2.0 * 1e9 / min_cpu_ns, "qps {qps}");
    assert!(f(&r, &["cpu_utilization"]) > 0.9);
}

/// A 16K page on 4K records is four records: dmu_buf_hold_array issues their reads
/// together, so a page read that misses all four costs one device latency, not four.
/// (primarycache=metadata keeps data out of the ARC; indirect blocks stay cached.)
#[test]
fn the_records_of_one_page_are_read_in_parallel() {
    let mut c = base(zfs(512 << 20, 0), 1e9);
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z.recordsize = 4096;
    z.primarycache = CacheProperty::Metadata;
    let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
    w.threads = 1;
    c.devices[0].latency_sigma = 0.0; // every read takes exactly 500 us
    let r = run_variant(&c).unwrap().summary;
    let window = f(&r, &["window_s"]);
    let data_reads_per_page = f(&r, &["arc", "demand_data_misses"]) / f(&r, &["innodb", "pages_read"]);
    assert!((data_reads_per_page - 4.0).abs() < 0.01, "{r}");
    let meta_misses = f(&r, &["arc", "demand_metadata_misses"]) / window;
    assert!(meta_misses < 0.01 * f(&r, &["innodb", "pages_read"]) / window, "{r}");
    // One page read per query at most (the pool keeps the non-leaf pages): the median
    // query is one 500 us device latency plus CPU, far from 4 x 500 us.
    let p50 = f(&r, &["latency_ms", "p50"]);
    assert!(p50 > 0.5 && p50 < 0.75, "p50 {p50} ms: {r}");
}

/// A `cat` phase reads every table file once, so it reads exactly tables x file size, and
/// with an ARC larger than the data the workload after it finds every block in the ARC:
/// no device reads at all. A restart empties the caches: the same workload then reads
/// from the device again.
#[test]
fn cat_warms_the_arc_and_a_restart_empties_it() {
    let mut c = base(zfs(2 << 30, 0), 3000.0);
    c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 2,
        table_size: 200_000,
        compress_ratio: Some(1.28),
        prepare_rand_type: Default::default(),
    });
    let bench = |name: &str| {
        PhaseConfig::Workload(WorkloadPhase {
            name: name.into(),
            warmup_ns: 0,
            duration_ns: 10 * SEC,
            test: None,
        })
    };
    c.phases = vec![
        PhaseConfig::Cat(CatPhase { name: "cat".into(), read_size: 128 << 10, passes: 1 }),
        bench("warm"),
        PhaseConfig::Restart(RestartPhase { name: "reboot".into(), vm_moved: false, recreate_cache: false }),
        bench("cold"),
    ];
    let r = run_variant(&c).unwrap().summary;
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    let file = ztwin_core::db::innodb::btree::TableLayout::sysbench(200_000, 16384).file_size();
    assert_eq!(phases[0]["bytes_read"].as_u64().unwrap(), 2 * file);
    assert!(phases[0]["end_s"].as_f64().unwrap() > 0.0);
    let warm = &phases[1];
    assert_eq!(f(warm, &["devices", "ebs", "read_iops"]), 0.0, "{warm:#}");
    assert!(f(warm, &["arc", "hits"]) > 0.0);
    let cold = &phases[3];
    // Cold again: the 6,000 records of the two files come from the device once more.
    assert!(f(cold, &["arc", "demand_data_misses"]) > 1000.0, "{cold:#}");
    assert!(f(cold, &["devices", "ebs", "read_iops"]) > 0.0);
    assert!(f(cold, &["arc", "demand_metadata_misses"]) > 0.0);
    // The top-level summary is the last workload phase's window.
    assert_eq!(r["qps"], cold["qps"]);
    assert!(phases[3]["start_s"].as_f64().unwrap() >= phases[1]["end_s"].as_f64().unwrap());
}

/// The L2ARC, from first principles: when a share f of the device reads goes to the cache
/// device (fast, uncapped) instead of the 3000-IOPS pool device, a disk-bound run serves
/// about 1 / (1 - f) times the queries it serves without the cache device (the CPUs are
/// far from binding here).
#[test]
fn an_l2arc_serving_a_share_f_of_reads_multiplies_qps_by_one_over_one_minus_f() {
    let mut without = base(zfs(256 << 20, 0), 3000.0);
    without.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 8,
        table_size: 1_000_000,
        compress_ratio: Some(1.28),
        prepare_rand_type: Default::default(),
    });
    let mut with = without.clone();
    let mut nvme = with.devices[0].clone();
    nvme.name = "nvme".into();
    nvme.iops_limit = None;
    nvme.read_latency_ns = 100_000;
    nvme.capacity_bytes = Some(1 << 30); // holds part of the 1.6 GB the data takes compressed
    with.devices.push(nvme);
    let FsConfig::Zfs(z) = &mut with.filesystem else { unreachable!() };
    z.cache = vec!["nvme".into()];
    z.arc_warm_at_first_eviction = true;
    z.l2arc.l2arc_write_max = Some(64 << 20);
    z.l2arc.l2arc_write_boost = Some(64 << 20);
    z.l2arc.l2arc_noprefetch = Some(false);
    for c in [&mut without, &mut with] {
        c.phases = vec![
            PhaseConfig::Cat(CatPhase { name: "cat".into(), read_size: 128 << 10, passes: 2 }),
            PhaseConfig::Workload(WorkloadPhase {
                name: "bench".into(),
                warmup_ns: 20 * SEC,
                duration_ns: 30 * SEC,
                test: None,
            }),
        ];
    }
    let a = run_variant(&without).unwrap().summary;
    let b = run_variant(&with).unwrap().summary;
    let pool = f(&b, &["devices", "ebs", "read_iops"]);
    let cache = f(&b, &["devices", "nvme", "read_iops"]);
    assert!(pool > 2900.0, "still disk-bound: {b:#}");
    let share = cache / (cache + pool);
    assert!(share > 0.5, "the cache device serves most reads: {b:#}");
    assert!(
        (f(&b, &["l2arc", "read_share", "l2arc"]) / (1.0 - f(&b, &["l2arc", "read_share", "arc"])) - share)
            .abs()
            < 0.02
    );
    let expected = f(&a, &["qps"]) / (1.0 - share);
    let qps = f(&b, &["qps"]);
    assert!((qps / expected - 1.0).abs() < 0.1, "qps {qps} vs {expected} (f = {share}): {b:#}");
    // Every feed wrote something to the cache device, within its limit per feed.
    assert!(f(&b, &["devices", "nvme", "write_iops"]) >= 0.0);
    assert!(f(&b, &["l2arc", "l2_size"]) > 0.0);
}
