//! The phases of a run on one state: workload windows, cat, restarts, fio job groups and
//! module parameters set between them.

use serde::{Deserialize, Serialize};

use super::{L2arcTunables, SysbenchTest};

/// One phase of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum PhaseConfig {
    /// The workload's clients for a warm-up and a measured window.
    Workload(WorkloadPhase),
    /// Read every data file once from start to end, as `cat *.ibd > /dev/null` does.
    Cat(CatPhase),
    /// The machine restarts: the ARC and the buffer pool start empty.
    Restart(RestartPhase),
    /// fio jobs of a fio workload, run together once (fio's own results per job).
    Fio(FioPhase),
    /// Module parameters set at run time, between phases (`echo N >
    /// /sys/module/zfs/parameters/...`); a restart returns to the scenario's values.
    Tune(TunePhase),
}

/// L2ARC module parameters set between phases.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunePhase {
    /// Name in reports.
    pub name: String,
    /// The parameters set (the others keep their values).
    pub l2arc: L2arcTunables,
}

/// A run of some jobs of the fio workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioPhase {
    /// Name in reports ("read-1", ...).
    pub name: String,
    /// Indices into the workload's `jobs`, run concurrently as fio runs the jobs of one
    /// job file.
    pub jobs: Vec<u32>,
}

/// A phase of the workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadPhase {
    /// Name in reports.
    pub name: String,
    /// Time before the measured window, ns.
    pub warmup_ns: u64,
    /// Measured window, ns.
    pub duration_ns: u64,
    /// The sysbench test this phase runs (None: the workload's).
    #[serde(default)]
    pub test: Option<SysbenchTest>,
}

/// Sequential reads of every table file by one process.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatPhase {
    /// Name in reports.
    pub name: String,
    /// Bytes per read(2): coreutils cat uses max(128 KiB, st_blksize) (io_blksize).
    pub read_size: u32,
    /// How many times the files are read, one pass after the other.
    pub passes: u32,
}

/// A restart of the machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartPhase {
    /// Name in reports.
    pub name: String,
    /// The VM was stopped and started on another host: ephemeral devices come back empty.
    pub vm_moved: bool,
    /// The boot script recreates the pool's cache device (`zpool remove POOL DEV; zpool
    /// add POOL cache DEV`, as the 2021 Azure write-up's does): an ephemeral cache device
    /// that came back blank becomes a new, empty L2ARC. Without it the pool imports with
    /// that device UNAVAIL (no label: `vdev_validate_aux` marks it CANT_OPEN and
    /// `spa_load_l2cache` adds no dead device, `module/zfs/spa.c`, `vdev.c`, 0.8.6 to
    /// 2.3) and runs without an L2ARC.
    #[serde(default)]
    pub recreate_cache: bool,
}
