//! sysbench-tpcc scenarios built from the test configs: the dataset's files and sizes,
//! a run on ZFS and on ext4 with every transaction type counted, and the configs the
//! core refuses.

use serde_json::Value;
use ztwin_core::config::*;
use ztwin_core::run::run_variant;
use ztwin_core::sim::time::SEC;

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[*k]).as_f64().unwrap_or_else(|| panic!("{path:?} in {v:#}"))
}

fn short(mut c: VariantConfig) -> VariantConfig {
    c.run = RunConfig { warmup_ns: SEC, duration_ns: 4 * SEC, report_interval_ns: SEC };
    c
}

/// A run counts all five transactions: tps is their sum over the window, new_order and
/// payment near 10/23 each, the 1% rollbacks among new orders; pages are written (the
/// write path ran) and the data files are the nine tables.
fn check_run(c: &VariantConfig) -> Value {
    let r = run_variant(c).unwrap();
    let s = &r.summary;
    let w = if s["phases"].is_array() { &s["phases"][0] } else { s };
    let t = &w["tpcc"];
    let total: f64 =
        ["new_order", "payment", "order_status", "delivery", "stock_level", "new_order_rollback"]
            .iter()
            .map(|k| num(t, &[k]))
            .sum();
    assert!(total > 200.0, "{w:#}");
    let tps = num(w, &["tps"]);
    assert!((tps * num(w, &["window_s"]) / total - 1.0).abs() < 0.02, "tps counts every type: {w:#}");
    let share = |k: &str| num(t, &[k]) / total;
    let no = share("new_order") + share("new_order_rollback");
    let band = |p: f64| 5.0 * (p * (1.0 - p) / total).sqrt();
    assert!((no - 10.0 / 23.0).abs() < band(10.0 / 23.0), "{t:#}");
    assert!((share("payment") - 10.0 / 23.0).abs() < band(10.0 / 23.0), "{t:#}");
    for k in ["order_status", "delivery", "stock_level"] {
        assert!(num(t, &[k]) > 0.0, "{k}: {t:#}");
    }
    assert!(num(w, &["latency_ms", "p95"]) > 0.0);
    assert!(num(w, &["qps"]) > 20.0 * tps, "about 30 queries a transaction: {w:#}");
    w.clone()
}

#[test]
fn tpcc_runs_on_zfs_and_ext4() {
    let zfs = short(test_tpcc_variant(2));
    let w = check_run(&zfs);
    assert!(w["innodb"]["buffer_pool_hit_ratio"].as_f64().is_some());
    let mut ext4 = zfs.clone();
    ext4.filesystem =
        FsConfig::Ext4(ExtentFsConfig { device: "disk".into(), block_size: 4096, bcache: None });
    check_run(&ext4);
}

/// The memory estimate and the check accept a tpcc scenario; mismatched test and dataset
/// are refused by the key as written.
#[test]
fn tpcc_configs_checked() {
    let c = test_tpcc_variant(1);
    c.validate().unwrap();
    let est = ztwin_core::run::estimate_memory(&c).unwrap();
    assert!(est.total() > 0);
    let mut bad = c.clone();
    if let WorkloadConfig::Sysbench(w) = &mut bad.workload {
        w.test = SysbenchTest::OltpReadWrite;
    }
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("workload.test"), "{e}");
    let mut bad = test_write_variant(false);
    if let WorkloadConfig::Sysbench(w) = &mut bad.workload {
        w.test = SysbenchTest::Tpcc;
    }
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("workload.test"), "{e}");
    let mut bad = c.clone();
    if let DatasetConfig::Tpcc(d) = &mut bad.dataset {
        d.scale = 0;
    }
    assert!(bad.validate().unwrap_err().to_string().contains("dataset.scale"));
}

/// Prints a run's summary (`cargo test --test tpcc -- --ignored --nocapture`).
#[test]
#[ignore]
fn print_a_run() {
    let c = short(test_tpcc_variant(2));
    println!("{}", serde_json::to_string(&c).unwrap());
    let r = run_variant(&c).unwrap();
    println!("{:#}", r.summary);
}

/// The run reports the dataset's size: the nine tables, their files and the data the load
/// wrote; the files hold the growth space, so they are larger than the data.
#[test]
fn tpcc_reports_the_dataset_size() {
    let c = short(test_tpcc_variant(1));
    let s = run_variant(&c).unwrap().summary;
    let d = &s["tpcc_dataset"];
    assert_eq!(d["tables"].as_object().unwrap().len(), 9, "{d:#}");
    let data = num(d, &["loaded_bytes"]);
    assert!(num(d, &["file_bytes"]) > data);
    // About 87 MiB a warehouse and 9.5 MiB of items (tpcc_schema), plus the files' headers.
    assert!((95e6..115e6).contains(&data), "{d:#}");
    assert_eq!(num(d, &["tables", "stock", "rows"]), 100_000.0);
}

/// Row locks (`db::innodb::row_locks`): with one warehouse every payment updates the same
/// warehouse row and holds its lock to its commit, so with 16 threads they queue for it
/// (Innodb_row_lock_waits, _time); a lock request waits at most once and only payments
/// and new orders take them (a warehouse and a district lock for a payment, a district
/// lock for a new order). Spread over 16 warehouses the same threads rarely meet, and
/// each payment's wait is shorter.
#[test]
fn payments_of_one_warehouse_queue_for_its_row() {
    let run = |scale: u32| {
        let mut c = short(test_tpcc_variant(scale));
        if let WorkloadConfig::Sysbench(w) = &mut c.workload {
            w.threads = 16;
        }
        let r = run_variant(&c).unwrap();
        let w =
            if r.summary["phases"].is_array() { r.summary["phases"][0].clone() } else { r.summary.clone() };
        w
    };
    let one = run(1);
    let i = &one["innodb"];
    let t = &one["tpcc"];
    let waits = num(i, &["Innodb_row_lock_waits"]);
    let (payments, new_orders) = (num(t, &["payment"]), num(t, &["new_order_total"]));
    assert!(waits > 0.2 * payments, "16 threads on one warehouse row queue: {i:#} {t:#}");
    // Locks requested in the window, plus at most one wait per thread carried in.
    assert!(waits <= 2.0 * payments + new_orders + 16.0, "{i:#} {t:#}");
    assert!(num(i, &["Innodb_row_lock_time"]) > 0.0, "{i:#}");
    assert!(num(i, &["Innodb_row_lock_current_waits"]) < 16.0, "{i:#}");
    let many = run(16);
    let per_trx = |w: &Value| {
        num(&w["innodb"], &["Innodb_row_lock_waits"]) / (num(w, &["tps"]) * num(w, &["window_s"]))
    };
    assert!(per_trx(&many) < 0.5 * per_trx(&one), "one {} many {}", per_trx(&one), per_trx(&many));
}
