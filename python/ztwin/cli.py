"""The ``ztwin`` command line (Typer + Rich).

``ztwin run [SCENARIO]``     run every variant (default: the packaged experiment 1)
``ztwin validate SCENARIO``  validate and print the resolved variants as JSON
``ztwin geometry ...``       block-pointer tree geometry of a ZFS file
``ztwin bench``              wall time, peak memory and simulated work per second
``ztwin reproduce [EXP...]`` the bundled experiments beside their real outcomes
``ztwin replay TRACE ...``   trace replay: hits and miss-ratio curves of lru, arc, zfs-arc
``ztwin bench-replay``       ztwin's lru and arc against libCacheSim's, requests per second

Errors of the scenario or the simulation print one red message on stderr and exit with
status 2; nothing else is ever shown as a traceback (set ``ZTWIN_DEBUG=1`` to see one).
With ``--json`` the only thing on stdout is one JSON document.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import units
from .exceptions import ScenarioError, SimulationError, ZtwinError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="ztwin: a performance digital twin of ZFS under database workloads.",
    pretty_exceptions_enable=False,
)

EXIT_USER = 2
EXIT_INTERNAL = 3


def _stdout() -> Console:
    # Piped or captured output has no terminal width; Rich would assume 80 columns and
    # truncate the wide tables (arcstat lines, runs). A file gets them whole.
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
    return Console(highlight=False, soft_wrap=True, width=width)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


_USER_ERROR_KIND = {"replay_cmd": "replay error", "bench_replay_cmd": "replay error", "geometry_cmd": "geometry error"}


def _handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turns ztwin errors into a red message and exit 2; anything else into exit 3."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
            raise
        except ZtwinError as e:
            # One prefix per command: replay and geometry take no scenario.
            kind = _USER_ERROR_KIND.get(fn.__name__) or (
                "scenario error" if isinstance(e, ScenarioError) else "simulation error"
            )
            _stderr().print(f"[bold red]{kind}:[/] [red]{escape(str(e))}[/]")
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


# ---------------------------------------------------------------------------------------
# run


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _num(x: Optional[float], fmt: str = ",.0f") -> str:
    return "-" if x is None else format(x, fmt)


def _gib(x: Optional[float]) -> str:
    return "-" if x is None else f"{x / 2**30:.2f}"


def arcstat_lines(doc: dict[str, Any]) -> list[str]:
    """arcstat-style rows (0.8 default columns, without the prefetch ones) from a variant's series.

    Each row covers the report interval ending at ``time`` (simulated seconds). ``read`` =
    ARC accesses/s (hits + misses, and 2.2's iohits), ``miss`` misses/s, ``dmis`` demand data misses/s,
    ``mmis`` demand metadata misses/s; the % columns are shares of ``read`` (arcstat
    divides dmis by demand reads; the series has no demand-read column). ``arcsz`` and
    ``c`` are the ARC size and target at the end of the interval.
    """
    s = doc.get("series") or {}
    t = s.get("time_s") or []
    need = ("arc_hits", "arc_misses", "arc_demand_data_misses", "arc_demand_metadata_misses", "arc_size", "arc_c")
    if not t or any(k not in s for k in need):
        return []
    hdr = f"{'time':>8} {'read':>8} {'miss':>7} {'miss%':>5} {'dmis':>7} {'dm%':>5} {'mmis':>7} {'mm%':>5} {'arcsz':>7} {'c':>7}"
    out = [hdr]
    prev = 0.0
    for i, ts in enumerate(t):
        dt = (ts - prev) if ts > prev else 1.0
        prev = ts
        hits, miss = s["arc_hits"][i], s["arc_misses"][i]
        dmis, mmis = s["arc_demand_data_misses"][i], s["arc_demand_metadata_misses"][i]
        read = hits + miss + (s["arc_iohits"][i] if "arc_iohits" in s else 0)
        share = (lambda n: f"{100 * n / read:5.0f}") if read else (lambda n: f"{'-':>5}")
        out.append(
            f"{ts:8.1f} {_abbr(read / dt):>8} {_abbr(miss / dt):>7} {share(miss)} {_abbr(dmis / dt):>7} {share(dmis)} "
            f"{_abbr(mmis / dt):>7} {share(mmis)} {_abbr(s['arc_size'][i], 1024):>7} {_abbr(s['arc_c'][i], 1024):>7}"
        )
    return out


def _abbr(x: float, base: int = 1000) -> str:
    """arcstat's number style: 3 significant figures with K/M/G/T."""
    for suffix in ("", "K", "M", "G", "T"):
        if abs(x) < base * 0.9995 or suffix == "T":
            return f"{x:.0f}{suffix}" if abs(x) >= 10 or suffix == "" else f"{x:.1f}{suffix}"
        x /= base
    return f"{x:.0f}"  # pragma: no cover


def _fio_num(x: float) -> str:
    """fio's num2str style: 3 significant figures with k/M."""
    for suffix, div in (("M", 1e6), ("k", 1e3)):
        if x >= div * 0.9995 and suffix:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def fio_lines(phase: dict[str, Any]) -> list[str]:
    """One fio phase as fio prints a job (or a group with group_reporting): IOPS,
    bandwidth in MiB/s and MB/s with the bytes and runtime, clat percentiles."""
    out = []
    f = phase.get("fio") or {}
    if not phase.get("timing_modelled", True):
        w = (f.get("write") or {}).get("io_bytes", 0)
        tot = (phase.get("files") or {}).get("total") or {}
        ratio = f", compressratio {tot['compressratio']:.2f}x" if "compressratio" in tot else ""
        out.append(f"{phase['name']}: write pass of {units.human_size(w)} (timing not modelled: contents only{ratio})")
        return out
    for job in f.get("jobs", []):
        out.append(f"{job['name']}: (groupid=0, jobs={job['jobs']})")
        for d in ("read", "write"):
            st = job.get(d)
            if not st or not st.get("ios"):
                continue
            bw = st["bw_mbps"] * 1e6
            ms = job["runtime_s"] * 1000
            # fio's bandwidth: binary then decimal units, KiB/s below 10 MiB/s.
            bws = f"{bw / 2**20:.0f}MiB/s ({bw / 1e6:.0f}MB/s)" if bw >= 10 * 2**20 else f"{bw / 2**10:.0f}KiB/s ({bw / 1e3:.0f}kB/s)"
            out.append(f"  {d}: IOPS={_fio_num(st['iops'])}, BW={bws}({units.human_size(st['io_bytes'])}/{ms:.0f}msec)")
            c = st["clat_ms"]
            out.append(f"    clat percentiles (msec): 50.00th=[{c['p50']:.3g}], 95.00th=[{c['p95']:.3g}], 99.00th=[{c['p99']:.3g}]")
    return out


def fio_runs_table(name: str, doc: dict[str, Any]) -> Optional[Table]:
    """The ARC run by run (fio phases): hit ratio, MRU/MFU hits, ghost hits, and MB/s."""
    rows = [p for p in doc.get("phases", []) if p.get("type") == "fio" and p.get("timing_modelled", True)]
    if not rows:
        return None
    t = Table(
        title=f"ARC per run, variant {name}: fio's read MB/s and IOPS; arcstats over each run (hit %: all"
        " accesses, indirect blocks included; data %: demand data only; hits of MRU, MFU, their ghosts, L2ARC)",
        title_justify="left",
    )
    # Short headers: the table must fit 80 columns (Rich's width when stdout is not a terminal).
    for col in ("run", "MB/s", "IOPS", "hit %", "data %", "MRU", "MFU", "MRU gh", "MFU gh", "L2"):
        t.add_column(col, justify="left" if col == "run" else "right", no_wrap=True)
    for p in rows:
        r = (p.get("fio") or {}).get("read") or {}
        a = p.get("arc") or {}
        h, m = a.get("hits"), a.get("misses")
        # arc_summary (2.2) counts iohits among the accesses, as neither hit nor miss.
        m = None if m is None else m + a.get("iohits", 0)
        hit = "-" if h is None or not (h + m) else f"{100 * h / (h + m):.1f}"
        dh, dm = a.get("demand_data_hits"), a.get("demand_data_misses")
        dhit = "-" if dh is None or not (dh + dm) else f"{100 * dh / (dh + dm):.1f}"
        l2 = (p.get("l2arc") or {}).get("l2_hits")
        t.add_row(
            p["name"], _num(r.get("bw_mbps"), ",.1f"), _num(r.get("iops"), ",.0f"), hit, dhit,
            _num(a.get("mru_hits")), _num(a.get("mfu_hits")), _num(a.get("mru_ghost_hits")), _num(a.get("mfu_ghost_hits")),
            _num(l2) if l2 is not None else "-",
        )
    return t


def phases_table(summary: dict[str, Any]) -> Optional[Table]:
    """One row per phase and variant, when a variant ran more than one phase."""
    variants = summary["variants"]
    if all(len(v.get("phases", [])) <= 1 for v in variants.values()):
        return None
    t = Table(title="Phases (simulated time; the summary above is the last workload phase's window)", title_justify="left")
    for col in ("variant", "phase", "type", "from (s)", "to (s)", "result"):
        t.add_column(col, justify="right" if col.endswith("(s)") else "left")
    for name, v in variants.items():
        for p in v.get("phases", []):
            if p["type"] == "workload":
                what = f"{_num(p['qps'], ',.1f')} queries/s over {_num(p['window_s'], 'g')} s"
            elif p["type"] == "fio" and not p.get("timing_modelled", True):
                what = "write pass: contents changed, timing not modelled"
            elif p["type"] == "fio":
                parts = []
                for d in ("read", "write"):
                    r = p["fio"].get(d) or {}
                    if r.get("ios"):
                        parts.append(f"{d} {_num(r.get('iops'), ',.0f')} IOPS, {_num(r.get('bw_mbps'), ',.1f')} MB/s")
                what = f"fio {'; '.join(parts) or 'no I/O'} over {_num(p['fio'].get('runtime_s'), '.1f')} s"
            elif p["type"] == "cat":
                what = f"{units.human_size(p['bytes_read'])} read at {_num(p['read_mbps'], ',.1f')} MB/s"
            elif p["type"] == "tune":
                what = "set " + ", ".join(f"{k} = {int(v) if isinstance(v, bool) else v}" for k, v in p.get("l2arc", {}).items())
            else:
                what = "caches emptied"
            t.add_row(name, p["name"], p["type"], f"{p['start_s']:.1f}", f"{p['end_s']:.1f}", what)
    return t


def summary_table(summary: dict[str, Any], configs: dict[str, dict[str, Any]]) -> tuple[str, Table]:
    """Its title line and the table: variants side by side; every row names its unit."""
    variants = summary["variants"]
    names = list(variants)
    windows = {v: variants[v].get("window_s") for v in names}
    warm = {v: configs.get(v, {}).get("run", {}).get("warmup_ns") for v in names}
    w = set(windows.values())
    title = "Summary of the measured window"
    if any("fio" in variants[n] for n in names):
        title = "Summary of the last measured fio run of each variant (simulated)"
    elif len(w) == 1:
        (ws,) = w
        wu = set(warm.values())
        title += f" ({_num(ws, 'g')} s of simulated time" + (f", after a {next(iter(wu)) / 1e9:g} s warm-up)" if len(wu) == 1 and None not in wu else ")")
    t = Table()
    t.add_column("metric (unit)", no_wrap=True)
    for n in names:
        t.add_column(n, justify="right")

    def row(label: str, fn: Callable[[dict[str, Any]], str]) -> None:
        t.add_row(label, *[fn(variants[n]) for n in names])

    def g(d: dict[str, Any], *path: str) -> Any:
        for p in path:
            if not isinstance(d, dict) or p not in d:
                return None
            d = d[p]
        return d

    fio = any("fio" in variants[n] for n in names)
    if fio:
        row("last fio run", lambda d: str(d.get("name", "-")))
        row("fio read IOPS", lambda d: _num(g(d, "fio", "read", "iops"), ",.0f"))
        row("fio read bandwidth (MB/s)", lambda d: _num(g(d, "fio", "read", "bw_mbps"), ",.1f"))
        for p in ("p50", "p95", "p99"):
            row(f"fio read clat {p} (ms)", lambda d, p=p: _num(g(d, "fio", "read", "clat_ms", p), ",.3f"))
        row("fio runtime (s)", lambda d: _num(g(d, "fio", "runtime_s"), ",.1f"))
    if len(w) > 1 and not fio:
        row("measured window (s)", lambda d: _num(d.get("window_s"), "g"))
    if len(set(warm.values())) > 1 and not fio:
        t.add_row("warm-up before the window (s)", *[_num((warm[n] or 0) / 1e9, "g") for n in names])
    if any("qps" in variants[n] for n in names):
        row("throughput (queries/s)", lambda d: _num(d.get("qps"), ",.1f"))
        row("transactions (tps)", lambda d: _num(d.get("tps"), ",.1f"))
        for p in ("p50", "p95", "p99", "max"):
            row(f"latency {p} (ms)", lambda d, p=p: _num(g(d, "latency_ms", p), ",.2f"))
    row("CPU utilization (% of all vCPUs)", lambda d: _pct(d.get("cpu_utilization")))
    devs: list[str] = []
    for n in names:
        for dev in (variants[n].get("devices") or {}):
            if dev not in devs:
                devs.append(dev)
    for dev in devs:
        row(f"{dev} reads (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "read_iops"), ",.0f"))
        row(f"{dev} reads (MB/s)", lambda d, dev=dev: _num(g(d, "devices", dev, "read_mbps"), ",.1f"))
        row(f"{dev} writes (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "write_iops"), ",.0f"))
        row(f"{dev} utilization (%)", lambda d, dev=dev: _pct(g(d, "devices", dev, "utilization")))
    if any("innodb" in variants[n] for n in names):
        row("InnoDB buffer pool hit ratio (%)", lambda d: _pct(g(d, "innodb", "buffer_pool_hit_ratio")))

    def arc_hit(d: dict[str, Any]) -> str:
        h, m = g(d, "arc", "hits"), g(d, "arc", "misses")
        io = g(d, "arc", "iohits") or 0
        return "-" if h is None or m is None or h + m + io == 0 else f"{100 * h / (h + m + io):.1f}"

    def per_s(key: str) -> Callable[[dict[str, Any]], str]:
        def f(d: dict[str, Any]) -> str:
            x, ws = g(d, "arc", key), d.get("window_s") or g(d, "fio", "runtime_s")
            return "-" if x is None or not ws else f"{x / ws:,.1f}"

        return f

    if any("arc" in variants[n] for n in names):
        row("ARC hit ratio (% of accesses)", arc_hit)
        row("ARC demand data misses (/s)", per_s("demand_data_misses"))
        row("ARC demand metadata misses (/s)", per_s("demand_metadata_misses"))
        row("ARC size at end (GiB)", lambda d: _gib(g(d, "arc", "size")))
        row("ARC target c at end (GiB)", lambda d: _gib(g(d, "arc", "c")))
        row("ARC metadata_size at end (GiB)", lambda d: _gib(g(d, "arc", "metadata_size")))
        row("ARC overhead_size: dbufs' copies (GiB)", lambda d: _gib(g(d, "arc", "overhead_size")))
    if any("compressratio" in variants[n] for n in names):
        row("compressratio (data records)", lambda d: "-" if d.get("compressratio") is None else f"{d['compressratio']:.2f}x")
    return title, t


@app.command("run")
@_handle_errors
def run_cmd(
    scenario: Optional[Path] = typer.Argument(None, help="Scenario TOML (default: the packaged experiment 1)."),
    json_out: bool = typer.Option(False, "--json", help="Print exactly one JSON document (the summary) on stdout."),
    csv_dir: Optional[Path] = typer.Option(None, "--csv", help="Write the series to DIR/<scenario>.series.csv (one long CSV, column 'variant' first)."),
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="Run only this variant (repeatable)."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Override the scenario's seed."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Override run.duration (e.g. '60s')."),
    warmup: Optional[str] = typer.Option(None, "--warmup", help="Override run.warmup (e.g. '0s')."),
    report_interval: Optional[str] = typer.Option(None, "--report-interval", help="Override run.report_interval (e.g. '10s')."),
) -> None:
    """Run a scenario's variants and print what happened (simulated)."""
    from . import load_scenario
    from . import run as run_scenario
    from .scenario import DEFAULT_SCENARIO

    overrides: dict[str, Any] = {}
    if seed is not None:
        overrides["seed"] = seed
    run_over = {"duration": duration, "warmup": warmup, "report_interval": report_interval}
    for key, text in run_over.items():
        if text is not None:
            try:
                units.parse_duration(text)
            except units.UnitError as e:
                raise ScenarioError(f"--{key.replace('_', '-')}: {e}") from None
    if any(v is not None for v in run_over.values()):
        overrides["run"] = {k: v for k, v in run_over.items() if v is not None}
    try:
        sc = load_scenario(scenario if scenario is not None else DEFAULT_SCENARIO, overrides=overrides or None)
    except ScenarioError as e:
        if not overrides:
            raise
        given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in {"seed": seed, **run_over}.items() if v is not None)
        raise ScenarioError(f"{e}\n(with the command-line overrides {given})", errors=e.errors()) from None
    from . import select_variants

    names = select_variants(sc, variant)
    err = _stderr()
    if json_out:
        result = run_scenario(sc, names)
    else:
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} variants"),
            TimeElapsedColumn(), console=err, transient=True,
        ) as progress:
            task = progress.add_task(f"{sc.name}", total=len(names))

            def on_variant(name: str, i: int, total: int) -> None:
                progress.update(task, completed=i, description=f"{sc.name}: {name}")

            result = run_scenario(sc, names, on_variant=on_variant)
            progress.update(task, completed=len(names))
    if csv_dir is not None:
        path = result.to_csv(csv_dir)
        err.print(f"series written to {escape(str(path))}")
    if json_out:
        typer.echo(result.to_json())
        return
    out = _stdout()
    out.print(f"[bold]{escape(sc.name)}[/] ({escape(sc.source)}) - simulated by ztwin; numbers are model outputs, not measurements")
    for name in names:
        lines = arcstat_lines(result.variant(name))
        if lines:
            ri = sc.variants[name]["run"]["report_interval_ns"] / 1e9
            out.print(
                f"\n[bold]ARC, variant {escape(name)}[/] (arcstat-style; each row = the {ri:g} s interval ending at 'time', "
                "simulated s; rates per second; %: share of ARC accesses; arcsz, c: bytes at interval end)"
            )
            for line in lines:
                out.print(escape(line))
    title, table = summary_table(result.summary, result.configs)
    out.print(f"\n[bold]{escape(title)}[/]")
    out.print(table)
    phases = phases_table(result.summary)
    if phases is not None:
        out.print(phases)
    for name in names:
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


