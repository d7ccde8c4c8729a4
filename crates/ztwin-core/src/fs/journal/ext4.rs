//! ext4 data=ordered with its jbd2 journal: which writes dirty the inode, what fsync and
//! fdatasync then send to the device, and what a journal commit writes.
//!
//! Mechanism, as the model runs it (Linux 6.1):
//! - A write first updates the timestamps (`file_modified` -> `file_update_time`):
//!   `inode_needs_update_time` compares mtime and ctime with `current_time`, the coarse
//!   clock (advanced once per jiffy, `CONFIG_HZ` 250 on Debian: 4 ms) truncated to
//!   s_time_gran (1 ns with 256-byte inodes); an unchanged time dirties nothing, so writes
//!   to a file within one tick share one update. A changed time marks the inode dirty
//!   (`generic_update_time`, I_DIRTY_SYNC; with `lazytime` only I_DIRTY_TIME, no handle)
//!   and `ext4_dirty_inode` starts a handle that logs the inode-table block holding the
//!   inode (`ext4_mark_inode_dirty` -> `ext4_do_update_inode`), setting the inode's
//!   `i_sync_tid` to the running transaction. `i_datasync_tid` moves only when
//!   `ext4_update_inode_fsync_trans(handle, inode, 1)` runs: the size changed
//!   (`ext4_do_update_inode`'s need_datasync on i_disksize), blocks were allocated as
//!   written (`ext4_ext_map_blocks`), or unwritten extents were converted
//!   (`ext4_ext_handle_unwritten_extents`, at the end of an O_DIRECT write into
//!   fallocate'd space). fallocate's own allocation is unwritten (datasync 0) but its
//!   size change is not. `noatime` leaves reads out of all this; i_version is only bumped
//!   when queried (`inode_iversion_need_inc`), which nothing here does.
//! - An O_DIRECT overwrite of written blocks therefore dirties at most the inode block
//!   (once per tick); a write into unwritten extents also logs the extent leaf (or the
//!   inode, when the extents fit in i_block); an extending O_DIRECT write (6.1
//!   `ext4_dio_write_iter`) adds the file to the orphan list first (the superblock block
//!   and the inode, without the orphan_file feature, which Debian 12's mke2fs.conf
//!   leaves off as far as we know), allocates (block bitmap, group descriptor, extent
//!   leaf or inode), updates the size and removes the orphan entry
//!   (`ext4_handle_inode_extension`).
//! - `ext4_sync_file`: `file_write_and_wait_range` (the caller's data writes), then, for
//!   data=ordered/writeback, `ext4_fsync_journal`: the tid is `i_datasync_tid` for
//!   fdatasync and `i_sync_tid` for fsync; `needs_barrier` is set when
//!   `jbd2_trans_will_send_data_barrier` says no commit will send the barrier (the tid is
//!   already committed, or its commit has reached T_COMMIT_JFLUSH, i.e. its commit block
//!   is submitted); then `ext4_fc_commit` (fast_commit is off by default) calls
//!   `jbd2_complete_transaction`: a running tid has its commit requested
//!   (`jbd2_log_start_commit`) and is waited for; a committing tid is waited for; an older
//!   one is done. Last, `blkdev_issue_flush` if `needs_barrier`. data=journal
//!   (`ext4_should_journal_data`) forces a commit instead (`ext4_force_commit`): not
//!   modelled (O_DIRECT falls back to buffered I/O under it).
//! - The commit (`jbd2_journal_commit_transaction`, run by kjournald2 for the running
//!   transaction once one is requested, or when its timer expires): the running
//!   transaction becomes the committing one (new handles open a new running transaction;
//!   one commit at a time, so an fsync whose change is in the new running transaction
//!   waits for the commit in flight and then for its own); data=ordered data buffers
//!   (none for O_DIRECT and overwrites); revoke records (none: nothing is freed); then,
//!   under one plug, descriptor blocks each followed by the logged blocks it tags, at the
//!   journal head (`jbd2_journal_next_log_block`, a ring from `s_first` to `s_maxlen`);
//!   wait for all of them (T_COMMIT_JFLUSH); then the commit block, with REQ_PREFLUSH |
//!   REQ_FUA when the journal has JBD2_BARRIER and not journal_async_commit
//!   (`journal_submit_commit_record`), waited for; with journal_async_commit the commit
//!   block goes with the other writes, unflagged, and a `blkdev_issue_flush` follows.
//!   The journal superblock is written once at the first commit after mount
//!   (JBD2_FLUSHED, unflagged) and after the commit block whenever the log tail can move
//!   by at least `j_max_transaction_buffers` blocks (`jbd2_update_log_tail`, REQ_FUA).
//!   A descriptor holds as many tags as `journal_tag_bytes` allow: with metadata_csum
//!   (journal checksum v3, 16-byte tags), a 16-byte UUID after the first tag and a 4-byte
//!   tail, 253 per 4 KiB descriptor.
//! - A logged block that a handle changes while its journal copy is being written
//!   (BH_Shadow, between the commit's start and T_COMMIT_JFLUSH) makes the handle wait
//!   for that write (`do_get_write_access`).
//! - The timer: a transaction's `t_expires` is its start plus `j_commit_interval`
//!   (`commit=`, default `JBD2_DEFAULT_MAX_COMMIT_AGE` 5 s), the timer set to
//!   `round_jiffies_up` of it (the next whole second).
//! - Space: each committed block is on its transaction's checkpoint list until written
//!   home or logged again by a later transaction; a transaction with none left is freed.
//!   The log tail (`jbd2_journal_get_log_tail`) is the start of the oldest transaction
//!   still holding a block, else of the committing one, else the head. Committed blocks
//!   become dirty buffers of the block device and the flusher writes them home once the
//!   device inode has been dirty for `dirty_expire_centisecs` (30 s; the flusher wakes
//!   every `dirty_writeback_centisecs`, 5 s), except those a running transaction holds
//!   again. A handle that finds less than `j_max_transaction_buffers` (a quarter of the
//!   journal) free (`add_transaction_credits`, `jbd2_log_space_left`: free minus 32)
//!   checkpoints (`__jbd2_log_wait_for_space`): moves the tail if it can
//!   (`jbd2_cleanup_journal_tail`: `blkdev_issue_flush`, then the journal superblock with
//!   REQ_FUA), else writes the oldest transaction's blocks home (`jbd2_log_do_checkpoint`)
//!   and then moves the tail, until enough is free.
//!
//! Where mke2fs puts things ([`Ext4Layout::mke2fs`]): 4 KiB blocks, 32768 blocks per group,
//! flex_bg of 16 groups whose block bitmaps, inode bitmaps and inode tables lie at the
//! start of the flex group's first group; the journal (`ext2fs_default_journal_size`:
//! 64 MiB for a filesystem of 2 to 16 GiB) at the first free block of the group
//! `get_midpoint_journal_block` picks: the group holding the filesystem's middle block,
//! rounded down to its flex group, or the next group when that has more free blocks (it
//! does: the first group of a flex group holds the flex group's metadata).
//!
//! Sources (the stored index holds one version of each file; none is exactly 6.1, and
//! what 6.1 has where they differ is said): fs/ext4/fsync.c (`ext4_sync_file`,
//! `ext4_fsync_journal`: read in a 6.15+ version that adds an S_ISREG check and drops the
//! data=journal branch, and in the 2023 patch that made that change, whose context is
//! the 6.1 code: `if (!sbi->s_journal) nojournal; else if (ext4_should_journal_data)
//! ext4_force_commit; else ext4_fsync_journal`); fs/jbd2/commit.c
//! (`jbd2_journal_commit_transaction`, `journal_submit_commit_record`: a 6.6+ version;
//! the order of writes, waits and flags is 6.1's); fs/jbd2/journal.c (a 4.x/5.x version:
//! `jbd2_complete_transaction`, `jbd2_trans_will_send_data_barrier`, whose 2024 stable
//! fix only concerns external journals, `jbd2_journal_next_log_block`,
//! `jbd2_journal_get_log_tail`, `__jbd2_update_log_tail` (REQ_FUA),
//! `jbd2_write_superblock`, `journal_reset` (`j_max_transaction_buffers` = maxlen / 4; 6.1
//! computes the same through `jbd2_journal_get_max_txn_bufs` without fast-commit
//! blocks), `journal_init_common` (`j_commit_interval`)); fs/jbd2/transaction.c
//! (`jbd2_get_transaction`: `t_expires`, `round_jiffies_up`); fs/ext4/extents.c and
//! indirect.c (`ext4_update_inode_fsync_trans` call sites, in patches); fs/ext4/file.c
//! (`ext4_dio_write_iter`, in 5.x/6.x patches); e2fsprogs lib/ext2fs/mkjournal.c
//! (`ext2fs_default_journal_size`, `get_midpoint_journal_block`). From memory of 6.1, not
//! re-read here: fs/inode.c (`inode_needs_update_time`, `current_time`),
//! fs/ext4/inode.c (`ext4_dirty_inode`, `ext4_do_update_inode`), fs/jbd2/checkpoint.c
//! (`__jbd2_log_wait_for_space`, `jbd2_log_do_checkpoint`, `jbd2_cleanup_journal_tail`),
//! the `add_transaction_credits` space test, mm/page-writeback.c's defaults.
//! MariaDB 10.11 (storage/innobase/os/os0file.cc, `os_file_sync_posix`, read in a 10.6+
//! version): `fdatasync` wherever the build has it (Linux), so every InnoDB data-file
//! and redo-log sync is an fdatasync. MySQL/Percona 5.7 with innodb_flush_method=O_DSYNC
//! (from memory): redo log files opened O_SYNC (buffered writes, each a full fsync:
//! `generic_write_sync` with IOCB_SYNC, datasync 0), data files fsync().
//!
//! Simplifications: 1. a transaction's logged blocks are the distinct metadata blocks the
//! modelled events touch (inode-table block, extent leaf, block bitmap, group
//! descriptor, superblock); a handle's reserved credits are not counted and revoke
//! records never occur (nothing is freed); 2. the directory and the files' inodes are in
//! group 0's inode table (a top-level directory goes where Orlov picks), a file's extent
//! leaf (for a file of more than 4 maximal unwritten extents) lies just before its data,
//! extent splits never allocate a new leaf; 3. the commit's lock phase (waiting for
//! running handles) takes no time and a new handle never waits for it; 4. the tail
//! candidate is computed when the commit starts (jbd2: after its journal writes); 5. the
//! flusher writes all dirty metadata blocks together when the block device inode has been
//! dirty for `dirty_expire` (its 5 s wakeups are not on a grid); 6. j_wbufsize (does not
//! bind with 16-byte tags) and the big-transaction commit (a transaction reaching
//! `j_max_transaction_buffers` credits) are not modelled; 7. a forced checkpoint is run
//! by the writer that needed space; concurrent writers needing space step the same
//! checkpoint; 8. fast_commit, data=journal, an external journal and nojournal mode are
//! not modelled.

