//! Buffered writes, the dirty throttle, the flusher and fsync (mm/filemap.c
//! `generic_perform_write`, mm/page-writeback.c, fs/fs-writeback.c; see the module doc of
//! [`super`]).

use super::lru::{F_DIRTY, F_RECLAIM, F_WRITEBACK, PENDING};
use super::*;

/// Jiffies at time 0: the kernel's 0 means "never" for `dirty_paused_when`.
pub(super) const JIFFIES_BASE: u64 = 1 << 32;
/// `INIT_BW` (mm/backing-dev.c): 100 MB/s in pages per second, the first bandwidth and
/// ratelimit estimate.
pub(super) const INIT_BW: u64 = 100 << (20 - PAGE_SHIFT);
/// `RATELIMIT_CALC_SHIFT` (mm/page-writeback.c): the fixed point of pos_ratio.
const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `DIRTY_POLL_THRESH` (mm/page-writeback.c): 128 KiB of pages.
const DIRTY_POLL_THRESH: u64 = 128 >> (PAGE_SHIFT - 10);
/// The ratelimit while the dirty limit is exceeded (`balance_dirty_pages_ratelimited_flags`:
/// 32 KiB of pages).
const EXCEEDED_RATELIMIT: u64 = 32 >> (PAGE_SHIFT - 10);
/// `nr_dirtied_pause` of a new task (kernel/fork.c: 128 KiB of pages).
const INITIAL_DIRTIED_PAUSE: u64 = 128 >> (PAGE_SHIFT - 10);
/// `MIN_WRITEBACK_PAGES` (fs/fs-writeback.c): 4 MiB.
const MIN_WRITEBACK_PAGES: i64 = 4096 >> (PAGE_SHIFT - 10);
/// `DIRTY_SCOPE` (include/linux/writeback.h).
const DIRTY_SCOPE: u64 = 8;
/// Pages above which a ranged sync waits for the file's latest writeback instead of
/// looking at each page (simplification 7).
const RANGE_WAIT_SCAN: u64 = 256;

/// A writing thread's dirty-throttle state (task_struct's `nr_dirtied`,
/// `nr_dirtied_pause`, `dirty_paused_when`), kept by the caller, one per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dirtier {
    /// Pages dirtied since the last check.
    pub nr_dirtied: u64,
    /// Pages between checks.
    pub nr_dirtied_pause: u64,
    /// Jiffies of the end of the last pause (0: never).
    pub dirty_paused_when: u64,
    /// The last pause found the limit reached (`task_ratelimit` 0): check again first.
    pub recheck: bool,
}

impl Default for Dirtier {
    fn default() -> Self {
        Dirtier {
            nr_dirtied: 0,
            nr_dirtied_pause: INITIAL_DIRTIED_PAUSE,
            dirty_paused_when: 0,
            recheck: false,
        }
    }
}

/// `domain_dirty_limits` for `avail` dirtyable pages: (bg_thresh, thresh).
pub(super) fn domain_dirty_limits(p: &PageCacheParams, avail: u64) -> (u64, u64) {
    let ratio = u64::from(p.dirty_ratio) * PAGE_SIZE / 100;
    let bg_ratio = u64::from(p.dirty_background_ratio) * PAGE_SIZE / 100;
    let thresh = if p.dirty_bytes > 0 {
        p.dirty_bytes.div_ceil(PAGE_SIZE)
    } else {
        ((u128::from(ratio) * u128::from(avail)) / u128::from(PAGE_SIZE)) as u64
    };
    let mut bg = if p.dirty_background_bytes > 0 {
        p.dirty_background_bytes.div_ceil(PAGE_SIZE)
    } else {
        ((u128::from(bg_ratio) * u128::from(avail)) / u128::from(PAGE_SIZE)) as u64
    };
    if bg >= thresh {
        bg = thresh / 2;
    }
    (bg, thresh)
}

/// `dirty_freerun_ceiling`.
fn freerun(thresh: u64, bg: u64) -> u64 {
    (thresh + bg) / 2
}

/// `dirty_poll_interval`.
fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << ((thresh - dirty).ilog2() >> 1)
    } else {
        1
    }
}

/// `pos_ratio_polynom`: 2 at freerun, 1 at the setpoint, 0 at the limit (x 2^10).
fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let den = (limit.saturating_sub(setpoint) | 1) as i128;
    let x = (((setpoint as i128) - (dirty as i128)) << RATELIMIT_CALC_SHIFT) / den;
    let mut r = x;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r += 1 << RATELIMIT_CALC_SHIFT;
    r.clamp(0, 2 << RATELIMIT_CALC_SHIFT) as i64
}

