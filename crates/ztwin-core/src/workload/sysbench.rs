//! sysbench OLTP statements as the index lookups InnoDB performs for them.
//!
//! Source: akopytov/sysbench 1.0.20, `src/lua/oltp_common.lua` (`get_table_num`,
//! `get_id`, `execute_point_selects`, `create_table`), `src/lua/oltp_point_select.lua`,
//! `src/lua/select_random_points.lua`.
//!
//! - `oltp_point_select`: one event = one statement `SELECT c FROM sbtestN WHERE id=?`
//!   (`point_selects` forced to 1, no BEGIN/COMMIT), table N = `sysbench.rand.uniform(1,
//!   tables)`, id = `sysbench.rand.default(1, table_size)`: one clustered lookup.
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
//! 2. A statement holds at most [`crate::workload::statement::MAX_LOOKUPS`] lookups; further matching rows of a huge
//!    IN list are counted in `rows` but not looked up (never reached with
//!    `random_points` ≤ 100).
//! 3. The range scan of one k reads the leaf where k starts (see `btree`); duplicates
//!    spilling onto the next leaf are not read.

use crate::config::{SysbenchDataset, SysbenchTest, SysbenchWorkload};
use crate::db::innodb::btree::{k_match_id, k_matches};
use crate::workload::rand::SbRand;
use crate::workload::statement::{Index, Lookup, Statement};

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
        }
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
                let table = (self.rand.uniform(1, self.tables as u64) - 1) as u32;
                let id = self.rand.default_dist(1, self.table_size);
                out.push(Lookup { table, index: Index::Clustered, key: id });
                out.rows = u32::from(id >= 1 && id <= self.table_size);
            }
            SysbenchTest::SelectRandomPoints => {
                self.keys.clear();
                for _ in 0..self.random_points {
                    let k = self.rand.default_dist(self.k_min, self.k_max);
                    self.keys.push(k);
                }
                self.keys.sort_unstable();
                self.keys.dedup();
                for &k in &self.keys {
                    out.push(Lookup { table: 0, index: Index::Secondary, key: k });
                    let m = k_matches(self.table_size, k, self.data_seed);
                    let m_used = (m as usize).min(self.ids.len());
                    for j in 0..m_used {
                        self.ids[j] = k_match_id(self.table_size, k, j as u32, self.data_seed);
                    }
                    let ids = &mut self.ids[..m_used];
                    ids.sort_unstable();
                    for &id in ids.iter() {
                        out.push(Lookup { table: 0, index: Index::Clustered, key: id });
                    }
                    out.rows += m;
                }
            }
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
                    Index::Secondary => {
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
