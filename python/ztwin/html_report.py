"""HTML reports of a run or a sweep: one self-contained page, its plots embedded.

``ztwin run ... --report FILE``, ``ztwin report RESULT.json|DIR -o FILE`` and ``ztwin sweep``
write one HTML file that needs no network to view: plotly.js is embedded in it (``pip
install 'ztwin[report]'``; about 4.8 MB a page). Its sections:

- the scenario: name, description, file, and the resolved settings that differ between
  the variants (the core's config keys, devices by name);
- a summary table, one row per variant and phase (qps, tps, latency p95/p99, CPU, buffer
  pool and ARC hit ratios, each device's IOPS);
- time series from each variant's per-interval series, one line per variant: qps,
  latency percentiles, CPU, ARC size and target, ARC hit ratios, the buffer pool's hit
  ratio, with a cache device the L2ARC's hit ratio (arcstat's l2hit%) and its fill
  (``l2_size`` and ``l2_asize`` at each interval's end), each device's read and write
  IOPS (a cache device's writes are the L2ARC's feed);
- for a sweep: each metric against the first swept key, one line per variant (and per
  value of the other keys), each line's best point (highest qps, or lowest p99 latency)
  marked, and the results table.

A run's time series need its series: ``ztwin run --json --full`` keeps them (plain
``--json`` is the summary; a report of it has the tables and notes the missing series).

Every figure is first a :class:`Fig` (traces of numbers and labels), drawn by plotly for
the page and by matplotlib for ``--png DIR`` (one PNG per figure, named by its ``slug``):
kaleido, plotly's own image export, needs a browser of its own.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from .exceptions import ZtwinError

__all__ = [
    "Fig",
    "Trace",
    "ReportError",
    "RunData",
    "run_figures",
    "sweep_figures",
    "render_run",
    "render_sweep",
    "write_run_report",
    "write_sweep_report",
    "write_pngs",
    "load_report_input",
]


class ReportError(ZtwinError, ValueError):
    """A report that cannot be made: an input that is not a ztwin result, a missing package."""


@dataclass
class Trace:
    name: str
    x: list[Any]
    y: list[Optional[float]]
    dash: str = "solid"


@dataclass
class Fig:
    """One figure: what both renderers draw."""

    slug: str
    title: str
    xlabel: str
    ylabel: str
    traces: list[Trace]
    #: Points to mark: (trace name, x, y, label).
    marks: list[tuple[str, Any, float, str]] = field(default_factory=list)
    #: The x values in order when the axis is categorical (sizes written as "1G").
    categories: Optional[list[str]] = None


@dataclass
class RunData:
    """What a run's report shows: the scenario and each variant's document and config."""

    scenario: str
    source: str
    description: str
    docs: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# Figures


def _num(v: Any) -> Optional[float]:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _devices(docs: Mapping[str, Mapping[str, Any]], section: str = "devices") -> list[str]:
    """The names in ``section`` (devices, or RAID controllers) of every variant and phase."""
    devs: list[str] = []
    for doc in docs.values():
        for p in [doc] + list(doc.get("phases") or []):
            for d in p.get(section) or {}:
                if d not in devs:
                    devs.append(d)
    return devs


def run_figures(docs: Mapping[str, Mapping[str, Any]]) -> list[Fig]:
    """Time series figures of a run, one line per variant (variants without a series are left out)."""
    series = {n: d["series"] for n, d in docs.items() if isinstance(d.get("series"), Mapping) and d["series"].get("time_s")}
    figs: list[Fig] = []
    if not series:
        return figs

    def lines(col: str, scale: float = 1.0, suffix: str = "", dash: str = "solid") -> list[Trace]:
        out = []
        for n, s in series.items():
            if col in s:
                out.append(Trace(n + suffix, list(s["time_s"]), [None if _num(v) is None else _num(v) * scale for v in s[col]], dash))
        return out

    def ratio(hits: str, *rest: str) -> list[Trace]:
        out = []
        for n, s in series.items():
            if hits not in s or rest[0] not in s:
                continue
            ys = []
            for i in range(len(s["time_s"])):
                h = _num(s[hits][i]) or 0.0
                tot = h + sum(_num(s[r][i]) or 0.0 for r in rest if r in s)
                ys.append(100 * h / tot if tot else None)
            out.append(Trace(n, list(s["time_s"]), ys))
        return out

    def add(slug: str, title: str, ylabel: str, traces: list[Trace]) -> None:
        if traces:
            figs.append(Fig(slug, title, "simulated time (s)", ylabel, traces))

    add("ts-qps", "Throughput per interval", "queries/s", lines("qps"))
    add(
        "ts-latency",
        "Statement latency per interval (p50 dotted, p95 solid, p99 dashed)",
        "ms",
        lines("latency_p50_ms", suffix=" p50", dash="dot") + lines("latency_p95_ms", suffix=" p95") + lines("latency_p99_ms", suffix=" p99", dash="dash"),
    )
    add("ts-cpu", "CPU utilization (all vCPUs)", "%", lines("cpu_utilization", 100))
    add("ts-arc-size", "ARC size (solid) and target c (dashed) at each interval's end", "GiB", lines("arc_size", 2**-30) + lines("arc_c", 2**-30, " c", "dash"))
    add("ts-arc-hit", "ARC hit ratio (hits / all accesses, iohits included)", "%", ratio("arc_hits", "arc_misses", "arc_iohits"))
    add("ts-arc-dd-hit", "ARC demand data hit ratio", "%", ratio("arc_demand_data_hits", "arc_demand_data_misses", "arc_demand_data_iohits"))
    add("ts-arc-dm-hit", "ARC demand metadata hit ratio", "%", ratio("arc_demand_metadata_hits", "arc_demand_metadata_misses", "arc_demand_metadata_iohits"))
    add("ts-l2-hit", "L2ARC hit ratio (l2_hits / (l2_hits + l2_misses): of the ARC's misses, those the cache device served)", "%",
        ratio("l2_hits", "l2_misses"))
    add("ts-l2-size", "L2ARC fill at each interval's end: l2_size (solid, logical) and l2_asize (dashed, on the device)", "GiB",
        lines("l2_size", 2**-30) + lines("l2_asize", 2**-30, " asize", "dash"))
    add("ts-bp-hit", "InnoDB buffer pool hit ratio", "%", lines("innodb_buffer_pool_hit_ratio", 100))
    add("ts-fio-iops", "fio IOPS per interval", "IOPS", lines("fio_iops"))
    for dev in _devices(docs):
        add(
            f"ts-{_slug(dev)}-iops",
            f"Device {dev}: reads (solid) and writes (dashed) per second",
            "IOPS",
            lines(f"{dev}_read_iops", suffix=" read") + lines(f"{dev}_write_iops", suffix=" write", dash="dash"),
        )
    for ctrl in _devices(docs, "controllers"):
        add(
            f"ts-ctrl-{_slug(ctrl)}",
            f"RAID controller {ctrl}: dirty data in its write-back cache at each interval's end (full: writes wait for room)",
            "MiB",
            lines(f"{ctrl}_dirty_mib"),
        )
    return figs


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-") or "x"


#: The sweep's curves: (column of the results frame, title, unit, scale, best is max?).
_SWEEP_METRICS: list[tuple[str, str, str, float, Optional[bool]]] = [
    ("qps", "Throughput", "queries/s", 1, True),
    ("tps", "Transactions", "tps", 1, None),
    ("latency_p95_ms", "Latency p95", "ms", 1, None),
    ("latency_p99_ms", "Latency p99", "ms", 1, False),
    ("cpu_utilization", "CPU utilization", "%", 100, None),
    ("innodb_buffer_pool_hit_ratio", "InnoDB buffer pool hit ratio", "%", 100, None),
    ("arc_hit_ratio", "ARC hit ratio", "%", 100, None),
    ("arc_demand_data_hit_ratio", "ARC demand data hit ratio", "%", 100, None),
    ("arc_demand_metadata_hit_ratio", "ARC demand metadata hit ratio", "%", 100, None),
    ("arc_size", "ARC size at the window's end", "GiB", 2**-30, None),
    ("l2arc_l2_size", "L2ARC size at the window's end", "GiB", 2**-30, None),
    ("fio_read_iops", "fio read IOPS", "IOPS", 1, True),
    ("fio_read_bw_mbps", "fio read bandwidth", "MB/s", 1, None),
]


def sweep_figures(sweep: Any) -> list[Fig]:
    """Each metric against the first swept key, one line per variant (and per value of
    the other keys), for each phase that measured it; the best point of each line marked."""
    df = sweep.frame()
    key = sweep.keys[0]
    others = sweep.keys[1:]
    xs = _uniq(df[key].to_list())
    categorical = not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs)
    figs: list[Fig] = []
    phases = _uniq([p for p in df["phase"].to_list()])
    for col, title, unit, scale, best_max in _SWEEP_METRICS + _device_metrics(df):
        if col not in df.columns:
            continue
        for phase in phases:
            sub = df.filter(df["phase"].is_null()) if phase is None else df.filter(df["phase"] == phase)
            if sub[col].null_count() == sub.height:
                continue
            traces, marks = [], []
            groups = _uniq([tuple([r["variant"]] + [r[o] for o in others]) for r in sub.iter_rows(named=True)])
            for g in groups:
                rows = [r for r in sub.iter_rows(named=True) if tuple([r["variant"]] + [r[o] for o in others]) == g]
                name = g[0] + "".join(f", {o}={_text(v)}" for o, v in zip(others, g[1:]))
                x = [_text(r[key]) if categorical else r[key] for r in rows]
                y = [None if _num(r[col]) is None else _num(r[col]) * scale for r in rows]
                traces.append(Trace(name, x, y))
                pts = [(xv, yv) for xv, yv in zip(x, y) if yv is not None]
                if best_max is not None and len(pts) > 1:
                    bx, by = (max if best_max else min)(pts, key=lambda p: p[1])
                    marks.append((name, bx, by, "best" if best_max else "lowest"))
            where = f" ({phase})" if phase is not None and len(phases) > 1 else ""
            figs.append(
                Fig(
                    f"sweep-{_slug(col)}" + (f"-{_slug(phase)}" if where else ""),
                    f"{title}{where} against {key}",
                    key,
                    unit,
                    traces,
                    marks,
                    [_text(v) for v in xs] if categorical else None,
                )
            )
    return figs


def _device_metrics(df: Any) -> list[tuple[str, str, str, float, Optional[bool]]]:
    out = []
    for c in df.columns:
        m = re.fullmatch(r"(.+)_(read|write)_iops", c)
        if m and not c.startswith("fio_"):
            out.append((c, f"Device {m.group(1)}: {m.group(2)}s", "IOPS", 1.0, None))
    return out


def _uniq(xs: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


# --------------------------------------------------------------------------------------
# Rendering


def _plotly() -> Any:
    try:
        import plotly.graph_objects as go
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise ReportError("the HTML report needs plotly: pip install 'ztwin[report]'") from None
    return go, get_plotlyjs


_DASH = {"solid": "solid", "dash": "dash", "dot": "dot"}


def _plotly_div(go: Any, fig: Fig, index: int) -> str:
    f = go.Figure()
    for t in fig.traces:
        f.add_trace(go.Scatter(x=t.x, y=t.y, name=t.name, mode="lines+markers" if fig.categories is not None or len(t.x) <= 12 else "lines", line={"dash": _DASH[t.dash]}))
    if fig.marks:
        f.add_trace(
            go.Scatter(
                x=[m[1] for m in fig.marks],
                y=[m[2] for m in fig.marks],
                mode="markers+text",
                text=[m[3] for m in fig.marks],
                textposition="top center",
                marker={"symbol": "star", "size": 14, "color": "black"},
                name="best point of each line",
                hovertext=[f"{m[0]}: {m[3]} at {m[1]}" for m in fig.marks],
            )
        )
    xaxis: dict[str, Any] = {"title": {"text": fig.xlabel}}
    if fig.categories is not None:
        xaxis |= {"type": "category", "categoryorder": "array", "categoryarray": fig.categories}
    f.update_layout(
        title={"text": html.escape(fig.title)},
        xaxis=xaxis,
        yaxis={"title": {"text": fig.ylabel}, "rangemode": "tozero"},
        template="plotly_white",
        height=380,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.2},
    )
    return f.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig-{index}-{fig.slug}", default_height="400px", config={"displaylogo": False})


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
.note { color: #666; font-size: 0.9em; }
.fig { margin: 1em 0; border: 1px solid #eee; }
.scroll { overflow-x: auto; }
"""

