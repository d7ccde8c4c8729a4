"""Experiment 2's storage in a scenario: drives behind a RAID controller's battery-backed
cache ([controllers.NAME], controller = NAME), Linux md RAID10 over them
([devices.md0] type = "md-raid10"), ext4 on the array, ZFS on mirrors of the same drives."""

from __future__ import annotations

import copy
import json

import pytest

from test_config_contract import check
from ztwin import ScenarioError, load_scenario, resolve
from ztwin.scenario import GiB

DRIVES = ["sda", "sdb", "sdc", "sdd", "sde", "sdf"]

EXP2 = {
    "name": "exp2-storage",
    "machine": {"preset": "aws-i3.large"},
    "controllers": {"perc": {"model": "PERC H730", "cache": "1GiB"}},
    "devices": {d: {"preset": "sas-15k-600g", "controller": "perc"} for d in DRIVES}
    | {"md0": {"type": "md-raid10", "members": DRIVES, "layout": "n2", "chunk": "512K"}},
    "filesystem": {"type": "ext4", "device": "md0"},
    "database": {"innodb_flush_method": "O_DIRECT", "innodb_buffer_pool_size": "64M"},
    "dataset": {"tables": 4, "table_size": 20000},
    "workload": {"test": "oltp_read_write", "threads": 8, "rand_type": "pareto"},
    "run": {"warmup": "0s", "duration": "2s"},
    "variants": {
        "ext4": {},
        "zfs": {"filesystem": {
            "type": "zfs", "release": "0.8", "ashift": 12, "recordsize": "16K",
            "vdevs": [{"mirror": ["sda", "sdb"]}, {"mirror": ["sdc", "sdd"]}, {"mirror": ["sde", "sdf"]}],
            "arc": {"zfs_arc_max": "1GiB"},
        }},
    },
}


def scenario(**changes):
    d = copy.deepcopy(EXP2)
    d.update(changes)
    return d


def errors_of(d):
    with pytest.raises(ScenarioError) as e:
        load_scenario(d)
    return {x["loc_str"]: x["msg"] for x in e.value.errors()}


def test_experiment_2_storage_resolves_to_arrays_and_controllers():
    r = resolve(EXP2)
    ext4 = r["ext4"]
    assert [d["name"] for d in ext4["devices"]] == DRIVES
    assert ext4["arrays"] == [{"name": "md0", "level": "raid10", "members": DRIVES, "layout": "n2", "chunk_bytes": 512 * 1024}]
    (c,) = ext4["controllers"]
    assert c == {
        "name": "perc", "volumes": DRIVES, "cache_bytes": GiB, "write_back": True, "cache_latency_ns": 40_000,
        "cache_bytes_per_sec": 4e9, "destage_max_bytes": 1 << 20, "destage_queue_depth": 2,
    }
    assert ext4["filesystem"]["device"] == "md0"
    d = ext4["devices"][0]
    assert d["rotational"]["rpm"] == 15000 and d["capacity_bytes"] == 600127266816
    # The ZFS variant: the same drives and controller; the array is defined, unused.
    z = r["zfs"]
    assert z["controllers"] == ext4["controllers"] and len(z["arrays"]) == 1
    for name, cfg in r.items():
        check(cfg["arrays"], "Vec<ArrayConfig>", f"{name}.arrays")
        check(cfg["controllers"], "Vec<ControllerConfig>", f"{name}.controllers")


def test_scenarios_without_raid_resolve_empty_lists():
    r = resolve(scenario(controllers={}, devices={"d": {"preset": "sas-15k-600g"}}, filesystem={"type": "ext4", "device": "d"}, variants={}))
    (cfg,) = r.values()
    assert cfg["controllers"] == [] and cfg["arrays"] == []


