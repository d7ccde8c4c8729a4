"""``ztwin advise recordsize``: the dataset's recordsize with the best throughput, from runs
at 8K, 16K, 32K, 64K and 128K (``sizes``).

The grid is bounded above by the release's zfs_max_recordsize (1 MiB before 2.2, 16 MiB
from 2.2: a size above it is not run) and by what the loader accepts; a recordsize below
the database's page size is run but said (each page then spans several records). Every
point lays the data out at its recordsize, as a table copied file by file into a dataset
created with it (recordsize applies to new files only).

The answer: the highest queries per second (transactions per second for a sysbench test
that writes), points within 2% of it tie and the smaller recordsize wins them (less read
and write per page, less read-modify-write). The explanation is read off the points: the
average device read (each buffer-pool miss that misses the ARC costs a record read of
recordsize), the ARC's demand data hit ratio (the ARC caches whole records, so a page's
neighbours in the same record come free when the access pattern reuses them), the
compressratio (larger records compress better) and, for writes, the write amplification
(a page written into a bigger record rewrites the whole record at the txg, and reads it
first when it is not cached).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..units import parse_size
from .common import Advice, AdviseError, Runner, fmt, size_text
from .grid import metrics, phase_doc, pick_best, prepare, throughput_metric

KiB = 1024


@dataclass
class RecordsizeOptions:
    #: The recordsizes to run (sizes as a scenario takes them).
    sizes: list[Any] = field(default_factory=lambda: ["8K", "16K", "32K", "64K", "128K"])
    #: Points within this share of the best throughput tie; the smaller recordsize wins.
    tolerance: float = 0.02
    #: The measured phase (default: the variant's first workload phase).
    phase: Optional[str] = None
    warmup: Optional[str] = None
    duration: Optional[str] = None


def fits(config: dict[str, Any]) -> bool:
    return (config.get("filesystem") or {}).get("type") == "zfs"


def max_recordsize(release: str) -> int:
    """zfs_max_recordsize's default: 16 MiB from 2.2, 1 MiB before."""
    try:
        major, minor = (int(x) for x in str(release).split(".")[:2])
    except ValueError:
        return 16 * 2**20
    return 16 * 2**20 if (major, minor) >= (2, 2) else 2**20


def grid(sizes: list[Any], release: str, page_size: Optional[int]) -> tuple[list[int], list[str]]:
    """The recordsizes to run (bytes, ascending, distinct) and the notes on the bounds."""
    notes = []
    try:
        vals = sorted({parse_size(s) for s in sizes})
    except (ValueError, TypeError) as e:
        raise AdviseError(f"recordsize sizes {sizes!r}: {e}") from None
    if not vals:
        raise AdviseError("recordsize: no sizes to run")
    cap = max_recordsize(release)
    over = [v for v in vals if v > cap]
    if over:
        notes.append(f"not run: {', '.join(size_text(v) for v in over)} above zfs_max_recordsize ({size_text(cap)} in release {release})")
        vals = [v for v in vals if v <= cap]
    if not vals:
        raise AdviseError(f"every recordsize asked is above release {release}'s zfs_max_recordsize ({size_text(cap)})")
    if page_size:
        small = [v for v in vals if v < page_size]
        if small:
            notes.append(
                f"{', '.join(size_text(v) for v in small)} is below the InnoDB page size ({size_text(page_size)}): allowed, "
                f"but each page then spans {page_size // small[0]} records (a page read is that many record reads unless they are cached)"
            )
    return vals, notes


