//! bcache: a block-layer cache between a filesystem and its (slow) backing device, on a
//! fast cache device. Data is stored as the filesystem wrote or read it: uncompressed,
//! byte for byte.
//!
//! # Theory
//!
//! Sources: Linux drivers/md/bcache as in 4.15 (Ubuntu 18.04) to current kernels
//! (request.c, alloc.c, super.c, io.c, writeback.c, writeback.h, stats.h), the kernel's
//! Documentation/admin-guide/bcache.rst, and bcache-tools' make-bcache.c.
//!
//! - The cache device is cut into buckets (make-bcache `--bucket`, default 1024 sectors =
//!   512 KiB). Data is only ever appended to a bucket; a bucket is reused whole, by bumping
//!   its 8-bit `gen`: every btree key pointing into it with the old gen is then stale
//!   (`ptr_stale()`). The index is a btree of extents (backing sector range -> cache
//!   bucket + gen + offset).
//! - A read (`cached_dev_read()` -> `cache_lookup()`) is split along the keys it meets:
//!   every cached piece is read from the cache device and sets its bucket's `prio` to
//!   `INITIAL_PRIO` (`cache_lookup_fn()`); the first missing piece (`cached_dev_cache_miss()`)
//!   is read from the backing device together with up to `readahead` more bytes (kernels
//!   up to 5.x; default 0), bounded by the next cached key, and once the backing read
//!   completes the data is written to the cache (`cached_dev_read_done()` ->
//!   `bch_data_insert()`), after the request has completed; later missing pieces of the
//!   same request are only read. A partial hit counts as a miss
//!   (`bch_mark_cache_accounting()`: `cache_hits`, `cache_misses`, `cache_bypass_hits`,
//!   `cache_bypass_misses`; `cache_hit_ratio` = hits / (hits + misses), in percent).
//! - `check_should_bypass()` marks a request to bypass (a bypassed read is still looked
//!   up and hits are still read from the cache; nothing new is inserted; `bypassed` counts
//!   its bytes): when more than `CUTOFF_CACHE_ADD` = 95% of the buckets are in use (dirty
//!   or metadata, `gc_stats.in_use`), in cache_mode none, for writes in writearound, and for
//!   sequential or congested streams (see [`bypass`]).
//! - Inserting (`bch_alloc_sectors()`): data goes to an open bucket (`MAX_OPEN_BUCKETS`;
//!   `pick_data_bucket()` prefers the bucket whose last write ended where this one starts,
//!   then the one last used by the same task, then the least recently used); a full
//!   bucket is replaced by a new one from the free list (`bch_bucket_alloc()`).
//! - The allocator thread (`bch_allocator_thread()`) keeps the free lists filled: when
//!   `free_inc` (`free << 2` buckets, `free = roundup_pow_of_two(nbuckets) >> 10`) runs
//!   empty it invalidates that many buckets at once (`invalidate_buckets()`), chosen by
//!   `cache_replacement_policy`: lru takes the smallest `bucket_prio()` =
//!   `(prio - min_prio + (INITIAL_PRIO - min_prio) / 8) * GC_SECTORS_USED` among the
//!   `free << 3` best candidates; fifo walks the buckets in order; random picks at random.
//!   Dirty, pinned (open or free) and metadata buckets are never invalidated.
//! - Priorities age with I/O, not time: every `nbuckets * bucket_size / 1024` sectors of
//!   non-bypassed I/O (`bch_rescale_priorities()`), every unpinned bucket's nonzero `prio`
//!   drops by one, so `prio` is an LRU clock with a resolution of 1/1024 of the cache.
//! - Writes (`cached_dev_write()`): bypassed -> backing device only, cached copies dropped
//!   (`bch_data_invalidate()`); writeback when `should_writeback()` (cache_mode writeback,
//!   `in_use` <= 70% (`CUTOFF_WRITEBACK_SYNC`) and, for async writes, <= 40%
//!   (`CUTOFF_WRITEBACK`); REQ_SYNC: O_DIRECT and fsync's writes) or when the write
//!   overlaps keys under writeback (`bch_keybuf_check_overlapping()`) -> cache only,
//!   dirty, and `bch_writeback_add()` wakes the writeback thread; else (writethrough) ->
//!   both devices. Dirty buckets count in `in_use`, so dirty data pushes writes over the
//!   cutoffs to writethrough.
//! - The writeback thread (`bch_writeback_thread()`) writes dirty data back in
//!   backing-device order, paced by a PI controller towards `writeback_percent` (10%) of
//!   the cache dirty; an idle cache set writes back at full speed (see [`writeback`]).
//! - A flush (an empty REQ_PREFLUSH bio: fsync's `blkdev_issue_flush()`, a journal
//!   commit's) writes the cache set's journal with a flush and sends a flush to the
//!   backing device (`cached_dev_nodata()`); a flush in a data write's bio does the same
//!   in writeback mode (`cached_dev_write()` sends an empty REQ_PREFLUSH to the backing
//!   device) and travels with the data to the backing device otherwise.
//! - The cache set is persistent: after a reboot `run_cache_set()` replays the journal and
//!   walks the whole btree (`bch_btree_check()`) before the device comes up; a cache device
//!   that comes back blank (instance storage after the VM moved) is a new, empty cache.
//!
//! # The model
//!
//! The index is an array over the backing device in units of `unit` bytes (the largest
//! power of two dividing every request's offset and length, e.g. the 16 KiB InnoDB page):
//! 4 bytes per unit of backing device (bucket number, dirty bit, gen), stale entries
//! detected by gen exactly as `ptr_stale()` does; buckets keep 16 bytes each, the free
//! list 4. For exp1-l2arc's xfs-bcache (330 table files, 800 GB, in 16 KiB units; a 475 GB
//! cache of 906k buckets of 512 KiB) that is 195 MB + 14.5 MB + 3.6 MB for 28.9 million
//! cached 16 KiB extents: 7.4 bytes per cached extent. In writeback mode a count of dirty
//! units per 4096 units (1 byte per 4 KiB of index) lets the writeback scan skip clean
//! ranges. Nothing is allocated per request.
//!
//! # Simplifications (numbered)
//!
//! 1. Keys are per unit; adjacent cached units in one bucket are read with one I/O (as
//!    bcache merges adjacent keys). A request is never split by bcache's key size limits.
//! 2. The btree itself is not modelled: its nodes take no buckets (about 24 bytes per key
//!    in 256 KiB nodes: ~0.4% of a cache of 16 KiB extents), lookups read no nodes (the
//!    node cache holds the btree), and journal and prio writes cost no I/O. A reboot
//!    reads 24 bytes per key from the cache device in node-sized reads.
//! 3. Garbage collection is exact and instant: a bucket's live size (`GC_SECTORS_USED`)
//!    and `gc_stats.in_use` are kept current instead of being recomputed every 1/16 of
//!    the cache written; the stale-pointer sweep runs when a bucket's gen would run 96
//!    (`BUCKET_GC_GEN_MAX`) ahead of its last sweep, as the allocator then waits for GC.
//! 4. The allocator runs synchronously with the insert that needs a bucket; an insert
//!    that finds no bucket is dropped (a read miss; bcache does the same) or written
//!    through (a writeback write, which bcache makes wait in `bch_bucket_alloc()` until
//!    the writeback thread and GC free one; below CUTOFF_WRITEBACK_SYNC at least 30% of
//!    the buckets are clean or free, so this needs a cache set whose clean buckets are all
//!    pinned). A collision between a miss insert and a write (`cache_miss_collisions`)
//!    drops the insert and its data write.
//! 5. Writeback's own simplifications are numbered in [`writeback`]; the journal write a
//!    flush makes (`bch_journal_meta()`) costs no I/O beyond the cache device's flush
//!    (as simplification 2), and a data write carrying REQ_PREFLUSH is not issued by the
//!    simulator (fsync and journal commits send empty flushes).
//! 6. No request is readahead/background (REQ_RAHEAD), metadata or unaligned: the
//!    simulator issues page reads and whole `cat` reads straight to the block layer.
//! 7. bcache's own CPU (btree lookups, bio splits) is not charged beyond the driver's
//!    per-device-I/O cost.
//! 8. Buckets of equal `bucket_prio()` are invalidated emptiest first, then in bucket
//!    order (the kernel's heap breaks such ties by its layout: while the oldest data is
//!    younger than 8 priority ticks its `bucket_prio()` is 0, like an empty bucket's).
//! 9. Metadata buckets (superblock, journal, two prio sets, uuids) sit at the start of
//!    the device; bcache allocates the prio and uuid buckets from the free lists.

