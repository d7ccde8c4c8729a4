//! Compression of ZFS blocks: the physical size (psize) each block gets on disk, in the
//! ARC (compressed ARC) and in the L2ARC, from its logical size (lsize).
//!
//! How OpenZFS decides a block's psize when it is written (`zio_write_compress`), the same
//! in every release we model (read at zfs-0.6.5.11, zfs-0.8.6, zfs-2.1.0, zfs-2.2.0,
//! zfs-2.2.11; the code moved, the rule did not):
//! 1. Only when the block's compression is not off. With compression=off nothing below
//!    happens, not even the zero check: psize = lsize.
//! 2. `zio_compress_data` (`module/zfs/zio_compress.c`): an all-zero block returns 0 and is
//!    written as a hole (no allocation). Otherwise the compressor gets a destination of
//!    `d_len = s_len - (s_len >> 3)` bytes; if the output does not fit (it must save at
//!    least one eighth, checked on the raw compressed length, before any rounding) the
//!    block is stored uncompressed.
//! 3. A level-0 block whose compressed length is at most `BPE_PAYLOAD_SIZE` (112 bytes) is
//!    embedded in its block pointer (feature embedded_data; not for dedup, encryption or
//!    object types with fill counts): no allocation, no device read, `BP_GET_PSIZE` = 0.
//! 4. Otherwise the compressed length is rounded up to the pool's smallest allocation
//!    (`P2ROUNDUP(psize, 1 << spa_min_ashift)` in 0.6-0.8, `roundup(psize, spa_min_alloc)`
//!    in 2.1, `zio_roundup_alloc_size` in 2.2: the sector size 2^ashift on a pool of plain
//!    disks or mirrors); if the rounded size is >= lsize the block is stored uncompressed.
//!    So at ashift 12 a 16K record that lz4 shrinks to ~12.8K (ratio 1.28) passes the 1/8
//!    test (<= 14K) but rounds to 16K and is stored uncompressed; at ashift 9 it rounds to
//!    a multiple of 512 and keeps most of its saving.
//!
//! Indirect blocks (`module/zfs/dmu.c` `dmu_write_policy`, all releases): every block with
//! level > 0 is metadata and is compressed with `zio_compress_select(spa, ZIO_COMPRESS_ON,
//! ZIO_COMPRESS_ON)`, i.e. lz4 when the pool has the lz4_compress feature (lzjb before),
//! whatever the dataset's compression property (0.6.x could turn it off with
//! `zfs_mdcomp_disable`, default 0). The same 1/8 and rounding rules apply; metadata is
//! never embedded.
//!
//! Data model: the user gives the dataset's mean compression ratio (logical bytes over
//! compressed bytes, as the algorithm achieves on that data before ZFS's 1/8 rule and
//! sector rounding). Each block's compressed fraction `c_len / lsize` is log-normal:
//! `f = exp(mu + sigma * z)` with `z` standard normal, `sigma` = [`DEFAULT_RATIO_SPREAD`]
//! unless set, and `mu = -ln(ratio) - sigma^2 / 2` so that `E[f] = 1 / ratio`: the mean
//! compressed bytes equal lsize / ratio. `z` comes from a hash of (seed, object, blkid)
//! (splitmix64, Box-Muller): deterministic, O(1), no state, no allocation.
//!
//! Simplifications:
//! 1. One ratio distribution per dataset; the algorithm only matters as off / on (the
//!    ratio the user gives is the algorithm's on this data). Compression CPU cost is not
//!    modelled here.
//! 2. The spread is narrow and unimodal (sigma 0.02 by default: database pages of one
//!    table compress alike). Data mixing incompressible and very compressible blocks is
//!    not represented beyond its mean. A ratio of exactly 1 means incompressible: no
//!    block compresses. An infinite ratio means all-zero data: every block is a hole.
//! 3. Indirect blocks compress by one constant ratio per used block pointer
//!    ([`INDIRECT_LZ4_PSIZE_PER_BLKPTR`], from one zdb sample); zeroed (unused) block
//!    pointers are taken to compress to nothing.
//! 4. One vdev class: the allocation unit is 2^ashift (no raidz, no mixed ashift).
//!    Embedding assumes the embedded_data feature is active (default since 0.6.4) and no
//!    dedup or encryption.
//! 5. Blocks are considered at their first write; the sync passes that stop compressing
//!    after `zfs_sync_pass_dont_compress` are ignored.

use crate::config::Compression;
use crate::error::{Error, Result};

use super::geometry::SPA_BLKPTRSHIFT;

/// Largest compressed payload embedded in a block pointer: `BPE_PAYLOAD_SIZE`
/// (`include/sys/spa.h`, 14 words of 8 bytes).
pub const BPE_PAYLOAD_SIZE: u32 = 112;

