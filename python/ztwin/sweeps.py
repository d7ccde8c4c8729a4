"""Sweeps: one scenario run over a grid of scenario keys, each point a run of the chosen variants.

    ztwin sweep scenarios/exp7-lab-sysbench.toml --variant zfs-300 \\
        --set filesystem.arc.zfs_arc_max=256M,512M,1G --set workload.threads=4,8 --out out/

A ``--set KEY=V1,V2,...`` names a scenario key as it is written in TOML, dotted
(``filesystem.arc.zfs_arc_max``, ``database.innodb_buffer_pool_size``,
``devices.disk.iops_limit``), and its values; each value is read as the scenario file
would read it (``300`` an integer, ``0.5`` a float, ``true`` a boolean, ``"lz4"`` or
``16K`` a string, which the scenario's own types then parse as a size, a duration, ...).
The grid is the product of the keys' values (the last key varies fastest). Each point is
the scenario with those keys set in every variant, last (as ``ztwin run --duration`` sets
``run.duration``), and every point is loaded and checked by the scenario loader before
anything runs: a bad value is the loader's usual error, naming the key as written, with
the point that carries it.

Each (point, variant) is one task: :func:`ztwin.run_variant` on that point's resolved
variant, answering the core's JSON document. On Ray (``pip install 'ztwin[sweep]'``) the
tasks run in parallel, on a local cluster started for the sweep (``num_cpus`` the
workers, no dashboard, quiet, shut down after) or on an existing one (``ray_address``;
ztwin must be installed on its nodes). Without Ray they run in-process, one after
another; the results are the same (each run is deterministic from its config and seed),
and rows come in the grid's order however the tasks finish.

:meth:`Sweep.frame` is the results, one row per point, variant and phase (columns in
:data:`COLUMNS_DOC`); :meth:`Sweep.write` writes ``results.parquet``, ``sweep.json``
(every run's whole document, series included: ``ztwin report DIR`` reads it) and
``report.html``.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from .exceptions import ScenarioError, ZtwinError

__all__ = [
    "Sweep",
    "SweepError",
    "parse_set",
    "parse_value",
    "grid",
    "run_sweep",
    "PointLoader",
    "sweep",
    "metrics_row",
    "COLUMNS_DOC",
    "SWEEP_SCHEMA_VERSION",
]

#: Version of ``sweep.json`` (raised when a key changes meaning or goes).
SWEEP_SCHEMA_VERSION = 1


class SweepError(ZtwinError, ValueError):
    """A sweep that cannot run as asked: a bad ``--set``, an unavailable backend."""


# --------------------------------------------------------------------------------------
# --set KEY=V1,V2,...


def parse_value(text: str) -> Any:
    """One value as a scenario file reads it: a TOML value (``300``, ``0.5``, ``true``,
    ``"lz4"``, ``[1, 2]``), else the text as a string (``16K``, ``1G``, ``lz4``, ``none``:
    the scenario's types parse sizes, durations and rates from strings)."""
    t = text.strip()
    try:
        return tomllib.loads(f"v = {t}")["v"]
    except tomllib.TOMLDecodeError:
        return t


def _split_values(text: str) -> list[str]:
    """Splits on commas outside brackets and quotes (``[1,2],[3,4]`` is two values)."""
    out, cur, depth, quote = [], [], 0, ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "[{":
            depth += 1
            cur.append(ch)
        elif ch in "]}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [v.strip() for v in out]


def parse_set(text: str) -> tuple[str, list[Any]]:
    """``KEY=V1,V2,...`` as ``(KEY, [values])``; a :class:`SweepError` names what is wrong."""
    key, sep, rest = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise SweepError(f"--set {text!r}: expected KEY=V1,V2,... (a dotted scenario key, e.g. filesystem.arc.zfs_arc_max=1G,2G)")
    _check_key(key)
    texts = _split_values(rest)
    if not rest.strip():
        raise SweepError(f"--set {key}: no values (KEY=V1,V2,...)")
    if any(not t for t in texts):
        raise SweepError(f"--set {key}: an empty value in {rest!r}")
    values = [parse_value(t) for t in texts]
    seen: list[Any] = []
    for t, v in zip(texts, values):
        if any(type(v) is type(s) and v == s for s in seen):
            raise SweepError(f"--set {key}: the value {t} is given twice")
        seen.append(v)
    return key, values


def _check_key(key: str) -> None:
    parts = key.split(".")
    if any(not p.strip() for p in parts):
        raise SweepError(f"--set {key}: not a dotted scenario key (an empty part)")
    if parts[0] in ("variants", "name"):
        raise SweepError(f"--set {key}: a sweep sets keys of every variant; {parts[0]!r} cannot be swept (pick the variants with --variant)")


def _normalize_sets(sets: Union[Mapping[str, Sequence[Any]], Iterable[Union[str, tuple[str, Sequence[Any]]]]]) -> list[tuple[str, list[Any]]]:
    """``{"key": [v...]}``, ``["key=v1,v2", ...]`` or ``[("key", [v...])]`` as a list of pairs."""
    items: list[tuple[str, list[Any]]] = []
    if isinstance(sets, Mapping):
        raw: Iterable[Any] = sets.items()
    else:
        raw = sets
    for item in raw:
        if isinstance(item, str):
            items.append(parse_set(item))
            continue
        key, values = item
        key = str(key).strip()
        _check_key(key)
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            values = [values]
        vals = list(values)
        if not vals:
            raise SweepError(f"--set {key}: no values")
        items.append((key, vals))
    if not items:
        raise SweepError("a sweep needs at least one --set KEY=V1,V2,...")
    keys = [k for k, _ in items]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise SweepError(f"--set {dup[0]}: given more than once (give its values once, comma-separated)")
    for a in keys:
        for b in keys:
            if a != b and b.startswith(a + "."):
                raise SweepError(f"--set {a} and --set {b}: one key contains the other")
    return items


def grid(sets: Union[Mapping[str, Sequence[Any]], Iterable[Any]]) -> list[dict[str, Any]]:
    """The points of a grid, in order: the product of the keys' values, the last key fastest."""
    items = _normalize_sets(sets)
    keys = [k for k, _ in items]
    return [dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in items))]


