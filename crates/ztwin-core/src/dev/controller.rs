//! A hardware RAID controller with a battery-backed write-back cache, each drive behind it
//! exposed as its own volume.
//!
//! Mechanism. The host sees one block device per volume ([`Device`] with a [`Port`]); the
//! drive behind it is a device of its own (its throttle, queue and mechanics), which only
//! the controller reaches:
//!
//! ```text
//!  write ─► room in the cache? ─yes─► in the cache: done after cache_latency + size / rate
//!                │ no                      │ (the drive gets it later: destaging)
//!                └─► wait until destaging frees room (write-through-like latency)
//!  read ──► every byte dirty in the cache? ─yes─► served from the cache
//!                │ no ─► the drive's read (behind the destage writes queued there, ahead
//!                      of those planned for waiting writes), plus cache_latency
//!  flush ─► completed at once (nothing volatile: the cache has its battery, the drives'
//!           own caches are off)
//! ```
//!
//! Destaging runs in the background, per drive: whenever a drive has dirty data and fewer
//! than `destage_queue_depth` destage writes queued, the controller takes the next dirty
//! range in ascending offset order from where its last destage write ended, wrapping to
//! the lowest (a one-way elevator, C-SCAN), adjacent dirty data already merged into one
//! range, at most `destage_max_bytes` per write, and writes it at the drive's own speed
//! (a rotational drive's seek, rotation and media rate: `dev::disk`). The bytes are freed
//! when the drive completes. Rewriting data that is dirty and not yet being destaged takes
//! no more room (the cache line is overwritten). With two writes queued at the drive, a
//! run of contiguous dirty data streams at the media rate (`dev::disk`, rule 1).
//!
//! A write that finds the cache full waits in the controller for destaging to free room,
//! behind the writes already waiting (first come, first served): it completes when the
//! destage writes to come have freed its bytes. Those destage writes are planned (the
//! next dirty ranges in elevator order, each started when a write of its drive's queue
//! completes, served by the drive as it will be then) but sent to the drive only when
//! their time comes; a read that reaches the drive before them (a request the host sent,
//! which the controller passes on) is queued behind the destage writes already at the
//! drive and ahead of the planned ones, which are planned again after it. So a read
//! waits for at most `destage_queue_depth` destage writes, not for the room of every
//! waiting write.
//!
//! Write Through (`write_back` false): every write goes to the drive and completes when
//! the drive completes it; nothing is dirty.
//!
//! Sources (vendor documentation; the firmware is not public):
//! - MegaRAID Storage Manager user guide (Broadcom, MSM 17.05, "Selecting the Virtual
//!   Drive Settings", "Controller Settings"): write policy Write Back is the default; with
//!   "Write Back with BBU" the firmware switches the virtual drive to Write Through while
//!   the battery is missing or bad, "Always Write Back" keeps Write Back regardless; read
//!   policy "No Read Ahead" (NORA, "Normal") is the default; default strip size 64 KB.
//! - MegaRAID SAS Software User Guide (WebBIOS, the Lenovo ThinkServer edition): Write Back
//!   signals completion "when the controller cache has received all of the data", Write
//!   Through "when the drive subsystem has received all of the data"; Adaptive read-ahead
//!   starts reading ahead after two sequential accesses.
//! - Dell OpenManage Server Administrator 8.4 User's Guide ("Disk Cache Policy"): the
//!   default disk cache policy of virtual disks on SAS drives is Disabled (on SATA drives
//!   Enabled); Write Back completes a write "as soon as the data is in the controller
//!   cache".
//! - Linux drivers/scsi/megaraid/megaraid_sas_base.c, `megasas_queue_command`: a
//!   SYNCHRONIZE CACHE to a logical drive is completed by the driver itself ("FW takes
//!   care of flush cache on its own"; newer drivers send it only to firmware that asks for
//!   it, `megasas_sync_cache_behavior`). So a cache flush costs nothing behind the
//!   controller.
//! - HP ProLiant G7 technology brief: the Smart Array P410i's cache upgrades are 512 MB
//!   BBWC or 1 GB FBWC. The 1 GiB default of the presets is the size of that era's cards
//!   (Dell PERC H730 and LSI MegaRAID 9361-8i: 1 GB, recalled, not re-checked here).
//!
//! Assumptions (what firmware does is not published; each is a parameter where it can
//! be): destaging starts as soon as there is dirty data (no flush interval), in the order
//! above; `destage_max_bytes` 1 MiB; two destage writes queued per drive; a command costs
//! the controller 40 us (`cache_latency_ns`), its data moves at 4 GB/s
//! (`cache_bytes_per_sec`: PCIe 3.0 x8 carries about 7.9 GB/s).
//!
//! Simplifications: 1. the cache holds dirty write data only: no read cache or read-ahead
//! (the default NORA policy); a read that is only partly dirty in the cache goes to the
//! drive whole; 2. destage writes, once queued at a drive, are served before a read that
//! arrives after them (the drive's queue is FIFO); 3. a waiting write is told when it
//! completes as it arrives, from the destaging planned then: a read (or a write through)
//! that goes to a drive ahead of planned destage writes delays them, so the room comes
//! later than the waiting writes were told and the cache holds more than its size for a
//! while (counted: `overfull_peak_bytes`; one destage write per such read); the data of a
//! waiting write is in the cache from its arrival (destaging may take it before the write
//! completes), and a write over data planned for destaging takes new room as one over
//! data being destaged does; 4. a write larger than the
//! whole cache goes through to the drive; 5. the controller's processor is no bottleneck
//! (no command rate limit); battery learn cycles (Write Through for their duration on
//! some cards) are not modelled; 6. a volume spans one drive (no RAID level of the
//! controller's own).

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use super::device::{Device, Op};
use crate::config::{ControllerConfig, DeviceConfig};
use crate::error::{Error, Result};
use crate::sim::time::{Nanos, SEC};

