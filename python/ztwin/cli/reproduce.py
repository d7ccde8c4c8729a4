"""``ztwin reproduce``: the bundled experiments run, each real outcome beside the twin's figure."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from ..exceptions import ScenarioError
from .common import _handle_errors, _stderr, _stdout, app

@app.command("reproduce")
@_handle_errors
def reproduce_cmd(
    experiments: Optional[list[int]] = typer.Argument(
        None, help="Experiment numbers (default: 3 6 7 8, the calibration figures; 1 adds experiment 1's published outcomes)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the rows as one JSON document."),
) -> None:
    """Run the bundled experiments and print each real outcome beside the twin's figure."""
    from .. import reproduce

    chosen = tuple(experiments) if experiments else reproduce.DEFAULT_EXPERIMENTS
    try:
        rows = reproduce.reproduce(chosen, progress=lambda m: _stderr().print(f"running {m} ..."))
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    except FileNotFoundError as e:
        raise ScenarioError(f"{e} (ztwin reproduce runs the scenarios of a ztwin checkout)") from None
    if json_out:
        typer.echo(json.dumps([r.to_dict() for r in rows]))
        return
    t = Table(
        title="ztwin reproduce: real outcomes beside the twin's (ratio = twin / real; a range is the spread of the real runs)",
        title_justify="left",
    )
    for col in ("exp", "figure", "unit", "real", "twin", "ratio", "source"):
        t.add_column(col, justify="right" if col in ("exp", "real", "twin", "ratio") else "left")
    for r in rows:
        o = r.outcome
        match = "in range" if isinstance(o.real, tuple) else "match"
        ratio = match if r.in_range else ("-" if r.ratio is None else f"{r.ratio:.2f}")
        t.add_row(str(o.experiment), o.figure, o.unit, o.real_text(), reproduce.format_figure(r.twin), ratio, o.source)
    _stdout().print(t)
    close = sum(1 for r in rows if r.in_range or (r.ratio is not None and abs(r.ratio - 1) <= 0.10))
    _stdout().print(f"{close} of {len(rows)} figures within 10% of the real one (or inside the range of its runs)")
