"""Uncertainty where the inputs are uncertain: the presets' provisional parameters, each
with a range, and ensembles of runs (``ztwin advise ... --uncertainty N``, ``ztwin run
... --uncertainty N``) with each parameter drawn within its range.

The ranges (``presets/machines.toml``, ``presets/devices.toml``): a preset's sub-table
``ranges`` with the preset's own keys, each ``[lo, hi]`` in the key's units
(``["aws-gp2".ranges] read_latency = ["400us", "1ms"]``; a machine's CPU costs under
``["aws-i3.large".ranges.cpu] row_ns = [500, 2000]``). The presets' loader takes the
sub-table off before the preset is validated (a scenario's ``[devices.NAME]`` cannot set
``ranges``), and checks each range (:func:`parse_ranges`): a key the preset's table
has, two values of its type, ``lo <= hi``, the preset's own value within them. Errors
name the key (``devices.toml ["aws-gp2"].ranges.read_latency``).

Which parameters an ensemble draws (:func:`provisional_parameters`): those of the
presets the variant uses (its machine's, and each of its devices') that the scenario
does not set itself (a value the scenario gives is a choice, not a guess).

The draws (:func:`draw`): a Latin hypercube, uniform within each range: each of the
``N`` members takes one of ``N`` equal slices of every range, the slices shuffled per
parameter, a uniform point within the slice; seeded from the scenario's seed (the same
draws every time), ``random.Random`` (no numpy needed). A Latin hypercube covers each
range evenly with few members, which the correlations below need. Every member keeps
the scenario's simulation seed: the members differ by their parameters only.

Which parameter moves an answer most (:func:`sensitivity`): the Spearman rank
correlation of each parameter's draws with the answer's metric across the ensemble,
ranked by its magnitude. It reuses the ensemble's runs (one-at-a-time runs at each
range's ends would cost two more questions per parameter: 30 or more for experiment
1's presets), and ranks are robust to the curve's shape; it is noisy with few members
(with N members a correlation below about 2/sqrt(N) in magnitude is not told from none),
which the report says.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .exceptions import ZtwinError

__all__ = [
    "RangeError", "Range", "Parameter", "MAX_MEMBERS", "parse_ranges", "preset_ranges", "provisional_parameters",
    "draw", "member_overrides", "sensitivity", "band", "spearman", "check_members", "variant_parameters", "run_ensemble",
]

#: At most this many members in an ensemble (each is a whole run or a whole question).
MAX_MEMBERS = 32


class RangeError(ZtwinError, ValueError):
    """A range that cannot be read (not ``[lo, hi]``, lo above hi, a value of the wrong type)."""


@dataclass(frozen=True)
class Range:
    """One provisional parameter's range: ``key`` as in the preset's table (dotted below
    a sub-table: ``cpu.row_ns``), the bounds parsed (ns, bytes, bytes/s or plain numbers),
    as written, and how a drawn value is written back (``kind``)."""

    key: str
    lo: float
    hi: float
    raw: tuple[Any, Any]
    #: "int", "float", "duration" (written "Nns"), "size" (bytes, int) or "rate" (bytes/s, float).
    kind: str
    #: The preset's own value, parsed (None when the preset leaves it unset).
    nominal: Optional[float] = None

    def encode(self, x: float) -> Any:
        """A drawn value as a scenario file takes it."""
        if self.kind == "duration":
            return f"{int(round(x))}ns"
        if self.kind in ("int", "size"):
            return int(round(x))
        return float(x)


@dataclass(frozen=True)
class Parameter:
    """A provisional parameter of a variant: its scenario key (``devices.ebs.read_latency``),
    the preset it comes from (``device aws-gp2``) and its range."""

    key: str
    preset: str
    range: Range


def check_members(n: Any, flag: str = "--uncertainty") -> int:
    """``n`` as a member count: a whole number from 2 to :data:`MAX_MEMBERS`."""
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_MEMBERS:
        raise RangeError(f"{flag} {n!r}: a whole number of members from 2 to {MAX_MEMBERS} (each member is a whole run or question)")
    return n


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out |= _flatten(v, key + ".")
        else:
            out[key] = v
    return out


def _kind(v: Any) -> str:
    from . import units

    if isinstance(v, bool):
        raise RangeError("a boolean has no range")
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        for kind, parse in (("duration", units.parse_duration), ("size", units.parse_size), ("rate", units.parse_rate)):
            try:
                parse(v)
                return kind
            except (units.UnitError, ValueError, TypeError):
                continue
        raise RangeError(f"{v!r} is not a duration, size or rate")
    raise RangeError(f"{v!r} is not a number, duration, size or rate")


def _value(kind: str, v: Any) -> float:
    from . import units

    if kind == "duration":
        return float(units.parse_duration(v))
    if kind == "size":
        return float(units.parse_size(v))
    if kind == "rate":
        return float(units.parse_rate(v))
    return float(v)


def parse_ranges(table: Any, where: str, model: Any = None, preset: Optional[Mapping[str, Any]] = None) -> dict[str, Range]:
    """The ranges of a ``ranges`` table (``where`` names it in errors: ``devices.toml
    ["aws-gp2"].ranges``): each key (dotted below sub-tables) ``[lo, hi]`` of one type
    (numbers, or durations, sizes or rates as a scenario writes them), ``lo <= hi``.
    With ``model`` (the preset's pydantic model) each key must be one of its fields and
    both bounds a value it accepts; with ``preset`` (the preset's table as written) its
    own value must lie within the range. Raises :class:`RangeError` naming the key."""
    from pydantic import ValidationError

    from .sweeps import _nested

    if not isinstance(table, Mapping):
        raise RangeError(f"{where}: a table of key = [lo, hi]")
    out: dict[str, Range] = {}
    flat_preset = _flatten(preset or {})
    for key, v in _flatten(table).items():
        at = f"{where}.{key}"
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise RangeError(f"{at}: a range is [lo, hi], got {v!r}")
        lo_raw, hi_raw = v
        try:
            k_lo, k_hi = _kind(lo_raw), _kind(hi_raw)
        except RangeError as e:
            raise RangeError(f"{at}: {e}") from None
        if {k_lo, k_hi} == {"int", "float"}:
            k_lo = k_hi = "float"
        if k_lo != k_hi:
            raise RangeError(f"{at}: lo {lo_raw!r} and hi {hi_raw!r} are not of one type ({k_lo}, {k_hi})")
        lo, hi = _value(k_lo, lo_raw), _value(k_hi, hi_raw)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RangeError(f"{at}: bounds must be finite, got {v!r}")
        if lo > hi:
            raise RangeError(f"{at}: lo {lo_raw!r} is above hi {hi_raw!r}")
        nominal = None
        if key in flat_preset:
            pv = flat_preset[key]
            try:
                kind_p = _kind(pv)
            except RangeError as e:
                raise RangeError(f"{at}: the preset's value {pv!r}: {e}") from None
            if kind_p == "float" and k_lo == "int":
                k_lo = "float"
            nominal = _value(kind_p if kind_p not in ("int", "float") else k_lo, pv)
            if not lo <= nominal <= hi:
                raise RangeError(f"{at}: the preset's own value {pv!r} is outside [{lo_raw!r}, {hi_raw!r}]")
        r = Range(key, lo, hi, (lo_raw, hi_raw), k_lo, nominal)
        if model is not None:
            for bound in (lo, hi):
                try:
                    model.model_validate(_nested({key: r.encode(bound)}))
                except ValidationError as e:
                    err = e.errors()[0]
                    msg = "not a key of the preset" if err.get("type") == "extra_forbidden" else err.get("msg")
                    raise RangeError(f"{at}: {msg}") from None
        out[key] = r
    return out


def preset_ranges() -> dict[tuple[str, str], dict[str, Range]]:
    """Every preset's ranges, checked: ``{("machine" | "device", preset): {key: Range}}``."""
    from . import presets

    return presets.preset_ranges()


def provisional_parameters(merged: Mapping[str, Any], devices: Sequence[str]) -> tuple[list[Parameter], list[str]]:
    """The provisional parameters of a variant: ``merged`` is its scenario table (the base
    with the variant's overrides), ``devices`` the names of the devices it uses. A key the
    scenario sets itself is left out and said. Returns the parameters (machine first, then
    the devices in order) and the notes."""
    ranges = preset_ranges()
    params: list[Parameter] = []
    notes: list[str] = []

    def add(prefix: str, table: Mapping[str, Any], kind: str) -> None:
        name = table.get("preset")
        if not name:
            return
        own = _flatten({k: v for k, v in table.items() if k != "preset"})
        for key, r in ranges.get((kind, name), {}).items():
            if key in own:
                notes.append(f"{prefix}.{key} is set by the scenario ({own[key]!r}): not drawn")
                continue
            params.append(Parameter(f"{prefix}.{key}", f"{kind} {name}", r))

    machine = merged.get("machine")
    if isinstance(machine, Mapping):
        add("machine", machine, "machine")
    devs = merged.get("devices") or {}
    for d in devices:
        if isinstance(devs.get(d), Mapping):
            add(f"devices.{d}", devs[d], "device")
    return params, notes


def draw(params: Sequence[Parameter], n: int, seed: int) -> list[dict[str, float]]:
    """``n`` members' values (parsed units) for ``params``: a Latin hypercube uniform in
    each range (see the module), deterministic for ``seed``."""
    check_members(n, "members")
    rng = random.Random(f"ztwin-uncertainty:{seed}")
    cols: dict[str, list[float]] = {}
    for p in params:
        slots = list(range(n))
        rng.shuffle(slots)
        lo, hi = p.range.lo, p.range.hi
        vals = [lo + (hi - lo) * (s + rng.random()) / n for s in slots]
        if p.range.kind in ("int", "size", "duration"):
            vals = [float(round(v)) for v in vals]
        cols[p.key] = vals
    return [{k: cols[k][i] for k in cols} for i in range(n)]


def member_overrides(params: Sequence[Parameter], values: Mapping[str, float]) -> dict[str, Any]:
    """A member's draws as scenario keys and values as a file writes them (``{"devices.ebs.read_latency": "612345ns"}``)."""
    return {p.key: p.range.encode(values[p.key]) for p in params}


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """The Spearman rank correlation of two equal-length samples (ties get mean ranks);
    None when either is constant or there are fewer than 3 pairs."""
    if len(xs) != len(ys) or len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def sensitivity(draws: Sequence[Mapping[str, float]], metric: Sequence[Optional[float]]) -> list[dict[str, Any]]:
    """Each parameter's Spearman correlation with ``metric`` across the members (members
    without a metric left out), ranked by magnitude, largest first; a parameter whose
    correlation is undefined (constant metric or draws) comes last with ``rho`` None."""
    keep = [i for i, m in enumerate(metric) if m is not None]
    if not draws:
        return []
    out = []
    for key in draws[0]:
        rho = spearman([draws[i][key] for i in keep], [metric[i] for i in keep])  # type: ignore[misc]
        out.append({"parameter": key, "rho": rho})
    out.sort(key=lambda r: -abs(r["rho"]) if r["rho"] is not None else 1.0)
    return out


def band(values: Sequence[Optional[float]]) -> Optional[dict[str, float]]:
    """``{"min", "median", "max"}`` of the values given (None skipped); None when none are."""
    xs = [v for v in values if v is not None]
    if not xs:
        return None
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def variant_parameters(loader: Any, name: str) -> tuple[list[Parameter], list[str]]:
    """The provisional parameters of variant ``name`` of a :class:`ztwin.sweeps.PointLoader`'s scenario."""
    from .scenario.merge import merge_variant

    merged = merge_variant({k: v for k, v in loader.raw.items() if k != "variants"}, (loader.raw.get("variants") or {}).get(name) or {})
    cfg = loader.given.variants[name]
    return provisional_parameters(merged, [d["name"] for d in cfg.get("devices") or []])


#: The figures of a run an ensemble of ``ztwin run`` bands: (name, path in the summary).
RUN_METRICS = (("qps", ("qps",)), ("tps", ("tps",)), ("latency_p95_ms", ("latency_ms", "p95")), ("cpu_utilization", ("cpu_utilization",)))


def _get_path(doc: Mapping[str, Any], path: Sequence[str]) -> Optional[float]:
    cur: Any = doc
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return float(cur) if isinstance(cur, (int, float)) and not isinstance(cur, bool) else None


def run_ensemble(
    scenario: Any,
    names: Sequence[str],
    n: int,
    overrides: Optional[Mapping[str, Any]] = None,
    memory_check: bool = True,
    on_member: Optional[Any] = None,
) -> dict[str, Any]:
    """``ztwin run --uncertainty N``: each variant of ``names`` run ``n`` times with its
    provisional parameters drawn (:func:`draw`, seeded from the variant's seed); per
    variant the band (min, median, max) of qps, tps, latency p95 and CPU, and the
    parameters ranked by their rank correlation with qps. ``on_member(variant, i, n)``
    hears each member start. A member the loader refuses is a row with its error."""
    import json as _json

    from . import run_variant
    from .exceptions import ZtwinError
    from .sweeps import PointLoader

    check_members(n)
    out: dict[str, Any] = {"members": n, "method": "Latin hypercube, uniform within each range, seeded from the variant's seed; "
                           "sensitivity: Spearman rank correlation of each parameter's draws with qps", "variants": {}}
    for name in names:
        loader = PointLoader(scenario, [name], overrides, memory_check)
        params, notes = variant_parameters(loader, name)
        entry: dict[str, Any] = {"parameters": [{"key": p.key, "preset": p.preset, "lo": p.range.raw[0], "hi": p.range.raw[1]} for p in params], "notes": notes}
        if not params:
            entry["notes"] = notes + ["no preset with provisional parameters (ranges) that the scenario leaves unset: nothing drawn"]
            out["variants"][name] = entry
            continue
        seed = int(loader.given.variants[name].get("seed") or 0)
        draws = draw(params, n, seed)
        rows: list[dict[str, Any]] = []
        for i, values in enumerate(draws):
            if on_member is not None:
                on_member(name, i, n)
            row: dict[str, Any] = {"member": i + 1} | member_overrides(params, values)
            try:
                sc = loader.load(member_overrides(params, values), i, n, what="uncertainty member")
                doc = _json.loads(run_variant(sc, name))
            except ZtwinError as e:
                row["error"] = str(e).splitlines()[0]
                rows.append(row)
                continue
            for m, path in RUN_METRICS:
                row[m] = _get_path(doc, path)
            rows.append(row)
        ok = [i for i, r in enumerate(rows) if "error" not in r]
        entry |= {
            "seed": seed,
            "bands": {m: band([rows[i].get(m) for i in ok]) for m, _ in RUN_METRICS},
            "sensitivity": [r | {"rho": round(r["rho"], 3) if r["rho"] is not None else None} for r in sensitivity([draws[i] for i in ok], [rows[i].get("qps") for i in ok])],
            "failed": n - len(ok),
            "member_rows": rows,
        }
        if n < 10:
            entry["notes"].append(f"with {n} members a rank correlation below about {2 / n ** 0.5:.2f} in magnitude is not told from none: the ranking is indicative")
        out["variants"][name] = entry
    return out
