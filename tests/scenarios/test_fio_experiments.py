"""Experiments 3 and 6 (fio) through the whole stack, against bands from first principles:
what fio left in the files decides what the disks do."""

from __future__ import annotations

from pathlib import Path

import pytest

import ztwin

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
GiB = 1 << 30


@pytest.fixture(scope="module")
def exp3() -> dict:
    return ztwin.run(SCENARIOS / "exp3-fio-compression.toml").summary["variants"]


@pytest.fixture(scope="module")
def exp6() -> dict:
    return ztwin.run(SCENARIOS / "exp6-lab.toml").summary["variants"]


def runs(v: dict) -> dict[str, dict]:
    """The read runs (write passes are timed phases too, but not runs)."""
    return {p["name"]: p for p in v["phases"] if p["type"] == "fio" and p["fio"]["read"]["ios"]}


def disk_iops(p: dict) -> float:
    return sum(d["read_iops"] for d in p["devices"].values())


def disk_read_bytes(p: dict) -> float:
    return sum(d["read_mbps"] for d in p["devices"].values()) * 1e6 * (p["end_s"] - p["start_s"])


def test_exp3_reports_each_run_as_a_phase(exp3):
    for v in exp3.values():
        assert list(runs(v)) == [f"read-{k}" for k in range(1, 6)] + [f"randread-{k}" for k in range(1, 6)]
        for p in runs(v).values():
            assert {"iops", "bw_mbps", "clat_ms"} <= set(p["fio"]["read"]) and "arc" in p


def test_exp3_laid_out_files_are_holes_read_without_disks_or_arc(exp3):
    """fio 2.0.x lays files out with zeros: on an lzjb dataset every record and indirect
    block is a hole. Every run reads the 36 GiB from memory alone (well within the 60 s
    runtime cap), at the rate one job's CPU allows. Release 0.6 frees a hole's dbuf (an
    anonymous buffer) at zero holds, so each 128K read walks the whole tree again: four
    levels (2304 L1s, 18 L2s, one L3 under the dnode's single block pointer), each a
    block lookup and a zero fill (128K and three 16K indirect blocks), then a system call
    and a copy of 128K out, at the speeds of the scenario's machine.cpu."""
    v = exp3["as-laid-out"]
    laid = runs(v)["read-1"]["laid_out"]["total"]
    assert laid["size"] == 36 * GiB and laid["allocated_bytes"] == 0
    cfg = ztwin.load_scenario(SCENARIOS / "exp3-fio-compression.toml").variants["as-laid-out"]["machine"]["cpu"]
    levels, zeroed = 4, 131072 + 3 * 16384
    per_read_s = (cfg["syscall_ns"] + levels * cfg["zfs_block_ns"]) / cfg["speed"] / 1e9 + (zeroed + 131072) / (
        cfg["memcpy_bytes_per_sec"] * cfg["speed"]
    )
    cpu_bound_mbps = 131072 / per_read_s / 1e6
    for name, p in runs(v).items():
        r = p["fio"]["read"]
        assert r["io_bytes"] == 36 * GiB, name
        assert disk_iops(p) == 0, name
        assert p["arc"]["hits"] + p["arc"]["misses"] == 0, name
        assert r["bw_mbps"] == pytest.approx(cpu_bound_mbps, rel=0.1), name


