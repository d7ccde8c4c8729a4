"""ztwin sweep and ztwin.sweep: the grid, its checks before anything runs, the results
frame, determinism, Ray (a fake one that finishes tasks out of order, and the real one
when installed), and the CLI's files.

Runs are tiny: experiment 7's zfs-3000 variant (CPU bound, so the ARC fills) for a few
simulated seconds from a cold start."""

from __future__ import annotations

import json

import polars as pl
import pytest
from typer.testing import CliRunner

import ztwin
from ztwin.cli import app
from ztwin.sweeps import SweepError, grid, parse_set, parse_value, run_sweep

from conftest import ROOT

EXP7 = str(ROOT / "scenarios" / "exp7-lab-sysbench.toml")
SHORT = dict(duration="20s", warmup="0s", report_interval="5s")
GRID = {"filesystem.arc.zfs_arc_max": ["64M", "256M"], "workload.threads": [2, 4]}
runner = CliRunner()


def test_values_parse_as_a_scenario_file_would():
    assert parse_value("300") == 300 and parse_value("0.5") == 0.5 and parse_value("true") is True
    assert parse_value("16K") == "16K" and parse_value("lz4") == "lz4" and parse_value('"lz4"') == "lz4"
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_set("filesystem.recordsize=16K,32K") == ("filesystem.recordsize", ["16K", "32K"])
    assert parse_set("a.b=[1,2],[3,4]") == ("a.b", [[1, 2], [3, 4]])
    assert parse_set(' workload.threads = 4, 8 ') == ("workload.threads", [4, 8])


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("filesystem.recordsize", "expected KEY=V1,V2"),
        ("=1,2", "expected KEY=V1,V2"),
        ("filesystem.recordsize=", "filesystem.recordsize: no values"),
        ("filesystem.recordsize=16K,,32K", "filesystem.recordsize: an empty value"),
        ("filesystem.recordsize=16K,16K", "the value 16K is given twice"),
        ("filesystem..recordsize=16K", "an empty part"),
        ("variants.zfs.seed=1", "'variants' cannot be swept"),
    ],
)
def test_bad_set_is_a_sweep_error_naming_the_key(text, fragment):
    with pytest.raises(SweepError, match=fragment.replace("(", r"\(")):
        parse_set(text)


def test_grid_is_the_product_last_key_fastest():
    assert grid(["a.x=1,2", "b.y=p,q"]) == [{"a.x": 1, "b.y": "p"}, {"a.x": 1, "b.y": "q"}, {"a.x": 2, "b.y": "p"}, {"a.x": 2, "b.y": "q"}]
    with pytest.raises(SweepError, match="given more than once"):
        grid(["a.x=1", "a.x=2"])
    with pytest.raises(SweepError, match="one key contains the other"):
        grid(["a=1", "a.x=2"])
    with pytest.raises(SweepError, match="at least one --set"):
        grid([])
    with pytest.raises(SweepError, match="a.x: no values"):
        grid({"a.x": []})


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return ztwin.sweep(EXP7, GRID, ["zfs-3000"], use_ray=False, **SHORT)


def test_frame_rows_columns_and_first_principles(frame):
    assert frame.height == 4  # 2 x 2 points, one variant, one phase
    assert frame.columns[:9] == ["point", "filesystem.arc.zfs_arc_max", "workload.threads", "variant", "phase", "type", "start_s", "end_s", "window_s"]
    for col in ("qps", "tps", "latency_p95_ms", "latency_p99_ms", "cpu_utilization", "arc_hit_ratio", "arc_size", "disk_read_iops", "innodb_buffer_pool_hit_ratio"):
        assert col in frame.columns and frame[col].null_count() == 0, col
    assert frame["point"].to_list() == [0, 1, 2, 3]
    assert frame["filesystem.arc.zfs_arc_max"].to_list() == ["64M", "64M", "256M", "256M"]
    assert frame["workload.threads"].to_list() == [2, 4, 2, 4]
    assert set(frame["variant"]) == {"zfs-3000"}
    # The ARC never holds more than zfs_arc_max and the 16 MiB it may float above it
    # before eviction runs (2.2.11's arc_is_overflowing: zfs_max_recordsize), plus a record.
    limit = {"64M": 64 * 2**20, "256M": 256 * 2**20}
    for r in frame.iter_rows(named=True):
        assert 0 < r["arc_size"] <= limit[r["filesystem.arc.zfs_arc_max"]] + 16 * 2**20 + 2**20
    # The same reads on the same seed: a bigger ARC misses no more per query, so the disk
    # reads no more per query. (ARC *hits* may fall: a bigger ARC has a bigger dbuf cache,
    # which serves accesses before they reach the ARC.)
    for threads in (2, 4):
        small, big = (frame.filter((pl.col("workload.threads") == threads) & (pl.col("filesystem.arc.zfs_arc_max") == m)).row(0, named=True) for m in ("64M", "256M"))
        assert big["arc_misses"] / big["queries"] <= small["arc_misses"] / small["queries"]
        assert big["disk_read_iops"] / big["qps"] <= small["disk_read_iops"] / small["qps"]