/// Smallest pool sector exponent, `ASHIFT_MIN` (`include/sys/spa.h`).
pub const ASHIFT_MIN: u8 = 9;
/// Largest pool sector exponent, `ASHIFT_MAX` (`include/sys/spa.h`, 0.8 and 2.x).
pub const ASHIFT_MAX: u8 = 16;

/// Compressed bytes per used 128-byte block pointer in an lz4-compressed indirect block.
///
/// Source: the 2018 experiment's zdb output (OPENZFS-FACTS.md section 7):
/// `0 L1 0:1eaa626400:1600 4000L/1600P F=128`, a full 16 KiB L1 (128 pointers) stored as
/// 0x1600 = 5632 bytes on an ashift-9 pool, a ratio of 16384 / 5632 = 2.91. 5632 / 128 = 44
/// bytes per pointer (11/32 of its 128 bytes). The true compressed length lies in
/// (5120, 5632]; taking the rounded value reproduces the sample exactly at ashift 9.
pub const INDIRECT_LZ4_PSIZE_PER_BLKPTR: u32 = 44;

/// Default log-normal sigma of the per-block compressed fraction (an assumption: no
/// published per-block spread; see simplification 2).
pub const DEFAULT_RATIO_SPREAD: f64 = 0.02;

/// How a block is stored, as `zio_write_compress` decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredBlock {
    /// All zeros with compression on: a hole, nothing allocated or read.
    Hole,
    /// Compressed to at most [`BPE_PAYLOAD_SIZE`] bytes and kept in the block pointer.
    Embedded {
        /// Logical size.
        lsize: u32,
    },
    /// Stored as is (compression off, or it did not save enough after rounding).
    Uncompressed {
        /// Logical (= physical) size.
        lsize: u32,
    },
    /// Stored compressed.
    Compressed {
        /// Logical size.
        lsize: u32,
        /// Physical size: the compressed length rounded up to the sector size, < lsize.
        psize: u32,
    },
}

impl StoredBlock {
    /// Physical size as the block pointer records it (`BP_GET_PSIZE`): 0 for holes and
    /// embedded blocks (nothing to read from a device), lsize when uncompressed.
    pub fn psize(&self) -> u32 {
        match *self {
            StoredBlock::Hole | StoredBlock::Embedded { .. } => 0,
            StoredBlock::Uncompressed { lsize } => lsize,
            StoredBlock::Compressed { psize, .. } => psize,
        }
    }

    /// Logical size; 0 for a hole.
    pub fn lsize(&self) -> u32 {
        match *self {
            StoredBlock::Hole => 0,
            StoredBlock::Embedded { lsize }
            | StoredBlock::Uncompressed { lsize }
            | StoredBlock::Compressed { lsize, .. } => lsize,
        }
    }
}

/// The outcome of writing a block of `lsize` bytes whose compressor output is `c_len`
/// bytes (0 = all zeros), with compression on, on a pool with sectors of 2^`ashift`:
/// the 1/8 rule on `c_len`, embedding for level-0 blocks (`embeddable`), then rounding to
/// the sector, falling back to uncompressed when rounding eats the saving.
pub fn zio_stored_block(c_len: u64, lsize: u32, ashift: u8, embeddable: bool) -> StoredBlock {
    if c_len == 0 {
        return StoredBlock::Hole;
    }
    let d_len = u64::from(lsize - (lsize >> 3));
    if c_len > d_len {
        return StoredBlock::Uncompressed { lsize };
    }
    if embeddable && c_len <= u64::from(BPE_PAYLOAD_SIZE) {
        return StoredBlock::Embedded { lsize };
    }
    let sector = 1u64 << ashift;
    let rounded = c_len.div_ceil(sector) * sector;
    if rounded >= u64::from(lsize) {
        StoredBlock::Uncompressed { lsize }
    } else {
        StoredBlock::Compressed { lsize, psize: rounded as u32 }
    }
}

/// Per-block physical sizes of one dataset's data and indirect blocks.
#[derive(Debug, Clone)]
pub struct CompressionModel {
    algorithm: Compression,
    data_ratio: f64,
    ashift: u8,
    seed: u64,
    sigma: f64,
    /// mu of the log-normal compressed fraction: -ln(ratio) - sigma^2/2.
    mu: f64,
    /// The stored form of a record of the dataset's record size in every stratum
    /// ([`CompressionModel::for_record_size`]): a block's size is then one lookup (no
    /// `exp`), and it is looked up on every access.
    sizes: Option<std::sync::Arc<StrataSizes>>,
    /// Stored sizes learnt from the records' content ([`ContentSizes`]); when set, data
    /// records of its logical size take their sizes from it, not from the mean ratio.
    content: Option<std::sync::Arc<ContentSizes>>,
}

