use super::*;
use crate::fs::journal::tests::{Ev, FakeDev};
use crate::fs::journal::BlockDev;
use crate::sim::time::{MS, SEC, US};
use proptest::prelude::*;

const GIB: u64 = 1 << 30;
const BS: u64 = 4096;

/// A 10 GiB ext4 as mke2fs makes it, with `n` 100 MiB files (extents in the inode).
fn journal(p: Ext4Params, n: u32) -> Ext4Journal {
    let files: Vec<_> = (0..n)
        .map(|k| Ext4FileSpec { data_offset: GIB + u64::from(k) * (100 << 20), bytes: 100 << 20 })
        .collect();
    let layout = Ext4Layout::mke2fs(&p, 10 * GIB, &files).unwrap();
    Ext4Journal::new(p, &layout, DeviceCaps::virtio_blk(true)).unwrap()
}

/// A journal whose `n` files each have their own inode-table block (so each logs a
/// distinct block), `journal_blocks` long, at byte 1 GiB.
fn spread(journal_blocks: u32, n: u32) -> Ext4Journal {
    let p = Ext4Params { journal_blocks, ..Ext4Params::default() };
    let files = (0..n)
        .map(|k| Ext4FileLayout {
            inode_block: 8 * GIB + u64::from(k) * BS,
            extent_leaf: None,
            block_bitmap: 4096 * BS,
            group_desc: BS,
        })
        .collect();
    let layout = Ext4Layout { journal_offset: GIB, superblock_block: 0, files };
    Ext4Journal::new(p, &layout, DeviceCaps::virtio_blk(true)).unwrap()
}

/// Runs kjournald2 from `now` until no commit is in flight; returns the time.
fn drive(j: &mut Ext4Journal, dev: &mut impl BlockDev, mut now: Nanos) -> Nanos {
    for _ in 0..10_000 {
        let s = j.commit_step(now, dev);
        if j.committing_tid().is_none() && j.running_tid().is_none_or(|t| j.commit_request < t) {
            return now;
        }
        now = s.wake_at.expect("a commit in flight has a wake time");
    }
    panic!("the journal did not settle");
}

/// O_DIRECT overwrite then fdatasync: only the timestamps changed, so no commit is
/// waited for and the sync is one cache flush (ext4_fsync_journal's needs_barrier).
#[test]
fn fdatasync_after_an_overwrite_is_one_flush() {
    let mut j = journal(Ext4Params::default(), 4);
    let e = j.note_write(0, WriteKind::Overwrite, 10 * MS);
    assert!(e.dirtied && !e.datasync);
    let plan = j.fsync(0, true, 11 * MS);
    assert_eq!(plan.wait_commit, None);
    assert!(!plan.kick);
    assert_eq!(plan.then.steps(), &[crate::fs::journal::PlanStep { op: IoOp::Flush, after_previous: false }]);
    let mut dev = FakeDev::new(MS, 2 * MS);
    let mut run = PlanRun::new(&plan.then, DeviceCaps::virtio_blk(true));
    crate::fs::journal::tests::run_to_end(&mut run, &mut dev, 11 * MS);
    assert_eq!(dev.log, vec![Ev::Flush(11 * MS, 13 * MS)]);
    // The running transaction (the mtime) is left to the timer.
    assert_eq!(j.running_tid(), Some(1));
    assert_eq!(j.stats().commits, 0);
}

