"""Machine and device presets shipped with ztwin (``machines.toml``, ``devices.toml``).

Each preset is a table of the same fields a scenario's ``[machine]`` or ``[devices.NAME]``
table takes (without ``preset``); a scenario names a preset and overrides any field. The
files are validated with the scenario models when first loaded, so a typo in a preset is
an error, never ignored.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Any

__all__ = ["machine_presets", "device_presets", "raw_machine_presets", "raw_device_presets"]


def _load(name: str) -> dict[str, dict[str, Any]]:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return tomllib.loads(text)


@functools.cache
def raw_machine_presets() -> dict[str, dict[str, Any]]:
    """The tables of ``machines.toml`` as read (values as written: "15.25GiB")."""
    return _load("machines.toml")


@functools.cache
def raw_device_presets() -> dict[str, dict[str, Any]]:
    """The tables of ``devices.toml`` as read."""
    return _load("devices.toml")


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
