//! The write issue taskq (`z_wr_iss`): the CPU work of a txg sync's writes before they
//! reach the vdev queues, run on the machine's vCPUs.
//!
//! Mechanism. `spa_sync` creates one write zio per dirty record (`dbuf_sync_leaf` ->
//! `dbuf_write` -> `arc_write`), then one per rewritten indirect block and dnode block.
//! The write pipeline (`ZIO_WRITE_PIPELINE`, `module/zfs/zio.c`) hands each zio to the
//! write issue taskq at `ZIO_STAGE_ISSUE_ASYNC`, which comes before
//! `ZIO_STAGE_WRITE_COMPRESS` (`zio_write_compress`: the record is compressed by the
//! dataset's algorithm, `zio_compress_data`, over its whole logical size),
//! `ZIO_STAGE_CHECKSUM_GENERATE` (fletcher4 over the physical size), the allocation and
//! `ZIO_STAGE_VDEV_IO_START` (a child zio per leaf of a mirror, each submitted to its
//! leaf's vdev queue). So a record's I/O reaches the disks only once a taskq thread has
//! compressed and checksummed it, and the taskq's threads run beside the database's on
//! the same CPUs.
//!
//! The taskq's threads (`spa_taskqs_init`, `module/zfs/spa.c`: the WRITE ISSUE entry of
//! `zio_taskqs`, `ZTI_BATCH` through 2.2, `ZTI_SYNC` in 2.3, both `TASKQ_THREADS_CPU_PCT`):
//! `zio_taskq_batch_pct` percent of the online CPUs, at least one; 75 through 0.8, 80 from
//! 2.1 (the release table's `ZfsFeatures::zio_taskq_batch_pct`).
//! Each thread takes the next zio when it is free.
//!
//! Simplifications:
//! 1. one job per block: its compression, checksum, zio pipeline (`zio_ns`) and the
//!    device I/O cost (`device_io_ns`, its issue and interrupt) of each leaf write, run
//!    at once by one thread; the interrupt half runs in `z_wr_int` in the real system.
//! 2. the threads' higher priority (`maxclsyspri + 1`) is not modelled: a job waits for
//!    a vCPU in turn with the database's work (`dev::cpu::Cpus` is first come, first
//!    served).
//! 3. compression costs `compress_bytes_per_sec` of the machine (lz4's rate) whatever
//!    the algorithm; an indirect block is compressed as data is (lz4 since 0.8's
//!    metadata compression); a dnode block's compression is not charged (one sector).
//! 4. an indirect block's zio runs in record order after its children's, not when its
//!    children are ready (`zio_ready` of the children).

use crate::dev::cpu::Cpus;
use crate::fs::zfs::txg::LeafWrite;
use crate::sim::time::Nanos;

/// The write issue taskq's threads on `vcpus` CPUs at `zio_taskq_batch_pct` = `pct`
/// (`spa_taskqs_init`: at least one).
pub fn issue_threads(vcpus: u32, pct: u32) -> usize {
    (u64::from(vcpus) * u64::from(pct) / 100).max(1) as usize
}

/// One zio's work: CPU time and the end of its leaf writes in [`IssueTaskq::writes`].
#[derive(Debug, Clone, Copy)]
struct Job {
    work: Nanos,
    end: u32,
}

/// The taskq's state: a sync's jobs in the order they were dispatched, and per thread
/// the job it runs and when that is done.
#[derive(Debug, Default)]
pub struct IssueTaskq {
    jobs: Vec<Job>,
    /// Every job's leaf writes: (leaf device, write), job after job.
    writes: Vec<(usize, LeafWrite)>,
    next: usize,
    threads: Vec<Option<(Nanos, usize)>>,
    /// The earliest of the threads' job ends (`next_at`), as of the last step.
    next_done: Option<Nanos>,
    /// CPU time of every job given to it, ns.
    pub queued_ns: Nanos,
}

impl IssueTaskq {
    /// A taskq of `threads` threads, idle.
    pub fn new(threads: usize) -> IssueTaskq {
        IssueTaskq { threads: vec![None; threads.max(1)], ..IssueTaskq::default() }
    }

    /// Adds a leaf write to the job being built.
    pub fn push_write(&mut self, leaf: usize, w: LeafWrite) {
        self.writes.push((leaf, w));
    }

    /// Ends the job being built (its writes are those pushed since the last): it costs
    /// `work` of CPU.
    pub fn end_job(&mut self, work: Nanos) {
        self.jobs.push(Job { work, end: self.writes.len() as u32 });
        self.queued_ns += work;
    }

