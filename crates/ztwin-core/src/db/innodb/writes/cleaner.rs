//! The page cleaner and a thread short of a free frame, by server, on the write path's
//! buffer pool and flush list.
//!
//! - MySQL 5.7 (`page_cleaner`, `doublewrite`): a pass a second (at once when behind);
//!   the server active, an LRU batch (of the last `innodb_lru_scan_depth` pages, clean
//!   ones freed, dirty ones written and freed when written) and the recommendation's
//!   flush-list pages, or every page older than a sync flush's target; batches of 120
//!   pages through the doublewrite buffer. A thread with no frame writes one dirty LRU
//!   page itself (`buf_flush_single_page_from_LRU`).
//! - MariaDB 10.11 (`mariadb_flush`): the pass its page cleaner's loop takes (LRU only
//!   when frames are needed, background or furious flushing to a redo target, adaptive,
//!   idle), its batches on the pool through [`PoolView`] (neighbours on rotational
//!   storage; written pages stay cached, clean), batches of up to 128 pages one at a
//!   time through the doublewrite buffer, and a checkpoint at each pass's end. A thread
//!   with no frame waits for the page cleaner, which it wakes; so does an allocation
//!   that leaves fewer than `innodb_lru_scan_depth / 2` frames free, a commit past
//!   `max_modified_age_async` of checkpoint age, and a dirty share at
//!   `innodb_max_dirty_pages_pct` while the cleaner idles.
//!
//! - Percona Server 5.7 (`percona_flush`, merged instances; its LRU manager thread and its
//!   threads short of a frame are `percona`'s): a coordinator that sleeps until a second
//!   after its last timed pass (a sync request or a legacy thread's signal cuts it short)
//!   and does flush-list flushing only: every page older than a sync request's target, the
//!   recommendation (`innodb_cleaner_lsn_age_factor`) of an active server's timed pass,
//!   nothing when woken early, `innodb_io_capacity` pages in an idle server's timed pass;
//!   its pages with their neighbours, staying cached once written; each batch's end per
//!   instance that wrote (`percona::instance_ends`).
//!
//! Simplifications: 1. MariaDB's checkpoint writes its FILE_CHECKPOINT record into the
//! log (appended; made durable by the next log write) and the checkpoint block with an
//! fdatasync; the data files were fsynced after each batch. 2. A batch's in-place writes
//! complete together (at the barrier). 3. A thread's LRU scan always looks at the last
//! `BUF_LRU_SEARCH_SCAN_THRESHOLD` (100) pages (MariaDB skips the scan while
//! `try_LRU_scan` is clear).

use super::percona::{activity_count, instance_ends, Percona};
use super::*;
use crate::db::innodb::doublewrite::BatchPlan;
use crate::db::innodb::mariadb_flush::dblwr::DoublewriteBuffer;
use crate::db::innodb::mariadb_flush::{
    self as mf, log_close, FlushAhead, MariadbFlush, Observation, PageState, Pass, PoolView,
};
use crate::db::innodb::mariadb_redo::records::file_modify_record;
use crate::db::innodb::percona_flush::{self as pf, even_share, CleanerWait};

/// The page cleaner of the server.
pub(super) enum Cleaner {
    /// MySQL 5.7.
    Mysql57 {
        /// The recommendation's state.
        pc: PageCleaner,
        /// The doublewrite buffer's batches.
        dblwr: Doublewrite,
    },
    /// MariaDB 10.11.
    Mariadb(Box<Maria>),
    /// Percona Server 5.7.
    Percona(Box<Percona>),
}

/// MariaDB 10.11's flushing state.
pub(super) struct Maria {
    fl: MariadbFlush,
    dblwr: DoublewriteBuffer,
    /// The pass in progress and the pages its batches wrote.
    pass: Option<Pass>,
    n_list: u64,
    n_lru: u64,
    /// log_sys.last_checkpoint_lsn.
    last_checkpoint: u64,
    /// The doublewrite batch to write next (`add_to_batch`, `flush_buffered_writes` and
    /// `batch_completed` hand them out one at a time).
    next_plan: Option<BatchPlan>,
    /// The flush list's oldest entries, taken before a flush-list batch walks them.
    candidates: Vec<(PageKey, u64)>,
}

