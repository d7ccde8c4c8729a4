"""sysbench-tpcc in a scenario file: ``[dataset] type = "tpcc"`` with ``test = "tpcc"``
resolves to the core's config, runs end to end on ZFS and on ext4 and reports tps over all
five transactions with each type's count; a mismatched test or dataset is refused by the
key as written."""

from __future__ import annotations

import json

import pytest

from test_config_contract import check
from ztwin import ScenarioError, load_scenario, resolve

TOML = """
name = "tpcc-tiny"
[machine]
preset = "aws-i3.large"
[devices.d]
preset = "nvme-local"
[filesystem]
type = "zfs"
release = "0.8"
ashift = 12
recordsize = "16K"
compression = "lz4"
vdevs = ["d"]
arc = { zfs_arc_max = "1GiB" }
[database]
innodb_buffer_pool_size = "32M"
innodb_flush_method = "O_DIRECT"
[dataset]
type = "tpcc"
scale = 2
tables = 1
compress_ratio = 3.0
[workload]
test = "tpcc"
threads = 4
[run]
warmup = "1s"
duration = "4s"
[variants.zfs]
[variants.ext4]
filesystem = { type = "ext4", device = "d" }
"""


def _write(tmp_path, text):
    p = tmp_path / "tpcc.toml"
    p.write_text(text)
    return p


def test_tpcc_resolves_to_the_cores_config(tmp_path):
    r = resolve(_write(tmp_path, TOML))
    for name, cfg in r.items():
        assert cfg["dataset"] == {"type": "tpcc", "scale": 2, "tables": 1, "compress_ratio": 3.0, "order_capacity": 6000}
        assert cfg["workload"]["test"] == "tpcc"
        check(cfg, "VariantConfig", name)


def test_tpcc_runs_end_to_end_on_zfs_and_ext4(tmp_path):
    from ztwin import _core

    sc = load_scenario(_write(tmp_path, TOML))
    for name, cfg in sc.variants.items():
        doc = json.loads(_core.run_variant(json.dumps(cfg)))
        t = doc["tpcc"]
        kinds = ["new_order", "payment", "order_status", "delivery", "stock_level", "new_order_rollback"]
        total = sum(t[k] for k in kinds)
        assert total > 100, (name, t)
        # sysbench's tps counts every transaction type.
        assert doc["tps"] * doc["window_s"] == pytest.approx(total, rel=0.02), (name, doc["tps"], t)
        assert t["new_order"] + t["new_order_rollback"] == t["new_order_total"]
        assert 0.3 < t["new_order_total"] / total < 0.57, (name, t)
        assert doc["latency_ms"]["p95"] > 0, name
        assert doc["qps"] > 10 * doc["tps"], name


@pytest.mark.parametrize(
    "old,new,key",
    [
        ('test = "tpcc"', 'test = "oltp_read_write"', "test"),
        ('type = "tpcc"\nscale = 2\ntables = 1\ncompress_ratio = 3.0', "tables = 1", "type"),
        ("compress_ratio = 3.0", "", "compress_ratio"),
        ("scale = 2", "scale = 0", "scale"),
    ],
)
def test_tpcc_mismatches_are_refused_by_key(tmp_path, old, new, key):
    text = TOML.replace(old, new, 1)
    with pytest.raises(ScenarioError) as e:
        resolve(_write(tmp_path, text))
    assert key in str(e.value), str(e.value)


def test_ztwin_run_prints_each_transaction_type(tmp_path):
    from typer.testing import CliRunner

    from ztwin.cli import app

    r = CliRunner().invoke(app, ["run", str(_write(tmp_path, TOML)), "--variant", "zfs", "--summary-only", "-q"])
    assert r.exit_code == 0, r.output
    for k in ("transactions (tps)", "tpcc new_order", "tpcc payment", "tpcc order_status", "tpcc delivery", "tpcc stock_level"):
        assert k in r.output, r.output


def test_geometry_refuses_a_tpcc_scenario(tmp_path):
    from typer.testing import CliRunner

    from ztwin.cli import app

    r = CliRunner().invoke(app, ["geometry", "--scenario", str(_write(tmp_path, TOML))])
    assert r.exit_code != 0
    assert "tpcc" in r.output
