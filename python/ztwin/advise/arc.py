"""``ztwin advise arc``: the smallest ``zfs_arc_max`` with (near) no demand metadata misses
and queries per second within 2% of the best seen.

The search (:func:`ztwin.advise.search.bracket_search`) starts at the variant's own
zfs_arc_max, doubles it until the criterion holds, then bisects to the step (half a GiB
from a 1 GiB start, less for smaller ARCs), bounded below by what the loader accepts (64
MiB; above arc_c_min in 0.8) and above by what the machine leaves the ARC beside the
buffer pool (RAM minus innodb_buffer_pool_size; the loader refuses RAM itself).

Each point runs long enough for the ARC to be warm: a point select walks from the dnode
down to its record, so the indirect (L1) blocks of the whole dataset are loaded one per
record read that misses them; with ``n`` L1 blocks touched at random at ``R`` per second
(the demand data accesses of a short probe run), the share never touched after ``t`` is
``exp(-t R / n)``; the warm-up leaves 0.1% (``t = ln(1000) n / R``), and at least twice
the time to fill the buffer pool and the ARC with records at that rate. Then 300 s are
measured (one minute fell on different phases of the ARC's slow cycles).

Scaled-down runs (:func:`ztwin.advise.common.scaled_point`: 1/k of the tables and memory on
a machine k times slower, :func:`ztwin.advise.common.slowed_config`) are used for the search when
their error against full-size runs, measured at two points (the start and the next point
of the search), is within the tolerance (qps 3%, demand metadata misses per query 0.05);
the answer and the step below it are then checked at full size, and the search continues
at full size from there if the check disagrees.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..units import human_size
from .common import Advice, AdviseError, Outcome, Runner, choose_scale, fmt, per_s, rel_err, scaled_point, size_text
from .search import bracket_search

GiB = 2**30
MiB = 2**20


@dataclass
class ArcOptions:
    #: Demand metadata misses per query at most this (near zero).
    dm_per_query: float = 0.01
    #: qps within this share of the best seen.
    qps_tolerance: float = 0.02
    #: The grid step in bytes (default: 512 MiB from a 1 GiB start, else a power of two near a quarter of the start).
    step: Optional[int] = None
    #: The scale of the scaled-down runs (None: :func:`choose_scale`; 1: full size only).
    scale: Optional[int] = None
    #: Tolerance of a scaled run against the full-size run: qps (relative) and demand metadata misses per query (absolute).
    scale_qps_tolerance: float = 0.03
    scale_dm_tolerance: float = 0.05
    #: The run's window and warm-up per point (scenario durations); None: chosen (see the module's docs).
    duration: Optional[str] = None
    warmup: Optional[str] = None
    max_evals: int = 16


def fits(config: dict[str, Any]) -> bool:
    return (config.get("filesystem") or {}).get("type") == "zfs" and config.get("workload", {}).get("type") == "sysbench"


def _default_step(start: int) -> int:
    if start >= GiB:
        return 512 * MiB
    s = 2 ** int(math.log2(max(start // 4, 1)))
    return max(s, 32 * MiB)


def _geometry(cfg: dict[str, Any]) -> Optional[dict[str, Any]]:
    from .. import _core

    ds, fs = cfg["dataset"], cfg["filesystem"]
    if ds.get("type") != "sysbench":
        return None
    size = _core.sysbench_table_bytes(ds["table_size"], cfg["database"]["innodb_page_size"])
    req = {"recordsize": fs["recordsize"], "indirect_block_size": fs["indirect_block_size"], "files": [{"size": size, "count": ds["tables"]}]}
    return json.loads(_core.geometry(json.dumps(req)))


def _row(out: Outcome, value: int, factor: float, devices: list[str]) -> dict[str, Any]:
    """One point's row: sizes and rates of a scaled run (``1/factor`` of the tables and
    memory on a machine ``factor`` times slower) multiplied back by its factor
    (full-size equivalents); per-query ratios as they are."""
    row: dict[str, Any] = {"zfs_arc_max": size_text(value), "zfs_arc_max_bytes": value, "scale": round(factor, 3)}
    if out.refused is not None:
        row["refused"] = out.refused
        return row
    d = out.doc or {}
    arc = d.get("arc") or {}
    w = d.get("window_s") or 0
    q = d.get("queries") or 0
    dm = arc.get("demand_metadata_misses")
    row |= {
        "tables": (out.config or {}).get("dataset", {}).get("tables"),
        "qps": _times(d.get("qps"), factor),
        "demand_metadata_misses_per_s": _times(per_s(dm, w), factor),
        "demand_metadata_misses_per_query": (dm / q) if (dm is not None and q) else None,
        "arc_hit_ratio": _ratio(arc.get("hits"), arc.get("misses"), arc.get("iohits")),
        "arc_demand_data_hit_ratio": _ratio(arc.get("demand_data_hits"), arc.get("demand_data_misses"), arc.get("demand_data_iohits")),
        "arc_demand_metadata_hit_ratio": _ratio(arc.get("demand_metadata_hits"), dm, arc.get("demand_metadata_iohits")),
        "innodb_buffer_pool_hit_ratio": (d.get("innodb") or {}).get("buffer_pool_hit_ratio"),
    }
    for k in ("arc_meta_used", "arc_meta_limit", "metadata_size", "c", "size"):
        if arc.get(k) is not None:
            row[f"arc_{k}" if not k.startswith("arc_") else k] = int(arc[k] * factor)
    for dev in devices:
        st = (d.get("devices") or {}).get(dev) or {}
        row[f"{dev}_read_iops"] = _times(st.get("read_iops"), factor)
    row["warmup_s"] = d.get("warmup_s")
    row["window_s"] = w
    return row


def _times(x: Optional[float], factor: float) -> Optional[float]:
    return x * factor if x is not None else None


def _ratio(h: Any, m: Any, io: Any = None) -> Optional[float]:
    if h is None or m is None:
        return None
    t = h + m + (io or 0)
    return h / t if t else None


def advise_arc(runner: Runner, opts: ArcOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    fs = cfg["filesystem"]
    if fs.get("type") != "zfs":
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} runs on {fs.get('type')}, not ZFS: the arc question sizes zfs_arc_max")
    if cfg.get("workload", {}).get("type") != "sysbench":
        raise AdviseError(f"variant {runner.variant}: the arc question needs a sysbench workload (queries per second and misses per query)")
    ram = int(cfg["machine"]["ram_bytes"])
    bp = int((cfg.get("database") or {}).get("innodb_buffer_pool_size") or 0)
    start = int(fs["arc"].get("zfs_arc_max") or ram // 2)
    step = opts.step or _default_step(start)
    if step <= 0:
        raise AdviseError(f"step {step}: a positive size")
    hi_bytes = ram - bp
    hi = hi_bytes // step
    if hi * step >= ram:
        hi -= 1
    lo = 1
    if hi < lo:
        raise AdviseError(f"the machine's RAM ({size_text(ram)}) less the buffer pool ({size_text(bp)}) leaves no zfs_arc_max of {size_text(step)} steps")
    i0 = min(max(round(start / step), lo), hi)
    devices = list(fs.get("vdevs") or [])
    geo = _geometry(cfg)
    l1_blocks = next((lv["blocks"] for lv in geo["levels"] if lv["level"] == 1), 0) if geo else 0
    recordsize = int(fs["recordsize"])
    bp_pages = bp // int(cfg["database"]["innodb_page_size"])
    ri_ns = int(cfg["run"]["report_interval_ns"])

    # The scale of the scaled-down runs.
    tables = int(cfg["dataset"]["tables"])
    k = opts.scale if opts.scale is not None else choose_scale(tables, smallest_arc=i0 * step)
    scale_keys, factor = scaled_point(cfg, k)

    def run_point(index: int, fac: float, keys: dict[str, Any], warm_s: Optional[float], dur: str, role: str) -> tuple[Outcome, dict[str, Any]]:
        value = index * step
        point = {k2: v for k2, v in keys.items()}
        point["filesystem.arc.zfs_arc_max"] = int(value / fac)
        point["run.warmup"] = f"{int(warm_s)}s" if warm_s is not None else opts.warmup
        point["run.duration"] = dur
        dur_ns = _ns(dur)
        if ri_ns > dur_ns:
            point["run.report_interval"] = dur
        where = "full size" if fac == 1 else f"scale 1/{fac:.3g}"
        out = runner.outcome(point, f"zfs_arc_max={size_text(value)} ({where})", slowdown=fac)
        row = _row(out, value, fac, devices)
        row["role"] = role
        return out, row

    # A probe: how fast the workload touches records (demand data accesses per second).
    # Five minutes measured: the ARC's slow cycles average out (at experiment 1's 1 GiB
    # point, metadata fills to arc_meta_limit and is cut back every ~8 minutes, and a
    # one-minute window read qps anywhere from 1,615 to 1,800 on the cycle), so points
    # and the scaled runs' errors compare like with like.
    duration = opts.duration or "300s"
    probe_out, _ = run_point(i0, factor, scale_keys, 0, "30s", "probe")
    if probe_out.refused is not None and factor != 1:
        note(f"the scaled-down run (1/{factor:g}) is refused by the loader ({probe_out.refused}); running at full size")
        k, scale_keys, factor = 1, {}, 1.0
        probe_out, _ = run_point(i0, factor, scale_keys, 0, "30s", "probe")
    if probe_out.refused is not None:
        raise AdviseError(f"the variant's own zfs_arc_max is refused: {probe_out.refused}")
    pa = (probe_out.doc or {}).get("arc") or {}
    # Full-size record reads per second (a scaled probe reads 1/factor as many, of 1/factor the blocks).
    touches = factor * (pa.get("demand_data_hits", 0) + pa.get("demand_data_misses", 0) + pa.get("demand_data_iohits", 0)) / max((probe_out.doc or {}).get("window_s") or 1, 1e-9)
    touches = max(touches, 1.0)

    def warmup_for(value: int, fac: float) -> Optional[float]:
        # The same simulated time at every scale: a scaled run has 1/fac of the blocks
        # and reads them 1/fac as fast.
        if opts.warmup is not None:
            return None
        t_meta = math.log(1000) * l1_blocks / touches
        t_fill = 2 * (bp_pages + value / recordsize) / touches
        return float(max(10, math.ceil(max(t_meta, t_fill) / 10) * 10))

    rows: list[dict[str, Any]] = []
    recs: dict[float, dict[int, dict[str, Any]]] = {}

    def evaluate_at(fac: float, keys: dict[str, Any], role: str) -> Callable[[int], dict[str, Any]]:
        def ev(index: int) -> dict[str, Any]:
            if index in recs.setdefault(fac, {}):
                return recs[fac][index]
            _, row = run_point(index, fac, keys, warmup_for(index * step, fac), duration, role)
            rows.append(row)
            recs[fac][index] = row
            return row

        return ev

    def judge(index: int, records: dict[int, dict[str, Any]]) -> Optional[bool]:
        r = records[index]
        if "refused" in r:
            return None
        best = max((x["qps"] for x in records.values() if "refused" not in x and x.get("qps") is not None), default=0)
        dm = r.get("demand_metadata_misses_per_query")
        return dm is not None and dm <= opts.dm_per_query and r["qps"] >= (1 - opts.qps_tolerance) * best

    notes: list[str] = []
    full = evaluate_at(1.0, {}, "full")
    use_scaled = factor != 1
    scale_report: dict[str, Any] = {"k": k, "factor": round(factor, 3), "used": False}
    if use_scaled:
        scaled = evaluate_at(factor, scale_keys, "scaled")
        # The error of the scaled run, at the start and the next point of the search.
        a = i0
        ra = scaled(a)
        b = min(2 * a, hi) if not judge(a, recs[factor]) else max(a // 2, lo)
        if b == a:
            b = a - 1 if a > lo else a + 1
        errs = []
        for idx in (a, b):
            rs, rf = scaled(idx), full(idx)
            if "refused" in rs or "refused" in rf:
                errs.append({"zfs_arc_max": size_text(idx * step), "refused": rs.get("refused") or rf.get("refused")})
                continue
            errs.append({
                "zfs_arc_max": size_text(idx * step),
                "qps_full": rf["qps"], "qps_scaled": rs["qps"], "qps_rel_err": rel_err(rs["qps"], rf["qps"]),
                "dm_per_query_full": rf["demand_metadata_misses_per_query"], "dm_per_query_scaled": rs["demand_metadata_misses_per_query"],
                "dm_per_query_abs_err": abs(rs["demand_metadata_misses_per_query"] - rf["demand_metadata_misses_per_query"]),
            })
        ok = all("refused" not in e and e["qps_rel_err"] <= opts.scale_qps_tolerance and e["dm_per_query_abs_err"] <= opts.scale_dm_tolerance for e in errs)
        scale_report |= {"errors": errs, "tolerance": {"qps_rel": opts.scale_qps_tolerance, "dm_per_query_abs": opts.scale_dm_tolerance}, "used": ok}
        desc = "; ".join(
            f"at {e['zfs_arc_max']}: refused ({e['refused']})" if "refused" in e else
            f"at {e['zfs_arc_max']}: qps {fmt(e['qps_scaled'])} against {fmt(e['qps_full'])} ({100 * e['qps_rel_err']:.1f}%), "
            f"metadata misses per query {fmt(e['dm_per_query_scaled'], '.3f')} against {fmt(e['dm_per_query_full'], '.3f')}"
            for e in errs
        )
        notes.append(
            f"scaled-down runs: {round(tables / factor)} of {tables} tables with RAM, zfs_arc_max and the buffer pool divided by {factor:.3g}, on a machine {factor:.3g} times slower; "
            f"error against full size {desc}; tolerance qps {100 * opts.scale_qps_tolerance:g}%, misses per query {opts.scale_dm_tolerance:g}: "
            + ("within it, the search runs scaled" if ok else "outside it, the search runs at full size")
        )
        use_scaled = ok
    if use_scaled:
        s = bracket_search(scaled, judge, i0, lo, hi, opts.max_evals, records=recs[factor], confirm_above=True)
        # The answer checked at full size, with the step below it.
        checks = [j for j in (s.answer, (s.answer or 0) - 1) if j is not None and lo <= j <= hi] if s.answer is not None else []
        for j in checks:
            full(j)
        fs_v = {j: judge(j, recs[1.0]) for j in checks}
        confirmed = s.answer is not None and fs_v.get(s.answer) is True and (s.answer - 1 not in fs_v or fs_v[s.answer - 1] is False)
        if s.answer is not None and confirmed:
            notes.append(f"full-size check: {size_text(s.answer * step)} passes and {size_text((s.answer - 1) * step)} fails at full size, as scaled" if s.answer - 1 in fs_v else f"full-size check: {size_text(s.answer * step)} passes at full size")
            final = s
            final_fac = factor
        else:
            notes.append("full-size check disagrees with the scaled search (or it found no answer): the search goes on at full size" if s.answer is not None else "the scaled search found no answer; searching at full size")
            final = bracket_search(full, judge, s.answer or i0, lo, hi, opts.max_evals, records=recs[1.0], confirm_above=True)
            final_fac = 1.0
    else:
        final = bracket_search(full, judge, i0, lo, hi, opts.max_evals, records=recs.get(1.0), confirm_above=True)
        final_fac = 1.0
    notes += final.notes
    for fac, rr in recs.items():
        for j, r in rr.items():
            r["passes"] = judge(j, rr)

    answer_rows = recs[1.0] if final_fac == 1.0 else recs[final_fac]
    ans = final.answer
    criterion = (
        f"the smallest zfs_arc_max (steps of {size_text(step)}, from {size_text(lo * step)} to {size_text(hi * step)}: RAM {size_text(ram)} less the buffer pool "
        f"{size_text(bp)}) with at most {opts.dm_per_query:g} demand metadata misses per query and qps within {100 * opts.qps_tolerance:g}% of the best point seen"
    )
    wl = opts.warmup or "chosen per point"
    settings = {
        "step_bytes": step, "bounds": [size_text(lo * step), size_text(hi * step)], "start": size_text(i0 * step),
        "duration": duration, "warmup": wl, "touches_per_s": round(touches, 1), "l1_blocks": l1_blocks,
        "scale": scale_report, "search_shape": final.shape, "search_evaluations": final.evaluations,
    }
    warm_used = sorted({r.get("warmup_s") for r in rows if r.get("warmup_s") is not None})
    notes.insert(0, f"each point: warm-up {', '.join(f'{w:g}' for w in warm_used)} s (simulated; " + (
        f"ln(1000) x {l1_blocks:,} L1 blocks / {touches:,.0f} record reads per s (full size; the same simulated time at every scale), or twice the time to fill the caches" if opts.warmup is None else "as given") + f"), then {duration} measured; the scenario's own warm-up: {cfg['run']['warmup_ns'] / 1e9:g} s")
    explanation = _explain(ans, answer_rows, step, final, geo, cfg, opts)
    answer = {"zfs_arc_max": size_text(ans * step)} if ans is not None else {}
    return Advice(
        question="arc", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer=answer, points=rows, explanation=explanation, criterion=criterion, notes=notes, settings=settings, x="zfs_arc_max_bytes",
    )


def _ns(text: str) -> int:
    from ..units import parse_duration

    return parse_duration(text)


def _explain(ans: Optional[int], rows: dict[int, dict[str, Any]], step: int, s: Any, geo: Optional[dict[str, Any]], cfg: dict[str, Any], opts: ArcOptions) -> str:
    fs = cfg["filesystem"]
    if ans is None:
        worst = max((r for r in rows.values() if "refused" not in r), key=lambda r: r["zfs_arc_max_bytes"], default=None)
        tail = f" (at {worst['zfs_arc_max']}: {fmt(worst['demand_metadata_misses_per_query'], '.3f')} demand metadata misses per query)" if worst else ""
        return f"No zfs_arc_max up to what the machine leaves beside the buffer pool meets the criterion{tail}: the indirect blocks do not stay cached within that memory."
    r = rows[ans]
    below = rows.get(ans - 1) if (ans - 1) in rows else (rows.get(s.below) if s.below is not None else None)
    meta_binds = below is None or "refused" in below or (below.get("demand_metadata_misses_per_query") or 0) > opts.dm_per_query
    lead = "the indirect blocks stay cached" if meta_binds else (
        f"the ARC holds the records the buffer pool misses (demand data hit ratio {fmt(100 * (r.get('arc_demand_data_hit_ratio') or 0), '.1f')}%) and the indirect blocks"
    )
    parts = [f"From {r['zfs_arc_max']} {lead}: {fmt(r['demand_metadata_misses_per_query'], '.4f')} demand metadata misses per query at {fmt(r['qps'])} queries/s"]
    if below is not None and "refused" not in below:
        if meta_binds:
            parts[0] += (
                f"; below it, at {below['zfs_arc_max']}, each query pays {fmt(below['demand_metadata_misses_per_query'], '.3f')} metadata reads "
                f"({fmt(below['demand_metadata_misses_per_s'])}/s) and the rate is {fmt(below['qps'])} queries/s"
            )
        else:
            best = max(x["qps"] for x in rows.values() if "refused" not in x)
            parts[0] += (
                f"; at {below['zfs_arc_max']} the metadata is cached too ({fmt(below['demand_metadata_misses_per_query'], '.4f')} misses per query) but the rate "
                f"falls to {fmt(below['qps'])} queries/s, {100 * (1 - below['qps'] / best):.1f}% below the best ({fmt(best)}): the ARC's demand data hit ratio "
                f"goes from {fmt(100 * (below.get('arc_demand_data_hit_ratio') or 0), '.1f')}% to {fmt(100 * (r.get('arc_demand_data_hit_ratio') or 0), '.1f')}%, "
                "records the buffer pool misses and the ARC now holds"
            )
    parts[0] += "."
    if geo is not None:
        n_ind = sum(lv["blocks"] for lv in geo["levels"] if lv["level"] >= 1)
        parts.append(
            f"The dataset's {n_ind:,} indirect blocks ({geo['files']} files, {fs['indirect_block_size'] // 1024}K indirect blocks over {fs['recordsize'] // 1024}K records) "
            f"are {human_size(geo['metadata_bytes'])} logical ({100 * geo['metadata_share']:.2f}% of the data); a point select reads its record through them"
        )
    meta = r.get("arc_metadata_size")
    limit = r.get("arc_meta_limit")
    used = r.get("arc_meta_used")
    if meta is not None:
        s2 = f"at {r['zfs_arc_max']} the ARC holds {human_size(meta)} of metadata as stored (metadata_size"
        if used is not None:
            s2 += f"; arc_meta_used {human_size(used)} with headers and dbufs"
        s2 += ")"
        if limit is not None:
            s2 += f", within arc_meta_limit ({human_size(limit)}, 75% of zfs_arc_max in release {fs.get('release')})"
        parts[-1] += "; " + s2 if geo is not None else s2
        if geo is not None and meta < geo["metadata_bytes"]:
            parts[-1] += f": less than the logical {human_size(geo['metadata_bytes'])} because the ARC keeps blocks as they are on disk (compressed)"
    return " ".join(p if p.endswith(".") else p + "." for p in parts)
