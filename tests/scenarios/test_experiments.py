"""The brief's experiments, run through the whole stack, checked against bands that follow
from first principles or from the published outcomes the brief states. Runs are shortened
where the band does not depend on length."""

from __future__ import annotations

from pathlib import Path

import pytest

import ztwin

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def run(name: str, variants=None, **run_overrides) -> dict:
    overrides = {"run": run_overrides} if run_overrides else None
    sc = ztwin.load_scenario(SCENARIOS / name, overrides=overrides)
    return ztwin.run(sc, variants).summary["variants"]


def reads_per_query(v: dict, device: str) -> float:
    return v["devices"][device]["read_iops"] / v["qps"]


@pytest.fixture(scope="module")
def exp1() -> dict:
    return run("exp1-arc-sizing.toml")


def test_exp1_xfs_is_io_bound_at_3000_iops_with_one_read_per_query(exp1):
    x = exp1["xfs"]
    assert 2970 <= x["devices"]["ebs"]["read_iops"] <= 3000 * 1.001
    # A 2.5 GiB pool holds every non-leaf page (330 x ~115 pages), so each query misses
    # at most its leaf: one 16K read.
    assert 0.95 <= reads_per_query(x, "ebs") <= 1.0 + 1e-9
    assert x["qps"] <= 3000 / 0.95


def test_exp1_zfs_with_1g_arc_is_well_below_xfs(exp1):
    z, x = exp1["zfs-arc-1g"], exp1["xfs"]
    assert z["devices"]["ebs"]["read_iops"] >= 2970  # also IO bound
    # 6 GB of indirect blocks against 1 GB of ARC: L1 blocks miss, extra reads per query.
    assert z["arc"]["demand_metadata_misses"] > 0.2 * z["arc"]["demand_data_misses"]
    assert reads_per_query(z, "ebs") > 1.2
    assert z["qps"] < 0.8 * x["qps"]


def test_exp1_zfs_with_arc_for_all_metadata_reads_one_record_per_query(exp1):
    z, x = exp1["zfs-arc-meta"], exp1["xfs"]
    a = z["arc"]
    assert a["demand_metadata_misses"] < 0.01 * a["demand_data_misses"]
    assert reads_per_query(z, "ebs") <= 1.0 + 1e-9
    assert z["qps"] >= 0.97 * x["qps"]


def test_arcstats_follow_the_release(exp1):
    """0.8 reports arc_p and the arc_meta limits; 2.2 (PR #14359) replaced them by meta, pd, pm."""
    a = exp1["zfs-arc-1g"]["arc"]
    assert {"p", "arc_meta_used", "arc_meta_limit"} <= set(a) and not {"meta", "pd", "pm"} & set(a)
    assert a["arc_meta_limit"] == 3 * 2**30 // 4  # 75% of zfs_arc_max
    b = run("exp7-lab-sysbench.toml", ["zfs-300"], warmup="0s", duration="5s")["zfs-300"]["arc"]
    assert {"meta", "pd", "pm"} <= set(b) and not {"p", "arc_meta_limit"} & set(b)


def test_exp7_calibration_holds():
    """The lab guest's two calibrated costs reproduce the two CPU-bound rates."""
    v = run("exp7-lab-sysbench.toml", ["ext4-3000", "zfs-3000"])
    assert abs(v["ext4-3000"]["qps"] / 1000 - 1) < 0.05
    assert abs(v["zfs-3000"]["qps"] / 700 - 1) < 0.05
    for name in ("ext4-3000", "zfs-3000"):
        assert v[name]["cpu_utilization"] > 0.95, name
        assert v[name]["devices"]["disk"]["read_iops"] < 2900, name


