//! Workloads: what the clients ask of the stack. Database benchmarks are statement
//! sources (a [`StatementSource`] hands each client thread its next [`statement::Statement`]:
//! index lookups the database answers); fio's jobs issue file I/O one layer lower; block
//! traces replay against the cache models alone.
pub mod fio;
pub mod rand;
pub mod statement;
pub mod sysbench;
pub mod tpcc;
pub mod trace;

use statement::Statement;
use sysbench::SysbenchGen;

/// Where the clients' statements come from: one generator per client thread, each with
/// its own random stream, as the benchmark seeds one per thread.
#[derive(Debug, Clone)]
pub enum StatementSource {
    /// No statements: fio's jobs drive the clients (`run::fio`).
    None,
    /// sysbench's tests.
    Sysbench(Vec<SysbenchGen>),
    /// Percona-Lab/sysbench-tpcc's transactions (their threads share the districts'
    /// counters).
    Tpcc(Box<tpcc::TpccSource>),
}

impl StatementSource {
    /// Client threads the source drives.
    pub fn clients(&self) -> usize {
        match self {
            StatementSource::None => 0,
            StatementSource::Sysbench(g) => g.len(),
            StatementSource::Tpcc(t) => t.gens.len(),
        }
    }

    /// Every thread runs sysbench test `test` from now on.
    pub fn set_test(&mut self, test: crate::config::SysbenchTest) {
        if let StatementSource::Sysbench(g) = self {
            g.iter_mut().for_each(|g| g.set_test(test));
        }
    }

    /// Client `client`'s next statement, into `out` (an empty one for a client the source
    /// does not drive).
    #[inline]
    pub fn next(&mut self, client: usize, out: &mut Statement) {
        match self {
            StatementSource::Sysbench(g) => match g.get_mut(client) {
                Some(g) => g.next(out),
                None => out.clear(),
            },
            StatementSource::Tpcc(t) => t.next(client, out),
            StatementSource::None => out.clear(),
        }
    }
}
