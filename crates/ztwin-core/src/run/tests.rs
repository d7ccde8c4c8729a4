use super::*;
use crate::config::{test_variant, DirectProperty, ZfsRelease};
use crate::sim::time::SEC;

/// Runs the event loop of `cfg` up to its end, without the reporting.
fn simulate(cfg: &VariantConfig) -> Sim<'_> {
    let mut sim = Sim::new(cfg).unwrap();
    let end = cfg.run.warmup_ns + cfg.run.duration_ns;
    sim.mode = Mode::Workload { issue_until: end };
    for i in 0..sim.clients.len() {
        sim.queue.at(0, Event::Client(i));
    }
    while let Some((t, e)) = sim.queue.pop() {
        if t >= end {
            break;
        }
        sim.dispatch(e, t);
    }
    sim
}

/// Records of 128K hold 8 pages of 16K and one 128K L1 covers a whole table, so 32
/// clients starting cold often want a block another client is reading. As in
/// dbuf_read (a dbuf in DB_READ is waited for on db_changed), the waiter does not go
/// to the ARC: no hit is counted for it, and the block is never read twice at once,
/// even when the ARC does not keep it (primarycache=metadata).
#[test]
fn a_block_in_flight_is_waited_for_without_an_arc_access() {
    for release in [ZfsRelease::V0_8, ZfsRelease::V2_2, ZfsRelease::V2_3] {
        for primarycache in [CacheProperty::All, CacheProperty::Metadata] {
            let mut cfg = test_variant();
            let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
            w.threads = 32;
            let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
            z.recordsize = 128 << 10;
            z.release = release;
            z.primarycache = primarycache;
            // InnoDB's O_DIRECT reads are Direct I/O on 2.3 (direct=standard): they bypass
            // the ARC and read on their own, so no reader waits. The waits need the ARC.
            z.direct = Some(DirectProperty::Disabled);
            let sim = simulate(&cfg);
            let Fs::Zfs(z) = &sim.fs else { unreachable!() };
            let arc = &z.arc;
            let st = arc.stats();
            assert!(
                z.counters().block_waits > 0,
                "{release:?} {primarycache:?}: the test needs concurrent reads of one block"
            );
            assert_eq!(
                st.hits + st.misses + st.iohits + z.counters().block_waits,
                z.counters().block_lookups + z.counters().prefetch_lookups,
                "{release:?} {primarycache:?}: every lookup is one ARC access (hit, miss, 2.2 iohit) or one wait"
            );
            if release == ZfsRelease::V2_2 {
                assert!(st.iohits > 0, "2.2 counts the waits as iohits");
            }
        }
    }
}

/// The series covers the warm-up: its rows show the queries served then too (they
/// showed 0 queries/s and 0 ms latency while the devices were busy).
#[test]
fn warm_up_rows_count_queries() {
    let cfg = test_variant();
    let r = run_variant(&cfg).unwrap();
    let qps = r.series.column("qps").unwrap();
    let measured = r.series.column("measured").unwrap();
    let p50 = r.series.column("latency_p50_ms").unwrap();
    assert_eq!(measured, &[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    for k in 0..qps.len() {
        assert!(qps[k] > 0.0 && p50[k] > 0.0, "row {k}: qps {} p50 {}", qps[k], p50[k]);
    }
    let window: f64 = qps[2..].iter().sum::<f64>() / 4.0;
    assert!((window / r.summary["qps"].as_f64().unwrap() - 1.0).abs() < 1e-9);
}

fn cat_then_bench(cfg: &mut VariantConfig) {
    cfg.phases = vec![
        PhaseConfig::Cat(crate::config::CatPhase { name: "cat".into(), read_size: 128 << 10, passes: 1 }),
        PhaseConfig::Workload(crate::config::WorkloadPhase {
            name: "bench".into(),
            warmup_ns: 0,
            duration_ns: SEC,
            test: None,
        }),
    ];
}

/// A cat, then a benchmark, with a 1 GiB cache device "l2" (no IOPS cap) fed up to 64 MiB
/// at a time, and `l2arc_noprefetch` as given. The disk passes 48 MB/s, so that the cat
/// lasts several feeds (the vdev queue aggregates its prefetches: 3000 IOPS alone would
/// pass the tables in under a second).
fn cat_then_bench_with_l2(noprefetch: bool) -> VariantConfig {
    let mut cfg = test_variant();
    cfg.devices[0].throughput_limit_bytes_per_sec = Some(48e6);
    cat_then_bench(&mut cfg);
    add_l2(&mut cfg).l2arc.l2arc_noprefetch = Some(noprefetch);
    cfg
}

/// Adds "l2", a 1 GiB copy of the first device without its IOPS cap, as the pool's cache
/// device, fed up to 64 MiB at a time; returns the ZFS config for more changes.
fn add_l2(cfg: &mut VariantConfig) -> &mut crate::config::ZfsConfig {
    let mut l2 = cfg.devices[0].clone();
    l2.name = "l2".into();
    l2.iops_limit = None;
    l2.capacity_bytes = Some(1 << 30);
    cfg.devices.push(l2);
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!("the test variants run ZFS") };
    z.cache = vec!["l2".into()];
    z.l2arc.l2arc_write_max = Some(64 << 20);
    z
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |x, p| &x[*p]).as_f64().unwrap_or_else(|| panic!("{path:?} missing in {v}"))
}

