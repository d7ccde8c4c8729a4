"""``[machine]``, ``[devices.*]`` and ``[controllers.*]`` resolved into the core's
``MachineConfig``, ``DeviceConfig``, ``ArrayConfig`` and ``ControllerConfig``: a preset's
values under the user's, AWS volume rules (gp2's limits follow from its size, gp3's
provisioning bounds), rotational disks' seek curves, md arrays (``type = "md-raid10"``)
and the volumes behind each RAID controller (the devices that name it).
"""

from __future__ import annotations

from typing import Any, Optional

from .errors import _Err, _get
from .schema import ROTATIONAL_KEYS, ControllerSpec, CpuSpec, DeviceSpec, MachineSpec, MdArraySpec, VmSpec
from .values import GiB, MiB


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


#: gp2's I/O credits (AWS EC2 User Guide, "Amazon EBS volume types", gp2, "I/O credits and
#: burst performance"): a volume starts with 5.4 million I/O credits, the most it can hold,
#: "enough to sustain the maximum burst performance of 3,000 IOPS for 30 minutes"; it earns
#: them at its baseline (3 IOPS per GiB) and spends them above it. Volumes of 1000 GiB and
#: more have a baseline of 3000 IOPS or more and never spend them.
GP2_BURST_IOPS, GP2_IO_CREDITS = 3000, 5_400_000


def gp2_burst(size_bytes: int) -> Optional[dict[str, Any]]:
    """The core's ``BurstConfig`` of a gp2 volume of ``size_bytes`` (None: its baseline is
    3000 IOPS or more, so it never bursts). Volumes larger than 170 GiB and smaller than
    334 GiB deliver 250 MiB/s "if burst credits are available" (128 MiB/s otherwise): a
    burst throughput that lasts with the I/O credits (EBS volume types, the gp2 footnote)."""
    iops, _ = gp2_limits(size_bytes)
    if iops >= GP2_BURST_IOPS:
        return None
    gib = size_bytes / GiB
    return {"iops_limit": float(GP2_BURST_IOPS), "io_credits": float(GP2_IO_CREDITS),
            "throughput_limit_bytes_per_sec": float(250 * MiB) if 170 < gib < 334 else None,
            "byte_credits": None, "full_at_attach": False}


#: Azure Premium SSD (v1) tiers: (tier, size GiB, IOPS, MB/s), provisioned per disk; a disk
#: of any size gets the smallest tier that holds it. Source: Microsoft docs,
#: includes/disk-storage-premium-ssd-sizes.md (MicrosoftDocs/azure-docs; the 2019-2020
#: copies give the same figures, their throughput unit then written MiB/s). P1-P3 were in
#: preview in 2019. Credit bursting of P20 and smaller: :func:`azure_premium_burst`.
AZURE_PREMIUM_TIERS: tuple[tuple[str, int, int, int], ...] = (
    ("P1", 4, 120, 25), ("P2", 8, 120, 25), ("P3", 16, 120, 25), ("P4", 32, 120, 25),
    ("P6", 64, 240, 50), ("P10", 128, 500, 100), ("P15", 256, 1100, 125), ("P20", 512, 2300, 150),
    ("P30", 1024, 5000, 200), ("P40", 2048, 7500, 250), ("P50", 4096, 7500, 250),
    ("P60", 8192, 16000, 500), ("P70", 16384, 18000, 750), ("P80", 32767, 20000, 900),
)


def azure_premium_limits(size_bytes: int) -> tuple[str, float, float]:
    """Azure Premium SSD: (tier, IOPS, bytes/s) of a disk of ``size_bytes`` (the smallest
    tier at least that large; see :data:`AZURE_PREMIUM_TIERS`). ValueError above P80."""
    for tier, gib, iops, mbs in AZURE_PREMIUM_TIERS:
        if size_bytes <= gib * GiB:
            return tier, float(iops), float(mbs * 1_000_000)
    raise ValueError(f"Azure Premium SSD disks hold at most {AZURE_PREMIUM_TIERS[-1][1]} GiB (P80)")


