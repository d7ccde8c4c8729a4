//! Block devices: limits, service times, and a rotational disk's mechanics.

use serde::{Deserialize, Serialize};

/// One block device with its limits and service time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Name used by the filesystem config (e.g. "ebs", "nvme0").
    pub name: String,
    /// Preset the device came from (reporting only).
    pub kind: String,
    /// Operations per second the device admits (reads and writes together); None = no cap.
    pub iops_limit: Option<f64>,
    /// Bytes per second the device admits; None = no cap.
    pub throughput_limit_bytes_per_sec: Option<f64>,
    /// Median service time of a small read once admitted, ns.
    pub read_latency_ns: u64,
    /// Median service time of a small write once admitted, ns.
    pub write_latency_ns: u64,
    /// Log-normal sigma of the service time (0 = constant).
    pub latency_sigma: f64,
    /// Internal transfer rate, bytes per second (adds size / rate to each service time).
    pub transfer_bytes_per_sec: f64,
    /// Requests the device serves at once (NVMe queues, EBS, one for a disk arm).
    pub parallelism: u32,
    /// Usable size in bytes, when known (required for an L2ARC cache device).
    pub capacity_bytes: Option<u64>,
    /// Instance storage that comes back empty when the VM moves to another host (AWS
    /// instance store, Azure temporary disk).
    pub ephemeral: bool,
    /// A spinning disk: its mechanics replace the log-normal service time (the latencies
    /// above become the controller's command overhead); None = solid state or virtual.
    pub rotational: Option<RotationalConfig>,
    /// Service time of a cache flush (SYNCHRONIZE CACHE, FLUSH, an NVMe Flush; what
    /// `zio_flush` sends), ns. 0: the device has no volatile write cache (power-loss
    /// protection, or the write cache off), so the block layer completes the flush at once.
    #[serde(default)]
    pub flush_latency_ns: u64,
    /// What the kernel reports in `/sys/block/DEV/queue/rotational` (None: true for a disk
    /// with mechanics, false otherwise). A virtual disk is rotational unless its driver
    /// says otherwise (QEMU's virtio-blk does not). MariaDB flushes neighbour pages only
    /// on rotational storage.
    #[serde(default)]
    pub queue_rotational: Option<bool>,
    /// QEMU's `throttle.iops-size`: a request larger than this many bytes counts as
    /// several operations against `iops_limit` (None: every request counts once).
    #[serde(default)]
    pub iops_size_bytes: Option<u64>,
    /// A credit bucket that lets the device run above `iops_limit` / `throughput_limit`
    /// while it has credits (AWS gp2's I/O credits, Azure Premium SSD's credit bursting);
    /// None: the limits hold at all times. See `dev::throttle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<BurstConfig>,
    /// The machine-wide limit ([`IoLimitConfig`], by name) this device's I/O passes after
    /// its own: an Azure VM's uncached disk limit for its Premium SSDs, its "cached and
    /// temp storage" limit for its temporary disk. None: only the device's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limit: Option<String>,
    /// Azure host caching ReadOnly: reads are looked up in the machine's host cache
    /// ([`HostCacheConfig`]) first; false is host caching None. See `dev::host_cache`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_cache: bool,
}

/// A device's burst credits (`dev::throttle`): a bucket of I/O credits and one of byte
/// credits, each filled at the device's own limit (`iops_limit`, `throughput_limit`) less
/// what it uses, spent at up to the burst rate, full when the disk is attached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstConfig {
    /// Operations per second while I/O credits last (gp2 and Azure P1-P20: 3000 / 3500).
    pub iops_limit: Option<f64>,
    /// The I/O credit bucket's size, operations (gp2: 5.4 million; Azure: 30 minutes at
    /// the burst rate above the provisioned one).
    pub io_credits: Option<f64>,
    /// Bytes per second while credits last (Azure P1-P20: 170 MB/s; gp2 of 171-333 GiB:
    /// 250 MiB/s while I/O credits last).
    pub throughput_limit_bytes_per_sec: Option<f64>,
    /// The byte credit bucket's size, bytes (Azure: 30 minutes at the burst throughput
    /// above the provisioned one). None with a burst throughput: the burst throughput
    /// holds while the I/O credits last (gp2's rule).
    pub byte_credits: Option<f64>,
    /// The bucket is filled again when the disk is attached to a VM anew (a restart that
    /// moved the VM): Azure's "full burst credit bucket when the disk is attached".
    /// False: the balance belongs to the volume (gp2).
    pub full_at_attach: bool,
}

/// A limit that several devices' I/O passes together (`dev::throttle`, without credits):
/// an Azure VM's uncached disk limit, its "cached and temp storage" limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoLimitConfig {
    /// Name the devices' `io_limit` (and the host cache's `io_limit`) refer to.
    pub name: String,
    /// Operations per second (None: no cap).
    pub iops_limit: Option<f64>,
    /// Bytes per second (None: no cap).
    pub throughput_limit_bytes_per_sec: Option<f64>,
    /// A larger request counts as ceil(bytes / iops_size) operations (Azure: 256 KiB).
    pub iops_size_bytes: Option<u64>,
}

