"""``ztwin bench``: how fast and how lean the twin is, measured, never asserted in tests.

Each case runs one variant of a scenario for a fixed simulated span in a fresh Python
process (so peak memory is the case's own) and reports wall time, peak resident memory
and the simulated work per wall second. The README's figures come from this command.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

# (scenario, variant, warm-up, measured span): the targets are stated for
# experiment 1 at full scale (330 tables, about 850 GB), one simulated hour.
CASES: list[tuple[str, str, str, str]] = [
    ("default", "zfs-arc-1g", "0s", "1h"),
    ("default", "xfs", "0s", "1h"),
]


@dataclass
class BenchResult:
    """One case's measurements."""

    case: str
    wall_s: float
    peak_rss_mib: float
    simulated_s: float
    queries: int
    page_lookups: int
    block_lookups: int
    events: int

    @property
    def accesses_per_wall_s(self) -> float:
        """Simulated block accesses (buffer-pool page lookups + ARC block lookups) per wall second."""
        return (self.page_lookups + self.block_lookups) / self.wall_s


def _child(scenario: str, variant: str, warmup: str, duration: str) -> None:
    """Runs in the child process: one variant, then prints its measurements as JSON."""
    import ztwin

    src = None if scenario == "default" else scenario
    sc = ztwin.load_scenario(src, overrides={"run": {"warmup": warmup, "duration": duration, "report_interval": "60s"}})
    t0 = time.perf_counter()
    doc = json.loads(ztwin.run_variant(sc, variant))
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    eng = doc["engine"]
    print(json.dumps({
        "wall_s": wall, "peak_rss_mib": peak_kib / 1024, "simulated_s": eng["simulated_s"],
        "queries": doc["queries"], "page_lookups": eng["page_lookups"],
        "block_lookups": eng["block_lookups"], "events": eng["events"],
    }))


def run_case(scenario: str, variant: str, warmup: str, duration: str) -> BenchResult:
    """Runs one case in a fresh interpreter and collects its measurements."""
    code = f"from ztwin.bench import _child; _child({scenario!r}, {variant!r}, {warmup!r}, {duration!r})"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    m: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return BenchResult(case=f"{scenario}:{variant} ({duration} simulated)", **m)
