"""What the grid questions (``recordsize``, ``memory-split``, ``slog``, ``compression``)
share: each runs the variant at a few fixed points (no search), measures one phase of
each run, and reads the same metrics from its summary document.

- :func:`prepare` chooses the measured phase (a variant with ``[[phases]]`` runs them in
  order; the measured one is the first workload phase unless ``phase`` names another;
  the phases after it are cut, they cannot change it) and the run keys: the variant's
  own warm-up and duration unless the user gives them (a report interval longer than a
  given duration is cut to it, as the loader requires).
- :func:`metrics` is one run's row: throughput (``qps``; ``tps``), latency percentiles,
  CPU, the pool's devices summed (read and write IOPS and MB/s, the average read size),
  the ARC and buffer-pool hit ratios, compressratio, the ZIL's counters and the write
  amplification (bytes the devices wrote / ``Innodb_data_written``, both over the window).
- :func:`pick_best` is the answer of a throughput question: the best point, ties within a
  tolerance broken by a preference (a pure function, tested on its own).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from .common import AdviseError, Outcome, Runner

#: sysbench tests that write (their answers use transactions per second).
WRITE_TESTS = {"oltp_read_write", "oltp_write_only", "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete"}
#: sysbench tests that only read (no commit writes anything: no sync writes).
READ_TESTS = {"oltp_point_select", "select_random_points", "select_random_ranges", "oltp_read_only"}


def pick_best(
    rows: Sequence[Mapping[str, Any]],
    metric: str,
    tolerance: float = 0.02,
    prefer: Optional[Callable[[Mapping[str, Any]], Any]] = None,
) -> tuple[Optional[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The answer row among ``rows`` (refused rows and rows without ``metric`` skipped):
    the highest ``metric``; every row within ``tolerance`` of it (relative) ties, and the
    tie goes to the smallest ``prefer(row)`` (default: the best metric). Returns the row
    (None when no row has the metric) and the tied rows."""
    ok = [r for r in rows if "refused" not in r and r.get(metric) is not None]
    if not ok:
        return None, []
    best = max(r[metric] for r in ok)
    tied = [r for r in ok if r[metric] >= (1 - tolerance) * best]
    key = prefer or (lambda r: -r[metric])
    return min(tied, key=key), tied


def measured_test(cfg: Mapping[str, Any], phase: Optional[str]) -> tuple[Optional[str], Optional[int], Optional[str]]:
    """The measured phase of a variant: (its name, its index in the variant's phases,
    the sysbench test it runs). No phases: (None, None, the workload's test)."""
    wl = cfg.get("workload") or {}
    phases = [p for p in (cfg.get("phases") or [])]
    if not phases:
        if phase is not None:
            raise AdviseError(f"phase {phase!r}: the variant has no [[phases]]")
        return None, None, wl.get("test")
    names = [p.get("name") for p in phases]
    if phase is None:
        i = next((j for j, p in enumerate(phases) if p.get("type") == "workload"), None)
        if i is None:
            raise AdviseError("the variant has no workload phase to measure")
    else:
        if phase not in names:
            raise AdviseError(f"phase {phase!r}: the variant's phases are {', '.join(map(str, names))}")
        i = names.index(phase)
        if phases[i].get("type") != "workload":
            raise AdviseError(f"phase {phase!r} is of type {phases[i].get('type')}: a workload phase is measured")
    return names[i], i, phases[i].get("test") or wl.get("test")


def prepare(runner: Runner, phase: Optional[str], warmup: Optional[str], duration: Optional[str], notes: list[str]) -> tuple[dict[str, Any], Optional[str], Optional[str]]:
    """The keys every point of the question sets (warm-up, duration), the measured phase's
    name and its test; cuts the variant's phases after the measured one (see the module)."""
    from ..units import parse_duration

    cfg = runner.config
    name, index, test = measured_test(cfg, phase)
    raw_phases = runner.loader.raw.get("phases")
    if index is not None and raw_phases:
        cut = len(raw_phases) - index - 1
        runner.loader.raw["phases"] = raw_phases[: index + 1]
        if index > 0 and (warmup is not None or duration is not None):
            ph = dict(runner.loader.raw["phases"][index])
            if warmup is not None:
                ph["warmup"] = warmup
            if duration is not None:
                ph["duration"] = duration
            runner.loader.raw["phases"][index] = ph
        if cut:
            notes.append(f"measured: phase {name!r} ({test}); the {cut} phase(s) after it are not run")
        elif len(raw_phases) > 1:
            notes.append(f"measured: phase {name!r} ({test}), after the phases before it")
    keys: dict[str, Any] = {}
    run = cfg["run"]
    if warmup is not None:
        keys["run.warmup"] = warmup
    if duration is not None:
        keys["run.duration"] = duration
        if int(run["report_interval_ns"]) > parse_duration(duration):
            keys["run.report_interval"] = duration
    own = cfg["phases"][index] if index is not None else run
    w = warmup or f"{own['warmup_ns'] / 1e9:g}s"
    d = duration or f"{own['duration_ns'] / 1e9:g}s"
    notes.append(f"each point: warm-up {w}, then {d} measured (" + ("as given" if warmup or duration else "the variant's own") + ")")
    return keys, name, test


