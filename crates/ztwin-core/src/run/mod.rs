//! The driver: builds the stack of one resolved variant and runs it on the simulated clock.
//!
//! Each sysbench thread is a closed-loop client: it issues a statement, waits for it, and
//! issues the next. A client is a small state machine stepped by events; each step does
//! the functional work of one layer at the current simulated time (a buffer-pool lookup,
//! one ARC lookup of one tree level) and either continues at once or waits for a resource:
//!
//! ```text
//!  Start ─► NextPage ─┬─ BP hit ─────────────────────────────────────► NextPage (next page)
//!                     └─ BP miss ─► ReadStart (CPU so far runs) ─► FileRead: the filesystem
//!                        layer steps the read until it waits or is done ─► NextPage
//!                          ZFS (fs::zfs::layer): the walk down the block-pointer tree
//!                          XFS/ext4 (fs::extent): one device read (with bcache: cache and/or
//!                          backing reads, and a miss's data written to the cache device)
//!  ... last page of the last lookup ─► Finish (CPU runs, latency recorded) ─► Start
//! ```
//!
//! Prefetch reads (`dbuf_prefetch_impl`, see `fs::zfs::prefetch`) belong to no client:
//! each is a small state machine of the ZFS layer, woken by events of its own (see
//! `events`), and its block stays in the layer's in-flight set until it completes, so a
//! demand read of it waits for it.
//!
//! CPU work accumulates per client and runs on the vCPUs (FCFS) before the client starts a
//! file read and before it finishes a statement, so CPU contention delays I/O issue as a
//! busy machine does; the CPU a read costs after it completes (interrupt, zio pipeline,
//! checksum, decompression) joins the next burst. A page another client is reading is
//! waited for (InnoDB's io_fix), and so is a block (a dbuf in DB_READ): never read twice.
//!
//! fio writes take the filesystem layer's write path (ZFS, `fs::zfs::write_path`: the
//! throttle, read-modify-write through the read path, dirty records synced by txgs in the
//! background, the sync a thread woken on the queue; XFS/ext4: one O_DIRECT device write,
//! through bcache if present). On ZFS an fsync, the end of an O_SYNC write, and (with
//! `sync=always`) every write and read commit the intent log (`fs::zfs::zil`): the client
//! waits in `Commit` until the log releases it, woken by the log's own events.
//!
//! ```text
//!  ... ─► Commit (CPU so far runs; zil_commit) ─┬─ returns at once ──────► after_commit
//!                                               └─ waits ─► CommitWait ─► after_commit
//! ```
//!
//! On XFS/ext4 a file opened without O_DIRECT goes through the page cache (`fs::buffered`):
//! a read steps in FileRead like any other; a write is BufferedWrite (its partial pages'
//! reads, the copy, the dirty throttle's pause) then WriteDone; an fsync or an O_SYNC
//! write's sync writes the dirty pages in DataSync before the journal's part
//! (JournalSync); the flusher is a background thread (`Event::Flusher`).

use hashbrown::HashMap;
use serde_json::{json, Map, Value};

use crate::cache::arc::{Arc, ArcParams, ArcStats, ReadFlags};
use crate::cache::bcache::{Bcache, BcacheParams, BcacheStats};
use crate::cache::l2arc::{L2arcConfig, L2arcDeviceConfig, L2arcParams};
use crate::config::{
    CacheProperty, DatabaseConfig, DatasetConfig, FsConfig, PhaseConfig, VariantConfig, WorkloadConfig,
};
use crate::db::innodb::btree::{TableLayout, TableSchema};
use crate::db::innodb::buffer_pool::PageKey;
use crate::db::innodb::writes::WriteStats;
use crate::db::Database;
use crate::db::MAX_PATH;
use crate::dev::cpu::Cpus;
use crate::dev::device::{Device, DeviceCounters, Op};
use crate::error::{Error, Result};
use crate::fs::extent::{ExtentFs, ExtentLayer, ExtentRead};
use crate::fs::zfs::compression::CompressionModel;
use crate::fs::zfs::dbuf::DbufLayer;
use crate::fs::zfs::geometry::FileGeometry;
use crate::fs::zfs::layer::{ReadStep, Zfs, ZfsCosts, ZfsRead};
use crate::fs::zfs::pool::Pool;
use crate::fs::zfs::read_path::ZfsLayout;
use crate::fs::zfs::write_path::{CommitStep, WritePath, WriteStep, ZfsWrite};
use crate::fs::zfs::zfetch::{Zfetch, ZfetchStats};
use crate::fs::zfs::zil::ZilStats;
use crate::sim::time::{Nanos, SEC};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::series::Series;
use crate::support::small_map::SmallMap;
use crate::workload::statement::Statement;
use crate::workload::sysbench::SysbenchGen;
use crate::workload::StatementSource;

