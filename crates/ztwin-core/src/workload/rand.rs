//! sysbench's random number distributions, computed from uniform draws exactly as
//! sysbench computes them.
//!
//! Source: akopytov/sysbench, `src/sb_rand.c` and `src/sb_rand.h` at tag 1.0.20
//! (`sb_rand_uniform`, `sb_rand_gaussian`, `sb_rand_special`, `sb_rand_pareto`,
//! `sb_rand_uniform_double`) and on master for `sb_rand_zipfian` (the Zipfian
//! distribution is not in 1.0.x; master implements the rejection-inversion sampler of
//! Hörmann and Derflinger, after Apache Commons RNG `RejectionInversionZipfSampler`).
//! The math is ported; the code is not.
//!
//! What each distribution computes, with `u` a uniform double in [0, 1) made from the top
//! 52 bits of a 64-bit draw (as `sb_rand_uniform_double` does):
//!
//! - uniform(a, b) = a + trunc(u * (b - a + 1)).
//! - gaussian(a, b) = a + trunc(sum_{i<iter} (u_i * t) / iter), t = b - a + 1,
//!   iter = `--rand-spec-iter` (12): a sum of uniforms, approximately normal around the
//!   middle.
//! - special(a, b), sysbench 1.0's default `--rand-type`: with t = b - a, one draw `u`
//!   decides: if u * t * 100 / (100 - res) < t (probability (100 - res)%), the result is
//!   a gaussian-like a + trunc(t * mean of `iter` uniforms); otherwise the *same* `u` is
//!   reused: a + trunc(u * (t * pct/100 + 1) + t/2 - t * pct/200). Because u is then in
//!   [1 - res/100, 1), the "special" values are the upper `res`% of a window of
//!   `pct`% of the range centred on the middle, i.e. with the defaults (pct 1, res 75)
//!   75% of the draws land uniformly in the upper three quarters of the central 1% of
//!   the values, and the other 25% are gaussian around the middle.
//! - pareto(a, b) = a + trunc((b - a + 1) * u^p), p = ln(h) / ln(1 - h), h =
//!   `--rand-pareto-h` (0.2): small values are the hot ones.
//! - zipfian(a, b) = a + Z - 1 with Z in [1, n], n = b - a + 1, P(Z = m) ∝ m^-e, e =
//!   `--rand-zipfian-exp` (0.8), drawn by rejection inversion (a loop; accepts quickly).
//!
//! Simplifications:
//! 1. The generator is PCG64 (`rand_pcg::Pcg64Mcg`), not xoroshiro128+; only the
//!    distribution shapes matter, not sysbench's exact stream.
//! 2. Arguments are u64 instead of sysbench's uint32; results are the same for ranges
//!    that fit 32 bits (every sysbench table does).
//! 3. `rand_spec_pct` and `rand_spec_res` are taken as given (f64); sysbench parses them
//!    as integers. `rand_spec_res >= 100` (a division by zero in sysbench) is treated as
//!    "every draw is special".
//! 4. sysbench's `sb_rand_default` is selected per process by `--rand-type`; here it is
//!    per [`SbRand`] from the workload config.

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::config::{RandType, SysbenchWorkload};

