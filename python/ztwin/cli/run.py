"""``ztwin run``: run a scenario's variants and print the report (or the summary as JSON),
with the run's progress on stderr (see :mod:`.progress`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from ..exceptions import ScenarioError
from .common import _handle_errors, _stderr, _stdout, app, run_overrides
from .progress import BarProgress, PlainProgress
from .report import arcstat_lines, fio_lines, fio_runs_table, phases_table, summary_table

@app.command("run")
@_handle_errors
def run_cmd(
    scenario: Optional[Path] = typer.Argument(None, help="Scenario TOML (default: the packaged experiment 1)."),
    json_out: bool = typer.Option(False, "--json", help="Print exactly one JSON document (the summary) on stdout."),
    full: bool = typer.Option(False, "--full", help="With --json: each variant's series and resolved config too (what ztwin report draws time series from)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the run's HTML report (one self-contained page) to FILE."),
    png: Optional[Path] = typer.Option(None, "--png", help="With --report: each figure as DIR/<figure>.png too."),
    csv_dir: Optional[Path] = typer.Option(None, "--csv", help="Write the series to DIR/<scenario>.series.csv (one long CSV, column 'variant' first)."),
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="Run only this variant (repeatable)."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Override the scenario's seed."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Override run.duration (e.g. '60s')."),
    warmup: Optional[str] = typer.Option(None, "--warmup", help="Override run.warmup (e.g. '0s')."),
    report_interval: Optional[str] = typer.Option(None, "--report-interval", help="Override run.report_interval (e.g. '10s')."),
    arcstat: str = typer.Option("window", "--arcstat", help="arcstat rows to print: 'window' (the measured window, at most 24 rows), 'all' (every interval from the warm-up on), 'none'."),
    summary_only: bool = typer.Option(False, "--summary-only", help="Print only the summary table(s): no arcstat rows, no fio report per run."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Show no progress on stderr."),
    no_memory_check: bool = typer.Option(False, "--no-memory-check", help="Run even when the largest variant's estimated memory exceeds what the machine has available."),
    no_share: bool = typer.Option(False, "--no-share", help="Run every variant from its start, even those that begin with the same phases as another (the results are the same; sharing only saves time)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, max=64, help="Processes at once for variants sharing their first phases (default: the CPUs, as many as the memory allows)."),
    uncertainty: Optional[int] = typer.Option(None, "--uncertainty", help="Run each variant again N times (2 to 32) with the presets' provisional parameters drawn within their ranges: qps, tps, p95 and CPU as bands, and the parameter that moves qps most."),
) -> None:
    """Run a scenario's variants and print what happened (simulated)."""
    from .. import load_scenario
    from .. import run as run_scenario
    from ..scenario import DEFAULT_SCENARIO

    if arcstat not in ("window", "all", "none"):
        raise ScenarioError(f"--arcstat: {arcstat!r}; one of window, all, none")
    if full and not json_out:
        raise ScenarioError("--full goes with --json (it adds the series and configs to the JSON document)")
    if png is not None and report is None:
        raise ScenarioError("--png goes with --report FILE (the PNGs are the report's figures)")
    if uncertainty is not None:
        from ..uncertainty import check_members

        check_members(uncertainty)
    run_over = {"duration": duration, "warmup": warmup, "report_interval": report_interval}
    overrides = run_overrides(seed, run_over)
    if report is not None:
        from .. import html_report

        html_report._plotly()  # a missing plotly is said before the run, not after it
    try:
        sc = load_scenario(scenario if scenario is not None else DEFAULT_SCENARIO, overrides=overrides or None, memory_check=not no_memory_check)
    except ScenarioError as e:
        if not overrides:
            raise
        given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in {"seed": seed, **run_over}.items() if v is not None)
        raise ScenarioError(f"{e}\n(with the command-line overrides {given})", errors=e.errors()) from None
    from .. import select_variants

    names = select_variants(sc, variant)
    err = _stderr()
    # Progress goes to stderr only: a bar on a terminal, plain lines into a pipe.
    check = not no_memory_check
    common = dict(memory_check=check, share=not no_share, jobs=jobs)
    if quiet:
        result = run_scenario(sc, names, **common)
    elif err.is_terminal:
        with BarProgress(err, sc.name) as bar:
            result = run_scenario(sc, names, on_variant=bar.on_variant, on_progress=bar, on_shared=bar.shared, on_cold=bar.cold, **common)
    else:
        plain = PlainProgress(lambda line: typer.echo(line, err=True))
        result = run_scenario(sc, names, on_progress=plain, on_shared=plain.shared, on_cold=plain.cold, **common)
    if csv_dir is not None:
        path = result.to_csv(csv_dir)
        err.print(f"series written to {escape(str(path))}")
    if report is not None:
        path = result.write_report(report, png)
        err.print(f"report written to {escape(str(path))}" + (f", figures to {escape(str(png))}" if png is not None else ""))
    ensemble = None
    if uncertainty is not None:
        from ..uncertainty import run_ensemble

        def on_member(name: str, i: int, n: int) -> None:
            if not quiet:
                err.print(f"uncertainty: {escape(name)} member {i + 1}/{n}")

        ensemble = run_ensemble(scenario if scenario is not None else DEFAULT_SCENARIO, names, uncertainty, overrides or None, check, on_member)
    if json_out:
        if ensemble is None:
            typer.echo(result.to_json(full=full))
        else:
            import json

            typer.echo(json.dumps(json.loads(result.to_json(full=full)) | {"uncertainty": ensemble}, indent=2))
        return
    out = _stdout()
    if summary_only:
        arcstat = "none"
    else:
        out.print(f"[bold]{escape(sc.name)}[/] ({escape(sc.source)}) - simulated by ztwin; numbers are model outputs, not measurements")
    for name in names if arcstat != "none" else []:
        lines = arcstat_lines(result.variant(name), rows=arcstat, limit=24 if arcstat == "window" else None)
        if lines:
            ri = sc.variants[name]["run"]["report_interval_ns"] / 1e9
            out.print(
                f"\n[bold]ARC, variant {escape(name)}[/] (arcstat-style; each row = the {ri:g} s interval ending at 'time', "
                "simulated s; rates per second; %: share of ARC accesses; arcsz, c: bytes at interval end)"
            )
            for line in lines:
                out.print(escape(line))
    title, table = summary_table(result.summary, result.configs)
    if summary_only:
        # The table alone still says what its numbers are.
        out.print(f"[bold]{escape(sc.name)}: {escape(title)}[/] - simulated by ztwin; model outputs, not measurements")
    else:
        out.print(f"\n[bold]{escape(title)}[/]")
    out.print(table)
    phases = phases_table(result.summary)
    if phases is not None:
        out.print(phases)
    for name in names if not summary_only else []:
        doc = result.summary["variants"][name]
        fio_phases = [p for p in doc.get("phases", []) if p.get("type") == "fio"]
        if not fio_phases:
            continue
        ver = sc.variants[name]["workload"].get("fio_version", "?")
        out.print(f"\n[bold]fio, variant {escape(name)}[/] (fio {escape(ver)} behaviour; simulated, not measured)")
        for p in fio_phases:
            out.print(f"[bold]{escape(p['name'])}[/]")
            for line in fio_lines(p):
                out.print(escape(line))
        t = fio_runs_table(name, doc)
        if t is not None:
            out.print(t)
    if ensemble is not None:
        out.print(_uncertainty_table(ensemble, result.summary))
        for name, e in ensemble["variants"].items():
            top = [r for r in e.get("sensitivity", []) if r["rho"] is not None][:3]
            if top:
                out.print(f"{escape(name)}: qps moved most by " + ", ".join(f"{escape(r['parameter'])} (rho {r['rho']:+.2f})" for r in top))
            elif e.get("bands", {}).get("qps"):
                out.print(f"{escape(name)}: qps is the same in every member: no provisional parameter moves it")
            for n in e.get("notes", []):
                out.print(f"[dim]note ({escape(name)}):[/] {escape(n)}")


def _uncertainty_table(ensemble: dict, summary: dict) -> "Table":
    """Each variant's nominal figures beside the ensemble's min / median / max."""
    from rich.table import Table

    from ..uncertainty import RUN_METRICS, _get_path

    t = Table(title=f"Uncertainty: {ensemble['members']} members per variant, provisional preset parameters drawn within their ranges", title_justify="left")
    for c in ("variant", "figure", "nominal", "min", "median", "max", "drawn", "failed"):
        t.add_column(c, justify="left" if c in ("variant", "figure") else "right")
    for name, e in ensemble["variants"].items():
        doc = summary["variants"].get(name, {})
        for m, path in RUN_METRICS:
            b = (e.get("bands") or {}).get(m)
            nom = _get_path(doc, path)
            if b is None and nom is None:
                continue
            f = (lambda v: "-" if v is None else f"{100 * v:.1f}%") if m == "cpu_utilization" else (lambda v: "-" if v is None else f"{v:,.2f}")
            t.add_row(name, m, f(nom), f(b and b["min"]), f(b and b["median"]), f(b and b["max"]), str(len(e["parameters"])), str(e.get("failed", 0)))
    return t
