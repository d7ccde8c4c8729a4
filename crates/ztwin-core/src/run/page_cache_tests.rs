//! Buffered I/O on XFS/ext4 through the driver: the Linux page cache (`fs::buffered`)
//! under fio jobs with direct=0 and under InnoDB's buffered files.

use super::*;
use crate::config::{test_fio_variant, ExtentFsConfig, FioJob, FioPhase, PhaseConfig};

fn run(cfg: &VariantConfig) -> Value {
    run_variant(cfg).expect("runs").summary
}

fn job(c: &mut VariantConfig, k: usize) -> &mut FioJob {
    let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
    &mut w.jobs[k]
}

fn fio(name: &str, jobs: Vec<u32>) -> PhaseConfig {
    PhaseConfig::Fio(FioPhase { name: name.into(), jobs })
}

/// The test fio variant on ext4 (4 KiB blocks) with its one file of `size` bytes.
fn ext4_fio(size: u64) -> VariantConfig {
    let mut c = test_fio_variant();
    c.filesystem = FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    if let DatasetConfig::Files(f) = &mut c.dataset {
        f.files[0].size = size;
    }
    for k in 0..3 {
        let j = job(&mut c, k);
        j.file_range = size;
        j.io_size = size;
    }
    c
}

fn f(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} in {v}"))
}

/// The test variant's "randread" job (index 1) as one clone reading its whole file once
/// in 16 KiB requests (a random map: each block once).
fn one_pass(c: &mut VariantConfig) {
    let j = job(c, 1);
    j.numjobs = 1;
    j.clone_files = vec![vec![0]];
    j.time_based = false;
    j.runtime_ns = 0;
    j.norandommap = false;
}

/// A buffered random read of a file smaller than the page cache's budget brings it in on
/// the first pass (every page a device read; fio's POSIX_FADV_RANDOM turns readahead off,
/// so nothing more); the second pass finds it all cached and reads nothing from the device
/// — unless fio's `invalidate` (its default) drops the file's pages when the job opens it.
#[test]
fn a_random_read_of_a_file_smaller_than_the_cache_hits_it_after_one_pass() {
    for invalidate in [false, true] {
        let mut c = ext4_fio(16 << 20);
        one_pass(&mut c);
        job(&mut c, 1).invalidate = invalidate;
        c.phases = vec![fio("first", vec![1]), fio("second", vec![1])];
        let s = run(&c);
        let (first, second) = (&s["phases"][0], &s["phases"][1]);
        let pages = (16 << 20) / 4096;
        assert_eq!(f(first, &["page_cache", "read_miss_pages"]), pages as f64, "{first}");
        assert_eq!(f(first, &["page_cache", "pgpgin"]), (16 << 10) as f64, "{first}");
        assert_eq!(f(first, &["page_cache", "cached_kb"]), (16 << 10) as f64);
        assert_eq!(f(first, &["devices", "disk", "read_kib_per_io"]), 16.0, "no readahead: {first}");
        if invalidate {
            assert_eq!(f(second, &["page_cache", "invalidated_pages"]), pages as f64, "{second}");
            assert_eq!(f(second, &["page_cache", "read_miss_pages"]), pages as f64, "{second}");
        } else {
            assert_eq!(f(second, &["devices", "disk", "read_iops"]), 0.0, "{second}");
            assert_eq!(f(second, &["page_cache", "read_hit_ratio"]), 1.0, "{second}");
            assert_eq!(f(second, &["page_cache", "pgpgin"]), 0.0, "{second}");
            // A copy of 16 KiB takes microseconds, a device read half a millisecond.
            assert!(f(second, &["fio", "read", "clat_ms", "mean"]) < 0.05, "{second}");
        }
    }
}

