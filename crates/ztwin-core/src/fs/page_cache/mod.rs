//! The Linux page cache (6.1) under a database's buffered file I/O: what a buffered read,
//! a buffered write, an fsync and the flusher send to the device, and what stays cached.
//!
//! # Mechanism
//!
//! Pages are 4 KiB, keyed by (file, page index); the cache holds at most the byte budget the
//! caller gives it (the memory the machine leaves to the page cache: RAM minus the
//! database's and other processes' memory minus the kernel's reserve).
//!
//! - **Lists** (`lru.rs`; mm/swap.c, mm/vmscan.c, mm/workingset.c). Debian 12's kernel is
//!   built with `CONFIG_LRU_GEN=y` but `CONFIG_LRU_GEN_ENABLED` unset, so the multi-gen LRU
//!   is off by default and the two-list LRU below is what runs. A page enters the head of
//!   the inactive file list. `folio_mark_accessed` sets PG_referenced on the first access
//!   and moves a referenced inactive page to the active list on the next one (clearing the
//!   bit); an active page only gets the bit. Reclaim (`shrink_inactive_list`,
//!   `shrink_folio_list`, `folio_check_references`) takes pages from the inactive tail: an
//!   unmapped clean page is freed whatever its PG_referenced (that bit protects only mapped
//!   pages); a dirty page or one under writeback gets PG_reclaim and is moved to the active
//!   list out of the way, and when its writeback completes (`folio_end_writeback` ->
//!   `folio_rotate_reclaimable`) it goes to the inactive tail. The active list is scanned
//!   (`shrink_active_list`: every unmapped page is moved to the inactive head with
//!   PG_workingset, its PG_referenced left as it is) only when `prepare_scan_count` allows
//!   it: the inactive list is low (`inactive_is_low`: inactive x int_sqrt(10 x GiB of both
//!   lists), ratio 1 below 1 GiB, is less than active) or refaults activated pages since the
//!   last reclaim (`WORKINGSET_ACTIVATE_FILE` moved). An evicted page leaves a shadow entry
//!   (`workingset_eviction`: the lruvec's `nonresident_age`, which evictions and
//!   activations advance, and PG_workingset); a read that brings it back
//!   (`workingset_refault`) activates it at once when the refault distance is at most the
//!   active file list (the workingset size without swap), and `filemap_add_folio` skips
//!   that for pages created by writes (__GFP_WRITE). Random reads of a database decide
//!   this matters: a hot page evicted from a small inactive list comes back active, and
//!   the refaults then start deactivation; so shadows are kept.
//! - **Reads** (`readahead.rs`; mm/filemap.c `filemap_read`, `filemap_get_pages`, mm/readahead.c).
//!   A read walks its pages: a cached, up-to-date page is a copy; a missing one starts
//!   `page_cache_sync_ra` for the rest of the request, then reads that page alone if it is
//!   still missing (`filemap_create_folio`); a page carrying PG_readahead starts
//!   `page_cache_async_ra`; a page whose read is in flight is waited for. Every page the read
//!   copies is marked accessed, except the first when the previous read of this open file
//!   ended inside it. `ondemand_readahead` (ra_pages = read_ahead_kb / 4, 128 KiB = 32 pages):
//!   offset 0, a request larger than the window, or a read that continues the previous one
//!   (`index - prev_index <= 1`) gets the initial window (`get_init_ra_size`: the request
//!   rounded up to a power of two, x4 up to 1/32 of the maximum, x2 up to 1/4, else the
//!   maximum; the part past the request is the async part whose first page carries
//!   PG_readahead); a read at the expected index ramps the window (`get_next_ra_size`:
//!   x4 below 1/16, x2 up to 1/2, else the maximum); otherwise `try_context_readahead`
//!   counts the cached pages just before the read (`page_cache_prev_miss`, at most the
//!   window) and, when they are more than the request, reads min(history + request, max)
//!   pages; otherwise the read is read as is. So a 16 KiB pread at a random offset of an
//!   uncached region reads exactly its 4 pages (one device read); the same read just after
//!   more than 4 cached pages reads up to 32 pages, skipping those already cached. Pages
//!   already cached split a window into several device reads. POSIX_FADV_RANDOM (fio's
//!   default `fadvise_hint` for random jobs) reads exactly the request (`force_page_cache_ra`).
//! - **Writes** (`writeback.rs`; mm/filemap.c `generic_perform_write`, fs/ext4/inode.c
//!   `ext4_block_write_begin`, fs/iomap/buffered-io.c `__iomap_write_begin` for XFS). A
//!   write dirties each page it touches. A page it covers only partly, not cached, inside
//!   the file's size, is read first (a block of the file); past the end of file it is
//!   zeroed, not read: ext4's `get_block` maps no block there (a new, or with delalloc a
//!   delayed, buffer: `zero_user_segments`), XFS's `iomap_block_needs_zeroing` is true
//!   for `pos >= i_size` or an unmapped extent. A page the write covers whole is not
//!   read either. A write does not mark the page accessed (write_begin
//!   takes it with FGP_WRITEBEGIN, which has no FGP_ACCESSED), and a page dirtied while under
//!   writeback is dirty again (no stable pages on these devices).
//! - **Dirty limits and throttling** (mm/page-writeback.c, a 6.0/6.1 version: `domain_dirty_limits`,
//!   `balance_dirty_pages`, `wb_position_ratio`, `wb_update_dirty_ratelimit`,
//!   `wb_update_write_bandwidth`, `wb_max_pause`, `wb_min_pause`,
//!   `balance_dirty_pages_ratelimited_flags`). Thresholds are dirty_ratio and
//!   dirty_background_ratio of the dirtyable memory (free plus file pages less the reserve:
//!   the budget here), in per-PAGE_SIZE fixed point. A writer checks after every
//!   `nr_dirtied_pause` pages it dirtied (8 while the limit is exceeded): above the background
//!   threshold it wakes the flusher; below the midpoint of the two thresholds (`freerun`) it
//!   runs free and polls again after about sqrt(thresh - dirty) pages; above it, it sleeps
//!   `HZ x pages_dirtied / task_ratelimit` jiffies, less the time since its last pause (at
//!   most `max_pause`: dirty / (1 + bandwidth / 32) + 1 jiffies, capped at 200 ms), where
//!   task_ratelimit is the wb's dirty_ratelimit (which tracks the write bandwidth divided
//!   among the dirtiers) times the position ratio (a cubic of the distance to the setpoint
//!   between freerun and the limit, 2 at freerun, 1 at the setpoint, 0 at the limit, then
//!   the wb's linear line). Dirty here counts NR_FILE_DIRTY + NR_WRITEBACK.
//! - **Flusher** (fs/fs-writeback.c: `wb_workfn`, `wb_do_writeback`, `wb_check_old_data_flush`,
//!   `wb_check_background_flush`, `wb_writeback`, `queue_io`, `move_expired_inodes`,
//!   `writeback_sb_inodes`, `writeback_chunk_size`, `requeue_inode`, `redirty_tail_locked`,
//!   `__mark_inode_dirty`). A file that gets a dirty page while it is on no writeback list
//!   gets `dirtied_when` and goes to the head of b_dirty; an fsync does not take it off (the
//!   flusher does, when it finds it clean), so a file kept dirty by a database keeps an old
//!   `dirtied_when`. The flusher wakes dirty_writeback_centisecs after the first file became
//!   dirty, after each of its runs while any file is dirty, and at once when a writer passes
//!   the background threshold. A run first does the
//!   periodic (kupdate) work if dirty_writeback_centisecs passed since the last one: every
//!   file dirtied more than dirty_expire_centisecs ago is written, all its dirty pages, not
//!   only the old ones; then background work while dirty pages exceed the background
//!   threshold, every dirty file. Files are taken oldest `dirtied_when` first, each for a
//!   chunk of min(write bandwidth / 2, dirty limit / 8) pages rounded up to 4 MiB, from where
//!   the last chunk stopped (`writeback_index`; ext4 wraps to the file's start,
//!   `ext4_writepages`), in ascending page order, skipping pages under writeback; a file
//!   with pages left is requeued (chunk used up) or put back on b_dirty with its
//!   dirtied_when renewed if older than the newest there. Contiguous dirty pages go as one
//!   request (one bio, at most BIO_MAX_VECS pages). The flusher submits while fewer than
//!   `nr_requests` writeback requests (its own and fsync's) are in flight, and continues as
//!   they complete.
//! - **fsync, fdatasync, O_SYNC/O_DSYNC** (`file_write_and_wait_range`, `generic_write_sync` ->
//!   `vfs_fsync_range`, mm/page-writeback.c `write_cache_pages` for WB_SYNC_ALL). Every
//!   dirty page of the range (the whole file for fsync; the written range for an O_SYNC or
//!   O_DSYNC write) is written in ascending order, contiguous pages merged; a dirty page
//!   still under an earlier writeback is first waited for; then the call waits for every
//!   page of the range under writeback, the flusher's included. What the filesystem adds
//!   (a jbd2 commit, a cache flush) is `fs::journal`'s: after [`SyncStep::Done`], the caller
//!   asks the journal (`Ext4Journal::fsync(file, datasync, now)`).
//!
//! # Driving it
//!
//! All calls take the simulated time and must come in nondecreasing time; nothing is
//! allocated per request.
//! - A buffered read: `let plan = pc.read(&mut ra, file, offset, len, now)` (`ra`: the open
//!   file's [`FileRa`], one per file descriptor); issue every `plan.ios()` read on the device
//!   at `now` and report each completion with `pc.io_done_at(&io, done)` before anything
//!   else calls the cache; the read has its data at the latest of `plan.wait_until` and
//!   those completions. If `plan.resume_at` is `Some(t)`, read the rest
//!   (`offset + plan.done_bytes`) at `t`.
//! - A buffered write: `let plan = pc.write(&mut dirtier, file, offset, len, now)`
//!   (`dirtier`: the writing thread's [`Dirtier`]); issue `plan.reads()` and report them as
//!   for a read; the write returns at max(`plan.wait_until`, read completions) +
//!   `plan.pause_ns` (the dirty throttle); if `plan.done_bytes < len`, write the rest then
//!   (or at `plan.retry_at` if later).
//! - fsync / fdatasync / an O_SYNC or O_DSYNC write: `let mut w = pc.fsync(file)` or
//!   `pc.sync_range(file, offset, len)`; loop on `pc.sync_next(&mut w, now)`:
//!   `Write(io)`: issue it and report `io_done_at`; `Wait(t)`: continue at `t`; `Done(t)`:
//!   the data part ends at `t`, then the journal's part.
//! - The flusher: at `pc.writeback_due()`, call `pc.writeback_next(now)` until `None`,
//!   issuing each write and reporting `io_done_at`; then wait for `writeback_due()` again
//!   (it changes when writers dirty pages or pass the background threshold).
//!
//! Device offsets are the caller's: a [`DevIo`] names the file and the byte range in it.
//! The run drives it this way under XFS and ext4 (`fs::buffered`, the driver's
//! BufferedWrite and DataSync states and its `Event::Flusher`).
//!
//! # Sources
//!
//! Read in the stored index, one version each (none is exactly 6.1; where 6.1 differs in
//! what is used here it is said): mm/readahead.c (a 5.18 version: `ondemand_readahead`,
//! `try_context_readahead`, `count_history_pages`, `get_init_ra_size`, `get_next_ra_size`,
//! `page_cache_ra_unbounded`, `do_page_cache_ra`, `force_page_cache_ra`,
//! `page_cache_sync_ra`, `page_cache_async_ra`, `page_cache_ra_order`; 6.1 renames
//! ->readpage to ->read_folio, the logic is the same); mm/page-writeback.c (a 6.0/6.1 version,
//! `balance_dirty_pages` with BDP flags: everything above, defaults `vm_dirty_ratio` 20,
//! `dirty_background_ratio` 10, `dirty_writeback_interval` 500, `dirty_expire_interval`
//! 3000, MAX_PAUSE, BANDWIDTH_INTERVAL, DIRTY_POLL_THRESH, RATELIMIT_CALC_SHIFT,
//! `write_cache_pages`, `folio_account_dirtied`, `__folio_end_writeback`,
//! `folio_mark_dirty` clearing PG_reclaim); fs/fs-writeback.c (a 6.9-era version; the
//! functions above are 6.1's in what is used); mm/vmscan.c (a 6.4-era version, with
//! `folio_needs_release` and `reclaimer_offset`; the same decisions in 6.1:
//! `inactive_is_low`, `prepare_scan_count`, `get_scan_count`, `shrink_list`,
//! `shrink_active_list`, `shrink_inactive_list`, `folio_check_references`,
//! `shrink_folio_list`, `move_folios_to_lru` ageing on activations, `__remove_mapping`);
//! mm/workingset.c (`workingset_refault` in the 5.16 folio-conversion patch, 6.1's);
//! mm/filemap.c (`filemap_read`'s marking in 6.0/6.1: `pos_same_folio(ki_pos, prev_pos - 1)`
//! for the first folio, every later one marked, `prev_pos` the end of the copy, from the
//! 2022 fix thread and 6.x patch contexts); include/linux/pagemap.h (FGP_WRITEBEGIN =
//! LOCK|WRITE|CREAT|STABLE, 5.19+); Debian's debian/config/config (a 6.1/6.2-era version:
//! `CONFIG_LRU_GEN=y`, `# CONFIG_LRU_GEN_ENABLED is not set`). From memory of 6.1, not
//! re-read: mm/swap.c `folio_mark_accessed`, `lru_move_tail_fn` (clears PG_active),
//! mm/filemap.c `filemap_add_folio` (no refault for __GFP_WRITE) and `filemap_get_pages`,
//! `__filemap_get_folio` (FGP_WRITE adds __GFP_WRITE), fs/ext4/inode.c `ext4_writepages`
//! (range_cyclic wrap) and `ext4_block_write_begin`, mm/backing-dev.c INIT_BW (100 MB/s),
//! kernel/fork.c (`nr_dirtied_pause` starts at 32 pages), include/linux/writeback.h
//! DIRTY_SCOPE 8 and fs-writeback.c MIN_WRITEBACK_PAGES (4 MiB), the block layer's
//! nr_requests (256 with mq-deadline) and BIO_MAX_VECS (256). Read in the index's 6.x
//! patch contexts: mm/truncate.c (`truncate_inode_pages_range`,
//! `truncate_folio_batch_exceptionals`), fs/iomap/buffered-io.c (`__iomap_write_begin`,
//! `iomap_block_needs_zeroing`: `srcmap->type != IOMAP_MAPPED || (srcmap->flags &
//! IOMAP_F_NEW) || pos >= i_size_read(inode)`); fs/ext4/inode.c `ext4_block_write_begin`
//! (a 4.x-5.x version: a buffer `get_block` finds unmapped comes back new and is zeroed
//! outside the write, `zero_user_segments`; only a mapped, not up-to-date buffer the write
//! covers in part is read).
//!
//! # Simplifications
//!
//! 1. Folios are single 4 KiB pages: exact for ext4 in 6.1 (no large folios); XFS's large
//!    readahead folios (`page_cache_ra_order` with large-folio mappings) are not modelled.
//! 2. One lruvec: one NUMA node, one memory cgroup; no anonymous memory competes (the
//!    workingset size is the active file list, as without swap), the database's memory is
//!    outside the budget. Reclaim runs synchronously when a page is needed and the cache is
//!    full, freeing SWAP_CLUSTER_MAX pages from the inactive tail and, when deactivation is
//!    allowed, moving active pages in proportion to the list sizes (as `get_scan_count`'s
//!    size >> priority targets give); kswapd's watermarks and priorities are not modelled.
//!    If nothing can be freed (every page dirty, under I/O or locked) the request waits
//!    for the next I/O completion (`reclaim_throttle`).
//! 3. Shadow entries are kept for the last `budget` evictions (a ring): an older one could
//!    never activate (its distance exceeds any active list), so only the shadow-node
//!    shrinker's early drops are missing.
//! 4. A read looks up all of its pages and issues all of its device reads at its start
//!    (the kernel waits for each batch before looking further): exact for a read within
//!    one readahead window. A plan holds at most [`READ_IOS`] device reads; a window that
//!    would need more is cut short.
//! 5. The dirty throttle has one bdi_writeback (wb_thresh = thresh: all dirty pages are on
//!    the device written); the per-CPU ratelimit (`bdp_ratelimits`, `ratelimit_pages`),
//!    real-time tasks, strictlimit and memcg domains are not modelled. Bandwidth updates
//!    that the kernel runs from a delayed work after writeback ends run at the next call
//!    after completions. Dirtyable memory is the budget.
//! 6. The flusher checks its stopping conditions (background threshold, pages left) after
//!    each file's chunk, not every 100 ms; inode timestamps (I_DIRTY_SYNC, lazytime) do
//!    not make a file dirty here (the journal does that part); its requests are not blocked
//!    by reads for tags.
//! 7. fsync writes the pages dirty when each step runs (the TOWRITE tagging snapshot is
//!    not kept); a whole-file wait waits for the file's latest writeback.
//! 8. Hole punching and mmap are not modelled, and truncation only to size 0, for a new
//!    empty file that takes a file's place ([`PageCache::truncate`]: a binary log file
//!    after a rotation), where a page still under writeback stays cached until its write
//!    completes (the kernel's truncation waits for it). Bytes below a file's size are
//!    allocated blocks (a partial write there reads), bytes past it are new.

