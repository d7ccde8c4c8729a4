//! The ZFS write path in the driver: a write request's states (one tx per record, the
//! throttle, read-modify-write, dirtying) and the txg sync's writes through the vdev
//! queues (see `fs::zfs::txg` for the mechanisms and their sources).
//!
//! ```text
//!  WriteStart ─► ZfsWriteRecord: dmu_tx_assign: wait while dirty >= zfs_dirty_data_max
//!                  (woken when sync writes complete), dmu_tx_delay's sleep above 60%
//!             ─► ZfsWriteDirty: a partial record whose dbuf is not in memory is read first
//!                  (dbuf_will_dirty -> dbuf_read: the read walk, ARC and pool like any
//!                  read); then dbuf_dirty: the record is charged to the open txg, holds
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
//! Mirrors write every child. Writes are aggregated per leaf and issued at most
//! `vdev_queue_max_async_writes` at a time, so reads reach a disk between them.
//!
//! Simplifications: 1. the meta-dnode's indirect blocks, the objset block, the MOS and the
//! space maps are not written (a few blocks per txg); 2. a dirty record's dirty bytes come
//! back as its writes complete, split evenly over a mirror's children; 3. quiescing takes
//! no time; 4. full-record writes do not read the parent indirect blocks that dbuf_findbp
//! holds (partial ones read the whole path); 5. the compression and checksum CPU of the
//! sync (zio taskqs) is not charged to the vCPUs; 6. the ZIL is not modelled: fio's
//! fsync/end_fsync/sync are refused where jobs are parsed.

use std::collections::VecDeque;

use super::*;
use crate::cache::arc::BlockKey;
use crate::fs::zfs::pool::VDEV_LABEL_START_SIZE;
use crate::fs::zfs::txg::{aggregate, max_async_writes, Assign, LeafWrite, Txgs, WriteParams};

/// Where the syncing txg is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncPhase {
    Idle,
    /// Its data and metadata writes are queued or in flight.
    Blocks,
    /// Its uberblock writes complete at this time.
    Uberblock(Nanos),
}

/// What one txg's sync wrote (for reports and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TxgRecord {
    pub txg: u64,
    pub start: Nanos,
    pub end: Nanos,
    /// Records synced and the dirty bytes they had been charged.
    pub records: u64,
    pub dirty_bytes: u64,
    /// Allocated bytes of the records (their psize rounded to sectors), of the rewritten
    /// indirect blocks (both copies), of the dnode blocks, of the uberblocks (all leaves).
    pub data_bytes: u64,
    pub indirect_bytes: u64,
    pub indirect_blocks: u64,
    pub dnode_bytes: u64,
    pub uberblock_bytes: u64,
    /// Bytes submitted to leaf devices (mirrors count every child).
    pub leaf_bytes: u64,
}

/// The pool's write path state.
pub(super) struct WritePath {
    pub txgs: Txgs,
    /// Per leaf device: writes waiting in the vdev queue, and those issued (completion,
    /// dirty bytes given back).
    pending: Vec<VecDeque<LeafWrite>>,
    inflight: Vec<Vec<(Nanos, u64)>>,
    phase: SyncPhase,
    current: TxgRecord,
    pub log: Vec<TxgRecord>,
    /// Leaf devices of the pool's data vdevs, with their aggregation limit.
    leaves: Vec<(usize, u32)>,
    /// Next offset on each leaf of a one-disk solid-state pool (positions not modelled).
    plain_cursor: u64,
    /// A sync's working lists, kept to reuse their capacity: the records, their ancestor
    /// indirect blocks, the dirtied objects, the writes per leaf before aggregation.
    scratch: Vec<(u64, u32)>,
    ancestors: Vec<(u64, u64)>,
    objects: Vec<u32>,
    per_leaf: Vec<Vec<LeafWrite>>,
    /// Clients waiting in dmu_tx_wait for dirty data to drop under the max.
    pub throttled: Vec<u32>,
}

