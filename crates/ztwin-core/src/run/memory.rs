//! How much memory running one variant takes, estimated from its config before anything
//! is built: the largest structures of each layer, each sized by the model that owns it
//! (`memory_bytes` beside each structure: the buffer pool's frames and page table, the
//! ARC's headers, the L2ARC's ring and index, the pool's allocation map, the
//! prefetcher's streams, bcache's index and buckets, the page cache's slots, the open txg's
//! map), plus what grows
//! with the run (the series' rows and their JSON) and the clients.
//!
//! An estimate of the peak heap, for refusing a run the machine cannot hold, not an
//! account: it assumes the caches fill (the ARC to `arc_c_max`, its ghost lists to as
//! much again, the L2ARC device to its capacity, the buffer pool to its frames), and takes
//! structures at the size they reach when grown (a doubling vector's capacity, a hash
//! table just after it grew, with the old table beside the new). A short run that never
//! fills its caches peaks below it. Compared with the measured peak of small configs in
//! `tests/mem_estimate.rs` (between 0.5x and 2x of it).
//!
//! Without a measured `compress_ratio`, compressed records are taken at half their
//! logical size (a lower stored size means more blocks in the same cache: more headers).

use super::*;
use crate::cache::arc::ArcLimits;
use crate::db::innodb::buffer_pool;
use crate::fs::zfs::content::FileBlocks;
use crate::fs::zfs::txg::{Txgs, WriteParams};
use crate::workload::sysbench::SysbenchGen;

/// The estimate, by part (bytes; parts that do not apply are 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// (part, bytes), in a fixed order: see [`estimate_memory`].
    pub parts: Vec<(&'static str, u64)>,
}

impl MemoryEstimate {
    /// The whole estimate, bytes.
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |s, &(_, b)| s.saturating_add(b))
    }

    /// The parts of one name (0 if none).
    pub fn part(&self, name: &str) -> u64 {
        self.parts.iter().find(|(n, _)| *n == name).map_or(0, |&(_, b)| b)
    }

    /// As JSON: `{"total": bytes, "parts": {name: bytes, ...}}`.
    pub fn to_json(&self) -> String {
        let parts: Map<String, Value> = self.parts.iter().map(|&(n, b)| (n.to_string(), json!(b))).collect();
        json!({"total": self.total(), "parts": parts}).to_string()
    }
}

/// What any run holds whatever its config (latency histograms, the compression model's
/// samples, the generated page contents, the event queue, the report), measured on the
/// smallest configs.
const FIXED_BYTES: u64 = 1 << 20;

/// Series columns of a run on a sysbench (or fio) workload, before the per-device and
/// per-layer ones (counted on the bundled scenarios).
const SERIES_BASE_COLUMNS: u64 = 16;

