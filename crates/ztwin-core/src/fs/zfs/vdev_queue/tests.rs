use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::config::{DeviceConfig, ZfsRelease};
use crate::sim::time::US;

const K: u32 = 1024;

fn device() -> Device {
    Device::new(
        &DeviceConfig {
            name: "d".into(),
            kind: "test".into(),
            iops_limit: None,
            throughput_limit_bytes_per_sec: None,
            read_latency_ns: 100 * US,
            write_latency_ns: 100 * US,
            latency_sigma: 0.0,
            transfer_bytes_per_sec: 1e12,
            parallelism: 1024,
            capacity_bytes: None,
            ephemeral: false,
            rotational: None,
            flush_latency_ns: 0,
            queue_rotational: None,
            iops_size_bytes: None,
            burst: None,
            io_limit: None,
            host_cache: false,
        },
        1,
    )
}

fn queue(release: ZfsRelease) -> VdevQueue {
    let p = VdevQueueParams::new(&release.features(), &Default::default(), &Default::default());
    VdevQueue::new(p, &[true])
}

/// A 2.2 queue whose async write class keeps at most one write issued (minimum and
/// maximum 1).
fn one_async_write() -> VdevQueue {
    let mut q = queue(ZfsRelease::V2_2);
    q.p.min_active[Priority::AsyncWrite as usize] = 1;
    q.set_async_write_max(1);
    q
}

fn read(offset: u64, size: u32, prio: Priority, tag: u64) -> Request {
    Request::new(0, offset, size, Op::Read, prio, Tag::Lwb(tag))
}

fn write(offset: u64, size: u32, prio: Priority, tag: u64) -> Request {
    Request::new(0, offset, size, Op::Write, prio, Tag::Lwb(tag))
}

/// The defaults each release gives the classes (vdev_queue.c's globals).
#[test]
fn class_limits_are_the_releases() {
    let q = queue(ZfsRelease::V2_2);
    let p = q.params();
    assert_eq!(
        (p.min_active, p.max_active_class),
        ([10, 10, 1, 2, 1, 1, 1, 1, 1], [10, 10, 3, 10, 3, 2, 1, 2, 3])
    );
    assert_eq!(
        (p.max_active, p.aggregation_limit, p.aggregation_limit_non_rotating),
        (1000, 1 << 20, 128 << 10)
    );
    assert_eq!((p.read_gap_limit, p.write_gap_limit), (32 << 10, 4 << 10));
    assert!(p.round_robin && p.lba_deadline);
    let p08 = *queue(ZfsRelease::V0_8).params();
    assert!(!p08.round_robin && !p08.lba_deadline && p08.max_active_class[Priority::Scrub as usize] == 2);
    assert_eq!(*queue(ZfsRelease::V2_3).params(), *p);
}

/// Sync reads beyond the class maximum queue; two adjacent ones then leave as one device
/// read when a slot frees, a third only up to the aggregation limit (128K here).
#[test]
fn adjacent_reads_of_one_class_aggregate_into_one_device_io_up_to_the_limit() {
    let mut dev = [device()];
    let mut q = queue(ZfsRelease::V2_2);
    for k in 0..10u64 {
        assert!(q.submit(read(k << 30, 16 * K, Priority::SyncRead, k), k * US, &mut dev).is_some());
    }
    // Three adjacent 64K reads queue behind them.
    for k in 0..3u64 {
        assert_eq!(
            q.submit(read((100 << 30) + k * 65536, 64 * K, Priority::SyncRead, 10 + k), 10 * US, &mut dev),
            None
        );
    }
    assert_eq!((q.queued(0), dev[0].counters().reads), (3, 10));
    let t = q.next_at().expect("a completion frees a slot");
    q.advance(t, &mut dev);
    let done: Vec<_> = q.take_resolved().collect();
    // One slot: the first two go together (128K), the third waits for the next slot.
    assert_eq!(done.len(), 2);
    assert_eq!(done[0].1, done[1].1, "one device I/O");
    assert_eq!(dev[0].counters().reads, 11);
    assert_eq!(dev[0].counters().read_bytes, 10 * 16 * 1024 + 128 * 1024);
    assert_eq!(q.queued(0), 1);
    q.advance(q.next_at().unwrap(), &mut dev);
    assert_eq!(q.take_resolved().count(), 1);
    assert_eq!(q.queued(0), 0);
}

