//! The writeback thread and its rate controller (`writeback`), and the write modes'
//! effect on dirty data.

use super::*;
use crate::config::BcacheKernel;
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;
const SEC: Nanos = 1_000_000_000;
const UNIT: u64 = 16 * KIB;

/// A writeback cache of 1024 buckets of 64 KiB (64 MiB) over a 1 GiB backing device in
/// 16 KiB units.
fn cache(mode: BcacheCacheMode, f: impl FnOnce(&mut BcacheConfig)) -> Bcache {
    let mut c = BcacheConfig::with_defaults("nvme");
    c.cache_mode = mode;
    c.bucket_size = 64 * KIB;
    c.sequential_cutoff = 0;
    f(&mut c);
    Bcache::new(&BcacheParams {
        config: &c,
        cache_capacity: 1024 * c.bucket_size,
        backing_size: 1 << 30,
        unit: UNIT as u32,
        tasks: 4,
        seed: 7,
    })
}

/// Device I/Os as (target, op, backing offset, bytes); each completes `lat` after `now`.
#[derive(Default)]
struct Log(Vec<(Target, Op, u64, u32)>);

impl Log {
    fn io(&mut self, now: Nanos) -> impl FnMut(Target, Op, u32) -> Nanos + '_ {
        move |t, op, b| {
            self.0.push((t, op, 0, b));
            now + 100_000
        }
    }
    fn wb_io(&mut self, now: Nanos) -> impl FnMut(Target, Op, u64, u32) -> Nanos + '_ {
        move |t, op, o, b| {
            self.0.push((t, op, o, b));
            now + 100_000
        }
    }
}

/// Units of the backing device a pseudo-random sequence visits (distinct, scattered).
fn scattered(n: u64) -> impl Iterator<Item = u64> {
    (0..n).map(|k| (k * 7919) % 65536)
}

/// Sync (O_DIRECT) writes of one unit each to `n` scattered units, 1 us apart.
fn write_scattered(b: &mut Bcache, n: u64, log: &mut Log) {
    for (k, u) in scattered(n).enumerate() {
        let t = k as Nanos * 1000;
        b.write(0, u * UNIT, UNIT as u32, true, t, log.io(t));
    }
}

/// The count of dirty index entries, recomputed.
fn dirty_units(b: &mut Bcache) -> u64 {
    (0..b.slots.len() as u64).filter(|&u| b.lookup(u).is_some_and(|(_, d)| d)).count() as u64
}

/// Runs the writeback thread alone until `until` (a read each `read_every` keeps the
/// cache set from idling; None: no requests). Returns the dirty bytes seen after each
/// step with its time.
fn run(
    b: &mut Bcache,
    from: Nanos,
    until: Nanos,
    read_every: Option<Nanos>,
    log: &mut Log,
) -> Vec<(Nanos, u64)> {
    let mut seen = Vec::new();
    let mut next_read = read_every.map(|p| from + p);
    let mut t = from;
    while t < until {
        let due = b.writeback_due().unwrap_or(Nanos::MAX);
        match next_read {
            Some(r) if r <= due => {
                t = r;
                b.read(0, 0, UNIT as u32, t, log.io(t));
                next_read = Some(r + read_every.unwrap());
            }
            _ if due == Nanos::MAX => break,
            _ => {
                t = due;
                b.writeback_step(t, log.wb_io(t));
                seen.push((t, b.stats().dirty_data));
            }
        }
    }
    seen
}

/// `__update_writeback_rate()` by hand: a 64 MiB cache (131072 sectors) at
/// writeback_percent 10 has a target of 13107 sectors; 40000 dirty sectors are an error
/// of 26893, a proportional term of 26893 / 40 = 672 sectors/s. The integral only grows
/// while the thread keeps up (now before `writeback_rate.next` + 1 ms): then it adds
/// 26893 * 5 = 134465, 13 sectors/s once divided by 10000.
#[test]
fn the_pi_controller_sets_the_rate_the_source_computes() {
    let mut b = cache(BcacheCacheMode::Writeback, |_| {});
    assert_eq!(b.cache_sectors(), 131072);
    // Behind (next long past): no integral.
    b.wb.next = 0;
    b.wb.update_rate(40000, b.cache_sectors(), 10 * SEC);
    assert_eq!((b.wb.target, b.wb.proportional, b.wb.integral), (13107, 672, 0));
    assert_eq!(b.wb.rate, 672);
    assert_eq!(b.writeback_rate(), 672 * 512);
    // Keeping up: the integral accumulates.
    b.wb.next = 20 * SEC;
    b.wb.update_rate(40000, b.cache_sectors(), 15 * SEC);
    assert_eq!(b.wb.integral, 134465);
    assert_eq!(b.wb.rate, 672 + 13);
    // Below the target the rate floors at writeback_rate_minimum (8) while the integral
    // (positive) shrinks.
    b.wb.update_rate(1000, b.cache_sectors(), 20 * SEC);
    assert_eq!(b.wb.integral, 134465 + (1000 - 13107) * 5);
    assert_eq!(b.wb.rate, 8);
}

