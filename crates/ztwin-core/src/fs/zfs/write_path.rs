//! The ZFS write path, part of the ZFS layer: a write request's states (one tx per record,
//! the throttle, read-modify-write, dirtying) and the txg sync's writes through the vdev
//! queues (see `fs::zfs::txg` for the mechanisms and their sources). The driver steps a
//! write ([`Zfs::write`]: wait until t, throttled until the sync frees dirty data, or
//! done) and wakes the sync when [`Zfs::sync_next_at`] says ([`Zfs::sync_event`]).
//!
//! ```text
//!  WriteStart ─► ZfsWriteRecord: dmu_tx_assign: wait while dirty >= zfs_dirty_data_max
//!                  (woken when sync writes complete), dmu_tx_delay's sleep above 60%
//!             ─► ZfsWriteDirty: a partial record whose dbuf is not in memory is read first
//!                  (dbuf_will_dirty -> dbuf_read: the read walk, ARC and pool like any
//!                  read; a hole, such as a record past the end of a new file, is
//!                  zero-filled with nothing read); then dbuf_dirty: the record is charged to the open txg, holds
//!                  the writer's buffers from now on, and is in the ARC (MRU)
//!             ─► next record (a new tx, as zfs_write takes one per record) or done
//! ```
//!
//! The sync (`spa_sync` of the txg): every dirty record is written at its new psize
//! (compressed from the content its writer left) to a new place (`Pool::cow_write`),
//! then every ancestor indirect block of those records (two copies, redundant_metadata
//! = all), one dnode block per dirtied file (two copies, one sector: a block of a few
//! 512-byte dnodes compresses to that), and when all of those are on disk the uberblock
//! to the four labels of every leaf (vdev_uberblock_sync; `max(1 KiB, sector)` each).
//! Mirrors write every child. The writes go to each leaf's vdev queue
//! (`fs::zfs::vdev_queue`) in its async-write class, which issues at most
//! `vdev_queue_max_async_writes` at a time and aggregates adjacent ones, so reads (sync
//! reads first) reach a disk between them; the uberblocks in the sync-write class.
//! Before its I/O, each block's zio is compressed and checksummed by a thread of the
//! write issue taskq on the vCPUs (`fs::zfs::wr_iss`): a block reaches its queues when
//! that work is done.
//!
//! Each record a write dirties is logged for the intent log (`zfs_log_write`, see `zil`)
//! when the variant can commit it; a commit ([`Zfs::commit`]) writes log blocks and, for
//! WR_INDIRECT records, the records themselves (`dmu_sync`): such a record is written by
//! the sync without its data (`DR_OVERRIDDEN`). A synced txg drops its itxs (`zil_clean`).
//!
//! Simplifications: 1. the meta-dnode's indirect blocks, the objset block, the MOS and the
//! space maps are not written (a few blocks per txg); 2. a dirty record's dirty bytes come
//! back as its writes complete, split evenly over a mirror's children; 3. quiescing takes
//! no time; 4. full-record writes do not read the parent indirect blocks that dbuf_findbp
//! holds (partial ones read the whole path); 5. (gone: the sync's compression and
//! checksums run on the vCPUs, `wr_iss`); 6. the sync sends no cache flushes
//! (`vdev_config_sync` flushes the vdevs written before and after the uberblocks): only
//! the intent log's flushes are modelled; 7. a new file that takes an existing file's
//! place ([`Zfs::new_file`]: a binary log file after a rotation) keeps the object number
//! and the tree height of the file before it: its records are holes again and its cached
//! blocks are dropped (a real new file is a new object whose tree grows as it is written;
//! its records and indirect blocks past the end are holes to `dbuf_findbp`, which returns
//! ENOENT there, so nothing is read for them either way); the creation's own ZIL record
//! (TX_CREATE) and dnode are not written.
//!
//! Sources for the write to a hole: module/zfs/dmu.c `dmu_write_uio_dnode` (a record
//! covered whole: `dmu_buf_will_fill`, no read; in part: `dmu_buf_will_dirty` ->
//! `dbuf_read`), module/zfs/dbuf.c `dbuf_findbp` (ENOENT past the dnode's block pointers or
//! its maxblkid) and `dbuf_read_impl` (a NULL or hole block pointer, or a block freed in
//! an open txg, `dnode_block_freed`: zero-filled, DB_CACHED, no I/O) at zfs-0.8.6;
//! `dbuf_read_hole` at zfs-2.2.0, the same rule.

use serde_json::{json, Value};

use crate::cache::arc::BlockKey;
use crate::config::Compression;
use crate::config::DirectProperty;
use crate::config::{VariantConfig, ZfsConfig};
use crate::dev::cpu::Cpus;
use crate::dev::device::{Device, Op};
use crate::fs::zfs::content::CLASS_HOLE;
use crate::fs::zfs::direct::{setup_direct, ZFS_VDEV_DIRECT_WRITE_VERIFY};
use crate::fs::zfs::layer::{ReadStep, Zfs, ZfsRead};
use crate::fs::zfs::pool::{Pool, VDEV_LABEL_START_SIZE};
use crate::fs::zfs::txg::{max_async_writes, Assign, LeafWrite, Txgs, WriteParams, FLAGS, OVERRIDDEN};
use crate::fs::zfs::vdev_queue::{Priority, Request, Tag};
use crate::fs::zfs::wr_iss::{issue_threads, IssueTaskq};
use crate::fs::zfs::zil::{Zil, ZilIo, ZilStats};
use crate::sim::time::{Nanos, SEC};

fn secs(t: Nanos) -> f64 {
    t as f64 / SEC as f64
}

/// Where the syncing txg is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncPhase {
    Idle,
    /// Its data and metadata writes are queued or in flight.
    Blocks,
    /// Its uberblock writes: those still queued, and when those issued complete.
    Uberblock {
        pending: u32,
        end: Nanos,
    },
}

