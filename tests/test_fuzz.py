"""The fuzz harness: bad input of every kind gets a clear error, never a crash.

Scenario documents are mutated at random from small valid bases (one per filesystem and
workload kind): a key set to an adversarial value (huge, negative, zero, NaN, the wrong
type, a malformed size or duration), a key removed, an unknown key added. Each mutant
goes through what `ztwin validate` does: the scenario schema (`load_scenario`), then the
core's own check of every variant (`check_variants`, which builds the whole stack
without running it). The property: each step returns or raises a ZtwinError (the typed
errors users see); anything else (a Python exception of another kind, a Rust panic
surfacing as PanicException) fails, with hypothesis's shrunk example. fio job files get
the same treatment through the job-file parser.

Bounded for CI: a fixed number of examples per base (FUZZ_EXAMPLES in the environment
raises it for a longer local session) and a derandomized seed, so a CI failure
reproduces exactly.
"""

from __future__ import annotations

import copy
import math
import os

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import ztwin
from ztwin import ZtwinError, load_scenario

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400"))

SYSBENCH_ZFS = {
    "name": "fuzz",
    "seed": 1,
    "machine": {"preset": "lab-guest"},
    "devices": {"vd": {"preset": "virtio-throttled"}},
    "filesystem": {"type": "zfs", "vdevs": ["vd"], "recordsize": "16K", "arc": {"zfs_arc_max": "256MiB"}},
    "database": {"innodb_buffer_pool_size": "64MiB", "innodb_flush_method": "O_DIRECT"},
    "dataset": {"tables": 2, "table_size": 20000},
    "workload": {"type": "sysbench", "test": "oltp_point_select", "threads": 4},
    "run": {"warmup": "1s", "duration": "2s", "report_interval": "1s"},
    "variants": {"zfs": {}, "ext4": {"filesystem": {"type": "ext4", "device": "vd"}}},
}

FIO_ZFS = {
    "name": "fuzz-fio",
    "seed": 1,
    "machine": {"preset": "lab-guest"},
    "devices": {"vd": {"preset": "virtio-throttled"}},
    "filesystem": {"type": "zfs", "vdevs": ["vd"], "recordsize": "128K", "arc": {"zfs_arc_max": "256MiB"}},
    "workload": {"type": "fio", "jobs": "[global]\nsize=64m\nbs=128k\nruntime=2\n[r]\nrw=randread\n"},
    "variants": {"zfs": {}},
}

# The write path: InnoDB's logs in a dataset of their own (a second intent log), the
# binary log, drives behind a RAID controller's write-back cache, and ext4 on md RAID10
# over the same drives.
WRITE_DRIVES = ["sda", "sdb", "sdc", "sdd"]
SYSBENCH_WRITE = {
    "name": "fuzz-write",
    "seed": 1,
    "machine": {"preset": "lab-guest"},
    "controllers": {"raid": {"model": "fuzz", "cache": "64MiB"}},
    "devices": {d: {"preset": "sas-15k-600g", "controller": "raid"} for d in WRITE_DRIVES}
    | {"md0": {"type": "md-raid10", "members": WRITE_DRIVES, "layout": "n2", "chunk": "512K"}},
    "filesystem": {
        "type": "zfs",
        "vdevs": [{"mirror": ["sda", "sdb"]}, {"mirror": ["sdc", "sdd"]}],
        "recordsize": "16K",
        "log_recordsize": "128K",
        "logbias": "throughput",
        "arc": {"zfs_arc_max": "256MiB"},
    },
    "database": {
        "innodb_buffer_pool_size": "64MiB",
        "innodb_flush_method": "O_DSYNC",
        "innodb_log_file_size": "48MiB",
        "log_bin": True,
        "sync_binlog": 1,
    },
    "dataset": {"tables": 2, "table_size": 20000},
    "workload": {"type": "sysbench", "test": "oltp_update_index", "threads": 4},
    "run": {"warmup": "1s", "duration": "2s", "report_interval": "1s"},
    "variants": {"zfs": {}, "ext4": {"filesystem": {"type": "ext4", "device": "md0"}}},
}

BASES = {"sysbench": SYSBENCH_ZFS, "fio": FIO_ZFS, "sysbench-write": SYSBENCH_WRITE}

