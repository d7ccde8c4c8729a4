"""``ztwin advise QUESTION SCENARIO``: a question (arc, recordsize, memory-split, slog, compression, l2arc) answered
by runs of the scenario's variant (see :mod:`ztwin.advise`): the recommended value, the
points behind it and the mechanism in a sentence; ``--json`` as one document."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from .common import _handle_errors, _stderr, _stdout, app, run_overrides

#: The columns the table shows, when a question's points have them: (column, header, format).
_COLUMNS: list[tuple[str, str, str]] = [
    ("zfs_arc_max", "zfs_arc_max", "s"),
    ("innodb_buffer_pool_size", "buffer pool", "s"),
    ("recordsize", "recordsize", "s"),
    ("compression", "compression", "s"),
    ("log_device", "log device", "s"),
    ("l2arc_size", "cache device", "s"),
    ("l2arc_write_max", "l2arc_write_max", "s"),
    ("scale", "scale", "g"),
    ("qps", "qps", ",.1f"),
    ("tps", "tps", ",.1f"),
    ("latency_p50_ms", "p50 ms", ",.2f"),
    ("latency_p95_ms", "p95 ms", ",.2f"),
    ("latency_p99_ms", "p99 ms", ",.2f"),
    ("cpu_utilization", "CPU %", "%"),
    ("demand_metadata_misses_per_s", "dm misses/s", ",.1f"),
    ("demand_metadata_misses_per_query", "dm misses/query", ".4f"),
    ("arc_hit_ratio", "ARC hit %", "%"),
    ("arc_demand_data_hit_ratio", "ARC dd hit %", "%"),
    ("innodb_buffer_pool_hit_ratio", "BP hit %", "%"),
    ("arc_meta_used", "arc_meta_used", "size"),
    ("arc_metadata_size", "metadata_size", "size"),
    ("arc_c", "c", "size"),
    ("read_iops", "read IOPS", ",.0f"),
    ("read_mbps", "read MB/s", ",.1f"),
    ("avg_read_kib", "avg read KiB", ",.1f"),
    ("write_iops", "write IOPS", ",.0f"),
    ("write_mbps", "write MB/s", ",.1f"),
    ("compressratio", "compressratio", ".2f"),
    ("l2_size", "l2_size", "size"),
    ("l2_hdr_size", "l2_hdr_size", "size"),
    ("read_share_l2arc", "L2 share %", "%"),
    ("cache_read_iops", "cache reads/s", ",.0f"),
    ("warmup_qps_s", "qps warm at s", ",.0f"),
    ("write_amplification", "write ampl.", ".2f"),
    ("zil_commit_count", "zil commits", ",d"),
    ("zil_itx_metaslab_normal_bytes", "ZIL to pool", "size"),
    ("zil_itx_metaslab_slog_bytes", "ZIL to slog", "size"),
    ("warmup_s", "warm-up s", "g"),
    ("role", "run", "s"),
    ("passes", "passes", "s"),
    ("chosen", "answer", "s"),
]


def _cell(v: Any, f: str) -> str:
    from .. import units

    if v is None:
        return "-"
    if f == "%":
        return f"{100 * v:.1f}"
    if f == "size":
        return units.human_size(v)
    if f == "s":
        return str(v).lower() if isinstance(v, bool) else str(v)
    try:
        return format(v, f)
    except (TypeError, ValueError):
        return str(v)


def _points_table(advice: Any) -> Table:
    rows = advice.points
    t = Table(title=f"Points ({len(rows)}; each a run of variant {advice.variant})", title_justify="left")
    cols = []
    for col, head, f in _COLUMNS:
        key = col
        if col in ("read_iops",) and not any("read_iops" in r for r in rows):
            key = next((c for c in (rows[0] if rows else {}) if c.endswith("_read_iops")), col)
        if any(key in r and r[key] is not None for r in rows):
            cols.append((key, head, f))
            t.add_column(head, justify="left" if f == "s" else "right")
    for r in rows:
        if "refused" in r:
            t.add_row(*[_cell(r.get(k), f) if k in r else ("refused" if i == 1 else "") for i, (k, _h, f) in enumerate(cols)])
            continue
        t.add_row(*[_cell(r.get(k), f) for k, _h, f in cols])
    return t


@app.command("advise")
@_handle_errors
def advise_cmd(
    question: str = typer.Argument(..., help="The question: arc, recordsize, memory-split, slog, compression, l2arc."),
    scenario: Path = typer.Argument(..., help="Scenario TOML."),
    variant: Optional[str] = typer.Option(None, "--variant", help="The variant to advise on (default: its first one the question applies to)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document: question, answer, points, explanation (and criterion, notes, runs, wall_s)."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Each point's measured window (default: chosen by the question, and said)."),
    warmup: Optional[str] = typer.Option(None, "--warmup", help="Each point's warm-up (default: chosen by the question so the caches are warm, and said)."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Override the scenario's seed."),
    scale: Optional[int] = typer.Option(None, "--scale", min=1, help="arc: scaled-down runs of tables/K with memory divided alike on a machine K times slower (default: chosen; 1: full size only)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="recordsize: the recordsizes to run, comma-separated (default 8K,16K,32K,64K,128K)."),
    reserve: Optional[str] = typer.Option(None, "--reserve", help="memory-split: RAM kept for the OS and the server outside the two caches (default: 10% of RAM, at least 1GiB)."),
    buffer_pools: Optional[str] = typer.Option(None, "--buffer-pools", help="memory-split: buffer-pool sizes to run, comma-separated (the ARC gets the rest), instead of the 10%..90% grid."),
    latency: Optional[str] = typer.Option(None, "--latency", help="slog: the log device: a device preset (nvme-local, ram-slog, ...) or its write latency (e.g. 50us, on nvme-local). Default: nvme-local."),
    latencies: Optional[str] = typer.Option(None, "--latencies", help="slog: a curve instead: the log device's write latencies to run (nvme-local), comma-separated (e.g. 10us,100us,1ms); the answer is the slowest that pays off. Points sharing a warm-up that only reads run it once."),
    compressions: Optional[str] = typer.Option(None, "--compressions", help="compression: the algorithms to run, comma-separated (default off,lz4,zstd)."),
    fractions: Optional[str] = typer.Option(None, "--fractions", help="l2arc: cache-device sizes as fractions of the scenario's device, comma-separated (default 0,1,0.5,0.25; 0: no cache device)."),
    feed_factors: Optional[str] = typer.Option(None, "--feed-factors", help="l2arc: l2arc_write_max (and _boost) as factors of the variant's, run at the chosen size (default 0.5,2)."),
    phase: Optional[str] = typer.Option(None, "--phase", help="The phase measured in a variant with [[phases]] (default: its first workload phase; not arc)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the answer's HTML page (its curve with the answer marked) to FILE."),
    uncertainty: Optional[int] = typer.Option(None, "--uncertainty", help="Ask again for N members (2 to 32) with the presets' provisional parameters drawn within their ranges: the answer as a band, and the parameter that moves it most."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per run on stderr."),
    no_memory_check: bool = typer.Option(False, "--no-memory-check", help="Run points even when their estimated memory exceeds what the machine has available."),
) -> None:
    """Answer a sizing question (arc, recordsize, memory-split, slog, compression, l2arc) from runs of a scenario's variant: the value, the curve, the mechanism."""
    from ..advise import QUESTIONS, AdviseError, advise

    if question not in QUESTIONS:
        raise AdviseError(f"unknown question {question!r}; the questions: {', '.join(QUESTIONS)}")
    if uncertainty is not None:
        from ..uncertainty import check_members

        check_members(uncertainty)
    run_overrides(seed, {"duration": duration, "warmup": warmup})  # durations checked before any run
    if report is not None:
        from .. import html_report

        html_report._plotly()
    err = _stderr()

    def note(line: str) -> None:
        if not quiet:
            err.print(f"advise {escape(question)}: {escape(line)}")

    def split(v: Optional[str]) -> Optional[list[str]]:
        return None if v is None else [x.strip() for x in v.split(",") if x.strip()]

    def numbers(v: Optional[str], flag: str) -> Optional[list[float]]:
        if v is None:
            return None
        try:
            return [float(x) for x in split(v) or []]
        except ValueError:
            raise AdviseError(f"{flag} {v!r}: comma-separated numbers (e.g. 0,1,0.5,0.25)") from None

    options = {"sizes": split(sizes), "reserve": reserve, "buffer_pools": split(buffer_pools), "latency": latency, "latencies": split(latencies), "compressions": split(compressions), "phase": phase,
               "fractions": numbers(fractions, "--fractions"), "feed_factors": numbers(feed_factors, "--feed-factors")}
    options = {k: v for k, v in options.items() if v is not None}
    adv = advise(question, str(scenario), variant, duration=duration, warmup=warmup, seed=seed, scale=scale, memory_check=not no_memory_check, on_note=note, uncertainty=uncertainty, **options)
    if report is not None:
        path = adv.write_report(report)
        err.print(f"report written to {escape(str(path))}")
    if json_out:
        typer.echo(adv.to_json())
        return
    out = _stdout()
    out.print(f"[bold]{escape(adv.scenario)}[/], variant {escape(adv.variant)} ({escape(adv.source)}): {escape(question)} - simulated by ztwin; model outputs, not measurements")
    out.print(_points_table(adv))
    ans = ", ".join(f"{k} = {v}" for k, v in adv.answer.items()) or "none found"
    out.print(f"\n[bold]Answer:[/] {escape(ans)}")
    out.print(f"[bold]Criterion:[/] {escape(adv.criterion)}")
    out.print(f"[bold]Why:[/] {escape(adv.explanation)}")
    if adv.uncertainty is not None:
        from ..advise.ensemble import summary_lines

        out.print("[bold]Uncertainty:[/]")
        for line in summary_lines(adv.uncertainty):
            out.print(f"  {escape(line)}")
    for n in adv.notes:
        out.print(f"[dim]note:[/] {escape(n)}")
    out.print(f"{adv.runs} runs, {adv.wall_s:.1f} s wall")
