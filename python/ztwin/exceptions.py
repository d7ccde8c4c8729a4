"""Exceptions of ztwin, rooted under one base class."""

from __future__ import annotations

from typing import Any, Optional


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
        """The core's refusal of ``field`` (dotted, as the scenario's keys), with its message."""
        loc = tuple(field.split(".")) if field else ()
        return cls(f"{field}: {message}" if field else message, errors=[{"loc": loc, "loc_str": field, "msg": message, "input": None, "type": "core"}])

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
