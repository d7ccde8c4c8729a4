//! MariaDB 10.11's redo log: one file, `ib_logfile0`, with no block framing; the group
//! commit of `log_write_up_to` over two `group_commit_lock`s; writes of whole
//! `write_size` blocks; and how the server chooses between buffered and O_DIRECT writes
//! of the log. The same interface as [`super::redo::RedoLog`] (MySQL 5.7), so a driver
//! can hold either behind an enum. The bytes each sysbench write appends are in
//! [`records`].
//!
//! Mechanism.
//! - The file (`log_t::attach`, `log_t::create`, `log_t::calc_lsn_offset`): a 12 KiB
//!   header (`log_t::START_OFFSET` = 12288: the format block at 0, checkpoint blocks at
//!   4096 and 8192), then a ring of `capacity() = innodb_log_file_size - 12288` bytes.
//!   The LSN at offset 12288 is `first_lsn`; `lsn` sits at
//!   `12288 + (lsn - first_lsn) % capacity`. A new database starts at
//!   `log_t::FIRST_LSN` = 12288.
//! - Appending (`mtr_t::finish_writer`, `log_t::append_prepare`): an mtr's records are
//!   copied as they are, then one end byte (the sequence bit, 0 or 1 by the ring's lap:
//!   `log_t::get_sequence_bit`) and a CRC-32C of the records (4 bytes); the LSN advances
//!   by exactly those bytes: no 512-byte block headers or trailers since 10.8
//!   (MDEV-14425; FORMAT_10_8). Each append is one `log_sys.write_to_buf`
//!   (Innodb_log_write_requests). An mtr with no records appends nothing.
//! - Writing (`log_write_up_to(lsn, durable)`, `log_t::write_buf`, `log_write_buf`): a
//!   durable request first takes `flush_lock` (a `group_commit_lock`): if the flushed
//!   LSN already covers it, it returns; if another thread holds the lock it sleeps, and
//!   is woken when the holder releases the lock at a value that covers it (returns) or
//!   as the next leader (tries again). Holding `flush_lock`, it takes `write_lock` the
//!   same way (a non-durable request takes only `write_lock`): the holder writes
//!   everything appended so far, up to the current LSN (records appended by other
//!   threads while it waited included: group commit), releases `write_lock`, then (if
//!   durable) calls `log_t::flush` (fdatasync of ib_logfile0, `os_file_flush` →
//!   `os_file_sync_posix`, skipped with `innodb_flush_method = O_DSYNC`), sets
//!   `flushed_to_disk_lsn` to the written LSN and releases `flush_lock`: every waiter
//!   the flushed LSN covers returns.
//! - What a write issues (`log_t::write_buf`): from the `write_size` block holding
//!   `write_lsn` to the current LSN rounded up to a block: the last, partial block is
//!   written with garbage after the LSN and written again by the next write (it is
//!   copied to the start of the other buffer); while less than one block has been
//!   appended since the block's start, the same block is written again. One write,
//!   split in two (`log_write_buf`) where it passes the file's end: the rest goes to
//!   offset 12288. No other padding: `write_size` is `innodb_log_write_ahead_size`
//!   (512 by default), raised to the device's physical block size for O_DIRECT.
//! - Buffered or O_DIRECT (`os_file_create_func` for OS_LOG_FILE,
//!   `os_file_log_maybe_unbuffered`, `os_file_log_buffered`, `log_t::set_block_size`,
//!   `innodb_init_params`): the file may be unbuffered only if
//!   `/sys/dev/block/MAJOR:MINOR/queue/physical_block_size` (or `../queue/...` for a
//!   partition) of the file's `st_dev` reads a power of two from 64 to 4096 (that size
//!   then raises `write_size`) and the file's size is a multiple of it. It is opened
//!   O_DIRECT when it may be unbuffered and `innodb_log_file_buffering` is OFF (its
//!   default; `innodb_init_params` turns it ON when `innodb_flush_log_at_trx_commit =
//!   2`); else buffered, and also when `open(O_DIRECT)` fails with EINVAL. On ZFS the
//!   file's `st_dev` is an anonymous device (major 0) with no `/sys/dev/block` entry, so
//!   the log is buffered at the default 512-byte `write_size` ("Buffered log writes
//!   (block size=512 bytes)"); on ext4 over a virtio disk reporting 512-byte physical
//!   blocks it is O_DIRECT at 512 bytes. `innodb_flush_method` plays no part in that
//!   choice in 10.11.18 (only O_DSYNC adds O_DSYNC to the log's open flags).
//! - A commit asks for durability (`trx_flush_log_if_needed`) when
//!   `innodb_flush_log_at_trx_commit & 1` and `innodb_flush_method != nosync`.
//! - Checkpoint ages (`log_t::set_capacity`, `log_close`, `log_t::checkpoint_margin`):
//!   see [`MariaLogAges`].
//! - Counters (`innodb_status_variables`, `srv_export_innodb_status`): Innodb_log_writes
//!   = `write_to_log` (one per `write_buf` that writes, even split at the file's end);
//!   Innodb_log_write_requests = `write_to_buf` (one per appended mtr);
//!   Innodb_os_log_written = current LSN - the LSN at startup (`recv_sys.lsn`): bytes
//!   appended, not bytes written (a rewritten partial block counts once);
//!   Innodb_lsn_current, Innodb_lsn_flushed. There is no Innodb_os_log_fsyncs (nor
//!   os_log_pending_*) in 10.11: the log's fdatasyncs are counted in
//!   Innodb_data_fsyncs (`os_n_fsyncs`) with the data files'.
//!
//! Against the brief and the MySQL 5.7 modules: the brief (experiment 9) saw buffered
//! 512-byte redo writes on ZFS and O_DIRECT on ext4, which the rule above gives at the
//! defaults; but the choice does not depend on innodb_flush_method (simplification 5),
//! and Innodb_os_log_written is not the bytes written as in 5.7 (`redo::RedoStats`) but
//! the LSN appended, while Innodb_os_log_fsyncs does not exist: a comparison with a
//! measured SHOW GLOBAL STATUS must use [`MariaRedoStats`]' meanings.
//!
//! Sources: MariaDB Server 10.11.18 (the release tarball, Debian's
//! `mariadb_10.11.18.orig.tar.gz`; VERSION 10.11.18), `storage/innobase/`:
//! `log/log0log.cc` (`log_t::set_capacity`, `log_t::attach`, `log_file_message`,
//! `log_t::create`, `log_write_buf`, `log_t::write_buf`, `log_t::flush`, `log_flush`,
//! `log_write_up_to`, `log_t::set_buffered`, `log_t::checkpoint_margin`),
//! `include/log0log.h` (START_OFFSET, FIRST_LSN, CHECKPOINT_1/2, WRITE_SIZE_MAX,
//! `capacity`, `calc_lsn_offset`, `get_sequence_bit`, `set_block_size`),
//! `log/log0sync.cc` (`group_commit_lock::acquire`, `release`), `mtr/mtr0mtr.cc`
//! (`mtr_t::finish_writer`, `mtr_t::crc32c`, `log_t::append_prepare`, `log_close`,
//! `mtr_t::commit_files`), `include/mtr0types.h` (SIZE_OF_FILE_CHECKPOINT),
//! `buf/buf0flu.cc` (`log_t::write_checkpoint`), `os/os0file.cc`
//! (`os_file_create_func`, `os_file_log_maybe_unbuffered`, `os_file_log_buffered`,
//! `os_file_sync_posix`), `trx/trx0trx.cc` (`trx_flush_log_if_needed`),
//! `handler/ha_innodb.cc` (innodb_log_file_size 96M, innodb_log_buffer_size 16M,
//! innodb_log_write_ahead_size 512, innodb_log_file_buffering OFF,
//! innodb_flush_method O_DIRECT, innodb_flush_log_at_trx_commit 1;
//! `innodb_init_params`; `innodb_status_variables`), `srv/srv0srv.cc`
//! (`srv_export_innodb_status`).
//!
//! Simplifications:
//! 1. The log buffer never fills (innodb_log_buffer_size, 16 MiB, holds what is appended
//!    between two writes): `append_prepare_wait` (Innodb_log_waits) is not modelled.
//! 2. A durable request that finds a non-durable write in progress waits for it without
//!    first taking `flush_lock` (the real one takes `flush_lock`, then sleeps on
//!    `write_lock`); it then writes nothing more if that write covered it.
//! 3. Asynchronous completion callbacks (the thread pool's `thd_increment_pending_ops`)
//!    are not modelled: a waiter is woken and asks again, as a thread of the default
//!    one-thread-per-connection scheduler does.
//! 4. The ring wraps without checking the checkpoint (the ages are [`MariaLogAges`]'s to
//!    enforce); resizing (`innodb_log_file_size` set at run time), encryption (8 more
//!    bytes per mtr) and the memory-mapped log (PMEM, `innodb_log_file_mmap`) are not
//!    modelled.
//! 5. The brief asked about `os_file_set_nocache`: 10.11.18 has no such function (the
//!    choice is made at open, above). It also expected `innodb_log_file_buffering` to
//!    depend on `innodb_flush_method`; in 10.11.18 it depends on
//!    `innodb_flush_log_at_trx_commit = 2` only.

