//! MySQL 5.7's binary log under commits: the two-phase commit of InnoDB with the binary
//! log and the three stages of binary log group commit, as a state machine a driver
//! steps through for each committing thread, and the bytes each transaction writes
//! ([`events`]).
//!
//! Mechanism.
//! - Prepare (`ha_commit_trans` → `MYSQL_BIN_LOG::prepare` → `ha_prepare_low` →
//!   `innobase_xa_prepare` → `trx_prepare`): the transaction's undo logs are marked
//!   PREPARED with its XID in one mtr (its redo: `redo_records::commit` with
//!   `Env::binlog`, the first mtr). `MYSQL_BIN_LOG::prepare` first sets the session's
//!   durability to HA_IGNORE_DURABILITY, so `trx_prepare` does not write or flush the
//!   redo log: the flush stage will, for the whole group.
//! - The transaction's events are in its cache (`MYSQL_BIN_LOG::commit` adds the Xid
//!   event, `binlog_cache_data::finalize`); a transaction that changed nothing has none,
//!   is not prepared and commits in InnoDB alone. Then `MYSQL_BIN_LOG::ordered_commit`
//!   runs three stages, each a queue with a leader (`Stage_manager::enroll_for`): a
//!   thread that finds a stage's queue empty leads it and takes the stage's mutex; one that
//!   finds it non-empty is a follower and sleeps until the group it ended in is done
//!   (`Stage_manager::signal_done`). A leader enters the next stage with its whole queue,
//!   releasing the previous stage's mutex once enqueued; finding that stage's queue
//!   non-empty, it becomes a follower there too, and its group joins the one queued.
//!   1. Flush stage (LOCK_log). The leader empties the flush queue first: the group is
//!      the threads queued until then, which mostly arrived while the previous leader held
//!      LOCK_log (`process_flush_stage_queue`). It flushes InnoDB's redo log
//!      (`ha_flush_logs(NULL, true)` → `innobase_flush_logs(binlog_group_flush=true)` →
//!      `log_buffer_flush_to_disk`: `log_write_up_to(log_get_lsn(), sync)`, everything
//!      appended so far, so every member's prepare), written and flushed with
//!      innodb_flush_log_at_trx_commit = 1, only written with 2, nothing with 0. Then each
//!      member's GTID event and cache go to the binary log (`flush_thread_caches`,
//!      `write_gtid`, `write_cache`) and the file's buffer is written out
//!      (`flush_cache_to_file`). If the file has reached max_binlog_size, the leader will
//!      rotate it after its commit stage.
//!   2. Sync stage (LOCK_sync). Only when this group's sync will fsync (the sync counter
//!      plus one reaches sync_binlog; always with sync_binlog = 0), the leader first waits
//!      `binlog_group_commit_sync_delay` microseconds in tenths, stopping early once
//!      `binlog_group_commit_sync_no_delay_count` threads are queued
//!      (`Stage_manager::wait_count_or_timeout`); then it empties the sync queue, which
//!      holds its flush group and any flush groups that queued behind it while it waited
//!      for LOCK_sync, and fsyncs the file once for all of them when its sync counter
//!      reaches sync_binlog (`sync_binlog_file`).
//!   3. Commit stage (LOCK_commit, binlog_order_commits = ON). The leader commits every
//!      member in InnoDB in binary log order (`process_commit_stage_queue` →
//!      `ha_commit_low` → `innobase_commit`): `trx_commit` appends the commit's mtr (with
//!      the member's binary log position for `trx_sys_update_mysql_binlog_offset`) and,
//!      `trx->flush_log_later` being set, only notes `must_flush_log_later`;
//!      `trx_commit_complete_for_mysql` then returns at once because the session asks for
//!      HA_IGNORE_DURABILITY. The commit record is not written or flushed by its commit:
//!      the next flush stage's redo flush, or the master thread's once-a-second flush,
//!      makes it durable (crash recovery commits a prepared transaction whose Xid event is
//!      in the binary log). Then the leader wakes every member (`signal_done`).
//! - The stages overlap across groups: while one group fsyncs, the next can flush (redo
//!   and binary log writes), and a third can queue for the flush stage.
//! - Rotation (`ordered_commit` → `rotate` → `new_file_impl`): after its commit stage the
//!   flush leader that found the file at max_binlog_size takes LOCK_log (no group can
//!   flush meanwhile) and, if the file is still that large, waits until every transaction
//!   written to the binary log is committed in InnoDB (`m_prep_xids` = 0); flushes the
//!   redo log (`ha_flush_logs(NULL)`: written and flushed whatever
//!   innodb_flush_log_at_trx_commit); appends a Rotate event naming the next file; closes
//!   the file (`MYSQL_BIN_LOG::close`): clears LOG_EVENT_BINLOG_IN_USE_F in the
//!   Format_description event with a 1-byte pwrite, fsyncs and closes it; then opens the
//!   next file (`open_binlog` -> `MYSQL_BIN_LOG::open`: `mysql_file_open` with O_CREAT of
//!   the name `generate_new_name` -> `find_uniq_filename` gives, the highest number in use
//!   plus one, so a new, empty file: [`BinlogIo::Create`]) and writes its magic number,
//!   Format_description and Previous_gtids, and an fsync. The old files stay until
//!   purged. A flush leader that became a follower in the sync or commit stage does not
//!   rotate: a later group that finds the file too large does.
//! - The file's writes (`init_io_cache(&log_file, ..., IO_SIZE, WRITE_CACHE)`,
//!   `_my_b_write`, `my_b_flush_io_cache`): events pass through a 4 KiB buffer whose end is
//!   kept on a 4 KiB boundary of the file; a buffer that fills is written, so a group's
//!   bytes reach the file as one write up to each 4 KiB boundary they cross and one for
//!   the rest at the end of the flush stage. The file is buffered (no O_SYNC, no
//!   O_DIRECT, whatever innodb_flush_method says).
//!
//! Driving it, for a thread committing a transaction whose events are `bytes` long
//! ([`TrxBinlog::bytes`]): append the XA prepare mtr to the redo log (no log write), then
//! [`Binlog::commit`] and, until [`BinlogStep::Done`], do what each step says and call
//! [`Binlog::next`]: [`BinlogStep::RedoFlush`]: `log_write_up_to(current LSN, flush)`
//! as this thread (waiting for another writer if one is writing);
//! [`BinlogStep::Write`]: the writes of [`WritePlan::writes`];
//! [`BinlogStep::Delay`]: sleep; [`BinlogStep::Sync`]: fsync the file;
//! [`BinlogStep::Commit`]: for each thread of [`Binlog::commit_queue`], in order, append
//! its commit mtr with its [`Binlog::trans_pos`] (no log write);
//! [`BinlogStep::Rotate`]: [`RotatePlan::ops`]; [`BinlogStep::Wait`]: sleep until
//! [`Binlog::take_released`] names the thread.
//!
//! Sources: mysql-server 5.7.32 (the snapshot read; the index holds no 5.7.29 and no
//! Percona Server 5.7.19: the functions below are not known to differ, but were not
//! compared): `sql/binlog.cc` (`MYSQL_BIN_LOG::prepare`, `commit`, `ordered_commit`,
//! `change_stage`, `process_flush_stage_queue`, `flush_thread_caches`,
//! `flush_cache_to_file`, `sync_binlog_file`, `process_commit_stage_queue`,
//! `finish_commit`, `rotate`, `new_file_impl`, `close`, `open_binlog`, `open`,
//! `Stage_manager::enroll_for`, `Mutex_queue::append`, `fetch_and_empty`,
//! `wait_count_or_timeout`, `signal_done`), `sql/handler.cc` (`ha_flush_logs`),
//! `sql/sys_vars.cc` and `sql/mysqld.cc` (sync_binlog, binlog_group_commit_sync_delay,
//! binlog_group_commit_sync_no_delay_count, max_binlog_size, binlog_order_commits,
//! binlog_cache_size), `mysys/mf_iocache.c` (`init_io_cache`, `_my_b_write`,
//! `my_b_flush_io_cache`), `include/my_global.h` (IO_SIZE), `include/my_sys.h`
//! (`my_b_write`); `storage/innobase/handler/ha_innodb.cc` (`innobase_xa_prepare`,
//! `innobase_commit`, `innobase_flush_logs`), `trx/trx0trx.cc` (`trx_prepare`,
//! `trx_prepare_low`, `trx_commit_in_memory`, `trx_commit_complete_for_mysql`,
//! `trx_flush_log_if_needed_low`), `log/log0log.cc` (`log_buffer_flush_to_disk`).
//!
//! Simplifications:
//! 1. binlog_order_commits = ON (the default): with OFF each thread would commit itself
//!    after the sync stage; not modelled.
//! 2. A mutex is handed to its waiters in the order they asked (the real wake-up order is
//!    the scheduler's); the CPU time of the stages (copying caches, the commits) is the
//!    driver's to charge.
//! 3. The binary log index file (`mysql-bin.index`: the purge index file and the
//!    crash-safe copy written and fsynced at each rotation) and purging
//!    (expire_logs_days, 0 by default) are not modelled; nor is the GTID table saved at
//!    rotation (gtid_mode = OFF saves nothing). The driver keeps a few file slots
//!    (`DbFiles::binlog`): a new file is created empty in the slot of an older one, as if
//!    purge had removed that one (with expire_logs_days = 0 the old files stay on disk,
//!    taking space the twin does not count).
//! 4. A group's writes are split only at 4 KiB boundaries: exact while every piece the
//!    binary log writes at once is under 4 KiB (sysbench's events are), whereas a larger
//!    one goes out as one write of whole 4 KiB units.
//! 5. Flush and sync errors, binlog_error_action, semi-synchronous replication hooks
//!    and the dump threads' end position are not modelled.
//! 6. A thread's transaction fits binlog_cache_size (32 KiB): no temporary file.

