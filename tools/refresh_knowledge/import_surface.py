"""`python -m tools.refresh_knowledge.import_surface`: which names each caller release imports from a callee at module
level, and which callee releases define them, read from the sources at their tags; writes the directory
profiles/import-surface/ (`layout`: index.json, a file per caller release and per callee;
doctor/knowledge/import_surface.py loads it, the `import-surface` check judges it).

An ImportError such as `cannot import name 'X' from 'megatron.core.Y'` is a fact of two source trees: the caller's
module-level `from megatron.core.Y import X` (it runs when the caller's module is imported) and the callee's module
Y at the installed release, which does not bind X. Both are read here with the stdlib `ast` module from local git
mirrors (bare or a clone's .git: `git ls-tree` / `git cat-file`), never imported or run.

What counts in a caller: `import callee.mod` / `from callee.mod import a, b` in the module body, also under `with`
and inside a `try` whose handlers do not catch ImportError, and for a caller that names one (`installed_if`) under
an `if` on a test that holds whenever the callee is installed (trl's `if is_peft_available():`). Not: inside any
other `if` (TYPE_CHECKING, version guards),
a `try ... except ImportError` (or a broader handler), `with suppress(ImportError)`, a function or a class body:
those need not succeed at import. For a caller that asks (`attributes`: transformers), also the attributes of a
callee's modules its module bodies read (`attribute_reads`): `import torch.utils._pytree as _torch_pytree` then
`_torch_pytree.register_pytree_node(...)` at module level, `@torch.compiler.disable` on a def, `torch.nn.Module` as a
class base, a default argument: Python evaluates them at import, and a step the installed callee lacks raises
AttributeError. Recorded as the name `.register_pytree_node` (a leading "." marks an attribute path, one need per
step: `.compiler`, `.compiler.disable`), only where `import callee...` is the name's only binding in the module, and
by the same rules of what runs (an `assert`, a def's body, the operands after the first of `and`/`or`, a
conditional expression's branches, a `try` that catches AttributeError do not count).

What counts as defined by a callee module at a release: the module exists (`mod.py`, `mod/__init__.py`, or a
directory: a namespace package), and the name is bound anywhere in its module body (def, class, assignment, import,
`for`/`with` targets, also under `if`/`try`: a conditional binding is not held against it), listed in `__all__`, or
is a submodule; an attribute path, where each step is bound or a submodule (a step the module binds to a class or
a function leaves the rest unknown). A module-level `__getattr__`, or a star import that cannot be resolved inside the callee's tree,
makes a name it does not bind *unknown*, never missing; so does a compiled module (a `.so` / `.pyd`, or only a
`.pyi` stub: torch._C) and any module inside it, whose names the Python files do not say.

Releases read: Megatron-Core at its `core_v*` tags that are PyPI releases and at the commits the verified stacks pin
(profiles/requirements-git.toml); transformers from the PyPI wheels in `--wheels` (its repository is too large to
mirror; `pip download --no-deps transformers==X -d DIR`), whose lazy packages serve the `__all__` of the files under
them (transformers' define_import_structure); vLLM from the PyPI sdists in `--sdists` (`vllm-X.tar.gz`, the `sdist`
entry of https://pypi.org/pypi/vllm/X/json: too large to mirror, its wheels ~400 MB, and on Ascend it is built from
source at the release vllm-ascend pairs with, so its Python files are the sdist's; only `*.py` under `vllm/`); mbridge, verl
and vllm-ascend at their release tags; trl and peft at their release tags that are PyPI releases (read for transformers,
accelerate and huggingface_hub; trl also for peft); torch through HTTP byte ranges of PyPI's wheels (`--pypi-cache`:
each final release from 2.0.0, its smallest wheel's zip directory and only the Python files needed, kept in that
directory; a module its compiled extension or a stub provides, such as torch._C, binds names that are unknown, never
missing, and so is a name no torch release read defines: torch_npu registers torch.npu), a callee of every caller (a
caller's `import torch` is not recorded); MindSpeed at the pinned commits;
transformers as a caller through byte ranges of its PyPI wheels too (`--pypi-cache`, every final release from
4.30.0: the only modules read are those its entries reach), for torch: its entries are `import transformers` (its
lazy __init__, which imports its utils at module level: what any user of it runs first), the modules `from
transformers import AutoModelForCausalLM, AutoTokenizer` loads (models.auto's modeling_auto and tokenization_auto:
verl, trl and a user's script load models through them) and modeling_utils (every model class imports it when
`from_pretrained` loads one), read with `installed_if` = `is_torch_available` (its torch imports sit under `if
is_torch_available():`, which holds when torch is installed and, from 4.52, at or above transformers' own minimum:
below it transformers turns PyTorch off, profiles/code-needs.toml says so, and the check leaves that pair to it); and a
branch head whose pyproject.toml still declares a release's version (mbridge `main`) as that release's *source
build*: `pip install git+...` reports the release's version over different files. verl also at the commits the
stacks pin that no release tag names (profiles/requirements-git.toml: main 1dda039b9, whose verl/version/version
says 0.10.0.dev) as a source build keyed by version and commit (`verl/0.10.0.dev0-1dda039b9.json`): an install from
that checkout reports a .devN version no release has, so only its commit names it.

A caller's imports count when its entry modules load; for a caller read `lazy` (trl: its package __init__ is a lazy
module, `_import_structure`), also what importing each name its entry packages serve runs (`from trl import
DPOTrainer` imports trl.trainer.dpo_trainer), recorded apart (`lazy`: per callee, each name only those modules import
-> the first served name whose import runs it), since `import trl` itself loads without them, and only where some
callee release read lacks or may lack it (`_prune_lazy`: the rest can never be judged missing); for one callee a caller
may have more (verl's vLLM rollout,
which a rollout=vllm job loads; its async server only at releases whose default rollout mode is async); for
vllm-ascend they are named by its own files at each tag (`vllm_ascend_entries`: what vLLM loads through its plugin
entry points); for vLLM also what `vllm serve` loads (`command`: its console script's module and what that function
imports, `vllm_cli_entries`), the names only it imports recorded apart so that a finding names the command.

For verl (`Project.loads`) each release's file also records `loads`: every top-level package outside verl and the
standard library that its entry modules and the trainer modules its task runner imports import at module level,
by the same rules, with the first file:line. doctor/checks/declared.py makes a missing or out-of-range addition of
verl's run-set extra ([verl-core]) an error when one of its modules is there: uninstalled from a real verl 0.9.1
venv, each addition it lists (cachetools, fastapi, uvicorn, transfer_queue) broke `import verl.trainer.ppo.v1` and
each it does not (nvtx, torchcodec, mathruler, qwen_vl_utils) broke none of the trainer's modules; zmq and msgspec,
which it does not list either, broke it through `import transfer_queue`: other distributions' imports are not
followed, TransferQueue's own Requires-Dist names them.

Usage: python -m tools.refresh_knowledge.import_surface [--mirrors /work/.mirror] [--wheels DIR] [--sdists DIR]
[--pypi-cache DIR] [--keep [--callers trl]] [--out profiles/import-surface]
(README "Updating the knowledge"). Exit 2 when a mirror cannot be read; with --keep, a project whose sources are not
given keeps its rows from the table in --out (`read_layout`), and with --callers only those callers and the callees
they import are read (the others keep theirs); the same inputs rewrite byte-identical files.
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.version import InvalidVersion, Version

from doctor.errors import InputError
from doctor.tomlfile import read_toml

SCHEMA = "doctor.import-surface/2"
_CATCHES_IMPORT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_CATCHES_ATTRIBUTE = _CATCHES_IMPORT | {"AttributeError"}


# -- git -----------------------------------------------------------------------------------------------------------

class GitError(Exception):
    """A mirror that cannot be read."""


class Git:
    """Read-only access to a bare mirror (or a clone's .git): refs, trees and blobs through one `git cat-file
    --batch` process, so reading a few thousand files at a few dozen tags takes seconds."""

    def __init__(self, path: str) -> None:
        p = os.path.abspath(path)
        for cand in (p, os.path.join(p, "repo"), os.path.join(p, ".git")):
            if os.path.isfile(os.path.join(cand, "HEAD")) and os.path.isdir(os.path.join(cand, "objects")):
                self.path = cand
                break
        else:
            raise GitError(f"{path}: not a git directory (no HEAD/objects)")
        self._batch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> str:
        r = subprocess.run(["git", f"--git-dir={self.path}", *args], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise GitError(f"{self.path}: git {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def tags(self) -> list[str]:
        return [t for t in self.run("for-each-ref", "--format=%(refname:short)", "refs/tags/").splitlines() if t]

    def commit(self, ref: str) -> str:
        return self.run("rev-parse", f"{ref}^{{commit}}").strip()

    def files(self, commit: str, under: str) -> list[str]:
        return [f for f in self.run("ls-tree", "-r", "--name-only", commit, "--", under).splitlines() if f]

    def show(self, commit: str, path: str) -> str | None:
        """The text of `path` at `commit`; None when absent (or its blob is missing from a partial mirror)."""
        if self._batch is None:
            self._batch = subprocess.Popen(["git", f"--git-dir={self.path}", "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(f"{commit}:{path}\n".encode())
        self._batch.stdin.flush()
        head = self._batch.stdout.readline().decode().split()
        if len(head) != 3:
            return None
        data = self._batch.stdout.read(int(head[2]) + 1)[:-1]
        return data.decode("utf-8", "replace") if head[1] == "blob" else None

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait()
            self._batch = None


class Wheel:
    """A release's wheel (a zip): the files it installs, read like a git tree (`files(_, under)`, `show(_, path)`),
    for a callee whose repository is too large to mirror (transformers) or not mirrored (accelerate, torchdata), and
    for a caller release whose tag the mirror lacks (verl 0.9.1)."""

    def __init__(self, path: str) -> None:
        import hashlib
        import zipfile

        self.path = path
        self.zip = zipfile.ZipFile(path)
        with open(path, "rb") as fh:
            self.sha256 = hashlib.sha256(fh.read()).hexdigest()

    def files(self, commit: str, under: str) -> list[str]:
        return [n for n in self.zip.namelist() if n.startswith(under + "/")]

    def show(self, commit: str, path: str) -> str | None:
        try:
            return self.zip.read(path).decode("utf-8", "replace")
        except KeyError:
            return None

    def close(self) -> None:
        self.zip.close()


class Sdist:
    """A release's source distribution (a .tar.gz): its `*.py` files under the package, read like a git tree, for a
    callee whose repository is too large to mirror and whose wheels are too large to fetch (vLLM: on Ascend it is
    built from source at a release, so its Python files are the sdist's). Read once on first use; `close` frees
    them."""

    def __init__(self, path: str, package_dir: str) -> None:
        import hashlib

        self.path = path
        self.package_dir = package_dir
        with open(path, "rb") as fh:
            self.sha256 = hashlib.sha256(fh.read()).hexdigest()
        self._files: dict[str, bytes] | None = None

    def _read(self) -> dict[str, bytes]:
        if self._files is None:
            import tarfile

            self._files = {}
            with tarfile.open(self.path, "r:gz") as tar:
                for m in tar:
                    # members are <name>-<version>/<path>: the path inside the project is after the first "/"
                    rel = m.name.partition("/")[2]
                    # and the project's setup.py / pyproject.toml, which name its console scripts
                    if m.isfile() and (rel.endswith(".py") and rel.startswith(self.package_dir + "/")
                                       or rel in ("setup.py", "pyproject.toml")):
                        fh = tar.extractfile(m)
                        if fh is not None:
                            self._files[rel] = fh.read()
        return self._files

    def files(self, commit: str, under: str) -> list[str]:
        return [n for n in self._read() if n.startswith(under + "/")]

    def show(self, commit: str, path: str) -> str | None:
        data = self._read().get(path)
        return None if data is None else data.decode("utf-8", "replace")

    def close(self) -> None:
        self._files = None


class RemoteWheel:
    """A PyPI wheel read through HTTP byte ranges (tools/refresh_knowledge/pypi.py `_RemoteFile`): its zip directory,
    then only the members asked for, kept in `cache` (`<wheel>.json`: its file names and the members read) so a
    re-run reads nothing again; for a callee whose wheels are hundreds of MB (torch: each release's Python files are
    the same on every platform, a few MB of its smallest wheel). Named by PyPI's sha256 of the wheel."""

    def __init__(self, url: str, filename: str, sha256: str, cache: str, http: Any = None) -> None:
        self.url, self.path, self.sha256, self.http = url, filename, sha256, http
        self._cache = os.path.join(cache, filename + ".json")
        self._zip: Any = None
        self._dirty = False
        got: dict[str, Any] = {}
        if os.path.exists(self._cache):
            with open(self._cache, encoding="utf-8") as fh:
                got = json.load(fh)
        if got.get("sha256") != sha256:
            got = {"sha256": sha256, "names": self._open().namelist(), "files": {}}
            self._dirty = True
        self.names: list[str] = got["names"]
        self._files: dict[str, str | None] = got["files"]

    def _open(self) -> Any:
        if self._zip is None:
            import zipfile

            from tools.refresh_knowledge.pypi import Http, _RemoteFile

            self.http = self.http or Http()
            self._zip = zipfile.ZipFile(_RemoteFile(self.http, self.url))
        return self._zip

    def files(self, commit: str, under: str) -> list[str]:
        return [n for n in self.names if n.startswith(under + "/")]

    def show(self, commit: str, path: str) -> str | None:
        if path not in self._files:
            try:
                self._files[path] = self._open().read(path).decode("utf-8", "replace")
            except KeyError:
                self._files[path] = None
            self._dirty = True
        return self._files[path]

    def close(self) -> None:
        """Write what was read to the cache (members sorted: the same reads write the same file)."""
        if self._dirty:
            from doctor.atomic import write_text_atomic

            os.makedirs(os.path.dirname(self._cache) or ".", exist_ok=True)
            write_text_atomic(self._cache, json.dumps({"sha256": self.sha256, "url": self.url, "names": self.names,
                                                       "files": dict(sorted(self._files.items()))}) + "\n")
            self._dirty = False


# -- callers: the imports that must succeed --------------------------------------------------------------------

@dataclass(frozen=True)
class Import:
    module: str  # the callee module, e.g. megatron.core.utils
    name: str  # the name imported from it; "" for `import module` (the module itself must exist)
    file: str
    line: int


def _catches_import(handler: ast.ExceptHandler, catches: frozenset[str] = _CATCHES_IMPORT) -> bool:
    t = handler.type
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(n, ast.Name) and n.id in catches or isinstance(n, ast.Attribute)
               and n.attr in catches for n in names)


def _suppresses_import(expr: ast.expr, catches: frozenset[str] = _CATCHES_IMPORT) -> bool:
    """`contextlib.suppress(ImportError)` (or a broader exception): what it wraps need not succeed."""
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name == "suppress" and any(
        isinstance(a, ast.Name) and a.id in catches or isinstance(a, ast.Attribute) and a.attr in
        catches for a in expr.args)


def _unconditional(body: Iterable[ast.stmt], runs_if: str = "") -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run whenever the module body runs; with `runs_if`, also those under `if runs_if():` (a test
    that holds whenever the callee is installed: trl's `is_peft_available`)."""
    for st in body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            yield st
        elif isinstance(st, ast.With) and not any(_suppresses_import(i.context_expr) for i in st.items):
            yield from _unconditional(st.body, runs_if)
        elif isinstance(st, ast.Try) and not any(_catches_import(h) for h in st.handlers):
            yield from _unconditional(st.body, runs_if)
            yield from _unconditional(st.orelse, runs_if)
            yield from _unconditional(st.finalbody, runs_if)
        elif runs_if and isinstance(st, ast.If) and _runs_if(st.test, runs_if):
            yield from _unconditional(st.body, runs_if)


def _runs_if(test: ast.expr, runs_if: str) -> bool:
    """`if runs_if():`, a test that holds whenever the callee is installed (and, for transformers'
    `is_torch_available`, at or above the release's own minimum of it)."""
    return isinstance(test, ast.Call) and not test.args and _names(test.func, runs_if)


def module_imports(source: str, file: str, prefix: str, module: str = "", top: str = "", runs_if: str = "",
                   attributes: bool = False) -> tuple[list[Import], set[str], dict[str, int]]:
    """The module-level imports of `prefix` (e.g. `megatron.core`) in one caller file that must succeed when the
    file is imported, the modules of the caller's own package `top` it imports at module level (with their
    parent packages, which Python imports first), and the top-level packages outside `top` it imports at module
    level (name -> first line: what must be installed for the file to load): ([], set(), {}) when the file does
    not parse. `module` is the file's dotted name (`pkg` for pkg/__init__.py), for relative imports. With
    `attributes`, also the attributes of `prefix`'s modules the module body reads (`attribute_reads`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return [], set(), {}
    out: list[Import] = []
    own: set[str] = set()
    tops: dict[str, int] = {}
    package = module if file.endswith("__init__.py") else module.rpartition(".")[0]
    for st in _unconditional(tree.body, runs_if):
        if isinstance(st, ast.Import):
            out += [Import(a.name, "", file, st.lineno) for a in st.names if _under(a.name, prefix)]
            own.update(m for a in st.names if top and _under(a.name, top) for m in _parents(a.name))
            for a in st.names:
                if not (top and _under(a.name, top)):
                    tops.setdefault(a.name.split(".")[0], st.lineno)
            continue
        if st.level == 0 and st.module and _under(st.module, prefix):
            out += [Import(st.module, "" if a.name == "*" else a.name, file, st.lineno) for a in st.names]
        src = _absolute(st, package) if package or st.level == 0 else None
        if top and src and _under(src, top):
            own.update(_parents(src))
            own.update(f"{src}.{a.name}" for a in st.names if a.name != "*")  # a submodule, when one exists
        elif st.level == 0 and st.module:
            tops.setdefault(st.module.split(".")[0], st.lineno)
    if attributes:
        out += attribute_reads(tree, file, prefix, runs_if)
    return out, own, tops


def attribute_reads(tree: ast.Module, file: str, prefix: str, runs_if: str = "") -> list[Import]:
    """The attributes of `prefix`'s modules that the module body reads whenever it runs, as needs: after `import
    torch.utils._pytree as _torch_pytree`, a module-level `_torch_pytree.register_pytree_node(...)` needs
    (`torch.utils._pytree`, `.register_pytree_node`); after `import torch`, `@torch.compiler.disable` on a def needs
    (`torch`, `.compiler`) and (`torch`, `.compiler.disable`): a name starting with "." is an attribute path read
    from the module, one need per step, and the first step the callee lacks raises AttributeError at import.

    What runs: the statements `_unconditional` follows (not under another `if`, nor a `try` whose handlers catch
    AttributeError or ImportError), and in them what Python evaluates when they run: a decorator, a default argument,
    a class's bases and body, an annotation (unless `from __future__ import annotations`), an `if`'s or `while`'s
    test, a `for`'s iterable, a `with`'s context; not a def's or lambda's body, an `assert` (python -O skips it), a
    comprehension's elements, the branches of `x if c else y`, nor what follows the first operand of `and` / `or`.
    A name counts only where `import prefix...` (`import torch`, `import torch.x as y`) is its only binding in the
    module (never assigned, defined, imported from elsewhere, nor declared global), and once that import ran."""
    catch = _CATCHES_ATTRIBUTE
    future = any(isinstance(st, ast.ImportFrom) and st.module == "__future__" and any(
        a.name == "annotations" for a in st.names) for st in tree.body)
    bound: dict[str, set[str]] = {}  # a name -> the modules `import` binds it to ("" for any other binding)
    for node in _module_scope(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound.setdefault(a.asname or a.name.split(".")[0], set()).add(a.name if a.asname else
                                                                              a.name.split(".")[0])
        else:
            for n in _bound_names(node):
                bound.setdefault(n, set()).add("")
    banned = {n for n, mods in bound.items() if len(mods) > 1 or "" in mods} | {
        n for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    out: list[Import] = []

    def need(module: str, parts: list[str], line: int) -> None:
        path = module
        while parts and path != prefix and prefix.startswith(path + "."):  # `import megatron.core`: megatron.core.x
            path = f"{path}.{parts.pop(0)}"
        if parts and _under(path, prefix):
            out.extend(Import(path, "." + ".".join(parts[:i]), file, line) for i in range(1, len(parts) + 1))

    def scan(node: ast.AST | None, names: dict[str, str]) -> None:
        if node is None:
            return
        if isinstance(node, ast.Attribute):
            parts, base = [], node
            while isinstance(base, ast.Attribute):
                parts.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in names:
                parts.reverse()
                need(names[base.id], parts if isinstance(node.ctx, ast.Load) else parts[:-1], node.lineno)
            else:
                scan(base, names)
            return
        part = (node.args if isinstance(node, ast.Lambda) else
                node.generators[0].iter if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp,
                                                             ast.GeneratorExp)) else  # the first iterable only
                node.test if isinstance(node, ast.IfExp) else
                node.values[0] if isinstance(node, ast.BoolOp) else
                (None if future else node.annotation) if isinstance(node, ast.arg) else node)
        if part is not node:
            scan(part, names)
            return
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.expr_context, ast.stmt)):
                scan(child, names)

    def run(body: Iterable[ast.stmt], names: dict[str, str]) -> None:
        for st in body:
            if isinstance(st, ast.Import):
                for a in st.names:
                    name, module = (a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0])
                    if name not in banned and (_under(module, prefix) or prefix.startswith(module + ".")):
                        names[name] = module
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for x in (*st.decorator_list, st.args, None if future else st.returns):
                    scan(x, names)
            elif isinstance(st, ast.ClassDef):
                for x in (*st.decorator_list, *st.bases, *st.keywords):
                    scan(x, names)
                local = {n for node in _module_scope(st.body) for n in _bound_names(node)}
                run(st.body, {k: m for k, m in names.items() if k not in local})
            elif isinstance(st, ast.If):
                scan(st.test, names)
                if runs_if and _runs_if(st.test, runs_if):
                    run(st.body, names)
            elif isinstance(st, ast.Try):
                if not any(_catches_import(h, catch) for h in st.handlers):
                    for part in (st.body, st.orelse, st.finalbody):
                        run(part, names)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                if not any(_suppresses_import(i.context_expr, catch) for i in st.items):
                    for i in st.items:
                        scan(i.context_expr, names)
                    run(st.body, names)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                scan(st.iter, names)
            elif isinstance(st, ast.While):
                scan(st.test, names)
            elif isinstance(st, ast.AnnAssign):
                for x in (st.target, st.value, None if future else st.annotation):
                    scan(x, names)
            elif not isinstance(st, (ast.Assert, ast.ImportFrom, ast.Match, ast.TryStar)):
                scan(st, names)

    run(tree.body, {})
    return out


def _module_scope(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a module's (or class body's) own scope: not inside a def, lambda, class or comprehension."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [*node.decorator_list, *(node.bases if isinstance(node, ast.ClassDef) else ())]
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        todo += ast.iter_child_nodes(node)


def _bound_names(node: ast.AST) -> list[str]:
    """The names `node` binds in its scope, but for an `import`'s."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.ImportFrom):
        return [a.asname or a.name for a in node.names]
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


# -- callees: what a module defines --------------------------------------------------------------------------------

@dataclass
class Tree:
    """The callee's files at one commit, and what its modules bind (parsed on demand)."""

    git: Git | Wheel | Sdist | RemoteWheel
    commit: str
    files: set[str]
    top: str = ""  # the callee's top package (`megatron.core`): star imports inside it are resolved in the tree
    root: str = ""  # the directory its top-level packages sit in, in a src layout (peft's `src`)
    dirs: set[str] = field(default_factory=set)
    # the modules a compiled extension (`_C.cpython-311-darwin.so`, `.pyd`) or only a stub (`.pyi`) provides, as
    # paths without the suffix: what they bind is not in the Python files (torch's `from torch._C import *`)
    compiled: set[str] = field(default_factory=set)
    _bound: dict[str, tuple[set[str], bool] | None] = field(default_factory=dict)
    _all: dict[str, set[str]] = field(default_factory=dict)  # a module's literal `__all__`, when it has one

    def __post_init__(self) -> None:
        for f in self.files:
            parts = f.split("/")
            self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
            if f.endswith((".so", ".pyd", ".pyi")):  # pkg/_C.cpython-311-darwin.so, pkg/_C/__init__.pyi: pkg/_C
                stem = parts[:-1] + ([] if parts[-1].startswith("__init__.") else [parts[-1].split(".")[0]])
                self.compiled.add("/".join(stem))

    def _path(self, module: str, inside: bool = True) -> str | None:
        """The module's file, its directory (a namespace package or a compiled module's stubs), or a compiled
        module's stem; with `inside`, also a module inside a compiled one (torch._C._nn: no file names it)."""
        base = (f"{self.root}/" if self.root else "") + module.replace(".", "/")
        for p in (base + ".py", base + "/__init__.py"):
            if p in self.files:
                return p
        return base if base in self.dirs or base in self.compiled or inside and self._compiled(base) else None

    def _compiled(self, path: str) -> bool:
        """`path` (a module's, without a suffix) is a compiled extension's, or a module inside one (torch._C._nn)."""
        parts = path.split("/")
        return bool(self.compiled) and any("/".join(parts[:i]) in self.compiled for i in range(1, len(parts) + 1))

    def exists(self, module: str) -> bool:
        return self._path(module) is not None

    def bound(self, module: str, depth: int = 0) -> tuple[set[str], bool] | None:
        """(names the module binds, whether others are unknown), None when the module does not exist."""
        if module in self._bound:
            return self._bound[module]
        path = self._path(module)
        if path is None:
            res = None
        elif not path.endswith(".py"):
            # a namespace package binds nothing but its submodules; a compiled module's names are not known here
            res = (set(), self._compiled(path))
        else:
            self._bound[module] = (set(), True)  # a star-import cycle: unknown
            res = self._read(module, path, depth)
        self._bound[module] = res
        return res

    def _read(self, module: str, path: str, depth: int) -> tuple[set[str], bool]:
        text = self.git.show(self.commit, path)
        try:
            tree = ast.parse(text or "")
        except (SyntaxError, ValueError):
            return set(), True
        names: set[str] = set()
        unknown = False
        all_: set[str] | bool | None = None
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        lazy = path.endswith("__init__.py") and any(
            isinstance(n, ast.Name) and n.id == "define_import_structure" for n in ast.walk(tree))
        if lazy:
            # transformers' lazy packages serve, at run time, the `__all__` of the files under them
            # (utils/import_utils.py define_import_structure); their TYPE_CHECKING star imports only mirror that
            scanned, unsure = self._all_under(path.rpartition("/")[0])
            names |= scanned
            unknown |= unsure
        for node in _module_level(tree.body, skip_type_checking=lazy):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                unknown |= node.name == "__getattr__"
            elif isinstance(node, ast.Import):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name != "*":
                        names.add(a.asname or a.name)
                        continue
                    src = _absolute(node, package)
                    if src and _under(src, self.top) and not self.exists(src):
                        continue  # a module the tree does not hold binds nothing (a stale TYPE_CHECKING line)
                    got = self.bound(src, depth + 1) if src and depth < 8 else None
                    if got is None:
                        unknown = True
                        continue
                    if src in self._all:  # `import *` binds exactly its literal __all__
                        names |= self._all[src]
                    else:
                        names |= {n for n in got[0] if not n.startswith("_")}
                        unknown |= got[1]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With,
                                   ast.AsyncWith)):
                names |= _targets(node)
            # a lazy module's table of the names it serves: transformers' `_import_structure`; huggingface_hub's
            # `__getattr__, __dir__, __all__ = _attach(__name__, submod_attrs=...)`, whose `__getattr__` serves the
            # names of that table (a literal in the call up to 0.9, `_SUBMOD_ATTRS` from 0.10) and raises on others
            if _mentions(node, "_import_structure") or _mentions(node, "_SUBMOD_ATTRS") or _lazy_attach(node):
                names |= {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                          and c.value.isidentifier()}
            if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in _assign_targets(node)):
                names |= _strings(node.value)
                if isinstance(node.value, (ast.List, ast.Tuple)) and all_ is not False:
                    all_ = (all_ or set()) | _strings(node.value)
                else:
                    all_ = False  # computed: what `import *` binds is not known from the text
        if all_:
            self._all[module] = all_
        return names, unknown

    def _all_under(self, directory: str) -> tuple[set[str], bool]:
        """The union of the literal `__all__` of every file under `directory`; True when one is computed."""
        names: set[str] = set()
        unsure = False
        for f in sorted(self.files):
            if not f.startswith(directory + "/") or not f.endswith(".py"):
                continue
            text = self.git.show(self.commit, f) or ""
            if "__all__" not in text:
                continue
            try:
                body = ast.parse(text).body
            except (SyntaxError, ValueError):
                unsure = True
                continue
            for node in body:
                if isinstance(node, ast.Assign | ast.AugAssign) and any(
                        isinstance(t, ast.Name) and t.id == "__all__" for t in _assign_targets(node)):
                    if isinstance(node.value, ast.List | ast.Tuple):
                        names |= _strings(node.value)
                    else:
                        unsure = True
        return names, unsure

    def defines(self, module: str, name: str) -> str:
        """'has', 'missing', 'no_module' (missing: the module itself is not there) or 'unknown' for `from module
        import name` (`name` "": `import module`); for an attribute path (`.compiler.disable`: `attribute_reads`),
        whether reading it from the module raises: each step a submodule continues from it, a step the module binds
        otherwise (a function, a class) leaves the rest unknown."""
        if name.startswith("."):
            *steps, last = name[1:].split(".")
            for step in steps:
                said = self.defines(module, step)
                if said != "has":
                    return said
                if self._path(f"{module}.{step}") is None:
                    return "unknown"  # an attribute of what the module binds (a class, a re-exported object)
                module = f"{module}.{step}"
            return self.defines(module, last)
        got = self.bound(module)
        if got is None:
            return "no_module"
        if not name or name in got[0] or self._path(f"{module}.{name}", inside=False) is not None:
            return "has"
        return "unknown" if got[1] else "missing"


def _mentions(node: ast.stmt, name: str) -> bool:
    """An assignment to, or a call on, `name` (`x = {...}`, `x["k"] = [...]`, `x["k"].extend([...])`)."""
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        return any(isinstance(n, ast.Name) and n.id == name for t in _assign_targets(node) for n in ast.walk(t))
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value.func))
    return False


def _lazy_attach(node: ast.stmt) -> bool:
    """`__getattr__ = attach(...)` (lazy_loader's pattern): the call's string literals name what it serves."""
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and any(
        isinstance(n, ast.Name) and n.id == "__getattr__" for t in node.targets for n in ast.walk(t))


def _module_level(body: Iterable[ast.stmt], skip_type_checking: bool = False) -> Iterator[ast.stmt]:
    """Every statement that runs in the module body, also under if / try / with / for (conditional bindings count);
    with `skip_type_checking`, not the body of `if TYPE_CHECKING:`."""
    for st in body:
        yield st
        if isinstance(st, ast.If):
            tc = isinstance(st.test, ast.Name) and st.test.id == "TYPE_CHECKING" or isinstance(
                st.test, ast.Attribute) and st.test.attr == "TYPE_CHECKING"
            if not (tc and skip_type_checking):
                yield from _module_level(st.body)
            yield from _module_level(st.orelse)
        elif isinstance(st, ast.Try):
            yield from _module_level(st.body)
            yield from _module_level(st.orelse)
            yield from _module_level(st.finalbody)
            for h in st.handlers:
                yield from _module_level(h.body)
        elif isinstance(st, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            yield from _module_level(st.body)


def _assign_targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _targets(node: ast.stmt) -> set[str]:
    return {n.id for t in _assign_targets(node) for n in ast.walk(t) if isinstance(n, ast.Name)}


def _strings(value: ast.expr | None) -> set[str]:
    if isinstance(value, (ast.List, ast.Tuple)):
        return {e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if node.level == 0:
        return node.module
    parts = package.split(".")
    if node.level - 1 >= len(parts):
        return None
    base = ".".join(parts[:len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base



_LAZY_MAP = "_import_structure"


def lazy_structure(source: str) -> dict[str, list[str]]:
    """A lazy package's map of the names it serves (`_import_structure`, transformers' `_LazyModule` pattern, which
    trl copies): submodule (relative, dotted) -> names, in the file's order. `from pkg import Name` imports
    `pkg.<submodule>` when first asked for Name. Only what the module body sets whenever it runs: the dict literal
    and its unconditional `[key] = [...]`, `[key].extend([...])` / `.append("...")`, `.update({...})`; not what is
    added under an `if` or a `try` (the names served only when an optional package is installed: trl's diffusers
    trainers). {} for a module that has no such map, or does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, list[str]] = {}

    def named(e: ast.expr) -> bool:
        return isinstance(e, ast.Name) and e.id == _LAZY_MAP

    def key(e: ast.expr) -> str | None:
        if isinstance(e, ast.Subscript) and named(e.value) and isinstance(e.slice, ast.Constant) and isinstance(
                e.slice.value, str):
            return e.slice.value
        return None

    def table(d: ast.expr) -> dict[str, list[str]]:
        if not isinstance(d, ast.Dict):
            return {}
        return {k.value: _string_list(v) for k, v in zip(d.keys, d.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}

    for st in tree.body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if any(named(t) for t in targets):
                out = table(st.value)
            for k in filter(None, map(key, targets)):
                out[k] = _string_list(st.value)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute):
            f, args = st.value.func, st.value.args
            k = key(f.value)
            if k is not None and f.attr == "extend" and args:
                out.setdefault(k, []).extend(_string_list(args[0]))
            elif k is not None and f.attr == "append" and args and isinstance(args[0], ast.Constant) and isinstance(
                    args[0].value, str):
                out.setdefault(k, []).append(args[0].value)
            elif named(f.value) and f.attr == "update" and args:
                out.update(table(args[0]))
    return out


def _string_list(value: ast.expr | None) -> list[str]:
    if isinstance(value, (ast.List, ast.Tuple)):
        return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


# -- the sources read ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Release:
    version: str  # a PEP 440 version, or for a commit-keyed caller (MindSpeed) the version its setup.py states
    ref: str
    commit: str
    # a commit no release tag names, which a source build installs: a branch head declaring a release's version
    # (mbridge main), or a commit a stack pins (verl main); matched by its commit, never a release's version
    source_build: bool = False


@dataclass(frozen=True)
class Project:
    """A package read at some releases: `package_dir` holds its importable files; `url` is its GitHub page."""

    name: str
    mirror: str
    package_dir: str
    url: str
    entries: tuple[str, ...] = ()  # the modules a user imports; what they import at module level must succeed
    key: str = "version"  # how a snapshot's release is matched: "version", or "commit" (installed from git)
    # a caller's further entry modules for one callee: what a job that uses that callee loads (verl's vLLM rollout)
    callee_entries: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a project read from PyPI files instead of a mirror: "wheel" (--wheels) or "sdist" (--sdists); a caller so marked
    # is read at every release whose file is given (vLLM, accelerate); "pypi": a callee read through byte ranges of
    # the smallest wheel of each final release from `since` on that PyPI lists (--pypi-cache: torch)
    archive: str = ""
    since: str = ""
    # a callee whose modules another package extends at run time (torch_npu registers torch.npu and patches torch's
    # modules): a name no release read defines is that package's, unknown, never missing
    extended: bool = False
    # False: a caller's `import <callee>` is not recorded (torch: the first line of most files, and always there)
    top_import: bool = True
    # (callee, module, file, pattern): a further entry for that callee at a release whose `file` matches `pattern`
    # (its default configuration loads the module: verl's async rollout server once `mode: async` is the default)
    default_entries: tuple[tuple[str, str, str, str], ...] = ()

    # the entry modules a release's own files name (vllm-ascend's plugin entry points): git, commit -> modules
    entries_from: Callable[[Git | Wheel | Sdist, str], tuple[str, ...]] | None = None
    # a caller read for these callees only (empty: every callee)
    callees: tuple[str, ...] = ()
    # the modules beyond its entries that a job loads, when the table records every top-level package the caller
    # imports at load (`loads`, from `base_entries` and these): None, not recorded. For verl, whose run-set extra's
    # additions are judged by it (doctor/checks/declared.py)
    loads: tuple[str, ...] | None = None
    # a command the caller installs (vLLM's "vllm serve") and the entry modules its console script loads at a
    # release (its module, what its function imports): read as a further entry of every callee, and the names only
    # it imports recorded apart (`command`), so that a finding says that command loads them
    # (callee module, function): an `if function():` that holds whenever that callee is installed (trl's
    # `is_peft_available`: importlib.util.find_spec("peft") is not None), so the callee imports under it run whenever
    # a snapshot has the callee and count
    installed_if: tuple[tuple[str, str], ...] = ()
    # True: also the attributes of a callee's modules its module bodies read (`attribute_reads`: transformers'
    # `_torch_pytree.register_pytree_node(...)`, `@torch.compiler.disable`), which run at load like an import
    attributes: bool = False
    command: str = ""
    command_from: Callable[[Git | Wheel | Sdist, str], tuple[str, ...]] | None = None
    # True: also what importing each name its entry packages serve lazily runs (`lazy_structure`: trl's
    # `_import_structure`; `from trl import DPOTrainer` imports trl.trainer.dpo_trainer), the names only those
    # imports need recorded apart (`lazy`: the package itself loads without them)
    lazy: bool = False

    def base_entries(self, git: Git | Wheel | Sdist | None = None, commit: str = "") -> tuple[str, ...]:
        """The entry modules at a release: `entries`, and those its files name (`entries_from`)."""
        named = self.entries_from(git, commit) if self.entries_from is not None and git is not None else ()
        return self.entries + tuple(m for m in named if m not in self.entries)

    def entries_for(self, callee: str, git: Git | Wheel | Sdist | None = None, commit: str = "") -> tuple[str, ...]:
        more = next((e for c, e in self.callee_entries if c == callee), ())
        by_default = tuple(m for c, m, path, pattern in self.default_entries if c == callee and git is not None
                           and re.search(pattern, git.show(commit, path) or ""))
        return self.base_entries(git, commit) + more + by_default


CALLEES = (Project("megatron-core", "NVIDIA+Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM"),
           # read from its PyPI wheels (--wheels): the repository is too large to mirror here
           Project("transformers", "", "transformers", "https://github.com/huggingface/transformers",
                   archive="wheel"),
           # read from its PyPI sdists (--sdists): too large to mirror, its wheels ~400 MB; on Ascend vLLM is built
           # from source at the release vllm-ascend pairs with, so its Python files are the sdist's
           Project("vllm", "", "vllm", "https://github.com/vllm-project/vllm", archive="sdist"),
           # read from their PyPI wheels (--wheels; torchdata's are per platform: its cp311 manylinux x86_64 ones):
           # verl imports both at module level and declares them without a lower bound (accelerate 0.26.1 lacks
           # accelerate.utils.memory.clear_device_cache, torchdata 0.7.1 torchdata.stateful_dataloader)
           Project("accelerate", "", "accelerate", "https://github.com/huggingface/accelerate", archive="wheel"),
           Project("torchdata", "", "torchdata", "https://github.com/pytorch/data", archive="wheel"),
           # read from its PyPI wheels (--wheels, every final release): accelerate, peft and trl import it at load
           # (accelerate 0.32.0 on: `from huggingface_hub import split_torch_state_dict_into_shards`, which 0.21.0
           # added, while 0.32.x declare huggingface-hub without a bound; peft 0.13.x: `from huggingface_hub.errors
           # import HFValidationError`, 0.23.0 on, while they declare huggingface_hub>=0.17.0); its package is lazy
           # (`_attach`)
           Project("huggingface-hub", "", "huggingface_hub", "https://github.com/huggingface/huggingface_hub",
                   archive="wheel"),
           # read from its PyPI wheels (--wheels, every final release; per platform from 0.2.0: its cp311 manylinux
           # x86_64 ones, whose Python files are those of every platform): verl's protocol and trainer import
           # TensorDict, tensordict.tensorclass.NonTensorData / NonTensorStack and tensordict.base at load
           Project("tensordict", "", "tensordict", "https://github.com/pytorch/tensordict", archive="wheel"),
           # read at its release tags, the mirror and releases it is read at as a caller (the 0.21.x its mirror has no
           # tag for are not read as a callee): verl's FSDP workers import LoraConfig, TaskType and get_peft_model
           # from it at module level
           Project("peft", "huggingface+peft", "src/peft", "https://github.com/huggingface/peft"),
           # read through byte ranges of PyPI's wheels (--pypi-cache; each release's smallest wheel: its Python files
           # are those of every platform), every final release from 2.0.0: verl, MindSpeed, vllm-ascend import
           # torch.distributed's device mesh, DTensor and FSDP2 at module level, which older releases lack (torch
           # 2.2.0 has no torch.distributed.tensor.DTensor, 2.3 no torch.distributed._composable.fsdp). Its compiled
           # torch._C (`from torch._C import *`) makes the names it may bind unknown
           Project("torch", "", "torch", "https://github.com/pytorch/pytorch", archive="pypi", since="2.0.0",
                   extended=True, top_import=False))