def test_exp7_at_300_iops_the_disk_binds():
    v = run("exp7-lab-sysbench.toml", ["ext4-300", "zfs-300"])
    e, z = v["ext4-300"], v["zfs-300"]
    for d in (e, z):
        assert d["devices"]["disk"]["read_iops"] >= 297
        assert d["cpu_utilization"] < 0.9  # the vCPUs are not what binds
    # ext4 with O_DIRECT reads one page per buffer-pool miss; ZFS's ARC (256 MiB of a
    # 966 MB dataset) serves some of those misses from memory.
    assert e["devices"]["disk"]["read_iops"] * e["window_s"] == pytest.approx(e["innodb"]["pages_read"], rel=0.01)
    assert z["qps"] > e["qps"]


def test_exp8_32k_records_read_their_stored_bytes_at_the_same_iops():
    v = run("exp8-lab-recordsize.toml", warmup="30s", duration="60s")
    a, b = v["rs16k"]["devices"]["disk"], v["rs32k"]["devices"]["disk"]
    assert a["read_iops"] == pytest.approx(300, rel=0.01) and b["read_iops"] == pytest.approx(300, rel=0.01)
    # Each read carries one record as stored: at ashift 12 a 16K page stays 16K (lz4
    # does not save a sector), a 32K record of two pages is stored smaller, so 32K reads
    # carry 2 x (16K ratio) / (32K ratio) the bytes (measured: 1.66).
    ra, rb = v["rs16k"]["compressratio"], v["rs32k"]["compressratio"]
    assert 1.0 <= ra < 1.05 and 1.1 < rb < 1.5
    assert b["read_mbps"] / a["read_mbps"] == pytest.approx(2.0 * ra / rb, rel=0.05)
    for name in ("rs16k", "rs32k"):
        # select_random_points: 10 values of k, each matching Poisson(1) rows.
        assert 8 <= v[name]["rows"] / v[name]["queries"] <= 12


def test_exp5_runs_both_recordsizes():
    v = run("exp5-recordsize.toml", warmup="10s", duration="20s")
    assert set(v) == {"rs16k", "rs32k"}
    for d in v.values():
        assert d["qps"] > 0 and d["arc"]["misses"] > 0


def test_exp7_l2arc_after_two_cats_serves_reads_from_the_cache_disk():
    """With the 1 GB of data on an 8 GiB unthrottled cache disk after two cat passes, the
    throttled pool disk is hardly read and the slow vCPUs bind, as at 3000 IOPS without it."""
    v = run("exp7-lab-sysbench.toml", ["zfs-300", "zfs-300-l2arc", "zfs-3000"])
    a, b = v["zfs-300"], v["zfs-300-l2arc"]
    assert [p["type"] for p in b["phases"]] == ["cat", "workload"]
    assert b["phases"][0]["bytes_read"] == 2 * 8 * ztwin._core.sysbench_table_bytes(500_000, 16384)
    assert b["devices"]["disk"]["read_iops"] < 0.01 * b["devices"]["l2"]["read_iops"]
    assert b["l2arc"]["read_share"]["pool"] < 0.01
    assert b["l2arc"]["l2_size"] > 0 and b["l2arc"]["l2_hdr_size"] > 0
    assert b["cpu_utilization"] > 0.95
    assert b["qps"] > 1.3 * a["qps"]
    assert b["qps"] == pytest.approx(v["zfs-3000"]["qps"], rel=0.05)


# ---- experiment 1's L2ARC half at reduced scale -----------------------------------------
#
# exp1-l2arc.toml shrunk so a run takes seconds: 16 of the 330 tables (~39 GB), a 128 MiB
# buffer pool, the same machine with 2 or 4 GiB of RAM (0.8 ignores a zfs_arc_max below
# c_min = RAM/32). The cat warm-up and the 0.8 ARC/L2ARC mechanisms are the full ones.

EXP1_SMALL_TABLES = 16


