"""Calibrates the `lab-guest` machine preset's CPU costs against the brief's two
CPU-bound rates of experiment 7 (and nothing else):

    at 3000 IOPS the slow guest CPUs bound the rate, at about 1000 queries/s on ext4 and
    about 700 on ZFS.

Two numbers fix two parameters: `statement_ns` (work every query does whatever the
filesystem: sysbench, the client library, loopback, MariaDB's parser and executor) from
the ext4 rate, then `zio_ns` (ZFS's per-I/O pipeline work) from the ZFS rate. Every other
cost keeps its reference value. The 300-IOPS runs are not used: they validate.

Run: python tools/calibrate_lab_guest.py   (prints the two values to put in
python/ztwin/presets/machines.toml)
"""

from __future__ import annotations

import json
from pathlib import Path

import ztwin

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "exp7-lab-sysbench.toml"
TARGETS = {"ext4-3000": 1000.0, "zfs-3000": 700.0}


def qps(variant: str, cpu: dict) -> float:
    sc = ztwin.load_scenario(SCENARIO, overrides={"machine": {"cpu": cpu}})
    return json.loads(ztwin.run_variant(sc, variant))["qps"]


def solve(variant: str, field: str, cpu: dict, lo: int, hi: int) -> int:
    """Bisection on one cost (qps falls as the cost rises) to the target rate."""
    target = TARGETS[variant]
    while hi - lo > 1000:
        mid = (lo + hi) // 2
        if qps(variant, cpu | {field: mid}) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) // 2


def main() -> None:
    cpu: dict = {}
    cpu["statement_ns"] = solve("ext4-3000", "statement_ns", cpu, 0, 2_000_000)
    cpu["zio_ns"] = solve("zfs-3000", "zio_ns", cpu, 0, 2_000_000)
    print(json.dumps(cpu))
    for v in TARGETS:
        print(v, round(qps(v, cpu), 1))


if __name__ == "__main__":
    main()