# vLLM loads vllm-ascend through the entry points its setup.py declares (read at each tag, e.g.
# https://github.com/vllm-project/vllm-ascend/blob/v0.9.1/setup.py#L363-L367): `vllm.platform_plugins` (`ascend =
# vllm_ascend:register`, which returns the platform class's qualified name, "vllm_ascend.platform.NPUPlatform", that
# vLLM imports) and `vllm.general_plugins` (`vllm_ascend:register_model`, ... from v0.7.3: vLLM calls each in every
# process). The platform's check_and_update_config names the worker vLLM then imports (`parallel_config.worker_cls =
# "vllm_ascend.worker.worker_v1.NPUWorker"`, vllm_ascend/platform.py at each tag).
_PLUGIN_GROUPS = ("vllm.platform_plugins", "vllm.general_plugins")


def vllm_ascend_entries(git: Git | Wheel, commit: str) -> tuple[str, ...]:
    """vllm-ascend's entry modules at a release, named by its own files: the modules of its plugin entry points
    (setup.py), the modules those functions import unconditionally, the platform module `register` returns, and the
    worker module the platform names for a default configuration (`_default_worker`)."""
    out: list[str] = []
    for module, func in _plugin_entry_points(git.show(commit, "setup.py") or ""):
        out.append(module)
        body = _function(git, commit, module, func)
        if body is None:
            continue
        for st in _unconditional(body):
            src = _absolute(st, module) if isinstance(st, ast.ImportFrom) else None
            if isinstance(st, ast.Import):
                out += [a.name for a in st.names if _under(a.name, "vllm_ascend")]
            elif src and _under(src, "vllm_ascend"):
                out += [src] + [f"{src}.{a.name}" for a in st.names if a.name != "*"]  # a submodule, if one
        for st in body:
            if isinstance(st, ast.Return) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                platform = st.value.value.rpartition(".")[0]  # "vllm_ascend.platform.NPUPlatform"
                if _under(platform, "vllm_ascend"):
                    out.append(platform)
                    worker = _default_worker(git.show(commit, platform.replace(".", "/") + ".py") or "")
                    if worker:
                        out.append(worker)
    return tuple(dict.fromkeys(out))


