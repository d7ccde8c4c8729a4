"""scenarios/fio-slog.toml ("do I need a SLOG?") through the whole stack, against bands
from first principles: where each variant's commits wait, and what the pool can absorb."""

from __future__ import annotations

from pathlib import Path

import pytest

import ztwin

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
GiB = 1 << 30


@pytest.fixture(scope="module")
def slog() -> dict:
    return ztwin.run(SCENARIOS / "fio-slog.toml").summary["variants"]


def written(v: dict, dev: str) -> float:
    """Bytes a device wrote over the fio phase."""
    return v["devices"][dev]["write_mbps"] * 1e6 * v["fio"]["runtime_s"]


def test_without_a_slog_every_commit_writes_and_flushes_both_disks(slog):
    """Each commit's log block goes to both sides of the mirror and is flushed there; the
    four writers share blocks (group commit), so there are fewer blocks than commits, and
    one flush per disk per block. A spinning disk serves one request at a time: a log
    block written right after another request waits for the platter (half a revolution at
    7200 rpm is 4.17 ms on average), so a commit takes milliseconds."""
    v = slog["no-slog"]
    z, w = v["zil"], v["fio"]["write"]
    assert z["zil_commit_count"] == w["ios"] and z["zil_itx_count"] == w["ios"]
    blocks = z["zil_itx_metaslab_normal_count"]
    assert z["lwb_writes"] == 2 * blocks
    # A block without waiters (the first, empty one) defers its flushes to the next.
    assert 2 * (blocks - 2) <= z["flushes"] <= 2 * blocks
    assert w["ios"] / blocks >= 2, "the writers share log blocks"
    assert w["clat_ms"]["p50"] >= 4.17
    assert v["devices"]["nvme"]["write_iops"] == 0
    assert v["devices"]["sda"]["flushes_per_sec"] > 0


def test_a_slog_takes_the_log_off_the_disks_and_commits_at_flash_speed(slog):
    """The log's blocks and flushes go to the NVMe device; the disks see only the txgs'
    writes, no flush. Commits cost the flash write: far below a disk's positioning."""
    s, n = slog["slog"], slog["no-slog"]
    z = s["zil"]
    assert z["zil_itx_metaslab_normal_count"] == 0 and z["zil_itx_metaslab_slog_count"] > 0
    assert s["devices"]["sda"]["flushes_per_sec"] == 0 and s["devices"]["sdb"]["flushes_per_sec"] == 0
    assert s["devices"]["nvme"]["flushes_per_sec"] > 0
    assert s["fio"]["write"]["clat_ms"]["p50"] < 1.0
    assert s["fio"]["write"]["iops"] > 10 * n["fio"]["write"]["iops"]


@pytest.mark.parametrize("name", ["slog", "sync-disabled"])
def test_what_is_acknowledged_but_not_on_the_disks_fits_in_the_dirty_data(name, slog):
    """Acknowledged writes are either on the mirror (each side writes all of the data)
    or still dirty in memory, at most zfs_dirty_data_max (10% of 64 GiB, capped at 4 GiB):
    the pool's write bandwidth bounds what a SLOG (or sync=disabled) can sustain."""
    v = slog[name]
    acknowledged = v["fio"]["write"]["io_bytes"]
    assert acknowledged <= written(v, "sda") + 4 * GiB
    assert v["zfs_write"]["dirty_high_bytes"] <= 4 * GiB


def test_logbias_throughput_sends_small_sync_writes_back_to_the_disks(slog):
    """logbias=throughput logs every write WR_INDIRECT: dmu_sync writes each 16K record to
    the mirror before its commit returns, and the SLOG holds only 192-byte record headers
    (after each block's 184-byte chain header). Commits wait for the disks again."""
    v, n = slog["logbias-throughput"], slog["no-slog"]
    z, w = v["zil"], v["fio"]["write"]
    assert z["zil_itx_indirect_count"] == w["ios"] == z["dmu_sync_writes"]
    assert z["zil_itx_metaslab_slog_bytes"] <= 192 * z["zil_itx_count"] + 184 * z["zil_itx_metaslab_slog_count"]
    assert w["clat_ms"]["p50"] >= 4.17
    assert w["iops"] < 3 * n["fio"]["write"]["iops"]


def test_sync_disabled_commits_nothing(slog):
    v, s = slog["sync-disabled"], slog["slog"]
    assert v["zil"]["zil_commit_count"] == 0 and v["zil"]["flushes"] == 0
    assert all(d["flushes_per_sec"] == 0 for d in v["devices"].values())
    assert v["fio"]["write"]["iops"] >= 0.8 * s["fio"]["write"]["iops"], "with a SLOG, disabling sync buys little"
