//! bcache's background writeback: the writeback thread that copies dirty data from the
//! cache device to the backing device, and the PI controller that paces it.
//!
//! # Mechanism
//!
//! Sources: drivers/md/bcache/writeback.c (`bch_writeback_thread()`, `refill_dirty()`,
//! `read_dirty()`, `write_dirty()`, `write_dirty_finish()`, `__update_writeback_rate()`,
//! `set_at_max_writeback_rate()`, `bch_cached_dev_writeback_init()`), writeback.h
//! (`should_writeback()`, `bch_writeback_add()`, `MAX_WRITEBACKS_IN_PASS`,
//! `MAX_WRITESIZE_IN_PASS`), util.c (`bch_next_delay()`), btree.c (`bch_refill_keybuf()`,
//! `KEYBUF_NR`), request.c (`cached_dev_write()`, `cached_dev_make_request()`,
//! `quit_max_writeback_rate()`), read in Ubuntu 18.04's 4.15 tree (github
//! chenji-kael/ubuntu-bionic) and a 5.x tree (delphix/linux-kernel-aws, Ubuntu's AWS 5.x).
//!
//! - A writeback write marks its extent dirty and, if the device had none,
//!   `bch_writeback_add()` sets `has_dirty` and wakes the thread.
//! - The thread (`bch_writeback_thread()`) loops: `refill_dirty()` scans the index in
//!   backing-device order from where the last scan stopped (`last_scanned`), collecting up
//!   to `KEYBUF_NR` = 500 dirty keys; at the end of the device it wraps and scans up to
//!   where it started. A scan that got round without filling the buffer searched the full
//!   index; if it found nothing, `has_dirty` is cleared. `read_dirty()` then takes the keys
//!   in order in passes of up to `MAX_WRITEBACKS_IN_PASS` = 5 contiguous keys (fewer once
//!   `MAX_WRITESIZE_IN_PASS` = 5000 sectors are gathered): each key is read from the cache
//!   device, then written to the backing device at its own offset (at most 64 keys in
//!   flight, the `in_flight` semaphore), then marked clean by a btree insert that replaces
//!   the dirty key only if it is still there (`write_dirty_finish()`: a write meanwhile
//!   makes it a collision, `writeback_keys_failed`). After each pass the thread sleeps
//!   `bch_next_delay(&writeback_rate, sectors)`: `next += sectors * 1e9 / rate`, bounded to
//!   2 s behind and 2.5 s ahead of now. When the buffer is done it waits for every I/O
//!   (`closure_sync()`), and after a full-index pass sleeps `writeback_delay` (30 s).
//! - A foreground write overlapping keys in the buffer (`bch_keybuf_check_overlapping()`)
//!   drops those not yet started and is itself forced to writeback.
//! - The rate (`writeback_rate`, sectors/s; starts at 1024) is set every
//!   `writeback_rate_update_seconds` (5) while `has_dirty` and `writeback_percent` > 0:
//!   target = nbuckets * bucket_size * writeback_percent / 100 (times the device's share
//!   of the cached devices: all of it here); error = dirty - target; proportional =
//!   error / `writeback_rate_p_term_inverse` (40); the integral accumulates
//!   error * update_seconds when the error is positive and the thread keeps up (now before
//!   `writeback_rate.next` + 1 ms) or negative while the integral is positive;
//!   rate = clamp((int32)(proportional + integral / `writeback_rate_i_term_inverse`
//!   (10000)), `writeback_rate_minimum` (8), NSEC_PER_SEC).
//! - The idle fast path (`set_at_max_writeback_rate()`): each update with dirty data
//!   counts `idle_counter`, which every request to the bcache device resets; at 6 (one
//!   backing device: `attached_dev_nr * 6`) the rate becomes INT_MAX; the next request
//!   sets it to 1 (`quit_max_writeback_rate()`) until the next update.
//!
//! # Kernels (feature table)
//!
//! | | 4.15 (Ubuntu 18.04) | 5.10 (2021) |
//! |---|---|---|
//! | backing writes of a pass | as each read completes | in key order (`writeback_sequence_next`) |
//! | idle fast path | yes (bionic backported it) | yes |
//!
//! Both trees have the PI controller, the 5-key passes and the 2.5 s bound. The
//! fragmentation boost of the rate (`writeback_consider_fragment`, in the 5.x tree read,
//! added after Debian 11's 5.10) is not modelled.
//!
//! # Simplifications (numbered)
//!
//! 1. Keys are runs of dirty units in one bucket (the index has no key boundaries).
//! 2. A pass waits for in-flight slots as a whole; jiffy rounding of the sleeps is not
//!    modelled (the thread sleeps to `writeback_rate.next` exactly).
//! 3. The rate timer starts with the first writeback step after the cache set comes up.
//! 4. A write overlapping an in-flight key keeps the hull of what it overlapped dirty (the
//!    kernel's replace keeps exactly the overwritten sectors dirty): such data may be
//!    written back twice, never a clean unit.
//! 5. `partial_stripes_expensive` (RAID5/6 backing devices) is not modelled.

