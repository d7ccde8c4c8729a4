//! Unit tests of the group commit, one mechanism each, and property tests of its
//! invariants under any interleaving of the threads' steps.

use super::*;
use proptest::prelude::*;

/// A transaction of oltp_update_index on sbtest1 (`events`).
const TRX: u64 = 643;

fn log(p: BinlogParams, clients: usize) -> Binlog {
    Binlog::new(p, clients)
}

fn write(s: BinlogStep) -> WritePlan {
    match s {
        BinlogStep::Write(w) => w,
        other => panic!("expected a write, got {other:?}"),
    }
}

fn released(b: &mut Binlog) -> Vec<u32> {
    b.take_released().collect()
}

/// The leader's steps: the redo flush (all that is appended: the group's prepares)
/// before any binary log byte is written; the position moves with the write.
#[test]
fn the_groups_redo_flush_precedes_its_binlog_write() {
    let mut b = log(BinlogParams::default(), 4);
    // The flush covers the prepare's LSN (it flushes all that is appended).
    assert_eq!(b.commit(0, TRX, 9000), BinlogStep::RedoFlush { flush: true, covers: 9000 });
    assert_eq!(b.position(), (1, 154), "nothing written before the redo flush");
    let w = write(b.next(0));
    assert_eq!((w.file, w.offset, w.len, w.members), (1, 154, TRX, 1));
    assert_eq!(b.position(), (1, 154 + TRX));
    assert_eq!(b.trans_pos(0), (1, 154 + TRX));
    // innodb_flush_log_at_trx_commit = 2: the redo is only written; 0: nothing.
    let mut two = log(BinlogParams { flush_log_at_trx_commit: 2, ..BinlogParams::default() }, 1);
    assert!(matches!(two.commit(0, TRX, 1), BinlogStep::RedoFlush { flush: false, .. }));
    let mut zero = log(BinlogParams { flush_log_at_trx_commit: 0, ..BinlogParams::default() }, 1);
    assert!(matches!(zero.commit(0, TRX, 1), BinlogStep::Write(_)));
    assert_eq!(zero.stats().redo_flushes, 0);
}

/// What a committing thread waits for (the driver's `waits`), stage by stage: a leader's
/// redo flush, its binary log write and fsync, its wait for a stage's mutex another group
/// holds; a follower waits for the first thread of the queue or group it is in, which the
/// group it waits for lists first.
#[test]
fn group_wait_names_each_stage_and_each_followers_leader() {
    let mut b = log(BinlogParams::default(), 3);
    assert_eq!(b.group_wait(0), GroupWait::None);
    assert!(matches!(b.commit(0, TRX, 1), BinlogStep::RedoFlush { .. }));
    assert_eq!(b.group_wait(0), GroupWait::Redo);
    assert_eq!(b.group_of(0), &[0]);
    // 1 leads the next flush queue and waits for LOCK_log; 2 follows it.
    assert_eq!(b.commit(1, TRX, 2), BinlogStep::Wait);
    assert_eq!(b.commit(2, TRX, 3), BinlogStep::Wait);
    assert_eq!(b.group_wait(1), GroupWait::Queue);
    assert_eq!(b.group_wait(2), GroupWait::Follower(1));
    assert_eq!(b.group_of(1), &[1, 2]);
    write(b.next(0));
    assert_eq!(b.group_wait(0), GroupWait::Binlog);
    // 0 syncs; LOCK_log goes to 1, whose group flushes the redo log meanwhile.
    assert!(matches!(b.next(0), BinlogStep::Sync(_)));
    assert_eq!(b.group_wait(0), GroupWait::Binlog);
    assert_eq!(released(&mut b), vec![1]);
    assert!(matches!(b.next(1), BinlogStep::RedoFlush { .. }));
    assert_eq!((b.group_wait(1), b.group_wait(2)), (GroupWait::Redo, GroupWait::Follower(1)));
    assert_eq!(b.group_of(1), &[1, 2]);
    write(b.next(1));
    // 1's group queues for LOCK_sync, which 0 holds.
    assert_eq!(b.next(1), BinlogStep::Wait);
    assert_eq!((b.group_wait(1), b.group_wait(2)), (GroupWait::Queue, GroupWait::Follower(1)));
    assert_eq!(b.group_of(1), &[1, 2]);
    assert!(matches!(b.next(0), BinlogStep::Commit(_)));
    assert_eq!(b.next(0), BinlogStep::Done);
    assert_eq!(b.group_wait(0), GroupWait::None);
    assert_eq!(released(&mut b), vec![1]);
    assert!(matches!(b.next(1), BinlogStep::Sync(_)));
    assert_eq!((b.group_wait(1), b.group_wait(2)), (GroupWait::Binlog, GroupWait::Follower(1)));
    assert!(matches!(b.next(1), BinlogStep::Commit(_)));
    assert_eq!(b.next(1), BinlogStep::Done);
    // Released, 2 is in no group: its commit is done.
    assert_eq!(released(&mut b), vec![2]);
    assert_eq!(b.group_wait(2), GroupWait::None);
    assert_eq!(b.next(2), BinlogStep::Done);
    // A rotation's redo flush and file operations, and its wait for LOCK_log.
    let mut r = log(BinlogParams { max_binlog_size: 4096, ..BinlogParams::default() }, 2);
    let mut steps = Vec::new();
    let mut s = r.commit(0, 5000, 1);
    while s != BinlogStep::Done {
        steps.push((s, r.group_wait(0)));
        s = r.next(0);
    }
    assert!(
        steps.iter().any(|&(s, w)| matches!(s, BinlogStep::Rotate(_)) && w == GroupWait::Binlog),
        "{steps:?}"
    );
    assert_eq!(
        steps
            .iter()
            .filter(|&&(s, w)| matches!(s, BinlogStep::RedoFlush { .. }) && w == GroupWait::Redo)
            .count(),
        2
    );
}

