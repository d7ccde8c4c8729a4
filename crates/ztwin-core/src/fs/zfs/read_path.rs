//! The ZFS read path of a record: from the dnode down the block-pointer tree.
//!
//! Source: dmu_buf_hold_array_by_dnode -> dbuf_hold_impl -> dbuf_findbp (module/zfs/dbuf.c):
//! to read an L0 record the DMU holds the record's parent indirect block, whose parent
//! must be held first, up to the dnode's block pointer. Each held level is read through
//! the ARC (arc_read, or arc_buf_access when the dbuf is already cached, which also counts
//! as an ARC hit). A level that is not in the ARC is one device read, and the level below
//! cannot be located until it arrives: the reads are dependent.
//!
//! This module answers the static questions of that walk (which block, what sizes,
//! which vdev) without allocation; the driver (`crate::run`) performs the walk on the
//! simulated clock, one ARC lookup per level.
//!
//! Simplifications: 1. the file's dnode is held while the file is open (the znode holds
//! it), so the walk starts at the top indirect block; dnode blocks are not read per
//! access; 2. a block's vdev in a striped pool is chosen by hashing its identity (the
//! metaslab allocator spreads writes evenly; we keep the spread, not the allocator);
//! 3. with redundant_metadata=all metadata has two copies but is read from one.

use crate::cache::arc::{BlockInfo, BlockKey, BufType};
use crate::fs::zfs::compression::CompressionModel;
use crate::fs::zfs::geometry::FileGeometry;
use crate::fs::zfs::zfetch::FileShape;

/// Static geometry and sizes of one dataset's files (all the same size).
#[derive(Debug)]
pub struct ZfsLayout {
    /// Tree shape of every file.
    pub geometry: FileGeometry,
    /// Per-block compressed sizes.
    pub compression: CompressionModel,
    /// Indirect block size, bytes.
    pub indirect_block_size: u32,
    /// Number of top-level vdevs the pool stripes across.
    pub nvdevs: u32,
}

impl ZfsLayout {
    /// Levels of a file's tree (1 = the dnode points at the only record).
    pub fn nlevels(&self) -> u8 {
        self.geometry.nlevels()
    }

    /// L0 records covering the byte range `[offset, offset + len)`: first and last blkid.
    pub fn records(&self, offset: u64, len: u32) -> (u64, u64) {
        let first = self.geometry.blkid_of(offset);
        let last = self.geometry.blkid_of(offset + len.max(1) as u64 - 1);
        (first, last)
    }

    /// The block at `level` on the path to record `l0_blkid` of `object`, with its sizes.
    pub fn block(&self, object: u32, l0_blkid: u64, level: u8) -> (BlockKey, BlockInfo) {
        self.block_at(object, level, self.geometry.ancestor(l0_blkid, level))
    }

    /// Block `blkid` of `level` of `object`, with its sizes.
    pub fn block_at(&self, object: u32, level: u8, blkid: u64) -> (BlockKey, BlockInfo) {
        if level == 0 {
            let lsize = self.geometry.data_block_size();
            let psize = self.compression.data_psize(object, blkid, lsize);
            (BlockKey::new(object, 0, blkid), BlockInfo { lsize, psize, kind: BufType::Data })
        } else {
            let lsize = self.indirect_block_size;
            let psize = self.compression.metadata_psize(object, level, blkid, lsize);
            (BlockKey::new(object, level, blkid), BlockInfo { lsize, psize, kind: BufType::Metadata })
        }
    }

    /// What zfetch needs of every file's dnode.
    pub fn zfetch_shape(&self) -> FileShape {
        let g = &self.geometry;
        let dbs = g.data_block_size();
        FileShape {
            maxblkid: g.l0_blocks().saturating_sub(1),
            datablkshift: if dbs.is_power_of_two() && g.l0_blocks() > 1 {
                dbs.trailing_zeros() as u8
            } else {
                0
            },
            indblkshift: g.indirect_block_size().trailing_zeros() as u8,
        }
    }

    /// The block whose pointer points at `key`: the same object one level up, None at the
    /// top level (the dnode holds that pointer).
    pub fn parent_of(&self, key: BlockKey) -> Option<BlockKey> {
        let level = key.level();
        (level + 1 < self.nlevels()).then(|| {
            let shift = self.geometry.fanout().trailing_zeros();
            BlockKey::new(key.object(), level + 1, key.blkid() >> shift)
        })
    }

    /// The top-level vdev holding `key` (hash of the block identity).
    pub fn vdev_of(&self, key: BlockKey) -> usize {
        // SplitMix64 finalizer: cheap, well mixed, stable across platforms.
        let mut z = key.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % self.nvdevs as u64) as usize
    }
}
