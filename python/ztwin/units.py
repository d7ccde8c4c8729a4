"""Sizes, durations and rates as users write them in scenarios.

Sizes
    ``K``, ``M``, ``G``, ``T``, ``P`` (one letter, either case) are powers of 1024, as
    ``zfs set recordsize=16K`` and MySQL option syntax (``innodb_buffer_pool_size=2G``)
    read them. ``KiB``, ``MiB``, ``GiB``, ``TiB``, ``PiB`` are powers of 1024 too.
    ``KB``, ``MB``, ``GB``, ``TB``, ``PB`` are powers of 1000, as AWS, Azure and disk
    vendors use them (a "1000 GB" disk is 10^12 bytes). ``B`` or no suffix is bytes; a
    plain integer is bytes. Fractions are allowed when the result is a whole number of
    bytes (``"2.5GiB"``, ``"1.5K"``); spaces between number and unit are allowed
    (``"1000 GB"``). A suffix ending in a lower-case ``b`` (``"Mb"``, ``"kb"``) is
    rejected: it reads as bits.

Durations
    ``ns``, ``us`` (or ``µs``), ``ms``, ``s``, ``m`` (or ``min``), ``h``, with fractions
    (``"1.5s"``, ``"250ms"``, ``"10m"``); the result is an integer of nanoseconds and must
    be whole. A bare number needs a unit, except ``0``.

Rates
    A size per second: ``"250MB/s"``, ``"125MiB/s"``, ``"1.5GB/s"`` (the size rules
    above); a plain number is bytes per second. Rates come back as ``float`` bytes per
    second (the core's throughput fields are ``f64``).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = [
    "UnitError",
    "parse_size",
    "parse_duration",
    "parse_rate",
    "format_size",
    "format_duration",
    "SIZE_UNITS",
    "DURATION_UNITS",
]


class UnitError(ValueError):
    """A size, duration or rate that cannot be read; the message says what is allowed."""


SIZE_UNITS: dict[str, int] = {"": 1, "B": 1}
for _i, _p in enumerate("KMGTP", start=1):
    SIZE_UNITS[_p] = 1024**_i
    SIZE_UNITS[_p.lower()] = 1024**_i
    SIZE_UNITS[_p + "iB"] = 1024**_i
    SIZE_UNITS[_p + "B"] = 1000**_i
SIZE_UNITS["kB"] = 1000  # the SI spelling of kilobyte

DURATION_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "min": 60_000_000_000,
    "h": 3_600_000_000_000,
}

_NUM_UNIT = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]+)?|\.[0-9]+)\s*([A-Za-zµ]*)\s*$")

_SIZE_HELP = (
    "write bytes as an integer or a number with a unit: K/M/G/T or KiB/MiB/GiB/TiB "
    "(powers of 1024), KB/MB/GB/TB (powers of 1000), e.g. '16K', '2.5GiB', '1000GB'"
)
_DURATION_HELP = "write a number with a unit: ns, us, ms, s, m, h, e.g. '250ms', '600s', '10m'"
_RATE_HELP = "write a size per second, e.g. '250MB/s', '125MiB/s' (or a number of bytes per second)"


def _split(text: str, help_: str) -> tuple[Decimal, str]:
    m = _NUM_UNIT.match(text)
    if not m:
        raise UnitError(f"cannot read {text!r}: {help_}")
    try:
        num = Decimal(m.group(1).replace("_", ""))
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        raise UnitError(f"cannot read {text!r}: {help_}") from None
    return num, m.group(2)


def parse_size(value: int | str) -> int:
    """Returns the number of bytes in ``value`` (see the module docs for the units)."""
    if isinstance(value, bool):
        raise UnitError(f"expected a size, got {value!r}: {_SIZE_HELP}")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"a size cannot be negative, got {value}")
        return value
    if isinstance(value, float):
        raise UnitError(f"expected a size, got the float {value!r}: {_SIZE_HELP}")
    if not isinstance(value, str):
        raise UnitError(f"expected a size, got {type(value).__name__}: {_SIZE_HELP}")
    num, unit = _split(value, _SIZE_HELP)
    if unit not in SIZE_UNITS:
        if len(unit) >= 2 and unit.endswith("b"):
            raise UnitError(f"cannot read {value!r}: a lower-case 'b' means bits; write 'B' for bytes")
        raise UnitError(f"unknown size unit {unit!r} in {value!r}: {_SIZE_HELP}")
    total = num * SIZE_UNITS[unit]
    if total != total.to_integral_value():
        raise UnitError(f"{value!r} is not a whole number of bytes ({total} B)")
    return int(total)


def parse_duration(value: int | str) -> int:
    """Returns the number of nanoseconds in ``value`` (see the module docs for the units)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UnitError(f"expected a duration, got {value!r}: {_DURATION_HELP}")
    if isinstance(value, int):
        if value == 0:
            return 0
        raise UnitError(f"a duration needs a unit, got the bare number {value}: {_DURATION_HELP}")
    num, unit = _split(value, _DURATION_HELP)
    if unit == "":
        if num == 0:
            return 0
        raise UnitError(f"a duration needs a unit, got {value!r}: {_DURATION_HELP}")
    if unit not in DURATION_UNITS:
        raise UnitError(f"unknown duration unit {unit!r} in {value!r}: {_DURATION_HELP}")
    total = num * DURATION_UNITS[unit]
    if total != total.to_integral_value():
        raise UnitError(f"{value!r} is not a whole number of nanoseconds")
    return int(total)


def parse_rate(value: int | float | str) -> float:
    """Returns bytes per second for ``value`` such as ``"250MB/s"`` (see the module docs)."""
    if isinstance(value, bool):
        raise UnitError(f"expected a rate, got {value!r}: {_RATE_HELP}")
    if isinstance(value, (int, float)):
        if value < 0 or value != value:
            raise UnitError(f"a rate must be a non-negative number, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise UnitError(f"expected a rate, got {type(value).__name__}: {_RATE_HELP}")
    text = value.strip()
    if not text.endswith("/s"):
        raise UnitError(f"cannot read {value!r} as a rate: {_RATE_HELP}")
    try:
        return float(parse_size(text[:-2]))
    except UnitError as e:
        raise UnitError(f"cannot read {value!r} as a rate: {_RATE_HELP} ({e})") from None


def format_size(n: int) -> str:
    """Formats bytes with the largest 1024-based unit that keeps at most 2 decimals exact.

    ``parse_size(format_size(n)) == n`` for every non-negative integer ``n``.
    """
    for suffix, mult in (("PiB", 1024**5), ("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= mult:
            q = Decimal(n) / mult
            for places in (0, 1, 2):
                r = round(q, places)
                if r * mult == n:
                    return f"{r:f}{suffix}" if places else f"{int(r)}{suffix}"
    return f"{n}B"


def format_duration(ns: int) -> str:
    """Formats nanoseconds with the largest unit that divides them exactly."""
    for suffix in ("h", "m", "s", "ms", "us"):
        mult = DURATION_UNITS[suffix]
        if ns and ns % mult == 0:
            return f"{ns // mult}{suffix}"
    return f"{ns}ns"


def human_size(n: float) -> str:
    """Approximate, for display only: '15.25 GiB'."""
    for suffix, mult in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= mult:
            return f"{n / mult:.2f} {suffix}".replace(".00 ", " ")
    return f"{int(n)} B"
