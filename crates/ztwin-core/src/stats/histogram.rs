//! Latency histogram: HdrHistogram at microsecond resolution, 3 significant digits.

use hdrhistogram::Histogram;

use crate::sim::time::{Nanos, US};

/// Statement latencies of a window.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// Empty histogram covering 1 us to 1 hour (longer values are clamped to 1 hour).
    pub fn new() -> Self {
        // Infallible: constant bounds hdrhistogram accepts.
        LatencyHistogram { h: Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds") }
    }

    /// Records one latency.
    pub fn record(&mut self, latency: Nanos) {
        self.h.saturating_record((latency / US).max(1));
    }

    /// The `q` quantile (0..=1) in milliseconds; 0 when empty.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.h.is_empty() {
            return 0.0;
        }
        self.h.value_at_quantile(q) as f64 / 1000.0
    }

    /// Largest latency in milliseconds.
    pub fn max_ms(&self) -> f64 {
        self.h.max() as f64 / 1000.0
    }

    /// Mean latency in milliseconds.
    pub fn mean_ms(&self) -> f64 {
        self.h.mean() / 1000.0
    }

    /// Number of recorded latencies.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Forgets everything (keeps the allocation).
    pub fn reset(&mut self) {
        self.h.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    #[test]
    fn quantiles_within_three_significant_digits() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * MS / 10); // 0.1 .. 100 ms
        }
        assert!((h.quantile_ms(0.5) - 50.0).abs() < 0.1);
        assert!((h.quantile_ms(0.99) - 99.0).abs() < 0.1);
        assert_eq!(h.count(), 1000);
        h.reset();
        assert_eq!(h.quantile_ms(0.5), 0.0);
    }
}
