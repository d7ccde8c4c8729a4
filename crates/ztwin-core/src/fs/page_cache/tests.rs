use super::lru::{ACTIVE, F_RECLAIM, INACTIVE};
use super::*;
use crate::sim::time::{MS, US};
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// A driver with a device that completes every I/O after a fixed latency, recording them.
struct Drv {
    pc: PageCache,
    now: Nanos,
    lat: Nanos,
    /// Bytes per second of a device serving one I/O at a time (0: every I/O in parallel).
    bw: u64,
    busy: Nanos,
    reads: Vec<DevIo>,
    writes: Vec<DevIo>,
}

impl Drv {
    fn new(p: PageCacheParams) -> Drv {
        Drv {
            pc: PageCache::new(p).unwrap(),
            now: 0,
            lat: 100 * US,
            bw: 0,
            busy: 0,
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }

    /// Issues `io` at `t`: its completion.
    fn issue(&mut self, io: &DevIo, t: Nanos) -> Nanos {
        let done = match (u64::from(io.bytes) * SEC).checked_div(self.bw) {
            None => t + self.lat,
            Some(service) => {
                self.busy = self.busy.max(t) + service;
                self.busy
            }
        };
        match io.op {
            Op::Read => self.reads.push(*io),
            Op::Write => self.writes.push(*io),
        }
        self.pc.io_done_at(io, done);
        done
    }

    fn with_budget(bytes: u64) -> Drv {
        Drv::new(PageCacheParams::with_budget(bytes))
    }

    /// A whole read by a thread that waits for it: returns (and moves the clock to) the
    /// time its data is there.
    fn read(&mut self, ra: &mut FileRa, f: FileId, off: u64, len: u64) -> Nanos {
        let t = self.read_at(ra, f, off, len);
        self.now = t;
        t
    }

    fn read_at(&mut self, ra: &mut FileRa, f: FileId, off: u64, len: u64) -> Nanos {
        let (mut pos, end) = (off, off + len);
        let mut t = self.now;
        let mut done = self.now;
        for _ in 0..1000 {
            let plan = self.pc.read(ra, f, pos, end - pos, t);
            done = done.max(plan.wait_until);
            for io in plan.ios() {
                let c = self.issue(io, t);
                done = done.max(c);
            }
            pos += plan.done_bytes;
            match plan.resume_at {
                Some(r) => t = t.max(r),
                None => return done,
            }
            if pos >= end {
                return done;
            }
        }
        panic!("read did not finish");
    }

    /// A whole write at the current time: returns (and moves the clock to) the time the
    /// write() call returns.
    fn write(&mut self, task: &mut Dirtier, f: FileId, off: u64, len: u64) -> Nanos {
        let (mut pos, end) = (off, off + len);
        let mut t = self.now;
        for _ in 0..100_000 {
            let plan = self.pc.write(task, f, pos, end - pos, t);
            let mut ready = plan.wait_until;
            for io in plan.reads() {
                let c = self.issue(io, t);
                ready = ready.max(c);
            }
            t = ready + plan.pause_ns;
            if let Some(r) = plan.retry_at {
                t = t.max(r);
            }
            pos += plan.done_bytes;
            if pos >= end && !task.recheck {
                self.now = self.now.max(t);
                return t;
            }
            // Let the flusher run while the writer sleeps.
            self.flush_until(t);
            self.now = self.now.max(t);
        }
        panic!("write did not finish");
    }

    /// fsync (or a ranged sync) to its end: returns (and moves the clock to) the data
    /// part's end.
    fn sync(&mut self, mut w: SyncWalk) -> Nanos {
        let mut t = self.now;
        for _ in 0..1_000_000 {
            match self.pc.sync_next(&mut w, t) {
                SyncStep::Write(io) => {
                    self.issue(&io, t);
                }
                SyncStep::Wait(u) => t = u,
                SyncStep::Done(u) => {
                    self.now = u;
                    return u;
                }
            }
        }
        panic!("sync did not finish");
    }

    /// Runs the flusher at every due time up to `until`.
    fn flush_until(&mut self, until: Nanos) {
        for _ in 0..1_000_000 {
            let Some(due) = self.pc.writeback_due() else { return };
            if due > until {
                return;
            }
            let t = due.max(self.now);
            while let Some(io) = self.pc.writeback_next(t) {
                self.issue(&io, t);
            }
            self.now = t;
        }
    }
}

fn pages(ios: &[DevIo]) -> Vec<(u64, u64)> {
    ios.iter().map(|io| (io.offset / PAGE_SIZE, u64::from(io.bytes) / PAGE_SIZE)).collect()
}

// ---- lists ----

#[test]
fn a_page_read_twice_moves_to_the_active_list() {
    let mut d = Drv::with_budget(4 * MIB);
    let f = d.pc.add_file(64 * MIB).unwrap();
    let mut ra = d.pc.file_ra();
    d.read(&mut ra, f, 40 * MIB, 4 * KIB);
    let idx = 40 * MIB / PAGE_SIZE;
    let st = d.pc.page_state(f, idx).unwrap();
    assert!(!st.active && st.referenced, "first access: inactive, PG_referenced");
    // The same page again through the same file, right after: the kernel does not mark a
    // page the previous read ended in.
    d.read(&mut ra, f, 40 * MIB, 4 * KIB);
    assert!(!d.pc.page_state(f, idx).unwrap().active);
    // Through another open file (a second reader), it is a second access.
    let mut ra2 = d.pc.file_ra();
    d.read(&mut ra2, f, 40 * MIB, 4 * KIB);
    let st = d.pc.page_state(f, idx).unwrap();
    assert!(st.active && !st.referenced, "second access: active, bit cleared");
    assert_eq!(d.pc.stats().pgactivate, 1);
    d.pc.check();
}

#[test]
fn inactive_is_low_follows_the_ratio() {
    let mut d = Drv::with_budget(8 * MIB);
    d.pc.nr = [100, 100];
    assert!(!d.pc.inactive_is_low());
    d.pc.nr = [100, 101];
    assert!(d.pc.inactive_is_low());
    // 4 GiB of lists: ratio isqrt(40) = 6.
    let gb4 = 4 << (30 - PAGE_SHIFT);
    d.pc.nr = [gb4 / 6, gb4 - gb4 / 6];
    assert!(!d.pc.inactive_is_low());
    d.pc.nr = [gb4 / 8, gb4 - gb4 / 8];
    assert!(d.pc.inactive_is_low());
    d.pc.nr = [0, 0];
}

#[test]
fn uniform_random_reads_hit_about_n_over_m() {
    // N = 2048 pages cached of M = 8192: expect about N/M = 25% hits.
    let mut d = Drv::with_budget(8 * MIB);
    let m = 8192u64;
    let f = d.pc.add_file(m * PAGE_SIZE).unwrap();
    let mut ra = d.pc.file_ra();
    ra.fadvise_random();
    let mut rng = rand_pcg::Pcg64::new(7, 11);
    use rand::Rng;
    for _ in 0..40_000 {
        let p = rng.random_range(0..m);
        d.read(&mut ra, f, p * PAGE_SIZE, PAGE_SIZE);
    }
    let s0 = d.pc.stats();
    let n = 200_000;
    for _ in 0..n {
        let p = rng.random_range(0..m);
        d.read(&mut ra, f, p * PAGE_SIZE, PAGE_SIZE);
    }
    let s = d.pc.stats();
    let hits = (s.read_hit_pages - s0.read_hit_pages) as f64 / n as f64;
    let expect = s.cached as f64 / m as f64;
    assert!(s.cached > 2048 - 40 && s.cached <= 2048, "cache full: {}", s.cached);
    assert!((hits - expect).abs() < 0.01, "hit ratio {hits} vs N/M {expect}");
    assert!(s.workingset_refault_file > 0);
    d.pc.check();
}

#[test]
fn a_refault_within_the_active_list_is_activated() {
    let mut d = Drv::with_budget(MIB); // 256 pages
    let f = d.pc.add_file(64 * MIB).unwrap();
    let mut ra = d.pc.file_ra();
    ra.fadvise_random();
    // 100 hot pages, read twice (by two readers): active.
    for p in 0..100 {
        d.read(&mut ra, f, p * 2 * PAGE_SIZE, PAGE_SIZE);
        let mut other = d.pc.file_ra();
        other.fadvise_random();
        d.read(&mut other, f, p * 2 * PAGE_SIZE, PAGE_SIZE);
    }
    assert_eq!(d.pc.nr[ACTIVE], 100);
    // A page read once, then pushed out by 200 others.
    let victim = 5000;
    d.read(&mut ra, f, victim * PAGE_SIZE, PAGE_SIZE);
    for p in 0..200 {
        d.read(&mut ra, f, (6000 + p) * PAGE_SIZE, PAGE_SIZE);
    }
    assert!(d.pc.page_state(f, victim).is_none(), "evicted");
    // Its refault distance (about the evictions since) is within the active list's size.
    let before = d.pc.stats().workingset_activate_file;
    d.read(&mut ra, f, victim * PAGE_SIZE, PAGE_SIZE);
    assert!(d.pc.page_state(f, victim).unwrap().active, "refault activates");
    assert_eq!(d.pc.stats().workingset_activate_file, before + 1);
    d.pc.check();
}

#[test]
fn reclaim_moves_dirty_pages_out_of_the_way_until_written() {
    let mut p = PageCacheParams::with_budget(MIB); // 256 pages
    p.dirty_writeback_centisecs = 0; // no flusher: nothing is written behind our back
    let mut d = Drv::new(p);
    let f = d.pc.add_file(0).unwrap();
    let mut task = Dirtier::default();
    d.write(&mut task, f, 0, 8 * PAGE_SIZE);
    let mut ra = d.pc.file_ra();
    ra.fadvise_random();
    let g = d.pc.add_file(64 * MIB).unwrap();
    for i in 0..300 {
        d.read(&mut ra, g, i * 4 * PAGE_SIZE, PAGE_SIZE);
    }
    // The dirty pages reached the inactive tail and were activated with PG_reclaim.
    for i in 0..8 {
        let s = d.pc.slot_of(f, i).expect("a dirty page is never evicted");
        let fl = d.pc.pages[s as usize].flags;
        assert!(fl & lru::F_ACTIVE != 0 && fl & F_RECLAIM != 0);
    }
    assert_eq!(d.pc.stats().nr_vmscan_immediate_reclaim, 8);
    // Written: their writeback end rotates them to the inactive tail.
    d.sync(d.pc.fsync(f));
    d.pc.retire(d.now);
    assert_eq!(d.pc.stats().pgrotated, 8);
    let tail = d.pc.lists[INACTIVE].1;
    assert_eq!(lru::key_file(d.pc.pages[tail as usize].key), f);
    d.pc.check();
}

// ---- readahead ----

#[test]
fn a_random_16k_pread_reads_its_4_pages() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(1 << 30).unwrap();
    let mut ra = d.pc.file_ra();
    d.read(&mut ra, f, 1000 * 16 * KIB, 16 * KIB);
    d.read(&mut ra, f, 3 * 16 * KIB, 16 * KIB);
    assert_eq!(pages(&d.reads), vec![(4000, 4), (12, 4)]);
}

