//! The OpenZFS ARC (placeholder API; the real model replaces this file's body).
//!
//! API contract used by the ZFS read path (`fs::zfs::read_path`):
//! - `Arc::new(&ArcParams)`
//! - `arc.read(key, info, flags, now) -> ArcRead`: one arc_read()/arc_buf_access() of a block
//!   as a demand (or prefetch) read. A miss inserts the header immediately (as arc_read
//!   does before issuing the zio), evicting to make room; the caller charges the device read.
//! - `arc.stats()` -> arcstats-named counters and sizes.

use crate::config::{ArcTunables, ZfsRelease};
use crate::sim::time::Nanos;

/// Identity of a block: object, level, block id packed in one u64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockKey(pub u64);

impl BlockKey {
    /// Bits of the block id.
    pub const BLKID_BITS: u32 = 36;
    /// Bits of the level.
    pub const LEVEL_BITS: u32 = 4;
    /// Packs object (< 2^24), level (< 16) and block id (< 2^36).
    pub fn new(object: u32, level: u8, blkid: u64) -> Self {
        debug_assert!(object < (1 << 24) && level < 16 && blkid < (1 << Self::BLKID_BITS));
        BlockKey(((object as u64) << 40) | ((level as u64) << Self::BLKID_BITS) | blkid)
    }
    /// Object number.
    pub fn object(self) -> u32 {
        (self.0 >> 40) as u32
    }
    /// Indirection level (0 = data record).
    pub fn level(self) -> u8 {
        ((self.0 >> Self::BLKID_BITS) & 0xf) as u8
    }
    /// Block id within the level.
    pub fn blkid(self) -> u64 {
        self.0 & ((1 << Self::BLKID_BITS) - 1)
    }
}

/// Data or metadata, as arc_buf_contents_t (ARC_BUFC_DATA / ARC_BUFC_METADATA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufType {
    /// ZPL file and zvol records.
    Data,
    /// Indirect blocks, dnodes, ZAP, ... (dbuf_is_metadata).
    Metadata,
}

/// Sizes and type of a block, as its block pointer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Logical (uncompressed) size, bytes.
    pub lsize: u32,
    /// Physical size after compression and rounding to the sector, bytes (= lsize if stored uncompressed).
    pub psize: u32,
    /// Data or metadata.
    pub kind: BufType,
}

/// How the block is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadFlags {
    /// ARC_FLAG_PREFETCH: a speculative read.
    pub prefetch: bool,
    /// false when primarycache excludes this block (it is read but not kept).
    pub uncacheable: bool,
}

/// Outcome of one ARC read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcRead {
    /// Served from memory.
    Hit,
    /// Must be read from the pool; `ghost` tells whether the header was on a ghost list.
    Miss {
        /// The block was in MRU-ghost or MFU-ghost.
        ghost: bool,
    },
}

/// Parameters of the ARC: the release, the machine's RAM and the tunables.
#[derive(Debug, Clone)]
pub struct ArcParams {
    /// Release whose behaviour is modelled.
    pub release: ZfsRelease,
    /// Physical memory, bytes (defaults of c_max and c_min derive from it).
    pub ram_bytes: u64,
    /// Module parameters.
    pub tunables: ArcTunables,
}

/// arcstats counters and sizes, named as in /proc/spl/kstat/zfs/arcstats.
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)]
pub struct ArcStats {
    pub hits: u64,
    pub misses: u64,
    pub demand_data_hits: u64,
    pub demand_data_misses: u64,
    pub demand_metadata_hits: u64,
    pub demand_metadata_misses: u64,
    pub prefetch_data_hits: u64,
    pub prefetch_data_misses: u64,
    pub prefetch_metadata_hits: u64,
    pub prefetch_metadata_misses: u64,
    pub mru_hits: u64,
    pub mfu_hits: u64,
    pub mru_ghost_hits: u64,
    pub mfu_ghost_hits: u64,
    pub deleted: u64,
    pub evict_skip: u64,
    pub size: u64,
    pub c: u64,
    pub c_min: u64,
    pub c_max: u64,
    pub data_size: u64,
    pub metadata_size: u64,
    pub hdr_size: u64,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
    pub mru_size: u64,
    pub mfu_size: u64,
    pub mru_ghost_size: u64,
    pub mfu_ghost_size: u64,
}