/// The controller's parameters, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerParams {
    /// Cache for dirty data, bytes.
    pub cache_bytes: u64,
    /// Write Back (true) or Write Through.
    pub write_back: bool,
    /// Controller time per command, ns.
    pub latency_ns: Nanos,
    /// Host-cache transfer, ns per byte.
    pub ns_per_byte: f64,
    /// Largest destage write, bytes.
    pub destage_max: u64,
    /// Destage writes queued per drive.
    pub depth: usize,
}

impl ControllerParams {
    /// The parameters of `cfg`, checked; errors name `controllers[i].FIELD` as `at` gives.
    pub fn new(cfg: &ControllerConfig, at: impl Fn(&str) -> String) -> Result<ControllerParams> {
        let ensure =
            |ok: bool, f: &str, what: &str| if ok { Ok(()) } else { Err(Error::config(at(f), what)) };
        ensure(
            (1 << 20..=1 << 40).contains(&cfg.cache_bytes),
            "cache_bytes",
            "must be from 1 MiB to 1 TiB (the controller's cache memory)",
        )?;
        ensure(cfg.cache_latency_ns <= SEC, "cache_latency_ns", "must be at most 1 s")?;
        ensure(
            cfg.cache_bytes_per_sec.is_finite() && cfg.cache_bytes_per_sec >= 1e6,
            "cache_bytes_per_sec",
            "must be at least 1 MB/s",
        )?;
        ensure(
            (4096..=16 << 20).contains(&cfg.destage_max_bytes),
            "destage_max_bytes",
            "must be from 4 KiB to 16 MiB",
        )?;
        ensure(
            (1..=256).contains(&cfg.destage_queue_depth),
            "destage_queue_depth",
            "must be 1 to 256 (writes queued at a drive)",
        )?;
        Ok(ControllerParams {
            cache_bytes: cfg.cache_bytes,
            write_back: cfg.write_back,
            latency_ns: cfg.cache_latency_ns,
            ns_per_byte: SEC as f64 / cfg.cache_bytes_per_sec,
            destage_max: cfg.destage_max_bytes,
            depth: cfg.destage_queue_depth as usize,
        })
    }
}

