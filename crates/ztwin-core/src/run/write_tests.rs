//! The write path through the driver: fio write jobs on ZFS and XFS.

use proptest::prelude::*;

use super::*;
use crate::config::{test_fio_variant, FioJob, FioPhase, FioRw, PhaseConfig, RestartPhase};

fn run(cfg: &VariantConfig) -> Value {
    run_variant(cfg).expect("runs").summary
}

fn job(c: &mut VariantConfig, k: usize) -> &mut FioJob {
    let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
    &mut w.jobs[k]
}

fn fio(name: &str, jobs: Vec<u32>) -> PhaseConfig {
    PhaseConfig::Fio(FioPhase { name: name.into(), jobs })
}

fn restart() -> PhaseConfig {
    PhaseConfig::Restart(RestartPhase { name: "reboot".into(), vm_moved: false, recreate_cache: false })
}

fn zfs(c: &mut VariantConfig) -> &mut crate::config::ZfsConfig {
    let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
    z
}

/// The test fio variant (one 256 MiB file, 128K records, 16K indirect blocks so the tree
/// has three levels) whose "write" job (index 2) writes `records` records of 128K
/// sequentially from record `first`.
fn seq_write(records: u64, first: u64) -> VariantConfig {
    let mut c = test_fio_variant();
    zfs(&mut c).indirect_block_size = 16384;
    let j = job(&mut c, 2);
    j.offset = first * 131072;
    j.file_range = records * 131072;
    j.io_size = records * 131072;
    c.phases = vec![fio("write", vec![2])];
    c
}

/// Device bytes written in a phase (its "devices" window: MB/s times its length).
fn written(phase: &Value) -> f64 {
    let d = &phase["devices"]["disk"];
    d["write_mbps"].as_f64().unwrap()
        * 1e6
        * (phase["end_s"].as_f64().unwrap() - phase["start_s"].as_f64().unwrap())
}

#[test]
fn a_txg_syncs_at_the_timeout_with_its_records_and_their_indirect_blocks() {
    let mut c = seq_write(4, 0);
    c.phases.push(restart());
    let s = run(&c);
    let w = &s["phases"][0]["zfs_write"];
    assert_eq!(w["txgs_synced"], 0, "4 records are far below the sync threshold");
    assert_eq!(w["dirty_left_bytes"], 4 * 131072);
    let r = &s["phases"][1]["zfs_write"];
    assert_eq!(r["txgs_synced"], 1);
    let t = &r["txgs"][0];
    assert_eq!(t["start_s"], 5.0, "zfs_txg_timeout after the pool's start");
    assert_eq!(t["records"], 4);
    // Every dirty byte written once (fio 3.36's random buffers do not compress), no more.
    assert_eq!(t["dirty_bytes"], 4 * 131072);
    assert_eq!(t["data_bytes"], 4 * 131072);
    // Records 0-3 share one L1 (fanout 128) and the L2 above it: two blocks, two copies.
    assert_eq!(t["indirect_blocks"], 2);
    let ub = 4 * 4096;
    let leaf = t["leaf_bytes"].as_u64().unwrap();
    let parts: u64 = ["data_bytes", "indirect_bytes", "dnode_bytes", "uberblock_bytes"]
        .iter()
        .map(|k| t[k].as_u64().unwrap())
        .sum();
    assert_eq!(leaf, parts);
    assert_eq!(t["uberblock_bytes"], ub);
    assert!(leaf <= 4 * 131072 + t["indirect_bytes"].as_u64().unwrap() + 2 * 4096 + ub);
}

