"""Scenario validation, merging and resolution (ztwin.scenario)."""

from __future__ import annotations

import copy
import re

import pytest
import tomli_w

from ztwin import ScenarioError, load_scenario, resolve
from ztwin.presets import device_presets, machine_presets, raw_device_presets
from ztwin.scenario import DEFAULT_SCENARIO, GiB, MiB, gp2_limits, merge_variant

BASE = {
    "name": "t",
    "machine": {"preset": "aws-i3.large"},
    "devices": {"ebs": {"preset": "aws-gp2", "size": "1000GiB"}},
    "filesystem": {"type": "zfs", "release": "0.8", "vdevs": ["ebs"], "recordsize": "16K", "arc": {"zfs_arc_max": "1GiB"}},
    "workload": {"type": "sysbench", "test": "oltp_point_select"},
    "database": {"type": "innodb"},
    "dataset": {"type": "sysbench"},
}


def base(**changes):
    d = copy.deepcopy(BASE)
    d.update(changes)
    return d


@pytest.fixture
def load_file(tmp_path):
    """Writes a scenario dict as TOML to tmp_path/s.toml and loads it."""

    def load(d):
        p = tmp_path / "s.toml"
        p.write_text(tomli_w.dumps(d))
        return load_scenario(p)

    return load


def rejected(load_file, d):
    with pytest.raises(ScenarioError) as e:
        load_file(d)
    text = str(e.value)
    assert "s.toml" in text.splitlines()[0], text  # names the file
    assert re.match(r"\d+ validation errors? for scenario ", text)
    return e.value


def only_error(err):
    errs = err.errors()
    assert len(errs) == 1, str(err)
    return errs[0]


# --------------------------------------------------------------------------------------
# accepted scenarios


def test_minimal_scenario_resolves_with_real_defaults():
    (cfg,) = resolve(base()).values()
    assert cfg["variant"] == "base"
    db = cfg["database"]
    read = {
        "type": "innodb", "innodb_buffer_pool_size": 128 * MiB, "innodb_page_size": 16384,
        "innodb_old_blocks_pct": 37, "innodb_old_blocks_time_ns": 10**9, "innodb_flush_method": "fsync",
        "innodb_lru_scan_depth": 0, "server": "mysql-5.7", "character_set_server": "latin1",
    }
    assert {k: db[k] for k in read} == read
    # The write options unset: the core resolves the server's defaults.
    assert all(v is None for k, v in db.items() if k not in read) and len(db) > len(read)
    w = cfg["workload"]
    assert (w["threads"], w["rand_type"], w["rand_spec_iter"], w["rand_spec_pct"], w["rand_spec_res"]) == (1, "special", 12, 1.0, 75.0)
    assert (w["rand_pareto_h"], w["rand_zipfian_exp"], w["random_points"]) == (0.2, 0.8, 10)
    arc = cfg["filesystem"]["arc"]
    assert arc["zfs_arc_min"] == 0 and arc["zfs_compressed_arc_enabled"] is None  # the release default (1 from 0.7)
    assert cfg["filesystem"]["indirect_block_size"] == 128 * 1024


@pytest.mark.parametrize("release", ["0.6", "0.8", "2.1", "2.2", "2.3"])
def test_every_release_loads_through_the_core(load_file, release):
    """Each modelled release is accepted by the schema and by the core's check."""
    sc = load_file(base(filesystem={**BASE["filesystem"], "release": release}))
    assert sc.variants["base"]["filesystem"]["release"] == release


def test_default_scenario_is_experiment_1():
    sc = load_scenario()
    assert sc.name == "exp1-arc-sizing"
    assert sc.variant_names == ["xfs", "zfs-arc-1g", "zfs-arc-meta"]
    z = sc.variants["zfs-arc-1g"]
    assert z["devices"][0]["iops_limit"] == 3000.0
    assert z["filesystem"]["recordsize"] == 16384 and z["filesystem"]["indirect_block_size"] == 16384
    assert z["filesystem"]["ashift"] == 9 and z["filesystem"]["release"] == "0.8"
    assert z["filesystem"]["arc"]["zfs_arc_max"] == GiB
    # No compress_ratio: records are stored as their generated pages compress.
    assert z["dataset"] == {
        "type": "sysbench", "tables": 330, "table_size": 10_000_000, "compress_ratio": None, "prepare_rand_type": "special",
    }
    assert sc.variants["xfs"]["filesystem"] == {"type": "xfs", "device": "ebs", "block_size": 4096, "bcache": None}
    assert sc.variants["zfs-arc-meta"]["filesystem"]["arc"]["zfs_arc_max"] > 6 * GiB


def test_dict_and_path_give_the_same_result():
    import tomllib

    raw = tomllib.loads(DEFAULT_SCENARIO.read_text())
    assert resolve(raw) == resolve(DEFAULT_SCENARIO)


# --------------------------------------------------------------------------------------
# variants


def test_variant_table_merges_into_base():
    d = base(variants={"big": {"filesystem": {"arc": {"zfs_arc_max": "8GiB"}}}, "same": {}})
    r = resolve(d)
    assert r["big"]["filesystem"]["arc"]["zfs_arc_max"] == 8 * GiB
    assert r["big"]["filesystem"]["recordsize"] == 16384  # kept from the base
    assert r["same"]["filesystem"]["arc"]["zfs_arc_max"] == GiB
    assert list(r) == ["big", "same"]


def test_variant_changing_filesystem_type_replaces_the_table():
    d = base(variants={"xfs": {"filesystem": {"type": "xfs", "device": "ebs"}, "database": {"innodb_flush_method": "O_DIRECT"}}})
    assert resolve(d)["xfs"]["filesystem"] == {"type": "xfs", "device": "ebs", "block_size": 4096, "bcache": None}


