"""Which names each caller release imports from a callee when it loads, and which callee releases define them:
profiles/import-surface/, written by tools/refresh_knowledge/import_surface.py from the sources at their tags.

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
transformers, accelerate and huggingface_hub (PyPI wheels) through their package `__init__` (`import trl`, `import
peft`; trl also of peft, whose imports under `if is_peft_available():` run whenever peft is installed); trl's
__init__ is lazy, and what importing each name it serves loads is read too (`from trl import DPOTrainer`:
trl.trainer.dpo_trainer), the names only those modules import recorded apart (`lazy`: `import trl` loads without
them, so the check calls such a pair a warning naming the served name);
accelerate (its wheels) of huggingface_hub through `import accelerate`; vLLM (its sdists) of transformers and
huggingface_hub through what `from vllm import LLM` runs and what `vllm serve` loads (`command`: the names only that
command imports). torch (byte ranges of each release's smallest PyPI wheel, 2.0.0 on) is a callee of all of them:
what its compiled torch._C may bind (`from torch._C import *`) is unknown, and so is a name no torch release read
defines (torch_npu registers torch.npu). transformers (byte ranges of its PyPI wheels, 4.30.0 on) is a caller of
torch through `import transformers`, its auto classes and modeling_utils, counting what it imports under `if
is_torch_available():` (true when torch is installed and, from 4.52, at or above its own minimum: below that the
code-needs table reports the pair, and the check leaves it to that finding) and the torch attributes its module
bodies read: a name starting with "." is such an attribute path (`torch.utils._pytree:.register_pytree_node`, one
row per step), which a callee release lacking it makes raise AttributeError. A release read from a PyPI file has no
commit: its sha256 names it.

The layout: `index.json` (schema, read date, per caller its url, key and releases: version, ref, commit, source
build and date, and the file holding that release's entry modules and imports; per callee its url, releases and
the file holding its names), one file per caller release (`vllm-ascend/0.9.1.json`; the commit is in the name
where two releases share a version, and for a source build: `verl/0.10.0.dev0-1dda039b9.json`, verl main at the
commit a stack pins, found by that commit only) and one per callee (`vllm.json`: rows of names that the same
releases lack, a run of consecutive releases written `A..B`). A check reads the index, then only the files of the caller releases it
judges and the callees they import from (~10,000 import rows in all: reading every file would cost tens of ms).

A verl release's file also records `loads` (`imported_at_load`): every top-level package outside verl and the
standard library its trainer's modules import at load, which decides whether an addition of its run-set extra
([verl-core]) that is missing is an error (doctor/checks/declared.py).

Only releases that were read are judged; a version between or after them is not. Each file is read and validated
on first use (a check asks), once per process, never at import; a malformed or missing file is an InputError
naming the file and the key (exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain, repeat
from operator import contains
from typing import Any, Generic, TypeVar

from packaging.version import Version

from doctor.errors import InputError
from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version

SCHEMA = "doctor.import-surface/2"
DIR = "import-surface"
INDEX = os.path.join(DIR, "index.json")
_T = TypeVar("_T")


class _Once(Generic[_T]):
    """A value read on first use and kept (a caller release's imports, a callee's names)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], _T]) -> None:
        self._make: Callable[[], _T] | None = make
        self._value: _T | None = None

    def __call__(self) -> _T:
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value  # type: ignore[return-value]


# Plain classes, not dataclasses: the check imports this module on every host that has a caller and a callee read,
# and building eight dataclasses (their generated methods are compiled at import) cost more than reading the files.
_EMPTY: frozenset[str] = frozenset()
# entries, imports, callee_entries, loads (None: not recorded), command (None: none read), lazy
_Rows = tuple[tuple[str, ...], dict[str, dict[str, str]], dict[str, tuple[str, ...]], "Loads | None",
              "Command | None", dict[str, dict[str, str]]]


def _no_rows() -> _Rows:
    return (), {}, {}, None, None, {}


def _no_names() -> Names:
    return {}, {}, {}


class Release:
    __slots__ = ("version", "ref", "commit", "sha256")

    def __init__(self, version: str, ref: str, commit: str, sha256: str = "") -> None:
        self.version = version
        self.ref = ref  # the tag (or branch) read; for a wheel, its file name
        self.commit = commit  # "" for a release read from its wheel
        self.sha256 = sha256  # the wheel's, when read from one

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.version!r}, {self.ref!r}, {self.commit!r})"

    @property
    def where(self) -> str:
        return f"{self.ref}, commit {self.commit[:9]}" if self.commit else f"PyPI's {self.ref}"


