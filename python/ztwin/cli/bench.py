"""``ztwin bench``: the twin's own speed and memory on the bundled full-scale cases."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from .common import _handle_errors, _num, _stderr, _stdout, app

@app.command("bench")
@_handle_errors
def bench_cmd(
    json_out: bool = typer.Option(False, "--json", help="Print the measurements as one JSON document."),
) -> None:
    """Measure the twin: experiment 1 at full scale for one simulated hour per variant, and experiment 3 (fio) in full."""
    from .. import bench
    from ..exceptions import ScenarioError

    # The L2ARC case's scenario is a checkout's: say so before any case runs.
    for scenario, _variant, _duration in bench.L2ARC_CASES:
        try:
            bench.case_path(scenario)
        except FileNotFoundError as e:
            raise ScenarioError(str(e)) from None
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
