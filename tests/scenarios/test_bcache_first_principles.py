"""bcache through the whole stack: the first-principles bound on a small XFS-on-bcache run.

When bcache serves a share f of the page reads, the volume's IOPS carry only the other
1 - f, so a disk-bound run reaches IOPS / (1 - f) page reads per second: plain XFS's
queries per second divided by 1 - f, until the vCPUs bind."""

from __future__ import annotations

import copy

import ztwin

BASE = {
    "name": "bcache-small",
    "seed": 5,
    "machine": {"preset": "aws-i3.large", "vcpus": 8},
    "devices": {"ebs": {"preset": "aws-gp2", "size": "1000GiB"}, "nvme": {"preset": "nvme-local", "size": "2GiB"}},
    "filesystem": {"type": "xfs", "device": "ebs"},
    "database": {"innodb_flush_method": "O_DIRECT", "innodb_buffer_pool_size": "128M"},
    "dataset": {"tables": 8, "table_size": 2_000_000},
    "workload": {"type": "sysbench", "test": "oltp_point_select", "threads": 8, "rand_type": "uniform"},
    "run": {"warmup": "150s", "duration": "30s", "report_interval": "30s"},
    "phases": [{"type": "cat"}, {"type": "workload"}],
    "variants": {
        "xfs": {"phases": [{"type": "workload"}]},
        "xfs-bcache": {"filesystem": {"bcache": {"cache_device": "nvme", "sequential_cutoff": 0}}},
        "xfs-bcache-2vcpu": {
            "machine": {"vcpus": 2, "cpu": {"statement_ns": 400_000}},
            "devices": {"nvme": {"size": "8GiB"}},
            "filesystem": {"bcache": {"cache_device": "nvme", "sequential_cutoff": 0}},
        },
    },
}


def test_qps_rises_by_one_over_one_minus_the_hit_share_until_the_cpus_bind():
    v = ztwin.run(copy.deepcopy(BASE)).summary["variants"]
    x, b, c = v["xfs"], v["xfs-bcache"], v["xfs-bcache-2vcpu"]
    f = b["bcache"]["read_share"]["bcache"]
    assert 0.3 < f < 0.8
    for r in (x, b):
        assert r["devices"]["ebs"]["read_iops"] > 2900  # disk bound
    assert abs(b["qps"] / (x["qps"] / (1 - f)) - 1) < 0.05
    # The cache is full, and each miss wrote its 16 KiB page to the NVMe uncompressed
    # (give or take the inserts in flight at the window's edges).
    bc = b["bcache"]
    assert bc["size"] > 1.9 * 2**30
    assert abs(bc["written"] - 16384 * bc["cache_misses"]) <= 8 * 16384
    # Almost every read hits the 8 GiB cache; 2 slow vCPUs are the bound, not the volume.
    fc = c["bcache"]["read_share"]["bcache"]
    assert fc > 0.95
    assert c["cpu_utilization"] > 0.95
    assert c["devices"]["ebs"]["read_iops"] < 0.5 * 3000
    # Each query costs at least statement_ns (400 us at speed 1.0) of one of 2 vCPUs.
    assert 0.8 * 2 / 400e-6 < c["qps"] < 2 / 400e-6