mod alloc;
pub mod bypass;
pub mod writeback;

use std::collections::{BinaryHeap, VecDeque};

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::config::{BcacheCacheMode, BcacheConfig, BcacheReplacement};
use crate::dev::device::Op;
use crate::sim::time::Nanos;
use bypass::{Congestion, SeqDetector};
use writeback::Writeback;
pub use writeback::WritebackStep;

/// Buckets the model can index (23 bits of an index entry); validation refuses more.
pub const MAX_BUCKETS: u64 = (1 << 23) - 1;
/// INITIAL_PRIO (bcache.h).
pub const INITIAL_PRIO: u32 = 32768;
/// CUTOFF_CACHE_ADD (request.c): above this percentage of buckets in use, bypass.
const CUTOFF_CACHE_ADD: u32 = 95;
/// CUTOFF_CACHE_READA (request.c): readahead only below this in_use percentage.
const CUTOFF_CACHE_READA: u32 = 90;
/// CUTOFF_WRITEBACK, CUTOFF_WRITEBACK_SYNC (writeback.h; module parameters
/// bch_cutoff_writeback{,_sync} in newer kernels, same defaults).
const CUTOFF_WRITEBACK: u32 = 40;
const CUTOFF_WRITEBACK_SYNC: u32 = 70;
/// sizeof(struct bkey) with one pointer: 3 u64 (bcache_ondisk.h).
const BKEY_BYTES: u64 = 24;
/// BTREE_MAX_PAGES (btree.h): 256 KiB.
const BTREE_MAX_BYTES: u64 = 256 << 10;

