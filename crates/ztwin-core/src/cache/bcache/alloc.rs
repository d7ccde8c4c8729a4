//! Buckets: writing data into open buckets (`bch_alloc_sectors()`), the allocator's
//! free lists and bucket invalidation by replacement policy (alloc.c), priority aging
//! (`bch_rescale_priorities()`) and the stale-pointer sweep of garbage collection.

use rand::Rng;

use super::*;

/// BUCKET_GC_GEN_MAX (bcache.h): a bucket whose gen is this far ahead of its last GC is
/// not invalidated until GC has run (`can_inc_bucket_gen()`).
const BUCKET_GC_GEN_MAX: u8 = 96;

impl Bcache {
    /// `bch_rescale_priorities()`: one tick per `nbuckets * bucket_size / 1024` sectors.
    pub(super) fn rescale_priorities(&mut self, sectors: u64) {
        self.rescale_left -= sectors as i64;
        while self.rescale_left < 0 {
            self.rescale_left += self.rescale_period;
            self.tick = self.tick.saturating_add(1);
        }
    }

    /// A bucket's `prio` now (open buckets are pinned and keep `INITIAL_PRIO`).
    fn prio(&self, b: &Bucket) -> u32 {
        INITIAL_PRIO.saturating_sub(self.tick - b.stamp)
    }

    /// Writes units [start, end) into open buckets as data of `task` (`bch_data_insert()`
    /// -> `bch_alloc_sectors()`), one cache-device write per bucket piece. Returns the
    /// result and the units placed (fewer when no bucket could be had).
    pub(super) fn place(
        &mut self,
        task: usize,
        start: u64,
        end: u64,
        dirty: bool,
        now: Nanos,
        mut io: impl FnMut(Target, Op, u32) -> Nanos,
    ) -> (WriteResult, u64) {
        let mut r = WriteResult { done: now, ios: 0 };
        let mut u = start;
        while u < end {
            let Some(k) = self.pick_open(u, task as u32) else { break };
            let n = (end - u).min(u64::from(self.open[k].free_units));
            let b = self.open[k].bucket;
            for v in u..u + n {
                self.drop_unit(v);
                self.slots[v as usize] = (b + 1) << BUCKET_SHIFT
                    | if dirty { DIRTY_BIT } else { 0 }
                    | u32::from(self.buckets[b as usize].gen);
                if dirty {
                    if let Some(c) = self.wb.chunks.get_mut((v >> writeback::CHUNK_SHIFT) as usize) {
                        *c += 1;
                    }
                }
            }
            let bytes = n << self.unit_shift;
            let bk = &mut self.buckets[b as usize];
            bk.live += n as u16;
            bk.keys += 1;
            if dirty {
                bk.dirty += n as u16;
                self.stats.dirty_data += bytes;
            }
            self.keys += 1;
            self.stats.size += bytes;
            self.stats.written += bytes;
            let done = io(Target::Cache, Op::Write, bytes as u32);
            self.congestion.account(true, now, done);
            r.done = r.done.max(done);
            r.ios += 1;
            let o = &mut self.open[k];
            o.free_units -= n as u32;
            o.last_end = u + n;
            o.write_point = task as u32;
            self.open_clock += 1;
            o.used = self.open_clock;
            if o.free_units == 0 {
                self.close_bucket(k);
            }
            u += n;
        }
        (r, u - start)
    }

    /// `pick_data_bucket()`: the open bucket whose last write ended at `unit`, else the
    /// one `write_point` used last, else the least recently used; given a fresh bucket
    /// if it has no room. None when no bucket can be allocated.
    fn pick_open(&mut self, unit: u64, write_point: u32) -> Option<usize> {
        if self.open.len() < MAX_OPEN_BUCKETS && !self.open.iter().any(|o| o.write_point == write_point) {
            // Open buckets start out empty: an unused one goes to this writer.
            self.open.push(OpenBucket {
                bucket: u32::MAX,
                free_units: 0,
                last_end: u64::MAX,
                write_point,
                used: 0,
            });
        }
        let by_key = self.open.iter().position(|o| o.free_units > 0 && o.last_end == unit);
        let k = by_key
            .or_else(|| self.open.iter().position(|o| o.write_point == write_point))
            .or_else(|| (0..self.open.len()).min_by_key(|&k| self.open[k].used))?;
        if self.open[k].free_units == 0 {
            let b = self.alloc_bucket()?;
            let bk = &mut self.buckets[b as usize];
            bk.mark = Mark::Open;
            bk.live = 0;
            bk.dirty = 0;
            bk.keys = 0;
            self.open_count += 1;
            self.open[k].bucket = b;
            self.open[k].free_units = self.bucket_units;
        }
        Some(k)
    }

    /// A full (or, at a reboot, partly filled) open bucket becomes a data bucket: unpinned,
    /// its prio starts aging now.
    pub(super) fn close_bucket(&mut self, k: usize) {
        let b = self.open[k].bucket as usize;
        self.open[k].bucket = u32::MAX;
        self.open[k].free_units = 0;
        self.open_count -= 1;
        let tick = self.tick;
        let bk = &mut self.buckets[b];
        bk.mark = Mark::Data;
        bk.stamp = tick;
        if bk.dirty > 0 {
            self.dirty_buckets += 1;
        }
    }

