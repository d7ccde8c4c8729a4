//! The write path's mechanisms, each on its own (the run's tests are in
//! `run::db_write_tests`).

use super::*;
use crate::config::InnodbConfig;
use crate::sim::time::{MS, US};

const TABLE_PAGES: u64 = 4096;

fn cfg(server: InnodbServer) -> InnodbConfig {
    InnodbConfig {
        innodb_buffer_pool_size: 16 << 20,
        innodb_flush_method: "O_DIRECT".into(),
        server,
        ..InnodbConfig::default()
    }
}

fn files() -> DbFiles {
    DbFiles { tables: 2, logs: 2, binlogs: 0 }
}

/// The write path of `c` for 4 clients on ZFS (`block_sector` None) or a block device.
fn writes(c: &InnodbConfig, block_sector: Option<u64>) -> (Writes, BufferPool) {
    let files = DbFiles { logs: WriteParams::new(c).unwrap().log_files, ..files() };
    let w = Writes::new(c, files, TABLE_PAGES, 4, 7, block_sector, true).unwrap();
    (w, BufferPool::new(c))
}

fn layout() -> TableLayout {
    TableLayout::sysbench(100_000, 16384)
}

/// Client `c` updates row `id`'s k (its pages read into the pool first).
fn update(w: &mut Writes, bp: &mut BufferPool, c: usize, id: u64) {
    let l = Lookup::write(0, Index::Clustered, Op::UpdateIndex, id);
    let mut path = [0u64; MAX_PATH];
    let (n, _) = w.page_path(&layout(), &l, &mut path);
    for &p in &path[..n] {
        bp.insert(PageKey::new(0, p), 0);
    }
    w.modify(bp, &layout(), c, &l, true, 0);
}

fn ops(w: &mut Writes, actor: usize) -> Vec<FileOp> {
    std::iter::from_fn(|| w.next_op(actor)).collect()
}

/// Group commit: a commit finding another's log write in progress waits; the writer's
/// write and fsync cover every commit appended before it started, so the waiter, asked
/// again, is done without I/O of its own.
#[test]
fn a_commit_waits_for_the_writer_and_its_write_covers_it() {
    let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57), None);
    update(&mut w, &mut bp, 0, 10);
    update(&mut w, &mut bp, 1, 20_000);
    assert_eq!(w.commit(&mut bp, 0, 0), LogWait::Io);
    assert_eq!(w.commit(&mut bp, 1, 0), LogWait::Wait);
    let io = ops(&mut w, 0);
    assert!(matches!(io[0], FileOp::Write { file: 3, o_sync: false, .. }), "{io:?}");
    assert_eq!(io.last(), Some(&FileOp::Sync { file: 3 }), "the log file is fsynced after its write");
    assert_eq!(w.io_done(&mut bp, 0, 0), AfterIo::Done);
    assert_eq!(w.take_log_released().collect::<Vec<_>>(), [1]);
    assert_eq!(w.commit_retry(&mut bp, 0), LogWait::Done);
    // Client 1's commit mtr was appended after the write started: a write of its own.
    assert_eq!(w.commit_retry(&mut bp, 1), LogWait::Io);
    assert_eq!(w.stats().redo.os_log_fsyncs, 1);
}

/// innodb_flush_log_at_trx_commit = 2 writes the log at commit without an fsync; 0 does
/// neither (the master thread's once-a-second flush does both).
#[test]
fn flush_log_at_trx_commit_two_writes_and_zero_leaves_it_to_the_master_thread() {
    for setting in [2u8, 0] {
        let c = InnodbConfig { innodb_flush_log_at_trx_commit: Some(setting), ..cfg(InnodbServer::Mysql57) };
        let (mut w, mut bp) = writes(&c, None);
        update(&mut w, &mut bp, 0, 10);
        let step = w.commit(&mut bp, 0, 0);
        if setting == 2 {
            assert_eq!(step, LogWait::Io);
            assert!(ops(&mut w, 0).iter().all(|o| matches!(o, FileOp::Write { .. })), "no fsync");
            w.io_done(&mut bp, 0, 0);
        } else {
            assert_eq!(step, LogWait::Done);
        }
        let master = master_actor(4);
        assert_eq!(w.background_log_flush(master), LogWait::Io);
        assert!(ops(&mut w, master).contains(&FileOp::Sync { file: 3 }));
    }
}

