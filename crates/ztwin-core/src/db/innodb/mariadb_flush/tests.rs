use super::dblwr::DoublewriteBuffer;
use super::*;
use crate::db::innodb::doublewrite::{BatchPlan, DoublewriteStats, SystemWrite};
use crate::sim::time::SEC;
use proptest::prelude::*;
use std::collections::HashMap;

/// A buffer pool for the tests: the LRU list head first, page states, free frames.
#[derive(Debug, Clone, Default)]
struct Pool {
    lru: Vec<PageKey>,
    state: HashMap<PageKey, PageState>,
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
        self.pos(key).map(|i| i * 8 >= self.lru.len() * 5)
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

/// The lab's server: 128 MiB pool (8112 frames), 256 MiB redo, 16 KiB pages.
fn lab(params: Params, rotational: bool) -> MariadbFlush {
    MariadbFlush::new(params, LogLimits::new(256 << 20, 16384).unwrap(), 8112, rotational)
}

fn pages(written: &[PageKey]) -> Vec<u64> {
    written.iter().map(|key| key.page_no()).collect()
}

#[test]
fn defaults_are_the_1011_system_variables() {
    let p = Params::default();
    assert_eq!((p.innodb_io_capacity, p.io_capacity_max()), (200, 2000));
    assert_eq!((p.innodb_max_dirty_pages_pct, p.innodb_max_dirty_pages_pct_lwm), (90.0, 0.0));
    assert_eq!((p.innodb_adaptive_flushing_lwm, p.innodb_flushing_avg_loops), (10.0, 30));
    assert_eq!((p.innodb_lru_scan_depth, p.innodb_flush_neighbors), (1536, 1));
    assert!(p.innodb_adaptive_flushing && p.innodb_flush_sync && p.innodb_doublewrite);
    assert_eq!(p.innodb_flush_method, FlushMethod::ODirect);
    assert_eq!(Params { innodb_io_capacity: 3000, ..p }.io_capacity_max(), 6000);
    // innodb_io_capacity_max set below innodb_io_capacity lowers innodb_io_capacity.
    let low = Params { innodb_io_capacity_max: 100, ..p };
    assert_eq!((low.io_capacity(), low.io_capacity_max()), (100, 100));
    let high = Params { innodb_io_capacity_max: 5000, ..p };
    assert_eq!((high.io_capacity(), high.io_capacity_max()), (200, 5000));
    assert_eq!(FlushMethod::parse("o_direct_no_fsync"), Some(FlushMethod::ODirectNoFsync));
    assert_eq!(FlushMethod::parse("O_DIRECT"), Some(FlushMethod::ODirect));
    assert_eq!(FlushMethod::parse("directio"), None);
    assert!(FlushMethod::ODirect.fsyncs_data_files() && !FlushMethod::ODirectNoFsync.fsyncs_data_files());
}

#[test]
fn a_256m_redo_log_has_these_limits() {
    let l = LogLimits::new(256 << 20, 16384).unwrap();
    // (268,435,456 - 12,288) less a tenth: 241,580,852.
    assert_eq!(l.log_capacity, 241_580_852);
    // Less 48 pages (786,432): 240,794,420; less a tenth: 216,714,978.
    assert_eq!(l.max_checkpoint_age, 216_714_978);
    assert_eq!(l.max_modified_age_async, 216_714_978 - 27_089_372);
    assert_eq!(LogLimits::new(512 << 10, 16384), None);
    // A commit past the async age asks the page cleaner for background flushing, one at
    // the checkpoint age for furious flushing.
    let cp = 1_000_000;
    assert_eq!(log_close(&l, cp + l.max_modified_age_async, cp), FlushAhead::No);
    assert_eq!(log_close(&l, cp + l.max_modified_age_async + 1, cp), FlushAhead::Async);
    assert_eq!(log_close(&l, cp + l.max_checkpoint_age - 1, cp), FlushAhead::Async);
    assert_eq!(log_close(&l, cp + l.max_checkpoint_age, cp), FlushAhead::Sync);
    // Past the checkpoint age, a user thread waits until the oldest modification is within
    // the checkpoint age of the current LSN.
    assert_eq!(checkpoint_margin(&l, cp + l.max_checkpoint_age, cp), None);
    assert_eq!(checkpoint_margin(&l, cp + l.max_checkpoint_age + 1, cp), Some(cp + 1));
    assert_eq!(checkpoint_margin(&l, cp + l.max_checkpoint_age + (5 << 20), cp), Some(cp + (5 << 20)));
}

#[test]
fn the_neighbour_area_is_64_pages_in_the_lab_pool() {
    assert_eq!(flush_area(8112), 64);
    // 10 MiB: read_ahead_area = 23 rounded up to 32, frames / 16 = 47.
    assert_eq!(flush_area(758), 32);
    assert_eq!(flush_area(100), 4);
    assert_eq!(flush_area(0), 1);
}

#[test]
fn frames_are_needed_below_half_the_scan_depth_or_when_a_thread_found_none() {
    let mut fl = lab(Params::default(), true);
    assert!(!fl.need_lru_eviction(7000, 768));
    assert!(fl.need_lru_eviction(7000, 767));
    // A short LRU list never asks.
    assert!(!fl.need_lru_eviction(256, 0));
    // A thread that found no frame and no clean page near the tail clears try_LRU_scan.
    let mut pool = Pool::new(&(0..200).map(|p| (p, true)).collect::<Vec<_>>(), 0);
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Wait { signal: true });
    assert!(!fl.try_lru_scan() && fl.need_lru_eviction(200, 0));
    fl.frame_freed();
    assert!(!fl.need_lru_eviction(200, 0));
}

