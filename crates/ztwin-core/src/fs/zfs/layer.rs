//! The ZFS layer: one dataset's read path from `zfs_read` down to the devices, as a
//! filesystem the driver calls. It owns what a read touches (the ARC with its L2ARC, the
//! dbufs, the pool, the prefetcher, the blocks being read) and answers each call with a
//! typed outcome: wait until a time, or done.
//!
//! One read (`zfs_read` → `dmu_read_uio` per chunk → `dmu_buf_hold_array_by_dnode`),
//! one state of [`ZfsRead`] per step:
//!
//! ```text
//!  Chunk:   one dmu_read_uio call of at most zfs_read_chunk_size (1 MiB, aligned):
//!           dmu_zfetch_prepare for its records
//!  Record:  dbuf_hold of the record: one access at the lowest level whose dbuf exists
//!           (see `dbuf`), then
//!  Walk:    each level below it: dbuf_create and arc_read; a miss goes to a device at
//!           once; an indirect block is waited for (the next level needs it), data is not
//!  Advance: after the last record, dmu_zfetch_run: prefetch reads go out
//!  PageEnd: wait for the chunk's data reads, copy out, release the dbufs ─► Chunk (next
//!           chunk) or done
//! ```
//!
//! Prefetch reads (`dbuf_prefetch_impl`, see `prefetch`) belong to no request: each is a
//! small state machine of its own; the layer hands the driver their wake-ups
//! ([`Zfs::take_wakeups`]) and the driver steps them ([`Zfs::prefetch_event`]). A block
//! being read stays in `block_inflight` until its read completes, so a reader that finds
//! it waits for it (a dbuf in DB_READ) and it is never read twice at once.
//!
//! CPU: the layer adds what a step costs to the caller's pending CPU (the driver runs it
//! on the vCPUs before the request's next wait); the CPU a read costs after it completes
//! (interrupt, zio pipeline, checksum, decompression) is charged when it is issued and so
//! joins the next burst.
//!
//! Every pool I/O passes its leaf's vdev queue (`vdev_queue`, owned by the pool): a read
//! the queue holds (its class at its maximum) has no completion time yet; its block is in
//! `block_inflight` as `PENDING`, and who needs it (the reader, other readers, prefetch
//! chains) is woken at its completion once the queue issues it ([`Zfs::take_wakeups`];
//! [`ReadStep::Blocked`] until then). A demand read that finds a prefetch's read held
//! upgrades it to sync read (`arc_read` → `zio_change_priority`).
//!
//! Writes, the txg sync are this layer's too (`write_path`), and so is the intent log that
//! fsync and synchronous writes wait for (`zil`), and Direct I/O (`direct`, 2.3).

use crate::cache::arc::{dbuf_copy_bytes, Arc, ArcAccess, BlockInfo, BlockKey, BufType, ReadFlags};
use crate::config::Compression;
use crate::dev::device::{Device, Op};
use crate::fs::zfs::dbuf::DbufLayer;
use crate::fs::zfs::direct::{setup_direct, DMU_MAX_ACCESS};
use crate::fs::zfs::pool::Pool;
use crate::fs::zfs::read_path::ZfsLayout;
use crate::fs::zfs::vdev_queue::{Priority, Queued, Request as IoRequest, Tag, VdevQueue};
use crate::fs::zfs::write_path::WritePath;
use crate::fs::zfs::zfetch::{Pending, Request, Zfetch};
pub use crate::fs::ReadStep;
use crate::sim::time::Nanos;
use crate::support::small_map::SmallMap;

pub use super::prefetch::PrefetchRead;

/// zfs_read_chunk_size (0.8) / zfs_vnops_read_chunk_size (2.x): zfs_read hands the DMU at
/// most 1 MiB per call, cut at 1 MiB boundaries (module/zfs/zfs_vnops.c, all modelled
/// releases); each call holds its records, runs the prefetcher and waits before the next.
const ZFS_READ_CHUNK_SIZE: u64 = 1 << 20;

/// CPU costs of the ZFS path in simulated ns on this machine's vCPUs.
#[derive(Debug, Clone, Copy)]
pub struct ZfsCosts {
    /// A dbuf hold or create (dbuf_hold_impl, dbuf_create, the hash lookups).
    pub zfs_block: Nanos,
    /// Issuing a device I/O and its interrupt.
    pub device_io: Nanos,
    /// A zio's pipeline.
    pub zio: Nanos,
    /// Copying a byte (dbuf to the caller's buffer, zero-filling a hole's).
    pub memcpy_ns_per_byte: f64,
    /// Checksumming a byte read (fletcher4).
    pub checksum_ns_per_byte: f64,
    /// Decompressing to a byte of logical size.
    pub decompress_ns_per_byte: f64,
    /// Compressing a byte of logical size (the txg sync's writes, `wr_iss`).
    pub compress_ns_per_byte: f64,
    /// The L2ARC feed thread's visit of one ARC header (`l2arc_hdr_ns`).
    pub l2arc_hdr: Nanos,
    /// zfs_compressed_arc_enabled (and the release has it): where decompression happens.
    pub compressed_arc: bool,
    /// zfs_abd_scatter_enabled: whether a dbuf's buffer can share the header's (see
    /// `cache::arc::dbuf_copy_bytes`).
    pub abd_scatter: bool,
    /// A prefetch read's completion decompresses the block into a buffer it frees
    /// ([`crate::config::ZfsFeatures::prefetch_fills_buf`]).
    pub prefetch_fills_buf: bool,
}

