//! Tests of the L2ARC: feed limits, boost, L2-only headers, L2 hits, the ring, eligibility,
//! device loss, rebuild, invariants and determinism.
use super::*;
use crate::cache::arc::slab::{State, F_L2, F_L2CACHE, F_L2PF};
use crate::cache::arc::tests::{check_invariants, hdr_full_size};
use crate::cache::arc::{Arc, ArcAccess, ArcParams, BlockInfo, BlockKey, BufType, ReadFlags};
use crate::config::{ArcTunables, CacheProperty, ZfsRelease};
use crate::sim::time::{Nanos, MS, SEC};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const DEMAND: ReadFlags = ReadFlags { prefetch: false, uncacheable: false };
const PREFETCH: ReadFlags = ReadFlags { prefetch: true, uncacheable: false };

fn arc(release: ZfsRelease, arc_max: u64) -> Arc {
    Arc::new(&ArcParams {
        release,
        // 2 GiB: c_min 64 MiB, so 0.8 accepts a zfs_arc_max of 128 MiB.
        ram_bytes: 2 * GIB,
        tunables: ArcTunables {
            zfs_arc_max: arc_max,
            zfs_compressed_arc_enabled: None,
            ..Default::default()
        },
    })
}

fn l2p(capacity: u64, sc: CacheProperty, tunables: L2arcTunables, patch: u16) -> L2arcParams {
    L2arcParams {
        patch,
        config: L2arcConfig {
            devices: vec![L2arcDeviceConfig { capacity, ashift: 12 }],
            secondarycache: sc,
            tunables,
        },
        arc_warm_at_first_eviction: false,
        expected_blocks: 0,
        key_space: Vec::new(),
    }
}

/// Cache devices of `caps` bytes each (4K sectors), in that order.
fn l2pn(caps: &[u64], sc: CacheProperty, tunables: L2arcTunables, patch: u16) -> L2arcParams {
    let mut p = l2p(0, sc, tunables, patch);
    p.config.devices = caps.iter().map(|&capacity| L2arcDeviceConfig { capacity, ashift: 12 }).collect();
    p
}

fn with_l2(release: ZfsRelease, arc_max: u64, capacity: u64, patch: u16) -> Arc {
    let mut a = arc(release, arc_max);
    a.attach_l2arc(&l2p(capacity, CacheProperty::All, L2arcTunables::default(), patch)).unwrap();
    a
}

fn k(i: u64) -> BlockKey {
    BlockKey::new(1, 0, i)
}

fn data(lsize: u32, psize: u32) -> BlockInfo {
    BlockInfo { lsize, psize, kind: BufType::Data }
}

fn meta(lsize: u32, psize: u32) -> BlockInfo {
    BlockInfo { lsize, psize, kind: BufType::Metadata }
}

/// Reads blocks from..to once each, 1 ms apart; returns the time after.
fn read_range(a: &mut Arc, from: u64, to: u64, t0: Nanos) -> Nanos {
    let mut t = t0;
    for i in from..to {
        a.access(k(i), data(16384, 12288), DEMAND, t);
        t += MS;
    }
    t
}

/// Every L2 invariant the model must keep.
fn check_l2(a: &Arc) {
    check_invariants(a);
    let s = a.stats();
    let Some(l2) = &a.l2 else { return };
    let (mut lsum, mut psum, mut n, mut only, mut lb) = (0u64, 0u64, 0usize, 0u64, 0u64);
    for (d, x) in l2.devs.iter().enumerate() {
        let dev = &x.dev;
        let (mut asum, mut dlb) = (0u64, 0u64);
        for seq in dev.ring.head..dev.ring.tail {
            let e = dev.ring.get(seq);
            if e.is_dead() {
                continue;
            }
            if e.is_log() {
                dlb += e.psize() as u64;
                continue;
            }
            assert_eq!(l2.find(e.key), Some((d, seq)), "live entry indexed, on its device");
            lsum += e.lsize() as u64;
            psum += e.psize() as u64;
            asum += dev.asize(e.psize() as u64);
            n += 1;
            match a.slab.find(e.key) {
                Some(i) => {
                    let h = &a.slab.hdrs[i as usize];
                    assert!(h.flags & F_L2 != 0, "ARC header of an L2 block has F_L2");
                    assert_eq!(l2.seq(h.l2seq), (d, seq), "l2seq locates the copy on its device");
                    let loc = l2.locate(e.key).expect("indexed");
                    assert_eq!(h.flags & F_L2PF != 0, loc.prefetch, "F_L2PF mirrors the index");
                }
                None => only += 1,
            }
        }
        assert_eq!(dev.alloc, asum + dlb, "device {d}");
        assert!(dev.alloc <= dev.capacity(), "device {d}");
        lb += dlb;
    }
    assert_eq!(n, a.l2arc_blocks());
    assert_eq!((s.l2_size, s.l2_asize), (lsum, psum));
    assert_eq!(s.l2_log_blk_asize, lb);
    assert!(s.l2_asize <= l2.total_capacity());
    assert_eq!(s.l2_hdr_size, only * HDR_L2ONLY_SIZE);
    // Every slab header with F_L2 is on the device.
    let with_l2 = a.slab.hdrs.iter().filter(|h| h.state != State::Free && h.flags & F_L2 != 0).count() as u64;
    assert_eq!(with_l2 + only, n as u64);
    // Every ARC miss is an L2 hit or an L2 miss.
    assert_eq!(s.l2_hits + s.l2_misses, s.misses);
    assert_eq!(s.l2_writes_sent, s.l2_writes_done);
}

