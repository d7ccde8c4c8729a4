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
