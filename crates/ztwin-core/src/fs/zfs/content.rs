//! What each record of a ZFS file holds, as far as its storage depends on it: a class per
//! record (`RecordClass`), and for files whose records differ, which indirect blocks are
//! holes.
//!
//! A record's class says how `zio_write_compress` stored it (see `super::compression`):
//! database pages that compress by the dataset's mean ratio, or a fixed outcome learnt
//! from a sample of the bytes a writer (fio) put there: a hole (all zeros with
//! compression on), embedded, compressed to a psize, or uncompressed.
//!
//! Indirect blocks whose children are all holes are holes too. Source:
//! `module/zfs/dbuf.c` `dbuf_write_children_ready` (OpenZFS 6513, bc77ba73fe, since
//! zfs-0.7.0; the same in 0.8.6 and 2.2.7): before an indirect block goes through the
//! compression stage, if every block pointer in it is a hole the block is zeroed "so that
//! we may get compressed away", and `zio_write_compress` turns an all-zero block into a
//! hole (indirect blocks are always compressed, `dmu_write_policy`). Up to the dnode: a
//! file of holes has a hole as its top block pointer, and reading it touches no block.
//! An indirect block with some holes stores only its used pointers' worth
//! ([`super::compression::CompressionModel::indirect_psize`]); hole pointers carry a birth
//! time with the hole_birth feature, taken here to compress to nothing like zero ones.

use crate::fs::zfs::compression::StoredBlock;
use crate::fs::zfs::geometry::FileGeometry;

/// How the records of a class are stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecordClass {
    /// Database pages: each block's compressed size drawn around the dataset's mean
    /// ratio (`CompressionModel::data_block`).
    MeanRatio,
    /// Every record of the class is stored alike.
    Stored(StoredBlock),
}

impl RecordClass {
    /// True for a hole (no block allocated, `BP_IS_HOLE`).
    pub fn is_hole(&self) -> bool {
        matches!(self, RecordClass::Stored(StoredBlock::Hole))
    }
}

/// Class index of [`RecordClass::MeanRatio`] in a layout's class table.
pub const CLASS_MEAN_RATIO: u8 = 0;
/// Class index of a hole in a layout's class table.
pub const CLASS_HOLE: u8 = 1;

#[derive(Debug, Clone)]
enum Content {
    /// Every record of the file is of one class.
    Uniform(u8),
    /// Per record; `used[l - 1][b]` counts the non-hole children of indirect block `b`
    /// at level `l`.
    PerRecord { class: Vec<u8>, used: Vec<Vec<u32>> },
}

/// One file's tree shape and record contents.
#[derive(Debug, Clone)]
pub struct FileBlocks {
    /// Tree shape.
    pub geometry: FileGeometry,
    content: Content,
}

impl FileBlocks {
    /// A file whose records are all of class `class`.
    pub fn uniform(geometry: FileGeometry, class: u8) -> FileBlocks {
        FileBlocks { geometry, content: Content::Uniform(class) }
    }

    /// Class of record `l0`.
    #[inline]
    pub fn class_of(&self, l0: u64) -> u8 {
        match &self.content {
            Content::Uniform(c) => *c,
            Content::PerRecord { class, .. } => class.get(l0 as usize).copied().unwrap_or(CLASS_HOLE),
        }
    }

    /// The uniform class, if the file has one.
    pub fn uniform_class(&self) -> Option<u8> {
        match &self.content {
            Content::Uniform(c) => Some(*c),
            Content::PerRecord { .. } => None,
        }
    }

    /// Non-hole children of indirect block `blkid` at `level` (>= 1), for files whose
    /// records differ; None for a uniform file.
    #[inline]
    pub fn used_children(&self, level: u8, blkid: u64) -> Option<u32> {
        match &self.content {
            Content::Uniform(_) => None,
            Content::PerRecord { used, .. } => Some(
                used.get(usize::from(level) - 1).and_then(|v| v.get(blkid as usize)).copied().unwrap_or(0),
            ),
        }
    }

    /// Records `first..=last` now hold class `class`; `is_hole` says which classes are
    /// holes (to count each indirect block's used pointers again).
    pub fn set_records(&mut self, first: u64, last: u64, class: u8, is_hole: impl Fn(u8) -> bool) {
        let n = self.geometry.l0_blocks();
        if n == 0 || first > last {
            return;
        }
        let last = last.min(n - 1);
        if first == 0 && last == n - 1 {
            self.content = Content::Uniform(class);
            return;
        }
        let mut per = match std::mem::replace(&mut self.content, Content::Uniform(class)) {
            Content::Uniform(c) => vec![c; n as usize],
            Content::PerRecord { class, .. } => class,
        };
        per[first as usize..=last as usize].fill(class);
        if per.iter().all(|&c| c == class) {
            self.content = Content::Uniform(class);
            return;
        }
        let used = self.count_used(&per, &is_hole);
        self.content = Content::PerRecord { class: per, used };
    }