#[test]
fn the_lru_batch_evicts_clean_pages_and_writes_dirty_ones_up_to_its_quota() {
    let mut fl = lab(Params::default(), false);
    // From the tail: dirty, clean, dirty, clean, ... 1000 pages, 700 frames free.
    let tail: Vec<(u64, bool)> = (0..1000).map(|p| (p, p % 2 == 0)).collect();
    let mut pool = Pool::new(&tail, 700);
    let n = fl.lru_flush(&mut pool, 10);
    // Ten dirty pages written (0, 2, .. 18), the clean ones between evicted (1 .. 19); the
    // 11th dirty page ends the batch; the evict-only pass stops at it at once.
    assert_eq!(n, 10);
    assert_eq!(pages(&pool.written), (0..20).step_by(2).collect::<Vec<_>>());
    assert_eq!(pages(&pool.evicted), (1..20).step_by(2).collect::<Vec<_>>());
    assert_eq!(pool.free, 710);
    let s = fl.stats;
    assert_eq!((s.buffer_pool_pages_lru_flushed, s.buffer_pool_pages_lru_freed), (10, 10));
    assert_eq!(s.buffer_pool_pages_flushed, 10);
    // The written pages stay in the LRU list until their writes complete and a later
    // batch evicts them (no eviction at write completion).
    assert_eq!(pool.lru.len(), 990);
    for p in (0..20).step_by(2) {
        pool.state.insert(k(p), PageState::Clean);
    }
    fl.lru_flush(&mut pool, 10);
    assert!(pool.evicted.contains(&k(18)));
}

#[test]
fn the_lru_batch_stops_at_the_free_target_and_at_the_lru_floor() {
    let mut fl = lab(Params::default(), false);
    let clean: Vec<(u64, bool)> = (0..2000).map(|p| (p, false)).collect();
    let mut pool = Pool::new(&clean, 700);
    assert_eq!(fl.lru_flush(&mut pool, 2000), 0);
    assert_eq!((pool.free, pool.lru.len()), (1536, 1164));
    // A short list keeps BUF_LRU_MIN_LEN (256) pages (8112 frames / 20 - 1 is more).
    let mut pool = Pool::new(&clean[..1000], 0);
    fl.lru_flush(&mut pool, 2000);
    assert_eq!(pool.lru.len(), 256);
    // A 10 MiB pool (758 frames) keeps 758 / 20 - 1 = 36.
    let mut small = MariadbFlush::new(Params::default(), fl.log, 758, false);
    let mut pool = Pool::new(&clean[..700], 0);
    small.lru_flush(&mut pool, 2000);
    assert_eq!(pool.lru.len(), 36);
}

/// A tail of 600 pages: page 70 at the tail with dirty neighbours 66..=69 and 71..=73,
/// clean 65 and 74, dirty 80 at the head; clean filler pages between.
fn neighbourhood(free: u64) -> Pool {
    let mut tail = vec![(70, true)];
    tail.extend([65, 74].map(|p| (p, false)));
    tail.extend((66..=69).chain(71..=73).map(|p| (p, true)));
    tail.extend((1000..1590).map(|p| (p, false)));
    tail.push((80, true));
    Pool::new(&tail, free)
}