use std::collections::VecDeque;

use super::*;
use crate::config::BcacheKernel;

/// KEYBUF_NR (btree.h): keys one refill collects.
pub(super) const KEYBUF_NR: usize = 500;
/// MAX_WRITEBACKS_IN_PASS (writeback.h).
const MAX_WRITEBACKS_IN_PASS: usize = 5;
/// MAX_WRITESIZE_IN_PASS (writeback.h), sectors.
const MAX_WRITESIZE_IN_PASS: u64 = 5000;
/// `sema_init(&dc->in_flight, 64)` (`bch_cached_dev_writeback_init()`).
pub(super) const IN_FLIGHT: usize = 64;
/// `writeback_rate.rate` at init, sectors/s (`bch_cached_dev_writeback_init()`).
const INITIAL_RATE: i64 = 1024;
const NSEC_PER_SEC: u64 = 1_000_000_000;
const NSEC_PER_MSEC: u64 = 1_000_000;
/// Updates of an idle cache set before the rate goes to INT_MAX (one backing device).
const IDLE_ROUNDS: u32 = 6;
/// Units per chunk of the dirty-count summary that lets a scan skip clean ranges.
pub(super) const CHUNK_SHIFT: u32 = 12;
/// No time set.
const NEVER: Nanos = Nanos::MAX;

/// One dirty key of the keybuf: units [start, start + len) in `bucket` of gen `gen`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    start: u64,
    /// 0 = dropped by an overlapping write.
    len: u32,
    bucket: u32,
    gen: u8,
}

/// One key's writeback in flight (a `dirty_io`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Flight {
    key: Key,
    read_done: Nanos,
    /// NEVER until the backing write is issued.
    write_done: Nanos,
    /// Units [skip_lo, skip_hi) were overwritten meanwhile: they stay dirty.
    skip_lo: u64,
    skip_hi: u64,
}

/// Where the writeback thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thread {
    /// Asleep in `schedule()`: no dirty data (or writeback_running off).
    Idle,
    /// At the top of its loop: refill next.
    Run,
    /// In `read_dirty()`, ready for the next pass.
    Passes,
    /// In `read_dirty()`, sleeping the rate's delay until then.
    Sleep(Nanos),
    /// The buffer is done: waiting for every I/O (`closure_sync()`).
    Drain,
    /// Sleeping `writeback_delay` after a full-index pass, until then.
    Delay(Nanos),
}

/// The writeback thread and rate controller of the cached device (see the module doc).
#[derive(Debug)]
pub(super) struct Writeback {
    percent: u32,
    delay_ns: u64,
    running: bool,
    update_ns: u64,
    update_seconds: i64,
    p_inverse: i64,
    i_inverse: i64,
    minimum: i64,
    ordered: bool,
    /// `writeback_rate.rate`, sectors/s.
    pub(super) rate: i64,
    /// `writeback_rate.next`.
    pub(super) next: Nanos,
    pub(super) integral: i64,
    pub(super) proportional: i64,
    pub(super) integral_scaled: i64,
    /// `writeback_rate_target`, sectors.
    pub(super) target: i64,
    next_update: Nanos,
    idle_counter: u32,
    at_max: bool,
    pub(super) has_dirty: bool,
    thread: Thread,
    keys: Vec<Key>,
    key_pos: usize,
    last_scanned: u64,
    searched_full: bool,
    pub(super) flights: VecDeque<Flight>,
    /// Dirty units per chunk of 2^CHUNK_SHIFT units (empty unless writeback mode).
    pub(super) chunks: Vec<u32>,
    /// When the thread next has something to do.
    due: Option<Nanos>,
}

