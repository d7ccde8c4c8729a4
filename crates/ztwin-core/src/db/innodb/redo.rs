//! InnoDB's redo log (MySQL 5.7): log records framed in 512-byte blocks, and the writes
//! and flushes of the log files that commits wait for, with the group commit that one
//! writer gives every commit whose records its write covers.
//!
//! Mechanism.
//! - Appending (`log_write_low`): records go into 512-byte blocks of 496 bytes of payload
//!   (a 12-byte header and a 4-byte trailer); the LSN counts every byte of the blocks, so
//!   a full block advances it by 512. The first block starts at LOG_START_LSN (8192) plus
//!   its header.
//! - Writing (`log_write_up_to(lsn, flush)`): a commit returns at once if the log is
//!   already written (flushed) that far. Otherwise, if a write holds the write mutex, or a
//!   flush is pending and it wants a flush, it waits, and on waking returns if the pending
//!   flush covered it, else tries again. If not, it becomes the writer: it writes every
//!   record appended so far, from the block holding the write position to the end of the
//!   block holding the current LSN (whole blocks: the last, partial block is written again
//!   by the next write), padded with zeros so the write ends on an
//!   `innodb_log_write_ahead_size` boundary of the file when it is longer than the part of
//!   that unit it already covers; then, unless the files were opened with O_DSYNC
//!   (`innodb_flush_method = O_DSYNC`), it fsyncs them (`fil_flush`). Every commit that
//!   waited for that write or flush and whose LSN it covers returns with it.
//! - Where a write goes (`log_group_calc_lsn_offset`, `log_group_write_buf`): the files of
//!   the group are a ring of `(innodb_log_file_size - 2048) * innodb_log_files_in_group`
//!   bytes after each file's 2 KiB header; a write that reaches a file's end continues at
//!   the next file's first data block, after writing that file's header block
//!   (`log_group_file_header_flush`, 512 bytes).
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/log/log0log.cc` (`log_write_low`,
//! `log_write_up_to`, `log_write_flush_to_disk_low`, `log_group_write_buf`,
//! `log_group_calc_lsn_offset`, `log_group_calc_real_offset`), `include/log0log.h`
//! (block and header sizes, LOG_START_LSN), `handler/ha_innodb.cc`
//! (innodb_log_write_ahead_size: 8192, at most innodb_page_size).
//!
//! Simplifications:
//! 1. The log buffer never fills (innodb_log_buffer_size is large enough for what is
//!    appended between two writes); its double buffer is not modelled.
//! 2. Checkpoints are not written here (the page cleaner's ages are in
//!    `super::page_cleaner`); the ring wraps without checking the checkpoint.
//! 3. The write-ahead padding is not capped by the log buffer's end.
//! 4. MariaDB's redo log (10.5+: one file, no block framing from 10.8) is not modelled.

/// OS_FILE_LOG_BLOCK_SIZE.
pub const BLOCK: u64 = 512;
/// LOG_BLOCK_HDR_SIZE and LOG_BLOCK_TRL_SIZE.
const HDR: u64 = 12;
const TRL: u64 = 4;
/// LOG_START_LSN: 16 blocks.
pub const LOG_START_LSN: u64 = 16 * BLOCK;
/// LOG_FILE_HDR_SIZE: each file's header, 4 blocks.
const FILE_HDR: u64 = 4 * BLOCK;

/// The redo log's options, named as MySQL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedoParams {
    /// innodb_log_file_size: 48 MiB.
    pub file_size: u64,
    /// innodb_log_files_in_group: 2.
    pub files: u64,
    /// innodb_log_write_ahead_size: 8192 (at most innodb_page_size).
    pub write_ahead_size: u64,
    /// innodb_flush_method = O_DSYNC: the files are opened O_SYNC, so a write is
    /// durable when it returns and no fsync follows.
    pub o_dsync: bool,
}

impl Default for RedoParams {
    fn default() -> Self {
        RedoParams { file_size: 48 << 20, files: 2, write_ahead_size: 8192, o_dsync: false }
    }
}

/// One write to a log file: `len` bytes at `offset` of file `file` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileWrite {
    /// ib_logfileN.
    pub file: u32,
    /// Offset in the file.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// The I/O a writer issues: up to three file writes (a header block, and the data split
/// where it crosses a file's end), then an fsync of the log files if `fsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogWrite {
    /// The writes, in order; the first `n` are valid.
    pub writes: [FileWrite; 3],
    /// Valid writes.
    pub n: usize,
    /// An fsync of the log files follows the writes.
    pub fsync: bool,
}