/// Where a client is in its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    NextPage,
    /// A buffer-pool miss: run the CPU work so far, then start the file read.
    ReadStart,
    /// In the filesystem layer's read path (`Client::read`).
    FileRead,
    /// A write request: after its system call's CPU, the filesystem's write path.
    WriteStart,
    /// ZFS: in the layer's write path (`Client::zwrite`).
    ZfsWrite,
    /// XFS/ext4: the write's device I/O completed; ZFS: its commit, or an fsync's.
    WriteDone,
    /// ZFS: a `zil_commit` of file `space` starts (after the CPU so far); then
    /// `Client::after_commit`.
    Commit,
    /// ZFS: waiting for the intent log to release the commit.
    CommitWait,
    Finish,
    Blocked,
    /// Nothing more to issue in this phase.
    Idle,
    /// A write lookup's pages are in the pool (or its commit is reached): the database
    /// makes the change (after `log_free_check`) or commits.
    Apply,
    /// The commit asks the log again (after waiting for another writer, or its own write).
    CommitRetry,
    /// A page read found no free frame (after the thread flushed one or waited): it asks again.
    FrameRetry,
    /// Running the database's file operations for this thread (`Database::next_op`);
    /// then `Client::after_io`.
    DbIo,
    /// XFS/ext4: a write's metadata change waits for journal space (ext4's forced
    /// checkpoint), then is noted again; then WriteDone.
    JournalCheckpoint,
    /// XFS/ext4: an fsync or fdatasync: the journal's plan (a commit to wait for, then a
    /// cache flush); then `Client::after_commit`.
    JournalSync,
    /// XFS/ext4: the sync's last I/O (its cache flush) issued and awaited.
    JournalSyncThen,
    /// XFS/ext4: a buffered write in the page cache (`fs::buffered`): partial pages read,
    /// the copy, the dirty throttle's pause; then WriteDone.
    BufferedWrite,
    /// XFS/ext4: an fsync's (or O_SYNC write's) data part in the page cache: its dirty
    /// pages written and waited for; then JournalSync.
    DataSync,
    /// The page cleaner sleeps until its timer; then a pass.
    CleanerSleep,
    CleanerPass,
    /// The master thread sleeps until its timer; then its log flush.
    MasterSleep,
    MasterFlush,
    /// Percona Server's LRU manager sleeps until its timer; then its LRU batch.
    LruSleep,
    LruBatch,
    /// The purge coordinator sleeps until a commit or its timer wakes it; then a batch
    /// (its records as lookups of its statement: NextPage, Apply), then PurgeDone.
    PurgeSleep,
    PurgeBatch,
    PurgeDone,
    /// A purge worker waits for its share of a batch (`Sim::purge_first`); then does it
    /// (PurgeWork: its lookups), then PurgeWorkerDone.
    PurgeIdle,
    PurgeWork,
    PurgeWorkerDone,
}

/// What the clients of the current phase do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// sysbench statements until `issue_until`; statements in progress then finish.
    Workload { issue_until: Nanos },
    /// One reader going through every table file (`cat`), `read_size` bytes a read.
    Cat { read_size: u32, passes: u32, pass: u32, table: u32, offset: u64 },
    /// fio jobs (see `fio`): each client is one in-flight slot of a job's clone.
    Fio,
}

/// A page another client is reading, that this client waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    None,
    Page(u64),
    /// The redo log's writer or the checkpoint age (released by the database).
    Log,
    /// A free frame (released when the page cleaner's or the LRU manager's batch frees
    /// some).
    Frame,
    /// XFS/ext4: the journal's commit `n` (released when the journal reports it done).
    Journal(u64),
    /// The purge coordinator waits for its workers' shares of the batch
    /// (`trx_purge_wait_for_workers_to_complete`).
    PurgeWorkers,
    /// A row lock another transaction holds (granted by that transaction's commit).
    RowLock,
}

