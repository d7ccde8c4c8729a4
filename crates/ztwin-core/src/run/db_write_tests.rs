//! InnoDB's writes in the run: the driver's threads, the database's I/O through the
//! filesystem, and the counters (each test names the mechanism it checks).

use super::*;
use crate::config::{test_variant, ExtentFsConfig, InnodbConfig, RunConfig, SysbenchTest};
use crate::sim::time::{MS, SEC};

/// The test variant (ZFS 0.8, 4 tables of 200k rows, a 16 MiB pool, 8 threads) running
/// sysbench test `test`.
fn write_variant(test: SysbenchTest) -> VariantConfig {
    let mut cfg = test_variant();
    let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
    w.test = test;
    cfg
}

fn innodb(cfg: &mut VariantConfig) -> &mut InnodbConfig {
    let Some(DatabaseConfig::Innodb(d)) = &mut cfg.database else { unreachable!() };
    d
}

/// The same on ext4 over the test device, with a volatile write cache whose flush takes
/// `flush` ns.
fn on_ext4(cfg: &mut VariantConfig, flush: Nanos) {
    cfg.filesystem = FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    cfg.devices[0].flush_latency_ns = flush;
}

fn f(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} in {v}"))
}

/// Every commit of an autocommit update waits for its redo to be written and flushed
/// (innodb_flush_log_at_trx_commit = 1): each transaction writes redo, the log is
/// fsynced (ZFS: a zil_commit of the log file), and group commit lets one fsync cover
/// several commits, never more fsyncs than commits.
#[test]
fn a_commit_waits_for_its_log_write_and_flush() {
    let cfg = write_variant(SysbenchTest::OltpUpdateIndex);
    let r = run_variant(&cfg).unwrap();
    let s = &r.summary;
    let tps = f(s, &["tps"]);
    let window = f(s, &["window_s"]);
    let commits = f(s, &["innodb", "commits_with_redo"]);
    let fsyncs = f(s, &["innodb", "Innodb_os_log_fsyncs"]);
    assert!(tps > 100.0, "{tps}");
    assert!(
        (commits / window / tps - 1.0).abs() < 0.05,
        "one commit with redo per transaction: {commits} in {window} s at {tps} tps"
    );
    assert!(fsyncs > 0.0 && fsyncs <= commits, "log fsyncs {fsyncs}, commits {commits}");
    assert!(f(s, &["zil", "zil_commit_count"]) >= fsyncs, "each log fsync is a zil_commit");
    assert!(f(s, &["innodb", "Innodb_os_log_written"]) > 0.0);
    assert_eq!(f(s, &["innodb", "Innodb_rows_updated"]), commits);
}

/// With innodb_flush_log_at_trx_commit = 0 or 2 a commit does not wait for an fsync:
/// on a device whose cache flush takes 5 ms, one thread commits far more often than
/// 200 times a second; with 1 it cannot beat one flush per commit.
#[test]
fn a_synchronous_commit_cannot_beat_one_flush_per_group_commit() {
    let flush = 5 * MS;
    let mut tps = Vec::new();
    for (setting, threads) in [(1u8, 1u32), (1, 8), (2, 1), (0, 1)] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateNonIndex);
        on_ext4(&mut cfg, flush);
        let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
        w.threads = threads;
        innodb(&mut cfg).innodb_flush_log_at_trx_commit = Some(setting);
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let t = f(s, &["tps"]);
        let fsyncs_per_s = f(s, &["innodb", "Innodb_os_log_fsyncs"]) / f(s, &["window_s"]);
        if setting == 1 {
            // Each log fsync is a device flush of 5 ms, one after the other (one writer).
            assert!(fsyncs_per_s <= SEC as f64 / flush as f64 * 1.01, "{fsyncs_per_s} log fsyncs/s");
            if threads == 1 {
                assert!(t <= SEC as f64 / flush as f64 * 1.01, "one thread, one flush per commit: {t} tps");
            }
        } else {
            // The master thread's once-a-second flush.
            assert!(fsyncs_per_s <= 1.5, "{setting}: {fsyncs_per_s} log fsyncs/s");
        }
        tps.push(t);
    }
    assert!(tps[1] > 2.0 * tps[0], "group commit: 8 threads share flushes: {tps:?}");
    assert!(tps[2] > 2.0 * tps[0] && tps[3] > 2.0 * tps[0], "no flush per commit: {tps:?}");
}

