//! fio workloads through the whole stack, against bands that follow from first
//! principles: what the files hold decides what the disks do.

use serde_json::Value;
use ztwin_core::config::*;
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::SEC;

const FILE: u64 = 256 << 20;

fn fio_mut(c: &mut VariantConfig) -> &mut FioWorkload {
    let WorkloadConfig::Fio(f) = &mut c.workload else { unreachable!() };
    f
}

fn phase(name: &str, jobs: &[u32]) -> PhaseConfig {
    PhaseConfig::Fio(FioPhase { name: name.into(), jobs: jobs.to_vec() })
}

fn run(c: &VariantConfig) -> Value {
    run_variant(c).unwrap().summary
}

fn disk_reads(p: &Value) -> f64 {
    p["devices"]["disk"]["read_iops"].as_f64().unwrap()
}

/// fio before 2.1 lays files out with zeros (filesetup.c extend_file): on an lz4
/// dataset every record and every indirect block is a hole. A sequential read then
/// touches no device and no ARC buffer, and runs at the CPU's copy rate: per 128K read
/// one system call, two block lookups (the L0 and its L1's hold), zero-filling the new
/// dbuf and copying it out, both at memcpy speed.
#[test]
fn a_zero_filled_layout_is_holes_and_reads_without_disk_io() {
    let mut c = test_fio_variant();
    fio_mut(&mut c).fio_version = "2.0.15".into();
    let r = run(&c);
    let p = &r["phases"][0];
    assert_eq!(p["laid_out"]["total"]["allocated_bytes"], 0, "{}", p["laid_out"]);
    assert_eq!(disk_reads(p), 0.0);
    assert_eq!(p["arc"]["hits"].as_u64().unwrap() + p["arc"]["misses"].as_u64().unwrap(), 0);
    let read = &p["fio"]["read"];
    assert_eq!(read["io_bytes"].as_u64().unwrap(), FILE, "the file once");
    let cpu = c.machine.cpu.clone();
    let per_read_ns = (cpu.syscall_ns + 2 * cpu.zfs_block_ns) as f64
        + 2.0 * (128 << 10) as f64 / cpu.memcpy_bytes_per_sec as f64 * 1e9;
    let expect_mbps = (128 << 10) as f64 / per_read_ns * 1e3;
    let got = read["bw_mbps"].as_f64().unwrap();
    assert!((got / expect_mbps - 1.0).abs() < 0.05, "{got} MB/s vs {expect_mbps}");
}

/// fio since 2.1 fills laid-out files with its buffers, random by default: nothing
/// compresses, and a cold sequential read reads every record from the disk, once.
#[test]
fn a_current_layout_is_incompressible_and_read_from_disk() {
    let c = test_fio_variant();
    let r = run(&c);
    let p = &r["phases"][0];
    let laid = &p["laid_out"]["total"];
    assert!(laid["allocated_bytes"].as_u64().unwrap() >= FILE);
    let window = p["fio"]["runtime_s"].as_f64().unwrap();
    let bytes = p["devices"]["disk"]["read_mbps"].as_f64().unwrap()
        * 1e6
        * (p["end_s"].as_f64().unwrap() - p["start_s"].as_f64().unwrap());
    assert!((bytes / FILE as f64 - 1.0).abs() < 0.01, "device bytes {bytes} over {window} s");
    // Each record is read from the disk once, by a demand read or (a sequential stream)
    // by zfetch ahead of it.
    let misses = |k: &str| p["arc"][k].as_u64().unwrap();
    assert_eq!(misses("demand_data_misses") + misses("prefetch_data_misses"), FILE >> 17);
}

/// A write pass changes what later reads read. buffer_compress_percentage=50 with 4K
/// chunks (fio 3.13+: half random, half zeros per chunk): lz4 keeps the 64 KiB of random
/// bytes of a 128K record as literals plus a few bytes per chunk, which rounds up to
/// 68 KiB at ashift 12: 128/68 = 1.88; after a reboot (the pool is synced, the caches are
/// empty) a cold read moves that share of the bytes.
#[test]
fn a_write_pass_changes_what_the_next_read_reads() {
    let mut c = test_fio_variant();
    let f = fio_mut(&mut c);
    f.jobs[2].buffers.buffer_compress_percentage = Some(50);
    f.jobs[2].buffers.buffer_compress_chunk = Some(4096);
    c.phases = vec![
        phase("write", &[2]),
        PhaseConfig::Restart(RestartPhase { name: "reboot".into(), vm_moved: false, recreate_cache: false }),
        phase("read", &[0]),
    ];
    let r = run(&c);
    let w = &r["phases"][0];
    assert_eq!(w["timing_modelled"], true);
    let synced =
        |k: &str| (0..2).map(|i| r["phases"][i]["zfs_write"][k].as_u64().unwrap_or(0)).sum::<u64>() as f64;
    assert_eq!(synced("synced_dirty_bytes"), FILE as f64, "every record synced once");
    let ratio = synced("synced_dirty_bytes") / synced("synced_data_bytes");
    assert!((ratio - 128.0 / 68.0).abs() < 0.01, "{ratio}");
    let p = &r["phases"][2];
    assert!(p.get("laid_out").is_none(), "the write made the file");
    let secs = p["end_s"].as_f64().unwrap() - p["start_s"].as_f64().unwrap();
    let bytes = p["devices"]["disk"]["read_mbps"].as_f64().unwrap() * 1e6 * secs;
    assert!((bytes * ratio / FILE as f64 - 1.0).abs() < 0.02, "{bytes}");
}

