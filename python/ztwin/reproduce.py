"""``ztwin reproduce``: the bundled experiments beside the real outcomes they were measured at.

Each :class:`Outcome` is one real figure (a value, or the range of repeated runs) with
where it comes from, the bundled scenario and variant that model it, and how to read the
twin's figure from that variant's summary. :func:`reproduce` runs every scenario it needs
once (only the variants needed) and pairs the two; the table is how a user decides how far
to trust the twin, figure by figure.

The figures are those the project was given for calibration (experiments 3, 6, 7 and 8:
the 2013 fio write-up and the 2026 lab runs on OpenZFS 2.2.11) and the outcomes experiment
1's write-up (2018) published. Other measured outcomes are held out on purpose: a match on
them is the test that the mechanisms carry over, so they are not listed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Union

from .bench import scenario_path

Real = Union[float, tuple[float, float]]
Variants = dict[str, dict[str, Any]]

EXP1 = "exp1: 2018 write-up (AWS i3.large, gp2, ZoL 0.7)"
EXP3 = "exp3: 2013 write-up (FreeBSD 8.3, fio)"
LAB = "lab run 2026 (OpenZFS 2.2.11)"


@dataclass(frozen=True)
class Outcome:
    """One real figure and how to read the twin's."""

    experiment: int
    figure: str
    real: Real
    unit: str
    source: str
    scenario: str
    variant: str
    twin: Callable[[Variants], Optional[float]]

    @property
    def real_mid(self) -> float:
        return (self.real[0] + self.real[1]) / 2 if isinstance(self.real, tuple) else float(self.real)

    def real_text(self) -> str:
        if isinstance(self.real, tuple):
            return f"{format_figure(self.real[0])} - {format_figure(self.real[1])}"
        return format_figure(self.real)


def format_figure(x: Optional[float]) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


# --- readers of a variant's summary ---------------------------------------------------------


def _phase(v: dict[str, Any], name: str) -> dict[str, Any]:
    for p in v.get("phases", []):
        if p.get("name") == name:
            return p
    raise KeyError(f"phase {name!r} not in the variant's summary")


def _ratio(num: float, den: float) -> Optional[float]:
    return num / den if den else None


def _fio_read(variant: str, phase: str, key: str) -> Callable[[Variants], Optional[float]]:
    return lambda vs: ((_phase(vs[variant], phase).get("fio") or {}).get("read") or {}).get(key)


def _mean(readers: Iterable[Callable[[Variants], Optional[float]]], scale: float = 1.0) -> Callable[[Variants], Optional[float]]:
    """The mean of several figures (None if any is missing), scaled (e.g. to MB)."""
    rs = tuple(readers)

    def read(vs: Variants) -> Optional[float]:
        xs = [r(vs) for r in rs]
        return None if any(x is None for x in xs) else sum(xs) / len(xs) / scale  # type: ignore[arg-type]

    return read


def _phase_arc(variant: str, phase: str, key: str) -> Callable[[Variants], Optional[float]]:
    return lambda vs: (_phase(vs[variant], phase).get("arc") or {}).get(key)


def _phase_hit_ratio(variant: str, phase: str) -> Callable[[Variants], Optional[float]]:
    """arcstats hits / (hits + misses) over the run (2.2's iohits count as accesses)."""

    def read(vs: Variants) -> Optional[float]:
        a = _phase(vs[variant], phase).get("arc") or {}
        h, m = a.get("hits", 0), a.get("misses", 0) + a.get("iohits", 0)
        return _ratio(h, h + m)

    return read


def _get(variant: str, *path: str, scale: float = 1.0) -> Callable[[Variants], Optional[float]]:
    def read(vs: Variants) -> Optional[float]:
        x: Any = vs[variant]
        for k in path:
            x = x.get(k) if isinstance(x, dict) else None
            if x is None:
                return None
        return x / scale

    return read


