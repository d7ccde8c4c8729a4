//! The resolved configuration of one variant: what the Python front hands the core.
//!
//! Python reads the scenario TOML, validates it (pydantic), resolves presets, sizes
//! ("16K", "2.5GiB") and durations, merges the variant over the base, and sends one
//! `VariantConfig` per variant as JSON with every value explicit: bytes are integers of
//! bytes, times are integers of nanoseconds. The core validates again
//! (`deny_unknown_fields` plus [`VariantConfig::validate`]) because Rust tests and
//! benchmarks bypass Python.
//!
//! Config is data. Each part of a variant is a plain serde type in its own module below,
//! with the parameter names, defaults and sources of the system it describes; the models
//! own what they derive from it (their params, the release's defaults, their own rules:
//! `XxxParams::new(&cfg)`). This module composes the parts into a [`VariantConfig`] and
//! checks what crosses them (`validate`); where a check is a model's own rule (a disk's
//! mechanics, the ARC's limits, fio's job rules, bcache's bucket count) it asks that model.
//! Release behaviour is read from one table of named features ([`ZfsFeatures`]).
//!
//! - `variant`: [`VariantConfig`], [`RunConfig`] and the JSON entry.
//! - `phases`: [`PhaseConfig`] and its phases.
//! - `machine`: [`MachineConfig`], [`CpuCosts`].
//! - `devices`: [`DeviceConfig`], [`RotationalConfig`], a RAID controller's cache
//!   ([`ControllerConfig`]) and Linux md arrays ([`ArrayConfig`]).
//! - `filesystem`: [`FsConfig`] and the extent filesystems ([`ExtentFsConfig`]); `bcache`:
//!   [`BcacheConfig`]; `zfs`: [`ZfsConfig`] and its module parameters; `zfs_features`:
//!   [`ZfsFeatures`].
//! - `database`: [`DatabaseConfig`], [`InnodbConfig`].
//! - `dataset`: [`DatasetConfig`].
//! - `workload`: [`WorkloadConfig`], sysbench and fio.
//! - `validate`: [`VariantConfig::validate`].
//! - `test_support`: [`test_variant`], [`test_fio_variant`], [`test_raid_variant`],
//!   [`test_write_variant`], [`test_percona_variant`].

mod bcache;
mod database;
mod dataset;
mod devices;
mod filesystem;
mod machine;
mod phases;
mod test_support;
mod validate;
mod variant;
mod workload;
mod zfs;
mod zfs_features;

pub use bcache::{BcacheCacheMode, BcacheConfig, BcacheKernel, BcacheReplacement};
pub use database::{CharacterSet, DatabaseConfig, InnodbConfig, InnodbServer};
pub use dataset::{DatasetConfig, FileConfig, FilesDataset, PrepareRandType, SysbenchDataset, TpccDataset};
pub use devices::{
    ArrayConfig, BurstConfig, ControllerConfig, DeviceConfig, HostCacheConfig, IoLimitConfig,
    RotationalConfig,
};
pub use filesystem::{ExtentFsConfig, FsConfig};
pub use machine::{CpuCosts, MachineConfig, VmSysctls, DEFAULT_L2ARC_HDR_NS};
pub use phases::{CatPhase, FioPhase, PhaseConfig, RestartPhase, TunePhase, WorkloadPhase};
pub use test_support::{
    test_azure_variant, test_fio_variant, test_percona_variant, test_raid_variant, test_tpcc_variant,
    test_variant, test_write_variant,
};
pub use validate::{MAX_SERIES_ROWS, MAX_SIMULATED_NS};
pub use variant::{RunConfig, VariantConfig};
pub use workload::{
    FioBuffers, FioDistribution, FioFadvise, FioFileService, FioJob, FioRw, FioSync, FioWorkload,
    OltpOptions, RandType, SysbenchTest, SysbenchWorkload, WorkloadConfig,
};
pub use zfs::{
    ArcTunables, CacheProperty, Compression, DirectProperty, L2arcTunables, Logbias, MirrorReadPolicy,
    MirrorVdev, PoolTunables, SyncProperty, TxgTunables, VdevConfig, ZfetchTunables, ZfsConfig, ZfsRelease,
    ZilTunables,
};
pub use zfs_features::{
    ArcAccessRules, ArcAdaptation, ArcFeatures, ArcOverflow, ArcStructSizes, EarlyIssue, L2arcFeatures,
    LwbSizing, MgAliquot, ObjsetFeatures, PoolFeatures, PrefetchRead, VdevQueueFeatures, ZfetchFeatures,
    ZfsFeatures, ZilFeatures,
};

#[cfg(test)]
mod tests;
