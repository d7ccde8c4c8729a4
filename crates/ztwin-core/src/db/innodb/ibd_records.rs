//! How ZFS stores the records of a sysbench table's `.ibd` file: the bytes of each record
//! are the InnoDB pages it covers ([`super::btree::TableLayout::page_roles`] says which
//! page is which, [`super::page_image`] writes them as prepare leaves them), and the
//! dataset's compressor decides its stored size on those bytes (`zio_write_compress`:
//! the 1/8 rule, embedding, rounding to the sector; `fs::zfs::compression`). So the ratio
//! follows from the content, the record size and ashift, as on a real pool: 16K pages
//! that lz4 shrinks to about 12.7K keep most of the saving at ashift 9 and none at ashift
//! 12 (16K records), while 32K records of two such pages fit in 24K or 28K.
//!
//! A record of `recordsize` bytes covers `recordsize / page_size` consecutive pages (or a
//! part of one page when the record is smaller). Records are grouped into classes by the
//! roles of the pages they cover (clustered leaf, clustered node pointer, k leaf, k node
//! pointer, space management, never written); for each class up to
//! [`SAMPLES_PER_CLASS`] records spread over the file (one in the middle of each of as
//! many equal strata of the class's records) are generated and compressed, and
//! every record of the class takes one of those stored sizes (`ContentSizes`). Where those
//! samples disagree (a class whose compressed length sits on a sector boundary: two 16K
//! leaves compress to about 24.58 KB, and 47% of such 32K records fit in six 4K sectors,
//! 53% need seven), the class is sampled again with as many records as make the standard
//! error of its mean stored size at most [`CONTENT_SE_TARGET`] of the unit
//! ([`samples_needed`]; at most [`CONTENT_SAMPLE_BYTES`] of records): 64 samples of such
//! a class leave the share of six-sector records uncertain by +-6%, i.e. the dataset's
//! compressratio by +-0.015.
//!
//! Simplifications:
//! 1. Pages above level 1 and the k index's node-pointer pages are written as clustered
//!    level-1 pages (they are about 0.1% of a table).
//! 2. Space-management pages (FSP_HDR, IBUF_BITMAP, INODE, XDES) are written as their FIL
//!    header on zeros: a few sectors, never read by the modelled workloads.
//! 3. Page contents are those of [`super::page_image`] (its own simplifications), whose
//!    B+tree is the same shape as the layout's; where the two count a level's pages
//!    differently by one, the generator's last page stands in.
//! 4. The stored sizes of a class are the samples', chosen per record by a hash: the
//!    distribution is the content's (to the standard error above), not each record's own.

use std::collections::HashMap;

use super::btree::{PageRole, TableLayout};
use super::page_image::{Charset, Flavor, KDistribution, SysbenchTable};
use crate::config::{CharacterSet, InnodbServer, PrepareRandType};
use crate::error::{Error, Result};
use crate::fs::zfs::compression::{ContentSizes, StoredBlock};

/// Records generated and compressed per class at first (and at most, for a class whose
/// samples all store alike).
pub const SAMPLES_PER_CLASS: usize = 64;

/// Largest standard error of a class's mean stored size, as a fraction of its unit's
/// logical bytes, that the samples may leave (an estimator precision, not a property of
/// the modelled system: 0.2% keeps the dataset's compressratio within about +-0.003).
pub const CONTENT_SE_TARGET: f64 = 0.002;

/// Bound on the bytes of records generated and compressed for one class when it is
/// sampled again (bounds the start-up time: 32 MiB is about 1000 records of 32K).
pub const CONTENT_SAMPLE_BYTES: u64 = 32 << 20;