#[test]
fn a_read_after_cached_history_gets_context_readahead() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(1 << 30).unwrap();
    let mut ra = d.pc.file_ra();
    ra.fadvise_random();
    d.read(&mut ra, f, 100 * PAGE_SIZE, 10 * PAGE_SIZE); // pages 100..109 cached
    d.reads.clear();
    let mut ra = d.pc.file_ra();
    d.read(&mut ra, f, 500 * PAGE_SIZE, PAGE_SIZE); // prev_pos away from 110
    d.reads.clear();
    // 10 cached pages before 110, more than the 4 asked: min(10 + 4, 32) = 14 pages.
    d.read(&mut ra, f, 110 * PAGE_SIZE, 16 * KIB);
    assert_eq!(pages(&d.reads), vec![(110, 14)]);
    assert_eq!((ra.start, ra.size, ra.async_size), (110, 14, 1));
    // POSIX_FADV_RANDOM reads just the request, whatever is cached before it.
    d.reads.clear();
    let mut rnd = d.pc.file_ra();
    rnd.fadvise_random();
    d.read(&mut rnd, f, 124 * PAGE_SIZE, 16 * KIB);
    assert_eq!(pages(&d.reads), vec![(124, 4)]);
}

#[test]
fn sequential_reads_ramp_the_window_up() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(1 << 30).unwrap();
    let mut ra = d.pc.file_ra();
    // At offset 0: the initial window for 4 pages is 8, the async part 4.
    d.read(&mut ra, f, 0, 16 * KIB);
    assert_eq!(pages(&d.reads), vec![(0, 8)]);
    assert_eq!((ra.start, ra.size, ra.async_size), (0, 8, 4));
    // Page 4 carries PG_readahead: the next window, 16 pages, all async.
    d.read(&mut ra, f, 16 * KIB, 16 * KIB);
    assert_eq!(pages(&d.reads)[1], (8, 16));
    d.read(&mut ra, f, 32 * KIB, 16 * KIB);
    assert_eq!(pages(&d.reads)[2], (24, 32));
    for i in 3..30 {
        d.read(&mut ra, f, i * 16 * KIB, 16 * KIB);
    }
    // Then windows of ra_pages (32 pages = 128 KiB) each.
    assert!(pages(&d.reads)[3..].iter().all(|&(_, n)| n == 32));
    let s = d.pc.stats();
    assert!(s.read_hit_pages > 100);
}

