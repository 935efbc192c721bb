"""What vLLM declares when it is built with VLLM_TARGET_DEVICE=empty, the way vllm-ascend's install guide builds it:
read from the release's sdist on PyPI, without running its setup.py.

On Ascend vLLM is not PyPI's CUDA wheel: vllm-ascend's guide installs vLLM from source with
`VLLM_TARGET_DEVICE=empty` (https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md),
and its setup.py then takes `install_requires` from one requirements file: `get_requirements()` reads, under
`if _no_device():` (`VLLM_TARGET_DEVICE == "empty"`), `requirements/common.txt` (0.8.4 on),
`requirements-common.txt` at the root (0.7.3) or `requirements-cpu.txt` (0.7.1), following `-r FILE` and skipping
`--` options and comments. Its Requires-Python is setup.py's `python_requires=` (a literal) or pyproject.toml's
`[project] requires-python`. This module checks setup.py has that shape (ast) and reads those files from the
sdist; a setup.py of another shape is `Unreadable` (the refresh exits 2 naming the release), never a guess.

The releases read are every vLLM release a vllm-ascend release pairs with in the release matrix
(doctor/knowledge/matrix.py VLLM_ASCEND: `vllm`, `vllm_also`) and those the profiles build (`[git.vllm]`). A release
PyPI lists without an sdist (0.15.0 publishes wheels only) or does not list (0.11.0rc3, a pre-release tag) cannot be
read here: the refresh says so (`not-in-clone`), and the doctor keeps judging that release by its Requires-Python
only. `python -m tools.refresh_knowledge --vllm-sdists [--write-git-requirements]` compares (and rewrites) the
`[[vllm_empty_target]]` entries of profiles/requirements-git.toml.
"""

from __future__ import annotations

import ast
import re
import tarfile
from collections.abc import Iterable
from typing import Any

from tools.refresh_knowledge.diff import Difference, Findings
from tools.refresh_knowledge.git_requirements import (
    Unreadable,
    _keyword,
    _literal,
    _module_names,
    _pyproject_python,
    _setup_call,
    requirement_lines,
)

REPO = "vllm-project/vllm"
SDISTS = "vllm-sdists"  # the name the refresh reports these under (--vllm-sdists)
# the members read: setup.py, pyproject.toml and the requirement files at the root or in requirements/
_MEMBER = re.compile(r"^[^/]+/(setup\.py|pyproject\.toml|requirements[^/]*\.txt|requirements/[^/]+\.txt)$")


