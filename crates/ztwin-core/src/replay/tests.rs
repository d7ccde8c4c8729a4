use super::*;
use proptest::prelude::*;

fn shared(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(p)
}

fn spec(trace: PathBuf, policies: Vec<Policy>, sizes: Vec<u64>) -> ReplaySpec {
    ReplaySpec {
        trace,
        format: None,
        policies,
        sizes,
        block_size: 4096,
        release: None,
        shards: None,
        max_requests: None,
        threads: None,
        request_interval_ns: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One stack-distance pass gives every size's LRU hits exactly; hits never fall as
    /// the cache grows.
    #[test]
    fn stack_distances_equal_lru_simulation(ids in prop::collection::vec(0u64..60, 1..600)) {
        let sizes = [1u64, 2, 3, 5, 8, 13, 21, 34, 55, 70];
        let mut sd = StackDistances::new(70);
        for &i in &ids { sd.access(i); }
        let mut prev = 0;
        for &s in &sizes {
            let mut c = Lru::new(s);
            for &i in &ids { c.access(i); }
            prop_assert_eq!(sd.hits(s), c.hits, "size {}", s);
            prop_assert!(c.hits >= prev);
            prev = c.hits;
        }
        prop_assert_eq!(sd.cold + sd.hist.iter().sum::<u64>(), ids.len() as u64);
    }

    /// The distinct ids counted by 64-id chunks are the ids of a set, for runs and
    /// scattered ids alike (the largest ids included).
    #[test]
    fn distinct_ids_count_as_a_set(ids in prop::collection::vec(prop_oneof![0u64..500, any::<u64>(), (u64::MAX - 200)..=u64::MAX], 0..600)) {
        let mut d = DistinctIds::new();
        for &i in &ids { d.add(i); }
        let set: std::collections::HashSet<u64> = ids.iter().copied().collect();
        prop_assert_eq!(d.count, set.len() as u64);
    }

    /// The textbook ARC never does worse than... nothing: but its bookkeeping holds and
    /// hits + misses = requests.
    #[test]
    fn arc_counts_add_up(ids in prop::collection::vec(0u64..40, 1..500), c in 1u64..20) {
        let mut a = ArcPaper::new(c);
        for &i in &ids { a.access(i); }
        prop_assert_eq!(a.hits + a.misses, ids.len() as u64);
        let [t1, b1, t2, b2] = a.sizes();
        prop_assert!(t1 + t2 <= c as u32 && t1 + b1 <= c as u32 && t1 + t2 + b1 + b2 <= 2 * c as u32);
    }
}

#[test]
fn stack_tree_grows_past_its_first_size() {
    // More requests than the initial 65536 positions.
    let mut sd = StackDistances::new(1000);
    let mut c = Lru::new(1000);
    let mut x = 7u64;
    for _ in 0..200_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let id = (x >> 33) % 3000;
        sd.access(id);
        c.access(id);
    }
    assert_eq!(sd.hits(1000), c.hits);
}

#[test]
fn zfs_arc_below_64_mib_is_rejected() {
    let e = zfs_arc_params(32768 * 512, ZfsRelease::V2_2).unwrap_err().to_string();
    assert!(e.contains("below 64 MiB") && e.contains("--block-size"), "{e}");
    let p = zfs_arc_params(128 << 20, ZfsRelease::V2_2).unwrap();
    assert_eq!(ArcLimits::from_params(&p).c_max, 128 << 20);
    let p = zfs_arc_params(64 << 20, ZfsRelease::V0_8).unwrap();
    assert_eq!(ArcLimits::from_params(&p).c_max, 64 << 20);
}

#[test]
fn replay_oltp_slice_all_policies() {
    let p = shared("arc-paper/OLTP.lis.zst");
    if !p.exists() {
        return;
    }
    let mut sp = spec(p, vec![Policy::Lru, Policy::Arc, Policy::ZfsArc], vec![16384, 32768]);
    sp.max_requests = Some(200_000);
    let r = replay(&sp).unwrap();
    assert_eq!(r.requests, 200_000);
    assert_eq!(r.format, "lis");
    assert_eq!(r.results.len(), 6);
    for w in r.results.chunks(2) {
        assert!(w[0].hits <= w[1].hits, "{w:?}");
    }
    // LRU from the stack pass equals a direct simulation.
    let mut c = Lru::new(16384);
    let (_, mut rd) = trace::open(&sp.trace, None).unwrap();
    for _ in 0..200_000 {
        c.access(rd.next_request().unwrap().unwrap().id);
    }
    assert_eq!(r.results[0].hits, c.hits);
    // ARC beats LRU on OLTP at these sizes (the paper's table).
    assert!(r.results[2].hits > r.results[0].hits);
    assert!(r.results[2].target.as_ref().unwrap()["p"].as_f64().is_some());
    let z = r.results[4].target.as_ref().unwrap();
    assert!(z["c"].as_u64().unwrap() <= 16384 * 4096);
}

#[test]
fn shards_error_is_small_on_oltp() {
    let p = shared("arc-paper/OLTP.lis.zst");
    if !p.exists() {
        return;
    }
    let sizes = vec![2048, 8192, 32768, 131072];
    let exact = replay(&spec(p.clone(), vec![Policy::Lru, Policy::Arc], sizes.clone())).unwrap();
    let mut sp = spec(p, vec![Policy::Lru, Policy::Arc], sizes);
    sp.shards = Some(0.1);
    let est = replay(&sp).unwrap();
    let mut worst: f64 = 0.0;
    for (a, b) in exact.results.iter().zip(&est.results) {
        worst = worst.max((a.hit_ratio - b.hit_ratio).abs());
    }
    assert!(worst < 0.02, "SHARDS at 0.1: worst miss-ratio error {worst}");
    assert!((est.unique as f64 / exact.unique as f64 - 1.0).abs() < 0.05);
}

