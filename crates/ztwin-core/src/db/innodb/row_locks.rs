//! InnoDB's record locks as the waits they cause: the exclusive lock an UPDATE (or a
//! `SELECT ... FOR UPDATE`) takes on a row and holds to the end of its transaction.
//!
//! Mechanism. A statement that modifies a row, once its B-tree search has positioned on
//! the record, asks for an exclusive record lock (`lock_clust_rec_modify_check_and_lock`
//! -> `lock_rec_lock`). If another transaction holds one on the row, the request is
//! queued on the row's lock queue as waiting (`lock_rec_enqueue_waiting`) and the thread
//! sleeps (`lock_wait_suspend_thread`) until the lock is granted. A transaction keeps its
//! locks until it commits (two-phase locking): `trx_commit_in_memory` releases them
//! (`lock_trx_release_locks`), and each released lock grants the waiting requests behind
//! it in queue order once nothing before them conflicts (`lock_rec_dequeue_from_page` ->
//! `lock_rec_grant`): for exclusive locks on one row, the first waiter. MySQL 5.7 releases
//! them in `trx_commit_in_memory` before the log write and flush of the commit
//! (`trx_flush_log_if_needed` comes after it), so a waiter does not wait for the holder's
//! fsync. SHOW GLOBAL STATUS counts the waits (Innodb_row_lock_waits), their total time
//! (Innodb_row_lock_time, ms) and the threads waiting now (Innodb_row_lock_current_waits).
//!
//! Sources: MySQL 5.7 `lock/lock0lock.cc` (`lock_rec_lock`, `lock_rec_enqueue_waiting`,
//! `lock_rec_dequeue_from_page`, `lock_rec_grant`, `lock_trx_release_locks`),
//! `trx/trx0trx.cc` (`trx_commit_in_memory`, `trx_flush_log_if_needed`),
//! `lock/lock0wait.cc` (`lock_wait_suspend_thread`, the status counters). MariaDB 10.11 and
//! Percona Server 5.7 keep the same queue discipline for these locks.
//!
//! Simplifications:
//! 1. Only the rows a workload marks take locks (`Statement::lock_at`): sysbench-tpcc's
//!    warehouse row (payment's `UPDATE warehouse`) and district row (payment's and
//!    new_order's `UPDATE district`), the rows every transaction of a warehouse or a
//!    district shares. The other rows' locks (stock, customer, new_orders) are spread over
//!    thousands of rows per warehouse and are not modelled.
//! 2. Exclusive record locks only: no shared, gap or next-key locks, no table intention
//!    locks. The marked rows are always taken in one order (warehouse before district), so
//!    no deadlock can form and none is detected; innodb_lock_wait_timeout (50 s) never ends
//!    a wait.
//! 3. The lock is released when the commit starts. With the binary log (two-phase commit)
//!    InnoDB's prepare keeps the locks until the binary log's group commit has written
//!    (and with sync_binlog = 1 synced) the transaction; that wait is not added.

use hashbrown::HashMap;

use crate::sim::time::{Nanos, MS};

/// Locks one transaction of the modelled workloads may hold at once (one statement's).
pub const MAX_HELD: usize = crate::workload::statement::MAX_LOCKS;

const NONE: u32 = u32::MAX;

/// The key of the record lock on row `key` of table (tablespace) `table`.
#[inline]
pub fn row_key(table: u32, key: u64) -> u64 {
    (u64::from(table) << 40) ^ key
}

/// One row's lock queue: the holder, then the waiters in order (through `RowLocks::next`).
#[derive(Debug, Clone, Copy)]
struct Queue {
    holder: u32,
    head: u32,
    tail: u32,
}

/// SHOW GLOBAL STATUS's row lock counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowLockStats {
    /// Innodb_row_lock_waits.
    pub waits: u64,
    /// Innodb_row_lock_time, in nanoseconds (the status variable is milliseconds).
    pub wait_ns: u64,
    /// Innodb_row_lock_current_waits (a gauge).
    pub current_waits: u64,
}

impl RowLockStats {
    /// Innodb_row_lock_time (ms).
    pub fn wait_ms(&self) -> u64 {
        self.wait_ns / MS
    }
}

/// The lock queues of the rows locked now, and what each thread holds and waits for.
#[derive(Debug, Clone)]
pub struct RowLocks {
    queues: HashMap<u64, Queue>,
    /// Per thread: the next waiter in the queue it waits in.
    next: Vec<u32>,
    /// Per thread: the rows it holds (`held_n` of them) and when its wait began.
    held: Vec<[u64; MAX_HELD]>,
    held_n: Vec<u8>,
    since: Vec<Nanos>,
    stats: RowLockStats,
}