/// `pos_ratio_polynom`, for the tests.
#[cfg(test)]
pub(super) fn pos_ratio_polynom_for_tests(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    pos_ratio_polynom(setpoint, dirty, limit)
}

/// One dirty-throttle computation's inputs (`struct dirty_throttle_control`, one wb).
#[derive(Debug, Clone, Copy)]
struct Dtc {
    dirty: u64,
    thresh: u64,
    bg: u64,
    pos_ratio: u64,
}

/// What the flusher is doing (`wb_writeback_work` of `wb_do_writeback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kupdate,
    Background,
}

#[derive(Debug, Clone, Copy)]
struct Work {
    kind: Kind,
    nr_pages: i64,
    /// One `wb_writeback` loop iteration ran `queue_io` already.
    queued: bool,
    /// That iteration wrote something or cleaned a file.
    progress: bool,
}

/// The file being written (`writeback_sb_inodes` -> `__writeback_single_inode`).
#[derive(Debug, Clone, Copy)]
struct Cur {
    file: FileId,
    chunk: i64,
    nr_to_write: i64,
    index: u64,
    last: u64,
    start_index: u64,
    cycled: bool,
}

/// Where `wb_do_writeback` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Kupdate,
    Background,
    End,
}

/// The flusher of the one bdi_writeback (its work, b_dirty / b_io / b_more_io, its timer).
#[derive(Debug)]
pub(super) struct Flusher {
    /// WB_writeback_running: a run is in progress (`writeback_in_progress`).
    running: bool,
    stage: Stage,
    work: Option<Work>,
    cur: Option<Cur>,
    /// When the delayed work runs next (`wb_wakeup_delayed`; a wakeup makes it now).
    pub(super) timer: Option<Nanos>,
    /// A run waiting for request tags continues then.
    blocked_until: Option<Nanos>,
    /// Woken while running: run again at once.
    kicked: bool,
    last_old_flush: Nanos,
    /// Head at the front, tail (oldest) at the back.
    b_dirty: VecDeque<FileId>,
    b_io: VecDeque<FileId>,
    b_more_io: VecDeque<FileId>,
}

impl Flusher {
    pub(super) fn new() -> Flusher {
        Flusher {
            running: false,
            stage: Stage::End,
            work: None,
            cur: None,
            timer: None,
            blocked_until: None,
            kicked: false,
            last_old_flush: 0,
            b_dirty: VecDeque::new(),
            b_io: VecDeque::new(),
            b_more_io: VecDeque::new(),
        }
    }

    /// Room for `files` files on each list (no allocation later).
    pub(super) fn reserve(&mut self, files: usize) {
        for l in [&mut self.b_dirty, &mut self.b_io, &mut self.b_more_io] {
            if l.capacity() < files {
                l.reserve(files - l.len());
            }
        }
    }

    fn has_dirty_io(&self) -> bool {
        !(self.b_dirty.is_empty() && self.b_io.is_empty() && self.b_more_io.is_empty())
    }
}

/// What an fsync step asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncStep {
    /// Issue this write, report it with `io_done_at`, and step again.
    Write(DevIo),
    /// A dirty page is still under an earlier writeback: step again at this time.
    Wait(Nanos),
    /// Every page is written; the data part ends at this time (all writeback of the range
    /// completed). The journal's part follows (`fs::journal`).
    Done(Nanos),
}

/// An fsync, fdatasync or O_SYNC write's data writeback in progress
/// (`file_write_and_wait_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncWalk {
    file: FileId,
    first: u64,
    last: u64,
    next: u64,
    whole: bool,
    started: bool,
}

