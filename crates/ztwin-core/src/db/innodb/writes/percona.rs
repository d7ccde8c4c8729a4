//! Percona Server 5.7's flushing in the run (`percona_flush`, in its merged mode: one LRU
//! manager and one free list stand for every buffer pool instance): the LRU manager thread,
//! a user thread short of a frame, `log_free_check`'s wait for a sync flush, and the
//! batch ends per instance. The page cleaner's passes are `cleaner`'s ([`Cleaner::Percona`]).
//!
//! Mechanism.
//! - The LRU manager (its own database thread, [`lru_manager_actor`]) sleeps as
//!   `PerconaFlush::lru_wake_at` says (a timer: nothing wakes it earlier), then runs one LRU
//!   batch ([`Writes::lru_batch`]): clean pages of the tail go to the free list at once,
//!   dirty ones (with their neighbours of the old sublist) are written in place
//!   (asynchronous writes), and each is freed as its write completes
//!   (`buf_page_io_complete` of a `BUF_FLUSH_LRU` write); the batch ends as each instance's
//!   `buf_flush_end` would (below); when every write is done, `lru_end` and the next sleep.
//! - A batch's end (`buf_flush_end`), with `innodb_doublewrite` off: the wait for every
//!   write of the batch, then per instance that wrote, the fsync of each data file that
//!   instance's pages went to (`os_aio_wait_until_no_pending_writes`,
//!   `fil_flush_file_spaces`); none with O_DIRECT_NO_FSYNC. With it on, MySQL 5.7's
//!   doublewrite batches of 120 pages (copies to ibdata1, its fsync, the pages in place),
//!   each ended as above. The page cleaner's flush-list batches end the same way.
//! - A thread whose read finds no free frame (`buf_LRU_get_free_block`): with
//!   `innodb_empty_free_list_algorithm` = backoff (as the server runs it: forced to legacy
//!   below `5 * BUF_LRU_MIN_LEN` pages an instance) it never scans the LRU list, evicts or
//!   writes a page: its rounds yield the CPU twice (the yields' system calls on the vCPUs)
//!   or sleep 1 µs to 10 ms, then look at the free list again; each round counts
//!   `Innodb_buffer_pool_wait_free`. With legacy: MySQL 5.7's path (the scan of the last 100
//!   LRU pages for a clean one as the read takes its frame, then a single-page flush of a
//!   dirty tail page by the thread itself, or a wait for the next batch when none can be
//!   written).
//! - `log_free_check` past `max_modified_age_sync`: the thread asks a sync flush of the page
//!   cleaner (`buf_flush_request_force`, which wakes it) and polls every 10 ms
//!   (`buf_flush_wait_flushed`) until the oldest modification reaches its target, then
//!   checks the age again.
//! - Counters by Percona Server's names: `Innodb_buffer_pool_pages_flushed` counts the
//!   flush-list pages written and the LRU manager's pages written and evicted (not the
//!   legacy single-page flushes); `Innodb_buffer_pool_pages_LRU_flushed` reads 0;
//!   `Innodb_buffer_pool_wait_free` counts backoff rounds (and legacy single-page flushes);
//!   `Innodb_checkpoint_age` is `lsn - last_checkpoint_lsn` ([`PerconaStats`]).
//!
//! Sources: Percona Server 5.7.22-22 `storage/innobase/buf/buf0flu.cc` (`buf_lru_manager`,
//! `buf_flush_LRU_list`, `buf_flush_end`, `buf_flush_wait_flushed`,
//! `buf_flush_request_force`), `buf/buf0lru.cc` (`buf_LRU_get_free_block`),
//! `buf/buf0buf.cc` (`buf_page_io_complete`), `log/log0log.cc`
//! (`log_preflush_pool_modified_pages`), `srv/srv0srv.cc` (`srv_export_innodb_status`); see
//! `percona_flush`'s module doc for the mechanisms themselves.
//!
//! Simplifications:
//! 1. Merged instances (`percona_flush`'s simplification 3): one LRU manager thread, one
//!    free list; a batch's pages are grouped by instance ([`instance_of`]) only for its
//!    ends, which follow the writes of every instance at once (the instances' threads run
//!    their batches concurrently in the server).
//! 2. With `innodb_doublewrite` on, the pages go through MySQL 5.7's doublewrite batches in
//!    ibdata1 (`doublewrite`), not Percona's parallel doublewrite file (`percona_flush`'s
//!    simplification 5); the LRU manager's batches use the same area as the page
//!    cleaner's.
//! 3. A yield is the CPU of one system call; a sleep is exactly as long as asked (no
//!    timer slack).
//! 4. The page cleaner sees no pending read (`buf_get_n_pending_read_ios`: its idle loop
//!    never waits on reads).

