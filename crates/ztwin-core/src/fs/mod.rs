//! Filesystems: OpenZFS and the extent-mapped baselines (XFS, ext4), each a layer the
//! driver calls with the same shape: start a read, step it until it waits or is done
//! ([`ReadStep`]).
pub mod buffered;
pub mod extent;
pub mod journal;
pub mod page_cache;
pub mod zfs;

use crate::sim::time::Nanos;

/// What a read step of a filesystem layer ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStep {
    /// The read waits until this time (a device read, a block another reader is reading,
    /// the chunk's data reads); step it again then.
    WaitUntil(Nanos),
    /// The read waits for I/O a queue still holds (ZFS: a vdev queue): the layer wakes it
    /// (for ZFS: `Zfs::take_wakeups`); step it again then.
    Blocked,
    /// The data is in the caller's buffer (for ZFS: its dbufs are released).
    Done,
}