/// What the controller did, summed over its volumes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ControllerCounters {
    /// Writes taken into the cache at once.
    pub write_hits: u64,
    /// Writes that waited for destaging to make room.
    pub write_waits: u64,
    /// Time those writes waited, ns.
    pub write_wait_ns: u64,
    /// Writes sent to the drive (Write Through, or larger than the cache).
    pub write_through: u64,
    /// Bytes rewritten while still dirty (no new room taken).
    pub absorbed_bytes: u64,
    /// Reads served from dirty data in the cache.
    pub read_hits: u64,
    /// Reads sent to the drive.
    pub read_misses: u64,
    /// Destage writes issued to the drives.
    pub destage_writes: u64,
    /// Bytes destaged.
    pub destage_bytes: u64,
    /// Cache flushes completed (at once).
    pub flushes: u64,
    /// Reads sent to a drive ahead of the destage writes planned there for writes
    /// waiting for room (which then start later than planned).
    pub reads_ahead_of_destage: u64,
    /// Most bytes the cache held beyond its size: a read that went ahead of the planned
    /// destaging made room come later than the waiting writes were told (see the module
    /// docs, simplification 3).
    pub overfull_peak_bytes: u64,
}

/// A destage write at a drive: bytes [start, end), done at `done`; `counted` once the
/// room it frees is promised to a waiting write ([`Controller::room_at`]).
#[derive(Debug, Clone, Copy)]
struct Destage {
    done: Nanos,
    start: u64,
    end: u64,
    counted: bool,
}

/// A destage write the controller will start at `at` (when a write of the drive's queue
/// completes), planned for writes waiting for room, with its completion on the drive as
/// the drive will be then.
#[derive(Debug, Clone, Copy)]
struct Planned {
    at: Nanos,
    d: Destage,
}

/// One volume: its drive, its dirty data and the destage writes at the drive.
#[derive(Debug)]
struct Volume {
    drive: Device,
    /// Dirty ranges not being destaged, start -> end: disjoint and not adjacent.
    dirty: BTreeMap<u64, u64>,
    /// Destage writes queued at the drive.
    inflight: Vec<Destage>,
    /// Where the last destage write ended (the elevator's position).
    cursor: u64,
    /// Destage writes planned past the controller's clock, in the order they will start;
    /// their ranges are out of `dirty`, their bytes still held.
    plan: VecDeque<Planned>,
    /// How many of `plan`'s first writes are counted.
    plan_counted: usize,
    /// The drive as it will be after the planned writes (while `plan` is not empty).
    shadow: Device,
    /// The completion times in the planned queue whose next write is not planned yet.
    slots: Vec<Nanos>,
}

impl Volume {
    /// The completion of the next write of this volume (queued or planned) whose room is
    /// not promised yet.
    fn next_uncounted(&self) -> Option<Nanos> {
        let queued = self.inflight.iter().filter(|d| !d.counted).map(|d| d.done).min();
        queued.or_else(|| self.plan.get(self.plan_counted).map(|p| p.d.done))
    }
}

/// The next dirty range to destage after `cursor` (the elevator of the module docs),
/// at most `max` bytes, taken out of `dirty`.
fn take_next(dirty: &mut BTreeMap<u64, u64>, cursor: u64, max: u64) -> Option<(u64, u64)> {
    let (&s, &e) = dirty.range(cursor..).next().or_else(|| dirty.iter().next())?;
    dirty.remove(&s);
    let end = e.min(s.saturating_add(max));
    if end < e {
        dirty.insert(end, e);
    }
    Some((s, end))
}

/// A RAID controller: its cache and the drives of its volumes.
#[derive(Debug)]
pub struct Controller {
    name: String,
    p: ControllerParams,
    /// Bytes of the cache holding dirty data (dirty ranges plus destage writes queued and
    /// planned), with those of the writes promised room at a later time (`promised`).
    used: u64,
    /// Most bytes ever held.
    peak: u64,
    volumes: Vec<Volume>,
    /// The earliest destage completion in flight on any volume.
    earliest: Option<Nanos>,
    counters: ControllerCounters,
    /// The latest time a call came at.
    clock: Nanos,
    /// Writes waiting for room: (when they get it, the bytes they add), in that order.
    promised: VecDeque<(Nanos, u64)>,
    /// Their bytes.
    promised_bytes: u64,
    /// Bytes of the counted destage writes not yet done: the room promised.
    counted_bytes: u64,
    /// The latest completion counted.
    counted_until: Nanos,
}

