//! What fsync and fdatasync cost on ext4 (jbd2) and XFS: the journal writes and cache
//! flushes a sync issues, as plans a driver executes on a [`Device`].
//!
//! Mechanism. A database on ext4 or XFS writes its files with O_DIRECT (the data reach
//! the device before the write returns) and then calls fsync or fdatasync. What that call
//! sends to the device depends on the metadata the writes dirtied:
//! - nothing but the timestamps (an overwrite of allocated, written blocks: the usual
//!   case for InnoDB's data files and redo log): fdatasync sends one cache flush
//!   (ext4: `needs_barrier`, XFS: `!log_flushed`); fsync commits the journal when the
//!   inode's last change is not yet committed;
//! - the block map or the size (a write into fallocate'd, unwritten extents, an append):
//!   both commit the journal, whose last write carries REQ_PREFLUSH | REQ_FUA.
//!
//! [`ext4`] models jbd2 under ext4 data=ordered, [`xfs`] the XFS log (CIL and iclogs).
//! This module holds what they share: the plan of device I/Os ([`Plan`]), how the block
//! layer turns REQ_PREFLUSH and REQ_FUA into flush commands for a device
//! ([`DeviceCaps`], [`lower`]: `blk_flush_policy`), and a step machine that issues a plan
//! on a device ([`PlanRun`], through [`BlockDev`], which [`Device`] implements).
//!
//! The block layer (block/blk-flush.c, `blk_flush_policy`, `blk_insert_flush`,
//! `blkdev_issue_flush`): a request with REQ_PREFLUSH and/or REQ_FUA is a sequence of up to
//! three steps, each started when the previous one completes: PREFLUSH (a flush command),
//! DATA (the write), POSTFLUSH (a flush command). On a queue without a volatile write
//! cache (no QUEUE_FLAG_WC) both flags are dropped: the write goes as a plain write and an
//! empty flush completes at once without reaching the device. With a write cache,
//! REQ_PREFLUSH becomes the PREFLUSH step; REQ_FUA is passed to the device with the write
//! when the queue has QUEUE_FLAG_FUA, else it becomes the POSTFLUSH step.
//! `blkdev_issue_flush` is an empty write with REQ_PREFLUSH: one flush command.
//!
//! virtio-blk (drivers/block/virtio_blk.c, `virtblk_probe`, `cache_type_store`) declares
//! its write cache from VIRTIO_BLK_F_FLUSH / the `wce` config byte and never declares FUA
//! (`blk_queue_write_cache(q, writeback, false)`; virtio has no FUA command). So on the
//! experiments' virtio disk (volatile cache, no FUA) a jbd2 commit block (PREFLUSH|FUA)
//! costs a flush, the 4 KiB write, and another flush, each waiting for the previous.
//! Linux md (drivers/md/md.c, raid10.c; from memory, not re-read) declares both WC and FUA
//! for the array, sends a PREFLUSH to every member (`md_flush_request`) and passes FUA to
//! the member writes, each member's queue then applying the same policy; that mapping
//! (one plan I/O to several member devices) is the driver's.
//!
//! Driving it, one journal per filesystem, in simulated time:
//! - a write: once its data I/O is issued (O_DIRECT), `note_write(file, kind, now)`. On
//!   ext4, `needs_checkpoint` means the writer steps `checkpoint_step` until `Done`
//!   (`WaitCommit(n)`: kick the journal task and wait for commit `n`) and calls
//!   `note_write` again; `wait_until` means the writer resumes then (BH_Shadow).
//! - fsync or fdatasync: `fsync(file, datasync, now)` gives a [`SyncPlan`]: if `kick`, run
//!   the journal task at `now`; if `wait_commit` is `Some(n)`, park the caller until the
//!   task reports `n` done; then issue `then` with a [`PlanRun`] (`PlanRun::new(&then,
//!   caps)`, stepped at the times it returns) and return when it is `Done`.
//! - the journal task (kjournald2; XFS's CIL push and log workers): call
//!   `Ext4Journal::commit_step` / `XfsLog::log_step` when kicked and at the `wake_at` it
//!   returns, and wake the parked callers its `committed_through` /
//!   `completed_through` covers.
//! - ext4's flusher: `writeback_step(now, dev)` at `writeback_due()`.
//!
//! What `dev::device` already models: a write ([`Device::submit_at`], offset-aware for a
//! rotational disk) and a cache flush ([`Device::flush`]): a flush takes a service slot
//! for the preset's `flush_latency_ns` behind what is queued, passes no admission
//! throttle (QEMU's `iops` throttle does not count flushes either), and is counted in
//! `DeviceCounters::flushes`; `flush_latency_ns` 0 is a device without a volatile cache.
//! A plan maps onto it one to one: [`PlanRun`] lowers each plan I/O with [`lower`] and
//! issues the writes with `submit_at` and the flush commands with `flush`. With
//! `flush_latency_ns` 0 the lowering issues no flush command at all, so the device counts
//! none (the ZFS path counts the flushes ZFS asked for; [`Plan::flush_requests`] gives the
//! same number here). A FUA write on a device with FUA is a plain write to the model (its
//! extra service time is not modelled).
//!
//! Sources, read in the stored index (one version of each file; what may differ in 6.1
//! is said where it matters): block/blk-flush.c (a 5.1x version: `blk_flush_policy`,
//! `blk_insert_flush`, `blk_kick_flush`, `blkdev_issue_flush`; unchanged in 6.1 in what is
//! used here), drivers/block/virtio_blk.c (a 6.x patch context: `blk_queue_write_cache`
//! with FUA false; the same in 6.1). The ext4, jbd2 and XFS sources are listed in their
//! modules.
//!
//! Simplifications: 1. blk-flush's merging of concurrent flush requests (one flush in
//! flight at a time, C1; pending PREFLUSH/POSTFLUSH steps of several requests share the
//! next one) is not modelled: each plan's flush is its own device flush; 2. a write range
//! is split into requests of at most `max_request_bytes` (the queue's max_sectors and
//! max_segments), contiguous blocks of one plan step being merged by the plug as
//! `blk_start_plug` lets them; 3. the data writes of an fsync (O_DIRECT writes, done
//! before the call; buffered dirty pages, written by `file_write_and_wait_range`) are the
//! caller's: a plan holds only what the filesystem adds.

