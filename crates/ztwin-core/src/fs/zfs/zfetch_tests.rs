//! Tests of the zfetch model against the rules read in dmu_zfetch.c of each release.

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;
use crate::sim::time::MS;

const ALL: [(ZfsRelease, u16); 7] = [
    (ZfsRelease::V0_8, 0),
    (ZfsRelease::V2_1, 0),
    (ZfsRelease::V2_1, 6),
    (ZfsRelease::V2_1, 16),
    (ZfsRelease::V2_2, 0),
    (ZfsRelease::V2_2, 11),
    (ZfsRelease::V2_3, 2),
];

/// 128 KiB records and indirect blocks: 1024 block pointers per L1; a 12.5 GiB file.
const BIG: FileShape = FileShape { maxblkid: 100_000, datablkshift: 17, indblkshift: 17 };

fn params(release: ZfsRelease, patch: u16) -> ZfetchParams {
    ZfetchParams::resolve(release, patch, &ZfetchTunables::default(), 4 << 30, CacheProperty::All).unwrap()
}

fn req(object: u32, blkid: u64, nblks: u64, shape: FileShape) -> Request {
    Request { object, blkid, nblks, length: nblks << shape.datablkshift, read: true, shape }
}

/// A reader of one file with prefetch completions delivered `lag` accesses after issue;
/// a demand read misses when its block was never prefetched.
struct Reader {
    zf: Zfetch,
    prefetched: HashSet<u64>,
    inflight: Vec<(usize, StreamId, u8, u64)>,
    step: usize,
    lag: usize,
    max_ahead: u64,
}

impl Reader {
    fn new(p: ZfetchParams, lag: usize) -> Reader {
        Reader {
            zf: Zfetch::new(p, 1),
            prefetched: HashSet::new(),
            inflight: vec![],
            step: 0,
            lag,
            max_ahead: 0,
        }
    }

    /// One read of `nblks` blocks at `blkid`; returns the data blocks prefetched.
    fn read(&mut self, blkid: u64, nblks: u64, shape: FileShape, now: Nanos) -> Range<u64> {
        self.step += 1;
        let step = self.step;
        let lag = self.lag;
        let (due, keep): (Vec<_>, Vec<_>) = self.inflight.drain(..).partition(|x| x.0 + lag <= step);
        self.inflight = keep;
        for (_, s, level, b) in due {
            self.zf.done(s, level, b, true);
        }
        let missed = (blkid..blkid + nblks).any(|b| !self.prefetched.contains(&b));
        let Some(pf) = self.zf.access(&req(1, blkid, nblks, shape), missed, now) else { return 0..0 };
        for b in pf.data.clone() {
            assert!(self.prefetched.insert(b), "block {b} prefetched twice");
            self.inflight.push((step, pf.stream, 0, b));
        }
        for b in pf.l1.clone() {
            self.inflight.push((step, pf.stream, 1, b));
        }
        self.zf.count_issued(pf.data.end - pf.data.start + pf.l1.end - pf.l1.start);
        if !pf.data.is_empty() {
            self.max_ahead = self.max_ahead.max(pf.data.end - (blkid + nblks));
        }
        pf.data
    }
}

#[test]
fn releases_map_to_their_rules_and_defaults() {
    let p08 = params(ZfsRelease::V0_8, 0);
    assert_eq!((p08.max_distance, p08.min_sec_reap, p08.array_rd_sz), (8 << 20, 2, 1 << 20));
    assert!(!p08.rules.prepare_run && !p08.rules.idistance_tunable && p08.rules.caller_limits);
    assert_eq!(params(ZfsRelease::V0_6, 0).rules, p08.rules, "0.8's rules stand in for 0.6's");
    let p215 = params(ZfsRelease::V2_1, 5);
    assert_eq!((p215.max_distance, p215.min_sec_reap), (8 << 20, 2));
    assert!(p215.rules.prepare_run && p215.rules.io_issued_kstat && !p215.rules.byte_distances);
    let p216 = params(ZfsRelease::V2_1, 6);
    assert_eq!((p216.max_distance, p216.min_distance, p216.min_sec_reap), (64 << 20, 4 << 20, 1));
    assert!(p216.rules.byte_distances && !p216.rules.io_active_limit);
    assert!(params(ZfsRelease::V2_1, 10).rules.io_active_limit);
    let p220 = params(ZfsRelease::V2_2, 3);
    assert_eq!(p220.array_rd_sz, u64::MAX);
    assert!(p220.rules.io_active_limit && !p220.rules.caller_limits && !p220.rules.reorder);
    let p224 = params(ZfsRelease::V2_2, 4);
    assert_eq!((p224.max_reorder, p224.hole_shift, p224.max_idistance), (16 << 20, 2, 64 << 20));
    assert!(p224.rules.reorder);
}