ADVERSARIAL = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**32, 2**53 + 1, 2**63, 2**64 + 5, 10**30]),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -0.0, 0.5]),
    st.sampled_from(["", "4", "0", "-1K", "1Q", "99999999999999T", "1e300s", "nan", "16K", "1s", "x" * 300]),
    st.booleans(),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.sampled_from(["a", "type", "preset"]), st.integers(-1, 1), max_size=2),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)

# Values of the right shape but unusual size, so that more mutants pass the schema and
# reach the core's checks and the stack's construction.
PLAUSIBLE = st.one_of(
    st.sampled_from([1, 2, 3, 7, 64, 512, 4096, 65536, 1 << 20, 1 << 30, 4096 * 4096]),
    st.sampled_from(["512", "4K", "8K", "32K", "1M", "1M", "64M", "1G", "6G", "64G", "1T", "100T"]),
    st.sampled_from(["1ms", "1s", "10s", "1h", "30d", "0s"]),
    st.sampled_from(["zfs", "ext4", "xfs", "lz4", "off", "zstd", "0.6", "2.2", "all", "none", "metadata"]),
    st.floats(min_value=0.01, max_value=100.0),
)


def _paths(doc: dict, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested dict (tables and their keys)."""
    out = []
    for k, v in doc.items():
        out.append(prefix + (k,))
        if isinstance(v, dict):
            out += _paths(v, prefix + (k,))
    return out


def _get(doc: dict, path: tuple):
    for k in path:
        doc = doc[k]
    return doc


@st.composite
def mutants(draw, base: dict) -> dict:
    doc = copy.deepcopy(base)
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        paths = _paths(doc)
        leaves = [p for p in paths if not isinstance(_get(doc, p), dict) and p[0] not in ("name", "variants")]
        if leaves and draw(st.integers(0, 4)) > 0:
            paths = leaves
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["set", "set", "set", "delete", "unknown"]))
        if action == "set":
            parent[path[-1]] = draw(st.one_of(PLAUSIBLE, ADVERSARIAL))
        elif action == "delete":
            del parent[path[-1]]
        else:
            parent[draw(st.sampled_from(["zfs_arc_maxx", "threads2", "type_", "recordsize "]))] = draw(ADVERSARIAL)
    return doc


def _validate_like_the_cli(doc: dict) -> None:
    try:
        sc = load_scenario(doc)
    except ZtwinError:
        return
    try:
        ztwin.check_variants(sc)
    except ZtwinError:
        return


@pytest.mark.parametrize("kind", sorted(BASES))
def test_mutated_scenarios_get_typed_errors_never_crashes(kind):
    @seed(20261125)
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(mutants(BASES[kind]))
    def check(doc):
        _validate_like_the_cli(doc)

    check()


def test_the_bases_are_valid():
    """The mutants start from valid scenarios (a harness of invalid bases tests little)."""
    for base in BASES.values():
        ztwin.check_variants(load_scenario(copy.deepcopy(base)))


FIO_LINES = st.lists(
    st.one_of(
        st.sampled_from([
            "[global]", "[j]", "rw=randread", "rw=write", "bs=0", "bs=-4k", "bs=1Q", "size=0", "size=99999999999999t",
            "numjobs=0", "numjobs=2147483648", "iodepth=0", "iodepth=1048576", "runtime=-1", "filename=:",
            "filename_format=$jobnum.$filenum", "nrfiles=0", "nrfiles=100000000", "rate_iops=0", "offset=200%",
            "randrepeat=2", "ioengine=nope", "buffer_compress_percentage=101", "buffer_compress_chunk=0",
            "direct=1", "end_fsync=1", "stonewall", "=", "bs", "'unbalanced", "size=1m", "bs=4k",
        ]),
        st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=15),
    ),
    min_size=1,
    max_size=8,
)


@seed(20261125)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(FIO_LINES)
def test_fio_job_files_get_typed_errors_never_crashes(lines):
    doc = copy.deepcopy(FIO_ZFS)
    doc["workload"]["jobs"] = "[global]\nsize=64m\nruntime=2\n" + "\n".join(lines) + "\n[r]\nrw=randread\n"
    _validate_like_the_cli(doc)
