"""What every question of ``ztwin advise`` shares: the typed answer (:class:`Advice`), the
runner of points (a variant of a scenario with some keys set, loaded and checked as
``ztwin sweep`` loads its points, each run once and remembered), and the scaled-down run.

The scaled-down run (:func:`scaled_point` and :func:`slowed_config`): sysbench's tables
are identical and accessed uniformly (``rand_type = "uniform"``), so a twin of ``tables /
k`` tables with every memory (RAM, ``zfs_arc_max``, ``innodb_buffer_pool_size``, any ARC
limit the scenario sets) divided by the same ``k``, on a machine ``k`` times slower
(every rate limit divided by ``k``: CPU speed, device IOPS, bandwidth and transfer rate,
the instance's I/O limits; every device latency multiplied by ``k``), sees each table as
the full one does: the same share of each table's blocks cached at each level, and each
block read as often per second, so every time constant of the caches (ARC_MINTIME, the
one-second protection of prefetched and indirect blocks, arc_p's adaptation, zfetch's
stream lifetimes, the buffer pool's innodb_old_blocks_time) meets the same intervals.
Rates come out ``k`` times lower and latencies ``k`` times longer; per-query ratios as at
full size. The run costs about ``1/k`` of the full run's wall time (``k`` times fewer
events over the same simulated time) and memory. Slowing the machine is what makes it
scale: with the full machine's rates, a ``k`` times smaller ARC turns over ``k`` times
faster, and at experiment 1's 2 GiB point the 1/8 run read 0.57 demand metadata misses
per query against 0.33 at full size (0.35 slowed). Where it breaks: the fixed parts of
memory do not scale (ARC headers of the dnodes and the files' tree tops, the 32 MiB floor
of arc_c_min and arc_adapt's 32 MiB growth window, the 64 MiB floor of zfs_arc_max,
arc_meta_min's 16 MiB, the 16 MiB the ARC floats above arc_c before it evicts), so the scale keeps the smallest ARC of the search above 16 times
arc_meta_min (:func:`choose_scale`); nor does an L2ARC (its feed is a rate in bytes per
pass), a device with credits, host caching or seeks, a RAID controller's cache, or a
workload that writes (its background rates, innodb_io_capacity and the txg timer), all
refused (:func:`slowed_config`); nor a workload that is not uniform over the tables. So
its error is measured against full-size runs before it is trusted (see :mod:`.arc`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

from ..exceptions import ScenarioError, ZtwinError

__all__ = ["Advice", "AdviseError", "Runner", "Outcome", "scaled_point", "slowed_config", "choose_scale", "size_text", "per_s"]


class AdviseError(ZtwinError, ValueError):
    """A question that cannot be asked of this scenario or variant (no ZFS for ``arc``, ...)."""


def size_text(n: int) -> str:
    """Bytes as a scenario file takes them ("3GiB", "2.5GiB", "192MiB")."""
    from ..units import format_size

    return format_size(int(n))


def per_s(count: Any, window_s: Any) -> Optional[float]:
    if count is None or not window_s:
        return None
    return count / window_s


@dataclass
class Advice:
    """The answer to one question: the recommended values, the points behind them, the
    mechanism in a sentence, and what it cost."""

    question: str
    scenario: str
    source: str
    variant: str
    #: ``{parameter: value}``, values as a scenario file takes them ("3GiB", "16K", "lz4").
    answer: dict[str, Any]
    #: One dict per run point: the parameter(s), ``qps`` and the question's metrics.
    points: list[dict[str, Any]]
    explanation: str
    #: How the answer was chosen, in words (the criterion and its tolerances).
    criterion: str = ""
    #: Runs of the core this answer cost, and the wall time of the whole question (s).
    runs: int = 0
    wall_s: float = 0.0
    #: Simulated time per point, the scale used, anything the reader should know.
    notes: list[str] = field(default_factory=list)
    #: The settings of the search (warm-up and duration per point, scale, tolerances).
    settings: dict[str, Any] = field(default_factory=dict)
    #: The parameter the curve is drawn against (a column of ``points``).
    x: str = ""
    #: With ``--uncertainty N``: the ensemble's bands and sensitivity (:mod:`.ensemble`).
    uncertainty: Optional[dict[str, Any]] = None

    def frame(self) -> Any:
        """The points as a polars DataFrame, one row per run point."""
        import polars as pl

        if not self.points:
            return pl.DataFrame()
        return pl.from_dicts(self.points, infer_schema_length=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "points": self.points,
            "explanation": self.explanation,
            "criterion": self.criterion,
            "scenario": self.scenario,
            "source": self.source,
            "variant": self.variant,
            "runs": self.runs,
            "wall_s": round(self.wall_s, 3),
            "notes": self.notes,
            "settings": self.settings,
        } | ({"uncertainty": self.uncertainty} if self.uncertainty is not None else {})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def write_report(self, path: Union[str, Path]) -> Path:
        """The HTML page of the answer: its curve with the answer marked, the points, the explanation."""
        from .report import write_advice_report

        return write_advice_report(self, path)


@dataclass
class Outcome:
    """One point's run: the summary document, or the loader's refusal."""

    point: dict[str, Any]
    doc: Optional[dict[str, Any]] = None
    refused: Optional[str] = None
    wall_s: float = 0.0
    config: Optional[dict[str, Any]] = None
    #: The run's time series (columns of equal length), kept when the runner's ``keep_series`` is set.
    series: Optional[dict[str, list[Any]]] = None


class Runner:
    """Runs points of one variant: ``{"dotted.key": value}`` set in the variant last, as
    ``ztwin sweep --set`` does (:class:`ztwin.sweeps.PointLoader`); a value the loader
    refuses is an :class:`Outcome` with ``refused`` (its message), not an error. Each
    distinct point runs once."""

    def __init__(
        self,
        scenario: Union[str, Path, dict[str, Any]],
        variant: Optional[str],
        overrides: Optional[Mapping[str, Any]] = None,
        *,
        memory_check: bool = True,
        fits: Optional[Callable[[dict[str, Any]], bool]] = None,
        question: str = "",
        on_run: Optional[Callable[[str], None]] = None,
        extra: Optional[Mapping[str, Any]] = None,
    ) -> None:
        from ..sweeps import PointLoader

        probe = PointLoader(scenario, None, overrides, memory_check)
        names = probe.names
        if variant is None:
            fitting = [n for n in names if fits is None or fits(probe.given.variants[n])]
            if not fitting:
                raise AdviseError(f"scenario {probe.given.source} has no variant that {question or 'this question'} applies to")
            variant = fitting[0]
        self.loader = PointLoader(scenario, [variant], overrides, memory_check, given=probe.given)
        self.variant = variant
        self.scenario = self.loader.given
        self.config = self.scenario.variants[variant]
        self.memory_check = memory_check
        self.on_run = on_run or (lambda _m: None)
        #: ``{"dotted.key": value}`` set under every point's own keys (an uncertainty member's draws).
        self.extra = dict(extra or {})
        self.cache: dict[str, Outcome] = {}
        self.runs = 0
        self.run_wall_s = 0.0
        #: Keep each run's time series on its :class:`Outcome` (the l2arc question's warm-up).
        self.keep_series = False

    def outcome(self, point: Mapping[str, Any], label: str = "", slowdown: float = 1.0) -> Outcome:
        """``point`` run (once); with ``slowdown`` above 1 on a machine that much slower
        (:func:`slowed_config`: a scaled-down run's)."""
        from .. import run_variant

        key = json.dumps([point, slowdown], sort_keys=True, default=str)
        if key in self.cache:
            return self.cache[key]
        try:
            sc = self.loader.load({**self.extra, **point}, what="advise point")
            if slowdown != 1:
                sc.variants[self.variant] = slowed_config(sc.variants[self.variant], slowdown)
        except (ScenarioError, AdviseError) as e:
            out = Outcome(dict(point), refused=_refusal(e) if isinstance(e, ScenarioError) else str(e))
            self.cache[key] = out
            self.on_run(f"{label or _label(point)}: refused by the loader ({out.refused})")
            return out
        self._check_memory(sc)
        t0 = time.monotonic()
        text = run_variant(sc, self.variant)
        return self._record(key, point, label, sc, text, time.monotonic() - t0)

    def _check_memory(self, sc: Any) -> None:
        from .. import resources

        if self.memory_check:
            est = sc.memory.get(self.variant) or resources.estimate_config(sc.variants[self.variant])
            if est is not None:
                resources.check_memory({self.variant: est}, sc.source)

    def _record(self, key: str, point: Mapping[str, Any], label: str, sc: Any, text: str, wall: float, how: str = "") -> Outcome:
        """A run's result as the point's :class:`Outcome` (cached, counted, said)."""
        doc = json.loads(text)
        series = doc.pop("series", None)
        self.runs += 1
        self.run_wall_s += wall
        out = Outcome(dict(point), doc=doc, wall_s=wall, config=sc.variants[self.variant], series=series if self.keep_series else None)
        self.cache[key] = out
        self.on_run(f"{label or _label(point)}: {doc.get('qps', 0):,.1f} queries/s ({how or f'{wall:.1f} s wall'})")
        return out

    def outcomes(self, points: list[tuple[Mapping[str, Any], str]]) -> list[Outcome]:
        """Each ``(point, label)`` run once as :meth:`outcome` runs it, but the points whose
        runs begin with the same phases run those once (``ztwin.run``'s sharing: the first
        such point's run forks after them and the others go on from there with their own
        config; each result is the one a run of its own gives, byte for byte). Used where
        the points differ only after a warm-up, e.g. log devices of several latencies after
        a read-only warm-up (slog)."""
        from .. import _core, group_configs, share_jobs, split_shared

        outs: dict[int, Outcome] = {}
        loaded: dict[int, tuple[Any, str]] = {}
        for i, (point, label) in enumerate(points):
            key = json.dumps([point, 1.0], sort_keys=True, default=str)
            if key in self.cache:
                outs[i] = self.cache[key]
                continue
            try:
                sc = self.loader.load({**self.extra, **point}, what="advise point")
            except (ScenarioError, AdviseError):
                outs[i] = self.outcome(point, label)  # the refusal, said and cached
                continue
            self._check_memory(sc)
            loaded[i] = (sc, key)
        cfgs = {i: json.dumps(sc.variants[self.variant]) for i, (sc, _) in loaded.items()}
        for leader, followers in group_configs(cfgs):
            sc, key = loaded[leader]
            if not followers:
                outs[leader] = self.outcome(*points[leader])
                continue
            jobs = share_jobs(sc, [self.variant])
            if jobs == 0:
                # Memory holds no snapshot beside the run: each point from its start.
                for i in (leader, *followers):
                    outs[i] = self.outcome(*points[i])
                continue
            t0 = time.monotonic()
            doc, shared = _core.run_shared(cfgs[leader], [cfgs[f] for f in followers], jobs)
            wall = time.monotonic() - t0
            forked, cold = split_shared(followers, shared)
            outs[leader] = self._record(key, points[leader][0], points[leader][1], sc, doc, wall,
                                        f"{wall:.1f} s wall with {len(forked)} point(s) forked from its run")
            for f in followers:
                if f in forked:
                    fsc, fkey = loaded[f]
                    outs[f] = self._record(fkey, points[f][0], points[f][1], fsc, forked[f], 0.0, f"forked from {points[leader][1] or _label(points[leader][0])}'s run")
                else:
                    self.on_run(f"{points[f][1] or _label(points[f][0])}: runs from the start ({cold[f]})")
                    outs[f] = self.outcome(*points[f])
        return [outs[i] for i in range(len(points))]


def _label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items() if not k.startswith("run."))