/// An index entry holding nothing: 0, so a new index is zeroed memory that the OS maps
/// lazily (bucket numbers are stored plus one).
const EMPTY: u32 = 0;
const GEN_MASK: u32 = 0xff;
const DIRTY_BIT: u32 = 1 << 8;
const BUCKET_SHIFT: u32 = 9;

/// Where a device I/O of the cache goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The cache device.
    Cache,
    /// The backing device.
    Backing,
}

/// Everything the cache needs besides its configuration.
#[derive(Debug, Clone)]
pub struct BcacheParams<'a> {
    /// The user's settings.
    pub config: &'a BcacheConfig,
    /// Bytes of the cache device.
    pub cache_capacity: u64,
    /// Bytes of the backing device that I/O can reach (the index covers them).
    pub backing_size: u64,
    /// Index granularity, bytes: a power of two dividing every request's offset and
    /// length, at most the bucket size.
    pub unit: u32,
    /// Tasks (threads) issuing I/O, for sequential detection and write points.
    pub tasks: usize,
    /// Seed of the random replacement policy and the congestion draws.
    pub seed: u64,
}

/// Counters and sizes, named as in /sys/block/bcache0/bcache/stats_total and the cache
/// set's sysfs where they exist there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BcacheStats {
    /// Reads served whole from the cache (not bypassed).
    pub cache_hits: u64,
    /// Reads that needed the backing device (not bypassed); data inserted.
    pub cache_misses: u64,
    /// Bypassed reads served whole from the cache.
    pub cache_bypass_hits: u64,
    /// Bypassed reads that needed the backing device.
    pub cache_bypass_misses: u64,
    /// Misses that read ahead (`readahead` > 0).
    pub cache_readaheads: u64,
    /// Miss inserts dropped because the range was written meanwhile.
    pub cache_miss_collisions: u64,
    /// Bytes of I/O that bypassed the cache (sysfs `bypassed`).
    pub bypassed: u64,
    /// Bytes of data written to the cache device (cache sysfs `written`).
    pub written: u64,
    /// Bytes read from the cache device.
    pub cache_read_bytes: u64,
    /// Bytes read from the backing device.
    pub backing_read_bytes: u64,
    /// Bytes written to the backing device.
    pub backing_write_bytes: u64,
    /// Buckets holding data that the allocator invalidated.
    pub buckets_invalidated: u64,
    /// Bytes of cached data those invalidations dropped.
    pub evicted: u64,
    /// Bytes of cached data (live, clean and dirty).
    pub size: u64,
    /// Bytes of dirty data (sysfs `dirty_data`).
    pub dirty_data: u64,
    /// Bytes the writeback thread wrote to the backing device.
    pub writeback_bytes: u64,
    /// Dirty keys written back and marked clean (cache set `writeback_keys_done`).
    pub writeback_keys_done: u64,
    /// Dirty keys written back but overwritten meanwhile (`writeback_keys_failed`).
    pub writeback_keys_failed: u64,
    /// Cache flushes (REQ_PREFLUSH) the bcache device passed to both devices.
    pub flushes: u64,
    /// sysfs `writeback_rate` now, bytes per second (0 unless cache_mode is writeback).
    pub writeback_rate: u64,
}