impl Cleaner {
    /// The page cleaner of `p`'s server (`cfg`'s) for a pool of `frames` frames and
    /// `clients` client threads.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        p: &WriteParams,
        cfg: &InnodbConfig,
        ages: &LogAges,
        frames: u64,
        extent_pages: u64,
        rotational: bool,
        clients: usize,
    ) -> Cleaner {
        if let Some(params) = p.percona_params(cfg) {
            return Cleaner::Percona(Box::new(Percona::new(p, params, ages, extent_pages, clients)));
        }
        match p.server {
            InnodbServer::Mysql57 | InnodbServer::Percona57 => Cleaner::Mysql57 {
                pc: PageCleaner::default(),
                dblwr: Doublewrite::new(p.doublewrite, p.method.syncs_data(), extent_pages),
            },
            InnodbServer::Mariadb1011 => {
                let params = mf::Params {
                    innodb_io_capacity: p.flush.io_capacity,
                    innodb_io_capacity_max: p.flush.io_capacity_max,
                    innodb_max_dirty_pages_pct: p.flush.max_dirty_pages_pct,
                    innodb_max_dirty_pages_pct_lwm: p.flush.max_dirty_pages_pct_lwm,
                    innodb_adaptive_flushing: p.flush.adaptive_flushing,
                    innodb_adaptive_flushing_lwm: p.flush.adaptive_flushing_lwm as f64,
                    innodb_flushing_avg_loops: p.flush.flushing_avg_loops,
                    innodb_lru_scan_depth: p.lru_scan_depth,
                    innodb_flush_neighbors: p.flush_neighbors,
                    innodb_flush_sync: true,
                    innodb_doublewrite: p.doublewrite,
                    innodb_flush_method: match p.method {
                        FlushMethod::Fsync => mf::FlushMethod::Fsync,
                        FlushMethod::ODsync => mf::FlushMethod::ODsync,
                        FlushMethod::ODirect => mf::FlushMethod::ODirect,
                        FlushMethod::ODirectNoFsync => mf::FlushMethod::ODirectNoFsync,
                    },
                };
                let log = mf::LogLimits {
                    log_capacity: ages.capacity,
                    max_modified_age_async: ages.max_modified_age_async,
                    max_checkpoint_age: ages.max_checkpoint_age,
                };
                Cleaner::Mariadb(Box::new(Maria {
                    fl: MariadbFlush::new(params, log, frames, rotational),
                    dblwr: DoublewriteBuffer::new(&params, extent_pages),
                    pass: None,
                    n_list: 0,
                    n_lru: 0,
                    last_checkpoint: 0,
                    next_plan: None,
                    candidates: Vec::with_capacity(4096),
                }))
            }
        }
    }
}

/// The buffer pool and the flush list as MariaDB's batches see them: pages of the system
/// tablespace are on the flush list only (simplification 1 of the write path), dirty and
/// idle until written.
pub(super) struct View<'a> {
    pub(super) bp: &'a mut BufferPool,
    pub(super) flush: &'a mut FlushList,
    pub(super) pass: &'a mut Vec<u64>,
    pub(super) files: DbFiles,
    pub(super) table_pages: u64,
}

impl PoolView for View<'_> {
    fn lru_len(&self) -> u64 {
        self.bp.len() as u64
    }

    fn free_len(&self) -> u64 {
        self.bp.free_frames() as u64
    }

    fn lru_prev(&self, at: Option<PageKey>) -> Option<PageKey> {
        self.bp.lru_prev(at)
    }

    fn is_old(&self, key: PageKey) -> Option<bool> {
        self.bp.is_old(key)
    }

    fn page_state(&self, key: PageKey) -> PageState {
        match self.bp.flags(key) {
            Some((_, true)) => PageState::Busy,
            Some((true, false)) => PageState::Dirty,
            Some((false, false)) => PageState::Clean,
            None if self.flush.contains(self.bp, key) => PageState::Dirty,
            None => PageState::Absent,
        }
    }

    fn last_page_no(&self, space_id: u32) -> u64 {
        if space_id == self.files.system() {
            system_file_pages() - 1
        } else {
            self.table_pages.saturating_sub(1)
        }
    }

    fn evict(&mut self, key: PageKey) {
        self.bp.evict_page(key);
    }

    fn write(&mut self, key: PageKey) {
        self.bp.begin_write(key);
        self.flush.remove(self.bp, key);
        self.pass.push(key.0);
    }
}

