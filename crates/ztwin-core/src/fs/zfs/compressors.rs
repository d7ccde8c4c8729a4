//! The output length of ZFS's lz4 and lzjb compressors on given bytes, computed by
//! running their parsing (which matches they find, what each costs) without writing the
//! output. Used to learn how a sample record of known content (`workload::fio::buffers`)
//! is stored.
//!
//! lzjb (`module/zfs/lzjb.c`, unchanged since Solaris): a copy map byte before every 8
//! items; an item is one literal byte, or a 2-byte match of 3 to 66 bytes
//! (`MATCH_MIN`..`MATCH_MAX`) at a distance of at most 1023 bytes (`OFFSET_MASK`), found
//! through a 1024-entry table (`LEMPEL_SIZE`) indexed by a hash of the next 3 bytes that
//! keeps the low 16 bits of the last position seen; the last 66 bytes are literals. It
//! gives up (returns `s_len`) once the output reaches `d_len - 1 - 2 * NBBY` at a copy
//! map boundary. So random bytes cost 9/8 and a zero run about 2/66 of its length.
//!
//! lz4 (`module/zfs/lz4_zfs.c`, the 2011 r-series LZ4 ZFS ships): sequences of a token,
//! literal-length bytes (one per 255 beyond 15), the literals, a 2-byte offset (up to
//! 65535 back) and match-length bytes (beyond 15 + `MINMATCH` 4); matches are found
//! through a hash table of 2^12 positions (2^13 for inputs under 64 KiB + 11,
//! `LZ4_compress64kCtx`) of the next 4 bytes, with a search step that grows every 64
//! misses (`SKIPSTRENGTH` 6), a backwards catch-up, and no match starting in the last 12
//! bytes (`MFLIMIT`) nor reaching the last 5 (`LASTLITERALS`). `lz4_compress_zfs`
//! prepends the 4-byte big-endian length; it fails (returns `s_len`) when the output
//! would not fit in `d_len - 4`.
//!
//! The parsing is ported from those files; the code is not.

const LZJB_MATCH_MIN: usize = 3;
const LZJB_MATCH_MAX: usize = (1 << 6) + (LZJB_MATCH_MIN - 1);
const LZJB_OFFSET_MASK: usize = (1 << (16 - 6)) - 1;
const LZJB_LEMPEL_SIZE: usize = 1024;
const NBBY: usize = 8;

/// `lzjb_compress(src, dst, s_len, d_len)`'s return value: the compressed length, or
/// `src.len()` when it would not fit in `d_len`.
pub fn lzjb_compressed_len(src: &[u8], d_len: usize) -> usize {
    let s_len = src.len();
    let mut lempel = [0u16; LZJB_LEMPEL_SIZE];
    let mut dst = 0usize;
    let mut items_in_map = NBBY; // forces a copy map byte first
    let mut i = 0usize;
    while i < s_len {
        if items_in_map == NBBY {
            if dst + 1 + 2 * NBBY >= d_len {
                return s_len;
            }
            items_in_map = 0;
            dst += 1;
        }
        items_in_map += 1;
        if i + LZJB_MATCH_MAX > s_len {
            dst += 1;
            i += 1;
            continue;
        }
        let mut hash = (usize::from(src[i]) << 16) + (usize::from(src[i + 1]) << 8) + usize::from(src[i + 2]);
        hash += hash >> 9;
        hash += hash >> 5;
        let hp = &mut lempel[hash & (LZJB_LEMPEL_SIZE - 1)];
        // Positions are kept as 16 bits of the address; with a buffer aligned to 1 KiB
        // (ABD buffers are page aligned) the 10-bit distance is the same on offsets.
        let offset = (i.wrapping_sub(usize::from(*hp))) & LZJB_OFFSET_MASK;
        *hp = i as u16;
        if offset != 0 && offset <= i && src[i..i + 3] == src[i - offset..i - offset + 3] {
            let mut mlen = LZJB_MATCH_MIN;
            while mlen < LZJB_MATCH_MAX && src[i + mlen] == src[i - offset + mlen] {
                mlen += 1;
            }
            dst += 2;
            i += mlen;
        } else {
            dst += 1;
            i += 1;
        }
    }
    dst
}

