//! InnoDB's doublewrite buffer (MySQL 5.7): how a batch of dirty pages reaches the data
//! files, and what it costs in writes and fsyncs with `innodb_doublewrite` on or off.
//!
//! Mechanism. The page cleaner posts the pages of a flush batch (flush list or LRU) to
//! the doublewrite memory buffer (`buf_dblwr_add_to_batch`), up to
//! `srv_doublewrite_batch_size` = 120 pages (the other 8 of its two 64-page blocks are
//! kept for single-page flushes); when it is full, or the batch ends,
//! `buf_dblwr_flush_buffered_writes` writes the copies sequentially to the doublewrite
//! area of the system tablespace (ibdata1): block 1 (pages 64-127 of ibdata1, the
//! second extent: `TRX_SYS_DOUBLEWRITE_BLOCK_SIZE` = FSP_EXTENT_SIZE pages), then, with
//! more than 64 pages, block 2 (pages 128-191); fsyncs ibdata1 (`fil_flush(TRX_SYS_SPACE)`);
//! then writes each page to its place in its .ibd file, and when the last of those writes
//! completes (`buf_dblwr_update`, `b_reserved` back to 0) fsyncs the data files
//! (`fil_flush_file_spaces`) before the next batch may start. With `innodb_doublewrite = 0`
//! the pages are written in place and the data files fsynced (`buf_dblwr_sync_datafiles`).
//! With `innodb_flush_method = O_DIRECT_NO_FSYNC` (or a file system that needs none)
//! the fsyncs are skipped.
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/buf/buf0dblwr.cc`
//! (`buf_dblwr_flush_buffered_writes`, `buf_dblwr_update`, `buf_dblwr_add_to_batch`,
//! `buf_dblwr_sync_datafiles`), `include/trx0sys.h` (TRX_SYS_DOUBLEWRITE_BLOCK_SIZE),
//! `srv/srv0srv.cc` (srv_doublewrite_batch_size = 120), `trx/trx0sys.cc` (block1 = page
//! FSP_EXTENT_SIZE, block2 = 2 * FSP_EXTENT_SIZE when the buffer is created).
//!
//! Simplifications: 1. single-page flushes (`buf_dblwr_write_single_page`, the LRU's
//! last resort when no free frame is found) are not planned here; 2. FSP_EXTENT_SIZE is
//! 64 pages (16K pages; 4K and 8K pages have 256 and 128 per extent, 32K and 64K 64: the
//! block sizes follow `extent_pages`).

/// srv_doublewrite_batch_size: pages per doublewrite batch.
pub const BATCH_PAGES: u64 = 120;

/// One write: `pages` pages at page `first` of the system tablespace (ibdata1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SystemWrite {
    /// First page number in ibdata1.
    pub first: u64,
    /// Pages written.
    pub pages: u64,
}

/// The I/O of one batch of `pages` dirty pages, in order: the doublewrite area's writes
/// (none when off), an fsync of ibdata1 if `sync_system`, the pages in place, an fsync
/// of the data files if `sync_data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchPlan {
    /// The copies to the doublewrite area; the first `n` are valid.
    pub copies: [SystemWrite; 2],
    /// Valid copies.
    pub n: usize,
    /// fsync(ibdata1) after the copies.
    pub sync_system: bool,
    /// Pages written in place after that.
    pub pages: u64,
    /// fsync of the data files when they are written.
    pub sync_data: bool,
}

/// SHOW GLOBAL STATUS counters of the doublewrite buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DoublewriteStats {
    /// Innodb_dblwr_pages_written.
    pub dblwr_pages_written: u64,
    /// Innodb_dblwr_writes.
    pub dblwr_writes: u64,
}

/// The doublewrite buffer's settings and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doublewrite {
    /// innodb_doublewrite: on by default.
    enabled: bool,
    /// The flush method fsyncs data files (all but O_DIRECT_NO_FSYNC).
    fsync: bool,
    /// Pages per extent: the size of each doublewrite block and where block 1 starts.
    extent_pages: u64,
    stats: DoublewriteStats,
}

impl Doublewrite {
    /// The buffer with `enabled` (innodb_doublewrite), `fsync` (whether the flush method
    /// fsyncs data files) and `extent_pages` (FSP_EXTENT_SIZE of the page size).
    pub fn new(enabled: bool, fsync: bool, extent_pages: u64) -> Doublewrite {
        Doublewrite { enabled, fsync, extent_pages: extent_pages.max(1), stats: DoublewriteStats::default() }
    }

    /// The counters.
    pub fn stats(&self) -> DoublewriteStats {
        self.stats
    }

    /// Pages one batch takes at most: the rest of a flush waits for the next batch.
    pub fn batch_pages(&self) -> u64 {
        BATCH_PAGES.min(2 * self.extent_pages - 1)
    }

    /// The plan of a batch of `pages` pages (at most [`Doublewrite::batch_pages`]; more
    /// are cut to it), counted.
    pub fn batch(&mut self, pages: u64) -> BatchPlan {
        let pages = pages.min(self.batch_pages());
        let mut plan = BatchPlan { pages, sync_data: self.fsync && pages > 0, ..BatchPlan::default() };
        if !self.enabled || pages == 0 {
            return plan;
        }
        let block = self.extent_pages;
        plan.copies[0] = SystemWrite { first: block, pages: pages.min(block) };
        plan.n = 1;
        if pages > block {
            plan.copies[1] = SystemWrite { first: 2 * block, pages: pages - block };
            plan.n = 2;
        }
        plan.sync_system = self.fsync;
        self.stats.dblwr_pages_written += pages;
        self.stats.dblwr_writes += 1;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_copied_to_ibdata1_in_one_or_two_sequential_writes_then_written_in_place() {
        let mut d = Doublewrite::new(true, true, 64);
        let p = d.batch(100);
        assert_eq!(
            p.copies[..p.n],
            [SystemWrite { first: 64, pages: 64 }, SystemWrite { first: 128, pages: 36 }]
        );
        assert!(p.sync_system && p.sync_data);
        assert_eq!(p.pages, 100);
        let p = d.batch(10);
        assert_eq!(p.copies[..p.n], [SystemWrite { first: 64, pages: 10 }]);
        // 120 pages at most per batch.
        assert_eq!(d.batch(500).pages, 120);
        assert_eq!(d.stats(), DoublewriteStats { dblwr_pages_written: 230, dblwr_writes: 3 });
    }

    #[test]
    fn without_doublewrite_pages_go_in_place_and_o_direct_no_fsync_skips_the_fsyncs() {
        let mut off = Doublewrite::new(false, true, 64);
        let p = off.batch(50);
        assert_eq!((p.n, p.sync_system, p.pages, p.sync_data), (0, false, 50, true));
        assert_eq!(off.stats(), DoublewriteStats::default());
        let mut nofsync = Doublewrite::new(true, false, 64);
        let p = nofsync.batch(50);
        assert_eq!((p.n, p.sync_system, p.sync_data), (1, false, false));
        assert_eq!(nofsync.batch(0), BatchPlan::default());
    }
}