def _nested(point: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b.c": v}`` as ``{"a": {"b": {"c": v}}}``."""
    out: dict[str, Any] = {}
    for key, value in point.items():
        parts = key.split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = copy.deepcopy(value)
    return out


def _merge(a: dict[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _label(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in point.items())


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    return json.dumps(v) if isinstance(v, (list, dict)) else str(v)


# --------------------------------------------------------------------------------------
# The result


#: The columns of :meth:`Sweep.frame` (and ``results.parquet``), documented once.
COLUMNS_DOC = """\
point          the point's index in the grid (0-based; the last key varies fastest)
KEY ...        one column per swept key, named as written (filesystem.arc.zfs_arc_max),
               holding the value as given (a string for sizes such as "1G"; a number or
               boolean as TOML reads it; the text when a key's values mix types)
variant        the scenario's variant
phase, type    the phase's name and type (workload, fio, cat, restart, tune; null for
               a run without phases)
start_s, end_s the phase's simulated start and end (s)
window_s       the measured window (s)
qps, tps       queries and transactions per second over the window
queries        queries completed in the window
latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_max_ms
               statement latency percentiles over the window (ms; null with no query)
cpu_utilization  share of all vCPUs busy (0..1)
innodb_buffer_pool_hit_ratio, innodb_pages_read
arc_hit_ratio  ARC hits / (hits + misses + iohits) over the window (0..1; ZFS only)
arc_demand_data_hit_ratio, arc_demand_metadata_hit_ratio   the same for demand reads
arc_hits, arc_misses, arc_demand_data_misses, arc_demand_metadata_misses   counts
arc_size, arc_c, arc_data_size, arc_metadata_size   bytes at the window's end
l2arc_l2_hits, l2arc_l2_misses, l2arc_l2_size   the L2ARC's arcstats (where a cache device is)
DEVICE_read_iops, DEVICE_write_iops, DEVICE_read_mbps, DEVICE_write_mbps,
DEVICE_utilization   per device of the variant, named as in the scenario (MB/s: 10^6 B/s)
compressratio  the data records' compression ratio (ZFS)
fio_read_iops, fio_read_bw_mbps, fio_read_clat_p95_ms, fio_read_clat_p99_ms,
fio_write_iops, fio_write_bw_mbps, fio_write_clat_p99_ms   a fio phase's figures
innodb_pages_flushed, innodb_log_writes, innodb_os_log_fsyncs, zil_commits,
txgs_synced    write-path counters over the window, where the run writes
A figure a row lacks is null; a column no row has is left out."""

# (column, path in the phase's document); devices are added per device.
_PLAIN: list[tuple[str, tuple[str, ...]]] = [
    ("window_s", ("window_s",)),
    ("qps", ("qps",)),
    ("tps", ("tps",)),
    ("queries", ("queries",)),
    ("latency_p50_ms", ("latency_ms", "p50")),
    ("latency_p95_ms", ("latency_ms", "p95")),
    ("latency_p99_ms", ("latency_ms", "p99")),
    ("latency_max_ms", ("latency_ms", "max")),
    ("cpu_utilization", ("cpu_utilization",)),
    ("innodb_buffer_pool_hit_ratio", ("innodb", "buffer_pool_hit_ratio")),
    ("innodb_pages_read", ("innodb", "pages_read")),
]
_ARC_COUNTS = ["hits", "misses", "demand_data_misses", "demand_metadata_misses"]
_ARC_BYTES = ["size", "c", "data_size", "metadata_size"]
_L2 = ["l2_hits", "l2_misses", "l2_size"]
_DEV = ["read_iops", "write_iops", "read_mbps", "write_mbps", "utilization"]
_FIO: list[tuple[str, tuple[str, ...]]] = [
    ("fio_read_iops", ("fio", "read", "iops")),
    ("fio_read_bw_mbps", ("fio", "read", "bw_mbps")),
    ("fio_read_clat_p95_ms", ("fio", "read", "clat_ms", "p95")),
    ("fio_read_clat_p99_ms", ("fio", "read", "clat_ms", "p99")),
    ("fio_write_iops", ("fio", "write", "iops")),
    ("fio_write_bw_mbps", ("fio", "write", "bw_mbps")),
    ("fio_write_clat_p99_ms", ("fio", "write", "clat_ms", "p99")),
]
_WRITES: list[tuple[str, tuple[str, ...]]] = [
    ("innodb_pages_flushed", ("innodb", "Innodb_buffer_pool_pages_flushed")),
    ("innodb_log_writes", ("innodb", "Innodb_log_writes")),
    ("innodb_os_log_fsyncs", ("innodb", "Innodb_os_log_fsyncs")),
    ("zil_commits", ("zil", "zil_commit_count")),
    ("txgs_synced", ("txg", "txgs_synced")),
]


def _get(d: Any, path: Sequence[str]) -> Any:
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def _ratio(h: Any, *rest: Any) -> Optional[float]:
    if h is None or any(r is None for r in rest[:1]):
        return None
    total = h + sum(r or 0 for r in rest)
    return h / total if total else None


def metrics_row(phase: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics a DBA plots, from one phase's document (or a run's without phases):
    the columns of :data:`COLUMNS_DOC` after ``start_s``/``end_s``, only those present."""
    row: dict[str, Any] = {}
    for col, path in _PLAIN:
        row[col] = _get(phase, path)
    arc = phase.get("arc")
    if isinstance(arc, Mapping):
        row["arc_hit_ratio"] = _ratio(arc.get("hits"), arc.get("misses"), arc.get("iohits"))
        row["arc_demand_data_hit_ratio"] = _ratio(arc.get("demand_data_hits"), arc.get("demand_data_misses"), arc.get("demand_data_iohits"))
        row["arc_demand_metadata_hit_ratio"] = _ratio(arc.get("demand_metadata_hits"), arc.get("demand_metadata_misses"), arc.get("demand_metadata_iohits"))
        for k in _ARC_COUNTS + _ARC_BYTES:
            row[f"arc_{k}"] = arc.get(k)
    l2 = phase.get("l2arc")
    if isinstance(l2, Mapping):
        for k in _L2:
            row[f"l2arc_{k}"] = l2.get(k)
    for dev, st in (phase.get("devices") or {}).items():
        for k in _DEV:
            row[f"{dev}_{k}"] = _get(st, (k,))
    if "compressratio" in phase:
        row["compressratio"] = phase.get("compressratio")
    for col, path in _FIO + _WRITES:
        v = _get(phase, path)
        if v is not None:
            row[col] = v
    return row


def _phases(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(doc.get("phases") or [{k: v for k, v in doc.items() if k != "series"}])


@dataclass
class Sweep:
    """The outcome of a sweep: the grid, and each (point, variant) run's whole document."""

    scenario: str
    source: str
    description: str
    keys: list[str]
    points: list[dict[str, Any]]
    variants: list[str]
    #: ``runs[i][variant]``: the core's document of point ``i``'s run of ``variant`` (series included).
    runs: list[dict[str, dict[str, Any]]]
    #: ``configs[i][variant]``: the resolved config the point ran.
    configs: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    #: ``"ray"`` or ``"in-process"``.
    backend: str = "in-process"

    def _key_columns(self) -> dict[str, list[Any]]:
        cols: dict[str, list[Any]] = {}
        for k in self.keys:
            vals = [p[k] for p in self.points]
            kinds = {type(v) for v in vals}
            if kinds <= {int, float} and kinds:
                vals = [float(v) for v in vals] if float in kinds else vals
            elif len(kinds) != 1 or kinds & {list, dict}:
                vals = [_text(v) for v in vals]
            cols[k] = vals
        return cols

    def frame(self) -> Any:
        """One row per point, variant and phase, in the grid's order (see :data:`COLUMNS_DOC`)."""
        import polars as pl

        keycols = self._key_columns()
        rows: list[dict[str, Any]] = []
        for i, point in enumerate(self.points):
            for name in self.variants:
                doc = self.runs[i][name]
                for p in _phases(doc):
                    row: dict[str, Any] = {"point": i}
                    for k in self.keys:
                        row[k] = keycols[k][i]
                    row |= {"variant": name, "phase": p.get("name"), "type": p.get("type"), "start_s": p.get("start_s"), "end_s": p.get("end_s")}
                    row |= metrics_row(p)
                    rows.append(row)
        if not rows:
            return pl.DataFrame({"point": []}, schema={"point": pl.Int64})
        df = pl.from_dicts(rows, infer_schema_length=None)
        # A column no row has (e.g. latency of a fio-only scenario) says nothing.
        fixed = {"point", "variant", "phase", "type", "start_s", "end_s", *self.keys}
        return df.select([c for c in df.columns if c in fixed or df[c].null_count() < df.height])

    def to_dict(self) -> dict[str, Any]:
        """Everything, as ``sweep.json`` holds it."""
        return {
            "schema_version": SWEEP_SCHEMA_VERSION,
            "kind": "ztwin-sweep",
            "scenario": self.scenario,
            "source": self.source,
            "description": self.description,
            "keys": self.keys,
            "points": self.points,
            "variants": self.variants,
            "backend": self.backend,
            "runs": self.runs,
            "configs": self.configs,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sweep":
        try:
            return cls(
                scenario=d["scenario"], source=d.get("source", ""), description=d.get("description", ""), keys=list(d["keys"]),
                points=list(d["points"]), variants=list(d["variants"]), runs=list(d["runs"]), configs=list(d.get("configs") or []),
                backend=d.get("backend", "in-process"),
            )
        except (KeyError, TypeError) as e:
            raise SweepError(f"not a ztwin sweep document (missing {e})") from None

    def write(self, directory: Union[str, Path], report: bool = True, png_dir: Optional[Union[str, Path]] = None) -> dict[str, Path]:
        """Writes ``results.parquet``, ``sweep.json`` and (with ``report``) ``report.html``
        into ``directory``; with ``png_dir`` each figure as PNG there. Returns the paths."""
        d = Path(directory)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepError(f"cannot create {d}: {e.strerror}") from None
        paths = {"results": d / "results.parquet", "sweep": d / "sweep.json"}
        self.frame().write_parquet(paths["results"])
        paths["sweep"].write_text(json.dumps(self.to_dict()))
        if report:
            from . import html_report

            paths["report"] = d / "report.html"
            html_report.write_sweep_report(self, paths["report"], png_dir=png_dir)
        return paths


# --------------------------------------------------------------------------------------
# Running


def _run_task(scenario: Any, name: str) -> str:
    """One task: one point's variant through :func:`ztwin.run_variant` (the core's JSON)."""
    from . import run_variant

    return run_variant(scenario, name)


def _run_group_task(leader: str, followers: list[str], jobs: int) -> list[str]:
    """One task of a shared group (resolved configs as JSON): the leader's run, each
    follower forked after the phases it shares (``ztwin.run``'s sharing), the ones the
    fork's check turned away run from their start; the core's JSON of each, in order."""
    from . import _core, split_shared

    doc, outcomes = _core.run_shared(leader, followers, jobs)
    forked, cold = split_shared(list(range(len(followers))), outcomes)
    return [doc] + [forked[k] if k in forked else _core.run_variant(cfg) for k, cfg in enumerate(followers)]


class PointLoader:
    """Loads points of a sweep (or of ``ztwin advise``'s searches): the scenario as given
    (with ``overrides``, the run's ``--duration`` and the like, set in every variant), cut
    to the variants ``names`` (all by default), then each point's keys set in them, last;
    every point is validated, resolved and checked by the core as a scenario file is. A
    bad value is the loader's error, prefixed by the point (``sweep point 2 of 3
    (filesystem.arc.zfs_arc_max=1G)``)."""

    def __init__(
        self,
        scenario: Union[str, Path, dict[str, Any]],
        names: Optional[Iterable[str]] = None,
        overrides: Optional[Mapping[str, Any]] = None,
        memory_check: bool = True,
        given: Any = None,
    ) -> None:
        from . import select_variants
        from .scenario import load_scenario

        self.base = dict(overrides or {})
        self.memory_check = memory_check
        # ``given``: the scenario already loaded with the same overrides (each variant
        # built by the core's check costs up to a second for a large one).
        if given is None:
            given = load_scenario(scenario, overrides=self.base or None, memory_check=memory_check)
        self.given = given
        self.names = select_variants(given, names)
        raw = copy.deepcopy(given.raw)
        if raw.get("variants"):
            raw["variants"] = {n: v for n, v in raw["variants"].items() if n in self.names}
        self.raw = raw
        self.base_dir = Path(scenario).resolve().parent if isinstance(scenario, (str, Path)) else None

    def load(self, point: Mapping[str, Any], index: int = 0, total: int = 1, what: str = "sweep point") -> Any:
        """The :class:`~ztwin.scenario.Scenario` of ``point`` (``{"dotted.key": value}``)."""
        from .scenario.load import _validate

        try:
            return _validate(self.raw, self.given.source, _merge(self.base, _nested(point)), self.base_dir, memory_check=self.memory_check)
        except ScenarioError as e:
            hint = ""
            if any(err["loc"][:1] == ("variants",) for err in e.errors()):
                hint = "\n(a sweep sets its keys in every variant it runs; choose the variants with --variant)"
            raise ScenarioError(f"{what} {index + 1} of {total} ({_label(point)}): {e}{hint}", errors=e.errors()) from None


def _ray_module() -> Any:
    try:
        import ray  # type: ignore[import-not-found]
    except ImportError:
        return None
    return ray


def run_sweep(
    scenario: Union[str, Path, dict[str, Any], None],
    sets: Union[Mapping[str, Sequence[Any]], Iterable[Any]],
    variants: Optional[Iterable[str]] = None,
    *,
    overrides: Optional[Mapping[str, Any]] = None,
    use_ray: Optional[bool] = None,
    ray_address: Optional[str] = None,
    workers: Optional[int] = None,
    memory_check: bool = True,
    on_note: Optional[Callable[[str], None]] = None,
    on_done: Optional[Callable[[int, int, str], None]] = None,
    share: bool = True,
) -> Sweep:
    """Runs a sweep and returns the :class:`Sweep` (the CLI's ``ztwin sweep``).

    ``sets`` is ``{"key": [values]}`` or ``["key=v1,v2", ...]``; ``overrides`` a table set
    in every point first (``{"run": {"duration": "5s"}}``). ``use_ray``: None runs on Ray
    when it is installed (else in-process, with a note to ``on_note``), True requires
    Ray, False runs in-process. ``ray_address`` connects to an existing cluster (implies
    Ray). ``workers`` bounds the local cluster's CPUs (default: the machine's).
    ``on_done(done, total, label)`` is called as each task ends. With ``share`` (the
    default), tasks whose runs begin with the same phases run them once, as
    :func:`ztwin.run` does (:func:`ztwin.share_groups`: e.g. a log device's latency swept
    after a read-only warm-up); a shared group is one task (on Ray, its followers run
    after its leader); the results are the same. Every point is loaded
    and checked before any runs; errors are :class:`~ztwin.exceptions.ScenarioError`
    (a bad value, named by its key, with its point) or :class:`SweepError`.
    """
    from . import resources
    from .scenario import DEFAULT_SCENARIO

    note = on_note or (lambda _m: None)
    if workers is not None and workers < 1:
        raise SweepError(f"--workers {workers}: at least 1")
    points = grid(sets)
    keys = list(points[0])
    src = scenario if scenario is not None else DEFAULT_SCENARIO
    base = dict(overrides or {})

    # The scenario as given (with the run's overrides), then every point of the chosen
    # variants loaded and checked (schema, resolution, the core's build) before any runs.
    loader = PointLoader(src, names=variants, overrides=base, memory_check=memory_check)
    names = loader.names
    loaded = [loader.load(point, i, len(points)) for i, point in enumerate(points)]
    ray = None
    if ray_address is not None or use_ray is not False:
        ray = _ray_module()
        if ray is None and (use_ray or ray_address is not None):
            raise SweepError("Ray is not installed (pip install 'ztwin[sweep]'); without --ray the sweep runs in-process")
        if ray is None:
            note("Ray is not installed: running the points in-process, one after another (pip install 'ztwin[sweep]' runs them in parallel)")
    tasks = [(i, n) for i in range(len(points)) for n in names]
    if memory_check:
        avail = resources.available_memory()
        share = avail // (workers or os.cpu_count() or 1) if (ray is not None and avail is not None and ray_address is None) else avail
        for sc in loaded:
            est = {n: sc.memory.get(n) or resources.estimate_config(sc.variants[n]) for n in names}
            resources.check_memory({n: e for n, e in est.items() if e is not None}, sc.source, available=share)
    answers: dict[tuple[int, str], str] = {}
    label = lambda t: f"{_label(points[t[0]])} / {t[1]}"  # noqa: E731
    groups: list[tuple[tuple[int, str], list[tuple[int, str]]]] = [(t, []) for t in tasks]
    if share and len(tasks) > 1:
        # Tasks whose runs begin with the same phases run them once (ztwin.run's sharing).
        from . import group_configs

        groups = group_configs({t: json.dumps(loaded[t[0]].variants[t[1]]) for t in tasks})
        for leader, followers in groups:
            if followers:
                note(f"{', '.join(label(f) for f in followers)}: the first phases from {label(leader)}'s run (forked after them)")
    if ray is None:
        from . import share_jobs

        k = 0
        for leader, followers in groups:
            if followers:
                jobs = share_jobs(loaded[leader[0]], [leader[1]])
                if jobs == 0:  # memory holds no snapshot beside the run
                    for t in (leader, *followers):
                        answers[t] = _run_task(loaded[t[0]], t[1])
                else:
                    docs = _run_group_task(json.dumps(loaded[leader[0]].variants[leader[1]]), [json.dumps(loaded[f[0]].variants[f[1]]) for f in followers], jobs)
                    answers.update(zip([leader, *followers], docs))
            else:
                answers[leader] = _run_task(loaded[leader[0]], leader[1])
            for t in [leader, *followers]:
                k += 1
                if on_done:
                    on_done(k, len(tasks), label(t))
        backend = "in-process"
    else:
        answers = _run_on_ray(ray, loaded, groups, ray_address, workers, on_done, label)
        backend = "ray"
    runs = [{n: json.loads(answers[(i, n)]) for n in names} for i in range(len(points))]
    configs = [{n: loaded[i].variants[n] for n in names} for i in range(len(points))]
    first = loaded[0]
    return Sweep(first.name, first.source, first.description, keys, points, names, runs, configs, backend)


def _run_on_ray(
    ray: Any,
    loaded: list[Any],
    groups: list[tuple[tuple[int, str], list[tuple[int, str]]]],
    address: Optional[str],
    workers: Optional[int],
    on_done: Optional[Callable[[int, int, str], None]],
    label: Callable[[tuple[int, str]], str],
) -> dict[tuple[int, str], str]:
    import logging

    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False, configure_logging=True)
        if address is None:
            ncpu = workers or os.cpu_count() or 1
            # A local cluster of its own (never one RAY_ADDRESS points at), bounded and small.
            kwargs |= dict(address="local", num_cpus=ncpu, object_store_memory=80 * 2**20)
        else:
            kwargs["address"] = address
        try:
            ray.init(**kwargs)
        except Exception as e:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
            where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
            raise SweepError(f"cannot start or reach {where}: {type(e).__name__}: {e}") from None
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_run_task)
        # A shared group is one task of one CPU: its followers run after its leader (jobs 1).
        remote_group = ray.remote(num_cpus=1, max_retries=0)(_run_group_task)
        refs = {}
        for leader, followers in groups:
            if followers:
                cfg = lambda t: json.dumps(loaded[t[0]].variants[t[1]])  # noqa: E731
                refs[(leader, *followers)] = remote_group.remote(cfg(leader), [cfg(f) for f in followers], 1)
            else:
                refs[(leader,)] = remote.remote(loaded[leader[0]], leader[1])
        total = sum(1 + len(f) for _, f in groups)
        pending = list(refs.values())
        by_ref = {r: ts for ts, r in refs.items()}
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for t in by_ref[ready[0]]:
                done += 1
                if on_done:
                    on_done(done, total, label(t))
        out = {}
        for ts, r in refs.items():
            try:
                docs = ray.get(r)
            except Exception as e:  # noqa: BLE001 - a task's error comes back wrapped
                cause = getattr(e, "cause", None)
                if isinstance(cause, ZtwinError):
                    raise cause from None
                raise
            out.update(zip(ts, docs) if len(ts) > 1 else [(ts[0], docs)])
        return out
    finally:
        if started:
            ray.shutdown()


def sweep(
    scenario: Union[str, Path, dict[str, Any], None],
    sets: Union[Mapping[str, Sequence[Any]], Iterable[Any]],
    variants: Optional[Iterable[str]] = None,
    *,
    duration: Optional[str] = None,
    warmup: Optional[str] = None,
    report_interval: Optional[str] = None,
    seed: Optional[int] = None,
    out: Optional[Union[str, Path]] = None,
    use_ray: Optional[bool] = None,
    ray_address: Optional[str] = None,
    workers: Optional[int] = None,
    memory_check: bool = True,
    share: bool = True,
) -> Any:
    """Runs ``scenario`` over the grid ``sets`` and returns the results as a polars frame,
    one row per point, variant and phase (columns: :data:`COLUMNS_DOC`)::

        ztwin.sweep("scenarios/exp7-lab-sysbench.toml",
                    {"filesystem.arc.zfs_arc_max": ["256M", "1G"], "workload.threads": [4, 8]},
                    variants=["zfs-300"], duration="10s", warmup="0s")

    ``duration``, ``warmup``, ``report_interval`` and ``seed`` override the scenario's as ``ztwin run``'s options
    do; with ``out`` the directory gets ``results.parquet``, ``sweep.json`` and
    ``report.html``. The rest as :func:`run_sweep`.
    """
    overrides: dict[str, Any] = {}
    if seed is not None:
        overrides["seed"] = seed
    run = {k: v for k, v in {"duration": duration, "warmup": warmup, "report_interval": report_interval}.items() if v is not None}
    if run:
        overrides["run"] = run
    note = lambda m: print(f"note: {m}", file=sys.stderr)  # noqa: E731
    sw = run_sweep(scenario, sets, variants, overrides=overrides, use_ray=use_ray, ray_address=ray_address, workers=workers, memory_check=memory_check, on_note=note, share=share)
    if out is not None:
        sw.write(out)
    return sw.frame()
