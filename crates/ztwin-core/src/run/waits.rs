//! Where a transaction's time goes: each user thread's time between its steps, by what it
//! waited for, summed per transaction, over the measured window (`waits` in a phase's
//! summary). The answer to "what makes the 95th percentile": the same split for the
//! slowest transactions.
//!
//! # Mechanism
//!
//! A thread runs in zero simulated time at its events; between two events it waits for
//! one thing, known when its step ends: its CPU (on a vCPU, or queued for one), its own
//! page read in the filesystem, a page another thread is reading, a free frame, the redo
//! log's room (`log_free_check`: the checkpoint age), its commit, a row lock, or
//! something else. So each interval goes to one class ([`WaitClass`]), and a
//! transaction's classes sum to its latency exactly
//! (`db_write_tests::classes_sum_to_latency`). This is what performance_schema's wait
//! events and `SHOW PROFILE` answer on a real server, without their probe effect.
//!
//! A commit's time is split three ways, by what the commit waits for
//! ([`Sim::commit_class`](super::Sim)):
//! - `commit_redo`: the redo log's write and flush. The thread's own file operations on
//!   the redo log (`log_write_up_to`'s pwrite and fsync, or the O_DSYNC write's sync;
//!   performance_schema's `wait/io/file/innodb/innodb_log_file`), with everything the
//!   filesystem does under them (ZFS's `zfs_write` and `zil_commit`, the ZIL's log blocks
//!   and the other itxs they carry; XFS/ext4's page cache, journal commit and cache
//!   flush); its wait for another thread's write or flush of the log to end
//!   (`log_write_up_to`'s wait on `log_sys->flush_event`); with the binary log, the
//!   flush stage's redo flush (`ha_flush_logs` → `log_buffer_flush_to_disk`) or a
//!   rotation's.
//! - `commit_binlog`: the binary log's write and sync. The thread's own file operations
//!   on the binary log (the flush stage's writes, the sync stage's fsync, a rotation's
//!   writes and fsyncs: `wait/io/file/sql/binlog`) and the sync stage's
//!   `binlog_group_commit_sync_delay`.
//! - `commit_queue`: the binary log's group commit queues: a stage's leader waiting for
//!   the stage's mutex, which another group holds (`wait/synch/mutex/sql/MYSQL_BIN_LOG::
//!   LOCK_log`, `LOCK_sync`, `LOCK_commit`: the previous group's redo flush and writes, or
//!   its fsync), and a rotation waiting for LOCK_log or for the transactions written to
//!   commit.
//!
//! A follower of the group commit (its wait on `wait/synch/cond/sql/MYSQL_BIN_LOG::
//! COND_done`) waits for its leader: each moment of that wait goes to what the leader is
//! doing then (its redo flush, its binary log write or fsync, its wait for a stage's
//! mutex). When the leader's step changes what it does, its followers' time so far goes
//! to the class they were in, and they follow it (`Sim::follow_leader`), so the split
//! stays exact: a follower's `COND_done` wait is cut into the leader's redo, binary log
//! and queue parts. Without the binary log there are no followers: a thread waiting for
//! another's redo write is in `commit_redo`, and `commit_binlog` and `commit_queue` are 0.
//!
//! # Simplifications
//!
//! 1. "The slowest transactions" are those in the band of latency holding the 95th
//!    percentile and above (a sixteenth of an octave wide: at least 5% of them; the
//!    band's lower edge and their share are reported): the split is kept per band, not
//!    per transaction.
//! 2. A thread's own write that is neither its commit's nor a frame's flush (none in the
//!    modelled workloads' user threads) counts as `other`.
//! 3. The leader's own CPU (its system calls, the statement's CPU that runs before its
//!    first write) is `cpu` for the leader; its followers waiting meanwhile are in the
//!    class of the file operation or stage that CPU precedes.
//! 4. Under `sync=always` a read's `zil_commit` (before `zfs_read`) is part of its read
//!    (`data_read`), whatever the thread did before.

use super::{Client, State, Wait};
use crate::sim::time::{Nanos, MS, US};
use serde_json::{json, Value};

/// What a user thread waits for between two of its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WaitClass {
    /// Its CPU work: on a vCPU or queued for one.
    Cpu = 0,
    /// Its own read of a page (the filesystem's read path and the devices).
    DataRead,
    /// A page another thread is reading (`buf_page_get_gen` finding it io-fixed).
    PageInFlight,
    /// A free frame: the LRU flush or the page cleaner's batch, or its own single-page
    /// flush to free one.
    FreeFrame,
    /// Room in the redo log (`log_free_check`: the checkpoint age).
    LogFree,
    /// Its commit's redo log write and flush: its own, the flush stage leader's, or
    /// another thread's it waits for (see the module docs).
    CommitRedo,
    /// Its commit's binary log write and sync: its own, or its group leader's; the sync
    /// stage's delay.
    CommitBinlog,
    /// Its commit waits for a stage of the binary log's group commit that another group
    /// holds (as the stage's leader, or as a follower of that leader).
    CommitQueue,
    /// A row lock another transaction holds.
    RowLock,
    /// Anything else.
    Other,
}