use std::collections::{HashMap, VecDeque};

use super::{coarse_tick, DeviceCaps, IoOp, IoStep, Plan, PlanRun, SyncPlan, WriteKind};
use crate::error::{Error, Result};
use crate::sim::time::{Nanos, SEC};

/// `JBD2_DEFAULT_MAX_COMMIT_AGE` (include/linux/jbd2.h): seconds between periodic
/// commits; `j_commit_interval` = HZ x this unless ext4's `commit=` sets it.
pub const JBD2_DEFAULT_MAX_COMMIT_AGE: u64 = 5;
/// `JBD2_MIN_JOURNAL_BLOCKS` (include/linux/jbd2.h): the smallest journal `journal_reset`
/// accepts.
pub const JBD2_MIN_JOURNAL_BLOCKS: u32 = 1024;
/// sizeof(journal_header_t): h_magic, h_blocktype, h_sequence.
pub const JOURNAL_HEADER_BYTES: u32 = 12;
/// sizeof(journal_block_tag3_t): `journal_tag_bytes` with journal checksum v3.
pub const JOURNAL_BLOCK_TAG3_BYTES: u32 = 16;
/// sizeof(journal_block_tag_t): `journal_tag_bytes` without checksums (minus 4 without
/// the 64bit feature).
pub const JOURNAL_BLOCK_TAG_BYTES: u32 = 12;
/// The UUID written after a descriptor's first tag (`jbd2_journal_commit_transaction`).
pub const JOURNAL_TAG_UUID_BYTES: u32 = 16;
/// sizeof(struct jbd2_journal_block_tail): the descriptor checksum with checksum v2/v3.
pub const JOURNAL_BLOCK_TAIL_BYTES: u32 = 4;
/// `jbd2_log_space_left`'s allowance "for rounding errors", blocks.
pub const JBD2_LOG_SPACE_SLACK: u32 = 32;
/// `dirty_expire_centisecs` default (mm/page-writeback.c): dirty data older than this is
/// written by the flusher.
pub const DIRTY_EXPIRE_CENTISECS: u64 = 3000;
/// `dirty_writeback_centisecs` default (mm/page-writeback.c): the flusher's period.
pub const DIRTY_WRITEBACK_CENTISECS: u64 = 500;
/// CONFIG_HZ of Debian 12's amd64 kernel (config-6.1.0-*-amd64): jiffies per second.
pub const DEBIAN_CONFIG_HZ: u32 = 250;
/// Extents an inode's i_block holds (60 bytes: a 12-byte header and four 12-byte
/// entries) before the tree needs a leaf block.
pub const EXT4_EXTENTS_IN_INODE: u64 = 4;
/// `EXT_UNWRITTEN_MAX_LEN` (fs/ext4/ext4_extents.h): the longest unwritten extent, blocks.
pub const EXT_UNWRITTEN_MAX_LEN: u64 = 32767;
/// mke2fs.conf `inode_ratio` default: bytes per inode.
pub const MKE2FS_INODE_RATIO: u64 = 16384;
/// mke2fs.conf `flex_bg_size` default: groups per flex group (s_log_groups_per_flex 4).
pub const MKE2FS_FLEX_BG_SIZE: u64 = 16;
/// `EXT4_GOOD_OLD_FIRST_INO`: the first non-reserved inode (lost+found, made by mke2fs).
pub const EXT4_GOOD_OLD_FIRST_INO: u64 = 11;

