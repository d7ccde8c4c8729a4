//! XFS and ext4 under InnoDB with O_DIRECT (and, through the page cache, buffered files):
//! extent-mapped files.
//!
//! An InnoDB data file is allocated in large extents, so the file's block map fits in the
//! inode (or a few cached extent blocks): translating an offset costs no device read, and
//! a page read is exactly one device read of the page's size. With
//! innodb_flush_method=O_DIRECT the page cache is bypassed for data files, so nothing
//! between the buffer pool and the device caches data (bcache, below the filesystem,
//! may: `cache::bcache`).
//!
//! As a layer ([`ExtentLayer`], the interface the ZFS layer has too): a read issues its
//! device reads and waits for them; with bcache below, the reads bcache splits it into
//! (cache device for what it holds, backing device for the rest) and, when the backing
//! read completes, the write of the missed data to the cache device
//! (`cached_dev_read_done()` -> `bch_data_insert()`), which competes with reads on the
//! cache device's queue. A write is one O_DIRECT device write (through bcache if present).
//!
//! The filesystem sits on a [`BlockTarget`]: one device, or a Linux md RAID10 array
//! (`dev::md_raid10`), whose mapping sends each read to one member and each write to every
//! copy, and whose flush (an fsync's cache flush) reaches every member. Device offsets are
//! the files' (simplification 3), so a rotational device or member seeks between them.
//!
//! A file opened without O_DIRECT (fio's direct=0, InnoDB's buffered files, the binary
//! log) goes through the Linux page cache, `fs::buffered` (its reads, writes, syncs and
//! flusher take the same device path).
//!
//! Simplifications: 1. the extent map is always in memory (true for a handful of large,
//! preallocated .ibd files); 2. buffered files take the page cache's path (`fs::buffered`),
//! with its own simplifications; 3. the table files lie one
//! after the other on the device, each contiguous (what a fresh filesystem gives files
//! written one at a time); 4. bcache sits on a plain device only (not on an md array);
//! 5. with bcache, the journal's writes go straight to the backing device (bcache would
//! take them: REQ_META and REQ_SYNC writes are writeback writes); its flushes and
//! fsync's go through bcache to both devices (`Bcache::flush`).

use crate::cache::bcache::{Bcache, Target};
use crate::dev::device::{Device, Op};
pub use crate::dev::target::BlockTarget;
use crate::fs::buffered::BufferedIo;
use crate::fs::journal::ext4::{CheckpointStep, Ext4Journal};
use crate::fs::journal::xfs::XfsLog;
use crate::fs::journal::{BlockDev, DeviceCaps, SyncPlan, WriteKind};
use crate::fs::ReadStep;
use crate::sim::time::Nanos;

/// The block mapping of an extent-mapped filesystem.
#[derive(Debug, Clone)]
pub struct ExtentFs {
    /// Filesystem block size, bytes.
    pub block_size: u32,
    /// Size of each table file, bytes.
    pub file_size: u64,
}

impl ExtentFs {
    /// The device range a read of `len` bytes at `offset` covers with O_DIRECT: the
    /// range rounded out to filesystem blocks (a 16 KiB InnoDB page on 4 KiB blocks is
    /// one 16 KiB read). Returns (start, bytes).
    pub fn read_range(&self, offset: u64, len: u32) -> (u64, u32) {
        let bs = self.block_size as u64;
        let start = offset / bs * bs;
        let end = (offset + len as u64).div_ceil(bs) * bs;
        (start, (end - start) as u32)
    }

    /// Bytes the device reads for a read of `len` bytes at `offset`.
    pub fn read_bytes(&self, offset: u64, len: u32) -> u32 {
        self.read_range(offset, len).1
    }

    /// Device offset of byte `offset` of table file `file` (simplification 3).
    pub fn device_offset(&self, file: u32, offset: u64) -> u64 {
        u64::from(file) * self.file_size + offset
    }
}

