//! The write path through the driver: fio write jobs on ZFS and XFS.

use super::*;
use crate::config::{test_fio_variant, FioPhase, FioRw, PhaseConfig};

fn run(cfg: &VariantConfig) -> Value {
    run_variant(cfg).expect("runs").summary
}

/// The test fio variant with its "write" job as the only phase, changed by `f`.
fn write_variant(f: impl FnOnce(&mut crate::config::FioJob)) -> VariantConfig {
    let mut c = test_fio_variant();
    if let WorkloadConfig::Fio(w) = &mut c.workload {
        f(&mut w.jobs[2]);
    }
    c.phases = vec![PhaseConfig::Fio(FioPhase { name: "write".into(), jobs: vec![2] })];
    c
}

#[test]
fn smoke_sequential_write() {
    let cfg = write_variant(|_| {});
    let s = run(&cfg);
    println!("{}", serde_json::to_string_pretty(&s["phases"]).unwrap());
}

#[test]
fn smoke_randwrite() {
    let cfg = write_variant(|j| {
        j.rw = FioRw::Randwrite;
        j.bs_write = 4096;
        j.bs_read = 4096;
        j.io_size = 16 << 20;
    });
    let s = run(&cfg);
    println!("{}", serde_json::to_string_pretty(&s["phases"]).unwrap());
}