#[test]
fn tunables_a_release_lacks_are_errors_naming_them() {
    let cases = [
        (
            ZfsRelease::V0_8,
            0,
            ZfetchTunables { zfetch_min_distance: Some(1), ..Default::default() },
            "zfetch_min_distance",
        ),
        (
            ZfsRelease::V2_1,
            5,
            ZfetchTunables { zfetch_max_sec_reap: Some(1), ..Default::default() },
            "zfetch_max_sec_reap",
        ),
        (
            ZfsRelease::V0_8,
            0,
            ZfetchTunables { zfetch_max_idistance: Some(1), ..Default::default() },
            "zfetch_max_idistance",
        ),
        (
            ZfsRelease::V2_2,
            0,
            ZfetchTunables { zfetch_array_rd_sz: Some(1), ..Default::default() },
            "zfetch_array_rd_sz",
        ),
        (
            ZfsRelease::V2_2,
            3,
            ZfetchTunables { zfetch_max_reorder: Some(1), ..Default::default() },
            "zfetch_max_reorder",
        ),
        (
            ZfsRelease::V2_1,
            16,
            ZfetchTunables { zfetch_hole_shift: Some(1), ..Default::default() },
            "zfetch_hole_shift",
        ),
        (
            ZfsRelease::V2_2,
            11,
            ZfetchTunables { zfetch_max_distance: Some(0), ..Default::default() },
            "zfetch_max_distance",
        ),
    ];
    for (release, patch, t, name) in cases {
        let e = ZfetchParams::resolve(release, patch, &t, 1 << 30, CacheProperty::All).unwrap_err();
        assert!(e.to_string().contains(&format!("filesystem.zfetch.{name}")), "{e}");
    }
    let ok =
        ZfetchTunables { zfetch_max_reorder: Some(1), zfetch_min_distance: Some(1), ..Default::default() };
    assert!(ZfetchParams::resolve(ZfsRelease::V2_2, 4, &ok, 1 << 30, CacheProperty::All).is_ok());
}

/// 0.8 and 2.1.0: the lookahead doubles on each hit (1, 2, 4, ... blocks) up to
/// zfetch_max_distance (8 MiB = 64 records of 128 KiB).
#[test]
fn doubling_distance_reaches_max_distance_in_08_and_210() {
    for (release, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 0)] {
        let mut r = Reader::new(params(release, patch), 0);
        assert!(r.read(1, 1, BIG, 0).is_empty(), "the first access creates the stream");
        let mut ahead = vec![];
        for b in 2..200 {
            let pf = r.read(b, 1, BIG, b * MS);
            if !pf.is_empty() {
                ahead.push(pf.end - (b + 1));
            }
        }
        assert_eq!(&ahead[..8], &[1, 2, 4, 8, 16, 32, 64, 64], "{release:?}");
        assert_eq!(r.max_ahead, 64);
        assert_eq!(r.zf.stats().misses, 1);
        assert_eq!(r.zf.stats().hits, 198);
    }
}

/// 2.1.6+: the distance doubles from the access size up to zfetch_min_distance (4 MiB =
/// 32 records) and stays there while prefetches arrive in time.
#[test]
fn byte_distance_stops_at_min_distance_when_prefetches_are_in_time() {
    for (release, patch) in
        [(ZfsRelease::V2_1, 6), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 0), (ZfsRelease::V2_2, 11)]
    {
        let mut r = Reader::new(params(release, patch), 0);
        r.read(1, 1, BIG, 0);
        let mut ahead = vec![];
        for b in 2..300 {
            let pf = r.read(b, 1, BIG, b * MS);
            if !pf.is_empty() {
                ahead.push(pf.end - (b + 1));
            }
        }
        assert_eq!(&ahead[..7], &[1, 2, 4, 8, 16, 32, 32], "{release:?}.{patch}");
        assert_eq!(r.max_ahead, 32, "{release:?}.{patch}");
    }
}

