//! Runs resolved variant configs (the JSON `ztwin.scenario.resolve` gives for one variant)
//! without Python, and prints one line per file: its name, an FNV-1a hash of the result
//! JSON and the wall time. Used to check that a change leaves every bundled scenario's
//! results byte for byte identical:
//!
//! ```text
//! cargo run --release -p ztwin-core --example run_config -- CONFIG.json ... [--out DIR]
//! ```
//!
//! With `--out DIR` each result is also written to `DIR/<file name>`. With `--share
//! [--jobs N]` the first config is a leader and the others follow it (`run::share`: the
//! phases they share run once); each follower's hash is printed forked and from a run of
//! its own (`--no-cold` skips those), which must agree. It installs the
//! Python extension's allocator (transparent huge pages for large allocations), so its
//! wall times and profiles are those of `ztwin run`.

use std::time::Instant;

#[global_allocator]
static ALLOC: ztwin_core::support::mem_hint::HugePageAlloc = ztwin_core::support::mem_hint::HugePageAlloc;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--share") {
        args.retain(|a| a != "--share");
        return share(args);
    }
    let out = args.iter().position(|a| a == "--out").map(|i| {
        let dir = args.get(i + 1).cloned().unwrap_or_else(|| ".".into());
        args.drain(i..(i + 2).min(args.len()));
        dir
    });
    let mut failed = false;
    for path in &args {
        let name =
            std::path::Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        let t0 = Instant::now();
        match ztwin_core::run::run_variant_json(&text) {
            Ok(result) => {
                println!("{name} {:016x} {:.1}s", fnv1a(result.as_bytes()), t0.elapsed().as_secs_f64());
                if let Some(dir) = &out {
                    if let Err(e) = std::fs::write(std::path::Path::new(dir).join(&name), &result) {
                        eprintln!("{dir}/{name}: {e}");
                        failed = true;
                    }
                }
            }
            Err(e) => {
                println!("{name} error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// `--share`: a leader, its followers forked and each run on its own.
fn share(mut args: Vec<String>) {
    let jobs = args.iter().position(|a| a == "--jobs").map_or(1, |i| {
        let n = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(1);
        args.drain(i..(i + 2).min(args.len()));
        n
    });
    let cold = !args.iter().any(|a| a == "--no-cold");
    args.retain(|a| a != "--no-cold");
    let texts: Vec<String> =
        args.iter().map(|p| std::fs::read_to_string(p).expect("readable config")).collect();
    let t0 = Instant::now();
    let (leader, outcomes) = match ztwin_core::run::run_shared_json(
        &texts[0],
        &texts[1..],
        jobs,
        std::time::Duration::from_secs(1),
        None,
    ) {
        Ok(x) => x,
        Err(e) => {
            println!("leader error: {e}");
            std::process::exit(1);
        }
    };
    println!("{} {:016x} shared run {:.1}s", args[0], fnv1a(leader.as_bytes()), t0.elapsed().as_secs_f64());
    let mut failed = false;
    for (k, o) in outcomes.iter().enumerate() {
        let name = &args[k + 1];
        let shared = match o {
            ztwin_core::run::Shared::Forked(doc) => format!("{:016x}", fnv1a(doc.as_bytes())),
            ztwin_core::run::Shared::Cold(why) => format!("cold ({why})"),
            ztwin_core::run::Shared::Failed(e) => {
                failed = true;
                format!("failed ({e})")
            }
        };
        if !cold {
            println!("{name} forked {shared}");
            continue;
        }
        let t = Instant::now();
        let c =
            ztwin_core::run::run_variant_json(&texts[k + 1]).map(|d| format!("{:016x}", fnv1a(d.as_bytes())));
        let c = c.unwrap_or_else(|e| format!("error {e}"));
        let same = if shared == c { "same" } else { "DIFFERENT" };
        failed |= shared != c && matches!(o, ztwin_core::run::Shared::Forked(_));
        println!("{name} forked {shared} cold {c} {same} ({:.1}s cold)", t.elapsed().as_secs_f64());
    }
    if failed {
        std::process::exit(1);
    }
}
