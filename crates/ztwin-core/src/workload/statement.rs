//! Statements as the index lookups they perform: what a workload source hands the
//! database, whatever the benchmark. A statement is a sequence of [`Lookup`]s (table,
//! index, key) in execution order and the rows it returns; the database turns each
//! lookup into the pages it visits (`db::Database::page_path`), the filesystem reads
//! the pages the database's cache lacks.
//!
//! Sources today: sysbench's tests ([`crate::workload::sysbench`]). fio sits beside them
//! one layer lower: its jobs issue file I/O to the filesystem directly (`run::fio`).
//!
//! A write is a lookup with an [`Op`] (the row's changes are the database's to make);
//! a transaction's end is a [`Op::Commit`] lookup.
//!
//! Simplifications: 1. a statement holds at most [`MAX_LOOKUPS`] lookups (further rows
//! are counted, not looked up); 2. a table has a clustered index and at most two
//! secondary ones (TPC-C's history has two).

/// Capacity of [`Statement::lookups`].
pub const MAX_LOOKUPS: usize = 2048;

/// Row locks one statement may mark (`Statement::lock_at`).
pub const MAX_LOCKS: usize = 2;

/// Which index a lookup descends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Index {
    /// The clustered index (the primary key; sysbench's id).
    #[default]
    Clustered,
    /// The table's (first) secondary index (sysbench's k_N, on k).
    Secondary,
    /// The table's second secondary index (TPC-C's history has two), its key an entry's
    /// position in key order.
    Secondary2,
}

/// What a lookup does at the row it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// Reads it (SELECT).
    #[default]
    Read,
    /// `UPDATE ... SET c = ?`: changes a column no secondary index holds, in place.
    UpdateNonIndex,
    /// `UPDATE ... SET k = k + 1`: changes the row and moves its entry in the secondary
    /// index (the database knows the row's k).
    UpdateIndex,
    /// `DELETE`: delete-marks the row and its secondary entry (purge removes them later).
    Delete,
    /// `INSERT`: a new entry at `key` of `index` (clustered key 0: AUTO_INCREMENT's next
    /// id); an insert is a clustered lookup followed by one per secondary index.
    Insert,
    /// Purge (the database's own thread, never a workload's): removes the delete-marked
    /// k_1 entry of row `key` after finding its clustered record; with
    /// [`Index::Clustered`] the delete-marked clustered record too (`db::innodb::purge`).
    Purge,
    /// MariaDB's purge of a non-index update: the row's DB_TRX_ID reset only.
    PurgeReset,
    /// The transaction commits here (COMMIT, or an autocommit statement's end): its redo
    /// is written and, by innodb_flush_log_at_trx_commit, flushed. No page is visited.
    Commit,
}

/// One index descent to `key` in `index` of table `table`, and with `span` > 1 a range
/// scan on from there: the cursor reads the keys `key..key + span` leaf by leaf, each
/// further leaf reached by the previous one's next-page link, not by a descent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lookup {
    /// Table number, 0-based, in the dataset's order (sysbench's sbtest1 is 0).
    pub table: u32,
    /// Index descended.
    pub index: Index,
    /// What is done at the row.
    pub op: Op,
    /// Keys scanned from `key` on (0 or 1: a point lookup).
    pub span: u16,
    /// The key value (sysbench: id for the clustered index, k for the secondary one).
    pub key: u64,
}

impl Lookup {
    /// A point lookup of `key` in `index`.
    #[inline]
    pub fn point(table: u32, index: Index, key: u64) -> Lookup {
        Lookup { table, index, op: Op::Read, span: 1, key }
    }

    /// `op` at `key` of `index` (a write, or a commit with no key).
    #[inline]
    pub fn write(table: u32, index: Index, op: Op, key: u64) -> Lookup {
        Lookup { table, index, op, span: 1, key }
    }

    /// Whether the lookup changes data (not a read nor a commit).
    #[inline]
    pub fn writes(&self) -> bool {
        !matches!(self.op, Op::Read | Op::Commit)
    }

    /// A range scan of the clustered index over `key..key + span`.
    #[inline]
    pub fn range(table: u32, key: u64, span: u16) -> Lookup {
        Lookup { table, index: Index::Clustered, op: Op::Read, span, key }
    }
}

/// What a client runs as one unit of the benchmark (sysbench's `event()`: one statement,
/// or a transaction of several): its SQL queries' lookups in execution order, the rows
/// they examine and how many queries they are.
#[derive(Debug, Clone)]
pub struct Statement {
    /// The lookups; only the first `n` are valid.
    pub lookups: [Lookup; MAX_LOOKUPS],
    /// Number of valid lookups.
    pub n: usize,
    /// Rows the queries read (each costs the machine's row_ns).
    pub rows: u32,
    /// SQL queries issued, BEGIN and COMMIT included as sysbench counts them (each costs
    /// statement_ns; qps counts them, tps counts the unit).
    pub queries: u32,
    /// The benchmark's type of this unit, for per-type counts (0: none; sysbench-tpcc's
    /// transactions: `workload::tpcc::kind`).
    pub kind: u8,
    /// The lookups (indexes, in order) whose row the transaction locks exclusively once
    /// the lookup reaches it, held to its commit (`db::innodb::row_locks`); `n_locks` of
    /// them.
    pub lock_at: [u16; MAX_LOCKS],
    /// See `lock_at`.
    pub n_locks: u8,
}

impl Statement {
    /// Becomes a copy of `other`'s valid lookups (cheaper than copying the whole array).
    pub fn copy_from(&mut self, other: &Statement) {
        self.lookups[..other.n].copy_from_slice(&other.lookups[..other.n]);
        self.n = other.n;
        self.rows = other.rows;
        self.queries = other.queries;
        self.kind = other.kind;
        self.lock_at = other.lock_at;
        self.n_locks = other.n_locks;
    }
}

impl Default for Statement {
    fn default() -> Self {
        Statement {
            lookups: [Lookup::default(); MAX_LOOKUPS],
            n: 0,
            rows: 0,
            queries: 0,
            kind: 0,
            lock_at: [0; MAX_LOCKS],
            n_locks: 0,
        }
    }
}

impl Statement {
    /// Becomes an empty statement.
    #[inline]
    pub fn clear(&mut self) {
        self.n = 0;
        self.rows = 0;
        self.queries = 0;
        self.kind = 0;
        self.n_locks = 0;
    }

    /// The valid lookups.
    pub fn lookups(&self) -> &[Lookup] {
        &self.lookups[..self.n]
    }

    /// The last lookup pushed locks its row (see `lock_at`).
    #[inline]
    pub fn lock_last(&mut self) {
        if self.n > 0 && (self.n_locks as usize) < MAX_LOCKS {
            self.lock_at[self.n_locks as usize] = (self.n - 1) as u16;
            self.n_locks += 1;
        }
    }

    /// Appends a lookup (past [`MAX_LOOKUPS`] it is dropped: the statement's rows still
    /// count it).
    #[inline]
    pub fn push(&mut self, l: Lookup) {
        if self.n < MAX_LOOKUPS {
            self.lookups[self.n] = l;
            self.n += 1;
        }
    }
}
