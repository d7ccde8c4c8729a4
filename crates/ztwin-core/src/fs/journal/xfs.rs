//! XFS: what fsync and fdatasync send to the device through the log (delayed logging:
//! the CIL, checkpoints written in iclogs).
//!
//! Mechanism, as the model runs it (Linux 6.1):
//! - Every metadata change is a transaction committed into the CIL (the in-memory
//!   Committed Item List) of the current checkpoint sequence; the inode is pinned
//!   (`xfs_ipincount`) until a checkpoint holding its last change is on disk, and its log
//!   item records that sequence (`ili_commit_seq`) and the fields logged since the last
//!   sync (`ili_fsync_fields`). A write's timestamp update (`file_modified` ->
//!   `xfs_vn_update_time`, when `inode_needs_update_time` sees a new coarse-clock tick)
//!   logs XFS_ILOG_TIMESTAMP; converting unwritten extents at the end of an O_DIRECT
//!   write (`xfs_iomap_write_unwritten`), allocating, and growing the size
//!   (`xfs_setfilesize`) log XFS_ILOG_CORE and the fork. Logging an item again in the same
//!   sequence replaces it (relogging adds no bytes).
//! - `xfs_file_fsync`: after the data writes, if the inode is pinned, `xfs_fsync_seq`
//!   picks `ili_commit_seq`, or 0 for fdatasync when only XFS_ILOG_TIMESTAMP was logged;
//!   a nonzero sequence is forced (`xfs_log_force_seq`, XFS_LOG_SYNC: push the CIL if the
//!   sequence is still in it, wait for its commit iclog) and `ili_fsync_fields` cleared;
//!   `log_flushed` is set when the force had to write or wait. With the log internal
//!   (the log device is the data device) and nothing flushed by the force,
//!   `blkdev_issue_flush` of the data device follows: so fdatasync after an overwrite is
//!   one cache flush, as on ext4.
//! - A checkpoint (`xlog_cil_push_work`) writes the CIL's formatted items behind a start
//!   record and a transaction header, ending with a commit record, into iclogs of
//!   `logbsize` bytes (each with one 512-byte header per 32 KiB) written at the log head.
//!   The iclog holding the start of the checkpoint is written with REQ_PREFLUSH
//!   (`xlog_cil_set_ctx_write_state`: XLOG_ICL_NEED_FLUSH), the commit record's iclog
//!   with REQ_FUA (XLOG_ICL_NEED_FUA), and with REQ_PREFLUSH too after waiting for the
//!   earlier iclogs when the checkpoint spans more than one (`xlog_write_iclog` sets the
//!   bio flags). A small checkpoint is one write of PREFLUSH | FUA, rounded up to the log
//!   sector (or the log stripe unit). Checkpoints do not wait for each other to start (up
//!   to `logbufs` iclogs in flight); a sequence is complete when its commit iclog and every
//!   earlier one are (iclog completions are processed in log order).
//! - The CIL is also pushed when it holds an eighth of the log (`XLOG_CIL_SPACE_LIMIT`),
//!   and by the log worker every `xfs_syncd_centisecs` (30 s, `xfs_log_worker` ->
//!   `xfs_log_force(mp, 0)`).
//! - mkfs.xfs (xfsprogs 6.1): 4 allocation groups for a single disk of 128 MiB to 4 TiB
//!   (`calc_default_ag_geometry`), the internal log in AG agcount / 2, so at the middle of
//!   the device ([`XfsLayout::mkfs`]).
//!
//! Sources: fs/xfs/xfs_file.c (`xfs_file_fsync`, `xfs_fsync_flush_log`, `xfs_fsync_seq`:
//! read in a 5.14+ version with `xfs_csn_t` sequences, which is 6.1's; 6.10+ replaced
//! `ili_fsync_fields` by `ili_datasync_seq`). From memory of 6.1, not re-read here:
//! fs/xfs/xfs_log_cil.c (`xlog_cil_push_work`, `xlog_cil_set_ctx_write_state`,
//! `XLOG_CIL_SPACE_LIMIT`), fs/xfs/xfs_log.c (`xlog_write_iclog`, `xlog_alloc_log`'s
//! `l_iclog_roundoff`, `xfs_log_worker`), fs/xfs/xfs_iops.c (`xfs_vn_update_time`),
//! fs/xfs/xfs_trans_inode.c (`xfs_trans_log_inode`), the structure sizes checked in
//! fs/xfs/libxfs/xfs_ondisk.h, xfsprogs mkfs/xfs_mkfs.c.
//!
//! Simplifications: 1. an item's logged bytes: an inode core and its log format header
//! for any inode change; the whole inode literal area as the data fork region for an
//! extent change; an AGF and two free-space btree leaves (one 128-byte chunk each) for an
//! allocation; bmbt blocks of large files, the AGFL, the free-space btrees' splits and the
//! log item headers' 8-byte alignment are not counted; 2. the log tail (the AIL's metadata
//! writeback) is not modelled: the log never runs short of space and the inode cluster
//! writes are not issued; 3. the non-final iclogs of a checkpoint go as one write range
//! (split into requests of the queue's maximum size); an iclog that wraps the log end is two writes, the first with
//! the iclog's PREFLUSH, the second with its FUA; 4. a push starts when an fsync forces it
//! (the CIL push worker's scheduling takes no time); 5. a realtime device and an external
//! log are not modelled; 6. the log worker's 30 s period is on a grid from time 0.

