"""What every ``ztwin`` command shares: the Typer app, the consoles, the handling of
errors, and number formats.

A ztwin error (of the scenario, the simulation, a trace) prints one red message on stderr
and exits with status 2 (``EXIT_USER``); anything else is reported as an internal error
with status 3 (``EXIT_INTERNAL``), never as a traceback unless ``ZTWIN_DEBUG=1``; Ctrl-C
says "<command> interrupted" and exits with 130 (``EXIT_INTERRUPTED``). One rule
names every error: the command's own name, as typed ("run error: ...", "replay error:
...", "bench-replay error: ..."); what went wrong is in the message (a simulation failure
says "the simulation failed").
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.markup import escape

from .. import units
from ..exceptions import ScenarioError, SimulationError, ZtwinError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="ztwin: a performance digital twin of ZFS under database workloads.",
    pretty_exceptions_enable=False,
)

EXIT_USER = 2
EXIT_INTERNAL = 3
#: Ctrl-C, as a shell reports a process killed by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


def _stdout() -> Console:
    # Piped or captured output has no terminal width; Rich would assume 80 columns and
    # truncate the wide tables (arcstat lines, runs). A file gets them whole.
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
    return Console(highlight=False, soft_wrap=True, width=width)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turns ztwin errors into a red message and exit 2; anything else into exit 3."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            # Ctrl-C stops a run within a fraction of a second (the core checks for it).
            _stderr().print(f"[bold red]{escape(_command_name(fn))} interrupted[/]")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except ZtwinError as e:
            what = f"the simulation failed: {e}" if isinstance(e, SimulationError) else str(e)
            _stderr().print(f"[bold red]{escape(_command_name(fn))} error:[/] [red]{escape(what)}[/]")
            raise typer.Exit(EXIT_USER) from None
        except BaseException as e:  # noqa: BLE001 - includes pyo3's PanicException
            if os.environ.get("ZTWIN_DEBUG"):
                raise
            where = "the simulation core" if type(e).__name__ == "PanicException" else "ztwin"
            _stderr().print(
                f"[bold red]internal error in {where}:[/] [red]{escape(type(e).__name__)}: {escape(str(e))}[/]\n"
                "This is a bug; please report it with the scenario (ZTWIN_DEBUG=1 shows the traceback)."
            )
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper


def _current_context() -> Any:
    """The running click context, or None. Typer 0.2x carries its own copy of click
    (``typer._click``) and no longer installs click; older Typer runs on click itself."""
    try:
        from typer._click.globals import get_current_context  # type: ignore[import-not-found]
    except ImportError:
        from click import get_current_context
    return get_current_context(silent=True)


def _command_name(fn: Callable[..., Any]) -> str:
    """The running command's name as typed (``bench-replay``), else the function's (``bench_replay_cmd``)."""
    ctx = _current_context()
    if ctx is not None and ctx.info_name:
        return ctx.info_name
    return fn.__name__.removesuffix("_cmd").replace("_", "-")


def _num(x: Optional[float], fmt: str = ",.0f") -> str:
    return "-" if x is None else format(x, fmt)


def _abbr(x: float, base: int = 1000) -> str:
    """arcstat's number style: 3 significant figures with K/M/G/T."""
    for suffix in ("", "K", "M", "G", "T"):
        if abs(x) < base * 0.9995 or suffix == "T":
            return f"{x:.0f}{suffix}" if abs(x) >= 10 or suffix == "" else f"{x:.1f}{suffix}"
        x /= base
    return f"{x:.0f}"  # pragma: no cover


def _size_opt(text: str, opt: str) -> int:
    try:
        return units.parse_size(int(text) if text.isdigit() else text)
    except units.UnitError as e:
        raise ScenarioError(f"{opt}: {e}") from None


def run_overrides(seed: Optional[int], run_over: dict[str, Optional[str]]) -> dict[str, Any]:
    """The table ``--seed``, ``--duration``, ``--warmup`` and ``--report-interval`` set in every variant."""
    overrides: dict[str, Any] = {}
    if seed is not None:
        overrides["seed"] = seed
    for key, text in run_over.items():
        if text is not None:
            try:
                units.parse_duration(text)
            except units.UnitError as e:
                raise ScenarioError(f"--{key.replace('_', '-')}: {e}") from None
    if any(v is not None for v in run_over.values()):
        overrides["run"] = {k: v for k, v in run_over.items() if v is not None}
    return overrides
