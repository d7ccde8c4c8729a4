use super::free_block::{backoff_sleep_us, scan_and_free, single_page_from_lru};
use super::lru_manager::{adapt_sleep_time, lru_list_batch};
use super::*;
use crate::db::innodb::mariadb_flush::PageState;
use crate::sim::time::{MS, SEC};
use proptest::prelude::*;
use std::collections::HashMap;

/// A buffer pool instance for the tests: the LRU list head first (the last 3/8 old), page
/// states, free frames; it checks that only clean pages are evicted and dirty ones written.
#[derive(Debug, Clone, Default)]
struct Pool {
    lru: Vec<PageKey>,
    state: HashMap<PageKey, PageState>,
    young: Vec<PageKey>,
    free: u64,
    last_page: u64,
    written: Vec<PageKey>,
    evicted: Vec<PageKey>,
}

fn k(p: u64) -> PageKey {
    PageKey::new(5, p)
}

impl Pool {
    /// `tail_first`: (page, dirty) from the LRU tail toward the head.
    fn new(tail_first: &[(u64, bool)], free: u64) -> Pool {
        let mut pool = Pool { free, last_page: 1 << 20, ..Pool::default() };
        for &(p, dirty) in tail_first.iter().rev() {
            pool.lru.push(k(p));
            pool.state.insert(k(p), if dirty { PageState::Dirty } else { PageState::Clean });
        }
        pool
    }

    fn pos(&self, key: PageKey) -> Option<usize> {
        self.lru.iter().position(|&x| x == key)
    }

    /// The writes completed: LRU-flushed pages are freed (`buf_page_io_complete`).
    fn complete_lru_writes(&mut self) {
        for key in std::mem::take(&mut self.written) {
            let i = self.pos(key).unwrap();
            self.lru.remove(i);
            self.state.remove(&key);
            self.free += 1;
        }
    }
}

impl PoolView for Pool {
    fn lru_len(&self) -> u64 {
        self.lru.len() as u64
    }
    fn free_len(&self) -> u64 {
        self.free
    }
    fn lru_prev(&self, at: Option<PageKey>) -> Option<PageKey> {
        match at {
            None => self.lru.last().copied(),
            Some(key) => self.pos(key).and_then(|i| i.checked_sub(1)).map(|i| self.lru[i]),
        }
    }
    fn is_old(&self, key: PageKey) -> Option<bool> {
        self.pos(key).map(|i| !self.young.contains(&key) && i * 8 >= self.lru.len() * 5)
    }
    fn page_state(&self, key: PageKey) -> PageState {
        self.state.get(&key).copied().unwrap_or(PageState::Absent)
    }
    fn last_page_no(&self, _space_id: u32) -> u64 {
        self.last_page
    }
    fn evict(&mut self, key: PageKey) {
        assert_eq!(self.page_state(key), PageState::Clean, "evicting {key:?}");
        let i = self.pos(key).unwrap();
        self.lru.remove(i);
        self.state.remove(&key);
        self.free += 1;
        self.evicted.push(key);
    }
    fn write(&mut self, key: PageKey) {
        assert_eq!(self.page_state(key), PageState::Dirty, "writing {key:?}");
        self.state.insert(key, PageState::Busy);
        self.written.push(key);
    }
}

fn pages(keys: &[PageKey]) -> Vec<u64> {
    keys.iter().map(|key| key.page_no()).collect()
}

/// Experiment 2's server: 60G pool, 16K pages, innodb_io_capacity 600, doublewrite off.
fn exp2() -> Params {
    Params {
        innodb_buffer_pool_size: 60 << 30,
        innodb_io_capacity: 600,
        innodb_doublewrite: false,
        ..Params::default()
    }
}

/// Its redo log: innodb_log_file_size 8G, two files.
fn exp2_log() -> LogAges {
    LogAges::new(8 << 30, 2, 16384, 0).unwrap()
}

/// The redo age that is `f` percent of `max_modified_age_async` (`lsn_age_factor` = f).
fn age_at(log: &LogAges, f: u64) -> u64 {
    (f * log.max_modified_age_async).div_ceil(100)
}

