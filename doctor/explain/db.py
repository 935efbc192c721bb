"""The signature database: loading and validating `profiles/signatures.toml` (data, not code).

A signature turns a log line into a finding. Besides plain regular expressions it can name *classes* of
messages, expanded here so that the database lists each cause once:

* `libraries = ["libatb\\.so", ...]`: the cause is "this shared library cannot be loaded"; every message
  form the dynamic loader, ctypes, torch and the linker print for a missing library is matched
  (`LIBRARY_MESSAGES`), so one entry maps the library to the package that ships it.
* `modules = ["torch_npu", ...]`: "No module named ..." for that module (or a submodule).
* a regex with a named group `module` (e.g. `cannot import name '\\w+' from '(?P<module>[\\w.]+)'`): the finding's
  first component becomes the one that Python package belongs to (`MODULE_COMPONENTS`), so one class signature
  ("this package does not export what its caller expects") points at the right package.
* a regex with a named group `name` (e.g. Hydra's `Could not override '(?P<name>[^']+)'`): the finding's title ends
  with the quoted name, so it says which key, group or file the message is about, not only its evidence line.

Every pattern must contain a fixed phrase of at least three characters (its *anchor*): the streaming
matcher only runs regular expressions on lines that contain one (see `doctor.explain.anchors`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from doctor import cacheprune, keptfile
from doctor.errors import InputError
from doctor.explain import aho, anchors
from doctor.explain.anchors import literal_for, runs_for, split_alternatives
from doctor.explain.lazyre import LazyRegex
from doctor.knowledge.ownership import MODULE_DISTRIBUTIONS, component_of_module
from doctor.report import COMPONENTS, Severity
from doctor.tomlfile import read_toml

SCHEMA = "doctor.signatures/1"
DEFAULT_DB = Path(__file__).resolve().parent.parent / "profiles" / "signatures.toml"

# How a missing shared library shows up: the loader, ctypes/torch.ops.load_library and the linker.
LIBRARY_MESSAGES = (
    r"{lib}[\w.+-]*: cannot open shared object file",
    r"error while loading shared libraries: {lib}",
    r"[Cc]ould not load (?:this )?library:? \S*{lib}",
    r"{lib}[\w.+-]*, needed by \S+, not found",
    r"Failed to import [\w.]+: ?{lib}[\w.+-]*: cannot open",
    r"cannot load library '{lib}",  # cffi (e.g. soundfile loading libsndfile)
)
MODULE_MESSAGES = (r"No module named '{mod}(?:['.]|$)", r"No module named {mod}\b")
# Top-level Python package -> the component that owns it (for signatures with a `module` group): the one
# ownership table the whole doctor shares (doctor.knowledge.ownership). Packages without a component of their own
# ("python") leave the signature's components as they are.
MODULE_COMPONENTS = {m: c for m in (*MODULE_DISTRIBUTIONS, "te", "tbe", "topi", "acl")
                     if (c := component_of_module(m)) not in (None, "python")}

ROLES = ("root", "knock-on")
_ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REQUIRED = ("id", "severity", "components", "specificity", "title", "fix", "source")
_KNOWN = frozenset(
    _REQUIRED
    + ("regex", "libraries", "modules", "example", "examples", "detail", "commands", "context", "supersedes",
       "fallback", "yields", "role", "example_kind", "example_from", "example_context", "quoted",
       "lasting")
)
_EXAMPLE_KINDS = ("report", "source-message")


@dataclass(frozen=True)
class Signature:
    """One known failure: how to recognise it in a log and what to tell the user."""

    id: str
    severity: Severity
    components: tuple[str, ...]
    specificity: int
    patterns: tuple[LazyRegex, ...]
    title: str
    detail: str
    fix: str
    commands: tuple[str, ...]
    source: str
    examples: tuple[str, ...]
    example_kind: str = "report"
    example_from: str | None = None
    example_context: tuple[str, ...] = ()
    context: tuple[tuple[LazyRegex, ...], ...] = ()  # every rule must match; any alternative of a rule
    supersedes: tuple[str, ...] = ()
    fallback: bool = False
    yields: bool = False  # a class signature that gives way to attribution where it knows more (doctor.explain.findings)
    # its context is waived when the whole log is a quoted message (doctor.explain.findings.SHORT_LOG lines at most):
    # a report that quotes only the failing line has no surrounding log to carry the context
    quoted: bool = False
    role: str = "root"  # "knock-on": usually the consequence of a failure elsewhere (a peer rank, a dead worker)
    # what it reports outlives the exception that carried it (a device fault, a failed HCCL communicator): caught and
    # logged as handled, it is still the run's failure (doctor.explain.findings, rule 3)
    lasting: bool = False
    order: int = 0  # position in the file: breaks specificity ties

    @property
    def example(self) -> str:
        return self.examples[0]

    def matches(self, line: str) -> bool:
        return any(p.search(line) for p in self.patterns)

    def components_for(self, line: str) -> tuple[tuple[str, ...], str | None]:
        """The finding's components for this matched line, and the Python package it names (if any)."""
        for p in self.patterns:
            m = p.search(line)
            if m is None or "module" not in p.groupindex or not m.group("module"):
                continue
            module = m.group("module")
            comp = component_of_module(module)
            if comp in (None, "python"):
                return self.components, module
            return (comp, *(c for c in self.components if c != comp)), module
        return self.components, None

    def title_for(self, line: str) -> str:
        """The finding's title for this matched line: with the `name` a pattern captures quoted after it (the key a
        config message refuses), else the signature's own title."""
        for p in self.patterns:
            if "name" not in p.groupindex:
                continue
            m = p.search(line)
            if m is not None and m.group("name"):
                return f"{self.title}: '{m.group('name')}'"
        return self.title