pub mod budget;
mod lru;
mod readahead;
#[cfg(test)]
mod tests;
mod writeback;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub use crate::dev::device::Op;
use crate::error::{Error, Result};
use crate::sim::time::{Nanos, SEC};
use crate::support::key_table::KeyTable;

pub use readahead::FileRa;
pub use writeback::{Dirtier, SyncStep, SyncWalk};

/// PAGE_SIZE on x86-64, bytes.
pub const PAGE_SIZE: u64 = 4096;
/// PAGE_SHIFT on x86-64.
pub const PAGE_SHIFT: u32 = 12;
/// `SWAP_CLUSTER_MAX` (include/linux/swap.h): pages one reclaim batch frees.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `BIO_MAX_VECS` (include/linux/bio.h): pages one bio holds, so the largest request a
/// contiguous run of pages makes before the block layer splits it further.
pub const BIO_MAX_VECS: u64 = 256;
/// Most device reads one [`ReadPlan`] holds (simplification 4).
pub const READ_IOS: usize = 16;
/// Pages a file may have: page keys keep 40 bits for the index.
const MAX_FILE_PAGES: u64 = 1 << 40;
/// Files the cache may hold: page keys keep 24 bits for the file.
const MAX_FILES: usize = (1 << 24) - 1;

/// A file of the cache: the index [`PageCache::add_file`] returned.
pub type FileId = u32;