/// What a read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadResult {
    /// When the request's data is complete.
    pub done: Nanos,
    /// Device I/Os submitted.
    pub ios: u32,
    /// The range to insert once the backing read completes (byte offset, bytes).
    pub insert: Option<(u64, u32)>,
}

/// What a write or an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteResult {
    /// When the write is complete on every device it went to.
    pub done: Nanos,
    /// Device I/Os submitted.
    pub ios: u32,
}

/// What a reboot costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartResult {
    /// The cache device came back blank: a new, empty cache set.
    pub lost: bool,
    /// Dirty bytes lost with it.
    pub dirty_lost: u64,
    /// Bytes of btree `bch_btree_check()` reads, in reads of `node_bytes`.
    pub btree_read_bytes: u64,
    /// Btree node size (`btree_pages`).
    pub node_bytes: u32,
}

/// Bucket states (`GC_MARK` plus the pins of open and free buckets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// Never written since the cache set was made: free to invalidate, no data.
    Unused,
    /// Invalidated, on the free lists (pinned).
    Free,
    /// Being filled by an open bucket (pinned).
    Open,
    /// Holds data (`GC_MARK_RECLAIMABLE`, or `GC_MARK_DIRTY` when `dirty` > 0).
    Data,
    /// Superblock, journal, prios (`GC_MARK_METADATA`).
    Metadata,
}

/// One `struct bucket`, in units of the index.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    gen: u8,
    /// Gen at the last stale-pointer sweep (`last_gc`).
    last_gc: u8,
    mark: Mark,
    /// The rescale tick at which `prio` was last `INITIAL_PRIO`.
    stamp: u32,
    /// Live units (`GC_SECTORS_USED`).
    live: u16,
    /// Dirty units.
    dirty: u16,
    /// Keys (extents) pointing into the bucket.
    keys: u16,
}

/// One `struct open_bucket`.
#[derive(Debug, Clone, Copy)]
struct OpenBucket {
    /// The bucket being filled, or u32::MAX.
    bucket: u32,
    /// Units still free in it.
    free_units: u32,
    /// Backing unit where its last write ended (the open bucket's key).
    last_end: u64,
    write_point: u32,
    /// LRU position (`list_move_tail`).
    used: u64,
}

/// A bcache cache set with one cache device and one backing device.
#[derive(Debug)]
pub struct Bcache {
    mode: BcacheCacheMode,
    policy: BcacheReplacement,
    sequential_cutoff: u32,
    readahead_units: u64,
    unit_shift: u32,
    bucket_units: u32,
    /// Index: backing unit -> (bucket + 1) << 9 | dirty << 8 | gen, or EMPTY.
    slots: Vec<u32>,
    buckets: Vec<Bucket>,
    /// Buckets before the first data bucket (simplification 9).
    first_data: u32,
    /// `free` of `cache_alloc()`.
    free_size: usize,
    /// Free-list entries data allocations may not take (MOVINGGC, PRIO, BTREE reserves).
    reserved: usize,
    free: VecDeque<u32>,
    open: Vec<OpenBucket>,
    open_clock: u64,
    open_count: u32,
    dirty_buckets: u32,
    keys: u64,
    tick: u32,
    rescale_left: i64,
    rescale_period: i64,
    heap: BinaryHeap<(u64, u32, u32)>,
    fifo_last: u32,
    rng: Pcg64Mcg,
    seq: SeqDetector,
    congestion: Congestion,
    stats: BcacheStats,
    node_bytes: u32,
    /// The writeback thread and its rate controller ([`writeback`]).
    wb: Writeback,
}

