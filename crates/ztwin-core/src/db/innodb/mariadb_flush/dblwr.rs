//! MariaDB 10.11's doublewrite buffer (`buf_dblwr_t`) as a queue of page writes turned into
//! batches: the I/O each batch costs ([`BatchPlan`], shared with the MySQL 5.7 model) and the
//! one-batch-in-flight rule.
//!
//! Mechanism (sources: `buf/buf0dblwr.cc` `buf_dblwr_t::create`, `add_to_batch`,
//! `flush_buffered_writes`, `flush_buffered_writes_completed`, `write_completed`;
//! `buf/buf0flu.cc` `buf_page_t::flush`, `buf_page_write_complete`; `fil/fil0fil.cc`
//! `fil_flush_file_spaces`, `fil_space_t::complete_write`; `include/fil0fil.h`
//! `fil_space_t::use_doublewrite`):
//! - Two slots of `2 * block_size` pages (`block_size` = FSP_EXTENT_SIZE: 64 pages of
//!   16 KiB). `add_to_batch` copies a page into the active slot; when the slot is full it is
//!   written (`flush_buffered_writes`), after waiting for the batch in flight if any (the
//!   writing thread blocks). At the end of each flush batch the page cleaner writes the
//!   partial slot the same way. No slots are kept for single-page flushes (MySQL 5.7's 120 +
//!   8): a batch is up to 128 pages.
//! - A batch's copy goes to ibdata1 at `block1` (page 64: `create` allocates block 1 at
//!   page FSP_EXTENT_SIZE and block 2 at 2 × FSP_EXTENT_SIZE, so they are contiguous) in one
//!   asynchronous write of all its pages; only when the blocks are not contiguous and the
//!   batch has more than `block_size` pages is it split in two writes.
//! - When that write completes (`flush_buffered_writes_completed`): ibdata1 is fsynced
//!   (`fil_space_t::flush<false>`: `flush_low`, `os_file_flush`; nothing with
//!   `innodb_flush_method = O_DIRECT_NO_FSYNC`), then each page is written in place,
//!   asynchronously (after `log_write_up_to` its LSN, already durable with
//!   innodb_flush_log_at_trx_commit = 1). When the last in-place write of the batch
//!   completes (`write_completed`), the data files written are fsynced
//!   (`fil_flush_file_spaces`: none with O_DIRECT_NO_FSYNC, whose writes never list a file
//!   as unflushed) and the next batch may be written.
//! - With `innodb_doublewrite` = OFF (`use_doublewrite()` false) each page is written in
//!   place at once, and `flush_buffered_writes` at the end of a batch only fsyncs the data
//!   files whose writes completed (`fil_flush_file_spaces`).
//! - Counters (`srv/srv0srv.cc` `srv_export_innodb_status`: `buf_dblwr.written()`,
//!   `buf_dblwr.batches()`; bound in `handler/ha_innodb.cc` `innodb_status_variables`):
//!   Innodb_dblwr_pages_written (`pages_written`, + the batch's pages once its copy is
//!   written) and Innodb_dblwr_writes (`writes_completed`, + 1 per completed doublewrite
//!   write request: 1 per batch with contiguous blocks, 2 when split).
//!
//! Simplifications: the writer's blocking is a flag ([`DoublewriteBuffer::writer_blocked`])
//! the driver honours, the queue may hold more than a slot while it does; without
//! doublewrite, the fsync at the end of a batch covers every page written since the
//! previous one (the real one only those whose writes had completed; the rest are fsynced
//! at the next `fil_flush_file_spaces`, at the latest the next checkpoint); the counters
//! count a batch when it is submitted (the server when its copy's write completes).

use super::Params;
use crate::db::innodb::doublewrite::{BatchPlan, DoublewriteStats, SystemWrite};

/// The doublewrite buffer of MariaDB 10.11 and its counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoublewriteBuffer {
    /// innodb_doublewrite (and the buffer created, and no atomic writes).
    enabled: bool,
    /// The flush method fsyncs ibdata1 and the data files (all but O_DIRECT_NO_FSYNC).
    fsync_data: bool,
    /// `block_size`: FSP_EXTENT_SIZE pages.
    block_size: u64,
    /// `block1`, `block2`: first pages of the two doublewrite blocks in ibdata1.
    block1: u64,
    block2: u64,
    /// Pages queued and not yet in a batch.
    queued: u64,
    /// Pages of the batch in flight (0: none; `batch_running`).
    running: u64,
    /// The writer asked for the partial slot to be written (`flush_buffered_writes`).
    flush_requested: bool,
    /// Without doublewrite: pages written since the last data-file fsync.
    unsynced: bool,
    stats: DoublewriteStats,
}