/// The backing device of bcache: the filesystem's target, a plain device (the run refuses
/// bcache over an array).
pub(crate) fn backing(target: &BlockTarget) -> usize {
    // Invariant: `run::build` builds bcache only over a device target.
    target.device().expect("bcache's backing device is a plain device")
}

/// The device a bcache I/O goes to: the cache device, or the backing one.
pub(crate) fn route(t: Target, backing: usize, cache: usize) -> usize {
    match t {
        Target::Cache => cache,
        Target::Backing => backing,
    }
}

/// XFS or ext4 on its device or array, with bcache between them if present.
pub struct ExtentLayer {
    /// The filesystem's block mapping.
    pub fs: ExtentFs,
    /// What the filesystem is made on (with bcache: the backing device, a plain device).
    pub target: BlockTarget,
    /// bcache and its cache device (an index of the run's devices), if any.
    pub bcache: Option<(Box<Bcache>, usize)>,
    /// CPU of issuing a device I/O and its interrupt, simulated ns.
    pub device_io: Nanos,
    /// The filesystem's journal, when the run syncs files (fsync, O_SYNC, a database).
    pub journal: Option<Box<Journal>>,
    /// The Linux page cache, when the run opens a file without O_DIRECT
    /// ([`crate::fs::buffered`]).
    pub page_cache: Option<Box<BufferedIo>>,
}

/// The journal of an extent filesystem: ext4's jbd2 or XFS's log (`fs::journal`).
/// One per run, boxed in the layer: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Journal {
    /// ext4 (data=ordered).
    Ext4(Ext4Journal),
    /// XFS.
    Xfs(XfsLog),
}

/// A journal's counters: ext4's jbd2 transactions (XFS: CIL checkpoints) committed, those
/// the timer (XFS: the log worker or the CIL's size) started, bytes written to the
/// journal, fsync/fdatasync calls, those that waited for a commit (XFS: forced the log)
/// and those that sent a cache flush themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalCounters {
    /// Commits.
    pub commits: u64,
    /// Commits started without an fsync.
    pub timer_commits: u64,
    /// Bytes written to the journal.
    pub log_bytes: u64,
    /// fsync and fdatasync calls.
    pub syncs: u64,
    /// Syncs that waited for a commit.
    pub sync_waits: u64,
    /// Syncs that sent a cache flush themselves.
    pub sync_flushes: u64,
}

/// What a writer must do after its write's metadata changes were logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Noted {
    /// Wait until then (ext4: a block it changes is being written to the journal).
    pub wait_until: Option<Nanos>,
    /// ext4's journal is short of space: run [`ExtentLayer::checkpoint_step`] until done,
    /// then note the write again.
    pub needs_checkpoint: bool,
}

impl Journal {
    /// The device capabilities its plans are lowered for.
    pub fn caps(&self) -> DeviceCaps {
        match self {
            Journal::Ext4(j) => j.caps(),
            Journal::Xfs(l) => l.caps(),
        }
    }

    /// Its counters, in the terms both journals share.
    pub fn counters(&self) -> JournalCounters {
        match self {
            Journal::Ext4(j) => {
                let s = j.stats();
                JournalCounters {
                    commits: s.commits,
                    timer_commits: s.timer_commits,
                    log_bytes: s.journal_blocks * u64::from(j.params().block_size),
                    syncs: s.syncs,
                    sync_waits: s.sync_waits,
                    sync_flushes: s.sync_flushes,
                }
            }
            Journal::Xfs(l) => {
                let s = l.stats();
                JournalCounters {
                    commits: s.checkpoints,
                    timer_commits: s.background_checkpoints,
                    log_bytes: s.log_bytes,
                    syncs: s.syncs,
                    sync_waits: s.log_forces,
                    sync_flushes: s.sync_flushes,
                }
            }
        }
    }