/// Number of classes.
pub(super) const CLASSES: usize = 10;
/// The classes' names in the summary, in order.
const NAMES: [&str; CLASSES] = [
    "cpu",
    "data_read",
    "page_in_flight",
    "free_frame",
    "log_free",
    "commit_redo",
    "commit_binlog",
    "commit_queue",
    "row_lock",
    "other",
];

/// Latency bands: each octave of microseconds (up to 2^40 us) cut in 2^SUB_BITS.
const SUB_BITS: usize = 4;
const BANDS: usize = 41 << SUB_BITS;

/// The band of a latency: its bit length in microseconds, then the next SUB_BITS bits.
fn band(latency: Nanos) -> usize {
    let us = (latency / US).max(1);
    let bits = 64 - us.leading_zeros() as usize; // 1..=64
    let sub = if bits > SUB_BITS { us >> (bits - 1 - SUB_BITS) } else { us << (SUB_BITS + 1 - bits) };
    let sub = (sub as usize) & ((1 << SUB_BITS) - 1);
    (((bits - 1) << SUB_BITS) + sub).min(BANDS - 1)
}

/// The lower edge of band `b`, in ns.
fn band_floor(b: usize) -> Nanos {
    let (bits, sub) = ((b >> SUB_BITS) + 1, (b & ((1 << SUB_BITS) - 1)) as u64);
    let m = (1u64 << SUB_BITS) + sub;
    let us = if bits > SUB_BITS { m << (bits - 1 - SUB_BITS) } else { m >> (SUB_BITS + 1 - bits) };
    us.max(1) * US
}

/// Whether the thread's state after its step is in a file operation (the database's
/// writes and syncs, down to the filesystem's).
fn in_io(c: &Client, wait: Wait) -> bool {
    match c.state {
        State::Blocked => matches!(wait, Wait::Journal(_)),
        State::DbIo
        | State::WriteStart
        | State::ZfsWrite
        | State::WriteDone
        | State::BufferedWrite
        | State::JournalCheckpoint
        | State::DataSync
        | State::JournalSync
        | State::JournalSyncThen => true,
        // sync=always: a read's zil_commit is its read's (simplification 4).
        State::Commit | State::CommitWait => c.after_commit != State::ReadStart,
        _ => false,
    }
}

/// Where a thread waits in its commit, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InCommit {
    /// In its commit's own file operation, on file `c.space`.
    Io,
    /// Waiting for another thread (the log's writer, its group's leader, a stage's
    /// mutex), sleeping the sync stage's delay, or about to ask again.
    Waits,
}

/// Where thread `c` waits in its commit after its step (`wait`: what it is blocked on).
pub(super) fn in_commit(c: &Client, wait: Wait) -> Option<InCommit> {
    match c.state {
        State::CommitRetry => Some(InCommit::Waits),
        State::Blocked if c.resume == State::CommitRetry => Some(InCommit::Waits),
        _ if c.after_io == State::CommitRetry && in_io(c, wait) => Some(InCommit::Io),
        _ => None,
    }
}

/// Which class the time until a thread's next step goes to, from how its step ended,
/// for a thread not in its commit ([`in_commit`]; the commit's classes are the
/// driver's to tell): `cpu` when it ended by running its pending CPU.
pub(super) fn class_of(c: &Client, wait: Wait, cpu: bool) -> WaitClass {
    if cpu {
        return WaitClass::Cpu;
    }
    // A database file operation (its writes, syncs, commits) is its job's.
    let job = |after_io: State| match after_io {
        State::FrameRetry => WaitClass::FreeFrame,
        _ => WaitClass::Other,
    };
    match c.state {
        State::Blocked => match wait {
            Wait::Page(_) => WaitClass::PageInFlight,
            Wait::Frame => WaitClass::FreeFrame,
            Wait::RowLock => WaitClass::RowLock,
            Wait::Log if c.resume == State::Apply => WaitClass::LogFree,
            Wait::Log => WaitClass::Other,
            Wait::Journal(_) => job(c.after_io),
            Wait::None | Wait::PurgeWorkers => match c.resume {
                State::FrameRetry => WaitClass::FreeFrame,
                State::Apply => WaitClass::LogFree,
                _ => WaitClass::Other,
            },
        },
        State::FileRead | State::ReadStart => WaitClass::DataRead,
        State::Commit | State::CommitWait if c.after_commit == State::ReadStart => WaitClass::DataRead,
        _ if in_io(c, wait) => job(c.after_io),
        _ => WaitClass::Other,
    }
}

/// One transaction's time by class.
pub(super) type TrxWaits = [Nanos; CLASSES];

/// The measured window's transactions' time by class, overall and per latency band.
#[derive(Debug, Clone)]
pub(super) struct WaitTimes {
    total: TrxWaits,
    count: u64,
    bands: Vec<TrxWaits>,
    band_counts: Vec<u64>,
}