#[test]
fn bad_requests_are_config_errors() {
    let p = shared("cloudPhysicsIO.txt");
    if !p.exists() {
        return; // ../shared is not beside this checkout
    }
    let e = replay(&spec(p.clone(), vec![Policy::ZfsArc], vec![1000])).unwrap_err().to_string();
    assert!(e.contains("64 MiB"), "{e}");
    let e = replay(&spec(p, vec![Policy::Lru], vec![0])).unwrap_err().to_string();
    assert!(e.contains("at least 1"), "{e}");
}

/// Timing of the policies alone on in-memory ids (run with --release --ignored --nocapture).
#[test]
#[ignore]
fn time_policies_in_memory() {
    let p = Path::new("/tmp/ztwin-bench-P6.oracleGeneral.bin");
    if !p.exists() {
        return;
    }
    let (_, mut r) = trace::open(p, None).unwrap();
    let mut ids = Vec::new();
    let t = Instant::now();
    while let Some(q) = r.next_request().unwrap() {
        ids.push(q.id);
    }
    eprintln!("read {} in {:.2} s", ids.len(), t.elapsed().as_secs_f64());
    for size in [1024u64, 4096, 32768] {
        let t = Instant::now();
        let mut c = Lru::new(size);
        for &i in &ids {
            c.access(i);
        }
        let lru = ids.len() as f64 / t.elapsed().as_secs_f64() / 1e6;
        let t = Instant::now();
        let mut a = ArcPaper::new(size);
        for &i in &ids {
            a.access(i);
        }
        let arc = ids.len() as f64 / t.elapsed().as_secs_f64() / 1e6;
        eprintln!("size {size}: lru {lru:.1} M/s ({} hits), arc {arc:.1} M/s ({} hits)", c.hits, a.hits);
    }
}

#[test]
fn a_huge_largest_size_costs_nothing_up_front() {
    // `--sizes 100000000000` once allocated 800 GB of histogram before reading a request.
    let mut sd = StackDistances::new(100_000_000_000);
    assert!(sd.hist.len() <= 1 << 16);
    for round in 0..3u64 {
        for id in 0..100_000u64 {
            let d = sd.access(id);
            assert_eq!(d, (round > 0).then_some(100_000));
        }
    }
    assert_eq!(sd.hits(99_999), 0);
    assert_eq!(sd.hits(100_000), 200_000);
    assert_eq!(sd.hits(100_000_000_000), 200_000);
    assert!(sd.hist.len() <= 200_002);
}

/// The counts of a replay (requests, sampled, distinct ids) are the same whether the first
/// job counts them or the stack-distance pass does, with and without SHARDS, on any
/// number of threads.
#[test]
fn counts_are_the_same_from_the_first_job_and_from_the_stack_pass() {
    let dir = std::env::temp_dir().join(format!("ztwin-replay-counts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.txt");
    let mut rng = rand_pcg::Pcg64Mcg::new(7);
    use rand::Rng;
    let ids: Vec<String> = (0..50_000).map(|_| rng.random_range(0u64..20_000).to_string()).collect();
    std::fs::write(&p, ids.join("\n")).unwrap();
    for shards in [None, Some(0.3)] {
        for threads in [1, 3] {
            let mut direct = spec(p.clone(), vec![Policy::Lru, Policy::Arc], vec![100, 1000]);
            direct.shards = shards;
            direct.threads = Some(threads);
            let mut curve = direct.clone();
            curve.sizes = vec![100, 200, 300, 500, 1000];
            let (a, b) = (replay(&direct).unwrap(), replay(&curve).unwrap());
            assert_eq!(
                (a.requests, a.sampled_requests, a.unique),
                (b.requests, b.sampled_requests, b.unique)
            );
            assert_eq!(a.requests, 50_000);
            // LRU from the direct jobs equals the stack pass's at the shared sizes.
            assert_eq!(a.results[0].hits, b.results[0].hits);
            assert_eq!(a.results[1].hits, b.results[4].hits);
        }
        // One job, on one thread or with a second one to spare.
        let mut one = spec(p.clone(), vec![Policy::Lru], vec![1000]);
        one.shards = shards;
        one.threads = Some(1);
        let alone = replay(&one).unwrap();
        one.threads = Some(2);
        let helped = replay(&one).unwrap();
        assert_eq!(
            (alone.requests, alone.sampled_requests, alone.unique, alone.results[0].hits),
            (helped.requests, helped.sampled_requests, helped.unique, helped.results[0].hits)
        );
        one.max_requests = Some(12_345);
        assert_eq!(replay(&one).unwrap().requests, 12_345);
    }
    // A bad line far into the trace stops the counting job with the error.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, format!("{}\nnot-a-number\n1\n", ids.join("\n"))).unwrap();
    for threads in [1, 2] {
        let mut one = spec(bad.clone(), vec![Policy::Lru], vec![1000]);
        one.threads = Some(threads);
        let e = replay(&one).unwrap_err().to_string();
        assert!(e.contains("line 50001"), "{e}");
    }
}
