//! Progress of a run while it goes: an observer the driver tells how far the simulated
//! clock has come, for progress bars and for stopping a run early (Ctrl-C).
//!
//! The driver calls the observer when it emits a series row (so at most once per report
//! interval of simulated time, and at no cost per event beyond the row check it already
//! makes), and, in the drain after a workload window's end (where no row is due), every
//! 65,536 events; at most once per `every` of wall time: the wall clock is read only then
//! and only to thin the calls out. It never touches the simulation: a run observed gives
//! the same result as one that is not. The observer's answer `false` stops the run with
//! [`Error::Stopped`]. When the run ends, the observer is called once more with
//! `finished` set (its answer is then ignored).

use std::time::{Duration, Instant};

use crate::config::PhaseConfig;
use crate::error::{Error, Result};
use crate::sim::time::Nanos;

/// How far a run has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time reached (ns since the start of the variant's first phase).
    pub simulated_ns: Nanos,
    /// The simulated time the whole variant takes, when every phase has a set length
    /// (workload phases: warm-up + duration; tune phases: none). None when a phase ends
    /// when its work is done (fio, cat, restart); then only `phase` says how far it is.
    pub total_ns: Option<Nanos>,
    /// The phase running (0-based).
    pub phase: usize,
    /// Number of phases.
    pub phases: usize,
    /// The run has ended (the last call).
    pub finished: bool,
}

/// The total simulated time of `phases`, if each has a set length (see [`Progress::total_ns`]).
pub fn total_ns(phases: &[PhaseConfig]) -> Option<Nanos> {
    phases.iter().try_fold(0u64, |sum, p| match p {
        PhaseConfig::Workload(w) => sum.checked_add(w.warmup_ns)?.checked_add(w.duration_ns),
        PhaseConfig::Tune(_) => Some(sum),
        PhaseConfig::Restart(_) | PhaseConfig::Fio(_) | PhaseConfig::Cat(_) => None,
    })
}

/// The observer of one run and its wall-time thinning.
pub(super) struct Observer<'p> {
    callback: &'p mut dyn FnMut(Progress) -> bool,
    every: Duration,
    last: Instant,
    total_ns: Option<Nanos>,
    phases: usize,
    /// The observer asked to stop, at this simulated time.
    stopped: Option<Nanos>,
}

impl<'p> Observer<'p> {
    pub(super) fn new(
        callback: &'p mut dyn FnMut(Progress) -> bool,
        every: Duration,
        phases: &[PhaseConfig],
    ) -> Observer<'p> {
        Observer {
            callback,
            every,
            last: Instant::now(),
            total_ns: total_ns(phases),
            phases: phases.len(),
            stopped: None,
        }
    }

    /// Tells the observer the clock reached `simulated_ns` in `phase`, if `every` of wall
    /// time has passed since it was last told.
    pub(super) fn observe(&mut self, simulated_ns: Nanos, phase: usize) {
        if self.stopped.is_some() {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last) < self.every {
            return;
        }
        self.last = now;
        let p =
            Progress { simulated_ns, total_ns: self.total_ns, phase, phases: self.phases, finished: false };
        if !(self.callback)(p) {
            self.stopped = Some(simulated_ns);
        }
    }

    /// The run ended at `simulated_ns`.
    pub(super) fn finish(&mut self, simulated_ns: Nanos) {
        let phase = self.phases.saturating_sub(1);
        let p =
            Progress { simulated_ns, total_ns: self.total_ns, phase, phases: self.phases, finished: true };
        (self.callback)(p);
    }

    /// [`Error::Stopped`] if the observer asked to stop.
    pub(super) fn check(&self) -> Result<()> {
        match self.stopped {
            Some(time_ns) => Err(Error::Stopped { time_ns }),
            None => Ok(()),
        }
    }
}
