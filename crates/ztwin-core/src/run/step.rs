//! Stepping a client through its statement: the states above the filesystem (the
//! statement, the buffer pool, the file read) and the hand-off to the ZFS path or a device.

use super::*;
use crate::db::innodb::writes::{AfterIo, FileOp, FrameStep, LogFree, LogWait};
use crate::fs::journal::ext4::CheckpointStep;
use crate::fs::journal::{IoStep, PlanRun, WriteKind};
use crate::fs::zfs::content::CLASS_MEAN_RATIO;
use crate::fs::zfs::layer::Wake;
use crate::workload::statement::Op;

impl Sim<'_> {
    /// Sets the path of lookup `c.lookup` of the client's statement.
    pub(super) fn start_lookup(&self, i: usize, c: &mut Client) {
        let l = self.stmts[i].lookups[c.lookup];
        // Guaranteed by `Sim::new`: a sysbench workload needs a sysbench dataset, which needs the database.
        let db = self.db.as_ref().expect("sysbench statements need the database");
        c.space = l.table;
        let (len, bufferable) = db.page_path(&l, &mut c.path);
        c.path_len = len;
        c.bufferable = bufferable.min(u8::MAX as usize) as u8;
        c.sec_buffered = false;
        c.applied = false;
        c.path_pos = 0;
        c.scan = 0;
    }

    /// Calls `f` with each page key of client `i`'s next statement (`next_stmts`, for
    /// [`Sim::prefetch_slots`]) or current one (for [`Sim::prefetch_nodes`]).
    fn for_each_page(&self, stmt: &Statement, mut f: impl FnMut(PageKey)) {
        let Some(db) = self.db.as_ref() else { return };
        let mut path = [0u64; MAX_PATH];
        for l in &stmt.lookups[..stmt.n] {
            let (len, _) = db.page_path(l, &mut path);
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
        let c = &mut clients[i];
        // The time since its last step goes to what it waited for (`waits`).
        c.trx_waits[c.wait_class as usize] += now.saturating_sub(c.wait_since);
        c.cpu_exit = false;
        self.step_client(i, c, now);
        c.wait_since = now;
        let (wait, cpu) = (self.waits[i], c.cpu_exit);
        match waits::in_commit(c, wait) {
            None => c.wait_class = waits::class_of(c, wait, cpu),
            Some(_) => {
                clients[i].wait_class =
                    if cpu { waits::WaitClass::Cpu } else { self.commit_class(&clients, i) };
                self.follow_leader(&mut clients, i, now);
            }
        }
        self.clients = clients;
    }

    /// The class of thread `i`'s time in its commit (see `waits`): its own file
    /// operation's file (the redo log or the binary log), else where its group commit is;
    /// a follower's is its leader's.
    fn commit_class(&self, clients: &[Client], i: usize) -> waits::WaitClass {
        use crate::db::binlog::GroupWait;
        use waits::WaitClass;
        let Some(w) = self.db.as_ref().and_then(|d| d.writes()) else { return WaitClass::CommitRedo };
        // What thread `k` itself does, or the leader it waits for.
        let own = |k: usize| {
            let c = &clients[k];
            if waits::in_commit(c, self.waits[k]) == Some(waits::InCommit::Io) {
                return Ok(if w.is_binlog(c.space) {
                    WaitClass::CommitBinlog
                } else {
                    WaitClass::CommitRedo
                });
            }
            match w.group_wait(k) {
                // Without the binary log (or no transaction in it): the redo log's writer.
                GroupWait::None | GroupWait::Redo => Ok(WaitClass::CommitRedo),
                GroupWait::Binlog => Ok(WaitClass::CommitBinlog),
                GroupWait::Queue => Ok(WaitClass::CommitQueue),
                GroupWait::Follower(h) => Err(h as usize),
            }
        };
        // A leader is no follower (`Binlog::group_wait`).
        own(i).unwrap_or_else(|h| own(h).unwrap_or(WaitClass::CommitQueue))
    }

    /// Thread `i`'s step in its commit may have changed what its group commit's leader
    /// (itself, or the one it follows) does, or who follows it: every follower's time so
    /// far goes to its class, and from `now` it waits in the leader's.
    fn follow_leader(&self, clients: &mut [Client], i: usize, now: Nanos) {
        use crate::db::binlog::GroupWait;
        let Some(w) = self.db.as_ref().and_then(|d| d.writes()) else { return };
        let leader = match w.group_wait(i) {
            GroupWait::None => return,
            GroupWait::Follower(h) => h as usize,
            GroupWait::Redo | GroupWait::Binlog | GroupWait::Queue => i,
        };
        let group = w.group_of(leader);
        if group.len() < 2 {
            return;
        }
        let class = self.commit_class(clients, leader);
        for &f in &group[1..] {
            let f = &mut clients[f as usize];
            f.trx_waits[f.wait_class as usize] += now.saturating_sub(f.wait_since);
            f.wait_since = now;
            f.wait_class = class;
        }
    }

    fn step_client(&mut self, i: usize, c: &mut Client, now: Nanos) {
        if c.state == State::Blocked {
            // Woken (see `wake`): a page access runs again now that the page is in the
            // pool (its CPU was counted); a commit, a change or a read's frame asks again.
            c.state = c.resume;
            if c.resume == State::NextPage {
                c.cpu_pending = c.cpu_pending.saturating_sub(self.costs.page_access);
            }
        }
        loop {
            match c.state {
                State::Start => {
                    match self.mode {
                        Mode::Workload { issue_until } if now >= issue_until || i >= self.nusers => {
                            // The database's own threads run on their timers, not statements.
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
                                // fsync(2) / fdatasync(2): zfs_fsync commits the file's log;
                                // XFS/ext4 their journal's plan.
                                c.datasync = self.fio_datasync(i);
                                c.fsync = if end { Fsync::End } else { Fsync::Io };
                                c.space = io.file;
                                c.o_direct = self.fio_o_direct(i);
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
                    c.trx_waits = [0; waits::CLASSES];
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
                        if l.op != Op::Read && !c.applied {
                            c.state = State::Apply;
                            continue;
                        }
                        c.lookup += 1;
                        if c.lookup == self.stmts[i].n {
                            c.state = State::Finish;
                            continue;
                        }
                        self.start_lookup(i, c);
                        if c.path_len == 0 {
                            // A commit visits no page.
                            continue;
                        }
                    }
                    c.page = c.path[c.path_pos];
                    let key = PageKey::new(c.space, c.page);
                    c.cpu_pending += self.costs.page_access;
                    if let Some(waiters) = self.bp_inflight.get_mut(key.0) {
                        *waiters += 1;
                        self.waits[i] = Wait::Page(key.0);
                        c.resume = State::NextPage;
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
                    if c.path_pos == c.bufferable as usize {
                        // The change buffer takes the change: the leaf is not read.
                        c.sec_buffered = true;
                        c.path_pos += 1;
                        continue;
                    }
                    self.bp_reads += 1;
                    c.state = State::FrameRetry;
                }
                State::FrameRetry => {
                    let key = PageKey::new(c.space, c.page);
                    // Guaranteed by `Sim::new` (see start_lookup).
                    let db = self.db.as_mut().expect("sysbench statements need the database");
                    // buf_page_init_for_read: the page takes its frame and its place in
                    // the LRU list before the read is issued.
                    let got = db.insert_for_read(i, key, c.page);
                    let Some(range) = got else {
                        // No frame: MySQL 5.7's thread writes a dirty LRU page itself;
                        // MariaDB's (or one finding nothing to write) waits for the page
                        // cleaner's batch; Percona Server's backs off and asks again.
                        match db.no_frame(i) {
                            FrameStep::Io => {
                                c.after_io = State::FrameRetry;
                                c.state = State::DbIo;
                                continue;
                            }
                            FrameStep::Wait => {}
                            FrameStep::Yield(times) => {
                                // os_thread_yield: its system calls on the vCPUs.
                                c.cpu_pending += self.costs.syscall * u64::from(times);
                                let done = self.cpus.run(now, c.cpu_pending);
                                c.cpu_pending = 0;
                                c.resume = State::FrameRetry;
                                c.state = State::Blocked;
                                self.queue.at(done, Event::Client(i));
                                break;
                            }
                            FrameStep::Sleep(ns) => {
                                c.resume = State::FrameRetry;
                                c.state = State::Blocked;
                                self.queue.at(now.saturating_add(ns), Event::Client(i));
                                break;
                            }
                        }
                        c.resume = State::FrameRetry;
                        self.waits[i] = Wait::Frame;
                        c.state = State::Blocked;
                        self.poll_cleaner_wake(now);
                        self.kick_cleaner(now);
                        break;
                    };
                    self.poll_cleaner_wake(now);
                    if let Some(waiters) = self.bp_inflight.get_mut(key.0) {
                        // Another thread started reading it while this one got its frame.
                        *waiters += 1;
                        self.waits[i] = Wait::Page(key.0);
                        c.resume = State::NextPage;
                        c.state = State::Blocked;
                        break;
                    }
                    self.bp_inflight.insert(key.0, 0);
                    (c.read_offset, c.read_len) = range;
                    // innodb_flush_method=O_DIRECT reads the data files with O_DIRECT (2.3's
                    // direct=standard makes them Direct I/O; 2.2 and before ignore it).
                    c.o_direct = self.db_o_direct(c.space);
                    c.cpu_pending += self.costs.syscall;
                    self.zfs_prefetch_read(c);
                    c.state = State::ReadStart;
                }
                State::Apply => {
                    let l = self.stmts[i].lookups[c.lookup];
                    // Guaranteed by `Sim::new` (see start_lookup).
                    let db = self.db.as_mut().expect("sysbench statements need the database");
                    if l.op == Op::Commit {
                        // trx_commit_in_memory releases the row locks before the log's
                        // write and flush (`innodb::row_locks`).
                        let (queue, waits) = (&mut self.queue, &mut self.waits);
                        db.release_row_locks(i, now, |w| {
                            waits[w] = Wait::None;
                            queue.at(now, Event::Client(w));
                        });
                        let step = db.commit(i, now);
                        self.poll_cleaner_wake(now);
                        self.poll_purge_wake(now);
                        self.wake_db_released(now);
                        self.log_step(i, c, step, now);
                        if c.state == State::Blocked {
                            break;
                        }
                        continue;
                    }
                    let s = &self.stmts[i];
                    if s.lock_at[..s.n_locks as usize].contains(&(c.lookup as u16))
                        && !db.row_lock(i, l.table, l.key, now)
                    {
                        // Another transaction holds the row: wait until its commit grants
                        // the lock, then change the row.
                        c.resume = State::Apply;
                        self.waits[i] = Wait::RowLock;
                        c.state = State::Blocked;
                        break;
                    }
                    match db.log_free_check(i) {
                        LogFree::Go => {}
                        LogFree::Wait => {
                            c.resume = State::Apply;
                            self.waits[i] = Wait::Log;
                            c.state = State::Blocked;
                            self.kick_cleaner(now);
                            break;
                        }
                        LogFree::Poll(ns) => {
                            // Percona Server's buf_flush_wait_flushed: a sleep, then again.
                            c.resume = State::Apply;
                            c.state = State::Blocked;
                            self.queue.at(now.saturating_add(ns), Event::Client(i));
                            self.poll_cleaner_wake(now);
                            break;
                        }
                    }
                    db.modify(i, &l, !c.sec_buffered, now);
                    self.poll_cleaner_wake(now);
                    c.applied = true;
                    c.state = State::NextPage;
                }
                State::CommitRetry => {
                    // Guaranteed by `Sim::new` (see start_lookup).
                    let step = self.db.as_mut().expect("commits need the database").commit_retry(i);
                    self.wake_db_released(now);
                    self.log_step(i, c, step, now);
                    if c.state == State::Blocked {
                        break;
                    }
                }
                State::DbIo => {
                    if self.db_io(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::JournalCheckpoint => {
                    if self.journal_checkpoint(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::JournalSync => {
                    if self.journal_sync(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::JournalSyncThen => {
                    if self.journal_sync_then(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::BufferedWrite => {
                    if self.buffered_write(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::DataSync => {
                    if self.data_sync(i, c, now) == Flow::Wait {
                        break;
                    }
                }
                State::CleanerSleep
                | State::MasterSleep
                | State::LruSleep
                | State::PurgeSleep
                | State::PurgeIdle => break,
                State::PurgeBatch => {
                    // srv_do_purge's loop: trx_purge until a call handles nothing.
                    let db = self.db.as_mut().expect("purge needs the database");
                    let b = db.purge_batch(&mut self.stmts[i]);
                    if b.pages == 0 {
                        // A truncating call truncates even when it handled nothing.
                        db.purge_batch_done(now);
                        self.poll_cleaner_wake(now);
                        self.purge_sleep(i, c, now);
                        break;
                    }
                    self.purge_share(i, now);
                    self.purge_start(i, c, now, State::PurgeDone);
                }
                State::PurgeDone => {
                    if self.run_pending_cpu(i, c, now) {
                        break;
                    }
                    if self.purge_pending > 0 {
                        // trx_purge_wait_for_workers_to_complete.
                        c.resume = State::PurgeDone;
                        self.waits[i] = Wait::PurgeWorkers;
                        c.state = State::Blocked;
                        break;
                    }
                    self.db.as_mut().expect("purge needs the database").purge_batch_done(now);
                    self.poll_cleaner_wake(now);
                    c.state = State::PurgeBatch;
                }
                State::PurgeWork => self.purge_start(i, c, now, State::PurgeWorkerDone),
                State::PurgeWorkerDone => {
                    if self.run_pending_cpu(i, c, now) {
                        break;
                    }
                    self.purge_pending -= 1;
                    if self.purge_pending == 0 {
                        self.wake(Wait::PurgeWorkers, now);
                    }
                    c.state = State::PurgeIdle;
                    break;
                }
                State::LruBatch => {
                    // Guaranteed: the LRU manager exists only with Percona Server's writes.
                    let db = self.db.as_mut().expect("the LRU manager needs the database");
                    c.after_io = State::LruSleep;
                    let io = db.lru_batch(i, now);
                    // The batch freed the clean pages of the tail at once.
                    self.wake(Wait::Frame, now);
                    if !io {
                        self.lru_sleep(i, c, now);
                        break;
                    }
                    c.state = State::DbIo;
                }
                State::CleanerPass => {
                    let active = self.db_activity();
                    let active = active != std::mem::replace(&mut self.cleaner_activity, active);
                    c.started = now;
                    // Guaranteed: the page cleaner exists only with the database's writes.
                    let db = self.db.as_mut().expect("the page cleaner needs the database");
                    c.after_io = State::CleanerSleep;
                    c.state = if db.cleaner_pass(i, now, active) { State::DbIo } else { State::CleanerSleep };
                    // The pass's LRU batch freed the clean pages of the tail at once.
                    self.wake(Wait::Frame, now);
                    if c.state == State::CleanerSleep {
                        self.cleaner_sleep(i, c, now);
                        break;
                    }
                }
                State::MasterFlush => {
                    // Guaranteed: the master thread exists only with the database's writes.
                    let step = self
                        .db
                        .as_mut()
                        .expect("the master thread needs the database")
                        .background_log_flush(i);
                    c.after_io = State::MasterSleep;
                    match step {
                        LogWait::Done => {
                            self.master_sleep(i, c, now);
                            break;
                        }
                        LogWait::Wait => {
                            c.resume = State::MasterFlush;
                            self.waits[i] = Wait::Log;
                            c.state = State::Blocked;
                            break;
                        }
                        LogWait::Io => c.state = State::DbIo,
                        // The binary log's sync delay is a committing thread's, not the master's.
                        LogWait::Sleep(ns) => {
                            c.resume = State::MasterFlush;
                            c.state = State::Blocked;
                            self.queue.at(now.saturating_add(ns), Event::Client(i));
                            break;
                        }
                    }
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
                    let ra = self.buffered_ra(i, c);
                    c.read = match &self.fs {
                        Fs::Zfs(z) => {
                            FileRead::Zfs(z.start_read(c.space + 1, c.read_offset, c.read_len, c.o_direct))
                        }
                        Fs::Extent(x) => FileRead::Extent(match ra {
                            Some(ra) => x.start_buffered_read(c.space, c.read_offset, c.read_len, ra),
                            None => x.start_read(c.space, c.read_offset, c.read_len),
                        }),
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
                    if c.journal_checkpoint {
                        c.state = State::JournalCheckpoint;
                        continue;
                    }
                    if c.o_sync
                        && c.fsync == Fsync::None
                        && matches!(self.fs, Fs::Extent(_))
                        && (self.mode == Mode::Fio || c.after_write == State::DbIo)
                    {
                        // An O_SYNC/O_DSYNC write on XFS/ext4 (`generic_write_sync`): its
                        // range's data (page cache) and the journal's sync of the file, then
                        // the write completes. The database opens its log O_SYNC (MySQL 5.7's
                        // O_DSYNC method: `os_file_create_func`), not O_DSYNC.
                        c.fsync = Fsync::Write;
                        c.datasync = self.mode == Mode::Fio && self.fio_datasync(i);
                        c.after_commit = State::WriteDone;
                        c.state = State::Commit;
                        continue;
                    }
                    if c.after_write == State::DbIo {
                        // A page the page cleaner wrote is clean from now on (its frame can
                        // be taken by a thread's scan of the LRU tail).
                        let db = self.db.as_mut().expect("database I/O needs the database");
                        if db.page_written(i, c.space, c.w_offset) {
                            self.wake(Wait::Frame, now);
                        }
                        c.state = State::DbIo;
                        continue;
                    }
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
                State::Finish if i >= self.nusers => {
                    // A purge thread's share of its batch is done (not a workload's statement).
                    c.state = if i == self.purge_first { State::PurgeDone } else { State::PurgeWorkerDone };
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
                    self.by_kind[usize::from(self.stmts[i].kind & 7)] += 1;
                    self.queries += u64::from(self.stmts[i].queries);
                    self.rows += self.stmts[i].rows as u64;
                    self.interval_hist.record(now - c.started);
                    if self.measuring {
                        self.window_hist.record(now - c.started);
                        self.wait_times.record(now - c.started, &c.trx_waits);
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
        let Sim { fs, devices, queue, feeds, .. } = self;
        let step = match (fs, &mut c.read) {
            (Fs::Zfs(z), FileRead::Zfs(r)) => {
                let step = z.read(i, r, now, &mut c.cpu_pending, devices);
                schedule_wakeups(queue, z, feeds);
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
            Fs::Extent(x) if x.buffered() && !c.o_direct => {
                x.start_buffered_write(i, c.space, c.w_offset, c.w_len);
                c.state = State::BufferedWrite;
                Flow::Next
            }
            Fs::Extent(x) => {
                let mut done =
                    x.write(i, c.space, c.w_offset, c.w_len, now, &mut c.cpu_pending, &mut self.devices);
                // Its metadata change (the timestamps; a file's extension) in the journal.
                let kind = match &self.db {
                    Some(db) => db.write_kind(c.space),
                    None => WriteKind::Overwrite,
                };
                let noted = x.note_write(c.space, kind, now);
                if let Some(t) = noted.wait_until {
                    done = done.max(t);
                }
                c.journal_checkpoint = noted.needs_checkpoint;
                c.state = State::WriteDone;
                self.queue.at(done, Event::Client(i));
                self.schedule_journal();
                Flow::Wait
            }
            Fs::Zfs(_) => {
                let class = if self.mode == Mode::Fio { self.fio_write_class(i) } else { CLASS_MEAN_RATIO };
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
        let Sim { fs: Fs::Zfs(z), devices, queue, feeds, .. } = self else {
            unreachable!("ZfsWrite only on ZFS")
        };
        let step = z.write(i, &mut c.zwrite, now, &mut c.cpu_pending, devices);
        schedule_wakeups(queue, z, feeds);
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
                c.state = State::WriteDone;
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
        let Sim { fs, devices, queue, feeds, .. } = self;
        let step = match fs {
            Fs::Zfs(z) => {
                let step = z.commit(i, c.space + 1, now, &mut c.cpu_pending, devices);
                schedule_wakeups(queue, z, feeds);
                step
            }
            Fs::Extent(x) => {
                // A buffered file's dirty pages first (the whole file, or an O_SYNC
                // write's range), then the journal.
                let range = (c.fsync == Fsync::Write).then_some((c.w_offset, u64::from(c.w_len)));
                let data = !c.o_direct && x.start_data_sync(i, c.space, range);
                c.state = if data { State::DataSync } else { State::JournalSync };
                return Flow::Next;
            }
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
        let Sim { fs: Fs::Zfs(z), devices, queue, feeds, .. } = self else { return };
        z.zil_event(now, devices);
        schedule_wakeups(queue, z, feeds);
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
        let Sim { fs: Fs::Zfs(z), devices, queue, feeds, cpus, .. } = self else { return };
        z.sync_event(now, cpus, devices);
        schedule_wakeups(queue, z, feeds);
        for j in z.take_woken() {
            queue.at(now, Event::Client(j as usize));
        }
    }

    /// Runs the txg sync until every dirty byte is on disk; returns when it is.
    pub(super) fn write_flush(&mut self) -> Nanos {
        let Sim { fs: Fs::Zfs(z), devices, clock, cpus, .. } = self else { return self.clock };
        z.write_flush(*clock, cpus, devices)
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
        let Sim { fs: Fs::Zfs(z), devices, queue, feeds, cpus, .. } = self else { return };
        z.prefetch_event(k, now, cpus, devices);
        schedule_wakeups(queue, z, feeds);
    }

    /// Runs the client's accumulated CPU work on the vCPUs and schedules it to resume
    /// (same state) when that work is done; false if there was none.
    pub(super) fn run_pending_cpu(&mut self, i: usize, c: &mut Client, now: Nanos) -> bool {
        if c.cpu_pending == 0 {
            return false;
        }
        let done = self.cpus.run(now, c.cpu_pending);
        c.cpu_pending = 0;
        c.cpu_exit = true;
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

    /// What a commit's or a log flush's step asks of thread `i`: go on (its lookup is
    /// done), wait for another writer, or write the log itself.
    fn log_step(&mut self, i: usize, c: &mut Client, step: LogWait, now: Nanos) {
        match step {
            LogWait::Done => {
                c.applied = true;
                c.state = State::NextPage;
            }
            LogWait::Wait => {
                c.resume = State::CommitRetry;
                self.waits[i] = Wait::Log;
                c.state = State::Blocked;
            }
            LogWait::Io => {
                c.after_io = State::CommitRetry;
                c.state = State::DbIo;
            }
            LogWait::Sleep(ns) => {
                // Woken by its own event (a sleep, not a wait on another thread).
                c.resume = State::CommitRetry;
                c.state = State::Blocked;
                self.queue.at(now.saturating_add(ns), Event::Client(i));
            }
        }
    }

    /// Thread `i`'s database I/O: the next file operation, or, all done, what its job
    /// leads to (threads it released are woken).
    fn db_io(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        // Guaranteed: DbIo is entered only from the database's steps.
        let db = self.db.as_mut().expect("database I/O needs the database");
        match db.next_op(i) {
            None => {
                if c.async_until > now {
                    self.queue.at(c.async_until, Event::Client(i));
                    return Flow::Wait;
                }
                let after = db.io_done(i, now);
                self.wake_db_released(now);
                self.poll_cleaner_wake(now);
                if after == AfterIo::More {
                    return Flow::Next;
                }
                c.state = c.after_io;
                if c.state == State::CleanerSleep {
                    self.wake(Wait::Frame, now);
                    self.cleaner_sleep(i, c, now);
                    return Flow::Wait;
                }
                if c.state == State::MasterSleep {
                    self.master_sleep(i, c, now);
                    return Flow::Wait;
                }
                if c.state == State::LruSleep {
                    // Every page of the batch is free.
                    self.wake(Wait::Frame, now);
                    self.lru_sleep(i, c, now);
                    return Flow::Wait;
                }
                Flow::Next
            }
            Some(FileOp::Write { file, offset, len, o_sync }) => self.db_write(c, file, offset, len, o_sync),
            // Linux AIO on a buffered file copies into the page cache within io_submit: the
            // submitting thread writes it as a plain write.
            Some(FileOp::WriteAsync { file, offset, len })
                if matches!(&self.fs, Fs::Extent(x) if x.buffered()) && !self.db_o_direct(file) =>
            {
                self.db_write(c, file, offset, len, false)
            }
            Some(FileOp::WriteAsync { file, offset, len }) => match &mut self.fs {
                Fs::Extent(x) => {
                    // io_submit: in flight at once; the barrier waits for it. Its timestamps
                    // are noted in the journal (no wait: simplification of the driver).
                    let done = x.write(i, file, offset, len, now, &mut c.cpu_pending, &mut self.devices);
                    x.note_write(file, WriteKind::Overwrite, now);
                    c.async_until = c.async_until.max(done);
                    self.schedule_journal();
                    Flow::Next
                }
                // A ZFS file takes the write in the submitting thread: as a plain write
                // (Direct I/O when 2.3's direct property makes it so).
                Fs::Zfs(_) => self.db_write(c, file, offset, len, false),
            },
            Some(FileOp::Sync { file }) => {
                // fsync or fdatasync (the server's call): zil_commit on ZFS, the journal's
                // plan on XFS/ext4 (`commit`).
                c.space = file;
                c.fsync = Fsync::Io;
                c.o_direct = self.db_o_direct(file);
                // MySQL 5.7's binary log syncs with my_sync: fdatasync (mysys/my_sync.c,
                // `sync_binlog_file`); InnoDB's own files as its server does.
                c.datasync = self.db.as_ref().is_some_and(|d| {
                    d.syncs_with_fdatasync() || d.writes().is_some_and(|w| w.is_binlog(file))
                });
                c.cpu_pending += self.costs.syscall;
                c.after_commit = State::DbIo;
                c.state = State::Commit;
                Flow::Next
            }
            Some(FileOp::Create { file }) => {
                // open(O_CREAT) of a new name (the binary log's next file): the file in
                // that slot is new and empty, so its appends read nothing back.
                c.cpu_pending += self.costs.syscall;
                match &mut self.fs {
                    Fs::Extent(x) => {
                        x.new_file(file, now);
                    }
                    Fs::Zfs(z) => z.new_file(file + 1),
                }
                Flow::Next
            }
            Some(FileOp::Barrier) => {
                if c.async_until > now {
                    self.queue.at(c.async_until, Event::Client(i));
                    return Flow::Wait;
                }
                Flow::Next
            }
        }
    }

    /// The database's write of `len` bytes at `offset` of driver file `file`
    /// (`o_sync`: the file is open O_SYNC), through the write path; then DbIo again.
    fn db_write(&mut self, c: &mut Client, file: u32, offset: u64, len: u32, o_sync: bool) -> Flow {
        c.o_direct = self.db_o_direct(file);
        c.space = file;
        (c.w_offset, c.w_len, c.read_offset, c.read_len) = (offset, len, offset, len);
        c.write = true;
        c.o_sync = o_sync;
        c.fsync = Fsync::None;
        c.cpu_pending += self.costs.syscall;
        c.after_write = State::DbIo;
        c.state = State::WriteStart;
        Flow::Next
    }

    /// Whether the database opens driver file `file` with O_DIRECT.
    fn db_o_direct(&self, file: u32) -> bool {
        match (&self.db, &self.cfg.database) {
            (Some(db), Some(DatabaseConfig::Innodb(cfg))) => db.o_direct(file, cfg),
            _ => false,
        }
    }

    /// Schedules the threads the database released since the last call at `now`.
    fn wake_db_released(&mut self, now: Nanos) {
        if let Some(db) = &mut self.db {
            db.take_released(&mut self.released);
        }
        self.wake_released(now);
    }

    /// Schedules the threads the database released (`self.released`) at `now`.
    fn wake_released(&mut self, now: Nanos) {
        for k in 0..self.released.len() {
            let j = self.released[k] as usize;
            if self.waits[j] != Wait::None {
                self.waits[j] = Wait::None;
                self.queue.at(now, Event::Client(j));
            }
        }
        self.released.clear();
    }

    /// Writes and commits so far (the page cleaner's `srv_check_activity`).
    fn db_activity(&self) -> u64 {
        self.db
            .as_ref()
            .and_then(|d| d.write_stats())
            .map_or(0, |s| s.commits + s.rows_updated + s.rows_deleted + s.rows_inserted)
    }

    /// The page cleaner (thread `i`) sleeps: until its server says (MySQL 5.7: a second
    /// after its pass started, or not at all when a thread waits for it), or until a
    /// thread wakes it.
    fn cleaner_sleep(&mut self, i: usize, c: &mut Client, now: Nanos) {
        c.state = State::CleanerSleep;
        let waiting =
            self.waits.contains(&Wait::Frame) || self.db.as_ref().is_some_and(|d| d.sync_flush_wanted());
        let next = self.db.as_ref().and_then(|d| d.cleaner_next(now, c.started, waiting));
        // Nanos::MAX: an untimed sleep, ended only by a thread (`kick_cleaner`).
        let due = next.unwrap_or(Nanos::MAX);
        self.cleaner_due = Some(due);
        if due != Nanos::MAX {
            self.queue.at(due, Event::Timer(i));
        }
    }

    /// A database call asked for the page cleaner: wake it.
    fn poll_cleaner_wake(&mut self, now: Nanos) {
        if self.db.as_mut().is_some_and(|d| d.take_cleaner_wake()) {
            self.kick_cleaner(now);
        }
    }

    /// The master thread (thread `i`) sleeps a second.
    fn master_sleep(&mut self, i: usize, c: &mut Client, now: Nanos) {
        c.state = State::MasterSleep;
        let due = now + SEC;
        self.master_due = Some(due);
        self.queue.at(due, Event::Timer(i));
    }

    /// Percona Server's LRU manager (thread `i`) sleeps until its timer (nothing wakes it
    /// earlier).
    fn lru_sleep(&mut self, i: usize, c: &mut Client, now: Nanos) {
        c.state = State::LruSleep;
        let due = self.db.as_ref().and_then(|d| d.lru_next(now)).unwrap_or(now + SEC);
        self.lru_due = Some(due);
        self.queue.at(due, Event::Timer(i));
    }

    /// The purge coordinator (thread `i`) found nothing to purge: it sleeps until a commit
    /// wakes it (MySQL 5.7: `srv_purge_coordinator_suspend`'s wait, its 10 ms timeout
    /// ending in an untimed wait when the history did not grow) or until the master
    /// thread's next second (MariaDB 10.11).
    fn purge_sleep(&mut self, i: usize, c: &mut Client, now: Nanos) {
        c.state = State::PurgeSleep;
        let due = self.db.as_ref().and_then(|d| d.purge_next(now)).unwrap_or(Nanos::MAX);
        self.purge_due = Some(due);
        if due != Nanos::MAX {
            self.queue.at(due, Event::Timer(i));
        }
    }

    /// The purge coordinator (thread `i`) hands its batch's records round-robin to the
    /// purge threads (`trx_purge_attach_undo_recs`), keeping every `purge_n`th for itself;
    /// each worker with a share starts now.
    fn purge_share(&mut self, i: usize, now: Nanos) {
        let n = self.purge_n;
        if n < 2 || self.stmts[i].n < 2 {
            return;
        }
        let (head, workers) = self.stmts.split_at_mut(i + 1);
        let own = &mut head[i];
        for s in workers.iter_mut().take(n - 1) {
            s.clear();
        }
        let mut keep = 0;
        for j in 0..own.n {
            let l = own.lookups[j];
            match j % n {
                0 => {
                    own.lookups[keep] = l;
                    keep += 1;
                }
                t => {
                    let s = &mut workers[t - 1];
                    s.lookups[s.n] = l;
                    s.n += 1;
                }
            }
        }
        own.n = keep;
        for t in 1..n {
            if self.stmts[i + t].n > 0 {
                self.purge_pending += 1;
                self.queue.at(now, Event::Timer(i + t));
            }
        }
    }

    /// Purge thread `i` starts on its share of the batch (each record costs a row's CPU),
    /// or goes to `done` with none.
    fn purge_start(&self, i: usize, c: &mut Client, now: Nanos, done: State) {
        c.started = now;
        c.cpu_pending += self.costs.row * self.stmts[i].n as u64;
        c.lookup = 0;
        if self.stmts[i].n == 0 {
            c.state = done;
            return;
        }
        self.start_lookup(i, c);
        c.state = State::NextPage;
    }

    /// A commit asked for the purge coordinator: a sleeping one wakes at once
    /// (`srv_wake_purge_thread_if_not_active`).
    fn poll_purge_wake(&mut self, now: Nanos) {
        let Some(db) = self.db.as_mut() else { return };
        if !db.take_purge_wake() {
            return;
        }
        let Some(k) = db.purge_actor() else { return };
        if self.purge_due.is_some_and(|d| d > now) {
            self.purge_due = Some(now);
            self.queue.at(now, Event::Timer(k));
        }
    }

    /// A thread needs the page cleaner now (no free frame, the checkpoint age): a
    /// sleeping cleaner wakes at once.
    fn kick_cleaner(&mut self, now: Nanos) {
        let k = crate::db::innodb::writes::cleaner_actor(self.nusers);
        if self.cleaner_due.is_some_and(|d| d > now) {
            self.cleaner_due = Some(now);
            self.queue.at(now, Event::Timer(k));
        }
    }

    /// A database thread's timer fired at `now`: it runs if the timer is its current one.
    pub(super) fn timer_event(&mut self, k: usize, now: Nanos) {
        if k > self.purge_first && k < self.purge_first.saturating_add(self.purge_n) {
            // A purge worker is handed its share of a batch.
            if self.clients_state(k) == Some(State::PurgeIdle) {
                self.clients[k].state = State::PurgeWork;
                self.step(k, now);
            }
            return;
        }
        let cleaner = crate::db::innodb::writes::cleaner_actor(self.nusers);
        let lru = crate::db::innodb::writes::lru_manager_actor(self.nusers);
        let purge = self.db.as_ref().and_then(|d| d.purge_actor());
        let (due, next, expected) = if k == cleaner {
            (&mut self.cleaner_due, State::CleanerPass, State::CleanerSleep)
        } else if purge == Some(k) {
            (&mut self.purge_due, State::PurgeBatch, State::PurgeSleep)
        } else if k == lru {
            (&mut self.lru_due, State::LruBatch, State::LruSleep)
        } else {
            (&mut self.master_due, State::MasterFlush, State::MasterSleep)
        };
        // The first timer at or after the thread's due time runs it; earlier ones are stale.
        if due.is_none_or(|d| d > now) {
            return;
        }
        *due = None;
        if self.clients_state(k) != Some(expected) {
            return;
        }
        self.clients[k].state = next;
        self.step(k, now);
    }

    /// Client `k`'s state (None while the clients are taken out for a step).
    fn clients_state(&self, k: usize) -> Option<State> {
        self.clients.get(k).map(|c| c.state)
    }

    /// XFS/ext4: `fsync`/`fdatasync` of the client's file (`c.space`): the journal's plan.
    /// A commit to wait for parks the client until the journal reports it; the rest (a
    /// cache flush) follows in `JournalSyncThen`.
    fn journal_sync(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Fs::Extent(x) = &mut self.fs else { unreachable!("journal syncs on XFS/ext4 only") };
        let plan = x.sync_plan(c.space, c.datasync, now);
        self.sync_plans[i] = (plan.then, None);
        let waits =
            plan.wait_commit.filter(|&n| x.journal.as_ref().is_some_and(|j| n > j.committed_through()));
        if plan.kick {
            self.kick_journal(now);
        }
        c.state = State::JournalSyncThen;
        if let Some(n) = waits {
            self.waits[i] = Wait::Journal(n);
            c.resume = State::JournalSyncThen;
            c.state = State::Blocked;
            return Flow::Wait;
        }
        Flow::Next
    }

    /// XFS/ext4: the sync's last I/O (a cache flush, through an array to every member),
    /// issued and awaited; then `after_commit`.
    fn journal_sync_then(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Sim { fs: Fs::Extent(x), devices, queue, sync_plans, .. } = self else {
            unreachable!("journal syncs on XFS/ext4 only")
        };
        let (plan, run) = &mut sync_plans[i];
        let caps = x.journal.as_ref().map_or(
            crate::fs::journal::DeviceCaps { write_cache: true, fua: false, max_request_bytes: 1 << 20 },
            |j| j.caps(),
        );
        let run = run.get_or_insert_with(|| PlanRun::new(plan, caps));
        match x.plan_step(run, now, devices) {
            IoStep::WaitUntil(t) => {
                queue.at(t.max(now), Event::Client(i));
                Flow::Wait
            }
            IoStep::Done => {
                sync_plans[i].1 = None;
                c.state = c.after_commit;
                Flow::Next
            }
        }
    }

    /// ext4: a writer's forced checkpoint (its journal short of space), then its write's
    /// metadata noted again.
    fn journal_checkpoint(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Sim { fs: Fs::Extent(x), devices, queue, .. } = self else {
            unreachable!("journal checkpoints on ext4 only")
        };
        match x.checkpoint_step(now, devices) {
            CheckpointStep::WaitUntil(t) => {
                queue.at(t.max(now), Event::Client(i));
                Flow::Wait
            }
            CheckpointStep::WaitCommit(n) => {
                let done = x.journal.as_ref().is_none_or(|j| j.committed_through() >= n);
                self.kick_journal(now);
                if done {
                    return Flow::Next;
                }
                self.waits[i] = Wait::Journal(n);
                c.resume = State::JournalCheckpoint;
                c.state = State::Blocked;
                Flow::Wait
            }
            CheckpointStep::Done => {
                let kind = match &self.db {
                    Some(db) => db.write_kind(c.space),
                    None => WriteKind::Overwrite,
                };
                let Fs::Extent(x) = &mut self.fs else { unreachable!() };
                let noted = x.note_write(c.space, kind, now);
                c.journal_checkpoint = noted.needs_checkpoint;
                c.state = State::WriteDone;
                if let Some(t) = noted.wait_until.filter(|&t| t > now) {
                    self.queue.at(t, Event::Client(i));
                    return Flow::Wait;
                }
                Flow::Next
            }
        }
    }

    /// The journal's thread wakes at its own next due time (a commit timer started by a
    /// write), unless it wakes earlier already.
    fn schedule_journal(&mut self) {
        let Fs::Extent(x) = &self.fs else { return };
        let Some(t) = x.journal.as_ref().and_then(|j| j.due()) else { return };
        wake_background(&mut self.queue, &mut self.journal_wake, t, Event::Journal);
    }

    /// The journal's thread must run now (an fsync asked a commit).
    fn kick_journal(&mut self, now: Nanos) {
        if self.journal_wake.is_none_or(|t| t > now) {
            self.journal_wake = Some(now);
            self.queue.at(now, Event::Journal);
        }
    }

    /// The journal's thread at `now`: its I/O and commits; clients whose commit is done
    /// go on; it sleeps until it next has something to do.
    pub(super) fn journal_event(&mut self, now: Nanos) {
        if !take_wake(&mut self.journal_wake, now) {
            return;
        }
        let Sim { fs: Fs::Extent(x), devices, .. } = self else { return };
        let (wake, through) = x.journal_step(now, devices);
        for j in 0..self.nclients {
            if let Wait::Journal(n) = self.waits[j] {
                if n <= through {
                    self.waits[j] = Wait::None;
                    self.queue.at(now, Event::Client(j));
                }
            }
        }
        if let Some(t) = wake {
            let t = t.max(now.saturating_add(1));
            self.journal_wake = Some(t);
            self.queue.at(t, Event::Journal);
        }
    }

    /// The readahead state of client `i`'s read when it goes through the page cache
    /// (XFS/ext4, not O_DIRECT, the layer has a page cache); None otherwise.
    fn buffered_ra(&mut self, i: usize, c: &Client) -> Option<u32> {
        let Fs::Extent(x) = &mut self.fs else { return None };
        let b = x.page_cache.as_deref_mut().filter(|_| !c.o_direct)?;
        Some(match self.mode {
            Mode::Cat { .. } => b.cat_ra(c.space, c.read_offset == 0),
            Mode::Fio => self.fio.as_ref().map_or(b.db_ra(c.space), |run| run.ra_of(i, c.space)),
            Mode::Workload { .. } => b.db_ra(c.space),
        })
    }

    /// XFS/ext4: the client's buffered write in the page cache, stepped until it waits or
    /// is done; then its metadata change in the journal, and WriteDone.
    fn buffered_write(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Sim { fs: Fs::Extent(x), devices, queue, .. } = self else {
            unreachable!("buffered writes on XFS/ext4 only")
        };
        let step = x.buffered_write(i, now, &mut c.cpu_pending, devices);
        if let ReadStep::WaitUntil(t) = step {
            queue.at(t, Event::Client(i));
        }
        self.schedule_flusher();
        match step {
            // The page cache waits on timers only (`fs::buffered` never blocks in a queue).
            ReadStep::WaitUntil(_) | ReadStep::Blocked => Flow::Wait,
            ReadStep::Done => {
                // Its metadata change (the timestamps; a file's extension) in the journal.
                let kind = match &self.db {
                    Some(db) => db.write_kind(c.space),
                    None => WriteKind::Overwrite,
                };
                let Fs::Extent(x) = &mut self.fs else { unreachable!() };
                let noted = x.note_write(c.space, kind, now);
                c.journal_checkpoint = noted.needs_checkpoint;
                c.state = State::WriteDone;
                self.schedule_journal();
                if let Some(t) = noted.wait_until.filter(|&t| t > now) {
                    self.queue.at(t, Event::Client(i));
                    return Flow::Wait;
                }
                Flow::Next
            }
        }
    }

    /// XFS/ext4: the data part of the client's sync in the page cache; then the journal's.
    fn data_sync(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Sim { fs: Fs::Extent(x), devices, queue, .. } = self else {
            unreachable!("data syncs on XFS/ext4 only")
        };
        match x.data_sync(i, now, &mut c.cpu_pending, devices) {
            ReadStep::WaitUntil(t) => {
                queue.at(t, Event::Client(i));
                Flow::Wait
            }
            // The page cache waits on timers only (`fs::buffered` never blocks in a queue).
            ReadStep::Blocked => Flow::Wait,
            ReadStep::Done => {
                c.state = State::JournalSync;
                Flow::Next
            }
        }
    }

    /// The flusher wakes at its next due time, unless it wakes earlier already.
    pub(super) fn schedule_flusher(&mut self) {
        let Fs::Extent(x) = &self.fs else { return };
        let Some(t) = x.flusher_due() else { return };
        wake_background(&mut self.queue, &mut self.flusher_wake, t, Event::Flusher);
    }

    /// The page cache's flusher at `now`: its writes go to the device; it sleeps until it
    /// next has something to do.
    pub(super) fn flusher_event(&mut self, now: Nanos) {
        if !take_wake(&mut self.flusher_wake, now) {
            return;
        }
        let Sim { fs: Fs::Extent(x), devices, .. } = self else { return };
        if x.flusher_due().is_some_and(|t| t <= now) {
            x.flusher(now, devices);
        }
        self.schedule_flusher();
    }

    /// bcache's writeback thread wakes at its next due time, unless it wakes earlier already.
    pub(super) fn schedule_writeback(&mut self) {
        let Fs::Extent(x) = &self.fs else { return };
        let Some(t) = x.writeback_due() else { return };
        wake_background(&mut self.queue, &mut self.writeback_wake, t, Event::Writeback);
    }

    /// bcache's writeback thread at `now`: its passes, I/O completions and rate updates;
    /// it sleeps until it next has something to do (`Sim::schedule_writeback`).
    pub(super) fn writeback_event(&mut self, now: Nanos) {
        if !take_wake(&mut self.writeback_wake, now) {
            return;
        }
        let Sim { fs: Fs::Extent(x), devices, .. } = self else { return };
        if x.writeback_due().is_some_and(|t| t <= now) {
            x.writeback_step(now, devices);
        }
    }

    /// Whether clients wait for the journal (the run goes on for them).
    pub(super) fn journal_waiting(&self) -> bool {
        self.waits.iter().any(|w| matches!(w, Wait::Journal(_)))
    }
}

/// Wakes background thread `event` at `t`, unless it wakes earlier already (`wake`, the
/// time its pending wake-up is for).
fn wake_background(queue: &mut Schedule, wake: &mut Option<Nanos>, t: Nanos, event: Event) {
    if wake.is_none_or(|w| t < w) {
        *wake = Some(t);
        queue.at(t, event);
    }
}

/// Whether a background thread's wake-up at `now` is the one pending (`wake`, cleared
/// then); a stale one (the thread was rescheduled later since) is not.
fn take_wake(wake: &mut Option<Nanos>, now: Nanos) -> bool {
    if wake.is_some_and(|t| t > now) {
        return false;
    }
    *wake = None;
    true
}

/// Schedules the clients and prefetch reads the ZFS layer released (prefetch chains
/// waiting for reads in flight, and what its vdev queues issued after holding it), and
/// tells the L2ARC feed threads of their writes the queues issued.
pub(super) fn schedule_wakeups(queue: &mut Schedule, z: &mut Zfs, feeds: &mut [phases::FeedThread]) {
    for (t, w) in z.take_wakeups() {
        match w {
            Wake::Client(j) => queue.at(t, Event::Client(j as usize)),
            Wake::Prefetch(k) => queue.at(t, Event::Prefetch(k)),
            Wake::Feed(k) => {
                if let Some(at) = feeds.get_mut(usize::from(k)).and_then(|f| f.write_issued(t)) {
                    queue.at(at, Event::L2arcFeed(k));
                }
            }
        }
    }
}
