//! The ZFS intent log (ZIL): what a synchronous write or an fsync waits for.
//!
//! Sources: module/zfs/zil.c, zfs_log.c (`zfs_log_write`), zfs_vnops.c (`zfs_write`,
//! `zfs_read`, `zfs_fsync`, `zfs_get_data`), dmu.c (`dmu_sync`), zio.c (`zio_alloc_zil`,
//! `zio_flush`), vdev.c (`vdev_metaslab_init`, the embedded log metaslab) and
//! vdev_queue.c, read at zfs-0.8.6, 2.1.16, 2.2.0, 2.2.3, 2.2.4 and 2.2.11; what changed
//! between them is a named feature of the release table ([`ZilFeatures`]).
//!
//! The mechanism, as the model runs it:
//! - Every write logs one record per record-sized chunk (`zfs_write` → `zfs_log_write`,
//!   an itx) in the open txg: WR_INDIRECT when `logbias=throughput`, or when the pool has
//!   no SLOG and the chunk is at least `zfs_immediate_write_sz`; else WR_COPIED for an
//!   O_SYNC/O_DSYNC write (the data copied into the record now, if it is at most
//!   `zil_max_copied_data`), else WR_NEED_COPY (copied when a commit needs it). An O_SYNC
//!   write's itx is synchronous (committed by any commit); others wait, per file, for a
//!   commit of their file (`zil_async_to_sync`). The itxs of a txg are dropped when it
//!   syncs (`zil_clean`): the txg wrote their data.
//! - `zil_commit(file)`, from an O_SYNC write, an fsync, every write and read with
//!   `sync=always` (nothing with `sync=disabled`): the file's async itxs and every sync
//!   itx form the commit list (`zil_get_commit_list`); a commit with nothing to commit
//!   waits only for the last block opened, if any is still in flight
//!   (`zil_prune_commit_list`). Each itx whose txg has not synced is assigned to the open
//!   log write block (lwb): a record header of 192 bytes, plus the data for WR_COPIED;
//!   WR_NEED_COPY data is copied in and split across blocks as they fill
//!   (`zil_lwb_commit`, 2.2: `zil_lwb_assign`); WR_INDIRECT data is written to the main
//!   pool by `dmu_sync` (the whole record, at sync priority, to a new place that the txg
//!   then keeps: `DR_OVERRIDDEN`, no data write at the sync; a record dirtied again drops
//!   that) and the record holds its block pointer. A block that cannot take the next
//!   record is issued and the next one opened. The commit's waiter joins the open block.
//! - A block is written (only its used part, rounded up to 4 KiB) when it fills, when its
//!   waiter has waited `zfs_commit_timeout_pct` of the last block's latency
//!   (`zil_commit_waiter`), or at once by a lone commit where the release allows it
//!   ([`EarlyIssue`]). Issuing it allocates the next block, sized as [`size`] says, from
//!   the log class (the SLOG, `filesystem.log`), else the embedded log metaslab (2.1+),
//!   else the normal class (`zio_alloc_zil`); on a SLOG, once the burst has passed
//!   `zil_slog_bulk` bytes its blocks go at async priority.
//! - A block's write completes after the writes of its dmu_sync children and after the
//!   previous block's write (zio parents); then every vdev written for it (and for
//!   earlier blocks that had no waiter) gets a cache flush (`zil_lwb_write_done` →
//!   `zio_flush`, every leaf of the top-level vdev; a block without waiters defers its
//!   flushes to the next block); its waiters return when the flushes are done and the
//!   previous block is done (`zil_lwb_flush_vdevs_done`), and the log's latency
//!   (`zl_last_lwb_latency`, from issue to that point) is updated.
//! - Each dataset has its own log (`zil_alloc` from `dmu_objset_open_impl`; `zfs_fsync`
//!   commits `zfsvfs->z_log`): the database's logs in a dataset of their own
//!   (`log_recordsize`) have one beside the tables' ([`Zil::new_beside`]), with its own
//!   chain of blocks, commit lists and waiters, so a commit of one never waits for the
//!   other's blocks. Both allocate from the pool's log classes ([`LogClasses`]) and share
//!   the leaves' vdev queues; `/proc/spl/kstat/zfs/zil` sums them (`zil_sums_global`).
//! - Log and dmu_sync writes pass the leaf's vdev queue ([`crate::fs::zfs::vdev_queue`],
//!   shared with every other I/O of the leaf) in the sync-write class, and a SLOG's blocks
//!   past the bulk in the async-write class.
//!
//! Counters: the `/proc/spl/kstat/zfs/zil` names ([`ZilStats`]); 2.2 adds the
//! `zil_itx_metaslab_*_write` and `_alloc` rows, and counts a block by its own class where
//! 0.8 and 2.1 count it by the class of the block allocated when it is issued.
//!
//! Simplifications: 1. the issuer lock is never contended (a writer's work takes no
//! simulated time), so every commit is a writer (`zil_commit_writer_count` =
//! `zil_commit_count`); its CPU is charged to the committing thread, that of a waiter's
//! timeout to no one; 2. the log chain exists already (a dataset's first commit ever,
//! `zil_create`, allocates its first block and waits for a txg): the first block is 4
//! KiB; 3. a txg's sync does not wait for the log blocks in flight (2.2's `zil_sync` and
//! 0.8's open `lwb_tx` make it); 4. the slog-bulk priority is decided when a block is
//! issued (0.8 decides it when the block opens); 5. (gone: the log's writes share the
//! leaves' vdev queues with every other I/O); 6. a SLOG is a ring (log blocks are freed as their txg syncs), the
//! log class's rotor moves on after `metaslab_aliquot` bytes; the embedded log metaslab
//! is metaslab 0 of each vdev (at pool creation every metaslab is empty and
//! `vdev_metaslab_init` takes the first), whose blocks the model's data layout also
//! starts on; 7. a file opened O_SYNC by one job does not make other jobs' writes to it
//! synchronous itxs (`z_sync_cnt`); `zfs_fsync`'s fsyncer count is set and cleared
//! within the call on Linux, so it does nothing, and is not modelled; 8. only TX_WRITE
//! records are logged (fio's files exist; metadata records are not modelled); 9. a
//! commit that cannot allocate a block (`zil_commit_writer_stall`) does not happen: log
//! space is never short.

pub mod size;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::config::{
    EarlyIssue, FsConfig, Logbias, LwbSizing, SyncProperty, VariantConfig, WorkloadConfig, ZfsConfig,
    ZfsFeatures, ZilFeatures,
};
use crate::dev::device::{Device, Op};
use crate::error::{Error, Result};
use crate::fs::zfs::layer::ZfsCosts;
use crate::fs::zfs::pool::{Pool, VDEV_LABEL_END_SIZE, VDEV_LABEL_START_SIZE};
use crate::fs::zfs::read_path::ZfsLayout;
use crate::fs::zfs::txg::Txgs;
use crate::fs::zfs::vdev_queue::{Priority, Request, Tag};
use crate::sim::time::Nanos;
use size::{LwbSizer, LR_WRITE, ZIL_BURSTS, ZIL_CHAIN, ZIL_MIN_BLKSZ};