impl ZfsCosts {
    /// `zio_write_compress` of a block of `lsize` logical bytes by `algorithm` (nothing
    /// with compression=off).
    pub fn compress(&self, algorithm: Compression, lsize: u32) -> Nanos {
        if algorithm == Compression::Off {
            0
        } else {
            (f64::from(lsize) * self.compress_ns_per_byte) as Nanos
        }
    }

    /// The separate buffer a new dbuf of a block holds in the ARC (`dbuf_copy_bytes` under
    /// this pool's compressed ARC and ABD settings).
    pub fn dbuf_copy(&self, info: &BlockInfo) -> u32 {
        dbuf_copy_bytes(info.lsize, info.psize, self.compressed_arc, self.abd_scatter)
    }
}

/// Where a read is in the read path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadState {
    Chunk,
    Record,
    Walk,
    Advance,
    /// The chunk's data reads are issued, some still queued in a vdev queue: find out when
    /// they complete.
    DataWait,
    PageEnd,
}

/// One read request in the ZFS read path: bytes [offset, offset + len) of `object`.
#[derive(Debug, Clone, Copy)]
pub struct ZfsRead {
    state: ReadState,
    object: u32,
    offset: u64,
    len: u32,
    /// The DMU call in progress: bytes [chunk_off, chunk_end) of the read.
    chunk_off: u64,
    chunk_end: u64,
    /// dmu_zfetch_prepare's stream, to run once the chunk's demand reads are issued.
    zfetch: Option<Pending>,
    /// A demand L0 read of the chunk was not served from memory (dmu_zfetch_run's `missed`).
    missed: bool,
    rec: u64,
    rec_last: u64,
    level: u8,
    /// Completion of the chunk's data (L0) reads in flight: they are issued together, as
    /// dmu_buf_hold_array_by_dnode issues every record read of one request before waiting.
    data_done: Nanos,
    /// A Direct I/O read (2.3, see `direct`): records not in memory are read into the
    /// caller's pages, bypassing the ARC.
    direct: bool,
    /// Bytes of the chunk a direct read copies from memory (dbufs, dirty records, holes).
    copy_bytes: u64,
}

impl ZfsRead {
    /// No read (a placeholder for a request that has none yet).
    pub const IDLE: ZfsRead = ZfsRead {
        state: ReadState::Chunk,
        object: 0,
        offset: 0,
        len: 0,
        chunk_off: 0,
        chunk_end: 0,
        zfetch: None,
        missed: false,
        rec: 0,
        rec_last: 0,
        level: 0,
        data_done: 0,
        direct: false,
        copy_bytes: 0,
    };

    /// dbuf_will_dirty → dbuf_read of record `rec` of `object`, whole: the read walk with
    /// DB_RF_NOPREFETCH (it does not feed the prefetcher).
    pub fn rmw(layout: &ZfsLayout, object: u32, rec: u64, now: Nanos) -> ZfsRead {
        let rs = u64::from(layout.geometry(object).data_block_size());
        let start = rec * rs;
        ZfsRead {
            state: ReadState::Record,
            object,
            offset: start,
            len: rs as u32,
            chunk_off: start,
            chunk_end: start + rs,
            zfetch: None,
            missed: false,
            rec,
            rec_last: rec,
            level: 0,
            data_done: now,
            direct: false,
            copy_bytes: 0,
        }
    }
}

/// What a step does next within the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Wait(Nanos),
    /// Waits for a read still queued in a vdev queue: woken by the layer
    /// ([`Zfs::take_wakeups`]) when it is issued, at its completion.
    Block,
}

/// A read in flight whose vdev queue has not issued it yet: its completion is unknown.
pub(super) const PENDING: Nanos = Nanos::MAX;

/// Who the layer wakes ([`Zfs::take_wakeups`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A client (a reader or a writer slot) resumes its request.
    Client(u32),
    /// A prefetch read resumes its chain.
    Prefetch(u32),
    /// A write of L2ARC feed thread `k` is issued (it completes at the wake-up's time).
    Feed(u8),
}

const NO_WAITER: u32 = u32::MAX;

/// `l2arc_read`: the read of `bytes` of the copy at `loc` on cache device `device` (an
/// index of the run's devices), at the copy's address (its ring entry, prefetched by
/// `Arc::access`), through the device's vdev queue in class `prio` for `tag`: its
/// completion if the queue issues it now, else where the queue holds it.
#[allow(clippy::too_many_arguments)]
pub(super) fn l2_read(
    arc: &Arc,
    vq: &mut VdevQueue,
    device: usize,
    loc: u32,
    bytes: u32,
    prio: Priority,
    tag: Tag,
    now: Nanos,
    devices: &mut [Device],
) -> std::result::Result<Nanos, Queued> {
    vq.submit_tracked(IoRequest::new(device, arc.l2_daddr(loc), bytes, Op::Read, prio, tag), now, devices)
}

/// Who waits for blocks whose reads a vdev queue holds: per block, a list in arrival
/// order (nodes in a slab reused through a free list).
#[derive(Debug, Default)]
pub(super) struct Waiters {
    /// Block key -> (first node, last node).
    lists: SmallMap<(u32, u32)>,
    nodes: Vec<(Wake, u32)>,
    free: Vec<u32>,
    len: usize,
}

