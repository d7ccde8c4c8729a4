"""``ztwin replay``: block traces through cache policies; ``ztwin bench-replay``: ztwin's
lru and arc against libCacheSim's on the same trace.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from .. import units
from ..exceptions import ScenarioError
from .common import _abbr, _handle_errors, _num, _size_opt, _stderr, _stdout, app

def _positive_int(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be at least 1")
    return n


def replay_parser() -> argparse.ArgumentParser:
    """The options of ``ztwin replay``. The command parses them itself (argparse), not
    through Typer: Typer coerces every option through a pydantic TypeAdapter, and
    importing pydantic and building those took longer than replaying a trace of a million
    requests. The command's own help (``ztwin replay --help``) is argparse's."""
    p = argparse.ArgumentParser(
        prog="ztwin replay",
        description="Replay a block trace through cache policies: hits, misses, hit ratio, miss-ratio curves.",
    )
    p.add_argument("trace", type=Path, help="Trace file (.lis, csv, oracleGeneral, vscsi, blkparse, text; zstd or not).")
    p.add_argument("--policy", "-p", action="append", help="lru (default), arc or zfs-arc; repeat or comma-separate.")
    p.add_argument("--size", help="Cache size: blocks (32768) or bytes with a unit (16MiB).")
    p.add_argument("--sizes", help="Several sizes: a list (1024,4096) or a range (1024:65536:x2, 1000:10000:1000).")
    p.add_argument("--block-size", help="Bytes per block (default 512 for .lis, 4K otherwise).")
    p.add_argument("--format", dest="fmt", metavar="FORMAT", help="Trace format (default: detected): lis, csv, oracle, vscsi, blkparse, txt.")
    p.add_argument("--release", help="OpenZFS release of zfs-arc: 0.6, 0.8, 2.1, 2.2 (default), 2.3.")
    p.add_argument("--shards", type=float, help="SHARDS spatial sampling rate in (0, 1], e.g. 0.01.")
    p.add_argument("--max-requests", type=_positive_int, help="Replay only the first N requests.")
    p.add_argument("--plot", type=Path, help='Write the miss-ratio curves to this PNG or SVG (needs matplotlib: pip install ".[plot]").')
    p.add_argument("--json", dest="json_out", action="store_true", help="Print one JSON document on stdout.")
    return p


@app.command(
    "replay",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
@_handle_errors
def replay_cmd(ctx: typer.Context) -> None:
    """Replay a block trace through cache policies: hits, misses, hit ratio, miss-ratio curves."""
    replay(ctx.args)


def replay(args: list[str]) -> None:
    """``ztwin replay`` with these arguments (after the command's name)."""
    a = replay_parser().parse_args(args)
    replay_run(a.trace, a.policy or ["lru"], a.size, a.sizes, a.block_size, a.fmt, a.release, a.shards, a.max_requests, a.plot, a.json_out)


def replay_direct(args: list[str]) -> int:
    """``ztwin replay`` as the ``ztwin`` script runs it, without Typer (whose parsing
    would import pydantic: see :func:`replay_parser`), errors handled by the same rule as
    every command's; returns the exit status."""
    try:
        _handle_errors(replay)(args)
    except typer.Exit as e:
        return int(e.exit_code)
    return 0


def replay_run(
    trace: Path,
    policy: list[str],
    size: Optional[str],
    sizes: Optional[str],
    block_size: Optional[str],
    fmt: Optional[str],
    release: Optional[str],
    shards: Optional[float],
    max_requests: Optional[int],
    plot: Optional[Path],
    json_out: bool,
) -> None:
    """``ztwin replay`` with its options parsed."""
    from .. import replay as rp

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
    from rich.table import Table

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

    from .. import _core, bench
    from .. import replay as rp

    try:
        import libcachesim  # noqa: F401
    except ImportError:
        raise ScenarioError("bench-replay needs libCacheSim: pip install libcachesim") from None
    if trace is None:
        src = Path(__file__).resolve().parents[3] / "../shared/traces/arc-paper/P6.lis.zst"
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
    from rich.table import Table

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