/// What a thread that found no free frame does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStep {
    /// It writes a page itself: run its I/O, then ask for the frame again.
    Io,
    /// It waits for the page cleaner (woken: [`Writes::take_cleaner_wake`]).
    Wait,
    /// Percona Server's backoff: it yields the CPU this many times (`os_thread_yield`),
    /// then asks again.
    Yield(u32),
    /// Percona Server's backoff: it sleeps this long (`os_thread_sleep`), then asks again.
    Sleep(Nanos),
}

impl Writes {
    /// What the page cleaner sees now.
    fn observation(&self, bp: &BufferPool, now: Nanos) -> Observation {
        Observation {
            now_ns: now,
            lsn: self.redo.lsn(),
            oldest_lsn: self.flush_list.oldest().unwrap_or(0),
            dirty_pages: self.flush_list.len() as u64,
            lru_len: bp.len() as u64,
            free_len: bp.free_frames() as u64,
            activity_count: self.stats.commits,
            pending_reads: false,
        }
    }

    /// Whether a thread asked for the page cleaner since the last call (the driver wakes
    /// it).
    pub fn take_cleaner_wake(&mut self) -> bool {
        std::mem::take(&mut self.wake_cleaner)
    }

    /// When the page cleaner, done with a pass begun at `started`, runs again: None when
    /// only a thread's signal wakes it (MariaDB's idle wait).
    pub fn cleaner_next(&self, bp: &BufferPool, now: Nanos, started: Nanos, waiters: bool) -> Option<Nanos> {
        match &self.cleaner {
            Cleaner::Mysql57 { .. } => {
                // The pass took over a second, or a thread waits: at once.
                Some(if waiters && started < now { now } else { (started + SEC).max(now) })
            }
            Cleaner::Mariadb(m) => match m.fl.wait(&self.observation(bp, now)) {
                mf::Wait::None => Some(now),
                mf::Wait::Until(t) => Some(t.max(now)),
                mf::Wait::Untimed => None,
            },
            // Woken early by a sync request or a legacy thread short of frames.
            Cleaner::Percona(p) => match p.fl.cleaner_wait(&self.percona_obs(bp, now)) {
                CleanerWait::Until(t) => Some(t.max(now)),
                CleanerWait::Now => Some(now),
            },
        }
    }

    /// A thread needs a frame and none could be had; `actor` is its slot.
    pub fn no_frame(&mut self, bp: &mut BufferPool, actor: usize) -> FrameStep {
        if let Some(step) = self.percona_no_frame(bp, actor) {
            return step;
        }
        match &mut self.cleaner {
            // Percona Server's legacy algorithm: MySQL 5.7's (its signal only cuts the page
            // cleaner's sleep short).
            Cleaner::Mysql57 { .. } | Cleaner::Percona(_) => {
                if self.single_page_flush(bp, actor) {
                    FrameStep::Io
                } else {
                    self.wake_cleaner = true;
                    FrameStep::Wait
                }
            }
            Cleaner::Mariadb(m) => {
                let busy = m.pass.is_some();
                let view = View {
                    bp,
                    flush: &mut self.flush_list,
                    pass: &mut self.pass,
                    files: self.files,
                    table_pages: self.table_pages,
                };
                if let mf::FreeBlock::Wait { signal } = m.fl.after_wait(&view, busy) {
                    self.wake_cleaner |= signal;
                }
                self.stats.wait_free = m.fl.stats.buffer_pool_wait_free;
                FrameStep::Wait
            }
        }
    }

