//! The vdev queue: the per-leaf I/O scheduler every pool I/O passes between the zio
//! pipeline and the device (`vdev_queue_io` / `vdev_queue_io_done`).
//!
//! Sources: module/zfs/vdev_queue.c at zfs-0.8.6, zfs-2.1.16, zfs-2.2.11 and zfs-2.3.2
//! (2.3.2's is 2.2.11's but for its license line), include/sys/zio.h (`zio_priority_t`,
//! `ZIO_FLAG_AGG_INHERIT`), module/zfs/vdev_mirror.c (`vdev_queue_length` in
//! `vdev_mirror_load`). Which I/O takes which class: dbuf.c (`dbuf_read_impl`: sync read;
//! `dbuf_issue_final_prefetch`: the prefetch's priority, async read from `dmu_zfetch_run`;
//! `dbuf_prefetch_indirect_done` and `dbuf_prefetch_impl`'s indirect chain: sync read;
//! `dbuf_write`: async write), dmu_zfetch.c (2.3's prescient indirects: sync read),
//! zil.c (`zil_lwb_write_issue`: sync write, async write past `zil_slog_bulk`), dmu.c
//! (`dmu_sync`: sync write), dmu_direct.c (Direct I/O: sync read, sync write),
//! vdev_label.c (`vdev_uberblock_sync`: sync write, `ZIO_FLAG_PHYSICAL`), arc.c (the cache
//! device's I/O passes its own leaf's queue as any leaf's, `zio_vdev_io_start`:
//! `l2arc_read` at the priority of the `arc_read` it serves, `l2arc_write_buffers` and
//! `l2arc_log_blk_commit` async write). A leaf is non-rotating as its kernel reports it
//! (`vdev_disk_open`: `vdev_nonrot = blk_queue_nonrot`; a device's `queue_rotational`).
//!
//! The mechanism, as the source has it:
//! - Five interactive classes in priority order, sync read, sync write, async read, async
//!   write, and the non-interactive scrub, removal, initializing, trim and rebuild (2.1+),
//!   each with a minimum and a maximum of I/Os issued to the leaf at once
//!   (`zfs_vdev_*_min_active` / `_max_active`: sync read 10/10, sync write 10/10, async
//!   read 1/3, async write 2/10, scrub 1/2 (0.8) or 1/3, removal 1/2, initializing 1/1,
//!   trim 1/2, rebuild 1/3) and `zfs_vdev_max_active` (1000) for the leaf. The async write
//!   maximum follows dirty data (`vdev_queue_max_async_writes`: the minimum below
//!   `zfs_vdev_async_write_active_min_dirty_percent` (30) % of `zfs_dirty_data_max`, the
//!   maximum above `..._max_dirty_percent` (60) %, linear between; `fs::zfs::txg`).
//! - An I/O is added to its class's queue and to its type's offset-sorted tree
//!   (`vdev_queue_io_add`), then one I/O is issued if any may be (`vdev_queue_io_to_issue`,
//!   once per I/O queued, and as often as possible when one completes): the class is the
//!   first under its minimum, searching from the class after the last one issued
//!   (round-robin, 2.1+: 6f5aac3ca0; 0.8 searches in priority order), else the first in
//!   priority order under its maximum (`vdev_queue_class_to_issue`); none past
//!   `zfs_vdev_max_active`. Sync read, sync write and trim queues are FIFO; the others
//!   issue the I/O at or after the last issued offset (`vq_last_offset`) in offset order,
//!   else their lowest offset; 2.2.0 (8469b5aac0) sorts them first by 2^29 ns (0.54 s) of
//!   queueing time and looks for the next offset only among the oldest such bucket, so
//!   none waits for ever.
//! - The issued I/O is aggregated (`vdev_queue_aggregate`) with queued I/Os of the same
//!   type next to it in offset order, whatever their class, with the same
//!   `ZIO_FLAG_AGG_INHERIT` flags (here: physical or not): backwards and forwards while
//!   the span stays within `zfs_vdev_aggregation_limit` (1 MiB;
//!   `zfs_vdev_aggregation_limit_non_rotating`, 128 KiB, on a non-rotating leaf; at most
//!   SPA_MAXBLOCKSIZE) and the gap to the next is at most `zfs_vdev_read_gap_limit`
//!   (32 KiB) for reads, none for writes. Optional I/Os (raidz's skip sectors) may join but
//!   not begin or end a span, except that a write span takes trailing optional I/Os up to a
//!   mandatory one within `zfs_vdev_write_gap_limit` (4 KiB) of the span's last mandatory
//!   one, which then may start the next span; an optional I/O issued alone is discarded.
//!   The aggregate is one device I/O over the span (a read's gaps read too), counted once
//!   in the issued I/O's class; each I/O in it completes with it.
//! - `vdev_queue_length` (the mirror's load) counts the I/Os issued to the leaf.
//!
//! Simplifications: 1. every I/O of a class reaches the queue when its caller issues it
//! (the zio pipeline before `vdev_queue_io` takes no time); a txg's writes reach it
//! together at the sync's start, in offset order; 2. the non-interactive classes keep
//! their minima and maxima (no `vq_nia_credit`: the model issues none of them);
//! 3. `spa_has_pending_synctask` (async writes at their maximum while a sync task waits)
//! is not modelled; 4. a persistent L2ARC's rebuild reads at import do not pass the cache
//! device's queue (nothing else is queued there then); 5. the async write maximum is
//! taken from dirty data when the layer is entered (a read, a write step, an event), not
//! at each issue; 6. a pool of one
//! non-rotating device has no positions (`pool`): its I/Os never aggregate.
//!
//! Hot path: with nothing queued on a leaf and room in the class, an I/O is issued at
//! once without touching the queues (what the source does then). I/Os live in a slab
//! reused through a free list; the queues and trees are vectors kept sorted, which reach
//! their high-water marks and then allocate nothing.