#[test]
fn neighbours_are_the_contiguous_dirty_run_in_the_64_page_area() {
    let mut fl = lab(Params::default(), true);
    let mut pool = neighbourhood(800);
    fl.lru_flush(&mut pool, 100);
    assert_eq!(pages(&pool.written), (66..=73).collect::<Vec<_>>());
    // innodb_flush_neighbors = 2: every dirty page of the area, 80 too.
    let mut fl2 = lab(Params { innodb_flush_neighbors: 2, ..Params::default() }, true);
    let mut pool = neighbourhood(800);
    fl2.lru_flush(&mut pool, 100);
    assert_eq!(pages(&pool.written), [66, 67, 68, 69, 70, 71, 72, 73, 80]);
}

#[test]
fn no_neighbours_on_ssd_off_short_lists_or_below_half_the_free_target() {
    for (fl, free) in [
        (lab(Params::default(), false), 800),
        (lab(Params { innodb_flush_neighbors: 0, ..Params::default() }, true), 800),
        // The LRU batch writes neighbours only once half the free target is reached.
        (lab(Params::default(), true), 767),
    ] {
        let mut fl = fl;
        let mut pool = neighbourhood(free);
        fl.lru_flush(&mut pool, 100);
        // Page 70 alone, then the others as the batch reaches them (at 767 free, evicting
        // 65 and 74 reaches half the target: 66 and 71 then bring their runs along).
        assert_eq!(pages(&pool.written), [70, 66, 67, 68, 69, 71, 72, 73]);
    }
    // Fewer than BUF_LRU_OLD_MIN_LEN pages in the LRU list: none either.
    let mut fl = lab(Params::default(), true);
    let mut pool = neighbourhood(800);
    pool.lru.drain(..200);
    fl.lru_flush(&mut pool, 100);
    assert_eq!(pages(&pool.written), [70, 66, 67, 68, 69, 71, 72, 73]);
}

#[test]
fn the_chosen_page_is_written_even_past_the_quota() {
    let mut fl = lab(Params::default(), true);
    let mut pool = neighbourhood(800);
    // Quota 3: 66, 67, 68, then the page the batch chose, 70.
    assert_eq!(fl.lru_flush(&mut pool, 3), 4);
    assert_eq!(pages(&pool.written), [66, 67, 68, 70]);
}

#[test]
fn the_flush_list_batch_writes_oldest_first_to_its_lsn_and_count() {
    let mut fl = lab(Params::default(), false);
    let mut pool = Pool::new(&(0..600).map(|p| (p, p < 10)).collect::<Vec<_>>(), 2000);
    pool.state.insert(k(3), PageState::Busy);
    let list: Vec<(PageKey, u64)> = (0..10).map(|p| (k(p), 100 + p)).collect();
    // LSN limit 106: pages 0..=5 but 3 (in flight).
    assert_eq!(fl.flush_list_batch(&mut pool, list.iter().copied(), 100, 106), 5);
    assert_eq!(pages(&pool.written), [0, 1, 2, 4, 5]);
    // Count limit 2, no LSN limit: the next two dirty ones.
    assert_eq!(fl.flush_list_batch(&mut pool, list.iter().copied(), 2, LSN_MAX), 2);
    assert_eq!(pages(&pool.written)[5..], [6, 7]);
    assert_eq!(fl.stats.buffer_pool_pages_flushed, 7);
    assert_eq!(fl.stats.buffer_pool_pages_lru_flushed, 0);
    // Rotational: page 8's neighbour 9 (dirty, next to it) comes along and counts.
    let mut fl = lab(Params::default(), true);
    let only_8 = list.iter().copied().filter(|(key, _)| key.page_no() == 8);
    assert_eq!(fl.flush_list_batch(&mut pool, only_8, 5, LSN_MAX), 2);
    assert_eq!(pages(&pool.written)[7..], [8, 9]);
}

#[test]
fn a_user_thread_takes_a_free_frame_and_wakes_the_cleaner_below_half_the_depth() {
    let mut fl = lab(Params::default(), true);
    let tail: Vec<(u64, bool)> = (0..1000).map(|p| (p, false)).collect();
    let mut pool = Pool::new(&tail, 800);
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Got { signal: false });
    pool.free = 768;
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Got { signal: true });
    // A page cleaner already running is not signalled.
    assert_eq!(fl.get_free_block(&mut pool, true), FreeBlock::Got { signal: false });
}

