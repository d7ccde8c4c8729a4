use super::*;
use crate::config::test_variant;
use crate::sim::time::{MS, US};
use proptest::prelude::*;

/// A drive that takes 1 ms per write (one at a time, no transfer time to speak of).
fn slow_drive(name: &str) -> DeviceConfig {
    let mut d = test_variant().devices[0].clone();
    d.name = name.into();
    d.iops_limit = None;
    d.latency_sigma = 0.0;
    d.read_latency_ns = MS;
    d.write_latency_ns = MS;
    d.transfer_bytes_per_sec = 1e15;
    d.parallelism = 1;
    d
}

fn ctrl_cfg(cache: u64, volumes: &[&str]) -> ControllerConfig {
    ControllerConfig {
        name: "perc".into(),
        volumes: volumes.iter().map(|s| s.to_string()).collect(),
        cache_bytes: cache,
        write_back: true,
        cache_latency_ns: 40 * US,
        cache_bytes_per_sec: 4e9,
        destage_max_bytes: 1 << 20,
        destage_queue_depth: 2,
    }
}

/// Host devices of `n` slow drives behind one controller with `cache` bytes.
fn volumes(n: usize, cache: u64) -> Vec<Device> {
    let names: Vec<String> = (0..n).map(|i| format!("sd{i}")).collect();
    let cfgs: Vec<DeviceConfig> = names.iter().map(|s| slow_drive(s)).collect();
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let ctrls = vec![ctrl_cfg(cache, &refs)];
    check(&ctrls, &cfgs).unwrap();
    let mut devs: Vec<Device> = cfgs.iter().map(|c| Device::new(c, 1)).collect();
    attach(&ctrls, &cfgs, &mut devs, 1);
    devs
}

fn hit_ns(bytes: u64) -> Nanos {
    40 * US + (bytes as f64 / 4e9 * 1e9).round() as Nanos
}

/// One writer, one 16 KiB write at a time at scattered offsets: each completes at cache
/// speed while the cache has room; once 1 MiB of it is dirty, each waits for a destage
/// write (1 ms on this drive) to free room.
#[test]
fn writes_complete_at_cache_speed_until_the_cache_fills_then_at_destage_speed() {
    let mut d = volumes(1, 1 << 20);
    let mut t = 0;
    let mut lat = Vec::new();
    for k in 0..400u64 {
        let done = d[0].submit_at(t, Op::Write, k * (8 << 20), 16384);
        lat.push(done - t);
        t = done;
    }
    // 64 writes fill the cache (2 of them go on destaging meanwhile, 1 ms each).
    let fast = lat.iter().take_while(|&&l| l == hit_ns(16384)).count();
    assert!((64..=70).contains(&fast), "{fast} writes at cache speed: {:?}", &lat[..80]);
    let tail = &lat[100..];
    let mean = tail.iter().sum::<u64>() as f64 / tail.len() as f64;
    // Two destage writes queued at a one-at-a-time drive: one frees room every 1 ms.
    assert!((mean / MS as f64 - 1.0).abs() < 0.05, "mean {mean} ns once full");
    let c = d[0].port().unwrap().controller().counters();
    assert!(c.write_waits > 300, "{c:?}");
}

/// A cache flush with the battery's write-back cache completes at once, however much is
/// dirty, and never reaches the drive.
#[test]
fn a_flush_is_free_behind_the_battery_backed_cache() {
    let mut cfg = slow_drive("sd0");
    cfg.flush_latency_ns = 5 * MS; // the drive's own flush, were it sent one
    let ctrls = vec![ctrl_cfg(64 << 20, &["sd0"])];
    let mut d = vec![Device::new(&cfg, 1)];
    attach(&ctrls, std::slice::from_ref(&cfg), &mut d, 1);
    for k in 0..100 {
        d[0].submit_at(0, Op::Write, k << 20, 65536);
    }
    assert_eq!(d[0].flush(10), 10);
    assert_eq!(d[0].counters().flushes, 1);
    let port = d[0].port().unwrap();
    assert_eq!(port.controller().drive(0).counters().flushes, 0);
    assert!(port.controller().used() > 0, "still dirty");
}

/// A read of data that is dirty in the cache is served from it; a read of data that is
/// not goes to the drive.
#[test]
fn reads_of_dirty_data_are_served_from_the_cache() {
    let mut d = volumes(1, 64 << 20);
    for k in 0..8u64 {
        d[0].submit_at(0, Op::Write, (1 << 30) + k * 16384, 16384);
    }
    // 128 KiB dirty (or being destaged): a read inside it is a hit.
    assert_eq!(d[0].submit_at(10, Op::Read, (1 << 30) + 4096, 32768), 10 + hit_ns(32768));
    // Crossing its end: the drive reads it (behind the destage writes queued there).
    let miss = d[0].submit_at(20, Op::Read, (1 << 30) + 120 * 1024, 16384);
    assert!(miss >= 20 + MS, "{miss}");
    let c = d[0].port().unwrap().controller().counters();
    assert_eq!((c.read_hits, c.read_misses), (1, 1));
}