#[derive(Debug, Clone, Copy)]
struct Client {
    state: State,
    lookup: usize,
    path: [u64; MAX_PATH],
    path_len: usize,
    path_pos: usize,
    /// Leaves a range scan has moved on past its first (0 for point lookups).
    scan: u32,
    space: u32,
    page: u64,
    /// The file read in progress: bytes [read_offset, read_offset + read_len) of table `space`.
    read_offset: u64,
    read_len: u32,
    /// The read in the filesystem layer's read path.
    read: FileRead,
    cpu_pending: Nanos,
    /// `next_stmts` holds this client's next statement.
    next_ready: bool,
    started: Nanos,
    /// The request is a write of [w_offset, w_offset + w_len) (fio).
    write: bool,
    w_offset: u64,
    w_len: u32,
    /// ZFS: the write in the layer's write path.
    zwrite: ZfsWrite,
    /// The request is an fsync (fio's, or an end fsync) instead of a read or a write.
    fsync: Fsync,
    /// The write's file is open O_SYNC / O_DSYNC.
    o_sync: bool,
    /// The I/O's file is open O_DIRECT (fio's direct=1; ZFS decides what that does).
    o_direct: bool,
    /// The read's commit (`sync=always`) is done.
    read_committed: bool,
    /// Where a commit goes on when it is done.
    after_commit: State,
    /// Where a write goes on when it is done: `WriteDone` (fio's) or `DbIo`.
    after_write: State,
    /// Where a thread goes on when its database I/O is done.
    after_io: State,
    /// Where a blocked thread resumes when woken.
    resume: State,
    /// The path position of a secondary leaf whose miss is change-buffered (u8::MAX: none),
    /// and whether this lookup's was.
    bufferable: u8,
    sec_buffered: bool,
    /// The write lookup's change is made (its commit done).
    applied: bool,
    /// Asynchronous writes issued by this thread complete by then (a barrier waits).
    async_until: Nanos,
    /// The sync is an fdatasync (not an fsync).
    datasync: bool,
    /// XFS/ext4: the write's metadata change found the journal short of space.
    journal_checkpoint: bool,
    /// The transaction's time so far by what it waited for (`waits`).
    trx_waits: waits::TrxWaits,
    /// When the thread's last step ended, what it waits for since, and whether that step
    /// ended by running its pending CPU.
    wait_since: Nanos,
    wait_class: waits::WaitClass,
    cpu_exit: bool,
}

/// Whether a client's request is an fsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fsync {
    None,
    /// fio's fsync/fdatasync I/O (`DDIR_SYNC`).
    Io,
    /// An end fsync (end_fsync, fsync_on_close).
    End,
    /// The sync that ends an O_SYNC/O_DSYNC write on XFS/ext4 (the write's, not an I/O).
    Write,
}

/// CPU costs in simulated ns on this machine's vCPUs (reference costs / speed).
#[derive(Debug, Clone, Copy)]
struct Costs {
    statement: Nanos,
    row: Nanos,
    page_access: Nanos,
    syscall: Nanos,
    device_io: Nanos,
}

/// The filesystem under the database or fio: a layer the driver calls.
enum Fs {
    /// A ZFS dataset and everything under it (ARC, L2ARC, dbufs, pool, prefetcher).
    Zfs(Box<Zfs>),
    /// XFS or ext4, with bcache below it if configured.
    Extent(Box<ExtentLayer>),
}

/// A client's read in its filesystem layer.
#[derive(Debug, Clone, Copy)]
enum FileRead {
    Zfs(ZfsRead),
    Extent(ExtentRead),
}