#[test]
fn with_no_free_frame_a_user_thread_evicts_a_clean_page_among_the_100_at_the_tail() {
    let mut fl = lab(Params::default(), true);
    // 99 dirty pages at the tail, then a clean one: evicted, never written.
    let mut tail: Vec<(u64, bool)> = (0..99).map(|p| (p, true)).collect();
    tail.extend((99..1000).map(|p| (p, false)));
    let mut pool = Pool::new(&tail, 0);
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Got { signal: true });
    assert_eq!((pages(&pool.evicted), pool.written.len()), (vec![99], 0));
    // 100 dirty pages at the tail: nothing found, the thread waits, and the next thread
    // does not scan (try_LRU_scan cleared) though a clean page is there.
    let mut tail: Vec<(u64, bool)> = (0..100).map(|p| (p, true)).collect();
    tail.extend((100..1000).map(|p| (p, false)));
    let mut pool = Pool::new(&tail, 0);
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Wait { signal: true });
    assert_eq!(fl.get_free_block(&mut pool, false), FreeBlock::Wait { signal: true });
    assert!(pool.evicted.is_empty() && pool.written.is_empty());
    // Each round of waiting counts.
    assert_eq!(fl.after_wait(&pool, true), FreeBlock::Wait { signal: false });
    assert_eq!(fl.stats.buffer_pool_wait_free, 3);
    // The page cleaner's LRU batch frees frames: the waiters take them.
    fl.lru_flush(&mut pool, 2000);
    assert!(fl.try_lru_scan());
    assert!(matches!(fl.after_wait(&pool, true), FreeBlock::Got { .. }));
}

fn obs(lsn: u64, oldest: u64, dirty: u64, free: u64) -> Observation {
    Observation {
        now_ns: 0,
        lsn,
        oldest_lsn: oldest,
        dirty_pages: dirty,
        lru_len: 8112 - free,
        free_len: free,
        ..Observation::default()
    }
}

#[test]
fn the_recommendation_ignores_redo_pressure_without_a_dirty_page_low_water_mark() {
    let p = Params::default();
    let fl = lab(p, true);
    let log = fl.log;
    let mut c = fl.cleaner.clone();
    // First call: innodb_io_capacity (the dirty pages outnumber it).
    let young = obs(10_000_000, 9_000_000, 5000, 1000);
    assert_eq!(c.recommend(&p, &log, &young, 0.0, |_| 0), 200);
    // Redo age at max_modified_age_async: af_get_pct_for_lsn says 1333 %...
    assert_eq!(cleaner::pct_for_lsn(&p, &log, log.max_modified_age_async), 1333);
    let old = obs(log.max_modified_age_async + 1_000, 1_000, 5000, 1000);
    // ...but with innodb_max_dirty_pages_pct_lwm = 0 the ratio is 1: (200 + 0 + 300/3) / 3.
    assert_eq!(c.recommend(&p, &log, &old, 0.0, |_| 300), 100);
    // With the lwm set the pressure scales innodb_io_capacity: (2666 + 0 + 100) / 3.
    assert_eq!(c.recommend(&p, &log, &old, 10.0, |_| 300), 922);
    // At most innodb_io_capacity_max (four times the async age: 10666 %).
    let older = obs(4 * log.max_modified_age_async + 1_000, 1_000, 5000, 1000);
    assert_eq!(c.recommend(&p, &log, &older, 10.0, |_| 1 << 40), 2000);
    // No redo pressure: innodb_io_capacity again, or the dirty pages when fewer.
    assert_eq!(c.recommend(&p, &log, &obs(2_000_000, 1_000_000, 150, 1000), 0.0, |_| 0), 150);
}

#[test]
fn the_recommendation_averages_every_innodb_flushing_avg_loops() {
    let p = Params::default();
    let fl = lab(p, true);
    let log = fl.log;
    let mut c = fl.cleaner.clone();
    let age = log.log_capacity / 5;
    let at = |s: u64| Observation { now_ns: s * SEC, ..obs(age + 1 + s * 1_000_000, 1, 5000, 1000) };
    c.recommend(&p, &log, &at(0), 0.0, |_| 0);
    for s in 1..=30 {
        // Each second an adaptive batch of 100 pages (`last_pages = n`).
        c.set_last_pages(100);
        c.recommend(&p, &log, &at(s), 0.0, |_| 0);
    }
    // 30 passes of 100 pages in 30 s: (3000 / 30 + 0) / 2; redo (30 MB / 30 s + 0) / 2.
    assert_eq!(c.avg_page_rate(), 50);
    assert_eq!(c.lsn_avg_rate(), 500_000);
}