pub mod ext4;
pub mod xfs;

use crate::config::DeviceConfig;
use crate::dev::device::{Device, Op};
use crate::sim::time::Nanos;

/// One I/O of a plan, as the filesystem submits it to the block layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// A write of `bytes` at byte `offset` of the filesystem's device; `preflush` and
    /// `fua` are REQ_PREFLUSH and REQ_FUA.
    Write {
        /// Byte offset on the device.
        offset: u64,
        /// Length in bytes (split into requests by [`PlanRun`]).
        bytes: u64,
        /// REQ_PREFLUSH: the device cache is flushed before the write.
        preflush: bool,
        /// REQ_FUA: the write is on stable media when it completes.
        fua: bool,
    },
    /// `blkdev_issue_flush`: an empty REQ_PREFLUSH write.
    Flush,
}

/// One step of a plan: an I/O and whether it waits for everything before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanStep {
    /// The I/O.
    pub op: IoOp,
    /// Submitted only when every earlier I/O of the plan has completed (jbd2 waits for its
    /// journal writes before the commit block); false: submitted with the one before.
    pub after_previous: bool,
}

/// Most steps a plan holds (a jbd2 commit needs at most six: the journal superblock of the
/// first commit, two journal ranges at a wrap, the commit block, a flush with
/// journal_async_commit, the tail update).
pub const PLAN_CAP: usize = 8;

/// Device I/Os in order, without allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    steps: [PlanStep; PLAN_CAP],
    len: u8,
}

impl Default for Plan {
    fn default() -> Self {
        Plan::EMPTY
    }
}

impl Plan {
    /// No I/O.
    pub const EMPTY: Plan =
        Plan { steps: [PlanStep { op: IoOp::Flush, after_previous: false }; PLAN_CAP], len: 0 };

    /// Appends `op`; false (and nothing appended) when the plan is full, which the
    /// journals never reach (see [`PLAN_CAP`]).
    pub fn push(&mut self, op: IoOp, after_previous: bool) -> bool {
        let n = self.len as usize;
        debug_assert!(n < PLAN_CAP, "plan full");
        if n >= PLAN_CAP {
            return false;
        }
        self.steps[n] = PlanStep { op, after_previous };
        self.len += 1;
        true
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[PlanStep] {
        &self.steps[..self.len as usize]
    }

    /// No I/O at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Flushes the filesystem asked for: empty flushes and REQ_PREFLUSH writes.
    pub fn flush_requests(&self) -> u32 {
        self.steps()
            .iter()
            .filter(|s| matches!(s.op, IoOp::Flush | IoOp::Write { preflush: true, .. }))
            .count() as u32
    }

    /// Bytes written.
    pub fn write_bytes(&self) -> u64 {
        self.steps()
            .iter()
            .map(|s| match s.op {
                IoOp::Write { bytes, .. } => bytes,
                IoOp::Flush => 0,
            })
            .sum()
    }
}

/// What the block layer knows of a device's cache (request_queue flags) and request size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceCaps {
    /// QUEUE_FLAG_WC: a volatile write cache, so flushes reach the device.
    pub write_cache: bool,
    /// QUEUE_FLAG_FUA: the device takes FUA writes (else FUA becomes a post-flush).
    pub fua: bool,
    /// Largest request the queue builds, bytes: min(max_sectors_kb, max_segments x 4 KiB
    /// pages).
    pub max_request_bytes: u32,
}

