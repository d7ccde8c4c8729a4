use super::*;
use crate::config::{test_variant, ZfsRelease};

/// Runs the event loop of `cfg` up to its end, without the reporting.
fn simulate(cfg: &VariantConfig) -> Sim<'_> {
    let mut sim = Sim::new(cfg).unwrap();
    let end = cfg.run.warmup_ns + cfg.run.duration_ns;
    sim.mode = Mode::Workload { issue_until: end };
    for i in 0..sim.clients.len() {
        sim.queue.push(0, i as u32);
    }
    while let Some((t, i)) = sim.queue.pop() {
        if t >= end {
            break;
        }
        sim.step(i as usize, t);
    }
    sim
}

/// Records of 128K hold 8 pages of 16K and one 128K L1 covers a whole table, so 32
/// clients starting cold often want a block another client is reading. As in
/// dbuf_read (a dbuf in DB_READ is waited for on db_changed), the waiter does not go
/// to the ARC: no hit is counted for it, and the block is never read twice at once,
/// even when the ARC does not keep it (primarycache=metadata).
#[test]
fn a_block_in_flight_is_waited_for_without_an_arc_access() {
    for release in [ZfsRelease::V0_8, ZfsRelease::V2_2] {
        for primarycache in [CacheProperty::All, CacheProperty::Metadata] {
            let mut cfg = test_variant();
            let WorkloadConfig::Sysbench(w) = &mut cfg.workload;
            w.threads = 32;
            let FsConfig::Zfs(z) = &mut cfg.filesystem else { unreachable!() };
            z.recordsize = 128 << 10;
            z.release = release;
            z.primarycache = primarycache;
            let sim = simulate(&cfg);
            let Fs::Zfs { arc, .. } = &sim.fs else { unreachable!() };
            let st = arc.stats();
            assert!(sim.block_waits > 0, "the test needs concurrent reads of one block");
            assert_eq!(
                st.hits + st.misses + sim.block_waits,
                sim.block_lookups,
                "{release:?} {primarycache:?}: every lookup is one ARC access or one wait"
            );
        }
    }
}

/// The series covers the warm-up: its rows show the queries served then too (they
/// showed 0 queries/s and 0 ms latency while the devices were busy).
#[test]
fn warm_up_rows_count_queries() {
    let cfg = test_variant();
    let r = run_variant(&cfg).unwrap();
    let qps = r.series.column("qps").unwrap();
    let measured = r.series.column("measured").unwrap();
    let p50 = r.series.column("latency_p50_ms").unwrap();
    assert_eq!(measured, &[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    for k in 0..qps.len() {
        assert!(qps[k] > 0.0 && p50[k] > 0.0, "row {k}: qps {} p50 {}", qps[k], p50[k]);
    }
    let window: f64 = qps[2..].iter().sum::<f64>() / 4.0;
    assert!((window / r.summary["qps"].as_f64().unwrap() - 1.0).abs() < 1e-9);
}