#[test]
fn an_idle_cleaner_sleeps_until_woken_by_dirty_pages_or_a_thread_short_of_frames() {
    let mut fl = lab(Params::default(), true);
    let log = fl.log;
    // 12 % dirty, a young redo log, frames enough: idle, then an untimed wait.
    let o = obs(1_000_000, 900_000, 1000, 1200);
    assert_eq!(fl.begin_pass(&o, |_| 0).kind, PassKind::Idle);
    assert_eq!(fl.wait(&o), Wait::Untimed);
    // A page dirtied below 90 % does not wake it; at 90 % it does.
    assert!(!fl.on_page_dirtied(&o));
    assert!(fl.on_page_dirtied(&obs(1_000_000, 900_000, 7301, 0)));
    assert_eq!(fl.wait(&o), Wait::Until(SEC));
    // Frames short: no wait; the pass waits for the writes in flight, then an LRU batch of
    // innodb_io_capacity_max.
    let short = obs(1_000_000, 900_000, 1000, 700);
    assert_eq!(fl.wait(&short), Wait::None);
    let pass = fl.begin_pass(&short, |_| 0);
    assert_eq!((pass.kind, pass.wait_writes_first, pass.flush_list), (PassKind::LruOnly, true, None));
    assert_eq!(pass.lru_max(&fl.params, 0), Some(2000));
    // An old redo log (past 10 % of the capacity): adaptive flushing, then an LRU batch of
    // max(2000 - written, 1536).
    let aged = obs(log.log_capacity / 5 + 1, 1, 3000, 1200);
    let pass = fl.begin_pass(&aged, |_| 600);
    assert_eq!(pass.kind, PassKind::Adaptive);
    assert_eq!(pass.flush_list, Some(ListBatch { max_pages: 200, lsn_limit: LSN_MAX }));
    assert_eq!(pass.lru_max(&fl.params, 200), Some(1800));
    assert_eq!(pass.lru_max(&fl.params, 1000), Some(1536));
    fl.end_pass(&pass, &aged, 200, 0);
    assert_eq!(fl.wait(&aged), Wait::Until(SEC));
}

#[test]
fn commits_past_the_async_age_ask_background_flushing_to_the_async_age() {
    let mut fl = lab(Params::default(), true);
    let l = fl.log;
    let lsn = l.max_modified_age_async + 5000;
    assert_eq!(log_close(&l, lsn, 0), FlushAhead::Async);
    // The target is the commit's LSN less the async age (even: the low bit is the furious
    // flag). A page cleaner in its timed wait is not signalled, but the target is set.
    assert!(!fl.flush_ahead(lsn, false));
    assert_eq!(fl.cleaner.async_lsn(), 5000);
    assert!(!fl.flush_ahead(lsn - 1, false));
    assert_eq!(fl.cleaner.async_lsn(), 5000);
    let o = obs(lsn, 1000, 3000, 1200);
    let pass = fl.begin_pass(&o, |_| 0);
    assert_eq!(pass.kind, PassKind::Background);
    assert_eq!(pass.flush_list, Some(ListBatch { max_pages: 2000, lsn_limit: 5000 }));
    // The target stays until the oldest modification reaches it.
    fl.end_pass(&pass, &obs(lsn, 2000, 1000, 1200), 2000, 0);
    assert_eq!(fl.cleaner.async_lsn(), 5000);
    fl.end_pass(&pass, &obs(lsn + 10, 5000, 1000, 1200), 2000, 0);
    assert_eq!(fl.cleaner.async_lsn(), 0);
    // An idle page cleaner is woken by a background target; a furious one always wakes it.
    assert_eq!(fl.begin_pass(&obs(lsn, lsn - 10, 100, 1200), |_| 0).kind, PassKind::Idle);
    assert!(fl.flush_ahead(lsn + 1001, false));
    assert_eq!(fl.cleaner.async_lsn(), 6000);
    assert!(!fl.cleaner.idle());
    assert!(fl.flush_ahead(l.max_checkpoint_age + 1000, true));
    assert_eq!(fl.cleaner.sync_lsn(), ((l.max_checkpoint_age + 1000 - l.max_modified_age_async) & !1) | 1);
}

