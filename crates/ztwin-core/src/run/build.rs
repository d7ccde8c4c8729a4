//! Building the stack of one variant: devices, database, filesystem and caches.

use super::*;
use crate::fs::zfs::zfetch::ZfetchParams;

impl<'a> Sim<'a> {
    pub(super) fn new(cfg: &'a VariantConfig) -> Result<Self> {
        let DatabaseConfig::Innodb(db) = &cfg.database;
        let DatasetConfig::Sysbench(ds) = &cfg.dataset;
        let WorkloadConfig::Sysbench(wl) = &cfg.workload;
        let c = &cfg.machine.cpu;
        let costs = Costs {
            statement: scaled(c.statement_ns, c.speed),
            row: scaled(c.row_ns, c.speed),
            page_access: scaled(c.page_access_ns, c.speed),
            syscall: scaled(c.syscall_ns, c.speed),
            device_io: scaled(c.device_io_ns, c.speed),
            zfs_block: scaled(c.zfs_block_ns, c.speed),
            zio: scaled(c.zio_ns, c.speed),
            memcpy_ns_per_byte: SEC as f64 / c.memcpy_bytes_per_sec as f64 / c.speed,
            checksum_ns_per_byte: SEC as f64 / c.checksum_bytes_per_sec as f64 / c.speed,
            decompress_ns_per_byte: SEC as f64 / c.decompress_bytes_per_sec as f64 / c.speed,
        };
        let device_index = |name: &str, field: &str| {
            cfg.devices
                .iter()
                .position(|d| d.name == name)
                .ok_or_else(|| Error::config(field, format!("names unknown device '{name}'")))
        };
        let devices: Vec<Device> = cfg
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| Device::new(d, cfg.seed ^ (0xd1b5_4a32_d192_ed03u64.wrapping_mul(i as u64 + 1))))
            .collect();
        let table = TableLayout::sysbench(ds.table_size, db.innodb_page_size);
        let fs = match &cfg.filesystem {
            FsConfig::Zfs(z) => {
                let geometry = FileGeometry::new(table.file_size(), z.recordsize, z.indirect_block_size);
                let compression =
                    CompressionModel::new(z.compression, ds.compress_ratio, z.ashift, cfg.seed)?;
                let vdev_device = z
                    .vdevs
                    .iter()
                    .map(|v| device_index(v, "filesystem.vdevs"))
                    .collect::<Result<Vec<_>>>()?;
                let layout = ZfsLayout {
                    geometry,
                    compression,
                    indirect_block_size: z.indirect_block_size,
                    nvdevs: vdev_device.len() as u32,
                };
                let cache_device = match z.cache.first() {
                    Some(name) => Some(device_index(name, "filesystem.cache")?),
                    None => None,
                };
                let arc = new_arc(cfg, z, cache_device)?;
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
                let shape = layout.zfetch_shape();
                Fs::Zfs {
                    arc: Box::new(arc),
                    dbufs: Box::new(DbufLayer::new()),
                    cache_device,
                    layout,
                    vdev_device,
                    data_flags,
                    meta_flags,
                    zfetch: Box::new(Zfetch::new(zfetch, cfg.dataset_tables() as usize)),
                    shape,
                }
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                if db.innodb_flush_method != "O_DIRECT" {
                    return Err(Error::config(
                        "database.innodb_flush_method",
                        "fsync (buffered I/O through the Linux page cache) is not modelled yet on XFS/ext4; use O_DIRECT",
                    ));
                }
                Fs::Extent(ExtentFs {
                    device: device_index(&x.device, "filesystem.device")?,
                    block_size: x.block_size,
                })
            }
        };
        let threads = wl.threads as usize;
        let fs_has_cache = matches!(&fs, Fs::Zfs { cache_device: Some(_), .. });
        let gens = (0..wl.threads).map(|t| SysbenchGen::for_thread(cfg.seed, t, wl, ds)).collect();
        let stmts = (0..threads).map(|_| Statement::default()).collect();
        let client = Client {
            state: State::Start,
            wait: Wait::None,
            lookup: 0,
            path: [0; MAX_DEPTH],
            path_len: 0,
            path_pos: 0,
            space: 0,
            page: 0,
            read_offset: 0,
            read_len: 0,
            chunk_off: 0,
            chunk_end: 0,
            zfetch: None,
            missed: false,
            rec: 0,
            rec_last: 0,
            level: 0,
            data_done: 0,
            cpu_pending: 0,
            started: 0,
        };
        let queue = EventQueue::with_capacity(threads + 1);
        Ok(Sim {
            cfg,
            costs,
            page_size: db.innodb_page_size,
            cpus: Cpus::new(cfg.machine.vcpus),
            devices,
            bp: BufferPool::new(db),
            table,
            fs,
            gens,
            stmts,
            clients: vec![client; threads],
            queue,
            bp_inflight: HashMap::with_capacity(threads * 4),
            block_inflight: HashMap::with_capacity(threads * 16),
            owned_inflight: (0..threads).map(|_| Vec::with_capacity(16)).collect(),
            prefetches: Vec::with_capacity(1024),
            free_prefetches: Vec::with_capacity(1024),
            prefetch_lookups: 0,
            statements: 0,
            rows: 0,
            bp_requests: 0,
            bp_reads: 0,
            window_hist: LatencyHistogram::new(),
            interval_hist: LatencyHistogram::new(),
            measuring: false,
            mode: Mode::Workload { issue_until: 0 },
            cat_bytes: 0,
            cat_reads: 0,
            clock: 0,
            phase_index: 0,
            // The l2arc_feed_thread first wakes after l2arc_feed_secs.
            next_feed: fs_has_cache.then_some(SEC),
            events: 0,
            block_lookups: 0,
            block_waits: 0,
        })
    }
}

/// A fresh ARC for the variant, with its L2ARC device attached when there is one.
pub(super) fn new_arc(
    cfg: &VariantConfig,
    z: &crate::config::ZfsConfig,
    cache_device: Option<usize>,
) -> Result<Arc> {
    let mut arc = Arc::new(&ArcParams {
        release: z.release,
        ram_bytes: cfg.machine.ram_bytes,
        tunables: z.arc.clone(),
    });
    if let Some(d) = cache_device {
        let dev = &cfg.devices[d];
        arc.attach_l2arc(&L2arcParams {
            patch: z.release_patch,
            config: L2arcConfig {
                device: L2arcDeviceConfig { capacity: dev.capacity_bytes.unwrap_or(0), ashift: z.ashift },
                secondarycache: z.secondarycache,
                tunables: z.l2arc.clone(),
            },
            arc_warm_at_first_eviction: z.arc_warm_at_first_eviction,
        })
        .map_err(|e| match e {
            Error::Config { field, message } => Error::config(format!("filesystem.l2arc.{field}"), message),
            other => other,
        })?;
    }
    Ok(arc)
}