# a signature as a row of plain values (what _load_default keeps in the cache): its fields in order
_FIELDS = tuple(f.name for f in fields(Signature))
_SEVERITY, _PATTERNS, _CONTEXT = (_FIELDS.index(k) for k in ("severity", "patterns", "context"))


@dataclass(frozen=True)
class SignatureDB:
    path: str
    signatures: tuple[Signature, ...]

    def __len__(self) -> int:
        return len(self.signatures)

    def get(self, sig_id: str) -> Signature:
        return self._by_id[sig_id]

    @cached_property
    def _by_id(self) -> dict[str, Signature]:
        return {s.id: s for s in self.signatures}

    @cached_property
    def match_table(self) -> tuple[tuple[str | None, LazyRegex, Signature], ...]:
        """Every regex with its literal, most specific signatures first (computed once)."""
        entries = [(literal_for(p), p, s) for s in self.signatures for p in s.patterns]
        entries.sort(key=lambda e: (-e[2].specificity, e[2].order))
        return tuple(entries)

    @cached_property
    def match_index(self) -> aho.LiteralIndex[tuple[str | None, LazyRegex, Signature]]:
        """The match table's rows a line can match, found by its literals at once (built once per database)."""
        return aho.LiteralIndex(self.match_table)

    @cached_property
    def context_rules(self) -> dict[str, tuple[tuple[tuple[str | None, LazyRegex], ...], ...]]:
        return {s.id: tuple(tuple((literal_for(p), p) for p in rule) for rule in s.context)
                for s in self.signatures if s.context}

    @cached_property
    def literal_options(self) -> tuple[tuple[str, ...], ...]:
        """The fixed phrases of every signature and context pattern (the streaming pre-filter's input): a
        line can only match a pattern if it holds each of the pattern's phrases, so any one of them will do."""
        return tuple(sorted({*self.pattern_options, *self.context_options(self.context_rules)}))

    @cached_property
    def pattern_options(self) -> tuple[tuple[str, ...], ...]:
        """The fixed phrases of the signatures' own patterns (what a line must hold to be matched)."""
        return tuple(sorted({runs for s in self.signatures for p in s.patterns if (runs := runs_for(p))}))

    @staticmethod
    def context_options(rules: Mapping[str, Sequence[Sequence[tuple[str | None, LazyRegex]]]]
                        ) -> tuple[tuple[str, ...], ...]:
        """The fixed phrases of the given context rules: the scanner asks for those of the rules still unmet, so
        a common word of a met context (`raylet`, `megatron`) stops selecting lines once it has been seen."""
        return tuple(sorted({runs for rs in rules.values() for rule in rs for _, p in rule if (runs := runs_for(p))}))


