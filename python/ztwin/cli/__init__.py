"""The ``ztwin`` command line (Typer + Rich).

``ztwin run [SCENARIO]``     run every variant (default: the packaged experiment 1)
``ztwin sweep SCENARIO ...`` a grid of scenario keys, on Ray or in-process, with its report
``ztwin advise Q SCENARIO`` a sizing question (arc, recordsize, memory-split) answered by runs
``ztwin report SRC -o F``    the HTML report of a saved run or a sweep directory
``ztwin validate SCENARIO``  validate and print the resolved variants as JSON
``ztwin geometry ...``       block-pointer tree geometry of a ZFS file
``ztwin bench``              wall time, peak memory and simulated work per second
``ztwin reproduce [EXP...]`` the bundled experiments beside their real outcomes
``ztwin replay TRACE ...``   trace replay: hits and miss-ratio curves of lru, arc, zfs-arc
``ztwin bench-replay``       ztwin's lru and arc against libCacheSim's, requests per second

Errors of the scenario or the simulation print one red message on stderr, prefixed by
the command ("run error: ..."), and exit with status 2; nothing else is ever shown as a
traceback (set ``ZTWIN_DEBUG=1`` to see one). With ``--json`` the only thing on stdout is
one JSON document; progress goes to stderr.

One module per command (``bench-replay`` lives with ``replay``); :mod:`.report` has the
tables ``ztwin run`` prints (:mod:`.html` is ``ztwin report``, the HTML page), :mod:`.progress` its progress display, and :mod:`.common`
what every command shares: the app, the consoles, the error handling and number formats.
"""

from __future__ import annotations

import sys

from .common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USER, app
from .report import arcstat_lines, fio_lines, fio_runs_table, phases_table, summary_table

# Importing a command's module registers it; ``ztwin --help`` lists the commands in this order.
# isort: off
from .run import run_cmd
from .sweep import sweep_cmd
from .advise import advise_cmd
from .html import report_cmd
from .validate import validate_cmd
from .geometry import geometry_cmd, geometry_request, geometry_tables
from .bench import bench_cmd
from .reproduce import reproduce_cmd
from .replay import bench_replay_cmd, replay_cmd
# isort: on

__all__ = [
    "app",
    "main",
    "EXIT_USER",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "arcstat_lines",
    "fio_lines",
    "fio_runs_table",
    "phases_table",
    "summary_table",
    "geometry_request",
    "geometry_tables",
    "run_cmd",
    "sweep_cmd",
    "advise_cmd",
    "report_cmd",
    "validate_cmd",
    "geometry_cmd",
    "bench_cmd",
    "reproduce_cmd",
    "replay_cmd",
    "bench_replay_cmd",
]


def main() -> None:
    """Entry point of the ``ztwin`` script."""
    if sys.argv[1:2] == ["replay"]:
        # The replay command parses its own options; Typer's parsing alone (it builds a
        # pydantic adapter per option) took longer than replaying a million requests.
        from .replay import replay_direct

        sys.exit(replay_direct(sys.argv[2:]))
    app(prog_name="ztwin")