/// A `cat` reads each file sequentially in 128 KiB reads (8 records of 16 KiB): zfetch
/// follows each file with one stream (every read after the first is a stream hit), the
/// records come in as prefetch reads (arcstats prefetch_data_misses) that the demand
/// reads then find in the ARC or in flight, so few demand reads go to the device, and no
/// block is read twice. On a device with no IOPS cap, whose latency (500 us) bounds a
/// reader that waits for each read, the prefetch reads in parallel make the pass faster.
#[test]
fn cat_reads_become_prefetch_hits() {
    for (release, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 11)] {
        let mut cfg = test_variant();
        cfg.devices[0].iops_limit = None;
        cat_then_bench(&mut cfg);
        let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
        z.release = release;
        z.release_patch = patch;
        let mut off = cfg.clone();
        let FsConfig::Zfs(zo) = &mut off.filesystem else { unreachable!() };
        zo.zfetch.zfs_prefetch_disable = Some(true);
        let on = run_variant(&cfg).unwrap().summary;
        let off = run_variant(&off).unwrap().summary;
        let (a, b) = (&on["phases"][0], &off["phases"][0]);
        let reads = num(a, &["reads"]);
        let DatasetConfig::Sysbench(ds) = &cfg.dataset else { unreachable!("a sysbench test variant") };
        let file = ds.tables as f64;
        // One miss per file (the first read creates the stream); 2.x also skips block 0
        // (0.8: access to block 0 ignored, so the second read misses too).
        let misses = num(a, &["zfetch", "misses"]);
        assert!(misses >= file && misses <= 2.0 * file, "{release:?}: {a:#}");
        assert!(num(a, &["zfetch", "hits"]) >= reads - 3.0 * file, "{release:?}: {a:#}");
        let records = reads * 8.0;
        assert!(num(a, &["arc", "prefetch_data_misses"]) > 0.9 * records, "{release:?}: {a:#}");
        assert!(num(a, &["arc", "demand_data_misses"]) < 0.05 * records, "{release:?}: {a:#}");
        assert_eq!(num(b, &["arc", "prefetch_data_misses"]), 0.0);
        assert!(b.get("zfetch").is_some_and(|z| z["hits"] == 0));
        // Every record is read once either way (the indirect blocks too): the same bytes,
        // in fewer device reads with prefetch (the vdev queue aggregates the prefetches it
        // holds, async-read class, into reads of up to 128K).
        let dev = |d: &Value, what: &str| {
            num(d, &["devices", "disk", what]) * (num(d, &["end_s"]) - num(d, &["start_s"]))
        };
        let (ba, bb) = (dev(a, "read_mbps"), dev(b, "read_mbps"));
        assert!((ba / bb - 1.0).abs() < 0.01, "{release:?}: {ba} vs {bb} MB");
        assert!(dev(a, "read_iops") < dev(b, "read_iops"), "{release:?}");
        let (fast, slow) = (num(a, &["read_mbps"]), num(b, &["read_mbps"]));
        assert!(fast > 2.0 * slow, "{release:?}: {fast} vs {slow} MB/s");
        // Random point selects afterwards: each page read misses the streams (and creates or
        // recycles one); the few that continue one by chance (neighbouring B-tree pages)
        // prefetch under 2% as many records as there are page reads.
        let prefetched =
            num(&on, &["arc", "prefetch_data_misses"]) + num(&on, &["arc", "prefetch_data_hits"]);
        assert!(prefetched < 0.02 * num(&on, &["innodb", "pages_read"]), "{release:?}: {on:#}");
        assert!(num(&on, &["zfetch", "misses"]) > 0.5 * num(&on, &["innodb", "pages_read"]), "{release:?}");
    }
}