/// How the records of a file are stored, learnt from their content: every record of the
/// file (all files of the dataset alike) has a class ([`ContentSizes::class`]: what kind
/// of content it holds, e.g. which InnoDB pages), and each class a set of sampled records
/// compressed by the dataset's real compressor ([`CompressionModel::stored_sample`]). A
/// record's stored size is one of its class's samples, chosen by a hash of (seed,
/// object, blkid): the distribution is the content's, without compressing every record.
#[derive(Debug, Clone)]
pub struct ContentSizes {
    /// Logical size of the records (the dataset's record size).
    pub lsize: u32,
    /// Records per unit: 1, or the records of one database page when records are
    /// smaller than pages (record `r` is part `r % parts` of unit `r / parts`, and its class
    /// is its unit's class times `parts` plus its part).
    parts: u64,
    /// The classes of a file's units as runs: run `j` starts at unit `run_start[j]` and
    /// has class `run_class[j]` (a few hundred runs stay in the CPU caches, where a byte
    /// per record would not).
    run_start: Vec<u64>,
    run_class: Vec<u8>,
    /// Records per file; records past it are holes.
    records: u64,
    /// Per bucket of [`CONTENT_BUCKET`] units, its class if the whole bucket has one, else
    /// [`MIXED_BUCKET`] (then the runs answer): one load from a table of a few KiB for
    /// nearly every record.
    bucket: Vec<u8>,
    /// Per class, the stored form of each sample.
    pub samples: Vec<Vec<StoredBlock>>,
}

/// Units per bucket of [`ContentSizes`]'s uniform-class table.
const CONTENT_BUCKET: u64 = 64;
/// A bucket whose units are of several classes.
const MIXED_BUCKET: u8 = u8::MAX;

impl ContentSizes {
    /// From the class of every record of a file and each class's samples (the runs'
    /// reference in tests).
    #[cfg(test)]
    pub fn new(lsize: u32, class_of: &[u8], samples: Vec<Vec<StoredBlock>>) -> ContentSizes {
        let mut runs = Vec::new();
        for (r, &c) in class_of.iter().enumerate() {
            if runs.last().is_none_or(|&(_, k)| k != c) {
                runs.push((r as u64, c));
            }
        }
        ContentSizes::from_runs(lsize, class_of.len() as u64, 1, &runs, samples)
    }

    /// From a file of `records` records in units of `parts` records whose unit classes
    /// are `runs` ((first unit, class), in order, the first at 0; each run ends where the
    /// next starts) and each (unit class x parts + part) class's samples.
    pub fn from_runs(
        lsize: u32,
        records: u64,
        parts: u64,
        runs: &[(u64, u8)],
        samples: Vec<Vec<StoredBlock>>,
    ) -> ContentSizes {
        let parts = parts.max(1);
        let units = records.div_ceil(parts);
        let run_start: Vec<u64> = runs.iter().map(|r| r.0).collect();
        let run_class: Vec<u8> = runs.iter().map(|r| r.1).collect();
        let nb = units.div_ceil(CONTENT_BUCKET);
        let mut bucket = Vec::with_capacity(nb as usize);
        let mut j = 0usize;
        for b in 0..nb {
            let (lo, hi) = (b * CONTENT_BUCKET, ((b + 1) * CONTENT_BUCKET).min(units));
            while j + 1 < run_start.len() && run_start[j + 1] <= lo {
                j += 1;
            }
            let end = run_start.get(j + 1).copied().unwrap_or(units);
            bucket.push(if end >= hi { run_class[j] } else { MIXED_BUCKET });
        }
        ContentSizes { lsize, parts, run_start, run_class, records, bucket, samples }
    }

    /// Records per file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The class of record `blkid` (None past the file's end).
    #[inline]
    pub fn class(&self, blkid: u64) -> Option<usize> {
        if blkid >= self.records {
            return None;
        }
        let unit = blkid / self.parts;
        let b = self.bucket[(unit / CONTENT_BUCKET) as usize];
        let uc = if b != MIXED_BUCKET {
            b
        } else {
            self.run_class[self.run_start.partition_point(|&s| s <= unit) - 1]
        };
        Some(usize::from(uc) * self.parts as usize + (blkid % self.parts) as usize)
    }

    /// Records of each class (a partial last unit counted whole).
    fn counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.samples.len()];
        let units = self.records.div_ceil(self.parts);
        for (j, &c) in self.run_class.iter().enumerate() {
            let end = self.run_start.get(j + 1).copied().unwrap_or(units);
            for part in 0..self.parts as usize {
                counts[usize::from(c) * self.parts as usize + part] += end - self.run_start[j];
            }
        }
        counts
    }
}

