"""``ztwin advise memory-split``: a fixed RAM split between the InnoDB buffer pool and the
ARC, from 10% to 90% of what the two caches may have, the ARC the rest; the answer is the
split with the best queries per second.

What the two caches may have: the machine's RAM less a reserve (``reserve``; default 10%
of RAM, at least 1 GiB) for what lives outside them: the kernel and its slabs, the
server's memory beside the buffer pool (connection buffers, the dictionary, the log
buffer, the buffer pool's own page descriptors, about 5% of it) and ZFS's memory beside
the ARC; the twin models no memory pressure, so a split of the whole RAM would look
runnable when no real host could run it. The loader holds every point to ARC + buffer
pool within RAM and to its ARC bounds (zfs_arc_max of at least 64 MiB, above arc_c_min in
0.8); a point it refuses is a refused row.

The grid: buffer pools of 10, 30, 50, 70 and 90% (``shares``) of that, rounded to 128 MiB
(MySQL rounds innodb_buffer_pool_size to a multiple of its 128 MiB chunk), or the sizes
given (``buffer_pools``: "12G vs 6G + 6G of ARC" is ``reserve = RAM - 12G`` and
``buffer_pools = ["12G", "6G"]``); zfs_arc_max is the rest, at least 64 MiB (said when
that exceeds the budget).

The mechanism: the buffer pool holds pages decompressed and a hit costs no system call;
the ARC holds records as stored (compressed) and the file system's metadata (the indirect
blocks a read walks through), and with primarycache=all a page read from disk enters both,
so memory given to the ARC partly caches pages the buffer pool already holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..units import parse_size
from .common import Advice, AdviseError, Runner, fmt, size_text
from .grid import metrics, phase_doc, pick_best, prepare, throughput_metric

MiB = 2**20
GiB = 2**30
ARC_FLOOR = 64 * MiB
CHUNK = 128 * MiB


@dataclass
class MemorySplitOptions:
    #: RAM kept outside the two caches (size); None: 10% of RAM, at least 1 GiB.
    reserve: Optional[Any] = None
    #: Shares of (RAM - reserve) for the buffer pool.
    shares: list[float] = field(default_factory=lambda: [0.1, 0.3, 0.5, 0.7, 0.9])
    #: Buffer-pool sizes to run instead of the shares (the ARC gets the rest).
    buffer_pools: Optional[list[Any]] = None
    #: Points within this share of the best tie; the larger buffer pool wins them (a hit there
    #: costs no system call and no decompression).
    tolerance: float = 0.01
    phase: Optional[str] = None
    warmup: Optional[str] = None
    duration: Optional[str] = None


def fits(config: dict[str, Any]) -> bool:
    return (config.get("filesystem") or {}).get("type") == "zfs" and (config.get("database") or {}).get("type") == "innodb"


def default_reserve(ram: int) -> int:
    return max(GiB, ram // 10)


def arc_floor(release: str, ram: int) -> int:
    """The smallest zfs_arc_max the release takes: 64 MiB; before 2.1 also above arc_c_min,
    max(RAM/32, 32 MiB) (arc_tuning_update ignores a smaller one; the loader refuses it)."""
    try:
        major, minor = (int(x) for x in str(release).split(".")[:2])
    except ValueError:
        return ARC_FLOOR
    if (major, minor) < (2, 1):
        c_min = max(ram // 32, 32 * MiB)
        return max(ARC_FLOOR, (c_min // MiB + 1) * MiB)
    return ARC_FLOOR


def split_grid(ram: int, reserve: Optional[int], shares: list[float], buffer_pools: Optional[list[int]] = None, floor: int = ARC_FLOOR) -> tuple[list[tuple[int, int]], int, list[str]]:
    """The points: ``[(buffer pool, zfs_arc_max)]`` in bytes (buffer pool ascending,
    distinct), the budget (RAM less the reserve) and notes. zfs_arc_max is the rest of the
    budget, raised to ``floor`` (:func:`arc_floor`) and said. Refuses a reserve that leaves
    no budget, shares outside (0, 1) and buffer pools above the budget."""
    res = default_reserve(ram) if reserve is None else reserve
    budget = ram - res
    notes = []
    if budget < CHUNK + ARC_FLOOR:
        raise AdviseError(f"RAM {size_text(ram)} less the reserve {size_text(res)} leaves {size_text(max(budget, 0))}: too little for a buffer pool of 128 MiB and an ARC of 64 MiB")
    if buffer_pools:
        bps = sorted(set(buffer_pools))
        bad = [b for b in bps if b <= 0 or b > budget]
        if bad:
            raise AdviseError(f"buffer pool(s) {', '.join(size_text(b) for b in bad)}: not within the budget of {size_text(budget)} (RAM {size_text(ram)} less the reserve {size_text(res)})")
    else:
        bad_s = [s for s in shares if not 0 < s < 1]
        if bad_s or not shares:
            raise AdviseError(f"shares {shares!r}: each strictly between 0 and 1")
        bps = sorted({max(CHUNK, round(s * budget / CHUNK) * CHUNK) for s in shares})
        bps = [b for b in bps if b < budget]
    points = []
    for b in bps:
        arc = (budget - b) // MiB * MiB
        if arc < floor:
            notes.append(f"buffer pool {size_text(b)}: zfs_arc_max at the smallest the release takes, {size_text(floor)} ({size_text(floor - arc)} over the budget)")
            arc = floor
        points.append((b, arc))
    return points, budget, notes


def advise_memory_split(runner: Runner, opts: MemorySplitOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    fs = cfg["filesystem"]
    if fs.get("type") != "zfs":
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} runs on {fs.get('type')}, not ZFS: memory-split divides RAM between the buffer pool and the ARC")
    if (cfg.get("database") or {}).get("type") != "innodb":
        raise AdviseError(f"variant {runner.variant}: memory-split needs a database with a buffer pool (an innodb [database])")
    ram = int(cfg["machine"]["ram_bytes"])
    try:
        reserve = None if opts.reserve is None else parse_size(opts.reserve)
        bps = None if opts.buffer_pools is None else [parse_size(b) for b in opts.buffer_pools]
    except (ValueError, TypeError) as e:
        raise AdviseError(f"memory-split: {e}") from None
    notes: list[str] = []
    points, budget, grid_notes = split_grid(ram, reserve, list(opts.shares), bps, arc_floor(fs.get("release", ""), ram))
    res = ram - budget
    keys, phase, test = prepare(runner, opts.phase, opts.warmup, opts.duration, notes)
    notes.append(
        f"RAM {size_text(ram)}, reserve {size_text(res)} "
        + ("(given)" if reserve is not None else "(10% of RAM, at least 1 GiB: the kernel, the server's memory beside the buffer pool, ZFS's beside the ARC; the twin models no memory pressure)")
        + f": {size_text(budget)} for the buffer pool and the ARC"
    )
    notes += grid_notes
    metric = throughput_metric(test) if cfg["workload"].get("type") == "sysbench" else "qps"
    own = (int(cfg["database"].get("innodb_buffer_pool_size") or 0), int(fs["arc"].get("zfs_arc_max") or 0))
    rows = []
    for bp, arc in points:
        point = dict(keys)
        point["database.innodb_buffer_pool_size"] = bp
        point["filesystem.arc.zfs_arc_max"] = arc
        out = runner.outcome(point, f"buffer pool {size_text(bp)}, zfs_arc_max {size_text(arc)}")
        row: dict[str, Any] = {
            "innodb_buffer_pool_size": size_text(bp), "zfs_arc_max": size_text(arc),
            "innodb_buffer_pool_size_bytes": bp, "zfs_arc_max_bytes": arc, "buffer_pool_share": round(bp / budget, 3),
        }
        if out.refused is not None:
            row["refused"] = out.refused
        else:
            m = metrics(phase_doc(out, phase), out.config or cfg)
            if metric == "qps":
                for k in ("write_amplification", "db_written_mb", "device_written_mb"):
                    m.pop(k, None)
            row |= m
        rows.append(row)
    cold = _cold(rows, cfg)
    if cold:
        notes.append(cold)
    best, _ = pick_best(rows, metric, opts.tolerance, prefer=lambda r: -r["innodb_buffer_pool_size_bytes"])
    if best is None:
        refused = "; ".join(f"{r['innodb_buffer_pool_size']}: {r['refused']}" for r in rows if "refused" in r)
        raise AdviseError(f"memory-split: no point gave {metric}" + (f" (refused: {refused})" if refused else " (a workload without that rate)"))
    for r in rows:
        r["chosen"] = r is best if "refused" not in r else None
    criterion = (
        f"the highest {metric} over buffer pools of {', '.join(r['innodb_buffer_pool_size'] for r in rows)} "
        f"with zfs_arc_max the rest of {size_text(budget)} (RAM {size_text(ram)} less {size_text(res)}); points within "
        f"{100 * opts.tolerance:g}% of the best tie and the larger buffer pool wins"
    )
    return Advice(
        question="memory-split", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer={"innodb_buffer_pool_size": best["innodb_buffer_pool_size"], "zfs_arc_max": best["zfs_arc_max"]},
        points=rows, explanation=_explain(rows, best, metric, fs, own), criterion=criterion, notes=notes,
        settings={"ram": size_text(ram), "reserve": size_text(res), "budget": size_text(budget), "metric": metric, "phase": phase, "test": test},
        x="innodb_buffer_pool_size_bytes",
    )


def _cold(rows: list[dict[str, Any]], cfg: dict[str, Any]) -> Optional[str]:
    """A warning when the warm-up is shorter than the time to fill the caches (the smaller
    of both caches and the dataset) at the disk's measured read rate: the points are then
    compared part cold, and the split matters less than it will once warm."""
    from .. import _core

    ds = cfg.get("dataset") or {}
    if ds.get("type") != "sysbench":
        return None
    data = _core.sysbench_table_bytes(ds["table_size"], cfg["database"]["innodb_page_size"]) * int(ds["tables"])
    slow = []
    for r in rows:
        if "refused" in r or not r.get("read_mbps"):
            continue
        fill = min(r["innodb_buffer_pool_size_bytes"] + r["zfs_arc_max_bytes"], data) / (r["read_mbps"] * 1e6)
        if fill > (r.get("warmup_s") or 0):
            slow.append((r["innodb_buffer_pool_size"], fill))
    if not slow:
        return None
    w = rows[0].get("warmup_s") if "warmup_s" in rows[0] else next((r.get("warmup_s") for r in rows if "warmup_s" in r), None)
    worst = max(f for _b, f in slow)
    return (
        f"the caches may not be warm: at the measured read rate, filling them (or the {size_text(data)} dataset) takes up to {worst:,.0f} s "
        f"against a warm-up of {fmt(w, 'g')} s at {len(slow)} of the points; a longer --warmup compares them warm"
    )


def _explain(rows: list[dict[str, Any]], best: dict[str, Any], metric: str, fs: dict[str, Any], own: tuple[int, int]) -> str:
    ok = [r for r in rows if "refused" not in r]
    unit = "transactions/s" if metric == "tps" else "queries/s"

    def desc(r: dict[str, Any]) -> str:
        per = r["read_iops"] / r[metric] if r.get(metric) else None
        return (
            f"{r['innodb_buffer_pool_size']} + {r['zfs_arc_max']}: {fmt(r[metric])} {unit}, buffer pool hit ratio "
            f"{fmt(100 * (r.get('innodb_buffer_pool_hit_ratio') or 0), '.1f')}%, ARC hit ratio {fmt(100 * (r.get('arc_hit_ratio') or 0), '.1f')}%, "
            f"{fmt(r['read_iops'], ',.0f')} disk reads/s ({fmt(per, '.2f')} per {'transaction' if metric == 'tps' else 'query'}, "
            f"of which {fmt(r.get('demand_metadata_misses_per_query'), '.2f')} per query for indirect blocks the ARC misses)"
        )

    lo, hi = ok[0], ok[-1]
    s = f"Buffer pool {best['innodb_buffer_pool_size']} and zfs_arc_max {best['zfs_arc_max']} give the most {unit}. "
    s += "; ".join(desc(r) for r in sorted({id(r): r for r in (lo, best, hi)}.values(), key=lambda r: r["innodb_buffer_pool_size_bytes"])) + ". "
    near = [r for r in ok if r is not best and r[metric] >= 0.98 * best[metric]]
    if near:
        s += f"Within 2% of it: {', '.join(r['innodb_buffer_pool_size'] for r in near)} of buffer pool. "
    if all(r.get("read_iops", 1) < 1 for r in ok):
        s += "Every split holds the whole working set (no disk reads): the split does not matter here beyond the CPU a buffer-pool hit saves. "
    ownr = next((r for r in ok if (r["innodb_buffer_pool_size_bytes"], r["zfs_arc_max_bytes"]) == own), None)
    if ownr is None and own[0]:
        s += f"(The variant's own split is {size_text(own[0])} + {size_text(own[1])}.) "
    cr = best.get("compressratio")
    s += (
        "The buffer pool holds pages decompressed and a hit costs no system call; the ARC holds records as stored "
        f"(compressratio {fmt(cr, '.2f')}x here, so a byte of ARC holds {fmt(cr, '.2f')} bytes of pages) and the indirect blocks every read walks through"
    )
    if fs.get("primarycache", "all") == "all":
        s += "; with primarycache=all every page read from disk enters both caches, so part of the ARC holds pages the buffer pool already has and serves only what the buffer pool evicts"
    elif fs.get("primarycache") == "metadata":
        s += "; with primarycache=metadata the ARC caches only metadata, so memory beyond what the indirect blocks need is wasted in it"
    return s + "."