impl Waiters {
    /// `who` waits for block `key`.
    pub(super) fn push(&mut self, key: u64, who: Wake) {
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n as usize] = (who, NO_WAITER);
                n
            }
            None => {
                self.nodes.push((who, NO_WAITER));
                (self.nodes.len() - 1) as u32
            }
        };
        match self.lists.get_mut(key) {
            Some((_, last)) => {
                self.nodes[*last as usize].1 = n;
                *last = n;
            }
            None => self.lists.insert(key, (n, n)),
        }
        self.len += 1;
    }

    /// The waiters of block `key`, in the order they came, who wait no more.
    fn take(&mut self, key: u64, mut f: impl FnMut(Wake)) {
        let Some((mut n, _)) = self.lists.remove(key) else { return };
        while n != NO_WAITER {
            let (who, next) = self.nodes[n as usize];
            f(who);
            self.free.push(n);
            self.len -= 1;
            n = next;
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn clear(&mut self) {
        self.lists.clear();
        self.nodes.clear();
        self.free.clear();
        self.len = 0;
    }
}

/// A client's Direct I/O device reads or writes of its current request (2.3).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DirectIos {
    /// Still queued in a vdev queue.
    pub(super) pending: u32,
    /// The latest completion of those issued (stale values are in the past).
    pub(super) done: Nanos,
    /// The client waits for them (woken when the last is issued).
    pub(super) waiting: bool,
}

/// Work counters of the read path, for `ztwin bench` and tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadCounters {
    /// Block lookups of demand reads: ARC accesses and waits for blocks being read.
    pub block_lookups: u64,
    /// Block lookups that found the block being read by another reader and waited.
    pub block_waits: u64,
    /// ARC accesses made by prefetch reads.
    pub prefetch_lookups: u64,
    /// Device reads of Direct I/O reads (2.3), which bypass the ARC.
    pub direct_reads: u64,
}

/// One dataset on its pool, with the ARC, the dbufs and the prefetcher.
pub struct Zfs {
    /// The ARC (with its L2ARC headers when there is a cache device).
    pub arc: Box<Arc>,
    /// The dbufs: holds, the dbuf cache and what they keep in the ARC.
    pub dbufs: Box<DbufLayer>,
    /// The L2ARC's cache devices attached to the ARC (indexes of the run's devices), in
    /// the ARC's order (an L2 hit names its device by its place here); empty: no L2ARC.
    pub cache_devices: Vec<usize>,
    /// The files' block-pointer trees and their blocks' sizes.
    pub layout: ZfsLayout,
    /// Where blocks live and which device reads them.
    pub pool: Box<Pool>,
    /// The ARC read flags of data and of metadata reads (primarycache).
    pub data_flags: ReadFlags,
    /// (see `data_flags`)
    pub meta_flags: ReadFlags,
    /// The predictive prefetcher.
    pub zfetch: Box<Zfetch>,
    /// What the path's steps cost in CPU.
    pub costs: ZfsCosts,
    /// arcstats counts a demand read that finds its block being read as an `iohit` (2.2:
    /// `arc_access` with the demand flags), not as a wait of the read path.
    iohits: bool,
    /// Blocks being read from a device, with their completion time; a reader that finds
    /// one waits until then (dbuf_read on a dbuf in DB_READ). The reader that issued the
    /// read removes the entry when its chunk is done.
    pub(super) block_inflight: SmallMap<Nanos>,
    /// Per reader slot, the blocks it has in flight (removed from `block_inflight` at
    /// chunk end).
    owned_inflight: Vec<Vec<u64>>,
    /// Prefetch reads in progress (a slab; see `prefetch`), and its free slots.
    pub(super) prefetches: Vec<PrefetchRead>,
    pub(super) free_prefetches: Vec<u32>,
    /// Clients and prefetch reads to wake, and when (taken by the driver).
    pub(super) wakeups: Vec<(Nanos, Wake)>,
    /// Who waits for a block whose read a vdev queue holds (`PENDING` in
    /// `block_inflight`): woken at its completion once it is issued.
    pub(super) waiters: Waiters,
    /// Per client slot, its Direct I/O device I/Os (2.3).
    pub(super) direct_ios: Vec<DirectIos>,
    /// Prefetch reads (async-read class) a vdev queue holds, by block: a demand read that
    /// finds one upgrades it to sync read (`arc_read` → `zio_change_priority`, on headers
    /// with ARC_FLAG_PRIO_ASYNC_READ).
    pub(super) queued_prefetches: SmallMap<Queued>,
    pub(super) counters: ReadCounters,
    /// The write path: dirty data, txgs, the sync's writes.
    pub(super) writes: WritePath,
}

