//! The core loop allocates nothing per request: once caches are full, simulating twice as
//! long costs no more heap allocations than the per-interval report rows.

// A counting global allocator is the one place that needs unsafe; test code only.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use ztwin_core::config::*;
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::{SEC, US};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
/// The counter is process-wide: the tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn config(fs: FsConfig, duration_s: u64) -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "no-alloc".into();
    c.seed = 3;
    c.machine.vcpus = 4;
    let d = &mut c.devices[0];
    d.iops_limit = Some(20_000.0);
    d.read_latency_ns = 200 * US;
    d.latency_sigma = 0.3;
    d.parallelism = 16;
    c.filesystem = fs;
    let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
    db.innodb_buffer_pool_size = 8 << 20;
    c.dataset = DatasetConfig::Sysbench(SysbenchDataset {
        tables: 4,
        table_size: 1_000_000,
        compress_ratio: None,
        prepare_rand_type: Default::default(),
    });
    let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
    w.threads = 16;
    // Caches fill during the warm-up; one report row whatever the duration.
    c.run =
        RunConfig { warmup_ns: 30 * SEC, duration_ns: duration_s * SEC, report_interval_ns: 10_000 * SEC };
    c
}

fn allocations(cfg: &VariantConfig) -> (u64, u64) {
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = run_variant(cfg).unwrap();
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    (n, r.summary["queries"].as_u64().unwrap())
}

fn check(fs: FsConfig) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (short, q_short) = allocations(&config(fs.clone(), 10));
    let (long, q_long) = allocations(&config(fs, 20));
    assert!(q_long > q_short + 10_000, "{q_short} {q_long}");
    // Twice the requests, the same allocations (a little slack for hash-table and heap
    // growth that a longer run's in-flight peaks may trigger once).
    eprintln!("allocations {short} for {q_short} queries, {long} for {q_long}");
    assert!(long <= short + 16, "allocations {short} for {q_short} queries, {long} for {q_long}");
}

#[test]
fn zfs_loop_allocates_nothing_per_request() {
    check(FsConfig::Zfs(ZfsConfig {
        release: ZfsRelease::V2_2,
        vdevs: vec!["disk".into()],
        log: vec![],
        pool: Default::default(),
        txg: Default::default(),
        ashift: 12,
        recordsize: 16384,
        log_recordsize: None,
        indirect_block_size: 131072,
        compression: Compression::Lz4,
        primarycache: CacheProperty::All,
        arc: ArcTunables { zfs_arc_max: 128 << 20, ..Default::default() },
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
    }));
}

#[test]
fn xfs_loop_allocates_nothing_per_request() {
    check(FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None }));
}

/// XFS on bcache: lookups, miss inserts into open buckets and bucket invalidation reuse
/// what the cache set allocated when it was made. The cache (256 MiB) is smaller than the
/// data (about 1 GB), so buckets are invalidated throughout.
#[test]
fn xfs_on_bcache_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let with_cache = |duration_s| {
        let mut c = config(
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
            duration_s,
        );
        let mut nvme = c.devices[0].clone();
        nvme.name = "nvme".into();
        nvme.iops_limit = None;
        nvme.read_latency_ns = 90 * US;
        nvme.capacity_bytes = Some(256 << 20);
        c.devices.push(nvme);
        c
    };
    let (short, q_short) = allocations(&with_cache(10));
    let (long, q_long) = allocations(&with_cache(20));
    assert!(q_long > q_short + 10_000, "{q_short} {q_long}");
    eprintln!("allocations {short} for {q_short} queries, {long} for {q_long}");
    assert!(long <= short + 16, "allocations {short} for {q_short} queries, {long} for {q_long}");
}