/// What one txg's sync wrote (for reports and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxgRecord {
    /// The txg number.
    pub(crate) txg: u64,
    /// When its sync started and when its uberblocks were on disk.
    pub(crate) start: Nanos,
    pub(crate) end: Nanos,
    /// Records synced and the dirty bytes they had been charged.
    pub(crate) records: u64,
    /// Records the intent log's dmu_sync had written (no data write in the sync).
    pub(crate) overridden_records: u64,
    pub(crate) dirty_bytes: u64,
    /// Allocated bytes of the records (their psize rounded to sectors), of the rewritten
    /// indirect blocks (both copies), of the dnode blocks, of the uberblocks (all leaves).
    pub(crate) data_bytes: u64,
    pub(crate) indirect_bytes: u64,
    pub(crate) indirect_blocks: u64,
    pub(crate) dnode_bytes: u64,
    pub(crate) uberblock_bytes: u64,
    /// Bytes submitted to leaf devices (mirrors count every child).
    pub(crate) leaf_bytes: u64,
    /// CPU time of its blocks' zios in the write issue taskq (`wr_iss`), ns.
    pub(crate) issue_cpu_ns: u64,
}

/// The pool's write path state.
pub struct WritePath {
    txgs: Txgs,
    /// The last `vdev_queue_max_async_writes` computed, and the dirty bytes it is for.
    async_max: std::cell::Cell<(u64, u32)>,
    /// The dataset's `direct` property in force (disabled before 2.3).
    pub(super) direct: DirectProperty,
    /// The intent logs, when the variant can commit them (`zil::wanted`): one per
    /// dataset (the tables', then the database logs' when they have a dataset of their
    /// own, `log_recordsize`: objects from `log_from` on).
    pub(super) zils: Vec<Zil>,
    /// The first object of the second dataset (u32::MAX: one dataset).
    log_from: u32,
    /// The syncing txg's writes the vdev queues issued (completion, dirty bytes given
    /// back), and its writes not yet complete (queued or issued).
    inflight: Vec<(Nanos, u64)>,
    /// The earliest completion in `inflight`.
    inflight_min: Option<Nanos>,
    outstanding: u64,
    phase: SyncPhase,
    current: TxgRecord,
    log: Vec<TxgRecord>,
    /// Leaf devices of the pool's data vdevs.
    leaves: Vec<usize>,
    /// Each device's capacity (where its last two labels are).
    capacities: Vec<u64>,
    /// Next offset on each leaf of a one-disk solid-state pool (positions not modelled).
    plain_cursor: u64,
    /// A sync's working lists, kept to reuse their capacity: the records, their ancestor
    /// indirect blocks, the dirtied objects, the writes per leaf before aggregation.
    scratch: Vec<(u64, u32)>,
    ancestors: Vec<(u64, u64)>,
    objects: Vec<u32>,
    /// The write issue taskq: the sync's blocks compressed and checksummed before their
    /// writes reach the vdev queues.
    issue: IssueTaskq,
    /// Writers waiting in dmu_tx_wait for dirty data to drop under the max.
    throttled: Vec<u32>,
    /// Writers the last sync event released (taken by the driver).
    woken: Vec<u32>,
}

impl WritePath {
    /// The write path of pool `pool` of variant `cfg`.
    pub fn new(cfg: &VariantConfig, z: &ZfsConfig, pool: &Pool) -> WritePath {
        // 0.6's write throttle (the 2012 one, before the dirty-data throttle of 0.6.3) is
        // not modelled: 0.8's stands in for it.
        let sync_on_total = z.release.features().sync_on_total;
        let params = WriteParams::new(&z.txg, cfg.machine.ram_bytes, sync_on_total);
        let leaves = (0..pool.nvdevs()).flat_map(|k| pool.children(k).iter().copied()).collect();
        WritePath {
            async_max: std::cell::Cell::new((0, max_async_writes(&params, 0))),
            txgs: Txgs::new(params, z.recordsize),
            direct: z.direct(),
            zils: Vec::new(),
            log_from: u32::MAX,
            inflight: Vec::new(),
            inflight_min: None,
            outstanding: 0,
            phase: SyncPhase::Idle,
            current: TxgRecord::default(),
            log: Vec::new(),
            leaves,
            capacities: cfg.devices.iter().map(|d| d.capacity_bytes.unwrap_or(0)).collect(),
            plain_cursor: 0,
            scratch: Vec::new(),
            ancestors: Vec::new(),
            objects: Vec::new(),
            issue: IssueTaskq::new(issue_threads(
                cfg.machine.vcpus,
                z.release.features().zio_taskq_batch_pct,
            )),
            throttled: Vec::new(),
            woken: Vec::new(),
        }
    }

    /// `vdev_queue_max_async_writes` at the pool's dirty data.
    pub(super) fn async_write_max(&self) -> u32 {
        let dirty = self.txgs.dirty_total();
        let (at, n) = self.async_max.get();
        if at == dirty {
            return n;
        }
        let n = max_async_writes(&self.txgs.params, dirty);
        self.async_max.set((dirty, n));
        n
    }

    /// Whether record `key` is dirty in the open txg with its data in memory.
    pub(super) fn txgs_dirty_in_memory(&self, key: u64) -> bool {
        self.txgs.is_dirty(key)
    }

    /// A write of the syncing txg that the vdev queue held is issued: it completes at
    /// `done`, giving back `undirty` dirty bytes; `bytes` went to the leaf.
    pub(super) fn txg_write_issued(&mut self, done: Nanos, undirty: u64, bytes: u32) {
        self.inflight.push((done, undirty));
        self.inflight_min = Some(self.inflight_min.map_or(done, |m| m.min(done)));
        self.current.leaf_bytes += u64::from(bytes);
    }