def test_variant_type_change_does_not_inherit_zfs_fields(load_file):
    d = base(variants={"xfs": {"filesystem": {"type": "xfs"}}})
    e = only_error(rejected(load_file, d))
    assert e["loc_str"] == "variants.xfs.filesystem.device"
    assert "required" in e["msg"]


def test_variant_lists_are_replaced_and_devices_merge():
    d = base(variants={"two": {"devices": {"ebs2": {"preset": "aws-gp2", "size": "500GiB"}}, "filesystem": {"vdevs": ["ebs", "ebs2"]}}})
    r = resolve(d)["two"]
    assert [x["name"] for x in r["devices"]] == ["ebs", "ebs2"]
    assert r["filesystem"]["vdevs"] == ["ebs", "ebs2"]
    assert merge_variant({"a": [1, 2], "t": {"x": 1}}, {"a": [3], "t": {"y": 2}}) == {"a": [3], "t": {"x": 1, "y": 2}}


def test_error_in_variant_is_located_in_the_variant(load_file):
    d = base(variants={"zfs-arc-meta": {"filesystem": {"arc": {"zfs_arc_max": "20GiB"}}}, "ok": {}})
    err = rejected(load_file, d)
    e = only_error(err)
    assert e["loc_str"] == "variants.zfs-arc-meta.filesystem.arc.zfs_arc_max"
    assert "less than the machine's RAM (15.25 GiB)" in e["msg"]
    assert "input_value='20GiB'" in str(err)


def test_error_in_base_reported_once_and_names_variants_when_partial(load_file):
    d = base(filesystem={**BASE["filesystem"], "recordsize": "24K"}, variants={"a": {}, "b": {}})
    e = only_error(rejected(load_file, d))
    assert e["loc_str"] == "filesystem.recordsize" and "power of two" in e["msg"]
    d = base(variants={"small": {"machine": {"ram": "1GiB"}}, "ok": {}})
    e = only_error(rejected(load_file, d))
    assert e["loc_str"] == "filesystem.arc.zfs_arc_max" and "(in variant small)" in e["msg"]


def test_variant_cannot_rename_scenario_or_nest_variants(load_file):
    e = only_error(rejected(load_file, base(variants={"v": {"name": "x"}})))
    assert e["loc_str"] == "variants.v.name" and "a variant overrides:" in e["msg"]
    e = only_error(rejected(load_file, base(variants={"v": 3})))
    assert e["loc_str"] == "variants.v"


# --------------------------------------------------------------------------------------
# unknown keys at every level


@pytest.mark.parametrize(
    "path",
    [
        (),
        ("machine",),
        ("machine", "cpu"),
        ("devices", "ebs"),
        ("filesystem",),
        ("filesystem", "arc"),
        ("database",),
        ("dataset",),
        ("workload",),
        ("run",),
    ],
)
@pytest.mark.parametrize("in_variant", [False, True])
def test_unknown_key_rejected_everywhere(load_file, path, in_variant):
    d = base(database={"type": "innodb"}, dataset={"type": "sysbench"}, run={"duration": "10s"})
    d["machine"]["cpu"] = {"speed": 1.0}
    target = {} if in_variant else d
    if in_variant:
        d["variants"] = {"v": target}
    t = target
    for p in path:
        t = t.setdefault(p, {})
    t["colour"] = "red"
    e = only_error(rejected(load_file, d))
    want = ".".join((("variants", "v") if in_variant else ()) + path + ("colour",))
    if not path and in_variant:
        assert e["loc_str"] == "variants.v.colour" and "a variant overrides:" in e["msg"]
    else:
        assert e["loc_str"] == want
        assert "unknown key 'colour'; allowed keys:" in e["msg"]


def test_unknown_key_lists_allowed_keys_of_the_right_filesystem(load_file):
    d = base(filesystem={"type": "xfs", "device": "ebs", "recordsize": "16K"})
    e = only_error(rejected(load_file, d))
    assert e["loc_str"] == "filesystem.recordsize"
    assert "allowed keys: type, device, block_size" in e["msg"]


# --------------------------------------------------------------------------------------
# rejections: each names the field and what is allowed