/// Azure's host cache ("BlobCache": the host's RAM and local SSD) of a VM size, shared by
/// its data disks with host caching ReadOnly; see `dev::host_cache`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCacheConfig {
    /// Cache size, bytes (the size table's "cache size in GiB": 50 GiB for D2ds_v4).
    pub cache_bytes: u64,
    /// The machine-wide limit hits pass ([`IoLimitConfig`] by name: the "max cached and
    /// temp storage throughput", shared with the temporary disk); None: no cap.
    pub io_limit: Option<String>,
    /// Median service time of a hit once admitted, ns (the host's local SSD).
    pub read_latency_ns: u64,
    /// Log-normal sigma of a hit's service time.
    pub latency_sigma: f64,
    /// Transfer rate of a hit, bytes per second.
    pub transfer_bytes_per_sec: f64,
    /// Hits served at once.
    pub parallelism: u32,
}

impl DeviceConfig {
    /// Whether the kernel reports the device rotational (see `queue_rotational`).
    pub fn reports_rotational(&self) -> bool {
        self.queue_rotational.unwrap_or(self.rotational.is_some())
    }
}

/// Mechanics of a rotational disk (see `dev::disk`); values from the drive's data sheet.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationalConfig {
    /// Spindle speed, revolutions per minute (7200: one revolution in 8.33 ms).
    pub rpm: u32,
    /// Seek between adjacent tracks, read, ns (data sheet "single track" or "track-to-track").
    pub track_to_track_seek_ns: u64,
    /// Mean read seek over all pairs of tracks, ns (data sheet "average seek").
    pub average_seek_ns: u64,
    /// Seek across the whole stroke, read, ns (data sheet "full stroke").
    pub full_stroke_seek_ns: u64,
    /// Extra settle time of a write seek over a read seek, ns (data sheet write minus read).
    pub write_settle_ns: u64,
    /// Media transfer rate at the outer edge (start of the LBA range), bytes per second.
    pub outer_rate_bytes_per_sec: f64,
    /// Media transfer rate at the inner edge (end of the LBA range), bytes per second.
    pub inner_rate_bytes_per_sec: f64,
    /// Bytes the drive reads ahead into its cache after a read (0 = no read-ahead).
    pub readahead_bytes: u64,
}

/// A hardware RAID controller with a battery-backed write-back cache, exposing each device
/// of `volumes` as its own volume (a single-drive virtual drive); see `dev::controller`
/// for the mechanism, and the sources and assumptions behind the scenario defaults
/// (python/ztwin/scenario/schema.py, `ControllerSpec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Name used by reports and messages (the scenario's `[controllers.NAME]`).
    pub name: String,
    /// The devices behind the controller, by name: each is one volume, its drive's
    /// mechanics and limits those of the device (the devices with `controller = NAME`).
    pub volumes: Vec<String>,
    /// Cache memory holding dirty write data, bytes, shared by the volumes. Scenario
    /// default 1 GiB, an assumption: the size of 2014-2018 cards (HP ProLiant G7 technology
    /// brief: the Smart Array P410i's 512 MB BBWC and 1 GB FBWC; Dell PERC H730 1 GB).
    pub cache_bytes: u64,
    /// MegaRAID's "Write Policy": true = Write Back (the default of MegaRAID Storage
    /// Manager's virtual drive settings: a write completes once the controller cache has
    /// it), false = Write Through (it completes when the drive has it; what the firmware
    /// falls back to while the battery is missing or bad).
    pub write_back: bool,
    /// Controller time per command (firmware, DMA set-up), ns: a cache hit completes after
    /// it; a command that goes to the drive adds it. Scenario default 40 us (assumption).
    pub cache_latency_ns: u64,
    /// Rate at which a hit's data moves between host memory and the cache, bytes/s.
    /// Scenario default 4 GB/s (assumption; PCIe 3.0 x8 carries about 7.9 GB/s).
    pub cache_bytes_per_sec: f64,
    /// Largest write the controller issues to a drive when destaging adjacent dirty data
    /// as one command, bytes. Scenario default 1 MiB (assumption: firmware not public).
    pub destage_max_bytes: u64,
    /// Destage writes the controller keeps queued at each drive. Scenario default 2
    /// (assumption: enough for contiguous destaging to stream, `dev::disk` rule 1).
    pub destage_queue_depth: u32,
}

/// A Linux md array (`mdadm --create /dev/NAME --level=10`) over devices; see
/// `dev::md_raid10`. Defaults from mdadm(8) (`--layout`, `--chunk`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayConfig {
    /// Name of the array (e.g. "md0"), which a filesystem's `device` may name.
    pub name: String,
    /// RAID level: "raid10" (mdadm's `--level=10`; the only one modelled).
    pub level: String,
    /// The member devices, in raid-disk order (the device list of `mdadm --create`).
    pub members: Vec<String>,
    /// mdadm's `--layout` for RAID10: 'n' (near), 'o' (offset) or 'f' (far) and a copy
    /// count; "n2" is mdadm's default (mdadm(8), `--layout`).
    pub layout: String,
    /// mdadm's `--chunk`, bytes: 512 KiB when creating an array (mdadm(8), `--chunk`; 64
    /// KiB before mdadm 3.1); a power of two of at least PAGE_SIZE (raid10.c `setup_conf`).
    pub chunk_bytes: u64,
}