impl Bcache {
    /// Bytes of simulator memory a cache set takes over `backing_size` bytes of backing
    /// device in units of `unit` bytes with a cache device of `nbuckets` buckets: the
    /// index (4 bytes a unit), the buckets and the free list (see the module doc), and in
    /// writeback mode the writeback thread's keybuf and dirty summary.
    pub fn memory_bytes(backing_size: u64, unit: u64, nbuckets: u64, writeback: bool) -> u64 {
        let nbuckets = nbuckets.min(MAX_BUCKETS);
        let index = (backing_size / unit.max(1)).saturating_mul(std::mem::size_of::<u32>() as u64);
        let per_bucket = (std::mem::size_of::<Bucket>() + std::mem::size_of::<u32>()) as u64;
        let free_size = nbuckets.next_power_of_two() >> 10;
        let heap = ((free_size << 3) + 1) * std::mem::size_of::<(u64, u32, u32)>() as u64;
        let wb = if writeback { Writeback::memory_bytes(backing_size / unit.max(1)) } else { 0 };
        index.saturating_add(nbuckets * per_bucket).saturating_add(heap).saturating_add(wb)
    }

    /// A new, empty cache set (make-bcache, attach). Inputs are validated by
    /// `VariantConfig::validate`.
    pub fn new(p: &BcacheParams) -> Self {
        let c = p.config;
        let unit = u64::from(p.unit);
        // Guaranteed by `bcache_unit` (a power of two clamped to 512 .. bucket_size) and validate
        // (bucket_size a power of two, 4 KiB .. 16 MiB).
        assert!(unit.is_power_of_two() && unit >= 512 && unit <= c.bucket_size, "bad bcache unit");
        let nbuckets = (p.cache_capacity / c.bucket_size).min(MAX_BUCKETS);
        let bucket_sectors = c.bucket_size >> 9;
        // make-bcache: first_bucket = 23 / bucket_size + 1 (sectors); journal buckets:
        // clamp(nbuckets >> 7, 2, SB_JOURNAL_BUCKETS = 256) (run_cache_set()).
        let first_bucket = 23 / bucket_sectors + 1;
        let journal = (nbuckets >> 7).clamp(2, 256);
        // prio_buckets(): ceil(nbuckets / prios_per_bucket); prios_per_bucket =
        // (bucket bytes - sizeof(struct prio_set) = 40) / sizeof(struct bucket_disk) = 3.
        // Two sets are kept (prio_buckets, prio_last_buckets); one uuid bucket.
        let prio = nbuckets.div_ceil((c.bucket_size - 40) / 3);
        let free_size = (nbuckets.next_power_of_two() >> 10) as usize;
        let btree_reserve = 8; // RESERVE_BTREE: njournal_buckets ?: 8
        let metadata = first_bucket + journal + 2 * prio + 1;
        let units = (p.backing_size / unit) as usize;
        let mut b = Bcache {
            mode: c.cache_mode,
            policy: c.cache_replacement_policy,
            sequential_cutoff: c.sequential_cutoff as u32,
            readahead_units: c.readahead >> p.unit.trailing_zeros(),
            unit_shift: p.unit.trailing_zeros(),
            bucket_units: (c.bucket_size / unit) as u32,
            slots: vec![EMPTY; units],
            buckets: vec![
                Bucket {
                    gen: 0,
                    last_gc: 0,
                    mark: Mark::Unused,
                    stamp: 0,
                    live: 0,
                    dirty: 0,
                    keys: 0
                };
                nbuckets as usize
            ],
            first_data: metadata as u32,
            free_size,
            // free[RESERVE_MOVINGGC] (free), free[RESERVE_PRIO], free[RESERVE_BTREE].
            reserved: free_size + prio as usize + btree_reserve,
            free: VecDeque::with_capacity(nbuckets as usize),
            open: Vec::with_capacity(MAX_OPEN_BUCKETS),
            open_clock: 0,
            open_count: 0,
            dirty_buckets: 0,
            keys: 0,
            tick: 0,
            rescale_left: 0,
            rescale_period: (nbuckets * bucket_sectors / 1024).max(1) as i64,
            heap: BinaryHeap::with_capacity((free_size << 3) + 1),
            fifo_last: 0,
            rng: Pcg64Mcg::seed_from_u64(p.seed ^ 0xbcac_4e00),
            seq: SeqDetector::new(p.tasks.max(1)),
            congestion: Congestion::new(
                c.congested_read_threshold_us,
                c.congested_write_threshold_us,
                p.seed ^ 0xc0a9_e57e,
            ),
            stats: BcacheStats::default(),
            // bch_cache_set_alloc(): btree_pages = bucket pages, or max(that / 4,
            // BTREE_MAX_PAGES) when above BTREE_MAX_PAGES.
            node_bytes: if c.bucket_size > BTREE_MAX_BYTES {
                (c.bucket_size / 4).max(BTREE_MAX_BYTES) as u32
            } else {
                c.bucket_size as u32
            },
            wb: Writeback::new(c, units),
        };
        b.reset();
        b
    }