# ---------------------------------------------------------------------------------------
# validate


@app.command("validate")
@_handle_errors
def validate_cmd(scenario: Path = typer.Argument(..., help="Scenario TOML.")) -> None:
    """Validate a scenario and print its resolved variants as JSON (what the core receives)."""
    from . import load_scenario

    sc = load_scenario(scenario)
    typer.echo(sc.to_json())
    _stderr().print(f"[green]ok:[/] {escape(sc.source)}: {len(sc.variants)} variant(s): {escape(', '.join(sc.variant_names))}")


# ---------------------------------------------------------------------------------------
# geometry

def geometry_request(file_size: int, recordsize: int, indirect_block_size: int, files: int) -> dict[str, Any]:
    """The JSON request of ``_core.geometry`` (contract in ``ztwin_core::fs::zfs::geometry``)."""
    return {
        "recordsize": recordsize,
        "indirect_block_size": indirect_block_size,
        "files": [{"size": file_size, "count": files}],
    }


def geometry_tables(answer: dict[str, Any]) -> list[Table]:
    """zdb-style levels of one file and of all files, then the metadata share by recordsize."""
    tables = []
    per_file = answer["per_file"]
    for title, levels in (
        (f"One file: {per_file['nlevels']}-level block-pointer tree (zdb -ddddd levels)", per_file["levels"]),
        (f"All {answer['files']} file(s)", answer["levels"]),
    ):
        t = Table(title=title, title_justify="left")
        t.add_column("level")
        t.add_column("blocks", justify="right")
        t.add_column("logical bytes", justify="right")
        for lv in sorted(levels, key=lambda x: -x["level"]):
            b = lv["logical_bytes"]
            t.add_row(f"L{lv['level']}", _num(lv["blocks"]), f"{_num(b)} ({units.human_size(b)})")
        tables.append(t)
    tables[-1].caption = (
        f"indirect blocks: {units.human_size(answer['metadata_bytes'])} logical, "
        f"{100 * answer['metadata_share']:.3f}% of the data"
    )
    share = Table(title="Metadata share by recordsize (indirect bytes / data bytes, logical)", title_justify="left")
    share.add_column("recordsize")
    share.add_column("metadata share (%)", justify="right")
    for row in answer["rule_of_thumb"]:
        share.add_row(units.format_size(row["recordsize"]).replace("iB", ""), f"{100 * row['metadata_share']:.2f}")
    tables.append(share)
    return tables