    /// When its thread next has something to do unasked (a commit timer, writeback).
    pub fn due(&self) -> Option<Nanos> {
        match self {
            Journal::Ext4(j) => j.due(),
            Journal::Xfs(l) => l.due(),
        }
    }

    /// Every commit (ext4: transaction; XFS: checkpoint sequence) up to this one is done.
    pub fn committed_through(&self) -> u64 {
        match self {
            Journal::Ext4(j) => j.committed_through(),
            Journal::Xfs(l) => l.completed_through(),
        }
    }
}

/// One read request: bytes [offset, offset + len) of file `file`.
#[derive(Debug, Clone, Copy)]
pub struct ExtentRead {
    pub(crate) file: u32,
    pub(crate) offset: u64,
    pub(crate) len: u32,
    /// The device reads are issued; the next step completes the read.
    pub(crate) issued: bool,
    /// bcache: the device range of a read miss to write to the cache when the read
    /// completes (`insert_len` 0 = none).
    insert_offset: u64,
    insert_len: u32,
    /// A buffered read: the open file's readahead state (`fs::buffered`); [`NO_RA`] for an
    /// O_DIRECT read.
    pub(crate) ra: u32,
    /// Buffered: bytes of the request the page cache has covered so far.
    pub(crate) pos: u32,
    /// Buffered: the data is there at this time.
    pub(crate) until: Nanos,
}

/// [`ExtentRead::ra`] of an O_DIRECT read.
pub const NO_RA: u32 = u32::MAX;

impl ExtentRead {
    /// No read (a placeholder for a request that has none yet).
    pub const IDLE: ExtentRead = ExtentRead {
        file: 0,
        offset: 0,
        len: 0,
        issued: false,
        insert_offset: 0,
        insert_len: 0,
        ra: NO_RA,
        pos: 0,
        until: 0,
    };
}

impl ExtentLayer {
    /// A read of bytes [offset, offset + len) of file `file`.
    pub fn start_read(&self, file: u32, offset: u64, len: u32) -> ExtentRead {
        ExtentRead { file, offset, len, ..ExtentRead::IDLE }
    }

    /// A buffered read of bytes [offset, offset + len) of file `file` through open file
    /// `ra` (see [`crate::fs::buffered`]).
    pub fn start_buffered_read(&self, file: u32, offset: u64, len: u32, ra: u32) -> ExtentRead {
        ExtentRead { file, offset, len, ra, ..ExtentRead::IDLE }
    }

    /// Steps read `r` of bcache task `task` at `now`: issues its device reads and waits
    /// for them, then (bcache) writes a miss's data to the cache device; the CPU of its
    /// I/Os is added to `cpu`.
    pub fn read(
        &mut self,
        task: usize,
        r: &mut ExtentRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        if r.ra != NO_RA {
            return self.buffered_read(task, r, now, cpu, devices);
        }
        let ExtentLayer { fs, target, bcache, device_io, .. } = self;
        if !r.issued {
            r.issued = true;
            let (start, bytes) = fs.read_range(r.offset, r.len);
            let done = match bcache {
                None => {
                    let (done, ios) =
                        target.submit(devices, now, Op::Read, fs.device_offset(r.file, start), bytes);
                    *cpu += *device_io * u64::from(ios);
                    done
                }
                Some((b, cache)) => {
                    let (backing, cache) = (backing(target), *cache);
                    let res = b.read(task, fs.device_offset(r.file, start), bytes, now, |t, op, n| {
                        devices[route(t, backing, cache)].submit(now, op, n)
                    });
                    *cpu += *device_io * u64::from(res.ios);
                    (r.insert_offset, r.insert_len) = res.insert.unwrap_or((0, 0));
                    res.done
                }
            };
            return ReadStep::WaitUntil(done);
        }
        if r.insert_len != 0 {
            // Invariant: only the bcache path of `read` sets insert_len.
            let Some((b, cache)) = bcache else { unreachable!("an insert only with bcache") };
            let (backing, cache) = (backing(target), *cache);
            let res = b.insert(task, r.insert_offset, r.insert_len, now, |t, op, n| {
                devices[route(t, backing, cache)].submit(now, op, n)
            });
            *cpu += *device_io * u64::from(res.ios);
            r.insert_len = 0;
        }
        ReadStep::Done
    }