/// fio clients: twice the simulated time, the same allocations (the phase's histograms
/// and clone states are made once per phase).
#[test]
fn fio_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |secs: u64| {
        let mut c = test_fio_variant();
        c.run.report_interval_ns = 10_000 * SEC;
        let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
        f.jobs[1].runtime_ns = secs * SEC;
        c.phases = vec![PhaseConfig::Fio(FioPhase { name: "r".into(), jobs: vec![1] })];
        let before = ALLOCS.load(Ordering::Relaxed);
        let r = run_variant(&c).unwrap();
        (ALLOCS.load(Ordering::Relaxed) - before, r.summary["fio"]["read"]["ios"].as_u64().unwrap())
    };
    let (short, n_short) = run(20);
    let (long, n_long) = run(40);
    assert!(n_long > n_short + 10_000, "{n_short} {n_long}");
    assert!(long <= short + 16, "allocations {short} for {n_short} reads, {long} for {n_long}");
}

/// fio writes on ZFS: twice the simulated time, the same allocations. The open txg's map,
/// the sync's scratch vectors and the vdev queues are reused once they have grown to
/// their high-water mark; what grows with the data written (a rewritten block's new
/// place, the txg log) grows by doubling, so at most a few times per run. Sequential and
/// random 128K writes (full records: no reads) and random 16K writes into 128K records
/// (each a read-modify-write of an uncached record), on a solid-state disk (positions
/// not modelled) and on a rotating one (the pool's allocator places every copy).
#[test]
fn fio_zfs_write_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases = [
        (FioRw::Write, 128 << 10, false),
        (FioRw::Randwrite, 128 << 10, false),
        (FioRw::Randwrite, 16 << 10, true),
    ];
    for (rw, bs, rotational) in cases {
        let run = |secs: u64| {
            let mut c = test_fio_variant();
            c.run.report_interval_ns = 10_000 * SEC;
            if rotational {
                let d = &mut c.devices[0];
                d.capacity_bytes = Some(1_000_204_886_016);
                d.parallelism = 1;
                d.latency_sigma = 0.0;
                d.rotational = Some(RotationalConfig {
                    rpm: 7200,
                    track_to_track_seek_ns: 500 * US,
                    average_seek_ns: 8500 * US,
                    full_stroke_seek_ns: 17_350 * US,
                    write_settle_ns: 1000 * US,
                    outer_rate_bytes_per_sec: 150e6,
                    inner_rate_bytes_per_sec: 60e6,
                    readahead_bytes: 1 << 20,
                });
            }
            let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
            let j = &mut f.jobs[2];
            j.rw = rw;
            j.bs_write = bs;
            j.bs_read = bs;
            j.time_based = true;
            j.runtime_ns = secs * SEC;
            c.phases = vec![PhaseConfig::Fio(FioPhase { name: "w".into(), jobs: vec![2] })];
            let before = ALLOCS.load(Ordering::Relaxed);
            let r = run_variant(&c).unwrap();
            (ALLOCS.load(Ordering::Relaxed) - before, r.summary["fio"]["write"]["ios"].as_u64().unwrap())
        };
        let (short, n_short) = run(20);
        let (long, n_long) = run(40);
        eprintln!("{rw:?} {bs}: allocations {short} for {n_short} writes, {long} for {n_long}");
        assert!(n_long > n_short + 2_000, "{rw:?} {bs}: {n_short} {n_long}");
        assert!(
            long <= short + 16,
            "{rw:?} {bs}: allocations {short} for {n_short} writes, {long} for {n_long}"
        );
    }
}