#[test]
fn past_the_checkpoint_age_the_cleaner_flushes_furiously() {
    let mut fl = lab(Params::default(), true);
    let l = fl.log;
    let lsn = l.max_checkpoint_age + 5000;
    let target = checkpoint_margin(&l, lsn, 0).unwrap();
    assert_eq!(target, 5000);
    assert!(fl.wait_flushed(target));
    let o = obs(lsn, 1000, 3000, 700);
    assert_eq!(fl.wait(&o), Wait::None);
    let pass = fl.begin_pass(&o, |_| 0);
    assert_eq!(pass.kind, PassKind::Furious);
    // Frames short too: an LRU batch of innodb_io_capacity first, then the flush list to
    // the target, then every write waited for and the data files fsynced.
    assert!(pass.lru_first && pass.sync_after && pass.checkpoint);
    assert_eq!(pass.lru_max(&fl.params, 0), Some(200));
    assert_eq!(pass.flush_list, Some(ListBatch { max_pages: 2000, lsn_limit: target }));
    let done = Observation { now_ns: 3 * SEC, ..obs(lsn, target, 10, 1200) };
    fl.end_pass(&pass, &done, 2000, 0);
    assert_eq!(fl.cleaner.sync_lsn(), 0);
    // The next timed wait ends a second after the furious pass ended.
    assert_eq!(fl.wait(&done), Wait::Until(4 * SEC));
    // innodb_flush_sync = OFF: the same target is flushed as a background one.
    let mut off = lab(Params { innodb_flush_sync: false, ..Params::default() }, true);
    off.wait_flushed(target);
    let pass = off.begin_pass(&obs(lsn, 1000, 3000, 1200), |_| 0);
    assert_eq!(pass.kind, PassKind::Background);
    assert_eq!(pass.flush_list, Some(ListBatch { max_pages: 2000, lsn_limit: target }));
}

#[test]
fn with_a_low_water_mark_an_idle_server_is_flushed_at_innodb_io_capacity() {
    let mut fl = lab(Params { innodb_max_dirty_pages_pct_lwm: 10.0, ..Params::default() }, true);
    // 5 % dirty, commits since the last pass: below the mark, idle.
    let busy = Observation { activity_count: 7, ..obs(1_000_000, 900_000, 400, 1200) };
    assert_eq!(fl.begin_pass(&busy, |_| 0).kind, PassKind::Idle);
    // With the mark set the idle cleaner waits a second at most while pages are dirty.
    assert_eq!(fl.wait(&busy), Wait::Until(SEC));
    // No commit since: idle flushing of innodb_io_capacity pages.
    let pass = fl.begin_pass(&busy, |_| 0);
    assert_eq!(pass.kind, PassKind::IoCapacity);
    assert_eq!(pass.flush_list, Some(ListBatch { max_pages: 200, lsn_limit: LSN_MAX }));
}

#[test]
fn a_doublewrite_batch_is_one_write_to_ibdata1_an_fsync_then_the_pages_in_place() {
    let mut d = DoublewriteBuffer::new(&Params::default(), 64);
    assert_eq!(d.slot_pages(), 128);
    for _ in 0..127 {
        assert_eq!(d.add(), None);
    }
    let full = d.add().unwrap();
    assert_eq!(full.copies[..full.n], [SystemWrite { first: 64, pages: 128 }]);
    assert!(full.sync_system && full.sync_data);
    assert_eq!(full.pages, 128);
    // While it is in flight, the next slot fills and its writer waits.
    for _ in 0..128 {
        assert_eq!(d.add(), None);
    }
    assert!(d.writer_blocked());
    assert_eq!(d.batch_completed().map(|b| b.pages), Some(128));
    // The end of a flush batch writes the partial slot once nothing is in flight.
    for _ in 0..10 {
        d.add();
    }
    assert_eq!(d.flush_buffered_writes(), None);
    assert!(d.writer_blocked());
    let partial = d.batch_completed().unwrap();
    assert_eq!(partial.copies[..partial.n], [SystemWrite { first: 64, pages: 10 }]);
    assert_eq!(d.batch_completed(), None);
    assert_eq!(d.stats(), DoublewriteStats { dblwr_pages_written: 266, dblwr_writes: 3 });
}

