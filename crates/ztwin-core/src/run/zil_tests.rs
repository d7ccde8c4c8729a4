//! The intent log through the driver: fio's synchronous writes and fsyncs on ZFS.

use proptest::prelude::*;

use super::*;
use crate::config::{test_fio_variant, FioJob, FioPhase, FioRw, FioSync, Logbias, SyncProperty, ZfsRelease};
use crate::sim::time::{MS, US};

fn run(cfg: &VariantConfig) -> Value {
    run_variant(cfg).expect("runs").summary
}

fn job(c: &mut VariantConfig, k: usize) -> &mut FioJob {
    let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
    &mut w.jobs[k]
}

fn zfs(c: &mut VariantConfig) -> &mut crate::config::ZfsConfig {
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z
}

/// One pool disk "disk" (no throttle, constant service `write` per write, `flush` per
/// flush, one request at a time), recordsize 16K, and the "write" job (index 2) writing
/// `n` random 16K blocks with `sync`, one at a time; release `release`.
fn sync_writer(
    release: ZfsRelease,
    patch: u16,
    n: u64,
    sync: FioSync,
    write: Nanos,
    flush: Nanos,
) -> VariantConfig {
    let mut c = test_fio_variant();
    let d = &mut c.devices[0];
    d.iops_limit = None;
    d.latency_sigma = 0.0;
    d.write_latency_ns = write;
    d.read_latency_ns = write;
    d.parallelism = 1;
    d.flush_latency_ns = flush;
    let z = zfs(&mut c);
    z.release = release;
    z.release_patch = patch;
    z.recordsize = 16384;
    let j = job(&mut c, 2);
    j.rw = FioRw::Randwrite;
    j.bs_read = 16384;
    j.bs_write = 16384;
    j.io_size = n * 16384;
    j.sync = sync;
    c.phases = vec![PhaseConfig::Fio(FioPhase { name: "write".into(), jobs: vec![2] })];
    c
}

