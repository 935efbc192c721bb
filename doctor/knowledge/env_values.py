"""The environment variables the stack reads and the values each reader accepts: profiles/env-values.toml.

Each row was read from the reader's own source at a release tag (HCCL, torch_npu, vllm-ascend, verl, MindSpeed): how the reader
turns the text into a value (`parse`), which values it takes (`values`, `min`/`max`, `multiple_of`), and what it
does with any other value (`on_invalid`: `error` when it raises or fails to initialise, `ignored` when it falls
back to its default or quietly reads the text as something else). A row holds for the releases its `releases`
ranges name (any one of them), which end at the newest release read; a reader's `read_at` lists every release
whose source was read, so a snapshot whose reader version is unknown is judged only where every one of those
releases agrees (`judge_unknown`).

Pure logic: `parse` builds the table from the TOML document, `judge` / `judge_unknown` evaluate one value.
Read and validated on first use (`load`), never at import; a malformed file is an InputError naming the file
and the key (exit 2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import CannVersion, ascend_satisfies, parse_pkg_version, pkg_satisfies
from doctor.report import COMPONENTS
from doctor.tomlfile import read_toml

SCHEMA = "doctor.env-values/1"
FILE = "env-values.toml"
PARSES = ("strtol", "digits", "python-int", "float", "text", "text-nocase", "allocator", "keyed-nocase", "affinity", "hccl-algo",
          "list-nocase", "port-ranges", "any")
# parses whose keys are [[option]] rows: `allocator` refuses a key it has no row for, `keyed-nocase` passes it over
KEYED = ("allocator", "keyed-nocase")
ON_INVALID = ("error", "ignored")
# Judged by other checks (doctor/checks/network.py, env.py, devices.py, vllm.py): never rows of this table.
# (network.py reads HCCL_IF_BASE_PORT only to find HCCL's ports in use; whether HCCL takes the value is a row here.)
JUDGED_ELSEWHERE = frozenset({
    "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_IF_IP", "HCCL_SOCKET_IFNAME",
    "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "VLLM_HOST_IP", "ASCEND_RT_VISIBLE_DEVICES",
    "ASCEND_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "VLLM_USE_V1",
})
# Text a reader that takes a number reads as 0 which also means "off" to a person: harmless, not reported.
_FALSE_WORDS = frozenset({"", "false", "off", "no", "n", "f"})
_VAR = {"name", "reader", "releases", "read_at", "parse", "values", "min", "max", "multiple_of", "gt", "lt",
        "on_invalid", "does", "read_from", "source", "conflicts"}
_VAR_REQUIRED = ("name", "reader", "releases", "read_at", "parse", "on_invalid", "does", "read_from", "source")
_OPTION = {"var", "key", "releases", "read_at", "parse", "values", "min", "max", "multiple_of", "gt", "lt",
           "read_from", "source"}
_OPTION_REQUIRED = ("var", "key", "releases", "read_at", "parse", "read_from", "source")


@dataclass(frozen=True)
class Rule:
    """What one reader accepts: the parse and the constraints on the parsed value."""

    parse: str
    values: tuple[Any, ...] = ()
    min: float | None = None
    max: float | None = None
    multiple_of: int | None = None
    gt: float | None = None
    lt: float | None = None

    def takes(self, x: float) -> bool:
        """Is the parsed number `x` one the reader takes?"""
        return _in_range(self, x)

    def accepts(self) -> str:
        """The accepted values in words ("0, 1 or 2", "an integer in [1, 7]", "True or False")."""
        if self.parse == "affinity":
            return "a mode number (0 off, 1, 2), or mode:N and npuX:a-b items joined by ','"
        if self.parse == "hccl-algo":
            return ("level0:NA;level1:<algo>[;level2:<algo>], or <op>=level0:NA;level1:<algo> items joined by '/' "
                    "(<op> one of " + ", ".join(HCCL_ALGO_OPS) + "), <algo> one of " + ", ".join(map(str, self.values)))
        if self.parse == "port-ranges":
            lo = "" if self.min is None else f"{self.min:g}"
            hi = "" if self.max is None else f"{self.max:g}"
            return f"auto, or ports and lo-hi ranges in [{lo}, {hi}] joined by ',' that do not overlap"
        if self.parse == "keyed-nocase":
            return "key:value items joined by ',' (any case, blanks dropped), each with exactly one ':'"
        if self.parse == "list-nocase":
            return ("one or more of " + ", ".join(map(str, self.values)) + " (any case) joined by ',' with no blanks, "
                    "'^' first to invert")
        if self.values:
            vs = [str(v) for v in self.values]
            body = vs[0] if len(vs) == 1 else ", ".join(vs[:-1]) + " or " + vs[-1]
            return body + (" (any case)" if self.parse == "text-nocase" else "")
        kind = "a number" if self.parse == "float" else "an integer"
        parts = []
        if self.min is not None or self.max is not None:
            lo = "" if self.min is None else f"{self.min:g}"
            hi = "" if self.max is None else f"{self.max:g}"
            parts.append(f">= {lo}" if not hi else (f"<= {hi}" if not lo else f"in [{lo}, {hi}]"))
        if self.gt is not None or self.lt is not None:
            lo = "" if self.gt is None else f"{self.gt:g}"
            hi = "" if self.lt is None else f"{self.lt:g}"
            parts.append(f"> {lo}" if not hi else (f"< {hi}" if not lo else f"in ({lo}, {hi})"))
        if self.multiple_of:
            parts.append(f"a multiple of {self.multiple_of}")
        return " ".join([kind] + ([", ".join(parts)] if parts else []))


@dataclass(frozen=True)
class Row:
    """One variable (or one key of an option-list variable) as the reader's releases in `releases` read it."""

    name: str
    reader: str
    releases: tuple[str, ...]
    read_at: tuple[str, ...]
    rule: Rule
    on_invalid: str
    does: str
    read_from: str
    source: str
    conflicts: tuple[tuple[str, str], ...] = ()
    key: str | None = None  # set for an option of an option-list variable (PYTORCH_NPU_ALLOC_CONF)


