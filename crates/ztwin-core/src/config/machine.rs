//! The machine: vCPUs, RAM and the CPU time of each unit of work.

use serde::{Deserialize, Serialize};

/// The machine the database runs on.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Preset or user name of the machine (reporting only).
    pub name: String,
    /// Number of vCPUs that run the database, the client and the filesystem.
    pub vcpus: u32,
    /// RAM in bytes; ARC defaults derive from it as OpenZFS does (arc_c_max = RAM/2 ...).
    pub ram_bytes: u64,
    /// CPU time of each kind of work, on a reference core.
    pub cpu: CpuCosts,
}

/// CPU time of each unit of work, in nanoseconds of a reference core, divided by `speed`.
///
/// These are properties of the machine and software stack (measured, not fitted per
/// scenario); see `python/ztwin/presets/machines.toml` for where each preset's values come
/// from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuCosts {
    /// Speed of one vCPU relative to the reference core (0.25 = four times slower).
    pub speed: f64,
    /// Per SQL statement: client (sysbench, same machine), network loopback, parser,
    /// optimizer, executor, result send.
    pub statement_ns: u64,
    /// Per row returned by a statement.
    pub row_ns: u64,
    /// Per InnoDB page access (buffer-pool lookup, latch, page search).
    pub page_access_ns: u64,
    /// Per read system call that reaches the filesystem (VFS, context switches).
    pub syscall_ns: u64,
    /// Per block device I/O (submission, interrupt, completion).
    pub device_io_ns: u64,
    /// ZFS: per block looked up in the ARC (dbuf hold, hash lookup).
    pub zfs_block_ns: u64,
    /// ZFS: per zio sent to a device, beyond `device_io_ns`: the zio pipeline stages, the
    /// vdev queue, and the hand-offs to the z_rd_iss / z_rd_int taskq threads.
    pub zio_ns: u64,
    /// Memory copy throughput, bytes per second: ZFS copies every read from the ARC/dbuf
    /// buffer to the caller (uiomove; no O_DIRECT bypass before 2.3).
    pub memcpy_bytes_per_sec: u64,
    /// ZFS: checksum (fletcher4) throughput, bytes per second, on every block read from a device.
    pub checksum_bytes_per_sec: u64,
    /// ZFS: decompression throughput (lz4), bytes of output per second.
    pub decompress_bytes_per_sec: u64,
    /// ZFS: compression throughput (lz4), bytes of input per second: the txg sync's write
    /// issue taskq compresses every block it writes (`zio_write_compress`).
    pub compress_bytes_per_sec: u64,
}
