"""Regenerate profiles/message_owners.json: who prints a message, read from the upstream sources themselves.

    python -m tools.message_owners build [--out FILE] [--date YYYY-MM-DD] [--tree DIST=VERSION=DIR ...] [--pypi DIR]
    python -m tools.message_owners build --again ID[,ID...] [--tree ...] [--pypi DIR]  # re-read some, keep the rest
    python -m tools.message_owners extract DIR                              # the templates of a source tree (json)
    python -m tools.message_owners check FILE                               # validate a data file (exit 2 if bad)

Many failure logs hold a bare exception line (`ValueError: ...`, `AssertionError: ...`) or a logged error or warning
with no frame, path, module or code to attribute. Its text was written by some package's source code. This tool
walks the packages' sources with `ast` and records every message template: `raise X("..." / f"..." /
"...".format() / "..." % ...)`, `assert cond, "..."`, `logger.error / warning / exception / critical(...)` and
`warnings.warn(...)`. A template is its literal pieces with a wildcard wherever a value is formatted in, cut at its
first newline (a log line holds the message's first line), with its kind (the exception type, `assert`, or the
log level), the module path and the function that raises or logs it.

Sources are the real upstream code: the bare git mirrors under /work/.mirror read at a named commit
(`git ls-tree` + `git cat-file --batch`, no work tree), the wheels installed in the running interpreter (their
RECORD), and releases unpacked from their sdist (`--tree`, for vLLM, which has neither). Only templates whose longest literal has MIN_LITERAL characters or more (and a few letters) are kept,
deduplicated. The data is the short message texts and where they are raised; no code is copied.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import datetime as _dt
import json
import re
import string
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "profiles" / "message_owners.json"
MIRROR = Path("/work/.mirror")
MIN_LITERAL = 12
LOG_LEVELS = {"error": "error", "exception": "error", "critical": "error", "fatal": "error", "warning": "warning",
              "warn": "warning", "error_once": "error", "warning_once": "warning", "warning_advice": "warning"}
# Source files that are not the package a user runs: tests, examples, docs, benchmarks, build scripts.
_SKIP_DIR = re.compile(r"(?:^|/)(?:tests?|testing|examples?|docs?|benchmarks?|\.github|ci|scripts|tools|third_party)"
                       r"(?:/|$)")
_SKIP_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|conftest|setup)\.py$")


_ASSERT_HELPER = re.compile(r"^_*(?:p_)?assert(?:_\w+)?$|^_*ensure_\w+$|^_*check$", re.I)


@dataclass(frozen=True)
class Source:
    """One upstream source: a bare git mirror at a ref (its subdirectories), or an installed distribution."""

    id: str
    distribution: str
    git: str | None = None  # the mirror's git dir (under MIRROR)
    ref: str = "HEAD"
    dirs: tuple[str, ...] = ()
    url: str = ""  # https://github.com/<owner>/<repo>
    skip: tuple[str, ...] = ()  # path prefixes of parts a training job on this stack does not run
    cpp: bool = False  # also its C++ (csrc, headers): the checks whose message reaches Python
    tree: str | None = None  # an unpacked sdist (`--tree`): its directory
    version: str | None = None  # ... and the release it is
    kept: int | None = None  # build_again: its index in the kept data file, whose rows are taken as they are


SOURCES: tuple[Source, ...] = (
    Source("verl", "verl", "verl-project+verl/repo", "main", ("verl",), "https://github.com/verl-project/verl"),
    Source("vllm-ascend", "vllm-ascend", "vllm-project+vllm-ascend/repo", "main", ("vllm_ascend", "csrc"),
           "https://github.com/vllm-project/vllm-ascend", cpp=True),
    # older releases still in use: only the texts main no longer has are added (same distribution)
    Source("verl@v0.7.1", "verl", "verl-project+verl/repo", "v0.7.1", ("verl",), "https://github.com/verl-project/verl"),
    Source("verl@v0.5.0", "verl", "verl-project+verl/repo", "v0.5.0", ("verl",), "https://github.com/verl-project/verl"),
    Source("vllm-ascend@v0.13.0", "vllm-ascend", "vllm-project+vllm-ascend/repo", "v0.13.0", ("vllm_ascend",),
           "https://github.com/vllm-project/vllm-ascend"),
    Source("vllm-ascend@v0.11.0", "vllm-ascend", "vllm-project+vllm-ascend/repo", "v0.11.0", ("vllm_ascend",),
           "https://github.com/vllm-project/vllm-ascend"),
    Source("vllm-ascend@v0.9.1", "vllm-ascend", "vllm-project+vllm-ascend/repo", "v0.9.1", ("vllm_ascend",),
           "https://github.com/vllm-project/vllm-ascend"),
    Source("mindspeed", "mindspeed", "Ascend+MindSpeed/repo", "HEAD", ("mindspeed",), "https://github.com/Ascend/MindSpeed"),
    Source("mindspeed-llm", "mindspeed-llm", "Ascend+MindSpeed-LLM/repo", "HEAD", ("mindspeed_llm",),
           "https://github.com/Ascend/MindSpeed-LLM"),
    Source("torch-npu", "torch-npu", "Ascend+pytorch/repo", "master", ("torch_npu",), "https://github.com/Ascend/pytorch",
           cpp=True),
    Source("megatron", "megatron-core", "NVIDIA+Megatron-LM/repo", "HEAD", ("megatron",),
           "https://github.com/NVIDIA/Megatron-LM"),
    Source("torch", "torch", cpp=True, skip=tuple(f"torch/{d}/" for d in (
        "onnx", "ao", "_export", "export", "_vendor", "_inductor", "_higher_order_ops", "nested", "jit", "testing",
        "package", "_dynamo", "fx/experimental", "_functorch", "masked", "_numpy", "_library", "_prims",
        "_refs", "_decomp", "_subclasses", "sparse", "quantization", "utils/_sympy", "utils/benchmark")) + ("torchgen/",)),
    Source("ray", "ray", skip=tuple(f"ray/{d}/" for d in (
        "rllib", "serve", "tune", "dashboard", "autoscaler", "llm", "data", "workflow", "air", "train/v2",
        "experimental", "util/dask", "util/spark", "_private/runtime_env/agent", "tests"))),
    *(Source(d, d) for d in ("transformers", "numpy", "huggingface-hub", "safetensors", "omegaconf", "hydra-core")),
)
# Releases read from their PyPI files (`build --pypi DIR` downloads and unpacks them there): vLLM, the trainers and
# libraries around the stack whose messages reach its logs (ms-swift, LlamaFactory, TRL, PEFT, Accelerate, datasets,
# DeepSpeed, tensordict, mbridge), and transformers' last 4.x release (the installed wheel is 5.x). (distribution,
# version, the package directories to read).
PYPI_RELEASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("vllm", "0.13.0", ("vllm", "csrc")),  # vLLM: no pure wheel and no mirror here: its sdist
    ("vllm", "0.11.0", ("vllm", "csrc")),
    ("transformers", "4.57.1", ("transformers",)),
    ("ms-swift", "4.6.0", ("swift",)),
    ("ms-swift", "3.8.3", ("swift",)),
    ("llamafactory", "0.9.5", ("llamafactory",)),
    ("trl", "1.16.0", ("trl",)),
    ("peft", "0.21.2", ("peft",)),
    ("accelerate", "1.16.0", ("accelerate",)),
    ("datasets", "5.2.0", ("datasets",)),
    ("deepspeed", "0.19.8", ("deepspeed",)),
    ("tensordict", "0.15.3", ("tensordict",)),
    ("mbridge", "0.15.1", ("mbridge",)),
)
MAX_PIECE = 160  # characters of one literal kept (a longer one is cut; what follows becomes a wildcard)


@dataclass(frozen=True)
class Template:
    kind: str  # "raise:ValueError", "assert", "log:error", "log:warning", "warn:UserWarning"
    func: str  # "Class.method", "function" or "<module>"
    pieces: tuple[str, ...]  # literal pieces; a wildcard between each two; "" first / last: a leading / trailing one


# -- from an expression to its literal pieces

_PCT = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")


def _split_percent(s: str) -> list[str | None]:
    out: list[str | None] = []
    pos = 0
    for m in _PCT.finditer(s):
        out.append(s[pos:m.start()])
        out.append("%" if m.group(0) == "%%" else None)
        pos = m.end()
    out.append(s[pos:])
    return out


def _split_format(s: str) -> list[str | None]:
    out: list[str | None] = []
    try:
        for literal, field, _spec, _conv in string.Formatter().parse(s):
            out.append(literal)
            if field is not None:
                out.append(None)
    except ValueError:
        return [s]
    return out


def _str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def pieces_of(node: ast.AST | None, percent: bool = False) -> list[str | None]:
    """A message expression as literal strings and wildcards (None)."""
    if node is None:
        return [None]
    if (s := _str(node)) is not None:
        return _split_percent(s) if percent else [s]
    if isinstance(node, ast.JoinedStr):
        out: list[str | None] = []
        for v in node.values:
            out.extend([v.value] if isinstance(v, ast.Constant) and isinstance(v.value, str) else [None])
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return pieces_of(node.left, percent) + pieces_of(node.right, percent)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (s := _str(node.left)) is not None:
        return _split_percent(s)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and (s := _str(node.func.value)) is not None):
        return _split_format(s)
    return [None]


def normalize(parts: list[str | None]) -> tuple[str, ...]:
    """Merge literals, collapse whitespace, cut at the first newline (a log line holds a message's first line);
    "" first / last marks a leading / trailing wildcard."""
    s = "".join("\x00" if p is None else p for p in parts).lstrip()
    if "\n" in s:
        s = s.split("\n", 1)[0] + "\x00"
    s = re.sub(r"[^\S\x00]+", " ", s)
    raw = s.split("\x00")
    inner = [p for p in raw[1:-1] if p]
    out = [raw[0], *inner, raw[-1]] if len(raw) > 1 else raw
    out = [p if len(p) <= MAX_PIECE else p[:MAX_PIECE] for p in out]
    if raw[-1] and len(raw[-1]) > MAX_PIECE:
        out.append("")
    return tuple(out) if any(out) else ()


def distinctive(pieces: tuple[str, ...]) -> bool:
    longest = max((p.strip() for p in pieces), key=len, default="")
    return len(longest) >= MIN_LITERAL and sum(c.isalpha() for c in longest) >= 8


# -- from a module's source to its templates


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_logger(node: ast.AST) -> bool:
    """`logger.x`, `self.logger.x`, `logging.x`, `logging.getLogger(...).x`, `log.x`, `LOG.x`."""
    if isinstance(node, ast.Call):
        node = node.func
    name = _call_name(node)
    return bool(name) and ("log" in name.lower())  # type: ignore[union-attr]


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: list[Template] = []
        self.names: list[dict[str, list[str | None]]] = [{}]  # per function: a message built in a variable first

    def _pieces(self, node: ast.AST | None, percent: bool = False) -> list[str | None]:
        """A message expression's pieces; a plain name is the message last assigned to it in this function
        (`msg = f"..."; raise ValueError(msg)`)."""
        if isinstance(node, ast.Name) and node.id in self.names[-1]:
            return list(self.names[-1][node.id])
        return pieces_of(node, percent)

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = pieces_of(node.value)
            if parts != [None]:
                self.names[-1][node.targets[0].id] = parts
            else:
                self.names[-1].pop(node.targets[0].id, None)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        t = node.target
        if isinstance(t, ast.Name) and isinstance(node.op, ast.Add) and t.id in self.names[-1]:
            self.names[-1][t.id] = self.names[-1][t.id] + pieces_of(node.value)
        self.generic_visit(node)

    def _func(self) -> str:
        return ".".join(self.scope[-2:]) if self.scope else "<module>"

    def _add(self, kind: str, parts: list[str | None]) -> None:
        pieces = normalize(parts)
        if pieces and distinctive(pieces):
            self.found.append(Template(kind, self._func(), pieces))

    def _scoped(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        self.names.append({})
        self.generic_visit(node)
        self.names.pop()
        self.scope.pop()

    visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = _scoped  # noqa: N815

    def visit_Raise(self, node: ast.Raise) -> None:  # noqa: N802
        exc = node.exc
        if isinstance(exc, ast.Call) and (name := _call_name(exc.func)) and exc.args:
            self._add(f"raise:{name}", self._pieces(exc.args[0]))
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:  # noqa: N802
        if node.msg is not None:
            self._add("assert", self._pieces(node.msg))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        f = node.func
        if isinstance(f, ast.Attribute) and node.args:
            level = LOG_LEVELS.get(f.attr)
            if f.attr == "warn" and _call_name(f.value) == "warnings":
                cat = _call_name(node.args[1]) if len(node.args) > 1 else None
                for kw in node.keywords:
                    if kw.arg == "category":
                        cat = _call_name(kw.value)
                self._add(f"warn:{cat or 'UserWarning'}", self._pieces(node.args[0]))
            elif level and _is_logger(f.value):
                self._add(f"log:{level}", self._pieces(node.args[0], percent=len(node.args) > 1))
        elif isinstance(f, ast.Name) and f.id == "warn" and node.args:
            self._add("warn:UserWarning", self._pieces(node.args[0]))
        if len(node.args) >= 2 and _ASSERT_HELPER.search(_call_name(f) or ""):
            # an assertion helper: `_p_assert(cond, msg)`, `ensure_valid(cond, msg)`, `_assert(cond, msg)`
            self._add("assert", self._pieces(node.args[1]))
        self.generic_visit(node)


def templates_of(text: str, path: str = "<string>") -> list[Template]:
    """Every distinctive message template of one module's source (empty when it does not parse)."""
    try:
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError):
        return []
    v = _Visitor()
    v.visit(tree)
    seen: set[Template] = set()
    return [t for t in v.found if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


_CPP_SUFFIX = (".cpp", ".cc", ".h", ".hpp", ".cu")


def wanted(path: str, cpp: bool = False) -> bool:
    return ((path.endswith(".py") or (cpp and path.endswith(_CPP_SUFFIX)))
            and not _SKIP_DIR.search(path) and not _SKIP_FILE.search(path))


# A class defined at the top of a module (column 0): public, CamelCase. `X.__init__() got an unexpected keyword
# argument` with no frame names only the class; the package that defines it is the one called.
_CLASS_DEF = re.compile(r"^class ([A-Z][A-Za-z0-9_]*)\b", re.M)


def classes_of_file(path: str, text: str) -> list[str]:
    """The public classes a Python module defines at its top level, sorted (none for C++)."""
    return [] if path.endswith(_CPP_SUFFIX) else sorted(set(_CLASS_DEF.findall(text)))


def templates_of_file(path: str, text: str) -> list[Template]:
    return cpp_templates_of(text) if path.endswith(_CPP_SUFFIX) else templates_of(text, path)


# -- from a C++ source to its templates (torch_npu's and vllm-ascend's csrc, torch's headers)

# The macros whose message reaches the Python user: c10::Error -> RuntimeError (ValueError / TypeError /
# NotImplementedError for the typed checks), TORCH_WARN -> a Python warning, CANN's ASCEND_LOGE/W -> the log.
_CPP_MACROS = {
    "TORCH_CHECK": "raise:RuntimeError", "TORCH_CHECK_VALUE": "raise:ValueError", "TORCH_CHECK_TYPE": "raise:TypeError",
    "TORCH_CHECK_INDEX": "raise:IndexError", "TORCH_CHECK_NOT_IMPLEMENTED": "raise:NotImplementedError",
    "TORCH_INTERNAL_ASSERT": "raise:RuntimeError", "AT_ERROR": "raise:RuntimeError", "TORCH_NPU_WARN": "warn:UserWarning",
    "TORCH_NPU_WARN_ONCE": "warn:UserWarning", "TORCH_WARN": "warn:UserWarning", "TORCH_WARN_ONCE": "warn:UserWarning",
    "ASCEND_LOGE": "log:error", "ASCEND_LOGW": "log:warning",
}
_CPP_CALL = re.compile(r"\b(" + "|".join(sorted(_CPP_MACROS, key=len, reverse=True)) + r")\s*\(")
# A function's signature line, at any indentation (a method defined in its class or struct is indented): a return
# type (none for a constructor), then the name and "(" with no ";" after it on the line. Which one holds a check is told by its braces
# (_enclosing_function), so a multi-line call or a control statement that looks like one is passed over.
_CPP_FUNC = re.compile(r"^[ \t]*(?P<type>(?:[:<>,*&]*\w[\w:<>,*&]*[ \t]+)*)[*&]?(?P<name>[A-Za-z_~][\w:~]*)[ \t]*"
                       r"\([^;\n]*$", re.M)
_CPP_NOT_A_TYPE = frozenset("return else new delete throw case goto co_return co_yield if for while switch do "
                            "sizeof typedef using".split())
# what cannot hold a brace that counts: string and char literals, comments (blanked, positions kept)
_CPP_INERT = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', re.S)
_CPP_STR = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_CPP_ESC = {"n": "\n", "t": " ", '"': '"', "\\": "\\", "'": "'"}


def _cpp_args(text: str, start: int) -> list[str] | None:
    """The top-level arguments of the call whose "(" is at `start` (strings, chars and nesting respected)."""
    args: list[str] = []
    depth, i, cur = 0, start, start + 1
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[cur:i].strip())
            cur = i + 1
        i += 1
    return None