#[test]
fn tunable_defaults_per_release() {
    let t = L2arcTunables::default();
    let s = t.resolve(ZfsRelease::V0_8, 0).unwrap();
    assert_eq!((s.write_max, s.write_boost, s.headroom, s.headroom_boost), (8 * MIB, 8 * MIB, 2, 200));
    assert_eq!((s.feed_secs, s.feed_min_ms, s.feed_again, s.noprefetch), (1, 200, true, true));
    assert_eq!((s.meta_percent, s.features.persistent, s.rebuild_enabled), (None, false, false));
    let s = t.resolve(ZfsRelease::V2_2, 6).unwrap();
    assert_eq!((s.write_max, s.headroom, s.meta_percent), (8 * MIB, 2, Some(33)));
    let s = t.resolve(ZfsRelease::V2_2, 7).unwrap();
    assert_eq!((s.write_max, s.write_boost, s.headroom), (32 * MIB, 32 * MIB, 8));
    assert!(s.features.quarter_cap && s.rebuild_enabled);
    // Parameters the release does not have are errors.
    let bad = L2arcTunables { l2arc_mfuonly: Some(1), ..Default::default() };
    assert!(bad.resolve(ZfsRelease::V0_8, 0).is_err());
    let two = L2arcTunables { l2arc_mfuonly: Some(2), ..Default::default() };
    assert!(two.resolve(ZfsRelease::V2_2, 5).is_err());
    assert!(two.resolve(ZfsRelease::V2_2, 6).is_ok());
    // 0.6's L2ARC (no compressed L2, a different feed) is not modelled: refused.
    let e = t.resolve(ZfsRelease::V0_6, 0).unwrap_err().to_string();
    assert!(e.contains("filesystem.cache") && e.contains("not modelled"), "{e}");
    // serde: unknown keys rejected, absent keys default.
    let cfg: L2arcConfig = serde_json::from_str(
        r#"{"devices":[{"capacity":1000000000,"ashift":12}],"tunables":{"l2arc_write_max":1}}"#,
    )
    .unwrap();
    assert_eq!((cfg.secondarycache, cfg.tunables.l2arc_write_max), (CacheProperty::All, Some(1)));
    assert!(serde_json::from_str::<L2arcTunables>(r#"{"l2arc_write_maxx":1}"#).is_err());
}

#[test]
fn no_l2_means_no_l2_counters() {
    let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
    read_range(&mut a, 0, 30_000, 0);
    let s = a.stats();
    assert_eq!((s.l2_misses, s.l2_hdr_size, s.evict_l2_eligible), (0, 0, 0));
    assert!(!a.l2arc_feed(0).fed);
}

#[test]
fn feed_never_writes_more_than_its_target() {
    for (rel, patch, cold) in
        [(ZfsRelease::V0_8, 0, 16 * MIB), (ZfsRelease::V2_1, 0, 16 * MIB), (ZfsRelease::V2_2, 11, 64 * MIB)]
    {
        let mut a = with_l2(rel, 256 * MIB, 8 * GIB, patch);
        let mut t = read_range(&mut a, 0, 40_000, 0);
        let f = a.l2arc_feed(t);
        // Cold: write_max + boost (+ worst-case log-block overhead from 2.1).
        assert!(f.target >= cold && f.target <= cold + cold / 4, "{rel:?} target {}", f.target);
        assert!(f.asize_written <= f.target && f.asize_written > f.target / 2, "{rel:?} {f:?}");
        assert_eq!(f.next_feed_at, t + 200 * MS, "busy feed: l2arc_feed_min_ms");
        for _ in 0..20 {
            t = read_range(&mut a, 100_000 + t / MS, 100_000 + t / MS + 2000, t);
            let f = a.l2arc_feed(t);
            assert!(f.asize_written <= f.target, "{rel:?} {f:?}");
            check_l2(&a);
        }
        a.set_arc_warm(true);
        let f = a.l2arc_feed(t);
        assert!(f.target < cold && f.target >= cold / 2, "{rel:?} warm target {}", f.target);
        assert!(f.asize_written <= f.target);
    }
}

/// The feed counts its CPU work: every header passed (the warm scan from the tails walks
/// exactly as many as the lists hold up to the headroom), a copy for every buffer whose
/// psize does not fill whole sectors of the cache device, a compression again for every
/// compressed block when compressed ARC is off, and the entries l2arc_evict drops.
#[test]
fn feed_counts_its_cpu_work() {
    // 1000 blocks of 16K stored as 12K: whole 4K sectors, written from b_pabd.
    let mut a = with_l2(ZfsRelease::V0_8, 256 * MIB, 64 * MIB, 0);
    a.set_arc_warm(true);
    let t = read_range(&mut a, 0, 1000, 0);
    let f = a.l2arc_feed(t);
    assert!(f.buffers > 0 && f.buffers < 1000, "{f:?}");
    // The scan passes headers from the tail: every one written, and the one that did not
    // fit (the pass stopped there, `full`).
    assert_eq!(f.headers_scanned, u64::from(f.buffers) + 1, "{f:?}");
    assert_eq!((f.copy_bytes, f.compress_bytes, f.headers_evicted), (0, 0, 0));
    // The next feed passes the blocks already written before it finds eligible ones.
    let f2 = a.l2arc_feed(t + SEC);
    assert!(f2.headers_scanned > u64::from(f2.buffers), "{f2:?}");

    // psize 5120 (a pool of 512-byte sectors): asize 8192 on the 4K-sector cache device,
    // l2arc_apply_transforms copies each into an 8K buffer.
    let mut b = with_l2(ZfsRelease::V0_8, 256 * MIB, 64 * MIB, 0);
    b.set_arc_warm(true);
    for i in 0..200 {
        b.access(k(i), data(16384, 5120), DEMAND, i * MS);
    }
    let f = b.l2arc_feed(SEC);
    assert_eq!(f.buffers, 200);
    assert_eq!(f.copy_bytes, 200 * 8192);
    assert_eq!(f.compress_bytes, 0);

    // Compressed ARC off: the ARC holds 16K, the device gets the 12K compressed again.
    let mut c = Arc::new(&ArcParams {
        release: ZfsRelease::V0_8,
        ram_bytes: 2 * GIB,
        tunables: ArcTunables {
            zfs_arc_max: 256 * MIB,
            zfs_compressed_arc_enabled: Some(false),
            ..Default::default()
        },
    });
    c.attach_l2arc(&l2p(64 * MIB, CacheProperty::All, L2arcTunables::default(), 0)).unwrap();
    c.set_arc_warm(true);
    for i in 0..200 {
        c.access(k(i), data(16384, 12288), DEMAND, i * MS);
        // One block stored uncompressed: written as the ARC holds it.
        c.access(k(10_000 + i), data(16384, 16384), DEMAND, i * MS);
    }
    let f = c.l2arc_feed(SEC);
    assert_eq!(f.buffers, 400);
    assert_eq!(f.compress_bytes, 200 * 16384);
    assert_eq!(f.copy_bytes, 200 * 12288);

    // A full small device: each feed drops what it overwrites (a cold ARC: the feed
    // writes the newest blocks, from the lists' heads).
    let mut d = with_l2(ZfsRelease::V2_1, 256 * MIB, 32 * MIB, 0);
    let mut t = 0;
    let mut evicted = 0;
    for round in 0..20u64 {
        t = read_range(&mut d, round * 1000, round * 1000 + 1000, t);
        let f = d.l2arc_feed(t);
        evicted += f.headers_evicted;
        check_l2(&d);
    }
    // Everything written beyond the device's size was overwritten: the blocks written
    // less those still on the device were dropped (none was freed otherwise).
    let st = d.stats();
    let blocks_written = st.l2_write_bytes / 12288;
    assert_eq!(evicted, blocks_written - d.l2arc_blocks() as u64, "{st:?}");
    assert!(evicted > 0);
}

#[test]
fn feed_scans_resume_after_their_runs_with_the_same_outcome() {
    for (rel, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 0), (ZfsRelease::V2_2, 11)] {
        let mut a = with_l2(rel, 256 * MIB, 8 * GIB, patch);
        let mut b = with_l2(rel, 256 * MIB, 8 * GIB, patch);
        b.l2run_memo = false;
        a.set_arc_warm(true);
        b.set_arc_warm(true);
        let mut t = 0;
        // Each round reads fewer new blocks than a feed writes: the feeds that follow pass
        // what the earlier ones wrote, now at the lists' tails.
        for round in 0..30u64 {
            let from = round * 300;
            read_range(&mut b, from, from + 300, t);
            t = read_range(&mut a, from, from + 300, t);
            assert_eq!(a.l2arc_feed(t), b.l2arc_feed(t), "{rel:?} round {round}");
            check_l2(&a);
        }
        assert_eq!(a.stats(), b.stats(), "{rel:?}");
        assert!(a.l2run_resumed > 0 && b.l2run_resumed == 0, "{rel:?}: {}", a.l2run_resumed);
    }
}

/// The same from the head while the ARC is not warm (its lists' newest headers first):
/// each feed walks the headers that came in since the last and passes the run the last
/// left behind them, writes and rewrites among the reads.
#[test]
fn feed_scans_from_the_head_pass_their_runs_with_the_same_outcome() {
    for (rel, patch) in [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 0), (ZfsRelease::V2_2, 11)] {
        let mut a = with_l2(rel, 256 * MIB, 8 * GIB, patch);
        let mut b = with_l2(rel, 256 * MIB, 8 * GIB, patch);
        b.l2run_memo = false;
        let mut t = 0;
        for round in 0..30u64 {
            let from = round * 300;
            for x in [&mut a, &mut b] {
                read_range(x, from, from + 300, t);
                for i in 0..50 {
                    x.write_done(k(from / 2 + i * 7), data(16384, 8192), DEMAND, t + i * MS);
                }
            }
            t += SEC;
            assert_eq!(a.l2arc_feed(t), b.l2arc_feed(t), "{rel:?} round {round}");
            check_l2(&a);
        }
        assert_eq!(a.stats(), b.stats(), "{rel:?}");
        assert!(a.l2hrun_passed > 0 && b.l2hrun_passed == 0, "{rel:?}: {}", a.l2hrun_passed);
    }
}

#[test]
fn boost_only_until_warm_at_first_eviction() {
    let mut a = arc(ZfsRelease::V2_1, 256 * MIB);
    let mut p = l2p(8 * GIB, CacheProperty::All, L2arcTunables::default(), 0);
    p.arc_warm_at_first_eviction = true;
    a.attach_l2arc(&p).unwrap();
    let t = read_range(&mut a, 0, 2000, 0);
    assert!(!a.arc_warm());
    let cold = a.l2arc_feed(t).target;
    let t = read_range(&mut a, 2000, 40_000, t);
    assert!(a.arc_warm(), "the first eviction warms the ARC");
    let warm = a.l2arc_feed(t).target;
    assert!(cold > warm && cold - warm >= 8 * MIB - 64 * 1024, "cold {cold} warm {warm}");
    // Source rule: without memory pressure the ARC stays cold.
    let mut b = with_l2(ZfsRelease::V2_1, 256 * MIB, 8 * GIB, 0);
    read_range(&mut b, 0, 40_000, 0);
    assert!(!b.arc_warm());
}

/// Fills the ARC, feeds until the L2ARC holds much, then churns so L2 blocks drop out.
fn l2only_setup(rel: ZfsRelease) -> (Arc, Nanos) {
    let mut a = with_l2(rel, 128 * MIB, 8 * GIB, 11);
    a.set_arc_warm(true);
    let mut t = 0;
    for round in 0..60u64 {
        t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
        a.l2arc_feed(t);
        t += 200 * MS;
    }
    (a, t)
}