pub mod events;

use std::collections::VecDeque;

use crate::sim::time::{Nanos, US};
pub use events::{BinlogFormat, RowImage, TrxBinlog};

/// IO_SIZE (`include/my_global.h`): the binary log's IO_CACHE buffer
/// (`MYSQL_BIN_LOG::open`: `init_io_cache(&log_file, file, IO_SIZE, ...)`), its writes
/// kept on 4 KiB boundaries of the file.
pub const IO_SIZE: u64 = 4096;
/// The minimal length of a file's number (`generate_new_name`: ".%06lu").
const EXT_DIGITS: u64 = 6;

/// The binary log's options, named as MySQL's, with 5.7's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinlogParams {
    /// sync_binlog: 1 in 5.7 (`sql/sys_vars.cc` Sys_sync_binlog_period): fsync every Nth
    /// group; 0: never.
    pub sync_binlog: u32,
    /// binlog_group_commit_sync_delay: 0 microseconds (`sql/mysqld.cc`
    /// opt_binlog_group_commit_sync_delay, `sys_vars.cc`; at most 1000000).
    pub sync_delay_us: u64,
    /// binlog_group_commit_sync_no_delay_count: 0 (`sql/mysqld.cc`
    /// opt_binlog_group_commit_sync_no_delay_count): 0 waits the whole delay.
    pub sync_no_delay_count: u64,
    /// max_binlog_size: 1 GiB (`sys_vars.cc` Sys_max_binlog_size).
    pub max_binlog_size: u64,
    /// innodb_flush_log_at_trx_commit: 1 (`ha_innodb.cc`): what the flush stage asks of
    /// the redo log (`innobase_flush_logs`).
    pub flush_log_at_trx_commit: u8,
    /// The number of the file written first (`mysql-bin.000001` after a fresh start; a
    /// restart opens the next).
    pub first_file: u32,
    /// Length of the files' base name, before ".NNNNNN": `log_bin`'s value; the
    /// default, the host name followed by "-bin", varies, so "mysql-bin" (9) is ASSUMED.
    pub basename_len: u64,
    /// The events' format (their sizes, the file header).
    pub format: BinlogFormat,
}