/// Writes at writeback fill the cache with dirty data; once they stop, the thread drains
/// it to the target (writeback_percent of the cache) and then only trickles (one pass per
/// 2.5 s at most, `bch_next_delay()`'s bound, and writeback_delay's 30 s after each full
/// scan) while requests keep the cache set from counting as idle.
#[test]
fn dirty_data_drains_to_the_target_when_writes_stop() {
    let mut b = cache(BcacheCacheMode::Writeback, |_| {});
    let mut log = Log::default();
    write_scattered(&mut b, 1280, &mut log);
    assert_eq!(b.stats().dirty_data, 1280 * UNIT);
    let target = 64 * MIB / 10;
    let seen = run(&mut b, SEC / 100, 400 * SEC, Some(SEC), &mut log);
    let (reached, _) = *seen.iter().find(|s| s.1 <= target).expect("dirty data reaches the target");
    assert!(reached < 200 * SEC, "reached at {reached}");
    // Below the target it only trickles: a minute later, not more than 2 MiB less.
    let later = seen.iter().find(|s| s.0 >= reached + 60 * SEC).expect("still running").1;
    assert!(later + 2 * MIB >= target, "dirty {later} a minute after reaching {target}");
    assert!(b.writeback_rate() <= 16 * 512, "rate at the floor: {}", b.writeback_rate());
    assert_eq!(b.stats().dirty_data, dirty_units(&mut b) * UNIT);
}

/// With no request at all for 6 rate updates the cache set is idle: the rate goes to
/// INT_MAX (`set_at_max_writeback_rate()`) and every dirty byte is written back; a request
/// then drops it to 1 (`quit_max_writeback_rate()`).
#[test]
fn an_idle_cache_set_writes_back_everything() {
    let mut b = cache(BcacheCacheMode::Writeback, |_| {});
    let mut log = Log::default();
    write_scattered(&mut b, 1280, &mut log);
    run(&mut b, SEC / 100, 300 * SEC, None, &mut log);
    assert_eq!(b.stats().dirty_data, 0);
    assert_eq!(dirty_units(&mut b), 0);
    assert!(!b.wb.has_dirty);
    let written: u64 = log.0.iter().filter(|x| x.0 == Target::Backing).map(|x| u64::from(x.3)).sum();
    assert_eq!(written, 1280 * UNIT, "each dirty unit written back once");
    assert_eq!(b.stats().writeback_bytes, 1280 * UNIT);
    assert_eq!(b.stats().writeback_keys_done, 1280);
    // At the maximum until a request comes.
    b.wb.has_dirty = true;
    b.wb.set_at_max();
    assert_eq!(b.wb.rate, i64::from(i32::MAX));
    b.read(0, 0, UNIT as u32, 301 * SEC, log.io(301 * SEC));
    assert_eq!(b.wb.rate, 1);
}

/// `refill_dirty()` scans the index in backing-device order: the thread reads dirty keys
/// and writes them to the backing device in increasing offsets, each written where it
/// belongs, adjacent keys in one pass. On 5.10 the writes keep key order even when reads
/// complete out of order.
#[test]
fn writeback_writes_come_in_backing_device_order() {
    for kernel in [BcacheKernel::V4_15, BcacheKernel::V5_10] {
        let mut b = cache(BcacheCacheMode::Writeback, |c| {
            c.kernel = kernel;
            c.writeback_percent = 0; // no rate: as fast as the devices go
        });
        let mut log = Log::default();
        write_scattered(&mut b, 300, &mut log);
        let mut writes = Vec::new();
        let mut t = SEC;
        let mut n = 0u64;
        while let Some(due) = b.writeback_due().filter(|&d| d < 100 * SEC) {
            t = t.max(due);
            b.writeback_step(t, |target, _op, o, _bytes| {
                n += 1;
                if target == Target::Backing {
                    writes.push(o);
                    t + 100_000
                } else {
                    // Reads complete out of order: later keys sooner.
                    t + 1_000_000 - (n % 5) * 150_000
                }
            });
        }
        assert_eq!(writes.len(), 300, "{kernel:?}");
        let sorted = writes.windows(2).all(|w| w[0] < w[1]);
        match kernel {
            BcacheKernel::V5_10 => assert!(sorted, "5.10 writes in key order"),
            BcacheKernel::V4_15 => {
                // Written as the reads complete: every key once, not in order here.
                assert!(!sorted);
                let mut w = writes.clone();
                w.sort_unstable();
                let mut want: Vec<u64> = scattered(300).map(|u| u * UNIT).collect();
                want.sort_unstable();
                assert_eq!(w, want);
            }
        }
        assert_eq!(b.stats().dirty_data, 0);
    }
}