pub mod records;

use super::redo::{FileWrite, LogStep, LogWrite};

/// `log_t::START_OFFSET`: the ring starts after 12 KiB of header.
pub const START_OFFSET: u64 = 12288;
/// `log_t::FIRST_LSN`: the LSN of a new database's log at START_OFFSET.
pub const FIRST_LSN: u64 = START_OFFSET;
/// `log_t::CHECKPOINT_1` and `CHECKPOINT_2`: the two checkpoint blocks.
pub const CHECKPOINT_1: u64 = 4096;
/// See [`CHECKPOINT_1`].
pub const CHECKPOINT_2: u64 = 8192;
/// `log_t::WRITE_SIZE_MAX`.
pub const WRITE_SIZE_MAX: u64 = 4096;
/// The smallest innodb_log_write_ahead_size (512), and the block of a buffered log.
pub const WRITE_SIZE_MIN: u64 = 512;
/// Bytes every mtr adds after its records: the end byte (sequence bit) and the CRC-32C
/// (`mtr_t::crc32c`: `len = 5 + records`).
pub const MTR_TRAILER: u64 = 1 + 4;
/// SIZE_OF_FILE_CHECKPOINT (`mtr0types.h`): a FILE_CHECKPOINT record (type, page id 2
/// bytes, LSN 8) with its mtr's end byte and checksum: 16.
pub const SIZE_OF_FILE_CHECKPOINT: u64 = 3 + 8 + MTR_TRAILER;
/// The smallest innodb_log_file_size (4 MiB); sizes are multiples of 4096.
pub const LOG_FILE_SIZE_MIN: u64 = 4 << 20;