/// Synchronous writes on ZFS (the intent log): twice the simulated time, the same
/// allocations. The itx queues, the commit list, the log blocks (recycled), the leaf
/// queues and the waiters are reused once grown. O_SYNC 16K writes by four writers with a
/// SLOG; fsync every 8 writes with logbias=throughput (dmu_sync) without one.
#[test]
fn fio_zfs_sync_write_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for case in 0..2 {
        let run = |secs: u64| {
            let mut c = test_fio_variant();
            c.run.report_interval_ns = 10_000 * SEC;
            c.devices[0].iops_limit = None;
            c.devices[0].flush_latency_ns = 100 * US;
            let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
            z.recordsize = 16 << 10;
            if case == 0 {
                let mut slog = c.devices[0].clone();
                slog.name = "slog".into();
                slog.write_latency_ns = 50 * US;
                slog.capacity_bytes = Some(1 << 30);
                c.devices.push(slog);
                z.log = vec!["slog".into()];
            } else {
                z.logbias = Logbias::Throughput;
            }
            let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
            let j = &mut f.jobs[2];
            j.rw = FioRw::Randwrite;
            j.bs_write = 16 << 10;
            j.bs_read = 16 << 10;
            j.time_based = true;
            j.runtime_ns = secs * SEC;
            if case == 0 {
                j.sync = FioSync::Sync;
                j.numjobs = 4;
                j.clone_files = vec![vec![0]; 4];
            } else {
                j.fsync = 8;
            }
            c.phases = vec![PhaseConfig::Fio(FioPhase { name: "w".into(), jobs: vec![2] })];
            let before = ALLOCS.load(Ordering::Relaxed);
            let r = run_variant(&c).unwrap();
            (ALLOCS.load(Ordering::Relaxed) - before, r.summary["fio"]["write"]["ios"].as_u64().unwrap())
        };
        let (short, n_short) = run(20);
        let (long, n_long) = run(40);
        eprintln!("case {case}: allocations {short} for {n_short} writes, {long} for {n_long}");
        assert!(n_long > n_short + 2_000, "case {case}: {n_short} {n_long}");
        assert!(
            long <= short + 16,
            "case {case}: allocations {short} for {n_short} writes, {long} for {n_long}"
        );
    }
}

/// InnoDB's write path (redo, group commit, dirty pages, the page cleaner's batches, the
/// ZIL or ext4's flushes; Percona Server's LRU manager and backoff waits; MySQL 5.7's
/// fsync method through ext4's page cache) allocates nothing per transaction once its
/// lists have grown.
#[test]
fn innodb_write_loop_allocates_nothing_per_transaction() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for server in ["mysql", "mariadb", "percona", "mysql-fsync-ext4", "mysql-binlog"] {
        let run = |secs: u64| {
            let mut c = match server {
                "mariadb" => test_write_variant(true),
                "percona" => test_percona_variant(),
                _ => test_write_variant(false),
            };
            if server == "mysql-fsync-ext4" {
                // Every file buffered: the page cache's reads, writes, fsyncs and flusher.
                c.filesystem =
                    FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
                let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
                d.innodb_flush_method = "fsync".into();
            }
            if server == "mysql-binlog" {
                // The binary log's group commit (its stages' queues, the followers' waits).
                let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
                d.log_bin = Some(true);
            }
            c.seed = 3;
            // The warm-up fills the caches and goes once round the files written in a
            // ring: the redo log (4 MiB files here) and the undo pages of ibdata1.
            c.run =
                RunConfig { warmup_ns: 150 * SEC, duration_ns: secs * SEC, report_interval_ns: 10_000 * SEC };
            let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
            d.innodb_log_file_size = Some(4 << 20);
            let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
            w.test = SysbenchTest::OltpUpdateIndex;
            let before = ALLOCS.load(Ordering::Relaxed);
            let r = run_variant(&c).unwrap();
            (ALLOCS.load(Ordering::Relaxed) - before, r.summary["queries"].as_u64().unwrap())
        };
        // Windows of at least 16 txgs (zfs_txg_timeout 5 s): the summary's "txg" section
        // lists 16, so the report's own allocations are the same in both.
        let (short, n_short) = run(90);
        let (long, n_long) = run(180);
        eprintln!("{server}: allocations {short} for {n_short} queries, {long} for {n_long}");
        assert!(n_long > n_short + 2_000, "{server}: {n_short} {n_long}");
        assert!(
            long <= short + 16,
            "{server}: allocations {short} for {n_short} queries, {long} for {n_long}"
        );
    }
}