impl Default for BinlogParams {
    fn default() -> Self {
        BinlogParams {
            sync_binlog: 1,
            sync_delay_us: 0,
            sync_no_delay_count: 0,
            max_binlog_size: 1 << 30,
            flush_log_at_trx_commit: 1,
            first_file: 1,
            basename_len: 9,
            format: BinlogFormat::default(),
        }
    }
}

/// One operation on a binary log file. `file` is the file's number (1 for
/// `mysql-bin.000001`); the driver maps it to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinlogIo {
    /// A buffered write (`my_write`/`pwrite`) of `len` bytes at `offset`.
    Write {
        /// The file's number.
        file: u32,
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u64,
    },
    /// fsync(2) of the file (`mysql_file_sync`).
    Sync {
        /// The file's number.
        file: u32,
    },
    /// open(2) with O_CREAT of the file, a new name (`MYSQL_BIN_LOG::open`): a new,
    /// empty file.
    Create {
        /// The file's number.
        file: u32,
    },
}

/// The flush stage's writes of a group: `len` bytes appended at `offset` of `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WritePlan {
    /// The file's number.
    pub file: u32,
    /// Where the group's first event starts.
    pub offset: u64,
    /// The group's bytes (GTID events and caches).
    pub len: u64,
    /// Transactions in the group.
    pub members: usize,
}

impl WritePlan {
    /// The write calls, in order: split at each 4 KiB boundary of the file.
    pub fn writes(&self) -> Pieces {
        Pieces { file: self.file, at: self.offset, end: self.offset + self.len }
    }
}

/// The writes of bytes appended through the IO_CACHE (see [`WritePlan::writes`]).
#[derive(Debug, Clone)]
pub struct Pieces {
    file: u32,
    at: u64,
    end: u64,
}

impl Iterator for Pieces {
    type Item = BinlogIo;

    fn next(&mut self) -> Option<BinlogIo> {
        if self.at >= self.end {
            return None;
        }
        let boundary = (self.at / IO_SIZE + 1) * IO_SIZE;
        let to = boundary.min(self.end);
        let w = BinlogIo::Write { file: self.file, offset: self.at, len: to - self.at };
        self.at = to;
        Some(w)
    }
}

