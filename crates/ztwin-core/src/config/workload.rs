//! The load: a sysbench test with its options, or a resolved fio job file.

use serde::{Deserialize, Serialize};

/// The load.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// A sysbench OLTP test.
    Sysbench(SysbenchWorkload),
    /// fio jobs over the `files` dataset.
    Fio(FioWorkload),
}

/// A fio job file, resolved (python/ztwin/fio.py parses fio's ini dialect and command
/// line; see `crate::workload::fio` for what each field does).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioWorkload {
    /// fio release whose buffer contents are modelled, "major.minor[.patch]" (2.0 or
    /// later): what laying out a file writes and how compressible buffers are built
    /// changed between releases (`crate::workload::fio::buffers`).
    pub fio_version: String,
    /// The jobs (sections) in job-file order.
    pub jobs: Vec<FioJob>,
}

/// fio `rw` (readwrite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioRw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed reads and writes (rwmixread).
    Rw,
    /// Random mixed reads and writes (rwmixread).
    Randrw,
}

/// fio `random_distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioDistribution {
    /// Uniform (fio's default `random`).
    Random,
    /// zipf:theta
    Zipf,
    /// pareto:h
    Pareto,
    /// normal:sigma (fio's gauss), sigma in percent of the range.
    Normal,
}

/// fio `sync` (fio-3.24+ spellings; before, a boolean: 1 is `sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioSync {
    /// none / 0: plain writes.
    #[default]
    None,
    /// sync / 1: files opened O_SYNC.
    Sync,
    /// dsync: files opened O_DSYNC.
    Dsync,
}

/// fio `fadvise_hint`: the posix_fadvise(2) advice fio gives each file it opens
/// (`td_io_open_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioFadvise {
    /// 0: no advice.
    None,
    /// 1 (fio's default, F_ADV_TYPE): POSIX_FADV_RANDOM for random jobs,
    /// POSIX_FADV_SEQUENTIAL for the others.
    #[default]
    Type,
    /// random: POSIX_FADV_RANDOM.
    Random,
    /// sequential: POSIX_FADV_SEQUENTIAL.
    Sequential,
}

/// fio `file_service_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FioFileService {
    /// Round robin over the open files (fio's default).
    Roundrobin,
    /// One file until it is done, then the next.
    Sequential,
    /// A uniformly random file.
    Random,
}