#[test]
fn a_partly_cached_read_gets_the_initial_window_after_its_cached_part() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(1 << 30).unwrap();
    let mut ra = d.pc.file_ra();
    ra.fadvise_random();
    d.read(&mut ra, f, 1000 * PAGE_SIZE, PAGE_SIZE); // page 1000 cached
    d.reads.clear();
    let mut ra = d.pc.file_ra();
    // Pages 1000..1003: the first is copied, then a sequential miss at 1001 (prev_pos is
    // its start): initial window for 3 pages, 8.
    d.read(&mut ra, f, 1000 * PAGE_SIZE, 16 * KIB);
    assert_eq!(pages(&d.reads), vec![(1001, 8)]);
}

#[test]
fn reads_stop_at_end_of_file() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(10 * PAGE_SIZE + 100).unwrap();
    let mut ra = d.pc.file_ra();
    let plan = d.pc.read(&mut ra, f, 8 * PAGE_SIZE, 16 * KIB, 0);
    assert_eq!(plan.done_bytes, 2 * PAGE_SIZE + 100);
    assert_eq!(plan.resume_at, None);
    assert_eq!(pages(plan.ios()), vec![(8, 3)]);
    let plan = d.pc.read(&mut ra, f, 20 * PAGE_SIZE, 16 * KIB, 0);
    assert_eq!((plan.done_bytes, plan.ios().len()), (0, 0));
    // A 3-page file read from 0: the initial window (8 pages, 4 async) is cut to 3, and
    // the kernel's wrapped difference marks no page PG_readahead.
    let g = d.pc.add_file(3 * PAGE_SIZE).unwrap();
    let mut ra = d.pc.file_ra();
    let plan = d.pc.read(&mut ra, g, 0, 16 * KIB, 0);
    assert_eq!(pages(plan.ios()), vec![(0, 3)]);
    for i in 0..3 {
        let s = d.pc.slot_of(g, i).unwrap();
        assert_eq!(d.pc.pages[s as usize].flags & lru::F_READAHEAD, 0);
    }
}