impl RowLocks {
    /// Lock queues for `threads` threads (sized once: no allocation per request).
    pub fn new(threads: usize) -> Self {
        RowLocks {
            queues: HashMap::with_capacity(threads * MAX_HELD + 1),
            next: vec![NONE; threads],
            held: vec![[0; MAX_HELD]; threads],
            held_n: vec![0; threads],
            since: vec![0; threads],
            stats: RowLockStats::default(),
        }
    }

    /// Thread `t` asks for the exclusive lock on row `key` at `now`: true when it holds it
    /// (granted now, or granted while it waited, or held already); false when it must
    /// wait (queued; [`RowLocks::release_all`] grants it and names it).
    pub fn lock(&mut self, t: usize, key: u64, now: Nanos) -> bool {
        let tt = t as u32;
        match self.queues.get_mut(&key) {
            None => {
                self.queues.insert(key, Queue { holder: tt, head: NONE, tail: NONE });
                self.hold(t, key);
                true
            }
            Some(q) if q.holder == tt => true,
            Some(q) => {
                if q.tail == NONE {
                    q.head = tt;
                } else {
                    self.next[q.tail as usize] = tt;
                }
                q.tail = tt;
                self.next[t] = NONE;
                self.since[t] = now;
                self.stats.waits += 1;
                self.stats.current_waits += 1;
                false
            }
        }
    }

    fn hold(&mut self, t: usize, key: u64) {
        let n = self.held_n[t] as usize;
        debug_assert!(n < MAX_HELD, "a transaction holds at most MAX_HELD marked rows");
        if n < MAX_HELD {
            self.held[t][n] = key;
            self.held_n[t] += 1;
        }
    }

    /// Thread `t`'s transaction ends at `now`: every lock it holds goes to the first
    /// waiter of its queue (`granted` is called with that thread), or is freed.
    pub fn release_all(&mut self, t: usize, now: Nanos, mut granted: impl FnMut(usize)) {
        for k in 0..self.held_n[t] as usize {
            let key = self.held[t][k];
            // Invariant: a held key has a queue whose holder is `t`.
            let Some(q) = self.queues.get_mut(&key) else { continue };
            debug_assert_eq!(q.holder, t as u32);
            if q.head == NONE {
                self.queues.remove(&key);
                continue;
            }
            let w = q.head as usize;
            q.head = self.next[w];
            if q.head == NONE {
                q.tail = NONE;
            }
            q.holder = w as u32;
            self.next[w] = NONE;
            self.stats.wait_ns += now - self.since[w];
            self.stats.current_waits -= 1;
            self.hold(w, key);
            granted(w);
        }
        self.held_n[t] = 0;
    }

    /// The counters.
    pub fn stats(&self) -> RowLockStats {
        self.stats
    }

    /// Rows locked now.
    pub fn locked_rows(&self) -> usize {
        self.queues.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_row_is_granted_and_a_held_one_queues_in_order() {
        let mut l = RowLocks::new(4);
        let k = row_key(3, 7);
        assert!(l.lock(0, k, 0));
        assert!(l.lock(0, k, 1), "the holder asks again");
        assert!(!l.lock(1, k, 10));
        assert!(!l.lock(2, k, 20));
        assert_eq!(l.stats().current_waits, 2);
        let mut got = Vec::new();
        l.release_all(0, 100, |w| got.push(w));
        assert_eq!(got, [1], "the first waiter gets it");
        assert!(l.lock(1, k, 100), "granted while it waited");
        l.release_all(1, 150, |w| got.push(w));
        assert_eq!(got, [1, 2]);
        l.release_all(2, 160, |w| got.push(w));
        assert_eq!(got, [1, 2]);
        assert_eq!(l.locked_rows(), 0);
        let s = l.stats();
        assert_eq!((s.waits, s.current_waits), (2, 0));
        assert_eq!(s.wait_ns, (100 - 10) + (150 - 20));
    }

    #[test]
    fn a_commit_releases_every_row_it_holds() {
        let mut l = RowLocks::new(3);
        let (w, d) = (row_key(1, 1), row_key(2, 5));
        assert!(l.lock(0, w, 0) && l.lock(0, d, 0));
        assert!(!l.lock(1, d, 5));
        assert!(!l.lock(2, w, 6));
        let mut got = Vec::new();
        l.release_all(0, 50, |t| got.push(t));
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        assert_eq!(l.locked_rows(), 2);
        l.release_all(1, 60, |_| unreachable!());
        l.release_all(2, 60, |_| unreachable!());
        assert_eq!(l.locked_rows(), 0);
    }

    #[test]
    fn keys_of_different_tables_differ() {
        assert_ne!(row_key(1, 5), row_key(2, 5));
        assert_ne!(row_key(1, 5), row_key(1, 6));
    }
}