use std::collections::VecDeque;

use crate::config::{PoolTunables, TxgTunables, ZfsFeatures};
use crate::dev::device::{Device, Op};
use crate::sim::time::Nanos;

/// `ZIO_PRIORITY_NUM_QUEUEABLE` (2.1+; 0.8 has no rebuild class).
pub const NUM_CLASSES: usize = 9;

/// `SPA_MAXBLOCKSIZE`: no aggregate spans more.
const SPA_MAXBLOCKSIZE: u64 = 16 << 20;

/// `VDQ_T_SHIFT` (2.2+): queueing time buckets of 2^29 ns for the offset-ordered classes.
const VDQ_T_SHIFT: u32 = 29;

/// `zio_priority_t`: the queue's classes, in priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Priority {
    /// ZIO_PRIORITY_SYNC_READ: demand reads, indirect blocks of prefetch chains, Direct I/O reads.
    SyncRead = 0,
    /// ZIO_PRIORITY_SYNC_WRITE: log blocks, dmu_sync, Direct I/O writes, uberblocks.
    SyncWrite = 1,
    /// ZIO_PRIORITY_ASYNC_READ: prefetch reads.
    AsyncRead = 2,
    /// ZIO_PRIORITY_ASYNC_WRITE: the txg sync's writes, log blocks past zil_slog_bulk.
    AsyncWrite = 3,
    /// ZIO_PRIORITY_SCRUB.
    Scrub = 4,
    /// ZIO_PRIORITY_REMOVAL.
    Removal = 5,
    /// ZIO_PRIORITY_INITIALIZING.
    Initializing = 6,
    /// ZIO_PRIORITY_TRIM.
    Trim = 7,
    /// ZIO_PRIORITY_REBUILD (2.1+).
    Rebuild = 8,
}

impl Priority {
    const ALL: [Priority; NUM_CLASSES] = [
        Priority::SyncRead,
        Priority::SyncWrite,
        Priority::AsyncRead,
        Priority::AsyncWrite,
        Priority::Scrub,
        Priority::Removal,
        Priority::Initializing,
        Priority::Trim,
        Priority::Rebuild,
    ];

    /// `vdev_queue_class_fifo`: dispatched in arrival order.
    fn fifo(self) -> bool {
        matches!(self, Priority::SyncRead | Priority::SyncWrite | Priority::Trim)
    }
}

/// Who waits for an I/O (its completion goes back to them: [`VdevQueue::take_resolved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// Nobody.
    None,
    /// The read of block `key` (`BlockKey.0`): readers and prefetches wait on it.
    Block(u64),
    /// A Direct I/O read or write of client slot `n`.
    Direct(u32),
    /// A write of log block `id` (or of one of its dmu_syncs).
    Lwb(u64),
    /// A write of the syncing txg that gives back these dirty bytes when done, and its size.
    Txg(u64, u32),
    /// An uberblock write of the syncing txg.
    Uberblock,
    /// A write of L2ARC feed thread `k` to its cache device (`l2arc_write_buffers`,
    /// which waits for all of its pass's writes).
    L2Feed(u8),
}

