//! Running the phases of a variant: workload windows, `cat` warm-ups, restarts, and the
//! L2ARC feed thread between events.

use super::build::new_arc;
use super::step::schedule_wakeups;
use super::*;
use crate::cache::l2arc::{L2Feed, LOG_BLK_SIZE};

/// Device bytes a feed pass writes per CPU burst of its scan (see `Sim::l2arc_feed`).
const FEED_BURST: u64 = 1 << 20;

/// A pass of a feed thread between its CPU bursts and its writes (see `Sim::l2arc_feed`).
#[derive(Debug, Clone, Copy)]
pub(super) struct FeedPass {
    /// The cache device it writes to (an index of the run's devices).
    dev: usize,
    /// Device bytes not yet submitted.
    left: u64,
    /// Where its next write goes on the device (bytes).
    offset: u64,
    /// Bytes of a write: the device's vdev queue aggregation limit.
    chunk: u64,
    /// CPU work before each further burst's writes.
    cpu_per_burst: Nanos,
    /// When the feed chose to run next (its interval from its start).
    next_at: Nanos,
}

/// The feed thread's CPU work for one pass (arc.c at zfs-0.8.6, zfs-2.1.16, zfs-2.2.11,
/// zfs-2.3.5, the same in each): every ARC header `l2arc_write_buffers()` passes and every
/// entry `l2arc_evict()` drops (`l2arc_hdr_ns`); per buffer written one zio
/// (`zio_write_phys()` with `ZIO_CHECKSUM_OFF`: no checksum is computed for an L2 data
/// write in any release; `zio_ns`), and when `l2arc_apply_transforms()` runs, its copy
/// into an asize buffer (memcpy rate) and, compressed ARC off, the block's compression
/// again (`zio_compress_data()`, lz4 rate); per log block (2.0+,
/// `l2arc_log_blk_commit()`) the lz4 compression of its 64 KiB, fletcher4 over its asize
/// and its zio; per aggregated device write its issue and interrupt (`device_io_ns`).
pub(super) fn feed_cpu(f: &L2Feed, c: &ZfsCosts, chunks: u64) -> Nanos {
    let per_byte = |bytes: u64, ns: f64| (bytes as f64 * ns) as Nanos;
    let hdrs = (f.headers_scanned.saturating_add(f.headers_evicted)).saturating_mul(c.l2arc_hdr);
    let bufs = u64::from(f.buffers).saturating_mul(c.zio);
    let transforms = per_byte(f.copy_bytes, c.memcpy_ns_per_byte)
        .saturating_add(per_byte(f.compress_bytes, c.compress_ns_per_byte));
    let logs = u64::from(f.log_blocks)
        .saturating_mul(c.zio.saturating_add(per_byte(LOG_BLK_SIZE, c.compress_ns_per_byte)))
        .saturating_add(per_byte(f.log_bytes, c.checksum_ns_per_byte));
    let ios = chunks.saturating_mul(c.device_io);
    hdrs.saturating_add(bufs).saturating_add(transforms).saturating_add(logs).saturating_add(ios)
}

/// An L2ARC feed thread: when it next runs (None: it does not), its pass in progress if
/// it is between its CPU bursts and its writes, and the writes of its pass: how many its
/// vdev queue still holds, when those issued complete, and, once every write is
/// submitted while some are held, when it would run next (`zio_wait(pio)` returns when
/// the last completes).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FeedThread {
    pub(super) next: Option<Nanos>,
    pub(super) pass: Option<FeedPass>,
    pub(super) held: u32,
    pub(super) written: Nanos,
    pub(super) awaiting: Option<Nanos>,
}

impl FeedThread {
    /// A write of the pass, held by the vdev queue, was issued and completes at `done`:
    /// when it was the last one the thread waited for, its next run (to put on the queue).
    pub(super) fn write_issued(&mut self, done: Nanos) -> Option<Nanos> {
        // A write left from before a restart (fresh threads) finds nothing held.
        self.held = self.held.checked_sub(1)?;
        self.written = self.written.max(done);
        if self.held > 0 {
            return None;
        }
        let at = self.awaiting.take()?.max(self.written);
        self.next = Some(at);
        Some(at)
    }
}

/// The feed threads of a pool of `ndev` attached cache devices: the releases' one
/// (`l2arc_feed_thread()`, started with the module, feeding the devices in turn), or with
/// master's per-device threads (b525525b44) one per device, each created by
/// `l2arc_add_vdev()`.
pub(super) fn feed_threads(ndev: usize, per_device: bool) -> usize {
    match (ndev, per_device) {
        (0, _) => 0,
        (n, true) => n,
        (_, false) => 1,
    }
}

impl<'a> Sim<'a> {
    /// The next read of a `cat` phase: table, offset, length; None when every pass is done.
    pub(super) fn cat_next(&mut self) -> Option<(u32, u64, u32)> {
        let nfiles = self.files.len() as u32;
        let Mode::Cat { read_size, passes, pass, table, offset } = &mut self.mode else { return None };
        loop {
            if *table < nfiles && *offset >= self.files[*table as usize] {
                *offset = 0;
                *table += 1;
            }
            if *table >= nfiles {
                *table = 0;
                *pass += 1;
            }
            if *pass >= *passes {
                return None;
            }
            if *offset < self.files[*table as usize] {
                break;
            }
        }
        let file_size = self.files[*table as usize];
        let len = (*read_size as u64).min(file_size - *offset) as u32;
        let at = (*table, *offset, len);
        *offset += len as u64;
        Some(at)
    }