#: Azure Premium SSD credit bursting (Microsoft docs, includes/managed-disks-bursting.md,
#: ms.date 03/29/2020, and the size table's burst columns): disks of 512 GiB and less
#: (P1-P20) burst to 3500 IOPS and 170 MB/s while their credits last, "30 min" at most at
#: those rates from a full bucket; IOPS and bandwidth credited separately; the bucket is
#: full when the disk is attached. The bucket sizes are INFERRED from the 30 minutes:
#: (burst - provisioned) x 1800 s per resource. Larger disks had no bursting in 2020
#: (on-demand bursting came as a preview in 2021 and is not modelled).
AZURE_BURST_IOPS, AZURE_BURST_MBS, AZURE_BURST_SECONDS, AZURE_BURST_MAX_GIB = 3500, 170, 1800, 512
#: Host caching is not supported on Premium disks of 4 TiB and more (premium-storage-performance.md).
AZURE_HOST_CACHE_BELOW_GIB = 4096


def azure_premium_burst(size_bytes: int) -> Optional[dict[str, Any]]:
    """The core's ``BurstConfig`` of an Azure Premium SSD of ``size_bytes`` (None above
    512 GiB: P30 and up have no credit bursting); see :data:`AZURE_BURST_IOPS`."""
    if size_bytes > AZURE_BURST_MAX_GIB * GiB:
        return None
    _, iops, tput = azure_premium_limits(size_bytes)
    burst_tput = AZURE_BURST_MBS * 1_000_000
    return {"iops_limit": float(AZURE_BURST_IOPS), "io_credits": (AZURE_BURST_IOPS - iops) * AZURE_BURST_SECONDS,
            "throughput_limit_bytes_per_sec": float(burst_tput), "byte_credits": (burst_tput - tput) * AZURE_BURST_SECONDS,
            "full_at_attach": True}


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
    from ..presets import device_presets

    base = device_presets().get(spec.preset) if spec.preset else None
    return base.size if base is not None else None