use super::{coarse_tick, DeviceCaps, IoOp, IoStep, Plan, PlanRun, SyncPlan, WriteKind};
use crate::error::{Error, Result};
use crate::sim::time::{Nanos, SEC};

/// `BBSIZE`: the basic block, 512 bytes (log record headers are one BB per 32 KiB).
pub const BBSIZE: u32 = 512;
/// `XLOG_HEADER_CYCLE_SIZE`: bytes of iclog covered by one 512-byte record header.
pub const XLOG_HEADER_CYCLE_SIZE: u32 = 32 * 1024;
/// `XLOG_BIG_RECORD_BSIZE`: the default `logbsize` (iclog size) of a v2 log.
pub const XLOG_BIG_RECORD_BSIZE: u32 = 32 * 1024;
/// `XLOG_MAX_ICLOGS`: the default `logbufs`.
pub const XLOG_MAX_ICLOGS: u32 = 8;
/// `xfs_syncd_centisecs` default: the log worker's period.
pub const XFS_SYNCD_CENTISECS: u64 = 3000;
/// sizeof(struct xlog_op_header): before every region of a log record.
pub const XLOG_OP_HEADER_BYTES: u32 = 12;
/// sizeof(struct xfs_trans_header).
pub const XFS_TRANS_HEADER_BYTES: u32 = 16;
/// sizeof(struct xfs_inode_log_format) (xfs_ondisk.h: 56).
pub const XFS_INODE_LOG_FORMAT_BYTES: u32 = 56;
/// sizeof(struct xfs_log_dinode) for v3 inodes (xfs_ondisk.h: 176).
pub const XFS_LOG_DINODE_BYTES: u32 = 176;
/// sizeof(struct xfs_buf_log_format) (xfs_ondisk.h: 88).
pub const XFS_BUF_LOG_FORMAT_BYTES: u32 = 88;
/// `XFS_BLF_CHUNK`: a buffer is logged in chunks of 128 bytes.
pub const XFS_BLF_CHUNK: u32 = 128;
/// mkfs.xfs's default inode size for v5 (crc) filesystems.
pub const XFS_DEFAULT_INODE_SIZE: u32 = 512;

/// `XFS_ILOG_TIMESTAMP` in the model's field set.
const TIMESTAMP: u8 = 1;
/// `XFS_ILOG_CORE` (and fork bits).
const CORE: u8 = 2;

/// An inode log item with only the core logged: a format header and the log dinode.
pub const INODE_ITEM_BYTES: u32 =
    XLOG_OP_HEADER_BYTES + XFS_INODE_LOG_FORMAT_BYTES + XLOG_OP_HEADER_BYTES + XFS_LOG_DINODE_BYTES;
/// The data fork region of an extent change: the inode's literal area (a 512-byte inode
/// less its core).
pub const FORK_REGION_BYTES: u32 = XLOG_OP_HEADER_BYTES + XFS_DEFAULT_INODE_SIZE - XFS_LOG_DINODE_BYTES;
/// A buffer item logging one chunk.
pub const BUF_ITEM_BYTES: u32 =
    XLOG_OP_HEADER_BYTES + XFS_BUF_LOG_FORMAT_BYTES + XLOG_OP_HEADER_BYTES + XFS_BLF_CHUNK;