/// `zfs_embedded_slog_min_ms` (vdev.c, 2.1+): vdevs with more metaslabs set one aside.
const EMBEDDED_SLOG_MIN_MS: u64 = 64;
/// `SPA_OLD_MAXBLOCKSIZE`: `zil_maxblocksize`'s default.
const SPA_OLD_MAXBLOCKSIZE: u64 = 128 << 10;

/// How a write is logged (`itx_wr_state_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrState {
    /// The data is copied into the record at write time.
    Copied,
    /// The data is copied into the log block when a commit needs it.
    NeedCopy,
    /// The data is written to the pool by dmu_sync; the record holds its block pointer.
    Indirect,
}

/// The resolved intent-log parameters of a dataset.
#[derive(Debug, Clone, Copy)]
pub struct ZilParams {
    /// The release's ZIL.
    pub features: ZilFeatures,
    /// The dataset's sync and logbias properties.
    pub sync: SyncProperty,
    /// (see `sync`)
    pub logbias: Logbias,
    /// zfs_immediate_write_sz.
    pub immediate_write_sz: u64,
    /// zil_slog_bulk.
    pub slog_bulk: u64,
    /// zfs_commit_timeout_pct.
    pub commit_timeout_pct: u32,
    /// zl_max_block_size (zil_maxblocksize).
    pub max_block: u64,
    /// zil_min_commit_timeout (0 where the release has none).
    pub min_commit_timeout: Nanos,
    /// zil_max_copied_data, zil_max_waste_space, zil_max_log_data.
    pub max_copied: u64,
    /// (see `max_copied`)
    pub max_waste: u64,
    /// (see `max_copied`)
    pub max_log_data: u64,
}

impl ZilParams {
    /// The parameters of dataset `z`: the release's defaults under the tunables set; a
    /// tunable the release lacks, or out of range, is an error naming it.
    pub fn resolve(z: &ZfsConfig) -> Result<ZilParams> {
        let features = ZfsFeatures::resolve(z.release, z.release_patch).zil;
        let t = &z.zil;
        let field = |name: &str| format!("filesystem.zil.{name}");
        if !features.modelled
            && (z.sync != SyncProperty::Standard || z.logbias != Logbias::Latency || *t != Default::default())
        {
            return Err(Error::config(
                "filesystem.release",
                format!(
                    "the intent log of release {} (the 2012 illumos zil.c) is not modelled: sync, logbias and [filesystem.zil] need release 0.8 or later",
                    z.release.name()
                ),
            ));
        }
        if t.zil_min_commit_timeout.is_some() && features.early_issue != EarlyIssue::MinCommitTimeout {
            return Err(Error::config(
                field("zil_min_commit_timeout"),
                "exists only in 2.1.10 to 2.2.3 (0f740a4f1d; 2.2.4 replaced it by single-thread detection)",
            ));
        }
        if t.zil_maxcopied.is_some() && features.maxcopied.is_none() {
            return Err(Error::config(field("zil_maxcopied"), "exists from release 2.2.0 (9be8ddfb3c)"));
        }
        let max_block = u64::from(t.zil_maxblocksize.unwrap_or(SPA_OLD_MAXBLOCKSIZE as u32));
        if !(ZIL_MIN_BLKSZ..=16 << 20).contains(&max_block) || max_block % ZIL_MIN_BLKSZ != 0 {
            return Err(Error::config(
                field("zil_maxblocksize"),
                "must be a multiple of 4 KiB from 4 KiB to 16 MiB (log blocks are multiples of ZIL_MIN_BLKSZ)",
            ));
        }
        let pct = t.zfs_commit_timeout_pct.unwrap_or(features.commit_timeout_pct);
        if pct > 1000 {
            return Err(Error::config(field("zfs_commit_timeout_pct"), "must be 0 to 1000 (percent)"));
        }
        let max_log_data = max_block - ZIL_CHAIN - LR_WRITE;
        let (max_copied, max_waste) = match features.maxcopied {
            Some(d) => (max_log_data.min(u64::from(t.zil_maxcopied.unwrap_or(d))), max_log_data / 16),
            None => ((max_block - ZIL_CHAIN) / 2 - LR_WRITE, max_log_data / 8),
        };
        Ok(ZilParams {
            features,
            sync: z.sync,
            logbias: z.logbias,
            immediate_write_sz: t.zfs_immediate_write_sz.unwrap_or(32768),
            slog_bulk: t.zil_slog_bulk.unwrap_or(features.slog_bulk),
            commit_timeout_pct: pct,
            max_block,
            min_commit_timeout: match features.early_issue {
                EarlyIssue::MinCommitTimeout => t.zil_min_commit_timeout.unwrap_or(5000),
                EarlyIssue::Never | EarlyIssue::SingleThreaded => 0,
            },
            max_copied,
            max_waste,
            max_log_data,
        })
    }

    /// `zfs_log_write`'s choice for a chunk of `resid` bytes of one record (an O_SYNC or
    /// O_DSYNC write when `o_sync`), on a pool with a SLOG when `slog`.
    pub fn write_state(&self, resid: u64, o_sync: bool, slog: bool) -> WrState {
        if self.logbias == Logbias::Throughput || (!slog && resid >= self.immediate_write_sz) {
            WrState::Indirect
        } else if o_sync && resid <= self.max_copied {
            WrState::Copied
        } else {
            WrState::NeedCopy
        }
    }
}

impl ZilParams {
    /// `zfs_log_write`'s choice for a chunk of an O_SYNC/O_DSYNC write (`o_sync`) or not:
    /// 2.3 copies a write that commits (`commit`: O_SYNC, O_DSYNC or `sync=always`), 2.2
    /// and before only an O_SYNC/O_DSYNC one (`ioflag`). The itx is synchronous for an
    /// O_SYNC file either way (the caller's choice).
    pub fn log_state(&self, resid: u64, o_sync: bool, slog: bool) -> WrState {
        let commit = o_sync || (self.features.copied_on_commit && self.sync == SyncProperty::Always);
        self.write_state(resid, commit, slog)
    }

    /// `zfs_log_write` of a chunk of a write made with Direct I/O (2.3: `UIO_DIRECT` set
    /// on the request, whether this chunk went direct or, misaligned, through the ARC):
    /// WR_INDIRECT always.
    pub fn log_state_direct(&self) -> WrState {
        WrState::Indirect
    }
}

/// Whether a variant can commit the log: a ZFS dataset with `sync=always`, fio jobs
/// that fsync or open their files O_SYNC/O_DSYNC, or a database that writes (it fsyncs
/// its files). Otherwise the ZIL is not built (its itxs would never be committed, and a
/// run without it is the same run).
pub fn wanted(cfg: &VariantConfig) -> bool {
    let FsConfig::Zfs(z) = &cfg.filesystem else { return false };
    z.sync == SyncProperty::Always
        || match &cfg.workload {
            WorkloadConfig::Fio(f) => f.jobs.iter().any(crate::workload::fio::syncs),
            WorkloadConfig::Sysbench(_) => cfg.sysbench_writes(),
        }
}