    /// The machine restarts: the ARC, the dbufs and the buffer pool start empty. The
    /// L2ARC device keeps its content unless it is ephemeral and the VM moved; a release
    /// with persistent L2ARC (2.0+, l2arc_rebuild_enabled) then rebuilds its headers from
    /// the log blocks, reading them from the device (l2arc_rebuild). bcache keeps its
    /// cache set unless its cache device is ephemeral and the VM moved (then it is a new,
    /// empty one); registering a kept one walks its btree (`bch_btree_check()`). An
    /// ephemeral ZFS cache device that came back blank is UNAVAIL after the import (no
    /// label) and the pool runs without L2ARC, unless `recreate_cache` (the boot script's
    /// `zpool remove` and `zpool add`) makes it a new, empty one. Returns when the machine
    /// is ready again, and what happened to bcache or to the L2ARC's device. Devices: see
    /// `Device::restart` (burst credits, the host cache).
    pub(super) fn restart(&mut self, vm_moved: bool, recreate_cache: bool) -> Result<(Nanos, Option<Value>)> {
        if let (Some(d), Some(DatabaseConfig::Innodb(db))) = (&mut self.db, &self.cfg.database) {
            d.restart(db);
            // The server's own threads start again with the next workload.
            for k in self.nusers..self.nclients {
                self.clients[k].state = State::Idle;
                self.waits[k] = Wait::None;
            }
            (self.cleaner_due, self.master_due, self.lru_due, self.purge_due) = (None, None, None, None);
            self.purge_pending = 0;
        }
        let mut ready = self.clock;
        if let Fs::Extent(x) = &mut self.fs {
            // A clean reboot syncs the page cache's dirty pages; it comes back empty.
            ready = x.restart_page_cache(self.clock, &mut self.devices)?;
            (self.flusher_wake, self.writeback_wake) = (None, None);
            let Some((b, d)) = &mut x.bcache else { return Ok((ready, None)) };
            let r = b.restart(vm_moved && self.cfg.devices[*d].ephemeral);
            let reads = r.btree_read_bytes.div_ceil(u64::from(r.node_bytes));
            // Registered after the sync (the clock without a page cache).
            let start = ready;
            for _ in 0..reads {
                ready = ready.max(self.devices[*d].submit(start, Op::Read, r.node_bytes));
            }
            b.resume_writeback(ready);
            let doc = json!({
                "cache_set_lost": r.lost,
                "dirty_data_lost": r.dirty_lost,
                "btree_check_read_bytes": reads * u64::from(r.node_bytes),
                "size": b.stats().size,
            });
            return Ok((ready, Some(doc)));
        }
        let mut cache_doc = None;
        if let (Fs::Zfs(zfs), FsConfig::Zfs(z)) = (&mut self.fs, &self.cfg.filesystem) {
            let Zfs { arc, dbufs, cache_devices, zfetch, layout, .. } = &mut **zfs;
            // The attached devices' contents, in the ARC's order (that of `cache_devices`).
            let mut old: Vec<Option<Box<crate::cache::l2arc::L2arcDeviceState>>> =
                arc.l2arc_detach().into_iter().map(Some).collect();
            let was = std::mem::take(cache_devices);
            // Each of the pool's cache devices as configured (UNAVAIL since an earlier
            // restart, it is still the pool's: `zpool remove` and `zpool add` bring it back).
            let mut rebuild = Vec::new();
            let mut docs = Vec::new();
            for n in &z.cache {
                let Some(d) = self.cfg.devices.iter().position(|x| &x.name == n) else { continue };
                let blank = vm_moved && self.cfg.devices[d].ephemeral;
                let attached = was.iter().position(|&x| x == d);
                let state = match (attached.filter(|_| !blank), recreate_cache) {
                    (Some(slot), _) => {
                        rebuild.push((cache_devices.len(), old[slot].take()));
                        "kept"
                    }
                    (None, true) => "recreated",
                    // UNAVAIL: no L2ARC on it from now on (no label, no one feeds it).
                    (None, false) => "unavail",
                };
                if state != "unavail" {
                    cache_devices.push(d);
                }
                docs.push(json!({"device": self.cfg.devices[d].name, "state": state}));
            }
            cache_doc = match docs.len() {
                0 => None,
                1 => docs.pop(),
                _ => Some(Value::Array(docs)),
            };
            **arc = new_arc(self.cfg, z, cache_devices, layout)?;
            arc.l2arc_attached_at(self.clock);
            **dbufs = dbufs.emptied();
            // New dnodes: no streams. zfetchstats are kept: arcstats restart, but the
            // summary differences them per phase and a restart phase reports none.
            zfetch.reset();
            // Each kept device's rebuild reads its own device.
            for (slot, old) in rebuild {
                let Some(old) = old else { continue };
                let r = arc.l2arc_rebuild(slot, old);
                let per_read = r.read_bytes.checked_div(r.reads).unwrap_or(0).max(1);
                let d = cache_devices[slot];
                for _ in 0..r.reads {
                    let done =
                        self.devices[d].submit(self.clock, Op::Read, per_read.min(u32::MAX as u64) as u32);
                    ready = ready.max(done);
                }
            }
            // The feed threads start again with the pool (their writes in flight are
            // done): the releases' one wakes l2arc_feed_secs after the import, master's
            // per-device threads as their devices are added (the import).
            let per_device = arc.l2arc_per_device_feed();
            let n = feed_threads(cache_devices.len(), per_device);
            self.feeds = vec![FeedThread::default(); n];
            let first = if per_device { self.clock } else { ready + SEC };
            for k in 0..n {
                self.set_next_feed(k, first);
            }
        }
        Ok((ready, cache_doc))
    }