/// ext4 and jbd2 parameters, by their real names; `Default` is mkfs.ext4 (e2fsprogs
/// 1.47 mke2fs.conf) and a default mount on Debian 12's 6.1 kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ext4Params {
    /// `s_blocksize` (mke2fs.conf `blocksize` 4096), bytes.
    pub block_size: u32,
    /// Journal length, blocks (`s_maxlen`; `ext2fs_default_journal_size`: 16384 = 64 MiB
    /// for a filesystem of 2 to 16 GiB).
    pub journal_blocks: u32,
    /// mke2fs.conf `inode_size` 256, bytes.
    pub inode_size: u32,
    /// `j_commit_interval`: `commit=` mount option, default `JBD2_DEFAULT_MAX_COMMIT_AGE` s.
    pub commit_interval_ns: Nanos,
    /// JBD2_BARRIER: the `barrier` mount option, on by default (`nobarrier` clears it).
    pub barrier: bool,
    /// `journal_async_commit` mount option (JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT), off.
    pub journal_async_commit: bool,
    /// Journal checksum v3 (JBD2_FEATURE_INCOMPAT_CSUM_V3), which ext4 sets with the
    /// `metadata_csum` feature (a mke2fs default since 1.43).
    pub journal_csum_v3: bool,
    /// The `64bit` feature (a mke2fs default): 64-bit block numbers in journal tags.
    pub feature_64bit: bool,
    /// `lazytime` mount option, off: timestamp-only changes would not start a handle.
    pub lazytime: bool,
    /// CONFIG_HZ: the coarse clock's ticks per second.
    pub hz: u32,
    /// `dirty_expire_centisecs` as ns.
    pub dirty_expire_ns: Nanos,
    /// `dirty_writeback_centisecs` as ns.
    pub dirty_writeback_ns: Nanos,
}

impl Default for Ext4Params {
    fn default() -> Self {
        Ext4Params {
            block_size: 4096,
            journal_blocks: 16384,
            inode_size: 256,
            commit_interval_ns: JBD2_DEFAULT_MAX_COMMIT_AGE * SEC,
            barrier: true,
            journal_async_commit: false,
            journal_csum_v3: true,
            feature_64bit: true,
            lazytime: false,
            hz: DEBIAN_CONFIG_HZ,
            dirty_expire_ns: DIRTY_EXPIRE_CENTISECS * SEC / 100,
            dirty_writeback_ns: DIRTY_WRITEBACK_CENTISECS * SEC / 100,
        }
    }
}

impl Ext4Params {
    /// `journal_tag_bytes` (include/linux/jbd2.h).
    pub fn tag_bytes(&self) -> u32 {
        if self.journal_csum_v3 {
            JOURNAL_BLOCK_TAG3_BYTES
        } else if self.feature_64bit {
            JOURNAL_BLOCK_TAG_BYTES
        } else {
            JOURNAL_BLOCK_TAG_BYTES - 4
        }
    }

    /// Tags one descriptor block holds: the commit loop adds tags (the first followed by
    /// the UUID) until less than a tag, a UUID and the tail are left.
    pub fn tags_per_descriptor(&self) -> u32 {
        let tag = self.tag_bytes();
        let tail = if self.journal_csum_v3 { JOURNAL_BLOCK_TAIL_BYTES } else { 0 };
        let mut space = self.block_size.saturating_sub(JOURNAL_HEADER_BYTES);
        let mut n = 0;
        loop {
            space = space.saturating_sub(tag);
            if n == 0 {
                space = space.saturating_sub(JOURNAL_TAG_UUID_BYTES);
            }
            n += 1;
            if space < tag + JOURNAL_TAG_UUID_BYTES + tail {
                return n;
            }
        }
    }

    /// `j_max_transaction_buffers`: a quarter of the journal (`journal_reset`).
    pub fn max_transaction_buffers(&self) -> u32 {
        self.journal_blocks / 4
    }

    fn check(&self) -> Result<()> {
        let ensure =
            |ok: bool, field: &str, msg: String| if ok { Ok(()) } else { Err(Error::config(field, msg)) };
        ensure(
            self.block_size.is_power_of_two() && (1024..=65536).contains(&self.block_size),
            "ext4.block_size",
            format!("{} is not allowed: a power of two from 1024 to 65536", self.block_size),
        )?;
        ensure(
            (JBD2_MIN_JOURNAL_BLOCKS..=1 << 24).contains(&self.journal_blocks),
            "ext4.journal_blocks",
            format!("{} is not allowed: {JBD2_MIN_JOURNAL_BLOCKS} to 2^24 blocks", self.journal_blocks),
        )?;
        ensure(
            (128..=self.block_size).contains(&self.inode_size) && self.inode_size.is_power_of_two(),
            "ext4.inode_size",
            format!("{} is not allowed: a power of two from 128 to the block size", self.inode_size),
        )?;
        ensure(
            (1..=10_000).contains(&self.hz),
            "ext4.hz",
            format!("{} is not allowed: 1 to 10000", self.hz),
        )?;
        ensure(
            (1..=1000 * SEC).contains(&self.commit_interval_ns),
            "ext4.commit_interval_ns",
            "must be from 1 ns to 1000 s".into(),
        )?;
        ensure(
            (1..=1000 * SEC).contains(&self.dirty_writeback_ns) && self.dirty_expire_ns <= 1000 * SEC,
            "ext4.dirty_writeback_ns",
            "dirty_writeback_ns must be from 1 ns to 1000 s and dirty_expire_ns at most 1000 s".into(),
        )
    }
}

/// `ext2fs_default_journal_size` (e2fsprogs lib/ext2fs/mkjournal.c): the journal mke2fs
/// makes for a filesystem of `fs_blocks` blocks (4 KiB sizes in its comments), in blocks;
/// None below 2048 blocks (no journal).
pub fn mke2fs_journal_blocks(fs_blocks: u64) -> Option<u32> {
    Some(match fs_blocks {
        0..2048 => return None,
        2048..32768 => 1024,
        32768..262_144 => 4096,
        262_144..524_288 => 8192,
        524_288..4_194_304 => 16384,
        4_194_304..8_388_608 => 32768,
        8_388_608..16_777_216 => 65536,
        16_777_216..33_554_432 => 131_072,
        _ => 262_144,
    })
}

/// Where a file's metadata lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ext4FileLayout {
    /// Byte offset of the inode-table block holding the file's inode.
    pub inode_block: u64,
    /// Byte offset of the extent-tree leaf holding the file's extents; None when they fit
    /// in the inode's i_block.
    pub extent_leaf: Option<u64>,
    /// Byte offset of the block bitmap of the group its blocks come from.
    pub block_bitmap: u64,
    /// Byte offset of the group-descriptor block describing that group.
    pub group_desc: u64,
}

/// A file as mke2fs's layout places it: where its data start and how large it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ext4FileSpec {
    /// Byte offset of the file's first data block on the device.
    pub data_offset: u64,
    /// File size, bytes.
    pub bytes: u64,
}