#[test]
fn a_reader_of_a_page_in_flight_waits_for_it() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(1 << 30).unwrap();
    let mut ra = d.pc.file_ra();
    let plan = d.pc.read(&mut ra, f, 64 * PAGE_SIZE, PAGE_SIZE, 0);
    d.pc.io_done_at(&plan.ios()[0], 5 * MS);
    let mut ra2 = d.pc.file_ra();
    let plan2 = d.pc.read(&mut ra2, f, 64 * PAGE_SIZE, PAGE_SIZE, MS);
    assert_eq!((plan2.ios().len(), plan2.wait_until, plan2.miss_pages), (0, 5 * MS, 1));
}

// ---- writes ----

#[test]
fn a_partial_write_of_an_uncached_page_reads_it_first() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(100 * PAGE_SIZE).unwrap();
    let mut task = Dirtier::default();
    // A full page: no read. 512 bytes inside the file: a read. Past the end: zeroed.
    let p = d.pc.write(&mut task, f, 4 * PAGE_SIZE, PAGE_SIZE, 0);
    assert_eq!(p.reads().len(), 0);
    let p = d.pc.write(&mut task, f, 10 * PAGE_SIZE + 512, 512, 0);
    assert_eq!(pages(p.reads()), vec![(10, 1)]);
    d.pc.io_done_at(&p.reads()[0], MS);
    let p = d.pc.write(&mut task, f, 200 * PAGE_SIZE + 512, 512, 0);
    assert_eq!(p.reads().len(), 0);
    assert_eq!(d.pc.file_size(f), 200 * PAGE_SIZE + 1024);
    // A cached page: no read, even in part.
    let p = d.pc.write(&mut task, f, 10 * PAGE_SIZE, 100, 2 * MS);
    assert_eq!(p.reads().len(), 0);
    // A write across pages 20..22 partial at both ends: two reads.
    let p = d.pc.write(&mut task, f, 20 * PAGE_SIZE + 1, 2 * PAGE_SIZE, 2 * MS);
    assert_eq!(pages(p.reads()), vec![(20, 1), (22, 1)]);
    assert_eq!(d.pc.file_dirty_pages(f), 6);
    assert!(!d.pc.page_state(f, 4).unwrap().referenced, "a write does not mark accessed");
}

