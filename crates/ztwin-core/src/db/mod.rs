//! Databases above the filesystem, as a layer the driver calls: a statement's lookups
//! become page accesses ([`Database::page_path`]); a page is found in the database's
//! cache or read from its file ([`Database::access`] and the read's life:
//! [`Database::insert_for_read`], [`Database::read_done`]).
//!
//! One database today (InnoDB: MySQL 5.7, Percona Server 5.7 and MariaDB 10.11); the enum is the seam for
//! PostgreSQL beside it: every match on it is exhaustive, so the compiler shows each place
//! a new engine must answer.
pub mod binlog;
pub mod innodb;

use crate::config::InnodbConfig;
use crate::sim::time::Nanos;
use crate::workload::statement::{Index, Lookup, Op};
use innodb::btree::TableLayout;
use innodb::buffer_pool::{BufferPool, PageKey};
use innodb::row_locks::{RowLockStats, RowLocks};
pub use innodb::writes::MAX_PATH;
use innodb::writes::{AfterIo, FileOp, FrameStep, LogFree, LogWait, WriteStats, Writes};

/// InnoDB: the buffer pool over the tables' B+trees.
pub struct Innodb {
    /// The buffer pool (midpoint LRU, free frames, reads placed before they complete).
    pub bp: BufferPool,
    /// Where each key's pages are: the layouts of the dataset's distinct tables, table `t`
    /// laid out as `layouts[t % layouts.len()]` (sysbench's tables are alike: one layout;
    /// a TPC-C dataset repeats its nine tables per set).
    pub layouts: Vec<TableLayout>,
    /// innodb_page_size, bytes.
    pub page_size: u32,
    /// The write path, when the workload writes (`innodb::writes`).
    pub writes: Option<Box<Writes>>,
    /// The record locks the workload's transactions wait for (`innodb::row_locks`), when
    /// the workload writes.
    pub row_locks: Option<RowLocks>,
}

impl Innodb {
    /// Table `table`'s layout.
    #[inline]
    pub fn layout(&self, table: u32) -> &TableLayout {
        &self.layouts[table as usize % self.layouts.len()]
    }
}

/// The database the workload's statements run in.
pub enum Database {
    /// InnoDB.
    Innodb(Innodb),
}

impl Database {
    /// InnoDB over tables laid out as `table` (built for `cfg`'s innodb_page_size).
    pub fn innodb(cfg: &InnodbConfig, table: TableLayout) -> Database {
        Database::innodb_tables(cfg, vec![table])
    }

    /// InnoDB over tables laid out as `layouts` (table `t` as `layouts[t % len]`).
    pub fn innodb_tables(cfg: &InnodbConfig, layouts: Vec<TableLayout>) -> Database {
        assert!(!layouts.is_empty(), "a database has a table layout");
        Database::Innodb(Innodb {
            bp: BufferPool::new(cfg),
            layouts,
            page_size: cfg.innodb_page_size,
            writes: None,
            row_locks: None,
        })
    }

    /// Record locks for `threads` user threads (a workload that writes).
    pub fn attach_row_locks(&mut self, threads: usize) {
        match self {
            Database::Innodb(d) => d.row_locks = Some(RowLocks::new(threads)),
        }
    }

    /// Thread `client` asks at `now` for the exclusive lock on row `key` of `table`
    /// (`innodb::row_locks`): true when it holds it, false when it waits (its grant is
    /// reported by [`Database::release_row_locks`]).
    pub fn row_lock(&mut self, client: usize, table: u32, key: u64, now: Nanos) -> bool {
        match self {
            Database::Innodb(d) => d
                .row_locks
                .as_mut()
                .is_none_or(|l| l.lock(client, innodb::row_locks::row_key(table, key), now)),
        }
    }

    /// Thread `client`'s transaction commits at `now`: its row locks go to their first
    /// waiters, each named to `granted`.
    pub fn release_row_locks(&mut self, client: usize, now: Nanos, granted: impl FnMut(usize)) {
        match self {
            Database::Innodb(d) => {
                if let Some(l) = d.row_locks.as_mut() {
                    l.release_all(client, now, granted);
                }
            }
        }
    }