/// A checkpoint's own records: start record, transaction header, commit record.
pub const CHECKPOINT_OVERHEAD_BYTES: u32 =
    XLOG_OP_HEADER_BYTES + XLOG_OP_HEADER_BYTES + XFS_TRANS_HEADER_BYTES + XLOG_OP_HEADER_BYTES;

/// XFS log parameters, by their real names; `Default` is mkfs.xfs (xfsprogs 6.1) on a
/// 512-byte-sector disk and a default mount.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XfsParams {
    /// Log size, bytes (`sb_logblocks` x block size; 64 MiB).
    pub log_bytes: u64,
    /// `sb_logsectsize`: the log sector, the device's logical sector (512).
    pub log_sector: u32,
    /// `sb_logsunit`, bytes: iclog writes round up to it when above 1 (0 by default).
    pub log_stripe_unit: u32,
    /// `logbsize` mount option: iclog size (XLOG_BIG_RECORD_BSIZE).
    pub iclog_bytes: u32,
    /// `logbufs` mount option: iclogs (XLOG_MAX_ICLOGS).
    pub iclogs: u32,
    /// `xfs_syncd_centisecs` as ns.
    pub syncd_ns: Nanos,
    /// CONFIG_HZ: the coarse clock's ticks per second.
    pub hz: u32,
    /// `lazytime` mount option, off.
    pub lazytime: bool,
}

impl Default for XfsParams {
    fn default() -> Self {
        XfsParams {
            log_bytes: 64 << 20,
            log_sector: BBSIZE,
            log_stripe_unit: 0,
            iclog_bytes: XLOG_BIG_RECORD_BSIZE,
            iclogs: XLOG_MAX_ICLOGS,
            syncd_ns: XFS_SYNCD_CENTISECS * SEC / 100,
            hz: super::ext4::DEBIAN_CONFIG_HZ,
            lazytime: false,
        }
    }
}

impl XfsParams {
    fn check(&self) -> Result<()> {
        let ensure =
            |ok: bool, field: &str, msg: String| if ok { Ok(()) } else { Err(Error::config(field, msg)) };
        ensure(
            self.iclog_bytes.is_power_of_two() && (16 * 1024..=256 * 1024).contains(&self.iclog_bytes),
            "xfs.iclog_bytes",
            format!("{} is not allowed: logbsize is a power of two from 16 KiB to 256 KiB", self.iclog_bytes),
        )?;
        ensure(
            (2..=XLOG_MAX_ICLOGS).contains(&self.iclogs),
            "xfs.iclogs",
            format!("{} is not allowed: logbufs is 2 to 8", self.iclogs),
        )?;
        ensure(
            self.log_sector.is_power_of_two() && (BBSIZE..=32768).contains(&self.log_sector),
            "xfs.log_sector",
            format!("{} is not allowed: a power of two from 512 to 32768", self.log_sector),
        )?;
        ensure(
            self.log_stripe_unit <= 256 * 1024,
            "xfs.log_stripe_unit",
            format!("{} is not allowed: at most 256 KiB", self.log_stripe_unit),
        )?;
        ensure(
            (u64::from(self.iclog_bytes) * 8..=1 << 41).contains(&self.log_bytes),
            "xfs.log_bytes",
            "must be at least 8 iclogs and at most 2 TiB".into(),
        )?;
        ensure((1..=10_000).contains(&self.hz), "xfs.hz", format!("{} is not allowed: 1 to 10000", self.hz))?;
        ensure(
            (1..=1000 * SEC).contains(&self.syncd_ns),
            "xfs.syncd_ns",
            "must be from 1 ns to 1000 s".into(),
        )
    }

    /// `l_iclog_roundoff`: the log stripe unit when above 1, else a basic block (and at
    /// least the log sector).
    fn roundoff(&self) -> u64 {
        u64::from(if self.log_stripe_unit > 1 { self.log_stripe_unit } else { BBSIZE }.max(self.log_sector))
    }

    /// Record header bytes of one iclog: a basic block per 32 KiB.
    fn header_bytes(&self) -> u64 {
        u64::from(BBSIZE) * u64::from(self.iclog_bytes.div_ceil(XLOG_HEADER_CYCLE_SIZE))
    }
}