/// One I/O for a leaf.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// The leaf device (index of the run's devices).
    pub leaf: usize,
    /// Byte offset on the leaf.
    pub offset: u64,
    /// Bytes.
    pub size: u32,
    /// Read or write.
    pub op: Op,
    /// Its class.
    pub prio: Priority,
    /// Who waits for it.
    pub tag: Tag,
    /// `ZIO_FLAG_PHYSICAL` (label and uberblock I/O): aggregates only with its kind.
    pub physical: bool,
    /// `ZIO_FLAG_OPTIONAL` (with NODATA; raidz skip sectors): may fill a write span.
    pub optional: bool,
}

impl Request {
    /// A plain I/O (not physical, not optional).
    pub fn new(leaf: usize, offset: u64, size: u32, op: Op, prio: Priority, tag: Tag) -> Request {
        Request { leaf, offset, size, op, prio, tag, physical: false, optional: false }
    }
}

/// An I/O a vdev queue holds: its leaf and slab id (for [`VdevQueue::change_priority`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Queued {
    /// The leaf.
    pub leaf: u32,
    id: u32,
}

/// The queue's parameters, as the release and the tunables set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VdevQueueParams {
    /// zfs_vdev_max_active: 1000.
    pub max_active: u32,
    /// zfs_vdev_*_min_active, by class.
    pub min_active: [u32; NUM_CLASSES],
    /// zfs_vdev_*_max_active, by class (the async write class's is its ceiling:
    /// `zfs_vdev_async_write_max_active`; its maximum in force follows dirty data).
    pub max_active_class: [u32; NUM_CLASSES],
    /// zfs_vdev_aggregation_limit: 1 MiB.
    pub aggregation_limit: u32,
    /// zfs_vdev_aggregation_limit_non_rotating: 128 KiB (SPA_OLD_MAXBLOCKSIZE).
    pub aggregation_limit_non_rotating: u32,
    /// zfs_vdev_read_gap_limit: 32 KiB.
    pub read_gap_limit: u32,
    /// zfs_vdev_write_gap_limit: 4 KiB.
    pub write_gap_limit: u32,
    /// The search for a class under its minimum starts after the last class issued
    /// (2.1+, 6f5aac3ca0); else in priority order (0.8).
    pub round_robin: bool,
    /// Offset-ordered classes are sorted by 0.54 s of queueing time first (2.2+, 8469b5aac0).
    pub lba_deadline: bool,
}

impl VdevQueueParams {
    /// The parameters of `features`' release under the pool's and the write path's
    /// tunables (`zfs_vdev_sync_read_max_active` in `[filesystem.pool]`, the async write
    /// class and the aggregation limits in `[filesystem.txg]`, zero = the default there).
    pub fn new(features: &ZfsFeatures, pool: &PoolTunables, txg: &TxgTunables) -> VdevQueueParams {
        let or = |v: u32, d: u32| if v == 0 { d } else { v };
        let q = features.vdev_queue;
        // sync read, sync write, async read, async write, scrub, removal, initializing,
        // trim, rebuild.
        let min_active = [10, 10, 1, or(txg.zfs_vdev_async_write_min_active, 2), 1, 1, 1, 1, 1];
        let max_active_class = [
            pool.zfs_vdev_sync_read_max_active,
            10,
            3,
            or(txg.zfs_vdev_async_write_max_active, 10).max(1),
            q.scrub_max_active,
            2,
            1,
            2,
            3,
        ];
        VdevQueueParams {
            max_active: 1000,
            min_active,
            max_active_class,
            aggregation_limit: or(txg.zfs_vdev_aggregation_limit, 1 << 20),
            aggregation_limit_non_rotating: or(txg.zfs_vdev_aggregation_limit_non_rotating, 128 << 10),
            read_gap_limit: 32 << 10,
            write_gap_limit: 4 << 10,
            round_robin: q.round_robin,
            lba_deadline: q.lba_deadline,
        }
    }
}

/// A queued I/O.
#[derive(Debug, Clone, Copy)]
struct Io {
    offset: u64,
    size: u32,
    op: Op,
    prio: Priority,
    physical: bool,
    optional: bool,
    /// io_timestamp: when it was queued.
    ts: Nanos,
    /// Order of arrival (the source's pointer tie-break).
    seq: u64,
    tag: Tag,
    /// In the queues (`ZIO_QS_QUEUED`); false once issued (the slot may be reused).
    queued: bool,
}

impl Io {
    fn end(&self) -> u64 {
        self.offset + u64::from(self.size)
    }
}

