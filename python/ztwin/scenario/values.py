"""The value types of scenario tables: sizes, durations and rates parsed as
:mod:`ztwin.units` says, ranges and powers of two checked, preset names looked up.

Each is an ``Annotated`` type a model field uses; a value that does not parse is a
pydantic error of its own kind (``size``, ``duration``, ``recordsize``, ...) with the
message in the user's terms.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from .. import units

MiB = 1 << 20
GiB = 1 << 30


def _unit_validator(fn, kind: str):
    def check(v: Any) -> Any:
        try:
            return fn(v)
        except units.UnitError as e:
            raise PydanticCustomError(kind, str(e)) from None

    return check


def _rate_or_none(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("none", "unlimited"):
        return "none"
    return units.parse_rate(v)


def _iops_or_none(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("none", "unlimited"):
        return "none"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise units.UnitError(f"expected operations per second (a number) or \"none\", got {v!r}")
    if not (v > 0 and math.isfinite(v)):
        raise units.UnitError(f"must be a positive number of operations per second, got {v!r}")
    return float(v)


def _ms_or_duration(v: Any) -> Any:
    # innodb_old_blocks_time is in milliseconds in MySQL: a bare integer is ms.
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise units.UnitError(f"must not be negative, got {v}")
        return v * 1_000_000
    return units.parse_duration(v)


Size = Annotated[int, BeforeValidator(_unit_validator(units.parse_size, "size"))]
Duration = Annotated[int, BeforeValidator(_unit_validator(units.parse_duration, "duration"))]
Rate = Annotated[float, BeforeValidator(_unit_validator(units.parse_rate, "rate"))]
RateOrNone = Annotated[Union[float, Literal["none"]], BeforeValidator(_unit_validator(_rate_or_none, "rate"))]
IopsOrNone = Annotated[Union[float, Literal["none"]], BeforeValidator(_unit_validator(_iops_or_none, "iops"))]
MsDuration = Annotated[int, BeforeValidator(_unit_validator(_ms_or_duration, "duration"))]
PosInt = Annotated[int, Field(ge=1)]


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check(pred, kind: str, msg: str):
    def check(v: Any) -> Any:
        if not pred(v):
            raise PydanticCustomError(kind, msg)
        return v

    return AfterValidator(check)


def _known(which: str):
    def check(v: Any) -> Any:
        from .. import presets

        known = presets.machine_presets() if which == "machine" else presets.device_presets()
        if v not in known:
            msg = f"unknown {which} preset {v!r}; known: {', '.join(known)}"
            raise PydanticCustomError("unknown_preset", msg.replace("{", "{{").replace("}", "}}"))
        return v

    return AfterValidator(check)


RecordSize = Annotated[Size, _check(lambda n: _pow2(n) and 512 <= n <= 16 * MiB, "recordsize",
                                    "must be a power of two from 512 B to 16 MiB (512, 1K, ..., 128K, ..., 16M)")]
IndirectSize = Annotated[Size, _check(lambda n: _pow2(n) and 4096 <= n <= 128 * 1024, "indirect_block_size",
                                      "must be a power of two from 4K to 128K (16K: files created under 0.6.x; 128K since 0.7.0)")]
Ashift = Annotated[int, _check(lambda n: 9 <= n <= 16, "ashift", "must be 9 to 16 (512 B to 64 KiB sectors)")]
FsBlockSize = Annotated[Size, _check(lambda n: _pow2(n) and 512 <= n <= 65536, "block_size", "must be a power of two from 512 to 64K")]
PageSize = Annotated[Size, _check(lambda n: n in (4096, 8192, 16384, 32768, 65536), "innodb_page_size", "must be 4K, 8K, 16K, 32K or 64K")]
OldBlocksPct = Annotated[int, _check(lambda n: 5 <= n <= 95, "innodb_old_blocks_pct", "must be 5 to 95 (MySQL's range)")]
Ratio = Annotated[float, _check(lambda x: x >= 1.0 and math.isfinite(x), "compress_ratio", "must be at least 1.0 (uncompressed / compressed)")]
MachinePreset = Annotated[str, _known("machine")]
DevicePreset = Annotated[str, _known("device")]


def _module_bool(v: Any) -> Any:
    """A kernel module parameter's boolean as zfs(4) writes it: 0 or 1, or true/false."""
    if type(v) is int and v in (0, 1):
        return bool(v)
    return v


# zfs(4) and other module parameters: true/false or 0/1 (nothing else).
ModuleBool = Annotated[bool, BeforeValidator(_module_bool)]