def _resolve_device(name: str, spec: DeviceSpec, raw: dict, errs: list[_Err]) -> Optional[dict[str, Any]]:
    from ..presets import device_presets

    loc = ("devices", name)
    presets = device_presets()
    base = presets.get(spec.preset) if spec.preset else None
    if spec.preset and base is None:
        errs.append(_Err(loc + ("preset",), f"unknown device preset {spec.preset!r}; known: {', '.join(presets)}", spec.preset))
        return None
    values: dict[str, Any] = {}
    for f in DeviceSpec.model_fields:
        if f == "controller":
            continue  # where the device sits, not what it is: the controllers' (see _resolve_controllers)
        user = getattr(spec, f)
        values[f] = user if user is not None else (getattr(base, f) if base is not None else None)
    kind = spec.preset or "custom"
    n0 = len(errs)
    burst: Optional[dict[str, Any]] = None
    host_cache = False
    if kind == "aws-gp2":
        _aws_size(errs, loc, raw, spec.size, "aws-gp2", required=True)
        for f in ("iops_limit", "throughput_limit"):
            if spec.__pydantic_fields_set__ & {f}:
                errs.append(_Err(loc + (f,), f"aws-gp2 {f} follows from the size (3 IOPS/GiB, 100 to 16000; 128 or 250 MiB/s); "
                                 "use preset aws-gp3 or a custom device to set it", _get(raw, loc + (f,))))
        if len(errs) == n0 and spec.size is not None:
            values["iops_limit"], values["throughput_limit"] = gp2_limits(spec.size)
            if spec.burst:
                burst = gp2_burst(spec.size)
    elif kind == "azure-premium":
        if spec.size is None:
            errs.append(_Err(loc + ("size",), "azure-premium needs a size: the disk's tier (P1 to P80) and so its IOPS "
                             "and MB/s follow from it, e.g. size = \"1024GiB\" (P30)", None, "missing"))
        elif spec.size > AZURE_PREMIUM_TIERS[-1][1] * GiB:
            errs.append(_Err(loc + ("size",), f"Azure Premium SSD disks hold at most {AZURE_PREMIUM_TIERS[-1][1]} GiB (P80)",
                             _get(raw, loc + ("size",))))
        for f in ("iops_limit", "throughput_limit"):
            if spec.__pydantic_fields_set__ & {f}:
                errs.append(_Err(loc + (f,), f"azure-premium {f} follows from the size's tier (P1 to P80, e.g. P30: 5000 IOPS, "
                                 "200 MB/s); use a custom device to set it", _get(raw, loc + (f,))))
        size = spec.size
        if spec.burst and size is not None and size > AZURE_BURST_MAX_GIB * GiB:
            errs.append(_Err(loc + ("burst",), f"credit bursting is for Premium SSDs of {AZURE_BURST_MAX_GIB} GiB and less "
                             f"(P1 to P20); this disk is {azure_premium_limits(min(size, AZURE_PREMIUM_TIERS[-1][1] * GiB))[0]} "
                             "(on-demand bursting of larger disks, a 2021 preview, is not modelled)", True))
        mode = spec.host_cache or "none"
        if mode == "readwrite":
            errs.append(_Err(loc + ("host_cache",), "host caching ReadWrite (write-back at the host) is not modelled; "
                             "host_cache takes \"none\" or \"readonly\"", "readwrite"))
        elif mode == "readonly" and size is not None and size >= AZURE_HOST_CACHE_BELOW_GIB * GiB:
            errs.append(_Err(loc + ("host_cache",), "Azure supports host caching on disks smaller than 4 TiB only "
                             "(P50 and up: host_cache = \"none\")", "readonly"))
        if len(errs) == n0 and size is not None:
            _, values["iops_limit"], values["throughput_limit"] = azure_premium_limits(size)
            if spec.burst:
                burst = azure_premium_burst(size)
            host_cache = mode == "readonly"
    else:
        if spec.burst:
            errs.append(_Err(loc + ("burst",), f"burst applies to presets aws-gp2 and azure-premium only (this device is {kind})", True))
        if spec.host_cache not in (None, "none"):
            errs.append(_Err(loc + ("host_cache",), f"host caching applies to preset azure-premium only (this device is {kind})",
                             spec.host_cache))
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
        if values[f] is None and not (kind in ("aws-gp2", "azure-premium") and f in ("iops_limit", "throughput_limit")):
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
        "flush_latency_ns": values["flush_latency"] or 0,
        "queue_rotational": values["queue_rotational"],
        "iops_size_bytes": values["iops_size"],
        "burst": burst,
        "io_limit": None,
        "host_cache": host_cache,
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


# CPU costs a scenario without a preset may leave out: the core's default (added after
# scenarios listed every cost). l2arc_hdr_ns: DEFAULT_L2ARC_HDR_NS of config/machine.rs.
CPU_DEFAULTS = {"l2arc_hdr_ns": 200}


def _resolve_machine(spec: MachineSpec, errs: list[_Err]) -> Optional[dict[str, Any]]:
    from ..presets import machine_presets

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
    cpu = {
        f: pick(spec.cpu, base.cpu if base else None, f, ("machine", "cpu", f))
        for f in CpuSpec.model_fields
        if f not in CPU_DEFAULTS
    }
    for f, default in CPU_DEFAULTS.items():
        v = getattr(spec.cpu, f) if spec.cpu is not None else None
        if v is None and base is not None and base.cpu is not None:
            v = getattr(base.cpu, f)
        cpu[f] = default if v is None else v
    if len(errs) > n0:
        return None
    if ram < 64 * MiB:
        errs.append(_Err(("machine", "ram"), "must be at least 64 MiB", ram))
        return None
    cpu["speed"] = float(cpu["speed"])
    avail = spec.mem_available if spec.mem_available is not None else (base.mem_available if base else None)
    if avail is not None and not 256 * 1024 <= avail <= ram:
        errs.append(_Err(("machine", "mem_available"), "must be from 256 KiB (64 pages) to the machine's RAM", avail))
        return None
    vm = {f: getattr(spec.vm, f) if spec.vm is not None else None for f in VmSpec.model_fields}
    for f in ("dirty_bytes", "dirty_background_bytes"):
        # mm/page-writeback.c: at least two pages (dirty_bytes_min).
        if vm[f] not in (None, 0) and not 8192 <= vm[f] <= ram:
            errs.append(_Err(("machine", "vm", f), "must be 0 (the ratio applies) or from 8 KiB (two pages) to the machine's RAM", vm[f]))
            return None
    if vm["min_free_kbytes"] is not None and vm["min_free_kbytes"] * 1024 > ram // 2:
        errs.append(_Err(("machine", "vm", "min_free_kbytes"), "must be at most half the machine's RAM", vm["min_free_kbytes"]))
        return None
    return {"name": spec.name or spec.preset or "custom", "vcpus": vcpus, "ram_bytes": ram, "cpu": cpu,
            "mem_available_bytes": avail, "vm": vm}