/// One fio job (section) with its options resolved (\[global\] merged in, sizes in bytes,
/// times in ns).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioJob {
    /// Section name.
    pub name: String,
    /// rw
    pub rw: FioRw,
    /// rwmixread, percent of reads in rw/randrw.
    pub rwmixread: u32,
    /// bs of reads, bytes.
    pub bs_read: u32,
    /// bs of writes, bytes.
    pub bs_write: u32,
    /// numjobs: clones of the job, each with its own offsets and random state.
    pub numjobs: u32,
    /// Files of each clone: indices into the `files` dataset (clones share a file when
    /// the job names it with `filename`).
    pub clone_files: Vec<Vec<u32>>,
    /// offset: where in each file the job's range starts, bytes.
    pub offset: u64,
    /// Bytes of each file the job covers (fio's per-file io size: size / nrfiles).
    pub file_range: u64,
    /// io_size (default size): bytes one loop of one clone transfers.
    pub io_size: u64,
    /// loops
    pub loops: u32,
    /// runtime, ns (0: none).
    pub runtime_ns: u64,
    /// time_based
    pub time_based: bool,
    /// ramp_time, ns.
    pub ramp_time_ns: u64,
    /// ioengine (psync, sync, pvsync, pvsync2, libaio, io_uring).
    pub ioengine: String,
    /// iodepth
    pub iodepth: u32,
    /// direct (O_DIRECT)
    pub direct: bool,
    /// file_service_type
    pub file_service_type: FioFileService,
    /// The `:N` of file_service_type (I/Os per file before switching), >= 1.
    pub file_service_nr: u32,
    /// random_distribution
    pub random_distribution: FioDistribution,
    /// Its parameter: zipf theta, pareto h, normal sigma (percent); 0 for random.
    pub distribution_param: f64,
    /// norandommap
    pub norandommap: bool,
    /// randrepeat (default true: the same offsets every run).
    pub randrepeat: bool,
    /// randseed (default 0xb1899bed, FIO_RANDSEED).
    pub randseed: u64,
    /// group_reporting (reporting only).
    pub group_reporting: bool,
    /// The buffer options (what writes and layouts put in the files).
    pub buffers: FioBuffers,
    /// fsync: an fsync(2) after every this many writes issued (0: none).
    #[serde(default)]
    pub fsync: u32,
    /// fdatasync: an fdatasync(2) after every this many writes issued (0: none).
    #[serde(default)]
    pub fdatasync: u32,
    /// sync: the files are opened O_SYNC or O_DSYNC.
    #[serde(default)]
    pub sync: FioSync,
    /// end_fsync: fsync(2) every file of the clone when its I/O is done.
    #[serde(default)]
    pub end_fsync: bool,
    /// fsync_on_close: fsync(2) each file when it is closed (at the clone's end here).
    #[serde(default)]
    pub fsync_on_close: bool,
    /// invalidate (fio's default true): POSIX_FADV_DONTNEED on each file the job opens,
    /// dropping its clean cached pages (XFS/ext4's page cache; ZFS ignores it).
    #[serde(default = "yes")]
    pub invalidate: bool,
    /// fadvise_hint (fio's default 1: by the job's type).
    #[serde(default)]
    pub fadvise_hint: FioFadvise,
}

fn yes() -> bool {
    true
}

/// fio's buffer options; None = not given (fio_option_is_set matters to fio).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioBuffers {
    /// zero_buffers
    pub zero_buffers: Option<bool>,
    /// refill_buffers
    pub refill_buffers: Option<bool>,
    /// scramble_buffers (fio default 1)
    pub scramble_buffers: Option<bool>,
    /// buffer_compress_percentage
    pub buffer_compress_percentage: Option<u32>,
    /// buffer_compress_chunk, bytes
    pub buffer_compress_chunk: Option<u32>,
}

/// sysbench test name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SysbenchTest {
    /// SELECT c FROM sbtestN WHERE id = ?
    OltpPointSelect,
    /// SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ... ?)
    SelectRandomPoints,
    /// oltp_read_only.lua: BEGIN, point_selects point selects, then (range_selects) the
    /// simple, SUM, ORDER BY and DISTINCT ranges of range_size ids, COMMIT.
    OltpReadOnly,
    /// oltp_read_write.lua: oltp_read_only's reads, then the index updates, non-index
    /// updates and delete/insert pairs, in one transaction.
    OltpReadWrite,
    /// oltp_write_only.lua: the updates and delete/insert pairs in one transaction.
    OltpWriteOnly,
    /// oltp_update_index.lua: `UPDATE sbtestN SET k=k+1 WHERE id=?`, autocommit.
    OltpUpdateIndex,
    /// oltp_update_non_index.lua: `UPDATE sbtestN SET c=? WHERE id=?`, autocommit.
    OltpUpdateNonIndex,
    /// oltp_insert.lua: `INSERT INTO sbtestN (id, k, c, pad)`, autocommit.
    OltpInsert,
    /// oltp_delete.lua: `DELETE FROM sbtestN WHERE id=?`, autocommit.
    OltpDelete,
    /// Percona-Lab/sysbench-tpcc's `tpcc.lua run` (needs `[dataset] type = "tpcc"`): its
    /// five transactions in their coded mix (`crate::workload::tpcc`).
    Tpcc,
}

