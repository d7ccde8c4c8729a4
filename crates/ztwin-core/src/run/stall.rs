//! The run's stall check: a run whose requests can no longer complete ends with an error
//! that names what they wait for, instead of simulating for ever.
//!
//! Mechanism. The drain (`Sim::drain`) runs while requests are pending, and a request that
//! polls keeps one pending: a Percona Server thread backing off for a free frame
//! (`buf_LRU_get_free_block`'s sleeps, up to 10 ms a round), a thread polling for a sync
//! flush (`buf_flush_wait_flushed`, 10 ms), a commit sleeping on the log. If what it waits
//! for never comes, the clock runs on with nothing done; and a wait that wakes at once (a
//! thread woken, finding nothing, waking the thread that should help, which does nothing
//! and wakes it again) does not even move the clock. [`Stall`] watches both shapes:
//! - per event (a comparison and an addition): the clock has not moved for
//!   [`INSTANT_EVENTS_PER_ACTOR`] events per actor (client slots, plus 64 for the prefetches
//!   and the background threads);
//! - every [`LOOK_EVERY`] events: the progress mark, requests completed (statements, fio
//!   I/Os, `cat` reads) plus device operations submitted. When it has not moved for
//!   [`STALL_EVENTS`] events and [`STALL_NS`] of simulated time, the run is stuck: only
//!   pollers and timers run. A flush that keeps every client waiting writes (device
//!   operations); a device that never answers gives few events (the run abandons what it
//!   has in flight at `MAX_SIMULATED_NS`, as before).
//!
//! Either ends the run with [`Error::Simulation`] naming the clients' waits (how many
//! retry for a free frame, poll for a flush, wait for a page, ...) and, when threads
//! wait for frames, the buffer pool's free and total frames. Nothing of the simulation is
//! changed: a run that makes progress never meets either bound, and its results are what
//! they were.
//!
//! Sources: the servers bound their own waits only loosely: InnoDB's
//! `srv_error_monitor_thread` kills a server whose semaphore wait lasts over
//! `srv_fatal_semaphore_wait_threshold` (600 s; MySQL 5.7 `srv/srv0srv.cc`), and
//! `buf_LRU_get_free_block` only warns after 20 rounds without a frame ("Difficult to find
//! free blocks in the buffer pool", MySQL 5.7 `buf/buf0lru.cc`). The longest timed sleep of
//! the threads that free frames or flush is one second (the page cleaners, Percona Server's
//! LRU manager, the master thread): a minute without a single I/O is no wait of theirs.
//!
//! Simplifications:
//! 1. The bounds are the driver's, not a server's: a real server in the same state hangs
//!    (or, past 600 s of a semaphore wait, crashes); the twin reports it instead.
//! 2. The progress mark is looked at every [`LOOK_EVERY`] events, so a stall is reported up
//!    to that many events late.

use super::{Error, Nanos, Result, Sim, State, Wait, SEC};

/// Events at one simulated instant, per actor, beyond which the run is stuck at that
/// instant (no chain of wake-ups of one request is that long).
pub(super) const INSTANT_EVENTS_PER_ACTOR: u64 = 1000;
/// How often (events) the progress mark is looked at.
pub(super) const LOOK_EVERY: u64 = 1 << 16;
/// Events without progress after which a run that also spent [`STALL_NS`] is stuck.
pub(super) const STALL_EVENTS: u64 = 1 << 20;
/// Simulated time without progress after which a run that also processed [`STALL_EVENTS`]
/// is stuck: a minute (see the module doc).
pub(super) const STALL_NS: Nanos = 60 * SEC;

/// What [`Stall::event`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Go on.
    Fine,
    /// The clock stood still too long.
    Instant,
    /// Look at the progress mark ([`Stall::look`]).
    Look,
}

/// The stall check of one drain.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stall {
    /// The instant of the last event and the events seen at it.
    instant: Nanos,
    at_instant: u64,
    /// Most events at one instant.
    instant_limit: u64,
    /// Events since the last look.
    events: u64,
    /// The progress mark, when it last moved, and the events since.
    mark: u64,
    since: Nanos,
    quiet: u64,
}