use super::cleaner::{Cleaner, View};
use super::*;
use crate::db::innodb::doublewrite::BatchPlan;
use crate::db::innodb::percona_flush::{
    self as pf, instance_of, CleanerObs, CleanerPass, EmptyFreeListAlgorithm, FrameWaiter, LruBatchResult,
    PerconaFlush, WAIT_FLUSHED_POLL_NS,
};
use crate::sim::time::US;

/// Percona Server's counters the other servers have not (`srv_export_innodb_status` and
/// INNODB_METRICS names, see `percona_flush::Stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerconaStats {
    /// The flushing's counters.
    pub flush: pf::Stats,
    /// Innodb_checkpoint_max_age.
    pub checkpoint_max_age: u64,
    /// The LRU manager's sleep now (ms, a gauge).
    pub lru_sleep_ms: u64,
    /// Buffer pool instances (`srv_buf_pool_instances` as the server runs it).
    pub instances: u64,
}

/// Percona Server 5.7's flushing state (the page cleaner's and the LRU manager's).
pub(super) struct Percona {
    pub(super) fl: PerconaFlush,
    /// The parameters it was made with (a restart makes it again).
    pub(super) params: pf::Params,
    /// The page cleaner's doublewrite batches (innodb_doublewrite on).
    pub(super) dblwr: Doublewrite,
    /// The page cleaner's pass in progress.
    pub(super) pass: Option<CleanerPass>,
    /// The flush list's oldest entries, taken before a flush-list batch walks them.
    pub(super) candidates: Vec<(PageKey, u64)>,
    /// The LRU manager's batch.
    lru: LruJob,
    /// Per client: its search for a free frame (backoff rounds).
    waiters: Vec<FrameWaiter>,
    /// Per client: the oldest modification it waits to see flushed (0: none).
    flush_wait: Vec<u64>,
}

/// The LRU manager's batch in flight.
struct LruJob {
    /// What the batch did (written pages, evictions).
    res: LruBatchResult,
    /// The pages the batch wrote (the view pushes them here).
    written: Vec<u64>,
    /// The same, sorted, with whether each one's write completed.
    pages: Vec<(u64, bool)>,
    /// Pages queued so far.
    pos: usize,
    /// Its doublewrite batches (innodb_doublewrite on).
    dblwr: Doublewrite,
}

impl Percona {
    /// The flushing of `params` with the log's `ages`, for `clients` client threads.
    pub(super) fn new(
        p: &WriteParams,
        params: pf::Params,
        ages: &LogAges,
        extent_pages: u64,
        clients: usize,
    ) -> Percona {
        let dblwr = Doublewrite::new(p.doublewrite, p.method.syncs_data(), extent_pages);
        Percona {
            fl: PerconaFlush::new(params, *ages, 0, true),
            params,
            dblwr,
            pass: None,
            candidates: Vec::with_capacity(4096),
            lru: LruJob {
                res: LruBatchResult::default(),
                written: Vec::with_capacity(4096),
                pages: Vec::with_capacity(4096),
                pos: 0,
                dblwr,
            },
            waiters: vec![FrameWaiter::default(); clients],
            flush_wait: vec![0; clients],
        }
    }

