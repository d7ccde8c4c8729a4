//! The core's fuzz harness: a resolved variant config with one to three numbers set to
//! adversarial values (zero, one, the largest of each integer width, 2^53 + 1, ...), a
//! key removed or an array's length changed (emptied, an element repeated or removed)
//! must be accepted or refused with an error; never a panic. Each mutant goes
//! through `check_variant_json`, which parses it, runs the config's checks and builds
//! the whole stack (every layer's own rules) without running it.
//!
//! Mutants the check accepts are then run, briefly (the run's times cut to a second of
//! simulated time, fio's jobs to a few MiB; a wall-time limit stops a slow one through the
//! progress observer): a panic there is a failure too, as a hang would be.
//!
//! Mutants of the write bases are also run as a leader and a follower that shares its
//! read-only warm-up (`run::share`: another logbias, a device's latency, another test):
//! a forked follower's result must be its own run's, byte for byte.
//!
//! Bounded for CI (proptest's case count; `PROPTEST_CASES` raises it for a longer
//! session). The Python side fuzzes scenario files and fio job files (tests/test_fuzz.py).

use proptest::prelude::*;
use serde_json::Value;
use ztwin_core::config::{
    test_azure_variant, test_fio_variant, test_percona_variant, test_raid_variant, test_tpcc_variant,
    test_variant, test_write_variant,
};
use ztwin_core::config::{VariantConfig, WorkloadConfig};
use ztwin_core::run::{
    check_variant_json, run_shared_json, run_variant_json_observed, run_variant_observed, Shared,
};
use ztwin_core::sim::time::{MS, SEC};

/// Every path to a number or a string in `v`.
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Number(_) | Value::String(_) | Value::Bool(_) => out.push(path.clone()),
        Value::Null => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k).expect("a leaf's path"),
        Value::Array(a) => &mut a[k.parse::<usize>().expect("an index")],
        _ => unreachable!("a leaf's path goes through containers"),
    })
}

const ADVERSARIAL: [u64; 12] = [
    0,
    1,
    2,
    3,
    255,
    4096,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    (1 << 53) + 1,
    i64::MAX as u64,
    u64::MAX - 1,
    u64::MAX,
];