    /// A thread (`actor`) took a frame: MariaDB's `got_block` wakes the page cleaner when
    /// fewer than `innodb_lru_scan_depth / 2` frames stay free; Percona's thread's next
    /// search starts afresh.
    pub fn frame_taken(&mut self, bp: &BufferPool, actor: usize) {
        self.percona_frame_taken(actor);
        if let Cleaner::Mariadb(m) = &mut self.cleaner {
            let free = bp.free_frames() as u64;
            if free < m.fl.params.innodb_lru_scan_depth / 2 && bp.len() > BUF_LRU_MIN_LEN && m.pass.is_none()
            {
                m.fl.wake_for_lru();
                self.wake_cleaner = true;
            }
        }
    }

    /// After an op's mtrs (MariaDB): `log_close`'s flush ahead past the ages, and a page
    /// dirtied at the dirty share's limit while the cleaner idles.
    pub(super) fn after_mtrs(&mut self, bp: &BufferPool, now: Nanos) {
        let obs = self.observation(bp, now);
        let Cleaner::Mariadb(m) = &mut self.cleaner else { return };
        let lsn = obs.lsn;
        let woken = match log_close(&m.fl.log, lsn, m.last_checkpoint) {
            FlushAhead::No => false,
            FlushAhead::Async => m.fl.flush_ahead(lsn, false),
            FlushAhead::Sync => m.fl.flush_ahead(lsn, true),
        };
        self.wake_cleaner |= woken | m.fl.on_page_dirtied(&obs);
    }

    /// MariaDB's `log_checkpoint_margin`: the LSN a thread waits to see flushed before its
    /// change (None: it may go on; see [`Writes::log_free_check`]).
    pub(super) fn checkpoint_margin(&mut self) -> Option<u64> {
        let Cleaner::Mariadb(m) = &mut self.cleaner else { return None };
        let target = mf::checkpoint_margin(&m.fl.log, self.redo.lsn(), m.last_checkpoint)?;
        // buf_flush_wait: a furious target only while older pages are dirty; otherwise
        // the thread waits for the next checkpoint.
        if self.flush_list.oldest().is_some_and(|o| o < target) {
            self.wake_cleaner |= m.fl.wait_flushed(target);
        }
        Some(target)
    }

    /// A thread needs a frame for `key` and none could be had (every page near the LRU
    /// tail dirty or being written): it writes the dirty page nearest the tail itself
    /// (`buf_flush_single_page_from_LRU`), queued as `actor`'s I/O. False if no page can be
    /// written (all in flight): the thread waits for the page cleaner.
    fn single_page_flush(&mut self, bp: &mut BufferPool, actor: usize) -> bool {
        let mut victim = None;
        bp.dirty_from_tail(usize::MAX, |k| {
            victim = Some(k);
            false
        });
        let Some(key) = victim else { return false };
        self.stats.wait_free += 1;
        bp.begin_write(key);
        self.flush_list.remove(bp, key);
        self.stats.pages_flushed += 1;
        self.stats.pages_lru_flushed += 1;
        let ps = self.page_size;
        let sys = self.files.system();
        let file = self.files.of_space(key.space_id());
        let q = &mut self.io[actor];
        if self.p.doublewrite {
            self.stats.dblwr_pages_written += 1;
            self.stats.dblwr_writes += 1;
            q.push_back(FileOp::Write {
                file: sys,
                offset: DBLWR_SINGLE_FIRST * u64::from(ps),
                len: ps,
                o_sync: false,
            });
            if self.p.method.syncs_data() {
                q.push_back(FileOp::Sync { file: sys });
            }
        }
        q.push_back(FileOp::Write { file, offset: key.page_no() * u64::from(ps), len: ps, o_sync: false });
        if self.p.method.syncs_data() {
            q.push_back(FileOp::Sync { file });
        }
        self.jobs[actor] = Job::SinglePage { key: key.0 };
        true
    }