/// Adds [s, e) to `map`, merging what it overlaps or touches; returns the bytes it added.
fn insert(map: &mut BTreeMap<u64, u64>, s: u64, e: u64) -> u64 {
    let (mut lo, mut hi, mut covered) = (s, e, 0);
    // The ranges it overlaps or touches (disjoint, not touching one another), from the
    // last one starting at or before e down; one that only touches covers nothing.
    while let Some((a, b)) = map.range(..=e).next_back().map(|(&a, &b)| (a, b)).filter(|&(_, b)| b >= s) {
        map.remove(&a);
        covered += b.min(e) - a.max(s);
        lo = lo.min(a);
        hi = hi.max(b);
    }
    map.insert(lo, hi);
    (e - s) - covered
}

impl Controller {
    /// A controller named `name` with `drives` as its volumes, in order.
    pub fn new(name: &str, p: ControllerParams, drives: Vec<Device>) -> Controller {
        let volumes = drives
            .into_iter()
            .map(|drive| Volume {
                dirty: BTreeMap::new(),
                inflight: Vec::new(),
                cursor: 0,
                plan: VecDeque::new(),
                plan_counted: 0,
                shadow: drive.clone(),
                drive,
                slots: Vec::new(),
            })
            .collect();
        Controller {
            name: name.into(),
            p,
            used: 0,
            peak: 0,
            volumes,
            earliest: None,
            counters: ControllerCounters::default(),
            clock: 0,
            promised: VecDeque::new(),
            promised_bytes: 0,
            counted_bytes: 0,
            counted_until: 0,
        }
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of the cache holding dirty data now (as of the last call), with those of the
    /// writes waiting for room.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Bytes of the writes waiting for room (as of the last call).
    pub fn promised(&self) -> u64 {
        self.promised_bytes
    }

    /// Bytes the cache holds for writes that have their room (as of the last call).
    pub fn held(&self) -> u64 {
        self.used.saturating_sub(self.promised_bytes)
    }

    /// Most bytes of the cache ever holding dirty data.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// The parameters.
    pub fn params(&self) -> &ControllerParams {
        &self.p
    }

    /// What the controller did so far.
    pub fn counters(&self) -> ControllerCounters {
        self.counters
    }

    /// The drive of volume `v` (its counters are what the drive itself served).
    pub fn drive(&self, v: usize) -> &Device {
        &self.volumes[v].drive
    }

    /// Dirty bytes of volume `v` not yet being destaged.
    pub fn dirty_bytes(&self, v: usize) -> u64 {
        self.volumes[v].dirty.iter().map(|(a, b)| b - a).sum()
    }

    fn host_ns(&self, bytes: u32) -> Nanos {
        self.p.latency_ns.saturating_add((f64::from(bytes) * self.p.ns_per_byte).round() as Nanos)
    }

    /// Completes every destage write done by `limit`, in time order, each freeing its bytes
    /// and starting the drive's next destage write at its completion, and gives room to
    /// the waiting writes promised it by then.
    pub fn advance(&mut self, limit: Nanos) {
        self.clock = self.clock.max(limit);
        if self.earliest.is_some_and(|t| t <= limit) {
            loop {
                let mut best: Option<(Nanos, usize, usize)> = None;
                for (vi, v) in self.volumes.iter().enumerate() {
                    for (k, d) in v.inflight.iter().enumerate() {
                        if d.done <= limit && best.is_none_or(|(t, _, _)| d.done < t) {
                            best = Some((d.done, vi, k));
                        }
                    }
                }
                let Some((t, vi, k)) = best else { break };
                // Those promised room before t have it (all completions before t are done).
                self.admit_promised(t.saturating_sub(1));
                let d = self.volumes[vi].inflight.swap_remove(k);
                self.used -= d.end - d.start;
                if d.counted {
                    self.counted_bytes -= d.end - d.start;
                }
                self.fill(vi, t);
            }
            self.earliest = self.volumes.iter().flat_map(|v| v.inflight.iter().map(|d| d.done)).min();
        }
        self.admit_promised(limit);
    }

    /// The waiting writes promised room by `t` have it: the peak counts the cache's
    /// bytes then, and what it holds beyond its size (`overfull_peak_bytes`).
    fn admit_promised(&mut self, t: Nanos) {
        while let Some(&(_, bytes)) = self.promised.front().filter(|(at, _)| *at <= t) {
            self.promised.pop_front();
            self.promised_bytes -= bytes;
            // Saturating: the data of a write still waiting may be destaged already.
            let held = self.held();
            self.peak = self.peak.max(held);
            let over = held.saturating_sub(self.p.cache_bytes);
            self.counters.overfull_peak_bytes = self.counters.overfull_peak_bytes.max(over);
        }
    }

    /// Starts destage writes on volume `v` at `now` while it has dirty data and room in
    /// its queue at the drive (the elevator order of the module docs); the writes planned
    /// to start at `now` start.
    fn fill(&mut self, v: usize, now: Nanos) {
        let max = self.p.destage_max;
        let vol = &mut self.volumes[v];
        while vol.inflight.len() < self.p.depth {
            let next = match vol.plan.front() {
                // The queue's next write is planned for later (a completion to come).
                Some(p) if p.at > now => return,
                Some(_) => vol.plan.pop_front().map(|p| {
                    if p.d.counted {
                        vol.plan_counted -= 1;
                    }
                    debug_assert_eq!(p.at, now, "a planned write starts at its completion");
                    (p.d.start, p.d.end, p.d.counted, Some(p.d.done))
                }),
                None => take_next(&mut vol.dirty, vol.cursor, max).map(|(s, e)| (s, e, false, None)),
            };
            let Some((s, end, counted, planned)) = next else { return };
            let bytes = (end - s) as u32;
            let done = vol.drive.submit_at(now, Op::Write, s, bytes);
            debug_assert!(planned.is_none_or(|p| p == done), "the drive serves it as planned");
            vol.inflight.push(Destage { done, start: s, end, counted });
            self.earliest = Some(self.earliest.map_or(done, |t| t.min(done)));
            vol.cursor = end;
            self.counters.destage_writes += 1;
            self.counters.destage_bytes += end - s;
        }
    }

    /// Plans volume `v`'s next destage write past the clock: the next dirty range, started
    /// when the earliest write of its queue (as planned) completes, served by the drive
    /// as it will be then (`shadow`). Nothing when it has no dirty data.
    fn plan_one(&mut self, v: usize) {
        let (depth, max, clock) = (self.p.depth, self.p.destage_max, self.clock);
        if self.volumes[v].plan.is_empty() {
            if self.volumes[v].inflight.len() < depth {
                self.fill(v, clock);
            }
            let vol = &mut self.volumes[v];
            if vol.inflight.len() < depth || vol.inflight.iter().any(|d| !d.counted) {
                // No dirty data left, or a queued write to count first.
                return;
            }
            vol.slots.clear();
            vol.slots.extend(vol.inflight.iter().map(|d| d.done));
            vol.shadow.clone_state_from(&vol.drive);
        }
        let vol = &mut self.volumes[v];
        // The queue's earliest completion (as planned) starts it.
        let Some((k, &at)) = vol.slots.iter().enumerate().min_by_key(|&(_, t)| *t) else { return };
        let cursor = vol.plan.back().map_or(vol.cursor, |p| p.d.end);
        let Some((s, e)) = take_next(&mut vol.dirty, cursor, max) else { return };
        let done = vol.shadow.submit_at(at, Op::Write, s, (e - s) as u32);
        vol.slots[k] = done;
        vol.plan.push_back(Planned { at, d: Destage { done, start: s, end: e, counted: false } });
    }

    /// Drops volume `v`'s planned destage writes (a request reaches its drive before they
    /// start): their ranges are dirty again and the room they counted is no longer counted.
    fn drop_plan(&mut self, v: usize) {
        let vol = &mut self.volumes[v];
        if vol.plan.is_empty() {
            return;
        }
        for p in vol.plan.drain(..) {
            let len = p.d.end - p.d.start;
            // Data written over it since it was planned is one copy again (the rewrite
            // absorbed after all).
            let merged = len - insert(&mut vol.dirty, p.d.start, p.d.end);
            self.used -= merged;
            self.counters.absorbed_bytes += merged;
            if p.d.counted {
                self.counted_bytes -= len;
            }
        }
        vol.plan_counted = 0;
    }

    /// When the room for `excess` more bytes than the cache holds comes: the waiting
    /// writes before take the first completions (their room is counted), this one the
    /// next, in time order across the volumes, planning destage writes where a volume's
    /// queue runs out.
    fn room_at(&mut self, excess: u64, now: Nanos) -> Nanos {
        while self.counted_bytes < excess {
            let mut best: Option<(Nanos, usize)> = None;
            for v in 0..self.volumes.len() {
                if self.volumes[v].next_uncounted().is_none() {
                    self.plan_one(v);
                }
                if let Some(done) = self.volumes[v].next_uncounted() {
                    if best.is_none_or(|(t, _)| done < t) {
                        best = Some((done, v));
                    }
                }
            }
            let Some((t, v)) = best else {
                debug_assert!(false, "a full cache with nothing to destage");
                break;
            };
            let vol = &mut self.volumes[v];
            let queued = vol.inflight.iter_mut().filter(|d| !d.counted).min_by_key(|d| d.done);
            let d = match queued {
                Some(d) => d,
                None => {
                    vol.plan_counted += 1;
                    &mut vol.plan[vol.plan_counted - 1].d
                }
            };
            d.counted = true;
            self.counted_bytes += d.end - d.start;
            self.counted_until = self.counted_until.max(t);
        }
        self.counted_until.max(now)
    }

    /// A write of `bytes` at byte `offset` of volume `v` at `now` (calls in nondecreasing
    /// `now`); returns when the host sees it complete.
    pub fn write(&mut self, v: usize, now: Nanos, offset: u64, bytes: u32) -> Nanos {
        self.advance(now);
        let (s, e) = (offset, offset.saturating_add(u64::from(bytes)));
        if !self.p.write_back || u64::from(bytes) > self.p.cache_bytes {
            self.counters.write_through += 1;
            self.drop_plan(v);
            let done = self.volumes[v].drive.submit_at(now, Op::Write, offset, bytes);
            return done.saturating_add(self.p.latency_ns);
        }
        if bytes == 0 {
            self.counters.write_hits += 1;
            return now.saturating_add(self.p.latency_ns);
        }
        // Room for what it adds beyond the dirty data it overwrites, after the writes
        // waiting before it. Its data is in the cache from now (simplification 3).
        let added = insert(&mut self.volumes[v].dirty, s, e);
        self.counters.absorbed_bytes += (e - s) - added;
        let t = if self.used + added <= self.p.cache_bytes {
            now
        } else {
            let excess = self.used + added - self.p.cache_bytes;
            self.room_at(excess, now)
        };
        self.used += added;
        if t > now {
            self.counters.write_waits += 1;
            self.counters.write_wait_ns += t - now;
            self.promised.push_back((t, added));
            self.promised_bytes += added;
        } else {
            self.counters.write_hits += 1;
            self.peak = self.peak.max(self.held());
        }
        if self.volumes[v].plan.is_empty() {
            self.fill(v, now);
        }
        t.saturating_add(self.host_ns(bytes))
    }

    /// Whether every byte of [s, e) of volume `v` is dirty in the cache (waiting, planned
    /// or being destaged).
    fn cached(&self, v: usize, s: u64, e: u64) -> bool {
        let vol = &self.volumes[v];
        let mut pos = s;
        while pos < e {
            let in_dirty =
                vol.dirty.range(..=pos).next_back().filter(|(_, &end)| end > pos).map(|(_, &end)| end);
            let in_flight = vol
                .inflight
                .iter()
                .chain(vol.plan.iter().map(|p| &p.d))
                .filter(|d| d.start <= pos && d.end > pos)
                .map(|d| d.end)
                .max();
            match in_dirty.max(in_flight) {
                Some(end) => pos = end,
                None => return false,
            }
        }
        true
    }

    /// A read of `bytes` at byte `offset` of volume `v` at `now` (calls in nondecreasing
    /// `now`); returns its completion. At the drive it follows the destage writes queued
    /// there and goes before those only planned.
    pub fn read(&mut self, v: usize, now: Nanos, offset: u64, bytes: u32) -> Nanos {
        self.advance(now);
        let e = offset.saturating_add(u64::from(bytes));
        if self.p.write_back && bytes > 0 && self.cached(v, offset, e) {
            self.counters.read_hits += 1;
            return now.saturating_add(self.host_ns(bytes));
        }
        self.counters.read_misses += 1;
        if !self.volumes[v].plan.is_empty() {
            self.counters.reads_ahead_of_destage += 1;
            self.drop_plan(v);
        }
        self.volumes[v].drive.submit_at(now, Op::Read, offset, bytes).saturating_add(self.p.latency_ns)
    }

    /// A cache flush (SYNCHRONIZE CACHE) to volume `v` at `now`: completed at once.
    pub fn flush(&mut self, _v: usize, now: Nanos) -> Nanos {
        self.advance(now);
        self.counters.flushes += 1;
        now
    }
}

/// A device's place behind a controller: the controller (shared by its volumes) and the
/// volume's index.
#[derive(Debug, Clone)]
pub struct Port {
    ctrl: Rc<RefCell<Controller>>,
    volume: usize,
}

impl Port {
    /// The volume's I/O through the controller; returns its completion.
    pub fn submit(&self, now: Nanos, op: Op, offset: u64, bytes: u32) -> Nanos {
        let mut c = self.ctrl.borrow_mut();
        match op {
            Op::Read => c.read(self.volume, now, offset, bytes),
            Op::Write => c.write(self.volume, now, offset, bytes),
        }
    }