/// The page cleaner writes dirty pages through the doublewrite buffer: each batch's
/// copies go to ibdata1 first (Innodb_dblwr_pages_written counts them), and every page
/// flushed is in one; with innodb_doublewrite = 0 none is copied and fewer bytes reach
/// the device.
#[test]
fn pages_are_flushed_through_the_doublewrite_buffer_unless_it_is_off() {
    let mut written = Vec::new();
    for dblwr in [true, false] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        on_ext4(&mut cfg, 0);
        innodb(&mut cfg).innodb_doublewrite = Some(dblwr);
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let flushed = f(s, &["innodb", "Innodb_buffer_pool_pages_flushed"]);
        let dblwr_pages = f(s, &["innodb", "Innodb_dblwr_pages_written"]);
        assert!(flushed > 0.0, "the page cleaner flushed nothing");
        if dblwr {
            assert_eq!(dblwr_pages, flushed, "every flushed page is copied first");
            assert!(f(s, &["innodb", "Innodb_dblwr_writes"]) > 0.0);
        } else {
            assert_eq!(dblwr_pages, 0.0);
        }
        written.push(f(s, &["devices", "disk", "write_mbps"]) / f(s, &["tps"]));
    }
    assert!(written[0] > written[1] * 1.2, "bytes written per transaction, doublewrite on/off: {written:?}");
}

/// The same seed gives the same numbers.
#[test]
fn writes_are_deterministic() {
    let cfg = write_variant(SysbenchTest::OltpReadWrite);
    let a = run_variant(&cfg).unwrap();
    let b = run_variant(&cfg).unwrap();
    assert_eq!(a.summary, b.summary);
}

/// oltp_read_write on ZFS: 18 queries a transaction (10 point selects, 4 ranges, 4
/// writes) plus BEGIN and COMMIT, one commit with redo each, a row updated twice,
/// deleted and inserted once.
#[test]
fn read_write_transactions_change_four_rows() {
    let cfg = write_variant(SysbenchTest::OltpReadWrite);
    let r = run_variant(&cfg).unwrap();
    let s = &r.summary;
    let tps = f(s, &["tps"]);
    assert!((f(s, &["qps"]) / tps - 20.0).abs() < 1e-6, "20 queries per transaction");
    let trx = f(s, &["innodb", "commits_with_redo"]);
    assert!((f(s, &["innodb", "Innodb_rows_updated"]) / trx - 2.0).abs() < 0.01);
    assert!((f(s, &["innodb", "Innodb_rows_deleted"]) / trx - 1.0).abs() < 0.01);
    assert!((f(s, &["innodb", "Innodb_rows_inserted"]) / trx - 1.0).abs() < 0.01);
}

/// MariaDB 10.11's write path on both filesystems: its own redo format and log writer
/// (buffered on ZFS, O_DIRECT on ext4), its page cleaner with neighbours and a
/// checkpoint per pass, threads waiting for frames instead of writing pages themselves.
#[test]
fn mariadb_writes_run_on_zfs_and_ext4() {
    for ext4 in [false, true] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        innodb(&mut cfg).server = crate::config::InnodbServer::Mariadb1011;
        if ext4 {
            on_ext4(&mut cfg, 500_000);
        }
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        println!("{}", serde_json::to_string_pretty(&s["innodb"]).unwrap());
        println!("tps {} devices {}", f(s, &["tps"]), s["devices"]);
        assert!(f(s, &["tps"]) > 50.0, "ext4 {ext4}: {}", f(s, &["tps"]));
        assert!(f(s, &["innodb", "Innodb_buffer_pool_pages_flushed"]) > 0.0);
        assert!(f(s, &["innodb", "page_cleaner_passes"]) > 0.0);
    }
}