    /// A page cleaner pass at `now` (`actor` is the cleaner; `active`: writes since the
    /// last pass): chooses the pages to write and queues the first batch; false when there
    /// is nothing to write.
    pub fn cleaner_pass(&mut self, bp: &mut BufferPool, actor: usize, now: Nanos, active: bool) -> bool {
        self.stats.cleaner_passes += 1;
        self.pass.clear();
        self.pass_pos = 0;
        self.lru_pages = 0;
        let obs = self.observation(bp, now);
        match &mut self.cleaner {
            Cleaner::Mysql57 { pc, .. } => {
                // buf_flush_LRU_list: clean pages of the tail freed, dirty ones written.
                let depth = self.p.lru_scan_depth as usize;
                if active {
                    bp.free_from_tail(depth, depth);
                    let want = depth.saturating_sub(bp.free_frames());
                    let pass = &mut self.pass;
                    bp.dirty_from_tail(depth, |k| {
                        if pass.len() >= want {
                            return false;
                        }
                        pass.push(k.0);
                        true
                    });
                }
                self.lru_pages = self.pass.len();
                for &k in &self.pass {
                    self.flush_list.remove(bp, PageKey(k));
                }
                // The flush list: the recommendation, or everything older than a sync
                // flush's target.
                let lsn = obs.lsn;
                let oldest = self.flush_list.oldest().unwrap_or(lsn);
                let n = match self.sync_target {
                    Some(target) => self.flush_list.count_older_than(target).max(1),
                    None if active => {
                        let at = PassInput {
                            now_s: now / SEC,
                            lsn,
                            oldest_lsn: oldest,
                            dirty_pct: self.flush_list.len() as f64 * 100.0 / bp.capacity().max(1) as f64,
                            last_pages: self.last_flushed,
                        };
                        let fl = &self.flush_list;
                        pc.recommend(&self.p.flush, &self.ages, &at, |l| fl.count_older_than(l))
                    }
                    // srv_check_activity false: PCT_IO(100).
                    None => self.p.flush.io_capacity,
                };
                let mut taken = 0;
                while taken < n {
                    let Some(k) = self.flush_list.pop_oldest(bp, u64::MAX) else { break };
                    self.pass.push(k);
                    taken += 1;
                }
                self.last_flushed = taken;
                for &k in &self.pass {
                    bp.begin_write(PageKey(k));
                }
                self.next_batch(actor)
            }
            Cleaner::Mariadb(m) => {
                let fl_list = &self.flush_list;
                let pass = m.fl.begin_pass(&obs, |lsn| fl_list.count_older_than(lsn));
                let mut view = View {
                    bp,
                    flush: &mut self.flush_list,
                    pass: &mut self.pass,
                    files: self.files,
                    table_pages: self.table_pages,
                };
                let (mut n_list, mut n_lru) = (0, 0);
                let list_batch = |m: &mut Maria, view: &mut View, b: mf::ListBatch| {
                    // The walk passes over pages written as neighbours: take enough.
                    m.candidates.clear();
                    let want = (b.max_pages as usize).saturating_mul(2).saturating_add(64);
                    m.candidates.extend(
                        view.flush
                            .iter_oldest()
                            .take_while(|&(_, l)| l < b.lsn_limit)
                            .take(want)
                            .map(|(k, l)| (PageKey(k), l)),
                    );
                    let cands = std::mem::take(&mut m.candidates);
                    let n = m.fl.flush_list_batch(view, cands.iter().copied(), b.max_pages, b.lsn_limit);
                    m.candidates = cands;
                    n
                };
                if pass.lru_first {
                    if let Some(max) = pass.lru_max(&m.fl.params, 0) {
                        n_lru = m.fl.lru_flush(&mut view, max);
                    }
                    if let Some(b) = pass.flush_list {
                        n_list = list_batch(m, &mut view, b);
                    }
                } else {
                    if let Some(b) = pass.flush_list {
                        n_list = list_batch(m, &mut view, b);
                    }
                    if let Some(max) = pass.lru_max(&m.fl.params, n_list) {
                        n_lru = m.fl.lru_flush(&mut view, max);
                    }
                }
                (m.n_list, m.n_lru) = (n_list, n_lru);
                m.pass = Some(pass);
                self.stats.pages_lru_flushed = m.fl.stats.buffer_pool_pages_lru_flushed;
                // The batches' pages into the doublewrite buffer (add_to_batch), then the
                // partial slot (flush_buffered_writes): one batch in flight at a time.
                if self.p.doublewrite {
                    for _ in 0..self.pass.len() {
                        if let Some(plan) = m.dblwr.add() {
                            m.next_plan = Some(plan);
                        }
                    }
                    let partial = m.dblwr.flush_buffered_writes();
                    m.next_plan = m.next_plan.or(partial);
                }
                self.next_batch(actor) || self.pass_end(bp, actor, now)
            }
            Cleaner::Percona(p) => {
                let obs = pf::CleanerObs {
                    now_ns: now,
                    lsn: obs.lsn,
                    oldest_lsn: self.flush_list.oldest().unwrap_or(0),
                    dirty_pages: obs.dirty_pages,
                    lru_len: obs.lru_len,
                    free_len: obs.free_len,
                    activity_count: activity_count(&self.stats),
                    pending_reads: false,
                };
                let fl_list = &self.flush_list;
                // Each instance's pages old enough: the merged count split evenly.
                let pass = p.fl.cleaner_pass(&obs, |target, counts| {
                    let n = fl_list.count_older_than(target);
                    let parts = counts.len() as u64;
                    for (i, c) in counts.iter_mut().enumerate() {
                        *c = even_share(n, parts, i as u64);
                    }
                });
                // Merged: one batch of the pages asked of all instances.
                let want = pass.requested();
                if want > 0 {
                    p.candidates.clear();
                    // The walk passes over pages written as neighbours: take enough.
                    let take =
                        usize::try_from(want.saturating_mul(2).saturating_add(64)).unwrap_or(usize::MAX);
                    p.candidates.extend(
                        self.flush_list
                            .iter_oldest()
                            .take_while(|&(_, l)| l < pass.lsn_limit)
                            .take(take)
                            .map(|(k, l)| (PageKey(k), l)),
                    );
                    let cands = std::mem::take(&mut p.candidates);
                    let mut view = View {
                        bp,
                        flush: &mut self.flush_list,
                        pass: &mut self.pass,
                        files: self.files,
                        table_pages: self.table_pages,
                    };
                    p.fl.flush_list_batch(0, &mut view, cands.iter().copied(), want, pass.lsn_limit);
                    p.candidates = cands;
                }
                p.pass = Some(pass);
                self.next_batch(actor) || self.pass_end(bp, actor, now)
            }
        }
    }