impl PageCache {
    /// A buffered write of `len` bytes at `offset` of `file` by thread `task` at `now`
    /// (`generic_perform_write`): see [`WritePlan`] and the module doc for the protocol.
    pub fn write(
        &mut self,
        task: &mut Dirtier,
        file: FileId,
        offset: u64,
        len: u64,
        now: Nanos,
    ) -> WritePlan {
        self.retire(now);
        let mut plan = WritePlan::new(now);
        if task.recheck {
            task.recheck = false;
            let pause = self.balance(task, task.nr_dirtied, now);
            if pause > 0 {
                plan.pause_ns = pause;
                return plan;
            }
        }
        let end = offset.saturating_add(len).min(MAX_FILE_PAGES << PAGE_SHIFT);
        let mut pos = offset;
        while pos < end {
            let idx = pos >> PAGE_SHIFT;
            let (pstart, pend) = (idx << PAGE_SHIFT, (idx + 1) << PAGE_SHIFT);
            let chunk_end = end.min(pend);
            let isize = self.files[file as usize].size;
            let s = match self.slot_of(file, idx) {
                Some(s) => {
                    let until = self.pages[s as usize].io_until;
                    if until > now && self.pages[s as usize].flags & F_WRITEBACK == 0 {
                        plan.wait_until = plan.wait_until.max(until);
                    }
                    s
                }
                None => {
                    // write_begin with FGP_WRITEBEGIN: __GFP_WRITE, so no refault activation.
                    let Some(s) = self.add_page(file, idx, now, false) else {
                        plan.retry_at = Some(self.retry_time(now));
                        break;
                    };
                    // A block written in part inside i_size is read first; past it, zeroed.
                    let partial = pos > pstart || chunk_end < pend;
                    if partial && pstart < isize {
                        debug_assert!(plan.n < 2, "only the first and last pages are partial");
                        self.pages[s as usize].io_until = PENDING;
                        plan.reads[plan.n as usize] =
                            DevIo { op: Op::Read, file, offset: pstart, bytes: PAGE_SIZE as u32 };
                        plan.n += 1;
                        self.stats.pgpgin += PAGE_SIZE / 1024;
                    }
                    s
                }
            };
            if chunk_end > isize {
                self.files[file as usize].size = chunk_end;
            }
            if self.pages[s as usize].flags & F_DIRTY == 0 {
                self.mark_dirty(s, file, idx, now);
                task.nr_dirtied += 1;
                plan.dirtied += 1;
            }
            pos = chunk_end;
            plan.done_bytes = pos - offset;
            // `balance_dirty_pages_ratelimited`, after every page.
            let mut ratelimit = task.nr_dirtied_pause;
            if self.wb.dirty_exceeded {
                ratelimit = ratelimit.min(EXCEEDED_RATELIMIT);
            }
            if task.nr_dirtied >= ratelimit {
                let pause = self.balance(task, task.nr_dirtied, now);
                if pause > 0 {
                    plan.pause_ns = pause;
                    break;
                }
            }
        }
        plan
    }

    /// `folio_mark_dirty` of a clean page: accounting (`folio_account_dirtied`), the dirty
    /// tag and the inode (`__mark_inode_dirty(I_DIRTY_PAGES)`).
    fn mark_dirty(&mut self, s: u32, file: FileId, idx: u64, now: Nanos) {
        let f = &mut self.pages[s as usize].flags;
        *f = (*f | F_DIRTY) & !F_RECLAIM;
        self.nr_dirty += 1;
        self.stats.nr_dirtied += 1;
        self.wb.stat_dirtied += 1;
        let fs = &mut self.files[file as usize];
        fs.set_dirty(idx);
        if fs.i_dirty_pages {
            return;
        }
        fs.i_dirty_pages = true;
        if fs.list != WbList::None {
            // Queued by the flusher, or still on b_dirty: not repositioned.
            return;
        }
        let first_dirty = !self.flusher.has_dirty_io();
        fs.dirtied_when = now;
        fs.list = WbList::Dirty;
        self.flusher.b_dirty.push_front(file);
        if first_dirty && self.p.dirty_writeback_centisecs > 0 {
            // `wb_wakeup_delayed`: a pending timer is left as it is.
            if self.flusher.timer.is_none() {
                self.flusher.timer = Some(now + self.writeback_interval());
            }
        }
    }

    fn writeback_interval(&self) -> Nanos {
        u64::from(self.p.dirty_writeback_centisecs) * SEC / 100
    }

    fn expire_interval(&self) -> Nanos {
        u64::from(self.p.dirty_expire_centisecs) * SEC / 100
    }

    /// `wb_start_background_writeback`: wake the flusher now.
    fn kick_flusher(&mut self, now: Nanos) {
        if self.flusher.running {
            self.flusher.kicked = true;
        } else {
            self.flusher.timer = Some(self.flusher.timer.map_or(now, |d| d.min(now)));
        }
    }

    /// `wb_over_bg_thresh`: dirty pages (not those under writeback) above the background
    /// threshold.
    fn over_bg_thresh(&self) -> bool {
        self.nr_dirty > self.dirty_limits().0
    }