def _cpp_literal(arg: str) -> str | None:
    """One argument made only of adjacent string literals ("a" "b"), unescaped; None otherwise."""
    parts = _CPP_STR.findall(arg)
    if not parts or _CPP_STR.sub("", arg).strip():
        return None
    return "".join(re.sub(r"\\(.)", lambda m: _CPP_ESC.get(m.group(1), m.group(1)), p) for p in parts)


def _signature(f: re.Match[str]) -> bool:
    """Not a statement (`return f(`, `else if (`); with no return type, a constructor (`Block::Block(`, or one
    defined in its class), not a macro's block (`AT_DISPATCH_...(`) nor a member of an initializer list."""
    name, words = f.group("name"), f.group("type").split()
    if name in _CPP_NOT_A_TYPE or set(words) & _CPP_NOT_A_TYPE:
        return False
    if words:
        return True
    last = re.search(r"(\S)\s*\Z", f.string[max(0, f.start() - 200):f.start()])  # the code right before the line
    # an initializer list's member (`: a_(x),` / `b_(y) {`) or an argument of a call spanning lines
    return not name.split("::")[-1].isupper() and not (last and last.group(1) in ",:(")


class _Braces:
    """Where one C++ file's function bodies open and close, to name the function a check sits in: the last
    signature before it whose body (its first "{" before any ";") is still open there. A check in a method defined
    inside a struct is that method's, not the free function defined above the struct."""

    def __init__(self, text: str) -> None:
        code = _CPP_INERT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        self._code = code
        self._opens = [i for i, c in enumerate(code) if c == "{"]
        self._closes = [i for i, c in enumerate(code) if c == "}"]
        self._funcs = [(f.end("name"), f.group("name")) for f in _CPP_FUNC.finditer(code) if _signature(f)]

    def _depth(self, start: int, end: int) -> int:
        """Braces opened minus closed in code[start:end]."""
        b = bisect.bisect_left
        return (b(self._opens, end) - b(self._opens, start)) - (b(self._closes, end) - b(self._closes, start))

    def enclosing_function(self, at: int) -> str | None:
        for end, name in reversed(self._funcs[:bisect.bisect_left(self._funcs, (at,))]):
            brace = self._code.find("{", end, at)
            semi = self._code.find(";", end, brace if brace >= 0 else at)
            if brace >= 0 and semi < 0 and self._depth(brace, at) > 0:
                return name
        return None


