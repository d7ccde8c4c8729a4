"""bcache in scenarios: [filesystem.bcache] under XFS/ext4, its defaults, its errors."""

from __future__ import annotations

import copy

import pytest

import ztwin
from ztwin import ScenarioError, resolve

BASE = {
    "name": "bc",
    "machine": {"preset": "aws-i3.large"},
    "devices": {"ebs": {"preset": "aws-gp2", "size": "100GiB"}, "nvme": {"preset": "nvme-local"}},
    "filesystem": {"type": "xfs", "device": "ebs", "bcache": {"cache_device": "nvme"}},
    "database": {"innodb_flush_method": "O_DIRECT"},
    "dataset": {"type": "sysbench"},
    "workload": {"type": "sysbench", "test": "oltp_point_select"},
}


def scenario(**fs):
    d = copy.deepcopy(BASE)
    d["filesystem"]["bcache"].update(fs)
    return d


def test_defaults_are_the_kernels_and_make_bcaches():
    b = resolve(BASE)["base"]["filesystem"]["bcache"]
    assert b == {
        "cache_device": "nvme",
        "cache_mode": "writethrough",
        "sequential_cutoff": 4 << 20,
        "bucket_size": 512 << 10,
        "cache_replacement_policy": "lru",
        "readahead": 0,
        "congested_read_threshold_us": 2000,
        "congested_write_threshold_us": 20000,
        "writeback_percent": 10,
        "writeback_delay": 30,
        "writeback_running": True,
        "writeback_rate_update_seconds": 5,
        "writeback_rate_p_term_inverse": 40,
        "writeback_rate_i_term_inverse": 10000,
        "writeback_rate_minimum": 8,
        "kernel": "4.15",
    }


def test_ext4_takes_bcache_too_and_sizes_parse():
    d = scenario(sequential_cutoff="0", bucket_size="1M", cache_mode="writeback")
    d["filesystem"]["type"] = "ext4"
    b = resolve(d)["base"]["filesystem"]["bcache"]
    assert (b["sequential_cutoff"], b["bucket_size"], b["cache_mode"]) == (0, 1 << 20, "writeback")


@pytest.mark.parametrize(
    "change, loc, fragment",
    [
        ({"cache_device": "ssd"}, "filesystem.bcache.cache_device", "names unknown device"),
        ({"cache_device": "ebs"}, "filesystem.bcache.cache_device", "must differ from filesystem.device"),
        ({"bucket_size": "96K"}, "filesystem.bcache.bucket_size", "power of two from 4K to 16M"),
        ({"bucket_size": "1G"}, "filesystem.bcache.bucket_size", "power of two from 4K to 16M"),
        ({"cache_mode": "writeahead"}, "filesystem.bcache.cache_mode", "'writethrough', 'writeback', 'writearound' or 'none'"),
        ({"cache_replacement_policy": "arc"}, "filesystem.bcache.cache_replacement_policy", "'lru', 'fifo' or 'random'"),
        ({"sequential_cutoff": "8G"}, "filesystem.bcache.sequential_cutoff", "unsigned int"),
        ({"congested_read_threshold_us": -1}, "filesystem.bcache.congested_read_threshold_us", "greater than or equal to 0"),
        ({"sequential_cuttoff": 0}, "filesystem.bcache.sequential_cuttoff", "unknown key"),
        ({"writeback_percent": 41}, "filesystem.bcache.writeback_percent", "less than or equal to 40"),
        ({"writeback_rate_update_seconds": 0}, "filesystem.bcache.writeback_rate_update_seconds", "greater than or equal to 1"),
        ({"writeback_rate_p_term_inverse": 0}, "filesystem.bcache.writeback_rate_p_term_inverse", "greater than or equal to 1"),
        ({"writeback_rate_minimum": 0}, "filesystem.bcache.writeback_rate_minimum", "greater than or equal to 1"),
        ({"kernel": "6.1"}, "filesystem.bcache.kernel", "'4.15' or '5.10'"),
    ],
)
def test_rejection(change, loc, fragment):
    with pytest.raises(ScenarioError) as e:
        resolve(scenario(**change))
    errs = {x["loc_str"]: x["msg"] for x in e.value.errors()}
    assert loc in errs, str(e.value)
    assert fragment in errs[loc], str(e.value)