/// One client alone: flush, one fsync, commit, done.
#[test]
fn a_lone_commit_goes_through_the_three_stages() {
    let mut b = log(BinlogParams::default(), 1);
    assert!(matches!(b.commit(0, TRX, 1), BinlogStep::RedoFlush { flush: true, .. }));
    write(b.next(0));
    assert_eq!(b.next(0), BinlogStep::Sync(SyncPlan { file: 1, members: 1 }));
    assert_eq!(b.next(0), BinlogStep::Commit(CommitPlan { members: 1 }));
    assert_eq!(b.commit_queue(), &[0]);
    assert_eq!(b.next(0), BinlogStep::Done);
    let s = b.stats();
    assert_eq!((s.commits, s.flush_groups, s.fsyncs, s.commit_groups, s.writes), (1, 1, 1, 1, 1));
    assert_eq!(s.bytes_written, TRX);
    assert_eq!(b.prep_xids, 0);
}

/// Threads that queue while a leader holds LOCK_log form the next group: its leader
/// writes them all and fsyncs once for them.
#[test]
fn one_fsync_per_group() {
    let mut b = log(BinlogParams::default(), 4);
    assert!(matches!(b.commit(0, TRX, 1), BinlogStep::RedoFlush { flush: true, .. }));
    // 1 finds the flush queue empty (0 took it): the next leader, waiting for LOCK_log;
    // 2 and 3 follow it.
    assert_eq!(b.commit(1, TRX, 2), BinlogStep::Wait);
    assert_eq!(b.commit(2, TRX, 3), BinlogStep::Wait);
    assert_eq!(b.commit(3, TRX, 4), BinlogStep::Wait);
    assert_eq!(write(b.next(0)).members, 1);
    // 0 enters the sync stage and releases LOCK_log to 1.
    assert_eq!(b.next(0), BinlogStep::Sync(SyncPlan { file: 1, members: 1 }));
    assert_eq!(released(&mut b), vec![1]);
    assert_eq!(b.next(1), BinlogStep::RedoFlush { flush: true, covers: 4 });
    assert_eq!(b.flush_queue(), &[1, 2, 3]);
    let w = write(b.next(1));
    assert_eq!((w.offset, w.len, w.members), (154 + TRX, 3 * TRX, 3));
    // 1 leads the sync queue but 0 holds LOCK_sync.
    assert_eq!(b.next(1), BinlogStep::Wait);
    assert_eq!(b.next(0), BinlogStep::Commit(CommitPlan { members: 1 }));
    assert_eq!(released(&mut b), vec![1]);
    assert_eq!(b.next(0), BinlogStep::Done);
    assert_eq!(b.next(1), BinlogStep::Sync(SyncPlan { file: 1, members: 3 }));
    assert_eq!(b.next(1), BinlogStep::Commit(CommitPlan { members: 3 }));
    assert_eq!(b.commit_queue(), &[1, 2, 3]);
    assert_eq!(b.next(1), BinlogStep::Done);
    assert_eq!(released(&mut b), vec![2, 3]);
    assert_eq!(b.next(2), BinlogStep::Done);
    assert_eq!(b.next(3), BinlogStep::Done);
    let s = b.stats();
    assert_eq!((s.commits, s.flush_groups, s.fsyncs, s.commit_groups), (4, 2, 2, 2));
    assert_eq!(b.durable, (1, 154 + 4 * TRX));
}