    /// An O_DIRECT write of bytes [offset, offset + len) of file `file` by bcache task
    /// `task`: returns when it completes; the CPU of its I/Os is added to `cpu`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        task: usize,
        file: u32,
        offset: u64,
        len: u32,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> Nanos {
        let ExtentLayer { fs, target, bcache, device_io, .. } = self;
        let (start, bytes) = fs.read_range(offset, len);
        match bcache {
            None => {
                let (done, ios) =
                    target.submit(devices, now, Op::Write, fs.device_offset(file, start), bytes);
                *cpu += *device_io * u64::from(ios);
                done
            }
            Some((b, cache)) => {
                let (backing, cache) = (backing(target), *cache);
                // An O_DIRECT write is REQ_SYNC (the direct I/O code's REQ_SYNC | REQ_IDLE).
                let res = b.write(task, fs.device_offset(file, start), bytes, true, now, |t, op, n| {
                    devices[route(t, backing, cache)].submit(now, op, n)
                });
                *cpu += *device_io * u64::from(res.ios);
                res.done
            }
        }
    }
}

impl ExtentLayer {
    /// A write of `kind` to file `file` at `now` (after its data I/O was issued): the
    /// journal logs its metadata changes (the timestamps, once per coarse tick; an
    /// extension's allocation).
    pub fn note_write(&mut self, file: u32, kind: WriteKind, now: Nanos) -> Noted {
        match self.journal.as_deref_mut() {
            None => Noted::default(),
            Some(Journal::Ext4(j)) => {
                let e = j.note_write(file, kind, now);
                Noted { wait_until: e.wait_until, needs_checkpoint: e.needs_checkpoint }
            }
            Some(Journal::Xfs(l)) => {
                l.note_write(file, kind, now);
                Noted::default()
            }
        }
    }

    /// `fsync` (`datasync`: `fdatasync`) of file `file` at `now`, its data written: what it
    /// waits for and issues (without a journal: a cache flush).
    pub fn sync_plan(&mut self, file: u32, datasync: bool, now: Nanos) -> SyncPlan {
        match self.journal.as_deref_mut() {
            None => {
                let mut p = SyncPlan::default();
                p.then.push(crate::fs::journal::IoOp::Flush, false);
                p
            }
            Some(Journal::Ext4(j)) => j.fsync(file, datasync, now),
            Some(Journal::Xfs(l)) => l.fsync(file, datasync, now),
        }
    }

    /// The journal's thread (kjournald2, the flusher's metadata writeback; XFS's CIL push
    /// and log worker) at `now`: returns when it next has something to do and the commit
    /// its waiters may now have.
    pub fn journal_step(&mut self, now: Nanos, devices: &mut [Device]) -> (Option<Nanos>, u64) {
        let ExtentLayer { target, journal, bcache, .. } = self;
        let Some(j) = journal.as_deref_mut() else { return (None, 0) };
        let mut io = TargetIo { target, devices, bcache };
        match j {
            Journal::Ext4(j) => {
                let step = j.commit_step(now, &mut io);
                let mut wake = step.wake_at;
                if j.writeback_due().is_some_and(|t| t <= now) {
                    j.writeback_step(now, &mut io);
                }
                if let Some(t) = j.writeback_due() {
                    wake = Some(wake.map_or(t, |w| w.min(t)));
                }
                (wake, step.committed_through)
            }
            Journal::Xfs(l) => {
                let step = l.log_step(now, &mut io);
                (step.wake_at, step.completed_through)
            }
        }
    }