#[test]
fn l2_only_headers_count_against_the_arc() {
    for rel in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3] {
        let (a, _) = l2only_setup(rel);
        let s = a.stats();
        assert!(s.l2_hdr_size > 0, "{rel:?}: some blocks are only on L2");
        assert_eq!(s.l2_hdr_size % HDR_L2ONLY_SIZE, 0);
        assert!(s.evict_l2_cached > 0 && s.l2_write_bytes > 0);
        // The ARC stays within c (and its overflow margin) with the L2 headers inside:
        // less room for buffers.
        let bound = s.c + a.overflow_margin() + 16384 + hdr_full_size(rel);
        assert!(s.size <= bound, "{rel:?}");
        assert!(s.data_size + s.metadata_size + s.hdr_size + s.l2_hdr_size <= bound);
        if rel.features().arc.has_arc_p() {
            assert_eq!(s.arc_meta_used, s.size - s.data_size, "L2 headers are metadata");
        }
        check_l2(&a);
    }
}

/// A write of a block known only to the L2ARC (the txg's arc_write_done replaces its
/// header): the L2-only header goes with its share of l2_hdr_size, its device copy
/// becomes unreachable, and the new data is in the ARC.
#[test]
fn a_write_replaces_an_l2_only_header() {
    for rel in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3] {
        let (mut a, t) = l2only_setup(rel);
        let key =
            (0..120_000).find(|&i| a.l2_contains(k(i)) && a.slab.find(k(i).0).is_none()).expect("L2-only");
        a.write_done(k(key), data(16384, 12288), DEMAND, t);
        assert!(!a.l2_contains(k(key)) && a.contains(k(key)), "{rel:?}");
        // l2_hdr_size is still one header per live L2-only entry (the new buffer's
        // eviction may have made others L2-only).
        check_l2(&a);
    }
}

/// A block the txg sync writes is L2-eligible as a read one is (`arc_write()` sets
/// ARC_FLAG_L2CACHE from `secondarycache`), so the next feed can write it; with
/// secondarycache=none it is not, and in 2.2+ an uncached write (primarycache excludes
/// the data) gets ARC_FLAG_UNCACHED instead.
#[test]
fn a_written_block_is_fed_as_a_read_one_is() {
    for rel in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3] {
        for (sc, fed) in
            [(CacheProperty::All, true), (CacheProperty::Metadata, false), (CacheProperty::None, false)]
        {
            let mut a = arc(rel, 256 * MIB);
            a.attach_l2arc(&l2p(8 * GIB, sc, L2arcTunables::default(), 0)).unwrap();
            for i in 0..200u64 {
                a.write_done(k(i), data(16384, 12288), DEMAND, i * MS);
            }
            let f = a.l2arc_feed(SEC);
            assert_eq!(f.buffers == 200, fed, "{rel:?} {sc:?}: {f:?}");
            assert_eq!((0..200).all(|i| a.l2_contains(k(i))), fed, "{rel:?} {sc:?}");
            check_l2(&a);
        }
        // A write of a block primarycache does not keep leaves nothing to feed.
        let mut a = arc(rel, 256 * MIB);
        a.attach_l2arc(&l2p(8 * GIB, CacheProperty::All, L2arcTunables::default(), 0)).unwrap();
        let uncacheable = ReadFlags { prefetch: false, uncacheable: true };
        for i in 0..200u64 {
            a.write_done(k(i), data(16384, 12288), uncacheable, i * MS);
        }
        assert_eq!(a.l2arc_feed(SEC).buffers, 0, "{rel:?}");
        check_l2(&a);
    }
}

#[test]
fn l2_hit_brings_block_back() {
    for rel in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2, ZfsRelease::V2_3] {
        let (mut a, t) = l2only_setup(rel);
        let key =
            (0..120_000).find(|&i| a.l2_contains(k(i)) && a.slab.find(k(i).0).is_none()).expect("L2-only");
        let before = a.stats();
        // The read goes to the copy's address on the device (b_daddr).
        let daddr = {
            let l2 = a.l2.as_ref().unwrap();
            let (d, seq) = l2.find(k(key).0).unwrap();
            u64::from(l2.devs[d].dev.ring.get(seq).daddr()) << l2.devs[d].dev.ashift
        };
        let r = a.access(k(key), data(16384, 12288), DEMAND, t);
        let ArcAccess::L2Hit { psize: 12288, asize: 12288, dev: 0, loc } = r else {
            panic!("{rel:?}: {r:?}")
        };
        assert_eq!(a.l2_daddr(loc), daddr, "{rel:?}");
        assert!(a.contains(k(key)) && a.l2_contains(k(key)), "in both after the L2 hit");
        let s = a.stats();
        assert_eq!((s.l2_hits, s.misses), (before.l2_hits + 1, before.misses + 1));
        assert_eq!(s.l2_read_bytes, before.l2_read_bytes + 12288);
        let st = a.slab.hdrs[a.slab.find(k(key).0).unwrap() as usize].state;
        let want = if rel.features().arc.iohits() { State::Mru } else { State::Mfu };
        assert_eq!(st, want, "{rel:?}: arc_access of an l2c_only header");
        assert_eq!(a.access(k(key), data(16384, 12288), DEMAND, t + MS), ArcAccess::Hit);
        check_l2(&a);
    }
}

#[test]
fn ring_overwrites_oldest_blocks() {
    for (rel, patch) in
        [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 0), (ZfsRelease::V2_2, 2), (ZfsRelease::V2_2, 11)]
    {
        let cap = 96 * MIB;
        let mut a = with_l2(rel, 128 * MIB, cap, patch);
        a.set_arc_warm(true);
        let mut t = 0;
        let mut first_written = None;
        for round in 0..80u64 {
            t = read_range(&mut a, round * 1000, round * 1000 + 1000, t);
            a.l2arc_feed(t);
            if first_written.is_none() {
                first_written = (0..1000).find(|&i| a.l2_contains(k(i)));
            }
            check_l2(&a);
            t += SEC;
        }
        let dev = a.l2arc_device().unwrap();
        assert!(!dev.first, "{rel:?} wrapped");
        let s = a.stats();
        assert!(s.l2_asize <= cap && s.l2_size > cap / 2, "{rel:?} {s:?}");
        let old = first_written.expect("something written early");
        assert!(!a.l2_contains(k(old)) && !a.contains(k(old)), "{rel:?}: overwritten");
        let misses = a.stats().l2_misses;
        assert!(matches!(a.access(k(old), data(16384, 12288), DEMAND, t), ArcAccess::Miss { .. }));
        assert_eq!(a.stats().l2_misses, misses + 1);
        check_l2(&a);
    }
}

#[test]
fn noprefetch_skips_only_prefetched_blocks() {
    for noprefetch in [true, false] {
        let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
        let tun = L2arcTunables { l2arc_noprefetch: Some(noprefetch), ..Default::default() };
        a.attach_l2arc(&l2p(8 * GIB, CacheProperty::All, tun, 11)).unwrap();
        for i in 0..1000 {
            a.access(k(i), data(16384, 16384), PREFETCH, i * MS);
        }
        let f = a.l2arc_feed(2 * SEC);
        assert_eq!(f.buffers == 0, noprefetch, "noprefetch={noprefetch}: {f:?}");
        // A demand hit makes a prefetched block eligible again.
        if noprefetch {
            a.access(k(5), data(16384, 16384), DEMAND, 3 * SEC);
            let f = a.l2arc_feed(4 * SEC);
            assert_eq!(f.buffers, 1);
            assert!(a.l2_contains(k(5)));
        }
        check_l2(&a);
    }
}

#[test]
fn secondarycache_metadata_writes_no_data() {
    let mut a = arc(ZfsRelease::V2_1, 256 * MIB);
    a.attach_l2arc(&l2p(8 * GIB, CacheProperty::Metadata, L2arcTunables::default(), 0)).unwrap();
    for i in 0..2000u64 {
        a.access(k(i), data(16384, 16384), DEMAND, i * MS);
        a.access(BlockKey::new(1, 1, i), meta(16384, 4096), DEMAND, i * MS);
    }
    let f = a.l2arc_feed(3 * SEC);
    assert!(f.buffers > 0);
    assert!((0..2000).all(|i| !a.l2_contains(k(i))), "no data on L2");
    assert!((0..2000).any(|i| a.l2_contains(BlockKey::new(1, 1, i))));
    let mut b = arc(ZfsRelease::V2_1, 256 * MIB);
    b.attach_l2arc(&l2p(8 * GIB, CacheProperty::None, L2arcTunables::default(), 0)).unwrap();
    read_range(&mut b, 0, 1000, 0);
    assert_eq!(b.l2arc_feed(2 * SEC).buffers, 0);
    check_l2(&a);
}