@dataclass(frozen=True)
class Reader:
    name: str
    version_of: str  # "cann" or a distribution name
    read_at: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    read: str
    readers: dict[str, Reader]
    rows: tuple[Row, ...]
    options: tuple[Row, ...]

    def names(self) -> frozenset[str]:
        return frozenset(r.name for r in self.rows)

    def rows_of(self, name: str, reader: str | None = None) -> list[Row]:
        return [r for r in self.rows if r.name == name and reader in (None, r.reader)]

    def readers_of(self, name: str) -> list[Reader]:
        """The readers of `name`, in table order (HCCL_BUFFSIZE has two: HCCL and torch_npu)."""
        out: list[Reader] = []
        for r in self.rows:
            if r.name == name and self.readers[r.reader] not in out:
                out.append(self.readers[r.reader])
        return out

    def options_of(self, name: str) -> list[Row]:
        return [o for o in self.options if o.name == name]


@dataclass(frozen=True)
class Verdict:
    """What the reader does with the value: `kind` is "invalid" (it refuses) or "ignored" (it falls back or reads
    the text as something else); `severity` error or warning; `why` says what is wrong, `accepts` what it takes."""

    kind: str
    severity: str
    why: str
    accepts: str
    row: Row


# --------------------------------------------------------------------------- parsing the table


def _version_ok(version_of: str, text: str) -> bool:
    return (CannVersion.try_parse(text) if version_of == "cann" else parse_pkg_version(text)) is not None


def _cann_in(version: str, spec: str) -> bool | None:
    """Does CANN `version` satisfy `spec` (clauses like ">=8.5.0,<9.0.0-beta.1", compared as CANN versions)?"""
    v = CannVersion.try_parse(version)
    return None if v is None else ascend_satisfies(v, spec)


def in_releases(version_of: str, version: str, releases: tuple[str, ...]) -> bool:
    """Is `version` inside any of the ranges? A package's local label (2.5.1+cpu, 0.9.1+empty) is ignored."""
    if version_of != "cann":
        pv = parse_pkg_version(version)
        if pv is None:
            return False
        version = pv.public
    for spec in releases:
        ok = _cann_in(version, spec) if version_of == "cann" else pkg_satisfies(version, spec)
        if ok:
            return True
    return False