/// What `log_write_up_to` tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStep {
    /// The log is written (flushed) that far already.
    Done,
    /// Another thread's write or flush is in progress: wait for it, then ask again.
    Wait,
    /// This caller is the writer: issue this I/O, then call [`RedoLog::write_done`] (and,
    /// with an fsync, [`RedoLog::flush_done`] after it).
    Write(LogWrite),
}

/// SHOW GLOBAL STATUS counters of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedoStats {
    /// Innodb_log_write_requests: records appended.
    pub log_write_requests: u64,
    /// Innodb_log_writes: file writes (header blocks included).
    pub log_writes: u64,
    /// Innodb_os_log_written: bytes written to the log files.
    pub os_log_written: u64,
    /// Innodb_os_log_fsyncs: fsyncs of the log files.
    pub os_log_fsyncs: u64,
    /// Zero bytes of write-ahead padding (srv_stats.log_padded).
    pub log_padded: u64,
}

/// The log's state (`log_sys`).
#[derive(Debug, Clone)]
pub struct RedoLog {
    p: RedoParams,
    /// log_sys->lsn: the end of what is appended.
    lsn: u64,
    /// log_sys->write_lsn.
    write_lsn: u64,
    /// log_sys->flushed_to_disk_lsn.
    flushed_lsn: u64,
    /// The write in progress (log_write_mutex held) and the LSN it writes up to.
    writing: Option<u64>,
    /// A flush pending (n_pending_flushes > 0) and its current_flush_lsn.
    flushing: Option<u64>,
    stats: RedoStats,
}

impl RedoLog {
    /// A fresh log (`log_sys_init`, `log_group_init`): LSN at the first block's payload.
    pub fn new(p: RedoParams) -> RedoLog {
        let start = LOG_START_LSN + HDR;
        RedoLog {
            p,
            lsn: start,
            write_lsn: start,
            flushed_lsn: start,
            writing: None,
            flushing: None,
            stats: RedoStats::default(),
        }
    }

    /// The current LSN (`log_get_lsn`).
    pub fn lsn(&self) -> u64 {
        self.lsn
    }

    /// log_sys->flushed_to_disk_lsn.
    pub fn flushed_lsn(&self) -> u64 {
        self.flushed_lsn
    }

    /// The counters.
    pub fn stats(&self) -> RedoStats {
        self.stats
    }

    /// `log_write_low`: appends `bytes` of records (one mtr's), returns the LSN at their end.
    pub fn append(&mut self, mut bytes: u64) -> u64 {
        while bytes > 0 {
            let room = BLOCK - TRL - self.lsn % BLOCK;
            let take = bytes.min(room);
            self.lsn += take;
            bytes -= take;
            if self.lsn % BLOCK == BLOCK - TRL {
                // The block is full: its trailer and the next block's header.
                self.lsn += TRL + HDR;
            }
        }
        self.stats.log_write_requests += 1;
        self.lsn
    }

    /// Offset in the group's files (headers included) of `lsn`
    /// (`log_group_calc_lsn_offset` with the group starting at LOG_START_LSN).
    fn real_offset(&self, lsn: u64) -> u64 {
        let body = self.p.file_size - FILE_HDR;
        let size = (lsn - LOG_START_LSN) % (body * self.p.files);
        size + FILE_HDR * (1 + size / body)
    }