    /// An uberblock write the vdev queue held is issued: it completes at `done`.
    pub(super) fn uberblock_issued(&mut self, done: Nanos) {
        if let SyncPhase::Uberblock { pending, end } = &mut self.phase {
            *pending -= 1;
            *end = (*end).max(done);
        }
    }

    /// When the write path next has something to do: a write completes, the uberblock is
    /// on disk, or a sync is due (the vdev queues' own wake-ups are the layer's).
    pub fn next_at(&self) -> Option<Nanos> {
        let mut t = self.inflight_min;
        if let Some(o) = self.issue.next_at() {
            t = Some(t.map_or(o, |x| x.min(o)));
        }
        let other = match self.phase {
            SyncPhase::Idle => self.txgs.sync_due(),
            SyncPhase::Uberblock { pending: 0, end } => Some(end),
            SyncPhase::Uberblock { .. } | SyncPhase::Blocks => None,
        };
        if let Some(o) = other {
            t = Some(t.map_or(o, |x| x.min(o)));
        }
        t
    }
}

/// Where a write request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteState {
    /// dmu_tx_assign of the current record's tx.
    Assign,
    /// dmu_write_uio_dbuf of the current record (after its read if it needs one).
    Dirty,
    /// The read-modify-write read of the current record (`WriteOp::rmw_read`).
    Read,
    /// Every record is dirty; wait for the Direct I/O writes issued (`zio_wait` in
    /// `dmu_write_abd`), some perhaps held by a vdev queue.
    DirectWait,
    /// The last wait is over.
    Done,
}

/// One write request in the ZFS write path: bytes [offset, offset + len) of `object`,
/// leaving content class `class` in the records it writes.
#[derive(Debug, Clone, Copy)]
pub struct ZfsWrite {
    state: WriteState,
    object: u32,
    offset: u64,
    len: u32,
    class: u8,
    /// The record being written, the last one, the start of its tx, and whether its
    /// read-modify-write read is done.
    rec: u64,
    last: u64,
    tx_start: Nanos,
    rmw: bool,
    rmw_read: ZfsRead,
    /// An O_SYNC/O_DSYNC write (its itxs are synchronous, WR_COPIED when small).
    o_sync: bool,
    /// A Direct I/O write (2.3, see `direct`): its whole records are written at once.
    direct: bool,
    /// When its Direct I/O writes are done.
    direct_done: Nanos,
}

impl ZfsWrite {
    /// No write (a placeholder for a request that has none yet).
    pub const IDLE: ZfsWrite = ZfsWrite {
        state: WriteState::Assign,
        object: 0,
        offset: 0,
        len: 0,
        class: 0,
        rec: 0,
        last: 0,
        tx_start: 0,
        rmw: false,
        rmw_read: ZfsRead::IDLE,
        o_sync: false,
        direct: false,
        direct_done: 0,
    };
}

/// What a write step ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// The write waits until this time (dmu_tx_delay, or its read-modify-write read).
    WaitUntil(Nanos),
    /// The write waits in dmu_tx_wait until the sync brings dirty data under the max: it
    /// is among the writers a later [`Zfs::sync_event`] releases ([`Zfs::take_woken`]).
    Throttled,
    /// Every record is dirty in the open txg.
    Done,
}

impl Zfs {
    /// A write of bytes [offset, offset + len) of `object` whose data is of content class
    /// `class` (see `content`), starting at `now`; `o_sync`: the file is open O_SYNC or
    /// O_DSYNC; `o_direct`: open O_DIRECT (Direct I/O where the dataset's `direct`
    /// property makes it so, 2.3: see `direct`; a request `direct=standard` would fail
    /// with EINVAL is refused by the config check, and here goes through the ARC).
    #[allow(clippy::too_many_arguments)]
    pub fn start_write(
        &self,
        object: u32,
        offset: u64,
        len: u32,
        class: u8,
        o_sync: bool,
        o_direct: bool,
        now: Nanos,
    ) -> ZfsWrite {
        let (first, last) = self.layout.records(object, offset, len);
        let blksz = u64::from(self.layout.geometry(object).data_block_size());
        let direct = setup_direct(self.writes.direct, o_direct, true, offset, u64::from(len), blksz);
        debug_assert!(direct.is_some(), "a misaligned O_DIRECT write with direct=standard passed the check");
        ZfsWrite {
            object,
            offset,
            len,
            class,
            rec: first,
            last,
            tx_start: now,
            o_sync,
            direct: direct == Some(true),
            direct_done: now,
            ..ZfsWrite::IDLE
        }
    }

    /// A new, empty file takes `object`'s place (`open(O_CREAT)` of a new name, the file
    /// before it gone: simplification 7): every record is a hole again, and the old
    /// file's dbufs (those no reader holds) and ARC buffers go, as the old object's free
    /// would drop them (`dnode_free` -> `dbuf_free_range`, `arc_freed`). A write to a hole
    /// reads nothing (`dbuf_read` -> `dbuf_read_impl`: a NULL or hole block pointer is
    /// zero-filled, `dbuf_read_hole` in 2.x), so the new file's appends read back only the
    /// records they wrote earlier. Nothing to do for a file never written.
    pub fn new_file(&mut self, object: u32) {
        let Zfs { arc, dbufs, layout, .. } = self;
        if layout.uniform_class(object) == Some(CLASS_HOLE) {
            return;
        }
        let g = *layout.geometry(object);
        // Children first: a destroyed dbuf releases its parent, which can then go too.
        for level in 0..g.nlevels() {
            for blkid in 0..g.blocks_at(level) {
                let key = BlockKey::new(object, level, blkid);
                dbufs.discard(key, |k| layout.parent_of(k));
                arc.free(key);
            }
        }
        super::layer::settle_dbufs(arc, dbufs, layout);
        layout.set_records(object, 0, g.l0_blocks().saturating_sub(1), CLASS_HOLE);
    }