/// One leaf's queue (`vdev_queue_t`).
#[derive(Debug, Default)]
struct Leaf {
    /// vq_cactive, vq_active.
    active: [u32; NUM_CLASSES],
    total: u32,
    /// vq_last_prio, vq_last_offset.
    last_prio: usize,
    last_offset: u64,
    non_rotating: bool,
    /// Queued I/Os (slab ids) per class: FIFO classes in arrival order, the others sorted
    /// by their tree's key.
    classes: [VecDeque<u32>; NUM_CLASSES],
    /// vq_read_offset_tree, vq_write_offset_tree: queued I/Os by (offset, seq) (double
    /// ended: a sequential stream leaves from the front as it joins at the back).
    reads: VecDeque<u32>,
    writes: VecDeque<u32>,
    /// Issued I/Os: completion time and class.
    inflight: Vec<(Nanos, u8)>,
    queued: u32,
}

impl Leaf {
    /// Completions up to `now` leave the active counts.
    fn release(&mut self, now: Nanos) {
        let (active, total) = (&mut self.active, &mut self.total);
        self.inflight.retain(|&(done, p)| {
            if done <= now {
                active[p as usize] -= 1;
                *total -= 1;
                false
            } else {
                true
            }
        });
    }
}

/// The vdev queues of a pool's leaves.
#[derive(Debug)]
pub struct VdevQueue {
    p: VdevQueueParams,
    /// Per device of the run (only the pool's leaves are used).
    leaves: Vec<Leaf>,
    slab: Vec<Io>,
    free: Vec<u32>,
    seq: u64,
    /// The async write class's maximum in force (`vdev_queue_max_async_writes`).
    async_write_max: u32,
    /// I/Os issued since the last [`VdevQueue::take_resolved`] other than the one a
    /// [`VdevQueue::submit`] returned: their tags and completions.
    resolved: Vec<(Tag, Nanos)>,
    /// Leaves with I/Os queued.
    backlog: u32,
    /// Counters: device I/Os issued, I/Os that joined another's aggregate.
    pub issued: u64,
    /// (see `issued`)
    pub aggregated: u64,
}

impl VdevQueue {
    /// Queues for `devices` leaves (`non_rotating[i]`: leaf `i` is `vdev_nonrot`).
    pub fn new(p: VdevQueueParams, non_rotating: &[bool]) -> VdevQueue {
        let leaves = non_rotating.iter().map(|&n| Leaf { non_rotating: n, ..Leaf::default() }).collect();
        VdevQueue {
            p,
            leaves,
            slab: Vec::with_capacity(64),
            free: Vec::with_capacity(64),
            seq: 0,
            async_write_max: p.max_active_class[Priority::AsyncWrite as usize],
            resolved: Vec::with_capacity(64),
            backlog: 0,
            issued: 0,
            aggregated: 0,
        }
    }

    /// The parameters in force.
    pub fn params(&self) -> &VdevQueueParams {
        &self.p
    }

    /// Sets the async write class's maximum (`vdev_queue_max_async_writes` at the pool's
    /// dirty data), at least 1.
    pub fn set_async_write_max(&mut self, n: u32) {
        self.async_write_max = n.max(1);
    }

    /// Whether an I/O of class `p` submitted to `leaf` at `now` would be issued at once,
    /// alone (nothing queued there, room in the class and the leaf).
    pub fn issues_at_once(&mut self, leaf: usize, p: Priority, now: Nanos) -> bool {
        let (min, max) = (self.min_of(p as usize), self.max_of(p as usize));
        let max_active = self.p.max_active;
        let l = &mut self.leaves[leaf];
        l.release(now);
        l.queued == 0 && l.total < max_active && l.active[p as usize] < min.max(max)
    }

    /// `vdev_queue_length`: I/Os issued to `leaf` and not completed at `now`.
    pub fn length(&mut self, leaf: usize, now: Nanos) -> u32 {
        let l = &mut self.leaves[leaf];
        l.release(now);
        l.total
    }

    /// I/Os of class `p` issued to `leaf` and not known to be complete.
    pub fn active(&self, leaf: usize, p: Priority) -> u32 {
        self.leaves[leaf].active[p as usize]
    }

    /// I/Os issued to `leaf` and not known to be complete.
    pub fn total_active(&self, leaf: usize) -> u32 {
        self.leaves[leaf].total
    }

    /// I/Os queued on `leaf`.
    pub fn queued(&self, leaf: usize) -> u32 {
        self.leaves[leaf].queued
    }

    /// Whether any leaf has I/Os queued.
    pub fn has_backlog(&self) -> bool {
        self.backlog > 0
    }

    fn min_of(&self, p: usize) -> u32 {
        self.p.min_active[p]
    }

    fn max_of(&self, p: usize) -> u32 {
        if p == Priority::AsyncWrite as usize {
            self.async_write_max
        } else {
            self.p.max_active_class[p]
        }
    }