def cpp_templates_of(text: str) -> list[Template]:
    """The message templates of one C++ file: the literal arguments of the checks / warnings / logs above."""
    out: list[Template] = []
    braces: _Braces | None = None
    for m in _CPP_CALL.finditer(text):
        args = _cpp_args(text, m.end() - 1)
        if not args:
            continue
        kind = _CPP_MACROS[m.group(1)]
        if kind.startswith("log:"):
            fmt = _cpp_literal(args[0])
            parts: list[str | None] = _split_percent(fmt) if fmt is not None else [None]
        else:
            msg_args = args[1:] if m.group(1).startswith(("TORCH_CHECK", "TORCH_INTERNAL")) else args
            parts = [_cpp_literal(a) for a in msg_args]
        pieces = normalize(parts)
        if not pieces or not distinctive(pieces):
            continue
        if braces is None:
            braces = _Braces(text)
        func = braces.enclosing_function(m.start())
        out.append(Template(kind, func.rsplit("::", 2)[-1] if func else "<file>", pieces))
    seen: set[Template] = set()
    return [t for t in out if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


# -- reading the sources


def _git(gitdir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], input=data, capture_output=True, check=True).stdout


def git_files(gitdir: Path, ref: str, dirs: Iterable[str], skip: tuple[str, ...] = (),
              cpp: bool = False) -> tuple[str, Iterator[tuple[str, str]]]:
    """(the commit `ref` names, its wanted .py files as (path, text)) from a bare git dir."""
    commit = _git(gitdir, "rev-parse", f"{ref}^{{commit}}").decode().strip()
    names = [n for n in _git(gitdir, "ls-tree", "-r", "--name-only", commit, "--", *dirs).decode().splitlines()
             if wanted(n, cpp) and not n.startswith(skip)]

    def read() -> Iterator[tuple[str, str]]:
        out = _git(gitdir, "cat-file", "--batch", data="".join(f"{commit}:{n}\n" for n in names).encode())
        pos = 0
        for n in names:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            yield n, out[header_end + 1: header_end + 1 + size].decode("utf-8", "replace")
            pos = header_end + 1 + size + 1

    return commit, read()


