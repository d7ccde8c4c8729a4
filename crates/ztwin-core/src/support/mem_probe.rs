//! How long one random read of memory takes on this machine: the measure by which runs of
//! the twin on different machines (or on one shared machine at different times) compare.
//!
//! A simulated read goes through tables far larger than the CPU caches (the L2ARC index
//! of a full-scale run is about 630 MiB), and most of its wall time is spent waiting for
//! such reads, one after the other. The probe chases pointers through one random cycle
//! over all the cache lines of a buffer (Sattolo's shuffle: every line is visited once per
//! lap), so each read depends on the one before, as a hash-table probe does on its key.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Bytes of one cache line; the probe reads one word per line.
const LINE: usize = 64;
const WORDS_PER_LINE: usize = LINE / 8;

/// Mean wall nanoseconds of `reads` dependent random reads over a buffer of `bytes`
/// (at least two cache lines; rounded down to whole lines), allocated as the
/// simulator's tables are.
pub fn random_read_ns(bytes: usize, reads: u64) -> f64 {
    let lines = (bytes / LINE).max(2);
    let order = random_cycle(lines);
    let mut next = vec![0u64; lines * WORDS_PER_LINE];
    for (i, &to) in order.iter().enumerate() {
        next[i * WORDS_PER_LINE] = u64::from(to) * WORDS_PER_LINE as u64;
    }
    drop(order);
    let mut at = 0usize;
    // One lap of warm-up (page faults, the TLB), capped.
    for _ in 0..lines.min(1 << 20) {
        at = next[at] as usize;
    }
    let start = std::time::Instant::now();
    for _ in 0..reads {
        at = next[at] as usize;
    }
    let ns = start.elapsed().as_nanos() as f64;
    std::hint::black_box(at);
    ns / reads.max(1) as f64
}

/// Sattolo's algorithm: `order[i]` is the successor of `i` in one uniformly random cycle
/// through `0..n` (a fixed seed: the same cycle every time).
fn random_cycle(n: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(0x5eed);
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lap_visits_every_line_once() {
        let lines = 1000;
        let order = random_cycle(lines);
        let (mut at, mut seen) = (0usize, vec![false; lines]);
        for _ in 0..lines {
            assert!(!seen[at], "line {at} visited twice in a lap");
            seen[at] = true;
            at = order[at] as usize;
        }
        assert_eq!(at, 0);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_probe_returns_a_positive_finite_time() {
        let ns = random_read_ns(1 << 16, 10_000);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
    }
}