/// [`StrataSizes`] codes for blocks with no physical size.
const STRATUM_HOLE: u32 = u32::MAX;
const STRATUM_EMBEDDED: u32 = u32::MAX - 1;

/// [`CompressionModel::data_block`] for one logical size, per normal stratum.
#[derive(Debug)]
struct StrataSizes {
    lsize: u32,
    /// [`StoredBlock::psize`], or [`STRATUM_HOLE`] / [`STRATUM_EMBEDDED`]: 64 KiB, so the
    /// table stays in the cache.
    blocks: Box<[u32]>,
}

impl CompressionModel {
    /// A model for a dataset with compression `algorithm` whose data compresses on average
    /// by `data_ratio` (>= 1; infinity = all zeros), on a pool of sector exponent `ashift`
    /// (9..=16); `seed` fixes every block's ratio.
    pub fn new(algorithm: Compression, data_ratio: f64, ashift: u8, seed: u64) -> Result<CompressionModel> {
        if data_ratio.is_nan() || data_ratio < 1.0 {
            return Err(Error::config(
                "compression_ratio",
                format!(
                    "mean compression ratio {data_ratio} is not allowed: >= 1.0 (infinity for all-zero data)"
                ),
            ));
        }
        if !(ASHIFT_MIN..=ASHIFT_MAX).contains(&ashift) {
            return Err(Error::config(
                "ashift",
                format!(
                    "ashift {ashift} is not allowed: {ASHIFT_MIN} (512 B sectors) to {ASHIFT_MAX} (64 KiB)"
                ),
            ));
        }
        let mut model = CompressionModel {
            algorithm,
            data_ratio,
            ashift,
            seed,
            sigma: 0.0,
            mu: 0.0,
            sizes: None,
            content: None,
        };
        model.set_spread(DEFAULT_RATIO_SPREAD);
        Ok(model)
    }

    /// The same model with log-normal sigma `sigma` (>= 0, finite) for the per-block
    /// compressed fraction. Errors on a negative or non-finite sigma.
    pub fn with_spread(mut self, sigma: f64) -> Result<CompressionModel> {
        if !(sigma.is_finite() && sigma >= 0.0) {
            return Err(Error::config(
                "compression_spread",
                format!("sigma {sigma} is not allowed: finite and >= 0"),
            ));
        }
        self.set_spread(sigma);
        Ok(self)
    }

    fn set_spread(&mut self, sigma: f64) {
        self.sigma = sigma;
        self.mu = -self.data_ratio.ln() - sigma * sigma / 2.0;
        if let Some(lsize) = self.sizes.take().map(|t| t.lsize) {
            self.set_record_size(lsize);
        }
    }

    /// The same model with the stored form of `lsize`-byte records (the dataset's record
    /// size) precomputed per stratum. Results are identical; only the cost changes.
    pub fn for_record_size(mut self, lsize: u32) -> CompressionModel {
        self.set_record_size(lsize);
        self
    }

    fn set_record_size(&mut self, lsize: u32) {
        self.sizes = None;
        let blocks = (0..NORMAL_STRATA)
            .map(|k| match self.stratum_block(k, lsize) {
                StoredBlock::Hole => STRATUM_HOLE,
                StoredBlock::Embedded { .. } => STRATUM_EMBEDDED,
                b => b.psize(),
            })
            .collect();
        self.sizes = Some(std::sync::Arc::new(StrataSizes { lsize, blocks }));
    }

    /// The same model with the stored sizes of records of `content.lsize` learnt from
    /// their content. Errors if a class has no sample.
    pub fn with_content(mut self, content: ContentSizes) -> Result<CompressionModel> {
        if let Some(c) = content.samples.iter().position(|s| s.is_empty()) {
            return Err(Error::config("dataset", format!("record class {c} has no sampled content")));
        }
        self.content = Some(std::sync::Arc::new(content));
        Ok(self)
    }

    /// The dataset's compression property.
    pub fn algorithm(&self) -> Compression {
        self.algorithm
    }

    /// Sector size in bytes (2^ashift).
    pub fn sector_size(&self) -> u32 {
        1u32 << self.ashift
    }

    /// Bytes allocated on the device for a block of physical size `psize` (rounded up to
    /// the sector; 0 for holes and embedded blocks). Device reads are this size.
    pub fn asize(&self, psize: u32) -> u32 {
        let sector = self.sector_size();
        psize.div_ceil(sector) * sector
    }