    /// Processes events until none is left (clients stop issuing at the phase's end and
    /// finish what they started), emitting series rows on the way. Returns the snapshots
    /// taken at `window` (start, end) if given; [`Error::Stopped`] if the observer stopped
    /// the run.
    pub(super) fn drain(
        &mut self,
        rec: &mut Recorder,
        window: Option<(Nanos, Nanos)>,
    ) -> Result<Option<(Snapshot, Snapshot)>> {
        let mut start_snap = None;
        let mut end_snap = None;
        // A workload phase reports up to its window's end; the drain after it is not an interval.
        let report_limit = window.map_or(Nanos::MAX, |w| w.1);
        // The sync may have run outside the loop (a flush before a restart).
        self.schedule_sync();
        self.schedule_zil();
        // Requests that can never complete end the run with an error (see `stall`).
        let mut stall = super::stall::Stall::new(self.clock, self.nclients, self.progress_mark());
        // Background events dispatched (for the observer, see below).
        let mut background = 0u64;
        loop {
            if self.queue.requests() == 0 {
                // Writers waiting for dirty data to drop wait on the sync's writes, and
                // committers on the intent log's (XFS/ext4: the journal's).
                if let Some(t) = self.journal_wake.filter(|_| self.journal_waiting()) {
                    let t = t.max(self.clock);
                    self.stall_check(&mut stall, t)?;
                    self.background_bounds(rec, t, window, report_limit, &mut start_snap, &mut end_snap)?;
                    self.journal_event(t);
                    continue;
                }
                let (throttled, committing) = match &self.fs {
                    Fs::Zfs(z) => (z.writers_throttled(), z.zil_waiting()),
                    Fs::Extent(_) => (false, false),
                };
                let sync = self.write_next_at().filter(|_| throttled || committing);
                let zil = self.zil_next_at().filter(|_| committing);
                let (t, is_sync) = match (sync, zil) {
                    (Some(w), Some(z)) if z < w => (z, false),
                    (Some(w), _) => (w, true),
                    (None, Some(z)) => (z, false),
                    (None, None) => break,
                };
                self.stall_check(&mut stall, t)?;
                self.background_bounds(rec, t, window, report_limit, &mut start_snap, &mut end_snap)?;
                if is_sync {
                    self.write_event(t);
                } else {
                    self.zil_event(t);
                }
                self.schedule_sync();
                self.schedule_zil();
                continue;
            }
            // Invariant: the loop broke out above unless requests() > 0 (or a write event was queued).
            let (t, event) = self.queue.pop().expect("a request is pending");
            if t > crate::config::MAX_SIMULATED_NS {
                // Only a device that never answers gets here (saturated clocks): what is
                // still in progress is abandoned rather than simulated to the end of time
                // (the background threads, an L2ARC feed waking every second, would
                // otherwise run on toward it: centuries of wake-ups).
                self.abandon_in_progress();
                break;
            }
            if let Event::L2arcFeed(_)
            | Event::TxgSync
            | Event::Zil
            | Event::Journal
            | Event::Flusher
            | Event::Writeback = event
            {
                self.background_bounds(rec, t, window, report_limit, &mut start_snap, &mut end_snap)?;
                background += 1;
                if t > report_limit && background & 0xFFFF == 0 {
                    // Past the window, a drain of background events alone (requests waiting
                    // on a slow device) still lets the observer stop it.
                    self.observe_drain(rec, t)?;
                }
                self.dispatch(event, t);
                continue;
            }
            // A database thread's timer left from before a restart fires when the clock is there.
            let t = if let Event::Timer(_) = event { t.max(self.clock) } else { t };
            self.stall_check(&mut stall, t)?;
            self.report_until(rec, t.min(report_limit))?;
            if t > report_limit && self.events & 0xFFFF == 0 {
                // Past the window no row is due: the observer is told every 65,536 events
                // (a long drain can still be stopped).
                self.observe_drain(rec, t)?;
            }
            self.window_bounds(rec, t, window, &mut start_snap, &mut end_snap);
            self.events += 1;
            self.clock = t;
            self.dispatch(event, t);
        }
        let Some((ws, we)) = window else { return Ok(None) };
        let start = start_snap.unwrap_or_else(|| self.snapshot(ws));
        // Nanos::MAX: no end (a fio phase ends when its jobs do).
        let end =
            end_snap.unwrap_or_else(|| self.snapshot(if we == Nanos::MAX { self.clock.max(ws) } else { we }));
        self.measuring = false;
        Ok(Some((start, end)))
    }

    /// Tells the observer where a drain past its window is (at `t`); its answer may stop
    /// the run.
    fn observe_drain(&self, rec: &mut Recorder, t: Nanos) -> Result<()> {
        if let Some(o) = &mut rec.observer {
            o.observe(t, self.phase_index);
            o.check()?;
        }
        Ok(())
    }

    /// Before a background thread runs at `t` (it has no clock of its own): the report
    /// rows and the window's bounds before `t` close first, so its work counts after them
    /// (the feed and the txg sync run on while the last clients finish after the window).
    fn background_bounds(
        &mut self,
        rec: &mut Recorder,
        t: Nanos,
        window: Option<(Nanos, Nanos)>,
        report_limit: Nanos,
        start_snap: &mut Option<Snapshot>,
        end_snap: &mut Option<Snapshot>,
    ) -> Result<()> {
        if t <= crate::config::MAX_SIMULATED_NS {
            self.report_until(rec, t.min(report_limit))?;
            self.window_bounds(rec, t, window, start_snap, end_snap);
        }
        Ok(())
    }

