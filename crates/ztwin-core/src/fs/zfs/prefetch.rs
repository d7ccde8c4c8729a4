//! Prefetch reads: what `dbuf_prefetch_impl()` (module/zfs/dbuf.c, 0.8.6 `dbuf_prefetch`,
//! 2.1 / 2.2 `dbuf_prefetch_impl`) does with each block zfetch asks for.
//!
//! - Nothing is issued for a block whose dbuf exists (cached or being read: "This dbuf
//!   already exists. It is either CACHED, or (we assume) about to be read or filled"), for
//!   a hole, or for a level the file does not have.
//! - Otherwise the closest ancestor whose dbuf is cached gives the block pointer (the
//!   dnode's if none). If that is the block's parent, the block is read at once:
//!   `arc_read(ARC_FLAG_PREFETCH | ARC_FLAG_NOWAIT)` (prefetch_data_* or
//!   prefetch_metadata_* in arcstats), asynchronously. Else the indirect blocks between
//!   are read first, one after the other, as plain (demand) metadata reads
//!   (`dbuf_prefetch_indirect_done`); an indirect block found in the ARC before any device
//!   read of the chain also gets a dbuf, which goes to the dbuf cache.
//! - A read that finds its block already being read waits for that read
//!   (`arc_read` on an `IO_IN_PROGRESS` header adds a callback).
//! - No dbuf is created for the prefetched block itself; until its read completes it stays
//!   in `block_inflight`, so a demand read of it waits for it (and counts as `missed`).
//!
//! Each prefetch is a small state machine of its own (a slot of `Zfs::prefetches`): the
//! layer hands its wake-ups to the driver ([`Zfs::take_wakeups`]), which steps it again
//! ([`Zfs::prefetch_event`]). Each completion (or "not issued") is reported to zfetch
//! (`dmu_zfetch_done`). The zio's CPU (pipeline, interrupt, checksum) runs on the vCPUs
//! when the read completes, with no client waiting for it. With compressed ARC there is no decompression then
//! (`ARC_FLAG_NO_BUF`: the demand read that later takes the buffer decompresses it);
//! without it the read zio decompresses the block before the ARC keeps it.
//!
//! A prefetch's final read goes to its leaf's vdev queue in the async-read class
//! (`zfs_vdev_async_read_max_active` 3 per leaf), the indirect blocks read on the way in
//! the sync-read class (`dbuf_prefetch_impl` reads them at ZIO_PRIORITY_SYNC_READ); one the
//! queue holds wakes its prefetch when issued (see `fs::zfs::vdev_queue`).

use crate::cache::arc::{ArcAccess, BlockInfo, BlockKey, BufType, ReadFlags};
use crate::dev::cpu::Cpus;
use crate::dev::device::Device;
use crate::fs::zfs::layer::{l2_read, settle_dbufs, Wake, Zfs, PENDING};
use crate::fs::zfs::vdev_queue::{Priority, Tag};
use crate::fs::zfs::zfetch::{Pending, Prefetch, StreamId};
use crate::sim::time::Nanos;

/// One prefetch of `dbuf_prefetch_impl()` in progress.
#[derive(Debug, Clone, Copy)]
pub struct PrefetchRead {
    object: u32,
    /// The block prefetched.
    level: u8,
    blkid: u64,
    /// Level of the block being read now (== `level` for the final read).
    cur: u8,
    stream: StreamId,
    /// No device read yet in the chain (`dpa_dnode` still valid): indirect blocks found in
    /// the ARC get a dbuf.
    sync: bool,
    /// The block this prefetch is reading from a device (its `block_inflight` entry), and
    /// the CPU its zio costs when it completes.
    owns: Option<(u64, Nanos)>,
    /// The vdev queue class of the final read: async read for zfetch's prefetches
    /// (`dmu_zfetch_run`), sync read for 2.3's prescient indirects; the indirect blocks
    /// read on the way are sync reads (`dbuf_prefetch_impl`).
    prio: Priority,
}

impl Zfs {
    /// dmu_zfetch_run for a chunk whose demand reads are issued, and the prefetch reads.
    pub(super) fn zfetch_run(
        &mut self,
        pending: Pending,
        missed: bool,
        object: u32,
        now: Nanos,
        devices: &mut [Device],
    ) {
        if let Some(pf) = self.zfetch.run(pending, missed, now) {
            self.issue_prefetch(pf, object, now, devices);
        }
    }