/// `/proc/spl/kstat/zfs/zil`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZilStats {
    /// zil_commit calls (sync=disabled makes none).
    pub zil_commit_count: u64,
    /// Commits that processed the commit list (zil_commit_writer).
    pub zil_commit_writer_count: u64,
    /// Records written to log blocks (a split WR_NEED_COPY record counts per piece).
    pub zil_itx_count: u64,
    /// WR_INDIRECT records and the bytes of the writes they log.
    pub zil_itx_indirect_count: u64,
    /// (see `zil_itx_indirect_count`)
    pub zil_itx_indirect_bytes: u64,
    /// WR_COPIED records and their data bytes.
    pub zil_itx_copied_count: u64,
    /// (see `zil_itx_copied_count`)
    pub zil_itx_copied_bytes: u64,
    /// WR_NEED_COPY records (pieces) and the data bytes copied into blocks.
    pub zil_itx_needcopy_count: u64,
    /// (see `zil_itx_needcopy_count`)
    pub zil_itx_needcopy_bytes: u64,
    /// Log blocks issued counted as the normal class: count, bytes used, bytes written (2.2), bytes allocated (2.2).
    pub zil_itx_metaslab_normal_count: u64,
    /// (see `zil_itx_metaslab_normal_count`)
    pub zil_itx_metaslab_normal_bytes: u64,
    /// (see `zil_itx_metaslab_normal_count`)
    pub zil_itx_metaslab_normal_write: u64,
    /// (see `zil_itx_metaslab_normal_count`)
    pub zil_itx_metaslab_normal_alloc: u64,
    /// The same for the log class (a SLOG).
    pub zil_itx_metaslab_slog_count: u64,
    /// (see `zil_itx_metaslab_slog_count`)
    pub zil_itx_metaslab_slog_bytes: u64,
    /// (see `zil_itx_metaslab_slog_count`)
    pub zil_itx_metaslab_slog_write: u64,
    /// (see `zil_itx_metaslab_slog_count`)
    pub zil_itx_metaslab_slog_alloc: u64,
    /// Not kstats: log blocks written and their bytes (every leaf of a mirror), dmu_sync
    /// writes of WR_INDIRECT data and their bytes, waiters that timed out and issued their
    /// block, cache flushes sent (one per leaf).
    pub lwb_writes: u64,
    /// (see `lwb_writes`)
    pub lwb_write_bytes: u64,
    /// (see `lwb_writes`)
    pub dmu_sync_writes: u64,
    /// (see `lwb_writes`)
    pub dmu_sync_bytes: u64,
    /// (see `lwb_writes`)
    pub commit_timeouts: u64,
    /// (see `lwb_writes`)
    pub flushes: u64,
}

/// Which releases report a counter: all, or 2.2.0+ (`_write` and `_alloc`, with
/// `metaslab_stats_own_block`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Always,
    WriteAlloc,
}

/// Every [`ZilStats`] counter, in the kstat's order (the model's own counters last), with
/// the releases that report it: `$m!((field, Gate), ...)`.
macro_rules! zil_counters {
    ($m:ident) => {
        $m!(
            (zil_commit_count, Always),
            (zil_commit_writer_count, Always),
            (zil_itx_count, Always),
            (zil_itx_indirect_count, Always),
            (zil_itx_indirect_bytes, Always),
            (zil_itx_copied_count, Always),
            (zil_itx_copied_bytes, Always),
            (zil_itx_needcopy_count, Always),
            (zil_itx_needcopy_bytes, Always),
            (zil_itx_metaslab_normal_count, Always),
            (zil_itx_metaslab_normal_bytes, Always),
            (zil_itx_metaslab_normal_write, WriteAlloc),
            (zil_itx_metaslab_normal_alloc, WriteAlloc),
            (zil_itx_metaslab_slog_count, Always),
            (zil_itx_metaslab_slog_bytes, Always),
            (zil_itx_metaslab_slog_write, WriteAlloc),
            (zil_itx_metaslab_slog_alloc, WriteAlloc),
            (lwb_writes, Always),
            (lwb_write_bytes, Always),
            (dmu_sync_writes, Always),
            (dmu_sync_bytes, Always),
            (commit_timeouts, Always),
            (flushes, Always)
        )
    };
}

impl std::ops::AddAssign for ZilStats {
    /// The kstat sums every dataset's log (`zil_sums_global`).
    fn add_assign(&mut self, o: ZilStats) {
        macro_rules! add {
            ($(($f:ident, $g:ident)),*) => { $(self.$f += o.$f;)* };
        }
        zil_counters!(add);
    }
}

impl ZilStats {
    /// The rows of the release's kstat (2.2.0 adds the `_write` and `_alloc` rows, 2.3.0
    /// the commit error, stall and suspend counts after `zil_commit_writer_count`, always 0
    /// here: simplification 9), then the model's own counters, each as the difference
    /// `self - before`.
    pub fn rows(&self, before: &ZilStats, features: &ZilFeatures) -> Vec<(&'static str, u64)> {
        macro_rules! rows {
            ($(($f:ident, $g:ident)),*) => {
                [$((stringify!($f), self.$f.saturating_sub(before.$f), Gate::$g)),*]
            };
        }
        let all = zil_counters!(rows);
        let mut v = Vec::with_capacity(all.len() + 3);
        for (k, (name, n, gate)) in all.into_iter().enumerate() {
            if gate == Gate::Always || features.metaslab_stats_own_block {
                v.push((name, n));
            }
            if k == 1 && features.commit_failure_stats {
                v.extend([
                    ("zil_commit_error_count", 0),
                    ("zil_commit_stall_count", 0),
                    ("zil_commit_suspend_count", 0),
                ]);
            }
        }
        v
    }
}

/// One log record of a write (an itx).
#[derive(Debug, Clone, Copy)]
struct Itx {
    txg: u64,
    object: u32,
    /// The record written (its L0 block id) and the bytes written in it.
    blkid: u64,
    len: u32,
    state: WrState,
    /// Written by Direct I/O (2.3): `zfs_get_data` finds the dirty record's
    /// `dr_diowrite` and stores its block pointer, with no dmu_sync and no write.
    direct: bool,
}

impl Itx {
    /// `lrc_reclen`: the header, and the data of WR_COPIED.
    fn reclen(&self) -> u64 {
        LR_WRITE + if self.state == WrState::Copied { u64::from(self.len).next_multiple_of(8) } else { 0 }
    }

