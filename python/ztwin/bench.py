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
from pathlib import Path
from typing import Any, Optional

# (scenario, variant, warm-up, measured span): the targets are stated for
# experiment 1 at full scale (330 tables, about 850 GB), one simulated hour.
CASES: list[tuple[str, str, Optional[str], Optional[str]]] = [
    ("default", "zfs-arc-1g", "0s", "1h"),
    ("default", "xfs", "0s", "1h"),
]

#: Experiment 3 in full (36 GiB, every phase and run): issue 5's target is under 20 s
#: wall on one core. Runs from a source checkout (the scenario lives in scenarios/).
EXP3 = Path(__file__).resolve().parents[2] / "scenarios" / "exp3-fio-compression.toml"
if EXP3.exists():
    CASES += [(str(EXP3), "as-laid-out", None, None), (str(EXP3), "overwritten", None, None)]


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


def _child(scenario: str, variant: str, warmup: Optional[str], duration: Optional[str]) -> None:
    """Runs in the child process: one variant, then prints its measurements as JSON.
    Without a warm-up and duration the variant runs as its scenario says (fio)."""
    import ztwin

    src = None if scenario == "default" else scenario
    over = None if duration is None else {"run": {"warmup": warmup, "duration": duration, "report_interval": "60s"}}
    sc = ztwin.load_scenario(src, overrides=over)
    t0 = time.perf_counter()
    doc = json.loads(ztwin.run_variant(sc, variant))
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    eng = doc["engine"]
    print(json.dumps({
        "wall_s": wall, "peak_rss_mib": peak_kib / 1024, "simulated_s": eng["simulated_s"],
        # fio: the I/Os of every run.
        "queries": doc.get("queries", sum(p.get("fio", {}).get("read", {}).get("ios", 0) for p in doc["phases"])),
        "page_lookups": eng["page_lookups"],
        "block_lookups": eng["block_lookups"], "events": eng["events"],
    }))


def run_case(scenario: str, variant: str, warmup: Optional[str], duration: Optional[str]) -> BenchResult:
    """Runs one case in a fresh interpreter and collects its measurements."""
    code = f"from ztwin.bench import _child; _child({scenario!r}, {variant!r}, {warmup!r}, {duration!r})"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    m: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    what = f"{duration} simulated" if duration else "in full"
    return BenchResult(case=f"{Path(scenario).stem}:{variant} ({what})", **m)


# ---------------------------------------------------------------------------------------
# ztwin bench-replay: ztwin's lru and arc against libCacheSim's, side by side


def _rss_anon_kib() -> int:
    """Anonymous resident memory of this process, KiB (file mappings such as a mmapped trace excluded)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0  # pragma: no cover


def lcs_run(trace: str, policy: str, size: int, hashpower: int) -> dict[str, Any]:
    """libCacheSim (PyPI ``libcachesim``) over an oracleGeneral trace, sizes ignored (unit objects)."""
    import libcachesim as lcs

    p = lcs.ReaderInitParam()
    p.ignore_obj_size = True
    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE, p)
    cls = {"lru": lcs.LRU, "arc": lcs.ARC}[policy]
    before = _rss_anon_kib()
    cache = cls(size, hashpower=hashpower)
    t0 = time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    wall = time.perf_counter() - t0
    rss = (_rss_anon_kib() - before) * 1024
    n = reader.n_total_req if hasattr(reader, "n_total_req") else None
    return {"wall_s": wall, "miss_ratio": miss_ratio, "rss_delta": rss, "n_obj": cache.get_n_obj(), "requests": n}


def ztwin_run(trace: str, policy: str, size: int) -> dict[str, Any]:
    """ztwin's policy over the same trace, one thread."""
    from . import _core

    return json.loads(_core.replay_simulate(json.dumps({"trace": trace, "policy": policy, "size": size})))


def _mem_child(which: str, trace: str, policy: str, size: int, hashpower: int) -> None:
    """Child process: one run, then resident memory per cached entry as JSON."""
    if which == "lcs":
        r = lcs_run(trace, policy, size, hashpower)
        # ARC keeps ghosts in the same hash table: count them as entries too.
        print(json.dumps({"bytes": r["rss_delta"], "n_obj": r["n_obj"]}))
    else:
        r = ztwin_run(trace, policy, size)
        print(json.dumps({"bytes": r["heap_bytes"], "entries": r["entries"]}))


def mem_case(which: str, trace: str, policy: str, size: int, hashpower: int) -> dict[str, Any]:
    """Runs :func:`_mem_child` in a fresh interpreter."""
    code = f"from ztwin.bench import _mem_child; _mem_child({which!r}, {trace!r}, {policy!r}, {size}, {hashpower})"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def hashpower_for(size: int) -> int:
    """libCacheSim's best table for `size` objects: 2^(log2(size) + 2) buckets (17 for 32768)."""
    return max(10, (size - 1).bit_length() + 2)


def bench_replay(trace: str, sizes: list[int], repeat: int = 3) -> list[dict[str, Any]]:
    """Best-of-`repeat` requests per second of ztwin and libCacheSim per policy and size, same trace, one thread."""
    rows = []
    # Warm the page cache once so neither side pays the first read.
    with open(trace, "rb") as f:
        while f.read(1 << 24):
            pass
    for size in sizes:
        hp = hashpower_for(size)
        for policy in ("lru", "arc"):
            z = [ztwin_run(trace, policy, size) for _ in range(repeat)]
            lres = [lcs_run(trace, policy, size, hp) for _ in range(repeat)]
            zb = min(z, key=lambda r: r["wall_s"])
            lb = min(lres, key=lambda r: r["wall_s"])
            n = zb["requests"]
            lcs_hits = round(n * (1 - lb["miss_ratio"]))
            rows.append({
                "policy": policy, "size": size, "requests": n, "hashpower": hp,
                "ztwin_hits": zb["hits"], "libcachesim_hits": lcs_hits,
                "ztwin_req_per_s": n / zb["wall_s"], "libcachesim_req_per_s": n / lb["wall_s"],
                "ratio": (n / zb["wall_s"]) / (n / lb["wall_s"]),
                "ztwin_bytes_per_entry": zb["heap_bytes"] / max(zb["entries"], 1),
            })
    return rows