/// A random read of a file four times the budget (`machine.mem_available_bytes` 16 MiB)
/// finds at most a quarter of it cached: the rest are device reads, at most the device's
/// IOPS limit (3000).
#[test]
fn a_random_read_of_a_file_larger_than_the_cache_is_bound_by_the_device() {
    let mut c = ext4_fio(64 << 20);
    c.machine.mem_available_bytes = Some(16 << 20);
    let j = job(&mut c, 1);
    j.numjobs = 4;
    j.clone_files = vec![vec![0]; 4];
    j.runtime_ns = 3 * SEC;
    c.phases = vec![fio("randread", vec![1])];
    let s = run(&c);
    let p = &s["phases"][0];
    let pc = &p["page_cache"];
    let hit = f(pc, &["read_hit_ratio"]);
    assert!(hit < 0.3, "{pc}");
    assert!(f(pc, &["cached_kb"]) <= (16 << 10) as f64, "{pc}");
    assert!(f(pc, &["pgsteal_file"]) > 0.0, "reclaim ran: {pc}");
    let dev_iops = f(p, &["devices", "disk", "read_iops"]);
    let fio_iops = f(p, &["fio", "read", "iops"]);
    assert!(dev_iops <= 3000.0 * 1.01, "{dev_iops}");
    assert!(dev_iops > 2500.0, "the device is the bound: {dev_iops}");
    assert!(
        (fio_iops * (1.0 - hit) / dev_iops - 1.0).abs() < 0.05,
        "each miss a device read: {fio_iops} {hit} {dev_iops}"
    );
}

/// A buffered sequential read (fio's POSIX_FADV_SEQUENTIAL doubles the bdi's 128 KiB
/// readahead window, `ra_pages`) issues readahead-sized device reads whatever the
/// request size: 4 KiB requests become reads of 256 KiB once the window has ramped up.
#[test]
fn a_sequential_read_issues_readahead_sized_requests() {
    for (hint, window) in [(crate::config::FioFadvise::Type, 256.0), (crate::config::FioFadvise::None, 128.0)]
    {
        let mut c = ext4_fio(64 << 20);
        let j = job(&mut c, 0);
        j.bs_read = 4096;
        j.fadvise_hint = hint;
        c.phases = vec![fio("seqread", vec![0])];
        let s = run(&c);
        let p = &s["phases"][0];
        let kib = f(p, &["devices", "disk", "read_kib_per_io"]);
        assert!(kib > 0.9 * window && kib <= window, "{hint:?}: {kib} KiB per read: {p}");
        assert_eq!(f(p, &["page_cache", "pgpgin"]), (64 << 10) as f64);
        assert_eq!(f(p, &["page_cache", "readahead_pages"]), ((64 << 20) / 4096) as f64);
    }
}

/// Buffered writes with fsync every 16 writes: each fsync writes the pages dirtied since
/// the last one, each once, then commits the journal (the writes changed the file's
/// timestamps). fio issues its fsync before the next write (`get_io_u`), so none follows
/// the last 16: those stay dirty. On ext4 (jbd2) and XFS (its log).
#[test]
fn buffered_writes_with_fsync_write_each_dirty_page_once_and_commit_the_journal() {
    for xfs in [false, true] {
        let mut c = ext4_fio(8 << 20);
        if xfs {
            c.filesystem =
                FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
        }
        let j = job(&mut c, 2);
        j.bs_write = 4096;
        j.bs_read = 4096;
        j.fsync = 16;
        c.phases = vec![fio("write", vec![2])];
        let s = run(&c);
        let p = &s["phases"][0];
        let pc = &p["page_cache"];
        let pages = ((8 << 20) / 4096) as f64;
        assert_eq!(f(pc, &["nr_dirtied"]), pages, "{pc}");
        assert_eq!(f(pc, &["nr_written"]), pages - 16.0, "{pc}");
        assert_eq!(f(pc, &["pgpgout"]), (pages - 16.0) * 4.0, "{pc}");
        assert_eq!(f(pc, &["dirty_kb"]), 64.0, "{pc}");
        assert_eq!(f(pc, &["flusher_runs"]), 0.0, "{pc}");
        let jn = &p["journal"];
        assert_eq!(f(jn, &["syncs"]), pages / 16.0 - 1.0, "{jn}");
        assert!(f(jn, &["commits"]) > 0.0 && f(jn, &["sync_waits"]) > 0.0, "{jn}");
        assert_eq!(f(p, &["fio", "write", "ios"]), pages);
        // The device wrote the pages (pgpgout) and the journal's blocks, nothing else.
        let dev = f(p, &["devices", "disk", "write_mbps"]) * 1e6 * f(p, &["fio", "runtime_s"]);
        let expected = f(pc, &["pgpgout"]) * 1024.0 + f(jn, &["log_bytes"]);
        assert!((dev / expected - 1.0).abs() < 1e-6, "{dev} {expected}");
    }
}