/// l2arc_noprefetch: a prefetched block is not L2-eligible until a demand read sets
/// L2CACHE again. 0.8 and 2.1 clear L2CACHE when the prefetch completes, and a demand
/// read that joined the read in flight does not set it again (it never called
/// arc_access), so those blocks never reach the cache device. In every release, a feed
/// that scans the MRU list from its head (arc_warm is false) passes over the blocks
/// prefetched ahead of the reader. Either way fewer bytes reach the cache device during
/// the cat (in 2.2 by little: the vdev queue's async-read class keeps few prefetches ahead
/// of the reader, and the reader's demand reads set L2CACHE again on those it joins);
/// without prefetch the tunable changes nothing.
#[test]
fn l2arc_noprefetch_keeps_blocks_joined_in_flight_off_the_cache_device() {
    for (release, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 11)] {
        let written = |noprefetch: bool, prefetch: bool| {
            let mut cfg = cat_then_bench_with_l2(noprefetch);
            let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
            z.release = release;
            z.release_patch = patch;
            z.zfetch.zfs_prefetch_disable = Some(!prefetch);
            let sim = Sim::new(&cfg).unwrap().run(None).unwrap();
            let cat = &sim.summary["phases"][0];
            num(cat, &["devices", "l2", "write_mbps"]) * (num(cat, &["end_s"]) - num(cat, &["start_s"]))
        };
        assert_eq!(written(true, false), written(false, false), "{release:?}: no prefetch, no effect");
        let (with, without) = (written(true, true), written(false, true));
        assert!(without > 0.0);
        assert!(with < without, "{release:?}: {with} vs {without} MB");
    }
}

/// The feed thread waits for its writes (`zio_wait(pio)` in `l2arc_write_buffers`): a
/// cache device slower to write than the feed asks sets the feed's pace, so what the feed
/// writes during the cat stays within the device's rate over the cat plus one feed in
/// flight; the same cat on a device as fast as the disk puts several times more on it.
#[test]
fn a_slow_cache_device_holds_the_feed_back() {
    let written = |rate: f64| {
        let mut cfg = cat_then_bench_with_l2(false);
        cfg.devices[1].throughput_limit_bytes_per_sec = Some(rate);
        let sim = Sim::new(&cfg).unwrap().run(None).unwrap();
        let cat = &sim.summary["phases"][0];
        let secs = num(cat, &["end_s"]) - num(cat, &["start_s"]);
        (num(cat, &["devices", "l2", "write_mbps"]) * 1e6 * secs, secs)
    };
    let (slow, secs) = written(2e6);
    let (fast, _) = written(48e6);
    let bound = 2e6 * secs + f64::from(64u32 << 20);
    assert!(slow > 0.0 && slow <= bound, "{slow} bytes in {secs} s (at most {bound})");
    assert!(fast > 2.0 * slow, "{fast} vs {slow}");
}

/// The cache device's I/O passes its vdev queue (`zio_write_phys` and `l2arc_read` reach
/// `vdev_queue_io` as any leaf's): the feed's writes, one zio per buffer at consecutive
/// addresses, reach a non-rotating device as aggregates of at most
/// `zfs_vdev_aggregation_limit_non_rotating` (128 KiB), almost all that large, and a
/// rotational one's of up to `zfs_vdev_aggregation_limit` (1 MiB).
#[test]
fn the_feed_writes_the_cache_device_in_aggregates() {
    let avg_write = |rotational: bool| {
        let mut cfg = cat_then_bench_with_l2(false);
        if rotational {
            cfg.devices[1].queue_rotational = Some(true);
        }
        let sim = Sim::new(&cfg).unwrap().run(None).unwrap();
        let cat = &sim.summary["phases"][0];
        let (mbps, iops) =
            (num(cat, &["devices", "l2", "write_mbps"]), num(cat, &["devices", "l2", "write_iops"]));
        assert!(iops > 0.0, "{cat:#}");
        mbps * 1e6 / iops
    };
    let flash = avg_write(false);
    assert!(flash <= 131072.0 + 1.0 && flash > 0.9 * 131072.0, "{flash} bytes a write");
    let disk = avg_write(true);
    assert!(disk > 4.0 * 131072.0 && disk <= f64::from(1u32 << 20) + 1.0, "{disk} bytes a write");
}

/// In the cache device's vdev queue a demand read (sync-read class, 10 at least) goes
/// ahead of the feed's queued writes (async-write class: 2 issued at least, more as the
/// pool's dirty data grows), so on a cache device that writes slowly (8 MB/s: a 64 MiB
/// pass takes 8 s) the reads of the one-second benchmark that follows the cat wait for
/// the few writes issued before them, not for the pass: the device serves over a hundred
/// of them while the feed still writes, and no query takes half a second. (Behind the
/// pass, as when the feed wrote past the queue, it served one, and 28 queries ended.)
#[test]
fn l2_reads_pass_the_feeds_queued_writes() {
    let mut cfg = cat_then_bench_with_l2(false);
    cfg.devices[1].throughput_limit_bytes_per_sec = Some(8e6);
    let sim = Sim::new(&cfg).unwrap().run(None).unwrap();
    let bench = &sim.summary["phases"][1];
    assert!(num(bench, &["devices", "l2", "read_iops"]) > 100.0, "{bench:#}");
    assert!(num(bench, &["devices", "l2", "write_mbps"]) > 0.0, "{bench:#}");
    assert!(num(bench, &["latency_ms", "max"]) < 500.0, "{bench:#}");
    assert!(num(bench, &["queries"]) > 100.0, "{bench:#}");
}

