//! sysbench OLTP statements as the index lookups InnoDB performs for them.
//!
//! Source: akopytov/sysbench 1.0.20, `src/lua/oltp_common.lua` (`get_table_num`,
//! `get_id`, `execute_point_selects`, `execute_range`, `create_table`, the options and
//! their defaults), `src/lua/oltp_point_select.lua`, `src/lua/oltp_read_only.lua`,
//! `src/lua/select_random_points.lua`.
//!
//! - `oltp_point_select`: one event = one statement `SELECT c FROM sbtestN WHERE id=?`
//!   (`point_selects` forced to 1, no BEGIN/COMMIT), table N = `sysbench.rand.uniform(1,
//!   tables)`, id = `sysbench.rand.default(1, table_size)`: one clustered lookup.
//! - `oltp_read_only`: one event = a transaction: BEGIN, `point_selects` point selects
//!   on one table, then (with `range_selects`) `simple_ranges`, `sum_ranges`,
//!   `order_ranges` and `distinct_ranges` range selects `id BETWEEN ? AND ? +
//!   range_size - 1`, one table per kind, then COMMIT (none with `skip_trx`). A range is
//!   one descent to its first id, then the next leaves in key order.
//! - `select_random_points`: `SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ..., ?)`
//!   with `random_points` values, each `sb_rand(rmin, rmax)` (the default distribution)
//!   where each thread has its own slice: `rlen = table_size / threads`,
//!   `rmin = rlen * thread_id`, `rmax = rmin + rlen` (Lua numbers, truncated to integers
//!   by the C call). Its prepare accepts only one table. InnoDB runs the IN list as a
//!   range scan on k_1: the optimizer sorts and deduplicates the values, and for each
//!   value in ascending order descends the secondary index, then fetches every matching
//!   row by primary key (no multi-range read by default) in index order, (k, id)
//!   ascending. The lookups are emitted in that order: secondary(k1), clustered(ids of
//!   k1 ascending), secondary(k2), ...
//!
//! Which rows have a given k is decided by [`crate::db::innodb::btree::k_matches`] and
//! [`crate::db::innodb::btree::k_match_id`] from the dataset seed, so that all threads
//! see the same table.
//!
//! Simplifications:
//! 1. One generator per client thread, each with its own random stream derived from
//!    (seed, thread_id), as sysbench seeds one PRNG per thread.
//! 2. A statement holds at most [`MAX_LOOKUPS`] lookups; further matching rows of a huge
//!    IN list are counted in `rows` but not looked up (never reached with
//!    `random_points` ≤ 100).
//! 3. The range scan of one k reads the leaf where k starts (see `btree`); duplicates
//!    spilling onto the next leaf are not read.
//! 4. SUM, ORDER BY and DISTINCT cost what reading their rows costs: the filesort of
//!    ORDER BY and the temporary table of DISTINCT (100 short rows each) are not
//!    charged apart. BEGIN and COMMIT of a read-only transaction cost a statement each.

use crate::config::{OltpOptions, SysbenchDataset, SysbenchTest, SysbenchWorkload};
use crate::db::innodb::btree::{k_match_id, k_matches};
use crate::error::{Error, Result};
use crate::workload::rand::SbRand;
use crate::workload::statement::{Index, Lookup, Op, Statement, MAX_LOOKUPS};

/// Generator of one sysbench client thread's statements.
#[derive(Debug, Clone)]
pub struct SysbenchGen {
    rand: SbRand,
    test: SysbenchTest,
    tables: u32,
    table_size: u64,
    random_points: usize,
    /// Range of k values of this thread (select_random_points).
    k_min: u64,
    k_max: u64,
    data_seed: u64,
    keys: Vec<u64>,
    ids: [u64; 64],
    /// oltp_common.lua's options (oltp_read_only).
    oltp: OltpOptions,
}

