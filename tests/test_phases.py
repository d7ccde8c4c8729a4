"""Phases: a run as a sequence of phases on the same state (cat warm-up, workload, restart)."""

from __future__ import annotations

import json

import pytest

import ztwin
from ztwin import ScenarioError

BASE = {
    "name": "phases",
    "machine": {"preset": "lab-guest"},
    "devices": {"disk": {"preset": "virtio-throttled", "iops_limit": 3000, "throughput_limit": "250MB/s"}},
    "filesystem": {"type": "zfs", "vdevs": ["disk"], "recordsize": "16K", "compression": "lz4", "arc": {"zfs_arc_max": "256M"}},
    "database": {"type": "innodb", "innodb_flush_method": "O_DIRECT"},
    "dataset": {"type": "sysbench", "tables": 2, "table_size": 100_000},
    "workload": {"type": "sysbench", "test": "oltp_point_select", "threads": 4},
    "run": {"warmup": "2s", "duration": "5s", "report_interval": "1s"},
}


def with_phases(*phases):
    return dict(BASE, phases=list(phases))


def test_no_phases_resolve_to_an_empty_list_and_one_implicit_workload_phase():
    cfg = ztwin.resolve(BASE)["base"]
    assert cfg["phases"] == []
    doc = ztwin.run(BASE).summary["variants"]["base"]
    assert [(p["name"], p["type"]) for p in doc["phases"]] == [("benchmark", "workload")]


def test_workload_phases_default_to_run_and_cat_to_128k_reads():
    cfg = ztwin.resolve(with_phases({"type": "cat"}, {"type": "workload", "duration": "3s"}))["base"]
    assert cfg["phases"] == [
        {"type": "cat", "name": "cat", "read_size": 128 * 1024, "passes": 1},
        {"type": "workload", "name": "benchmark", "warmup_ns": 2 * 10**9, "duration_ns": 3 * 10**9, "test": None},
    ]


@pytest.mark.parametrize(
    "phases, where, message",
    [
        ([{"type": "cta"}], "phases[0].type", "unknown type 'cta'; allowed: 'workload', 'cat', 'restart'"),
        ([{"type": "cat"}], "phases", "needs at least one workload phase"),
        ([{"type": "cat", "read_size": "256"}, {"type": "workload"}], "phases[0].read_size", "must be from 512 B to 16 MiB"),
        ([{"type": "cat", "passes": 0}, {"type": "workload"}], "phases[0].passes", "greater than or equal to 1"),
        ([{"type": "workload", "duration": "0s"}], "phases[0].duration", "must be positive"),
        ([{"type": "restart", "when": "now"}, {"type": "workload"}], "phases[0].when", "unknown key 'when'; allowed keys: type, name"),
        ([{"type": "tune", "l2arc": {"l2arc_noprefetch": 0}}, {"type": "workload"}], "phases[0].type", "needs a ZFS pool with a cache device"),
        ([{"type": "tune", "l2arc": {"l2arc_noprefetch": 2}}, {"type": "workload"}], "phases[0].l2arc.l2arc_noprefetch", ""),
        ([{"type": "tune", "arc": {"zfs_arc_max": "1G"}}, {"type": "workload"}], "phases[0].arc", "unknown key 'arc'"),
    ],
)
def test_phase_errors_name_the_phase_and_what_is_allowed(phases, where, message):
    with pytest.raises(ScenarioError) as e:
        ztwin.resolve(with_phases(*phases))
    text = str(e.value)
    assert where in text and message in text, text


def test_cat_then_workload_then_restart_reports_each_phase():
    sc = with_phases({"type": "cat"}, {"type": "workload", "name": "warm"}, {"type": "restart"}, {"type": "workload", "name": "cold"})
    doc = json.loads(ztwin.run(sc).to_json())["variants"]["base"]
    names = [(p["name"], p["type"]) for p in doc["phases"]]
    assert names == [("cat", "cat"), ("warm", "workload"), ("restart", "restart"), ("cold", "workload")]
    cat, warm, _, cold = doc["phases"]
    # The cat read both files whole; the 256 MiB ARC then holds the ~130 MB of data.
    assert cat["bytes_read"] == 2 * ztwin._core.sysbench_table_bytes(100_000, 16384)
    assert warm["devices"]["disk"]["read_iops"] == 0
    assert cold["arc"]["demand_data_misses"] > 0
    assert doc["qps"] == cold["qps"]
    # Phases follow each other on one clock.
    assert cat["end_s"] <= warm["start_s"] <= warm["end_s"] <= cold["start_s"]


L2 = dict(
    BASE,
    devices={**BASE["devices"], "l2": {"preset": "virtio-throttled", "iops_limit": "none", "throughput_limit": "none", "size": "2GiB"}},
    filesystem={**BASE["filesystem"], "cache": ["l2"]},
)