def read_signatures(path: str | Path | None = None) -> SignatureDB:
    """Read and validate a signature database (default: the one shipped in profiles/, read once per process).

    Any defect — unreadable file, bad TOML, unknown field or component, a regex that does not compile or has
    no fixed phrase — is an InputError naming the file and the signature id. Whether each example is explained
    by its own signature needs the scanner: `doctor.explain.loading.load_signatures` checks that on top (for a
    database the user gives; the shipped one's examples are run by the test suite).
    """
    if path is None:
        return _load_default()
    return _load(Path(path))


@lru_cache(maxsize=1)
def _load_default() -> SignatureDB:
    """The shipped database, its regexes compiled on first use (the test suite compiles them all).

    Reading it (validation, the expansion of `libraries` / `modules`, the top-level alternatives apart and the fixed
    phrases of ~1,250 regexes) took ~25 ms of CPU in a warm process and ~50 ms in a fresh one, a fifth of a short
    log's run, for the same result from the same bytes every time. The result depends only on the file's bytes and
    on the code reading them, so it is kept in the cache directory with both (`doctor.keptfile`) and taken from there
    while both are the same bytes: an edited file or an edited reader is read again."""
    try:
        with open(DEFAULT_DB, "rb") as fh:
            raw = fh.read()
        code = _reading_code()
    except OSError:
        return _load(DEFAULT_DB, compile_now=False)  # the reader says why it cannot be read
    import zlib

    from doctor.cachedir import cache_dir

    # named by a CRC of the bytes (no hashlib: its OpenSSL start-up costs ~2 ms); the bytes kept in the file decide
    cache = cache_dir("signatures", f"{zlib.crc32(code, zlib.crc32(raw)):08x}-{len(raw):x}-{sys.hexversion:08x}.marshal")
    key = (_CACHE_FORMAT, sys.version, raw, code)
    if (rows := keptfile.read(cache, key)) is not None:  # a hit marks the entry used
        return _from_rows(str(DEFAULT_DB), rows)
    db = _load(DEFAULT_DB, compile_now=False)
    keptfile.write(cache, key, _rows(db))
    # one entry per version of the file and its reader: the old ones go
    cacheprune.prune(os.path.dirname(cache), _CACHE_ENTRY, cache)
    return db


_CACHE_FORMAT = "signature-db/1"
_CACHE_ENTRY = re.compile(r"[0-9a-f]{8}-[0-9a-f]+-[0-9a-f]{8}\.marshal")  # what _load_default names, nothing else


def _reading_code() -> bytes:
    """The source of the code that turns the file into signatures, part of the cache's key: this module (fields,
    validation, the library and module message forms), anchors (alternatives, fixed phrases) and report (the
    components and severities allowed)."""
    from doctor import report

    files = [m.__file__ for m in (sys.modules[__name__], anchors, report)]
    if None in files:
        raise OSError("no source file to key the cache by")
    return b"\0".join(Path(f).read_bytes() for f in files if f is not None)