/// The page cache's parameters, by their sysctl / sysfs names; defaults are a Debian 12
/// (Linux 6.1) machine's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageCacheParams {
    /// Bytes the page cache may hold: the memory the machine leaves to it (RAM minus the
    /// processes' memory minus the kernel's reserve, `totalreserve_pages`). Also the
    /// dirtyable memory of the dirty limits (`global_dirtyable_memory`: free plus file
    /// pages less the reserve).
    pub budget_bytes: u64,
    /// vm.dirty_ratio, percent of dirtyable memory (mm/page-writeback.c `vm_dirty_ratio`,
    /// 20): the dirty limit writers are throttled to.
    pub dirty_ratio: u32,
    /// vm.dirty_background_ratio, percent (mm/page-writeback.c `dirty_background_ratio`,
    /// 10): above it the flusher writes in the background.
    pub dirty_background_ratio: u32,
    /// vm.dirty_bytes (mm/page-writeback.c `vm_dirty_bytes`, 0 = use the ratio).
    pub dirty_bytes: u64,
    /// vm.dirty_background_bytes (mm/page-writeback.c `dirty_background_bytes`, 0 = use
    /// the ratio).
    pub dirty_background_bytes: u64,
    /// vm.dirty_expire_centisecs (mm/page-writeback.c `dirty_expire_interval`, 3000): a
    /// file dirty this long is written by the periodic writeback.
    pub dirty_expire_centisecs: u32,
    /// vm.dirty_writeback_centisecs (mm/page-writeback.c `dirty_writeback_interval`, 500):
    /// the flusher's period; 0 disables periodic writeback.
    pub dirty_writeback_centisecs: u32,
    /// `/sys/block/<dev>/queue/read_ahead_kb` (`VM_READAHEAD_PAGES`, 128 KiB): the bdi's
    /// `ra_pages` x 4.
    pub read_ahead_kb: u32,
    /// `/sys/block/<dev>/queue/max_sectors_kb` (BLK_DEF_MAX_SECTORS: 1280 KiB): the bdi's
    /// `io_pages` x 4, the window of a read larger than read_ahead_kb.
    pub max_sectors_kb: u32,
    /// CONFIG_HZ (Debian 12 amd64: 250): the jiffy of the throttle's arithmetic.
    pub hz: u32,
    /// Shadow entries and refault activation (mm/workingset.c; always on in the kernel).
    pub workingset: bool,
    /// Requests the flusher keeps in flight before it waits: the queue's nr_requests
    /// (blk-mq with mq-deadline: 2 x min(queue depth, BLKDEV_DEFAULT_RQ 128) = 256).
    pub nr_requests: u32,
    /// The filesystem's range-cyclic writeback wraps to the file's start within one call:
    /// ext4 (`ext4_writepages`) does; XFS (iomap -> `write_cache_pages`) does not.
    pub writepages_wrap: bool,
}