/// With a cache device the series has arcstat's L2ARC columns per interval: hits and
/// misses (their sum over the benchmark's intervals is the phase's), the hit ratio
/// between 0 and 1, and the device's fill, which grows during the cat and ends where
/// the phase's summary says; without one, none of them.
#[test]
fn the_series_follows_the_l2arc() {
    let cfg = cat_then_bench_with_l2(false);
    let r = Sim::new(&cfg).unwrap().run(None).unwrap();
    let col = |n: &str| r.series.column(n).unwrap_or_else(|| panic!("no {n} column"));
    let (hits, ratio, size) = (col("l2_hits"), col("l2_hit_ratio"), col("l2_size"));
    let bench = &r.summary["phases"][1];
    let total: f64 = hits.iter().sum();
    assert!(total >= num(bench, &["l2arc", "l2_hits"]) && total > 0.0, "{total} vs {bench:#}");
    assert!(ratio.iter().all(|x| x.is_nan() || (0.0..=1.0).contains(x)), "{ratio:?}");
    // The feed's first pass comes l2arc_feed_secs (1 s) in: after the first row.
    assert!(
        size.windows(2).skip(1).take_while(|w| w[1] > 0.0).all(|w| w[1] >= w[0]) && size[1] > 0.0,
        "{size:?}"
    );
    assert_eq!(*size.last().unwrap(), num(bench, &["l2arc", "l2_size"]));
    assert_eq!(col("l2_misses").len(), hits.len());
    let plain = run_variant(&test_variant()).unwrap();
    assert!(plain.series.column("l2_hits").is_none() && plain.series.column("arc_size").is_some());
}

/// The L2ARC feed thread's CPU work runs on the machine's vCPUs, in turn with the
/// database's: on two vCPUs that the clients keep busy (32 threads, 5 ms of CPU per statement), a
/// feed whose header visits are costly (0.1 ms each: every feed passes the whole ARC's
/// lists) reports its CPU time, which one thread keeps within one vCPU's time, and the
/// clients get what the feed leaves: their rate falls in proportion to the CPU the feed
/// takes. With every cost of the feed zero, it takes none.
#[test]
fn the_feed_thread_takes_cpu_time_from_the_clients() {
    let run = |hdr_ns: u64| {
        let mut cfg = cat_then_bench_with_l2(false);
        cfg.machine.cpu.statement_ns = 5_000_000;
        cfg.machine.cpu.l2arc_hdr_ns = hdr_ns;
        if let WorkloadConfig::Sysbench(w) = &mut cfg.workload {
            w.threads = 32;
        }
        if let PhaseConfig::Workload(w) = &mut cfg.phases[1] {
            w.duration_ns = 6 * SEC;
        }
        let r = run_variant(&cfg).unwrap().summary;
        r["phases"][1].clone()
    };
    let (idle, busy) = (run(0), run(100_000));
    let window = 6.0;
    let feed = num(&busy, &["l2arc", "feed_cpu_s"]) / window;
    // One thread: at most one vCPU (a pass in progress at the window's end counts whole).
    assert!(feed > 0.3 && feed <= 1.05, "feed {feed}: {busy:#}");
    // The clients are CPU bound (32 threads waiting for 2 vCPUs) and get the vCPUs the
    // feed leaves: their rate falls with the share of the vCPUs the feed takes.
    let (q0, q1) = (num(&idle, &["qps"]), num(&busy, &["qps"]));
    let expected = (2.0 - feed) / 2.0;
    assert!((q1 / q0 - expected).abs() < 0.1, "qps {q0} -> {q1}, feed {feed} vCPU: expected x{expected}");
    // The header visits are most of the feed's work; without them the feed's CPU is
    // its buffers' zios and device I/Os only (none written in the benchmark: all is on L2).
    assert!(num(&idle, &["l2arc", "feed_cpu_s"]) < 0.01 * window, "{idle:#}");
}

/// `cat_then_bench_with_l2` with the cache device split in two of 512 MiB, "l2" and
/// "l2b", in that order.
fn with_two_cache_devices() -> VariantConfig {
    let mut cfg = cat_then_bench_with_l2(false);
    cfg.devices[1].capacity_bytes = Some(512 << 20);
    let mut l2b = cfg.devices[1].clone();
    l2b.name = "l2b".into();
    cfg.devices.push(l2b);
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
    z.cache.push("l2b".into());
    cfg
}