impl Writeback {
    pub(super) fn new(c: &BcacheConfig, units: usize) -> Self {
        let wb = c.cache_mode == BcacheCacheMode::Writeback;
        Writeback {
            percent: c.writeback_percent,
            delay_ns: u64::from(c.writeback_delay) * NSEC_PER_SEC,
            running: c.writeback_running,
            update_ns: u64::from(c.writeback_rate_update_seconds) * NSEC_PER_SEC,
            update_seconds: i64::from(c.writeback_rate_update_seconds),
            p_inverse: i64::from(c.writeback_rate_p_term_inverse.max(1)),
            i_inverse: i64::from(c.writeback_rate_i_term_inverse.max(1)),
            minimum: i64::from(c.writeback_rate_minimum),
            ordered: c.kernel == BcacheKernel::V5_10,
            rate: INITIAL_RATE,
            next: 0,
            integral: 0,
            proportional: 0,
            integral_scaled: 0,
            target: 0,
            next_update: NEVER,
            idle_counter: 0,
            at_max: false,
            has_dirty: false,
            thread: Thread::Idle,
            keys: Vec::with_capacity(if wb { KEYBUF_NR } else { 0 }),
            key_pos: 0,
            last_scanned: 0,
            searched_full: false,
            flights: VecDeque::with_capacity(if wb { IN_FLIGHT } else { 0 }),
            chunks: if wb { vec![0; units.div_ceil(1 << CHUNK_SHIFT)] } else { Vec::new() },
            due: None,
        }
    }

    /// The thread after a reboot (or a new cache set): rate and buffer as at init, asleep
    /// until [`Bcache::resume_writeback`] finds dirty data.
    pub(super) fn restart(&mut self) {
        self.rate = INITIAL_RATE;
        (self.next, self.integral, self.proportional, self.integral_scaled) = (0, 0, 0, 0);
        (self.next_update, self.idle_counter, self.at_max) = (NEVER, 0, false);
        self.keys.clear();
        (self.key_pos, self.last_scanned, self.searched_full) = (0, 0, false);
        self.flights.clear();
        self.has_dirty = false;
        self.thread = Thread::Idle;
        self.due = None;
    }

    /// Bytes of simulator memory for `units` index units in writeback mode.
    pub(super) fn memory_bytes(units: u64) -> u64 {
        units.div_ceil(1 << CHUNK_SHIFT) * 4
            + (KEYBUF_NR * std::mem::size_of::<Key>() + IN_FLIGHT * std::mem::size_of::<Flight>()) as u64
    }

    /// `bch_next_delay()`: `done` sectors written back at `now`; returns `next`.
    fn next_delay(&mut self, done: u64, now: Nanos) -> Nanos {
        let rate = self.rate.max(1) as u64;
        self.next = self.next.saturating_add(done * NSEC_PER_SEC / rate);
        self.next = self.next.clamp(now.saturating_sub(2 * NSEC_PER_SEC), now + NSEC_PER_SEC * 5 / 2);
        self.next
    }

    /// The controller's rate from `dirty` sectors against a cache of `cache_sectors` at
    /// `now` (`__update_writeback_rate()`).
    pub(super) fn update_rate(&mut self, dirty: i64, cache_sectors: i64, now: Nanos) {
        // __calc_target_rate(): one backing device has the whole share.
        let target = cache_sectors * i64::from(self.percent) / 100;
        let error = dirty - target;
        let proportional = error / self.p_inverse;
        if (error < 0 && self.integral > 0) || (error > 0 && now < self.next.saturating_add(NSEC_PER_MSEC)) {
            self.integral += error * self.update_seconds;
        }
        let integral_scaled = self.integral / self.i_inverse;
        // clamp_t(int32_t, ...): the sum is cast to int32 first.
        let sum = (proportional + integral_scaled) as i32 as i64;
        self.rate = sum.clamp(self.minimum, NSEC_PER_SEC as i64);
        (self.proportional, self.integral_scaled, self.target) = (proportional, integral_scaled, target);
    }

    /// `set_at_max_writeback_rate()`: true when the cache set has been idle long enough.
    pub(super) fn set_at_max(&mut self) -> bool {
        self.idle_counter = self.idle_counter.saturating_add(1);
        if self.idle_counter < IDLE_ROUNDS {
            return false;
        }
        self.at_max = true;
        self.rate = i64::from(i32::MAX);
        (self.proportional, self.integral_scaled) = (0, 0);
        true
    }