/// Where the journal and the metadata blocks the model logs lie on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ext4Layout {
    /// Byte offset of journal block 0 (the journal superblock); the journal's blocks are
    /// contiguous from there (mke2fs allocates the journal inode in one run).
    pub journal_offset: u64,
    /// Byte offset of the block holding the primary superblock (block 0 for 4 KiB blocks:
    /// the superblock is at byte 1024), logged by orphan-list changes.
    pub superblock_block: u64,
    /// The files, indexed by the file ids the journal's calls take.
    pub files: Vec<Ext4FileLayout>,
}

impl Ext4Layout {
    /// mke2fs's layout (see the module docs) of a filesystem of `fs_bytes` bytes holding
    /// `files`, created one after another in one directory of group 0. The journal is
    /// `p.journal_blocks` long (mke2fs's own choice is [`mke2fs_journal_blocks`]).
    pub fn mke2fs(p: &Ext4Params, fs_bytes: u64, files: &[Ext4FileSpec]) -> Result<Ext4Layout> {
        p.check()?;
        let bs = u64::from(p.block_size);
        let blocks = fs_bytes / bs;
        let Some(jblocks) = mke2fs_journal_blocks(blocks) else {
            return Err(Error::config(
                "ext4.fs_bytes",
                format!("{fs_bytes} bytes is too small for a journal"),
            ));
        };
        let g = Geometry::new(p, blocks);
        let jgroup = g.journal_group();
        let jstart = g.first_block(jgroup) + g.overhead(jgroup);
        if jstart + u64::from(p.journal_blocks) > blocks || jblocks == 0 {
            return Err(Error::config("ext4.journal_blocks", "the journal does not fit in the filesystem"));
        }
        // The directory's inode is the first after lost+found; its files follow.
        let itable0 = g.inode_table(0);
        let inodes_per_block = bs / u64::from(p.inode_size);
        let files = files
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let ino = EXT4_GOOD_OLD_FIRST_INO + 2 + k as u64; // lost+found, the directory
                let index = (ino - 1) % g.inodes_per_group;
                let group = (f.data_offset / bs / g.blocks_per_group).min(g.groups - 1);
                let file_blocks = f.bytes.div_ceil(bs);
                Ext4FileLayout {
                    inode_block: (itable0 + index / inodes_per_block) * bs,
                    extent_leaf: (file_blocks > EXT4_EXTENTS_IN_INODE * EXT_UNWRITTEN_MAX_LEN)
                        .then(|| (f.data_offset / bs).saturating_sub(1) * bs),
                    block_bitmap: g.block_bitmap(group) * bs,
                    group_desc: (1 + group / g.descs_per_block) * bs,
                }
            })
            .collect();
        Ok(Ext4Layout { journal_offset: jstart * bs, superblock_block: 0, files })
    }
}

/// mke2fs's group geometry (lib/ext2fs/initialize.c, alloc_tables.c), as far as the
/// layout needs it.
struct Geometry {
    blocks: u64,
    blocks_per_group: u64,
    groups: u64,
    inodes_per_group: u64,
    itable_blocks: u64,
    descs_per_block: u64,
    gdt_blocks: u64,
    reserved_gdt: u64,
}

impl Geometry {
    fn new(p: &Ext4Params, blocks: u64) -> Geometry {
        let bs = u64::from(p.block_size);
        let blocks_per_group = 8 * bs;
        let groups = blocks.div_ceil(blocks_per_group).max(1);
        let inodes_per_group = (blocks_per_group * bs / MKE2FS_INODE_RATIO).max(1);
        let itable_blocks = (inodes_per_group * u64::from(p.inode_size)).div_ceil(bs);
        let desc = if p.feature_64bit { 64 } else { 32 };
        let descs_per_block = bs / desc;
        let gdt_blocks = groups.div_ceil(descs_per_block);
        // calc_reserved_gdt_blocks: room for 1024x growth, capped at a block of addresses.
        let max_blocks = blocks.saturating_mul(1024).min(u64::from(u32::MAX));
        let rsv_groups = max_blocks.div_ceil(blocks_per_group);
        let reserved_gdt = rsv_groups.div_ceil(descs_per_block).saturating_sub(gdt_blocks).min(bs / 4);
        Geometry {
            blocks,
            blocks_per_group,
            groups,
            inodes_per_group,
            itable_blocks,
            descs_per_block,
            gdt_blocks,
            reserved_gdt,
        }
    }

    fn first_block(&self, g: u64) -> u64 {
        g * self.blocks_per_group
    }

    /// sparse_super: groups 0, 1 and powers of 3, 5 and 7 hold a superblock backup.
    fn has_super(g: u64) -> bool {
        let power_of = |b: u64| {
            let mut x = 1;
            while x < g {
                x *= b;
            }
            x == g
        };
        g <= 1 || power_of(3) || power_of(5) || power_of(7)
    }

    fn super_blocks(&self, g: u64) -> u64 {
        if Self::has_super(g) {
            1 + self.gdt_blocks + self.reserved_gdt
        } else {
            0
        }
    }

    /// Blocks at the start of group `g` that are not free: a superblock copy and the
    /// descriptors, and for a flex group's first group the flex group's bitmaps and
    /// inode tables (mke2fs's flexbg_offset spaces the three arrays by the flex size).
    fn overhead(&self, g: u64) -> u64 {
        let flex = if g.is_multiple_of(MKE2FS_FLEX_BG_SIZE) {
            2 * MKE2FS_FLEX_BG_SIZE + MKE2FS_FLEX_BG_SIZE.min(self.groups - g) * self.itable_blocks
        } else {
            0
        };
        self.super_blocks(g) + flex
    }

    fn flex_meta_start(&self, g: u64) -> u64 {
        let leader = g - g % MKE2FS_FLEX_BG_SIZE;
        self.first_block(leader) + self.super_blocks(leader)
    }

    fn block_bitmap(&self, g: u64) -> u64 {
        self.flex_meta_start(g) + g % MKE2FS_FLEX_BG_SIZE
    }

    fn inode_table(&self, g: u64) -> u64 {
        self.flex_meta_start(g) + 2 * MKE2FS_FLEX_BG_SIZE + (g % MKE2FS_FLEX_BG_SIZE) * self.itable_blocks
    }

    fn free_blocks(&self, g: u64) -> u64 {
        let size = (self.blocks - self.first_block(g)).min(self.blocks_per_group);
        size.saturating_sub(self.overhead(g))
    }

    /// `get_midpoint_journal_block`'s group.
    fn journal_group(&self) -> u64 {
        let mut group = (self.blocks / 2) / self.blocks_per_group;
        let start = if group > MKE2FS_FLEX_BG_SIZE {
            group -= group % MKE2FS_FLEX_BG_SIZE;
            group
        } else {
            group.saturating_sub(1)
        };
        let end = if group + 1 < self.groups { group + 1 } else { group };
        let mut best = start;
        for i in start + 1..=end {
            if self.free_blocks(i) > self.free_blocks(best) {
                best = i;
            }
        }
        best
    }
}

/// A metadata block the journal may log.
#[derive(Debug, Clone, Copy)]
struct Meta {
    /// Byte offset of its home location.
    offset: u64,
    /// In the running transaction.
    running: bool,
    /// In the committing transaction.
    committing: bool,
    /// The last committed transaction that logged it while it is not yet written home
    /// (0: none): it keeps that transaction on the checkpoint list.
    cp_tid: u64,
}

