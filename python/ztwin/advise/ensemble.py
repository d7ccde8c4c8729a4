"""``ztwin advise QUESTION SCENARIO --uncertainty N``: the question asked once as the
presets say (the nominal answer) and again for each of ``N`` members with the variant's
provisional parameters drawn within their ranges (:mod:`ztwin.uncertainty`). Each answer
is then a band: the question's metric at the chosen point (min, median, max over the
members), each answer key's values across the members (how many differ from the
nominal one; min, median, max when they are sizes or numbers), and the parameters ranked
by the Spearman correlation of their draws with that metric (and with a numeric answer
when it moves)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ..uncertainty import band, check_members, draw, member_overrides, sensitivity, variant_parameters
from .common import Advice, AdviseError


def chosen_row(advice: Advice) -> Optional[Mapping[str, Any]]:
    """The point the answer stands on: the row marked ``chosen``, else the full-size row
    whose parameters equal the answer's."""
    rows = [r for r in advice.points if "refused" not in r]
    hit = next((r for r in rows if r.get("chosen") is True), None)
    if hit is not None:
        return hit
    match = [r for r in rows if advice.answer and all(str(r.get(k)) == str(v) for k, v in advice.answer.items())]
    return next((r for r in match if r.get("scale", 1) == 1), match[0] if match else None)


def answer_number(v: Any) -> Optional[float]:
    """An answer value as a number when it is one (a size "3GiB", a count, a ratio); None otherwise."""
    from ..units import parse_size

    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(parse_size(v))
        except (ValueError, TypeError):
            return None
    return None


def recommended(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The recommended values of an answer: its entries but the measured numbers (floats,
    such as slog's ``speedup``), which vary with every member without changing what is
    recommended."""
    return {k: v for k, v in answer.items() if not isinstance(v, float)}


def run_ensemble(
    ask: Callable[..., Advice],
    nominal: Advice,
    n: int,
    scenario: Any,
    seed_override: Optional[int],
    memory_check: bool,
    note: Callable[[str], None],
) -> dict[str, Any]:
    """Asks the question again for ``n`` members (``ask(extra_overrides)`` returns an
    Advice) and returns the ``uncertainty`` document (see the module)."""
    from ..sweeps import PointLoader

    check_members(n)
    overrides = {"seed": seed_override} if seed_override is not None else None
    loader = PointLoader(scenario, [nominal.variant], overrides, memory_check)
    cfg = loader.given.variants[nominal.variant]
    params, notes = variant_parameters(loader, nominal.variant)
    if not params:
        raise AdviseError(f"--uncertainty: variant {nominal.variant} uses no preset with provisional parameters (ranges) that the scenario leaves unset")
    seed = int(cfg.get("seed") or 0)
    draws = draw(params, n, seed)
    metric = nominal.settings.get("metric") or "qps"
    nom_row = chosen_row(nominal)
    members: list[dict[str, Any]] = []
    for i, values in enumerate(draws):
        note(f"uncertainty member {i + 1}/{n}: " + ", ".join(f"{p.key}={p.range.encode(values[p.key])}" for p in params[:3]) + (", ..." if len(params) > 3 else ""))
        m: dict[str, Any] = {"member": i + 1} | {p.key: p.range.encode(values[p.key]) for p in params}
        try:
            adv = ask(member_overrides(params, values))
        except Exception as e:  # noqa: BLE001 - a member the loader or the question refuses is a row, not the end
            from ..exceptions import ZtwinError

            if not isinstance(e, ZtwinError):
                raise
            m["error"] = str(e).splitlines()[0]
            members.append(m)
            continue
        row = chosen_row(adv)
        m["answer"] = adv.answer
        m[metric] = row.get(metric) if row else None
        m["runs"] = adv.runs
        members.append(m)
    ok = [m for m in members if "error" not in m]
    out: dict[str, Any] = {
        "members": n,
        "seed": seed,
        "method": "Latin hypercube, uniform within each range, seeded from the scenario's seed; sensitivity: Spearman rank correlation of each parameter's draws with the metric",
        "parameters": [{"key": p.key, "preset": p.preset, "lo": p.range.raw[0], "hi": p.range.raw[1]} for p in params],
        "metric": metric,
        "band": band([m.get(metric) for m in ok]),
        "nominal": {"answer": nominal.answer, metric: nom_row.get(metric) if nom_row else None},
        "answers": {},
        "changed": sum(1 for m in ok if recommended(m["answer"]) != recommended(nominal.answer)),
        "failed": len(members) - len(ok),
        "sensitivity": [],
        "notes": notes,
        "member_rows": members,
    }
    okd = [draws[i] for i, m in enumerate(members) if "error" not in m]
    out["sensitivity"] = _rounded(sensitivity(okd, [m.get(metric) for m in ok]))
    for key in sorted({k for m in ok for k in m["answer"]} | set(nominal.answer)):
        vals = [m["answer"].get(key) for m in ok]
        counts: dict[str, int] = {}
        for v in vals:
            counts[str(v)] = counts.get(str(v), 0) + 1
        entry: dict[str, Any] = {"nominal": nominal.answer.get(key), "values": counts}
        nums = [answer_number(v) for v in vals]
        if vals and all(x is not None for x in nums):
            b = band(nums)
            entry["band"] = b
            if b and b["min"] != b["max"]:
                entry["sensitivity"] = _rounded(sensitivity(okd, nums))
        out["answers"][key] = entry
    if n < 10:
        out["notes"].append(f"with {n} members a rank correlation below about {2 / n ** 0.5:.2f} in magnitude is not told from none: the ranking is indicative")
    return out


def _rounded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r | {"rho": round(r["rho"], 3) if r["rho"] is not None else None} for r in rows]


def summary_lines(u: Mapping[str, Any]) -> list[str]:
    """The ensemble in a few lines (the CLI's and the report's)."""
    metric = u["metric"]
    lines = [f"{u['members']} members, {len(u['parameters'])} provisional parameters drawn (seed {u['seed']}). {u['method']}"]
    b = u.get("band")
    nom = u["nominal"].get(metric)
    if b:
        lines.append(f"{metric} at the answer: min {b['min']:,.1f}, median {b['median']:,.1f}, max {b['max']:,.1f} (nominal {nom:,.1f})" if nom is not None else
                     f"{metric} at the answer: min {b['min']:,.1f}, median {b['median']:,.1f}, max {b['max']:,.1f}")
    for key, e in u["answers"].items():
        b = e.get("band")
        if isinstance(e["nominal"], float) and b:
            vals = f"min {b['min']:g}, median {b['median']:g}, max {b['max']:g}"
        else:
            vals = ", ".join(f"{v} x{c}" for v, c in e["values"].items())
        s = f"{key}: nominal {e['nominal']}; members: {vals}"
        if e.get("sensitivity") and e["sensitivity"][0]["rho"] is not None:
            top = e["sensitivity"][0]
            s += f"; moved most by {top['parameter']} (rho {top['rho']:+.2f})"
        lines.append(s)
    ok = u["members"] - u["failed"]
    lines.append(f"the recommended value {'changes' if u['changed'] else 'does not change'} across the ensemble ({u['changed']} of {ok} members differ from the nominal answer"
                 + (f"; {u['failed']} members refused" if u["failed"] else "") + ")")
    top = [r for r in u["sensitivity"] if r["rho"] is not None][:3]
    if top:
        lines.append(f"{metric} moved most by: " + ", ".join(f"{r['parameter']} (rho {r['rho']:+.2f})" for r in top))
    lines += u.get("notes", [])
    return lines
