"""Which names each caller release imports from a callee when it loads, and which callee releases define them:
profiles/import-surface.json, written by tools/refresh_knowledge/import_surface.py from the sources at their tags.

`ImportError: cannot import name 'X' from 'megatron.core.Y'` is the commonest version mismatch of this stack: a
caller release (mbridge, verl) imports at module level a name its installed callee release (Megatron-Core) does
not define. Both halves were read from git with `ast` (never imported): the caller's module-level imports reached
from its entry modules (not under `if`, `try/except ImportError`, a def or a class), and per callee release the
names it lacks (or may lack: a module `__getattr__` or an unresolved star import is *unknown*, never missing).
Callees: Megatron-Core (git), transformers (PyPI wheels), vLLM (PyPI sdists: on Ascend it is built from source at a
release); verl's vLLM imports are read from its rollout modules too (`callee_entries`), which a rollout=vllm job
loads. vllm-ascend is a caller of vLLM: its entry modules are what vLLM loads through the plugin entry points its
setup.py declares (the platform module `register` names and the worker that platform picks by default), so a
vllm-ascend release on a vLLM release it was not made for is judged the same way. trl and peft are callers of
transformers through their package `__init__` (`import trl`, `import peft`).

Only releases that were read are judged; a version between or after them is not. Read and validated on first use (a
check asks), never at import; a malformed file is an InputError naming the file and the key (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator

SCHEMA = "doctor.import-surface/1"
FILE = "import-surface.json"


@dataclass(frozen=True)
class Release:
    version: str
    ref: str  # the tag (or branch) read; for a wheel, its file name
    commit: str  # "" for a release read from its wheel
    sha256: str = ""  # the wheel's, when read from one

    @property
    def where(self) -> str:
        return f"{self.ref}, commit {self.commit[:9]}" if self.commit else f"PyPI's {self.ref}"


@dataclass(frozen=True)
class CallerRelease(Release):
    entries: tuple[str, ...] = ()  # the entry modules that exist at this release
    imports: dict[str, dict[str, str]] = field(default_factory=dict)  # callee -> "module:name" -> "file:line"
    source_build: bool = False  # a branch head that declares a release's version (what a source build installs)
    date: str = ""  # its commit date, for a source build
    # callee -> the entry modules its imports were read from, when more than `entries` (verl's vLLM rollout)
    callee_entries: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def entries_for(self, callee: str) -> tuple[str, ...]:
        return self.callee_entries.get(callee, self.entries)


@dataclass(frozen=True)
class Project:
    name: str
    url: str
    key: str  # how a snapshot's release is matched: "version", or "commit" (installed from git)


@dataclass(frozen=True)
class Caller(Project):
    releases: tuple[CallerRelease, ...]


@dataclass(frozen=True)
class Callee(Project):
    releases: tuple[Release, ...]
    missing: dict[str, frozenset[str]]  # "module:name" -> the callee versions that lack it
    no_module: dict[str, frozenset[str]]  # ... of those, the ones where the module itself is not there
    unknown: dict[str, frozenset[str]]  # ... that may lack it (not judged)


@dataclass(frozen=True)
class Surface:
    read: str
    callers: dict[str, Caller]
    callees: dict[str, Callee]


@dataclass(frozen=True)
class Unmet:
    """A caller release's module-level imports that a callee release does not define."""

    caller: str
    caller_release: CallerRelease | None  # None: the caller's version is not known (every release read imports them)
    cited: CallerRelease  # the release whose files the names' file:line are from
    callee: str
    callee_release: Release
    names: tuple[tuple[str, str, str], ...]  # (module, name, "file:line" in the caller)
    fixed_in: tuple[str, ...]  # the callee releases read that define all of them
    caller_url: str
    callee_url: str
    # what a source build declaring the same version (a branch head) imports beyond that and the callee lacks
    source_build: CallerRelease | None = None
    source_names: tuple[tuple[str, str, str], ...] = ()
    no_module: frozenset[str] = frozenset()  # the modules (of the names) the callee release does not have at all

    @property
    def source(self) -> str:
        """The caller's first unmet import at the release cited (or at the source build, when only it imports one),
        and the callee's tree at the release judged."""
        at, names = (self.cited, self.names) if self.names or self.source_build is None else (
            self.source_build, self.source_names)
        file, _, line = names[0][2].rpartition(":")
        got = self.callee_release
        return (f"{self.caller_url}/blob/{at.commit}/{file}#L{line}; "
                f"{self.callee_url}/tree/{got.commit or 'v' + got.version}")


def _release(v: Validator, raw: Any, p: str, extra: set[str]) -> dict[str, Any]:
    """A release read at a git commit, or (a callee with "sha256") from its PyPI wheel."""
    r = v.keys(raw, {"version", "ref", "commit"} | extra, p, required=("version", "ref"))
    v.version(r["version"], f"{p}.version")
    v.req(r["ref"], f"{p}.ref")
    key, size = ("sha256", 64) if "sha256" in r and "commit" not in r else ("commit", 40)
    c = v.req(r.get(key), f"{p}.{key}")
    if len(c) != size or any(ch not in "0123456789abcdef" for ch in c):
        raise v.fail(f"{p}.{key}", f"{c!r} is not a full {'commit sha' if key == 'commit' else 'sha256'}")
    return r