#[test]
fn a_partial_write_of_an_uncached_record_reads_it_first_and_a_full_one_does_not() {
    // Write the whole file, reboot (caches empty), then write into record 0.
    let mut c = seq_write(2048, 0);
    c.workload = {
        let WorkloadConfig::Fio(mut w) = c.workload.clone() else { unreachable!() };
        let mut partial = w.jobs[2].clone();
        partial.name = "partial".into();
        partial.bs_write = 4096;
        partial.bs_read = 4096;
        partial.file_range = 65536;
        partial.io_size = 65536;
        let mut full = w.jobs[2].clone();
        full.name = "full".into();
        full.offset = 131072 * 100;
        full.file_range = 131072 * 8;
        full.io_size = 131072 * 8;
        w.jobs.push(partial);
        w.jobs.push(full);
        WorkloadConfig::Fio(w)
    };
    c.phases = vec![fio("write", vec![2]), restart(), fio("partial", vec![3]), fio("full", vec![4])];
    let s = run(&c);
    let partial = &s["phases"][2];
    // 16 writes of 4K into record 0: one read of the record (and its indirect blocks).
    assert_eq!(partial["arc"]["demand_data_misses"], 1, "{}", partial["arc"]);
    assert_eq!(partial["fio"]["write"]["ios"], 16);
    assert!(partial["devices"]["disk"]["read_iops"].as_f64().unwrap() > 0.0);
    let full = &s["phases"][3];
    assert_eq!(full["arc"]["demand_data_misses"], 0, "full records are not read");
    assert_eq!(full["devices"]["disk"]["read_iops"], 0.0);
}

#[test]
fn dirty_data_stays_under_the_max_and_writers_are_throttled() {
    // 1 GiB of RAM: zfs_dirty_data_max 102 MiB; write 1 GiB with two writers.
    let mut c = test_fio_variant();
    c.machine.ram_bytes = 1 << 30;
    zfs(&mut c).arc.zfs_arc_max = 256 << 20;
    let size = 512u64 << 20;
    let crate::config::DatasetConfig::Files(f) = &mut c.dataset else { unreachable!() };
    f.files = vec![
        crate::config::FileConfig { name: "/tank/a".into(), size },
        crate::config::FileConfig { name: "/tank/b".into(), size },
    ];
    let j = job(&mut c, 2);
    j.numjobs = 2;
    j.clone_files = vec![vec![0], vec![1]];
    j.file_range = size;
    j.io_size = size;
    c.phases = vec![fio("write", vec![2])];
    let s = run(&c);
    let w = &s["phases"][0]["zfs_write"];
    let max = w["zfs_dirty_data_max"].as_u64().unwrap();
    assert_eq!(max, (1u64 << 30) / 10);
    // A tx is admitted under the max and then charges its record: at most one record per
    // writer above it.
    assert!(w["dirty_high_bytes"].as_u64().unwrap() <= max + 2 * 131072, "{w}");
    assert!(w["dirty_high_bytes"].as_u64().unwrap() > max * 6 / 10, "{w}");
    assert!(w["delayed_txs"].as_u64().unwrap() > 0);
    assert!(w["txgs_synced"].as_u64().unwrap() >= 5);
}

#[test]
fn xfs_direct_writes_are_device_writes() {
    let mut c = test_fio_variant();
    c.filesystem = FsConfig::Xfs(crate::config::ExtentFsConfig {
        device: "disk".into(),
        block_size: 4096,
        bcache: None,
    });
    for k in 0..3 {
        job(&mut c, k).direct = true;
    }
    let j = job(&mut c, 2);
    j.bs_write = 4096;
    j.bs_read = 4096;
    j.rw = FioRw::Randwrite;
    j.io_size = 4 << 20;
    c.phases = vec![fio("write", vec![2])];
    let s = run(&c);
    let p = &s["phases"][0];
    assert_eq!(p["fio"]["write"]["ios"], 1024);
    assert!((written(p) - (4 << 20) as f64).abs() < 0.01 * (4 << 20) as f64, "{}", written(p));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    /// Bytes written to the pool in a txg = the allocated size of every dirtied record
    /// plus both copies of each of their ancestors (counted independently from the
    /// layout), plus the dnode block and the uberblocks.
    #[test]
    fn a_txg_writes_its_records_and_their_ancestors(records in 1u64..300, first in 0u64..1700) {
        let mut c = seq_write(records, first);
        c.phases.push(restart());
        let s = run(&c);
        let t = &s["phases"][1]["zfs_write"]["txgs"][0];
        // fanout 128: ancestors are the L1s over [first, first + records) and the L2s above.
        let last = first + records - 1;
        let l1 = last / 128 - first / 128 + 1;
        let l2 = last / (128 * 128) - first / (128 * 128) + 1;
        let nlevels_l2 = 2048 > 128; // 2048 records: L0, L1 (16), L2 (1)
        prop_assert!(nlevels_l2);
        let ancestors = l1 + l2;
        prop_assert_eq!(t["indirect_blocks"].as_u64().unwrap(), ancestors);
        let indirect = t["indirect_bytes"].as_u64().unwrap();
        // Each copy of an indirect block is at least a sector, at most the block.
        prop_assert!(indirect >= 2 * ancestors * 4096 && indirect <= 2 * ancestors * 16384);
        let expected = records * 131072 + indirect + 2 * 4096 + 4 * 4096;
        prop_assert_eq!(t["leaf_bytes"].as_u64().unwrap(), expected);
        let dev = written(&s["phases"][1]);
        prop_assert!((dev - expected as f64).abs() <= 1.0 + 1e-6 * expected as f64, "{} vs {}", dev, expected);
    }
}

