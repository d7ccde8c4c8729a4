//! The InnoDB buffer pool: a page cache with an LRU list and midpoint insertion.
//!
//! Source (facts, not code): MySQL 5.7 / MariaDB 10.x `buf0lru.cc` (`buf_LRU_add_block`,
//! `buf_LRU_old_adjust_len`, `buf_LRU_old_init`, `BUF_LRU_OLD_MIN_LEN`,
//! `BUF_LRU_OLD_TOLERANCE`), `buf0buf.cc`/`buf0buf.ic` (`buf_page_peek_if_too_old`,
//! `buf_page_peek_if_young`, `buf_page_make_young`, `buf_page_set_accessed`,
//! `buf_chunk_init`), and the manual's "Making the Buffer Pool Scan Resistant".
//!
//! What is modelled:
//! - The LRU list is split at `LRU_old`: the old sublist is the tail holding
//!   `innodb_old_blocks_pct` (37%) of the list, kept within ±`BUF_LRU_OLD_TOLERANCE` (20)
//!   pages of its target by moving the boundary one page at a time. The old sublist
//!   exists only once the list has `BUF_LRU_OLD_MIN_LEN` (512) pages; before that every
//!   page enters at the head.
//! - A page about to be read from disk takes its frame and enters the LRU list right
//!   behind the first page of the old sublist *before* the read is issued
//!   (`buf_page_init_for_read`, `buf_LRU_add_block(bpage, true)`), not yet accessed and
//!   with a zero `freed_page_clock` (only an insertion at the head sets it). Each
//!   insertion lengthens the old sublist and `buf_LRU_old_adjust_len` moves its boundary
//!   toward the tail when it is over its target, marking the boundary page young: while
//!   the list grows (between the page cleaner's batches) about 63% of insertions mark the
//!   page inserted before them young. When the reader then first accesses its page
//!   (`buf_page_make_young_if_needed` after the read), a page still old stays where it is
//!   (the `innodb_old_blocks_time` rule below), but a page the boundary passed while it
//!   was being read is young with a zero clock, "too old" for `buf_page_peek_if_young`,
//!   and goes to the head of the list. So the more reads are in flight at once, the more
//!   of the pool is recently read pages (measured on MariaDB 10.11.19 with 8 readers at
//!   300 reads/s: 27-40% of loads went to the head, 65% of the pool was loaded in the last
//!   7000 loads; with about one read in flight, almost none and 47-51%).
//! - On a hit to an old page: it moves to the head of the list ("made young") only if its
//!   first access was at least `innodb_old_blocks_time` ago; otherwise it stays
//!   (`pages_not_made_young`). With `innodb_old_blocks_time` = 0 old pages follow the
//!   young rule below.
//! - On a hit to a young page: it moves to the head only if it is not among the most
//!   recently made young, measured as InnoDB does with the eviction clock: at least
//!   `curr_size * (1 - old_ratio) / 4` pages were evicted since it was last put at the
//!   head (`buf_page_peek_if_young`). So the first quarter of the young sublist is never
//!   reshuffled.
//! - When the pool is full, an insert evicts the LRU tail.
//!
//! Frames (`curr_size`), per server:
//! - MySQL 5.7: `innodb_buffer_pool_size / innodb_page_size` minus one frame per chunk
//!   (`innodb_buffer_pool_chunk_size` = 128 MiB: `buf_chunk_init` adds the block
//!   descriptors' room to the allocation and loses one frame to alignment), so 128 MiB of
//!   16 KiB pages gives 8191, as SHOW ENGINE INNODB STATUS reports.
//! - MariaDB 10.11 (10.11.12+, MDEV-29445: no chunks): the pool is cut into 8 MiB extents
//!   (`innodb_buffer_pool_extent_size`), each starting with the frames its `buf_block_t`
//!   descriptors take (`first_page`: `8M / ps - 8M / (ps + sizeof (buf_block_t))`);
//!   `buf_pool_t::get_n_blocks` counts the rest, a final partial extent included. 128 MiB
//!   of 16 KiB pages: 16 x 507 = 8112 frames (measured on 10.11.19).
//!
//! Free frames, per server (the page cleaner; source MariaDB 10.11.18 `buf0lru.cc`
//! `buf_LRU_get_free_block`, `buf0flu.cc` `buf_flush_page_cleaner`,
//! `buf_pool_t::need_LRU_eviction`, `buf_flush_LRU_list_batch`; MySQL 5.7.29 `buf0flu.cc`
//! `buf_flush_page_cleaner_coordinator`, `pc_flush_slot`, `srv0srv.cc`
//! `srv_check_activity`):
//! - MariaDB 10.11 (10.11.7+, MDEV-33053): after every allocation that leaves fewer than
//!   `innodb_lru_scan_depth / 2` frames free (with more than `BUF_LRU_MIN_LEN` pages in the
//!   LRU), the allocating thread wakes the page cleaner, which frees clean pages from the
//!   LRU tail until `innodb_lru_scan_depth` (1536) frames are free. So the pool holds
//!   between 6576 and 7344 pages of 8112, about 6960 on average at any read rate (measured
//!   on 10.11.19: 1150-1153 free on average from 200 to 3100 reads/s).
//! - MySQL 5.7: the page cleaner refills the free list (to `innodb_lru_scan_depth` per
//!   instance) only in its "server active" branch, and a read-only SELECT is no activity
//!   (`srv_check_activity`: only redo-writing commits and row changes count); so a reader
//!   takes the last free frame, then evicts the LRU tail itself, one page per read
//!   (`buf_LRU_get_free_block`): the pool stays full.
//!
//! Simplifications:
//! 1. Only clean, read-only pages: no flushing, no dirty pages, no read-ahead (linear or
//!    random), no adaptive hash index taking frames (MySQL 5.7 has it on: its node heaps
//!    take a frame per ~670 records of hashed pages, few under uniform random reads); and
//!    so no MySQL 5.7 free-list refill, which needs write activity.
//! 2. Times are kept in milliseconds (as InnoDB's `access_time`), 32 bits, from the
//!    simulation's start.
//! 3. (none: the boundary's target is `buf_LRU_old_adjust_len`'s, in 1/1024.)
//! 4. MariaDB's page cleaner frees its batch at once, within the read that woke it (the
//!    real one takes a moment on its own thread; readers never found the list empty in
//!    the measurements above).
//!
//! Memory: a 32-byte slab node per cached page (its flush-list entry's number among them,
//! as InnoDB's `buf_page_t` carries its flush-list links), a 4-byte free-slot entry per frame, and the
//! page table (`page_table`: 4 bytes per page of the data set, or a `KeyTable` of about 22
//! bytes per frame, whichever the data set allows). The table's slot of a page follows
//! from its key, so the driver prefetches the slots of a statement's pages before it runs
//! them. No allocation after construction (but a dense table's growth with its files).

