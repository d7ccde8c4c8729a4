//! InnoDB purge: the history list of committed update undo logs, and the purge
//! coordinator's batches that remove what their delete-marks left once no read view
//! needs it.
//!
//! Mechanism.
//! - A transaction's commit puts its update undo log first in its rollback segment's
//!   history list and grows `trx_sys->rseg_history_len` ("History list length";
//!   INNODB_METRICS `trx_rseg_history_len`) by one (`trx_purge_add_update_undo_to_history`).
//!   MySQL 5.7 then wakes the purge coordinator if it sleeps
//!   (`srv_wake_purge_thread_if_not_active`); MariaDB 10.11's coordinator task is
//!   submitted by the master callback once a second (`srv_master_callback` →
//!   `purge_sys_t::wake_if_not_active`). Since 10.3 a MariaDB transaction has one undo
//!   log, which goes to the history whatever it wrote.
//! - The coordinator (`srv_do_purge`, MariaDB `purge_coordinator_state::do_purge`) calls
//!   `trx_purge` in a loop while a call handles something: each takes the oldest logs in
//!   commit order (`TrxUndoRsegsIterator`, the purge queue) whose serialisation number is
//!   below the oldest read view's low limit (`clone_oldest_view`), up to
//!   `innodb_purge_batch_size` undo pages (`trx_purge_attach_undo_recs`: a log counts one
//!   page, `trx_purge_rseg_get_next_history_log`, plus one per further page it spans),
//!   and hands their records to the purge threads. A log that needs no index visit
//!   (TRX_UNDO_DEL_MARKS cleared at commit: only non-index updates) is skipped whole
//!   (`trx_purge_read_undo_rec`: the dummy record). When nothing was handled the
//!   coordinator sleeps (`srv_purge_coordinator_suspend`: 10 ms, then untimed until a
//!   commit wakes it; MariaDB: until the next master callback).
//! - Each record (`row_purge_record_func`): a delete-mark (TRX_UNDO_DEL_MARK_REC,
//!   `row_purge_del_mark`; INNODB_METRICS `purge_del_mark_records`) removes the
//!   delete-marked k_1 entry (`row_purge_remove_sec_if_poss`) then the clustered record
//!   unless a later change of the same row moved its roll pointer
//!   (`row_purge_remove_clust_if_poss`: oltp_read_write's INSERT over its own DELETE); an
//!   update that changed k (TRX_UNDO_UPD_EXIST_REC, `row_purge_upd_exist_or_extern`;
//!   `purge_upd_exist_or_extern_records`) removes the old k_1 entry. Either first finds
//!   the clustered record (`row_purge_reposition_pcur`, for `row_purge_poss_sec`), then
//!   the k_1 leaf with BTR_DELETE (`btr_cur_search_to_nth_level`): a leaf not in the
//!   pool takes an IBUF_OP_DELETE in the change buffer instead of a read when
//!   innodb_change_buffering allows purges ("all", "purges") and at least two records
//!   for the leaf are buffered, not counting buffered deletes (`ibuf_insert_low`:
//!   `min_n_recs < 2` refuses, "we never buffer IBUF_OP_DELETE unless some
//!   IBUF_OP_INSERT or IBUF_OP_DELETE_MARK have been previously buffered for the page");
//!   else the leaf is read. A read merges what the change buffer holds for it
//!   (`ibuf_merge_or_delete_for_page`). Each removal is a mini-transaction after
//!   `log_free_check` (its records: `redo_records::purge_*`, `mariadb_redo::records`).
//!   MariaDB also resets DB_TRX_ID and DB_ROLL_PTR of a row whose history it processed
//!   (`row_purge_reset_trx_id`), for every update undo record.
//! - Truncation (`trx_purge_truncate_history`): the purged logs leave the history list
//!   (`trx_purge_remove_log_hdr`: history length less one each), a log whose segment was
//!   not cached freeing its segment (`trx_purge_free_segment`). MySQL 5.7 truncates in
//!   every `innodb_purge_rseg_truncate_frequency`th call (`srv_do_purge`: `++count %
//!   rseg_truncate_frequency`); MariaDB 10.11 after every batch (`purge_truncation_task`,
//!   MDEV-32050), so its history length stays near what is not purged yet.
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/`: `trx/trx0purge.cc`
//! (`trx_purge_add_update_undo_to_history`, `trx_purge_attach_undo_recs`,
//! `trx_purge_fetch_next_rec`, `trx_purge_read_undo_rec`,
//! `trx_purge_rseg_get_next_history_log`, `trx_purge_truncate_history`,
//! `trx_purge_remove_log_hdr`, `trx_purge_free_segment`, `trx_purge_dml_delay`),
//! `row/row0purge.cc` (`row_purge_record_func`, `row_purge_del_mark`,
//! `row_purge_upd_exist_or_extern`, `row_purge_remove_sec_if_poss_leaf`,
//! `row_purge_remove_clust_if_poss_low`), `srv/srv0srv.cc` (`srv_do_purge`,
//! `srv_purge_coordinator_suspend`, `srv_purge_coordinator_thread`,
//! `srv_wake_purge_thread_if_not_active`), `btr/btr0cur.cc`
//! (`btr_cur_search_to_nth_level`'s BTR_DELETE_OP), `ibuf/ibuf0ibuf.cc` (`ibuf_insert`,
//! `ibuf_insert_low`, `ibuf_get_volume_buffered_count_func`), `handler/ha_innodb.cc`
//! (innodb_purge_threads 4, innodb_purge_batch_size 300, innodb_max_purge_lag 0,
//! innodb_purge_rseg_truncate_frequency 128). MariaDB Server 10.11.18
//! `storage/innobase/`: `srv/srv0srv.cc` (`purge_coordinator_state::do_purge`,
//! `purge_sys_t::wake_if_not_active`, `srv_master_callback`, `purge_truncation_callback`),
//! `row/row0purge.cc` (`row_purge_reset_trx_id`), `handler/ha_innodb.cc`
//! (innodb_purge_batch_size 1000 since 10.11.6, MDEV-32050; innodb_purge_threads 4).
//!
//! Simplifications:
//! 1. Every batch is shared among all innodb_purge_threads threads (the coordinator and
//!    its workers, round-robin as `trx_purge_attach_undo_recs` does; the coordinator then
//!    waits for its workers): `srv_do_purge`'s `n_use_threads`, which grows with the
//!    history and shrinks when it does not, is taken at its maximum.
//! 2. A read view opens at a transaction's first change and closes at its commit; read
//!    views of read-only statements and of a transaction's reads before its first change
//!    are not modelled.
//! 3. A log's records fit one undo page (one page handled per log).
//! 4. A batch holds at most `MAX_LOOKUPS` records (a statement's capacity); a log with
//!    more has its further records dropped (counted in `records_dropped`).
//! 5. innodb_max_purge_lag's DML delay is not modelled: a value other than 0 is refused.
//! 6. The change buffer's merges other than a leaf's read (the master thread's
//!    `ibuf_merge_in_background`, its size limit) are not modelled.
//! 7. CPU: each record costs the machine's row_ns and each page visited its page access;
//!    the undo record's parse and the truncation cost nothing.
//! 8. MySQL 5.7's coordinator, finding nothing, sleeps until a commit wakes it: its 10 ms
//!    timed wait is not kept, since a read view here closes only at a commit, which wakes
//!    it anyway. The undo pages purge reads are taken to be in the pool (`writes`'
//!    simplification 1).

use std::collections::VecDeque;

use crate::workload::statement::MAX_LOOKUPS;

/// What purge does with one undo record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeKind {
    /// TRX_UNDO_UPD_EXIST_REC of an update that changed k: the old k_1 entry is removed.
    SecEntry,
    /// TRX_UNDO_DEL_MARK_REC: the k_1 entry and the clustered record are removed.
    DelMark,
    /// TRX_UNDO_DEL_MARK_REC of a row its transaction inserted again (oltp_read_write's
    /// DELETE then INSERT): the k_1 entry only (the clustered record is live).
    DelMarkReinserted,
    /// MariaDB: an update of a non-indexed column: only the DB_TRX_ID reset.
    ResetOnly,
}

/// One undo record for purge: the row and what is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeRec {
    /// Table number.
    pub table: u32,
    /// The row's id.
    pub id: u64,
    /// What purge does.
    pub kind: PurgeKind,
}

/// One committed update undo log in the history list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistLog {
    /// Its serialisation number (commit order).
    pub no: u64,
    /// Its records for purge (in `Purge::recs`).
    pub recs: u32,
    /// Its segment was not cached (TRX_UNDO_TO_PURGE): truncation frees it.
    pub to_purge: bool,
    /// Its undo page.
    pub undo_page: u32,
}

/// The purge options, with each server's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeParams {
    /// innodb_purge_threads (4 in 5.7, `srv_n_purge_threads`; 4 in 10.11).
    pub threads: u32,
    /// innodb_purge_batch_size (300 in 5.7, `srv_purge_batch_size`; 1000 in 10.11.6+).
    pub batch_size: u32,
    /// innodb_purge_rseg_truncate_frequency (128 in 5.7; MariaDB 10.11 truncates after
    /// every batch: 1).
    pub truncate_frequency: u32,
    /// A commit wakes a sleeping coordinator (MySQL 5.7); else the master thread does,
    /// once a second (MariaDB 10.11).
    pub wake_on_commit: bool,
    /// innodb_change_buffering allows purges ("all", "purges").
    pub buffer_purges: bool,
    /// MySQL 5.7's coordinator loop: after a round (`srv_do_purge`) that purged
    /// something it runs another, whose one `trx_purge` call finds nothing, then sleeps;
    /// MariaDB's `do_purge` stops at its first call that handles nothing.
    pub recheck: bool,
}

/// INNODB_METRICS counters of purge (names as the server's) and the history length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeStats {
    /// trx_rseg_history_len: update undo logs in the history lists (a gauge).
    pub history_len: u64,
    /// purge_invoked: `trx_purge` calls.
    pub invoked: u64,
    /// purge_undo_log_pages: undo pages handled.
    pub undo_log_pages: u64,
    /// purge_del_mark_records.
    pub del_mark_records: u64,
    /// purge_upd_exist_or_extern_records.
    pub upd_exist_or_extern_records: u64,
    /// Records whose k_1 leaf was not in the pool and whose delete was change-buffered
    /// (IBUF_OP_DELETE; the leaves read instead are among the pool's reads).
    pub ibuf_deletes: u64,
    /// Logs removed from the history lists, and the truncations that removed them.
    pub logs_truncated: u64,
    /// See `logs_truncated`.
    pub truncations: u64,
    /// Records beyond a batch's capacity (simplification 4).
    pub records_dropped: u64,
}

/// What one `trx_purge` call took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Batch {
    /// Undo pages handled (0: nothing to purge).
    pub pages: u64,
    /// Records handed out.
    pub records: usize,
    /// The call truncates the history after its records are done.
    pub truncate: bool,
}

/// The history list and the coordinator's state.
pub struct Purge {
    p: PurgeParams,
    /// Committed logs, oldest first; the first `done` are purged, awaiting truncation.
    logs: VecDeque<HistLog>,
    done: usize,
    /// The records of the logs not purged yet, in order.
    recs: VecDeque<PurgeRec>,
    /// Per client: its open transaction's records, whether it has an update undo log,
    /// and its read view's low limit (`u64::MAX`: none).
    pending: Vec<Vec<PurgeRec>>,
    has_undo: Vec<bool>,
    views: Vec<u64>,
    /// The next serialisation number.
    next_no: u64,
    /// `trx_purge` calls so far (the truncation's count), and whether one handled
    /// something since the coordinator last found nothing.
    calls: u64,
    worked: bool,
    stats: PurgeStats,
}

impl Purge {
    /// Purge of `clients` client threads.
    pub fn new(p: PurgeParams, clients: usize) -> Purge {
        Purge {
            p,
            logs: VecDeque::with_capacity(4096),
            done: 0,
            recs: VecDeque::with_capacity(4096),
            pending: (0..clients).map(|_| Vec::with_capacity(16)).collect(),
            has_undo: vec![false; clients],
            views: vec![u64::MAX; clients],
            next_no: 1,
            calls: 0,
            worked: false,
            stats: PurgeStats::default(),
        }
    }

    /// The options.
    pub fn params(&self) -> &PurgeParams {
        &self.p
    }

    /// Client `client`'s transaction makes a change: its read view opens (simplification
    /// 2) if not open; `rec` is what purge will do with the change's undo record, if
    /// anything; `update_undo`: the change writes an update undo record.
    pub fn note(&mut self, client: usize, rec: Option<PurgeRec>, update_undo: bool) {
        if self.views[client] == u64::MAX {
            self.views[client] = self.next_no;
        }
        self.has_undo[client] |= update_undo;
        if let Some(r) = rec {
            self.pending[client].push(r);
        }
    }

    /// Client `client` inserts row `id` of `table`: over its own delete-mark of the row
    /// (`row_ins_must_modify_rec`), whose purge then leaves the clustered record. True if
    /// it did (the insert wrote an update undo record).
    pub fn reinsert(&mut self, client: usize, table: u32, id: u64) -> bool {
        let hit = self.pending[client]
            .iter_mut()
            .rev()
            .find(|r| r.table == table && r.id == id && r.kind == PurgeKind::DelMark);
        match hit {
            Some(r) => {
                r.kind = PurgeKind::DelMarkReinserted;
                true
            }
            None => false,
        }
    }

    /// Client `client` commits: its update undo log (if any) goes to the history, with
    /// `to_purge` (its segment not cached) and its undo page; its read view closes.
    /// True if a log was added.
    pub fn commit(&mut self, client: usize, to_purge: bool, undo_page: u32) -> bool {
        self.views[client] = u64::MAX;
        let added = std::mem::take(&mut self.has_undo[client]);
        let recs = &mut self.pending[client];
        if added {
            self.logs.push_back(HistLog { no: self.next_no, recs: recs.len() as u32, to_purge, undo_page });
            self.next_no += 1;
            self.recs.extend(recs.drain(..));
        }
        recs.clear();
        added
    }

    /// The server restarted after a clean shutdown: open transactions are gone (their
    /// views, their records); the history stays (innodb_fast_shutdown = 1 does not purge).
    pub fn restart(&mut self) {
        self.views.fill(u64::MAX);
        self.has_undo.fill(false);
        for p in &mut self.pending {
            p.clear();
        }
    }

    /// The oldest read view's low limit: logs numbered below it may be purged.
    fn limit(&self) -> u64 {
        self.views.iter().copied().min().unwrap_or(u64::MAX).min(self.next_no)
    }

    /// Logs purgeable now and not purged.
    pub fn purgeable(&self) -> usize {
        let limit = self.limit();
        self.logs.iter().skip(self.done).take_while(|l| l.no < limit).count()
    }

    /// One `trx_purge` call: takes the oldest purgeable logs, at most `batch_size` pages
    /// and `MAX_LOOKUPS` records, and hands each record to `emit`. A call with nothing to
    /// do ends the coordinator's loop (with MySQL 5.7's recheck: its second call, at the
    /// same instant, finds nothing either). A call whose number is a multiple of the
    /// truncate frequency truncates, whether or not it handled anything.
    pub fn batch(&mut self, emit: impl FnMut(&PurgeRec)) -> Batch {
        let mut b = self.call(emit);
        if b.pages == 0 && std::mem::take(&mut self.worked) && self.p.recheck {
            b.truncate |= self.call(|_| {}).truncate;
        }
        self.worked |= b.pages > 0;
        b
    }

    /// One `trx_purge` call (see [`Purge::batch`]).
    fn call(&mut self, mut emit: impl FnMut(&PurgeRec)) -> Batch {
        self.stats.invoked += 1;
        self.calls += 1;
        let limit = self.limit();
        let mut b = Batch::default();
        while b.pages < u64::from(self.p.batch_size) {
            let Some(log) = self.logs.get(self.done) else { break };
            if log.no >= limit {
                break;
            }
            let n = log.recs as usize;
            if b.records > 0 && b.records + n > MAX_LOOKUPS {
                break;
            }
            b.pages += 1;
            for k in 0..n {
                // Invariant: `recs` holds the records of every log from `done` on.
                let Some(r) = self.recs.pop_front() else { break };
                if b.records == MAX_LOOKUPS {
                    self.stats.records_dropped += (n - k) as u64;
                    for _ in k + 1..n {
                        self.recs.pop_front();
                    }
                    break;
                }
                match r.kind {
                    PurgeKind::DelMark | PurgeKind::DelMarkReinserted => self.stats.del_mark_records += 1,
                    PurgeKind::SecEntry | PurgeKind::ResetOnly => self.stats.upd_exist_or_extern_records += 1,
                }
                emit(&r);
                b.records += 1;
            }
            self.done += 1;
        }
        self.stats.undo_log_pages += b.pages;
        b.truncate = self.calls % u64::from(self.p.truncate_frequency.max(1)) == 0;
        b
    }

    /// `trx_purge_truncate_history`: the purged logs leave the history, each handed to
    /// `free` (its mtrs are the caller's); returns how many.
    pub fn truncate(&mut self, mut free: impl FnMut(&HistLog, Option<&HistLog>)) -> usize {
        let n = self.done;
        for i in 0..n {
            // The log's predecessor in the list (the next younger one), whose node changes.
            free(&self.logs[i], self.logs.get(i + 1));
        }
        self.logs.drain(..n);
        self.done = 0;
        if n > 0 {
            self.stats.truncations += 1;
            self.stats.logs_truncated += n as u64;
        }
        n
    }

    /// A purge's delete went to the change buffer (its k_1 leaf was not in the pool).
    pub fn note_ibuf_delete(&mut self) {
        self.stats.ibuf_deletes += 1;
    }

    /// The counters, with the history length now.
    pub fn stats(&self) -> PurgeStats {
        PurgeStats { history_len: self.logs.len() as u64, ..self.stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn params() -> PurgeParams {
        PurgeParams {
            threads: 4,
            batch_size: 300,
            truncate_frequency: 128,
            wake_on_commit: true,
            buffer_purges: true,
            recheck: false,
        }
    }

    fn upd(id: u64) -> Option<PurgeRec> {
        Some(PurgeRec { table: 0, id, kind: PurgeKind::SecEntry })
    }

    #[test]
    fn each_k_update_leaves_one_record_for_purge_after_its_commit() {
        let mut p = Purge::new(params(), 2);
        p.note(0, upd(7), true);
        let mut seen = Vec::new();
        assert_eq!(p.batch(|r| seen.push(*r)).pages, 0, "nothing before the commit");
        assert!(p.commit(0, false, 600));
        assert_eq!(p.stats().history_len, 1);
        let b = p.batch(|r| seen.push(*r));
        assert_eq!((b.pages, b.records), (1, 1));
        assert_eq!(seen, [PurgeRec { table: 0, id: 7, kind: PurgeKind::SecEntry }]);
        assert_eq!(p.stats().upd_exist_or_extern_records, 1);
        // Purged, not truncated: the history length stays until the truncation.
        assert_eq!(p.stats().history_len, 1);
        assert_eq!(p.truncate(|_, _| {}), 1);
        assert_eq!(p.stats().history_len, 0);
    }

    #[test]
    fn an_open_read_view_holds_back_what_committed_after_it() {
        let mut p = Purge::new(params(), 2);
        p.note(1, upd(1), true); // client 1's view opens first
        p.note(0, upd(2), true);
        p.commit(0, false, 600);
        assert_eq!(p.batch(|_| {}).pages, 0, "client 1's view is older than client 0's commit");
        p.commit(1, false, 601);
        let mut ids = Vec::new();
        p.batch(|r| ids.push(r.id));
        assert_eq!(ids, [2, 1], "commit order");
    }

    #[test]
    fn a_delete_then_insert_of_one_row_keeps_its_clustered_record() {
        let mut p = Purge::new(params(), 1);
        p.note(0, Some(PurgeRec { table: 3, id: 9, kind: PurgeKind::DelMark }), true);
        assert!(p.reinsert(0, 3, 9));
        assert!(!p.reinsert(0, 3, 10));
        p.commit(0, false, 600);
        let mut kinds = Vec::new();
        p.batch(|r| kinds.push(r.kind));
        assert_eq!(kinds, [PurgeKind::DelMarkReinserted]);
        assert_eq!(p.stats().del_mark_records, 1);
    }

    #[test]
    fn a_non_index_update_log_is_handled_without_records_and_a_read_only_one_not_at_all() {
        let mut p = Purge::new(params(), 1);
        p.note(0, None, true);
        assert!(p.commit(0, false, 600));
        p.note(0, None, false);
        assert!(!p.commit(0, false, 600), "no update undo: no history");
        let b = p.batch(|_| panic!("no record"));
        assert_eq!((b.pages, b.records), (1, 0));
    }

    #[test]
    fn history_grows_while_purge_is_stopped_and_drains_in_batches() {
        let mut p = Purge::new(PurgeParams { batch_size: 300, truncate_frequency: 1, ..params() }, 1);
        for id in 0..1000 {
            p.note(0, upd(id), true);
            p.commit(0, false, 600);
        }
        assert_eq!(p.stats().history_len, 1000);
        let mut pages = Vec::new();
        loop {
            let b = p.batch(|_| {});
            if b.truncate {
                p.truncate(|_, _| {});
            }
            if b.pages == 0 {
                break;
            }
            pages.push(b.pages);
        }
        assert_eq!(pages, [300, 300, 300, 100]);
        assert_eq!(p.stats().history_len, 0);
        assert_eq!(p.stats().undo_log_pages, 1000);
    }

    #[test]
    fn mysql_calls_once_more_after_a_round_that_purged() {
        let mut p = Purge::new(PurgeParams { recheck: true, ..params() }, 1);
        p.note(0, upd(1), true);
        p.commit(0, false, 600);
        assert_eq!(p.batch(|_| {}).pages, 1);
        assert_eq!(p.batch(|_| {}).pages, 0);
        assert_eq!(p.stats().invoked, 3, "the round's empty call and the next round's");
        assert_eq!(p.batch(|_| {}).pages, 0);
        assert_eq!(p.stats().invoked, 4, "asleep after nothing: one call a wake");
    }

    #[test]
    fn mysql_truncates_every_128th_call() {
        let mut p = Purge::new(params(), 1);
        for call in 1..=128u64 {
            p.note(0, upd(call), true);
            p.commit(0, false, 600);
            let b = p.batch(|_| {});
            assert_eq!(b.truncate, call == 128);
        }
        assert_eq!(p.truncate(|_, _| {}), 128);
    }

    proptest! {
        /// Purged records never exceed the committed ones; the history length is the
        /// committed logs less the truncated ones, and returns to 0 once idle.
        #[test]
        fn purge_never_outruns_commits_and_drains_when_idle(
            ops in proptest::collection::vec((0usize..3, 0u8..4, any::<bool>()), 1..300),
            batch in 1u32..50,
        ) {
            let mut p = Purge::new(PurgeParams { batch_size: batch, truncate_frequency: 3, ..params() }, 3);
            let (mut committed_recs, mut purged, mut logs) = (0u64, 0u64, 0u64);
            let mut open = [0u64; 3];
            for (c, what, step) in ops {
                match what {
                    0 | 1 => {
                        let kind = if what == 0 { PurgeKind::SecEntry } else { PurgeKind::DelMark };
                        p.note(c, Some(PurgeRec { table: 0, id: 1, kind }), true);
                        open[c] += 1;
                    }
                    2 => {
                        if p.commit(c, false, 600) {
                            logs += 1;
                            committed_recs += open[c];
                        }
                        open[c] = 0;
                    }
                    _ => p.note(c, None, true),
                }
                if step {
                    let b = p.batch(|_| purged += 1);
                    if b.truncate {
                        p.truncate(|_, _| {});
                    }
                }
                prop_assert!(purged <= committed_recs);
                prop_assert!(p.stats().history_len <= logs);
            }
            for c in 0..3 {
                if p.commit(c, false, 600) {
                    logs += 1;
                    committed_recs += open[c];
                }
            }
            while p.batch(|_| purged += 1).pages > 0 {}
            p.truncate(|_, _| {});
            prop_assert_eq!(purged, committed_recs);
            prop_assert_eq!(p.stats().history_len, 0);
            prop_assert_eq!(p.stats().logs_truncated, logs);
        }
    }
}