/// 2.1.6+: prefetches completing behind the reader (zs_more) grow the distance by 1/8
/// per hit up to zfetch_max_distance (64 MiB = 512 records).
#[test]
fn late_prefetches_grow_the_distance_to_max_distance() {
    for (release, patch) in [(ZfsRelease::V2_1, 6), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 11)] {
        let mut r = Reader::new(params(release, patch), 1000);
        for b in 1..3000 {
            r.read(b, 1, BIG, b * MS);
        }
        assert_eq!(r.max_ahead, 512, "{release:?}.{patch}");
    }
}

/// 2.1.10+: doubling beyond one block stops while io_active reaches arc_c_max >> (4 +
/// datablkshift): with a 16 MiB ARC and 128 KiB blocks, 8 blocks in flight.
#[test]
fn io_active_limit_stops_doubling_in_2110() {
    let small_arc = |release, patch| {
        ZfetchParams::resolve(release, patch, &ZfetchTunables::default(), 16 << 20, CacheProperty::All)
            .unwrap()
    };
    let mut limited = Reader::new(small_arc(ZfsRelease::V2_1, 10), 10_000);
    let mut unlimited = Reader::new(small_arc(ZfsRelease::V2_1, 9), 10_000);
    for b in 1..40 {
        limited.read(b, 1, BIG, b * MS);
        unlimited.read(b, 1, BIG, b * MS);
    }
    assert_eq!(unlimited.max_ahead, 32);
    assert!(limited.max_ahead < 32, "{}", limited.max_ahead);
    assert!(limited.zf.stats().io_active >= 8);
}

/// 2.1+: data is prefetched only once the stream has seen a demand miss; indirects
/// always. The first miss then prefetches from the end of that access up to the
/// distance the stream reached meanwhile.
#[test]
fn data_prefetch_waits_for_a_miss_in_21_and_22() {
    let shape = FileShape { maxblkid: 1 << 20, datablkshift: 17, indblkshift: 12 }; // 32 ptrs
    for (release, patch) in [(ZfsRelease::V2_1, 0), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 11)] {
        let mut zf = Zfetch::new(params(release, patch), 1);
        assert!(zf.access(&req(1, 1, 1, shape), false, 0).is_none());
        let mut l1 = 0;
        for b in 2..10 {
            if let Some(pf) = zf.access(&req(1, b, 1, shape), false, 0) {
                assert!(pf.data.is_empty());
                l1 += pf.l1.end - pf.l1.start;
            }
        }
        assert!(l1 > 0, "{release:?}.{patch}: indirects are prefetched without a miss");
        let pf = zf.access(&req(1, 10, 1, shape), true, 0).unwrap();
        assert_eq!(pf.data.start, 11, "{release:?}.{patch}");
        assert!(pf.data.end - pf.data.start >= 8, "{release:?}.{patch}: the distance grew meanwhile: {pf:?}");
    }
    let mut zf = Zfetch::new(params(ZfsRelease::V0_8, 0), 1);
    zf.access(&req(1, 1, 1, BIG), false, 0);
    assert_eq!(zf.access(&req(1, 2, 1, BIG), false, 0).unwrap().data, 3..4, "0.8 has no miss gate");
}

/// The indirect prefetch runs ahead of the data: every L1 block issued covers blocks
/// beyond the data prefetched so far, and it is issued before the data reaches it.
#[test]
fn indirect_prefetch_runs_ahead_of_data() {
    for (release, patch) in ALL {
        let shape = FileShape { maxblkid: 1 << 20, datablkshift: 14, indblkshift: 14 }; // 128 ptrs
        let mut r = Reader::new(params(release, patch), 0);
        let mut l1_issued: HashSet<u64> = HashSet::new();
        for b in 1..5000u64 {
            r.step += 1;
            let Some(pf) = r.zf.access(&req(1, b, 1, shape), true, b * MS) else { continue };
            for i in pf.l1.clone() {
                assert!(l1_issued.insert(i), "L1 {i} twice");
            }
            if let Some(last) = pf.data.clone().last() {
                assert!(
                    l1_issued.contains(&(last >> 7)) || last >> 7 == 0,
                    "{release:?}.{patch}: L1 of {last}"
                );
            }
            for x in pf.data.clone() {
                r.zf.done(pf.stream, 0, x, true);
            }
            for x in pf.l1.clone() {
                r.zf.done(pf.stream, 1, x, true);
            }
        }
        assert!(l1_issued.len() > 30, "{release:?}.{patch}");
    }
}

