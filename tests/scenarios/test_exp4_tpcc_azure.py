"""Experiment 4 (sysbench-tpcc on an Azure D2ds_v4: the temporary disk, ZFS on Premium SSD,
its L2ARC on the temporary disk, ext4 with bcache there, plain ext4) through the whole
stack, shortened: the full 1000-warehouse data set, each hour cut to a minute. The
published rates are held out; the checks are mechanisms and first principles."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import ztwin

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "exp4-tpcc-azure.toml"
VARIANTS = ("ephemeral", "zfs-premium", "zfs-l2arc", "ext4-bcache", "ext4")


def shortened(variants=VARIANTS, seconds: int = 60) -> dict:
    d = tomllib.loads(SCENARIO.read_text())
    d["run"] = {"warmup": "0s", "duration": f"{seconds}s", "report_interval": "10s"}
    d["variants"] = {k: v for k, v in d["variants"].items() if k in variants}
    return d


@pytest.fixture(scope="module")
def exp4() -> dict:
    return ztwin.run(shortened()).summary["variants"]


def phase(v: dict, name: str) -> dict:
    (p,) = [p for p in v["phases"] if p["name"] == name]
    return p


def test_the_scenario_names_the_issues_variants_and_phases():
    d = tomllib.loads(SCENARIO.read_text())
    assert set(VARIANTS) <= set(d["variants"])
    assert [p["name"] for p in d["phases"]] == ["hour-1", "hour-2"]
    assert d["run"]["duration"] == "3600s"


def test_every_variant_runs_both_hours_of_all_five_transactions(exp4):
    assert set(exp4) == set(VARIANTS)
    for name, v in exp4.items():
        for ph in ("hour-1", "hour-2"):
            p = phase(v, ph)
            t = p["tpcc"]
            assert p["tps"] > 0, (name, ph)
            for kind in ("new_order", "payment", "order_status", "delivery", "stock_level"):
                assert t[kind] > 0, (name, ph, kind)
            assert p["latency_ms"]["p95"] >= p["latency_ms"]["p50"] > 0, (name, ph)


def test_the_vms_uncached_cap_bounds_the_premium_disk(exp4):
    """Standard_D2ds_v4: 3200 uncached IOPS and 48 MBps over its data disks (an I/O of up to
    256 KiB counts once), below the P30's 5000 IOPS and 200 MB/s."""
    for name, v in exp4.items():
        for ph in ("hour-1", "hour-2"):
            d = phase(v, ph)["devices"].get("premium")
            if d is None:
                continue
            assert d["read_iops"] + d["write_iops"] <= 3200 * 1.02, (name, ph, d)
            assert d["read_mbps"] + d["write_mbps"] <= 48 * 1.02, (name, ph, d)


def test_the_ephemeral_variant_keeps_everything_on_the_temporary_disk(exp4):
    p = phase(exp4["ephemeral"], "hour-2")
    assert "premium" not in p["devices"] or p["devices"]["premium"]["read_iops"] == 0
    t = p["devices"]["temp"]
    assert t["read_iops"] > 0 and t["write_iops"] > 0
    assert t["read_iops"] + t["write_iops"] <= 19000 * 1.02
    assert t["read_mbps"] + t["write_mbps"] <= 120 * 1.02


def test_the_l2arc_fills_from_reads_and_writes_and_serves_reads_in_the_second_hour(exp4):
    """The feed writes the ARC lists' tails to the temporary disk, rewritten blocks (the
    txg's arc_write makes them L2-eligible too) among them; a block rewritten later loses
    its copy, so the device holds less than the feed wrote."""
    v = exp4["zfs-l2arc"]
    h1, h2 = phase(v, "hour-1")["l2arc"], phase(v, "hour-2")["l2arc"]
    assert h1["l2_write_bytes"] > 0 and h2["l2_hits"] > 0
    assert h2["l2_asize"] < h1["l2_write_bytes"] + h2["l2_write_bytes"]
    assert h2["read_share"]["l2arc"] > h1["read_share"]["l2arc"]
    # Its writes reach the temporary disk, within its 120 MBps.
    t = phase(v, "hour-2")["devices"]["temp"]
    assert 0 < t["write_mbps"] <= 120 * 1.02
    # No L2ARC, no L2 section, no cache device traffic.
    assert "l2arc" not in phase(exp4["zfs-premium"], "hour-2")


def test_bcache_in_writethrough_writes_every_write_to_the_premium_disk(exp4):
    """make-bcache's default mode: a write goes to the backing device and (not bypassed) to
    the cache; the cache serves reads. ext4 alone issues the same kind of writes."""
    p = phase(exp4["ext4-bcache"], "hour-2")
    b = p["bcache"]
    assert b["cache_hits"] + b["cache_misses"] > 0
    assert p["devices"]["premium"]["write_iops"] > 0 and p["devices"]["temp"]["write_iops"] > 0
    assert b.get("dirty_data", 0) == 0


def test_a_warmer_cache_never_costs_premium_reads(exp4):
    """Every read the L2ARC or bcache serves is one the Premium disk does not: per
    transaction, the cached variants read no more from it than the uncached ones."""
    def reads_per_tx(name):
        p = phase(exp4[name], "hour-2")
        return p["devices"]["premium"]["read_iops"] / p["tps"]

    assert reads_per_tx("zfs-l2arc") < reads_per_tx("zfs-premium")
    assert reads_per_tx("ext4-bcache") < reads_per_tx("ext4")


def test_a_moved_vm_recreates_its_l2arc_and_tar_warms_it():
    """After a move the blank temporary disk is a new, empty L2ARC (zpool remove, zpool
    add); tar's read of the data directory feeds it at the Premium disk's pace (the VM's
    48 MBps cap), so the first hour starts with L2 hits instead of an empty cache device."""
    v = ztwin.run(shortened(("zfs-l2arc-moved", "zfs-l2arc"), 30)).summary["variants"]
    moved = v["zfs-l2arc-moved"]["phases"]
    assert [p["name"] for p in moved] == ["vm moved", "tar c of the data directory", "hour-1", "hour-2"]
    assert moved[0]["cache_device"]["state"] == "recreated"
    tar = moved[1]
    assert tar["devices"]["premium"]["read_mbps"] <= 48 * 1.02
    assert tar["devices"]["temp"]["write_mbps"] > 0.5 * tar["devices"]["premium"]["read_mbps"]
    cold = phase(v["zfs-l2arc"], "hour-1")
    warm = moved[2]
    assert warm["l2arc"]["l2_hits"] > 10 * max(cold["l2arc"]["l2_hits"], 1)
    assert warm["tps"] > cold["tps"]
