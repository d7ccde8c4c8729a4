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
//! which vdev) without allocation; the ZFS layer ([`super::layer`]) performs the walk on
//! the simulated clock, one ARC lookup per level.
//!
//! Simplifications: 1. the file's dnode is held while the file is open (the znode holds
//! it), so the walk starts at the top indirect block; dnode blocks are not read per
//! access; 2. where a block lives and which device serves its read is the pool's business
//! ([`super::pool`]: the metaslab rotor, mirrors, the two copies of metadata);
//! [`ZfsLayout::vdev_of`], a hash of the block's identity, is the older stand-in kept for
//! callers that only need an even spread.

use crate::cache::arc::{BlockInfo, BlockKey, BufType};
use crate::error::Result;
use crate::fs::zfs::compression::{CompressionModel, StoredBlock};
use crate::fs::zfs::content::{FileBlocks, RecordClass};
use crate::fs::zfs::geometry::FileGeometry;
use crate::fs::zfs::zfetch::FileShape;

/// Geometry and sizes of one dataset's files.
#[derive(Debug, Clone)]
pub struct ZfsLayout {
    /// Every file's tree and contents; object `o` is `files[o - 1]`.
    pub files: Vec<FileBlocks>,
    /// Per-block compressed sizes.
    pub compression: CompressionModel,
    /// Indirect block size, bytes.
    pub indirect_block_size: u32,
    /// Number of top-level vdevs the pool stripes across.
    pub nvdevs: u32,
    /// How each record class is stored (indices in [`FileBlocks`]); 0 is
    /// [`RecordClass::MeanRatio`], 1 a hole.
    classes: Vec<RecordClass>,
}

impl ZfsLayout {
    /// A layout of `files`, with the class table holding mean-ratio records
    /// (`content::CLASS_MEAN_RATIO`) and holes (`content::CLASS_HOLE`).
    pub fn new(
        files: Vec<FileBlocks>,
        compression: CompressionModel,
        indirect_block_size: u32,
        nvdevs: u32,
    ) -> Self {
        ZfsLayout {
            files,
            compression,
            indirect_block_size,
            nvdevs,
            classes: vec![RecordClass::MeanRatio, RecordClass::Stored(StoredBlock::Hole)],
        }
    }

    #[inline]
    fn file(&self, object: u32) -> &FileBlocks {
        &self.files[object as usize - 1]
    }

    /// The class of records stored as `sample` (bytes of one record of `object`),
    /// added to the table if new. Errors if the dataset's compression is not modelled on
    /// such bytes.
    pub fn class_for_sample(&mut self, sample: &[u8]) -> Result<u8> {
        let stored = RecordClass::Stored(self.compression.stored_sample(sample)?);
        if let Some(i) = self.classes.iter().position(|c| *c == stored) {
            return Ok(i as u8);
        }
        if self.classes.len() >= usize::from(u8::MAX) {
            return Err(crate::error::Error::Simulation {
                component: "fs.zfs.content".into(),
                time_ns: 0,
                message: "more than 255 kinds of record contents".into(),
            });
        }
        self.classes.push(stored);
        Ok((self.classes.len() - 1) as u8)
    }

    /// Records `first..=last` of `object` now hold class `class`.
    pub fn set_records(&mut self, object: u32, first: u64, last: u64, class: u8) {
        let classes = &self.classes;
        self.files[object as usize - 1]
            .set_records(first, last, class, |c| classes[usize::from(c)].is_hole());
    }

    /// Record `l0` of `object` now holds class `class` (O(levels); see `FileBlocks::set_one`).
    pub fn set_record(&mut self, object: u32, l0: u64, class: u8) {
        let classes = &self.classes;
        self.files[object as usize - 1].set_one(l0, class, |c| classes[usize::from(c)].is_hole());
    }

    /// The class of every record of `object`, when they share one (`CLASS_HOLE`: a file
    /// never written).
    pub fn uniform_class(&self, object: u32) -> Option<u8> {
        self.file(object).uniform_class()
    }

    /// How a record of class `class` is stored (None for mean-ratio records, whose size
    /// varies by block).
    pub fn stored(&self, class: u8) -> Option<StoredBlock> {
        match self.classes[usize::from(class)] {
            RecordClass::MeanRatio => None,
            RecordClass::Stored(s) => Some(s),
        }
    }

    /// Levels of a file's tree (1 = the dnode points at the only record).
    #[inline]
    pub fn nlevels(&self, object: u32) -> u8 {
        self.file(object).geometry.nlevels()
    }