class Members:
    """An sdist's members by path inside its top directory (`show` ignores the commit: an sdist has one tree)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def show(self, commit: str, path: str) -> str | None:
        return self.files.get(path)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    f = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if f is None:
        raise Unreadable(f"setup.py has no module-level {name}()")
    return f


def _empty_branch(get_req: ast.FunctionDef) -> str:
    """The file `get_requirements()` reads under `if _no_device():`, when that branch is one assignment
    `requirements = _read_requirements("FILE")` and the function returns `requirements` unchanged after the chain."""
    chain = [s for s in get_req.body if isinstance(s, ast.If)]
    if len(chain) != 1 or not (isinstance(chain[0].test, ast.Call) and getattr(chain[0].test.func, "id", None)
                               == "_no_device" and not chain[0].test.args):
        raise Unreadable("get_requirements() does not begin its branches with `if _no_device():`")
    body = chain[0].body
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Assign) else None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "_read_requirements"
            and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
            and [getattr(t, "id", None) for t in body[0].targets] == ["requirements"]):  # type: ignore[union-attr]
        raise Unreadable("the `_no_device()` branch is not `requirements = _read_requirements(\"FILE\")`")
    after = get_req.body[get_req.body.index(chain[0]) + 1:]
    if not (len(after) == 1 and isinstance(after[0], ast.Return) and getattr(after[0].value, "id", None)
            == "requirements"):
        raise Unreadable("get_requirements() does more than return the branch's requirements")
    return str(call.args[0].value)


def _requirements_dir(get_req: ast.FunctionDef, text: str) -> str:
    """Where `_read_requirements` opens its files: `requirements_dir = ROOT_DIR / "requirements"` (0.8.4 on) or
    `open(get_path(filename))` at the root (0.7.x); it must follow `-r ` and skip `--` lines as the reader does."""
    reader = next((n for n in get_req.body if isinstance(n, ast.FunctionDef) and n.name == "_read_requirements"), None)
    if reader is None:
        raise Unreadable("get_requirements() has no nested _read_requirements()")
    src = ast.get_source_segment(text, reader) or ""
    if 'startswith("-r ")' not in src or 'startswith("--")' not in src:
        raise Unreadable("_read_requirements() no longer follows `-r ` and skips `--` lines")
    for s in get_req.body:
        if (isinstance(s, ast.Assign) and [getattr(t, "id", None) for t in s.targets] == ["requirements_dir"]
                and isinstance(s.value, ast.BinOp) and getattr(s.value.left, "id", None) == "ROOT_DIR"
                and isinstance(s.value.right, ast.Constant) and isinstance(s.value.right.value, str)
                and "open(requirements_dir / filename)" in src):
            return f"{s.value.right.value}/"
    if "open(get_path(filename))" in src:
        return ""
    raise Unreadable("_read_requirements() opens its files neither in ROOT_DIR / \"requirements\" nor at the root")


def declared(files: dict[str, str]) -> dict[str, Any]:
    """{requires_python, requires_dist, path, read_from} of a vLLM sdist's members (path -> text) built with
    VLLM_TARGET_DEVICE=empty, read as its setup.py builds them."""
    text = files.get("setup.py")
    if text is None:
        raise Unreadable("no setup.py in the sdist")
    tree = ast.parse(text)
    call, names = _setup_call(tree), _module_names(tree)
    inst = _keyword(call, "install_requires")
    if not (isinstance(inst, ast.Call) and getattr(inst.func, "id", None) == "get_requirements" and not inst.args):
        raise Unreadable("setup() does not take install_requires from get_requirements()")
    no_device = _function(tree, "_no_device")
    ret = no_device.body[-1] if no_device.body else None
    if not (isinstance(ret, ast.Return) and ast.get_source_segment(text, ret) == 'return VLLM_TARGET_DEVICE == "empty"'):
        raise Unreadable('_no_device() is not `return VLLM_TARGET_DEVICE == "empty"`')
    get_req = _function(tree, "get_requirements")
    path = _requirements_dir(get_req, text) + _empty_branch(get_req)
    tree_files = Members(files)
    python = _literal(_keyword(call, "python_requires"), names, "python_requires") or _pyproject_python(tree_files, "")
    return {"requires_python": python, "requires_dist": requirement_lines(tree_files, "", path), "path": path,
            "read_from": f"setup.py: install_requires = get_requirements(), under _no_device() "
                         f"(VLLM_TARGET_DEVICE=empty): {path}, following -r"}


def sdist_members(stream: Any, where: str) -> dict[str, str]:
    """setup.py, pyproject.toml and the requirement files of a .tar.gz stream (path inside its top directory ->
    text). It stops once setup.py and pyproject.toml are read and so is every file the empty target's requirements
    need (with their -r includes), without reading the rest of the archive."""
    files: dict[str, str] = {}
    try:
        with tarfile.open(fileobj=stream, mode="r|gz") as t:
            for m in t:
                if not (m.isfile() and _MEMBER.match(m.name)):
                    continue
                fh = t.extractfile(m)
                if fh is None:
                    continue
                files[m.name.split("/", 1)[1]] = fh.read().decode("utf-8", "replace")
                if _complete(files):
                    break
    except (tarfile.TarError, OSError, EOFError) as e:
        raise Unreadable(f"{where}: not a readable sdist ({e})") from None
    return files


def _complete(files: dict[str, str]) -> bool:
    if "setup.py" not in files or "pyproject.toml" not in files:
        return False
    try:
        declared(files)
    except Unreadable:
        return False  # an include not read yet, or a shape the full read will name
    except SyntaxError:
        return True  # declared() says so after the read
    return True


def releases(vllm_ascend: Iterable[Any], profiles: Iterable[Any]) -> dict[str, str]:
    """vLLM release -> why it is read: each a vllm-ascend matrix row pairs with, each a profile builds."""
    out: dict[str, str] = {}
    for row in vllm_ascend:
        for v in (row.vllm, *row.vllm_also):
            out.setdefault(v, f"vllm-ascend {row.version}")
    for p in profiles:
        g = p.git.get("vllm")
        if g is not None and g.version and getattr(g, "install", None) == "empty-target":
            out.setdefault(g.version, p.name)
    return out


def _sdist(rel: Any) -> Any:
    return next((f for f in rel.files if f.filename.endswith(".tar.gz")), None)


def read(http: Any, versions: Iterable[str]) -> dict[str, dict[str, Any] | str]:
    """version -> its empty-target declaration (with `sdist`, `source`), or why it cannot be read (not on PyPI,
    no sdist). PyPI's project JSON lists the files (its per-version JSON is not served); `Unreadable` when an sdist's
    setup.py has another shape, naming the release."""
    from tools.refresh_knowledge import pypi

    by_version = {r.version: r for r in pypi.releases("vllm", http)}
    out: dict[str, dict[str, Any] | str] = {}
    for v in sorted(set(versions), key=_key):
        rel = by_version.get(v)
        f = _sdist(rel) if rel is not None else None
        if f is None:
            out[v] = "PyPI lists no such release" if rel is None else "PyPI has no sdist of it (wheels only)"
            continue
        with http.stream(f.url) as s:
            files = sdist_members(s, f.filename)
        try:
            d = declared(files)
        except (Unreadable, SyntaxError) as e:
            raise Unreadable(f"vllm {v} ({f.filename}): {e}") from None
        d["sdist"] = f.filename
        d["source"] = f"https://github.com/{REPO}/blob/v{v}/{d['path']}"
        out[v] = d
    return out


def _key(v: str) -> Any:
    from packaging.version import Version

    return Version(v)


def rows(found: dict[str, dict[str, Any] | str]) -> list[dict[str, Any]]:
    """The `[[vllm_empty_target]]` entries of the releases read, oldest first."""
    return [{"version": v, "sdist": d["sdist"], "requires_python": d["requires_python"],
             "requires_dist": d["requires_dist"], "read_from": d["read_from"], "source": d["source"]}
            for v, d in found.items() if isinstance(d, dict)]


def check(found: dict[str, dict[str, Any] | str], wanted: dict[str, str], table: Any, out: Findings) -> None:
    """Each release's declaration, read from its sdist, against the table's entry for it."""
    for v, d in found.items():
        out.count(SDISTS)
        subject = f"vllm {v} empty-target requirements ({wanted.get(v, '-')})"
        if isinstance(d, str):
            out.add(Difference(SDISTS, "not-in-clone", subject, None, None, f"https://pypi.org/project/vllm/{v}/: {d}",
                               "not read: the doctor judges this release by its Requires-Python only"))
            continue
        ours = table.vllm_empty_target(v)
        where = f"{d['sdist']} ({d['source']})"
        if ours is None:
            out.add(Difference(SDISTS, "missing-row", subject, None, f"{len(d['requires_dist'])} requirements", where))
        elif (list(ours.requires_dist), ours.requires_python or "") != (d["requires_dist"], d["requires_python"] or ""):
            out.add(Difference(SDISTS, "changed", subject, f"{len(ours.requires_dist)} requirements",
                               f"{len(d['requires_dist'])} requirements", where))