    /// The row lock counters (a workload that writes).
    pub fn row_lock_stats(&self) -> Option<RowLockStats> {
        match self {
            Database::Innodb(d) => d.row_locks.as_ref().map(|l| l.stats()),
        }
    }

    /// Attaches the write path (a workload that writes).
    pub fn attach_writes(&mut self, w: Writes) {
        match self {
            Database::Innodb(d) => {
                if w.params().server == crate::config::InnodbServer::Mariadb1011 {
                    // MariaDB's page cleaner frees frames as a thread of its own.
                    d.bp.set_refill(None);
                }
                if w.free_list_only() {
                    // Percona Server's backoff: only its LRU manager frees frames.
                    d.bp.set_free_list_only(true);
                }
                d.writes = Some(Box::new(w));
            }
        }
    }

    /// The write path, if attached.
    pub fn writes(&self) -> Option<&Writes> {
        match self {
            Database::Innodb(d) => d.writes.as_deref(),
        }
    }

    /// The data file of table `name` (InnoDB's file-per-table: `NAME.ibd`).
    pub fn file_name(&self, table: &str) -> String {
        match self {
            Database::Innodb(_) => format!("{table}.ibd"),
        }
    }

    /// A table's data file size in bytes (the first table's: all of sysbench's are alike).
    pub fn file_size(&self) -> u64 {
        match self {
            Database::Innodb(d) => d.layouts[0].file_size(),
        }
    }

    /// Sizes the buffer pool's page table for the tables' data files of `file_bytes`
    /// bytes (table `t`'s file is `file_bytes[t]`).
    pub fn size_page_table(&mut self, file_bytes: &[u64]) {
        match self {
            Database::Innodb(d) => {
                d.bp.size_page_table(&innodb::buffer_pool::file_pages(file_bytes, d.page_size))
            }
        }
    }

    /// Table `table`'s data file size in bytes.
    pub fn table_file_size(&self, table: u32) -> u64 {
        match self {
            Database::Innodb(d) => d.layout(table).file_size(),
        }
    }

    /// The pages one lookup visits, root first, into `path`; returns how many, and the
    /// position of a secondary leaf whose miss the change buffer takes instead of a read
    /// (`usize::MAX`: none).
    pub fn page_path(&self, l: &Lookup, path: &mut [u64; MAX_PATH]) -> (usize, usize) {
        if l.op == Op::Commit {
            return (0, usize::MAX);
        }
        match self {
            Database::Innodb(d) => {
                let layout = d.layout(l.table);
                if l.writes() {
                    if let Some(w) = &d.writes {
                        return w.page_path(layout, l, path);
                    }
                }
                // The path's first MAX_DEPTH slots, written in place (MAX_PATH is twice that).
                let (part, _) = path
                    .split_first_chunk_mut::<{ innodb::btree::MAX_DEPTH }>()
                    .expect("MAX_PATH >= MAX_DEPTH");
                let n = match l.index {
                    Index::Clustered => layout.clustered_path(l.key, part),
                    Index::Secondary => layout.secondary_path(l.key, part),
                    Index::Secondary2 => layout.secondary_path_at(1, l.key, part),
                };
                (n, usize::MAX)
            }
        }
    }

    /// The leaf a range scan `l` reads after its first `step` leaves (step 1: the one after
    /// the first), if the range reaches it.
    #[inline]
    pub fn next_leaf(&self, l: &Lookup, step: u32) -> Option<u64> {
        match self {
            Database::Innodb(d) => match l.index {
                Index::Clustered => {
                    d.layout(l.table).clustered_next_leaf(l.key, u64::from(l.span), u64::from(step))
                }
                // A secondary range reads the leaves its positions span.
                Index::Secondary | Index::Secondary2 if l.span > 1 => {
                    let ix = usize::from(l.index == Index::Secondary2);
                    d.layout(l.table).secondary_next_leaf(ix, l.key, u64::from(l.span), u64::from(step))
                }
                Index::Secondary | Index::Secondary2 => None,
            },
        }
    }