    /// The window's bounds as the drain reaches time `t`: its start snapshot once `t` is
    /// past its start, its end snapshot once past its end (kept for the series' last row,
    /// which ends there: what runs after the window is not in it).
    fn window_bounds(
        &mut self,
        rec: &mut Recorder,
        t: Nanos,
        window: Option<(Nanos, Nanos)>,
        start_snap: &mut Option<Snapshot>,
        end_snap: &mut Option<Snapshot>,
    ) {
        let Some((ws, we)) = window else { return };
        if start_snap.is_none() && t >= ws {
            self.window_hist.reset();
            self.wait_times.reset();
            self.measuring = true;
            *start_snap = Some(self.snapshot(ws));
        }
        if end_snap.is_none() && t >= we {
            self.measuring = false;
            let s = self.snapshot(we);
            rec.window_end = Some(s.clone());
            *end_snap = Some(s);
        }
    }

    /// One pass of the l2arc_feed_thread: the ARC picks what to write, the thread does
    /// its CPU work ([`feed_cpu`]), the cache device writes it (aggregated by the vdev
    /// queue into writes of up to 1 MiB, zfs_vdev_aggregation_limit), the thread waits
    /// for the writes (`l2arc_write_buffers` ends in `zio_wait(pio)`, every release from
    /// 0.8 to 2.3), and sleeps until the time the feed chose from its start
    /// (`l2arc_write_interval(begin, ...)`): a feed whose CPU work and writes outlast that
    /// interval is followed at once by the next, so a cache device slower to write than
    /// the feed asks, or CPUs too busy to give the feed its time, hold the feed back.
    ///
    /// The CPU work runs on the machine's vCPUs in turn with the database's (the thread
    /// runs at `defclsyspri`, the default priority, `thread_create` in `l2arc_init`), in
    /// one burst per MiB the pass writes: the scan issues each buffer's zio as it reaches
    /// it (`zio_nowait`), so the writes overlap the rest of the scan; the model issues a
    /// MiB's writes once the CPU share of that MiB is done (the work spread evenly), to
    /// the device's vdev queue as the aggregates it forms of consecutive buffers (its
    /// aggregation limit each; the first writes of a pass, which the queue may issue
    /// alone before it holds the rest, are aggregates too: a simplification).
    ///
    /// With several cache devices the releases' one thread writes each pass to the next
    /// device in turn (`l2arc_dev_get_next()`); with master's per-device threads
    /// (b525525b44) thread `k` feeds device `k` on its own schedule, each with its own
    /// CPU bursts, so the devices are fed in parallel. (Master creates them at
    /// `minclsyspri`, the lowest priority; the model's vCPUs have no priorities.)
    pub(super) fn l2arc_feed(&mut self, k: usize, now: Nanos) {
        let Some(thread) = self.feeds.get_mut(k) else { return };
        if let Some(pass) = thread.pass.take() {
            // A CPU burst of the pass in progress is done: its chunk is written.
            self.feed_run(k, now, pass, now);
            return;
        }
        let Fs::Zfs(z) = &mut self.fs else {
            self.feeds[k].next = None;
            return;
        };
        let Zfs { arc, cache_devices, costs, pool, .. } = &mut **z;
        if cache_devices.is_empty() {
            self.feeds[k].next = None;
            return;
        }
        let feed = if arc.l2arc_per_device_feed() { arc.l2arc_feed_dev(k, now) } else { arc.l2arc_feed(now) };
        let dev = cache_devices[feed.dev];
        // The pass's writes, one zio per buffer, are contiguous on the device: its vdev
        // queue issues them as aggregates of its limit.
        let chunk = u64::from(pool.vq.aggregation_limit(dev)).max(1 << 12);
        let ios = feed.asize_written.div_ceil(chunk);
        let work = feed_cpu(&feed, costs, ios);
        self.l2_feed_cpu = self.l2_feed_cpu.saturating_add(work);
        let bursts = feed.asize_written.div_ceil(FEED_BURST);
        let per = work / bursts.max(1);
        let pass = FeedPass {
            dev,
            left: feed.asize_written,
            offset: feed.start,
            chunk,
            cpu_per_burst: per,
            next_at: feed.next_feed_at,
        };
        self.feeds[k].written = now;
        debug_assert_eq!(self.feeds[k].held, 0, "a pass starts when its predecessor's writes are done");
        let first = work - per * bursts.saturating_sub(1);
        let done = self.cpus.run(now, first);
        self.feed_run(k, now, pass, done);
    }

    /// Thread `k`'s pass at `now`, its current CPU burst done at `cpu_done`: writes the
    /// next chunk (to the device's vdev queue) once the burst is done, runs the next
    /// burst, and when every chunk is submitted, sleeps until the writes are done and the
    /// feed's interval is over.
    fn feed_run(&mut self, k: usize, now: Nanos, mut pass: FeedPass, mut cpu_done: Nanos) {
        loop {
            if pass.left == 0 {
                let at = pass.next_at.max(cpu_done).max(now.saturating_add(1));
                let f = &mut self.feeds[k];
                if f.held > 0 {
                    // zio_wait(pio): woken when the queue issues the last one.
                    f.awaiting = Some(at);
                    f.next = None;
                } else {
                    let at = at.max(f.written);
                    self.set_next_feed(k, at);
                }
                return;
            }
            if cpu_done > now {
                self.feeds[k].pass = Some(pass);
                self.set_next_feed(k, cpu_done);
                return;
            }
            let Sim { fs: Fs::Zfs(z), devices, queue, feeds, .. } = self else { return };
            let mut burst = pass.left.min(FEED_BURST);
            pass.left -= burst;
            while burst > 0 {
                let chunk = burst.min(pass.chunk);
                // Invariant: at most MAX_CACHE_DEVICES threads (attach_l2arc refuses more devices).
                match z.l2_feed_write(k as u8, pass.dev, pass.offset, chunk as u32, now, devices) {
                    Some(done) => feeds[k].written = feeds[k].written.max(done),
                    None => feeds[k].held += 1,
                }
                pass.offset += chunk;
                burst -= chunk;
            }
            schedule_wakeups(queue, z, feeds);
            if pass.left > 0 {
                cpu_done = self.cpus.run(now, pass.cpu_per_burst);
            }
        }
    }