/// The sync stage's fsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncPlan {
    /// The file to fsync.
    pub file: u32,
    /// Transactions the fsync makes durable (the sync queue).
    pub members: usize,
}

/// The commit stage: commit [`Binlog::commit_queue`]'s threads in InnoDB, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitPlan {
    /// Transactions to commit.
    pub members: usize,
}

/// A rotation's file operations, in order: the Rotate event appended to the old file,
/// the 1-byte pwrite clearing its in-use flag, its fsync, the new file's creation, its
/// header, its fsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotatePlan {
    ops: [BinlogIo; 7],
    n: usize,
    /// The new file's number.
    pub new_file: u32,
}

impl RotatePlan {
    /// The operations, in order.
    pub fn ops(&self) -> &[BinlogIo] {
        &self.ops[..self.n]
    }
}

/// What a committing thread does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinlogStep {
    /// Sleep until [`Binlog::take_released`] names the thread, then [`Binlog::next`].
    Wait,
    /// Write the redo log up to its current LSN, and flush it with `flush`
    /// (`log_write_up_to(log_get_lsn(), flush)`); then [`Binlog::next`].
    RedoFlush {
        /// Flush (fsync, or nothing more with O_DSYNC) after the write.
        flush: bool,
        /// The largest prepare LSN of the group, which the current LSN covers (0 for a
        /// rotation's flush).
        covers: u64,
    },
    /// The flush stage's binary log writes; then [`Binlog::next`].
    Write(WritePlan),
    /// binlog_group_commit_sync_delay: sleep this long; then [`Binlog::next`].
    Delay(Nanos),
    /// The sync stage's fsync; then [`Binlog::next`].
    Sync(SyncPlan),
    /// The commit stage's InnoDB commits; then [`Binlog::next`].
    Commit(CommitPlan),
    /// A rotation's file operations; then [`Binlog::next`].
    Rotate(RotatePlan),
    /// The commit is complete: the statement returns.
    Done,
}

/// Counters of the binary log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinlogStats {
    /// Transactions written to the binary log (Binlog_cache_use).
    pub commits: u64,
    /// Flush stages (groups written).
    pub flush_groups: u64,
    /// Commit stages.
    pub commit_groups: u64,
    /// Redo log flushes the flush stages and rotations asked for.
    pub redo_flushes: u64,
    /// Bytes written to binary log files (new files' headers and Rotate events included).
    pub bytes_written: u64,
    /// Write calls.
    pub writes: u64,
    /// fsyncs of binary log files (rotations' included).
    pub fsyncs: u64,
    /// Files rotated.
    pub rotations: u64,
}

/// What a committing thread's time goes to in the group commit (the driver's `waits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupWait {
    /// Not in the group commit: no transaction in it, or its group is done (a released
    /// follower, woken at once).
    None,
    /// It leads its group's flush stage and flushes the redo log (`FlushRedo`: its own
    /// write and flush, or its wait for another writer's), or flushes it for a rotation.
    Redo,
    /// It writes the group's events, delays or fsyncs the sync stage's group, commits the
    /// commit stage's group (no simulated time), or does a rotation's file operations.
    Binlog,
    /// It leads a stage's queue and waits for the stage's mutex (LOCK_log, LOCK_sync,
    /// LOCK_commit) that another group holds, or, to rotate, for LOCK_log or for the
    /// written transactions' commits.
    Queue,
    /// A follower (`Stage_manager::enroll_for`'s wait on COND_done): it waits for this
    /// thread, the leader of the queue or group it is in.
    Follower(u32),
}

/// Where a committing thread is (`ordered_commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Not committing.
    Idle,
    /// In a queue as a follower: sleeps until its group is done.
    Pending,
    /// Its group is done: the next step is Done.
    Released,
    /// Leads the flush queue, waits for LOCK_log.
    WaitLog,
    /// Holds LOCK_log, flushing the redo log.
    FlushRedo,
    /// Holds LOCK_log, writing the group's events.
    Writing,
    /// Leads the sync queue, waits for LOCK_sync.
    WaitSync,
    /// Holds LOCK_sync, in `wait_count_or_timeout` with this many microseconds left.
    Delaying { left_us: i64 },
    /// Holds LOCK_sync, fsyncing.
    Syncing,
    /// Leads the commit queue, waits for LOCK_commit.
    WaitCommit,
    /// Holds LOCK_commit, committing the group in InnoDB.
    Committing,
    /// After its commit, waits for LOCK_log to rotate.
    RotateWaitLog,
    /// Holds LOCK_log, waits for every written transaction to be committed.
    RotateWaitXids,
    /// Holds LOCK_log, flushing the redo log before rotating.
    RotateRedo,
    /// Holds LOCK_log, rotating.
    Rotating,
}