/// With the binary log (MySQL 5.7, sync_binlog = 1): every transaction's events are
/// written and fsynced before its commit returns, groups share one fsync, and each
/// flush stage flushes the redo log first; one thread on a device whose flush takes 5 ms
/// pays two flushes per transaction (the group's redo fsync and the binary log's fsync).
#[test]
fn the_binary_log_groups_commits_behind_one_fsync() {
    let flush = 5 * MS;
    let mut tps = Vec::new();
    for threads in [1u32, 16] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        on_ext4(&mut cfg, flush);
        let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
        w.threads = threads;
        innodb(&mut cfg).log_bin = Some(true);
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let b = &s["innodb"]["binlog"];
        let (t, window) = (f(s, &["tps"]), f(s, &["window_s"]));
        let commits = f(b, &["commits"]);
        assert!((commits / window / t - 1.0).abs() < 0.05, "{b}");
        // (A group's stages may straddle the window's edges: one more or less.)
        assert!(f(b, &["fsyncs"]) <= f(b, &["flush_groups"]) + 1.0 && f(b, &["fsyncs"]) > 0.0, "{b}");
        assert!(f(b, &["redo_flushes"]) + 1.0 >= f(b, &["flush_groups"]), "{b}");
        // oltp_update_index: 643 or 644 bytes of events a transaction.
        let per_trx = f(b, &["bytes_written"]) / commits;
        assert!((640.0..650.0).contains(&per_trx), "{per_trx}");
        if threads == 1 {
            assert!(t <= SEC as f64 / (2 * flush) as f64 * 1.02, "two flushes a commit: {t} tps");
        } else {
            assert!(f(b, &["commits"]) > 2.0 * f(b, &["fsyncs"]), "groups share fsyncs: {b}");
        }
        tps.push(t);
    }
    assert!(tps[1] > 3.0 * tps[0], "{tps:?}");
}

/// The commit classes of `waits` (mean ms a transaction): redo, binary log, queue.
fn commit_split(s: &Value) -> [f64; 3] {
    ["commit_redo", "commit_binlog", "commit_queue"].map(|k| f(s, &["waits", "mean_ms", k]))
}

/// With the binary log (sync_binlog = 1) on a device whose cache flush takes 5 ms, every
/// transaction's commit waits through its group's redo log flush and its sync group's
/// binary log fsync, at least a cache flush each, whether it leads the group or follows
/// it (a follower's wait goes to what its leader does): `commit_redo` and `commit_binlog`
/// are each at least a flush per transaction, and with 16 threads sharing each flush and
/// fsync no less than a lone thread's own (were a follower's wait put elsewhere, they
/// would drop by the group's size). One thread never finds another group ahead of it
/// (`commit_queue` 0); 16 do.
#[test]
fn a_binlog_commit_splits_into_redo_binlog_and_queue() {
    let flush = 5 * MS;
    let ms = flush as f64 / MS as f64;
    let split = |threads: u32| {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        on_ext4(&mut cfg, flush);
        let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
        w.threads = threads;
        innodb(&mut cfg).log_bin = Some(true);
        let s = run_variant(&cfg).unwrap().summary;
        let b = &s["innodb"]["binlog"];
        (commit_split(&s), f(b, &["commits"]) / f(b, &["flush_groups"]), s["waits"].clone())
    };
    let ([redo1, binlog1, queue1], _, w1) = split(1);
    assert!(redo1 >= ms && binlog1 >= ms && queue1 == 0.0, "{w1}");
    let ([redo, binlog, queue], group, w) = split(16);
    assert!(group > 2.0, "groups of {group}");
    assert!(redo >= 0.9 * redo1 && binlog >= 0.9 * binlog1, "{w} against one thread's {w1}");
    assert!(queue > 0.1 * ms, "{w}");
}

/// The commit classes follow the settings: without the binary log no time goes to it
/// or to its queues; with sync_binlog = 0 its writes go to the page cache and nothing
/// waits for a flush in `commit_binlog`; with innodb_flush_log_at_trx_commit = 0 the
/// flush stage asks nothing of the redo log, and no time goes to `commit_redo`.
#[test]
fn the_commit_classes_follow_log_bin_sync_binlog_and_flush_log_at_trx_commit() {
    let flush = 5 * MS;
    let ms = flush as f64 / MS as f64;
    let run = |log_bin: bool, sync_binlog: Option<u32>, flush_log: u8| {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        on_ext4(&mut cfg, flush);
        let d = innodb(&mut cfg);
        d.log_bin = Some(log_bin);
        d.sync_binlog = sync_binlog;
        d.innodb_flush_log_at_trx_commit = Some(flush_log);
        let s = run_variant(&cfg).unwrap().summary;
        (commit_split(&s), s["waits"].clone())
    };
    let ([redo, binlog, queue], w) = run(false, None, 1);
    assert!(redo >= 0.95 * ms && binlog == 0.0 && queue == 0.0, "no binary log: {w}");
    let ([redo, binlog, _], w) = run(true, Some(0), 1);
    assert!(redo >= 0.95 * ms && binlog < 0.1 * ms, "sync_binlog = 0: {w}");
    let ([redo, binlog, _], w) = run(true, None, 0);
    assert!(redo == 0.0 && binlog >= 0.95 * ms, "innodb_flush_log_at_trx_commit = 0: {w}");
}