def _reads_per_query(variant: str, device: str) -> Callable[[Variants], Optional[float]]:
    return lambda vs: _ratio(vs[variant]["devices"][device]["read_iops"], vs[variant]["qps"])


def _demand_data_hit(variant: str) -> Callable[[Variants], Optional[float]]:
    def read(vs: Variants) -> Optional[float]:
        a = vs[variant].get("arc") or {}
        h = a.get("demand_data_hits", 0)
        return _ratio(h, h + a.get("demand_data_misses", 0) + a.get("demand_data_iohits", 0))

    return read


def _avg_read_kib(variant: str, device: str) -> Callable[[Variants], Optional[float]]:
    def read(vs: Variants) -> Optional[float]:
        d = vs[variant]["devices"][device]
        return _ratio(d["read_mbps"] * 1e6 / 1024, d["read_iops"])

    return read


def _bp_misses_per_query(variant: str) -> Callable[[Variants], Optional[float]]:
    return lambda vs: _ratio(vs[variant]["innodb"]["pages_read"], vs[variant]["queries"])


def _quotient(a: Callable[[Variants], Optional[float]], b: Callable[[Variants], Optional[float]]):
    def read(vs: Variants) -> Optional[float]:
        x, y = a(vs), b(vs)
        return None if x is None or y is None else _ratio(x, y)

    return read


# --- the outcomes ---------------------------------------------------------------------------

EXP3_SCENARIO = "exp3-fio-compression.toml"
EXP6_SCENARIO = "exp6-lab.toml"
EXP7_SCENARIO = "exp7-lab-sysbench.toml"
EXP8_SCENARIO = "exp8-lab-recordsize.toml"
EXP1_SCENARIO = "exp1-arc-sizing.toml"


def _exp3() -> list[Outcome]:
    out = []
    per_run = {
        "MB/s": ([20.1, 36.2, 40.4, 47.8, 58.3], "bw_mbps"),
        "IOPS": ([160, 289, 323, 382, 466], "iops"),
    }
    for i in range(5):
        run = f"randread-{i + 1}"
        for unit, (vals, key) in per_run.items():
            out.append(Outcome(3, f"overwritten, {run}: fio read", vals[i], unit, EXP3, EXP3_SCENARIO, "overwritten", _fio_read("overwritten", run, key)))
        out.append(Outcome(3, f"overwritten, {run}: ARC hit ratio", [0.15, 0.51, 0.56, 0.63, 0.69][i], "ratio", EXP3, EXP3_SCENARIO, "overwritten", _phase_hit_ratio("overwritten", run)))
        out.append(Outcome(3, f"overwritten, {run}: mru_hits", [856, 6060, 5504, 1348, 1761][i], "count", EXP3, EXP3_SCENARIO, "overwritten", _phase_arc("overwritten", run, "mru_hits")))
        out.append(Outcome(3, f"overwritten, {run}: mfu_hits", [646, 2790, 5289, 12992, 17633][i], "count", EXP3, EXP3_SCENARIO, "overwritten", _phase_arc("overwritten", run, "mfu_hits")))
    seq = [f"read-{i}" for i in range(1, 6)]
    rnd = [f"randread-{i}" for i in range(1, 6)]
    out += [
        Outcome(3, "as laid out (holes): read, mean of 5 runs", 2458.4, "MB/s", EXP3, EXP3_SCENARIO, "as-laid-out", _mean(_fio_read("as-laid-out", n, "bw_mbps") for n in seq)),
        Outcome(3, "as laid out (holes): randread, mean of 5 runs", 2337.8, "MB/s", EXP3, EXP3_SCENARIO, "as-laid-out", _mean(_fio_read("as-laid-out", n, "bw_mbps") for n in rnd)),
        Outcome(3, "overwritten: read, mean of 5 runs", 897.4, "MB/s", EXP3, EXP3_SCENARIO, "overwritten", _mean(_fio_read("overwritten", n, "bw_mbps") for n in seq)),
        Outcome(3, "overwritten: randread, mean of 5 runs", 40.6, "MB/s", EXP3, EXP3_SCENARIO, "overwritten", _mean(_fio_read("overwritten", n, "bw_mbps") for n in rnd)),
    ]
    return out


