//! Checks of the variant configuration (validation through the run entry).

use super::*;
use crate::error::Error;
use crate::run::run_variant;

fn rejected(field: &str, change: impl FnOnce(&mut VariantConfig)) {
    let mut cfg = test_variant();
    change(&mut cfg);
    match run_variant(&cfg) {
        Err(Error::Config { field: f, .. }) => assert!(f.contains(field), "{f} is not {field}"),
        other => panic!("{field}: expected a configuration error, got {other:?}"),
    }
}

#[test]
fn the_test_variant_is_valid() {
    test_variant().validate().unwrap();
}

/// Inputs that used to overflow, loop for ages, or collide keys are refused by name
/// (before the run, so no panic reaches a user).
#[test]
fn out_of_range_inputs_are_configuration_errors() {
    rejected("machine.cpu.statement_ns", |c| c.machine.cpu.speed = 1e-300);
    rejected("machine.cpu.row_ns", |c| c.machine.cpu.row_ns = u64::MAX);
    rejected("machine.cpu.memcpy_bytes_per_sec", |c| c.machine.cpu.memcpy_bytes_per_sec = 1);
    rejected("read_latency_ns", |c| c.devices[0].read_latency_ns = u64::MAX);
    rejected("database.innodb_buffer_pool_size", |c| {
        let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
        db.innodb_buffer_pool_size = u64::MAX;
    });
    rejected("dataset.tables", |c| {
        let DatasetConfig::Sysbench(ds) = &mut c.dataset else { unreachable!() };
        ds.tables = 1 << 24;
    });
    rejected("dataset.table_size", |c| {
        let DatasetConfig::Sysbench(ds) = &mut c.dataset else { unreachable!() };
        ds.table_size = u64::MAX;
    });
    rejected("workload.rand_pareto_h", |c| {
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.rand_pareto_h = 0.0;
    });
    rejected("workload.rand_zipfian_exp", |c| {
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.rand_zipfian_exp = f64::NAN;
    });
    rejected("workload.rand_spec_iter", |c| {
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.rand_spec_iter = 0;
    });
    // Below the servers' minimum (100) a batch frees a frame or two: the fuzzer's hangs.
    for depth in [1, 99] {
        rejected("database.innodb_lru_scan_depth", |c| {
            let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
            db.innodb_lru_scan_depth = depth;
        });
    }
    rejected("run.duration", |c| c.run.warmup_ns = u64::MAX);
    // zfs_arc_meta_strategy: 0 or 1, in 0.8 and 2.1 only.
    for (release, value) in [(ZfsRelease::V0_8, 2), (ZfsRelease::V2_2, 0), (ZfsRelease::V0_6, 0)] {
        rejected("filesystem.arc.zfs_arc_meta_strategy", |c| {
            let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
            z.release = release;
            z.arc.zfs_arc_meta_strategy = Some(value);
        });
    }
    rejected("run.report_interval", |c| c.run.report_interval_ns = 1);
    // A release whose L2ARC the twin does not model, with a cache device: refused
    // before the run, by the key the user wrote.
    let mut c = test_variant();
    let mut l2 = c.devices[0].clone();
    l2.name = "l2".into();
    c.devices.push(l2);
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z.release = ZfsRelease::V0_6;
    z.cache = vec!["l2".into()];
    match run_variant(&c) {
        Err(Error::Config { field, .. }) => assert_eq!(field, "filesystem.cache"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

/// Devices at the edge of what validation lets through run to the end without a panic.
#[test]
fn absurd_but_valid_devices_run() {
    let mut cfg = test_variant();
    cfg.devices[0].iops_limit = Some(1e-300);
    cfg.devices[0].latency_sigma = 4.99;
    let r = run_variant(&cfg).unwrap();
    assert_eq!(r.summary["queries"], 0);
}

fn zfs(c: &mut VariantConfig) -> &mut ZfsConfig {
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z
}

/// What a release does not have, it refuses by the key the user wrote (the feature
/// table decides, not a release comparison).
#[test]
fn features_a_release_lacks_are_refused() {
    // zfs_max_recordsize's default: 128K in 0.6, 1M in 0.8 and 2.1, 16M from 2.2.
    rejected("filesystem.recordsize", |c| {
        zfs(c).release = ZfsRelease::V0_6;
        zfs(c).recordsize = 256 << 10;
    });
    rejected("filesystem.recordsize", |c| zfs(c).recordsize = 2 << 20);
    let mut ok = test_variant();
    zfs(&mut ok).release = ZfsRelease::V2_2;
    zfs(&mut ok).recordsize = 2 << 20;
    ok.validate().unwrap();
    rejected("filesystem.arc.zfs_compressed_arc_enabled", |c| {
        zfs(c).release = ZfsRelease::V0_6;
        zfs(c).arc.zfs_compressed_arc_enabled = Some(true);
    });
    rejected("filesystem.arc.zfs_abd_scatter_enabled", |c| {
        zfs(c).release = ZfsRelease::V0_6;
        zfs(c).arc.zfs_abd_scatter_enabled = Some(true);
    });
    // Set to 0 they are what 0.6 has anyway.
    let mut off = test_variant();
    zfs(&mut off).release = ZfsRelease::V0_6;
    zfs(&mut off).arc.zfs_compressed_arc_enabled = Some(false);
    off.validate().unwrap();
    rejected("filesystem.arc.zfs_arc_meta_limit", |c| zfs(c).arc.zfs_arc_meta_limit = 256 << 20);
}

/// Rules that were written twice (in Python and here) live here only.
#[test]
fn cross_table_rules_are_the_cores() {
    rejected("capacity_bytes", |c| {
        let mut l2 = c.devices[0].clone();
        l2.name = "l2".into();
        c.devices.push(l2);
        zfs(c).cache = vec!["l2".into()];
    });
    rejected("filesystem.cache", |c| zfs(c).cache = vec!["nope".into()]);
    // InnoDB's write options are checked where their server's defaults live.
    rejected("database.innodb_flush_log_at_trx_commit", |c| {
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.test = SysbenchTest::OltpUpdateIndex;
        let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
        d.innodb_flush_log_at_trx_commit = Some(3);
    });
    rejected("database.innodb_log_files_in_group", |c| {
        let WorkloadConfig::Sysbench(w) = &mut c.workload else { unreachable!() };
        w.test = SysbenchTest::OltpUpdateIndex;
        let Some(DatabaseConfig::Innodb(d)) = &mut c.database else { unreachable!() };
        d.server = crate::config::InnodbServer::Mariadb1011;
        d.innodb_log_files_in_group = Some(2);
    });
}

/// A dataset larger than its device is refused when the stack is built: on a one-device
/// solid-state pool (estimated from the mean stored size), on a mirror (laid out), and
/// on XFS/ext4 (the files side by side).
#[test]
fn a_dataset_larger_than_its_device_is_refused() {
    // 4 tables of 200k rows at 1.28:1 are about 130 MiB stored.
    let small = |c: &mut VariantConfig| c.devices[0].capacity_bytes = Some(64 << 20);
    let mut fits = test_variant();
    fits.devices[0].capacity_bytes = Some(1 << 30);
    crate::run::check_variant(&fits).unwrap();
    rejected("filesystem.vdevs[0]", small);
    rejected("filesystem.device", |c| {
        small(c);
        c.filesystem =
            FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    });
}

/// Burst credits, the machine's shared limits and its host cache: what cannot work is
/// refused by the key that says it.
#[test]
fn burst_limits_and_host_cache_are_checked() {
    let azure_rejected = |field: &str, change: &dyn Fn(&mut VariantConfig)| {
        let mut cfg = test_azure_variant();
        cfg.validate().unwrap();
        change(&mut cfg);
        match cfg.validate() {
            Err(Error::Config { field: f, .. }) => assert!(f.contains(field), "{f} is not {field}"),
            other => panic!("{field}: expected a configuration error, got {other:?}"),
        }
    };
    azure_rejected("devices[0] (disk).io_limit", &|c| c.devices[0].io_limit = Some("nope".into()));
    azure_rejected("machine.host_cache.io_limit", &|c| {
        c.machine.host_cache.as_mut().unwrap().io_limit = Some("x".into())
    });
    azure_rejected("machine.io_limits[1] (uncached-disk).name", &|c| {
        c.machine.io_limits[1].name = "uncached-disk".into()
    });
    azure_rejected("machine.io_limits[0] (uncached-disk).iops_limit", &|c| {
        c.machine.io_limits[0].iops_limit = Some(0.0)
    });
    azure_rejected("machine.host_cache.cache_bytes", &|c| {
        c.machine.host_cache.as_mut().unwrap().cache_bytes = 5 << 40
    });
    azure_rejected("devices[0] (disk).host_cache", &|c| c.machine.host_cache = None);
    azure_rejected("burst.iops_limit", &|c| c.devices[0].burst.as_mut().unwrap().iops_limit = Some(400.0));
    azure_rejected("burst.iops_limit", &|c| c.devices[0].iops_limit = None);
    azure_rejected("burst.io_credits", &|c| c.devices[0].burst.as_mut().unwrap().io_credits = Some(-1.0));
    azure_rejected("burst.byte_credits", &|c| {
        let b = c.devices[0].burst.as_mut().unwrap();
        b.throughput_limit_bytes_per_sec = None;
    });
    azure_rejected("burst.iops_limit", &|c| {
        let b = c.devices[0].burst.as_mut().unwrap();
        (b.throughput_limit_bytes_per_sec, b.byte_credits, b.io_credits, b.iops_limit) =
            (None, None, None, None);
    });
    azure_rejected("devices[0] (disk).host_cache", &|c| {
        c.filesystem = FsConfig::Xfs(ExtentFsConfig {
            device: "disk".into(),
            block_size: 4096,
            bcache: Some(BcacheConfig::with_defaults("temp")),
        });
    });
}