def _rows(db: SignatureDB) -> tuple[tuple[Any, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """The database as plain data (the cache's), and the fixed phrases of each of its patterns."""
    out = []
    for s in db.signatures:
        row = [getattr(s, f) for f in _FIELDS]
        row[_SEVERITY] = s.severity.value
        row[_PATTERNS] = tuple(p.pattern for p in s.patterns)
        row[_CONTEXT] = tuple(tuple(p.pattern for p in rule) for rule in s.context)
        out.append(tuple(row))
    patterns = {p.pattern for s in db.signatures for p in (*s.patterns, *(p for r in s.context for p in r))}
    return tuple(out), tuple(sorted((p, runs_for(LazyRegex(p))) for p in patterns))


def _from_rows(path: str, data: tuple[tuple[Any, ...], tuple[tuple[str, tuple[str, ...]], ...]]) -> SignatureDB:
    rows, phrases = data
    anchors.remember(phrases)
    sigs = []
    for r in rows:
        row = list(r)
        row[_SEVERITY] = Severity(row[_SEVERITY])
        row[_PATTERNS] = tuple(LazyRegex(p) for p in row[_PATTERNS])
        row[_CONTEXT] = tuple(tuple(LazyRegex(p) for p in rule) for rule in row[_CONTEXT])
        sigs.append(Signature(*row))
    return SignatureDB(path, tuple(sigs))


def _load(path: Path, *, compile_now: bool = True) -> SignatureDB:
    src = str(path)
    data = read_toml(src, "signature database")
    if data.get("schema") != SCHEMA:
        raise _Fail(src, "schema")(f"expected schema = {SCHEMA!r}, got {data.get('schema')!r}")
    entries = data.get("signature")
    if not isinstance(entries, list) or not entries:
        raise _Fail(src, "")("no [[signature]] entries")
    sigs: list[Signature] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        sig = _parse_signature(entry, i, src, compile_now=compile_now)
        if sig.id in seen:
            raise _Fail(src, f"signature {sig.id}")("duplicate signature id")
        seen.add(sig.id)
        sigs.append(sig)
    for sig in sigs:
        for other in sig.supersedes:
            if other not in seen or other == sig.id:
                raise _Fail(src, f"signature {sig.id}")(f"supersedes unknown signature {other!r}")
    return SignatureDB(src, tuple(sigs))


class _Fail:
    """The refusals of one signature entry: the knowledge files' shared validator (doctor.knowledge.validate), with
    the entry's key path (`signature <id>`) filled in."""

    def __init__(self, src: str, where: str) -> None:
        self.src, self.where = src, where

    def __call__(self, msg: str) -> InputError:
        from doctor.knowledge.validate import Validator  # only on a refusal: it imports `packaging` (~15 ms)

        return Validator(self.src).fail(self.where, msg)


def _parse_signature(entry: Any, index: int, src: str, *, compile_now: bool = True) -> Signature:
    if not isinstance(entry, dict):
        raise _Fail(src, f"signature #{index + 1}")("a [[signature]] entry must be a table")
    sid = entry.get("id")
    fail = _Fail(src, f"signature {sid}" if isinstance(sid, str) and sid else f"signature #{index + 1}")
    _check_fields(entry, fail)
    if not isinstance(sid, str) or not _ID_RE.match(sid):
        raise fail("id must be kebab-case (a-z, 0-9, single hyphens)")
    try:
        severity = Severity(entry["severity"])
    except ValueError:
        raise fail(f"severity must be error, warning or info, not {entry['severity']!r}") from None
    spec = entry["specificity"]
    if not isinstance(spec, int) or isinstance(spec, bool) or not 0 <= spec <= 100:
        raise fail("specificity must be an integer 0-100")
    examples = _str_list(entry.get("examples", []), "examples", fail)
    if "example" in entry:
        examples = (*_str_list(entry["example"], "example", fail), *examples)
    if not examples or not all(e.strip() for e in examples):
        raise fail("needs an example (example or examples): a verbatim line the signature explains")
    return Signature(
        id=sid,
        severity=severity,
        components=_components(entry["components"], fail),
        specificity=spec,
        patterns=_all_patterns(entry, fail, compile_now),
        title=entry["title"].strip(),
        detail=_opt_str(entry, "detail", fail),
        fix=entry["fix"].strip(),
        commands=_str_list(entry.get("commands", []), "commands", fail),
        source=entry["source"],
        examples=examples,
        example_kind=_choice(entry, "example_kind", _EXAMPLE_KINDS, "report", fail),
        example_from=_opt_str(entry, "example_from", fail) or None,
        example_context=_str_list(entry.get("example_context", []), "example_context", fail),
        context=tuple(_patterns([c], "context", fail, allow_empty=False, compile_now=compile_now)
                      for c in _str_list(entry.get("context", []), "context", fail)),
        supersedes=_str_list(entry.get("supersedes", []), "supersedes", fail),
        fallback=_bool(entry, "fallback", fail),
        quoted=_bool(entry, "quoted", fail),
        yields=_bool(entry, "yields", fail),
        lasting=_bool(entry, "lasting", fail),
        role=_choice(entry, "role", ROLES, "root", fail),
        order=index,
    )


# the fields of which a signature needs one: what it matches, and a line it explains
_ONE_OF = (("regex", "libraries", "modules"), ("example", "examples"))


def _check_fields(entry: dict[str, Any], fail: _Fail) -> None:
    """Every missing field in one message (a user's `--signatures` file met them one exit 2 at a time)."""
    missing = [k for k in _REQUIRED if k not in entry]
    missing += [" or ".join(group) for group in _ONE_OF if not any(k in entry for k in group)]
    if missing:
        raise fail(f"missing field(s): {', '.join(missing)}")
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise fail(f"unknown field(s): {', '.join(unknown)}")
    for key in ("title", "fix", "source"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise fail(f"{key} must be a non-empty string")
    if not re.match(r"^https?://", entry["source"]):
        raise fail("source must be a URL (upstream doc, code or issue)")


def _components(value: Any, fail: _Fail) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(c, str) for c in value):
        raise fail("components must be a non-empty list of strings")
    bad = [c for c in value if c not in COMPONENTS]
    if bad:
        raise fail(f"unknown component(s) {bad}; allowed: {', '.join(sorted(COMPONENTS))}")
    return tuple(value)


def _all_patterns(entry: dict[str, Any], fail: _Fail, compile_now: bool) -> tuple[LazyRegex, ...]:
    """The signature's own regexes plus those its `libraries` and `modules` expand to."""
    sources = list(_str_list(entry.get("regex", []), "regex", fail))
    for lib in _str_list(entry.get("libraries", []), "libraries", fail):
        sources.extend(t.format(lib=lib) for t in LIBRARY_MESSAGES)
    for mod in _str_list(entry.get("modules", []), "modules", fail):
        sources.extend(t.format(mod=mod) for t in MODULE_MESSAGES)
    return _patterns(sources, "regex", fail, allow_empty=False, compile_now=compile_now)


def _choice(entry: dict[str, Any], key: str, allowed: tuple[str, ...], default: str, fail: _Fail) -> str:
    value = entry.get(key, default)
    if value not in allowed:
        raise fail(f"{key} must be one of {allowed}")
    return value


def _bool(entry: dict[str, Any], key: str, fail: _Fail) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise fail(f"{key} must be true or false")
    return value


def _opt_str(entry: dict[str, Any], key: str, fail: _Fail) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        raise fail(f"{key} must be a string")
    return value.strip()


def _str_list(value: Any, key: str, fail: _Fail) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{key} must be a list of strings")
    return tuple(value)


def _patterns(items: Any, key: str, fail: _Fail, *, allow_empty: bool, compile_now: bool = True
              ) -> tuple[LazyRegex, ...]:
    """The regexes of one field, each top-level alternative apart. `compile_now`: compile (and so check) them at
    once; the shipped database, whose regexes the test suite compiles, is compiled lazily (doctor.explain.lazyre)."""
    items = _str_list(items, key, fail)
    if not items and not allow_empty:
        raise fail(f"{key} needs at least one regular expression")
    out = []
    for pattern in (alt for item in items for alt in split_alternatives(item)):
        if not pattern:
            raise fail(f"{key}: empty regular expression")
        compiled = LazyRegex(pattern)
        if compile_now:
            try:
                compiled = LazyRegex(pattern, re.compile(pattern))
            except re.error as e:
                raise fail(f"{key} {pattern!r} does not compile: {e}") from None
        if literal_for(compiled) is None:
            raise fail(f"{key} {pattern!r} has no fixed phrase of 3+ characters that every match contains "
                       "(split top-level alternatives into separate patterns; no inline flags)")
        out.append(compiled)
    return tuple(out)