def wheel_files(dist: str, skip: tuple[str, ...] = (),
                cpp: bool = False) -> tuple[str, Iterator[tuple[str, str]]]:
    """(the installed version, its wanted .py files as (path, text)) from the distribution's RECORD."""
    from importlib.metadata import distribution

    d = distribution(dist)
    files = [f for f in (d.files or []) if wanted(str(f), cpp) and not str(f).startswith(skip)]

    def read() -> Iterator[tuple[str, str]]:
        for f in files:
            try:
                yield str(f), Path(str(d.locate_file(f))).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue

    return d.version, read()


def tree_files(root: Path, dirs: Iterable[str], skip: tuple[str, ...] = (),
               cpp: bool = False) -> Iterator[tuple[str, str]]:
    """The wanted files of an unpacked source distribution, as (path, text)."""
    for d in dirs:
        for p in sorted((root / d).rglob("*")):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and wanted(rel, cpp) and not rel.startswith(skip):
                yield rel, p.read_text(encoding="utf-8", errors="replace")


def parse_tree(spec: str) -> Source:
    """`--tree vllm=0.11.0=/tmp/vllm-0.11.0[:vllm,csrc]`: a distribution's release, unpacked from its sdist."""
    dist, version, rest = spec.split("=", 2)
    where, _, dirs = rest.partition(":")
    return Source(f"{dist}@{version}", dist, dirs=tuple(dirs.split(",")) if dirs else (dist.replace("-", "_"),),
                  tree=where, version=version, cpp=True)