    /// Empties the cache set (a new cache set on a blank device), keeping allocations.
    fn format(&mut self) {
        self.slots.fill(EMPTY);
        self.wb.chunks.fill(0);
        self.reset();
    }

    /// Buckets, lists and counters of an empty cache set.
    fn reset(&mut self) {
        for (k, b) in self.buckets.iter_mut().enumerate() {
            let mark = if (k as u32) < self.first_data { Mark::Metadata } else { Mark::Unused };
            *b = Bucket { gen: 0, last_gc: 0, mark, stamp: 0, live: 0, dirty: 0, keys: 0 };
        }
        self.free.clear();
        self.open.clear();
        self.open_count = 0;
        self.dirty_buckets = 0;
        self.keys = 0;
        self.tick = 0;
        self.rescale_left = self.rescale_period;
        self.fifo_last = self.first_data;
        self.seq.reset();
        self.congestion.reset();
        self.stats = BcacheStats::default();
        self.wb.restart();
    }

    /// Counters since boot and current sizes.
    pub fn stats(&self) -> BcacheStats {
        BcacheStats { writeback_rate: self.writeback_rate(), ..self.stats }
    }

    /// Bucket size in bytes.
    pub fn bucket_size(&self) -> u64 {
        u64::from(self.bucket_units) << self.unit_shift
    }

    /// Buckets of the cache device.
    pub fn nbuckets(&self) -> u64 {
        self.buckets.len() as u64
    }

    /// Index granularity in bytes.
    pub fn unit(&self) -> u32 {
        1 << self.unit_shift
    }

    /// `gc_stats.in_use`: percent of buckets not available for new data (dirty,
    /// metadata, pinned).
    pub fn in_use(&self) -> u32 {
        let n = self.buckets.len() as u64;
        let busy = u64::from(self.first_data + self.open_count + self.dirty_buckets);
        (busy.min(n) * 100 / n) as u32
    }

    /// The bucket and dirty bit of a cached unit, clearing a stale entry.
    fn lookup(&mut self, unit: u64) -> Option<(u32, bool)> {
        let s = self.slots[unit as usize];
        if s == EMPTY {
            return None;
        }
        let b = (s >> BUCKET_SHIFT) - 1;
        if u32::from(self.buckets[b as usize].gen) != s & GEN_MASK {
            self.slots[unit as usize] = EMPTY;
            return None;
        }
        Some((b, s & DIRTY_BIT != 0))
    }

    /// Drops the cached copy of a unit (overwritten or invalidated by a write).
    fn drop_unit(&mut self, unit: u64) {
        if let Some((b, dirty)) = self.lookup(unit) {
            self.slots[unit as usize] = EMPTY;
            self.buckets[b as usize].live -= 1;
            self.stats.size -= 1 << self.unit_shift;
            if dirty {
                self.clear_dirty(unit, b);
            }
        }
    }

    /// `check_should_bypass()` for a request of `bytes` at byte `offset`.
    fn should_bypass(&mut self, task: usize, offset: u64, bytes: u32, write: bool, now: Nanos) -> bool {
        let skip = self.in_use() > CUTOFF_CACHE_ADD
            || self.mode == BcacheCacheMode::None
            || (self.mode == BcacheCacheMode::Writearound && write)
            || {
                let congested = self.congestion.get(now);
                if congested == 0 && self.sequential_cutoff == 0 {
                    false
                } else {
                    let sectors = self.seq.track(task, offset >> 9, bytes, now) >> 9;
                    (self.sequential_cutoff != 0 && sectors >= self.sequential_cutoff >> 9)
                        || (congested != 0 && sectors >= congested)
                }
            };
        if skip {
            self.stats.bypassed += u64::from(bytes);
        } else {
            self.rescale_priorities(u64::from(bytes >> 9));
        }
        skip
    }

