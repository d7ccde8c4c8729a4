"""Pools of single devices and mirrors, log vdevs, rotational disks (scenario model and core)."""

from __future__ import annotations

import json

import pytest

from test_scenario import base, load_file, only_error, rejected  # noqa: F401 (fixture)
from ztwin import load_scenario, resolve

SAS = {"preset": "sas-7200-1tb"}


def exp3_pool(**fs):
    """Experiment 3's pool: five two-way mirrors and a single disk of 1 TB 7200 rpm SAS
    disks, a RAM-based log device."""
    devices = {f"d{i}": dict(SAS) for i in range(1, 12)} | {"slog": {"preset": "ram-slog"}}
    vdevs = [{"mirror": [f"d{2 * k + 1}", f"d{2 * k + 2}"]} for k in range(5)] + ["d11"]
    return base(
        machine={"preset": "baremetal-2018", "vcpus": 4, "ram": "12GiB"},
        devices=devices,
        filesystem={"type": "zfs", "release": "0.8", "vdevs": vdevs, "log": ["slog"], "recordsize": "128K",
                    "compression": "lzjb", "ashift": 9, "arc": {"zfs_arc_max": "1GiB"}} | fs,
    )


def test_mirrors_and_single_devices_resolve_as_written():
    cfg = resolve(exp3_pool())["base"]
    z = cfg["filesystem"]
    assert z["vdevs"][0] == {"mirror": ["d1", "d2"]} and z["vdevs"][5] == "d11"
    assert z["log"] == ["slog"]
    assert z["pool"]["mirror_read_policy"] == "load" and z["pool"]["metaslab_aliquot"] == 0
    assert z["pool"]["zfs_vdev_mirror_rotating_seek_inc"] == 5


def test_old_scenarios_keep_plain_device_lists():
    assert resolve(base())["base"]["filesystem"]["vdevs"] == ["ebs"]


def test_the_sas_preset_is_a_rotational_disk():
    dev = resolve(exp3_pool())["base"]["devices"][0]
    assert dev["kind"] == "sas-7200-1tb" and dev["parallelism"] == 1
    assert dev["capacity_bytes"] == 1_953_525_168 * 512
    assert dev["rotational"] == {
        "rpm": 7200, "track_to_track_seek_ns": 500_000, "average_seek_ns": 8_500_000, "full_stroke_seek_ns": 17_350_000,
        "write_settle_ns": 1_000_000, "outer_rate_bytes_per_sec": 150e6, "inner_rate_bytes_per_sec": 60e6,
        "readahead_bytes": 1 << 20,
    }
    assert resolve(exp3_pool())["base"]["devices"][-1]["rotational"] is None  # the slog


@pytest.mark.parametrize(
    "change, loc, fragment",
    [
        ({"filesystem": {"vdevs": [{"mirror": ["d1", "dx"]}]}}, "filesystem.vdevs[0]", "names unknown device 'dx'"),
        ({"filesystem": {"vdevs": [{"mirror": ["d1", "d2"]}, "d2"]}}, "filesystem.vdevs[1]", "device 'd2' is used twice"),
        ({"filesystem": {"vdevs": [{"mirror": ["d1"]}]}}, "filesystem.vdevs[0]", "a mirror needs at least two devices"),
        ({"filesystem": {"vdevs": [{"raidz": ["d1", "d2"]}]}}, "filesystem.vdevs[0]", 'a mirror of device names ({mirror = ["d1", "d2"]})'),
        ({"filesystem": {"log": ["d1"]}}, "filesystem.log[0]", "device 'd1' is used twice"),
        ({"filesystem": {"pool": {"mirror_read_policy": "random"}}}, "filesystem.pool.mirror_read_policy", "'load' or 'offset'"),
        ({"filesystem": {"pool": {"zfs_vdev_sync_read_max_active": 0}}}, "filesystem.pool.zfs_vdev_sync_read_max_active", "greater than or equal to 1"),
        ({"devices": {"d1": {"preset": "sas-7200-1tb", "parallelism": 4}}}, "devices.d1.parallelism", "one request at a time"),
        ({"devices": {"d1": {"preset": "sas-7200-1tb", "average_seek": "16ms"}}}, "devices.d1.average_seek", "no seek curve that grows"),
        ({"devices": {"d1": {"preset": "sas-7200-1tb", "average_seek": "20ms"}}}, "devices.d1.average_seek", "strictly between"),
        ({"devices": {"d1": {"preset": "sas-7200-1tb", "media_rate_inner": "200MB/s"}}}, "devices.d1.media_rate_inner", "at most media_rate_outer"),
        ({"devices": {"slog": {"preset": "ram-slog", "average_seek": "1ms"}}}, "devices.slog.average_seek", "rotational disks only: set rpm"),
        ({"devices": {"slog": {"preset": "ram-slog", "rpm": 7200}}}, "devices.slog.track_to_track_seek", "required key missing for a rotational disk"),
    ],
)
def test_pool_mistakes_are_named(load_file, change, loc, fragment):
    d = exp3_pool()
    for table, sub in change.items():
        d[table].update(sub)
    e = rejected(load_file, d)
    found = [x for x in e.errors() if x["loc_str"] == loc]
    assert found and fragment in found[0]["msg"], str(e)


def test_a_cache_device_cannot_be_a_log_device(load_file):
    d = exp3_pool(cache=["slog"])
    d["devices"]["slog"]["size"] = "8GB"
    e = only_error(rejected(load_file, d))
    assert e["loc_str"] == "filesystem.cache" and "already a data or log vdev" in e["msg"]


def test_the_core_reads_through_mirrors_and_the_single_disk():
    """Point selects on experiment 3's pool: every data disk serves reads, the two sides of
    a mirror alike, the log device none; each disk stays within its mechanics (random
    reads wait half a revolution on average: under 240 reads/s)."""
    from ztwin import _core

    d = exp3_pool()
    d["dataset"] = {"tables": 8, "table_size": 2_000_000}
    d["workload"] = {"type": "sysbench", "test": "oltp_point_select", "threads": 16, "rand_type": "uniform"}
    d["database"] = {"innodb_buffer_pool_size": "64M", "innodb_flush_method": "O_DIRECT"}
    d["run"] = {"warmup": "2s", "duration": "4s", "report_interval": "2s"}
    cfg = load_scenario(d).variants["base"]
    doc = json.loads(_core.run_variant(json.dumps(cfg)))
    iops = {k: v["read_iops"] for k, v in doc["devices"].items()}
    assert iops["slog"] == 0
    for k in range(5):
        a, b = iops[f"d{2 * k + 1}"], iops[f"d{2 * k + 2}"]
        assert a > 10 and b > 10 and abs(a / b - 1) < 0.35, iops
    assert iops["d11"] > 10, iops
    assert max(iops.values()) < 240, iops