def _plugin_entry_points(setup_py: str, groups: tuple[str, ...] = _PLUGIN_GROUPS, named: str = ""
                         ) -> list[tuple[str, str]]:
    """(module, function) of each `vllm.platform_plugins` / `vllm.general_plugins` entry point (of `groups`; with
    `named`, only the one of that name) in a setup.py's literal `entry_points={...}`."""
    try:
        tree = ast.parse(setup_py)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.keyword) or node.arg != "entry_points" or not isinstance(node.value, ast.Dict):
            continue
        for k, v in zip(node.value.keys, node.value.values, strict=True):
            if isinstance(k, ast.Constant) and k.value in groups and isinstance(v, (ast.List, ast.Tuple)):
                for spec in sorted(_strings(v)):
                    if named and spec.partition("=")[0].strip() != named:
                        continue
                    module, _, func = spec.partition("=")[2].strip().partition(":")
                    if module and func:
                        out.append((module.strip(), func.strip()))
    return out


def _function(git: Git | Wheel | Sdist, commit: str, module: str, func: str) -> list[ast.stmt] | None:
    """The body of the module-level function `func` of `module` (a package's __init__.py or a module file)."""
    base = module.replace(".", "/")
    for path in (base + "/__init__.py", base + ".py"):
        text = git.show(commit, path)
        if text is None:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        return next((st.body for st in tree.body if isinstance(st, ast.FunctionDef) and st.name == func), None)
    return None