    /// `log_write_up_to(lsn, flush)`: see the module docs.
    pub fn write_up_to(&mut self, lsn: u64, flush: bool) -> LogStep {
        let limit = if flush { self.flushed_lsn } else { self.write_lsn };
        if limit >= lsn {
            return LogStep::Done;
        }
        if self.writing.is_some() || (flush && self.flushing.is_some()) {
            return LogStep::Wait;
        }
        if flush {
            self.flushing = Some(self.lsn);
        }
        let mut w = LogWrite { fsync: flush && !self.p.o_dsync, ..LogWrite::default() };
        if self.write_lsn == self.lsn {
            // Written already, not yet flushed: only the fsync.
            if !flush {
                return LogStep::Done;
            }
            // The write mutex is not held during the fsync.
            w.fsync = !self.p.o_dsync;
            return LogStep::Write(w);
        }
        let area_start = self.write_lsn - self.write_lsn % BLOCK;
        let area_end = self.lsn.div_ceil(BLOCK) * BLOCK;
        let mut len = area_end - area_start;
        // Padding to the write-ahead unit of the file offset where the write ends.
        let wa = self.p.write_ahead_size;
        if wa > BLOCK {
            let end_in_unit = self.real_offset(area_end) % wa;
            if end_in_unit > 0 && len > end_in_unit {
                self.stats.log_padded += wa - end_in_unit;
                len += wa - end_in_unit;
            }
        }
        // log_group_write_buf: split at file ends; the next file's header block first.
        let mut start = area_start;
        while len > 0 && w.n < w.writes.len() {
            let off = self.real_offset(start);
            let file = off / self.p.file_size;
            let in_file = off % self.p.file_size;
            // Continuing into the next file after a split (write_header): its header first.
            if w.n > 0 && in_file == FILE_HDR && w.n < 2 {
                w.writes[w.n] = FileWrite { file: file as u32, offset: 0, len: BLOCK };
                w.n += 1;
            }
            let this = len.min(self.p.file_size - in_file);
            w.writes[w.n] = FileWrite { file: file as u32, offset: in_file, len: this };
            w.n += 1;
            start += this;
            len -= this;
        }
        for fw in &w.writes[..w.n] {
            self.stats.log_writes += 1;
            self.stats.os_log_written += fw.len;
        }
        self.writing = Some(self.lsn);
        LogStep::Write(w)
    }

    /// The writer's file writes completed (the write mutex is released). With O_DSYNC a
    /// pending flush is complete too.
    pub fn write_done(&mut self) {
        if let Some(upto) = self.writing.take() {
            self.write_lsn = self.write_lsn.max(upto);
            if self.p.o_dsync {
                self.flushed_lsn = self.flushed_lsn.max(self.write_lsn);
                self.flushing = None;
            }
        }
    }

    /// No write or flush is in progress any more and everything appended is durable (a
    /// clean shutdown; a run abandoning what never completes).
    pub fn settle(&mut self) {
        (self.writing, self.flushing) = (None, None);
        self.write_lsn = self.lsn;
        self.flushed_lsn = self.lsn;
    }

