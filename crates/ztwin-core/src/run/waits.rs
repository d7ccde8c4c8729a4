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
//! log's room (`log_free_check`: the checkpoint age), its commit (the log's write and
//! flush, the group commit, the binary log, the ZIL or the journal), a row lock, or
//! something else. So each interval goes to one class ([`WaitClass`]), and a
//! transaction's classes sum to its latency exactly
//! (`db_write_tests::classes_sum_to_latency`). This is what performance_schema's wait
//! events and `SHOW PROFILE` answer on a real server, without their probe effect.
//!
//! # Simplifications
//!
//! 1. "The slowest transactions" are those in the band of latency holding the 95th
//!    percentile and above (a sixteenth of an octave wide: at least 5% of them; the
//!    band's lower edge and their share are reported): the split is kept per band, not
//!    per transaction.
//! 2. A thread's own write that is neither its commit's nor a frame's flush (none in the
//!    modelled workloads' user threads) counts as `other`.

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
    /// Its commit: the redo log's write and flush (its own or the group's), the binary
    /// log, the ZIL or the journal.
    Commit,
    /// A row lock another transaction holds.
    RowLock,
    /// Anything else.
    Other,
}

/// Number of classes.
pub(super) const CLASSES: usize = 8;
/// The classes' names in the summary, in order.
const NAMES: [&str; CLASSES] =
    ["cpu", "data_read", "page_in_flight", "free_frame", "log_free", "commit", "row_lock", "other"];

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

/// Which class the time until a thread's next step goes to, from how its step ended:
/// `cpu` when it ended by running its pending CPU.
pub(super) fn class_of(c: &Client, wait: Wait, cpu: bool) -> WaitClass {
    if cpu {
        return WaitClass::Cpu;
    }
    // A database file operation (its writes, syncs, commits) is its job's.
    let job = |after_io: State| match after_io {
        State::FrameRetry => WaitClass::FreeFrame,
        State::CommitRetry => WaitClass::Commit,
        _ => WaitClass::Other,
    };
    match c.state {
        State::Blocked => match wait {
            Wait::Page(_) => WaitClass::PageInFlight,
            Wait::Frame => WaitClass::FreeFrame,
            Wait::RowLock => WaitClass::RowLock,
            Wait::Log if c.resume == State::Apply => WaitClass::LogFree,
            Wait::Log => WaitClass::Commit,
            Wait::Journal(_) => job(c.after_io),
            Wait::None | Wait::PurgeWorkers => match c.resume {
                State::FrameRetry => WaitClass::FreeFrame,
                State::Apply => WaitClass::LogFree,
                State::CommitRetry => WaitClass::Commit,
                _ => WaitClass::Other,
            },
        },
        State::FileRead | State::ReadStart => WaitClass::DataRead,
        State::CommitRetry => WaitClass::Commit,
        State::DbIo
        | State::WriteStart
        | State::ZfsWrite
        | State::WriteDone
        | State::BufferedWrite
        | State::JournalCheckpoint
        | State::DataSync
        | State::JournalSync
        | State::JournalSyncThen
        | State::Commit
        | State::CommitWait => job(c.after_io),
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
        for _ in 0..95 {
            w.record(MS, &[MS, 0, 0, 0, 0, 0, 0, 0]);
        }
        for _ in 0..5 {
            w.record(40 * MS, &[MS, 0, 0, 0, 0, 39 * MS, 0, 0]);
        }
        let s = w.summary(40 * MS);
        assert_eq!(s["slowest"]["transactions"], 5);
        assert_eq!(s["slowest"]["mean_ms"]["commit"], 39.0);
        assert_eq!(s["slowest"]["mean_ms"]["cpu"], 1.0);
        assert!((s["mean_ms"]["commit"].as_f64().unwrap() - 1.95).abs() < 1e-9);
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
