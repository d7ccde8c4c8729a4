//! What fio writes into a file: the bytes of laid-out files and of write jobs, by fio
//! release and buffer options, so that the filesystem can compress a sample record the
//! way its compressor would (`crate::fs::zfs::compressors`).
//!
//! Read from axboe/fio's history (commit, first release containing it):
//!
//! Laying out a file (`filesetup.c` `extend_file`, for a job that reads, or writes with
//! overwrite=1, into a file that is missing or short): it writes the whole file in
//! writes of the job's write block size.
//! - before 2.1: from a buffer `memset(b, 0, ...)`: all zeros, whatever the options.
//! - since 2.1 (cc86c395, 2013-05-03, "Honor random/zero/compressible settings for
//!   filling an initial file"): each write is filled by `fill_io_buffer` with the job's
//!   buffer options, as a write job's buffers are. No scrambling.
//!
//! `fill_io_buffer` (io_u.c):
//! - zero_buffers, or buffer_compress_percentage=100 (init.c turns it into zero_buffers):
//!   zeros.
//! - buffer_compress_percentage=P (0 < P < 100), chunk C: pieces of random bytes and
//!   zeros, whose shape changed:
//!   - the random bytes of one piece come from one seed: until 2.2.12 one seed per
//!     buffer (2.1.13, 1066358a: one per min_write piece); since 2.2.12 (1e7f82e2,
//!     "properly split buffer prep for compression") one per chunk. Within a seed's span
//!     every segment repeats the same random bytes (`__fill_random_buf_percentage`
//!     restarts from the seed for each segment).
//!   - segment = min(min_write, C), or min_write when C is 0; C defaults to 0 until 3.2
//!     and to 512 since (1de80624). Before 2.1 a zero C made fio loop forever (fixed by
//!     cc86c395): refused here.
//!   - each segment is r = segment * (100 - P) / 100 random bytes then zeros: before 3.13
//!     r zeros (so r random, r zeros, r random...: half random whatever P, 3363fa44
//!     "fix compressible data ratio per segment"); since 3.13 segment - r zeros.
//! - otherwise random bytes (a fresh seed per fill), except in 2.2.0 to 2.2.6 where the
//!   default fill was `memset(buf, 0, ...)` (d1af2894, fixed by 999d245e "io_u: fix
//!   refill, should be random content" in 2.2.7).
//!
//! A write job fills its iodepth io_u buffers once (backend.c `init_io_u`) and refills a
//! buffer before each write only with refill_buffers (since 2.2.12 implied by
//! buffer_compress_percentage unless refill_buffers is given, 6269123c). A buffer that is
//! not refilled is written again as it was, after `small_content_scramble` when buffers
//! are scrambled: in each 512-byte block the write's offset (8 bytes) goes into one of
//! the block's 64-byte lines and the issue time (16 bytes) near its start. Scrambling
//! happens when scramble_buffers (default 1) and:
//! - since 2.1.7 (bedc9dc2) not when buffer_compress_percentage was given (any value);
//! - since 2.2.0 (1bf2498d) not when zero_buffers was given explicitly, unless
//!   scramble_buffers was given explicitly too.
//!
//! So one fio release lays files out as holes on a compressed dataset (2.0.x: zeros),
//! another as incompressible data (3.x default buffers), and a write job without
//! refill_buffers writes the same few buffers again and again, which a compressor with a
//! window larger than the block size sees through (lz4: 64 KiB; lzjb: 1 KiB).
//!
//! Simplifications: 1. random bytes come from PCG, not fio's generators (none of them
//! leaves patterns a compressor finds); 2. scrambling uses fio 3.x's layout for every
//! release (2.x put the offset at a random 8-byte slot and the time at the block's end:
//! the same 24 bytes per 512); 3. a sample record is one record's worth of consecutive
//! buffers as a sequential job writes them; a random job with the random map writes the
//! same buffers in another order, which changes which buffer lands where but not how
//! the record compresses; 4. buffer_pattern, dedupe_percentage and verify are not
//! modelled (the parser refuses them).

use std::fmt;

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::config::FioBuffers;
use crate::error::{Error, Result};

/// A fio release, major.minor.patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FioVersion(pub u32, pub u32, pub u32);