/// Writes without any fsync: under the background threshold (`vm.dirty_background_ratio`
/// 10% of a 2 GiB machine) nothing is written during the phase (the periodic flush waits
/// for `dirty_expire_centisecs`, 30 s); above it (`vm.dirty_background_bytes` = 1 MiB) the
/// flusher writes them.
#[test]
fn dirty_pages_above_the_background_threshold_are_written_by_the_flusher() {
    for background in [None, Some(1u64 << 20)] {
        let mut c = ext4_fio(16 << 20);
        c.machine.vm.dirty_background_bytes = background;
        let j = job(&mut c, 2);
        (j.bs_write, j.bs_read) = (64 << 10, 64 << 10);
        c.phases = vec![fio("write", vec![2])];
        let s = run(&c);
        let p = &s["phases"][0];
        let pc = &p["page_cache"];
        assert_eq!(f(pc, &["nr_dirtied"]), 4096.0, "{pc}");
        assert!(p["journal"].is_null(), "no sync, no journal: {p}");
        if background.is_none() {
            assert_eq!(f(pc, &["nr_written"]), 0.0, "{pc}");
            assert_eq!(f(pc, &["dirty_kb"]), (16 << 10) as f64, "{pc}");
            assert_eq!(f(p, &["devices", "disk", "write_iops"]), 0.0);
        } else {
            assert!(f(pc, &["flusher_runs"]) > 0.0, "{pc}");
            // Submitted (pgpgout; nr_written counts completions): all but what is under
            // the threshold.
            let left = f(pc, &["dirty_kb"]);
            assert!(left < 1024.0 && f(pc, &["pgpgout"]) + left == (16 << 10) as f64, "{pc}");
            assert!(f(pc, &["nr_written"]) > 0.0, "{pc}");
            assert!(f(p, &["devices", "disk", "write_iops"]) > 0.0);
        }
    }
}

/// The test variant (MySQL 5.7, a 16 MiB pool, 8 threads) running oltp_update_index on
/// ext4 with `innodb_flush_method` = `method`, a device whose cache flush takes 1 ms.
fn mysql_on_ext4(method: &str) -> VariantConfig {
    let mut c = crate::config::test_variant();
    let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
    w.test = crate::config::SysbenchTest::OltpUpdateIndex;
    c.filesystem = FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    c.devices[0].flush_latency_ns = crate::sim::time::MS;
    let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
    d.innodb_flush_method = method.into();
    c
}

