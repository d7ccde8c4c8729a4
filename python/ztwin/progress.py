"""Progress of a run while it goes: what ``ztwin.run(..., on_progress=f)`` hands ``f``.

The core reports how far its simulated clock has come at its report boundaries, a few
times a second of wall time at most, and once when a variant ends (``finished``). It only
observes: a run gives the same result with or without ``on_progress``. ``total_ns`` is
known when every phase of the variant has a set length (workload phases: warm-up plus
duration); a phase that ends when its work is done (fio, cat, restart) leaves it None,
and then only ``phase`` of ``phases`` says how far the variant is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Progress", "clock"]


@dataclass(frozen=True)
class Progress:
    """How far one variant's run has come."""

    scenario: str
    variant: str
    #: The variant's place among those running (0-based) and their number.
    index: int
    variants: int
    #: Simulated time reached, ns from the start of the variant's first phase.
    simulated_ns: int
    #: The variant's whole simulated time, when known (see the module's docs).
    total_ns: Optional[int]
    #: The phase running (0-based) and the number of phases.
    phase: int
    phases: int
    #: The variant has ended (its last report).
    finished: bool
    #: Wall seconds since the variant started.
    wall_s: float

    @property
    def fraction(self) -> Optional[float]:
        """Share of the variant's simulated time done (0..1), when the total is known."""
        if self.finished:
            return 1.0
        if not self.total_ns:
            return None
        return min(1.0, self.simulated_ns / self.total_ns)

    @property
    def eta_s(self) -> Optional[float]:
        """Wall seconds left at the pace so far, when the total is known."""
        if self.finished:
            return 0.0
        f = self.fraction
        if f is None or f <= 0.0:
            return None
        return self.wall_s * (1.0 - f) / f


def clock(seconds: float) -> str:
    """Wall time as ``m:ss`` or ``h:mm:ss``."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