impl PageCacheParams {
    /// The defaults with a budget of `budget_bytes`.
    pub fn with_budget(budget_bytes: u64) -> PageCacheParams {
        PageCacheParams {
            budget_bytes,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            read_ahead_kb: 128,
            max_sectors_kb: 1280,
            hz: 250,
            workingset: true,
            nr_requests: 256,
            writepages_wrap: true,
        }
    }

    /// Checks the values the model can run with.
    pub fn validate(&self) -> Result<()> {
        let pages = self.budget_bytes / PAGE_SIZE;
        if !(64..(1 << 31)).contains(&pages) {
            return Err(Error::config(
                "page_cache.budget_bytes",
                "must hold from 64 pages (256 KiB) to 2^31 - 1 pages (8 TiB)",
            ));
        }
        if self.dirty_ratio > 100 || self.dirty_background_ratio > 100 {
            return Err(Error::config("page_cache.dirty_ratio", "ratios are percentages, 0 to 100"));
        }
        if self.hz == 0 || self.hz > 10_000 {
            return Err(Error::config("page_cache.hz", "must be from 1 to 10000"));
        }
        if self.nr_requests == 0 {
            return Err(Error::config("page_cache.nr_requests", "must be at least 1"));
        }
        Ok(())
    }
}

/// One device I/O of the cache: `bytes` at byte `offset` of `file` (whole pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevIo {
    /// Read (a miss, readahead, a partial write's page) or write (writeback).
    pub op: Op,
    /// The file.
    pub file: FileId,
    /// Byte offset in the file (a multiple of [`PAGE_SIZE`]).
    pub offset: u64,
    /// Bytes (a multiple of [`PAGE_SIZE`]).
    pub bytes: u32,
}

