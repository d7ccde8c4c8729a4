//! A block device: admission caps, parallel service, a service-time distribution.
//!
//! One I/O goes through two stages, both first-come first-served in simulated time:
//!
//! ```text
//!  submit ──► admission ──────────────────────► service ───────────────► done
//!             one op per 1/iops_limit,          `parallelism` slots;
//!             size/throughput_limit per op      latency ~ lognormal(median, sigma)
//!             (leaky bucket, no burst)                    + size / transfer rate
//! ```
//!
//! Admission models the provider's throttle (an EBS volume's IOPS and throughput caps, a
//! hypervisor's I/O limits); service models the medium (NVMe queues, an EBS backend, a
//! disk arm with parallelism 1). Utilization is what iostat's %util shows: the share of
//! time with at least one request outstanding.
//!
//! A rotational device (`DeviceConfig::rotational`) replaces the log-normal latency by its
//! mechanics ([`super::disk`]): seek from where the last request ended, rotation, the
//! zone's media rate; its latency draw is the controller's command overhead. That needs the
//! byte offset of each I/O: [`Device::submit_at`]. Solid-state devices ignore the offset.
//!
//! A cache flush ([`Device::flush`], what `zio_flush` sends down as a REQ_PREFLUSH bio)
//! costs `flush_latency`: a device with a volatile write cache takes a service slot for
//! that long (FIFO behind what is queued, so on a one-slot disk it waits for every
//! request before it, as a SATA FLUSH CACHE drains the queue); it passes no throttle (a
//! hypervisor's and EBS's I/O limits count reads and writes). A device with no volatile
//! cache (`flush_latency` 0: power-loss-protected flash, a RAM device, a disk with its
//! write cache off or behind a battery-backed controller) has the flush completed by the
//! block layer at once (Linux drops PREFLUSH for a queue without QUEUE_FLAG_WC). Flushes
//! are counted either way: they are what ZFS asked for. A rotational device's writes are
//! served at the platter (its mechanics), so its flush finds nothing of theirs to destage.
//!
//! A device behind a hardware RAID controller ([`Device::attach`], `dev::controller`) is
//! the host's view of a volume: its I/O and flushes go through the controller's cache,
//! which serves them, or sends them to the drive behind it (a device of its own, with this
//! device's configuration); its counters are what the host sees (iostat on the volume).
//!
//! The throttle ([`super::throttle`]) is a leaky bucket, or a token bucket with a peak rate
//! for a device with burst credits (AWS gp2, Azure Premium SSD P1-P20). A device with an
//! `io_limit` then passes a machine-wide throttle shared with other devices (an Azure VM's
//! uncached disk limit after the disk's own, so bursting does not bypass it). A device with
//! `host_cache` (Azure ReadOnly, [`super::host_cache`]) has its reads looked up in the VM's
//! host cache first: a hit is served by the host (the cache's own throttle and service
//! time), passing neither of the disk's throttles.
//!
//! Simplifications: 1. the throttles admit requests in the order they are submitted; 2. reads and writes share one cap,
//! as EBS counts them; 3. a request's completion time is fixed when it is submitted, which
//! is exact for FIFO service because submissions arrive in time order; 4. an I/O submitted
//! without an offset ([`Device::submit`]) to a rotational device lands at a random offset;
//! 5. a flush's cost does not depend on how much the cache holds; 6. an I/O submitted
//! without an offset does not use the host cache (it cannot be looked up); the core
//! refuses a host-cached disk where that happens (bcache's backing device).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;

use rand::Rng;

use std::cell::RefCell;
use std::rc::Rc;

use super::controller::Port;
use super::disk::{Disk, DiskMechanics};
use super::host_cache::{CachePort, HostCacheCounters};
use super::throttle::{CreditState, Throttle};
use crate::config::DeviceConfig;
use crate::sim::time::{Nanos, SEC};

/// Direction of an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A read.
    Read,
    /// A write.
    Write,
}

/// Counters of a device, as iostat would derive them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DeviceCounters {
    /// Completed-or-submitted read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Time with at least one request outstanding, ns.
    pub busy_ns: Nanos,
    /// Cache flushes asked for.
    pub flushes: u64,
    /// Burst credits left and time in burst (all 0 without credits).
    pub credits: CreditState,
    /// What the host cache did (all 0 without one).
    pub host_cache: HostCacheCounters,
}

