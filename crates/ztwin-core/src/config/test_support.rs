//! Small valid variants that unit and integration tests start from.

use super::{
    ArcTunables, ArrayConfig, CacheProperty, CharacterSet, Compression, ControllerConfig, CpuCosts,
    DatabaseConfig, DatasetConfig, DeviceConfig, ExtentFsConfig, FileConfig, FilesDataset, FioBuffers,
    FioDistribution, FioFileService, FioJob, FioPhase, FioRw, FioWorkload, FsConfig, InnodbConfig,
    InnodbServer, MachineConfig, PhaseConfig, PoolTunables, PrepareRandType, RandType, RotationalConfig,
    RunConfig, SysbenchDataset, SysbenchTest, SysbenchWorkload, TpccDataset, TxgTunables, VariantConfig,
    WorkloadConfig, ZfsConfig, ZfsRelease,
};
use crate::sim::time::{MS, SEC, US};

/// A small valid variant for tests (unit and integration): 8 clients on 2 vCPUs, one
/// 3000-IOPS device "disk", ZFS 0.8 (recordsize 16K, 128 MiB ARC) over 4 tables of 200k
/// rows, 16 MiB buffer pool. Tests change what they study and keep the rest.
#[doc(hidden)]
pub fn test_variant() -> VariantConfig {
    VariantConfig {
        scenario: "test".into(),
        variant: "v".into(),
        seed: 7,
        machine: MachineConfig {
            name: "test".into(),
            vcpus: 2,
            ram_bytes: 2 << 30,
            cpu: CpuCosts {
                speed: 1.0,
                statement_ns: 20_000,
                row_ns: 1_000,
                page_access_ns: 500,
                syscall_ns: 2_000,
                device_io_ns: 5_000,
                zfs_block_ns: 1_000,
                zio_ns: 5_000,
                memcpy_bytes_per_sec: 8_000_000_000,
                checksum_bytes_per_sec: 4_000_000_000,
                decompress_bytes_per_sec: 2_000_000_000,
                compress_bytes_per_sec: 400_000_000,
                l2arc_hdr_ns: super::DEFAULT_L2ARC_HDR_NS,
            },
            mem_available_bytes: None,
            vm: Default::default(),
            io_limits: Vec::new(),
            host_cache: None,
        },
        devices: vec![DeviceConfig {
            name: "disk".into(),
            kind: "test".into(),
            iops_limit: Some(3000.0),
            throughput_limit_bytes_per_sec: None,
            read_latency_ns: 500 * US,
            write_latency_ns: 500 * US,
            latency_sigma: 0.2,
            transfer_bytes_per_sec: 1e9,
            parallelism: 64,
            capacity_bytes: None,
            ephemeral: false,
            rotational: None,
            flush_latency_ns: 0,
            queue_rotational: None,
            iops_size_bytes: None,
            burst: None,
            io_limit: None,
            host_cache: false,
        }],
        controllers: vec![],
        arrays: vec![],
        filesystem: FsConfig::Zfs(ZfsConfig {
            release: ZfsRelease::V0_8,
            vdevs: vec!["disk".into()],
            log: vec![],
            pool: PoolTunables::default(),
            txg: TxgTunables::default(),
            ashift: 12,
            recordsize: 16384,
            log_recordsize: None,
            indirect_block_size: 131072,
            compression: Compression::Lz4,
            primarycache: CacheProperty::All,
            arc: ArcTunables {
                zfs_arc_max: 128 << 20,
                zfs_compressed_arc_enabled: None,
                ..Default::default()
            },
            release_patch: 11,
            cache: vec![],
            secondarycache: CacheProperty::All,
            l2arc: Default::default(),
            arc_warm_at_first_eviction: false,
            zfetch: Default::default(),
            sync: Default::default(),
            logbias: Default::default(),
            zil: Default::default(),
            direct: None,
        }),
        database: Some(DatabaseConfig::Innodb(InnodbConfig {
            innodb_buffer_pool_size: 16 << 20,
            innodb_page_size: 16384,
            innodb_old_blocks_pct: 37,
            innodb_old_blocks_time_ns: 1000 * MS,
            innodb_lru_scan_depth: 0,
            character_set_server: CharacterSet::Latin1,
            innodb_flush_method: "O_DIRECT".into(),
            server: InnodbServer::Mysql57,
            ..Default::default()
        })),
        dataset: DatasetConfig::Sysbench(SysbenchDataset {
            tables: 4,
            table_size: 200_000,
            compress_ratio: Some(1.28),
            prepare_rand_type: PrepareRandType::Special,
        }),
        workload: WorkloadConfig::Sysbench(SysbenchWorkload {
            test: SysbenchTest::OltpPointSelect,
            threads: 8,
            rand_type: RandType::Uniform,
            rand_spec_iter: 12,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
            rand_pareto_h: 0.2,
            rand_zipfian_exp: 0.8,
            random_points: 10,
            oltp: Default::default(),
        }),
        run: RunConfig { warmup_ns: 2 * SEC, duration_ns: 4 * SEC, report_interval_ns: SEC },
        phases: vec![],
    }
}