impl SysbenchGen {
    /// The generator of thread 0 (see [`SysbenchGen::for_thread`]).
    pub fn new(seed: u64, workload: &SysbenchWorkload, dataset: &SysbenchDataset) -> Self {
        Self::for_thread(seed, 0, workload, dataset)
    }

    /// The generator of client thread `thread_id` (0-based, < `workload.threads`). `seed`
    /// is the run's seed, shared by all threads: it also fixes which rows have each k.
    pub fn for_thread(
        seed: u64,
        thread_id: u32,
        workload: &SysbenchWorkload,
        dataset: &SysbenchDataset,
    ) -> Self {
        let stream = seed ^ (thread_id as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407);
        let threads = workload.threads.max(1) as f64;
        let rlen = dataset.table_size as f64 / threads;
        let rmin = rlen * (thread_id % workload.threads.max(1)) as f64;
        let rmax = rmin + rlen;
        let random_points = workload.random_points.max(1) as usize;
        SysbenchGen {
            rand: SbRand::new(stream, workload),
            test: workload.test,
            tables: dataset.tables.max(1),
            table_size: dataset.table_size.max(1),
            random_points,
            k_min: rmin as u64,
            k_max: rmax as u64,
            data_seed: seed,
            keys: Vec::with_capacity(random_points),
            ids: [0; 64],
            oltp: workload.oltp,
        }
    }

    /// The generator's own limits on the options (checked when the stack is built): a
    /// range spans at most 65535 ids (`Lookup::span`), a transaction at most
    /// [`MAX_LOOKUPS`] lookups.
    pub fn check(workload: &SysbenchWorkload) -> Result<()> {
        let o = &workload.oltp;
        if !(1..=65535).contains(&o.range_size) {
            return Err(Error::config("workload.range_size", "must be 1 to 65535 (the model's bound)"));
        }
        let ranges = [o.simple_ranges, o.sum_ranges, o.order_ranges, o.distinct_ranges];
        let reads = ranges.iter().fold(u64::from(o.point_selects), |n, &r| n + u64::from(r));
        // A write's lookups (an insert has two), each with its commit in autocommit.
        let ac = u64::from(o.skip_trx);
        let writes = (u64::from(o.index_updates) + u64::from(o.non_index_updates)) * (1 + ac)
            + u64::from(o.delete_inserts) * (3 + 2 * ac)
            + 1;
        let lookups = reads + writes;
        if lookups > MAX_LOOKUPS as u64 {
            return Err(Error::config(
                "workload.point_selects",
                format!("a transaction's point selects, range selects and writes must make at most {MAX_LOOKUPS} lookups"),
            ));
        }
        Ok(())
    }

    /// Runs `test` from now on (a phase of another test; the thread's random stream goes on).
    pub fn set_test(&mut self, test: SysbenchTest) {
        self.test = test;
    }

    /// The seed that decides which rows have each k (pass it to `btree::k_matches`).
    pub fn data_seed(&self) -> u64 {
        self.data_seed
    }

    /// The k range [min, max] this thread draws from (select_random_points).
    pub fn k_range(&self) -> (u64, u64) {
        (self.k_min, self.k_max)
    }