def _exp6() -> list[Outcome]:
    v, runs = "randread-3000", ("run-1", "run-2", "run-3")
    return [
        Outcome(6, "randread at 3000 IOPS, end of run: metadata_size", 20.5, "MB", LAB, EXP6_SCENARIO, v, _mean((_phase_arc(v, n, "metadata_size") for n in runs), 1e6)),
        Outcome(6, "randread at 3000 IOPS, end of run: data_size", (240, 252), "MB", LAB, EXP6_SCENARIO, v, _mean((_phase_arc(v, n, "data_size") for n in runs), 1e6)),
        Outcome(6, "randread at 3000 IOPS, end of run: hdr_size", (5.4, 5.6), "MB", LAB, EXP6_SCENARIO, v, _mean((_phase_arc(v, n, "hdr_size") for n in runs), 1e6)),
    ]


def _exp7() -> list[Outcome]:
    return [
        Outcome(7, "lz4 on the tables (zfs get compressratio)", 1.01, "ratio", LAB, EXP7_SCENARIO, "zfs-300", _get("zfs-300", "compressratio")),
        Outcome(7, "ZFS at 300 IOPS: throughput", (358, 395), "queries/s", LAB, EXP7_SCENARIO, "zfs-300", _get("zfs-300", "qps")),
        Outcome(7, "ext4 at 300 IOPS: throughput", (328, 336), "queries/s", LAB, EXP7_SCENARIO, "ext4-300", _get("ext4-300", "qps")),
        Outcome(7, "ZFS at 300 IOPS: disk reads per query", (0.73, 0.75), "reads", LAB, EXP7_SCENARIO, "zfs-300", _reads_per_query("zfs-300", "disk")),
        Outcome(7, "ext4 at 300 IOPS: disk reads per query", 0.90, "reads", LAB, EXP7_SCENARIO, "ext4-300", _reads_per_query("ext4-300", "disk")),
        Outcome(7, "ZFS at 3000 IOPS (CPU bound): throughput", 700, "queries/s", LAB, EXP7_SCENARIO, "zfs-3000", _get("zfs-3000", "qps")),
        Outcome(7, "ext4 at 3000 IOPS (CPU bound): throughput", 1000, "queries/s", LAB, EXP7_SCENARIO, "ext4-3000", _get("ext4-3000", "qps")),
        Outcome(7, "ZFS + warm L2ARC, 300 IOPS: throughput", (783, 788), "queries/s", LAB, EXP7_SCENARIO, "zfs-300-l2arc", _get("zfs-300-l2arc", "qps")),
        Outcome(7, "ZFS + warm L2ARC, 300 IOPS: l2_hits in the run", 32280, "count", LAB, EXP7_SCENARIO, "zfs-300-l2arc", _get("zfs-300-l2arc", "l2arc", "l2_hits")),
        Outcome(7, "ZFS + warm L2ARC, 300 IOPS: l2_misses in the run", 2435, "count", LAB, EXP7_SCENARIO, "zfs-300-l2arc", _get("zfs-300-l2arc", "l2arc", "l2_misses")),
    ]