    /// `balance_dirty_pages` for `pages_dirtied` pages at `now`: the pause, ns (0: none).
    fn balance(&mut self, task: &mut Dirtier, pages_dirtied: u64, now: Nanos) -> Nanos {
        let nowj = self.jiffies(now);
        let hz = u64::from(self.p.hz);
        let nr_reclaimable = self.nr_dirty;
        let dirty = self.nr_dirty + self.nr_writeback;
        let (bg, thresh) = self.dirty_limits();
        if nr_reclaimable > bg && !self.flusher.running {
            self.kick_flusher(now);
        }
        if dirty <= freerun(thresh, bg) {
            task.dirty_paused_when = nowj;
            task.nr_dirtied = 0;
            task.nr_dirtied_pause = dirty_poll_interval(dirty, thresh);
            return 0;
        }
        if !self.flusher.running {
            self.kick_flusher(now);
        }
        // One bdi_writeback holds every dirty page: wb_thresh = thresh, wb_dirty = dirty.
        let dirty_exceeded = dirty > thresh;
        let pos_ratio = self.wb_position_ratio(dirty, thresh, bg);
        self.wb.dirty_exceeded = dirty_exceeded;
        if nowj >= self.wb.bw_time_stamp + self.bandwidth_interval() {
            self.update_bandwidth(nowj, Some(Dtc { dirty, thresh, bg, pos_ratio }));
        }
        let dirty_ratelimit = self.wb.dirty_ratelimit;
        let task_ratelimit = dirty_ratelimit.saturating_mul(pos_ratio) >> RATELIMIT_CALC_SHIFT;
        let max_pause = self.wb_max_pause(dirty) as i64;
        let (min_pause, nr_dirtied_pause) = self.wb_min_pause(max_pause, task_ratelimit, dirty_ratelimit);
        let mut nowj_adj = nowj;
        let pause = match (hz * pages_dirtied).checked_div(task_ratelimit) {
            // pos_ratio 0 (at the limit): sleep max_pause.
            None => max_pause,
            Some(period) => {
                let period = period as i64;
                let mut pause = period;
                if task.dirty_paused_when != 0 {
                    pause -= nowj as i64 - task.dirty_paused_when as i64;
                }
                if pause < min_pause {
                    // Think time covers it: account the period and go on.
                    if pause < -(hz as i64) {
                        task.dirty_paused_when = nowj;
                        task.nr_dirtied = 0;
                    } else if period > 0 {
                        task.dirty_paused_when += period as u64;
                        task.nr_dirtied = 0;
                    } else if task.nr_dirtied_pause <= pages_dirtied {
                        task.nr_dirtied_pause += pages_dirtied;
                    }
                    return 0;
                }
                if pause > max_pause {
                    nowj_adj += (pause - max_pause).min(max_pause) as u64;
                    pause = max_pause;
                }
                pause
            }
        };
        task.dirty_paused_when = nowj_adj + pause as u64;
        task.nr_dirtied = 0;
        task.nr_dirtied_pause = nr_dirtied_pause;
        // The limit is reached: after the sleep the loop checks again.
        task.recheck = task_ratelimit == 0;
        let ns = pause as u64 * self.jiffy;
        self.stats.dirty_throttle_pauses += 1;
        self.stats.dirty_throttle_ns += ns;
        ns
    }

    fn bandwidth_interval(&self) -> u64 {
        (u64::from(self.p.hz) / 5).max(1)
    }

    fn max_pause_jiffies(&self) -> u64 {
        (u64::from(self.p.hz) / 5).max(1)
    }

    /// `wb_position_ratio` with one wb (`wb_thresh` = thresh, `wb_dirty` = dirty).
    fn wb_position_ratio(&self, dirty: u64, thresh: u64, bg: u64) -> u64 {
        let write_bw = self.wb.avg_write_bandwidth;
        let fr = freerun(thresh, bg);
        let limit = thresh.max(self.wb.dom_dirty_limit);
        if dirty >= limit {
            return 0;
        }
        let setpoint = (fr + limit) / 2;
        let mut pos_ratio = pos_ratio_polynom(setpoint, dirty, limit) as u128;
        let (wb_dirty, mut wb_thresh) = (dirty, thresh);
        wb_thresh = wb_thresh.max((limit - dirty) / 8);
        let x = (u128::from(wb_thresh) << 16) / u128::from(thresh | 1);
        let wb_setpoint = (u128::from(setpoint) * x) >> 16;
        let span = ((u128::from(thresh.saturating_sub(wb_thresh)) + 8 * u128::from(write_bw)) * x) >> 16;
        let x_intercept = wb_setpoint + span;
        if u128::from(wb_dirty) < x_intercept - span / 4 {
            pos_ratio = pos_ratio * (x_intercept - u128::from(wb_dirty)) / ((x_intercept - wb_setpoint) | 1);
        } else {
            pos_ratio /= 4;
        }
        // The wb reserve area.
        let x_intercept = u128::from(wb_thresh / 2);
        let wd = u128::from(wb_dirty);
        if wd < x_intercept {
            if wd > x_intercept / 8 {
                pos_ratio = pos_ratio * x_intercept / wd;
            } else {
                pos_ratio *= 8;
            }
        }
        pos_ratio.min(1 << 40) as u64
    }