    /// A read of `bytes` at byte `offset` of the backing device by `task` at `now`;
    /// `io` submits each device I/O and returns its completion time.
    pub fn read(
        &mut self,
        task: usize,
        offset: u64,
        bytes: u32,
        now: Nanos,
        mut io: impl FnMut(Target, Op, u32) -> Nanos,
    ) -> ReadResult {
        debug_assert!(
            offset.is_multiple_of(u64::from(self.unit())) && bytes.is_multiple_of(self.unit()),
            "unaligned"
        );
        self.wb.note_request();
        let bypass = self.should_bypass(task, offset, bytes, false, now);
        let start = offset >> self.unit_shift;
        let end = start + u64::from(bytes >> self.unit_shift);
        let mut r = ReadResult { done: now, ios: 0, insert: None };
        let mut missed = false;
        let mut u = start;
        while u < end {
            if let Some((b, _)) = self.lookup(u) {
                // cache_lookup_fn(): one read per run of the key's bucket; prio refreshed.
                let mut v = u + 1;
                while v < end && self.lookup(v).is_some_and(|(c, _)| c == b) {
                    v += 1;
                }
                self.buckets[b as usize].stamp = self.tick;
                let len = ((v - u) << self.unit_shift) as u32;
                let done = io(Target::Cache, Op::Read, len);
                self.congestion.account(false, now, done);
                self.stats.cache_read_bytes += u64::from(len);
                r.done = r.done.max(done);
                r.ios += 1;
                u = v;
            } else {
                let mut v = u + 1;
                while v < end && self.lookup(v).is_none() {
                    v += 1;
                }
                let mut len = v - u;
                if !missed && !bypass {
                    // cached_dev_cache_miss(): read and insert the gap; with readahead, up
                    // to `readahead` beyond the request, stopping at the next cached key.
                    let reada = if self.in_use() < CUTOFF_CACHE_READA {
                        self.readahead_units.min(self.slots.len() as u64 - end)
                    } else {
                        0
                    };
                    if reada > 0 {
                        self.stats.cache_readaheads += 1;
                        if v == end {
                            let mut w = end;
                            while w < end + reada && self.lookup(w).is_none() {
                                w += 1;
                            }
                            len = w - u;
                        }
                    }
                    r.insert = Some((u << self.unit_shift, (len << self.unit_shift) as u32));
                }
                missed = true;
                let bytes = (len << self.unit_shift) as u32;
                let done = io(Target::Backing, Op::Read, bytes);
                self.stats.backing_read_bytes += u64::from(bytes);
                r.done = r.done.max(done);
                r.ios += 1;
                u = v;
            }
        }
        match (bypass, missed) {
            (false, false) => self.stats.cache_hits += 1,
            (false, true) => self.stats.cache_misses += 1,
            (true, false) => self.stats.cache_bypass_hits += 1,
            (true, true) => self.stats.cache_bypass_misses += 1,
        }
        r
    }

    /// `bch_data_insert()` of a read miss's data (the range [`ReadResult::insert`] gave)
    /// once the backing read completed, at `now`.
    pub fn insert(
        &mut self,
        task: usize,
        offset: u64,
        bytes: u32,
        now: Nanos,
        io: impl FnMut(Target, Op, u32) -> Nanos,
    ) -> WriteResult {
        let start = offset >> self.unit_shift;
        let end = start + u64::from(bytes >> self.unit_shift);
        if (start..end).any(|u| self.lookup(u).is_some()) {
            // The replace key no longer matches (bch_btree_insert() -> -ESRCH).
            self.stats.cache_miss_collisions += 1;
            return WriteResult { done: now, ios: 0 };
        }
        let (r, _) = self.place(task, start, end, false, now, io);
        r
    }

    /// A write of `bytes` at byte `offset` by `task` at `now` (`cached_dev_write()`);
    /// `sync` is REQ_SYNC (O_DIRECT, fsync'd writes).
    pub fn write(
        &mut self,
        task: usize,
        offset: u64,
        bytes: u32,
        sync: bool,
        now: Nanos,
        mut io: impl FnMut(Target, Op, u32) -> Nanos,
    ) -> WriteResult {
        debug_assert!(
            offset.is_multiple_of(u64::from(self.unit())) && bytes.is_multiple_of(self.unit()),
            "unaligned"
        );
        self.wb.note_request();
        let would_skip = self.should_bypass(task, offset, bytes, true, now);
        let start = offset >> self.unit_shift;
        let end = start + u64::from(bytes >> self.unit_shift);
        let in_use = self.in_use();
        // bch_keybuf_check_overlapping(): a write over keys being written back is forced
        // to writeback; should_writeback() otherwise.
        let overlaps = self.mode == BcacheCacheMode::Writeback && self.wb.check_overlapping(start, end);
        let writeback = overlaps
            || (self.mode == BcacheCacheMode::Writeback
                && in_use <= CUTOFF_WRITEBACK_SYNC
                && !would_skip
                && (sync || in_use <= CUTOFF_WRITEBACK));
        let mut r = WriteResult { done: now, ios: 0 };
        if writeback {
            self.wb.add(now);
            let (w, placed) = self.place(task, start, end, true, now, &mut io);
            if placed == end - start {
                return w;
            }
            // No bucket for the rest (simplification 4): write it through.
            r = w;
        } else if !would_skip {
            let (w, _) = self.place(task, start, end, false, now, &mut io);
            r = w;
        } else {
            for u in start..end {
                self.drop_unit(u);
            }
        }
        let done = io(Target::Backing, Op::Write, bytes);
        self.stats.backing_write_bytes += u64::from(bytes);
        WriteResult { done: r.done.max(done), ios: r.ios + 1 }
    }