pub(super) fn with_slog(c: &mut VariantConfig, write: Nanos, flush: Nanos) {
    let mut slog = c.devices[0].clone();
    slog.name = "slog".into();
    slog.write_latency_ns = write;
    slog.flush_latency_ns = flush;
    slog.parallelism = 8;
    slog.rotational = None;
    c.devices.push(slog);
    zfs(c).log = vec!["slog".into()];
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Writes of a phase on `dev` (iops times the phase's length).
fn writes_on(phase: &Value, dev: &str) -> f64 {
    f(&phase["devices"][dev]["write_iops"]) * (f(&phase["end_s"]) - f(&phase["start_s"]))
}

/// First principles: a synchronous writer (O_SYNC, one I/O at a time) cannot beat one
/// device write plus one flush per write, on every release; each write is one commit,
/// one log record, one flush. 2.2.4+ (single-thread detection) writes the block at once;
/// 0.8 waits zfs_commit_timeout_pct of the last latency on every commit.
#[test]
fn a_synchronous_writer_pays_a_write_and_a_flush_per_write() {
    let (w, fl) = (2 * MS, MS);
    for (r, p) in
        [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 11), (ZfsRelease::V2_2, 2), (ZfsRelease::V2_2, 11)]
    {
        for sync in [FioSync::Sync, FioSync::Dsync] {
            let s = run(&sync_writer(r, p, 200, sync, w, fl));
            let ph = &s["phases"][0];
            let fio = &ph["fio"]["write"];
            assert_eq!(fio["ios"], 200);
            let floor = (w + fl) as f64 / 1e6;
            assert!(f(&fio["clat_ms"]["p50"]) >= floor, "{r:?}.{p}: {fio}");
            assert!(f(&fio["iops"]) <= 1e9 / (w + fl) as f64, "{r:?}.{p}: {fio}");
            assert!(f(&fio["clat_ms"]["p50"]) < floor * 1.1, "{r:?}.{p}: no more than a commit wait: {fio}");
            let zil = &ph["zil"];
            assert_eq!(zil["zil_commit_count"], 200);
            assert_eq!(zil["zil_itx_count"], 200);
            assert_eq!(zil["flushes"], 200, "one flush per commit (the waiter's block)");
            let flushes =
                f(&ph["devices"]["disk"]["flushes_per_sec"]) * (f(&ph["end_s"]) - f(&ph["start_s"]));
            assert_eq!(flushes.round(), 200.0);
            let timeouts = zil["commit_timeouts"].as_u64().unwrap();
            match (r, p) {
                (ZfsRelease::V2_2, 11) => assert_eq!(timeouts, 0, "single-threaded: issued at once"),
                _ => assert!(timeouts >= 199, "{r:?}.{p}: a lone writer waits out every commit: {zil}"),
            }
            // 16K O_SYNC writes: copied into the record in 0.8 and 2.1 (under 64K), need-copy
            // from 2.2.0 (zil_maxcopied 7680).
            let copied = if r == ZfsRelease::V2_2 { 0 } else { 200 };
            assert_eq!(zil["zil_itx_copied_count"], copied, "{r:?}");
            assert_eq!(zil["zil_itx_needcopy_count"], 200 - copied, "{r:?}");
        }
    }
}

/// With logbias=throughput every sync write goes WR_INDIRECT: dmu_sync writes the whole
/// record to the pool before the commit returns (with a fast SLOG the commit still pays
/// the pool disk), and the txg that syncs the records writes no data for them.
#[test]
fn logbias_throughput_writes_the_data_to_the_pool_before_the_commit_returns() {
    let (disk, slog) = (3 * MS, 100 * US);
    let mut lat = sync_writer(ZfsRelease::V2_2, 11, 100, FioSync::Sync, disk, 0);
    with_slog(&mut lat, slog, 0);
    let mut thr = lat.clone();
    zfs(&mut thr).logbias = Logbias::Throughput;
    for c in [&mut lat, &mut thr] {
        // A reboot after the phase syncs the txg (the export).
        c.phases.push(PhaseConfig::Restart(crate::config::RestartPhase {
            name: "reboot".into(),
            vm_moved: false,
            recreate_cache: false,
        }));
    }
    let (l, t) = (run(&lat), run(&thr));
    let (lz, tz) = (&l["phases"][0]["zil"], &t["phases"][0]["zil"]);
    assert_eq!(lz["zil_itx_indirect_count"], 0);
    assert_eq!(tz["zil_itx_indirect_count"], 100);
    assert_eq!(tz["zil_itx_indirect_bytes"], 100 * 16384);
    assert_eq!(tz["dmu_sync_writes"], 100);
    let (lf, tf) = (&l["phases"][0]["fio"]["write"], &t["phases"][0]["fio"]["write"]);
    assert!(f(&tf["clat_ms"]["p50"]) >= disk as f64 / 1e6, "the data write is waited for: {tf}");
    assert!(f(&lf["clat_ms"]["p50"]) < disk as f64 / 1e6, "latency: the SLOG alone: {lf}");
    // The pool saw the data during the phase (dmu_sync) with throughput, nothing with latency.
    assert_eq!(writes_on(&t["phases"][0], "disk").round(), 100.0);
    assert_eq!(writes_on(&l["phases"][0], "disk"), 0.0);
    // The txg at the export: the records' data was written by dmu_sync already.
    let (lw, tw) = (&l["phases"][1]["zfs_write"]["txgs"][0], &t["phases"][1]["zfs_write"]["txgs"][0]);
    assert_eq!(tw["overridden_records"], 100);
    assert_eq!(tw["data_bytes"], 0);
    assert_eq!(lw["overridden_records"], 0);
    assert!(lw["data_bytes"].as_u64().unwrap() >= 100 * 16384);
}

/// A SLOG takes the log's writes off the pool: no write reaches the pool disk before the
/// txg syncs, the blocks count as the slog class, and the flushes go to the SLOG.
#[test]
fn a_slog_takes_the_log_writes_off_the_pool() {
    for (r, p) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_2, 11)] {
        let mut c = sync_writer(r, p, 100, FioSync::Sync, 3 * MS, MS);
        with_slog(&mut c, 50 * US, 0);
        let s = run(&c);
        let ph = &s["phases"][0];
        assert!(f(&ph["end_s"]) < 5.0, "before the first txg sync");
        assert_eq!(writes_on(ph, "disk"), 0.0, "{r:?}: {}", ph["devices"]);
        assert_eq!(f(&ph["devices"]["disk"]["flushes_per_sec"]), 0.0);
        assert!(writes_on(ph, "slog") >= 100.0);
        let zil = &ph["zil"];
        assert_eq!(zil["zil_itx_metaslab_normal_count"], 0, "{r:?}: {zil}");
        assert!(zil["zil_itx_metaslab_slog_count"].as_u64().unwrap() >= 100);
        assert!(zil["zil_itx_metaslab_slog_bytes"].as_u64().unwrap() >= 100 * 16384);
        assert!(f(&ph["fio"]["write"]["clat_ms"]["p50"]) < 1.0, "{r:?}: the SLOG's latency");
    }
}