/// A seeded sysbench random number source with the distribution parameters of a
/// workload (`--rand-type`, `--rand-spec-*`, `--rand-pareto-h`, `--rand-zipfian-exp`).
#[derive(Debug, Clone)]
pub struct SbRand {
    rng: Pcg64Mcg,
    rand_type: RandType,
    rand_iter: u32,
    rand_iter_mult: f64,
    rand_pct_mult: f64,
    rand_pct_2_mult: f64,
    rand_res_mult: f64,
    pareto_power: f64,
    zipf_exp: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl SbRand {
    /// A source seeded with `seed`, drawing `default_dist` from `cfg.rand_type`.
    pub fn new(seed: u64, cfg: &SysbenchWorkload) -> SbRand {
        let rand_iter = cfg.rand_spec_iter.max(1);
        let e = cfg.rand_zipfian_exp.max(0.0);
        let res = cfg.rand_spec_res;
        SbRand {
            rng: Pcg64Mcg::seed_from_u64(seed),
            rand_type: cfg.rand_type,
            rand_iter,
            rand_iter_mult: 1.0 / rand_iter as f64,
            rand_pct_mult: cfg.rand_spec_pct / 100.0,
            rand_pct_2_mult: cfg.rand_spec_pct / 200.0,
            rand_res_mult: if res >= 100.0 { f64::INFINITY } else { 100.0 / (100.0 - res) },
            pareto_power: cfg.rand_pareto_h.ln() / (1.0 - cfg.rand_pareto_h).ln(),
            zipf_exp: e,
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_h_integral_x1: h_integral(1.5, e) - 1.0,
        }
    }

    /// The `--rand-type` this source draws in [`SbRand::default_dist`].
    pub fn rand_type(&self) -> RandType {
        self.rand_type
    }

    /// `sb_rand_uniform_double`: a uniform double in [0, 1) with 52 random bits.
    #[inline]
    pub fn uniform_double(&mut self) -> f64 {
        (self.rng.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// A raw 64-bit uniform draw (for hashing or seeding derived streams).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// `sysbench.rand.default(a, b)`: the distribution chosen by `--rand-type`.
    #[inline]
    pub fn default_dist(&mut self, a: u64, b: u64) -> u64 {
        match self.rand_type {
            RandType::Uniform => self.uniform(a, b),
            RandType::Special => self.special(a, b),
            RandType::Gaussian => self.gaussian(a, b),
            RandType::Pareto => self.pareto(a, b),
            RandType::Zipfian => self.zipfian(a, b),
        }
    }

    /// `sb_rand_uniform(a, b)`: uniform in [a, b].
    #[inline]
    pub fn uniform(&mut self, a: u64, b: u64) -> u64 {
        debug_assert!(a <= b);
        a + (self.uniform_double() * (b - a + 1) as f64) as u64
    }

    /// `sb_rand_gaussian(a, b)`: mean of `rand_spec_iter` uniforms over [a, b].
    pub fn gaussian(&mut self, a: u64, b: u64) -> u64 {
        let t = (b - a + 1) as f64;
        let mut sum = 0.0;
        for _ in 0..self.rand_iter {
            sum += self.uniform_double() * t;
        }
        a + (sum * self.rand_iter_mult) as u64
    }

    /// `sb_rand_special(a, b)`: sysbench 1.0's default distribution (see module docs).
    pub fn special(&mut self, a: u64, b: u64) -> u64 {
        let t = (b - a) as f64;
        let range_size = t * self.rand_res_mult;
        let rnd = self.uniform_double();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..self.rand_iter {
                sum += self.uniform_double();
            }
            return a + (sum * t * self.rand_iter_mult) as u64;
        }
        let d = t * self.rand_pct_mult;
        let res = rnd * (d + 1.0) + t / 2.0 - t * self.rand_pct_2_mult;
        (a + res.max(0.0) as u64).min(b)
    }

    /// `sb_rand_pareto(a, b)`: a + trunc((b - a + 1) * u^(ln h / ln(1 - h))).
    #[inline]
    pub fn pareto(&mut self, a: u64, b: u64) -> u64 {
        let u = self.uniform_double();
        a + ((b - a + 1) as f64 * u.powf(self.pareto_power)) as u64
    }

    /// `sb_rand_zipfian(a, b)`: bounded Zipf over [a, b], P(a + m - 1) ∝ m^-exp.
    pub fn zipfian(&mut self, a: u64, b: u64) -> u64 {
        let n = b - a + 1;
        let e = self.zipf_exp;
        let h_n = h_integral(n as f64 + 0.5, e);
        loop {
            let u = h_n + self.uniform_double() * (self.zipf_h_integral_x1 - h_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u64).clamp(1, n);
            if k as f64 - x <= self.zipf_s || u >= h_integral(k as f64 + 0.5, e) - h(k as f64, e) {
                return a + k - 1;
            }
        }
    }
}

/// H(x) = (x^(1-e) - 1) / (1 - e), or ln x when e = 1: the integral of h.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - e) * log_x) * log_x
}

/// h(x) = x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// The inverse of H.
fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (helper1(t) * x).exp()
}

