"""``ztwin advise compression``: the dataset's compression with the best throughput, from
runs with ``off``, ``lz4`` and ``zstd`` (``compressions``; zstd exists from OpenZFS 2.0:
for an older release it is not run, and a value the loader refuses is a refused row).
Each point lays the data out compressed as the property says (a table copied file by
file into a dataset created with it).

The answer: the highest queries per second (transactions per second for a sysbench test
that writes); points within 2% tie and the better compressratio wins them (less disk
and, with compressed ARC, more records in the same ARC). The mechanism read off the
points: compressratio (bytes on disk and in the ARC per byte of data), disk MB/s (fewer
bytes per record read), CPU utilization (compressing at the txg, decompressing each
record read into a dbuf).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .common import Advice, AdviseError, Runner, fmt
from .grid import metrics, phase_doc, pick_best, prepare, throughput_metric

ALGORITHMS = ("off", "lz4", "lzjb", "zstd", "gzip")


@dataclass
class CompressionOptions:
    compressions: list[str] = field(default_factory=lambda: ["off", "lz4", "zstd"])
    tolerance: float = 0.02
    phase: Optional[str] = None
    warmup: Optional[str] = None
    duration: Optional[str] = None


def fits(config: dict[str, Any]) -> bool:
    return (config.get("filesystem") or {}).get("type") == "zfs"


def algorithms(asked: list[str], release: str) -> tuple[list[str], list[str]]:
    """The algorithms to run (in the order asked, distinct) and the notes on those left out."""
    bad = [a for a in asked if a not in ALGORITHMS]
    if bad or not asked:
        raise AdviseError(f"compression {', '.join(bad) or '(none)'}: one of {', '.join(ALGORITHMS)}")
    out = list(dict.fromkeys(asked))
    notes = []
    try:
        major = int(str(release).split(".")[0])
    except ValueError:
        major = 2
    if major < 2 and "zstd" in out:
        out.remove("zstd")
        notes.append(f"zstd not run: it exists from OpenZFS 2.0 (release {release})")
    if not out:
        raise AdviseError(f"no compression asked exists in release {release}")
    return out, notes


def advise_compression(runner: Runner, opts: CompressionOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    fs = cfg["filesystem"]
    if fs.get("type") != "zfs":
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} runs on {fs.get('type')}, not ZFS: compression is a ZFS dataset property")
    notes: list[str] = []
    algs, alg_notes = algorithms(list(opts.compressions), fs.get("release", ""))
    keys, phase, test = prepare(runner, opts.phase, opts.warmup, opts.duration, notes)
    notes += alg_notes
    metric = throughput_metric(test) if cfg["workload"].get("type") == "sysbench" else "qps"
    rows = []
    for i, a in enumerate(algs):
        out = runner.outcome(dict(keys) | {"filesystem.compression": a}, f"compression={a}")
        row: dict[str, Any] = {"compression": a, "order": i}
        if out.refused is not None:
            row["refused"] = out.refused
        else:
            row |= metrics(phase_doc(out, phase), out.config or cfg)
        rows.append(row)
    best, tied = pick_best(rows, metric, opts.tolerance, prefer=lambda r: -(r.get("compressratio") or 1.0))
    if best is None:
        refused = "; ".join(f"{r['compression']}: {r['refused']}" for r in rows if "refused" in r)
        raise AdviseError(f"compression: no point gave {metric}" + (f" (refused: {refused})" if refused else " (a workload without that rate)"))
    for r in rows:
        r["chosen"] = r is best if "refused" not in r else None
    unit = "transactions/s" if metric == "tps" else "queries/s"
    ok = [r for r in rows if "refused" not in r]
    s = f"compression={best['compression']} gives {fmt(best[metric])} {unit}"
    others = [r for r in tied if r is not best]
    if others:
        s += f"; {', '.join(r['compression'] for r in others)} within {100 * opts.tolerance:g}%, the better compressratio taken"
    s += ". " + "; ".join(
        f"{r['compression']}: {fmt(r[metric])} {unit}, compressratio {fmt(r.get('compressratio'), '.2f')}x, "
        f"disk {fmt(r['read_mbps'], ',.1f')} MB/s read in {fmt(r['read_iops'], ',.0f')} reads/s ({fmt(r.get('avg_read_kib'), '.1f')} KiB each) and "
        f"{fmt(r['write_mbps'], ',.1f')} MB/s written, CPU {fmt(100 * (r.get('cpu_utilization') or 0), '.1f')}%"
        for r in ok
    ) + ". "
    s += (
        "A compressed record is fewer bytes to read and write and, with compressed ARC, fewer bytes of ARC; it costs CPU to compress "
        "at the txg and to decompress on each read into a dbuf. When the disk bounds the rate by its IOPS, fewer bytes per read change little; "
        "when the CPU bounds it, the cheaper algorithm wins."
    )
    return Advice(
        question="compression", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer={"compression": best["compression"]}, points=rows, explanation=s,
        criterion=f"the highest {metric} over compression {', '.join(algs)}; points within {100 * opts.tolerance:g}% tie and the better compressratio wins",
        notes=notes, settings={"compressions": algs, "metric": metric, "tolerance": opts.tolerance, "phase": phase, "test": test}, x="compression",
    )
