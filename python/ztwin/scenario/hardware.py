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


#: Azure Premium SSD (v1) tiers: (tier, size GiB, IOPS, MB/s), provisioned per disk; a disk
#: of any size gets the smallest tier that holds it. Source: Microsoft docs,
#: includes/disk-storage-premium-ssd-sizes.md (MicrosoftDocs/azure-docs; the 2019-2020
#: copies give the same figures, their throughput unit then written MiB/s). P1-P3 were in
#: preview in 2019. Credit bursting of P20 and smaller (3500 IOPS, 170 MB/s, 30 min at
#: most, includes/managed-disks-bursting.md 2020) is not modelled.
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
        if spec.burst:
            errs.append(_Err(loc + ("burst",), "Premium SSD credit bursting (P20 and smaller) is not modelled yet; "
                             "only burst = false is allowed", True))
        if len(errs) == n0 and spec.size is not None:
            _, values["iops_limit"], values["throughput_limit"] = azure_premium_limits(spec.size)
    else:
        if spec.burst:
            errs.append(_Err(loc + ("burst",), f"burst applies to presets aws-gp2 and azure-premium only (this device is {kind})", True))
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


def _apply_instance_disk_limits(spec: MachineSpec, devices: list[dict[str, Any]]) -> None:
    """Caps remote volumes at the instance's own limits (the machine's or its preset's):
    an EC2 instance's EBS bandwidth (``ebs_throughput_limit``: an EBS-optimized instance
    reaches its volumes over a dedicated link of that baseline throughput; AWS EC2 User
    Guide, "Amazon EBS-optimized instance types") on its EBS volumes, and an Azure VM's
    uncached disk limits (``uncached_disk_iops_limit``, ``uncached_disk_throughput_limit``:
    the size table's "max uncached disk throughput"; a disk with host caching None, and
    every write, passes the disk's limits and then the VM's: Microsoft docs,
    managed-disks-overview.md, "Disk allocation and performance") on its Premium SSDs.
    Simplification: the limit is shared by the instance's volumes, and that sharing is not
    modelled: each volume is capped alone (exact with one data volume)."""
    from ..presets import machine_presets

    base = machine_presets().get(spec.preset) if spec.preset else None
    pick = lambda f: getattr(spec, f) or (getattr(base, f) if base is not None else None)  # noqa: E731

    def cap(kinds: tuple[str, ...], field: str, limit: Any) -> None:
        if limit is None:
            return
        for d in devices:
            if d["kind"] in kinds:
                own = d[field]
                d[field] = float(limit) if own is None else min(own, float(limit))

    cap(EBS_KINDS, "throughput_limit_bytes_per_sec", pick("ebs_throughput_limit"))
    cap(AZURE_REMOTE_KINDS, "iops_limit", pick("uncached_disk_iops_limit"))
    cap(AZURE_REMOTE_KINDS, "throughput_limit_bytes_per_sec", pick("uncached_disk_throughput_limit"))


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