impl SysbenchTest {
    /// Whether an event is a transaction of several queries (oltp_read_only,
    /// oltp_read_write, oltp_write_only), so tps and qps differ.
    pub fn transactions(self) -> bool {
        match self {
            SysbenchTest::OltpReadOnly
            | SysbenchTest::OltpReadWrite
            | SysbenchTest::OltpWriteOnly
            | SysbenchTest::Tpcc => true,
            SysbenchTest::OltpPointSelect
            | SysbenchTest::SelectRandomPoints
            | SysbenchTest::OltpUpdateIndex
            | SysbenchTest::OltpUpdateNonIndex
            | SysbenchTest::OltpInsert
            | SysbenchTest::OltpDelete => false,
        }
    }

    /// Whether the test changes data (its statements need InnoDB's write path).
    pub fn writes(self) -> bool {
        match self {
            SysbenchTest::OltpPointSelect | SysbenchTest::SelectRandomPoints | SysbenchTest::OltpReadOnly => {
                false
            }
            SysbenchTest::OltpReadWrite
            | SysbenchTest::OltpWriteOnly
            | SysbenchTest::OltpUpdateIndex
            | SysbenchTest::OltpUpdateNonIndex
            | SysbenchTest::OltpInsert
            | SysbenchTest::OltpDelete
            | SysbenchTest::Tpcc => true,
        }
    }
}

/// sysbench --rand-type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    /// uniform
    Uniform,
    /// special (sysbench's default in 1.0)
    Special,
    /// gaussian
    Gaussian,
    /// pareto
    Pareto,
    /// zipfian
    Zipfian,
}

/// sysbench options of the test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchWorkload {
    /// Test name.
    pub test: SysbenchTest,
    /// --threads: closed-loop clients.
    pub threads: u32,
    /// --rand-type
    pub rand_type: RandType,
    /// --rand-spec-iter (12)
    pub rand_spec_iter: u32,
    /// --rand-spec-pct (1)
    pub rand_spec_pct: f64,
    /// --rand-spec-res (75)
    pub rand_spec_res: f64,
    /// --rand-pareto-h (0.2)
    pub rand_pareto_h: f64,
    /// --rand-zipfian-exp (0.8)
    pub rand_zipfian_exp: f64,
    /// --random_points (10), select_random_points only
    pub random_points: u32,
    /// oltp_common.lua's transaction options (oltp_* tests; sysbench 1.0 defaults).
    #[serde(default)]
    pub oltp: OltpOptions,
}

/// The options oltp_common.lua defines for the OLTP tests (sysbench 1.0.20
/// `sysbench.cmdline.options`), with its defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OltpOptions {
    /// --range_size: ids per range SELECT (100).
    pub range_size: u32,
    /// --point_selects: point SELECTs per transaction (10).
    pub point_selects: u32,
    /// --simple_ranges: `SELECT c ... WHERE id BETWEEN` per transaction (1).
    pub simple_ranges: u32,
    /// --sum_ranges: `SELECT SUM(k) ... BETWEEN` per transaction (1).
    pub sum_ranges: u32,
    /// --order_ranges: `SELECT c ... BETWEEN ... ORDER BY c` per transaction (1).
    pub order_ranges: u32,
    /// --distinct_ranges: `SELECT DISTINCT c ... BETWEEN ... ORDER BY c` per transaction (1).
    pub distinct_ranges: u32,
    /// --index_updates: `UPDATE ... SET k=k+1` per transaction (1).
    pub index_updates: u32,
    /// --non_index_updates: `UPDATE ... SET c=?` per transaction (1).
    pub non_index_updates: u32,
    /// --delete_inserts: DELETE/INSERT pairs per transaction (1).
    pub delete_inserts: u32,
    /// --range_selects: run the range SELECTs at all (true).
    pub range_selects: bool,
    /// --skip_trx: no BEGIN/COMMIT, every query in autocommit (false).
    pub skip_trx: bool,
    /// --auto_inc: oltp_insert leaves id to AUTO_INCREMENT (true).
    pub auto_inc: bool,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
        }
    }
}
