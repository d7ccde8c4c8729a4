//! The L2ARC feed thread falling behind under writes (issue 19, experiment 4's observed
//! mechanism) on a small config: a file four times the ARC, read (cat, then 20 s of
//! random reads) until the cache device holds it all, then 60 s of random reads and
//! rewrites (30% writes). Every rewrite drops the block's L2 copy (its old version is
//! freed) and leaves the new version in the ARC (L2-cacheable, `arc_write`); the feed
//! must write it to the cache device before the ARC evicts it, or a later read of the
//! block misses both. The feed thread waits for its writes before its next pass
//! (`zio_wait`; the cache device's vdev queue issues them, 2 to 10 at a time as the
//! pool's dirty data goes), so a pass lasts at least one device write: on a cache device whose
//! writes take 2 s the passes come too seldom for the rewrites, the L2ARC's content goes
//! stale and its hit ratio falls as the run goes on; on the same device with writes of
//! 0.5 ms the feed keeps the ratio where it started. (Its CPU work is the other part of
//! a pass: `run::tests::the_feed_thread_takes_cpu_time_from_the_clients`.)
//!
//! With two such cache devices the releases' one feed thread writes each pass to the next
//! device (`l2arc_dev_get_next()`): the passes come as seldom as with one device. Master's
//! per-device threads (b525525b44, the what-if `per_device_feed`) pass on every device
//! at once: the fill is about twice as fast and the feed keeps up with the rewrites.

use ztwin_core::config::{
    test_fio_variant, CatPhase, DeviceConfig, FioJob, FioPhase, FioRw, FsConfig, PhaseConfig, RunConfig,
    VariantConfig, WorkloadConfig,
};
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::SEC;

const MIB: u64 = 1 << 20;

/// The variant: a 1 GiB machine (arc_c_max 64 MiB), a 256 MiB file of 16K records, a
/// cache device of 4 GiB (2000 IOPS) whose writes take `write_latency_ns`,
/// l2arc_write_max 64 MiB; the file laid out, a cat, 20 s of random reads, then `secs`
/// seconds of 4 jobs of 16K random reads and writes (70% reads).
fn variant(write_latency_ns: u64, secs: u64) -> VariantConfig {
    variant_devices(write_latency_ns, secs, 1, false)
}

/// [`variant`] with `ndev` such cache devices ("l2", "l2_1", ...), fed by the release's
/// one thread in turn or, `per_device`, by master's per-device threads (b525525b44).
fn variant_devices(write_latency_ns: u64, secs: u64, ndev: usize, per_device: bool) -> VariantConfig {
    let mut c = test_fio_variant();
    c.machine.ram_bytes = 1 << 30;
    let size = 256 * MIB;
    let ztwin_core::config::DatasetConfig::Files(f) = &mut c.dataset else { unreachable!() };
    f.files[0].size = size;
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z.recordsize = 16 << 10;
    z.arc.zfs_arc_max = 64 * MIB;
    z.cache = vec!["l2".into()];
    z.l2arc.l2arc_write_max = Some(64 * MIB);
    z.l2arc.l2arc_noprefetch = Some(false);
    let mut l2: DeviceConfig = c.devices[0].clone();
    l2.name = "l2".into();
    l2.iops_limit = Some(2000.0);
    l2.capacity_bytes = Some(4 << 30);
    l2.write_latency_ns = write_latency_ns;
    for k in 1..ndev {
        let mut more = l2.clone();
        more.name = format!("l2_{k}");
        z.cache.push(more.name.clone());
        c.devices.push(more);
    }
    if per_device {
        z.l2arc.per_device_feed = Some(true);
    }
    c.devices.push(l2);
    let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
    let mut write: FioJob = w.jobs[2].clone();
    write.name = "layout".into();
    write.file_range = size;
    write.io_size = size;
    write.bs_write = 16 << 10;
    let mut rw: FioJob = w.jobs[1].clone();
    rw.name = "randrw".into();
    rw.rw = FioRw::Randrw;
    rw.rwmixread = 70;
    rw.file_range = size;
    rw.io_size = size;
    rw.runtime_ns = secs * SEC;
    let mut warm: FioJob = w.jobs[1].clone();
    warm.name = "randread".into();
    warm.file_range = size;
    warm.io_size = size;
    warm.runtime_ns = 20 * SEC;
    w.jobs = vec![write, rw, warm];
    c.run = RunConfig { warmup_ns: 0, duration_ns: secs * SEC, report_interval_ns: 5 * SEC };
    c.phases = vec![
        PhaseConfig::Fio(FioPhase { name: "layout".into(), jobs: vec![0] }),
        PhaseConfig::Cat(CatPhase { name: "cat".into(), read_size: 128 << 10, passes: 2 }),
        PhaseConfig::Fio(FioPhase { name: "randread".into(), jobs: vec![2] }),
        PhaseConfig::Fio(FioPhase { name: "randrw".into(), jobs: vec![1] }),
    ];
    c
}