impl DevIo {
    const NONE: DevIo = DevIo { op: Op::Read, file: 0, offset: 0, bytes: 0 };
}

/// What a buffered read needs: the device reads to issue now and what to wait for.
#[derive(Debug, Clone, Copy)]
pub struct ReadPlan {
    ios: [DevIo; READ_IOS],
    n: u8,
    /// Bytes of the request this call covered (from its offset); less than asked with
    /// `resume_at` `None` means the end of file.
    pub done_bytes: u64,
    /// The read has its data no earlier than this: pages whose read is already in flight.
    pub wait_until: Nanos,
    /// Call again for the rest at this time (a full plan: now; no page could be freed:
    /// the next I/O completion).
    pub resume_at: Option<Nanos>,
    /// Pages found cached and up to date.
    pub hit_pages: u32,
    /// Pages the read waits for (read now, or in flight).
    pub miss_pages: u32,
}

impl ReadPlan {
    fn new(now: Nanos) -> ReadPlan {
        ReadPlan {
            ios: [DevIo::NONE; READ_IOS],
            n: 0,
            done_bytes: 0,
            wait_until: now,
            resume_at: None,
            hit_pages: 0,
            miss_pages: 0,
        }
    }

    /// The device reads to issue, in order.
    pub fn ios(&self) -> &[DevIo] {
        &self.ios[..self.n as usize]
    }

    fn full(&self) -> bool {
        self.n as usize >= READ_IOS
    }

    fn push(&mut self, io: DevIo) {
        debug_assert!(!self.full());
        if !self.full() {
            self.ios[self.n as usize] = io;
            self.n += 1;
        }
    }
}

/// What a buffered write needs: reads of partial pages first, then the dirty throttle.
#[derive(Debug, Clone, Copy)]
pub struct WritePlan {
    reads: [DevIo; 2],
    n: u8,
    /// Bytes of the request this call covered.
    pub done_bytes: u64,
    /// Pages the write covers whose read is in flight: the copy waits for them.
    pub wait_until: Nanos,
    /// `balance_dirty_pages`' sleep, ns, after the copy (0: none).
    pub pause_ns: Nanos,
    /// No page could be freed: write the rest no earlier than this.
    pub retry_at: Option<Nanos>,
    /// Pages this call dirtied that were clean.
    pub dirtied: u32,
}

impl WritePlan {
    fn new(now: Nanos) -> WritePlan {
        WritePlan {
            reads: [DevIo::NONE; 2],
            n: 0,
            done_bytes: 0,
            wait_until: now,
            pause_ns: 0,
            retry_at: None,
            dirtied: 0,
        }
    }

    /// The reads to issue (and wait for) before the copy: pages written in part that are
    /// not cached.
    pub fn reads(&self) -> &[DevIo] {
        &self.reads[..self.n as usize]
    }
}