/// An inode's journal state.
#[derive(Debug, Clone, Copy)]
struct FileState {
    inode: u32,
    leaf: Option<u32>,
    bitmap: u32,
    gdt: u32,
    /// Coarse tick of the last timestamp update (u64::MAX: none yet).
    mtime_tick: u64,
    /// `i_sync_tid`, `i_datasync_tid`.
    sync_tid: u64,
    datasync_tid: u64,
}

#[derive(Debug, Clone, Copy)]
struct Running {
    tid: u64,
    /// When the commit timer fires (`round_jiffies_up(t_expires)`).
    timer: Nanos,
    /// Blocks logged (t_nr_buffers).
    blocks: u32,
}

#[derive(Debug, Clone, Copy)]
struct Committing {
    tid: u64,
    /// `t_log_start`.
    log_start: u32,
    /// The commit's I/O in three phases, each started when the previous one completed:
    /// 0, the journal superblock (first commit after mount); 1, descriptors and logged
    /// blocks (with journal_async_commit, the commit block too); 2, the commit block (or
    /// the flush) and the tail update.
    phases: [Plan; 3],
    phase: usize,
    run: PlanRun,
    /// When phase 1 completes (T_COMMIT_JFLUSH: the commit block goes next), once issued.
    jflush_at: Option<Nanos>,
    /// The tail to set once the commit completes: (tid, block, blocks freed).
    new_tail: Option<(u64, u32, u32)>,
}

impl Committing {
    /// The commit has reached T_COMMIT_JFLUSH by `now`.
    fn jflushed(&self, now: Nanos) -> bool {
        self.jflush_at.is_some_and(|t| now >= t)
    }
}

/// A forced checkpoint's progress (`__jbd2_log_wait_for_space`).
#[derive(Debug, Clone, Copy)]
enum Checkpoint {
    Idle,
    /// Home writes of the oldest transaction's blocks in flight until then.
    Writing(Nanos),
    /// `jbd2_cleanup_journal_tail`: flush and journal superblock (`checkpoint_run`), then
    /// the new tail (tid, block).
    Tail(u64, u32),
}

/// What a write did, and what the writer must do before going on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteEffect {
    /// A handle logged blocks in the running transaction (`i_sync_tid` moved).
    pub dirtied: bool,
    /// `i_datasync_tid` moved: an fdatasync must commit.
    pub datasync: bool,
    /// The writer waits until then: a block it changes is being written to the journal by
    /// the committing transaction (BH_Shadow).
    pub wait_until: Option<Nanos>,
    /// Too little journal space for a handle: nothing was done; the writer runs
    /// [`Ext4Journal::checkpoint_step`] until it is `Done`, then calls `note_write` again.
    pub needs_checkpoint: bool,
}

/// What a writer running a forced checkpoint does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointStep {
    /// Checkpoint I/O in flight: step again at this time.
    WaitUntil(Nanos),
    /// Wait until this transaction is committed (kick the journal task: a commit may have
    /// been requested), then step again.
    WaitCommit(u64),
    /// Enough space (or none can be reclaimed): retry the write.
    Done,
}

/// What the journal thread (kjournald2) does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalStep {
    /// Call [`Ext4Journal::commit_step`] again at this time: journal I/O in flight, or the
    /// running transaction's commit timer; None: nothing to do until an fsync kicks it.
    pub wake_at: Option<Nanos>,
    /// Every transaction up to this tid is committed (`j_commit_sequence`): wake the
    /// fsyncs waiting for one.
    pub committed_through: u64,
}

/// Counters of the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ext4Stats {
    /// Commits started.
    pub commits: u64,
    /// Commits started by the timer rather than by an fsync.
    pub timer_commits: u64,
    /// Journal blocks written: journal superblock, descriptors, logged blocks, commit
    /// blocks.
    pub journal_blocks: u64,
    /// Journal superblock writes (first commit, tail updates).
    pub journal_sb_writes: u64,
    /// fsync/fdatasync calls; those that waited for a commit; those that issued
    /// `blkdev_issue_flush`.
    pub syncs: u64,
    /// Syncs that waited for a commit.
    pub sync_waits: u64,
    /// Syncs that issued a cache flush themselves (`needs_barrier`).
    pub sync_flushes: u64,
    /// Handles started (metadata changes).
    pub handles: u64,
    /// Handles that waited for a block's journal write (BH_Shadow).
    pub shadow_waits: u64,
    /// Metadata blocks written home by the flusher.
    pub writeback_blocks: u64,
    /// Metadata blocks written home by forced checkpoints.
    pub checkpoint_blocks: u64,
    /// Checkpoint rounds: a short journal found by a forced checkpoint (each round moves
    /// the tail or writes one transaction's blocks home).
    pub checkpoints: u64,
}

/// ext4's jbd2 journal on one device (see the module docs).
#[derive(Debug, Clone)]
pub struct Ext4Journal {
    p: Ext4Params,
    caps: DeviceCaps,
    journal_offset: u64,
    meta: Vec<Meta>,
    /// Meta ids by home offset (the flusher merges adjacent blocks).
    by_offset: Vec<u32>,
    files: Vec<FileState>,
    superblock: u32,
    tags_per_desc: u32,
    max_txn: u32,
    /// The ring: `j_first`, `j_last`, `j_head`, `j_tail`, `j_free`, `j_tail_sequence`.
    first: u32,
    last: u32,
    head: u32,
    tail: u32,
    free: u32,
    tail_sequence: u64,
    /// `j_transaction_sequence` (the next tid), `j_commit_sequence`, `j_commit_request`.
    next_tid: u64,
    commit_sequence: u64,
    commit_request: u64,
    running: Option<Running>,
    committing: Option<Committing>,
    /// Committed transactions not known to be freed: (tid, t_log_start), oldest first.
    log_starts: VecDeque<(u64, u32)>,
    /// JBD2_FLUSHED: the journal superblock still says empty (mounted clean).
    flushed: bool,
    /// When the block device's inode became dirty (the flusher's clock).
    bdev_dirtied: Option<Nanos>,
    checkpoint: Checkpoint,
    checkpoint_run: PlanRun,
    stats: Ext4Stats,
}