/// Every path to an array in `v`.
fn arrays(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                arrays(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            out.push(path.clone());
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                arrays(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// A mutation: set a leaf to an adversarial value, delete an object's key, or change an
/// array's length (emptied, its last element repeated, its first removed).
#[derive(Debug, Clone, Copy)]
enum Op {
    Set,
    Delete,
    Clear,
    Repeat,
    RemoveFirst,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => Just(Op::Set),
        2 => Just(Op::Delete),
        1 => Just(Op::Clear),
        1 => Just(Op::Repeat),
        1 => Just(Op::RemoveFirst),
    ]
}

fn mutate(base: &Value, picks: &[(usize, usize, Op)]) -> Value {
    let mut v = base.clone();
    for &(leaf, value, op) in picks {
        if matches!(op, Op::Clear | Op::Repeat | Op::RemoveFirst) {
            let mut all = Vec::new();
            arrays(&v, &mut Vec::new(), &mut all);
            if let Some(path) = all.get(leaf % all.len().max(1)) {
                if let Value::Array(a) = at(&mut v, path) {
                    match op {
                        Op::Clear => a.clear(),
                        Op::Repeat => {
                            if let Some(x) = a.last().cloned() {
                                a.push(x);
                            }
                        }
                        _ => {
                            if !a.is_empty() {
                                a.remove(0);
                            }
                        }
                    }
                }
            }
            continue;
        }
        let mut all = Vec::new();
        leaves(&v, &mut Vec::new(), &mut all);
        if all.is_empty() {
            break;
        }
        let path = &all[leaf % all.len()];
        if let Op::Delete = op {
            let (last, parent) = path.split_last().expect("a non-empty path");
            if let Value::Object(m) = at(&mut v, parent) {
                m.remove(last);
            }
            continue;
        }
        let slot = at(&mut v, path);
        let new = match &*slot {
            Value::Number(_) => Value::from(ADVERSARIAL[value % ADVERSARIAL.len()]),
            Value::Bool(b) => Value::Bool(!*b),
            Value::String(_) => Value::from(["", "x", "0", "zstd", "2.2", "0.6"][value % 6]),
            other => other.clone(),
        };
        *slot = new;
    }
    v
}

fn check(base: &Value, picks: &[(usize, usize, Op)]) {
    let json = mutate(base, picks).to_string();
    // An error is fine; a panic fails the property (proptest reports the mutant).
    let _ = check_variant_json(&json);
}

/// Runs a mutant the check accepted with its times cut short; an error is fine, a panic
/// fails. Stopped after `WALL` of wall time.
fn run_briefly(base: &Value, picks: &[(usize, usize, Op)]) {
    const WALL: std::time::Duration = std::time::Duration::from_secs(5);
    let json = mutate(base, picks).to_string();
    if check_variant_json(&json).is_err() {
        return;
    }
    let Ok(mut cfg) = serde_json::from_str::<VariantConfig>(&json) else { return };
    shorten(&mut cfg);
    let start = std::time::Instant::now();
    let _ = run_variant_observed(&cfg, std::time::Duration::ZERO, &mut |_| start.elapsed() < WALL);
}

/// The run's times cut to a second of simulated time, fio's jobs to a few MiB.
fn shorten(cfg: &mut VariantConfig) {
    cfg.run.warmup_ns = cfg.run.warmup_ns.min(SEC / 2);
    cfg.run.duration_ns = cfg.run.duration_ns.min(SEC);
    cfg.run.report_interval_ns = cfg.run.report_interval_ns.max(100 * MS);
    if let WorkloadConfig::Fio(f) = &mut cfg.workload {
        for j in &mut f.jobs {
            j.runtime_ns = j.runtime_ns.min(SEC);
            j.ramp_time_ns = j.ramp_time_ns.min(SEC / 10);
            j.io_size = j.io_size.min(8 << 20);
            j.loops = j.loops.min(2);
        }
    }
}

/// A mutant as a leader with a read-only warm-up of half a second and its own test for a
/// second, and a follower changed after it by `change` (0: logbias, 1: the last device's
/// write latency, 2: the test): if the follower is forked, its result is its own run's.
/// Mutants that run slowly (over 2 s of wall time) are skipped.
fn forked_is_cold(base: &Value, picks: &[(usize, usize, Op)], change: usize) {
    use ztwin_core::config::{FsConfig, Logbias, PhaseConfig, SysbenchTest, WorkloadPhase};
    const WALL: std::time::Duration = std::time::Duration::from_secs(2);
    let json = mutate(base, picks).to_string();
    let Ok(mut leader) = serde_json::from_str::<VariantConfig>(&json) else { return };
    shorten(&mut leader);
    let WorkloadConfig::Sysbench(w) = &leader.workload else { return };
    let test = w.test;
    if test == SysbenchTest::Tpcc {
        return;
    }
    let phase = |name: &str, test, ns| {
        PhaseConfig::Workload(WorkloadPhase { name: name.into(), warmup_ns: 0, duration_ns: ns, test })
    };
    leader.phases =
        vec![phase("warm-up", Some(SysbenchTest::OltpReadOnly), SEC / 2), phase("benchmark", None, SEC)];
    let mut follower = leader.clone();
    match change % 3 {
        0 => {
            let FsConfig::Zfs(z) = &mut follower.filesystem else { return };
            z.logbias = if z.logbias == Logbias::Latency { Logbias::Throughput } else { Logbias::Latency };
        }
        1 => {
            let Some(d) = follower.devices.last_mut() else { return };
            d.write_latency_ns = d.write_latency_ns.saturating_mul(3).saturating_add(1000);
        }
        _ => {
            let WorkloadConfig::Sysbench(w) = &mut follower.workload else { return };
            w.test = if test == SysbenchTest::OltpUpdateIndex {
                SysbenchTest::OltpReadWrite
            } else {
                SysbenchTest::OltpUpdateIndex
            };
        }
    }
    let (lj, fj) = (serde_json::to_string(&leader).unwrap(), serde_json::to_string(&follower).unwrap());
    if check_variant_json(&lj).is_err() || check_variant_json(&fj).is_err() {
        return;
    }
    let start = std::time::Instant::now();
    let cold = |j: &str| {
        run_variant_json_observed(j, std::time::Duration::ZERO, &mut |_| start.elapsed() < 4 * WALL)
    };
    let Ok(leader_cold) = cold(&lj) else { return };
    if start.elapsed() > WALL {
        return;
    }
    let Ok((doc, out)) = run_shared_json(&lj, std::slice::from_ref(&fj), 2, std::time::Duration::ZERO, None)
    else {
        panic!("the leader ran cold but not shared");
    };
    assert!(doc == leader_cold, "the leader's result changed with a follower");
    match &out[0] {
        Shared::Forked(d) => {
            assert!(cold(&fj).is_ok_and(|c| &c == d), "a forked follower differs from its own run")
        }
        Shared::Cold(_) => {}
        Shared::Failed(e) => assert!(cold(&fj).is_err(), "the forked run failed ({e}), its own did not"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_sysbench_configs_run_without_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_variant()).unwrap();
        run_briefly(&base, &picks);
    }

    #[test]
    fn mutated_fio_configs_run_without_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_fio_variant()).unwrap();
        run_briefly(&base, &picks);
    }

    #[test]
    fn mutated_raid_configs_run_without_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_raid_variant()).unwrap();
        run_briefly(&base, &picks);
    }

    /// The controller's cache at its smallest (1 MiB): it fills, writes wait for room and
    /// the destaging for them is planned, reads go ahead of it.
    #[test]
    fn mutated_raid_configs_with_a_full_cache_run_without_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let mut c = test_raid_variant();
        c.controllers[0].cache_bytes = 1 << 20;
        let base = serde_json::to_value(c).unwrap();
        run_briefly(&base, &picks);
    }
}