class CallerRelease(Release):
    __slots__ = ("source_build", "date", "file", "rows")

    def __init__(self, version: str, ref: str, commit: str, sha256: str = "", source_build: bool = False,
                 date: str = "", file: str = "", rows: Callable[[], _Rows] = _no_rows) -> None:
        super().__init__(version, ref, commit, sha256)
        self.source_build = source_build  # a branch head that declares a release's version (a source build's files)
        self.date = date  # its commit date, for a source build
        self.file = file  # the file (in the index's directory) holding its entries and imports
        self.rows = rows  # read on first use

    @property
    def entries(self) -> tuple[str, ...]:
        """The entry modules that exist at this release."""
        return self.rows()[0]

    @property
    def imports(self) -> dict[str, dict[str, str]]:
        """callee -> "module:name" -> "file:line"."""
        return self.rows()[1]

    @property
    def callee_entries(self) -> dict[str, tuple[str, ...]]:
        """callee -> the entry modules its imports were read from, when more than `entries` (verl's vLLM rollout)."""
        return self.rows()[2]

    def entries_for(self, callee: str) -> tuple[str, ...]:
        return self.callee_entries.get(callee, self.entries)

    @property
    def loads(self) -> Loads | None:
        """Every top-level package outside the caller and the standard library that its entry modules, and the
        modules a job loads beyond them, import at load; None when the table does not record it (verl only)."""
        return self.rows()[3]

    @property
    def command(self) -> Command | None:
        """The command whose loading was read beyond the entries (vLLM's `vllm serve`), when one was."""
        return self.rows()[4]

    @property
    def lazy(self) -> dict[str, dict[str, str]]:
        """callee -> "module:name" -> the name the caller's package serves lazily whose import first runs it
        ("trl.trainer.dpo_trainer:DPOTrainer"), for the imports only such a name's modules make: importing the
        caller itself does not run them."""
        return self.rows()[5]


class Command:
    """A command a caller installs (`vllm serve`): the entry modules its console script loads, and per callee the
    names only it imports ("module:name"; the entries import the others)."""

    __slots__ = ("name", "entries", "only")

    def __init__(self, name: str, entries: tuple[str, ...], only: Mapping[str, frozenset[str]]) -> None:
        self.name = name
        self.entries = entries
        self.only = only


class Loads:
    """What a caller release imports at load, whatever the callee: the modules followed (`entries`) and each
    top-level package they import at module level, transitively through the caller's own package, with the first
    "file:line" that does (`modules`)."""

    __slots__ = ("entries", "modules")

    def __init__(self, entries: tuple[str, ...], modules: Mapping[str, str]) -> None:
        self.entries = entries
        self.modules = modules


class Project:
    __slots__ = ("name", "url", "key")

    def __init__(self, name: str, url: str, key: str) -> None:
        self.name = name
        self.url = url
        self.key = key  # how a snapshot's release is matched: "version", or "commit" (installed from git)


class Caller(Project):
    __slots__ = ("releases",)

    def __init__(self, name: str, url: str, key: str, releases: tuple[CallerRelease, ...]) -> None:
        super().__init__(name, url, key)
        self.releases = releases


Names = tuple[Mapping[str, frozenset[str]], Mapping[str, frozenset[str]], Mapping[str, frozenset[str]]]


class Callee(Project):
    __slots__ = ("releases", "file", "names")

    def __init__(self, name: str, url: str, key: str, releases: tuple[Release, ...], file: str = "",
                 names: Callable[[], Names] = _no_names) -> None:
        super().__init__(name, url, key)
        self.releases = releases
        self.file = file  # the file (in the index's directory) holding its names
        self.names = names  # read on first use

    @property
    def missing(self) -> Mapping[str, frozenset[str]]:
        """"module:name" -> the callee versions that lack it."""
        return self.names()[0]

    @property
    def no_module(self) -> Mapping[str, frozenset[str]]:
        """... of those, the ones where the module itself is not there."""
        return self.names()[1]

    @property
    def unknown(self) -> Mapping[str, frozenset[str]]:
        """... that may lack it (not judged)."""
        return self.names()[2]