/// Random reads create (or replace) streams and never prefetch (on a file large enough
/// that a random block continuing one of 8 streams by chance is negligible).
#[test]
fn random_reads_prefetch_nothing() {
    let huge = FileShape { maxblkid: 1 << 40, datablkshift: 14, indblkshift: 17 };
    for (release, patch) in ALL {
        let mut zf = Zfetch::new(params(release, patch), 1);
        let mut x: u64 = 12345;
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let b = 1 + (x >> 20) % (huge.maxblkid - 2);
            assert_eq!(zf.access(&req(1, b, 1, huge), true, i * MS), None, "{release:?}.{patch}");
        }
        let s = zf.stats();
        assert_eq!((s.hits, s.stride), (0, 0), "{release:?}.{patch}");
        assert!(s.misses > 4900, "{release:?}.{patch}: {s:?}");
        assert!(zf.streams(1) <= 8);
    }
}

/// Block 0, files of fewer than three blocks, and (0.8 / 2.1) requests over
/// zfetch_array_rd_sz or with primarycache=none create no stream.
#[test]
fn caller_conditions() {
    let small = FileShape { maxblkid: 1, datablkshift: 17, indblkshift: 17 };
    for (release, patch) in ALL {
        let mut zf = Zfetch::new(params(release, patch), 1);
        zf.access(&req(1, 0, 1, small), true, 0);
        assert_eq!(zf.stats().misses, 0, "{release:?}.{patch}: block 0");
        zf.access(&req(1, 1, 1, small), true, 0);
        // 0.8 has no dn_maxblkid < 2 fast path.
        let m = zf.stats().misses;
        assert_eq!(m, (release == ZfsRelease::V0_8) as u64, "{release:?}.{patch}: a two-block file");
        // 2 MiB in one request.
        zf.access(&req(1, 5, 16, BIG), true, 0);
        let big_counted = zf.stats().misses == m + 1;
        let v22 = !params(release, patch).rules.caller_limits;
        assert_eq!(big_counted, v22, "{release:?}.{patch}");
        let none =
            ZfetchParams::resolve(release, patch, &ZfetchTunables::default(), 1 << 30, CacheProperty::None);
        let mut zf = Zfetch::new(none.unwrap(), 1);
        zf.access(&req(1, 5, 1, BIG), true, 0);
        assert_eq!(zf.stats().misses == 1, v22, "{release:?}.{patch}");
    }
    let off = ZfetchTunables { zfs_prefetch_disable: Some(true), ..Default::default() };
    let p = ZfetchParams::resolve(ZfsRelease::V2_2, 11, &off, 1 << 30, CacheProperty::All).unwrap();
    let mut zf = Zfetch::new(p, 1);
    zf.access(&req(1, 5, 1, BIG), true, 0);
    assert_eq!(zf.stats(), ZfetchStats::default());
}

/// primarycache=metadata: 0.8 / 2.1 prefetch indirects only.
#[test]
fn primarycache_metadata_prefetches_no_data_before_22() {
    for (release, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 16)] {
        let p = ZfetchParams::resolve(
            release,
            patch,
            &ZfetchTunables::default(),
            1 << 30,
            CacheProperty::Metadata,
        );
        let mut zf = Zfetch::new(p.unwrap(), 1);
        for b in 1..50 {
            if let Some(pf) = zf.access(&req(1, b, 1, BIG), true, 0) {
                assert!(pf.data.is_empty());
            }
        }
        assert_eq!(zf.stats().hits, 48);
    }
}