/// A commit that arrives while a group fsyncs is written at once (LOCK_log is free) but
/// waits for the next fsync; a flush group that finishes while that next sync leader waits
/// for LOCK_sync joins its fsync.
#[test]
fn a_commit_arriving_during_a_sync_waits_for_the_next_group() {
    let mut b = log(BinlogParams::default(), 3);
    b.commit(0, TRX, 1);
    write(b.next(0));
    assert!(matches!(b.next(0), BinlogStep::Sync(_))); // 0 fsyncs now
                                                       // 1 arrives: leads the flush stage, writes, then waits for LOCK_sync.
    assert!(matches!(b.commit(1, TRX, 2), BinlogStep::RedoFlush { flush: true, .. }));
    write(b.next(1));
    assert_eq!(b.next(1), BinlogStep::Wait);
    // 2 arrives: its own flush group, which queues behind 1 in the sync stage.
    assert!(matches!(b.commit(2, TRX, 3), BinlogStep::RedoFlush { flush: true, .. }));
    write(b.next(2));
    assert_eq!(b.next(2), BinlogStep::Wait);
    assert_eq!(b.stats().fsyncs, 1, "neither 1 nor 2 is covered by 0's fsync");
    assert_eq!(b.durable, (1, 154), "0's fsync is not complete");
    // 0's fsync completes; it commits; 1 gets LOCK_sync and fsyncs for 1 and 2.
    assert!(matches!(b.next(0), BinlogStep::Commit(_)));
    assert_eq!(b.durable, (1, 154 + TRX));
    assert_eq!(released(&mut b), vec![1]);
    assert_eq!(b.next(1), BinlogStep::Sync(SyncPlan { file: 1, members: 2 }));
    assert_eq!(b.next(0), BinlogStep::Done);
    assert!(matches!(b.next(1), BinlogStep::Commit(CommitPlan { members: 2 })));
    assert_eq!(b.durable, (1, 154 + 3 * TRX));
    assert_eq!(b.next(1), BinlogStep::Done);
    assert_eq!(released(&mut b), vec![2]);
    assert_eq!(b.next(2), BinlogStep::Done);
    assert_eq!(b.stats().fsyncs, 2);
    assert_eq!(b.stats().flush_groups, 3);
}

/// A sync leader that finds the commit queue taken (the previous commit leader still
/// waits for LOCK_commit) joins that commit group.
#[test]
fn commit_groups_form_behind_lock_commit() {
    let mut b = log(BinlogParams::default(), 3);
    b.commit(0, TRX, 1);
    write(b.next(0));
    b.next(0); // Sync
    assert!(matches!(b.next(0), BinlogStep::Commit(_))); // 0 holds LOCK_commit
    b.commit(1, TRX, 2);
    write(b.next(1));
    b.next(1); // Sync
               // 1 leads the commit queue, waits for LOCK_commit.
    assert_eq!(b.next(1), BinlogStep::Wait);
    b.commit(2, TRX, 3);
    write(b.next(2));
    b.next(2); // 2 is the sync leader now (1 released LOCK_sync)
    assert_eq!(b.next(2), BinlogStep::Wait, "2 follows 1 in the commit queue");
    assert_eq!(b.next(0), BinlogStep::Done);
    assert_eq!(released(&mut b), vec![1]);
    assert_eq!(b.next(1), BinlogStep::Commit(CommitPlan { members: 2 }));
    assert_eq!(b.commit_queue(), &[1, 2]);
    assert_eq!(b.next(1), BinlogStep::Done);
    assert_eq!(released(&mut b), vec![2]);
    assert_eq!(b.next(2), BinlogStep::Done);
    assert_eq!((b.stats().fsyncs, b.stats().commit_groups), (3, 2));
}