    /// Steps write `w` of writer `slot` at `now` until it waits or is done; the CPU its
    /// steps cost is added to `cpu`.
    pub fn write(
        &mut self,
        slot: usize,
        w: &mut ZfsWrite,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> WriteStep {
        self.set_async_write_max();
        let step = self.write_steps(slot, w, now, cpu, devices);
        self.route_resolved();
        step
    }

    fn write_steps(
        &mut self,
        slot: usize,
        w: &mut ZfsWrite,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> WriteStep {
        loop {
            match w.state {
                WriteState::Assign => {
                    // dmu_tx_assign of the record's tx: wait under the max, then dmu_tx_delay.
                    match self.writes.txgs.assign(w.tx_start, now) {
                        Assign::Wait => {
                            self.writes.throttled.push(slot as u32);
                            return WriteStep::Throttled;
                        }
                        Assign::At(t) => {
                            w.state = WriteState::Dirty;
                            if t > now {
                                return WriteStep::WaitUntil(t);
                            }
                        }
                    }
                }
                WriteState::Read => {
                    let mut r = w.rmw_read;
                    let step = self.read_steps(slot, &mut r, now, cpu, devices);
                    w.rmw_read = r;
                    match step {
                        ReadStep::WaitUntil(t) => return WriteStep::WaitUntil(t),
                        // Woken by the layer (take_wakeups) when the queue issues it.
                        ReadStep::Blocked => return WriteStep::Throttled,
                        ReadStep::Done => w.state = WriteState::Dirty,
                    }
                }
                WriteState::Dirty => {
                    if self.dirty_record(slot, w, now, cpu, devices) {
                        w.state = WriteState::DirectWait;
                    }
                }
                WriteState::DirectWait => {
                    // zio_wait of the Direct I/O writes (none for a buffered write).
                    let d = &mut self.direct_ios[slot];
                    if d.pending > 0 {
                        d.waiting = true;
                        return WriteStep::Throttled;
                    }
                    let done = w.direct_done.max(d.done);
                    if done > now {
                        w.direct_done = done;
                        w.state = WriteState::Done;
                        return WriteStep::WaitUntil(done);
                    }
                    return WriteStep::Done;
                }
                WriteState::Done => return WriteStep::Done,
            }
        }
    }

    /// dmu_write_uio_dbuf for one record: read it first if the write covers part of it
    /// and it is not in memory, then dirty it with the writer's content. True when that
    /// was the write's last record.
    fn dirty_record(
        &mut self,
        slot: usize,
        w: &mut ZfsWrite,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> bool {
        let object = w.object;
        let rs = u64::from(self.layout.geometry(object).data_block_size());
        let rec_start = w.rec * rs;
        let from = w.offset.max(rec_start);
        let to = (w.offset + u64::from(w.len)).min(rec_start + rs);
        let chunk = to.saturating_sub(from);
        if w.direct && chunk == rs {
            // dmu_write_uio_dnode: a whole record of a Direct I/O write goes direct.
            self.direct_write_record(slot, w, now, cpu, devices);
        } else {
            self.dirty_record_buffered(w, chunk, now, cpu);
            if w.state == WriteState::Read {
                return false;
            }
        }
        if w.rec < w.last {
            w.rec += 1;
            w.tx_start = now;
            w.state = WriteState::Assign;
            return false;
        }
        true
    }

    /// dmu_write_uio_dbuf's part for one record through the ARC: read it first (state
    /// `Read`) if the write covers `chunk` < a record of it and it is not in memory, else
    /// dirty it with the writer's content.
    fn dirty_record_buffered(&mut self, w: &mut ZfsWrite, chunk: u64, now: Nanos, cpu: &mut Nanos) {
        let Zfs { arc, dbufs, layout, data_flags, writes, costs, .. } = self;
        let object = w.object;
        let rs = u64::from(layout.geometry(object).data_block_size());
        let key = layout.key(object, w.rec, 0);
        if chunk < rs && !w.rmw && !dbufs.exists(key) && !writes.txgs.is_dirty(key.0) {
            // dbuf_will_dirty -> dbuf_read of the whole record: the read walk.
            w.rmw = true;
            w.rmw_read = ZfsRead::rmw(layout, object, w.rec, now);
            w.state = WriteState::Read;
            return;
        }
        w.rmw = false;
        writes.txgs.dirty(key.0, rs as u32, now);
        let txg = writes.txgs.open_txg();
        if let Some(zil) = writes.zil_of(object) {
            // zfs_log_write of the chunk, in the open txg (WR_INDIRECT for a Direct I/O
            // write's misaligned piece).
            let direct = w.direct.then_some(false);
            *cpu += zil.log_write(object, w.rec, chunk as u32, w.o_sync, direct, txg, costs);
        }
        layout.set_record(object, w.rec, w.class);
        let info = layout.block(object, w.rec, 0).1;
        // The dirty buffer is in memory from now on: reads find it (arc_write_done puts
        // it on MRU at sync; the model does it now).
        arc.write_done(key, info, *data_flags, now);
        *cpu += costs.zfs_block + (chunk as f64 * costs.memcpy_ns_per_byte) as Nanos;
    }

    /// `dmu_write_direct` of the current record (see `direct`): the dbuf's data and the old
    /// block's ARC header go, the record is dirty and overridden in the open txg, its new
    /// block is written at once to a new place (every leaf of a mirror) at sync-write
    /// priority, and the write's completion is waited for at the request's end.
    fn direct_write_record(
        &mut self,
        slot: usize,
        w: &mut ZfsWrite,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) {
        let Zfs { arc, dbufs, layout, writes, costs, pool, direct_ios, .. } = self;
        let object = w.object;
        let rs = layout.geometry(object).data_block_size();
        let key = layout.key(object, w.rec, 0);
        // dmu_buf_will_clone_or_dio: the dbuf loses its buffer (simplification 2).
        if dbufs.discard(key, |k| layout.parent_of(k)) {
            super::layer::settle_dbufs(arc, dbufs, layout);
        }
        arc.free(key);
        writes.txgs.dirty_direct(key.0, rs, now);
        let txg = writes.txgs.open_txg();
        if let Some(zil) = writes.zil_of(object) {
            *cpu += zil.log_write(object, w.rec, rs, w.o_sync, Some(true), txg, costs);
        }
        layout.set_record(object, w.rec, w.class);
        let info = layout.block(object, w.rec, 0).1;
        let asize = u64::from(layout.compression.asize(info.psize));
        let checksum = (f64::from(info.psize) * costs.checksum_ns_per_byte) as Nanos;
        // The write's zio compresses the record (by the dataset's algorithm) as the sync's do.
        let compress = costs.compress(layout.compression.algorithm(), info.lsize);
        *cpu += costs.zfs_block + costs.zio + compress + checksum;
        if asize == 0 {
            // All zeroes compress to a hole: nothing is written.
            return;
        }
        // zio_write at ZIO_PRIORITY_SYNC_WRITE to every leaf of the new place, through
        // their vdev queues; zio_dio_checksum_verify after each leaf write.
        let (top, offset) = match pool.cow_write(key, asize, false) {
            Some((d0, _)) => (d0.vdev as usize, d0.offset + VDEV_LABEL_START_SIZE),
            // A one-device solid-state pool: positions are not modelled (the sync's cursor).
            None => {
                writes.plain_cursor += asize;
                (0, writes.plain_cursor - asize)
            }
        };
        let d = &mut direct_ios[slot];
        let nleaves = if pool.is_plain() { 1 } else { pool.children(top).len() };
        for n in 0..nleaves {
            let leaf = pool.children(top)[n];
            let req = Request::new(
                leaf,
                offset,
                asize as u32,
                Op::Write,
                Priority::SyncWrite,
                Tag::Direct(slot as u32),
            );
            match pool.submit(req, now, devices) {
                Some(done) => w.direct_done = w.direct_done.max(done),
                None => d.pending += 1,
            }
            *cpu += costs.device_io + if ZFS_VDEV_DIRECT_WRITE_VERIFY { checksum } else { 0 };
        }
    }

    /// When the write path next has something to do (see `WritePath::next_at`), if ever.
    pub fn sync_next_at(&self) -> Option<Nanos> {
        match (self.writes.next_at(), self.pool.vq.next_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether writers wait in dmu_tx_wait, or clients or prefetches for I/O a vdev queue
    /// holds: the sync's events ([`Zfs::sync_event`]) release both.
    pub fn writers_throttled(&self) -> bool {
        !self.writes.throttled.is_empty() || self.blocked_on_queues()
    }

    /// The writers the last sync events released, in the order they waited.
    pub fn take_woken(&mut self) -> std::vec::Drain<'_, u32> {
        self.writes.woken.drain(..)
    }

    /// Runs the write path's events up to `now` (completions, uberblocks, a sync start),
    /// then issues what the vdev queues allow. Writers it releases: [`Zfs::take_woken`].
    pub fn sync_event(&mut self, now: Nanos, cpus: &mut Cpus, devices: &mut [Device]) {
        // vdev_queue_io_done: the vdev queues issue what completions make room for.
        self.set_async_write_max();
        self.pool.vq.advance(now, devices);
        self.route_resolved();
        let w = &mut self.writes;
        // Completions: dirty bytes come back; throttled writers retry.
        let mut freed = false;
        let (txgs, outstanding) = (&mut w.txgs, &mut w.outstanding);
        let mut min: Option<Nanos> = None;
        w.inflight.retain(|&(done, undirty)| {
            if done <= now {
                txgs.undirty(undirty);
                *outstanding -= 1;
                freed = true;
                false
            } else {
                min = Some(min.map_or(done, |m| m.min(done)));
                true
            }
        });
        w.inflight_min = min;
        if freed && w.txgs.dirty_total() < w.txgs.params.dirty_data_max {
            w.woken.append(&mut w.throttled);
        }
        match w.phase {
            SyncPhase::Uberblock { pending: 0, end } if end <= now => {
                w.txgs.sync_done(now);
                for zil in &mut w.zils {
                    zil.clean(w.current.txg);
                }
                w.current.end = now;
                w.log.push(w.current);
                w.phase = SyncPhase::Idle;
                if w.txgs.dirty_total() < w.txgs.params.dirty_data_max {
                    w.woken.append(&mut w.throttled);
                }
            }
            SyncPhase::Idle if w.txgs.sync_due().is_some_and(|d| d <= now) => {
                self.begin_sync(now);
                // The sync gave back the charge of what it need not write.
                self.set_async_write_max();
            }
            SyncPhase::Idle | SyncPhase::Blocks | SyncPhase::Uberblock { .. } => {}
        }
        self.run_issue(now, cpus, devices);
        self.uberblocks(now, devices);
        self.route_resolved();
    }

    /// The async write class's maximum in force for the vdev queues
    /// (`vdev_queue_max_async_writes` at the pool's dirty data).
    pub(super) fn set_async_write_max(&mut self) {
        let n = self.writes.async_write_max();
        self.pool.vq.set_async_write_max(n);
    }

    /// spa_sync of the open txg at `now`: plans every write (see the module docs) and gives
    /// each block's writes to the write issue taskq, as a job of that block's CPU.
    fn begin_sync(&mut self, now: Nanos) {
        let Zfs { writes: w, arc, layout, pool, meta_flags, costs, .. } = self;
        // The CPU of a block's zio in the write issue taskq (see `wr_iss`): compression
        // over its logical size (data by the dataset's algorithm, metadata always),
        // fletcher4 over its physical size, and each leaf write's zio and device I/O.
        let checksum = |n: u64| (n as f64 * costs.checksum_ns_per_byte) as Nanos;
        let per_write = costs.zio + costs.device_io;
        let algorithm = layout.compression.algorithm();
        let queued_before = w.issue.queued_ns;
        let txg = w.txgs.begin_sync(now, &mut w.scratch);
        w.current = TxgRecord { txg, start: now, ..TxgRecord::default() };
        let sector = layout.compression.sector_size();
        let mut ancestors = std::mem::take(&mut w.ancestors);
        let mut objects = std::mem::take(&mut w.objects);
        ancestors.clear();
        objects.clear();
        let scratch = std::mem::take(&mut w.scratch);
        for &(k, flagged) in &scratch {
            let key = BlockKey(k);
            let (object, blkid) = (key.object(), key.blkid());
            let charged = flagged & !FLAGS;
            w.current.records += 1;
            w.current.dirty_bytes += u64::from(charged);
            let info = layout.block(object, blkid, 0).1;
            let asize = u64::from(layout.compression.asize(info.psize));
            if flagged & OVERRIDDEN != 0 {
                // dmu_sync wrote it for the intent log (DR_OVERRIDDEN): the sync's write
                // takes the block pointer as it is, no I/O; the charge comes back at once.
                w.txgs.undirty(u64::from(charged));
                w.current.overridden_records += 1;
            } else if asize == 0 {
                // A hole or embedded: nothing to write, the charge comes back at once.
                w.txgs.undirty(u64::from(charged));
            } else {
                w.current.data_bytes += asize;
                let n = place(w, pool, key, asize, false, u64::from(charged));
                let compress = costs.compress(algorithm, info.lsize);
                w.issue.end_job(compress + checksum(asize) + n * per_write);
            }
            for level in 1..layout.nlevels(object) {
                ancestors.push((layout.key(object, blkid, level).0, blkid));
            }
            if objects.last() != Some(&object) {
                objects.push(object);
            }
        }
        w.scratch = scratch;
        ancestors.sort_unstable();
        ancestors.dedup_by_key(|a| a.0);
        for &(k, l0) in &ancestors {
            let key = BlockKey(k);
            let (key2, info) = layout.block(key.object(), l0, key.level());
            debug_assert_eq!(key, key2);
            let asize = u64::from(layout.compression.asize(info.psize));
            if asize > 0 {
                w.current.indirect_blocks += 1;
                w.current.indirect_bytes += 2 * asize;
                let n = place(w, pool, key, asize, true, 0);
                // Metadata is compressed whatever the dataset's setting (lz4).
                w.issue
                    .end_job(costs.compress(Compression::Lz4, info.lsize) + checksum(asize) + n * per_write);
            }
            arc.write_done(key, info, *meta_flags, now);
        }
        objects.dedup();
        for &object in &objects {
            // The dnode block holding the file's dnode (object 0 of the objset, level 0).
            let key = BlockKey::new(0, 0, u64::from(object) / 32);
            w.current.dnode_bytes += 2 * u64::from(sector);
            let n = place(w, pool, key, u64::from(sector), true, 0);
            w.issue.end_job(checksum(u64::from(sector)) + n * per_write);
        }
        w.ancestors = ancestors;
        w.objects = objects;
        w.current.issue_cpu_ns = w.issue.queued_ns - queued_before;
        w.phase = SyncPhase::Blocks;
    }

    /// The write issue taskq at `now`: the blocks whose CPU work is done go to their
    /// leaves' vdev queues (async write class, aggregated there); free threads take the
    /// next blocks.
    fn run_issue(&mut self, now: Nanos, cpus: &mut Cpus, devices: &mut [Device]) {
        let Zfs { writes: w, pool, .. } = self;
        let mut issue = std::mem::take(&mut w.issue);
        issue.step(now, cpus, |leaf, lw| {
            let req = Request::new(
                leaf,
                lw.offset,
                lw.bytes,
                Op::Write,
                Priority::AsyncWrite,
                Tag::Txg(lw.undirty, lw.bytes),
            );
            w.outstanding += 1;
            if let Some(done) = pool.submit(req, now, devices) {
                w.txg_write_issued(done, lw.undirty, lw.bytes);
            }
        });
        w.issue = issue;
        self.route_resolved();
    }

    /// A txg whose blocks are all written gets its uberblocks (vdev_uberblock_sync: every
    /// leaf's four labels, sync-write class, physical I/O).
    fn uberblocks(&mut self, now: Nanos, devices: &mut [Device]) {
        let sector = self.layout.compression.sector_size();
        let Zfs { writes: w, pool, .. } = self;
        if w.phase != SyncPhase::Blocks || w.outstanding > 0 || !w.issue.idle() {
            return;
        }
        let ub = sector.max(1024);
        w.phase = SyncPhase::Uberblock { pending: 0, end: now };
        for k in 0..w.leaves.len() {
            let leaf = w.leaves[k];
            let size = w.capacities[leaf];
            for label in 0..4u64 {
                // Labels 0 and 1 at the start, 2 and 3 in the last 512 KiB; the
                // uberblock ring is the second half of each 256 KiB label.
                let base = if label < 2 { label << 18 } else { size.saturating_sub((4 - label) << 18) };
                let mut req = Request::new(
                    leaf,
                    base + (128 << 10),
                    ub,
                    Op::Write,
                    Priority::SyncWrite,
                    Tag::Uberblock,
                );
                req.physical = true;
                let issued = pool.submit(req, now, devices);
                if let SyncPhase::Uberblock { pending, end } = &mut w.phase {
                    match issued {
                        Some(done) => *end = (*end).max(done),
                        None => *pending += 1,
                    }
                }
                w.current.uberblock_bytes += u64::from(ub);
                w.current.leaf_bytes += u64::from(ub);
            }
        }
    }

    /// Txgs synced so far (a mark for [`Zfs::write_report`]).
    pub fn txgs_synced(&self) -> usize {
        self.writes.log.len()
    }

    /// The write path during a phase: the txgs synced since the `from`-th, the throttle's
    /// counters so far, and the dirty data left to sync.
    pub fn write_report(&self, from: usize) -> Value {
        let w = &self.writes;
        let zil = !w.zils.is_empty();
        let synced = &w.log[from.min(w.log.len())..];
        let sum = |f: fn(&TxgRecord) -> u64| synced.iter().map(f).sum::<u64>();
        json!({
            "txgs_synced": synced.len(),
            "synced_dirty_bytes": sum(|t| t.dirty_bytes),
            "synced_data_bytes": sum(|t| t.data_bytes),
            "synced_indirect_bytes": sum(|t| t.indirect_bytes),
            "synced_leaf_bytes": sum(|t| t.leaf_bytes),
            // The write issue taskq's (z_wr_iss) CPU: compression, checksums, zios.
            "issue_cpu_s": secs(sum(|t| t.issue_cpu_ns)),
            "sync_s_mean": if synced.is_empty() { 0.0 } else { secs(sum(|t| t.end - t.start)) / synced.len() as f64 },
            "zfs_dirty_data_max": w.txgs.params.dirty_data_max,
            "dirty_high_bytes": w.txgs.dirty_high,
            "dirty_left_bytes": w.txgs.dirty_total(),
            "delayed_txs": w.txgs.delayed_txs,
            "dirty_over_max_waits": w.txgs.waited_txs,
            "txgs": synced.iter().take(16).map(|t| {
                let mut doc = json!({
                    "txg": t.txg,
                    "start_s": secs(t.start),
                    "end_s": secs(t.end),
                    "records": t.records,
                    "dirty_bytes": t.dirty_bytes,
                    "data_bytes": t.data_bytes,
                    "indirect_blocks": t.indirect_blocks,
                    "indirect_bytes": t.indirect_bytes,
                    "dnode_bytes": t.dnode_bytes,
                    "uberblock_bytes": t.uberblock_bytes,
                    "leaf_bytes": t.leaf_bytes,
                    "issue_cpu_s": secs(t.issue_cpu_ns),
                });
                if zil {
                    // Records whose data dmu_sync had written (no data write here).
                    doc["overridden_records"] = json!(t.overridden_records);
                }
                doc
            }).collect::<Vec<_>>(),
        })
    }

    /// Runs the write path from `from` until every dirty byte is on disk (an export or a
    /// clean reboot: spa_export -> txg_wait_synced); returns when it is.
    pub fn write_flush(&mut self, from: Nanos, cpus: &mut Cpus, devices: &mut [Device]) -> Nanos {
        let mut t = from;
        while let Some(next) = self.sync_next_at() {
            t = t.max(next);
            self.sync_event(t, cpus, devices);
        }
        t
    }
}

/// What a commit (`zil_commit`) ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// It returned at once.
    Done,
    /// The client waits until the log releases it ([`Zfs::take_zil_woken`]); then
    /// [`Zfs::commit_finish`].
    Wait,
}

impl WritePath {
    /// The intent log of the dataset `object` is in.
    #[inline]
    pub(super) fn zil_of(&mut self, object: u32) -> Option<&mut Zil> {
        let d = self.dataset_of(object);
        self.zils.get_mut(d)
    }

    /// The dataset of `object` (0: the tables', 1: the database logs' own).
    fn dataset_of(&self, object: u32) -> usize {
        usize::from(object >= self.log_from && self.zils.len() > 1)
    }
}

impl Zfs {
    /// Attaches the datasets' intent logs (see `zil::wanted`): the tables' dataset's, and
    /// the database logs' when they are in a dataset of their own (objects from
    /// `log_from` on).
    pub fn attach_zils(&mut self, zils: Vec<Zil>, log_from: u32) {
        self.writes.zils = zils;
        self.writes.log_from = log_from;
    }

    /// Builds the dataset's intent log (see `zil::wanted`): one dataset.
    pub fn attach_zil(&mut self, zil: Zil) {
        self.attach_zils(vec![zil], u32::MAX);
    }

    /// Splits the layer into what dataset `d`'s log's operations touch.
    fn zil_parts<'a>(&'a mut self, d: usize, devices: &'a mut [Device]) -> Option<(&'a mut Zil, ZilIo<'a>)> {
        self.writes.zils.get(d)?;
        self.set_async_write_max();
        let Zfs { writes, pool, layout, costs, .. } = self;
        let WritePath { txgs, zils, .. } = writes;
        let zil = zils.get_mut(d)?;
        Some((zil, ZilIo { txgs, pool, layout, devices, costs }))
    }

    /// Whether the dataset has an intent log (the variant can commit it).
    pub fn has_zil(&self) -> bool {
        !self.writes.zils.is_empty()
    }

    /// `sync=always`: `zfs_read` commits the log of the file before reading it.
    pub fn commits_reads(&self) -> bool {
        self.writes.zils.first().is_some_and(|z| z.params().sync == crate::config::SyncProperty::Always)
    }

    /// `zfs_write`'s commit: after an O_SYNC/O_DSYNC write, or any write with
    /// `sync=always`.
    pub fn commits_write(&self, o_sync: bool) -> bool {
        self.writes
            .zils
            .first()
            .is_some_and(|z| o_sync || z.params().sync == crate::config::SyncProperty::Always)
    }

    /// `zil_commit` of `object` by client `slot` at `now` (an fsync, or the end of a
    /// synchronous write), on the log of the object's dataset; its CPU is added to `cpu`.
    pub fn commit(
        &mut self,
        slot: usize,
        object: u32,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> CommitStep {
        let d = self.writes.dataset_of(object);
        let Some((zil, mut io)) = self.zil_parts(d, devices) else { return CommitStep::Done };
        let done = zil.commit(&mut io, slot, object, now, cpu);
        self.route_resolved();
        if done {
            CommitStep::Done
        } else {
            CommitStep::Wait
        }
    }

    /// Client `slot`'s commit is done (true) once the log released it.
    pub fn commit_finish(&mut self, slot: usize) -> bool {
        self.writes.zils.iter_mut().fold(true, |done, z| z.finish(slot) && done)
    }

    /// When an intent log next has something to do, if ever.
    pub fn zil_next_at(&self) -> Option<Nanos> {
        self.writes.zils.iter().filter_map(|z| z.next_at()).min()
    }

    /// Whether clients wait for an intent log.
    pub fn zil_waiting(&self) -> bool {
        self.writes.zils.iter().any(|z| z.waiting())
    }

    /// Runs the intent logs' events due at `now` (the datasets' in order).
    pub fn zil_event(&mut self, now: Nanos, devices: &mut [Device]) {
        for d in 0..self.writes.zils.len() {
            if self.writes.zils[d].next_at().is_some_and(|t| t <= now) || self.writes.zils.len() == 1 {
                if let Some((zil, mut io)) = self.zil_parts(d, devices) {
                    zil.event(&mut io, now);
                }
            }
        }
        self.route_resolved();
    }

    /// The clients the intent logs released since the last call.
    pub fn take_zil_woken(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.writes.zils.iter_mut().flat_map(|z| z.take_woken())
    }

    /// The intent logs' counters (summed, as the kstat sums them), if there is one.
    pub fn zil_stats(&self) -> Option<ZilStats> {
        let (first, rest) = self.writes.zils.split_first()?;
        let mut s = first.stats();
        for z in rest {
            s += z.stats();
        }
        Some(s)
    }

    /// Each dataset's log's counters (the tables' first).
    pub fn zil_stats_by_dataset(&self) -> Vec<ZilStats> {
        self.writes.zils.iter().map(|z| z.stats()).collect()
    }

    /// `zfs set logbias` on every dataset's log. It changes how later sync writes are
    /// logged (`ZilParams::log_state`) and nothing else, so on logs that have logged
    /// nothing yet (`zil_stats` all zero) it leaves them as a run with `logbias` from the
    /// start would have them (`run::share`).
    pub fn set_logbias(&mut self, logbias: crate::config::Logbias) {
        for z in &mut self.writes.zils {
            z.set_logbias(logbias);
        }
    }

    /// The `/proc/spl/kstat/zfs/zil` rows of the release, over a window.
    pub fn zil_report(&self, a: &ZilStats, b: &ZilStats) -> Value {
        let Some(zil) = self.writes.zils.first() else { return Value::Object(Default::default()) };
        let mut m = serde_json::Map::new();
        for (name, v) in b.rows(a, &zil.params().features) {
            m.insert(name.into(), json!(v));
        }
        Value::Object(m)
    }

    /// Before a restart: the logs' blocks in flight complete, then the logs forget their
    /// itxs (the export synced every txg) and their waiters. Returns when they are quiet.
    pub fn zil_restart(&mut self, from: Nanos, devices: &mut [Device]) -> Nanos {
        let mut t = from;
        while let Some(next) = self.zil_next_at() {
            t = t.max(next);
            self.zil_event(t, devices);
        }
        for z in &mut self.writes.zils {
            z.restart();
        }
        t
    }

    /// Forgets the logs' waiters (the run abandons what never completes).
    pub fn zil_abandon(&mut self) {
        for z in &mut self.writes.zils {
            z.abandon();
        }
    }
}

/// Queues the writes of block `key`'s new copies (`ditto`: two) on their leaves.
/// Gives the writes of block `key`'s new copies (`ditto`: two) to the write issue taskq's
/// job being built; returns how many leaf writes they are.
fn place(w: &mut WritePath, pool: &mut Pool, key: BlockKey, asize: u64, ditto: bool, undirty: u64) -> u64 {
    let mut n = 0;
    match pool.cow_write(key, asize, ditto) {
        Some((d0, d1)) => {
            for (copy, dva) in std::iter::once(d0).chain(d1).enumerate() {
                let children = pool.children(dva.vdev as usize);
                let share = if copy == 0 { undirty / children.len() as u64 } else { 0 };
                for (ci, &leaf) in children.iter().enumerate() {
                    // The remainder of an uneven split goes to the first child.
                    let extra = if copy == 0 && ci == 0 { undirty % children.len() as u64 } else { 0 };
                    n += 1;
                    w.issue.push_write(
                        leaf,
                        LeafWrite {
                            offset: dva.offset + VDEV_LABEL_START_SIZE,
                            bytes: asize as u32,
                            undirty: share + extra,
                        },
                    );
                }
            }
        }
        None => {
            let leaf = pool.children(0)[0];
            for k in 0..(1 + u64::from(ditto)) {
                w.issue.push_write(
                    leaf,
                    LeafWrite {
                        offset: w.plain_cursor,
                        bytes: asize as u32,
                        undirty: if k == 0 { undirty } else { 0 },
                    },
                );
                n += 1;
                w.plain_cursor += asize;
            }
        }
    }
    n
}