#[test]
fn split_blocks_o_direct_no_fsync_and_doublewrite_off() {
    // Blocks not contiguous: two writes when the batch passes the first block.
    let mut d = DoublewriteBuffer::with_blocks(true, true, 64, 64, 300);
    (0..100).for_each(|_| {
        d.add();
    });
    let b = d.flush_buffered_writes().unwrap();
    assert_eq!(
        b.copies[..b.n],
        [SystemWrite { first: 64, pages: 64 }, SystemWrite { first: 300, pages: 36 }]
    );
    assert_eq!(d.stats().dblwr_writes, 2);
    // O_DIRECT_NO_FSYNC: neither ibdata1 nor the data files are fsynced.
    let p = Params { innodb_flush_method: FlushMethod::ODirectNoFsync, ..Params::default() };
    let mut d = DoublewriteBuffer::new(&p, 64);
    d.add();
    let b = d.flush_buffered_writes().unwrap();
    assert!(!b.sync_system && !b.sync_data);
    // Every other method fsyncs both.
    let fsync = Params { innodb_flush_method: FlushMethod::Fsync, ..Params::default() };
    let mut d = DoublewriteBuffer::new(&fsync, 64);
    d.add();
    let b = d.flush_buffered_writes().unwrap();
    assert!(b.sync_system && b.sync_data);
    // innodb_doublewrite = OFF: each page in place at once, an fsync at the batch's end.
    let off = Params { innodb_doublewrite: false, ..Params::default() };
    let mut d = DoublewriteBuffer::new(&off, 64);
    assert_eq!(d.add(), Some(BatchPlan { pages: 1, ..BatchPlan::default() }));
    assert_eq!(d.flush_buffered_writes(), Some(BatchPlan { sync_data: true, ..BatchPlan::default() }));
    assert_eq!(d.flush_buffered_writes(), None);
    assert_eq!(d.stats(), DoublewriteStats::default());
    let mut d = DoublewriteBuffer::new(&Params { innodb_doublewrite: false, ..p }, 64);
    d.add();
    assert_eq!(d.flush_buffered_writes(), None);
}

#[test]
fn extreme_settings_do_not_panic() {
    let mut d = DoublewriteBuffer::with_blocks(true, true, u64::MAX, u64::MAX, 0);
    d.add();
    assert_eq!(d.flush_buffered_writes().map(|b| b.pages), Some(1));
    let p = Params { innodb_io_capacity: u64::MAX, innodb_lru_scan_depth: u64::MAX, ..Params::default() };
    // Unset, with innodb_io_capacity at least half of UINT32_MAX: UINT32_MAX.
    assert_eq!(p.io_capacity_max(), u64::from(u32::MAX));
    assert_eq!(p.io_capacity(), u64::from(u32::MAX));
    let mut fl = MariadbFlush::new(p, LogLimits::new(u64::MAX, 1 << 16).unwrap(), u64::MAX, true);
    let o = Observation {
        lsn: u64::MAX,
        oldest_lsn: 1,
        dirty_pages: u64::MAX,
        lru_len: u64::MAX,
        ..Observation::default()
    };
    let pass = fl.begin_pass(&o, |_| u64::MAX);
    let _ = pass.lru_max(&fl.params, u64::MAX);
    fl.end_pass(&pass, &o, u64::MAX, u64::MAX);
    let mut pool = neighbourhood(0);
    pool.last_page = u64::MAX;
    fl.lru_flush(&mut pool, u64::MAX);
    fl.flush_list_batch(&mut pool, [(PageKey(u64::MAX), 0)], u64::MAX, LSN_MAX);
}

fn arb_tail() -> impl Strategy<Value = Vec<(u64, u8)>> {
    proptest::collection::vec((0u64..400, 0u8..3), 0..900)
}

fn pool_of(tail: &[(u64, u8)], free: u64) -> Pool {
    let mut pool = Pool { free, last_page: 380, ..Pool::default() };
    for &(p, s) in tail.iter().rev() {
        if pool.state.contains_key(&k(p)) {
            continue;
        }
        pool.lru.push(k(p));
        let st = [PageState::Clean, PageState::Dirty, PageState::Busy][s as usize];
        pool.state.insert(k(p), st);
    }
    pool
}

