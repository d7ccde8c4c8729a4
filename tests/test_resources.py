"""Memory before a run (issue 16, part 4): the core's estimate by part, printed by
``ztwin validate``, and the refusal of ``ztwin run`` / ``ztwin.run`` / loading past the
memory available (a monkeypatched ``MemAvailable``), with its escape hatch. The estimate's
accuracy against measured peaks is the core's test (crates/ztwin-core/tests/mem_estimate.rs)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ztwin
from ztwin import resources
from ztwin.cli import app

runner = CliRunner()

SMALL = """
name = "small"
[machine]
preset = "lab-guest"
[devices.vd]
preset = "virtio-throttled"
[filesystem]
type = "zfs"
vdevs = ["vd"]
[filesystem.arc]
zfs_arc_max = "256MiB"
[database]
type = "innodb"
[dataset]
type = "sysbench"
tables = 2
table_size = 10000
[workload]
type = "sysbench"
test = "oltp_point_select"
threads = 2
[run]
warmup = "0s"
duration = "1s"
report_interval = "1s"
[variants.small]
[variants.big]
database = { innodb_buffer_pool_size = "2GiB" }
"""

PARTS = {"buffer_pool", "arc_headers", "dbufs", "l2arc", "pool_map", "zfetch", "bcache", "page_cache", "writes", "files", "fio_maps", "series", "clients", "fixed"}


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


@pytest.fixture
def mem_available(monkeypatch, tmp_path):
    """Sets the machine's MemAvailable (bytes) as ztwin reads it."""

    def set_available(n_bytes: int) -> None:
        f = tmp_path / "meminfo"
        f.write_text(f"MemTotal:       99999999 kB\nMemFree:        1000 kB\nMemAvailable:   {n_bytes // 1024} kB\n")
        monkeypatch.setattr(resources, "_MEMINFO", str(f))

    return set_available


def test_estimate_by_part(scenario):
    small = ztwin.estimate_memory(scenario, "small")
    big = ztwin.estimate_memory(scenario, "big")
    assert set(small) == PARTS and all(isinstance(v, int) and v >= 0 for v in small.values())
    # 2 GiB of 16K frames: 28 bytes a frame of LRU node and free-list entry, and a page
    # table (here dense over the two small tables: a few bytes; hashed, 22 bytes a frame).
    assert 3 << 20 < big["buffer_pool"] - small["buffer_pool"] < 12 << 20
    assert sum(big.values()) > sum(small.values())
    with pytest.raises(ztwin.ScenarioError, match="no variant 'nope'"):
        ztwin.estimate_memory(scenario, "nope")


def test_available_memory_reads_meminfo(mem_available, monkeypatch, tmp_path):
    mem_available(3 << 30)
    assert resources.available_memory() == 3 << 30
    monkeypatch.setattr(resources, "_MEMINFO", str(tmp_path / "absent"))
    assert resources.available_memory() is None


def test_run_refuses_past_the_memory_available(scenario, mem_available, fake_run_variant):
    big = sum(ztwin.estimate_memory(scenario, "big").values())
    small = sum(ztwin.estimate_memory(scenario, "small").values())
    mem_available((big + small) // 2)
    with pytest.raises(ztwin.ResourceError) as e:
        ztwin.run(scenario)
    err = e.value
    assert (err.variant, err.needed_bytes, err.available_bytes) == ("big", big, (big + small) // 2 // 1024 * 1024)
    assert err.parts["buffer_pool"] > 0
    msg = str(err)
    assert "variant big" in msg and "needs an estimated" in msg and "MemAvailable" in msg
    assert "largest parts: buffer_pool" in msg and "--no-memory-check" in msg and "memory_check=False" in msg
    assert fake_run_variant == [], "nothing ran"
    # A loaded scenario is checked again before its first variant runs.
    sc = ztwin.load_scenario(scenario, memory_check=False)
    with pytest.raises(ztwin.ResourceError):
        ztwin.run(sc)
    assert fake_run_variant == []
    # The variants that fit run; the escape hatch runs the rest.
    ztwin.run(scenario, variants=["small"])
    ztwin.run(sc, memory_check=False)
    assert [c["variant"] for c in fake_run_variant] == ["small", "small", "big"]


def test_an_unknown_memory_is_not_checked(scenario, monkeypatch, tmp_path, fake_run_variant):
    monkeypatch.setattr(resources, "_MEMINFO", str(tmp_path / "absent"))
    ztwin.run(scenario)
    assert len(fake_run_variant) == 2


def test_cli_validate_prints_the_estimates_and_run_refuses(scenario, mem_available, fake_run_variant):
    r = runner.invoke(app, ["validate", str(scenario)])
    assert r.exit_code == 0, r.output
    assert list(json.loads(r.stdout)) == ["small", "big"], "stdout is the JSON, as before"
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("memory: ")]
    assert [ln.split(":")[1].strip() for ln in lines] == ["small", "big"]
    assert "about" in lines[1] and "buffer_pool" in lines[1]

    big = sum(ztwin.estimate_memory(scenario, "big").values())
    mem_available(big - (1 << 20))
    for cmd in (["validate", str(scenario)], ["run", str(scenario), "--quiet"]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2, r.output
        assert f"{cmd[0]} error:" in r.stderr and "variant big" in r.stderr and "--no-memory-check" in r.stderr
    assert fake_run_variant == []
    r = runner.invoke(app, ["validate", str(scenario), "--no-memory-check"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["run", str(scenario), "--quiet", "--no-memory-check", "--json"])
    assert r.exit_code == 0, r.output
    assert [c["variant"] for c in fake_run_variant] == ["small", "big"]