    /// How data block `blkid` of `object`, of logical size `lsize`, is stored.
    pub fn data_block(&self, object: u32, blkid: u64, lsize: u32) -> StoredBlock {
        if self.algorithm == Compression::Off {
            return StoredBlock::Uncompressed { lsize };
        }
        if let Some(c) = self.content.as_deref().filter(|c| c.lsize == lsize) {
            let Some(class) = c.class(blkid) else { return StoredBlock::Hole };
            let samples = &c.samples[class];
            return samples[normal_stratum(self.seed, object, blkid) % samples.len()];
        }
        if self.data_ratio == 1.0 {
            return StoredBlock::Uncompressed { lsize };
        }
        if self.data_ratio.is_infinite() {
            return StoredBlock::Hole;
        }
        let k = normal_stratum(self.seed, object, blkid);
        match &self.sizes {
            Some(t) if t.lsize == lsize => match t.blocks[k] {
                STRATUM_HOLE => StoredBlock::Hole,
                STRATUM_EMBEDDED => StoredBlock::Embedded { lsize },
                p if p == lsize => StoredBlock::Uncompressed { lsize },
                psize => StoredBlock::Compressed { lsize, psize },
            },
            _ => self.stratum_block(k, lsize),
        }
    }

    /// How a record of `lsize` whose compressed fraction lies in normal stratum `k` is stored.
    fn stratum_block(&self, k: usize, lsize: u32) -> StoredBlock {
        let fraction = (self.mu + self.sigma * normal_strata()[k]).exp();
        // Anything above lsize fails the 1/8 test alike; clamp before converting.
        let c_len = (f64::from(lsize) * fraction).ceil().clamp(1.0, f64::from(lsize) + 1.0) as u64;
        zio_stored_block(c_len, lsize, self.ashift, true)
    }

    /// How a data block holding exactly `sample` is stored: `zio_compress_data` on those
    /// bytes (all zeros: a hole; else the compressor's output length, see
    /// `super::compressors`), then the 1/8 rule, embedding and sector rounding
    /// ([`zio_stored_block`]). With compression=off nothing is checked: stored as is.
    /// Errors for gzip and zstd on bytes that are not all zeros (their output lengths
    /// are not modelled).
    pub fn stored_sample(&self, sample: &[u8]) -> Result<StoredBlock> {
        let lsize = sample.len() as u32;
        if self.algorithm == Compression::Off {
            return Ok(StoredBlock::Uncompressed { lsize });
        }
        if sample.iter().all(|&b| b == 0) {
            return Ok(StoredBlock::Hole);
        }
        let d_len = sample.len() - (sample.len() >> 3);
        let c_len = match self.algorithm {
            Compression::Lz4 => super::compressors::lz4_compressed_len(sample, d_len),
            Compression::Lzjb => super::compressors::lzjb_compressed_len(sample, d_len),
            other => {
                return Err(Error::config(
                    "filesystem.compression",
                    format!(
                        "compression={} of bytes written by fio is not modelled (lz4 and lzjb are, and all-zero blocks with any algorithm)",
                        format!("{other:?}").to_lowercase()
                    ),
                ))
            }
        };
        Ok(zio_stored_block(c_len as u64, lsize, self.ashift, true))
    }

    /// Physical size (`BP_GET_PSIZE`) of data block `blkid` of `object` with logical size
    /// `lsize`: lsize when stored uncompressed (always with compression=off), else the
    /// compressed length rounded up to the sector, or 0 for a hole (all-zero data) or a
    /// block embedded in its block pointer (compressed to <= 112 bytes): no device read.
    pub fn data_psize(&self, object: u32, blkid: u64, lsize: u32) -> u32 {
        self.data_block(object, blkid, lsize).psize()
    }

    /// Physical size of a full indirect block (every block pointer in use) at `level` of
    /// `object`: lz4 whatever the dataset's compression, at
    /// [`INDIRECT_LZ4_PSIZE_PER_BLKPTR`] bytes per pointer, sector-rounded (16 KiB: 5632
    /// bytes at ashift 9, 8192 at ashift 12; 128 KiB: 45056 at either). The block's
    /// identity does not change the result today; it is taken so a per-block spread can
    /// come without changing callers.
    pub fn metadata_psize(&self, object: u32, level: u8, blkid: u64, lsize: u32) -> u32 {
        let _ = (object, level, blkid);
        self.indirect_psize(lsize, lsize >> SPA_BLKPTRSHIFT)
    }