/// A group's bytes reach the file as one write up to each 4 KiB boundary and one for
/// the rest (the IO_CACHE).
#[test]
fn writes_split_at_4k_boundaries() {
    let plan = WritePlan { file: 1, offset: 4000, len: 5000, members: 7 };
    let w: Vec<BinlogIo> = plan.writes().collect();
    assert_eq!(
        w,
        vec![
            BinlogIo::Write { file: 1, offset: 4000, len: 96 },
            BinlogIo::Write { file: 1, offset: 4096, len: 4096 },
            BinlogIo::Write { file: 1, offset: 8192, len: 808 },
        ]
    );
    let aligned = WritePlan { file: 1, offset: 4096, len: 4096, members: 1 };
    assert_eq!(aligned.writes().count(), 1);
}

fn run_alone(b: &mut Binlog, c: usize) -> Vec<BinlogStep> {
    let mut steps = vec![b.commit(c, TRX, 1)];
    while *steps.last().unwrap() != BinlogStep::Done {
        steps.push(b.next(c));
    }
    steps
}

#[test]
fn sync_binlog_0_never_fsyncs_and_n_fsyncs_every_nth_group() {
    let mut b = log(BinlogParams { sync_binlog: 0, ..BinlogParams::default() }, 1);
    for _ in 0..5 {
        run_alone(&mut b, 0);
    }
    assert_eq!(b.stats().fsyncs, 0);
    let mut b = log(BinlogParams { sync_binlog: 3, ..BinlogParams::default() }, 1);
    let syncs: Vec<bool> =
        (0..6).map(|_| run_alone(&mut b, 0).iter().any(|s| matches!(s, BinlogStep::Sync(_)))).collect();
    assert_eq!(syncs, [false, false, true, false, false, true]);
}

/// binlog_group_commit_sync_delay: the sync leader sleeps in tenths of the delay before
/// taking the sync queue; with a count, it stops once that many are queued.
#[test]
fn the_sync_delay_waits_in_tenths_or_until_the_count() {
    let p = BinlogParams { sync_delay_us: 1000, ..BinlogParams::default() };
    let mut b = log(p, 2);
    let steps = run_alone(&mut b, 0);
    let delays: Vec<&BinlogStep> = steps.iter().filter(|s| matches!(s, BinlogStep::Delay(_))).collect();
    assert_eq!(delays.len(), 10);
    assert_eq!(*delays[0], BinlogStep::Delay(100 * US));
    // With a count of 2: a second flush group queued during the delay ends it.
    let p = BinlogParams { sync_delay_us: 1000, sync_no_delay_count: 2, ..BinlogParams::default() };
    let mut b = log(p, 2);
    b.commit(0, TRX, 1);
    write(b.next(0));
    assert_eq!(b.next(0), BinlogStep::Delay(100 * US));
    b.commit(1, TRX, 2);
    write(b.next(1));
    assert_eq!(b.next(1), BinlogStep::Wait, "1 joins 0's sync queue");
    assert_eq!(b.next(0), BinlogStep::Sync(SyncPlan { file: 1, members: 2 }));
    // With sync_binlog = 2 the first group does not fsync, so it does not wait.
    let p = BinlogParams { sync_delay_us: 1000, sync_binlog: 2, ..BinlogParams::default() };
    let mut b = log(p, 1);
    assert!(!run_alone(&mut b, 0).iter().any(|s| matches!(s, BinlogStep::Delay(_))));
    assert!(run_alone(&mut b, 0).iter().any(|s| matches!(s, BinlogStep::Delay(_))));
}

/// Past max_binlog_size, the flush leader rotates after its commit: the redo flush, the
/// Rotate event, the in-use flag cleared, the old file's fsync, the new file created
/// (empty: its header is written at offset 0 of a new file, not over an old one), its
/// header and fsync.
#[test]
fn a_group_past_max_binlog_size_rotates_the_file() {
    let p = BinlogParams { max_binlog_size: 1000, ..BinlogParams::default() };
    let mut b = log(p, 1);
    let steps = run_alone(&mut b, 0);
    assert_eq!(b.position(), (1, 154 + TRX), "643 bytes stay below 1000");
    assert_eq!(*steps.last().unwrap(), BinlogStep::Done);
    b.commit(0, TRX, 2);
    write(b.next(0));
    b.next(0); // Sync
    b.next(0); // Commit
    assert!(matches!(b.next(0), BinlogStep::RedoFlush { flush: true, .. }), "ha_flush_logs before rotating");
    let BinlogStep::Rotate(r) = b.next(0) else { panic!() };
    let end = 154 + 2 * TRX; // 1440
                             // "mysql-bin.000002": Rotate event 19 + 8 + 16 + 4 = 47 bytes, one 4 KiB unit.
    assert_eq!(
        r.ops(),
        &[
            BinlogIo::Write { file: 1, offset: end, len: 47 },
            BinlogIo::Write { file: 1, offset: 21, len: 1 },
            BinlogIo::Sync { file: 1 },
            BinlogIo::Create { file: 2 },
            BinlogIo::Write { file: 2, offset: 0, len: 154 },
            BinlogIo::Sync { file: 2 },
        ]
    );
    assert_eq!(b.next(0), BinlogStep::Done);
    assert_eq!(b.position(), (2, 154));
    assert_eq!(b.stats().rotations, 1);
    assert_eq!(b.stats().fsyncs, 2 + 2);
    let w = write(run_alone(&mut b, 0)[1]);
    assert_eq!((w.file, w.offset), (2, 154));
}

