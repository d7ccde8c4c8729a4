"""`ztwin bench`'s L2ARC case, on a small copy of experiment 1's L2ARC variant (the full
case runs the 850 GB warm-up and takes about three minutes: `ztwin bench`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ztwin import bench

SCENARIO = str(Path(__file__).resolve().parents[1] / "scenarios" / "exp1-l2arc.toml")


def test_l2arc_case_is_the_issue_target():
    assert bench.L2ARC_CASES == [("exp1-l2arc.toml", "zfs-l2arc", "1h")]
    assert bench.scenario_path("exp1-l2arc.toml").samefile(SCENARIO)


def test_l2arc_case_measures_a_small_copy():
    # Four tables (~10 GB) on a 5 GB cache device: the cat writes ~175k blocks of 16K to it
    # (the feed takes part of what the cat reads at the volume's throughput cap). The index
    # is the dense array (4 bytes for each of the dataset's ~615k blocks), as in the full
    # case.
    r = bench.run_l2arc_case(SCENARIO, "zfs-l2arc", "20s", {"dataset": {"tables": 4}, "devices": {"nvme": {"size": "5GB"}}})
    # Every block on the device is a 16K record or a 16K indirect block.
    assert r.l2_blocks == r.l2_size // 16384 and r.l2_blocks > 100_000
    assert r.queries > 0 and r.simulated_s > 20
    assert r.wall_s_per_simulated_hour == pytest.approx(r.wall_s * 3600 / r.simulated_s)
    # The ring entry (16 B) and its share of the index: the issue's limit is 48 bytes per block.
    assert 16 < r.bytes_per_l2_block <= 48
    assert math.isfinite(r.rss_bytes_per_l2_block)


def test_scenario_path_names_the_missing_file():
    with pytest.raises(FileNotFoundError, match="scenarios/nope.toml"):
        bench.scenario_path("nope.toml")


def test_bench_finds_experiment_3_from_a_checkout(monkeypatch):
    # The package is installed into site-packages; the scenario is found from the
    # working directory (the checkout), as `ztwin bench` is run there.
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    names = [(Path(s).name, v) for s, v, _, _ in bench.all_cases()]
    assert ("exp3-fio-compression.toml", "as-laid-out") in names and ("exp3-fio-compression.toml", "overwritten") in names
    # The issues' write targets: experiment 2's update-index and experiment 4's L2ARC run.
    assert ("exp2-sysbench-baremetal.toml", "zfs-update-index") in names and ("exp4-tpcc-azure.toml", "zfs-l2arc") in names


def test_the_memory_probe_times_reads_over_each_size():
    probe = bench.memory_probe([("64 KiB", 64 << 10), ("1 MiB", 1 << 20)], reads=20_000)
    assert set(probe) == {"64 KiB", "1 MiB"}
    assert all(0 < ns < 1e6 for ns in probe.values()), probe


def test_the_memory_probe_refuses_sizes_it_cannot_time():
    from ztwin import _core

    with pytest.raises(ValueError, match="128 B to 64 GiB"):
        _core.memory_read_ns(0, 10)
    with pytest.raises(ValueError, match="reads at least 1"):
        _core.memory_read_ns(1 << 20, 0)


def test_bench_outside_a_checkout_is_one_clear_error_before_any_case(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from ztwin.cli import app

    if (Path(bench.__file__).resolve().parents[2] / "scenarios").exists():
        pytest.skip("the package is installed in place from a checkout: bench finds its scenarios")
    monkeypatch.chdir(tmp_path)

    def no_case(*_a, **_k):
        raise AssertionError("a case ran")

    monkeypatch.setattr(bench, "memory_probe", no_case)
    r = CliRunner().invoke(app, ["bench"])
    assert r.exit_code == 2, r.output
    assert "scenarios/exp1-l2arc.toml not found" in r.output and "from a ztwin checkout" in r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