    /// Fills `out` with the next statement.
    pub fn next(&mut self, out: &mut Statement) {
        out.clear();
        match self.test {
            SysbenchTest::OltpPointSelect => {
                let table = self.table_num();
                let id = self.rand.default_dist(1, self.table_size);
                out.push(Lookup::point(table, Index::Clustered, id));
                out.rows = u32::from(id >= 1 && id <= self.table_size);
                out.queries = 1;
            }
            SysbenchTest::OltpReadOnly => self.transaction(out, true, false),
            SysbenchTest::OltpReadWrite => self.transaction(out, true, true),
            SysbenchTest::OltpWriteOnly => self.transaction(out, false, true),
            SysbenchTest::OltpUpdateIndex
            | SysbenchTest::OltpUpdateNonIndex
            | SysbenchTest::OltpInsert
            | SysbenchTest::OltpDelete => self.single_write(out),
            // tpcc's transactions come from `workload::tpcc` (a tpcc dataset).
            SysbenchTest::Tpcc => {}
            SysbenchTest::SelectRandomPoints => {
                self.keys.clear();
                for _ in 0..self.random_points {
                    let k = self.rand.default_dist(self.k_min, self.k_max);
                    self.keys.push(k);
                }
                self.keys.sort_unstable();
                self.keys.dedup();
                for &k in &self.keys {
                    out.push(Lookup::point(0, Index::Secondary, k));
                    let m = k_matches(self.table_size, k, self.data_seed);
                    let m_used = (m as usize).min(self.ids.len());
                    for j in 0..m_used {
                        self.ids[j] = k_match_id(self.table_size, k, j as u32, self.data_seed);
                    }
                    let ids = &mut self.ids[..m_used];
                    ids.sort_unstable();
                    for &id in ids.iter() {
                        out.push(Lookup::point(0, Index::Clustered, id));
                    }
                    out.rows += m;
                }
                out.queries = 1;
            }
        }
    }

    /// `get_table_num()`: a table, 0-based.
    #[inline]
    fn table_num(&mut self) -> u32 {
        (self.rand.uniform(1, self.tables as u64) - 1) as u32
    }

    /// The OLTP scripts' `event()` (oltp_read_only, oltp_read_write, oltp_write_only):
    /// BEGIN (unless skip_trx); the reads (`execute_point_selects`: one table for the group,
    /// an id per query; with range_selects, `execute_range` for each kind in order:
    /// simple, SUM, ORDER BY, DISTINCT, one table per kind, drawn even when the kind's count
    /// is 0, ids `id..id + range_size - 1`); the writes (`execute_index_updates`,
    /// `execute_non_index_updates`, `execute_delete_inserts`, one table per kind); COMMIT.
    /// With skip_trx each write commits on its own (autocommit). The random draws are in
    /// the script's order.
    fn transaction(&mut self, out: &mut Statement, reads: bool, writes: bool) {
        let o = self.oltp;
        let trx = u32::from(!o.skip_trx);
        out.queries = 2 * trx;
        if reads {
            let table = self.table_num();
            for _ in 0..o.point_selects {
                let id = self.rand.default_dist(1, self.table_size);
                out.push(Lookup::point(table, Index::Clustered, id));
                out.rows += u32::from(id >= 1 && id <= self.table_size);
                out.queries += 1;
            }
            if o.range_selects {
                for count in [o.simple_ranges, o.sum_ranges, o.order_ranges, o.distinct_ranges] {
                    let table = self.table_num();
                    for _ in 0..count {
                        let id = self.rand.default_dist(1, self.table_size);
                        let span = o.range_size.min(u32::from(u16::MAX)) as u16;
                        out.push(Lookup::range(table, id, span));
                        // The rows BETWEEN id AND id + range_size - 1 that exist.
                        let last = (id + u64::from(span) - 1).min(self.table_size);
                        out.rows += last.saturating_sub(id.max(1) - 1) as u32;
                        out.queries += 1;
                    }
                }
            }
        }
        if writes {
            let autocommit = o.skip_trx;
            for (count, op) in [(o.index_updates, Op::UpdateIndex), (o.non_index_updates, Op::UpdateNonIndex)]
            {
                let table = self.table_num();
                for _ in 0..count {
                    let id = self.rand.default_dist(1, self.table_size);
                    self.write(out, &[Lookup::write(table, Index::Clustered, op, id)], autocommit);
                }
            }
            let table = self.table_num();
            for _ in 0..o.delete_inserts {
                let id = self.rand.default_dist(1, self.table_size);
                let k = self.rand.default_dist(1, self.table_size);
                self.write(out, &[Lookup::write(table, Index::Clustered, Op::Delete, id)], autocommit);
                self.write(out, &Self::insert(table, id, k), autocommit);
            }
        }
        if trx == 1 && writes {
            out.push(Lookup::write(0, Index::Clustered, Op::Commit, 0));
        }
    }