/// Counters and gauges, by their /proc/meminfo and /proc/vmstat names (pages unless said).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageCacheStats {
    /// meminfo Cached (x 4 for kB): pages in the cache.
    pub cached: u64,
    /// meminfo Active(file).
    pub active_file: u64,
    /// meminfo Inactive(file).
    pub inactive_file: u64,
    /// meminfo Dirty / vmstat nr_dirty.
    pub nr_dirty: u64,
    /// meminfo Writeback / vmstat nr_writeback.
    pub nr_writeback: u64,
    /// vmstat pgpgin: KiB read from the device for the cache.
    pub pgpgin: u64,
    /// vmstat pgpgout: KiB written to the device from the cache.
    pub pgpgout: u64,
    /// vmstat nr_dirtied: pages that became dirty.
    pub nr_dirtied: u64,
    /// vmstat nr_written: pages whose writeback completed.
    pub nr_written: u64,
    /// vmstat pgactivate.
    pub pgactivate: u64,
    /// vmstat pgdeactivate.
    pub pgdeactivate: u64,
    /// vmstat pgrefill: active pages scanned.
    pub pgrefill: u64,
    /// vmstat pgscan_file: inactive pages scanned.
    pub pgscan_file: u64,
    /// vmstat pgsteal_file: pages reclaimed.
    pub pgsteal_file: u64,
    /// vmstat pgrotated: pages moved to the inactive tail when their writeback ended.
    pub pgrotated: u64,
    /// vmstat nr_vmscan_immediate_reclaim: dirty pages reclaim marked PG_reclaim.
    pub nr_vmscan_immediate_reclaim: u64,
    /// vmstat workingset_refault_file.
    pub workingset_refault_file: u64,
    /// vmstat workingset_activate_file.
    pub workingset_activate_file: u64,
    /// vmstat workingset_restore_file.
    pub workingset_restore_file: u64,
    /// Read pages found cached (the model's; the kernel has no such counter).
    pub read_hit_pages: u64,
    /// Read pages not cached or not yet read (the model's).
    pub read_miss_pages: u64,
    /// `balance_dirty_pages` sleeps (the model's; the tracepoint's events).
    pub dirty_throttle_pauses: u64,
    /// Their total, ns.
    pub dirty_throttle_ns: u64,
    /// Flusher runs (wb_workfn executions).
    pub flusher_runs: u64,
    /// Pages readahead windows brought in (`do_page_cache_ra`; those of a window the read
    /// itself asked for included; the model's).
    pub readahead_pages: u64,
    /// Clean pages dropped by POSIX_FADV_DONTNEED (fio's `invalidate`; the model's).
    pub invalidated_pages: u64,
}

/// One page as a test or a report sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageState {
    /// On the active list.
    pub active: bool,
    /// PG_referenced.
    pub referenced: bool,
    /// PG_dirty.
    pub dirty: bool,
    /// PG_writeback.
    pub writeback: bool,
}

/// A cached page: 32 bytes in a slab made once.
#[derive(Debug, Clone, Copy)]
struct Page {
    key: u64,
    /// Completion of the page's read (not up to date before) or of its writeback.
    io_until: Nanos,
    prev: u32,
    next: u32,
    flags: u16,
}

/// A shadow entry: the evicted page's key and `nonresident_age` at eviction, with
/// PG_workingset in the top bit.
#[derive(Debug, Clone, Copy)]
struct Shadow {
    key: u64,
    eviction: u64,
}

/// Which writeback list a file is on (`i_io_list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WbList {
    None,
    Dirty,
    Io,
    MoreIo,
}

/// A file (inode + address_space).
#[derive(Debug, Clone)]
struct FileState {
    /// i_size, bytes.
    size: u64,
    /// PAGECACHE_TAG_DIRTY: one bit per page, and one bit per word of those.
    dirty_bits: Vec<u64>,
    dirty_sum: Vec<u64>,
    nr_dirty: u64,
    nr_cached: u64,
    /// `mapping->writeback_index`.
    writeback_index: u64,
    /// I_DIRTY_PAGES.
    i_dirty_pages: bool,
    list: WbList,
    dirtied_when: Nanos,
    /// Latest completion of a writeback of the file's pages.
    wb_until: Nanos,
}

/// The bdi_writeback's bandwidth and ratelimit estimates (pages, pages/s, jiffies).
#[derive(Debug, Clone, Copy)]
struct Wb {
    write_bandwidth: u64,
    avg_write_bandwidth: u64,
    dirty_ratelimit: u64,
    balanced_dirty_ratelimit: u64,
    bw_time_stamp: u64,
    dirtied_stamp: u64,
    written_stamp: u64,
    /// WB_DIRTIED, WB_WRITTEN.
    stat_dirtied: u64,
    stat_written: u64,
    dirty_exceeded: bool,
    /// `global_wb_domain.dirty_limit` and its timestamp.
    dom_dirty_limit: u64,
    dom_dirty_limit_tstamp: u64,
}

/// The Linux page cache of one machine (all files share its lists and limits).
pub struct PageCache {
    p: PageCacheParams,
    /// Capacity in pages.
    cap: u32,
    /// `ra_pages` and `io_pages` of the bdi.
    ra_pages: u64,
    io_pages: u64,
    /// A jiffy, ns.
    jiffy: Nanos,
    pages: Vec<Page>,
    free: u32,
    /// Inactive and active lists: (head = most recent, tail).
    lists: [(u32, u32); 2],
    nr: [u64; 2],
    /// Page key -> slot, or SHADOW | ring slot.
    table: KeyTable,
    shadows: Vec<Shadow>,
    shadow_head: u32,
    nonresident_age: u64,
    /// `target_lruvec->refaults[WORKINGSET_FILE]` at the last reclaim.
    refault_snapshot: u64,
    /// Remainder of the proportional active scan.
    deactivate_carry: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    files: Vec<FileState>,
    /// Writeback runs in flight: (completion, first page key, pages).
    inflight: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
    wb: Wb,
    flusher: writeback::Flusher,
    stats: PageCacheStats,
}

