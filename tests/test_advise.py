"""ztwin advise: the searches as pure functions (fake evaluators), the scaled-down run's
keys, the CLI's errors and --json, and one small end-to-end arc question (experiment 7's
zfs-300 variant, short points) whose answer satisfies its own criterion and the step
below it does not."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin.advise import AdviseError
from ztwin.advise.common import Runner, choose_scale, scaled_point, slowed_config
from ztwin.advise.search import bracket_search
from ztwin.cli import app

from conftest import ROOT

EXP7 = str(ROOT / "scenarios" / "exp7-lab-sysbench.toml")
EXP1 = str(ROOT / "scenarios" / "exp1-arc-sizing.toml")
runner = CliRunner()


def _search(passes, start, lo=1, hi=100, **kw):
    calls = []

    def ev(i):
        calls.append(i)
        return passes(i)

    s = bracket_search(ev, lambda i, r: r[i], start, lo, hi, **kw)
    return s, calls


@pytest.mark.parametrize("threshold", [2, 3, 7, 8, 9, 31, 64, 100])
def test_bracketing_finds_a_step_functions_threshold_in_few_evaluations(threshold):
    s, calls = _search(lambda i: i >= threshold, 8)
    assert s.answer == threshold and s.below == threshold - 1 and s.shape == "monotone"
    assert len(calls) == len(set(calls))  # no point twice
    # Doubling or halving to a bracket, then bisection: about 2 log2 of the range.
    assert len(calls) <= 2 * math.ceil(math.log2(100)) + 1


def test_flat_never_and_refused_bounds_are_reported():
    s, _ = _search(lambda i: True, 8)
    assert s.answer == 1 and s.shape == "flat" and "flat" in s.notes[0]
    s, calls = _search(lambda i: False, 8)
    assert s.answer is None and s.shape == "never" and calls[-1] == 100
    # Refused values (None) bound the search: below, the answer is the lowest allowed.
    s, _ = _search(lambda i: None if i <= 2 else True, 8)
    assert s.answer == 3 and s.shape == "flat"
    s, calls = _search(lambda i: None if i >= 40 else False, 8)
    assert s.answer is None and s.shape == "never" and max(c for c in calls if c < 40) == 39


def test_non_monotone_curve_is_reported_not_hidden():
    # Passes at 4..5, fails at 6..9, passes from 10; a record at 4 is known beforehand.
    s, calls = _search(lambda i: 4 <= i <= 5 or i >= 10, 8, records={4: True})
    assert 4 not in calls and s.shape == "not-monotone"
    assert s.answer == 10 and s.below == 9  # the smallest passing value above every failing one
    assert any("not monotone" in n for n in s.notes)


def test_a_criterion_relative_to_the_best_is_judged_again_and_looks_above():
    # qps rises until 12 then is flat: "within 2% of the best" holds from 12 on, which
    # the search finds only by looking above the first passing index.
    qps = lambda i: min(i, 12) * 100.0  # noqa: E731

    def judge(i, recs):
        return recs[i] >= 0.98 * max(recs.values())

    s = bracket_search(qps, judge, 4, 1, 64, confirm_above=True)
    assert s.answer == 12 and s.below == 11


def test_scaled_point_scales_tables_and_memory_together():
    cfg = ztwin.load_scenario(EXP1, memory_check=False).variants["zfs-arc-1g"]
    keys, factor = scaled_point(cfg, 5)
    assert keys["dataset.tables"] == 66 and factor == 5
    assert keys["filesystem.arc.zfs_arc_max"] == 2**30 // 5
    assert keys["database.innodb_buffer_pool_size"] == int(2.5 * 2**30 / 5)
    assert keys["machine.ram"] == int(cfg["machine"]["ram_bytes"] / 5)
    # Rounding: 330 / 8 = 41.25 tables -> 41, and memory by the factor obtained (330/41).
    keys, factor = scaled_point(cfg, 8)
    assert keys["dataset.tables"] == 41 and factor == pytest.approx(330 / 41)
    assert keys["filesystem.arc.zfs_arc_max"] == int(2**30 / (330 / 41))
    assert scaled_point(cfg, 1) == ({}, 1.0)
    with pytest.raises(AdviseError, match="less than one of the 330"):
        scaled_point(cfg, 1000)
    with pytest.raises(AdviseError, match="whole number"):
        scaled_point(cfg, 0)
    assert choose_scale(330) == 8 and choose_scale(8) == 1 and choose_scale(100) == 3
    # The scaled ARC stays at 256 MiB or more (arc_meta_min's 16 MiB does not scale).
    assert choose_scale(330, smallest_arc=2**30) == 4 and choose_scale(330, smallest_arc=128 * 2**20) == 1


def test_a_slowed_machine_divides_every_rate_and_multiplies_every_latency():
    cfg = ztwin.load_scenario(EXP1, memory_check=False).variants["zfs-arc-1g"]
    slow = slowed_config(cfg, 4.0)
    d0, d = cfg["devices"][0], slow["devices"][0]
    assert slow["machine"]["cpu"]["speed"] == cfg["machine"]["cpu"]["speed"] / 4
    for key in ("iops_limit", "throughput_limit_bytes_per_sec", "transfer_bytes_per_sec"):
        assert d[key] == d0[key] / 4
    for key in ("read_latency_ns", "write_latency_ns"):
        assert d[key] == 4 * d0[key]
    # Memory, the dataset and the cache's own time constants are the caller's (scaled_point) or untouched.
    assert slow["filesystem"] == cfg["filesystem"] and slow["dataset"] == cfg["dataset"] and slow["run"] == cfg["run"]
    assert slowed_config(cfg, 1) == cfg and cfg["devices"][0] == d0  # the input is not changed


@pytest.mark.parametrize(
    "scenario, variant, fragment",
    [("exp1-l2arc.toml", "zfs-l2arc", "an L2ARC"),
     ("exp2-sysbench-baremetal.toml", "zfs-update-index", "is not one of the read-only sysbench tests")],
)
def test_a_slowed_machine_refuses_what_it_would_not_scale(scenario, variant, fragment):
    cfg = ztwin.load_scenario(str(ROOT / "scenarios" / scenario), memory_check=False).variants[variant]
    with pytest.raises(AdviseError, match=fragment):
        slowed_config(cfg, 2.0)


def test_a_scaled_down_run_on_a_slowed_machine_matches_full_size():
    # Experiment 1 cut to 64 tables, with an ARC of 512 MiB where the indirect blocks only
    # partly fit (arc_meta_limit 384 MiB against about 430 MiB of them as stored): half
    # the tables and memory on a machine twice as slow must give the full run's demand
    # metadata misses per query and, multiplied by 2, its qps (each block read as often
    # per second, so the ARC turns over at the same pace).
    keys = {"dataset.tables": 64, "filesystem.arc.zfs_arc_max": 512 * 2**20, "database.innodb_buffer_pool_size": 512 * 2**20,
            "run.warmup": "300s", "run.duration": "300s", "run.report_interval": "300s"}
    r = Runner(EXP1, "zfs-arc-1g", memory_check=False, extra=keys)
    full = r.outcome({})
    half, factor = scaled_point(full.config, 2)
    assert factor == 2 and half["dataset.tables"] == 32
    scaled = r.outcome(half, slowdown=factor)

    def dm_per_query(o):
        return o.doc["arc"]["demand_metadata_misses"] / o.doc["queries"]

    assert 0.1 < dm_per_query(full) < 0.9  # the regime where metadata competes for the ARC
    assert abs(dm_per_query(scaled) - dm_per_query(full)) <= 0.05
    assert scaled.doc["qps"] * factor == pytest.approx(full.doc["qps"], rel=0.03)
    # What the slowed machine does not scale it leaves to the caller: latencies are twice as long.
    assert scaled.doc["latency_ms"]["p50"] > 1.5 * full.doc["latency_ms"]["p50"]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["advise", "nope", EXP7], "unknown question 'nope'"),
        (["advise", "arc", EXP7, "--variant", "ext4-300"], "runs on ext4, not ZFS"),
        (["advise", "arc", EXP7, "--variant", "missing"], "has no variant 'missing'"),
        (["advise", "arc", EXP7, "--duration", "ten"], "--duration"),
    ],
)
def test_cli_errors_are_one_message_without_traceback(args, fragment):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output and "Traceback" not in r.output


@pytest.fixture(scope="module")
def small_advice():
    return ztwin.advise("arc", EXP7, "zfs-300", duration="10s", step=128 * 2**20)


def test_end_to_end_arc_answer_meets_its_criterion_and_the_step_below_does_not(small_advice):
    a = small_advice
    assert a.question == "arc" and a.variant == "zfs-300" and "zfs_arc_max" in a.answer
    rows = {r["zfs_arc_max_bytes"]: r for r in a.points if "refused" not in r and r["scale"] == 1}
    ans = next(b for b, r in rows.items() if r["zfs_arc_max"] == a.answer["zfs_arc_max"])
    best = max(r["qps"] for r in rows.values())
    assert rows[ans]["demand_metadata_misses_per_query"] <= 0.01 and rows[ans]["qps"] >= 0.98 * best
    below = rows.get(ans - 128 * 2**20)
    assert below is not None
    assert below["demand_metadata_misses_per_query"] > 0.01 or below["qps"] < 0.98 * best
    assert a.runs == len({(r["zfs_arc_max"], r["scale"]) for r in a.points}) + 1  # each point once, plus the probe
    assert a.wall_s > 0 and a.explanation.startswith(f"From {a.answer['zfs_arc_max']}")
    assert a.frame().height == len(a.points)


def test_cli_json_shape(tmp_path):
    r = runner.invoke(app, ["advise", "arc", EXP7, "--variant", "zfs-300", "--duration", "5s", "--warmup", "20s", "--json", "-q", "--report", str(tmp_path / "a.html")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert list(doc)[:4] == ["question", "answer", "points", "explanation"]
    assert doc["question"] == "arc" and set(doc["answer"]) == {"zfs_arc_max"}
    assert all({"zfs_arc_max", "qps", "demand_metadata_misses_per_query"} <= set(p) for p in doc["points"] if "refused" not in p)
    assert doc["runs"] >= 2 and isinstance(doc["explanation"], str)
    page = (tmp_path / "a.html").read_text()
    assert "Answer: zfs_arc_max" in page and "answer" in page
