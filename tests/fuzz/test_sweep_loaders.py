"""A deterministic sweep of every loader of the knowledge the doctor reads (profiles, tables, signature databases,
snapshots): for each key path of a shipped file (into tables and arrays of tables alike), the value is replaced by
each of a few wrongly shaped ones and the loader run. Each run returns a value or raises InputError naming the
file; any other exception (a TypeError from hashing a list, an AttributeError from a string method on a table) would
be a traceback where the CLI promises exit 2 with a reason.

Hypothesis samples such mutations (test_fuzz_loaders); this sweep tries all of them on one representative file per
loader, so a hole is found on every run, not on a lucky one."""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from doctor.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "profiles"

# the wrong shapes: a value where a table is wanted and the reverse, arrays of the wrong items, nothing, a number,
# an empty string
WRONG: tuple[Any, ...] = (["a"], {"a": 1}, {"": None}, [None], None, 5, "", [["x"]], [{"a": 1}])

Path_ = tuple[Any, ...]


def key_paths(node: Any, at: Path_ = (), items: int = 2) -> Iterator[Path_]:
    """Every key path into `node`, tables' keys and arrays' items alike (of an array, its first and last `items`
    items: its rows share one shape; so of a table of more than 16 keys, a map keyed by data such as versions or
    imported names)."""
    if isinstance(node, dict):
        pairs: list[tuple[Any, Any]] = list(node.items())
        if len(pairs) > 16:
            pairs = pairs[:items] + pairs[-items:]
    elif isinstance(node, list):
        idx = sorted({*range(min(items, len(node))), *range(max(0, len(node) - items), len(node))})
        pairs = [(i, node[i]) for i in idx]
    else:
        return
    for k, v in pairs:
        yield (*at, k)
        yield from key_paths(v, (*at, k), items)


def replaced(doc: Any, path: Path_, value: Any) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def sweep(doc: Any, run: Callable[[Any], object], source: str, *, items: int = 2) -> list[str]:
    """Run `run` on `doc` with each key path's value replaced by each wrong shape; the runs that raised anything
    but an InputError naming `source`."""
    run(copy.deepcopy(doc))  # the file as shipped loads: a sweep of a refused file would test nothing
    bad = []
    for path in key_paths(doc, (), items):
        for value in WRONG:
            try:
                run(replaced(doc, path, value))
            except InputError as e:
                if source not in str(e):
                    bad.append(f"{path} = {value!r}: InputError not naming {source}: {e}")
            except Exception as e:  # noqa: BLE001 - the point: anything else is the defect reported
                bad.append(f"{path} = {value!r}: {type(e).__name__}: {e}")
    return bad


def toml(name: str) -> Any:
    return tomllib.loads((PROFILES / name).read_text(encoding="utf-8"))