impl PageCache {
    /// An empty cache with `p`.
    pub fn new(p: PageCacheParams) -> Result<PageCache> {
        p.validate()?;
        let cap = (p.budget_bytes / PAGE_SIZE) as u32;
        let jiffy = SEC / u64::from(p.hz);
        let mut pages =
            vec![Page { key: 0, io_until: 0, prev: lru::NIL, next: lru::NIL, flags: 0 }; cap as usize];
        for (i, pg) in pages.iter_mut().enumerate() {
            pg.next = if i + 1 < cap as usize { i as u32 + 1 } else { lru::NIL };
        }
        let shadows = if p.workingset {
            vec![Shadow { key: lru::NO_KEY, eviction: 0 }; cap as usize]
        } else {
            Vec::new()
        };
        let expected = if p.workingset { 2 * cap as usize } else { cap as usize };
        let mut pc = PageCache {
            p,
            cap,
            ra_pages: u64::from(p.read_ahead_kb) / 4,
            io_pages: u64::from(p.max_sectors_kb) / 4,
            jiffy,
            pages,
            free: 0,
            lists: [(lru::NIL, lru::NIL); 2],
            nr: [0; 2],
            table: KeyTable::with_expected(expected, cap as usize),
            shadows,
            shadow_head: 0,
            nonresident_age: 0,
            refault_snapshot: 0,
            deactivate_carry: 0,
            nr_dirty: 0,
            nr_writeback: 0,
            files: Vec::new(),
            inflight: BinaryHeap::with_capacity(p.nr_requests as usize * 2),
            wb: Wb {
                write_bandwidth: writeback::INIT_BW,
                avg_write_bandwidth: writeback::INIT_BW,
                dirty_ratelimit: writeback::INIT_BW,
                balanced_dirty_ratelimit: writeback::INIT_BW,
                bw_time_stamp: 0,
                dirtied_stamp: 0,
                written_stamp: 0,
                stat_dirtied: 0,
                stat_written: 0,
                dirty_exceeded: false,
                dom_dirty_limit: 0,
                dom_dirty_limit_tstamp: 0,
            },
            flusher: writeback::Flusher::new(),
            stats: PageCacheStats::default(),
        };
        pc.wb.bw_time_stamp = pc.jiffies(0);
        pc.wb.dom_dirty_limit_tstamp = pc.jiffies(0);
        pc.wb.dom_dirty_limit = pc.dirty_limits().1;
        Ok(pc)
    }

    /// The parameters.
    pub fn params(&self) -> &PageCacheParams {
        &self.p
    }

    /// Capacity, pages.
    pub fn capacity_pages(&self) -> u64 {
        u64::from(self.cap)
    }

    /// Adds a file of `size_bytes` (its i_size; every byte below it is on the device).
    /// Allocates its dirty bitmap: call at setup.
    pub fn add_file(&mut self, size_bytes: u64) -> Result<FileId> {
        if self.files.len() >= MAX_FILES {
            return Err(Error::config("page_cache.files", "at most 2^24 - 1 files"));
        }
        if size_bytes.div_ceil(PAGE_SIZE) > MAX_FILE_PAGES {
            return Err(Error::config("page_cache.file_size", "a file may have at most 2^40 pages"));
        }
        let mut f = FileState {
            size: size_bytes,
            dirty_bits: Vec::new(),
            dirty_sum: Vec::new(),
            nr_dirty: 0,
            nr_cached: 0,
            writeback_index: 0,
            i_dirty_pages: false,
            list: WbList::None,
            dirtied_when: 0,
            wb_until: 0,
        };
        f.grow(size_bytes.div_ceil(PAGE_SIZE));
        self.files.push(f);
        self.flusher.reserve(self.files.len());
        Ok((self.files.len() - 1) as FileId)
    }

    /// The file's size (i_size), bytes.
    pub fn file_size(&self, file: FileId) -> u64 {
        self.files[file as usize].size
    }

    /// A fresh open file's readahead state (`file_ra_state_init`).
    pub fn file_ra(&self) -> FileRa {
        FileRa::new(self.ra_pages)
    }

    /// The bdi's `ra_pages` (read_ahead_kb / 4).
    pub fn ra_pages(&self) -> u64 {
        self.ra_pages
    }

    /// Counters and gauges now.
    pub fn stats(&self) -> PageCacheStats {
        let mut s = self.stats;
        s.inactive_file = self.nr[lru::INACTIVE];
        s.active_file = self.nr[lru::ACTIVE];
        s.cached = s.inactive_file + s.active_file;
        s.nr_dirty = self.nr_dirty;
        s.nr_writeback = self.nr_writeback;
        s
    }

    /// Pages of `file` in the cache.
    pub fn file_cached_pages(&self, file: FileId) -> u64 {
        self.files[file as usize].nr_cached
    }

    /// Dirty pages of `file`.
    pub fn file_dirty_pages(&self, file: FileId) -> u64 {
        self.files[file as usize].nr_dirty
    }

    /// Page `index` of `file`, if cached.
    pub fn page_state(&self, file: FileId, index: u64) -> Option<PageState> {
        let s = self.slot_of(file, index)? as usize;
        let f = self.pages[s].flags;
        Some(PageState {
            active: f & lru::F_ACTIVE != 0,
            referenced: f & lru::F_REFERENCED != 0,
            dirty: f & lru::F_DIRTY != 0,
            writeback: f & lru::F_WRITEBACK != 0,
        })
    }

    /// The background and dirty thresholds now, pages (`domain_dirty_limits`).
    pub fn dirty_limits(&self) -> (u64, u64) {
        writeback::domain_dirty_limits(&self.p, self.dirtyable_pages())
    }