impl DoublewriteBuffer {
    /// The buffer as `buf_dblwr_t::create` lays it out for `extent_pages` (FSP_EXTENT_SIZE)
    /// pages per extent: blocks at pages `extent_pages` and `2 * extent_pages` of ibdata1.
    pub fn new(params: &Params, extent_pages: u64) -> DoublewriteBuffer {
        let e = extent_pages.max(1);
        DoublewriteBuffer::with_blocks(
            params.innodb_doublewrite,
            params.innodb_flush_method.fsyncs_data_files(),
            e,
            e,
            e.saturating_mul(2),
        )
    }

    /// A buffer with its blocks at `block1` and `block2` of `block_size` pages each (as an
    /// ibdata1 created by another version may have them).
    pub fn with_blocks(
        enabled: bool,
        fsync_data: bool,
        block_size: u64,
        block1: u64,
        block2: u64,
    ) -> DoublewriteBuffer {
        DoublewriteBuffer {
            enabled,
            fsync_data,
            block_size: block_size.max(1),
            block1,
            block2,
            queued: 0,
            running: 0,
            flush_requested: false,
            unsynced: false,
            stats: DoublewriteStats::default(),
        }
    }

    /// Pages a batch holds at most (`2 * block_size`).
    pub fn slot_pages(&self) -> u64 {
        self.block_size.saturating_mul(2)
    }

    /// The counters.
    pub fn stats(&self) -> DoublewriteStats {
        self.stats
    }

    /// Pages queued, not yet in a batch.
    pub fn queued(&self) -> u64 {
        self.queued
    }

    /// Pages of the batch in flight (0: none).
    pub fn running(&self) -> u64 {
        self.running
    }

    /// Whether the thread that queues the writes waits (`add_to_batch` with a full slot, or
    /// `flush_buffered_writes`, while a batch is in flight).
    pub fn writer_blocked(&self) -> bool {
        self.running > 0 && (self.queued >= self.slot_pages() || (self.flush_requested && self.queued > 0))
    }

    /// One page write (`add_to_batch`, or the direct write without doublewrite). Returns the
    /// I/O to issue now, if any: a full batch, or (doublewrite off) the page in place.
    pub fn add(&mut self) -> Option<BatchPlan> {
        if !self.enabled {
            self.unsynced = true;
            return Some(BatchPlan { pages: 1, ..BatchPlan::default() });
        }
        self.queued = self.queued.saturating_add(1);
        self.try_submit()
    }

    /// `flush_buffered_writes` at the end of a flush batch: the partial slot is written as
    /// soon as no batch is in flight (returned now if none is). Without doublewrite: an
    /// fsync of the data files written (a plan of no pages with `sync_data`).
    pub fn flush_buffered_writes(&mut self) -> Option<BatchPlan> {
        if !self.enabled {
            let sync = self.unsynced && self.fsync_data;
            self.unsynced = false;
            return sync.then(|| BatchPlan { sync_data: true, ..BatchPlan::default() });
        }
        if self.queued > 0 {
            self.flush_requested = true;
        }
        self.try_submit()
    }

    /// The batch in flight is done: its last in-place write completed and the data files
    /// were fsynced (`write_completed`). Returns the next batch, if one is due.
    pub fn batch_completed(&mut self) -> Option<BatchPlan> {
        self.running = 0;
        self.try_submit()
    }

    fn try_submit(&mut self) -> Option<BatchPlan> {
        if self.running > 0 || self.queued == 0 {
            return None;
        }
        let slot = self.slot_pages();
        if self.queued < slot && !self.flush_requested {
            return None;
        }
        let n = self.queued.min(slot);
        self.queued -= n;
        if self.queued == 0 {
            self.flush_requested = false;
        }
        self.running = n;
        Some(self.plan(n))
    }

    /// The I/O of a batch of `n` pages, counted.
    fn plan(&mut self, n: u64) -> BatchPlan {
        let mut plan = BatchPlan {
            pages: n,
            sync_system: self.fsync_data,
            sync_data: self.fsync_data,
            ..BatchPlan::default()
        };
        let split = self.block1.saturating_add(self.block_size) != self.block2 && n > self.block_size;
        if split {
            plan.copies[0] = SystemWrite { first: self.block1, pages: self.block_size };
            plan.copies[1] = SystemWrite { first: self.block2, pages: n - self.block_size };
            plan.n = 2;
        } else {
            plan.copies[0] = SystemWrite { first: self.block1, pages: n };
            plan.n = 1;
        }
        self.stats.dblwr_pages_written += n;
        self.stats.dblwr_writes += plan.n as u64;
        plan
    }
}