    /// Physical size of an indirect block of `lsize` bytes with `used_blkptrs` pointers in
    /// use (the rest zero, as in the last indirect block of each level; see
    /// `FileGeometry::children_of`). 0 (a hole) when none is used.
    pub fn indirect_psize(&self, lsize: u32, used_blkptrs: u32) -> u32 {
        let used = used_blkptrs.min(lsize >> SPA_BLKPTRSHIFT);
        let c_len = u64::from(used) * u64::from(INDIRECT_LZ4_PSIZE_PER_BLKPTR);
        zio_stored_block(c_len, lsize, self.ashift, false).psize()
    }

    /// What `zfs get compressratio` would show for data blocks of `lsize` bytes: logical
    /// over physical bytes of 65536 sampled blocks (object 0, block ids 0..65535). As in
    /// `dsl_get_refratio`, holes count nowhere, embedded blocks count their lsize and no
    /// psize, and 1.0 is shown when no physical bytes are counted.
    pub fn mean_stored_ratio(&self, lsize: u32) -> f64 {
        if let Some(c) =
            self.content.as_deref().filter(|c| c.lsize == lsize && self.algorithm != Compression::Off)
        {
            // Every record of a file, each class by the mean of its samples.
            let (mut logical, mut physical) = (0f64, 0f64);
            for (n, s) in c.counts().iter().zip(&c.samples) {
                let per = *n as f64 / s.len() as f64;
                logical += per * s.iter().map(|b| f64::from(b.lsize())).sum::<f64>();
                physical += per * s.iter().map(|b| f64::from(b.psize())).sum::<f64>();
            }
            return if physical == 0.0 { 1.0 } else { logical / physical };
        }
        const SAMPLES: u64 = 1 << 16;
        let (mut logical, mut physical) = (0u64, 0u64);
        for blkid in 0..SAMPLES {
            let b = self.data_block(0, blkid, lsize);
            logical += u64::from(b.lsize());
            physical += u64::from(b.psize());
        }
        if physical == 0 {
            1.0
        } else {
            logical as f64 / physical as f64
        }
    }
}

/// splitmix64 finaliser.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Strata of the standard normal the per-block deviates are drawn from.
const NORMAL_STRATA: usize = 1 << 14;

/// The stratum of the standard normal deviate of (seed, object, blkid): the hash picks
/// one of [`NORMAL_STRATA`] equiprobable strata, whose median ([`normal_strata`]) is the
/// deviate. Every block's size is looked up on every access, so the deviate is a table
/// lookup, not a Box-Muller draw (three transcendental calls); the strata reproduce the
/// distribution to 1/16384 in probability.
fn normal_stratum(seed: u64, object: u32, blkid: u64) -> usize {
    let h = mix(seed ^ mix(u64::from(object) ^ mix(blkid)));
    (h >> (64 - NORMAL_STRATA.trailing_zeros())) as usize
}

/// The medians of the [`NORMAL_STRATA`] strata of the standard normal, in order.
fn normal_strata() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Box<[f64]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..NORMAL_STRATA).map(|k| inverse_normal_cdf((k as f64 + 0.5) / NORMAL_STRATA as f64)).collect()
    })
}