    /// L0 records of `object` covering the byte range `[offset, offset + len)`: first and
    /// last blkid.
    pub fn records(&self, object: u32, offset: u64, len: u32) -> (u64, u64) {
        let g = &self.file(object).geometry;
        let first = g.blkid_of(offset);
        let last = g.blkid_of(offset + len.max(1) as u64 - 1);
        (first, last)
    }

    /// The block at `level` on the path to record `l0_blkid` of `object`, with its sizes.
    pub fn block(&self, object: u32, l0_blkid: u64, level: u8) -> (BlockKey, BlockInfo) {
        self.block_at(object, level, self.file(object).geometry.ancestor(l0_blkid, level))
    }

    /// The key of `level`'s block over record `l0_blkid` of `object` (no sizes computed).
    #[inline]
    pub fn key(&self, object: u32, l0_blkid: u64, level: u8) -> BlockKey {
        BlockKey::new(object, level, self.file(object).geometry.ancestor(l0_blkid, level))
    }

    /// Block `blkid` of `level` of `object`, with its sizes.
    pub fn block_at(&self, object: u32, level: u8, blkid: u64) -> (BlockKey, BlockInfo) {
        if level == 0 {
            let lsize = self.file(object).geometry.data_block_size();
            let psize = self.psize_at(object, 0, blkid);
            (BlockKey::new(object, 0, blkid), BlockInfo { lsize, psize, kind: BufType::Data })
        } else {
            let lsize = self.indirect_block_size;
            let psize = self.psize_at(object, level, blkid);
            (BlockKey::new(object, level, blkid), BlockInfo { lsize, psize, kind: BufType::Metadata })
        }
    }

    /// Physical size of block `blkid` at `level` of `object` (0: a hole or embedded, nothing
    /// allocated): data by the record's class, indirect blocks by their used pointers
    /// (holes over holes, see `super::content`).
    pub fn psize_at(&self, object: u32, level: u8, blkid: u64) -> u32 {
        let f = self.file(object);
        if level == 0 {
            match self.classes[usize::from(f.class_of(blkid))] {
                RecordClass::MeanRatio => {
                    self.compression.data_psize(object, blkid, f.geometry.data_block_size())
                }
                RecordClass::Stored(s) => s.psize(),
            }
        } else {
            let lsize = self.indirect_block_size;
            match (f.used_children(level, blkid), f.uniform_class()) {
                (Some(used), _) => self.compression.indirect_psize(lsize, used),
                (None, Some(c)) if self.classes[usize::from(c)].is_hole() => 0,
                _ => self.compression.metadata_psize(object, level, blkid, lsize),
            }
        }
    }

    /// The tree of `object`.
    pub fn geometry(&self, object: u32) -> &FileGeometry {
        &self.file(object).geometry
    }

    /// Number of files (objects 1..=n).
    pub fn nfiles(&self) -> u32 {
        self.files.len() as u32
    }

    /// What zfetch needs of `object`'s dnode.
    pub fn zfetch_shape(&self, object: u32) -> FileShape {
        let g = self.geometry(object);
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
        let g = &self.file(key.object()).geometry;
        (level + 1 < g.nlevels()).then(|| {
            let shift = g.fanout().trailing_zeros();
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

    /// What `object`'s blocks take, as `zdb` would add it up: (physical bytes of data
    /// blocks, physical bytes of indirect blocks, logical bytes of data blocks that are
    /// not holes). `zfs get compressratio` divides the last by the first (holes count
    /// nowhere, embedded blocks count their lsize and no psize; `dsl_get_refratio`).
    pub fn file_usage(&self, object: u32) -> (u64, u64, u64) {
        let g = &self.file(object).geometry;
        let (mut data, mut meta, mut logical) = (0u64, 0u64, 0u64);
        for b in 0..g.l0_blocks() {
            let class = self.file(object).class_of(b);
            if self.classes[usize::from(class)].is_hole() {
                continue;
            }
            let info = self.block(object, b, 0).1;
            data += u64::from(info.psize);
            logical += u64::from(info.lsize);
        }
        let fanout_shift = g.fanout().trailing_zeros();
        for level in 1..g.nlevels() {
            for blkid in 0..g.blocks_at(level) {
                let l0 = blkid << (fanout_shift * u32::from(level));
                meta += u64::from(self.block(object, l0, level).1.psize);
            }
        }
        (data, meta, logical)
    }
}