/// fsync after a write that changed mtime commits: the journal superblock (first commit
/// after mount), the descriptor and the inode block at the journal head, then the commit
/// block with PREFLUSH|FUA (flush, write, flush on virtio), in that order; the fsync adds
/// no flush of its own.
#[test]
fn fsync_after_an_mtime_change_commits_the_journal() {
    let mut j = journal(Ext4Params::default(), 4);
    let jo = j.journal_offset;
    j.note_write(1, WriteKind::Overwrite, 10 * MS);
    let plan = j.fsync(1, false, 11 * MS);
    assert_eq!(plan.wait_commit, Some(1));
    assert!(plan.kick && plan.then.is_empty());
    let mut dev = FakeDev::new(MS, 2 * MS);
    let s = j.commit_step(11 * MS, &mut dev);
    assert_eq!(s.committed_through, 0);
    let b = j.commit_tail_plan().unwrap();
    assert!(matches!(b.steps()[0].op, IoOp::Write { preflush: true, fua: true, bytes: 4096, .. }));
    let end = drive(&mut j, &mut dev, 11 * MS);
    assert_eq!(j.committed_through(), 1);
    let t = 11 * MS;
    assert_eq!(
        dev.log,
        vec![
            Ev::Write(t, jo, 4096, t + MS),
            Ev::Write(t + MS, jo + BS, 8192, t + 2 * MS),
            Ev::Flush(t + 2 * MS, t + 4 * MS),
            Ev::Write(t + 4 * MS, jo + 3 * BS, 4096, t + 5 * MS),
            Ev::Flush(t + 5 * MS, t + 7 * MS),
        ]
    );
    assert_eq!(end, t + 7 * MS);
    assert_eq!(j.stats().journal_blocks, 4);
    // A second commit has no journal superblock write.
    j.note_write(1, WriteKind::Overwrite, 20 * MS);
    let plan = j.fsync(1, false, 21 * MS);
    assert_eq!(plan.wait_commit, Some(2));
    let mut dev = FakeDev::new(MS, 2 * MS);
    drive(&mut j, &mut dev, 21 * MS);
    assert_eq!(dev.writes()[0], (21 * MS, jo + 4 * BS, 8192));
    assert_eq!((dev.writes().len(), dev.flushes()), (2, 2));
    // Nothing changed since: fsync is a flush.
    let plan = j.fsync(1, false, 40 * MS);
    assert_eq!((plan.wait_commit, plan.then.flush_requests()), (None, 1));
}

/// Writes within one coarse-clock tick (4 ms at HZ 250) update mtime once.
#[test]
fn writes_within_a_tick_dirty_the_inode_once() {
    let mut j = journal(Ext4Params::default(), 1);
    assert!(j.note_write(0, WriteKind::Overwrite, 8 * MS).dirtied);
    assert!(!j.note_write(0, WriteKind::Overwrite, 8 * MS + 3 * MS).dirtied);
    assert!(j.note_write(0, WriteKind::Overwrite, 12 * MS).dirtied);
    assert_eq!(j.stats().handles, 2);
    let mut lazy = journal(Ext4Params { lazytime: true, ..Ext4Params::default() }, 1);
    assert!(!lazy.note_write(0, WriteKind::Overwrite, 8 * MS).dirtied);
}

/// Two fsyncs of changes in one running transaction share its commit.
#[test]
fn two_fsyncs_in_one_running_transaction_share_one_commit() {
    let mut j = spread(16384, 8);
    j.note_write(2, WriteKind::Overwrite, MS);
    j.note_write(5, WriteKind::Overwrite, MS);
    let a = j.fsync(2, false, 2 * MS);
    let b = j.fsync(5, false, 2 * MS);
    assert_eq!((a.wait_commit, b.wait_commit), (Some(1), Some(1)));
    let mut dev = FakeDev::new(MS, MS);
    drive(&mut j, &mut dev, 2 * MS);
    assert_eq!(j.stats().commits, 1);
    // Superblock; descriptor and the two inode blocks (N journal writes in one request);
    // the commit block.
    let w = dev.writes();
    assert_eq!(w[1].2 as u64, 3 * BS);
    assert_eq!(j.stats().journal_blocks, 1 + 3 + 1);
}

