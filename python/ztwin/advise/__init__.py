"""``ztwin advise QUESTION SCENARIO``: the questions operators ask of a ZFS host for a
database, answered by running the scenario's variant with one parameter set as ``ztwin
sweep`` sets it, as few times as the answer needs.

    advice = ztwin.advise("arc", "scenarios/exp1-arc-sizing.toml", variant="zfs-arc-1g")
    advice.answer          # {"zfs_arc_max": "3GiB"}
    advice.frame()         # the points behind it (polars), one row per run point
    advice.explanation     # the mechanism that decides it, with the numbers
    advice.runs, advice.wall_s

Questions, one module each (:data:`QUESTIONS`): ``arc`` (:mod:`.arc`) so far; recordsize,
memory-split, slog, compression and l2arc are to come (issue 18). :mod:`.common` has the
typed answer, the runner of points and the scaled-down run; :mod:`.search` the searches
as pure functions; :mod:`.report` the HTML page.
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Optional, Union

from .common import Advice, AdviseError, Runner

__all__ = ["advise", "Advice", "AdviseError", "QUESTIONS"]

#: Each question: (what it answers, the module's advise function name).
QUESTIONS: dict[str, str] = {
    "arc": "the smallest zfs_arc_max with no demand metadata misses and qps within 2% of the best",
}


def advise(
    question: str,
    scenario: Union[str, Path, dict[str, Any]],
    variant: Optional[str] = None,
    *,
    duration: Optional[str] = None,
    warmup: Optional[str] = None,
    seed: Optional[int] = None,
    scale: Optional[int] = None,
    memory_check: bool = True,
    on_note: Optional[Callable[[str], None]] = None,
    **options: Any,
) -> Advice:
    """Answers ``question`` (a key of :data:`QUESTIONS`) for ``variant`` of ``scenario``
    (default: its first variant the question applies to). ``duration`` and ``warmup``
    set each point's measured window and warm-up (default: chosen by the question, and
    said in ``Advice.notes``); ``scale`` the scaled-down runs' factor (``arc``; 1: none).
    ``options`` go to the question (e.g. ``dm_per_query``, ``qps_tolerance``, ``step`` for
    arc). ``on_note(line)`` hears each run as it ends. Errors: :class:`AdviseError` (a
    question that does not apply), :class:`~ztwin.exceptions.ScenarioError`."""
    if question not in QUESTIONS:
        raise AdviseError(f"unknown question {question!r}; the questions: {', '.join(QUESTIONS)}")
    t0 = time.monotonic()
    note = on_note or (lambda _m: None)
    overrides: dict[str, Any] = {}
    if seed is not None:
        overrides["seed"] = seed
    from . import arc  # the only question so far; the others will dispatch here

    known = set(arc.ArcOptions.__dataclass_fields__) - {"duration", "warmup", "scale"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise AdviseError(f"arc: unknown option(s) {', '.join(unknown)}; the options: {', '.join(sorted(known))}")
    opts = arc.ArcOptions(duration=duration, warmup=warmup, scale=scale, **options)
    runner = Runner(scenario, variant, overrides, memory_check=memory_check, fits=arc.fits, question="the arc question (a ZFS variant with a sysbench workload)", on_run=note)
    result = arc.advise_arc(runner, opts, note)
    result.runs = runner.runs
    result.wall_s = time.monotonic() - t0
    return result


class _CallableModule(types.ModuleType):
    """``ztwin.advise`` is this package and, called, :func:`advise` (``ztwin.advise("arc", ...)``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Advice:
        return advise(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