/// Buffered I/O on ext4 (the Linux page cache): twice the simulated time, the same
/// allocations. The page slots, the key table, the shadow ring and the plans' I/O lists
/// are made with the cache; reads of a file sixteen times the budget (reclaim and
/// shadow entries throughout), and 16K random writes with fsync every 8 over the
/// background threshold (the flusher, the sync walks, the dirty throttle).
#[test]
fn fio_buffered_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for case in 0..2 {
        let run = |secs: u64| {
            let mut c = test_fio_variant();
            c.run.report_interval_ns = 10_000 * SEC;
            c.filesystem =
                FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
            c.machine.mem_available_bytes = Some(16 << 20);
            c.machine.vm.dirty_background_bytes = Some(1 << 20);
            c.devices[0].iops_limit = None;
            let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
            let k = if case == 0 { 1 } else { 2 };
            let j = &mut f.jobs[k];
            j.direct = false;
            j.time_based = true;
            j.runtime_ns = secs * SEC;
            if case == 1 {
                j.rw = FioRw::Randwrite;
                j.bs_write = 16 << 10;
                j.bs_read = 16 << 10;
                j.fsync = 8;
            }
            c.phases = vec![PhaseConfig::Fio(FioPhase { name: "b".into(), jobs: vec![k as u32] })];
            let before = ALLOCS.load(Ordering::Relaxed);
            let r = run_variant(&c).unwrap();
            let fio = &r.summary["fio"];
            let ios = fio["read"]["ios"].as_u64().unwrap_or(0) + fio["write"]["ios"].as_u64().unwrap_or(0);
            (ALLOCS.load(Ordering::Relaxed) - before, ios)
        };
        let (short, n_short) = run(10);
        let (long, n_long) = run(20);
        eprintln!("case {case}: allocations {short} for {n_short} I/Os, {long} for {n_long}");
        assert!(n_long > n_short + 2_000, "case {case}: {n_short} {n_long}");
        assert!(
            long <= short + 16,
            "case {case}: allocations {short} for {n_short} I/Os, {long} for {n_long}"
        );
    }
}

/// XFS on bcache in writeback mode under fio's O_DIRECT random writes: dirty data, the
/// writeback thread's keybuf and in-flight keys, the rate controller reuse what the cache
/// set allocated when it was made (twice the simulated time, the same allocations).
#[test]
fn bcache_writeback_loop_allocates_nothing_per_request() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |secs: u64| {
        let mut c = test_fio_variant();
        c.run.report_interval_ns = 10_000 * SEC;
        let mut bcache = BcacheConfig::with_defaults("nvme");
        bcache.cache_mode = BcacheCacheMode::Writeback;
        bcache.bucket_size = 64 << 10;
        bcache.writeback_delay = 1;
        c.filesystem = FsConfig::Xfs(ExtentFsConfig {
            device: c.devices[0].name.clone(),
            block_size: 4096,
            bcache: Some(bcache),
        });
        let mut nvme = c.devices[0].clone();
        nvme.name = "nvme".into();
        nvme.iops_limit = None;
        nvme.capacity_bytes = Some(64 << 20);
        c.devices.push(nvme);
        let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
        f.jobs[1].rw = FioRw::Randwrite;
        f.jobs[1].direct = true;
        f.jobs[1].runtime_ns = secs * SEC;
        c.phases = vec![PhaseConfig::Fio(FioPhase { name: "w".into(), jobs: vec![1] })];
        let before = ALLOCS.load(Ordering::Relaxed);
        let r = run_variant(&c).unwrap();
        let allocs = ALLOCS.load(Ordering::Relaxed) - before;
        let p = r.summary["phases"].as_array().and_then(|p| p.last()).expect("a phase");
        let b = &p["bcache"];
        assert!(b["writeback_bytes"].as_u64().is_some_and(|n| n > 0), "{b}");
        (allocs, p["fio"]["write"]["ios"].as_u64().expect("fio write ios"))
    };
    let (short, n_short) = run(10);
    let (long, n_long) = run(20);
    assert!(n_long > n_short + 5_000, "{n_short} {n_long}");
    assert!(long <= short + 16, "allocations {short} for {n_short} writes, {long} for {n_long}");
}
