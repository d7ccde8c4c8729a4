"""fio job files and command lines, read as fio reads them, resolved for the core.

A scenario's ``[workload] type = "fio"`` names a job file (``job_file``, relative to the
scenario), or gives one inline (``jobs``), and/or fio command-line options
(``options``). This module reads them the way fio does and resolves each job into the
core's ``FioJob`` (``ztwin_core::config``), and the files the jobs use into the
``files`` dataset. Semantics are fio's (axboe/fio at fio-3.36 unless said otherwise):

- Job files (``init.c`` ``__parse_jobs_ini``): ``[section]`` headers; ``[global]``
  sections set defaults for the jobs *after* them; ``key=value`` or a bare ``key`` (a
  boolean set to 1); a line whose first non-blank character is ``;`` or ``#`` is a
  comment. ``include`` and ``$VAR`` substitution are not supported.
- Command line: options before the first ``--name`` are global (they apply before the
  job file's ``[global]``); each ``--name=NAME`` starts a job, added after the job
  file's jobs.
- Sizes (``parse.c`` ``str_to_decimal``, ``__get_mult_bytes``): an integer (or ``0x``
  hex) with an optional suffix, case-insensitive. With ``kb_base=1024`` (the default)
  ``k m g t p`` (and ``kb`` ...) are powers of 1024 and ``kib mib gib tib pib`` powers
  of 1000 (the opposite of the SI/IEC meaning, "for compatibility with old scripts");
  with ``kb_base=1000`` the other way round. fio reads ``1.5g`` as 1 (strtoll stops at
  the dot) and unknown suffixes as bytes, and its parser reads ``ki`` as ``k`` where its
  manual says otherwise: all three are errors here. Percent sizes are refused.
- Times (``get_mult_time``): an integer with ``us``/``usec``, ``ms``/``msec``, ``s``,
  ``m``, ``h`` or ``d``; no suffix means seconds for runtime and ramp_time.
- Files (``filesetup.c``, ``init.c`` ``add_job``): ``filename`` (``:`` separates several)
  is shared by all clones of the job; otherwise each clone ``k`` of job ``NAME`` has its
  own files named by ``filename_format`` (default ``$jobname.$jobnum.$filenum``: clone
  number, file number j < nrfiles) in ``directory``; jobs share files when the names
  agree (``filename_format=data.$jobnum.$filenum``). ``size`` is one clone's total
  over its files; each file gets ``filesize`` or ``size / nrfiles``. A file is as large
  as ``offset`` plus its share; a file two jobs use is as large as the larger need.
- ``io_size`` (alias ``io_limit``) defaults to ``size``; ``rwmixwrite`` sets
  ``rwmixread`` to 100 minus it; ``buffered`` is ``direct``'s inverse; ``bs`` takes a
  read and a write size (``bs=4k,8k``).
- Syncs (``options.c``): ``fsync=N`` / ``fdatasync=N`` (an fsync after every N writes
  issued), ``sync`` (``none``/``0``, ``sync``/``1`` for O_SYNC, ``dsync`` for O_DSYNC;
  the words need fio 3.24 or later, eb9f8d7f: before, ``sync`` was a boolean),
  ``end_fsync`` and ``fsync_on_close`` (booleans). The core models them on ZFS (its
  intent log) and on XFS and ext4 (their journals; the page cache's dirty pages first
  with ``direct=0``). ``write_barrier`` and ``sync_file_range`` are refused.
- The page cache (``direct=0`` on XFS/ext4; ``ioengines.c`` ``td_io_open_file``):
  ``invalidate`` (default 1: POSIX_FADV_DONTNEED of the job's range when a file is
  opened) and ``fadvise_hint`` (``0``, ``1`` = by the job's type, its default:
  POSIX_FADV_RANDOM for a random job, POSIX_FADV_SEQUENTIAL otherwise; ``random``,
  ``sequential``). ZFS ignores both (fadvise does not reach its ARC).

Every option not in :data:`OPTIONS` is an error naming the option, the job and the file.
Options accepted without effect on the model say why in :data:`NO_EFFECT`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

__all__ = [
    "FioError",
    "Section",
    "parse_job_file",
    "parse_command_line",
    "fio_size",
    "fio_time",
    "resolve_jobs",
    "OPTIONS",
    "NO_EFFECT",
    "DEFAULT_FIO_VERSION",
    "FIO_RANDSEED",
]

#: fio release modelled when a scenario gives none (Ubuntu 24.04 ships 3.36).
DEFAULT_FIO_VERSION = "3.36"
#: fio's default randseed (FIO_RANDSEED, fio.h).
FIO_RANDSEED = 0xB1899BED


class FioError(ValueError):
    """A job file or command line fio would refuse, or that ztwin does not model."""


@dataclass
class Section:
    """One ``[section]`` (or ``--name``) with its options in order: (key, value or None, where)."""

    name: str
    where: str
    options: list[tuple[str, Optional[str], str]] = field(default_factory=list)

    @property
    def is_global(self) -> bool:
        return self.name == "global"


# ---------------------------------------------------------------------------------------
# Reading


def parse_job_file(text: str, source: str) -> list[Section]:
    """The sections of a job file in order; ``source`` names it in errors."""
    sections: list[Section] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        where = f"{source}:{n}"
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise FioError(f"{where}: a section header is [name], got {line!r}")
            sections.append(Section(line[1:-1], where))
            continue
        if not sections:
            raise FioError(f"{where}: option {line!r} outside of a [job] section (fio refuses it too)")
        if line == "include" or line.startswith("include "):
            raise FioError(f"{where}: 'include' is not supported; put the options in the job file")
        key, sep, value = line.partition("=")
        key = key.strip()
        if "$" in value and key.strip() != "filename_format":
            raise FioError(f"{where}: job [{sections[-1].name}]: option {key!r}: $ substitution is not supported")
        sections[-1].options.append((key, value.strip() if sep else None, where))
    return sections


def parse_command_line(args: list[str] | str, source: str = "options") -> list[Section]:
    """fio command-line options as sections: leading options form a ``global`` section."""
    if isinstance(args, str):
        try:
            args = shlex.split(args)
        except ValueError as e:
            raise FioError(f"{source}: {e} in {args!r} (quote arguments as a shell would)") from None
    if args and args[0] == "fio":
        args = args[1:]
    sections = [Section("global", source)]
    for k, a in enumerate(args):
        where = f"{source}[{k}]"
        if not a.startswith("--"):
            raise FioError(f"{where}: {a!r}: only --option[=value] arguments (give a job file as workload.job_file)")
        key, sep, value = a[2:].partition("=")
        if key == "name":
            if not value:
                raise FioError(f"{where}: --name needs a value")
            sections.append(Section(value, where))
            continue
        sections[-1].options.append((key, value if sep else None, where))
    return sections


# ---------------------------------------------------------------------------------------
# Values


_SIZE_RE = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)([A-Za-z%]*)")
_PREFIX_POW = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def fio_size(text: str, kb_base: int = 1024) -> int:
    """Bytes in a fio size (see the module docs for the rules)."""
    t = text.strip()
    m = _SIZE_RE.fullmatch(t)
    if not m:
        if re.fullmatch(r"\d+\.\d*\w*", t):
            raise FioError(f"{text!r}: fio reads only the integer part of a size (strtoll stops at the dot); write a whole number with a smaller unit, e.g. 1536m")
        raise FioError(f"{text!r} is not a fio size (an integer with an optional k, m, g, t, p suffix, e.g. 4k, 1536m)")
    num = int(m.group(1), 0)
    suffix = m.group(2).lower()
    if suffix.startswith("%"):
        raise FioError(f"{text!r}: sizes in percent of an existing file or device are not modelled; give bytes")
    if suffix in ("", "b"):
        return num
    base = suffix[0]
    if base not in _PREFIX_POW or suffix not in (base, base + "b", base + "ib"):
        if base in _PREFIX_POW and suffix == base + "i":
            raise FioError(f"{text!r}: fio's parser reads {m.group(2)!r} as {m.group(2)[0]!r} while its manual says otherwise; write {base} or {base}ib")
        raise FioError(f"{text!r}: unknown size suffix {m.group(2)!r} (fio would read it as bytes); use k, m, g, t, p, optionally with b or ib")
    # parse.c __get_mult_bytes: "kib".."pib" use the other base ("opposite units" with
    # the default kb_base=1024); "k".."p" and "kb".."pb" use kb_base.
    mult = (1000 if kb_base == 1024 else 1024) if suffix.endswith("ib") else kb_base
    return num * mult ** _PREFIX_POW[base]


_TIME_MULT_US = {"us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 10**6, "m": 60 * 10**6, "h": 3600 * 10**6, "d": 86400 * 10**6}


def fio_time(text: str, default: str = "s") -> int:
    """Nanoseconds in a fio time (suffixes us, ms, s, m, h, d; none = ``default``)."""
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", text.strip())
    if not m:
        raise FioError(f"{text!r} is not a fio time (an integer with an optional us, ms, s, m, h, d suffix)")
    suffix = m.group(2).lower() or default
    if suffix not in _TIME_MULT_US:
        raise FioError(f"{text!r}: unknown time suffix {m.group(2)!r}; allowed: us, usec, ms, msec, s, m, h, d")
    return int(m.group(1)) * _TIME_MULT_US[suffix] * 1000


def _int(text: str, lo: int, hi: int) -> int:
    try:
        v = int(text.strip(), 0)
    except ValueError:
        raise FioError(f"{text!r} is not an integer") from None
    if not lo <= v <= hi:
        raise FioError(f"{v} is out of range: {lo} to {hi}")
    return v


def _bool(text: Optional[str]) -> bool:
    if text is None:
        return True
    if text.strip() in ("0", "1"):
        return text.strip() == "1"
    raise FioError(f"{text!r} is not a boolean: fio takes 1 or 0 (or the bare option for 1)")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise FioError(f"{text!r} is not a number") from None


# ---------------------------------------------------------------------------------------
# Options


def _set(key: str, conv: Callable[[Optional[str], dict[str, Any]], Any]) -> Callable[[Optional[str], dict[str, Any]], None]:
    def handler(value: Optional[str], job: dict[str, Any]) -> None:
        job[key] = conv(value, job)

    return handler


def _need(value: Optional[str]) -> str:
    if value is None or value == "":
        raise FioError("needs a value")
    return value


def _rw(value: Optional[str], job: dict[str, Any]) -> str:
    v = _need(value).strip().lower()
    if ":" in v:
        raise FioError(f"{v!r}: the ':N' (sequential runs / holes) modifier is not modelled")
    names = {"read": "read", "write": "write", "randread": "randread", "randwrite": "randwrite",
             "rw": "rw", "readwrite": "rw", "randrw": "randrw"}
    if v not in names:
        raise FioError(f"{v!r} is not modelled; allowed: read, write, randread, randwrite, rw (readwrite), randrw")
    return names[v]


def _bs(value: Optional[str], job: dict[str, Any]) -> None:
    parts = _need(value).split(",")
    if len(parts) > 3 or any(re.search(r"\w[-:]\w", p) for p in parts):
        raise FioError(f"{value!r}: block size ranges and trim sizes are not modelled; give bs=R or bs=R,W")
    sizes = [fio_size(p, job["kb_base"]) if p.strip() else None for p in parts[:2]]
    if sizes[0] is not None:
        job["bs_read"] = sizes[0]
        job["bs_write"] = sizes[0]
    if len(sizes) > 1 and sizes[1] is not None:
        job["bs_write"] = sizes[1]
    for s in sizes:
        if s is not None and s <= 0:
            raise FioError("must be positive")


def _size(key: str) -> Callable[[Optional[str], dict[str, Any]], None]:
    def handler(value: Optional[str], job: dict[str, Any]) -> None:
        v = _need(value)
        if re.search(r"\w[-:]\w", v):
            raise FioError(f"{v!r}: size ranges are not modelled")
        job[key] = fio_size(v, job["kb_base"])

    return handler


def _rwmixwrite(value: Optional[str], job: dict[str, Any]) -> None:
    job["rwmixread"] = 100 - _int(_need(value), 0, 100)


def _engine(value: Optional[str], job: dict[str, Any]) -> str:
    v = _need(value).strip()
    allowed = ("psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring")
    if v not in allowed:
        raise FioError(f"{v!r} is not modelled; allowed: {', '.join(allowed)}")
    return v


def _service(value: Optional[str], job: dict[str, Any]) -> None:
    v = _need(value).strip().lower()
    kind, _, nr = v.partition(":")
    if kind in ("zipf", "pareto", "normal", "gauss"):
        raise FioError(f"{v!r}: non-uniform file selection is not modelled; allowed: random, roundrobin, sequential (with :N)")
    if kind not in ("random", "roundrobin", "sequential"):
        raise FioError(f"{v!r}: allowed: random, roundrobin, sequential, each with an optional :N")
    job["file_service_type"] = kind
    job["file_service_nr"] = _int(nr, 1, 1 << 30) if nr else 1


def _distribution(value: Optional[str], job: dict[str, Any]) -> None:
    v = _need(value).strip().lower()
    if "," in v:
        raise FioError(f"{v!r}: separate read/write distributions are not modelled")
    parts = v.split(":")
    kind = parts[0]
    if kind == "gauss":
        kind = "normal"
    if kind not in ("random", "zipf", "pareto", "normal"):
        raise FioError(f"{v!r}: allowed: random, zipf:theta, pareto:h, normal:sigma (zoned, zoned_abs and sequence are not modelled)")
    if len(parts) > 2:
        raise FioError(f"{v!r}: a distribution center (the second number) is not modelled")
    if kind == "random":
        if len(parts) > 1:
            raise FioError(f"{v!r}: random takes no parameter")
        job["random_distribution"], job["distribution_param"] = "random", 0.0
        return
    if len(parts) < 2 and kind != "normal":
        raise FioError(f"{v!r}: {kind} needs its parameter, e.g. {kind}:1.2" if kind == "zipf" else f"{v!r}: pareto needs h, e.g. pareto:0.2")
    p = _float(parts[1]) if len(parts) > 1 else 0.0
    if kind == "zipf" and (p <= 0 or p == 1.0):
        raise FioError(f"zipf theta must be > 0 and not 1.0 (fio refuses 1.0), got {p}")
    if kind == "pareto" and not 0 < p < 1:
        raise FioError(f"pareto h must be between 0 and 1, got {p}")
    if kind == "normal" and not 0 <= p <= 100:
        raise FioError(f"normal sigma is a percentage 0 to 100, got {p}")
    job["random_distribution"], job["distribution_param"] = kind, p


def _buffers(key: str, conv: Callable[[Optional[str]], Any]) -> Callable[[Optional[str], dict[str, Any]], None]:
    def handler(value: Optional[str], job: dict[str, Any]) -> None:
        job["buffers"] = dict(job["buffers"], **{key: conv(value)})

    return handler


def _format(v: str) -> str:
    left = re.sub(r"\$(jobname|jobnum|filenum)", "", v)
    if "$" in left:
        raise FioError(f"{v!r}: only $jobname, $jobnum and $filenum are modelled")
    return v


def _sync(value: Optional[str], job: dict[str, Any]) -> str:
    v = "1" if value is None else value.strip().lower()
    words = {"none": "none", "0": "none", "sync": "sync", "1": "sync", "dsync": "dsync"}
    if v not in words:
        raise FioError(f"{v!r}: allowed: none or 0, sync or 1 (O_SYNC), dsync (O_DSYNC)")
    if v in ("none", "sync", "dsync") and job["fio_version"] < (3, 24):
        raise FioError(f"sync={v}: fio before 3.24 takes sync=0 or 1 (a boolean; the words came with eb9f8d7f)")
    return words[v]


def _kb_base(value: Optional[str], job: dict[str, Any]) -> int:
    v = _int(_need(value), 0, 1 << 20)
    if v not in (1000, 1024):
        raise FioError(f"kb_base must be 1000 or 1024, got {v}")
    return v


#: Supported options (fio's names and aliases) and how each sets the job.
OPTIONS: dict[str, Callable[[Optional[str], dict[str, Any]], None]] = {
    "rw": _set("rw", _rw),
    "readwrite": _set("rw", _rw),
    "rwmixread": _set("rwmixread", lambda v, j: _int(_need(v), 0, 100)),
    "rwmixwrite": _rwmixwrite,
    "bs": _bs,
    "blocksize": _bs,
    "size": _size("size"),
    "filesize": _size("filesize"),
    "io_size": _size("io_size"),
    "io_limit": _size("io_size"),
    "offset": _size("offset"),
    "nrfiles": _set("nrfiles", lambda v, j: _int(_need(v), 1, 1 << 20)),
    "filename": _set("filename", lambda v, j: _need(v).strip()),
    "directory": _set("directory", lambda v, j: _need(v).strip()),
    "filename_format": _set("filename_format", lambda v, j: _format(_need(v).strip())),
    "numjobs": _set("numjobs", lambda v, j: _int(_need(v), 1, 4096)),
    "iodepth": _set("iodepth", lambda v, j: _int(_need(v), 1, 65536)),
    "ioengine": _set("ioengine", _engine),
    "direct": _set("direct", lambda v, j: _bool(v)),
    "buffered": _set("direct", lambda v, j: not _bool(v)),
    "runtime": _set("runtime_ns", lambda v, j: fio_time(_need(v))),
    "timeout": _set("runtime_ns", lambda v, j: fio_time(_need(v))),
    "time_based": _set("time_based", lambda v, j: _bool(v)),
    "loops": _set("loops", lambda v, j: _int(_need(v), 1, 1 << 30)),
    "ramp_time": _set("ramp_time_ns", lambda v, j: fio_time(_need(v))),
    "file_service_type": _service,
    "random_distribution": _distribution,
    "norandommap": _set("norandommap", lambda v, j: _bool(v)),
    "randrepeat": _set("randrepeat", lambda v, j: _bool(v)),
    "rand_repeatable": _set("randrepeat", lambda v, j: _bool(v)),
    "randseed": _set("randseed", lambda v, j: _int(_need(v), 0, 2**64 - 1)),
    "group_reporting": _set("group_reporting", lambda v, j: _bool(v)),
    "buffer_compress_percentage": _buffers("buffer_compress_percentage", lambda v: _int(_need(v), 0, 100)),
    "buffer_compress_chunk": None,  # set below: needs kb_base
    "refill_buffers": _buffers("refill_buffers", _bool),
    "zero_buffers": _buffers("zero_buffers", _bool),
    "scramble_buffers": _buffers("scramble_buffers", _bool),
    "kb_base": _set("kb_base", _kb_base),
    "fsync": _set("fsync", lambda v, j: _int(_need(v), 0, 2**32 - 1)),
    "fdatasync": _set("fdatasync", lambda v, j: _int(_need(v), 0, 2**32 - 1)),
    "sync": _set("sync", _sync),
    "end_fsync": _set("end_fsync", lambda v, j: _bool(v)),
    "fsync_on_close": _set("fsync_on_close", lambda v, j: _bool(v)),
    "invalidate": _set("invalidate", lambda v, j: _bool(v)),
    "fadvise_hint": _set("fadvise_hint", lambda v, j: _fadvise(v)),
}


def _fadvise(value: Optional[str]) -> str:
    """fio's fadvise_hint (options.c): 0 none, 1 by the job's type (its default), random,
    sequential."""
    v = _need(value).strip().lower()
    named = {"0": "none", "1": "type", "random": "random", "sequential": "sequential"}
    if v not in named:
        raise FioError(f"{v!r} is not modelled; allowed: 0, 1, random, sequential")
    return named[v]


def _chunk(value: Optional[str], job: dict[str, Any]) -> None:
    job["buffers"] = dict(job["buffers"], buffer_compress_chunk=fio_size(_need(value), job["kb_base"]))


OPTIONS["buffer_compress_chunk"] = _chunk

#: Options accepted with no effect on the model, and why.
NO_EFFECT: dict[str, str] = {
    "name": "the job's name (a section header in a job file)",
    "description": "a comment",
    "thread": "threads instead of processes: the same I/O",
    "create_serialize": "when files are laid out, not what they hold",
    "eta": "progress output",
    "output-format": "report format",
}

for _k in NO_EFFECT:
    OPTIONS.setdefault(_k, lambda v, j: None)


def _defaults(fio_version: tuple[int, int] = (3, 36)) -> dict[str, Any]:
    return {
        "fio_version": fio_version,
        "kb_base": 1024,
        "rw": "read",
        "rwmixread": 50,
        "bs_read": 4096,
        "bs_write": 4096,
        "size": None,
        "filesize": None,
        "io_size": None,
        "offset": 0,
        "nrfiles": 1,
        "filename": None,
        "directory": None,
        "filename_format": "$jobname.$jobnum.$filenum",
        "numjobs": 1,
        "iodepth": 1,
        "ioengine": "psync",
        "direct": False,
        "runtime_ns": 0,
        "time_based": False,
        "loops": 1,
        "ramp_time_ns": 0,
        "file_service_type": "roundrobin",
        "file_service_nr": 1,
        "random_distribution": "random",
        "distribution_param": 0.0,
        "norandommap": False,
        "randrepeat": True,
        "randseed": FIO_RANDSEED,
        "group_reporting": False,
        "buffers": {},
        "fsync": 0,
        "fdatasync": 0,
        "sync": "none",
        "end_fsync": False,
        "fsync_on_close": False,
        "invalidate": True,
        "fadvise_hint": "type",
    }


# Ways to flush that are not modelled: refused by name.
SYNC_OPTIONS = ("write_barrier", "sync_file_range")

#: Options that commit what a job writes (ZFS's intent log; ext4's jbd2 and the XFS log).
COMMIT_OPTIONS = ("fsync", "fdatasync", "sync", "end_fsync", "fsync_on_close")


def _apply(job: dict[str, Any], sec: Section, origin: str, job_name: str) -> None:
    # kb_base first: it changes how the section's sizes read (fio parses it early too).
    ordered = sorted(sec.options, key=lambda o: o[0] != "kb_base")
    for key, value, where in ordered:
        handler = OPTIONS.get(key)
        if handler is None and key in SYNC_OPTIONS:
            raise FioError(
                f"{where}: job [{job_name}]: option {key!r} is not modelled; fsync=N, fdatasync=N, sync, "
                "end_fsync and fsync_on_close are (on ZFS)"
            )
        if handler is None:
            raise FioError(
                f"{where}: job [{job_name}]: unknown or unmodelled fio option {key!r} "
                f"(supported: {', '.join(sorted(k for k in OPTIONS if k not in NO_EFFECT))})"
            )
        try:
            handler(value, job)
        except FioError as e:
            raise FioError(f"{where}: job [{job_name}]: option {key}: {e}") from None


# ---------------------------------------------------------------------------------------
# Resolution


@dataclass
class ResolvedFio:
    """A fio workload resolved for the core."""

    jobs: list[dict[str, Any]]
    files: list[dict[str, Any]]
    job_names: list[str]


def resolve_jobs(file_sections: list[Section], cmd_sections: list[Section], origin: str,
                 fio_version: tuple[int, int] = (3, 36)) -> ResolvedFio:
    """Applies globals and options in fio's order (fio release ``fio_version``, major and
    minor); returns the core's jobs and files."""
    glob = _defaults(fio_version)
    cmd_global = [s for s in cmd_sections if s.is_global]
    for s in cmd_global:
        _apply(glob, s, origin, "global")
    raw_jobs: list[tuple[str, dict[str, Any], str]] = []
    for s in file_sections + [s for s in cmd_sections if not s.is_global]:
        if s.is_global:
            _apply(glob, s, origin, "global")
            continue
        job = dict(glob, buffers=dict(glob["buffers"]))
        _apply(job, s, origin, s.name)
        raw_jobs.append((s.name, job, s.where))
    if not raw_jobs:
        raise FioError(f"{origin}: no job section (fio runs nothing)")
    names = [n for n, _, _ in raw_jobs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise FioError(f"{origin}: job names must be unique here (phases select jobs by name): {', '.join(sorted(dup))}")
    file_index: dict[str, int] = {}
    file_sizes: list[int] = []
    jobs = []
    for name, j, where in raw_jobs:
        at = f"{where}: job [{name}]"
        if j["filename"]:
            paths = [p for p in j["filename"].split(":") if p]
            if not paths:
                raise FioError(f"{at}: filename={j['filename']!r} names no file (':' separates file names)")
            if j["directory"]:
                paths = [p if p.startswith("/") else f"{j['directory'].rstrip('/')}/{p}" for p in paths]
            nrfiles = len(paths)
            if "nrfiles" in j and j["nrfiles"] not in (1, nrfiles):
                raise FioError(f"{at}: nrfiles={j['nrfiles']} with {nrfiles} name(s) in filename")
            clone_paths = [paths] * j["numjobs"]
        else:
            nrfiles = j["nrfiles"]
            d = (j["directory"] or ".").rstrip("/")
            fmt = j["filename_format"]

            def fname(k: int, f: int) -> str:
                n = fmt.replace("$jobname", name).replace("$jobnum", str(k)).replace("$filenum", str(f))
                return n if n.startswith("/") else f"{d}/{n}"

            clone_paths = [[fname(k, f) for f in range(nrfiles)] for k in range(j["numjobs"])]
        size, filesize = j["size"], j["filesize"]
        if size is None and filesize is None:
            raise FioError(f"{at}: needs size or filesize (fio would need existing files to size the job)")
        if filesize is not None:
            per_file = filesize - j["offset"]
            if size is None:
                size = per_file * nrfiles
            file_bytes = filesize
        else:
            per_file = size // nrfiles
            file_bytes = j["offset"] + per_file
        if per_file <= 0:
            raise FioError(f"{at}: offset {j['offset']} leaves no room in files of {file_bytes} bytes")
        io_size = j["io_size"] if j["io_size"] is not None else size
        clone_files = []
        for paths in clone_paths:
            idx = []
            for p in paths:
                if p not in file_index:
                    file_index[p] = len(file_sizes)
                    file_sizes.append(0)
                k = file_index[p]
                file_sizes[k] = max(file_sizes[k], file_bytes)
                idx.append(k)
            clone_files.append(idx)
        buffers = {k: j["buffers"].get(k) for k in ("zero_buffers", "refill_buffers", "scramble_buffers", "buffer_compress_percentage", "buffer_compress_chunk")}
        jobs.append({
            "name": name,
            "rw": j["rw"],
            "rwmixread": j["rwmixread"],
            "bs_read": j["bs_read"],
            "bs_write": j["bs_write"],
            "numjobs": j["numjobs"],
            "clone_files": clone_files,
            "offset": j["offset"],
            "file_range": per_file,
            "io_size": io_size,
            "loops": j["loops"],
            "runtime_ns": j["runtime_ns"],
            "time_based": j["time_based"],
            "ramp_time_ns": j["ramp_time_ns"],
            "ioengine": j["ioengine"],
            "iodepth": j["iodepth"],
            "direct": j["direct"],
            "file_service_type": j["file_service_type"],
            "file_service_nr": j["file_service_nr"],
            "random_distribution": j["random_distribution"],
            "distribution_param": float(j["distribution_param"]),
            "norandommap": j["norandommap"],
            "randrepeat": j["randrepeat"],
            "randseed": j["randseed"],
            "group_reporting": j["group_reporting"],
            "buffers": buffers,
            "fsync": j["fsync"],
            "fdatasync": j["fdatasync"],
            "sync": j["sync"],
            "end_fsync": j["end_fsync"],
            "fsync_on_close": j["fsync_on_close"],
            "invalidate": j["invalidate"],
            "fadvise_hint": j["fadvise_hint"],
        })
        if j["time_based"] and not j["runtime_ns"]:
            raise FioError(f"{at}: time_based needs a runtime")
    files = [{"name": p, "size": file_sizes[k]} for p, k in file_index.items()]
    return ResolvedFio(jobs=jobs, files=files, job_names=names)


def job_writes(job: dict[str, Any]) -> bool:
    """True if a resolved job writes."""
    return job["rw"] in ("write", "randwrite") or (job["rw"] in ("rw", "randrw") and job["rwmixread"] < 100)


def job_reads(job: dict[str, Any]) -> bool:
    """True if a resolved job reads."""
    return job["rw"] in ("read", "randread") or (job["rw"] in ("rw", "randrw") and job["rwmixread"] > 0)


def job_commits(job: dict[str, Any]) -> bool:
    """True if a resolved job commits what it writes (fsync, fdatasync, O_SYNC, end fsync)."""
    return job_writes(job) and bool(job["fsync"] or job["fdatasync"] or job["sync"] != "none"
                                    or job["end_fsync"] or job["fsync_on_close"])


def version_tuple(version: str) -> tuple[int, int]:
    """(major, minor) of a fio release string ("3.36", "fio-2.0.14")."""
    m = re.fullmatch(r"(?:fio-)?(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    return (int(m.group(1)), int(m.group(2))) if m else (3, 36)


def load(job_file: Optional[str], inline: Optional[str], options: Optional[list[str] | str], base_dir: Path,
         fio_version: str = DEFAULT_FIO_VERSION) -> ResolvedFio:
    """Reads the job file (relative to ``base_dir``) or inline text and the options, as
    fio release ``fio_version`` reads them."""
    file_sections: list[Section] = []
    origin = "options"
    if job_file is not None:
        path = Path(job_file)
        if not path.is_absolute():
            path = base_dir / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise FioError(f"fio job file {path}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise FioError(
                f"fio job file {path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
            ) from None
        origin = str(job_file)
        file_sections = parse_job_file(text, origin)
    elif inline is not None:
        origin = "workload.jobs"
        file_sections = parse_job_file(inline, origin)
    cmd = parse_command_line(options, "workload.options") if options else []
    return resolve_jobs(file_sections, cmd, origin, version_tuple(fio_version))