    /// An empty REQ_PREFLUSH bio (an fsync's `blkdev_issue_flush()`, a journal commit's
    /// flush) (`cached_dev_nodata()`): the cache set's journal is written with a flush
    /// (`bch_journal_meta()`, its write not modelled: simplification 2) and the flush goes
    /// to the backing device too, in every cache mode. `flush` sends a cache flush to a
    /// device now and returns its completion; returns when both are done.
    pub fn flush(&mut self, mut flush: impl FnMut(Target) -> Nanos) -> Nanos {
        self.wb.note_request();
        self.stats.flushes += 1;
        let cache = flush(Target::Cache);
        flush(Target::Backing).max(cache)
    }

    /// `writeback_rate` as sysfs shows it: bytes per second in writeback mode, else 0.
    pub fn writeback_rate(&self) -> u64 {
        if self.mode == BcacheCacheMode::Writeback {
            (self.wb.rate.max(0) as u64) << 9
        } else {
            0
        }
    }

    /// `writeback_rate_debug`'s target, proportional and integral terms, bytes/s (target:
    /// bytes of dirty data).
    pub fn writeback_rate_debug(&self) -> (u64, i64, i64) {
        ((self.wb.target.max(0) as u64) << 9, self.wb.proportional << 9, self.wb.integral_scaled << 9)
    }

    /// The cached device is registered again at `now` after a reboot: with dirty data
    /// (`bch_sectors_dirty_init()`, BDEV_STATE_DIRTY) its writeback thread starts.
    pub fn resume_writeback(&mut self, now: Nanos) {
        if self.stats.dirty_data > 0 {
            self.wb.add(now);
        }
    }

    /// Whether the cache runs in writeback mode (has a writeback thread).
    pub fn is_writeback(&self) -> bool {
        self.mode == BcacheCacheMode::Writeback
    }

    /// When the writeback thread next has something to do (None: asleep until a
    /// writeback write wakes it); step it then with [`Bcache::writeback_step`].
    pub fn writeback_due(&self) -> Option<Nanos> {
        self.wb.due()
    }

    /// A reboot. The cache set survives unless `device_lost` (a blank instance-storage
    /// device: a new cache set); sysfs counters start again from zero.
    pub fn restart(&mut self, device_lost: bool) -> RestartResult {
        let node_bytes = self.node_bytes;
        if device_lost {
            let dirty_lost = self.stats.dirty_data;
            self.format();
            return RestartResult { lost: true, dirty_lost, btree_read_bytes: 0, node_bytes };
        }
        // Open buckets keep what they hold; free-list buckets are empty and reusable.
        for k in 0..self.open.len() {
            if self.open[k].bucket != u32::MAX {
                self.close_bucket(k);
            }
        }
        self.open.clear();
        while let Some(b) = self.free.pop_front() {
            self.buckets[b as usize].mark = Mark::Unused;
        }
        self.seq.reset();
        self.congestion.reset();
        let (size, dirty_data) = (self.stats.size, self.stats.dirty_data);
        self.stats = BcacheStats { size, dirty_data, ..Default::default() };
        // In-flight writeback is lost with the machine; the keys stay dirty.
        self.wb.restart();
        RestartResult { lost: false, dirty_lost: 0, btree_read_bytes: self.keys * BKEY_BYTES, node_bytes }
    }
}

/// MAX_OPEN_BUCKETS (alloc.c of current kernels; older kernels opened 6).
const MAX_OPEN_BUCKETS: usize = 128;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod writeback_tests;