/// sync=disabled makes fsync free (no commit, no write, no flush); sync=always makes a
/// plain write wait for its commit (a need-copy record, the plain write being no O_SYNC).
#[test]
fn sync_disabled_makes_fsync_free_and_sync_always_makes_writes_wait() {
    let (w, fl) = (2 * MS, MS);
    let mut fsync = sync_writer(ZfsRelease::V2_2, 11, 100, FioSync::None, w, fl);
    job(&mut fsync, 2).fsync = 1;
    let standard = run(&fsync);
    zfs(&mut fsync).sync = SyncProperty::Disabled;
    let disabled = run(&fsync);
    let (sp, dp) = (&standard["phases"][0], &disabled["phases"][0]);
    // fsync=1: after each write but the last (the 100th ends the job).
    assert_eq!(sp["fio"]["sync"]["ios"], 99);
    assert_eq!(dp["fio"]["sync"]["ios"], 99);
    assert!(f(&sp["fio"]["sync"]["lat_ms"]["p50"]) >= (w + fl) as f64 / 1e6);
    assert!(f(&dp["fio"]["sync"]["lat_ms"]["max"]) < 0.1, "{}", dp["fio"]);
    assert_eq!(dp["zil"]["zil_commit_count"], 0);
    assert_eq!(dp["zil"]["flushes"], 0);
    assert_eq!(writes_on(dp, "disk"), 0.0);

    let mut always = sync_writer(ZfsRelease::V2_2, 11, 100, FioSync::None, w, fl);
    let plain = run(&always);
    assert!(plain["phases"][0].get("zil").is_none(), "no sync in the variant: no log");
    zfs(&mut always).sync = SyncProperty::Always;
    let s = run(&always);
    let ph = &s["phases"][0];
    assert!(f(&ph["fio"]["write"]["clat_ms"]["p50"]) >= (w + fl) as f64 / 1e6, "{}", ph["fio"]);
    assert!(f(&plain["phases"][0]["fio"]["write"]["clat_ms"]["p50"]) < 0.1);
    assert_eq!(ph["zil"]["zil_commit_count"], 100);
    assert_eq!(ph["zil"]["zil_itx_needcopy_count"], 100);
}

/// fio fsync=N: one commit per N writes, each an I/O in fio's "sync" figures; the N writes
/// before it are async itxs of the file that its commit logs together.
#[test]
fn fsync_every_n_writes_is_one_commit_per_n() {
    let mut c = sync_writer(ZfsRelease::V2_2, 11, 800, FioSync::None, 500 * US, 200 * US);
    job(&mut c, 2).fsync = 8;
    let s = run(&c);
    let ph = &s["phases"][0];
    assert_eq!(ph["fio"]["write"]["ios"], 800);
    assert_eq!(ph["fio"]["sync"]["ios"], 99, "after writes 8, 16, ..., 792 (the 800th ends the job)");
    assert_eq!(ph["zil"]["zil_commit_count"], 99);
    // Each commit logs its 8 records (128K of need-copy data: more than a block holds, so
    // a record is split across two blocks now and then).
    assert_eq!(ph["zil"]["zil_itx_needcopy_bytes"], 8 * 99 * 16384);
    assert!(ph["zil"]["zil_itx_count"].as_u64().unwrap() >= 8 * 99);
    // The writes themselves do not wait for the disk.
    assert!(f(&ph["fio"]["write"]["clat_ms"]["p99"]) < 0.5, "{}", ph["fio"]);
}