/// Writes whole buckets (4 units) from unit `u` on until more than `percent` of the
/// buckets are in use.
fn dirty_buckets_until(b: &mut Bcache, percent: u32, u: &mut u64, log: &mut Log) {
    while b.in_use() <= percent {
        b.write(0, *u * UNIT, 4 * UNIT as u32, true, 0, log.io(0));
        *u += 4;
    }
}

/// `should_writeback()`: above CUTOFF_WRITEBACK_SYNC (70% of buckets in use) even a sync
/// write goes through to the backing device (and is cached clean); above CUTOFF_WRITEBACK
/// (40%) an async one does.
#[test]
fn a_write_above_the_cutoffs_goes_through() {
    let mut b = cache(BcacheCacheMode::Writeback, |c| c.writeback_running = false);
    let mut log = Log::default();
    // Dirty whole buckets (4 units each) until 45% in use.
    let mut u = 0;
    dirty_buckets_until(&mut b, 45, &mut u, &mut log);
    let dirty = b.stats().dirty_data;
    log.0.clear();
    b.write(1, 60_000 * UNIT, UNIT as u32, false, 0, log.io(0));
    assert_eq!(b.stats().dirty_data, dirty, "async write above 40%: not dirty");
    assert!(log.0.iter().any(|x| x.0 == Target::Backing && x.1 == Op::Write));
    assert!(log.0.iter().any(|x| x.0 == Target::Cache && x.1 == Op::Write), "cached clean");
    b.write(1, 60_001 * UNIT, UNIT as u32, true, 0, log.io(0));
    assert_eq!(b.stats().dirty_data, dirty + UNIT, "sync write below 70%: writeback");
    dirty_buckets_until(&mut b, CUTOFF_WRITEBACK_SYNC, &mut u, &mut log);
    let dirty = b.stats().dirty_data;
    log.0.clear();
    b.write(1, 60_002 * UNIT, UNIT as u32, true, 0, log.io(0));
    assert_eq!(b.stats().dirty_data, dirty, "sync write above 70%: through");
    assert_eq!(log.0.iter().filter(|x| x.0 == Target::Backing).count(), 1);
}

/// Writethrough writes go to both devices and leave nothing dirty: no writeback thread.
#[test]
fn writethrough_writes_both_devices_and_leaves_nothing_dirty() {
    let mut b = cache(BcacheCacheMode::Writethrough, |_| {});
    let mut log = Log::default();
    write_scattered(&mut b, 200, &mut log);
    let bytes =
        |t| log.0.iter().filter(|x| x.0 == t && x.1 == Op::Write).map(|x| u64::from(x.3)).sum::<u64>();
    assert_eq!(bytes(Target::Backing), 200 * UNIT);
    assert_eq!(bytes(Target::Cache), 200 * UNIT);
    assert_eq!(b.stats().dirty_data, 0);
    assert_eq!(b.writeback_due(), None);
    assert_eq!(b.writeback_rate(), 0);
    assert_eq!(b.writeback_step(SEC, log.wb_io(SEC)).ios, 0);
}

/// An fsync's flush (`cached_dev_nodata()`) reaches the cache device (the journal's
/// flush) and the backing device, in writeback and in writethrough mode.
#[test]
fn a_flush_reaches_both_devices() {
    for mode in [BcacheCacheMode::Writeback, BcacheCacheMode::Writethrough] {
        let mut b = cache(mode, |_| {});
        let mut flushed = Vec::new();
        let done = b.flush(|t| {
            flushed.push(t);
            if t == Target::Cache {
                50
            } else {
                80
            }
        });
        assert_eq!(flushed, [Target::Cache, Target::Backing]);
        assert_eq!(done, 80);
        assert_eq!(b.stats().flushes, 1);
    }
}

