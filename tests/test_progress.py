"""A first run that explains itself: progress while a variant runs (the core's observer,
the CLI's bar and plain lines), Ctrl-C, --quiet."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin import _core
from ztwin.cli import app
from ztwin.cli.progress import PlainProgress, detail, plain_line
from ztwin.progress import Progress, clock

runner = CliRunner()

BASE = {
    "name": "prog",
    "machine": {"preset": "lab-guest"},
    "devices": {"disk": {"preset": "virtio-throttled", "iops_limit": 3000, "throughput_limit": "250MB/s"}},
    "filesystem": {"type": "zfs", "vdevs": ["disk"], "recordsize": "16K", "arc": {"zfs_arc_max": "256M"}},
    "database": {"type": "innodb", "innodb_flush_method": "O_DIRECT"},
    "dataset": {"type": "sysbench", "tables": 2, "table_size": 100_000},
    "workload": {"type": "sysbench", "test": "oltp_point_select", "threads": 4},
    "run": {"warmup": "2s", "duration": "4s", "report_interval": "500ms"},
    "variants": {"zfs": {}, "ext4": {"filesystem": {"type": "ext4", "device": "disk"}}},
}

#: A run on the command line: the packaged experiment 1, cut short.
SHORT = ["run", "--duration", "5s", "--warmup", "0s", "--report-interval", "1s"]


def _ztwin(*args: str, **kw) -> subprocess.CompletedProcess:
    """`ztwin ARGS` in a process of its own, stdout and stderr piped."""
    return subprocess.run([sys.executable, "-m", "ztwin.cli", *args], capture_output=True, text=True, timeout=120, **kw)


# --------------------------------------------------------------------------------------
# The core's observer through the API


def test_progress_rises_and_the_result_is_the_same_without_it():
    seen: list[Progress] = []
    observed = ztwin.run(BASE, on_progress=seen.append, progress_every_s=0)
    plain = ztwin.run(BASE)
    assert observed.to_json() == plain.to_json()
    assert observed.series.equals(plain.series)
    for name in ("zfs", "ext4"):
        mine = [p for p in seen if p.variant == name]
        *during, last = mine
        # Every report boundary (500 ms) of the 6 s, rising, then the end.
        assert [p.simulated_ns for p in during] == [k * 500_000_000 for k in range(1, 13)]
        assert last.finished and last.simulated_ns >= 6 * 10**9 and not any(p.finished for p in during)
        assert {(p.total_ns, p.phase, p.phases) for p in mine} == {(6 * 10**9, 0, 1)}
        assert [p.wall_s for p in mine] == sorted(p.wall_s for p in mine)
        assert during[5].fraction == pytest.approx(0.5) and last.fraction == 1.0 and last.eta_s == 0.0
    assert [p.index for p in seen if p.finished] == [0, 1] and {p.variants for p in seen} == {2}


def test_phases_without_a_set_length_report_phase_k_of_n():
    cfg = dict(BASE, phases=[{"type": "cat"}, {"type": "workload", "warmup": "0s", "duration": "2s"}], variants={"zfs": {}})
    seen: list[Progress] = []
    ztwin.run(cfg, on_progress=seen.append, progress_every_s=0)
    assert {p.total_ns for p in seen} == {None} and {p.phases for p in seen} == {2}
    assert [p.phase for p in seen] == sorted(p.phase for p in seen) and seen[-1].phase == 1
    assert all(p.fraction is None and p.eta_s is None for p in seen[:-1])


def test_an_exception_in_the_callback_stops_the_run_and_is_raised():
    """KeyboardInterrupt (what Ctrl-C raises in the callback's signal check) or any other."""
    cfg = json.dumps(ztwin.resolve(BASE)["zfs"])
    calls = []

    def interrupt(*args):
        calls.append(args)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _core.run_variant(cfg, interrupt, 0.0)
    assert len(calls) == 1 and calls[0][0] == 500_000_000

    class Stop(Exception):
        pass

    def stop(simulated_ns, *_):
        if simulated_ns >= 10**9:
            raise Stop("enough")

    with pytest.raises(Stop, match="enough"):
        ztwin.run_variant(ztwin.load_scenario(BASE), "zfs", stop, 0.0)
    with pytest.raises(ValueError, match="every_s"):
        _core.run_variant(cfg, stop, -1.0)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_stops_a_run_at_once():
    """Ctrl-C during a run stops it within a fraction of a second (it used to wait for the
    variant to end), with one line and status 130."""
    long_run = ["run", "--variant", "zfs-arc-meta", "--duration", "3600s", "--warmup", "0s"]
    p = subprocess.Popen([sys.executable, "-m", "ztwin.cli", *long_run], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    assert p.poll() is None, p.communicate()
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert time.monotonic() - sent < 10
    assert p.returncode == 130 and out == "" and err.strip().endswith("run interrupted"), err


# --------------------------------------------------------------------------------------
# The command line


def test_piped_run_prints_progress_lines_on_stderr_and_json_alone_on_stdout():
    r = _ztwin(*SHORT, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # one document, nothing else
    assert list(doc["variants"]) == ["xfs", "zfs-arc-1g", "zfs-arc-meta"]
    lines = r.stderr.splitlines()
    assert lines == [
        f"progress: exp1-arc-sizing {v} ({i}/3): done, simulated 5 s in {line.rsplit(' in ', 1)[1]}"
        for (i, v), line in zip(enumerate(doc["variants"], 1), lines)
    ], r.stderr
    r = _ztwin(*SHORT, "--arcstat", "none")
    assert r.returncode == 0 and r.stderr.count("progress: ") == 3 and "progress: " not in r.stdout


def test_quiet_prints_no_progress():
    r = _ztwin(*SHORT, "--quiet", "--arcstat", "none")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "throughput (queries/s)" in r.stdout


def test_plain_progress_says_a_shared_group_and_waits_for_its_forks():
    lines: list[str] = []
    show = PlainProgress(lines.append, now=lambda: 0.0)
    show.shared("zfs-update-index", ["zfs-read-write", "zfs-latency-update-index"], 2)
    show(Progress("exp2", "zfs-update-index", 5, 10, 14_400 * 10**9, 14_400 * 10**9, 1, 2, True, 80.0))
    assert lines == [
        "progress: zfs-read-write, zfs-latency-update-index take the first phases from zfs-update-index's run (forked after them, unless what they change was used by then; 2 processes at once)",
        "progress: exp2 zfs-update-index (6/10): done, simulated 14,400 s in 1:20",
        "progress: exp2: waiting for the forked zfs-read-write, zfs-latency-update-index",
    ]


def test_plain_progress_lines_at_most_every_10_s_and_at_each_end():
    now = [0.0]
    lines: list[str] = []
    show = PlainProgress(lines.append, now=lambda: now[0])

    def p(sim_s, wall_s, finished=False, total_s=720):
        return Progress("exp1-arc-sizing", "zfs-arc-1g", 1, 3, int(sim_s * 1e9), int(total_s * 1e9) if total_s else None, 0, 1, finished, wall_s)

    for t in (2, 9, 10, 15, 19.9, 20.5):
        now[0] = t
        show(p(t * 10, t))
    now[0] = 21
    show(p(720, 21, finished=True))
    assert lines == [
        "progress: exp1-arc-sizing zfs-arc-1g (2/3): simulated 100 s of 720 s (14%), elapsed 0:10, ETA 1:02",
        "progress: exp1-arc-sizing zfs-arc-1g (2/3): simulated 205 s of 720 s (28%), elapsed 0:20, ETA 0:52",
        "progress: exp1-arc-sizing zfs-arc-1g (2/3): done, simulated 720 s in 21.0 s",
    ]
    assert plain_line(p(312, 31)) == (
        "progress: exp1-arc-sizing zfs-arc-1g (2/3): simulated 312 s of 720 s (43%), elapsed 0:31, ETA 0:41"
    )
    assert detail(p(312, 31)) == "simulated 312/720 s, ETA 0:41"
    unknown = Progress("exp6-lab", "zfs", 0, 1, 45 * 10**9, None, 1, 3, False, 5.0)
    assert detail(unknown) == "phase 2/3, simulated 45 s"
    assert plain_line(unknown) == "progress: exp6-lab zfs: phase 2/3, simulated 45 s, elapsed 0:05"
    assert clock(3725) == "1:02:05" and clock(0.4) == "0:00"
