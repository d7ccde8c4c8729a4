//! The ARC's vocabulary: a block's identity and what its block pointer says, how it is
//! read, what a read returns, and what the ARC is built from.
//!
//! Sources: `include/sys/arc.h` (`arc_buf_contents_t`, `arc_flags_t`: ARC_FLAG_PREFETCH)
//! and the block pointer's sizes (`include/sys/spa.h`, BP_GET_LSIZE / BP_GET_PSIZE). One
//! departure: OpenZFS keys a header by (spa, DVA, birth txg); the model by the block's
//! place in one dataset ([`BlockKey`]: object, level, block id), so a rewritten block's
//! new version takes the old one's key ([`super::Arc::write_done`] destroys the old
//! header first). Headers, their states and flags are the slab's (`slab.rs`); what a
//! release does is [`crate::config::ArcFeatures`], resolved once from
//! [`ArcParams::release`].

use crate::config::{ArcFeatures, ArcTunables, ZfsRelease};

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

/// Outcome of one ARC read with a possible L2ARC ([`super::Arc::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcAccess {
    /// Served from memory.
    Hit,
    /// Absent from memory (an ARC miss in arcstats) but valid on a cache device: the
    /// caller reads `asize` bytes from cache device `dev` (`psize` of them are the block);
    /// the block is then in the ARC as after any miss.
    L2Hit {
        /// HDR_GET_PSIZE: the block's physical size (`l2_read_bytes` counts this).
        psize: u32,
        /// Bytes read from the cache device: arc_hdr_size rounded up to its sector.
        asize: u32,
        /// The cache device holding the copy (`b_l2hdr.b_dev`): its number in the pool's
        /// list of cache devices (`filesystem.cache`).
        dev: u8,
        /// Where the copy is (its packed ring location): [`crate::cache::arc::Arc::l2_daddr`]
        /// gives its address on the device (`b_l2hdr.b_daddr`), the read's offset in the
        /// device's vdev queue.
        loc: u32,
    },
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

impl ArcParams {
    /// The release's ARC features (release-level: the same at every point release).
    pub fn features(&self) -> ArcFeatures {
        self.release.features().arc
    }
}