def _size_opt(text: str, opt: str) -> int:
    try:
        return units.parse_size(int(text) if text.isdigit() else text)
    except units.UnitError as e:
        raise ScenarioError(f"{opt}: {e}") from None


@app.command("geometry")
@_handle_errors
def geometry_cmd(
    file_size: Optional[str] = typer.Option(None, "--file-size", help="File size, e.g. '2.3GiB'."),
    recordsize: str = typer.Option("128K", "--recordsize", help="Dataset recordsize."),
    indirect_block_size: str = typer.Option("128K", "--indirect-block-size", help="Indirect block size (16K for files created under 0.6.x)."),
    files: int = typer.Option(1, "--files", min=1, help="Number of such files (totals scale)."),
    scenario: Optional[Path] = typer.Option(None, "--scenario", help="Take the files and dataset properties from a scenario's ZFS variant."),
    variant: Optional[str] = typer.Option(None, "--variant", help="With --scenario: the variant (default: its first ZFS variant)."),
    json_out: bool = typer.Option(False, "--json", help="Print the core's answer as is."),
) -> None:
    """Block-pointer tree of a ZFS file or dataset: blocks and bytes per level, metadata share by recordsize."""
    from . import _core
    from .scenario import load_scenario

    if scenario is not None:
        if file_size is not None:
            raise ScenarioError("--file-size and --scenario exclude each other: the scenario's tables give the files")
        sc = load_scenario(scenario)
        zfs = [n for n, c in sc.variants.items() if c["filesystem"]["type"] == "zfs"]
        name = variant or (zfs[0] if zfs else None)
        if name not in zfs:
            raise ScenarioError(f"--variant: scenario {scenario} has no ZFS variant named {name!r}; ZFS variants: {', '.join(zfs) or 'none'}")
        cfg = sc.variants[name]
        ds, fs = cfg["dataset"], cfg["filesystem"]
        size = _core.sysbench_table_bytes(ds["table_size"], cfg["database"]["innodb_page_size"])
        req = geometry_request(size, fs["recordsize"], fs["indirect_block_size"], ds["tables"])
        _stderr().print(f"{scenario}, variant {name}: {ds['tables']} sysbench table(s) of {ds['table_size']:,} rows, .ibd file {size:,} bytes")
    else:
        if file_size is None:
            raise ScenarioError("give --file-size SIZE (or --scenario FILE)")
        req = geometry_request(
            _size_opt(file_size, "--file-size"), _size_opt(recordsize, "--recordsize"),
            _size_opt(indirect_block_size, "--indirect-block-size"), files,
        )
    text = _core.geometry(json.dumps(req))
    if json_out:
        typer.echo(text)
        return
    out = _stdout()
    for t in geometry_tables(json.loads(text)):
        out.print(t)