def phase_doc(out: Outcome, phase: Optional[str]) -> dict[str, Any]:
    """The measured phase's summary in ``out``'s document (the run's own without phases)."""
    d = out.doc or {}
    if phase is None or not d.get("phases"):
        return d
    return next((p for p in d["phases"] if p.get("name") == phase), d)


def _ratio(h: Any, m: Any, io: Any = None) -> Optional[float]:
    if h is None or m is None:
        return None
    t = h + m + (io or 0)
    return h / t if t else None


def metrics(d: Mapping[str, Any], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """One run's row from a (phase) summary ``d`` of a variant ``cfg`` (see the module)."""
    fs = cfg.get("filesystem") or {}
    arc = d.get("arc") or {}
    lat = d.get("latency_ms") or {}
    w = d.get("window_s") or 0
    devs = d.get("devices") or {}
    log_names = set(fs.get("log") or [])
    pool = [n for n in devs if n not in log_names and n not in set(fs.get("cache") or [])]
    rd_iops = sum((devs[n].get("read_iops") or 0) for n in pool)
    rd_mbps = sum((devs[n].get("read_mbps") or 0) for n in pool)
    row: dict[str, Any] = {
        "qps": d.get("qps"),
        "tps": d.get("tps"),
        "latency_p50_ms": lat.get("p50"),
        "latency_p95_ms": lat.get("p95"),
        "latency_p99_ms": lat.get("p99"),
        "cpu_utilization": d.get("cpu_utilization"),
        "read_iops": rd_iops,
        "read_mbps": rd_mbps,
        "avg_read_kib": (rd_mbps * 1e6 / rd_iops / 1024) if rd_iops else None,
        "write_iops": sum((devs[n].get("write_iops") or 0) for n in pool),
        "write_mbps": sum((devs[n].get("write_mbps") or 0) for n in pool),
        "innodb_buffer_pool_hit_ratio": (d.get("innodb") or {}).get("buffer_pool_hit_ratio"),
    }
    if fs.get("type") == "zfs":
        row |= {
            "arc_hit_ratio": _ratio(arc.get("hits"), arc.get("misses"), arc.get("iohits")),
            "arc_demand_data_hit_ratio": _ratio(arc.get("demand_data_hits"), arc.get("demand_data_misses"), arc.get("demand_data_iohits")),
            "compressratio": d.get("compressratio"),
            "demand_metadata_misses_per_query": (arc["demand_metadata_misses"] / d["queries"]) if arc.get("demand_metadata_misses") is not None and d.get("queries") else None,
        }
    for n in sorted(log_names & set(devs)):
        row[f"{n}_write_iops"] = devs[n].get("write_iops")
        row[f"{n}_write_mbps"] = devs[n].get("write_mbps")
    written = (d.get("innodb") or {}).get("Innodb_data_written")
    dev_bytes = sum((st.get("write_mbps") or 0) for st in devs.values()) * 1e6 * w
    row["db_written_mb"] = written / 1e6 if written is not None else None
    row["device_written_mb"] = dev_bytes / 1e6
    row["write_amplification"] = dev_bytes / written if written else None
    zil = d.get("zil") or {}
    for k in ("zil_commit_count", "zil_itx_count", "zil_itx_indirect_count", "zil_itx_copied_count", "zil_itx_needcopy_count",
              "zil_itx_metaslab_normal_bytes", "zil_itx_metaslab_slog_bytes", "lwb_writes"):
        if k in zil:
            row[k] = zil[k]
    row["window_s"] = w
    row["warmup_s"] = d.get("warmup_s")
    return row


def throughput_metric(test: Optional[str]) -> str:
    """``tps`` for a sysbench test that writes, else ``qps``."""
    return "tps" if test in WRITE_TESTS else "qps"