def _rule(v: Validator, r: dict[str, Any], p: str) -> Rule:
    parse_ = v.req(r["parse"], f"{p}.parse")
    if parse_ not in PARSES:
        raise v.fail(f"{p}.parse", f"must be one of {', '.join(PARSES)}")
    values = r.get("values", [])
    if not isinstance(values, list):
        raise v.fail(f"{p}.values", "must be an array")
    numeric = parse_ in ("strtol", "digits", "python-int", "float", "port-ranges")
    for i, x in enumerate(values):
        if numeric and not (isinstance(x, int) and not isinstance(x, bool)):
            raise v.fail(f"{p}.values[{i}]", f"must be an integer for parse = {parse_!r}")
        if not numeric and not isinstance(x, str):
            raise v.fail(f"{p}.values[{i}]", f"must be a string for parse = {parse_!r}")
    nums: dict[str, float | None] = {}
    for k in ("min", "max", "gt", "lt", "multiple_of"):
        x = r.get(k)
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))):
            raise v.fail(f"{p}.{k}", "must be a number")
        if x is not None and not numeric:
            raise v.fail(f"{p}.{k}", f"only numbers take a range (parse = {parse_!r})")
        nums[k] = x
    mult = nums["multiple_of"]
    return Rule(parse_, tuple(values), nums["min"], nums["max"], int(mult) if mult else None, nums["gt"], nums["lt"])


def _releases(v: Validator, r: dict[str, Any], p: str, reader: Reader) -> tuple[tuple[str, ...], tuple[str, ...]]:
    rel = r["releases"]
    if isinstance(rel, str):
        rel = [rel]
    if not isinstance(rel, list) or not rel or not all(isinstance(s, str) for s in rel):
        raise v.fail(f"{p}.releases", "must be a range or a list of ranges")
    probe = "8.5.0" if reader.version_of == "cann" else "0"
    for j, s in enumerate(rel):
        ok = _cann_in(probe, s) if reader.version_of == "cann" else pkg_satisfies(probe, s)
        if ok is None:
            raise v.fail(f"{p}.releases[{j}]", f"{s!r} is not a version range of {reader.version_of}")
    read_at = r["read_at"]
    if not isinstance(read_at, list) or not read_at:
        raise v.fail(f"{p}.read_at", "must list the releases whose source was read")
    for j, x in enumerate(read_at):
        if not isinstance(x, str) or not _version_ok(reader.version_of, x):
            raise v.fail(f"{p}.read_at[{j}]", f"not a {reader.version_of} version: {x!r}")
        if not in_releases(reader.version_of, x, tuple(rel)):
            raise v.fail(f"{p}.read_at[{j}]", f"{x} is not one of the releases {rel} the row covers")
    return tuple(rel), tuple(read_at)