def _exp8() -> list[Outcome]:
    a, b = "rs16k", "rs32k"
    return [
        Outcome(8, "recordsize 16K: lz4 compressratio", 1.02, "ratio", LAB, EXP8_SCENARIO, a, _get(a, "compressratio")),
        Outcome(8, "recordsize 32K: lz4 compressratio", 1.21, "ratio", LAB, EXP8_SCENARIO, b, _get(b, "compressratio")),
        Outcome(8, "recordsize 16K: throughput", (47.9, 49.0), "tps", LAB, EXP8_SCENARIO, a, _get(a, "tps")),
        Outcome(8, "recordsize 32K: throughput", (58.9, 59.5), "tps", LAB, EXP8_SCENARIO, b, _get(b, "tps")),
        Outcome(8, "throughput 32K / 16K", 1.22, "ratio", LAB, EXP8_SCENARIO, b, _quotient(_get(b, "tps"), _get(a, "tps"))),
        Outcome(8, "recordsize 16K: disk read IOPS", 297, "IOPS", LAB, EXP8_SCENARIO, a, _get(a, "devices", "disk", "read_iops")),
        Outcome(8, "recordsize 32K: disk read IOPS", 297, "IOPS", LAB, EXP8_SCENARIO, b, _get(b, "devices", "disk", "read_iops")),
        Outcome(8, "recordsize 16K: disk read MB/s", 4.9, "MB/s", LAB, EXP8_SCENARIO, a, _get(a, "devices", "disk", "read_mbps")),
        Outcome(8, "recordsize 32K: disk read MB/s", 8.2, "MB/s", LAB, EXP8_SCENARIO, b, _get(b, "devices", "disk", "read_mbps")),
        Outcome(8, "recordsize 16K: average disk read", 16.1, "KiB", LAB, EXP8_SCENARIO, a, _avg_read_kib(a, "disk")),
        Outcome(8, "recordsize 32K: average disk read", 26.7, "KiB", LAB, EXP8_SCENARIO, b, _avg_read_kib(b, "disk")),
        Outcome(8, "recordsize 16K: ARC demand-data hit ratio", 0.31, "ratio", LAB, EXP8_SCENARIO, a, _demand_data_hit(a)),
        Outcome(8, "recordsize 32K: ARC demand-data hit ratio", 0.436, "ratio", LAB, EXP8_SCENARIO, b, _demand_data_hit(b)),
        Outcome(8, "recordsize 16K: buffer-pool misses per query", 9, "pages", LAB, EXP8_SCENARIO, a, _bp_misses_per_query(a)),
        Outcome(8, "recordsize 32K: buffer-pool misses per query", 9, "pages", LAB, EXP8_SCENARIO, b, _bp_misses_per_query(b)),
        Outcome(8, "recordsize 16K: demand metadata misses", 0, "count", LAB, EXP8_SCENARIO, a, _get(a, "arc", "demand_metadata_misses")),
        Outcome(8, "recordsize 32K: demand metadata misses", 0, "count", LAB, EXP8_SCENARIO, b, _get(b, "arc", "demand_metadata_misses")),
    ]


def _avoid_pool(variant: str, device: str) -> Callable[[Variants], Optional[float]]:
    """Share of InnoDB page reads that did not reach `device` (ARC or L2ARC hits)."""

    def read(vs: Variants) -> Optional[float]:
        v = vs[variant]
        pages = v["innodb"]["pages_read"]
        return None if not pages else 1 - v["devices"][device]["read_iops"] * v["window_s"] / pages

    return read


EXP1_L2ARC_SCENARIO = "exp1-l2arc.toml"