/// Where the log lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XfsLayout {
    /// Byte offset of the internal log on the device.
    pub log_offset: u64,
}

impl XfsLayout {
    /// mkfs.xfs's internal log for a single disk of `fs_bytes`: 4 AGs (from 128 MiB to
    /// 4 TiB), the log at the start of AG 2 (the AG headers before it are ignored).
    pub fn mkfs(fs_bytes: u64) -> XfsLayout {
        let agsize = fs_bytes.div_ceil(4) / 4096 * 4096;
        XfsLayout { log_offset: 2 * agsize }
    }
}

#[derive(Debug, Clone, Copy)]
struct XfsFile {
    mtime_tick: u64,
    /// `ili_commit_seq`: the CIL sequence of the inode's last change (0: none).
    commit_seq: u64,
    /// `ili_fsync_fields`.
    fsync_fields: u8,
    /// Bytes of its item in the CIL sequence `commit_seq`.
    item_bytes: u32,
}

#[derive(Debug, Clone, Copy)]
struct Push {
    seq: u64,
    run: PlanRun,
    in_phase_b: bool,
    phase_b: Plan,
    iclogs: u32,
    done: bool,
}

/// What the log's background work (the CIL push worker, the log worker) does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogStep {
    /// Call [`XfsLog::log_step`] again at this time (None: until an fsync kicks it).
    pub wake_at: Option<Nanos>,
    /// Every checkpoint sequence up to this one is on disk: wake its waiters.
    pub completed_through: u64,
}

/// Counters of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XfsStats {
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Checkpoints pushed by the log worker or the CIL space limit.
    pub background_checkpoints: u64,
    /// Log bytes written (iclogs).
    pub log_bytes: u64,
    /// iclog writes.
    pub iclog_writes: u64,
    /// fsync/fdatasync calls.
    pub syncs: u64,
    /// Syncs that forced the log.
    pub log_forces: u64,
    /// Syncs that issued a cache flush themselves (`!log_flushed`).
    pub sync_flushes: u64,
    /// Inode changes logged.
    pub transactions: u64,
}

/// The XFS log of one filesystem (see the module docs).
#[derive(Debug, Clone)]
pub struct XfsLog {
    p: XfsParams,
    caps: DeviceCaps,
    log_offset: u64,
    files: Vec<XfsFile>,
    /// The current CIL sequence, its bytes and items.
    cil_seq: u64,
    cil_bytes: u64,
    cil_items: u32,
    /// The highest sequence a log force asked to push.
    push_request: u64,
    /// Checkpoints in flight, at most `logbufs`.
    pushes: [Option<Push>; XLOG_MAX_ICLOGS as usize],
    completed_seq: u64,
    /// Byte offset of the log head within the log.
    head: u64,
    next_worker: Nanos,
    stats: XfsStats,
}

