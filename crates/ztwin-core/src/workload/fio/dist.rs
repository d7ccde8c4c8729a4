//! fio's non-uniform `random_distribution`s: which block of a file a random job reads.
//!
//! Source: axboe/fio `lib/zipf.c` (`zipf_init`, `zipf_next`, `pareto_init`,
//! `pareto_next`), `lib/gauss.c` (`gauss_init`, `gauss_next`), `filesetup.c`
//! `__init_rand_distribution` (one state per file, over `nranges = ceil(size / min_bs)`
//! blocks) and `init.c` (a non-uniform distribution turns the random map off). The math
//! is ported; the code is not.
//!
//! - zipf:θ (Gray et al.'s generator): with ζ(n) = Σ_{i<=min(n, 10M)} i^-θ, a uniform u
//!   gives rank 1 if uζ < 1, rank 2 if uζ < 1 + 0.5^θ, else 1 + n (ηu − η + 1)^α,
//!   α = 1/(1−θ), η = (1 − (2/n)^(1−θ)) / (1 − ζ(2)/ζ(n)).
//! - pareto:h: rank = (n − 1) u^(ln h / ln(1 − h)).
//! - normal:σ (fio's gauss): the mean of 12 draws uniform in [0, n], plus a uniform
//!   deviation within ±σ% of n / 2, halved until it stays below n.
//!
//! In all three the rank is then scattered over the file: block = (off + rank ·
//! 0x61C8864680B583EB) mod n (fio's `__hash_u64` and a per-file random offset), so hot
//! blocks are spread out rather than at the file's start. fio draws its uniforms from a 32-bit Tausworthe
//! generator; here the top 32 bits of the job's PCG stream take its place.

use rand::RngCore;
use rand_pcg::Pcg64Mcg;

use crate::config::FioDistribution;

/// fio's ZIPF_MAX_GEN: ζ(n) sums at most 10M terms.
pub const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's GAUSS_ITERS.
pub const GAUSS_ITERS: u32 = 12;
/// fio's `GOLDEN_RATIO_64`: `__hash_u64(v) = v * GOLDEN_RATIO_64`.
pub const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// One file's block distribution.
#[derive(Debug, Clone)]
pub struct BlockDist {
    kind: FioDistribution,
    n: u64,
    rand_off: u64,
    theta: f64,
    zetan: f64,
    zeta2: f64,
    pareto_pow: f64,
    stddev: u64,
}

/// A uniform double in [0, 1] as fio makes it: a 32-bit draw over FRAND32_MAX.
fn u32_unit(rng: &mut Pcg64Mcg) -> f64 {
    (rng.next_u64() >> 32) as f64 / u32::MAX as f64
}

impl BlockDist {
    /// The distribution `kind` with parameter `param` over `n` blocks (n >= 1); `rng`
    /// draws the per-file offset (shared_rand_init's `rand_off`).
    pub fn new(kind: FioDistribution, param: f64, n: u64, rng: &mut Pcg64Mcg) -> BlockDist {
        let n = n.max(1);
        let mut d = BlockDist {
            kind,
            n,
            rand_off: rng.next_u64() >> 32,
            theta: param,
            zetan: 0.0,
            zeta2: 0.0,
            pareto_pow: 0.0,
            stddev: 0,
        };
        match kind {
            FioDistribution::Zipf => {
                d.zeta2 = 1.0 + 0.5f64.powf(param);
                d.zetan = (1..=n.min(ZIPF_MAX_GEN)).map(|i| (i as f64).powf(-param)).sum();
            }
            FioDistribution::Pareto => d.pareto_pow = param.ln() / (1.0 - param).ln(),
            FioDistribution::Normal => {
                // gauss_init: rand_off 0 (no center given), stddev = ceil(n * dev / 100) <= n/2.
                d.rand_off = 0;
                if param != 0.0 {
                    d.stddev = ((n as f64 * param / 100.0).ceil() as u64).min(n / 2);
                }
            }
            FioDistribution::Random => {}
        }
        d
    }

    /// The next block (0..n): a rank, scattered over the file.
    pub fn next(&self, rng: &mut Pcg64Mcg) -> u64 {
        if self.kind == FioDistribution::Random {
            return (u32_unit(rng) * self.n as f64).min((self.n - 1) as f64) as u64;
        }
        self.rank(rng).wrapping_mul(GOLDEN_RATIO_64).wrapping_add(self.rand_off) % self.n
    }