/// The test variant running a sysbench write test (oltp_read_write) with every InnoDB
/// write option set (so that mutations reach them): MySQL 5.7 on ZFS, or with `mariadb`
/// MariaDB 10.11 on ext4 over the same device (a volatile write cache).
#[doc(hidden)]
pub fn test_write_variant(mariadb: bool) -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "test-write".into();
    if let WorkloadConfig::Sysbench(w) = &mut c.workload {
        w.test = SysbenchTest::OltpReadWrite;
    }
    if let Some(DatabaseConfig::Innodb(d)) = &mut c.database {
        d.innodb_flush_log_at_trx_commit = Some(1);
        d.innodb_doublewrite = Some(true);
        d.innodb_io_capacity = Some(200);
        d.innodb_io_capacity_max = Some(2000);
        d.innodb_max_dirty_pages_pct = Some(75.0);
        d.innodb_max_dirty_pages_pct_lwm = Some(0.0);
        d.innodb_adaptive_flushing = Some(true);
        d.innodb_adaptive_flushing_lwm = Some(10);
        d.innodb_flushing_avg_loops = Some(30);
        d.innodb_log_file_size = Some(48 << 20);
        d.innodb_log_files_in_group = Some(if mariadb { 1 } else { 2 });
        d.innodb_flush_neighbors = Some(1);
        d.innodb_change_buffering = Some(if mariadb { "none" } else { "all" }.into());
        if mariadb {
            d.server = InnodbServer::Mariadb1011;
            d.character_set_server = CharacterSet::Utf8mb4;
        }
    }
    if mariadb {
        c.filesystem =
            FsConfig::Ext4(super::ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
        c.devices[0].flush_latency_ns = 500 * US;
        c.devices[0].queue_rotational = Some(true);
        c.devices[0].iops_size_bytes = Some(256 << 10);
    }
    c
}

/// The write variant on an Azure-like VM (so that mutations reach the keys): the device a
/// P10 Premium SSD with burst credits and host caching ReadOnly behind the VM's uncached
/// limit, and a temporary disk as the L2ARC, which passes the cached and temp limit with
/// the host cache's hits.
#[doc(hidden)]
pub fn test_azure_variant() -> VariantConfig {
    use super::{BurstConfig, HostCacheConfig, IoLimitConfig};
    let mut c = test_write_variant(false);
    c.scenario = "test-azure".into();
    let limit = |name: &str, iops: f64, tput: f64, size: Option<u64>| IoLimitConfig {
        name: name.into(),
        iops_limit: Some(iops),
        throughput_limit_bytes_per_sec: Some(tput),
        iops_size_bytes: size,
    };
    c.machine.io_limits = vec![
        limit("uncached-disk", 3200.0, 48e6, Some(256 << 10)),
        limit("cached-temp", 19000.0, 120e6, None),
    ];
    c.machine.host_cache = Some(HostCacheConfig {
        cache_bytes: 64 << 20,
        io_limit: Some("cached-temp".into()),
        read_latency_ns: 150 * US,
        latency_sigma: 0.3,
        transfer_bytes_per_sec: 1e9,
        parallelism: 32,
    });
    let d = &mut c.devices[0];
    d.iops_limit = Some(500.0);
    d.throughput_limit_bytes_per_sec = Some(100e6);
    d.iops_size_bytes = Some(256 << 10);
    d.burst = Some(BurstConfig {
        iops_limit: Some(3500.0),
        io_credits: Some(3000.0 * 1800.0),
        throughput_limit_bytes_per_sec: Some(170e6),
        byte_credits: Some(70e6 * 1800.0),
        full_at_attach: true,
    });
    d.io_limit = Some("uncached-disk".into());
    d.host_cache = true;
    let mut temp = c.devices[0].clone();
    temp.name = "temp".into();
    (temp.iops_limit, temp.throughput_limit_bytes_per_sec, temp.iops_size_bytes) =
        (Some(19000.0), Some(120e6), None);
    (temp.burst, temp.host_cache, temp.io_limit) = (None, false, Some("cached-temp".into()));
    (temp.capacity_bytes, temp.ephemeral, temp.read_latency_ns) = (Some(256 << 20), true, 150 * US);
    c.devices.push(temp);
    if let FsConfig::Zfs(z) = &mut c.filesystem {
        z.cache = vec!["temp".into()];
    }
    c
}