    /// `zil_itx_data_size`: the data WR_NEED_COPY adds in the block.
    fn dlen(&self) -> u64 {
        if self.state == WrState::NeedCopy {
            u64::from(self.len).next_multiple_of(8)
        } else {
            0
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LwbState {
    /// Allocated, nothing assigned yet.
    New,
    /// Taking records.
    Opened,
    /// Its write is out.
    Issued,
    /// Its write is done; its flushes are out.
    WriteDone,
    /// On stable storage; its waiters have returned.
    FlushDone,
}

/// Where a log block lives: a top-level vdev (log or data) and the byte offset on its
/// leaves; `Plain`: the one leaf of a one-disk solid-state pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Top {
    Log(usize),
    Data(usize),
    Plain,
}

/// A log write block.
#[derive(Debug, Clone)]
struct Lwb {
    id: u64,
    state: LwbState,
    /// Block size (`lwb_sz`; records fill it after the chain header) and bytes used.
    sz: u64,
    nused: u64,
    /// Allocated from the log class (a SLOG).
    slog: bool,
    top: Top,
    offset: u64,
    waiters: u32,
    issued_at: Nanos,
    /// Device writes of the block and of its dmu_sync children still queued, and the
    /// completion of those submitted.
    ios_pending: u32,
    io_done: Nanos,
    /// Its write waits for the previous block's; its completion for the previous one's.
    write_dep: bool,
    root_dep: bool,
    write_done: Option<Nanos>,
    root_done: Option<Nanos>,
    /// Leaves to flush (a bitset over the run's devices).
    flush: Vec<u64>,
}

/// A commit waiter (`zil_commit_waiter_t`), one per client slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiter {
    Idle,
    /// Waiting for block `lwb`; `wakeup`: the timed wait's end while the block is open.
    Waiting {
        lwb: u64,
        wakeup: Option<Nanos>,
    },
    Done,
}

/// A region log blocks are allocated from in turn (a SLOG, an embedded log metaslab).
#[derive(Debug, Clone, Copy)]
struct Region {
    top: Top,
    base: u64,
    /// 0: unbounded (size unknown).
    size: u64,
    cursor: u64,
}

/// A class of regions with its rotor.
#[derive(Debug, Clone, Default)]
struct Class {
    regions: Vec<Region>,
    rotor: usize,
    count: u64,
    aliquot: u64,
}

impl Class {
    fn alloc(&mut self, bytes: u64) -> Option<(Top, u64)> {
        let k = self.rotor;
        let r = self.regions.get_mut(k)?;
        if r.size > 0 && r.cursor + bytes > r.size {
            r.cursor = 0;
        }
        let at = (r.top, r.base + r.cursor);
        r.cursor += bytes;
        self.count += bytes;
        if self.count >= self.aliquot {
            self.count = 0;
            self.rotor = (k + 1) % self.regions.len();
        }
        Some(at)
    }
}

/// The pool's log allocation classes (`spa_log_class`, `spa_embedded_log_class`), which
/// every dataset's log allocates its blocks from.
#[derive(Debug, Default)]
pub struct LogClasses {
    slog: Class,
    embedded: Class,
}

/// Log block ids of dataset `d`'s log start at `d << LWB_ID_SHIFT` (a vdev queue tag
/// names a block by its id alone).
const LWB_ID_SHIFT: u32 = 48;

/// What the log's operations touch outside it.
pub(crate) struct ZilIo<'a> {
    pub txgs: &'a mut Txgs,
    pub pool: &'a mut Pool,
    pub layout: &'a ZfsLayout,
    pub devices: &'a mut [Device],
    pub costs: &'a ZfsCosts,
}

/// One dataset's intent log.
#[derive(Debug)]
pub struct Zil {
    p: ZilParams,
    has_slog: bool,
    /// Sync itxs of every file (each txg's `i_sync_list`, in order), and async ones per
    /// file (`i_async_tree`), in order.
    sync_itxs: VecDeque<Itx>,
    async_itxs: Vec<VecDeque<Itx>>,
    /// The commit list (reused).
    commit: Vec<Itx>,
    /// `zl_lwb_list` from the oldest block not yet done to the open (or new) one.
    lwbs: VecDeque<Lwb>,
    spare: Vec<Lwb>,
    next_id: u64,
    last_opened: Option<u64>,
    sizer: LwbSizer,
    last_latency: Nanos,
    waiters: Vec<Waiter>,
    nwaiting: usize,
    woken: Vec<u32>,
    /// The pool's log classes, shared with the other datasets' logs.
    classes: Rc<RefCell<LogClasses>>,
    /// WR_INDIRECT records whose dmu_sync waits for their block's issue (2.2), by block.
    deferred: VecDeque<(u64, Itx)>,
    stats: ZilStats,
    words: usize,
    next: Option<Nanos>,
}

impl Zil {
    /// The log of dataset `z` on `pool` over the run's `devices`, for `slots` clients and
    /// `objects` files (objects 1 to `objects`).
    pub fn new(
        z: &ZfsConfig,
        devices: &[crate::config::DeviceConfig],
        pool: &mut Pool,
        slots: usize,
        objects: u32,
    ) -> Result<Zil> {
        Zil::build(z, devices, pool, slots, objects, None, 0)
    }

    /// The log of another dataset `d` (1, 2, ...) of the same pool: its own chain of
    /// blocks, commit lists and waiters (`zil_alloc` per objset), allocating from the
    /// pool's log classes as this one does.
    pub fn new_beside(
        &self,
        z: &ZfsConfig,
        devices: &[crate::config::DeviceConfig],
        pool: &mut Pool,
        slots: usize,
        objects: u32,
        d: u64,
    ) -> Result<Zil> {
        Zil::build(z, devices, pool, slots, objects, Some(self.classes.clone()), d)
    }

    fn build(
        z: &ZfsConfig,
        devices: &[crate::config::DeviceConfig],
        pool: &mut Pool,
        slots: usize,
        objects: u32,
        classes: Option<Rc<RefCell<LogClasses>>>,
        d: u64,
    ) -> Result<Zil> {
        let p = ZilParams::resolve(z)?;
        let features = ZfsFeatures::resolve(z.release, z.release_patch);
        let aliquot = if z.pool.metaslab_aliquot == 0 {
            features.pool.metaslab_aliquot
        } else {
            z.pool.metaslab_aliquot
        };
        let space = |leaves: &[usize]| {
            leaves.iter().map(|&c| devices[c].capacity_bytes).collect::<Option<Vec<u64>>>().map(|c| {
                c.into_iter().min().unwrap_or(0).saturating_sub(VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE)
            })
        };
        let mut slog = Class { aliquot, ..Class::default() };
        for k in 0..pool.nlog() {
            let size = space(pool.log_children(k)).unwrap_or(0);
            slog.regions.push(Region { top: Top::Log(k), base: VDEV_LABEL_START_SIZE, size, cursor: 0 });
        }
        let mut embedded = Class { aliquot, ..Class::default() };
        if p.features.embedded_log {
            for k in 0..pool.nvdevs() {
                // vdev_metaslab_set_size (2.1): about 200 metaslabs of 512 MiB to 16 GiB,
                // at least 16; vdevs of more than 64 set the first one aside.
                let Some(asize) = space(pool.children(k)) else { continue };
                let shift = metaslab_shift(asize);
                if asize >> shift > EMBEDDED_SLOG_MIN_MS {
                    let top = if pool.is_plain() { Top::Plain } else { Top::Data(k) };
                    embedded.regions.push(Region {
                        top,
                        base: VDEV_LABEL_START_SIZE,
                        size: 1 << shift,
                        cursor: 0,
                    });
                }
            }
        }
        let words = devices.len().div_ceil(64);
        let mut zil = Zil {
            p,
            has_slog: pool.nlog() > 0,
            sync_itxs: VecDeque::with_capacity(1024),
            async_itxs: (0..=objects).map(|_| VecDeque::new()).collect(),
            commit: Vec::with_capacity(1024),
            lwbs: VecDeque::with_capacity(64),
            spare: Vec::with_capacity(64),
            next_id: d << LWB_ID_SHIFT,
            last_opened: None,
            sizer: LwbSizer::new(p.features.sizing, p.max_block, p.max_waste),
            last_latency: 0,
            waiters: vec![Waiter::Idle; slots],
            nwaiting: 0,
            woken: Vec::with_capacity(slots),
            classes: classes.unwrap_or_else(|| Rc::new(RefCell::new(LogClasses { slog, embedded }))),
            deferred: VecDeque::with_capacity(64),
            stats: ZilStats::default(),
            words,
            next: None,
        };
        // The chain's head: a 4 KiB block allocated when the log was created.
        let (slog_flag, top, offset) = zil.allocate(pool, ZIL_MIN_BLKSZ);
        zil.push_lwb(ZIL_MIN_BLKSZ, slog_flag, top, offset);
        Ok(zil)
    }