    /// A request reached the bcache device (`cached_dev_make_request()`).
    pub(super) fn note_request(&mut self) {
        self.idle_counter = 0;
        if self.at_max {
            // quit_max_writeback_rate(): the rate drops to 1 until the next update.
            self.at_max = false;
            self.rate = 1;
        }
    }

    /// `bch_writeback_add()` at `now`: the device has dirty data; wakes an idle thread.
    pub(super) fn add(&mut self, now: Nanos) {
        self.has_dirty = true;
        if self.next_update == NEVER {
            self.next_update = now + self.update_ns;
        }
        if self.thread == Thread::Idle && self.running {
            self.thread = Thread::Run;
            self.due = Some(self.due.map_or(now, |d| d.min(now)));
        }
    }

    /// When the thread next has something to do.
    pub(super) fn due(&self) -> Option<Nanos> {
        self.due
    }

    /// `bch_keybuf_check_overlapping()` for a write of units [start, end): drops the keys
    /// not yet started, marks in-flight ones (simplification 4). True if any overlapped.
    pub(super) fn check_overlapping(&mut self, start: u64, end: u64) -> bool {
        let mut hit = false;
        let first = self.keys[self.key_pos..].partition_point(|k| k.start + u64::from(k.len) <= start);
        for k in &mut self.keys[self.key_pos + first..] {
            if k.start >= end {
                break;
            }
            if k.len > 0 && k.start + u64::from(k.len) > start {
                k.len = 0;
                hit = true;
            }
        }
        for f in &mut self.flights {
            let (s, e) = (f.key.start, f.key.start + u64::from(f.key.len));
            if s < end && start < e {
                let (lo, hi) = (start.max(s), end.min(e));
                if f.skip_lo >= f.skip_hi {
                    (f.skip_lo, f.skip_hi) = (lo, hi);
                } else {
                    (f.skip_lo, f.skip_hi) = (f.skip_lo.min(lo), f.skip_hi.max(hi));
                }
                hit = true;
            }
        }
        hit
    }
}

/// What the writeback thread did in one step (for the caller's accounting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritebackStep {
    /// When the thread next has something to do (None: asleep until a writeback write).
    pub next: Option<Nanos>,
    /// Device I/Os submitted.
    pub ios: u32,
}

impl Bcache {
    /// Sectors of the cache set (`nbuckets * bucket_size`).
    pub(super) fn cache_sectors(&self) -> i64 {
        (self.buckets.len() as u64 * (self.bucket_size() >> 9)) as i64
    }

    /// The writeback thread and rate timer at `now`: finishes and issues what is due,
    /// runs passes until it sleeps. `io` submits a device I/O at `now` (target, op, the
    /// data's byte offset on the backing device, bytes) and returns its completion.
    pub fn writeback_step(
        &mut self,
        now: Nanos,
        mut io: impl FnMut(Target, Op, u64, u32) -> Nanos,
    ) -> WritebackStep {
        let mut step = WritebackStep::default();
        if self.mode != BcacheCacheMode::Writeback {
            return step;
        }
        self.rate_updates(now);
        self.flights_step(now, &mut io, &mut step);
        // Each state change makes progress; bound the loop all the same.
        for _ in 0..4 * KEYBUF_NR + 16 {
            match self.wb.thread {
                Thread::Idle => break,
                Thread::Sleep(t) | Thread::Delay(t) if t > now => break,
                Thread::Sleep(_) => self.wb.thread = Thread::Passes,
                Thread::Delay(_) => {
                    // bch_ratelimit_reset() after the delay.
                    self.wb.next = now;
                    self.wb.thread = Thread::Run;
                }
                Thread::Run => {
                    if !self.wb.has_dirty || !self.wb.running {
                        self.wb.thread = Thread::Idle;
                        continue;
                    }
                    let full = self.refill_dirty();
                    if full && self.wb.keys.iter().all(|k| k.len == 0) {
                        self.wb.has_dirty = false;
                    }
                    self.wb.searched_full = full;
                    self.wb.thread = Thread::Passes;
                }
                Thread::Passes => {
                    if !self.pass(now, &mut io, &mut step) {
                        break;
                    }
                }
                Thread::Drain => {
                    if !self.wb.flights.is_empty() {
                        break;
                    }
                    self.wb.thread = if self.wb.searched_full {
                        Thread::Delay(now.saturating_add(self.wb.delay_ns))
                    } else {
                        Thread::Run
                    };
                }
            }
        }
        // What completed at this instant is seen the next nanosecond (as the journal's).
        self.wb.due = self.writeback_next().map(|t| t.max(now.saturating_add(1)));
        step.next = self.wb.due;
        step
    }

