//! Runs a leader config and followers that share its first phases (`run::share`), then
//! each follower cold, and prints each result's FNV-1a hash both ways and the wall times:
//! a check that a forked follower's result is the cold run's, byte for byte.
//!
//! ```text
//! cargo run --release -p ztwin-core --example run_shared -- LEADER.json FOLLOWER.json ... [--jobs N] [--no-cold]
//! ```

use std::time::Instant;

#[global_allocator]
static ALLOC: ztwin_core::support::mem_hint::HugePageAlloc = ztwin_core::support::mem_hint::HugePageAlloc;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let jobs = args.iter().position(|a| a == "--jobs").map_or(1, |i| {
        let n = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(1);
        args.drain(i..(i + 2).min(args.len()));
        n
    });
    let cold = !args.iter().any(|a| a == "--no-cold");
    args.retain(|a| a != "--no-cold");
    let texts: Vec<String> = args.iter().map(|p| std::fs::read_to_string(p).expect("readable config")).collect();
    let t0 = Instant::now();
    let (leader, outcomes) =
        match ztwin_core::run::run_shared_json(&texts[0], &texts[1..], jobs, std::time::Duration::from_secs(1), None) {
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
        let c = ztwin_core::run::run_variant_json(&texts[k + 1]).map(|d| format!("{:016x}", fnv1a(d.as_bytes())));
        let c = c.unwrap_or_else(|e| format!("error {e}"));
        let same = if shared == c { "same" } else { "DIFFERENT" };
        failed |= shared != c && matches!(o, ztwin_core::run::Shared::Forked(_));
        println!("{name} forked {shared} cold {c} {same} ({:.1}s cold)", t.elapsed().as_secs_f64());
    }
    if failed {
        std::process::exit(1);
    }
}