impl Stall {
    /// The check of a drain starting at `now` with `actors` event targets and progress
    /// mark `mark`.
    pub(super) fn new(now: Nanos, actors: usize, mark: u64) -> Stall {
        Stall {
            instant: now,
            at_instant: 0,
            instant_limit: INSTANT_EVENTS_PER_ACTOR.saturating_mul(actors as u64 + 64),
            events: 0,
            mark,
            since: now,
            quiet: 0,
        }
    }

    /// An event at `t`.
    #[inline]
    pub(super) fn event(&mut self, t: Nanos) -> Check {
        if t == self.instant {
            self.at_instant += 1;
            if self.at_instant > self.instant_limit {
                return Check::Instant;
            }
        } else {
            self.instant = t;
            self.at_instant = 1;
        }
        self.events += 1;
        if self.events >= LOOK_EVERY {
            return Check::Look;
        }
        Check::Fine
    }

    /// The progress mark is `mark` at `t` (asked by [`Check::Look`]): true when the run is
    /// stuck.
    pub(super) fn look(&mut self, t: Nanos, mark: u64) -> bool {
        let events = std::mem::take(&mut self.events);
        if mark != self.mark {
            (self.mark, self.since, self.quiet) = (mark, t, 0);
            return false;
        }
        self.quiet = self.quiet.saturating_add(events);
        self.quiet >= STALL_EVENTS && t.saturating_sub(self.since) >= STALL_NS
    }

    /// When the progress mark last moved (or the drain started).
    pub(super) fn since(&self) -> Nanos {
        self.since
    }

    /// Events at the current instant.
    pub(super) fn at_instant(&self) -> u64 {
        self.at_instant
    }
}

/// What a client waits for, as the error names it.
fn waiting_for(state: State, resume: State, wait: Wait) -> &'static str {
    match (state, wait) {
        (State::Blocked, Wait::Frame) => "waiting for a free frame",
        (State::Blocked, Wait::Log) => "waiting for the redo log (its writer or the checkpoint age)",
        (State::Blocked, Wait::Page(_)) => "waiting for a page another thread reads",
        (State::Blocked, Wait::Journal(_)) => "waiting for the journal's commit",
        (State::Blocked, Wait::PurgeWorkers) => "waiting for the purge workers",
        (State::Blocked, Wait::RowLock) => "waiting for a row lock",
        (State::Blocked, Wait::None) => match resume {
            State::FrameRetry => "retrying for a free frame (buf_LRU_get_free_block)",
            State::Apply => "polling for a sync flush (log_free_check)",
            State::CommitRetry => "sleeping on the redo log (commit)",
            _ => "waiting for I/O",
        },
        (State::CommitWait, _) => "waiting for the intent log (zil_commit)",
        _ => "in I/O or on the CPU",
    }
}