/// Counters that the window and the intervals difference.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    time: Nanos,
    /// fio I/Os completed and their bytes.
    fio_ios: u64,
    fio_bytes: u64,
    /// Benchmark events completed (sysbench's transactions) and the SQL queries in them.
    statements: u64,
    queries: u64,
    rows: u64,
    /// Events completed by `Statement::kind` (sysbench-tpcc's transaction types).
    by_kind: [u64; 8],
    bp_requests: u64,
    bp_reads: u64,
    cpu_busy: Nanos,
    /// CPU time the L2ARC feed thread took.
    l2_feed_cpu: Nanos,
    devices: Vec<DeviceCounters>,
    arc: Option<ArcStats>,
    bcache: Option<BcacheStats>,
    zfetch: Option<ZfetchStats>,
    zil: Option<ZilStats>,
    /// InnoDB's write counters, when it writes.
    db_writes: Option<WriteStats>,
    /// Txgs synced so far (ZFS).
    txgs: usize,
    /// XFS/ext4's journal counters, when it has one.
    journal: Option<crate::fs::extent::JournalCounters>,
    /// XFS/ext4's page cache counters, when the run has buffered files.
    page_cache: Option<crate::fs::page_cache::PageCacheStats>,
    /// What the drive behind each device did, for a device that is a RAID controller's
    /// volume.
    drives: Vec<Option<DeviceCounters>>,
    /// Each RAID controller's counters, by the device of its first volume.
    controllers: Vec<ControllerSnap>,
}

/// A RAID controller's counters at a snapshot.
#[derive(Debug, Clone, Copy)]
struct ControllerSnap {
    /// The device of its first volume (the way to it).
    device: usize,
    /// Bytes its cache held.
    held: u64,
    counters: crate::dev::controller::ControllerCounters,
}

/// The series being recorded across phases, and the run's observer.
struct Recorder<'p> {
    series: Series,
    prev: Snapshot,
    next_report: Nanos,
    observer: Option<progress::Observer<'p>>,
    /// The last workload window's end snapshot (the series' last row ends there).
    window_end: Option<Snapshot>,
}

fn secs(t: Nanos) -> f64 {
    t as f64 / SEC as f64
}

/// Result of one variant: the summary document and the per-interval series.
#[derive(Debug, Clone)]
pub struct VariantResult {
    /// Summary over the measured window (see [`run_variant_json`] for the shape).
    pub summary: Value,
    /// Per-interval columns over warm-up and window.
    pub series: Series,
}

struct Sim<'a> {
    cfg: &'a VariantConfig,
    costs: Costs,
    cpus: Cpus,
    devices: Vec<Device>,
    /// None for a fio workload.
    db: Option<Database>,
    /// Size of each data file (object `k + 1` is file `k`): the tables, or fio's files.
    files: Vec<u64>,
    /// Whether each file exists yet (fio creates its files; tables always exist).
    exists: Vec<bool>,
    /// The fio phase running, if any.
    fio: Option<Box<fio::FioPhaseRun>>,
    /// fio I/Os completed and their bytes (all phases).
    fio_ios: u64,
    fio_bytes: u64,
    fs: Fs,
    /// The clients' statements (sysbench threads draw from their own streams and, for
    /// select_random_points, their own slice of k); none when fio drives the clients.
    source: StatementSource,
    /// The statement each client is executing (kept apart so a client step copies little).
    stmts: Vec<Statement>,
    /// Each client's next statement, drawn while the current one's CPU time runs (when
    /// `Client::next_ready`) so that its pages' lookups can be prefetched; the draws per
    /// client are the same as without it.
    next_stmts: Vec<Statement>,
    /// Taken out of `self` while one of them steps (see [`Sim::step`]).
    clients: Vec<Client>,
    /// Number of clients (event targets below it are clients): the workload's threads,
    /// then the database's own threads when it writes (page cleaner, master thread,
    /// Percona Server's LRU manager, the purge threads).
    nclients: usize,
    /// The workload's threads (clients 0..nusers).
    nusers: usize,
    /// When the page cleaner's, the master thread's and the LRU manager's timers are due
    /// (None: no timer).
    cleaner_due: Option<Nanos>,
    master_due: Option<Nanos>,
    lru_due: Option<Nanos>,
    /// When the purge coordinator's sleep ends (Some(Nanos::MAX): when a commit wakes it).
    purge_due: Option<Nanos>,
    /// The purge threads' slots (`purge_first..purge_first + purge_n`, the coordinator
    /// first; usize::MAX and 0 without the write path) and the workers still on their
    /// shares of the batch.
    purge_first: usize,
    purge_n: usize,
    purge_pending: usize,
    /// Write counts at the page cleaner's last pass (srv_check_activity).
    cleaner_activity: u64,
    /// Scratch for the threads the database released.
    released: Vec<u32>,
    /// XFS/ext4: when the journal's thread is next due (None: idle until kicked), and each
    /// client's sync plan in progress (its last I/O, lowered once issued).
    journal_wake: Option<Nanos>,
    sync_plans: Vec<(crate::fs::journal::Plan, Option<crate::fs::journal::PlanRun>)>,
    /// Per client: the page a blocked client waits for ([`Wait::None`] when not blocked),
    /// so that a wake-up needs no other client's state.
    waits: Vec<Wait>,
    queue: Schedule,
    bp_inflight: SmallMap,
    /// Events completed (a point select, or an oltp_read_only transaction), and the SQL
    /// queries they issued (BEGIN and COMMIT included, as sysbench counts them).
    statements: u64,
    queries: u64,
    rows: u64,
    /// Events completed by `Statement::kind`.
    by_kind: [u64; 8],
    bp_requests: u64,
    bp_reads: u64,
    window_hist: LatencyHistogram,
    /// The window's transactions' time by what they waited for.
    wait_times: waits::WaitTimes,
    interval_hist: LatencyHistogram,
    measuring: bool,
    mode: Mode,
    /// Bytes and read calls served to `cat` phases.
    cat_bytes: u64,
    cat_reads: u64,
    /// Simulated time of the last event processed.
    clock: Nanos,
    /// Index of the phase running (a series column).
    phase_index: usize,
    /// The L2ARC feed threads: the releases' one, which feeds the cache devices in turn,
    /// or master's one per device (b525525b44, `per_device_feed`); empty without a cache
    /// device.
    feeds: Vec<phases::FeedThread>,
    /// CPU time the feed thread took (series and window reports).
    l2_feed_cpu: Nanos,
    /// The earliest wake-up of the txg sync on the queue (see `events`).
    sync_wake: Option<Nanos>,
    /// The earliest wake-up of the intent log on the queue.
    zil_wake: Option<Nanos>,
    /// XFS/ext4: the earliest wake-up of the page cache's flusher on the queue.
    flusher_wake: Option<Nanos>,
    /// When bcache's writeback thread is woken next.
    writeback_wake: Option<Nanos>,
    events: u64,
}