/// Units to sample for a class of `count` units of `unit` bytes whose pilot samples store
/// as `stored` (each unit's physical bytes, its parts summed): enough that the standard
/// error of the mean, sd / sqrt(n) with the pilot's sample standard deviation, is at most
/// [`CONTENT_SE_TARGET`] x unit; never fewer than the pilot, never more than `count` or
/// [`CONTENT_SAMPLE_BYTES`] / unit.
pub fn samples_needed(stored: &[u64], count: u64, unit: u64) -> u64 {
    let n = stored.len() as u64;
    if n < 2 || n >= count {
        return n;
    }
    let mean = stored.iter().map(|&s| s as f64).sum::<f64>() / n as f64;
    let var = stored.iter().map(|&s| (s as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let target = CONTENT_SE_TARGET * unit as f64;
    let need = (var / (target * target)).ceil() as u64;
    let cap = (CONTENT_SAMPLE_BYTES / unit.max(1)).max(n);
    need.clamp(n, cap.min(count))
}

/// A page's kind for classing records (what decides how its bytes compress).
fn kind(role: PageRole) -> u8 {
    match role {
        PageRole::Free => 0,
        PageRole::Space => 1,
        PageRole::Clustered { level: 0, .. } => 2,
        PageRole::Clustered { .. } => 3,
        PageRole::Secondary { level: 0, .. } => 4,
        PageRole::Secondary { .. } => 5,
    }
}

/// The page generator for a table of `rows` rows written by `server` in `charset`.
pub fn generator(
    server: InnodbServer,
    charset: CharacterSet,
    rand_type: PrepareRandType,
    rows: u64,
    page_size: u32,
    seed: u64,
) -> SysbenchTable {
    let flavor = match server {
        InnodbServer::Mysql57 | InnodbServer::Percona57 => Flavor::MySql57,
        InnodbServer::Mariadb1011 => Flavor::MariaDb1011,
    };
    let mut t = SysbenchTable::new(flavor, rows.max(2), seed);
    t.page_size = page_size as usize;
    t.charset = match charset {
        CharacterSet::Latin1 => Charset::Latin1,
        CharacterSet::Utf8mb4 => Charset::MultiByte,
    };
    t.k_dist = match rand_type {
        PrepareRandType::Special => KDistribution::Special { iter: 12, pct: 1, res: 75 },
        PrepareRandType::Uniform => KDistribution::Uniform,
    };
    t
}

/// Writes page `page_no` (role `role`) of the file into `page`.
fn fill_page(gen: &SysbenchTable, role: PageRole, page_no: u64, page: &mut [u8]) {
    page.fill(0);
    match role {
        PageRole::Free => {}
        PageRole::Space => {
            // FIL header: page number and type (FSP_HDR 8 for page 0, else XDES-like).
            page[4..8].copy_from_slice(&(page_no as u32).to_be_bytes());
            let ty: u16 = if page_no == 0 { 8 } else { 9 };
            page[24..26].copy_from_slice(&ty.to_be_bytes());
        }
        PageRole::Clustered { level: 0, index } => {
            gen.fill_clustered_leaf(index.min(gen.clustered_leaves() - 1), page)
        }
        PageRole::Secondary { level: 0, index } => {
            gen.fill_secondary_leaf(index.min(gen.secondary_leaves() - 1), page)
        }
        PageRole::Clustered { index, .. } | PageRole::Secondary { index, .. } => {
            let n = gen.clustered_level1_pages();
            if n == 0 {
                gen.fill_clustered_leaf(0, page)
            } else {
                gen.fill_clustered_nonleaf(index.min(n - 1), page)
            }
        }
    }
}

/// The stored sizes of the records of `layout`'s file at `recordsize`, learnt from the
/// pages `gen` writes, each sample stored by `store` (the dataset's compressor on the
/// record's bytes). Records are classed in units: a record, or a page when records are
/// smaller than pages (each of its parts then a class of its own). Memory: the runs of
/// unit classes, a byte per 64 units and the samples; nothing per record or page.
pub fn content_sizes(
    layout: &TableLayout,
    gen: &SysbenchTable,
    recordsize: u32,
    mut store: impl FnMut(&[u8]) -> Result<StoredBlock>,
) -> Result<ContentSizes> {
    let ps = u64::from(layout.page_size);
    let rs = u64::from(recordsize);
    let file = layout.file_size();
    let nrec = file.div_ceil(rs);
    // A unit: `unit` bytes, `parts` records.
    let (unit, parts) = if rs < ps { (ps, ps / rs) } else { (rs, 1) };
    let nunits = file.div_ceil(unit);
    let pages_of = |u: u64| {
        let (start, end) = (u * unit, ((u + 1) * unit).min(file));
        (start / ps, (end - 1) / ps, end - start)
    };
    // Pass 1: each unit's signature (the kinds of the pages it covers) gives its class.
    let mut classes: HashMap<Vec<u8>, u8> = HashMap::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut runs: Vec<(u64, u8)> = Vec::new();
    let mut sig = Vec::new();
    for u in 0..nunits {
        sig.clear();
        let (p0, p1, _) = pages_of(u);
        sig.extend((p0..=p1).map(|p| kind(layout.page_role(p))));
        let next = classes.len();
        let c = match classes.get(&sig) {
            Some(&c) => c,
            None if (next as u64 + 1) * parts <= 4096 && next < usize::from(u8::MAX) => {
                classes.insert(sig.clone(), next as u8);
                counts.push(0);
                next as u8
            }
            None => {
                return Err(Error::config(
                    "filesystem.recordsize",
                    "too many kinds of records in a table file for its page size".to_string(),
                ))
            }
        };
        counts[usize::from(c)] += 1;
        if runs.last().is_none_or(|&(_, k)| k != c) {
            runs.push((u, c));
        }
    }
    // Pass 2: up to SAMPLES_PER_CLASS units of each class, evenly spread over its units
    // (the middle of each of n equal strata: ranks (2j + 1) * count / 2n, so the class's
    // first unit, e.g. the half-full leftmost leaf, is not always one of the samples),
    // generated; each part of a unit is a sample of its own class.
    let want: Vec<u64> = counts.iter().map(|&c| c.min(SAMPLES_PER_CLASS as u64)).collect();
    let mut samples: Vec<Vec<StoredBlock>> = vec![Vec::new(); counts.len() * parts as usize];
    let mut page = vec![0u8; ps as usize];
    let mut bytes = vec![0u8; unit as usize];
    let mut sample_pass = |want: &[u64], samples: &mut Vec<Vec<StoredBlock>>| -> Result<()> {
        let mut seen = vec![0u64; counts.len()];
        let mut taken = vec![0u64; counts.len()];
        for (j, &(first, c)) in runs.iter().enumerate() {
            let end = runs.get(j + 1).map_or(nunits, |r| r.0);
            let k = usize::from(c);
            if want[k] == 0 {
                continue;
            }
            for u in first..end {
                let rank = seen[k];
                seen[k] += 1;
                if taken[k] >= want[k] || rank != (2 * taken[k] + 1) * counts[k] / (2 * want[k]) {
                    continue;
                }
                taken[k] += 1;
                let (p0, p1, len) = pages_of(u);
                for p in p0..=p1 {
                    fill_page(gen, layout.page_role(p), p, &mut page);
                    let off = ((p - p0) * ps) as usize;
                    bytes[off..off + ps as usize].copy_from_slice(&page);
                }
                // The file's last record may be shorter than the record size: zeros after.
                bytes[len as usize..].fill(0);
                for (part, chunk) in bytes.chunks(rs as usize).enumerate() {
                    samples[k * parts as usize + part].push(store(chunk)?);
                }
            }
        }
        Ok(())
    };
    sample_pass(&want, &mut samples)?;
    // Pass 3: classes whose pilot leaves the mean stored size too uncertain are sampled
    // again, with more units evenly spread (the pilot's samples are replaced).
    let mut more = vec![0u64; counts.len()];
    for (k, m) in more.iter_mut().enumerate() {
        let parts_of = &samples[k * parts as usize..(k + 1) * parts as usize];
        let stored: Vec<u64> =
            (0..want[k] as usize).map(|i| parts_of.iter().map(|s| u64::from(s[i].psize())).sum()).collect();
        let need = samples_needed(&stored, counts[k], unit);
        if need > want[k] {
            *m = need;
        }
    }
    if more.iter().any(|&m| m > 0) {
        for (k, &m) in more.iter().enumerate() {
            if m > 0 {
                for s in &mut samples[k * parts as usize..(k + 1) * parts as usize] {
                    s.clear();
                }
            }
        }
        sample_pass(&more, &mut samples)?;
    }
    Ok(ContentSizes::from_runs(recordsize, nrec, parts, &runs, samples))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Compression;
    use crate::fs::zfs::compression::CompressionModel;

    fn ratio(server: InnodbServer, rows: u64, recordsize: u32, ashift: u8) -> (f64, ContentSizes) {
        ratio_in(server, CharacterSet::Latin1, rows, recordsize, ashift)
    }

    fn ratio_in(
        server: InnodbServer,
        charset: CharacterSet,
        rows: u64,
        recordsize: u32,
        ashift: u8,
    ) -> (f64, ContentSizes) {
        let layout = TableLayout::sysbench(rows, 16384);
        let gen = generator(server, charset, PrepareRandType::Uniform, rows, 16384, 7);
        let m = CompressionModel::new(Compression::Lz4, 1.0, ashift, 7).unwrap();
        let c = content_sizes(&layout, &gen, recordsize, |b| m.stored_sample(b)).unwrap();
        let m = m.with_content(c.clone()).unwrap();
        (m.mean_stored_ratio(recordsize), c)
    }

    #[test]
    fn utf8mb4_pages_with_their_insert_undo_pointers_push_32k_records_past_24k() {
        // Two MariaDB 10.11 leaves compress to about 24.2 KB in latin1 with reset system
        // columns but about 24.6 KB as a Debian server writes them (utf8mb4: a length byte
        // per CHAR; DB_ROLL_PTR keeps each row's insert undo offset): most 32K records then
        // need seven 4K sectors, not six. A real 2.65M-row table prepared on 10.11.19 was
        // stored at 1.223x with ZFS's lz4 at ashift 12.
        let gen = generator(
            InnodbServer::Mariadb1011,
            CharacterSet::Utf8mb4,
            PrepareRandType::Uniform,
            1000,
            16384,
            1,
        );
        assert_eq!(
            (gen.charset, gen.sys_columns),
            (Charset::MultiByte, super::super::page_image::SysColumns::AsInserted)
        );
        let (latin1, _) = ratio_in(InnodbServer::Mariadb1011, CharacterSet::Latin1, 200_000, 32768, 12);
        let (utf8, _) = ratio_in(InnodbServer::Mariadb1011, CharacterSet::Utf8mb4, 200_000, 32768, 12);
        assert!(utf8 < latin1 - 0.05, "utf8mb4 {utf8} against latin1 {latin1}");
        assert!((1.17..1.28).contains(&utf8), "{utf8}");
    }

    #[test]
    fn samples_needed_follows_the_pilots_spread() {
        let unit = 32768u64;
        // All alike: the pilot is enough.
        assert_eq!(samples_needed(&[28672; 64], 10_000, unit), 64);
        // Half six sectors, half seven: sd ~2064 bytes; SE <= 0.2% of 32K needs ~993.
        let split: Vec<u64> = (0..64).map(|i| if i % 2 == 0 { 24576 } else { 28672 }).collect();
        let n = samples_needed(&split, 100_000, unit);
        let sd = 2048.0 * (64.0f64 / 63.0).sqrt();
        assert_eq!(n, (sd / (CONTENT_SE_TARGET * unit as f64)).powi(2).ceil() as u64);
        assert!((900..1024).contains(&n), "{n}");
        // Bounded by the class's units and by CONTENT_SAMPLE_BYTES.
        assert_eq!(samples_needed(&split, 500, unit), 500);
        let wide: Vec<u64> = (0..64).map(|i| if i % 2 == 0 { 65536 } else { 131072 }).collect();
        assert_eq!(samples_needed(&wide, 100_000, 128 << 10), CONTENT_SAMPLE_BYTES / (128 << 10));
        // The same two sizes in a 128K unit are a smaller share of it: the pilot suffices.
        assert_eq!(samples_needed(&split, 100_000, 128 << 10), 64);
        // A class with fewer units than the pilot is already whole.
        assert_eq!(samples_needed(&split[..10], 10, unit), 10);
    }

    #[test]
    fn a_class_on_a_sector_edge_is_sampled_until_its_mean_is_known() {
        // MariaDB 10.11 utf8mb4 leaves: two per 32K record compress to about 24.58 KB, on
        // the edge of six 4K sectors. Every unit of the clustered-leaf class, generated
        // and compressed, against the class's samples.
        let rows = 1_000_000;
        let rs = 32768u32;
        let layout = TableLayout::sysbench(rows, 16384);
        let gen = generator(
            InnodbServer::Mariadb1011,
            CharacterSet::Utf8mb4,
            PrepareRandType::Uniform,
            rows,
            16384,
            5,
        );
        let m = CompressionModel::new(Compression::Lz4, 1.0, 12, 5).unwrap();
        let c = content_sizes(&layout, &gen, rs, |b| m.stored_sample(b)).unwrap();
        let leaf_pair = |r: u64| {
            (0..2).all(|q| matches!(layout.page_role(2 * r + q), PageRole::Clustered { level: 0, .. }))
        };
        let first = (0..c.records()).find(|&r| leaf_pair(r)).unwrap();
        let class = c.class(first).unwrap();
        let samples = &c.samples[class];
        let (mut sum, mut n, mut page) = (0u64, 0u64, vec![0u8; 16384]);
        let mut rec = vec![0u8; rs as usize];
        for r in (0..c.records()).filter(|&r| c.class(r) == Some(class)) {
            for q in 0..2u64 {
                fill_page(&gen, layout.page_role(2 * r + q), 2 * r + q, &mut page);
                rec[q as usize * 16384..(q as usize + 1) * 16384].copy_from_slice(&page);
            }
            sum += u64::from(m.stored_sample(&rec).unwrap().psize());
            n += 1;
        }
        let whole = sum as f64 / n as f64;
        let sampled = samples.iter().map(|b| f64::from(b.psize())).sum::<f64>() / samples.len() as f64;
        // Both sizes occur, so the class was sampled past the pilot.
        assert!(samples.iter().any(|b| b.psize() == 24576) && samples.iter().any(|b| b.psize() == 28672));
        assert!(samples.len() > 4 * SAMPLES_PER_CLASS, "{} samples", samples.len());
        // Within four standard errors (0.2% of the unit each) of every unit's mean.
        let tol = 4.0 * CONTENT_SE_TARGET * f64::from(rs);
        assert!((sampled - whole).abs() < tol, "sampled {sampled} whole {whole} over {n} units");
        // A class that stores alike keeps the pilot: the k index leaves (all 28K).
        let k_pair = (0..c.records())
            .find(|&r| {
                (0..2).all(|q| matches!(layout.page_role(2 * r + q), PageRole::Secondary { level: 0, .. }))
            })
            .unwrap();
        let k_samples = &c.samples[c.class(k_pair).unwrap()];
        assert!(k_samples.iter().all(|b| b.psize() == 28672));
        assert_eq!(k_samples.len(), SAMPLES_PER_CLASS);
    }

    #[test]
    fn a_records_stored_size_follows_its_content_recordsize_and_ashift() {
        // 16K records of 16K pages at ashift 12: a page lz4 shrinks by about a fifth still
        // needs four sectors, so it is stored uncompressed; only the k index's pages
        // (which shrink further) save a sector. 32K records of two pages save a fifth.
        let (r16, c16) = ratio(InnodbServer::Mariadb1011, 200_000, 16384, 12);
        let (r32, _) = ratio(InnodbServer::Mariadb1011, 200_000, 32768, 12);
        assert!((1.0..1.1).contains(&r16), "16K at ashift 12: {r16}");
        assert!(r32 > 1.15 && r32 < 1.45, "32K at ashift 12: {r32}");
        // At ashift 9 the same 16K pages keep their saving.
        let (r16_9, _) = ratio(InnodbServer::Mysql57, 200_000, 16384, 9);
        assert!(r16_9 > 1.15 && r16_9 < 1.45, "16K at ashift 9: {r16_9}");
        // Never-written pages at the end of the file are holes.
        let free = c16.class(c16.records() - 1).unwrap();
        assert!(c16.samples[free].iter().all(|b| *b == StoredBlock::Hole));
    }

    #[test]
    fn records_smaller_than_a_page_are_its_parts() {
        let (_, c) = ratio(InnodbServer::Mysql57, 20_000, 4096, 12);
        let layout = TableLayout::sysbench(20_000, 16384);
        assert_eq!(c.records(), layout.file_size() / 4096);
        // Each clustered leaf's four quarters are four classes of their own.
        let leaf_quarters: std::collections::HashSet<usize> =
            (0..4).map(|q| c.class(4 * 10 + q).unwrap()).collect();
        assert_eq!(leaf_quarters.len(), 4);
    }
}