@app.command("bench")
@_handle_errors
def bench_cmd(
    json_out: bool = typer.Option(False, "--json", help="Print the measurements as one JSON document."),
) -> None:
    """Measure the twin: experiment 1 at full scale for one simulated hour per variant, and experiment 3 (fio) in full."""
    from . import bench

    _stderr().print("probing this machine's memory ...")
    probes = [bench.memory_probe()]
    results = []
    for scenario, variant, warmup, duration in bench.all_cases():
        _stderr().print(f"running {scenario}:{variant} " + (f"for {duration} of simulated time ..." if duration else "in full ..."))
        results.append(bench.run_case(scenario, variant, warmup, duration))
    l2 = []
    for scenario, variant, duration in bench.L2ARC_CASES:
        _stderr().print(f"running {scenario}:{variant}: its warm-up phases, then {duration} of simulated time ...")
        l2.append(bench.run_l2arc_case(scenario, variant, duration))
    probes.append(bench.memory_probe())
    if json_out:
        docs = [dict(vars(r), accesses_per_wall_s=r.accesses_per_wall_s) for r in results]
        docs += [dict(vars(r), wall_s_per_simulated_hour=r.wall_s_per_simulated_hour) for r in l2]
        docs.append({"memory_probe_ns": {"before": probes[0], "after": probes[1]}})
        typer.echo(json.dumps(docs))
        return
    t = Table(title="ztwin bench (one process per case; wall time on this machine)", title_justify="left")
    for col in ("case", "wall (s)", "peak RSS (MiB)", "simulated/wall", "queries", "block accesses per wall s"):
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in results:
        t.add_row(
            r.case, f"{r.wall_s:.2f}", f"{r.peak_rss_mib:.0f}", f"{r.simulated_s / r.wall_s:.0f}x",
            _num(r.queries), f"{r.accesses_per_wall_s / 1e6:.2f} M",
        )
    _stdout().print(t)
    _stdout().print("block accesses = InnoDB buffer-pool page lookups + ARC block lookups (one per tree level)")
    t = Table(title="L2ARC (targets: under 60 s, 4 GiB, 48 bytes per L2 block)", title_justify="left")
    for col in ("case", "wall (s)", "wall s per simulated h", "peak RSS (MiB)", "L2 blocks", "bytes per L2 block", "RSS bytes per L2 block"):
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in l2:
        t.add_row(
            r.case, f"{r.wall_s:.1f}", f"{r.wall_s_per_simulated_hour:.1f}", f"{r.peak_rss_mib:.0f}",
            _num(r.l2_blocks), f"{r.bytes_per_l2_block:.1f}", f"{r.rss_bytes_per_l2_block:.1f}",
        )
    _stdout().print(t)
    _stdout().print(
        "bytes per L2 block = the simulator's L2ARC ring and index per block on the device; RSS bytes = peak RSS"
        " less that of the variant without its cache device, per block"
    )
    before, after = probes
    _stdout().print(
        "memory: one dependent random read took "
        + ", ".join(f"{before[k]:.0f} ns over {k}" for k in before)
        + " before the cases, "
        + ", ".join(f"{after[k]:.0f} ns over {k}" for k in after)
        + " after (the full-scale cases wait mostly on such reads: compare wall times across machines by these)"
    )


