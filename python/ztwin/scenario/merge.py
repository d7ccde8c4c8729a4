"""A variant's overrides merged into the base scenario.

Variants are merged table by table (a key in the variant replaces the base's key; a table
in the variant merges into the base's table; lists are replaced whole), except that a
table whose ``type`` changes (``filesystem.type = "xfs"`` over a ZFS base) replaces the
base table: fields of ZFS make no sense for XFS. A device table merges even when its
``preset`` changes.
"""

from __future__ import annotations

import copy
from typing import Any


def _merge(base: dict[str, Any], over: dict[str, Any], path: tuple[str, ...], replaced: set) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        b = base.get(k)
        if isinstance(v, dict) and isinstance(b, dict):
            if "type" in v and "type" in b and v["type"] != b["type"]:
                out[k] = copy.deepcopy(v)
                replaced.add(path + (k,))
            else:
                out[k] = _merge(b, v, path + (k,), replaced)
        else:
            out[k] = copy.deepcopy(v)
    return out


def merge_variant(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The base scenario table with a variant's overrides merged in (rules in the module docs)."""
    return _merge(base, override, (), set())


def _set_by_variant(base: dict, override: dict, replaced: set, loc: tuple[Any, ...]) -> bool:
    """True when the value at ``loc`` comes from the variant (set, added or under a replaced table)."""
    if any(loc[: len(r)] == r for r in replaced):
        return True
    b: Any = base
    o: Any = override
    for part in loc:
        if not isinstance(o, dict):
            return True  # the variant set a whole value (list, scalar) that contains loc
        if part not in o:
            return False
        if not isinstance(b, dict) or part not in b:
            return True  # the variant added this key
        b, o = b[part], o[part]
    return True