impl DeviceCaps {
    /// `BLK_DEF_MAX_SECTORS` (include/linux/blkdev.h, 6.1): 2560 sectors, the default
    /// max_sectors_kb of 1280 KiB for a queue whose hardware allows more.
    pub const BLK_DEF_MAX_SECTORS: u32 = 2560;

    /// A QEMU virtio-blk disk: write cache as the guest sees it (VIRTIO_BLK_F_FLUSH with
    /// cache=writeback, QEMU's default), never FUA. Its request size: virtio_blk.c takes
    /// `seg_max` from the device (QEMU: queue-size - 2 = 254 for the default queue-size
    /// 256) as max_segments, so a request of separate 4 KiB pages is at most 254 pages
    /// (1016 KiB), under max_sectors (1280 KiB).
    pub fn virtio_blk(write_cache: bool) -> DeviceCaps {
        DeviceCaps { write_cache, fua: false, max_request_bytes: 254 * 4096 }
    }

    /// From a device's configuration: a volatile cache when its `flush_latency_ns` is
    /// not 0; `fua` and the request size as the caller knows the device.
    pub fn from_config(cfg: &DeviceConfig, fua: bool, max_request_bytes: u32) -> DeviceCaps {
        DeviceCaps {
            write_cache: cfg.flush_latency_ns > 0,
            fua,
            max_request_bytes: max_request_bytes.max(512),
        }
    }
}

/// A command the device receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    /// A write of `bytes` at `offset` (still to be split into requests).
    Write {
        /// Byte offset.
        offset: u64,
        /// Bytes.
        bytes: u64,
    },
    /// A cache flush command (REQ_OP_FLUSH).
    Flush,
}

/// The device commands of one plan I/O, in order, each waiting for the previous one
/// (`blk_flush_policy` and `blk_insert_flush`): at most PREFLUSH, DATA, POSTFLUSH.
/// Returns the commands and how many there are.
pub fn lower(op: IoOp, caps: DeviceCaps) -> ([Cmd; 3], usize) {
    let mut out = [Cmd::Flush; 3];
    let mut n = 0;
    let (data, preflush, fua) = match op {
        IoOp::Write { offset, bytes, preflush, fua } => (Some((offset, bytes)), preflush, fua),
        IoOp::Flush => (None, true, false),
    };
    if caps.write_cache && preflush {
        out[n] = Cmd::Flush;
        n += 1;
    }
    if let Some((offset, bytes)) = data {
        out[n] = Cmd::Write { offset, bytes };
        n += 1;
    }
    if caps.write_cache && fua && !caps.fua && data.is_some() {
        out[n] = Cmd::Flush;
        n += 1;
    }
    (out, n)
}

/// A device a plan runs on: a write at an offset and a cache flush, each returning its
/// completion time (calls in nondecreasing `now`).
pub trait BlockDev {
    /// Submits a write of `bytes` at byte `offset` at `now`; returns its completion.
    fn write(&mut self, now: Nanos, offset: u64, bytes: u32) -> Nanos;
    /// Submits a cache flush at `now`; returns its completion.
    fn flush(&mut self, now: Nanos) -> Nanos;
}

impl BlockDev for Device {
    fn write(&mut self, now: Nanos, offset: u64, bytes: u32) -> Nanos {
        self.submit_at(now, Op::Write, offset, bytes)
    }

    fn flush(&mut self, now: Nanos) -> Nanos {
        Device::flush(self, now)
    }
}

/// What a step machine does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoStep {
    /// I/O is in flight: step again at this time.
    WaitUntil(Nanos),
    /// Everything completed.
    Done,
}

/// Most device commands of one plan.
const CMD_CAP: usize = PLAN_CAP * 3;

/// A plan being issued on a device: its lowered commands and how far it got.
#[derive(Debug, Clone, Copy)]
pub struct PlanRun {
    cmds: [(Cmd, bool); CMD_CAP],
    len: u8,
    next: u8,
    max_request: u32,
    /// Completion of everything issued so far.
    busy_until: Nanos,
    /// Completion of each group of commands issued together, in order.
    group_done: [Nanos; CMD_CAP],
    groups: u8,
    /// Requests and flush commands issued.
    writes: u32,
    flushes: u32,
}