    /// Whether every job has run and its writes have been handed on.
    pub fn idle(&self) -> bool {
        self.next == self.jobs.len() && self.threads.iter().all(Option::is_none)
    }

    /// When a thread next finishes its job, if one runs.
    pub fn next_at(&self) -> Option<Nanos> {
        self.next_done
    }

    /// Runs the taskq at `now`: threads done hand their job's writes to `submit`; free
    /// threads take the next jobs, on the vCPUs. A job that takes no time is handed on at
    /// once. When every job is done, the lists are cleared for the next sync.
    pub fn step(&mut self, now: Nanos, cpus: &mut Cpus, mut submit: impl FnMut(usize, LeafWrite)) {
        for k in 0..self.threads.len() {
            loop {
                match self.threads[k] {
                    Some((done, _)) if done > now => break,
                    Some((_, j)) => {
                        self.threads[k] = None;
                        self.hand_on(j, &mut submit);
                    }
                    None => {}
                }
                if self.next == self.jobs.len() {
                    break;
                }
                let j = self.next;
                self.next += 1;
                let done = cpus.run(now, self.jobs[j].work);
                self.threads[k] = Some((done, j));
            }
        }
        self.next_done = self.threads.iter().flatten().map(|&(t, _)| t).min();
        if self.idle() {
            self.jobs.clear();
            self.writes.clear();
            self.next = 0;
        }
    }

    fn hand_on(&self, j: usize, submit: &mut impl FnMut(usize, LeafWrite)) {
        let start = if j == 0 { 0 } else { self.jobs[j - 1].end as usize };
        for &(leaf, w) in &self.writes[start..self.jobs[j].end as usize] {
            submit(leaf, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lw(offset: u64) -> LeafWrite {
        LeafWrite { offset, bytes: 4096, undirty: 4096 }
    }

    #[test]
    fn threads_are_the_batch_share_of_the_cpus_and_at_least_one() {
        assert_eq!(issue_threads(1, 80), 1);
        assert_eq!(issue_threads(2, 80), 1);
        assert_eq!(issue_threads(4, 80), 3);
        assert_eq!(issue_threads(20, 80), 16);
        assert_eq!(issue_threads(4, 75), 3);
        assert_eq!(issue_threads(20, 75), 15);
    }

    /// Two threads on four vCPUs: four jobs of 10 us hand on their writes at 10, 10, 20,
    /// 20 us, in job order, and the CPU counts 40 us.
    #[test]
    fn jobs_run_on_the_threads_and_hand_on_their_writes_when_done() {
        let mut cpus = Cpus::new(4);
        let mut q = IssueTaskq::new(2);
        for j in 0..4u64 {
            q.push_write(0, lw(j));
            q.push_write(1, lw(j));
            q.end_job(10_000);
        }
        let mut out = Vec::new();
        q.step(0, &mut cpus, |l, w| out.push((0, l, w.offset)));
        assert!(out.is_empty());
        assert_eq!(q.next_at(), Some(10_000));
        q.step(10_000, &mut cpus, |l, w| out.push((10, l, w.offset)));
        assert_eq!(out, vec![(10, 0, 0), (10, 1, 0), (10, 0, 1), (10, 1, 1)]);
        assert_eq!(q.next_at(), Some(20_000));
        q.step(20_000, &mut cpus, |l, w| out.push((20, l, w.offset)));
        assert_eq!(out.len(), 8);
        assert_eq!(&out[4..], &[(20, 0, 2), (20, 1, 2), (20, 0, 3), (20, 1, 3)]);
        assert!(q.idle());
        assert_eq!(q.next_at(), None);
        assert_eq!(cpus.busy_ns(), 40_000);
        assert_eq!(q.queued_ns, 40_000);
    }

    /// Jobs of no work are handed on in the step that dispatches them.
    #[test]
    fn free_jobs_pass_at_once() {
        let mut cpus = Cpus::new(1);
        let mut q = IssueTaskq::new(1);
        for j in 0..3 {
            q.push_write(0, lw(j));
            q.end_job(0);
        }
        let mut n = 0;
        q.step(5, &mut cpus, |_, _| n += 1);
        assert_eq!(n, 3);
        assert!(q.idle());
    }

    /// The taskq's work waits for busy vCPUs: one vCPU busy until 50 us delays a job
    /// submitted at 0 to 60 us.
    #[test]
    fn jobs_queue_behind_other_cpu_work() {
        let mut cpus = Cpus::new(1);
        cpus.run(0, 50_000);
        let mut q = IssueTaskq::new(1);
        q.push_write(0, lw(0));
        q.end_job(10_000);
        q.step(0, &mut cpus, |_, _| {});
        assert_eq!(q.next_at(), Some(60_000));
    }
}