/// The binary log's writes and fsyncs are the server's, not InnoDB's: with
/// O_DIRECT_NO_FSYNC (no data file is ever fsynced) Innodb_data_fsyncs is the redo log's
/// fsyncs alone however many the binary log makes, and Innodb_data_written holds no
/// binary log byte.
#[test]
fn the_binary_log_is_not_counted_as_innodb_io() {
    let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
    let d = innodb(&mut cfg);
    d.log_bin = Some(true);
    d.innodb_flush_method = "O_DIRECT_NO_FSYNC".into();
    let r = run_variant(&cfg).unwrap();
    let s = &r.summary["innodb"];
    let b = &s["binlog"];
    assert!(f(b, &["fsyncs"]) > 0.0 && f(b, &["bytes_written"]) > 0.0, "{b}");
    // (One log fsync may be counted as issued, not yet as done, when the window ends.)
    assert!((f(s, &["Innodb_data_fsyncs"]) - f(s, &["Innodb_os_log_fsyncs"])).abs() <= 1.0, "{s}");
    // The redo log, the pages, and their doublewrite copies.
    let pages = f(s, &["Innodb_buffer_pool_pages_flushed"]) + f(s, &["Innodb_dblwr_pages_written"]);
    let innodb_bytes = f(s, &["Innodb_os_log_written"]) + 16384.0 * pages;
    assert!(f(s, &["Innodb_data_written"]) <= innodb_bytes * 1.01 + 65536.0, "{s}");
}

/// ext4's journal under the database's syncs: MySQL 5.7 fsyncs its files after O_DIRECT
/// writes that changed their timestamps, so its syncs commit jbd2 transactions (a
/// journal write between two cache flushes on a device without FUA); MariaDB 10.11
/// fdatasyncs them, which needs no commit after an overwrite: one cache flush each.
#[test]
fn mysql_fsyncs_commit_the_journal_and_mariadb_fdatasyncs_flush() {
    for server in [crate::config::InnodbServer::Mysql57, crate::config::InnodbServer::Mariadb1011] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        on_ext4(&mut cfg, MS);
        innodb(&mut cfg).server = server;
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let j = &s["journal"];
        let syncs = f(j, &["syncs"]);
        assert!(syncs > 0.0, "{j}");
        if server == crate::config::InnodbServer::Mysql57 {
            assert!(f(j, &["sync_waits"]) > 0.2 * syncs, "fsyncs wait for commits: {j}");
            assert!(f(j, &["commits"]) > 0.0 && f(j, &["log_bytes"]) > 0.0, "{j}");
        } else {
            assert_eq!(f(j, &["sync_waits"]), 0.0, "fdatasync after an overwrite commits nothing: {j}");
            assert!(f(j, &["sync_flushes"]) >= 0.99 * syncs, "{j}");
        }
    }
}

/// Percona Server 5.7's write path on both filesystems (MySQL 5.7's redo log and pages, its
/// own flushing): the LRU manager thread frees frames on its timer, the page cleaner does
/// flush-list flushing only, and a pool short of frames makes the threads back off
/// (Innodb_buffer_pool_wait_free counts their rounds) rather than write pages themselves.
#[test]
fn percona_writes_run_on_zfs_and_ext4() {
    for ext4 in [false, true] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        let d = innodb(&mut cfg);
        d.server = crate::config::InnodbServer::Percona57;
        // Backoff needs 5 x BUF_LRU_MIN_LEN pages an instance (else legacy is forced); a
        // batch frees at most innodb_lru_scan_depth frames, fewer than the reads take
        // while its dirty pages are written.
        d.innodb_buffer_pool_size = 32 << 20;
        d.innodb_lru_scan_depth = 128;
        if ext4 {
            on_ext4(&mut cfg, 500_000);
        }
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        println!("{}", serde_json::to_string_pretty(&s["innodb"]).unwrap());
        println!("tps {} devices {}", f(s, &["tps"]), s["devices"]);
        assert!(f(s, &["tps"]) > 50.0, "ext4 {ext4}: {}", f(s, &["tps"]));
        assert!(f(s, &["innodb", "Innodb_buffer_pool_pages_flushed"]) > 0.0);
        assert!(f(s, &["innodb", "page_cleaner_passes"]) > 0.0);
        assert!(f(s, &["innodb", "lru_manager", "loops"]) > 0.0);
        assert!(f(s, &["innodb", "innodb_metrics", "buffer_LRU_batch_flush_total_pages"]) > 0.0);
        assert!(f(s, &["innodb", "Innodb_buffer_pool_wait_free"]) > 0.0, "the pool is short of frames");
        assert_eq!(f(s, &["innodb", "Innodb_buffer_pool_pages_LRU_flushed"]), 0.0);
        assert!(s["innodb"]["Innodb_checkpoint_age"].is_u64());
    }
}

