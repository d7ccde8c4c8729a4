"""Experiment 9 (the lab's write runs, MariaDB 10.11 on OpenZFS 2.3.2 and ext4) through the
whole stack, against bands from first principles: the measured outcomes are held out."""

from __future__ import annotations

from pathlib import Path

import pytest

import ztwin

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="module")
def exp9() -> dict:
    return ztwin.run(SCENARIOS / "exp9-lab-write.toml").summary["variants"]


def phase(v: dict, name: str) -> dict:
    (p,) = [p for p in v["phases"] if p["name"] == name]
    return p


def test_every_variant_runs_both_tests(exp9):
    assert len(exp9) == 11
    for name, v in exp9.items():
        for ph in ("update-index", "read-write"):
            p = phase(v, ph)
            assert p["qps"] > 0, (name, ph)
            assert p["innodb"]["Innodb_rows_updated"] > 0, (name, ph)
        rw = phase(v, "read-write")
        # oltp_read_write: 20 queries a transaction (BEGIN, 10 point selects, 4 ranges,
        # 2 updates, a delete and an insert, COMMIT).
        assert rw["qps"] / rw["tps"] == pytest.approx(20.0)


def test_the_throttle_caps_what_reaches_the_disk(exp9):
    """QEMU's throttle: reads and writes together at most iops_limit a second (a request
    over 256 KiB counts as several, so fewer requests may pass)."""
    for name, limit in (("ext4", 300), ("zfs-latency", 300), ("ext4-iops100", 100), ("zfs-latency-iops100", 100)):
        for ph in ("update-index", "read-write"):
            d = phase(exp9[name], ph)["devices"]["disk"]
            assert d["read_iops"] + d["write_iops"] <= limit * 1.01, (name, ph, d)


def test_more_iops_never_fewer_transactions(exp9):
    for fs in ("ext4", "zfs-latency"):
        low = exp9[f"{fs}-iops100"]
        mid = exp9[fs]
        high = exp9[f"{fs}-iops3000"]
        for ph in ("update-index", "read-write"):
            t = [phase(v, ph)["tps"] for v in (low, mid, high)]
            assert t[0] <= t[1] * 1.05 and t[1] <= t[2] * 1.05, (fs, ph, t)


def test_a_slog_takes_the_intent_log_off_the_pool(exp9):
    z = phase(exp9["zfs-slog"], "update-index")["zil"]
    assert z["zil_itx_metaslab_slog_bytes"] > 0 and z["zil_itx_metaslab_normal_bytes"] == 0
    n = phase(exp9["zfs-latency"], "update-index")["zil"]
    assert n["zil_itx_metaslab_normal_bytes"] > 0 and n["zil_itx_metaslab_slog_bytes"] == 0


def test_logbias_throughput_logs_every_sync_write_indirect(exp9):
    z = phase(exp9["zfs-throughput"], "update-index")["zil"]
    assert z["zil_itx_indirect_count"] > 0
    assert z["zil_itx_copied_count"] == 0 and z["zil_itx_needcopy_count"] == 0


def test_doublewrite_off_copies_nothing_and_on_copies_every_flushed_page(exp9):
    off = phase(exp9["zfs-nodoublewrite"], "update-index")["innodb"]
    assert off["Innodb_dblwr_pages_written"] == 0 and off["Innodb_buffer_pool_pages_flushed"] > 0
    on = phase(exp9["zfs-latency"], "update-index")["innodb"]
    assert on["Innodb_dblwr_pages_written"] == on["Innodb_buffer_pool_pages_flushed"] > 0


def test_mariadb_writes_its_redo_buffered_on_zfs_and_syncs_it_per_group(exp9):
    """No Innodb_os_log_fsyncs in 10.11: the log's fdatasyncs are reported apart; group
    commit makes at most one log write and one fdatasync per commit (a flush of what an
    earlier write left unflushed needs no write of its own)."""
    for name in ("ext4", "zfs-latency"):
        i = phase(exp9[name], "update-index")["innodb"]
        assert "Innodb_os_log_fsyncs" not in i
        assert 0 < i["Innodb_log_writes"] <= i["commits_with_redo"]
        assert 0 < i["log_fdatasyncs"] <= i["commits_with_redo"]