/// An fsync whose change is in the new running transaction while a commit is in flight
/// waits for the next commit, which starts when the first completes; an fsync of the
/// committing transaction waits for it, and once the commit block is submitted
/// (T_COMMIT_JFLUSH) also flushes itself.
#[test]
fn an_fsync_during_a_commit_waits_for_the_next_one() {
    let mut j = spread(16384, 4);
    let mut dev = FakeDev::new(MS, 2 * MS);
    j.note_write(0, WriteKind::Overwrite, 0);
    assert_eq!(j.fsync(0, false, 0).wait_commit, Some(1));
    let s = j.commit_step(0, &mut dev);
    assert_eq!(j.committing_tid(), Some(1));
    assert_eq!(s.wake_at, Some(MS), "first commit: the journal superblock");
    // During the journal writes: a change to file 1 goes to transaction 2.
    let e = j.note_write(1, WriteKind::Overwrite, MS / 2);
    assert_eq!((e.dirtied, e.wait_until), (true, None));
    let p1 = j.fsync(1, false, MS / 2);
    assert_eq!(p1.wait_commit, Some(2));
    // Before T_COMMIT_JFLUSH, an fsync of transaction 1 only waits.
    let early = j.fsync(0, false, MS / 2);
    assert_eq!((early.wait_commit, early.then.is_empty()), (Some(1), true));
    let mut now = MS;
    while j.committed_through() < 1 {
        let s = j.commit_step(now, &mut dev);
        if j.committed_through() >= 1 {
            break;
        }
        // After the journal writes, the commit block is on its way: flush too.
        if now >= 2 * MS {
            let late = j.fsync(0, true, now);
            let _ = late;
            let late = j.fsync(0, false, now);
            assert_eq!((late.wait_commit, late.then.flush_requests()), (Some(1), 1));
        }
        now = s.wake_at.unwrap();
    }
    // Transaction 2 started right away, after 1.
    assert_eq!(j.committing_tid(), Some(2));
    let first_end = now;
    let t2_start = dev.log.iter().rev().find_map(|e| match *e {
        Ev::Write(at, ..) if at >= first_end => Some(at),
        _ => None,
    });
    assert_eq!(t2_start, Some(first_end));
    drive(&mut j, &mut dev, now);
    assert_eq!(j.committed_through(), 2);
    assert_eq!(j.stats().commits, 2);
}

/// A handle changing a block whose journal copy is being written waits (BH_Shadow).
#[test]
fn a_handle_waits_for_a_block_being_journalled() {
    let mut j = spread(16384, 2);
    let mut dev = FakeDev::new(10 * MS, 2 * MS);
    j.note_write(0, WriteKind::Overwrite, 0);
    j.fsync(0, false, 0);
    j.commit_step(0, &mut dev);
    // While the journal superblock is written, the block is not yet being journalled.
    assert_eq!(j.note_write(0, WriteKind::Overwrite, 5 * MS).wait_until, None);
    j.commit_step(10 * MS, &mut dev);
    let jflush = j.committing.unwrap().jflush_at.unwrap();
    assert_eq!(jflush, 20 * MS, "journal superblock, then descriptor and inode block");
    // The next tick's mtime update changes the inode block being journalled.
    let e = j.note_write(0, WriteKind::Overwrite, 12 * MS);
    assert_eq!(e.wait_until, Some(jflush));
    // After T_COMMIT_JFLUSH it does not wait.
    assert_eq!(j.note_write(0, WriteKind::Overwrite, 21 * MS).wait_until, None);
    assert_eq!(j.stats().shadow_waits, 1);
}

/// A write into fallocate'd space converts extents: fdatasync commits. So does an
/// extending write, which logs superblock (orphan), inode, bitmap and group descriptor.
#[test]
fn conversions_and_appends_make_fdatasync_commit() {
    let mut j = journal(Ext4Params::default(), 2);
    let e = j.note_write(0, WriteKind::IntoUnwritten, MS);
    assert!(e.datasync);
    assert_eq!(j.fsync(0, true, MS).wait_commit, Some(1));
    let mut j = journal(Ext4Params::default(), 2);
    assert!(j.note_write(1, WriteKind::Extend, MS).datasync);
    assert_eq!(j.running.unwrap().blocks, 4, "superblock, inode block, block bitmap, group descriptor");
    // fallocate without a size change: unwritten allocation, no datasync.
    let mut j = journal(Ext4Params::default(), 2);
    assert!(!j.note_write(1, WriteKind::Fallocate { extends: false }, MS).datasync);
    assert!(j.note_write(1, WriteKind::Fallocate { extends: true }, MS).datasync);
}

/// With no fsync the running transaction commits when its timer fires: start + 5 s
/// rounded up to a whole second.
#[test]
fn the_timer_commits_after_the_commit_interval() {
    let mut j = journal(Ext4Params::default(), 1);
    let mut dev = FakeDev::new(MS, MS);
    j.note_write(0, WriteKind::Overwrite, 300 * MS);
    let s = j.commit_step(300 * MS, &mut dev);
    assert_eq!(s.wake_at, Some(6 * SEC));
    assert!(!j.commit_due(6 * SEC - 1) && j.commit_due(6 * SEC));
    drive(&mut j, &mut dev, 6 * SEC);
    assert_eq!((j.stats().commits, j.stats().timer_commits), (1, 1));
}