def exp1_l2arc_small(
    ram: str, arc_max: str, meta_limit: str, nvme_size: str | None = None, prefetch: bool = True
) -> dict:
    import tomllib

    raw = tomllib.loads((SCENARIOS / "exp1-l2arc.toml").read_text())
    raw["variants"] = {"zfs-l2arc": {}}
    overrides: dict = {
        # The disk-bound regime these tests reason about: a statement costs the reference
        # 60 us (the calibrated 299 us would make the 2 vCPUs bind first at ~5000 qps).
        "machine": {"ram": ram, "cpu": {"statement_ns": 60_000}},
        "dataset": {"tables": EXP1_SMALL_TABLES},
        "filesystem": {
            "arc": {"zfs_arc_max": arc_max, "zfs_arc_meta_limit": meta_limit},
            "zfetch": {"zfs_prefetch_disable": not prefetch},
        },
        "database": {"innodb_buffer_pool_size": "128M"},
        "run": {"warmup": "10s", "duration": "30s", "report_interval": "10s"},
    }
    if nvme_size:
        overrides["devices"] = {"nvme": {"size": nvme_size}}
    sc = ztwin.load_scenario(raw, overrides=overrides)
    return ztwin.run(sc).summary["variants"]["zfs-l2arc"]


def exp1_data_bytes() -> int:
    return EXP1_SMALL_TABLES * ztwin._core.sysbench_table_bytes(10_000_000, 16384)


def test_exp1_l2arc_share_f_gives_iops_over_one_minus_f():
    """With the ARC big enough for the indirect blocks and the L2 headers (1 GiB) and a
    16 GiB cache device, the ring keeps what the feed took of the cat (the vdev queue merges
    the cat's prefetches, so it reads at the volume's throughput cap, faster than the feed
    writes: about a quarter of the data): a share f of the uniformly read records is on
    the NVMe, the rest costs one EBS read each, so the EBS-bound rate is about
    3000 / (1 - f) (the ARC and buffer pool hold ~2% more)."""
    v = exp1_l2arc_small("4GiB", "1G", "960M", "16GiB")
    l2 = v["l2arc"]
    f = l2["l2_size"] / exp1_data_bytes()
    assert 0.1 < f < 0.8
    assert v["devices"]["ebs"]["read_iops"] == pytest.approx(3000, rel=0.01)
    assert v["cpu_utilization"] < 0.9
    assert v["qps"] == pytest.approx(3000 / (1 - f), rel=0.06)
    # The ring wraps during the benchmark too: the feed keeps writing.
    assert l2["l2_write_bytes"] > 0 and v["devices"]["nvme"]["write_iops"] > 0


def test_exp1_l2arc_headers_cap_the_l2_near_arc_c():
    """0.8 counts each L2-only header (96 bytes) in arc_size and arc_meta_used and cannot
    evict it: with a 128 MiB ARC the L2 stops growing at about arc_c / 96 blocks of 16K
    (about 22 GB), far below the 475 GB device, and the ARC keeps no data beyond what its
    dbufs hold. This holds
    when every block comes in by a demand read (prefetch off): a new buffer is evicted
    before the feed reaches it. (A prefetched buffer is protected for
    zfs_arc_min_prefetch_ms, a window in which the feed can still write it.)"""
    v = exp1_l2arc_small("2GiB", "128M", "120M", prefetch=False)
    l2, arc = v["l2arc"], v["arc"]
    c = arc["c"]
    assert c == 128 * 2**20
    assert 0.9 * c <= l2["l2_hdr_size"] <= 1.1 * c
    only = l2["l2_hdr_size"] / 96
    assert only * 16384 <= l2["l2_size"] <= 1.1 * only * 16384
    assert l2["l2_asize"] < 0.1 * 475e9
    # No data but the blocks the dbuf cache (arc_c >> 5) holds, each twice: the header's
    # buffer and the dbuf's copy (cache::arc bufs.rs).
    assert arc["data_size"] <= 2 * (c >> 5)
    f = l2["l2_size"] / exp1_data_bytes()
    assert v["devices"]["ebs"]["read_iops"] == pytest.approx(3000, rel=0.01)
    # At most what the L2 share allows (tables whose indirect blocks missed the L2 pay
    # an extra EBS read), clearly more than without the L2.
    assert 1.5 * 3000 < v["qps"] <= 1.03 * 3000 / (1 - f)
