"""ztwin advise l2arc: the warm-up time read off a series, the size and feed-rate answers
(pure functions), the refusals, and one shortened end-to-end run on experiment 7's
L2ARC variant (1 GB of data, an 8 GiB cache disk, two cat passes; each run a fraction of
a second)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin.advise import AdviseError
from ztwin.advise.l2arc import choose_feed, choose_size, default_write_max, warmup_time
from ztwin.cli import app

from conftest import ROOT

EXP7 = str(ROOT / "scenarios" / "exp7-lab-sysbench.toml")
runner = CliRunner()
MiB, GiB = 2**20, 2**30


# --------------------------------------------------------------------------------------
# Warm-up time


def test_warmup_is_the_first_interval_from_which_the_rate_stays_near_its_steady_value():
    t = [10, 20, 30, 40, 50, 60, 70, 80]
    q = [0, 0, 100, 700, 950, 1000, 1010, 990]  # a cat (no queries), then the ramp
    m = [0, 0, 0, 0, 0, 1, 1, 1]
    when, steady = warmup_time(t, q, m, 0.9)
    assert steady == 1000 and when == 50
    # A dip below 90% after the first crossing moves the warm-up past it.
    q2 = [0, 0, 950, 700, 950, 1000, 1010, 990]
    assert warmup_time(t, q2, m, 0.9)[0] == 50
    # A stricter fraction: only from 60 s.
    assert warmup_time(t, q, m, 0.99)[0] == 60


def test_warmup_ignores_the_cut_interval_after_the_window_and_reports_not_reached():
    t = [10, 20, 30, 31.2]
    q = [500, 1000, 1000, 10]  # the last row is a cut interval after the measured window
    assert warmup_time(t, q, [0, 1, 1, 0], 0.9) == (20, 1000)
    # Still rising at the window's last interval: the steady value is the window's median,
    # and the rate does not stay above 90% of it.
    assert warmup_time([1, 2, 3], [100, 500, 1000], [0, 1, 1], 0.9) == (3, 750)
    assert warmup_time([1, 2, 3], [100, 2000, 600], [0, 1, 1], 0.9) == (None, 1300)
    # Nothing to warm up to (no reads from a cache device): (None, None).
    assert warmup_time([1, 2], [0, 0], [1, 1]) == (None, None)
    assert warmup_time([], [], None) == (None, None)
    # Without a measured column every row is the window.
    assert warmup_time([1, 2, 3], [0, 100, 100])[0] == 2
    with pytest.raises(AdviseError, match="warm-up fraction"):
        warmup_time([1], [1], None, 1.5)


# --------------------------------------------------------------------------------------
# The answer


def _size(b, qps, **kw):
    return {"l2arc_size_bytes": b, "qps": qps} | kw


def test_size_answer_needs_the_gain_and_takes_the_smallest_tied_size():
    rows = [_size(0, 1700), _size(400 * GiB, 4950), _size(200 * GiB, 4900), _size(100 * GiB, 3500), _size(50 * GiB, None, refused="x")]
    pick, why = choose_size(rows, "qps", 0.05, 0.02)
    assert pick["l2arc_size_bytes"] == 200 * GiB and "smallest" in why
    pick, why = choose_size(rows, "qps", 0.05, 0.0)
    assert pick["l2arc_size_bytes"] == 400 * GiB and why == "the best size"
    # Under the gain: no L2ARC (the row without a cache device).
    flat = [_size(0, 3000), _size(400 * GiB, 3100), _size(100 * GiB, 3050)]
    pick, why = choose_size(flat, "qps", 0.05, 0.02)
    assert pick["l2arc_size_bytes"] == 0 and "+3.3%" in why and "5%" in why
    # A bigger cache that does worse (its headers crowd the ARC): the smaller one wins.
    crowd = [_size(0, 1000), _size(400 * GiB, 1200), _size(100 * GiB, 2000)]
    assert choose_size(crowd, "qps", 0.05, 0.02)[0]["l2arc_size_bytes"] == 100 * GiB
    assert choose_size([_size(0, 10, refused="no")], "qps", 0.05, 0.02)[0] is None


def test_feed_answer_ties_go_to_the_shortest_warmup_then_the_slower_feed():
    rows = [
        {"l2arc_write_max_bytes": 8 * MiB, "qps": 4950, "warmup_qps_s": 16800},
        {"l2arc_write_max_bytes": 4 * MiB, "qps": 4900, "warmup_qps_s": 17400},
        {"l2arc_write_max_bytes": 16 * MiB, "qps": 4960, "warmup_qps_s": 16800},
    ]
    assert choose_feed(rows, "qps", 0.02)["l2arc_write_max_bytes"] == 8 * MiB
    assert choose_feed(rows, "qps", 0.0)["l2arc_write_max_bytes"] == 16 * MiB
    rows[0]["warmup_qps_s"] = None  # not reached counts as the longest
    assert choose_feed(rows, "qps", 0.02)["l2arc_write_max_bytes"] == 16 * MiB
    assert choose_feed([{"l2arc_write_max_bytes": 1, "qps": None}], "qps", 0.02) is None


def test_device_sizes_keep_the_devices_units():
    from ztwin.advise.l2arc import device_sizes, size_label

    sizes = device_sizes(475 * 10**9, [0, 1, 0.5, 0.25, 0.5])
    assert sizes == [0, 475 * 10**9, 237 * 10**9, 118 * 10**9]
    assert [size_label(n) for n in sizes[1:]] == ["475GB", "237GB", "118GB"]
    assert device_sizes(8 * GiB, [1, 0.5, 0.25, 0.01]) == [8 * GiB, 4 * GiB, 2 * GiB, 81 * MiB]
    assert size_label(2 * GiB) == "2GiB"


def test_default_feed_rate_by_release():
    assert default_write_max("0.8", None) == 8 * MiB
    assert default_write_max("2.2", 6) == 8 * MiB
    assert default_write_max("2.2", 7) == 32 * MiB and default_write_max("2.3", 0) == 32 * MiB


# --------------------------------------------------------------------------------------
# End to end (experiment 7's L2ARC variant, shortened)


def test_l2arc_end_to_end_json_and_page(tmp_path):
    r = runner.invoke(app, ["advise", "l2arc", EXP7, "--variant", "zfs-300-l2arc", "--duration", "5s", "--warmup", "5s", "--json", "-q",
                            "--report", str(tmp_path / "l2.html")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert list(doc)[:4] == ["question", "answer", "points", "explanation"]
    assert doc["question"] == "l2arc" and set(doc["answer"]) == {"l2arc_size", "l2arc_write_max"}
    pts = doc["points"]
    sizes = [p["l2arc_size_bytes"] for p in pts if p["role"] in ("baseline", "device") or p["role"].endswith("x size")]
    assert sizes == [0, 8 * GiB, 4 * GiB, 2 * GiB]
    assert len(pts) == 6 and doc["runs"] == 6  # 4 sizes, 2 more feed rates at the chosen size
    base = pts[0]
    assert base["l2arc_size"] == "no L2ARC" and base["l2_hdr_size"] == 0
    # The 1 GB of data fits any of the sizes: the pool is not read, the slow vCPUs bind.
    for p in pts[1:]:
        assert p["qps"] > 1.3 * base["qps"] and p["read_iops"] < 1 and p["l2_hdr_size"] > 0
        assert p["workload_start_s"] < p["warmup_qps_s"]
    chosen = [p for p in pts if p["chosen"]]
    assert len(chosen) == 1 and chosen[0]["l2arc_size"] == doc["answer"]["l2arc_size"] == "2GiB"
    assert chosen[0]["l2arc_write_max"] == doc["answer"]["l2arc_write_max"]
    assert {p["l2arc_write_max"] for p in pts if p["l2arc_size"] == "2GiB"} == {"64MiB", "128MiB", "256MiB"}
    assert "L2ARC holds" in doc["explanation"] and "headers take" in doc["explanation"]
    page = (tmp_path / "l2.html").read_text()
    assert "Answer: l2arc_size = 2GiB" in page and "feed rates at the chosen size" in page


def test_l2arc_says_no_l2arc_when_it_does_not_pay():
    """With the disk at 3000 IOPS the slow vCPUs bind with or without the cache device
    (experiment 7: zfs-3000 runs as fast as zfs-300-l2arc): no L2ARC."""
    import tomllib

    raw = tomllib.loads((ROOT / "scenarios" / "exp7-lab-sysbench.toml").read_text())
    raw["variants"] = {"zfs-300-l2arc": raw["variants"]["zfs-300-l2arc"]}
    raw["variants"]["zfs-300-l2arc"]["devices"]["disk"]["iops_limit"] = 3000
    a = ztwin.advise("l2arc", raw, "zfs-300-l2arc", duration="5s", warmup="5s", fractions=[0, 1])
    assert a.answer == {"l2arc_size": "no L2ARC"} and a.runs == 2
    assert a.explanation.startswith("No L2ARC:") and "under the 5% it must gain" in a.explanation
    assert "the CPUs bind already" in a.explanation
    assert any("feed rates were not run" in n for n in a.notes)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["advise", "l2arc", EXP7, "--variant", "zfs-300"], "has no cache device"),
        (["advise", "l2arc", EXP7, "--variant", "ext4-300"], "not ZFS"),
        (["advise", "l2arc", EXP7, "--variant", "zfs-300-l2arc", "--fractions", "0,2"], "each between 0"),
        (["advise", "l2arc", EXP7, "--variant", "zfs-300-l2arc", "--fractions", "half"], "--fractions 'half'"),
        (["advise", "l2arc", EXP7, "--variant", "zfs-300-l2arc", "--feed-factors", "0"], "feed factors"),
        (["advise", "l2arcs", EXP7], "unknown question 'l2arcs'"),
    ],
)
def test_l2arc_cli_errors_are_one_message_without_traceback(args, fragment):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output and "Traceback" not in r.output


def test_l2arc_sizes_one_cache_device_and_refuses_a_variant_with_two(tmp_path):
    text = Path(EXP7).read_text() + """
[variants.zfs-two-l2arc]
devices.l2 = { preset = "virtio-throttled", size = "4GiB" }
devices.l2b = { preset = "virtio-throttled", size = "4GiB" }
filesystem.cache = ["l2", "l2b"]
"""
    path = tmp_path / "two.toml"
    path.write_text(text)
    r = runner.invoke(app, ["advise", "l2arc", str(path), "--variant", "zfs-two-l2arc"])
    assert r.exit_code == 2, r.output
    assert "2 cache devices" in r.output and "Traceback" not in r.output