@pytest.mark.parametrize(
    "change, loc, fragment",
    [
        ({"filesystem": {"type": "btrfs"}}, "filesystem.type", "unknown type 'btrfs'; allowed: 'zfs', 'xfs', 'ext4'"),
        ({"filesystem": {"vdevs": ["ebs"]}}, "filesystem.type", "required key missing: type, one of 'zfs', 'xfs', 'ext4'"),
        ({"filesystem": {**BASE["filesystem"], "vdevs": ["nvme"]}}, "filesystem.vdevs[0]", "names unknown device 'nvme'; devices of this scenario: ebs"),
        ({"filesystem": {"type": "ext4", "device": "sda"}}, "filesystem.device", "names unknown device 'sda'; devices of this scenario: ebs"),
        ({"filesystem": {**BASE["filesystem"], "recordsize": "24K"}}, "filesystem.recordsize", "power of two from 512 B to 16 MiB"),
        ({"filesystem": {**BASE["filesystem"], "recordsize": "32M"}}, "filesystem.recordsize", "power of two from 512 B to 16 MiB"),
        ({"filesystem": {**BASE["filesystem"], "recordsize": "4M"}}, "filesystem.recordsize", "release 0.8 allows at most 1M"),
        ({"filesystem": {**BASE["filesystem"], "indirect_block_size": "256K"}}, "filesystem.indirect_block_size", "power of two from 4K to 128K"),
        ({"filesystem": {**BASE["filesystem"], "ashift": 8}}, "filesystem.ashift", "must be 9 to 16"),
        ({"filesystem": {**BASE["filesystem"], "compression": "lz5"}}, "filesystem.compression", "must be 'off', 'lz4', 'lzjb', 'zstd' or 'gzip'"),
        ({"filesystem": {**BASE["filesystem"], "primarycache": "some"}}, "filesystem.primarycache", "must be 'all', 'metadata' or 'none'"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.4"}}, "filesystem.release", "must be '0.6', '0.8', '2.1', '2.2' or '2.3'"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_max": "16GiB"}}}, "filesystem.arc.zfs_arc_max", "less than the machine's RAM"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_max": "32M"}}}, "filesystem.arc.zfs_arc_max", "at least 64 MiB"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_max": "1G", "zfs_arc_min": "2G"}}}, "filesystem.arc.zfs_arc_min", "must not exceed zfs_arc_max"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.2", "arc": {"zfs_arc_meta_limit": "900M"}}}, "filesystem.arc.zfs_arc_meta_limit", "does not exist in release 2.2"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.2", "arc": {"zfs_arc_meta_min": "64M"}}}, "filesystem.arc.zfs_arc_meta_min", "does not exist in release 2.2"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_meta_balance": 500}}}, "filesystem.arc.zfs_arc_meta_balance", "exists only from release 2.2"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.2", "arc": {"zfs_arc_meta_strategy": 0}}}, "filesystem.arc.zfs_arc_meta_strategy", "does not exist in release 2.2"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_meta_strategy": 2}}}, "filesystem.arc.zfs_arc_meta_strategy", "less than or equal to 1"),
        ({"filesystem": {**BASE["filesystem"], "release": "0.6", "arc": {"zfs_compressed_arc_enabled": True}}}, "filesystem.arc.zfs_compressed_arc_enabled", "release 0.6 has no compressed ARC"),
        ({"filesystem": {**BASE["filesystem"], "release": "0.6", "arc": {"zfs_abd_scatter_enabled": True}}}, "filesystem.arc.zfs_abd_scatter_enabled", "release 0.6 has no ABD"),
        ({"filesystem": {**BASE["filesystem"], "zfetch": {"zfetch_min_distance": "2M"}}}, "filesystem.zfetch.zfetch_min_distance", "does not exist in release 0.8 (added in 2.1.6)"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.1", "release_patch": 5, "zfetch": {"zfetch_max_sec_reap": 3}}}, "filesystem.zfetch.zfetch_max_sec_reap", "does not exist in release 2.1.5"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.2", "zfetch": {"zfetch_array_rd_sz": "2M"}}}, "filesystem.zfetch.zfetch_array_rd_sz", "removed in 2.2.0"),
        ({"filesystem": {**BASE["filesystem"], "release": "2.2", "release_patch": 3, "zfetch": {"zfetch_hole_shift": 3}}}, "filesystem.zfetch.zfetch_hole_shift", "added in 2.2.4"),
        ({"filesystem": {**BASE["filesystem"], "zfetch": {"zfetch_max_distance": 0}}}, "filesystem.zfetch.zfetch_max_distance", "must be at least 1"),
        ({"filesystem": {**BASE["filesystem"], "zfetch": {"zfetch_max_distance": "8G"}}}, "filesystem.zfetch.zfetch_max_distance", "0 to 4294967295"),
        ({"filesystem": {**BASE["filesystem"], "zfetch": {"zfetch_readahead": 1}}}, "filesystem.zfetch.zfetch_readahead", "unknown key"),
        ({"filesystem": {**BASE["filesystem"], "arc": {"zfs_arc_max": "1G", "zfs_arc_meta_limit": "2G"}}}, "filesystem.arc.zfs_arc_meta_limit", "must not exceed zfs_arc_max"),
        ({"filesystem": {**BASE["filesystem"], "recordsize": "16Q"}}, "filesystem.recordsize", "unknown size unit 'Q'"),
        ({"filesystem": {"type": "xfs", "device": "ebs", "block_size": "3K"}}, "filesystem.block_size", "power of two from 512 to 64K"),
        ({"machine": {"preset": "aws-i3.xlarge"}}, "machine.preset", "known: aws-i3.large, lab-guest, fusionio-host, baremetal-2018"),
        ({"machine": {"vcpus": 2}}, "machine.ram", "required key missing (no preset gives it; or set preset = one of aws-i3.large"),
        ({"machine": {"preset": "aws-i3.large", "vcpus": 0}}, "machine.vcpus", "greater than or equal to 1"),
        ({"machine": {"preset": "aws-i3.large", "ram": "32M"}}, "machine.ram", "at least 64 MiB"),
        ({"machine": {"preset": "aws-i3.large", "cpu": {"speed": 0}}}, "machine.cpu.speed", "greater than 0"),
        ({"devices": {"ebs": {"preset": "aws-gp1"}}}, "devices.ebs.preset", "known: aws-gp2, aws-gp3, nvme-local, virtio-throttled, hdd-7200, fusionio"),
        ({"devices": {"ebs": {"preset": "aws-gp2"}}}, "devices.ebs.size", "aws-gp2 needs a size"),
        ({"devices": {"ebs": {"preset": "aws-gp2", "size": "1000GB"}}}, "devices.ebs.size", "whole GiB; this is 931.32 GiB"),
        ({"devices": {"ebs": {"preset": "aws-gp2", "size": "20TiB"}}}, "devices.ebs.size", "1 GiB to 16384 GiB"),
        ({"devices": {"ebs": {"preset": "aws-gp2", "size": "1000GiB", "iops_limit": 5000}}}, "devices.ebs.iops_limit", "follows from the size"),
        ({"devices": {"ebs": {"preset": "aws-gp3", "iops_limit": 20000}}}, "devices.ebs.iops_limit", "3000 to 16000 IOPS"),
        ({"devices": {"ebs": {"preset": "aws-gp3", "size": "8GiB", "iops_limit": 5000}}}, "devices.ebs.iops_limit", "500 IOPS per GiB"),
        ({"devices": {"ebs": {"preset": "aws-gp3", "throughput_limit": "2000MiB/s"}}}, "devices.ebs.throughput_limit", "125 to 1000 MiB/s"),
        ({"devices": {"ebs": {"preset": "aws-gp3", "throughput_limit": "1000MiB/s"}}}, "devices.ebs.throughput_limit", "0.25 MiB/s per provisioned IOPS"),
        ({"devices": {"ebs": {"preset": "hdd-7200", "burst": True}}}, "devices.ebs.burst", "aws-gp2 and azure-premium only"),
        ({"devices": {"ebs": {"preset": "azure-premium"}}}, "devices.ebs.size", "azure-premium needs a size"),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "40TiB"}}}, "devices.ebs.size", "at most 32767 GiB (P80)"),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "1TiB", "iops_limit": 9000}}}, "devices.ebs.iops_limit", "follows from the size's tier"),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "513GiB", "burst": True}}}, "devices.ebs.burst", "512 GiB and less (P1 to P20); this disk is P30"),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "1TiB", "host_cache": "readwrite"}}}, "devices.ebs.host_cache", "ReadWrite (write-back at the host) is not modelled; host_cache takes \"none\" or \"readonly\""),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "4TiB", "host_cache": "readonly"}}}, "devices.ebs.host_cache", "smaller than 4 TiB only"),
        ({"devices": {"ebs": {"preset": "azure-premium", "size": "1TiB", "host_cache": "writeback"}}}, "devices.ebs.host_cache", "'none', 'readonly' or 'readwrite'"),
        ({"devices": {"ebs": {"preset": "aws-gp3", "host_cache": "readonly"}}}, "devices.ebs.host_cache", "azure-premium only (this device is aws-gp3)"),
        ({"machine": {"preset": "azure-L8s_v2"}, "devices": {"ebs": {"preset": "azure-premium", "size": "1TiB", "host_cache": "readonly"}}}, "devices.ebs.host_cache", "this machine has no host cache"),
        ({"machine": {"preset": "azure-E2ds_v4", "uncached_disk_iops_limit": 0}}, "machine.uncached_disk_iops_limit", "greater than or equal to 1"),
        ({"devices": {"ebs": {"read_latency": "1ms"}}}, "devices.ebs.write_latency", "required key missing"),
        ({"devices": {"ebs": {"preset": "hdd-7200", "read_latency": "8"}}}, "devices.ebs.read_latency", "needs a unit"),
        ({"devices": {"ebs": {"preset": "hdd-7200", "iops_limit": -3}}}, "devices.ebs.iops_limit", "positive number"),
        ({"devices": {"ebs": {"preset": "hdd-7200", "throughput_limit": "fast"}}}, "devices.ebs.throughput_limit", "size per second"),
        ({"devices": {"ebs": {"preset": "hdd-7200", "latency_sigma": 7}}}, "devices.ebs.latency_sigma", "less than 5"),
        ({"devices": {}}, "devices", "at least 1 item"),
        ({"database": {"innodb_page_size": "12K"}}, "database.innodb_page_size", "4K, 8K, 16K, 32K or 64K"),
        ({"database": {"innodb_buffer_pool_size": "1M"}}, "database.innodb_buffer_pool_size", "at least 5 MiB"),
        ({"database": {"innodb_buffer_pool_size": "16G"}}, "database.innodb_buffer_pool_size", "not exceed the machine's RAM"),
        ({"database": {"innodb_old_blocks_pct": 99}}, "database.innodb_old_blocks_pct", "5 to 95"),
        ({"database": {"innodb_flush_method": "O_DSYN"}}, "database.innodb_flush_method", "must be 'fsync', 'O_DSYNC', 'O_DIRECT' or 'O_DIRECT_NO_FSYNC'"),
        ({"database": {"type": "postgres"}}, "database.type", "must be 'innodb'"),
        ({"dataset": {"compress_ratio": 0.5}}, "dataset.compress_ratio", "at least 1.0"),
        ({"database": {"server": "mysql-8.0"}}, "database.server", "must be 'mysql-5.7', 'mariadb-10.11' or 'percona-5.7'"),
        ({"database": {"innodb_empty_free_list_algorithm": "backoff"}}, "database.innodb_empty_free_list_algorithm", "Percona Server 5.7's option"),
        ({"database": {"innodb_cleaner_lsn_age_factor": "legacy", "server": "mariadb-10.11"}}, "database.innodb_cleaner_lsn_age_factor", "Percona Server 5.7's option"),
        ({"database": {"innodb_buffer_pool_instances": 8}}, "database.innodb_buffer_pool_instances", "Percona Server 5.7's option"),
        ({"database": {"innodb_buffer_pool_instances": 65, "server": "percona-5.7"}}, "database.innodb_buffer_pool_instances", "less than or equal to 64"),
        ({"database": {"innodb_empty_free_list_algorithm": "lazy", "server": "percona-5.7"}}, "database.innodb_empty_free_list_algorithm", "must be 'backoff' or 'legacy'"),
        ({"database": {"innodb_purge_threads": 33}}, "database.innodb_purge_threads", "less than or equal to 32"),
        ({"database": {"innodb_purge_batch_size": 0}}, "database.innodb_purge_batch_size", "greater than or equal to 1"),
        ({"database": {"innodb_purge_rseg_truncate_frequency": 129}}, "database.innodb_purge_rseg_truncate_frequency", "less than or equal to 128"),
        ({"database": {"innodb_max_purge_lag": 100000}}, "database.innodb_max_purge_lag", "only 0 (the default: no DML delay) is modelled"),
        ({"dataset": {"prepare_rand_type": "pareto"}}, "dataset.prepare_rand_type", "must be 'special' or 'uniform'"),
        ({"dataset": {"tables": 0}}, "dataset.tables", "greater than or equal to 1"),
        ({"dataset": {"tables": 2**24}}, "dataset.tables", "less than or equal to 16777215"),
        ({"dataset": {"table_size": 2**31}}, "dataset.table_size", "less than or equal to 2147483647"),
        ({"workload": {"type": "sysbench"}}, "workload.test", "required key missing"),
        ({"workload": {"test": "oltp_write"}}, "workload.test", "must be 'oltp_point_select', 'select_random_points', 'oltp_read_only', 'oltp_read_write', 'oltp_write_only', 'oltp_update_index', 'oltp_update_non_index', 'oltp_insert', 'oltp_delete' or 'tpcc'"),
        ({"phases": [{"type": "workload", "test": "oltp_writes"}]}, "phases[0].test", "must be a sysbench test"),
        ({"database": {"log_bin": True, "server": "mariadb-10.11"}, "workload": {"test": "oltp_update_index"}}, "database.log_bin", "MariaDB's binary log"),
        ({"database": {"sync_binlog": 0}}, "database.sync_binlog", "set log_bin = true"),
        ({"workload": {"test": "oltp_point_select", "rand_type": "random"}}, "workload.rand_type", "must be 'uniform', 'special', 'gaussian', 'pareto' or 'zipfian'"),
        ({"workload": {"test": "oltp_point_select", "threads": 5000}}, "workload.threads", "1 to 4096"),
        ({"seed": True}, "seed", "must be an integer, not a boolean"),
        ({"workload": {"test": "oltp_point_select", "threads": "4"}}, "workload.threads", "must be an integer, not a string"),
        ({"database": {"innodb_old_blocks_pct": 37.5}}, "database.innodb_old_blocks_pct", "must be an integer, not a float"),
        ({"workload": {"test": "select_random_points", "random_points": 0}}, "workload.random_points", "1 to 1000"),
        ({"run": {"duration": "0s"}}, "run.duration", "must be positive"),
        ({"run": {"duration": "10s", "report_interval": "20s"}}, "run.report_interval", "must not exceed run.duration"),
        ({"run": {"report_interval": "0s"}}, "run.report_interval", "must be positive"),
        ({"run": {"warmup": "soon"}}, "run.warmup", "cannot read 'soon'"),
        ({"seed": -1}, "seed", "greater than or equal to 0"),
        ({"name": ""}, "name", "at least 1 character"),
        ({"variants": [1]}, "variants", "must be a table"),
        ({"filesystem": dict(BASE["filesystem"], sync="sometimes")}, "filesystem.sync", "must be 'standard', 'always' or 'disabled'"),
        ({"filesystem": dict(BASE["filesystem"], logbias="fast")}, "filesystem.logbias", "must be 'latency' or 'throughput'"),
        ({"filesystem": dict(BASE["filesystem"], zil={"zil_slog_bulks": 1})}, "filesystem.zil.zil_slog_bulks", "unknown key"),
        ({"filesystem": dict(BASE["filesystem"], zil={"zfs_commit_timeout_pct": 5000})}, "filesystem.zil.zfs_commit_timeout_pct", "less than or equal to 1000"),
        ({"filesystem": dict(BASE["filesystem"], zil={"zil_maxblocksize": "6K"})}, "filesystem.zil.zil_maxblocksize", "multiple of 4 KiB"),
        ({"filesystem": dict(BASE["filesystem"], zil={"zil_min_commit_timeout": "5us"})}, "filesystem.zil.zil_min_commit_timeout", "2.1.10 to 2.2.3"),
        ({"filesystem": dict(BASE["filesystem"], zil={"zil_maxcopied": "8K"})}, "filesystem.zil.zil_maxcopied", "from release 2.2.0"),
        ({"filesystem": dict(BASE["filesystem"], release="0.6", sync="always")}, "filesystem.release", "not modelled"),
        ({"devices": {"ebs": {"preset": "aws-gp2", "size": "1000GiB", "flush_latency": "soon"}}}, "devices.ebs.flush_latency", "cannot read 'soon'"),
    ],
)
def test_rejection(load_file, change, loc, fragment):
    err = rejected(load_file, base(**change))
    locs = [e["loc_str"] for e in err.errors()]
    assert loc in locs, str(err)
    e = next(e for e in err.errors() if e["loc_str"] == loc)
    assert fragment in e["msg"], str(err)
    assert f"\n{loc}\n  " in str(err)  # pydantic-core style: location line, indented message


