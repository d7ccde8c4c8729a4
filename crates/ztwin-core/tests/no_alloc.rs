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
    let DatabaseConfig::Innodb(db) = &mut c.database;
    db.innodb_buffer_pool_size = 8 << 20;
    c.dataset =
        DatasetConfig::Sysbench(SysbenchDataset { tables: 4, table_size: 1_000_000, compress_ratio: 1.28 });
    let WorkloadConfig::Sysbench(w) = &mut c.workload;
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
        ashift: 12,
        recordsize: 16384,
        indirect_block_size: 131072,
        compression: Compression::Lz4,
        primarycache: CacheProperty::All,
        arc: ArcTunables { zfs_arc_max: 128 << 20, zfs_compressed_arc_enabled: true, ..Default::default() },
        release_patch: 11,
        cache: vec![],
        secondarycache: CacheProperty::All,
        l2arc: Default::default(),
        arc_warm_at_first_eviction: false,
        zfetch: Default::default(),
    }));
}

#[test]
fn xfs_loop_allocates_nothing_per_request() {
    check(FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096 }));
}
