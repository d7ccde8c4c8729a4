//! InnoDB's writes in a run: what a row change does to the buffer pool, the redo log and
//! the flush list; what a commit asks of the log files; and what the page cleaner and a
//! thread short of a free frame write, as file operations the driver executes through
//! the filesystem layer ([`FileOp`]). The mechanisms are the tested units beside this
//! module (`redo`, `redo_records`, `flush_list`, `page_cleaner`, `doublewrite`); this
//! module sequences them as MySQL 5.7.29's threads do (MariaDB 10.11's and Percona Server
//! 5.7's flushing: `cleaner` and `percona`, simplifications 7 and 8).
//!
//! Mechanism.
//! - A row change (`row_upd_step`, `row_ins_step`): the statement's thread first finds its
//!   pages (the clustered leaf; the k_1 leaf for a change of k, a delete or an insert into
//!   k_1: [`Writes::page_path`]), reading the missing ones like any lookup, except a k_1
//!   leaf whose change the change buffer can take (`innodb_change_buffering`: a
//!   delete-mark of a leaf not in the pool is buffered, not read; an insert is not, since
//!   the bulk-loaded leaves' free bits promise no room: `redo_records`). Then each of the
//!   change's mini-transactions commits (`mtr_t::commit`): its redo bytes are appended to
//!   the log (`RedoLog::append`) and the pages it modified become dirty, entering the
//!   flush list with the mtr's start LSN (`buf_flush_note_modification`). Undo pages, the
//!   rollback segment headers and the change buffer are pages of the system tablespace
//!   (ibdata1); a transaction's undo log lives on one page reused until it is 3/4 full
//!   (`TRX_UNDO_PAGE_REUSE_LIMIT`), then on a fresh one.
//! - Before a change, `log_free_check`: when the redo written since the oldest dirty page's
//!   first modification (the checkpoint age) is past `max_modified_age_sync`, the thread
//!   waits until the page cleaner has flushed enough of the oldest pages
//!   (`log_preflush_pool_modified_pages`).
//! - COMMIT (`trx_commit_complete_for_mysql` → `trx_flush_log_if_needed`): the commit's
//!   mtr is appended; with `innodb_flush_log_at_trx_commit` = 1 the thread waits until the
//!   log is written and flushed up to it (`log_write_up_to(lsn, true)`: one writer writes
//!   for every waiting commit, the group commit of `redo`); with 2 only written; with 0
//!   neither. The master thread writes and flushes the log once a second
//!   (`srv_sync_log_buffer_in_background`).
//! - The page cleaner (`buf_flush_page_cleaner_coordinator`) wakes once a second (at once
//!   when a pass took longer) and, the server being active, flushes: the LRU list's tail
//!   (`buf_flush_LRU_list`: of the last `innodb_lru_scan_depth` pages, clean ones are
//!   freed and dirty ones written and freed when their write completes, until
//!   `innodb_lru_scan_depth` frames are free), then the flush list's oldest pages, as many
//!   as `page_cleaner_flush_pages_recommendation` asks (`page_cleaner`), or all pages
//!   older than the target of a sync flush that a waiting thread asked for. Pages go out in
//!   doublewrite batches (`doublewrite`): the copies to ibdata1, its fsync, the pages in
//!   place (asynchronous I/O, all in flight at once), the data files' fsync.
//! - Purge (`purge`, the thread in `writes/purge.rs`): a commit puts the transaction's
//!   update undo log in the history list and, in MySQL 5.7, wakes the purge coordinator;
//!   its batches (`trx_purge`) are run as a thread's lookups: for each k update or
//!   delete, the clustered record found, then the delete-marked k_1 entry removed in its
//!   leaf (read if not in the pool, unless the change buffer takes the delete), and a
//!   deleted row's clustered record; each removal an mtr. Every 128th batch (MariaDB:
//!   each) truncates the purged logs from the history, an mtr each.
//! - A thread needing a free frame with none free and nothing replaceable among the last
//!   `BUF_LRU_SEARCH_SCAN_THRESHOLD` pages of the LRU list writes one dirty page from the
//!   LRU tail itself (`buf_flush_single_page_from_LRU`): the page to a single-page slot of
//!   the doublewrite buffer, ibdata1's fsync, the page in place, its file's fsync, then
//!   frees its frame (`buf_LRU_get_free_block`).
//!
//! What `innodb_flush_method` does to the files (`os_file_create_func`, `fil_flush`):
//! fsync: every file buffered and fsynced; O_DSYNC: the log files opened O_SYNC (no fsync
//! after a log write), data files fsynced; O_DIRECT: data files opened O_DIRECT, every file
//! fsynced; O_DIRECT_NO_FSYNC: as O_DIRECT with no fsync of data files.
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/`: `trx/trx0trx.cc`
//! (`trx_commit_complete_for_mysql`, `trx_flush_log_if_needed_low`), `srv/srv0srv.cc`
//! (`srv_master_thread`, `srv_sync_log_buffer_in_background`), `log/log0log.cc`
//! (`log_free_check`, `log_check_margins`, `log_preflush_pool_modified_pages`),
//! `buf/buf0flu.cc` (`buf_flush_page_cleaner_coordinator`, `buf_flush_LRU_list`,
//! `buf_flush_single_page_from_LRU`, `buf_flush_note_modification`), `buf/buf0lru.cc`
//! (`buf_LRU_get_free_block`), `os/os0file.cc` and `fil/fil0fil.cc` (the flush methods),
//! `trx/trx0undo.cc` (`TRX_UNDO_PAGE_REUSE_LIMIT`), `ibuf/ibuf0ibuf.cc`; purge's in
//! `innodb::purge`.
//!
//! Simplifications:
//! 1. The system tablespace's pages (undo, rollback segment headers, TRX_SYS, the change
//!    buffer) are taken to stay in the buffer pool: they are dirtied and flushed, never
//!    read, and hold no frame of the pool's LRU model.
//! 2. A row's k is drawn from a hash of its id (uniform), not from the table's content;
//!    an update of k leaves the row's entry in the same k_1 leaf.
//! 3. Pages modified while being written stay dirty (InnoDB's SX latch makes the change
//!    wait for the write; the model lets it through).
//! 4. The page cleaner writes WAL-safe pages only: with `innodb_flush_log_at_trx_commit`
//!    0 or 2, the log write a page flush would force first (`buf_flush_write_block_low` →
//!    `log_write_up_to(newest_modification)`) is not issued.
//! 5. Checkpoints are not written (a 512-byte write and an fsync of the first log file
//!    every few seconds); the checkpoint age is measured to the oldest dirty page, as if
//!    each checkpoint were taken at once.
//! 6. Neighbour flushing (`innodb_flush_neighbors`) is not modelled for MySQL 5.7 (MariaDB's
//!    and Percona's page cleaners flush neighbours). Purge is modelled with its own
//!    simplifications (`purge`: one thread for innodb_purge_threads, read views opened at
//!    a transaction's first change, no DML delay, the change buffer merged only by a
//!    leaf's read); the undo pages it frees are the ring's, which reuses them whether or
//!    not purge got to them (the undo log's page count does not follow the history).
//! 7. MariaDB 10.11 has its own redo log and record formats (`mariadb_redo`: no block
//!    framing, one undo log per transaction, rows whose history purge reset, the log
//!    buffered on ZFS and O_DIRECT on a block device) and its own checkpoint ages; its
//!    page cleaner and free-frame wait are `mariadb_flush`'s (`cleaner`).
//! 8. Percona Server 5.7 is MySQL 5.7 here (pages, redo log and records, binary log,
//!    doublewrite) except its flushing: `percona_flush` in its merged mode, an LRU manager
//!    thread (a third database thread, [`lru_manager_actor`]), threads backing off for
//!    free frames, a flush-list-only page cleaner, `log_free_check`'s polls (`percona`).
//! 9. Other schemas' rows (TPC-C's, `workload::tpcc`) change the pages their keys' layout
//!    says, but their redo, undo and binary log records are sized as a sysbench row's
//!    change of the same kind (an update of `c`, an insert or delete-mark of a whole row,
//!    a secondary entry of k_1's size): the pages dirtied are the schema's, the bytes per
//!    change are sysbench's.

use std::collections::VecDeque;

use crate::config::{CharacterSet, InnodbConfig, InnodbServer};

mod binlog_commit;
mod cleaner;
mod log;
mod params;
mod percona;
mod purge;

use crate::db::binlog::{Binlog, BinlogStats, BinlogStep, GroupWait, TrxBinlog};
use crate::db::innodb::btree::{mix, TableLayout, MAX_DEPTH};
use crate::db::innodb::buffer_pool::{BufferPool, PageKey, BUF_LRU_MIN_LEN};
use crate::db::innodb::doublewrite::Doublewrite;
use crate::db::innodb::flush_list::FlushList;
use crate::db::innodb::mariadb_redo::records::{purged_row, Charset, MariaCtx};
use crate::db::innodb::mariadb_redo::{self, LogDevice, MariaLogAges, MariaRedoLog, MariaRedoParams};
use crate::db::innodb::page_cleaner::{LogAges, PageCleaner, PassInput};
use crate::db::innodb::purge::{Purge, PurgeKind, PurgeRec};
use crate::db::innodb::redo::{LogStep, RedoLog, RedoParams, RedoStats};
use crate::db::innodb::redo_records::{Env, Mtr, MtrLog, PageRef, RowCtx};
use crate::error::{Error, Result};
use crate::sim::time::{Nanos, SEC};
use crate::support::small_map::SmallMap;
use crate::workload::statement::{Index, Lookup, Op};
pub use cleaner::FrameStep;
use log::{Log, TrxLog};
pub(crate) use params::percona_pool;
pub use params::{DbFiles, FlushMethod, PerconaOptions, WriteParams, BINLOG_SLOTS};
pub use percona::PerconaStats;

/// Tablespace id of the first table (`redo_records`: ids are logged compressed, and a
/// fresh 5.7 instance gives its first user tables ids in the twenties).
pub const FIRST_SPACE_ID: u32 = 25;
/// `TRX_UNDO_PAGE_REUSE_LIMIT` (`trx0undo.h`): an undo log page reused while less than
/// 3/4 full.
const UNDO_REUSE_PERCENT: u64 = 75;
/// Bytes an undo log header takes on its page (TRX_UNDO_LOG_XA_HDR_SIZE, `redo_records`).
const UNDO_HEADER_BYTES: u64 = 186;
/// Bytes of one undo record of a sysbench row change (about: type, undo number, table id,
/// the old system columns, the key, the changed field).
const UNDO_RECORD_BYTES: u64 = 40;
/// The system tablespace's layout (pages): the doublewrite buffer's two blocks are pages
/// 64..191 (FSP_EXTENT_SIZE of 16K pages, `trx_sys_create_doublewrite_buf`); the
/// rollback segment headers and change buffer leaves after them; undo pages from
/// `UNDO_FIRST` in a ring of `UNDO_PAGES` (purge frees what the ring reuses).
const RSEG_FIRST: u32 = 256;
const RSEGS: u32 = 96;
const IBUF_LEAF: u32 = 400;
const UNDO_FIRST: u32 = 512;
const UNDO_PAGES: u32 = 4096;
/// innodb_data_file_path's default ibdata1:12M:autoextend, grown to hold the undo ring.
pub fn system_file_pages() -> u64 {
    u64::from(UNDO_FIRST + UNDO_PAGES)
}
/// The single-page slots of the doublewrite buffer: the last pages of its second block
/// (`buf_dblwr_write_single_page`: after the `srv_doublewrite_batch_size` batch pages).
const DBLWR_SINGLE_FIRST: u64 = 64 + 120;

/// `BLK_DEF_MAX_SECTORS` (Linux 6.1, `include/linux/blkdev.h`): 2560 sectors, the
/// default `max_sectors_kb` of a queue whose driver allows more (virtio-blk does): the
/// largest request the block layer builds by merging (ASSUMED the queue's limit).
const MERGE_MAX_BYTES: u64 = 2560 * 512;

/// One operation a database thread asks of its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// A write of `len` bytes at `offset` of `file` that the thread waits for (`pwrite`;
    /// with `o_sync` the file is open O_SYNC/O_DSYNC: durable when it returns).
    Write {
        /// The driver's file number.
        file: u32,
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u32,
        /// The file is open O_SYNC.
        o_sync: bool,
    },
    /// A write issued without waiting (asynchronous I/O); [`FileOp::Barrier`] waits for
    /// every one issued before it.
    WriteAsync {
        /// The driver's file number.
        file: u32,
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// fsync(2) of `file`.
    Sync {
        /// The driver's file number.
        file: u32,
    },
    /// Waits for the asynchronous writes issued so far.
    Barrier,
    /// `open(O_CREAT)` of a new file in `file`'s place (a binary log file after a
    /// rotation): the file is empty from now on (the filesystem's `new_file`).
    Create {
        /// The driver's file number.
        file: u32,
    },
}

/// What a thread's I/O was for, decided when it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    None,
    /// Writing (and with `flush`, flushing) the redo log as its writer.
    Log {
        flush: bool,
    },
    /// A page cleaner batch of `batch` pages (in [`Writes::batch`]), LRU pages first.
    Batch,
    /// MariaDB's checkpoint block at `lsn` (after a pass).
    Checkpoint {
        lsn: u64,
    },
    /// A single-page flush of `key` to free its frame.
    SinglePage {
        key: u64,
    },
    /// Percona Server's LRU manager's batch (its pages freed as their writes complete).
    LruBatch,
}

/// What a commit or a log flush asks of its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogWait {
    /// Nothing more: the log is as durable as the setting asks.
    Done,
    /// Another thread is writing or flushing the log: wait for it ([`Writes::take_log_released`]), then ask again.
    Wait,
    /// Sleep this long, then ask again (binlog_group_commit_sync_delay).
    Sleep(Nanos),
    /// This thread is the writer: run its I/O ([`Writes::next_op`]), then [`Writes::io_done`].
    Io,
}

/// What `log_free_check` asks of a thread before its change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFree {
    /// The checkpoint age is low enough: go on.
    Go,
    /// Wait until released ([`Writes::take_log_released`]), then ask again.
    Wait,
    /// Sleep this long, then ask again (Percona Server's `buf_flush_wait_flushed` polls).
    Poll(Nanos),
}

/// What a thread does once its I/O is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterIo {
    /// Its queue has more I/O (the next batch).
    More,
    /// It is done: a commit asks again ([`Writes::commit_retry`]); a frame may be had.
    Done,
}

/// SHOW GLOBAL STATUS counters of the write path (names as MySQL 5.7's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// The redo log's counters.
    pub redo: RedoStats,
    /// Innodb_buffer_pool_pages_flushed: pages written by any flush.
    pub pages_flushed: u64,
    /// Pages written by LRU flushes (batches and single-page flushes).
    pub pages_lru_flushed: u64,
    /// Innodb_buffer_pool_wait_free: a thread found no free frame and flushed one itself.
    pub wait_free: u64,
    /// Innodb_dblwr_pages_written, Innodb_dblwr_writes.
    pub dblwr_pages_written: u64,
    /// See `dblwr_pages_written`.
    pub dblwr_writes: u64,
    /// Innodb_data_fsyncs: fsyncs of any InnoDB file.
    pub data_fsyncs: u64,
    /// Innodb_data_writes and Innodb_data_written: writes to any InnoDB file, and bytes.
    pub data_writes: u64,
    /// See `data_writes`.
    pub data_written: u64,
    /// The binary log's counters (with log_bin).
    pub binlog: Option<BinlogStats>,
    /// Innodb_rows_updated, _deleted, _inserted.
    pub rows_updated: u64,
    /// See `rows_updated`.
    pub rows_deleted: u64,
    /// See `rows_updated`.
    pub rows_inserted: u64,
    /// Transactions committed with redo to write.
    pub commits: u64,
    /// Times a thread waited in `log_free_check` for the checkpoint age to drop.
    pub checkpoint_waits: u64,
    /// Page cleaner passes.
    pub cleaner_passes: u64,
    /// Innodb_buffer_pool_pages_dirty and the checkpoint age (gauges, when read).
    pub pages_dirty: u64,
    /// See `pages_dirty`.
    pub checkpoint_age: u64,
    /// The counters are MariaDB's (some names differ: see `innodb_write_window`).
    pub mariadb: bool,
    /// Percona Server's own counters (its flushing's), None for the other servers.
    pub percona: Option<PerconaStats>,
    /// Purge's counters and the history list length (`innodb::purge`).
    pub purge: crate::db::innodb::purge::PurgeStats,
    /// The row lock counters (`innodb::row_locks`; filled by the database).
    pub row_locks: crate::db::innodb::row_locks::RowLockStats,
}

/// One client's transaction and undo log pages.
#[derive(Debug, Clone, Copy)]
struct ClientTrx {
    redo: TrxLog,
    /// The LSN its commit waits for.
    commit_lsn: u64,
    /// Its update and insert undo log pages, and the bytes used on the update one.
    update_page: u32,
    insert_page: u32,
    update_used: u64,
    /// With the binary log: its transaction's events, its commit's mtr (appended by the
    /// commit stage's leader), and where its commit is in the group commit.
    binlog: TrxBinlog,
    pending_commit: Option<Mtr>,
    bl_step: Option<BinlogStep>,
    bl_next: bool,
    /// The LSN its flush stage's redo flush asked for (`log_write_up_to(lsn)` keeps it
    /// across a wait for another writer); 0 when none is asked.
    bl_flush_lsn: u64,
}

/// InnoDB's write path state (see the module docs).
pub struct Writes {
    p: WriteParams,
    files: DbFiles,
    page_size: u32,
    redo: Log,
    ages: LogAges,
    /// MariaDB's record context (charset, offsets).
    maria: MariaCtx,
    flush_list: FlushList,
    cleaner: cleaner::Cleaner,
    /// A thread asked for the page cleaner (taken by the driver).
    wake_cleaner: bool,
    /// The binary log (MySQL 5.7 with log_bin).
    binlog: Option<Box<Binlog>>,
    /// The logical sector of the block device under the files (XFS, ext4), None on ZFS.
    block_sector: Option<u64>,
    /// The buffer pool's frames, a table file's pages, pages per extent, and whether the
    /// data files are on rotational storage (MariaDB's neighbour flushing).
    frames: u64,
    table_pages: u64,
    extent_pages: u64,
    rotational: bool,
    trx: Vec<ClientTrx>,
    /// Per actor (the clients, then the page cleaner, then the master thread): its
    /// queued file operations and what they are for.
    io: Vec<VecDeque<FileOp>>,
    jobs: Vec<Job>,
    /// The page cleaner's pages to flush this pass (LRU pages first, `lru_pages` of
    /// them), the batch in flight, and the next to start.
    pass: Vec<u64>,
    lru_pages: usize,
    batch: Vec<(u64, bool)>,
    pass_pos: usize,
    /// A sync flush asked by a thread in `log_free_check`: flush every page older.
    sync_target: Option<u64>,
    /// Threads waiting for the log writer, and for the checkpoint age to drop.
    log_waiters: Vec<u32>,
    ckpt_waiters: Vec<u32>,
    released: Vec<u32>,
    next_undo: u32,
    last_update_page: u32,
    trx_ids: u64,
    /// The dataset's seed (a row's k).
    seed: u64,
    /// Flushes of the last pass (for the recommendation).
    last_flushed: u64,
    stats: WriteStats,
    /// The client threads.
    clients: usize,
    /// The history list and the purge coordinator (`innodb::purge`); a commit asked for
    /// it; the batch in progress truncates; the truncation's mtrs (reused).
    purge: Purge,
    wake_purge: bool,
    purge_truncate: bool,
    purge_mtrs: Vec<Mtr>,
    /// Records the change buffer holds per k_1 leaf (PageKey), not counting buffered
    /// deletes; a leaf's read merges them.
    ibuf_recs: SmallMap<u32>,
}

/// The slot of the page cleaner among the actors of `clients` clients.
pub fn cleaner_actor(clients: usize) -> usize {
    clients
}

/// The slot of the master thread (the once-a-second log flush).
pub fn master_actor(clients: usize) -> usize {
    clients + 1
}

/// The slot of Percona Server's LRU manager thread (one for all buffer pool instances:
/// `percona_flush`'s merged mode).
pub fn lru_manager_actor(clients: usize) -> usize {
    clients + 2
}

impl Writes {
    /// The write path of `cfg` for `clients` client threads over `files` (tables of
    /// `table_pages` pages); `block_sector`: the logical sector size of the block device
    /// under the files (ext4, XFS), None on ZFS (MariaDB's log opening mode depends on it);
    /// `rotational`: the files' device is rotational as the kernel reports it (MariaDB
    /// flushes neighbours only there).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &InnodbConfig,
        files: DbFiles,
        table_pages: u64,
        clients: usize,
        seed: u64,
        block_sector: Option<u64>,
        rotational: bool,
    ) -> Result<Writes> {
        let p = WriteParams::new(cfg)?;
        let page_size = cfg.innodb_page_size;
        let too_small = || {
            Error::config(
                "database.innodb_log_file_size",
                "the redo log is too small for the server's reserved space (innodb_log_file_size x files)",
            )
        };
        let extent_pages = match page_size {
            4096 => 256,
            8192 => 128,
            _ => 64,
        };
        let (redo, ages) = match p.server {
            InnodbServer::Mysql57 | InnodbServer::Percona57 => {
                let ages = LogAges::new(p.log_file_size, u64::from(p.log_files), u64::from(page_size), 0)
                    .ok_or_else(too_small)?;
                let redo = RedoLog::new(RedoParams {
                    file_size: p.log_file_size,
                    files: u64::from(p.log_files),
                    write_ahead_size: 8192.min(u64::from(page_size)),
                    o_dsync: p.method.log_o_sync(),
                });
                (Log::Mysql57(redo), ages)
            }
            InnodbServer::Mariadb1011 => {
                let m = MariaLogAges::new(p.log_file_size, u64::from(page_size)).ok_or_else(too_small)?;
                // 10.11 keeps three ages: its checkpoint margin is where writers wait.
                let ages = LogAges {
                    capacity: m.log_capacity,
                    max_modified_age_async: m.max_modified_age_async,
                    max_modified_age_sync: m.max_checkpoint_age,
                    max_checkpoint_age_async: m.max_checkpoint_age,
                    max_checkpoint_age: m.max_checkpoint_age,
                };
                let params = MariaRedoParams {
                    log_file_size: p.log_file_size,
                    flush_log_at_trx_commit: u32::from(p.flush_log_at_trx_commit),
                    flush_method: match p.method {
                        FlushMethod::Fsync => mariadb_redo::FlushMethod::Fsync,
                        FlushMethod::ODsync => mariadb_redo::FlushMethod::ODsync,
                        FlushMethod::ODirect => mariadb_redo::FlushMethod::ODirect,
                        FlushMethod::ODirectNoFsync => mariadb_redo::FlushMethod::ODirectNoFsync,
                    },
                    ..MariaRedoParams::default()
                };
                let dev = block_sector.map_or(LogDevice::ZFS, LogDevice::block_device);
                (Log::Mariadb(Box::new(MariaRedoLog::new(params, &dev))), ages)
            }
        };
        let frames = crate::db::innodb::buffer_pool::pool_frames(cfg);
        // The clients, the page cleaner, the master thread (and Percona's LRU manager),
        // the purge threads.
        let actors = clients + 2 + usize::from(p.percona.is_some()) + p.purge.threads as usize;
        let trx = (0..clients as u32)
            .map(|c| ClientTrx {
                redo: TrxLog::begin(p.server, 1000 + 2 * u64::from(c)),
                commit_lsn: 0,
                update_page: UNDO_FIRST + (2 * c) % UNDO_PAGES,
                insert_page: UNDO_FIRST + (2 * c + 1) % UNDO_PAGES,
                update_used: 0,
                binlog: TrxBinlog::begin(),
                pending_commit: None,
                bl_step: None,
                bl_next: false,
                bl_flush_lsn: 0,
            })
            .collect();
        Ok(Writes {
            p,
            files,
            page_size,
            redo,
            ages,
            maria: MariaCtx {
                charset: match p.charset {
                    CharacterSet::Latin1 => Charset::Latin1,
                    CharacterSet::Utf8mb4 => Charset::Utf8mb4,
                },
                ..MariaCtx::default()
            },
            flush_list: FlushList::with_capacity(4096),
            cleaner: cleaner::Cleaner::new(&p, cfg, &ages, frames, extent_pages, rotational, actors),
            wake_cleaner: false,
            binlog: p.binlog.map(|b| Box::new(Binlog::new(b, clients))),
            block_sector,
            frames,
            table_pages,
            extent_pages,
            rotational,
            trx,
            io: (0..actors).map(|_| VecDeque::with_capacity(256)).collect(),
            jobs: vec![Job::None; actors],
            pass: Vec::with_capacity(4096),
            lru_pages: 0,
            batch: Vec::with_capacity(128),
            pass_pos: 0,
            sync_target: None,
            log_waiters: Vec::with_capacity(clients + 2),
            ckpt_waiters: Vec::with_capacity(clients),
            released: Vec::with_capacity(clients + 2),
            next_undo: 2 * clients as u32,
            last_update_page: UNDO_FIRST,
            trx_ids: 1000 + 2 * clients as u64,
            seed,
            last_flushed: 0,
            stats: WriteStats::default(),
            clients,
            purge: Purge::new(p.purge, clients),
            wake_purge: false,
            purge_truncate: false,
            purge_mtrs: Vec::with_capacity(4096),
            ibuf_recs: SmallMap::with_capacity(1024),
        })
    }

    /// The server restarts after a clean shutdown (which flushed every dirty page and
    /// wrote a checkpoint: simplification 5, the shutdown's writes are not issued): no
    /// dirty page, no I/O in progress, no waiter; the LSN and the counters go on.
    pub fn restart(&mut self) {
        self.flush_list = FlushList::with_capacity(4096);
        self.drop_io();
        self.cleaner_restart();
        self.purge.restart();
        (self.wake_purge, self.purge_truncate) = (false, false);
    }

    /// The run abandons what never completes (a device that never answers): queued I/O
    /// and waiters are dropped, pages being written are released.
    pub fn abandon(&mut self, bp: &mut BufferPool) {
        for &(key, _) in &self.batch {
            bp.end_write(PageKey(key), false);
        }
        self.percona_abandon(bp);
        self.drop_io();
    }

    /// Every thread's queued I/O, job and wait dropped; what the log appended is durable.
    fn drop_io(&mut self) {
        for q in &mut self.io {
            q.clear();
        }
        self.jobs.fill(Job::None);
        self.pass.clear();
        self.batch.clear();
        (self.pass_pos, self.lru_pages, self.sync_target) = (0, 0, None);
        self.log_waiters.clear();
        self.ckpt_waiters.clear();
        self.released.clear();
        for t in &mut self.trx {
            t.bl_flush_lsn = 0;
        }
        self.redo.settle();
    }

    /// Whether file `file` is open O_DIRECT: the data files (tables, ibdata1) with
    /// O_DIRECT and O_DIRECT_NO_FSYNC; MySQL 5.7's redo log never (its flush method
    /// applies to data files), MariaDB's when it chose unbuffered redo (`mariadb_redo`);
    /// the binary log never.
    pub fn o_direct(&self, file: u32) -> bool {
        if file <= self.files.system() {
            return self.p.method.data_direct();
        }
        let is_log = file < self.files.log(0) + self.files.logs;
        is_log && matches!(&self.redo, Log::Mariadb(l) if !l.mode().buffered)
    }

    /// Whether driver file `file` is a binary log file.
    pub fn is_binlog(&self, file: u32) -> bool {
        let first = self.files.log(0) + self.files.logs;
        (first..first + self.files.binlogs).contains(&file)
    }

    /// What `client`'s commit waits for in the binary log's group commit
    /// ([`Binlog::group_wait`]; [`GroupWait::None`] without the binary log).
    pub fn group_wait(&self, client: usize) -> GroupWait {
        self.binlog.as_ref().map_or(GroupWait::None, |b| b.group_wait(client))
    }

    /// The threads waiting for group commit leader `leader`, itself first
    /// ([`Binlog::group_of`]; empty without the binary log).
    pub fn group_of(&self, leader: usize) -> &[u32] {
        self.binlog.as_ref().map_or(&[], |b| b.group_of(leader))
    }

    /// The resolved options.
    pub fn params(&self) -> &WriteParams {
        &self.p
    }

    /// The files.
    pub fn files(&self) -> DbFiles {
        self.files
    }

    /// The counters.
    pub fn stats(&self) -> WriteStats {
        WriteStats {
            redo: self.redo.stats(),
            purge: self.purge.stats(),
            pages_dirty: self.flush_list.len() as u64,
            checkpoint_age: self.checkpoint_age_now(),
            mariadb: self.p.server == InnodbServer::Mariadb1011,
            binlog: self.binlog.as_ref().map(|b| b.stats()),
            ..self.percona_stats(self.stats)
        }
    }

    /// Dirty pages (Innodb_buffer_pool_pages_dirty).
    pub fn dirty_pages(&self) -> usize {
        self.flush_list.len()
    }

    /// The checkpoint age now, for reports (see [`Writes::checkpoint_age`]).
    pub fn checkpoint_age_now(&self) -> u64 {
        let lsn = self.redo.lsn();
        lsn - self.flush_list.oldest().unwrap_or(lsn).min(lsn)
    }

    /// The log's capacity and the ages that drive flushing.
    pub fn log_ages(&self) -> &LogAges {
        &self.ages
    }

    /// The checkpoint age: redo bytes since the oldest dirty page's first modification.
    pub fn checkpoint_age(&mut self) -> u64 {
        let lsn = self.redo.lsn();
        lsn - self.flush_list.oldest().unwrap_or(lsn).min(lsn)
    }

    /// The current LSN.
    pub fn lsn(&self) -> u64 {
        self.redo.lsn()
    }

    /// The k of row `id` of a `rows`-row table (simplification 2).
    fn row_k(&self, table: u32, id: u64, rows: u64) -> u64 {
        let h = mix(self.seed ^ mix(u64::from(table) << 40 ^ id));
        1 + ((u128::from(h) * u128::from(rows.max(1))) >> 64) as u64
    }

    /// The pages a write lookup visits, root first, into `path` (clustered index, then
    /// k_1 where the change reaches it); returns their number and the position of a k_1
    /// leaf whose miss the change buffer takes instead of a read (`usize::MAX`: none).
    pub fn page_path(&self, layout: &TableLayout, l: &Lookup, path: &mut [u64; MAX_PATH]) -> (usize, usize) {
        let mut part = [0u64; MAX_DEPTH];
        let rows = layout.rows;
        let id = if l.key == 0 { rows } else { l.key.min(rows) };
        let mut n = 0;
        let mut push = |path: &mut [u64; MAX_PATH], part: &[u64]| {
            for &p in part {
                path[n] = p;
                n += 1;
            }
        };
        match (l.op, l.index) {
            (Op::Read | Op::Commit, _) => return (0, usize::MAX),
            (Op::Purge | Op::PurgeReset, _) => {
                // row_purge_reposition_pcur: the clustered record first; then the k_1
                // entry with BTR_DELETE (its leaf's miss may go to the change buffer).
                let d = layout.clustered_path(id, &mut part);
                push(path, &part[..d]);
                if l.op == Op::PurgeReset || layout.secondaries.is_empty() {
                    // A table without a secondary index (TPC-C's new_orders) has no entry
                    // to remove.
                    return (n, usize::MAX);
                }
                let d = layout.secondary_path(self.row_k(l.table, id, rows), &mut part);
                push(path, &part[..d]);
                let bufferable = self.purge_bufferable(l.table, path[n - 1]);
                return (n, if bufferable { n - 1 } else { usize::MAX });
            }
            (Op::Insert, Index::Secondary) => {
                let d = layout.secondary_path(l.key, &mut part);
                push(path, &part[..d]);
                return (n, usize::MAX);
            }
            (Op::Insert, Index::Secondary2) => {
                let d = layout.secondary_path_at(1, l.key, &mut part);
                push(path, &part[..d]);
                return (n, usize::MAX);
            }
            _ => {}
        }
        let d = layout.clustered_path(id, &mut part);
        push(path, &part[..d]);
        if matches!(l.op, Op::UpdateIndex | Op::Delete) && !layout.secondaries.is_empty() {
            let k = self.row_k(l.table, id, rows);
            let d = layout.secondary_path(k, &mut part);
            push(path, &part[..d]);
            // A delete-mark can be buffered; the insert of an index update needs its leaf.
            if l.op == Op::Delete && self.p.change_buffering {
                return (n, n - 1);
            }
        }
        (n, usize::MAX)
    }

    /// The tablespace id of table `table` in the redo records.
    fn space_id(table: u32) -> u32 {
        FIRST_SPACE_ID.saturating_add(table)
    }

    /// The page key of a modified page.
    fn key_of(&self, p: &PageRef) -> PageKey {
        let space = if p.space == 0 { self.files.system() } else { p.space - FIRST_SPACE_ID };
        PageKey::new(self.files.of_space(space), u64::from(p.page))
    }

    /// `log_free_check` before a change: false when the checkpoint age is past
    /// `max_modified_age_sync`; the thread then waits ([`Writes::take_log_released`]
    /// releases it) while the page cleaner flushes (its next pass is due at once).
    pub fn log_free_check(&mut self, client: usize) -> LogFree {
        let target = if self.p.server == InnodbServer::Mariadb1011 {
            // log_checkpoint_margin: wait for the pages up to the target to be written.
            match self.checkpoint_margin() {
                None => return LogFree::Go,
                Some(t) => t,
            }
        } else if self.p.server == InnodbServer::Percona57 {
            return self.percona_log_free_check(client);
        } else {
            if self.checkpoint_age() <= self.ages.max_modified_age_sync {
                return LogFree::Go;
            }
            // log_preflush_pool_modified_pages: flush until the age is back under the
            // async limit.
            self.redo.lsn().saturating_sub(self.ages.max_modified_age_async)
        };
        self.stats.checkpoint_waits += 1;
        self.wake_cleaner = true;
        self.sync_target = Some(self.sync_target.map_or(target, |t| t.max(target)));
        self.ckpt_waiters.push(client as u32);
        LogFree::Wait
    }

    /// Whether a thread waits for the page cleaner's sync flush.
    pub fn sync_flush_wanted(&self) -> bool {
        self.sync_target.is_some()
    }

    /// The change of lookup `l` by client `client`, its pages in the pool (`sec_in_pool`:
    /// the k_1 leaf too, unless its change was buffered): appends its mtrs to the log and
    /// dirties their pages.
    pub fn modify(
        &mut self,
        bp: &mut BufferPool,
        layout: &TableLayout,
        client: usize,
        l: &Lookup,
        sec_in_pool: bool,
        now: Nanos,
    ) {
        if matches!(l.op, Op::Purge | Op::PurgeReset) {
            self.purge_apply(bp, layout, l, sec_in_pool);
            self.after_mtrs(bp, now);
            return;
        }
        let rows = layout.rows;
        let id = if l.key == 0 { rows } else { l.key.min(rows) };
        let (k, id) = match (l.op, l.index) {
            (Op::Insert, Index::Secondary | Index::Secondary2) => (l.key, id),
            _ => (self.row_k(l.table, id, rows), id),
        };
        // The redo records know one secondary index (k_1's format, simplification 9).
        let index = if l.index == Index::Secondary2 { Index::Secondary } else { l.index };
        let mut row = RowCtx::sysbench(layout, id.max(1), k.max(1));
        if l.index == Index::Secondary2 && layout.secondaries.len() > 1 {
            // The entry goes to the second secondary index's leaf (the one `page_path` read).
            let mut path = [0u64; MAX_DEPTH];
            let d = layout.secondary_path_at(1, k.max(1), &mut path);
            row.sec_leaf = path[d - 1] as u32;
            row.sec_leaf_new = row.sec_leaf;
        }
        if self.p.server == InnodbServer::Mariadb1011 {
            // Rows whose history purge has processed (row_purge_reset_trx_id).
            let p = purged_row(row.id, row.k, row.clust_leaf, row.sec_leaf);
            row = RowCtx { sec_leaf_new: row.sec_leaf_new, ..p };
        }
        row.sec_in_pool = sec_in_pool || !self.p.change_buffering;
        self.note_purge(client, l, id, &row);
        let t = &mut self.trx[client];
        let mut env = Env {
            page_size: self.page_size,
            space_id: Self::space_id(l.table),
            ibuf_leaf: IBUF_LEAF,
            ..Env::default()
        };
        env.undo.update_page = t.update_page;
        env.undo.insert_page = t.insert_page;
        env.undo.rseg_page = RSEG_FIRST + (t.redo_id() % u64::from(RSEGS)) as u32;
        env.undo.history_first = Some((self.last_update_page, 3000));
        let log = t.redo.op(l.op, index, &env, &self.maria, &row);
        match l.op {
            Op::UpdateIndex | Op::UpdateNonIndex => self.stats.rows_updated += 1,
            Op::Delete => self.stats.rows_deleted += 1,
            Op::Insert if l.index == Index::Clustered => self.stats.rows_inserted += 1,
            _ => {}
        }
        t.update_used += UNDO_RECORD_BYTES;
        if let Some(b) = &self.binlog {
            t.binlog.op(&b.params().format, l.op, index, l.table);
        }
        self.apply(bp, &log);
        self.after_mtrs(bp, now);
    }

    /// What purge will do with the undo record of client `client`'s change `l` of row
    /// `id` (`innodb::purge`); a buffered delete-mark adds a record to its leaf's count.
    fn note_purge(&mut self, client: usize, l: &Lookup, id: u64, row: &RowCtx) {
        let mariadb = self.p.server == InnodbServer::Mariadb1011;
        let kind = match l.op {
            Op::UpdateIndex => Some(PurgeKind::SecEntry),
            Op::Delete => Some(PurgeKind::DelMark),
            Op::UpdateNonIndex if mariadb => Some(PurgeKind::ResetOnly),
            _ => None,
        };
        let update_undo = match (l.op, l.index) {
            (Op::UpdateIndex | Op::UpdateNonIndex | Op::Delete, _) => true,
            // Over the transaction's own delete-mark: an update undo record. MariaDB's one
            // undo log goes to the history whatever it holds.
            (Op::Insert, Index::Clustered) => self.purge.reinsert(client, l.table, id) || mariadb,
            _ => false,
        };
        let rec = kind.map(|kind| PurgeRec { table: l.table, id, kind });
        self.purge.note(client, rec, update_undo);
        if l.op == Op::Delete && !row.sec_in_pool {
            self.ibuf_buffered(l.table, row.sec_leaf);
        }
    }

    /// Appends `log`'s mtrs and dirties their pages.
    fn apply(&mut self, bp: &mut BufferPool, log: &MtrLog) {
        for m in log.mtrs() {
            self.apply_mtr(bp, m);
        }
    }

    /// Appends one mtr and dirties its pages (`mtr_t::commit`).
    fn apply_mtr(&mut self, bp: &mut BufferPool, m: &Mtr) {
        let start = self.redo.lsn();
        self.redo.append(m.bytes);
        for p in m.pages() {
            let key = self.key_of(p);
            self.flush_list.note_modification(bp, key, start);
        }
    }

    /// COMMIT by `client`: the commit's mtr, then what `innodb_flush_log_at_trx_commit`
    /// asks of the log. A transaction that wrote nothing returns at once.
    pub fn commit(&mut self, bp: &mut BufferPool, client: usize, now: Nanos) -> LogWait {
        let t = &mut self.trx[client];
        let mut env = Env { page_size: self.page_size, ..Env::default() };
        env.undo.update_page = t.update_page;
        env.undo.insert_page = t.insert_page;
        env.undo.rseg_page = RSEG_FIRST + (t.redo_id() % u64::from(RSEGS)) as u32;
        env.undo.history_first = Some((self.last_update_page, 3000));
        // The update undo log stays cached while its page is under 3/4 full.
        let limit = u64::from(self.page_size) * UNDO_REUSE_PERCENT / 100;
        env.undo.update_cached = t.update_used + UNDO_HEADER_BYTES < limit;
        let row = RowCtx::new(1, 1, 0, 0);
        let binlog_bytes = std::mem::replace(&mut t.binlog, TrxBinlog::begin()).bytes();
        if let (Some(b), true) = (&self.binlog, binlog_bytes > 0) {
            // XA: the prepare's mtr now, the commit's (with the binary log position) at
            // the commit stage.
            env.binlog = true;
            env.binlog_pos = b.position().1;
        }
        let log = t.redo.op(Op::Commit, Index::Clustered, &env, &self.maria, &row);
        if log.mtrs().is_empty() {
            return LogWait::Done;
        }
        self.stats.commits += 1;
        // The update undo log goes to the history list (a segment not cached: to purge).
        if self.purge.commit(client, !env.undo.update_cached, t.update_page) {
            self.wake_purge |= self.p.purge.wake_on_commit;
        }
        let t = &mut self.trx[client];
        t.update_used += UNDO_HEADER_BYTES;
        self.last_update_page = t.update_page;
        if !env.undo.update_cached {
            // The segment goes to purge: the next transaction takes a fresh page.
            t.update_page = UNDO_FIRST + self.next_undo % UNDO_PAGES;
            self.next_undo = self.next_undo.wrapping_add(1);
            t.update_used = 0;
        }
        self.trx_ids += 2;
        if env.binlog {
            if let [prepare, commit] = log.mtrs() {
                let commit = *commit;
                self.apply_mtr(bp, prepare);
                self.after_mtrs(bp, now);
                return self.binlog_commit(bp, client, binlog_bytes, commit);
            }
        }
        self.apply(bp, &log);
        self.after_mtrs(bp, now);
        self.trx[client].commit_lsn = self.redo.lsn();
        self.commit_retry(bp, client)
    }

    /// `trx_flush_log_if_needed` for `client`'s commit (again, after a wait); with the
    /// binary log, its group commit's next step.
    pub fn commit_retry(&mut self, bp: &mut BufferPool, client: usize) -> LogWait {
        if self.trx[client].bl_step.is_some() {
            return self.drive_binlog(bp, client);
        }
        let lsn = self.trx[client].commit_lsn;
        match self.p.flush_log_at_trx_commit {
            0 => LogWait::Done,
            1 => self.write_up_to(client, lsn, true),
            _ => self.write_up_to(client, lsn, false),
        }
    }

    /// The master thread's once-a-second `log_buffer_sync_in_background`.
    pub fn background_log_flush(&mut self, actor: usize) -> LogWait {
        let lsn = self.redo.lsn();
        self.write_up_to(actor, lsn, true)
    }

    /// `log_write_up_to(lsn, flush)` by `actor`: see [`LogWait`].
    fn write_up_to(&mut self, actor: usize, lsn: u64, flush: bool) -> LogWait {
        match self.redo.write_up_to(lsn, flush) {
            LogStep::Done => LogWait::Done,
            LogStep::Wait => {
                self.log_waiters.push(actor as u32);
                LogWait::Wait
            }
            LogStep::Write(w) => {
                let q = &mut self.io[actor];
                let o_sync = self.p.method.log_o_sync();
                for fw in &w.writes[..w.n] {
                    q.push_back(FileOp::Write {
                        file: self.files.log(fw.file),
                        offset: fw.offset,
                        len: fw.len.min(u64::from(u32::MAX)) as u32,
                        o_sync,
                    });
                }
                if w.fsync {
                    q.push_back(FileOp::Sync { file: self.files.log(0) });
                }
                self.jobs[actor] = Job::Log { flush: w.fsync };
                LogWait::Io
            }
        }
    }

    /// Threads released since the last call (log waiters, checkpoint waiters), in the
    /// order they waited.
    pub fn take_log_released(&mut self) -> std::vec::Drain<'_, u32> {
        self.released.drain(..)
    }

    /// The next file operation of `actor`'s queue (counted as the server counts them).
    ///
    /// On a block device (XFS, ext4) asynchronous writes submitted together to adjacent
    /// offsets of one file reach the device as one request (the block layer's plug merges
    /// them, up to `BLK_DEF_MAX_SECTORS`); InnoDB still counts each page's write.
    /// The binary log's writes and syncs are the server's (`my_write`, `my_sync`), not
    /// InnoDB's: they are in the binary log's own counters, not in Innodb_data_*.
    pub fn next_op(&mut self, actor: usize) -> Option<FileOp> {
        let mut op = self.io[actor].pop_front()?;
        match &mut op {
            FileOp::Write { file, .. } | FileOp::Sync { file } if self.is_binlog(*file) => {}
            FileOp::Write { len, .. } => {
                self.stats.data_writes += 1;
                self.stats.data_written += u64::from(*len);
            }
            FileOp::WriteAsync { file, offset, len } => {
                self.stats.data_writes += 1;
                self.stats.data_written += u64::from(*len);
                while let (true, Some(&FileOp::WriteAsync { file: f, offset: o, len: l })) =
                    (self.block_sector.is_some(), self.io[actor].front())
                {
                    if f != *file
                        || o != *offset + u64::from(*len)
                        || u64::from(*len) + u64::from(l) > MERGE_MAX_BYTES
                    {
                        break;
                    }
                    self.io[actor].pop_front();
                    self.stats.data_writes += 1;
                    self.stats.data_written += u64::from(l);
                    *len += l;
                }
            }
            FileOp::Sync { .. } => self.stats.data_fsyncs += 1,
            FileOp::Barrier | FileOp::Create { .. } => {}
        }
        Some(op)
    }

    /// `actor`'s queued I/O is done at `now`: the log's write and flush complete (its
    /// waiters are released), a batch's pages are clean (the next batch is queued: More),
    /// a single-page flush's frame is free.
    pub fn io_done(&mut self, bp: &mut BufferPool, actor: usize, now: Nanos) -> AfterIo {
        match std::mem::replace(&mut self.jobs[actor], Job::None) {
            Job::None => AfterIo::Done,
            Job::Log { flush } => {
                self.redo.write_done();
                if flush {
                    self.redo.flush_done();
                }
                // Every waiter asks again; those the write covered return at once.
                self.released.append(&mut self.log_waiters);
                AfterIo::Done
            }
            Job::SinglePage { key } => {
                bp.end_write(PageKey(key), true);
                AfterIo::Done
            }
            Job::Batch => self.batch_done(bp, actor, now),
            Job::LruBatch => self.lru_batch_done(bp, actor),
            Job::Checkpoint { lsn } => self.checkpoint_done(bp, actor, lsn, now),
        }
    }

    /// After a batch: threads waiting for the checkpoint age go on if it is low enough.
    fn release_checkpoint_waiters(&mut self) {
        let Some(target) = self.sync_target else { return };
        let oldest = self.flush_list.oldest().unwrap_or(u64::MAX);
        let lsn = self.redo.lsn();
        let age = lsn - self.last_checkpoint().min(lsn);
        if oldest > target || age <= self.ages.max_modified_age_sync {
            self.sync_target = None;
            self.released.append(&mut self.ckpt_waiters);
        }
    }
}

impl ClientTrx {
    /// The transaction's id, which picks its rollback segment.
    fn redo_id(&self) -> u64 {
        self.redo.id()
    }
}

/// Longest page path of a write lookup: a clustered path and a k_1 path.
pub const MAX_PATH: usize = 2 * MAX_DEPTH;

#[cfg(test)]
mod tests;
