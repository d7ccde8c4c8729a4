//! One variant, fully resolved: the parts of a run, its timing and phases, and the JSON
//! entry ([`VariantConfig::from_json`]).

use serde::{Deserialize, Serialize};

use super::{
    ArrayConfig, ControllerConfig, DatabaseConfig, DatasetConfig, DeviceConfig, FioPhase, FsConfig,
    MachineConfig, PhaseConfig, SysbenchTest, WorkloadConfig, WorkloadPhase,
};
use crate::error::{Error, Result};

/// One variant of a scenario, fully resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    /// Scenario name (for messages and reports).
    pub scenario: String,
    /// Variant name (for messages and reports).
    pub variant: String,
    /// Seed of every random stream of the run; same seed, same numbers.
    pub seed: u64,
    /// The machine: vCPUs, RAM and CPU costs.
    pub machine: MachineConfig,
    /// Every block device of the machine, by name.
    pub devices: Vec<DeviceConfig>,
    /// Hardware RAID controllers with a cache in front of some of the devices (none: every
    /// device is reached directly).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerConfig>,
    /// Linux md arrays over devices, which the filesystem may sit on (none: no array).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arrays: Vec<ArrayConfig>,
    /// The filesystem holding the database files.
    pub filesystem: FsConfig,
    /// The database engine above the filesystem (None for a fio workload: fio reads the
    /// files itself).
    pub database: Option<DatabaseConfig>,
    /// What is stored: the files the workload touches.
    pub dataset: DatasetConfig,
    /// The load: client threads and their queries.
    pub workload: WorkloadConfig,
    /// Warm-up, measured window, reporting interval.
    pub run: RunConfig,
    /// The run as a sequence of phases on the same state (caches carry over); empty means
    /// one workload phase with `run`'s warm-up and duration.
    pub phases: Vec<PhaseConfig>,
}

/// Timing of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Warm-up before the measured window, ns (counters reset after it).
    pub warmup_ns: u64,
    /// Measured window, ns.
    pub duration_ns: u64,
    /// Interval of the time series, ns.
    pub report_interval_ns: u64,
}

impl VariantConfig {
    /// The phases to run: `phases`, or when it is empty one workload phase from `run`
    /// (sysbench), or one fio phase running every job (fio, as `fio jobfile` does).
    pub fn effective_phases(&self) -> Vec<PhaseConfig> {
        if !self.phases.is_empty() {
            return self.phases.clone();
        }
        match &self.workload {
            WorkloadConfig::Fio(f) => {
                vec![PhaseConfig::Fio(FioPhase {
                    name: "fio".into(),
                    jobs: (0..f.jobs.len() as u32).collect(),
                })]
            }
            WorkloadConfig::Sysbench(_) => vec![PhaseConfig::Workload(WorkloadPhase {
                name: "benchmark".into(),
                warmup_ns: self.run.warmup_ns,
                duration_ns: self.run.duration_ns,
                test: None,
            })],
        }
    }

    /// Whether the sysbench tests the variant runs (the workload's, and the phases' own)
    /// change data: the database then needs its write path.
    pub fn sysbench_writes(&self) -> bool {
        self.any_sysbench_test(SysbenchTest::writes)
    }

    /// Whether the workload's events are transactions of several queries in any of the
    /// tests the variant runs (the workload's, the phases' own): a "tps" column beside
    /// "qps" in the series.
    pub fn sysbench_transactions(&self) -> bool {
        self.any_sysbench_test(SysbenchTest::transactions)
    }

    /// Whether `f` holds for a sysbench test the variant runs (the workload's, or a
    /// phase's own).
    fn any_sysbench_test(&self, f: impl Fn(SysbenchTest) -> bool) -> bool {
        let WorkloadConfig::Sysbench(w) = &self.workload else { return false };
        f(w.test)
            || self.phases.iter().any(|p| matches!(p, PhaseConfig::Workload(ph) if ph.test.is_some_and(&f)))
    }

    /// Parses and validates a resolved variant from JSON.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: VariantConfig =
            serde_json::from_str(text).map_err(|e| Error::config("<json>", e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }
}