    /// `bch_bucket_alloc(RESERVE_NONE)`, with the allocator thread's refill of `free_inc`
    /// (`free << 2` invalidations) whenever it has run empty.
    fn alloc_bucket(&mut self) -> Option<u32> {
        while self.free.len() <= self.reserved + self.free_size {
            if self.invalidate_buckets() == 0 {
                break;
            }
        }
        if self.free.len() > self.reserved {
            self.free.pop_front()
        } else {
            None
        }
    }

    fn can_invalidate(&self, b: &Bucket) -> bool {
        match b.mark {
            Mark::Unused => true,
            Mark::Data => b.dirty == 0 && b.gen.wrapping_sub(b.last_gc) < BUCKET_GC_GEN_MAX,
            Mark::Free | Mark::Open | Mark::Metadata => false,
        }
    }

    /// `invalidate_buckets()`: up to `free << 2` buckets onto the free list; when the
    /// policy finds too few and some were held back by their gen, GC and try again.
    fn invalidate_buckets(&mut self) -> usize {
        let want = self.free_size << 2;
        let mut got = self.invalidate_by_policy(want);
        if got < want
            && self.buckets.iter().any(|b| b.mark == Mark::Data && b.dirty == 0 && !self.can_invalidate(b))
        {
            self.gc_sweep();
            got += self.invalidate_by_policy(want - got);
        }
        got
    }

    fn invalidate_by_policy(&mut self, want: usize) -> usize {
        let first = self.first_data;
        let n = self.buckets.len() as u32;
        let mut got = 0;
        match self.policy {
            BcacheReplacement::Lru => {
                // min_prio over the data buckets (bch_rescale_priorities() keeps it).
                let min_prio = self
                    .buckets
                    .iter()
                    .filter(|b| b.mark == Mark::Data)
                    .map(|b| self.prio(b))
                    .min()
                    .unwrap_or(INITIAL_PRIO);
                let scale = u64::from((INITIAL_PRIO - min_prio) / 8);
                let heap_size = self.free_size << 3;
                self.heap.clear();
                for k in first..n {
                    let b = &self.buckets[k as usize];
                    if !self.can_invalidate(b) {
                        continue;
                    }
                    // bucket_prio(); an unused bucket has no sectors: 0. Ties (which the
                    // kernel's heap breaks by its layout) go to the emptier bucket, then
                    // the lower bucket number (simplification 8).
                    let key = if b.mark == Mark::Unused {
                        0
                    } else {
                        (u64::from(self.prio(b) - min_prio) + scale) * u64::from(b.live)
                    };
                    let entry = (key, u32::from(b.live), k);
                    if self.heap.len() < heap_size {
                        self.heap.push(entry);
                    } else if let Some(mut top) = self.heap.peek_mut() {
                        if entry < *top {
                            *top = entry;
                        }
                    }
                }
                // heap_pop() in increasing bucket_prio order until free_inc is full.
                let mut v = std::mem::take(&mut self.heap).into_sorted_vec();
                for &(_, _, k) in v.iter().take(want) {
                    self.invalidate_one(k);
                    got += 1;
                }
                v.clear();
                self.heap = BinaryHeap::from(v);
            }
            BcacheReplacement::Fifo => {
                let mut checked = 0;
                while got < want && checked < n - first {
                    if self.fifo_last < first || self.fifo_last >= n {
                        self.fifo_last = first;
                    }
                    let k = self.fifo_last;
                    self.fifo_last += 1;
                    if self.can_invalidate(&self.buckets[k as usize]) {
                        self.invalidate_one(k);
                        got += 1;
                    }
                    checked += 1;
                }
            }
            BcacheReplacement::Random => {
                let mut checked = 0;
                while got < want && checked < (n - first) / 2 {
                    let k = first + self.rng.random_range(0..n - first);
                    if self.can_invalidate(&self.buckets[k as usize]) {
                        self.invalidate_one(k);
                        got += 1;
                    }
                    checked += 1;
                }
            }
        }
        got
    }

    /// `bch_invalidate_one_bucket()`: a new gen makes every pointer into the bucket
    /// stale; the bucket goes to the free list.
    fn invalidate_one(&mut self, k: u32) {
        let bytes = u64::from(self.buckets[k as usize].live) << self.unit_shift;
        let b = &mut self.buckets[k as usize];
        if b.live > 0 {
            self.stats.buckets_invalidated += 1;
            self.stats.evicted += bytes;
            self.stats.size -= bytes;
        }
        self.keys -= u64::from(b.keys);
        b.gen = b.gen.wrapping_add(1);
        b.live = 0;
        b.keys = 0;
        b.mark = Mark::Free;
        self.free.push_back(k);
    }

    /// Garbage collection's pointer sweep: stale index entries are dropped and every
    /// bucket's gen is current again (`last_gc`).
    fn gc_sweep(&mut self) {
        for k in 0..self.slots.len() {
            self.lookup(k as u64);
        }
        for b in &mut self.buckets {
            b.last_gc = b.gen;
        }
    }
}
