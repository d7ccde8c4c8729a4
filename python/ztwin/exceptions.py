"""Exceptions of ztwin, rooted under one base class."""

from __future__ import annotations

import re
from typing import Any, Optional

# The core's config names that differ from the scenario's keys (units in the core's
# names; the scenario takes "4K", "10ms").
_CORE_KEYS = {
    "ram_bytes": "ram",
    "capacity_bytes": "size",
    "throughput_limit_bytes_per_sec": "throughput_limit",
    "read_latency_ns": "read_latency",
    "write_latency_ns": "write_latency",
    "transfer_bytes_per_sec": "transfer_rate",
    "track_to_track_seek_ns": "track_to_track_seek",
    "average_seek_ns": "average_seek",
    "full_stroke_seek_ns": "full_stroke_seek",
    "write_settle_ns": "write_settle",
    "outer_rate_bytes_per_sec": "media_rate_outer",
    "inner_rate_bytes_per_sec": "media_rate_inner",
    "readahead_bytes": "readahead",
    "flush_latency_ns": "flush_latency",
    "innodb_old_blocks_time_ns": "innodb_old_blocks_time",
    "warmup_ns": "warmup",
    "duration_ns": "duration",
    "report_interval_ns": "report_interval",
    "chunk_bytes": "chunk",
    "cache_bytes": "cache",
    "cache_latency_ns": "cache_latency",
    "cache_bytes_per_sec": "cache_rate",
    "destage_max_bytes": "destage_max",
    "write_back": "write_policy",
}


def user_key(field: str) -> tuple[Any, ...]:
    """The scenario key of a core config path: ``devices[2] (ebs).capacity_bytes`` is
    ``("devices", "ebs", "size")``, ``filesystem.vdevs[0]`` is ``("filesystem", "vdevs", 0)``."""
    if not field:
        return ()
    # An md array is a [devices.NAME] table; a controller's volumes are the devices naming it.
    m = re.fullmatch(r"arrays\[\d+\] \(([^)]*)\)\.?(.*)", field)
    if m:
        return ("devices", m.group(1)) + user_key(m.group(2))
    m = re.fullmatch(r"controllers\[\d+\] \(([^)]*)\)\.?(.*)", field)
    if m:
        return ("controllers", m.group(1)) + user_key(m.group(2))
    m = re.fullmatch(r"devices\[\d+\] \(([^)]*)\)\.?(.*)", field)
    if m:
        # A disk's mechanics are a sub-table in the core, keys of the device in the scenario.
        return ("devices", m.group(1)) + user_key(re.sub(r"^rotational\.", "", m.group(2)))
    loc: list[Any] = []
    for part in field.split("."):
        m = re.fullmatch(r"([^\[]+)((?:\[\d+\])*)", part)
        if not m:
            loc.append(part)
            continue
        loc.append(_CORE_KEYS.get(m.group(1), m.group(1)))
        loc.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return tuple(loc)


class ZtwinError(Exception):
    """Base of every error ztwin raises on purpose."""


class ScenarioError(ZtwinError, ValueError):
    """A scenario that cannot be simulated as written (names the file, the field, what is allowed).

    ``str(err)`` reads like pydantic's: ``N validation errors for scenario FILE`` then, per
    error, the dotted location and the message with the offending input cut short.
    ``err.errors()`` returns the same as a list of dicts with keys ``loc`` (tuple),
    ``loc_str`` (dotted), ``msg``, ``input`` and ``type``. Errors raised by the core (one
    per run, ``"field: message"``) get one entry parsed from the message.
    """

    def __init__(self, message: str, errors: Optional[list[dict[str, Any]]] = None) -> None:
        super().__init__(message)
        if errors is None:
            field, sep, msg = message.partition(": ")
            if sep and " " not in field:
                errors = [{"loc": tuple(field.split(".")), "loc_str": field, "msg": msg, "input": None, "type": "core"}]
            else:
                errors = [{"loc": (), "loc_str": "", "msg": message, "input": None, "type": "core"}]
        self._errors = errors

    @classmethod
    def from_core(cls, field: str, message: str) -> "ScenarioError":
        """The core's refusal of ``field`` (its config's path), with its message; the
        field is named as the scenario's key (see :func:`user_key`)."""
        loc = user_key(field)
        key = ".".join(map(str, loc))
        return cls(f"{key}: {message}" if key else message, errors=[{"loc": loc, "loc_str": key, "msg": message, "input": None, "type": "core"}])

    def errors(self) -> list[dict[str, Any]]:
        """One dict per problem: ``loc``, ``loc_str``, ``msg``, ``input``, ``type``."""
        return [dict(e) for e in self._errors]

    @property
    def field(self) -> Optional[str]:
        """The dotted key of the first problem (``None`` if the error is about the file)."""
        return self._errors[0]["loc_str"] or None if self._errors else None


class SimulationError(ZtwinError, RuntimeError):
    """A failure while simulating: ``component`` (e.g. ``pool.vdev0``), ``time_ns`` (the
    simulated time of the failure) and ``message`` are attributes."""

    def __init__(self, message: str, component: Optional[str] = None, time_ns: Optional[int] = None) -> None:
        super().__init__(message)
        self.component = component
        self.time_ns = time_ns

    @classmethod
    def from_core(cls, component: str, time_ns: int, message: str) -> "SimulationError":
        return cls(f"{component} at t={time_ns} ns: {message}", component=component, time_ns=time_ns)


class ResourceError(ZtwinError, RuntimeError):
    """A run the machine cannot hold: the core's estimate of a variant's memory exceeds
    what the machine has available. ``variant``, ``needed_bytes``, ``available_bytes``
    and ``parts`` (the estimate by part, bytes) are attributes."""

    def __init__(
        self,
        message: str,
        variant: Optional[str] = None,
        needed_bytes: Optional[int] = None,
        available_bytes: Optional[int] = None,
        parts: Optional[dict[str, int]] = None,
    ) -> None:
        super().__init__(message)
        self.variant = variant
        self.needed_bytes = needed_bytes
        self.available_bytes = available_bytes
        self.parts = dict(parts or {})
