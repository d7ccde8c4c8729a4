//! A provider's I/O throttle: operations and bytes per second, with or without burst
//! credits.
//!
//! Without credits it is a leaky bucket with no burst: each request holds the throttle for
//! max(ops × 1/iops_limit, bytes / throughput_limit), where a request larger than
//! `iops_size` counts as ceil(bytes / iops_size) operations (QEMU's throttle.iops-size;
//! Azure and EBS count an I/O of up to 256 KiB once). Requests are admitted first come,
//! first served in the order they are submitted.
//!
//! With credits (`BurstConfig`) it is a token bucket with a peak rate, per resource:
//!
//! ```text
//!  level(t) = min(capacity, level(last) + (t - last) × provisioned rate)
//!  a request is admitted at the first t ≥ max(now, peak clock) with every level(t) ≥ 0;
//!  then  level -= its cost (operations, bytes), and the peak clock moves on by
//!        max(ops / burst IOPS, bytes / burst throughput)
//! ```
//!
//! Running at the provisioned rate keeps a level constant (each request is paid by what
//! accrued since the last one); below it the level rises to the capacity (credits
//! accrue); above it the level falls (credits are spent) at (rate - provisioned) per
//! second, the rate capped by the burst limit; once it is 0, requests wait for it to
//! refill, so the device runs at its provisioned rate. I/O credits and byte credits are
//! separate buckets, spent and refilled independently; a resource without a bucket is held
//! at its provisioned limit by the peak clock. A level below 0 is the debt of the last
//! request admitted (at most one request's cost), what the leaky bucket above carries in
//! its clock: with an empty bucket of capacity 0 the two give the same admissions.
//!
//! Sources:
//! - Azure Premium SSD credit bursting (Microsoft docs, includes/managed-disks-bursting.md,
//!   ms.date 03/29/2020): disks of 512 GiB and less (P1-P20) burst to 3,500 IOPS and
//!   170 MB/s; "Credits accumulate in a burst bucket whenever disk traffic is below the
//!   provisioned performance target ... and consume credits when traffic bursts beyond
//!   the target"; IOPS and bandwidth are tracked separately ("The burst traffic will
//!   independently consume credits from IOPS or bandwidth"); the bucket is full when the
//!   disk is attached to a VM; a P1 at 100 IOPS of its 120 credits the 20 unused IOs of
//!   each second; "the max burst limit defines the ceiling of disk traffic even if you have
//!   burst credits"; bursting "will not bypass" the VM's limits (the VM's limit is a
//!   throttle of its own after the disk's: `Device`, `io_limit`). The size table
//!   (includes/disk-storage-premium-ssd-sizes.md) gives the bucket as "30 min" of
//!   "max burst duration at max burst": a capacity of (burst - provisioned) × 1800 s per
//!   resource (INFERRED from that duration; the docs give no credit count).
//! - AWS EBS gp2 (EC2 User Guide, "Amazon EBS volume types", General Purpose SSD, "I/O
//!   credits and burst performance"): an initial balance of 5.4 million I/O credits, "enough
//!   to sustain the maximum burst performance of 3,000 IOPS for 30 minutes", which is also
//!   the largest balance; credits earned at the baseline of 3 IOPS per GiB, spent above it;
//!   volumes of 1,000 GiB and more have a baseline of at least 3,000 IOPS and never use
//!   them. Throughput: 250 MiB/s for volumes larger than 170 GiB and smaller than 334 GiB
//!   "if burst credits are available" (128 MiB/s otherwise): the burst throughput without
//!   a byte bucket of its own holds while the I/O credits last.
//!
//! Time in burst ([`Throttle::burst_ns`]) is the time between two admissions when the
//! second came sooner than the provisioned rate allows after the first (the bucket's
//! "declining" state of the Azure page).
//!
//! Simplifications: 1. credits are counted continuously per request, not per one-second
//! interval as the Azure page's example counts them; 2. a shared throttle admits requests
//! in the order they reach it (the simulator submits in time order, except a background
//! thread's I/O issued for a later time, which then goes first).

use crate::config::BurstConfig;
use crate::sim::time::SEC;

/// One resource's credit bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// ns per credit at the provisioned rate (the refill).
    ns_per_credit: f64,
    /// Largest level, credits.
    capacity: f64,
    /// Credits at `Credits::last` (negative: the debt of the last request).
    level: f64,
    /// ns per credit at the burst rate (the peak clock).
    burst_ns_per_credit: f64,
}