    /// Runs one event: a request steps, a background thread runs if it is due (see
    /// `events`); the txg sync's next wake-up follows.
    pub(super) fn dispatch(&mut self, event: Event, t: Nanos) {
        match event {
            Event::Client(i) => self.step(i, t),
            Event::Prefetch(k) => self.prefetch_event(k, t),
            Event::L2arcFeed(k) => {
                let k = usize::from(k);
                if self.feeds.get(k).is_some_and(|f| f.next == Some(t)) {
                    self.l2arc_feed(k, t);
                }
            }
            Event::TxgSync => {
                if self.sync_wake == Some(t) {
                    self.sync_wake = None;
                }
                if self.write_next_at() == Some(t) {
                    self.write_event(t);
                }
            }
            Event::Zil => {
                if self.zil_wake == Some(t) {
                    self.zil_wake = None;
                }
                if self.zil_next_at().is_some_and(|n| n <= t) {
                    self.zil_event(t);
                }
            }
            Event::Timer(k) => self.timer_event(k, t),
            Event::Journal => self.journal_event(t),
            Event::Flusher => self.flusher_event(t),
            Event::Writeback => self.writeback_event(t),
        }
        self.schedule_sync();
        self.schedule_zil();
        self.schedule_writeback();
    }

    /// The database's own threads (page cleaner, master thread, Percona Server's LRU
    /// manager), when it writes, start their timed loops at `now` unless they run already.
    fn start_db_threads(&mut self, now: Nanos) {
        if self.nclients == self.nusers {
            return;
        }
        let cleaner = crate::db::innodb::writes::cleaner_actor(self.nusers);
        let master = crate::db::innodb::writes::master_actor(self.nusers);
        let lru = crate::db::innodb::writes::lru_manager_actor(self.nusers);
        let purge = self.db.as_ref().and_then(|d| d.purge_actor());
        if let Some(k) = purge {
            // The purge coordinator sleeps until a commit wakes it (MySQL 5.7) or the
            // master thread's next second (MariaDB 10.11).
            if let Some(c) = self.clients.get_mut(k) {
                if matches!(c.state, State::Start | State::Idle) {
                    c.state = State::PurgeSleep;
                    c.started = now;
                    let due = self.db.as_ref().and_then(|d| d.purge_next(now)).unwrap_or(Nanos::MAX);
                    self.purge_due = Some(due);
                    if due != Nanos::MAX {
                        self.queue.at(due, Event::Timer(k));
                    }
                }
            }
            // Its workers wait for their shares of a batch.
            for w in k + 1..k + self.purge_n {
                if let Some(c) = self.clients.get_mut(w) {
                    if matches!(c.state, State::Start | State::Idle) {
                        c.state = State::PurgeIdle;
                    }
                }
            }
        }
        // Percona Server's LRU manager has its slot before the purge coordinator's.
        let lru = if purge == Some(lru) { usize::MAX } else { lru };
        let threads = [(cleaner, State::CleanerSleep), (master, State::MasterSleep), (lru, State::LruSleep)];
        // Percona Server's LRU manager (after the clients, the page cleaner and the master
        // thread) first wakes after its 1000 ms sleep.
        for (k, sleep) in threads {
            let Some(c) = self.clients.get_mut(k) else { continue };
            if matches!(c.state, State::Start | State::Idle) {
                c.state = sleep;
                c.started = now;
                let due = now + SEC;
                if k == cleaner {
                    self.cleaner_due = Some(due);
                } else if k == master {
                    self.master_due = Some(due);
                } else {
                    self.lru_due = Some(due);
                }
                self.queue.at(due, Event::Timer(k));
            }
        }
    }

    /// Txgs the ZFS write path has synced so far (None on XFS/ext4).
    fn txgs_synced(&self) -> Option<usize> {
        match &self.fs {
            Fs::Zfs(z) => Some(z.txgs_synced()),
            Fs::Extent(_) => None,
        }
    }

    /// The ARC, if the pool has a cache device.
    pub(super) fn arc_with_cache_device(&self) -> Option<&Arc> {
        match &self.fs {
            Fs::Zfs(z) if !z.cache_devices.is_empty() => Some(&z.arc),
            Fs::Zfs(_) | Fs::Extent(_) => None,
        }
    }

    /// Feed thread `k` sleeps until `at`.
    pub(super) fn set_next_feed(&mut self, k: usize, at: Nanos) {
        self.feeds[k].next = Some(at);
        // Invariant: at most MAX_CACHE_DEVICES threads (attach_l2arc refuses more devices).
        self.queue.at(at, Event::L2arcFeed(k as u8));
    }

    /// Puts the txg sync's next due time on the queue, unless an earlier wake-up is there.
    pub(super) fn schedule_sync(&mut self) {
        if let Some(w) = self.write_next_at() {
            if self.sync_wake.is_none_or(|s| w < s) {
                self.sync_wake = Some(w);
                self.queue.at(w, Event::TxgSync);
            }
        }
    }

    /// Puts the intent log's next due time on the queue, unless an earlier wake-up is there.
    pub(super) fn schedule_zil(&mut self) {
        if let Some(w) = self.zil_next_at() {
            if self.zil_wake.is_none_or(|s| w < s) {
                self.zil_wake = Some(w);
                self.queue.at(w, Event::Zil);
            }
        }
    }