#[test]
fn mfuonly_writes_mfu_only() {
    for (patch, mode) in [(0u16, 1u8), (6, 2)] {
        let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
        let tun = L2arcTunables { l2arc_mfuonly: Some(mode), ..Default::default() };
        a.attach_l2arc(&l2p(8 * GIB, CacheProperty::All, tun, patch)).unwrap();
        // 0..500 MFU (two reads 100 ms apart), 500..1000 MRU; metadata MRU.
        for i in 0..1000u64 {
            a.access(k(i), data(16384, 16384), DEMAND, i * MS);
            a.access(BlockKey::new(1, 1, i), meta(16384, 4096), DEMAND, i * MS);
        }
        for i in 0..500u64 {
            a.access(k(i), data(16384, 16384), DEMAND, 2 * SEC + i * MS);
        }
        a.l2arc_feed(3 * SEC);
        assert!((500..1000).all(|i| !a.l2_contains(k(i))), "no MRU data");
        assert!((0..500).any(|i| a.l2_contains(k(i))), "MFU data written");
        let mru_meta = (0..1000).any(|i| a.l2_contains(BlockKey::new(1, 1, i)));
        assert_eq!(mru_meta, mode == 2, "mfuonly=2 writes MRU metadata");
        check_l2(&a);
    }
}

#[test]
fn drop_all_empties_it() {
    let (mut a, t) = l2only_setup(ZfsRelease::V2_2);
    assert!(a.l2arc_blocks() > 0 && a.stats().l2_hdr_size > 0);
    let size_before = a.size();
    a.l2arc_drop_all();
    let s = a.stats();
    assert_eq!((s.l2_size, s.l2_asize, s.l2_hdr_size, a.l2arc_blocks()), (0, 0, 0, 0));
    assert!(a.size() < size_before, "L2 headers freed");
    assert!(a.slab.hdrs.iter().all(|h| h.state == State::Free || h.flags & F_L2 == 0));
    assert_eq!(a.l2arc_device().unwrap().alloc, 0);
    check_l2(&a);
    // Feeds start over on the empty device.
    let f = a.l2arc_feed(t);
    assert!(f.buffers > 0);
    check_l2(&a);
}

#[test]
fn rebuild_restores_committed_log_blocks() {
    // 2 GiB device: l2ad_log_entries = min(2 GiB >> 24, 1022) = 128.
    let (mut a, t) = {
        let mut a = with_l2(ZfsRelease::V2_2, 128 * MIB, 2 * GIB, 11);
        a.set_arc_warm(true);
        let mut t = 0;
        for round in 0..30u64 {
            t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
            a.l2arc_feed(t);
            t += 200 * MS;
        }
        (a, t)
    };
    let s = a.stats();
    assert!(s.l2_log_blk_writes > 0 && s.l2_log_blk_count > 0);
    let blocks = a.l2arc_blocks() as u64;
    let dev = a.l2arc_detach().pop().expect("device");
    assert_eq!((a.stats().l2_hdr_size, a.l2arc_blocks()), (0, 0));
    check_invariants(&a);
    let mut b = arc(ZfsRelease::V2_2, 128 * MIB);
    b.attach_l2arc(&l2p(2 * GIB, CacheProperty::All, L2arcTunables::default(), 11)).unwrap();
    let r = b.l2arc_rebuild(0, dev);
    assert!(r.headers > 0 && r.headers <= blocks, "{r:?} of {blocks}");
    assert_eq!(r.headers % 128, 0, "whole log blocks");
    assert_eq!(r.log_blocks, r.headers / 128);
    assert_eq!(r.reads, r.log_blocks + 1);
    let s = b.stats();
    assert_eq!((s.l2_rebuild_bufs, s.l2_rebuild_success), (r.headers, 1));
    assert_eq!(s.l2_hdr_size, r.headers * HDR_L2ONLY_SIZE);
    check_l2(&b);
    let key = (0..60_000).find(|&i| b.l2_contains(k(i))).expect("restored");
    assert!(matches!(b.access(k(key), data(16384, 12288), DEMAND, t), ArcAccess::L2Hit { .. }));
    // Feeding resumes after the newest log block.
    b.set_arc_warm(true);
    read_range(&mut b, 200_000, 202_000, t);
    assert!(b.l2arc_feed(t + SEC).buffers > 0);
    check_l2(&b);
    // 0.8 has no persistent L2ARC.
    let mut c = with_l2(ZfsRelease::V0_8, 128 * MIB, 2 * GIB, 0);
    read_range(&mut c, 0, 2000, 0);
    c.l2arc_feed(3 * SEC);
    let dev = c.l2arc_detach().pop().unwrap();
    let mut d = with_l2(ZfsRelease::V0_8, 128 * MIB, 2 * GIB, 0);
    assert_eq!(d.l2arc_rebuild(0, dev), Default::default());
}

#[test]
fn meta_percent_stops_feeds() {
    // 2.2: l2_hdr_size above 33% of arc_c_max (cold) skips feeds.
    let mut a = with_l2(ZfsRelease::V2_2, 64 * MIB, 16 * GIB, 11);
    let tun = L2arcTunables { l2arc_meta_percent: Some(1), ..Default::default() };
    a.attach_l2arc(&l2p(16 * GIB, CacheProperty::All, tun, 11)).unwrap();
    a.set_arc_warm(true);
    let mut t = 0;
    for round in 0..40u64 {
        t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
        a.l2arc_feed(t);
    }
    let s = a.stats();
    assert!(s.l2_abort_lowmem > 0, "{s:?}");
    // Over the limit, a feed writes nothing.
    assert!(s.l2_hdr_size > s.c / 100);
    let f = a.l2arc_feed(t + SEC);
    assert!(!f.fed && f.buffers == 0 && f.next_feed_at == t + 2 * SEC);
    assert_eq!(a.stats().l2_abort_lowmem, s.l2_abort_lowmem + 1);
    check_l2(&a);
}

#[test]
fn memory_per_l2_block_and_no_growth_per_feed() {
    let mut a = with_l2(ZfsRelease::V2_2, 128 * MIB, 512 * MIB, 11);
    a.set_arc_warm(true);
    let mut t = 0;
    let mut x = 7u64;
    let mut step = |a: &mut Arc, t: &mut Nanos| {
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a.access(k(x % 200_000), data(16384, 12288), DEMAND, *t);
            *t += MS / 4;
        }
        a.l2arc_feed(*t);
    };
    for _ in 0..300 {
        step(&mut a, &mut t);
    }
    let blocks = a.l2arc_blocks();
    assert!(blocks > 30_000, "{blocks}");
    let heap = a.l2arc_heap_bytes();
    assert!(heap / blocks <= 48, "{} bytes per L2 block", heap / blocks);
    let cap = a.slab.capacity();
    for _ in 0..200 {
        step(&mut a, &mut t);
    }
    assert_eq!(a.l2arc_heap_bytes(), heap, "L2 structures grew in steady state");
    assert_eq!(a.slab.capacity(), cap);
    check_l2(&a);
    let _ = F_L2CACHE;
}

#[derive(Debug, Clone)]
enum Op {
    Read {
        key: u64,
        meta: bool,
        prefetch: bool,
        uncacheable: bool,
        sectors: u32,
        dt_ms: u64,
    },
    Write {
        key: u64,
        sectors: u32,
    },
    Feed,
    /// A pass of master's per-device thread of device `k` (modulo the devices).
    FeedDev(u8),
    Warm,
    Drop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        40 => (0u64..6000, prop::bool::weighted(0.2), prop::bool::weighted(0.1), prop::bool::weighted(0.02), 1u32..=4, 0u64..50)
            .prop_map(|(key, meta, prefetch, uncacheable, sectors, dt_ms)| Op::Read { key, meta, prefetch, uncacheable, sectors, dt_ms }),
        8 => (0u64..6000, 1u32..=4).prop_map(|(key, sectors)| Op::Write { key, sectors }),
        2 => Just(Op::Feed),
        1 => (0u8..2).prop_map(Op::FeedDev),
        1 => Just(Op::Warm),
        1 => Just(Op::Drop),
    ]
}

fn case() -> impl Strategy<Value = (ZfsRelease, u16)> {
    prop_oneof![
        Just((ZfsRelease::V0_8, 0)),
        Just((ZfsRelease::V2_1, 0)),
        Just((ZfsRelease::V2_2, 0)),
        Just((ZfsRelease::V2_2, 11))
    ]
}

fn run(rel: ZfsRelease, patch: u16, ops: &[Op], ndev: usize) -> (Arc, Vec<ArcAccess>, Vec<L2Feed>) {
    run_memo(rel, patch, ops, true, ndev)
}