/// MySQL 5.7's buffered methods on ext4 under oltp_update_index, and the counters of
/// the page cache, the journal and InnoDB agreeing (over the same window, so up to an
/// operation straddling its edges):
/// - fsync: data files and logs are buffered and fsynced; every InnoDB fsync
///   (Innodb_data_fsyncs) is a journal sync; each page InnoDB reads (pages_read, 4 pages
///   of 4 KiB each; a read of each of the 8 threads may straddle an edge) is a page
///   cache lookup, and the device wrote what the page cache
///   wrote back (pgpgout) and the journal's blocks, nothing else.
/// - O_DSYNC: the log is opened O_SYNC and never fsynced (Innodb_os_log_fsyncs 0): each
///   log write is a sync of its range, so the journal's syncs are the data files' fsyncs
///   plus the log writes.
/// - O_DIRECT: only the redo log (MySQL 5.7 never opens it O_DIRECT) is in the page
///   cache: no data file read goes through it. O_DIRECT_NO_FSYNC: the same, and only the
///   log is fsynced.
#[test]
fn mysql_57_buffered_methods_on_ext4_report_consistent_counters() {
    for method in ["fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"] {
        let s = run(&mysql_on_ext4(method));
        let (db, j, pc) = (&s["innodb"], &s["journal"], &s["page_cache"]);
        let near = |a: f64, b: f64, slack: f64| (a - b).abs() <= slack;
        assert!(f(&s, &["tps"]) > 100.0, "{method}: {s}");
        let syncs = f(j, &["syncs"]);
        let (data_fsyncs, log_writes) = (f(db, &["Innodb_data_fsyncs"]), f(db, &["Innodb_log_writes"]));
        let lookups = f(pc, &["read_hit_pages"]) + f(pc, &["read_miss_pages"]);
        let written = f(&s, &["devices", "disk", "write_mbps"]) * 1e6 * f(&s, &["window_s"]);
        let expected = f(pc, &["pgpgout"]) * 1024.0 + f(j, &["log_bytes"]);
        match method {
            "fsync" => {
                assert!(near(data_fsyncs, syncs, 2.0), "{method}: {db} {j}");
                assert!(f(db, &["Innodb_os_log_fsyncs"]) > 0.0);
                assert!(near(lookups, 4.0 * f(db, &["pages_read"]), 4.0 * 8.0), "{method}: {db} {pc}");
                assert!((written / expected - 1.0).abs() < 0.01, "{method}: {written} vs {expected}");
                assert!(f(pc, &["pgpgin"]) > 0.0 && f(pc, &["nr_dirtied"]) > 0.0, "{pc}");
            }
            "O_DSYNC" => {
                assert_eq!(f(db, &["Innodb_os_log_fsyncs"]), 0.0, "{db}");
                assert!(near(syncs, data_fsyncs + log_writes, 4.0), "{method}: {db} {j}");
                assert!(near(lookups, 4.0 * f(db, &["pages_read"]), 4.0 * 8.0), "{method}: {db} {pc}");
                assert!((written / expected - 1.0).abs() < 0.01, "{method}: {written} vs {expected}");
            }
            _ => {
                assert_eq!(lookups, 0.0, "data files are O_DIRECT: {pc}");
                assert!(f(pc, &["nr_dirtied"]) > 0.0, "the redo log is buffered: {pc}");
                assert!(near(data_fsyncs, syncs, 2.0), "{method}: {db} {j}");
                if method == "O_DIRECT_NO_FSYNC" {
                    // Only the log is fsynced.
                    assert!(near(data_fsyncs, f(db, &["Innodb_os_log_fsyncs"]), 2.0), "{db}");
                }
            }
        }
    }
}

/// A reboot (a restart phase) writes every dirty page before the machine goes down (the
/// shutdown's sync), and the cache comes back empty: the phase after reads everything from
/// the device again, with nothing dirty left.
#[test]
fn a_restart_syncs_the_dirty_pages_and_empties_the_cache() {
    let mut c = ext4_fio(16 << 20);
    one_pass(&mut c);
    job(&mut c, 1).invalidate = false;
    let w = job(&mut c, 2);
    (w.bs_write, w.bs_read) = (64 << 10, 64 << 10);
    c.phases = vec![
        fio("write", vec![2]),
        PhaseConfig::Restart(crate::config::RestartPhase {
            name: "reboot".into(),
            vm_moved: false,
            recreate_cache: false,
        }),
        fio("read", vec![1]),
    ];
    let s = run(&c);
    let (write, reboot, read) = (&s["phases"][0], &s["phases"][1], &s["phases"][2]);
    assert_eq!(f(write, &["page_cache", "dirty_kb"]), (16 << 10) as f64, "{write}");
    // The sync of 16 MiB takes device time before the machine is up again.
    assert!(f(reboot, &["end_s"]) > f(reboot, &["start_s"]), "{reboot}");
    let pc = &read["page_cache"];
    assert_eq!(f(pc, &["dirty_kb"]), 0.0, "{pc}");
    assert_eq!(f(pc, &["read_miss_pages"]), 4096.0, "{pc}");
    assert_eq!(f(pc, &["pgpgin"]), (16 << 10) as f64, "{pc}");
}

