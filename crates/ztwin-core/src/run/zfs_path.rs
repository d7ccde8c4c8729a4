//! The ZFS read path of one request, one state of the client machine per method (see
//! the diagram in `run`): the walk down the block-pointer tree through the dbufs and the
//! ARC, device reads for misses, and the end of the request.

use super::*;

/// zfs_read_chunk_size (0.8) / zfs_vnops_read_chunk_size (2.x): zfs_read hands the DMU at
/// most 1 MiB per call, cut at 1 MiB boundaries (module/zfs/zfs_vnops.c, all modelled
/// releases); each call holds its records, runs the prefetcher and waits before the next.
const ZFS_READ_CHUNK_SIZE: u64 = 1 << 20;

impl Sim<'_> {
    /// Starts bringing into the CPU caches what the walk of the read's first record will
    /// look up (the read's CPU time runs first, while other events are simulated).
    pub(super) fn zfs_prefetch_read(&self, c: &Client) {
        let Fs::Zfs { arc, layout, zfetch, .. } = &self.fs else { return };
        let object = c.space + 1;
        zfetch.prefetch_streams(object);
        let (first, _) = layout.records(object, c.read_offset, c.read_len);
        for level in 0..layout.nlevels(object) {
            arc.prefetch(BlockKey::new(object, level, layout.geometry(object).ancestor(first, level)));
        }
    }

    /// The next dmu_read_uio call of the read: its records, and dmu_zfetch_prepare for
    /// them (dmu_buf_hold_array_by_dnode prepares before issuing the demand reads).
    pub(super) fn zfs_chunk(&mut self, c: &mut Client, now: Nanos) {
        let Fs::Zfs { layout, zfetch, .. } = &mut self.fs else { unreachable!("ZfsChunk only on ZFS") };
        let end = c.read_offset + c.read_len as u64;
        c.chunk_off = c.chunk_end;
        c.chunk_end = end.min((c.chunk_off / ZFS_READ_CHUNK_SIZE + 1) * ZFS_READ_CHUNK_SIZE);
        let len = c.chunk_end - c.chunk_off;
        let object = c.space + 1;
        let (first, last) = layout.records(object, c.chunk_off, len as u32);
        c.rec = first;
        c.rec_last = last;
        c.data_done = now;
        c.missed = false;
        let req = Request {
            object,
            blkid: first,
            nblks: last - first + 1,
            length: len,
            read: true,
            shape: layout.zfetch_shape(object),
        };
        c.zfetch = zfetch.prepare(&req, now);
        c.state = State::ZfsRecord;
    }

    /// dbuf_hold of the record: one access at the lowest level whose dbuf exists, then a
    /// read of every level below it (see fs::zfs::dbuf).
    pub(super) fn zfs_record(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let Fs::Zfs { arc, dbufs, layout, .. } = &mut self.fs else { unreachable!("ZfsRecord only on ZFS") };
        if dbufs.evicted_by_arc() {
            // 0.6: a dbuf whose header the ARC evicted is gone before anyone finds it
            // (dbuf_hold_impl clears one whose buffer lost its data and starts over).
            settle_dbufs(arc, dbufs, layout);
        }
        let object = c.space + 1;
        let nlevels = layout.nlevels(object);
        let found = (0..nlevels).find(|&l| dbufs.exists(layout.key(object, c.rec, l)));
        let Some(level) = found else {
            // No dbuf on the path: start at the dnode's block pointer.
            c.level = nlevels - 1;
            c.state = State::ZfsWalk;
            return Flow::Next;
        };
        let (key, info) = layout.block(object, c.rec, level);
        let hold = dbufs.hold_existing(key);
        c.level = level;
        c.state = State::ZfsAdvance;
        c.cpu_pending += self.costs.zfs_block;
        if let Some(done) = self.block_inflight.get(key.0) {
            // The dbuf is being read (DB_READ): dbuf_read waits on db_changed,
            // with no ARC access.
            self.block_lookups += 1;
            self.block_waits += 1;
            if level == 0 {
                c.data_done = c.data_done.max(done);
                c.missed = true;
            } else if done > now {
                self.queue.push(done, i as u32);
                return Flow::Wait;
            }
            return Flow::Next;
        }
        if info.psize != 0 && hold.accesses_arc && arc.contains(key) {
            // arc_buf_access() (0.6: arc_buf_add_ref from zero holds): an ARC hit, no
            // copy, no decompression. (If the ARC model evicted the header, the dbuf
            // still serves its data: the real ARC cannot evict a buffer a dbuf references.)
            self.block_lookups += 1;
            let flags = ReadFlags::default();
            let hit = arc.access(key, info, flags, now);
            debug_assert_eq!(hit, ArcAccess::Hit);
            if hold.references {
                let hdr = arc.dbuf_rehold(key);
                dbufs.set_hdr(hold.slot, hdr);
            }
        }
        Flow::Next
    }

    /// One level of the walk: dbuf_create and arc_read of the block; a miss goes to a device.
    pub(super) fn zfs_walk(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        let v22 = matches!(&self.cfg.filesystem, FsConfig::Zfs(z) if z.release == ZfsRelease::V2_2);
        let Fs::Zfs { arc, dbufs, cache_device, layout, pool, data_flags, meta_flags, .. } = &mut self.fs
        else {
            unreachable!("ZfsWalk only on ZFS")
        };
        let object = c.space + 1;
        let (key, info) = layout.block(object, c.rec, c.level);
        let flags = if info.kind == BufType::Data { *data_flags } else { *meta_flags };
        // dbuf_create under the parent (held by the new child from now on), then
        // the reader's own hold on the parent is dropped.
        let parent = (c.level + 1 < layout.nlevels(object)).then(|| layout.key(object, c.rec, c.level + 1));
        if dbufs.exists(key) {
            // Another reader created it while this one waited for the parent (two readers
            // of one indirect block going down to the same child): drop the parent hold and
            // find the dbuf as dbuf_hold does (dbuf_find first).
            if let Some(p) = parent {
                dbufs.release(p, arc.c(), |k| layout.parent_of(k));
                settle_dbufs(arc, dbufs, layout);
            }
            c.state = State::ZfsRecord;
            return Flow::Next;
        }
        let copy = self.costs.dbuf_copy(&info);
        let meta = info.kind == BufType::Metadata;
        // 0.6: a hole's dbuf has an anonymous buffer, which dbuf_rele_and_unlock frees
        // with the dbuf at zero holds (`arc_released`); only a block in the ARC stays.
        let cacheable = !flags.uncacheable && (info.psize != 0 || !dbufs.evicted_by_arc());
        let dbuf = dbufs.create(key, parent, info.lsize, cacheable, copy);
        if let Some(p) = parent {
            dbufs.release(p, arc.c(), |k| layout.parent_of(k));
            settle_dbufs(arc, dbufs, layout);
        }
        c.cpu_pending += self.costs.zfs_block;
        if info.psize == 0 {
            let hdr = arc.dbuf_created(key, meta, copy, false, now);
            dbufs.set_hdr(dbuf, hdr);
            // A hole or an embedded block: the block pointer itself holds the
            // content (BP_IS_HOLE / BP_IS_EMBEDDED), nothing to read or cache; the new
            // dbuf's buffer is filled in memory (dbuf_read_hole zeroes it, about a copy's cost).
            c.cpu_pending += (info.lsize as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
            c.state = State::ZfsAdvance;
            return Flow::Next;
        }
        self.block_lookups += 1;
        // A compressed block is decompressed once per read from a device: by arc_buf_fill
        // into the new dbuf's buffer with compressed ARC, or by the read zio before the ARC
        // keeps it without. With compressed ARC a hit decompresses again (arc_buf_fill);
        // without, the ARC's uncompressed buffer is shared or copied (arc_buf_alloc_impl).
        let decompress = if info.psize < info.lsize {
            (info.lsize as f64 * self.costs.decompress_ns_per_byte) as Nanos
        } else {
            0
        };
        let hit_decompress = if self.costs.compressed_arc { decompress } else { 0 };
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
            if !v22 {
                self.block_waits += 1;
            }
            c.cpu_pending += hit_decompress;
            c.state = State::ZfsAdvance;
            if c.level == 0 {
                c.data_done = c.data_done.max(done);
                c.missed = true;
            } else if done > now {
                self.queue.push(done, i as u32);
                return Flow::Wait;
            }
            return Flow::Next;
        }
        // None: an ARC hit; Some(None): a read from the pool; Some(Some(..)): an L2 hit.
        arc.dbuf_reserve(meta, copy);
        let read = match arc.access(key, info, flags, now) {
            ArcAccess::Hit => None,
            // l2arc_read: the block's asize from the cache device.
            ArcAccess::L2Hit { asize, .. } => {
                Some(Some((cache_device.expect("L2 hit without a cache device"), asize)))
            }
            ArcAccess::Miss { .. } => Some(None),
        };
        // arc_buf_alloc_impl: the new dbuf's buffer (on the hit now, on the miss in
        // arc_read_done; the model's header exists from the access on).
        let hdr = arc.dbuf_created(key, meta, copy, true, now);
        dbufs.set_hdr(dbuf, hdr);
        match read {
            None => {
                c.cpu_pending += hit_decompress;
                c.state = State::ZfsAdvance;
            }
            Some(source) => {
                // The zio goes out now; its CPU (pipeline, interrupt, checksum,
                // decompression) is charged before the client's next wait.
                let done = match source {
                    Some((device, bytes)) => self.devices[device].submit(now, Op::Read, bytes),
                    None => pool.read(key, info.psize, now, &mut self.devices),
                };
                self.block_inflight.insert(key.0, done);
                self.owned_inflight[i].push(key.0);
                c.cpu_pending += self.costs.device_io
                    + self.costs.zio
                    + (info.psize as f64 * self.costs.checksum_ns_per_byte) as Nanos
                    + decompress;
                c.state = State::ZfsAdvance;
                if c.level == 0 {
                    // Data: the next record's read goes out at once.
                    c.data_done = c.data_done.max(done);
                    c.missed = true;
                } else {
                    // An indirect block: the level below cannot be located
                    // before it arrives.
                    self.queue.push(done, i as u32);
                    return Flow::Wait;
                }
            }
        }
        Flow::Next
    }

    /// The next level down, the next record, or the end of the request.
    pub(super) fn zfs_advance(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        if c.level > 0 {
            c.level -= 1;
            c.state = State::ZfsWalk;
        } else if c.rec < c.rec_last {
            c.rec += 1;
            c.state = State::ZfsRecord;
        } else {
            // dmu_zfetch_run: every demand read of the chunk is issued.
            if let Some(pending) = c.zfetch.take() {
                self.zfetch_run(pending, c.missed, c.space + 1, now);
            }
            c.state = State::ZfsPageEnd;
            if c.data_done > now {
                self.queue.push(c.data_done, i as u32);
                return Flow::Wait;
            }
        }
        Flow::Next
    }

    /// Every record of the chunk is read: copy out, release the dbufs; then the next
    /// chunk, or the read is done.
    pub(super) fn zfs_page_end(&mut self, i: usize, c: &mut Client, now: Nanos) -> Flow {
        // dmu_read_uio: copy the chunk out of the dbufs into the caller's buffer,
        // then dmu_buf_rele_array: the record dbufs go to the dbuf cache.
        c.cpu_pending += ((c.chunk_end - c.chunk_off) as f64 * self.costs.memcpy_ns_per_byte) as Nanos;
        self.release_records(c);
        for key in self.owned_inflight[i].drain(..) {
            self.block_inflight.remove(key);
        }
        if c.chunk_end < c.read_offset + c.read_len as u64 {
            c.state = State::ZfsChunk;
        } else {
            self.page_read_done(i, c, now);
        }
        Flow::Next
    }

    /// dmu_buf_rele_array: the reader drops its holds on the chunk's record dbufs.
    pub(super) fn release_records(&mut self, c: &Client) {
        let Fs::Zfs { arc, dbufs, layout, .. } = &mut self.fs else { return };
        let (first, last) = layout.records(c.space + 1, c.chunk_off, (c.chunk_end - c.chunk_off) as u32);
        for rec in first..=last {
            let key = layout.key(c.space + 1, rec, 0);
            dbufs.release(key, arc.c(), |k| layout.parent_of(k));
        }
        settle_dbufs(arc, dbufs, layout);
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
    // anything recent (see sim::mem_hint).
    // Its header then goes back to its evictable list and, in a full ARC, is evicted at
    // once: the L2 index slot that eviction updates is cold too.
    if let Some((key, hdr)) = dbufs.next_victim() {
        arc.prefetch_hdr(hdr);
        arc.prefetch(key);
    }
}