    /// The rate updates due by `now` (`update_writeback_rate()`).
    fn rate_updates(&mut self, now: Nanos) {
        while self.wb.next_update <= now {
            let at = self.wb.next_update;
            if self.wb.has_dirty && self.wb.percent > 0 && !self.wb.set_at_max() {
                let dirty = (self.stats.dirty_data >> 9) as i64;
                let sectors = self.cache_sectors();
                self.wb.update_rate(dirty, sectors, at);
            }
            self.wb.next_update = at + self.wb.update_ns;
            if !self.wb.has_dirty && self.wb.next_update <= now {
                // Nothing to compute until dirty data comes back: skip to now.
                let periods = (now - self.wb.next_update) / self.wb.update_ns + 1;
                self.wb.next_update += periods * self.wb.update_ns;
            }
        }
    }

    /// In-flight keys: backing writes of the reads done (in key order on 5.x), then the
    /// keys whose write completed are marked clean.
    fn flights_step(
        &mut self,
        now: Nanos,
        io: &mut impl FnMut(Target, Op, u64, u32) -> Nanos,
        step: &mut WritebackStep,
    ) {
        let shift = self.unit_shift;
        for k in 0..self.wb.flights.len() {
            let f = self.wb.flights[k];
            if f.write_done != NEVER {
                continue;
            }
            if f.read_done > now {
                if self.wb.ordered {
                    break;
                }
                continue;
            }
            let bytes = f.key.len << shift;
            let done = io(Target::Backing, Op::Write, f.key.start << shift, bytes);
            self.stats.backing_write_bytes += u64::from(bytes);
            self.stats.writeback_bytes += u64::from(bytes);
            self.wb.flights[k].write_done = done;
            step.ios += 1;
        }
        let mut k = 0;
        while k < self.wb.flights.len() {
            if self.wb.flights[k].write_done <= now {
                // Invariant: k < len.
                let f = self.wb.flights.remove(k).expect("in range");
                self.write_dirty_finish(&f);
            } else {
                k += 1;
            }
        }
    }

    /// `write_dirty_finish()`: the key's units still holding this dirty data become clean.
    fn write_dirty_finish(&mut self, f: &Flight) {
        let want = (f.key.bucket + 1) << BUCKET_SHIFT | DIRTY_BIT | u32::from(f.key.gen);
        let mut cleaned = 0;
        for u in f.key.start..f.key.start + u64::from(f.key.len) {
            if (f.skip_lo..f.skip_hi).contains(&u) || self.slots[u as usize] != want {
                continue;
            }
            self.slots[u as usize] = want & !DIRTY_BIT;
            self.clear_dirty(u, f.key.bucket);
            cleaned += 1;
        }
        if cleaned > 0 {
            self.stats.writeback_keys_done += 1;
        } else {
            self.stats.writeback_keys_failed += 1;
        }
    }

    /// Dirty accounting of unit `u` of bucket `b` turning clean or dropped.
    pub(super) fn clear_dirty(&mut self, u: u64, b: u32) {
        let bk = &mut self.buckets[b as usize];
        bk.dirty -= 1;
        self.stats.dirty_data -= 1 << self.unit_shift;
        if bk.dirty == 0 && bk.mark == Mark::Data {
            self.dirty_buckets -= 1;
        }
        if let Some(c) = self.wb.chunks.get_mut((u >> CHUNK_SHIFT) as usize) {
            *c -= 1;
        }
    }