/// Streams idle long enough are reaped (or reused) when a new stream is needed.
#[test]
fn idle_streams_are_reaped() {
    // 0.8 / 2.1.0: more than zfetch_min_sec_reap (2) whole seconds idle.
    for (release, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 0)] {
        let mut zf = Zfetch::new(params(release, patch), 1);
        for i in 0..8 {
            zf.access(&req(1, 1000 * (i + 1), 1, BIG), true, 0);
        }
        assert_eq!(zf.streams(1), 8);
        zf.access(&req(1, 50_000, 1, BIG), true, 2_999 * MS);
        assert_eq!(
            (zf.streams(1), zf.stats().max_streams),
            (8, 1),
            "{release:?}: 2.999 s is 2 whole seconds"
        );
        zf.access(&req(1, 60_000, 1, BIG), true, 3 * SEC);
        assert_eq!(zf.streams(1), 1, "{release:?}: all reaped, one created");
    }
    // 2.1.6+: streams that had a hit live zfetch_max_sec_reap (2 s); at the limit the
    // oldest idle for zfetch_min_sec_reap (1 s) is reused (and looks 1 s idle).
    let eight_hit_streams = |release, patch| {
        let mut zf = Zfetch::new(params(release, patch), 1);
        for i in 0..8 {
            zf.access(&req(1, 1000 * (i + 1), 1, BIG), true, 0);
            zf.access(&req(1, 1000 * (i + 1) + 1, 1, BIG), false, 0);
        }
        assert_eq!((zf.streams(1), zf.stats().hits), (8, 8));
        zf
    };
    for (release, patch) in [(ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 0)] {
        let mut zf = eight_hit_streams(release, patch);
        zf.access(&req(1, 50_000, 1, BIG), true, 500 * MS);
        assert_eq!((zf.streams(1), zf.stats().max_streams), (8, 1), "{release:?}.{patch}: none idle 1 s");
        zf.access(&req(1, 60_000, 1, BIG), true, 1_500 * MS);
        assert_eq!((zf.streams(1), zf.stats().max_streams), (8, 1), "{release:?}.{patch}: the oldest reused");
        zf.access(&req(1, 70_000, 1, BIG), true, 2_500 * MS);
        assert_eq!(zf.streams(1), 1, "{release:?}.{patch}: all idle 2 s: one reused, the rest deleted");
    }
    // 2.2.4+: the same in whole seconds of gethrestime_sec(): idle means a full second
    // boundary more.
    let mut zf = eight_hit_streams(ZfsRelease::V2_2, 11);
    zf.access(&req(1, 50_000, 1, BIG), true, 1_500 * MS);
    assert_eq!((zf.streams(1), zf.stats().max_streams), (8, 1), "second 1: none idle");
    zf.access(&req(1, 60_000, 1, BIG), true, 2_500 * MS);
    assert_eq!((zf.streams(1), zf.stats().max_streams), (8, 1), "second 2: the oldest reused");
    zf.access(&req(1, 70_000, 1, BIG), true, 3_000 * MS);
    assert_eq!(zf.streams(1), 2, "second 3: the six others deleted, the one reused at 2 s kept");
}

/// A stream with prefetches in flight is never reaped (2.1+: zs_refs).
#[test]
fn streams_with_prefetches_in_flight_survive() {
    let mut zf = Zfetch::new(params(ZfsRelease::V2_1, 16), 1);
    zf.access(&req(1, 1000, 1, BIG), true, 0);
    let pf = zf.access(&req(1, 1001, 1, BIG), true, 0).unwrap();
    zf.access(&req(1, 5000, 1, BIG), true, 10 * SEC);
    assert_eq!(zf.streams(1), 2, "the busy stream stays");
    for b in pf.data.clone() {
        zf.done(pf.stream, 0, b, true);
    }
    for b in pf.l1.clone() {
        zf.done(pf.stream, 1, b, true);
    }
    zf.access(&req(1, 9000, 1, BIG), true, 20 * SEC);
    assert_eq!(zf.streams(1), 1);
}