#[test]
fn defaults_and_instances_are_percona_57s() {
    let p = Params::default();
    assert_eq!((p.innodb_lru_scan_depth, p.innodb_page_cleaners, p.innodb_io_capacity), (1024, 4, 200));
    assert_eq!(p.innodb_cleaner_lsn_age_factor, LsnAgeFactor::HighCheckpoint);
    assert_eq!(p.innodb_empty_free_list_algorithm, EmptyFreeListAlgorithm::Backoff);
    assert_eq!((p.innodb_max_dirty_pages_pct, p.innodb_max_dirty_pages_pct_lwm), (75.0, 0.0));
    assert!(p.innodb_flush_sync && p.innodb_adaptive_flushing && p.innodb_doublewrite);
    // 128 MiB: one instance of 8191 frames, one page cleaner.
    let r = p.resolve();
    assert_eq!((r.instances, r.page_cleaners, r.instance_frames, r.io_capacity_max), (1, 1, 8191, 2000));
    assert_eq!(r.algorithm, EmptyFreeListAlgorithm::Backoff);
    // Experiment 2: 8 instances of 60 chunks (491,520 pages less one per chunk), 4 page
    // cleaners, io_capacity_max max(1200, 2000), neighbour areas of 64 pages.
    let r = exp2().resolve();
    assert_eq!((r.instances, r.page_cleaners, r.pool_size), (8, 4, 60 << 30));
    assert_eq!((r.instance_frames, 8 * r.instance_frames), (491_460, 3_931_680));
    assert_eq!((r.io_capacity, r.io_capacity_max), (600, 2000));
    assert_eq!(r.neighbours(), Neighbours { mode: 1, area: 64 });
    // 1.5 GiB with 8 instances is rounded up to a multiple of 8 x 128 MiB.
    assert_eq!(Params { innodb_buffer_pool_size: 1536 << 20, ..p }.resolve().pool_size, 2 << 30);
    // Under 1 GiB: one instance whatever is asked.
    assert_eq!(Params { innodb_buffer_pool_instances: 4, ..p }.resolve().instances, 1);
    // Backoff needs 5 x 256 pages per instance: 10 MiB of 16K pages (640) falls back to legacy.
    let small = Params { innodb_buffer_pool_size: 10 << 20, ..p }.resolve();
    assert_eq!(small.algorithm, EmptyFreeListAlgorithm::Legacy);
    // io_capacity_max below io_capacity lowers io_capacity; the lwm never exceeds the max.
    let low = Params { innodb_io_capacity_max: 100, innodb_max_dirty_pages_pct_lwm: 90.0, ..p }.resolve();
    assert_eq!((low.io_capacity, low.io_capacity_max, low.max_dirty_pages_pct_lwm), (100, 100, 75.0));
}

#[test]
fn a_page_belongs_to_the_instance_of_its_64_page_extent() {
    // With 8 instances the space's 2^20 multiple vanishes: (space + page_no / 64) % 8.
    for p in 0..64 {
        assert_eq!(instance_of(25, p, 8), 1);
    }
    assert_eq!(instance_of(25, 64, 8), 2);
    assert_eq!(instance_of(26, 0, 8), 2);
    assert_eq!(instance_of(25, 7 * 64, 8), 0);
    // Three instances: ((25 << 20) + 25 + 0) % 3.
    assert_eq!(instance_of(25, 0, 3), (((25u64 << 20) + 25) % 3) as usize);
    assert_eq!(instance_of_key(PageKey::new(25, 130), 8), 3);
    assert_eq!((0..5).map(|i| even_share(13, 5, i)).collect::<Vec<_>>(), vec![3, 3, 3, 2, 2]);
}

#[test]
fn the_lru_managers_sleep_shortens_as_the_free_list_empties() {
    // max_free = min(LRU, 1024) = 1024: thresholds 10 (1 %), 51 (5 %), 204 (20 %).
    let lru = 400_000;
    // Over 20 % free: one more millisecond, at most 1000.
    assert_eq!(adapt_sleep_time(500, lru, 1024, 7, 1000), 1000);
    assert_eq!(adapt_sleep_time(205, lru, 1024, 7, 10), 11);
    // Between 5 % and 20 %: unchanged.
    assert_eq!(adapt_sleep_time(100, lru, 1024, 7, 300), 300);
    assert_eq!(adapt_sleep_time(204, lru, 1024, 7, 300), 300);
    // Under 5 %: 50 ms less per iteration, down to 0 in 20 iterations from 1000.
    let mut s = 1000;
    let mut seen = vec![];
    for _ in 0..25 {
        s = adapt_sleep_time(40, lru, 1024, 7, s);
        seen.push(s);
    }
    assert_eq!(&seen[..3], &[950, 900, 850]);
    assert_eq!(seen[19], 0);
    assert!(seen[20..].iter().all(|&x| x == 0));
    // Under 5 % with less than 50 ms: unchanged.
    assert_eq!(adapt_sleep_time(40, lru, 1024, 7, 49), 49);
    // Under 1 % after a batch that did something: no sleep at all; after one that did
    // nothing: one more millisecond.
    assert_eq!(adapt_sleep_time(9, lru, 1024, 7, 1000), 0);
    assert_eq!(adapt_sleep_time(9, lru, 1024, 0, 10), 11);
    // A short LRU list lowers the thresholds (max_free = 200: 2, 10, 40).
    assert_eq!(adapt_sleep_time(1, 200, 1024, 1, 500), 0);
    assert_eq!(adapt_sleep_time(9, 200, 1024, 1, 500), 450);
    assert_eq!(adapt_sleep_time(41, 200, 1024, 1, 500), 501);
}