/// Estimates the peak heap of running `cfg` (checked with [`VariantConfig::validate`]
/// first), by part:
///
/// - `buffer_pool`: InnoDB's frames and page table;
/// - `arc_headers`: ARC headers (live and ghost) for the most blocks `arc_c_max` holds
///   (at most the dataset's blocks);
/// - `dbufs`: the dbufs alive at once (the dbuf cache, or in 0.6 one per cached block);
/// - `l2arc`: the cache device's ring and index for as many blocks as its capacity holds;
/// - `pool_map`: where each block lives (pools of several vdevs, mirrors, disks);
/// - `zfetch`: the prefetcher's streams and per-file state;
/// - `bcache`: bcache's index over the backing device and its buckets;
/// - `page_cache`: XFS/ext4's Linux page cache when a file is buffered, full to its
///   budget (32-byte page slots, the key table, shadow entries, dirty bitmaps);
/// - `writes`: the open txg's map, rewritten blocks' new places and per-record contents;
/// - `files`: per-file layout (block trees, the B+tree's page list, the L2ARC key space);
/// - `fio_maps`: fio's random maps (one bit per block per job);
/// - `series`: the per-interval series and its JSON;
/// - `clients`: the clients (threads, fio slots), their generators and the devices' slots;
/// - `fixed`: what every run holds.
pub fn estimate_memory(cfg: &VariantConfig) -> Result<MemoryEstimate> {
    cfg.validate()?;
    let mut parts: Vec<(&'static str, u64)> = Vec::new();

    // The data files: the tables, or fio's files.
    let (files, fio_write): (Vec<u64>, bool) = match (&cfg.database, &cfg.dataset, &cfg.workload) {
        (Some(DatabaseConfig::Innodb(db)), DatasetConfig::Sysbench(ds), _) => {
            let table = TableLayout::sysbench(ds.table_size, db.innodb_page_size);
            let files = vec![table.file_size(); ds.tables as usize];
            let pages = buffer_pool::file_pages(&files, db.innodb_page_size);
            parts.push(("buffer_pool", buffer_pool::memory_bytes(buffer_pool::pool_frames(db), &pages)));
            (files, false)
        }
        (Some(DatabaseConfig::Innodb(db)), DatasetConfig::Tpcc(ds), _) => {
            let (_, layouts) = build::tpcc_layouts(ds, db, cfg.seed);
            let files: Vec<u64> =
                (0..ds.table_count()).map(|t| layouts[(t % 9) as usize].file_size()).collect();
            let pages = buffer_pool::file_pages(&files, db.innodb_page_size);
            parts.push(("buffer_pool", buffer_pool::memory_bytes(buffer_pool::pool_frames(db), &pages)));
            (files, false)
        }
        (_, DatasetConfig::Files(f), WorkloadConfig::Fio(w)) => {
            parts.push(("buffer_pool", 0));
            // A phase runs a job that writes.
            let writes =
                cfg.effective_phases().iter().any(|p| match p {
                    PhaseConfig::Fio(ph) => ph.jobs.iter().filter_map(|&j| w.jobs.get(j as usize)).any(|j| {
                        !matches!(j.rw, crate::config::FioRw::Read | crate::config::FioRw::Randread)
                    }),
                    _ => false,
                });
            (f.files.iter().map(|f| f.size).collect(), writes)
        }
        _ => {
            parts.push(("buffer_pool", 0));
            (Vec::new(), false)
        }
    };
    let nfiles = files.len() as u64;
    let threads = match &cfg.workload {
        WorkloadConfig::Sysbench(w) => w.threads as u64,
        WorkloadConfig::Fio(f) => fio::max_slots(cfg, f).max(1) as u64,
    };

    let mut files_bytes = nfiles.saturating_mul((std::mem::size_of::<u64>() + 1) as u64);
    let (mut arc, mut dbufs, mut l2arc, mut pool_map, mut zfetch, mut bcache, mut writes) =
        (0, 0, 0, 0, 0, 0, 0);
    let mut page_cache = 0;
    match &cfg.filesystem {
        FsConfig::Zfs(z) => {
            // Blocks of the dataset, per level (tables share one geometry).
            let (mut data_blocks, mut indirect_blocks, mut max_levels) = (0u64, 0u64, 1u64);
            let mut geometries: Vec<(FileGeometry, u64)> = Vec::new();
            for &size in &files {
                match geometries.last_mut() {
                    Some((g, n)) if g.file_size() == size => *n += 1,
                    _ => geometries
                        .push((FileGeometry::try_new(size, z.recordsize, z.indirect_block_size)?, 1)),
                }
            }
            for (g, n) in &geometries {
                data_blocks = data_blocks.saturating_add(g.l0_blocks().saturating_mul(*n));
                let ind: u64 = (1..g.nlevels()).map(|l| g.blocks_at(l)).sum();
                indirect_blocks = indirect_blocks.saturating_add(ind.saturating_mul(*n));
                max_levels = max_levels.max(u64::from(g.nlevels()));
            }
            // Files fio lays out with zero buffers and no job writes hold zeros: holes on a
            // compressed dataset, which no read brings into the ARC.
            let zeros = matches!(&cfg.workload, WorkloadConfig::Fio(f)
                if f.jobs.iter().all(|j| j.buffers.zero_buffers == Some(true)));
            let cached_blocks = if zeros && !fio_write && z.compression != crate::config::Compression::Off {
                0
            } else {
                data_blocks.saturating_add(indirect_blocks)
            };
            let blocks = data_blocks.saturating_add(indirect_blocks);
            files_bytes = files_bytes.saturating_add(
                nfiles.saturating_mul(std::mem::size_of::<FileBlocks>() as u64 + 24 + 8 * max_levels),
            );

            // Stored size of a record: the measured ratio, else half when compressed.
            let ratio = match (&cfg.dataset, z.compression) {
                (_, crate::config::Compression::Off) => 1.0,
                (DatasetConfig::Sysbench(ds), _) => ds.compress_ratio.unwrap_or(2.0).max(1.0),
                (DatasetConfig::Tpcc(ds), _) => ds.compress_ratio.max(1.0),
                (DatasetConfig::Files(_), _) => 1.0,
            };
            let sector = 1u64 << z.ashift.min(16);
            let asize = ((f64::from(z.recordsize) / ratio) as u64).div_ceil(sector).max(1) * sector;
            let lsize = u64::from(z.recordsize).max(1);

            let params =
                ArcParams { release: z.release, ram_bytes: cfg.machine.ram_bytes, tunables: z.arc.clone() };
            let c_max = ArcLimits::from_params(&params).c_max;
            // Live headers up to arc_c_max of stored blocks, ghosts up to as much of logical
            // bytes; the open files' dnodes and bonus buffers beside them.
            let live = (c_max / asize).min(cached_blocks);
            let headers = live.saturating_add(c_max / lsize).min(cached_blocks).saturating_add(2 * nfiles);
            arc = crate::cache::arc::header_memory_bytes(headers);
            let features = z.release.features();
            let alive = if features.dbuf_cache {
                ((c_max >> crate::fs::zfs::dbuf::DBUF_CACHE_SHIFT) / lsize)
                    .saturating_add(threads.saturating_mul(max_levels))
            } else {
                live.saturating_add(threads.saturating_mul(max_levels))
            };
            dbufs = DbufLayer::memory_bytes(alive.min(cached_blocks.saturating_add(nfiles)));

            // The cache devices' rings and their one index (`cache::l2arc`).
            let devs: Vec<_> =
                z.cache.iter().filter_map(|name| cfg.devices.iter().find(|d| &d.name == name)).collect();
            if !devs.is_empty() {
                let full: u64 = devs.iter().map(|d| d.capacity_bytes.unwrap_or(0) / asize).sum();
                l2arc = crate::cache::l2arc::memory_bytes(full.min(blocks), blocks);
            }
            let allocated = if cached_blocks == 0 {
                0
            } else {
                data_blocks.saturating_mul(asize).saturating_add(indirect_blocks.saturating_mul(2 * sector))
            };
            pool_map = Pool::memory_bytes(z, &cfg.devices, nfiles, blocks, indirect_blocks, allocated);
            let max_streams = z.zfetch.zfetch_max_streams.unwrap_or(8);
            zfetch = Zfetch::memory_bytes(nfiles, max_streams);

            let wp = WriteParams::new(&z.txg, cfg.machine.ram_bytes, features.sync_on_total);
            writes = Txgs::memory_bytes(&wp, z.recordsize);
            if fio_write {
                // Every record rewritten at most once in place of its layout, and the files'
                // contents per record (a class byte, used-pointer counts per indirect block).
                writes = writes
                    .saturating_add(Pool::moved_memory_bytes(blocks))
                    .saturating_add(data_blocks.saturating_mul(2))
                    .saturating_add(indirect_blocks.saturating_mul(4));
            }
        }
        FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
            if let Some(b) = &x.bcache {
                let read_unit = match (&cfg.database, &cfg.workload) {
                    (Some(DatabaseConfig::Innodb(db)), _) => db.innodb_page_size,
                    (None, WorkloadConfig::Fio(f)) => {
                        f.jobs.iter().map(|j| j.bs_read.min(j.bs_write)).min().unwrap_or(4096)
                    }
                    (None, WorkloadConfig::Sysbench(_)) => 4096,
                };
                let fs = ExtentFs {
                    block_size: x.block_size,
                    file_size: files.iter().copied().max().unwrap_or(0),
                };
                let unit = build::bcache_unit(cfg, &fs, read_unit, b.bucket_size);
                let capacity = cfg
                    .devices
                    .iter()
                    .find(|d| d.name == b.cache_device)
                    .and_then(|d| d.capacity_bytes)
                    .unwrap_or(0);
                let backing = fs.file_size.saturating_mul(nfiles);
                bcache = Bcache::memory_bytes(
                    backing,
                    u64::from(unit),
                    capacity / b.bucket_size.max(1),
                    b.cache_mode == crate::config::BcacheCacheMode::Writeback,
                );
            }
            if build::buffered_io(cfg) {
                // Full to its budget (which the run's build derives the same way).
                let p = build::page_cache_params(cfg)?;
                let file_bytes = files.iter().fold(0u64, |s, &b| s.saturating_add(b));
                page_cache =
                    crate::fs::page_cache::PageCache::memory_bytes(p.budget_bytes, p.workingset, file_bytes);
            }
        }
    }
    if let (Some(DatabaseConfig::Innodb(db)), DatasetConfig::Tpcc(ds)) = (&cfg.database, &cfg.dataset) {
        // The nine layouts' page lists (a leaf extent's first page, every non-leaf page)
        // and the districts' shared counters.
        let (keys, layouts) = build::tpcc_layouts(ds, db, cfg.seed);
        let lists: u64 = layouts
            .iter()
            .flat_map(|l| std::iter::once(&l.clustered).chain(l.secondaries.iter()))
            .map(|ix| 8 * (ix.leaf_pages() / 64 + ix.nonleaf_pages() + 32))
            .sum();
        files_bytes =
            files_bytes.saturating_add(lists).saturating_add(8 * keys.districts() * u64::from(ds.tables));
    }
    if let (Some(DatabaseConfig::Innodb(db)), DatasetConfig::Sysbench(ds)) = (&cfg.database, &cfg.dataset) {
        // The B+tree's non-leaf page numbers and leaf extents (one layout for all tables).
        let rows_per_page = u64::from(db.innodb_page_size / 256).max(1);
        files_bytes = files_bytes.saturating_add(ds.table_size / rows_per_page / 4);
    }
    parts.push(("arc_headers", arc));
    parts.push(("dbufs", dbufs));
    parts.push(("l2arc", l2arc));
    parts.push(("pool_map", pool_map));
    parts.push(("zfetch", zfetch));
    parts.push(("bcache", bcache));
    parts.push(("page_cache", page_cache));
    parts.push(("writes", writes));
    parts.push(("files", files_bytes));
    parts.push(("fio_maps", fio_maps(cfg)));
    parts.push(("series", series_bytes(cfg, &files)));
    if let (Some(h), true) = (&cfg.machine.host_cache, cfg.devices.iter().any(|d| d.host_cache)) {
        // An Azure host cache (`dev::host_cache`): an LRU node (24 bytes), two chain heads
        // (4 bytes each) and a 64-byte sector bitmap per 256 KiB extent, at most full.
        use crate::dev::host_cache::{EXTENT_SHIFT, MAX_EXTENTS};
        let extents = (h.cache_bytes >> EXTENT_SHIFT).clamp(1, MAX_EXTENTS);
        parts.push(("host_cache", extents * 24 + (extents * 2).next_power_of_two() * 4 + extents * 64));
    }

    // The clients and their statements, generators and in-flight state in each layer;
    // each device's slots.
    let per_client = match (&cfg.workload, &cfg.dataset) {
        (WorkloadConfig::Sysbench(w), DatasetConfig::Sysbench(_)) => {
            (std::mem::size_of::<SysbenchGen>() + 2 * std::mem::size_of::<Statement>()) as u64
                + 8 * u64::from(w.random_points)
        }
        _ => 0,
    } + (std::mem::size_of::<Client>() + std::mem::size_of::<Wait>() + 512) as u64;
    let slots: u64 = cfg.devices.iter().map(|d| u64::from(d.parallelism)).sum::<u64>().saturating_mul(32);
    // The database's own threads' slots and statements (the purge threads run their
    // batches as statements), counted whether or not the workload writes.
    let db_threads = match (&cfg.database, &cfg.workload) {
        (Some(DatabaseConfig::Innodb(d)), WorkloadConfig::Sysbench(_)) => {
            3 + u64::from(d.innodb_purge_threads.unwrap_or(4).min(32))
        }
        _ => 0,
    };
    let clients = threads.saturating_add(db_threads).saturating_mul(per_client);
    parts.push(("clients", clients.saturating_add(slots)));
    parts.push(("fixed", FIXED_BYTES));
    Ok(MemoryEstimate { parts })
}

