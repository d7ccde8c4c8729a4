"""Trace replay from Python: hits, misses and miss-ratio curves of lru, arc and zfs-arc.

>>> import ztwin.replay as r
>>> res = r.replay("OLTP.lis.zst", policies=["lru", "arc"], sizes="1024:65536:x2")
>>> res.frame          # polars: policy, size, size_bytes, hits, misses, hit_ratio, miss_ratio
>>> res.to_json()      # {"trace", "requests", "unique", "results": [...]}

The work is done by the core (``ztwin_core::replay``): trace formats (``.lis``, csv,
oracleGeneral, vscsi, blkparse, plain text; zstd or not, detected from the content),
LRU from one stack-distance pass, the textbook ARC, the twin's OpenZFS ARC, SHARDS
sampling. This module parses sizes, calls the core, shapes the answer and plots it.

Sizes: a plain integer is a number of blocks (cache entries); a size with a unit
(``16MiB``, ``4K``; see :mod:`ztwin.units`) is bytes and must be a whole number of
blocks. Lists are comma-separated; ``A:B:S`` is A, A+S, ... up to B and ``A:B:xF`` is A,
A*F, ... up to B. The block size defaults to 512 bytes for ``.lis`` traces (the paper's
block) and 4 KiB otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from . import units
from .exceptions import ScenarioError

POLICIES = ("lru", "arc", "zfs-arc")


def _one_size(text: str, block_size: int, opt: str) -> int:
    t = text.strip()
    if t.isdigit():
        n = int(t)
    else:
        try:
            b = units.parse_size(t)
        except units.UnitError as e:
            raise ScenarioError(f"{opt}: {t!r}: {e}") from None
        if b % block_size:
            raise ScenarioError(
                f"{opt}: {t} is {b} bytes, not a whole number of {block_size}-byte blocks; "
                "give a multiple of the block size or a block count"
            )
        n = b // block_size
    if n < 1:
        raise ScenarioError(f"{opt}: {t!r}: a cache size must be at least one block")
    return n


def parse_sizes(spec: Union[str, int, Iterable[Union[str, int]]], block_size: int, opt: str = "--sizes") -> list[int]:
    """Cache sizes in blocks from a list, ``A:B:S`` (linear) or ``A:B:xF`` (geometric)."""
    if isinstance(spec, int):
        return [_one_size(str(spec), block_size, opt)]
    parts: list[str] = [p for p in spec.split(",")] if isinstance(spec, str) else [str(p) for p in spec]
    out: list[int] = []
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if ":" in p:
            bits = p.split(":")
            if len(bits) != 3:
                raise ScenarioError(f"{opt}: {p!r}: a range is START:STOP:STEP or START:STOP:xFACTOR")
            a, b = _one_size(bits[0], block_size, opt), _one_size(bits[1], block_size, opt)
            step = bits[2].strip()
            if a > b:
                raise ScenarioError(f"{opt}: {p!r}: START is above STOP")
            if step.startswith("x"):
                try:
                    f = float(step[1:])
                except ValueError:
                    f = 0.0
                if f <= 1:
                    raise ScenarioError(f"{opt}: {p!r}: the factor after 'x' must be a number above 1")
                x = float(a)
                while round(x) <= b:
                    if not out or out[-1] != round(x):
                        out.append(int(round(x)))
                    x *= f
            else:
                s = _one_size(step, block_size, opt)
                out.extend(range(a, b + 1, s))
        else:
            out.append(_one_size(p, block_size, opt))
    if not out:
        raise ScenarioError(f"{opt}: no sizes given")
    return sorted(set(out))


@dataclass
class ReplayResult:
    """The core's answer: ``doc`` as returned, ``frame`` as a polars DataFrame."""

    doc: dict[str, Any]

    @property
    def frame(self) -> Any:
        """One row per policy and size: policy, size, size_bytes, hits, misses, hit_ratio, miss_ratio."""
        import polars as pl

        rows = [{k: r[k] for k in ("policy", "size", "size_bytes", "hits", "misses", "hit_ratio")} for r in self.doc["results"]]
        df = pl.DataFrame(rows, schema={"policy": pl.Utf8, "size": pl.Int64, "size_bytes": pl.Int64, "hits": pl.Int64, "misses": pl.Int64, "hit_ratio": pl.Float64})
        return df.with_columns((1 - pl.col("hit_ratio")).alias("miss_ratio"))

    def to_dict(self) -> dict[str, Any]:
        """The issue's JSON shape, plus format, block size, SHARDS rate and each ARC's final target."""
        d = self.doc
        out: dict[str, Any] = {"trace": d["trace"], "requests": d["requests"], "unique": d["unique"]}
        out["results"] = [
            {k: r[k] for k in ("policy", "size", "hits", "misses", "hit_ratio")} | ({"target": r["target"]} if r.get("target") is not None else {})
            for r in d["results"]
        ]
        out |= {"format": d["format"], "block_size": d["block_size"], "shards": d["shards"], "wall_s": d["wall_s"]}
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict())