    /// A page access at `now`: true if the page is in the cache (a hit, with its LRU
    /// effect), false if it must be read.
    pub fn access(&mut self, key: PageKey, now: Nanos) -> bool {
        match self {
            Database::Innodb(d) => d.bp.access(key, now),
        }
    }

    /// A read of `key` by thread `actor` is issued: the page takes its frame now
    /// (`buf_page_init_for_read`). Returns the byte range of the data file to read:
    /// (offset, length); None when no frame could be had (see
    /// [`BufferPool::insert_for_read`]).
    pub fn insert_for_read(&mut self, actor: usize, key: PageKey, page_no: u64) -> Option<(u64, u32)> {
        match self {
            Database::Innodb(d) => {
                if !d.bp.insert_for_read(key) {
                    return None;
                }
                if let Some(w) = &mut d.writes {
                    w.frame_taken(&d.bp, actor);
                }
                Some((page_no * d.page_size as u64, d.page_size))
            }
        }
    }

    /// The read of `key` completed and the page is accessed for the first time.
    pub fn read_done(&mut self, key: PageKey, now: Nanos) {
        match self {
            Database::Innodb(d) => {
                d.bp.first_access(key, now);
                if let Some(w) = &mut d.writes {
                    w.page_read(key);
                }
            }
        }
    }

    /// Starts bringing `key`'s cache slot into the CPU caches.
    pub fn prefetch(&self, key: PageKey) {
        match self {
            Database::Innodb(d) => d.bp.prefetch(key),
        }
    }

    /// Starts bringing a cached page's LRU node into the CPU caches.
    pub fn prefetch_node(&self, key: PageKey) {
        match self {
            Database::Innodb(d) => d.bp.prefetch_node(key),
        }
    }

    /// Pages the cache holds at most.
    pub fn cache_pages(&self) -> usize {
        match self {
            Database::Innodb(d) => d.bp.capacity(),
        }
    }

    /// Frames on the free list now.
    pub fn free_frames(&self) -> usize {
        match self {
            Database::Innodb(d) => d.bp.free_frames(),
        }
    }

    /// The machine restarted: the cache starts empty.
    pub fn restart(&mut self, cfg: &InnodbConfig) {
        match self {
            Database::Innodb(d) => {
                d.bp = d.bp.restarted(cfg);
                if let Some(w) = &mut d.writes {
                    w.restart();
                    if w.params().server == crate::config::InnodbServer::Mariadb1011 {
                        d.bp.set_refill(None);
                    }
                    d.bp.set_free_list_only(w.free_list_only());
                }
            }
        }
    }

    /// `log_free_check` by `client` before a change (see `Writes::log_free_check`).
    pub fn log_free_check(&mut self, client: usize) -> LogFree {
        match self {
            Database::Innodb(d) => d.writes.as_mut().map_or(LogFree::Go, |w| w.log_free_check(client)),
        }
    }

    /// The change of write lookup `l` by `client`, its pages visited.
    pub fn modify(&mut self, client: usize, l: &Lookup, sec_in_pool: bool, now: Nanos) {
        match self {
            Database::Innodb(d) => {
                if let Some(w) = &mut d.writes {
                    let layout = &d.layouts[l.table as usize % d.layouts.len()];
                    w.modify(&mut d.bp, layout, client, l, sec_in_pool, now);
                }
            }
        }
    }

    /// COMMIT by `client` (see `Writes::commit`).
    pub fn commit(&mut self, client: usize, now: Nanos) -> LogWait {
        match self {
            Database::Innodb(d) => match &mut d.writes {
                Some(w) => w.commit(&mut d.bp, client, now),
                None => LogWait::Done,
            },
        }
    }

    /// The commit of `client` asks the log again after a wait or its own write.
    pub fn commit_retry(&mut self, client: usize) -> LogWait {
        match self {
            Database::Innodb(d) => {
                d.writes.as_mut().map_or(LogWait::Done, |w| w.commit_retry(&mut d.bp, client))
            }
        }
    }