const LZ4_MINMATCH: usize = 4;
const LZ4_COPYLENGTH: usize = 8;
const LZ4_LASTLITERALS: usize = 5;
const LZ4_MFLIMIT: usize = LZ4_COPYLENGTH + LZ4_MINMATCH;
const LZ4_MINLENGTH: usize = LZ4_MFLIMIT + 1;
const LZ4_MAX_DISTANCE: usize = (1 << 16) - 1;
const LZ4_SKIPSTRENGTH: u32 = 6;
const LZ4_HASH_LOG: u32 = 12;
const LZ4_64KLIMIT: usize = (1 << 16) + (LZ4_MFLIMIT - 1);
const ML_MASK: usize = 15;
const RUN_MASK: usize = 15;

fn read32(src: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([src[i], src[i + 1], src[i + 2], src[i + 3]])
}

/// Bytes a literal run of `n` costs beyond the literals themselves (its length bytes).
fn lz4_len_bytes(n: usize, mask: usize) -> usize {
    if n >= mask {
        1 + (n - mask) / 255
    } else {
        0
    }
}

/// `lz4_compress_zfs(src, dst, s_len, d_len)`'s return value: 4 + the LZ4 block's length,
/// or `src.len()` when it does not fit in `d_len`.
pub fn lz4_compressed_len(src: &[u8], d_len: usize) -> usize {
    let s_len = src.len();
    let Some(osize) = d_len.checked_sub(4) else { return s_len };
    match lz4_block_len(src, osize) {
        Some(n) => n + 4,
        None => s_len,
    }
}