/// innodb_flush_method = O_DSYNC opens the log files O_SYNC: a log write is durable
/// when it returns, and no fsync follows it.
#[test]
fn o_dsync_log_writes_need_no_fsync() {
    let c = InnodbConfig { innodb_flush_method: "O_DSYNC".into(), ..cfg(InnodbServer::Mysql57) };
    let (mut w, mut bp) = writes(&c, None);
    update(&mut w, &mut bp, 0, 10);
    assert_eq!(w.commit(&mut bp, 0, 0), LogWait::Io);
    let io = ops(&mut w, 0);
    assert!(io.iter().all(|o| matches!(o, FileOp::Write { o_sync: true, .. })), "{io:?}");
    w.io_done(&mut bp, 0, 0);
    assert_eq!(w.commit_retry(&mut bp, 0), LogWait::Done);
}

/// MariaDB 10.11 writes its one log file from offset 12288 in 512-byte blocks, buffered
/// on ZFS and O_DIRECT on a 512-byte-sector device alike here; a commit costs one write
/// and one fdatasync.
#[test]
fn mariadb_writes_its_log_in_512_byte_blocks_after_the_header() {
    for sector in [None, Some(512)] {
        let (mut w, mut bp) = writes(&cfg(InnodbServer::Mariadb1011), sector);
        assert_eq!(w.files().logs, 1);
        update(&mut w, &mut bp, 0, 10);
        assert_eq!(w.commit(&mut bp, 0, 0), LogWait::Io);
        let io = ops(&mut w, 0);
        let FileOp::Write { file, offset, len, .. } = io[0] else { panic!("{io:?}") };
        assert_eq!(file, w.files().log(0));
        assert!(offset >= 12288 && offset % 512 == 0 && len % 512 == 0, "{io:?}");
        assert_eq!(io[1], FileOp::Sync { file });
    }
}

/// MySQL 5.7's page cleaner writes a batch through the doublewrite buffer: the copies to
/// ibdata1 (one write per block), ibdata1's fsync, every page in place at once, the wait
/// for them, then each data file's fsync.
#[test]
fn a_batch_is_copied_then_written_in_place_then_synced() {
    let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57), None);
    for id in (1..2000).step_by(200) {
        update(&mut w, &mut bp, 0, id);
    }
    w.commit(&mut bp, 0, 0);
    ops(&mut w, 0);
    w.io_done(&mut bp, 0, 0);
    let cleaner = cleaner_actor(4);
    assert!(w.cleaner_pass(&mut bp, cleaner, SEC, false));
    let io = ops(&mut w, cleaner);
    let sys = w.files().system();
    let FileOp::Write { file, offset, len, .. } = io[0] else { panic!("{io:?}") };
    assert_eq!((file, offset), (sys, 64 * 16384), "block 1 of the doublewrite buffer");
    let copies = u64::from(len) / 16384;
    assert_eq!(io[1], FileOp::Sync { file: sys });
    let writes: Vec<_> = io.iter().filter(|o| matches!(o, FileOp::WriteAsync { .. })).collect();
    assert_eq!(writes.len() as u64, copies, "each copied page is written in place");
    let barrier = io.iter().position(|o| *o == FileOp::Barrier).unwrap();
    assert!(io[barrier + 1..].iter().all(|o| matches!(o, FileOp::Sync { .. })));
    assert!(io[barrier + 1..].contains(&FileOp::Sync { file: 0 }), "the table file is fsynced");
}

/// With no write since its last pass (srv_check_activity false), MySQL 5.7's page
/// cleaner flushes innodb_io_capacity pages a pass (PCT_IO(100)), however many are dirty.
#[test]
fn an_idle_page_cleaner_flushes_io_capacity_pages_a_pass() {
    let c = InnodbConfig { innodb_io_capacity: Some(100), ..cfg(InnodbServer::Mysql57) };
    let (mut w, mut bp) = writes(&c, None);
    for id in (1..100_000).step_by(40) {
        update(&mut w, &mut bp, 0, id);
    }
    let dirty = w.dirty_pages();
    assert!(dirty > 300, "{dirty}");
    let cleaner = cleaner_actor(4);
    assert!(w.cleaner_pass(&mut bp, cleaner, SEC, false));
    assert_eq!(w.pass.len(), 100);
    assert_eq!(w.dirty_pages(), dirty - 100);
}