/// The standard normal quantile of `p` in (0, 1): Acklam's rational approximation
/// (relative error below 1.2e-9), used only to build the strata.
fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] =
        [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    const LOW: f64 = 0.02425;
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {

    proptest::proptest! {
        /// Content classes kept as runs answer as the per-record vector they came from.
        #[test]
        fn content_runs_answer_as_the_class_vector(v in proptest::collection::vec(0u8..4, 0..400), probe in 0u64..500) {
            let samples = (0..4).map(|_| vec![StoredBlock::Uncompressed { lsize: 4096 }]).collect();
            let c = ContentSizes::new(4096, &v, samples);
            proptest::prop_assert_eq!(c.records(), v.len() as u64);
            proptest::prop_assert_eq!(c.class(probe), v.get(probe as usize).map(|&x| usize::from(x)));
            let counts = c.counts();
            for k in 0..4u8 {
                proptest::prop_assert_eq!(counts[usize::from(k)], v.iter().filter(|&&x| x == k).count() as u64);
            }
        }
    }
    use super::*;
    use proptest::prelude::*;

    const K: u32 = 1024;

    fn lz4(ratio: f64, ashift: u8) -> CompressionModel {
        CompressionModel::new(Compression::Lz4, ratio, ashift, 42).unwrap()
    }

    /// The strata are the normal's: symmetric, median 0, unit variance, known quantiles.
    #[test]
    fn normal_strata_have_the_normal_moments() {
        let z: Vec<f64> = (0..200_000u64).map(|b| normal_strata()[normal_stratum(7, 3, b)]).collect();
        let mean = z.iter().sum::<f64>() / z.len() as f64;
        let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / z.len() as f64;
        assert!(mean.abs() < 0.01 && (var - 1.0).abs() < 0.02, "{mean} {var}");
        assert!((inverse_normal_cdf(0.975) - 1.959_964).abs() < 1e-6);
        assert!((inverse_normal_cdf(0.001) + 3.090_232).abs() < 1e-6);
        assert_eq!(inverse_normal_cdf(0.5), 0.0);
    }

    #[test]
    fn one_eighth_rule_and_rounding() {
        // 16K at ashift 9: up to 14336 compressed bytes are kept.
        assert_eq!(zio_stored_block(14336, 16 * K, 9, true).psize(), 14336);
        assert_eq!(zio_stored_block(14337, 16 * K, 9, true).psize(), 16 * K);
        assert_eq!(zio_stored_block(12801, 16 * K, 9, true).psize(), 13312);
        // 16K at ashift 12: the 1/8 test passes but rounding to 16K stores it as is.
        assert_eq!(zio_stored_block(12800, 16 * K, 12, true), StoredBlock::Uncompressed { lsize: 16 * K });
        assert_eq!(zio_stored_block(12288, 16 * K, 12, true).psize(), 12 * K);
        // Embedded only for level 0 and <= 112 bytes; zeros are holes.
        assert_eq!(zio_stored_block(112, 16 * K, 12, true), StoredBlock::Embedded { lsize: 16 * K });
        assert_eq!(zio_stored_block(112, 16 * K, 12, false).psize(), 4096);
        assert_eq!(zio_stored_block(113, 16 * K, 9, true).psize(), 512);
        assert_eq!(zio_stored_block(0, 16 * K, 12, true), StoredBlock::Hole);
        // A block no bigger than a sector can never shrink.
        assert_eq!(zio_stored_block(300, 4 * K, 12, false).psize(), 4 * K);
        assert_eq!(zio_stored_block(300, 512, 12, false).psize(), 512);
    }

    /// The brief's point on experiment 1: lz4 at 1.28 on 16K records shows as about 1.28
    /// only with 512-byte sectors; at ashift 12 nearly every record is stored uncompressed.
    #[test]
    fn ratio_128_on_16k_records() {
        let at12 = lz4(1.28, 12).mean_stored_ratio(16 * K);
        assert!(at12 < 1.01, "ashift 12: {at12}");
        // Sector rounding at ashift 9 costs ~256 B per ~12.8K block: about 1.255.
        let at9 = lz4(1.28, 9).mean_stored_ratio(16 * K);
        assert!((1.24..=1.28).contains(&at9), "ashift 9: {at9}");
    }

    #[test]
    fn ratio_128_on_32k_records_at_ashift_12() {
        let m = lz4(1.28, 12);
        let mut at28 = 0;
        for blkid in 0..10_000 {
            let p = m.data_psize(7, blkid, 32 * K);
            assert!(p == 24 * K || p == 28 * K, "blkid {blkid}: {p}");
            at28 += usize::from(p == 28 * K);
        }
        assert!(at28 > 9_000, "mostly 28K: {at28}");
    }

    #[test]
    fn off_is_lsize() {
        for ratio in [1.0, 2.0, f64::INFINITY] {
            let m = CompressionModel::new(Compression::Off, ratio, 12, 1).unwrap();
            for blkid in 0..100 {
                assert_eq!(m.data_psize(1, blkid, 16 * K), 16 * K);
            }
            assert_eq!(m.mean_stored_ratio(128 * K), 1.0);
        }
    }

    #[test]
    fn incompressible_zero_and_tiny() {
        let m = lz4(1.0, 9);
        assert!((0..1000).all(|b| m.data_psize(1, b, 128 * K) == 128 * K));
        let zeros = lz4(f64::INFINITY, 12);
        assert_eq!(zeros.data_block(1, 5, 128 * K), StoredBlock::Hole);
        assert_eq!(zeros.mean_stored_ratio(128 * K), 1.0);
        // 16K / 200 = 82 bytes: embedded in the block pointer.
        let tiny = lz4(200.0, 12);
        assert_eq!(tiny.data_block(1, 5, 16 * K), StoredBlock::Embedded { lsize: 16 * K });
        // 128K / 200 = 655 bytes: one sector.
        assert_eq!(tiny.data_psize(1, 5, 128 * K), 4096);
    }

    #[test]
    fn two_to_one_on_128k() {
        // Experiment 3's overwritten files (~2:1) on 128K records, 512-byte sectors.
        let r = lz4(2.0, 9).mean_stored_ratio(128 * K);
        assert!((1.97..=2.0).contains(&r), "{r}");
    }

    #[test]
    fn deterministic_by_seed() {
        let a = lz4(1.28, 9);
        let b = lz4(1.28, 9);
        let c = CompressionModel::new(Compression::Lz4, 1.28, 9, 43).unwrap();
        let sizes = |m: &CompressionModel| (0..1000).map(|i| m.data_psize(3, i, 16 * K)).collect::<Vec<_>>();
        assert_eq!(sizes(&a), sizes(&b));
        assert_ne!(sizes(&a), sizes(&c));
        // Object and block id both matter.
        assert_ne!(sizes(&a), (0..1000).map(|i| a.data_psize(4, i, 16 * K)).collect::<Vec<_>>());
    }

    #[test]
    fn indirect_blocks() {
        let m9 = lz4(1.0, 9);
        let m12 = CompressionModel::new(Compression::Off, 1.0, 12, 0).unwrap();
        // The zdb sample "4000L/1600P" (ashift 9), and its size at ashift 12.
        assert_eq!(m9.metadata_psize(5, 1, 0, 16 * K), 0x1600);
        assert_eq!(m12.metadata_psize(5, 1, 0, 16 * K), 8192, "lz4 even with compression=off");
        assert_eq!(m12.metadata_psize(5, 1, 0, 128 * K), 45056);
        assert_eq!(m9.metadata_psize(5, 2, 0, 128 * K), 45056);
        // The top of experiment 1's tree: one pointer used in 16K, one sector.
        assert_eq!(m9.indirect_psize(16 * K, 1), 512);
        assert_eq!(m12.indirect_psize(16 * K, 9), 4096);
        assert_eq!(m12.indirect_psize(16 * K, 0), 0);
        // A 4K indirect block at ashift 12 cannot shrink.
        assert_eq!(m12.metadata_psize(5, 1, 0, 4 * K), 4 * K);
    }

    #[test]
    fn validation() {
        let err = |r: Result<CompressionModel>| match r {
            Err(Error::Config { field, .. }) => field,
            Ok(_) => panic!("expected an error"),
            Err(e) => panic!("unexpected {e}"),
        };
        assert_eq!(err(CompressionModel::new(Compression::Lz4, 0.9, 12, 0)), "compression_ratio");
        assert_eq!(err(CompressionModel::new(Compression::Lz4, f64::NAN, 12, 0)), "compression_ratio");
        assert_eq!(err(CompressionModel::new(Compression::Lz4, 1.5, 8, 0)), "ashift");
        assert_eq!(err(CompressionModel::new(Compression::Lz4, 1.5, 17, 0)), "ashift");
        assert_eq!(err(lz4(1.5, 12).with_spread(-0.1)), "compression_spread");
    }

    proptest! {
        #[test]
        fn psize_bounds(
            ratio in 1.0f64..20.0,
            ashift in 9u8..=16,
            lshift in 9u32..=24,
            seed in any::<u64>(),
            object in any::<u32>(),
            blkid in any::<u64>(),
            sigma in 0.0f64..0.5,
        ) {
            let m = CompressionModel::new(Compression::Lz4, ratio, ashift, seed).unwrap().with_spread(sigma).unwrap();
            let lsize = 1u32 << lshift;
            let b = m.data_block(object, blkid, lsize);
            let p = b.psize();
            prop_assert!(p <= lsize);
            prop_assert!(p == lsize || p & (m.sector_size() - 1) == 0, "psize {} lsize {}", p, lsize);
            if let StoredBlock::Compressed { psize, .. } = b {
                prop_assert!(psize < lsize && psize <= lsize - lsize / 8 + m.sector_size());
            }
            prop_assert_eq!(m.data_psize(object, blkid, lsize), p);
            let ip = m.metadata_psize(object, 1, blkid, lsize.clamp(4096, 131072));
            prop_assert!(ip > 0 && ip <= lsize.clamp(4096, 131072));
        }

        /// The per-stratum table of the record size is a cache: same answers, for that
        /// size and any other, before and after a change of spread.
        #[test]
        fn record_size_table_changes_nothing(
            ratio in 1.0f64..8.0,
            ashift in 9u8..=13,
            seed in any::<u64>(),
            object in any::<u32>(),
            blkid in any::<u64>(),
            sigma in 0.0f64..0.5,
        ) {
            let plain = CompressionModel::new(Compression::Lz4, ratio, ashift, seed).unwrap();
            let cached = plain.clone().for_record_size(16 * K);
            for lsize in [16 * K, 128 * K] {
                prop_assert_eq!(cached.data_block(object, blkid, lsize), plain.data_block(object, blkid, lsize));
            }
            let (plain, cached) = (plain.with_spread(sigma).unwrap(), cached.with_spread(sigma).unwrap());
            prop_assert_eq!(cached.data_block(object, blkid, 16 * K), plain.data_block(object, blkid, 16 * K));
        }
    }
}