    /// Queues the next batch of the pass as `actor`'s I/O; false when the pass's pages
    /// are all written.
    pub(super) fn next_batch(&mut self, actor: usize) -> bool {
        let left = (self.pass.len() - self.pass_pos) as u64;
        let plan = match &mut self.cleaner {
            Cleaner::Mysql57 { dblwr, .. } => {
                if left == 0 {
                    return false;
                }
                dblwr.batch(left)
            }
            Cleaner::Percona(p) => {
                if left == 0 {
                    return false;
                }
                if self.p.doublewrite {
                    p.dblwr.batch(left)
                } else {
                    // Every page of the pass in place at once, then the batch's ends.
                    BatchPlan { pages: left, sync_data: self.p.method.syncs_data(), ..BatchPlan::default() }
                }
            }
            Cleaner::Mariadb(m) => {
                if !self.p.doublewrite {
                    // In place at once, then the data files' fsync.
                    if left == 0 {
                        return false;
                    }
                    BatchPlan {
                        pages: left.min(m.dblwr.slot_pages()),
                        sync_data: self.p.method.syncs_data(),
                        ..BatchPlan::default()
                    }
                } else {
                    match m.next_plan.take() {
                        Some(p) => p,
                        None => return false,
                    }
                }
            }
        };
        self.queue_plan(actor, &plan);
        true
    }