impl WritePath {
    pub(super) fn new(cfg: &VariantConfig, z: &crate::config::ZfsConfig, pool: &Pool) -> WritePath {
        // 0.6's write throttle (the 2012 one, before the dirty-data throttle of 0.6.3) is
        // not modelled: 0.8's stands in for it.
        let sync_on_total = matches!(z.release, ZfsRelease::V0_6 | ZfsRelease::V0_8);
        let params = WriteParams::new(&z.txg, cfg.machine.ram_bytes, sync_on_total);
        let n = cfg.devices.len();
        let mut leaves = Vec::new();
        for k in 0..pool.nvdevs() {
            for &c in pool.children(k) {
                let rot = cfg.devices[c].rotational.is_some();
                let limit =
                    if rot { params.aggregation_limit } else { params.aggregation_limit_non_rotating };
                leaves.push((c, limit));
            }
        }
        WritePath {
            txgs: Txgs::new(params, z.recordsize),
            pending: vec![VecDeque::new(); n],
            inflight: vec![Vec::new(); n],
            phase: SyncPhase::Idle,
            current: TxgRecord::default(),
            log: Vec::new(),
            leaves,
            plain_cursor: 0,
            scratch: Vec::new(),
            ancestors: Vec::new(),
            objects: Vec::new(),
            per_leaf: vec![Vec::new(); n],
            throttled: Vec::new(),
        }
    }

    /// When the write path next has something to do: a write completes, the uberblock is
    /// on disk, or a sync is due.
    pub(super) fn next_at(&self) -> Option<Nanos> {
        let mut t = self.inflight.iter().flatten().map(|w| w.0).min();
        let other = match self.phase {
            SyncPhase::Idle => self.txgs.sync_due(),
            SyncPhase::Uberblock(d) => Some(d),
            SyncPhase::Blocks => None,
        };
        if let Some(o) = other {
            t = Some(t.map_or(o, |x| x.min(o)));
        }
        t
    }
}