/// ln(1 + x) / x, with a Taylor series near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, with a Taylor series near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
pub(crate) fn test_workload(rand_type: RandType) -> SysbenchWorkload {
    SysbenchWorkload {
        test: crate::config::SysbenchTest::OltpPointSelect,
        threads: 8,
        rand_type,
        rand_spec_iter: 12,
        rand_spec_pct: 1.0,
        rand_spec_res: 75.0,
        rand_pareto_h: 0.2,
        rand_zipfian_exp: 0.8,
        random_points: 10,
        oltp: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: [RandType; 5] =
        [RandType::Uniform, RandType::Special, RandType::Gaussian, RandType::Pareto, RandType::Zipfian];

    /// Tolerance for a proportion estimated from `n` draws: 5 standard errors.
    fn tol(p: f64, n: usize) -> f64 {
        5.0 * (p * (1.0 - p) / n as f64).sqrt()
    }

    #[test]
    fn deterministic_per_seed() {
        for t in ALL {
            let w = test_workload(t);
            let mut a = SbRand::new(7, &w);
            let mut b = SbRand::new(7, &w);
            let mut c = SbRand::new(8, &w);
            let va: Vec<u64> = (0..100).map(|_| a.default_dist(1, 1_000_000)).collect();
            let vb: Vec<u64> = (0..100).map(|_| b.default_dist(1, 1_000_000)).collect();
            let vc: Vec<u64> = (0..100).map(|_| c.default_dist(1, 1_000_000)).collect();
            assert_eq!(va, vb, "{t:?}");
            assert_ne!(va, vc, "{t:?}");
        }
    }

    #[test]
    fn uniform_is_flat() {
        let mut r = SbRand::new(1, &test_workload(RandType::Uniform));
        let n = 200_000;
        let mut bins = [0usize; 10];
        for _ in 0..n {
            let v = r.uniform(1, 1000);
            bins[((v - 1) / 100) as usize] += 1;
        }
        for b in bins {
            let p = b as f64 / n as f64;
            assert!((p - 0.1).abs() < tol(0.1, n), "{bins:?}");
        }
    }

    #[test]
    fn special_puts_res_percent_in_the_central_pct() {
        let mut r = SbRand::new(2, &test_workload(RandType::Special));
        let (a, b) = (1u64, 10_000_000u64);
        let t = (b - a) as f64;
        // The special window: [t/2 - t*pct/200, t/2 + t*pct/200] around the middle.
        let lo = a + (t / 2.0 - t * 0.005) as u64;
        let hi = a + (t / 2.0 + t * 0.005) as u64 + 1;
        let n = 200_000;
        let mut inside = 0usize;
        let mut upper_three_quarters = 0usize;
        let q = a + (t / 2.0 - t * 0.005 + 0.25 * (t * 0.01)) as u64;
        for _ in 0..n {
            let v = r.special(a, b);
            if (lo..=hi).contains(&v) {
                inside += 1;
                if v >= q {
                    upper_three_quarters += 1;
                }
            }
        }
        // 75% are special; the gaussian part (sd of a 12-uniform mean is t/12) adds
        // 25% * P(|N| < 0.005 t / (t/12)) ≈ 25% * 0.048 = 1.2%.
        let p = inside as f64 / n as f64;
        assert!((p - 0.762).abs() < 0.01, "inside {p}");
        let pu = upper_three_quarters as f64 / inside as f64;
        assert!(pu > 0.97, "special values sit in the upper 3/4 of the window: {pu}");
    }

    #[test]
    fn gaussian_mean_and_spread() {
        let mut r = SbRand::new(3, &test_workload(RandType::Gaussian));
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| r.gaussian(0, 999_999) as f64 / 1e6).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Mean of 12 uniforms: mean 0.5, variance 1/144.
        assert!((mean - 0.5).abs() < 5.0 * (1.0 / 144.0 / n as f64).sqrt());
        assert!((var - 1.0 / 144.0).abs() < 0.05 / 144.0, "var {var}");
    }

    #[test]
    fn pareto_80_20() {
        // h = 0.2: P(value < 20% of range) = 0.2^(1/p) = 0.8 (the 80/20 rule).
        let mut r = SbRand::new(4, &test_workload(RandType::Pareto));
        let n = 200_000;
        let low = (0..n).filter(|_| r.pareto(1, 1_000_000) <= 200_000).count();
        let p = low as f64 / n as f64;
        assert!((p - 0.8).abs() < tol(0.8, n), "{p}");
    }

    #[test]
    fn zipfian_pmf() {
        // P(1) / P(2) = 2^0.8 and P(1) = 1 / H_{n,0.8}.
        let mut r = SbRand::new(5, &test_workload(RandType::Zipfian));
        let n_vals = 1000u64;
        let norm: f64 = (1..=n_vals).map(|m| (m as f64).powf(-0.8)).sum();
        let n = 400_000;
        let mut c1 = 0usize;
        let mut c2 = 0usize;
        let mut c10 = 0usize;
        for _ in 0..n {
            match r.zipfian(1, n_vals) {
                1 => c1 += 1,
                2 => c2 += 1,
                10 => c10 += 1,
                _ => {}
            }
        }
        for (c, m) in [(c1, 1.0f64), (c2, 2.0), (c10, 10.0)] {
            let p = m.powf(-0.8) / norm;
            let got = c as f64 / n as f64;
            assert!((got - p).abs() < tol(p, n), "m={m} got {got} want {p}");
        }
    }

    proptest! {
        #[test]
        fn in_range(seed in any::<u64>(), a in 0u64..1000, span in 0u64..5_000_000, ti in 0usize..5) {
            let mut r = SbRand::new(seed, &test_workload(ALL[ti]));
            let b = a + span;
            for _ in 0..50 {
                let v = r.default_dist(a, b);
                prop_assert!(v >= a && v <= b, "{v} not in [{a}, {b}]");
                let u = r.uniform(a, b);
                prop_assert!(u >= a && u <= b);
            }
        }
    }
}