    /// One pass of `read_dirty()`: up to 5 contiguous keys read from the cache device,
    /// then the rate's sleep. False when the thread must wait (in-flight slots).
    fn pass(
        &mut self,
        now: Nanos,
        io: &mut impl FnMut(Target, Op, u64, u32) -> Nanos,
        step: &mut WritebackStep,
    ) -> bool {
        let shift = self.unit_shift;
        while self.wb.key_pos < self.wb.keys.len() && self.wb.keys[self.wb.key_pos].len == 0 {
            self.wb.key_pos += 1;
        }
        if self.wb.key_pos == self.wb.keys.len() {
            self.wb.thread = Thread::Drain;
            return true;
        }
        // Gather the pass: contiguous keys, at most 5, until 5000 sectors.
        let (first, mut end, mut n, mut size) = (self.wb.key_pos, self.wb.key_pos, 0, 0u64);
        while end < self.wb.keys.len() && n < MAX_WRITEBACKS_IN_PASS && size < MAX_WRITESIZE_IN_PASS {
            let k = self.wb.keys[end];
            if k.len == 0 {
                end += 1;
                continue;
            }
            if n > 0 {
                let prev = self.wb.keys[first..end].iter().rev().find(|p| p.len > 0).expect("n > 0");
                if prev.start + u64::from(prev.len) != k.start {
                    break;
                }
            }
            size += u64::from(k.len) << (shift - 9);
            n += 1;
            end += 1;
        }
        if self.wb.flights.len() + n > IN_FLIGHT {
            return false;
        }
        for j in first..end {
            let k = self.wb.keys[j];
            if k.len == 0 {
                continue;
            }
            let bytes = k.len << shift;
            // The offset passed is the data's backing-device offset (the cache device's own
            // offset is not modelled).
            let read_done = io(Target::Cache, Op::Read, k.start << shift, bytes);
            self.stats.cache_read_bytes += u64::from(bytes);
            step.ios += 1;
            self.wb.flights.push_back(Flight {
                key: k,
                read_done,
                write_done: NEVER,
                skip_lo: 0,
                skip_hi: 0,
            });
        }
        self.wb.key_pos = end;
        if self.wb.percent > 0 {
            let next = self.wb.next_delay(size, now);
            if next > now {
                self.wb.thread = Thread::Sleep(next);
            }
        }
        true
    }

    /// `refill_dirty()`: the keybuf from `last_scanned` on, wrapping once; true when the
    /// scan went round the whole index without filling the buffer.
    fn refill_dirty(&mut self) -> bool {
        self.wb.keys.clear();
        self.wb.key_pos = 0;
        let n = self.slots.len() as u64;
        if self.wb.last_scanned >= n {
            self.wb.last_scanned = 0;
        }
        let start_pos = self.wb.last_scanned;
        if !self.scan_dirty(start_pos, n) {
            return false;
        }
        self.wb.last_scanned = 0;
        self.scan_dirty(0, start_pos)
    }

    /// `bch_refill_keybuf()` over units [from, to): false once the buffer is full.
    fn scan_dirty(&mut self, from: u64, to: u64) -> bool {
        let mut u = from;
        while u < to {
            let c = (u >> CHUNK_SHIFT) as usize;
            if self.wb.chunks[c] == 0 {
                u = ((c as u64 + 1) << CHUNK_SHIFT).min(to);
                continue;
            }
            let s = self.slots[u as usize];
            if s & DIRTY_BIT == 0 {
                u += 1;
                continue;
            }
            // Dirty buckets are never invalidated: a dirty entry is current.
            let (b, gen) = ((s >> BUCKET_SHIFT) - 1, (s & GEN_MASK) as u8);
            let mut v = u + 1;
            while v < to && self.slots[v as usize] == s {
                v += 1;
            }
            self.wb.keys.push(Key { start: u, len: (v - u) as u32, bucket: b, gen });
            self.wb.last_scanned = v;
            if self.wb.keys.len() == KEYBUF_NR {
                return false;
            }
            u = v;
        }
        self.wb.last_scanned = to;
        true
    }

    /// The thread's next wake-up: its sleep, an I/O completion, the rate timer.
    fn writeback_next(&self) -> Option<Nanos> {
        let wb = &self.wb;
        let mut t = match wb.thread {
            Thread::Idle | Thread::Drain => NEVER,
            Thread::Sleep(t) | Thread::Delay(t) => t,
            // Waiting for in-flight slots.
            Thread::Passes | Thread::Run => NEVER,
        };
        for f in &wb.flights {
            t = t.min(if f.write_done == NEVER { f.read_done } else { f.write_done });
        }
        if wb.has_dirty && wb.percent > 0 {
            t = t.min(wb.next_update);
        }
        (t != NEVER).then_some(t)
    }
}