/// The rotation waits, holding LOCK_log, until every transaction written to the file is
/// committed in InnoDB; flush leaders wait behind it.
#[test]
fn a_rotation_waits_for_the_written_transactions_commits() {
    let p = BinlogParams { max_binlog_size: 1000, ..BinlogParams::default() };
    let mut b = log(p, 3);
    b.commit(0, 900, 1);
    write(b.next(0)); // the file reaches max_binlog_size: 0 will rotate
    assert!(matches!(b.next(0), BinlogStep::Sync(_)));
    b.commit(1, TRX, 2); // written into the same file, waits for LOCK_sync
    write(b.next(1));
    assert_eq!(b.next(1), BinlogStep::Wait);
    assert!(matches!(b.next(0), BinlogStep::Commit(_)));
    released(&mut b);
    // 0 takes LOCK_log, but 1's transaction is written and not committed.
    assert_eq!(b.next(0), BinlogStep::Wait);
    assert_eq!(b.commit(2, TRX, 3), BinlogStep::Wait, "2 waits for LOCK_log");
    assert!(matches!(b.next(1), BinlogStep::Sync(_)));
    assert!(matches!(b.next(1), BinlogStep::Commit(_)));
    // 1's group found the file past the limit too: it queues for LOCK_log to rotate.
    assert_eq!(b.next(1), BinlogStep::Wait);
    assert_eq!(released(&mut b), vec![0]);
    assert!(matches!(b.next(0), BinlogStep::RedoFlush { flush: true, .. }));
    assert!(matches!(b.next(0), BinlogStep::Rotate(_)));
    assert_eq!(b.next(0), BinlogStep::Done);
    assert_eq!(released(&mut b), vec![2]);
    assert!(matches!(b.next(2), BinlogStep::RedoFlush { flush: true, .. }));
    assert_eq!(write(b.next(2)).file, 2);
    // 2 enters the sync stage and hands LOCK_log to 1, which finds the new file small.
    assert!(matches!(b.next(2), BinlogStep::Sync(_)));
    assert_eq!(released(&mut b), vec![1]);
    assert_eq!(b.next(1), BinlogStep::Done);
    assert_eq!(b.stats().rotations, 1);
}

#[test]
fn a_transaction_without_events_skips_the_binary_log() {
    let mut b = log(BinlogParams::default(), 1);
    assert_eq!(b.commit(0, 0, 1), BinlogStep::Done);
    assert_eq!(b.stats(), BinlogStats::default());
}

/// What a thread is doing in the property test's driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    Idle,
    /// Executing a step (I/O, a sleep, commits), to be completed.
    Step(BinlogStep),
    /// Parked until released.
    Parked,
    /// Released: asks again.
    Runnable,
}

