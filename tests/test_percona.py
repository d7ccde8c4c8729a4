"""Percona Server 5.7 in a scenario (experiment 2's server): ``server = "percona-5.7"`` with
its flushing options resolves to the core's config, runs a write test on ZFS and on ext4, and
reports by Percona's status names."""

from __future__ import annotations

import copy
import json

from test_config_contract import check
from ztwin import load_scenario, resolve

PERCONA = {
    "name": "percona",
    "machine": {"preset": "aws-i3.large"},
    "devices": {"d": {"preset": "nvme-local"}},
    "filesystem": {"type": "zfs", "release": "0.8", "ashift": 12, "recordsize": "16K", "vdevs": ["d"], "arc": {"zfs_arc_max": "1GiB"}},
    "database": {
        "server": "percona-5.7", "innodb_flush_method": "O_DIRECT", "innodb_buffer_pool_size": "32M",
        "innodb_io_capacity": 600, "innodb_doublewrite": False,
    },
    "dataset": {"tables": 4, "table_size": 100000},
    "workload": {"test": "oltp_update_index", "threads": 8},
    "run": {"warmup": "5s", "duration": "5s"},
    "variants": {
        "zfs": {},
        "ext4-legacy": {
            "filesystem": {"type": "ext4", "device": "d"},
            "database": {"innodb_empty_free_list_algorithm": "legacy", "innodb_cleaner_lsn_age_factor": "legacy"},
        },
    },
}


def test_percona_options_resolve_unset_as_the_servers_defaults():
    r = resolve(PERCONA)
    z, e = r["zfs"]["database"], r["ext4-legacy"]["database"]
    assert z["server"] == "percona-5.7"
    assert (z["innodb_empty_free_list_algorithm"], z["innodb_cleaner_lsn_age_factor"], z["innodb_buffer_pool_instances"]) == (None, None, None)
    assert (e["innodb_empty_free_list_algorithm"], e["innodb_cleaner_lsn_age_factor"]) == ("legacy", "legacy")
    for name, cfg in r.items():
        check(cfg, "VariantConfig", name)


def test_percona_runs_and_reports_by_its_status_names():
    from ztwin import _core

    sc = load_scenario(copy.deepcopy(PERCONA))
    for name, cfg in sc.variants.items():
        doc = json.loads(_core.run_variant(json.dumps(cfg)))
        i = doc["innodb"]
        assert doc["tps"] > 0, name
        assert i["Innodb_buffer_pool_pages_flushed"] > 0, (name, i)
        assert i["Innodb_buffer_pool_pages_LRU_flushed"] == 0, (name, i)
        assert i["Innodb_checkpoint_age"] == i["checkpoint_age_bytes"], (name, i)
        assert i["Innodb_checkpoint_max_age"] > 0, (name, i)
        assert i["lru_manager"]["loops"] > 0, (name, i)
        assert "buffer_flush_adaptive_total_pages" in i["innodb_metrics"], (name, i)