impl Sim<'_> {
    /// A write request starts (after its system call's CPU): O_DIRECT device writes on
    /// XFS/ext4 (through bcache if present), the record loop on ZFS.
    pub(super) fn write_start(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        if self.run_pending_cpu(i, c, now) {
            return Flow::Wait;
        }
        let task = i;
        match &mut self.fs {
            Fs::Extent(x) => {
                let done =
                    x.write(task, c.space, c.w_offset, c.w_len, now, &mut c.cpu_pending, &mut self.devices);
                c.state = State::WriteDone;
                self.queue.at(done, Event::Client(i));
                Flow::Wait
            }
            Fs::Zfs(z) => {
                let (first, last) = z.layout.records(c.space + 1, c.w_offset, c.w_len);
                c.w_rec = first;
                c.w_last = last;
                c.tx_start = now;
                c.rmw = false;
                c.state = State::ZfsWriteRecord;
                Flow::Next
            }
        }
    }

    /// dmu_tx_assign of the record's tx: wait under the max, then dmu_tx_delay.
    pub(super) fn zfs_write_record(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let w = self.writes.as_mut().expect("the ZFS write path");
        match w.txgs.assign(c.tx_start, now) {
            Assign::Wait => {
                w.throttled.push(i as u32);
                Flow::Wait
            }
            Assign::At(t) => {
                c.state = State::ZfsWriteDirty;
                if t > now {
                    self.queue.at(t, Event::Client(i));
                    return Flow::Wait;
                }
                Flow::Next
            }
        }
    }

    /// dmu_write_uio_dbuf for one record: read it first if the write covers part of it
    /// and it is not in memory, then dirty it with the writer's content.
    pub(super) fn zfs_write_dirty(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let class = self.fio_write_class(i);
        let Fs::Zfs(z) = &mut self.fs else { unreachable!("ZfsWriteDirty only on ZFS") };
        let Zfs { arc, dbufs, layout, data_flags, .. } = &mut **z;
        let object = c.space + 1;
        let rs = u64::from(layout.geometry(object).data_block_size());
        let rec_start = c.w_rec * rs;
        let from = c.w_offset.max(rec_start);
        let to = (c.w_offset + u64::from(c.w_len)).min(rec_start + rs);
        let chunk = to.saturating_sub(from);
        let key = layout.key(object, c.w_rec, 0);
        let w = self.writes.as_mut().expect("the ZFS write path");
        if chunk < rs && !c.rmw && !dbufs.exists(key) && !w.txgs.is_dirty(key.0) {
            // dbuf_will_dirty -> dbuf_read of the whole record: the read walk.
            c.rmw = true;
            c.read_offset = rec_start;
            c.read_len = rs as u32;
            c.read = FileRead::Zfs(ZfsRead::rmw(layout, object, c.w_rec, now));
            c.state = State::FileRead;
            return Flow::Next;
        }
        c.rmw = false;
        w.txgs.dirty(key.0, rs as u32, now);
        layout.set_record(object, c.w_rec, class);
        let info = layout.block(object, c.w_rec, 0).1;
        // The dirty buffer is in memory from now on: reads find it (arc_write_done puts
        // it on MRU at sync; the model does it now).
        arc.write_done(key, info, *data_flags, now);
        c.cpu_pending += self.costs.zfs_block + (chunk as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
        if c.w_rec < c.w_last {
            c.w_rec += 1;
            c.tx_start = now;
            c.state = State::ZfsWriteRecord;
            return Flow::Next;
        }
        self.fio_done(i, c, now);
        c.state = State::Start;
        Flow::Next
    }

    /// The next write-path event (see `WritePath::next_at`), if any.
    pub(super) fn write_next_at(&self) -> Option<Nanos> {
        self.writes.as_ref().and_then(|w| w.next_at())
    }

    /// Runs the write path's events up to `now` (completions, uberblocks, a sync start),
    /// then issues what the vdev queues allow.
    pub(super) fn write_event(&mut self, now: Nanos) {
        let Some(w) = self.writes.as_mut() else { return };
        // Completions: dirty bytes come back; throttled writers retry.
        let mut freed = false;
        for list in &mut w.inflight {
            list.retain(|&(done, undirty)| {
                if done <= now {
                    w.txgs.undirty(undirty);
                    freed = true;
                    false
                } else {
                    true
                }
            });
        }
        if freed && w.txgs.dirty_total() < w.txgs.params.dirty_data_max {
            for j in w.throttled.drain(..) {
                self.queue.at(now, Event::Client(j as usize));
            }
        }
        match w.phase {
            SyncPhase::Uberblock(done) if done <= now => {
                w.txgs.sync_done(now);
                w.current.end = now;
                w.log.push(w.current);
                w.phase = SyncPhase::Idle;
                if w.txgs.dirty_total() < w.txgs.params.dirty_data_max {
                    for j in w.throttled.drain(..) {
                        self.queue.at(now, Event::Client(j as usize));
                    }
                }
            }
            SyncPhase::Idle if w.txgs.sync_due().is_some_and(|d| d <= now) => self.begin_sync(now),
            _ => {}
        }
        self.issue_writes(now);
    }

    /// spa_sync of the open txg at `now`: plans every write (see the module docs).
    fn begin_sync(&mut self, now: Nanos) {
        let Sim { writes: Some(w), fs: Fs::Zfs(z), .. } = self else {
            return;
        };
        let Zfs { arc, layout, pool, meta_flags, .. } = &mut **z;
        let txg = w.txgs.begin_sync(now, &mut w.scratch);
        w.current = TxgRecord { txg, start: now, ..TxgRecord::default() };
        let sector = layout.compression.sector_size();
        let mut ancestors = std::mem::take(&mut w.ancestors);
        let mut objects = std::mem::take(&mut w.objects);
        ancestors.clear();
        objects.clear();
        let scratch = std::mem::take(&mut w.scratch);
        for &(k, charged) in &scratch {
            let key = BlockKey(k);
            let (object, blkid) = (key.object(), key.blkid());
            w.current.records += 1;
            w.current.dirty_bytes += u64::from(charged);
            let info = layout.block(object, blkid, 0).1;
            let asize = u64::from(layout.compression.asize(info.psize));
            if asize == 0 {
                // A hole or embedded: nothing to write, the charge comes back at once.
                w.txgs.undirty(u64::from(charged));
            } else {
                w.current.data_bytes += asize;
                place(w, pool, key, asize, false, u64::from(charged));
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
                place(w, pool, key, asize, true, 0);
            }
            arc.write_done(key, info, *meta_flags, now);
        }
        objects.dedup();
        for &object in &objects {
            // The dnode block holding the file's dnode (object 0 of the objset, level 0).
            let key = BlockKey::new(0, 0, u64::from(object) / 32);
            w.current.dnode_bytes += 2 * u64::from(sector);
            place(w, pool, key, u64::from(sector), true, 0);
        }
        w.ancestors = ancestors;
        w.objects = objects;
        for k in 0..w.leaves.len() {
            let (leaf, limit) = w.leaves[k];
            let list = &mut w.per_leaf[leaf];
            aggregate(list, limit);
            w.pending[leaf].extend(list.drain(..));
        }
        w.phase = SyncPhase::Blocks;
    }

    /// The vdev queues issue async writes up to their limit; a txg whose blocks are all
    /// written gets its uberblocks.
    fn issue_writes(&mut self, now: Nanos) {
        let Some(w) = self.writes.as_mut() else { return };
        let active = max_async_writes(&w.txgs.params, w.txgs.dirty_total()) as usize;
        let mut busy = false;
        for &(leaf, _) in &w.leaves {
            while w.inflight[leaf].len() < active {
                let Some(lw) = w.pending[leaf].pop_front() else { break };
                let dev = &mut self.devices[leaf];
                let done = dev.submit_at(now, Op::Write, lw.offset, lw.bytes);
                w.current.leaf_bytes += u64::from(lw.bytes);
                w.inflight[leaf].push((done, lw.undirty));
            }
            busy |= !w.pending[leaf].is_empty() || !w.inflight[leaf].is_empty();
        }
        if w.phase == SyncPhase::Blocks && !busy {
            // vdev_uberblock_sync: every leaf's four labels, once the txg's blocks are on disk.
            let sector = match &self.fs {
                Fs::Zfs(z) => z.layout.compression.sector_size(),
                Fs::Extent(_) => 512,
            };
            let ub = sector.max(1024);
            let mut end = now;
            for &(leaf, _) in &w.leaves {
                let size = self.cfg.devices[leaf].capacity_bytes.unwrap_or(0);
                for label in 0..4u64 {
                    // Labels 0 and 1 at the start, 2 and 3 in the last 512 KiB; the
                    // uberblock ring is the second half of each 256 KiB label.
                    let base = if label < 2 { label << 18 } else { size.saturating_sub((4 - label) << 18) };
                    let done = self.devices[leaf].submit_at(now, Op::Write, base + (128 << 10), ub);
                    end = end.max(done);
                    w.current.uberblock_bytes += u64::from(ub);
                    w.current.leaf_bytes += u64::from(ub);
                }
            }
            w.phase = SyncPhase::Uberblock(end);
        }
    }

    /// The write path during a phase: the txgs synced since the `from`-th, the throttle's
    /// counters so far, and the dirty data left to sync.
    pub(super) fn write_report(&self, from: usize) -> Value {
        let Some(w) = &self.writes else { return Value::Null };
        let synced = &w.log[from.min(w.log.len())..];
        let sum = |f: fn(&TxgRecord) -> u64| synced.iter().map(f).sum::<u64>();
        json!({
            "txgs_synced": synced.len(),
            "synced_dirty_bytes": sum(|t| t.dirty_bytes),
            "synced_data_bytes": sum(|t| t.data_bytes),
            "synced_indirect_bytes": sum(|t| t.indirect_bytes),
            "synced_leaf_bytes": sum(|t| t.leaf_bytes),
            "sync_s_mean": if synced.is_empty() { 0.0 } else { secs(sum(|t| t.end - t.start)) / synced.len() as f64 },
            "zfs_dirty_data_max": w.txgs.params.dirty_data_max,
            "dirty_high_bytes": w.txgs.dirty_high,
            "dirty_left_bytes": w.txgs.dirty_total(),
            "delayed_txs": w.txgs.delayed_txs,
            "dirty_over_max_waits": w.txgs.waited_txs,
            "txgs": synced.iter().take(16).map(|t| json!({
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
            })).collect::<Vec<_>>(),
        })
    }

    /// Runs the write path until every dirty byte is on disk (an export or a clean
    /// reboot: spa_export -> txg_wait_synced); returns when it is.
    pub(super) fn write_flush(&mut self) -> Nanos {
        let mut t = self.clock;
        while let Some(next) = self.write_next_at() {
            t = t.max(next);
            self.write_event(t);
        }
        t
    }
}