fn scaled(ns: u64, speed: f64) -> Nanos {
    (ns as f64 / speed).round() as Nanos
}

/// What a client step does next: continue in its new state, or wait for its next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Wait,
}

mod build;
mod events;
mod fio;
mod memory;
mod phases;
pub mod progress;
mod report;
mod share;
mod stall;
mod step;
mod waits;

use events::{Event, Schedule};
pub use memory::{estimate_memory, estimate_memory_json, MemoryEstimate};
pub use progress::Progress;
pub use share::{share_plan, SharePlan, Shared};

/// Runs one resolved, validated variant.
pub fn run_variant(cfg: &VariantConfig) -> Result<VariantResult> {
    cfg.validate()?;
    Sim::new(cfg)?.run(None)
}

/// [`run_variant`] telling `observer` how far it has come, at most once per report
/// interval of simulated time and once per `every` of wall time, then once at the end
/// (see [`progress`]). The result is the same as without an observer; the observer's
/// answer `false` stops the run with [`Error::Stopped`].
pub fn run_variant_observed(
    cfg: &VariantConfig,
    every: std::time::Duration,
    observer: &mut dyn FnMut(Progress) -> bool,
) -> Result<VariantResult> {
    cfg.validate()?;
    let observer = progress::Observer::new(observer, every, &cfg.effective_phases());
    Sim::new(cfg)?.run(Some(observer))
}

/// Checks one resolved variant as a run would, without running it: the config's
/// cross-reference checks, then every layer built from it, each with its own rules
/// (the ARC's limits, the pool's vdevs, the L2ARC's tunables, the record contents...).
pub fn check_variant(cfg: &VariantConfig) -> Result<()> {
    cfg.validate()?;
    Sim::new(cfg).map(|_| ())
}

/// [`check_variant`] of a variant given as JSON (its parsing included).
pub fn check_variant_json(config_json: &str) -> Result<()> {
    check_variant(&VariantConfig::from_json(config_json)?)
}

