//! The driver: builds the stack of one resolved variant and runs it on the simulated clock.
//! (Being written; the JSON entry points below are the binding's contract.)

use crate::config::VariantConfig;
use crate::error::{Error, Result};

/// Runs one resolved variant given as JSON and returns its result as JSON.
///
/// Input: a [`VariantConfig`]. Output: an object with the variant's summary
/// ("qps", "tps", "latency_ms", "cpu_utilization", "devices", "innodb", "arc" for ZFS)
/// and "series" (columns of equal length, one row per report interval).
pub fn run_variant_json(config_json: &str) -> Result<String> {
    let cfg = VariantConfig::from_json(config_json)?;
    Err(Error::Simulation {
        component: format!("{}.{}", cfg.scenario, cfg.variant),
        time_ns: 0,
        message: "the simulation driver is not built yet".into(),
    })
}