/// A new file in a file's place (a binary log file after a rotation, in the slot of an
/// older one): before, a 512-byte append into a page of the old file that reclaim evicted
/// reads it back (it is inside i_size); after `truncate` the file is empty, none of its
/// pages, dirty ones included, nor their shadow entries stay, and the same appends read
/// nothing (past the end of file, zeroed).
#[test]
fn a_new_file_in_an_old_files_place_starts_empty_and_its_appends_read_nothing() {
    let mut d = Drv::with_budget(256 * KIB); // 64 pages
    let f = d.pc.add_file(0).unwrap();
    let g = d.pc.add_file(0).unwrap();
    let mut task = Dirtier::default();
    // The old file: 200 whole pages written and synced (no read: whole pages past the
    // end), most of them evicted since (shadows), the last ones dirty again.
    d.write(&mut task, f, 0, 200 * PAGE_SIZE);
    d.sync(d.pc.fsync(f));
    d.write(&mut task, g, 0, 32 * PAGE_SIZE);
    d.sync(d.pc.fsync(g));
    d.write(&mut task, f, 199 * PAGE_SIZE, 512);
    assert!(d.reads.is_empty(), "{:?}", d.reads);
    assert!(d.pc.slot_of(f, 0).is_none() && d.pc.file_dirty_pages(f) == 1);
    let shadows =
        (0..200).filter(|&i| d.pc.table.get(lru::page_key(f, i)).is_some_and(|v| v & lru::SHADOW != 0));
    assert!(shadows.count() >= 16, "evicted pages leave shadows (the last 64 evictions)");
    // Inside the old file's size, an evicted page is read before a partial write.
    let p = d.pc.write(&mut task, f, 512, 512, d.now);
    assert_eq!(pages(p.reads()), vec![(0, 1)]);
    d.pc.io_done_at(&p.reads()[0], d.now + MS);
    d.now += MS;
    let (dirty, cached, other) = (d.pc.stats().nr_dirty, d.pc.stats().cached, d.pc.file_cached_pages(g));
    let dropped = d.pc.truncate(f, d.now);
    d.pc.check();
    assert_eq!((d.pc.file_size(f), d.pc.file_cached_pages(f), d.pc.file_dirty_pages(f)), (0, 0, 0));
    assert_eq!(dropped, cached - d.pc.stats().cached);
    assert_eq!(d.pc.stats().nr_dirty, dirty - 2, "pages 0 and 199 were dirty");
    assert!((0..200).all(|i| d.pc.table.get(lru::page_key(f, i)).is_none()), "no shadow left");
    assert_eq!(d.pc.file_cached_pages(g), other, "the other file keeps its pages");
    // The new file's appends, as the binary log writes them: nothing read.
    d.reads.clear();
    let mut off = 0;
    for len in [154, 643, 643, 4096 - 1440, 643, 1683, 643] {
        d.write(&mut task, f, off, len);
        off += len;
    }
    assert!(d.reads.is_empty(), "{:?}", d.reads);
    assert_eq!(d.pc.file_size(f), off);
    d.pc.check();
}

#[test]
fn a_write_past_the_background_limit_starts_the_flusher() {
    let mut d = Drv::with_budget(16 * MIB); // 4096 pages: bg 409, thresh 819
    let f = d.pc.add_file(0).unwrap();
    let (bg, thresh) = d.pc.dirty_limits();
    assert_eq!((bg, thresh), (409, 819));
    let mut task = Dirtier::default();
    d.pc.write(&mut task, f, 0, 16 * KIB, 0);
    // The first dirty file arms the periodic wakeup, 5 s later.
    assert_eq!(d.pc.writeback_due(), Some(5 * SEC));
    let mut pos = 16 * KIB;
    while d.pc.stats().nr_dirty <= bg + 64 {
        let p = d.pc.write(&mut task, f, pos, 16 * KIB, MS);
        assert_eq!(p.pause_ns, 0, "below freerun no pause");
        pos += 16 * KIB;
    }
    assert_eq!(d.pc.writeback_due(), Some(MS), "woken at once");
    let io = d.pc.writeback_next(MS).expect("background writeback");
    assert_eq!(io.op, Op::Write);
    assert_eq!((io.offset, io.bytes), (0, (BIO_MAX_VECS * PAGE_SIZE) as u32));
}

#[test]
fn past_the_dirty_limit_the_writer_is_throttled() {
    let mut p = PageCacheParams::with_budget(16 * MIB);
    p.dirty_writeback_centisecs = 0;
    let mut d = Drv::new(p);
    let f = d.pc.add_file(0).unwrap();
    let (bg, thresh) = d.pc.dirty_limits();
    let mut task = Dirtier::default();
    let mut pos = 0;
    let mut first_pause = None;
    // Nobody writes back: the dirty pages grow to the limit.
    for _ in 0..2000 {
        let p = d.pc.write(&mut task, f, pos, PAGE_SIZE, 0);
        pos += p.done_bytes;
        let dirty = d.pc.stats().nr_dirty;
        if p.pause_ns > 0 && first_pause.is_none() {
            first_pause = Some(dirty);
        }
        if dirty >= thresh {
            break;
        }
    }
    let first = first_pause.expect("throttled");
    assert!(first > (bg + thresh) / 2, "no pause below freerun: {first}");
    // At the limit: pos_ratio 0, every check sleeps max_pause and checks again; max_pause
    // is dirty / (1 + bw / 32) + 1 jiffies at 100 MB/s (25600 pages/s): 2 jiffies, 8 ms.
    // The writer checks only every nr_dirtied_pause pages (8 once the limit is exceeded).
    let mut p = d.pc.write(&mut task, f, pos, PAGE_SIZE, SEC);
    for _ in 0..1000 {
        if p.pause_ns > 0 {
            break;
        }
        pos += p.done_bytes;
        p = d.pc.write(&mut task, f, pos, PAGE_SIZE, SEC);
    }
    assert!(d.pc.stats().nr_dirty >= thresh);
    assert_eq!(p.pause_ns, 8 * MS);
    assert!(task.recheck);
    let p = d.pc.write(&mut task, f, pos, PAGE_SIZE, SEC + 8 * MS);
    assert_eq!((p.pause_ns, p.done_bytes), (8 * MS, 0));
    assert!(d.pc.stats().dirty_throttle_pauses >= 2);
}