/// Runs `commits` commits of `clients` threads, the scheduler picking which thread
/// proceeds from `picks`, and checks the invariants at each step.
/// Returns the largest flush group, the fsyncs covering several flush groups and the
/// rotations.
fn simulate(
    p: BinlogParams,
    clients: usize,
    commits: usize,
    sizes: &[u64],
    picks: &[u16],
) -> (usize, usize, u64) {
    let mut b = Binlog::new(p, clients);
    let mut doing = vec![Doing::Idle; clients];
    let mut written = vec![false; clients];
    let mut committed = vec![false; clients];
    let mut started = 0usize;
    let mut done = 0usize;
    let mut flush_order: Vec<u32> = Vec::new();
    let mut commit_order: Vec<u32> = Vec::new();
    let mut expected = (p.first_file, p.format.file_header());
    let mut pick = picks.iter().cycle();
    let mut lsn = 0u64;
    let mut guard = 0usize;
    let (mut max_flush, mut merged) = (0, 0);
    let mut group_of = vec![0usize; clients];
    let mut groups = 0usize;
    while done < commits {
        guard += 1;
        assert!(guard < 100_000, "no progress: {doing:?}");
        let candidates: Vec<usize> = (0..clients)
            .filter(|&c| match doing[c] {
                Doing::Idle => started < commits,
                Doing::Parked => false,
                _ => true,
            })
            .collect();
        assert!(!candidates.is_empty(), "deadlock: every thread waits: {doing:?}");
        let c = candidates[usize::from(*pick.next().unwrap()) % candidates.len()];
        let step = match doing[c] {
            Doing::Idle => {
                started += 1;
                lsn += 1;
                written[c] = false;
                committed[c] = false;
                b.commit(c, sizes[started % sizes.len()], lsn)
            }
            Doing::Step(s) => {
                // The step's work completes.
                match s {
                    BinlogStep::Write(_) => {
                        for &m in b.flush_queue() {
                            written[m as usize] = true;
                        }
                    }
                    BinlogStep::Commit(_) => {
                        for &m in b.commit_queue() {
                            committed[m as usize] = true;
                        }
                    }
                    _ => {}
                }
                b.next(c)
            }
            Doing::Runnable => b.next(c),
            Doing::Parked => unreachable!(),
        };
        // Invariants on the step just issued.
        match step {
            BinlogStep::RedoFlush { covers, .. } if b.clients[c].st == St::FlushRedo => {
                // Nothing of the group is written yet, and the flush covers its prepares.
                for &m in b.flush_queue() {
                    assert!(!written[m as usize]);
                    assert!(b.clients[m as usize].prepare_lsn <= covers);
                }
            }
            BinlogStep::Write(w) => {
                assert_eq!((w.file, w.offset), expected, "groups are contiguous");
                expected.1 += w.len;
                let sum: u64 =
                    w.writes().map(|x| if let BinlogIo::Write { len, .. } = x { len } else { 0 }).sum();
                assert_eq!(sum, w.len);
                assert!(b.flush_queue().len() == w.members && w.members > 0);
                flush_order.extend_from_slice(b.flush_queue());
                max_flush = max_flush.max(w.members);
                groups += 1;
                for &m in b.flush_queue() {
                    group_of[m as usize] = groups;
                }
            }
            BinlogStep::Sync(s) => {
                // Every transaction the fsync covers was written before it was issued.
                assert_eq!(b.sync_group.len(), s.members);
                let first = group_of[b.sync_group[0] as usize];
                merged += usize::from(b.sync_group.iter().any(|&m| group_of[m as usize] != first));
                for &m in &b.sync_group {
                    assert!(written[m as usize], "{m} synced before it is written");
                }
            }
            BinlogStep::Commit(_) => commit_order.extend_from_slice(b.commit_queue()),
            BinlogStep::Rotate(r) => {
                // The new file is created once, before anything touches it: its header is
                // the first write to an empty file.
                let on_new = |o: &BinlogIo| match *o {
                    BinlogIo::Write { file, .. } | BinlogIo::Sync { file } | BinlogIo::Create { file } => {
                        file == r.new_file
                    }
                };
                let k = r.ops().iter().position(|o| *o == BinlogIo::Create { file: r.new_file });
                let k = k.expect("a rotation creates its new file");
                assert!(!r.ops()[..k].iter().any(on_new), "{:?}", r.ops());
                assert_eq!(
                    r.ops()[k + 1],
                    BinlogIo::Write { file: r.new_file, offset: 0, len: p.format.file_header() }
                );
                expected = (r.new_file, p.format.file_header());
            }
            _ => {}
        }
        // At most one thread in each stage's critical section.
        let count = |f: &dyn Fn(&Doing) -> bool| doing.iter().filter(|d| f(d)).count();
        let in_flush = count(&|d| matches!(d, Doing::Step(BinlogStep::Write(_))));
        let in_sync = count(&|d| matches!(d, Doing::Step(BinlogStep::Sync(_))));
        let in_commit = count(&|d| matches!(d, Doing::Step(BinlogStep::Commit(_))));
        let rotating = count(&|d| matches!(d, Doing::Step(BinlogStep::Rotate(_))));
        assert!(in_flush + rotating <= 1 && in_sync <= 1 && in_commit <= 1);
        doing[c] = match step {
            BinlogStep::Done => {
                if b.clients[c].bytes > 0 {
                    assert!(committed[c], "{c} returns before its InnoDB commit");
                    if p.sync_binlog == 1 {
                        assert!(b.durable >= b.trans_pos(c), "{c} returns before its fsync");
                    }
                }
                b.clients[c].bytes = 0;
                done += 1;
                Doing::Idle
            }
            BinlogStep::Wait => Doing::Parked,
            s => Doing::Step(s),
        };
        for r in b.take_released().collect::<Vec<_>>() {
            assert_eq!(doing[r as usize], Doing::Parked, "{r} released while not waiting");
            doing[r as usize] = Doing::Runnable;
        }
        // What each thread waits for: a step's own work is the redo log's or the binary
        // log's; a parked thread waits for a stage's mutex, or follows a leader that is no
        // follower and lists it in its group.
        for t in 0..clients {
            let w = b.group_wait(t);
            match doing[t] {
                Doing::Step(BinlogStep::RedoFlush { .. }) => assert_eq!(w, GroupWait::Redo),
                Doing::Step(BinlogStep::Write(_) | BinlogStep::Sync(_) | BinlogStep::Rotate(_))
                | Doing::Step(BinlogStep::Delay(_)) => assert_eq!(w, GroupWait::Binlog),
                Doing::Parked => match w {
                    GroupWait::Queue => assert!(b.group_of(t).first().is_none_or(|&l| l as usize == t)),
                    GroupWait::Follower(h) => {
                        assert!(!matches!(
                            b.group_wait(h as usize),
                            GroupWait::Follower(_) | GroupWait::None
                        ));
                        assert!(b.group_of(h as usize).contains(&(t as u32)), "{t} follows {h}");
                    }
                    other => panic!("{t} parked, waiting for {other:?}"),
                },
                _ => {}
            }
        }
        // A follower released early would be a bug: every parked thread is in a queue or
        // waits for a mutex or a rotation.
    }
    // Binary log order is commit order; every commit went through both.
    assert_eq!(flush_order, commit_order);
    assert_eq!(flush_order.len(), commits);
    assert_eq!(b.prep_xids, 0);
    assert!(doing.iter().all(|d| *d == Doing::Idle));
    assert_eq!(b.stats().commits, commits as u64);
    if p.sync_binlog == 1 {
        assert_eq!(b.durable, b.position());
    }
    (max_flush, merged, b.stats().rotations)
}

