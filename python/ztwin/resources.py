"""Memory before a run: the core's estimate of what a variant needs, what the machine
has available, and the check that refuses a scenario the machine cannot hold.

The estimate is the core's (``ztwin_core::run::estimate_memory``): the peak heap of
running one resolved variant, by part (the buffer pool's frames and page table, the
ARC's headers, the L2ARC's ring and index, the pool's allocation map, the prefetcher's
streams, bcache's index, the series...), each sized by the model that owns it, assuming
the caches fill. It is computed from the config alone, before anything is built, so a
scenario that would take more memory than the machine has is refused with a message
instead of ending in an allocation failure. The available memory is Linux's
``MemAvailable`` (``/proc/meminfo``); elsewhere nothing is checked.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .exceptions import ResourceError, ScenarioError
from .units import human_size

# Where the available memory is read (tests point it at a file of their own).
_MEMINFO = "/proc/meminfo"


def available_memory() -> Optional[int]:
    """Memory available to a new process, bytes: Linux's ``MemAvailable``; None when
    unknown (another system, or no such line)."""
    try:
        with open(_MEMINFO, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    parts = line.split()
                    return int(parts[1]) * (1024 if parts[2:3] == ["kB"] else 1)
    except (OSError, ValueError, IndexError):
        return None
    return None


def estimate_config(config: dict[str, Any]) -> Optional[dict[str, int]]:
    """The core's estimate of one resolved variant (its ``VariantConfig`` dict), bytes by
    part; None if the core refuses the config (its check says why)."""
    from . import _core

    try:
        doc = json.loads(_core.estimate_memory(json.dumps(config)))
    except ScenarioError:
        return None
    return {k: int(v) for k, v in doc["parts"].items()}


def largest_parts(parts: dict[str, int], n: int = 2) -> str:
    """``'bcache 203.67 MiB, buffer_pool 7.78 MiB'``: the ``n`` largest parts."""
    top = sorted(((b, name) for name, b in parts.items() if b > 0), reverse=True)[:n]
    return ", ".join(f"{name} {human_size(b)}" for b, name in top)


def describe(parts: dict[str, int]) -> str:
    """``'about 213.13 MiB (bcache 203.67 MiB, buffer_pool 7.78 MiB)'``: the total and the two largest parts."""
    top = largest_parts(parts)
    return f"about {human_size(sum(parts.values()))}" + (f" ({top})" if top else "")


def check_memory(estimates: dict[str, dict[str, int]], source: str, available: Optional[int] = None) -> None:
    """Raises :class:`ResourceError` if the largest variant's estimate exceeds the memory
    available (``available``, else :func:`available_memory`; nothing is checked when it
    is unknown). ``estimates`` maps variant names to their estimates by part."""
    if not estimates:
        return
    avail = available if available is not None else available_memory()
    if avail is None:
        return
    name, parts = max(estimates.items(), key=lambda kv: sum(kv[1].values()))
    need = sum(parts.values())
    if need <= avail:
        return
    raise ResourceError(
        f"scenario {source}, variant {name}: needs an estimated {human_size(need)} of memory "
        f"(largest parts: {largest_parts(parts)}), more than the {human_size(avail)} available "
        "(MemAvailable); make the variant smaller, or run anyway with --no-memory-check "
        "(memory_check=False)",
        variant=name,
        needed_bytes=need,
        available_bytes=avail,
        parts=parts,
    )
