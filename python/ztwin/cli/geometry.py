"""``ztwin geometry``: the block-pointer tree of a ZFS file or dataset, as the core computes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from .. import units
from ..exceptions import ScenarioError
from .common import _handle_errors, _num, _size_opt, _stderr, _stdout, app

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
    from .. import _core
    from ..scenario import load_scenario

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
        if ds.get("type") != "sysbench":
            raise ScenarioError(f"--scenario: variant {name} has a {ds.get('type')} dataset; geometry reads sysbench tables "
                                "(a tpcc run reports each table's size in its \"tpcc_dataset\")")
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
