"""ztwin: a performance digital twin of ZFS under database workloads.

>>> import ztwin
>>> res = ztwin.run("scenarios/exp1-arc-sizing.toml")       # or a dict, or None (default)
>>> res.summary["variants"]["xfs"]["qps"]
>>> res.series                                               # polars frame, one row per interval

:func:`load_scenario` validates and resolves a scenario without running it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, TypeVar, Union

from typing import TYPE_CHECKING

from .exceptions import ResourceError, ScenarioError, SimulationError, ZtwinError
from .progress import Progress

if TYPE_CHECKING:
    from .results import Result
    from .sweeps import Sweep, sweep
    from .scenario import DEFAULT_SCENARIO, Scenario, load_scenario, resolve

# Imported on first use (PEP 562): scenarios need pydantic and results polars, which a
# command that uses neither (``ztwin replay``, ``ztwin geometry``) should not wait for.
_LAZY = {
    "Result": ".results",
    "sweep": ".sweeps",
    "Sweep": ".sweeps",
    "advise": ".advise",
    "Advice": ".advise",
    "Scenario": ".scenario",
    "load_scenario": ".scenario",
    "resolve": ".scenario",
    "DEFAULT_SCENARIO": ".scenario",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ztwin' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__version__ = "0.1.0"

__all__ = [
    "run",
    "sweep",
    "Sweep",
    "advise",
    "Advice",
    "estimate_memory",
    "check_variants",
    "load_scenario",
    "resolve",
    "Scenario",
    "Result",
    "Progress",
    "ZtwinError",
    "ScenarioError",
    "SimulationError",
    "ResourceError",
    "DEFAULT_SCENARIO",
    "core_version",
    "__version__",
]


def core_version() -> str:
    """Version of the compiled core (``ztwin._core``)."""
    from . import _core

    return _core.version()


def select_variants(scenario: Scenario, variants: Optional[Iterable[str]]) -> list[str]:
    """The variant names to run, in the scenario's order; unknown names are a ScenarioError."""
    if variants is None:
        return scenario.variant_names
    wanted = list(variants)
    unknown = [v for v in wanted if v not in scenario.variants]
    if unknown:
        known = ", ".join(scenario.variant_names)
        raise ScenarioError(
            f"scenario {scenario.source} has no variant {', '.join(repr(u) for u in unknown)}; its variants: {known}",
            errors=[{"loc": ("variants", u), "loc_str": f"variants.{u}", "msg": f"no such variant; known: {known}", "input": u, "type": "unknown_variant"} for u in unknown],
        )
    return [v for v in scenario.variant_names if v in wanted]


def estimate_memory(scenario: Union[str, Path, dict[str, Any], Scenario, None], variant: str) -> dict[str, int]:
    """The core's estimate of the peak memory of running ``variant`` of ``scenario`` (a
    path, a dict, a loaded :class:`Scenario`, or None for the default), bytes by part:
    ``buffer_pool``, ``arc_headers``, ``dbufs``, ``l2arc``, ``pool_map``, ``zfetch``,
    ``bcache``, ``page_cache``, ``writes``, ``files``, ``fio_maps``, ``series``, ``clients``, ``fixed``
    (0 where a part does not apply); the total is the sum. It assumes the caches fill
    (see :mod:`ztwin.resources`)."""
    from . import resources
    from .scenario import Scenario, load_scenario

    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, memory_check=False)
    name = select_variants(sc, [variant])[0]
    parts = sc.memory.get(name) or resources.estimate_config(sc.variants[name])
    if parts is None:  # pragma: no cover - a loaded variant passed the core's check
        raise ScenarioError(f"scenario {sc.source}, variant {name}: the core cannot estimate it")
    return dict(parts)


def _core_rejection(scenario: Scenario, name: str, e: ScenarioError) -> ScenarioError:
    """The core's rejection of variant ``name``, located in the scenario."""
    return ScenarioError(
        f"scenario {scenario.source}, variant {name}: {e}",
        errors=[dict(err, loc=("variants", name) + tuple(err["loc"]), loc_str=f"variants.{name}.{err['loc_str']}") for err in e.errors()],
    )


def check_variants(scenario: Scenario, names: Optional[Iterable[str]] = None) -> None:
    """Checks variants (all by default) as the core would run them, without running them
    (``load_scenario`` has done this for every variant; this is for a Scenario changed since):
    the core builds each variant's whole stack, so every rule of every layer applies (the
    ones the scenario schema cannot see: the ARC's limits, the pool, the L2ARC's
    tunables, the record contents). Raises the first rejection as a ScenarioError."""
    from . import _core

    for name in scenario.variant_names if names is None else names:
        try:
            _core.check_variant(json.dumps(scenario.variants[name]))
        except ScenarioError as e:
            raise _core_rejection(scenario, name, e) from None


