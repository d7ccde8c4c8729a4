"""Searches that cost few runs, as pure functions of an evaluator (tested with fake ones).

:func:`bracket_search` finds the smallest index of a grid (``value = index * step``) at
which a criterion holds, when the criterion is monotone (fails below a threshold, holds
from it on): evaluate the start; if it fails, double the index until it holds (or the
upper bound fails too); if it holds, halve it until it fails (or the lower bound holds);
then bisect between the last failing and the first passing index down to one step. A
point that cannot be evaluated (the scenario loader refuses the value) bounds the search
from that side. The criterion is judged on all the records so far (``judge(i, records)``),
so a criterion relative to the best point seen (``qps within 2% of the best``) is judged
again as points come in: the search goes on until the bracket is one step wide under the
final judgement. A curve that is not monotone (a failing point above a passing one) or
flat (holding at the lowest allowed value) is reported in :attr:`Search.notes`, never
hidden; the answer is then the smallest passing index above every failing one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

__all__ = ["Search", "bracket_search"]


@dataclass
class Search:
    """The outcome of :func:`bracket_search`."""

    #: The smallest index found to pass (every evaluated index above it passes too), or None.
    answer: Optional[int]
    #: The largest evaluated index below the answer that fails (None: none below it was evaluated or all were refused).
    below: Optional[int]
    #: Every evaluated index's record, in evaluation order.
    records: dict[int, Any]
    #: The final judgement of every evaluated index: True, False, or None (refused).
    verdicts: dict[int, Optional[bool]]
    #: ``"monotone"``, ``"not-monotone"``, ``"flat"`` (holds at the lowest allowed index),
    #: ``"never"`` (fails up to the highest allowed index) or ``"budget"`` (max_evals reached).
    shape: str = "monotone"
    notes: list[str] = field(default_factory=list)

    @property
    def evaluations(self) -> int:
        return len(self.records)


def bracket_search(
    evaluate: Callable[[int], Any],
    judge: Callable[[int, Mapping[int, Any]], Optional[bool]],
    start: int,
    lo: int,
    hi: int,
    max_evals: int = 24,
    records: Optional[Mapping[int, Any]] = None,
    confirm_above: bool = False,
) -> Search:
    """The smallest index in ``[lo, hi]`` at which ``judge`` passes (see the module's docs).

    ``evaluate(i)`` returns a record for index ``i``; ``judge(i, records)`` says whether
    index ``i`` passes given every record so far (None: it could not be evaluated, e.g.
    the value is refused). ``records`` seeds the search with records already made (they
    cost no evaluation). With ``confirm_above``, once the bracket is one step wide the
    index twice the answer (within ``hi``) is evaluated too, and the search goes on if
    that changes the judgement (for a criterion relative to the best point seen). Indices are integers >= 1; ``start`` is clamped into the bounds.
    """
    if lo < 1 or hi < lo:
        raise ValueError(f"bracket_search: bounds [{lo}, {hi}] are empty or below 1")
    recs: dict[int, Any] = dict(records or {})
    new = 0
    notes: list[str] = []

    def verdicts() -> dict[int, Optional[bool]]:
        return {i: judge(i, recs) for i in recs}

    i = min(max(start, lo), hi)
    shape = "monotone"
    while True:
        if i not in recs:
            if new >= max_evals:
                shape = "budget"
                notes.append(f"stopped after {max_evals} evaluations without a one-step bracket")
                break
            recs[i] = evaluate(i)
            new += 1
        v = verdicts()
        refused = [j for j, x in v.items() if x is None]
        ok = [j for j, x in v.items() if x is not None]
        # A refused value bounds the search from its side (with nothing evaluable yet, from below).
        lo_now = max([lo] + [j + 1 for j in refused if not ok or j < min(ok)])
        hi_now = min([hi] + [j - 1 for j in refused if ok and j > max(ok)])
        if lo_now > hi_now:
            shape = "never"
            notes.append("every value tried was refused")
            break
        if not ok:
            i = lo_now
            continue
        passing = sorted(j for j, x in v.items() if x is True)
        failing = sorted(j for j, x in v.items() if x is False)
        # Only a passing index above every failing one can be the answer (a curve that
        # is not monotone is searched above its highest failure, and reported).
        if failing:
            passing = [j for j in passing if j > failing[-1]]
        if not passing:
            top = max(failing) if failing else i
            if top >= hi_now:
                shape = "never"
                break
            refused_above = [j for j in refused if j > top]
            if refused_above and 2 * top > hi_now:
                # Doubling ran into refused values: bisect towards the lowest of them.
                i = max((top + min(refused_above)) // 2, top + 1)
            else:
                i = min(max(2 * top, top + 1), hi_now)
            continue
        p = passing[0]
        below = [j for j in failing if j < p]
        if not below:
            if p <= lo_now:
                top = min(2 * p, hi_now)
                if confirm_above and top > p and top not in recs:
                    i = top
                    continue
                shape = "flat"
                break
            i = max(p // 2, lo_now)
            if i >= p:
                i = p - 1
            continue
        f = below[-1]
        gap = [j for j in range(f + 1, p) if j not in recs]
        if p - f <= 1 or not gap:
            top = min(2 * p, hi_now)
            if confirm_above and top > p and top not in recs:
                # A criterion relative to the best point needs a look above the answer.
                i = top
                continue
            break
        i = (f + p) // 2
        if i in recs:  # a refused index inside the bracket: take the nearest untried one
            i = gap[len(gap) // 2]
    v = verdicts()
    passing = sorted(j for j, x in v.items() if x is True)
    failing = sorted(j for j, x in v.items() if x is False)
    answer = below = None
    if passing and shape != "never":
        # The smallest passing index with no failing index above it.
        above_fail = [j for j in passing if not any(k > j for k in failing)]
        answer = above_fail[0] if above_fail else None
        if answer is None:
            shape = "not-monotone"
            notes.append(f"the highest evaluated index {max(failing)} fails above passing ones {passing}: no threshold")
        else:
            below = max([j for j in failing if j < answer], default=None)
            inverted = [j for j in passing if j < answer]
            if inverted:
                shape = "not-monotone"
                notes.append(f"indices {inverted} pass below failing index {below}: the curve is not monotone; the answer is the smallest index above every failing one")
    if shape == "flat":
        notes.append("the criterion holds at the lowest value allowed: the curve is flat over the range")
    if shape == "never":
        notes.append("the criterion fails up to the highest value allowed")
    return Search(answer, below, recs, v, shape, notes)