/// Reads aggregate across a gap of up to zfs_vdev_read_gap_limit (the gap is read too),
/// and across classes: a sync read takes queued prefetches (async reads) next to it.
#[test]
fn reads_aggregate_across_small_gaps_and_classes() {
    let mut dev = [device()];
    let mut q = queue(ZfsRelease::V2_2);
    // Three prefetches fill the async read class; two more queue.
    for k in 0..3u64 {
        q.submit(read(k << 30, 16 * K, Priority::AsyncRead, k), 0, &mut dev);
    }
    assert_eq!(q.submit(read(5 << 30, 16 * K, Priority::AsyncRead, 3), 0, &mut dev), None);
    assert_eq!(q.submit(read((5 << 30) + 48 * 1024, 16 * K, Priority::AsyncRead, 4), 0, &mut dev), None);
    // A demand read between them (sync class has room) issues at once with both: a
    // 32K gap is bridged.
    let done = q.submit(read((5 << 30) + 16 * 1024, 16 * K, Priority::SyncRead, 5), 0, &mut dev);
    assert!(done.is_some());
    let others: Vec<_> = q.take_resolved().collect();
    assert_eq!(others.len(), 2);
    assert!(others.iter().all(|&(_, d)| Some(d) == done));
    assert_eq!(dev[0].counters().read_bytes, 3 * 16 * 1024 + 64 * 1024, "one 64K read");
    assert_eq!(q.active(0, Priority::SyncRead), 1);
    // Writes are not bridged over a gap.
    let mut q = one_async_write();
    q.submit(write(1 << 30, 16 * K, Priority::AsyncWrite, 0), 0, &mut dev);
    q.submit(write(0, 16 * K, Priority::AsyncWrite, 1), 0, &mut dev);
    q.submit(write(20 * 1024, 16 * K, Priority::AsyncWrite, 2), 0, &mut dev);
    let before = dev[0].counters().writes;
    q.advance(q.next_at().unwrap(), &mut dev);
    assert_eq!(q.take_resolved().count(), 1, "a 4K gap: two writes, not one");
    assert_eq!(dev[0].counters().writes, before + 1);
}

/// A sync read is issued ahead of async writes queued beyond their minimum: at once when
/// it arrives, and first when slots of both classes free at once.
#[test]
fn a_sync_read_goes_before_queued_async_writes_beyond_their_min() {
    let mut dev = [device()];
    let mut q = queue(ZfsRelease::V2_2);
    q.set_async_write_max(10);
    for k in 0..15u64 {
        q.submit(write(k << 30, 16 * K, Priority::AsyncWrite, k), 0, &mut dev);
    }
    assert_eq!((q.active(0, Priority::AsyncWrite), q.queued(0)), (10, 5));
    assert!(
        q.submit(read(7 << 40, 16 * K, Priority::SyncRead, 100), 0, &mut dev).is_some(),
        "not behind the writes"
    );
    // Fill the sync read class and queue one more read, at a later time.
    for k in 1..10u64 {
        q.submit(read((7 << 40) + (k << 30), 16 * K, Priority::SyncRead, 100 + k), 0, &mut dev);
    }
    assert_eq!(q.submit(read(9 << 40, 16 * K, Priority::SyncRead, 200), 0, &mut dev), None);
    // Everything issued at 0 completes at once: the read goes first, then the writes.
    q.advance(q.next_at().unwrap(), &mut dev);
    let order: Vec<_> = q.take_resolved().map(|r| r.0).collect();
    assert_eq!(order[0], Tag::Lwb(200), "{order:?}");
    assert_eq!(order.len(), 6);
}

/// 0.8 searches the classes under their minimum in priority order; 2.1+ round-robin
/// from the class after the last issued.
#[test]
fn the_min_search_is_round_robin_from_21() {
    let mut dev = [device()];
    for (rel, first) in [(ZfsRelease::V0_8, Priority::SyncWrite), (ZfsRelease::V2_2, Priority::AsyncRead)] {
        let mut q = queue(rel);
        let mut p = q.p;
        p.max_active = 1;
        q.p = p;
        // One sync write in flight (the leaf at zfs_vdev_max_active), then an async read
        // and a sync write queue, each under its minimum.
        q.submit(write(0, 4096, Priority::SyncWrite, 0), 0, &mut dev);
        q.submit(read(1 << 30, 4096, Priority::AsyncRead, 1), 0, &mut dev);
        q.submit(write(2 << 30, 4096, Priority::SyncWrite, 2), 0, &mut dev);
        q.advance(q.next_at().unwrap(), &mut dev);
        let got: Vec<_> = q.take_resolved().collect();
        let want = if first == Priority::SyncWrite { Tag::Lwb(2) } else { Tag::Lwb(1) };
        assert_eq!(got[0].0, want, "{rel:?}");
    }
}