    /// Queues `plan`'s I/O for the next `plan.pages` pages of the pass: the copies to
    /// ibdata1, its fsync, the pages in place (asynchronous), the barrier, each data file's
    /// fsync.
    fn queue_plan(&mut self, actor: usize, plan: &BatchPlan) {
        let n = (plan.pages as usize).min(self.pass.len() - self.pass_pos);
        self.batch.clear();
        let lru_end = self.lru_pages;
        self.batch.extend((self.pass_pos..self.pass_pos + n).map(|j| (self.pass[j], j < lru_end)));
        self.pass_pos += n;
        if let Cleaner::Mysql57 { .. } = self.cleaner {
            self.stats.pages_flushed += n as u64;
            self.stats.pages_lru_flushed += self.batch.iter().filter(|b| b.1).count() as u64;
        } else {
            self.stats.pages_flushed += n as u64;
        }
        if plan.n > 0 {
            self.stats.dblwr_pages_written += n as u64;
            self.stats.dblwr_writes += plan.n as u64;
        }
        let ps = u64::from(self.page_size);
        let sys = self.files.system();
        let q = &mut self.io[actor];
        for c in &plan.copies[..plan.n] {
            q.push_back(FileOp::Write {
                file: sys,
                offset: c.first * ps,
                len: (c.pages * ps).min(u64::from(u32::MAX)) as u32,
                o_sync: false,
            });
        }
        if plan.sync_system {
            q.push_back(FileOp::Sync { file: sys });
        }
        self.batch.sort_unstable();
        for &(k, _) in &self.batch {
            let key = PageKey(k);
            let file = self.files.of_space(key.space_id());
            q.push_back(FileOp::WriteAsync { file, offset: key.page_no() * ps, len: self.page_size });
        }
        q.push_back(FileOp::Barrier);
        if let (true, Cleaner::Percona(p)) = (plan.sync_data, &self.cleaner) {
            // Each instance's buf_flush_end.
            instance_ends(q, self.files, self.batch.iter().map(|b| b.0), p.fl.r.instances);
        } else if plan.sync_data {
            // fil_flush_file_spaces: each data file written.
            let mut last = u32::MAX;
            for &(k, _) in &self.batch {
                let file = self.files.of_space(PageKey(k).space_id());
                if file != last {
                    q.push_back(FileOp::Sync { file });
                    last = file;
                }
            }
        }
        self.jobs[actor] = Job::Batch;
    }

    /// A write of `offset` in `file` returned (a ZFS file takes the page cleaner's writes
    /// one after the other): a page of the batch in flight is clean now. True if that
    /// freed its frame: MySQL 5.7 frees an LRU-flushed page when its write completes;
    /// MariaDB 10.11 leaves it at the LRU tail, clean, for a later batch or a thread's
    /// scan (MDEV-33613), and its waiting threads wake only when a batch frees frames.
    pub fn page_written(&mut self, bp: &mut BufferPool, actor: usize, file: u32, offset: u64) -> bool {
        if file > self.files.system() {
            return false;
        }
        let key = PageKey::new(file, offset / u64::from(self.page_size)).0;
        if actor == lru_manager_actor(self.trx.len()) {
            return self.lru_page_written(bp, key);
        }
        if self.batch.is_empty() {
            return false;
        }
        let Some(&(_, lru)) = self.batch.iter().find(|b| b.0 == key) else { return false };
        let free = lru && matches!(self.cleaner, Cleaner::Mysql57 { .. });
        bp.end_write(PageKey(key), free);
        free
    }

    /// A batch's writes are done: its pages are clean (an LRU page of MySQL 5.7's is freed);
    /// the next batch, or the pass's end.
    pub(super) fn batch_done(&mut self, bp: &mut BufferPool, actor: usize, now: Nanos) -> AfterIo {
        let evict_lru = matches!(self.cleaner, Cleaner::Mysql57 { .. });
        for &(key, lru) in &self.batch {
            bp.end_write(PageKey(key), lru && evict_lru);
        }
        self.batch.clear();
        if let Cleaner::Mariadb(m) = &mut self.cleaner {
            if self.p.doublewrite {
                m.next_plan = m.dblwr.batch_completed();
            }
        }
        self.release_checkpoint_waiters();
        if self.next_batch(actor) || self.pass_end(bp, actor, now) {
            AfterIo::More
        } else {
            AfterIo::Done
        }
    }