def test_missing_name_and_sections(load_file):
    d = {"machine": {"preset": "aws-i3.large"}}
    err = rejected(load_file, d)
    locs = {e["loc_str"] for e in err.errors()}
    assert {"name", "devices", "filesystem", "workload"} <= locs


def test_all_errors_reported_at_once(load_file):
    d = base(run={"duration": "x", "warmup": "y"}, workload={"test": "oltp_point_select", "threads": "eight"})
    err = rejected(load_file, d)
    assert len(err.errors()) == 3
    assert str(err).startswith("3 validation errors for scenario ")


def test_input_is_cut_short(load_file):
    err = rejected(load_file, base(machine={"preset": "x" * 200}))
    line = [ln for ln in str(err).splitlines() if "input_value" in ln][0]
    assert "..." in line and len(line.split("input_value=")[1]) < 60


def test_file_errors():
    with pytest.raises(ScenarioError, match="does not exist"):
        load_scenario("/nonexistent/s.toml")


def test_bad_toml(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("name = \n")
    with pytest.raises(ScenarioError, match=r"bad.toml is not valid TOML"):
        load_scenario(p)


def test_dict_source_is_named(tmp_path):
    with pytest.raises(ScenarioError, match="for scenario <dict>"):
        load_scenario({"name": "x"})


# --------------------------------------------------------------------------------------
# presets


def test_presets_load_and_validate():
    assert {"aws-i3.large", "lab-guest", "fusionio-host", "baremetal-2018"} <= set(machine_presets())
    assert {"aws-gp2", "aws-gp3", "nvme-local", "virtio-throttled", "hdd-7200", "fusionio"} <= set(device_presets())
    assert machine_presets()["lab-guest"].cpu.speed == 0.25
    assert machine_presets()["aws-i3.large"].ram == int(15.25 * GiB)


@pytest.mark.parametrize("preset", sorted(raw_device_presets()))
def test_every_device_preset_resolves(preset):
    d = base(devices={"d": {"preset": preset, "size": "1000GiB"}})
    d["filesystem"] = {"type": "xfs", "device": "d"}
    d["database"] = {"innodb_flush_method": "O_DIRECT"}
    (cfg,) = resolve(d).values()
    assert cfg["devices"][0]["kind"] == preset


def test_preset_override():
    d = base(devices={"ebs": {"preset": "virtio-throttled", "iops_limit": 300, "throughput_limit": "none", "read_latency": "1ms"}},
             machine={"preset": "lab-guest", "cpu": {"statement_ns": 70000}, "name": "guest"})
    d["filesystem"]["arc"] = {"zfs_arc_max": "256MiB"}
    (cfg,) = resolve(d).values()
    dev = cfg["devices"][0]
    assert dev["iops_limit"] == 300.0 and dev["throughput_limit_bytes_per_sec"] is None
    assert dev["read_latency_ns"] == 10**6 and dev["write_latency_ns"] == 200_000  # from the preset
    assert cfg["machine"]["cpu"]["statement_ns"] == 70000 and cfg["machine"]["cpu"]["speed"] == 0.25
    assert cfg["machine"]["name"] == "guest" and cfg["machine"]["ram_bytes"] == 4 * GiB


def test_custom_device_without_preset():
    d = base(devices={"ebs": {"iops_limit": "none", "throughput_limit": "none", "read_latency": "100us", "write_latency": "50us",
                              "latency_sigma": 0, "transfer_rate": "1GB/s", "parallelism": 4}})
    (cfg,) = resolve(d).values()
    assert cfg["devices"][0]["kind"] == "custom" and cfg["devices"][0]["iops_limit"] is None


@pytest.mark.parametrize(
    "size_gib, iops, mib_s",
    [(1, 100, 128), (33, 100, 128), (34, 102, 128), (170, 510, 128), (200, 600, 128), (334, 1002, 250),
     (1000, 3000, 250), (5334, 16000, 250), (16384, 16000, 250)],
)
def test_gp2_rule(size_gib, iops, mib_s):
    assert gp2_limits(size_gib * GiB) == (float(iops), float(mib_s * MiB))
    # On a machine without an EBS bandwidth of its own (the lab guest), the volume's rule.
    d = base(machine={"preset": "lab-guest"}, devices={"ebs": {"preset": "aws-gp2", "size": f"{size_gib}GiB"}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert dev["iops_limit"] == iops and dev["throughput_limit_bytes_per_sec"] == mib_s * MiB


def test_the_instance_ebs_bandwidth_caps_its_volumes():
    """An i3.large reaches EBS over 425 Mbps (53.13 MB/s): every EBS volume is capped there
    below its own limit; a volume's IOPS and other devices are not touched."""
    d = base(devices={"ebs": {"preset": "aws-gp2", "size": "1000GiB"}, "ebs2": {"preset": "aws-gp3"},
                      "nvme": {"preset": "nvme-local"}})
    devs = {x["name"]: x for x in next(iter(resolve(d).values()))["devices"]}
    assert devs["ebs"]["throughput_limit_bytes_per_sec"] == 53.13e6 and devs["ebs"]["iops_limit"] == 3000
    assert devs["ebs2"]["throughput_limit_bytes_per_sec"] == 53.13e6 and devs["ebs2"]["iops_limit"] == 3000
    assert devs["nvme"]["throughput_limit_bytes_per_sec"] is None
    # A machine's own value replaces the preset's; below the volume's it binds, above not.
    d["machine"]["ebs_throughput_limit"] = "1GB/s"
    devs = {x["name"]: x for x in next(iter(resolve(d).values()))["devices"]}
    assert devs["ebs"]["throughput_limit_bytes_per_sec"] == 250 * MiB


@pytest.mark.parametrize(
    "size, tier, iops, mb_s",
    [("4GiB", "P1", 120, 25), ("100GiB", "P10", 500, 100), ("512GiB", "P20", 2300, 150), ("513GiB", "P30", 5000, 200),
     ("1TiB", "P30", 5000, 200), ("1025GiB", "P40", 7500, 250), ("32767GiB", "P80", 20000, 900)],
)
def test_azure_premium_tier_follows_the_size(size, tier, iops, mb_s):
    """Azure provisions the smallest Premium tier that holds the disk; the tier sets its
    IOPS and MB/s (the docs' table). On a machine without uncached limits (the lab guest)
    the tier's figures stand."""
    from ztwin.scenario.hardware import azure_premium_limits
    from ztwin.units import parse_size

    assert azure_premium_limits(parse_size(size)) == (tier, float(iops), mb_s * 1e6)
    d = base(machine={"preset": "lab-guest"}, devices={"ebs": {"preset": "azure-premium", "size": size}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert (dev["iops_limit"], dev["throughput_limit_bytes_per_sec"], dev["iops_size_bytes"]) == (iops, mb_s * 1e6, 256 << 10)


def azure(machine="azure-E2ds_v4", **data):
    d = base(machine={"preset": machine}, devices={"data": {"preset": "azure-premium", "size": "1TiB", **data},
                                                   "temp": {"preset": "azure-temp-2ds-v4"},
                                                   "ebs": {"preset": "aws-gp3"}})
    d["filesystem"] = {"type": "xfs", "device": "data"}
    d["database"] = {"innodb_flush_method": "O_DIRECT"}
    (cfg,) = resolve(d).values()
    return cfg, {x["name"]: x for x in cfg["devices"]}


def test_the_azure_vm_uncached_limits_cap_its_premium_disks():
    """A 2-vCPU Ddsv4/Edsv4 VM reaches Premium SSD through 3200 IOPS and 48 MB/s, below a
    P30's own 5000 and 200: a limit of the VM (io_limits) its Premium disks pass after their
    own, counting I/Os of up to 256 KiB once; its temporary disk passes the cached and temp
    storage limit; AWS volumes are not touched. No host cache unless a disk uses it."""
    cfg, devs = azure()
    assert (devs["data"]["iops_limit"], devs["data"]["throughput_limit_bytes_per_sec"]) == (5000, 200e6)
    assert devs["data"]["io_limit"] == "uncached-disk" and devs["temp"]["io_limit"] == "cached-temp"
    assert devs["ebs"]["io_limit"] is None and devs["data"]["host_cache"] is False
    assert cfg["machine"]["io_limits"] == [
        {"name": "uncached-disk", "iops_limit": 3200.0, "throughput_limit_bytes_per_sec": 48e6, "iops_size_bytes": 256 << 10},
        {"name": "cached-temp", "iops_limit": 19000.0, "throughput_limit_bytes_per_sec": 120e6, "iops_size_bytes": None},
    ]
    assert cfg["machine"]["host_cache"] is None
    assert (devs["temp"]["iops_limit"], devs["temp"]["throughput_limit_bytes_per_sec"]) == (19000, 120e6)
    assert devs["temp"]["ephemeral"] and devs["temp"]["capacity_bytes"] == 75 * GiB
    assert (devs["ebs"]["iops_limit"], devs["ebs"]["throughput_limit_bytes_per_sec"]) == (3000, 125 * MiB)
    assert cfg["machine"]["ram_bytes"] == 16 * GiB and cfg["machine"]["vcpus"] == 2
    cfg, devs = azure("azure-L8s_v2")
    assert cfg["machine"]["io_limits"] == [
        {"name": "uncached-disk", "iops_limit": 8000.0, "throughput_limit_bytes_per_sec": 160e6, "iops_size_bytes": 256 << 10}]
    assert devs["temp"]["io_limit"] is None, "the L8s_v2 preset has no cached and temp limit"


@pytest.mark.parametrize(
    "size, burst",
    [("100GiB", {"iops_limit": 3000.0, "io_credits": 5.4e6, "throughput_limit_bytes_per_sec": None, "byte_credits": None,
                 "full_at_attach": False}),
     ("250GiB", {"iops_limit": 3000.0, "io_credits": 5.4e6, "throughput_limit_bytes_per_sec": 250.0 * MiB,
                 "byte_credits": None, "full_at_attach": False}),
     ("999GiB", {"iops_limit": 3000.0, "io_credits": 5.4e6, "throughput_limit_bytes_per_sec": None, "byte_credits": None,
                 "full_at_attach": False}),
     ("1000GiB", None)],
)
def test_gp2_burst_gives_its_io_credits(size, burst):
    """burst = true: 5.4 million I/O credits, spent up to 3000 IOPS (EBS volume types, gp2);
    171-333 GiB volumes reach 250 MiB/s while credits last; 1000 GiB and more never burst
    (baseline 3000 IOPS or more). Off by default. On the lab guest (no EBS link cap)."""
    d = base(machine={"preset": "lab-guest"}, devices={"ebs": {"preset": "aws-gp2", "size": size, "burst": True}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert dev["burst"] == burst
    d["devices"]["ebs"].pop("burst")
    assert next(iter(resolve(d).values()))["devices"][0]["burst"] is None


def test_gp2_burst_throughput_stops_at_the_instance_ebs_link():
    """On an i3.large (53.13 MB/s of EBS), a 250 GiB gp2's 250 MiB/s burst throughput is cut
    to the link, which its own 128 MiB/s already is: no throughput burst; its IOPS burst stays."""
    d = base(devices={"ebs": {"preset": "aws-gp2", "size": "250GiB", "burst": True}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert dev["throughput_limit_bytes_per_sec"] == 53.13e6
    assert dev["burst"]["throughput_limit_bytes_per_sec"] is None and dev["burst"]["iops_limit"] == 3000


@pytest.mark.parametrize("size, iops, mb_s", [("4GiB", 120, 25), ("100GiB", 500, 100), ("512GiB", 2300, 150)])
def test_azure_premium_burst_credits_last_thirty_minutes(size, iops, mb_s):
    """P1-P20 burst to 3500 IOPS and 170 MB/s; each bucket holds 30 minutes at the burst
    rate above the provisioned one; full again when re-attached."""
    d = base(machine={"preset": "lab-guest"}, devices={"ebs": {"preset": "azure-premium", "size": size, "burst": True}})
    b = next(iter(resolve(d).values()))["devices"][0]["burst"]
    assert b == {"iops_limit": 3500.0, "io_credits": (3500 - iops) * 1800.0, "throughput_limit_bytes_per_sec": 170e6,
                 "byte_credits": (170 - mb_s) * 1e6 * 1800, "full_at_attach": True}


def test_azure_host_cache_readonly_shares_the_cached_and_temp_limit():
    """host_cache = "readonly": the machine gets its host cache (50 GiB on E2ds_v4), whose
    hits pass the cached and temp storage limit the temporary disk passes too."""
    cfg, devs = azure(host_cache="readonly", burst=False)
    assert devs["data"]["host_cache"] is True and devs["data"]["io_limit"] == "uncached-disk"
    hc = cfg["machine"]["host_cache"]
    assert (hc["cache_bytes"], hc["io_limit"], hc["read_latency_ns"]) == (50 * GiB, "cached-temp", 150_000)
    assert devs["temp"]["io_limit"] == "cached-temp"
    cfg, devs = azure(host_cache="none")
    assert cfg["machine"]["host_cache"] is None and devs["data"]["host_cache"] is False


def test_gp3_defaults_and_provisioning():
    d = base(machine={"preset": "lab-guest"}, devices={"ebs": {"preset": "aws-gp3"}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert dev["iops_limit"] == 3000 and dev["throughput_limit_bytes_per_sec"] == 125 * MiB
    d = base(machine={"preset": "lab-guest"},
             devices={"ebs": {"preset": "aws-gp3", "size": "100GiB", "iops_limit": 16000, "throughput_limit": "1000MiB/s"}})
    dev = next(iter(resolve(d).values()))["devices"][0]
    assert dev["iops_limit"] == 16000 and dev["throughput_limit_bytes_per_sec"] == 1000 * MiB


def test_sync_logbias_zil_and_flush_latency_resolve(load_file):
    fs = dict(BASE["filesystem"], release="2.2", sync="always", logbias="throughput",
              zil={"zfs_immediate_write_sz": "64K", "zil_slog_bulk": "1M", "zil_maxcopied": "4K"})
    sc = load_file(base(filesystem=fs, devices={"ebs": {"preset": "aws-gp2", "size": "1000GiB", "flush_latency": "2ms"}}))
    cfg = sc.variants["base"]
    z = cfg["filesystem"]
    assert (z["sync"], z["logbias"]) == ("always", "throughput")
    assert z["zil"] == {"zfs_immediate_write_sz": 65536, "zil_slog_bulk": 1 << 20, "zfs_commit_timeout_pct": None,
                        "zil_maxblocksize": None, "zil_min_commit_timeout": None, "zil_maxcopied": 4096}
    assert cfg["devices"][0]["flush_latency_ns"] == 2_000_000
    d = load_file(base()).variants["base"]
    assert (d["filesystem"]["sync"], d["filesystem"]["logbias"]) == ("standard", "latency")
    assert d["devices"][0]["flush_latency_ns"] == 0, "aws-gp2: no volatile write cache"
    # 2.1.10+ has zil_min_commit_timeout.
    fs21 = dict(BASE["filesystem"], release="2.1", zil={"zil_min_commit_timeout": "10us"})
    assert load_file(base(filesystem=fs21)).variants["base"]["filesystem"]["zil"]["zil_min_commit_timeout"] == 10_000


def test_innodb_old_blocks_time_bare_integer_is_ms():
    d = base(database={"innodb_old_blocks_time": 0})
    assert next(iter(resolve(d).values()))["database"]["innodb_old_blocks_time_ns"] == 0
    d = base(database={"innodb_old_blocks_time": "2s"})
    assert next(iter(resolve(d).values()))["database"]["innodb_old_blocks_time_ns"] == 2 * 10**9


def test_generated_pages_need_a_modelled_compressor():
    """Without compress_ratio the records are compressed as generated pages: lz4 and lzjb
    are modelled on bytes, zstd is not, and the error says what to give instead."""
    import ztwin

    d = base(
        filesystem={"type": "zfs", "vdevs": ["ebs"], "compression": "zstd", "recordsize": "16K", "ashift": 9},
        run={"warmup": "0s", "duration": "2s"},
    )
    with pytest.raises(ScenarioError, match="dataset.compress_ratio\n  generated sysbench pages compressed with compression=zstd"):
        ztwin.run(d)
    d["dataset"] = {"type": "sysbench", "compress_ratio": 2.0}
    assert ztwin.run(d).summary["variants"]["base"]["compressratio"] == pytest.approx(2.0, rel=0.05)


def test_a_scenario_that_is_not_utf8_is_a_clear_error(tmp_path):
    p = tmp_path / "s.toml"
    p.write_bytes(b"name = \"x\"\n\xff\xfe\n")
    with pytest.raises(ScenarioError, match="not UTF-8 text .byte 0xff at offset 11"):
        load_scenario(p)


def test_oltp_read_only_takes_oltp_commons_options(load_file):
    """sysbench 1.0.20's oltp_common.lua defaults; the options belong to the transaction
    tests (oltp_point_select forces point_selects = 1), so setting one elsewhere is an error."""
    d = base(workload={"type": "sysbench", "test": "oltp_read_only", "range_size": 50, "skip_trx": True})
    (cfg,) = resolve(d).values()
    assert cfg["workload"]["oltp"] == {
        "range_size": 50, "point_selects": 10, "simple_ranges": 1, "sum_ranges": 1, "order_ranges": 1,
        "distinct_ranges": 1, "range_selects": True, "skip_trx": True,
        "index_updates": 1, "non_index_updates": 1, "delete_inserts": 1, "auto_inc": True,
    }
    e = only_error(rejected(load_file, base(workload={"test": "oltp_point_select", "range_size": 10})))
    assert e["loc_str"] == "workload.range_size" and "oltp_read_only" in e["msg"]
    e = only_error(rejected(load_file, base(workload={"test": "oltp_read_only", "range_size": 70000})))
    assert e["loc_str"] == "workload.range_size" and "65535" in e["msg"]