impl FioVersion {
    /// Parses "2.0.15", "3.36", "fio-3.36".
    pub fn parse(text: &str, field: &str) -> Result<FioVersion> {
        let t = text.trim().trim_start_matches("fio-");
        let parts: Vec<&str> = t.split('.').collect();
        let num = |i: usize| parts.get(i).map_or(Ok(0), |p| p.parse::<u32>());
        let bad = || {
            Error::config(
                field,
                format!("fio version {text:?} is not allowed: major.minor[.patch], 2.0 or later (e.g. \"2.0.15\", \"3.36\")"),
            )
        };
        if parts.is_empty() || parts.len() > 3 {
            return Err(bad());
        }
        let v =
            FioVersion(num(0).map_err(|_| bad())?, num(1).map_err(|_| bad())?, num(2).map_err(|_| bad())?);
        if v < FioVersion(2, 0, 0) {
            return Err(bad());
        }
        Ok(v)
    }

    fn at_least(self, major: u32, minor: u32, patch: u32) -> bool {
        self >= FioVersion(major, minor, patch)
    }
}

impl fmt::Display for FioVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Which fio operation put the bytes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// extend_file laying out a file for a job, in writes of `bs` bytes.
    Layout {
        /// The job's write block size.
        bs: u32,
    },
    /// A write job's I/O of `bs` bytes with `iodepth` io_u buffers.
    Write {
        /// Block size of the writes.
        bs: u32,
        /// io_u buffers the job cycles through.
        iodepth: u32,
    },
}

/// The options of one job as fio resolves them (init.c `fixup_options`,
/// `setup_td_flags`) for one release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferPolicy {
    version: FioVersion,
    zero: bool,
    /// Some(P) with 0 < P < 100.
    compress: Option<u32>,
    chunk: u32,
    refill: bool,
    scramble: bool,
}

impl BufferPolicy {
    /// Resolves `b` as fio `version` does; errors for combinations that hang fio.
    pub fn new(b: &FioBuffers, version: FioVersion, field: &str) -> Result<BufferPolicy> {
        let v = version;
        let mut zero = b.zero_buffers.unwrap_or(false);
        let mut compress = b.buffer_compress_percentage.filter(|&p| p > 0);
        if compress == Some(100) {
            zero = true;
            compress = None;
        }
        let chunk = b.buffer_compress_chunk.unwrap_or(if v.at_least(3, 2, 0) { 512 } else { 0 });
        if compress.is_some() && chunk == 0 && !v.at_least(2, 1, 0) {
            return Err(Error::config(
                field,
                format!(
                    "fio {v} loops forever filling buffers with buffer_compress_percentage and no buffer_compress_chunk (fixed in 2.1, cc86c395); set buffer_compress_chunk"
                ),
            ));
        }
        let refill = b.refill_buffers.unwrap_or(compress.is_some() && v.at_least(2, 2, 12));
        let compress_given = b.buffer_compress_percentage.is_some();
        let scramble_opt = b.scramble_buffers.unwrap_or(true);
        let mut scramble = scramble_opt;
        if v.at_least(2, 2, 0) {
            let explicit_zero = b.zero_buffers == Some(true);
            scramble = scramble_opt && (b.scramble_buffers.is_some() || !explicit_zero);
        }
        if v.at_least(2, 1, 7) && compress_given {
            scramble = false;
        }
        Ok(BufferPolicy { version, zero, compress, chunk, refill, scramble })
    }

    /// True if the writer's bytes are all zeros whatever the random stream: a layout
    /// before 2.1, zero buffers, or the 2.2.0-2.2.6 default fill (and, for a write, no
    /// scrambling).
    pub fn all_zero(&self, writer: Writer) -> bool {
        let fill_zero = self.zero || (self.compress.is_none() && self.default_fill_is_zero());
        match writer {
            Writer::Layout { .. } => !self.version.at_least(2, 1, 0) || fill_zero,
            Writer::Write { .. } => fill_zero && (self.refill || !self.scramble),
        }
    }

    fn default_fill_is_zero(&self) -> bool {
        self.version.at_least(2, 2, 0) && !self.version.at_least(2, 2, 7)
    }