    /// MariaDB: the pass's batches are written; its checkpoint (queued as I/O: true), or
    /// its end.
    fn pass_end(&mut self, bp: &BufferPool, actor: usize, now: Nanos) -> bool {
        if let Cleaner::Percona(p) = &mut self.cleaner {
            // The pass's pages are written (they all were queued at its start).
            if let Some(pass) = p.pass.take() {
                p.fl.cleaner_end(&pass, self.pass.len() as u64);
            }
            return false;
        }
        let obs = self.observation(bp, now);
        let Cleaner::Mariadb(m) = &mut self.cleaner else { return false };
        let Some(pass) = m.pass else { return false };
        if pass.checkpoint {
            // log_checkpoint: at the oldest modification (the LSN when nothing is dirty).
            let at = if obs.oldest_lsn == 0 { obs.lsn } else { obs.oldest_lsn };
            if at > m.last_checkpoint {
                if let Log::Mariadb(log) = &mut self.redo {
                    let tables = u64::from(self.files.tables);
                    let names = tables * file_modify_record(FIRST_SPACE_ID, 20);
                    let (_, w) = log.checkpoint(names);
                    let q = &mut self.io[actor];
                    for fw in &w.writes[..w.n] {
                        q.push_back(FileOp::Write {
                            file: self.files.log(0),
                            offset: fw.offset,
                            len: fw.len as u32,
                            o_sync: false,
                        });
                    }
                    if w.fsync {
                        q.push_back(FileOp::Sync { file: self.files.log(0) });
                    }
                    self.jobs[actor] = Job::Checkpoint { lsn: at };
                    let mut done = pass;
                    done.checkpoint = false;
                    m.pass = Some(done);
                    return true;
                }
            }
        }
        m.fl.end_pass(&pass, &obs, m.n_list, m.n_lru);
        m.pass = None;
        false
    }

    /// MariaDB's checkpoint at `lsn` is written: later passes and threads measure the
    /// checkpoint age from it.
    pub(super) fn checkpoint_done(&mut self, bp: &BufferPool, actor: usize, lsn: u64, now: Nanos) -> AfterIo {
        if let Cleaner::Mariadb(m) = &mut self.cleaner {
            m.last_checkpoint = m.last_checkpoint.max(lsn);
            if let Log::Mariadb(log) = &mut self.redo {
                log.checkpoint_done();
            }
        }
        self.release_checkpoint_waiters();
        if self.pass_end(bp, actor, now) {
            AfterIo::More
        } else {
            AfterIo::Done
        }
    }

    /// MariaDB: the last checkpoint's LSN (5.7: the oldest modification, simplification 5).
    pub(super) fn last_checkpoint(&mut self) -> u64 {
        match &self.cleaner {
            Cleaner::Mariadb(m) => m.last_checkpoint,
            Cleaner::Mysql57 { .. } | Cleaner::Percona(_) => {
                let lsn = self.redo.lsn();
                self.flush_list.oldest().unwrap_or(lsn)
            }
        }
    }

    /// Restarts the page cleaner's state (a server restart).
    pub(super) fn cleaner_restart(&mut self) {
        match &mut self.cleaner {
            Cleaner::Percona(p) => p.restart(&self.ages),
            Cleaner::Mysql57 { pc, .. } => *pc = PageCleaner::default(),
            Cleaner::Mariadb(m) => {
                let (params, log) = (m.fl.params, m.fl.log);
                m.fl = MariadbFlush::new(params, log, self.frames, self.rotational);
                m.dblwr = DoublewriteBuffer::new(&params, self.extent_pages);
                (m.pass, m.next_plan) = (None, None);
                m.last_checkpoint = self.redo.lsn();
            }
        }
    }
}