/// nobarrier: no flags and no flush; journal_async_commit: the commit block goes with
/// the journal writes, unflagged, then one flush.
#[test]
fn barrier_and_async_commit_options() {
    let mut j = journal(Ext4Params { barrier: false, ..Ext4Params::default() }, 1);
    j.note_write(0, WriteKind::Overwrite, MS);
    assert!(j.fsync(0, true, MS).then.is_empty());
    let mut dev = FakeDev::new(MS, MS);
    j.fsync(0, false, MS);
    drive(&mut j, &mut dev, MS);
    assert_eq!(dev.flushes(), 0);

    let mut j = journal(Ext4Params { journal_async_commit: true, ..Ext4Params::default() }, 1);
    j.note_write(0, WriteKind::Overwrite, MS);
    j.fsync(0, false, MS);
    let mut dev = FakeDev::new(MS, MS);
    j.commit_step(MS, &mut dev);
    assert_eq!(j.commit_tail_plan().unwrap().steps()[0].op, IoOp::Flush);
    drive(&mut j, &mut dev, MS);
    assert_eq!((dev.writes().len(), dev.flushes()), (3, 1));
}

/// Descriptor capacity: 253 tags per 4 KiB block with checksum v3; 300 logged blocks
/// need two descriptors, written with them as one range split by the request size.
#[test]
fn a_big_transaction_needs_two_descriptors() {
    assert_eq!(Ext4Params::default().tags_per_descriptor(), 253);
    let mut j = spread(16384, 300);
    for k in 0..300 {
        j.note_write(k, WriteKind::Overwrite, MS);
    }
    j.fsync(0, false, MS);
    let mut dev = FakeDev::new(MS, MS);
    drive(&mut j, &mut dev, MS);
    let logged: u64 = dev.writes().iter().filter(|w| w.0 == 2 * MS).map(|w| u64::from(w.2)).sum();
    assert_eq!(logged, 302 * BS);
    assert_eq!(dev.writes().iter().filter(|w| w.0 == 2 * MS).count(), 2, "254 pages per request");
}

/// The journal is a ring: commits wrap from its last block to its first, a commit's
/// journal writes splitting in two; the tail follows (a superblock write each time it
/// moves by a quarter of the journal), so space never runs out while the same block is
/// logged again.
#[test]
fn the_journal_wraps() {
    let mut j = spread(1024, 2);
    let jo = j.journal_offset;
    let mut dev = FakeDev::new(100 * US, 100 * US);
    let mut now = 0;
    let mut wrapped = false;
    for i in 0..3000 {
        if wrapped {
            break;
        }
        now += 5 * MS;
        let e = j.note_write(0, WriteKind::Overwrite, now);
        assert!(e.dirtied && !e.needs_checkpoint);
        // Every third commit logs a second block: commits of 3 and 4 blocks.
        if i % 3 == 0 {
            assert!(!j.note_write(1, WriteKind::Overwrite, now).needs_checkpoint);
        }
        j.fsync(0, false, now);
        let before = dev.log.len();
        now = drive(&mut j, &mut dev, now);
        let w: Vec<_> = dev.log[before..]
            .iter()
            .filter_map(|e| match *e {
                Ev::Write(at, off, n, _) => Some((at, off, n)),
                _ => None,
            })
            .collect();
        // Descriptor + inode block split across the end: two writes issued together.
        if w.len() >= 2 && w[0].0 == w[1].0 && w[1].1 == jo + BS {
            assert_eq!(w[0].1 + u64::from(w[0].2), jo + 1024 * BS);
            wrapped = true;
        }
        let (head, tail, free) = j.ring();
        assert_eq!(j.distance(tail, head) + free, 1023);
    }
    assert!(wrapped);
    assert!(j.stats().journal_sb_writes > 3, "{:?}", j.stats());
}