/// Runs one LRU manager over a pool of clean pages that user threads drain at `rate` frames
/// a second (a frame taken turns into an LRU page), for `secs` seconds; returns the sleeps
/// seen and the frames the threads could not get (the free list was empty).
fn drive_lru_manager(rate: u64, secs: u64) -> (Vec<u64>, u64) {
    let r = exp2().resolve();
    let mut m = LruManager::new(0, 1);
    let (mut free, mut lru) = (1024u64, 400_000u64);
    let (mut now, mut sleeps, mut missed) = (0, vec![], 0u64);
    let mut owed = 0u64; // frames asked (ns x rate) not yet converted
    while now < secs * SEC {
        let next = m.wake_at(now);
        owed += (next - now) * rate;
        let want = owed / SEC;
        owed %= SEC;
        let got = want.min(free);
        missed += want - got;
        free -= got;
        lru += got;
        now = next.max(now + 1);
        let b = m.begin(&r, now, free, lru);
        sleeps.push(m.sleep_ms);
        // The batch: clean pages only, evicted until the free target or its quota.
        let evict = b.max.min(b.free_target.saturating_sub(free));
        free += evict;
        lru -= evict;
        m.end(&LruBatchResult { written: 0, evicted: evict, scanned: evict });
    }
    (sleeps, missed)
}

#[test]
fn under_heavy_reads_the_lru_manager_stops_sleeping_then_settles_where_the_free_list_lasts() {
    // 3000 frames a second from one instance: 1024 free frames last 341 ms of the initial
    // 1000 ms sleep; the free list runs dry, the first iteration finds it empty (the initial
    // lru_n_flushed is 1) and stops sleeping; the sleep then grows a millisecond at a time
    // while more than 20 % stays free after it (1024 - 3 x sleep > 204: below 274 ms).
    let (sleeps, missed) = drive_lru_manager(3000, 60);
    assert_eq!(&sleeps[..3], &[0, 1, 2]);
    let last = *sleeps.last().unwrap();
    assert!((250..=300).contains(&last), "settled at {last} ms");
    // Only the first second's dry spell (about 2000 frames) went unserved.
    assert!((1500..=2100).contains(&missed), "{missed} frames missed");
    // 500 frames a second: the 1000 ms sleep never lets the list run dry.
    let (sleeps, missed) = drive_lru_manager(500, 30);
    assert!(sleeps.iter().all(|&s| s == 1000));
    assert_eq!(missed, 0);
}

#[test]
fn the_lru_batch_frees_clean_pages_and_writes_dirty_ones_within_its_limits() {
    let r = exp2().resolve();
    let nb = Neighbours { mode: 0, area: 64 };
    let mut m = LruManager::new(0, 1);
    // 2000 pages, dirty every third from the tail, none free: max = min(1024, 2000).
    let tail: Vec<(u64, bool)> = (0..2000).map(|p| (p * 10, p % 3 == 0)).collect();
    let mut pool = Pool::new(&tail, 0);
    let b = m.begin(&r, SEC, pool.free, pool.lru_len());
    assert_eq!(b, LruBatch { max: 1024, free_target: 1024, lru_min: 256, fold: 1 });
    let res = lru_list_batch(&mut pool, &b, &nb);
    // Processed pages reach 1024: 342 written (pages 0, 3, 6, ...), 682 evicted.
    assert_eq!((res.written, res.evicted, res.processed()), (342, 682, 1024));
    assert_eq!(pool.free, 682);
    assert_eq!(pages(&pool.written)[..3], [0, 30, 60]);
    // The written pages are freed as their writes complete.
    pool.complete_lru_writes();
    assert_eq!(pool.free, 1024);
    m.end(&res);
    assert_eq!(m.last_processed, 1024);
    // With 1000 frames free the next batch stops at the free target after 24 evictions.
    let mut pool = Pool::new(&tail, 1000);
    let b = m.begin(&r, 2 * SEC, pool.free, pool.lru_len());
    let res = lru_list_batch(&mut pool, &b, &nb);
    assert_eq!(pool.free, 1024);
    assert_eq!(res.evicted, 24);
    // A short list keeps BUF_LRU_MIN_LEN pages.
    let clean: Vec<(u64, bool)> = (0..300).map(|p| (p, false)).collect();
    let mut pool = Pool::new(&clean, 0);
    let b = m.begin(&r, 3 * SEC, pool.free, pool.lru_len());
    assert_eq!(b.max, 300);
    lru_list_batch(&mut pool, &b, &nb);
    assert_eq!(pool.lru.len(), 256);
}

/// A pool of 600 pages: page 70 at the tail with dirty neighbours 66..=69 and 71..=73 (73
/// young), clean 65 and 74, clean filler of another space toward the head.
fn neighbourhood() -> Pool {
    let mut tail = vec![(70, true)];
    tail.extend((66..=69).chain(71..=73).map(|p| (p, true)));
    tail.extend([(65, false), (74, false)]);
    let mut pool = Pool::new(&tail, 0);
    for p in 0..590 {
        let key = PageKey::new(9, p);
        pool.lru.insert(0, key);
        pool.state.insert(key, PageState::Clean);
    }
    pool.young.push(k(73));
    pool
}