use super::page_table::{self, PageTable};
use crate::config::{InnodbConfig, InnodbServer};
use crate::sim::time::{Nanos, MS};
use crate::support::mem_hint::prefetch;

/// A page of a tablespace, (space_id, page_no) packed in a u64 by [`PageKey::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey(pub u64);

impl PageKey {
    /// Packs (space_id, page_no): space id in the high 32 bits, page number in the low 32
    /// (InnoDB page numbers are 32-bit).
    #[inline]
    pub fn new(space_id: u32, page_no: u64) -> PageKey {
        debug_assert!(page_no <= u32::MAX as u64);
        PageKey(((space_id as u64) << 32) | (page_no & 0xFFFF_FFFF))
    }

    /// The tablespace id.
    #[inline]
    pub fn space_id(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The page number in the tablespace.
    #[inline]
    pub fn page_no(self) -> u64 {
        self.0 & 0xFFFF_FFFF
    }
}

pub(crate) const NIL: u32 = u32::MAX;
const OLD_BIT: u32 = 1 << 31;
/// The page is modified and not yet written (`oldest_modification != 0`).
const DIRTY_BIT: u32 = 1 << 30;
/// A write of the page is in flight (`io_fix == BUF_IO_WRITE`): it cannot be evicted.
const WRITE_FIX_BIT: u32 = 1 << 29;
/// The eviction clock's bits (29: it wraps after 2^29 evictions, beyond any run).
const CLOCK_MASK: u32 = WRITE_FIX_BIT - 1;
/// `BUF_LRU_OLD_MIN_LEN`: the old sublist exists from this LRU length on.
pub const BUF_LRU_OLD_MIN_LEN: usize = 512;
/// `BUF_LRU_OLD_TOLERANCE`: slack of the old sublist length around its target.
pub const BUF_LRU_OLD_TOLERANCE: usize = 20;
/// `BUF_LRU_NON_OLD_MIN_LEN`: the young sublist keeps at least this many pages (beyond
/// the tolerance).
pub const BUF_LRU_NON_OLD_MIN_LEN: usize = 5;
/// `BUF_LRU_OLD_RATIO_DIV`: `LRU_old_ratio` is in 1/1024.
pub const OLD_RATIO_DIV: u32 = 1024;
/// `innodb_buffer_pool_chunk_size` default (MySQL 5.7).
pub const CHUNK_SIZE: u64 = 128 << 20;
/// `innodb_buffer_pool_extent_size` (MariaDB 10.11.12+, 64-bit builds).
pub const MARIADB_EXTENT_SIZE: u64 = 8 << 20;
/// `sizeof (buf_block_t)` in MariaDB 10.11.18, ASSUMED 144 bytes: the measured 8112 frames
/// of a 128 MiB pool of 16 KiB pages bound it to 130-161 bytes.
pub const MARIADB_BLOCK_T: u64 = 144;
/// `BUF_LRU_SEARCH_SCAN_THRESHOLD` (MySQL 5.7 `buf0lru.cc`): pages a thread needing a
/// frame scans from the LRU tail for a replaceable one on its first try.
pub const BUF_LRU_SEARCH_SCAN_THRESHOLD: usize = 100;
/// `BUF_LRU_MIN_LEN`: the page cleaner leaves at least this many pages in the LRU list.
pub const BUF_LRU_MIN_LEN: usize = 256;

/// The frames of a pool (`curr_size`): see the module doc.
pub fn pool_frames(cfg: &InnodbConfig) -> u64 {
    let size = cfg.innodb_buffer_pool_size;
    let ps = u64::from(cfg.innodb_page_size).max(1);
    match cfg.server {
        InnodbServer::Mysql57 => (size / ps).saturating_sub(size.div_ceil(CHUNK_SIZE)),
        InnodbServer::Percona57 => {
            // Its instances' frames (`percona_flush::Params::resolve`: the size rounded up
            // to whole chunks of every instance, a frame per chunk lost).
            let instances = cfg.innodb_buffer_pool_instances.unwrap_or(0);
            let r = crate::db::innodb::writes::percona_pool(cfg, instances).resolve();
            r.instance_frames.saturating_mul(r.instances)
        }
        InnodbServer::Mariadb1011 => {
            let per_extent = MARIADB_EXTENT_SIZE / ps;
            let first = per_extent - MARIADB_EXTENT_SIZE / (ps + MARIADB_BLOCK_T);
            let partial = (size % MARIADB_EXTENT_SIZE) / ps;
            size / MARIADB_EXTENT_SIZE * (per_extent - first) + partial.saturating_sub(first)
        }
    }
}

/// The free frames the page cleaner keeps: `(low, high)`: when an allocation leaves
/// fewer than `low` free, it frees LRU tail pages until `high` are free (None: never,
/// readers evict one page each). See the module doc.
pub fn free_frames_rule(cfg: &InnodbConfig) -> Option<(usize, usize)> {
    match cfg.server {
        // Percona Server's LRU manager is a thread of the write path's; without it,
        // readers evict as MySQL 5.7's do.
        InnodbServer::Mysql57 | InnodbServer::Percona57 => None,
        InnodbServer::Mariadb1011 => {
            let depth =
                if cfg.innodb_lru_scan_depth == 0 { 1536 } else { cfg.innodb_lru_scan_depth } as usize;
            Some((depth / 2, depth))
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    /// First access time, ms (0 = never accessed).
    access_ms: u32,
    /// Eviction clock when last put at the head (29 bits) | OLD_BIT | DIRTY_BIT |
    /// WRITE_FIX_BIT.
    clock_old: u32,
    /// The number of the page's entry on the flush list (`flush_list`), 0 when it has
    /// none.
    flush_seq: u64,
}

impl Node {
    #[inline]
    fn old(&self) -> bool {
        self.clock_old & OLD_BIT != 0
    }
    #[inline]
    fn set_old(&mut self, old: bool) {
        if old {
            self.clock_old |= OLD_BIT
        } else {
            self.clock_old &= !OLD_BIT
        }
    }
    #[inline]
    fn clock(&self) -> u32 {
        self.clock_old & CLOCK_MASK
    }
    /// Neither modified nor being written: its frame can be freed.
    #[inline]
    fn replaceable(&self) -> bool {
        self.clock_old & (DIRTY_BIT | WRITE_FIX_BIT) == 0
    }
    /// Sets the clock, keeping the flags.
    #[inline]
    fn set_clock(&mut self, clock: u32) {
        self.clock_old = (self.clock_old & !CLOCK_MASK) | (clock & CLOCK_MASK);
    }
}

/// Buffer pool counters, named after the status variables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferPoolStats {
    /// Innodb_buffer_pool_read_requests: logical page reads (every `access`).
    pub read_requests: u64,
    /// Innodb_buffer_pool_reads: logical reads not satisfied from the pool.
    pub reads: u64,
    /// Innodb_pages_read: pages read from disk into the pool (every `insert`).
    pub pages_read: u64,
    /// Innodb_buffer_pool_pages_made_young.
    pub pages_made_young: u64,
    /// Innodb_buffer_pool_pages_made_not_young.
    pub pages_not_made_young: u64,
    /// Pages evicted from the LRU tail (buffer_LRU_batch_evict_total_pages-like).
    pub pages_evicted: u64,
}

/// The InnoDB buffer pool (LRU with midpoint insertion).
#[derive(Debug, Clone)]
pub struct BufferPool {
    capacity: usize,
    /// `buf_pool.LRU_old_ratio`: the old sublist's share in 1/1024.
    old_ratio: u32,
    old_threshold_ms: u32,
    nodes: Vec<Node>,
    /// Page key -> node.
    table: PageTable,
    head: u32,
    tail: u32,
    /// First page of the old sublist (NIL if none).
    lru_old: u32,
    old_len: usize,
    freed_page_clock: u32,
    /// Node slots of evicted pages not yet reused (frames on the free list).
    free_slots: Vec<u32>,
    /// [`free_frames_rule`].
    refill: Option<(usize, usize)>,
    /// [`BufferPool::scan_limit`].
    scan_limit: usize,
    /// Counters.
    pub stats: BufferPoolStats,
}

/// The pages of data files of `file_bytes` bytes in pages of `page_size` bytes (what
/// [`BufferPool::size_page_table`] takes).
pub fn file_pages(file_bytes: &[u64], page_size: u32) -> Vec<u64> {
    file_bytes.iter().map(|b| b.div_ceil(u64::from(page_size.max(1)))).collect()
}

/// Bytes of simulator memory a pool of `frames` frames takes (see the module doc: a slab
/// node and a free-slot entry per frame, and the page table made for them at once over
/// files of `file_pages` pages).
pub fn memory_bytes(frames: u64, file_pages: &[u64]) -> u64 {
    let per_frame = (std::mem::size_of::<Node>() + std::mem::size_of::<u32>()) as u64;
    frames.saturating_mul(per_frame).saturating_add(page_table::memory_bytes(frames, file_pages))
}

impl BufferPool {
    /// An empty pool sized from `innodb_buffer_pool_size` and `innodb_page_size`.
    pub fn new(cfg: &InnodbConfig) -> BufferPool {
        let capacity = pool_frames(cfg).clamp(1, NIL as u64 - 1) as usize;
        let mut bp = BufferPool::with_capacity(
            capacity,
            cfg.innodb_old_blocks_pct as usize,
            cfg.innodb_old_blocks_time_ns,
        );
        bp.refill = free_frames_rule(cfg);
        bp
    }

    /// An empty pool of `capacity` pages with the given old-sublist share (percent) and
    /// `innodb_old_blocks_time` (ns).
    pub fn with_capacity(
        capacity: usize,
        innodb_old_blocks_pct: usize,
        innodb_old_blocks_time_ns: Nanos,
    ) -> BufferPool {
        // Guaranteed by the callers: `BufferPool::new` clamps the frames to 1 .. NIL - 1.
        assert!(capacity >= 1 && capacity < NIL as usize);
        BufferPool {
            capacity,
            // buf_LRU_old_ratio_update: pct * 1024 / 100.
            old_ratio: (innodb_old_blocks_pct.clamp(5, 95) * OLD_RATIO_DIV as usize / 100) as u32,
            old_threshold_ms: (innodb_old_blocks_time_ns / MS).min(u32::MAX as u64) as u32,
            nodes: Vec::with_capacity(capacity),
            table: PageTable::hashed(capacity),
            head: NIL,
            tail: NIL,
            lru_old: NIL,
            old_len: 0,
            freed_page_clock: 0,
            free_slots: Vec::with_capacity(capacity),
            refill: None,
            scan_limit: BUF_LRU_SEARCH_SCAN_THRESHOLD,
            stats: BufferPoolStats::default(),
        }
    }

    /// Pages the pool holds at most.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages cached now (the LRU list's length).
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len() - self.free_slots.len()
    }

    /// True when no page is cached.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pages in the old sublist.
    #[inline]
    pub fn old_len(&self) -> usize {
        self.old_len
    }

    /// Whether `key` is cached (no counters, no LRU change).
    #[inline]
    pub fn contains(&self, key: PageKey) -> bool {
        self.find(key.0).is_some()
    }

    /// Whether `key` is cached and in the old sublist.
    pub fn is_old(&self, key: PageKey) -> Option<bool> {
        self.find(key.0).map(|i| self.nodes[i as usize].old())
    }

    #[inline]
    fn find(&self, key: u64) -> Option<u32> {
        self.table.get(key)
    }

    /// Starts bringing the table slot of `key` into the CPU caches.
    #[inline]
    pub fn prefetch(&self, key: PageKey) {
        self.table.prefetch(key.0);
    }

    /// If `key` is cached, starts bringing its LRU node into the CPU caches.
    #[inline]
    pub fn prefetch_node(&self, key: PageKey) {
        if let Some(i) = self.find(key.0) {
            prefetch(&self.nodes[i as usize]);
        }
    }

    /// A logical read of `key` at `now`: true on a hit (with InnoDB's make-young rules).
    /// On a miss the caller reads the page and then calls [`BufferPool::insert`].
    pub fn access(&mut self, key: PageKey, now: Nanos) -> bool {
        self.stats.read_requests += 1;
        let Some(i) = self.find(key.0) else {
            self.stats.reads += 1;
            return false;
        };
        self.make_young_if_needed(i, now);
        true
    }

    /// `buf_page_make_young_if_needed`: `set_accessed` (the first access time only), then
    /// `buf_page_peek_if_too_old` decides whether the page moves to the LRU head.
    fn make_young_if_needed(&mut self, i: u32, now: Nanos) {
        let now_ms = to_ms(now);
        let n = &mut self.nodes[i as usize];
        if n.access_ms == 0 {
            n.access_ms = now_ms;
        }
        let old = n.old();
        let too_old = if self.freed_page_clock == 0 {
            // No eviction yet: nothing moves.
            false
        } else if self.old_threshold_ms != 0 && old {
            let aged = now_ms.wrapping_sub(n.access_ms) >= self.old_threshold_ms;
            if !aged {
                self.stats.pages_not_made_young += 1;
            }
            aged
        } else {
            !self.peek_if_young(i)
        };
        if too_old {
            if old {
                self.stats.pages_made_young += 1;
            }
            self.make_young(i);
        }
    }

    /// `buf_page_peek_if_young`: put at the head recently enough that moving it is useless
    /// (a page that entered the old sublist and was never at the head has clock 0).
    #[inline]
    fn peek_if_young(&self, i: u32) -> bool {
        let young_quarter = (self.capacity as u64 * u64::from(OLD_RATIO_DIV - self.old_ratio)
            / (u64::from(OLD_RATIO_DIV) * 4)) as u32;
        self.freed_page_clock < self.nodes[i as usize].clock().wrapping_add(young_quarter)
    }

    /// A page read from disk at `now`: [`BufferPool::insert_for_read`], then its reader's
    /// [`BufferPool::first_access`] at once.
    pub fn insert(&mut self, key: PageKey, now: Nanos) {
        self.insert_for_read(key);
        self.first_access(key, now);
    }

    /// The reader of a page it just read (`insert_for_read`) accesses it at `now`: the
    /// first access (`buf_page_make_young_if_needed`). A page the boundary of the old
    /// sublist passed while it was being read is young with a zero clock, so it goes to the
    /// LRU head now. (A page evicted while in flight is inserted again.)
    pub fn first_access(&mut self, key: PageKey, now: Nanos) {
        let i = match self.find(key.0) {
            Some(i) => i,
            None => {
                // Evicted while in flight: inserted again if a frame can be had.
                if !self.insert_for_read(key) {
                    return;
                }
                // Invariant: insert_for_read indexed the key when it returned true.
                self.find(key.0).expect("just inserted")
            }
        };
        self.make_young_if_needed(i, now);
    }

    /// `buf_page_init_for_read` + `buf_LRU_add_block(bpage, true)`: a page about to be read
    /// from disk takes a free frame (or the frame of the last replaceable page among the
    /// last [`BufferPool::scan_limit`] of the LRU list: not dirty, not being written) and
    /// enters the LRU list right behind the first page of the old sublist, not yet
    /// accessed, with a zero `freed_page_clock`. Inserting a cached page is a no-op
    /// (true). False when no frame could be had: every page scanned is dirty or being
    /// written; the caller flushes one or waits for the page cleaner, then asks again.
    pub fn insert_for_read(&mut self, key: PageKey) -> bool {
        if self.find(key.0).is_some() {
            return true;
        }
        if self.len() >= self.capacity && !self.evict_from_tail(self.scan_limit) {
            // No free frame and nothing replaceable near the tail.
            return false;
        }
        self.stats.pages_read += 1;
        let node = Node { key: key.0, prev: NIL, next: NIL, access_ms: 0, clock_old: 0, flush_seq: 0 };
        let i = match self.free_slots.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.table.insert(key.0, i);
        if self.lru_old != NIL {
            self.insert_after_old(i);
        } else {
            // buf_LRU_add_block on a short list: at the head, with the clock.
            self.nodes[i as usize].set_clock(self.freed_page_clock);
            self.push_head(i);
            if self.len() >= BUF_LRU_OLD_MIN_LEN {
                self.old_init();
            }
        }
        if let Some((low, high)) = self.refill {
            if self.free_frames() < low && self.len() > BUF_LRU_MIN_LEN {
                // The page cleaner's batch (buf_flush_LRU_list_batch): clean pages only;
                // dirty ones are the page cleaner's to write (`dirty_from_tail`).
                self.free_from_tail(high, usize::MAX);
            }
        }
        true
    }

    /// Frames on the free list (`UT_LIST_GET_LEN(buf_pool.free)`).
    #[inline]
    pub fn free_frames(&self) -> usize {
        self.capacity - self.len()
    }

    /// How far from the LRU tail a thread looks for a replaceable page when it needs a
    /// frame and none is free (`BUF_LRU_SEARCH_SCAN_THRESHOLD`, 100, in MySQL 5.7's first
    /// try; see [`BufferPool::set_scan_limit`]).
    #[inline]
    pub fn scan_limit(&self) -> usize {
        self.scan_limit
    }

    /// Sets [`BufferPool::scan_limit`] (at least 1).
    pub fn set_scan_limit(&mut self, scan: usize) {
        self.scan_limit = scan.max(1);
    }

    /// A thread needing a frame takes a free one only, never evicting a page itself
    /// (Percona Server's `innodb_empty_free_list_algorithm` = backoff: only the LRU
    /// manager frees frames); `false` restores the scan of `BUF_LRU_SEARCH_SCAN_THRESHOLD`
    /// pages.
    pub fn set_free_list_only(&mut self, only: bool) {
        self.scan_limit = if only { 0 } else { BUF_LRU_SEARCH_SCAN_THRESHOLD };
    }

    /// Frees the frame of the replaceable page nearest the LRU tail among the last `scan`
    /// (`buf_LRU_free_from_common_LRU_list`); false if none is.
    pub fn evict_from_tail(&mut self, scan: usize) -> bool {
        let mut c = self.tail;
        let mut n = 0;
        while c != NIL && n < scan {
            if self.nodes[c as usize].replaceable() {
                self.evict(c);
                return true;
            }
            c = self.nodes[c as usize].prev;
            n += 1;
        }
        false
    }

    /// Frees replaceable pages from the LRU tail up, looking at `scan` pages at most,
    /// until `target` frames are free or the list is down to `BUF_LRU_MIN_LEN`; returns
    /// the pages freed.
    pub fn free_from_tail(&mut self, target: usize, scan: usize) -> usize {
        let mut c = self.tail;
        let (mut n, mut freed) = (0, 0);
        while c != NIL && n < scan && self.free_frames() < target && self.len() > BUF_LRU_MIN_LEN {
            let prev = self.nodes[c as usize].prev;
            if self.nodes[c as usize].replaceable() {
                self.evict(c);
                freed += 1;
            }
            c = prev;
            n += 1;
        }
        freed
    }

    /// Calls `f` with each dirty page not being written among the last `scan` pages of the
    /// LRU list, tail first (what an LRU flush batch writes); `f` returns false to stop.
    pub fn dirty_from_tail(&self, scan: usize, mut f: impl FnMut(PageKey) -> bool) {
        let mut c = self.tail;
        let mut n = 0;
        while c != NIL && n < scan {
            let node = &self.nodes[c as usize];
            if node.clock_old & (DIRTY_BIT | WRITE_FIX_BIT) == DIRTY_BIT && !f(PageKey(node.key)) {
                return;
            }
            c = node.prev;
            n += 1;
        }
    }

    /// The page at the LRU list's tail, or before `at` toward the head (None: past the
    /// head, or `at` not cached).
    pub fn lru_prev(&self, at: Option<PageKey>) -> Option<PageKey> {
        let i = match at {
            None => self.tail,
            Some(k) => self.nodes[self.find(k.0)? as usize].prev,
        };
        (i != NIL).then(|| PageKey(self.nodes[i as usize].key))
    }

    /// A cached page's (dirty, being written) flags, None if it is not cached.
    pub fn flags(&self, key: PageKey) -> Option<(bool, bool)> {
        let c = self.nodes[self.find(key.0)? as usize].clock_old;
        Some((c & DIRTY_BIT != 0, c & WRITE_FIX_BIT != 0))
    }

    /// Frees cached page `key`'s frame if it is replaceable; false otherwise.
    pub fn evict_page(&mut self, key: PageKey) -> bool {
        match self.find(key.0) {
            Some(i) if self.nodes[i as usize].replaceable() => {
                self.evict(i);
                true
            }
            _ => false,
        }
    }

    /// Sizes the page table for the data files, file `f` of `file_pages[f]` pages
    /// (`page_table`: dense when that fits). Called on an empty pool.
    pub fn size_page_table(&mut self, file_pages: &[u64]) {
        assert!(self.is_empty(), "the page table is sized before the pool holds a page");
        self.table = PageTable::for_files(self.capacity, file_pages);
    }

    /// The same pool emptied (a restarted server's), its page table sized alike.
    pub fn restarted(&self, cfg: &InnodbConfig) -> BufferPool {
        let mut bp = BufferPool::new(cfg);
        if bp.capacity == self.capacity {
            bp.table = self.table.emptied();
        }
        bp
    }

    /// Turns the page cleaner's immediate refill off (a run whose page cleaner is a thread
    /// of its own frees the frames).
    pub fn set_refill(&mut self, refill: Option<(usize, usize)>) {
        self.refill = refill;
    }

    /// A mini-transaction modified cached page `key`: it is dirty until written. Returns
    /// its flush-list slot ([`BufferPool::flush_slot`]), None if it is not cached.
    pub fn set_dirty(&mut self, key: PageKey) -> Option<&mut u64> {
        let i = self.find(key.0)?;
        let n = &mut self.nodes[i as usize];
        n.clock_old |= DIRTY_BIT;
        Some(&mut n.flush_seq)
    }

    /// Cached page `key`'s flush-list slot: the number of its entry on the flush list, 0
    /// when it has none (kept by `flush_list::FlushList`); None if it is not cached.
    pub fn flush_slot(&mut self, key: PageKey) -> Option<&mut u64> {
        let i = self.find(key.0)?;
        Some(&mut self.nodes[i as usize].flush_seq)
    }

    /// [`BufferPool::flush_slot`]'s value.
    pub fn flush_seq(&self, key: PageKey) -> Option<u64> {
        self.find(key.0).map(|i| self.nodes[i as usize].flush_seq)
    }

    /// Whether `key` is cached and dirty.
    pub fn is_dirty(&self, key: PageKey) -> bool {
        self.find(key.0).is_some_and(|i| self.nodes[i as usize].clock_old & DIRTY_BIT != 0)
    }

    /// A write of cached page `key` starts (`buf_flush_page`: io_fix = BUF_IO_WRITE, and
    /// the copy written is the page as it is now): it is clean again unless modified
    /// before the write completes, and cannot be evicted until then. False if not cached.
    pub fn begin_write(&mut self, key: PageKey) -> bool {
        let Some(i) = self.find(key.0) else { return false };
        let n = &mut self.nodes[i as usize];
        n.clock_old = (n.clock_old & !DIRTY_BIT) | WRITE_FIX_BIT;
        true
    }

    /// The write of `key` completed (`buf_page_write_complete`); with `evict` (an LRU
    /// flush) its frame is freed at once if it was not modified meanwhile.
    pub fn end_write(&mut self, key: PageKey, evict: bool) {
        let Some(i) = self.find(key.0) else { return };
        self.nodes[i as usize].clock_old &= !WRITE_FIX_BIT;
        if evict && self.nodes[i as usize].replaceable() {
            self.evict(i);
        }
    }

    /// Frees page `i`'s frame (`buf_LRU_free_page`): it leaves the LRU list and the
    /// page table, and the frame goes to the free list.
    fn evict(&mut self, t: u32) {
        // Invariant: a page on the flush list is dirty (the flush list leaves it when its
        // write starts), and a dirty page is never evicted.
        debug_assert_eq!(self.nodes[t as usize].flush_seq, 0, "a page on the flush list evicted");
        self.unlink(t);
        let old_key = self.nodes[t as usize].key;
        // Invariant: every page on the LRU list is indexed (inserted together, evicted together).
        self.table.remove(old_key).expect("an LRU page is in the table");
        self.stats.pages_evicted += 1;
        self.freed_page_clock = (self.freed_page_clock + 1) & CLOCK_MASK;
        self.free_slots.push(t);
        if self.len() < BUF_LRU_OLD_MIN_LEN && self.lru_old != NIL {
            // buf_LRU_remove_block: too short for an old sublist; every page is young.
            let mut c = self.head;
            while c != NIL {
                self.nodes[c as usize].set_old(false);
                c = self.nodes[c as usize].next;
            }
            self.lru_old = NIL;
            self.old_len = 0;
        }
    }

    fn put_at_head_young(&mut self, i: u32) {
        self.nodes[i as usize].set_old(false);
        self.nodes[i as usize].set_clock(self.freed_page_clock);
        self.push_head(i);
    }

    /// `buf_page_make_young`: move to the head of the LRU list.
    fn make_young(&mut self, i: u32) {
        self.unlink(i);
        self.put_at_head_young(i);
        self.adjust_old_len();
    }

    /// Removes `i` from the list, keeping `lru_old` and `old_len` right.
    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if self.nodes[i as usize].old() {
            self.old_len -= 1;
            if self.lru_old == i {
                self.lru_old = next;
                if next == NIL {
                    // Old sublist empty: the boundary moves up to the prev (becomes old).
                    self.lru_old = NIL;
                }
            }
        }
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
            if prev != NIL {
                // The next eviction unlinks the new tail, writes its predecessor and
                // removes its key from the table.
                self.table.prefetch(self.nodes[prev as usize].key);
                let p = self.nodes[prev as usize].prev;
                if p != NIL {
                    prefetch(&self.nodes[p as usize]);
                }
            }
        }
        let n = &mut self.nodes[i as usize];
        n.prev = NIL;
        n.next = NIL;
        if self.lru_old == NIL && self.old_len == 0 && self.len() >= BUF_LRU_OLD_MIN_LEN && self.tail != NIL {
            // Keep an old sublist once it exists: restart it at the tail.
            self.lru_old = self.tail;
            self.nodes[self.tail as usize].set_old(true);
            self.old_len = 1;
        }
    }

    fn push_head(&mut self, i: u32) {
        let h = self.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = h;
        }
        if h != NIL {
            self.nodes[h as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }

    /// Insert `i` right behind the first page of the old sublist (`UT_LIST_INSERT_AFTER`
    /// of `LRU_old`).
    fn insert_after_old(&mut self, i: u32) {
        let o = self.lru_old;
        let nx = self.nodes[o as usize].next;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = o;
            n.next = nx;
            n.set_old(true);
        }
        self.nodes[o as usize].next = i;
        if nx != NIL {
            self.nodes[nx as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.old_len += 1;
        self.adjust_old_len();
    }

    /// `buf_LRU_old_init`: all pages old, then shrink to the target.
    fn old_init(&mut self) {
        let mut c = self.head;
        while c != NIL {
            self.nodes[c as usize].set_old(true);
            c = self.nodes[c as usize].next;
        }
        self.lru_old = self.head;
        self.old_len = self.len();
        self.adjust_old_len();
    }

    /// `buf_LRU_old_adjust_len`: move the boundary until the old length is within the
    /// tolerance of its target.
    fn adjust_old_len(&mut self) {
        if self.lru_old == NIL {
            return;
        }
        let len = self.len();
        // buf_LRU_old_adjust_len: LRU_old_ratio / 1024 of the list, leaving at least
        // BUF_LRU_OLD_TOLERANCE + BUF_LRU_NON_OLD_MIN_LEN young.
        let target = (len * self.old_ratio as usize / OLD_RATIO_DIV as usize)
            .min(len.saturating_sub(BUF_LRU_OLD_TOLERANCE + BUF_LRU_NON_OLD_MIN_LEN));
        loop {
            if self.old_len + BUF_LRU_OLD_TOLERANCE < target {
                let p = self.nodes[self.lru_old as usize].prev;
                if p == NIL {
                    return;
                }
                self.nodes[p as usize].set_old(true);
                self.lru_old = p;
                self.old_len += 1;
            } else if self.old_len > target + BUF_LRU_OLD_TOLERANCE {
                let o = self.lru_old;
                let nx = self.nodes[o as usize].next;
                if nx == NIL {
                    return;
                }
                self.nodes[o as usize].set_old(false);
                self.lru_old = nx;
                self.old_len -= 1;
            } else {
                return;
            }
        }
    }

    /// Pages from the LRU head to the tail (for tests and inspection; allocates).
    pub fn lru_keys(&self) -> Vec<PageKey> {
        let mut v = Vec::with_capacity(self.len());
        let mut c = self.head;
        while c != NIL {
            v.push(PageKey(self.nodes[c as usize].key));
            c = self.nodes[c as usize].next;
        }
        v
    }
}

#[inline]
fn to_ms(now: Nanos) -> u32 {
    // 0 means "never accessed" in InnoDB; shift by one so time 0 is a real access.
    ((now / MS) as u32).wrapping_add(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::SEC;
    use proptest::prelude::*;

    fn cfg(size: u64) -> InnodbConfig {
        InnodbConfig {
            innodb_buffer_pool_size: size,
            innodb_page_size: 16384,
            innodb_old_blocks_pct: 37,
            innodb_old_blocks_time_ns: SEC,
            innodb_flush_method: "O_DIRECT".into(),
            innodb_lru_scan_depth: 0,
            server: crate::config::InnodbServer::Mysql57,
            character_set_server: crate::config::CharacterSet::Latin1,
            ..Default::default()
        }
    }

    fn mariadb(size: u64) -> InnodbConfig {
        InnodbConfig { server: InnodbServer::Mariadb1011, ..cfg(size) }
    }

    fn k(p: u64) -> PageKey {
        PageKey::new(1, p)
    }

    #[test]
    fn capacity_from_config() {
        assert_eq!(BufferPool::new(&cfg(128 << 20)).capacity(), 8191);
        assert_eq!(BufferPool::new(&cfg(2560 << 20)).capacity(), 163_840 - 20);
    }

    #[test]
    fn mariadb_frames_follow_its_8m_extents() {
        // 16 extents of 512 frames, 5 of each taken by the block descriptors (measured on
        // 10.11.19: Innodb_buffer_pool_pages_total = 8112).
        assert_eq!(BufferPool::new(&mariadb(128 << 20)).capacity(), 8112);
        // A partial extent loses its first frames too: 12 MiB = one extent + 256 frames.
        assert_eq!(pool_frames(&mariadb(12 << 20)), 507 + 256 - 5);
    }

    #[test]
    fn mariadbs_page_cleaner_keeps_768_to_1536_frames_free_and_mysql_57_keeps_none() {
        let mut m = BufferPool::new(&mariadb(128 << 20));
        let mut my = BufferPool::new(&cfg(128 << 20));
        let (mut free_sum, mut n) = (0usize, 0usize);
        for p in 0..100_000u64 {
            m.insert(k(p), p * MS);
            my.insert(k(p), p * MS);
            if p >= 20_000 {
                let free = m.capacity() - m.len();
                assert!((768..=1536).contains(&free), "{free} free after page {p}");
                free_sum += free;
                n += 1;
                assert_eq!(my.len(), my.capacity());
            }
        }
        // A sawtooth from 1536 down to 768: about 1152 on average.
        let mean = free_sum as f64 / n as f64;
        assert!((1140.0..1165.0).contains(&mean), "mean free {mean}");
        // The last inserts are cached, the oldest gone, the old sublist kept at its share.
        assert!(m.contains(k(99_999)) && !m.contains(k(0)));
        let target = m.len() * 37 / 100;
        assert!(m.old_len().abs_diff(target) <= BUF_LRU_OLD_TOLERANCE + 1);
        // innodb_lru_scan_depth sets the band.
        let small = InnodbConfig { innodb_lru_scan_depth: 100, ..mariadb(128 << 20) };
        assert_eq!(free_frames_rule(&small), Some((50, 100)));
    }

    #[test]
    fn a_page_the_old_boundary_passes_while_it_is_read_goes_to_the_head() {
        // MariaDB: the LRU list grows between the page cleaner's batches, so insertions
        // push the old sublist's boundary over the page inserted before them.
        let mut m = BufferPool::new(&mariadb(128 << 20));
        for p in 0..20_000 {
            m.insert(k(p), p * MS);
        }
        let head = |m: &BufferPool| m.nodes[m.head as usize].key;
        // One read at a time: every page is first accessed before the next read starts,
        // while still old: none moves.
        for p in 20_000..22_000 {
            m.insert_for_read(k(p));
            m.first_access(k(p), p * MS);
            assert_ne!(head(&m), k(p).0);
        }
        // Eight reads in flight: a page whose read saw another insertion may have been
        // marked young meanwhile, with a zero clock: its first access moves it to the head.
        let (mut moved, mut flight) = (0u32, std::collections::VecDeque::new());
        for p in 22_000..30_000u64 {
            m.insert_for_read(k(p));
            flight.push_back(p);
            if flight.len() > 8 {
                let a = flight.pop_front().unwrap();
                m.first_access(k(a), p * MS);
                moved += u32::from(head(&m) == k(a).0);
            }
        }
        let share = f64::from(moved) / 8000.0;
        assert!((0.2..0.7).contains(&share), "{share} of the reads went to the head");
        // MySQL 5.7's full pool does not grow: the boundary stays, nothing moves.
        let mut my = BufferPool::new(&cfg(128 << 20));
        let mut moved = 0;
        for p in 0..30_000u64 {
            my.insert_for_read(k(p));
            if p >= 8 {
                my.first_access(k(p - 8), p * MS);
                moved += u32::from(p > 20_000 && head(&my) == k(p - 8).0);
            }
        }
        assert_eq!(moved, 0);
    }

    #[test]
    fn a_pool_too_small_for_the_free_target_keeps_the_lru_minimum_and_no_old_sublist() {
        // 10 MiB of MariaDB frames (758) cannot keep 1536 free: the cleaner stops at
        // BUF_LRU_MIN_LEN pages, below the old sublist's minimum.
        let mut m = BufferPool::new(&mariadb(10 << 20));
        for p in 0..5_000u64 {
            m.insert(k(p), p * MS);
            assert!(m.len() <= BUF_LRU_MIN_LEN);
        }
        assert_eq!(m.len(), BUF_LRU_MIN_LEN);
        assert_eq!(m.old_len(), 0);
        assert!(m.contains(k(4_999)));
    }

    #[test]
    fn node_is_small() {
        // Two to a cache line.
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    #[test]
    fn page_key_roundtrip() {
        let p = PageKey::new(77, 145_446);
        assert_eq!((p.space_id(), p.page_no()), (77, 145_446));
    }

    #[test]
    fn old_page_within_old_blocks_time_stays_old() {
        let mut bp = BufferPool::with_capacity(2000, 37, SEC);
        for p in 0..3000 {
            assert!(!bp.access(k(p), 0));
            bp.insert(k(p), 0);
        }
        // The last inserted page sits at the old sublist's head (behind its first page).
        assert_eq!(bp.is_old(k(2999)), Some(true));
        assert!(bp.access(k(2999), 500 * MS));
        assert_eq!(bp.is_old(k(2999)), Some(true));
        assert_eq!(bp.stats.pages_made_young, 0);
        assert!(bp.access(k(2999), 1001 * MS));
        assert_eq!(bp.is_old(k(2999)), Some(false));
        assert_eq!(bp.stats.pages_made_young, 1);
        assert_eq!(bp.lru_keys()[0], k(2999));
    }

    #[test]
    fn scan_does_not_flush_hot_pages() {
        // A hot set made young, then a one-pass scan larger than the pool: the scan only
        // churns the old sublist.
        // (Pages move only once evictions have begun: 1200 pages into 1000 frames.)
        let mut bp = BufferPool::with_capacity(1000, 37, SEC);
        for p in 0..1200 {
            bp.insert(k(p), 0);
        }
        for p in 900..1200 {
            assert!(bp.access(k(p), 2 * SEC));
        }
        // All at the head: the old ones made young (counted), the ones the old sublist's
        // boundary had passed moved there uncounted (young, with a zero clock).
        let mut head: Vec<u64> = bp.lru_keys()[..300].iter().map(|x| x.page_no()).collect();
        head.sort_unstable();
        assert_eq!(head, (900..1200).collect::<Vec<u64>>());
        assert!(bp.stats.pages_made_young > 0 && bp.stats.pages_made_young < 300);
        for p in 10_000..15_000 {
            if !bp.access(k(p), 3 * SEC) {
                bp.insert(k(p), 3 * SEC);
            }
        }
        let kept = (900..1200).filter(|&p| bp.contains(k(p))).count();
        assert_eq!(kept, 300);
        let old = bp.old_len() as f64 / bp.len() as f64;
        assert!((old - 0.37).abs() <= 0.03, "{old}");
    }

    #[test]
    fn small_pool_without_old_sublist() {
        let mut bp = BufferPool::with_capacity(100, 37, SEC);
        for p in 0..150 {
            bp.insert(k(p), 0);
        }
        assert_eq!(bp.len(), 100);
        assert_eq!(bp.old_len(), 0);
        assert!(!bp.contains(k(49)) && bp.contains(k(50)));
    }

    proptest! {
        #[test]
        fn invariants(cap in 1usize..1500, ops in proptest::collection::vec((0u64..3000, 0u64..5000), 1..4000)) {
            let mut bp = BufferPool::with_capacity(cap, 37, SEC);
            let mut hits = 0u64;
            for (n, (p, dt)) in ops.iter().enumerate() {
                let now = n as u64 * 10 * MS + dt * MS;
                if bp.access(k(*p), now) { hits += 1 } else { bp.insert(k(*p), now) }
                prop_assert!(bp.len() <= bp.capacity());
            }
            let s = bp.stats;
            prop_assert_eq!(s.read_requests, ops.len() as u64);
            prop_assert_eq!(hits + s.reads, s.read_requests);
            prop_assert_eq!(s.pages_read, s.reads);
            prop_assert_eq!(s.pages_evicted, s.pages_read - bp.len() as u64);
            let keys = bp.lru_keys();
            prop_assert_eq!(keys.len(), bp.len());
            // Old pages form the tail, and their count is tracked.
            let olds: Vec<bool> = keys.iter().map(|&x| bp.is_old(x).unwrap()).collect();
            let n_old = olds.iter().filter(|&&o| o).count();
            prop_assert_eq!(n_old, bp.old_len());
            prop_assert!(olds.iter().skip_while(|&&o| !o).all(|&o| o));
            if bp.len() >= BUF_LRU_OLD_MIN_LEN {
                let target = (bp.len() * 378 / 1024).min(bp.len() - 25);
                prop_assert!(n_old + BUF_LRU_OLD_TOLERANCE + 1 >= target && n_old <= target + BUF_LRU_OLD_TOLERANCE + 1);
            }
        }

        #[test]
        fn recent_old_hit_not_made_young(extra in 0u64..999) {
            let mut bp = BufferPool::with_capacity(1000, 37, SEC);
            for p in 0..1000 { bp.insert(k(p), 5 * SEC); }
            let before = bp.stats.pages_made_young;
            prop_assert!(bp.access(k(999), 5 * SEC + extra * MS));
            prop_assert_eq!(bp.stats.pages_made_young, before);
            prop_assert_eq!(bp.is_old(k(999)), Some(true));
        }
    }
}
