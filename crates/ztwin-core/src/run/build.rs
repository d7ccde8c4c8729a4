//! Building the stack of one variant: devices, database, filesystem and caches.

use super::*;
use crate::cache::arc::{ArcLimits, BlockKey};
use crate::config::InnodbServer;
use crate::db::innodb::ibd_records;
use crate::db::innodb::mariadb_redo::{LogDevice, LogFileMode, MariaRedoParams};
use crate::db::innodb::writes::{system_file_pages, DbFiles, WriteParams, Writes, BINLOG_SLOTS};
use crate::fs::buffered::BufferedIo;
use crate::fs::extent::{BlockTarget, Journal};
use crate::fs::journal::ext4::{Ext4FileSpec, Ext4Journal, Ext4Layout, Ext4Params};
use crate::fs::journal::xfs::{XfsLayout, XfsLog, XfsParams};
use crate::fs::journal::DeviceCaps;
use crate::fs::page_cache::{budget, PageCacheParams, PAGE_SIZE};
use crate::fs::zfs::content::{FileBlocks, CLASS_HOLE, CLASS_MEAN_RATIO};
use crate::fs::zfs::zfetch::ZfetchParams;
use crate::fs::zfs::zil::{self, Zil, ZilParams};

impl<'a> Sim<'a> {
    pub(super) fn new(cfg: &'a VariantConfig) -> Result<Self> {
        let c = &cfg.machine.cpu;
        let costs = Costs {
            statement: scaled(c.statement_ns, c.speed),
            row: scaled(c.row_ns, c.speed),
            page_access: scaled(c.page_access_ns, c.speed),
            syscall: scaled(c.syscall_ns, c.speed),
            device_io: scaled(c.device_io_ns, c.speed),
        };
        let device_index = |name: &str, field: &str| {
            cfg.devices
                .iter()
                .position(|d| d.name == name)
                .ok_or_else(|| Error::config(field, format!("names unknown device '{name}'")))
        };
        for (i, d) in cfg.devices.iter().enumerate() {
            Device::check(d, |f| format!("devices[{i}] ({}).{f}", d.name))?;
        }
        crate::dev::controller::check(&cfg.controllers, &cfg.devices)?;
        let mut devices: Vec<Device> =
            cfg.devices.iter().enumerate().map(|(i, d)| Device::new(d, device_seed(cfg.seed, i))).collect();
        // Volumes behind a RAID controller send their I/O through its cache.
        crate::dev::controller::attach(&cfg.controllers, &cfg.devices, &mut devices, cfg.seed);
        attach_host_io(cfg, &mut devices);
        // The database and its files, or fio's files (which exist once a job makes them).
        let (db, files, exists, compress_ratio, class) = match (&cfg.database, &cfg.dataset) {
            (Some(DatabaseConfig::Innodb(db)), DatasetConfig::Sysbench(_) | DatasetConfig::Tpcc(_)) => {
                // The dataset names the schema; the database lays its tables out.
                let (mut database, mut files, tables, compress_ratio) = match &cfg.dataset {
                    DatasetConfig::Tpcc(ds) => {
                        let (_, layouts) = tpcc_layouts(ds, db, cfg.seed);
                        let files: Vec<u64> =
                            (0..ds.table_count()).map(|t| layouts[(t % 9) as usize].file_size()).collect();
                        (
                            Database::innodb_tables(db, layouts),
                            files,
                            ds.table_count(),
                            Some(ds.compress_ratio),
                        )
                    }
                    // Invariant: the outer match arm admits sysbench and tpcc datasets only.
                    DatasetConfig::Files(_) => unreachable!("a files dataset has no database"),
                    DatasetConfig::Sysbench(ds) => {
                        let schema = TableSchema::SYSBENCH;
                        let database = Database::innodb(
                            db,
                            TableLayout::new(&schema, ds.table_size, db.innodb_page_size),
                        );
                        let files = vec![database.file_size(); ds.tables as usize];
                        (database, files, ds.tables, ds.compress_ratio)
                    }
                };
                database.size_page_table(&files);
                // The write options are checked whatever the workload (a read-only run
                // ignores them, but a bad one is refused all the same).
                WriteParams::new(db)?;
                if let WorkloadConfig::Sysbench(wl) = &cfg.workload {
                    if cfg.sysbench_writes() {
                        // The write path's files: ibdata1 (the doublewrite buffer, undo
                        // logs), then the redo log files.
                        let params = WriteParams::new(db)?;
                        let binlogs = if params.binlog.is_some() { BINLOG_SLOTS } else { 0 };
                        let db_files = DbFiles { tables, logs: params.log_files, binlogs };
                        files.push(system_file_pages() * u64::from(db.innodb_page_size));
                        files.extend((0..params.log_files).map(|_| params.log_file_size));
                        if let Some(b) = &params.binlog {
                            // A file grows past max_binlog_size by the group that reached it.
                            files.extend((0..binlogs).map(|_| b.max_binlog_size + (16 << 20)));
                        }
                        let threads = wl.threads as usize;
                        // The block device's logical sector under ext4/XFS (ASSUMED 512
                        // bytes, as the lab's virtio disks and most cloud volumes report);
                        // none under a ZFS dataset.
                        let block_sector = match &cfg.filesystem {
                            FsConfig::Zfs(_) => None,
                            FsConfig::Xfs(_) | FsConfig::Ext4(_) => Some(512),
                        };
                        // Whether the kernel reports the data files' device rotational
                        // (MariaDB flushes neighbours only there): a ZFS dataset's
                        // anonymous device is never among the non-rotational devices;
                        // XFS/ext4: the device's; an md array is non-rotational only when
                        // every member is (md.c `md_run`).
                        let rotational = match &cfg.filesystem {
                            FsConfig::Zfs(_) => true,
                            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                                let rot = |n: &str| {
                                    cfg.devices.iter().any(|d| d.name == n && d.reports_rotational())
                                };
                                rot(&x.device)
                                    || cfg
                                        .arrays
                                        .iter()
                                        .any(|a| a.name == x.device && a.members.iter().any(|m| rot(m)))
                            }
                        };
                        let table_pages = files[..tables as usize].iter().copied().max().unwrap_or(0)
                            / u64::from(db.innodb_page_size);
                        database.attach_writes(Writes::new(
                            db,
                            db_files,
                            table_pages,
                            threads,
                            cfg.seed,
                            block_sector,
                            rotational,
                        )?);
                        database.attach_row_locks(threads);
                    }
                }
                let exists = vec![true; files.len()];
                (Some(database), files, exists, compress_ratio, CLASS_MEAN_RATIO)
            }
            (None, DatasetConfig::Files(f)) => {
                let files: Vec<u64> = f.files.iter().map(|f| f.size).collect();
                let exists = vec![false; files.len()];
                (None, files, exists, Some(1.0), CLASS_HOLE)
            }
            (None, DatasetConfig::Sysbench(_) | DatasetConfig::Tpcc(_))
            | (Some(DatabaseConfig::Innodb(_)), DatasetConfig::Files(_)) => {
                return Err(Error::config(
                    "database",
                    "a sysbench dataset needs a database; fio files need none",
                ))
            }
        };
        let (threads, source) = match (&cfg.workload, &cfg.dataset) {
            (WorkloadConfig::Sysbench(wl), DatasetConfig::Sysbench(ds)) => (
                {
                    SysbenchGen::check(wl)?;
                    wl.threads as usize
                },
                StatementSource::Sysbench(
                    (0..wl.threads).map(|t| SysbenchGen::for_thread(cfg.seed, t, wl, ds)).collect(),
                ),
            ),
            // One client per in-flight slot of the busiest phase (at least one for cat).
            (WorkloadConfig::Fio(f), _) => {
                // fio's own job rules (the workload model's): the files, then each phase's jobs.
                if let DatasetConfig::Files(files) = &cfg.dataset {
                    crate::workload::fio::validate(f, files, &cfg.filesystem)?;
                }
                for (k, p) in cfg.phases.iter().enumerate() {
                    if let PhaseConfig::Fio(ph) = p {
                        crate::workload::fio::validate_phase(f, ph, &format!("phases[{k}].jobs"))?;
                    }
                }
                if cfg.phases.is_empty() {
                    let all = crate::config::FioPhase {
                        name: "fio".into(),
                        jobs: (0..f.jobs.len() as u32).collect(),
                    };
                    crate::workload::fio::validate_phase(f, &all, "workload.jobs")?;
                }
                (fio::max_slots(cfg, f).max(1), StatementSource::None)
            }
            (WorkloadConfig::Sysbench(wl), DatasetConfig::Tpcc(ds)) => {
                let Some(DatabaseConfig::Innodb(idb)) = &cfg.database else {
                    return Err(Error::config("database", "a tpcc dataset needs a database"));
                };
                let (keys, _) = tpcc_layouts(ds, idb, cfg.seed);
                (
                    wl.threads as usize,
                    StatementSource::Tpcc(Box::new(crate::workload::tpcc::TpccSource::new(
                        cfg.seed, wl, ds, keys,
                    ))),
                )
            }
            (WorkloadConfig::Sysbench(_), DatasetConfig::Files(_)) => {
                return Err(Error::config("workload", "a sysbench workload needs a sysbench dataset"))
            }
        };
        // Client slots: the workload's threads, then the database's own threads (the page
        // cleaner, the master thread, Percona Server's LRU manager) when it writes.
        let db_threads = db.as_ref().map_or(0, |d| d.db_threads());
        let slots = threads + db_threads;
        // The smallest read a file sees (bcache's unit): an InnoDB page, or fio's smallest block.
        let read_unit = match (&db, &cfg.workload) {
            (Some(d), _) => d.page_size(),
            (None, WorkloadConfig::Fio(f)) => {
                f.jobs.iter().map(|j| j.bs_read.min(j.bs_write)).min().unwrap_or(4096)
            }
            (None, WorkloadConfig::Sysbench(_)) => 4096,
        };
        let fs = match &cfg.filesystem {
            FsConfig::Zfs(z) => {
                let mut compression =
                    CompressionModel::new(z.compression, compress_ratio.unwrap_or(1.0), z.ashift, cfg.seed)?
                        .for_record_size(z.recordsize);
                if let (
                    None,
                    Some(Database::Innodb(d)),
                    Some(DatabaseConfig::Innodb(idb)),
                    DatasetConfig::Sysbench(ds),
                ) = (compress_ratio, &db, &cfg.database, &cfg.dataset)
                {
                    // The records' stored sizes follow from the pages prepare wrote.
                    if z.compression != crate::config::Compression::Off {
                        let gen = ibd_records::generator(
                            idb.server,
                            idb.character_set_server,
                            ds.prepare_rand_type,
                            ds.table_size,
                            d.page_size,
                            cfg.seed,
                        );
                        let content = ibd_records::content_sizes(&d.layouts[0], &gen, z.recordsize, |b| {
                            compression.stored_sample(b).map_err(|_| {
                                Error::config(
                                    "dataset.compress_ratio",
                                    format!(
                                        "generated sysbench pages compressed with compression={} are not modelled (lz4 and lzjb are): give the ratio measured on such data",
                                        format!("{:?}", z.compression).to_lowercase()
                                    ),
                                )
                            })
                        })?;
                        compression = compression.with_content(content)?;
                    }
                }
                let blocks = files
                    .iter()
                    .enumerate()
                    .map(|(k, &size)| {
                        // The database's logs (after its tables and ibdata1) may be in a
                        // dataset of their own recordsize.
                        let logs = db.as_ref().and_then(|d| d.writes()).is_some_and(|w| k as u32 > w.files().system());
                        let rs = if logs { z.log_recordsize.unwrap_or(z.recordsize) } else { z.recordsize };
                        let g = FileGeometry::try_new(size, rs, z.indirect_block_size)?;
                        // Block keys number a file's blocks in BLKID_BITS bits.
                        if g.l0_blocks() > 1 << BlockKey::BLKID_BITS {
                            let name = match &cfg.dataset {
                                DatasetConfig::Files(f) => f.files[k].name.clone(),
                                DatasetConfig::Sysbench(_) => format!("sbtest{}.ibd", k + 1),
                                DatasetConfig::Tpcc(_) => {
                                    let (set, t) = crate::db::innodb::tpcc_schema::TpccTable::of(k as u32);
                                    format!("{}.ibd", t.file_name(set))
                                }
                            };
                            return Err(Error::config(
                                "filesystem.recordsize",
                                format!(
                                    "file {name} ({size} bytes) has {} records of {} bytes; the model numbers at most 2^{} records a file: use a larger recordsize",
                                    g.l0_blocks(),
                                    g.data_block_size(),
                                    BlockKey::BLKID_BITS
                                ),
                            ));
                        }
                        // The binary log's files start empty: their records are holes
                        // until written (`Zfs::new_file` makes them so again at rotation).
                        let binlog = db.as_ref().and_then(|d| d.writes()).is_some_and(|w| w.is_binlog(k as u32));
                        Ok(FileBlocks::uniform(g, if binlog { CLASS_HOLE } else { class }))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let layout = ZfsLayout::new(blocks, compression, z.indirect_block_size, z.vdevs.len() as u32);
                let pool = Pool::new(z, &cfg.devices, layout.clone(), files.len() as u32, cfg.seed)?;
                pool.prepare_devices(&mut devices);
                let cache_devices = z
                    .cache
                    .iter()
                    .map(|name| device_index(name, "filesystem.cache"))
                    .collect::<Result<Vec<_>>>()?;
                let arc = new_arc(cfg, z, &cache_devices, &layout)?;
                // ARC headers live in 32-bit slots: refuse an ARC that could hold 2^32 - 1 of
                // them (live ones of a sector each and ghosts of 512 bytes, up to every block
                // of the dataset and each file's dnode and bonus buffer).
                let c_max = arc.stats().c_max;
                let dataset_blocks = (1..=layout.nfiles()).fold(0u64, |sum, o| {
                    let g = layout.geometry(o);
                    (0..g.nlevels()).fold(sum, |s, l| s.saturating_add(g.blocks_at(l)))
                });
                let most = (c_max >> z.ashift.min(63))
                    .saturating_add(c_max / 512)
                    .min(dataset_blocks.saturating_add(2 * layout.nfiles() as u64));
                if most >= u64::from(u32::MAX) {
                    return Err(Error::config(
                        "filesystem.arc.zfs_arc_max",
                        format!(
                            "an ARC of {c_max} bytes over {dataset_blocks} blocks could hold {most} headers; the model indexes fewer than 2^32: lower zfs_arc_max or use a larger recordsize"
                        ),
                    ));
                }
                let data_flags =
                    ReadFlags { prefetch: false, uncacheable: z.primarycache != CacheProperty::All };
                let meta_flags =
                    ReadFlags { prefetch: false, uncacheable: z.primarycache == CacheProperty::None };
                let zfetch = ZfetchParams::resolve(
                    z.release,
                    z.release_patch,
                    &z.zfetch,
                    arc.stats().c_max,
                    z.primarycache,
                )?;
                let nfiles = layout.nfiles() as usize;
                let features = z.release.features();
                let zfs_costs = ZfsCosts {
                    zfs_block: scaled(c.zfs_block_ns, c.speed),
                    device_io: costs.device_io,
                    zio: scaled(c.zio_ns, c.speed),
                    memcpy_ns_per_byte: SEC as f64 / c.memcpy_bytes_per_sec as f64 / c.speed,
                    checksum_ns_per_byte: SEC as f64 / c.checksum_bytes_per_sec as f64 / c.speed,
                    decompress_ns_per_byte: SEC as f64 / c.decompress_bytes_per_sec as f64 / c.speed,
                    compress_ns_per_byte: SEC as f64 / c.compress_bytes_per_sec as f64 / c.speed,
                    l2arc_hdr: scaled(c.l2arc_hdr_ns, c.speed),
                    // A release without compressed ARC or ABD behaves as with them disabled.
                    compressed_arc: z.arc.zfs_compressed_arc_enabled.unwrap_or(true)
                        && features.compressed_arc,
                    abd_scatter: features.abd && z.arc.zfs_abd_scatter_enabled.unwrap_or(true),
                    prefetch_fills_buf: crate::config::ZfsFeatures::resolve(z.release, z.release_patch)
                        .prefetch_fills_buf,
                };
                let writes = WritePath::new(cfg, z, &pool);
                // The intent log's parameters are checked whether or not it is built.
                let zil_params = ZilParams::resolve(z)?;
                if zil::wanted(cfg) && !zil_params.features.modelled {
                    return Err(Error::config(
                        "filesystem.release",
                        format!(
                            "the intent log of release {} (the 2012 illumos zil.c) is not modelled: fsync, O_SYNC writes and sync=always need release 0.8 or later",
                            z.release.name()
                        ),
                    ));
                }
                let mut zfs = Box::new(Zfs::new(
                    arc,
                    DbufLayer::new(&features),
                    cache_devices,
                    layout,
                    pool,
                    data_flags,
                    meta_flags,
                    Zfetch::new(zfetch, nfiles),
                    zfs_costs,
                    features.arc.iohits(),
                    writes,
                    slots,
                ));
                if zil::wanted(cfg) {
                    let zil = Zil::new(z, &cfg.devices, &mut zfs.pool, slots, nfiles as u32)?;
                    // The database's logs (files after ibdata1) in a dataset of their own
                    // (`log_recordsize`) have that dataset's log: each objset has its own
                    // zilog (`zil_alloc` from `dmu_objset_open_impl`; `zfs_fsync` commits
                    // `zfsvfs->z_log`), its own chain of blocks and commit waiters.
                    let log_from = z
                        .log_recordsize
                        .and_then(|_| db.as_ref().and_then(|d| d.writes()))
                        .map(|w| w.files().system() + 2)
                        .filter(|&o| o <= nfiles as u32);
                    match log_from {
                        Some(from) => {
                            let logs =
                                zil.new_beside(z, &cfg.devices, &mut zfs.pool, slots, nfiles as u32, 1)?;
                            zfs.attach_zils(vec![zil, logs], from);
                        }
                        None => zfs.attach_zil(zil),
                    }
                }
                Fs::Zfs(zfs)
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                // Files opened without O_DIRECT go through the page cache (`fs::buffered`).
                let buffered = buffered_io(cfg);
                let fs = ExtentFs {
                    block_size: x.block_size,
                    // fio files of several sizes each get a slot of the largest.
                    file_size: files.iter().copied().max().unwrap_or(0),
                };
                // A device, or an md array over devices.
                let target = BlockTarget::build(cfg, &x.device, "filesystem.device")?;
                // The files side by side from the device's start (extent.rs, simplification 3).
                let end = fs.device_offset(files.len() as u32, 0);
                if let Some(capacity) = target.capacity(cfg).filter(|&c| end > c) {
                    return Err(Error::config(
                        "filesystem.device",
                        format!(
                            "the dataset does not fit: its {} files take {}, more than the {} of device '{}'",
                            files.len(),
                            crate::support::gib(end),
                            crate::support::gib(capacity),
                            target.name(cfg)
                        ),
                    ));
                }
                let bcache = match &x.bcache {
                    None => None,
                    Some(_) if target.device().is_none() => {
                        return Err(Error::config(
                            "filesystem.bcache",
                            format!(
                                "bcache over md array '{}' is not modelled: put it on a device",
                                x.device
                            ),
                        ));
                    }
                    Some(b) => {
                        let cache_device = device_index(&b.cache_device, "filesystem.bcache.cache_device")?;
                        let capacity = cfg.devices[cache_device].capacity_bytes.unwrap_or(0);
                        // The model's own limit: its bucket index.
                        let nbuckets = capacity / b.bucket_size;
                        if nbuckets >= crate::cache::bcache::MAX_BUCKETS {
                            return Err(Error::config(
                                "filesystem.bcache.bucket_size",
                                format!(
                                    "gives {nbuckets} buckets; the model indexes at most {} (use larger buckets)",
                                    crate::cache::bcache::MAX_BUCKETS - 1
                                ),
                            ));
                        }
                        // The page cache's I/O is in pages.
                        let unit_read = if buffered { read_unit.min(PAGE_SIZE as u32) } else { read_unit };
                        let unit = bcache_unit(cfg, &fs, unit_read, b.bucket_size);
                        let cache = Bcache::new(&BcacheParams {
                            config: b,
                            cache_capacity: cfg.devices[cache_device].capacity_bytes.unwrap_or(0),
                            backing_size: fs.device_offset(files.len() as u32, 0),
                            unit,
                            // The clients' threads and the `cat` process (and the flusher).
                            tasks: slots + 1 + usize::from(buffered),
                            seed: cfg.seed,
                        });
                        Some((Box::new(cache), cache_device))
                    }
                };
                // The journal, for a run that syncs files (a database's writes, fio's syncs).
                let syncs = cfg.sysbench_writes()
                    || matches!(&cfg.workload, WorkloadConfig::Fio(f) if f.jobs.iter().any(crate::workload::fio::syncs));
                let journal =
                    if syncs { Some(Box::new(build_journal(cfg, &fs, &target, files.len())?)) } else { None };
                let page_cache = if buffered {
                    // i_size of each file: the binary log's files start empty.
                    let sizes: Vec<u64> = (0..files.len())
                        .map(|k| match db.as_ref().and_then(|d| d.writes()) {
                            Some(w) if w.is_binlog(k as u32) => 0,
                            _ => files[k],
                        })
                        .collect();
                    let memcpy_ns_per_byte = SEC as f64 / c.memcpy_bytes_per_sec as f64 / c.speed;
                    Some(Box::new(BufferedIo::new(
                        page_cache_params(cfg)?,
                        &sizes,
                        slots + 1,
                        memcpy_ns_per_byte,
                    )?))
                } else {
                    None
                };
                Fs::Extent(Box::new(ExtentLayer {
                    fs,
                    target,
                    bcache,
                    device_io: costs.device_io,
                    journal,
                    page_cache,
                }))
            }
        };
        // The ARC and the buffer pool share the machine's memory. The twin models no memory
        // pressure (arc_reclaim, the page cache), so a pair that cannot fit is refused.
        if let (Fs::Zfs(z), Some(DatabaseConfig::Innodb(idb))) = (&fs, &cfg.database) {
            let c_max = z.arc.stats().c_max;
            let ram = cfg.machine.ram_bytes;
            if c_max.saturating_add(idb.innodb_buffer_pool_size) > ram {
                return Err(Error::config(
                    "filesystem.arc.zfs_arc_max",
                    format!(
                        "the ARC may grow to {c_max} bytes (arc_c_max) and the buffer pool takes {} bytes: together more than the machine's {ram} bytes of RAM, and the twin does not model memory pressure; set zfs_arc_max to at most RAM minus innodb_buffer_pool_size",
                        idb.innodb_buffer_pool_size
                    ),
                ));
            }
        }
        // The L2ARC feed threads (see `phases::feed_threads`).
        let nfeeds = match &fs {
            Fs::Zfs(z) => phases::feed_threads(z.cache_devices.len(), z.arc.l2arc_per_device_feed()),
            Fs::Extent(_) => 0,
        };
        let per_device = matches!(&fs, Fs::Zfs(z) if z.arc.l2arc_per_device_feed());
        // The purge coordinator runs its batches as statements too.
        let nstmts = if source.clients() > 0 { source.clients() + db_threads } else { 0 };
        let stmts: Vec<Statement> = (0..nstmts).map(|_| Statement::default()).collect();
        let client = Client {
            state: State::Start,
            lookup: 0,
            path: [0; MAX_PATH],
            path_len: 0,
            path_pos: 0,
            scan: 0,
            space: 0,
            page: 0,
            read_offset: 0,
            read_len: 0,
            read: FileRead::Extent(ExtentRead::IDLE),
            cpu_pending: 0,
            next_ready: false,
            started: 0,
            write: false,
            w_offset: 0,
            w_len: 0,
            zwrite: ZfsWrite::IDLE,
            fsync: Fsync::None,
            o_sync: false,
            o_direct: false,
            read_committed: false,
            after_commit: State::Start,
            after_write: State::WriteDone,
            after_io: State::Start,
            resume: State::NextPage,
            bufferable: u8::MAX,
            sec_buffered: false,
            applied: false,
            async_until: 0,
            datasync: false,
            journal_checkpoint: false,
            trx_waits: [0; waits::CLASSES],
            wait_since: 0,
            wait_class: waits::WaitClass::Other,
            cpu_exit: false,
        };

        if slots > events::MAX_CLIENTS {
            return Err(Error::config(
                "workload",
                format!("{threads} clients; at most {}", events::MAX_CLIENTS - db_threads),
            ));
        }
        let purge_first = db.as_ref().and_then(|d| d.purge_actor()).unwrap_or(usize::MAX);
        let purge_n = db.as_ref().map_or(0, |d| d.purge_threads());
        let mut queue = Schedule::with_capacity(slots + 3);
        // The releases' l2arc_feed_thread first wakes after l2arc_feed_secs; master's
        // per-device threads as the pool adds their devices (at once).
        let first_feed = if per_device { 0 } else { SEC };
        let mut feeds = vec![phases::FeedThread::default(); nfeeds];
        for (k, f) in feeds.iter_mut().enumerate() {
            f.next = Some(first_feed);
            queue.at(first_feed, Event::L2arcFeed(k as u8));
        }
        Ok(Sim {
            cfg,
            costs,
            cpus: Cpus::new(cfg.machine.vcpus),
            devices,
            db,
            files,
            exists,
            fio: None,
            fio_ios: 0,
            fio_bytes: 0,
            fs,
            source,
            next_stmts: stmts.clone(),
            stmts,
            clients: vec![client; slots],
            nclients: slots,
            nusers: threads,
            cleaner_due: None,
            master_due: None,
            lru_due: None,
            purge_due: None,
            purge_first,
            purge_n,
            purge_pending: 0,
            cleaner_activity: 0,
            released: Vec::with_capacity(slots),
            journal_wake: None,
            sync_plans: vec![(crate::fs::journal::Plan::EMPTY, None); slots],
            waits: vec![Wait::None; slots],
            queue,
            bp_inflight: SmallMap::with_capacity(threads * 4),
            statements: 0,
            by_kind: [0; 8],
            queries: 0,
            rows: 0,
            bp_requests: 0,
            bp_reads: 0,
            window_hist: LatencyHistogram::new(),
            wait_times: waits::WaitTimes::default(),
            interval_hist: LatencyHistogram::new(),
            measuring: false,
            mode: Mode::Workload { issue_until: 0 },
            cat_bytes: 0,
            cat_reads: 0,
            clock: 0,
            phase_index: 0,
            feeds,
            l2_feed_cpu: 0,
            sync_wake: None,
            zil_wake: None,
            flusher_wake: None,
            writeback_wake: None,
            events: 0,
        })
    }
}

/// The journal of the extent filesystem `fs` on `target` over `nfiles` files laid out
/// side by side (ext4's jbd2 as mkfs.ext4 lays it out, or XFS's log), for a run that
/// syncs files. A target of unknown size is taken as twice the files' extent (ASSUMED:
/// only where mke2fs puts the journal and the inode tables depends on it).
fn build_journal(cfg: &VariantConfig, fs: &ExtentFs, target: &BlockTarget, nfiles: usize) -> Result<Journal> {
    let end = fs.device_offset(nfiles as u32, 0);
    let fs_bytes = target.capacity(cfg).unwrap_or_else(|| end.saturating_mul(2).max(1 << 30));
    // The block layer's view of the target: a volatile write cache when a device under it
    // has one; no FUA (virtio-blk declares none; md passes FUA to members that do);
    // requests up to BLK_DEF_MAX_SECTORS.
    let devices: Vec<usize> = match target {
        BlockTarget::Device(i) => vec![*i],
        BlockTarget::Raid10(r) => r.members().to_vec(),
    };
    // bcache's device declares a write cache and FUA (super.c `bcache_device_init()`:
    // blk_queue_write_cache(q, true, true)): every flush reaches it (`cached_dev_nodata()`
    // flushes the cache set's journal and the backing device). Its FUA (a REQ_FUA write
    // flushes the journal too) is taken as a post-flush.
    let bcache = matches!(&cfg.filesystem, FsConfig::Ext4(x) | FsConfig::Xfs(x) if x.bcache.is_some());
    let caps = DeviceCaps {
        write_cache: bcache || devices.iter().any(|&i| cfg.devices[i].flush_latency_ns > 0),
        fua: false,
        max_request_bytes: DeviceCaps::BLK_DEF_MAX_SECTORS * 512,
    };
    let field = |e: Error| match e {
        Error::Config { message, .. } => Error::config("filesystem", message),
        other => other,
    };
    match &cfg.filesystem {
        FsConfig::Ext4(x) => {
            let p = Ext4Params { block_size: x.block_size, ..Ext4Params::default() };
            let specs: Vec<Ext4FileSpec> = (0..nfiles as u32)
                .map(|k| Ext4FileSpec { data_offset: fs.device_offset(k, 0), bytes: fs.file_size })
                .collect();
            let layout = Ext4Layout::mke2fs(&p, fs_bytes, &specs).map_err(field)?;
            Ok(Journal::Ext4(Ext4Journal::new(p, &layout, caps).map_err(field)?))
        }
        FsConfig::Xfs(_) => {
            let log = XfsLog::new(XfsParams::default(), XfsLayout::mkfs(fs_bytes), nfiles as u32, caps)
                .map_err(field)?;
            Ok(Journal::Xfs(log))
        }
        FsConfig::Zfs(_) => Err(Error::config("filesystem", "ZFS has no extent journal")),
    }
}

/// Whether the run opens a file of XFS/ext4 without O_DIRECT, so that it needs the page
/// cache: a fio job with direct=0; an InnoDB server whose data files are buffered
/// (innodb_flush_method fsync or O_DSYNC) or, when it writes, whose redo log is (MySQL 5.7
/// always: its flush method applies to data files; MariaDB 10.11 when it chooses buffered
/// writes, `mariadb_redo`), or with the binary log on (never O_DIRECT). ZFS has its own cache.
pub(super) fn buffered_io(cfg: &VariantConfig) -> bool {
    if let FsConfig::Zfs(_) = &cfg.filesystem {
        return false;
    }
    match (&cfg.database, &cfg.workload) {
        (Some(DatabaseConfig::Innodb(db)), _) => {
            // A bad option is refused when the database is built.
            let Ok(p) = WriteParams::new(db) else { return false };
            if !p.method.data_direct() {
                return true;
            }
            if !cfg.sysbench_writes() {
                return false;
            }
            let redo = match p.server {
                InnodbServer::Mysql57 | InnodbServer::Percona57 => true,
                InnodbServer::Mariadb1011 => {
                    // Its choice depends on these and the device (512-byte sectors, as
                    // `Writes` is told under XFS/ext4), not on the flush method.
                    let m = MariaRedoParams {
                        log_file_size: p.log_file_size,
                        flush_log_at_trx_commit: u32::from(p.flush_log_at_trx_commit),
                        ..MariaRedoParams::default()
                    };
                    LogFileMode::choose(&m, &LogDevice::block_device(512)).buffered
                }
            };
            redo || p.binlog.is_some()
        }
        (None, WorkloadConfig::Fio(f)) => f.jobs.iter().any(|j| !j.direct),
        (None, WorkloadConfig::Sysbench(_)) => false,
    }
}

/// The page cache's parameters: the budget the user stated (`machine.mem_available_bytes`)
/// or the one derived from RAM and what the database holds (`fs::page_cache::budget`), the
/// vm sysctls, and the filesystem's writeback (ext4's range-cyclic wrap).
pub(super) fn page_cache_params(cfg: &VariantConfig) -> Result<PageCacheParams> {
    let m = &cfg.machine;
    let held = match &cfg.database {
        Some(DatabaseConfig::Innodb(db)) => {
            db.innodb_buffer_pool_size.saturating_add(crate::fs::page_cache::budget::INNODB_LOG_BUFFER_SIZE)
        }
        None => 0,
    };
    let budget = match m.mem_available_bytes {
        Some(b) => b / PAGE_SIZE * PAGE_SIZE,
        None => {
            let k = budget::kernel_memory(m.ram_bytes, m.vm.min_free_kbytes, m.vm.watermark_scale_factor);
            let b = budget::budget_bytes(&k, held);
            if b < 64 * PAGE_SIZE {
                // The key the user most likely sized against the RAM: the buffer pool.
                let key = if held > 0 { "database.innodb_buffer_pool_size" } else { "machine.ram_bytes" };
                return Err(Error::config(
                    key,
                    format!(
                        "leaves no page cache for the run's buffered files (XFS/ext4 without O_DIRECT): MemTotal {} less what the database holds ({}) less the kernel's reserve ({}, totalreserve_pages) is under 256 KiB; give the machine more RAM, a smaller buffer pool, or state machine.mem_available",
                        crate::support::gib(k.mem_total),
                        crate::support::gib(held),
                        crate::support::gib(k.totalreserve)
                    ),
                ));
            }
            b
        }
    };
    let mut p = PageCacheParams::with_budget(budget);
    let vm = &m.vm;
    p.dirty_ratio = vm.dirty_ratio.unwrap_or(p.dirty_ratio);
    p.dirty_background_ratio = vm.dirty_background_ratio.unwrap_or(p.dirty_background_ratio);
    p.dirty_bytes = vm.dirty_bytes.unwrap_or(p.dirty_bytes);
    p.dirty_background_bytes = vm.dirty_background_bytes.unwrap_or(p.dirty_background_bytes);
    p.dirty_expire_centisecs = vm.dirty_expire_centisecs.unwrap_or(p.dirty_expire_centisecs);
    p.dirty_writeback_centisecs = vm.dirty_writeback_centisecs.unwrap_or(p.dirty_writeback_centisecs);
    // ext4_writepages wraps to the file's start within one call; XFS (iomap) does not.
    p.writepages_wrap = matches!(cfg.filesystem, FsConfig::Ext4(_));
    p.validate().map_err(|e| match e {
        Error::Config { message, .. } => Error::config("machine.mem_available_bytes", message),
        other => other,
    })?;
    Ok(p)
}

/// A fresh ARC for the variant, with its L2ARC device attached when there is one.
pub(super) fn new_arc(
    cfg: &VariantConfig,
    z: &crate::config::ZfsConfig,
    cache_devices: &[usize],
    layout: &ZfsLayout,
) -> Result<Arc> {
    let params = ArcParams { release: z.release, ram_bytes: cfg.machine.ram_bytes, tunables: z.arc.clone() };
    ArcLimits::check_tunables(&params)?;
    let mut arc = Arc::new(&params);
    arc.set_release_patch(z.release_patch);
    // The database or fio keeps its files open: each holds its dnode, bonus buffer and
    // dnode block in the ARC; on Linux so does the mounted dataset's root directory.
    let features = z.release.features();
    let root_dir = u64::from(features.objset.root_dir_held);
    arc.set_open_files(layout.nfiles() as u64 + root_dir, 0);
    // The dataset's meta-dnode chain above those dnodes, and the objsets' special dnodes
    // (fs::zfs::objset). A release without compressed ARC or ABD behaves as with them
    // disabled.
    arc.set_objset_pins(crate::fs::zfs::objset::open_objset_pins(
        &features.objset,
        &layout.compression,
        z.arc.zfs_compressed_arc_enabled.unwrap_or(true) && features.compressed_arc,
        features.abd && z.arc.zfs_abd_scatter_enabled.unwrap_or(true),
    ));
    if !cache_devices.is_empty() {
        // Every block of every level of every file, per object number (none for object 0).
        let key_space: Vec<Vec<u64>> = std::iter::once(Vec::new())
            .chain((1..=layout.nfiles()).map(|o| {
                let g = layout.geometry(o);
                (0..g.nlevels()).map(|l| g.blocks_at(l)).collect()
            }))
            .collect();
        let dataset: u64 = key_space.iter().flatten().sum();
        arc.attach_l2arc(&L2arcParams {
            patch: z.release_patch,
            config: L2arcConfig {
                devices: cache_devices
                    .iter()
                    .map(|&d| L2arcDeviceConfig {
                        capacity: cfg.devices[d].capacity_bytes.unwrap_or(0),
                        ashift: z.ashift,
                    })
                    .collect(),
                secondarycache: z.secondarycache,
                tunables: z.l2arc.clone(),
            },
            arc_warm_at_first_eviction: z.arc_warm_at_first_eviction,
            // Full devices of the dataset's records, at their mean stored size, or the
            // whole dataset (every block of every level) if it is smaller.
            expected_blocks: {
                let ratio = layout.compression.mean_stored_ratio(z.recordsize).max(1.0);
                let sector = 1u64 << z.ashift;
                let asize = ((z.recordsize as f64 / ratio) as u64).div_ceil(sector).max(1) * sector;
                let capacity: u64 =
                    cache_devices.iter().map(|&d| cfg.devices[d].capacity_bytes.unwrap_or(0) / asize).sum();
                capacity.min(dataset)
            },
            key_space,
        })
        .map_err(|e| match e {
            // The L2ARC names its tunables `l2arc.NAME` and its device `filesystem.cache`.
            Error::Config { field, message } if field.starts_with("filesystem.") => {
                Error::config(field, message)
            }
            Error::Config { field, message } => Error::config(format!("filesystem.{field}"), message),
            other => other,
        })?;
    }
    Ok(arc)
}

/// The index granularity of bcache: the largest power of two that divides the offset and
/// length of every request this run issues (pages rounded to filesystem blocks, `cat`
/// reads, table boundaries), at most a bucket.
pub(super) fn bcache_unit(cfg: &VariantConfig, fs: &ExtentFs, page_size: u32, bucket_size: u64) -> u32 {
    let pow2 = |n: u64| if n == 0 { u64::MAX } else { 1u64 << n.trailing_zeros() };
    let bs = u64::from(fs.block_size);
    let mut unit = pow2(fs.file_size).min(u64::from(page_size).max(bs));
    for p in &cfg.phases {
        if let PhaseConfig::Cat(c) = p {
            unit = unit.min(pow2(u64::from(c.read_size)).max(bs));
        }
    }
    unit.clamp(512, bucket_size) as u32
}

/// The keys and the nine layouts of a TPC-C dataset under `db` (its page size and
/// character set); the load's last-name constant from the run's seed.
pub(crate) fn tpcc_layouts(
    ds: &crate::config::TpccDataset,
    db: &crate::config::InnodbConfig,
    seed: u64,
) -> (crate::db::innodb::tpcc_schema::TpccKeys, Vec<TableLayout>) {
    let load_c = crate::db::innodb::btree::mix(seed ^ 0x10ad) % 256;
    let keys = crate::db::innodb::tpcc_schema::TpccKeys::new(
        ds.scale,
        ds.order_capacity,
        db.innodb_page_size,
        db.character_set_server,
        load_c,
    );
    let layouts = keys.layouts(db.innodb_page_size, db.character_set_server);
    (keys, layouts)
}

/// The machine's shared throttles (`machine.io_limits`) and host cache: each device with an
/// `io_limit` passes its throttle after its own; the host cache (built only when a device
/// uses it) serves hits through its own `io_limit`, which the temporary disk shares.
/// Names were checked by `VariantConfig::validate`.
fn attach_host_io(cfg: &VariantConfig, devices: &mut [Device]) {
    use crate::dev::host_cache::{CachePort, HostCache};
    use crate::dev::throttle::Throttle;
    use std::cell::RefCell;
    use std::rc::Rc;
    let m = &cfg.machine;
    let limits: Vec<Rc<RefCell<Throttle>>> = m
        .io_limits
        .iter()
        .map(|l| {
            Rc::new(RefCell::new(Throttle::new(
                l.iops_limit,
                l.throughput_limit_bytes_per_sec,
                l.iops_size_bytes,
                None,
            )))
        })
        .collect();
    let limit = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| m.io_limits.iter().position(|l| &l.name == n))
            .map(|i| Rc::clone(&limits[i]))
    };
    for (d, c) in devices.iter_mut().zip(&cfg.devices) {
        if let Some(l) = limit(&c.io_limit) {
            d.attach_io_limit(l);
        }
    }
    let Some(hc) = &m.host_cache else { return };
    if !cfg.devices.iter().any(|d| d.host_cache) {
        return;
    }
    let cache = Rc::new(RefCell::new(HostCache::new(hc, cfg.seed ^ 0x68c0_57ca_c4e5_u64)));
    if let Some(l) = limit(&hc.io_limit) {
        cache.borrow_mut().medium_mut().attach_io_limit(l);
    }
    for (i, (d, c)) in devices.iter_mut().zip(&cfg.devices).enumerate() {
        if c.host_cache {
            d.attach_host_cache(CachePort::new(Rc::clone(&cache), i as u32));
        }
    }
}

/// The seed of device `i`'s service-time draws.
pub(super) fn device_seed(seed: u64, i: usize) -> u64 {
    seed ^ (0xd1b5_4a32_d192_ed03u64.wrapping_mul(i as u64 + 1))
}
