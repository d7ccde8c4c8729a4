//! vCPUs: a pool of identical processors serving bursts of CPU work first come, first
//! served, without preemption.
//!
//! Queries cannot go faster than the CPUs allow: when every vCPU is busy, work waits. A
//! real scheduler shares time slices instead; for throughput bounds and mean latency the
//! two agree, for tail latency FCFS is a simplification (documented in the README).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::sim::time::Nanos;

/// The machine's vCPUs.
#[derive(Debug)]
pub struct Cpus {
    free_at: BinaryHeap<Reverse<Nanos>>,
    busy_ns: Nanos,
    vcpus: u32,
}

impl Cpus {
    /// `vcpus` idle processors.
    pub fn new(vcpus: u32) -> Self {
        let n = vcpus.max(1);
        Cpus { free_at: (0..n).map(|_| Reverse(0)).collect(), busy_ns: 0, vcpus: n }
    }

    /// Runs `work` ns of CPU submitted at `now` (nondecreasing); returns when it finishes.
    pub fn run(&mut self, now: Nanos, work: Nanos) -> Nanos {
        if work == 0 {
            return now;
        }
        // Invariant: `new` makes at least one vCPU and every pop is followed by a push.
        let Reverse(free) = self.free_at.pop().expect("at least one vCPU");
        let done = free.max(now).saturating_add(work);
        self.free_at.push(Reverse(done));
        self.busy_ns = self.busy_ns.saturating_add(work);
        done
    }

    /// CPU time consumed so far (all vCPUs), ns, counting queued work in full.
    pub fn busy_ns(&self) -> Nanos {
        self.busy_ns
    }

    /// CPU time consumed up to time `t`, no earlier than the last submission. Work planned
    /// beyond `t` on a vCPU is one stretch `[t, free_at]` (each burst was submitted before
    /// `t` and starts at its submission or at the previous burst's end). Work submitted
    /// for a time after `t` (a burst that starts once a device answers) leaves a gap in
    /// that stretch, counted as work: the answer is then low, at worst 0, never below.
    pub fn busy_ns_at(&self, t: Nanos) -> Nanos {
        let planned = self.free_at.iter().fold(0u64, |s, Reverse(f)| s.saturating_add(f.saturating_sub(t)));
        self.busy_ns.saturating_sub(planned)
    }

    /// Number of vCPUs.
    pub fn vcpus(&self) -> u32 {
        self.vcpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_vcpus_run_two_bursts_at_once_and_queue_the_third() {
        let mut c = Cpus::new(2);
        assert_eq!(c.run(0, 100), 100);
        assert_eq!(c.run(0, 100), 100);
        assert_eq!(c.run(0, 100), 200);
        assert_eq!(c.busy_ns(), 300);
    }

    /// Work queued past `t` is not yet consumed at `t`.
    #[test]
    fn busy_at_a_time_excludes_work_planned_after_it() {
        let mut c = Cpus::new(2);
        c.run(0, 100);
        c.run(0, 100);
        c.run(0, 100); // 100..200 on the first vCPU free
        assert_eq!(c.busy_ns_at(50), 100);
        assert_eq!(c.busy_ns_at(150), 250);
        assert_eq!(c.busy_ns_at(1000), 300);
    }

    #[test]
    fn throughput_never_exceeds_vcpus() {
        let mut c = Cpus::new(2);
        let mut last = 0;
        for _ in 0..1000 {
            last = last.max(c.run(0, 1000));
        }
        assert_eq!(last, 1000 * 1000 / 2);
    }
}