/// Per report interval of the last phase: the L2 hit ratio and the L2ARC's size; and the
/// phase's summary.
fn last_phase(c: &VariantConfig) -> (Vec<f64>, Vec<f64>, serde_json::Value) {
    let r = run_variant(c).unwrap();
    let phase = r.series.column("phase").unwrap();
    let last = phase.iter().cloned().fold(0.0, f64::max);
    let of = |name: &str| -> Vec<f64> {
        let col = r.series.column(name).unwrap();
        phase.iter().zip(col).filter(|(p, _)| **p == last).map(|(_, x)| *x).collect()
    };
    (of("l2_hit_ratio"), of("l2_size"), r.summary["phases"][3].clone())
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

#[test]
fn a_feed_slower_than_the_rewrites_lets_the_l2arc_go_stale() {
    let secs = 60;
    // 12 full intervals of 5 s (the last row is the drain after the window).
    let thirds = |v: &[f64]| (mean(&v[..4]), mean(&v[8..12]));
    let (fast, fast_size, _) = last_phase(&variant(500_000, secs));
    let (slow, slow_size, slow_doc) = last_phase(&variant(2 * SEC, secs));
    assert!(fast.len() >= 12 && slow.len() >= 12, "{fast:?} {slow:?}");
    // Keeps up: no interval below the first third's level by more than 2 points.
    let (f0, f1) = thirds(&fast);
    assert!(f1 >= f0 - 0.02, "fast feed: {fast:?}");
    assert!(fast[..12].iter().all(|&x| x >= f0 - 0.05), "fast feed: {fast:?}");
    // Falls behind: the ratio decays through the run (the last third under 80% of the
    // first) and the cache device's content shrinks (copies dropped faster than new
    // versions are written).
    let (s0, s1) = thirds(&slow);
    assert!(s1 < 0.8 * s0, "slow feed: {slow:?}");
    assert!(slow_size[11] < 0.8 * slow_size[0], "slow feed's L2 size: {slow_size:?}");
    assert!(fast_size[11] > 0.9 * fast_size[0], "fast feed's L2 size: {fast_size:?}");
    // The thread waits for its writes: a pass lasts at least one 2 s write.
    let feeds = slow_doc["l2arc"]["l2_feeds"].as_f64().unwrap();
    assert!(feeds <= secs as f64 / 2.0 + 2.0, "{feeds} feeds in {secs} s");
}

/// The bytes the feed wrote to the `ndev` cache devices (their device writes) during
/// the layout phase (fio writing the file: every new block enters the ARC L2-cacheable,
/// `arc_write`), and the phase's duration (s).
fn layout_fill(c: &VariantConfig, ndev: usize) -> (f64, f64) {
    let r = run_variant(c).unwrap();
    let layout = &r.summary["phases"][0];
    let secs = layout["end_s"].as_f64().unwrap() - layout["start_s"].as_f64().unwrap();
    let names = std::iter::once("l2".to_string()).chain((1..ndev).map(|k| format!("l2_{k}")));
    let bytes =
        names.map(|n| layout["devices"][n.as_str()]["write_mbps"].as_f64().unwrap() * 1e6 * secs).sum();
    (bytes, secs)
}

/// Two cache devices whose writes take 1 s, l2arc_write_max 8 MiB: a pass waits for its
/// writes (`zio_wait`), so the feed, not the supply of new blocks (the file written at
/// the data device's 48 MB/s), sets the fill rate. The releases' one thread writes each
/// pass to the next device: at most one pass (8 MiB, plus the write boost of 8 MiB while
/// the ARC is cold; 0.8) a second over both devices. Master's per-device threads
/// (b525525b44) pass on both devices at once: at most twice that, and about twice the one
/// thread's fill.
#[test]
fn per_device_feed_threads_fill_two_devices_twice_as_fast() {
    let mut one = variant_devices(SEC, 10, 2, false);
    let mut two = variant_devices(SEC, 10, 2, true);
    for c in [&mut one, &mut two] {
        let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
        z.l2arc.l2arc_write_max = Some(8 * MIB);
        // A file of 640 MiB written at 48 MB/s: about 14 s of layout, many passes.
        c.devices[0].throughput_limit_bytes_per_sec = Some(48e6);
        let size = 640 * MIB;
        let ztwin_core::config::DatasetConfig::Files(f) = &mut c.dataset else { unreachable!() };
        f.files[0].size = size;
        let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
        for j in &mut w.jobs {
            (j.file_range, j.io_size) = (size, size);
        }
    }
    let (a, secs_a) = layout_fill(&one, 2);
    let (b, secs_b) = layout_fill(&two, 2);
    let pass = (16 * MIB) as f64;
    // The one thread: a pass a second at most (one more in flight at the phase's end).
    assert!(a > 0.0 && a <= (secs_a + 1.0) * pass, "{a} in {secs_a} s");
    assert!(b <= 2.0 * (secs_b + 1.0) * pass, "{b} in {secs_b} s");
    let ratio = (b / secs_b) / (a / secs_a);
    eprintln!("fill: one thread {a} B in {secs_a} s, per-device threads {b} B in {secs_b} s: x{ratio:.2}");
    assert!(
        (1.7..=2.1).contains(&ratio),
        "per-device fill rate / one thread's: {ratio} ({a} in {secs_a} s, {b} in {secs_b} s)"
    );
}

/// The rewrites of `a_feed_slower_than_the_rewrites_lets_the_l2arc_go_stale` on two cache
/// devices whose writes take 12 ms: a device's vdev queue issues a pass's 128K writes 2
/// to 10 at a time, so a pass of some megabytes lasts about a second. The releases' one
/// thread feeds the devices in turn: too seldom for the rewrites, so the L2 hit ratio
/// decays (0.82 to 0.53 from the first third to the last). Master's per-device threads
/// (b525525b44) pass on both at once, each device's thread waiting only for its own
/// writes: the feed keeps up (0.99). (With writes of 8 ms one thread keeps up too; with
/// 20 ms neither does.)
#[test]
fn per_device_threads_keep_up_where_one_thread_falls_behind() {
    let secs = 60;
    let thirds = |v: &[f64]| (mean(&v[..4]), mean(&v[8..12]));
    let lat = 12_000_000;
    let (one, one_size, one_doc) = last_phase(&variant_devices(lat, secs, 2, false));
    let (two, two_size, two_doc) = last_phase(&variant_devices(lat, secs, 2, true));
    let (o0, o1) = thirds(&one);
    let (t0, t1) = thirds(&two);
    // One thread falls behind: the ratio decays and the devices hold less than the
    // per-device threads keep there.
    assert!(o1 < 0.9 * o0, "one thread: {one:?}");
    let (s1, s2) = (mean(&one_size[8..12]), mean(&two_size[8..12]));
    assert!(s1 < 0.85 * s2, "L2 size, last third: one thread {one_size:?}, per-device {two_size:?}");
    // Per-device threads keep up: no interval more than 5 points under the first third.
    assert!(t1 >= t0 - 0.02, "per-device threads: {two:?}");
    assert!(two[..12].iter().all(|&x| x >= t0 - 0.05), "per-device threads: {two:?}");
    assert!(two_size[11] > 0.9 * two_size[0], "per-device threads' L2 size: {two_size:?}");
    // Each thread waits for its writes: at most a pass a second per thread (one more in
    // flight at each end); the two threads pass at least 1.6 times as often as the one.
    let feeds = |d: &serde_json::Value| d["l2arc"]["l2_feeds"].as_f64().unwrap();
    let (f1, f2) = (feeds(&one_doc), feeds(&two_doc));
    eprintln!("L2 hit ratio, first and last third: one thread {o0:.3} -> {o1:.3} ({f1} feeds), per-device {t0:.3} -> {t1:.3} ({f2} feeds)");
    assert!(f1 <= secs as f64 + 2.0 && f2 <= 2.0 * (secs as f64 + 2.0), "{f1} and {f2} feeds in {secs} s");
    assert!(f2 >= 1.6 * f1, "{f2} feeds against {f1}");
}
