"""Results of a run: the core's per-variant documents, as a summary dict and a data frame.

The core answers each variant with one JSON object (see ``ztwin_core::run``)::

    {"qps", "tps", "queries", "window_s",
     "latency_ms": {"p50", "p95", "p99", "max"},
     "cpu_utilization",
     "devices": {NAME: {"read_iops", "write_iops", "read_mbps", "write_mbps", "utilization"}},
     "innodb": {"buffer_pool_hit_ratio", "pages_read"},
     "arc": {arcstats names: "hits", "misses", "demand_data_misses", ..., "size", "c"},  # ZFS only
     "zfetch": {zfetchstats names of the release: "hits", "misses", "max_streams", ...},  # ZFS only
     "series": {"time_s": [...], "qps": [...], "latency_p95_ms": [...], "arc_hits": [...], ...}}

:attr:`Result.summary` is ``{"scenario": NAME, "variants": {VARIANT: that object without
"series"}}``; :attr:`Result.series` is one long polars frame with a ``variant`` column
first, then the series columns (columns a variant lacks, e.g. ``arc_*`` for XFS, are null).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import polars as pl

__all__ = ["Result"]


class Result:
    """The outcome of running some variants of one scenario."""

    def __init__(
        self,
        scenario: str,
        variants: Mapping[str, Mapping[str, Any]],
        configs: Optional[Mapping[str, Mapping[str, Any]]] = None,
    ) -> None:
        self.scenario = scenario
        self._docs = {name: copy.deepcopy(dict(doc)) for name, doc in variants.items()}
        self.configs = {name: copy.deepcopy(dict(c)) for name, c in (configs or {}).items()}

    @classmethod
    def from_core(cls, scenario: str, answers: Mapping[str, str], configs: Optional[Mapping[str, Mapping[str, Any]]] = None) -> "Result":
        """Builds a result from the core's JSON answers ``{variant: json text}``."""
        return cls(scenario, {name: json.loads(text) for name, text in answers.items()}, configs)

    @property
    def variant_names(self) -> list[str]:
        return list(self._docs)

    def variant(self, name: str) -> dict[str, Any]:
        """The core's whole document of one variant, series included."""
        return copy.deepcopy(self._docs[name])

    @property
    def summary(self) -> dict[str, Any]:
        """``{"scenario": NAME, "variants": {VARIANT: core summary without "series"}}``."""
        return {
            "scenario": self.scenario,
            "variants": {n: {k: copy.deepcopy(v) for k, v in d.items() if k != "series"} for n, d in self._docs.items()},
        }

    @property
    def series(self) -> pl.DataFrame:
        """Every variant's series in one frame: ``variant`` then the core's columns."""
        frames = []
        for name, doc in self._docs.items():
            cols = doc.get("series") or {}
            df = pl.DataFrame(cols) if cols else pl.DataFrame({"time_s": []}, schema={"time_s": pl.Float64})
            frames.append(df.select(pl.lit(name).alias("variant"), pl.all()))
        if not frames:
            return pl.DataFrame({"variant": []}, schema={"variant": pl.String})
        return pl.concat(frames, how="diagonal_relaxed")

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The summary as one JSON document (what ``ztwin run --json`` prints)."""
        return json.dumps(self.summary, indent=indent)

    def to_csv(self, directory: Union[str, Path]) -> Path:
        """Writes the series as one long CSV, ``DIR/<scenario>.series.csv``; returns its path.

        One row per variant and report interval; column ``variant`` first, then the core's
        series columns (union over variants; empty where a variant has no such column).
        """
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{self.scenario}.series.csv"
        self.series.write_csv(path)
        return path

    def __repr__(self) -> str:
        return f"Result(scenario={self.scenario!r}, variants={self.variant_names!r})"