class Surface:
    __slots__ = ("read", "callers", "callees", "index")

    def __init__(self, read: str, callers: Mapping[str, Caller], callees: Mapping[str, Callee],
                 index: str = "") -> None:
        self.read = read
        self.callers = callers
        self.callees = callees
        self.index = index  # the index file read


class Unmet:
    """A caller release's module-level imports that a callee release does not define."""

    def __init__(self, caller: str, caller_release: CallerRelease | None, cited: CallerRelease, callee: str,
                 callee_release: Release, names: tuple[tuple[str, str, str], ...], fixed_in: tuple[str, ...],
                 caller_url: str, callee_url: str, source_build: CallerRelease | None = None,
                 source_names: tuple[tuple[str, str, str], ...] = (), no_module: frozenset[str] = _EMPTY,
                 lazy: Mapping[str, str] | None = None) -> None:
        self.caller = caller
        # None: the caller's version is not known (every release read imports them)
        self.caller_release = caller_release
        self.cited = cited  # the release whose files the names' file:line are from
        self.callee = callee
        self.callee_release = callee_release
        self.names = names  # (module, name, "file:line" in the caller)
        self.fixed_in = fixed_in  # the callee releases read that define all of them
        self.caller_url = caller_url
        self.callee_url = callee_url
        # what a source build declaring the same version (a branch head) imports beyond that and the callee lacks
        self.source_build = source_build
        self.source_names = source_names
        self.no_module = no_module  # the modules (of the names) the callee release does not have at all
        # "module:name" -> "module:Name" when every name is imported only by the modules a name the caller serves
        # lazily loads (`from trl import DPOTrainer`): `import trl` itself loads
        self.lazy: Mapping[str, str] = lazy or {}

    @property
    def source(self) -> str:
        """The caller's first unmet import at the release cited (or at the source build, when only it imports one),
        and the callee's tree at the release judged."""
        at, names = (self.cited, self.names) if self.names or self.source_build is None else (
            self.source_build, self.source_names)
        file, _, line = names[0][2].rpartition(":")
        got = self.callee_release
        return (f"{self.caller_url}/blob/{at.commit or 'v' + at.version}/{file}#L{line}; "
                f"{self.callee_url}/tree/{got.commit or 'v' + got.version}")


def _release(v: Validator, raw: Any, p: str, extra: set[str]) -> dict[str, Any]:
    """A release read at a git commit, or (with "sha256") from its PyPI wheel: a callee's, or a caller release whose
    tag the mirror lacked (verl 0.9.1)."""
    r = v.keys(raw, {"version", "ref", "commit"} | extra, p, required=("version", "ref"))
    v.version(r["version"], f"{p}.version")
    v.req(r["ref"], f"{p}.ref")
    key, size = ("sha256", 64) if "sha256" in r and "commit" not in r else ("commit", 40)
    c = v.req(r.get(key), f"{p}.{key}")
    if len(c) != size or c.strip("0123456789abcdef"):
        raise v.fail(f"{p}.{key}", f"{c!r} is not a full {'commit sha' if key == 'commit' else 'sha256'}")
    return r


def _keys_well_formed(keys: Iterable[Any]) -> bool:
    """Every key a 'module:name' string (one colon, a module before it, no line break), in C-level passes over a
    file's ~500-800 names: str and map, no per-name Python code and no regex."""
    keys = list(keys)
    if not set(map(type, keys)) <= {str}:
        return False
    text = "\n".join(keys)
    return (text.count("\n") == len(keys) - 1 and text.count(":") == len(keys) and all(map(contains, keys, repeat(":")))
            and "\n:" not in text and not text.startswith(":"))


def _well_formed(names: dict[Any, Any]) -> bool:
    """Every key a 'module:name' and every value a non-empty string (what `_key` and `req` check one by one), in
    C-level passes: a release holds up to ~500 of them."""
    keys, values = names.keys(), names.values()
    return _keys_well_formed(keys) and set(map(type, values)) <= {str} and all(map(str.strip, values))


def _key(v: Validator, k: Any, p: str) -> str:
    if not isinstance(k, str) or k.count(":") != 1 or not k.split(":")[0]:
        raise v.fail(p, f"{k!r} is not 'module:name'")
    return k


# a file the index names: a .json file inside its directory (a caller's folder at most), never elsewhere
_FILE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/")


