use proptest::prelude::*;

use super::*;
use crate::config::{test_variant, Compression, FsConfig, MirrorVdev, ZfsRelease};
use crate::dev::disk::sas_7200;
use crate::fs::zfs::compression::CompressionModel;
use crate::fs::zfs::content::{FileBlocks, CLASS_MEAN_RATIO};
use crate::fs::zfs::geometry::FileGeometry;
use crate::sim::time::{SEC, US};

const TB: u64 = 1_000_204_886_016;

fn ssd(name: &str, capacity: Option<u64>) -> DeviceConfig {
    let mut d = test_variant().devices.remove(0);
    d.name = name.into();
    d.iops_limit = None;
    d.capacity_bytes = capacity;
    d
}

fn hdd(name: &str) -> DeviceConfig {
    DeviceConfig {
        name: name.into(),
        kind: "sas-7200-1tb".into(),
        iops_limit: None,
        throughput_limit_bytes_per_sec: None,
        read_latency_ns: 200 * US,
        write_latency_ns: 200 * US,
        latency_sigma: 0.0,
        transfer_bytes_per_sec: 600e6,
        parallelism: 1,
        capacity_bytes: Some(TB),
        ephemeral: false,
        rotational: Some(sas_7200()),
        flush_latency_ns: 0,
        queue_rotational: None,
        iops_size_bytes: None,
        burst: None,
        io_limit: None,
        host_cache: false,
    }
}

fn mirror(names: &[&str]) -> VdevConfig {
    VdevConfig::Mirror(MirrorVdev { mirror: names.iter().map(|s| s.to_string()).collect() })
}

fn zfs(vdevs: Vec<VdevConfig>, release: ZfsRelease) -> ZfsConfig {
    let FsConfig::Zfs(mut z) = test_variant().filesystem else { unreachable!() };
    z.vdevs = vdevs;
    z.release = release;
    z
}

/// Eight files of `file_size` (tests lay out up to eight).
fn layout(file_size: u64, recordsize: u32, ratio: f64, ashift: u8) -> ZfsLayout {
    let algorithm = if ratio > 1.0 { Compression::Lz4 } else { Compression::Off };
    let g = FileGeometry::new(file_size, recordsize, 128 << 10);
    ZfsLayout::new(
        vec![FileBlocks::uniform(g, CLASS_MEAN_RATIO); 8],
        CompressionModel::new(algorithm, ratio, ashift, 11).unwrap(),
        128 << 10,
        1,
    )
}

fn data(object: u32, blkid: u64) -> BlockKey {
    BlockKey::new(object, 0, blkid)
}