/// The ops on an ARC with `ndev` cache devices (1: 48 MiB; 2: 48 and 32 MiB, which wrap at
/// different times).
fn run_memo(
    rel: ZfsRelease,
    patch: u16,
    ops: &[Op],
    memo: bool,
    ndev: usize,
) -> (Arc, Vec<ArcAccess>, Vec<L2Feed>) {
    let mut a = Arc::new(&ArcParams {
        release: rel,
        ram_bytes: GIB,
        tunables: ArcTunables {
            zfs_arc_max: 64 * MIB,
            zfs_arc_min: 32 * MIB,
            zfs_compressed_arc_enabled: None,
            ..Default::default()
        },
    });
    let tun = L2arcTunables {
        l2arc_write_max: Some(2 * MIB),
        l2arc_write_boost: Some(2 * MIB),
        ..Default::default()
    };
    let caps = [48 * MIB, 32 * MIB];
    a.attach_l2arc(&l2pn(&caps[..ndev], CacheProperty::All, tun, patch)).unwrap();
    a.l2run_memo = memo;
    let (mut t, mut out, mut feeds) = (0, Vec::new(), Vec::new());
    for o in ops {
        match *o {
            Op::Read { key, meta, prefetch, uncacheable, sectors, dt_ms } => {
                t += dt_ms * MS;
                let info = if meta { self::meta(16384, 4096 * sectors) } else { data(16384, 4096 * sectors) };
                out.push(a.access(
                    BlockKey::new(3, meta as u8, key),
                    info,
                    ReadFlags { prefetch, uncacheable },
                    t,
                ));
            }
            Op::Write { key, sectors } => {
                a.write_done(BlockKey::new(3, 0, key), data(16384, 4096 * sectors), DEMAND, t)
            }
            Op::Feed => feeds.push(a.l2arc_feed(t)),
            Op::FeedDev(k) => feeds.push(a.l2arc_feed_dev(usize::from(k) % ndev, t)),
            Op::Warm => a.set_arc_warm(true),
            Op::Drop => a.l2arc_drop_all(),
        }
    }
    (a, out, feeds)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn l2_invariants_hold((rel, patch) in case(), ops in prop::collection::vec(op(), 1..3000), ndev in 1usize..=2) {
        let (a, out, feeds) = run(rel, patch, &ops, ndev);
        check_l2(&a);
        let s = a.stats();
        prop_assert_eq!(s.l2_hits, out.iter().filter(|r| matches!(r, ArcAccess::L2Hit { .. })).count() as u64);
        prop_assert_eq!(s.l2_feeds, feeds.iter().filter(|f| f.fed).count() as u64);
        for f in &feeds {
            prop_assert!(f.asize_written <= f.target);
        }
        prop_assert!(s.size <= s.c + 65536 + hdr_full_size(rel));
    }

    /// Resuming feed scans after their ineligible tail runs, and passing the head runs of
    /// scans from the head (an ARC never warm: no Warm op), is a pure shortcut: the same
    /// answers, feeds, counters and device contents with and without it, with one cache
    /// device or two fed in turn or by their own threads (eligibility does not depend on
    /// the device, so one list's runs serve every device).
    #[test]
    fn l2_runs_change_nothing(
        (rel, patch) in case(),
        ops in prop::collection::vec(op(), 1..3000),
        cold in any::<bool>(),
        ndev in 1usize..=2,
    ) {
        let ops: Vec<Op> = ops.into_iter().filter(|o| !(cold && matches!(o, Op::Warm))).collect();
        let (a, oa, fa) = run_memo(rel, patch, &ops, true, ndev);
        check_l2(&a);
        let (b, ob, fb) = run_memo(rel, patch, &ops, false, ndev);
        prop_assert!(b.slab.l2run.iter().all(|r| r.count == 0));
        prop_assert!(b.slab.l2hrun.iter().all(|r| r.count == 0));
        prop_assert_eq!(oa, ob);
        prop_assert_eq!(fa, fb);
        prop_assert_eq!(a.stats(), b.stats());
        let ring = |x: &Arc| {
            let l2 = x.l2.as_ref().expect("device");
            l2.devs.iter().map(|d| (d.dev.ring.head..d.dev.ring.tail).map(|s| *d.dev.ring.get(s)).collect::<Vec<_>>()).collect::<Vec<_>>()
        };
        prop_assert_eq!(ring(&a), ring(&b));
    }

    #[test]
    fn l2_deterministic((rel, patch) in case(), ops in prop::collection::vec(op(), 1..1500), ndev in 1usize..=2) {
        let (a, oa, fa) = run(rel, patch, &ops, ndev);
        let (b, ob, fb) = run(rel, patch, &ops, ndev);
        prop_assert_eq!(oa, ob);
        prop_assert_eq!(fa, fb);
        prop_assert_eq!(a.stats(), b.stats());
    }
}

// ---- the L2 header cap: what L2-only headers do to a small ARC (arc.c, zfs-0.8.6) -------
//
// hdr_l2only_cons() charges HDR_L2ONLY_SIZE to ARC_SPACE_L2HDRS and arc_space_consume()
// adds every type but ARC_SPACE_DATA to arc_meta_used and all to arc_size; the headers sit
// on no list (arc_l2c_only has none), so no eviction path frees them and arc_c does not
// move for them (only memory pressure shrinks it). Data buffers pay for them.

/// A 0.8 ARC of `c_max` on a 1 GiB machine (c_min 32 MiB) with a 4K-sector cache device.
fn small_08(c_max: u64, meta_limit: u64) -> Arc {
    let mut a = Arc::new(&ArcParams {
        release: ZfsRelease::V0_8,
        ram_bytes: GIB,
        tunables: ArcTunables {
            zfs_arc_max: c_max,
            zfs_arc_meta_limit: meta_limit,
            zfs_compressed_arc_enabled: None,
            ..Default::default()
        },
    });
    a.attach_l2arc(&l2p(64 * GIB, CacheProperty::All, L2arcTunables::default(), 0)).unwrap();
    a.set_arc_warm(true);
    // These tests follow the L2 headers' squeeze of a 64 MiB ARC, not when its eviction
    // starts (0.8 lets it float 16 MiB, a quarter of it, above c first).
    a.evict_at_c();
    a
}

/// Streams new 4K data blocks at `per_s` blocks a second (like `cat`), running the feed
/// thread when it asks; returns every feed's outcome.
fn stream(a: &mut Arc, from: u64, n: u64, per_s: u64, t: &mut Nanos, next: &mut Nanos) -> Vec<L2Feed> {
    let mut feeds = Vec::new();
    for i in from..from + n {
        while *next <= *t {
            let f = a.l2arc_feed(*next);
            *next = f.next_feed_at;
            feeds.push(f);
        }
        a.access(k(i), data(4096, 4096), DEMAND, *t);
        *t += SEC / per_s;
    }
    feeds
}

#[test]
fn an_l2_only_header_costs_96_bytes_of_size_and_meta_used() {
    let mut a = small_08(64 * MIB, 0);
    let t = read_range(&mut a, 0, 1, 0);
    assert_eq!(a.l2arc_feed(t).buffers, 1);
    let s0 = a.stats();
    assert_eq!(s0.l2_hdr_size, 0, "still in the ARC: a full header in hdr_size");
    // Push it out of the ARC, then out of the ghost list.
    let mut t = t;
    for i in 1..40_000 {
        a.access(k(i), data(16384, 4096), DEMAND, t);
        t += MS / 10;
    }
    assert!(!a.contains(k(0)) && a.l2_contains(k(0)));
    let s = a.stats();
    assert!(s.l2_hdr_size >= HDR_L2ONLY_SIZE && s.l2_hdr_size.is_multiple_of(HDR_L2ONLY_SIZE));
    assert_eq!(s.size, s.data_size + s.metadata_size + s.hdr_size + s.l2_hdr_size);
    assert_eq!(s.arc_meta_used, s.size - s.data_size, "L2 headers count as metadata (0.8)");
    // Reading it back: arc_hdr_realloc to a full header (out of l2_hdr_size, into
    // hdr_size), arc_access -> MFU, the L2 copy stays.
    assert!(matches!(a.access(k(0), data(16384, 12288), DEMAND, t), ArcAccess::L2Hit { .. }));
    assert!(a.contains(k(0)) && a.l2_contains(k(0)));
    let i = a.slab.find(k(0).0).unwrap();
    assert_eq!(a.slab.hdrs[i as usize].state, State::Mfu);
    check_l2(&a);
}