    /// `vdev_queue_io`: `req` is queued on its leaf at `now` and one I/O is issued if any
    /// may be. Returns the completion of `req` if it was issued now (alone or in an
    /// aggregate); else it completes later, reported by [`VdevQueue::take_resolved`] with
    /// its tag. Other queued I/Os issued with it are reported there too.
    pub fn submit(&mut self, req: Request, now: Nanos, devices: &mut [Device]) -> Option<Nanos> {
        self.submit_tracked(req, now, devices).ok()
    }

    /// [`VdevQueue::submit`], telling where the queue holds `req` if it does.
    pub fn submit_tracked(
        &mut self,
        req: Request,
        now: Nanos,
        devices: &mut [Device],
    ) -> Result<Nanos, Queued> {
        let p = req.prio as usize;
        let (min, max) = (self.min_of(p), self.max_of(p));
        let max_active = self.p.max_active;
        let leaf = &mut self.leaves[req.leaf];
        leaf.release(now);
        if leaf.queued == 0 && !req.optional && leaf.total < max_active && leaf.active[p] < min.max(max) {
            // Nothing else queued on the leaf: class_to_issue picks this class and its
            // queue holds only this I/O, which nothing can aggregate with.
            if self.p.round_robin {
                leaf.last_prio = p;
            }
            let done = devices[req.leaf].submit_at(now, req.op, req.offset, req.size);
            leaf.active[p] += 1;
            leaf.total += 1;
            leaf.inflight.push((done, p as u8));
            leaf.last_offset = req.offset + u64::from(req.size);
            self.issued += 1;
            return Ok(done);
        }
        let id = self.add(req, now);
        let mut mine = None;
        self.io_to_issue(req.leaf, now, devices, Some((id, &mut mine)));
        mine.ok_or(Queued { leaf: req.leaf as u32, id })
    }

    /// `vdev_queue_change_io_priority`: the I/O the queue holds at `q` for `tag` moves to
    /// class `prio` (`arc_read`: a demand read that finds a prefetch's read in progress
    /// upgrades it to sync read, `zio_change_priority`). Nothing is issued until the
    /// leaf's next submission or completion; an I/O already issued keeps its class.
    pub fn change_priority(&mut self, q: Queued, tag: Tag, prio: Priority) {
        let io = match self.slab.get(q.id as usize) {
            Some(io) if io.queued && io.tag == tag => *io,
            _ => return,
        };
        let leaf = q.leaf as usize;
        self.class_remove(leaf, q.id, &io);
        self.slab[q.id as usize].prio = prio;
        let io = self.slab[q.id as usize];
        self.class_add(leaf, q.id, &io);
    }

    /// `vdev_queue_io_done` for every leaf with I/Os queued: completions up to `now`
    /// leave, and as many queued I/Os as may be are issued (their completions:
    /// [`VdevQueue::take_resolved`]).
    pub fn advance(&mut self, now: Nanos, devices: &mut [Device]) {
        if self.backlog == 0 {
            return;
        }
        for leaf in 0..self.leaves.len() {
            if self.leaves[leaf].queued == 0 {
                continue;
            }
            self.leaves[leaf].release(now);
            while self.leaves[leaf].queued > 0 && self.io_to_issue(leaf, now, devices, None) {}
        }
    }

    /// When a queued I/O may next be issued: the first completion on a leaf with a
    /// backlog (None: nothing queued).
    pub fn next_at(&self) -> Option<Nanos> {
        if self.backlog == 0 {
            return None;
        }
        self.leaves.iter().filter(|l| l.queued > 0).filter_map(|l| l.inflight.iter().map(|x| x.0).min()).min()
    }