def _refusal(e: ScenarioError) -> str:
    msgs = [f"{err['loc_str']}: {err['msg']}" for err in e.errors()] if e.errors() else [str(e)]
    return "; ".join(msgs)


# --------------------------------------------------------------------------------------
# The scaled-down run


def choose_scale(tables: int, max_k: int = 8, min_tables: int = 32, smallest_arc: Optional[int] = None) -> int:
    """The default scale: the largest ``k <= max_k`` leaving at least ``min_tables`` tables
    (enough files for per-file effects to average out) and, given the smallest
    ``zfs_arc_max`` the question may run, at least :data:`SCALED_ARC_MIN` of ARC in the
    scaled run (the ARC's fixed floors stay small beside it); 1 when the dataset is
    smaller."""
    k = max(1, min(max_k, tables // min_tables))
    if smallest_arc is not None:
        k = max(1, min(k, smallest_arc // SCALED_ARC_MIN))
    return k


#: The smallest ARC a scaled-down run is given: 16 times arc_meta_min's 16 MiB (0.8, 2.1),
#: which does not scale, nor does the 16 MiB the ARC may float above arc_c before it
#: evicts (arc_is_overflowing). At experiment 1's 1 and 2 GiB points (300 s windows), 1/4
#: was within 0.6% of full size in qps and 0.01 in demand metadata misses per query; 1/8
#: was 0.5% and 3.6% off, 0.06 misses per query at 2 GiB.
SCALED_ARC_MIN = 256 * 2**20


def scaled_point(config: Mapping[str, Any], k: int) -> tuple[dict[str, Any], float]:
    """The keys that make a variant's run ``k`` times smaller (see the module's docs):
    ``dataset.tables`` rounded to the nearest integer, and every memory (``machine.ram``,
    ``database.innodb_buffer_pool_size``, ``filesystem.arc.zfs_arc_max`` and any ARC limit
    set) divided by the factor actually obtained (``tables / scaled tables``). Returns the
    keys and that factor. Refuses a ``k`` below 1 or one that leaves less than one table."""
    if not isinstance(k, int) or k < 1:
        raise AdviseError(f"scale {k!r}: a whole number >= 1")
    ds = config.get("dataset") or {}
    if ds.get("type") != "sysbench":
        raise AdviseError("a scaled-down run needs a sysbench dataset (identical tables)")
    tables = int(ds["tables"])
    if k == 1:
        return {}, 1.0
    scaled = round(tables / k)
    if scaled < 1:
        raise AdviseError(f"scale 1/{k} leaves less than one of the {tables} table(s)")
    factor = tables / scaled
    point: dict[str, Any] = {"dataset.tables": scaled}
    point["machine.ram"] = int(config["machine"]["ram_bytes"] / factor)
    db = config.get("database") or {}
    if db.get("innodb_buffer_pool_size"):
        point["database.innodb_buffer_pool_size"] = int(db["innodb_buffer_pool_size"] / factor)
    fs = config.get("filesystem") or {}
    if fs.get("type") == "zfs":
        arc = fs.get("arc") or {}
        ram = int(config["machine"]["ram_bytes"])
        arc_max = int(arc.get("zfs_arc_max") or ram // 2)
        point["filesystem.arc.zfs_arc_max"] = int(arc_max / factor)
        for key in ("zfs_arc_min", "zfs_arc_meta_limit", "zfs_arc_meta_min"):
            if arc.get(key):
                point[f"filesystem.arc.{key}"] = int(arc[key] / factor)
    return point, factor


def scale_values(point: Mapping[str, Any], factor: float) -> dict[str, Any]:
    """``point``'s memory sizes (bytes) divided by ``factor`` (the keys scaled_point scales)."""
    out = dict(point)
    for key in ("filesystem.arc.zfs_arc_max", "database.innodb_buffer_pool_size", "machine.ram", "filesystem.arc.zfs_arc_min", "filesystem.arc.zfs_arc_meta_limit"):
        if key in out and isinstance(out[key], (int, float)):
            out[key] = int(out[key] / factor)
    return out


#: Tests that only read (the slowed machine does not slow a writer's background rates).
READ_ONLY_TESTS = ("oltp_point_select", "select_random_points", "oltp_read_only")


def slowed_config(config: Mapping[str, Any], factor: float) -> dict[str, Any]:
    """A resolved variant config on a machine ``factor`` times slower (see the module's
    docs): CPU speed, device IOPS, bandwidth and transfer rates and the machine's I/O
    limits divided by ``factor``, device read, write and flush latencies multiplied by
    it. Raises :class:`AdviseError` naming what the slowing would not scale."""
    cfg = json.loads(json.dumps(config))
    if factor == 1:
        return cfg
    if not factor > 1:
        raise AdviseError(f"slow-down factor {factor!r}: a number above 1")
    why: list[str] = []
    wl = cfg.get("workload") or {}
    if wl.get("type") != "sysbench" or wl.get("test") not in READ_ONLY_TESTS:
        why.append(f"the workload {wl.get('test') or wl.get('type')!r} is not one of the read-only sysbench tests ({', '.join(READ_ONLY_TESTS)})")
    if any(p.get("type") == "workload" and p.get("test") not in (None, *READ_ONLY_TESTS) for p in cfg.get("phases") or []):
        why.append("a phase runs a test that writes")
    fs = cfg.get("filesystem") or {}
    if fs.get("cache"):
        why.append("an L2ARC (its feed writes bytes per pass)")
    if cfg.get("controllers"):
        why.append("a RAID controller's cache")
    machine = cfg["machine"]
    if machine.get("host_cache"):
        why.append("the host's cache")
    for d in cfg.get("devices") or []:
        if d.get("burst"):
            why.append(f"device {d['name']}'s burst credits")
        if d.get("host_cache"):
            why.append(f"device {d['name']}'s host caching")
        if d.get("rotational") or d.get("queue_rotational"):
            why.append(f"device {d['name']}'s seeks")
    if why:
        raise AdviseError("a slowed machine would not scale " + "; ".join(why))
    machine["cpu"]["speed"] = machine["cpu"]["speed"] / factor
    for lim in machine.get("io_limits") or []:
        for key in ("iops_limit", "throughput_limit_bytes_per_sec"):
            if lim.get(key) is not None:
                lim[key] = lim[key] / factor
    for d in cfg["devices"]:
        for key in ("iops_limit", "throughput_limit_bytes_per_sec", "transfer_bytes_per_sec"):
            if d.get(key) is not None:
                d[key] = d[key] / factor
        for key in ("read_latency_ns", "write_latency_ns", "flush_latency_ns"):
            if d.get(key):
                d[key] = round(d[key] * factor)
    return cfg


def rel_err(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or not b:
        return None
    return abs(a - b) / abs(b)


def fmt(x: Optional[float], spec: str = ",.1f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)