impl XfsLog {
    /// A freshly mounted log of `p` at `layout` holding `files` files, on a device with
    /// `caps`.
    pub fn new(p: XfsParams, layout: XfsLayout, files: u32, caps: DeviceCaps) -> Result<XfsLog> {
        p.check()?;
        if files > 1 << 24 {
            return Err(Error::config("xfs.files", "at most 2^24 files"));
        }
        let f = XfsFile { mtime_tick: u64::MAX, commit_seq: 0, fsync_fields: 0, item_bytes: 0 };
        Ok(XfsLog {
            caps,
            log_offset: layout.log_offset,
            files: vec![f; files as usize],
            cil_seq: 1,
            cil_bytes: 0,
            cil_items: 0,
            push_request: 0,
            pushes: [None; XLOG_MAX_ICLOGS as usize],
            completed_seq: 0,
            head: 0,
            next_worker: p.syncd_ns,
            stats: XfsStats::default(),
            p,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> XfsStats {
        self.stats
    }

    /// Every checkpoint sequence up to this one is on disk.
    pub fn completed_through(&self) -> u64 {
        self.completed_seq
    }

    /// The current CIL sequence and its formatted bytes.
    pub fn cil(&self) -> (u64, u64) {
        (self.cil_seq, self.cil_bytes)
    }

    /// `XLOG_CIL_SPACE_LIMIT`: an eighth of the log.
    fn cil_space_limit(&self) -> u64 {
        self.p.log_bytes >> 3
    }

    /// A write of `kind` to file `file` at `now`: the transactions it commits into the
    /// CIL. Returns whether it logged anything and whether that is more than timestamps
    /// (an fdatasync must force the log). A file id out of range does nothing.
    pub fn note_write(&mut self, file: u32, kind: WriteKind, now: Nanos) -> (bool, bool) {
        let Some(f) = self.files.get(file as usize).copied() else { return (false, false) };
        let tick = coarse_tick(now, self.p.hz);
        let times = tick != f.mtime_tick;
        let (mut fields, mut bytes) = (0u8, 0u32);
        if times && !self.p.lazytime {
            fields |= TIMESTAMP;
            bytes = INODE_ITEM_BYTES;
        }
        match kind {
            WriteKind::Overwrite => {}
            WriteKind::IntoUnwritten => {
                fields |= CORE;
                bytes = INODE_ITEM_BYTES + FORK_REGION_BYTES;
            }
            WriteKind::Extend | WriteKind::Fallocate { .. } => {
                fields |= CORE;
                bytes = INODE_ITEM_BYTES + FORK_REGION_BYTES + 3 * BUF_ITEM_BYTES;
            }
        }
        let fs = &mut self.files[file as usize];
        if times {
            fs.mtime_tick = tick;
        }
        if fields == 0 {
            return (false, false);
        }
        // Relogging in the same sequence replaces the item.
        if fs.commit_seq == self.cil_seq {
            let grown = bytes.saturating_sub(fs.item_bytes);
            fs.item_bytes = fs.item_bytes.max(bytes);
            self.cil_bytes += u64::from(grown);
        } else {
            fs.item_bytes = bytes;
            self.cil_bytes += u64::from(bytes);
            self.cil_items += 1;
        }
        fs.commit_seq = self.cil_seq;
        fs.fsync_fields |= fields;
        self.stats.transactions += 1;
        (true, fields & CORE != 0)
    }

    /// `xfs_file_fsync` for file `file` at `now` (`datasync`: fdatasync), after its data
    /// writes completed. A file id out of range is an inode never logged.
    pub fn fsync(&mut self, file: u32, datasync: bool, now: Nanos) -> SyncPlan {
        let _ = now;
        self.stats.syncs += 1;
        let mut plan = SyncPlan::default();
        let mut log_flushed = false;
        if let Some(f) = self.files.get_mut(file as usize) {
            let pinned = f.commit_seq > self.completed_seq;
            let seq =
                if !pinned || (datasync && f.fsync_fields & !TIMESTAMP == 0) { 0 } else { f.commit_seq };
            if seq != 0 {
                f.fsync_fields = 0;
                if seq == self.cil_seq {
                    self.push_request = self.push_request.max(seq);
                    plan.kick = true;
                }
                plan.wait_commit = Some(seq);
                log_flushed = true;
                self.stats.log_forces += 1;
            }
        }
        if !log_flushed {
            plan.then.push(IoOp::Flush, false);
            self.stats.sync_flushes += 1;
        }
        plan
    }

    /// The log's background work at `now`: advances the checkpoints in flight, records
    /// completions in sequence order, and pushes the CIL when a force asked for it, it
    /// passed `XLOG_CIL_SPACE_LIMIT`, or the log worker's period came.
    pub fn log_step(&mut self, now: Nanos, dev: &mut impl super::BlockDev) -> LogStep {
        let mut wake: Option<Nanos> = None;
        let min_wake = |t: Nanos, w: &mut Option<Nanos>| *w = Some(w.map_or(t, |x| x.min(t)));
        for slot in self.pushes.iter_mut() {
            let Some(push) = slot.as_mut() else { continue };
            loop {
                if push.done {
                    break;
                }
                match push.run.step(now, dev) {
                    IoStep::WaitUntil(t) => {
                        min_wake(t, &mut wake);
                        break;
                    }
                    IoStep::Done if !push.in_phase_b => {
                        push.in_phase_b = true;
                        push.run = PlanRun::new(&push.phase_b, self.caps);
                    }
                    IoStep::Done => push.done = true,
                }
            }
        }
        // Completions in log order.
        loop {
            let oldest = self.pushes.iter().enumerate().filter_map(|(i, s)| s.map(|p| (p.seq, i))).min();
            match oldest {
                Some((seq, i)) if self.pushes[i].is_some_and(|p| p.done) => {
                    self.completed_seq = seq;
                    self.pushes[i] = None;
                }
                _ => break,
            }
        }
        if now >= self.next_worker {
            let period = self.p.syncd_ns;
            self.next_worker = (now / period + 1).saturating_mul(period);
            if self.cil_items > 0 {
                self.push_request = self.push_request.max(self.cil_seq);
                self.stats.background_checkpoints += 1;
            }
        }
        if self.cil_items > 0 && self.cil_bytes >= self.cil_space_limit() && self.push_request < self.cil_seq
        {
            self.push_request = self.cil_seq;
            self.stats.background_checkpoints += 1;
        }
        if self.push_request >= self.cil_seq && self.cil_items > 0 {
            if let Some(wait) = self.start_push(now, dev) {
                min_wake(wait, &mut wake);
            }
        }
        if self.cil_items > 0 {
            min_wake(self.next_worker, &mut wake);
        }
        LogStep { wake_at: wake, completed_through: self.completed_seq }
    }

    /// Pushes the CIL at `now` if an iclog is free; returns when to step again.
    fn start_push(&mut self, now: Nanos, dev: &mut impl super::BlockDev) -> Option<Nanos> {
        let busy: u32 = self.pushes.iter().flatten().map(|p| p.iclogs).sum();
        let slot = self.pushes.iter().position(|s| s.is_none())?;
        let payload = self.cil_bytes + u64::from(CHECKPOINT_OVERHEAD_BYTES);
        let header = self.p.header_bytes();
        let cap = u64::from(self.p.iclog_bytes) - header;
        let iclogs = payload.div_ceil(cap).max(1);
        if busy > 0 && u64::from(busy) + iclogs > u64::from(self.p.iclogs) {
            // Waits for an iclog (xlog_state_get_iclog_space); a checkpoint larger than
            // every iclog together still goes when the log is idle.
            return None;
        }
        let roundoff = self.p.roundoff();
        let last = header + (payload - (iclogs - 1) * cap).div_ceil(roundoff) * roundoff;
        let full = u64::from(self.p.iclog_bytes);
        let mut a = Plan::EMPTY;
        let mut b = Plan::EMPTY;
        let total = (iclogs - 1) * full + last;
        if iclogs == 1 {
            self.push_write(&mut a, last, true, true);
        } else {
            // The non-final iclogs (one range, the first with the checkpoint's PREFLUSH),
            // then the commit iclog once they completed.
            self.push_write(&mut a, (iclogs - 1) * full, true, false);
            self.push_write(&mut b, last, true, true);
        }
        self.stats.checkpoints += 1;
        self.stats.log_bytes += total;
        self.stats.iclog_writes += iclogs;
        let seq = self.cil_seq;
        self.cil_seq += 1;
        self.cil_bytes = 0;
        self.cil_items = 0;
        let mut run = PlanRun::new(&a, self.caps);
        let wait = match run.step(now, dev) {
            IoStep::WaitUntil(t) => t,
            IoStep::Done => now,
        };
        self.pushes[slot] = Some(Push {
            seq,
            run,
            // A single iclog is the whole checkpoint: no phase B.
            in_phase_b: iclogs == 1,
            phase_b: b,
            iclogs: iclogs.min(u64::from(u32::MAX)) as u32,
            done: false,
        });
        Some(wait)
    }

    /// Appends a write of `bytes` at the log head (two at the log's end) to `plan`.
    fn push_write(&mut self, plan: &mut Plan, bytes: u64, preflush: bool, fua: bool) {
        let first = bytes.min(self.p.log_bytes - self.head);
        let offset = self.log_offset.saturating_add(self.head);
        let wraps = first < bytes;
        plan.push(IoOp::Write { offset, bytes: first, preflush, fua: fua && !wraps }, false);
        self.head = (self.head + first) % self.p.log_bytes;
        if wraps {
            let rest = (bytes - first).min(self.p.log_bytes);
            plan.push(IoOp::Write { offset: self.log_offset, bytes: rest, preflush: false, fua }, false);
            self.head = rest % self.p.log_bytes;
        }
    }
}

#[cfg(test)]
mod tests;
