"""Variants that begin with the same phases run them once (the core's ``run::share``):
the results are those of runs of their own, byte for byte, whatever was shared; what
cannot be shared runs from the start. Experiment 2 (its two-hour read-only warm-up, then
each test) cut to 20 s phases, and experiment 9 with a read-only warm-up put first."""

from __future__ import annotations

import copy
import json
import tomllib

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin import _core
from ztwin.cli import app

from conftest import ROOT

EXP2 = ROOT / "scenarios" / "exp2-sysbench-baremetal.toml"
EXP9 = ROOT / "scenarios" / "exp9-lab-write.toml"


def short_exp2(names: list[str]) -> dict:
    """Experiment 2's variants ``names`` with 20 s phases, and zfs-slog-fast (the log
    device writing in 5 us instead of the preset's 30)."""
    raw = tomllib.loads(EXP2.read_text())
    raw["run"] = {"warmup": "0s", "duration": "20s", "report_interval": "10s"}
    for p in raw["phases"]:
        p["duration"] = "20s"
    v = raw["variants"]
    v["zfs-slog-fast"] = copy.deepcopy(v["zfs-slog-update-index"])
    v["zfs-slog-fast"]["devices"]["slog"]["write_latency"] = "5us"
    raw["variants"] = {n: v[n] for n in names}
    return raw


def warmed_exp9() -> dict:
    """Experiment 9 with a 15 s oltp_read_only warm-up first, then 10 s of each test."""
    raw = tomllib.loads(EXP9.read_text())
    raw["run"] = {"warmup": "0s", "duration": "10s", "report_interval": "5s"}
    raw["phases"] = [
        {"type": "workload", "name": "warm-up", "test": "oltp_read_only", "duration": "15s", "warmup": "0s"},
        {"type": "workload", "name": "update-index"},
        {"type": "workload", "name": "read-write", "test": "oltp_read_write", "warmup": "0s", "duration": "10s"},
    ]
    return raw


ZFS = ["zfs-update-index", "zfs-read-write", "zfs-latency-update-index", "zfs-doublewrite-update-index", "zfs-slog-update-index", "zfs-slog-fast"]


def test_shared_runs_give_each_variants_own_results_byte_for_byte():
    names = [*ZFS, "ext4-read-write", "ext4-update-index"]
    sc = ztwin.load_scenario(short_exp2(names))
    groups = ztwin.share_groups(sc, ztwin.select_variants(sc, names))
    # The test, logbias and a device's service times may differ after the warm-up; the
    # doublewrite buffer (built into the page cleaner) and a device added may not.
    assert groups == [
        ("zfs-update-index", ["zfs-read-write", "zfs-latency-update-index"]),
        ("zfs-doublewrite-update-index", []),
        ("zfs-slog-update-index", ["zfs-slog-fast"]),
        ("ext4-read-write", ["ext4-update-index"]),
    ]
    said = []
    shared = ztwin.run(sc, names, on_shared=lambda leader, followers, jobs: said.append((leader, followers, jobs)))
    cold = ztwin.run(sc, names, share=False)
    assert [s[:2] for s in said] == [g for g in groups if g[1]] and all(s[2] >= 1 for s in said)
    a, b = json.loads(shared.to_json(full=True)), json.loads(cold.to_json(full=True))
    assert list(a["variants"]) == names
    for n in names:
        assert a["variants"][n] == b["variants"][n], f"{n}: the shared run differs from its own"
    # Each follower was forked (nothing it changes was used in the warm-up), and its
    # result differs from its leader's (the comparison is not vacuous).
    for leader, followers in groups:
        if followers:
            _, outcomes = _core.run_shared(json.dumps(sc.variants[leader]), [json.dumps(sc.variants[f]) for f in followers], 2)
            assert [k for k, _ in outcomes] == ["forked"] * len(followers), outcomes
    bench = {n: a["variants"][n]["phases"][1] for n in names}
    assert bench["zfs-latency-update-index"]["tps"] != bench["zfs-update-index"]["tps"]
    slog = [bench[n]["devices"]["slog"]["utilization"] for n in ("zfs-slog-update-index", "zfs-slog-fast")]
    assert slog[1] < slog[0], "the faster log device is busy for less time"