/// innodb_flush_method (`innodb_flush_method_typelib`), as it acts on the redo log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushMethod {
    /// fsync.
    Fsync,
    /// O_DSYNC: ib_logfile0 is opened O_DSYNC and never fdatasync'ed.
    ODsync,
    /// littlesync.
    LittleSync,
    /// nosync: commits do not ask for durable log writes.
    NoSync,
    /// O_DIRECT (10.11's default on Linux). For the log, no different from fsync: its
    /// O_DIRECT is decided apart (module docs).
    #[default]
    ODirect,
    /// O_DIRECT_NO_FSYNC: the log is still fdatasync'ed (`log_t::flush` tests O_DSYNC
    /// only).
    ODirectNoFsync,
}

/// The redo log's options, named as MariaDB 10.11's, with their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MariaRedoParams {
    /// innodb_log_file_size: 96 MiB (the whole of ib_logfile0, header included).
    pub log_file_size: u64,
    /// innodb_log_write_ahead_size: 512 (a power of two up to 4096).
    pub log_write_ahead_size: u64,
    /// innodb_log_file_buffering: OFF.
    pub log_file_buffering: bool,
    /// innodb_flush_log_at_trx_commit: 1.
    pub flush_log_at_trx_commit: u32,
    /// innodb_flush_method: O_DIRECT.
    pub flush_method: FlushMethod,
}

impl Default for MariaRedoParams {
    fn default() -> Self {
        MariaRedoParams {
            log_file_size: 96 << 20,
            log_write_ahead_size: 512,
            log_file_buffering: false,
            flush_log_at_trx_commit: 1,
            flush_method: FlushMethod::ODirect,
        }
    }
}

impl MariaRedoParams {
    /// Whether a commit asks for a durable write (`trx_flush_log_if_needed`).
    pub fn commit_durable(&self) -> bool {
        self.flush_method != FlushMethod::NoSync && self.flush_log_at_trx_commit & 1 == 1
    }

    /// ib_logfile0's size as the server takes it: a multiple of 4096, at least 4 MiB.
    fn file_size(&self) -> u64 {
        (self.log_file_size & !4095).max(LOG_FILE_SIZE_MIN)
    }
}

/// What the file system under ib_logfile0 tells the server when it opens the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogDevice {
    /// `/sys/dev/block/MAJOR:MINOR/queue/physical_block_size` (or `../queue/` for a
    /// partition) of the file's `st_dev`; `None` when there is no such file (ZFS, tmpfs,
    /// overlay: anonymous devices of major 0).
    pub physical_block_size: Option<u64>,
    /// `open(O_DIRECT)` succeeds (false: EINVAL, and the log falls back to buffered).
    pub o_direct_accepted: bool,
}

impl LogDevice {
    /// A ZFS dataset (OpenZFS 2.x): no block device behind the file.
    pub const ZFS: LogDevice = LogDevice { physical_block_size: None, o_direct_accepted: true };
    /// ext4 or XFS on a disk reporting `sector`-byte physical blocks.
    pub fn block_device(sector: u64) -> LogDevice {
        LogDevice { physical_block_size: Some(sector), o_direct_accepted: true }
    }
}

/// How ib_logfile0 is opened and written (`os_file_create_func`, `log_t::attach`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFileMode {
    /// log_sys.log_buffered: through the page cache (no O_DIRECT).
    pub buffered: bool,
    /// log_sys.write_size: the block every write is made of.
    pub write_size: u64,
    /// Opened O_DSYNC (innodb_flush_method = O_DSYNC): no fdatasync follows writes.
    pub o_dsync: bool,
}

impl LogFileMode {
    /// The mode MariaDB 10.11 chooses for `p` on `dev` (module docs).
    pub fn choose(p: &MariaRedoParams, dev: &LogDevice) -> LogFileMode {
        let mut write_size = p.log_write_ahead_size.clamp(WRITE_SIZE_MIN, WRITE_SIZE_MAX);
        if !write_size.is_power_of_two() {
            // innodb_init_params refuses to start; take the power of two below.
            write_size = 1 << (63 - write_size.leading_zeros());
        }
        // innodb_init_params: flush_log_at_trx_commit = 2 keeps the file system cache.
        let log_buffered = p.log_file_buffering || p.flush_log_at_trx_commit == 2;
        // os_file_log_maybe_unbuffered.
        let maybe_unbuffered = match dev.physical_block_size {
            Some(s) if (64..=4096).contains(&s) && s.is_power_of_two() => {
                write_size = write_size.max(s);
                p.file_size().is_multiple_of(s)
            }
            _ => false,
        };
        let buffered = log_buffered || !maybe_unbuffered || !dev.o_direct_accepted;
        LogFileMode { buffered, write_size, o_dsync: p.flush_method == FlushMethod::ODsync }
    }

    /// The line `log_file_message` prints at startup.
    pub fn message(&self) -> &'static str {
        if self.buffered {
            "Buffered log writes"
        } else {
            "File system buffers for log disabled"
        }
    }
}