/// A thread's commit.
#[derive(Debug, Clone, Copy)]
struct Client {
    st: St,
    /// Its transaction's bytes.
    bytes: u64,
    /// The LSN of its XA prepare.
    prepare_lsn: u64,
    /// As a flush leader: its group's bytes (`total_bytes`).
    group_bytes: u64,
    /// As a flush leader: the file reached max_binlog_size (`do_rotate`).
    rotate: bool,
    /// Where its events end (`thd->set_trans_pos`): file and offset.
    pos: (u32, u64),
}

/// A stage's mutex: its holder and the threads waiting for it.
#[derive(Debug, Clone, Default)]
struct Lock {
    holder: Option<u32>,
    waiters: VecDeque<u32>,
}

impl Lock {
    /// `c` asks for it: true if it got it.
    fn acquire(&mut self, c: u32) -> bool {
        if self.holder.is_none() {
            self.holder = Some(c);
            true
        } else {
            self.waiters.push_back(c);
            false
        }
    }

    /// The holder releases it: the first waiter, if any, holds it now.
    fn release(&mut self) -> Option<u32> {
        self.holder = self.waiters.pop_front();
        self.holder
    }
}

/// The binary log and its group commit (`MYSQL_BIN_LOG`, `Stage_manager`).
#[derive(Debug, Clone)]
pub struct Binlog {
    p: BinlogParams,
    clients: Vec<Client>,
    /// The current file and the end of what is written to it (`my_b_tell(&log_file)`).
    file: u32,
    pos: u64,
    /// The stage queues (`Stage_manager::m_queue`).
    flush_q: Vec<u32>,
    sync_q: Vec<u32>,
    commit_q: Vec<u32>,
    /// The groups fetched by the holders of LOCK_log, LOCK_sync and LOCK_commit.
    flush_group: Vec<u32>,
    sync_group: Vec<u32>,
    commit_group: Vec<u32>,
    log_lock: Lock,
    sync_lock: Lock,
    commit_lock: Lock,
    /// `sync_counter`.
    sync_counter: u32,
    /// Transactions written but not yet committed in InnoDB (`m_prep_xids`).
    prep_xids: u64,
    /// A rotation waiting for `prep_xids` to reach 0.
    rotate_waiter: Option<u32>,
    /// The end of what the last completed fsync made durable: file and offset.
    durable: (u32, u64),
    released: Vec<u32>,
    stats: BinlogStats,
}

impl Binlog {
    /// The binary log of a server with `clients` threads, its current file just opened
    /// (its header written at startup).
    pub fn new(p: BinlogParams, clients: usize) -> Binlog {
        let idle =
            Client { st: St::Idle, bytes: 0, prepare_lsn: 0, group_bytes: 0, rotate: false, pos: (0, 0) };
        let header = p.format.file_header();
        Binlog {
            p,
            clients: vec![idle; clients],
            file: p.first_file,
            pos: header,
            flush_q: Vec::new(),
            sync_q: Vec::new(),
            commit_q: Vec::new(),
            flush_group: Vec::new(),
            sync_group: Vec::new(),
            commit_group: Vec::new(),
            log_lock: Lock::default(),
            sync_lock: Lock::default(),
            commit_lock: Lock::default(),
            sync_counter: 0,
            prep_xids: 0,
            rotate_waiter: None,
            durable: (p.first_file, header),
            released: Vec::new(),
            stats: BinlogStats::default(),
        }
    }

    /// The options.
    pub fn params(&self) -> &BinlogParams {
        &self.p
    }

    /// The counters.
    pub fn stats(&self) -> BinlogStats {
        self.stats
    }

    /// The current file and the end of what is written to it.
    pub fn position(&self) -> (u32, u64) {
        (self.file, self.pos)
    }

    /// Where the events of `client`'s last transaction end (the position InnoDB's commit
    /// records in TRX_SYS: `thd_binlog_pos`).
    pub fn trans_pos(&self, client: usize) -> (u32, u64) {
        self.clients[client].pos
    }

    /// The threads the current commit stage commits, in binary log order.
    pub fn commit_queue(&self) -> &[u32] {
        &self.commit_group
    }

    /// The threads of the group the current flush stage writes, in order.
    pub fn flush_queue(&self) -> &[u32] {
        &self.flush_group
    }

    /// What `client`'s time goes to in the group commit now ([`GroupWait`]).
    pub fn group_wait(&self, client: usize) -> GroupWait {
        let Some(cl) = self.clients.get(client) else { return GroupWait::None };
        match cl.st {
            St::Idle | St::Released => GroupWait::None,
            St::FlushRedo | St::RotateRedo => GroupWait::Redo,
            St::Writing | St::Delaying { .. } | St::Syncing | St::Committing | St::Rotating => {
                GroupWait::Binlog
            }
            St::WaitLog | St::WaitSync | St::WaitCommit | St::RotateWaitLog | St::RotateWaitXids => {
                GroupWait::Queue
            }
            St::Pending => {
                let c = client as u32;
                let queues = [
                    &self.flush_q,
                    &self.flush_group,
                    &self.sync_q,
                    &self.sync_group,
                    &self.commit_q,
                    &self.commit_group,
                ];
                // Each queue and group's first thread leads it (the one that found it empty).
                match queues.into_iter().find(|q| q.contains(&c)) {
                    Some(q) => GroupWait::Follower(q[0]),
                    None => GroupWait::None,
                }
            }
        }
    }