def test_what_the_warm_up_used_makes_its_follower_run_from_the_start():
    """Experiment 9's read-only warm-up still writes a few bytes of redo (one log write
    and its fsync) and reads the disk: a follower with another logbias, log-device latency
    or disk limit finds them used at the fork and runs from the start (its result is
    still its own)."""
    raw = warmed_exp9()
    raw["variants"]["zfs-slog-fast"] = copy.deepcopy(raw["variants"]["zfs-slog"])
    raw["variants"]["zfs-slog-fast"]["devices"]["slog"]["write_latency"] = "20us"
    sc = ztwin.load_scenario(raw)
    c = lambda n: json.dumps(sc.variants[n])  # noqa: E731
    assert _core.share_plan(c("zfs-latency"), c("zfs-latency-iops3000")) == (2, None)  # all its phases but the last
    doc, outcomes = _core.run_shared(c("zfs-latency"), [c("zfs-throughput"), c("zfs-latency-iops3000")], 2)
    assert outcomes == [("cold", "the intent log logged writes before the fork (logbias differs)"), ("cold", "device disk served I/O before the fork")]
    assert doc == _core.run_variant(c("zfs-latency"))
    _, outcomes = _core.run_shared(c("zfs-slog"), [c("zfs-slog-fast")], 2)
    assert outcomes == [("cold", "device slog served I/O before the fork")]
    # ztwin.run says so and runs them from their start: the results are their own.
    cold = []
    names = ["zfs-latency", "zfs-throughput"]
    shared = ztwin.run(sc, names, on_cold=lambda n, why: cold.append((n, why)))
    assert cold == [("zfs-throughput", "the intent log logged writes before the fork (logbias differs)")]
    assert json.loads(shared.to_json(full=True)) == json.loads(ztwin.run(sc, names, share=False).to_json(full=True))


def test_share_plan_says_why_not():
    sc = ztwin.load_scenario(warmed_exp9())
    c = lambda n: json.dumps(sc.variants[n])  # noqa: E731
    assert _core.share_plan(c("zfs-latency"), c("zfs-nodoublewrite")) == (0, "database.innodb_doublewrite differs")
    assert _core.share_plan(c("zfs-latency"), c("zfs-slog"))[1].startswith("devices")
    n, why = _core.share_plan(c("zfs-latency"), c("ext4"))
    assert n == 0 and why.startswith("filesystem")
    n, why = _core.share_plan(c("zfs-latency"), c("zfs-rs32k"))
    assert n == 0 and why == "filesystem.recordsize differs"