/// [`estimate_memory`] of a variant given as JSON; the answer as [`MemoryEstimate::to_json`].
pub fn estimate_memory_json(config_json: &str) -> Result<String> {
    Ok(estimate_memory(&VariantConfig::from_json(config_json)?)?.to_json())
}

/// fio's random maps: a bit per block (and a bit per 64 of them) for each job clone's
/// file reading at uniform random with the map on.
fn fio_maps(cfg: &VariantConfig) -> u64 {
    let (WorkloadConfig::Fio(f), DatasetConfig::Files(ds)) = (&cfg.workload, &cfg.dataset) else {
        return 0;
    };
    let mut bytes = 0u64;
    for j in &f.jobs {
        let random = matches!(
            j.rw,
            crate::config::FioRw::Randread | crate::config::FioRw::Randwrite | crate::config::FioRw::Randrw
        );
        if !random || j.norandommap || j.random_distribution != crate::config::FioDistribution::Random {
            continue;
        }
        let bs = u64::from(j.bs_read.min(j.bs_write).max(1));
        for clone in &j.clone_files {
            for &file in clone {
                let size = ds.files.get(file as usize).map_or(0, |f| f.size).min(j.file_range.max(1));
                bytes = bytes.saturating_add((size / bs).div_ceil(64) * 8 * 65 / 64);
            }
        }
    }
    bytes
}