impl Default for WaitTimes {
    fn default() -> Self {
        WaitTimes {
            total: [0; CLASSES],
            count: 0,
            bands: vec![[0; CLASSES]; BANDS],
            band_counts: vec![0; BANDS],
        }
    }
}

impl WaitTimes {
    /// Forgets everything (keeps the allocation).
    pub(super) fn reset(&mut self) {
        self.total = [0; CLASSES];
        self.count = 0;
        self.bands.iter_mut().for_each(|b| *b = [0; CLASSES]);
        self.band_counts.iter_mut().for_each(|n| *n = 0);
    }

    /// A transaction of `latency` finished, its time split as `w`.
    pub(super) fn record(&mut self, latency: Nanos, w: &TrxWaits) {
        let b = band(latency);
        for k in 0..CLASSES {
            self.total[k] += w[k];
            self.bands[b][k] += w[k];
        }
        self.count += 1;
        self.band_counts[b] += 1;
    }

    /// The summary: the mean split of a transaction, and of the slowest ones (from the band
    /// holding `p95`, in ns, up); null when no transaction finished.
    pub(super) fn summary(&self, p95: Nanos) -> Value {
        if self.count == 0 {
            return Value::Null;
        }
        let split = |w: &TrxWaits, n: u64| {
            let mut m = serde_json::Map::new();
            for k in 0..CLASSES {
                m.insert(NAMES[k].into(), json!(w[k] as f64 / n.max(1) as f64 / MS as f64));
            }
            Value::Object(m)
        };
        let from = band(p95);
        let mut tail = [0; CLASSES];
        let mut n = 0;
        for b in from..BANDS {
            for k in 0..CLASSES {
                tail[k] += self.bands[b][k];
            }
            n += self.band_counts[b];
        }
        json!({
            "mean_ms": split(&self.total, self.count),
            "slowest": {
                "from_ms": band_floor(from) as f64 / MS as f64,
                "transactions": n,
                "share": n as f64 / self.count as f64,
                "mean_ms": split(&tail, n),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bands_are_sixteenths_of_octaves() {
        assert_eq!(band(0), band(US));
        assert_eq!(band_floor(band(US)), US);
        for us in [1u64, 2, 3, 5, 7, 8, 9, 16, 17, 100, 1000, 40_000, 3_600_000_000] {
            let b = band(us * US);
            assert!(band_floor(b) <= us * US, "{us}");
            // Below 16 us a band per microsecond (the bands between are empty).
            if b + 1 < BANDS && us >= 1 << SUB_BITS {
                assert!(band_floor(b + 1) > us * US, "{us}");
            }
        }
        assert!((1..BANDS).all(|b| band_floor(b) >= band_floor(b - 1)));
        // 32768 us starts an octave: bands of 2048 us.
        assert_eq!(band(32_768 * US), band(34_815 * US));
        assert_eq!(band(34_816 * US), band(32_768 * US) + 1);
        assert_eq!(band_floor(band(34_816 * US)), 34_816 * US);
    }

    #[test]
    fn the_slowest_split_starts_at_the_p95_band() {
        let mut w = WaitTimes::default();
        let mut fast = [0; CLASSES];
        fast[WaitClass::Cpu as usize] = MS;
        for _ in 0..95 {
            w.record(MS, &fast);
        }
        let mut slow = fast;
        slow[WaitClass::CommitRedo as usize] = 9 * MS;
        slow[WaitClass::CommitBinlog as usize] = 20 * MS;
        slow[WaitClass::CommitQueue as usize] = 10 * MS;
        for _ in 0..5 {
            w.record(40 * MS, &slow);
        }
        let s = w.summary(40 * MS);
        assert_eq!(s["slowest"]["transactions"], 5);
        assert_eq!(s["slowest"]["mean_ms"]["commit_redo"], 9.0);
        assert_eq!(s["slowest"]["mean_ms"]["commit_binlog"], 20.0);
        assert_eq!(s["slowest"]["mean_ms"]["commit_queue"], 10.0);
        assert_eq!(s["slowest"]["mean_ms"]["cpu"], 1.0);
        assert!((s["mean_ms"]["commit_binlog"].as_f64().unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(s["mean_ms"].as_object().unwrap().len(), CLASSES);
        assert!(WaitTimes::default().summary(MS).is_null());
        w.reset();
        assert!(w.summary(MS).is_null());
    }

    proptest! {
        /// Every latency falls in a band whose floor is at most it and whose next floor is above it.
        #[test]
        fn a_latency_lies_in_its_band(ns in 1u64..(1u64 << 50)) {
            let b = band(ns);
            prop_assert!(band_floor(b) <= ns.max(US) / US * US);
            if b + 1 < BANDS && ns >= US << SUB_BITS {
                prop_assert!(band_floor(b + 1) > ns / US * US);
            }
        }
    }
}
