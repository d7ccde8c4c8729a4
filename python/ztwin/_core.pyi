"""Stubs of the compiled core (crates/ztwin-py). JSON text in, JSON text out."""

from typing import Callable

def run_variant(
    config_json: str,
    progress: Callable[[int, int | None, int, int, bool], object] | None = None,
    every_s: float = 0.2,
) -> str:
    """Runs one resolved variant (JSON of the core's ``VariantConfig``); returns the result as JSON.

    The GIL is released during the run. At most every ``every_s`` seconds of wall time
    (and at most once per report interval of simulated time) the run checks for signals
    and calls ``progress(simulated_ns, total_ns, phase, phases, finished)`` (``total_ns``
    None when a phase ends when its work is done), and once more at the end with
    ``finished`` True. An exception there (KeyboardInterrupt from Ctrl-C, or one the
    callback raises) stops the run and is raised. The result is the same with or without
    a callback.

    Raises ``ztwin.exceptions.ScenarioError`` when the core rejects the configuration and
    ``ztwin.exceptions.SimulationError`` when the simulation fails.
    """

def run_shared(
    leader_json: str,
    followers_json: list[str],
    jobs: int = 1,
    progress: Callable[[int, int | None, int, int, bool], object] | None = None,
    every_s: float = 0.2,
) -> tuple[str, list[tuple[str, object]]]:
    """Runs ``leader_json`` and, from the same run, each follower that can take its first
    phases from it (a fork after the shared phases; at most ``jobs`` processes at once;
    ``progress`` watches the leader as for ``run_variant``). Returns the leader's result
    and per follower ``("forked", result_json)``, ``("cold", why)`` (run it yourself) or
    ``("failed", exception)``. The leader's own errors are raised."""

def share_plan(leader_json: str, other_json: str) -> tuple[int, str | None]:
    """How many leading phases ``other`` can take from a run of ``leader``: ``(n, None)``,
    or ``(0, why not)``."""

def check_variant(config_json: str) -> None:
    """Checks one resolved variant as a run would (the whole stack is built, not run).

    Raises ``ztwin.exceptions.ScenarioError`` with the run's message when it would fail.
    """

def estimate_memory(config_json: str) -> str:
    """The estimated peak memory of running one resolved variant, without building it:
    ``{"total": bytes, "parts": {name: bytes}}``. Raises ``ScenarioError`` on a config the
    core refuses."""

def geometry(request_json: str) -> str:
    """Block-pointer tree geometry: JSON request, JSON answer (raises ScenarioError on a bad request)."""

def version() -> str:
    """Version of the core crate."""

def sysbench_table_bytes(rows: int, page_size: int) -> int:
    """Size in bytes of one sysbench table's .ibd file as the core lays it out."""

def replay(spec_json: str) -> str:
    """Trace replay: JSON of ``ReplaySpec`` in (trace, format, policies, sizes in entries,
    block_size, release, shards, max_requests, threads), JSON answer out (trace, format,
    requests, unique, results). Raises ScenarioError on a bad trace or request."""

def replay_simulate(request_json: str) -> str:
    """One policy at one size, single thread: {"trace", "policy", "size"} in;
    {"requests", "hits", "wall_s", "heap_bytes", "entries", "target"} out."""

def trace_to_oracle(src: str, dst: str, format: str | None = None, max_requests: int | None = None) -> int:
    """Writes a trace as libCacheSim's oracleGeneral binary; returns the requests written."""

def trace_format(path: str) -> str:
    """The trace's format as detected from its content (lis, csv, oracle, vscsi, blkparse, txt)."""