proptest! {
    /// An LRU batch writes only dirty pages, each once, evicts only clean ones, stops at
    /// the free target and the list's floor, and writes at most one page past its quota.
    #[test]
    fn lru_batch_invariants(tail in arb_tail(), free in 0u64..2000, max in 0u64..300,
                            nb in 0u8..3, rot: bool) {
        let mut fl = lab(Params { innodb_flush_neighbors: nb, ..Params::default() }, rot);
        let mut pool = pool_of(&tail, free);
        let before = pool.clone();
        let n = fl.lru_flush(&mut pool, max);
        prop_assert_eq!(n, pool.written.len() as u64);
        prop_assert!(n <= max + 1);
        for w in &pool.written {
            prop_assert_eq!(before.page_state(*w), PageState::Dirty);
        }
        let mut w = pool.written.clone();
        w.sort();
        w.dedup();
        prop_assert_eq!(w.len(), pool.written.len());
        for e in &pool.evicted {
            prop_assert_eq!(before.page_state(*e), PageState::Clean);
        }
        prop_assert_eq!(pool.free, free + pool.evicted.len() as u64);
        prop_assert!(pool.free <= free.max(1536));
        prop_assert!(pool.lru.len() >= before.lru.len().min(256));
        prop_assert_eq!(fl.stats.buffer_pool_pages_lru_freed, pool.evicted.len() as u64);
    }

    /// A flush-list batch writes only dirty pages, each once, at most one past its quota,
    /// and chooses no page at or past its LSN limit.
    #[test]
    fn flush_list_batch_invariants(tail in arb_tail(), max in 0u64..300, limit in 0u64..1000, rot: bool) {
        let mut fl = lab(Params::default(), rot);
        let mut pool = pool_of(&tail, 2000);
        let before = pool.clone();
        let list: Vec<(PageKey, u64)> = pool.lru.iter().rev().enumerate().map(|(i, &key)| (key, i as u64)).collect();
        let n = fl.flush_list_batch(&mut pool, list.iter().copied(), max, limit);
        prop_assert_eq!(n, pool.written.len() as u64);
        prop_assert!(n <= max + 1);
        let mut w = pool.written.clone();
        w.sort();
        w.dedup();
        prop_assert_eq!(w.len(), pool.written.len());
        for key in &pool.written {
            prop_assert_eq!(before.page_state(*key), PageState::Dirty);
        }
        if !rot {
            for (key, lsn) in &list {
                if pool.written.contains(key) {
                    prop_assert!(*lsn < limit);
                }
            }
        }
    }

    /// Whatever it sees, the page cleaner answers without panicking, within its limits.
    #[test]
    fn page_cleaner_passes_stay_within_io_capacity_max(
        steps in proptest::collection::vec((0u64..1 << 40, 0u64..1 << 40, 0u64..9000, 0u64..9000, 0u64..5, 0u8..4), 1..60),
        lwm in prop_oneof![Just(0.0), Just(10.0)], sync: bool)
    {
        let mut fl = lab(Params { innodb_max_dirty_pages_pct_lwm: lwm, innodb_flush_sync: sync, ..Params::default() }, true);
        let io_max = fl.params.io_capacity_max();
        for (i, &(lsn, oldest, dirty, free, act, ev)) in steps.iter().enumerate() {
            let o = Observation {
                now_ns: i as u64 * SEC / 2, lsn, oldest_lsn: oldest.min(lsn), dirty_pages: dirty,
                lru_len: 9000 - free, free_len: free, activity_count: act, pending_reads: ev == 3,
            };
            match ev {
                0 => { fl.flush_ahead(lsn, false); }
                1 => { fl.wait_flushed(lsn); }
                2 => { fl.on_page_dirtied(&o); }
                _ => {}
            }
            let _ = fl.wait(&o);
            let pass = fl.begin_pass(&o, |lsn| lsn % 5000);
            if let Some(b) = pass.flush_list {
                prop_assert!(b.max_pages <= io_max);
            }
            for written in [0, 100, 5000] {
                prop_assert!(pass.lru_max(&fl.params, written).unwrap_or(0) <= io_max);
            }
            fl.end_pass(&pass, &o, 10, 10);
        }
    }

    /// Doublewrite: every queued page goes out in batches of at most a slot, one in flight.
    #[test]
    fn doublewrite_batches_cover_every_page(ops in proptest::collection::vec(0u8..4, 1..2000)) {
        let mut d = DoublewriteBuffer::new(&Params::default(), 64);
        let (mut added, mut issued, mut in_flight) = (0u64, 0u64, 0u64);
        for op in ops {
            let b = match op {
                0 | 1 => { added += 1; d.add() }
                2 => d.flush_buffered_writes(),
                _ => { in_flight = 0; d.batch_completed() }
            };
            if let Some(b) = b {
                prop_assert_eq!(in_flight, 0);
                prop_assert!(b.pages >= 1 && b.pages <= 128);
                in_flight = b.pages;
                issued += b.pages;
            }
            prop_assert_eq!(issued + d.queued(), added);
            prop_assert_eq!(d.stats().dblwr_pages_written, issued);
        }
    }
}