    /// The threads that wait for `leader` (a thread whose [`Binlog::group_wait`] is not
    /// a follower's): the queue it leads or the group it holds a stage's mutex for, itself
    /// first; empty when it leads none.
    pub fn group_of(&self, leader: usize) -> &[u32] {
        let Some(cl) = self.clients.get(leader) else { return &[] };
        let q = match cl.st {
            St::WaitLog => &self.flush_q,
            St::FlushRedo | St::Writing => &self.flush_group,
            St::WaitSync | St::Delaying { .. } => &self.sync_q,
            St::Syncing => &self.sync_group,
            St::WaitCommit => &self.commit_q,
            St::Committing => &self.commit_group,
            _ => return &[],
        };
        debug_assert_eq!(q.first(), Some(&(leader as u32)), "a queue's leader is its first thread");
        q
    }

    /// Threads released since the last call: followers whose group is done, leaders
    /// handed the mutex they waited for, a rotation whose transactions are committed.
    pub fn take_released(&mut self) -> std::vec::Drain<'_, u32> {
        self.released.drain(..)
    }

    /// `client` commits a transaction of `bytes` of events ([`TrxBinlog::bytes`]) whose
    /// XA prepare ended at `prepare_lsn`: it enters the flush stage (`ordered_commit`).
    /// A transaction with no events does not enter the binary log: Done.
    pub fn commit(&mut self, client: usize, bytes: u64, prepare_lsn: u64) -> BinlogStep {
        if bytes == 0 {
            return BinlogStep::Done;
        }
        let c = client as u32;
        let cl = &mut self.clients[client];
        debug_assert_eq!(cl.st, St::Idle, "a thread commits one transaction at a time");
        *cl = Client { st: St::Pending, bytes, prepare_lsn, group_bytes: 0, rotate: false, pos: cl.pos };
        let leader = self.flush_q.is_empty();
        self.flush_q.push(c);
        if !leader {
            return BinlogStep::Wait;
        }
        if self.log_lock.acquire(c) {
            self.start_flush(c)
        } else {
            self.clients[client].st = St::WaitLog;
            BinlogStep::Wait
        }
    }

    /// `client` did what its last step asked, or was released after a Wait: its next step.
    pub fn next(&mut self, client: usize) -> BinlogStep {
        let c = client as u32;
        match self.clients[client].st {
            St::Idle => BinlogStep::Done,
            St::Pending => BinlogStep::Wait,
            St::Released => {
                self.clients[client].st = St::Idle;
                BinlogStep::Done
            }
            St::WaitLog if self.log_lock.holder == Some(c) => self.start_flush(c),
            St::WaitSync if self.sync_lock.holder == Some(c) => self.start_sync(c),
            St::WaitCommit if self.commit_lock.holder == Some(c) => self.start_commit(c),
            St::RotateWaitLog if self.log_lock.holder == Some(c) => self.start_rotate(c),
            St::RotateWaitXids if self.prep_xids == 0 => self.rotate_redo(c),
            St::WaitLog | St::WaitSync | St::WaitCommit | St::RotateWaitLog | St::RotateWaitXids => {
                BinlogStep::Wait
            }
            St::FlushRedo => self.write_group(c),
            St::Writing => self.enter_sync(c),
            St::Delaying { .. } => self.delay_or_fetch(c),
            St::Syncing => {
                let end = self.sync_group.iter().map(|&m| self.clients[m as usize].pos).max();
                if let Some(end) = end {
                    self.durable = self.durable.max(end);
                }
                self.enter_commit(c)
            }
            St::Committing => self.finish_group(c),
            St::RotateRedo => self.rotate_io(c),
            St::Rotating => self.rotated(c),
        }
    }

    /// The flush leader holds LOCK_log: it empties the flush queue, then flushes the redo
    /// log (`process_flush_stage_queue`).
    fn start_flush(&mut self, c: u32) -> BinlogStep {
        debug_assert!(self.flush_group.is_empty());
        std::mem::swap(&mut self.flush_group, &mut self.flush_q);
        self.clients[c as usize].st = St::FlushRedo;
        self.stats.flush_groups += 1;
        match self.p.flush_log_at_trx_commit {
            0 => self.write_group(c),
            f => {
                self.stats.redo_flushes += 1;
                let covers = self.flush_group.iter().map(|&m| self.clients[m as usize].prepare_lsn).max();
                BinlogStep::RedoFlush { flush: f == 1, covers: covers.unwrap_or(0) }
            }
        }
    }

    /// The group's redo is flushed: its events are written (`flush_thread_caches`,
    /// `flush_cache_to_file`).
    fn write_group(&mut self, c: u32) -> BinlogStep {
        let offset = self.pos;
        for &m in &self.flush_group {
            let cl = &mut self.clients[m as usize];
            self.pos += cl.bytes;
            cl.pos = (self.file, self.pos);
        }
        let n = self.flush_group.len();
        self.prep_xids += n as u64;
        self.stats.commits += n as u64;
        let plan = WritePlan { file: self.file, offset, len: self.pos - offset, members: n };
        self.count_writes(plan.writes());
        let leader = &mut self.clients[c as usize];
        leader.group_bytes = plan.len;
        leader.rotate = plan.len > 0 && self.pos >= self.p.max_binlog_size;
        leader.st = St::Writing;
        BinlogStep::Write(plan)
    }

    fn count_writes(&mut self, ops: impl Iterator<Item = BinlogIo>) {
        for op in ops {
            match op {
                BinlogIo::Write { len, .. } => {
                    self.stats.writes += 1;
                    self.stats.bytes_written += len;
                }
                BinlogIo::Sync { .. } => self.stats.fsyncs += 1,
                BinlogIo::Create { .. } => {}
            }
        }
    }

    /// The flush leader's writes are done: its group enters the sync stage and LOCK_log
    /// is released (`change_stage(SYNC_STAGE, ..., &LOCK_log, &LOCK_sync)`).
    fn enter_sync(&mut self, c: u32) -> BinlogStep {
        let leader = self.sync_q.is_empty();
        self.sync_q.append(&mut self.flush_group);
        if let Some(w) = self.log_lock.release() {
            self.released.push(w);
        }
        if !leader {
            self.clients[c as usize].st = St::Pending;
            return BinlogStep::Wait;
        }
        if self.sync_lock.acquire(c) {
            self.start_sync(c)
        } else {
            self.clients[c as usize].st = St::WaitSync;
            BinlogStep::Wait
        }
    }

    /// The sync leader holds LOCK_sync: the delay, if this group will fsync.
    fn start_sync(&mut self, c: u32) -> BinlogStep {
        let will_sync = self.sync_counter.saturating_add(1) >= self.p.sync_binlog;
        let left_us = if will_sync { self.p.sync_delay_us as i64 } else { 0 };
        self.clients[c as usize].st = St::Delaying { left_us };
        self.delay_or_fetch(c)
    }

    /// One round of `wait_count_or_timeout`, or the end of the wait: the sync queue is
    /// emptied and fsynced when the counter says so (`sync_binlog_file`).
    fn delay_or_fetch(&mut self, c: u32) -> BinlogStep {
        let St::Delaying { left_us } = self.clients[c as usize].st else { unreachable!() };
        let count = self.p.sync_no_delay_count;
        if left_us > 0 && (count == 0 || (self.sync_q.len() as u64) < count) {
            // The step is a tenth of the whole delay, at least 1 microsecond.
            let delta = (self.p.sync_delay_us / 10).max(1);
            self.clients[c as usize].st = St::Delaying { left_us: left_us - delta as i64 };
            return BinlogStep::Delay(delta * US);
        }
        debug_assert!(self.sync_group.is_empty());
        std::mem::swap(&mut self.sync_group, &mut self.sync_q);
        if self.clients[c as usize].group_bytes > 0 && self.p.sync_binlog > 0 {
            self.sync_counter += 1;
            if self.sync_counter >= self.p.sync_binlog {
                self.sync_counter = 0;
                self.stats.fsyncs += 1;
                self.clients[c as usize].st = St::Syncing;
                return BinlogStep::Sync(SyncPlan { file: self.file, members: self.sync_group.len() });
            }
        }
        self.enter_commit(c)
    }

    /// The sync leader enters the commit stage with the sync queue, releasing LOCK_sync.
    fn enter_commit(&mut self, c: u32) -> BinlogStep {
        let leader = self.commit_q.is_empty();
        self.commit_q.append(&mut self.sync_group);
        if let Some(w) = self.sync_lock.release() {
            self.released.push(w);
        }
        if !leader {
            self.clients[c as usize].st = St::Pending;
            return BinlogStep::Wait;
        }
        if self.commit_lock.acquire(c) {
            self.start_commit(c)
        } else {
            self.clients[c as usize].st = St::WaitCommit;
            BinlogStep::Wait
        }
    }

    /// The commit leader holds LOCK_commit: it empties the commit queue and commits it.
    fn start_commit(&mut self, c: u32) -> BinlogStep {
        debug_assert!(self.commit_group.is_empty());
        std::mem::swap(&mut self.commit_group, &mut self.commit_q);
        self.stats.commit_groups += 1;
        self.clients[c as usize].st = St::Committing;
        BinlogStep::Commit(CommitPlan { members: self.commit_group.len() })
    }

    /// The group is committed in InnoDB: LOCK_commit is released, every member woken
    /// (`signal_done`); the leader rotates if its flush stage asked for it.
    fn finish_group(&mut self, c: u32) -> BinlogStep {
        self.prep_xids -= self.commit_group.len() as u64;
        if self.prep_xids == 0 {
            if let Some(r) = self.rotate_waiter.take() {
                self.released.push(r);
            }
        }
        if let Some(w) = self.commit_lock.release() {
            self.released.push(w);
        }
        // The group is emptied in place: its capacity is the commit queue's next time.
        for k in 0..self.commit_group.len() {
            let m = self.commit_group[k];
            if m != c {
                debug_assert_eq!(self.clients[m as usize].st, St::Pending);
                self.clients[m as usize].st = St::Released;
                self.released.push(m);
            }
        }
        self.commit_group.clear();
        if !self.clients[c as usize].rotate {
            self.clients[c as usize].st = St::Idle;
            return BinlogStep::Done;
        }
        if self.log_lock.acquire(c) {
            self.start_rotate(c)
        } else {
            self.clients[c as usize].st = St::RotateWaitLog;
            BinlogStep::Wait
        }
    }

    /// The rotating thread holds LOCK_log (`rotate`): if the file is still too large, it
    /// waits for the written transactions' commits (`new_file_impl`).
    fn start_rotate(&mut self, c: u32) -> BinlogStep {
        if self.pos < self.p.max_binlog_size {
            if let Some(w) = self.log_lock.release() {
                self.released.push(w);
            }
            self.clients[c as usize].st = St::Idle;
            return BinlogStep::Done;
        }
        if self.prep_xids > 0 {
            self.clients[c as usize].st = St::RotateWaitXids;
            self.rotate_waiter = Some(c);
            return BinlogStep::Wait;
        }
        self.rotate_redo(c)
    }

    /// `ha_flush_logs(NULL)`: the redo log written and flushed.
    fn rotate_redo(&mut self, c: u32) -> BinlogStep {
        self.clients[c as usize].st = St::RotateRedo;
        self.stats.redo_flushes += 1;
        BinlogStep::RedoFlush { flush: true, covers: 0 }
    }

    /// The Rotate event, the old file's close, the new file's header.
    fn rotate_io(&mut self, c: u32) -> BinlogStep {
        let f = self.p.format;
        let new_file = self.file + 1;
        let name_len = self.p.basename_len + 1 + events::digits(u64::from(new_file)).max(EXT_DIGITS);
        let rotate_len = f.rotate(name_len);
        let mut plan = RotatePlan { ops: [BinlogIo::Sync { file: 0 }; 7], n: 0, new_file };
        let mut push = |op| {
            plan.ops[plan.n] = op;
            plan.n += 1;
        };
        for w in (Pieces { file: self.file, at: self.pos, end: self.pos + rotate_len }) {
            push(w);
        }
        push(BinlogIo::Write { file: self.file, offset: events::MAGIC + events::FLAGS_OFFSET, len: 1 });
        push(BinlogIo::Sync { file: self.file });
        push(BinlogIo::Create { file: new_file });
        push(BinlogIo::Write { file: new_file, offset: 0, len: f.file_header() });
        push(BinlogIo::Sync { file: new_file });
        self.count_writes(plan.ops().iter().copied());
        self.pos += rotate_len;
        self.clients[c as usize].st = St::Rotating;
        BinlogStep::Rotate(plan)
    }

    /// The new file is open: LOCK_log is released.
    fn rotated(&mut self, c: u32) -> BinlogStep {
        self.file += 1;
        self.pos = self.p.format.file_header();
        self.durable = (self.file, self.pos);
        self.stats.rotations += 1;
        if let Some(w) = self.log_lock.release() {
            self.released.push(w);
        }
        self.clients[c as usize].st = St::Idle;
        BinlogStep::Done
    }

    /// The server restarted: a new file is opened, no thread is committing.
    pub fn restart(&mut self) {
        let p = self.p;
        let stats = self.stats;
        let file = self.file + 1;
        *self = Binlog::new(BinlogParams { first_file: file, ..p }, self.clients.len());
        self.stats = stats;
    }

    /// The run abandons what never completes: queues, mutexes and waiters are dropped.
    pub fn abandon(&mut self) {
        let (file, pos, stats) = (self.file, self.pos, self.stats);
        *self = Binlog::new(self.p, self.clients.len());
        (self.file, self.pos, self.stats) = (file, pos, stats);
        self.durable = (file, pos);
    }
}

#[cfg(test)]
mod tests;
