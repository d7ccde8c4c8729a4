"""Scenarios: the TOML users write, validated and resolved into the core's ``VariantConfig``.

A scenario file has these tables (every key is checked; an unknown key is an error)::

    name = "exp1-arc-sizing"          # required
    description = "..."
    seed = 42                         # default 0
    [machine]        preset = "aws-i3.large"; any field overridable (vcpus, ram, [machine.cpu])
    [devices.NAME]   preset = "aws-gp2"; size = "1000GiB"; any DeviceConfig field overridable
    [filesystem]     type = "zfs" | "xfs" | "ext4", then the fields of that filesystem
    [filesystem.arc] ZFS ARC tunables named as in zfs(4)
    [filesystem.bcache] XFS/ext4 on bcache: cache_device and bcache's sysfs tunables
    [database]       type = "innodb", options named as in the MySQL manual
    [dataset]        type = "sysbench", tables, table_size, prepare_rand_type, compress_ratio
    [workload]       type = "sysbench", test, threads, rand_type, ... (sysbench option names)
    [run]            warmup, duration, report_interval
    [variants.NAME]  any of the tables above, deep-merged over the base

Sizes, durations and rates follow :mod:`ztwin.units`. Variants are merged table by table
(a key in the variant replaces the base's key; a table in the variant merges into the
base's table; lists are replaced whole), except that a table whose ``type`` changes
(``filesystem.type = "xfs"`` over a ZFS base) replaces the base table: fields of ZFS make
no sense for XFS. A device table merges even when its ``preset`` changes. Without
``[variants]`` there is one variant, named ``base``.

:func:`load_scenario` reads and validates a file (or a dict) and resolves every variant;
:func:`resolve` returns the resolved variants, one dict per variant with exactly the keys
of the core's ``VariantConfig`` (bytes and nanoseconds as integers). Every error found is
reported at once in a :class:`~ztwin.exceptions.ScenarioError`.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag, ValidationError
from pydantic_core import PydanticCustomError

from . import fio as fiomod
from . import units
from .exceptions import ScenarioError

__all__ = [
    "Scenario",
    "load_scenario",
    "resolve",
    "ScenarioSpec",
    "MachineSpec",
    "DeviceSpec",
    "gp2_limits",
    "DEFAULT_SCENARIO",
]

MiB = 1 << 20
GiB = 1 << 30
DEFAULT_SCENARIO = Path(__file__).parent / "scenarios" / "default.toml"

# ---------------------------------------------------------------------------------------
# Value types


def _unit_validator(fn, kind: str):
    def check(v: Any) -> Any:
        try:
            return fn(v)
        except units.UnitError as e:
            raise PydanticCustomError(kind, str(e)) from None

    return check


def _rate_or_none(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("none", "unlimited"):
        return "none"
    return units.parse_rate(v)


def _iops_or_none(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("none", "unlimited"):
        return "none"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise units.UnitError(f"expected operations per second (a number) or \"none\", got {v!r}")
    if not (v > 0 and math.isfinite(v)):
        raise units.UnitError(f"must be a positive number of operations per second, got {v!r}")
    return float(v)


def _ms_or_duration(v: Any) -> Any:
    # innodb_old_blocks_time is in milliseconds in MySQL: a bare integer is ms.
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise units.UnitError(f"must not be negative, got {v}")
        return v * 1_000_000
    return units.parse_duration(v)


Size = Annotated[int, BeforeValidator(_unit_validator(units.parse_size, "size"))]
Duration = Annotated[int, BeforeValidator(_unit_validator(units.parse_duration, "duration"))]
Rate = Annotated[float, BeforeValidator(_unit_validator(units.parse_rate, "rate"))]
RateOrNone = Annotated[Union[float, Literal["none"]], BeforeValidator(_unit_validator(_rate_or_none, "rate"))]
IopsOrNone = Annotated[Union[float, Literal["none"]], BeforeValidator(_unit_validator(_iops_or_none, "iops"))]
MsDuration = Annotated[int, BeforeValidator(_unit_validator(_ms_or_duration, "duration"))]
PosInt = Annotated[int, Field(ge=1)]


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check(pred, kind: str, msg: str):
    def check(v: Any) -> Any:
        if not pred(v):
            raise PydanticCustomError(kind, msg)
        return v

    return AfterValidator(check)


def _known(which: str):
    def check(v: Any) -> Any:
        from . import presets

        known = presets.machine_presets() if which == "machine" else presets.device_presets()
        if v not in known:
            msg = f"unknown {which} preset {v!r}; known: {', '.join(known)}"
            raise PydanticCustomError("unknown_preset", msg.replace("{", "{{").replace("}", "}}"))
        return v

    return AfterValidator(check)


RecordSize = Annotated[Size, _check(lambda n: _pow2(n) and 512 <= n <= 16 * MiB, "recordsize",
                                    "must be a power of two from 512 B to 16 MiB (512, 1K, ..., 128K, ..., 16M)")]
IndirectSize = Annotated[Size, _check(lambda n: _pow2(n) and 4096 <= n <= 128 * 1024, "indirect_block_size",
                                      "must be a power of two from 4K to 128K (16K: files created under 0.6.x; 128K since 0.7.0)")]
Ashift = Annotated[int, _check(lambda n: 9 <= n <= 16, "ashift", "must be 9 to 16 (512 B to 64 KiB sectors)")]
FsBlockSize = Annotated[Size, _check(lambda n: _pow2(n) and 512 <= n <= 65536, "block_size", "must be a power of two from 512 to 64K")]
PageSize = Annotated[Size, _check(lambda n: n in (4096, 8192, 16384, 32768, 65536), "innodb_page_size", "must be 4K, 8K, 16K, 32K or 64K")]
OldBlocksPct = Annotated[int, _check(lambda n: 5 <= n <= 95, "innodb_old_blocks_pct", "must be 5 to 95 (MySQL's range)")]
Ratio = Annotated[float, _check(lambda x: x >= 1.0 and math.isfinite(x), "compress_ratio", "must be at least 1.0 (uncompressed / compressed)")]
MachinePreset = Annotated[str, _known("machine")]
DevicePreset = Annotated[str, _known("device")]


class _Model(BaseModel):
    # strict: `seed = true` or `threads = "4"` is an error, not a coercion (a TOML integer
    # is still accepted where a float is expected).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _module_bool(v: Any) -> Any:
    """A kernel module parameter's boolean as zfs(4) writes it: 0 or 1, or true/false."""
    if type(v) is int and v in (0, 1):
        return bool(v)
    return v


