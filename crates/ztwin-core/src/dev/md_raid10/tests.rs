use super::*;
use crate::config::{test_variant, DeviceConfig};
use crate::sim::time::{MS, US};
use proptest::prelude::*;

const CHUNK: u64 = 512 << 10;
/// Sectors per 512 KiB chunk.
const CS: u64 = CHUNK >> 9;

fn array(layout: &str, n: usize) -> ArrayConfig {
    ArrayConfig {
        name: "md0".into(),
        level: "raid10".into(),
        members: (0..n).map(|i| format!("sd{i}")).collect(),
        layout: layout.into(),
        chunk_bytes: CHUNK,
    }
}

fn member(i: usize, flush_ns: Nanos) -> DeviceConfig {
    let mut d = test_variant().devices[0].clone();
    d.name = format!("sd{i}");
    d.iops_limit = None;
    d.latency_sigma = 0.0;
    d.read_latency_ns = MS;
    d.write_latency_ns = MS;
    d.transfer_bytes_per_sec = 1e15;
    d.parallelism = 1;
    d.capacity_bytes = Some(100 << 30);
    d.flush_latency_ns = flush_ns;
    d
}

/// Six members of 100 GiB in mdadm's default layout (n2, 512 KiB chunks), and their devices.
fn n2_six() -> (Raid10, Vec<Device>) {
    let devs: Vec<Device> = (0..6).map(|i| Device::new(&member(i, 0), i as u64)).collect();
    let r = Raid10::new(&array("n2", 6), (0..6).collect(), 100 << 30, |f| f.into()).unwrap();
    (r, devs)
}

/// n2 over six disks: chunk c's two copies are on disks 2c mod 6 and 2c+1 mod 6, at chunk
/// row 2c div 6 of each, the sector's offset in its chunk kept.
#[test]
fn near_2_maps_each_chunk_to_two_adjacent_disks() {
    let (r, _) = n2_six();
    let g = r.geometry();
    assert_eq!(g.copies(), 2);
    // Chunk 0 on disks 0 and 1; chunk 1 on 2 and 3; chunk 2 on 4 and 5; chunk 3 on 0 and 1, row 1.
    assert_eq!(g.find_phys(0)[..2], [(0, 0), (1, 0)]);
    assert_eq!(g.find_phys(CS + 7)[..2], [(2, 7), (3, 7)]);
    assert_eq!(g.find_phys(2 * CS + 100)[..2], [(4, 100), (5, 100)]);
    assert_eq!(g.find_phys(3 * CS + 5)[..2], [(0, CS + 5), (1, CS + 5)]);
    for c in 0..1000u64 {
        let s = c * CS + (c * 37) % CS;
        let want = |k: u64| (((2 * c + k) % 6) as u32, (2 * c + k) / 6 * CS + s % CS);
        assert_eq!(g.find_phys(s)[..2], [want(0), want(1)], "chunk {c}");
        assert_eq!(g.find_virt(want(0).1, want(0).0), s);
        assert_eq!(g.find_virt(want(1).1, want(1).0), s);
    }
    // Array size: 6 members x 100 GiB / 2 copies.
    assert_eq!(g.array_bytes(), 300 << 30);
}

/// With five disks (n2 need not divide them), a chunk's copies wrap to the next row.
#[test]
fn near_2_on_an_odd_number_of_disks_wraps_to_the_next_row() {
    let g = Geometry::new("n2", CHUNK, 5, 100 << 30).unwrap();
    // Chunk 2: copies at 4 (row 0) and 0 (row 1).
    assert_eq!(g.find_phys(2 * CS)[..2], [(4, 0), (0, CS)]);
    assert_eq!(g.find_virt(CS, 0), 2 * CS);
}

