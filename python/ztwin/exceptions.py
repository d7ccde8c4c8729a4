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

    def errors(self) -> list[dict[str, Any]]:
        """One dict per problem: ``loc``, ``loc_str``, ``msg``, ``input``, ``type``."""
        return [dict(e) for e in self._errors]


class SimulationError(ZtwinError, RuntimeError):
    """A failure while simulating (names the component and the simulated time)."""