def jsonfile(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shape(node: Any, at: str = "") -> set[str]:
    """The key paths of `node`, arrays' items as one `[]`: what a file exercises of its loader."""
    if isinstance(node, dict):  # a key that is data (a version, a project's name) as one `*`
        keys = [(k if _NAME.fullmatch(str(k)) and len(node) <= 16 else "*", v) for k, v in node.items()]
        return {x for k, v in keys for x in {f"{at}.{k}", *_shape(v, f"{at}.{k}")}}
    if isinstance(node, list):
        return {x for v in node for x in _shape(v, f"{at}[]")}
    return set()


def covering(docs: list[Any]) -> list[Any]:
    """Few of `docs` that together have every key path any of them has (greedy: the one adding most first)."""
    want = set().union(*(_shape(d) for d in docs))
    shapes = [_shape(d) for d in docs]
    out: list[Any] = []
    while want:
        i = max(range(len(docs)), key=lambda j: len(shapes[j] & want))
        out.append(docs[i])
        want -= shapes[i]
    return out


def assert_clean(bad: list[str]) -> None:
    assert not bad, f"{len(bad)} wrongly shaped values escaped as a traceback:\n" + "\n".join(bad[:40])


# ---------------------------------------------------------------------------------------------------- profiles


def test_profile_stacks() -> None:
    from doctor.knowledge.profiles import parse_profile

    docs = [tomllib.loads(p.read_text()) for p in sorted((PROFILES / "stacks").glob("*.toml"))]
    src = "sweep/stack.toml"
    bad = []
    for doc in covering(docs):
        bad += sweep(doc, lambda d: parse_profile(d, src), src, items=1)
    assert_clean(bad)


def test_requirements_index_and_projects() -> None:
    from doctor.knowledge.requirements import _releases, parse_index, parse_project, summary_of
    from doctor.knowledge.validate import Validator

    req = PROFILES / "requirements"
    index = jsonfile(req / "index.json")
    bad = sweep({**index, "projects": dict(list(index["projects"].items())[:3])},
                lambda d: parse_index(d, "sweep/index.json"), "sweep/index.json")
    read = index["read"]
    projects = []
    for p in sorted(req.glob("*.json")):
        if p.name != "index.json":  # each cut to its first and last release (the index's line for it made to match)
            doc = jsonfile(p)
            projects.append({**doc, "releases": dict([*doc["releases"].items()][:1] + [*doc["releases"].items()][-1:])})
    for doc in covering(projects):
        name, src = str(doc["project"]), f"sweep/{doc['project']}.json"
        summary = summary_of(_releases(Validator(src), doc["releases"], "releases"))
        bad += sweep(doc, lambda d, src=src, name=name, summary=summary: parse_project(d, src, name, read, summary), src,
                     items=1)
    assert_clean(bad)


def test_requirements_git() -> None:
    from doctor.knowledge.requirements_git import parse

    def run(d: Any) -> None:
        table = parse(d, "sweep/requirements-git.toml")
        for version in ("0.11.0", "0.11.0+empty", "not a version"):
            table.vllm_empty_target(version)

    assert_clean(sweep(toml("requirements-git.toml"), run, "sweep/requirements-git.toml"))


# ------------------------------------------------------------------------------------------------------ tables


def test_chip_support() -> None:
    from doctor.knowledge.chip_support import parse

    def run(d: Any) -> None:
        table = parse(d, "sweep/chip-support.toml")
        for package in table.scope:
            for family in ("A2", "A3", "310P"):
                table.verdict(package, "0.12.1", family, "core_r0.16.0")

    assert_clean(sweep(toml("chip-support.toml"), run, "sweep/chip-support.toml"))


@pytest.mark.parametrize("name, module", [
    ("code-needs.toml", "code_needs"), ("env-values.toml", "env_values"), ("env-guidance.toml", "env_guidance"),
    ("torch-npu-socs.toml", "torch_npu_socs"), ("releases.toml", "releases")])
def test_table(name: str, module: str) -> None:
    import importlib

    mod = importlib.import_module(f"doctor.knowledge.{module}")
    parse = getattr(mod, "parse_releases" if module == "releases" else "parse")
    src = f"sweep/{name}"
    assert_clean(sweep(toml(name), lambda d: parse(d, src), src, items=1))


def test_later_bounds() -> None:
    from doctor.knowledge.later_bounds import excluded_later, parse

    full = jsonfile(PROFILES / "later-bounds.json")
    keep = ("vllm-ascend", "tensordict")  # two projects: each key of the file's shape, ~1 kB of lines
    doc = {**full, **{k: {n: full[k][n] for n in keep} for k in ("newest", "clauses", "projects")}}

    def run(d: Any) -> None:
        table = parse(d, "sweep/later-bounds.json")
        for name in keep:
            for dep in table.dependency_names(name):
                table.may_exclude(name, dep, "2.8.0")
                excluded_later(table.changes(name, dep), table.newest.get(name, "0"), "0.1", "2.8.0", lambda _: True)

    assert_clean(sweep(doc, run, "sweep/later-bounds.json", items=1))


def test_import_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index, one caller's release file and one callee's file, each read when the check asks for its rows."""
    import doctor.jsonfile
    from doctor.knowledge import import_surface

    base = PROFILES / "import-surface"
    index = jsonfile(base / "index.json")
    caller = index["callers"]["verl"]  # one caller (its first and newest release): its imports name every callee
    caller = {**caller, "releases": caller["releases"][:1] + caller["releases"][-1:]}
    index = {**index, "callers": {"verl": caller}}
    caller_file = str(caller["releases"][-1]["file"])
    callee_file = str(index["callees"]["transformers"]["file"])
    src = str(base / "index.json")
    real = doctor.jsonfile.read_json
    files: dict[str, Any] = {}
    monkeypatch.setattr(doctor.jsonfile, "read_json", lambda p, what: files[p] if p in files else real(p, what))

    def run(d: Any) -> None:
        surface = import_surface.parse(d, src)
        for name in surface.callers:
            for rel in surface.callers[name].releases:
                if rel.file in (caller_file, ""):
                    rel.entries, rel.imports, rel.callee_entries, rel.loads  # noqa: B018 - each read on first use
        for name in surface.callees:
            callee = surface.callees[name]
            if callee.file == callee_file:
                for rows in (callee.missing, callee.no_module, callee.unknown):
                    for k in rows:
                        rows[k]

    # a defect of the index may be refused as one of a file it names (a release's imports of a dropped callee)
    bad = sweep(index, run, str(base), items=1)
    for file in (caller_file, callee_file):
        path = str(base / file)
        doc = jsonfile(Path(path))

        def run_file(d: Any, path: str = path) -> None:
            files[path] = d
            try:
                run(index)
            finally:
                files.pop(path)

        bad += sweep(doc, run_file, path, items=1)
    assert_clean(bad)


# ------------------------------------------------------------------------------------------- explain's tables


def _via_file(monkeypatch: pytest.MonkeyPatch, module: Any, load: Callable[[str], object], src: str,
              doc: Any) -> list[str]:
    """Sweep a loader that reads its TOML file itself (read_toml of `module` answering the mutated document)."""
    current: list[Any] = []
    monkeypatch.setattr(module, "read_toml", lambda path, what="": current[0])

    def run(d: Any) -> None:
        current[:] = [d]
        load(src)

    return sweep(doc, run, src, items=1)


def test_signature_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database the user gives (`--signatures`): read, validated, and each example run through the scanner."""
    from doctor.explain import db
    from doctor.explain.loading import load_signatures

    doc = toml("signatures.toml")
    sigs = [s for s in doc["signature"] if not s.get("supersedes")]
    doc = {**doc, "signature": covering(sigs)}
    assert_clean(_via_file(monkeypatch, db, load_signatures, "sweep/signatures.toml", doc))


def test_error_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    from doctor.explain import codes

    load = getattr(codes.load_codes, "__wrapped__", codes.load_codes)  # its cache would answer the first run
    assert_clean(_via_file(monkeypatch, codes, load, "sweep/error_codes.toml", toml("error_codes.toml")))


def test_message_owners(tmp_path: Path) -> None:
    from doctor.explain.messages import _read_table

    full = jsonfile(PROFILES / "message_owners.json")
    doc = {**full, "files": full["files"][:2], "classes": full["classes"][:2]}
    src = str(tmp_path / "message_owners.json")

    def run(d: Any) -> None:
        Path(src).write_text(json.dumps(d), encoding="utf-8")
        _read_table(src)

    assert_clean(sweep(doc, run, src, items=1))


# -------------------------------------------------------------------------------------------------- snapshot


def test_snapshot() -> None:
    from doctor.snapshot.model import parse_document  # the module the CLI imports (the loader is its part)

    doc = jsonfile(ROOT / "tests" / "golden" / "check-sick.snapshot.json")
    assert_clean(sweep(doc, lambda d: parse_document(json.dumps(d), "sweep/snapshot.json"), "sweep/snapshot.json"))


def test_launch_spec() -> None:
    """A spec file's values (every option of LaunchSpec, at its default): build_spec refuses each wrong shape."""
    import dataclasses

    from doctor.launch.spec import LaunchSpec, build_spec

    spec = LaunchSpec(verl_version="0.9.1")
    doc = {f.name: list(x) if isinstance(x := getattr(spec, f.name), tuple) else x
           for f in dataclasses.fields(LaunchSpec) if f.init}
    assert_clean(sweep(doc, lambda d: build_spec(d, source="sweep/spec.yaml"), "sweep/spec.yaml"))