/// Files written once and never again hold the log tail until their blocks are written
/// home: a handle then finds too little space and checkpoints (home writes, a flush,
/// the journal superblock with FUA), after which it goes on.
#[test]
fn a_full_journal_checkpoints() {
    let mut j = spread(1024, 400);
    let mut dev = FakeDev::new(100 * US, 200 * US);
    let mut now = 0;
    let mut checkpointed = false;
    for k in 0..400 {
        now += 5 * MS;
        let mut e = j.note_write(k, WriteKind::Overwrite, now);
        if e.needs_checkpoint {
            let before = dev.log.len();
            for _ in 0..100 {
                match j.checkpoint_step(now, &mut dev) {
                    CheckpointStep::WaitUntil(t) => now = t,
                    CheckpointStep::WaitCommit(_) => now = drive(&mut j, &mut dev, now),
                    CheckpointStep::Done => break,
                }
            }
            let evs = &dev.log[before..];
            assert!(evs.iter().any(|e| matches!(e, Ev::Write(_, off, ..) if *off >= 8 * GIB)), "home writes");
            assert!(
                evs.iter().any(|e| matches!(e, Ev::Write(_, off, ..) if *off == GIB)),
                "journal superblock"
            );
            checkpointed = true;
            e = j.note_write(k, WriteKind::Overwrite, now);
            assert!(!e.needs_checkpoint && e.dirtied);
        }
        j.fsync(k, false, now);
        now = drive(&mut j, &mut dev, now);
    }
    assert!(checkpointed);
    assert!(j.stats().checkpoint_blocks > 0);
}

/// Committed blocks are written home by the flusher 30 s after the device inode got
/// dirty, adjacent ones in one request, except blocks a running transaction holds.
#[test]
fn the_flusher_writes_committed_blocks_home() {
    let mut j = spread(16384, 3);
    let mut dev = FakeDev::new(MS, MS);
    for k in 0..3 {
        j.note_write(k, WriteKind::Overwrite, MS);
    }
    j.fsync(0, false, MS);
    let end = drive(&mut j, &mut dev, MS);
    assert_eq!(j.writeback_due(), Some(end + 30 * SEC));
    j.note_write(2, WriteKind::Overwrite, 10 * SEC);
    let before = dev.log.len();
    assert_eq!(j.writeback_step(end + 29 * SEC, &mut dev), Some(end + 30 * SEC));
    assert_eq!(j.writeback_step(end + 30 * SEC, &mut dev), None);
    let w: Vec<_> = dev.log[before..].to_vec();
    assert_eq!(w, vec![Ev::Write(end + 30 * SEC, 8 * GIB, 8192, end + 30 * SEC + MS)]);
    assert_eq!(j.stats().writeback_blocks, 2);
}

/// mke2fs: a 10 GiB filesystem gets a 64 MiB journal in group 33 (its middle group 40,
/// rounded down to flex group 32, whose first group holds the flex metadata); 4 GiB puts
/// it in group 15.
#[test]
fn mke2fs_places_the_journal_near_the_middle() {
    let p = Ext4Params::default();
    assert_eq!(mke2fs_journal_blocks(10 * GIB / BS), Some(16384));
    assert_eq!(mke2fs_journal_blocks(1 << 30), Some(262_144));
    assert_eq!(mke2fs_journal_blocks(100), None);
    let l = Ext4Layout::mke2fs(&p, 10 * GIB, &[]).unwrap();
    assert_eq!(l.journal_offset, 33 * 32768 * BS);
    let l = Ext4Layout::mke2fs(&p, 4 * GIB, &[]).unwrap();
    assert_eq!(l.journal_offset, 15 * 32768 * BS);
    // A 2 GiB file does not fit its extents in the inode.
    let f = Ext4FileSpec { data_offset: GIB, bytes: 2 * GIB };
    let l = Ext4Layout::mke2fs(&p, 10 * GIB, &[f]).unwrap();
    assert_eq!(l.files[0].extent_leaf, Some(GIB - BS));
    assert!(l.files[0].inode_block < 32768 * BS, "group 0's inode table");
    assert!(Ext4Layout::mke2fs(&p, 1 << 20, &[]).is_err());
}