/// Queues the writes of block `key`'s new copies (`ditto`: two) on their leaves.
fn place(w: &mut WritePath, pool: &mut Pool, key: BlockKey, asize: u64, ditto: bool, undirty: u64) {
    match pool.cow_write(key, asize, ditto) {
        Some((d0, d1)) => {
            for (n, dva) in std::iter::once(d0).chain(d1).enumerate() {
                let children = pool.children(dva.vdev as usize);
                let share = if n == 0 { undirty / children.len() as u64 } else { 0 };
                for (ci, &leaf) in children.iter().enumerate() {
                    // The remainder of an uneven split goes to the first child.
                    let extra = if n == 0 && ci == 0 { undirty % children.len() as u64 } else { 0 };
                    w.per_leaf[leaf].push(LeafWrite {
                        offset: dva.offset + VDEV_LABEL_START_SIZE,
                        bytes: asize as u32,
                        undirty: share + extra,
                    });
                }
            }
        }
        None => {
            let leaf = pool.children(0)[0];
            for n in 0..(1 + u64::from(ditto)) {
                w.per_leaf[leaf].push(LeafWrite {
                    offset: w.plain_cursor,
                    bytes: asize as u32,
                    undirty: if n == 0 { undirty } else { 0 },
                });
                w.plain_cursor += asize;
            }
        }
    }
}