/// Length of the LZ4 block for `src`, None if it exceeds `osize`.
fn lz4_block_len(src: &[u8], osize: usize) -> Option<usize> {
    let iend = src.len();
    let hash_log = if iend < LZ4_64KLIMIT { LZ4_HASH_LOG + 1 } else { LZ4_HASH_LOG };
    let hash = |i: usize| (read32(src, i).wrapping_mul(2_654_435_761) >> (32 - hash_log)) as usize;
    let mut table = vec![0usize; 1 << hash_log];
    let mut op = 0usize;
    let mut anchor = 0usize;
    if iend >= LZ4_MINLENGTH {
        let mflimit = iend - LZ4_MFLIMIT;
        let matchlimit = iend - LZ4_LASTLITERALS;
        let mut ip = 0usize;
        table[hash(ip)] = ip;
        ip += 1;
        let mut forward_h = hash(ip);
        'main: loop {
            // Find a match, stepping further after every 64 misses.
            let mut attempts = (1u32 << LZ4_SKIPSTRENGTH) + 3;
            let mut forward_ip = ip;
            let mut r;
            loop {
                let h = forward_h;
                let step = (attempts >> LZ4_SKIPSTRENGTH) as usize;
                attempts += 1;
                ip = forward_ip;
                forward_ip = ip + step;
                if forward_ip > mflimit {
                    break 'main;
                }
                forward_h = hash(forward_ip);
                r = table[h];
                table[h] = ip;
                if r + LZ4_MAX_DISTANCE >= ip && r < ip && read32(src, r) == read32(src, ip) {
                    break;
                }
            }
            // Catch up backwards.
            while ip > anchor && r > 0 && src[ip - 1] == src[r - 1] {
                ip -= 1;
                r -= 1;
            }
            let literals = ip - anchor;
            op += 1 + lz4_len_bytes(literals, RUN_MASK) + literals;
            if op + 2 + 1 + LZ4_LASTLITERALS > osize {
                return None;
            }
            loop {
                // Offset, then count the match.
                op += 2;
                ip += LZ4_MINMATCH;
                r += LZ4_MINMATCH;
                let start = ip;
                while ip < matchlimit && src[ip] == src[r] {
                    ip += 1;
                    r += 1;
                }
                op += lz4_len_bytes(ip - start, ML_MASK);
                if op + 1 + LZ4_LASTLITERALS > osize {
                    return None;
                }
                if ip > mflimit {
                    anchor = ip;
                    break 'main;
                }
                table[hash(ip - 2)] = ip - 2;
                // Test the next position for an immediate match (a token with no literals).
                let h = hash(ip);
                let r2 = table[h];
                table[h] = ip;
                if r2 + LZ4_MAX_DISTANCE + 1 > ip && r2 < ip && read32(src, r2) == read32(src, ip) {
                    r = r2;
                    op += 1;
                    continue;
                }
                anchor = ip;
                ip += 1;
                forward_h = hash(ip);
                continue 'main;
            }
        }
    }
    let last = iend - anchor;
    op += 1 + lz4_len_bytes(last, RUN_MASK) + last;
    (op <= osize).then_some(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    fn random(n: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; n];
        Pcg64Mcg::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    const K: usize = 1024;

    #[test]
    fn random_bytes_do_not_compress() {
        let r = random(128 * K, 1);
        let d_len = r.len() - r.len() / 8;
        assert_eq!(lz4_compressed_len(&r, d_len), r.len());
        assert_eq!(lzjb_compressed_len(&r, d_len), r.len());
        // Without the limit: lz4 stores literals at ~1 byte each, lzjb at 9/8.
        let lz4 = lz4_compressed_len(&r, 2 * r.len());
        assert!(lz4 > r.len() && lz4 < r.len() + r.len() / 200, "{lz4}");
        let lzjb = lzjb_compressed_len(&r, 2 * r.len());
        assert!((lzjb as f64 / r.len() as f64 - 1.125).abs() < 0.002, "{lzjb}");
    }

    #[test]
    fn zeros_compress_to_a_few_bytes_per_match() {
        let z = vec![0u8; 128 * K];
        let d_len = z.len() - z.len() / 8;
        // lz4: one long match: a handful of bytes plus one length byte per 255.
        let lz4 = lz4_compressed_len(&z, d_len);
        assert!(lz4 > 500 && lz4 < 600, "{lz4}");
        // lzjb: 66-byte matches at 2 bytes each plus a copy map byte per 8 items.
        let lzjb = lzjb_compressed_len(&z, d_len);
        let expect = (128 * K / 66) as f64 * (2.0 + 1.0 / 8.0);
        assert!((lzjb as f64 / expect - 1.0).abs() < 0.02, "{lzjb} vs {expect}");
    }

    /// Half random, half zeros per 4K: lz4 ~2:1, lzjb ~1.78:1 (9/8 per literal).
    #[test]
    fn half_random_chunks() {
        let mut buf = vec![0u8; 128 * K];
        for (k, c) in buf.chunks_mut(4 * K).enumerate() {
            c[..2 * K].copy_from_slice(&random(2 * K, k as u64));
        }
        let d_len = buf.len() - buf.len() / 8;
        let lz4 = buf.len() as f64 / lz4_compressed_len(&buf, d_len) as f64;
        assert!((1.95..2.0).contains(&lz4), "{lz4}");
        let lzjb = buf.len() as f64 / lzjb_compressed_len(&buf, d_len) as f64;
        assert!((1.72..1.8).contains(&lzjb), "{lzjb}");
    }

    /// A 4K random buffer written 32 times: lz4 (64K window) finds the repeats, lzjb
    /// (1K window) cannot.
    #[test]
    fn repeated_buffers_and_the_window() {
        let one = random(4 * K, 3);
        let buf: Vec<u8> = (0..32).flat_map(|_| one.iter().copied()).collect();
        let d_len = buf.len() - buf.len() / 8;
        assert!(lz4_compressed_len(&buf, d_len) < 5 * K);
        assert_eq!(lzjb_compressed_len(&buf, d_len), buf.len());
    }

    #[test]
    fn tiny_inputs_are_literals() {
        assert_eq!(lz4_block_len(&[1, 2, 3], 100), Some(4));
        assert_eq!(lzjb_compressed_len(&[0; 10], 100), 12);
    }
}