    /// 2.3's prescient indirect prefetch: `dbuf_prefetch()` of L1 blocks `l1` of `object`
    /// from `dmu_zfetch_prepare()`, with no stream (ARC_FLAG_PRESCIENT_PREFETCH is modelled
    /// as ARC_FLAG_PREFETCH: the ARC's simplification 7); counted in `io_issued`.
    pub(super) fn prescient_prefetch(
        &mut self,
        object: u32,
        l1: std::ops::Range<u64>,
        now: Nanos,
        devices: &mut [Device],
    ) {
        let mut issued = 0;
        for b in l1 {
            issued +=
                self.prefetch_block(object, 1, b, StreamId::NONE, Priority::SyncRead, now, devices) as u64;
        }
        self.zfetch.count_issued(issued);
    }

    /// `dbuf_prefetch_impl()` of every block of `pf`, L0 first, then L1.
    fn issue_prefetch(&mut self, pf: Prefetch, object: u32, now: Nanos, devices: &mut [Device]) {
        // Their L2ARC index slots are far apart in memory: fetch them together.
        for b in pf.data.clone() {
            self.arc.prefetch(BlockKey::new(object, 0, b));
        }
        for b in pf.l1.clone() {
            self.arc.prefetch(BlockKey::new(object, 1, b));
        }
        let mut issued = 0;
        for b in pf.data.clone() {
            issued += self.prefetch_block(object, 0, b, pf.stream, Priority::AsyncRead, now, devices) as u64;
        }
        for b in pf.l1.clone() {
            issued += self.prefetch_block(object, 1, b, pf.stream, Priority::AsyncRead, now, devices) as u64;
        }
        self.zfetch.count_issued(issued);
    }

    /// Starts the prefetch of one block (its final read in class `prio`); false if
    /// nothing is issued.
    #[allow(clippy::too_many_arguments)]
    fn prefetch_block(
        &mut self,
        object: u32,
        level: u8,
        blkid: u64,
        stream: StreamId,
        prio: Priority,
        now: Nanos,
        devices: &mut [Device],
    ) -> bool {
        let Zfs { dbufs, layout, zfetch, .. } = self;
        let nlevels = layout.nlevels(object);
        let epbs = layout.geometry(object).fanout().trailing_zeros();
        let target = (level < nlevels).then(|| layout.block_at(object, level, blkid));
        let Some((key, info)) = target.filter(|(k, i)| i.psize != 0 && !dbufs.exists(*k)) else {
            zfetch.done(stream, level, blkid, false);
            return false;
        };
        debug_assert_eq!(key.level(), level);
        // The closest ancestor whose dbuf is cached (exists and is not being read).
        let mut cur = level;
        while cur + 1 < nlevels {
            let parent = BlockKey::new(object, cur + 1, blkid >> (epbs * (cur + 1 - level) as u32));
            let cached = dbufs.exists(parent) && self.block_inflight.get(parent.0).is_none_or(|d| d <= now);
            if cached {
                break;
            }
            cur += 1;
        }
        let op = PrefetchRead { object, level, blkid, cur, stream, sync: true, owns: None, prio };
        let k = match self.free_prefetches.pop() {
            Some(k) => {
                self.prefetches[k as usize] = op;
                k
            }
            None => {
                self.prefetches.push(op);
                (self.prefetches.len() - 1) as u32
            }
        };
        self.prefetch_step(k, (cur == level).then_some((key, info)), now, devices);
        true
    }