impl Sim<'_> {
    /// The progress mark: requests completed (statements, fio I/Os, `cat` reads) plus the
    /// devices' operations.
    pub(super) fn progress_mark(&self) -> u64 {
        let ops = self
            .devices
            .iter()
            .map(|d| d.counters())
            .fold(0u64, |s, c| s.wrapping_add(c.reads).wrapping_add(c.writes).wrapping_add(c.flushes));
        self.statements.wrapping_add(self.fio_ios).wrapping_add(self.cat_reads).wrapping_add(ops)
    }

    /// The stall check of an event at `t` (see the module doc).
    #[inline]
    pub(super) fn stall_check(&self, stall: &mut Stall, t: Nanos) -> Result<()> {
        match stall.event(t) {
            Check::Fine => Ok(()),
            Check::Instant => Err(self.stall_error(t, stall, true)),
            Check::Look if stall.look(t, self.progress_mark()) => Err(self.stall_error(t, stall, false)),
            Check::Look => Ok(()),
        }
    }

    /// The error ending a stalled run at `now` (`instant`: the clock stood still; else no
    /// request completed since `stall.since()`), naming the clients' waits.
    pub(super) fn stall_error(&self, now: Nanos, stall: &Stall, instant: bool) -> Error {
        // The workload's threads first, then the database's own.
        let mut groups: Vec<(&'static str, usize)> = Vec::new();
        for (i, c) in self.clients.iter().enumerate().take(self.nusers) {
            if c.state == State::Idle {
                continue;
            }
            let what = waiting_for(c.state, c.resume, self.waits[i]);
            match groups.iter_mut().find(|g| g.0 == what) {
                Some(g) => g.1 += 1,
                None => groups.push((what, 1)),
            }
        }
        groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let stuck: usize = groups.iter().map(|g| g.1).sum();
        let list: Vec<String> = groups.iter().map(|(what, n)| format!("{n} {what}")).collect();
        let frames = groups.iter().any(|g| g.0.contains("free frame"));
        let mut message = if instant {
            format!(
                "the clock stood still for {} events: {stuck} of {} clients wake and wait again at once",
                stall.at_instant(),
                self.nusers
            )
        } else {
            format!(
                "no request completed and no device I/O in {:.0} s of simulated time (since t = \
                 {:.3} s): {stuck} of {} clients wait for what never comes",
                now.saturating_sub(stall.since()) as f64 / SEC as f64,
                stall.since() as f64 / SEC as f64,
                self.nusers
            )
        };
        if !list.is_empty() {
            message.push_str(&format!(" ({})", list.join(", ")));
        }
        let component = match (&self.db, frames) {
            (Some(db), true) => {
                message.push_str(&format!(
                    "; the buffer pool has {} of {} frames free: too small for the threads, or its \
                     free-frame refill stopped",
                    db.free_frames(),
                    db.cache_pages()
                ));
                "database.buffer_pool"
            }
            _ if groups.first().is_some_and(|g| g.0.contains("redo log") || g.0.contains("flush")) => {
                "database.redo_log"
            }
            _ => "run",
        };
        Error::Simulation { component: component.into(), time_ns: now, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    #[test]
    fn the_clock_standing_still_is_caught_after_its_bound() {
        let mut s = Stall::new(5, 0, 0);
        let mut n = 0u64;
        let found = loop {
            n += 1;
            match s.event(5) {
                Check::Fine => {}
                Check::Look => assert!(!s.look(5, 0)),
                Check::Instant => break n,
            }
        };
        assert_eq!(found, INSTANT_EVENTS_PER_ACTOR * 64 + 1);
    }

    #[test]
    fn a_moving_clock_restarts_the_instant_count() {
        let mut s = Stall::new(0, 0, 0);
        for k in 0..3 * INSTANT_EVENTS_PER_ACTOR * 64 {
            // Two events an instant, the mark moving: never a stall.
            match s.event(k / 2) {
                Check::Fine => {}
                Check::Look => assert!(!s.look(k / 2, k)),
                Check::Instant => panic!("two events an instant is no stall"),
            }
        }
    }

    /// Runs `n` events spaced `dt`, the mark moving every `every` events (never with 0):
    /// the event at which a stall is found.
    fn run(n: u64, dt: Nanos, every: u64) -> Option<u64> {
        let mut s = Stall::new(0, 8, 0);
        for k in 1..=n {
            let t = k * dt;
            let mark = k.checked_div(every).unwrap_or(0);
            match s.event(t) {
                Check::Fine => {}
                Check::Look if s.look(t, mark) => return Some(k),
                Check::Look => {}
                Check::Instant => panic!("the clock moves"),
            }
        }
        None
    }

    #[test]
    fn no_progress_is_a_stall_only_with_both_the_events_and_the_time() {
        // Pollers: 8 threads in 10 ms rounds, nothing done: found once both bounds pass.
        let k = run(4 * STALL_EVENTS, 10 * MS / 8, 0).expect("a stall");
        assert!(k >= STALL_EVENTS && k * (10 * MS / 8) >= STALL_NS, "{k}");
        assert!(k <= STALL_EVENTS + LOOK_EVERY, "{k}");
        // Many events in little time (a burst): not yet.
        assert_eq!(run(4 * STALL_EVENTS, 1, 0), None);
        // A device that never answers: an event an hour, far fewer than the events bound.
        assert_eq!(run(STALL_EVENTS / 2, 3600 * SEC, 0), None);
        // Progress now and then resets it.
        assert_eq!(run(8 * STALL_EVENTS, SEC, STALL_EVENTS / 2), None);
    }
}