/// A write goes to both copies and completes with the later; the array counts it once.
#[test]
fn a_write_goes_to_both_copies() {
    let (mut r, mut devs) = n2_six();
    // Disk 3 busy: its copy completes a millisecond later.
    devs[3].submit_at(0, Op::Read, 0, 4096);
    let (done, ios) = r.submit(&mut devs, 0, Op::Write, CHUNK + 8192, 16384, true);
    assert_eq!((done, ios), (2 * MS, 2));
    let w: Vec<u64> = devs.iter().map(|d| d.counters().writes).collect();
    assert_eq!(w, [0, 0, 1, 1, 0, 0]);
    assert_eq!(devs[2].counters().write_bytes, 16384);
    assert_eq!(devs[2].last_offset(), 8192 + 16384, "same offset in the chunk, row 0");
    let c = r.counters();
    assert_eq!((c.writes, c.member_writes, c.fua_writes), (1, 2, 2));
}

/// A read goes to one copy: the first whose disk has nothing pending; when both are busy,
/// the one whose head (the end of its last completed request) is nearer.
#[test]
fn a_read_goes_to_one_copy_by_read_balance() {
    let (mut r, mut devs) = n2_six();
    let (done, ios) = r.submit(&mut devs, 0, Op::Read, 0, 16384, false);
    assert_eq!((done, ios), (MS, 1));
    assert_eq!((devs[0].counters().reads, devs[1].counters().reads), (1, 0), "idle: the first copy");
    // Disk 0 still busy at 0.5 ms: the idle second copy takes the next read.
    r.submit(&mut devs, 500 * US, Op::Read, 3 * CHUNK, 16384, false);
    assert_eq!((devs[0].counters().reads, devs[1].counters().reads), (1, 1));
    // Disk 0 idle again at 1.2 ms (its head at sector 32): it takes chunk 6 (row 2);
    // at 1.6 ms disk 0 is busy and disk 1 idle (head 1056): chunk 9 (row 3) goes to 1.
    r.submit(&mut devs, 1200 * US, Op::Read, 6 * CHUNK, 4096, false);
    r.submit(&mut devs, 1600 * US, Op::Read, 9 * CHUNK, 4096, false);
    assert_eq!((devs[0].counters().reads, devs[1].counters().reads), (2, 2));
    // At 2.1 ms both are busy (done at 2.2 and 2.6 ms): the nearer head wins. Heads: disk 0
    // at 32 (its read of row 0, done at 1 ms; the row-2 read is not done), disk 1 at 1056
    // (row 1, done at 1.5 ms). Sector 1152 (row 1 + 128) is nearer disk 1.
    r.submit(&mut devs, 2100 * US, Op::Read, 3 * CHUNK + 65536, 4096, false);
    assert_eq!((devs[0].counters().reads, devs[1].counters().reads), (2, 3));
}

/// A request that crosses a chunk boundary is split there: each part goes to its chunk's
/// copies.
#[test]
fn a_request_spanning_a_chunk_boundary_is_split() {
    let (mut r, mut devs) = n2_six();
    let (_, ios) = r.submit(&mut devs, 0, Op::Write, CHUNK - 8192, 16384, false);
    assert_eq!(ios, 4);
    assert_eq!(r.counters().splits, 1);
    let w: Vec<u64> = devs.iter().map(|d| d.counters().write_bytes).collect();
    assert_eq!(w, [8192, 8192, 8192, 8192, 0, 0]);
    assert_eq!(devs[0].last_offset(), CHUNK, "the end of chunk 0 on disk 0");
    assert_eq!(devs[2].last_offset(), 8192, "the start of chunk 1 on disk 2");
    let (_, ios) = r.submit(&mut devs, 0, Op::Read, 2 * CHUNK - 4096, 8192, false);
    assert_eq!((ios, r.counters().splits), (2, 2));
}

/// A flush goes to every member and completes with the slowest.
#[test]
fn a_flush_reaches_every_member() {
    let mut devs: Vec<Device> = (0..6).map(|i| Device::new(&member(i, (i as u64 + 1) * MS), 1)).collect();
    let mut r = Raid10::new(&array("n2", 6), (0..6).collect(), 100 << 30, |f| f.into()).unwrap();
    let (done, ios) = r.flush(&mut devs, 10);
    assert_eq!((done, ios), (10 + 6 * MS, 6));
    assert!(devs.iter().all(|d| d.counters().flushes == 1));
}

