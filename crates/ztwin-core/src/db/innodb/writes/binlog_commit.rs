//! A commit with the binary log on (MySQL 5.7): InnoDB's XA prepare, then the binary
//! log's group commit (`db::binlog`) driven step by step for the committing thread:
//! the flush stage's redo log flush as this thread (`log_write_up_to` through the redo
//! log's own group commit), its writes to the binary log file, the sync stage's fsync,
//! the commit stage appending each member's commit mtr in binary log order, rotations
//! (whose new file is created empty in its slot: `FileOp::Create`).
//! The commit record itself is not flushed by its commit (`trx->flush_log_later`): the
//! next group's redo flush or the master thread's does it.
//!
//! Simplification: a member's commit mtr was sized at its prepare (its binary log
//! position then, not the one the group gives it: only the position's size matters).

use super::*;

impl Writes {
    /// `client` commits a transaction with `bytes` of binary log events, its prepare mtr
    /// appended, its commit mtr `commit` kept for the commit stage.
    pub(super) fn binlog_commit(
        &mut self,
        bp: &mut BufferPool,
        client: usize,
        bytes: u64,
        commit: Mtr,
    ) -> LogWait {
        let prepare_lsn = self.redo.lsn();
        let Some(b) = &mut self.binlog else { return LogWait::Done };
        let step = b.commit(client, bytes, prepare_lsn);
        let t = &mut self.trx[client];
        t.pending_commit = Some(commit);
        t.bl_step = Some(step);
        t.bl_next = false;
        self.pump_binlog();
        self.drive_binlog(bp, client)
    }

    /// The binary log's released threads go to the write path's released list.
    fn pump_binlog(&mut self) {
        if let Some(b) = &mut self.binlog {
            self.released.extend(b.take_released());
        }
    }

    /// Runs `client`'s group commit until it must wait or do I/O, or is done.
    pub(super) fn drive_binlog(&mut self, bp: &mut BufferPool, client: usize) -> LogWait {
        loop {
            let Some(b) = &mut self.binlog else { return LogWait::Done };
            let t = &mut self.trx[client];
            let step = if t.bl_next {
                t.bl_next = false;
                let s = b.next(client);
                t.bl_step = Some(s);
                s
            } else {
                match t.bl_step {
                    Some(s) => s,
                    None => return LogWait::Done,
                }
            };
            self.pump_binlog();
            match step {
                BinlogStep::Done => {
                    let t = &mut self.trx[client];
                    t.bl_step = None;
                    return LogWait::Done;
                }
                BinlogStep::Wait => {
                    self.trx[client].bl_next = true;
                    return LogWait::Wait;
                }
                BinlogStep::RedoFlush { flush, .. } => {
                    // log_write_up_to(log_get_lsn()): the LSN read once, kept while the
                    // thread waits for another writer or does its own write.
                    let t = &mut self.trx[client];
                    if t.bl_flush_lsn == 0 {
                        t.bl_flush_lsn = self.redo.lsn();
                    }
                    let lsn = t.bl_flush_lsn;
                    match self.write_up_to(client, lsn, flush) {
                        LogWait::Done => {
                            let t = &mut self.trx[client];
                            (t.bl_next, t.bl_flush_lsn) = (true, 0);
                        }
                        // The redo flush is asked again after the wait or the thread's own write.
                        other => return other,
                    }
                }
                BinlogStep::Write(plan) => {
                    for io in plan.writes() {
                        self.queue_binlog_io(client, io);
                    }
                    self.trx[client].bl_next = true;
                    return LogWait::Io;
                }
                BinlogStep::Delay(ns) => {
                    self.trx[client].bl_next = true;
                    return LogWait::Sleep(ns);
                }
                BinlogStep::Sync(plan) => {
                    self.queue_binlog_io(client, crate::db::binlog::BinlogIo::Sync { file: plan.file });
                    self.trx[client].bl_next = true;
                    return LogWait::Io;
                }
                BinlogStep::Commit(_) => {
                    // ha_commit_low of each member, in binary log order: its commit mtr.
                    let n = self.binlog.as_ref().map_or(0, |b| b.commit_queue().len());
                    for k in 0..n {
                        let Some(b) = &self.binlog else { break };
                        let member = b.commit_queue()[k] as usize;
                        if let Some(m) = self.trx[member].pending_commit.take() {
                            self.apply_mtr(bp, &m);
                        }
                    }
                    self.trx[client].bl_next = true;
                }
                BinlogStep::Rotate(plan) => {
                    for &io in plan.ops() {
                        self.queue_binlog_io(client, io);
                    }
                    self.trx[client].bl_next = true;
                    return LogWait::Io;
                }
            }
        }
    }

    /// A binary log file operation as `actor`'s file operation.
    fn queue_binlog_io(&mut self, actor: usize, io: crate::db::binlog::BinlogIo) {
        use crate::db::binlog::BinlogIo;
        let op = match io {
            BinlogIo::Write { file, offset, len } => FileOp::Write {
                file: self.files.binlog(file),
                offset,
                len: len.min(u64::from(u32::MAX)) as u32,
                o_sync: false,
            },
            BinlogIo::Sync { file } => FileOp::Sync { file: self.files.binlog(file) },
            BinlogIo::Create { file } => FileOp::Create { file: self.files.binlog(file) },
        };
        self.io[actor].push_back(op);
    }
}