# ---------------------------------------------------------------------------------------
# reproduce


@app.command("reproduce")
@_handle_errors
def reproduce_cmd(
    experiments: Optional[list[int]] = typer.Argument(
        None, help="Experiment numbers (default: 3 6 7 8, the calibration figures; 1 adds experiment 1's published outcomes)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the rows as one JSON document."),
) -> None:
    """Run the bundled experiments and print each real outcome beside the twin's figure."""
    from . import reproduce

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


# ---------------------------------------------------------------------------------------
# replay


@app.command("replay")
@_handle_errors
def replay_cmd(
    trace: Path = typer.Argument(..., help="Trace file (.lis, csv, oracleGeneral, vscsi, blkparse, text; zstd or not)."),
    policy: list[str] = typer.Option(["lru"], "--policy", "-p", help="lru, arc or zfs-arc; repeat or comma-separate."),
    size: Optional[str] = typer.Option(None, "--size", help="Cache size: blocks (32768) or bytes with a unit (16MiB)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Several sizes: a list (1024,4096) or a range (1024:65536:x2, 1000:10000:1000)."),
    block_size: Optional[str] = typer.Option(None, "--block-size", help="Bytes per block (default 512 for .lis, 4K otherwise)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Trace format (default: detected): lis, csv, oracle, vscsi, blkparse, txt."),
    release: Optional[str] = typer.Option(None, "--release", help="OpenZFS release of zfs-arc: 0.6, 0.8, 2.1, 2.2 (default)."),
    shards: Optional[float] = typer.Option(None, "--shards", help="SHARDS spatial sampling rate in (0, 1], e.g. 0.01."),
    max_requests: Optional[int] = typer.Option(None, "--max-requests", min=1, help="Replay only the first N requests."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the miss-ratio curves to this PNG or SVG."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Replay a block trace through cache policies: hits, misses, hit ratio, miss-ratio curves."""
    from . import replay as rp

    pols = [p.strip() for item in policy for p in item.split(",") if p.strip()]
    if size is not None and sizes is not None:
        raise ScenarioError("--size and --sizes exclude each other")
    if not trace.exists():
        raise ScenarioError(f"{trace}: no such trace file")
    bs = _size_opt(block_size, "--block-size") if block_size is not None else rp.default_block_size(trace, fmt)
    res = rp.replay(
        trace, pols, sizes if sizes is not None else (size or "1024"), block_size=bs, format=fmt,
        release=release, shards=shards, max_requests=max_requests,
    )
    if plot is not None:
        path = rp.plot(res, plot)
        _stderr().print(f"miss-ratio curves written to {escape(str(path))}")
    if json_out:
        typer.echo(res.to_json())
        return
    d = res.doc
    out = _stdout()
    samp = f", SHARDS rate {d['shards']:g} ({d['sampled_requests']:,} requests simulated; counts estimated)" if d.get("shards") else ""
    out.print(
        f"[bold]{escape(str(trace))}[/] ({d['format']}): {d['requests']:,} requests, {d['unique']:,} unique ids, "
        f"blocks of {d['block_size']} B{samp}; {d['wall_s']:.2f} s"
    )
    t = Table()
    for col in ("policy", "blocks", "bytes", "hits", "misses", "hit %", "final target"):
        t.add_column(col, justify="left" if col in ("policy", "final target") else "right", no_wrap=True)
    for r in d["results"]:
        tg = r.get("target")
        if tg is None:
            ts = "-"
        elif "pd" in tg:
            ts = f"c {_abbr(tg['c'], 1024)} pd {tg['pd']:.2f}"
        elif "c" in tg:
            ts = f"c {_abbr(tg['c'], 1024)} p {_abbr(tg['p'], 1024)}"
        else:
            ts = f"p {tg['p']:.1f}"
        t.add_row(r["policy"], _num(r["size"]), units.human_size(r["size_bytes"]), _num(r["hits"]), _num(r["misses"]), f"{100 * r['hit_ratio']:.2f}", ts)
    out.print(t)
    out.print("final target: arc p = T1 target (blocks); zfs-arc c = ARC target (bytes) and p (0.8/2.1, bytes) or pd (2.2, MRU share of data)")


@app.command("bench-replay")
@_handle_errors
def bench_replay_cmd(
    trace: Optional[Path] = typer.Argument(None, help="Trace (default: the ARC paper's P6 from ../shared/traces, converted to oracleGeneral in a temp dir)."),
    sizes: str = typer.Option("32768", "--sizes", help="Cache sizes in blocks."),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Runs per case; the fastest counts."),
    mem_size: int = typer.Option(262144, "--mem-size", min=1024, help="Cache size (blocks) of the memory measurement (large, so the resident-memory delta is well above noise)."),
    json_out: bool = typer.Option(False, "--json", help="Print the measurements as one JSON document."),
) -> None:
    """ztwin's lru and arc against libCacheSim's on the same oracleGeneral trace, one thread, side by side."""
    import tempfile

    from . import _core, bench
    from . import replay as rp

    try:
        import libcachesim  # noqa: F401
    except ImportError:
        raise ScenarioError("bench-replay needs libCacheSim: pip install libcachesim") from None
    if trace is None:
        src = Path(__file__).resolve().parents[2] / "../shared/traces/arc-paper/P6.lis.zst"
        if not src.exists():
            src = Path("/work/shared/traces/arc-paper/P6.lis.zst")
        if not src.exists():
            raise ScenarioError("give a TRACE (the default P6.lis.zst was not found)")
        trace = Path(tempfile.gettempdir()) / "ztwin-bench-P6.oracleGeneral.bin"
        if not trace.exists():
            _stderr().print(f"converting {src} to oracleGeneral at {trace} ...")
            _core.trace_to_oracle(str(src), str(trace))
    elif _core.trace_format(str(trace)) != "oracle":
        conv = Path(tempfile.gettempdir()) / f"ztwin-bench-{trace.name}.oracleGeneral.bin"
        _stderr().print(f"converting {trace} to oracleGeneral at {conv} (libCacheSim reads it fastest) ...")
        _core.trace_to_oracle(str(trace), str(conv))
        trace = conv
    rows = bench.bench_replay(str(trace), rp.parse_sizes(sizes, 1, "--sizes"), repeat)
    mem = []
    for policy in ("lru", "arc"):
        big = mem_size
        hp = bench.hashpower_for(big)
        z = bench.mem_case("ztwin", str(trace), policy, big, hp)
        lc = bench.mem_case("lcs", str(trace), policy, big, hp)
        mem.append({"policy": policy, "size": big, "ztwin_bytes_per_entry": z["bytes"] / max(z["entries"], 1),
                    "libcachesim_rss_bytes_per_entry": lc["bytes"] / max(lc["n_obj"], 1)})
    if json_out:
        typer.echo(json.dumps({"trace": str(trace), "runs": rows, "memory": mem}))
        return
    t = Table(title=f"ztwin vs libCacheSim on {trace.name} (one thread, best of {repeat}, same process)", title_justify="left")
    for col in ("policy", "size", "hits ztwin", "hits libCacheSim", "ztwin M req/s", "libCacheSim M req/s", "ratio"):
        t.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        t.add_row(r["policy"], _num(r["size"]), _num(r["ztwin_hits"]), _num(r["libcachesim_hits"]),
                  f"{r['ztwin_req_per_s'] / 1e6:.1f}", f"{r['libcachesim_req_per_s'] / 1e6:.1f}", f"{r['ratio']:.2f}x")
    _stdout().print(t)
    m = Table(title="memory per cached entry (fresh process each; arc: ghosts' memory included, divided by cached entries)", title_justify="left")
    for col in ("policy", "size", "ztwin (bytes allocated by its structures)", "libCacheSim (anonymous RSS growth)"):
        m.add_column(col, justify="left" if col == "policy" else "right")
    for r in mem:
        m.add_row(r["policy"], _num(r["size"]), f"{r['ztwin_bytes_per_entry']:.1f}", f"{r['libcachesim_rss_bytes_per_entry']:.1f}")
    _stdout().print(m)
    _stdout().print("libCacheSim with hashpower = log2(size) + 2 (its best setting); requests per second include reading the trace")


def main() -> None:
    """Entry point of the ``ztwin`` script."""
    app(prog_name="ztwin")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
