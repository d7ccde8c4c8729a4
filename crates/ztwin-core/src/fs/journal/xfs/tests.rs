use super::*;
use crate::fs::journal::tests::{Ev, FakeDev};
use crate::fs::journal::BlockDev;
use crate::sim::time::{MS, US};
use proptest::prelude::*;

const GIB: u64 = 1 << 30;

fn log(files: u32) -> XfsLog {
    XfsLog::new(XfsParams::default(), XfsLayout::mkfs(10 * GIB), files, DeviceCaps::virtio_blk(true)).unwrap()
}

/// Runs the log's work from `now` until no checkpoint is in flight or requested.
fn drive(l: &mut XfsLog, dev: &mut impl BlockDev, mut now: Nanos) -> Nanos {
    for _ in 0..10_000 {
        let s = l.log_step(now, dev);
        let busy = l.pushes.iter().any(|p| p.is_some()) || (l.push_request >= l.cil_seq && l.cil_items > 0);
        if !busy {
            return now;
        }
        now = s.wake_at.expect("work in flight has a wake time");
    }
    panic!("the log did not settle");
}

/// An O_DIRECT overwrite logs only timestamps: fdatasync skips the log force
/// (`xfs_fsync_seq` returns 0) and flushes the data device once.
#[test]
fn fdatasync_after_an_overwrite_is_one_flush() {
    let mut l = log(2);
    assert_eq!(l.note_write(0, WriteKind::Overwrite, MS), (true, false));
    let p = l.fsync(0, true, 2 * MS);
    assert_eq!((p.wait_commit, p.kick, p.then.flush_requests()), (None, false, 1));
    assert_eq!(l.stats().log_forces, 0);
}

/// fsync after an overwrite forces the log: the checkpoint (start record, transaction
/// header, the inode item, commit record: 308 bytes) goes in one iclog, its 512-byte
/// header and the payload rounded to 512, written with PREFLUSH|FUA at the log's start
/// in the middle AG; the fsync then issues no flush of its own. Once the checkpoint is on
/// disk the inode is unpinned and the next fsync is a flush.
#[test]
fn fsync_forces_a_one_iclog_checkpoint() {
    let mut l = log(2);
    assert_eq!(CHECKPOINT_OVERHEAD_BYTES + INODE_ITEM_BYTES, 308);
    l.note_write(1, WriteKind::Overwrite, MS);
    let p = l.fsync(1, false, 2 * MS);
    assert_eq!((p.wait_commit, p.kick, p.then.is_empty()), (Some(1), true, true));
    let mut dev = FakeDev::new(MS, 2 * MS);
    let end = drive(&mut l, &mut dev, 2 * MS);
    let off = XfsLayout::mkfs(10 * GIB).log_offset;
    let t = 2 * MS;
    assert_eq!(
        dev.log,
        vec![
            Ev::Flush(t, t + 2 * MS),
            Ev::Write(t + 2 * MS, off, 1024, t + 3 * MS),
            Ev::Flush(t + 3 * MS, t + 5 * MS)
        ]
    );
    assert_eq!((end, l.completed_through()), (t + 5 * MS, 1));
    let p = l.fsync(1, false, 10 * MS);
    assert_eq!((p.wait_commit, p.then.flush_requests()), (None, 1));
}

/// A write into unwritten extents logs the core and the fork: fdatasync forces the log.
#[test]
fn a_conversion_makes_fdatasync_force_the_log() {
    let mut l = log(1);
    assert_eq!(l.note_write(0, WriteKind::IntoUnwritten, MS), (true, true));
    let p = l.fsync(0, true, MS);
    assert_eq!((p.wait_commit, p.then.is_empty()), (Some(1), true));
    // Forced once: ili_fsync_fields is cleared, the inode stays pinned until the
    // checkpoint is on disk, so a second fdatasync waits for the same sequence.
    let p = l.fsync(0, true, MS);
    assert_eq!(p.wait_commit, None);
}

/// Two fsyncs whose changes are in one CIL sequence share its checkpoint; relogging
/// an inode in the same sequence adds no bytes.
#[test]
fn two_fsyncs_share_a_checkpoint() {
    let mut l = log(2);
    l.note_write(0, WriteKind::Overwrite, MS);
    l.note_write(1, WriteKind::Overwrite, MS);
    l.note_write(1, WriteKind::Overwrite, 10 * MS);
    assert_eq!(l.cil(), (1, 2 * u64::from(INODE_ITEM_BYTES)));
    assert_eq!(l.fsync(0, false, 11 * MS).wait_commit, Some(1));
    assert_eq!(l.fsync(1, false, 11 * MS).wait_commit, Some(1));
    let mut dev = FakeDev::new(MS, MS);
    drive(&mut l, &mut dev, 11 * MS);
    assert_eq!((l.stats().checkpoints, dev.writes().len()), (1, 1));
}

/// Checkpoints overlap: a second force while the first is in flight pushes at once; the
/// second completes only after the first (log order).
#[test]
fn checkpoints_overlap_and_complete_in_order() {
    let mut l = log(2);
    let mut dev = FakeDev::new(5 * MS, MS);
    l.note_write(0, WriteKind::Overwrite, 0);
    l.fsync(0, false, 0);
    l.log_step(0, &mut dev);
    l.note_write(1, WriteKind::Overwrite, 4 * MS);
    assert_eq!(l.fsync(1, false, 4 * MS).wait_commit, Some(2));
    let s = l.log_step(4 * MS, &mut dev);
    assert_eq!(dev.flushes(), 2, "both pre-flushes issued");
    assert_eq!(s.completed_through, 0);
    drive(&mut l, &mut dev, 4 * MS);
    assert_eq!(l.completed_through(), 2);
}