def _exp1() -> list[Outcome]:
    l2 = "zfs-l2arc"
    return [
        Outcome(1, "ZFS + 475 GB L2ARC (warmed by a cat): throughput", 5000, "queries/s", EXP1, EXP1_L2ARC_SCENARIO, l2, _get(l2, "qps")),
        Outcome(1, "ZFS + L2ARC: share of page reads that avoid EBS", 0.70, "ratio", EXP1, EXP1_L2ARC_SCENARIO, l2, _avoid_pool(l2, "ebs")),
        Outcome(1, "ZFS + L2ARC: data the 475 GB device holds", 600, "GB", EXP1, EXP1_L2ARC_SCENARIO, l2, _get(l2, "l2arc", "l2_size", scale=1e9)),
        Outcome(1, "lz4 on sysbench data, 16K records (compressratio)", 1.28, "ratio", EXP1, EXP1_SCENARIO, "zfs-arc-1g", _get("zfs-arc-1g", "compressratio")),
        Outcome(1, "XFS: EBS read IOPS (IO bound)", 3000, "IOPS", EXP1, EXP1_SCENARIO, "xfs", _get("xfs", "devices", "ebs", "read_iops")),
        Outcome(1, "XFS: reads per query", 1.0, "reads", EXP1, EXP1_SCENARIO, "xfs", _reads_per_query("xfs", "ebs")),
        Outcome(1, "ZFS, 1 GB ARC: EBS read IOPS (IO bound)", 3000, "IOPS", EXP1, EXP1_SCENARIO, "zfs-arc-1g", _get("zfs-arc-1g", "devices", "ebs", "read_iops")),
    ]


#: Every outcome by experiment. Experiment 1 runs at full scale (about 40 s: its L2ARC
#: variant reads the 850 GB once first).
OUTCOMES: dict[int, Callable[[], list[Outcome]]] = {1: _exp1, 3: _exp3, 6: _exp6, 7: _exp7, 8: _exp8}
#: The experiments `ztwin reproduce` runs when none is named: the calibration figures.
DEFAULT_EXPERIMENTS = (3, 6, 7, 8)


@dataclass(frozen=True)
class Row:
    """One outcome beside the twin's figure."""

    outcome: Outcome
    twin: Optional[float]

    @property
    def ratio(self) -> Optional[float]:
        if self.twin is None:
            return None
        mid = self.outcome.real_mid
        if mid == 0:
            return None
        return self.twin / mid

    @property
    def in_range(self) -> bool:
        """True when the twin falls inside the range of the real runs, or both are zero."""
        r = self.outcome.real
        if self.twin is None:
            return False
        if isinstance(r, tuple):
            return r[0] <= self.twin <= r[1]
        return r == 0 and self.twin == 0

    def to_dict(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "experiment": o.experiment,
            "figure": o.figure,
            "unit": o.unit,
            "real": list(o.real) if isinstance(o.real, tuple) else o.real,
            "twin": self.twin,
            "ratio": self.ratio,
            "in_range": self.in_range,
            "source": o.source,
            "scenario": o.scenario,
            "variant": o.variant,
        }


def outcomes(experiments: Iterable[int]) -> list[Outcome]:
    """The outcomes of the given experiments, in order; unknown numbers raise ValueError."""
    out: list[Outcome] = []
    for e in experiments:
        if e not in OUTCOMES:
            raise ValueError(f"no outcomes for experiment {e}: choose from {', '.join(map(str, sorted(OUTCOMES)))}")
        out += OUTCOMES[e]()
    return out


def pair(rows: list[Outcome], results: dict[str, Variants]) -> list[Row]:
    """Each outcome beside the twin's figure read from ``results`` (scenario file name ->
    the summary's variants)."""
    return [Row(o, o.twin(results[o.scenario])) for o in rows]


def reproduce(experiments: Iterable[int] = DEFAULT_EXPERIMENTS, progress: Optional[Callable[[str], None]] = None) -> list[Row]:
    """Runs the scenarios the experiments need (each once, only the variants needed) and
    pairs each outcome with the twin's figure."""
    import ztwin

    wanted = outcomes(experiments)
    by_scenario: dict[str, list[str]] = {}
    for o in wanted:
        vs = by_scenario.setdefault(o.scenario, [])
        if o.variant not in vs:
            vs.append(o.variant)
    results: dict[str, Variants] = {}
    for name, variants in by_scenario.items():
        if progress:
            progress(f"{name}: {', '.join(variants)}")
        sc = ztwin.load_scenario(scenario_path(name))
        results[name] = ztwin.run(sc, variants).summary["variants"]
    return pair(wanted, results)