    /// The master thread's once-a-second log flush, by actor `actor`.
    pub fn background_log_flush(&mut self, actor: usize) -> LogWait {
        match self {
            Database::Innodb(d) => d.writes.as_mut().map_or(LogWait::Done, |w| w.background_log_flush(actor)),
        }
    }

    /// The next file operation of `actor`.
    pub fn next_op(&mut self, actor: usize) -> Option<FileOp> {
        match self {
            Database::Innodb(d) => d.writes.as_mut().and_then(|w| w.next_op(actor)),
        }
    }

    /// `actor`'s file operations are done.
    pub fn io_done(&mut self, actor: usize, now: Nanos) -> AfterIo {
        match self {
            Database::Innodb(d) => match &mut d.writes {
                Some(w) => w.io_done(&mut d.bp, actor, now),
                None => AfterIo::Done,
            },
        }
    }

    /// Threads the log writer or the page cleaner released since the last call.
    pub fn take_released(&mut self, out: &mut Vec<u32>) {
        match self {
            Database::Innodb(d) => {
                if let Some(w) = &mut d.writes {
                    out.extend(w.take_log_released());
                }
            }
        }
    }

    /// A thread found no frame: MySQL 5.7's writes a dirty LRU page itself (its I/O is
    /// queued), MariaDB's waits for the page cleaner, Percona Server's backs off (yields or
    /// sleeps, then asks again).
    pub fn no_frame(&mut self, actor: usize) -> FrameStep {
        match self {
            Database::Innodb(d) => match &mut d.writes {
                Some(w) => w.no_frame(&mut d.bp, actor),
                None => FrameStep::Wait,
            },
        }
    }

    /// Whether a thread asked for the page cleaner since the last call.
    pub fn take_cleaner_wake(&mut self) -> bool {
        match self {
            Database::Innodb(d) => d.writes.as_mut().is_some_and(|w| w.take_cleaner_wake()),
        }
    }

    /// When the page cleaner, done with a pass begun at `started`, runs again (None: when a
    /// thread wakes it); `waiters`: threads wait for it.
    pub fn cleaner_next(&self, now: Nanos, started: Nanos, waiters: bool) -> Option<Nanos> {
        match self {
            Database::Innodb(d) => {
                d.writes.as_ref().and_then(|w| w.cleaner_next(&d.bp, now, started, waiters))
            }
        }
    }

    /// A page cleaner pass (see `Writes::cleaner_pass`).
    pub fn cleaner_pass(&mut self, actor: usize, now: Nanos, active: bool) -> bool {
        match self {
            Database::Innodb(d) => {
                d.writes.as_mut().is_some_and(|w| w.cleaner_pass(&mut d.bp, actor, now, active))
            }
        }
    }

    /// The run abandons what never completes: the write path drops its I/O and waiters.
    pub fn abandon(&mut self) {
        match self {
            Database::Innodb(d) => {
                if let Some(w) = &mut d.writes {
                    w.abandon(&mut d.bp);
                }
            }
        }
    }

    /// A write of `offset` in driver file `file` by thread `actor` returned: if it was a
    /// page of the page cleaner's (or the LRU manager's) batch, the page is clean now
    /// (true: a frame may be had).
    pub fn page_written(&mut self, actor: usize, file: u32, offset: u64) -> bool {
        match self {
            Database::Innodb(d) => {
                d.writes.as_mut().is_some_and(|w| w.page_written(&mut d.bp, actor, file, offset))
            }
        }
    }

    /// The database's own threads when it writes (after the clients: the page cleaner, the
    /// master thread, Percona Server's LRU manager, the purge coordinator); 0 without the
    /// write path.
    pub fn db_threads(&self) -> usize {
        self.writes().map_or(0, |w| w.db_threads())
    }

    /// The purge coordinator's slot (None without the write path).
    pub fn purge_actor(&self) -> Option<usize> {
        self.writes().map(|w| w.purge_actor())
    }