def _file(v: Validator, value: Any, p: str) -> str:
    f = v.req(value, p)
    parts = f.split("/")
    if (not set(f) <= _FILE_CHARS or ".." in f or len(parts) > 2 or not f.endswith(".json")
            or any(not x or x.startswith(".") for x in parts)):
        raise v.fail(p, f"{f!r} is not a .json file in the index's directory (or a folder of it)")
    return f


def _read(base: str, file: str, v: Validator, p: str) -> tuple[Any, Validator]:
    """The parsed file the index names at `p`, and a validator naming that file; unreadable -> the index's key."""
    from doctor.jsonfile import read_json

    path = os.path.join(base, file)
    if not os.path.isfile(path):
        raise v.fail(p, f"names {file!r}, which is not there ({path})")
    return read_json(path, "a file of the import-surface table"), Validator(path)


def _release_rows(base: str, caller: str, rel: CallerRelease, callees: frozenset[str], v: Validator,
                  p: str) -> _Rows:
    data, w = _read(base, rel.file, v, p)
    r = w.keys(data, {"caller", "version", "commit", "entries", "callee_entries", "imports", "command", "lazy",
                      "loads"}, "",
               required=("caller", "version", "commit", "imports"))
    for k, want in (("caller", caller), ("version", rel.version), ("commit", rel.commit)):
        if r[k] != want:
            raise w.fail(k, f"is {r[k]!r}, but the index's {p.rpartition('.')[0]} says {want!r}")
    imports = r["imports"]
    if not isinstance(imports, dict):
        raise w.fail("imports", "must be a table")
    got: dict[str, dict[str, str]] = {}
    for callee, names in imports.items():
        if callee not in callees:
            raise w.fail(f"imports.{callee}", "names no callee of the index")
        if not isinstance(names, dict):
            raise w.fail(f"imports.{callee}", "must be a table of 'module:name' -> 'file:line'")
        # up to ~500 rows: checked in one pass, and item by item only to name a bad one
        got[callee] = names if _well_formed(names) else {
            _key(w, k, f"imports.{callee}"): w.req(x, f"imports.{callee}.{k}") for k, x in names.items()}
    more = r.get("callee_entries", {})
    if not isinstance(more, dict) or any(k not in callees for k in more):
        raise w.fail("callee_entries", "must be a table of callee -> entry modules")
    loads: Loads | None = None
    if "loads" in r:
        t = w.keys(r["loads"], {"entries", "modules"}, "loads", required=("entries", "modules"))
        modules = t["modules"]
        if not isinstance(modules, dict):
            raise w.fail("loads.modules", "must be a table of top-level module -> 'file:line'")
        loads = Loads(w.strs(t["entries"], "loads.entries"),
                      {w.req(k, "loads.modules"): w.req(x, f"loads.modules.{k}") for k, x in modules.items()})
    command: Command | None = None
    if "command" in r:
        t = w.keys(r["command"], {"name", "entries", "only"}, "command", required=("name", "entries"))
        only = t.get("only", {})
        if not isinstance(only, dict) or any(k not in got for k in only):
            raise w.fail("command.only", "must be a table of callee (one it imports from) -> 'module:name' list")
        command = Command(w.req(t["name"], "command.name"), w.strs(t["entries"], "command.entries"),
                          {k: frozenset(w.strs(x, f"command.only.{k}")) for k, x in only.items()})
    lazy = r.get("lazy", {})
    if not isinstance(lazy, dict) or any(not isinstance(x, dict) or k not in got or not x.keys() <= got[k].keys()
                                         for k, x in lazy.items()):
        raise w.fail("lazy", "must be a table of callee -> 'module:name' (one of its imports) -> 'module:Name'")
    for k, x in lazy.items():
        if not _well_formed(x) or not _keys_well_formed(x.values()):
            raise w.fail(f"lazy.{k}", "must map 'module:name' to the 'module:Name' whose import runs it")
    return (w.strs(r.get("entries", []), "entries"), got,
            {k: w.strs(e, f"callee_entries.{k}") for k, e in more.items()}, loads, command, lazy)


def _expand(w: Validator, listed: Any, p: str, order: list[str], at: dict[str, int]) -> frozenset[str]:
    """Versions, a run of consecutive ones (in version order) written "A..B"."""
    items = w.strs(listed, p)
    if at.keys() >= set(items):  # no run among them
        return frozenset(items)
    out: set[str] = set()
    for item in items:
        a, dots, b = item.partition("..")
        i, j = at.get(a), at.get(b) if dots else at.get(a)
        if i is None or j is None or j <= i and dots:
            raise w.fail(p, f"{item!r} is not a release of the index (or a run A..B of them, A before B)")
        out.update(order[i:j + 1])
    return frozenset(out)