/// A simulated block device. A clone serves as the device would from here (the RAID
/// controller plans its drives' destage writes on one) and shares the machine-wide
/// throttle, host cache and controller the original reaches.
#[derive(Debug, Clone)]
pub struct Device {
    name: String,
    /// The device's own throttle (its limits, burst credits).
    throttle: Throttle,
    /// The machine-wide throttle its I/O passes next (shared with other devices).
    io_limit: Option<Rc<RefCell<Throttle>>>,
    /// The VM's host cache (Azure ReadOnly).
    host_cache: Option<CachePort>,
    transfer_ns_per_byte: f64,
    read_latency: Option<LogNormal<f64>>,
    write_latency: Option<LogNormal<f64>>,
    read_median_ns: f64,
    write_median_ns: f64,
    slots: BinaryHeap<Reverse<Nanos>>,
    busy_until: Nanos,
    counters: DeviceCounters,
    rng: Pcg64Mcg,
    /// Mechanics of a rotational device.
    disk: Option<Disk>,
    capacity: u64,
    /// Completion times of the I/Os not known to be done (pruned as time advances), kept
    /// only for a device whose queue length is asked for ([`Device::track_queue_length`]).
    inflight: BinaryHeap<Reverse<Nanos>>,
    tracks_queue: bool,
    /// Byte just past the last I/O submitted (vdev_queue's vq_last_offset).
    last_offset: u64,
    /// Service time of a cache flush (0: no volatile write cache).
    flush_ns: Nanos,
    /// The RAID controller this device is a volume of ([`super::controller`]): its I/O
    /// and flushes go through the controller's cache to the drive behind it.
    port: Option<Port>,
}

impl Device {
    /// Builds the device; `seed` drives its service-time draws. A rotational device's
    /// configuration must have passed [`Device::check`] (its mechanics); an invalid one
    /// here panics.
    pub fn new(cfg: &DeviceConfig, seed: u64) -> Self {
        Self::build(cfg, seed)
    }

    /// The device's own rules (a rotating disk's mechanics, see `disk`): errors name
    /// `FIELD` as `at(FIELD)` gives it.
    pub fn check(cfg: &DeviceConfig, at: impl Fn(&str) -> String) -> crate::error::Result<()> {
        if let Some(r) = &cfg.rotational {
            DiskMechanics::new(r, cfg.capacity_bytes.unwrap_or(0), cfg.transfer_bytes_per_sec).map_err(
                |e| match e {
                    crate::error::Error::Config { field, message } => {
                        crate::error::Error::config(at(&format!("rotational.{field}")), message)
                    }
                    other => other,
                },
            )?;
        }
        Ok(())
    }