    /// The I/Os issued since the last call other than those [`VdevQueue::submit`]
    /// returned, with their tags and completions.
    pub fn take_resolved(&mut self) -> std::vec::Drain<'_, (Tag, Nanos)> {
        self.resolved.drain(..)
    }

    /// Whether any I/O was issued without its submitter learning of it yet.
    pub fn has_resolved(&self) -> bool {
        !self.resolved.is_empty()
    }

    /// Forgets every queued I/O (the run abandons what never completes).
    pub fn abandon(&mut self) {
        for l in &mut self.leaves {
            for c in &mut l.classes {
                c.clear();
            }
            l.reads.clear();
            l.writes.clear();
            l.queued = 0;
        }
        self.slab.clear();
        self.free.clear();
        self.resolved.clear();
        self.backlog = 0;
    }

    // ---- queueing ----------------------------------------------------------------------

    /// The key an offset-ordered class sorts by (`vdev_queue_to_compare`).
    fn class_key(&self, io: &Io) -> (u64, u64, u64) {
        let bucket = if self.p.lba_deadline { io.ts >> VDQ_T_SHIFT } else { 0 };
        (bucket, io.offset, io.seq)
    }

    /// `vdev_queue_io_add`.
    fn add(&mut self, req: Request, now: Nanos) -> u32 {
        let io = Io {
            offset: req.offset,
            size: req.size,
            op: req.op,
            prio: req.prio,
            physical: req.physical,
            optional: req.optional,
            ts: now,
            seq: self.seq,
            tag: req.tag,
            queued: true,
        };
        self.seq += 1;
        let id = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = io;
                i
            }
            None => {
                self.slab.push(io);
                (self.slab.len() - 1) as u32
            }
        };
        self.class_add(req.leaf, id, &io);
        let slab = &self.slab;
        let leaf = &mut self.leaves[req.leaf];
        let tree = match req.op {
            Op::Read => &mut leaf.reads,
            Op::Write => &mut leaf.writes,
        };
        // Mostly a stream's next I/O goes last.
        let last = tree.back().map(|&j| {
            let o = &slab[j as usize];
            (o.offset, o.seq)
        });
        if last.is_none_or(|l| l < (io.offset, io.seq)) {
            tree.push_back(id);
        } else {
            let at = tree.partition_point(|&j| {
                let o = &slab[j as usize];
                (o.offset, o.seq) < (io.offset, io.seq)
            });
            tree.insert(at, id);
        }
        if leaf.queued == 0 {
            self.backlog += 1;
        }
        leaf.queued += 1;
        id
    }

    /// `vdev_queue_class_add`: `id` joins its class's queue (FIFO, or sorted).
    fn class_add(&mut self, leaf: usize, id: u32, io: &Io) {
        let key = self.class_key(io);
        let lba = self.p.lba_deadline;
        let slab = &self.slab;
        let class = &mut self.leaves[leaf].classes[io.prio as usize];
        let sort_key = |j: u32| {
            let o = &slab[j as usize];
            let b = if lba { o.ts >> VDQ_T_SHIFT } else { 0 };
            (b, o.offset, o.seq)
        };
        if io.prio.fifo() || class.back().is_none_or(|&j| sort_key(j) < key) {
            class.push_back(id);
        } else {
            let at = class.partition_point(|&j| sort_key(j) < key);
            class.insert(at, id);
        }
    }

    /// `vdev_queue_class_remove`: `id` leaves its class's queue.
    fn class_remove(&mut self, leaf: usize, id: u32, io: &Io) {
        let class = &mut self.leaves[leaf].classes[io.prio as usize];
        // Mostly the I/O issued is the class's first.
        if class.front() == Some(&id) {
            class.pop_front();
            return;
        }
        let key = self.class_key(io);
        let lba = self.p.lba_deadline;
        let slab = &self.slab;
        let class = &mut self.leaves[leaf].classes[io.prio as usize];
        let at = if io.prio.fifo() {
            class.iter().position(|&j| j == id)
        } else {
            let at = class.partition_point(|&j| {
                let o = &slab[j as usize];
                let b = if lba { o.ts >> VDQ_T_SHIFT } else { 0 };
                (b, o.offset, o.seq) < key
            });
            (class.get(at) == Some(&id)).then_some(at)
        };
        // Invariant: a queued I/O is in its class queue (class_add put it there).
        class.remove(at.expect("vdev_queue: a queued I/O is in its class"));
    }

    /// `vdev_queue_io_remove`: `id` leaves its class queue and its tree.
    fn remove(&mut self, leaf: usize, id: u32) {
        let io = self.slab[id as usize];
        self.class_remove(leaf, id, &io);
        let slab = &self.slab;
        let l = &mut self.leaves[leaf];
        let tree = match io.op {
            Op::Read => &mut l.reads,
            Op::Write => &mut l.writes,
        };
        if tree.front() == Some(&id) {
            tree.pop_front();
        } else {
            let at = tree.partition_point(|&j| {
                let o = &slab[j as usize];
                (o.offset, o.seq) < (io.offset, io.seq)
            });
            debug_assert_eq!(tree.get(at), Some(&id));
            tree.remove(at);
        }
        l.queued -= 1;
        if l.queued == 0 {
            self.backlog -= 1;
        }
    }

    /// `vdev_queue_class_to_issue`: the class to issue from, if any.
    fn class_to_issue(&mut self, leaf: usize) -> Option<usize> {
        let l = &self.leaves[leaf];
        if l.queued == 0 || l.total >= self.p.max_active {
            return None;
        }
        let queued = |p: usize| !l.classes[p].is_empty();
        let mut found = None;
        if self.p.round_robin {
            let p1 = if l.last_prio + 1 >= NUM_CLASSES { 0 } else { l.last_prio + 1 };
            found = (p1..NUM_CLASSES).chain(0..p1).find(|&p| queued(p) && l.active[p] < self.min_of(p));
        } else {
            for p in 0..NUM_CLASSES {
                if queued(p) && l.active[p] < self.min_of(p) {
                    found = Some(p);
                    break;
                }
            }
        }
        if found.is_none() {
            found = (0..NUM_CLASSES).find(|&p| queued(p) && l.active[p] < self.max_of(p));
        }
        match found {
            Some(p) => self.leaves[leaf].last_prio = p,
            // 2.2's loop leaves vq_last_prio at ZIO_PRIORITY_NUM_QUEUEABLE (2.1: unchanged).
            None if self.p.lba_deadline => self.leaves[leaf].last_prio = NUM_CLASSES,
            None => {}
        }
        found
    }

    /// The I/O a class issues next: FIFO's head; an offset-ordered class's I/O at or after
    /// `vq_last_offset` (2.2+: within the oldest time bucket), else its first.
    fn pick(&self, leaf: usize, p: usize) -> u32 {
        let l = &self.leaves[leaf];
        let class = &l.classes[p];
        let first = class[0];
        if Priority::ALL[p].fifo() {
            return first;
        }
        let io = &self.slab[first as usize];
        if self.p.lba_deadline {
            if io.offset >= l.last_offset {
                return first;
            }
            let bucket = io.ts >> VDQ_T_SHIFT;
            let at = class.partition_point(|&j| {
                let o = &self.slab[j as usize];
                (o.ts >> VDQ_T_SHIFT, o.offset) < (bucket, l.last_offset)
            });
            match class.get(at) {
                Some(&j) if self.slab[j as usize].ts >> VDQ_T_SHIFT == bucket => j,
                _ => first,
            }
        } else {
            let at = class.partition_point(|&j| self.slab[j as usize].offset < l.last_offset);
            class.get(at).copied().unwrap_or(first)
        }
    }

    /// `vdev_queue_io_to_issue`: issues one I/O (an aggregate, possibly) from `leaf` if any
    /// may be; true if one was. `mine`: the id whose completion the caller wants returned
    /// rather than reported.
    fn io_to_issue(
        &mut self,
        leaf: usize,
        now: Nanos,
        devices: &mut [Device],
        mut mine: Option<(u32, &mut Option<Nanos>)>,
    ) -> bool {
        loop {
            let Some(p) = self.class_to_issue(leaf) else { return false };
            let id = self.pick(leaf, p);
            let (first, last) = match self.aggregate(leaf, id) {
                Some(range) => range,
                None => {
                    let io = self.slab[id as usize];
                    self.remove(leaf, id);
                    if io.optional {
                        // NODATA: it completes at once, with no I/O (zio_vdev_io_bypass).
                        self.complete(id, now, &mut mine);
                        continue;
                    }
                    let done = devices[leaf].submit_at(now, io.op, io.offset, io.size);
                    self.issue_done(leaf, p, io.offset, io.end(), done);
                    self.complete(id, done, &mut mine);
                    return true;
                }
            };
            let io = self.slab[id as usize];
            let (start, end) = {
                let tree = self.tree(leaf, io.op);
                (self.slab[tree[first] as usize].offset, self.slab[tree[last] as usize].end())
            };
            let size = (end - start) as u32;
            let done = devices[leaf].submit_at(now, io.op, start, size);
            self.issue_done(leaf, p, start, end, done);
            // Each member leaves the queues and completes with the aggregate.
            for _ in first..=last {
                let j = self.tree(leaf, io.op)[first];
                self.remove(leaf, j);
                self.aggregated += 1;
                self.complete(j, done, &mut mine);
            }
            self.aggregated -= 1;
            return true;
        }
    }

    fn tree(&self, leaf: usize, op: Op) -> &VecDeque<u32> {
        match op {
            Op::Read => &self.leaves[leaf].reads,
            Op::Write => &self.leaves[leaf].writes,
        }
    }

    /// `vdev_queue_pending_add` of an I/O of class `p` over [start, end) completing at `done`.
    fn issue_done(&mut self, leaf: usize, p: usize, start: u64, end: u64, done: Nanos) {
        let _ = start;
        let l = &mut self.leaves[leaf];
        l.active[p] += 1;
        l.total += 1;
        l.inflight.push((done, p as u8));
        l.last_offset = end;
        self.issued += 1;
    }

    /// Queued I/O `id` completes at `done`: to the submitter waiting for it, else reported.
    fn complete(&mut self, id: u32, done: Nanos, mine: &mut Option<(u32, &mut Option<Nanos>)>) {
        match mine {
            Some((m, out)) if *m == id => **out = Some(done),
            _ => self.resolved.push((self.slab[id as usize].tag, done)),
        }
        self.slab[id as usize].queued = false;
        self.free.push(id);
    }

    /// `vdev_nonrot` of `leaf`: what its kernel reports.
    pub fn non_rotating(&self, leaf: usize) -> bool {
        self.leaves[leaf].non_rotating
    }

    /// The largest span `leaf` aggregates (`zfs_vdev_aggregation_limit`, or
    /// `_non_rotating` on a non-rotating leaf, at most SPA_MAXBLOCKSIZE; 0: none).
    pub fn aggregation_limit(&self, leaf: usize) -> u32 {
        let limit = if self.leaves[leaf].non_rotating {
            self.p.aggregation_limit_non_rotating
        } else {
            self.p.aggregation_limit
        };
        limit.min(SPA_MAXBLOCKSIZE as u32)
    }

    /// `vdev_queue_aggregate`: the span of the type tree (first and last positions) to
    /// issue with `id`, if it takes more than `id`.
    fn aggregate(&mut self, leaf: usize, id: u32) -> Option<(usize, usize)> {
        let limit = u64::from(self.aggregation_limit(leaf));
        if limit == 0 {
            return None;
        }
        let zio = self.slab[id as usize];
        let maxgap = match zio.op {
            Op::Read => u64::from(self.p.read_gap_limit),
            Op::Write => 0,
        };
        let slab = &self.slab;
        let l = &self.leaves[leaf];
        let t = match zio.op {
            Op::Read => &l.reads,
            Op::Write => &l.writes,
        };
        let io = |k: usize| &slab[t[k] as usize];
        let pos = if t.front() == Some(&id) {
            0
        } else {
            t.partition_point(|&j| {
                let o = &slab[j as usize];
                (o.offset, o.seq) < (zio.offset, zio.seq)
            })
        };
        debug_assert_eq!(t.get(pos), Some(&id));
        // IO_GAP(a, b): from a's end to b's start; an overlap is no gap (unsigned in C).
        let gap = |a: &Io, b: &Io| b.offset.checked_sub(a.end());
        let span = |a: &Io, b: &Io| b.end().saturating_sub(a.offset);
        let (mut first, mut last) = (pos, pos);
        let mut mandatory = (!zio.optional).then_some(pos);
        // Backwards through sufficiently contiguous I/Os.
        while first > 0 {
            let d = io(first - 1);
            if d.physical == zio.physical
                && span(d, io(last)) <= limit
                && gap(d, io(first)).is_some_and(|g| g <= maxgap)
            {
                first -= 1;
                if mandatory.is_none() && !d.optional {
                    mandatory = Some(first);
                }
            } else {
                break;
            }
        }
        // Skip initial optional I/Os.
        while io(first).optional && first != last {
            first += 1;
        }
        // Forwards: the limit does not apply to optional I/Os.
        while last + 1 < t.len() {
            let d = io(last + 1);
            if d.physical == zio.physical
                && (span(io(first), d) <= limit || d.optional)
                && span(io(first), d) <= SPA_MAXBLOCKSIZE
                && gap(io(last), d).is_some_and(|g| g <= maxgap)
            {
                last += 1;
                if !d.optional {
                    mandatory = Some(last);
                }
            } else {
                break;
            }
        }
        // Trailing optional writes: kept if a mandatory write close enough follows.
        let mut stretch = false;
        if zio.op == Op::Write {
            if let Some(m) = mandatory {
                let mut nio = last;
                while nio + 1 < t.len() {
                    let d = io(nio + 1);
                    if gap(io(nio), d) == Some(0)
                        && gap(io(m), d).is_some_and(|g| g <= u64::from(self.p.write_gap_limit))
                    {
                        nio += 1;
                        if !d.optional {
                            stretch = true;
                            break;
                        }
                    } else {
                        break;
                    }
                }
            }
        }
        if stretch {
            // The I/O after the span becomes mandatory: it may start the next span.
            let next = t[last + 1];
            self.slab[next as usize].optional = false;
        } else {
            while Some(last) != mandatory && last != first {
                last -= 1;
            }
        }
        (first != last).then_some((first, last))
    }
}

#[cfg(test)]
mod tests;
