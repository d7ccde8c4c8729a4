"""Machine and device presets shipped with ztwin (``machines.toml``, ``devices.toml``).

Each preset is a table of the same fields a scenario's ``[machine]`` or ``[devices.NAME]``
table takes (without ``preset``); a scenario names a preset and overrides any field. The
files are validated with the scenario models when first loaded, so a typo in a preset is
an error, never ignored.

A preset may carry a ``ranges`` sub-table: its provisional parameters, each ``[lo, hi]``
(see :mod:`ztwin.uncertainty`). It is taken off the preset's table before validation
(``raw_*_presets`` and the validated presets do not have it) and checked on its own
(:func:`preset_ranges`).
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Any

__all__ = ["machine_presets", "device_presets", "raw_machine_presets", "raw_device_presets", "preset_ranges"]


@functools.cache
def _load(name: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The presets of ``name`` without their ``ranges`` sub-tables, and those apart."""
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    tables = tomllib.loads(text)
    ranges = {}
    for preset, table in tables.items():
        if isinstance(table, dict) and "ranges" in table:
            ranges[preset] = table.pop("ranges")
    return tables, ranges


@functools.cache
def raw_machine_presets() -> dict[str, dict[str, Any]]:
    """The tables of ``machines.toml`` as read (values as written: "15.25GiB"), without ``ranges``."""
    return _load("machines.toml")[0]


@functools.cache
def raw_device_presets() -> dict[str, dict[str, Any]]:
    """The tables of ``devices.toml`` as read, without ``ranges``."""
    return _load("devices.toml")[0]


@functools.cache
def preset_ranges() -> dict[tuple[str, str], Any]:
    """The provisional parameters' ranges of every preset, checked against the preset's
    model and own values: ``{("machine" | "device", preset): {key: Range}}``. A bad range
    is a :class:`ztwin.uncertainty.RangeError` naming the file, preset and key."""
    from ..scenario.schema import DeviceSpec, MachineSpec
    from ..uncertainty import parse_ranges

    out: dict[tuple[str, str], Any] = {}
    for kind, fname, model, raw in (("machine", "machines.toml", MachineSpec, raw_machine_presets()), ("device", "devices.toml", DeviceSpec, raw_device_presets())):
        for preset, table in _load(fname)[1].items():
            out[(kind, preset)] = parse_ranges(table, f"{fname} [{preset!r}].ranges".replace("'", '"'), model, raw.get(preset))
    return out


@functools.cache
def machine_presets() -> dict[str, Any]:
    """Validated machine presets by name (``MachineSpec`` instances)."""
    from ..scenario.schema import MachineSpec

    out = {}
    for name, table in raw_machine_presets().items():
        if "preset" in table:
            raise ValueError(f"machines.toml [{name}]: a preset cannot name another preset")
        out[name] = MachineSpec.model_validate(table)
    return out


@functools.cache
def device_presets() -> dict[str, Any]:
    """Validated device presets by name (``DeviceSpec`` instances)."""
    from ..scenario.schema import DeviceSpec

    out = {}
    for name, table in raw_device_presets().items():
        if "preset" in table:
            raise ValueError(f"devices.toml [{name}]: a preset cannot name another preset")
        out[name] = DeviceSpec.model_validate(table)
    return out
