"""``ztwin advise l2arc``: does an L2ARC on the variant's cache device pay off, how big,
and how fast must the feed write to it? Runs the variant (a ZFS pool with a cache vdev,
``filesystem.cache``) with its phases as they are (experiment 1 warms it by reading every
table once), measuring the first workload phase.

The points, few because each run replays the whole warm-up (exp1-l2arc: 4.5 simulated
hours of cat, about 80 s of wall time a run):

- no cache device (``filesystem.cache = []``): the rate the L2ARC must beat, with the same
  warm-up phases;
- the device at its full size: what the scenario's device gives;
- the device at 1/2 and 1/4 of its size (``devices.NAME.size``): every block on the L2ARC
  keeps a header in the ARC (``l2_hdr_size``; 0.8's L2-only headers cannot be evicted), so
  a big cache device takes ARC memory from data and metadata, and a smaller one may do as
  well (or better) with fewer headers; it is also fed full sooner;
- at the chosen size, the feed rate ``l2arc_write_max`` (and ``l2arc_write_boost`` alike)
  at 1/2 and 2 times the variant's (the release's default when unset): the feed decides
  how much of the warm-up's reads reach the device and how fast the ring refills as it
  turns; 1/2 shows whether the variant's rate is more than needed, 2 whether a faster
  feed shortens the warm-up. Not run when no size pays.

The answer (:func:`choose_size`, :func:`choose_feed`): the smallest size whose qps is
within 2% of the best size's, when that best beats the run without a cache device by at
least 5% (else "no L2ARC"); then the feed rate with the best qps, ties within 2% going to
the shortest warm-up, then to the slower feed (fewer writes to the device).

The warm-up time (:func:`warmup_time`, from the run's time series): the end of the first
report interval from which the rate stays at or above 90% of its steady value (the
median over the measured window's intervals) through the window, counted from the start
of the run (the warm-up phases included), for queries per second and for the cache
device's reads per second (the L2ARC's hits). A window shorter than the ramp makes the
steady value the ramp's end, and says so.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..units import human_size
from .common import Advice, AdviseError, Runner, fmt, size_text
from .grid import metrics, phase_doc, prepare, throughput_metric

MiB = 2**20


@dataclass
class L2arcOptions:
    #: Cache-device sizes as fractions of the scenario's device (0: no cache device).
    fractions: list[float] = field(default_factory=lambda: [0.0, 1.0, 0.5, 0.25])
    #: Feed rates run at the chosen size, as factors of the variant's l2arc_write_max (1 is the size run itself).
    feed_factors: list[float] = field(default_factory=lambda: [0.5, 2.0])
    #: An L2ARC pays from this relative gain in throughput over no cache device.
    gain: float = 0.05
    #: Points within this share of the best tie.
    tolerance: float = 0.02
    #: The warm-up ends when the rate stays at or above this share of its steady value.
    warm_fraction: float = 0.9
    phase: Optional[str] = None
    warmup: Optional[str] = None
    duration: Optional[str] = None


def fits(config: dict[str, Any]) -> bool:
    fs = config.get("filesystem") or {}
    return fs.get("type") == "zfs" and bool(fs.get("cache"))


def default_write_max(release: str, patch: Optional[int]) -> int:
    """The release's default ``l2arc_write_max`` (and ``l2arc_write_boost``): 8 MiB, 32 MiB
    from 2.2.7 (022bf86370; the core's ``L2arcFeatures::write_default``)."""
    if release == "2.3" or (release == "2.2" and (patch if patch is not None else 11) >= 7):
        return 32 * MiB
    return 8 * MiB


def warmup_time(
    times: Sequence[float],
    values: Sequence[Optional[float]],
    measured: Optional[Sequence[Any]] = None,
    fraction: float = 0.9,
) -> tuple[Optional[float], Optional[float]]:
    """``(warm-up time, steady value)`` of a rate series: the steady value is the median of
    ``values`` over the rows where ``measured`` is true (all rows without it); the warm-up
    is ``times[i]`` of the first row ``i`` from which every row through the last measured
    one is at least ``fraction`` of it. Rows after the measured window (a cut last
    interval) are not judged. ``(None, steady)`` when the rate never stays there; ``(None,
    None)`` when there is no positive steady value (nothing to warm up to)."""
    if not 0 < fraction <= 1:
        raise AdviseError(f"warm-up fraction {fraction!r}: between 0 (excluded) and 1")
    n = min(len(times), len(values))
    rows = list(range(n))
    if measured is not None and any(measured[i] for i in rows):
        last = max(i for i in rows if measured[i])
        window = [values[i] for i in rows if measured[i] and values[i] is not None]
    else:
        last = n - 1
        window = [v for v in values[:n] if v is not None]
    if not window:
        return None, None
    steady = statistics.median(window)
    if not steady or steady <= 0:
        return None, None
    first = None
    for i in range(last, -1, -1):
        v = values[i]
        if v is None or v < fraction * steady:
            break
        first = i
    return (float(times[first]) if first is not None else None), float(steady)


def choose_size(rows: Sequence[Mapping[str, Any]], metric: str, gain: float, tolerance: float) -> tuple[Optional[Mapping[str, Any]], str]:
    """The size answer among ``rows`` (each with ``l2arc_size_bytes``, 0 for no cache
    device, and ``metric``; refused rows skipped): the smallest size within ``tolerance``
    of the best cache size's ``metric`` when that best is at least ``gain`` above the row
    without a cache device; else the row without one (None when it is missing too).
    Returns the row and why, in words."""
    ok = [r for r in rows if "refused" not in r and r.get(metric) is not None]
    base = next((r for r in ok if r["l2arc_size_bytes"] == 0), None)
    cached = [r for r in ok if r["l2arc_size_bytes"] > 0]
    if not cached:
        return base, "no run with a cache device gave a rate"
    best = max(r[metric] for r in cached)
    if base is not None and best < (1 + gain) * base[metric]:
        return base, f"the best cache size is {100 * (best / base[metric] - 1):+.1f}% over no cache device, under the {100 * gain:g}% it must gain"
    tied = [r for r in cached if r[metric] >= (1 - tolerance) * best]
    pick = min(tied, key=lambda r: r["l2arc_size_bytes"])
    return pick, ("the smallest size within " + f"{100 * tolerance:g}% of the best") if len(tied) > 1 else "the best size"


def choose_feed(rows: Sequence[Mapping[str, Any]], metric: str, tolerance: float) -> Optional[Mapping[str, Any]]:
    """The feed-rate answer among ``rows`` (each with ``l2arc_write_max_bytes``,
    ``warmup_qps_s`` and ``metric``): the best ``metric``; rows within ``tolerance`` tie and
    go to the shortest warm-up (not reached counts as the longest), then the slower feed."""
    ok = [r for r in rows if "refused" not in r and r.get(metric) is not None]
    if not ok:
        return None
    best = max(r[metric] for r in ok)
    tied = [r for r in ok if r[metric] >= (1 - tolerance) * best]
    inf = float("inf")
    return min(tied, key=lambda r: (r["warmup_qps_s"] if r.get("warmup_qps_s") is not None else inf, r["l2arc_write_max_bytes"]))


def _round_mib(n: float) -> int:
    return max(MiB, int(n) // MiB * MiB)


def device_sizes(full: int, fractions: Sequence[float]) -> list[int]:
    """The cache-device sizes of ``fractions`` of a device of ``full`` bytes, in the
    order given, distinct: 0 for 0, the device itself for 1, the others rounded down to
    a whole GB when the device is a whole number of GB (as vendors size NVMe: "475GB"),
    else to a whole GiB (a whole MiB below 1 GiB)."""
    out: list[int] = []
    for f in fractions:
        if f == 0:
            n = 0
        elif f == 1:
            n = full
        else:
            x = full * f
            unit = 10**9 if full % 10**9 == 0 and x >= 10**9 else (2**30 if x >= 2**30 else MiB)
            n = max(MiB, int(x) // unit * unit)
        if n not in out:
            out.append(n)
    return out


def size_label(n: int) -> str:
    """A size as a scenario file takes it: whole GB as "237GB", else as :func:`size_text`."""
    return f"{n // 10**9}GB" if n and n % 10**9 == 0 else size_text(n)


def advise_l2arc(runner: Runner, opts: L2arcOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    fs = cfg.get("filesystem") or {}
    if fs.get("type") != "zfs":
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} runs on {fs.get('type')}, not ZFS: an L2ARC is a ZFS pool's cache vdev")
    if not fs.get("cache"):
        raise AdviseError(
            f"variant {runner.variant} of {runner.scenario.source} has no cache device (filesystem.cache is empty): "
            "ask on a variant with one (filesystem.cache = [\"NAME\"] naming a [devices.NAME] with a size)"
        )
    bad = [f for f in opts.fractions if not 0 <= f <= 1]
    if bad or not opts.fractions:
        raise AdviseError(f"l2arc fractions {bad or '(none)'}: each between 0 (no cache device) and 1 (the whole device)")
    if any(not f > 0 for f in opts.feed_factors):
        raise AdviseError(f"l2arc feed factors {opts.feed_factors}: each above 0")
    if len(fs["cache"]) > 1:
        raise AdviseError(
            f"variant {runner.variant} of {runner.scenario.source} has {len(fs['cache'])} cache devices: "
            "advise l2arc sizes one device; ask on a variant with one"
        )
    cache = fs["cache"][0]
    dev = next((d for d in cfg["devices"] if d["name"] == cache), None)
    if dev is None or not dev.get("capacity_bytes"):
        raise AdviseError(f"the cache device {cache!r} has no size: set devices.{cache}.size (the L2ARC's ring is the device)")
    full = int(dev["capacity_bytes"])
    l2 = fs.get("l2arc") or {}
    wmax = int(l2.get("l2arc_write_max") or default_write_max(fs.get("release", "2.2"), fs.get("release_patch")))
    boost = int(l2.get("l2arc_write_boost") or default_write_max(fs.get("release", "2.2"), fs.get("release_patch")))
    runner.keep_series = True
    notes: list[str] = []
    keys, phase, test = prepare(runner, opts.phase, opts.warmup, opts.duration, notes)
    metric = throughput_metric(test) if (cfg.get("workload") or {}).get("type") == "sysbench" else "qps"

    def run(size: int, factor: float, role: str) -> dict[str, Any]:
        point = dict(keys)
        wm, wb = _round_mib(wmax * factor), _round_mib(boost * factor) if boost else 0
        if size == 0:
            point["filesystem.cache"] = []
            label = "no cache device"
        else:
            if size != full:
                point[f"devices.{cache}.size"] = size
            if factor != 1:
                point["filesystem.l2arc.l2arc_write_max"] = wm
                point["filesystem.l2arc.l2arc_write_boost"] = wb
            label = f"cache {human_size(size)}, l2arc_write_max {size_text(wm)}"
        out = runner.outcome(point, label)
        row: dict[str, Any] = {
            "l2arc_size": size_label(size) if size else "no L2ARC",
            "l2arc_size_bytes": size,
            "l2arc_write_max": size_text(wm) if size else None,
            "l2arc_write_max_bytes": wm if size else None,
            "role": role,
        }
        if size and factor != 1:
            row["line"] = "feed rates at the chosen size"
        if out.refused is not None:
            row["refused"] = out.refused
            return row
        d = phase_doc(out, phase)
        row |= metrics(d, out.config or cfg)
        row |= _l2_metrics(d, cache if size else None)
        row |= _warmups(out.series or {}, cache if size else None, phase, d, opts.warm_fraction, notes)
        return row

    size_rows: list[dict[str, Any]] = []
    for size in device_sizes(full, opts.fractions):
        role = "baseline" if size == 0 else ("device" if size == full else f"{size / full:.2g}x size")
        size_rows.append(run(size, 1.0, role))
    pick, why = choose_size(size_rows, metric, opts.gain, opts.tolerance)
    if pick is None:
        refused = "; ".join(f"{r['l2arc_size']}: {r['refused']}" for r in size_rows if "refused" in r)
        raise AdviseError(f"l2arc: no point gave {metric}" + (f" (refused: {refused})" if refused else ""))
    rows = list(size_rows)
    feed_pick: Optional[Mapping[str, Any]] = None
    if pick["l2arc_size_bytes"] > 0:
        feed_rows = [pick]
        for fct in opts.feed_factors:
            if fct == 1:
                continue
            r = run(pick["l2arc_size_bytes"], fct, f"feed x{fct:g}")
            feed_rows.append(r)
            rows.append(r)
        feed_pick = choose_feed(feed_rows, metric, opts.tolerance)
    else:
        notes.append("no cache size pays: the feed rates were not run")
    chosen = feed_pick or pick
    for r in rows:
        r["chosen"] = (r is chosen) if "refused" not in r else None
    if chosen["l2arc_size_bytes"] == 0:
        answer: dict[str, Any] = {"l2arc_size": "no L2ARC"}
    else:
        answer = {"l2arc_size": chosen["l2arc_size"], "l2arc_write_max": chosen["l2arc_write_max"]}
    base = next((r for r in size_rows if r["l2arc_size_bytes"] == 0 and "refused" not in r), None)
    criterion = (
        f"the smallest cache-device size with {metric} within {100 * opts.tolerance:g}% of the best size, when that best is at least "
        f"{100 * opts.gain:g}% above no cache device (else no L2ARC); then the l2arc_write_max (l2arc_write_boost alike) with the best {metric}, "
        f"ties within {100 * opts.tolerance:g}% to the shortest warm-up (the rate staying at {100 * opts.warm_fraction:g}% of its steady value), then the slower feed"
    )
    explanation = _explain(chosen, base, size_rows, metric, why, opts)
    notes.append(f"cache device {cache}: {size_label(full)} ({human_size(full)}); the variant's l2arc_write_max {size_text(wmax)}, l2arc_write_boost {size_text(boost)}")
    return Advice(
        question="l2arc", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer=answer, points=rows, explanation=explanation, criterion=criterion, notes=list(dict.fromkeys(notes)),
        settings={"cache_device": cache, "device_size_bytes": full, "l2arc_write_max_bytes": wmax, "l2arc_write_boost_bytes": boost,
                  "fractions": list(opts.fractions), "feed_factors": list(opts.feed_factors), "metric": metric, "gain": opts.gain,
                  "tolerance": opts.tolerance, "warm_fraction": opts.warm_fraction, "phase": phase, "test": test},
        x="l2arc_size_bytes",
    )


def _l2_metrics(d: Mapping[str, Any], cache: Optional[str]) -> dict[str, Any]:
    """The L2ARC's figures of a (phase) summary: its size (logical and on the device), the
    header memory in the ARC and its share of arc_c, the share of reads each tier served."""
    l2 = d.get("l2arc") or {}
    arc = d.get("arc") or {}
    share = l2.get("read_share") or {}
    row: dict[str, Any] = {
        "l2_size": l2.get("l2_size", 0 if cache is None else None),
        "l2_asize": l2.get("l2_asize", 0 if cache is None else None),
        "l2_hdr_size": l2.get("l2_hdr_size", 0 if cache is None else None),
        "arc_size": arc.get("size"),
        "arc_c": arc.get("c"),
        "l2_hits": l2.get("l2_hits"),
        "read_share_arc": share.get("arc"),
        "read_share_l2arc": share.get("l2arc", 0.0 if cache is None else None),
        "read_share_pool": share.get("pool"),
    }
    if row["l2_hdr_size"] is not None and arc.get("c"):
        row["l2_hdr_share_of_arc_c"] = row["l2_hdr_size"] / arc["c"]
    if cache is not None:
        row["cache_read_iops"] = ((d.get("devices") or {}).get(cache) or {}).get("read_iops")
    return row


def _warmups(series: Mapping[str, Any], cache: Optional[str], phase: Optional[str], d: Mapping[str, Any], fraction: float, notes: list[str]) -> dict[str, Any]:
    t = series.get("time_s") or []
    if not t:
        return {}
    measured = series.get("measured")
    out: dict[str, Any] = {}
    qps = series.get("qps")
    if qps is not None:
        out["warmup_qps_s"], steady = warmup_time(t, qps, measured, fraction)
        if out["warmup_qps_s"] is None and steady:
            notes.append(f"qps did not stay at {100 * fraction:g}% of its steady value within the window at some points (warm-up not reached)")
    # The L2ARC's hits per interval (arcstats l2_hits); the cache device's reads where a
    # series predates that column.
    l2 = series.get("l2_hits") if series.get("l2_hits") is not None else series.get(f"{cache}_read_iops") if cache else None
    if l2 is not None:
        out["warmup_l2_s"], _ = warmup_time(t, l2, measured, fraction)
    ph = series.get("phase")
    if ph is not None and measured is not None:
        first = next((i for i, m in enumerate(measured) if m), None)
        if first is not None:
            idx = ph[first]
            start = next(i for i, p in enumerate(ph) if p == idx)
            out["workload_start_s"] = float(t[start - 1]) if start > 0 else 0.0
    return out


def _explain(c: Mapping[str, Any], base: Optional[Mapping[str, Any]], sizes: Sequence[Mapping[str, Any]], metric: str, why: str, opts: L2arcOptions) -> str:
    unit = "transactions/s" if metric == "tps" else "queries/s"
    pct = lambda x: fmt(100 * x if x is not None else None, ".0f")  # noqa: E731
    hs = lambda n: human_size(n) if n is not None else "-"  # noqa: E731
    b = f"{fmt(base[metric])} {unit} without a cache device (pool {fmt(base.get('read_iops'), ',.0f')} reads/s, CPU {pct(base.get('cpu_utilization'))}%)" if base else "no run without a cache device"
    if c["l2arc_size_bytes"] == 0:
        best = max((r for r in sizes if r["l2arc_size_bytes"] > 0 and r.get(metric) is not None), key=lambda r: r[metric], default=None)
        s = f"No L2ARC: {why}. {b[0].upper() + b[1:]}"
        if best is not None:
            s += (
                f"; with {best['l2arc_size']} of cache device {fmt(best[metric])} {unit}: the L2ARC serves {pct(best.get('read_share_l2arc'))}% of the block reads "
                f"and costs {hs(best.get('l2_hdr_size'))} of L2 headers in the ARC ({pct(best.get('l2_hdr_share_of_arc_c'))}% of arc_c)"
            )
            if (base or {}).get("cpu_utilization", 0) >= 0.95:
                s += "; the CPUs bind already without it, so fewer pool reads cannot raise the rate"
        return s + "."
    gainx = c[metric] / base[metric] if base and base.get(metric) else None
    s = (
        f"With {c['l2arc_size']} of cache device and l2arc_write_max {c['l2arc_write_max']} the L2ARC holds {hs(c.get('l2_size'))} of records "
        f"({hs(c.get('l2_asize'))} on the device) and serves {pct(c.get('read_share_l2arc'))}% of the block reads "
        f"(the ARC {pct(c.get('read_share_arc'))}%, the pool {pct(c.get('read_share_pool'))}% at {fmt(c.get('read_iops'), ',.0f')} reads/s): {fmt(c[metric])} {unit} "
        f"against {b} ({fmt(gainx, '.2f')}x)"
    )
    cpu = c.get("cpu_utilization") or 0
    s += f", where the CPUs bind ({pct(cpu)}%)" if cpu >= 0.95 else ""
    s += f". Its headers take {hs(c.get('l2_hdr_size'))} of ARC memory ({pct(c.get('l2_hdr_share_of_arc_c'))}% of arc_c {hs(c.get('arc_c'))}"
    if (c.get("l2_hdr_size") or 0) > (c.get("arc_c") or 0) * 0.5 and c.get("arc_size") is not None:
        s += f"; the ARC holds {hs(c.get('arc_size'))}"
    s += "), memory the ARC no longer has for data and indirect blocks"
    if c.get("warmup_qps_s") is not None:
        ws = c.get("workload_start_s")
        if ws:
            s += (f"; qps stays at {100 * opts.warm_fraction:g}% of its steady value from {_dur(c['warmup_qps_s'] - ws)} into the workload, "
                  f"{_dur(c['warmup_qps_s'])} after the start (the warm-up phases take {_dur(ws)})")
        else:
            s += f"; qps stays at {100 * opts.warm_fraction:g}% of its steady value from {_dur(c['warmup_qps_s'])} after the start"
    elif c.get("warmup_qps_s") is None and "warmup_qps_s" in c:
        s += f"; qps does not reach {100 * opts.warm_fraction:g}% of its steady value within the window"
    return s + f" (chosen: {why})."


def _dur(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.0f} min"
    return f"{s:.0f} s"