# zfs(4) and other module parameters: true/false or 0/1 (nothing else).
ModuleBool = Annotated[bool, BeforeValidator(_module_bool)]


# Pydantic's type errors in the user's terms (TOML values).
_TYPE_MSG = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "dict_type": "must be a table",
    "model_type": "must be a table",
}


def _toml_type(v: object) -> str:
    """The TOML name of a value's type, for messages."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


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


class MachineSpec(_Model):
    """``[machine]``: a preset (see ``presets/machines.toml``) and overrides."""

    preset: Optional[MachinePreset] = Field(None, description="Name of a machine preset.")
    name: Optional[str] = Field(None, description="Name in reports (default: the preset's name).")
    description: Optional[str] = None
    cpu_model: Optional[str] = Field(None, description="Reporting only.")
    vcpus: Optional[PosInt] = Field(None, description="vCPUs running the database, the client and the filesystem.")
    ram: Optional[Size] = Field(None, description="RAM; OpenZFS derives ARC defaults from it (c_max = RAM/2 through 2.2).")
    cpu: Optional[CpuSpec] = None


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
    burst: Optional[bool] = Field(None, description="aws-gp2 burst bucket (not modelled yet: only false).")
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


ROTATIONAL_KEYS = ("track_to_track_seek", "average_seek", "full_stroke_seek", "write_settle", "media_rate_outer",
                   "media_rate_inner", "readahead")


# ---------------------------------------------------------------------------------------
# Filesystems

# "0.6": the illumos ZFS of pool v28 (2012) as FreeBSD 8.3-9.x and ZoL 0.6.1 shipped it.
ZfsRelease = Literal["0.6", "0.8", "2.1", "2.2"]


class ArcSpec(_Model):
    """``[filesystem.arc]``: ARC module parameters named as in zfs(4); 0 = the release's default."""

    zfs_arc_max: Size = Field(0, description="zfs(4) zfs_arc_max; 0 = RAM/2 (0.8 to 2.2).")
    zfs_arc_min: Size = Field(0, description="zfs(4) zfs_arc_min; 0 = max(RAM/32, 32 MiB).")
    zfs_arc_meta_limit: Size = Field(0, description="zfs(4) zfs_arc_meta_limit (0.6 to 2.1); 0 = 75% of arc_c_max (0.6: 25%).")
    zfs_arc_meta_min: Size = Field(0, description="zfs(4) zfs_arc_meta_min (0.8, 2.1); 0 = 16 MiB.")
    zfs_arc_meta_balance: int = Field(0, ge=0, description="zfs(4) zfs_arc_meta_balance (2.2+); 0 = 500.")
    zfs_compressed_arc_enabled: ModuleBool = Field(True, description="zfs(4) zfs_compressed_arc_enabled; 1 since 0.7.0.")
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


def _zfetch_era(release: str, patch: int) -> tuple[int, int, int]:
    """(release, patch) as a comparable version, 0.8 being 0.8.6."""
    if release == "0.6":
        return (0, 6, 1)
    if release == "0.8":
        return (0, 8, 6)
    major, minor = (int(x) for x in release.split("."))
    return (major, minor, patch)


# zfetch tunables that exist only in some releases: (first version, last version, why).
_ZFETCH_RANGE = {
    "zfetch_max_sec_reap": ((2, 1, 6), None, "added in 2.1.6"),
    "zfetch_min_distance": ((2, 1, 6), None, "added in 2.1.6"),
    "zfetch_max_idistance": ((2, 0, 0), None, "a module parameter only from 2.0"),
    "zfetch_array_rd_sz": (None, (2, 1, 99), "removed in 2.2.0"),
    "zfetch_max_reorder": ((2, 2, 4), None, "added in 2.2.4"),
    "zfetch_hole_shift": ((2, 2, 4), None, "added in 2.2.4"),
}


class ZfsSpec(_Model):
    """``[filesystem] type = "zfs"``: a pool striped over ``vdevs`` and one dataset."""

    type: Literal["zfs"]
    release: ZfsRelease = Field("2.2", description="OpenZFS release whose behaviour is modelled.")
    vdevs: list[Vdev] = Field(
        min_length=1, description='Top-level vdevs striped in the pool: device names (of [devices.*]) or mirrors, {mirror = ["d1", "d2"]}.'
    )
    log: list[Vdev] = Field(default_factory=list, description="Log vdevs (SLOG): device names or mirrors; validated and kept, not modelled yet.")
    pool: PoolSpec = Field(default_factory=PoolSpec)
    txg: TxgSpec = Field(default_factory=TxgSpec)
    ashift: Ashift = Field(
        12,
        description="Pool sector size exponent. zpool create detects it from the device's reported "
        "sector size; 12 (4 KiB) is what SSDs and most virtual disks give; 9 for 512-byte sectors.",
    )
    recordsize: RecordSize = Field(128 * 1024, description="zfs recordsize; default 128K.")
    indirect_block_size: IndirectSize = Field(
        128 * 1024, description="Indirect block size: 128K since zfs-0.7.0 (16K for files created under 0.6.x)."
    )
    compression: Literal["off", "lz4", "lzjb", "zstd", "gzip"] = Field("off", description="zfs compression; default off.")
    primarycache: Literal["all", "metadata", "none"] = Field("all", description="zfs primarycache; default all.")
    arc: ArcSpec = Field(default_factory=ArcSpec)
    release_patch: int = Field(
        11, ge=0, le=11,
        description="The point release: with 2.2, 2.2.0 to 2.2.11 (L2ARC defaults changed in 2.2.7, the prefetcher in 2.2.4); "
        "with 2.1 it selects the prefetcher only (2.1.0-2.1.5, 2.1.6-2.1.9, 2.1.10+; 11 stands for 2.1.11 to 2.1.16).",
    )
    cache: list[str] = Field(default_factory=list, max_length=1, description="Cache vdevs (L2ARC), names of [devices.*]; at most one.")
    secondarycache: Literal["all", "metadata", "none"] = Field("all", description="zfs secondarycache; default all.")
    l2arc: L2arcSpec = Field(default_factory=L2arcSpec)
    arc_warm_at_first_eviction: bool = Field(
        False,
        description="OpenZFS sets arc_warm (which ends l2arc_write_boost) only on memory reclaim, "
        "not modelled; true makes it turn at the first ARC eviction instead.",
    )
    zfetch: ZfetchSpec = Field(default_factory=ZfetchSpec)


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