    /// The purge threads (the coordinator's slot and its workers' after it; 0 without the
    /// write path).
    pub fn purge_threads(&self) -> usize {
        self.writes().map_or(0, |w| w.purge_threads())
    }

    /// Whether a commit asked for the purge coordinator since the last call.
    pub fn take_purge_wake(&mut self) -> bool {
        match self {
            Database::Innodb(d) => d.writes.as_mut().is_some_and(|w| w.take_purge_wake()),
        }
    }

    /// When the purge coordinator, with nothing to purge at `now`, runs again (None: when
    /// a commit wakes it).
    pub fn purge_next(&self, now: Nanos) -> Option<Nanos> {
        self.writes().and_then(|w| w.purge_next(now))
    }

    /// One purge batch: its records as purge lookups in `out` (see `Writes::purge_batch`).
    pub fn purge_batch(&mut self, out: &mut crate::workload::statement::Statement) -> innodb::purge::Batch {
        match self {
            Database::Innodb(d) => d.writes.as_mut().map_or_else(Default::default, |w| w.purge_batch(out)),
        }
    }

    /// The purge batch's records are done (its truncation, if it truncates).
    pub fn purge_batch_done(&mut self, now: Nanos) {
        match self {
            Database::Innodb(d) => {
                if let Some(w) = &mut d.writes {
                    w.purge_batch_done(&mut d.bp, now);
                }
            }
        }
    }

    /// When Percona Server's LRU manager, done at `now`, runs again (None: no LRU manager).
    pub fn lru_next(&self, now: Nanos) -> Option<Nanos> {
        self.writes().and_then(|w| w.lru_next(now))
    }

    /// Percona Server's LRU manager (thread `actor`)'s batch at `now`: true if it queued
    /// I/O (see `Writes::lru_batch`).
    pub fn lru_batch(&mut self, actor: usize, now: Nanos) -> bool {
        match self {
            Database::Innodb(d) => d.writes.as_mut().is_some_and(|w| w.lru_batch(&mut d.bp, actor, now)),
        }
    }

    /// What a write of driver file `file` does to its inode (XFS/ext4's journal): the
    /// binary log grows as it is written (an extension), every other file is written in
    /// place (preallocated).
    pub fn write_kind(&self, file: u32) -> crate::fs::journal::WriteKind {
        use crate::fs::journal::WriteKind;
        match self.writes() {
            Some(w) if w.is_binlog(file) => WriteKind::Extend,
            _ => WriteKind::Overwrite,
        }
    }

    /// Whether the server syncs its files with fdatasync (MariaDB's `os_file_sync_posix`)
    /// rather than fsync (MySQL 5.7's `os_file_fsync_posix`).
    pub fn syncs_with_fdatasync(&self) -> bool {
        self.writes().is_some_and(|w| w.params().server == crate::config::InnodbServer::Mariadb1011)
    }

    /// Whether a thread waits for a sync flush of the page cleaner.
    pub fn sync_flush_wanted(&self) -> bool {
        self.writes().is_some_and(|w| w.sync_flush_wanted())
    }

    /// The write path's counters, if it is attached.
    pub fn write_stats(&self) -> Option<WriteStats> {
        let row_locks = self.row_lock_stats().unwrap_or_default();
        self.writes().map(|w| WriteStats { row_locks, ..w.stats() })
    }

    /// Whether the database opens file `file` with O_DIRECT (its data files by
    /// innodb_flush_method; see `Writes::o_direct` for the logs).
    pub fn o_direct(&self, file: u32, cfg: &InnodbConfig) -> bool {
        match self {
            Database::Innodb(d) => match &d.writes {
                Some(w) => w.o_direct(file),
                None => innodb::writes::FlushMethod::parse(&cfg.innodb_flush_method)
                    .is_some_and(|m| m.data_direct()),
            },
        }
    }

    /// The smallest read a data file sees (a page).
    pub fn page_size(&self) -> u32 {
        match self {
            Database::Innodb(d) => d.page_size,
        }
    }
}