/// At most zfetch_max_streams streams per file, fewer for small files (file size /
/// zfetch_max_distance); interleaved sequential readers beyond that are not followed.
#[test]
fn max_streams_is_honoured() {
    for (release, patch) in ALL {
        let mut zf = Zfetch::new(params(release, patch), 1);
        for round in 0..20u64 {
            for reader in 0..12u64 {
                zf.access(&req(1, 1 + reader * 5000 + round, 1, BIG), true, round * MS);
                assert!(zf.streams(1) <= 8, "{release:?}.{patch}");
            }
        }
        assert_eq!(zf.streams(1), 8);
        assert!(zf.stats().max_streams > 0 || release != ZfsRelease::V0_8, "{release:?}.{patch}");
        // A 25 MiB file: one stream with 64 MiB max distance, three with 8 MiB.
        let small = FileShape { maxblkid: 200, datablkshift: 17, indblkshift: 17 };
        let mut zf = Zfetch::new(params(release, patch), 1);
        for reader in 0..6 {
            zf.access(&req(2, 3 + reader * 30, 1, small), true, 0);
        }
        let expect = if params(release, patch).max_distance == 8 << 20 { 3 } else { 1 };
        assert_eq!(zf.streams(2), expect, "{release:?}.{patch}");
    }
}

/// Nothing past the end of the file; 2.x drops the stream when an access reaches it.
#[test]
fn end_of_file() {
    let shape = FileShape { maxblkid: 99, datablkshift: 17, indblkshift: 17 };
    for (release, patch) in ALL {
        let mut zf = Zfetch::new(params(release, patch), 1);
        for b in 1..=99 {
            if let Some(pf) = zf.access(&req(1, b, 1, shape), true, b * MS) {
                assert!(
                    pf.data.end <= 100 && (pf.l1.is_empty() || pf.l1.end <= 1),
                    "{release:?}.{patch}: {pf:?}"
                );
            }
        }
        let left = if release == ZfsRelease::V0_8 { 1 } else { 0 };
        assert_eq!(zf.streams(1), left, "{release:?}.{patch}");
    }
}

/// 2.2.4+: accesses slightly out of order keep the stream (future, then hit across the
/// stored range); an access just behind a recent stream is ignored (past).
#[test]
fn reordered_requests_in_224() {
    let mut zf = Zfetch::new(params(ZfsRelease::V2_2, 11), 1);
    zf.access(&req(1, 1, 1, BIG), true, 0); // miss: stream expects 2
    assert!(zf.access(&req(1, 4, 1, BIG), true, 0).is_none()); // future [2, 3) relative
    assert!(zf.access(&req(1, 3, 1, BIG), true, 0).is_none()); // merged: [1, 3)
    let s = zf.stats();
    assert_eq!((s.misses, s.future, s.hits), (1, 2, 0));
    let pf = zf.access(&req(1, 2, 1, BIG), true, 0).unwrap(); // hit through 4
    assert_eq!(pf.data.start, 5);
    assert_eq!(zf.stats().hits, 1);
    assert_eq!(pf.data.end, 8, "3 blocks (the advance) ahead");
    assert!(zf.access(&req(1, 3, 1, BIG), true, 0).is_none());
    assert_eq!(zf.stats().past, 1);
    assert_eq!(zf.streams(1), 1);
    // An access crossing the position (3..7 against 5) is a hit for its new part; the
    // data prefetch continues where it stopped.
    let pf = zf.access(&req(1, 3, 4, BIG), true, 0).unwrap();
    assert_eq!(zf.stats().hits, 2);
    assert_eq!(pf.data.start, 8);
    // Earlier releases see these as new streams.
    let mut zf = Zfetch::new(params(ZfsRelease::V2_2, 3), 1);
    for b in [1, 4, 3, 2] {
        zf.access(&req(1, b, 1, BIG), true, 0);
    }
    assert_eq!(zf.stats().hits, 1, "only 3 -> 4 continues a stream");
}