    /// The parameters.
    pub fn params(&self) -> &ZilParams {
        &self.p
    }

    /// The dataset's logbias property from now on (see `Zfs::set_logbias`).
    pub fn set_logbias(&mut self, logbias: crate::config::Logbias) {
        self.p.logbias = logbias;
    }

    /// Counters so far.
    pub fn stats(&self) -> ZilStats {
        self.stats
    }

    /// Whether clients wait for the log.
    pub fn waiting(&self) -> bool {
        self.nwaiting > 0
    }

    /// When the log next has something to do (a write completes, a flush is done, a
    /// waiter's wait ends, a queued write may go), if ever.
    pub fn next_at(&self) -> Option<Nanos> {
        self.next
    }

    /// The waiters released since the last call.
    pub fn take_woken(&mut self) -> std::vec::Drain<'_, u32> {
        self.woken.drain(..)
    }

    /// `zfs_log_write` for one record-sized chunk: `len` bytes of record `blkid` of
    /// `object`, dirtied in txg `txg` by an O_SYNC/O_DSYNC write when `o_sync`; `direct`:
    /// the write is Direct I/O (2.3), `Some(true)` when this record was written directly
    /// (its block pointer is known: a commit writes nothing for it), `Some(false)` when
    /// this piece went through the ARC. Returns the CPU it costs (copying a WR_COPIED
    /// record's data).
    #[allow(clippy::too_many_arguments)]
    pub fn log_write(
        &mut self,
        object: u32,
        blkid: u64,
        len: u32,
        o_sync: bool,
        direct: Option<bool>,
        txg: u64,
        costs: &ZfsCosts,
    ) -> Nanos {
        if self.p.sync == SyncProperty::Disabled {
            // The itxs are made but nothing ever commits them: not kept.
            return 0;
        }
        let state = match direct {
            Some(_) => self.p.log_state_direct(),
            None => self.p.log_state(u64::from(len), o_sync, self.has_slog),
        };
        let itx = Itx { txg, object, blkid, len, state, direct: direct == Some(true) };
        if o_sync {
            self.sync_itxs.push_back(itx);
        } else if let Some(q) = self.async_itxs.get_mut(object as usize) {
            q.push_back(itx);
        }
        match state {
            WrState::Copied => (f64::from(len) * costs.memcpy_ns_per_byte) as Nanos,
            WrState::NeedCopy | WrState::Indirect => 0,
        }
    }

    /// `zil_clean`: txg `synced` is on disk; its itxs (and earlier ones) go.
    pub fn clean(&mut self, synced: u64) {
        while self.sync_itxs.front().is_some_and(|i| i.txg <= synced) {
            self.sync_itxs.pop_front();
        }
        for q in &mut self.async_itxs {
            while q.front().is_some_and(|i| i.txg <= synced) {
                q.pop_front();
            }
        }
    }

    /// The machine restarts (after an export that synced every txg): no itx, no waiter,
    /// and a new `zilog_t` at mount (`zil_alloc`: no latency, no size history); the log
    /// chain stays. The blocks in flight complete first (`Zfs::zil_restart`).
    pub fn restart(&mut self) {
        self.sizer = LwbSizer::new(self.p.features.sizing, self.p.max_block, self.p.max_waste);
        self.last_latency = 0;
        self.sync_itxs.clear();
        for q in &mut self.async_itxs {
            q.clear();
        }
        self.waiters.fill(Waiter::Idle);
        self.nwaiting = 0;
        self.woken.clear();
    }

    /// Forgets every waiter (the run abandons what never completes).
    pub fn abandon(&mut self) {
        self.waiters.fill(Waiter::Idle);
        self.nwaiting = 0;
        self.woken.clear();
        self.refresh_next();
    }

    /// Whether client `slot`'s commit is done (its waiter then goes back to idle).
    pub fn finish(&mut self, slot: usize) -> bool {
        match self.waiters[slot] {
            Waiter::Done | Waiter::Idle => {
                self.waiters[slot] = Waiter::Idle;
                true
            }
            Waiter::Waiting { .. } => false,
        }
    }

    fn index(&self, id: u64) -> Option<usize> {
        let front = self.lwbs.front()?.id;
        (id >= front).then(|| (id - front) as usize).filter(|&k| k < self.lwbs.len())
    }

    fn lwb_state(&self, id: u64) -> LwbState {
        self.index(id).map_or(LwbState::FlushDone, |k| self.lwbs[k].state)
    }

    fn push_lwb(&mut self, sz: u64, slog: bool, top: Top, offset: u64) {
        let mut l = self.spare.pop().unwrap_or_else(|| Lwb {
            id: 0,
            state: LwbState::New,
            sz: 0,
            nused: 0,
            slog: false,
            top: Top::Plain,
            offset: 0,
            waiters: 0,
            issued_at: 0,
            ios_pending: 0,
            io_done: 0,
            write_dep: false,
            root_dep: false,
            write_done: None,
            root_done: None,
            flush: vec![0; self.words],
        });
        l.id = self.next_id;
        self.next_id += 1;
        l.state = LwbState::New;
        l.sz = sz;
        l.nused = ZIL_CHAIN;
        l.slog = slog;
        l.top = top;
        l.offset = offset;
        l.waiters = 0;
        l.issued_at = 0;
        l.ios_pending = 0;
        l.io_done = 0;
        l.write_dep = false;
        l.root_dep = false;
        l.write_done = None;
        l.root_done = None;
        l.flush.fill(0);
        self.lwbs.push_back(l);
    }

    /// `zio_alloc_zil`: a block of `bytes` from the log class, the embedded log class, or
    /// the normal class. Returns (from the log class, where).
    fn allocate(&mut self, pool: &mut Pool, bytes: u64) -> (bool, Top, u64) {
        let mut c = self.classes.borrow_mut();
        if let Some((top, offset)) = c.slog.alloc(bytes) {
            return (true, top, offset);
        }
        if let Some((top, offset)) = c.embedded.alloc(bytes) {
            return (false, top, offset);
        }
        match pool.alloc(bytes) {
            Some(dva) => (false, Top::Data(dva.vdev as usize), dva.offset + VDEV_LABEL_START_SIZE),
            None => (false, Top::Plain, 0),
        }
    }

    fn leaves(top: Top, pool: &Pool) -> &[usize] {
        match top {
            Top::Log(k) => pool.log_children(k),
            Top::Data(k) => pool.children(k),
            Top::Plain => &pool.children(0)[..1],
        }
    }

    /// `zil_commit(file)` by client `slot` at `now`; its CPU is added to `cpu`. True if it
    /// returns at once; else the client waits until [`Zil::take_woken`] releases it.
    pub(crate) fn commit(
        &mut self,
        io: &mut ZilIo,
        slot: usize,
        object: u32,
        now: Nanos,
        cpu: &mut Nanos,
    ) -> bool {
        if self.p.sync == SyncProperty::Disabled {
            return true;
        }
        self.stats.zil_commit_count += 1;
        self.stats.zil_commit_writer_count += 1;
        *cpu += io.costs.zfs_block;
        // zil_async_to_sync of the file, then zil_get_commit_list: by txg, each txg's
        // sync itxs before the file's async ones.
        self.commit.clear();
        let mut asyncs = std::mem::take(&mut self.async_itxs[object as usize]);
        loop {
            let take_sync = match (self.sync_itxs.front(), asyncs.front()) {
                (Some(s), Some(a)) => s.txg <= a.txg,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let itx = if take_sync { self.sync_itxs.pop_front() } else { asyncs.pop_front() };
            self.commit.extend(itx);
        }
        self.async_itxs[object as usize] = asyncs;
        let bursts = matches!(self.p.features.sizing, LwbSizing::Bursts);
        if bursts {
            for itx in &self.commit {
                let full = itx.reclen() + itx.dlen();
                self.sizer.cur_size += full;
                self.sizer.cur_left += full;
                self.sizer.cur_max = self.sizer.cur_max.max(itx.reclen());
            }
        }
        if self.commit.is_empty() {
            // zil_prune_commit_list: nothing before the commit itx.
            match self.last_opened.filter(|&id| self.lwb_state(id) != LwbState::FlushDone) {
                None => return true,
                Some(id) => {
                    let k = self.index(id).expect("a block not done is in the list");
                    self.lwbs[k].waiters += 1;
                    let timed = self.lwbs[k].state == LwbState::Opened;
                    self.wait(slot, id, timed, now);
                    self.refresh_next();
                    return false;
                }
            }
        }
        // zil_process_commit_list.
        let n = self.lwbs.len();
        let tail_state = self.lwbs[n - 1].state;
        let prev_busy = n >= 2 && self.lwbs[n - 2].state != LwbState::FlushDone;
        let first = tail_state == LwbState::New && !prev_busy;
        if bursts {
            if tail_state == LwbState::Opened {
                self.sizer.parallel = ZIL_BURSTS;
            } else if prev_busy {
                self.sizer.parallel = self.sizer.parallel.max(ZIL_BURSTS / 2);
            }
        }
        let last_synced = io.txgs.last_synced();
        let list = std::mem::take(&mut self.commit);
        for itx in &list {
            if itx.txg <= last_synced {
                // Its txg wrote it: destroyed, not logged.
                if bursts {
                    self.sizer.cur_left = self.sizer.cur_left.saturating_sub(itx.reclen() + itx.dlen());
                }
                continue;
            }
            self.assign(io, itx, now, cpu);
        }
        self.commit = list;
        // The commit itx: the waiter joins the open block.
        self.open_tail();
        let tail = self.lwbs.len() - 1;
        self.lwbs[tail].waiters += 1;
        let id = self.lwbs[tail].id;
        let issue_now = match self.p.features.early_issue {
            EarlyIssue::Never => false,
            EarlyIssue::MinCommitTimeout => {
                let sleep = self.last_latency.saturating_mul(Nanos::from(self.p.commit_timeout_pct)) / 100;
                let l = &self.lwbs[tail];
                first && (sleep < self.p.min_commit_timeout || l.sz - l.nused < l.sz / 8)
            }
            EarlyIssue::SingleThreaded => self.sizer.parallel == 0,
        };
        if issue_now {
            if bursts {
                self.sizer.burst_done();
            }
            self.issue(io, now, cpu);
            if !bursts {
                self.sizer.cur_used = 0;
            }
        }
        let timed = self.lwb_state(id) == LwbState::Opened;
        self.wait(slot, id, timed, now);
        self.refresh_next();
        false
    }

    /// Client `slot` waits for block `id`; `timed`: with the timeout of an open block.
    fn wait(&mut self, slot: usize, id: u64, timed: bool, now: Nanos) {
        let wakeup = timed.then(|| {
            let pct = Nanos::from(self.p.commit_timeout_pct.max(1));
            now.saturating_add(self.last_latency.saturating_mul(pct) / 100)
        });
        if !matches!(self.waiters[slot], Waiter::Waiting { .. }) {
            self.nwaiting += 1;
        }
        self.waiters[slot] = Waiter::Waiting { lwb: id, wakeup };
    }

    /// `zil_lwb_write_open` of the tail block.
    fn open_tail(&mut self) {
        let t = self.lwbs.back_mut().expect("the list ends with the open or next block");
        if t.state == LwbState::New {
            t.state = LwbState::Opened;
            self.last_opened = Some(t.id);
        }
    }

    /// `zil_lwb_commit` (0.8, 2.1) / `zil_lwb_assign` (2.2) of one itx to the open block,
    /// issuing full blocks on the way.
    fn assign(&mut self, io: &mut ZilIo, itx: &Itx, now: Nanos, cpu: &mut Nanos) {
        self.open_tail();
        let reclen = itx.reclen();
        let mut dlen = itx.dlen();
        let buckets = !matches!(self.p.features.sizing, LwbSizing::Bursts);
        if buckets {
            self.sizer.cur_used += reclen + dlen;
        }
        loop {
            let tail = self.lwbs.len() - 1;
            let sp = self.lwbs[tail].sz - self.lwbs[tail].nused;
            let md = self.p.max_log_data;
            if reclen > sp
                || (reclen + dlen > sp
                    && sp < self.p.max_waste
                    && (dlen.is_multiple_of(md) || sp < reclen + dlen % md))
            {
                self.issue(io, now, cpu);
                self.open_tail();
                let t = self.lwbs.back_mut().expect("a next block");
                // Sized for what is committed, it holds the record; never less.
                let need = (ZIL_CHAIN + reclen + dlen.min(8)).next_multiple_of(ZIL_MIN_BLKSZ);
                t.sz = t.sz.max(need);
            }
            let tail = self.lwbs.len() - 1;
            let sp = self.lwbs[tail].sz - self.lwbs[tail].nused;
            let dnow = dlen.min(sp - reclen);
            self.lwbs[tail].nused += reclen + dnow;
            let s = &mut self.stats;
            s.zil_itx_count += 1;
            match itx.state {
                WrState::Copied => {
                    s.zil_itx_copied_count += 1;
                    s.zil_itx_copied_bytes += u64::from(itx.len);
                }
                WrState::NeedCopy => {
                    s.zil_itx_needcopy_count += 1;
                    s.zil_itx_needcopy_bytes += dnow;
                    // zfs_get_data's dmu_read of the dirty record into the block.
                    *cpu += (dnow as f64 * io.costs.memcpy_ns_per_byte) as Nanos;
                }
                WrState::Indirect => {
                    s.zil_itx_indirect_count += 1;
                    s.zil_itx_indirect_bytes += u64::from(itx.len);
                    let id = self.lwbs[tail].id;
                    if self.p.features.issue_pipeline {
                        self.deferred.push_back((id, *itx));
                    } else {
                        self.dmu_sync(io, tail, itx, now, cpu);
                    }
                }
            }
            dlen -= dnow;
            if dlen == 0 {
                if !buckets {
                    self.sizer.cur_left = self.sizer.cur_left.saturating_sub(reclen + dnow);
                }
                break;
            }
            if buckets {
                self.sizer.cur_used += reclen;
            } else {
                self.sizer.cur_left = self.sizer.cur_left.saturating_sub(dnow);
            }
        }
    }

    /// `zfs_get_data` → `dmu_sync` of a WR_INDIRECT record for block `k`: the record is
    /// written to a new place in the pool, a child of the block's write.
    fn dmu_sync(&mut self, io: &mut ZilIo, k: usize, itx: &Itx, now: Nanos, cpu: &mut Nanos) {
        if itx.txg <= io.txgs.last_synced() {
            return; // EEXIST: on disk already.
        }
        if itx.direct {
            return; // A Direct I/O write: its block is on disk, its pointer in the record.
        }
        let key = io.layout.key(itx.object, itx.blkid, 0);
        // A txg syncing cannot be overridden: dmu_sync_late_arrival writes the block in a
        // txg of its own, the sync writes it too. The open txg's record is overridden
        // once (EALREADY after: TX_WRITE2, the earlier write's data).
        let late = io.txgs.syncing().is_some_and(|t| itx.txg <= t);
        if !late && !io.txgs.override_record(key.0) {
            return;
        }
        let info = io.layout.block(itx.object, itx.blkid, 0).1;
        let asize = u64::from(io.layout.compression.asize(info.psize));
        if asize == 0 {
            return; // A hole: nothing to write.
        }
        let (top, offset) = if late {
            io.pool
                .alloc(asize)
                .map_or((Top::Plain, 0), |d| (Top::Data(d.vdev as usize), d.offset + VDEV_LABEL_START_SIZE))
        } else {
            io.pool.cow_write(key, asize, false).map_or((Top::Plain, 0), |(d, _)| {
                (Top::Data(d.vdev as usize), d.offset + VDEV_LABEL_START_SIZE)
            })
        };
        self.stats.dmu_sync_writes += 1;
        self.stats.dmu_sync_bytes += asize;
        // The record's zio compresses it (by the dataset's algorithm) and checksums it.
        let compress = io.costs.compress(io.layout.compression.algorithm(), info.lsize);
        *cpu += io.costs.zio + compress + (f64::from(info.psize) * io.costs.checksum_ns_per_byte) as Nanos;
        self.write_block(io, k, top, offset, asize as u32, false, now, cpu);
    }

    /// Writes `bytes` at `offset` on every leaf of `top` for block `k` (at async priority
    /// when `async_prio`), and marks those leaves for its flush.
    #[allow(clippy::too_many_arguments)]
    fn write_block(
        &mut self,
        io: &mut ZilIo,
        k: usize,
        top: Top,
        offset: u64,
        bytes: u32,
        async_prio: bool,
        now: Nanos,
        cpu: &mut Nanos,
    ) {
        let id = self.lwbs[k].id;
        let prio = if async_prio { Priority::AsyncWrite } else { Priority::SyncWrite };
        let nleaves = Self::leaves(top, io.pool).len();
        for n in 0..nleaves {
            let leaf = Self::leaves(top, io.pool)[n];
            self.lwbs[k].flush[leaf / 64] |= 1 << (leaf % 64);
            *cpu += io.costs.device_io;
            let req = Request::new(leaf, offset, bytes, Op::Write, prio, Tag::Lwb(id));
            match io.pool.submit(req, now, io.devices) {
                Some(done) => self.lwbs[k].io_done = self.lwbs[k].io_done.max(done),
                None => self.lwbs[k].ios_pending += 1,
            }
        }
    }

    /// A write of block `id` (or of one of its dmu_syncs) that its vdev queue held was
    /// issued: it completes at `done`. The caller refreshes [`Zil::next_at`] after
    /// (`refresh_next`).
    /// Whether log block `id` is this log's (ids are numbered per dataset).
    #[inline]
    pub(crate) fn owns(&self, id: u64) -> bool {
        id >> LWB_ID_SHIFT == self.next_id >> LWB_ID_SHIFT
    }

    pub(crate) fn io_issued(&mut self, id: u64, done: Nanos) {
        if let Some(k) = self.index(id) {
            let l = &mut self.lwbs[k];
            l.ios_pending -= 1;
            l.io_done = l.io_done.max(done);
        }
    }

    /// `zil_lwb_write_issue` of the open (tail) block: its deferred dmu_syncs (2.2), the
    /// next block's size and allocation, the counters, its write.
    fn issue(&mut self, io: &mut ZilIo, now: Nanos, cpu: &mut Nanos) {
        let k = self.lwbs.len() - 1;
        let id = self.lwbs[k].id;
        debug_assert_eq!(self.lwbs[k].state, LwbState::Opened);
        while self.deferred.front().is_some_and(|d| d.0 == id) {
            let (_, itx) = self.deferred.pop_front().expect("checked");
            self.dmu_sync(io, k, &itx, now, cpu);
        }
        let next_sz = self.sizer.next_block();
        let (next_slog, top, offset) = self.allocate(io.pool, next_sz);
        let l = &self.lwbs[k];
        let wsz = l.nused.next_multiple_of(ZIL_MIN_BLKSZ);
        let s = &mut self.stats;
        let (slog, sz) =
            if self.p.features.metaslab_stats_own_block { (l.slog, l.sz) } else { (next_slog, 0) };
        if slog {
            s.zil_itx_metaslab_slog_count += 1;
            s.zil_itx_metaslab_slog_bytes += l.nused;
            s.zil_itx_metaslab_slog_write += wsz;
            s.zil_itx_metaslab_slog_alloc += sz;
        } else {
            s.zil_itx_metaslab_normal_count += 1;
            s.zil_itx_metaslab_normal_bytes += l.nused;
            s.zil_itx_metaslab_normal_write += wsz;
            s.zil_itx_metaslab_normal_alloc += sz;
        }
        let burst = match self.p.features.sizing {
            LwbSizing::Buckets { .. } => self.sizer.cur_used,
            LwbSizing::Bursts => self.sizer.cur_size,
        };
        let async_prio = l.slog && burst > self.p.slog_bulk;
        let (prev_write, prev_root) = match k.checked_sub(1).map(|j| &self.lwbs[j]) {
            Some(p) => (
                p.state == LwbState::Issued && p.write_done.is_none_or(|t| t > now),
                p.state != LwbState::FlushDone,
            ),
            None => (false, false),
        };
        let (top_k, offset_k) = (l.top, l.offset);
        let nleaves = Self::leaves(top_k, io.pool).len() as u64;
        self.stats.lwb_writes += nleaves;
        self.stats.lwb_write_bytes += wsz * nleaves;
        *cpu += io.costs.zio + (wsz as f64 * io.costs.checksum_ns_per_byte) as Nanos;
        {
            let l = &mut self.lwbs[k];
            l.state = LwbState::Issued;
            l.issued_at = now;
            l.write_dep = prev_write;
            l.root_dep = prev_root;
        }
        self.write_block(io, k, top_k, offset_k, wsz as u32, async_prio, now, cpu);
        self.push_lwb(next_sz, next_slog, top, offset);
    }

    /// Runs the log's events due at `now`: queued writes that may go, waiters' timeouts,
    /// blocks whose write is done (their flushes) and whose flushes are done (their
    /// waiters return: [`Zil::take_woken`]).
    pub(crate) fn event(&mut self, io: &mut ZilIo, now: Nanos) {
        let mut cpu = 0;
        // zil_commit_waiter_timeout: a waiter whose block is still open issues it.
        for slot in 0..self.waiters.len() {
            let Waiter::Waiting { lwb, wakeup: Some(t) } = self.waiters[slot] else { continue };
            if t > now {
                continue;
            }
            self.waiters[slot] = Waiter::Waiting { lwb, wakeup: None };
            if self.lwb_state(lwb) == LwbState::Opened {
                self.stats.commit_timeouts += 1;
                let bursts = matches!(self.p.features.sizing, LwbSizing::Bursts);
                if bursts {
                    self.sizer.burst_done();
                }
                self.issue(io, now, &mut cpu);
                if !bursts {
                    self.sizer.cur_used = 0;
                }
            }
        }
        for k in 0..self.lwbs.len() {
            self.resolve(k);
            if self.lwbs[k].state == LwbState::Issued && self.lwbs[k].write_done.is_some_and(|t| t <= now) {
                self.write_done(io, k, now);
            }
            if self.lwbs[k].state == LwbState::WriteDone && self.lwbs[k].root_done.is_some_and(|t| t <= now) {
                self.flush_done(k, now);
            }
        }
        while self.lwbs.len() > 1 && self.lwbs.front().is_some_and(|l| l.state == LwbState::FlushDone) {
            let l = self.lwbs.pop_front().expect("checked");
            self.spare.push(l);
        }
        self.refresh_next();
    }

    /// A block's write is done when its writes (and its dmu_sync children's) are submitted
    /// and done, and the previous block's write is done (if it was in flight when this one
    /// was issued): known once all of them are submitted.
    fn resolve(&mut self, k: usize) {
        let l = &self.lwbs[k];
        if l.state != LwbState::Issued || l.write_done.is_some() || l.ios_pending > 0 {
            return;
        }
        // A previous block no longer in the list is done (flushes and all).
        let dep = match k.checked_sub(1) {
            Some(j) if l.write_dep => self.lwbs[j].write_done,
            _ => Some(0),
        };
        if let Some(d) = dep {
            self.lwbs[k].write_done = Some(self.lwbs[k].io_done.max(d));
        }
    }

    /// `zil_lwb_write_done`: flush the block's leaves, or defer them to the next block.
    fn write_done(&mut self, io: &mut ZilIo, k: usize, now: Nanos) {
        self.lwbs[k].state = LwbState::WriteDone;
        let next_issued = self.lwbs.get(k + 1).map(|n| n.state);
        let defer = self.lwbs[k].waiters == 0
            && match next_issued {
                None => false,
                Some(s) if self.p.features.issue_pipeline => s == LwbState::Issued,
                Some(_) => true,
            };
        let mut flushed = self.lwbs[k].write_done.unwrap_or(now);
        if defer {
            for w in 0..self.words {
                let bits = std::mem::take(&mut self.lwbs[k].flush[w]);
                self.lwbs[k + 1].flush[w] |= bits;
            }
        } else {
            for w in 0..self.words {
                let mut bits = self.lwbs[k].flush[w];
                while bits != 0 {
                    let leaf = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    flushed = flushed.max(io.devices[leaf].flush(now));
                    self.stats.flushes += 1;
                }
                self.lwbs[k].flush[w] = 0;
            }
        }
        let prev_root =
            if self.lwbs[k].root_dep { k.checked_sub(1).and_then(|j| self.lwbs[j].root_done) } else { None };
        self.lwbs[k].root_done = Some(flushed.max(prev_root.unwrap_or(0)));
    }

    /// `zil_lwb_flush_vdevs_done`: the block is on stable storage; its waiters return.
    fn flush_done(&mut self, k: usize, now: Nanos) {
        let l = &mut self.lwbs[k];
        l.state = LwbState::FlushDone;
        let t = now.saturating_sub(l.issued_at);
        let s = u32::from(self.p.features.latency_shift);
        self.last_latency = if s == 0 {
            t
        } else {
            // In u128: a device that never answers saturates its clock.
            ((u128::from(self.last_latency) * ((1 << s) - 1) + u128::from(t)) >> s) as Nanos
        };
        if l.waiters == 0 {
            return;
        }
        let id = l.id;
        for (slot, w) in self.waiters.iter_mut().enumerate() {
            if matches!(*w, Waiter::Waiting { lwb, .. } if lwb == id) {
                *w = Waiter::Done;
                self.nwaiting -= 1;
                self.woken.push(slot as u32);
            }
        }
    }

    /// Resolves what can be, then recomputes when the log next has something to do.
    pub(crate) fn refresh_next(&mut self) {
        for k in 0..self.lwbs.len() {
            self.resolve(k);
        }
        let mut t: Option<Nanos> = None;
        let mut at = |x: Nanos| t = Some(t.map_or(x, |y| y.min(x)));
        for w in &self.waiters {
            if let Waiter::Waiting { lwb, wakeup: Some(x) } = *w {
                if self.lwb_state(lwb) == LwbState::Opened {
                    at(x);
                }
            }
        }
        for l in &self.lwbs {
            match l.state {
                LwbState::Issued => {
                    if let Some(x) = l.write_done {
                        at(x);
                    }
                }
                LwbState::WriteDone => {
                    if let Some(x) = l.root_done {
                        at(x);
                    }
                }
                LwbState::New | LwbState::Opened | LwbState::FlushDone => {}
            }
        }
        // A block whose write is not yet known (its writes queued in a vdev queue, or the
        // previous block's) is resolved at one of the times above or when the queue
        // issues them (`io_issued`).
        self.next = t;
    }
}

/// `vdev_metaslab_set_size` (vdev.c, 2.1): log2 of the metaslab size of a vdev of
/// `asize` bytes.
fn metaslab_shift(asize: u64) -> u32 {
    let highbit = |x: u64| 64 - x.leading_zeros();
    let count = asize >> 29;
    let shift = if count < 16 {
        highbit(asize / 16)
    } else if count > 200 {
        highbit(asize / 200)
    } else {
        29
    };
    if shift < 24 {
        24
    } else if shift > 34 {
        if asize >> 34 > 1 << 17 {
            highbit(asize / (1 << 17))
        } else {
            34
        }
    } else {
        shift
    }
}

#[cfg(test)]
mod tests;