def parse(data: object, source: str) -> Table:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "reader", "var", "option"}, "", required=("schema", "read", "reader", "var"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    readers: dict[str, Reader] = {}
    for i, raw in enumerate(t["reader"] if isinstance(t["reader"], list) else []):
        p = f"reader[{i}]"
        r = v.keys(raw, {"name", "version_of", "read_at"}, p, required=("name", "version_of", "read_at"))
        name = v.req(r["name"], f"{p}.name")
        if name not in COMPONENTS:
            raise v.fail(f"{p}.name", f"{name!r} is not a component of doctor/report.py COMPONENTS")
        vo = v.req(r["version_of"], f"{p}.version_of")
        read_at = r["read_at"]
        if not isinstance(read_at, list) or not read_at or not all(isinstance(x, str) and _version_ok(vo, x) for x in read_at):
            raise v.fail(f"{p}.read_at", f"must list {vo} versions")
        readers[name] = Reader(name, vo, tuple(read_at))
    if not readers:
        raise v.fail("reader", "must be an array of tables")
    rows: list[Row] = []
    if not isinstance(t["var"], list):
        raise v.fail("var", "must be an array of tables")
    for i, raw in enumerate(t["var"]):
        p = f"var[{i}]"
        r = v.keys(raw, _VAR, p, required=_VAR_REQUIRED)
        name = v.req(r["name"], f"{p}.name")
        if name in JUDGED_ELSEWHERE:
            raise v.fail(f"{p}.name", f"{name} is judged by another check; it takes no row here")
        reader = readers.get(v.req(r["reader"], f"{p}.reader"))
        if reader is None:
            raise v.fail(f"{p}.reader", f"no [[reader]] named {r['reader']!r}")
        rel, read_at = _releases(v, r, p, reader)
        on_invalid = v.req(r["on_invalid"], f"{p}.on_invalid")
        if on_invalid not in ON_INVALID:
            raise v.fail(f"{p}.on_invalid", f"must be one of {', '.join(ON_INVALID)}")
        conflicts = r.get("conflicts", [])
        if not isinstance(conflicts, list) or not all(
                isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in conflicts):
            raise v.fail(f"{p}.conflicts", 'must be pairs: ["key=value", "other key"] (allocator) or ["value", "OTHER=value"]')
        if r["parse"] not in KEYED and not all("=" in c[1] for c in conflicts):
            raise v.fail(f"{p}.conflicts", 'a plain variable\'s conflicts are ["value", "OTHER=value"] ("OTHER=" for unset)')
        rows.append(Row(name, reader.name, rel, read_at, _rule(v, r, p), on_invalid, v.req(r["does"], f"{p}.does"),
                        v.req(r["read_from"], f"{p}.read_from"), v.sources(r["source"], f"{p}.source"),
                        tuple((c[0], c[1]) for c in conflicts)))
    options: list[Row] = []
    raw_opts = t.get("option", [])
    if not isinstance(raw_opts, list):
        raise v.fail("option", "must be an array of tables")
    for i, raw in enumerate(raw_opts):
        p = f"option[{i}]"
        r = v.keys(raw, _OPTION, p, required=_OPTION_REQUIRED)
        var = v.req(r["var"], f"{p}.var")
        parents = [x for x in rows if x.name == var and x.rule.parse in KEYED]
        if not parents:
            raise v.fail(f"{p}.var", f"no [[var]] {var!r} with parse = " + " or ".join(f'"{k}"' for k in KEYED))
        reader = readers[parents[0].reader]
        rel, read_at = _releases(v, r, p, reader)
        options.append(Row(var, reader.name, rel, read_at, _rule(v, r, p), parents[0].on_invalid, parents[0].does,
                           v.req(r["read_from"], f"{p}.read_from"), v.sources(r["source"], f"{p}.source"),
                           key=v.req(r["key"], f"{p}.key")))
    return Table(read, readers, tuple(rows), tuple(options))


_TABLES: dict[str, Table] = {}


def load(path: str | None = None) -> Table:
    """The table in use (location.table_path: the knowledge directory's copy, else the packaged one), validated on
    first use."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "table of the values environment variables take"), p)
    return _TABLES[p]


# --------------------------------------------------------------------------- reading a value as the reader does

_STRTOL = re.compile(r"^[ \t\n\v\f\r]*([+-]?\d+)")
_PYINT = re.compile(r"^[+-]?\d+(?:_\d+)*$")


def _strtol(text: str) -> tuple[int, bool]:
    """C strtol(text, NULL, 10): the leading integer (0 when there is none) and whether that was all the text."""
    m = _STRTOL.match(text)
    if not m:
        return 0, False
    return int(m.group(1)), m.end() == len(text)


def _in_range(rule: Rule, x: float) -> bool:
    if rule.values and x not in rule.values:
        return False
    if rule.min is not None and x < rule.min or rule.max is not None and x > rule.max:
        return False
    if rule.gt is not None and x <= rule.gt or rule.lt is not None and x >= rule.lt:
        return False
    return not (rule.multiple_of and int(x) % rule.multiple_of)


# HCCL_ALGO's grammar (hicann/hccl src/common/alg_env_config.cc SetHcclAlgoConfig and the functions it calls, the
# same at every tag v8.5.0-beta.1 ... v9.2.0-beta.1); the algorithm names are the rows' `values`.
HCCL_ALGO_LEVELS = ("level0", "level1", "level2", "level3")
HCCL_ALGO_OPS = ("broadcast", "allreduce", "reduce", "send", "receive", "allgather", "reducescatter", "alltoall",
                 "gather", "scatter", "sendrecv")


def _hccl_algo_levels(text: str, algos: tuple[Any, ...], per_op: bool) -> str | None:
    """ParseAlgoString: `level:algo` items joined by ';' (at most 4, each level once); None when HCCL takes them."""
    items = text.split(";")
    if "" in items or len(items) > len(HCCL_ALGO_LEVELS):
        return f"has an empty item or more than {len(HCCL_ALGO_LEVELS)} 'level:algo' items"
    seen = set()
    for item in items:
        level, sep, algo = item.partition(":")
        if not sep or not level or not algo:
            return f"item {item!r} is not level:algo"
        if level not in HCCL_ALGO_LEVELS:
            return f"level {level!r} is not one of {', '.join(HCCL_ALGO_LEVELS)}"
        if algo not in algos:
            return f"algorithm {algo!r} is not one it knows (the names are case-sensitive)"
        if level in seen:
            return f"sets {level} twice"
        seen.add(level)
        if per_op and level == "level0" and algo == "null":
            return "sets level0:null for an operator"
    return None


def _hccl_algo(value: str, algos: tuple[Any, ...]) -> str | None:
    """SetHcclAlgoConfig: blanks dropped; one global `level:algo;...` list, or `op=level:algo;...` items joined by
    '/' (not both, every op HCCL knows); what is wrong, None when HCCL takes the text."""
    s = value.replace(" ", "")
    if not s:
        return None
    parts = s.split("/")
    if "" in parts:
        return "has an empty '/' item"
    if any(p.startswith("=") or p.endswith("=") for p in parts):
        return "has an item with nothing before or after '='"
    per_op = ["=" in p for p in parts]
    if not any(per_op):
        return "has more than one global setting" if len(parts) > 1 else _hccl_algo_levels(s, algos, False)
    if not all(per_op):
        return "mixes a global setting with per-operator ones"
    for p in parts:
        op, _, rest = p.partition("=")
        if op not in HCCL_ALGO_OPS:
            return f"operator {op!r} is not one of {', '.join(HCCL_ALGO_OPS)}"
        bad = _hccl_algo_levels(rest, algos, True)
        if bad:
            return f"{op}: {bad}"
    return None


def _port_ranges(rule: Rule, value: str) -> str | None:
    """HCCL's SetSocketPortRange: exactly 'auto', or (blanks dropped) ports and lo-hi ranges of digits joined by ','
    within the row's min/max, none inverted or overlapping; what is wrong, None when HCCL takes the text."""
    if value == "auto":
        return None
    s = value.replace(" ", "")
    if not s:
        return None
    ranges = []
    for item in s.split(","):
        lo, sep, hi = item.partition("-")
        hi = hi if sep else lo
        if not (lo.isdigit() and hi.isdigit() and lo.isascii() and hi.isascii()):
            return f"{item!r} is not a port or a lo-hi range of ports"
        a, b = int(lo), int(hi)
        if a > b:
            return f"range {item!r} is inverted"
        if not rule.takes(a) or not rule.takes(b):
            return f"{item!r} is outside the ports it takes"
        ranges.append((a, b))
    ranges.sort()
    return next((f"{p[0]}-{p[1]} overlaps {q[0]}-{q[1]}" for p, q in zip(ranges, ranges[1:], strict=False)
                 if p[1] >= q[0]), None)


def _judge_text(row: Row, rule: Rule, value: str, what: str) -> tuple[str, str] | None:
    """(kind, why) when the reader refuses or misreads `value`; None when it takes it as written."""
    p = rule.parse
    if p == "any":
        return None
    if p == "affinity":
        # torch_npu's CPU_AFFINITY_CONF: a bare mode number, or items (mode:N, npuX:a-b, ...) joined by ','; a bare
        # word or a non-numeric mode is skipped, so the mode stays 0 (binding off). Only those two forms are judged.
        s = value.strip()
        if "," not in s and ":" not in s:
            return None if s.isdigit() or s.lower() in _FALSE_WORDS else ("ignored", f"{what}={value!r} is not a mode number, so the mode stays 0 (off)")
        mode = re.search(r"(?:^|,)\s*mode:([^,]*)", s)
        if mode and not mode.group(1).isdigit():
            return ("ignored", f"{what}: mode:{mode.group(1)} is not a number, so the mode stays 0 (off)")
        return None
    if p == "hccl-algo":
        bad = _hccl_algo(value, rule.values)
        return None if bad is None else ("invalid", f"{what}={value!r}: {bad}")
    if p == "port-ranges":
        bad = _port_ranges(rule, value)
        return None if bad is None else ("invalid", f"{what}={value!r}: {bad}")
    if p == "list-nocase":
        # HCCL's InitDebugConfigByEnv: an optional leading '^', then strtok_r on ',' (empty items skipped) and
        # strcasecmp against each name; blanks are part of an item
        known = {str(x).upper() for x in rule.values}
        bad_items = [x for x in value.removeprefix("^").split(",") if x and x.upper() not in known]
        return ("invalid", f"{what}={value!r}: {bad_items[0]!r} is not one of the names it takes") if bad_items else None
    if p in ("text", "text-nocase"):
        ok = value in rule.values if p == "text" else value.upper() in {x.upper() for x in rule.values}
        return None if ok else ("invalid", f"{what}={value!r} is not one of the values it takes")
    if p == "strtol":
        n, whole = _strtol(value)
        if not _in_range(rule, n):
            return ("invalid", f"{what}={value!r} is read as {n}, which it does not take" if not whole
                    else f"{what}={value!r} is outside what it takes")
        if not whole and value.strip().lower() not in _FALSE_WORDS:
            return ("ignored", f"{what}={value!r} is read as {n} (only the leading digits count; none means 0)")
        return None
    if p in ("digits", "python-int"):
        s = value.strip() if p == "python-int" else value
        if not (s.isdigit() if p == "digits" else _PYINT.match(s)):
            return ("invalid", f"{what}={value!r} is not " + ("a plain decimal number" if p == "digits" else "an integer"))
        return None if _in_range(rule, int(s)) else ("invalid", f"{what}={value!r} is outside what it takes")
    if p == "float":
        try:
            x = float(value.strip())
        except ValueError:
            return ("invalid", f"{what}={value!r} is not a number")
        return None if math.isfinite(x) and _in_range(rule, x) else ("invalid", f"{what}={value!r} is outside what it takes")
    return None


def _options(value: str) -> list[tuple[str, str | None]] | None:
    """torch_npu's PYTORCH_NPU_ALLOC_CONF grammar: `key:value` pairs joined by ',' (spaces dropped, a
    roundup_power2_divisions value may be a bracketed list); None when the text breaks the grammar."""
    s = value.replace(" ", "")
    s = re.sub(r"\[[^\]]*\]", "[]", s)
    out: list[tuple[str, str | None]] = []
    if not s:
        return out
    for part in s.split(","):
        if not part:
            return None
        k, sep, v = part.partition(":")
        out.append((k, v if sep else None))
    return out


def _was_read(reader: Reader, row: Row, version: str) -> bool:
    """Was this very release read (for the row or the reader)? Then a key missing from it is known to be missing."""
    v = parse_pkg_version(version)
    if v is None:
        return False
    return any((x_v := parse_pkg_version(x)) is not None and x_v.public == v.public for x in (*row.read_at, *reader.read_at))


def _judge_allocator(row: Row, options: list[Row], reader: Reader, version: str, value: str) -> Verdict | None:
    pairs = _options(value)
    if pairs is None:
        return Verdict("invalid", _severity(row), f"{row.name}={value!r} breaks its grammar (key:value,key:value)",
                       "key:value pairs joined by ','", row)
    known = [o for o in options if in_releases(reader.version_of, version, o.releases)]
    keys = sorted({o.key for o in known if o.key})
    anywhere = {o.key for o in options}
    seen: dict[str, str | None] = {}
    for k, v in pairs:
        opt = next((o for o in known if o.key == k), None)
        if opt is None and k in anywhere and not _was_read(reader, row, version):
            continue  # another release knows the key; whether this one does was not read
        if opt is None:
            return Verdict("invalid", _severity(row), f"{row.name}: {k!r} is not an option this release knows",
                           "the options " + ", ".join(keys), row)
        if v is None or v == "":
            return Verdict("invalid", _severity(row), f"{row.name}: {k} has no value (expected {k}:<value>)",
                           f"{k}:" + opt.rule.accepts(), row)
        bad = _judge_text(opt, opt.rule, v, f"{row.name} {k}")
        if bad is not None:
            return Verdict("invalid", _severity(row), bad[1], f"{k}: " + opt.rule.accepts(), opt)
        seen[k] = v
    for a, b in row.conflicts:
        ka, _, va = a.partition("=")
        if seen.get(ka) == va and b in seen:
            return Verdict("invalid", _severity(row), f"{row.name} sets {ka}:{va} together with {b}",
                           f"{ka}:{va} without {b}", row)
    return None


def _keyed_items(value: str) -> list[list[str]]:
    """HCCL's ParseDfsConfig / SplitDfsConfig: only ' ' is dropped, the text is lower-cased, then split on ',' and
    each item on ':' (std::getline: an empty text has no items, a trailing delimiter adds an empty one)."""
    s = value.replace(" ", "").lower()
    return [] if not s else [item.split(":") if item else [] for item in s.split(",")]


def _judge_keyed(row: Row, options: list[Row], reader: Reader, version: str, value: str) -> Verdict | None:
    """A `keyed-nocase` variable: every item must be exactly key:value; a key with an [[option]] row at this release
    must hold a value it takes; any other key is left alone (another part of the reader reads it, or none does)."""
    known = {o.key: o for o in options if in_releases(reader.version_of, version, o.releases)}
    for item in _keyed_items(value):
        if len(item) != 2:
            shown = ":".join(item)
            return Verdict("invalid", _severity(row), f"{row.name}={value!r}: item {shown!r} is not key:value",
                           row.rule.accepts(), row)
        opt = known.get(item[0])
        bad = None if opt is None else _judge_text(opt, opt.rule, item[1], f"{row.name} {item[0]}")
        if opt is not None and bad is not None:
            return Verdict("invalid", _severity(row), bad[1], f"{item[0]}: " + opt.rule.accepts(), opt)
    return None


def _severity(row: Row) -> str:
    return "error" if row.on_invalid == "error" else "warning"


Other = Callable[[str], "str | None"]


def _partner(row: Row, value: str, other: Other | None) -> Verdict | None:
    """A value the reader refuses together with another variable's (`conflicts` of a plain row: [value,
    "OTHER=value"], "OTHER=" meaning OTHER unset). `other(name)` is that variable's value, "" when it is known to be
    unset, None when it is not known (then nothing is said)."""
    if other is None:
        return None
    for mine, cond in row.conflicts:
        oname, _, oval = cond.partition("=")
        theirs = other(oname)
        if value.strip() == mine and theirs is not None and theirs.strip() == oval:
            with_ = f"{oname}={oval}" if oval else f"{oname} unset"
            return Verdict("invalid", _severity(row), f"{row.name}={value} is refused together with {with_}",
                           f"{row.name}={mine} only with {oname} " + ("set otherwise" if oval else "set"), row)
    return None


def judge(table: Table, name: str, value: str, reader: str, version: str, other: Other | None = None) -> Verdict | None:
    """What `reader` at `version` does with `value` in `name`; None when it takes it, or when no row covers that
    release (a variable or release outside the table is not judged). `other` looks up the variables a row names in
    its `conflicts`."""
    rd = table.readers[reader]
    for row in table.rows_of(name, reader):
        if not in_releases(rd.version_of, version, row.releases):
            continue
        if row.rule.parse == "allocator":
            return _judge_allocator(row, table.options_of(name), rd, version, value)
        if row.rule.parse == "keyed-nocase":
            return _judge_keyed(row, table.options_of(name), rd, version, value)
        bad = _judge_text(row, row.rule, value, name)
        if bad is None:
            return _partner(row, value, other)
        kind, why = bad
        sev = "warning" if kind == "ignored" else _severity(row)
        if sev == "warning" and kind == "invalid":  # a reader that falls back instead of refusing
            why += ", so it is ignored"
        return Verdict("invalid" if sev == "error" else "ignored", sev, why, row.rule.accepts(), row)
    return None


def judge_unknown(table: Table, name: str, value: str, reader: str,
                  other: Other | None = None) -> tuple[Verdict, tuple[str, ...]] | None:
    """The verdict that holds for every release of `reader` whose source was read, between the oldest and the newest
    release read for `name` (the reader's version is not known): None unless each of them refuses or misreads the
    value (a release in that span without a row for `name` says nothing); the mildest of their verdicts, with the
    releases it holds for."""
    rd = table.readers[reader]
    rows = table.rows_of(name, reader)
    if not rows:
        return None
    key = (lambda x: CannVersion(x)) if rd.version_of == "cann" else (lambda x: Version(x))
    read = [key(x) for r in rows for x in r.read_at]
    lo, hi = min(read), max(read)
    releases = tuple(x for x in rd.read_at if lo <= key(x) <= hi)  # the reader's releases read within the rows' span
    verdicts = []
    for rel in releases:
        v = judge(table, name, value, reader, rel, other)
        if v is None:
            return None
        verdicts.append(v)
    severity = "warning" if any(x.severity == "warning" for x in verdicts) else "error"
    newest = [x for x in verdicts if x.severity == severity][-1]  # read_at runs oldest to newest
    return newest, releases
