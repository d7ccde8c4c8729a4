"""Sizes, durations and rates (ztwin.units)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ztwin.units import UnitError, format_duration, format_size, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize(
    "text, expected",
    [
        ("16K", 16384),
        ("16k", 16384),
        ("16KiB", 16384),
        ("2.5GiB", 2684354560),
        ("2.5G", 2684354560),
        ("850GB", 850 * 10**9),
        ("1000 GB", 10**12),
        ("1kB", 1000),
        ("1MB", 10**6),
        ("1TB", 10**12),
        ("1TiB", 2**40),
        ("512", 512),
        ("512B", 512),
        ("1.5K", 1536),
        (4096, 4096),
        (0, 0),
        ("10_000", 10000),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("16Mb", "bits"),
        ("16kb", "bits"),
        ("16X", "unknown size unit 'X'"),
        ("0.3K", "not a whole number of bytes"),
        ("abc", "cannot read 'abc'"),
        ("-5K", "cannot read"),
        (-5, "negative"),
        (1.5, "float"),
        (True, "expected a size"),
        ("", "cannot read"),
    ],
)
def test_parse_size_errors(text, fragment):
    with pytest.raises(UnitError, match=fragment) as e:
        parse_size(text)
    if isinstance(text, str) and text and fragment != "bits":
        assert "KiB" in str(e.value) or "whole number" in str(e.value)


@pytest.mark.parametrize(
    "text, ns",
    [
        ("600s", 600 * 10**9),
        ("10m", 600 * 10**9),
        ("10min", 600 * 10**9),
        ("1h", 3600 * 10**9),
        ("250ms", 250 * 10**6),
        ("1.5s", 1_500_000_000),
        ("90us", 90_000),
        ("90µs", 90_000),
        ("7ns", 7),
        (0, 0),
        ("0", 0),
    ],
)
def test_parse_duration(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    "text, fragment",
    [(600, "needs a unit"), ("600", "needs a unit"), ("5 days", "unknown duration unit"), ("1.5ns", "whole number"), ("x", "cannot read")],
)
def test_parse_duration_errors(text, fragment):
    with pytest.raises(UnitError, match=fragment):
        parse_duration(text)


@pytest.mark.parametrize(
    "text, bps",
    [("250MB/s", 250e6), ("125MiB/s", 125 * 2**20), ("1.5GB/s", 1.5e9), (1000, 1000.0), ("250 MB/s", 250e6)],
)
def test_parse_rate(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("text", ["250MB", "fast", "250Mb/s", -1])
def test_parse_rate_errors(text):
    with pytest.raises(UnitError):
        parse_rate(text)


@given(st.integers(min_value=0, max_value=2**63))
def test_size_round_trip(n):
    assert parse_size(format_size(n)) == n


@given(st.integers(min_value=0, max_value=2**40), st.sampled_from(["K", "M", "G", "T", "KiB", "MiB", "GiB", "KB", "MB", "GB"]))
def test_size_units_multiply(n, unit):
    base = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "KB": 10**3, "MB": 10**6, "GB": 10**9}
    mult = base.get(unit) or base[unit[0]]
    assert parse_size(f"{n}{unit}") == n * mult


@given(st.integers(min_value=0, max_value=2**62))
def test_duration_round_trip(ns):
    assert parse_duration(format_duration(ns)) == ns