/// Experiment 2's storage (ext4 on md RAID10 n2 of four drives behind a write-back
/// controller) under MySQL 5.7 with innodb_flush_method = fsync: the page cache's device
/// I/O takes the array's path. The members read what the page cache read in (pgpgin: one
/// copy each) and write two copies of what it wrote back and of the journal's blocks.
#[test]
fn buffered_io_goes_through_md_raid10() {
    let mut c = crate::config::test_raid_variant();
    let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
    d.innodb_flush_method = "fsync".into();
    let s = run(&c);
    let (pc, j, window) = (&s["page_cache"], &s["journal"], f(&s, &["window_s"]));
    let devices = s["devices"].as_object().unwrap();
    assert_eq!(devices.len(), 4);
    let sum = |key: &str| devices.values().map(|d| f(d, &[key])).sum::<f64>() * 1e6 * window;
    let (read, written) = (sum("read_mbps"), sum("write_mbps"));
    let pgpgin = f(pc, &["pgpgin"]) * 1024.0;
    let out = 2.0 * (f(pc, &["pgpgout"]) * 1024.0 + f(j, &["log_bytes"]));
    assert!(pgpgin > 0.0 && (read / pgpgin - 1.0).abs() < 0.01, "{read} {pgpgin}");
    assert!(out > 0.0 && (written / out - 1.0).abs() < 0.01, "{written} {out}");
    assert!(f(&s, &["tps"]) > 100.0);
}

/// bcache under XFS's page cache: a buffered random read's misses read the backing disk
/// and are inserted into the cache device; the next pass (fio's invalidate drops the
/// pages when the job opens the file) misses the page cache again and bcache serves it
/// from the cache device.
#[test]
fn buffered_reads_go_through_bcache() {
    let mut c = ext4_fio(16 << 20);
    c.filesystem = FsConfig::Xfs(ExtentFsConfig {
        device: "disk".into(),
        block_size: 4096,
        bcache: Some(crate::config::BcacheConfig {
            cache_device: "nvme".into(),
            cache_mode: crate::config::BcacheCacheMode::Writethrough,
            sequential_cutoff: 4 << 20,
            bucket_size: 256 << 10,
            cache_replacement_policy: crate::config::BcacheReplacement::Lru,
            readahead: 0,
            congested_read_threshold_us: 2000,
            congested_write_threshold_us: 20000,
            ..crate::config::BcacheConfig::with_defaults("")
        }),
    });
    let mut nvme = c.devices[0].clone();
    nvme.name = "nvme".into();
    nvme.iops_limit = None;
    nvme.capacity_bytes = Some(1 << 30);
    c.devices.push(nvme);
    one_pass(&mut c);
    c.phases = vec![fio("first", vec![1]), fio("second", vec![1])];
    let s = run(&c);
    let (first, second) = (&s["phases"][0], &s["phases"][1]);
    let reads = |p: &Value, d: &str| f(p, &["devices", d, "read_iops"]);
    assert_eq!(f(second, &["page_cache", "read_miss_pages"]), 4096.0, "{second}");
    assert!(reads(first, "disk") > 0.0 && reads(first, "nvme") == 0.0, "{first}");
    assert!(reads(second, "nvme") > 0.0 && reads(second, "disk") == 0.0, "{second}");
}