/// A checkpoint larger than an iclog: the first iclogs with PREFLUSH, then, after them,
/// the commit iclog with PREFLUSH|FUA.
#[test]
fn a_large_checkpoint_spans_iclogs() {
    let mut l = log(100);
    for f in 0..100 {
        l.note_write(f, WriteKind::Extend, MS);
    }
    let bytes = l.cil().1 + u64::from(CHECKPOINT_OVERHEAD_BYTES);
    let cap = u64::from(XLOG_BIG_RECORD_BSIZE - BBSIZE);
    let iclogs = bytes.div_ceil(cap);
    assert!(iclogs > 2, "{iclogs}");
    l.fsync(0, false, MS);
    let mut dev = FakeDev::new(MS, MS);
    drive(&mut l, &mut dev, MS);
    let w = dev.writes();
    assert_eq!(w.len(), 2);
    assert_eq!(u64::from(w[0].2), (iclogs - 1) * u64::from(XLOG_BIG_RECORD_BSIZE));
    // Flush, the first iclogs, then flush, the commit iclog, flush.
    assert!(matches!(dev.log[0], Ev::Flush(..)) && matches!(dev.log[2], Ev::Flush(..)));
    assert!(matches!(dev.log[4], Ev::Flush(..)));
    assert_eq!(l.stats().iclog_writes, iclogs);
}

/// The log worker pushes a non-empty CIL every 30 s; the log head wraps.
#[test]
fn the_log_worker_pushes_and_the_log_wraps() {
    let p = XfsParams { log_bytes: 8 * u64::from(XLOG_BIG_RECORD_BSIZE) + 512, ..XfsParams::default() };
    let mut l = XfsLog::new(p, XfsLayout { log_offset: GIB }, 1, DeviceCaps::virtio_blk(true)).unwrap();
    let mut dev = FakeDev::new(MS, MS);
    l.note_write(0, WriteKind::Overwrite, MS);
    let s = l.log_step(MS, &mut dev);
    assert_eq!(s.wake_at, Some(30 * crate::sim::time::SEC));
    drive(&mut l, &mut dev, 30 * crate::sim::time::SEC);
    assert_eq!((l.stats().checkpoints, l.stats().background_checkpoints), (1, 1));
    let mut now = 31 * crate::sim::time::SEC;
    let mut wrapped = false;
    for _ in 0..400 {
        now += 5 * MS;
        l.note_write(0, WriteKind::Overwrite, now);
        l.fsync(0, false, now);
        let before = dev.log.len();
        now = drive(&mut l, &mut dev, now);
        let w: Vec<_> = dev.log[before..]
            .iter()
            .filter_map(|e| if let Ev::Write(at, off, n, _) = *e { Some((at, off, n)) } else { None })
            .collect();
        if w.len() == 2 {
            assert_eq!(w[1].1, GIB);
            assert_eq!(w[0].1 + u64::from(w[0].2), GIB + p.log_bytes);
            wrapped = true;
        }
    }
    assert!(wrapped);
}

#[test]
fn bad_parameters_are_refused() {
    for p in [
        XfsParams { iclogs: 1, ..XfsParams::default() },
        XfsParams { iclog_bytes: 3000, ..XfsParams::default() },
        XfsParams { log_bytes: 4096, ..XfsParams::default() },
        XfsParams { hz: 0, ..XfsParams::default() },
    ] {
        assert!(XfsLog::new(p, XfsLayout { log_offset: 0 }, 1, DeviceCaps::virtio_blk(true)).is_err());
    }
    let mut l = log(1);
    assert_eq!(l.note_write(9, WriteKind::Extend, MS), (false, false));
    assert_eq!(l.fsync(9, true, MS).then.flush_requests(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any writes, syncs and time: completions only advance, a sync waits only for a
    /// sequence that was or is in the CIL, and once the log settles every waited-for
    /// sequence is complete; every checkpoint's last write carries PREFLUSH|FUA.
    #[test]
    fn the_log_keeps_its_invariants(acts in proptest::collection::vec((0u8..3, 0u32..12, 0u8..4, 0u32..3000), 1..200)) {
        let mut l = log(10);
        let mut dev = FakeDev::new(300 * US, 700 * US);
        let (mut now, mut waited, mut last) = (0, 0, 0);
        for (op, f, k, us) in acts {
            match op {
                0 => {
                    let kind = [WriteKind::Overwrite, WriteKind::IntoUnwritten, WriteKind::Extend,
                        WriteKind::Fallocate { extends: true }][k as usize];
                    l.note_write(f, kind, now);
                }
                1 => {
                    let p = l.fsync(f, k % 2 == 0, now);
                    if let Some(s) = p.wait_commit {
                        prop_assert!(s <= l.cil_seq && s > l.completed_through());
                        waited = waited.max(s);
                        prop_assert!(p.then.is_empty());
                    } else {
                        prop_assert_eq!(p.then.flush_requests(), 1);
                    }
                }
                _ => {
                    let until = now + u64::from(us) * US;
                    while now < until {
                        let s = l.log_step(now, &mut dev);
                        match s.wake_at { Some(t) if t <= until => now = t.max(now + 1), _ => now = until }
                    }
                }
            }
            prop_assert!(l.completed_through() >= last);
            last = l.completed_through();
            for p in l.pushes.iter().flatten().filter(|p| p.iclogs > 1) {
                let last_step = p.phase_b.steps().last().map(|s| s.op);
                let ok = matches!(last_step, Some(IoOp::Write { fua: true, .. }));
                prop_assert!(ok);
            }
        }
        drive(&mut l, &mut dev, now);
        prop_assert!(l.completed_through() >= waited);
    }
}