/// Offset-ordered classes issue the next offset after the last one issued; 2.2 only
/// within the oldest 0.54 s of queueing.
#[test]
fn async_classes_issue_in_offset_order_from_the_last_offset() {
    let mut dev = [device()];
    let mut q = one_async_write();
    q.submit(write(50 << 20, 4096, Priority::AsyncWrite, 0), 0, &mut dev);
    for (k, off) in [(1, 10u64 << 20), (2, 60 << 20), (3, 70 << 20)] {
        q.submit(write(off, 4096, Priority::AsyncWrite, k), 0, &mut dev);
    }
    let mut order = vec![];
    while q.has_backlog() {
        q.advance(q.next_at().unwrap(), &mut dev);
        order.extend(q.take_resolved().map(|r| r.0));
    }
    assert_eq!(order, [Tag::Lwb(2), Tag::Lwb(3), Tag::Lwb(1)]);
}

/// An optional write fills a span only up to a mandatory write within the write gap
/// limit; issued alone it completes with no device I/O.
#[test]
fn optional_writes_fill_spans_and_alone_are_discarded() {
    let mut dev = [device()];
    let mut q = one_async_write();
    q.submit(write(1 << 30, 4096, Priority::AsyncWrite, 0), 0, &mut dev);
    q.submit(write(0, 8192, Priority::AsyncWrite, 1), 0, &mut dev);
    let mut opt = write(8192, 4096, Priority::AsyncWrite, 2);
    opt.optional = true;
    q.submit(opt, 0, &mut dev);
    q.submit(write(12288, 4096, Priority::AsyncWrite, 3), 0, &mut dev);
    let before = dev[0].counters();
    q.advance(q.next_at().unwrap(), &mut dev);
    assert_eq!(q.take_resolved().count(), 3, "one span over the optional write");
    assert_eq!(
        (dev[0].counters().writes - before.writes, dev[0].counters().write_bytes - before.write_bytes),
        (1, 16384)
    );
    let mut q = one_async_write();
    q.submit(write(1 << 30, 4096, Priority::AsyncWrite, 0), 0, &mut dev);
    let mut opt = write(0, 4096, Priority::AsyncWrite, 1);
    opt.optional = true;
    q.submit(opt, 0, &mut dev);
    let before = dev[0].counters().writes;
    q.advance(q.next_at().unwrap(), &mut dev);
    assert_eq!(q.take_resolved().count(), 1);
    assert_eq!(dev[0].counters().writes, before, "discarded");
}

/// A demand read that finds a prefetch's read held in the async-read class upgrades it
/// to sync read (zio_change_priority): it is issued at the leaf's next completion, ahead
/// of the prefetches queued before it, though the async class has no room.
#[test]
fn an_upgraded_prefetch_goes_as_a_sync_read() {
    let mut dev = [device()];
    let mut q = queue(ZfsRelease::V2_2);
    for k in 0..3u64 {
        q.submit(read(k << 30, 16 * K, Priority::AsyncRead, k), k * US, &mut dev);
    }
    for k in 3..6u64 {
        assert!(q.submit(read(k << 30, 16 * K, Priority::AsyncRead, k), 5 * US, &mut dev).is_none());
    }
    let held = q.submit_tracked(read(9 << 30, 16 * K, Priority::AsyncRead, 9), 5 * US, &mut dev).unwrap_err();
    q.change_priority(held, Tag::Lwb(9), Priority::SyncRead);
    // A stale handle (wrong tag) changes nothing.
    q.change_priority(held, Tag::Lwb(3), Priority::SyncRead);
    assert_eq!((q.active(0, Priority::SyncRead), q.queued(0)), (0, 4), "not issued by the change itself");
    // The first completion frees one async slot: the sync read goes first, then one
    // prefetch.
    q.advance(q.next_at().unwrap(), &mut dev);
    let order: Vec<_> = q.take_resolved().map(|r| r.0).collect();
    assert_eq!(order, [Tag::Lwb(9), Tag::Lwb(3)]);
}