def _default_worker(platform_py: str) -> str | None:
    """The module of the worker a platform names when `parallel_config.worker_cls == "auto"` under a default
    configuration: every other branch of its if/elif chain is an opt-in (speculative decoding, multi-step
    scheduling, torchair or Xlite graph mode, a 310P chip), so the final `else` is taken; except on `VLLM_USE_V1`,
    where vLLM keeps V0 unless the platform's `supports_v1` says otherwise (vLLM 0.8 falls back to V0 on a platform
    without it; vllm-ascend defines it from v0.8.4rc1), so the V1 branch is the default only where the platform
    defines `supports_v1`."""
    try:
        tree = ast.parse(platform_py)
    except (SyntaxError, ValueError):
        return None
    v1 = any(isinstance(n, ast.FunctionDef) and n.name == "supports_v1" for n in ast.walk(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _names(node.test, "worker_cls") and any(
                isinstance(c, ast.Constant) and c.value == "auto" for c in ast.walk(node.test)):
            got = _worker_in(node.body, v1)
            if got:
                return got.rpartition(".")[0]
    return None


def _worker_in(body: list[ast.stmt], v1: bool) -> str | None:
    got: str | None = None
    for st in body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "worker_cls"
                                              for t in st.targets):
            if isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                got = st.value.value
        elif isinstance(st, ast.If):
            branch = st.body if v1 and _names(st.test, "VLLM_USE_V1") else st.orelse
            got = _worker_in(branch, v1) or got
    return got if got and _under(got, "vllm_ascend") else None


def _names(expr: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == name or isinstance(n, ast.Name) and n.id == name
               for n in ast.walk(expr))


def vllm_cli_entries(git: Git | Wheel | Sdist, commit: str) -> tuple[str, ...]:
    """What `vllm serve` loads at a release: the module of the `vllm` console script (pyproject.toml's
    [project.scripts], from 0.7.3 `vllm.entrypoints.cli.main:main`; before, setup.py's console_scripts,
    `vllm.scripts:main`) and the modules its function imports unconditionally (from 0.10 main imports every
    subcommand's module in its body, vllm.entrypoints.cli.serve among them, which imports the OpenAI API server at
    module level). () when the release names no such script."""
    import tomllib

    try:
        scripts = tomllib.loads(git.show(commit, "pyproject.toml") or "").get("project", {}).get("scripts", {})
    except tomllib.TOMLDecodeError:
        scripts = {}
    spec = scripts.get("vllm") if isinstance(scripts, dict) else None
    found = ([tuple(x.strip() for x in spec.partition(":")[::2])] if isinstance(spec, str) and ":" in spec else
             _plugin_entry_points(git.show(commit, "setup.py") or "", ("console_scripts",), "vllm"))
    out: list[str] = []
    for module, func in found:
        out.append(module)
        for st in _unconditional(_function(git, commit, module, func) or []):
            if isinstance(st, ast.Import):
                out += [a.name for a in st.names if _under(a.name, "vllm")]
            elif st.level == 0 and st.module and _under(st.module, "vllm"):
                out.append(st.module)
    return tuple(dict.fromkeys(out))


# What verl's trainer (`python -m verl.trainer.main_ppo`) imports in its task runner's run: at v0.9.1 the default V1
# trainer verl.trainer.ppo.v1 (`trainer.use_v1: true`, trainer/config/ppo_trainer.yaml), or with use_v1=False
# main_ppo_v0's verl.trainer.ppo.ray_trainer; earlier releases the latter only
_VERL_TRAINER_RUN = ("verl.trainer.ppo.ray_trainer", "verl.trainer.ppo.v1")

CALLERS = (
    # `from mbridge import AutoBridge` (verl's megatron backend) runs mbridge/__init__.py.
    Project("mbridge", "ISEEKYAN+mbridge", "mbridge", "https://github.com/ISEEKYAN/mbridge", ("mbridge",), attributes=True),
    # verl's megatron backend: the legacy workers, and the engine its newer trainers build.
    # verl's trainer (`python -m verl.trainer.main_ppo`) and the workers it builds: FSDP and Megatron, legacy and engine.
    Project("verl", "verl-project+verl", "verl", "https://github.com/verl-project/verl",
            ("verl.trainer.main_ppo", "verl.workers.fsdp_workers", "verl.workers.engine.fsdp",
             "verl.workers.megatron_workers", "verl.workers.engine.megatron"),
            # a job with rollout=vllm also loads the vLLM rollout: its package (which imports the rollout class at
            # module level) and the FSDP weight-sync manager of older releases; the server replica only where the
            # release's default rollout mode is async (v0.7.0 on: verl/trainer/config/rollout/rollout.yaml), since
            # before that it loads only with rollout.mode=async
            callee_entries=(("vllm", ("verl.workers.rollout.vllm_rollout",
                                      "verl.workers.sharding_manager.fsdp_vllm")),
                            # what the trainer's task runner imports in its run, whose data loader is torchdata's
                            # StatefulDataLoader; read for torchdata only so far (the other callees' rows would
                            # change with it: a re-read of Megatron-Core, which is not mirrored here)
                            ("torchdata", _VERL_TRAINER_RUN),
                            # and the TensorDict batches that run builds (verl.utils.tensordict_utils)
                            ("tensordict", _VERL_TRAINER_RUN)),
            default_entries=(("vllm", "verl.workers.rollout.vllm_rollout.vllm_async_server",
                              "verl/trainer/config/rollout/rollout.yaml", r"(?m)^mode:\s*async\b"),),
            loads=_VERL_TRAINER_RUN, attributes=True),
    # `import mindspeed.megatron_adaptor` is how MindSpeed is turned on (verl's NPU patches, MindSpeed-LLM).
    Project("mindspeed", "Ascend+MindSpeed", "mindspeed", "https://github.com/Ascend/MindSpeed",
            ("mindspeed.megatron_adaptor",), key="commit", attributes=True),
    # vLLM imports vllm_ascend through its plugin entry points, the platform module and the worker it names
    # (vllm_ascend_entries: read from setup.py and vllm_ascend/platform.py at each tag)
    Project("vllm-ascend", "vllm-project+vllm-ascend", "vllm_ascend", "https://github.com/vllm-project/vllm-ascend",
            ("vllm_ascend",), entries_from=vllm_ascend_entries, callees=("vllm", "torch"),
            attributes=True),
    # `import trl` / `import peft` (what `from trl import X` and `from peft import X` run first): their package
    # __init__ and what it imports eagerly; trl's __init__ is a lazy module from v0.8.x (its _import_structure
    # loads a submodule only when a name is asked for: `lazy` follows each name it serves, `from trl import
    # DPOTrainer` -> trl.trainer.dpo_trainer, whose `from transformers.models.auto.modeling_auto import
    # MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES` transformers 5 lacks; recorded apart, since `import trl` loads without
    # them), peft's imports eagerly; both also of accelerate (peft 0.15.0 on: `from accelerate.utils.memory import
    # clear_device_cache` in src/peft/utils/loftq_utils.py, which `import peft` runs and accelerate 0.26.1 lacks)
    Project("trl", "huggingface+trl", "trl", "https://github.com/huggingface/trl", ("trl",),
            callees=("transformers", "accelerate", "huggingface-hub", "peft", "torch"),
            installed_if=(("peft", "is_peft_available"),), attributes=True, lazy=True),
    Project("peft", "huggingface+peft", "src/peft", "https://github.com/huggingface/peft", ("peft",),
            callees=("transformers", "accelerate", "huggingface-hub", "torch"), attributes=True),
    # callers read from PyPI files only (`archive`: no mirror), each release from its sdist or wheel.
    # vLLM from its sdists (--sdists, the same files read as a callee): `from vllm import LLM, SamplingParams` (verl's
    # rollout, a user's offline job) runs vllm/__init__.py and, where that is lazy (MODULE_ATTRS, from 0.10),
    # vllm/entrypoints/llm.py; `vllm serve` loads more: its console script's modules, the OpenAI API server and the
    # V1 engine core it starts (vllm_cli_entries), recorded as `command`. Read for transformers and huggingface_hub:
    # vLLM declares them with a lower bound alone, so a newer one that dropped a name it imports installs beside it
    Project("vllm", "", "vllm", "https://github.com/vllm-project/vllm", ("vllm", "vllm.entrypoints.llm"),
            archive="sdist", callees=("transformers", "huggingface-hub", "torch"), command="vllm serve",
            command_from=vllm_cli_entries, attributes=True),
    # accelerate from its wheels (--wheels, the same files read as a callee): `import accelerate` (what `from
    # accelerate import Accelerator` runs; peft, trl and transformers' Trainer import it). Read for huggingface_hub
    Project("accelerate", "", "src/accelerate", "https://github.com/huggingface/accelerate", ("accelerate",),
            archive="wheel", callees=("huggingface-hub", "torch"), attributes=True),
    # transformers through byte ranges of its PyPI wheels (--pypi-cache: every final release from 4.30.0, the
    # oldest its callee rows read; ~3,000 files a release, of which only the modules its entries reach are read), for
    # torch: `import transformers` (what every user of it runs first: its lazy __init__ imports its utils at module
    # level), `from transformers import AutoModelForCausalLM, AutoTokenizer` (the auto classes' modules, which verl,
    # trl and a user's script import) and modeling_utils, which every model class imports when `from_pretrained`
    # loads it. Its torch imports sit under `if is_torch_available():`, true when torch is installed and, from 4.52,
    # at or above transformers' own minimum (profiles/code-needs.toml: below it transformers turns PyTorch off and
    # that code does not run; the check leaves such a pair to package-code-needs-unmet). Its module bodies also read
    # torch's attributes (`_torch_pytree.register_pytree_node(...)`, `@torch.compiler.disable`): `attributes`
    Project("transformers", "", "src/transformers", "https://github.com/huggingface/transformers",
            ("transformers", "transformers.models.auto.modeling_auto", "transformers.models.auto.tokenization_auto",
             "transformers.modeling_utils"),
            archive="pypi", since="4.30.0", callees=("torch",), installed_if=(("torch", "is_torch_available"),),
            attributes=True),
)
# The top-level module each callee installs, which its callers import from.
CALLEE_MODULES = {"megatron-core": "megatron.core", "transformers": "transformers", "vllm": "vllm",
                  "accelerate": "accelerate", "torchdata": "torchdata", "huggingface-hub": "huggingface_hub",
                  "tensordict": "tensordict", "peft": "peft", "torch": "torch"}


def tag_releases(git: Git, pattern: str, published: set[str] | None = None) -> list[Release]:
    """Tags whose name matches `pattern` (its group 1 is the version); with `published`, only those releases. One
    tag per version (a `v`-prefixed one first)."""
    seen: dict[Version, Release] = {}
    for tag in sorted(git.tags(), key=lambda t: (not t.startswith("v"), t)):
        m = re.fullmatch(pattern, tag)
        if not m:
            continue
        try:
            v = Version(m.group(1))
        except InvalidVersion:
            continue
        if published is not None and str(v) not in published or v in seen:
            continue
        seen[v] = Release(str(v), tag, git.commit(tag))
    return [seen[v] for v in sorted(seen)]


def branch_head(git: Git, branch: str, released: list[Release]) -> Release | None:
    """The head of `branch` as a source build installs it, when its pyproject.toml declares the version of a release
    read (`pip install git+...` then reports that release's version over different files); None otherwise."""
    try:
        commit = git.commit(branch)
    except GitError:
        return None
    m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', git.show(commit, "pyproject.toml") or "")
    if not m or commit in {r.commit for r in released}:
        return None
    try:
        v = str(Version(m.group(1)))
    except InvalidVersion:
        return None
    return Release(v, branch, commit, source_build=True) if v in {r.version for r in released} else None


def git_pins(root: str, project: str, git: Git) -> list[Release]:
    """The commits the verified stacks pin for `project` (profiles/requirements-git.toml), read where the mirror
    holds them."""
    rows = read_toml(os.path.join(root, "profiles", "requirements-git.toml"), "git requirements table").get(
        "release", [])
    out = []
    for r in rows:
        if r.get("project") == project:
            try:
                commit = git.commit(r["commit"])
            except GitError:
                continue
            out.append(Release(str(r["version"]), str(r["ref"]), commit))
    return out


def _published(root: str, project: str) -> set[str]:
    with open(os.path.join(root, "profiles", "requirements", f"{project}.json")) as f:
        return {str(Version(v)) for v in json.load(f)["releases"]}


def default_releases(root: str, gits: dict[str, Git]) -> dict[str, list[Release]]:
    """The releases read by default: megatron-core at its `core_v*` tags that are PyPI releases plus the commits the
    stacks pin; mbridge and verl at their release tags; MindSpeed at the commits the stacks pin. A project whose
    mirror is not in `gits` (kept from the previous table, --keep) is not read."""
    out: dict[str, list[Release]] = {}
    if "megatron-core" in gits:
        mc = tag_releases(gits["megatron-core"], r"core_v(\d+\.\d+\.\d+(?:rc\d+)?)",
                          _published(root, "megatron-core"))
        pinned = [r for r in git_pins(root, "megatron-core", gits["megatron-core"])
                  if r.commit not in {x.commit for x in mc} and r.version not in {x.version for x in mc}]
        out["megatron-core"] = mc + pinned
    if "mbridge" in gits:
        mbridge = tag_releases(gits["mbridge"], r"v?(\d+(?:\.\d+)+(?:rc\d+)?)")
        head = branch_head(gits["mbridge"], "main", mbridge)  # main still says 0.15.1, 165 commits after v0.15.1
        out["mbridge"] = mbridge + ([head] if head else [])
    if "verl" in gits:
        verl = tag_releases(gits["verl"], r"v(\d+\.\d+\.\d+(?:\.post\d+)?)")
        # a stack's source build of verl at a commit no release tag names (main 1dda039b9, whose verl/version/version
        # says 0.10.0.dev: the .devN version no release has): matched by commit only
        out["verl"] = verl + [replace(r, version=str(Version(r.version)), source_build=True)
                              for r in git_pins(root, "verl", gits["verl"])
                              if r.commit not in {x.commit for x in verl}]
    if "mindspeed" in gits:
        out["mindspeed"] = git_pins(root, "mindspeed", gits["mindspeed"])
    if "vllm-ascend" in gits:
        # setup.py takes its version from the tag (setuptools_scm get_version): a build at a tag reports the tag's
        # version (v0.7.3.post1 -> 0.7.3.post1, v0.9.1rc1 -> 0.9.1rc1); one from any other commit (a branch such as
        # v0.9.1-dev, main) a .devN version no release has, so branch heads are not read as releases
        out["vllm-ascend"] = tag_releases(gits["vllm-ascend"], r"v(\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?)")
    for name in ("trl", "peft"):  # their release tags that are PyPI releases
        if name in gits:
            out[name] = tag_releases(gits[name], r"v(\d+\.\d+\.\d+(?:\.?rc\d+)?)", _published(root, name))
    return out


# The wheels read: pure Python ones, else CPython 3.11 manylinux x86_64 ones (torchdata's are built per platform; their
# Python files are the same on every one): `<name>-<version>-<tags>.whl`, one per version, pure first.
_WHEEL_TAGS = re.compile(r"-(?:(py3|py2\.py3)-none-any|(cp311-cp311-manylinux[\w.]*_x86_64))\.whl")


def wheel_releases(directory: str, project: str) -> list[tuple[str, Wheel]]:
    """The wheels of `project` in `directory` (`_WHEEL_TAGS`), one per version, oldest version first."""
    found: dict[Version, list[tuple[bool, str]]] = {}
    prefix = project.replace("-", "_") + "-"
    for f in os.listdir(directory):
        m = _WHEEL_TAGS.search(f)
        if not f.startswith(prefix) or not m or m.end() != len(f) or "-" in f[len(prefix):m.start()]:
            continue
        try:
            v = Version(f[len(prefix):m.start()])
        except InvalidVersion:
            continue
        found.setdefault(v, []).append((not m.group(1), os.path.join(directory, f)))  # a pure wheel first
    return [(str(v), Wheel(min(found[v])[1])) for v in sorted(found)]


def sdist_releases(directory: str, project: Project) -> list[tuple[str, Sdist]]:
    """The `<project>-<version>.tar.gz` files in `directory` (PyPI sdists), oldest version first."""
    out = []
    for prefix in {project.name + "-", project.name.replace("-", "_") + "-"}:
        for f in os.listdir(directory):
            if f.startswith(prefix) and f.endswith(".tar.gz"):
                try:
                    v = Version(f[len(prefix):-len(".tar.gz")])
                except InvalidVersion:
                    continue
                out.append((v, os.path.join(directory, f)))
    return [(str(v), Sdist(p, project.package_dir)) for v, p in sorted(set(out))]


# -- reading -------------------------------------------------------------------------------------------------------

def _module_name(path: str) -> str:
    base = path[:-len("/__init__.py")] if path.endswith("/__init__.py") else path[:-len(".py")]
    return base.replace("/", ".")


_Module = tuple[list[Import], set[str], dict[str, int], str]  # module_imports' answer, and the file it read


class _Lazy:
    """A caller's lazy packages at a release (`lazy_structure` of each package's __init__, read when first asked):
    what `from pkg import Name` imports when pkg serves Name lazily."""

    def __init__(self, source: Callable[[str], str], paths: dict[str, str]) -> None:
        self._source, self._paths, self._maps = source, paths, {}  # type: Callable[[str], str], dict[str, str], dict[str, dict[str, list[str]]]

    def map(self, package: str) -> dict[str, list[str]]:
        if package not in self._maps:
            f = self._paths.get(package, "")
            self._maps[package] = lazy_structure(self._source(f)) if f.endswith("__init__.py") else {}
        return self._maps[package]

    def serve(self, dotted: str, depth: int = 0) -> str | None:
        """The module importing `pkg.Name` (`from pkg import Name`) runs when pkg serves Name lazily: the submodule
        its map names, or, when that is a lazy package serving Name too, the one that names (trl: DPOTrainer ->
        trl.trainer -> trl.trainer.dpo_trainer); None when pkg does not serve it."""
        package, _, name = dotted.rpartition(".")
        sub = next((f"{package}.{k}" for k, names in self.map(package).items() if k and name in names), None)
        if sub is None or sub not in self._paths or depth > 8:
            return None
        return self.serve(f"{sub}.{name}", depth + 1) or sub

    def served(self, entries: Iterable[str]) -> dict[str, list[str]]:
        """The modules the entry packages' names are served from -> those names, in their maps' order."""
        out: dict[str, list[str]] = {}
        for e in entries:
            for names in self.map(e).values():
                for n in names:
                    m = self.serve(f"{e}.{n}")
                    if m is not None and n not in out.setdefault(m, []):
                        out[m].append(n)
        return out


class _Modules(Mapping[str, _Module]):
    """Every module of the caller at a release -> what `module_imports` finds in its file, read when first looked
    up: `_reached` looks up only the modules its entries import (transformers' ~3,000 files, of a wheel read through
    byte ranges, are mostly models no entry imports). For a caller read `lazy`, its lazy packages (`_Lazy`)."""

    def __init__(self, read: Callable[[str], _Module], paths: dict[str, str], lazy: _Lazy | None = None) -> None:
        self._read, self._paths, self._done = read, paths, {}  # type: Callable[[str], _Module], dict[str, str], dict[str, _Module]
        self.lazy = lazy

    def __getitem__(self, name: str) -> _Module:
        if name not in self._done:
            self._done[name] = self._read(self._paths[name])
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _caller_modules(git: Git | Wheel | Sdist, project: Project, rel: Release, prefix: str) -> _Modules:
    """Every module of the caller at the release: what `module_imports` finds in its file (read on first use)."""
    top = project.package_dir.split("/")[-1]
    root = project.package_dir.rpartition("/")[0]
    # a wheel installs the package at its top (peft/, where the repository has src/peft/): its files are named
    # as at the tag, so the file:line cited is the repository's
    in_wheel = isinstance(git, (Wheel, RemoteWheel))
    runs_if = dict(project.installed_if).get(prefix, "")
    paths = {_module_name(f if in_wheel or not root else f[len(root) + 1:]): f
             for f in git.files(rel.commit, top if in_wheel else project.package_dir) if f.endswith(".py")}

    def read(f: str) -> _Module:
        name = _module_name(f if in_wheel or not root else f[len(root) + 1:])
        shown = f"{root}/{f}" if in_wheel and root else f
        return (*module_imports(git.show(rel.commit, f) or "", shown, prefix, name, top, runs_if,
                                project.attributes and bool(prefix)), shown)

    lazy = _Lazy(lambda f: git.show(rel.commit, f) or "", paths) if project.lazy else None
    return _Modules(read, paths, lazy)


def _reached(modules: Mapping[str, _Module], entries: list[str]) -> list[str]:
    """The caller's modules that importing `entries` runs: module-level imports followed through the caller's own
    package, transitively (a module's parent packages first). A file only a function imports is not followed: its
    imports need not succeed for the caller to load. In a caller read `lazy`, `from pkg import Name` where pkg serves
    Name lazily is followed into the module that serves it (what the import runs)."""
    lazy = modules.lazy if isinstance(modules, _Modules) else None
    seen: set[str] = set()
    todo = [m for e in entries for m in _parents(e)]
    out: list[str] = []
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        if m not in modules:
            served = lazy.serve(m) if lazy is not None and "." in m else None
            if served is not None and served not in seen:
                todo += _parents(served)
            continue
        seen.add(m)
        out.append(m)
        todo += [o for o in modules[m][1] if o not in seen]
    return out


def caller_imports(git: Git | Wheel | Sdist, project: Project, rel: Release, prefix: str,
                   entry_modules: tuple[str, ...] | None = None) -> tuple[list[Import], list[str]]:
    """The imports of `prefix` in the caller's modules that importing its entry modules runs (`_reached`), and the
    entries that exist at the release."""
    modules = _caller_modules(git, project, rel, prefix)
    entries = [e for e in (project.entries if entry_modules is None else entry_modules) if e in modules]
    out = [i for m in _reached(modules, entries) for i in modules[m][0]]
    return sorted(out, key=lambda i: (i.file, i.line, i.module, i.name)), entries


def caller_lazy_imports(git: Git | Wheel | Sdist, project: Project, rel: Release, prefix: str
                        ) -> dict[str, tuple[Import, str]]:
    """For a caller read `lazy`: the imports of `prefix` that importing a name its entry packages serve lazily runs
    (`from trl import DPOTrainer`: trl.trainer.dpo_trainer and what it imports at module level), "module:name" ->
    the first such import and the name it is first reached through ("trl.trainer.dpo_trainer:DPOTrainer", the
    served modules in their maps' order)."""
    modules = _caller_modules(git, project, rel, prefix)
    if modules.lazy is None:
        return {}
    entries = [e for e in project.base_entries(git, rel.commit) if e in modules]
    out: dict[str, tuple[Import, str]] = {}
    for served, names in modules.lazy.served(entries).items():
        found = [i for m in _reached(modules, [served]) for i in modules[m][0]]
        for imp in sorted(found, key=lambda i: (i.file, i.line, i.module, i.name)):
            out.setdefault(_key(imp.module, imp.name), (imp, f"{served}:{names[0]}"))
    return out


def caller_loads(git: Git | Wheel | Sdist, project: Project, rel: Release,
                 entry_modules: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """The top-level packages outside the caller's own and the standard library (`sys.stdlib_module_names`) that
    importing its entry modules imports at module level (`_reached`: not under `if`, `try/except ImportError`, a def
    or a class), each with the first file:line (in file order) that does: what must be installed for those modules
    to load. And the entries that exist."""
    modules = _caller_modules(git, project, rel, "")
    entries = [e for e in entry_modules if e in modules]
    first: dict[str, tuple[str, int]] = {}
    for m in _reached(modules, entries):
        for t, line in modules[m][2].items():
            if t in sys.stdlib_module_names:
                continue
            at = (modules[m][3], line)
            if t not in first or at < first[t]:
                first[t] = at
    return {t: f"{first[t][0]}:{first[t][1]}" for t in sorted(first)}, entries


def _recorded(callee: Project, imp: Import) -> bool:
    """Whether a caller's import of `callee` is recorded: not a bare `import torch` (`top_import` False), on any
    path the caller is read through (its entries, a command's)."""
    return callee.top_import or imp.module != CALLEE_MODULES[callee.name] or bool(imp.name)


def _key(module: str, name: str) -> str:
    return f"{module}:{name}"


def read(gits: dict[str, Git], releases: dict[str, list[Release]], callers: tuple[Project, ...] = CALLERS,
         callees: tuple[Project, ...] = CALLEES, date: str | None = None,
         wheels: dict[str, list[tuple[str, Wheel | Sdist | RemoteWheel]]] | None = None,
         kept: dict[str, Any] | None = None,
         caller_wheels: dict[str, list[tuple[str, Wheel | Sdist | RemoteWheel]]] | None = None,
         read_only: frozenset[str] | None = None) -> dict[str, object]:
    """The table: per caller release what it imports from each callee (with the first file:line), per callee the
    read releases that lack or may lack each of those names. A callee in `wheels` (name -> [(version, wheel or
    sdist)]) is read from those files instead of a git mirror; a caller release in `caller_wheels` whose version no
    tag read has (verl 0.9.1: the mirror lacks its tag) is read from its PyPI wheel, and so is every release of a
    caller read from PyPI files only (`Project.archive`: vLLM's sdists, accelerate's wheels). With `kept` (the previous table), a caller or callee
    that is not read keeps its rows from it; a name a kept callee was not read for is unknown at its releases. With
    `read_only` (caller names, and `kept`), just those callers are read, and the callees they import: the others keep
    their rows."""
    wheels = wheels or {}
    old_callers: dict[str, Any] = (kept or {}).get("callers", {})
    old_callees: dict[str, Any] = (kept or {}).get("callees", {})
    out_callers: dict[str, object] = {}
    needed: dict[str, set[tuple[str, str]]] = {c.name: set() for c in callees}
    for caller in callers:
        tagged_rels = releases.get(caller.name, []) if caller.name in gits and (
            read_only is None or caller.name in read_only) else []
        tagged = {r.version for r in tagged_rels}
        sources: list[tuple[Release, Git | Wheel | Sdist]] = [(r, gits[caller.name]) for r in tagged_rels] + [
            (Release(v, os.path.basename(w.path), ""), w) for v, w in (caller_wheels or {}).get(caller.name, [])
            if v not in tagged and (tagged_rels or caller.archive) and (read_only is None or caller.name in read_only)]
        if not sources:
            if caller.name in old_callers:
                out_callers[caller.name] = old_callers[caller.name]
                for r in old_callers[caller.name]["releases"]:
                    for callee, names in r.get("imports", {}).items():
                        needed.setdefault(callee, set()).update(tuple(k.split(":")) for k in names)
            continue
        if any(isinstance(src, RemoteWheel) for _, src in sources):  # fetch their files a few at a time
            _concurrently(lambda x, c=caller: _prefetch(c, callees, *x), sources, True)
        rels = []
        for rel, src in sources:
            imports: dict[str, dict[str, str]] = {}
            entries: list[str] = []
            more: dict[str, list[str]] = {}
            command: dict[str, Any] = {}
            lazy: dict[str, dict[str, str]] = {}
            for callee in callees:
                if caller.callees and callee.name not in caller.callees:
                    continue
                got: dict[str, str] = {}
                want = caller.entries_for(callee.name, src, rel.commit)
                found, at = caller_imports(src, caller, rel, CALLEE_MODULES[callee.name], want)
                base = caller.base_entries(src, rel.commit)
                entries = [e for e in at if e in base]  # the same for every callee
                if at != entries:
                    more[callee.name] = at
                for imp in (i for i in found if _recorded(callee, i)):
                    got.setdefault(_key(imp.module, imp.name), f"{imp.file}:{imp.line}")
                    needed[callee.name].add((imp.module, imp.name))
                if caller.command_from is not None:  # what the command loads beyond the entries (`vllm serve`)
                    by_command, command_at = caller_imports(src, caller, rel, CALLEE_MODULES[callee.name],
                                                            caller.command_from(src, rel.commit))
                    by_command = [i for i in by_command if _recorded(callee, i)]
                    only = {_key(i.module, i.name) for i in by_command} - got.keys()
                    for imp in by_command:
                        if _key(imp.module, imp.name) in only:
                            got.setdefault(_key(imp.module, imp.name), f"{imp.file}:{imp.line}")
                            needed[callee.name].add((imp.module, imp.name))
                    command = {"name": caller.command, "entries": command_at, "only": {
                        **command.get("only", {}), **({callee.name: sorted(only)} if only else {})}}
                served: dict[str, str] = {}  # what only a lazily served name's modules import -> that name
                for k, (imp, via) in caller_lazy_imports(src, caller, rel, CALLEE_MODULES[callee.name]).items():
                    if k not in got and _recorded(callee, imp):
                        got[k], served[k] = f"{imp.file}:{imp.line}", via
                        needed[callee.name].add((imp.module, imp.name))
                if served:
                    lazy[callee.name] = dict(sorted(served.items()))
                if got:
                    imports[callee.name] = dict(sorted(got.items()))
            loads: dict[str, Any] = {}
            if caller.loads is not None:
                modules, at = caller_loads(src, caller, rel, caller.base_entries(src, rel.commit) + caller.loads)
                loads = {"loads": {"entries": at, "modules": modules}}
            rels.append({"version": rel.version, "ref": rel.ref, "commit": rel.commit,
                         **({"sha256": src.sha256} if isinstance(src, (Wheel, Sdist, RemoteWheel)) else {}),
                         **({"source_build": True, "date": gits[caller.name].run(
                             "log", "-1", "--format=%cs", rel.commit).strip()} if rel.source_build else {}),
                         "entries": entries, **({"callee_entries": more} if more else {}), "imports": imports,
                         **({"command": command} if command else {}), **({"lazy": lazy} if lazy else {}),
                         **loads})
            if isinstance(src, Sdist):
                src.close()  # an sdist's files are held in memory: one release at a time
        out_callers[caller.name] = {"url": caller.url, "package_dir": caller.package_dir, "key": caller.key,
                                    "releases": rels}
    out_callees: dict[str, object] = {}
    for callee in callees:
        if callee.name not in gits and callee.name not in wheels or read_only is not None and not any(
                c.name in read_only and (not c.callees or callee.name in c.callees) for c in callers):
            if callee.name in old_callees:
                old = old_callees[callee.name]
                versions = [r["version"] for r in old["releases"]]
                names_kept = {_key(m, n): old["names"].get(_key(m, n), {"missing": [], "unknown": versions})
                              for m, n in sorted(needed[callee.name])}
                out_callees[callee.name] = {**old, "names": names_kept}
            continue
        rels_read: list[dict[str, str]] = []
        names: dict[str, dict[str, list[str]]] = {
            _key(m, n): {"missing": [], "unknown": []} for m, n in sorted(needed[callee.name])}
        if callee.name in wheels:
            def verdicts(wheel: Wheel | Sdist | RemoteWheel, c: Project = callee) -> list[str]:
                said = _verdicts(needed[c.name], Tree(wheel, "", set(wheel.files("", c.package_dir)),
                                                      CALLEE_MODULES[c.name]))
                if isinstance(wheel, Sdist):
                    wheel.close()  # an sdist's files are held in memory: one release at a time
                return said

            each = _concurrently(verdicts, [w for _, w in wheels[callee.name]],
                                 all(isinstance(w, RemoteWheel) for _, w in wheels[callee.name]))
            for (version, wheel), said in zip(wheels[callee.name], each, strict=True):
                _judge(names, needed[callee.name], version, said)
                rels_read.append({"version": version, "ref": os.path.basename(wheel.path), "sha256": wheel.sha256})
        else:
            git = gits[callee.name]
            top = CALLEE_MODULES[callee.name]
            root = callee.package_dir.removesuffix(top.replace(".", "/")).rstrip("/")  # src/peft: src
            for rel in releases.get(callee.name, []):
                _judge(names, needed[callee.name], rel.version, _verdicts(needed[callee.name], Tree(
                    git, rel.commit, set(git.files(rel.commit, callee.package_dir)), top, root)))
                rels_read.append({"version": rel.version, "ref": rel.ref, "commit": rel.commit})
        if callee.extended:  # a name no release read defines is another package's (torch_npu's torch.npu)
            everywhere = [r["version"] for r in rels_read]
            for n in names.values():
                if len(n["missing"]) + len(n["unknown"]) == len(everywhere):
                    n.update(missing=[], unknown=everywhere)
                    n.pop("no_module", None)
        out_callees[callee.name] = {"url": callee.url, "package_dir": callee.package_dir, "releases": rels_read,
                                    "names": names}
    _prune_lazy(out_callers, out_callees)
    return {"schema": SCHEMA, "read": date or _dt.date.today().isoformat(),
            "how": "tools/refresh_knowledge/import_surface.py: module-level imports of each callee in the caller's "
                   "files (not under if, try/except ImportError, def or class), against the names each callee "
                   "module binds at module level at each release (ast, read from git, PyPI wheels or sdists, never "
                   "imported)",
            "callers": out_callers, "callees": out_callees}


def _prune_lazy(callers: dict[str, Any], callees: dict[str, Any]) -> None:
    """Drop the imports only a lazily served name's modules make (`lazy`) that every callee release read defines:
    such a name can never be judged missing, and a lazy package's served modules import many (trl's trainers: ~130 a
    release, most of them transformers' and torch's stable API). A name a kept callee was not read for is unknown, so
    kept. Then drop the callees' rows no caller release imports any more."""
    def defined(callee: str, key: str) -> bool:
        n = callees.get(callee, {}).get("names", {}).get(key)
        return n is not None and not n["missing"] and not n["unknown"]

    for c in callers.values():
        for r in c["releases"]:
            for callee, served in list(r.get("lazy", {}).items()):
                for key in [k for k in served if defined(callee, k)]:
                    del served[key], r["imports"][callee][key]
                if not served:
                    del r["lazy"][callee]
                if not r["imports"][callee]:
                    del r["imports"][callee]
            if "lazy" in r and not r["lazy"]:
                del r["lazy"]
    used = {(callee, k) for c in callers.values() for r in c["releases"] for callee, names in r["imports"].items()
            for k in names}
    for name, d in callees.items():
        d["names"] = {k: n for k, n in d["names"].items() if (name, k) in used}


def _prefetch(caller: Project, callees: tuple[Project, ...], rel: Release, src: Any) -> list[str]:
    """Read the files a caller release's imports are read from (byte ranges of a PyPI wheel, kept in its cache)."""
    for callee in callees:
        if not caller.callees or callee.name in caller.callees:
            caller_imports(src, caller, rel, CALLEE_MODULES[callee.name], caller.entries_for(callee.name, src,
                                                                                              rel.commit))
    return []


def _verdicts(needed: set[tuple[str, str]], tree: Tree) -> list[str]:
    """`tree.defines` of each needed (module, name), in sorted order."""
    return [tree.defines(m, n) for m, n in sorted(needed)]


def _concurrently(work: Callable[[Any], list[str]], items: list[Any], remote: bool) -> list[list[str]]:
    """`work` on each item, in order; a few at a time when they are read over the network (byte ranges of PyPI's
    wheels: polite, four requests at most in flight)."""
    if not remote:
        return [work(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(work, items))


def _judge(names: dict[str, dict[str, list[str]]], needed: set[tuple[str, str]], version: str,
           verdicts: list[str]) -> None:
    """Add `version` to the names it lacks (`missing`, with `no_module` when the module is not there) or may lack."""
    for (m, n), verdict in zip(sorted(needed), verdicts, strict=True):
        if verdict == "no_module" and not n.startswith("."):  # an attribute read raises AttributeError
            names[_key(m, n)].setdefault("no_module", []).append(version)
        if verdict != "has":
            names[_key(m, n)]["unknown" if verdict == "unknown" else "missing"].append(version)


def _runs(listed: list[str], order: list[str]) -> list[str]:
    """The versions listed, a run of two or more consecutive releases (in version order) written "A..B"."""
    at = sorted(order.index(x) for x in listed)
    out: list[str] = []
    i = 0
    while i < len(at):
        j = i
        while j + 1 < len(at) and at[j + 1] == at[j] + 1:
            j += 1
        out.append(order[at[i]] if i == j else f"{order[at[i]]}..{order[at[j]]}")
        i = j + 1
    return out


def _expand(listed: list[str], order: list[str], releases: list[str]) -> list[str]:
    """`_runs` undone, in the order the releases were read."""
    got: set[str] = set()
    for item in listed:
        a, dots, b = item.partition("..")
        got.update(order[order.index(a):order.index(b if dots else a) + 1])
    return [x for x in releases if x in got]


def _name_order(key: str) -> tuple[str, str]:
    """A callee's names in the order `read` writes them: by (module, name)."""
    module, _, name = key.partition(":")
    return module, name


def _dump(data: object) -> str:
    return json.dumps(data, indent=1) + "\n"


def release_files(caller: str, releases: list[dict[str, Any]]) -> list[str]:
    """Each caller release's file: `<caller>/<version>.json`, with the commit in the name where two releases
    share a version (mbridge's source build of 0.15.1, MindSpeed's pinned commits) or for a source build (verl
    0.10.0.dev0 at the commit a stack pins: another pinned commit of that version leaves its name as it is)."""
    counts: dict[str, int] = {}
    for r in releases:
        counts[r["version"]] = counts.get(r["version"], 0) + 1
    return [f"{caller}/{r['version']}.json" if counts[r["version"]] == 1 and not r.get("source_build") else
            f"{caller}/{r['version']}-{r['commit'][:9]}.json" for r in releases]


def layout(data: dict[str, Any]) -> dict[str, str]:
    """The table's files (path in the directory -> text): index.json (what was read, and which file holds each
    caller release's imports and each callee's names), one file per caller release, one per callee: rows of the
    names the same releases lack (runs of consecutive releases as "A..B"). doctor/knowledge/import_surface.py reads
    the index and then only the files a snapshot's releases need."""
    files: dict[str, str] = {}
    callers: dict[str, Any] = {}
    for name, c in data["callers"].items():
        rows = []
        for f, r in zip(release_files(name, c["releases"]), c["releases"], strict=True):
            # a release read from its wheel (verl 0.9.1) is named by the wheel's sha256, its file's commit ""
            rows.append({"version": r["version"], "ref": r["ref"],
                         **({"sha256": r["sha256"]} if r.get("sha256") else {"commit": r["commit"]}),
                         **({"source_build": True, "date": r["date"]} if r.get("source_build") else {}), "file": f})
            files[f] = _dump({"caller": name, "version": r["version"], "commit": r["commit"],
                              "entries": r.get("entries", []),
                              **({"callee_entries": r["callee_entries"]} if r.get("callee_entries") else {}),
                              "imports": r.get("imports", {}), **({"command": r["command"]} if "command" in r else {}),
                              **({"lazy": r["lazy"]} if "lazy" in r else {}),
                              **({"loads": r["loads"]} if "loads" in r else {})})
        callers[name] = {"url": c["url"], **({"package_dir": c["package_dir"]} if "package_dir" in c else {}),
                         "key": c["key"], "releases": rows}
    callees: dict[str, Any] = {}
    for name, c in data["callees"].items():
        f = f"{name}.json"
        order = sorted((r["version"] for r in c["releases"]), key=Version)
        groups: dict[str, list[str]] = {}  # a row's releases (as JSON) -> the names it holds, (module, name) order
        for k in sorted(c["names"], key=_name_order):
            n = c["names"][k]
            groups.setdefault(json.dumps({w: _runs(n[w], order) for w in ("missing", "unknown", "no_module")
                                        if n.get(w)}), []).append(k)
        lines = [f"  {row[:-1]}{', ' if row != '{}' else ''}\"names\": [\n   " + ",\n   ".join(map(json.dumps, ks))
                 + "]}" for row, ks in groups.items()]
        files[f] = '{\n "callee": ' + json.dumps(name) + ',\n "rows": [\n' + ",\n".join(lines) + "\n ]\n}\n"
        callees[name] = {"url": c["url"], **({"package_dir": c["package_dir"]} if "package_dir" in c else {}),
                         "releases": c["releases"], "file": f}
    files["index.json"] = _dump({"schema": SCHEMA, "read": data["read"], **({"how": data["how"]} if "how" in data else {}),
                                 "callers": callers, "callees": callees})
    return files


def read_layout(directory: str) -> dict[str, Any]:
    """The table a directory written by `layout` holds, in the form `read` gives (for --keep)."""
    from doctor.jsonfile import read_json

    def part(f: str) -> Any:
        return read_json(os.path.join(directory, f), "a file of the import-surface table")

    index = part("index.json")
    callers: dict[str, Any] = {}
    for name, c in index["callers"].items():
        rels = []
        for r in c["releases"]:
            got = part(r["file"])
            rels.append({"version": r["version"], "ref": r["ref"], "commit": r.get("commit", ""),
                         **({"sha256": r["sha256"]} if r.get("sha256") else {}),
                         **({"source_build": True, "date": r["date"]} if r.get("source_build") else {}),
                         "entries": got.get("entries", []),
                         **({"callee_entries": got["callee_entries"]} if got.get("callee_entries") else {}),
                         "imports": got["imports"], **({"command": got["command"]} if "command" in got else {}),
                         **({"lazy": got["lazy"]} if "lazy" in got else {}),
                         **({"loads": got["loads"]} if "loads" in got else {})})
        callers[name] = {**{k: w for k, w in c.items() if k != "releases"}, "releases": rels}
    callees: dict[str, Any] = {}
    for name, c in index["callees"].items():
        versions = [r["version"] for r in c["releases"]]
        order = sorted(versions, key=Version)
        names = {k: {"missing": _expand(n.get("missing", []), order, versions),
                     "unknown": _expand(n.get("unknown", []), order, versions),
                     **({"no_module": _expand(n["no_module"], order, versions)} if n.get("no_module") else {})}
                 for n in part(c["file"])["rows"] for k in n["names"]}
        names = {k: names[k] for k in sorted(names, key=_name_order)}
        callees[name] = {**{k: w for k, w in c.items() if k != "file"}, "names": names}
    return {**{k: w for k, w in index.items() if k not in ("callers", "callees")}, "callers": callers,
            "callees": callees}


def write(data: dict[str, Any], directory: str) -> list[str]:
    """Write the table's files into `directory` (each atomically) and remove the .json files (and emptied folders)
    of an earlier table that it no longer has; the paths written."""
    from doctor.atomic import write_text_atomic

    files = layout(data)
    for f, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(directory, f)), exist_ok=True)
        write_text_atomic(os.path.join(directory, f), text)
    for here, _, names in os.walk(directory, topdown=False):
        for n in names:
            f = os.path.relpath(os.path.join(here, n), directory)
            if n.endswith(".json") and f not in files:
                os.remove(os.path.join(here, n))
        if here != directory and not os.listdir(here):
            os.rmdir(here)  # a caller the table no longer holds
    return sorted(files)


def pypi_releases(project: Project, cache: str, http: Any = None) -> list[tuple[str, RemoteWheel]]:
    """Each final release of `project` from `since` on that PyPI lists (post releases too, yanked files not), as its
    smallest wheel read through byte ranges (`RemoteWheel`, kept in `cache`), oldest first."""
    from tools.refresh_knowledge.pypi import API, Http, _json, file_url

    http = http or Http()
    url = f"{API}/{project.name}/json"
    out = []
    for v, files in _json(http, url).get("releases", {}).items():
        try:
            version = Version(v)
        except InvalidVersion:
            continue
        whls = [f for f in files or () if str(f.get("filename", "")).endswith(".whl") and not f.get("yanked")]
        if version.is_prerelease or version < Version(project.since or "0") or not whls:
            continue
        f = min(whls, key=lambda f: (int(f.get("size") or 0), f["filename"]))
        out.append((version, RemoteWheel(file_url(url, f["url"]), f["filename"], f["digests"]["sha256"], cache, http)))
    return [(str(v), w) for v, w in sorted(out, key=lambda x: x[0])]


def _from_archives(p: Project, wheels_dir: str, sdists_dir: str, role: str, kept_in: str, pypi_cache: str = ""
                   ) -> list[tuple[str, Wheel | Sdist | RemoteWheel]]:
    """The releases of a project read from PyPI files (`archive`): its wheels in `wheels_dir` or sdists in
    `sdists_dir`, or byte ranges of PyPI's wheels kept in `pypi_cache`; when none is given, says so on stderr (its
    rows kept from `kept_in`, or left out)."""
    where = {"wheel": wheels_dir, "sdist": sdists_dir, "pypi": pypi_cache}.get(p.archive, "")
    got: list[tuple[str, Wheel | Sdist | RemoteWheel]] = (
        list(wheel_releases(where, p.name)) if p.archive == "wheel" and where else
        list(sdist_releases(where, p)) if p.archive == "sdist" and where else
        list(pypi_releases(p, where)) if p.archive == "pypi" and where else [])
    if not got and p.archive:  # none of its files given: a directory of other projects' wheels reads nothing of it
        why = ("no --pypi-cache" if p.archive == "pypi" else
               f"no {p.archive}s of it in --{p.archive}s" if where else f"no --{p.archive}s")
        print(f"import_surface: {role}{p.name} is not read ({why}): the table written "
              + (f"keeps its rows from {kept_in}" if kept_in else "leaves it out"), file=sys.stderr)
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.refresh_knowledge.import_surface", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--mirrors", default=os.environ.get("DOCTOR_MIRRORS", "/work/.mirror"),
                    help="directory holding the mirrors as owner+name/ (default /work/.mirror, or $DOCTOR_MIRRORS)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--out", default=os.path.join(root, "profiles", "import-surface"),
                    help="the table's directory (index.json, a file per caller release and per callee)")
    ap.add_argument("--wheels", default=os.environ.get("DOCTOR_WHEELS", ""),
                    help="directory of PyPI wheels of callees read from wheels (transformers-X-py3-none-any.whl, "
                         "accelerate-X-py3-none-any.whl, torchdata-X-cp311-cp311-manylinux*_x86_64.whl, "
                         "tensordict-X-cp311-cp311-manylinux*_x86_64.whl) and of caller "
                         "releases whose tag the mirror lacks (verl-X-py3-none-any.whl); a callee with no wheel there "
                         "is not read")
    ap.add_argument("--sdists", default=os.environ.get("DOCTOR_SDISTS", ""),
                    help="directory of PyPI sdists of callees read from sdists (vllm-X.tar.gz); without it those "
                         "callees are not read")
    ap.add_argument("--pypi-cache", default=os.environ.get("DOCTOR_PYPI_CACHE", ""),
                    help="directory keeping what is read through byte ranges of PyPI's wheels of the callees read "
                         "that way (torch: its release list from PyPI, then each release's smallest wheel's zip "
                         "directory and the Python files needed); without it those callees are not read")
    ap.add_argument("--callers", default="",
                    help="with --keep: read only these callers (comma-separated names, e.g. trl) and the callees they "
                         "import; every other caller and callee keeps its rows from the table at --out")
    ap.add_argument("--keep", action="store_true",
                    help="a project whose sources are not given (its mirror absent, no --wheels / --sdists for it) "
                         "keeps its rows from the table at --out instead of being left out")
    a = ap.parse_args(argv)
    only = frozenset(n.strip() for n in a.callers.split(",") if n.strip()) or None
    if only is not None and (not a.keep or only - {p.name for p in CALLERS}):
        ap.error(f"--callers needs --keep and names of callers ({', '.join(p.name for p in CALLERS)})")
    wheels: dict[str, list[tuple[str, Wheel | Sdist | RemoteWheel]]] = {}
    caller_wheels: dict[str, list[tuple[str, Wheel | Sdist | RemoteWheel]]] = {}
    kept: dict[str, Any] | None = None
    try:
        if a.keep and os.path.exists(os.path.join(a.out, "index.json")):
            kept = read_layout(a.out)
        gits = {p.name: Git(os.path.join(a.mirrors, p.mirror)) for p in (*CALLEES, *CALLERS)
                if p.mirror and not (a.keep and not os.path.exists(os.path.join(a.mirrors, p.mirror)))}
        for p in (*CALLEES, *CALLERS):
            if p.mirror and p.name not in gits:
                print(f"import_surface: {p.name} is not read (no mirror): its rows are kept from {a.out}",
                      file=sys.stderr)
        # a callee read from PyPI files, and a caller read from them only (vLLM, accelerate): each release from its
        # sdist in --sdists or its wheel in --wheels
        read_callees = {d.name for c in CALLERS if only is None or c.name in only for d in CALLEES
                        if not c.callees or d.name in c.callees}
        for into, projects, role in ((wheels, CALLEES, ""), (caller_wheels, CALLERS, "caller ")):
            for p in projects:
                if (p.name not in read_callees) if role == "" else (only is not None and p.name not in only):
                    continue  # --callers: kept
                got = _from_archives(p, a.wheels, a.sdists, role, a.out if kept else "", a.pypi_cache)
                if got:
                    into[p.name] = got
        # a caller release whose tag the mirror lacks is read from its wheel in --wheels (verl-0.9.1-py3-none-any.whl)
        caller_wheels.update({p.name: list(wheel_releases(a.wheels, p.name)) for p in CALLERS
                              if a.wheels and p.name in gits})
        data = read(gits, default_releases(root, gits), wheels=wheels, kept=kept, caller_wheels=caller_wheels,
                    read_only=only)
    except (GitError, InputError, OSError, KeyError, ValueError, TypeError, AttributeError) as e:
        print(f"import_surface: {e}", file=sys.stderr)
        return 2
    finally:
        for g in locals().get("gits", {}).values():
            g.close()
        for ws in (*wheels.values(), *caller_wheels.values()):
            for _, w in ws:
                w.close()
    write(data, a.out)
    n = sum(len(c["releases"]) for c in data["callers"].values())  # type: ignore[attr-defined]
    print(f"wrote {a.out}: {n} caller releases, "
          f"{sum(len(c['releases']) for c in data['callees'].values())} callee releases read")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