/// Bad layouts and chunks are refused, naming the key.
#[test]
fn bad_layouts_are_refused_by_key() {
    let bad = |a: ArrayConfig, key: &str| {
        let e =
            Raid10::new(&a, (0..a.members.len()).collect(), 100 << 30, |f| format!("arrays[0] (md0).{f}"))
                .unwrap_err()
                .to_string();
        assert!(e.contains(&format!("arrays[0] (md0).{key}")), "{e}");
    };
    bad(array("x2", 6), "layout");
    bad(array("n", 6), "layout");
    bad(array("n1", 6), "layout");
    bad(array("n7", 6), "layout");
    bad(ArrayConfig { chunk_bytes: 3 << 10, ..array("n2", 6) }, "chunk_bytes");
    bad(ArrayConfig { chunk_bytes: 2048, ..array("n2", 6) }, "chunk_bytes");
    bad(ArrayConfig { level: "raid5".into(), ..array("n2", 6) }, "level");
    assert_eq!(parse_layout("f2"), Some((1, 2, false)));
    assert_eq!(parse_layout("o3"), Some((1, 3, true)));
}

proptest! {
    /// Every sector of a write reaches `copies` members, each a different disk, at an
    /// address that maps back to it (for n, f and o layouts on 2 to 8 disks); the members
    /// write `copies` times the bytes.
    #[test]
    fn every_byte_written_reaches_every_copy(
        layout in prop::sample::select(vec!["n2", "f2", "o2", "n3", "f3"]),
        disks in 3u32..9,
        chunk_kib in prop::sample::select(vec![4u64, 64, 512]),
        writes in prop::collection::vec((0u64..1 << 30, 1u32..600), 1..40),
    ) {
        let chunk = chunk_kib << 10;
        let member_bytes = 8u64 << 30;
        let g = Geometry::new(layout, chunk, disks, member_bytes).unwrap();
        let n = g.copies();
        for &(sector0, len) in &writes {
            let sector0 = sector0 % (g.array_sectors - 600);
            // Which (disk, address) each array sector of the request landed on.
            let mut s = sector0;
            while s < sector0 + u64::from(len) {
                let part = g.first_part(s, sector0 + u64::from(len) - s);
                prop_assert!(part >= 1);
                // A part stays inside one chunk.
                prop_assert!(part == u64::from(len) || (s & (g.chunk_sectors() - 1)) + part <= g.chunk_sectors());
                let phys = g.find_phys(s);
                for k in 0..part {
                    let mut seen = Vec::new();
                    for &(d, a) in &phys[..n] {
                        prop_assert!(d < disks);
                        prop_assert!(a + k < g.dev_sectors, "{a} + {k} beyond {}", g.dev_sectors);
                        prop_assert_eq!(g.find_virt(a + k, d), s + k);
                        prop_assert!(!seen.contains(&d));
                        seen.push(d);
                    }
                }
                s += part;
            }
        }
        // Through the devices: member write bytes are copies times the array's.
        let cfgs: Vec<DeviceConfig> = (0..disks as usize).map(|i| member(i, 0)).collect();
        let mut devs: Vec<Device> = cfgs.iter().map(|c| Device::new(c, 1)).collect();
        let a = ArrayConfig { layout: layout.into(), chunk_bytes: chunk, ..array(layout, disks as usize) };
        let mut r = Raid10::new(&a, (0..disks as usize).collect(), member_bytes, |f| f.into()).unwrap();
        let mut total = 0u64;
        for (t, &(sector0, len)) in writes.iter().enumerate() {
            let sector0 = sector0 % (g.array_sectors - 600);
            r.submit(&mut devs, t as u64, Op::Write, sector0 << 9, len << 9, false);
            total += u64::from(len) << 9;
        }
        let member_total: u64 = devs.iter().map(|d| d.counters().write_bytes).sum();
        prop_assert_eq!(member_total, total * n as u64);
    }
}