    /// The next rank before scattering (0 is the hottest for zipf and pareto).
    fn rank(&self, rng: &mut Pcg64Mcg) -> u64 {
        let n = self.n;
        match self.kind {
            FioDistribution::Zipf => {
                let alpha = 1.0 / (1.0 - self.theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan);
                let u = u32_unit(rng);
                let z = u * self.zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(self.theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                val - 1
            }
            FioDistribution::Pareto => ((n - 1) as f64 * u32_unit(rng).powf(self.pareto_pow)) as u64,
            FioDistribution::Normal => {
                let mut sum = 0u64;
                for _ in 0..GAUSS_ITERS {
                    sum += (rng.next_u64() >> 32) % (n + 1);
                }
                sum = sum.div_ceil(u64::from(GAUSS_ITERS));
                if self.stddev > 0 {
                    let r = (rng.next_u64() >> 32) as f64 / (u32::MAX as f64 + 1.0);
                    let mut dev = (self.stddev as f64 * r) as i64 - (self.stddev / 2) as i64;
                    while dev + sum as i64 >= n as i64 {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev).max(0) as u64;
                }
                sum
            }
            FioDistribution::Random => (u32_unit(rng) * n as f64).min((n - 1) as f64) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Share of the draws that fall on the `top` most frequent ranks. (Scattered blocks
    /// concentrate more: `rank * GOLDEN_RATIO_64 mod 2^64 mod n` sends some ranks to one
    /// block and none to others, in fio as here.)
    fn top_share(kind: FioDistribution, param: f64, n: u64, top: usize) -> f64 {
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let d = BlockDist::new(kind, param, n, &mut rng);
        let mut counts = vec![0u32; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            assert!(d.next(&mut rng) < n);
            let b = d.rank(&mut rng);
            assert!(b < n);
            counts[b as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts[..top].iter().map(|&c| f64::from(c)).sum::<f64>() / draws as f64
    }

    /// zipf:1.2 over 10,000 blocks: the hottest block takes 1/ζ(n) of the draws and the
    /// top 1% about Σ_{i<=100} i^-1.2 / ζ(n).
    #[test]
    fn zipf_follows_its_pmf() {
        let n = 10_000u64;
        let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-1.2)).sum();
        let top1: f64 = (1..=100).map(|i| (i as f64).powf(-1.2)).sum::<f64>() / zeta;
        let got1 = top_share(FioDistribution::Zipf, 1.2, n, 1);
        assert!((got1 - 1.0 / zeta).abs() < 0.01, "hottest {got1} vs {}", 1.0 / zeta);
        let got = top_share(FioDistribution::Zipf, 1.2, n, 100);
        assert!((got - top1).abs() < 0.03, "top 1%: {got} vs {top1}");
    }

    /// pareto:0.2 is the 80/20 rule: 20% of the blocks take 80% of the draws.
    #[test]
    fn pareto_80_20() {
        let got = top_share(FioDistribution::Pareto, 0.2, 10_000, 2_000);
        assert!((got - 0.8).abs() < 0.02, "{got}");
    }

    /// normal: the mean of 12 uniforms has sd n/12 around n/2: the central 1/3 of ranks
    /// (±2 sd) takes about 95% of the draws; with σ = 0 no deviation is added.
    #[test]
    fn normal_concentrates_on_a_third() {
        let n = 9_000u64;
        let got = top_share(FioDistribution::Normal, 0.0, n, (n / 3) as usize);
        assert!((got - 0.954).abs() < 0.02, "{got}");
        // A wide deviation (σ = 100%: ±n/4 uniform) spreads it out.
        let wide = top_share(FioDistribution::Normal, 100.0, n, (n / 3) as usize);
        assert!(wide < got - 0.1, "{wide} vs {got}");
    }

    #[test]
    fn uniform_is_flat() {
        let got = top_share(FioDistribution::Random, 0.0, 1_000, 100);
        // 200 draws per block on average; the top 10% sit about 1.3 sd above.
        assert!(got < 0.12, "{got}");
    }

    #[test]
    fn hot_blocks_are_scattered_not_at_the_start() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let d = BlockDist::new(FioDistribution::Zipf, 1.2, 1_000_000, &mut rng);
        let firsts: Vec<u64> = (0..50).map(|_| d.next(&mut rng)).collect();
        assert!(firsts.iter().filter(|&&b| b < 1000).count() < 10, "{firsts:?}");
    }
}
