//! Purge in the write path: what each batch's lookups are, the change buffer's say over
//! a leaf not in the pool, and each removal's redo.

use super::*;
use crate::config::InnodbConfig;
use crate::db::innodb::redo_records::compressed_size;

fn cfg(server: InnodbServer, change_buffering: Option<&str>) -> InnodbConfig {
    InnodbConfig {
        innodb_buffer_pool_size: 16 << 20,
        innodb_flush_method: "O_DIRECT".into(),
        innodb_change_buffering: change_buffering.map(Into::into),
        server,
        ..InnodbConfig::default()
    }
}

fn writes(c: &InnodbConfig) -> (Writes, BufferPool) {
    let files = DbFiles { tables: 2, logs: WriteParams::new(c).unwrap().log_files, binlogs: 0 };
    (Writes::new(c, files, 4096, 4, 7, None, true).unwrap(), BufferPool::new(c))
}

fn layout() -> TableLayout {
    TableLayout::sysbench(100_000, 16384)
}

/// Client `c`'s change `op` of row `id`, its pages in the pool unless `sec_buffered`.
fn change(w: &mut Writes, bp: &mut BufferPool, c: usize, op: Op, id: u64, sec_buffered: bool) {
    let l = Lookup::write(0, Index::Clustered, op, id);
    let mut path = [0u64; MAX_PATH];
    let (n, _) = w.page_path(&layout(), &l, &mut path);
    let n = if sec_buffered { n - 1 } else { n };
    for &p in &path[..n] {
        bp.insert(PageKey::new(0, p), 0);
    }
    w.modify(bp, &layout(), c, &l, !sec_buffered, 0);
}

/// Row `id`'s k_1 leaf.
fn sec_leaf(w: &Writes, id: u64) -> u64 {
    let mut part = [0u64; MAX_DEPTH];
    let d = layout().secondary_path(w.row_k(0, id, layout().rows), &mut part);
    part[d - 1]
}

/// Each k update, once committed, leaves one purge lookup that removes its delete-marked
/// k_1 entry: after the clustered record, the k_1 leaf; one MLOG_COMP_REC_DELETE (type,
/// space, page, the 8-byte index description, the offset) dirtying that leaf.
#[test]
fn a_committed_k_update_is_purged_by_one_k_1_delete() {
    let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57, None));
    let mut stmt = Statement::default();
    change(&mut w, &mut bp, 0, Op::UpdateIndex, 10, false);
    assert_eq!(w.purge_batch(&mut stmt).pages, 0, "not before the commit");
    w.commit(&mut bp, 0, 0);
    assert!(w.take_purge_wake(), "MySQL 5.7: the commit wakes the coordinator");
    let b = w.purge_batch(&mut stmt);
    assert_eq!((b.pages, b.records, stmt.n), (1, 1, 1));
    let l = stmt.lookups[0];
    assert_eq!((l.op, l.index, l.key), (Op::Purge, Index::Secondary, 10));
    let mut path = [0u64; MAX_PATH];
    let (n, bufferable) = w.page_path(&layout(), &l, &mut path);
    let leaf = sec_leaf(&w, 10);
    assert_eq!(path[n - 1], leaf);
    assert_eq!(bufferable, usize::MAX, "nothing buffered for the leaf");
    // The page cleaner wrote everything: the purge's leaf is dirty again.
    while w.flush_list.pop_oldest(&mut bp, u64::MAX).is_some() {}
    let lsn = w.lsn();
    w.modify(&mut bp, &layout(), w.purge_actor(), &l, true, 0);
    let expected = 1 + compressed_size(FIRST_SPACE_ID) + compressed_size(leaf as u32) + 8 + 2;
    assert_eq!(w.lsn() - lsn, expected);
    assert_eq!(w.dirty_pages(), 1);
    let s = w.purge_stats();
    assert_eq!((s.upd_exist_or_extern_records, s.del_mark_records, s.history_len), (1, 0, 1));
}

/// A purge whose k_1 leaf is not in the pool: with innodb_change_buffering = all its
/// delete is buffered only while at least two records are buffered for the leaf (two
/// buffered delete-marks: the first purge is buffered, the second reads the leaf); a
/// read of the leaf merges them; with none the leaf is always read.
#[test]
fn a_purge_of_a_leaf_not_in_the_pool_is_buffered_only_over_two_buffered_records() {
    for buffering in [None, Some("none"), Some("purges")] {
        let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57, buffering));
        let a = 10;
        let leaf = sec_leaf(&w, a);
        let b = (11..100_000).find(|&id| sec_leaf(&w, id) == leaf).expect("a row in the same k_1 leaf");
        // "purges" buffers no delete-mark: the leaves are read by the deletes.
        let marks_buffered = buffering.is_none();
        change(&mut w, &mut bp, 0, Op::Delete, a, marks_buffered);
        change(&mut w, &mut bp, 1, Op::Delete, b, marks_buffered);
        w.commit(&mut bp, 0, 0);
        w.commit(&mut bp, 1, 0);
        let mut stmt = Statement::default();
        assert_eq!(w.purge_batch(&mut stmt).records, 2);
        let mut path = [0u64; MAX_PATH];
        let (first, second) = (stmt.lookups[0], stmt.lookups[1]);
        assert_eq!((first.op, first.index), (Op::Purge, Index::Clustered), "a delete: k_1 and clustered");
        let (n, bufferable) = w.page_path(&layout(), &first, &mut path);
        if marks_buffered {
            assert_eq!(bufferable, n - 1, "two delete-marks buffered for the leaf");
            let lsn = w.lsn();
            w.modify(&mut bp, &layout(), w.purge_actor(), &first, false, 0);
            assert!(w.lsn() > lsn);
            assert_eq!(w.purge_stats().ibuf_deletes, 1);
            let (_, bufferable) = w.page_path(&layout(), &second, &mut path);
            assert_eq!(bufferable, usize::MAX, "one record left: min_n_recs < 2, the leaf is read");
        } else {
            assert_eq!(bufferable, usize::MAX, "{buffering:?}: the leaf is read");
        }
    }
    // A read of the leaf merges its buffered records.
    let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57, None));
    let leaf = sec_leaf(&w, 10);
    let b = (11..100_000).find(|&id| sec_leaf(&w, id) == leaf).unwrap();
    change(&mut w, &mut bp, 0, Op::Delete, 10, true);
    change(&mut w, &mut bp, 0, Op::Delete, b, true);
    assert!(w.purge_bufferable(0, leaf));
    w.page_read(PageKey::new(0, leaf));
    assert!(!w.purge_bufferable(0, leaf));
}