impl Bucket {
    fn new(provisioned_per_sec: f64, burst_per_sec: f64, capacity: f64) -> Bucket {
        Bucket {
            ns_per_credit: SEC as f64 / provisioned_per_sec,
            capacity,
            level: capacity,
            burst_ns_per_credit: SEC as f64 / burst_per_sec,
        }
    }

    /// Level at `t` (no earlier than `last`).
    #[inline]
    fn level_at(&self, last: f64, t: f64) -> f64 {
        (self.level + (t - last) / self.ns_per_credit).min(self.capacity)
    }

    /// When the level is back to 0 (at once if it is not below).
    #[inline]
    fn ready(&self, last: f64) -> f64 {
        if self.level >= 0.0 {
            last
        } else {
            last + -self.level * self.ns_per_credit
        }
    }
}

/// The credit state of a throttle with burst.
#[derive(Debug, Clone)]
struct Credits {
    ops: Option<Bucket>,
    bytes: Option<Bucket>,
    /// ns per byte at the burst throughput that holds while I/O credits last (gp2).
    bytes_with_io_credits: Option<f64>,
    /// Time the levels were computed at (the last admission), ns.
    last: f64,
    /// When the last request would have released the throttle at the provisioned rate.
    provisioned_next: f64,
    /// Time in burst so far, ns.
    burst_ns: f64,
    full_at_attach: bool,
}

/// What a throttle's credits are at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CreditState {
    /// I/O credits left, and the bucket's size (0, 0 without one).
    pub io_credits: f64,
    /// Size of the I/O credit bucket.
    pub io_capacity: f64,
    /// Byte credits left.
    pub byte_credits: f64,
    /// Size of the byte credit bucket.
    pub byte_capacity: f64,
    /// Time in burst so far, ns.
    pub burst_ns: f64,
}

/// A throttle (see the module docs).
#[derive(Debug, Clone)]
pub struct Throttle {
    /// ns per operation at the provisioned rate (0: no cap).
    op_interval_ns: f64,
    /// A larger request counts as ceil(bytes / iops_size) operations.
    iops_size: Option<u64>,
    /// ns per byte at the provisioned rate (0: no cap).
    byte_interval_ns: f64,
    /// Earliest time the next request is admitted (the leaky bucket's clock; with
    /// credits, the peak clock), fractional ns carried exactly.
    next_admit: f64,
    credits: Option<Credits>,
}

impl Throttle {
    /// A throttle of `iops` operations and `bytes_per_sec` bytes per second (None: no cap),
    /// counting requests larger than `iops_size` as several, with `burst` credits if any.
    /// A burst rate without the matching provisioned limit is ignored (the core's checks
    /// refuse it).
    pub fn new(
        iops: Option<f64>,
        bytes_per_sec: Option<f64>,
        iops_size: Option<u64>,
        burst: Option<&BurstConfig>,
    ) -> Throttle {
        let credits = burst.map(|b| {
            let bucket = |prov: Option<f64>, peak: Option<f64>, cap: Option<f64>| match (prov, peak, cap) {
                (Some(p), Some(r), Some(c)) => Some(Bucket::new(p, r, c)),
                _ => None,
            };
            let ops = bucket(iops, b.iops_limit, b.io_credits);
            let bytes = bucket(bytes_per_sec, b.throughput_limit_bytes_per_sec, b.byte_credits);
            let bytes_with_io_credits = match (bytes, b.byte_credits, b.throughput_limit_bytes_per_sec) {
                (None, None, Some(r)) if ops.is_some() && bytes_per_sec.is_some() => Some(SEC as f64 / r),
                _ => None,
            };
            Credits {
                ops,
                bytes,
                bytes_with_io_credits,
                last: 0.0,
                provisioned_next: 0.0,
                burst_ns: 0.0,
                full_at_attach: b.full_at_attach,
            }
        });
        Throttle {
            op_interval_ns: iops.map_or(0.0, |iops| SEC as f64 / iops),
            iops_size: iops_size.filter(|&n| n > 0),
            byte_interval_ns: bytes_per_sec.map_or(0.0, |t| SEC as f64 / t),
            next_admit: 0.0,
            credits,
        }
    }