/// A read that reaches a drive while writes wait for room follows the destage writes
/// queued at the drive (two here), not the destaging planned to make that room: it does
/// not wait for the waiting writes, which get their room later for it.
#[test]
fn a_read_waits_for_the_queued_destage_writes_not_for_the_waiting_writes() {
    let mut d = volumes(1, 1 << 20);
    // 3 MiB of scattered 16 KiB writes at once: 1 MiB fills the cache, the rest waits for
    // destage writes of 1 ms each (one per 16 KiB: nothing is adjacent).
    let last = (0..192u64).map(|k| d[0].submit_at(0, Op::Write, k * (8 << 20), 16384)).max().unwrap();
    assert!(last > 120 * MS, "the last waiting write gets room after {last} ns");
    let read = d[0].submit_at(10 * US, Op::Read, 7 << 30, 16384);
    // Behind the two destage writes at the drive, then its own 1 ms.
    assert!(read <= 3 * MS + 40 * US, "the read completes at {read} ns");
    {
        let port = d[0].port().unwrap();
        let c = port.controller();
        assert_eq!(c.counters().reads_ahead_of_destage, 1);
        assert!(c.promised() > 0, "writes still wait");
    }
    // The room comes 1 ms later than planned for the waiting writes: the cache holds one
    // destage write's worth more than its size when the last of them is admitted.
    d[0].flush(SEC);
    let port = d[0].port().unwrap();
    let c = port.controller();
    assert_eq!((c.used(), c.promised()), (0, 0));
    assert_eq!(c.counters().overfull_peak_bytes, 16384);
    assert_eq!(c.counters().destage_bytes, 192 * 16384);
}

/// Adjacent dirty writes are destaged as one drive write (up to destage_max_bytes), and a
/// rewrite of dirty data takes no more room.
#[test]
fn destaging_coalesces_adjacent_data_and_absorbs_rewrites() {
    let mut d = volumes(1, 64 << 20);
    // The first write goes to the drive at once; the next 63, adjacent, wait and merge.
    for k in 0..64u64 {
        d[0].submit_at(k, Op::Write, k * 16384, 16384);
    }
    {
        let port = d[0].port().unwrap();
        let c = port.controller();
        assert_eq!(c.dirty_bytes(0), (64 - 2) * 16384, "one range behind the two queued");
    }
    // A rewrite of dirty data adds nothing.
    let used = d[0].port().unwrap().controller().used();
    d[0].submit_at(100, Op::Write, 10 * 16384, 16384);
    assert_eq!(d[0].port().unwrap().controller().used(), used);
    // Long after: everything destaged, in 3 drive writes (two single pages, then the rest).
    d[0].flush(SEC);
    let port = d[0].port().unwrap();
    let c = port.controller();
    assert_eq!(c.used(), 0);
    let cn = c.counters();
    assert_eq!(cn.destage_writes, 3, "{cn:?}");
    assert_eq!(cn.destage_bytes, 64 * 16384);
    assert_eq!(cn.absorbed_bytes, 16384);
    assert_eq!(c.drive(0).counters().writes, 3);
}

/// Write Through: a write completes when the drive has it (plus the controller's time).
#[test]
fn write_through_completes_at_the_drive() {
    let cfg = slow_drive("sd0");
    let mut ctrls = vec![ctrl_cfg(64 << 20, &["sd0"])];
    ctrls[0].write_back = false;
    let mut d = vec![Device::new(&cfg, 1)];
    attach(&ctrls, std::slice::from_ref(&cfg), &mut d, 1);
    assert_eq!(d[0].submit_at(0, Op::Write, 0, 4096), MS + 40 * US);
    assert_eq!(d[0].submit_at(0, Op::Write, 1 << 20, 4096), 2 * MS + 40 * US);
    assert_eq!(d[0].port().unwrap().controller().used(), 0);
}

