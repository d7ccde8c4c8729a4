"""Result formatting and the command line.

FORMATTING TESTS, NOT MODEL RESULTS: `fake_run_variant` replaces the core's run_variant by a
hand-written document of the documented shape (tests/fixtures/fake_core_result.json)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Optional

import polars as pl
import pytest
from typer.testing import CliRunner

import ztwin
from ztwin.cli import app, arcstat_lines
from ztwin.results import Result

runner = CliRunner()

MINI = """
name = "mini"
[machine]
preset = "lab-guest"
[devices.vd]
preset = "virtio-throttled"
[filesystem]
type = "zfs"
vdevs = ["vd"]
[filesystem.arc]
zfs_arc_max = "256MiB"
[database]
type = "innodb"                   # MySQL's defaults
[dataset]
type = "sysbench"                 # sysbench's defaults
[workload]
type = "sysbench"
test = "oltp_point_select"
[variants.zfs]
[variants.ext4]
filesystem = { type = "ext4", device = "vd" }
database = { innodb_flush_method = "O_DIRECT" }   # the core models ext4 with O_DIRECT only
"""


# --------------------------------------------------------------------------------------
# Result


def test_result_summary_series_json(fake_core_result, tmp_path):
    xfs = {k: v for k, v in fake_core_result.items() if k != "arc"}
    xfs["series"] = {k: v for k, v in fake_core_result["series"].items() if not k.startswith("arc_")}
    r = Result("s", {"zfs": fake_core_result, "xfs": xfs})
    s = r.summary
    assert s["scenario"] == "s" and list(s["variants"]) == ["zfs", "xfs"]
    assert "series" not in s["variants"]["zfs"] and s["variants"]["zfs"]["arc"]["hits"] == 1000
    df = r.series
    assert df.columns[0] == "variant" and df.height == 6
    assert df.filter(pl.col("variant") == "xfs")["arc_hits"].null_count() == 3
    assert json.loads(r.to_json()) == {"schema_version": ztwin.results.SCHEMA_VERSION, **s}
    path = r.to_csv(tmp_path / "out")
    back = pl.read_csv(path)
    assert back.height == 6 and back.columns == df.columns


def test_run_api_calls_core_per_variant(fake_run_variant, write_toml):
    res = ztwin.run(write_toml(MINI))
    assert res.variant_names == ["zfs", "ext4"]
    assert [c["variant"] for c in fake_run_variant] == ["zfs", "ext4"]
    res = ztwin.run(write_toml(MINI), variants=["ext4"])
    assert res.variant_names == ["ext4"]
    with pytest.raises(ztwin.ScenarioError, match="has no variant 'nope'; its variants: zfs, ext4"):
        ztwin.run(write_toml(MINI), variants=["nope"])


def test_arcstat_rows_of_the_window_by_default_and_a_limit():
    n = 100
    series = {
        "time_s": [float(i + 1) for i in range(n)],
        "measured": [1.0 if i >= 60 else 0.0 for i in range(n)],
        **{k: [1.0] * n for k in ("arc_hits", "arc_misses", "arc_demand_data_misses", "arc_demand_metadata_misses", "arc_size", "arc_c")},
    }
    doc = {"series": series}
    assert len(arcstat_lines(doc)) == 1 + n
    window = arcstat_lines(doc, rows="window")
    assert len(window) == 1 + 40 and window[1].split()[0] == "61.0"
    short = arcstat_lines(doc, rows="window", limit=10)
    assert len(short) == 1 + 10 + 1 and "30 intervals not shown" in short[6]


def test_arcstat_lines(fake_core_result):
    lines = arcstat_lines(fake_core_result)
    assert lines[0].split() == ["time", "read", "miss", "miss%", "dmis", "dm%", "mmis", "mm%", "arcsz", "c"]
    first = lines[1].split()
    assert first[0] == "10.0" and first[1] == "4.6K" and first[2] == "3.0K" and first[-1] == "1.0G"
    assert arcstat_lines({"series": {"time_s": [1.0], "qps": [1.0]}}) == []


def test_arcstat_reads_count_22_iohits(fake_core_result):
    # 2.2's iohits are ARC accesses too (neither hits nor misses): arcstat's read column
    # grows by them and the miss share falls.
    doc = copy.deepcopy(fake_core_result)
    n = len(doc["series"]["time_s"])
    doc["series"]["arc_iohits"] = [1600.0 * (doc["series"]["time_s"][0])] * n
    base, io = arcstat_lines(fake_core_result)[1].split(), arcstat_lines(doc)[1].split()
    assert io[0] == base[0] and io[2] == base[2]
    assert float(io[3]) < float(base[3])
    assert io[1] != base[1]


# --------------------------------------------------------------------------------------
# CLI


def test_summary_frame_one_row_per_variant_and_phase(fake_core_result):
    doc = dict(fake_core_result)
    doc["phases"] = [
        {"name": "warm", "type": "cat", "start_s": 0.0, "end_s": 5.0, "bytes_read": 10, "arc": {"hits": 3, "misses": 1}},
        {"name": "bench", "type": "workload", "start_s": 5.0, "end_s": 65.0, "qps": 100.5, "arc": {"hits": 7, "misses": 2}, "latency_ms": {"p95": 1.5}},
    ]
    xfs = {k: v for k, v in fake_core_result.items() if k != "arc"}
    df = Result("s", {"zfs": doc, "xfs": xfs}).summary_frame()
    assert df.columns[:3] == ["variant", "phase", "type"]
    assert df.height == 3 and df["variant"].to_list() == ["zfs", "zfs", "xfs"]
    assert df["phase"].to_list()[:2] == ["warm", "bench"]
    assert df["arc_hits"].to_list()[:2] == [3, 7] and df.schema["arc_hits"] == pl.Int64
    assert df["latency_ms_p95"].to_list()[1] == 1.5 and df["bytes_read"].to_list()[1] is None


def test_cli_run_json_is_one_document(fake_run_variant, write_toml):
    r = runner.invoke(app, ["run", str(write_toml(MINI)), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert doc["schema_version"] == 1
    assert doc["scenario"] == "mini" and list(doc["variants"]) == ["zfs", "ext4"]
    assert set(doc["variants"]["zfs"]) == {"qps", "tps", "queries", "window_s", "latency_ms", "cpu_utilization", "devices", "innodb", "arc"}
    assert "arc" not in doc["variants"]["ext4"]


def test_cli_run_default_scenario_human_output(fake_run_variant):
    r = runner.invoke(app, ["run"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "exp1-arc-sizing" in out and "arcstat-style" in out
    assert "throughput (queries/s)" in out and "latency p95 (ms)" in out and "ebs reads (IOPS)" in out
    # The default scenario's variants warm up for different times: a row says which.
    assert "600 s of simulated time)" in out and "warm-up before the window (s)" in out
    assert [c["variant"] for c in fake_run_variant] == ["xfs", "zfs-arc-1g", "zfs-arc-meta"]


def test_cli_run_options(fake_run_variant, write_toml, tmp_path):
    r = runner.invoke(app, ["run", str(write_toml(MINI)), "--json", "--variant", "ext4", "--seed", "7",
                            "--duration", "30s", "--csv", str(tmp_path / "csv")])
    assert r.exit_code == 0, r.output
    assert list(json.loads(r.stdout)["variants"]) == ["ext4"]
    (cfg,) = fake_run_variant
    assert cfg["seed"] == 7 and cfg["run"]["duration_ns"] == 30 * 10**9
    assert pl.read_csv(tmp_path / "csv" / "mini.series.csv")["variant"].to_list() == ["ext4"] * 3
    r = runner.invoke(app, ["run", str(write_toml(MINI)), "--json", "--variant", "ext4", "--warmup", "0s",
                            "--report-interval", "5s"])
    assert r.exit_code == 0, r.output
    cfg = fake_run_variant[-1]
    assert cfg["run"]["warmup_ns"] == 0 and cfg["run"]["report_interval_ns"] == 5 * 10**9
    assert cfg["run"]["duration_ns"] > 0  # the scenario's, kept


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["run", "{bad}"], "1 validation error for scenario"),
        (["run", "{mini}", "--variant", "nope"], "has no variant 'nope'"),
        (["run", "{mini}", "--duration", "soon"], "--duration: cannot read 'soon'"),
        (["run", "{mini}", "--report-interval", "often"], "--report-interval: cannot read 'often'"),
        (["run", "/nonexistent.toml"], "does not exist"),
        (["validate", "{bad}"], "filesystem.recordsize"),
        (["geometry", "--file-size", "2Q"], "--file-size: unknown size unit 'Q'"),
    ],
)
def test_cli_errors_exit_2_with_message(args, fragment, write_toml):
    bad = write_toml(MINI.replace('[filesystem.arc]', 'recordsize = "24K"\n[filesystem.arc]'), "bad.toml")
    mini = write_toml(MINI, "mini.toml")
    args = [a.format(bad=bad, mini=mini) for a in args]
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert fragment in r.stderr
    assert "Traceback" not in r.output and r.stdout == ""


def test_cli_simulation_error_exit_2(write_toml, monkeypatch):
    from ztwin import _core

    def fail(*_):
        raise ztwin.SimulationError("mini.zfs at t=5 ns: arc exploded")

    monkeypatch.setattr(_core, "run_variant", fail)
    r = runner.invoke(app, ["run", str(write_toml(MINI)), "--json"])
    assert r.exit_code == 2 and r.stderr.startswith("run error: the simulation failed: mini.zfs at t=5 ns: arc exploded")


def test_cli_unexpected_error_is_not_a_traceback(write_toml, monkeypatch):
    from ztwin import _core

    class PanicException(BaseException):  # what pyo3 raises on a Rust panic
        pass

    def panic(*_):
        raise PanicException("index out of bounds")

    monkeypatch.setattr(_core, "run_variant", panic)
    r = runner.invoke(app, ["run", str(write_toml(MINI)), "--json"])
    assert r.exit_code == 3
    assert "internal error in the simulation core" in r.stderr and "Traceback" not in r.output


def test_cli_validate_prints_resolved_json(write_toml):
    r = runner.invoke(app, ["validate", str(write_toml(MINI))])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert list(doc) == ["zfs", "ext4"] and doc["ext4"]["filesystem"]["type"] == "ext4"


# ext4 with innodb_flush_method = fsync (MySQL's default) reads and writes the tables
# through the page cache; a buffer pool of all the RAM leaves it nothing: the core refuses
# that (its budget, fs::page_cache::budget), Python's schema cannot see it.
NO_PAGE_CACHE = MINI.replace('database = { innodb_flush_method = "O_DIRECT" }', "").replace(
    'type = "innodb"                   # MySQL\'s defaults', 'type = "innodb"\ninnodb_buffer_pool_size = "4GiB"').replace(
    'zfs_arc_max = "256MiB"', 'zfs_arc_max = "256MiB"\n[variants.zfs.database]\ninnodb_buffer_pool_size = "1GiB"')


def test_validate_and_run_refuse_what_the_core_refuses_before_any_variant_runs(write_toml, monkeypatch):
    """The core's own checks (here: no room for the page cache of ext4's buffered files)
    apply at `validate` and before the first variant of `run`, with the key as written."""
    from ztwin import _core

    ran = []
    monkeypatch.setattr(_core, "run_variant", lambda cfg, *_: ran.append(cfg) or "{}")
    fsync = write_toml(NO_PAGE_CACHE, "fsync.toml")
    for args in (["validate", str(fsync)], ["run", str(fsync), "--json"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert "database.innodb_buffer_pool_size" in r.stderr and "page cache" in r.stderr and "(in variant ext4)" in r.stderr
    assert ran == []  # the zfs variant comes first but did not run


def test_core_errors_are_typed_with_their_parts(write_toml):
    """The core's refusal is a ScenarioError naming the key (located in its variant); a
    simulation failure carries its component and simulated time."""
    from ztwin.exceptions import SimulationError

    fsync = write_toml(NO_PAGE_CACHE, "fsync.toml")
    with pytest.raises(ztwin.ScenarioError) as e:
        ztwin.check_variants(ztwin.load_scenario(fsync))
    # Written in the base (the zfs variant overrides it, the ext4 one does not): named there.
    assert e.value.field == "database.innodb_buffer_pool_size"
    assert e.value.errors()[0]["loc"] == ("database", "innodb_buffer_pool_size")
    assert "(in variant ext4)" in e.value.errors()[0]["msg"]
    s = SimulationError.from_core("pool.vdev0", 5, "no device answers")
    assert (s.component, s.time_ns) == ("pool.vdev0", 5) and str(s) == "pool.vdev0 at t=5 ns: no device answers"


@pytest.mark.parametrize(
    "change, field, fragment",
    [
        ('[filesystem.arc]', "filesystem.compression", "zstd exists from release 2.0"),
        ('zfs_arc_max = "256MiB"', "filesystem.arc.zfs_arc_max", "does not model memory pressure"),
    ],
)
def test_core_checks_the_new_user_missed(change, field, fragment, write_toml):
    """zstd on a release before 2.0; an ARC and a buffer pool that cannot both fit in RAM."""
    text = MINI
    if "compression" in field:
        text = text.replace('[filesystem.arc]', 'release = "0.8"\ncompression = "zstd"\n[filesystem.arc]')
    else:
        text = text.replace('zfs_arc_max = "256MiB"', 'zfs_arc_max = "3GiB"').replace('type = "innodb"', 'type = "innodb"\ninnodb_buffer_pool_size = "3GiB"')
    with pytest.raises(ztwin.ScenarioError) as e:
        ztwin.check_variants(ztwin.load_scenario(write_toml(text)), ["zfs"])
    assert e.value.field == field and fragment in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "cpu, field",
    [("speed = 1e300", "machine.cpu.speed"), ("statement_ns = 0", "machine.cpu.statement_ns"), ("syscall_ns = 0", "machine.cpu.syscall_ns")],
)
def test_time_that_cannot_advance_is_refused_not_hung(cpu, field, write_toml):
    """A statement or a system call that costs no simulated time would keep a client
    issuing at one instant forever: refused before the run."""
    text = MINI.replace('[devices.vd]', f'[machine.cpu]\n{cpu}\n[devices.vd]')
    with pytest.raises(ztwin.ScenarioError) as e:
        ztwin.check_variants(ztwin.load_scenario(write_toml(text)), ["zfs"])
    assert e.value.field == field, str(e.value)


def test_cli_geometry_experiment1_tree():
    """Experiment 1's table file: 145447 16K records, 16K indirect blocks -> a 4-level tree."""
    size = str(145447 * 16384)
    r = runner.invoke(app, ["geometry", "--file-size", size, "--recordsize", "16K", "--indirect-block-size", "16K", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [lv["blocks"] for lv in doc["per_file"]["levels"]] == [145447, 1137, 9, 1]
    assert doc["per_file"]["nlevels"] == 4
    r = runner.invoke(app, ["geometry", "--file-size", size, "--recordsize", "16K", "--indirect-block-size", "16K", "--files", "330"])
    assert r.exit_code == 0, r.output
    assert "L3" in r.stdout and "145,447" in r.stdout and "Metadata share" in r.stdout
    assert "All 330 file(s)" in r.stdout


def test_version():
    from ztwin import _core

    assert ztwin.core_version() == _core.version()
    assert ztwin.__version__ == "0.1.0"


def test_cli_geometry_of_a_scenario_dataset():
    """Experiment 1's dataset: 330 tables, 4-level trees whose indirect blocks are 0.79% of
    the data (the brief's rule of thumb for 16K records: 0.8%)."""
    from conftest import ROOT

    r = runner.invoke(app, ["geometry", "--scenario", str(ROOT / "scenarios" / "exp1-arc-sizing.toml"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["files"] == 330 and doc["per_file"]["nlevels"] == 4
    assert doc["metadata_share"] == pytest.approx(128 / 16384, rel=0.02)
    r = runner.invoke(app, ["geometry", "--scenario", str(ROOT / "scenarios" / "exp1-arc-sizing.toml"), "--variant", "xfs"])
    assert r.exit_code == 2 and "no ZFS variant named 'xfs'" in r.stderr


def test_default_scenario_is_experiment_1():
    """The packaged default and scenarios/exp1-arc-sizing.toml are the same file."""
    from importlib import resources

    from conftest import ROOT

    packaged = resources.files("ztwin").joinpath("scenarios/default.toml").read_text()
    assert packaged == (ROOT / "scenarios" / "exp1-arc-sizing.toml").read_text()


def _exp7_run(tmp_path: Path, name: str, variant: Optional[dict], run: dict) -> tuple[Path, dict]:
    """Experiment 7's scenario with one variant (`variant`, or the scenario's own `name`)
    and run settings `run`, written to `tmp_path`: its path and `ztwin run --json`'s
    document of that variant."""
    import tomllib

    import tomli_w

    raw = tomllib.loads((Path(__file__).resolve().parents[1] / "scenarios" / "exp7-lab-sysbench.toml").read_text())
    raw["variants"] = {name: variant if variant is not None else raw["variants"][name]}
    raw["run"] = run
    p = tmp_path / f"{name}.toml"
    p.write_text(tomli_w.dumps(raw))
    r = runner.invoke(app, ["run", str(p), "--json"])
    assert r.exit_code == 0, r.stderr
    return p, json.loads(r.stdout)["variants"][name]


def test_a_window_without_finished_queries_reports_no_latency(tmp_path):
    """qps 0 has no latency: null in the summary and '-' in the table, not 0.0 ms."""
    slow = {"filesystem": {"type": "ext4", "device": "disk", "block_size": "4K"}, "devices": {"disk": {"iops_limit": 1}}}
    p, v = _exp7_run(tmp_path, "slow", slow, {"warmup": "0s", "duration": "200ms", "report_interval": "100ms"})
    assert v["queries"] == 0 and set(v["latency_ms"].values()) == {None}
    # Nor has any interval of the series.
    series = ztwin.run(p).series
    assert series["qps"].to_list() == [0.0, 0.0] and series["latency_p50_ms"].null_count() == 2
    r = runner.invoke(app, ["run", str(p)])
    assert r.exit_code == 0 and "latency p50 (ms)" in r.stdout
    line = next(x for x in r.stdout.splitlines() if "latency p50 (ms)" in x)
    assert "-" in line.split("│")[2] and "0.00" not in line


def test_summary_only_prints_the_summary_tables_alone(fake_run_variant):
    full = runner.invoke(app, ["run"])
    only = runner.invoke(app, ["run", "--summary-only", "--arcstat", "all"])
    assert full.exit_code == 0 and only.exit_code == 0, only.output
    assert "arcstat-style" in full.stdout and "arcstat-style" not in only.stdout
    assert "    time     read" not in only.stdout
    assert "throughput (queries/s)" in only.stdout and "model outputs, not measurements" in only.stdout
    assert only.stdout.lstrip().startswith("exp1-arc-sizing: Summary of the measured window")


def test_summary_only_leaves_out_the_fio_report_of_each_run():
    """A fio variant: the summary and phase tables, not fio's report of each run."""
    from conftest import ROOT

    args = ["run", str(ROOT / "scenarios" / "exp3-fio-compression.toml"), "--variant", "as-laid-out", "--quiet"]
    full, only = runner.invoke(app, args), runner.invoke(app, [*args, "--summary-only"])
    assert full.exit_code == 0 and only.exit_code == 0, only.output
    assert "fio, variant" in full.stdout and "IOPS=" in full.stdout and "ARC per run" in full.stdout
    assert "fio read IOPS" in only.stdout and "Phases" in only.stdout
    assert "fio, variant" not in only.stdout and "ARC per run" not in only.stdout and "IOPS=" not in only.stdout


@pytest.mark.parametrize(
    "args, prefix",
    [
        (["run", "/nonexistent.toml"], "run error: "),
        (["run", "{mini}", "--duration", "soon"], "run error: --duration"),
        (["validate", "/nonexistent.toml"], "validate error: "),
        (["geometry"], "geometry error: give --file-size"),
        (["reproduce", "99"], "reproduce error: "),
        (["replay", "/nonexistent.lis"], "replay error: /nonexistent.lis: no such trace file"),
    ],
)
def test_errors_are_prefixed_by_their_command(args, prefix, write_toml):
    """One rule: the command's own name ("replay error:", not "scenario error:")."""
    mini = write_toml(MINI)
    r = runner.invoke(app, [a.format(mini=mini) for a in args])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(prefix), r.stderr
    assert "scenario error" not in r.stderr and "simulation error" not in r.stderr


def test_every_command_takes_the_one_rule():
    """Every command goes through the same error handling, its prefix its own name."""
    from ztwin.cli.common import _command_name

    for cmd in app.registered_commands:
        fn = cmd.callback
        assert hasattr(fn, "__wrapped__"), f"{cmd.name} is not wrapped by _handle_errors"
        assert _command_name(fn.__wrapped__) == cmd.name


def test_oltp_read_only_reports_transactions_and_queries():
    """sysbench prints transactions and queries: 16 queries per oltp_read_only
    transaction (10 points, 4 ranges, BEGIN, COMMIT); the series has both rates."""
    sc = {
        "name": "ro",
        "machine": {"preset": "lab-guest"},
        "devices": {"disk": {"preset": "virtio-throttled"}},
        "filesystem": {"type": "zfs", "vdevs": ["disk"], "recordsize": "16K", "arc": {"zfs_arc_max": "256M"}},
        "database": {"type": "innodb", "innodb_flush_method": "O_DIRECT"},
        "dataset": {"type": "sysbench", "tables": 2, "table_size": 50_000},
        "workload": {"type": "sysbench", "test": "oltp_read_only", "threads": 2},
        "run": {"warmup": "1s", "duration": "3s", "report_interval": "1s"},
    }
    r = ztwin.run(sc)
    doc = r.summary["variants"]["base"]
    assert doc["tps"] > 0 and doc["qps"] / doc["tps"] == pytest.approx(16, rel=0.01)
    assert {"qps", "tps"} <= set(r.series.columns)


def test_where_a_transactions_time_goes(tmp_path):
    """The summary's `waits` split a transaction's latency by what it waited for: the
    classes sum to the mean latency, a disk-bound read-only run spends most in its own page
    reads, and the table shows the classes that have time (mean / slowest 5%)."""
    p, v = _exp7_run(tmp_path, "zfs-300", None, {"warmup": "2s", "duration": "3s", "report_interval": "1s"})
    mean = v["waits"]["mean_ms"]
    commit = ("commit_redo", "commit_binlog", "commit_queue")
    assert set(mean) == {"cpu", "data_read", "page_in_flight", "free_frame", "log_free", *commit, "row_lock", "other"}
    assert sum(mean.values()) == pytest.approx(v["latency_ms"]["mean"], rel=2e-3)
    assert mean["data_read"] > mean["cpu"] > 0 and all(mean[k] == 0 for k in commit)
    slow = v["waits"]["slowest"]
    assert slow["share"] >= 0.05 and sum(slow["mean_ms"].values()) >= slow["from_ms"]
    r = runner.invoke(app, ["run", str(p), "--summary-only"])
    assert r.exit_code == 0
    assert "time in own page reads (ms: mean / slowest 5%)" in r.stdout and "time in commit" not in r.stdout


def test_a_binlog_commit_is_split_into_redo_binlog_and_queue(tmp_path):
    """With the binary log (sync_binlog = 1) a commit's time goes to the redo log's write
    and flush, the binary log's write and fsync, and the group commit's queues (16
    threads: groups wait for the one ahead); the table has a row for each, and the split
    still sums to the latency."""
    import tomli_w

    sc = {
        "name": "binlog",
        "machine": {"preset": "lab-guest"},
        "devices": {"disk": {"preset": "virtio-throttled"}},
        "filesystem": {"type": "zfs", "vdevs": ["disk"], "recordsize": "16K", "arc": {"zfs_arc_max": "256M"}},
        "database": {"type": "innodb", "innodb_flush_method": "O_DIRECT", "log_bin": True},
        "dataset": {"type": "sysbench", "tables": 2, "table_size": 50_000},
        "workload": {"type": "sysbench", "test": "oltp_update_index", "threads": 16},
        "run": {"warmup": "1s", "duration": "3s", "report_interval": "1s"},
    }
    p = tmp_path / "binlog.toml"
    p.write_text(tomli_w.dumps(sc))
    r = runner.invoke(app, ["run", str(p), "--json"])
    assert r.exit_code == 0, r.stderr
    v = json.loads(r.stdout)["variants"]["base"]
    mean = v["waits"]["mean_ms"]
    assert "commit" not in mean and all(mean[k] > 0 for k in ("commit_redo", "commit_binlog", "commit_queue")), mean
    assert sum(mean.values()) == pytest.approx(v["latency_ms"]["mean"], rel=2e-3)
    r = runner.invoke(app, ["run", str(p), "--summary-only"])
    assert r.exit_code == 0, r.stderr
    for label in ("commit's redo log", "commit's binary log", "commit's group queue"):
        assert f"time in {label} (ms: mean / slowest 5%)" in r.stdout, r.stdout
