"""``ztwin validate``: validate a scenario and print what the core would receive."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import _handle_errors, _stderr, app

@app.command("validate")
@_handle_errors
def validate_cmd(
    scenario: Path = typer.Argument(..., help="Scenario TOML."),
    no_memory_check: bool = typer.Option(False, "--no-memory-check", help="Accept variants whose estimated memory exceeds what the machine has available (building their stacks to check them takes most of it)."),
) -> None:
    """Validate a scenario as a run would (the core builds every variant's stack without
    running it) and print its resolved variants as JSON (what the core receives); on
    stderr, each variant's estimated memory and the variants that may share their first
    phases in a run."""
    from .. import check_variants, load_scenario
    from ..resources import check_memory, describe

    sc = load_scenario(scenario, memory_check=not no_memory_check)  # the core's checks included
    err = _stderr()
    for name in sc.variant_names:
        if name in sc.memory:
            err.print(f"memory: {escape(name)}: {escape(describe(sc.memory[name]))}")
    if not no_memory_check:
        # As a run would: refused past the memory available.
        check_memory(sc.memory, sc.source)
    if sc.not_built:
        # Memory was freed since they were estimated: the core's check, as for the others.
        check_variants(sc, [n for n in sc.variant_names if n in sc.not_built])
    from .. import share_groups

    for leader, followers in share_groups(sc, sc.variant_names):
        if followers:
            # What `ztwin run` will try to share (the check at the fork may still refuse it).
            err.print(f"shared: {escape(', '.join(followers))} may take the first phases from {escape(leader)}'s run")
    typer.echo(sc.to_json())
    err.print(f"[green]ok:[/] {escape(sc.source)}: {len(sc.variants)} variant(s): {escape(', '.join(sc.variant_names))}")
