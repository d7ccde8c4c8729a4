"""The HTML page of an answer (``ztwin advise ... --report FILE``): the answer, the
criterion, the explanation, the curve of each metric against the parameter with the
answer marked (one line per scale: full-size and scaled-down runs apart), the notes and
the points. The figures, the page and the tables are :mod:`ztwin.html_report`'s."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Union

from .. import html_report as hr

#: The curves, when the points have the column: (column, title, unit, scale).
_METRICS = [
    ("qps", "Throughput", "queries/s", 1.0),
    ("tps", "Transactions", "transactions/s", 1.0),
    ("latency_p95_ms", "Latency p95", "ms", 1.0),
    ("latency_p99_ms", "Latency p99", "ms", 1.0),
    ("read_iops", "Pool devices: reads", "IOPS", 1.0),
    ("read_mbps", "Pool devices: read throughput", "MB/s", 1.0),
    ("avg_read_kib", "Average device read", "KiB", 1.0),
    ("write_iops", "Pool devices: writes", "IOPS", 1.0),
    ("write_mbps", "Pool devices: write throughput", "MB/s", 1.0),
    ("compressratio", "compressratio", "x", 1.0),
    ("write_amplification", "Write amplification (device bytes / Innodb_data_written)", "x", 1.0),
    ("cpu_utilization", "CPU utilization", "%", 100.0),
    ("l2_size", "L2ARC size (l2_size) at the window's end", "GiB", 2**-30),
    ("l2_hdr_size", "L2 headers in the ARC (l2_hdr_size)", "MiB", 2**-20),
    ("read_share_l2arc", "Block reads served by the L2ARC", "%", 100.0),
    ("warmup_qps_s", "Warm-up: qps at 90% of its steady value", "s from the start", 1.0),
    ("zil_commit_count", "zil_commit_count", "commits", 1.0),
    ("demand_metadata_misses_per_query", "Demand metadata misses per query", "misses/query", 1.0),
    ("arc_hit_ratio", "ARC hit ratio", "%", 100.0),
    ("arc_demand_data_hit_ratio", "ARC demand data hit ratio", "%", 100.0),
    ("innodb_buffer_pool_hit_ratio", "InnoDB buffer pool hit ratio", "%", 100.0),
    ("arc_meta_used", "arc_meta_used at the window's end", "GiB", 2**-30),
    ("arc_metadata_size", "ARC metadata_size at the window's end", "GiB", 2**-30),
]


def advice_figures(advice: Any) -> list[hr.Fig]:
    rows = [r for r in advice.points if "refused" not in r and r.get(advice.x) is not None]
    x = advice.x
    answer_x = None
    for r in rows:
        if all(str(r.get(k)) == str(v) for k, v in advice.answer.items()) and r.get("scale", 1) == 1:
            answer_x = r[x]
    if answer_x is None:
        for r in rows:
            if all(str(r.get(k)) == str(v) for k, v in advice.answer.items()):
                answer_x = r[x]
    if answer_x is None:  # an answer that is not a value of the points (slog): the row marked chosen
        answer_x = next((r[x] for r in rows if r.get("chosen") is True), None)
    scales = sorted({r.get("scale", 1) for r in rows})
    # One line per scale, and per ``line`` a question names (l2arc: the feed rates at the chosen size).
    groups = [(s, None) for s in scales] + list(dict.fromkeys((r.get("scale", 1), r["line"]) for r in rows if r.get("line")))
    chosen_line = next((r.get("line") for r in rows if r.get("chosen") is True), None)
    # The x axis: sizes in KiB (recordsize) or GiB, names as categories (slog, compression).
    xs_all = [r[x] for r in rows]
    categorical = any(isinstance(v, str) for v in xs_all)
    xsc = 1.0 if categorical or not x.endswith("_bytes") else (1 / 1024 if x.startswith("recordsize") else 2**-30)
    xunit = "" if categorical or not x.endswith("_bytes") else (" (KiB)" if x.startswith("recordsize") else " (GiB)")
    categories = list(dict.fromkeys(xs_all)) if categorical else None
    figs = []
    for col, title, unit, sc in _METRICS + [(c, f"Device {c[: -len('_read_iops')]}: reads", "IOPS", 1.0) for c in sorted({k for r in rows for k in r if k.endswith("_read_iops") and k != "read_iops"})]:
        if not any(r.get(col) is not None for r in rows):
            continue
        traces, marks = [], []
        for s, line in groups:
            pts = sorted((r for r in rows if r.get("scale", 1) == s and r.get("line") == line and r.get(col) is not None), key=lambda r: r[x])
            if not pts:
                continue
            name = line or ("full size" if s == 1 else f"scaled 1/{s:g}")
            xs = [r[x] if categorical else r[x] * xsc for r in pts]
            ys = [r[col] * sc for r in pts]
            traces.append(hr.Trace(name, xs, ys, "solid" if s == 1 else "dash"))
            if answer_x is not None:
                hit = [r for r in pts if r[x] == answer_x]
                if line is not None or chosen_line is not None:  # lines of their own: the star on the chosen row's
                    hit = [r for r in hit if r.get("chosen") is True and line == chosen_line]
                if hit and (s == 1 or not any(r.get("scale", 1) == 1 and r[x] == answer_x for r in rows)):
                    marks.append((name, answer_x if categorical else answer_x * xsc, hit[0][col] * sc, "answer"))
        # A point off the curve (slog's "no log device" beside its latencies): a dotted
        # line at its value across the curve's range, for reference.
        if not categorical and xs_all:
            for r in advice.points:
                if "refused" not in r and r.get(x) is None and r.get(col) is not None:
                    lo, hi = min(xs_all) * xsc, max(xs_all) * xsc
                    label = next((f"{k} = {v}" for k, v in r.items() if isinstance(v, str) and k != "refused"), "reference")
                    traces.append(hr.Trace(label, [lo, hi], [r[col] * sc, r[col] * sc], "dot"))
        xl = x.removesuffix("_bytes") + xunit
        figs.append(hr.Fig(f"advise-{hr._slug(col)}", f"{title} against {x.removesuffix('_bytes')}", xl, unit, traces, marks, categories))
    return figs


def render_advice(advice: Any) -> str:
    go, get_js = hr._plotly()
    figs = advice_figures(advice)
    body = hr._header(advice.scenario, advice.source, "", f"advise {advice.question}")
    ans = ", ".join(f"{k} = {v}" for k, v in advice.answer.items()) or "none found"
    body += f"<h2 id=\"answer\">Answer: {html.escape(ans)}</h2>"
    body += f"<p><b>Variant:</b> {html.escape(advice.variant)}. <b>Criterion:</b> {html.escape(advice.criterion)}</p>"
    body += f"<p><b>Why:</b> {html.escape(advice.explanation)}</p>"
    body += f'<p class="note">{advice.runs} runs, {advice.wall_s:.1f} s of wall time.</p>'
    body += "<ul>" + "".join(f"<li class=\"note\">{html.escape(n)}</li>" for n in advice.notes) + "</ul>"
    u = getattr(advice, "uncertainty", None)
    if u is not None:
        from .ensemble import summary_lines

        body += '<h2 id="uncertainty">Uncertainty</h2><ul>' + "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(u)) + "</ul>"
        mcols: list[str] = []
        for r in u["member_rows"]:
            for c in r:
                if c not in mcols:
                    mcols.append(c)
        body += hr._table(mcols, [[hr._fmt(r.get(c)) if not isinstance(r.get(c), dict) else ", ".join(f"{k}={v}" for k, v in r[c].items()) for c in mcols] for r in u["member_rows"]])
    body += '<h2 id="curves">The curve</h2><p class="note">One line per scale (full size; scaled-down runs dashed, their sizes multiplied back); a star marks the answer.</p>'
    body += hr._figs_html(go, figs)
    body += '<h2 id="points">Points</h2>'
    cols = []
    for r in advice.points:
        for c in r:
            if c not in cols:
                cols.append(c)
    body += hr._table(cols, [[hr._fmt(r.get(c)) if c in r else "" for c in cols] for r in advice.points])
    return hr._page(f"{advice.scenario}: ztwin advise {advice.question}", body, get_js())


def write_advice_report(advice: Any, path: Union[str, Path]) -> Path:
    return hr._write(path, render_advice(advice))
