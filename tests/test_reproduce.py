"""`ztwin reproduce`: the outcome table, the pairing, and the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin import reproduce
from ztwin.cli import app

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_every_outcome_names_a_bundled_scenario_and_variant():
    rows = reproduce.outcomes(sorted(reproduce.OUTCOMES))
    assert {o.experiment for o in rows} == set(reproduce.OUTCOMES)
    variants = {}
    for o in rows:
        if o.scenario not in variants:
            variants[o.scenario] = set(ztwin.load_scenario(SCENARIOS / o.scenario).variants)
        assert o.variant in variants[o.scenario], (o.scenario, o.variant)
        if isinstance(o.real, tuple):
            assert o.real[0] < o.real[1], o.figure
    # Figures are unique within an experiment: a row names one thing.
    keys = [(o.experiment, o.figure, o.unit) for o in rows]
    assert len(keys) == len(set(keys))


def test_pairing_gives_ratio_to_the_middle_of_a_range_and_in_range():
    fake = {"exp7-lab-sysbench.toml": {"zfs-300": {"qps": 380.0, "devices": {"disk": {"read_iops": 300.0}}}}}
    rows = [o for o in reproduce.outcomes([7]) if o.variant == "zfs-300"]
    paired = {r.outcome.figure: r for r in reproduce.pair(rows, fake)}
    qps = paired["ZFS at 300 IOPS: throughput"]
    assert qps.twin == 380.0 and qps.in_range
    assert qps.ratio == pytest.approx(380 / ((358 + 395) / 2))
    rpq = paired["ZFS at 300 IOPS: disk reads per query"]
    assert rpq.twin == pytest.approx(300 / 380) and not rpq.in_range
    d = rpq.to_dict()
    assert d["real"] == [0.73, 0.75] and d["scenario"] == "exp7-lab-sysbench.toml"


def test_a_zero_real_figure_matches_only_zero():
    o = next(o for o in reproduce.outcomes([8]) if o.figure == "recordsize 16K: demand metadata misses")
    assert reproduce.Row(o, 0.0).in_range and not reproduce.Row(o, 3.0).in_range
    assert reproduce.Row(o, 0.0).ratio is None


def test_unknown_experiment_is_a_clear_error():
    with pytest.raises(ValueError, match="no outcomes for experiment 2: choose from 1, 3, 6, 7, 8"):
        reproduce.outcomes([2])
    res = CliRunner().invoke(app, ["reproduce", "2"])
    assert res.exit_code == 2
    assert "no outcomes for experiment 2" in res.output and "Traceback" not in res.output


def test_reproduce_command_prints_json_rows_for_experiment_8():
    res = CliRunner().invoke(app, ["reproduce", "8", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == len(reproduce.outcomes([8]))
    for r in rows:
        assert r["experiment"] == 8 and r["twin"] is not None, r
    # At equal read IOPS (the 300 IOPS throttle) both record sizes are disk bound.
    iops = [r for r in rows if r["unit"] == "IOPS"]
    assert all(abs(r["ratio"] - 1) < 0.05 for r in iops), iops
