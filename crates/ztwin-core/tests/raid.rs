//! Experiment 2's storage end to end: ext4 on Linux md RAID10 (n2) over drives behind a
//! RAID controller's battery-backed write-back cache, and ZFS on mirrors of the same drives.

use ztwin_core::config::*;
use ztwin_core::run::run_variant;

const DRIVES: [&str; 4] = ["sda", "sdb", "sdc", "sdd"];

/// oltp_update_index on ext4 over md0 (n2, 512K chunks) of four 15K drives behind the
/// controller, its write policy as given.
fn ext4_on_md(write_back: bool) -> VariantConfig {
    let mut c = test_raid_variant();
    c.controllers[0].write_back = write_back;
    c
}

fn tps(r: &ztwin_core::run::VariantResult) -> f64 {
    r.summary["tps"].as_f64().or_else(|| r.summary["qps"].as_f64()).unwrap_or(0.0)
}

#[test]
fn ext4_on_md_raid10_spreads_over_every_drive_and_mirrors_writes() {
    let cfg = ext4_on_md(true);
    let r = run_variant(&cfg).unwrap();
    assert!(r.summary["queries"].as_u64().unwrap() > 0);
    let devs = &r.summary["devices"];
    for d in DRIVES {
        assert!(devs[d]["read_iops"].as_f64().unwrap() > 0.0, "{d}: {}", devs[d]);
        assert!(devs[d]["write_iops"].as_f64().unwrap() > 0.0, "{d}: {}", devs[d]);
    }
    // n2 over four drives: sda and sdb hold the even chunks, sdc and sdd the odd ones;
    // every write reaches both drives of its pair.
    for (a, b) in [("sda", "sdb"), ("sdc", "sdd")] {
        assert_eq!(devs[a]["write_iops"], devs[b]["write_iops"], "{a} {b}");
        assert_eq!(devs[a]["write_mbps"], devs[b]["write_mbps"], "{a} {b}");
    }
    // The controller's view: it took every write of its volumes, and what it destaged is
    // what the drives behind them wrote.
    let ctrl = &r.summary["controllers"]["perc"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let host_writes: f64 = DRIVES.iter().map(|d| f(&devs[d]["write_iops"])).sum();
    assert!((f(&ctrl["write_iops"]) - host_writes).abs() < 1e-6 * host_writes, "{ctrl}");
    let drive_mbps: f64 = DRIVES.iter().map(|d| f(&devs[d]["drive"]["write_mbps"])).sum();
    assert!((f(&ctrl["destage_mbps"]) - drive_mbps).abs() < 1e-9 + 1e-6 * drive_mbps, "{ctrl}");
    assert!(f(&ctrl["dirty_mib"]) <= f(&ctrl["cache_mib"]) + f(&ctrl["overfull_peak_mib"]), "{ctrl}");
    // Its series: the dirty data at each interval's end, the last one the window's end.
    let dirty = r.series.column("perc_dirty_mib").unwrap();
    assert!(!dirty.is_empty() && dirty.iter().all(|&v| v >= 0.0), "{dirty:?}");
    assert!(r.series.column("perc_destage_mbps").unwrap().iter().any(|&v| v > 0.0));
    // Deterministic.
    assert_eq!(run_variant(&cfg).unwrap().summary, r.summary);
}

/// A cache too small for the load (1 MiB) fills: writes wait for the destaging to make
/// room, reads still reach the drives, and every write of the volumes is accounted for.
#[test]
fn a_full_cache_makes_writes_wait_for_destaging() {
    let mut cfg = ext4_on_md(true);
    cfg.controllers[0].cache_bytes = 1 << 20;
    let r = run_variant(&cfg).unwrap();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let ctrl = &r.summary["controllers"]["perc"];
    assert!(f(&ctrl["write_wait_share"]) > 0.0 && f(&ctrl["write_wait_ms_mean"]) > 0.0, "{ctrl}");
    assert!(f(&ctrl["dirty_mib"]) <= 1.0 + f(&ctrl["overfull_peak_mib"]), "{ctrl}");
    let devs = &r.summary["devices"];
    for d in DRIVES {
        assert!(f(&devs[d]["drive"]["read_iops"]) > 0.0, "{d}: {}", devs[d]);
    }
    assert!(tps(&r) > 0.0);
}

#[test]
fn the_battery_backed_cache_speeds_up_synchronous_writes() {
    let wb = run_variant(&ext4_on_md(true)).unwrap();
    let wt = run_variant(&ext4_on_md(false)).unwrap();
    let (a, b) = (tps(&wb), tps(&wt));
    eprintln!("update_index on ext4/md0: write-back {a:.0}, write-through {b:.0} per second");
    assert!(a > 1.5 * b, "write-back {a} vs write-through {b}");
}

#[test]
fn zfs_mirrors_over_the_same_drives_go_through_the_controller() {
    let mut c = ext4_on_md(true);
    let FsConfig::Ext4(_) = &c.filesystem else { unreachable!() };
    let mut z = match test_variant().filesystem {
        FsConfig::Zfs(z) => z,
        _ => unreachable!(),
    };
    z.ashift = 12;
    z.vdevs = vec![
        VdevConfig::Mirror(MirrorVdev { mirror: vec!["sda".into(), "sdb".into()] }),
        VdevConfig::Mirror(MirrorVdev { mirror: vec!["sdc".into(), "sdd".into()] }),
    ];
    c.filesystem = FsConfig::Zfs(z);
    let Some(DatabaseConfig::Innodb(db)) = &mut c.database else { unreachable!() };
    db.innodb_flush_method = "fsync".into();
    let r = run_variant(&c).unwrap();
    assert!(r.summary["queries"].as_u64().unwrap() > 0);
    for d in DRIVES {
        assert!(r.summary["devices"][d]["write_iops"].as_f64().unwrap() > 0.0, "{d}");
    }
}

#[test]
fn an_array_member_used_twice_or_unknown_is_refused_by_key() {
    let mut c = ext4_on_md(true);
    c.arrays[0].members[1] = "sda".into();
    let e = run_variant(&c).unwrap_err().to_string();
    assert!(e.contains("arrays[0] (md0).members") && e.contains("twice"), "{e}");
    let mut c = ext4_on_md(true);
    c.arrays[0].layout = "n5".into();
    let e = run_variant(&c).unwrap_err().to_string();
    assert!(e.contains("arrays[0] (md0).layout"), "{e}");
    let mut c = ext4_on_md(true);
    c.controllers[0].volumes.push("nope".into());
    let e = run_variant(&c).unwrap_err().to_string();
    assert!(e.contains("controllers[0] (perc).volumes"), "{e}");
}