def default_block_size(trace: Union[str, Path], fmt: Optional[str] = None) -> int:
    """512 for the ARC paper's ``.lis`` traces, 4096 otherwise."""
    from . import _core

    f = fmt or _core.trace_format(str(trace))
    return 512 if f == "lis" else 4096


def replay(
    trace: Union[str, Path],
    policies: Sequence[str] = ("lru",),
    sizes: Union[str, int, Iterable[Union[str, int]]] = 1024,
    *,
    block_size: Optional[int] = None,
    format: Optional[str] = None,
    release: Optional[str] = None,
    shards: Optional[float] = None,
    max_requests: Optional[int] = None,
    threads: Optional[int] = None,
) -> ReplayResult:
    """Replays ``trace`` through each policy at each size (see the module docs)."""
    from . import _core

    bad = [p for p in policies if p not in POLICIES]
    if bad or not policies:
        raise ScenarioError(f"--policy: {', '.join(map(repr, bad)) or 'none given'}; known: {', '.join(POLICIES)}")
    if not Path(trace).exists():
        raise ScenarioError(f"{trace}: no such trace file")
    bs = block_size if block_size is not None else default_block_size(trace, format)
    spec: dict[str, Any] = {
        "trace": str(trace),
        "policies": list(dict.fromkeys(policies)),
        "sizes": parse_sizes(sizes, bs),
        "block_size": bs,
    }
    for k, v in (("format", format), ("release", release), ("shards", shards), ("max_requests", max_requests), ("threads", threads)):
        if v is not None:
            spec[k] = v
    return ReplayResult(json.loads(_core.replay(json.dumps(spec))))


def plot(result: ReplayResult, path: Union[str, Path]) -> Path:
    """Miss-ratio curves (miss ratio against cache size, one line per policy) to PNG or SVG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ScenarioError("plotting needs matplotlib: pip install \".[plot]\" in the ztwin checkout (or pip install matplotlib)") from None
    p = Path(path)
    if p.suffix.lower() not in (".png", ".svg"):
        raise ScenarioError(f"--plot: {p}: the file must end in .png or .svg")
    df = result.frame
    d = result.doc
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for pol in dict.fromkeys(df["policy"].to_list()):
        sub = df.filter(df["policy"] == pol).sort("size")
        ax.plot(sub["size"].to_list(), sub["miss_ratio"].to_list(), marker="o", markersize=3, label=pol)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"cache size (blocks of {d['block_size']} B)")
    ax.set_ylabel("miss ratio")
    title = f"{Path(d['trace']).name}: {d['requests']:,} requests, {d['unique']:,} unique"
    if d.get("shards"):
        title += f" (SHARDS {d['shards']:g})"
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p)
    plt.close(fig)
    return p