/// The simulated scheduler does reach the cases the invariants are about: flush groups
/// of several threads, fsyncs covering several flush groups, rotations.
#[test]
fn the_simulation_reaches_groups_and_rotations() {
    let mut x = 12345u64;
    let picks: Vec<u16> = (0..1009)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 48) as u16
        })
        .collect();
    let p = BinlogParams { max_binlog_size: 5000, ..BinlogParams::default() };
    let (flush, merged, rotations) = simulate(p, 6, 200, &[643, 1683], &picks);
    assert!(flush > 1 && merged > 0 && rotations > 5, "{flush} {merged} {rotations}");
}

proptest! {
    /// Whatever the order in which the threads' steps complete: groups are written
    /// contiguously and never two at once; every transaction is written before the fsync
    /// that covers it is issued, and with sync_binlog = 1 returns only once an fsync
    /// covering it completed; commits follow binary log order; nothing deadlocks.
    #[test]
    fn group_commit_invariants(
        clients in 1usize..8,
        commits in 1usize..60,
        sizes in proptest::collection::vec(1u64..3000, 1..8),
        picks in proptest::collection::vec(any::<u16>(), 1..64),
        sync_binlog in 0u32..3,
        delay in prop_oneof![Just(0u64), 1u64..50],
        count in 0u64..4,
        small_files in any::<bool>(),
        flush in 0u8..3,
    ) {
        let p = BinlogParams {
            sync_binlog,
            sync_delay_us: delay,
            sync_no_delay_count: count,
            max_binlog_size: if small_files { 5000 } else { 1 << 30 },
            flush_log_at_trx_commit: flush,
            ..BinlogParams::default()
        };
        simulate(p, clients, commits, &sizes, &picks);
    }
}