    fn build(cfg: &DeviceConfig, seed: u64) -> Self {
        let lognormal = |median: u64| {
            (cfg.latency_sigma > 0.0)
                .then(|| LogNormal::new((median.max(1) as f64).ln(), cfg.latency_sigma).ok())
                .flatten()
        };
        let parallelism = cfg.parallelism.max(1) as usize;
        let mut slots = BinaryHeap::with_capacity(parallelism);
        slots.extend(std::iter::repeat_n(Reverse(0), parallelism));
        Device {
            name: cfg.name.clone(),
            throttle: Throttle::new(
                cfg.iops_limit,
                cfg.throughput_limit_bytes_per_sec,
                cfg.iops_size_bytes,
                cfg.burst.as_ref(),
            ),
            io_limit: None,
            host_cache: None,
            transfer_ns_per_byte: SEC as f64 / cfg.transfer_bytes_per_sec,
            read_latency: lognormal(cfg.read_latency_ns),
            write_latency: lognormal(cfg.write_latency_ns),
            read_median_ns: cfg.read_latency_ns as f64,
            write_median_ns: cfg.write_latency_ns as f64,
            slots,
            busy_until: 0,
            counters: DeviceCounters::default(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            disk: cfg.rotational.as_ref().map(|r| {
                let m = DiskMechanics::new(r, cfg.capacity_bytes.unwrap_or(0), cfg.transfer_bytes_per_sec)
                    // Guaranteed by `Device::check`, which `Sim::new` runs on every device before `Device::new`.
                    .expect("rotational device checked by Device::check");
                Disk::new(m)
            }),
            capacity: cfg.capacity_bytes.unwrap_or(0),
            inflight: BinaryHeap::new(),
            tracks_queue: false,
            last_offset: 0,
            flush_ns: cfg.flush_latency_ns,
            port: None,
        }
    }

    /// Builds the device anew from `cfg` (its service times and limits), keeping what it
    /// is attached to (a controller, a machine-wide limit, a host cache): the device a
    /// run with `cfg` from the start would have, if it has served no I/O yet (a follower
    /// forked after shared phases, `run::share`).
    pub fn rebuild(&mut self, cfg: &DeviceConfig, seed: u64) {
        let mut fresh = Self::build(cfg, seed);
        fresh.io_limit = self.io_limit.take();
        fresh.host_cache = self.host_cache.take();
        fresh.port = self.port.take();
        fresh.tracks_queue = self.tracks_queue;
        *self = fresh;
    }

    /// Makes the device a volume of a RAID controller (`dev::controller::attach`): from
    /// now on its I/O goes through the controller, which serves it with its own drive.
    pub fn attach(&mut self, port: Port) {
        self.port = Some(port);
    }

    /// Sends the device's I/O through `limit` after its own throttle (a machine-wide
    /// limit several devices share).
    pub fn attach_io_limit(&mut self, limit: Rc<RefCell<Throttle>>) {
        self.io_limit = Some(limit);
    }

    /// Puts the VM's host cache in front of the device (Azure host caching ReadOnly).
    pub fn attach_host_cache(&mut self, port: CachePort) {
        self.host_cache = Some(port);
    }

    /// The host cache in front of the device, if any.
    pub fn host_cache(&self) -> Option<&CachePort> {
        self.host_cache.as_ref()
    }

    /// Whether the device has burst credits.
    pub fn has_burst_credits(&self) -> bool {
        self.throttle.has_credits()
    }

    /// The device's burst credits at `t` (all 0 without them).
    pub fn credits_at(&self, t: Nanos) -> CreditState {
        self.throttle.credits_at(t as f64)
    }

    /// The VM restarted: a restart that moved it attaches the disk anew (an Azure bucket is
    /// full again); the host cache comes back empty either way.
    pub fn restart(&mut self, vm_moved: bool) {
        if vm_moved {
            self.throttle.attach();
        }
        if let Some(p) = &self.host_cache {
            p.cache().borrow_mut().clear();
        }
    }

    /// The controller port of a volume behind a RAID controller, if any.
    pub fn port(&self) -> Option<&Port> {
        self.port.as_ref()
    }

    /// A rotating device (vdev_nonrot false), whose position matters.
    pub fn is_rotational(&self) -> bool {
        self.disk.is_some()
    }

    /// Keeps the completion times [`Device::queue_length`] needs, from now on (a mirror's
    /// children: vdev_mirror_load). Other devices do not pay for a heap per I/O.
    pub fn track_queue_length(&mut self) {
        self.tracks_queue = true;
    }

    /// I/Os submitted and not completed at `now` (no earlier than the last call's `now`),
    /// of a device that tracks them ([`Device::track_queue_length`]).
    pub fn queue_length(&mut self, now: Nanos) -> u32 {
        debug_assert!(self.tracks_queue, "queue_length of a device that does not track it");
        while self.inflight.peek().is_some_and(|&Reverse(t)| t <= now) {
            self.inflight.pop();
        }
        self.inflight.len() as u32
    }

    /// Byte just past the last I/O submitted (0 before any).
    pub fn last_offset(&self) -> u64 {
        self.last_offset
    }

    /// Device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Submits an I/O of `bytes` at `now` (calls must come in nondecreasing `now`);
    /// returns its completion time. Where it lies does not matter, or is not known: a
    /// rotational device serves it at a random offset.
    pub fn submit(&mut self, now: Nanos, op: Op, bytes: u32) -> Nanos {
        if self.host_cache.is_some() {
            // No offset to look up (simplification 6): the uncached path.
            let done = self.serve(now, op, 0, bytes);
            self.occupy(now, done);
            self.count(op, bytes);
            return done;
        }
        let offset = match self.disk {
            Some(_) => {
                let sectors = self.capacity.saturating_sub(u64::from(bytes)) >> 9;
                self.rng.random_range(0..=sectors) << 9
            }
            None => 0,
        };
        self.submit_at(now, op, offset, bytes)
    }

    /// Submits an I/O of `bytes` at byte `offset` of the device at `now` (calls must come
    /// in nondecreasing `now`); returns its completion time. The offset matters to a
    /// rotational device only.
    pub fn submit_at(&mut self, now: Nanos, op: Op, offset: u64, bytes: u32) -> Nanos {
        let hit = match (&mut self.host_cache, op) {
            (Some(c), Op::Read) => c.read(now, offset, bytes),
            (Some(c), Op::Write) => {
                c.write(offset, bytes);
                None
            }
            (None, _) => None,
        };
        let done = match (hit, &self.port) {
            (Some(done), _) => done,
            (None, Some(port)) => port.submit(now, op, offset, bytes),
            (None, None) => self.serve(now, op, offset, bytes),
        };
        self.last_offset = offset.saturating_add(u64::from(bytes));
        self.occupy(now, done);
        self.count(op, bytes);
        done
    }

    fn count(&mut self, op: Op, bytes: u32) {
        match op {
            Op::Read => {
                self.counters.reads += 1;
                self.counters.read_bytes += bytes as u64;
            }
            Op::Write => {
                self.counters.writes += 1;
                self.counters.write_bytes += bytes as u64;
            }
        }
    }

    /// The device's own service of an I/O (no controller in front): admission, a slot,
    /// the service time; returns its completion.
    fn serve(&mut self, now: Nanos, op: Op, offset: u64, bytes: u32) -> Nanos {
        let mut admit = self.throttle.admit(now as f64, bytes);
        if let Some(limit) = &self.io_limit {
            admit = limit.borrow_mut().admit(admit, bytes);
        }
        let (dist, median) = match op {
            Op::Read => (self.read_latency, self.read_median_ns),
            Op::Write => (self.write_latency, self.write_median_ns),
        };
        let latency = dist.map_or(median, |d| d.sample(&mut self.rng));
        // The earliest free slot takes the I/O (one sift of the heap, not a pop and a push).
        // Invariant: `new` makes max(parallelism, 1) slots and the heap never shrinks.
        let mut slot = self.slots.peek_mut().expect("parallelism >= 1");
        let Reverse(slot_free) = *slot;
        // Casts saturate; sums saturate too, so an absurd device (an IOPS cap of 1e-300,
        // a latency tail draw beyond u64) completes "never" instead of overflowing.
        let start = slot_free.max(admit.ceil() as Nanos);
        let done = match &mut self.disk {
            Some(disk) => disk.serve(now, start, op, offset, bytes, latency),
            None => {
                let service = latency + bytes as f64 * self.transfer_ns_per_byte;
                start.saturating_add(service.round().max(1.0) as Nanos)
            }
        };
        *slot = Reverse(done);
        done
    }

    /// A request submitted at `now` is in flight until `done`: the queue length mirrors
    /// read (when tracked), and iostat's %util (the union of [submit, done] intervals).
    fn occupy(&mut self, now: Nanos, done: Nanos) {
        if self.tracks_queue {
            while self.inflight.peek().is_some_and(|&Reverse(t)| t <= now) {
                self.inflight.pop();
            }
            self.inflight.push(Reverse(done));
        }
        if now >= self.busy_until {
            self.counters.busy_ns = self.counters.busy_ns.saturating_add(done - now);
            self.busy_until = done;
        } else if done > self.busy_until {
            self.counters.busy_ns = self.counters.busy_ns.saturating_add(done - self.busy_until);
            self.busy_until = done;
        }
    }

    /// A cache flush at `now` (calls in nondecreasing `now`, with the submissions); returns
    /// its completion time (see the module docs).
    pub fn flush(&mut self, now: Nanos) -> Nanos {
        self.counters.flushes += 1;
        if let Some(port) = &self.port {
            return port.flush(now);
        }
        if self.flush_ns == 0 {
            return now;
        }
        let mut slot = self.slots.peek_mut().expect("parallelism >= 1");
        let Reverse(slot_free) = *slot;
        let done = slot_free.max(now).saturating_add(self.flush_ns);
        *slot = Reverse(done);
        drop(slot);
        self.occupy(now, done);
        done
    }

    /// What the host cache did for this device (all 0 without one).
    pub fn host_cache_counters(&self) -> HostCacheCounters {
        self.host_cache.as_ref().map(|c| c.counters()).unwrap_or_default()
    }

    /// Counters so far (busy time counts intervals up to their planned completion).
    pub fn counters(&self) -> DeviceCounters {
        self.counters_at(self.busy_until)
    }

    /// Makes this device serve as `src` would from here (a clone, reusing this one's
    /// memory: the RAID controller's plan of a drive's destage writes is made on one).
    pub fn clone_state_from(&mut self, src: &Device) {
        // Every field, so that a new one cannot be forgotten.
        let Device {
            name,
            throttle,
            io_limit,
            host_cache,
            transfer_ns_per_byte,
            read_latency,
            write_latency,
            read_median_ns,
            write_median_ns,
            slots,
            busy_until,
            counters,
            rng,
            disk,
            capacity,
            inflight,
            tracks_queue,
            last_offset,
            flush_ns,
            port,
        } = self;
        name.clone_from(&src.name);
        throttle.clone_from(&src.throttle);
        io_limit.clone_from(&src.io_limit);
        host_cache.clone_from(&src.host_cache);
        *transfer_ns_per_byte = src.transfer_ns_per_byte;
        *read_latency = src.read_latency;
        *write_latency = src.write_latency;
        *read_median_ns = src.read_median_ns;
        *write_median_ns = src.write_median_ns;
        slots.clone_from(&src.slots);
        *busy_until = src.busy_until;
        *counters = src.counters;
        rng.clone_from(&src.rng);
        disk.clone_from(&src.disk);
        *capacity = src.capacity;
        inflight.clone_from(&src.inflight);
        *tracks_queue = src.tracks_queue;
        *last_offset = src.last_offset;
        *flush_ns = src.flush_ns;
        port.clone_from(&src.port);
    }

    /// Counters as of time `t`, no earlier than the last submission: operations count at
    /// submission, busy time only up to `t` (the planned busy time beyond `t` is one
    /// stretch, `[t, busy_until]`, since every interval began before `t`). A background
    /// thread (the L2ARC feed, the txg sync) may have submitted after `t` (the report rows
    /// up to its time come after it): its interval then counts from `t`, and the busy time
    /// is low, at worst 0, never below.
    pub fn counters_at(&self, t: Nanos) -> DeviceCounters {
        let mut c = self.counters;
        c.busy_ns = c.busy_ns.saturating_sub(self.busy_until.saturating_sub(t));
        if self.throttle.has_credits() {
            c.credits = self.throttle.credits_at(t as f64);
        }
        if let Some(p) = &self.host_cache {
            c.host_cache = p.counters();
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::{MS, US};

    fn cfg(iops: Option<f64>, parallelism: u32) -> DeviceConfig {
        DeviceConfig {
            name: "d".into(),
            kind: "test".into(),
            iops_limit: iops,
            throughput_limit_bytes_per_sec: None,
            read_latency_ns: 500 * US,
            write_latency_ns: 500 * US,
            latency_sigma: 0.0,
            transfer_bytes_per_sec: 1e12,
            parallelism,
            capacity_bytes: None,
            ephemeral: false,
            rotational: None,
            flush_latency_ns: 0,
            queue_rotational: None,
            iops_size_bytes: None,
            burst: None,
            io_limit: None,
            host_cache: false,
        }
    }

    /// Saturating a 3000-IOPS device for one second completes at most 3000 (+1) ops.
    #[test]
    fn iops_cap_bounds_completions() {
        let mut d = Device::new(&cfg(Some(3000.0), 64), 1);
        let mut done_in_first_second = 0;
        for _ in 0..10_000 {
            if d.submit(0, Op::Read, 16384) <= SEC {
                done_in_first_second += 1;
            }
        }
        assert!(done_in_first_second <= 3001, "{done_in_first_second}");
        assert!(done_in_first_second >= 2990, "{done_in_first_second}");
    }

    /// With one slot, requests are served one after another.
    #[test]
    fn single_slot_serializes() {
        let mut d = Device::new(&cfg(None, 1), 1);
        assert_eq!(d.submit(0, Op::Read, 0), 500 * US);
        assert_eq!(d.submit(0, Op::Read, 0), 1000 * US);
        assert_eq!(d.submit(2 * MS, Op::Read, 0), 2 * MS + 500 * US);
    }

    /// Throughput cap: 1 MB/s admits 64 KiB ops at most every 65.536 ms.
    #[test]
    fn throughput_cap_spaces_large_ops() {
        let mut c = cfg(None, 8);
        c.throughput_limit_bytes_per_sec = Some(1e6);
        let mut d = Device::new(&c, 1);
        let a = d.submit(0, Op::Read, 65536);
        let b = d.submit(0, Op::Read, 65536);
        assert_eq!(b - a, 65_536_000);
    }

    /// Utilization counts time with anything outstanding, once.
    #[test]
    fn busy_time_is_a_union() {
        let mut d = Device::new(&cfg(None, 4), 1);
        d.submit(0, Op::Read, 0);
        d.submit(100 * US, Op::Read, 0); // overlaps: extends to 600 us
        d.submit(10 * MS, Op::Write, 0);
        assert_eq!(d.counters().busy_ns, 600 * US + 500 * US);
        assert_eq!(d.counters().reads, 2);
        assert_eq!(d.counters().writes, 1);
    }

    /// Busy time as of a time inside an I/O stops at that time.
    #[test]
    fn busy_time_at_a_time_counts_only_up_to_it() {
        let mut d = Device::new(&cfg(None, 4), 1);
        d.submit(0, Op::Read, 0);
        d.submit(100 * US, Op::Read, 0); // busy until 600 us
        assert_eq!(d.counters_at(250 * US).busy_ns, 250 * US);
        assert_eq!(d.counters_at(600 * US).busy_ns, 600 * US);
        assert_eq!(d.counters_at(SEC).busy_ns, 600 * US);
    }

    /// A throttle so slow that the next admission lies beyond u64 nanoseconds does not
    /// overflow: the I/O completes at the end of time.
    #[test]
    fn absurd_limits_saturate_instead_of_overflowing() {
        let mut c = cfg(Some(1e-300), 1);
        c.transfer_bytes_per_sec = 1e-300;
        let mut d = Device::new(&c, 1);
        assert!(d.submit(0, Op::Read, 16384) > 1_000 * SEC);
        assert_eq!(d.submit(5, Op::Read, 16384), Nanos::MAX);
        assert!(d.counters_at(10).busy_ns <= 10);
    }

    /// A flush takes a service slot for flush_latency behind what is queued; without a
    /// volatile cache it completes at once. Both count, neither passes the throttle.
    #[test]
    fn a_flush_waits_behind_queued_requests_and_is_free_without_a_write_cache() {
        let mut c = cfg(Some(1000.0), 1);
        c.flush_latency_ns = 2 * MS;
        let mut d = Device::new(&c, 1);
        let w = d.submit(0, Op::Write, 0);
        assert_eq!(w, 500 * US);
        assert_eq!(d.flush(100 * US), 500 * US + 2 * MS, "one slot: behind the write");
        // The next write is admitted 1 ms after the first (the flush took no admission).
        assert_eq!(d.submit(0, Op::Write, 0), 500 * US + 2 * MS + 500 * US);
        assert_eq!(d.counters().flushes, 1);
        assert_eq!(d.counters().writes, 2);
        let mut d = Device::new(&cfg(None, 4), 1);
        assert_eq!(d.flush(7 * MS), 7 * MS);
        assert_eq!((d.counters().flushes, d.counters().busy_ns), (1, 0));
    }

    /// A P10 with burst credits (3500 IOPS) behind a VM limit of 3200 IOPS runs at 3200:
    /// bursting does not bypass the VM's limit; without the VM limit it runs at 3500.
    #[test]
    fn bursting_does_not_bypass_the_vm_limit() {
        let mut c = cfg(Some(500.0), 64);
        c.burst = Some(crate::config::BurstConfig {
            iops_limit: Some(3500.0),
            io_credits: Some(3000.0 * 1800.0),
            throughput_limit_bytes_per_sec: None,
            byte_credits: None,
            full_at_attach: true,
        });
        for (vm, rate) in [(Some(3200.0), 3200.0), (None, 3500.0)] {
            let mut d = Device::new(&c, 1);
            if let Some(iops) = vm {
                d.attach_io_limit(Rc::new(RefCell::new(Throttle::new(Some(iops), None, None, None))));
            }
            let n = 35_000u64;
            let last = (0..n).map(|_| d.submit(0, Op::Read, 4096)).max().unwrap();
            let got = n as f64 / ((last - 500 * US) as f64 / SEC as f64);
            assert!((got / rate - 1.0).abs() < 0.001, "{got} IOPS, expected {rate}");
            assert!(d.counters().credits.io_credits < 3000.0 * 1800.0, "credits spent");
        }
    }

    /// With host caching ReadOnly, a read the cache holds is served by the host at once:
    /// it takes nothing of the disk's throttle or the VM's uncached one (the next miss is
    /// admitted as if the hits had not happened); a write passes both and fills the cache.
    #[test]
    fn a_host_cache_hit_costs_no_uncached_iops_and_a_write_passes_through() {
        use super::super::host_cache::{CachePort, HostCache};
        let hc = crate::config::HostCacheConfig {
            cache_bytes: 1 << 30,
            io_limit: None,
            read_latency_ns: 100 * US,
            latency_sigma: 0.0,
            transfer_bytes_per_sec: 1e15,
            parallelism: 4096,
        };
        let cache = Rc::new(RefCell::new(HostCache::new(&hc, 1)));
        let vm = Rc::new(RefCell::new(Throttle::new(Some(100.0), None, None, None)));
        let mut c = cfg(Some(1000.0), 64);
        c.transfer_bytes_per_sec = 1e15;
        let mut d = Device::new(&c, 1);
        d.attach_io_limit(Rc::clone(&vm));
        d.attach_host_cache(CachePort::new(Rc::clone(&cache), 0));
        // A miss: admitted at once, the disk's 500 us.
        assert_eq!(d.submit_at(0, Op::Read, 0, 16384), 500 * US);
        // 1000 hits at 1 ms: 100 us each, no throttle (100 IOPS would take 10 s).
        for k in 0..1000u64 {
            assert_eq!(d.submit_at(MS + k, Op::Read, 0, 16384), MS + k + 100 * US);
        }
        assert_eq!(d.host_cache_counters().read_hits, 1000);
        assert_eq!(d.counters().reads, 1001, "the guest counts every read");
        // The next miss waits only for the first miss's 10 ms at the VM's 100 IOPS.
        assert_eq!(d.submit_at(2 * MS, Op::Read, 1 << 20, 4096), 10 * MS + 500 * US);
        // A write goes to the disk (after the VM's next 10 ms), then reads of it hit.
        assert_eq!(d.submit_at(3 * MS, Op::Write, 2 << 20, 4096), 20 * MS + 500 * US);
        assert_eq!(d.submit_at(21 * MS, Op::Read, 2 << 20, 4096), 21 * MS + 100 * US);
        assert_eq!(d.host_cache_counters().read_misses, 2);
        // A restart empties the cache.
        d.restart(false);
        assert_eq!(d.submit_at(40 * MS, Op::Read, 0, 16384), 40 * MS + 500 * US);
    }

    #[test]
    fn lognormal_latency_has_the_configured_median() {
        let mut c = cfg(None, 1_000_000);
        c.latency_sigma = 0.5;
        let mut d = Device::new(&c, 7);
        let mut v: Vec<u64> = (0..20_001).map(|_| d.submit(0, Op::Read, 0)).collect();
        v.sort_unstable();
        let median = v[v.len() / 2] as f64;
        assert!((median / (500.0 * US as f64) - 1.0).abs() < 0.03, "{median}");
    }
}

#[cfg(test)]
mod rotational_tests {
    use super::*;
    use crate::dev::disk::{sas_7200, DiskMechanics};
    use crate::sim::time::US;

    const CAP: u64 = 1_000_204_886_016;

    fn sas() -> Device {
        Device::new(
            &DeviceConfig {
                name: "sas".into(),
                kind: "test".into(),
                iops_limit: None,
                throughput_limit_bytes_per_sec: None,
                read_latency_ns: 200 * US,
                write_latency_ns: 200 * US,
                latency_sigma: 0.0,
                transfer_bytes_per_sec: 600e6,
                parallelism: 1,
                capacity_bytes: Some(CAP),
                ephemeral: false,
                rotational: Some(sas_7200()),
                flush_latency_ns: 0,
                queue_rotational: None,
                iops_size_bytes: None,
                burst: None,
                io_limit: None,
                host_cache: false,
            },
            1,
        )
    }

    /// Writes `n` contiguous 1 MiB writes from `base` the way the vdev queue issues them:
    /// `depth` at the drive, the next one sent when one completes. Returns the last completion.
    fn queued_writes(d: &mut Device, base: u64, n: u64, depth: usize) -> Nanos {
        let mut inflight: std::collections::VecDeque<Nanos> = Default::default();
        let (mut now, mut last) = (0, 0);
        for k in 0..n {
            if inflight.len() == depth {
                now = inflight.pop_front().unwrap();
            }
            last = d.submit_at(now, Op::Write, base + (k << 20), 1 << 20);
            inflight.push_back(last);
        }
        last
    }

    /// N back-to-back contiguous 1 MiB writes on an idle disk take N MiB at the media rate
    /// plus one positioning (overhead, seek, settle, rotation: at most 0.2 + 17.35 + 1 +
    /// 8.33 ms), whether 2 or 10 are queued (zfs_vdev_async_write_{min,max}_active).
    #[test]
    fn queued_sequential_writes_stream_at_the_media_rate() {
        let m = DiskMechanics::new(&sas_7200(), CAP, 600e6).unwrap();
        let n = 256u64;
        for (base, depth) in [(0, 2), (0, 10), (CAP / 2, 2), (CAP - (n << 20) - (1 << 20), 10)] {
            let mut d = sas();
            let done = queued_writes(&mut d, base, n, depth) as f64;
            let media: f64 = (0..n).map(|k| m.media_ns(base + (k << 20), 1 << 20)).sum();
            let positioning = 200e3 + 17_350e3 + 1000e3 + m.revolution_ns();
            assert!(done >= media, "faster than the media at {base}: {done} < {media}");
            assert!(done <= media + positioning, "at {base}, depth {depth}: {done} vs media {media}");
            let mbs = (n << 20) as f64 / done * 1e3;
            eprintln!("{n} x 1 MiB at byte {base}, {depth} queued: {mbs:.1} MB/s");
        }
    }

    /// A sequential write sent only after the previous one completed finds its sector gone
    /// past under the head (the command overhead alone is longer than the gap): it waits
    /// almost a revolution. Random writes pay seek, settle and rotation.
    #[test]
    fn unqueued_and_random_writes_pay_positioning() {
        let m = DiskMechanics::new(&sas_7200(), CAP, 600e6).unwrap();
        let mut d = sas();
        let mut t = d.submit_at(0, Op::Write, 0, 1 << 20);
        let first = t;
        let n = 64u64;
        for k in 1..n {
            t = d.submit_at(t, Op::Write, k << 20, 1 << 20);
        }
        let media: f64 = (1..n).map(|k| m.media_ns(k << 20, 1 << 20)).sum();
        let per = ((t - first) as f64 - media) / (n - 1) as f64;
        assert!((per / m.revolution_ns() - 1.0).abs() < 0.05, "{per} ns lost per write");

        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        let mut d = sas();
        let (mut t, k): (Nanos, u64) = (0, 4000);
        for _ in 0..k {
            let off = rng.random_range(0..CAP / 4096) * 4096;
            // Queued two deep: FIFO, so queueing does not hide positioning.
            t = d.submit_at(t.saturating_sub(1), Op::Write, off, 4096);
        }
        let per = t as f64 / k as f64 / 1e6;
        // 0.2 overhead + a seek a little under 8.5 + 1 settle + 4.17 rotation.
        assert!((11.5..=14.5).contains(&per), "{per} ms per random write");
    }
}