#[test]
fn headers_squeeze_out_data_until_the_feed_starves_08() {
    // 64 MiB ARC, arc_meta_limit 48 MiB (75%). 4K blocks stream in at 10k/s (40 MB/s,
    // within what 8 MiB feeds every 200 ms can write). Each block written to L2 ends as a
    // 96-byte L2-only header once its ghost goes.
    let mut a = small_08(64 * MIB, 0);
    let (c, meta_limit) = (a.stats().c, a.stats().arc_meta_limit);
    assert_eq!((c, meta_limit), (64 * MIB, 48 * MIB));
    let (mut t, mut next) = (0, SEC);
    // Phase 1: few headers; data is cached and every busy feed finds eligible tails and
    // writes over half its target (so the next comes after l2arc_feed_min_ms).
    let feeds = stream(&mut a, 0, 100_000, 10_000, &mut t, &mut next);
    let s = a.stats();
    assert!(s.data_size > c / 2, "data cached while headers are few: {s:?}");
    let busy = &feeds[2..];
    assert!(busy.iter().all(|f| f.buffers > 0), "a feed found nothing with eligible tails");
    assert!(busy.iter().filter(|f| f.asize_written > f.target / 2).count() * 10 >= busy.len() * 9);
    // Phase 2: 900k more blocks. The headers grow past arc_meta_limit towards arc_c; arc_c
    // stays put, so the data buffers shrink to almost nothing, new blocks leave the ARC
    // before a feed reaches them and the L2 stops growing long before the device is full.
    let feeds = stream(&mut a, 100_000, 900_000, 10_000, &mut t, &mut next);
    let s = a.stats();
    assert_eq!(s.c, c, "arc_c does not move for headers");
    assert!(s.arc_meta_used > meta_limit && s.arc_meta_used == s.size - s.data_size, "{s:?}");
    assert!(s.l2_hdr_size >= c - 8 * MIB && s.l2_hdr_size <= c + MIB, "{s:?}");
    assert!(s.data_size < 8 * MIB, "{s:?}");
    assert!(s.size <= c + 4096 + hdr_full_size(ZfsRelease::V0_8), "{s:?}");
    assert_eq!(s.l2_size, a.l2arc_blocks() as u64 * 4096);
    assert!(s.l2_asize < 64 * GIB / 8, "the device is far from full: {s:?}");
    // The feed now catches a falling share of the 40 MB/s streamed: blocks leave the ARC
    // faster than the feed reaches them (phase 1 caught nearly all).
    let last = |fs: &[L2Feed], since: Nanos| -> u64 {
        fs.iter().filter(|f| f.next_feed_at > since).map(|f| f.asize_written).sum()
    };
    let wrote = last(&feeds, t - 10 * SEC);
    assert!(wrote < 200_000_000, "{wrote} bytes in the last 10 s");
    let more = stream(&mut a, 1_000_000, 300_000, 10_000, &mut t, &mut next);
    let wrote_later = last(&more, t - 10 * SEC);
    assert!(wrote_later < wrote, "{wrote_later} after {wrote}");
    let s = a.stats();
    assert!(s.l2_hdr_size <= c + MIB, "{s:?}");
    check_l2(&a);
}

#[test]
fn l2arc_meta_percent_keeps_data_cacheable_21() {
    // The same stream on 2.1: l2arc_hdr_limit_reached stops feeds once the headers pass
    // l2arc_meta_percent (33%) of arc_c (2.1 also at 3/4 of arc_meta_limit), so data keeps
    // the rest of the ARC.
    let mut a = Arc::new(&ArcParams {
        release: ZfsRelease::V2_1,
        ram_bytes: GIB,
        tunables: ArcTunables {
            zfs_arc_max: 64 * MIB,
            zfs_compressed_arc_enabled: None,
            ..Default::default()
        },
    });
    a.attach_l2arc(&l2p(64 * GIB, CacheProperty::All, L2arcTunables::default(), 0)).unwrap();
    a.set_arc_warm(true);
    let (mut t, mut next) = (0, SEC);
    let feeds = stream(&mut a, 0, 1_000_000, 10_000, &mut t, &mut next);
    let s = a.stats();
    // Blocks written before the last feed still have full headers in the ARC (live or
    // ghost, at most 2 * c of 4K blocks) and turn L2-only later.
    let lag = 2 * s.c / 4096 * HDR_L2ONLY_SIZE;
    assert!(s.l2_hdr_size <= s.c * 33 / 100 + lag, "{s:?}");
    assert!(s.l2_abort_lowmem > 0 && feeds.iter().any(|f| !f.fed));
    assert!(s.data_size > s.c / 2, "{s:?}");
    check_l2(&a);
}

#[test]
fn a_higher_meta_limit_lets_headers_grow_closer_to_c_08() {
    // The write-up's "zfs_arc_meta_limit just under zfs_arc_max so some data is cached":
    // above arc_meta_limit, arc_adjust_meta_balanced evicts extra data on every pass, so
    // with the default limit data goes sooner and the L2 stops growing earlier. Either
    // way arc_meta_limit is not the cap: the headers pass it and approach arc_c.
    let (mut lo, mut hi) = (small_08(64 * MIB, 0), small_08(64 * MIB, 60 * MIB));
    for a in [&mut lo, &mut hi] {
        let (mut t, mut next) = (0, SEC);
        stream(a, 0, 1_000_000, 10_000, &mut t, &mut next);
    }
    let (l, h) = (lo.stats(), hi.stats());
    assert!(l.l2_hdr_size > l.arc_meta_limit, "{l:?}");
    assert!(h.l2_hdr_size > l.l2_hdr_size + 2 * MIB, "lo {} hi {}", l.l2_hdr_size, h.l2_hdr_size);
    assert!(h.l2_hdr_size <= h.c + MIB, "{h:?}");
    check_l2(&lo);
    check_l2(&hi);
}

// ---- master's DWPD feed as a what-if (d1f290f1ea, arc.c: l2arc_write_size,
// l2arc_get_write_rate, l2arc_dwpd_rate_limit, l2arc_feed_thread) -------------------------

fn dwpd(limit: u64, write_max: u64) -> L2arcTunables {
    L2arcTunables { l2arc_dwpd_limit: Some(limit), l2arc_write_max: Some(write_max), ..Default::default() }
}

/// The key exists in every release (a what-if), replaces l2arc_write_boost (set both: an
/// error naming the boost), is bounded, and unset leaves the release's feed.
#[test]
fn dwpd_limit_resolves_in_every_release_without_the_boost() {
    for (rel, patch) in
        [(ZfsRelease::V0_8, 0), (ZfsRelease::V2_1, 16), (ZfsRelease::V2_2, 11), (ZfsRelease::V2_3, 2)]
    {
        let s = dwpd(100, 8 * MIB).resolve(rel, patch).unwrap();
        assert_eq!((s.dwpd_limit, s.write_boost, s.write_max), (Some(100), 0, 8 * MIB), "{rel:?}");
        assert_eq!(L2arcTunables::default().resolve(rel, patch).unwrap().dwpd_limit, None);
        let both = L2arcTunables { l2arc_write_boost: Some(MIB), ..dwpd(100, MIB) };
        let e = both.resolve(rel, patch).unwrap_err().to_string();
        assert!(e.contains("l2arc_write_boost") && e.contains("d1f290f1ea"), "{e}");
        let e = dwpd(MAX_DWPD_LIMIT + 1, MIB).resolve(rel, patch).unwrap_err().to_string();
        assert!(e.contains("l2arc_dwpd_limit"), "{e}");
    }
}

/// l2arc_dwpd_rate_limit: the period's budget (a drive write per day times the limit,
/// plus one 64 MiB burst) spread over the seconds left; what was written comes off it;
/// after 24 h the unused budget carries over (one day's at most), a parameter change
/// resets without carry-over; a wrap starts a new period.
#[test]
fn dwpd_rate_is_the_budget_left_over_the_seconds_left() {
    use super::attached::Dwpd;
    let size = 86_400 * MIB; // one MiB per second per DWPD
    let burst = BURST_SIZE_MAX;
    let mut d = Dwpd::default();
    assert_eq!(d.rate_limit(size, 100, 0), (size + burst) / 86_400);
    assert_eq!(d.rate_limit(size, 50, 0), (size / 2 + burst) / 86_400);
    // Half the day gone, a quarter of the budget written: the rest over the rest.
    d.writes = size / 4;
    assert_eq!(d.rate_limit(size, 100, 43_200), (size - size / 4 + burst) / 43_200);
    // Everything written: nothing more this period.
    d.writes = size + burst;
    assert_eq!(d.rate_limit(size, 100, 80_000), 0);
    // A new period: the unused budget carries over (here none).
    assert_eq!(d.rate_limit(size, 100, 86_400), (size + burst) / 86_400);
    assert_eq!((d.start_s, d.writes, d.accumulated), (86_400, 0, 0));
    d.writes = size / 2;
    d.rate_limit(size, 100, 2 * 86_400);
    assert_eq!(d.accumulated, size / 2);
    // The parameter changed: reset, nothing carried.
    d.bump_pending = true;
    assert_eq!(d.rate_limit(size, 100, 2 * 86_400 + 10), (size + burst) / 86_400);
    assert_eq!((d.accumulated, d.bump_pending, d.start_s), (0, false, 2 * 86_400 + 10));
    d.writes = 5;
    d.accumulated = 7;
    d.wrapped(1_000_000);
    assert_eq!(d, Dwpd { start_s: 1_000_000, ..Dwpd::default() });
}