/// Parameters out of range are refused, not panicked on; unknown files do nothing.
#[test]
fn bad_input_is_refused_or_ignored() {
    for p in [
        Ext4Params { block_size: 3000, ..Ext4Params::default() },
        Ext4Params { journal_blocks: 10, ..Ext4Params::default() },
        Ext4Params { hz: 0, ..Ext4Params::default() },
        Ext4Params { commit_interval_ns: 0, ..Ext4Params::default() },
        Ext4Params { inode_size: 100, ..Ext4Params::default() },
    ] {
        assert!(Ext4Journal::new(
            p,
            &Ext4Layout { journal_offset: 0, superblock_block: 0, files: vec![] },
            DeviceCaps::virtio_blk(true)
        )
        .is_err());
    }
    let mut j = journal(Ext4Params::default(), 1);
    assert_eq!(j.note_write(7, WriteKind::Extend, MS), WriteEffect::default());
    assert_eq!(j.fsync(u32::MAX, false, MS).then.flush_requests(), 1);
}

#[derive(Debug, Clone)]
enum Act {
    Write(u32, u8),
    Sync(u32, bool),
    Advance(u32),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        (0u32..40, 0u8..4).prop_map(|(f, k)| Act::Write(f, k)),
        (0u32..42, any::<bool>()).prop_map(|(f, d)| Act::Sync(f, d)),
        (0u32..2_000_000).prop_map(Act::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sequence of writes, syncs and time: the ring's accounting holds (used + free
    /// is the journal), commits complete in order, a sync waits only for a transaction
    /// that exists and, once the journal settles, every waited-for commit is done; a
    /// forced checkpoint always ends.
    #[test]
    fn the_journal_keeps_its_invariants(acts in proptest::collection::vec(act(), 1..300), small in any::<bool>()) {
        let mut j = if small { spread(1024, 40) } else { journal(Ext4Params::default(), 40) };
        let mut dev = FakeDev::new(300 * US, 700 * US);
        let mut now: Nanos = 0;
        let mut waited = 0u64;
        let mut last_committed = 0;
        let capacity = j.last - j.first;
        for a in acts {
            match a {
                Act::Write(f, k) => {
                    let kind = match k {
                        0 => WriteKind::Overwrite,
                        1 => WriteKind::IntoUnwritten,
                        2 => WriteKind::Extend,
                        _ => WriteKind::Fallocate { extends: f % 2 == 0 },
                    };
                    let mut e = j.note_write(f, kind, now);
                    let mut rounds = 0;
                    while e.needs_checkpoint {
                        loop {
                            rounds += 1;
                            prop_assert!(rounds < 1000, "checkpoint does not end");
                            match j.checkpoint_step(now, &mut dev) {
                                CheckpointStep::WaitUntil(t) => { prop_assert!(t >= now); now = t }
                                CheckpointStep::WaitCommit(_) => now = drive(&mut j, &mut dev, now),
                                CheckpointStep::Done => break,
                            }
                        }
                        e = j.note_write(f, kind, now);
                    }
                    if let Some(t) = e.wait_until { prop_assert!(t >= now); }
                }
                Act::Sync(f, d) => {
                    let p = j.fsync(f, d, now);
                    prop_assert!(p.then.steps().len() <= 1);
                    if let Some(tid) = p.wait_commit {
                        prop_assert!(Some(tid) == j.running_tid() || Some(tid) == j.committing_tid());
                        waited = waited.max(tid);
                    }
                }
                Act::Advance(us) => {
                    let until = now + u64::from(us) * US;
                    while now < until {
                        let s = j.commit_step(now, &mut dev);
                        j.writeback_step(now, &mut dev);
                        match s.wake_at { Some(t) if t <= until => now = t.max(now + 1), _ => now = until }
                    }
                }
            }
            let (head, tail, free) = j.ring();
            prop_assert!((j.first..j.last).contains(&head) && (j.first..j.last).contains(&tail));
            prop_assert_eq!(j.distance(tail, head) + free, capacity);
            prop_assert!(j.committed_through() >= last_committed);
            last_committed = j.committed_through();
            if let Some(c) = j.committing {
                prop_assert!(c.tid == j.committed_through() + 1);
                let b = c.phases[2].steps();
                let flagged = matches!(b[0].op, IoOp::Write { preflush: true, fua: true, .. });
                prop_assert!(flagged);
            }
        }
        now = drive(&mut j, &mut dev, now);
        let _ = now;
        prop_assert!(j.committed_through() >= waited);
    }
}