    /// The server restarted: its threads start again, nothing in flight.
    pub(super) fn restart(&mut self, ages: &LogAges) {
        self.fl = PerconaFlush::new(self.params, *ages, 0, true);
        self.pass = None;
        self.lru.written.clear();
        self.lru.pages.clear();
        self.lru.pos = 0;
        self.waiters.fill(FrameWaiter::default());
        self.flush_wait.fill(0);
    }
}

/// `srv_get_activity_count()`: row changes and commits so far (the driver's
/// `srv_check_activity` counts the same).
pub(super) fn activity_count(s: &WriteStats) -> u64 {
    s.commits + s.rows_updated + s.rows_deleted + s.rows_inserted
}

/// The buffer pool instance of driver page key `key` ([`instance_of`] of its tablespace id:
/// ibdata1's is 0, table `t`'s `FIRST_SPACE_ID + t`).
fn instance_of_driver_key(files: DbFiles, key: u64, instances: u64) -> usize {
    let k = PageKey(key);
    let file = k.space_id();
    let space = if file >= files.system() { 0 } else { FIRST_SPACE_ID.saturating_add(file) };
    instance_of(space, k.page_no(), instances)
}

/// The end of a batch of `pages` (sorted driver keys) as each instance's `buf_flush_end`
/// has it, after the wait for every write: per instance that wrote, an fsync of each data
/// file its pages went to.
pub(super) fn instance_ends(
    q: &mut VecDeque<FileOp>,
    files: DbFiles,
    pages: impl Iterator<Item = u64> + Clone,
    instances: u64,
) {
    for i in 0..instances.max(1) as usize {
        let mut last = u32::MAX;
        for k in pages.clone() {
            if instance_of_driver_key(files, k, instances) != i {
                continue;
            }
            let file = files.of_space(PageKey(k).space_id());
            if file != last {
                q.push_back(FileOp::Sync { file });
                last = file;
            }
        }
    }
}

impl Writes {
    /// Percona Server's counters into `s` (the others' as they are).
    pub(super) fn percona_stats(&self, s: WriteStats) -> WriteStats {
        let Cleaner::Percona(p) = &self.cleaner else { return s };
        let f = p.fl.stats;
        WriteStats {
            pages_flushed: f.buffer_pool_pages_flushed,
            pages_lru_flushed: f.buffer_pool_pages_lru_flushed,
            wait_free: f.buffer_pool_wait_free + s.wait_free,
            percona: Some(PerconaStats {
                flush: f,
                checkpoint_max_age: p.fl.checkpoint_max_age(),
                lru_sleep_ms: p.fl.lru.first().map_or(0, |m| m.sleep_ms),
                instances: p.fl.r.instances,
            }),
            ..s
        }
    }

    /// What Percona Server's page cleaner reads (`pending_reads`: simplification 4).
    pub(super) fn percona_obs(&self, bp: &BufferPool, now: Nanos) -> CleanerObs {
        CleanerObs {
            now_ns: now,
            lsn: self.redo.lsn(),
            oldest_lsn: self.flush_list.oldest().unwrap_or(0),
            dirty_pages: self.flush_list.len() as u64,
            lru_len: bp.len() as u64,
            free_len: bp.free_frames() as u64,
            activity_count: activity_count(&self.stats),
            pending_reads: false,
        }
    }

    /// Whether a thread needing a frame takes a free one only (Percona Server's backoff):
    /// the buffer pool must not let it evict ([`BufferPool::set_free_list_only`]).
    pub fn free_list_only(&self) -> bool {
        matches!(&self.cleaner, Cleaner::Percona(p) if p.fl.r.algorithm == EmptyFreeListAlgorithm::Backoff)
    }