def test_the_same_grid_gives_the_same_frame(frame):
    again = ztwin.sweep(EXP7, ["filesystem.arc.zfs_arc_max=64M,256M", "workload.threads=2,4"], ["zfs-3000"], use_ray=False, **SHORT)
    assert again.equals(frame)


def test_a_point_is_the_run_of_its_settings(frame):
    import tomllib

    from pathlib import Path

    raw = tomllib.loads(Path(EXP7).read_text())
    raw["variants"] = {"zfs-3000": raw["variants"]["zfs-3000"]}
    raw["run"] = {"duration": "20s", "warmup": "0s", "report_interval": "5s"}
    raw["filesystem"]["arc"]["zfs_arc_max"] = "256M"
    raw["workload"]["threads"] = 2
    doc = ztwin.run(raw).summary["variants"]["zfs-3000"]
    row = frame.filter(pl.col("point") == 2).row(0, named=True)
    assert row["qps"] == doc["qps"] and row["arc_hits"] == doc["arc"]["hits"] and row["latency_p99_ms"] == doc["latency_ms"]["p99"]


def test_every_point_is_checked_before_any_runs(monkeypatch):
    from ztwin import _core

    ran = []
    monkeypatch.setattr(_core, "run_variant", lambda *a: ran.append(a) or "{}")
    with pytest.raises(ztwin.ScenarioError) as e:
        run_sweep(EXP7, ["filesystem.arc.zfs_arc_max=64M,1banana"], ["zfs-3000"], use_ray=False)
    assert "sweep point 2 of 2 (filesystem.arc.zfs_arc_max=1banana)" in str(e.value)
    assert e.value.errors()[0]["loc_str"] == "filesystem.arc.zfs_arc_max" and not ran


def test_rows_keep_the_grid_order_whatever_order_ray_finishes_in(monkeypatch, frame):
    """A fake Ray that runs each task when it is submitted and hands them back last first:
    the frame is the in-process one; the local cluster is started bounded and quiet, and
    shut down."""
    import sys
    import types

    calls: dict = {"init": None, "shutdown": 0}

    class Ref:
        def __init__(self, value):
            self.value = value

    def remote(**opts):
        assert opts["num_cpus"] == 1

        def wrap(fn):
            return types.SimpleNamespace(remote=lambda *a: Ref(fn(*a)))

        return wrap

    fake = types.SimpleNamespace(
        is_initialized=lambda: False,
        init=lambda **kw: calls.__setitem__("init", kw),
        remote=remote,
        wait=lambda pending, num_returns: ([pending[-1]], pending[:-1]),
        get=lambda ref: ref.value,
        shutdown=lambda: calls.__setitem__("shutdown", calls["shutdown"] + 1),
    )
    monkeypatch.setitem(sys.modules, "ray", fake)
    finished = []
    sw = run_sweep(EXP7, GRID, ["zfs-3000"], overrides={"run": {"duration": "20s", "warmup": "0s", "report_interval": "5s"}}, workers=2, on_done=lambda k, n, label: finished.append(label))
    assert sw.backend == "ray" and sw.frame().equals(frame)
    assert finished[0].startswith("filesystem.arc.zfs_arc_max=256M, workload.threads=4")
    kw = calls["init"]
    assert kw["include_dashboard"] is False and kw["num_cpus"] == 2 and kw["address"] == "local" and kw["log_to_driver"] is False
    assert calls["shutdown"] == 1