    /// Heap bytes the model holds (slab, table, shadows, bitmaps).
    pub fn heap_bytes(&self) -> usize {
        self.pages.capacity() * std::mem::size_of::<Page>()
            + self.table.allocation_size()
            + self.shadows.capacity() * std::mem::size_of::<Shadow>()
            + self.files.iter().map(|f| (f.dirty_bits.capacity() + f.dirty_sum.capacity()) * 8).sum::<usize>()
    }

    /// Heap bytes a cache of `budget_bytes` takes once full, over files of `file_bytes` in
    /// all (for the run's memory estimate): the 32-byte page slots, the key table grown to
    /// its expected keys (pages and, with `workingset`, as many shadows), the shadow ring
    /// and the files' dirty bitmaps (a bit per page, a bit per 64 of those).
    pub fn memory_bytes(budget_bytes: u64, workingset: bool, file_bytes: u64) -> u64 {
        let cap = budget_bytes / PAGE_SIZE;
        let expected = if workingset { cap.saturating_mul(2) } else { cap };
        let shadows = if workingset { cap.saturating_mul(std::mem::size_of::<Shadow>() as u64) } else { 0 };
        let bitmaps = file_bytes.div_ceil(PAGE_SIZE).div_ceil(64).saturating_mul(8 + 1);
        cap.saturating_mul(std::mem::size_of::<Page>() as u64)
            .saturating_add(crate::support::key_table::grown_bytes(expected))
            .saturating_add(shadows)
            .saturating_add(bitmaps)
    }

    /// Reports the completion of a device I/O a plan gave: a read's pages are up to date at
    /// `done`; a write's pages leave writeback then. Call right after issuing it.
    pub fn io_done_at(&mut self, io: &DevIo, done: Nanos) {
        let first = io.offset >> PAGE_SHIFT;
        let n = u64::from(io.bytes).div_ceil(PAGE_SIZE);
        match io.op {
            Op::Read => {
                for idx in first..first + n {
                    if let Some(s) = self.slot_of(io.file, idx) {
                        let pg = &mut self.pages[s as usize];
                        if pg.io_until == lru::PENDING {
                            pg.io_until = done;
                        }
                    }
                }
            }
            Op::Write => {
                for idx in first..first + n {
                    if let Some(s) = self.slot_of(io.file, idx) {
                        let pg = &mut self.pages[s as usize];
                        if pg.flags & lru::F_WRITEBACK != 0 && pg.io_until == lru::PENDING {
                            pg.io_until = done;
                        }
                    }
                }
                let f = &mut self.files[io.file as usize];
                f.wb_until = f.wb_until.max(done);
                self.inflight.push(Reverse((done, lru::page_key(io.file, first), n as u32)));
            }
        }
    }

    /// Jiffies at `now` (offset so that 0 stays the kernel's "never").
    fn jiffies(&self, now: Nanos) -> u64 {
        writeback::JIFFIES_BASE + now / self.jiffy
    }

    /// `global_dirtyable_memory()`: the budget (simplification 5), plus one.
    fn dirtyable_pages(&self) -> u64 {
        u64::from(self.cap) + 1
    }
}

impl FileState {
    /// Makes room for `pages` pages in the bitmaps.
    fn grow(&mut self, pages: u64) {
        let words = pages.div_ceil(64) as usize;
        if words > self.dirty_bits.len() {
            self.dirty_bits.resize(words, 0);
            self.dirty_sum.resize(words.div_ceil(64), 0);
        }
    }

    fn is_dirty(&self, idx: u64) -> bool {
        let w = (idx / 64) as usize;
        w < self.dirty_bits.len() && self.dirty_bits[w] & (1 << (idx % 64)) != 0
    }

    fn set_dirty(&mut self, idx: u64) {
        self.grow(idx + 1);
        let w = (idx / 64) as usize;
        self.dirty_bits[w] |= 1 << (idx % 64);
        self.dirty_sum[w / 64] |= 1 << (w % 64);
        self.nr_dirty += 1;
    }

    fn clear_dirty(&mut self, idx: u64) {
        let w = (idx / 64) as usize;
        self.dirty_bits[w] &= !(1 << (idx % 64));
        if self.dirty_bits[w] == 0 {
            self.dirty_sum[w / 64] &= !(1 << (w % 64));
        }
        self.nr_dirty -= 1;
    }

    /// The first dirty page in [from, last], if any.
    fn next_dirty(&self, from: u64, last: u64) -> Option<u64> {
        if from > last || self.nr_dirty == 0 {
            return None;
        }
        let nwords = self.dirty_bits.len();
        let mut w = (from / 64) as usize;
        if w >= nwords {
            return None;
        }
        // The first word, masked below `from`.
        let first = self.dirty_bits[w] & (!0u64 << (from % 64));
        if first != 0 {
            let idx = w as u64 * 64 + u64::from(first.trailing_zeros());
            return (idx <= last).then_some(idx);
        }
        w += 1;
        while w < nwords {
            let sw = w / 64;
            let sbits = self.dirty_sum[sw] & (!0u64 << (w % 64));
            if sbits == 0 {
                w = (sw + 1) * 64;
                continue;
            }
            w = sw * 64 + sbits.trailing_zeros() as usize;
            let idx = w as u64 * 64 + u64::from(self.dirty_bits[w].trailing_zeros());
            return (idx <= last).then_some(idx);
        }
        None
    }
}