EBS_KINDS = ("aws-gp2", "aws-gp3")
#: Azure managed disks a VM reaches through its uncached (remote) disk limits.
AZURE_REMOTE_KINDS = ("azure-premium",)
#: Azure temporary disks, which pass the VM's cached and temp storage limit.
AZURE_TEMP_KINDS = ("azure-temp-2ds-v4",)
#: The host's local storage serving host-cache hits: the temporary disk preset's figures
#: (INFERRED: the same local SSD; no published figure).
HOST_CACHE_MEDIUM = {"latency_sigma": 0.3, "transfer_bytes_per_sec": 1e9, "parallelism": 32}


def _apply_instance_disk_limits(spec: MachineSpec, machine: Optional[dict[str, Any]], devices: list[dict[str, Any]],
                                errs: list[_Err]) -> None:
    """The instance's own limits on its volumes (the machine's or its preset's).

    An EC2 instance's EBS bandwidth (``ebs_throughput_limit``: an EBS-optimized instance
    reaches its volumes over a dedicated link of that baseline throughput; AWS EC2 User
    Guide, "Amazon EBS-optimized instance types") caps each EBS volume's own throughput
    (simplification: the link is shared by the volumes, and that sharing is not modelled;
    exact with one volume); a gp2 burst throughput above it is cut to it.

    An Azure VM's limits are throttles of the machine (``io_limits``) its devices pass after
    their own, shared by them (Microsoft docs, managed-disks-overview.md, "Disk allocation
    and performance"): the uncached disk limits (``uncached_disk_iops_limit``,
    ``uncached_disk_throughput_limit``, the size table's "max uncached disk throughput";
    every Premium SSD I/O that is not a host-cache hit, so bursting does not bypass it),
    counted in I/Os of up to 256 KiB as the disks count them; the cached and temp storage
    limit (``cached_temp_iops_limit``, ``cached_temp_throughput_limit``), passed by the
    temporary disk and by host-cache hits together. A Premium SSD with host_cache =
    "readonly" uses the VM's host cache (``host_cache_size``)."""
    from ..presets import machine_presets

    base = machine_presets().get(spec.preset) if spec.preset else None
    pick = lambda f: getattr(spec, f) or (getattr(base, f) if base is not None else None)  # noqa: E731

    ebs = pick("ebs_throughput_limit")
    if ebs is not None:
        for d in devices:
            if d["kind"] in EBS_KINDS:
                own = d["throughput_limit_bytes_per_sec"]
                d["throughput_limit_bytes_per_sec"] = float(ebs) if own is None else min(own, float(ebs))
                b = d["burst"]
                if b is not None and b["throughput_limit_bytes_per_sec"] is not None:
                    cut = min(b["throughput_limit_bytes_per_sec"], float(ebs))
                    b["throughput_limit_bytes_per_sec"] = cut if cut > d["throughput_limit_bytes_per_sec"] else None

    limits: list[dict[str, Any]] = []
    f = lambda v: None if v is None else float(v)  # noqa: E731

    def limit(name: str, iops: Any, tput: Any, iops_size: Optional[int], users: list[dict[str, Any]],
              needed: bool) -> Optional[str]:
        if not needed or (iops is None and tput is None):
            return None
        limits.append({"name": name, "iops_limit": f(iops), "throughput_limit_bytes_per_sec": f(tput),
                       "iops_size_bytes": iops_size})
        for d in users:
            d["io_limit"] = name
        return name

    remote = [d for d in devices if d["kind"] in AZURE_REMOTE_KINDS]
    limit("uncached-disk", pick("uncached_disk_iops_limit"), pick("uncached_disk_throughput_limit"), 256 << 10, remote,
          bool(remote))
    cached = [d for d in devices if d["host_cache"]]
    temps = [d for d in devices if d["kind"] in AZURE_TEMP_KINDS]
    shared = limit("cached-temp", pick("cached_temp_iops_limit"), pick("cached_temp_throughput_limit"), None, temps,
                   bool(temps or cached))
    host_cache = None
    if cached:
        size, latency = pick("host_cache_size"), pick("host_cache_read_latency")
        n0 = len(errs)
        if size is None:
            for d in cached:
                errs.append(_Err(("devices", d["name"], "host_cache"), "this machine has no host cache (set "
                                 "[machine] host_cache_size; Lsv2 and Ls sizes support no Premium Storage caching)", "readonly"))
        elif latency is None:
            errs.append(_Err(("machine", "host_cache_read_latency"), "required key missing for a host cache (no preset gives it)",
                             None, "missing"))
        if len(errs) == n0:
            host_cache = {"cache_bytes": size, "io_limit": shared, "read_latency_ns": latency, **HOST_CACHE_MEDIUM}
    if machine is not None:
        machine["io_limits"] = limits
        machine["host_cache"] = host_cache