/// Percona Server's edges complete: a pool too small for backoff (legacy forced: threads
/// write pages themselves), legacy chosen, the smallest pool and scan depth, doublewrite on
/// with fsync, a redo log small enough that threads wait for sync flushes, ext4.
#[test]
fn percona_edges_complete() {
    for case in 0..6 {
        let mut cfg = write_variant(SysbenchTest::OltpReadWrite);
        cfg.run = RunConfig { warmup_ns: SEC, duration_ns: 2 * SEC, report_interval_ns: SEC };
        let d = innodb(&mut cfg);
        d.server = crate::config::InnodbServer::Percona57;
        match case {
            0 => {}
            1 => d.innodb_empty_free_list_algorithm = Some("legacy".into()),
            2 => {
                d.innodb_buffer_pool_size = 5 << 20;
                d.innodb_lru_scan_depth = 100;
            }
            3 => {
                d.innodb_buffer_pool_size = 24 << 20;
                d.innodb_doublewrite = Some(true);
                d.innodb_flush_method = "fsync".into();
            }
            4 => {
                // The whole dataset in the pool: no LRU flushing, the redo age grows.
                d.innodb_buffer_pool_size = 256 << 20;
                d.innodb_log_file_size = Some(4 << 20);
                d.innodb_cleaner_lsn_age_factor = Some("legacy".into());
                let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
                w.test = SysbenchTest::OltpUpdateIndex;
                cfg.run = RunConfig { warmup_ns: 4 * SEC, duration_ns: 8 * SEC, report_interval_ns: SEC };
            }
            _ => {
                d.innodb_buffer_pool_size = 32 << 20;
                d.innodb_lru_scan_depth = 100;
                on_ext4(&mut cfg, 2 * MS);
            }
        }
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        println!("case {case}: tps {} {}", f(s, &["tps"]), s["innodb"]);
        assert!(f(s, &["tps"]) > 10.0, "case {case}: {}", s["innodb"]);
        if case == 4 {
            assert!(f(s, &["innodb", "checkpoint_age_waits"]) > 0.0, "{}", s["innodb"]);
            assert!(f(s, &["innodb", "innodb_metrics", "buffer_flush_sync_total_pages"]) > 0.0);
        }
    }
}

/// Purge follows the commits (`innodb::purge`): in an oltp_update_index run each k
/// update's delete-marked k_1 entry is purged (the window's purge records within 5% of
/// its rows updated, MariaDB's within a second's, one undo page per commit's log), and
/// the history list stays short:
/// MySQL 5.7's coordinator, woken by every commit, truncates every 128th batch; MariaDB
/// 10.11's, woken once a second, truncates after every batch.
#[test]
fn purge_keeps_up_with_index_updates() {
    for server in [crate::config::InnodbServer::Mysql57, crate::config::InnodbServer::Mariadb1011] {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        innodb(&mut cfg).server = server;
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let updated = f(s, &["innodb", "Innodb_rows_updated"]);
        let purged = f(s, &["innodb", "purge", "purge_upd_exist_or_extern_records"]);
        // MariaDB purges in a burst each second: the window's ends cut a second's worth.
        let tps = f(s, &["tps"]);
        let slack = if server == crate::config::InnodbServer::Mysql57 { 0.05 * updated } else { 1.1 * tps };
        assert!(
            (purged - updated).abs() <= slack,
            "{server:?}: {purged} purged, {updated} updated: {}",
            s["innodb"]
        );
        let pages = f(s, &["innodb", "purge", "purge_undo_log_pages"]);
        let commits = f(s, &["innodb", "commits_with_redo"]);
        assert!((pages - commits).abs() <= slack, "{server:?}: {pages} undo pages, {commits} commits");
        let history = f(s, &["innodb", "history_list_length"]);
        assert!(history <= 2.0 * f(s, &["tps"]), "{server:?}: history {history}");
        assert_eq!(f(s, &["innodb", "purge", "purge_del_mark_records"]), 0.0);
    }
}