/// On a block device, asynchronous writes of adjacent pages reach the device as one
/// request (the block layer's merge), while InnoDB counts a write per page; on ZFS each
/// page is its own write(2).
#[test]
fn adjacent_async_writes_merge_on_a_block_device_only() {
    for sector in [Some(512), None] {
        let (mut w, _) = writes(&cfg(InnodbServer::Mysql57), sector);
        for p in [10u64, 11, 12, 40] {
            w.io[0].push_back(FileOp::WriteAsync { file: 0, offset: p * 16384, len: 16384 });
        }
        let io = ops(&mut w, 0);
        let expect = if sector.is_some() { 2 } else { 4 };
        assert_eq!(io.len(), expect, "{io:?}");
        assert_eq!(w.stats().data_writes, 4);
        if sector.is_some() {
            assert_eq!(io[0], FileOp::WriteAsync { file: 0, offset: 10 * 16384, len: 3 * 16384 });
        }
    }
}

/// log_free_check: past max_modified_age_sync a thread waits, and the page cleaner's
/// next pass flushes every page older than the target; the thread is released when the
/// batch is done.
#[test]
fn a_thread_past_the_checkpoint_age_waits_for_a_sync_flush() {
    let c = InnodbConfig { innodb_log_file_size: Some(4 << 20), ..cfg(InnodbServer::Mysql57) };
    let (mut w, mut bp) = writes(&c, None);
    let mut id = 1;
    while w.checkpoint_age() <= w.ages.max_modified_age_sync {
        update(&mut w, &mut bp, 0, id);
        w.commit(&mut bp, 0, 0);
        ops(&mut w, 0);
        w.io_done(&mut bp, 0, 0);
        id = id % 99_000 + 37;
    }
    assert_eq!(w.log_free_check(1), LogFree::Wait);
    assert!(w.sync_flush_wanted() && w.take_cleaner_wake());
    let cleaner = cleaner_actor(4);
    assert!(w.cleaner_pass(&mut bp, cleaner, SEC, true));
    loop {
        ops(&mut w, cleaner);
        if w.io_done(&mut bp, cleaner, SEC) == AfterIo::Done {
            break;
        }
    }
    assert_eq!(w.take_log_released().collect::<Vec<_>>(), [1]);
    assert_eq!(w.log_free_check(1), LogFree::Go, "the age is back under the limit");
}

/// Percona Server 5.7 with a pool of `size` bytes (doublewrite off, O_DIRECT) and
/// `algorithm` for innodb_empty_free_list_algorithm, its write path for 4 clients over two
/// tables of `table_pages` pages, and its pool (free frames only for backoff, as
/// `Database::attach_writes` sets it).
fn percona(size: u64, algorithm: &str, table_pages: u64) -> (Writes, BufferPool) {
    let c = InnodbConfig {
        innodb_buffer_pool_size: size,
        innodb_doublewrite: Some(false),
        innodb_empty_free_list_algorithm: Some(algorithm.into()),
        ..cfg(InnodbServer::Percona57)
    };
    let files = DbFiles { logs: 2, ..files() };
    let w = Writes::new(&c, files, table_pages, 4, 7, None, true).unwrap();
    let mut bp = BufferPool::new(&c);
    bp.set_free_list_only(w.free_list_only());
    (w, bp)
}

/// Fills `bp` with pages of tables 0 and 1 (alternately); those for which `dirty(n)` holds
/// (n: the n-th page inserted) are modified, in that order, on the flush list.
fn fill(w: &mut Writes, bp: &mut BufferPool, dirty: impl Fn(u64) -> bool) {
    for n in 0..bp.capacity() as u64 {
        let key = PageKey::new((n % 2) as u32, n / 2);
        bp.insert(key, 0);
        if dirty(n) {
            w.flush_list.note_modification(bp, key, 1000 + n);
        }
    }
    assert_eq!(bp.free_frames(), 0);
}

/// Pages of `bp` being written (write-fixed).
fn in_flight(bp: &BufferPool) -> usize {
    bp.lru_keys().iter().filter(|&&k| bp.flags(k).is_some_and(|f| f.1)).count()
}

