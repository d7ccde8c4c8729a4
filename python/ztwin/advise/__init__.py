"""``ztwin advise QUESTION SCENARIO``: the questions operators ask of a ZFS host for a
database, answered by running the scenario's variant with one parameter set as ``ztwin
sweep`` sets it, as few times as the answer needs.

    advice = ztwin.advise("arc", "scenarios/exp1-arc-sizing.toml", variant="zfs-arc-1g")
    advice.answer          # {"zfs_arc_max": "3GiB"}
    advice.frame()         # the points behind it (polars), one row per run point
    advice.explanation     # the mechanism that decides it, with the numbers
    advice.runs, advice.wall_s

Questions, one module each (:data:`QUESTIONS`): ``arc`` (:mod:`.arc`, a search),
``recordsize``, ``memory-split``, ``slog``, ``compression`` and ``l2arc``
(:mod:`.recordsize`, :mod:`.memory_split`, :mod:`.slog`, :mod:`.compression`,
:mod:`.l2arc`: a few fixed points each, on :mod:`.grid`). :mod:`.common` has the
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

#: Each question: what it answers.
QUESTIONS: dict[str, str] = {
    "arc": "the smallest zfs_arc_max with no demand metadata misses and qps within 2% of the best",
    "recordsize": "the recordsize (8K to 128K) with the best throughput, ties within 2% to the smaller",
    "memory-split": "the split of a fixed RAM between the InnoDB buffer pool and the ARC with the best qps",
    "slog": "whether a log device speeds up the sync writes (the ZIL's share of commit time)",
    "compression": "the compression (off, lz4, zstd) with the best throughput, ties within 2% to the better ratio",
    "l2arc": "the cache-device size and feed rate (l2arc_write_max) with the best qps, or no L2ARC when it gains under 5%",
}

#: Each question's module, its options' class, its function and what it applies to.
_SPECS: dict[str, tuple[str, str, str, str]] = {
    "arc": ("arc", "ArcOptions", "advise_arc", "the arc question (a ZFS variant with a sysbench workload)"),
    "recordsize": ("recordsize", "RecordsizeOptions", "advise_recordsize", "the recordsize question (a ZFS variant)"),
    "memory-split": ("memory_split", "MemorySplitOptions", "advise_memory_split", "the memory-split question (a ZFS variant with a database)"),
    "slog": ("slog", "SlogOptions", "advise_slog", "the slog question (a ZFS variant)"),
    "compression": ("compression", "CompressionOptions", "advise_compression", "the compression question (a ZFS variant)"),
    "l2arc": ("l2arc", "L2arcOptions", "advise_l2arc", "the l2arc question (a ZFS variant with a cache device)"),
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
    uncertainty: Optional[int] = None,
    _extra: Optional[dict[str, Any]] = None,
    **options: Any,
) -> Advice:
    """Answers ``question`` (a key of :data:`QUESTIONS`) for ``variant`` of ``scenario``
    (default: its first variant the question applies to). ``duration`` and ``warmup``
    set each point's measured window and warm-up (default: ``arc`` chooses them and says
    so; the other questions use the variant's own); ``scale`` the scaled-down runs' factor
    (``arc`` only; 1: none). ``options`` go to the question's options class (e.g.
    ``dm_per_query``, ``step`` for arc; ``sizes`` for recordsize; ``reserve``,
    ``buffer_pools`` for memory-split; ``latency`` or ``latencies`` for slog; ``fractions``, ``feed_factors``
    for l2arc; ``phase`` for all but arc).
    ``on_note(line)`` hears each run as it ends. ``uncertainty=N`` asks the question again
    for N members with the presets' provisional parameters drawn within their ranges
    (:mod:`.ensemble`; 2 to :data:`ztwin.uncertainty.MAX_MEMBERS`): ``Advice.uncertainty``
    has the bands and the parameters ranked by how much they move the answer. Errors: :class:`AdviseError` (a question
    that does not apply, an unknown option), :class:`~ztwin.exceptions.ScenarioError`."""
    import importlib

    if question not in QUESTIONS:
        raise AdviseError(f"unknown question {question!r}; the questions: {', '.join(QUESTIONS)}")
    if uncertainty is not None:
        from ..uncertainty import check_members

        check_members(uncertainty)
    t0 = time.monotonic()
    note = on_note or (lambda _m: None)
    overrides: dict[str, Any] = {}
    if seed is not None:
        overrides["seed"] = seed
    mod_name, opts_name, fn_name, applies = _SPECS[question]
    mod = importlib.import_module(f".{mod_name}", __name__)
    opts_cls = getattr(mod, opts_name)
    fields = set(opts_cls.__dataclass_fields__)
    known = fields - {"duration", "warmup", "scale"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise AdviseError(f"{question}: unknown option(s) {', '.join(unknown)}; the options: {', '.join(sorted(known))}")
    if scale is not None and "scale" not in fields:
        raise AdviseError(f"{question}: --scale is the arc question's (scaled-down runs); this question runs at full size")
    kw = {"duration": duration, "warmup": warmup} | ({"scale": scale} if "scale" in fields else {})
    opts = opts_cls(**kw, **{k: v for k, v in options.items() if v is not None})
    runner = Runner(scenario, variant, overrides, memory_check=memory_check, fits=mod.fits, question=applies, on_run=note, extra=_extra)
    result = getattr(mod, fn_name)(runner, opts, note)
    result.runs = runner.runs
    result.wall_s = time.monotonic() - t0
    if question != "arc":
        result.notes.append(f"{runner.runs} runs, {result.wall_s:.1f} s of wall time")
    if uncertainty is not None:
        from .ensemble import run_ensemble

        def ask(extra: dict[str, Any]) -> Advice:
            return advise(question, scenario, result.variant, duration=duration, warmup=warmup, seed=seed, scale=scale,
                          memory_check=memory_check, on_note=on_note, _extra=extra, **options)

        result.uncertainty = run_ensemble(ask, result, uncertainty, scenario, seed, memory_check, note)
        result.runs += sum(m.get("runs", 0) for m in result.uncertainty["member_rows"])
        result.wall_s = time.monotonic() - t0
        result.notes.append(f"with the uncertainty ensemble: {result.runs} runs, {result.wall_s:.1f} s of wall time")
    return result


class _CallableModule(types.ModuleType):
    """``ztwin.advise`` is this package and, called, :func:`advise` (``ztwin.advise("arc", ...)``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Advice:
        return advise(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