    /// Record `l0` now holds class `class` (one record of a write): the used-pointer
    /// counts of its ancestors change only where it turns from or into a hole, so this is
    /// O(levels) once the file is per record (the first call on a uniform file is O(n)).
    pub fn set_one(&mut self, l0: u64, class: u8, is_hole: impl Fn(u8) -> bool) {
        let n = self.geometry.l0_blocks();
        if l0 >= n || self.class_of(l0) == class {
            return;
        }
        if let Content::Uniform(c) = self.content {
            let per = vec![c; n as usize];
            let used = self.count_used(&per, &is_hole);
            self.content = Content::PerRecord { class: per, used };
        }
        let shift = self.geometry.fanout().trailing_zeros();
        // Invariant: a uniform file was made per-record just above.
        let Content::PerRecord { class: per, used } = &mut self.content else { unreachable!() };
        let was_hole = is_hole(per[l0 as usize]);
        per[l0 as usize] = class;
        let now_hole = is_hole(class);
        if was_hole == now_hole {
            return;
        }
        // Walk up while a block's hole-ness changes.
        let mut child = l0;
        for counts in used.iter_mut() {
            let b = (child >> shift) as usize;
            let before = counts[b];
            if now_hole {
                counts[b] -= 1;
            } else {
                counts[b] += 1;
            }
            if (before == 0) == (counts[b] == 0) {
                break;
            }
            child = b as u64;
        }
    }

    fn count_used(&self, per: &[u8], is_hole: &impl Fn(u8) -> bool) -> Vec<Vec<u32>> {
        let g = &self.geometry;
        let shift = g.fanout().trailing_zeros();
        let mut used: Vec<Vec<u32>> = Vec::new();
        // Non-hole flags of the level below, starting with the records.
        let mut below: Vec<bool> = per.iter().map(|&c| !is_hole(c)).collect();
        for level in 1..g.nlevels() {
            let mut counts = vec![0u32; g.blocks_at(level) as usize];
            for (b, &nonhole) in below.iter().enumerate() {
                if nonhole {
                    counts[b >> shift] += 1;
                }
            }
            below = counts.iter().map(|&c| c > 0).collect();
            used.push(counts);
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOLE: u8 = CLASS_HOLE;
    const DATA: u8 = 2;

    fn file(records: u64) -> FileBlocks {
        // 16K records under 16K indirect blocks: fanout 128.
        FileBlocks::uniform(FileGeometry::new(records * 16384, 16384, 16384), HOLE)
    }

    #[test]
    fn indirect_blocks_over_holes_are_holes() {
        // 128 * 128 * 2 records: 4 levels (L0, L1 x 256, L2 x 2, L3 x 1).
        let mut f = file(128 * 128 * 2);
        assert_eq!(f.geometry.nlevels(), 4);
        let is_hole = |c: u8| c == HOLE;
        // Data only in the first 10 records.
        f.set_records(0, 9, DATA, is_hole);
        assert_eq!(f.class_of(5), DATA);
        assert_eq!(f.class_of(10), HOLE);
        assert_eq!(f.used_children(1, 0), Some(10));
        assert_eq!(f.used_children(1, 1), Some(0), "an L1 over holes only");
        assert_eq!(f.used_children(2, 0), Some(1));
        assert_eq!(f.used_children(2, 1), Some(0), "an L2 over hole L1s only");
        assert_eq!(f.used_children(3, 0), Some(1));
        // Writing the rest makes the file uniform again.
        f.set_records(10, 128 * 128 * 2 - 1, DATA, is_hole);
        assert_eq!(f.uniform_class(), Some(DATA));
        assert_eq!(f.used_children(1, 0), None);
    }

    #[test]
    fn set_one_matches_set_records() {
        let is_hole = |c: u8| c == HOLE;
        let n = 128 * 128 * 2;
        let (mut a, mut b) = (file(n), file(n));
        for &r in &[0u64, 5, 127, 128, 20000, 32767, 5, 128] {
            a.set_one(r, DATA, is_hole);
            b.set_records(r, r, DATA, is_hole);
        }
        a.set_one(5, HOLE, is_hole);
        b.set_records(5, 5, HOLE, is_hole);
        a.set_one(128, HOLE, is_hole);
        b.set_records(128, 128, HOLE, is_hole);
        for level in 1..4u8 {
            for blk in 0..f_blocks(&a, level) {
                assert_eq!(a.used_children(level, blk), b.used_children(level, blk), "L{level} {blk}");
            }
        }
        for r in [0, 5, 127, 128, 129, 20000] {
            assert_eq!(a.class_of(r), b.class_of(r));
        }
    }

    fn f_blocks(f: &FileBlocks, level: u8) -> u64 {
        f.geometry.blocks_at(level)
    }
}