/// A write over a key waiting in the keybuf drops it from the buffer and is itself a
/// writeback write; a write over a key in flight keeps it dirty (its replace fails).
#[test]
fn a_write_over_a_key_being_written_back_stays_dirty() {
    let mut b = cache(BcacheCacheMode::Writeback, |c| c.writeback_percent = 0);
    let mut log = Log::default();
    b.write(0, 100 * UNIT, UNIT as u32, true, 0, log.io(0));
    b.writeback_step(1, log.wb_io(1));
    assert_eq!(b.wb.flights.len(), 1, "read issued");
    b.write(0, 100 * UNIT, UNIT as u32, true, 2, log.io(2));
    let mut t = 2;
    while let Some(d) = b.writeback_due().filter(|&d| d < 10 * SEC) {
        t = d;
        b.writeback_step(t, log.wb_io(t));
    }
    assert_eq!(b.stats().writeback_keys_failed, 1);
    assert_eq!(b.stats().dirty_data, UNIT, "the new data is still dirty");
    // After writeback_delay (30 s) the thread finds it again.
    run(&mut b, t, 100 * SEC, None, &mut log);
    assert_eq!(b.stats().dirty_data, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Under any mix of writes (sync or not), reads and writeback steps: dirty data is the
    /// dirty index entries (never negative: a u64 that would wrap), never more than was
    /// written at writeback, and every writeback read is of data dirty when it is issued
    /// (a clean extent is never written back).
    #[test]
    fn dirty_data_stays_consistent_and_only_dirty_data_is_written_back(
        ops in proptest::collection::vec((0u8..4, 0u64..2048, 1u32..5, 0u64..400), 1..300),
        kernel in prop_oneof![Just(BcacheKernel::V4_15), Just(BcacheKernel::V5_10)],
        percent in prop_oneof![Just(0u32), Just(10u32)],
    ) {
        let mut b = cache(BcacheCacheMode::Writeback, |c| {
            c.kernel = kernel;
            c.writeback_percent = percent;
            c.writeback_delay = 1;
        });
        let mut log = Log::default();
        let mut written = 0u64;
        let mut t: Nanos = 0;
        for (op, unit, len, dt) in ops {
            t += dt * 1_000_000;
            let (offset, bytes) = (unit * UNIT, len * UNIT as u32);
            match op {
                0 | 1 => {
                    let before = b.stats().dirty_data;
                    b.write(op as usize, offset, bytes, op == 0, t, log.io(t));
                    written += b.stats().dirty_data.saturating_sub(before);
                }
                2 => {
                    let r = b.read(2, offset, bytes, t, log.io(t));
                    if let Some((o, n)) = r.insert {
                        b.insert(2, o, n, r.done, log.io(r.done));
                    }
                }
                _ => {
                    if let Some(d) = b.writeback_due().filter(|&d| d <= t) {
                        log.0.clear();
                        b.writeback_step(d, log.wb_io(d));
                        for &(target, op, o, n) in &log.0 {
                            if target == Target::Cache && op == Op::Read {
                                for u in o / UNIT..(o + u64::from(n)) / UNIT {
                                    prop_assert!(b.lookup(u).is_some_and(|(_, d)| d), "clean unit {u} read for writeback");
                                }
                            }
                        }
                    }
                }
            }
            let dirty = b.stats().dirty_data;
            prop_assert!(dirty <= written, "dirty {dirty} above written {written}");
            prop_assert!(dirty <= 1 << 30);
            prop_assert_eq!(dirty, dirty_units(&mut b) * UNIT);
            let chunks: u64 = b.wb.chunks.iter().map(|&c| u64::from(c)).sum();
            prop_assert_eq!(chunks * UNIT, dirty);
        }
    }
}

/// Dirty data survives a reboot (the cache set is persistent): the thread starts again
/// when the device is registered and writes it back; a blank device loses it.
#[test]
fn dirty_data_is_written_back_after_a_reboot() {
    let mut b = cache(BcacheCacheMode::Writeback, |c| c.writeback_percent = 0);
    let mut log = Log::default();
    write_scattered(&mut b, 100, &mut log);
    b.restart(false);
    assert_eq!(b.stats().dirty_data, 100 * UNIT);
    assert_eq!(b.writeback_due(), None, "asleep until registered");
    b.resume_writeback(SEC);
    assert_eq!(b.writeback_due(), Some(SEC));
    run(&mut b, SEC, 60 * SEC, None, &mut log);
    assert_eq!(b.stats().dirty_data, 0);
    write_scattered(&mut b, 10, &mut log);
    assert_eq!(b.restart(true).dirty_lost, 10 * UNIT);
    b.resume_writeback(2 * SEC);
    assert_eq!(b.writeback_due(), None);
}