    /// Percona Server's `log_free_check` by `client` (see the module doc).
    pub(super) fn percona_log_free_check(&mut self, client: usize) -> LogFree {
        let lsn = self.redo.lsn();
        let oldest = self.flush_list.oldest().unwrap_or(0);
        let Cleaner::Percona(p) = &mut self.cleaner else { return LogFree::Go };
        let Some(wait) = p.flush_wait.get_mut(client) else { return LogFree::Go };
        if *wait != 0 {
            // buf_flush_wait_flushed: until the oldest modification reaches the target.
            if oldest != 0 && oldest < *wait {
                return LogFree::Poll(WAIT_FLUSHED_POLL_NS);
            }
            *wait = 0;
        }
        match p.fl.log_free_check(lsn, oldest) {
            None => LogFree::Go,
            Some(target) => {
                *wait = target.max(1);
                self.stats.checkpoint_waits += 1;
                // buf_flush_request_force signals the page cleaner.
                self.wake_cleaner |= p.fl.r.p.innodb_flush_sync;
                LogFree::Poll(WAIT_FLUSHED_POLL_NS)
            }
        }
    }

    /// Percona Server: a thread (`actor`) found no free frame; backoff's next round (None:
    /// legacy, MySQL 5.7's path).
    pub(super) fn percona_no_frame(&mut self, bp: &BufferPool, actor: usize) -> Option<FrameStep> {
        let Cleaner::Percona(p) = &mut self.cleaner else { return None };
        if p.fl.r.algorithm != EmptyFreeListAlgorithm::Backoff {
            return None;
        }
        let Some(w) = p.waiters.get_mut(actor) else { return Some(FrameStep::Wait) };
        Some(match p.fl.get_free_block(0, w, bp.free_frames() as u64, false, false) {
            pf::FrameStep::Yield { times } => FrameStep::Yield(times),
            pf::FrameStep::Sleep { us } => FrameStep::Sleep(us.saturating_mul(US)),
            // A frame is free after all: take it at once (a round of no time).
            pf::FrameStep::Take => FrameStep::Yield(0),
            // Legacy's steps (not reached with backoff).
            pf::FrameStep::WaitLruBatchEnd
            | pf::FrameStep::ScanLru { .. }
            | pf::FrameStep::SinglePageFlush { .. } => FrameStep::Wait,
        })
    }

    /// Percona Server: `actor` got its frame; its next search starts afresh.
    pub(super) fn percona_frame_taken(&mut self, actor: usize) {
        if let Cleaner::Percona(p) = &mut self.cleaner {
            if let Some(w) = p.waiters.get_mut(actor) {
                *w = FrameWaiter::default();
            }
        }
    }

    /// The server's own threads (the page cleaner, the master thread, Percona Server's
    /// LRU manager, the purge threads): their slots follow the clients'.
    pub fn db_threads(&self) -> usize {
        2 + usize::from(matches!(self.cleaner, Cleaner::Percona(_))) + self.p.purge.threads as usize
    }

    /// When Percona Server's LRU manager, done with its last batch at `now`, runs again
    /// (None: the server has none).
    pub fn lru_next(&self, now: Nanos) -> Option<Nanos> {
        match &self.cleaner {
            Cleaner::Percona(p) => Some(p.fl.lru_wake_at(0, now).max(now)),
            _ => None,
        }
    }