/// A disk-like device with no fixed latency: its rate R is its transfer rate.
fn rate_device(c: &mut VariantConfig, rate: f64, latency_ns: u64) {
    let d = &mut c.devices[0];
    d.transfer_bytes_per_sec = rate;
    d.read_latency_ns = latency_ns;
    d.write_latency_ns = latency_ns;
    d.latency_sigma = 0.0;
    d.parallelism = 1;
}

/// The write job (index 2) writing a 1 GiB file sequentially, alone, on a device of
/// `rate` bytes/s; 512 MiB of RAM and a 128 MiB ARC.
fn gib_stream(rate: f64) -> VariantConfig {
    let mut c = test_fio_variant();
    c.machine.ram_bytes = 512 << 20;
    zfs(&mut c).arc.zfs_arc_max = 128 << 20;
    rate_device(&mut c, rate, 1000);
    let size = 1u64 << 30;
    let crate::config::DatasetConfig::Files(f) = &mut c.dataset else { unreachable!() };
    f.files[0].size = size;
    let j = job(&mut c, 2);
    j.file_range = size;
    j.io_size = size;
    c.phases = vec![fio("write", vec![2])];
    c
}

/// A sequential 128K write stream on a device of rate R settles at R / (psize / lsize)
/// of logical throughput: once dirty data is at the throttle, writers get in as fast as
/// the syncs write. Band: the uberblocks and indirect blocks cost under 3% of the device
/// time; the dirty data left unsynced at the end (at most zfs_dirty_data_max, 51 MiB of
/// 1 GiB written) inflates the logical rate by at most 5%.
#[test]
fn a_sequential_write_settles_at_the_device_rate_over_the_compression_ratio() {
    for (compress, label) in [(None, "incompressible"), (Some(50), "compressible")] {
        let mut c = gib_stream(100e6);
        let j = job(&mut c, 2);
        j.buffers.buffer_compress_percentage = compress;
        j.buffers.refill_buffers = compress.map(|_| true);
        let s = run(&c);
        let p = &s["phases"][0];
        let w = &p["zfs_write"];
        let ratio = w["synced_data_bytes"].as_f64().unwrap() / w["synced_dirty_bytes"].as_f64().unwrap();
        let expected = 100.0 / ratio;
        let got = p["fio"]["write"]["bw_mbps"].as_f64().unwrap();
        assert!(
            got > 0.97 * expected && got < 1.05 * expected / 0.97,
            "{label}: {got} MB/s, expected {expected} (psize/lsize {ratio})"
        );
        if compress.is_some() {
            assert!(ratio < 0.7, "50% compressible buffers compress: {ratio}");
        }
        // One txg syncs at a time: each starts once the one before is on disk, even when
        // the open txg passed the dirty threshold while the other synced.
        let txgs = w["txgs"].as_array().unwrap();
        assert!(txgs.len() > 3, "{label}: several txgs");
        for k in 1..txgs.len() {
            let (prev_end, start) =
                (txgs[k - 1]["end_s"].as_f64().unwrap(), txgs[k]["start_s"].as_f64().unwrap());
            assert!(
                start >= prev_end,
                "{label}: txg {k} starts at {start} s, before the last ended at {prev_end} s"
            );
        }
    }
}

