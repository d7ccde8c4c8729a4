"""Uncertainty (issue 18 item 5): the presets' ranges (reading and checking them), the
seeded Latin-hypercube draws, the rank-correlation sensitivity, which parameters a variant
draws, and short ensembles of ``ztwin advise --uncertainty`` and ``ztwin run
--uncertainty`` on experiment 7 (a fraction of a second a run)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin.cli import app
from ztwin.scenario.schema import DeviceSpec, MachineSpec
from ztwin.uncertainty import (
    MAX_MEMBERS,
    Parameter,
    Range,
    RangeError,
    band,
    check_members,
    draw,
    member_overrides,
    parse_ranges,
    preset_ranges,
    provisional_parameters,
    sensitivity,
    spearman,
)

from conftest import ROOT

EXP7 = str(ROOT / "scenarios" / "exp7-lab-sysbench.toml")
runner = CliRunner()


# --------------------------------------------------------------------------------------
# Ranges


def test_ranges_parse_units_and_check_the_preset_model_and_value():
    r = parse_ranges({"read_latency": ["400us", "1ms"], "latency_sigma": [0.1, 0.5], "parallelism": [16, 64], "transfer_rate": ["500MB/s", "2GB/s"]},
                     "devices.toml [\"x\"].ranges", DeviceSpec, {"read_latency": "600us", "latency_sigma": 0.3})
    assert (r["read_latency"].lo, r["read_latency"].hi, r["read_latency"].kind, r["read_latency"].nominal) == (400_000, 1_000_000, "duration", 600_000)
    assert r["read_latency"].encode(612_345.4) == "612345ns"
    assert r["latency_sigma"].kind == "float" and r["parallelism"].kind == "int" and r["parallelism"].encode(20.6) == 21
    assert r["transfer_rate"].kind == "rate" and r["transfer_rate"].hi == 2e9
    # Nested keys (a machine's CPU costs) are dotted; an int and a float bound make a float range.
    m = parse_ranges({"cpu": {"row_ns": [500, 2000], "speed": [1, 1.5]}}, "m", MachineSpec, {"cpu": {"row_ns": 1000}})
    assert set(m) == {"cpu.row_ns", "cpu.speed"} and m["cpu.speed"].kind == "float"


@pytest.mark.parametrize(
    "table, preset, fragment",
    [
        ({"read_latency": ["1ms", "400us"]}, None, "W.read_latency: lo '1ms' is above hi '400us'"),
        ({"read_latency": "1ms"}, None, "W.read_latency: a range is [lo, hi]"),
        ({"read_latency": ["1ms"]}, None, "W.read_latency: a range is [lo, hi]"),
        ({"read_latency": ["400us", 3]}, None, "W.read_latency: lo '400us' and hi 3 are not of one type"),
        ({"read_latency": ["400us", "1ms"]}, {"read_latency": "2ms"}, "W.read_latency: the preset's own value '2ms' is outside"),
        ({"latency_sigma": [True, 0.5]}, None, "W.latency_sigma: a boolean has no range"),
        ({"read_latncy": ["400us", "1ms"]}, None, "W.read_latncy: not a key of the preset"),
        ({"latency_sigma": [-1, 0.5]}, None, "W.latency_sigma:"),
        ({"read_latency": ["fast", "1ms"]}, None, "W.read_latency: 'fast' is not a duration, size or rate"),
        ([1, 2], None, "W: a table of key = [lo, hi]"),
    ],
)
def test_bad_ranges_are_errors_naming_the_key(table, preset, fragment):
    with pytest.raises(RangeError) as e:
        parse_ranges(table, "W", DeviceSpec, preset)
    assert fragment in str(e.value)


def test_shipped_presets_have_checked_ranges_taken_off_the_preset_tables():
    from ztwin.presets import device_presets, machine_presets, raw_device_presets, raw_machine_presets

    ranges = preset_ranges()
    assert set(ranges[("device", "aws-gp2")]) >= {"read_latency", "write_latency", "latency_sigma", "parallelism"}
    assert "cpu.row_ns" in ranges[("machine", "aws-i3.large")]
    # Calibrated values have no range.
    assert "cpu.statement_ns" not in ranges[("machine", "aws-i3.large")] and "cpu.zio_ns" not in ranges[("machine", "lab-guest")]
    assert all("ranges" not in t for t in [*raw_device_presets().values(), *raw_machine_presets().values()])
    assert device_presets() and machine_presets()
    for rs in ranges.values():
        for r in rs.values():
            assert r.lo <= r.hi and (r.nominal is None or r.lo <= r.nominal <= r.hi)


# --------------------------------------------------------------------------------------
# Draws, sensitivity, bands


def _p(key, lo, hi, kind="float"):
    return Parameter(key, "device x", Range(key.split(".")[-1], lo, hi, (lo, hi), kind))


def test_draws_are_a_seeded_latin_hypercube_within_the_ranges():
    ps = [_p("a", 0.0, 1.0), _p("b.c", 10, 20, "int")]
    d1, d2 = draw(ps, 8, 7), draw(ps, 8, 7)
    assert d1 == d2 and d1 != draw(ps, 8, 8)
    a = sorted(x["a"] for x in d1)
    assert all(i / 8 <= v < (i + 1) / 8 for i, v in enumerate(a))  # one member per slice
    assert all(10 <= x["b.c"] <= 20 and x["b.c"] == int(x["b.c"]) for x in d1)
    over = member_overrides(ps, d1[0])
    assert set(over) == {"a", "b.c"} and isinstance(over["b.c"], int)


def test_sensitivity_ranks_the_parameter_that_moves_the_metric_first():
    ps = [_p("noise", 0.0, 1.0), _p("latency", 0.0, 1.0), _p("weak", 0.0, 1.0)]
    d = draw(ps, 16, 3)
    metric = [1000 - 800 * x["latency"] + 50 * x["weak"] for x in d]
    ranked = sensitivity(d, metric)
    assert ranked[0]["parameter"] == "latency" and ranked[0]["rho"] < -0.9
    assert next(r for r in ranked if r["parameter"] == "weak")["rho"] > 0
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1) and spearman([1, 2, 2, 3], [1, 2, 2, 3]) == pytest.approx(1)
    assert spearman([1, 2], [1, 2]) is None and spearman([1, 2, 3], [5, 5, 5]) is None
    # A constant metric: no parameter moves it (rho None), not a ranking of noise.
    assert all(r["rho"] is None for r in sensitivity(d, [1.0] * 16))
    assert band([3, None, 1, 2]) == {"min": 1, "median": 2, "max": 3} and band([None]) is None


def test_members_are_bounded():
    assert check_members(2) == 2 and check_members(MAX_MEMBERS) == MAX_MEMBERS
    for bad in (1, 0, MAX_MEMBERS + 1, 2.5, True, "4"):
        with pytest.raises(RangeError, match="--uncertainty"):
            check_members(bad)


def test_a_variant_draws_its_presets_parameters_but_not_what_the_scenario_sets():
    merged = {
        "machine": {"preset": "lab-guest", "cpu": {"row_ns": 700}},
        "devices": {"disk": {"preset": "virtio-throttled", "read_latency": "1ms"}, "spare": {"preset": "aws-gp2", "size": "100GiB"}, "own": {"read_latency": "1ms"}},
    }
    params, notes = provisional_parameters(merged, ["disk", "own"])
    keys = [p.key for p in params]
    assert "machine.cpu.page_access_ns" in keys and "machine.cpu.row_ns" not in keys
    assert "devices.disk.write_latency" in keys and "devices.disk.read_latency" not in keys
    assert not any(k.startswith("devices.spare") or k.startswith("devices.own") for k in keys)  # unused, and no preset
    assert any("machine.cpu.row_ns is set by the scenario" in n for n in notes)


# --------------------------------------------------------------------------------------
# Ensembles end to end (experiment 7, shortened)


def test_advise_uncertainty_reports_bands_and_the_parameter_that_moves_the_answer():
    a = ztwin.advise("l2arc", EXP7, "zfs-300-l2arc", duration="5s", warmup="5s", fractions=[0, 1], feed_factors=[2], uncertainty=4)
    u = a.uncertainty
    assert u["members"] == 4 and u["metric"] == "qps" and u["failed"] == 0
    assert len(u["member_rows"]) == 4 and a.runs == 3 * 5  # the nominal question and 4 members, 3 runs each
    assert u["band"]["min"] <= u["nominal"]["qps"] * 1.1 and u["band"]["min"] <= u["band"]["median"] <= u["band"]["max"]
    assert set(u["answers"]) == {"l2arc_size", "l2arc_write_max"} and u["answers"]["l2arc_size"]["nominal"] == a.answer["l2arc_size"]
    keys = {p["key"] for p in u["parameters"]}
    assert "machine.cpu.page_access_ns" in keys and "devices.l2.read_latency" in keys
    # Every drawn parameter ranked, by magnitude (with 4 members the ranking is noise, and said).
    rhos = [abs(r["rho"]) for r in u["sensitivity"] if r["rho"] is not None]
    assert {r["parameter"] for r in u["sensitivity"]} == keys and rhos == sorted(rhos, reverse=True)
    assert any("indicative" in n for n in u["notes"])
    again = ztwin.advise("l2arc", EXP7, "zfs-300-l2arc", duration="5s", warmup="5s", fractions=[0, 1], feed_factors=[2], uncertainty=4)
    assert again.uncertainty["member_rows"] == u["member_rows"]  # seeded: the same ensemble
    assert "uncertainty" in json.loads(a.to_json())


def test_run_uncertainty_json_and_table():
    r = runner.invoke(app, ["run", EXP7, "--variant", "zfs-300", "--duration", "5s", "--warmup", "5s", "--uncertainty", "3", "--json", "-q"])
    assert r.exit_code == 0, r.output
    u = json.loads(r.stdout)["uncertainty"]
    e = u["variants"]["zfs-300"]
    assert u["members"] == 3 and len(e["member_rows"]) == 3 and e["failed"] == 0
    assert e["bands"]["qps"]["min"] > 0 and e["bands"]["latency_p95_ms"]["max"] >= e["bands"]["latency_p95_ms"]["min"]
    r = runner.invoke(app, ["run", EXP7, "--variant", "zfs-300", "--duration", "5s", "--warmup", "5s", "--uncertainty", "2", "--summary-only", "-q"])
    assert r.exit_code == 0, r.output
    assert "Uncertainty: 2 members per variant" in r.stdout


@pytest.mark.parametrize("cmd", [["run", EXP7], ["advise", "slog", EXP7]])
@pytest.mark.parametrize("n", ["1", "33"])
def test_uncertainty_out_of_range_is_one_message_before_any_run(cmd, n):
    r = runner.invoke(app, cmd + ["--uncertainty", n])
    assert r.exit_code == 2, r.output
    assert f"--uncertainty {n}: a whole number of members from 2 to 32" in r.output and "Traceback" not in r.output


def test_a_bad_range_in_a_preset_file_is_one_message_naming_the_key(monkeypatch):
    from ztwin import presets

    real = presets._load

    def load(name):
        tables, ranges = real(name)
        if name == "devices.toml":
            ranges = dict(ranges) | {"virtio-throttled": dict(ranges["virtio-throttled"]) | {"read_latency": ["1ms", "100us"]}}
        return tables, ranges

    monkeypatch.setattr(presets, "_load", load)
    presets.preset_ranges.cache_clear()
    try:
        r = runner.invoke(app, ["run", EXP7, "--variant", "zfs-300", "--duration", "5s", "--warmup", "5s", "--uncertainty", "2", "-q"])
    finally:
        presets.preset_ranges.cache_clear()
    assert r.exit_code == 2, r.output
    assert 'devices.toml ["virtio-throttled"].ranges.read_latency: lo \'1ms\' is above hi \'100us\'' in r.output
    assert "Traceback" not in r.output


def test_every_value_the_preset_files_call_provisional_has_a_range():
    """A line `key = value  # ... provisional ...` in a preset (or its [NAME.cpu]) needs the
    key in the preset's ranges, so a new preset's guesses are not left out of ensembles."""
    import re
    import tomllib
    from importlib import resources

    missing = []
    for fname in ("devices.toml", "machines.toml"):
        text = resources.files("ztwin.presets").joinpath(fname).read_text()
        data = tomllib.loads(text)
        table: list[str] = []
        for line in text.splitlines():
            if m := re.match(r"^\[(.+)\]\s*$", line):
                table = [p.strip('"') for p in re.findall(r'"[^"]+"|[^.]+', m.group(1))]
            elif (m := re.match(r"^(\w+)\s*=.*#.*provisional", line, re.I)) and table and "ranges" not in table:
                cur = data[table[0]].get("ranges", {})
                for part in table[1:] + [m.group(1)]:
                    cur = cur.get(part, {}) if isinstance(cur, dict) else {}
                if not cur:
                    missing.append(f"{fname} [{table[0]}] {'.'.join(table[1:] + [m.group(1)])}")
    assert not missing, missing
