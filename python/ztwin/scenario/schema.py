"""The pydantic models of a scenario's tables, one per table (the file's layout is in
the package docs, :mod:`ztwin.scenario`).

Every model is strict and closed: an unknown key is an error, and so is a value of the
wrong TOML type (``threads = "4"``); nothing is coerced. Defaults are those of the tool a
table is named after (zfs(4), the MySQL manual, sysbench, fio). A union table
(``[filesystem]``, ``[workload]``, ``[[phases]]``) is chosen by its ``type``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from .values import (
    Ashift,
    DevicePreset,
    Duration,
    FsBlockSize,
    IndirectSize,
    IopsOrNone,
    MachinePreset,
    MiB,
    ModuleBool,
    MsDuration,
    OldBlocksPct,
    PageSize,
    PosInt,
    Rate,
    RateOrNone,
    Ratio,
    RecordSize,
    Size,
    _check,
    _pow2,
)


class _Model(BaseModel):
    # strict: `seed = true` or `threads = "4"` is an error, not a coercion (a TOML integer
    # is still accepted where a float is expected).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# ---------------------------------------------------------------------------------------
# Machine and devices


class CpuSpec(_Model):
    """CPU costs (the core's ``CpuCosts``): ns of a reference core, divided by ``speed``."""

    speed: Optional[float] = Field(None, gt=0, description="Speed of one vCPU relative to the reference core (0.25 = 4x slower).")
    statement_ns: Optional[int] = Field(None, ge=0, description="Per SQL statement (client, loopback, parser, optimizer, executor).")
    row_ns: Optional[int] = Field(None, ge=0, description="Per row returned.")
    page_access_ns: Optional[int] = Field(None, ge=0, description="Per InnoDB page access.")
    syscall_ns: Optional[int] = Field(None, ge=0, description="Per read system call reaching the filesystem.")
    device_io_ns: Optional[int] = Field(None, ge=0, description="Per block device I/O.")
    zfs_block_ns: Optional[int] = Field(None, ge=0, description="ZFS: per block looked up in the ARC.")
    zio_ns: Optional[int] = Field(None, ge=0, description="ZFS: per zio beyond device_io_ns (pipeline, vdev queue, taskq hand-offs).")
    memcpy_bytes_per_sec: Optional[int] = Field(None, gt=0, description="Copy to the caller (uiomove), bytes/s.")
    checksum_bytes_per_sec: Optional[int] = Field(None, gt=0, description="fletcher4 throughput, bytes/s.")
    decompress_bytes_per_sec: Optional[int] = Field(None, gt=0, description="lz4 decompression output, bytes/s.")
    compress_bytes_per_sec: Optional[int] = Field(None, gt=0, description="lz4 compression input, bytes/s (the txg sync's write issue taskq).")
    l2arc_hdr_ns: Optional[int] = Field(None, ge=0, description="ZFS: per ARC header the L2ARC feed thread visits (l2arc_write_buffers' list scan, l2arc_evict).")


class VmSpec(_Model):
    """``[machine.vm]``: the kernel's ``/proc/sys/vm`` knobs the page cache reads (Linux
    6.1, mm/page-writeback.c and mm/page_alloc.c); unset keeps the kernel's default. They
    matter only with buffered files on XFS/ext4 (fio ``direct=0``, InnoDB's buffered files)."""

    dirty_ratio: Optional[int] = Field(None, ge=0, le=100, description="vm.dirty_ratio, percent of dirtyable memory where writers are throttled (default 20).")
    dirty_background_ratio: Optional[int] = Field(None, ge=0, le=100, description="vm.dirty_background_ratio, percent where the flusher starts writing (default 10).")
    dirty_bytes: Optional[Size] = Field(None, description="vm.dirty_bytes: replaces dirty_ratio when non-zero (default 0).")
    dirty_background_bytes: Optional[Size] = Field(None, description="vm.dirty_background_bytes: replaces dirty_background_ratio when non-zero (default 0).")
    dirty_expire_centisecs: Optional[int] = Field(None, ge=0, lt=2**31, description="vm.dirty_expire_centisecs: age at which dirty data is written (default 3000).")
    dirty_writeback_centisecs: Optional[int] = Field(None, ge=0, lt=2**31, description="vm.dirty_writeback_centisecs: the flusher's period, 0 off (default 500).")
    min_free_kbytes: Optional[int] = Field(None, ge=0, description="vm.min_free_kbytes (default: computed from RAM, raised with transparent hugepages).")
    watermark_scale_factor: Optional[int] = Field(None, ge=1, le=3000, description="vm.watermark_scale_factor (default 10).")


class MachineSpec(_Model):
    """``[machine]``: a preset (see ``presets/machines.toml``) and overrides."""

    preset: Optional[MachinePreset] = Field(None, description="Name of a machine preset.")
    name: Optional[str] = Field(None, description="Name in reports (default: the preset's name).")
    description: Optional[str] = None
    cpu_model: Optional[str] = Field(None, description="Reporting only.")
    vcpus: Optional[PosInt] = Field(None, description="vCPUs running the database, the client and the filesystem.")
    ram: Optional[Size] = Field(None, description="RAM; OpenZFS derives ARC defaults from it (c_max = RAM/2 through 2.2).")
    cpu: Optional[CpuSpec] = None
    ebs_throughput_limit: Optional[Rate] = Field(
        None, gt=0, description="An EC2 instance's dedicated EBS bandwidth (its EBS-optimized baseline throughput): "
        "caps its EBS volumes (aws-gp2, aws-gp3) below their own limits."
    )
    uncached_disk_iops_limit: Optional[PosInt] = Field(
        None, description="An Azure VM's max uncached disk IOPS (its size table): caps its Premium SSDs (azure-premium) "
        "below their own tier's limits."
    )
    uncached_disk_throughput_limit: Optional[Rate] = Field(
        None, gt=0, description="An Azure VM's max uncached disk throughput (its size table): caps its Premium SSDs "
        "(azure-premium) below their own tier's limits."
    )
    host_cache_size: Optional[Size] = Field(
        None, description="An Azure VM size's host cache (its size table's \"cache size in GiB\"), used by its Premium SSDs "
        "with host_cache = \"readonly\"; unset: the size has none (Lsv2, Ls)."
    )
    cached_temp_iops_limit: Optional[PosInt] = Field(
        None, description="An Azure VM's max cached and temp storage IOPS (its size table): one limit that host-cache hits "
        "and its temporary disk pass together."
    )
    cached_temp_throughput_limit: Optional[Rate] = Field(
        None, gt=0, description="An Azure VM's max cached and temp storage throughput (its size table), shared by "
        "host-cache hits and its temporary disk."
    )
    host_cache_read_latency: Optional[Duration] = Field(
        None, description="Median service time of a host-cache hit once admitted (the host's local SSD)."
    )
    mem_available: Optional[Size] = Field(
        None,
        description="MemAvailable of /proc/meminfo (free's \"available\") with the database up and the page cache dropped: "
        "what the Linux page cache may hold for buffered files on XFS/ext4. Default: RAM less what the database holds "
        "(buffer pool, log buffer) less the kernel's reserve (fs::page_cache::budget).",
    )
    vm: Optional[VmSpec] = None


class DeviceSpec(_Model):
    """``[devices.NAME]``: a preset (see ``presets/devices.toml``) and overrides."""

    preset: Optional[DevicePreset] = Field(None, description="Name of a device preset.")
    description: Optional[str] = None
    size: Optional[Size] = Field(None, description="Device size (AWS volumes: whole GiB; sets gp2 IOPS).")
    iops_limit: Optional[IopsOrNone] = Field(None, description='Operations/s admitted (reads+writes), or "none".')
    throughput_limit: Optional[RateOrNone] = Field(None, description='Bytes/s admitted ("250MB/s"), or "none".')
    read_latency: Optional[Duration] = Field(None, description="Median service time of a small read once admitted.")
    write_latency: Optional[Duration] = Field(None, description="Median service time of a small write once admitted.")
    latency_sigma: Optional[float] = Field(None, ge=0, lt=5, description="Log-normal sigma of the service time.")
    transfer_rate: Optional[Rate] = Field(None, gt=0, description="Internal transfer rate; adds size/rate per I/O.")
    parallelism: Optional[PosInt] = Field(None, description="Requests served at once.")
    burst: Optional[bool] = Field(None, description="aws-gp2's I/O credits and azure-premium's credit bursting (P1 to P20): "
                                  "the volume runs above its provisioned rate while its credits last (default false).")
    host_cache: Optional[Literal["none", "readonly", "readwrite"]] = Field(
        None, description="Azure host caching of an azure-premium disk: \"none\" (default) or \"readonly\" (reads "
        "served by the VM's host cache); \"readwrite\" is refused (not modelled)."
    )
    ephemeral: Optional[bool] = Field(None, description="Instance storage that comes back empty when the VM moves to another host.")
    # A rotational disk (dev/disk.rs): set rpm and the data sheet's seek figures; the
    # latencies above are then the controller's command overhead.
    rpm: Optional[int] = Field(None, ge=3600, le=20000, description="Spindle speed of a rotational disk (seek and rotation are then modelled).")
    track_to_track_seek: Optional[Duration] = Field(None, description="Data sheet single-track (track-to-track) read seek.")
    average_seek: Optional[Duration] = Field(None, description="Data sheet average read seek (mean over all pairs of tracks).")
    full_stroke_seek: Optional[Duration] = Field(None, description="Data sheet full-stroke read seek.")
    write_settle: Optional[Duration] = Field(None, description="Write seek minus read seek (data sheet); default 0.")
    media_rate_outer: Optional[Rate] = Field(None, gt=0, description="Sustained media rate at the outer edge (LBA 0).")
    media_rate_inner: Optional[Rate] = Field(None, gt=0, description="Sustained media rate at the inner edge.")
    readahead: Optional[Size] = Field(None, description="Bytes the drive reads ahead after a read; default 0.")
    flush_latency: Optional[Duration] = Field(
        None, description="Service time of a cache flush (what the ZFS intent log sends after its writes); "
        "0 = no volatile write cache (power-loss-protected flash, a write cache off or battery-backed): the flush is free."
    )
    queue_rotational: Optional[bool] = Field(
        None, description="What the guest kernel reports in /sys/block/DEV/queue/rotational (default: true for a disk "
        "with rpm, false otherwise; QEMU's virtio-blk disks report true). MariaDB flushes neighbour pages only there."
    )
    iops_size: Optional[Size] = Field(
        None, gt=0, description="QEMU's throttle.iops-size: a request larger than this counts as several operations "
        "against iops_limit (default: each request counts once)."
    )
    controller: Optional[str] = Field(
        None, min_length=1, description="The [controllers.NAME] this device sits behind (a hardware RAID controller "
        "exposing it as its own volume, with the controller's cache in front of it); default none."
    )


RAID10_LAYOUT = r"[nfo][1-9][0-9]?"


class MdArraySpec(_Model):
    """``[devices.NAME] type = "md-raid10"``: a Linux md RAID10 array over devices, as
    ``mdadm --create /dev/NAME --level=10 --layout=LAYOUT --chunk=CHUNK MEMBERS`` makes it.
    A filesystem's ``device`` may name it; its size follows from the members'."""

    type: Literal["md-raid10"]
    description: Optional[str] = None
    members: list[str] = Field(min_length=2, description="Member devices ([devices.*] names), in mdadm's raid-disk order.")
    layout: Annotated[str, _check(lambda v: re.fullmatch(RAID10_LAYOUT, v) is not None, "layout",
                                  'must be n, f or o and a copy count: "n2" (near), "f2" (far), "o2" (offset)')] = Field(
        "n2", description="mdadm --layout for RAID10: n2 (default), f2, o2, or another copy count.")
    chunk: Size = Field(512 * 1024, description="mdadm --chunk: 512K (default since mdadm 3.1); a power of two, at least 4K.")


def _device_tag(v: Any) -> Any:
    # A device table has no type; an array says which.
    t = v.get("type") if isinstance(v, dict) else getattr(v, "type", None)
    return "device" if t is None else t


DEVICE_TYPES = ("md-raid10",)
DeviceEntry = Annotated[
    Union[Annotated[DeviceSpec, Tag("device")], Annotated[MdArraySpec, Tag("md-raid10")]],
    Discriminator(_device_tag),
]


class ControllerSpec(_Model):
    """``[controllers.NAME]``: a hardware RAID controller with a battery-backed write-back
    cache; each device with ``controller = "NAME"`` is one of its volumes (one drive each).
    Defaults: a 2014-2018 card (LSI/Broadcom MegaRAID, Dell PERC, HPE Smart Array) with a
    healthy battery; see ztwin_core::dev::controller for the sources and assumptions."""

    description: Optional[str] = None
    model: Optional[str] = Field(None, description="Reporting only (e.g. \"PERC H730\", \"MegaRAID 9361-8i\").")
    cache: Size = Field(1024 * MiB, gt=0, description="Cache memory for dirty writes, shared by the volumes (1 GiB: "
                        "the common size of the era's cards; assumption).")
    write_policy: Literal["write-back", "write-through"] = Field(
        "write-back", description="MegaRAID's Write Policy: write-back (default; a write completes in the cache, "
        "which the battery protects) or write-through (it completes at the drive).")
    cache_latency: Duration = Field(40_000, description="Controller time per command (firmware, DMA): a cache hit "
                                    "completes after it (assumption: 40us).")
    cache_rate: Rate = Field(4 * 10**9, gt=0, description="Host-to-cache transfer rate (assumption: 4GB/s; PCIe 3.0 x8).")
    destage_max: Size = Field(1 * MiB, description="Largest write the controller sends a drive when destaging "
                              "adjacent dirty data (assumption: 1MiB).")
    destage_queue_depth: int = Field(2, ge=1, le=256, description="Destage writes queued at each drive (assumption: 2).")


ROTATIONAL_KEYS = ("track_to_track_seek", "average_seek", "full_stroke_seek", "write_settle", "media_rate_outer",
                   "media_rate_inner", "readahead")


# ---------------------------------------------------------------------------------------
# Filesystems

# "0.6": the illumos ZFS of pool v28 (2012) as FreeBSD 8.3-9.x and ZoL 0.6.1 shipped it;
# "2.3": OpenZFS 2.3.0 to 2.3.2 (the core's release table says what differs from 2.2.11).
ZfsRelease = Literal["0.6", "0.8", "2.1", "2.2", "2.3"]


class ArcSpec(_Model):
    """``[filesystem.arc]``: ARC module parameters named as in zfs(4); 0 = the release's default."""

    zfs_arc_max: Size = Field(0, description="zfs(4) zfs_arc_max; 0 = RAM/2 (0.8 to 2.2), max(5/8 RAM, RAM - 1 GiB) (2.3).")
    zfs_arc_min: Size = Field(0, description="zfs(4) zfs_arc_min; 0 = max(RAM/32, 32 MiB).")
    zfs_arc_meta_limit: Size = Field(0, description="zfs(4) zfs_arc_meta_limit (0.6 to 2.1); 0 = 75% of arc_c_max (0.6: 25%).")
    zfs_arc_meta_min: Size = Field(0, description="zfs(4) zfs_arc_meta_min (0.8, 2.1); 0 = 16 MiB.")
    zfs_arc_meta_balance: int = Field(0, ge=0, description="zfs(4) zfs_arc_meta_balance (2.2+); 0 = 500.")
    zfs_arc_meta_strategy: Optional[int] = Field(
        None, ge=0, le=1,
        description="zfs(4) zfs_arc_meta_strategy (0.8, 2.1): unset = 1, balanced (data and metadata evicted when"
        " arc_meta_used passes arc_meta_limit, restarting up to 4096 times); 0 = meta_only (the metadata excess alone).",
    )
    zfs_compressed_arc_enabled: Optional[ModuleBool] = Field(
        None, description="zfs(4) zfs_compressed_arc_enabled (0.7+): unset = 1, the default since 0.7.0."
    )
    zfs_abd_scatter_enabled: Optional[ModuleBool] = Field(
        None,
        description="zfs(4) zfs_abd_scatter_enabled (Linux, 0.7+): 1 (default) keeps ARC buffers of 1536 bytes or more"
        " as scatter lists, so a dbuf holds its own copy; 0 makes them linear (ZFS before ABD).",
    )


class L2arcSpec(_Model):
    """``[filesystem.l2arc]``: L2ARC module parameters named as in zfs(4); unset = the release's default."""

    l2arc_write_max: Optional[Size] = Field(None, description="Bytes per feed: 8 MiB (0.8 to 2.2.6), 32 MiB (2.2.7+).")
    l2arc_write_boost: Optional[Size] = Field(None, description="Extra bytes per feed while the ARC is cold; same defaults.")
    l2arc_headroom: Optional[int] = Field(None, ge=0, description="Scan depth, in write sizes: 2 (0.8 to 2.2.6), 8 (2.2.7+).")
    l2arc_headroom_boost: Optional[int] = Field(None, ge=0, description="Percent applied to the headroom with compressed ARC: 200.")
    l2arc_feed_secs: Optional[int] = Field(None, ge=1, description="Seconds between feeds when the last wrote little: 1.")
    l2arc_feed_min_ms: Optional[int] = Field(None, ge=1, description="Milliseconds between busy feeds: 200.")
    l2arc_feed_again: Optional[ModuleBool] = Field(None, description="Feed again after l2arc_feed_min_ms when busy: 1.")
    l2arc_noprefetch: Optional[ModuleBool] = Field(None, description="Do not cache blocks only prefetched: 1.")
    l2arc_mfuonly: Optional[int] = Field(None, ge=0, le=2, description="2.1+: 0 all, 1 MFU only, 2 (2.2.6+) metadata and MFU data: 0.")
    l2arc_meta_percent: Optional[int] = Field(None, ge=0, description="2.1+: feeds stop while L2 headers exceed this percent of arc_c: 33.")
    l2arc_rebuild_enabled: Optional[ModuleBool] = Field(None, description="2.0+: rebuild a persistent L2ARC at import: 1.")
    l2arc_dwpd_limit: Optional[int] = Field(
        None, ge=0, le=100_000,
        description="WHAT-IF from master (d1f290f1ea, no release): drive writes per day in percent (100 = 1 DWPD; 0 = no limit). "
        "Set, the feed is master's: l2arc_write_max per second in bursts of at most 64 MiB, no l2arc_write_boost.",
    )
    per_device_feed: Optional[bool] = Field(
        None,
        description="WHAT-IF from master (b525525b44, no release): one feed thread per cache device, each on its own schedule "
        "and CPU, instead of the release's one thread feeding the devices in turn. Not a module parameter (master has no "
        "switch): the model's name; not settable in a tune phase.",
    )


class TxgSpec(_Model):
    """``[filesystem.txg]``: write path module parameters named as in zfs(4); 0 = the default
    (the same in 0.8, 2.1 and 2.2)."""

    zfs_dirty_data_max: Size = Field(0, description="zfs(4); 0 = 10% of RAM capped by zfs_dirty_data_max_max.")
    zfs_dirty_data_max_max: Size = Field(0, description="zfs(4); 0 = min(4 GiB, 25% of RAM).")
    zfs_dirty_data_sync_percent: int = Field(0, ge=0, le=100, description="zfs(4); 0 = 20.")
    zfs_delay_min_dirty_percent: int = Field(0, ge=0, le=100, description="zfs(4); 0 = 60.")
    zfs_delay_scale: int = Field(0, ge=0, le=2**40, description="zfs(4), ns; 0 = 500000.")
    zfs_txg_timeout: int = Field(0, ge=0, le=3600, description="zfs(4), seconds; 0 = 5.")
    zfs_vdev_aggregation_limit: Size = Field(0, le=16 * MiB, description="zfs(4); 0 = 1M.")
    zfs_vdev_aggregation_limit_non_rotating: Size = Field(0, le=16 * MiB, description="zfs(4); 0 = 128K.")
    zfs_vdev_async_write_min_active: int = Field(0, ge=0, le=1000, description="zfs(4); 0 = 2.")
    zfs_vdev_async_write_max_active: int = Field(0, ge=0, le=1000, description="zfs(4); 0 = 10.")


class PoolSpec(_Model):
    """``[filesystem.pool]``: allocation and mirror module parameters named as in zfs(4)."""

    metaslab_aliquot: Size = Field(0, description="zfs(4) metaslab_aliquot; 0 = the release's default (512K through 2.1, 1M from 2.2).")
    metaslab_bias_enabled: ModuleBool = Field(True, description="zfs(4) metaslab_bias_enabled; 1.")
    mirror_read_policy: Literal["load", "offset"] = Field(
        "load", description="Which mirror child reads: load (ZoL 0.7+, OpenZFS 2.x, FreeBSD 10+: least loaded, seek penalties) "
        "or offset (OpenSolaris, FreeBSD up to 9: (offset >> 21) % children)."
    )
    zfs_vdev_mirror_rotating_inc: int = Field(0, ge=0, le=2**30 - 1, description="zfs(4); 0.")
    zfs_vdev_mirror_rotating_seek_inc: int = Field(5, ge=0, le=2**30 - 1, description="zfs(4); 5.")
    zfs_vdev_mirror_rotating_seek_offset: Size = Field(1 * MiB, le=2**31 - 1, description="zfs(4); 1M.")
    zfs_vdev_mirror_non_rotating_inc: int = Field(0, ge=0, le=2**30 - 1, description="zfs(4); 0.")
    zfs_vdev_mirror_non_rotating_seek_inc: int = Field(1, ge=0, le=2**30 - 1, description="zfs(4); 1.")
    zfs_vdev_sync_read_max_active: int = Field(10, ge=1, le=1000, description="zfs(4); 10: the most a child's queue length (its mirror load) shows.")


def _vdev(v: Any) -> Any:
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and set(v) == {"mirror"} and isinstance(v["mirror"], list) and all(isinstance(x, str) for x in v["mirror"]):
        if len(v["mirror"]) < 2:
            raise PydanticCustomError("vdev", "a mirror needs at least two devices")
        return {"mirror": list(v["mirror"])}
    raise PydanticCustomError("vdev", 'a vdev is a device name ("d1") or a mirror of device names ({mirror = ["d1", "d2"]})')


Vdev = Annotated[Union[str, dict[str, list[str]]], BeforeValidator(_vdev)]


def vdev_devices(v: Any) -> list[str]:
    """The device names of a vdev as written in a scenario (a name or ``{mirror = [...]}``)."""
    return [v] if isinstance(v, str) else list(v["mirror"])


U32Size = Annotated[Size, _check(lambda n: 0 <= n < 2**32, "u32", "must be 0 to 4294967295 (an unsigned int module parameter)")]
U32 = Annotated[int, Field(ge=0, lt=2**32)]


class ZfetchSpec(_Model):
    """``[filesystem.zfetch]``: predictive prefetch module parameters named as in zfs(4); unset = the release's default
    (module/zfs/dmu_zfetch.c of the release). A parameter the release does not have is an error."""

    zfs_prefetch_disable: Optional[ModuleBool] = Field(None, description="Disable predictive prefetch: 0.")
    zfetch_max_streams: Optional[U32] = Field(None, description="Streams per file: 8.")
    zfetch_min_sec_reap: Optional[U32] = Field(None, description="Seconds a stream idles before reuse: 2 (0.8 to 2.1.5), 1 (2.1.6+).")
    zfetch_max_sec_reap: Optional[U32] = Field(None, description="2.1.6+: seconds an idle stream lives: 2.")
    zfetch_min_distance: Optional[U32Size] = Field(None, description="2.1.6+: distance doubled up to: 4 MiB.")
    zfetch_max_distance: Optional[U32Size] = Field(None, description="Largest data lookahead: 8 MiB (0.8 to 2.1.5), 64 MiB (2.1.6+).")
    zfetch_max_idistance: Optional[U32Size] = Field(None, description="2.0+ parameter: largest indirect lookahead: 64 MiB.")
    zfetch_max_reorder: Optional[U32Size] = Field(None, description="2.2.4+: reordered reads followed within: 16 MiB.")
    zfetch_hole_shift: Optional[U32] = Field(None, description="2.2.4+: log2 of the hole fraction a stream tolerates: 2.")
    zfetch_array_rd_sz: Optional[Size] = Field(None, description="0.8, 2.1: larger reads are not prefetched for: 1 MiB.")


class ZilSpec(_Model):
    """``[filesystem.zil]``: intent-log module parameters named as in zfs(4); unset = the release's default
    (module/zfs/zil.c of the release). A parameter the release does not have is an error."""

    zfs_immediate_write_sz: Optional[Size] = Field(None, description="Without a SLOG, sync writes of at least this much per record are logged indirect: 32K.")
    zil_slog_bulk: Optional[Size] = Field(None, description="Log bytes per commit burst written to a SLOG at sync priority: 768K (0.8 to 2.2.0), 64M (2.2.1+).")
    zfs_commit_timeout_pct: Optional[int] = Field(None, ge=0, le=1000, description="Percent of the last log block's latency a commit waits for more records: 5 (10 from 2.2.4).")
    zil_maxblocksize: Optional[U32Size] = Field(None, description="Largest log block: 128K (a multiple of 4K, 4K to 16M).")
    zil_min_commit_timeout: Optional[Duration] = Field(None, description="2.1.10 to 2.2.3: a lone commit whose wait would be shorter writes at once: 5us.")
    zil_maxcopied: Optional[U32Size] = Field(None, description="2.2.0+: the largest sync write copied into its log record: 7680.")


class ZfsSpec(_Model):
    """``[filesystem] type = "zfs"``: a pool striped over ``vdevs`` and one dataset."""

    type: Literal["zfs"]
    release: ZfsRelease = Field("2.2", description="OpenZFS release whose behaviour is modelled.")
    vdevs: list[Vdev] = Field(
        min_length=1, description='Top-level vdevs striped in the pool: device names (of [devices.*]) or mirrors, {mirror = ["d1", "d2"]}.'
    )
    log: list[Vdev] = Field(default_factory=list, description="Log vdevs (SLOG): device names or mirrors; the intent log's blocks go there.")
    pool: PoolSpec = Field(default_factory=PoolSpec)
    txg: TxgSpec = Field(default_factory=TxgSpec)
    ashift: Ashift = Field(
        12,
        description="Pool sector size exponent. zpool create detects it from the device's reported "
        "sector size; 12 (4 KiB) is what SSDs and most virtual disks give; 9 for 512-byte sectors.",
    )
    recordsize: RecordSize = Field(128 * 1024, description="zfs recordsize; default 128K.")
    log_recordsize: Optional[RecordSize] = Field(
        None, description="recordsize of a second dataset holding the database's redo and binary logs "
        "(experiment 2's 128K log dataset); default: the logs share the data's dataset."
    )
    indirect_block_size: IndirectSize = Field(
        128 * 1024, description="Indirect block size: 128K since zfs-0.7.0 (16K for files created under 0.6.x)."
    )
    compression: Literal["off", "lz4", "lzjb", "zstd", "gzip"] = Field("off", description="zfs compression; default off.")
    primarycache: Literal["all", "metadata", "none"] = Field("all", description="zfs primarycache; default all.")
    arc: ArcSpec = Field(default_factory=ArcSpec)
    release_patch: int = Field(
        11, ge=0, le=11,
        description="The point release: with 2.2, 2.2.0 to 2.2.11 (L2ARC defaults changed in 2.2.7, the prefetcher in 2.2.4); "
        "with 2.1 it selects the prefetcher only (2.1.0-2.1.5, 2.1.6-2.1.9, 2.1.10+; 11 stands for 2.1.11 to 2.1.16); "
        "with 2.3, 0 is 2.3.0 (a prefetch decompresses into a buffer it frees) and 1 or more 2.3.1 and 2.3.2.",
    )
    cache: list[str] = Field(
        default_factory=list, max_length=8,
        description="Cache vdevs (L2ARC), names of [devices.*]; up to 8. The release's one feed thread writes to them in turn "
        "(each pass to the next device); each block's copy lives on one of them.",
    )
    secondarycache: Literal["all", "metadata", "none"] = Field("all", description="zfs secondarycache; default all.")
    l2arc: L2arcSpec = Field(default_factory=L2arcSpec)
    arc_warm_at_first_eviction: bool = Field(
        False,
        description="OpenZFS sets arc_warm (which ends l2arc_write_boost) only on memory reclaim, "
        "not modelled; true makes it turn at the first ARC eviction instead.",
    )
    zfetch: ZfetchSpec = Field(default_factory=ZfetchSpec)
    sync: Literal["standard", "always", "disabled"] = Field(
        "standard", description="zfs sync: standard (fsync and O_SYNC writes commit the intent log), always (every write and read does), "
        "disabled (nothing does; fsync returns at once)."
    )
    logbias: Literal["latency", "throughput"] = Field(
        "latency", description="zfs logbias: throughput writes every sync write's data to the pool (indirect log records)."
    )
    zil: ZilSpec = Field(default_factory=ZilSpec)
    direct: Optional[Literal["disabled", "standard", "always"]] = Field(
        None,
        description="zfs direct (2.3+): what O_DIRECT does. standard (2.3's default): an O_DIRECT read or write "
        "bypasses the ARC (a request not page aligned fails with EINVAL); always: every page-aligned read and "
        "whole-block write does; disabled: O_DIRECT goes through the ARC, as before 2.3. Unset = the release's "
        "default; releases before 2.3 accept only disabled.",
    )


BucketSize = Annotated[Size, _check(lambda n: _pow2(n) and 4096 <= n <= 16 * MiB, "bucket_size",
                                    "must be a power of two from 4K to 16M (make-bcache --bucket)")]
UInt = Annotated[int, Field(ge=0, le=2**32 - 1)]
SizeUInt = Annotated[Size, _check(lambda n: 0 <= n <= 2**32 - 1, "size", "must fit the kernel's unsigned int (at most 4294967295 bytes)")]


class BcacheSpec(_Model):
    """``[filesystem.bcache]``: bcache between the filesystem and its device (the backing
    device), caching on ``cache_device``. Names and defaults as in the kernel's
    Documentation/admin-guide/bcache.rst and make-bcache."""

    cache_device: str = Field(description="The cache device (a name of [devices.*]; needs a size).")
    cache_mode: Literal["writethrough", "writeback", "writearound", "none"] = Field(
        "writethrough", description="cache_mode; writethrough unless made with --writeback."
    )
    sequential_cutoff: SizeUInt = Field(
        4 * MiB, description="sequential_cutoff: a task's sequential stream bypasses once this long; 0 = never. Default 4M."
    )
    bucket_size: BucketSize = Field(512 * 1024, description="make-bcache --bucket: default 1024 sectors = 512K.")
    cache_replacement_policy: Literal["lru", "fifo", "random"] = Field("lru", description="cache_replacement_policy; default lru.")
    readahead: SizeUInt = Field(0, description="readahead: a miss also caches up to this much beyond the request (kernels up to 5.x). Default 0.")
    congested_read_threshold_us: UInt = Field(2000, description="Cache reads slower than this make sequential-ish I/O bypass; 0 = off. Default 2000.")
    congested_write_threshold_us: UInt = Field(20000, description="The same for cache writes. Default 20000.")
    writeback_percent: int = Field(
        10, ge=0, le=40,
        description="writeback_percent: the writeback rate controller aims at this share of the cache dirty; 0 = write back "
        "at full speed. Default 10, at most 40 (writeback.c bch_cached_dev_writeback_init(); sysfs.c clamps to 0..40).",
    )
    writeback_delay: UInt = Field(
        30, description="writeback_delay, seconds: the writeback thread sleeps this long after scanning the whole index. Default 30."
    )
    writeback_running: bool = Field(True, description="writeback_running: false stops background writeback. Default true.")
    writeback_rate_update_seconds: int = Field(
        5, ge=1, le=60, description="writeback_rate_update_seconds: the rate controller's period. Default 5, 1..60 (writeback.h)."
    )
    writeback_rate_p_term_inverse: int = Field(
        40, ge=1, le=2**32 - 1, description="writeback_rate_p_term_inverse: the proportional term retires the error in this many seconds. Default 40."
    )
    writeback_rate_i_term_inverse: int = Field(
        10000, ge=1, le=2**32 - 1, description="writeback_rate_i_term_inverse: 1/this of the accumulated error per second. Default 10000."
    )
    writeback_rate_minimum: int = Field(
        8, ge=1, le=2**32 - 1, description="writeback_rate_minimum, sectors per second: the controller's floor. Default 8."
    )
    kernel: Literal["4.15", "5.10"] = Field(
        "4.15",
        description="The kernel's bcache: 4.15 (Ubuntu 18.04; writeback writes issued as their reads complete) or 5.10 "
        "(2021's 5.x: writeback writes in key order). Default 4.15.",
    )


class XfsSpec(_Model):
    """``[filesystem] type = "xfs"``: extent-mapped, no per-record metadata reads."""

    type: Literal["xfs"]
    device: str = Field(description="Device or md array holding the filesystem (a name of [devices.*]); with bcache its backing device.")
    block_size: FsBlockSize = Field(4096, description="mkfs.xfs default block size 4K.")
    bcache: Optional[BcacheSpec] = Field(None, description="bcache under the filesystem (the filesystem is on /dev/bcache0).")


class Ext4Spec(_Model):
    """``[filesystem] type = "ext4"``: extent-mapped, no per-record metadata reads."""

    type: Literal["ext4"]
    device: str = Field(description="Device or md array holding the filesystem (a name of [devices.*]); with bcache its backing device.")
    block_size: FsBlockSize = Field(4096, description="mke2fs default block size 4K.")
    bcache: Optional[BcacheSpec] = Field(None, description="bcache under the filesystem (the filesystem is on /dev/bcache0).")


FsSpec = Annotated[Union[ZfsSpec, XfsSpec, Ext4Spec], Field(discriminator="type")]
FS_TYPES = ("zfs", "xfs", "ext4")

# ---------------------------------------------------------------------------------------
# Database, dataset, workload, run


class InnodbSpec(_Model):
    """``[database] type = "innodb"``: option names and defaults of the MySQL 5.7/8.0 manual."""

    type: Literal["innodb"] = "innodb"
    innodb_buffer_pool_size: Size = Field(128 * MiB, description="MySQL default 128M.")
    innodb_page_size: PageSize = Field(16 * 1024, description="MySQL default 16K.")
    innodb_old_blocks_pct: OldBlocksPct = Field(37, description="MySQL default 37.")
    innodb_old_blocks_time: MsDuration = Field(
        1000 * 1_000_000, description="MySQL default 1000 (ms); a bare integer is ms as in MySQL."
    )
    innodb_flush_method: Literal["fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"] = Field(
        "fsync", description="MySQL 5.7 default on Linux: fsync (MariaDB 10.6+: O_DIRECT)."
    )
    innodb_lru_scan_depth: Optional[int] = Field(
        None, ge=100, lt=2**32, description="Free frames the page cleaner keeps: MySQL 5.7 default 1024 (refilled only "
        "after write activity), MariaDB 10.11 default 1536 (refilled below half of it)."
    )
    server: Literal["mysql-5.7", "mariadb-10.11", "percona-5.7"] = Field(
        "mysql-5.7", description="The server that wrote the pages (their bytes decide how they compress) and runs the "
        "writes; percona-5.7 is MySQL 5.7's pages and logs with Percona Server's flushing (LRU manager threads, backoff "
        "waits for free frames, the high_checkpoint page cleaner, buffer pool instances)."
    )
    character_set_server: Literal["latin1", "utf8mb4"] = Field(
        "latin1", description="Server character set when the tables were created: latin1 is the compiled default of "
        "MySQL 5.7 and MariaDB 10.11; Debian's and Ubuntu's MariaDB packages set utf8mb4 (CHAR columns get a length byte)."
    )
    # The write path (sysbench's write tests). Unset: the server's default, resolved by the core.
    innodb_flush_log_at_trx_commit: Optional[Literal[0, 1, 2]] = Field(
        None, description="1 (default): each commit writes and flushes the redo log; 2: writes only; 0: neither "
        "(the master thread writes and flushes once a second)."
    )
    innodb_doublewrite: Optional[bool] = Field(None, description="Default on: pages go to the doublewrite buffer first.")
    innodb_io_capacity: Optional[int] = Field(None, ge=100, lt=2**32, description="Default 200 (pages/s the page cleaner aims at).")
    innodb_io_capacity_max: Optional[int] = Field(None, ge=100, lt=2**32, description="Default max(2 x io_capacity, 2000).")
    innodb_max_dirty_pages_pct: Optional[float] = Field(None, ge=0, lt=100, description="MySQL 5.7 default 75; MariaDB 10.11 90.")
    innodb_max_dirty_pages_pct_lwm: Optional[float] = Field(None, ge=0, lt=100, description="Default 0 (no pre-flushing).")
    innodb_adaptive_flushing: Optional[bool] = Field(None, description="Default on.")
    innodb_adaptive_flushing_lwm: Optional[int] = Field(None, ge=0, le=70, description="Default 10 (% of the redo log's capacity).")
    innodb_flushing_avg_loops: Optional[int] = Field(None, ge=1, le=1000, description="Default 30.")
    innodb_log_file_size: Optional[Size] = Field(None, description="MySQL 5.7 default 48M; MariaDB 10.11 96M.")
    innodb_log_files_in_group: Optional[int] = Field(None, ge=1, le=100, description="MySQL 5.7 default 2; MariaDB 10.5+ has one file.")
    innodb_flush_neighbors: Optional[Literal[0, 1, 2]] = Field(None, description="Default 1.")
    innodb_change_buffering: Optional[Literal["none", "inserts", "deletes", "changes", "purges", "all"]] = Field(
        None, description="MySQL 5.7 default all; MariaDB 10.11 none. Delete-marks are buffered with all, deletes "
        "and changes; purge's deletes with all and purges (only over two or more records buffered for the leaf)."
    )
    # Purge (the history list of committed update undo logs and the coordinator's batches).
    innodb_purge_threads: Optional[int] = Field(
        None, ge=1, le=32, description="Default 4 (MySQL 5.7 and MariaDB 10.11); the twin runs purge as one thread."
    )
    innodb_purge_batch_size: Optional[int] = Field(
        None, ge=1, le=5000, description="Undo log pages per purge batch: MySQL 5.7 default 300; MariaDB 10.11 1000 "
        "(since 10.11.6)."
    )
    innodb_max_purge_lag: Optional[int] = Field(
        None, ge=0, lt=2**32, description="Default 0 (no DML delay); the delay of other values is not modelled (refused)."
    )
    innodb_purge_rseg_truncate_frequency: Optional[int] = Field(
        None, ge=1, le=128, description="MySQL 5.7: the history is truncated every Nth purge batch (default 128); "
        "MariaDB 10.11 ignores it (every batch)."
    )
    # The binary log (MySQL 5.7's is modelled).
    log_bin: Optional[bool] = Field(None, description="The binary log on (default off); MySQL 5.7's group commit is modelled.")
    sync_binlog: Optional[int] = Field(None, ge=0, lt=2**32, description="fsync the binary log every Nth group (MySQL 5.7 default 1; 0 never).")
    max_binlog_size: Optional[Size] = Field(None, description="A binary log file is rotated past this size (default 1G, 4K to 1G).")
    binlog_group_commit_sync_delay: Optional[int] = Field(None, ge=0, le=1_000_000, description="Microseconds the sync stage waits for more commits (default 0).")
    binlog_group_commit_sync_no_delay_count: Optional[int] = Field(None, ge=0, le=100_000, description="Commits that end that wait early (default 0).")
    # Percona Server 5.7's flushing (server = "percona-5.7" only).
    innodb_empty_free_list_algorithm: Optional[Literal["backoff", "legacy"]] = Field(
        None, description="Percona Server 5.7: a thread short of a free frame waits for the LRU manager (backoff, the "
        "default; legacy below 20M of pool an instance) or evicts and writes a page itself as MySQL 5.7 (legacy)."
    )
    innodb_cleaner_lsn_age_factor: Optional[Literal["high_checkpoint", "legacy"]] = Field(
        None, description="Percona Server 5.7: the page cleaner's redo pressure, high_checkpoint (the default) or "
        "MySQL's legacy formula."
    )
    innodb_buffer_pool_instances: Optional[int] = Field(
        None, ge=0, le=64, description="Percona Server 5.7: buffer pool instances (0 or unset: 8 from a 1G pool on, else 1)."
    )


class SysbenchDatasetSpec(_Model):
    """``[dataset] type = "sysbench"``: tables as ``sysbench oltp_common prepare`` creates them."""

    type: Literal["sysbench"] = "sysbench"
    tables: PosInt = Field(1, le=2**24 - 1, description="--tables (sysbench 1.0 default 1; the core's block keys hold 24-bit object numbers).")
    table_size: PosInt = Field(10000, le=2**31 - 1, description="--table-size (sysbench 1.0 default 10000; id is a 32-bit INTEGER).")
    prepare_rand_type: Literal["special", "uniform"] = Field(
        "special", description="--rand-type of the prepare, which draws k (sysbench 1.0.x default: special)."
    )
    compress_ratio: Optional[Ratio] = Field(
        None, description="Unset: the pages are generated as sysbench's prepare and InnoDB fill them and each "
        "record is stored as the pool's compressor, record size and ashift decide. Set: the mean "
        "uncompressed/compressed ratio of the compressor on other data (per block, before sector rounding)."
    )


class TpccDatasetSpec(_Model):
    """``[dataset] type = "tpcc"``: Percona-Lab/sysbench-tpcc's nine tables per set as its
    ``prepare`` leaves them (see ztwin_core::db::innodb::tpcc_schema)."""

    type: Literal["tpcc"]
    scale: PosInt = Field(100, le=32767, description="--scale: warehouses in every table set (sysbench-tpcc default 100; w_id is a SMALLINT).")
    tables: PosInt = Field(1, le=100000, description="--tables: table sets of the nine tables (default 1).")
    compress_ratio: Ratio = Field(
        description="Mean uncompressed/compressed ratio of the data under the pool's compressor (per block, "
        "before sector rounding). Required: the loader's strings repeat one letter, so the data compresses "
        "well, but its pages are not generated; give a measured zfs get compressratio (1.0 without compression)."
    )
    order_capacity: int = Field(
        6000, ge=3000, le=1_000_000,
        description="Orders per district the growing tables' files are laid out for, the 3000 loaded ones "
        "included (default 6000); the run's orders, order lines, new orders and history rows land in that "
        "space, and past it reuse it from its start.",
    )


def _type_tag(v: Any) -> Any:
    # No type means sysbench (the first dataset and workload ztwin had).
    return v.get("type", "sysbench") if isinstance(v, dict) else getattr(v, "type", "sysbench")


DATASET_TYPES = ("sysbench", "tpcc")
DatasetSpec = Annotated[
    Union[Annotated[SysbenchDatasetSpec, Tag("sysbench")], Annotated[TpccDatasetSpec, Tag("tpcc")]],
    Discriminator(_type_tag),
]


class SysbenchWorkloadSpec(_Model):
    """``[workload] type = "sysbench"``: options and defaults of sysbench 1.0."""

    type: Literal["sysbench"] = "sysbench"
    test: Literal[
        "oltp_point_select", "select_random_points", "oltp_read_only", "oltp_read_write", "oltp_write_only",
        "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete", "tpcc",
    ] = Field(description="The test: sysbench 1.0's oltp scripts, or tpcc (Percona-Lab/sysbench-tpcc's tpcc.lua; needs [dataset] type = \"tpcc\").")
    threads: PosInt = Field(1, description="--threads (default 1).")
    rand_type: Literal["uniform", "special", "gaussian", "pareto", "zipfian"] = Field(
        "special", description="--rand-type (sysbench 1.0 default special)."
    )
    rand_spec_iter: int = Field(12, ge=1, description="--rand-spec-iter (default 12).")
    rand_spec_pct: float = Field(1.0, ge=0, le=100, description="--rand-spec-pct (default 1).")
    rand_spec_res: float = Field(75.0, ge=0, le=100, description="--rand-spec-res (default 75).")
    rand_pareto_h: float = Field(0.2, gt=0, lt=1, description="--rand-pareto-h (default 0.2).")
    rand_zipfian_exp: float = Field(0.8, ge=0, description="--rand-zipfian-exp (default 0.8).")
    random_points: int = Field(10, description="--random-points, select_random_points only (default 10).")
    # oltp_common.lua's options (sysbench 1.0.20), used by oltp_read_only.
    range_size: int = Field(100, ge=1, description="--range_size: ids per range SELECT (default 100).")
    point_selects: int = Field(10, ge=0, description="--point_selects per transaction (default 10; oltp_point_select forces 1).")
    simple_ranges: int = Field(1, ge=0, description="--simple_ranges per transaction (default 1).")
    sum_ranges: int = Field(1, ge=0, description="--sum_ranges per transaction (default 1).")
    order_ranges: int = Field(1, ge=0, description="--order_ranges per transaction (default 1).")
    distinct_ranges: int = Field(1, ge=0, description="--distinct_ranges per transaction (default 1).")
    range_selects: bool = Field(True, description="--range_selects: run the range SELECTs at all (default on).")
    skip_trx: bool = Field(False, description="--skip_trx: no BEGIN/COMMIT, autocommit (default off).")
    index_updates: int = Field(1, ge=0, description="--index_updates: UPDATE ... SET k = k + 1 per transaction (default 1).")
    non_index_updates: int = Field(1, ge=0, description="--non_index_updates: UPDATE ... SET c = ? per transaction (default 1).")
    delete_inserts: int = Field(1, ge=0, description="--delete_inserts: DELETE then INSERT of one id per transaction (default 1).")
    auto_inc: bool = Field(True, description="--auto_inc: oltp_insert lets AUTO_INCREMENT pick the id (default on).")


def _fio_version_ok(v: str) -> bool:
    m = re.fullmatch(r"(?:fio-)?(\d+)\.(\d+)(?:\.(\d+))?", v.strip())
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (2, 0)


class FioWorkloadSpec(_Model):
    """``[workload] type = "fio"``: a fio job file and/or command-line options (see :mod:`ztwin.fio`)."""

    type: Literal["fio"]
    job_file: Optional[str] = Field(None, description="fio job file, relative to the scenario file.")
    jobs: Optional[str] = Field(None, description="A job file's text, inline (instead of job_file).")
    options: Optional[Union[list[str], str]] = Field(
        None, description="fio command-line options (--name=... starts a job; options before it are global)."
    )
    fio_version: Annotated[str, _check(lambda v: _fio_version_ok(v), "fio_version", "must be a fio release 2.0 or later: major.minor[.patch], e.g. \"2.0.14\", \"3.36\"")] = Field(
        "3.36",
        description="fio release whose file contents are modelled: before 2.1 laid-out files are zeros, "
        "since then the job's buffers (random by default); see ztwin_core::workload::fio::buffers.",
    )


WORKLOAD_TYPES = ("sysbench", "fio")
WorkloadSpec = Annotated[
    Union[Annotated[SysbenchWorkloadSpec, Tag("sysbench")], Annotated[FioWorkloadSpec, Tag("fio")]],
    Discriminator(_type_tag),
]


class RunSpec(_Model):
    """``[run]``: warm-up, measured window, report interval."""

    warmup: Duration = Field(0, description="Warm-up before the measured window (sysbench --warmup-time default 0).")
    duration: Duration = Field(10 * 10**9, description="Measured window (sysbench --time default 10s).")
    report_interval: Duration = Field(10**9, description="Interval of the time series (arcstat's default 1s).")


class WorkloadPhaseSpec(_Model):
    """``[[phases]]`` with ``type = "workload"``: the workload's clients; warm-up and duration
    default to ``[run]``'s."""

    type: Literal["workload"]
    name: str = Field("benchmark", min_length=1)
    warmup: Optional[Duration] = Field(None, description="Warm-up before the measured window (default: run.warmup).")
    duration: Optional[Duration] = Field(None, description="Measured window (default: run.duration).")
    test: Optional[str] = Field(None, description="The sysbench test of this phase (default: the workload's test).")


class CatPhaseSpec(_Model):
    """``[[phases]]`` with ``type = "cat"``: read every table file once, as ``cat *.ibd > /dev/null``."""

    type: Literal["cat"]
    name: str = Field("cat", min_length=1)
    read_size: Size = Field(128 * 1024, description="Bytes per read(2): coreutils cat reads max(128 KiB, st_blksize).")
    passes: int = Field(1, ge=1, le=100, description="How many times the files are read.")


class FioPhaseSpec(_Model):
    """``[[phases]]`` with ``type = "fio"``: jobs of the fio workload, run together, ``runs`` times back to back."""

    type: Literal["fio"]
    name: str = Field("fio", min_length=1, description="Name in reports; with runs > 1 the runs are NAME-1, NAME-2, ...")
    jobs: Optional[list[str]] = Field(None, min_length=1, description="Job (section) names; default: every job.")
    runs: int = Field(1, ge=1, le=1000, description="Back-to-back runs on warm caches, each reported as its own phase.")


class RestartPhaseSpec(_Model):
    """``[[phases]]`` with ``type = "restart"``: the machine reboots; the ARC and the buffer pool start empty."""

    type: Literal["restart"]
    name: str = Field("restart", min_length=1)
    vm_moved: bool = Field(False, description="The VM was stopped and started on another host: ephemeral devices come back empty.")
    recreate_cache: bool = Field(
        False,
        description="The boot script runs `zpool remove POOL DEV; zpool add POOL cache DEV`: an ephemeral cache device that came "
        "back blank is a new, empty L2ARC. Without it ZFS imports the pool with that device UNAVAIL (no label) and no L2ARC.",
    )


class TunePhaseSpec(_Model):
    """``[[phases]]`` with ``type = "tune"``: module parameters set at run time, as ``echo N >
    /sys/module/zfs/parameters/...`` does between two steps; a restart returns to the
    scenario's values. L2ARC parameters (``l2arc = { l2arc_noprefetch = 1 }``); the feed uses
    them from its next pass."""

    type: Literal["tune"]
    name: str = Field("tune", min_length=1)
    l2arc: L2arcSpec = Field(default_factory=L2arcSpec, description="The L2ARC parameters set; the others keep their values.")


PhaseSpec = Annotated[Union[WorkloadPhaseSpec, CatPhaseSpec, RestartPhaseSpec, FioPhaseSpec, TunePhaseSpec], Field(discriminator="type")]


class VariantSpec(_Model):
    """One variant: the base merged with the variant's overrides."""

    name: str = Field(min_length=1)
    description: str = ""
    seed: int = Field(0, ge=0, lt=2**64, description="Seed of every random stream; same seed, same numbers.")
    machine: MachineSpec
    devices: dict[str, DeviceEntry] = Field(min_length=1)
    controllers: dict[str, ControllerSpec] = Field(
        default_factory=dict, description="Hardware RAID controllers with a cache; devices name theirs with controller = NAME."
    )
    filesystem: FsSpec
    database: Optional[InnodbSpec] = Field(None, description="The database (sysbench; none for fio). Default: InnoDB with MySQL's defaults.")
    dataset: Optional[DatasetSpec] = Field(None, description="sysbench's tables, or sysbench-tpcc's (type = \"tpcc\"); fio: the job file names the files. Default: sysbench's.")
    workload: WorkloadSpec
    run: RunSpec = Field(default_factory=RunSpec)
    phases: list[PhaseSpec] = Field(
        default_factory=list,
        description="The run as a sequence of phases on the same state; none = one workload phase from [run].",
    )


class ScenarioSpec(VariantSpec):
    """The whole file: the base plus ``[variants.NAME]`` overrides (validated after merging)."""

    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)


_UNIONS: dict[str, tuple[str, ...]] = {"filesystem": FS_TYPES, "workload": WORKLOAD_TYPES, "dataset": DATASET_TYPES}
PHASE_TYPES = ("workload", "cat", "restart", "fio", "tune")
_VARIANT_KEYS = set(VariantSpec.model_fields) - {"name"}
