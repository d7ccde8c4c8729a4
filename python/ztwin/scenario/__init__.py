"""Scenarios: the TOML users write, validated and resolved into the core's ``VariantConfig``.

A scenario file has these tables (every key is checked; an unknown key is an error)::

    name = "exp1-arc-sizing"          # required
    description = "..."
    seed = 42                         # default 0
    [machine]        preset = "aws-i3.large"; any field overridable (vcpus, ram, [machine.cpu])
    [devices.NAME]   preset = "aws-gp2"; size = "1000GiB"; any DeviceConfig field overridable;
                     controller = "NAME" puts the device behind [controllers.NAME]
    [devices.NAME]   type = "md-raid10"; members = [...]; layout = "n2"; chunk = "512K"
                     (a Linux md array a filesystem's device may name)
    [controllers.NAME] a hardware RAID controller's battery-backed cache: cache = "1GiB",
                     write_policy = "write-back" | "write-through", cache_latency, ...
    [filesystem]     type = "zfs" | "xfs" | "ext4", then the fields of that filesystem
    [filesystem.arc] ZFS ARC tunables named as in zfs(4)
    [filesystem.bcache] XFS/ext4 on bcache: cache_device and bcache's sysfs tunables
    [database]       type = "innodb", options named as in the MySQL manual
    [dataset]        type = "sysbench", tables, table_size, prepare_rand_type, compress_ratio
                     | type = "tpcc", scale, tables, compress_ratio, order_capacity (sysbench-tpcc)
    [workload]       type = "sysbench", test, threads, rand_type, ... (sysbench option names;
                     test = "tpcc" runs sysbench-tpcc's transactions on a tpcc dataset)
    [run]            warmup, duration, report_interval
    [variants.NAME]  any of the tables above, deep-merged over the base

Sizes, durations and rates follow :mod:`ztwin.units` (:mod:`.values`). Variants are
merged table by table (:mod:`.merge` has the rules). Without ``[variants]`` there is one
variant, named ``base``.

:func:`load_scenario` reads and validates a file (or a dict) and resolves every variant;
:func:`resolve` returns the resolved variants, one dict per variant with exactly the keys
of the core's ``VariantConfig`` (bytes and nanoseconds as integers). Every error found is
reported at once in a :class:`~ztwin.exceptions.ScenarioError`.

The modules, in the order a scenario passes through them:

- :mod:`.values`: the strict value types of the tables (sizes, durations, rates, ranges).
- :mod:`.schema`: the pydantic models of the tables, one per table.
- :mod:`.merge`: a variant's overrides merged into the base.
- :mod:`.hardware`: ``[machine]``, ``[devices.*]`` (devices and md arrays) and
  ``[controllers.*]`` resolved through their presets.
- :mod:`.resolution`: a validated variant turned into a ``VariantConfig``, with the
  checks across tables.
- :mod:`.errors`: errors in the user's terms (keys as written, TOML types) and their message.
- :mod:`.load`: reading files, validating every variant, the public entry points.
"""

from __future__ import annotations

# The names other modules import from ztwin.scenario; each is defined in the module named.
from .hardware import gp2_limits
from .load import DEFAULT_SCENARIO, Scenario, load_scenario, resolve
from .merge import merge_variant
from .schema import DeviceSpec, MachineSpec, ScenarioSpec
from .values import GiB, MiB

__all__ = [
    "Scenario",
    "load_scenario",
    "resolve",
    "ScenarioSpec",
    "MachineSpec",
    "DeviceSpec",
    "gp2_limits",
    "DEFAULT_SCENARIO",
    "merge_variant",
    "GiB",
    "MiB",
]