/// oltp_delete: each delete's k_1 entry and clustered record are purged. With
/// innodb_change_buffering = none every purge finds its leaf in the pool or reads it;
/// with all, the delete-marks of leaves not in the pool are buffered and some purges
/// too (those over two buffered records).
#[test]
fn purge_removes_deleted_rows_and_buffers_some_deletes() {
    let mut buffered = Vec::new();
    for buffering in ["none", "all"] {
        let mut cfg = write_variant(SysbenchTest::OltpDelete);
        innodb(&mut cfg).innodb_change_buffering = Some(buffering.into());
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let deleted = f(s, &["innodb", "Innodb_rows_deleted"]);
        let purged = f(s, &["innodb", "purge", "purge_del_mark_records"]);
        assert!(deleted > 0.0 && (purged / deleted - 1.0).abs() < 0.05, "{buffering}: {purged} of {deleted}");
        buffered.push(f(s, &["innodb", "purge", "purge_ibuf_deletes"]));
    }
    assert_eq!(buffered[0], 0.0);
    assert!(buffered[1] > 0.0, "{buffered:?}");
}

/// The run of `cfg` without the config's checks (a state they refuse, built to show what
/// the driver does with it).
fn run_unchecked(cfg: &VariantConfig) -> Result<VariantResult> {
    Sim::new(cfg)?.run(None)
}

/// A run stuck at one instant ends with an error naming what its threads wait for, not a
/// hang (`stall`). The fuzzer's case: MariaDB 10.11 with innodb_lru_scan_depth = 1 (below
/// the servers' minimum of 100: the config's check refuses it, so the run is built without
/// it here). `need_LRU_eviction` asks `free < 1 / 2`, never true: a thread short of a frame
/// wakes the page cleaner, whose pass is idle and frees nothing, and wakes the thread,
/// which finds no frame and wakes the cleaner again, all at one instant.
#[test]
fn a_run_stuck_at_one_instant_ends_with_an_error_naming_the_buffer_pool() {
    let mut cfg = crate::config::test_write_variant(true);
    innodb(&mut cfg).innodb_lru_scan_depth = 1;
    let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
    w.rand_spec_pct = 3.0;
    cfg.run = RunConfig { warmup_ns: SEC / 2, duration_ns: SEC, report_interval_ns: SEC };
    match cfg.validate() {
        Err(Error::Config { field, .. }) => assert_eq!(field, "database.innodb_lru_scan_depth"),
        other => panic!("the config's check refuses it: {other:?}"),
    }
    match run_unchecked(&cfg) {
        Err(Error::Simulation { component, message, time_ns }) => {
            println!("{component} at {time_ns}: {message}");
            assert_eq!(component, "database.buffer_pool", "{message}");
            assert!(message.contains("clock stood still"), "{message}");
            assert!(message.contains("for a free frame"), "{message}");
            assert!(message.contains("of 1014 frames free"), "{message}");
            assert!(time_ns < 2 * SEC, "{time_ns}");
        }
        other => panic!("expected the stall's error, got {:?}", other.map(|r| r.summary)),
    }
}

/// Threads that poll for what never comes end the run with an error once a minute of
/// simulated time and 2^20 events pass without a request completing or a device I/O
/// (`stall`): Percona Server's backoff (10 ms sleeps) with its LRU manager gone (its slot
/// parked before the workload starts it, so no frame is ever freed).
#[test]
fn threads_backing_off_for_ever_end_the_run_with_an_error() {
    let mut cfg = crate::config::test_percona_variant();
    cfg.run = RunConfig { warmup_ns: SEC / 2, duration_ns: SEC, report_interval_ns: SEC };
    cfg.validate().unwrap();
    let mut sim = Sim::new(&cfg).unwrap();
    let lru = crate::db::innodb::writes::lru_manager_actor(sim.nusers);
    sim.clients[lru].state = State::Blocked;
    match sim.run(None) {
        Err(Error::Simulation { component, message, time_ns }) => {
            println!("{component} at {time_ns}: {message}");
            assert_eq!(component, "database.buffer_pool", "{message}");
            assert!(message.contains("no request completed and no device I/O"), "{message}");
            assert!(message.contains("8 retrying for a free frame"), "{message}");
            assert!(message.contains("has 0 of"), "{message}");
            assert!(time_ns > 60 * SEC, "{time_ns}");
        }
        other => panic!("expected the stall's error, got {:?}", other.map(|r| r.summary)),
    }
}

