use super::*;
use crate::sim::time::{MS, SEC, US};

/// What a fake device received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// A write request: submitted at, offset, bytes, completion.
    Write(Nanos, u64, u32, Nanos),
    /// A flush command: submitted at, completion.
    Flush(Nanos, Nanos),
}

/// A device serving every request in parallel with fixed latencies, recording them.
#[derive(Debug, Default)]
pub struct FakeDev {
    pub write_ns: Nanos,
    pub flush_ns: Nanos,
    pub log: Vec<Ev>,
}

impl FakeDev {
    pub fn new(write_ns: Nanos, flush_ns: Nanos) -> FakeDev {
        FakeDev { write_ns, flush_ns, log: Vec::new() }
    }

    pub fn writes(&self) -> Vec<(Nanos, u64, u32)> {
        self.log
            .iter()
            .filter_map(|e| match *e {
                Ev::Write(at, off, n, _) => Some((at, off, n)),
                Ev::Flush(..) => None,
            })
            .collect()
    }

    pub fn flushes(&self) -> usize {
        self.log.iter().filter(|e| matches!(e, Ev::Flush(..))).count()
    }
}

impl BlockDev for FakeDev {
    fn write(&mut self, now: Nanos, offset: u64, bytes: u32) -> Nanos {
        let done = now + self.write_ns;
        self.log.push(Ev::Write(now, offset, bytes, done));
        done
    }

    fn flush(&mut self, now: Nanos) -> Nanos {
        let done = now + self.flush_ns;
        self.log.push(Ev::Flush(now, done));
        done
    }
}

/// Steps `run` on `dev` from `now` until done; returns the completion time.
pub fn run_to_end(run: &mut PlanRun, dev: &mut impl BlockDev, mut now: Nanos) -> Nanos {
    for _ in 0..100 {
        match run.step(now, dev) {
            IoStep::WaitUntil(t) => now = t,
            IoStep::Done => return now,
        }
    }
    panic!("plan did not finish");
}

const PF_FUA: IoOp = IoOp::Write { offset: 4096, bytes: 4096, preflush: true, fua: true };

/// blk_flush_policy: PREFLUSH|FUA on a write-back cache without FUA is flush, write,
/// flush; with FUA, flush and a FUA write; without a volatile cache, the write alone; an
/// empty flush without a cache reaches nothing.
#[test]
fn flush_policy_follows_the_queue_flags() {
    let virtio = DeviceCaps::virtio_blk(true);
    let (c, n) = lower(PF_FUA, virtio);
    assert_eq!(&c[..n], &[Cmd::Flush, Cmd::Write { offset: 4096, bytes: 4096 }, Cmd::Flush]);
    let (c, n) = lower(PF_FUA, DeviceCaps { fua: true, ..virtio });
    assert_eq!(&c[..n], &[Cmd::Flush, Cmd::Write { offset: 4096, bytes: 4096 }]);
    let (c, n) = lower(PF_FUA, DeviceCaps::virtio_blk(false));
    assert_eq!(&c[..n], &[Cmd::Write { offset: 4096, bytes: 4096 }]);
    assert_eq!(lower(IoOp::Flush, DeviceCaps::virtio_blk(false)).1, 0);
    assert_eq!(lower(IoOp::Flush, virtio), ([Cmd::Flush; 3], 1));
}

/// The three steps of a PREFLUSH|FUA write each wait for the previous one.
#[test]
fn a_commit_block_is_flush_then_write_then_flush_in_sequence() {
    let mut plan = Plan::EMPTY;
    plan.push(PF_FUA, false);
    assert_eq!(plan.flush_requests(), 1);
    let mut dev = FakeDev::new(MS, 2 * MS);
    let mut run = PlanRun::new(&plan, DeviceCaps::virtio_blk(true));
    let end = run_to_end(&mut run, &mut dev, 0);
    assert_eq!(
        dev.log,
        vec![Ev::Flush(0, 2 * MS), Ev::Write(2 * MS, 4096, 4096, 3 * MS), Ev::Flush(3 * MS, 5 * MS)]
    );
    assert_eq!(end, 5 * MS);
    assert_eq!(run.issued(), (1, 2));
    assert_eq!(run.group_done(2), Some(5 * MS));
}

/// Steps that do not wait go together; a step that waits starts when all before it
/// completed; a long range is split into requests of the queue's maximum.
#[test]
fn groups_wait_for_each_other_and_ranges_split() {
    let mut plan = Plan::EMPTY;
    plan.push(IoOp::Write { offset: 0, bytes: 3 << 20, preflush: false, fua: false }, false);
    plan.push(IoOp::Write { offset: 8 << 20, bytes: 4096, preflush: false, fua: false }, false);
    plan.push(IoOp::Write { offset: 16 << 20, bytes: 4096, preflush: false, fua: false }, true);
    assert_eq!(plan.write_bytes(), (3 << 20) + 8192);
    let caps = DeviceCaps { write_cache: true, fua: false, max_request_bytes: 1 << 20 };
    let mut dev = FakeDev::new(100 * US, MS);
    let mut run = PlanRun::new(&plan, caps);
    assert_eq!(run.step(0, &mut dev), IoStep::WaitUntil(100 * US));
    assert_eq!(dev.writes().len(), 4, "three 1 MiB requests and the 4 KiB write");
    assert!(dev.writes().iter().all(|w| w.0 == 0));
    // Called early: nothing more goes.
    assert_eq!(run.step(50 * US, &mut dev), IoStep::WaitUntil(100 * US));
    assert_eq!(run.step(100 * US, &mut dev), IoStep::WaitUntil(200 * US));
    assert_eq!(dev.writes()[4], (100 * US, 16 << 20, 4096));
    assert_eq!(run.step(200 * US, &mut dev), IoStep::Done);
}

/// On the device model: a flush takes the one slot behind the writes; without a write
/// cache no flush reaches the device.
#[test]
fn a_plan_runs_on_the_device_model() {
    let mut cfg = crate::config::test_variant().devices.remove(0);
    cfg.flush_latency_ns = 2 * MS;
    cfg.parallelism = 1;
    cfg.latency_sigma = 0.0;
    let mut dev = Device::new(&cfg, 1);
    let caps = DeviceCaps::from_config(&cfg, false, 1 << 20);
    assert!(caps.write_cache);
    let mut plan = Plan::EMPTY;
    plan.push(PF_FUA, false);
    let mut run = PlanRun::new(&plan, caps);
    let end = run_to_end(&mut run, &mut dev, 0);
    let w = cfg.write_latency_ns;
    assert!(end >= 4 * MS + w, "{end}");
    assert_eq!((dev.counters().flushes, dev.counters().writes), (2, 1));

    cfg.flush_latency_ns = 0;
    let mut dev = Device::new(&cfg, 1);
    let caps = DeviceCaps::from_config(&cfg, false, 1 << 20);
    let mut run = PlanRun::new(&plan, caps);
    run_to_end(&mut run, &mut dev, 0);
    assert_eq!((dev.counters().flushes, dev.counters().writes), (0, 1));
}

#[test]
fn coarse_ticks_are_jiffies() {
    assert_eq!(coarse_tick(3_999_999, 250), 0);
    assert_eq!(coarse_tick(4_000_000, 250), 1);
    assert_eq!(coarse_tick(2 * SEC + 5, 0), 2, "hz 0 is taken as 1");
}
