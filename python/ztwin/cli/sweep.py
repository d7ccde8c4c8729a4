"""``ztwin sweep``: a scenario over a grid of keys (``--set KEY=V1,V2,...``), on Ray when it
is installed (else in-process), into ``DIR/results.parquet``, ``DIR/sweep.json`` and
``DIR/report.html`` (see :mod:`ztwin.sweeps`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from .common import _handle_errors, _stderr, app, run_overrides


@app.command("sweep")
@_handle_errors
def sweep_cmd(
    scenario: Path = typer.Argument(..., help="Scenario TOML."),
    set_: list[str] = typer.Option(..., "--set", help="KEY=V1,V2,...: a dotted scenario key as written in TOML and its values (repeatable: the grid is the product)."),
    out: Path = typer.Option(..., "--out", help="Directory for results.parquet, sweep.json and report.html."),
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="Run only this variant (repeatable)."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Override run.duration (e.g. '60s')."),
    warmup: Optional[str] = typer.Option(None, "--warmup", help="Override run.warmup (e.g. '0s')."),
    report_interval: Optional[str] = typer.Option(None, "--report-interval", help="Override run.report_interval (e.g. '10s')."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Override the scenario's seed (every point runs on the same seed)."),
    ray_address: Optional[str] = typer.Option(None, "--ray", help="Run on the existing Ray cluster at ADDRESS (default: a local cluster started for the sweep)."),
    no_share: bool = typer.Option(False, "--no-share", help="Run every point from its start, even those whose runs begin with the same phases as another's (the results are the same; sharing only saves time)."),
    no_ray: bool = typer.Option(False, "--no-ray", help="Run the points in-process, one after another, even when Ray is installed."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="CPUs of the local Ray cluster (default: the machine's)."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also write each figure of the report as DIR/<figure>.png."),
    no_report: bool = typer.Option(False, "--no-report", help="Write no report.html."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the paths written."),
    no_memory_check: bool = typer.Option(False, "--no-memory-check", help="Run even when a point's estimated memory exceeds the machine's available memory (its share of it, per worker)."),
) -> None:
    """Run a scenario over a grid of keys; results as parquet, and an HTML report."""
    from ..sweeps import SweepError, run_sweep

    if no_ray and ray_address is not None:
        raise SweepError("--no-ray and --ray: choose one")
    err = _stderr()
    overrides = run_overrides(seed, {"duration": duration, "warmup": warmup, "report_interval": report_interval})

    def note(msg: str) -> None:
        err.print(f"[yellow]note:[/] {escape(msg)}")

    def done(k: int, n: int, label: str) -> None:
        if not quiet:
            err.print(f"sweep: {k}/{n} done ({escape(label)})")

    sw = run_sweep(
        scenario, set_, variant, overrides=overrides, use_ray=False if no_ray else None, ray_address=ray_address,
        workers=workers, memory_check=not no_memory_check, on_note=note if not quiet else None, on_done=done,
        share=not no_share,
    )
    paths = sw.write(out, report=not no_report, png_dir=png)
    n = sw.frame().height
    err.print(f"{len(sw.points)} points x {len(sw.variants)} variants ({sw.backend}): {n} rows")
    for what, p in paths.items():
        typer.echo(f"{what}: {p}")
    if png is not None:
        typer.echo(f"png: {png}")
