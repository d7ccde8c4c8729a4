"""``ztwin report``: the HTML report of a saved run (``ztwin run --json [--full]``'s
document) or of a sweep's directory (see :mod:`ztwin.html_report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import _handle_errors, app


@app.command("report")
@_handle_errors
def report_cmd(
    source: Path = typer.Argument(..., help="RESULT.json (ztwin run --json; --full keeps the series the time series need) or a ztwin sweep directory."),
    output: Path = typer.Option(..., "--output", "-o", help="The HTML file to write."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also write each figure as DIR/<figure>.png."),
) -> None:
    """Write one self-contained HTML report (plots embedded) of a saved run or sweep."""
    from ..html_report import RunData, load_report_input, write_run_report, write_sweep_report

    data = load_report_input(source)
    if isinstance(data, RunData):
        path = write_run_report(data, output, png)
    else:
        path = write_sweep_report(data, output, png)
    typer.echo(f"report: {path}")