/// The test variant running oltp_update_index on Percona Server 5.7 (MySQL 5.7's write
/// variant on ZFS with Percona's flushing: its options set so that mutations reach them),
/// with a 32 MiB pool (backoff needs 20 MiB an instance) and experiment 2's doublewrite off.
#[doc(hidden)]
pub fn test_percona_variant() -> VariantConfig {
    let mut c = test_write_variant(false);
    c.scenario = "test-percona".into();
    if let WorkloadConfig::Sysbench(w) = &mut c.workload {
        w.test = SysbenchTest::OltpUpdateIndex;
    }
    if let Some(DatabaseConfig::Innodb(d)) = &mut c.database {
        d.server = InnodbServer::Percona57;
        d.innodb_buffer_pool_size = 32 << 20;
        d.innodb_doublewrite = Some(false);
        d.innodb_empty_free_list_algorithm = Some("backoff".into());
        d.innodb_cleaner_lsn_age_factor = Some("high_checkpoint".into());
        d.innodb_buffer_pool_instances = Some(0);
    }
    c
}

/// The test variant running sysbench-tpcc (`test = "tpcc"`) on a tpcc dataset of
/// `scale` warehouses in one table set, with the write variant's InnoDB options (MySQL
/// 5.7 on ZFS, lz4, a compress_ratio of 3 assumed), 4 threads.
#[doc(hidden)]
pub fn test_tpcc_variant(scale: u32) -> VariantConfig {
    let mut c = test_write_variant(false);
    c.scenario = "test-tpcc".into();
    c.dataset =
        DatasetConfig::Tpcc(TpccDataset { scale, tables: 1, compress_ratio: 3.0, order_capacity: 6000 });
    if let WorkloadConfig::Sysbench(w) = &mut c.workload {
        w.test = SysbenchTest::Tpcc;
        w.threads = 4;
    }
    c
}