#[test]
fn a_throttled_writer_follows_the_write_bandwidth() {
    // A writer at full speed against a 40 MB/s device: it is held near the device's rate.
    let mut d = Drv::with_budget(64 * MIB);
    d.bw = 40 * MIB;
    let f = d.pc.add_file(0).unwrap();
    let mut task = Dirtier::default();
    let mut pos = 0;
    let total = 400 * MIB;
    let mut worst = 0;
    while pos < total {
        d.write(&mut task, f, pos, MIB);
        pos += MIB;
        let s = d.pc.stats();
        worst = worst.max(s.nr_dirty + s.nr_writeback);
    }
    let rate = total as f64 / (d.now as f64 / SEC as f64) / MIB as f64;
    assert!(rate > 30.0 && rate < 50.0, "the writer follows the device: {rate:.1} MiB/s");
    let thresh = d.pc.dirty_limits().1;
    assert!(worst <= thresh + 256, "dirty + writeback {worst} stays near the limit {thresh}");
    assert!(d.pc.stats().dirty_throttle_pauses > 100);
}

// ---- fsync ----

#[test]
fn fsync_writes_every_dirty_page_of_the_file_and_only_those_merged_in_order() {
    let mut p = PageCacheParams::with_budget(64 * MIB);
    p.dirty_writeback_centisecs = 0;
    let mut d = Drv::new(p);
    let a = d.pc.add_file(MIB).unwrap();
    let b = d.pc.add_file(MIB).unwrap();
    let mut task = Dirtier::default();
    for &(f, pg, n) in &[(a, 40, 4), (b, 0, 4), (a, 3, 1), (a, 4, 2), (a, 100, 300), (a, 10, 4)] {
        d.pc.write(&mut task, f, pg * PAGE_SIZE, n * PAGE_SIZE, 0);
    }
    let done = d.sync(d.pc.fsync(a));
    assert_eq!(pages(&d.writes), vec![(3, 3), (10, 4), (40, 4), (100, 256), (356, 44)]);
    assert!(d.writes.iter().all(|io| io.file == a));
    assert_eq!(done, d.lat, "waits for its writes");
    assert_eq!(d.pc.file_dirty_pages(a), 0);
    assert_eq!(d.pc.file_dirty_pages(b), 4);
    d.pc.retire(done);
    assert_eq!(d.pc.stats().nr_writeback, 0);
    d.pc.check();
}

#[test]
fn an_o_dsync_write_writes_its_range_only() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(MIB).unwrap();
    let mut task = Dirtier::default();
    d.pc.write(&mut task, f, 0, 8 * PAGE_SIZE, 0);
    d.pc.write(&mut task, f, 20 * PAGE_SIZE, 512, 0);
    d.sync(d.pc.sync_range(f, 20 * PAGE_SIZE, 512));
    assert_eq!(pages(&d.writes), vec![(20, 1)]);
    assert_eq!(d.pc.file_dirty_pages(f), 8);
}

#[test]
fn fsync_waits_for_a_dirty_page_under_an_earlier_writeback() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(MIB).unwrap();
    let mut task = Dirtier::default();
    d.pc.write(&mut task, f, 0, PAGE_SIZE, 0);
    let mut w = d.pc.fsync(f);
    let SyncStep::Write(io) = d.pc.sync_next(&mut w, 0) else { panic!() };
    d.pc.io_done_at(&io, 10 * MS);
    // Dirtied again while under writeback, then synced again: wait, then write again.
    d.pc.write(&mut task, f, 0, 100, MS);
    let mut w = d.pc.fsync(f);
    assert_eq!(d.pc.sync_next(&mut w, MS), SyncStep::Wait(10 * MS));
    let SyncStep::Write(io2) = d.pc.sync_next(&mut w, 10 * MS) else { panic!() };
    d.pc.io_done_at(&io2, 11 * MS);
    assert_eq!(d.pc.sync_next(&mut w, 10 * MS), SyncStep::Done(11 * MS));
}

