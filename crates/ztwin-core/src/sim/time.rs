//! Simulated time: integer nanoseconds, never floats, so runs are exact and repeatable.

/// A point or span of simulated time in nanoseconds.
pub type Nanos = u64;

/// One microsecond.
pub const US: Nanos = 1_000;
/// One millisecond.
pub const MS: Nanos = 1_000_000;
/// One second.
pub const SEC: Nanos = 1_000_000_000;

/// Converts seconds (possibly fractional) to nanoseconds, rounding to nearest.
pub fn secs_f64(s: f64) -> Nanos {
    (s * SEC as f64).round() as Nanos
}