/// The DWPD feed: before the device wraps, each pass writes l2arc_write_max and sleeps a
/// second (no l2arc_feed_min_ms, no boost); a rate above 64 MiB/s is fed in bursts of at
/// most 64 MiB at 1/n s; a pass that writes less shortens its interval in proportion;
/// after the wrap, with the device at least twice arc_c_max, the DWPD rate limits it.
#[test]
fn dwpd_feed_sizes_and_intervals() {
    // 1 GiB device, ARC 128 MiB (c_max 128 MiB: 1 GiB >= 2 * c_max), 2 MiB per second.
    let mut a = arc(ZfsRelease::V0_8, 128 * MIB);
    a.attach_l2arc(&l2p(GIB, CacheProperty::All, dwpd(100, 2 * MIB), 0)).unwrap();
    let mut t = read_range(&mut a, 0, 5000, 0);
    let f = a.l2arc_feed(t);
    assert_eq!(f.target, 2 * MIB, "cold ARC: no boost");
    assert!(f.asize_written > MIB && f.asize_written <= 2 * MIB);
    let expect = if f.asize_written < f.target { SEC * f.asize_written / f.target } else { SEC };
    assert!(f.next_feed_at.abs_diff(t + expect) <= 1, "{f:?}");
    // A rate of 200 MiB/s: 4 bursts a second of 50 MiB.
    let mut b = arc(ZfsRelease::V0_8, 128 * MIB);
    b.attach_l2arc(&l2p(GIB, CacheProperty::All, dwpd(100, 200 * MIB), 0)).unwrap();
    read_range(&mut b, 0, 20_000, 0);
    let f = b.l2arc_feed(t);
    assert_eq!(f.target, 50 * MIB);
    assert!(f.asize_written > 0);
    let expect = (u128::from(SEC / 4) * u128::from(f.asize_written) / u128::from(f.target)) as Nanos;
    assert_eq!(f.next_feed_at, t + expect);
    // Fill the device until it wraps: from then on the DWPD rate, about
    // (1 GiB + 64 MiB) / 86400 s, 13 KB/s, caps each pass (0.8: the size as it is).
    let mut round = 0u64;
    while a.l2arc_device().unwrap().first {
        t = read_range(&mut a, 10_000 + round * 300, 10_000 + round * 300 + 300, t);
        a.l2arc_feed(t);
        t += SEC;
        round += 1;
        assert!(round < 2000, "the device wraps");
    }
    t = read_range(&mut a, 10_000 + round * 300, 10_000 + round * 300 + 300, t);
    let f = a.l2arc_feed(t);
    let rate = (GIB + BURST_SIZE_MAX) / 86_400;
    // (The pass that wrapped counts in the new period: a little less is left.)
    assert!(f.target <= rate && f.target * 10 >= rate * 9, "{f:?} vs {rate}");
    assert!(f.asize_written <= f.target);
    // The same device under a larger ARC (1 GiB < 2 * c_max): no DWPD limit.
    let mut c = arc(ZfsRelease::V0_8, 1536 * MIB);
    c.attach_l2arc(&l2p(GIB, CacheProperty::All, dwpd(100, 2 * MIB), 0)).unwrap();
    c.l2.as_mut().unwrap().devs[0].dev.first = false;
    read_range(&mut c, 0, 500, 0);
    assert_eq!(c.l2arc_feed(SEC).target, 2 * MIB);
}

/// arc_write sets ARC_FLAG_L2CACHE when secondarycache covers the block: a rewritten
/// block loses its L2 copy (its old version is freed) and the feed writes the new one;
/// with secondarycache=metadata a data block's new version stays off the device.
#[test]
fn a_written_block_is_fed_to_the_cache_device() {
    for (sc, fed) in [(CacheProperty::All, true), (CacheProperty::Metadata, false)] {
        let mut a = arc(ZfsRelease::V0_8, 256 * MIB);
        a.attach_l2arc(&l2p(GIB, sc, L2arcTunables::default(), 0)).unwrap();
        a.write_done(k(7), data(16384, 12288), DEMAND, 0);
        assert_eq!(a.l2arc_feed(SEC).buffers, u32::from(fed), "{sc:?}");
        assert_eq!(a.l2_contains(k(7)), fed);
        // Rewritten: the copy goes with the old version; the next feed writes the new one.
        a.write_done(k(7), data(16384, 8192), DEMAND, 2 * SEC);
        assert!(!a.l2_contains(k(7)));
        assert_eq!(a.l2arc_feed(3 * SEC).buffers, u32::from(fed));
        assert_eq!(a.l2_contains(k(7)), fed);
        check_l2(&a);
    }
}

// ---- several cache devices (arc.c at zfs-0.8.6, zfs-2.2.7: l2arc_dev_get_next(), one
// l2arc_feed_thread; b_l2hdr.b_dev; l2arc_spa_rebuild_start(); master b525525b44) ------

/// Two cache devices of `cap` bytes each on a warm 2.2.11 ARC of 256 MiB.
fn two_devices(cap: u64) -> Arc {
    let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
    a.attach_l2arc(&l2pn(&[cap, cap], CacheProperty::All, L2arcTunables::default(), 11)).unwrap();
    a.set_arc_warm(true);
    a
}

#[test]
fn the_one_feed_thread_feeds_two_equal_devices_in_turn() {
    // l2arc_add_vdev() inserts each device at the head of l2arc_dev_list: the list runs
    // from the last device added to the first, and l2arc_dev_get_next() walks it round.
    let mut a = two_devices(GIB);
    let mut t = 0;
    let mut bytes = [0u64; 2];
    let mut order = Vec::new();
    for round in 0..40u64 {
        // 2000 new 12K blocks a round, more than one pass writes (32 MiB): every pass full.
        t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
        let f = a.l2arc_feed(t);
        assert!(f.fed && f.buffers > 0, "{f:?}");
        order.push(f.dev);
        bytes[f.dev] += f.asize_written;
        t += 200 * MS;
    }
    assert_eq!(order[..4], [1, 0, 1, 0]);
    assert!(order.windows(2).all(|w| w[0] != w[1]), "every other pass: {order:?}");
    // About half the bytes each (equal passes: within one pass's worth).
    let (lo, hi) = (bytes[0].min(bytes[1]), bytes[0].max(bytes[1]));
    assert!(hi - lo <= 32 * MIB && lo > 0, "{bytes:?}");
    for (d, &b) in bytes.iter().enumerate() {
        assert_eq!(a.l2arc_device_at(d).unwrap().alloc, b, "device {d} holds what was written to it");
    }
    check_l2(&a);
}

#[test]
fn an_aborted_pass_moves_the_rotation_on() {
    // l2arc_dev_get_next() runs before l2arc_hdr_limit_reached(): a pass skipped for the
    // header limit still takes its device's turn.
    let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
    let tun = L2arcTunables { l2arc_meta_percent: Some(0), ..Default::default() };
    a.attach_l2arc(&l2pn(&[GIB, GIB], CacheProperty::All, tun, 11)).unwrap();
    let t = read_range(&mut a, 0, 100, 0);
    assert!(a.l2arc_feed(t).fed, "no L2-only header yet: fed (device 1)");
    // An L2-only header exceeds 0% of arc_c: the next pass aborts, on device 0's turn.
    let l2 = a.l2.as_mut().unwrap();
    l2.l2only += 1;
    assert!(!a.l2arc_feed(t + SEC).fed);
    a.l2.as_mut().unwrap().l2only -= 1;
    let f = a.l2arc_feed(t + 2 * SEC);
    assert!(f.fed && f.dev == 1, "{f:?}");
}

#[test]
fn a_hit_reads_from_the_device_that_holds_the_copy() {
    // 4K sectors on device 0, 512-byte sectors on device 1: the L2 read is rounded to
    // the sector of the device it comes from.
    let mut a = arc(ZfsRelease::V2_2, 64 * MIB);
    let mut p = l2pn(&[GIB, GIB], CacheProperty::All, L2arcTunables::default(), 11);
    p.config.devices[1].ashift = 9;
    a.attach_l2arc(&p).unwrap();
    a.set_arc_warm(true);
    let mut t = 0;
    for round in 0..6u64 {
        for i in round * 500..round * 500 + 500 {
            a.access(k(i), data(16384, 10240 + 512), DEMAND, t);
            t += MS;
        }
        a.l2arc_feed(t);
    }
    let on = |a: &Arc, d: usize| (0..3000).filter(|&i| a.l2_device_of(k(i)) == Some(d)).count();
    assert!(on(&a, 0) > 0 && on(&a, 1) > 0, "both devices hold blocks");
    // Push everything out of the ARC (and its ghosts): L2-only headers.
    for i in 100_000..120_000 {
        a.access(k(i), data(16384, 16384), DEMAND, t);
        t += MS / 10;
    }
    let mut seen = [false; 2];
    for i in 0..3000 {
        let Some(d) = a.l2_device_of(k(i)) else { continue };
        match a.access(k(i), data(16384, 10240 + 512), DEMAND, t) {
            ArcAccess::L2Hit { psize, asize, dev, .. } => {
                assert_eq!((usize::from(dev), psize), (d, 10752));
                assert_eq!(asize, if d == 0 { 12288 } else { 10752 }, "rounded to device {d}'s sector");
                seen[d] = true;
            }
            r => panic!("block {i} on device {d}: {r:?}"),
        }
        t += MS;
    }
    assert_eq!(seen, [true, true]);
    check_l2(&a);
}