def test_a_tune_phase_sets_l2arc_parameters_at_run_time():
    # As `echo 0 > /sys/module/zfs/parameters/l2arc_noprefetch` before the cat and 1 after.
    sc = dict(L2, phases=[
        {"type": "tune", "name": "noprefetch off", "l2arc": {"l2arc_noprefetch": 0}},
        {"type": "cat"},
        {"type": "tune", "l2arc": {"l2arc_noprefetch": 1}},
        {"type": "workload"},
    ])
    assert ztwin.resolve(sc)["base"]["phases"][0]["l2arc"]["l2arc_noprefetch"] is False
    doc = json.loads(ztwin.run(sc).to_json())["variants"]["base"]
    off, cat, on, _ = doc["phases"]
    assert (off["type"], off["l2arc"], on["l2arc"]) == ("tune", {"l2arc_noprefetch": False}, {"l2arc_noprefetch": True})
    assert off["start_s"] == off["end_s"] == 0 and on["start_s"] == cat["end_s"]
    # The cat is all prefetch reads: with the default l2arc_noprefetch = 1 fewer of its
    # blocks stay on the cache device; set to 0 at run time, the cat writes exactly what
    # the same value set in the scenario writes. (What the cat's window saw written is no
    # measure of it: the feed issues its writes as its CPU work is done, so a pass's
    # writes may fall after the window; the L2ARC's size after the run is.)
    def phases_of(scenario):
        return json.loads(ztwin.run(scenario).to_json())["variants"]["base"]["phases"]

    written = lambda c: c["devices"]["l2"]["write_mbps"] * (c["end_s"] - c["start_s"])
    plain = phases_of(dict(L2, phases=[{"type": "cat"}, {"type": "workload"}]))
    fs0 = {**L2["filesystem"], "l2arc": {"l2arc_noprefetch": 0}}
    configured = phases_of(dict(L2, filesystem=fs0, phases=[{"type": "cat"}, {"type": "workload"}]))
    assert written(cat) == written(configured[0])
    assert configured[1]["l2arc"]["l2_size"] > plain[1]["l2arc"]["l2_size"]


def test_a_tune_phase_must_set_something():
    with pytest.raises(ScenarioError, match=r"(?s)phases\[0\]\.l2arc.*sets no parameter"):
        ztwin.resolve(dict(L2, phases=[{"type": "tune"}, {"type": "workload"}]))


def test_a_vm_move_leaves_a_blank_ephemeral_l2arc_unavailable_unless_the_boot_script_recreates_it():
    """An ephemeral cache device after a VM move: UNAVAIL and no L2ARC in the benchmark
    after it, unless the restart recreates it (zpool remove, zpool add)."""
    sc = dict(BASE)
    sc["devices"] = dict(BASE["devices"], l2={"preset": "virtio-throttled", "size": "1GiB", "ephemeral": True})
    sc["filesystem"] = dict(BASE["filesystem"], cache=["l2"])
    states = {}
    for recreate in (False, True):
        doc = ztwin.run(with_phases({"type": "cat"}, {"type": "restart", "vm_moved": True, "recreate_cache": recreate},
                                    {"type": "workload", "duration": "2s"}) | {k: sc[k] for k in ("devices", "filesystem")})
        phases = doc.summary["variants"]["base"]["phases"]
        states[recreate] = (phases[1]["cache_device"]["state"], "l2arc" in phases[2])
    assert states == {False: ("unavail", False), True: ("recreated", True)}
    cfg = ztwin.resolve(with_phases({"type": "restart", "recreate_cache": True}, {"type": "workload"}))["base"]
    assert cfg["phases"][0] == {"type": "restart", "name": "restart", "vm_moved": False, "recreate_cache": True}


L2X2 = dict(
    BASE,
    devices={
        **BASE["devices"],
        "l2": {"preset": "virtio-throttled", "iops_limit": "none", "throughput_limit": "none", "size": "1GiB"},
        "l2b": {"preset": "virtio-throttled", "iops_limit": "none", "throughput_limit": "none", "size": "1GiB"},
    },
    filesystem={**BASE["filesystem"], "cache": ["l2", "l2b"]},
)


@pytest.mark.parametrize("per_device", [None, True])
def test_a_pool_with_two_cache_devices_runs_and_feeds_both(per_device):
    """Two cache devices: the release's one feed thread writes to them in turn (or,
    with the what-if per_device_feed, each has its own thread); both are written during
    the cat and the L2ARC holds blocks after it."""
    fs = dict(L2X2["filesystem"])
    if per_device is not None:
        fs["l2arc"] = {"per_device_feed": per_device}
    sc = dict(L2X2, filesystem=fs, phases=[{"type": "cat"}, {"type": "workload"}])
    cfg = ztwin.resolve(sc)["base"]
    assert cfg["filesystem"]["cache"] == ["l2", "l2b"]
    assert cfg["filesystem"]["l2arc"]["per_device_feed"] == per_device
    cat, bench = ztwin.run(sc).summary["variants"]["base"]["phases"]
    for d in ("l2", "l2b"):
        assert cat["devices"][d]["write_mbps"] > 0, (d, cat["devices"])
    assert bench["l2arc"]["l2_size"] > 0


def test_cache_devices_are_bounded_and_per_device_feed_is_not_tunable_at_run_time():
    nine = {f"c{i}": {"preset": "virtio-throttled", "size": "1GiB"} for i in range(9)}
    sc = dict(BASE, devices={**BASE["devices"], **nine}, filesystem={**BASE["filesystem"], "cache": list(nine)})
    with pytest.raises(ScenarioError, match=r"(?s)filesystem\.cache"):
        ztwin.resolve(sc)
    with pytest.raises(ScenarioError, match=r"(?s)phases\[0\]\.l2arc\.per_device_feed.*not a module parameter"):
        ztwin.resolve(dict(L2X2, phases=[{"type": "tune", "l2arc": {"per_device_feed": True}}, {"type": "workload"}]))