def test_run_cli_says_what_it_shares_and_no_share_runs_each(tmp_path):
    text = EXP9.read_text()
    warm = '[[phases]]\ntype = "workload"\nname = "warm-up"\ntest = "oltp_read_only"\nduration = "15s"\nwarmup = "0s"\n\n'
    first = text.index("[[phases]]")
    p = tmp_path / "exp9-warmed.toml"
    p.write_text(text[:first] + warm + text[first:])
    args = ["run", str(p), "--variant", "zfs-latency", "--variant", "zfs-throughput", "--json", "--duration", "10s", "--warmup", "0s"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "zfs-throughput takes the first phases from zfs-latency's run" in r.stderr
    doc = json.loads(r.stdout)
    r2 = CliRunner().invoke(app, [*args, "--no-share"])
    assert r2.exit_code == 0, r2.output
    assert "takes the first phases" not in r2.stderr and json.loads(r2.stdout) == doc


def test_advise_slog_curve_shares_the_warm_up():
    notes = []
    raw = short_exp2(["zfs-latency-update-index"])
    a = ztwin.advise("slog", raw, phase="benchmark", latencies=["10us", "1ms", "20ms"], on_note=notes.append)
    assert [r["log_device"] for r in a.points] == ["none", "nvme-local, 10us writes", "nvme-local, 1ms writes", "nvme-local, 20ms writes"]
    assert sum("forked from with a log device (nvme-local, 10us writes)" in n for n in notes) == 2, notes
    rows = a.points[1:]
    assert [r["slog_write_latency_us"] for r in rows] == [10, 1000, 20000]
    # The ZIL's writes left the pool for the log device at every latency.
    assert all(r["zil_itx_metaslab_slog_bytes"] > 0 and r["zil_itx_metaslab_normal_bytes"] == 0 for r in rows)
    paying = [r for r in rows if r["speedup"] >= 1.1]
    assert a.answer["zil_bound"] == bool(paying)
    if paying:
        slowest = max(paying, key=lambda r: r["slog_write_latency_us"])
        assert a.answer["max_write_latency"] == ["10us", "1ms", "20ms"][rows.index(slowest)]
    # Its page: the curve against the latency, and the point without a log device as a
    # dotted line across it.
    from ztwin.advise.report import advice_figures

    fig = advice_figures(a)[0]
    ref = [t for t in fig.traces if t.name == "log_device = none"]
    assert len(ref) == 1 and ref[0].dash == "dot" and ref[0].y == [a.points[0][fig_metric(fig)]] * 2 and ref[0].x == [10, 20000]
    # A forked point is the run of its own: the 1 ms point again, alone.
    alone = ztwin.advise("slog", raw, phase="benchmark", latency="1ms")
    assert alone.points[1]["tps"] == rows[1]["tps"] and alone.points[1]["latency_p99_ms"] == rows[1]["latency_p99_ms"]


def fig_metric(fig) -> str:
    """The points' column a throughput figure draws."""
    return "qps" if fig.ylabel == "queries/s" else "tps"


def test_latency_and_latencies_together_are_refused():
    from ztwin.advise import AdviseError

    with pytest.raises(AdviseError, match="not both"):
        ztwin.advise("slog", warmed_exp9(), "zfs-latency", phase="update-index", latency="50us", latencies=["20us"])


@pytest.mark.parametrize("use_ray", [False, None])
def test_a_sweep_of_log_device_latencies_shares_the_warm_up(use_ray):
    """A sweep's points that differ only in an idle log device: one task runs the warm-up
    once (in-process, or one Ray task), and each point's rows are those of its own run."""
    from ztwin.sweeps import run_sweep

    if use_ray is None:
        pytest.importorskip("ray")
    raw = short_exp2(["zfs-slog-update-index"])
    notes = []
    sets = {"devices.slog.write_latency": ["10us", "1ms"]}
    a = run_sweep(raw, sets, use_ray=use_ray, on_note=notes.append)
    b = run_sweep(raw, sets, use_ray=False, share=False)
    assert any("the first phases from" in n for n in notes), notes
    assert a.runs == b.runs
    assert a.runs[0]["zfs-slog-update-index"] != a.runs[1]["zfs-slog-update-index"]


def test_no_fork_runs_the_follower_from_its_start(monkeypatch):
    """A fork that cannot be made (here: no directory for its result file) is no error:
    the follower runs from its start, said, with its own result."""
    names = ["zfs-read-write", "zfs-update-index"]
    sc = ztwin.load_scenario(short_exp2(names))
    expected = json.loads(ztwin.run(sc, names, share=False).to_json(full=True))
    monkeypatch.setenv("TMPDIR", "/nonexistent/ztwin-test")
    cold = []
    got = ztwin.run(sc, names, on_cold=lambda n, why: cold.append((n, why)))
    assert [n for n, _ in cold] == ["zfs-update-index"] and cold[0][1].startswith("no fork (cannot create a file in /nonexistent/ztwin-test")
    assert json.loads(got.to_json(full=True)) == expected
    with pytest.raises(ValueError, match="jobs=0"):
        ztwin.run(sc, names, jobs=0)


def test_validate_says_which_variants_may_share():
    r = CliRunner().invoke(app, ["validate", str(EXP2)])
    assert r.exit_code == 0, r.output
    assert "shared: zfs-update-index, zfs-latency-update-index may take the first phases from zfs-read-write's run" in r.stderr
    assert "shared: ext4-update-index may take the first phases from ext4-read-write's run" in r.stderr


def test_no_memory_for_a_snapshot_shares_nothing(monkeypatch):
    """share_jobs counts the fork's snapshot beside the running processes: where the
    memory holds one variant but not two, nothing is shared and each runs from its start."""
    from ztwin import resources

    names = ["zfs-read-write", "zfs-update-index"]
    sc = ztwin.load_scenario(short_exp2(names))
    need = max(sum(sc.memory[n].values()) for n in names)
    monkeypatch.setattr(resources, "available_memory", lambda: int(1.5 * need))
    assert ztwin.share_jobs(sc, names) == 0
    monkeypatch.setattr(resources, "available_memory", lambda: 3 * need)
    assert ztwin.share_jobs(sc, names) == min(2, len(__import__("os").sched_getaffinity(0)))
    monkeypatch.setattr(resources, "available_memory", lambda: int(1.5 * need))
    said = []
    r = ztwin.run(sc, names, memory_check=False, on_shared=lambda *a: said.append(a))
    assert said == [] and sorted(json.loads(r.to_json())["variants"]) == sorted(names)