def pypi_trees(where: Path, releases: Iterable[tuple[str, str, tuple[str, ...]]] = PYPI_RELEASES,
               http: Any = None) -> list[Source]:
    """Each release's file from PyPI (its pure wheel, else its sdist; found through the JSON API, so nothing is
    built), unpacked into `where` and returned as a tree source. A release already unpacked there is not fetched
    again."""
    import io
    import shutil
    import tarfile
    import zipfile

    from tools.refresh_knowledge.pypi import API, Http, _json, _pure, file_url, normalize

    http = http or Http()
    out: list[Source] = []
    for dist, version, dirs in releases:
        root = where / f"{dist}-{version}"
        if not root.is_dir():
            url = f"{API}/{normalize(dist)}/json"
            files = [f for f in (_json(http, url).get("releases") or {}).get(version, []) if isinstance(f, dict)]
            pure = [f for f in files if _pure(str(f.get("filename", "")))]
            sdist = [f for f in files if str(f.get("filename", "")).endswith(".tar.gz")]
            if not (pure or sdist):
                raise SystemExit(f"{dist} {version}: PyPI has neither a pure wheel nor an sdist")
            chosen = (pure or sdist)[0]
            data = http.get(file_url(url, str(chosen["url"])))
            tmp = where / ".unpack" / f"{dist}-{version}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            if pure:
                with zipfile.ZipFile(io.BytesIO(data)) as z:
                    z.extractall(tmp)
                top = tmp
            else:
                with tarfile.open(fileobj=io.BytesIO(data)) as t:
                    t.extractall(tmp, filter="data")
                (top,) = [p for p in tmp.iterdir() if p.is_dir()]
            top.rename(root)
        out.append(Source(f"{dist}@{version}", dist, dirs=dirs, tree=str(root), version=version, cpp=True))
    return out