def _callee_names(base: str, callee: Callee, v: Validator, p: str) -> Names:
    """A callee's rows: each a set of releases that lack (`missing`), may lack (`unknown`) or lack the module of
    (`no_module`) each of its `names` (~180 rows hold vLLM's ~800 names). The file is checked in C-level passes and a
    row's releases expanded when one of its names is looked up (a check looks up the few hundred a release imports);
    a file that is not well-formed is read row by row to name the bad key."""
    data, w = _read(base, callee.file, v, p)
    t = w.keys(data, {"callee", "rows"}, "", required=("callee", "rows"))
    if t["callee"] != callee.name:
        raise w.fail("callee", f"is {t['callee']!r}, but the index's {p.rpartition('.')[0]} is {callee.name!r}")
    rows = t["rows"]
    if not isinstance(rows, list):
        raise w.fail("rows", "must be an array")
    order = sorted((r.version for r in callee.releases), key=parse_pkg_version)  # type: ignore[arg-type]
    at = {x: i for i, x in enumerate(order)}
    ok = (set(map(type, rows)) <= {dict} and set(chain.from_iterable(rows)) <= _ROW_KEYS
          and all(map(contains, rows, repeat("names"))))
    lists = [x for r in rows for x in r.values()] if ok else []
    ok = ok and set(map(type, lists)) <= {list} and all(lists)
    names = list(chain.from_iterable(r["names"] for r in rows)) if ok else []
    ok = ok and _keys_well_formed(names) and len(set(names)) == len(names)
    listed = list(chain.from_iterable(x for r in rows for k, x in r.items() if k != "names")) if ok else []
    ok = ok and set(map(type, listed)) <= {str}  # before the set: a table or array among them is no set member
    items = set(listed) if ok else set()
    ok = ok and items <= at.keys() | {x for x in items if _run(x, at)}
    if not ok:
        return _callee_names_named(w, rows, order, at)
    index = dict(zip(names, chain.from_iterable(repeat(i, len(r["names"])) for i, r in enumerate(rows)),
                     strict=True))
    missing = _RowMap(index, rows, "missing", w, order, at)
    return missing, _RowMap(index, rows, "no_module", w, order, at, missing), _RowMap(index, rows, "unknown", w,
                                                                                      order, at)


_ROW_KEYS = frozenset({"missing", "unknown", "no_module", "names"})


def _run(item: str, at: dict[str, int]) -> bool:
    a, dots, b = item.partition("..")
    return bool(dots) and a in at and b in at and at[a] < at[b]


class _RowMap(Mapping[str, frozenset[str]]):
    """"module:name" -> the releases its row lists under `what`, expanded when first looked up."""

    def __init__(self, index: dict[str, int], rows: list[dict[str, Any]], what: str, w: Validator, order: list[str],
                 at: dict[str, int], within: _RowMap | None = None) -> None:
        self._index, self._rows, self._what, self._w, self._order, self._at = index, rows, what, w, order, at
        self._within = within  # no_module: only rows that list it, each within its `missing`
        self._done: dict[int, frozenset[str]] = {}

    def _has(self, k: object) -> bool:
        i = self._index.get(k) if isinstance(k, str) else None
        return i is not None and (self._within is None or self._what in self._rows[i])

    def __getitem__(self, k: str) -> frozenset[str]:
        if not self._has(k):
            raise KeyError(k)
        i = self._index[k]
        got = self._done.get(i)
        if got is None:
            q = f"rows[{i}].{self._what}"
            got = _expand(self._w, self._rows[i].get(self._what), q, self._order, self._at)
            if self._within is not None and not got <= self._within[k]:
                raise self._w.fail(q, "must list only releases that `missing` lists")
            self._done[i] = got
        return got

    def __contains__(self, k: object) -> bool:
        return self._has(k)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index) if self._within is None else (k for k in self._index if self._has(k))

    def __len__(self) -> int:
        return len(self._index) if self._within is None else sum(1 for _ in self)