/// Experiment 2's stack in small: Percona Server 5.7 with innodb_flush_method = O_DSYNC,
/// no doublewrite and the binary log (sync_binlog = 1) on ext4 over md RAID10. Every sync
/// is a journal sync: the log's O_SYNC writes (no log fsync), the binary log's fdatasyncs
/// (one per flush group) and the data files' fsyncs after page writes; the page cache
/// holds the tables' pages InnoDB read and the files it wrote.
#[test]
fn experiment_2_stack_runs_with_consistent_syncs() {
    let p = crate::config::test_percona_variant();
    let mut c = crate::config::test_raid_variant();
    c.database = p.database.clone();
    c.workload = p.workload.clone();
    let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
    d.innodb_flush_method = "O_DSYNC".into();
    d.log_bin = Some(true);
    let s = run(&c);
    let (db, j, pc) = (&s["innodb"], &s["journal"], &s["page_cache"]);
    assert!(f(&s, &["tps"]) > 100.0, "{s}");
    assert_eq!(f(db, &["Innodb_os_log_fsyncs"]), 0.0, "{db}");
    let (syncs, log_writes) = (f(j, &["syncs"]), f(db, &["Innodb_log_writes"]));
    let (binlog, data) = (f(db, &["binlog", "fsyncs"]), f(db, &["Innodb_data_fsyncs"]));
    assert!(binlog > 0.0 && f(db, &["Innodb_buffer_pool_pages_flushed"]) > 0.0, "{db}");
    // (The database's Innodb_data_fsyncs may count the binary log's too: bounds that hold
    // either way, one operation of slack at each window edge per thread.)
    assert!(syncs + 16.0 >= log_writes + binlog, "{j} {db}");
    assert!(syncs <= log_writes + binlog + data + 16.0, "{j} {db}");
    assert!(f(pc, &["pgpgin"]) > 0.0 && f(pc, &["nr_dirtied"]) > 0.0, "{pc}");
}

/// The binary log's rotation on ext4 (update-index, InnoDB's data files O_DIRECT, so the
/// page cache holds the redo log and the binary log; 256 KiB of it, so a file's pages are
/// evicted before its slot is taken again four files later). Each rotation creates a
/// new, empty file: its appends read nothing back, so a run rotating every 64 KiB reads
/// no more pages than one that never rotates, but for at most a page per rotation (the
/// old file's first page, for the 1-byte pwrite clearing its in-use flag), and keeps its
/// throughput. (Had the new file kept the old one's size, each of its appends into an
/// evicted page would read that page first: about one read per 4 KiB of events.)
#[test]
fn binary_log_files_after_a_rotation_start_empty_and_their_appends_read_nothing() {
    let run_with = |max_binlog_size: u64| {
        let mut c = crate::config::test_variant();
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.test = crate::config::SysbenchTest::OltpUpdateIndex;
        c.filesystem =
            FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
        c.machine.mem_available_bytes = Some(256 << 10);
        let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
        d.log_bin = Some(true);
        d.max_binlog_size = Some(max_binlog_size);
        c.validate().unwrap();
        run(&c)
    };
    let (one, rotating) = (run_with(1 << 30), run_with(64 << 10));
    let b = &rotating["innodb"]["binlog"];
    let rotations = f(b, &["rotations"]);
    assert_eq!(f(&one, &["innodb", "binlog", "rotations"]), 0.0);
    assert!(rotations > 12.0, "slots taken again: {b}");
    assert!(f(b, &["bytes_written"]) > 4.0 * 64.0 * 1024.0 * 4.0, "{b}");
    // pgpgin is in KiB.
    let pages = |s: &Value| f(s, &["page_cache", "pgpgin"]) / 4.0;
    let (a, r) = (pages(&one), pages(&rotating));
    assert!(r <= a + rotations + 1.0, "{r} pages read rotating against {a}: {}", rotating["page_cache"]);
    let (ta, tr) = (f(&one, &["tps"]), f(&rotating, &["tps"]));
    assert!(tr >= 0.9 * ta, "{tr} tps rotating against {ta}");
}