/// 2.2.4+: every other block is too holey (50% > 1/4): kept for the future, no prefetch;
/// three blocks out of four fill enough to advance (stride).
#[test]
fn stride_fill_threshold_in_224() {
    let mut zf = Zfetch::new(params(ZfsRelease::V2_2, 11), 1);
    zf.access(&req(1, 1, 1, BIG), true, 0); // stream expects 2
    for b in [3, 5, 7] {
        assert!(zf.access(&req(1, b, 1, BIG), true, 0).is_none());
    }
    assert_eq!(zf.stats().stride, 0);
    let mut zf = Zfetch::new(params(ZfsRelease::V2_2, 11), 1);
    zf.access(&req(1, 1, 1, BIG), true, 0); // stream expects 2
                                            // Relative ranges [1,4) after 3,4,5: one hole in 4 blocks (<= 4 >> 2).
    zf.access(&req(1, 3, 1, BIG), true, 0);
    zf.access(&req(1, 4, 1, BIG), true, 0);
    zf.access(&req(1, 5, 1, BIG), true, 0);
    assert_eq!(zf.stats().stride, 1);
}

#[test]
fn kstat_rows_follow_the_release() {
    let names = |r, p| {
        ZfetchStats::default().rows(ZfsFeatures::resolve(r, p).zfetch).iter().map(|x| x.0).collect::<Vec<_>>()
    };
    assert_eq!(names(ZfsRelease::V0_8, 0), ["hits", "misses", "max_streams"]);
    assert_eq!(names(ZfsRelease::V2_1, 6), ["hits", "misses", "max_streams", "io_issued"]);
    assert_eq!(names(ZfsRelease::V2_2, 0), ["hits", "misses", "max_streams", "io_issued", "io_active"]);
    assert_eq!(
        names(ZfsRelease::V2_2, 4),
        ["hits", "future", "stride", "past", "misses", "max_streams", "io_issued", "io_active"]
    );
}

fn arb_rel() -> impl Strategy<Value = (ZfsRelease, u16)> {
    proptest::sample::select(ALL.to_vec())
}

proptest! {
    /// Whatever the access pattern and completion order: nothing is prefetched past the
    /// end of the file, no stream issues a block twice, a file never has more than
    /// zfetch_max_streams streams, and once every prefetch completed no stream holds a
    /// stale reference (every slab slot is free or on a list with one reference).
    #[test]
    fn invariants(
        rel in arb_rel(),
        maxblkid in 2u64..3000,
        ops in proptest::collection::vec((0u8..4, 0u64..3000, 1u64..6, 0u64..700, any::<bool>(), 0u8..4), 1..300),
    ) {
        let (release, patch) = rel;
        let shape = FileShape { maxblkid, datablkshift: 14, indblkshift: 14 };
        let mut zf = Zfetch::new(params(release, patch), 2);
        let mut seen: HashSet<(StreamId, u8, u64)> = HashSet::new();
        let mut inflight: Vec<(StreamId, u8, u64)> = vec![];
        let mut now = 0;
        let mut pos = [1u64, 1u64];
        for (kind, b, n, dt, missed, deliver) in ops {
            now += dt * MS;
            let object = 1 + (b % 2) as u32;
            let p = &mut pos[(object - 1) as usize];
            // Mostly sequential, sometimes a jump, sometimes a small reorder.
            let blkid = match kind { 0 | 1 => *p, 2 => b % (maxblkid + 1), _ => p.saturating_sub(n) + 2 * n };
            let nblks = n.min(maxblkid + 1 - blkid.min(maxblkid)).max(1);
            *p = blkid + nblks;
            if *p > maxblkid { *p = 1; }
            if let Some(pf) = zf.access(&req(object, blkid, nblks, shape), missed, now) {
                prop_assert!(pf.data.end <= maxblkid + 1, "{:?}", pf);
                prop_assert!(pf.l1.is_empty() || (pf.l1.end - 1) << 7 <= maxblkid, "{:?}", pf);
                for x in pf.data.clone() {
                    prop_assert!(seen.insert((pf.stream, 0, x)), "L0 {} twice by {:?}", x, pf.stream);
                    inflight.push((pf.stream, 0, x));
                }
                for x in pf.l1.clone() {
                    prop_assert!(seen.insert((pf.stream, 1, x)), "L1 {} twice by {:?}", x, pf.stream);
                    inflight.push((pf.stream, 1, x));
                }
            }
            prop_assert!(zf.streams(object) <= 8);
            // Deliver some completions, oldest first.
            let k = (deliver as usize * inflight.len()).div_ceil(3).min(inflight.len());
            for (s, level, x) in inflight.drain(..k) {
                zf.done(s, level, x, true);
            }
        }
        for (s, level, x) in inflight.drain(..) {
            zf.done(s, level, x, true);
        }
        if release != ZfsRelease::V0_8 {
            let listed: u32 = zf.streams(1) + zf.streams(2);
            prop_assert_eq!(listed as usize + zf.free.len(), zf.slab.len());
            for (i, s) in zf.slab.iter().enumerate() {
                if !zf.free.contains(&(i as u32)) {
                    prop_assert_eq!(s.refs, 1);
                    prop_assert_eq!(s.callers, 0);
                }
            }
            prop_assert_eq!(zf.stats().io_active, 0);
        }
    }
}