/// The series: a column of f64 per metric, one row per report interval (a vector grown
/// by doubling), and then its JSON (a value of 32 bytes per cell, and the text).
fn series_bytes(cfg: &VariantConfig, files: &[u64]) -> u64 {
    let interval = cfg.run.report_interval_ns.max(1);
    // Phases without a set length: the data read (or written) once at the devices'
    // combined admitted rate, else one row.
    let rate: f64 = cfg
        .devices
        .iter()
        .map(|d| d.throughput_limit_bytes_per_sec.unwrap_or(d.transfer_bytes_per_sec).max(1.0))
        .sum::<f64>()
        .max(1.0);
    let pass_ns = (files.iter().sum::<u64>() as f64 / rate * SEC as f64).min(u64::MAX as f64) as u64;
    let mut rows = 0u64;
    for p in cfg.effective_phases() {
        let ns = match p {
            PhaseConfig::Workload(w) => w.warmup_ns.saturating_add(w.duration_ns),
            PhaseConfig::Tune(_) | PhaseConfig::Restart(_) => 0,
            PhaseConfig::Cat(c) => pass_ns.saturating_mul(u64::from(c.passes.max(1))),
            PhaseConfig::Fio(_) => match &cfg.workload {
                WorkloadConfig::Fio(f) => f
                    .jobs
                    .iter()
                    .map(|j| j.runtime_ns.saturating_add(j.ramp_time_ns))
                    .max()
                    .unwrap_or(0)
                    .max(pass_ns),
                WorkloadConfig::Sysbench(_) => pass_ns,
            },
        };
        rows = rows.saturating_add(ns / interval + 1);
    }
    let per_device = 8u64;
    let layer = match &cfg.filesystem {
        FsConfig::Zfs(z) => 40 + if z.cache.is_empty() { 0 } else { 16 },
        FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
            if x.bcache.is_some() {
                12
            } else {
                0
            }
        }
    };
    let columns = SERIES_BASE_COLUMNS + per_device * cfg.devices.len() as u64 + layer;
    let cells = rows.max(1).checked_next_power_of_two().unwrap_or(u64::MAX).saturating_mul(columns);
    // The columns, then the JSON: a Value per cell and about 24 bytes of text per cell
    // in a string grown by doubling.
    cells.saturating_mul(8 + 32 + 48)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_variant;
    use proptest::prelude::*;

    fn variant(bp: u64, arc: u64, tables: u32) -> VariantConfig {
        let mut c = test_variant();
        c.machine.ram_bytes = 256 << 30;
        let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
        db.innodb_buffer_pool_size = bp;
        let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
        // 2.2 takes any zfs_arc_max from 64 MiB to RAM (0.8 ignores one below c_min).
        z.release = crate::config::ZfsRelease::V2_2;
        z.arc.zfs_arc_max = arc;
        let DatasetConfig::Sysbench(ds) = &mut c.dataset else { unreachable!() };
        ds.tables = tables;
        ds.table_size = 1_000_000;
        c
    }

    fn total(bp: u64, arc: u64, tables: u32) -> u64 {
        estimate_memory(&variant(bp, arc, tables)).unwrap().total()
    }

    #[test]
    fn every_part_is_named_and_the_total_is_their_sum() {
        let e = estimate_memory(&test_variant()).unwrap();
        let names: Vec<_> = e.parts.iter().map(|p| p.0).collect();
        assert_eq!(
            names,
            [
                "buffer_pool",
                "arc_headers",
                "dbufs",
                "l2arc",
                "pool_map",
                "zfetch",
                "bcache",
                "page_cache",
                "writes",
                "files",
                "fio_maps",
                "series",
                "clients",
                "fixed"
            ]
        );
        assert_eq!(e.total(), e.parts.iter().map(|p| p.1).sum::<u64>());
        let doc: Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(doc["total"], json!(e.total()));
        assert!(estimate_memory(&test_fio_variant()).unwrap().total() > FIXED_BYTES);
    }

    /// A buffered run on ext4 counts its page cache full to the budget (32 bytes a 4 KiB
    /// page, and more for the key table and shadows); an O_DIRECT one has none.
    #[test]
    fn a_buffered_run_counts_its_page_cache() {
        let mut c = test_fio_variant();
        c.filesystem = FsConfig::Ext4(crate::config::ExtentFsConfig {
            device: "disk".into(),
            block_size: 4096,
            bcache: None,
        });
        c.machine.mem_available_bytes = Some(1 << 30);
        let part = estimate_memory(&c).unwrap().part("page_cache");
        assert!(((1 << 30) / 4096 * 32..(1 << 30) / 4096 * 128).contains(&part), "{part}");
        let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
        for j in &mut f.jobs {
            j.direct = true;
        }
        assert_eq!(estimate_memory(&c).unwrap().part("page_cache"), 0);
    }

    /// The parts the examples would have allocated are in the estimate, so a run
    /// that cannot fit is refused before it allocates: a 4 TiB buffer pool in 4K pages
    /// (2^30 frames: 28 bytes each of LRU node and free-slot entry, and a page table).
    #[test]
    fn huge_configs_are_estimated_not_built() {
        let mut c = variant(4 << 40, 128 << 20, 4);
        c.machine.ram_bytes = 8 << 40;
        let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
        db.innodb_page_size = 4096;
        let e = estimate_memory(&c).unwrap();
        assert!(e.part("buffer_pool") > 28 << 30, "{:?}", e.parts);
    }

    use crate::config::test_fio_variant;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// More buffer pool, more ARC or more tables never need less memory.
        #[test]
        fn the_estimate_grows_with_the_buffer_pool_the_arc_and_the_tables(
            bp in (16u64 << 20)..(64 << 30), more_bp in 0u64..(64 << 30),
            arc in (64u64 << 20)..(64 << 30), more_arc in 0u64..(64 << 30),
            tables in 1u32..2000, more_tables in 0u32..2000,
        ) {
            let base = total(bp, arc, tables);
            prop_assert!(total(bp + more_bp, arc, tables) >= base);
            prop_assert!(total(bp, arc + more_arc, tables) >= base);
            prop_assert!(total(bp, arc, tables + more_tables) >= base);
        }
    }
}