impl Ext4Journal {
    /// A freshly mounted journal (empty, JBD2_FLUSHED) of `p` laid out as `layout`, on a
    /// device with `caps`.
    pub fn new(p: Ext4Params, layout: &Ext4Layout, caps: DeviceCaps) -> Result<Ext4Journal> {
        p.check()?;
        if layout.files.len() > 1 << 24 {
            return Err(Error::config("ext4.files", "at most 2^24 files"));
        }
        let bs = u64::from(p.block_size);
        let mut meta = Vec::new();
        let mut ids: HashMap<u64, u32> = HashMap::new();
        let mut id_of = |offset: u64| -> u32 {
            let offset = offset / bs * bs;
            *ids.entry(offset).or_insert_with(|| {
                meta.push(Meta { offset, running: false, committing: false, cp_tid: 0 });
                (meta.len() - 1) as u32
            })
        };
        let superblock = id_of(layout.superblock_block);
        let files = layout
            .files
            .iter()
            .map(|f| FileState {
                inode: id_of(f.inode_block),
                leaf: f.extent_leaf.map(&mut id_of),
                bitmap: id_of(f.block_bitmap),
                gdt: id_of(f.group_desc),
                mtime_tick: u64::MAX,
                sync_tid: 0,
                datasync_tid: 0,
            })
            .collect();
        let mut by_offset: Vec<u32> = (0..meta.len() as u32).collect();
        by_offset.sort_by_key(|&i| meta[i as usize].offset);
        let (first, last) = (1, p.journal_blocks);
        Ok(Ext4Journal {
            caps,
            journal_offset: layout.journal_offset,
            meta,
            by_offset,
            files,
            superblock,
            tags_per_desc: p.tags_per_descriptor(),
            max_txn: p.max_transaction_buffers(),
            first,
            last,
            head: first,
            tail: first,
            free: last - first,
            tail_sequence: 1,
            next_tid: 1,
            commit_sequence: 0,
            commit_request: 0,
            running: None,
            committing: None,
            log_starts: VecDeque::with_capacity(p.journal_blocks as usize),
            flushed: true,
            bdev_dirtied: None,
            checkpoint: Checkpoint::Idle,
            checkpoint_run: PlanRun::IDLE,
            stats: Ext4Stats::default(),
            p,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Ext4Params {
        &self.p
    }

    /// Counters so far.
    pub fn stats(&self) -> Ext4Stats {
        self.stats
    }

    /// Every transaction up to this tid is committed (`j_commit_sequence`).
    pub fn committed_through(&self) -> u64 {
        self.commit_sequence
    }

    /// The running transaction's tid, if any.
    pub fn running_tid(&self) -> Option<u64> {
        self.running.map(|r| r.tid)
    }

    /// The committing transaction's tid, if any.
    pub fn committing_tid(&self) -> Option<u64> {
        self.committing.map(|c| c.tid)
    }

    /// Journal head, tail and free blocks (`j_head`, `j_tail`, `j_free`).
    pub fn ring(&self) -> (u32, u32, u32) {
        (self.head, self.tail, self.free)
    }

    /// The running transaction's commit timer has fired by `now`.
    pub fn commit_due(&self, now: Nanos) -> bool {
        self.running.is_some_and(|r| now >= r.timer)
    }

    /// `jbd2_log_space_left`: free blocks less the allowance (the committing transaction's
    /// blocks are taken from `free` when its commit starts).
    fn space_left(&self) -> u32 {
        self.free.saturating_sub(JBD2_LOG_SPACE_SLACK)
    }

    /// The metadata blocks a write of `kind` logs, and whether it moves `i_datasync_tid`
    /// (see the module docs). Returns the count written into `out`.
    fn blocks_of(&self, f: &FileState, kind: WriteKind, times: bool, out: &mut [u32; 6]) -> (usize, bool) {
        let mut n = 0;
        let mut add = |id: u32, out: &mut [u32; 6]| {
            if !out[..n].contains(&id) {
                out[n] = id;
                n += 1;
            }
        };
        if times {
            add(f.inode, out);
        }
        let map = f.leaf.unwrap_or(f.inode);
        let datasync = match kind {
            WriteKind::Overwrite => false,
            WriteKind::IntoUnwritten => {
                add(map, out);
                true
            }
            WriteKind::Extend => {
                add(self.superblock, out);
                add(f.inode, out);
                add(f.bitmap, out);
                add(f.gdt, out);
                add(map, out);
                true
            }
            WriteKind::Fallocate { extends } => {
                add(f.inode, out);
                add(f.bitmap, out);
                add(f.gdt, out);
                add(map, out);
                extends
            }
        };
        (n, datasync)
    }

    /// A write of `kind` to file `file` at `now` (for O_DIRECT, its metadata changes:
    /// the timestamps before the I/O, the conversion or size update after it, taken
    /// together). A file id out of range does nothing.
    pub fn note_write(&mut self, file: u32, kind: WriteKind, now: Nanos) -> WriteEffect {
        let Some(&f) = self.files.get(file as usize) else { return WriteEffect::default() };
        let tick = coarse_tick(now, self.p.hz);
        let times = tick != f.mtime_tick && !(self.p.lazytime && kind == WriteKind::Overwrite);
        let mut ids = [0u32; 6];
        let (n, datasync) = self.blocks_of(&f, kind, times, &mut ids);
        if n == 0 {
            // Within the tick (or lazytime): nothing to log; with lazytime the time is
            // still updated in memory.
            if self.p.lazytime {
                self.files[file as usize].mtime_tick = tick;
            }
            return WriteEffect::default();
        }
        // add_transaction_credits: every handle needs j_max_transaction_buffers free.
        if self.space_left() < self.max_txn && self.reclaimable() {
            return WriteEffect { needs_checkpoint: true, ..WriteEffect::default() };
        }
        let running = *self.running.get_or_insert_with(|| {
            let tid = self.next_tid;
            self.next_tid += 1;
            // round_jiffies_up: the next whole second.
            let expires = now.saturating_add(self.p.commit_interval_ns);
            Running { tid, timer: expires.div_ceil(SEC).saturating_mul(SEC), blocks: 0 }
        });
        let shadow_until = self.committing.filter(|c| !c.jflushed(now)).and_then(|c| c.jflush_at);
        let mut wait = None;
        let mut added = 0;
        for &id in &ids[..n] {
            let m = &mut self.meta[id as usize];
            if m.committing {
                if let Some(t) = shadow_until {
                    wait = Some(t);
                }
            }
            if !m.running {
                m.running = true;
                added += 1;
            }
        }
        if let Some(r) = self.running.as_mut() {
            r.blocks += added;
        }
        let fs = &mut self.files[file as usize];
        if times {
            fs.mtime_tick = tick;
        }
        fs.sync_tid = running.tid;
        if datasync {
            fs.datasync_tid = running.tid;
        }
        self.stats.handles += 1;
        self.stats.shadow_waits += u64::from(wait.is_some());
        WriteEffect { dirtied: true, datasync, wait_until: wait, needs_checkpoint: false }
    }

    /// `ext4_sync_file` for file `file` at `now` (`datasync`: fdatasync), after the
    /// file's data writes completed (see the module docs). A file id out of range is a
    /// file whose inode never changed.
    pub fn fsync(&mut self, file: u32, datasync: bool, now: Nanos) -> SyncPlan {
        self.stats.syncs += 1;
        let tid =
            self.files.get(file as usize).map_or(0, |f| if datasync { f.datasync_tid } else { f.sync_tid });
        let committed = tid <= self.commit_sequence;
        let running = self.running.is_some_and(|r| r.tid == tid);
        let committing = self.committing.filter(|c| c.tid == tid);
        // jbd2_trans_will_send_data_barrier (internal journal).
        let will_send = self.p.barrier && !committed && committing.is_none_or(|c| !c.jflushed(now));
        let needs_barrier = self.p.barrier && !will_send;
        let mut plan = SyncPlan::default();
        // jbd2_complete_transaction.
        if running {
            if self.commit_request < tid {
                self.commit_request = tid;
            }
            plan.wait_commit = Some(tid);
            plan.kick = true;
        } else if committing.is_some() {
            plan.wait_commit = Some(tid);
        }
        if needs_barrier {
            plan.then.push(IoOp::Flush, false);
        }
        self.stats.sync_waits += u64::from(plan.wait_commit.is_some());
        self.stats.sync_flushes += u64::from(needs_barrier);
        plan
    }

    /// Takes `n` blocks at the head; returns the (up to two, at the wrap) runs.
    fn take_blocks(&mut self, n: u32) -> [(u32, u32); 2] {
        let mut runs = [(0, 0); 2];
        let mut left = n;
        for run in &mut runs {
            if left == 0 {
                break;
            }
            let len = left.min(self.last - self.head);
            *run = (self.head, len);
            self.head += len;
            if self.head == self.last {
                self.head = self.first;
            }
            left -= len;
        }
        self.free = self.free.saturating_sub(n);
        runs
    }

    fn block_offset(&self, block: u32) -> u64 {
        self.journal_offset.saturating_add(u64::from(block) * u64::from(self.p.block_size))
    }

    /// Blocks from `from` forward to `to` around the ring.
    fn distance(&self, from: u32, to: u32) -> u32 {
        if to >= from {
            to - from
        } else {
            to + (self.last - self.first) - from
        }
    }

    /// `jbd2_journal_get_log_tail`: the oldest transaction still holding a checkpoint
    /// block, else the committing one, else the running one at the head.
    fn log_tail(&mut self) -> (u64, u32) {
        let oldest = self.meta.iter().filter(|m| m.cp_tid != 0).map(|m| m.cp_tid).min();
        if let Some(tid) = oldest {
            while self.log_starts.front().is_some_and(|&(t, _)| t < tid) {
                self.log_starts.pop_front();
            }
            if let Some(&(t, start)) = self.log_starts.front() {
                return (t, start);
            }
        }
        if let Some(c) = self.committing {
            return (c.tid, c.log_start);
        }
        (self.running.map_or(self.next_tid, |r| r.tid), self.head)
    }

    /// Starts committing the running transaction at `now`.
    fn start_commit(&mut self) {
        let Some(r) = self.running.take() else { return };
        self.stats.commits += 1;
        if self.commit_request < r.tid {
            self.stats.timer_commits += 1;
        }
        let mut logged = 0u32;
        for m in &mut self.meta {
            if m.running {
                m.running = false;
                m.committing = true;
                logged += 1;
            }
        }
        let descs = logged.div_ceil(self.tags_per_desc);
        let log_start = self.head;
        let bs = u64::from(self.p.block_size);
        let barrier = self.p.barrier;
        let mut p0 = Plan::EMPTY;
        let mut a = Plan::EMPTY;
        let mut b = Plan::EMPTY;
        let mut journal_blocks = u64::from(logged + descs + 1);
        if self.flushed {
            // The first commit after a clean mount records the tail (JBD2_FLUSHED).
            p0.push(
                IoOp::Write { offset: self.journal_offset, bytes: bs, preflush: false, fua: false },
                false,
            );
            self.flushed = false;
            self.stats.journal_sb_writes += 1;
            journal_blocks += 1;
        }
        for (start, len) in self.take_blocks(logged + descs) {
            if len > 0 {
                let op = IoOp::Write {
                    offset: self.block_offset(start),
                    bytes: u64::from(len) * bs,
                    preflush: false,
                    fua: false,
                };
                a.push(op, false);
            }
        }
        let (commit_block, _) = self.take_blocks(1)[0];
        let commit_offset = self.block_offset(commit_block);
        if self.p.journal_async_commit {
            a.push(IoOp::Write { offset: commit_offset, bytes: bs, preflush: false, fua: false }, false);
            if barrier {
                b.push(IoOp::Flush, false);
            }
        } else {
            b.push(IoOp::Write { offset: commit_offset, bytes: bs, preflush: barrier, fua: barrier }, false);
        }
        self.committing = Some(Committing {
            tid: r.tid,
            log_start,
            phases: [p0, a, b],
            phase: 0,
            run: PlanRun::new(&p0, self.caps),
            jflush_at: None,
            new_tail: None,
        });
        // The tail this commit may move (commit.c: update_tail, when at least
        // j_max_transaction_buffers blocks are freed), written after the commit block
        // (jbd2_update_log_tail -> jbd2_write_superblock with REQ_FUA).
        let (tail_tid, tail_block) = self.log_tail();
        let freed = self.distance(self.tail, tail_block);
        let new_tail =
            (tail_tid > self.tail_sequence && freed >= self.max_txn).then_some((tail_tid, tail_block, freed));
        if new_tail.is_some() {
            b.push(
                IoOp::Write { offset: self.journal_offset, bytes: bs, preflush: false, fua: barrier },
                true,
            );
            self.stats.journal_sb_writes += 1;
            journal_blocks += 1;
        }
        self.stats.journal_blocks += journal_blocks;
        if let Some(c) = self.committing.as_mut() {
            c.phases[2] = b;
            c.new_tail = new_tail;
        }
    }

    /// The commit completed at `now`: its blocks go on its checkpoint list (dirty buffers
    /// unless a running transaction holds them again), the tail moves if planned.
    fn finish_commit(&mut self, now: Nanos) {
        let Some(c) = self.committing.take() else { return };
        self.commit_sequence = c.tid;
        let mut dirtied = false;
        for m in &mut self.meta {
            if m.committing {
                m.committing = false;
                m.cp_tid = c.tid;
                dirtied |= !m.running;
            }
        }
        if dirtied && self.bdev_dirtied.is_none() {
            self.bdev_dirtied = Some(now);
        }
        if let Some((tid, block, freed)) = c.new_tail {
            self.tail = block;
            self.tail_sequence = tid;
            self.free = (self.free + freed).min(self.last - self.first);
        }
        if self.log_starts.len() == self.log_starts.capacity() {
            self.log_starts.pop_front();
        }
        self.log_starts.push_back((c.tid, c.log_start));
    }

    /// kjournald2 at `now`: advances the commit in flight, finishes it, and starts the
    /// next one when a commit was requested (`jbd2_log_start_commit`) or the running
    /// transaction's timer has fired. Call it when an fsync kicks it and at the returned
    /// time.
    pub fn commit_step(&mut self, now: Nanos, dev: &mut impl super::BlockDev) -> JournalStep {
        loop {
            if let Some(c) = self.committing.as_mut() {
                match c.run.step(now, dev) {
                    IoStep::WaitUntil(t) => {
                        if c.phase == 1 && c.jflush_at.is_none() {
                            c.jflush_at = Some(t);
                        }
                        return JournalStep { wake_at: Some(t), committed_through: self.commit_sequence };
                    }
                    IoStep::Done => {
                        if c.phase == 1 && c.jflush_at.is_none() {
                            c.jflush_at = Some(now);
                        }
                        if c.phase < 2 {
                            c.phase += 1;
                            c.run = PlanRun::new(&c.phases[c.phase], self.caps);
                            continue;
                        }
                        self.finish_commit(now);
                    }
                }
            }
            let requested = self.running.is_some_and(|r| self.commit_request >= r.tid);
            if requested || self.commit_due(now) {
                self.start_commit();
                continue;
            }
            return JournalStep {
                wake_at: self.running.map(|r| r.timer),
                committed_through: self.commit_sequence,
            };
        }
    }

    /// The last phase of the commit in flight (commit block, tail update), for
    /// inspection.
    pub fn commit_tail_plan(&self) -> Option<Plan> {
        self.committing.map(|c| c.phases[2])
    }

    /// Home writes of the dirty blocks `pick` selects, adjacent blocks merged into one
    /// request (under a plug); marks them written. Returns the last completion and the
    /// blocks written.
    fn write_home(
        &mut self,
        now: Nanos,
        dev: &mut impl super::BlockDev,
        pick: impl Fn(&Meta) -> bool,
    ) -> (Nanos, u64) {
        let bs = u64::from(self.p.block_size);
        let (mut done, mut count) = (now, 0);
        let mut run: Option<(u64, u64)> = None;
        for k in 0..self.by_offset.len() {
            let id = self.by_offset[k] as usize;
            let m = self.meta[id];
            if m.cp_tid == 0 || m.running || m.committing || !pick(&m) {
                continue;
            }
            self.meta[id].cp_tid = 0;
            count += 1;
            run = match run {
                Some((start, len)) if start.checked_add(len) == Some(m.offset) => Some((start, len + bs)),
                Some((start, len)) => {
                    done = done.max(write_range(dev, now, start, len, self.caps.max_request_bytes));
                    Some((m.offset, bs))
                }
                None => Some((m.offset, bs)),
            };
        }
        if let Some((start, len)) = run {
            done = done.max(write_range(dev, now, start, len, self.caps.max_request_bytes));
        }
        (done, count)
    }

    /// The flusher at `now`: once the block device's inode has been dirty for
    /// `dirty_expire`, writes every committed metadata block not held by a running or
    /// committing transaction home. Returns when to call again (None: nothing dirty).
    pub fn writeback_step(&mut self, now: Nanos, dev: &mut impl super::BlockDev) -> Option<Nanos> {
        let due = self.bdev_dirtied?.saturating_add(self.p.dirty_expire_ns);
        if now < due {
            return Some(due);
        }
        let (_, n) = self.write_home(now, dev, |_| true);
        self.stats.writeback_blocks += n;
        self.bdev_dirtied = None;
        None
    }

    /// When the flusher must next run (None: nothing dirty).
    pub fn writeback_due(&self) -> Option<Nanos> {
        self.bdev_dirtied.map(|d| d.saturating_add(self.p.dirty_expire_ns))
    }

    /// Space can be reclaimed: the tail can move, a committed block awaits its home
    /// write, or a commit is in flight. When none holds, a handle short of space goes on
    /// (jbd2 would abort the journal).
    fn reclaimable(&mut self) -> bool {
        let (tid, block) = self.log_tail();
        (tid > self.tail_sequence && block != self.tail)
            || self.committing.is_some()
            || self.meta.iter().any(|m| m.cp_tid != 0)
    }

    /// A forced checkpoint at `now` (`__jbd2_log_wait_for_space`), for a writer whose
    /// `note_write` said `needs_checkpoint`: step it until `Done`, then retry the write.
    pub fn checkpoint_step(&mut self, now: Nanos, dev: &mut impl super::BlockDev) -> CheckpointStep {
        loop {
            match self.checkpoint {
                Checkpoint::Writing(until) => {
                    if now < until {
                        return CheckpointStep::WaitUntil(until);
                    }
                    // jbd2_log_do_checkpoint ends with jbd2_cleanup_journal_tail.
                    self.checkpoint = Checkpoint::Idle;
                    self.start_tail_cleanup(now, dev);
                    if matches!(self.checkpoint, Checkpoint::Idle) {
                        continue;
                    }
                }
                Checkpoint::Tail(tid, block) => match self.checkpoint_run.step(now, dev) {
                    IoStep::WaitUntil(t) => return CheckpointStep::WaitUntil(t),
                    IoStep::Done => {
                        if tid > self.tail_sequence {
                            let freed = self.distance(self.tail, block);
                            self.tail = block;
                            self.tail_sequence = tid;
                            self.free = (self.free + freed).min(self.last - self.first);
                        }
                        self.checkpoint = Checkpoint::Idle;
                    }
                },
                Checkpoint::Idle => {
                    if self.space_left() >= self.max_txn {
                        return CheckpointStep::Done;
                    }
                    self.stats.checkpoints += 1;
                    // jbd2_cleanup_journal_tail first: the tail may move already.
                    self.start_tail_cleanup(now, dev);
                    if !matches!(self.checkpoint, Checkpoint::Idle) {
                        continue;
                    }
                    let oldest = self.meta.iter().filter(|m| m.cp_tid != 0).map(|m| m.cp_tid).min();
                    if let Some(tid) = oldest {
                        // jbd2_log_do_checkpoint: the oldest transaction's blocks home.
                        let (done, n) = self.write_home(now, dev, |m| m.cp_tid == tid);
                        self.stats.checkpoint_blocks += n;
                        if n > 0 {
                            self.checkpoint = Checkpoint::Writing(done);
                            continue;
                        }
                        // Every such block is in a newer transaction again: jbd2 starts
                        // that transaction's commit and waits for it.
                        if let Some(r) = self.running {
                            if self.meta.iter().any(|m| m.cp_tid == tid && m.running) {
                                self.commit_request = self.commit_request.max(r.tid);
                                return CheckpointStep::WaitCommit(r.tid);
                            }
                        }
                    }
                    if let Some(c) = self.committing {
                        return CheckpointStep::WaitCommit(c.tid);
                    }
                    // Nothing can free space: jbd2 would abort the journal; the writer
                    // goes on.
                    return CheckpointStep::Done;
                }
            }
        }
    }

    /// `jbd2_cleanup_journal_tail`: if the tail can move, flush the device and write the
    /// journal superblock (REQ_FUA); sets the checkpoint state to `Tail`.
    fn start_tail_cleanup(&mut self, now: Nanos, dev: &mut impl super::BlockDev) {
        let (tid, block) = self.log_tail();
        if tid <= self.tail_sequence || block == self.tail {
            return;
        }
        let mut plan = Plan::EMPTY;
        if self.p.barrier {
            plan.push(IoOp::Flush, false);
        }
        let sb = IoOp::Write {
            offset: self.journal_offset,
            bytes: u64::from(self.p.block_size),
            preflush: false,
            fua: self.p.barrier,
        };
        plan.push(sb, true);
        self.stats.journal_sb_writes += 1;
        self.checkpoint_run = PlanRun::new(&plan, self.caps);
        self.checkpoint_run.step(now, dev);
        self.checkpoint = Checkpoint::Tail(tid, block);
    }
}

/// Writes `len` bytes at `start` in requests of at most `max` bytes; returns the last
/// completion.
fn write_range(dev: &mut impl super::BlockDev, now: Nanos, start: u64, len: u64, max: u32) -> Nanos {
    let (mut off, mut left, mut done) = (start, len, now);
    let max = u64::from(max.max(512));
    while left > 0 {
        let n = left.min(max);
        done = done.max(dev.write(now, off, n as u32));
        off = off.saturating_add(n);
        left -= n;
    }
    done
}

#[cfg(test)]
mod tests;