/// end_fsync: the job's writes are async, then one fsync commits every record the txgs
/// have not synced yet; it counts in the job's runtime, not as a sync I/O.
#[test]
fn end_fsync_commits_what_the_job_left_and_counts_in_its_runtime() {
    let mut c = sync_writer(ZfsRelease::V0_8, 0, 256, FioSync::None, 2 * MS, MS);
    let plain = run(&c);
    job(&mut c, 2).end_fsync = true;
    let s = run(&c);
    let ph = &s["phases"][0];
    assert!(ph["fio"].get("sync").is_none());
    assert_eq!(ph["zil"]["zil_commit_count"], 1);
    assert_eq!(ph["zil"]["zil_itx_needcopy_count"], 256, "16K records, no SLOG: under 32K, need-copy");
    let (rt, rt0) = (f(&ph["fio"]["runtime_s"]), f(&plain["phases"][0]["fio"]["runtime_s"]));
    assert!(rt >= rt0 + 0.003, "the fsync's log writes and flush are in the runtime: {rt} vs {rt0}");
    // 4 MiB of records in 128K log blocks: about 33 blocks, one flush (the last block's).
    assert_eq!(ph["zil"]["flushes"], 1);
}

/// Parallel writers share log blocks (group commit): with 8 O_SYNC writers a block takes
/// the records of all 8 and one flush serves them all; a SLOG serves them at its own
/// latency.
#[test]
fn parallel_sync_writers_share_blocks_and_flushes() {
    for (r, p) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_2, 2), (ZfsRelease::V2_2, 11)] {
        for slog in [false, true] {
            let mut c = sync_writer(r, p, 100, FioSync::Sync, 2 * MS, MS);
            c.devices[0].parallelism = 8;
            if slog {
                with_slog(&mut c, 100 * US, 0);
            }
            let j = job(&mut c, 2);
            j.numjobs = 8;
            j.clone_files = vec![vec![0]; 8];
            let s = run(&c);
            let ph = &s["phases"][0];
            assert_eq!(ph["fio"]["write"]["ios"], 800);
            let zil = &ph["zil"];
            assert_eq!(zil["zil_commit_count"], 800);
            assert!(zil["flushes"].as_u64().unwrap() <= 800 / 4, "{r:?}.{p}: {zil}");
            let p50 = f(&ph["fio"]["write"]["clat_ms"]["p50"]);
            if slog {
                assert!(p50 < 0.5, "{r:?}.{p}: {p50}");
            } else {
                assert!((3.0..3.5).contains(&p50), "{r:?}.{p}: {p50}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the release, pool, SLOG, properties and job, a run with synchronous writes
    /// ends, every commit returns, and the counters agree with fio's.
    #[test]
    fn every_commit_returns(
        release in 0..5usize,
        mirror in any::<bool>(),
        rotational in any::<bool>(),
        slog in 0..3usize,
        logbias in any::<bool>(),
        sync_prop in 0..3usize,
        numjobs in 1..5u32,
        uring in any::<bool>(),
        fsync in 0..4u32,
        o_sync in 0..3usize,
        end_fsync in any::<bool>(),
        bs_shift in 12..18u32,
        maxblk in 0..3usize,
    ) {
        let (r, p) = [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 5), (ZfsRelease::V2_1, 11), (ZfsRelease::V2_2, 2), (ZfsRelease::V2_2, 11)][release];
        let mut c = sync_writer(r, p, 24, [FioSync::None, FioSync::Sync, FioSync::Dsync][o_sync], 300 * US, 100 * US);
        c.devices[0].latency_sigma = 0.3;
        if rotational {
            c.devices[0].rotational = Some(crate::dev::disk::sas_7200());
            c.devices[0].capacity_bytes = Some(1_000_204_886_016);
            c.devices[0].write_latency_ns = 200 * US;
            c.devices[0].read_latency_ns = 200 * US;
        }
        if mirror {
            let mut d = c.devices[0].clone();
            d.name = "disk2".into();
            c.devices.push(d);
            zfs(&mut c).vdevs = vec![crate::config::VdevConfig::Mirror(crate::config::MirrorVdev { mirror: vec!["disk".into(), "disk2".into()] })];
        }
        if slog > 0 {
            with_slog(&mut c, 50 * US, 20 * US);
            c.devices.last_mut().unwrap().capacity_bytes = Some(64 << 20);
            if slog == 2 {
                let mut d = c.devices.last().unwrap().clone();
                d.name = "slog2".into();
                c.devices.push(d);
                zfs(&mut c).log = vec!["slog".into(), "slog2".into()];
            }
        }
        let z = zfs(&mut c);
        z.logbias = if logbias { Logbias::Throughput } else { Logbias::Latency };
        z.sync = [SyncProperty::Standard, SyncProperty::Always, SyncProperty::Disabled][sync_prop];
        z.zil.zil_maxblocksize = [None, Some(32768), Some(1 << 20)][maxblk];
        let bs = 1u32 << bs_shift;
        let j = job(&mut c, 2);
        j.numjobs = numjobs;
        j.clone_files = vec![vec![0]; numjobs as usize];
        j.bs_write = bs;
        j.bs_read = bs;
        j.io_size = 24 * u64::from(bs);
        j.fsync = fsync;
        j.end_fsync = end_fsync;
        if uring {
            j.ioengine = "io_uring".into();
            j.iodepth = 4;
        }
        let s = run(&c);
        let ph = &s["phases"][0];
        prop_assert_eq!(ph["fio"]["write"]["ios"].as_u64(), Some(24 * u64::from(numjobs)));
        if let Some(zil) = ph.get("zil") {
            let commits = zil["zil_commit_count"].as_u64().unwrap();
            if sync_prop == 2 {
                prop_assert_eq!(commits, 0);
            }
            prop_assert_eq!(zil["zil_commit_writer_count"].as_u64(), Some(commits));
        }
    }
}

/// zil_slog_bulk: a commit burst past it writes its SLOG blocks at async priority, in the
/// vdev queue's async-write class (2 in flight at low dirty data, vdev_queue_max_async_writes)
/// instead of the sync-write class (10): an end fsync of 4 MiB of need-copy records (about
/// 32 blocks of 128K) takes several times as long on a slow SLOG.
#[test]
fn zil_slog_bulk_moves_a_large_burst_to_async_priority() {
    for (r, p) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_2, 11)] {
        let mut c = sync_writer(r, p, 256, FioSync::None, 100 * US, 0);
        with_slog(&mut c, 2 * MS, 0);
        c.devices[1].parallelism = 64;
        job(&mut c, 2).end_fsync = true;
        let fsync_s = |c: &VariantConfig| {
            let mut plain = c.clone();
            job(&mut plain, 2).end_fsync = false;
            let (a, b) = (run(c), run(&plain));
            f(&a["phases"][0]["fio"]["runtime_s"]) - f(&b["phases"][0]["fio"]["runtime_s"])
        };
        // 0.8's default (768K) is under the burst: a bulk larger than it keeps it sync.
        zfs(&mut c).zil.zil_slog_bulk = Some(1 << 30);
        let sync_prio = fsync_s(&c);
        zfs(&mut c).zil.zil_slog_bulk = Some(64 << 10);
        let async_prio = fsync_s(&c);
        assert!(sync_prio > 0.004 && sync_prio < 0.012, "{r:?}: {sync_prio}");
        assert!(async_prio > 3.0 * sync_prio, "{r:?}: {async_prio} vs {sync_prio}");
    }
}