def test_exp3_overwritten_files_compress_about_2_to_1_and_come_from_the_disks(exp3):
    """buffer_compress_percentage=50: half of each 4K chunk is random. lzjb stores
    literals at 9/8 (a copy-map byte per 8 items) and finds no match in the random
    halves, so a 128K record shrinks to at best 64K x 9/8 plus the zero runs: a ratio
    just under 128/72 = 1.78; fio 2.0's scrambling (24 bytes in every 512 of a buffer that
    is not refilled) makes the zero halves cost a little more."""
    v = exp3["overwritten"]
    w = v["phases"][0]
    assert w["timing_modelled"] is True and w["fio"]["write"]["io_bytes"] == 36 * GiB
    # What the txgs synced (during the write pass and after it): logical over physical.
    synced = [p["zfs_write"] for p in v["phases"] if "zfs_write" in p]
    ratio = sum(s["synced_dirty_bytes"] for s in synced) / sum(s["synced_data_bytes"] for s in synced)
    assert 1.6 < ratio <= 128 / 72, ratio
    physical = sum(s["synced_data_bytes"] for s in synced)
    for name, p in runs(v).items():
        r = p["fio"]["read"]
        if name.startswith("read"):
            # A sequential run reads each block of the 36 GiB once (in about 40 s, under
            # the 60 s cap): the 6 GiB ARC can serve at most 6/36 of its reads, whatever it
            # kept from the run before; the rest come from a disk, at their stored size, in
            # fewer reads than records (the vdev queues merge the prefetches they hold).
            assert r["io_bytes"] == 36 * GiB, name
            assert disk_read_bytes(p) >= (1 - 6 / 36 - 0.02) * physical, name
            assert disk_iops(p) < r["iops"], name
        else:
            # A random run stops at runtime=60, far short of the 36 GiB. One psync job:
            # one random 128K read in flight on 7200 rpm disks, each between a full average
            # access (8.5 ms seek + 4.17 ms half rotation + ~0.6 ms transfer) and half a
            # rotation; hits in the ARC add reads, not disk time.
            assert p["fio"]["runtime_s"] == pytest.approx(60, abs=0.1), name
            assert r["io_bytes"] < 36 * GiB / 4, name
            assert 1 / 0.0133 * 0.9 <= disk_iops(p) <= 1 / 0.00417, name


def test_exp3_random_runs_replay_the_run_before(exp3):
    """randrepeat=1: every random run draws the same offsets, so run k+1 first re-reads
    the blocks of run k (ARC hits while they are cached) and then goes further. Run 2 hits
    far more than run 1, which found only what the sequential runs left (at most 6 of the
    36 GiB)."""
    r = runs(exp3["overwritten"])

    def data_hit(p):
        a = p["arc"]
        return a["demand_data_hits"] / (a["demand_data_hits"] + a["demand_data_misses"])

    assert data_hit(r["randread-1"]) <= 6 / 36 + 0.02
    assert data_hit(r["randread-2"]) > 2 * data_hit(r["randread-1"])
    assert r["randread-2"]["fio"]["read"]["iops"] > 1.5 * r["randread-1"]["fio"]["read"]["iops"]


def test_exp3_write_pass_streams_each_disk_near_its_outer_zone_media_rate(exp3):
    """The txg syncs write each leaf's 1 MiB aggregated writes contiguously, with up to
    zfs_vdev_async_write_max_active of them queued at the drive, so a busy disk streams at
    its media rate: 150 MB/s in the outer zone where the ~4 GB each disk gets lie. Per txg
    (~90 MB per disk, 0.6 s) it also seeks to the four labels (two at each end of the
    disk: at most 4 x (17.35 ms full stroke + 1 ms settle + 8.33 ms revolution)) and
    writes the indirect blocks' ditto copies: at most ~20% lost. Paying a revolution per
    1 MiB write instead (the drive missing each next sector) would give under 100 MB/s."""
    w = exp3["overwritten"]["phases"][0]
    mirrors = [d for name, d in w["devices"].items() if name not in ("d10", "slog")]
    for d in mirrors:
        assert d["utilization"] > 0.95  # the throttle keeps the disks busy
        assert 0.8 * 150 <= d["write_mbps"] <= 150, d