/// Two cache devices: the one feed thread writes each pass to the next device in turn,
/// so over the cat they receive about the same bytes (within two passes of 64 MiB), and
/// the benchmark's L2 hits read from both (each block's copy is on one of them). More
/// than eight are refused.
#[test]
fn two_cache_devices_are_fed_in_turn_and_both_serve_hits() {
    let cfg = with_two_cache_devices();
    let r = Sim::new(&cfg).unwrap().run(None).unwrap();
    let (cat, bench) = (&r.summary["phases"][0], &r.summary["phases"][1]);
    let secs = num(cat, &["end_s"]) - num(cat, &["start_s"]);
    let w = |d: &str| num(cat, &["devices", d, "write_mbps"]) * 1e6 * secs;
    let (a, b) = (w("l2"), w("l2b"));
    assert!(
        a > 0.0 && b > 0.0 && (a - b).abs() <= 2.0 * f64::from(64u32 << 20) + 0.05 * (a + b),
        "{a} vs {b}"
    );
    let reads = |d: &str| num(bench, &["devices", d, "read_iops"]);
    assert!(reads("l2") > 0.0 && reads("l2b") > 0.0, "{bench:#}");
    assert!(num(bench, &["l2arc", "l2_hits"]) > 0.0);
    let mut many = cfg.clone();
    for i in 2..=8 {
        let mut d = many.devices[1].clone();
        d.name = format!("l2_{i}");
        many.devices.push(d);
        let FsConfig::Zfs(z) = &mut many.filesystem else { unreachable!() };
        z.cache.push(format!("l2_{i}"));
    }
    let e = run_variant(&many).unwrap_err().to_string();
    assert!(e.contains("filesystem.cache") && e.contains("at most 8"), "{e}");
}

/// After a VM move only the ephemeral one of two cache devices comes back blank: it is
/// UNAVAIL, the other is kept and rebuilt (2.2: persistent L2ARC, on devices of 1 GiB,
/// l2arc_rebuild_blocks_min_l2size), and the benchmark's L2 reads all go to the kept
/// one; the restart reports each device.
#[test]
fn a_restart_treats_each_cache_device_on_its_own() {
    let mut cfg = with_two_cache_devices();
    cfg.devices[1].ephemeral = true;
    cfg.devices[1].capacity_bytes = Some(1 << 30);
    cfg.devices[2].capacity_bytes = Some(1 << 30);
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
    (z.release, z.release_patch) = (ZfsRelease::V2_2, 11);
    cfg.phases.insert(
        1,
        PhaseConfig::Restart(crate::config::RestartPhase {
            name: "boot".into(),
            vm_moved: true,
            recreate_cache: false,
        }),
    );
    let r = Sim::new(&cfg).unwrap().run(None).unwrap();
    let p = &r.summary["phases"];
    let states: Vec<(&str, &str)> = p[1]["cache_devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["device"].as_str().unwrap(), d["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("l2", "unavail"), ("l2b", "kept")]);
    let bench = &p[2];
    assert_eq!(
        num(bench, &["devices", "l2", "read_iops"]) + num(bench, &["devices", "l2", "write_iops"]),
        0.0
    );
    assert!(num(bench, &["devices", "l2b", "read_iops"]) > 0.0, "{bench:#}");
    assert!(num(bench, &["l2arc", "l2_hits"]) > 0.0);
}

/// A VM moved to another host finds its ephemeral cache device blank: ZFS imports the
/// pool with the device UNAVAIL (no label) and the benchmark after it runs without
/// L2ARC, unless the boot script removes and re-adds it (`recreate_cache`: a new, empty
/// L2ARC that the feed fills again). A reboot on the same host keeps the device.
#[test]
fn a_blank_ephemeral_cache_device_is_unavailable_until_recreated() {
    let run = |vm_moved: bool, recreate_cache: bool| {
        let mut cfg = cat_then_bench_with_l2(false);
        cfg.devices[1].ephemeral = true;
        let restart = PhaseConfig::Restart(crate::config::RestartPhase {
            name: "boot".into(),
            vm_moved,
            recreate_cache,
        });
        cfg.phases.insert(1, restart);
        // Long enough for feeds: the first comes l2arc_feed_secs after the boot.
        if let PhaseConfig::Workload(w) = &mut cfg.phases[2] {
            w.duration_ns = 3 * SEC;
        }
        let sim = Sim::new(&cfg).unwrap().run(None).unwrap();
        let p = &sim.summary["phases"];
        (p[1]["cache_device"]["state"].as_str().unwrap().to_string(), p[2].clone())
    };
    let (state, bench) = run(true, false);
    assert_eq!(state, "unavail");
    assert!(bench.get("l2arc").is_none(), "{bench:#}");
    assert_eq!(
        num(&bench, &["devices", "l2", "read_iops"]) + num(&bench, &["devices", "l2", "write_iops"]),
        0.0
    );
    let (state, bench) = run(true, true);
    assert_eq!(state, "recreated");
    assert!(num(&bench, &["l2arc", "l2_write_bytes"]) > 0.0, "the feed fills it again: {bench:#}");
    let (state, bench) = run(false, false);
    assert_eq!(state, "kept");
    assert!(bench.get("l2arc").is_some());
}

