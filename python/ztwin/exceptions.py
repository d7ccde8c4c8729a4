"""Exceptions of ztwin, rooted under one base class."""


class ZtwinError(Exception):
    """Base of every error ztwin raises on purpose."""


class ScenarioError(ZtwinError, ValueError):
    """A scenario that cannot be simulated as written (names the file, the field, what is allowed)."""


class SimulationError(ZtwinError, RuntimeError):
    """A failure while simulating (names the component and the simulated time)."""