    /// A data file's name for messages and reports: as fio's job names it, or as the
    /// database names a table's file.
    pub(super) fn file_name(&self, k: usize) -> String {
        match (&self.cfg.dataset, &self.db) {
            (DatasetConfig::Files(f), _) => {
                f.files.get(k).map_or_else(|| format!("file {k}"), |f| f.name.clone())
            }
            (DatasetConfig::Sysbench(_), Some(db)) => {
                db.file_name(&crate::config::SysbenchDataset::table_name(k))
            }
            (DatasetConfig::Sysbench(_), None) => crate::config::SysbenchDataset::table_name(k),
            (DatasetConfig::Tpcc(_), db) => {
                let (set, t) = crate::db::innodb::tpcc_schema::TpccTable::of(k as u32);
                match db {
                    Some(db) => db.file_name(&t.file_name(set)),
                    None => t.file_name(set),
                }
            }
        }
    }

    /// Drops every pending event and in-flight read (see `drain`).
    pub(super) fn abandon_in_progress(&mut self) {
        self.queue.clear();
        // The background threads sleep on.
        for k in 0..self.feeds.len() {
            let f = &mut self.feeds[k];
            if let Some(at) = f.awaiting.take() {
                // Its writes the vdev queue held are forgotten with the queue's I/O.
                f.held = 0;
                f.next = Some(at.max(f.written));
            }
            if let Some(t) = self.feeds[k].next {
                self.queue.at(t, Event::L2arcFeed(k as u8));
            }
        }
        self.sync_wake = None;
        self.schedule_sync();
        self.zil_wake = None;
        self.flusher_wake = None;
        self.writeback_wake = None;
        self.schedule_writeback();
        self.bp_inflight.clear();
        if let Fs::Zfs(z) = &mut self.fs {
            z.abandon_reads();
            z.zil_abandon();
        }
        if let Fs::Extent(x) = &mut self.fs {
            if let Some(b) = x.page_cache.as_deref_mut() {
                b.abandon();
            }
        }
        self.schedule_zil();
        for c in &mut self.clients {
            c.state = State::Idle;
            c.async_until = 0;
        }
        self.waits.fill(Wait::None);
        (self.cleaner_due, self.master_due, self.journal_wake, self.lru_due) = (None, None, None, None);
        (self.purge_due, self.purge_pending) = (None, 0);
        if let Some(db) = &mut self.db {
            db.abandon();
        }
    }

    /// Runs every phase, telling `observer` (if any) how far the clock has come.
    pub(super) fn run(self, observer: Option<progress::Observer<'_>>) -> Result<VariantResult> {
        self.run_sharing(observer, &mut super::share::Forks::none())
    }