impl Zfs {
    /// The layer over its models, for `slots` concurrent readers.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        arc: Arc,
        dbufs: DbufLayer,
        cache_devices: Vec<usize>,
        layout: ZfsLayout,
        pool: Pool,
        data_flags: ReadFlags,
        meta_flags: ReadFlags,
        zfetch: Zfetch,
        costs: ZfsCosts,
        iohits: bool,
        writes: WritePath,
        slots: usize,
    ) -> Zfs {
        Zfs {
            arc: Box::new(arc),
            dbufs: Box::new(dbufs),
            cache_devices,
            layout,
            pool: Box::new(pool),
            data_flags,
            meta_flags,
            zfetch: Box::new(zfetch),
            costs,
            iohits,
            block_inflight: SmallMap::with_capacity(slots * 16),
            owned_inflight: (0..slots).map(|_| Vec::with_capacity(16)).collect(),
            prefetches: Vec::with_capacity(1024),
            free_prefetches: Vec::with_capacity(1024),
            wakeups: Vec::with_capacity(64),
            waiters: Waiters::default(),
            direct_ios: vec![DirectIos::default(); slots],
            queued_prefetches: SmallMap::with_capacity(64),
            counters: ReadCounters::default(),
            writes,
        }
    }

    /// The read path's work counters.
    pub fn counters(&self) -> ReadCounters {
        self.counters
    }

    /// The clients and prefetch reads to wake (at time `t`) since the last call, in the
    /// order they were scheduled: prefetch chains waiting for reads in flight, and clients
    /// and prefetches whose reads (or Direct I/O) a vdev queue has now issued.
    pub fn take_wakeups(&mut self) -> std::vec::Drain<'_, (Nanos, Wake)> {
        self.wakeups.drain(..)
    }

    /// Whether a client or a prefetch waits for I/O a vdev queue still holds (woken by
    /// the sync's events, [`Zfs::sync_event`], which run the queues).
    pub fn blocked_on_queues(&self) -> bool {
        !self.waiters.is_empty() || self.direct_ios.iter().any(|d| d.waiting)
    }

    /// Routes the completions of I/Os the vdev queues issued after holding them
    /// (`VdevQueue::take_resolved`) to who waits for them: a block's readers and
    /// prefetches, a client's Direct I/O, a log block, the txg sync.
    pub(super) fn route_resolved(&mut self) {
        if !self.pool.vq.has_resolved() {
            return;
        }
        let Zfs { pool, block_inflight, waiters, wakeups, writes, direct_ios, queued_prefetches, .. } = self;
        let mut lwb = false;
        for (tag, done) in pool.vq.take_resolved() {
            match tag {
                Tag::Block(key) => {
                    queued_prefetches.remove(key);
                    if let Some(v) = block_inflight.get_mut(key) {
                        if *v == PENDING {
                            *v = done;
                        }
                    }
                    waiters.take(key, |who| wakeups.push((done, who)));
                }
                Tag::Direct(slot) => {
                    let d = &mut direct_ios[slot as usize];
                    d.pending -= 1;
                    d.done = d.done.max(done);
                    if d.pending == 0 && d.waiting {
                        d.waiting = false;
                        wakeups.push((d.done, Wake::Client(slot)));
                    }
                }
                Tag::Lwb(id) => {
                    if let Some(z) = writes.zils.iter_mut().find(|z| z.owns(id)) {
                        z.io_issued(id, done);
                        lwb = true;
                    }
                }
                Tag::Txg(undirty, bytes) => writes.txg_write_issued(done, undirty, bytes),
                Tag::Uberblock => writes.uberblock_issued(done),
                Tag::L2Feed(k) => wakeups.push((done, Wake::Feed(k))),
                Tag::None => {}
            }
        }
        if lwb {
            for z in &mut writes.zils {
                z.refresh_next();
            }
        }
    }

    /// A write of `size` bytes at `offset` on cache device `device` (an index of the
    /// run's devices) by L2ARC feed thread `k` at `now`: `zio_write_phys()` with
    /// ZIO_PRIORITY_ASYNC_WRITE into the device's vdev queue, whose async write class
    /// follows the pool's dirty data as the pool's leaves do. Returns its completion if
    /// the queue issued it now; else a [`Wake::Feed`] reports it when issued
    /// ([`Zfs::take_wakeups`]). Other I/Os the queue issued with it are routed too.
    pub fn l2_feed_write(
        &mut self,
        k: u8,
        device: usize,
        offset: u64,
        size: u32,
        now: Nanos,
        devices: &mut [Device],
    ) -> Option<Nanos> {
        self.pool.vq.set_async_write_max(self.writes.async_write_max());
        let req = IoRequest::new(device, offset, size, Op::Write, Priority::AsyncWrite, Tag::L2Feed(k));
        let done = self.pool.vq.submit(req, now, devices);
        self.route_resolved();
        done
    }

    /// A read of bytes [offset, offset + len) of `object`, by a file opened O_DIRECT when
    /// `o_direct`: Direct I/O where the dataset's `direct` property makes it so (2.3; see
    /// `direct`), else through the ARC. A request `direct=standard` would fail with EINVAL
    /// is refused by the config check (fio's jobs); here it goes through the ARC.
    pub fn start_read(&self, object: u32, offset: u64, len: u32, o_direct: bool) -> ZfsRead {
        let blksz = u64::from(self.layout.geometry(object).data_block_size());
        let direct = setup_direct(self.writes.direct, o_direct, false, offset, u64::from(len), blksz);
        debug_assert!(direct.is_some(), "a misaligned O_DIRECT read with direct=standard passed the check");
        ZfsRead {
            state: ReadState::Chunk,
            object,
            offset,
            len,
            chunk_end: offset,
            direct: direct == Some(true),
            ..ZfsRead::IDLE
        }
    }

    /// Starts bringing into the CPU caches what the walk of a read's first record will
    /// look up (the read's CPU time runs first, while other events are simulated).
    pub fn prefetch_read(&self, object: u32, offset: u64, len: u32) {
        self.zfetch.prefetch_streams(object);
        let (first, _) = self.layout.records(object, offset, len);
        for level in 0..self.layout.nlevels(object) {
            self.arc.prefetch(BlockKey::new(
                object,
                level,
                self.layout.geometry(object).ancestor(first, level),
            ));
        }
        // A miss reads the record: where it lives.
        self.pool.prefetch(BlockKey::new(object, 0, first));
    }

    /// Steps read `r` of reader `slot` at `now` until it waits or is done; the CPU its
    /// steps cost is added to `cpu`, its device reads go to `devices`.
    pub fn read(
        &mut self,
        slot: usize,
        r: &mut ZfsRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        self.pool.vq.set_async_write_max(self.writes.async_write_max());
        let step = self.read_steps(slot, r, now, cpu, devices);
        self.route_resolved();
        step
    }

    pub(super) fn read_steps(
        &mut self,
        slot: usize,
        r: &mut ZfsRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        loop {
            let flow = match r.state {
                ReadState::Chunk => {
                    self.chunk(slot, r, now, devices);
                    Flow::Next
                }
                ReadState::Record => self.record(slot, r, now, cpu),
                ReadState::Walk => self.walk(slot, r, now, cpu, devices),
                ReadState::Advance => self.advance(r, now, devices),
                ReadState::DataWait => self.data_wait(slot, r, now),
                ReadState::PageEnd => {
                    if self.chunk_end(slot, r, cpu) {
                        return ReadStep::Done;
                    }
                    Flow::Next
                }
            };
            match flow {
                Flow::Next => {}
                Flow::Wait(t) => return ReadStep::WaitUntil(t),
                Flow::Block => return ReadStep::Blocked,
            }
        }
    }

    /// Waits for block `key` whose read a vdev queue holds: `who` is woken at its
    /// completion once it is issued.
    fn block_on(&mut self, key: u64, who: Wake) -> Flow {
        self.waiters.push(key, who);
        Flow::Block
    }

    /// The chunk's data reads were issued, some of them held by a vdev queue: when every
    /// one is issued, wait for the last to complete.
    fn data_wait(&mut self, slot: usize, r: &mut ZfsRead, now: Nanos) -> Flow {
        let mut done = now;
        if r.direct {
            let d = &mut self.direct_ios[slot];
            if d.pending > 0 {
                d.waiting = true;
                return Flow::Block;
            }
            done = done.max(d.done);
        }
        let (first, last) = self.layout.records(r.object, r.chunk_off, (r.chunk_end - r.chunk_off) as u32);
        for rec in first..=last {
            let key = self.layout.key(r.object, rec, 0);
            match self.block_inflight.get(key.0) {
                Some(PENDING) => return self.block_on(key.0, Wake::Client(slot as u32)),
                Some(t) => done = done.max(t),
                None => {}
            }
        }
        r.state = ReadState::PageEnd;
        if done > now {
            Flow::Wait(done)
        } else {
            Flow::Next
        }
    }

    /// The next dmu_read_uio call of the read: its records, and dmu_zfetch_prepare for
    /// them (dmu_buf_hold_array_by_dnode prepares before issuing the demand reads), with
    /// 2.3's prescient indirect prefetch, which prepare issues.
    fn chunk(&mut self, slot: usize, r: &mut ZfsRead, now: Nanos, devices: &mut [Device]) {
        let end = r.offset + r.len as u64;
        r.chunk_off = r.chunk_end;
        // A direct read is one DMU call (its pages are pinned already).
        let chunk = if r.direct { DMU_MAX_ACCESS } else { ZFS_READ_CHUNK_SIZE };
        r.chunk_end = end.min((r.chunk_off / chunk + 1) * chunk);
        let len = r.chunk_end - r.chunk_off;
        let (first, last) = self.layout.records(r.object, r.chunk_off, len as u32);
        r.rec = first;
        r.rec_last = last;
        r.data_done = now;
        r.missed = false;
        r.copy_bytes = 0;
        let _ = slot;
        let req = Request {
            object: r.object,
            blkid: first,
            nblks: last - first + 1,
            length: len,
            // dmu_read_abd holds the dbufs with `read` false: zfetch prefetches no data.
            read: !r.direct,
            shape: self.layout.zfetch_shape(r.object),
        };
        r.zfetch = self.zfetch.prepare(&req, now);
        let prescient = self.zfetch.take_prescient();
        if !prescient.is_empty() {
            self.prescient_prefetch(r.object, prescient, now, devices);
        }
        r.state = ReadState::Record;
    }

    /// dbuf_hold of the record: one access at the lowest level whose dbuf exists, then a
    /// read of every level below it (see fs::zfs::dbuf).
    fn record(&mut self, slot: usize, r: &mut ZfsRead, now: Nanos, cpu: &mut Nanos) -> Flow {
        let Zfs { arc, dbufs, layout, .. } = self;
        if dbufs.evicted_by_arc() {
            // 0.6: a dbuf whose header the ARC evicted is gone before anyone finds it
            // (dbuf_hold_impl clears one whose buffer lost its data and starts over).
            settle_dbufs(arc, dbufs, layout);
        }
        let nlevels = layout.nlevels(r.object);
        let found = (0..nlevels).find(|&l| dbufs.exists(layout.key(r.object, r.rec, l)));
        let Some(level) = found else {
            // No dbuf on the path: start at the dnode's block pointer.
            r.level = nlevels - 1;
            r.state = ReadState::Walk;
            return Flow::Next;
        };
        let (key, info) = layout.block(r.object, r.rec, level);
        let hold = dbufs.hold_existing(key);
        r.level = level;
        r.state = ReadState::Advance;
        *cpu += self.costs.zfs_block;
        if let Some(done) = self.block_inflight.get(key.0) {
            // The dbuf is being read (DB_READ): dbuf_read waits on db_changed,
            // with no ARC access.
            self.counters.block_lookups += 1;
            self.counters.block_waits += 1;
            if level == 0 {
                r.data_done = r.data_done.max(done);
                // A direct read holds without reading: no `missed` for zfetch.
                r.missed |= !r.direct;
            } else if done == PENDING {
                return self.block_on(key.0, Wake::Client(slot as u32));
            } else if done > now {
                return Flow::Wait(done);
            }
            if r.direct && level == 0 {
                self.direct_copy(r, key);
            }
            return Flow::Next;
        }
        if info.psize != 0 && hold.accesses_arc && arc.contains(key) {
            // arc_buf_access() (0.6: arc_buf_add_ref from zero holds): an ARC hit, no
            // copy, no decompression. (If the ARC model evicted the header, the dbuf
            // still serves its data: the real ARC cannot evict a buffer a dbuf references.)
            self.counters.block_lookups += 1;
            let flags = ReadFlags::default();
            let hit = arc.access(key, info, flags, now);
            debug_assert_eq!(hit, ArcAccess::Hit);
            if hold.references {
                let hdr = arc.dbuf_rehold(key);
                dbufs.set_hdr(hold.slot, hdr);
            }
        }
        if r.direct && level == 0 {
            self.direct_copy(r, key);
        }
        Flow::Next
    }

    /// dmu_read_abd of a record whose dbuf holds its data (cached, or read by another
    /// reader and waited for): copied under db_mtx; the hold goes at once.
    fn direct_copy(&mut self, r: &mut ZfsRead, key: BlockKey) {
        let Zfs { arc, dbufs, layout, .. } = self;
        r.copy_bytes += overlap(r, layout, r.rec);
        dbufs.release(key, arc.c(), |k| layout.parent_of(k));
        settle_dbufs(arc, dbufs, layout);
    }

    /// One level of the walk: dbuf_create and arc_read of the block; a miss goes to a device.
    fn walk(
        &mut self,
        slot: usize,
        r: &mut ZfsRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> Flow {
        let Zfs { arc, dbufs, cache_devices, layout, pool, data_flags, meta_flags, costs, iohits, .. } = self;
        let object = r.object;
        let (key, info) = layout.block(object, r.rec, r.level);
        let flags = if info.kind == BufType::Data { *data_flags } else { *meta_flags };
        // dbuf_create under the parent (held by the new child from now on), then
        // the reader's own hold on the parent is dropped.
        let parent = (r.level + 1 < layout.nlevels(object)).then(|| layout.key(object, r.rec, r.level + 1));
        if dbufs.exists(key) {
            // Another reader created it while this one waited for the parent (two readers
            // of one indirect block going down to the same child): drop the parent hold and
            // find the dbuf as dbuf_hold does (dbuf_find first).
            if let Some(p) = parent {
                dbufs.release(p, arc.c(), |k| layout.parent_of(k));
                settle_dbufs(arc, dbufs, layout);
            }
            r.state = ReadState::Record;
            return Flow::Next;
        }
        if r.direct && r.level == 0 {
            return self.direct_read_record(slot, r, now, cpu, devices);
        }
        let copy = costs.dbuf_copy(&info);
        let meta = info.kind == BufType::Metadata;
        // 0.6: a hole's dbuf has an anonymous buffer, which dbuf_rele_and_unlock frees
        // with the dbuf at zero holds (`arc_released`); only a block in the ARC stays.
        let cacheable = !flags.uncacheable && (info.psize != 0 || !dbufs.evicted_by_arc());
        let dbuf = dbufs.create(key, parent, info.lsize, cacheable, copy);
        if let Some(p) = parent {
            dbufs.release(p, arc.c(), |k| layout.parent_of(k));
            settle_dbufs(arc, dbufs, layout);
        }
        *cpu += costs.zfs_block;
        if info.psize == 0 {
            let hdr = arc.dbuf_created(key, meta, copy, false, now);
            dbufs.set_hdr(dbuf, hdr);
            // A hole or an embedded block: the block pointer itself holds the
            // content (BP_IS_HOLE / BP_IS_EMBEDDED), nothing to read or cache; the new
            // dbuf's buffer is filled in memory (dbuf_read_hole zeroes it, about a copy's cost).
            *cpu += (info.lsize as f64 * costs.memcpy_ns_per_byte) as Nanos;
            r.state = ReadState::Advance;
            return Flow::Next;
        }
        self.counters.block_lookups += 1;
        // A compressed block is decompressed once per read from a device: by arc_buf_fill
        // into the new dbuf's buffer with compressed ARC, or by the read zio before the ARC
        // keeps it without. With compressed ARC a hit decompresses again (arc_buf_fill);
        // without, the ARC's uncompressed buffer is shared or copied (arc_buf_alloc_impl).
        let decompress = if info.psize < info.lsize {
            (info.lsize as f64 * costs.decompress_ns_per_byte) as Nanos
        } else {
            0
        };
        let hit_decompress = if costs.compressed_arc { decompress } else { 0 };
        if let Some(done) = self.block_inflight.get(key.0) {
            // Only a prefetch (which creates no dbuf) can be reading a block without a
            // dbuf: arc_read finds its header IO_IN_PROGRESS and waits for it. 0.8 and 2.1
            // neither count it nor call arc_access (the prefetch flag, and with
            // l2arc_noprefetch the cleared L2CACHE flag, stay until read done). 2.2 calls
            // arc_access with the demand flags: the prefetch flag goes, L2CACHE is set, no
            // promotion; it counts an iohit (Arc::io_wait does both).
            arc.io_wait(key, info, flags, now);
            let hdr = arc.dbuf_created(key, meta, copy, false, now);
            dbufs.set_hdr(dbuf, hdr);
            if !*iohits {
                self.counters.block_waits += 1;
            }
            *cpu += hit_decompress;
            r.state = ReadState::Advance;
            if done == PENDING {
                // A prefetch's read its vdev queue holds: this demand read upgrades it.
                if let Some(q) = self.queued_prefetches.remove(key.0) {
                    self.pool.vq.change_priority(q, Tag::Block(key.0), Priority::SyncRead);
                }
            }
            if r.level == 0 {
                r.data_done = r.data_done.max(done);
                r.missed = true;
            } else if done == PENDING {
                return self.block_on(key.0, Wake::Client(slot as u32));
            } else if done > now {
                return Flow::Wait(done);
            }
            return Flow::Next;
        }
        // None: an ARC hit; Some(None): a read from the pool; Some(Some(..)): an L2 hit.
        arc.dbuf_reserve(meta, copy);
        let read = match arc.access(key, info, flags, now) {
            ArcAccess::Hit => None,
            // l2arc_read: the block's asize from the cache device.
            ArcAccess::L2Hit { asize, dev, loc, .. } => {
                // Invariant: an L2 hit names a device the ARC has, one of `cache_devices`.
                Some(Some((cache_devices[dev as usize], asize, loc)))
            }
            ArcAccess::Miss { .. } => Some(None),
        };
        // arc_buf_alloc_impl: the new dbuf's buffer (on the hit now, on the miss in
        // arc_read_done; the model's header exists from the access on).
        let hdr = arc.dbuf_created(key, meta, copy, true, now);
        dbufs.set_hdr(dbuf, hdr);
        match read {
            None => {
                *cpu += hit_decompress;
                r.state = ReadState::Advance;
            }
            Some(source) => {
                // The zio goes out now (to its leaf's vdev queue, sync-read class: the
                // pool's, or l2arc_read's to the cache device's); its CPU (pipeline,
                // interrupt, checksum, decompression) is charged before the client's next
                // wait.
                let done = match source {
                    Some((device, bytes, loc)) => l2_read(
                        arc,
                        &mut pool.vq,
                        device,
                        loc,
                        bytes,
                        Priority::SyncRead,
                        Tag::Block(key.0),
                        now,
                        devices,
                    )
                    .unwrap_or(PENDING),
                    None => pool
                        .read(layout, key, info.psize, Priority::SyncRead, Tag::Block(key.0), now, devices)
                        .unwrap_or(PENDING),
                };
                self.block_inflight.insert(key.0, done);
                self.owned_inflight[slot].push(key.0);
                *cpu += costs.device_io
                    + costs.zio
                    + (info.psize as f64 * costs.checksum_ns_per_byte) as Nanos
                    + decompress;
                r.state = ReadState::Advance;
                if r.level == 0 {
                    // Data: the next record's read goes out at once.
                    r.data_done = r.data_done.max(done);
                    r.missed = true;
                } else if done == PENDING {
                    return self.block_on(key.0, Wake::Client(slot as u32));
                } else {
                    // An indirect block: the level below cannot be located
                    // before it arrives.
                    return Flow::Wait(done);
                }
            }
        }
        Flow::Next
    }

    /// The next level down, the next record, or the end of the chunk's demand reads.
    fn advance(&mut self, r: &mut ZfsRead, now: Nanos, devices: &mut [Device]) -> Flow {
        if r.level > 0 {
            r.level -= 1;
            r.state = ReadState::Walk;
        } else if r.rec < r.rec_last {
            r.rec += 1;
            r.state = ReadState::Record;
        } else {
            // dmu_zfetch_run: every demand read of the chunk is issued.
            if let Some(pending) = r.zfetch.take() {
                self.zfetch_run(pending, r.missed, r.object, now, devices);
            }
            r.state = ReadState::PageEnd;
            if r.data_done == PENDING {
                // A vdev queue holds some of them.
                r.state = ReadState::DataWait;
            } else if r.data_done > now {
                return Flow::Wait(r.data_done);
            }
        }
        Flow::Next
    }

    /// Every record of the chunk is read: copy out, release the dbufs; true if that was
    /// the read's last chunk.
    fn chunk_end(&mut self, slot: usize, r: &mut ZfsRead, cpu: &mut Nanos) -> bool {
        if r.direct {
            // dmu_read_abd copied what was in memory; the devices read the rest into the
            // caller's pages; the record dbufs were released as they were copied.
            *cpu += (r.copy_bytes as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
        } else {
            // dmu_read_uio: copy the chunk out of the dbufs into the caller's buffer,
            // then dmu_buf_rele_array: the record dbufs go to the dbuf cache.
            *cpu += ((r.chunk_end - r.chunk_off) as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
            self.release_records(r);
        }
        for key in self.owned_inflight[slot].drain(..) {
            self.block_inflight.remove(key);
        }
        if r.chunk_end < r.offset + r.len as u64 {
            r.state = ReadState::Chunk;
            false
        } else {
            true
        }
    }

    /// dmu_buf_rele_array: the reader drops its holds on the chunk's record dbufs.
    fn release_records(&mut self, r: &ZfsRead) {
        let Zfs { arc, dbufs, layout, .. } = self;
        let (first, last) = layout.records(r.object, r.chunk_off, (r.chunk_end - r.chunk_off) as u32);
        for rec in first..=last {
            let key = layout.key(r.object, rec, 0);
            dbufs.release(key, arc.c(), |k| layout.parent_of(k));
        }
        settle_dbufs(arc, dbufs, layout);
    }

    /// Forgets every read in progress (the run abandons what a device never answers).
    pub fn abandon_reads(&mut self) {
        self.block_inflight.clear();
        self.prefetches.clear();
        self.free_prefetches.clear();
        self.wakeups.clear();
        self.waiters.clear();
        self.queued_prefetches.clear();
        for d in &mut self.direct_ios {
            *d = DirectIos::default();
        }
        self.zfetch.reset();
        for owned in &mut self.owned_inflight {
            owned.clear();
        }
    }
}

/// Bytes of read `r`'s current chunk inside record `rec`.
fn overlap(r: &ZfsRead, layout: &ZfsLayout, rec: u64) -> u64 {
    let rs = u64::from(layout.geometry(r.object).data_block_size());
    let (start, end) = (rec * rs, (rec + 1) * rs);
    r.chunk_end.min(end).saturating_sub(r.chunk_off.max(start))
}

impl Zfs {
    /// `dmu_read_abd` of a record whose dbuf holds no data (a Direct I/O read, see
    /// `direct`): dirty in memory, copied; a hole, zero-filled; else read from its block
    /// pointer into the caller's pages, with no ARC access. The reader's hold on the parent
    /// goes (the record's uncached dbuf is destroyed at release: not modelled).
    fn direct_read_record(
        &mut self,
        slot: usize,
        r: &mut ZfsRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> Flow {
        let Zfs { arc, dbufs, layout, pool, costs, writes, direct_ios, .. } = self;
        let (key, info) = layout.block(r.object, r.rec, 0);
        if layout.nlevels(r.object) > 1 {
            let parent = layout.key(r.object, r.rec, 1);
            dbufs.release(parent, arc.c(), |k| layout.parent_of(k));
            settle_dbufs(arc, dbufs, layout);
        }
        *cpu += costs.zfs_block;
        let bytes = overlap(r, layout, r.rec);
        if writes.txgs_dirty_in_memory(key.0) || info.psize == 0 {
            // A dirty dbuf's data, or a hole's zeroes (abd_zero_off).
            r.copy_bytes += bytes;
        } else {
            // zio_read at ZIO_PRIORITY_SYNC_READ into the caller's pages: checksummed and
            // decompressed as any read, cached nowhere.
            let tag = Tag::Direct(slot as u32);
            let d = &mut direct_ios[slot];
            match pool.read(layout, key, info.psize, Priority::SyncRead, tag, now, devices) {
                Ok(done) => {
                    r.data_done = r.data_done.max(done);
                    d.done = d.done.max(done);
                }
                Err(_) => {
                    r.data_done = PENDING;
                    d.pending += 1;
                }
            }
            let decompress = if info.psize < info.lsize {
                f64::from(info.lsize) * costs.decompress_ns_per_byte
            } else {
                0.0
            };
            *cpu += costs.device_io
                + costs.zio
                + (f64::from(info.psize) * costs.checksum_ns_per_byte + decompress) as Nanos;
            self.counters.direct_reads += 1;
        }
        r.state = ReadState::Advance;
        Flow::Next
    }
}

/// dbuf_destroy → arc_buf_destroy for every dbuf the layer destroyed since the last call;
/// in 0.6 first the eviction callbacks of the dbufs whose headers the ARC evicted, and
/// after, `arc_buf_remove_ref` for the dbufs that reached zero holds.
pub(super) fn settle_dbufs(arc: &mut Arc, dbufs: &mut DbufLayer, layout: &ZfsLayout) {
    if dbufs.evicted_by_arc() {
        for key in arc.take_user_evicts() {
            dbufs.evict(key, |k| layout.parent_of(k));
        }
    }
    for (key, copy, hdr) in dbufs.take_destroyed() {
        arc.dbuf_destroyed(key, key.level() > 0, copy, hdr);
    }
    if dbufs.evicted_by_arc() {
        for (key, hdr) in dbufs.take_unheld() {
            arc.dbuf_unheld(key, hdr);
        }
    }
    // The next release will most likely destroy the cache's tail: its header is far from
    // anything recent (see support::mem_hint).
    // Its header then goes back to its evictable list and, in a full ARC, is evicted at
    // once: the L2 index slot that eviction updates is cold too.
    if let Some((key, hdr)) = dbufs.next_victim() {
        arc.prefetch_hdr(hdr);
        arc.prefetch(key);
    }
}
