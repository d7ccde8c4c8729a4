"""Results of a run: the core's per-variant documents, as a summary dict and a data frame.

The core answers each variant with one JSON object (see ``ztwin_core::run``)::

    {"qps", "tps", "queries", "window_s",
     "latency_ms": {"p50", "p95", "p99", "max"},
     "cpu_utilization",
     "devices": {NAME: {"read_iops", "write_iops", "read_mbps", "write_mbps", "utilization",
                        "flushes_per_sec" (where the intent log runs),
                        "drive": {the same for the drive behind a RAID controller's volume}}},
     "controllers": {NAME: {"cache_mib", "dirty_mib", "write_iops", "write_wait_share",
                     "write_wait_ms_mean", "absorbed_mbps", "read_hit_share", "destage_iops",
                     "destage_mbps", "destage_kib_per_io", "overfull_peak_mib"}},  # RAID only
     "innodb": {"buffer_pool_hit_ratio", "pages_read"},
     "waits": {"mean_ms": {CLASS: ms a transaction spent waiting for it: "cpu", "data_read",
               "page_in_flight", "free_frame", "log_free", "commit_redo" (the redo log's write
               and flush), "commit_binlog" (the binary log's write and sync), "commit_queue"
               (the binary log's group commit stages held by another group), "row_lock",
               "other"} (they sum to the mean latency), "slowest": {"from_ms", "transactions", "share",
               "mean_ms": {the same for the transactions from the 95th percentile's band}}},
     "arc": {arcstats names: "hits", "misses", "demand_data_misses", ..., "size", "c"},  # ZFS only
     "zfetch": {zfetchstats names of the release: "hits", "misses", "max_streams", ...},  # ZFS only
     "zil": {/proc/spl/kstat/zfs/zil names of the release: "zil_commit_count",
             "zil_itx_indirect_count", ..., "zil_itx_metaslab_slog_bytes", then the model's
             "lwb_writes", "dmu_sync_writes", "flushes", ...},  # ZFS with fsync/O_SYNC/sync=always
     "series": {"time_s": [...], "qps": [...], "latency_p95_ms": [...], "arc_hits": [...], ...}}

:attr:`Result.summary` is ``{"scenario": NAME, "variants": {VARIANT: that object without
"series"}}``; :attr:`Result.series` is one long polars frame with a ``variant`` column
first, then the series columns (columns a variant lacks, e.g. ``arc_*`` for XFS, are null).
:meth:`Result.summary_frame` is the summaries as data: one row per variant and phase.

Units of the series' columns: ``time_s`` is the end of the interval (simulated seconds);
``qps``, ``*_iops``, ``*_mbps`` (MB/s, 10^6 bytes) and ``fio_iops`` are rates per second
over the interval; ``arc_hits``, ``arc_misses``, ``arc_demand_*`` and the other ``arc_``
counters are counts per interval; ``arc_size`` and ``arc_c`` are bytes at the interval's
end; with a cache device ``l2_hits``, ``l2_misses`` and ``l2_write_bytes`` are counts per
interval, ``l2_hit_ratio`` their fraction (0..1, arcstat's l2hit%), ``l2_size``,
``l2_asize`` and ``l2_hdr_size`` bytes at the interval's end; a RAID controller's
``NAME_dirty_mib`` is its cache's dirty data (MiB) at the interval's end and
``NAME_destage_mbps`` its destaging over it; ``*_utilization`` and ``cpu_utilization`` are fractions (0..1); latency columns are
milliseconds over the interval's statements (or fio I/Os), null in an interval in which
none completed. Likewise a summary's ``latency_ms`` (or a fio direction's ``clat_ms``)
is all null when no query (no I/O) completed in its window: qps 0 has no latency.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import polars as pl

__all__ = ["Result", "SCHEMA_VERSION"]

#: Version of the JSON ``ztwin run --json`` prints (``schema_version``): raised when a key
#: changes meaning or goes; new keys do not raise it.
SCHEMA_VERSION = 1


def _flatten(doc: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
    """Nested dicts as ``a_b_c`` columns; lists (per-job details, the series) left out."""
    for k, v in doc.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            _flatten(v, f"{name}_", out)
        elif isinstance(v, (bool, int, float, str)) or v is None:
            out[name] = v


class Result:
    """The outcome of running some variants of one scenario."""

    def __init__(
        self,
        scenario: str,
        variants: Mapping[str, Mapping[str, Any]],
        configs: Optional[Mapping[str, Mapping[str, Any]]] = None,
        *,
        source: str = "",
        description: str = "",
    ) -> None:
        self.scenario = scenario
        #: The scenario's file (or ``<dict>``) and description, when known.
        self.source = source
        self.description = description
        self._docs = {name: copy.deepcopy(dict(doc)) for name, doc in variants.items()}
        self.configs = {name: copy.deepcopy(dict(c)) for name, c in (configs or {}).items()}

    @classmethod
    def from_core(
        cls, scenario: str, answers: Mapping[str, str], configs: Optional[Mapping[str, Mapping[str, Any]]] = None, *, source: str = "", description: str = ""
    ) -> "Result":
        """Builds a result from the core's JSON answers ``{variant: json text}``."""
        return cls(scenario, {name: json.loads(text) for name, text in answers.items()}, configs, source=source, description=description)

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

    def summary_frame(self) -> pl.DataFrame:
        """The summaries as data: one row per variant and phase (``variant``, ``phase``,
        ``type``, ``start_s``, ``end_s``, then every figure of the phase, nested names joined
        by ``_``: ``qps``, ``latency_ms_p95``, ``arc_hits``, ``arc_demand_data_misses``,
        ``devices_NAME_read_iops``, ``devices_NAME_flushes_per_sec``, ``fio_read_iops``,
        ``fio_sync_lat_ms_p99``, ...; arcstats keep their names under ``arc_``, the zil
        kstats under ``zil_``: ``zil_zil_commit_count``). Counts are integers, ratios and rates floats, flags booleans; a figure a
        phase lacks is null. A run without phases gives one row per variant (phase null)."""
        rows = []
        for name, doc in self._docs.items():
            phases = doc.get("phases") or [{k: v for k, v in doc.items() if k != "series"}]
            for p in phases:
                row: dict[str, Any] = {"variant": name, "phase": p.get("name"), "type": p.get("type")}
                _flatten({k: v for k, v in p.items() if k not in ("name", "type")}, "", row)
                rows.append(row)
        if not rows:
            return pl.DataFrame({"variant": []}, schema={"variant": pl.String})
        return pl.from_dicts(rows, infer_schema_length=None)

    def to_json(self, indent: Optional[int] = 2, full: bool = False) -> str:
        """The summary as one JSON document (what ``ztwin run --json`` prints), with its
        ``schema_version`` first. With ``full`` (``--json --full``) each variant keeps its
        ``series`` and the document adds ``source``, ``description`` and ``configs`` (the
        resolved config of each variant): what ``ztwin report`` draws a run's report from."""
        if not full:
            return json.dumps({"schema_version": SCHEMA_VERSION, **self.summary}, indent=indent)
        doc = {
            "schema_version": SCHEMA_VERSION,
            "scenario": self.scenario,
            "source": self.source,
            "description": self.description,
            "variants": self._docs,
            "configs": self.configs,
        }
        return json.dumps(doc, indent=indent)

    def report_data(self) -> Any:
        """What an HTML report of this result shows (:class:`ztwin.html_report.RunData`)."""
        from .html_report import RunData

        return RunData(self.scenario, self.source, self.description, {n: self.variant(n) for n in self.variant_names}, dict(self.configs))

    def write_report(self, path: Union[str, Path], png_dir: Optional[Union[str, Path]] = None) -> Path:
        """Writes the HTML report of this result (see :mod:`ztwin.html_report`); with
        ``png_dir`` each figure as a PNG there. Returns the report's path."""
        from .html_report import write_run_report

        return write_run_report(self.report_data(), path, png_dir)

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
