//! Warm-start (`share`): a follower forked after the shared phases gives the cold run's
//! result byte for byte, or runs cold when something it changes was used.

use super::*;
use crate::config::{test_write_variant, Logbias, SysbenchTest, WorkloadPhase};
use crate::sim::time::US;

/// The write test variant (ZFS, one disk) with a read-only warm-up of 10 s and `test`
/// for 10 s after it, and a log device "slog" writing in `slog_write`.
fn two_phases(test: SysbenchTest, slog_write: Nanos) -> VariantConfig {
    let mut c = test_write_variant(false);
    if let WorkloadConfig::Sysbench(w) = &mut c.workload {
        w.test = test;
    }
    let phase = |name: &str, test| {
        PhaseConfig::Workload(WorkloadPhase { name: name.into(), warmup_ns: 0, duration_ns: 10 * SEC, test })
    };
    c.phases = vec![phase("warm-up", Some(SysbenchTest::OltpReadOnly)), phase("benchmark", None)];
    super::zil_tests::with_slog(&mut c, slog_write, 0);
    c
}

fn json(c: &VariantConfig) -> String {
    serde_json::to_string(c).expect("serializes")
}

/// The leader's and each follower's result through `run_shared_json`, forked or cold.
fn shared(leader: &VariantConfig, followers: &[VariantConfig]) -> (String, Vec<Shared>) {
    shared_jobs(leader, followers, 2)
}

fn shared_jobs(leader: &VariantConfig, followers: &[VariantConfig], jobs: usize) -> (String, Vec<Shared>) {
    let f: Vec<String> = followers.iter().map(json).collect();
    run_shared_json(&json(leader), &f, jobs, std::time::Duration::from_secs(60), None).expect("runs")
}

fn cold(c: &VariantConfig) -> String {
    run_variant_json(&json(c)).expect("runs")
}

#[test]
fn forked_followers_give_the_cold_runs_results_byte_for_byte() {
    let leader = two_phases(SysbenchTest::OltpUpdateIndex, 30 * US);
    let other_test = two_phases(SysbenchTest::OltpReadWrite, 30 * US);
    let mut latency = leader.clone();
    let FsConfig::Zfs(z) = &mut latency.filesystem else { unreachable!() };
    z.logbias = if z.logbias == Logbias::Latency { Logbias::Throughput } else { Logbias::Latency };
    let slower_slog = two_phases(SysbenchTest::OltpUpdateIndex, 300 * US);
    let followers = [other_test, latency, slower_slog];
    for f in &followers {
        let plan = share_plan(&leader, f).expect("shareable");
        assert_eq!(plan.phases, 1, "the warm-up is shared");
    }
    assert_eq!(share_plan(&leader, &followers[2]).unwrap().devices, vec![leader.devices.len() - 1]);
    let (doc, outcomes) = shared(&leader, &followers);
    assert_eq!(doc, cold(&leader), "the leader's own result is unchanged by the forks");
    for (f, o) in followers.iter().zip(&outcomes) {
        match o {
            Shared::Forked(d) => assert!(d == &cold(f), "a forked follower differs from its cold run"),
            other => panic!("not forked: {other:?}"),
        }
    }
    // The followers did differ from the leader (the comparison is not vacuous).
    let Shared::Forked(slow) = &outcomes[2] else { unreachable!() };
    assert_ne!(slow, &doc);
}

#[test]
fn a_device_that_served_io_before_the_fork_makes_the_follower_run_cold() {
    // The warm-up writes: its commits reach the log device, whose latency then shaped it.
    let mut leader = two_phases(SysbenchTest::OltpUpdateIndex, 30 * US);
    let PhaseConfig::Workload(w) = &mut leader.phases[0] else { unreachable!() };
    w.test = Some(SysbenchTest::OltpUpdateIndex);
    let mut follower = leader.clone();
    let last = follower.devices.len() - 1;
    follower.devices[last].write_latency_ns = 300 * US;
    assert!(share_plan(&leader, &follower).is_ok(), "the configs alone allow it");
    let (_, outcomes) = shared(&leader, std::slice::from_ref(&follower));
    match &outcomes[0] {
        Shared::Cold(why) => assert!(why.contains("device slog served I/O"), "{why}"),
        other => panic!("forked a follower whose device had served I/O: {other:?}"),
    }
}