/// Runs one resolved variant given as JSON and returns its result as JSON.
///
/// Input: a [`VariantConfig`]. Output: the summary over the measured window ("qps",
/// "tps", "queries", "window_s", "latency_ms" {p50, p95, p99, max, mean},
/// "cpu_utilization", "devices" {NAME: {read_iops, write_iops, read_mbps, write_mbps,
/// utilization}}, "innodb" {buffer_pool_hit_ratio, pages_read, ...}, "arc" {arcstats
/// names} and "zfetch" {zfetchstats names of the release: hits, misses, max_streams,
/// io_issued, ...} for ZFS, "l2arc" with a cache device, "bcache" {hits, misses, bypassed,
/// size, the stats_total counters, read_share} with bcache) plus "series": columns of equal
/// length, one row per report interval from the start of the warm-up ("time_s" is the
/// interval's end). Each entry of "phases" carries its own "arc" and "zfetch" (cat phases too).
pub fn run_variant_json(config_json: &str) -> Result<String> {
    let cfg = VariantConfig::from_json(config_json)?;
    result_json(run_variant(&cfg)?)
}

/// [`run_variant_json`] with an observer (see [`run_variant_observed`]).
pub fn run_variant_json_observed(
    config_json: &str,
    every: std::time::Duration,
    observer: &mut dyn FnMut(Progress) -> bool,
) -> Result<String> {
    let cfg = VariantConfig::from_json(config_json)?;
    result_json(run_variant_observed(&cfg, every, observer)?)
}

/// Runs `leader` (given as JSON) and, from the same run, each of `followers` that can
/// take its first phases from it (see [`share`]): at most `jobs` processes at once, the
/// observer (if any) watching the leader only. Answers the leader's result document and
/// one [`Shared`] per follower, in order: its document, or why it must run cold, or how
/// its forked run failed.
pub fn run_shared_json(
    leader: &str,
    followers: &[String],
    jobs: usize,
    every: std::time::Duration,
    observer: Option<&mut dyn FnMut(Progress) -> bool>,
) -> Result<(String, Vec<Shared>)> {
    let cfg = VariantConfig::from_json(leader)?;
    let others = followers.iter().map(|f| VariantConfig::from_json(f)).collect::<Result<Vec<_>>>()?;
    let mut outcomes: Vec<Option<Shared>> = others.iter().map(|_| None).collect();
    let mut pending = Vec::new();
    for (index, o) in others.iter().enumerate() {
        match share_plan(&cfg, o) {
            Ok(plan) => pending.push(share::Pending { index, cfg: o, plan }),
            Err(why) => outcomes[index] = Some(Shared::Cold(why)),
        }
    }
    let mut forks = share::Forks::new(pending, jobs);
    let phases = cfg.effective_phases();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let observer = observer.map(|o| progress::Observer::new(o, every, &phases));
        Sim::new(&cfg)?.run_sharing(observer, &mut forks).and_then(result_json)
    }));
    if share::in_child() {
        // A forked follower ends here, whatever happened.
        let r = run.unwrap_or_else(|_| {
            Err(Error::Simulation {
                component: "run".into(),
                time_ns: 0,
                message: "the simulation panicked".into(),
            })
        });
        share::child_exit(&r);
    }
    let doc = match run {
        Ok(r) => r?,
        Err(p) => std::panic::resume_unwind(p),
    };
    for (index, s) in forks.finish() {
        outcomes[index] = Some(s);
    }
    let outcomes =
        outcomes.into_iter().map(|o| o.unwrap_or_else(|| Shared::Cold("not forked".into()))).collect();
    Ok((doc, outcomes))
}

/// A variant's result as the JSON document of [`run_variant_json`].
fn result_json(r: VariantResult) -> Result<String> {
    let mut doc = r.summary;
    doc["series"] = serde_json::to_value(&r.series).map_err(|e| Error::Simulation {
        component: "stats.series".into(),
        time_ns: 0,
        message: e.to_string(),
    })?;
    serde_json::to_string(&doc).map_err(|e| Error::Simulation {
        component: "result".into(),
        time_ns: 0,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod write_tests;

#[cfg(test)]
mod zil_tests;

#[cfg(test)]
mod db_write_tests;

#[cfg(test)]
mod page_cache_tests;

#[cfg(test)]
mod share_tests;