def _resolve_array(name: str, spec: MdArraySpec, devices: dict[str, Any], errs: list[_Err]) -> Optional[dict[str, Any]]:
    """The core's ``ArrayConfig`` of ``[devices.NAME] type = "md-raid10"``; the members must be
    devices (not arrays) of the scenario, each once. The layout's copies against the members,
    the chunk and the sizes are the core's rules (``dev::md_raid10``)."""
    loc = ("devices", name, "members")
    n0 = len(errs)
    for i, m in enumerate(spec.members):
        if m not in devices:
            known = ", ".join(n for n, d in devices.items() if isinstance(d, DeviceSpec))
            errs.append(_Err(loc + (i,), f"names unknown device {m!r}; devices: {known}", m))
        elif not isinstance(devices[m], DeviceSpec):
            errs.append(_Err(loc + (i,), f"{m!r} is an md array; an array's members are devices", m))
        elif m in spec.members[:i]:
            errs.append(_Err(loc + (i,), f"device {m!r} is listed twice", m))
    if len(errs) > n0:
        return None
    return {"name": name, "level": "raid10", "members": list(spec.members), "layout": spec.layout, "chunk_bytes": spec.chunk}


def _resolve_controllers(controllers: dict[str, ControllerSpec], devices: dict[str, Any], raw: dict, errs: list[_Err]) -> list[dict[str, Any]]:
    """The core's ``ControllerConfig`` list: each ``[controllers.NAME]`` with the devices that
    name it as its volumes (in the order of ``[devices]``). A controller no device names is
    left out (a variant may move its devices elsewhere); a device naming an unknown
    controller is an error."""
    for name, d in devices.items():
        if isinstance(d, DeviceSpec) and d.controller is not None and d.controller not in controllers:
            known = ", ".join(controllers) or "none (add a [controllers.NAME] table)"
            errs.append(_Err(("devices", name, "controller"), f"unknown controller {d.controller!r}; controllers: {known}",
                             _get(raw, ("devices", name, "controller"))))
    out = []
    for name, c in controllers.items():
        volumes = [n for n, d in devices.items() if isinstance(d, DeviceSpec) and d.controller == name]
        if not volumes:
            continue
        out.append({
            "name": name,
            "volumes": volumes,
            "cache_bytes": c.cache,
            "write_back": c.write_policy == "write-back",
            "cache_latency_ns": c.cache_latency,
            "cache_bytes_per_sec": float(c.cache_rate),
            "destage_max_bytes": c.destage_max,
            "destage_queue_depth": c.destage_queue_depth,
        })
    return out