# Errors of the page's scripts, counted where a headless browser's DOM dump shows them.
_ERRORS_JS = """
window.ztwinErrors = [];
window.addEventListener('error', function (e) {
  window.ztwinErrors.push(String(e.message));
  var el = document.getElementById('ztwin-errors');
  if (el) { el.textContent = 'script errors: ' + window.ztwinErrors.join('; '); }
});
"""

_DONE_JS = """
window.addEventListener('load', function () {
  var n = document.querySelectorAll('.js-plotly-plot .main-svg').length > 0 ?
    document.querySelectorAll('.js-plotly-plot').length : 0;
  document.body.setAttribute('data-plots-rendered', String(n));
  document.body.setAttribute('data-script-errors', String(window.ztwinErrors.length));
  if (window.ztwinErrors.length) {
    document.getElementById('ztwin-errors').textContent = 'script errors: ' + window.ztwinErrors.join('; ');
  }
});
"""


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table></div>'


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        return f"{v:,.3g}" if abs(v) < 1 else f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _flat_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config as dotted keys, devices by name (``devices.disk.iops_limit``)."""
    out: dict[str, Any] = {}

    def walk(v: Any, p: str) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                walk(x, f"{p}.{k}" if p else str(k))
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for i, x in enumerate(v):
                walk(x, f"{p}.{x['name']}" if p in ("devices", "arrays", "controllers") and "name" in x else f"{p}[{i}]")
        else:
            out[p] = v

    walk(cfg, "")
    out.pop("variant", None)
    return out


def _settings_table(configs: Mapping[str, Mapping[str, Any]]) -> str:
    if len(configs) < 2:
        return '<p class="note">One variant: nothing to compare.</p>' if configs else '<p class="note">The resolved settings are not in this input (ztwin run --json --full keeps them).</p>'
    flat = {n: _flat_config(c) for n, c in configs.items()}
    keys = sorted(set().union(*flat.values()))
    diff = [k for k in keys if len({json.dumps(f.get(k), sort_keys=True) for f in flat.values()}) > 1]
    if not diff:
        return '<p class="note">The variants resolve to the same settings.</p>'
    rows = [[k] + [_fmt_setting(flat[n].get(k)) for n in flat] for k in diff]
    table = _table(["setting"] + list(flat), rows)
    return (
        f'<details{" open" if len(diff) <= 20 else ""}><summary>{len(diff)} resolved settings differ between the variants '
        "(the core's config keys: bytes, nanoseconds)</summary>" + table + "</details>"
    )


def _fmt_setting(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return _fmt(v)


_SUMMARY_COLS = [
    ("qps", "qps", 1),
    ("tps", "tps", 1),
    ("latency_p95_ms", "p95 (ms)", 1),
    ("latency_p99_ms", "p99 (ms)", 1),
    ("cpu_utilization", "CPU %", 100),
    ("innodb_buffer_pool_hit_ratio", "buffer pool hit %", 100),
    ("arc_hit_ratio", "ARC hit %", 100),
    ("arc_size", "ARC size (GiB)", 2**-30),
    ("l2arc_l2_size", "L2ARC size (GiB)", 2**-30),
    ("fio_read_iops", "fio read IOPS", 1),
    ("fio_read_bw_mbps", "fio read MB/s", 1),
]


def _summary_rows(labels: list[list[Any]], metric_rows: list[dict[str, Any]], devs: list[str]) -> tuple[list[str], list[list[str]]]:
    cols = [(c, h, s) for c, h, s in _SUMMARY_COLS if any(r.get(c) is not None for r in metric_rows)]
    for d in devs:
        for k, h in (("read_iops", "reads/s"), ("write_iops", "writes/s")):
            if any(r.get(f"{d}_{k}") is not None for r in metric_rows):
                cols.append((f"{d}_{k}", f"{d} {h}", 1))
    header = [h for _, h, _ in cols]
    rows = []
    for lab, r in zip(labels, metric_rows):
        rows.append(lab + [_fmt(None if r.get(c) is None else r[c] * s if s != 1 else r[c]) for c, _, s in cols])
    return header, rows


def _page(title: str, body: str, plotly_js: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style>"
        f"<script>{_ERRORS_JS}</script>"
        f'<script type="text/javascript">{plotly_js}</script>'
        f"</head><body>{body}"
        '<div id="ztwin-errors" class="note"></div>'
        f"<script>{_DONE_JS}</script></body></html>\n"
    )


def _figs_html(go: Any, figs: list[Fig]) -> str:
    return "".join(f'<div class="fig" data-slug="{html.escape(f.slug)}">{_plotly_div(go, f, i)}</div>' for i, f in enumerate(figs))


def _header(scenario: str, source: str, description: str, what: str) -> str:
    from . import __version__

    return (
        f"<h1>{html.escape(scenario)}: {html.escape(what)}</h1>"
        f"<p>{html.escape(description or '')}</p>"
        f'<p class="note">Scenario file: {html.escape(source or "-")}. Simulated by ztwin {html.escape(__version__)}: '
        "the numbers are model outputs, not measurements.</p>"
    )


def render_run(data: RunData, figs: Optional[list[Fig]] = None) -> str:
    """A run's report as one HTML page (see the module's docs)."""
    from .sweeps import _phases, metrics_row

    go, get_js = _plotly()
    figs = run_figures(data.docs) if figs is None else figs
    labels, metric_rows = [], []
    for n, doc in data.docs.items():
        for p in _phases(doc):
            labels.append([n, p.get("name") or "-"])
            metric_rows.append(metrics_row(p))
    header, rows = _summary_rows(labels, metric_rows, _devices(data.docs))
    body = _header(data.scenario, data.source, data.description, "run report")
    body += '<h2 id="scenario">Scenario and variants</h2>'
    body += f"<p>Variants: {html.escape(', '.join(data.docs))}.</p>" + _settings_table(data.configs)
    body += '<h2 id="summary">Summary: variants and phases</h2>'
    body += '<p class="note">Each phase\'s measured window; rates per second; sizes at the window\'s end.</p>'
    body += _table(["variant", "phase"] + header, rows)
    body += '<h2 id="timeseries">Time series</h2>'
    if figs:
        body += '<p class="note">Each point is one report interval, ending at its time; warm-up and every phase included.</p>'
        body += _figs_html(go, figs)
    else:
        body += '<p class="note">No per-interval series in this input: ztwin run --json --full (or --report) keeps them.</p>'
    return _page(f"{data.scenario}: ztwin run report", body, get_js())


def render_sweep(sweep: Any, figs: Optional[list[Fig]] = None) -> str:
    """A sweep's report as one HTML page: the scenario, the grid, the curves, the table."""
    go, get_js = _plotly()
    figs = sweep_figures(sweep) if figs is None else figs
    df = sweep.frame()
    body = _header(sweep.scenario, sweep.source, sweep.description, "sweep report")
    body += '<h2 id="scenario">Scenario and variants</h2>'
    grid = "".join(f"<li><code>{html.escape(k)}</code> = {html.escape(', '.join(_uniq([_text(p[k]) for p in sweep.points])))}</li>" for k in sweep.keys)
    body += f"<p>Variants: {html.escape(', '.join(sweep.variants))}; {len(sweep.points)} points, run {html.escape(sweep.backend)}. The grid:</p><ul>{grid}</ul>"
    body += _settings_table(sweep.configs[0] if sweep.configs else {})
    body += f'<h2 id="curves">Metrics against {html.escape(sweep.keys[0])}</h2>'
    body += '<p class="note">One line per variant (and per value of the other swept keys); a star marks each line\'s best point (highest throughput, lowest p99 latency).</p>'
    body += _figs_html(go, figs)
    body += '<h2 id="summary">Results: points, variants and phases</h2>'
    from .sweeps import _phases, metrics_row

    labels, metric_rows = [], []
    for i, point in enumerate(sweep.points):
        for n in sweep.variants:
            for p in _phases(sweep.runs[i][n]):
                labels.append([str(i)] + [_text(point[k]) for k in sweep.keys] + [n, p.get("name") or "-"])
                metric_rows.append(metrics_row(p))
    header, rows = _summary_rows(labels, metric_rows, _devices({f"{i}/{n}": sweep.runs[i][n] for i in range(len(sweep.points)) for n in sweep.variants}))
    body += _table(["point"] + list(sweep.keys) + ["variant", "phase"] + header, rows)
    body += f'<p class="note">{df.height} rows; every column is in results.parquet.</p>'
    return _page(f"{sweep.scenario}: ztwin sweep report", body, get_js())