/// 16K random reads on 16K records of a file 8x the ARC, 4 psync jobs, 300 IOPS disk:
/// the disk binds, so fio's IOPS are the disk's 300 plus the ARC's share of hits (at
/// most the ARC's share of the file, 1/8).
#[test]
fn a_disk_bound_randread_runs_at_the_disk_rate() {
    let mut c = test_fio_variant();
    c.devices[0].iops_limit = Some(300.0);
    if let FsConfig::Zfs(z) = &mut c.filesystem {
        z.recordsize = 16384;
    }
    let f = fio_mut(&mut c);
    f.fio_version = "3.36".into();
    c.dataset =
        DatasetConfig::Files(FilesDataset { files: vec![FileConfig { name: "f".into(), size: 1 << 30 }] });
    let f = fio_mut(&mut c);
    for j in &mut f.jobs {
        j.file_range = 1 << 30;
        j.io_size = 1 << 30;
    }
    f.jobs[1].runtime_ns = 20 * SEC;
    // The reboot syncs the written data and empties the caches.
    c.phases = vec![
        phase("write", &[2]),
        PhaseConfig::Restart(RestartPhase { name: "reboot".into(), vm_moved: false, recreate_cache: false }),
        phase("randread", &[1]),
    ];
    let r = run(&c);
    let p = &r["phases"][2];
    let iops = p["fio"]["read"]["iops"].as_f64().unwrap();
    assert!(disk_reads(p) >= 297.0 && disk_reads(p) <= 301.0, "{}", disk_reads(p));
    assert!((297.0..=300.0 * 8.0 / 7.0).contains(&iops), "{iops}");
    let rt = p["fio"]["runtime_s"].as_f64().unwrap();
    assert!((rt - 20.0).abs() < 0.1, "{rt}");
    // clat: 4 jobs queue on a 300/s disk: about 4/300 s each.
    let p50 = p["fio"]["read"]["clat_ms"]["p50"].as_f64().unwrap();
    assert!((8.0..=16.0).contains(&p50), "{p50}");
}

/// rw with rwmixread: one job reads and writes, each direction reported apart, in the
/// job's proportions.
#[test]
fn a_mixed_job_reports_both_directions() {
    let mut c = test_fio_variant();
    let f = fio_mut(&mut c);
    f.jobs[2].rw = FioRw::Randrw;
    f.jobs[2].rwmixread = 70;
    f.jobs[2].bs_read = 16384;
    f.jobs[2].bs_write = 16384;
    f.jobs[2].io_size = 64 << 20;
    c.phases = vec![phase("read", &[0]), phase("mixed", &[2])];
    let r = run(&c);
    let p = &r["phases"][1];
    assert_eq!(p["timing_modelled"], true);
    let (reads, writes) =
        (p["fio"]["read"]["ios"].as_f64().unwrap(), p["fio"]["write"]["ios"].as_f64().unwrap());
    assert_eq!(reads + writes, 4096.0);
    let share = reads / (reads + writes);
    // Binomial: 3 sigma of 4096 draws at 0.7 is 0.021.
    assert!((share - 0.7).abs() < 0.021, "{share}");
    assert!(p["fio"]["write"]["clat_ms"]["p50"].as_f64().unwrap() > 0.0);
}

/// A sequential read of the file on XFS, buffered (fio's direct=0: the page cache reads
/// each page once, in readahead windows) and with O_DIRECT (one device read of the same
/// 128K per fio read): the device reads the file's bytes once either way; only the
/// buffered run has a page cache.
#[test]
fn buffered_and_direct_reads_on_xfs_read_the_file_once() {
    let mut c = test_fio_variant();
    c.filesystem = FsConfig::Xfs(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    for direct in [false, true] {
        fio_mut(&mut c).jobs.iter_mut().for_each(|j| j.direct = direct);
        let r = run(&c);
        let p = &r["phases"][0];
        assert_eq!(p["fio"]["read"]["io_bytes"].as_u64().unwrap(), FILE);
        let secs = p["end_s"].as_f64().unwrap() - p["start_s"].as_f64().unwrap();
        let bytes = p["devices"]["disk"]["read_mbps"].as_f64().unwrap() * 1e6 * secs;
        assert!((bytes / FILE as f64 - 1.0).abs() < 0.01, "direct {direct}: {bytes}");
        assert!(p.get("arc").is_none());
        assert_eq!(p.get("page_cache").is_some(), !direct, "{p}");
        if !direct {
            assert_eq!(p["page_cache"]["pgpgin"].as_u64().unwrap(), FILE / 1024);
        }
    }
}

#[test]
fn same_seed_same_numbers() {
    let mut c = test_fio_variant();
    c.phases = vec![phase("randread", &[1])];
    let a = ztwin_core::run::run_variant_json(&serde_json::to_string(&c).unwrap()).unwrap();
    let b = ztwin_core::run::run_variant_json(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(a, b);
}
