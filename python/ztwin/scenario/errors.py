"""Scenario errors in the user's terms, and the message of a :class:`~ztwin.exceptions.ScenarioError`.

An error names the key as the user wrote it (``filesystem.recordsize``, not pydantic's
``filesystem.zfs.recordsize``), says what is wrong with TOML's names for types, and shows
the value written. Every error found is reported at once: the message has one line for
where and one for what, for each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..exceptions import ScenarioError
from .schema import DEVICE_TYPES, PHASE_TYPES, ScenarioSpec, _UNIONS


# Pydantic's type errors in the user's terms (TOML values).
_TYPE_MSG = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "dict_type": "must be a table",
    "model_type": "must be a table",
}


def _toml_type(v: object) -> str:
    """The TOML name of a value's type, for messages."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


@dataclass
class _Err:
    loc: tuple[Any, ...]
    msg: str
    input: Any = None
    type: str = "value_error"


def _loc_str(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 50 else r[:24] + "..." + r[-24:]


def _fields_of(model: Any) -> list[str]:
    return list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) is Union:
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
        return tuple(_unwrap(a) for a in args)
    return tp


def _model_at(loc: tuple[Any, ...]) -> Any:
    """The pydantic model of the table at ``loc`` (a pydantic loc, union tags included)."""
    cur: Any = ScenarioSpec
    i = 0
    while i < len(loc):
        if not (isinstance(cur, type) and issubclass(cur, BaseModel)):
            return None
        f = cur.model_fields.get(loc[i])
        if f is None:
            return None
        tp = _unwrap(f.annotation)
        i += 1
        if get_origin(tp) is dict:
            i += 1  # the key
            tp = _unwrap(get_args(tp)[1])
        elif get_origin(tp) is list:
            i += 1  # the index
            tp = _unwrap(get_args(tp)[0])
        if isinstance(tp, tuple):  # discriminated union: the next element is the tag
            tag = loc[i] if i < len(loc) else None
            i += 1
            typed = [m for m in tp if "type" in _fields_of(m)]
            tp = next((m for m in typed if get_args(m.model_fields["type"].annotation) == (tag,)), None) or next(
                (m for m in tp if _fields_of(m) and "type" not in _fields_of(m)), None)  # a device has no type
        cur = tp
    return cur


def _user_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drops union tags pydantic inserts (``filesystem.zfs.recordsize`` -> ``filesystem.recordsize``)."""
    out = list(loc)
    for key, tags in _UNIONS.items():
        if len(out) > 1 and out[0] == key and out[1] in tags:
            del out[1]
    if len(out) > 2 and out[0] == "phases" and isinstance(out[1], int) and out[2] in PHASE_TYPES:
        del out[2]
    if len(out) > 2 and out[0] == "devices" and out[2] in ("device",) + DEVICE_TYPES:
        del out[2]
    return tuple(out)


def _pydantic_errors(e: ValidationError) -> list[_Err]:
    errs = []
    for d in e.errors(include_url=False):
        loc, typ, msg, inp = tuple(d["loc"]), d["type"], d["msg"], d.get("input")
        if typ == "extra_forbidden":
            allowed = [f for f in _fields_of(_model_at(loc[:-1]))]
            msg = f"unknown key {loc[-1]!r}; allowed keys: {', '.join(allowed)}" if allowed else "unknown key"
        elif typ == "missing":
            msg = "required key missing"
            inp = None
        elif typ in ("union_tag_not_found", "union_tag_invalid"):
            tags = _UNIONS.get(loc[-1] if loc else "", ())
            if len(loc) > 1 and loc[0] == "phases":
                tags = PHASE_TYPES
            if len(loc) > 1 and loc[0] == "devices":
                tags = DEVICE_TYPES
            allowed = ", ".join(repr(t) for t in tags)
            if tags == DEVICE_TYPES:
                allowed += " (no type: a device)"
            if typ == "union_tag_not_found":
                msg = f"required key missing: type, one of {allowed}"
                inp = None
            else:
                msg = f"unknown type {d['ctx']['tag']!r}; allowed: {allowed}"
                inp = d["ctx"]["tag"]
            loc = loc + ("type",)
        elif typ == "literal_error":
            msg = msg.replace("Input should be", "must be")
        elif typ in _TYPE_MSG:
            msg = f"{_TYPE_MSG[typ]}, not {_toml_type(inp)}"
        errs.append(_Err(_user_loc(loc), msg, inp, typ))
    return errs


def _format(source: str, errs: list[_Err]) -> str:
    n = len(errs)
    lines = [f"{n} validation error{'s' if n != 1 else ''} for scenario {source}"]
    for e in errs:
        lines.append(_loc_str(e.loc) or "(scenario)")
        tail = f" [input_value={_short(e.input)}]" if e.input is not None else ""
        lines.append(f"  {e.msg}{tail}")
    return "\n".join(lines)


def _raise(source: str, errs: list[_Err]) -> None:
    dicts = [
        {"loc": e.loc, "loc_str": _loc_str(e.loc), "msg": e.msg, "input": e.input, "type": e.type} for e in errs
    ]
    raise ScenarioError(_format(source, errs), errors=dicts)


def _get(raw: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        if isinstance(raw, dict) and part in raw:
            raw = raw[part]
        elif isinstance(raw, list) and isinstance(part, int) and part < len(raw):
            raw = raw[part]
        else:
            return None
    return raw