impl PlanRun {
    /// Nothing to run.
    pub const IDLE: PlanRun = PlanRun {
        cmds: [(Cmd::Flush, false); CMD_CAP],
        len: 0,
        next: 0,
        max_request: 4096,
        busy_until: 0,
        group_done: [0; CMD_CAP],
        groups: 0,
        writes: 0,
        flushes: 0,
    };

    /// Lowers `plan` for a device with `caps`. The commands of one plan I/O wait for each
    /// other; a plan step that is `after_previous` waits for all earlier commands.
    pub fn new(plan: &Plan, caps: DeviceCaps) -> PlanRun {
        let mut run = PlanRun { max_request: caps.max_request_bytes.max(512), ..PlanRun::IDLE };
        let mut n = 0usize;
        for step in plan.steps() {
            let (cmds, k) = lower(step.op, caps);
            for (i, &c) in cmds[..k].iter().enumerate() {
                // The first command of a step waits if the step does; the others wait for
                // the command before them (the flush sequence).
                let after = if i == 0 { step.after_previous && n > 0 } else { true };
                if n < CMD_CAP {
                    run.cmds[n] = (c, after);
                    n += 1;
                }
            }
        }
        run.len = n as u8;
        run
    }

    /// All commands issued and completed by `now`.
    pub fn is_done(&self, now: Nanos) -> bool {
        self.next >= self.len && now >= self.busy_until
    }

    /// Completion of the commands issued so far (the plan's end once all are issued).
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }

    /// Completion of the `k`-th group of commands issued together (0: the first), once
    /// issued. A group is a plan step with the steps after it that do not wait, as lowered
    /// (a PREFLUSH|FUA write on a device without FUA is three groups).
    pub fn group_done(&self, k: usize) -> Option<Nanos> {
        (k < self.groups as usize).then(|| self.group_done[k])
    }

    /// Write requests and flush commands issued so far.
    pub fn issued(&self) -> (u32, u32) {
        (self.writes, self.flushes)
    }

    /// Issues what can go at `now`: the next group of commands once the previous ones
    /// completed. Call again at the returned time.
    pub fn step(&mut self, now: Nanos, dev: &mut impl BlockDev) -> IoStep {
        if self.next < self.len && (self.next == 0 || now >= self.busy_until) {
            let mut done = now.max(self.busy_until);
            loop {
                let (cmd, _) = self.cmds[self.next as usize];
                match cmd {
                    Cmd::Flush => {
                        done = done.max(dev.flush(now));
                        self.flushes += 1;
                    }
                    Cmd::Write { offset, bytes } => {
                        let mut off = offset;
                        let mut left = bytes;
                        while left > 0 {
                            let n = left.min(u64::from(self.max_request)) as u32;
                            done = done.max(dev.write(now, off, n));
                            self.writes += 1;
                            off = off.saturating_add(u64::from(n));
                            left -= u64::from(n);
                        }
                    }
                }
                self.next += 1;
                if self.next >= self.len || self.cmds[self.next as usize].1 {
                    break;
                }
            }
            self.busy_until = done;
            if (self.groups as usize) < CMD_CAP {
                self.group_done[self.groups as usize] = done;
                self.groups += 1;
            }
        }
        if self.is_done(now) {
            IoStep::Done
        } else {
            IoStep::WaitUntil(self.busy_until.max(now))
        }
    }
}

/// What an fsync or fdatasync must do, in order: wait for a journal commit (ext4: a jbd2
/// transaction; XFS: a CIL checkpoint sequence), then issue `then`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncPlan {
    /// Wait until the journal reports this commit done (`committed_through() >= n`).
    pub wait_commit: Option<u64>,
    /// The I/Os the caller issues after the wait (a cache flush, or nothing).
    pub then: Plan,
    /// A commit was requested: the journal's task must run now (`commit_step`).
    pub kick: bool,
}

/// What a write did to the inode, as the journals see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A write over allocated, written blocks (O_DIRECT or buffered): only mtime and
    /// ctime may change.
    Overwrite,
    /// An O_DIRECT write into blocks fallocate preallocated (unwritten extents): the
    /// extents are converted to written when the I/O completes.
    IntoUnwritten,
    /// A write past the end of file: blocks allocated and the size extended.
    Extend,
    /// fallocate(2) mode 0: blocks allocated as unwritten extents; `extends` if it grows
    /// the size.
    Fallocate {
        /// The size grows (i_disksize changes).
        extends: bool,
    },
}

/// The coarse clock's tick (`ktime_get_coarse_real_ts64`, advanced once per jiffy) at
/// `now`, for `hz` ticks per second: timestamps compare equal within one tick.
pub fn coarse_tick(now: Nanos, hz: u32) -> u64 {
    now / (crate::sim::time::SEC / u64::from(hz.max(1)))
}

#[cfg(test)]
mod tests;
