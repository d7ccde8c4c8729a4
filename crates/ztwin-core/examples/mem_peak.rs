//! Measures the peak heap of running resolved variant configs (JSON files) and prints it
//! beside the core's estimate (`ztwin_core::run::estimate_memory`), one line per file:
//!
//! ```text
//! cargo run --release -p ztwin-core --example mem_peak -- CONFIG.json ... [--build-only]
//! ```
//!
//! `--build-only` builds each stack without running it (the peak of `check_variant`).
#![allow(unsafe_code)]

#[path = "../tests/support/peak_alloc.rs"]
mod peak_alloc;
use peak_alloc::{LIVE, PEAK};
use std::sync::atomic::Ordering;

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let build_only = args.iter().any(|a| a == "--build-only");
    args.retain(|a| a != "--build-only");
    for path in &args {
        let text = std::fs::read_to_string(path).expect("a readable config");
        let cfg = ztwin_core::config::VariantConfig::from_json(&text).expect("a valid config");
        let est = ztwin_core::run::estimate_memory(&cfg).expect("an estimate");
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let r = if build_only {
            ztwin_core::run::check_variant(&cfg).map(drop)
        } else {
            ztwin_core::run::run_variant(&cfg).map(drop)
        };
        let peak = (PEAK.load(Ordering::Relaxed) - base) as u64;
        let name =
            std::path::Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into());
        let parts: Vec<String> = est
            .parts
            .iter()
            .filter(|(_, b)| *b >= 64 << 10)
            .map(|(k, b)| format!("{k}={:.1}", mib(*b)))
            .collect();
        println!(
            "{name}: peak {:.1} MiB, estimate {:.1} MiB ({:.2}x){} [{}]",
            mib(peak),
            mib(est.total()),
            est.total() as f64 / peak.max(1) as f64,
            if r.is_err() { " (failed)" } else { "" },
            parts.join(" ")
        );
    }
}