/// SHOW GLOBAL STATUS counters of the log, as 10.11 names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MariaRedoStats {
    /// Innodb_log_write_requests (`log_sys.write_to_buf`): mtrs appended.
    pub log_write_requests: u64,
    /// Innodb_log_writes (`log_sys.write_to_log`): `write_buf` calls that wrote.
    pub log_writes: u64,
    /// Innodb_os_log_written: LSN bytes appended since startup (not bytes written).
    pub os_log_written: u64,
    /// The log's share of Innodb_data_fsyncs (`os_n_fsyncs`): fdatasyncs of
    /// ib_logfile0, checkpoints' included.
    pub data_fsyncs: u64,
    /// Innodb_lsn_current.
    pub lsn_current: u64,
    /// Innodb_lsn_flushed.
    pub lsn_flushed: u64,
    /// Bytes handed to pwrite on ib_logfile0 (rewritten blocks and checkpoint blocks
    /// included): no status variable counts these in 10.11.
    pub bytes_written: u64,
}

/// The log's state (`log_sys` with `write_lock` and `flush_lock`).
#[derive(Debug, Clone)]
pub struct MariaRedoLog {
    p: MariaRedoParams,
    mode: LogFileMode,
    file_size: u64,
    /// log_sys.first_lsn: the LSN at START_OFFSET.
    first_lsn: u64,
    /// recv_sys.lsn: the LSN at startup.
    start_lsn: u64,
    /// The current LSN (`log_sys.get_lsn()`).
    lsn: u64,
    /// log_sys.write_lsn.
    write_lsn: u64,
    /// log_sys.flushed_to_disk_lsn.
    flushed_lsn: u64,
    /// write_lock held: the LSN its write ends at.
    writing: Option<u64>,
    /// flush_lock held by a durable writer: the LSN its fdatasync will make durable.
    flushing: Option<u64>,
    /// log_sys.next_checkpoint_no.
    next_checkpoint_no: u64,
    stats: MariaRedoStats,
}

impl MariaRedoLog {
    /// A log opened on `dev` at the LSN of a new database (FIRST_LSN), its file created
    /// at that LSN (`first_lsn`).
    pub fn new(p: MariaRedoParams, dev: &LogDevice) -> MariaRedoLog {
        MariaRedoLog::at(p, dev, FIRST_LSN, FIRST_LSN)
    }