    /// fill_io_buffer of `buf` (min_write = `min_write`).
    fn fill(&self, rng: &mut Pcg64Mcg, buf: &mut [u8], min_write: usize) {
        if let Some(p) = self.compress {
            let v = self.version;
            // The span one seed covers.
            let unit = if v.at_least(2, 2, 12) {
                if self.chunk == 0 {
                    min_write
                } else {
                    min_write.min(self.chunk as usize)
                }
            } else if v.at_least(2, 1, 13) {
                min_write
            } else {
                buf.len()
            };
            let segment = if v.at_least(2, 2, 12) {
                unit
            } else if self.chunk == 0 {
                min_write
            } else {
                min_write.min(self.chunk as usize)
            };
            for span in buf.chunks_mut(unit.max(1)) {
                let seed = rng.next_u64();
                fill_percentage(span, seed, p, segment.max(1), v.at_least(3, 13, 0));
            }
        } else if self.zero || self.default_fill_is_zero() {
            buf.fill(0);
        } else {
            fill_random(rng.next_u64(), buf);
        }
    }

    /// One record of `record` bytes as `writer` leaves it (see the module docs);
    /// deterministic in `seed`.
    pub fn sample_record(&self, writer: Writer, record: u32, seed: u64) -> Vec<u8> {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let record = record as usize;
        let mut out = vec![0u8; record];
        match writer {
            Writer::Layout { bs } => {
                if !self.version.at_least(2, 1, 0) {
                    return out;
                }
                let bs = (bs as usize).max(1);
                let mut buf = vec![0u8; bs];
                let mut at = 0;
                while at < record {
                    self.fill(&mut rng, &mut buf, bs);
                    let n = bs.min(record - at);
                    out[at..at + n].copy_from_slice(&buf[..n]);
                    at += n;
                }
            }
            Writer::Write { bs, iodepth } => {
                let bs = (bs as usize).max(1);
                let mut bufs: Vec<Vec<u8>> = (0..iodepth.max(1))
                    .map(|_| {
                        let mut b = vec![0u8; bs];
                        self.fill(&mut rng, &mut b, bs);
                        b
                    })
                    .collect();
                let mut at = 0;
                let mut k = 0usize;
                let mut offset = rng.next_u64() % (1 << 40) / bs as u64 * bs as u64;
                while at < record {
                    let n = bufs.len();
                    let b = &mut bufs[k % n];
                    if self.refill {
                        self.fill(&mut rng, b, bs);
                    } else if self.scramble {
                        scramble(b, offset, rng.next_u64());
                    }
                    let len = bs.min(record - at);
                    out[at..at + len].copy_from_slice(&b[..len]);
                    at += len;
                    k += 1;
                    offset += bs as u64;
                }
            }
        }
        out
    }
}

/// Random bytes from `seed` (any generator without patterns will do, see simplification 1).
fn fill_random(seed: u64, buf: &mut [u8]) {
    Pcg64Mcg::seed_from_u64(seed).fill_bytes(buf);
}

/// `__fill_random_buf_percentage`: segments of random bytes (the same for every segment:
/// the seed restarts) then zeros.
fn fill_percentage(buf: &mut [u8], seed: u64, percentage: u32, segment: usize, zero_tail_fixed: bool) {
    let segment = segment.min(buf.len()).max(1);
    let r = segment * (100 - percentage as usize) / 100;
    let mut at = 0;
    while at < buf.len() {
        let n = r.min(buf.len() - at);
        fill_random(seed, &mut buf[at..at + n]);
        at += n;
        if at >= buf.len() {
            break;
        }
        let mut z = if zero_tail_fixed { segment - r } else { r };
        let left = buf.len() - at;
        // "else if (len - this_len <= sizeof(long)) this_len = len" (3.13+).
        if z > left || (zero_tail_fixed && left - z <= 8) {
            z = left;
        }
        if z == 0 && n == 0 {
            // P = 100 is handled as zero buffers; r = 0 only for tiny segments.
            buf[at..].fill(0);
            break;
        }
        buf[at..at + z].fill(0);
        at += z;
    }
}