/// 4K random writes into the 128K records of an uncached file are bound by the reads of
/// read-modify-write: each write's record is read (128K at rate R) before it is dirtied,
/// and each record is written back once. One writer: IOPS between 1 / (read + write of a
/// record) and 1 / (read of a record).
#[test]
fn a_randwrite_into_uncached_records_is_bound_by_the_reads() {
    let mut c = seq_write(2048, 0);
    rate_device(&mut c, 100e6, 2_000_000);
    c.workload = {
        let WorkloadConfig::Fio(mut w) = c.workload.clone() else { unreachable!() };
        let mut r = w.jobs[2].clone();
        r.name = "randwrite".into();
        r.rw = FioRw::Randwrite;
        r.bs_write = 4096;
        r.bs_read = 4096;
        r.offset = 0;
        r.file_range = 256 << 20;
        r.io_size = 2 << 20;
        w.jobs.push(r);
        WorkloadConfig::Fio(w)
    };
    c.phases = vec![fio("write", vec![2]), restart(), fio("randwrite", vec![3])];
    let s = run(&c);
    let p = &s["phases"][2];
    let read = 2e-3 + 131072.0 / 100e6;
    let iops = p["fio"]["write"]["iops"].as_f64().unwrap();
    let misses = p["arc"]["demand_data_misses"].as_f64().unwrap();
    let ios = p["fio"]["write"]["ios"].as_f64().unwrap();
    // 512 random blocks in 2048 records touch n (1 - e^(-512/n)) = 453 distinct records,
    // each read once (the random map draws uniformly).
    let distinct = 2048.0 * (1.0 - (-512.0f64 / 2048.0).exp());
    assert!((misses - distinct).abs() < 0.05 * distinct, "{misses} record reads, expected about {distinct}");
    // Time per write: its share of the record reads, plus at most as much again for the
    // records' writes back competing on the device.
    let per_write = misses * read / ios;
    assert!(iops < 1.0 / per_write * 1.02, "{iops} IOPS: no faster than the reads allow");
    assert!(
        iops > 1.0 / (2.0 * per_write) * 0.9,
        "{iops} IOPS: the writes back take at most as long as the reads"
    );
}

/// A write-only fio phase reports its (empty) read side without latencies: null, not 0 ms.
#[test]
fn a_direction_without_ios_has_no_latency() {
    let s = run(&seq_write(4, 0));
    let f = &s["phases"][0]["fio"];
    assert_eq!(f["read"]["ios"], 0);
    for k in ["p50", "p95", "p99", "max", "mean"] {
        assert!(f["read"]["clat_ms"][k].is_null(), "{f:#}");
        assert!(f["write"]["clat_ms"][k].as_f64().unwrap() > 0.0, "{f:#}");
    }
}

/// The txg sync's blocks are compressed and checksummed by the write issue taskq before
/// their writes reach the disk (`fs::zfs::wr_iss`): on a disk far faster than the
/// compression, a sequential write stream settles at the taskq's rate, threads
/// (80% of the vCPUs, at least one) times `compress_bytes_per_sec`. Band: checksums, zios
/// and the indirect blocks' compression cost under 5% beside it; the dirty data left
/// unsynced at the end inflates the rate by at most 5% (as above).
#[test]
fn the_sync_is_bound_by_the_write_issue_taskqs_compression() {
    let mut rates = Vec::new();
    for vcpus in [2, 4] {
        let mut c = gib_stream(2e9);
        c.machine.vcpus = vcpus;
        c.machine.cpu.speed = 1.0;
        c.machine.cpu.compress_bytes_per_sec = 50_000_000;
        zfs(&mut c).compression = crate::config::Compression::Lz4;
        c.devices[0].parallelism = 8;
        let s = run(&c);
        let p = &s["phases"][0];
        let w = &p["zfs_write"];
        let got = p["fio"]["write"]["bw_mbps"].as_f64().unwrap();
        let threads = if vcpus == 2 { 1.0 } else { 3.0 };
        let expected = 50.0 * threads;
        assert!(
            got > 0.9 * expected && got < 1.05 * expected,
            "{vcpus} vCPUs: {got} MB/s, expected {expected}"
        );
        // The taskq's CPU: about the logical bytes synced over the rate.
        let cpu = w["issue_cpu_s"].as_f64().unwrap();
        let synced = w["synced_dirty_bytes"].as_f64().unwrap();
        assert!(cpu > synced / 50e6 && cpu < 1.1 * synced / 50e6, "{cpu} s for {synced} bytes");
        rates.push(got);
    }
    assert!(rates[1] > 2.5 * rates[0], "{rates:?}");
}