def test_a_cache_device_needs_a_size_and_enough_buckets():
    d = scenario()
    d["devices"]["nvme"] = {"preset": "hdd-7200"}  # no size
    with pytest.raises(ScenarioError, match="devices.nvme.size") as e:
        resolve(d)
    assert "needs a size" in str(e.value)
    d = scenario(bucket_size="16M")
    d["devices"]["nvme"]["size"] = "4GiB"  # 256 buckets
    with pytest.raises(ScenarioError, match="more than 512"):
        resolve(d)


def test_summary_reports_bcache_with_its_sysfs_counters():
    d = scenario(sequential_cutoff="0")
    d["dataset"] = {"tables": 2, "table_size": 100_000}
    d["run"] = {"warmup": "1s", "duration": "2s"}
    v = ztwin.run(d).summary["variants"]["base"]
    b = v["bcache"]
    for k in ("hits", "misses", "bypassed", "size", "cache_hits", "cache_misses", "cache_bypass_hits",
              "cache_bypass_misses", "cache_hit_ratio", "read_share"):
        assert k in b
    assert b["hits"] + b["misses"] > 0 and b["size"] > 0
    assert b["hits"] == b["cache_hits"] + b["cache_bypass_hits"]
    assert abs(sum(b["read_share"].values()) - 1) < 1e-9


def test_writeback_under_a_write_load_reports_dirty_data_and_the_rate():
    """ext4 on bcache in writeback mode under sysbench oltp_update_index: InnoDB's O_DIRECT
    page writes are REQ_SYNC writeback writes (dirty in the cache), the writeback thread
    copies them to the backing device at the controller's rate, and fsync's flushes reach
    both devices (cached_dev_nodata)."""
    d = scenario(sequential_cutoff="0", cache_mode="writeback", writeback_delay=5)
    d["filesystem"]["type"] = "ext4"
    d["devices"]["nvme"]["size"] = "4GiB"
    d["dataset"] = {"tables": 2, "table_size": 100_000}
    d["workload"] = {"type": "sysbench", "test": "oltp_update_index", "threads": 4}
    d["run"] = {"warmup": "1s", "duration": "20s"}
    v = ztwin.run(d).summary["variants"]["base"]
    b = v["bcache"]
    for k in ("dirty_data", "writeback_rate", "writeback_rate_target", "writeback_bytes",
              "writeback_keys_done", "writeback_keys_failed", "cache_hits", "cache_misses", "bypassed"):
        assert k in b, sorted(b)
    assert b["dirty_data"] > 0
    assert b["writeback_rate"] >= 8 * 512
    # The target is writeback_percent (10%) of the cache device's buckets.
    assert b["writeback_rate_target"] == (4 << 30) // (512 << 10) * (512 << 10) // 10 // 512 * 512
    assert b["written"] > 0 and b["writeback_bytes"] > 0 and b["backing_write_bytes"] >= b["writeback_bytes"]
    devs = v["devices"]
    assert devs["nvme"]["flushes_per_sec"] > 0 and devs["ebs"]["flushes_per_sec"] > 0
    assert devs["nvme"]["flushes_per_sec"] == pytest.approx(devs["ebs"]["flushes_per_sec"], rel=0.05)


def test_writethrough_leaves_nothing_dirty_and_reports_no_writeback():
    d = scenario(sequential_cutoff="0")
    d["filesystem"]["type"] = "ext4"
    d["devices"]["nvme"]["size"] = "4GiB"
    d["dataset"] = {"tables": 2, "table_size": 100_000}
    d["workload"] = {"type": "sysbench", "test": "oltp_update_index", "threads": 4}
    d["run"] = {"warmup": "1s", "duration": "5s"}
    b = ztwin.run(d).summary["variants"]["base"]["bcache"]
    assert b["dirty_data"] == 0 and "writeback_rate" not in b
