//! The machine: vCPUs, RAM and the CPU time of each unit of work.

use serde::{Deserialize, Serialize};

use super::devices::{HostCacheConfig, IoLimitConfig};

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
    /// `MemAvailable` of /proc/meminfo (the "available" column of `free`) with the database
    /// running, its buffer pool filled and the page cache dropped: the bytes the Linux page
    /// cache may hold under XFS/ext4's buffered files. None: derived from `ram_bytes` and
    /// what the database holds (`fs::page_cache::budget`).
    #[serde(default)]
    pub mem_available_bytes: Option<u64>,
    /// The kernel's vm sysctls the page cache reads (None: the kernel's default).
    #[serde(default)]
    pub vm: VmSysctls,
    /// Limits the host puts on several devices together (an Azure VM's uncached disk
    /// limit, its cached and temp storage limit), named by the devices' `io_limit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_limits: Vec<IoLimitConfig>,
    /// The VM's host cache, used by the devices with `host_cache` (Azure ReadOnly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cache: Option<HostCacheConfig>,
}

/// `/proc/sys/vm/*` of the machine (Linux 6.1, mm/page-writeback.c and mm/page_alloc.c):
/// None keeps the kernel's default.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmSysctls {
    /// vm.dirty_ratio, percent (20): writers are throttled to this share of dirtyable memory.
    pub dirty_ratio: Option<u32>,
    /// vm.dirty_background_ratio, percent (10): above it the flusher writes in the background.
    pub dirty_background_ratio: Option<u32>,
    /// vm.dirty_bytes (0: the ratio applies).
    pub dirty_bytes: Option<u64>,
    /// vm.dirty_background_bytes (0: the ratio applies).
    pub dirty_background_bytes: Option<u64>,
    /// vm.dirty_expire_centisecs (3000): data dirty this long is written by the periodic flush.
    pub dirty_expire_centisecs: Option<u32>,
    /// vm.dirty_writeback_centisecs (500): the flusher's period; 0 disables it.
    pub dirty_writeback_centisecs: Option<u32>,
    /// vm.min_free_kbytes (the kernel computes it from RAM; 67584 with transparent hugepages
    /// on a machine of 3 zones).
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor (10: 0.1% of a zone between watermarks).
    pub watermark_scale_factor: Option<u32>,
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
    /// ZFS: per ARC header the L2ARC feed thread visits: a header `l2arc_write_buffers()`
    /// passes on an ARC list (the list step to a header likely not in the CPU's caches,
    /// `mutex_tryenter()` of its hash lock, `l2arc_write_eligible()`), or an entry
    /// `l2arc_evict()` drops from the device's list. Absent: [`DEFAULT_L2ARC_HDR_NS`].
    #[serde(default = "default_l2arc_hdr_ns")]
    pub l2arc_hdr_ns: u64,
}

/// Default [`CpuCosts::l2arc_hdr_ns`], PROVISIONAL (not measured): about two misses to
/// DRAM (the header, its hash lock) of 80 to 100 ns on a 2 to 3 GHz server core, the
/// checks themselves a few ns. The presets give the range [100, 400].
pub const DEFAULT_L2ARC_HDR_NS: u64 = 200;

fn default_l2arc_hdr_ns() -> u64 {
    DEFAULT_L2ARC_HDR_NS
}