def _callee_names_named(w: Validator, rows: list[Any], order: list[str], at: dict[str, int]) -> Names:
    """Row by row: the first bad key named."""
    missing: dict[str, frozenset[str]] = {}
    no_module: dict[str, frozenset[str]] = {}
    unknown: dict[str, frozenset[str]] = {}

    def releases(listed: Any, q: str) -> frozenset[str]:
        return _expand(w, listed, q, order, at)

    for i, raw in enumerate(rows):
        q = f"rows[{i}]"
        r = w.keys(raw, {"missing", "unknown", "no_module", "names"}, q, required=("names",))
        names = r["names"]
        if not isinstance(names, list) or not names or not _keys_well_formed(names):
            raise w.fail(f"{q}.names", "must be a non-empty array of 'module:name'")
        if len(set(names)) != len(names) or not missing.keys().isdisjoint(names):
            raise w.fail(f"{q}.names", f"lists {next(x for x in names if x in missing or names.count(x) > 1)!r} twice")
        gone = releases(r.get("missing"), f"{q}.missing")
        missing.update(dict.fromkeys(names, gone))
        unknown.update(dict.fromkeys(names, releases(r.get("unknown"), f"{q}.unknown")))
        if "no_module" in r:
            no_mod = releases(r["no_module"], f"{q}.no_module")
            if not no_mod <= gone:
                raise w.fail(f"{q}.no_module", "must list only releases that `missing` lists")
            no_module.update(dict.fromkeys(names, no_mod))
    return missing, no_module, unknown


def _release_reader(base: str, caller: str, rel: CallerRelease, callees: frozenset[str], v: Validator,
                    p: str) -> _Once[_Rows]:
    return _Once(lambda: _release_rows(base, caller, rel, callees, v, p))