_KEY = re.compile(r"[^:]+:[^:]*")


def _well_formed(names: dict[Any, Any]) -> bool:
    """Every key a 'module:name' and every value a non-empty string (what `_key` and `req` check one by one), in
    C-level passes: a table holds ~10,000 of them."""
    keys, values = names.keys(), names.values()
    return (set(map(type, keys)) <= {str} and all(map(_KEY.fullmatch, keys)) and set(map(type, values)) <= {str}
            and all(map(str.strip, values)))


def _key(v: Validator, k: Any, p: str) -> str:
    if not isinstance(k, str) or k.count(":") != 1 or not k.split(":")[0]:
        raise v.fail(p, f"{k!r} is not 'module:name'")
    return k


def parse(data: object, source: str) -> Surface:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "how", "callers_read", "callers", "callees"}, "",
               required=("schema", "read", "callers", "callees"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    callers: dict[str, Caller] = {}
    if not isinstance(t["callers"], dict):
        raise v.fail("callers", "must be a table")
    if not isinstance(t["callees"], dict):
        raise v.fail("callees", "must be a table")
    for name, raw in t["callers"].items():
        p = f"callers.{name}"
        c = v.keys(raw, {"url", "package_dir", "key", "releases"}, p, required=("url", "key", "releases"))
        if c["key"] not in ("version", "commit"):
            raise v.fail(f"{p}.key", "must be 'version' or 'commit'")
        if not isinstance(c["releases"], list):
            raise v.fail(f"{p}.releases", "must be an array")
        rels = []
        for i, rr in enumerate(c["releases"]):
            q = f"{p}.releases[{i}]"
            r = _release(v, rr, q, {"entries", "callee_entries", "imports", "source_build", "date"})
            source_build = v.boolean(r.get("source_build"), f"{q}.source_build", default=False)
            date = v.date(r["date"], f"{q}.date") if source_build else ""
            imports = r.get("imports", {})
            if not isinstance(imports, dict):
                raise v.fail(f"{q}.imports", "must be a table")
            got: dict[str, dict[str, str]] = {}
            for callee, names in imports.items():
                if callee not in t["callees"]:
                    raise v.fail(f"{q}.imports.{callee}", "names no callee of the table")
                if not isinstance(names, dict):
                    raise v.fail(f"{q}.imports.{callee}", "must be a table of 'module:name' -> 'file:line'")
                # ~10,000 rows (vllm-ascend's): checked in one pass, and item by item only to name a bad one
                got[callee] = names if _well_formed(names) else {
                    _key(v, k, f"{q}.imports.{callee}"): v.req(w, f"{q}.imports.{callee}.{k}") for k, w in names.items()}
            more = r.get("callee_entries", {})
            if not isinstance(more, dict) or any(k not in t["callees"] for k in more):
                raise v.fail(f"{q}.callee_entries", "must be a table of callee -> entry modules")
            rels.append(CallerRelease(r["version"], r["ref"], r["commit"], "", v.strs(r.get("entries", []),
                                                                                       f"{q}.entries"), got,
                                      source_build, date,
                                      {k: v.strs(e, f"{q}.callee_entries.{k}") for k, e in more.items()}))
        callers[name] = Caller(name, v.url(c["url"], f"{p}.url", pinned=False), c["key"], tuple(rels))
    callees: dict[str, Callee] = {}
    for name, raw in t["callees"].items():
        p = f"callees.{name}"
        c = v.keys(raw, {"url", "package_dir", "releases", "names"}, p, required=("url", "releases", "names"))
        if not isinstance(c["releases"], list) or not c["releases"]:
            raise v.fail(f"{p}.releases", "must list the releases read")
        rels2 = tuple(Release(r["version"], r["ref"], r.get("commit", ""), r.get("sha256", ""))
                      for r in (_release(v, x, f"{p}.releases[{i}]", {"sha256"}) for i, x in enumerate(c["releases"])))
        versions = frozenset(r.version for r in rels2)
        if not isinstance(c["names"], dict):
            raise v.fail(f"{p}.names", "must be a table")
        missing: dict[str, frozenset[str]] = {}
        unknown: dict[str, frozenset[str]] = {}
        no_module: dict[str, frozenset[str]] = {}
        for k, raw_n in c["names"].items():
            q = f"{p}.names.{_key(v, k, f'{p}.names')}"
            n = v.keys(raw_n, {"missing", "unknown", "no_module"}, q, required=("missing", "unknown"))
            for what, out in (("missing", missing), ("unknown", unknown), ("no_module", no_module)):
                listed = frozenset(v.strs(n.get(what, []), f"{q}.{what}"))
                if not listed <= versions:
                    stray = sorted(listed - versions)
                    raise v.fail(f"{q}.{what}", f"{stray[0]!r} is not a release of {name} the table read")
                if what == "no_module" and not listed <= missing[k]:
                    raise v.fail(f"{q}.{what}", "must list only releases that `missing` lists")
                out[k] = listed
        callees[name] = Callee(name, v.url(c["url"], f"{p}.url", pinned=False), "version", rels2, missing, no_module,
                               unknown)
    for cname, caller in callers.items():
        for rel in caller.releases:
            for callee, names in rel.imports.items():
                if names.keys() <= callees[callee].missing.keys():
                    continue
                stray = sorted(set(names) - set(callees[callee].missing))
                if stray:
                    raise v.fail(f"callers.{cname}", f"imports {stray[0]!r}, which callees.{callee}.names lacks")
    # the index a check reads first (doctor/knowledge/coverage.py) must say what `callers` holds
    if "callers_read" in t and t["callers_read"] != {
            n: [[r.version, r.commit] for r in c.releases] for n, c in callers.items()}:
        raise v.fail("callers_read", "does not list the releases `callers` holds (caller -> [version, commit])")
    return Surface(read, callers, callees)


_TABLES: dict[str, Surface] = {}


def load(path: str | None = None) -> Surface:
    """The table in use: the knowledge directory's copy, else the packaged one (a knowledge directory carried in
    from an older doctor may predate this file)."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        from doctor.jsonfile import read_json

        _TABLES[p] = parse(read_json(p, "the import-surface table"), p)
    return _TABLES[p]


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return False


def _find(releases: tuple[Any, ...], key: str, version: str | None, commit: str | None) -> Any:
    """The release read that `version` (or, for a commit-keyed project or when given, `commit`) names; None when
    it is not one of them (a release between or after the reads is not judged)."""
    c = (commit or "").strip().lower()
    if len(c) >= 7:
        hits = [r for r in releases if r.commit.startswith(c)]
        return hits[0] if len(hits) == 1 else None
    if key == "commit" or not version:
        return None
    hits = [r for r in releases if _same(r.version, version)]
    return hits[0] if len(hits) == 1 else None


def unmet(surface: Surface, caller: str, callee: str, *, caller_version: str | None = None,
          caller_commit: str | None = None, callee_version: str | None = None,
          callee_commit: str | None = None, from_index: bool = False) -> Unmet | None:
    """What `caller` imports at load that `callee` at its release does not define. The caller's release comes from
    its commit when that is one read, else its version; with neither known, only the imports every caller release
    read makes are held against the callee. A source build declaring the caller's version adds what only it imports
    (`source_names`), unless the caller was installed `from_index` (a release's own files). None when nothing is
    unmet, or a release is not one the table read."""
    c, d = surface.callers.get(caller), surface.callees.get(callee)
    if c is None or d is None or not c.releases:
        return None
    got = _find(d.releases, d.key, callee_version, callee_commit)
    if got is None:
        return None
    released = tuple(r for r in c.releases if not r.source_build)
    builds: list[CallerRelease] = []
    at = _find(c.releases, "commit", None, caller_commit) if caller_commit else None
    if at is not None:
        rel = at
        needs = rel.imports.get(callee, {})
    elif caller_commit and c.key == "commit":
        return None
    elif caller_version:
        rel = _find(released, c.key, caller_version, None)
        if rel is None:
            return None
        needs = rel.imports.get(callee, {})
        builds = [] if from_index else [r for r in c.releases if r.source_build and _same(r.version, rel.version)]
    elif c.key == "commit" or not released:
        return None
    else:
        rel = None
        common = set.intersection(*[set(r.imports.get(callee, {})) for r in released])
        last = released[-1].imports.get(callee, {})
        needs = {k: last[k] for k in sorted(common)}
    lacking = _lacking(needs, d, got)
    build: CallerRelease | None = None
    extra: list[tuple[str, str]] = []
    for b in builds:
        more = {k: w for k, w in b.imports.get(callee, {}).items() if k not in needs}
        found = _lacking(more, d, got)
        if found:
            build, extra = b, found
            break
    if not lacking and not extra:
        return None
    keys = [k for k, _ in (lacking or extra)]
    fixed = tuple(r.version for r in d.releases
                  if not any(r.version in d.missing[k] or r.version in d.unknown[k] for k in keys))
    names = tuple((k.split(":")[0], k.split(":")[1], w) for k, w in lacking)
    source_names = tuple((k.split(":")[0], k.split(":")[1], w) for k, w in extra)
    gone = frozenset(k.split(":")[0] for k, _ in (*lacking, *extra) if got.version in d.no_module.get(k, frozenset()))
    return Unmet(caller, rel, rel or released[-1], callee, got, names, fixed, c.url, d.url, build, source_names, gone)


def _lacking(needs: dict[str, str], callee: Callee, release: Release) -> list[tuple[str, str]]:
    return sorted((k, w) for k, w in needs.items() if release.version in callee.missing.get(k, frozenset()))