def advise_recordsize(runner: Runner, opts: RecordsizeOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    fs = cfg["filesystem"]
    if fs.get("type") != "zfs":
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} runs on {fs.get('type')}, not ZFS: recordsize is a ZFS dataset property")
    page = int((cfg.get("database") or {}).get("innodb_page_size") or 0) or None
    notes: list[str] = []
    sizes, bound_notes = grid(opts.sizes, fs.get("release", ""), page)
    keys, phase, test = prepare(runner, opts.phase, opts.warmup, opts.duration, notes)
    notes += bound_notes
    metric = throughput_metric(test) if cfg["workload"].get("type") == "sysbench" else "qps"
    writes = metric == "tps"
    rows = []
    for v in sizes:
        point = dict(keys)
        point["filesystem.recordsize"] = v
        out = runner.outcome(point, f"recordsize={size_text(v)}")
        row: dict[str, Any] = {"recordsize": size_text(v), "recordsize_bytes": v}
        if out.refused is not None:
            row["refused"] = out.refused
        else:
            row |= metrics(phase_doc(out, phase), out.config or cfg)
            if not writes:
                for k in ("write_amplification", "db_written_mb", "device_written_mb"):
                    row.pop(k, None)
        rows.append(row)
    best, tied = pick_best(rows, metric, opts.tolerance, prefer=lambda r: r["recordsize_bytes"])
    if best is None:
        refused = "; ".join(f"{r['recordsize']}: {r['refused']}" for r in rows if "refused" in r)
        raise AdviseError(f"recordsize: no point gave {metric}" + (f" (refused: {refused})" if refused else " (a workload without that rate)"))
    for r in rows:
        r["chosen"] = r is best if "refused" not in r else None
    criterion = (
        f"the highest {'transactions' if writes else 'queries'} per second ({metric}) over recordsize "
        f"{', '.join(size_text(v) for v in sizes)}; points within {100 * opts.tolerance:g}% of the best tie and the smaller recordsize wins"
    )
    own = int(fs["recordsize"])
    explanation = _explain(rows, best, tied, metric, own, page, writes)
    return Advice(
        question="recordsize", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer={"recordsize": best["recordsize"]}, points=rows, explanation=explanation, criterion=criterion, notes=notes,
        settings={"sizes": [size_text(v) for v in sizes], "metric": metric, "tolerance": opts.tolerance, "phase": phase, "test": test},
        x="recordsize_bytes",
    )


def _explain(rows: list[dict[str, Any]], best: dict[str, Any], tied: list[dict[str, Any]], metric: str, own: int, page: Optional[int], writes: bool) -> str:
    ok = [r for r in rows if "refused" not in r]
    unit = "transactions/s" if writes else "queries/s"
    worst = min(ok, key=lambda r: r[metric])
    parts = [f"{best['recordsize']} gives {fmt(best[metric])} {unit}"]
    if len(ok) > 1:
        parts[0] += f", {best[metric] / worst[metric]:.2f}x the worst point ({worst['recordsize']}, {fmt(worst[metric])})" if worst[metric] else ""
    others = [r for r in tied if r is not best]
    if others:
        parts[0] += f"; {', '.join(r['recordsize'] for r in others)} within the tolerance, the smaller recordsize taken"
    ownr = next((r for r in ok if r["recordsize_bytes"] == own), None)
    if ownr is not None and ownr is not best and ownr[metric]:
        parts[0] += f"; the variant's own {ownr['recordsize']}: {fmt(ownr[metric])} ({best[metric] / ownr[metric]:.2f}x)"
    parts[0] += "."

    def per_op(r: dict[str, Any]) -> Optional[float]:
        return r["read_iops"] / r[metric] if r.get(metric) else None

    cmp = [r for r in (ownr, best) if r is not None]
    if ownr is best or ownr is None:
        cmp = sorted({id(r): r for r in (ok[0], best, ok[-1])}.values(), key=lambda r: r["recordsize_bytes"])
    else:
        cmp = sorted(cmp, key=lambda r: r["recordsize_bytes"])
    reads = "; ".join(
        f"at {r['recordsize']} {fmt(r['read_iops'], ',.0f')} reads/s of {fmt(r.get('avg_read_kib'), '.1f')} KiB on average "
        f"({fmt(per_op(r), '.2f')} per {'transaction' if writes else 'query'}), ARC demand data hit ratio {fmt(100 * (r.get('arc_demand_data_hit_ratio') or 0), '.1f')}%, "
        f"compressratio {fmt(r.get('compressratio'), '.2f')}x"
        for r in cmp
    )
    parts.append(
        "A buffer-pool miss that the ARC misses costs a record read of recordsize, and the ARC caches whole records, "
        "so the other pages of a record come free when the workload reads them while it is cached; larger records compress better: " + reads + "."
    )
    if page and any(r["recordsize_bytes"] < page for r in ok):
        parts.append(f"Below the {size_text(page)} page, each page read needs {page // min(r['recordsize_bytes'] for r in ok)} records.")
    if writes:
        wa = "; ".join(f"{r['recordsize']} {fmt(r.get('write_amplification'), '.2f')}" for r in cmp)
        parts.append(
            "Writes: a page written into a record rewrites the whole record at the transaction group (read first when it is not cached: "
            "read-modify-write), so the devices write more per byte the database writes as records grow; write amplification "
            "(device bytes written / Innodb_data_written): " + wa + "."
        )
    return " ".join(parts)