    /// Reads prefetch `k`'s current block and goes down the chain while blocks are
    /// available at once; stops at a device read (or a read in progress) or when done.
    /// `first`: the current block and its sizes, if the caller has them.
    fn prefetch_step(
        &mut self,
        k: u32,
        mut first: Option<(BlockKey, BlockInfo)>,
        now: Nanos,
        devices: &mut [Device],
    ) {
        let Zfs { arc, dbufs, cache_devices, layout, pool, data_flags, meta_flags, zfetch, costs, .. } = self;
        let mut op = self.prefetches[k as usize];
        let epbs = layout.geometry(op.object).fanout().trailing_zeros();
        loop {
            let (key, info) = first.take().unwrap_or_else(|| {
                layout.block_at(op.object, op.cur, op.blkid >> (epbs * (op.cur - op.level) as u32))
            });
            let last = op.cur == op.level;
            match self.block_inflight.get(key.0) {
                Some(done) if done > now => {
                    // arc_read on a header with I/O in progress: continue when it completes.
                    let flags = if last {
                        ReadFlags {
                            prefetch: true,
                            ..if info.kind == BufType::Data { *data_flags } else { *meta_flags }
                        }
                    } else {
                        *meta_flags
                    };
                    arc.io_wait(key, info, flags, now);
                    op.sync = false;
                    self.prefetches[k as usize] = op;
                    if done == PENDING {
                        // Its vdev queue holds it: woken when it is issued.
                        self.waiters.push(key.0, Wake::Prefetch(k));
                    } else {
                        self.wakeups.push((done, Wake::Prefetch(k)));
                    }
                    return;
                }
                Some(_) => {}
                None => {
                    let flags = match (last, info.kind) {
                        (true, BufType::Data) => ReadFlags { prefetch: true, ..*data_flags },
                        (true, BufType::Metadata) => ReadFlags { prefetch: true, ..*meta_flags },
                        (false, _) => *meta_flags,
                    };
                    self.counters.prefetch_lookups += 1;
                    // None: an ARC hit; Some(None): a read from the pool; Some(Some(..)): an L2 hit.
                    let source = match arc.access(key, info, flags, now) {
                        ArcAccess::Hit => None,
                        ArcAccess::L2Hit { asize, dev, loc, .. } => {
                            // Invariant: an L2 hit names a device the ARC has, one of `cache_devices`.
                            Some(Some((cache_devices[dev as usize], asize, loc)))
                        }
                        ArcAccess::Miss { .. } => Some(None),
                    };
                    if let Some(source) = source {
                        let prio = if last { op.prio } else { Priority::SyncRead };
                        let tag = Tag::Block(key.0);
                        let read = match source {
                            Some((device, bytes, loc)) => {
                                l2_read(arc, &mut pool.vq, device, loc, bytes, prio, tag, now, devices)
                            }
                            None => pool.read(layout, key, info.psize, prio, tag, now, devices),
                        };
                        let done = match read {
                            Ok(done) => done,
                            Err(q) => {
                                if prio == Priority::AsyncRead {
                                    self.queued_prefetches.insert(key.0, q);
                                }
                                PENDING
                            }
                        };
                        self.block_inflight.insert(key.0, done);
                        // The zio's CPU in the zio taskq threads: no client waits for it.
                        let mut cpu = costs.device_io
                            + costs.zio
                            + (info.psize as f64 * costs.checksum_ns_per_byte) as Nanos;
                        // Without compressed ARC the read zio decompresses; with it, only a
                        // release whose prefetch completion fills a buffer does (arc_read_done
                        // -> arc_buf_alloc_impl, the buffer then freed).
                        if info.psize < info.lsize && (!costs.compressed_arc || costs.prefetch_fills_buf) {
                            cpu += (info.lsize as f64 * costs.decompress_ns_per_byte) as Nanos;
                        }
                        op.owns = Some((key.0, cpu));
                        op.sync = false;
                        self.prefetches[k as usize] = op;
                        if done == PENDING {
                            self.waiters.push(key.0, Wake::Prefetch(k));
                        } else {
                            self.wakeups.push((done, Wake::Prefetch(k)));
                        }
                        return;
                    }
                    if !last && op.sync && !dbufs.exists(key) {
                        // dbuf_prefetch_indirect_done with no I/O: dbuf_hold_level,
                        // dbuf_read, dbuf_rele: the indirect block joins the dbuf cache.
                        let parent = layout.parent_of(key);
                        if parent.is_none_or(|p| dbufs.exists(p)) {
                            let copy = costs.dbuf_copy(&info);
                            let dbuf = dbufs.create(key, parent, info.lsize, !meta_flags.uncacheable, copy);
                            let hdr = arc.dbuf_created(key, true, copy, false, now);
                            dbufs.set_hdr(dbuf, hdr);
                            dbufs.release(key, arc.c(), |x| layout.parent_of(x));
                            settle_dbufs(arc, dbufs, layout);
                        }
                    }
                }
            }
            if last {
                zfetch.done(op.stream, op.level, op.blkid, true);
                self.free_prefetches.push(k);
                return;
            }
            op.cur -= 1;
        }
    }

    /// The read prefetch `k` waited for completed: its zio's CPU runs on `cpus`, and the
    /// chain goes on.
    pub fn prefetch_event(&mut self, k: u32, now: Nanos, cpus: &mut Cpus, devices: &mut [Device]) {
        self.pool.vq.set_async_write_max(self.writes.async_write_max());
        self.prefetch_resume(k, now, cpus, devices);
        self.route_resolved();
    }

    fn prefetch_resume(&mut self, k: u32, now: Nanos, cpus: &mut Cpus, devices: &mut [Device]) {
        let op = &mut self.prefetches[k as usize];
        if let Some((key, cpu)) = op.owns.take() {
            self.block_inflight.remove(key);
            cpus.run(now, cpu);
        }
        let op = *op;
        if op.cur == op.level {
            self.zfetch.done(op.stream, op.level, op.blkid, true);
            self.free_prefetches.push(k);
            return;
        }
        self.prefetches[k as usize].cur -= 1;
        self.prefetch_step(k, None, now, devices);
    }
}
