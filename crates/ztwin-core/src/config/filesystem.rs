//! The filesystem under the database files: a ZFS dataset (`zfs`), or XFS / ext4 with
//! extent mapping, optionally over bcache (`bcache`).

use serde::{Deserialize, Serialize};

use super::{BcacheConfig, ZfsConfig};

/// The filesystem under the database files.
// One per variant: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum FsConfig {
    /// OpenZFS dataset on a pool.
    Zfs(ZfsConfig),
    /// XFS: extent-mapped, no per-record metadata reads.
    Xfs(ExtentFsConfig),
    /// ext4: extent-mapped, no per-record metadata reads.
    Ext4(ExtentFsConfig),
}

/// Extent-mapped filesystem (XFS, ext4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtentFsConfig {
    /// Device holding the filesystem (with bcache: its backing device).
    pub device: String,
    /// Filesystem block size in bytes (4096 for both by default).
    pub block_size: u32,
    /// bcache between the filesystem and `device`: the filesystem is made on
    /// /dev/bcache0, `device` is the backing device; None = directly on `device`.
    pub bcache: Option<BcacheConfig>,
}