    /// A cache flush to the volume; returns its completion.
    pub fn flush(&self, now: Nanos) -> Nanos {
        self.ctrl.borrow_mut().flush(self.volume, now)
    }

    /// The controller (for its counters).
    pub fn controller(&self) -> std::cell::Ref<'_, Controller> {
        self.ctrl.borrow()
    }

    /// The volume's index in its controller.
    pub fn volume(&self) -> usize {
        self.volume
    }
}

/// Checks the controllers of a variant: their parameters (errors name
/// `controllers[i] (NAME).FIELD`), and that each names known devices, each device behind
/// at most one controller.
pub fn check(controllers: &[ControllerConfig], devices: &[DeviceConfig]) -> Result<()> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in controllers.iter().enumerate() {
        let at = |f: &str| format!("controllers[{i}] ({}).{f}", c.name);
        ControllerParams::new(c, at)?;
        if controllers[..i].iter().any(|o| o.name == c.name) {
            return Err(Error::config(at("name"), "controller names must be unique"));
        }
        if c.volumes.is_empty() {
            return Err(Error::config(at("volumes"), "a controller needs at least one device behind it"));
        }
        for name in &c.volumes {
            if !devices.iter().any(|d| &d.name == name) {
                let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
                return Err(Error::config(
                    at("volumes"),
                    format!("names unknown device '{name}'; devices of this scenario: {}", names.join(", ")),
                ));
            }
            if seen.contains(&name.as_str()) {
                return Err(Error::config(
                    at("volumes"),
                    format!("device '{name}' is behind two controllers"),
                ));
            }
            seen.push(name);
        }
    }
    Ok(())
}

/// Puts the devices named by `controllers` behind them: each controller gets a drive per
/// volume (a device of the volume's configuration, seeded from `seed` and its index) and
/// the host's device of each volume sends its I/O through it. `controllers` must have
/// passed [`check`].
pub fn attach(controllers: &[ControllerConfig], cfgs: &[DeviceConfig], devices: &mut [Device], seed: u64) {
    for (i, c) in controllers.iter().enumerate() {
        let Ok(p) = ControllerParams::new(c, |f| f.to_string()) else { continue };
        let idx: Vec<usize> =
            c.volumes.iter().filter_map(|n| cfgs.iter().position(|d| &d.name == n)).collect();
        let drives = idx
            .iter()
            .map(|&d| {
                Device::new(
                    &cfgs[d],
                    seed ^ 0x5bd1_e995_u64.wrapping_mul(((i as u64 + 1) << 16) | (d as u64 + 1)),
                )
            })
            .collect();
        let ctrl = Rc::new(RefCell::new(Controller::new(&c.name, p, drives)));
        for (volume, &d) in idx.iter().enumerate() {
            devices[d].attach(Port { ctrl: Rc::clone(&ctrl), volume });
        }
    }
}

#[cfg(test)]
mod tests;