#[test]
fn a_rewrite_invalidates_the_copy_on_its_device_only() {
    let mut a = two_devices(GIB);
    let mut t = read_range(&mut a, 0, 2000, 0);
    a.l2arc_feed(t); // device 1
    t = read_range(&mut a, 2000, 4000, t);
    a.l2arc_feed(t); // device 0
    let key = (0..4000).find(|&i| a.l2_device_of(k(i)) == Some(1)).expect("a block on device 1");
    let before = [a.l2arc_device_at(0).unwrap().alloc, a.l2arc_device_at(1).unwrap().alloc];
    a.write_done(k(key), data(16384, 12288), DEMAND, t);
    assert_eq!(a.l2_device_of(k(key)), None);
    assert_eq!(a.l2arc_device_at(0).unwrap().alloc, before[0], "device 0 untouched");
    assert_eq!(a.l2arc_device_at(1).unwrap().alloc, before[1] - 12288, "device 1 frees the copy");
    // An L2-only copy too: push a device-0 block out of the ARC, then rewrite it.
    for i in 100_000..140_000 {
        a.access(k(i), data(16384, 16384), DEMAND, t);
        t += MS / 10;
    }
    let key =
        (0..4000).find(|&i| a.l2_device_of(k(i)) == Some(0) && !a.contains(k(i))).expect("L2-only on 0");
    let before = [a.l2arc_device_at(0).unwrap().alloc, a.l2arc_device_at(1).unwrap().alloc];
    let hdr = a.stats().l2_hdr_size;
    a.write_done(k(key), data(16384, 12288), DEMAND, t);
    assert_eq!(a.l2arc_device_at(0).unwrap().alloc, before[0] - 12288);
    assert_eq!(a.l2arc_device_at(1).unwrap().alloc, before[1]);
    assert_eq!(a.stats().l2_hdr_size, hdr - HDR_L2ONLY_SIZE);
    check_l2(&a);
}

#[test]
fn each_device_evicts_ahead_of_its_own_hand() {
    // Two 64 MiB devices (16 MiB passes, a quarter each): device 1 wraps and evicts its
    // oldest blocks while device 0 keeps its own.
    let mut a = two_devices(64 * MIB);
    let mut t = 0;
    let mut first_on = [None, None];
    let mut evicted = [0u64; 2];
    for round in 0..24u64 {
        t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
        let f = a.l2arc_feed(t);
        first_on[f.dev].get_or_insert(round * 2000);
        evicted[f.dev] += f.headers_evicted;
        t += 200 * MS;
    }
    assert!(!a.l2arc_device_at(0).unwrap().first && !a.l2arc_device_at(1).unwrap().first, "both wrapped");
    assert!(evicted[0] > 0 && evicted[1] > 0, "{evicted:?}");
    check_l2(&a);
    // The blocks the first pass wrote to device 1 were overwritten by its wrap.
    let first = first_on[1].unwrap();
    assert!((first..first + 100).all(|i| a.l2_device_of(k(i)) != Some(1)));
}

#[test]
fn each_kept_device_is_rebuilt_from_its_own_log_blocks() {
    // Two 2 GiB devices: l2ad_log_entries = 128 each.
    let mut a = two_devices(2 * GIB);
    let mut t = 0;
    for round in 0..30u64 {
        t = read_range(&mut a, round * 2000, round * 2000 + 2000, t);
        a.l2arc_feed(t);
        t += 200 * MS;
    }
    let logs: Vec<u64> = (0..2).map(|d| a.l2arc_device_at(d).unwrap().entries()).collect();
    assert!(logs.iter().all(|&n| n > 0));
    let on: Vec<Vec<u64>> =
        (0..2).map(|d| (0..60_000).filter(|&i| a.l2_device_of(k(i)) == Some(d)).collect()).collect();
    let mut devs = a.l2arc_detach();
    assert_eq!(devs.len(), 2);
    let mut b = arc(ZfsRelease::V2_2, 256 * MIB);
    b.attach_l2arc(&l2pn(&[2 * GIB, 2 * GIB], CacheProperty::All, L2arcTunables::default(), 11)).unwrap();
    let d1 = devs.pop().unwrap();
    let d0 = devs.pop().unwrap();
    // Device 1 only first: its blocks come back on device 1, none of device 0's.
    let r1 = b.l2arc_rebuild(1, d1);
    assert!(r1.headers > 0 && r1.headers.is_multiple_of(128), "{r1:?}");
    assert_eq!(r1.reads, r1.log_blocks + 1);
    assert!(on[0].iter().all(|&i| b.l2_device_of(k(i)).is_none()));
    assert!(on[1].iter().all(|&i| b.l2_device_of(k(i)).is_none_or(|d| d == 1)));
    let r0 = b.l2arc_rebuild(0, d0);
    assert!(r0.headers > 0, "{r0:?}");
    assert!(on[0].iter().all(|&i| b.l2_device_of(k(i)).is_none_or(|d| d == 0)));
    let s = b.stats();
    assert_eq!((s.l2_rebuild_bufs, s.l2_rebuild_success), (r0.headers + r1.headers, 2));
    assert_eq!(s.l2_hdr_size, (r0.headers + r1.headers) * HDR_L2ONLY_SIZE);
    check_l2(&b);
    // A restored block reads from its device.
    let key = on[0].iter().copied().find(|&i| b.l2_contains(k(i))).unwrap();
    assert!(matches!(b.access(k(key), data(16384, 12288), DEMAND, t), ArcAccess::L2Hit { dev: 0, .. }));
}

#[test]
fn per_device_threads_each_feed_their_own_device() {
    // Master's per-device threads (b525525b44): l2arc_feed_dev(d) writes to d only, and
    // both devices take a full pass at the same instant: twice the bytes of one pass.
    let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
    let tun =
        L2arcTunables { per_device_feed: Some(true), l2arc_write_max: Some(8 * MIB), ..Default::default() };
    a.attach_l2arc(&l2pn(&[GIB, GIB], CacheProperty::All, tun, 11)).unwrap();
    assert!(a.l2arc_per_device_feed());
    a.set_arc_warm(true);
    // 96 MB of blocks, enough for two full passes (8 MiB and the log blocks' worst case:
    // 24 MiB each).
    let t = read_range(&mut a, 0, 8000, 0);
    let f0 = a.l2arc_feed_dev(0, t);
    let f1 = a.l2arc_feed_dev(1, t);
    assert_eq!((f0.dev, f1.dev), (0, 1));
    for f in [f0, f1] {
        assert!(f.asize_written * 10 > f.target * 9 && f.asize_written <= f.target, "{f:?}");
    }
    assert_eq!(a.l2arc_device_at(0).unwrap().alloc, f0.asize_written);
    assert_eq!(a.l2arc_device_at(1).unwrap().alloc, f1.asize_written);
    // No block twice: eligibility is global.
    check_l2(&a);
    // A tune phase cannot switch it.
    let off = L2arcTunables { per_device_feed: Some(false), ..Default::default() };
    let e = a.retune_l2arc(&off).unwrap_err().to_string();
    assert!(e.contains("per_device_feed"), "{e}");
    // Off by default in every release.
    let s = L2arcTunables::default().resolve(ZfsRelease::V2_2, 11).unwrap();
    assert!(!s.per_device_feed);
}

#[test]
fn devices_are_bounded_by_count_and_size() {
    let mut a = arc(ZfsRelease::V2_2, 256 * MIB);
    let nine = vec![GIB; MAX_CACHE_DEVICES + 1];
    let e = a.attach_l2arc(&l2pn(&nine, CacheProperty::All, L2arcTunables::default(), 11)).unwrap_err();
    assert!(e.to_string().contains("filesystem.cache"), "{e}");
    assert!(a.attach_l2arc(&l2pn(&[], CacheProperty::All, L2arcTunables::default(), 11)).is_err());
    // One device: up to 2^31 - 1 sectors (8 TiB at ashift 12); two: 2^30 - 1 each.
    let big = ((1u64 << 30) + 1) << 12;
    assert!(a.attach_l2arc(&l2pn(&[big], CacheProperty::All, L2arcTunables::default(), 11)).is_ok());
    let e = a.attach_l2arc(&l2pn(&[big, GIB], CacheProperty::All, L2arcTunables::default(), 11)).unwrap_err();
    assert!(e.to_string().contains("2^30 - 1 sectors"), "{e}");
    let ok = ((1u64 << 30) - 1) << 12;
    assert!(a.attach_l2arc(&l2pn(&[ok, ok], CacheProperty::All, L2arcTunables::default(), 11)).is_ok());
}