    /// The LRU manager (`actor`)'s iteration at `now`: its batch's clean pages are freed at
    /// once, its dirty ones queued as `actor`'s writes (true; then [`Writes::next_op`] and
    /// [`Writes::io_done`]); false when it wrote nothing (the iteration is over).
    pub fn lru_batch(&mut self, bp: &mut BufferPool, actor: usize, now: Nanos) -> bool {
        let Cleaner::Percona(p) = &mut self.cleaner else { return false };
        let (free, lru) = (bp.free_frames() as u64, bp.len() as u64);
        let b = p.fl.lru_begin(0, now, free, lru);
        let j = &mut p.lru;
        j.written.clear();
        let mut view = View {
            bp,
            flush: &mut self.flush_list,
            pass: &mut j.written,
            files: self.files,
            table_pages: self.table_pages,
        };
        j.res = p.fl.lru_batch(0, &mut view, &b);
        if j.written.is_empty() {
            p.fl.lru_end(0, &j.res);
            return false;
        }
        j.pages.clear();
        j.pages.extend(j.written.iter().map(|&k| (k, false)));
        j.pages.sort_unstable();
        j.pos = 0;
        self.lru_next_slice(actor)
    }

    /// Queues the LRU manager's next slice of writes (all of them, or a doublewrite batch)
    /// as `actor`'s I/O; false when all are queued.
    fn lru_next_slice(&mut self, actor: usize) -> bool {
        let Cleaner::Percona(p) = &mut self.cleaner else { return false };
        let j = &mut p.lru;
        let left = (j.pages.len() - j.pos) as u64;
        if left == 0 {
            return false;
        }
        let plan = if self.p.doublewrite {
            j.dblwr.batch(left)
        } else {
            BatchPlan { pages: left, sync_data: self.p.method.syncs_data(), ..BatchPlan::default() }
        };
        let n = (plan.pages.max(1) as usize).min(j.pages.len() - j.pos);
        let slice = &j.pages[j.pos..j.pos + n];
        j.pos += n;
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
        for &(k, _) in slice {
            let key = PageKey(k);
            let file = self.files.of_space(key.space_id());
            q.push_back(FileOp::WriteAsync { file, offset: key.page_no() * ps, len: self.page_size });
        }
        q.push_back(FileOp::Barrier);
        if plan.sync_data {
            instance_ends(q, self.files, slice.iter().map(|b| b.0), p.fl.r.instances);
        }
        self.jobs[actor] = Job::LruBatch;
        true
    }

    /// The LRU manager's slice is written: its pages are freed (those a completed write
    /// has not freed already); the next slice, or the batch's end (`lru_end`).
    pub(super) fn lru_batch_done(&mut self, bp: &mut BufferPool, actor: usize) -> AfterIo {
        if let Cleaner::Percona(p) = &mut self.cleaner {
            let j = &mut p.lru;
            for (k, done) in &mut j.pages[..j.pos] {
                if !*done {
                    bp.end_write(PageKey(*k), true);
                    *done = true;
                }
            }
        }
        if self.lru_next_slice(actor) {
            return AfterIo::More;
        }
        if let Cleaner::Percona(p) = &mut self.cleaner {
            p.fl.lru_end(0, &p.lru.res);
        }
        AfterIo::Done
    }

    /// A write of the LRU manager's batch returned (`key`): the page is freed at once
    /// (`buf_page_io_complete`). True if it was one of the batch's.
    pub(super) fn lru_page_written(&mut self, bp: &mut BufferPool, key: u64) -> bool {
        let Cleaner::Percona(p) = &mut self.cleaner else { return false };
        let j = &mut p.lru;
        let Ok(at) = j.pages[..j.pos].binary_search_by_key(&key, |b| b.0) else { return false };
        if j.pages[at].1 {
            return false;
        }
        j.pages[at].1 = true;
        bp.end_write(PageKey(key), true);
        true
    }

    /// The run abandons its I/O: the LRU manager's pages in flight are released, waits
    /// dropped.
    pub(super) fn percona_abandon(&mut self, bp: &mut BufferPool) {
        let Cleaner::Percona(p) = &mut self.cleaner else { return };
        for &(k, done) in &p.lru.pages {
            if !done {
                bp.end_write(PageKey(k), false);
            }
        }
        p.lru.pages.clear();
        p.lru.pos = 0;
        p.pass = None;
        p.waiters.fill(FrameWaiter::default());
        p.flush_wait.fill(0);
    }
}