/// Percona Server's LRU manager is a thread of its own on a timer (its first iteration a
/// second after it starts; then as its sleep adapts): each iteration's batch frees the clean
/// pages of the LRU tail at once and writes the dirty ones, freeing each as its write
/// completes, until innodb_lru_scan_depth frames per instance are free; the batch ends once
/// per buffer pool instance that wrote (its wait for the writes, then the fsync of each
/// data file its pages went to). With the free list empty after a batch that did something,
/// it runs again at once; with it full, it sleeps a millisecond longer.
#[test]
fn the_lru_manager_frees_frames_on_its_own_timer() {
    // 1 GiB: 8 instances of 8191 frames.
    let (mut w, mut bp) = percona(1 << 30, "backoff", 1 << 20);
    assert_eq!(bp.capacity(), 8 * 8191);
    fill(&mut w, &mut bp, |n| n % 4 == 0);
    let lru = lru_manager_actor(4);
    assert_eq!(w.lru_next(0), Some(SEC), "its first iteration, after its 1000 ms sleep");
    assert!(w.lru_batch(&mut bp, lru, SEC));
    let evicted = bp.free_frames();
    assert!(evicted > 0, "clean pages of the tail are freed at once");
    let io = ops(&mut w, lru);
    let writes = io.iter().filter(|o| matches!(o, FileOp::WriteAsync { .. })).count();
    assert_eq!(writes, in_flight(&bp));
    assert_eq!(evicted + writes, 8 * 1024, "8 instances x innodb_lru_scan_depth written or freed");
    let barrier = io.iter().position(|o| *o == FileOp::Barrier).unwrap();
    assert_eq!(barrier, writes, "every page in place at once, then the wait");
    let syncs = &io[barrier + 1..];
    assert!(syncs.iter().all(|o| matches!(o, FileOp::Sync { file: 0 | 1 })), "{syncs:?}");
    // One end per instance that wrote, each fsyncing the files its pages went to.
    assert!(syncs.len() > 2 && syncs.len() <= 16, "{} fsyncs", syncs.len());
    // A write that returns frees its page at once (`buf_page_io_complete`).
    let Some(&FileOp::WriteAsync { file, offset, .. }) = io.first() else { panic!("{io:?}") };
    assert!(w.page_written(&mut bp, lru, file, offset));
    assert_eq!(bp.free_frames(), evicted + 1);
    assert_eq!(w.io_done(&mut bp, lru, SEC + 10 * MS), AfterIo::Done);
    assert_eq!(bp.free_frames(), 8 * 1024);
    assert_eq!(in_flight(&bp), 0);
    let s = w.stats();
    assert_eq!(s.pages_flushed, 8 * 1024, "Percona counts the LRU manager's evictions too");
    assert_eq!(s.pages_lru_flushed, 0);
    // It began with an empty free list after a batch: no sleep.
    assert_eq!(w.lru_next(SEC + 10 * MS), Some(SEC + 10 * MS));
    // Now the free list is full: nothing to do, and a millisecond more of sleep.
    assert!(!w.lru_batch(&mut bp, lru, SEC + 10 * MS));
    assert_eq!(w.lru_next(SEC + 10 * MS), Some(SEC + 11 * MS));
}

/// With innodb_empty_free_list_algorithm = backoff a thread that finds the free list empty
/// never scans the LRU list, evicts or writes a page, and wakes no one: it yields (three
/// rounds), then sleeps 1, 2, 4, 16, 16, 32 ... µs, each round an
/// Innodb_buffer_pool_wait_free; once a frame is free it takes it, and its next search
/// starts afresh. With legacy (MySQL 5.7's) the same thread writes a dirty page itself.
#[test]
fn a_backoff_thread_never_writes_a_page() {
    // 32 MiB: 2047 frames, enough for backoff (5 x BUF_LRU_MIN_LEN).
    let (mut w, mut bp) = percona(32 << 20, "backoff", TABLE_PAGES);
    fill(&mut w, &mut bp, |_| true);
    let read = PageKey::new(0, 4000);
    assert!(!bp.insert_for_read(read), "no free frame, and no eviction by the thread");
    let mut steps = Vec::new();
    for _ in 0..12 {
        steps.push(w.no_frame(&mut bp, 0));
    }
    let us = |n: u64| FrameStep::Sleep(n * US);
    assert_eq!(
        steps,
        [
            FrameStep::Yield(2),
            FrameStep::Yield(2),
            FrameStep::Yield(2),
            us(1),
            us(2),
            us(4),
            us(16),
            us(16),
            us(32),
            us(32),
            us(32),
            us(64)
        ]
    );
    assert!(ops(&mut w, 0).is_empty(), "no I/O of its own");
    assert_eq!((bp.free_frames(), in_flight(&bp), w.dirty_pages()), (0, 0, bp.capacity()));
    assert!(!w.take_cleaner_wake(), "it signals no one");
    assert_eq!(w.stats().wait_free, 12, "one per round");
    // The LRU manager's batch frees frames: the thread takes one; its next wait starts over.
    let lru = lru_manager_actor(4);
    assert!(w.lru_batch(&mut bp, lru, SEC));
    ops(&mut w, lru);
    w.io_done(&mut bp, lru, SEC);
    assert!(bp.insert_for_read(read));
    w.frame_taken(&bp, 0);
    while bp.free_frames() > 0 {
        bp.insert_for_read(PageKey::new(1, 4000 - bp.free_frames() as u64));
    }
    assert_eq!(w.no_frame(&mut bp, 0), FrameStep::Yield(2));
    // Legacy: MySQL 5.7's thread writes the dirty tail page itself.
    let (mut w, mut bp) = percona(32 << 20, "legacy", TABLE_PAGES);
    fill(&mut w, &mut bp, |_| true);
    assert!(!bp.insert_for_read(read));
    assert_eq!(w.no_frame(&mut bp, 0), FrameStep::Io);
    assert_eq!(in_flight(&bp), 1);
}

