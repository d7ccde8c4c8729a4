"""HTML reports: ztwin run --report, ztwin report of a saved run, --png, their errors, and
the page in a real headless browser.

The browser test needs Chromium (Debian's ``chromium`` package: ``apt-get install -y
chromium``). CI installs nothing beyond the README's test command, so there it is
skipped unless chromium is already on the machine."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from ztwin.cli import app

from conftest import ROOT

EXP7 = str(ROOT / "scenarios" / "exp7-lab-sysbench.toml")
RUN = ["run", EXP7, "--variant", "zfs-300", "--variant", "ext4-300", "--warmup", "0s", "--duration", "4s", "--report-interval", "1s", "-q"]
runner = CliRunner()


@pytest.fixture(scope="module")
def run_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    res = runner.invoke(app, RUN + ["--json", "--full", "--report", str(d / "run.html"), "--png", str(d / "png")])
    assert res.exit_code == 0, res.output
    return d, res.stdout


def test_run_report_has_its_sections_and_embedded_plots(run_report):
    d, _ = run_report
    page = (d / "run.html").read_text()
    for s in ('id="scenario"', 'id="summary"', 'id="timeseries"', "exp7-lab-sysbench: run report", "Throughput per interval",
              "ARC size (solid)", "ARC hit ratio", "Device disk: reads", "InnoDB buffer pool hit ratio", "zfs-300", "ext4-300"):
        assert s in page, s
    # The summary table: a row per variant and phase, with the variant's qps.
    assert re.search(r"<td>zfs-300</td><td>benchmark</td><td>[0-9,.]+</td>", page)
    # Settings that differ: ZFS's recordsize is one, shown for zfs-300 only.
    assert "<td>filesystem.recordsize</td>" in page
    figs = page.count('class="fig"')
    assert figs >= 8 and page.count("Plotly.newPlot(") == figs
    # Self-contained: plotly.js is in the page, and nothing else refers to the network.
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs() in page
    rest = page.replace(get_plotlyjs(), "")
    assert "src=" not in rest and "http://" not in rest and "https://" not in rest
    pngs = sorted((d / "png").iterdir())
    assert len(pngs) == figs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_report_of_a_saved_full_run_is_the_run_report(run_report, tmp_path):
    d, stdout = run_report
    doc = json.loads(stdout)
    assert "series" in doc["variants"]["zfs-300"] and "zfs-300" in doc["configs"] and doc["description"]
    (tmp_path / "r.json").write_text(stdout)
    res = runner.invoke(app, ["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "again.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "again.html").read_text() == (d / "run.html").read_text()


def test_report_of_a_plain_json_has_the_tables_and_says_the_series_are_missing(tmp_path):
    res = runner.invoke(app, RUN + ["--json"])
    assert res.exit_code == 0
    (tmp_path / "r.json").write_text(res.stdout)
    res = runner.invoke(app, ["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    assert 'id="summary"' in page and "No per-interval series in this input" in page and 'class="fig"' not in page


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("not json", "is not JSON"),
        ('{"a": 1}', "is not a ztwin result"),
        ('{"scenario": "s", "variants": {"v": 3}}', "each variant's entry must be an object"),
        (None, "does not exist"),
    ],
)
def test_report_errors_exit_2(tmp_path, content, fragment):
    p = tmp_path / "in.json"
    if content is not None:
        p.write_text(content)
    res = runner.invoke(app, ["report", str(p), "-o", str(tmp_path / "o.html")])
    assert res.exit_code == 2 and res.output.startswith("report error:") and fragment in res.output, res.output
    res = runner.invoke(app, ["report", str(tmp_path), "-o", str(tmp_path / "o.html")])
    assert res.exit_code == 2 and "without sweep.json" in res.output


@pytest.mark.parametrize("extra, fragment", [(["--png", "x"], "--png goes with --report"), (["--full"], "--full goes with --json")])
def test_run_option_pairs(extra, fragment):
    res = runner.invoke(app, RUN + extra)
    assert res.exit_code == 2 and fragment in res.output


def test_report_in_a_headless_browser(run_report, tmp_path):
    """The page loads in Chromium without script errors and plotly draws every figure
    (skipped without chromium; CI installs none). The screenshot is left in tmp_path."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    d, _ = run_report
    page = d / "run.html"
    flags = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=5000", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    figs = page.read_text().count('class="fig"')
    assert f'data-plots-rendered="{figs}"' in dom
    assert 'data-script-errors="0"' in dom and '<div id="ztwin-errors" class="note"></div>' in dom, "script errors on the page"
    assert dom.count('class="main-svg"') >= figs  # plotly drew an SVG in each figure
    shot = tmp_path / "report.png"
    subprocess.run(flags + ["--hide-scrollbars", "--window-size=1280,2000", f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_l2arc_series_get_their_figures():
    """A variant with a cache device has the L2ARC's hit ratio (hits over hits and misses,
    per interval) and fill drawn; one without has neither figure."""
    from ztwin.html_report import run_figures

    series = {"time_s": [1.0, 2.0], "qps": [10.0, 20.0], "l2_hits": [1.0, 3.0], "l2_misses": [3.0, 1.0],
              "l2_size": [2**30, 2**31], "l2_asize": [2**29, 2**30]}
    figs = {f.slug: f for f in run_figures({"l2": {"series": series}})}
    assert figs["ts-l2-hit"].traces[0].y == [25.0, 75.0]
    assert [t.y for t in figs["ts-l2-size"].traces] == [[1.0, 2.0], [0.5, 1.0]]
    plain = {f.slug for f in run_figures({"v": {"series": {"time_s": [1.0], "qps": [1.0]}}})}
    assert "ts-l2-hit" not in plain and "ts-l2-size" not in plain and "ts-qps" in plain


def test_a_raid_controllers_dirty_data_gets_its_figure():
    """A variant whose drives are behind a RAID controller has the controller's dirty data
    drawn over time (its series column NAME_dirty_mib); one without has no such figure."""
    from ztwin.html_report import run_figures

    series = {"time_s": [60.0, 120.0], "qps": [10.0, 20.0], "perc_dirty_mib": [12.0, 1024.0]}
    doc = {"series": series, "controllers": {"perc": {"dirty_mib": 1024.0}}}
    figs = {f.slug: f for f in run_figures({"raid": doc})}
    assert figs["ts-ctrl-perc"].traces[0].y == [12.0, 1024.0]
    plain = {f.slug for f in run_figures({"v": {"series": {"time_s": [1.0], "qps": [1.0]}}})}
    assert not any(s.startswith("ts-ctrl-") for s in plain)