/// 0.8, three single-disk vdevs, 512 KiB aliquot: a 64 MiB file of 128 KiB records lies in
/// chunks of 4 records on vdevs 2, 0, 1, 2, ... (the rotor starts on the last vdev added),
/// each vdev's chunks back to back.
#[test]
fn rotor_puts_consecutive_aliquot_chunks_on_successive_vdevs() {
    let devs = [ssd("a", None), ssd("b", None), ssd("c", None)];
    let z = zfs(vec!["a".into(), "b".into(), "c".into()], ZfsRelease::V0_8);
    let pool = Pool::new(&z, &devs, layout(64 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
    for b in 0..512u64 {
        let chunk = b / 4;
        let (d0, copy) = pool.dvas(data(1, b)).unwrap();
        assert_eq!(copy, None);
        assert_eq!(d0.vdev as u64, (2 + chunk) % 3, "record {b}");
        assert_eq!(d0.offset, (chunk / 3) * (512 << 10) + (b % 4) * (128 << 10), "record {b}");
    }
}

/// The mirror aliquot: through 2.1 a two-way mirror takes 1 MiB per turn beside a single
/// disk's 512 KiB (metaslab_aliquot * vdev_children); from 2.2 both take 1 MiB.
#[test]
fn a_mirror_takes_twice_a_single_disks_turn_until_2_2() {
    let devs = [ssd("a", None), ssd("b", None), ssd("c", None)];
    let chunks = |release| {
        let z = zfs(vec![mirror(&["a", "b"]), "c".into()], release);
        let pool = Pool::new(&z, &devs, layout(64 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for b in 0..48 {
            let v = pool.dvas(data(1, b)).unwrap().0.vdev;
            match runs.last_mut() {
                Some((lv, n)) if *lv == v => *n += 1,
                _ => runs.push((v, 1)),
            }
        }
        runs
    };
    assert_eq!(chunks(ZfsRelease::V0_8), [(1, 4), (0, 8), (1, 4), (0, 8), (1, 4), (0, 8), (1, 4), (0, 8)]);
    assert_eq!(chunks(ZfsRelease::V2_2), [(1, 8), (0, 8), (1, 8), (0, 8), (1, 8), (0, 8)]);
}

/// With unequal free space the rotor's bias gives the emptier vdev more per turn.
#[test]
fn the_bias_favours_the_emptier_vdev() {
    let devs = [ssd("a", Some(1 << 30)), ssd("b", Some(3 << 30))];
    let z = zfs(vec!["a".into(), "b".into()], ZfsRelease::V2_2);
    let pool = Pool::new(&z, &devs, layout(512 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
    let on_b = (0..4096).filter(|&b| pool.dvas(data(1, b)).unwrap().0.vdev == 1).count();
    // ratio(b) = 3/4 * 2 * 100 = 150 at the start: 1.5 MiB per turn against 0.5 MiB.
    assert!((2900..=3300).contains(&on_b), "{on_b} of 4096 records on the larger vdev");
    let z_off = ZfsConfig { pool: PoolTunables { metaslab_bias_enabled: false, ..z.pool.clone() }, ..z };
    let even = Pool::new(&z_off, &devs, layout(512 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
    let on_b = (0..4096).filter(|&b| even.dvas(data(1, b)).unwrap().0.vdev == 1).count();
    assert_eq!(on_b, 2048);
}

#[test]
fn a_dataset_larger_than_its_vdev_is_refused() {
    let devs = [ssd("a", Some(64 << 20)), ssd("b", Some(64 << 20))];
    let z = zfs(vec!["a".into(), "b".into()], ZfsRelease::V2_2);
    let e = Pool::new(&z, &devs, layout(256 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap_err();
    assert!(e.to_string().starts_with("filesystem.vdevs["), "{e}");
}

/// One plain solid-state vdev: positions are not modelled, reads go to the device.
#[test]
fn a_single_plain_ssd_pool_needs_no_layout() {
    let devs = [ssd("a", None)];
    let z = zfs(vec!["a".into()], ZfsRelease::V2_2);
    let mut pool = Pool::new(&z, &devs, layout(64 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
    assert!(pool.dvas(data(1, 0)).is_none());
    let mut dev = vec![Device::new(&devs[0], 1)];
    assert!(rd(&mut pool, data(1, 3), 128 << 10, 0, &mut dev) > 0);
    assert_eq!(dev[0].counters().read_bytes, 128 << 10);
}

/// A demand read of `key` at `now` through its vdev queue; returns its completion (the
/// queue is run until it issues the read if it held it).
fn rd(pool: &mut Pool, key: BlockKey, psize: u32, now: Nanos, devices: &mut [Device]) -> Nanos {
    use crate::fs::zfs::vdev_queue::{Priority, Tag};
    let lay = layout(1 << 20, 128 << 10, 1.0, 12);
    if let Ok(done) = pool.read(&lay, key, psize, Priority::SyncRead, Tag::Block(key.0), now, devices) {
        return done;
    }
    loop {
        let t = pool.vq.next_at().expect("a held read is issued at a completion");
        pool.vq.advance(t, devices);
        if let Some((_, done)) = pool.vq.take_resolved().find(|r| r.0 == Tag::Block(key.0)) {
            return done;
        }
    }
}

/// Closed-loop random record reads by `clients` threads for `n` reads; returns the
/// completion time of the last and the devices.
fn random_reads(
    pool: &mut Pool,
    devs: &[DeviceConfig],
    records: u64,
    clients: usize,
    n: usize,
) -> (Nanos, Vec<Device>) {
    use rand::Rng;
    let mut devices: Vec<Device> = devs.iter().enumerate().map(|(i, d)| Device::new(d, i as u64)).collect();
    pool.prepare_devices(&mut devices);
    let mut rng = Pcg64Mcg::seed_from_u64(9);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<Nanos>> =
        (0..clients).map(|_| std::cmp::Reverse(0)).collect();
    let mut last = 0;
    for _ in 0..n {
        let std::cmp::Reverse(now) = ready.pop().unwrap();
        let done = rd(pool, data(1, rng.random_range(0..records)), 128 << 10, now, &mut devices);
        last = last.max(done);
        ready.push(std::cmp::Reverse(done));
    }
    (last, devices)
}

/// A two-way mirror of disks under 8 concurrent random readers: the load balancing sends
/// reads to both sides about evenly, and the mirror serves about twice the reads per
/// second of one disk.
#[test]
fn mirror_reads_split_across_sides_under_load() {
    let devs = [hdd("a"), hdd("b")];
    let z = zfs(vec![mirror(&["a", "b"])], ZfsRelease::V0_8);
    let mut pool = Pool::new(&z, &devs, layout(4 << 30, 128 << 10, 1.0, 12), 1, 1).unwrap();
    let (t2, d) = random_reads(&mut pool, &devs, 32768, 8, 4000);
    let (a, b) = (d[0].counters().reads, d[1].counters().reads);
    assert!(a.min(b) as f64 / 4000.0 > 0.45, "sides served {a} and {b}");

    let one = [hdd("a")];
    let z1 = zfs(vec!["a".into()], ZfsRelease::V0_8);
    let mut single = Pool::new(&z1, &one, layout(4 << 30, 128 << 10, 1.0, 12), 1, 1).unwrap();
    let (t1, _) = random_reads(&mut single, &one, 32768, 8, 4000);
    let speedup = t1 as f64 / t2 as f64;
    eprintln!(
        "mirror: sides {a}/{b}, {:.0} reads/s against one disk's {:.0}",
        4000e9 / t2 as f64,
        4000e9 / t1 as f64
    );
    assert!((1.7..=2.2).contains(&speedup), "mirror {speedup:.2}x one disk");
}

/// One sequential reader at queue depth 1: the locality increment keeps it on the side
/// that read the previous block (load 0 against zfs_vdev_mirror_rotating_seek_inc); the
/// pre-2013 offset policy alternates sides every 2 MiB.
#[test]
fn a_sequential_reader_stays_on_one_side_of_a_mirror() {
    let devs = [hdd("a"), hdd("b")];
    for (policy, min_share, max_share) in
        [(MirrorReadPolicy::Load, 1.0, 1.0), (MirrorReadPolicy::Offset, 0.5, 0.5)]
    {
        let mut z = zfs(vec![mirror(&["a", "b"])], ZfsRelease::V0_8);
        z.pool.mirror_read_policy = policy;
        let mut pool = Pool::new(&z, &devs, layout(1 << 30, 128 << 10, 1.0, 12), 1, 1).unwrap();
        let mut devices: Vec<Device> = devs.iter().map(|d| Device::new(d, 1)).collect();
        pool.prepare_devices(&mut devices);
        let mut t = 0;
        for b in 0..1024 {
            t = rd(&mut pool, data(1, b), 128 << 10, t, &mut devices);
        }
        let (a, b) = (devices[0].counters().reads as f64, devices[1].counters().reads as f64);
        let share = a.max(b) / 1024.0;
        eprintln!("{policy:?}: sides {a}/{b}, 128 MiB in {:.3} s", t as f64 / 1e9);
        assert!((min_share..=max_share).contains(&share), "{policy:?}: {a} / {b}");
        // Either way the reader streams: 128 MiB near the outer edge in about a second.
        assert!(t < 2 * SEC, "{policy:?}: {t} ns");
    }
}

/// Indirect blocks have two copies on consecutive vdevs; a read uses one, either.
#[test]
fn metadata_reads_use_one_of_two_copies() {
    let devs = [ssd("a", None), ssd("b", None)];
    let z = zfs(vec!["a".into(), "b".into()], ZfsRelease::V2_2);
    let mut pool = Pool::new(&z, &devs, layout(1 << 30, 128 << 10, 1.0, 12), 1, 1).unwrap();
    let l1 = BlockKey::new(1, 1, 3);
    let (d0, d1) = pool.dvas(l1).unwrap();
    assert_ne!(d0.vdev, d1.unwrap().vdev);
    let mut devices: Vec<Device> = devs.iter().map(|d| Device::new(d, 1)).collect();
    for k in 0..1000 {
        rd(&mut pool, l1, 4096, k * 1_000_000, &mut devices);
    }
    let (a, b) = (devices[0].counters().reads, devices[1].counters().reads);
    assert_eq!(a + b, 1000);
    assert!((400..=600).contains(&a), "{a} / {b}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the pool and the data, no two allocated copies overlap on a vdev, the
    /// two copies of a block are on different vdevs when there are several, and each
    /// block's first copy is where its run puts it.
    #[test]
    fn allocations_never_overlap(
        widths in prop::collection::vec(1usize..=3, 1..=4),
        release in prop::sample::select(vec![ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3]),
        recordsize in prop::sample::select(vec![4096u32, 16384, 131072]),
        ratio in prop::sample::select(vec![1.0f64, 1.28, 2.0]),
        ashift in prop::sample::select(vec![9u8, 12]),
        files in 1u32..=3,
        file_kib in 1u64..=6000,
        aliquot in prop::sample::select(vec![0u64, 4096, 65536]),
        sized in any::<bool>(),
    ) {
        let mut devs = Vec::new();
        let mut vdevs = Vec::new();
        for (k, &w) in widths.iter().enumerate() {
            let names: Vec<String> = (0..w).map(|c| format!("d{k}_{c}")).collect();
            for (c, n) in names.iter().enumerate() {
                devs.push(ssd(n, sized.then_some((1 + k as u64 + c as u64) << 30)));
            }
            vdevs.push(if w == 1 { VdevConfig::Disk(names[0].clone()) } else { VdevConfig::Mirror(MirrorVdev { mirror: names }) });
        }
        let mut z = zfs(vdevs, release);
        z.pool.metaslab_aliquot = aliquot;
        let lay = layout(file_kib << 10, recordsize, ratio, ashift);
        let pool = Pool::new(&z, &devs, lay.clone(), files, 3).unwrap();
        let Some(_) = pool.dvas(data(1, 0)) else {
            prop_assert!(widths.len() == 1 && widths[0] == 1);
            return Ok(());
        };
        let mut extents: Vec<(u32, u64, u64)> = Vec::new();
        for object in 1..=files {
            for level in 0..lay.geometry(object).nlevels() {
                for blkid in 0..lay.geometry(object).blocks_at(level) {
                    let asize = u64::from(lay.compression.asize(lay.psize_at(object, level, blkid)));
                    if asize == 0 {
                        continue;
                    }
                    let (d0, d1) = pool.dvas(BlockKey::new(object, level, blkid)).unwrap();
                    // The checkpoints give the offset the runs define.
                    let by_runs = pool.map.as_ref().unwrap().dva0_by_runs(BlockKey::new(object, level, blkid));
                    prop_assert_eq!((d0.vdev, d0.offset), (by_runs.vdev, by_runs.offset));
                    extents.push((d0.vdev, d0.offset, asize));
                    if let Some(d1) = d1 {
                        if widths.len() > 1 {
                            prop_assert_ne!(d0.vdev, d1.vdev);
                        }
                        extents.push((d1.vdev, d1.offset, asize));
                    }
                }
            }
        }
        extents.sort_unstable();
        for w in extents.windows(2) {
            if w[0].0 == w[1].0 {
                prop_assert!(w[0].1 + w[0].2 <= w[1].1, "overlap on vdev {}: {:?} and {:?}", w[0].0, w[0], w[1]);
            }
        }
    }
}

#[test]
#[ignore = "timing"]
fn build_time() {
    let devs = [hdd("a"), hdd("b"), hdd("c")];
    let z = zfs(vec!["a".into(), "b".into(), "c".into()], ZfsRelease::V0_8);
    let lay = layout(2 << 30, 16 << 10, 1.28, 9);
    let t = std::time::Instant::now();
    let mut pool = Pool::new(&z, &devs, lay, 8, 1).unwrap();
    eprintln!("1M blocks laid out in {:?}, {} runs", t.elapsed(), pool.map.as_ref().unwrap().runs.len());
    let mut devices: Vec<Device> = devs.iter().map(|d| Device::new(d, 1)).collect();
    let t = std::time::Instant::now();
    for b in 0..100_000u64 {
        rd(&mut pool, data(1 + (b % 8) as u32, (b * 7919) % 131072), 16 << 10, b * 1000, &mut devices);
    }
    eprintln!("100k reads in {:?}", t.elapsed());
}

/// Through the driver: point selects on a pool of a mirror of two 7200 rpm disks beside a
/// single disk (experiment 3's kind of pool, small). Every disk serves reads, the mirror's
/// sides alike, and no disk does more than its mechanics allow (at least half a
/// revolution of wait on average for random reads: under 240 reads/s).
#[test]
fn the_driver_reads_through_the_pool() {
    let mut cfg = test_variant();
    cfg.devices = vec![hdd("a"), hdd("b"), hdd("c")];
    let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
    z.vdevs = vec![mirror(&["a", "b"]), "c".into()];
    let r = crate::run::run_variant(&cfg).unwrap();
    let iops = |d: &str| r.summary["devices"][d]["read_iops"].as_f64().unwrap();
    let (a, b, c) = (iops("a"), iops("b"), iops("c"));
    eprintln!("read IOPS: a {a:.0}, b {b:.0}, c {c:.0}; queries {}", r.summary["queries"]);
    assert!(a > 20.0 && b > 20.0 && c > 20.0, "{a} {b} {c}");
    assert!((a / b - 1.0).abs() < 0.3, "mirror sides {a} and {b}");
    assert!(a.max(b).max(c) < 240.0, "{a} {b} {c}");
}

/// Copy on write: a rewritten block gets new copies past everything allocated (never its
/// old place), the rotor goes on turning, and reads go to the new place.
#[test]
fn rewritten_blocks_land_at_new_offsets() {
    let devs = [ssd("a", None), ssd("b", None)];
    let z = zfs(vec!["a".into(), "b".into()], ZfsRelease::V0_8);
    let mut pool = Pool::new(&z, &devs, layout(64 << 20, 128 << 10, 1.0, 12), 1, 1).unwrap();
    // 512 records of 128K on two vdevs: 32 MiB each.
    let end = 32u64 << 20;
    let old: Vec<Dva> = (0..8).map(|b| pool.dvas(data(1, b)).unwrap().0).collect();
    let mut new = Vec::new();
    for b in 0..8u64 {
        let (d0, copy) = pool.cow_write(data(1, b), 128 << 10, false).unwrap();
        assert_eq!(copy, None);
        assert_ne!(d0, old[b as usize]);
        assert!(d0.offset >= end, "record {b} at {} is inside the old allocation", d0.offset);
        assert_eq!(pool.dvas(data(1, b)).unwrap().0, d0, "reads find the new copy");
        new.push(d0);
    }
    // 8 records of 128K = 1 MiB: two 512K turns of the rotor, on both vdevs.
    assert!(new.iter().any(|d| d.vdev == 0) && new.iter().any(|d| d.vdev == 1));
    // Metadata gets its second copy on the other vdev.
    let key = BlockKey::new(1, 1, 0);
    let (d0, d1) = pool.cow_write(key, 4096, true).unwrap();
    assert_ne!(d0.vdev, d1.unwrap().vdev);
}