    /// One write query: its lookups, and with `autocommit` its commit.
    fn write(&mut self, out: &mut Statement, lookups: &[Lookup], autocommit: bool) {
        for &l in lookups {
            out.push(l);
        }
        // The row the write finds (an insert reads none).
        out.rows += u32::from(lookups[0].op != Op::Insert);
        out.queries += 1;
        if autocommit {
            out.push(Lookup::write(lookups[0].table, Index::Clustered, Op::Commit, 0));
        }
    }

    /// An INSERT of (id, k): the clustered entry, then k_1's (id 0: AUTO_INCREMENT's next).
    fn insert(table: u32, id: u64, k: u64) -> [Lookup; 2] {
        [
            Lookup::write(table, Index::Clustered, Op::Insert, id),
            Lookup::write(table, Index::Secondary, Op::Insert, k),
        ]
    }

    /// oltp_update_index, oltp_update_non_index, oltp_delete, oltp_insert: one autocommit
    /// statement per event (`execute_index_updates` with index_updates, and
    /// `execute_non_index_updates` with non_index_updates, statements on one table).
    fn single_write(&mut self, out: &mut Statement) {
        let o = self.oltp;
        match self.test {
            SysbenchTest::OltpUpdateIndex | SysbenchTest::OltpUpdateNonIndex => {
                let (count, op) = if self.test == SysbenchTest::OltpUpdateIndex {
                    (o.index_updates, Op::UpdateIndex)
                } else {
                    (o.non_index_updates, Op::UpdateNonIndex)
                };
                let table = self.table_num();
                for _ in 0..count {
                    let id = self.rand.default_dist(1, self.table_size);
                    self.write(out, &[Lookup::write(table, Index::Clustered, op, id)], true);
                }
            }
            SysbenchTest::OltpDelete => {
                let table = self.table_num();
                let id = self.rand.default_dist(1, self.table_size);
                self.write(out, &[Lookup::write(table, Index::Clustered, Op::Delete, id)], true);
            }
            SysbenchTest::OltpInsert => {
                // oltp_insert.lua: the table, k, then (without auto_inc) a unique id
                // (sysbench.rand.unique(): distinct 32-bit values, as a signed INT).
                let table = self.table_num();
                let k = self.rand.default_dist(1, self.table_size);
                let id = if o.auto_inc { 0 } else { self.rand.next_u64() & 0xffff_ffff };
                self.write(out, &Self::insert(table, id, k), true);
            }
            SysbenchTest::OltpPointSelect
            | SysbenchTest::SelectRandomPoints
            | SysbenchTest::OltpReadOnly
            | SysbenchTest::OltpReadWrite
            | SysbenchTest::OltpWriteOnly
            | SysbenchTest::Tpcc => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RandType;
    use crate::workload::rand::test_workload;
    use proptest::prelude::*;

    fn ds(tables: u32, rows: u64) -> SysbenchDataset {
        SysbenchDataset {
            tables,
            table_size: rows,
            compress_ratio: Some(1.0),
            prepare_rand_type: Default::default(),
        }
    }

    /// oltp_read_only's event: BEGIN, 10 point selects on one table, the four range
    /// selects of 100 ids (one table each), COMMIT: 16 queries and 14 lookups, and the
    /// options change it as oltp_common.lua says.
    #[test]
    fn read_only_transaction_is_the_scripts_event() {
        let mut w = test_workload(RandType::Uniform);
        w.test = SysbenchTest::OltpReadOnly;
        let d = ds(4, 1_000_000);
        let mut g = SysbenchGen::new(3, &w, &d);
        let mut s = Statement::default();
        for _ in 0..200 {
            g.next(&mut s);
            assert_eq!((s.queries, s.n), (16, 14));
            let (points, ranges) = s.lookups().split_at(10);
            assert!(points.iter().all(|l| l.span == 1 && l.table == points[0].table));
            assert!(ranges.iter().all(|l| l.span == 100 && l.index == Index::Clustered));
            let expect: u32 =
                10 + ranges.iter().map(|l| (l.key + 99).min(1_000_000) + 1 - l.key).sum::<u64>() as u32;
            assert_eq!(s.rows, expect);
        }
        w.oltp.skip_trx = true;
        w.oltp.range_size = 7;
        let mut g = SysbenchGen::new(3, &w, &d);
        g.next(&mut s);
        assert_eq!((s.queries, s.n, s.lookups[13].span), (14, 14, 7));
        w.oltp.range_selects = false;
        let mut g = SysbenchGen::new(3, &w, &d);
        g.next(&mut s);
        assert_eq!((s.queries, s.n), (10, 10));
        // The generator's bounds are refused by the key as written.
        w.oltp.range_size = 70_000;
        assert!(
            matches!(SysbenchGen::check(&w), Err(Error::Config { field, .. }) if field == "workload.range_size")
        );
    }

    fn ops(s: &Statement) -> Vec<Op> {
        s.lookups().iter().map(|l| l.op).collect()
    }

    /// The write tests as their scripts issue them: sysbench counts 20 queries for an
    /// oltp_read_write transaction (14 reads, 4 writes, BEGIN, COMMIT) and 6 for
    /// oltp_write_only; one COMMIT ends each; with skip_trx every write commits alone.
    #[test]
    fn write_transactions_are_the_scripts_events() {
        let mut w = test_workload(RandType::Uniform);
        let d = ds(4, 1_000_000);
        let mut s = Statement::default();
        w.test = SysbenchTest::OltpReadWrite;
        SysbenchGen::new(5, &w, &d).next(&mut s);
        assert_eq!((s.queries, s.n), (20, 14 + 5 + 1));
        let writes = [Op::UpdateIndex, Op::UpdateNonIndex, Op::Delete, Op::Insert, Op::Insert, Op::Commit];
        assert_eq!(ops(&s)[14..], writes);
        // The pair's insert puts back the id it deleted, with a new k in k_1.
        let l = s.lookups();
        assert_eq!((l[16].key, l[17].key, l[18].index), (l[16].key, l[16].key, Index::Secondary));
        w.test = SysbenchTest::OltpWriteOnly;
        SysbenchGen::new(5, &w, &d).next(&mut s);
        assert_eq!((s.queries, ops(&s)), (6, writes.to_vec()));
        w.oltp.skip_trx = true;
        SysbenchGen::new(5, &w, &d).next(&mut s);
        use Op::*;
        assert_eq!(
            ops(&s),
            vec![UpdateIndex, Commit, UpdateNonIndex, Commit, Delete, Commit, Insert, Insert, Commit]
        );
        assert_eq!(s.queries, 4);
    }

    #[test]
    fn single_write_tests_autocommit_each_statement() {
        let mut w = test_workload(RandType::Uniform);
        let d = ds(2, 1000);
        let mut s = Statement::default();
        use Op::*;
        for (test, expect) in [
            (SysbenchTest::OltpUpdateIndex, vec![UpdateIndex, Commit]),
            (SysbenchTest::OltpUpdateNonIndex, vec![UpdateNonIndex, Commit]),
            (SysbenchTest::OltpDelete, vec![Delete, Commit]),
            (SysbenchTest::OltpInsert, vec![Insert, Insert, Commit]),
        ] {
            w.test = test;
            SysbenchGen::new(5, &w, &d).next(&mut s);
            assert_eq!((ops(&s), s.queries), (expect, 1), "{test:?}");
            assert!(test.writes());
        }
        // AUTO_INCREMENT: the clustered key is left to InnoDB (0).
        assert_eq!(s.lookups[0].key, 0);
        w.oltp.auto_inc = false;
        SysbenchGen::new(5, &w, &d).next(&mut s);
        assert_ne!(s.lookups[0].key, 0);
    }

    #[test]
    fn point_select_one_lookup_uniform_tables() {
        let w = test_workload(RandType::Uniform);
        let d = ds(8, 500_000);
        let mut g = SysbenchGen::new(1, &w, &d);
        let mut s = Statement::default();
        let mut per_table = [0usize; 8];
        let n = 80_000;
        for _ in 0..n {
            g.next(&mut s);
            assert_eq!(s.n, 1);
            assert_eq!(s.rows, 1);
            let l = s.lookups[0];
            assert_eq!(l.index, Index::Clustered);
            assert!((1..=500_000).contains(&l.key));
            per_table[l.table as usize] += 1;
        }
        let tol = 5.0 * (0.125 * 0.875 / n as f64).sqrt();
        for c in per_table {
            assert!((c as f64 / n as f64 - 0.125).abs() < tol, "{per_table:?}");
        }
    }

    #[test]
    fn random_points_order_and_rows() {
        let mut w = test_workload(RandType::Uniform);
        w.test = SysbenchTest::SelectRandomPoints;
        let d = ds(1, 2_650_000);
        let mut g = SysbenchGen::for_thread(3, 2, &w, &d);
        let (lo, hi) = g.k_range();
        assert_eq!((lo, hi), (662_500, 993_750));
        let mut s = Statement::default();
        let mut total_rows = 0u64;
        let n = 2000;
        for _ in 0..n {
            g.next(&mut s);
            let mut last_k = 0;
            let mut clustered = 0;
            let mut last_id = 0;
            for l in s.lookups() {
                assert_eq!(l.table, 0);
                match l.index {
                    Index::Secondary | Index::Secondary2 => {
                        assert!(
                            l.key > last_k && (lo..=hi).contains(&l.key),
                            "keys ascending, in the thread's slice"
                        );
                        last_k = l.key;
                        last_id = 0;
                    }
                    Index::Clustered => {
                        assert!(l.key >= last_id, "ids of one k ascending");
                        last_id = l.key;
                        clustered += 1;
                    }
                }
            }
            assert_eq!(clustered, s.rows as usize);
            total_rows += s.rows as u64;
        }
        // 10 points, Poisson(1) rows each: mean 10 rows per statement (sd sqrt(10)).
        let mean = total_rows as f64 / n as f64;
        assert!((mean - 10.0).abs() < 5.0 * (10.0 / n as f64).sqrt(), "{mean}");
    }

    #[test]
    fn threads_agree_on_the_table() {
        let mut w = test_workload(RandType::Uniform);
        w.test = SysbenchTest::SelectRandomPoints;
        let d = ds(1, 10_000);
        let g0 = SysbenchGen::for_thread(5, 0, &w, &d);
        let g1 = SysbenchGen::for_thread(5, 1, &w, &d);
        assert_eq!(g0.data_seed(), g1.data_seed());
        assert_ne!(g0.k_range(), g1.k_range());
    }

    proptest! {
        #[test]
        fn statements_well_formed(seed in any::<u64>(), rows in 1u64..5_000_000, ti in 0usize..5, srp in any::<bool>(), th in 0u32..8) {
            let types = [RandType::Uniform, RandType::Special, RandType::Gaussian, RandType::Pareto, RandType::Zipfian];
            let mut w = test_workload(types[ti]);
            if srp { w.test = SysbenchTest::SelectRandomPoints; }
            let d = ds(if srp { 1 } else { 4 }, rows);
            let mut g = SysbenchGen::for_thread(seed, th, &w, &d);
            let mut s = Statement::default();
            for _ in 0..20 {
                g.next(&mut s);
                prop_assert!(s.n >= 1);
                for l in s.lookups() {
                    prop_assert!(l.table < d.tables);
                    prop_assert!(l.key <= rows, "{} > {}", l.key, rows);
                    if l.index == Index::Clustered { prop_assert!(l.key >= 1); }
                }
            }
        }
    }
}