/// `small_content_scramble`: per 512-byte block, the write offset into one 64-byte line
/// (chosen by the time and the offset) and the issue time (seconds, nanoseconds) in the
/// block's first line.
fn scramble(buf: &mut [u8], offset: u64, nsec_seed: u64) {
    let mut rng = Pcg64Mcg::seed_from_u64(nsec_seed);
    let sec: u64 = 1_700_000_000;
    let nsec = rng.next_u64() % 1_000_000_000;
    let mut boffset = offset;
    let line = ((nsec ^ boffset) & 7) as usize;
    for block in buf.chunks_exact_mut(512) {
        block[line << 6..(line << 6) + 8].copy_from_slice(&boffset.to_le_bytes());
        block[48..56].copy_from_slice(&sec.to_le_bytes());
        block[56..64].copy_from_slice(&nsec.to_le_bytes());
        boffset += 512;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(v: &str, b: FioBuffers) -> BufferPolicy {
        BufferPolicy::new(&b, FioVersion::parse(v, "v").unwrap(), "buffers").unwrap()
    }

    fn zero_share(bytes: &[u8]) -> f64 {
        bytes.iter().filter(|&&x| x == 0).count() as f64 / bytes.len() as f64
    }

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(FioVersion::parse("fio-3.36", "v").unwrap(), FioVersion(3, 36, 0));
        assert!(FioVersion::parse("2.0.15", "v").unwrap() < FioVersion::parse("2.1", "v").unwrap());
        assert!(FioVersion::parse("1.99", "v").is_err());
        assert!(FioVersion::parse("three", "v").is_err());
    }

    /// The layout rule: zeros before 2.1 whatever the options; the job's buffers since.
    #[test]
    fn layout_by_release() {
        let default = FioBuffers::default();
        let old = policy("2.0.15", default.clone());
        assert!(old.all_zero(Writer::Layout { bs: 4096 }));
        assert_eq!(zero_share(&old.sample_record(Writer::Layout { bs: 4096 }, 131072, 1)), 1.0);
        let new = policy("3.36", default.clone());
        assert!(!new.all_zero(Writer::Layout { bs: 4096 }));
        assert!(zero_share(&new.sample_record(Writer::Layout { bs: 4096 }, 131072, 1)) < 0.01);
        // 2.2.0 to 2.2.6 filled default buffers with zeros (fixed in 2.2.7).
        assert!(policy("2.2.5", default.clone()).all_zero(Writer::Layout { bs: 4096 }));
        assert!(!policy("2.2.7", default).all_zero(Writer::Layout { bs: 4096 }));
        let zb = policy("3.36", FioBuffers { zero_buffers: Some(true), ..Default::default() });
        assert!(zb.all_zero(Writer::Layout { bs: 4096 }));
    }

    /// zero_buffers in a write job: scrambled (not zero) before 2.2.0, zeros since.
    #[test]
    fn zero_buffers_and_scrambling() {
        let b = FioBuffers { zero_buffers: Some(true), ..Default::default() };
        let w = Writer::Write { bs: 4096, iodepth: 1 };
        assert!(!policy("2.1.14", b.clone()).all_zero(w));
        let s = policy("2.1.14", b.clone()).sample_record(w, 16384, 3);
        let z = zero_share(&s);
        assert!(z < 1.0 && z > 0.95, "24 of every 512 bytes scrambled: {z}");
        assert!(policy("3.36", b).all_zero(w));
        // buffer_compress_percentage=100 is zero_buffers, never scrambled since 2.1.7.
        let c100 = FioBuffers { buffer_compress_percentage: Some(100), ..Default::default() };
        assert!(policy("3.36", c100).all_zero(w));
    }

    /// buffer_compress_percentage=70, chunk 4096: 3.13+ writes 30% random per chunk;
    /// before 3.13 the zero run had the random run's length, so half was random.
    #[test]
    fn compress_percentage_shape_by_release() {
        let b = FioBuffers {
            buffer_compress_percentage: Some(70),
            buffer_compress_chunk: Some(4096),
            ..Default::default()
        };
        let w = Writer::Write { bs: 65536, iodepth: 1 };
        let new = zero_share(&policy("3.36", b.clone()).sample_record(w, 131072, 5));
        assert!((new - 0.70).abs() < 0.01, "{new}");
        let old = zero_share(&policy("3.12", b).sample_record(w, 131072, 5));
        assert!((old - 0.45).abs() < 0.06, "{old}");
    }

    #[test]
    fn compress_without_chunk_hangs_before_2_1() {
        let b = FioBuffers { buffer_compress_percentage: Some(50), ..Default::default() };
        assert!(BufferPolicy::new(&b, FioVersion(2, 0, 15), "f").is_err());
        assert!(BufferPolicy::new(&b, FioVersion(2, 1, 0), "f").is_ok());
    }

    #[test]
    fn samples_are_deterministic() {
        let p = policy("3.36", FioBuffers::default());
        let w = Writer::Write { bs: 4096, iodepth: 4 };
        assert_eq!(p.sample_record(w, 65536, 11), p.sample_record(w, 65536, 11));
        assert_ne!(p.sample_record(w, 65536, 11), p.sample_record(w, 65536, 12));
    }
}