/// The slots a file remembers for prefetching its streams include all those on its list
/// as streams come and go under random reads (at most zfetch_max_streams' default on the
/// list, reaped oldest first: the ones left are among the last linked). The memory is a
/// hint only: a stream it misses is found by the walk as before.
#[test]
fn remembered_slots_cover_the_list() {
    let huge = FileShape { maxblkid: 1 << 40, datablkshift: 14, indblkshift: 17 };
    for (release, patch) in ALL {
        let mut zf = Zfetch::new(params(release, patch), 1);
        let mut x: u64 = 777;
        for i in 0..3000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let b = 1 + (x >> 20) % (huge.maxblkid - 2);
            zf.access(&req(1, b, 1, huge), true, i * 300 * MS);
            let d = zf.files[1];
            let mut s = d.head;
            while s != NIL {
                assert!(d.recent.contains(&s), "{release:?}.{patch}: stream {s} not remembered");
                s = zf.slab[s as usize].next;
            }
        }
        zf.prefetch_streams(1);
        zf.prefetch_streams(99);
    }
}

#[test]
fn millions_of_files_reserve_a_bounded_stream_slab() {
    // 16M one-row tables once reserved 2 streams x 8 per file up front (34 GB).
    let zf = Zfetch::new(params(ZfsRelease::V2_2, 11), 16_777_215);
    assert!(zf.slab.capacity() <= STREAMS_RESERVED && zf.free.capacity() <= STREAMS_RESERVED);
    assert_eq!(zf.files.len(), 16_777_216);
}

/// 2.3's prescient indirect prefetch (84d7d53e91): a miss asks for the L1 blocks that
/// begin inside the access after its first block; a hit for those beyond the stream's
/// indirect prefetch; 2.2.11 for none; `zfetch_max_idistance` is 128 MiB.
#[test]
fn prescient_indirects_of_23() {
    assert_eq!(params(ZfsRelease::V2_3, 2).max_idistance, 128 << 20);
    assert_eq!(params(ZfsRelease::V2_2, 11).max_idistance, 64 << 20);
    for (rel, want) in [(ZfsRelease::V2_2, 0..0), (ZfsRelease::V2_3, 1..3)] {
        let mut zf = Zfetch::new(params(rel, 11), 1);
        // A miss of 3000 records from record 10: L1 blocks 1 and 2 begin inside it (L1 0
        // holds the access's first record, read by the demand walk).
        assert!(zf.prepare(&req(1, 10, 3000, BIG), 0).is_none());
        assert_eq!(zf.take_prescient(), want, "{rel:?}");
        assert_eq!(zf.take_prescient(), 0..0, "taken once");
    }
    let mut zf = Zfetch::new(params(ZfsRelease::V2_3, 2), 1);
    // One record inside an L1 block: nothing.
    zf.prepare(&req(1, 2000, 1, BIG), 0);
    assert!(zf.take_prescient().is_empty());
    // A stream at 2001 hit by 2001..2101: from the stream's old indirect end (2001, a new
    // stream's) or the second record, whichever is later: L1 block 2 (records 2048..)
    // begins inside the access.
    let p = zf.prepare(&req(1, 2001, 100, BIG), MS).expect("a hit");
    assert_eq!(zf.take_prescient(), 2..3);
    zf.run(p, true, MS);
    // The file's end cuts it: a miss over the last records asks for no L1 past the end.
    zf.prepare(&req(1, 98_000, 2_000, BIG), 2 * MS);
    let r = zf.take_prescient();
    assert!(r.end <= (BIG.maxblkid >> 10) + 1, "{r:?}");
}