def run_variant(
    scenario: Scenario,
    name: str,
    progress: Optional[Callable[[int, Optional[int], int, int, bool], object]] = None,
    every_s: float = 0.2,
) -> str:
    """Runs one resolved variant through the core; returns the core's JSON answer.

    ``progress(simulated_ns, total_ns, phase, phases, finished)`` is the core's own
    callback (see :func:`run` for the friendlier :class:`Progress`).
    """
    from . import _core

    cfg = json.dumps(scenario.variants[name])
    try:
        if progress is None:
            return _core.run_variant(cfg)
        return _core.run_variant(cfg, progress, every_s)
    except ScenarioError as e:
        raise _core_rejection(scenario, name, e) from None


def share_groups(scenario: Scenario, names: Iterable[str]) -> list[tuple[str, list[str]]]:
    """The variants ``names`` as groups that run their first phases once: each leader (in
    order) with the later variants that can take its first phases from its run (the core's
    ``share_plan``: the same phases up to a point and the same config but for what may
    differ after it: the test, logbias, an idle device's service times; see the README).
    A leader without followers runs alone."""
    return group_configs({n: json.dumps(scenario.variants[n]) for n in names})


K = TypeVar("K")


def group_configs(configs: dict[K, str]) -> list[tuple[K, list[K]]]:
    """:func:`share_groups` of resolved configs (JSON text) by key, in the dict's order."""
    from . import _core

    left = list(configs)
    groups = []
    while left:
        leader = left.pop(0)
        followers = [n for n in left if _core.share_plan(configs[leader], configs[n])[0] > 0]
        left = [n for n in left if n not in followers]
        groups.append((leader, followers))
    return groups


def split_shared(
    followers: list[K],
    outcomes: list[tuple[str, Any]],
    on_failed: Callable[[K, BaseException], BaseException] = lambda _k, e: e,
) -> tuple[dict[K, str], dict[K, str]]:
    """The core's ``run_shared`` answers for ``followers``: the forked ones' documents, and
    why each of the others must run from its start. A forked run that failed raises its
    error (``on_failed(follower, error)`` may name the follower in it)."""
    forked: dict[K, str] = {}
    cold: dict[K, str] = {}
    for k, (kind, payload) in zip(followers, outcomes):
        if kind == "forked":
            forked[k] = payload
        elif kind == "cold":
            cold[k] = payload
        else:
            raise on_failed(k, payload)
    return forked, cold