/// Where a transaction's time goes (`waits`): its classes sum to its latency, so the mean
/// split sums to the mean latency (which the histogram keeps to 3 significant digits);
/// a read-only run waits for no commit, an update-index
/// run for its commits (flush_log_at_trx_commit = 1), and the slowest transactions' split
/// sums to a latency at least their band's floor.
#[test]
fn classes_sum_to_latency() {
    for (test, commits) in [(SysbenchTest::OltpReadOnly, false), (SysbenchTest::OltpUpdateIndex, true)] {
        let cfg = write_variant(test);
        let r = run_variant(&cfg).unwrap();
        let s = &r.summary;
        let w = &s["waits"];
        let sum = |m: &Value| m.as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum::<f64>();
        let mean = f(s, &["latency_ms", "mean"]);
        assert!((sum(&w["mean_ms"]) - mean).abs() <= 2e-3 * mean, "{test:?}: {w} against {mean}");
        assert!(f(w, &["mean_ms", "cpu"]) > 0.0, "{test:?}: {w}");
        let commit = ["commit_redo", "commit_binlog", "commit_queue"].map(|k| f(w, &["mean_ms", k]));
        assert_eq!(commit[0] > 0.0, commits, "{test:?}: {w}");
        // No binary log in the test variant: no group commit to queue for.
        assert_eq!(commit[1] + commit[2], 0.0, "{test:?}: {w}");
        let slow = &w["slowest"];
        assert!(f(slow, &["transactions"]) >= 1.0 && f(slow, &["share"]) >= 0.05, "{test:?}: {slow}");
        assert!(sum(&slow["mean_ms"]) >= f(slow, &["from_ms"]), "{test:?}: {slow}");
        assert!(sum(&slow["mean_ms"]) >= mean, "{test:?}: {slow}");
    }
}

/// A device whose cache flush never answers (a latency the config's check refuses, past
/// the end of any run): the drain abandons what waits on it at `MAX_SIMULATED_NS` rather
/// than dispatch the L2ARC feed's once-a-second wake-ups toward the end of time (a
/// mutant of the fuzz harness hung so).
#[test]
fn a_drain_behind_a_flush_that_never_answers_ends() {
    let mut cfg = crate::config::test_write_variant(false);
    let mut l2 = cfg.devices[0].clone();
    l2.name = "l2".into();
    l2.capacity_bytes = Some(1 << 30);
    cfg.devices.push(l2);
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!("a ZFS write variant") };
    z.cache = vec!["l2".into()];
    cfg.devices[0].flush_latency_ns = u64::MAX;
    assert!(cfg.validate().is_err(), "the config's check refuses it");
    cfg.run.warmup_ns = 0;
    cfg.run.duration_ns = SEC;
    let r = Sim::new(&cfg).unwrap().run(None).unwrap();
    assert!(f(&r.summary, &["window_s"]) > 0.0);
}