#[derive(Debug, Clone)]
enum Step {
    Submit { leaf: usize, block: u64, blocks: u32, write: bool, prio: u8, optional: bool },
    Advance(u64),
    AsyncMax(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0usize..2, 0u64..64, 1u32..5, any::<bool>(), 0u8..9, prop::bool::weighted(0.05)).prop_map(
            |(leaf, block, blocks, write, prio, optional)| Step::Submit { leaf, block, blocks, write, prio, optional }
        ),
        3 => (0u64..300).prop_map(Step::Advance),
        1 => (1u32..12).prop_map(Step::AsyncMax),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever arrives: no class has more issued than its maximum (or its minimum, when
    /// that is larger), no leaf more than zfs_vdev_max_active (here 16), and every I/O
    /// completes exactly once, when or after it was submitted.
    #[test]
    fn limits_hold_and_every_io_completes_once(
        steps in prop::collection::vec(step(), 1..300),
        release in prop::sample::select(vec![ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2]),
    ) {
        let mut dev = [device(), device()];
        let p = VdevQueueParams { max_active: 16, ..VdevQueueParams::new(&release.features(), &Default::default(), &Default::default()) };
        let mut q = VdevQueue::new(p, &[true, false]);
        let mut now = 0;
        let mut pending: HashMap<u64, Nanos> = HashMap::new();
        let mut completed: HashMap<u64, Nanos> = HashMap::new();
        let mut next = 0u64;
        // A lowered async write maximum does not take back writes issued under the old one.
        let mut async_ceiling = q.max_of(Priority::AsyncWrite as usize);
        let check = |q: &VdevQueue, ceiling: u32| -> Result<(), TestCaseError> {
            for leaf in 0..2 {
                for p in 0..NUM_CLASSES {
                    let max = if p == Priority::AsyncWrite as usize { ceiling } else { q.max_of(p) };
                    prop_assert!(q.active(leaf, Priority::ALL[p]) <= q.min_of(p).max(max));
                }
                prop_assert!(q.total_active(leaf) <= 16);
            }
            Ok(())
        };
        for s in steps {
            match s {
                Step::Submit { leaf, block, blocks, write, prio, optional } => {
                    let mut r = Request::new(leaf, block * 4096, blocks * 4096, if write { Op::Write } else { Op::Read }, Priority::ALL[prio as usize], Tag::Lwb(next));
                    r.optional = optional && write;
                    match q.submit(r, now, &mut dev) {
                        Some(d) => {
                            prop_assert!(d >= now);
                            prop_assert!(completed.insert(next, d).is_none());
                        }
                        None => {
                            pending.insert(next, now);
                        }
                    }
                    next += 1;
                }
                Step::Advance(us) => {
                    // Events come at the queue's wake-ups, as the driver runs them.
                    let target = now + us * US;
                    while let Some(t) = q.next_at().filter(|&t| t <= target) {
                        now = now.max(t);
                        q.advance(now, &mut dev);
                        check(&q, async_ceiling)?;
                        for (tag, d) in q.take_resolved().collect::<Vec<_>>() {
                            let Tag::Lwb(id) = tag else { unreachable!() };
                            let at = pending.remove(&id).expect("resolved once, and only a queued I/O");
                            prop_assert!(d >= at && d >= now);
                            prop_assert!(completed.insert(id, d).is_none());
                        }
                    }
                    now = target;
                }
                Step::AsyncMax(n) => {
                    q.set_async_write_max(n);
                    async_ceiling = async_ceiling.max(n);
                }
            }
            for (tag, d) in q.take_resolved().collect::<Vec<_>>() {
                let Tag::Lwb(id) = tag else { unreachable!() };
                pending.remove(&id).expect("resolved once");
                prop_assert!(completed.insert(id, d).is_none());
            }
            check(&q, async_ceiling)?;
        }
        // Drain: every I/O completes.
        while let Some(t) = q.next_at() {
            now = now.max(t);
            q.advance(now, &mut dev);
            for (tag, d) in q.take_resolved().collect::<Vec<_>>() {
                let Tag::Lwb(id) = tag else { unreachable!() };
                pending.remove(&id).expect("resolved once");
                prop_assert!(completed.insert(id, d).is_none());
            }
            check(&q, async_ceiling)?;
        }
        prop_assert!(pending.is_empty(), "left queued: {pending:?}");
        prop_assert_eq!(completed.len() as u64, next);
    }
}