    /// Admits a request of `bytes` that reaches the throttle at `now` (ns); returns when
    /// it passes (ns, fractional).
    #[inline]
    pub fn admit(&mut self, now: f64, bytes: u32) -> f64 {
        let ops = self.iops_size.map_or(1, |n| u64::from(bytes).div_ceil(n).max(1));
        let Some(c) = &mut self.credits else {
            let admit = self.next_admit.max(now);
            self.next_admit =
                admit + (self.op_interval_ns * ops as f64).max(bytes as f64 * self.byte_interval_ns);
            return admit;
        };
        let mut t = self.next_admit.max(now);
        for b in [&c.ops, &c.bytes].into_iter().flatten() {
            t = t.max(b.ready(c.last));
        }
        // Sooner than the provisioned rate allows (with a margin for rounding: an empty
        // bucket admits at its refill time, which is the provisioned time recomputed).
        if c.provisioned_next - t > 1.0 + 1e-6 * (c.provisioned_next - c.last) {
            c.burst_ns += t - c.last;
        }
        let (ops_f, bytes_f) = (ops as f64, f64::from(bytes));
        let mut provisioned = (self.op_interval_ns * ops_f).max(bytes_f * self.byte_interval_ns);
        if let Some(b) = &mut c.ops {
            b.level = b.level_at(c.last, t) - ops_f;
            provisioned = provisioned.max(ops_f * b.ns_per_credit);
        }
        if let Some(b) = &mut c.bytes {
            b.level = b.level_at(c.last, t) - bytes_f;
            provisioned = provisioned.max(bytes_f * b.ns_per_credit);
        }
        c.last = t;
        c.provisioned_next = t + provisioned;
        let op_ns = c.ops.map_or(self.op_interval_ns, |b| b.burst_ns_per_credit);
        let byte_ns = match (&c.bytes, c.bytes_with_io_credits, &c.ops) {
            (Some(b), _, _) => b.burst_ns_per_credit,
            (None, Some(ns), Some(o)) if o.level > 0.0 => ns,
            _ => self.byte_interval_ns,
        };
        self.next_admit = t + (op_ns * ops_f).max(bytes_f * byte_ns);
        t
    }

    /// The disk is attached to a VM anew (a restart that moved the VM): a bucket that is
    /// full at attach is filled.
    pub fn attach(&mut self) {
        if let Some(c) = &mut self.credits {
            if c.full_at_attach {
                for b in [&mut c.ops, &mut c.bytes].into_iter().flatten() {
                    b.level = b.capacity;
                }
            }
        }
    }

    /// Whether the throttle has burst credits.
    pub fn has_credits(&self) -> bool {
        self.credits.is_some()
    }