/// A controller's parameters are checked, each error naming its key.
#[test]
fn bad_parameters_name_their_key() {
    let devs = vec![slow_drive("sd0")];
    let bad = |f: &dyn Fn(&mut ControllerConfig), key: &str| {
        let mut c = ctrl_cfg(1 << 30, &["sd0"]);
        f(&mut c);
        let e = check(&[c], &devs).unwrap_err().to_string();
        assert!(e.contains(&format!("controllers[0] (perc).{key}")), "{e}");
    };
    bad(&|c| c.cache_bytes = 0, "cache_bytes");
    bad(&|c| c.cache_bytes_per_sec = f64::NAN, "cache_bytes_per_sec");
    bad(&|c| c.destage_max_bytes = 0, "destage_max_bytes");
    bad(&|c| c.destage_queue_depth = 0, "destage_queue_depth");
    bad(&|c| c.volumes = vec!["nope".into()], "volumes");
    bad(&|c| c.volumes = vec![], "volumes");
    bad(&|c| c.volumes = vec!["sd0".into(), "sd0".into()], "volumes");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the mix of writes on several volumes, the dirty data never takes more than
    /// the cache; reads (and writes through) that go to a drive ahead of destaging planned
    /// for waiting writes can make it hold more for a while (counted), never writes alone.
    /// Waiting writes get their room first come, first served. Every byte
    /// written is destaged or absorbed by a rewrite.
    #[test]
    fn occupancy_never_exceeds_the_cache_and_every_byte_is_destaged(
        ops in prop::collection::vec((0usize..3, any::<bool>(), 0u64..4096, 1u32..64, 0u64..200), 1..300),
        cache_kib in 64u64..2048,
        with_reads in any::<bool>(),
    ) {
        let cache = cache_kib << 10;
        let mut d = volumes(3, 1 << 20);
        // A smaller cache than check allows, to fill it often.
        let port = d[0].port().unwrap().clone();
        port.ctrl.borrow_mut().p.cache_bytes = cache;
        let (mut now, mut written, mut through, mut last_room) = (0u64, 0u64, false, 0u64);
        for (v, write, off, pages, dt) in ops {
            now += dt * US;
            let (offset, bytes) = (off * 4096, pages * 4096);
            if write || !with_reads {
                let done = d[v].submit_at(now, Op::Write, offset, bytes);
                if u64::from(bytes) <= cache {
                    written += u64::from(bytes);
                    // Writes get their room in the order they came.
                    let room = done - hit_ns(u64::from(bytes));
                    prop_assert!(room >= now);
                    if room > now {
                        prop_assert!(room >= last_room, "room at {room} after {last_room}");
                        last_room = room;
                    }
                } else {
                    through = true;
                }
            } else {
                d[v].submit_at(now, Op::Read, offset, bytes);
            }
            let c = port.controller();
            let (held, over) = (c.held(), c.counters().overfull_peak_bytes);
            prop_assert!(held <= cache + over, "{held} > {cache} + {over}");
            if !with_reads && !through {
                // Nothing goes to a drive ahead of the planned destaging.
                prop_assert_eq!(over, 0);
            }
        }
        d[0].flush(now + 100 * SEC);
        let c = port.controller();
        prop_assert!(c.peak() <= cache + c.counters().overfull_peak_bytes);
        prop_assert_eq!(c.used(), 0);
        prop_assert_eq!(c.promised(), 0);
        let n = c.counters();
        prop_assert_eq!(n.destage_bytes + n.absorbed_bytes, written);
        let drive_bytes: u64 = (0..3).map(|v| c.drive(v).counters().write_bytes).sum();
        prop_assert_eq!(drive_bytes, n.destage_bytes + {
            // Write-through writes (larger than the cache) reach the drive directly.
            let through: u64 = (0..3).map(|v| d[v].counters().write_bytes).sum::<u64>() - written;
            through
        });
    }
}

proptest! {
    /// The dirty map stays disjoint ranges that do not touch, covering exactly what was
    /// written, and each insert returns the bytes it newly covers.
    #[test]
    fn dirty_ranges_merge_and_count_new_bytes(
        random in proptest::collection::vec((0u64..200, 1u64..40), 1..60),
        appends in proptest::collection::vec((0u64..3, 1u64..8), 0..30),
    ) {
        // Random writes, then writes that mostly start where the last one ended (the
        // pool's allocations follow one another), wrapping inside the 240 bytes.
        let mut writes = random;
        let mut at = 0u64;
        for (gap, len) in appends {
            at += gap;
            if at + len > 240 {
                at = 0;
            }
            writes.push((at, len));
            at += len;
        }
        let mut map = std::collections::BTreeMap::new();
        let mut model = [false; 240];
        for (s, len) in writes {
            let e = (s + len).min(240);
            let before = model.iter().filter(|&&b| b).count() as u64;
            model[s as usize..e as usize].iter_mut().for_each(|b| *b = true);
            let after = model.iter().filter(|&&b| b).count() as u64;
            prop_assert_eq!(super::insert(&mut map, s, e), after - before);
            let mut last_end = None;
            let mut covered = [false; 240];
            for (&a, &b) in &map {
                prop_assert!(a < b);
                prop_assert!(last_end.is_none_or(|l| l < a), "ranges touch or overlap");
                last_end = Some(b);
                covered[a as usize..b as usize].iter_mut().for_each(|x| *x = true);
            }
            prop_assert_eq!(covered, model);
        }
    }
}