    /// [`Sim::run`], forking `forks`' followers as their shared phases end (see
    /// `share`); in a forked follower it goes on with the follower's config.
    pub(super) fn run_sharing(
        mut self,
        observer: Option<progress::Observer<'_>>,
        forks: &mut super::share::Forks<'a>,
    ) -> Result<VariantResult> {
        let mut rec = Recorder {
            series: Series::default(),
            prev: self.snapshot(0),
            next_report: self.cfg.run.report_interval_ns,
            observer,
            window_end: None,
        };
        let mut phases = Vec::new();
        let mut main = Value::Null;
        // Where the series ends: a run that ends with a workload phase ends at its window's
        // end (the statements that finish after it are not part of any interval).
        let mut series_end = 0;
        let mut plan = self.cfg.effective_phases();
        let mut index = 0;
        while index < plan.len() {
            let phase = &plan[index].clone();
            self.phase_index = index;
            let start = self.clock;
            match phase {
                PhaseConfig::Restart(r) => {
                    // A clean reboot exports the pool first: every txg is synced.
                    let w0 = self.txgs_synced();
                    let before = self.snapshot(start);
                    // Bounded as the drain is (`stall`): a sync that never ends is an error.
                    let mut stall = super::stall::Stall::new(self.clock, self.nclients, self.progress_mark());
                    while let Some(t) = self.write_next_at() {
                        let t = t.max(self.clock);
                        if t > crate::config::MAX_SIMULATED_NS {
                            // Only a device that never answers gets here (as in the drain).
                            return Err(Error::Simulation {
                                component: "zfs.txg".into(),
                                time_ns: self.clock,
                                message: "the pool's sync before the restart did not end within the run's time bound (a device that never answers)".into(),
                            });
                        }
                        self.stall_check(&mut stall, t)?;
                        self.report_until(&mut rec, t)?;
                        self.clock = t;
                        self.write_event(t);
                    }
                    if let Fs::Zfs(z) = &mut self.fs {
                        // The log's blocks in flight complete; its itxs go with the export.
                        self.clock = z.zil_restart(self.clock, &mut self.devices);
                        self.zil_wake = None;
                    }
                    let flushed = self.snapshot(self.clock);
                    let phase_start = start;
                    let start = self.clock;
                    // arcstats start again from zero after a reboot: close the interval
                    // before it, and start the next one from the fresh counters.
                    if rec.prev.time < start {
                        let now = self.snapshot(start);
                        self.emit_row(&mut rec.series, &rec.prev, &now);
                    }
                    let (ready, device) = self.restart(r.vm_moved, r.recreate_cache)?;
                    // After the shutdown's writes: a disk re-attached to a moved VM has a full
                    // Azure burst bucket; the host cache is empty after any restart.
                    for d in &mut self.devices {
                        d.restart(r.vm_moved);
                    }
                    rec.prev = self.snapshot(start);
                    self.clock = ready;
                    let mut doc = json!({"name": r.name, "type": "restart", "start_s": secs(phase_start), "end_s": secs(ready)});
                    if let Some(arc) = self.arc_with_cache_device() {
                        let st = arc.stats();
                        doc["l2arc_rebuild"] = json!({
                            "l2_rebuild_bufs": st.l2_rebuild_bufs,
                            "l2_rebuild_size": st.l2_rebuild_size,
                            "l2_rebuild_asize": st.l2_rebuild_asize,
                            "l2_rebuild_log_blks": st.l2_rebuild_log_blks,
                        });
                    }
                    match (device, &self.fs) {
                        (Some(x), Fs::Extent(_)) => doc["bcache"] = x,
                        (Some(x), Fs::Zfs(_)) if x.is_array() => doc["cache_devices"] = x,
                        (Some(x), Fs::Zfs(_)) => doc["cache_device"] = x,
                        (None, _) => {}
                    }
                    if let (Fs::Zfs(z), Some(w0)) = (&self.fs, w0) {
                        if z.txgs_synced() > w0 {
                            // The txgs synced before the reboot (the export).
                            doc["zfs_write"] = z.write_report(w0);
                            doc["devices"] = self.devices_window(&before, &flushed);
                        }
                    }
                    phases.push(doc);
                }
                PhaseConfig::Tune(t) => {
                    if let Fs::Zfs(z) = &mut self.fs {
                        let arc = &mut z.arc;
                        arc.retune_l2arc(&t.l2arc).map_err(|e| match e {
                            Error::Config { field, message } => Error::config(
                                format!("phases[{index}].{}", field.trim_start_matches("filesystem.")),
                                message,
                            ),
                            other => other,
                        })?;
                    }
                    let set = serde_json::to_value(&t.l2arc).unwrap_or_default();
                    let set: serde_json::Map<String, Value> = set
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .filter(|(_, v)| !v.is_null())
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect()
                        })
                        .unwrap_or_default();
                    phases.push(json!({"name": t.name, "type": "tune", "start_s": secs(start), "end_s": secs(start), "l2arc": set}));
                }
                PhaseConfig::Workload(w) => {
                    let window = (start + w.warmup_ns, start + w.warmup_ns + w.duration_ns);
                    self.mode = Mode::Workload { issue_until: window.1 };
                    if let WorkloadConfig::Sysbench(base) = &self.cfg.workload {
                        // The phase's own test, or the workload's.
                        self.source.set_test(w.test.unwrap_or(base.test));
                    }
                    for i in 0..self.nusers {
                        self.clients[i].state = State::Start;
                        // A statement drawn ahead belongs to the previous phase's test.
                        self.clients[i].next_ready = false;
                        self.queue.at(start, Event::Client(i));
                    }
                    self.start_db_threads(start);
                    // Infallible: `drain` answers Some when given a window.
                    let (a, b) = self.drain(&mut rec, Some(window))?.expect("a window was given");
                    let mut doc = self.window_summary(&a, &b, w.warmup_ns);
                    main = doc.clone();
                    doc["name"] = json!(w.name);
                    doc["type"] = json!("workload");
                    doc["start_s"] = json!(secs(start));
                    doc["end_s"] = json!(secs(self.clock.max(window.1)));
                    phases.push(doc);
                    self.clock = self.clock.max(window.1);
                    series_end = window.1;
                }
                PhaseConfig::Fio(ph) => {
                    // Its jobs were checked when the stack was built (`Sim::new`).
                    let w0 = self.txgs_synced();
                    // The page cache's counters before the jobs open their files (fio's
                    // invalidate drops pages then, before a ramp's window).
                    let pc0 = self.snapshot(start).page_cache;
                    let laid_out = self.fio_start(ph, index, start)?;
                    let from = self.fio.as_ref().map_or(start, |r| r.from);
                    // Infallible: `drain` answers Some when given a window.
                    let (a, _) = self.drain(&mut rec, Some((from, Nanos::MAX)))?.expect("a window was given");
                    self.measuring = false;
                    let b = self.snapshot(self.clock.max(from));
                    let (fio, _) = self.fio_results();
                    let mut doc = json!({
                        "name": ph.name,
                        "type": "fio",
                        "start_s": secs(start),
                        "end_s": secs(self.clock.max(start)),
                        "timing_modelled": true,
                        "fio": fio,
                        "cpu_utilization": (b.cpu_busy.saturating_sub(a.cpu_busy) as f64 / SEC as f64 / ((b.time - a.time).max(1) as f64 / SEC as f64) / self.cpus.vcpus() as f64).min(1.0),
                        "devices": self.devices_window(&a, &b),
                    });
                    if let Some(l) = laid_out {
                        doc["laid_out"] = l;
                    }
                    if let (Fs::Zfs(z), Some(w0)) = (&self.fs, w0) {
                        if doc["fio"].get("write").is_some() || z.txgs_synced() > w0 {
                            doc["zfs_write"] = z.write_report(w0);
                        }
                    }
                    if let Some(arc) = self.arc_window_of(&a, &b) {
                        doc["arc"] = arc;
                    }
                    if let Some(l2) = self.l2arc_window(&a, &b) {
                        doc["l2arc"] = l2;
                    }
                    if let Some(bc) = self.bcache_window(&a, &b) {
                        doc["bcache"] = bc;
                    }
                    if let Some(zil) = self.zil_window(&a, &b) {
                        doc["zil"] = zil;
                    }
                    if let Some(journal) = self.journal_window(&a, &b) {
                        doc["journal"] = journal;
                    }
                    if let Some(mut pc) = self.page_cache_window(&a, &b) {
                        if let (Some(x), Some(y)) = (&pc0, &b.page_cache) {
                            pc["invalidated_pages"] = json!(y.invalidated_pages - x.invalidated_pages);
                        }
                        doc["page_cache"] = pc;
                    }
                    self.mode = Mode::Workload { issue_until: 0 };
                    self.clock = self.clock.max(start);
                    main = doc.clone();
                    phases.push(doc);
                    series_end = self.clock;
                }
                PhaseConfig::Cat(c) => {
                    if let Some(k) = self.exists.iter().position(|&e| !e) {
                        return Err(Error::config(
                            format!("phases[{index}]"),
                            format!(
                                "cat reads file {k} ({}) before any fio phase has created it",
                                self.file_name(k)
                            ),
                        ));
                    }
                    self.mode =
                        Mode::Cat { read_size: c.read_size, passes: c.passes, pass: 0, table: 0, offset: 0 };
                    let (bytes0, reads0) = (self.cat_bytes, self.cat_reads);
                    let a = self.snapshot(start);
                    self.clients[0].state = State::Start;
                    self.queue.at(start, Event::Client(0));
                    self.drain(&mut rec, None)?;
                    let b = self.snapshot(self.clock);
                    let elapsed = (b.time - a.time).max(1) as f64 / SEC as f64;
                    let bytes = self.cat_bytes - bytes0;
                    let mut doc = json!({
                        "name": c.name,
                        "type": "cat",
                        "start_s": secs(start),
                        "end_s": secs(self.clock),
                        "bytes_read": bytes,
                        "reads": self.cat_reads - reads0,
                        "read_mbps": bytes as f64 / 1e6 / elapsed,
                        "devices": self.devices_window(&a, &b),
                    });
                    if let Some(arc) = self.arc_window_of(&a, &b) {
                        doc["arc"] = arc;
                    }
                    if let Some(bc) = self.bcache_window(&a, &b) {
                        doc["bcache"] = bc;
                    }
                    if let Some(zfetch) = self.zfetch_window(&a, &b) {
                        doc["zfetch"] = zfetch;
                    }
                    if let Some(pc) = self.page_cache_window(&a, &b) {
                        doc["page_cache"] = pc;
                    }
                    phases.push(doc);
                    series_end = self.clock;
                }
            }
            if let PhaseConfig::Restart(_) = phase {
                series_end = self.clock;
            }
            index += 1;
            if forks.waiting() {
                let sim = &self;
                if let Some((cfg, shared)) = forks.fork_due(index, |c, p| sim.share_refusal(c, p)) {
                    // A forked follower: its own phases and devices from here, no observer.
                    rec.observer = None;
                    self.retarget(cfg, &shared);
                    plan = cfg.effective_phases();
                }
            }
        }
        let end = self.clock;
        if rec.prev.time < series_end {
            self.report_until(&mut rec, series_end)?;
            if rec.prev.time < series_end && (rec.series.rows() as u64) < crate::config::MAX_SERIES_ROWS {
                // A workload phase's window ends the series at its end snapshot, taken
                // before the work that ran after it (the last clients finishing, the
                // background threads meanwhile).
                let now = match rec.window_end.take() {
                    Some(w) if w.time == series_end => w,
                    _ => self.snapshot(series_end),
                };
                self.emit_row(&mut rec.series, &rec.prev, &now);
            }
        }
        main["scenario"] = json!(self.cfg.scenario);
        main["variant"] = json!(self.cfg.variant);
        main["phases"] = Value::Array(phases);
        if let (DatasetConfig::Tpcc(ds), Some(crate::db::Database::Innodb(d))) = (&self.cfg.dataset, &self.db)
        {
            main["tpcc_dataset"] = tpcc_dataset_doc(&d.layouts, ds.tables, ds.scale);
        }
        // Work the simulator did over the whole run, for `ztwin bench`.
        main["engine"] = json!({
            "events": self.events,
            "page_lookups": self.bp_requests,
            "block_lookups": match &self.fs {
                Fs::Zfs(z) => z.counters().block_lookups,
                Fs::Extent(_) => 0,
            },
            "device_ios": self.devices.iter().map(|d| d.counters().reads + d.counters().writes).sum::<u64>(),
            "simulated_s": secs(end),
        });
        if let Some(arc) = self.arc_with_cache_device() {
            // The simulator's own memory for the cache device's blocks (ring and index).
            main["engine"]["l2arc_blocks"] = json!(arc.l2arc_blocks());
            main["engine"]["l2arc_heap_bytes"] = json!(arc.l2arc_heap_bytes());
        }
        if let Some(o) = &mut rec.observer {
            o.finish(end);
        }
        Ok(VariantResult { summary: main, series: rec.series })
    }
}