    /// `wb_max_pause`, jiffies.
    fn wb_max_pause(&self, wb_dirty: u64) -> u64 {
        let bw = self.wb.avg_write_bandwidth;
        let hz = u64::from(self.p.hz);
        let t = wb_dirty / (1 + bw / (1 + hz / 8).next_power_of_two()) + 1;
        t.min(self.max_pause_jiffies())
    }

    /// `wb_min_pause`: (min pause, jiffies; the next `nr_dirtied_pause`).
    fn wb_min_pause(&self, max_pause: i64, task_ratelimit: u64, dirty_ratelimit: u64) -> (i64, u64) {
        let hz = i64::from(self.p.hz);
        let hi = i64::from(self.wb.avg_write_bandwidth.max(1).ilog2());
        let lo = i64::from(dirty_ratelimit.max(1).ilog2());
        let mut t = (hz / 100).max(1);
        if hi > lo {
            t += (hi - lo) * (10 * hz) / 1024;
        }
        t = t.min(1 + max_pause / 2);
        let pow_hz = (hz as u64).next_power_of_two();
        let mut pages = dirty_ratelimit * t as u64 / pow_hz;
        if pages < DIRTY_POLL_THRESH {
            t = max_pause;
            pages = dirty_ratelimit * t as u64 / pow_hz;
            if pages > DIRTY_POLL_THRESH {
                pages = DIRTY_POLL_THRESH;
                t = (hz as u64 * DIRTY_POLL_THRESH / dirty_ratelimit.max(1)) as i64;
            }
        }
        let pause = hz as u64 * pages / (task_ratelimit + 1);
        if pause as i64 > max_pause {
            t = max_pause;
            pages = task_ratelimit * t as u64 / pow_hz;
        }
        let min = if pages >= DIRTY_POLL_THRESH { 1 + t / 2 } else { t };
        (min, pages)
    }

    /// `__wb_update_bandwidth` at `nowj` (with the ratelimit update when `dtc` is given).
    fn update_bandwidth(&mut self, nowj: u64, dtc: Option<Dtc>) {
        let elapsed = nowj.saturating_sub(self.wb.bw_time_stamp).max(1);
        let (dirtied, written) = (self.wb.stat_dirtied, self.wb.stat_written);
        if let Some(d) = dtc {
            // `domain_update_dirty_limit` / `update_dirty_limit`.
            if nowj >= self.wb.dom_dirty_limit_tstamp + self.bandwidth_interval() {
                let limit = self.wb.dom_dirty_limit;
                if limit < d.thresh {
                    self.wb.dom_dirty_limit = d.thresh;
                } else {
                    let t = d.thresh.max(d.dirty);
                    if limit > t {
                        self.wb.dom_dirty_limit = limit - ((limit - t) >> 5);
                    }
                }
                self.wb.dom_dirty_limit_tstamp = nowj;
            }
            self.update_dirty_ratelimit(d, dirtied, elapsed);
        }
        self.update_write_bandwidth(elapsed, written);
        self.wb.dirtied_stamp = dirtied;
        self.wb.written_stamp = written;
        self.wb.bw_time_stamp = nowj;
    }

