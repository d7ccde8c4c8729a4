//! Runs resolved variant configs (the JSON `ztwin.scenario.resolve` gives for one variant)
//! without Python, and prints one line per file: its name, an FNV-1a hash of the result
//! JSON and the wall time. Used to check that a change leaves every bundled scenario's
//! results byte for byte identical:
//!
//! ```text
//! cargo run --release -p ztwin-core --example run_config -- CONFIG.json ... [--out DIR]
//! ```
//!
//! With `--out DIR` each result is also written to `DIR/<file name>`. It installs the
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
