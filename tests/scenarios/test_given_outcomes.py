"""The bundled experiments against the real outcomes given for calibration
(`ztwin.reproduce`), with bands from those outcomes where the mechanism is modelled, and
from first principles where the figure follows from it. A band here fails when the twin
loses a mechanism it has; the figures it does not reproduce yet are in the README."""

from __future__ import annotations

import pytest

from ztwin import reproduce


@pytest.fixture(scope="module")
def rows() -> dict[tuple[int, str], reproduce.Row]:
    out = {}
    for r in reproduce.reproduce((3, 6, 7, 8)):
        o = r.outcome
        out[(o.experiment, f"{o.figure} ({o.unit})")] = out[(o.experiment, o.figure)] = r
    return out


def twin(rows, exp: int, figure: str) -> float:
    r = rows[(exp, figure)]
    assert r.twin is not None, figure
    return r.twin


def test_exp6_what_occupies_the_arc(rows):
    """2.2.11 with 96 hot 128K indirect blocks stored at 44K: their dbufs hold them
    decompressed too, so metadata_size is several times the compressed 4.1 MiB (real
    20.5 MB); data and headers fill the rest of the 256 MiB as measured."""
    meta = twin(rows, 6, "randread at 3000 IOPS, end of run: metadata_size")
    assert 96 * (44 + 128) * 1024 / 1e6 <= meta <= 20.5 * 1.1
    assert 240 * 0.95 <= twin(rows, 6, "randread at 3000 IOPS, end of run: data_size") <= 252 * 1.05
    assert 5.4 * 0.95 <= twin(rows, 6, "randread at 3000 IOPS, end of run: hdr_size") <= 5.6 * 1.05


def test_lz4_ratios_follow_content_recordsize_and_ashift(rows):
    """Generated sysbench pages under lz4: a 16K page shrinks by about a fifth, which at
    ashift 12 does not save a sector of a 16K record (1.01x, 1.02x measured) but does in
    a 32K record of two pages, stored in 24K or 28K (1.21x measured; 32/28 to 32/24)."""
    assert twin(rows, 7, "lz4 on the tables (zfs get compressratio)") == pytest.approx(1.01, abs=0.03)
    assert twin(rows, 8, "recordsize 16K: lz4 compressratio") == pytest.approx(1.02, abs=0.03)
    assert 32 / 28 - 0.01 <= twin(rows, 8, "recordsize 32K: lz4 compressratio") <= 32 / 24 + 0.01


def test_exp8_32k_records_win_at_equal_read_iops(rows):
    """At the 300 IOPS throttle both record sizes read as fast; 32K reads carry more pages
    per read (two, stored smaller), so more transactions and a better ARC hit ratio
    (measured 1.22x, 43.6% against 31%)."""
    for size in ("16K", "32K"):
        assert twin(rows, 8, f"recordsize {size}: disk read IOPS") == pytest.approx(297, rel=0.03)
    assert twin(rows, 8, "throughput 32K / 16K") > 1.1
    assert twin(rows, 8, "recordsize 32K: ARC demand-data hit ratio") > twin(rows, 8, "recordsize 16K: ARC demand-data hit ratio")
    assert twin(rows, 8, "recordsize 16K: average disk read") == pytest.approx(16.1, rel=0.03)


def test_exp7_cpu_bound_rates_and_ext4_at_300_iops(rows):
    assert twin(rows, 7, "ZFS at 3000 IOPS (CPU bound): throughput") == pytest.approx(700, rel=0.05)
    assert twin(rows, 7, "ext4 at 3000 IOPS (CPU bound): throughput") == pytest.approx(1000, rel=0.05)
    assert twin(rows, 7, "ext4 at 300 IOPS: throughput") == pytest.approx(332, rel=0.1)
    # The ARC catches part of the buffer pool's misses: fewer disk reads per query on ZFS.
    assert twin(rows, 7, "ZFS at 300 IOPS: disk reads per query") < twin(rows, 7, "ext4 at 300 IOPS: disk reads per query")


def test_exp3_cache_served_runs_and_the_replay_of_random_runs(rows):
    """Laid-out files are holes: every run is served from memory, CPU bound (2458 and 2338
    MB/s measured). Random runs replay the run before them (randrepeat), so run 2 reads
    faster than run 1 (289 against 160 IOPS measured)."""
    assert twin(rows, 3, "as laid out (holes): read, mean of 5 runs") == pytest.approx(2458.4, rel=0.1)
    assert twin(rows, 3, "as laid out (holes): randread, mean of 5 runs") == pytest.approx(2337.8, rel=0.1)
    assert twin(rows, 3, "overwritten, randread-1: fio read (MB/s)") == pytest.approx(20.1, rel=0.35)
    assert twin(rows, 3, "overwritten, randread-2: fio read (IOPS)") > 1.5 * twin(rows, 3, "overwritten, randread-1: fio read (IOPS)")


def test_exp3_random_runs_keep_what_the_run_before_promoted(rows):
    """0.6 evicts on each allocation (arc_get_data_buf): a block a ghost hit brings back to
    MFU takes the MRU tail while MFU is under its target (arc_c - arc_p), so the blocks run
    2 promoted survive into run 3 and the ratio rises run after run (0.15, 0.51, 0.56, 0.63,
    0.69 measured). Each run within a quarter of the measured ratio, and rising."""
    real = [0.15, 0.51, 0.56, 0.63, 0.69]
    twin_runs = [twin(rows, 3, f"overwritten, randread-{i + 1}: ARC hit ratio") for i in range(5)]
    for t, r in zip(twin_runs, real):
        assert t == pytest.approx(r, rel=0.25), twin_runs
    assert all(a < b for a, b in zip(twin_runs, twin_runs[1:])), twin_runs


def test_buffer_pool_and_arc_overlap_as_measured(rows):
    """The buffer pool's mechanisms decide how much of its misses the ARC can catch: MariaDB
    keeps 768-1536 frames free, and a page placed in the LRU before its read goes to the
    head when the old sublist's boundary passes it while it is read; so the pool holds
    recent pages, as the ARC does, and the ARC catches a fifth of the pool's misses
    (measured 0.73-0.75 disk reads per query against 0.90 on ext4; in experiment 8 ARC
    demand-data hits of 31% and 43.6%, 1.22x the transactions at 32K)."""
    assert 0.73 * 0.95 <= twin(rows, 7, "ZFS at 300 IOPS: disk reads per query") <= 0.75 * 1.05
    assert twin(rows, 8, "recordsize 16K: ARC demand-data hit ratio") == pytest.approx(0.31, abs=0.04)
    assert twin(rows, 8, "recordsize 32K: ARC demand-data hit ratio") == pytest.approx(0.436, abs=0.04)
    assert twin(rows, 8, "throughput 32K / 16K") == pytest.approx(1.22, abs=0.08)
    # A Debian MariaDB's utf8mb4 pages with their insert undo pointers: two leaves just over
    # six 4K sectors (measured 1.21x; a real prepared table compressed by ZFS's lz4: 1.223x).
    assert twin(rows, 8, "recordsize 32K: lz4 compressratio") == pytest.approx(1.21, abs=0.04)