#[test]
fn neighbours_are_the_contiguous_dirty_run_and_an_lru_batch_takes_only_old_ones() {
    let nb = Neighbours { mode: 1, area: 64 };
    // LRU batch: 66..=72 (73 is young), lowest first; the victim comes in order.
    let mut pool = neighbourhood();
    let n = batch::try_neighbors(&mut pool, k(70), FlushKind::Lru, 0, 1024, &nb, 1);
    assert_eq!(n, 7);
    assert_eq!(pages(&pool.written), vec![66, 67, 68, 69, 70, 71, 72]);
    // Flush-list batch: the young page too.
    let mut pool = neighbourhood();
    let n = batch::try_neighbors(&mut pool, k(70), FlushKind::List, 0, 1024, &nb, 1);
    assert_eq!(pages(&pool.written), vec![66, 67, 68, 69, 70, 71, 72, 73]);
    assert_eq!(n, 8);
    // A quota of 2 pages left: the first two of the run, then the victim itself.
    let mut pool = neighbourhood();
    batch::try_neighbors(&mut pool, k(70), FlushKind::List, 8, 10, &nb, 1);
    assert_eq!(pages(&pool.written), vec![66, 67, 70]);
    // Mode 0, or an LRU list under 512 pages: the page alone.
    let mut pool = neighbourhood();
    batch::try_neighbors(&mut pool, k(70), FlushKind::List, 0, 1024, &Neighbours { mode: 0, area: 64 }, 1);
    assert_eq!(pages(&pool.written), vec![70]);
    let mut pool = neighbourhood();
    batch::try_neighbors(&mut pool, k(70), FlushKind::List, 0, 1024, &nb, 2);
    assert_eq!(pages(&pool.written), vec![70]);
    // The area ends at the tablespace's last page.
    let mut pool = neighbourhood();
    pool.last_page = 71;
    batch::try_neighbors(&mut pool, k(70), FlushKind::List, 0, 1024, &nb, 1);
    assert_eq!(pages(&pool.written), vec![66, 67, 68, 69, 70, 71]);
    // A flush-list batch walks oldest first and counts neighbours against its quota.
    let mut pool = neighbourhood();
    let n = batch::flush_list_batch(&mut pool, [(k(70), 10), (k(74), 11), (k(5), 12)], 5, LSN_MAX, &nb, 1);
    assert_eq!((n, pages(&pool.written)), (5, vec![66, 67, 68, 69, 70]));
    let mut pool = neighbourhood();
    assert_eq!(batch::flush_list_batch(&mut pool, [(k(70), 10)], 5, 10, &nb, 1), 0);
}