/// oltp_read_write's DELETE then INSERT of one id: purge removes the k_1 entry and keeps
/// the clustered record the insert reused.
#[test]
fn a_reinserted_row_keeps_its_clustered_record() {
    let (mut w, mut bp) = writes(&cfg(InnodbServer::Mysql57, None));
    change(&mut w, &mut bp, 0, Op::Delete, 10, false);
    change(&mut w, &mut bp, 0, Op::Insert, 10, false);
    w.commit(&mut bp, 0, 0);
    let mut stmt = Statement::default();
    w.purge_batch(&mut stmt);
    assert_eq!(stmt.n, 1);
    assert_eq!((stmt.lookups[0].op, stmt.lookups[0].index), (Op::Purge, Index::Secondary));
}

/// A non-index update: MySQL 5.7 skips its log whole (TRX_UNDO_DEL_MARKS cleared: a page
/// handled, no record); MariaDB 10.11 resets the row's DB_TRX_ID (a WRITE on the
/// clustered leaf), and wakes its coordinator from the master thread, not at commit.
#[test]
fn a_non_index_update_is_skipped_by_mysql_and_reset_by_mariadb() {
    for server in [InnodbServer::Mysql57, InnodbServer::Mariadb1011] {
        let (mut w, mut bp) = writes(&cfg(server, None));
        change(&mut w, &mut bp, 0, Op::UpdateNonIndex, 10, false);
        w.commit(&mut bp, 0, 0);
        let mariadb = server == InnodbServer::Mariadb1011;
        assert_eq!(w.take_purge_wake(), !mariadb);
        assert_eq!(w.purge_next(5).is_some(), mariadb);
        let mut stmt = Statement::default();
        let b = w.purge_batch(&mut stmt);
        assert_eq!(b.pages, 1);
        if mariadb {
            assert_eq!((stmt.n, stmt.lookups[0].op), (1, Op::PurgeReset));
            let lsn = w.lsn();
            w.modify(&mut bp, &layout(), w.purge_actor(), &stmt.lookups[0], true, 0);
            assert!(w.lsn() > lsn);
            // MariaDB truncates after every batch.
            assert!(b.truncate);
        } else {
            assert_eq!(stmt.n, 0);
            assert!(!b.truncate, "MySQL 5.7 truncates every 128th call");
        }
        w.purge_batch_done(&mut bp, 0);
        assert_eq!(w.purge_stats().history_len, u64::from(!mariadb));
    }
}

/// The options: each server's defaults, the servers' ranges, a DML delay refused.
#[test]
fn purge_options_have_each_servers_defaults_and_ranges() {
    let p = WriteParams::new(&cfg(InnodbServer::Mysql57, None)).unwrap().purge;
    assert_eq!((p.threads, p.batch_size, p.truncate_frequency, p.buffer_purges), (4, 300, 128, true));
    let p = WriteParams::new(&cfg(InnodbServer::Mariadb1011, None)).unwrap().purge;
    assert_eq!(
        (p.batch_size, p.truncate_frequency, p.buffer_purges, p.wake_on_commit),
        (1000, 1, false, false)
    );
    for (c, name) in [
        (
            InnodbConfig { innodb_purge_threads: Some(0), ..cfg(InnodbServer::Mysql57, None) },
            "innodb_purge_threads",
        ),
        (
            InnodbConfig { innodb_purge_batch_size: Some(5001), ..cfg(InnodbServer::Mysql57, None) },
            "innodb_purge_batch_size",
        ),
        (
            InnodbConfig { innodb_max_purge_lag: Some(1000), ..cfg(InnodbServer::Mysql57, None) },
            "innodb_max_purge_lag",
        ),
        (
            InnodbConfig {
                innodb_purge_rseg_truncate_frequency: Some(129),
                ..cfg(InnodbServer::Mysql57, None)
            },
            "innodb_purge_rseg_truncate_frequency",
        ),
    ] {
        let e = WriteParams::new(&c).unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
    }
}
