"""Experiment 2 (Percona Server 5.7 on ext4 over md RAID10 and on ZoL 0.7 mirrors, six SAS
drives behind a battery-backed controller) through the whole stack, shortened: the full
data set and buffer pool, 20 s of warm-up and 20 s of each test. The measured tps and
latencies are held out; the checks are mechanisms and first principles."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import ztwin

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "exp2-sysbench-baremetal.toml"
DRIVES = ("sda", "sdb", "sdc", "sdd", "sde", "sdf")


@pytest.fixture(scope="module")
def exp2() -> dict:
    d = tomllib.loads(SCENARIO.read_text())
    d["run"] = {"warmup": "0s", "duration": "20s", "report_interval": "10s"}
    d["phases"][0]["duration"] = "20s"
    return ztwin.run(d).summary["variants"]


def phase(v: dict, name: str) -> dict:
    (p,) = [p for p in v["phases"] if p["name"] == name]
    return p


def test_every_variant_runs_its_warm_up_and_its_test(exp2):
    assert len(exp2) == 10
    for name, v in exp2.items():
        w, b = phase(v, "warm-up"), phase(v, "benchmark")
        assert w["tps"] > 0 and b["tps"] > 0, name
        assert w["innodb"].get("Innodb_rows_updated", 0) == 0, name
        updates = b["innodb"].get("Innodb_rows_updated", 0)
        assert (updates > 0) == (not name.endswith("read-only")), (name, updates)


def test_the_published_zfs_logs_every_sync_write_indirect_into_128k_records(exp2):
    """logbias=throughput: every sync write's itx is WR_INDIRECT and its record is written
    by dmu_sync before the commit returns; the redo and binary logs live in a 128K
    dataset, so each small log write costs a whole 128K record (ZFS issues larger writes)."""
    z = phase(exp2["zfs-update-index"], "benchmark")["zil"]
    assert z["zil_itx_indirect_count"] > 0
    assert z["zil_itx_copied_count"] == 0 and z["zil_itx_needcopy_count"] == 0
    assert z["dmu_sync_bytes"] / z["dmu_sync_writes"] > 64 << 10


def test_logbias_latency_copies_small_sync_writes_into_the_log(exp2):
    z = phase(exp2["zfs-latency-update-index"], "benchmark")["zil"]
    assert z["zil_itx_copied_count"] + z["zil_itx_needcopy_count"] > 0


def test_a_slog_takes_the_intent_log_off_the_mirrors(exp2):
    s = phase(exp2["zfs-slog-update-index"], "benchmark")
    assert s["zil"]["zil_itx_metaslab_slog_bytes"] > 0 and s["zil"]["zil_itx_metaslab_normal_bytes"] == 0
    assert s["devices"]["slog"]["write_iops"] > 0


def test_doublewrite_copies_every_flushed_page_once(exp2):
    on = phase(exp2["zfs-doublewrite-update-index"], "benchmark")["innodb"]
    assert on["Innodb_dblwr_pages_written"] == on["Innodb_buffer_pool_pages_flushed"]
    off = phase(exp2["zfs-update-index"], "benchmark")["innodb"]
    assert off["Innodb_dblwr_pages_written"] == 0


def test_every_drive_works_under_both_filesystems(exp2):
    """ext4's md RAID10 (near-2, 512K chunks) and ZFS's three mirrors both spread over the
    six drives and write every block twice."""
    for name in ("ext4-update-index", "zfs-update-index"):
        devs = phase(exp2[name], "benchmark")["devices"]
        for d in DRIVES:
            assert devs[d]["write_iops"] > 0, (name, d)


def test_zfs_issues_larger_writes_in_the_update_runs(exp2):
    """One of the write-up's directions, in the twin's terms: ZFS issues larger writes (a
    drive's average write request: every commit's dmu_sync writes a whole 128K record of
    the log dataset, and the txgs aggregate; ext4's writes are the 16K pages, the redo
    log's blocks and the journal's). The other, ZFS reading less during updates, needs
    the warm buffer pool of the published runs (it holds after 10 minutes of warm-up,
    not after this test's 20 s): not checked here."""
    ext4 = phase(exp2["ext4-update-index"], "benchmark")["devices"]
    zfs = phase(exp2["zfs-update-index"], "benchmark")["devices"]
    for d in DRIVES:
        assert zfs[d]["write_kib_per_io"] > 2 * ext4[d]["write_kib_per_io"], (d, zfs[d], ext4[d])