    /// ext4's forced checkpoint for a writer short of journal space (see [`Noted`]).
    pub fn checkpoint_step(&mut self, now: Nanos, devices: &mut [Device]) -> CheckpointStep {
        let ExtentLayer { target, journal, bcache, .. } = self;
        match journal.as_deref_mut() {
            Some(Journal::Ext4(j)) => j.checkpoint_step(now, &mut TargetIo { target, devices, bcache }),
            _ => CheckpointStep::Done,
        }
    }

    /// Steps plan run `run` (a sync's cache flush) on the filesystem's target.
    pub fn plan_step(
        &mut self,
        run: &mut crate::fs::journal::PlanRun,
        now: Nanos,
        devices: &mut [Device],
    ) -> crate::fs::journal::IoStep {
        run.step(now, &mut TargetIo { target: &mut self.target, devices, bcache: &mut self.bcache })
    }

    /// The cache flush an fsync of an O_DIRECT-written file sends (`blkdev_issue_flush`) at
    /// `now`: to the device, or to every member of an array, or through bcache to its cache
    /// and backing devices; returns its completion (its CPU is not counted, as for a
    /// device's flush before arrays existed).
    pub fn flush(&mut self, now: Nanos, devices: &mut [Device]) -> Nanos {
        TargetIo { target: &mut self.target, devices, bcache: &mut self.bcache }.flush(now)
    }

    /// When bcache's writeback thread next has something to do (None: no bcache, or
    /// asleep until a writeback write).
    pub fn writeback_due(&self) -> Option<Nanos> {
        self.bcache.as_ref().and_then(|(b, _)| b.writeback_due())
    }

    /// bcache's writeback thread at `now` (`cache::bcache::writeback`): reads dirty data
    /// from the cache device, writes it to the backing device at its offsets; returns when
    /// it is next due.
    pub fn writeback_step(&mut self, now: Nanos, devices: &mut [Device]) -> Option<Nanos> {
        let ExtentLayer { target, bcache, .. } = self;
        let (b, cache) = bcache.as_mut()?;
        let (backing, cache) = (backing(target), *cache);
        let step = b.writeback_step(now, |t, op, offset, n| match t {
            Target::Cache => devices[cache].submit(now, op, n),
            Target::Backing => devices[backing].submit_at(now, op, offset, n),
        });
        step.next
    }
}

/// A block target and the run's devices as one block device a journal plan runs on
/// (`fs::journal::PlanRun`): writes at device offsets and cache flushes. With bcache the
/// journal's writes go to the backing device as before (simplification 5 of the module
/// doc) and its flushes through bcache to both devices.
pub struct TargetIo<'a> {
    /// The target.
    pub target: &'a mut BlockTarget,
    /// The run's devices.
    pub devices: &'a mut [Device],
    /// bcache and its cache device, if any.
    pub bcache: &'a mut Option<(Box<Bcache>, usize)>,
}

impl BlockDev for TargetIo<'_> {
    fn write(&mut self, now: Nanos, offset: u64, bytes: u32) -> Nanos {
        self.target.submit(self.devices, now, Op::Write, offset, bytes).0
    }

    fn flush(&mut self, now: Nanos) -> Nanos {
        match self.bcache {
            None => self.target.flush(self.devices, now).0,
            Some((b, cache)) => {
                let (backing, cache) = (backing(self.target), *cache);
                let devices = &mut *self.devices;
                b.flush(|t| devices[route(t, backing, cache)].flush(now))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_pages_read_exactly_their_size() {
        let fs = ExtentFs { block_size: 4096, file_size: 1 << 30 };
        assert_eq!(fs.read_bytes(16384 * 7, 16384), 16384);
        assert_eq!(fs.read_bytes(100, 16384), 20480);
        assert_eq!(fs.read_range(100, 16384), (0, 20480));
        assert_eq!(fs.device_offset(3, 4096), 3 * (1 << 30) + 4096);
    }
}