    /// `wb_update_dirty_ratelimit`.
    fn update_dirty_ratelimit(&mut self, d: Dtc, dirtied: u64, elapsed: u64) {
        let hz = u64::from(self.p.hz);
        let limit = d.thresh.max(self.wb.dom_dirty_limit);
        let setpoint = (freerun(d.thresh, d.bg) + limit) / 2;
        let write_bw = self.wb.avg_write_bandwidth;
        let mut dirty_ratelimit = self.wb.dirty_ratelimit;
        let dirty_rate = (dirtied - self.wb.dirtied_stamp) * hz / elapsed;
        let task_ratelimit = (dirty_ratelimit.saturating_mul(d.pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = ((u128::from(task_ratelimit) * u128::from(write_bw)) / u128::from(dirty_rate | 1))
            .min(u128::from(write_bw)) as u64;
        let mut step = 0;
        if d.dirty < setpoint {
            let x = self.wb.balanced_dirty_ratelimit.min(balanced).min(task_ratelimit);
            if dirty_ratelimit < x {
                step = x - dirty_ratelimit;
            }
        } else {
            let x = self.wb.balanced_dirty_ratelimit.max(balanced).max(task_ratelimit);
            if dirty_ratelimit > x {
                step = dirty_ratelimit - x;
            }
        }
        let shift = dirty_ratelimit / (2 * step + 1);
        step = if shift < 64 { (step >> shift).div_ceil(8) } else { 0 };
        if dirty_ratelimit < balanced {
            dirty_ratelimit += step;
        } else {
            dirty_ratelimit -= step.min(dirty_ratelimit);
        }
        self.wb.dirty_ratelimit = dirty_ratelimit.max(1);
        self.wb.balanced_dirty_ratelimit = balanced;
    }

    /// `wb_update_write_bandwidth`.
    fn update_write_bandwidth(&mut self, elapsed: u64, written: u64) {
        let hz = u64::from(self.p.hz);
        let period = (3 * hz).next_power_of_two();
        let mut avg = self.wb.avg_write_bandwidth;
        let old = self.wb.write_bandwidth;
        let mut bw = (written - written.min(self.wb.written_stamp)) * hz;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (period - elapsed);
            bw >>= period.ilog2();
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.wb.write_bandwidth = bw;
        self.wb.avg_write_bandwidth = avg.max(1);
    }

    /// `do_writepages`' `wb_bandwidth_estimate_start`: after a second idle with nothing
    /// under writeback, the estimate restarts from now.
    fn writepages_begin(&mut self, now: Nanos) {
        let nowj = self.jiffies(now);
        if nowj.saturating_sub(self.wb.bw_time_stamp) > u64::from(self.p.hz) && self.inflight.is_empty() {
            self.wb.dirtied_stamp = self.wb.stat_dirtied;
            self.wb.written_stamp = self.wb.stat_written;
            self.wb.bw_time_stamp = nowj;
        }
    }

    /// After completions (the wb's delayed bandwidth work): update the estimate once an
    /// interval has passed.
    pub(super) fn writeback_ended(&mut self, now: Nanos) {
        let nowj = self.jiffies(now);
        if nowj >= self.wb.bw_time_stamp + self.bandwidth_interval() {
            self.update_bandwidth(nowj, None);
        }
    }

    /// Takes the dirty, not-under-writeback pages from `idx` (at most `max` and
    /// BIO_MAX_VECS) under writeback: one write request (`folio_clear_dirty_for_io`,
    /// `folio_start_writeback`).
    fn start_writeback_run(&mut self, file: FileId, idx: u64, max: u64) -> DevIo {
        let mut n = 0;
        while n < max.min(BIO_MAX_VECS) {
            let i = idx + n;
            if !self.files[file as usize].is_dirty(i) {
                break;
            }
            let Some(s) = self.slot_of(file, i) else { break };
            let pg = &mut self.pages[s as usize];
            if pg.flags & F_WRITEBACK != 0 {
                break;
            }
            pg.flags = (pg.flags & !F_DIRTY) | F_WRITEBACK;
            pg.io_until = PENDING;
            self.files[file as usize].clear_dirty(i);
            self.nr_dirty -= 1;
            self.nr_writeback += 1;
            n += 1;
        }
        debug_assert!(n > 0);
        self.stats.pgpgout += n * PAGE_SIZE / 1024;
        DevIo { op: Op::Write, file, offset: idx << PAGE_SHIFT, bytes: (n * PAGE_SIZE) as u32 }
    }

    /// The first dirty page of `file` in [from, last] not under writeback.
    fn next_writable(&self, file: FileId, mut from: u64, last: u64) -> Option<u64> {
        loop {
            let i = self.files[file as usize].next_dirty(from, last)?;
            let s = self.slot_of(file, i)?;
            if self.pages[s as usize].flags & F_WRITEBACK == 0 {
                return Some(i);
            }
            from = i + 1;
        }
    }

    // ---- fsync ----

    /// fsync or fdatasync of `file` at `now`: the data part (`file_write_and_wait_range`
    /// over the whole file). Step it with [`PageCache::sync_next`].
    pub fn fsync(&self, file: FileId) -> SyncWalk {
        SyncWalk { file, first: 0, last: MAX_FILE_PAGES - 1, next: 0, whole: true, started: false }
    }

    /// The data part of an O_SYNC / O_DSYNC write (`generic_write_sync` ->
    /// `vfs_fsync_range`) or sync_file_range: the pages of [offset, offset + len).
    pub fn sync_range(&self, file: FileId, offset: u64, len: u64) -> SyncWalk {
        let first = offset >> PAGE_SHIFT;
        if len == 0 {
            // Nothing to write or wait for.
            return SyncWalk { file, first: 1, last: 0, next: 1, whole: false, started: false };
        }
        let last = (offset.saturating_add(len) - 1) >> PAGE_SHIFT;
        SyncWalk { file, first, last, next: first, whole: false, started: false }
    }

    /// The next step of `walk` at `now` (WB_SYNC_ALL writeback, then the wait).
    pub fn sync_next(&mut self, walk: &mut SyncWalk, now: Nanos) -> SyncStep {
        self.retire(now);
        let file = walk.file;
        if !walk.started {
            walk.started = true;
            // `filemap_fdatawrite_wbc` calls `do_writepages` only for a mapping tagged dirty.
            if self.files[file as usize].nr_dirty > 0 {
                self.writepages_begin(now);
            }
        }
        if let Some(i) = self.files[file as usize].next_dirty(walk.next, walk.last) {
            let s = self.slot_of(file, i).expect("a dirty page is cached");
            let pg = self.pages[s as usize];
            if pg.flags & F_WRITEBACK != 0 {
                // WB_SYNC_ALL waits for the earlier writeback, then writes the page again.
                walk.next = i;
                return SyncStep::Wait(pg.io_until.max(now));
            }
            let io = self.start_writeback_run(file, i, walk.last - i + 1);
            walk.next = i + u64::from(io.bytes) / PAGE_SIZE;
            return SyncStep::Write(io);
        }
        // `__filemap_fdatawait_range`.
        let f = &self.files[file as usize];
        let wait = if walk.whole || walk.last.saturating_sub(walk.first) > RANGE_WAIT_SCAN {
            f.wb_until
        } else {
            let mut w = 0;
            for i in walk.first..=walk.last {
                if let Some(s) = self.slot_of(file, i) {
                    let pg = self.pages[s as usize];
                    if pg.flags & F_WRITEBACK != 0 {
                        w = w.max(pg.io_until);
                    }
                }
            }
            w
        };
        SyncStep::Done(wait.max(now))
    }

    // ---- the flusher ----

    /// When the flusher next has something to do (`None`: nothing until a write).
    pub fn writeback_due(&self) -> Option<Nanos> {
        if self.flusher.running {
            self.flusher.blocked_until
        } else {
            self.flusher.timer
        }
    }

    /// The flusher at `now` (`wb_workfn`): the next write request to issue (report it
    /// with `io_done_at`), or `None` when it sleeps until [`PageCache::writeback_due`].
    pub fn writeback_next(&mut self, now: Nanos) -> Option<DevIo> {
        self.retire(now);
        if self.flusher.running {
            match self.flusher.blocked_until {
                Some(t) if t > now => return None,
                _ => self.flusher.blocked_until = None,
            }
        } else {
            match self.flusher.timer {
                Some(t) if t <= now => {}
                _ => return None,
            }
            self.flusher.running = true;
            self.flusher.stage = Stage::Kupdate;
            self.flusher.timer = None;
            self.flusher.kicked = false;
            self.stats.flusher_runs += 1;
        }
        loop {
            if self.inflight.len() >= self.p.nr_requests as usize {
                // Blocked on request tags: continue at the next completion.
                self.flusher.blocked_until = self.inflight.peek().map(|r| r.0 .0);
                return None;
            }
            if let Some(mut cur) = self.flusher.cur {
                if let Some(io) = self.flusher_write(&mut cur) {
                    self.flusher.cur = Some(cur);
                    return Some(io);
                }
                self.flusher.cur = None;
                self.finish_file(cur, now);
                continue;
            }
            if let Some(mut work) = self.flusher.work {
                let stop = work.nr_pages <= 0 || (work.kind == Kind::Background && !self.over_bg_thresh());
                if stop {
                    self.flusher.work = None;
                    continue;
                }
                if self.flusher.b_io.is_empty() {
                    // The end of one `wb_writeback` iteration: go on only after progress.
                    if work.queued && !work.progress {
                        self.flusher.work = None;
                        continue;
                    }
                    let before = match work.kind {
                        // Before the expiry interval has passed since time 0, nothing is old.
                        Kind::Kupdate => now.checked_sub(self.expire_interval()),
                        Kind::Background => Some(now),
                    };
                    self.queue_io(before);
                    work.queued = true;
                    work.progress = false;
                    if self.flusher.b_io.is_empty() {
                        self.flusher.work = None;
                        continue;
                    }
                }
                let file = self.flusher.b_io.pop_back().expect("b_io not empty");
                self.flusher.work = Some(work);
                self.start_file(file, &work, now);
                continue;
            }
            match self.flusher.stage {
                Stage::Kupdate => {
                    self.flusher.stage = Stage::Background;
                    // `wb_check_old_data_flush`.
                    let interval = self.writeback_interval();
                    if interval > 0 && now >= self.flusher.last_old_flush + interval {
                        self.flusher.last_old_flush = now;
                        let nr = self.nr_dirty + self.files.iter().filter(|f| f.i_dirty_pages).count() as u64;
                        if nr > 0 {
                            self.flusher.work = Some(Work {
                                kind: Kind::Kupdate,
                                nr_pages: nr as i64,
                                queued: false,
                                progress: false,
                            });
                        }
                    }
                }
                Stage::Background => {
                    self.flusher.stage = Stage::End;
                    if self.over_bg_thresh() {
                        self.flusher.work = Some(Work {
                            kind: Kind::Background,
                            nr_pages: i64::MAX,
                            queued: false,
                            progress: false,
                        });
                    }
                }
                Stage::End => {
                    self.flusher.running = false;
                    if self.flusher.kicked {
                        self.flusher.kicked = false;
                        self.flusher.timer = Some(now);
                    } else if self.flusher.timer.is_none()
                        && self.flusher.has_dirty_io()
                        && self.p.dirty_writeback_centisecs > 0
                    {
                        self.flusher.timer = Some(now + self.writeback_interval());
                    }
                    return None;
                }
            }
        }
    }

    /// `queue_io`: b_more_io, then the files dirtied at or before `before` (oldest last
    /// dequeued ... first), onto b_io.
    fn queue_io(&mut self, before: Option<Nanos>) {
        while let Some(f) = self.flusher.b_more_io.pop_back() {
            self.flusher.b_io.push_front(f);
            self.files[f as usize].list = WbList::Io;
        }
        let Some(before) = before else { return };
        while let Some(&f) = self.flusher.b_dirty.back() {
            if self.files[f as usize].dirtied_when > before {
                break;
            }
            self.flusher.b_dirty.pop_back();
            self.flusher.b_io.push_front(f);
            self.files[f as usize].list = WbList::Io;
        }
    }

    /// Starts writing `file` for `work` (`writeback_chunk_size`, `ext4_writepages`'
    /// range_cyclic start).
    fn start_file(&mut self, file: FileId, work: &Work, now: Nanos) {
        let pages = (self.wb.avg_write_bandwidth / 2).min(self.wb.dom_dirty_limit / DIRTY_SCOPE) as i64;
        let pages = pages.min(work.nr_pages);
        let chunk = (pages.saturating_add(MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES) * MIN_WRITEBACK_PAGES;
        self.writepages_begin(now);
        let start = self.files[file as usize].writeback_index;
        self.flusher.cur = Some(Cur {
            file,
            chunk,
            nr_to_write: chunk,
            index: start,
            last: MAX_FILE_PAGES - 1,
            start_index: start,
            cycled: start == 0 || !self.p.writepages_wrap,
        });
    }

    /// The next request of the file being written (WB_SYNC_NONE: pages under writeback
    /// are skipped), or `None` when its chunk or its dirty pages are done.
    fn flusher_write(&mut self, cur: &mut Cur) -> Option<DevIo> {
        loop {
            if cur.nr_to_write <= 0 {
                return None;
            }
            if let Some(i) = self.next_writable(cur.file, cur.index, cur.last) {
                let io = self.start_writeback_run(cur.file, i, cur.nr_to_write as u64);
                let n = u64::from(io.bytes) / PAGE_SIZE;
                cur.index = i + n;
                cur.nr_to_write -= n as i64;
                return Some(io);
            }
            if cur.cycled {
                return None;
            }
            // ext4: once more from the file's start up to where this call began.
            cur.cycled = true;
            cur.last = cur.start_index - 1;
            cur.index = 0;
        }
    }

    /// The end of one file's chunk: `writeback_index`, I_DIRTY_PAGES, `requeue_inode`.
    fn finish_file(&mut self, cur: Cur, now: Nanos) {
        let written = cur.chunk - cur.nr_to_write;
        let exhausted = cur.nr_to_write <= 0;
        let f = &mut self.files[cur.file as usize];
        f.writeback_index = if exhausted { cur.index } else { 0 };
        f.i_dirty_pages = f.nr_dirty > 0;
        let cleaned = f.nr_dirty == 0;
        if !cleaned {
            if exhausted {
                // Slice used up: next turn.
                f.list = WbList::MoreIo;
                self.flusher.b_more_io.push_front(cur.file);
            } else {
                self.redirty_tail(cur.file, now);
            }
        } else {
            f.list = WbList::None;
        }
        if let Some(w) = self.flusher.work.as_mut() {
            w.nr_pages -= written;
            if written > 0 || cleaned {
                w.progress = true;
            }
        }
    }

    /// `redirty_tail_locked`: back to the head of b_dirty, its dirtied_when renewed if
    /// older than the newest there.
    fn redirty_tail(&mut self, file: FileId, now: Nanos) {
        if let Some(&head) = self.flusher.b_dirty.front() {
            if self.files[file as usize].dirtied_when < self.files[head as usize].dirtied_when {
                self.files[file as usize].dirtied_when = now;
            }
        }
        self.files[file as usize].list = WbList::Dirty;
        self.flusher.b_dirty.push_front(file);
    }
}