// ---- the flusher ----

#[test]
fn the_periodic_writeback_writes_files_dirty_for_30_seconds() {
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(MIB).unwrap();
    let mut task = Dirtier::default();
    d.now = SEC;
    d.write(&mut task, f, 0, 16 * KIB);
    assert_eq!(d.pc.writeback_due(), Some(6 * SEC));
    d.flush_until(30 * SEC);
    assert!(d.writes.is_empty(), "not expired yet");
    // Runs every 5 s: 6, 11, ... 31 s is the first at least 30 s after the dirtying.
    d.flush_until(31 * SEC);
    assert_eq!(pages(&d.writes), vec![(0, 4)]);
    assert_eq!(d.pc.stats().flusher_runs, 6);
    d.now = 32 * SEC;
    d.pc.retire(d.now);
    assert_eq!(d.pc.stats().nr_dirty + d.pc.stats().nr_writeback, 0);
}

#[test]
fn the_flusher_takes_files_oldest_first_and_keeps_nr_requests_in_flight() {
    let mut p = PageCacheParams::with_budget(256 * MIB);
    p.nr_requests = 4;
    let mut d = Drv::new(p);
    let files: Vec<FileId> = (0..3).map(|_| d.pc.add_file(0).unwrap()).collect();
    let mut task = Dirtier::default();
    // File 2 dirtied first, then 0, then 1; scattered pages.
    for (k, &f) in [files[2], files[0], files[1]].iter().enumerate() {
        d.now = k as u64 * SEC;
        for i in 0..6 {
            d.write(&mut task, f, i * 2 * PAGE_SIZE, PAGE_SIZE);
        }
    }
    d.now = 40 * SEC;
    let mut got = Vec::new();
    let t = d.now;
    d.pc.flusher.timer = Some(t);
    while let Some(io) = d.pc.writeback_next(t) {
        got.push(io);
        d.pc.io_done_at(&io, t + SEC);
    }
    assert_eq!(got.len(), 4, "blocked after nr_requests");
    assert_eq!(d.pc.writeback_due(), Some(t + SEC));
    assert!(got.iter().all(|io| io.file == files[2]));
    assert_eq!(pages(&got), vec![(0, 1), (2, 1), (4, 1), (6, 1)]);
    let t = t + SEC;
    while let Some(io) = d.pc.writeback_next(t) {
        got.push(io);
        d.pc.io_done_at(&io, t + SEC);
    }
    let order: Vec<FileId> = got.iter().map(|io| io.file).collect();
    assert_eq!(&order[4..8], &[files[2], files[2], files[0], files[0]]);
}

#[test]
fn after_an_fsync_the_file_keeps_its_old_dirtied_when() {
    // fsync writes the pages but leaves I_DIRTY_PAGES and the file's place on b_dirty:
    // a page dirtied later is written by the next periodic run that finds the file
    // expired, however young the page.
    let mut d = Drv::with_budget(64 * MIB);
    let f = d.pc.add_file(MIB).unwrap();
    let mut task = Dirtier::default();
    d.now = SEC;
    d.write(&mut task, f, 0, PAGE_SIZE);
    d.now = 2 * SEC;
    d.sync(d.pc.fsync(f));
    d.writes.clear();
    d.flush_until(20 * SEC);
    d.now = 20 * SEC;
    d.write(&mut task, f, 8 * PAGE_SIZE, PAGE_SIZE);
    d.flush_until(31 * SEC);
    assert_eq!(pages(&d.writes), vec![(8, 1)], "written 11 s after it was dirtied");
    assert_eq!(d.pc.files[f as usize].list, WbList::None, "clean: off the lists");
}

#[test]
fn the_position_ratio_is_2_at_freerun_1_at_the_setpoint_0_at_the_limit() {
    // Spans of odd length: the kernel divides by (limit - setpoint) | 1.
    let (freerun, limit) = (599, 801);
    let setpoint = (freerun + limit) / 2;
    assert_eq!(writeback_pos_ratio(setpoint, freerun, limit), 2048);
    assert_eq!(writeback_pos_ratio(setpoint, setpoint, limit), 1024);
    assert_eq!(writeback_pos_ratio(setpoint, limit, limit), 0);
}

fn writeback_pos_ratio(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    super::writeback::pos_ratio_polynom_for_tests(setpoint, dirty, limit)
}