    /// A log whose file starts at `first_lsn`, opened at `lsn` (>= first_lsn) after a
    /// clean shutdown (`log_t::set_recovered_lsn`).
    pub fn at(p: MariaRedoParams, dev: &LogDevice, first_lsn: u64, lsn: u64) -> MariaRedoLog {
        let lsn = lsn.max(first_lsn);
        MariaRedoLog {
            p,
            mode: LogFileMode::choose(&p, dev),
            file_size: p.file_size(),
            first_lsn,
            start_lsn: lsn,
            lsn,
            write_lsn: lsn,
            flushed_lsn: lsn,
            writing: None,
            flushing: None,
            next_checkpoint_no: 0,
            stats: MariaRedoStats::default(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &MariaRedoParams {
        &self.p
    }

    /// How the file is opened and written.
    pub fn mode(&self) -> LogFileMode {
        self.mode
    }

    /// The current LSN.
    pub fn lsn(&self) -> u64 {
        self.lsn
    }

    /// log_sys.write_lsn.
    pub fn written_lsn(&self) -> u64 {
        self.write_lsn
    }

    /// log_sys.flushed_to_disk_lsn.
    pub fn flushed_lsn(&self) -> u64 {
        self.flushed_lsn
    }

    /// `log_t::capacity()`: the ring's bytes.
    pub fn capacity(&self) -> u64 {
        self.file_size - START_OFFSET
    }

    /// The counters.
    pub fn stats(&self) -> MariaRedoStats {
        MariaRedoStats {
            os_log_written: self.lsn - self.start_lsn,
            lsn_current: self.lsn,
            lsn_flushed: self.flushed_lsn,
            ..self.stats
        }
    }

    /// `log_t::calc_lsn_offset`: where `lsn` is in ib_logfile0.
    pub fn offset_of(&self, lsn: u64) -> u64 {
        START_OFFSET + lsn.saturating_sub(self.first_lsn) % self.capacity()
    }

    /// `log_t::get_sequence_bit`: the end byte of an mtr ending at `lsn` (1 on even laps).
    pub fn sequence_bit(&self, lsn: u64) -> u8 {
        u8::from((lsn.saturating_sub(self.first_lsn) / self.capacity()) & 1 == 0)
    }

    /// `mtr_t::finish_writer`: appends one mtr of `bytes` (records, end byte and
    /// checksum: [`records`]' `Mtr::bytes`); returns the LSN at its end
    /// (`mtr_t::m_commit_lsn`). Zero bytes is an mtr without records: nothing.
    pub fn append(&mut self, bytes: u64) -> u64 {
        if bytes > 0 {
            self.lsn = self.lsn.saturating_add(bytes);
            self.stats.log_write_requests += 1;
        }
        self.lsn
    }

    /// `log_write_up_to(lsn, flush)`: see the module docs. `Write` is this caller's I/O
    /// as the group commit leader: its file writes (none when only an fdatasync is
    /// needed), then, with `fsync`, an fdatasync of ib_logfile0; call
    /// [`write_done`](Self::write_done) after the writes and
    /// [`flush_done`](Self::flush_done) after the fdatasync.
    pub fn write_up_to(&mut self, lsn: u64, flush: bool) -> LogStep {
        if flush {
            if self.flushed_lsn >= lsn {
                return LogStep::Done;
            }
            // flush_lock held by another leader, or (simplification 2) a write running.
            if self.flushing.is_some() || self.writing.is_some() {
                return LogStep::Wait;
            }
            if self.write_lsn >= lsn {
                // Written already: only log_flush, up to write_lock.value().
                if self.mode.o_dsync {
                    self.flushed_lsn = self.write_lsn;
                    return LogStep::Done;
                }
                self.flushing = Some(self.write_lsn);
                return LogStep::Write(LogWrite { fsync: true, ..LogWrite::default() });
            }
            let mut w = self.write_buf();
            w.fsync = !self.mode.o_dsync;
            self.flushing = Some(self.lsn);
            LogStep::Write(w)
        } else {
            if self.write_lsn >= lsn {
                return LogStep::Done;
            }
            if self.writing.is_some() {
                return LogStep::Wait;
            }
            LogStep::Write(self.write_buf())
        }
    }

    /// `log_t::write_buf`: the writes from the block holding write_lsn to the current
    /// LSN; takes write_lock.
    fn write_buf(&mut self) -> LogWrite {
        let ws = self.mode.write_size;
        let mut w = LogWrite::default();
        // The block holding write_lsn (blocks are aligned on first_lsn, and START_OFFSET
        // and the capacity are multiples of 4096).
        let base = self.write_lsn - (self.write_lsn - self.first_lsn) % ws;
        let mut len = (self.lsn - base).div_ceil(ws).max(1) * ws;
        let mut offset = self.offset_of(base);
        // log_write_buf: split where the write passes the file's end.
        while len > 0 && w.n < 2 {
            let this = len.min(self.file_size - offset);
            w.writes[w.n] = FileWrite { file: 0, offset, len: this };
            w.n += 1;
            self.stats.bytes_written += this;
            len -= this;
            offset = START_OFFSET;
        }
        self.stats.log_writes += 1;
        self.writing = Some(self.lsn);
        w
    }

    /// The writer's pwrite completed: write_lock is released at the LSN written. With
    /// O_DSYNC a durable writer's flush is complete too (`log_t::flush` skips the
    /// fdatasync).
    pub fn write_done(&mut self) {
        if let Some(upto) = self.writing.take() {
            self.write_lsn = self.write_lsn.max(upto);
            if self.mode.o_dsync {
                if let Some(f) = self.flushing.take() {
                    self.flushed_lsn = self.flushed_lsn.max(f.min(self.write_lsn));
                }
            }
        }
    }

    /// The writer's fdatasync completed (`log_flush`): flush_lock is released at the LSN
    /// it made durable. Ignored while the write it follows is still in progress.
    pub fn flush_done(&mut self) {
        if self.writing.is_some() {
            return;
        }
        if let Some(f) = self.flushing.take() {
            self.stats.data_fsyncs += 1;
            self.flushed_lsn = self.flushed_lsn.max(f.min(self.write_lsn));
        }
    }

    /// No write or flush is in progress any more and everything appended is durable (a
    /// clean shutdown; a run abandoning what never completes).
    pub fn settle(&mut self) {
        (self.writing, self.flushing) = (None, None);
        self.write_lsn = self.lsn;
        self.flushed_lsn = self.lsn;
    }

    /// A checkpoint at `checkpoint_lsn` (`log_checkpoint_low` → `fil_names_clear`,
    /// `log_t::write_checkpoint`): appends the FILE_CHECKPOINT mtr (with
    /// `file_modify_bytes` of FILE_MODIFY records for the tablespaces still dirty, see
    /// [`records::file_modify_record`]), which the caller then writes and flushes with
    /// [`write_up_to`](Self::write_up_to)`(lsn, true)`; returns that mtr's end LSN and
    /// the checkpoint block write: `write_size` bytes at CHECKPOINT_1 or CHECKPOINT_2
    /// alternately, followed by an fdatasync unless O_DSYNC (count it with
    /// [`checkpoint_done`](Self::checkpoint_done)).
    pub fn checkpoint(&mut self, file_modify_bytes: u64) -> (u64, LogWrite) {
        let end = self.append(file_modify_bytes + SIZE_OF_FILE_CHECKPOINT);
        let offset = if self.next_checkpoint_no & 1 == 1 { CHECKPOINT_2 } else { CHECKPOINT_1 };
        let mut w = LogWrite { fsync: !self.mode.o_dsync, ..LogWrite::default() };
        w.writes[0] = FileWrite { file: 0, offset, len: self.mode.write_size };
        w.n = 1;
        (end, w)
    }

    /// The checkpoint block was written (and flushed): the next goes to the other block.
    pub fn checkpoint_done(&mut self) {
        self.next_checkpoint_no += 1;
        self.stats.bytes_written += self.mode.write_size;
        if !self.mode.o_dsync {
            self.stats.data_fsyncs += 1;
        }
    }
}

/// The checkpoint ages of 10.11 (`log_t::set_capacity`), in LSN bytes: what the page
/// cleaner and `log_close` compare `lsn - oldest modification` and `lsn -
/// last_checkpoint_lsn` with. MariaDB 10.5+ keeps only these three (no
/// `max_modified_age_sync` nor `max_checkpoint_age_async`, no per-thread reserve).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MariaLogAges {
    /// log_sys.log_capacity: the ring less a tenth.
    pub log_capacity: u64,
    /// log_sys.max_modified_age_async: past it, `log_close` asks the page cleaner to
    /// flush ahead (`buf_flush_ahead`) to `lsn - max_modified_age_async`.
    pub max_modified_age_async: u64,
    /// log_sys.max_checkpoint_age: past it the flush ahead is "furious", and
    /// `log_free_check` → `log_t::checkpoint_margin` makes writers wait.
    pub max_checkpoint_age: u64,
}

/// What `log_close` asks of the page cleaner after an mtr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushAhead {
    /// The checkpoint age is within max_modified_age_async.
    None,
    /// `buf_flush_ahead(target, false)`.
    Async(u64),
    /// `buf_flush_ahead(target, true)`: the age passed max_checkpoint_age.
    Furious(u64),
}

impl MariaLogAges {
    /// The ages of an ib_logfile0 of `log_file_size` bytes with `page_size`-byte pages:
    /// capacity = (size - 12288) less a tenth; margin = capacity - 48 pages, less a
    /// tenth; max_modified_age_async = margin - margin / 8; max_checkpoint_age = margin.
    /// None when the file cannot hold 48 pages (the server's minimum, 4 MiB, can).
    pub fn new(log_file_size: u64, page_size: u64) -> Option<MariaLogAges> {
        let smallest = log_file_size.checked_sub(START_OFFSET)?;
        let smallest = smallest - smallest / 10;
        let margin = smallest.checked_sub(page_size.checked_mul(48)?)?;
        let margin = margin - margin / 10;
        Some(MariaLogAges {
            log_capacity: smallest,
            max_modified_age_async: margin - margin / 8,
            max_checkpoint_age: margin,
        })
    }