/// A small valid fio variant for tests: the test variant's machine, device and ZFS
/// (recordsize 128K, lz4, 128 MiB ARC) with one 256 MiB file and three jobs on it:
/// "seqread" (read, bs 128K), "randread" (16K, 4 jobs, time based 10 s, randrepeat=0,
/// norandommap) and "write" (write, bs 128K); fio 3.36; one phase running "seqread".
/// Tests change what they study.
#[doc(hidden)]
pub fn test_fio_variant() -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "test-fio".into();
    if let FsConfig::Zfs(z) = &mut c.filesystem {
        z.recordsize = 128 << 10;
    }
    c.database = None;
    let size = 256u64 << 20;
    c.dataset =
        DatasetConfig::Files(FilesDataset { files: vec![FileConfig { name: "/tank/f".into(), size }] });
    let job = |name: &str, rw: FioRw, bs: u32| FioJob {
        name: name.into(),
        rw,
        rwmixread: 50,
        bs_read: bs,
        bs_write: bs,
        numjobs: 1,
        clone_files: vec![vec![0]],
        offset: 0,
        file_range: size,
        io_size: size,
        loops: 1,
        runtime_ns: 0,
        time_based: false,
        ramp_time_ns: 0,
        ioengine: "psync".into(),
        iodepth: 1,
        direct: false,
        file_service_type: FioFileService::Roundrobin,
        file_service_nr: 1,
        random_distribution: FioDistribution::Random,
        distribution_param: 0.0,
        norandommap: false,
        randrepeat: true,
        randseed: 0xb189_9bed,
        group_reporting: true,
        buffers: FioBuffers::default(),
        fsync: 0,
        fdatasync: 0,
        sync: Default::default(),
        end_fsync: false,
        fsync_on_close: false,
        invalidate: true,
        fadvise_hint: Default::default(),
    };
    let mut rand = job("randread", FioRw::Randread, 16384);
    rand.numjobs = 4;
    rand.clone_files = vec![vec![0]; 4];
    rand.time_based = true;
    rand.runtime_ns = 10 * SEC;
    rand.randrepeat = false;
    rand.norandommap = true;
    c.workload = WorkloadConfig::Fio(FioWorkload {
        fio_version: "3.36".into(),
        jobs: vec![job("seqread", FioRw::Read, 128 << 10), rand, job("write", FioRw::Write, 128 << 10)],
    });
    c.phases = vec![PhaseConfig::Fio(FioPhase { name: "seqread".into(), jobs: vec![0] })];
    c
}

/// A small valid variant on experiment 2's kind of storage, for tests: the test variant's
/// machine and database (O_DIRECT), oltp_update_index, on ext4 over md0 (RAID10 n2, 512 KiB
/// chunks) of four 15K SAS drives (the `sas-15k-600g` preset's mechanics) behind one
/// controller "perc" with a 1 GiB write-back cache (the scenario defaults). Tests change
/// what they study.
#[doc(hidden)]
pub fn test_raid_variant() -> VariantConfig {
    let mut c = test_variant();
    c.scenario = "test-raid".into();
    let drives = ["sda", "sdb", "sdc", "sdd"];
    let base = c.devices[0].clone();
    c.devices = drives
        .iter()
        .map(|name| DeviceConfig {
            name: (*name).into(),
            kind: "sas-15k-600g".into(),
            iops_limit: None,
            read_latency_ns: 100 * US,
            write_latency_ns: 100 * US,
            latency_sigma: 0.0,
            transfer_bytes_per_sec: 1.2e9,
            parallelism: 1,
            capacity_bytes: Some(600_127_266_816),
            flush_latency_ns: 100 * US,
            rotational: Some(RotationalConfig {
                rpm: 15_000,
                track_to_track_seek_ns: 200 * US,
                average_seek_ns: 2900 * US,
                full_stroke_seek_ns: 6 * MS,
                write_settle_ns: 200 * US,
                outer_rate_bytes_per_sec: 250e6,
                inner_rate_bytes_per_sec: 150e6,
                readahead_bytes: 1 << 20,
            }),
            ..base.clone()
        })
        .collect();
    let names: Vec<String> = drives.iter().map(|s| s.to_string()).collect();
    c.controllers = vec![ControllerConfig {
        name: "perc".into(),
        volumes: names.clone(),
        cache_bytes: 1 << 30,
        write_back: true,
        cache_latency_ns: 40 * US,
        cache_bytes_per_sec: 4e9,
        destage_max_bytes: 1 << 20,
        destage_queue_depth: 2,
    }];
    c.arrays = vec![ArrayConfig {
        name: "md0".into(),
        level: "raid10".into(),
        members: names,
        layout: "n2".into(),
        chunk_bytes: 512 << 10,
    }];
    c.filesystem = FsConfig::Ext4(ExtentFsConfig { device: "md0".into(), block_size: 4096, bcache: None });
    if let Some(DatabaseConfig::Innodb(db)) = &mut c.database {
        db.innodb_flush_method = "O_DIRECT".into();
    }
    if let WorkloadConfig::Sysbench(w) = &mut c.workload {
        w.test = SysbenchTest::OltpUpdateIndex;
    }
    c.run = RunConfig { warmup_ns: SEC, duration_ns: 3 * SEC, report_interval_ns: SEC };
    c
}
