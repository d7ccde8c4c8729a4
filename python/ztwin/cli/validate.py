"""``ztwin validate``: validate a scenario and print what the core would receive."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import _handle_errors, _stderr, app

@app.command("validate")
@_handle_errors
def validate_cmd(scenario: Path = typer.Argument(..., help="Scenario TOML.")) -> None:
    """Validate a scenario as a run would (the core builds every variant's stack without
    running it) and print its resolved variants as JSON (what the core receives)."""
    from .. import load_scenario

    sc = load_scenario(scenario)  # the core's checks included
    typer.echo(sc.to_json())
    _stderr().print(f"[green]ok:[/] {escape(sc.source)}: {len(sc.variants)} variant(s): {escape(', '.join(sc.variant_names))}")