def test_exp3_holes_are_faster_than_data_by_far(exp3):
    """Data comes at most at the disks' media rate (11 disks at 150 MB/s in their outer
    zone, the preset's data sheet figure) plus what the ARC holds; holes need no disk
    at all, so fio on laid-out files measures the machine, above anything the disks could
    deliver."""
    disks_mbps = 11 * 150
    a, b = runs(exp3["as-laid-out"]), runs(exp3["overwritten"])
    for name in a:
        assert b[name]["fio"]["read"]["bw_mbps"] < disks_mbps, name
        assert a[name]["fio"]["read"]["bw_mbps"] > disks_mbps, name


def test_exp6_runs_are_phases_with_fio_arc_and_devices(exp6):
    for name in ("randread-3000", "randread-300", "randread-3000-l2arc", "randread-300-l2arc"):
        r = runs(exp6[name])
        assert list(r) == ["run-1", "run-2", "run-3"], name
        for p in r.values():
            assert {"fio", "arc", "devices"} <= set(p)
            assert ("l2arc" in p) == name.endswith("l2arc")
    for name in ("layout-random", "layout-default", "layout-zero"):
        assert list(runs(exp6[name])) == ["seqread", "randread"]


def test_exp6_at_300_iops_the_disk_binds(exp6):
    """8 psync jobs of 16K random reads on a 300 IOPS disk: the disk runs at 300, the
    ARC (256 MiB of a 1.5 GiB incompressible file) serves at most 1/6 of the reads on
    top, and each job waits about 8 reads' worth of disk time."""
    for name, p in runs(exp6["randread-300"]).items():
        r = p["fio"]["read"]
        assert p["devices"]["disk"]["read_iops"] == pytest.approx(300, rel=0.01), name
        assert 297 <= r["iops"] <= 300 / (1 - 256 / 1536) * 1.01, name
        assert r["clat_ms"]["p50"] == pytest.approx(8 / 300 * 1000, rel=0.05), name
        assert p["cpu_utilization"] < 0.9, name


def test_exp6_at_3000_iops_the_guest_binds(exp6):
    for name, p in runs(exp6["randread-3000"]).items():
        assert p["cpu_utilization"] > 0.95, name
        assert p["devices"]["disk"]["read_iops"] < 2900, name


def test_exp6_l2arc_after_cat_serves_the_file_without_the_pool_disk(exp6):
    """The 1.5 GiB file on an 8 GiB unthrottled cache disk after the cat passes: the
    throttled disk is not read, and the slow vCPUs bind as at 3000 IOPS."""
    base = runs(exp6["randread-300"])
    for name in ("randread-300-l2arc", "randread-3000-l2arc"):
        for run, p in runs(exp6[name]).items():
            assert p["devices"]["disk"]["read_iops"] < 0.01 * p["devices"]["l2"]["read_iops"], (name, run)
            assert p["l2arc"]["l2_hits"] > 0
            assert p["cpu_utilization"] > 0.95
        assert runs(exp6["randread-300-l2arc"])["run-1"]["fio"]["read"]["iops"] > 3 * base["run-1"]["fio"]["read"]["iops"]


def test_exp6_layouts(exp6):
    """refill_buffers and current fio's default layout both write random buffers:
    incompressible, the same disk reads; zero_buffers lays out holes: no disk reads."""
    rnd, dft, zero = (runs(exp6[n]) for n in ("layout-random", "layout-default", "layout-zero"))
    assert dft["seqread"]["laid_out"]["total"]["compressratio"] == pytest.approx(1.0)
    assert zero["seqread"]["laid_out"]["total"]["allocated_bytes"] == 0
    for phase in ("seqread", "randread"):
        assert dft[phase]["devices"]["disk"]["read_iops"] == pytest.approx(rnd[phase]["devices"]["disk"]["read_iops"], rel=0.02)
        assert zero[phase]["devices"]["disk"]["read_iops"] == 0
        assert zero[phase]["fio"]["read"]["iops"] > 5 * dft[phase]["fio"]["read"]["iops"]
    assert rnd["seqread"]["fio"]["read"]["io_bytes"] == 1536 << 20