/// The write bases: MySQL 5.7 on ZFS, MariaDB 10.11 on ext4, Percona Server 5.7 on ZFS,
/// sysbench-tpcc (MySQL 5.7 on ZFS), MySQL 5.7 on ZFS on an Azure-like VM (burst credits,
/// the VM's shared limits, the host cache), MySQL 5.7 on ZFS with an L2ARC, and with two
/// cache devices fed by master's per-device threads.
fn write_base(server: usize) -> ztwin_core::config::VariantConfig {
    match server {
        0 => test_write_variant(false),
        1 => test_write_variant(true),
        2 => test_percona_variant(),
        3 => test_tpcc_variant(1),
        4 => test_azure_variant(),
        5 => l2arc_write_base(),
        _ => l2arc_two_devices_base(),
    }
}

/// The number of write bases.
const WRITE_BASES: usize = 7;

/// MySQL 5.7 on ZFS writing, with a cache device whose feed is master's DWPD feed (the
/// what-if key `l2arc_dwpd_limit`), so that the L2ARC's keys are mutated too.
fn l2arc_write_base() -> ztwin_core::config::VariantConfig {
    let mut c = test_write_variant(false);
    let mut l2 = c.devices[0].clone();
    l2.name = "l2".into();
    l2.capacity_bytes = Some(1 << 30);
    c.devices.push(l2);
    let ztwin_core::config::FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!("a ZFS write variant") };
    z.cache = vec!["l2".into()];
    z.l2arc.l2arc_write_max = Some(16 << 20);
    z.l2arc.l2arc_dwpd_limit = Some(100);
    c
}