#[test]
fn a_backoff_thread_waits_and_never_touches_a_page() {
    let mut fl = PerconaFlush::new(exp2(), exp2_log(), 0, true);
    let mut w = FrameWaiter::default();
    let mut steps = vec![];
    for _ in 0..24 {
        // Nothing free, an LRU batch running, dirty pages everywhere: still only waits.
        steps.push(fl.get_free_block(0, &mut w, 0, true, false));
    }
    let two = FrameStep::Yield { times: 2 };
    assert_eq!(&steps[..3], &[two, two, two]);
    let sleeps: Vec<u64> = steps[3..]
        .iter()
        .map(|s| match s {
            FrameStep::Sleep { us } => *us,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        sleeps,
        vec![
            1, 2, 4, 16, 16, 32, 32, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 10_000, 10_000, 10_000,
            10_000, 10_000
        ]
    );
    // One Innodb_buffer_pool_wait_free per round; nothing flushed, nothing scanned.
    assert_eq!(fl.stats.buffer_pool_wait_free, 24);
    assert_eq!((fl.stats.lru_single_flush_pages, fl.stats.buffer_pool_pages_flushed), (0, 0));
    assert_eq!(w.n_iterations, 24);
    // A frame appears: taken at the next round.
    assert_eq!(fl.get_free_block(0, &mut w, 3, false, false), FrameStep::Take);
    // A master or purge thread with priority: one yield, sleeps divided by 100.
    assert_eq!(backoff_sleep_us(0, true), None);
    assert_eq!(backoff_sleep_us(18, true), Some(81));
    assert_eq!(backoff_sleep_us(30, true), Some(100));
    let mut w = FrameWaiter::default();
    assert_eq!(fl.get_free_block(0, &mut w, 0, false, true), FrameStep::Yield { times: 1 });
}

#[test]
fn a_legacy_thread_scans_then_writes_one_page_itself() {
    let p = Params { innodb_empty_free_list_algorithm: EmptyFreeListAlgorithm::Legacy, ..exp2() };
    let mut fl = PerconaFlush::new(p, exp2_log(), 0, true);
    let mut w = FrameWaiter::default();
    // Round 0: a 100-page scan of the tail; it finds nothing and clears try_LRU_scan.
    assert_eq!(fl.get_free_block(0, &mut w, 0, false, false), FrameStep::ScanLru { whole_list: false });
    let dirty: Vec<(u64, bool)> = (0..300).map(|p| (p, true)).collect();
    let mut pool = Pool::new(&dirty, 0);
    assert!(!scan_and_free(&mut pool, false));
    let step = fl.after_scan(0, &mut w, false);
    assert_eq!(step, FrameStep::SinglePageFlush { sleep_first_us: 0 });
    assert!(!fl.free[0].try_lru_scan);
    // It writes the tail page itself (then fsyncs its file; the page is freed after).
    let what = single_page_from_lru(&mut pool);
    assert_eq!(what, SinglePage::Written(k(0)));
    fl.after_single_page_flush(0, &mut w, what);
    assert_eq!((fl.stats.buffer_pool_wait_free, fl.stats.lru_single_flush_pages), (1, 1));
    // Round 1 scans the whole list; round 2 sleeps 10 ms before its flush.
    assert_eq!(fl.get_free_block(0, &mut w, 0, false, false), FrameStep::ScanLru { whole_list: true });
    assert_eq!(fl.after_scan(0, &mut w, false), FrameStep::SinglePageFlush { sleep_first_us: 0 });
    fl.after_single_page_flush(0, &mut w, SinglePage::Nothing);
    assert_eq!(fl.stats.lru_single_flush_failure_count, 1);
    fl.get_free_block(0, &mut w, 0, false, false);
    assert_eq!(fl.after_scan(0, &mut w, false), FrameStep::SinglePageFlush { sleep_first_us: 10_000 });
    // A fresh thread skips the scan while try_LRU_scan is clear; a batch's end sets it.
    let mut w2 = FrameWaiter::default();
    assert_eq!(
        fl.get_free_block(0, &mut w2, 0, false, false),
        FrameStep::SinglePageFlush { sleep_first_us: 0 }
    );
    let b = fl.lru_begin(0, SEC, 0, 400);
    fl.lru_batch(0, &mut pool, &b);
    assert_eq!(fl.get_free_block(0, &mut w2, 0, false, false), FrameStep::ScanLru { whole_list: false });
    // With doublewrite on, a running LRU batch is waited for instead.
    let dw = Params { innodb_doublewrite: true, ..p };
    let mut fl = PerconaFlush::new(dw, exp2_log(), 0, true);
    assert_eq!(fl.get_free_block(0, &mut w2, 0, true, false), FrameStep::WaitLruBatchEnd);
    // A clean page at the tail is simply freed.
    let mut pool = Pool::new(&[(7, false), (8, true)], 0);
    assert_eq!(single_page_from_lru(&mut pool), SinglePage::Evicted(k(7)));
}

#[test]
fn high_checkpoint_asks_less_than_legacy_below_93_percent_of_the_async_age_and_more_above() {
    let log = exp2_log();
    let hc = exp2().resolve();
    let legacy = Params { innodb_cleaner_lsn_age_factor: LsnAgeFactor::Legacy, ..exp2() }.resolve();
    // 16 GiB of redo: capacity 15.46 GB, max_modified_age_async 12.18 GB.
    assert_eq!((log.capacity, log.max_modified_age_async), (15_461_878_580, 12_175_610_068));
    // Below innodb_adaptive_flushing_lwm (10 % of the capacity, f = 12.7): nothing.
    assert_eq!(cleaner::pct_for_lsn(&hc, &log, age_at(&log, 12)), 0);
    // ratio = 2000 / 600 = 3: legacy 3 f^1.5 / 7.5, high_checkpoint 3 f^2.5 / 700.5.
    let table = [
        (13, 18, 2),
        (20, 35, 7),
        (35, 82, 31),
        (50, 141, 75),
        (93, 358, 357),
        (94, 364, 366),
        (100, 400, 428),
        (107, 442, 507),
    ];
    for (f, l, h) in table {
        let age = age_at(&log, f);
        assert_eq!(
            (cleaner::pct_for_lsn(&legacy, &log, age), cleaner::pct_for_lsn(&hc, &log, age)),
            (l, h),
            "f = {f}"
        );
    }
    // Adaptive flushing off: nothing below the async age.
    let off = Params { innodb_adaptive_flushing: false, ..exp2() }.resolve();
    assert_eq!(cleaner::pct_for_lsn(&off, &log, age_at(&log, 50)), 0);
    assert_eq!(cleaner::pct_for_lsn(&off, &log, age_at(&log, 100)), 428);
}

fn obs(now_s: u64, lsn: u64, oldest: u64, activity: u64) -> CleanerObs {
    CleanerObs {
        now_ns: now_s * SEC,
        lsn,
        oldest_lsn: oldest,
        dirty_pages: 100_000,
        lru_len: 3_900_000,
        free_len: 8192,
        activity_count: activity,
        pending_reads: false,
    }
}

#[test]
fn past_the_async_age_the_cleaner_asks_io_capacity_max_and_below_it_averages() {
    let r = exp2().resolve();
    let log = exp2_log();
    let mut rec = Recommender::default();
    let none = |_: u64, c: &mut [u64]| c.fill(0);
    // First call remembers; no new redo asks nothing.
    assert_eq!(rec.recommend(&r, &log, &obs(1, 1_000, 1_000, 1), 0, none).n_pages, 0);
    assert_eq!(rec.recommend(&r, &log, &obs(2, 1_000, 1_000, 1), 0, none).n_pages, 0);
    // f = 50 (high_checkpoint 75 %, over 30): (PCT_IO(75) = 450 + 0 + 300 / 3) / 3 = 183,
    // shared by the pages old enough: instance 0 has all 300 of them.
    let lsn = 20_000_000_000;
    let o = obs(3, lsn, lsn - age_at(&log, 50), 1);
    let one = |_: u64, c: &mut [u64]| {
        c.fill(0);
        c[0] = 300;
    };
    let a = rec.recommend(&r, &log, &o, 0, one);
    assert_eq!((a.pct_for_lsn, a.pages_for_lsn, a.n_pages), (75, 100, 183));
    // (300 / 3 + 1) * 183 / 100 + 1 = 185; the others (0 / 3 + 1) * 183 / 100 + 1 = 2.
    assert_eq!(&a.per_instance[..8], &[185, 2, 2, 2, 2, 2, 2, 2]);
    // f = 20 (7 %): an even split, n_pages / 8.
    let o = obs(4, lsn + 1, lsn + 1 - age_at(&log, 20), 1);
    let b = rec.recommend(&r, &log, &o, 0, one);
    assert_eq!(b.n_pages, (r.pct_io(7) + 100) / 3);
    assert!(b.per_instance[..8].iter().all(|&n| n == b.n_pages / 8));
    // Past max_modified_age_async: PCT_IO(428) = 2568, not averaged, capped at 2000;
    // legacy's PCT_IO(400) = 2400 is capped too.
    let o = obs(5, lsn + 2, lsn + 2 - age_at(&log, 100), 1);
    assert_eq!(rec.recommend(&r, &log, &o, 0, none).n_pages, 2000);
    // At the dirty limit (75 %) with a young log: PCT_IO(100) averaged in.
    let mut dirty = obs(6, lsn + 3, lsn + 2, 1);
    dirty.dirty_pages = 3_000_000;
    let d = rec.recommend(&r, &log, &dirty, 0, none);
    assert_eq!((d.pct_for_dirty, d.n_pages), (100, (600 + 1) / 3));
}

#[test]
fn the_rates_are_averaged_every_flushing_avg_loops_passes() {
    let r = exp2().resolve();
    let log = exp2_log();
    let mut rec = Recommender::default();
    rec.recommend(&r, &log, &obs(0, 1, 1, 0), 0, |_, c| c.fill(0));
    for s in 1..=30 {
        rec.recommend(&r, &log, &obs(s, 1 + s * 1000, 1, 0), 100, |_, c| c.fill(0));
    }
    // 30 passes of 100 pages over 30 s: (3000 / 30 + 0) / 2; the LSN: (0 + 30000 / 30) / 2.
    assert_eq!((rec.avg_page_rate, rec.lsn_avg_rate), (50, 500));
}

#[test]
fn the_coordinator_flushes_by_activity_time_and_sync_requests() {
    let r = exp2().resolve();
    let log = exp2_log();
    let mut fl = PerconaFlush::new(exp2(), log, 0, true);
    let none = |_: u64, c: &mut [u64]| c.fill(0);
    // It sleeps until one second after its start.
    assert_eq!(fl.cleaner_wait(&obs(0, 100, 0, 0)), CleanerWait::Until(SEC));
    // Idle at its time: ceil(PCT_IO(100) / 8) = 75 pages per instance.
    let p = fl.cleaner_pass(&obs(1, 100, 50, 0), none);
    assert_eq!((p.kind, p.requested(), p.batches()), (PassKind::Idle, 600, 8));
    assert_eq!(p.per_instance[0], 75);
    fl.cleaner_end(&p, 600);
    // Idle, nothing pending, pages flushed: no sleep.
    assert_eq!(fl.cleaner_wait(&obs(1, 100, 50, 0)), CleanerWait::Now);
    // Woken early while idle (or not sleeping): nothing, and n_flushed = 0, so it sleeps
    // until its time next ("no activity, but woken up by event").
    let p = fl.cleaner_pass(&obs(1, 100, 50, 0), none);
    assert_eq!(p.kind, PassKind::Nothing);
    fl.cleaner_end(&p, 0);
    assert_eq!(fl.cleaner_wait(&obs(1, 100, 50, 0)), CleanerWait::Until(2 * SEC));
    // Active at its time: the recommendation (its first call only remembers).
    let p = fl.cleaner_pass(&obs(2, 200, 50, 5), none);
    assert_eq!((p.kind, p.requested()), (PassKind::Adaptive, 0));
    fl.cleaner_end(&p, 0);
    assert_eq!(fl.cleaner_wait(&obs(2, 200, 50, 5)), CleanerWait::Until(3 * SEC));
    // Active, woken early: nothing asked.
    let p = fl.cleaner_pass(&obs(2, 300, 50, 9), none);
    assert_eq!((p.kind, p.requested()), (PassKind::ActiveWoken, 0));
    // A thread past max_modified_age_sync asks a sync flush to lsn - sync age.
    let lsn = log.max_modified_age_sync + 5_000;
    assert_eq!(fl.log_free_check(lsn, 5_000), None);
    assert_eq!(fl.log_free_check(lsn, 0), None); // nothing dirty
    assert_eq!(fl.cleaner.sync_lsn, 0);
    assert_eq!(fl.log_free_check(lsn, 3_000), Some(5_000));
    assert_eq!(fl.cleaner.sync_lsn, 5_000); // + 3 x lsn_avg_rate (0 yet)
                                            // The woken pass flushes every instance up to it; a timed one would not.
    let p = fl.cleaner_pass(&obs(2, lsn, 3_000, 9), none);
    assert_eq!((p.kind, p.lsn_limit, p.per_instance[7]), (PassKind::Sync, 5_000, u64::MAX));
    fl.cleaner_end(&p, 40);
    assert_eq!((fl.cleaner.sync_lsn, fl.stats.flush_sync_total_pages), (0, 40));
    assert_eq!(fl.stats.buffer_pool_pages_flushed, 640);
    // Without innodb_flush_sync nothing is asked (the thread still waits).
    let mut nosync = PerconaFlush::new(Params { innodb_flush_sync: false, ..exp2() }, log, 0, true);
    assert_eq!(nosync.log_free_check(lsn, 3_000), Some(5_000));
    assert_eq!(nosync.cleaner.sync_lsn, 0);
    let _ = r;
}

#[test]
fn pages_flushed_counts_lru_evictions_and_pages_lru_flushed_stays_zero() {
    let mut fl = PerconaFlush::new(exp2(), exp2_log(), 0, false);
    assert_eq!(fl.lru_instances(), 8);
    let tail: Vec<(u64, bool)> = (0..1000).map(|p| (p * 100, p % 2 == 0)).collect();
    let mut pool = Pool::new(&tail, 0);
    let b = fl.lru_begin(3, SEC, 0, 1000);
    let res = fl.lru_batch(3, &mut pool, &b);
    pool.complete_lru_writes();
    fl.lru_end(3, &res);
    assert_eq!((res.written, res.evicted), (500, 500));
    let s = fl.stats;
    assert_eq!((s.buffer_pool_pages_flushed, s.lru_batch_flush_total_pages), (1000, 1000));
    assert_eq!((s.lru_batch_written, s.lru_batch_evict_total_pages), (500, 500));
    assert_eq!(s.buffer_pool_pages_lru_flushed, 0);
    assert_eq!(PerconaFlush::checkpoint_age(900, 400), 500);
    assert_eq!(fl.checkpoint_max_age(), exp2_log().max_checkpoint_age);
    // The merged mode multiplies an instance's limits.
    let mut merged = PerconaFlush::new(exp2(), exp2_log(), 0, true);
    let b = merged.lru_begin(0, SEC, 0, 8 * 400_000);
    assert_eq!(b, LruBatch { max: 8 * 1024, free_target: 8 * 1024, lru_min: 8 * 256, fold: 8 });
}

#[test]
fn the_lru_manager_wakes_on_its_timer_only() {
    let r = exp2().resolve();
    let mut m = LruManager::new(5 * SEC, 1);
    // First loop one second after the start; asked earlier it still waits for it.
    assert_eq!(m.wake_at(5 * SEC), 6 * SEC);
    assert_eq!(m.wake_at(5 * SEC + 300 * MS), 6 * SEC);
    // The batch's time counts against the sleep: 1000 ms after the iteration began.
    m.begin(&r, 6 * SEC, 500, 400_000);
    assert_eq!(m.sleep_ms, 1000);
    assert_eq!(m.wake_at(6 * SEC + 400 * MS), 7 * SEC);
    // A batch that overran its sleep: the next iteration at once.
    assert_eq!(m.wake_at(8 * SEC), 8 * SEC);
}

#[test]
fn the_coordinator_sleeps_while_reads_are_pending_and_batches_go_per_instance() {
    let log = exp2_log();
    let mut fl = PerconaFlush::new(exp2(), log, 0, false);
    let p = fl.cleaner_pass(&obs(1, 100, 50, 0), |_, c| c.fill(0));
    fl.cleaner_end(&p, 600);
    let mut o = obs(1, 100, 50, 0);
    assert_eq!(fl.cleaner_wait(&o), CleanerWait::Now);
    o.pending_reads = true;
    assert_eq!(fl.cleaner_wait(&o), CleanerWait::Until(2 * SEC));
    // Instance 2's flush-list batch: its own legacy flag only.
    for f in &mut fl.free {
        f.try_lru_scan = false;
    }
    let mut pool = neighbourhood();
    assert_eq!(fl.flush_list_batch(2, &mut pool, [(k(70), 10)], 75, LSN_MAX), 8);
    assert!(fl.free[2].try_lru_scan && !fl.free[1].try_lru_scan);
    // The merged pool counts its LRU list per instance: 600 pages are 75 per instance,
    // under BUF_LRU_OLD_MIN_LEN, so no neighbours.
    let mut merged = PerconaFlush::new(exp2(), log, 0, true);
    let mut pool = neighbourhood();
    assert_eq!(merged.flush_list_batch(0, &mut pool, [(k(70), 10)], 75, LSN_MAX), 1);
}

proptest! {
    #[test]
    fn the_adapted_sleep_stays_within_bounds(free in 0u64..3000, lru in 0u64..5000, depth in 100u64..4000,
                                             done in 0u64..3, sleep in 0u64..=1000) {
        let s = adapt_sleep_time(free, lru, depth, done, sleep);
        prop_assert!(s <= CLEANER_MAX_LRU_TIME_MS);
        prop_assert!(s <= sleep + 1);
        let max_free = lru.min(depth);
        if free < max_free / 100 && done > 0 {
            prop_assert_eq!(s, 0);
        }
        if free > max_free / 5 {
            prop_assert_eq!(s, (sleep + 1).min(1000));
        }
    }

    #[test]
    fn an_lru_batch_keeps_its_limits(states in proptest::collection::vec(0u8..4, 300..1500), free in 0u64..1200,
                                      depth in 100u64..1500, mode in 0u64..3) {
        let mut p = Params { innodb_lru_scan_depth: depth, innodb_flush_neighbors: mode, ..exp2() };
        p.innodb_buffer_pool_instances = 1;
        let r = p.resolve();
        let tail: Vec<(u64, bool)> = states.iter().enumerate().map(|(i, &s)| (i as u64, s == 1)).collect();
        let mut pool = Pool::new(&tail, free);
        for (i, &s) in states.iter().enumerate() {
            if s >= 2 {
                pool.state.insert(k(i as u64), PageState::Busy);
            }
        }
        let mut m = LruManager::new(0, 1);
        let b = m.begin(&r, SEC, pool.free, pool.lru_len());
        let before = pool.lru.len() as u64;
        let res = lru_list_batch(&mut pool, &b, &r.neighbours());
        // The pool checked that only clean pages were evicted and dirty ones written.
        prop_assert_eq!(res.written, pool.written.len() as u64);
        prop_assert_eq!(res.evicted, pool.evicted.len() as u64);
        prop_assert!(res.written <= b.max && res.evicted <= b.max);
        prop_assert!(pool.lru.len() as u64 >= b.lru_min.min(before));
        prop_assert!(pool.free <= b.free_target.max(free));
        // It stopped for a reason: a limit reached, or every page visited once.
        prop_assert!(res.processed() >= b.max || pool.free >= b.free_target
            || pool.lru.len() as u64 <= b.lru_min || res.scanned == before);
    }

    #[test]
    fn backoff_sleeps_grow_to_10_ms_and_every_round_is_counted(rounds in 1usize..60) {
        let mut fl = PerconaFlush::new(exp2(), exp2_log(), 0, true);
        let mut w = FrameWaiter::default();
        let mut last = 0;
        for _ in 0..rounds {
            match fl.get_free_block(0, &mut w, 0, false, false) {
                FrameStep::Yield { times } => prop_assert_eq!(times, 2),
                FrameStep::Sleep { us } => {
                    prop_assert!(us >= last && us <= MAX_FREE_LIST_BACKOFF_SLEEP_US);
                    last = us;
                }
                other => prop_assert!(false, "backoff asked {:?}", other),
            }
        }
        prop_assert_eq!(fl.stats.buffer_pool_wait_free, rounds as u64);
    }

    #[test]
    fn recommendations_stay_under_io_capacity_max(f in 0u64..120, io in 100u64..5000, pages in 0u64..100_000,
                                                   legacy in any::<bool>(), inst in 1u64..=64) {
        let factor = if legacy { LsnAgeFactor::Legacy } else { LsnAgeFactor::HighCheckpoint };
        let p = Params { innodb_io_capacity: io, innodb_cleaner_lsn_age_factor: factor,
                         innodb_buffer_pool_instances: inst, ..exp2() };
        let r = p.resolve();
        let log = exp2_log();
        let mut rec = Recommender::default();
        rec.recommend(&r, &log, &obs(0, 1, 1, 0), 0, |_, c| c.fill(0));
        let lsn = 20_000_000_000;
        let a = rec.recommend(&r, &log, &obs(1, lsn, lsn - age_at(&log, f), 1), 0,
                              |_, c| { let n = c.len() as u64; for (i, x) in c.iter_mut().enumerate() { *x = even_share(pages, n, i as u64); } });
        prop_assert!(a.n_pages <= r.io_capacity_max);
        prop_assert_eq!(a.instances as u64, inst);
        if a.pct_for_lsn <= 30 {
            prop_assert!(a.per_instance[..a.instances].iter().all(|&n| n == a.n_pages / inst));
        }
    }

    #[test]
    fn consecutive_extents_go_to_distinct_instances(space in 0u32..100_000, extent in 0u64..1_000_000, n in 1u64..=64) {
        let mut seen = vec![false; n as usize];
        for e in extent..extent + n {
            let i = instance_of(space, e * 64 + (e % 64), n);
            prop_assert!(i < n as usize);
            prop_assert_eq!(i, instance_of(space, e * 64, n));
            prop_assert!(!seen[i]);
            seen[i] = true;
        }
    }
}
