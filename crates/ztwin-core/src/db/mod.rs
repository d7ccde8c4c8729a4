//! Databases above the filesystem, as a layer the driver calls: a statement's lookups
//! become page accesses ([`Database::page_path`]); a page is found in the database's
//! cache or read from its file ([`Database::access`] and the read's life:
//! [`Database::insert_for_read`], [`Database::read_done`]).
//!
//! One database today (InnoDB, MySQL 5.7 and MariaDB 10.11); the enum is the seam for
//! PostgreSQL beside it: every match on it is exhaustive, so the compiler shows each place
//! a new engine must answer.
pub mod innodb;

use crate::config::InnodbConfig;
use crate::sim::time::Nanos;
use crate::workload::statement::{Index, Lookup, Op};
use innodb::btree::{TableLayout, MAX_DEPTH};
use innodb::buffer_pool::{BufferPool, PageKey};

/// InnoDB: the buffer pool over the tables' B+trees.
pub struct Innodb {
    /// The buffer pool (midpoint LRU, free frames, reads placed before they complete).
    pub bp: BufferPool,
    /// Where each key's pages are: the layout every table of the dataset shares (its
    /// tables are alike, as sysbench's are).
    pub table: TableLayout,
    /// innodb_page_size, bytes.
    pub page_size: u32,
}

/// The database the workload's statements run in.
pub enum Database {
    /// InnoDB.
    Innodb(Innodb),
}

impl Database {
    /// InnoDB over tables laid out as `table` (built for `cfg`'s innodb_page_size).
    pub fn innodb(cfg: &InnodbConfig, table: TableLayout) -> Database {
        Database::Innodb(Innodb { bp: BufferPool::new(cfg), table, page_size: cfg.innodb_page_size })
    }

    /// The data file of table `name` (InnoDB's file-per-table: `NAME.ibd`).
    pub fn file_name(&self, table: &str) -> String {
        match self {
            Database::Innodb(_) => format!("{table}.ibd"),
        }
    }

    /// A table's data file size in bytes.
    pub fn file_size(&self) -> u64 {
        match self {
            Database::Innodb(d) => d.table.file_size(),
        }
    }

    /// The pages one lookup visits, root first, into `path`; returns how many.
    pub fn page_path(&self, l: &Lookup, path: &mut [u64; MAX_DEPTH]) -> usize {
        if l.op == Op::Commit {
            return 0;
        }
        match self {
            Database::Innodb(d) => match l.index {
                Index::Clustered => d.table.clustered_path(l.key, path),
                Index::Secondary => d.table.secondary_path(l.key, path),
            },
        }
    }

    /// The leaf a range scan `l` reads after its first `step` leaves (step 1: the one after
    /// the first), if the range reaches it.
    #[inline]
    pub fn next_leaf(&self, l: &Lookup, step: u32) -> Option<u64> {
        match self {
            Database::Innodb(d) => match l.index {
                Index::Clustered => d.table.clustered_next_leaf(l.key, u64::from(l.span), u64::from(step)),
                // Ranges are on the primary key (sysbench's); a secondary lookup is a point.
                Index::Secondary => None,
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

    /// A read of `key` is issued: the page takes its frame now (`buf_page_init_for_read`).
    /// Returns the byte range of the data file to read: (offset, length).
    pub fn insert_for_read(&mut self, key: PageKey, page_no: u64) -> (u64, u32) {
        match self {
            Database::Innodb(d) => {
                d.bp.insert_for_read(key);
                (page_no * d.page_size as u64, d.page_size)
            }
        }
    }

    /// The read of `key` completed and the page is accessed for the first time.
    pub fn read_done(&mut self, key: PageKey, now: Nanos) {
        match self {
            Database::Innodb(d) => d.bp.first_access(key, now),
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

    /// The machine restarted: the cache starts empty.
    pub fn restart(&mut self, cfg: &InnodbConfig) {
        match self {
            Database::Innodb(d) => d.bp = BufferPool::new(cfg),
        }
    }

    /// The smallest read a data file sees (a page).
    pub fn page_size(&self) -> u32 {
        match self {
            Database::Innodb(d) => d.page_size,
        }
    }
}