    /// `log_close`: after an mtr ending at `lsn`, with the last checkpoint at
    /// `last_checkpoint_lsn`.
    pub fn flush_ahead(&self, lsn: u64, last_checkpoint_lsn: u64) -> FlushAhead {
        let age = lsn.saturating_sub(last_checkpoint_lsn);
        if age <= self.max_modified_age_async {
            return FlushAhead::None;
        }
        let target = lsn - self.max_modified_age_async;
        if age >= self.max_checkpoint_age {
            FlushAhead::Furious(target)
        } else {
            FlushAhead::Async(target)
        }
    }

    /// `log_t::checkpoint_margin`: a writer starting an operation at `lsn` must wait for
    /// a checkpoint past this LSN (it asks for flushing up to it) when the checkpoint
    /// age exceeds max_checkpoint_age.
    pub fn checkpoint_wait(&self, lsn: u64, last_checkpoint_lsn: u64) -> Option<u64> {
        (lsn.saturating_sub(last_checkpoint_lsn) > self.max_checkpoint_age)
            .then(|| lsn - self.max_checkpoint_age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ext4() -> LogDevice {
        LogDevice::block_device(512)
    }

    fn lab() -> MariaRedoParams {
        MariaRedoParams { log_file_size: 256 << 20, ..MariaRedoParams::default() }
    }

    fn writes(w: &LogWrite) -> Vec<(u64, u64)> {
        w.writes[..w.n].iter().map(|f| (f.offset, f.len)).collect()
    }

    /// The lab's observation: buffered 512-byte writes on ZFS, O_DIRECT on ext4 over a
    /// 512-byte-sector virtio disk, at the defaults (innodb_log_file_buffering OFF).
    #[test]
    fn buffered_on_zfs_o_direct_on_ext4() {
        let zfs = LogFileMode::choose(&lab(), &LogDevice::ZFS);
        assert_eq!(zfs, LogFileMode { buffered: true, write_size: 512, o_dsync: false });
        assert_eq!(zfs.message(), "Buffered log writes");
        let e = LogFileMode::choose(&lab(), &ext4());
        assert_eq!(e, LogFileMode { buffered: false, write_size: 512, o_dsync: false });
        // A 4K-sector disk raises the block to 4096.
        assert_eq!(LogFileMode::choose(&lab(), &LogDevice::block_device(4096)).write_size, 4096);
        // innodb_flush_log_at_trx_commit = 2 or innodb_log_file_buffering = ON: buffered.
        let two = MariaRedoParams { flush_log_at_trx_commit: 2, ..lab() };
        assert!(LogFileMode::choose(&two, &ext4()).buffered);
        let on = MariaRedoParams { log_file_buffering: true, ..lab() };
        assert!(LogFileMode::choose(&on, &ext4()).buffered);
        // innodb_flush_method does not decide it: fsync still gets O_DIRECT.
        let fsync = MariaRedoParams { flush_method: FlushMethod::Fsync, ..lab() };
        assert!(!LogFileMode::choose(&fsync, &ext4()).buffered);
        // O_DIRECT refused (EINVAL), or a block size out of 64..=4096: buffered.
        let refused = LogDevice { physical_block_size: Some(512), o_direct_accepted: false };
        assert!(LogFileMode::choose(&lab(), &refused).buffered);
        assert!(LogFileMode::choose(&lab(), &LogDevice::block_device(8192)).buffered);
    }

    /// No block framing: the LSN advances by the mtr's bytes exactly.
    #[test]
    fn the_lsn_counts_record_bytes_only() {
        let mut log = MariaRedoLog::new(lab(), &LogDevice::ZFS);
        assert_eq!(log.lsn(), 12288);
        assert_eq!(log.append(157), 12288 + 157);
        assert_eq!(log.append(1000), 12288 + 1157);
        assert_eq!(log.append(0), 12288 + 1157); // an mtr without records
        let s = log.stats();
        assert_eq!((s.log_write_requests, s.os_log_written), (2, 1157));
        assert_eq!(log.offset_of(log.lsn()), 12288 + 1157);
        // The ring: the LSN one capacity on is at the same offset, with the other bit.
        let cap = log.capacity();
        assert_eq!(cap, (256 << 20) - 12288);
        assert_eq!(log.offset_of(12288 + cap + 5), 12288 + 5);
        assert_eq!((log.sequence_bit(12288), log.sequence_bit(12288 + cap)), (1, 0));
    }

    /// One leader's write and fdatasync cover every commit appended before its write;
    /// commits arriving meanwhile wait for flush_lock and return when it covers them.
    #[test]
    fn group_commit_covers_waiting_commits() {
        let mut log = MariaRedoLog::new(lab(), &LogDevice::ZFS);
        let a = log.append(200);
        let b = log.append(300); // before a's leader writes: covered
        let LogStep::Write(w) = log.write_up_to(a, true) else { panic!() };
        assert!(w.fsync);
        // The write goes to the current LSN (b's end), not only to a's.
        assert_eq!(writes(&w), vec![(12288, 512)]);
        assert_eq!(log.write_up_to(b, true), LogStep::Wait);
        let c = log.append(100); // after the write started: not covered
        log.write_done();
        // flush_lock is held through the fdatasync: still waiting.
        assert_eq!(log.write_up_to(b, true), LogStep::Wait);
        assert_eq!(log.write_up_to(c, true), LogStep::Wait);
        log.flush_done();
        assert_eq!(log.write_up_to(a, true), LogStep::Done);
        assert_eq!(log.write_up_to(b, true), LogStep::Done);
        // c leads the next group: its write rewrites the partial block.
        let LogStep::Write(w) = log.write_up_to(c, true) else { panic!() };
        assert_eq!(writes(&w), vec![(12288, 1024)]);
        log.write_done();
        log.flush_done();
        let s = log.stats();
        assert_eq!((s.log_writes, s.data_fsyncs, s.bytes_written), (2, 2, 512 + 1024));
        assert_eq!(s.lsn_flushed, c);
    }

    /// Whole blocks from the block holding write_lsn: the partial last block is written
    /// and written again; while less than a block was appended, the same block again.
    #[test]
    fn writes_are_whole_blocks_rewriting_the_last_partial_block() {
        let mut log = MariaRedoLog::new(lab(), &ext4());
        let a = log.append(100);
        let LogStep::Write(w) = log.write_up_to(a, false) else { panic!() };
        assert_eq!((writes(&w), w.fsync), (vec![(12288, 512)], false));
        log.write_done();
        // 300 more bytes: still inside the first block, which is written again.
        let b = log.append(300);
        let LogStep::Write(w) = log.write_up_to(b, false) else { panic!() };
        assert_eq!(writes(&w), vec![(12288, 512)]);
        log.write_done();
        // 1000 more: LSN 12288 + 1400, three blocks from the first (400 + 1000 bytes).
        let c = log.append(1000);
        let LogStep::Write(w) = log.write_up_to(c, false) else { panic!() };
        assert_eq!(writes(&w), vec![(12288, 1536)]);
        log.write_done();
        // Next: from the block holding 12288 + 1400 (the third, at 12288 + 1024).
        let d = log.append(10);
        let LogStep::Write(w) = log.write_up_to(d, false) else { panic!() };
        assert_eq!(writes(&w), vec![(12288 + 1024, 512)]);
        log.write_done();
        // No padding beyond the block: 4 KiB blocks on a 4K-sector disk.
        let mut big = MariaRedoLog::new(lab(), &LogDevice::block_device(4096));
        let e = big.append(5000);
        let LogStep::Write(w) = big.write_up_to(e, false) else { panic!() };
        assert_eq!(writes(&w), vec![(12288, 8192)]);
    }

    /// Durable asks for the fdatasync; non-durable only the write; a durable request
    /// after a non-durable write of its LSN issues only the fdatasync.
    #[test]
    fn durable_and_non_durable_requests() {
        let mut log = MariaRedoLog::new(lab(), &LogDevice::ZFS);
        let a = log.append(700);
        let LogStep::Write(w) = log.write_up_to(a, false) else { panic!() };
        assert!(!w.fsync);
        log.write_done();
        assert_eq!(log.write_up_to(a, false), LogStep::Done);
        assert_eq!(log.flushed_lsn(), 12288);
        let LogStep::Write(w) = log.write_up_to(a, true) else { panic!() };
        assert_eq!((w.n, w.fsync), (0, true));
        log.flush_done();
        assert_eq!(log.write_up_to(a, true), LogStep::Done);
        assert_eq!(log.stats().log_writes, 1);
        assert_eq!(log.stats().data_fsyncs, 1);
        // O_DSYNC: the write is durable, no fdatasync.
        let p = MariaRedoParams { flush_method: FlushMethod::ODsync, ..lab() };
        let mut log = MariaRedoLog::new(p, &ext4());
        let b = log.append(50);
        let LogStep::Write(w) = log.write_up_to(b, true) else { panic!() };
        assert!(!w.fsync);
        log.write_done();
        assert_eq!(log.write_up_to(b, true), LogStep::Done);
        assert_eq!(log.stats().data_fsyncs, 0);
        // Commits' durability: innodb_flush_log_at_trx_commit 1 and 3 flush, 0 and 2 not.
        assert!(lab().commit_durable());
        assert!(!MariaRedoParams { flush_log_at_trx_commit: 2, ..lab() }.commit_durable());
        assert!(!MariaRedoParams { flush_method: FlushMethod::NoSync, ..lab() }.commit_durable());
    }

    /// A write passing the file's end continues at offset 12288 (one Innodb_log_writes).
    #[test]
    fn a_write_past_the_end_wraps_to_the_start_offset() {
        let p = MariaRedoParams { log_file_size: 4 << 20, ..MariaRedoParams::default() };
        let mut log = MariaRedoLog::new(p, &LogDevice::ZFS);
        let cap = log.capacity();
        // Write all but 1000 bytes of the ring.
        let a = log.append(cap - 1000);
        let LogStep::Write(_) = log.write_up_to(a, false) else { panic!() };
        log.write_done();
        let b = log.append(3000);
        let LogStep::Write(w) = log.write_up_to(b, false) else { panic!() };
        // a ends 1000 bytes before the file's end, 24 bytes into its block (at 4 MiB -
        // 1024): 24 + 3000 bytes from that block, 3072 in whole blocks: 1024 to the
        // file's end, then 2048 at 12288.
        assert_eq!(writes(&w), vec![((4 << 20) - 1024, 1024), (12288, 2048)]);
        assert_eq!(log.stats().log_writes, 2);
    }

    #[test]
    fn checkpoint_blocks_alternate() {
        let mut log = MariaRedoLog::new(lab(), &LogDevice::ZFS);
        let (end, w) = log.checkpoint(0);
        assert_eq!(end, 12288 + 16);
        assert_eq!((writes(&w), w.fsync), (vec![(4096, 512)], true));
        log.checkpoint_done();
        let (_, w) = log.checkpoint(0);
        assert_eq!(writes(&w), vec![(8192, 512)]);
    }

    /// log_t::set_capacity at the lab's 256 MiB and the default 96 MiB, 16 KiB pages.
    #[test]
    fn checkpoint_ages() {
        // (268435456 - 12288) = 268423168, less a tenth (26842316): 241580852; less 48
        // pages (786432): 240794420, less a tenth (24079442): 216714978; async age
        // 216714978 - 27089372 = 189625606.
        let a = MariaLogAges::new(256 << 20, 16384).unwrap();
        assert_eq!(a.log_capacity, 241_580_852);
        assert_eq!(a.max_checkpoint_age, 216_714_978);
        assert_eq!(a.max_modified_age_async, 189_625_606);
        assert_eq!(a.flush_ahead(1000 + a.max_modified_age_async, 1000), FlushAhead::None);
        assert_eq!(a.flush_ahead(1001 + a.max_modified_age_async, 1000), FlushAhead::Async(1001));
        let l = 1000 + a.max_checkpoint_age;
        assert_eq!(a.flush_ahead(l, 1000), FlushAhead::Furious(l - a.max_modified_age_async));
        assert_eq!(a.checkpoint_wait(l, 1000), None);
        assert_eq!(a.checkpoint_wait(l + 1, 1000), Some(1001));
        assert!(MariaLogAges::new(96 << 20, 16384).is_some());
        assert!(MariaLogAges::new(4 << 20, 65536).is_some());
        assert_eq!(MariaLogAges::new(1 << 20, 65536), None);
    }

    proptest! {
        /// Whatever the order of appends, durable and non-durable requests, and
        /// completions, flushed <= written <= appended, and a request that returns Done
        /// is written (durable: flushed) that far.
        #[test]
        fn flushed_never_passes_written_nor_written_appended(
            ops in proptest::collection::vec((0u64..5000, any::<bool>(), 0u8..4), 1..200),
            zfs in any::<bool>(),
        ) {
            let dev = if zfs { LogDevice::ZFS } else { LogDevice::block_device(4096) };
            let p = MariaRedoParams { log_file_size: 4 << 20, ..MariaRedoParams::default() };
            let mut log = MariaRedoLog::new(p, &dev);
            for (bytes, flush, lag) in ops {
                let l = log.append(bytes);
                // Completions sometimes lag behind the next request.
                if lag == 0 { log.write_done(); }
                if lag == 1 { log.flush_done(); }
                loop {
                    match log.write_up_to(l, flush) {
                        LogStep::Done => break,
                        LogStep::Wait => { log.write_done(); log.flush_done(); }
                        LogStep::Write(w) => {
                            for f in &w.writes[..w.n] {
                                prop_assert!(f.offset >= START_OFFSET && f.offset + f.len <= 4 << 20);
                                prop_assert_eq!(f.offset % log.mode().write_size, 0);
                                prop_assert_eq!(f.len % log.mode().write_size, 0);
                            }
                            if lag == 2 { log.flush_done(); } // early: ignored
                            log.write_done();
                            if w.fsync { log.flush_done(); }
                        }
                    }
                    prop_assert!(log.flushed_lsn() <= log.written_lsn());
                    prop_assert!(log.written_lsn() <= log.lsn());
                }
                prop_assert!(log.written_lsn() >= l);
                if flush { prop_assert!(log.flushed_lsn() >= l); }
            }
        }
    }
}
