"""How ``ztwin run`` shows a run's progress on stderr: a transient Rich bar on a
terminal ("zfs-arc-1g (2/3): simulated 312/720 s, ETA 0:41"), plain lines when stderr is
piped (at most one per ``PLAIN_EVERY_S`` of wall time, and one at each variant's end),
nothing with ``--quiet``. stdout is never touched.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress as Bar, TextColumn, TimeElapsedColumn

from ..progress import Progress, clock

#: Wall seconds between two plain progress lines.
PLAIN_EVERY_S = 10.0


def _s(ns: int) -> str:
    return f"{ns / 1e9:,.0f}"


def _took(wall_s: float) -> str:
    """A variant's wall time: "0.4 s" under a minute (short runs), else "1:12"."""
    return f"{wall_s:.1f} s" if wall_s < 60 else clock(wall_s)


def detail(p: Progress) -> str:
    """The bar's text: "simulated 312/720 s, ETA 0:41", or for a variant whose length is
    not known in advance "phase 2/3, simulated 45 s"."""
    if p.finished:
        return f"done: simulated {_s(p.simulated_ns)} s in {_took(p.wall_s)}"
    phase = f"phase {p.phase + 1}/{p.phases}, " if p.phases > 1 else ""
    if p.total_ns is None:
        return f"{phase}simulated {_s(p.simulated_ns)} s"
    eta = p.eta_s
    return f"{phase}simulated {_s(min(p.simulated_ns, p.total_ns))}/{_s(p.total_ns)} s" + (
        f", ETA {clock(eta)}" if eta is not None else ""
    )


def plain_line(p: Progress) -> str:
    """One line for a pipe: "progress: SCENARIO VARIANT: simulated 312 s of 720 s (43%),
    elapsed 0:31, ETA 0:41"."""
    head = f"progress: {p.scenario} {p.variant}"
    if p.variants > 1:
        head += f" ({p.index + 1}/{p.variants})"
    if p.finished:
        return f"{head}: done, simulated {_s(p.simulated_ns)} s in {_took(p.wall_s)}"
    phase = f"phase {p.phase + 1}/{p.phases}, " if p.phases > 1 else ""
    if p.total_ns is None:
        return f"{head}: {phase}simulated {_s(p.simulated_ns)} s, elapsed {clock(p.wall_s)}"
    eta = p.eta_s
    return (
        f"{head}: {phase}simulated {_s(min(p.simulated_ns, p.total_ns))} s of {_s(p.total_ns)} s "
        f"({100 * (p.fraction or 0.0):.0f}%), elapsed {clock(p.wall_s)}" + (f", ETA {clock(eta)}" if eta is not None else "")
    )


def shared_line(leader: str, followers: list[str], jobs: int) -> str:
    """The line said before a group of variants that share their first phases runs."""
    return (
        f"{', '.join(followers)} {'takes' if len(followers) == 1 else 'take'} the first phases from {leader}'s run "
        f"(forked after them, unless what {'it changes' if len(followers) == 1 else 'they change'} was used by then; "
        f"{jobs} process{'es' if jobs > 1 else ''} at once)"
    )


def cold_line(name: str, why: str) -> str:
    """The line said when a follower cannot take the shared phases after all."""
    return f"{name} runs from its start after all: {why}"


class PlainProgress:
    """Progress as plain lines through ``write``: at most one per ``every_s`` of wall time
    (``now`` tells it), and always the line of a variant's end."""

    def __init__(self, write: Callable[[str], None], every_s: float = PLAIN_EVERY_S, now: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.every_s = every_s
        self.now = now
        self.last = now()

        #: Leaders of shared groups and their followers (see :meth:`shared`).
        self.followers: dict[str, list[str]] = {}

    def shared(self, leader: str, followers: list[str], jobs: int) -> None:
        """A group is about to run: said at once, and again when its leader's run ends."""
        self.followers[leader] = followers
        self.write(f"progress: {shared_line(leader, followers, jobs)}")

    def cold(self, name: str, why: str) -> None:
        """A follower runs from its start after all."""
        self.write(f"progress: {cold_line(name, why)}")

    def __call__(self, p: Progress) -> None:
        t = self.now()
        if p.finished or t - self.last >= self.every_s:
            self.last = t
            self.write(plain_line(p))
        if p.finished and p.variant in self.followers:
            self.write(f"progress: {p.scenario}: waiting for the forked {', '.join(self.followers.pop(p.variant))}")


class BarProgress:
    """Progress as a transient Rich bar on a terminal: one bar, reset for each variant
    (pulsing when the variant's length is not known in advance)."""

    def __init__(self, console: Console, scenario: str) -> None:
        self.scenario = scenario
        self.bar = Bar(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(), console=console, transient=True,
        )
        self.task = self.bar.add_task(escape(scenario), total=None, detail="")
        #: Leaders of shared groups and their followers (see :meth:`shared`).
        self.followers: dict[str, list[str]] = {}

    def shared(self, leader: str, followers: list[str], jobs: int) -> None:
        """A group is about to run: said above the bar; its leader's bar is followed by a
        pulsing one while its forked followers finish."""
        self.bar.console.print(escape(shared_line(leader, followers, jobs)))
        self.followers[leader] = followers

    def cold(self, name: str, why: str) -> None:
        """A follower runs from its start after all: said above the bar."""
        self.bar.console.print(escape(cold_line(name, why)))

    def __enter__(self) -> "BarProgress":
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def on_variant(self, name: str, i: int, total: int) -> None:
        what = f"{self.scenario}: {name}" + (f" ({i + 1}/{total})" if total > 1 else "")
        self.bar.reset(self.task, total=None, description=escape(what), detail="starting")

    def __call__(self, p: Progress) -> None:
        total: Optional[float] = p.total_ns / 1e9 if p.total_ns else None
        done = p.simulated_ns / 1e9 if total is None else min(p.simulated_ns / 1e9, total)
        if p.finished and total is None:
            total = done = 1.0
        self.bar.update(self.task, total=total, completed=total if p.finished else done, detail=escape(detail(p)))
        if p.finished and p.variant in self.followers:
            what = f"{self.scenario}: the forked {', '.join(self.followers.pop(p.variant))}"
            self.bar.reset(self.task, total=None, description=escape(what), detail="running from the shared phases")