    /// The writer's fsync completed (`log_write_flush_to_disk_low`).
    pub fn flush_done(&mut self) {
        if let Some(upto) = self.flushing.take() {
            self.stats.os_log_fsyncs += 1;
            self.flushed_lsn = self.flushed_lsn.max(upto);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn records_fill_blocks_of_496_bytes_and_the_lsn_counts_the_frames() {
        let mut log = RedoLog::new(RedoParams::default());
        assert_eq!(log.lsn(), 8192 + 12);
        // 496 bytes fill the first block: the LSN moves to the next block's payload.
        assert_eq!(log.append(496), 8192 + 512 + 12);
        // 1000 bytes: 496 + 496 + 8.
        assert_eq!(log.append(1000), 8192 + 3 * 512 + 12 + 8);
        assert_eq!(log.stats().log_write_requests, 2);
    }

    /// One writer, and the commits its write covers return with it (group commit).
    #[test]
    fn a_commit_that_finds_a_flush_in_progress_waits_and_is_covered_by_it() {
        let mut log = RedoLog::new(RedoParams::default());
        let a = log.append(200);
        let b = log.append(200); // appended before a's write starts: covered by it
        let LogStep::Write(w) = log.write_up_to(a, true) else { panic!() };
        assert!(w.fsync);
        assert_eq!(log.write_up_to(b, true), LogStep::Wait);
        let c = log.append(200); // after the write started: not covered
        log.write_done();
        assert_eq!(log.write_up_to(b, true), LogStep::Wait); // the fsync is pending
        log.flush_done();
        assert_eq!(log.write_up_to(a, true), LogStep::Done);
        assert_eq!(log.write_up_to(b, true), LogStep::Done);
        assert!(matches!(log.write_up_to(c, true), LogStep::Write(_)));
        assert_eq!(log.stats().os_log_fsyncs, 1);
    }

    /// A write covers whole blocks from the one holding the write position: the next
    /// rewrites the partial block the last ended in, and one longer than the part of its
    /// last 8 KiB unit it covers is padded to the unit's end.
    #[test]
    fn writes_are_whole_blocks_padded_to_the_write_ahead_size() {
        let mut log = RedoLog::new(RedoParams::default());
        let a = log.append(100);
        let LogStep::Write(w) = log.write_up_to(a, true) else { panic!() };
        // LSN 8192 is file 0's offset 2048 (after its header); 512 bytes end at 2560,
        // not longer than the 2560 bytes of the unit they cover: no padding.
        assert_eq!(w.writes[..w.n], [FileWrite { file: 0, offset: 2048, len: 512 }]);
        log.write_done();
        log.flush_done();
        let b = log.append(8000); // 16 blocks from 2048 to 10240
        let LogStep::Write(w) = log.write_up_to(b, false) else { panic!() };
        assert_eq!(w.n, 1);
        let end = 2048 + 17 * 512; // the rewritten block and 16 more: 10752
        assert_eq!((w.writes[0].offset, w.fsync), (2048, false));
        // 10752 % 8192 = 2560 and 17 blocks > 2560: padded by 8192 - 2560.
        assert_eq!(w.writes[0].len, end - 2048 + (8192 - 2560));
        assert_eq!(log.stats().log_padded, 8192 - 2560);
    }

    #[test]
    fn o_dsync_writes_are_durable_without_an_fsync() {
        let mut log = RedoLog::new(RedoParams { o_dsync: true, ..RedoParams::default() });
        let a = log.append(300);
        let LogStep::Write(w) = log.write_up_to(a, true) else { panic!() };
        assert!(!w.fsync);
        log.write_done();
        assert_eq!(log.write_up_to(a, true), LogStep::Done);
        assert_eq!(log.stats().os_log_fsyncs, 0);
    }

    #[test]
    fn a_write_crossing_a_files_end_continues_in_the_next_file_after_its_header() {
        let p = RedoParams { file_size: 1 << 20, ..RedoParams::default() };
        let mut log = RedoLog::new(p);
        // Fill file 0 to 1 KiB before its end, writing as we go.
        while log.real_offset(log.lsn()) < (1 << 20) - 1024 - 512 {
            let l = log.append(400);
            if let LogStep::Write(_) = log.write_up_to(l, false) {
                log.write_done();
            }
        }
        let l = log.append(4000);
        let LogStep::Write(w) = log.write_up_to(l, false) else { panic!() };
        let files: Vec<u32> = w.writes[..w.n].iter().map(|f| f.file).collect();
        assert_eq!(files, vec![0, 1, 1], "{:?}", &w.writes[..w.n]);
        assert_eq!(w.writes[1], FileWrite { file: 1, offset: 0, len: 512 });
        assert_eq!(w.writes[0].offset + w.writes[0].len, 1 << 20);
        assert_eq!(w.writes[2].offset, 2048);
    }

    proptest! {
        /// Whatever the order of appends and commits, the flushed LSN never passes the
        /// written one, nor the written one the appended one, and a commit that returns
        /// Done is durable.
        #[test]
        fn flushed_never_passes_written_nor_written_appended(ops in proptest::collection::vec((1u64..3000, any::<bool>()), 1..200)) {
            let mut log = RedoLog::new(RedoParams::default());
            for (bytes, flush) in ops {
                let l = log.append(bytes);
                loop {
                    match log.write_up_to(l, flush) {
                        LogStep::Done => break,
                        LogStep::Wait => { log.write_done(); log.flush_done(); }
                        LogStep::Write(w) => {
                            log.write_done();
                            if w.fsync { log.flush_done(); }
                        }
                    }
                }
                prop_assert!(log.flushed_lsn <= log.write_lsn && log.write_lsn <= log.lsn);
                if flush { prop_assert!(log.flushed_lsn >= l); }
            }
        }
    }
}