/// [`l2arc_write_base`] with a second cache device, both fed by master's per-device
/// threads (the what-if key `per_device_feed`), so that several devices and that key are
/// mutated too.
fn l2arc_two_devices_base() -> ztwin_core::config::VariantConfig {
    let mut c = l2arc_write_base();
    let mut l2b = c.devices.iter().find(|d| d.name == "l2").expect("the first cache device").clone();
    l2b.name = "l2b".into();
    l2b.capacity_bytes = Some(512 << 20);
    c.devices.push(l2b);
    let ztwin_core::config::FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!("a ZFS write variant") };
    z.cache.push("l2b".into());
    z.l2arc.per_device_feed = Some(true);
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, failure_persistence: None, ..ProptestConfig::default() })]

    /// The write path (InnoDB's redo, page cleaner, doublewrite; the ZIL; MariaDB on ext4;
    /// Percona Server's LRU manager and backoff).
    #[test]
    fn mutated_write_configs_run_without_panic(server in 0..WRITE_BASES, picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(write_base(server)).unwrap();
        run_briefly(&base, &picks);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, failure_persistence: None, ..ProptestConfig::default() })]

    /// Sharing a warm-up (`run::share`) on mutants of the write bases.
    #[test]
    fn mutated_write_configs_forked_are_their_own_runs(server in 0..WRITE_BASES, change in 0usize..3, picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..3)) {
        let base = serde_json::to_value(write_base(server)).unwrap();
        forked_is_cold(&base, &picks, change);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_write_configs_are_refused_or_built_never_panic(server in 0..WRITE_BASES, picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(write_base(server)).unwrap();
        check(&base, &picks);
    }

    #[test]
    fn mutated_sysbench_configs_are_refused_or_built_never_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_variant()).unwrap();
        check(&base, &picks);
    }

    #[test]
    fn mutated_fio_configs_are_refused_or_built_never_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_fio_variant()).unwrap();
        check(&base, &picks);
    }

    #[test]
    fn mutated_raid_configs_are_refused_or_built_never_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), op()), 1..4)) {
        let base = serde_json::to_value(test_raid_variant()).unwrap();
        check(&base, &picks);
    }
}

/// Mutants that once hung the run, saved: each is refused, by name, before it runs.
/// - MariaDB 10.11 (`write_base(1)`) with `innodb_lru_scan_depth` = 1 (and
///   `rand_spec_pct` = 3): the page cleaner never saw frames needed (`free < 1 / 2`), and a
///   thread short of a frame and the idle cleaner woke each other at one instant for ever.
/// - Percona Server 5.7 (`write_base(2)`) with `innodb_lru_scan_depth` = 1 and 4096
///   threads: the LRU manager freed one frame a second for 4096 threads backing off in
///   10 ms sleeps, a drain of hours of simulated time.
///
/// The driver's own stall check (`run::stall`) is tested on the first without the
/// config's check (`run::db_write_tests`).
#[test]
fn mutants_that_hung_are_refused() {
    let cases: [(usize, &[(&str, u64)]); 2] =
        [(1, &[("innodb_lru_scan_depth", 1)]), (2, &[("innodb_lru_scan_depth", 1), ("threads", 4096)])];
    for (server, sets) in cases {
        let mut v = serde_json::to_value(write_base(server)).unwrap();
        for &(key, value) in sets {
            let part = if key == "threads" { "workload" } else { "database" };
            v[part][key] = Value::from(value);
        }
        if server == 1 {
            v["workload"]["rand_spec_pct"] = Value::from(3.0);
        }
        match check_variant_json(&v.to_string()) {
            Err(ztwin_core::Error::Config { field, .. }) => {
                assert_eq!(field, "database.innodb_lru_scan_depth")
            }
            other => panic!("server {server}: expected the config's refusal, got {other:?}"),
        }
        let mut observed = 0;
        let cfg: VariantConfig = serde_json::from_value(v).unwrap();
        assert!(run_variant_observed(&cfg, std::time::Duration::ZERO, &mut |_| {
            observed += 1;
            true
        })
        .is_err());
        assert_eq!(observed, 0, "refused before it runs");
    }
}

#[test]
fn the_bases_build() {
    for base in [
        test_variant(),
        test_fio_variant(),
        test_raid_variant(),
        write_base(0),
        write_base(1),
        write_base(2),
        write_base(3),
        write_base(4),
        write_base(5),
        write_base(6),
    ] {
        check_variant_json(&serde_json::to_string(&base).unwrap()).unwrap();
    }
}
