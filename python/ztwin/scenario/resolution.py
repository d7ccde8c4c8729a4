"""A validated variant turned into the core's ``VariantConfig`` dict (bytes and
nanoseconds as integers), with the checks that span tables: devices named by the
filesystem exist and are used once, tunables exist in the chosen release, the workload
fits the database and the phases fit the workload.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from .. import fio as fiomod
from .. import units
from .errors import _Err, _get
from .hardware import _preset_size, _resolve_device, _resolve_machine
from .schema import (
    ArcSpec,
    BcacheSpec,
    CatPhaseSpec,
    FioPhaseSpec,
    FioWorkloadSpec,
    InnodbSpec,
    L2arcSpec,
    PoolSpec,
    SysbenchDatasetSpec,
    TunePhaseSpec,
    TxgSpec,
    VariantSpec,
    WorkloadPhaseSpec,
    ZfetchSpec,
    ZfsSpec,
    vdev_devices,
)
from .values import MiB


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
