//! The server's redo log and transactions behind one interface: MySQL 5.7's (`redo`,
//! `redo_records`; Percona Server 5.7's too) or MariaDB 10.11's (`mariadb_redo`).

use crate::config::InnodbServer;
use crate::db::innodb::mariadb_redo::records::{MariaCtx, MariaTrx};
use crate::db::innodb::mariadb_redo::MariaRedoLog;
use crate::db::innodb::redo::{LogStep, RedoLog, RedoStats};
use crate::db::innodb::redo_records::{Env, MtrLog, RowCtx, TrxRedo};
use crate::workload::statement::{Index, Op};

/// The server's redo log.
#[derive(Debug, Clone)]
pub(super) enum Log {
    /// MySQL 5.7.
    Mysql57(RedoLog),
    /// MariaDB 10.11.
    Mariadb(Box<MariaRedoLog>),
}

impl Log {
    pub(super) fn lsn(&self) -> u64 {
        match self {
            Log::Mysql57(l) => l.lsn(),
            Log::Mariadb(l) => l.lsn(),
        }
    }

    pub(super) fn append(&mut self, bytes: u64) -> u64 {
        match self {
            Log::Mysql57(l) => l.append(bytes),
            Log::Mariadb(l) => l.append(bytes),
        }
    }

    pub(super) fn write_up_to(&mut self, lsn: u64, flush: bool) -> LogStep {
        match self {
            Log::Mysql57(l) => l.write_up_to(lsn, flush),
            Log::Mariadb(l) => l.write_up_to(lsn, flush),
        }
    }

    pub(super) fn write_done(&mut self) {
        match self {
            Log::Mysql57(l) => l.write_done(),
            Log::Mariadb(l) => l.write_done(),
        }
    }

    pub(super) fn flush_done(&mut self) {
        match self {
            Log::Mysql57(l) => l.flush_done(),
            Log::Mariadb(l) => l.flush_done(),
        }
    }

    pub(super) fn settle(&mut self) {
        match self {
            Log::Mysql57(l) => l.settle(),
            Log::Mariadb(l) => l.settle(),
        }
    }

    /// The counters, in 5.7's shape: MariaDB's Innodb_os_log_written counts the LSN
    /// bytes appended, and its log fdatasyncs (no status variable of their own) are in
    /// `os_log_fsyncs`.
    pub(super) fn stats(&self) -> RedoStats {
        match self {
            Log::Mysql57(l) => l.stats(),
            Log::Mariadb(l) => {
                let s = l.stats();
                RedoStats {
                    log_write_requests: s.log_write_requests,
                    log_writes: s.log_writes,
                    os_log_written: s.os_log_written,
                    os_log_fsyncs: s.data_fsyncs,
                    log_padded: 0,
                }
            }
        }
    }
}

/// A transaction's undo state, by server.
#[derive(Debug, Clone, Copy)]
pub(super) enum TrxLog {
    /// MySQL 5.7.
    Mysql57(TrxRedo),
    /// MariaDB 10.11.
    Mariadb(MariaTrx),
}

impl TrxLog {
    pub(super) fn begin(server: InnodbServer, id: u64) -> TrxLog {
        match server {
            InnodbServer::Mysql57 | InnodbServer::Percona57 => TrxLog::Mysql57(TrxRedo::begin(id)),
            InnodbServer::Mariadb1011 => TrxLog::Mariadb(MariaTrx::begin(id)),
        }
    }

    pub(super) fn id(&self) -> u64 {
        match self {
            TrxLog::Mysql57(t) => t.id(),
            TrxLog::Mariadb(t) => t.id(),
        }
    }

    /// The mtrs of `op` (see `TrxRedo::op`, `MariaTrx::op`).
    pub(super) fn op(&mut self, op: Op, index: Index, env: &Env, m: &MariaCtx, row: &RowCtx) -> MtrLog {
        match self {
            TrxLog::Mysql57(t) => t.op(op, index, env, row),
            TrxLog::Mariadb(t) => t.op(op, index, env, m, row),
        }
    }
}
