"""Reading scenarios and the public entry points.

:func:`load_scenario` reads and validates a file (or a dict) and resolves every variant;
:func:`resolve` returns the resolved variants, one dict per variant with exactly the keys
of the core's ``VariantConfig``. A file must be UTF-8 TOML. Every variant is the base
with its overrides merged in (:mod:`.merge`), validated (:mod:`.schema`) and resolved
(:mod:`.resolution`) and checked by the core, which builds the variant's stack without
running it (one validation: every rule on values is the core's); an error of the base is reported once, naming the variants it
occurs in when not all; an error of a value a variant set is reported under
``variants.NAME``. Without ``[variants]`` there is one variant, named ``base``.
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from pydantic import ValidationError

from .. import resources
from ..exceptions import ScenarioError
from .errors import _Err, _get, _pydantic_errors, _raise
from .merge import _merge, _set_by_variant
from .resolution import _resolve_variant
from .schema import _VARIANT_KEYS, VariantSpec

DEFAULT_SCENARIO = Path(__file__).parent.parent / "scenarios" / "default.toml"


@dataclass
class Scenario:
    """A validated scenario: its name, where it came from, and every variant resolved."""

    name: str
    source: str
    description: str
    raw: dict[str, Any]
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The core's estimate of each variant's memory, bytes by part (see :mod:`ztwin.resources`).
    memory: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Variants whose stack the core's check did not build, their estimate being past the
    #: memory available when loaded (``ztwin.run`` refuses them; the core checks a variant
    #: again when it runs).
    not_built: set[str] = field(default_factory=set)

    @property
    def variant_names(self) -> list[str]:
        return list(self.variants)

    def to_json(self) -> str:
        """The resolved variants as one JSON document ``{variant: VariantConfig}``."""
        return json.dumps(self.variants, indent=2)


def _validate(raw: dict[str, Any], source: str, overrides: Optional[dict[str, Any]] = None, base_dir: Optional[Path] = None, memory_check: bool = True) -> Scenario:
    if not isinstance(raw, dict):
        _raise(source, [_Err((), "a scenario is a table (dict) of keys", raw, "dict_type")])
    raw = copy.deepcopy(raw)
    base_dir = base_dir if base_dir is not None else Path.cwd()
    errs: list[_Err] = []
    variants_raw = raw.pop("variants", None)
    if variants_raw is None:
        variants_raw = {}
    if not isinstance(variants_raw, dict):
        errs.append(_Err(("variants",), "must be a table of [variants.NAME] tables", variants_raw, "dict_type"))
        variants_raw = {}
    for vname, over in variants_raw.items():
        if not isinstance(over, dict):
            errs.append(_Err(("variants", vname), "must be a table of overrides", over, "dict_type"))
        else:
            for k in over:
                if k not in _VARIANT_KEYS:
                    errs.append(_Err(("variants", vname, k), f"unknown key {k!r}; a variant overrides: {', '.join(sorted(_VARIANT_KEYS))}", over[k], "extra_forbidden"))
    if errs:
        _raise(source, errs)
    todo = variants_raw or {"base": {}}
    name = raw.get("name") if isinstance(raw.get("name"), str) else "?"
    # loc/msg -> variants in which the base-attributed error occurs
    base_errs: dict[tuple, tuple[_Err, list[str]]] = {}
    var_errs: list[_Err] = []
    resolved: dict[str, dict] = {}
    estimates: dict[str, dict[str, int]] = {}
    avail = resources.available_memory() if memory_check else None
    not_built: set[str] = set()
    for vname, over in todo.items():
        replaced: set = set()
        merged = _merge(raw, over, (), replaced)
        if overrides:
            merged = _merge(merged, overrides, (), set())
        try:
            spec = VariantSpec.model_validate(merged)
        except ValidationError as e:
            found = _pydantic_errors(e)
        else:
            out, found = _resolve_variant(name, vname, spec, merged, base_dir)
            if out is not None:
                # The estimate first: the core's check builds the stack, which takes most of
                # that memory; one the machine cannot hold is not built (a run refuses it).
                est = resources.estimate_config(out)
                if est is not None:
                    estimates[vname] = est
                if est is not None and avail is not None and sum(est.values()) > avail:
                    not_built.add(vname)
                else:
                    found = _core_check(out, merged)
                if not found:
                    resolved[vname] = out
        for e in found:
            if variants_raw and _set_by_variant(raw, over, replaced, e.loc):
                var_errs.append(_Err(("variants", vname) + e.loc, e.msg, e.input, e.type))
            else:
                key = (e.loc, e.msg)
                base_errs.setdefault(key, (e, []))[1].append(vname)
    errs = []
    for e, where in base_errs.values():
        if variants_raw and len(where) < len(todo):
            e = _Err(e.loc, f"{e.msg} (in variant{'s' if len(where) > 1 else ''} {', '.join(where)})", e.input, e.type)
        errs.append(e)
    errs += var_errs
    if errs:
        _raise(source, errs)
    return Scenario(name=name, source=source, description=raw.get("description", ""), raw=raw | {"variants": variants_raw}, variants=resolved, memory=estimates, not_built=not_built)


def _core_check(variant: dict[str, Any], merged: dict[str, Any]) -> list[_Err]:
    """The core's rules, by building the variant's whole stack without running it (every
    layer checks its own config: the ARC's limits, the pool's space, the release's
    features). The core stops at the first problem; it is named by the scenario's key."""
    from .. import _core

    try:
        _core.check_variant(json.dumps(variant))
    except ScenarioError as e:
        return [_Err(err["loc"], err["msg"], _get(merged, err["loc"]), "core") for err in e.errors()]
    return []


def load_scenario(
    src: Union[str, Path, dict[str, Any], None] = None,
    *,
    overrides: Optional[dict[str, Any]] = None,
    memory_check: bool = True,
) -> Scenario:
    """Reads, validates and resolves a scenario: a TOML file path, a dict, or None (the default).

    ``overrides`` is a table merged into every variant last (the CLI's ``--seed`` and
    ``--duration`` use it). Raises :class:`~ztwin.exceptions.ScenarioError` listing every
    problem found.

    Each variant's memory is estimated first (``Scenario.memory``; see
    :mod:`ztwin.resources`). With ``memory_check`` (the default), a variant estimated to
    need more than the machine has available is not built for the core's check (it would
    take that memory): it is listed in ``Scenario.not_built``, and :func:`ztwin.run`
    refuses it. ``memory_check=False`` builds every variant.
    """
    if src is None:
        src = DEFAULT_SCENARIO
    if isinstance(src, dict):
        return _validate(src, "<dict>", overrides, memory_check=memory_check)
    path = Path(src)
    source = str(src)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"scenario file {source} does not exist", errors=[{"loc": (), "loc_str": "", "msg": "file not found", "input": source, "type": "file_not_found"}]) from None
    except OSError as e:
        raise ScenarioError(f"cannot read scenario file {source}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        msg = f"not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); TOML files are UTF-8"
        raise ScenarioError(f"scenario {source} is {msg}", errors=[{"loc": (), "loc_str": "", "msg": msg, "input": None, "type": "encoding"}]) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario {source} is not valid TOML: {e}", errors=[{"loc": (), "loc_str": "", "msg": f"not valid TOML: {e}", "input": None, "type": "toml"}]) from None
    return _validate(raw, source, overrides, path.resolve().parent, memory_check=memory_check)


def resolve(scenario: Union[Scenario, str, Path, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The resolved variants ``{variant name: VariantConfig dict}`` of a scenario."""
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return copy.deepcopy(scenario.variants)
