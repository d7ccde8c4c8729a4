//! The purge coordinator's thread in the write path: its batches as statements of purge
//! lookups the driver runs like a client's (page visits, reads, the change buffer, then
//! each removal's mtr), the truncation's mtrs, and the change buffer's count of records
//! per leaf that decides whether a purge's delete may be buffered (`innodb::purge`).

use super::*;
use crate::db::innodb::mariadb_redo::records as mrec;
use crate::db::innodb::purge::{Batch, PurgeKind, PurgeStats};
use crate::db::innodb::redo_records as rrec;
use crate::workload::statement::{Lookup, Statement};

impl Writes {
    /// The slot of the purge coordinator (after the clients, the page cleaner, the master
    /// thread and Percona Server's LRU manager).
    pub fn purge_actor(&self) -> usize {
        self.clients + 2 + usize::from(self.p.percona.is_some())
    }

    /// The purge threads (innodb_purge_threads: the coordinator, then its workers' slots).
    pub fn purge_threads(&self) -> usize {
        self.p.purge.threads as usize
    }

    /// Whether a commit asked for the purge coordinator since the last call (MySQL 5.7's
    /// `srv_wake_purge_thread_if_not_active`).
    pub fn take_purge_wake(&mut self) -> bool {
        std::mem::take(&mut self.wake_purge)
    }

    /// When the coordinator, done with nothing to purge at `now`, runs again: MySQL 5.7
    /// when a commit wakes it (None); MariaDB 10.11 at the master callback's next second.
    pub fn purge_next(&self, now: Nanos) -> Option<Nanos> {
        (!self.p.purge.wake_on_commit).then(|| now.saturating_add(SEC))
    }

    /// One `trx_purge` call: its records as purge lookups in `out` (see
    /// [`Op::Purge`]); returns what it took.
    pub fn purge_batch(&mut self, out: &mut Statement) -> Batch {
        out.clear();
        let b = self.purge.batch(|r| {
            let (op, index) = match r.kind {
                PurgeKind::SecEntry | PurgeKind::DelMarkReinserted => (Op::Purge, Index::Secondary),
                PurgeKind::DelMark => (Op::Purge, Index::Clustered),
                PurgeKind::ResetOnly => (Op::PurgeReset, Index::Clustered),
            };
            out.lookups[out.n] = Lookup::write(r.table, index, op, r.id);
            out.n += 1;
        });
        self.purge_truncate |= b.truncate;
        b
    }

    /// The batch's records are done at `now`: a truncating call removes the purged logs
    /// from the history, each with its mtr.
    pub fn purge_batch_done(&mut self, bp: &mut BufferPool, now: Nanos) {
        if !std::mem::take(&mut self.purge_truncate) {
            return;
        }
        let mariadb = self.p.server == InnodbServer::Mariadb1011;
        let mut env = Env { page_size: self.page_size, ..Env::default() };
        let mut mtrs = std::mem::take(&mut self.purge_mtrs);
        self.purge.truncate(|log, younger| {
            env.undo.rseg_page = RSEG_FIRST + (log.no % u64::from(RSEGS)) as u32;
            let younger = younger.map(|y| (y.undo_page, 3000));
            mtrs.push(if mariadb {
                mrec::purge_history_remove(&env, log.undo_page, younger, log.to_purge)
            } else {
                rrec::purge_history_remove(&env, log.undo_page, younger, log.to_purge)
            });
        });
        for m in mtrs.drain(..) {
            self.apply_mtr(bp, &m);
        }
        self.purge_mtrs = mtrs;
        self.after_mtrs(bp, now);
    }

    /// A purge lookup's pages are visited (`sec_in_pool`: its k_1 leaf too, else its
    /// delete was buffered): the removal's mtrs (and MariaDB's DB_TRX_ID reset).
    pub(super) fn purge_apply(
        &mut self,
        bp: &mut BufferPool,
        layout: &TableLayout,
        l: &Lookup,
        sec_in_pool: bool,
    ) {
        let rows = layout.rows;
        let id = l.key.clamp(1, rows.max(1));
        let k = self.row_k(l.table, id, rows);
        let row = RowCtx::sysbench(layout, id, k.max(1));
        let env = Env {
            page_size: self.page_size,
            space_id: Self::space_id(l.table),
            ibuf_leaf: IBUF_LEAF,
            ..Env::default()
        };
        let mariadb = self.p.server == InnodbServer::Mariadb1011;
        if l.op == Op::Purge {
            let m = if !sec_in_pool {
                // The IBUF_OP_DELETE takes one of the leaf's buffered records.
                let key = PageKey::new(l.table, u64::from(row.sec_leaf)).0;
                if let Some(n) = self.ibuf_recs.get_mut(key) {
                    *n = n.saturating_sub(1);
                }
                self.purge.note_ibuf_delete();
                // MariaDB 10.11's change buffer record is 5.7's (its format did not change).
                rrec::purge_ibuf_delete(&env, row.sec_leaf)
            } else if mariadb {
                mrec::purge_sec_delete(&env, row.sec_leaf)
            } else {
                rrec::purge_sec_delete(&env, row.sec_leaf)
            };
            self.apply_mtr(bp, &m);
            if l.index == Index::Clustered {
                let m = if mariadb {
                    mrec::purge_clust_delete(&env, &self.maria, &row)
                } else {
                    rrec::purge_clust_delete(&env, &row)
                };
                self.apply_mtr(bp, &m);
                return;
            }
        }
        if mariadb {
            let m = mrec::purge_reset_trx_id(&env, &row, self.trx_ids);
            self.apply_mtr(bp, &m);
        }
    }

    /// A buffered delete-mark of `table`'s k_1 leaf `leaf`: the change buffer holds one
    /// more record for it.
    pub(super) fn ibuf_buffered(&mut self, table: u32, leaf: u32) {
        let key = PageKey::new(table, u64::from(leaf)).0;
        match self.ibuf_recs.get_mut(key) {
            Some(n) => *n += 1,
            None => self.ibuf_recs.insert(key, 1),
        }
    }

    /// Whether purge's delete of the entry in leaf `leaf` of `table` may be buffered: the
    /// option allows it and at least two records are buffered for the leaf (`ibuf_insert_low`).
    pub(super) fn purge_bufferable(&self, table: u32, leaf: u64) -> bool {
        self.p.purge.buffer_purges && self.ibuf_recs.get(PageKey::new(table, leaf).0).unwrap_or(0) >= 2
    }

    /// Page `key` was read into the pool: what the change buffer held for it is merged
    /// (`ibuf_merge_or_delete_for_page`).
    pub fn page_read(&mut self, key: PageKey) {
        if !self.ibuf_recs.is_empty() {
            self.ibuf_recs.remove(key.0);
        }
    }

    /// Purge's counters and the history length.
    pub fn purge_stats(&self) -> PurgeStats {
        self.purge.stats()
    }
}

#[cfg(test)]
#[path = "purge_tests.rs"]
mod tests;