/// A tune phase sets module parameters as `echo` does at run time: l2arc_noprefetch = 0
/// set before the cat gives the cat exactly what the same value in the scenario gives;
/// the phase is reported with what it set. Without a cache device, or with a parameter
/// the release lacks, it is an error naming the phase.
#[test]
fn a_tune_phase_sets_l2arc_parameters_between_phases() {
    use crate::cache::l2arc::L2arcTunables;
    let variant = |noprefetch: bool, tune: Option<L2arcTunables>| {
        let mut cfg = cat_then_bench_with_l2(noprefetch);
        if let Some(t) = tune {
            cfg.phases.insert(
                0,
                PhaseConfig::Tune(crate::config::TunePhase { name: "warm-up tunables".into(), l2arc: t }),
            );
        }
        cfg
    };
    let written = |cfg: &VariantConfig| {
        let r = Sim::new(cfg).unwrap().run(None).unwrap().summary;
        let cat = r["phases"].as_array().unwrap().iter().find(|p| p["type"] == "cat").unwrap().clone();
        (num(&cat, &["devices", "l2", "write_mbps"]), r)
    };
    let on = L2arcTunables { l2arc_noprefetch: Some(false), ..Default::default() };
    let (tuned, doc) = written(&variant(true, Some(on.clone())));
    let (configured, _) = written(&variant(false, None));
    let (default, _) = written(&variant(true, None));
    assert!(tuned > 0.0 && tuned == configured && default < tuned, "{tuned} {configured} {default}");
    assert_eq!(doc["phases"][0]["type"], "tune");
    assert_eq!(doc["phases"][0]["l2arc"], serde_json::json!({"l2arc_noprefetch": false}));

    let mut none = variant(true, Some(on));
    let FsConfig::Zfs(z) = &mut none.filesystem else { unreachable!() };
    z.cache.clear();
    let e = none.validate().unwrap_err().to_string();
    assert!(e.starts_with("phases[0].type: ") && e.contains("cache device"), "{e}");

    let mut lacks = variant(true, Some(L2arcTunables { l2arc_mfuonly: Some(1), ..Default::default() }));
    let FsConfig::Zfs(z) = &mut lacks.filesystem else { unreachable!() };
    z.release = ZfsRelease::V0_8;
    let e = Sim::new(&lacks).and_then(|s| s.run(None)).map(|_| ()).unwrap_err().to_string();
    assert!(e.starts_with("phases[0].l2arc.l2arc_mfuonly: ") && e.contains("0.8"), "{e}");
}

/// Where decompression happens: with compressed ARC every ARC hit on a compressed block
/// decompresses it into the new dbuf's buffer (arc_buf_fill); without it the read zio
/// decompressed it once and a hit shares or copies the ARC's buffer. With every block
/// cached, the two runs differ in CPU by exactly the hits' decompression.
#[test]
fn compressed_arc_hits_pay_decompression_uncompressed_arc_hits_do_not() {
    let mut cfg = test_variant();
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
    z.arc.zfs_arc_max = 1 << 30;
    z.ashift = 9;
    let mut off = cfg.clone();
    let FsConfig::Zfs(zo) = &mut off.filesystem else { unreachable!() };
    zo.arc.zfs_arc_max = 1 << 30;
    zo.arc.zfs_compressed_arc_enabled = Some(false);
    let run = |c: &VariantConfig| {
        let sim = simulate(c);
        let Fs::Zfs(z) = &sim.fs else { unreachable!() };
        let arc = &z.arc;
        let busy = sim.cpus.busy_ns_at(c.run.warmup_ns + c.run.duration_ns);
        (arc.stats(), busy as f64 / sim.statements as f64, sim.statements as f64, z.costs)
    };
    let (st_on, cpu_on, n_on, costs) = run(&cfg);
    let (st_off, cpu_off, n_off, _) = run(&off);
    // The same statements draw the same keys; closed loops interleave them a little
    // differently, so compare CPU per statement.
    assert!(st_on.hits as f64 / n_on > 1.0 && st_on.compressed_size < st_on.uncompressed_size);
    let hit_rate = |st: &ArcStats, n: f64| st.hits as f64 / (st.hits + st.misses) as f64 * n;
    assert!((hit_rate(&st_on, 1.0) - hit_rate(&st_off, 1.0)).abs() < 0.01);
    let per_hit = 16384.0 * costs.decompress_ns_per_byte;
    let diff = cpu_on - cpu_off;
    // Not every block compresses (psize < lsize only where it saves an eighth; at ratio
    // 1.28 and ashift 9 most data blocks do) and the hits include indirect blocks, so the
    // difference per statement is a good share of, and at most, every hit's decompression.
    let bound = st_on.hits as f64 / n_on * per_hit;
    assert!(diff > 0.2 * bound && diff <= bound * 1.05, "{diff} ns per statement, bound {bound}; {n_off}");
}

/// A tunable the release lacks, on the pool's own L2ARC: named as the user wrote it.
#[test]
fn l2arc_tunable_errors_name_the_key_as_written() {
    let mut cfg = cat_then_bench_with_l2(true);
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
    z.release = ZfsRelease::V0_8;
    z.l2arc.l2arc_mfuonly = Some(1);
    let e = Sim::new(&cfg).map(|_| ()).unwrap_err().to_string();
    assert!(e.starts_with("filesystem.l2arc.l2arc_mfuonly: ") && e.contains("0.8"), "{e}");
}