def test_both_variants_run_through_the_controller_and_the_array():
    from ztwin import _core

    sc = load_scenario(EXP2)
    for name, cfg in sc.variants.items():
        doc = json.loads(_core.run_variant(json.dumps(cfg)))
        assert doc["queries"] > 0, name
        devs = doc["devices"]
        assert sorted(devs) == DRIVES, devs.keys()
        # Every drive is read: the array (or the pool) spreads the tables over all six.
        for dname in DRIVES:
            assert devs[dname]["read_iops"] > 0, (name, dname, devs[dname])
        assert sum(devs[dname]["write_iops"] for dname in DRIVES) > 0, name
        # The controller took every write of its volumes; its drives wrote what it destaged.
        (ctrl,) = doc["controllers"].values()
        assert ctrl["write_iops"] == pytest.approx(sum(devs[d]["write_iops"] for d in DRIVES), rel=1e-9)
        assert ctrl["destage_mbps"] == pytest.approx(sum(devs[d]["drive"]["write_mbps"] for d in DRIVES), rel=1e-9, abs=1e-12)
        assert 0 <= ctrl["dirty_mib"] <= ctrl["cache_mib"] + ctrl["overfull_peak_mib"], ctrl
        if name == "ext4":
            # n2: the two drives of each pair get the same writes.
            for a, b in zip(DRIVES[::2], DRIVES[1::2]):
                assert devs[a]["write_iops"] == devs[b]["write_iops"], (a, b)
                assert devs[a]["write_mbps"] == devs[b]["write_mbps"], (a, b)


def test_array_errors_name_the_scenario_key():
    bad = scenario(variants={})
    bad["devices"]["md0"] = {"type": "md-raid10", "members": ["sda", "sdx", "sda"], "layout": "x2"}
    errs = errors_of(bad)
    assert "devices.md0.layout" in errs, errs
    bad["devices"]["md0"]["layout"] = "n2"
    errs = errors_of(bad)
    assert errs.keys() == {"devices.md0.members[1]", "devices.md0.members[2]"}, errs
    assert "unknown device 'sdx'" in errs["devices.md0.members[1]"]
    assert "twice" in errs["devices.md0.members[2]"]


def test_layout_and_chunk_rules_of_the_core_name_the_key():
    d = scenario(variants={})
    d["devices"]["md0"]["layout"] = "n7"
    errs = errors_of(d)
    assert list(errs) == ["devices.md0.layout"], errs
    assert "at most the number of members (6)" in errs["devices.md0.layout"]
    d["devices"]["md0"]["layout"] = "n2"
    d["devices"]["md0"]["chunk"] = "3K"
    errs = errors_of(d)
    assert list(errs) == ["devices.md0.chunk"], errs


def test_unknown_device_type_and_controller_are_refused():
    d = scenario(variants={})
    d["devices"]["md0"]["type"] = "md-raid5"
    errs = errors_of(d)
    assert "devices.md0.type" in errs and "'md-raid10'" in errs["devices.md0.type"], errs
    d = scenario(variants={})
    d["devices"]["sdc"]["controller"] = "h730"
    errs = errors_of(d)
    assert list(errs) == ["devices.sdc.controller"], errs
    assert "unknown controller 'h730'; controllers: perc" in errs["devices.sdc.controller"]
    d = scenario(variants={})
    d["controllers"]["perc"]["cache"] = "0"
    assert "controllers.perc.cache" in errors_of(d)
    d["controllers"]["perc"]["cache"] = "512K"
    errs = errors_of(d)
    assert list(errs) == ["controllers.perc.cache"], errs  # the core: at least 1 MiB


def test_device_errors_keep_their_keys():
    d = scenario(variants={})
    d["devices"]["sda"]["rpm"] = "fast"
    d["devices"]["sdb"]["bogus"] = 1
    errs = errors_of(d)
    assert errs.keys() == {"devices.sda.rpm", "devices.sdb.bogus"}, errs
    assert "allowed keys" in errs["devices.sdb.bogus"]
    d = scenario(variants={})
    d["devices"]["md0"]["chunks"] = "64K"
    errs = errors_of(d)
    assert list(errs) == ["devices.md0.chunks"] and "chunk" in errs["devices.md0.chunks"], errs


def test_zfs_on_the_array_and_bcache_over_it_are_refused():
    d = scenario(variants={})
    d["filesystem"] = {"type": "zfs", "vdevs": ["md0"]}
    errs = errors_of(d)
    assert "filesystem.vdevs[0]" in errs and "not modelled" in errs["filesystem.vdevs[0]"], errs
    d = scenario(variants={})
    d["devices"]["nvme"] = {"preset": "nvme-local"}
    d["filesystem"]["bcache"] = {"cache_device": "nvme"}
    errs = errors_of(d)
    assert list(errs) == ["filesystem.bcache"], errs