#[test]
fn the_plan_names_what_keeps_a_follower_cold() {
    let leader = two_phases(SysbenchTest::OltpUpdateIndex, 30 * US);
    let mut rs = leader.clone();
    let FsConfig::Zfs(z) = &mut rs.filesystem else { unreachable!() };
    z.recordsize = 32768;
    assert_eq!(share_plan(&leader, &rs), Err("filesystem.recordsize differs".into()));
    let mut warm = leader.clone();
    let PhaseConfig::Workload(w) = &mut warm.phases[0] else { unreachable!() };
    w.duration_ns += SEC;
    assert_eq!(share_plan(&leader, &warm), Err("its first phase differs".into()));
    let mut ro = leader.clone();
    if let WorkloadConfig::Sysbench(w) = &mut ro.workload {
        w.test = SysbenchTest::OltpReadOnly;
    }
    let why = share_plan(&leader, &ro).unwrap_err();
    assert!(why.contains("writes"), "a follower without the write path cannot share: {why}");
    let mut single = leader.clone();
    single.phases.truncate(1);
    assert!(share_plan(&leader, &single).unwrap_err().contains("single phase"));
    let mut dw = leader.clone();
    if let Some(crate::config::DatabaseConfig::Innodb(d)) = &mut dw.database {
        d.innodb_doublewrite = Some(false);
    }
    assert_eq!(share_plan(&leader, &dw), Err("database.innodb_doublewrite differs".into()));
}

#[test]
fn one_job_runs_each_follower_to_its_end_before_the_leader_goes_on() {
    // Two followers forked at the same point with one process at a time: the same
    // results as with two (and as cold runs).
    let leader = two_phases(SysbenchTest::OltpUpdateIndex, 30 * US);
    let followers = [
        two_phases(SysbenchTest::OltpReadWrite, 30 * US),
        two_phases(SysbenchTest::OltpUpdateIndex, 90 * US),
    ];
    let (doc1, one) = shared_jobs(&leader, &followers, 1);
    let (doc2, two) = shared_jobs(&leader, &followers, 2);
    assert_eq!(doc1, doc2);
    for ((a, b), f) in one.iter().zip(&two).zip(&followers) {
        match (a, b) {
            (Shared::Forked(x), Shared::Forked(y)) => {
                assert!(x == y, "one job and two differ");
                assert!(x == &cold(f), "a forked follower differs from its cold run");
            }
            other => panic!("not forked: {other:?}"),
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 3, ..Default::default() })]

    /// Whatever the seed, the test after the warm-up, the log device's latency and
    /// logbias, a forked follower is its cold run.
    #[test]
    fn a_forked_follower_is_its_cold_run(
        seed in 0u64..1_000_000,
        test in proptest::sample::select(vec![SysbenchTest::OltpReadWrite, SysbenchTest::OltpUpdateIndex, SysbenchTest::OltpWriteOnly]),
        slog_us in 5u64..2000,
        throughput in proptest::bool::ANY,
    ) {
        let mut leader = two_phases(SysbenchTest::OltpUpdateIndex, 30 * US);
        leader.seed = seed;
        let mut f = two_phases(test, slog_us * US);
        f.seed = seed;
        if throughput {
            let FsConfig::Zfs(z) = &mut f.filesystem else { unreachable!() };
            z.logbias = if z.logbias == Logbias::Latency { Logbias::Throughput } else { Logbias::Latency };
        }
        let (_, out) = shared(&leader, std::slice::from_ref(&f));
        match &out[0] {
            Shared::Forked(d) => proptest::prop_assert!(d == &cold(&f), "forked differs from cold"),
            other => proptest::prop_assert!(false, "not forked: {:?}", other),
        }
    }
}