/// The observer sees the simulated clock at the report boundaries, rising, then the end;
/// the result is the same byte for byte as without an observer (it only looks).
#[test]
fn an_observer_sees_the_clock_rise_and_changes_nothing() {
    let mut cfg = test_variant();
    cat_then_bench(&mut cfg);
    cfg.phases.push(PhaseConfig::Workload(crate::config::WorkloadPhase {
        name: "again".into(),
        warmup_ns: SEC,
        duration_ns: 2 * SEC,
        test: None,
    }));
    for cfg in [test_variant(), cfg] {
        let mut seen = Vec::new();
        let mut cb = |p: Progress| {
            seen.push(p);
            true
        };
        let observed = run_variant_observed(&cfg, std::time::Duration::ZERO, &mut cb).unwrap();
        let plain = run_variant(&cfg).unwrap();
        assert_eq!(observed.summary.to_string(), plain.summary.to_string());
        assert_eq!(
            serde_json::to_string(&observed.series).unwrap(),
            serde_json::to_string(&plain.series).unwrap()
        );
        let phases = cfg.effective_phases().len();
        assert!(seen.len() >= 4, "{seen:?}");
        let (last, during) = seen.split_last().unwrap();
        assert!(last.finished && during.iter().all(|p| !p.finished));
        assert!(seen.windows(2).all(|w| w[0].simulated_ns < w[1].simulated_ns), "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0].phase <= w[1].phase), "{seen:?}");
        assert!(seen.iter().all(|p| p.phases == phases && p.phase < phases));
        assert!(during.iter().all(|p| p.simulated_ns % cfg.run.report_interval_ns == 0));
        assert_eq!(last.simulated_ns, (num(&plain.summary, &["engine", "simulated_s"]) * 1e9).round() as u64);
        if phases == 1 {
            // One workload phase: 2 s of warm-up and 4 s measured.
            assert_eq!(last.total_ns, Some(6 * SEC));
        } else {
            // A cat phase ends when its reads are done: no total.
            assert_eq!(last.total_ns, None);
            assert_eq!(last.phase, phases - 1);
        }
    }
}

/// An observer answering `false` stops the run: no result, an error saying when.
#[test]
fn an_observer_can_stop_the_run() {
    let cfg = test_variant();
    let mut calls = 0;
    let mut cb = |p: Progress| {
        calls += 1;
        p.simulated_ns < 3 * SEC
    };
    let e = run_variant_observed(&cfg, std::time::Duration::ZERO, &mut cb).unwrap_err();
    assert_eq!(e, Error::Stopped { time_ns: 3 * SEC });
    assert_eq!(calls, 3);
}

/// The total of the phases is known only when each has a set length.
#[test]
fn the_total_is_known_when_every_phase_has_a_length() {
    let mut cfg = test_variant();
    assert_eq!(progress::total_ns(&cfg.effective_phases()), Some(6 * SEC));
    cat_then_bench(&mut cfg);
    assert_eq!(progress::total_ns(&cfg.effective_phases()), None);
    assert_eq!(progress::total_ns(&cfg.phases[1..]), Some(SEC));
}

/// An interval in which no statement finished (here: the cat phase's) has no latency:
/// NaN in the series (null in its JSON), not 0 ms; intervals with statements have one.
#[test]
fn intervals_without_queries_have_no_latency() {
    let mut cfg = test_variant();
    // A cat of a few seconds (aggregated prefetches would pass the tables in under one).
    cfg.devices[0].throughput_limit_bytes_per_sec = Some(48e6);
    cat_then_bench(&mut cfg);
    let r = run_variant(&cfg).unwrap();
    let qps = r.series.column("qps").unwrap();
    let p50 = r.series.column("latency_p50_ms").unwrap();
    assert!(qps.contains(&0.0) && qps.iter().any(|&q| q > 0.0), "{qps:?}");
    for (q, l) in qps.iter().zip(p50) {
        assert_eq!(*q == 0.0, l.is_nan(), "qps {q} p50 {l}");
    }
}

/// oltp_read_only end to end: sysbench's counts (16 queries per transaction, latency per
/// transaction) and InnoDB's page accesses from first principles: 14 descents of the
/// tree's depth, and each range of 100 ids one or two further leaves (73 ids per leaf:
/// 2 + 27/73 leaves on average), so 14 d + 4 x 100/73 accesses per transaction.
#[test]
fn read_only_transactions_count_and_read_as_sysbench_and_innodb_do() {
    let mut cfg = test_variant();
    let WorkloadConfig::Sysbench(w) = &mut cfg.workload else { unreachable!() };
    w.test = crate::config::SysbenchTest::OltpReadOnly;
    let r = run_variant(&cfg).unwrap();
    let (qps, tps) = (num(&r.summary, &["qps"]), num(&r.summary, &["tps"]));
    assert!(tps > 0.0 && (qps / tps - 16.0).abs() < 0.02, "qps {qps} tps {tps}");
    let tps_series = r.series.column("tps").unwrap();
    assert!(tps_series.iter().all(|&t| t > 0.0));
    let d = TableLayout::sysbench(200_000, 16384).clustered.depth as f64;
    let per_tx = num(&r.summary, &["innodb", "read_requests"]) / (tps * num(&r.summary, &["window_s"]));
    let expect = 14.0 * d + 4.0 * 100.0 / 73.0;
    assert!(
        (per_tx / expect - 1.0).abs() < 0.03,
        "{per_tx} page accesses per transaction, expected {expect}"
    );
}

/// The series and the window agree under writes with an L2ARC: the feed and the txg sync
/// run on while the last clients finish after the window, and that work belongs to
/// neither. The series ends at the window's end, its rows add up to the window's
/// counters, and no row is cut short at the end with the drain's work in it.
#[test]
fn the_series_ends_with_the_window_and_adds_up_to_it_under_writes() {
    let mut cfg = crate::config::test_tpcc_variant(2);
    cfg.run =
        crate::config::RunConfig { warmup_ns: 0, duration_ns: 5 * SEC + SEC / 3, report_interval_ns: SEC };
    add_l2(&mut cfg).arc.zfs_arc_max = 96 << 20;
    let r = Sim::new(&cfg).unwrap().run(None).unwrap();
    let col = |n: &str| r.series.column(n).unwrap_or_else(|| panic!("no {n} column"));
    let time = col("time_s");
    let window = &r.summary;
    assert_eq!(
        *time.last().unwrap(),
        (5 * SEC + SEC / 3) as f64 / SEC as f64,
        "the last row ends at the window's end: {time:?}"
    );
    let fed: f64 = col("l2_write_bytes").iter().sum();
    let in_window = num(window, &["l2arc", "l2_write_bytes"]);
    assert!(in_window > 0.0, "{window:#}");
    assert_eq!(fed, in_window, "rows {:?}", col("l2_write_bytes"));
    let rows_tps: f64 = col("tps")
        .iter()
        .zip(time.iter().scan(0.0, |p, &t| Some(t - std::mem::replace(p, t))))
        .map(|(x, dt)| x * dt)
        .sum();
    let window_tx = num(window, &["tps"]) * num(window, &["window_s"]);
    assert!((rows_tps - window_tx).abs() < 0.5, "{rows_tps} vs {window_tx}");
    // A run that goes on has the same rows up to there: what ran after the window's end
    // is in none of them.
    let mut longer = cfg.clone();
    longer.run.duration_ns = 9 * SEC;
    let cut = |c: &VariantConfig| {
        let mut c = c.clone();
        c.run.duration_ns = 5 * SEC;
        c
    };
    let (a, b) =
        (Sim::new(&cut(&cfg)).unwrap().run(None).unwrap(), Sim::new(&longer).unwrap().run(None).unwrap());
    for name in ["l2_write_bytes", "tps", "l2_size", "arc_size"] {
        let (x, y) = (a.series.column(name).unwrap(), b.series.column(name).unwrap());
        assert_eq!(x[..], y[..x.len()], "{name}");
    }
}

/// The Azure-like variant: the summary reports the data disk's burst credits and host
/// cache, the series their columns; the disk's reads and writes at its submission count
/// either way (a hit is a read of the disk to the guest), and with credits the disk
/// spends them: a P10's 500 IOPS are below what the workload asks.
#[test]
fn an_azure_disk_reports_its_burst_credits_and_host_cache() {
    let mut cfg = crate::config::test_azure_variant();
    cfg.run.warmup_ns = 2 * SEC;
    cfg.run.duration_ns = 8 * SEC;
    let r = run_variant(&cfg).unwrap();
    let disk = &r.summary["devices"]["disk"];
    let burst = &disk["burst"];
    let (io, pct) = (burst["io_credits"].as_f64().unwrap(), burst["io_credits_pct"].as_f64().unwrap());
    assert!(io < 3000.0 * 1800.0 && (0.0..100.0).contains(&pct), "{burst}");
    assert!(burst["burst_s"].as_f64().unwrap() > 0.0, "{burst}");
    let hc = &disk["host_cache"];
    assert!(hc["read_hit_ratio"].as_f64().is_some(), "{hc}");
    assert!(r.summary["devices"]["temp"].get("burst").is_none(), "no bucket, no burst doc");
    let col = r.series.column("disk_burst_io_credits_pct").unwrap();
    assert!(col.iter().all(|v| (0.0..=100.0).contains(v)), "{col:?}");
    assert!(col.windows(2).any(|w| w[1] < w[0]), "credits are spent: {col:?}");
    assert!(r.series.column("disk_host_cache_read_hit_iops").is_some());
    assert!(r.series.column("temp_burst_io_credits_pct").is_none());
}