#[test]
fn dirty_bytes_overrides_the_ratio() {
    let mut p = PageCacheParams::with_budget(GIB);
    // The ratios are kept per PAGE_SIZE: 20% is 819/4096 of the 262145 dirtyable pages.
    assert_eq!(PageCache::new(p).unwrap().dirty_limits(), (26176, 52416));
    p.dirty_bytes = 64 * MIB;
    p.dirty_background_bytes = 64 * MIB;
    // A background threshold at or above the limit is halved.
    assert_eq!(PageCache::new(p).unwrap().dirty_limits(), (8192, 16384));
}

#[test]
fn a_page_costs_32_bytes_and_the_model_is_sized_once() {
    assert_eq!(std::mem::size_of::<Page>(), 32);
    let d = Drv::with_budget(64 * MIB);
    let pages = d.pc.capacity_pages() as usize;
    assert!(d.pc.heap_bytes() < pages * 100, "{} bytes for {pages} pages", d.pc.heap_bytes());
    assert!(PageCache::new(PageCacheParams::with_budget(100 * KIB)).is_err());
}

// ---- invariants ----

#[derive(Debug, Clone)]
enum Opn {
    Read { file: u8, page: u16, pages: u8, random: bool },
    Write { file: u8, page: u16, bytes: u16 },
    Fsync { file: u8 },
    Dsync { file: u8, page: u16, pages: u8 },
    Tick { ms: u16 },
}

fn opn() -> impl Strategy<Value = Opn> {
    prop_oneof![
        (0u8..3, 0u16..600, 1u8..40, any::<bool>()).prop_map(|(file, page, pages, random)| Opn::Read {
            file,
            page,
            pages,
            random
        }),
        (0u8..3, 0u16..700, 1u16..20000).prop_map(|(file, page, bytes)| Opn::Write { file, page, bytes }),
        (0u8..3).prop_map(|file| Opn::Fsync { file }),
        (0u8..3, 0u16..700, 1u8..8).prop_map(|(file, page, pages)| Opn::Dsync { file, page, pages }),
        (0u16..8000).prop_map(|ms| Opn::Tick { ms }),
    ]
}

proptest! {
    /// Under any mix of reads, writes, syncs and time: the cache never holds more than its
    /// budget, a dirty page is always cached, the lists and counters agree, and an fsync
    /// leaves its file clean.
    #[test]
    fn invariants_hold(
        ops in proptest::collection::vec(opn(), 1..120),
        budget_pages in 64u64..400,
        wb in any::<bool>(),
        wrap in any::<bool>(),
        nr_requests in 1u32..8,
        lat_us in 1u64..20_000,
    ) {
        let mut p = PageCacheParams::with_budget(budget_pages * PAGE_SIZE);
        p.workingset = wb;
        p.writepages_wrap = wrap;
        p.nr_requests = nr_requests;
        let mut d = Drv::new(p);
        d.lat = lat_us * US;
        let files: Vec<FileId> = (0..3).map(|i| d.pc.add_file(i * 300 * PAGE_SIZE).unwrap()).collect();
        let mut ras: Vec<FileRa> = (0..3).map(|_| d.pc.file_ra()).collect();
        let mut task = Dirtier::default();
        for op in ops {
            match op {
                Opn::Read { file, page, pages, random } => {
                    let ra = &mut ras[file as usize];
                    ra.random = random;
                    d.read(ra, files[file as usize], u64::from(page) * PAGE_SIZE, u64::from(pages) * PAGE_SIZE);
                }
                Opn::Write { file, page, bytes } => {
                    d.write(&mut task, files[file as usize], u64::from(page) * PAGE_SIZE + 7, u64::from(bytes));
                }
                Opn::Fsync { file } => {
                    let f = files[file as usize];
                    d.sync(d.pc.fsync(f));
                    prop_assert_eq!(d.pc.file_dirty_pages(f), 0, "fsync leaves the file clean");
                    d.pc.retire(d.now);
                    for i in 0..1000 {
                        prop_assert!(!d.pc.page_state(f, i).is_some_and(|s| s.writeback), "waited for");
                    }
                }
                Opn::Dsync { file, page, pages } => {
                    let f = files[file as usize];
                    let (off, len) = (u64::from(page) * PAGE_SIZE, u64::from(pages) * PAGE_SIZE);
                    d.sync(d.pc.sync_range(f, off, len));
                    for i in page as u64..page as u64 + pages as u64 {
                        prop_assert!(!d.pc.page_state(f, i).is_some_and(|s| s.dirty));
                    }
                }
                Opn::Tick { ms } => {
                    let until = d.now + u64::from(ms) * MS;
                    d.flush_until(until);
                    d.now = until;
                    d.pc.retire(d.now);
                }
            }
            d.pc.check();
            let s = d.pc.stats();
            prop_assert!(s.cached <= budget_pages, "cached {} > budget {}", s.cached, budget_pages);
            prop_assert_eq!(s.cached, s.active_file + s.inactive_file);
        }
    }
}
