"""A validated variant turned into the core's ``VariantConfig`` dict (bytes and
nanoseconds as integers). Only what the core cannot see is checked here: the tables a
workload needs are present, fio's job files parse and name their jobs. Every rule on
values (ranges, devices named and used once, tunables a release has, what fits the
machine and the devices) is the core's, run by ``check_variants`` as the stack is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from .. import fio as fiomod
from .errors import _Err, _get
from .hardware import _apply_instance_disk_limits, _resolve_array, _resolve_controllers, _resolve_device, _resolve_machine
from .schema import (
    ArcSpec,
    BcacheSpec,
    CatPhaseSpec,
    DeviceSpec,
    FioPhaseSpec,
    FioWorkloadSpec,
    InnodbSpec,
    L2arcSpec,
    MdArraySpec,
    PoolSpec,
    SysbenchDatasetSpec,
    TpccDatasetSpec,
    SysbenchWorkloadSpec,
    TunePhaseSpec,
    TxgSpec,
    VariantSpec,
    WorkloadPhaseSpec,
    ZfetchSpec,
    ZfsSpec,
    ZilSpec,
)


# oltp_common.lua's transaction options, as the core's OltpOptions names them.
_OLTP_OPTIONS = (
    "range_size", "point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges", "range_selects",
    "skip_trx", "index_updates", "non_index_updates", "delete_inserts", "auto_inc",
)
_TRX_TESTS = ("oltp_read_only", "oltp_read_write", "oltp_write_only")
_READ_TESTS = ("oltp_read_only", "oltp_read_write")
# Which sysbench 1.0.20 tests read each oltp_common.lua option (the scripts' event()).
_OLTP_OPTION_TESTS = {
    "range_size": _READ_TESTS, "point_selects": _READ_TESTS, "simple_ranges": _READ_TESTS,
    "sum_ranges": _READ_TESTS, "order_ranges": _READ_TESTS, "distinct_ranges": _READ_TESTS,
    "range_selects": _READ_TESTS, "skip_trx": _TRX_TESTS,
    "index_updates": ("oltp_read_write", "oltp_write_only", "oltp_update_index"),
    "non_index_updates": ("oltp_read_write", "oltp_write_only", "oltp_update_non_index"),
    "delete_inserts": ("oltp_read_write", "oltp_write_only"),
    "auto_inc": ("oltp_insert",),
}
_INNODB_WRITE_OPTIONS = (
    "innodb_flush_log_at_trx_commit", "innodb_doublewrite", "innodb_io_capacity", "innodb_io_capacity_max",
    "innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing",
    "innodb_adaptive_flushing_lwm", "innodb_flushing_avg_loops", "innodb_log_file_size",
    "innodb_log_files_in_group", "innodb_flush_neighbors", "innodb_change_buffering",
    "innodb_purge_threads", "innodb_purge_batch_size", "innodb_max_purge_lag",
    "innodb_purge_rseg_truncate_frequency",
    "log_bin", "sync_binlog", "max_binlog_size", "binlog_group_commit_sync_delay",
    "binlog_group_commit_sync_no_delay_count",
    "innodb_empty_free_list_algorithm", "innodb_cleaner_lsn_age_factor", "innodb_buffer_pool_instances",
)


def _resolve_variant(scenario: str, variant: str, spec: VariantSpec, raw: dict, base_dir: Path) -> tuple[Optional[dict], list[_Err]]:
    errs: list[_Err] = []
    machine = _resolve_machine(spec.machine, errs)
    devices = [d for n, s in spec.devices.items() if isinstance(s, DeviceSpec) and (d := _resolve_device(n, s, raw, errs)) is not None]
    _apply_instance_disk_limits(spec.machine, machine, devices, errs)
    arrays = [a for n, s in spec.devices.items() if isinstance(s, MdArraySpec) and (a := _resolve_array(n, s, spec.devices, errs)) is not None]
    controllers = _resolve_controllers(spec.controllers, spec.devices, raw, errs)
    fs = spec.filesystem

    def err(loc: tuple, msg: str) -> None:
        errs.append(_Err(loc, msg, _get(raw, loc)))

    if isinstance(fs, ZfsSpec):
        fs_out = {
            "type": "zfs", "release": fs.release, "vdevs": list(fs.vdevs), "log": list(fs.log),
            "pool": {f: getattr(fs.pool, f) for f in PoolSpec.model_fields},
            "txg": {f: getattr(fs.txg, f) for f in TxgSpec.model_fields}, "ashift": fs.ashift,
            "recordsize": fs.recordsize, "indirect_block_size": fs.indirect_block_size,
            "compression": fs.compression, "primarycache": fs.primarycache,
            "arc": {f: getattr(fs.arc, f) for f in ArcSpec.model_fields},
            "release_patch": fs.release_patch,
            "cache": list(fs.cache),
            "secondarycache": fs.secondarycache,
            "l2arc": {f: getattr(fs.l2arc, f) for f in L2arcSpec.model_fields},
            "arc_warm_at_first_eviction": fs.arc_warm_at_first_eviction,
            "zfetch": {f: getattr(fs.zfetch, f) for f in ZfetchSpec.model_fields},
            "sync": fs.sync,
            "logbias": fs.logbias,
            "zil": {f: getattr(fs.zil, f) for f in ZilSpec.model_fields},
            "direct": fs.direct,
        }
        fs_out["log_recordsize"] = fs.log_recordsize
    else:
        fs_out = {"type": fs.type, "device": fs.device, "block_size": fs.block_size, "bcache": None}
        if fs.bcache is not None:
            fs_out["bcache"] = {f: getattr(fs.bcache, f) for f in BcacheSpec.model_fields}

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
                fio_res = fiomod.load(w.job_file, w.jobs, w.options, base_dir, w.fio_version)
            except fiomod.FioError as e:
                where = "job_file" if w.job_file is not None else ("jobs" if w.jobs is not None else "options")
                err(("workload", where), str(e))
        dataset_out = {"type": "files", "files": fio_res.files} if fio_res is not None else None
        workload_out = {"type": "fio", "fio_version": w.fio_version, "jobs": fio_res.jobs if fio_res else []}
    else:
        for key, what in (
            ("database", "the server that runs the queries, e.g. [database] type = \"innodb\" with innodb_buffer_pool_size; "
             "an empty [database] takes MySQL's defaults (a 128M buffer pool)"),
            ("dataset", "the tables the queries read, e.g. [dataset] tables = 8, table_size = 1000000; "
             "an empty [dataset] takes sysbench's defaults (1 table of 10000 rows)"),
        ):
            if key not in raw:
                err((key,), f"a sysbench workload needs [{key}]: {what}")
        db = spec.database or InnodbSpec()
        ds = spec.dataset or SysbenchDatasetSpec()
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
        } | {f: getattr(db, f) for f in _INNODB_WRITE_OPTIONS}
        tests_run = {w.test} | {ph.test for ph in spec.phases if isinstance(ph, WorkloadPhaseSpec) and ph.test}
        if isinstance(ds, TpccDatasetSpec):
            dataset_out = {
                "type": "tpcc", "scale": ds.scale, "tables": ds.tables,
                "compress_ratio": float(ds.compress_ratio), "order_capacity": ds.order_capacity,
            }
            if tests_run != {"tpcc"}:
                err(("workload", "test"), f"a tpcc dataset runs test = \"tpcc\", not {', '.join(sorted(tests_run - {'tpcc'}))}")
        else:
            dataset_out = {
                "type": "sysbench", "tables": ds.tables, "table_size": ds.table_size,
                "compress_ratio": None if ds.compress_ratio is None else float(ds.compress_ratio),
                "prepare_rand_type": ds.prepare_rand_type,
            }
            if "tpcc" in tests_run:
                err(("dataset", "type"), "test = \"tpcc\" needs [dataset] type = \"tpcc\" (sysbench-tpcc's tables)")
        workload_out = {
            "type": "sysbench", "test": w.test, "threads": w.threads, "rand_type": w.rand_type,
            "rand_spec_iter": w.rand_spec_iter, "rand_spec_pct": float(w.rand_spec_pct),
            "rand_spec_res": float(w.rand_spec_res), "rand_pareto_h": float(w.rand_pareto_h),
            "rand_zipfian_exp": float(w.rand_zipfian_exp), "random_points": w.random_points,
            # The write tests' options at sysbench's defaults until those tests run.
            "oltp": {f: getattr(w, f) for f in _OLTP_OPTIONS},
        }
        used = {w.test} | {ph.test for ph in spec.phases if isinstance(ph, WorkloadPhaseSpec) and ph.test}
        for f in sorted(set(_OLTP_OPTIONS) & w.model_fields_set):
            if not used & set(_OLTP_OPTION_TESTS[f]):
                err(("workload", f), f"applies to {', '.join(_OLTP_OPTION_TESTS[f])}, not {', '.join(sorted(used))}")
    is_fio = isinstance(w, FioWorkloadSpec)
    # The scenario's own rule (the core takes any interval: its tests use one row per run).
    if not is_fio and 0 < r.duration < r.report_interval:
        err(("run", "report_interval"), "must not exceed run.duration")
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
            doc = {"type": "workload", "name": ph.name, "warmup_ns": r.warmup if ph.warmup is None else ph.warmup,
                   "duration_ns": dur, "test": None}
            if ph.test is not None:
                tests = SysbenchWorkloadSpec.model_fields["test"].annotation.__args__
                if ph.test not in tests:
                    err(("phases", i, "test"), f"must be a sysbench test: {', '.join(tests)}")
                doc["test"] = ph.test
            phases.append(doc)
        elif isinstance(ph, CatPhaseSpec):
            phases.append({"type": "cat", "name": ph.name, "read_size": ph.read_size, "passes": ph.passes})
        elif isinstance(ph, TunePhaseSpec):
            tunables = {f: getattr(ph.l2arc, f) for f in L2arcSpec.model_fields}
            if all(v is None for v in tunables.values()):
                err(("phases", i, "l2arc"), "sets no parameter; name at least one, e.g. l2arc = { l2arc_noprefetch = 1 }")
            if ph.l2arc.per_device_feed is not None:
                err(
                    ("phases", i, "l2arc", "per_device_feed"),
                    "is not a module parameter (master's per-device feed threads come with the devices): set it in "
                    "[filesystem.l2arc] only",
                )
            phases.append({"type": "tune", "name": ph.name, "l2arc": tunables})
        else:
            phases.append({"type": "restart", "name": ph.name, "vm_moved": ph.vm_moved, "recreate_cache": ph.recreate_cache})
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
        "controllers": controllers,
        "arrays": arrays,
        "filesystem": fs_out,
        "database": db_out,
        "dataset": dataset_out,
        "workload": workload_out,
        "run": {"warmup_ns": r.warmup, "duration_ns": r.duration, "report_interval_ns": r.report_interval},
        "phases": phases,
    }
    return out, []