class XfsSpec(_Model):
    """``[filesystem] type = "xfs"``: extent-mapped, no per-record metadata reads."""

    type: Literal["xfs"]
    device: str = Field(description="Device holding the filesystem (a name of [devices.*]); with bcache its backing device.")
    block_size: FsBlockSize = Field(4096, description="mkfs.xfs default block size 4K.")
    bcache: Optional[BcacheSpec] = Field(None, description="bcache under the filesystem (the filesystem is on /dev/bcache0).")


class Ext4Spec(_Model):
    """``[filesystem] type = "ext4"``: extent-mapped, no per-record metadata reads."""

    type: Literal["ext4"]
    device: str = Field(description="Device holding the filesystem (a name of [devices.*]); with bcache its backing device.")
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
    innodb_flush_method: Literal["fsync", "O_DIRECT"] = Field("fsync", description="MySQL default on Linux: fsync.")
    innodb_lru_scan_depth: Optional[int] = Field(
        None, ge=100, lt=2**32, description="Free frames the page cleaner keeps: MySQL 5.7 default 1024 (refilled only "
        "after write activity), MariaDB 10.11 default 1536 (refilled below half of it)."
    )
    server: Literal["mysql-5.7", "mariadb-10.11"] = Field(
        "mysql-5.7", description="The server that wrote the pages (their bytes decide how they compress)."
    )
    character_set_server: Literal["latin1", "utf8mb4"] = Field(
        "latin1", description="Server character set when the tables were created: latin1 is the compiled default of "
        "MySQL 5.7 and MariaDB 10.11; Debian's and Ubuntu's MariaDB packages set utf8mb4 (CHAR columns get a length byte)."
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


class SysbenchWorkloadSpec(_Model):
    """``[workload] type = "sysbench"``: options and defaults of sysbench 1.0."""

    type: Literal["sysbench"] = "sysbench"
    test: Literal["oltp_point_select", "select_random_points"]
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


def _workload_tag(v: Any) -> Any:
    # No type means sysbench (the first workload ztwin had).
    return v.get("type", "sysbench") if isinstance(v, dict) else getattr(v, "type", "sysbench")


WORKLOAD_TYPES = ("sysbench", "fio")
WorkloadSpec = Annotated[
    Union[Annotated[SysbenchWorkloadSpec, Tag("sysbench")], Annotated[FioWorkloadSpec, Tag("fio")]],
    Discriminator(_workload_tag),
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
    devices: dict[str, DeviceSpec] = Field(min_length=1)
    filesystem: FsSpec
    database: Optional[InnodbSpec] = Field(None, description="The database (sysbench; none for fio). Default: InnoDB with MySQL's defaults.")
    dataset: Optional[SysbenchDatasetSpec] = Field(None, description="sysbench tables (fio: the job file names the files). Default: sysbench's.")
    workload: WorkloadSpec
    run: RunSpec = Field(default_factory=RunSpec)
    phases: list[PhaseSpec] = Field(
        default_factory=list,
        description="The run as a sequence of phases on the same state; none = one workload phase from [run].",
    )


class ScenarioSpec(VariantSpec):
    """The whole file: the base plus ``[variants.NAME]`` overrides (validated after merging)."""

    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)


_UNIONS: dict[str, tuple[str, ...]] = {"filesystem": FS_TYPES, "workload": WORKLOAD_TYPES}
PHASE_TYPES = ("workload", "cat", "restart", "fio", "tune")
_VARIANT_KEYS = set(VariantSpec.model_fields) - {"name"}

# ---------------------------------------------------------------------------------------
# Errors


@dataclass
class _Err:
    loc: tuple[Any, ...]
    msg: str
    input: Any = None
    type: str = "value_error"


def _loc_str(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 50 else r[:24] + "..." + r[-24:]


def _fields_of(model: Any) -> list[str]:
    return list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) is Union:
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
        return tuple(_unwrap(a) for a in args)
    return tp


def _model_at(loc: tuple[Any, ...]) -> Any:
    """The pydantic model of the table at ``loc`` (a pydantic loc, union tags included)."""
    cur: Any = ScenarioSpec
    i = 0
    while i < len(loc):
        if not (isinstance(cur, type) and issubclass(cur, BaseModel)):
            return None
        f = cur.model_fields.get(loc[i])
        if f is None:
            return None
        tp = _unwrap(f.annotation)
        i += 1
        if get_origin(tp) is dict:
            i += 1  # the key
            tp = _unwrap(get_args(tp)[1])
        elif get_origin(tp) is list:
            i += 1  # the index
            tp = _unwrap(get_args(tp)[0])
        if isinstance(tp, tuple):  # discriminated union: the next element is the tag
            tag = loc[i] if i < len(loc) else None
            i += 1
            tp = next((m for m in tp if _fields_of(m) and get_args(m.model_fields["type"].annotation) == (tag,)), None)
        cur = tp
    return cur


def _user_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drops union tags pydantic inserts (``filesystem.zfs.recordsize`` -> ``filesystem.recordsize``)."""
    out = list(loc)
    for key, tags in _UNIONS.items():
        if len(out) > 1 and out[0] == key and out[1] in tags:
            del out[1]
    if len(out) > 2 and out[0] == "phases" and isinstance(out[1], int) and out[2] in PHASE_TYPES:
        del out[2]
    return tuple(out)


def _pydantic_errors(e: ValidationError) -> list[_Err]:
    errs = []
    for d in e.errors(include_url=False):
        loc, typ, msg, inp = tuple(d["loc"]), d["type"], d["msg"], d.get("input")
        if typ == "extra_forbidden":
            allowed = [f for f in _fields_of(_model_at(loc[:-1]))]
            msg = f"unknown key {loc[-1]!r}; allowed keys: {', '.join(allowed)}" if allowed else "unknown key"
        elif typ == "missing":
            msg = "required key missing"
            inp = None
        elif typ in ("union_tag_not_found", "union_tag_invalid"):
            tags = _UNIONS.get(loc[-1] if loc else "", ())
            if len(loc) > 1 and loc[0] == "phases":
                tags = PHASE_TYPES
            allowed = ", ".join(repr(t) for t in tags)
            if typ == "union_tag_not_found":
                msg = f"required key missing: type, one of {allowed}"
                inp = None
            else:
                msg = f"unknown type {d['ctx']['tag']!r}; allowed: {allowed}"
                inp = d["ctx"]["tag"]
            loc = loc + ("type",)
        elif typ == "literal_error":
            msg = msg.replace("Input should be", "must be")
        elif typ in _TYPE_MSG:
            msg = f"{_TYPE_MSG[typ]}, not {_toml_type(inp)}"
        errs.append(_Err(_user_loc(loc), msg, inp, typ))
    return errs


def _format(source: str, errs: list[_Err]) -> str:
    n = len(errs)
    lines = [f"{n} validation error{'s' if n != 1 else ''} for scenario {source}"]
    for e in errs:
        lines.append(_loc_str(e.loc) or "(scenario)")
        tail = f" [input_value={_short(e.input)}]" if e.input is not None else ""
        lines.append(f"  {e.msg}{tail}")
    return "\n".join(lines)


def _raise(source: str, errs: list[_Err]) -> None:
    dicts = [
        {"loc": e.loc, "loc_str": _loc_str(e.loc), "msg": e.msg, "input": e.input, "type": e.type} for e in errs
    ]
    raise ScenarioError(_format(source, errs), errors=dicts)


# ---------------------------------------------------------------------------------------
# Merging


def _merge(base: dict[str, Any], over: dict[str, Any], path: tuple[str, ...], replaced: set) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        b = base.get(k)
        if isinstance(v, dict) and isinstance(b, dict):
            if "type" in v and "type" in b and v["type"] != b["type"]:
                out[k] = copy.deepcopy(v)
                replaced.add(path + (k,))
            else:
                out[k] = _merge(b, v, path + (k,), replaced)
        else:
            out[k] = copy.deepcopy(v)
    return out


def merge_variant(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The base scenario table with a variant's overrides merged in (rules in the module docs)."""
    return _merge(base, override, (), set())


def _set_by_variant(base: dict, override: dict, replaced: set, loc: tuple[Any, ...]) -> bool:
    """True when the value at ``loc`` comes from the variant (set, added or under a replaced table)."""
    if any(loc[: len(r)] == r for r in replaced):
        return True
    b: Any = base
    o: Any = override
    for part in loc:
        if not isinstance(o, dict):
            return True  # the variant set a whole value (list, scalar) that contains loc
        if part not in o:
            return False
        if not isinstance(b, dict) or part not in b:
            return True  # the variant added this key
        b, o = b[part], o[part]
    return True


def _get(raw: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        if isinstance(raw, dict) and part in raw:
            raw = raw[part]
        elif isinstance(raw, list) and isinstance(part, int) and part < len(raw):
            raw = raw[part]
        else:
            return None
    return raw


# ---------------------------------------------------------------------------------------
# Resolution and cross checks


def gp2_limits(size_bytes: int) -> tuple[float, float]:
    """AWS gp2 baseline (no burst): (IOPS, bytes/s) for a volume of ``size_bytes``.

    IOPS = clamp(3 per GiB, 100, 16000); throughput 128 MiB/s up to 170 GiB, 250 MiB/s
    from 334 GiB, and 128 MiB/s between them (250 there only while burst credits last).
    Source: AWS EBS User Guide, "General Purpose SSD volumes" (gp2).
    """
    gib = size_bytes / GiB
    iops = float(min(max(3 * gib, 100.0), 16000.0))
    tput = 250 * MiB if gib >= 334 else 128 * MiB
    return iops, float(tput)


def _aws_size(errs: list[_Err], loc: tuple, raw: Any, size: Optional[int], kind: str, required: bool) -> None:
    if size is None:
        if required:
            errs.append(_Err(loc + ("size",), f"{kind} needs a size: AWS sizes volumes in whole GiB, e.g. size = \"1000GiB\"", None, "missing"))
        return
    if size % GiB:
        errs.append(_Err(
            loc + ("size",),
            f"AWS sizes {kind} volumes in whole GiB; this is {size / GiB:.2f} GiB "
            f"(a volume shown as 1000 in the AWS console is \"1000GiB\", 1000GB is 931.32 GiB)",
            _get(raw, loc + ("size",)), "value_error"))
    elif not 1 <= size // GiB <= 16384:
        errs.append(_Err(loc + ("size",), f"{kind} volumes are 1 GiB to 16384 GiB", _get(raw, loc + ("size",))))


def _preset_size(spec: DeviceSpec) -> Optional[int]:
    """The size a device's preset gives, if any."""
    from .presets import device_presets

    base = device_presets().get(spec.preset) if spec.preset else None
    return base.size if base is not None else None


def _resolve_device(name: str, spec: DeviceSpec, raw: dict, errs: list[_Err]) -> Optional[dict[str, Any]]:
    from .presets import device_presets

    loc = ("devices", name)
    presets = device_presets()
    base = presets.get(spec.preset) if spec.preset else None
    if spec.preset and base is None:
        errs.append(_Err(loc + ("preset",), f"unknown device preset {spec.preset!r}; known: {', '.join(presets)}", spec.preset))
        return None
    values: dict[str, Any] = {}
    for f in DeviceSpec.model_fields:
        user = getattr(spec, f)
        values[f] = user if user is not None else (getattr(base, f) if base is not None else None)
    kind = spec.preset or "custom"
    n0 = len(errs)
    if kind == "aws-gp2":
        _aws_size(errs, loc, raw, spec.size, "aws-gp2", required=True)
        for f in ("iops_limit", "throughput_limit"):
            if spec.__pydantic_fields_set__ & {f}:
                errs.append(_Err(loc + (f,), f"aws-gp2 {f} follows from the size (3 IOPS/GiB, 100 to 16000; 128 or 250 MiB/s); "
                                 "use preset aws-gp3 or a custom device to set it", _get(raw, loc + (f,))))
        if spec.burst:
            errs.append(_Err(loc + ("burst",), "the gp2 burst bucket is not modelled yet; only burst = false is allowed", True))
        if len(errs) == n0 and spec.size is not None:
            values["iops_limit"], values["throughput_limit"] = gp2_limits(spec.size)
    else:
        if spec.burst:
            errs.append(_Err(loc + ("burst",), f"burst applies to preset aws-gp2 only (this device is {kind})", True))
        if kind == "aws-gp3":
            _aws_size(errs, loc, raw, spec.size, "aws-gp3", required=False)
            iops, tput = values["iops_limit"], values["throughput_limit"]
            if iops == "none" or not 3000 <= iops <= 16000:
                errs.append(_Err(loc + ("iops_limit",), "aws-gp3 provisions 3000 to 16000 IOPS", _get(raw, loc + ("iops_limit",))))
            elif spec.size and spec.size % GiB == 0 and iops > 500 * (spec.size // GiB):
                errs.append(_Err(loc + ("iops_limit",), "aws-gp3 allows at most 500 IOPS per GiB of volume size", _get(raw, loc + ("iops_limit",))))
            if tput == "none" or not 125 * MiB <= tput <= 1000 * MiB:
                errs.append(_Err(loc + ("throughput_limit",), "aws-gp3 provisions 125 to 1000 MiB/s", _get(raw, loc + ("throughput_limit",))))
            elif iops != "none" and tput > iops * 0.25 * MiB:
                errs.append(_Err(loc + ("throughput_limit",), "aws-gp3 allows at most 0.25 MiB/s per provisioned IOPS", _get(raw, loc + ("throughput_limit",))))
    required = ("read_latency", "write_latency", "latency_sigma", "transfer_rate", "parallelism")
    for f in required + ("iops_limit", "throughput_limit"):
        if values[f] is None and not (kind == "aws-gp2" and f in ("iops_limit", "throughput_limit")):
            errs.append(_Err(loc + (f,), f"required key missing (no preset gives it{'' if spec.preset else '; or set preset = one of ' + ', '.join(presets)})", None, "missing"))
    rotational = _resolve_rotational(loc, values, raw, errs)
    if len(errs) > n0:
        return None
    none = lambda v: None if v == "none" else float(v)  # noqa: E731
    return {
        "name": name,
        "kind": kind,
        "iops_limit": none(values["iops_limit"]),
        "throughput_limit_bytes_per_sec": none(values["throughput_limit"]),
        "read_latency_ns": values["read_latency"],
        "write_latency_ns": values["write_latency"],
        "latency_sigma": float(values["latency_sigma"]),
        "transfer_bytes_per_sec": float(values["transfer_rate"]),
        "parallelism": values["parallelism"],
        "capacity_bytes": values["size"],
        "ephemeral": bool(values["ephemeral"]),
        "rotational": rotational,
    }


def _resolve_rotational(loc: tuple, values: dict[str, Any], raw: dict, errs: list[_Err]) -> Optional[dict[str, Any]]:
    """The core's ``RotationalConfig`` of a device with ``rpm``, None without; errors appended."""
    if values["rpm"] is None:
        for f in ROTATIONAL_KEYS:
            if values[f] is not None:
                errs.append(_Err(loc + (f,), "applies to rotational disks only: set rpm too", _get(raw, loc + (f,))))
        return None
    n0 = len(errs)
    for f in ("track_to_track_seek", "average_seek", "full_stroke_seek", "media_rate_outer", "media_rate_inner"):
        if values[f] is None:
            errs.append(_Err(loc + (f,), "required key missing for a rotational disk (with rpm)", None, "missing"))
    if values["parallelism"] not in (None, 1):
        errs.append(_Err(loc + ("parallelism",), "a rotational disk serves one request at a time: 1", values["parallelism"]))
    if values["size"] is None:
        errs.append(_Err(loc + ("size",), "a rotational disk needs its size (seek distances are fractions of it)", None, "missing"))
    if len(errs) > n0:
        return None
    tt, avg, full = values["track_to_track_seek"], values["average_seek"], values["full_stroke_seek"]
    if not 0 < tt < avg < full:
        errs.append(_Err(loc + ("average_seek",), "must lie strictly between track_to_track_seek and full_stroke_seek",
                         _get(raw, loc + ("average_seek",))))
    elif not tt + (full - tt) / 3 <= avg <= tt + (full - tt) * 11 / 15:
        lo, hi = f"{(tt + (full - tt) / 3) / 1e6:.3f}ms", f"{(tt + (full - tt) * 11 / 15) / 1e6:.3f}ms"
        errs.append(_Err(loc + ("average_seek",), f"gives no seek curve that grows with distance: it must be from {lo} "
                         f"to {hi} with these track-to-track and full-stroke seeks", _get(raw, loc + ("average_seek",))))
    outer, inner = values["media_rate_outer"], values["media_rate_inner"]
    if not outer / 10 <= inner <= outer:
        errs.append(_Err(loc + ("media_rate_inner",), "must be at most media_rate_outer and at least a tenth of it", _get(raw, loc + ("media_rate_inner",))))
    if len(errs) > n0:
        return None
    return {
        "rpm": values["rpm"],
        "track_to_track_seek_ns": tt,
        "average_seek_ns": avg,
        "full_stroke_seek_ns": full,
        "write_settle_ns": values["write_settle"] or 0,
        "outer_rate_bytes_per_sec": float(outer),
        "inner_rate_bytes_per_sec": float(inner),
        "readahead_bytes": values["readahead"] or 0,
    }


def _resolve_machine(spec: MachineSpec, errs: list[_Err]) -> Optional[dict[str, Any]]:
    from .presets import machine_presets

    presets = machine_presets()
    base = presets.get(spec.preset) if spec.preset else None
    if spec.preset and base is None:
        errs.append(_Err(("machine", "preset"), f"unknown machine preset {spec.preset!r}; known: {', '.join(presets)}", spec.preset))
        return None
    hint = "" if spec.preset else f"; or set preset = one of {', '.join(presets)}"
    n0 = len(errs)

    def pick(obj: Any, bobj: Any, f: str, loc: tuple) -> Any:
        v = getattr(obj, f) if obj is not None else None
        if v is None and bobj is not None:
            v = getattr(bobj, f)
        if v is None:
            errs.append(_Err(loc, f"required key missing (no preset gives it{hint})", None, "missing"))
        return v

    vcpus = pick(spec, base, "vcpus", ("machine", "vcpus"))
    ram = pick(spec, base, "ram", ("machine", "ram"))
    cpu = {f: pick(spec.cpu, base.cpu if base else None, f, ("machine", "cpu", f)) for f in CpuSpec.model_fields}
    if len(errs) > n0:
        return None
    if ram < 64 * MiB:
        errs.append(_Err(("machine", "ram"), "must be at least 64 MiB", ram))
        return None
    cpu["speed"] = float(cpu["speed"])
    return {"name": spec.name or spec.preset or "custom", "vcpus": vcpus, "ram_bytes": ram, "cpu": cpu}


def _resolve_variant(scenario: str, variant: str, spec: VariantSpec, raw: dict, base_dir: Path) -> tuple[Optional[dict], list[_Err]]:
    errs: list[_Err] = []
    machine = _resolve_machine(spec.machine, errs)
    devices = [d for n, s in spec.devices.items() if (d := _resolve_device(n, s, raw, errs)) is not None]
    names = list(spec.devices)
    fs = spec.filesystem
    ram = machine["ram_bytes"] if machine else None

    def err(loc: tuple, msg: str) -> None:
        errs.append(_Err(loc, msg, _get(raw, loc)))

    if isinstance(fs, ZfsSpec):
        in_pool: list[str] = []
        for field in ("vdevs", "log"):
            for i, v in enumerate(getattr(fs, field)):
                for d in vdev_devices(v):
                    if d not in spec.devices:
                        which = "" if isinstance(v, str) else f" {d!r}"
                        err(("filesystem", field, i), f"names no device{which}; devices of this scenario: {', '.join(names)}")
                    elif d in in_pool:
                        err(("filesystem", field, i), f"device {d!r} is used twice in the pool")
                    in_pool.append(d)
        max_rs = 16 * MiB if fs.release == "2.2" else MiB
        if fs.recordsize > max_rs:
            err(("filesystem", "recordsize"), f"release {fs.release} allows at most 1M (zfs_max_recordsize); 16M needs release 2.2")
        a = fs.arc
        arc = ("filesystem", "arc")
        if a.zfs_arc_max:
            if a.zfs_arc_max < 64 * MiB:
                err(arc + ("zfs_arc_max",), "must be at least 64 MiB (or 0 for the default, RAM/2)")
            elif ram is not None and a.zfs_arc_max >= ram:
                err(arc + ("zfs_arc_max",), f"must be less than the machine's RAM ({units.human_size(ram)})")
        if a.zfs_arc_min and a.zfs_arc_max and a.zfs_arc_min > a.zfs_arc_max:
            err(arc + ("zfs_arc_min",), "must not exceed zfs_arc_max")
        if fs.release == "0.6":
            for t, what in (("zfs_compressed_arc_enabled", "compressed ARC"), ("zfs_abd_scatter_enabled", "ABD")):
                if getattr(a, t):
                    if t in a.model_fields_set:
                        err(arc + (t,), f"release 0.6 has no {what} (added in 0.7.0): leave {t} out or set it false")
        if fs.release == "2.2":
            for t in ("zfs_arc_meta_limit", "zfs_arc_meta_min"):
                if t in a.model_fields_set:
                    err(arc + (t,), f"{t} does not exist in release 2.2 (removed by OpenZFS PR #14359); "
                        "2.2 tunes metadata with zfs_arc_meta_balance; or set release = \"0.8\" or \"2.1\"")
        elif "zfs_arc_meta_balance" in a.model_fields_set:
            err(arc + ("zfs_arc_meta_balance",), f"zfs_arc_meta_balance exists only from release 2.2 (this is {fs.release}); "
                "0.8 and 2.1 use zfs_arc_meta_limit and zfs_arc_meta_min")
        if a.zfs_arc_meta_limit and a.zfs_arc_max and a.zfs_arc_meta_limit > a.zfs_arc_max:
            err(arc + ("zfs_arc_meta_limit",), "must not exceed zfs_arc_max")
        era = _zfetch_era(fs.release, fs.release_patch)
        name = fs.release if fs.release in ("0.6", "0.8") else f"{fs.release}.{fs.release_patch}"
        for t, (first, last, why) in _ZFETCH_RANGE.items():
            if t in fs.zfetch.model_fields_set and ((first and era < first) or (last and era > last)):
                err(("filesystem", "zfetch", t), f"does not exist in release {name} ({why})")
        if fs.zfetch.zfetch_max_distance == 0:
            err(("filesystem", "zfetch", "zfetch_max_distance"), "must be at least 1 (dmu_zfetch_stream_create divides by it)")
        fs_out = {
            "type": "zfs", "release": fs.release, "vdevs": list(fs.vdevs), "log": list(fs.log),
            "pool": {f: getattr(fs.pool, f) for f in PoolSpec.model_fields},
            "txg": {f: getattr(fs.txg, f) for f in TxgSpec.model_fields}, "ashift": fs.ashift,
            "recordsize": fs.recordsize, "indirect_block_size": fs.indirect_block_size,
            "compression": fs.compression, "primarycache": fs.primarycache,
            "arc": {f: getattr(a, f) for f in ArcSpec.model_fields},
            "release_patch": fs.release_patch,
            "cache": list(fs.cache),
            "secondarycache": fs.secondarycache,
            "l2arc": {f: getattr(fs.l2arc, f) for f in L2arcSpec.model_fields},
            "arc_warm_at_first_eviction": fs.arc_warm_at_first_eviction,
            "zfetch": {f: getattr(fs.zfetch, f) for f in ZfetchSpec.model_fields},
        }
        for cdev in fs.cache:
            if cdev not in spec.devices:
                err(("filesystem", "cache"), f"names no device; devices of this scenario: {', '.join(names)}")
            elif cdev in in_pool:
                err(("filesystem", "cache"), f"device {cdev!r} is already a data or log vdev")
            elif spec.devices[cdev].size is None and not _preset_size(spec.devices[cdev]):
                err(("devices", cdev, "size"), "a cache device needs a size (the L2ARC's capacity)")
    else:
        if fs.device not in spec.devices:
            err(("filesystem", "device"), f"names no device; devices of this scenario: {', '.join(names)}")
        fs_out = {"type": fs.type, "device": fs.device, "block_size": fs.block_size, "bcache": None}
        if fs.bcache is not None:
            bc = fs.bcache
            loc = ("filesystem", "bcache")
            if bc.cache_device not in spec.devices:
                err(loc + ("cache_device",), f"names no device; devices of this scenario: {', '.join(names)}")
            elif bc.cache_device == fs.device:
                err(loc + ("cache_device",), "must differ from filesystem.device (the backing device)")
            else:
                size = spec.devices[bc.cache_device].size or _preset_size(spec.devices[bc.cache_device])
                if not size:
                    err(("devices", bc.cache_device, "size"), "a bcache cache device needs a size (the cache's capacity)")
                elif size // bc.bucket_size <= 512:
                    err(loc + ("bucket_size",), f"gives {size // bc.bucket_size} buckets on the {units.human_size(size)} cache device; "
                        "bcache needs more than 512 (use smaller buckets)")
                elif size // bc.bucket_size >= 2**23 - 1:
                    err(loc + ("bucket_size",), f"gives {size // bc.bucket_size} buckets; the model indexes fewer than 8388607 (use larger buckets)")
            fs_out["bcache"] = {f: getattr(bc, f) for f in BcacheSpec.model_fields}

    w = spec.workload
    r = spec.run
    fio_res: Optional[fiomod.ResolvedFio] = None
    db_out: Optional[dict[str, Any]] = None
    if isinstance(w, FioWorkloadSpec):
        for key, what in (("database", "fio reads the files itself"), ("dataset", "the job file names the files")):
            if getattr(spec, key) is not None:
                err((key,), f"a fio workload has no [{key}] ({what}); remove it")
        for key in ("warmup", "duration"):
            if key in r.model_fields_set:
                err(("run", key), f"run.{key} does not apply to fio: the jobs' runtime, time_based and ramp_time say how long they run")
        if w.job_file is not None and w.jobs is not None:
            err(("workload", "jobs"), "give job_file or jobs (inline), not both")
        elif w.job_file is None and w.jobs is None and not w.options:
            err(("workload",), "a fio workload needs job_file, jobs (inline) or options")
        else:
            try:
                fio_res = fiomod.load(w.job_file, w.jobs, w.options, base_dir)
            except fiomod.FioError as e:
                where = "job_file" if w.job_file is not None else ("jobs" if w.jobs is not None else "options")
                err(("workload", where), str(e))
        if fio_res is not None and not isinstance(fs, ZfsSpec):
            for job in fio_res.jobs:
                if not job["direct"]:
                    err(("workload", "job_file" if w.job_file else "jobs"),
                        f"job [{job['name']}]: direct=0 (buffered I/O through the Linux page cache) is not modelled on {fs.type}; set direct=1")
        dataset_out = {"type": "files", "files": fio_res.files} if fio_res is not None else None
        workload_out = {"type": "fio", "fio_version": w.fio_version, "jobs": fio_res.jobs if fio_res else []}
    else:
        db = spec.database or InnodbSpec()
        if db.innodb_buffer_pool_size < 5 * MiB:
            err(("database", "innodb_buffer_pool_size"), "must be at least 5 MiB")
        elif ram is not None and db.innodb_buffer_pool_size >= ram:
            err(("database", "innodb_buffer_pool_size"), f"must be less than the machine's RAM ({units.human_size(ram)})")
        ds = spec.dataset or SysbenchDatasetSpec()
        if w.threads > 4096:
            err(("workload", "threads"), "must be 1 to 4096")
        if not 1 <= w.random_points <= 1000:
            err(("workload", "random_points"), "must be 1 to 1000")
        db_out = {
            "type": "innodb",
            "innodb_buffer_pool_size": db.innodb_buffer_pool_size,
            "innodb_page_size": db.innodb_page_size,
            "innodb_old_blocks_pct": db.innodb_old_blocks_pct,
            "innodb_old_blocks_time_ns": db.innodb_old_blocks_time,
            "innodb_flush_method": db.innodb_flush_method,
            "innodb_lru_scan_depth": db.innodb_lru_scan_depth or 0,
            "server": db.server,
            "character_set_server": db.character_set_server,
        }
        dataset_out = {
            "type": "sysbench", "tables": ds.tables, "table_size": ds.table_size,
            "compress_ratio": None if ds.compress_ratio is None else float(ds.compress_ratio),
            "prepare_rand_type": ds.prepare_rand_type,
        }
        workload_out = {
            "type": "sysbench", "test": w.test, "threads": w.threads, "rand_type": w.rand_type,
            "rand_spec_iter": w.rand_spec_iter, "rand_spec_pct": float(w.rand_spec_pct),
            "rand_spec_res": float(w.rand_spec_res), "rand_pareto_h": float(w.rand_pareto_h),
            "rand_zipfian_exp": float(w.rand_zipfian_exp), "random_points": w.random_points,
        }
    if r.duration <= 0:
        err(("run", "duration"), "must be positive")
    if r.report_interval <= 0:
        err(("run", "report_interval"), "must be positive")
    elif r.duration > 0 and r.report_interval > r.duration and not isinstance(w, FioWorkloadSpec):
        err(("run", "report_interval"), "must not exceed run.duration")
    is_fio = isinstance(w, FioWorkloadSpec)
    phases = []
    for i, ph in enumerate(spec.phases):
        if isinstance(ph, FioPhaseSpec):
            if not is_fio:
                err(("phases", i, "type"), "phases of type fio need a fio workload ([workload] type = \"fio\")")
                continue
            if fio_res is None:
                continue
            names = ph.jobs or fio_res.job_names
            unknown = [n for n in names if n not in fio_res.job_names]
            if unknown:
                err(("phases", i, "jobs"), f"no job named {', '.join(map(repr, unknown))}; jobs: {', '.join(fio_res.job_names)}")
                continue
            idx = [fio_res.job_names.index(n) for n in names]
            for k in range(ph.runs):
                phases.append({"type": "fio", "name": ph.name if ph.runs == 1 else f"{ph.name}-{k + 1}", "jobs": idx})
            continue
        if isinstance(ph, WorkloadPhaseSpec):
            if is_fio:
                err(("phases", i, "type"), "a fio workload runs phases of type fio (with jobs and runs), not workload")
                continue
            dur = r.duration if ph.duration is None else ph.duration
            if dur <= 0:
                err(("phases", i, "duration"), "must be positive")
            phases.append({"type": "workload", "name": ph.name, "warmup_ns": r.warmup if ph.warmup is None else ph.warmup, "duration_ns": dur})
        elif isinstance(ph, CatPhaseSpec):
            if not 512 <= ph.read_size <= 16 << 20:
                err(("phases", i, "read_size"), "must be from 512 B to 16 MiB")
            phases.append({"type": "cat", "name": ph.name, "read_size": ph.read_size, "passes": ph.passes})
        elif isinstance(ph, TunePhaseSpec):
            fs_now = spec.filesystem
            if not isinstance(fs_now, ZfsSpec) or not fs_now.cache:
                err(("phases", i, "type"), "a tune phase sets L2ARC module parameters: it needs a ZFS pool with a cache device (filesystem.cache)")
            tunables = {f: getattr(ph.l2arc, f) for f in L2arcSpec.model_fields}
            if all(v is None for v in tunables.values()):
                err(("phases", i, "l2arc"), "sets no parameter; name at least one, e.g. l2arc = { l2arc_noprefetch = 1 }")
            phases.append({"type": "tune", "name": ph.name, "l2arc": tunables})
        else:
            phases.append({"type": "restart", "name": ph.name, "vm_moved": ph.vm_moved})
    if phases and not is_fio and not any(p["type"] == "workload" for p in phases):
        err(("phases",), "needs at least one workload phase (the one measured)")
    if is_fio and fio_res is not None and spec.phases and not any(p["type"] == "fio" for p in phases):
        err(("phases",), "needs at least one fio phase (the one measured)")
    if errs:
        return None, errs
    out = {
        "scenario": scenario,
        "variant": variant,
        "seed": spec.seed,
        "machine": machine,
        "devices": devices,
        "filesystem": fs_out,
        "database": db_out,
        "dataset": dataset_out,
        "workload": workload_out,
        "run": {"warmup_ns": r.warmup, "duration_ns": r.duration, "report_interval_ns": r.report_interval},
        "phases": phases,
    }
    return out, []


# ---------------------------------------------------------------------------------------
# Public API


@dataclass
class Scenario:
    """A validated scenario: its name, where it came from, and every variant resolved."""

    name: str
    source: str
    description: str
    raw: dict[str, Any]
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def variant_names(self) -> list[str]:
        return list(self.variants)

    def to_json(self) -> str:
        """The resolved variants as one JSON document ``{variant: VariantConfig}``."""
        return json.dumps(self.variants, indent=2)


def _validate(raw: dict[str, Any], source: str, overrides: Optional[dict[str, Any]] = None, base_dir: Optional[Path] = None) -> Scenario:
    if not isinstance(raw, dict):
        _raise(source, [_Err((), "a scenario is a table (dict) of keys", raw, "dict_type")])
    raw = copy.deepcopy(raw)
    base_dir = base_dir if base_dir is not None else Path.cwd()
    errs: list[_Err] = []
    variants_raw = raw.pop("variants", None)
    if variants_raw is None:
        variants_raw = {}
    if not isinstance(variants_raw, dict):
        errs.append(_Err(("variants",), "must be a table of [variants.NAME] tables", variants_raw, "dict_type"))
        variants_raw = {}
    for vname, over in variants_raw.items():
        if not isinstance(over, dict):
            errs.append(_Err(("variants", vname), "must be a table of overrides", over, "dict_type"))
        else:
            for k in over:
                if k not in _VARIANT_KEYS:
                    errs.append(_Err(("variants", vname, k), f"unknown key {k!r}; a variant overrides: {', '.join(sorted(_VARIANT_KEYS))}", over[k], "extra_forbidden"))
    if errs:
        _raise(source, errs)
    todo = variants_raw or {"base": {}}
    name = raw.get("name") if isinstance(raw.get("name"), str) else "?"
    # loc/msg -> variants in which the base-attributed error occurs
    base_errs: dict[tuple, tuple[_Err, list[str]]] = {}
    var_errs: list[_Err] = []
    resolved: dict[str, dict] = {}
    for vname, over in todo.items():
        replaced: set = set()
        merged = _merge(raw, over, (), replaced)
        if overrides:
            merged = _merge(merged, overrides, (), set())
        try:
            spec = VariantSpec.model_validate(merged)
        except ValidationError as e:
            found = _pydantic_errors(e)
        else:
            out, found = _resolve_variant(name, vname, spec, merged, base_dir)
            if out is not None:
                resolved[vname] = out
        for e in found:
            if variants_raw and _set_by_variant(raw, over, replaced, e.loc):
                var_errs.append(_Err(("variants", vname) + e.loc, e.msg, e.input, e.type))
            else:
                key = (e.loc, e.msg)
                base_errs.setdefault(key, (e, []))[1].append(vname)
    errs = []
    for e, where in base_errs.values():
        if variants_raw and len(where) < len(todo):
            e = _Err(e.loc, f"{e.msg} (in variant{'s' if len(where) > 1 else ''} {', '.join(where)})", e.input, e.type)
        errs.append(e)
    errs += var_errs
    if errs:
        _raise(source, errs)
    return Scenario(name=name, source=source, description=raw.get("description", ""), raw=raw | {"variants": variants_raw}, variants=resolved)


def load_scenario(src: Union[str, Path, dict[str, Any], None] = None, *, overrides: Optional[dict[str, Any]] = None) -> Scenario:
    """Reads, validates and resolves a scenario: a TOML file path, a dict, or None (the default).

    ``overrides`` is a table merged into every variant last (the CLI's ``--seed`` and
    ``--duration`` use it). Raises :class:`~ztwin.exceptions.ScenarioError` listing every
    problem found.
    """
    if src is None:
        src = DEFAULT_SCENARIO
    if isinstance(src, dict):
        return _validate(src, "<dict>", overrides)
    path = Path(src)
    source = str(src)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"scenario file {source} does not exist", errors=[{"loc": (), "loc_str": "", "msg": "file not found", "input": source, "type": "file_not_found"}]) from None
    except OSError as e:
        raise ScenarioError(f"cannot read scenario file {source}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        msg = f"not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); TOML files are UTF-8"
        raise ScenarioError(f"scenario {source} is {msg}", errors=[{"loc": (), "loc_str": "", "msg": msg, "input": None, "type": "encoding"}]) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario {source} is not valid TOML: {e}", errors=[{"loc": (), "loc_str": "", "msg": f"not valid TOML: {e}", "input": None, "type": "toml"}]) from None
    return _validate(raw, source, overrides, path.resolve().parent)


def resolve(scenario: Union[Scenario, str, Path, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The resolved variants ``{variant name: VariantConfig dict}`` of a scenario."""
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return copy.deepcopy(scenario.variants)