# --------------------------------------------------------------------------------------
# Files


def _write(path: Union[str, Path], text: str) -> Path:
    p = Path(path)
    try:
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ReportError(f"cannot write the report {p}: {e.strerror}") from None
    return p


def write_run_report(data: RunData, path: Union[str, Path], png_dir: Optional[Union[str, Path]] = None) -> Path:
    """Writes a run's report to ``path``; with ``png_dir`` each figure as a PNG there."""
    figs = run_figures(data.docs)
    out = _write(path, render_run(data, figs))
    if png_dir is not None:
        write_pngs(figs, png_dir)
    return out


def write_sweep_report(sweep: Any, path: Union[str, Path], png_dir: Optional[Union[str, Path]] = None) -> Path:
    """Writes a sweep's report to ``path``; with ``png_dir`` each figure as a PNG there."""
    figs = sweep_figures(sweep)
    out = _write(path, render_sweep(sweep, figs))
    if png_dir is not None:
        write_pngs(figs, png_dir)
    return out


_MPL_DASH = {"solid": "-", "dash": "--", "dot": ":"}


def write_pngs(figs: list[Fig], directory: Union[str, Path]) -> list[Path]:
    """Each figure as ``DIR/<slug>.png``, drawn by matplotlib (no browser needed)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReportError("PNG export needs matplotlib: pip install 'ztwin[report]'") from None
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot create {d}: {e.strerror}") from None
    paths = []
    for fig in figs:
        f = Figure(figsize=(8, 4.5), dpi=100)
        FigureCanvasAgg(f)
        ax = f.add_subplot()
        pos = {c: i for i, c in enumerate(fig.categories or [])}

        def xv(x: Any) -> Any:
            return pos.get(str(x), x) if fig.categories is not None else x

        for t in fig.traces:
            pts = [(xv(x), y) for x, y in zip(t.x, t.y)]
            ax.plot([p[0] for p in pts], [math.nan if p[1] is None else p[1] for p in pts], _MPL_DASH[t.dash], marker="o" if len(pts) <= 12 else None, label=t.name)
        for _name, x, y, label in fig.marks:
            ax.plot([xv(x)], [y], marker="*", markersize=14, color="black", linestyle="none")
            ax.annotate(label, (xv(x), y), textcoords="offset points", xytext=(0, 8), ha="center")
        if fig.categories is not None:
            ax.set_xticks(range(len(fig.categories)), fig.categories)
        ax.set_title(fig.title, fontsize=10)
        ax.set_xlabel(fig.xlabel)
        ax.set_ylabel(fig.ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if fig.traces:
            ax.legend(fontsize=7)
        f.tight_layout()
        p = d / f"{fig.slug}.png"
        try:
            f.savefig(p)
        except OSError as e:
            raise ReportError(f"cannot write {p}: {e.strerror}") from None
        paths.append(p)
    return paths


def load_report_input(path: Union[str, Path]) -> Union[RunData, Any]:
    """A saved run (``ztwin run --json [--full]``'s document) or a sweep (its directory or
    its ``sweep.json``), as :class:`RunData` or a :class:`~ztwin.sweeps.Sweep`."""
    from .sweeps import Sweep

    p = Path(path)
    if p.is_dir():
        if not (p / "sweep.json").exists():
            raise ReportError(f"{p} is a directory without sweep.json: not the output directory of ztwin sweep")
        p = p / "sweep.json"
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{p} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"cannot read {p}: {e}") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{p} is not JSON ({e}); expected the output of ztwin run --json or a ztwin sweep directory") from None
    if isinstance(doc, dict) and doc.get("kind") == "ztwin-sweep":
        return Sweep.from_dict(doc)
    if not (isinstance(doc, dict) and isinstance(doc.get("variants"), dict) and "scenario" in doc):
        raise ReportError(f"{p} is not a ztwin result: expected the output of ztwin run --json (keys scenario, variants) or a ztwin sweep directory")
    if not all(isinstance(v, dict) for v in doc["variants"].values()):
        raise ReportError(f"{p}: each variant's entry must be an object")
    return RunData(str(doc["scenario"]), str(doc.get("source", "")), str(doc.get("description", "")), doc["variants"], doc.get("configs") or {})