def build(sources: Iterable[Source] = SOURCES, mirror: Path = MIRROR, date: str | None = None,
          kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """The data file's content: sources (where each was read) and per file its templates. `kept`: a data file whose
    rows are taken as they are for every source not in `sources` (build_again)."""
    from doctor.knowledge.ownership import component_of_distribution

    out_sources: list[dict[str, Any]] = []
    files: list[list[Any]] = []
    classes: list[list[Any]] = []
    class_seen: dict[str, set[str]] = {}
    seen: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    for si, src in enumerate(sources):
        if src.kept is not None and kept is not None:  # its rows as the kept file has them
            old = src.kept
            out_sources.append(kept["sources"][old])
            rows_kept = [[si, path, found] for s_, path, found in kept["files"] if s_ == old]
            files.extend(rows_kept)
            seen.setdefault(src.distribution, set()).update(
                (row[1], tuple(row[2])) for _, _, found in rows_kept for row in found)
            for s_, path, names in kept["classes"]:
                if s_ == old:
                    classes.append([si, path, names])
                    class_seen.setdefault(src.distribution, set()).update(names)
            continue
        if src.tree:
            texts = tree_files(Path(src.tree), src.dirs, src.skip, src.cpp)
            where = {"version": src.version, "url": f"https://pypi.org/project/{src.distribution}/{src.version}/"}
        elif src.git:
            commit, texts = git_files(mirror / src.git, src.ref, src.dirs, src.skip, src.cpp)
            where = {"commit": commit, "ref": src.ref, "url": f"{src.url}/tree/{commit}"}
        else:
            version, texts = wheel_files(src.distribution, src.skip, src.cpp)
            where = {"version": version, "url": f"https://pypi.org/project/{src.distribution}/{version}/"}
        n_files = n_templates = 0
        # One row per (kind, pieces) in a source: the first site read, with how many other sites raise the same
        # text (transformers repeats one check in hundreds of model files).
        first: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
        rows: dict[str, list[list[Any]]] = {}
        earlier = seen.setdefault(src.distribution, set())
        known = class_seen.setdefault(src.distribution, set())
        for path, text in texts:
            n_files += 1
            names = [c for c in classes_of_file(path, text) if c not in known]
            if names:
                known.update(names)
                classes.append([si, path, names])
            for t in templates_of_file(path, text):
                n_templates += 1
                key = (t.kind, t.pieces)
                if key in earlier:
                    continue  # an older release of a distribution read before: only its own texts
                if key in first:
                    row = first[key]
                    if len(row) == 3:
                        row.append(0)
                    row[3] += 1
                    continue
                first[key] = row = [t.func, t.kind, list(t.pieces)]
                rows.setdefault(path, []).append(row)
        files.extend([si, path, found] for path, found in rows.items())
        earlier.update(first)
        comp = component_of_distribution(src.distribution) or "python"
        out_sources.append({"id": src.id, "distribution": src.distribution, "component": comp, **where,
                            "files_read": n_files, "templates": n_templates, "distinct": len(first)})
        print(f"{src.id}: {n_files} files, {n_templates} templates ({where.get('commit') or where.get('version')})",
              file=sys.stderr)
    return {"schema": "doctor.message_owners/1",
            "read": date or (kept["read"] if kept else None) or _dt.date.today().isoformat(),
            "min_literal": MIN_LITERAL, "tool": "python -m tools.message_owners build", "sources": out_sources,
            "files": files, "classes": classes}


def build_again(kept: dict[str, Any], again: Iterable[str], trees: Iterable[Source] = (), mirror: Path = MIRROR,
                date: str | None = None, known: Iterable[Source] = SOURCES) -> dict[str, Any]:
    """Read the sources named `again` once more, at the commit or release the kept data file records (a change of
    the reader, not of upstream), in the file's order; every other source's rows are kept as they are. A git source
    is read from its mirror, the installed wheel must be the recorded release, a release read from PyPI needs its
    unpacked tree (`trees`). Rows are deduplicated per distribution by their text, as a full build does, so a
    source read again after a kept one of its distribution still adds only its own texts."""
    again = set(again)
    by_id = {s.id: s for s in (*known, *trees)}
    unknown = again - {o["id"] for o in kept["sources"]}
    if unknown:
        raise SystemExit(f"not a source of the kept file: {', '.join(sorted(unknown))}")
    order: list[Source] = []
    for i, o in enumerate(kept["sources"]):
        if o["id"] not in again:
            order.append(Source(o["id"], o["distribution"], kept=i))
            continue
        src = by_id.get(o["id"])
        if src is None:
            raise SystemExit(f"{o['id']}: give its unpacked release (--tree {o['distribution']}={o.get('version')}=DIR)")
        if src.git:
            src = replace(src, ref=o["commit"])
        elif src.tree is None:
            from importlib.metadata import version

            if version(src.distribution) != o.get("version"):
                raise SystemExit(f"{o['id']}: the installed {src.distribution} is {version(src.distribution)}, the "
                                 f"kept file read {o.get('version')}")
        elif src.version != o.get("version"):
            raise SystemExit(f"{o['id']}: --tree gives {src.version}, the kept file read {o.get('version')}")
        order.append(src)
    data = build(order, mirror=mirror, date=date, kept=kept)
    for o, new in zip(kept["sources"], data["sources"], strict=True):  # a git source keeps the ref it read
        if "ref" in o and new.get("commit") == o.get("commit"):
            new["ref"] = o["ref"]
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.message_owners", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, default=OUT)
    b.add_argument("--date")
    b.add_argument("--mirror", type=Path, default=MIRROR)
    b.add_argument("--tree", action="append", default=[], metavar="DIST=VERSION=DIR[:SUBDIRS]",
                   help="also read a release unpacked from its sdist (read first: most specific), e.g. vllm, which "
                        "has no mirror: pip download vllm==0.11.0 --no-deps --no-binary vllm --no-clean keeps the "
                        "unpacked sdist in pip's temporary directory")
    b.add_argument("--pypi", type=Path, metavar="DIR",
                   help="also read the releases of PYPI_RELEASES, downloaded from PyPI and unpacked into DIR")
    b.add_argument("--again", metavar="ID[,ID...]",
                   help="read only these sources of --out once more, at the commit / release it records, and keep "
                        "every other source's rows as they are (after a change of the reader)")
    e = sub.add_parser("extract")
    e.add_argument("dir", type=Path)
    c = sub.add_parser("check")
    c.add_argument("file", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "extract":
        rows = []
        for p in sorted(args.dir.rglob("*")):
            rel = p.relative_to(args.dir).as_posix()
            if p.is_file() and wanted(rel, cpp=True):
                rows += [{"path": rel, "func": t.func, "kind": t.kind, "pieces": list(t.pieces)}
                         for t in templates_of_file(rel, p.read_text(encoding="utf-8", errors="replace"))]
        json.dump(rows, sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    if args.cmd == "check":
        from doctor.errors import InputError
        from doctor.explain.messages import load_table

        try:
            t = load_table(str(args.file))
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{args.file}: {len(t.templates)} templates from {len(t.sources)} sources")
        return 0
    trees = [parse_tree(t) for t in args.tree]
    if args.again:
        kept = json.loads(args.out.read_text(encoding="utf-8"))
        if args.pypi:
            trees += pypi_trees(args.pypi, [r for r in PYPI_RELEASES if f"{r[0]}@{r[1]}" in args.again.split(",")])
        data = build_again(kept, args.again.split(","), trees, mirror=args.mirror, date=args.date)
        args.out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {args.out} ({args.out.stat().st_size} bytes)", file=sys.stderr)
        return 0
    if args.pypi:  # vLLM's releases first (as --tree), the others after the installed wheels
        pypi = pypi_trees(args.pypi)
        trees += [t for t in pypi if t.distribution == "vllm"]
        late = [t for t in pypi if t.distribution != "vllm"]
    else:
        late = []
    data = build((*SOURCES[:2], *trees, *SOURCES[2:], *late), mirror=args.mirror, date=args.date)
    args.out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