/// Percona Server's page cleaner does flush-list flushing only: with every page dirty and
/// the free list empty, its pass writes the oldest pages and leaves them cached, clean: no
/// frame is freed (MySQL 5.7's pass frees the LRU tail first).
#[test]
fn the_percona_page_cleaner_does_no_lru_batch() {
    let (mut w, mut bp) = percona(32 << 20, "backoff", TABLE_PAGES);
    fill(&mut w, &mut bp, |_| true);
    let dirty = w.dirty_pages();
    let cleaner = cleaner_actor(4);
    // No activity: an idle timed pass, innodb_io_capacity (200) pages.
    assert!(w.cleaner_pass(&mut bp, cleaner, SEC, true));
    let io = ops(&mut w, cleaner);
    assert_eq!(io.iter().filter(|o| matches!(o, FileOp::WriteAsync { .. })).count(), 200);
    assert_eq!(bp.free_frames(), 0);
    assert_eq!(w.io_done(&mut bp, cleaner, SEC + 10 * MS), AfterIo::Done);
    assert_eq!((bp.free_frames(), bp.len(), in_flight(&bp)), (0, bp.capacity(), 0));
    assert_eq!(w.dirty_pages(), dirty - 200, "the oldest pages are clean, still cached");
    assert_eq!(w.stats().pages_flushed, 200);
    let s = w.stats().percona.unwrap().flush;
    assert_eq!((s.flush_background_total_pages, s.lru_batch_flush_total_pages), (200, 0));
    // MySQL 5.7's pass frees frames from the LRU tail.
    let c = InnodbConfig { innodb_buffer_pool_size: 32 << 20, ..cfg(InnodbServer::Mysql57) };
    let (mut m, mut mbp) = writes(&c, None);
    fill(&mut m, &mut mbp, |_| true);
    assert!(m.cleaner_pass(&mut mbp, cleaner, SEC, true));
    loop {
        ops(&mut m, cleaner);
        if m.io_done(&mut mbp, cleaner, SEC) == AfterIo::Done {
            break;
        }
    }
    assert!(mbp.free_frames() > 0);
}

/// Percona Server's log_free_check past max_modified_age_sync: the thread asks a sync flush
/// (the page cleaner is woken) and polls every 10 ms; the woken pass flushes every page
/// older than the target, and the thread's next poll goes on.
#[test]
fn a_percona_thread_past_the_sync_age_polls_until_flushed() {
    let c = InnodbConfig {
        innodb_log_file_size: Some(4 << 20),
        innodb_doublewrite: Some(false),
        ..cfg(InnodbServer::Percona57)
    };
    let (mut w, mut bp) = writes(&c, None);
    let mut id = 1;
    while w.checkpoint_age() <= w.ages.max_modified_age_sync {
        update(&mut w, &mut bp, 0, id);
        w.commit(&mut bp, 0, 0);
        ops(&mut w, 0);
        w.io_done(&mut bp, 0, 0);
        id = id % 99_000 + 37;
    }
    assert_eq!(w.log_free_check(1), LogFree::Poll(10 * MS));
    assert!(w.take_cleaner_wake());
    assert_eq!(w.log_free_check(1), LogFree::Poll(10 * MS), "not flushed yet");
    // Woken before its time: the sync pass.
    let cleaner = cleaner_actor(4);
    assert!(w.cleaner_pass(&mut bp, cleaner, SEC / 2, true));
    loop {
        ops(&mut w, cleaner);
        if w.io_done(&mut bp, cleaner, SEC / 2) == AfterIo::Done {
            break;
        }
    }
    assert!(w.stats().percona.unwrap().flush.flush_sync_total_pages > 0);
    assert_eq!(w.log_free_check(1), LogFree::Go, "the age is back under the limit");
    assert_eq!(w.stats().checkpoint_waits, 1);
}