/// ZFS under the binary log (primarycache=metadata): a write covering part of a record
/// reads the record first when it holds data not in memory (`dbuf_will_dirty` ->
/// `dbuf_read`), but a hole is zero-filled with nothing read (`dbuf_read_impl`). A binary
/// log file starts as holes, so its appends complete at once; a rotation's new file in an
/// older one's slot (`Zfs::new_file`) is holes again, its old records' buffers gone.
#[test]
fn a_zfs_write_into_a_hole_reads_nothing_and_a_new_file_is_holes_again() {
    use crate::config::CacheProperty;
    use crate::fs::zfs::content::{CLASS_HOLE, CLASS_MEAN_RATIO};
    use crate::fs::zfs::layer::Zfs;
    use crate::fs::zfs::write_path::WriteStep;
    let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
    innodb(&mut cfg).log_bin = Some(true);
    let FsConfig::Zfs(zc) = &mut cfg.filesystem else { unreachable!("the test variant is on ZFS") };
    zc.primarycache = CacheProperty::Metadata;
    let mut sim = Sim::new(&cfg).unwrap();
    let obj = sim.db.as_ref().and_then(|d| d.writes()).unwrap().files().binlog(1) + 1;
    let Sim { fs: Fs::Zfs(z), devices, .. } = &mut sim else { unreachable!() };
    let rs = u64::from(z.layout.geometry(obj).data_block_size());
    // One write call by writer `slot` at time 0: Done at once, or waiting for its read.
    let mut write = |z: &mut Zfs, slot: usize, off: u64, len: u32| {
        let mut w = z.start_write(obj, off, len, CLASS_MEAN_RATIO, false, false, 0);
        let mut cpu = 0;
        z.write(slot, &mut w, 0, &mut cpu, devices)
    };
    assert_eq!(z.layout.uniform_class(obj), Some(CLASS_HOLE), "a binary log file starts empty");
    let misses = z.arc.stats().demand_data_misses;
    // Appends into part of records 0 and 3, never written: nothing read.
    assert_eq!(write(z, 0, 100, 500), WriteStep::Done);
    assert_eq!(write(z, 0, 3 * rs + 4096, 512), WriteStep::Done);
    assert_eq!(z.arc.stats().demand_data_misses, misses);
    // A file whose records hold data (what the twin took a reused slot to be): a record
    // not in memory is read before a partial write.
    z.layout.set_records(obj, 0, 9, CLASS_MEAN_RATIO);
    assert_ne!(write(z, 1, 7 * rs + 100, 100), WriteStep::Done, "a data record is read first");
    assert_eq!(z.arc.stats().demand_data_misses, misses + 1);
    // A new file in its place: holes again, the written records' buffers gone.
    z.new_file(obj);
    assert_eq!(z.layout.uniform_class(obj), Some(CLASS_HOLE));
    assert!(!z.arc.contains(z.layout.key(obj, 0, 0)) && !z.arc.contains(z.layout.key(obj, 3, 0)));
    assert_eq!(write(z, 2, 8 * rs + 100, 100), WriteStep::Done, "record 8 held data: now a hole");
    assert_eq!(z.arc.stats().demand_data_misses, misses + 1);
}

/// Each dataset has its own intent log (`zil_alloc` per objset; `zfs_fsync` commits
/// `zfsvfs->z_log`): with the database's logs in a dataset of their own
/// (`log_recordsize`), an fsync of a table commits the tables' log and a synchronous write
/// of the redo log the logs' log, each with its own records; with one dataset both go to
/// the one log. The kstat sums the logs.
#[test]
fn the_database_logs_dataset_has_its_own_intent_log() {
    use crate::fs::zfs::content::CLASS_MEAN_RATIO;
    use crate::fs::zfs::write_path::{CommitStep, WriteStep};
    let per_dataset = |own: bool| {
        let mut cfg = write_variant(SysbenchTest::OltpUpdateIndex);
        let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
        z.log_recordsize = own.then_some(131072);
        let mut sim = Sim::new(&cfg).unwrap();
        let files = sim.db.as_ref().and_then(|d| d.writes()).unwrap().files();
        let (table, redo) = (1, files.log(0) + 1);
        let Sim { fs: Fs::Zfs(z), devices, .. } = &mut sim else { unreachable!() };
        let mut cpu = 0;
        // A table's record written through the page cache, then fsynced; a redo log record
        // written O_DSYNC (its write commits). Whole records: nothing is read first.
        for (slot, object, o_sync) in [(0, table, false), (1, redo, true)] {
            let rs = z.layout.geometry(object).data_block_size();
            let mut w = z.start_write(object, 0, rs, CLASS_MEAN_RATIO, o_sync, false, 0);
            assert_eq!(z.write(slot, &mut w, 0, &mut cpu, devices), WriteStep::Done);
            assert_ne!(z.commit(slot, object, 0, &mut cpu, devices), CommitStep::Done, "waits for its block");
        }
        let (by, sum) = (z.zil_stats_by_dataset(), z.zil_stats().unwrap());
        (by.iter().map(|s| (s.zil_commit_count, s.zil_itx_count)).collect::<Vec<_>>(), sum.zil_commit_count)
    };
    assert_eq!(per_dataset(false), (vec![(2, 2)], 2), "one log takes both commits and both records");
    assert_eq!(per_dataset(true), (vec![(1, 1), (1, 1)], 2), "each log its own; the kstat sums them");
}
