//! The write path's mechanisms, each on its own (the run's tests are in
//! `run::db_write_tests`).

use super::*;
use crate::config::InnodbConfig;

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
    assert!(!w.log_free_check(1));
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
    assert!(w.log_free_check(1), "the age is back under the limit");
}
