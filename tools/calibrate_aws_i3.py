"""Calibrates the `aws-i3.large` machine preset's `statement_ns` against the brief's one
CPU-bound rate of experiment 1 (and nothing else):

    with the NVMe as L2ARC ... ZFS reaches 5000 qps against XFS's 3000 (+66%), bounded by
    the 2 vCPUs.

One number fixes one parameter: `statement_ns`, the work every query does whatever the
filesystem (sysbench, the client library, MySQL's parser and executor), the largest and
least known cost. Every other cost keeps its reference value. A query's CPU is linear in
`statement_ns` (the work per query does not depend on the rate), so one run measures the
rest: CPU per query = cpu_utilization x vCPUs / qps, and the rate bound by the vCPUs is
vCPUs / CPU per query. A second run checks the result. Each run is the full experiment
(the cat over 850 GB, then the benchmark): a few minutes.

Run: python tools/calibrate_aws_i3.py   (prints the value to put in
python/ztwin/presets/machines.toml)
"""

from __future__ import annotations

import json
from pathlib import Path

import ztwin

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "exp1-l2arc.toml"
VARIANT, TARGET_QPS, VCPUS = "zfs-l2arc", 5000.0, 2


def run(cpu: dict) -> dict:
    sc = ztwin.load_scenario(SCENARIO, overrides={"machine": {"cpu": cpu}} if cpu else None)
    return json.loads(ztwin.run_variant(sc, VARIANT))


def main() -> None:
    preset = ztwin.load_scenario(SCENARIO).variants[VARIANT]["machine"]["cpu"]
    s0 = preset["statement_ns"] * 1.0 / preset["speed"]
    doc = run({})
    per_query_ns = doc["cpu_utilization"] * VCPUS / doc["qps"] * 1e9
    statement_ns = round((s0 + VCPUS / TARGET_QPS * 1e9 - per_query_ns) * preset["speed"], -3)
    print(f"measured: {doc['qps']:.0f} qps at {doc['cpu_utilization']:.3f} CPU, {per_query_ns / 1e3:.1f} us per query")
    print(json.dumps({"statement_ns": int(statement_ns)}))
    check = run({"statement_ns": int(statement_ns)})
    print(f"check: {check['qps']:.0f} qps at {check['cpu_utilization']:.3f} CPU")


if __name__ == "__main__":
    main()
