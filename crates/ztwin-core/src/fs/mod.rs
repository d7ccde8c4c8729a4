//! Filesystems: OpenZFS and the extent-mapped baselines (XFS, ext4).
pub mod extent;
pub mod zfs;