/// A TPC-C dataset's size as the load leaves it: each of a set's nine tables' rows (loaded,
/// and the positions laid out with the growth space, `tpcc_schema` simplification 2), file
/// bytes (growth space included), the bytes the load wrote (the growth leaves excluded) and
/// each index's; the totals over all sets.
fn tpcc_dataset_doc(layouts: &[crate::db::innodb::btree::TableLayout], sets: u32, scale: u32) -> Value {
    use crate::db::innodb::tpcc_schema::TpccTable;
    let mut tables = serde_json::Map::new();
    let (mut set_file, mut set_loaded) = (0u64, 0u64);
    for (t, l) in TpccTable::ALL.iter().zip(layouts.iter()) {
        let ps = u64::from(l.page_size);
        let rows = t.loaded_rows(u64::from(scale));
        let growth_leaves = l.clustered.leaf_pages().saturating_sub(rows.div_ceil(l.clustered.recs_per_leaf));
        let loaded = (l.data_pages() - growth_leaves) * ps;
        let indexes: Vec<u64> = l.secondaries.iter().map(|s| s.pages() * ps).collect();
        tables.insert(
            t.name().to_string(),
            json!({
                "rows": rows,
                "rows_laid_out": l.rows,
                "file_bytes": l.file_size(),
                "loaded_bytes": loaded,
                "clustered_bytes": (l.clustered.pages() - growth_leaves) * ps,
                "secondary_bytes": indexes,
            }),
        );
        set_file += l.file_size();
        set_loaded += loaded;
    }
    let sets = u64::from(sets);
    json!({ "tables": tables, "file_bytes": sets * set_file, "loaded_bytes": sets * set_loaded })
}