    /// Credits left at `t` (ns; a time before the last admission gives the balance after
    /// it) and the time in burst so far; all 0 without credits.
    pub fn credits_at(&self, t: f64) -> CreditState {
        let Some(c) = &self.credits else { return CreditState::default() };
        let left = |b: &Option<Bucket>| {
            b.map_or((0.0, 0.0), |b| (b.level_at(c.last, t.max(c.last)).max(0.0), b.capacity))
        };
        let ((io_credits, io_capacity), (byte_credits, byte_capacity)) = (left(&c.ops), left(&c.bytes));
        CreditState { io_credits, io_capacity, byte_credits, byte_capacity, burst_ns: c.burst_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Azure P10: 500 IOPS / 100 MB/s provisioned, 3500 / 170 burst, 30 minutes at the
    /// burst rate (the bucket INFERRED from it).
    fn p10() -> Throttle {
        let b = BurstConfig {
            iops_limit: Some(3500.0),
            io_credits: Some((3500.0 - 500.0) * 1800.0),
            throughput_limit_bytes_per_sec: Some(170e6),
            byte_credits: Some((170e6 - 100e6) * 1800.0),
            full_at_attach: true,
        };
        Throttle::new(Some(500.0), Some(100e6), Some(256 << 10), Some(&b))
    }

    /// Submits `n` requests of `bytes` as fast as the throttle takes them from `t`;
    /// returns the last admission.
    fn saturate(th: &mut Throttle, mut t: f64, n: u64, bytes: u32) -> f64 {
        for _ in 0..n {
            t = th.admit(t, bytes);
        }
        t
    }

    /// Saturated with small I/Os, a full P10 runs at 3500 IOPS for 30 minutes (its I/O
    /// credits drain at 3000 a second), then at its provisioned 500; its byte credits
    /// (4 KiB I/Os: 14 MB/s, below the 100 MB/s provisioned) are untouched.
    #[test]
    fn a_full_bucket_drains_at_the_burst_rate_for_thirty_minutes_then_falls_to_provisioned() {
        let mut th = p10();
        let n_burst = 3500 * 1800;
        let end = saturate(&mut th, 0.0, n_burst, 4096);
        let secs = end / SEC as f64;
        assert!((secs - 1800.0).abs() < 0.01, "burst lasted {secs} s");
        let c = th.credits_at(end);
        assert!(c.io_credits < 3.0, "{c:?}");
        // (The last request's 4096 bytes are charged at its admission.)
        assert!(c.byte_credits >= c.byte_capacity - 4096.0, "4 KiB at 3500/s is below 100 MB/s: {c:?}");
        assert!((c.burst_ns / SEC as f64 - 1800.0).abs() < 0.01, "{c:?}");
        // Then 500 IOPS.
        let after = saturate(&mut th, end, 5000, 4096);
        let rate = 5000.0 / ((after - end) / SEC as f64);
        assert!((rate - 500.0).abs() < 1.0, "{rate} IOPS once empty");
        let c2 = th.credits_at(after);
        assert!(
            (c2.burst_ns - c.burst_ns) / (after - end) < 0.01,
            "no time in burst at the provisioned rate: {c2:?}"
        );
    }

    /// Below the provisioned rate the bucket refills at (provisioned - used) per second,
    /// up to its size.
    #[test]
    fn the_bucket_refills_below_the_provisioned_rate() {
        let mut th = p10();
        let end = saturate(&mut th, 0.0, 3500 * 1800, 4096);
        // 100 IOPS for 1000 s: +400 credits a second.
        let mut t = end;
        for k in 1..=100_000u64 {
            t = th.admit(end + k as f64 * 1e7, 4096);
        }
        let c = th.credits_at(t);
        assert!((c.io_credits - 400.0 * 1000.0).abs() < 10.0, "{c:?}");
        // Idle for a day: full, not beyond.
        let c = th.credits_at(t + 86_400.0 * SEC as f64);
        assert_eq!(c.io_credits, c.io_capacity);
    }

    /// IOPS and bandwidth are credited independently: 256 KiB I/Os at the burst throughput
    /// (170 MB/s: about 650 IOPS, above the 500 provisioned) drain both, the byte bucket
    /// at 70 MB/s, the I/O bucket at about 150 a second; the byte bucket empties first
    /// (after 1800 s), and then 100 MB/s (381 IOPS) refills the I/O bucket.
    #[test]
    fn io_and_byte_credits_are_independent() {
        let mut th = p10();
        let bytes = 256u32 << 10;
        let per_sec = 170e6 / f64::from(bytes);
        let n = (per_sec * 1800.0) as u64;
        let end = saturate(&mut th, 0.0, n, bytes);
        assert!((end / SEC as f64 - 1800.0).abs() < 1.0, "{}", end / SEC as f64);
        let c = th.credits_at(end);
        assert!(c.byte_credits < f64::from(bytes), "{c:?}");
        let io_spent = c.io_capacity - c.io_credits;
        assert!((io_spent - (per_sec - 500.0) * 1800.0).abs() < 1000.0, "{c:?}");
        let after = saturate(&mut th, end, 10_000, bytes);
        let mbs = 10_000.0 * f64::from(bytes) / ((after - end) / SEC as f64) / 1e6;
        assert!((mbs - 100.0).abs() < 0.5, "{mbs} MB/s once the byte bucket is empty");
        let c2 = th.credits_at(after);
        assert!(c2.io_credits > c.io_credits, "I/O credits accrue at 381 of 500 IOPS: {c:?} -> {c2:?}");
    }

    /// gp2 of 250 GiB: 750 IOPS baseline, 3000 burst, 128 MiB/s, 250 MiB/s while I/O
    /// credits last (no byte bucket of its own): 250 MiB/s with credits, 128 MiB/s with
    /// none (a bucket of size 0).
    #[test]
    fn gp2_burst_throughput_holds_while_io_credits_last() {
        let gp2 = |credits: f64| {
            let b = BurstConfig {
                iops_limit: Some(3000.0),
                io_credits: Some(credits),
                throughput_limit_bytes_per_sec: Some(250.0 * 1048576.0),
                byte_credits: None,
                full_at_attach: false,
            };
            Throttle::new(Some(750.0), Some(128.0 * 1048576.0), None, Some(&b))
        };
        for (credits, mibs) in [(5.4e6, 250.0), (0.0, 128.0)] {
            let mut th = gp2(credits);
            let end = saturate(&mut th, 0.0, 2501, 1 << 20);
            let rate = 2500.0 / (end / SEC as f64);
            assert!((rate - mibs).abs() < 0.1, "{rate} MiB/s with {credits} credits");
        }
    }

    /// Without credits the throttle is the leaky bucket the device always had.
    #[test]
    fn without_credits_it_is_a_leaky_bucket() {
        let mut th = Throttle::new(Some(1000.0), Some(1e6), None, None);
        assert_eq!(th.admit(0.0, 0), 0.0);
        assert_eq!(th.admit(0.0, 0), 1e6);
        assert_eq!(th.admit(0.0, 65536), 2e6);
        assert_eq!(th.admit(0.0, 0), 2e6 + 65_536_000.0);
        assert!(!th.has_credits());
    }

    /// A restart that re-attaches the disk fills an Azure bucket, not a gp2 one.
    #[test]
    fn attach_fills_only_a_bucket_full_at_attach() {
        let mut az = p10();
        let t = saturate(&mut az, 0.0, 100_000, 4096);
        assert!(az.credits_at(t).io_credits < az.credits_at(t).io_capacity);
        az.attach();
        assert_eq!(az.credits_at(t).io_credits, az.credits_at(t).io_capacity);
        let b = BurstConfig { full_at_attach: false, ..az_cfg() };
        let mut gp = Throttle::new(Some(500.0), None, None, Some(&b));
        let t = saturate(&mut gp, 0.0, 100_000, 4096);
        let before = gp.credits_at(t).io_credits;
        gp.attach();
        assert_eq!(gp.credits_at(t).io_credits, before);
    }

    fn az_cfg() -> BurstConfig {
        BurstConfig {
            iops_limit: Some(3500.0),
            io_credits: Some(1e6),
            throughput_limit_bytes_per_sec: None,
            byte_credits: None,
            full_at_attach: true,
        }
    }

    proptest! {
        /// For any arrivals and sizes: credits stay within [0, capacity] (the level within
        /// [-one request's cost, capacity]); a request is admitted only with credits
        /// (level >= 0 before it is charged); admissions never exceed what the bucket and
        /// the refill allow, nor the burst rate.
        #[test]
        fn credits_stay_within_the_bucket(
            gaps in proptest::collection::vec(0u64..20_000_000, 1..400),
            sizes in proptest::collection::vec(prop_oneof![Just(512u32), Just(4096), Just(16384), Just(262_144), Just(1 << 20), Just(4 << 20)], 1..400),
            cap in 0.0f64..2000.0,
            bcap in 0.0f64..4e8,
        ) {
            let b = BurstConfig {
                iops_limit: Some(3500.0),
                io_credits: Some(cap),
                throughput_limit_bytes_per_sec: Some(170e6),
                byte_credits: Some(bcap),
                full_at_attach: true,
            };
            let mut th = Throttle::new(Some(500.0), Some(100e6), Some(256 << 10), Some(&b));
            let (mut now, mut last) = (0.0f64, 0.0f64);
            let (mut ops_total, mut bytes_total) = (0.0f64, 0.0f64);
            for (i, g) in gaps.iter().enumerate() {
                now += *g as f64;
                let bytes = sizes[i % sizes.len()];
                let ops = u64::from(bytes).div_ceil(256 << 10).max(1) as f64;
                let before = th.clone();
                let t = th.admit(now, bytes);
                prop_assert!(t >= now && t >= last);
                let c = before.credits.as_ref().unwrap();
                for (bk, cost) in [(c.ops.unwrap(), ops), (c.bytes.unwrap(), f64::from(bytes))] {
                    let at = bk.level_at(c.last, t);
                    prop_assert!(at >= -1e-6 * cost.max(1.0), "admitted without credits: {at}");
                }
                let a = th.credits.as_ref().unwrap();
                for (bk, cost) in [(a.ops.unwrap(), ops), (a.bytes.unwrap(), f64::from(bytes))] {
                    prop_assert!(bk.level <= bk.capacity && bk.level >= -cost * (1.0 + 1e-9), "{bk:?}");
                }
                let s = th.credits_at(t);
                prop_assert!(s.io_credits >= 0.0 && s.io_credits <= s.io_capacity);
                prop_assert!(s.byte_credits >= 0.0 && s.byte_credits <= s.byte_capacity);
                prop_assert!(s.burst_ns <= t + 1.0);
                ops_total += ops;
                bytes_total += f64::from(bytes);
                let secs = t / SEC as f64;
                // Everything admitted before t was paid by the full bucket and the refill.
                prop_assert!(ops_total - ops <= cap + 500.0 * secs + 1e-6, "{ops_total} ops by {secs} s");
                prop_assert!(bytes_total - f64::from(bytes) <= bcap + 100e6 * secs + 1e-3);
                last = t;
            }
        }
    }
}