class _Table(Mapping[str, _T]):
    """name -> a caller's (callee's) rows of the index, validated when first looked up: a check judges one or two
    of them, and validating each release's version costs ~10 us."""

    def __init__(self, raw: dict[str, Any], make: Callable[[str, Any], _T]) -> None:
        self._raw, self._make, self._done = raw, make, {}  # type: dict[str, Any], Callable[[str, Any], _T], dict[str, _T]

    def __getitem__(self, name: str) -> _T:
        if name not in self._done:
            self._done[name] = self._make(name, self._raw[name])
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def parse(data: object, source: str) -> Surface:
    """The index (`source` its file): the releases read, each caller's and callee's rows validated when first
    looked up; each release's imports and each callee's names are read from the files it names when first asked
    for."""
    v = Validator(source)
    base = os.path.dirname(source)
    t = v.keys(data, {"schema", "read", "how", "callers", "callees"}, "", required=("schema", "read", "callers",
                                                                                    "callees"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["callers"], dict):
        raise v.fail("callers", "must be a table")
    if not isinstance(t["callees"], dict):
        raise v.fail("callees", "must be a table")
    callee_names = frozenset(t["callees"])

    def caller(name: str, raw: Any) -> Caller:
        p = f"callers.{name}"
        c = v.keys(raw, {"url", "package_dir", "key", "releases"}, p, required=("url", "key", "releases"))
        if c["key"] not in ("version", "commit"):
            raise v.fail(f"{p}.key", "must be 'version' or 'commit'")
        if not isinstance(c["releases"], list):
            raise v.fail(f"{p}.releases", "must be an array")
        rels = []
        for i, rr in enumerate(c["releases"]):
            q = f"{p}.releases[{i}]"
            r = _release(v, rr, q, {"source_build", "date", "file", "sha256"})
            source_build = v.boolean(r.get("source_build"), f"{q}.source_build", default=False)
            date = v.date(r["date"], f"{q}.date") if source_build else ""
            rel = CallerRelease(r["version"], r["ref"], r.get("commit", ""), r.get("sha256", ""), source_build, date,
                                _file(v, r.get("file"), f"{q}.file"))
            rel.rows = _release_reader(base, name, rel, callee_names, v, f"{q}.file")
            rels.append(rel)
        return Caller(name, v.url(c["url"], f"{p}.url", pinned=False), c["key"], tuple(rels))

    def callee(name: str, raw: Any) -> Callee:
        p = f"callees.{name}"
        c = v.keys(raw, {"url", "package_dir", "releases", "file"}, p, required=("url", "releases", "file"))
        if not isinstance(c["releases"], list) or not c["releases"]:
            raise v.fail(f"{p}.releases", "must list the releases read")
        rels = tuple(Release(r["version"], r["ref"], r.get("commit", ""), r.get("sha256", ""))
                     for r in (_release(v, x, f"{p}.releases[{i}]", {"sha256"}) for i, x in enumerate(c["releases"])))
        if len({parse_pkg_version(r.version) for r in rels}) != len(rels):
            raise v.fail(f"{p}.releases", "lists a version twice")
        d = Callee(name, v.url(c["url"], f"{p}.url", pinned=False), "version", rels, _file(v, c["file"], f"{p}.file"))
        d.names = _Once(lambda: _callee_names(base, d, v, f"{p}.file"))
        return d

    return Surface(read, _Table(t["callers"], caller), _Table(t["callees"], callee), source)


_TABLES: dict[str, Surface] = {}


def load(path: str | None = None) -> Surface:
    """The table in use (`path`: its index file): the knowledge directory's copy, else the packaged one (a
    knowledge directory carried in from an older doctor may predate this layout)."""
    p = table_path(INDEX, path)
    if p not in _TABLES:
        from doctor.jsonfile import read_json
        from doctor.knowledge.coverage import parsed_index

        data = parsed_index(p)  # the check asked the index first: its parse is not repeated
        _TABLES[p] = parse(read_json(p, "the import-surface index") if data is None else data, p)
    return _TABLES[p]


def _needs(surface: Surface, caller: str, rel: CallerRelease, callee: Callee) -> dict[str, str]:
    """What `rel` imports from `callee`, each name one the callee's file has a row for."""
    needs = rel.imports.get(callee.name, {})
    if needs and not needs.keys() <= callee.missing.keys():
        stray = sorted(set(needs) - set(callee.missing))
        raise InputError(f"imports {stray[0]!r}, which {callee.file} has no row for", source=os.path.join(
            os.path.dirname(surface.index), rel.file), path=f"imports.{callee.name}")
    return needs


def _version(text: str) -> Version | None:
    """PEP 440's reading of `text` (parsed once per process: parse_pkg_version's cache, which reads the same
    version but for a parenthesised remark such as "(beta)", which PEP 440 refuses)."""
    return None if "(" in text else parse_pkg_version(text)


def _same(a: str, b: str) -> bool:
    x = _version(a)
    return x is not None and x == _version(b)


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
        needs = _needs(surface, caller, rel, d)
    elif caller_commit and c.key == "commit":
        return None
    elif caller_version:
        rel = _find(released, c.key, caller_version, None)
        if rel is None:
            return None
        needs = _needs(surface, caller, rel, d)
        builds = [] if from_index else [r for r in c.releases if r.source_build and _same(r.version, rel.version)]
    elif c.key == "commit" or not released:
        return None
    else:
        rel = None
        common = set.intersection(*[set(_needs(surface, caller, r, d)) for r in released])
        last = _needs(surface, caller, released[-1], d)
        needs = {k: last[k] for k in sorted(common)}
    lacking = _lacking(needs, d, got)
    served = (rel or released[-1]).lazy.get(callee, {})
    lazy = {k: served[k] for k, _ in lacking if k in served}
    if len(lazy) < len(lacking):  # what `import caller` runs is reported; what a lazily served name loads, when alone
        lacking, lazy = [(k, w) for k, w in lacking if k not in lazy], {}
    build: CallerRelease | None = None
    extra: list[tuple[str, str]] = []
    for b in builds:
        more = {k: w for k, w in _needs(surface, caller, b, d).items() if k not in needs}
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
    return Unmet(caller, rel, rel or released[-1], callee, got, names, fixed, c.url, d.url, build, source_names, gone,
                 lazy)


def imported_at_load(caller: str, version: str, path: str | None = None, *,
                     commit: str | None = None) -> tuple[CallerRelease, Loads] | None:
    """The release of `caller` the table read at `version` (not a source build of it), or the one it read at
    `commit` when given (a source build: verl main at the commit a stack pins, which reports a .devN version no
    release has), and what it imports at load; None when the table holds no such release or records no loads for
    it. Reads the index and that release's file (once per process)."""
    c = load(path).callers.get(caller)
    at = _find(c.releases, "commit", None, commit) if c is not None and commit else None
    rel = at if at is not None or c is None else (
        _find(tuple(r for r in c.releases if not r.source_build), c.key, version, None))
    got = rel.loads if rel is not None else None
    return None if rel is None or got is None else (rel, got)


def _lacking(needs: dict[str, str], callee: Callee, release: Release) -> list[tuple[str, str]]:
    return sorted((k, w) for k, w in needs.items() if release.version in callee.missing.get(k, frozenset()))