def share_jobs(scenario: Scenario, names: Iterable[str]) -> int:
    """Processes a shared run may use at once: the CPUs this process may run on, and no
    more than the memory available holds, the largest variant's estimated memory for each
    and once more for the snapshot the waiting followers keep (the fork's pages, copied as
    the running processes write theirs). 0: not even one process and a snapshot fit, so
    nothing is shared (each variant runs from its start)."""
    from . import resources

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    need = max((sum((scenario.memory.get(n) or resources.estimate_config(scenario.variants[n]) or {}).values()) for n in names), default=0)
    avail = resources.available_memory()
    if need > 0 and avail is not None:
        return max(0, min(cpus, avail // need - 1))
    return max(1, cpus)


def run(
    scenario: Union[str, Path, dict[str, Any], Scenario, None] = None,
    variants: Optional[Iterable[str]] = None,
    *,
    on_variant: Optional[Callable[[str, int, int], None]] = None,
    on_progress: Optional[Callable[[Progress], None]] = None,
    on_shared: Optional[Callable[[str, list[str], int], None]] = None,
    on_cold: Optional[Callable[[str, str], None]] = None,
    progress_every_s: float = 0.2,
    memory_check: bool = True,
    share: bool = True,
    jobs: Optional[int] = None,
) -> Result:
    """Runs a scenario (path, dict, loaded :class:`Scenario`, or None for the default).

    ``variants`` limits the run to those names. ``on_variant(name, index, total)`` is
    called before each variant runs. ``on_progress(p)`` is called while a variant runs
    with a :class:`Progress` (simulated time reached, the total when known, phase, wall
    time), at most once per report interval of simulated time and once per
    ``progress_every_s`` of wall time, and once when the variant ends (``p.finished``);
    it only observes (the result is the same without it), and an exception it raises
    stops the run. Ctrl-C stops a run within about ``progress_every_s`` either way.

    Before the first variant runs, the largest one's memory is estimated (see
    :func:`estimate_memory`); past what the machine has available it raises
    :class:`ResourceError` naming the variant, the estimate, the available memory and the
    largest parts. ``memory_check=False`` runs anyway.

    With ``share`` (the default), variants that begin with the same phases run them once
    (:func:`share_groups`): the leader's run forks after them and each follower goes on
    from that state with its own config, at most ``jobs`` processes at once (default:
    :func:`share_jobs`); the results are the same as without sharing, byte for byte.
    ``on_shared(leader, followers, jobs)`` is called before such a group runs; progress is
    reported for the leader (the followers run beside or after it) and for any follower
    that runs from its start after all: ``on_cold(name, why)`` is called for it first
    (a device it changes served I/O before the fork, its logs had logged).
    """
    from .results import Result
    from .scenario import Scenario, load_scenario

    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs={jobs!r}: a number of processes, 1 or more")
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, memory_check=memory_check)
    names = select_variants(sc, variants)
    if memory_check:
        from . import resources

        estimates = {n: sc.memory.get(n) or resources.estimate_config(sc.variants[n]) for n in names}
        resources.check_memory({n: e for n, e in estimates.items() if e is not None}, sc.source)
    # Every variant was checked by the core when the scenario loaded: a bad last variant
    # is not found after the first ones have run for minutes.
    answers: dict[str, str] = {}
    position = {n: i for i, n in enumerate(names)}

    def one(name: str) -> str:
        i = position[name]
        if on_variant is not None:
            on_variant(name, i, len(names))
        callback = None
        if on_progress is not None:
            callback = _progress_callback(on_progress, sc.name, name, i, len(names), time.monotonic())
        return run_variant(sc, name, callback, progress_every_s)

    for leader, followers in share_groups(sc, names) if share and len(names) > 1 else [(n, []) for n in names]:
        if not followers:
            answers[leader] = one(leader)
            continue
        n_jobs = jobs if jobs is not None else share_jobs(sc, [leader, *followers])
        if n_jobs == 0:
            for name in (leader, *followers):
                answers[name] = one(name)
            continue
        if on_shared is not None:
            on_shared(leader, followers, n_jobs)
        forked, cold = _run_group(sc, leader, followers, n_jobs, on_variant, on_progress, progress_every_s, position, len(names))
        answers.update(forked)
        for name, why in cold.items():
            if on_cold is not None:
                on_cold(name, why)
            answers[name] = one(name)
    answers = {n: answers[n] for n in names}
    return Result.from_core(sc.name, answers, {n: sc.variants[n] for n in names}, source=sc.source, description=sc.description)


def _run_group(
    sc: Scenario,
    leader: str,
    followers: list[str],
    jobs: int,
    on_variant: Optional[Callable[[str, int, int], None]],
    on_progress: Optional[Callable[[Progress], None]],
    every_s: float,
    position: dict[str, int],
    total: int,
) -> tuple[dict[str, str], dict[str, str]]:
    """One shared group through the core: the leader's document and each forked
    follower's; and why each of the others must run from its start (the caller runs them)."""
    from . import _core

    i = position[leader]
    if on_variant is not None:
        on_variant(leader, i, total)
    callback = None
    if on_progress is not None:
        callback = _progress_callback(on_progress, sc.name, leader, i, total, time.monotonic())
    try:
        doc, outcomes = _core.run_shared(
            json.dumps(sc.variants[leader]), [json.dumps(sc.variants[f]) for f in followers], jobs, callback, every_s
        )
    except ScenarioError as e:
        raise _core_rejection(sc, leader, e) from None
    forked, cold = split_shared(
        followers, outcomes, lambda name, e: _core_rejection(sc, name, e) if isinstance(e, ScenarioError) else e
    )
    return {leader: doc, **forked}, cold


def _progress_callback(
    on_progress: Callable[[Progress], None], scenario: str, name: str, index: int, variants: int, started: float
) -> Callable[[int, Optional[int], int, int, bool], None]:
    """The core's progress callback for one variant, handing ``on_progress`` a :class:`Progress`."""

    def callback(simulated_ns: int, total_ns: Optional[int], phase: int, phases: int, finished: bool) -> None:
        on_progress(
            Progress(scenario, name, index, variants, simulated_ns, total_ns, phase, phases, finished, time.monotonic() - started)
        )

    return callback