def test_without_ray_it_runs_in_process_with_a_note(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    notes = []
    sw = run_sweep(EXP7, ["workload.threads=2"], ["zfs-3000"], overrides={"run": {"duration": "5s", "warmup": "0s", "report_interval": "5s"}}, on_note=notes.append)
    assert sw.backend == "in-process" and "Ray is not installed" in notes[0]
    with pytest.raises(SweepError, match="Ray is not installed"):
        run_sweep(EXP7, ["workload.threads=2"], ["zfs-3000"], ray_address="127.0.0.1:6379")


def test_on_ray(frame):
    """The real Ray (skipped when it is not installed): a local cluster of 2 CPUs."""
    pytest.importorskip("ray")
    sw = run_sweep(EXP7, GRID, ["zfs-3000"], overrides={"run": {"duration": "20s", "warmup": "0s", "report_interval": "5s"}}, use_ray=True, workers=2)
    assert sw.backend == "ray" and sw.frame().equals(frame)
    import ray

    assert not ray.is_initialized()


# --------------------------------------------------------------------------------------
# The command line


def _sweep(tmp_path, *sets, extra=()):
    args = ["sweep", EXP7, "--variant", "zfs-3000", "--duration", "20s", "--warmup", "0s", "--report-interval", "5s", "--no-ray", "--out", str(tmp_path / "out")]
    for s in sets:
        args += ["--set", s]
    return runner.invoke(app, args + list(extra))


def test_cli_sweep_writes_parquet_json_and_report(tmp_path, frame):
    res = _sweep(tmp_path, "filesystem.arc.zfs_arc_max=64M,256M", "workload.threads=2,4", extra=["--png", str(tmp_path / "png")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    assert pl.read_parquet(out / "results.parquet").equals(frame)
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["kind"] == "ztwin-sweep" and doc["keys"] == list(GRID) and len(doc["runs"]) == 4
    assert "series" in doc["runs"][0]["zfs-3000"]
    page = (out / "report.html").read_text()
    for section in ('id="scenario"', 'id="curves"', 'id="summary"', "Throughput against filesystem.arc.zfs_arc_max", "best point of each line"):
        assert section in page, section
    assert page.count("Plotly.newPlot(") == page.count('class="fig"') >= 8
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs() in page and "src=" not in page.replace(get_plotlyjs(), "")  # no network needed
    pngs = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert "sweep-qps.png" in pngs and len(pngs) == page.count('class="fig"')
    # ztwin report DIR draws the same page from the directory.
    res = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "again.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "again.html").read_text() == page


@pytest.mark.parametrize(
    "sets, fragment",
    [
        (["filesystem.arc.zfs_arc_mx=1G"], "filesystem.arc.zfs_arc_mx\n  unknown key 'zfs_arc_mx'"),
        (["filesystem.arc.zfs_arc_max=1G,lots"], "(filesystem.arc.zfs_arc_max=lots)"),
        (["workload.threads=4,many"], "workload.threads\n  must be an integer"),
        (["workload.threads="], "--set workload.threads: no values"),
        (["workload.threads"], "expected KEY=V1,V2"),
    ],
)
def test_cli_bad_set_exits_2_naming_the_key(tmp_path, sets, fragment):
    res = _sweep(tmp_path, *sets)
    assert res.exit_code == 2, res.output
    assert res.output.startswith("sweep error:") and fragment in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out").exists()


def test_cli_sweep_of_a_key_a_variant_lacks_says_how_to_choose_variants(tmp_path):
    res = runner.invoke(app, ["sweep", EXP7, "--variant", "zfs-300", "--variant", "ext4-300", "--set", "filesystem.recordsize=16K,32K", "--duration", "5s", "--warmup", "0s", "--no-ray", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "variants.ext4-300.filesystem.recordsize" in res.output and "--variant" in res.output
