//! Stepping a client through its statement: the states above the filesystem (the
//! statement, the buffer pool, the file read) and the hand-off to the ZFS path or a device.

use super::*;
use crate::fs::zfs::layer::Wake;

impl Sim<'_> {
    /// Sets the path of lookup `c.lookup` of the client's statement.
    pub(super) fn start_lookup(&self, i: usize, c: &mut Client) {
        let l = self.stmts[i].lookups[c.lookup];
        // Guaranteed by `Sim::new`: a sysbench workload needs a sysbench dataset, which needs the database.
        let db = self.db.as_ref().expect("sysbench statements need the database");
        c.space = l.table;
        c.path_len = db.page_path(&l, &mut c.path);
        c.path_pos = 0;
        c.scan = 0;
    }

    /// Calls `f` with each page key of client `i`'s next statement (`next_stmts`, for
    /// [`Sim::prefetch_slots`]) or current one (for [`Sim::prefetch_nodes`]).
    fn for_each_page(&self, stmt: &Statement, mut f: impl FnMut(PageKey)) {
        let Some(db) = self.db.as_ref() else { return };
        let mut path = [0u64; MAX_DEPTH];
        for l in &stmt.lookups[..stmt.n] {
            let len = db.page_path(l, &mut path);
            for &page in &path[..len] {
                f(PageKey::new(l.table, page));
            }
        }
    }

    /// Prefetches the buffer pool table slots of the pages of client `i`'s next statement.
    fn prefetch_slots(&self, i: usize) {
        let Some(db) = self.db.as_ref() else { return };
        self.for_each_page(&self.next_stmts[i], |k| db.prefetch(k));
    }

    /// Prefetches the LRU nodes of the cached pages of client `i`'s statement (their
    /// slots, prefetched by [`Sim::prefetch_slots`], say where they are).
    fn prefetch_nodes(&self, i: usize) {
        let Some(db) = self.db.as_ref() else { return };
        self.for_each_page(&self.stmts[i], |k| db.prefetch_node(k));
    }

    /// Steps client `i` at `now` until it must wait; schedules its next event.
    ///
    /// The client is stepped in place: the clients' vector is taken out of `self` for the
    /// step (copying the client out and back cost a stalled store-to-load forward on
    /// every step), so nothing called from here reads `self.clients`.
    pub(super) fn step(&mut self, i: usize, now: Nanos) {
        let mut clients = std::mem::take(&mut self.clients);
        self.step_client(i, &mut clients[i], now);
        self.clients = clients;
    }

    fn step_client(&mut self, i: usize, c: &mut Client, now: Nanos) {
        if c.state == State::Blocked {
            // Woken (see `wake`): re-run the page access now that the page is in the pool.
            c.state = State::NextPage;
            c.cpu_pending = c.cpu_pending.saturating_sub(self.costs.page_access);
        }
        loop {
            match c.state {
                State::Start => {
                    match self.mode {
                        Mode::Workload { issue_until } if now >= issue_until => {
                            c.state = State::Idle;
                            break;
                        }
                        Mode::Workload { .. } => {}
                        Mode::Cat { .. } => {
                            let Some((table, offset, len)) = self.cat_next() else {
                                c.state = State::Idle;
                                break;
                            };
                            c.space = table;
                            c.read_offset = offset;
                            c.read_len = len;
                            c.o_direct = false;
                            c.started = now;
                            c.cpu_pending += self.costs.syscall;
                            self.zfs_prefetch_read(c);
                            c.state = State::ReadStart;
                            continue;
                        }
                        Mode::Fio => {
                            let Some((io, end)) = self.fio_next(i, now) else {
                                c.state = State::Idle;
                                break;
                            };
                            c.read_committed = false;
                            if io.sync {
                                // fsync(2) / fdatasync(2): zfs_fsync commits the file's log.
                                c.fsync = if end { Fsync::End } else { Fsync::Io };
                                c.space = io.file;
                                c.write = false;
                                c.started = now;
                                c.cpu_pending += self.costs.syscall;
                                c.after_commit = State::WriteDone;
                                c.state = State::Commit;
                                continue;
                            }
                            c.fsync = Fsync::None;
                            c.o_sync = io.write && self.fio_o_sync(i);
                            c.o_direct = self.fio_o_direct(i);
                            c.space = io.file;
                            c.read_offset = io.offset;
                            c.read_len = io.len;
                            c.write = io.write;
                            c.w_offset = io.offset;
                            c.w_len = io.len;
                            c.started = now;
                            c.cpu_pending += self.costs.syscall;
                            c.state = if io.write { State::WriteStart } else { State::ReadStart };
                            continue;
                        }
                    }
                    if c.next_ready {
                        self.stmts[i].copy_from(&self.next_stmts[i]);
                        c.next_ready = false;
                        self.prefetch_nodes(i);
                    } else {
                        self.source.next(i, &mut self.stmts[i]);
                    }
                    c.started = now;
                    // InnoDB's O_DIRECT reads pass through the ARC here (left undone: 2.3's
                    // direct=standard would make them Direct I/O).
                    c.o_direct = false;
                    let s = &self.stmts[i];
                    c.cpu_pending += self.costs.statement * u64::from(s.queries.max(1))
                        + self.costs.row * u64::from(s.rows);
                    c.lookup = 0;
                    if self.stmts[i].n == 0 {
                        c.state = State::Finish;
                        continue;
                    }
                    self.start_lookup(i, c);
                    c.state = State::NextPage;
                }
                State::NextPage => {
                    if c.path_pos == c.path_len {
                        // A range scan goes on to the next leaf (btr_pcur_move_to_next_page).
                        let l = &self.stmts[i].lookups[c.lookup];
                        if l.span > 1 {
                            if let Some(page) = self.db.as_ref().and_then(|db| db.next_leaf(l, c.scan + 1)) {
                                c.scan += 1;
                                c.path[0] = page;
                                (c.path_len, c.path_pos) = (1, 0);
                                continue;
                            }
                        }
                        c.lookup += 1;
                        if c.lookup == self.stmts[i].n {
                            c.state = State::Finish;
                            continue;
                        }
                        self.start_lookup(i, c);
                    }
                    c.page = c.path[c.path_pos];
                    let key = PageKey::new(c.space, c.page);
                    c.cpu_pending += self.costs.page_access;
                    if let Some(waiters) = self.bp_inflight.get_mut(key.0) {
                        *waiters += 1;
                        self.waits[i] = Wait::Page(key.0);
                        c.state = State::Blocked;
                        break;
                    }
                    self.bp_requests += 1;
                    // Guaranteed by `Sim::new` (see start_lookup).
                    let db = self.db.as_mut().expect("sysbench statements need the database");
                    if db.access(key, now) {
                        c.path_pos += 1;
                        continue;
                    }
                    self.bp_reads += 1;
                    self.bp_inflight.insert(key.0, 0);
                    // buf_page_init_for_read: the page takes its frame and its place in
                    // the LRU list before the read is issued.
                    (c.read_offset, c.read_len) = db.insert_for_read(key, c.page);
                    c.cpu_pending += self.costs.syscall;
                    self.zfs_prefetch_read(c);
                    c.state = State::ReadStart;
                }
                State::ReadStart => {
                    if self.run_pending_cpu(i, c, now) {
                        break;
                    }
                    if !c.read_committed && matches!(&self.fs, Fs::Zfs(z) if z.commits_reads()) {
                        // sync=always: zfs_read commits the file's log before reading.
                        c.read_committed = true;
                        c.after_commit = State::ReadStart;
                        c.state = State::Commit;
                        continue;
                    }
                    c.read_committed = false;
                    c.read = match &self.fs {
                        Fs::Zfs(z) => {
                            FileRead::Zfs(z.start_read(c.space + 1, c.read_offset, c.read_len, c.o_direct))
                        }
                        Fs::Extent(x) => FileRead::Extent(x.start_read(c.space, c.read_offset, c.read_len)),
                    };
                    c.state = State::FileRead;
                }
                State::FileRead => {
                    if self.file_read(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::WriteStart => {
                    if self.write_start(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::ZfsWrite => {
                    if self.zfs_write(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::WriteDone => {
                    self.fio_done(i, c, now);
                    c.state = State::Start;
                }
                State::Commit => {
                    if self.run_pending_cpu(i, c, now) {
                        break;
                    }
                    if self.commit(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::CommitWait => {
                    // Woken by the intent log: the commit is done.
                    let done = match &mut self.fs {
                        Fs::Zfs(z) => z.commit_finish(i),
                        Fs::Extent(_) => true,
                    };
                    debug_assert!(done, "a committer is woken once its commit is done");
                    c.state = c.after_commit;
                }
                State::Finish => {
                    if c.cpu_pending != 0 && !c.next_ready {
                        // The next statement's pages are looked up after this CPU time:
                        // draw it now and start fetching their table slots.
                        self.source.next(i, &mut self.next_stmts[i]);
                        c.next_ready = true;
                        self.prefetch_slots(i);
                    }
                    if self.run_pending_cpu(i, c, now) {
                        break;
                    }
                    // Counted always (the series covers the warm-up); the summary takes
                    // differences over the window, and only the window's latencies.
                    self.statements += 1;
                    self.queries += u64::from(self.stmts[i].queries);
                    self.rows += self.stmts[i].rows as u64;
                    self.interval_hist.record(now - c.started);
                    if self.measuring {
                        self.window_hist.record(now - c.started);
                    }
                    c.state = State::Start;
                }
                // Invariant: a client blocks or idles without an event queued; a wake-up sets its state first.
                State::Blocked | State::Idle => unreachable!("a blocked or idle client has no event"),
            }
        }
    }

    /// The client's read in its filesystem layer: step it until it waits (the client
    /// resumes then) or is done (the page is in memory). Prefetch reads the step started
    /// are scheduled before the client's own wake-up.
    fn file_read(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let task = self.bcache_task(i);
        let Sim { fs, devices, queue, .. } = self;
        let step = match (fs, &mut c.read) {
            (Fs::Zfs(z), FileRead::Zfs(r)) => {
                let step = z.read(i, r, now, &mut c.cpu_pending, devices);
                schedule_wakeups(queue, z);
                step
            }
            (Fs::Extent(x), FileRead::Extent(r)) => x.read(task, r, now, &mut c.cpu_pending, devices),
            (Fs::Zfs(_), FileRead::Extent(_)) | (Fs::Extent(_), FileRead::Zfs(_)) => {
                // Invariant: reads are made by the run's own layer (`Sim::new` built one filesystem).
                unreachable!("a read belongs to the run's filesystem")
            }
        };
        match step {
            ReadStep::WaitUntil(t) => {
                queue.at(t, Event::Client(i));
                Flow::Wait
            }
            // Woken by the ZFS layer (`schedule_wakeups`) when its vdev queue issues the read.
            ReadStep::Blocked => Flow::Wait,
            ReadStep::Done => {
                self.page_read_done(i, c, now);
                Flow::Next
            }
        }
    }

    /// Starts bringing into the CPU caches what the ZFS walk of the client's read will
    /// look up first.
    pub(super) fn zfs_prefetch_read(&self, c: &Client) {
        if let Fs::Zfs(z) = &self.fs {
            z.prefetch_read(c.space + 1, c.read_offset, c.read_len);
        }
    }

    /// A write request starts (after its system call's CPU): an O_DIRECT device write on
    /// XFS/ext4 (through bcache if present), the ZFS layer's write path on ZFS.
    fn write_start(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        if self.run_pending_cpu(i, c, now) {
            return Flow::Wait;
        }
        match &mut self.fs {
            Fs::Extent(x) => {
                let done =
                    x.write(i, c.space, c.w_offset, c.w_len, now, &mut c.cpu_pending, &mut self.devices);
                c.state = State::WriteDone;
                self.queue.at(done, Event::Client(i));
                Flow::Wait
            }
            Fs::Zfs(_) => {
                let class = self.fio_write_class(i);
                // Invariant: this arm matched Fs::Zfs just above.
                let Fs::Zfs(z) = &self.fs else { unreachable!() };
                c.zwrite = z.start_write(c.space + 1, c.w_offset, c.w_len, class, c.o_sync, c.o_direct, now);
                c.state = State::ZfsWrite;
                Flow::Next
            }
        }
    }

    /// The client's write in the ZFS layer: step it until it waits or is done.
    fn zfs_write(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        // Invariant: the state ZfsWrite is entered only on ZFS (`write_start`).
        let Sim { fs: Fs::Zfs(z), devices, queue, .. } = self else { unreachable!("ZfsWrite only on ZFS") };
        let step = z.write(i, &mut c.zwrite, now, &mut c.cpu_pending, devices);
        schedule_wakeups(queue, z);
        match step {
            WriteStep::WaitUntil(t) => {
                queue.at(t, Event::Client(i));
                Flow::Wait
            }
            // Woken by the sync (`sync_event`), or by the layer when its vdev queue issues
            // the write's I/O (`schedule_wakeups`).
            WriteStep::Throttled => Flow::Wait,
            WriteStep::Done if z.commits_write(c.o_sync) => {
                // zfs_write's zil_commit (O_SYNC, O_DSYNC, sync=always).
                c.after_commit = State::WriteDone;
                c.state = State::Commit;
                Flow::Next
            }
            WriteStep::Done => {
                self.fio_done(i, c, now);
                c.state = State::Start;
                Flow::Next
            }
        }
    }

    /// `zil_commit` of the client's file at `now`: done at once, or the client waits for
    /// the intent log to release it. The commit's CPU (copies into log blocks, the zio
    /// pipelines of its writes) runs on the vCPUs while the client waits, without delaying
    /// the writes it issued; a commit that returns at once leaves it to the client's next
    /// burst.
    fn commit(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Sim { fs, devices, queue, .. } = self;
        let step = match fs {
            Fs::Zfs(z) => {
                let step = z.commit(i, c.space + 1, now, &mut c.cpu_pending, devices);
                schedule_wakeups(queue, z);
                step
            }
            // Refused where jobs are checked: XFS/ext4 have no log modelled.
            Fs::Extent(_) => CommitStep::Done,
        };
        match step {
            CommitStep::Done => {
                c.state = c.after_commit;
                Flow::Next
            }
            CommitStep::Wait => {
                if c.cpu_pending > 0 {
                    self.cpus.run(now, c.cpu_pending);
                    c.cpu_pending = 0;
                }
                c.state = State::CommitWait;
                Flow::Wait
            }
        }
    }

    /// The intent log's next due time, if the filesystem is ZFS and something is due.
    pub(super) fn zil_next_at(&self) -> Option<Nanos> {
        match &self.fs {
            Fs::Zfs(z) => z.zil_next_at(),
            Fs::Extent(_) => None,
        }
    }

    /// Runs the intent log's events up to `now` and wakes the committers it releases.
    pub(super) fn zil_event(&mut self, now: Nanos) {
        let Sim { fs: Fs::Zfs(z), devices, queue, .. } = self else { return };
        z.zil_event(now, devices);
        schedule_wakeups(queue, z);
        for j in z.take_zil_woken() {
            queue.at(now, Event::Client(j as usize));
        }
    }

    /// The txg sync's next due time, if the filesystem is ZFS and something is due.
    pub(super) fn write_next_at(&self) -> Option<Nanos> {
        match &self.fs {
            Fs::Zfs(z) => z.sync_next_at(),
            Fs::Extent(_) => None,
        }
    }

    /// Runs the txg sync's events up to `now` and wakes the writers it releases.
    pub(super) fn write_event(&mut self, now: Nanos) {
        let Sim { fs: Fs::Zfs(z), devices, queue, .. } = self else { return };
        z.sync_event(now, devices);
        schedule_wakeups(queue, z);
        for j in z.take_woken() {
            queue.at(now, Event::Client(j as usize));
        }
    }

    /// Runs the txg sync until every dirty byte is on disk; returns when it is.
    pub(super) fn write_flush(&mut self) -> Nanos {
        let Sim { fs: Fs::Zfs(z), devices, clock, .. } = self else { return self.clock };
        z.write_flush(*clock, devices)
    }

    /// bcache's task (`current`) for client `i`'s request: its thread, or in a `cat` phase
    /// the cat process (the last task).
    fn bcache_task(&self, i: usize) -> usize {
        match self.mode {
            Mode::Cat { .. } => self.nclients,
            Mode::Workload { .. } | Mode::Fio => i,
        }
    }

    /// Prefetch read `k` of the ZFS layer resumes.
    pub(super) fn prefetch_event(&mut self, k: u32, now: Nanos) {
        let Sim { fs: Fs::Zfs(z), devices, queue, cpus, .. } = self else { return };
        z.prefetch_event(k, now, cpus, devices);
        schedule_wakeups(queue, z);
    }

    /// Runs the client's accumulated CPU work on the vCPUs and schedules it to resume
    /// (same state) when that work is done; false if there was none.
    pub(super) fn run_pending_cpu(&mut self, i: usize, c: &mut Client, now: Nanos) -> bool {
        if c.cpu_pending == 0 {
            return false;
        }
        let done = self.cpus.run(now, c.cpu_pending);
        c.cpu_pending = 0;
        self.queue.at(done, Event::Client(i));
        true
    }

    /// dmu_buf_rele_array: the reader drops its holds on the page's record dbufs.
    /// The page is in memory: insert it in the buffer pool and release its waiters.
    pub(super) fn page_read_done(&mut self, i: usize, c: &mut Client, now: Nanos) {
        match self.mode {
            Mode::Cat { .. } => {
                self.cat_reads += 1;
                self.cat_bytes += c.read_len as u64;
                c.state = State::Start;
                return;
            }
            Mode::Fio => {
                self.fio_done(i, c, now);
                c.state = State::Start;
                return;
            }
            Mode::Workload { .. } => {}
        }
        let key = PageKey::new(c.space, c.page);
        // Guaranteed by `Sim::new` (see start_lookup): workload reads are of database pages.
        self.db.as_mut().expect("sysbench pages need the database").read_done(key, now);
        let waiters = self.bp_inflight.remove(key.0).unwrap_or(0);
        if waiters > 0 {
            self.wake(Wait::Page(key.0), now);
        }
        c.path_pos += 1;
        c.state = State::NextPage;
    }

    /// Reschedules every client blocked on `what` at `now`; each leaves its blocked state
    /// when its event runs (a blocked client has no other event).
    pub(super) fn wake(&mut self, what: Wait, now: Nanos) {
        for j in 0..self.nclients {
            if self.waits[j] == what {
                self.waits[j] = Wait::None;
                self.queue.at(now, Event::Client(j));
            }
        }
    }
}

/// Schedules the clients and prefetch reads the ZFS layer released (prefetch chains
/// waiting for reads in flight, and what its vdev queues issued after holding it).
fn schedule_wakeups(queue: &mut Schedule, z: &mut Zfs) {
    for (t, w) in z.take_wakeups() {
        match w {
            Wake::Client(j) => queue.at(t, Event::Client(j as usize)),
            Wake::Prefetch(k) => queue.at(t, Event::Prefetch(k)),
        }
    }
}
