"""Every user-visible `source` is an upstream URL, and the code points at nothing outside the repository.

A finding's `source` (and every `SRC_*` / `SOURCE*` constant that feeds one) is one or more `https://` URLs
joined by "; " — a file at a tag or commit, an issue, a versioned doc or PyPI page — or nothing at all for a
finding the doctor raises about itself (docs/design.md, "Contracts"). The prose belongs in `detail`.
Comments and strings cite `docs/` or upstream URLs, never the research notes the project was built from.

`CHECKED` lists the parts of the tree this applies to (directories are walked recursively); widen it to
("doctor", "installers") once every area follows the rule.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHECKED: tuple[str, ...] = (
    "doctor/*.py",
    "doctor/checks",
    "doctor/cli",
    "doctor/cluster",
    "doctor/probes",
    "doctor/smoke",
    "doctor/snapshot",
    "doctor/knowledge/chips.py",
    "doctor/knowledge/profiles.py",
    "doctor/knowledge/seed.py",
    "doctor/knowledge/versions.py",
)

# Calls whose `source=` names what the user handed in (a file, a flag, "command line") or a git checkout,
# not a citation: the errors of doctor.errors and the loaders below.
INPUT_SOURCE_CALLS = frozenset({"CheckConfig", "build_spec", "cluster_from_dict", "find_profile", "load_profiles",
                                "Step", "Executor", "install", "download"})

# Findings about the doctor itself (a probe that failed or timed out, a node the Ray probe could not reach,
# an import the deep probe has no signature for) or from its own heuristic: they carry no source.
SOURCELESS = frozenset({"probe-failed", "collect-probe-failed", "cluster-node-timeout", "cluster-node-unreachable",
                        "env-var-misspelled", "no-profile", "import-failed", "import-torch-npu-failed",
                        "import-mindspeed-failed", "import-vllm-ascend-failed"})

URLS = re.compile(r"https://[^\s;]+(?:; https://[^\s;]+)*")
FORBIDDEN = (re.compile(r"shared/"), re.compile(r"DESIGN\.md"), re.compile(r"\.md §"), re.compile("§"),
             re.compile(r"\bissue \d+\b", re.I))
# a citation written as prose instead of a URL: "owner/repo#123", "PR #123", "PR !2650"
PROSE_CITATION = re.compile(r"(?<![/\w])[\w.-]+/[\w.-]+#\d+|\bPR [#!]?\d+")
SOURCE_NAME = re.compile(r"^_?(SRC_\w*|SOURCE\w*)$")


def is_source(value: str | None) -> bool:
    """A finding's source: None/empty, or https URLs joined by '; '."""
    return not value or URLS.fullmatch(value) is not None


def checked_files() -> list[Path]:
    files: set[Path] = set()
    for entry in CHECKED:
        p = ROOT / entry
        if p.is_dir():
            files.update(q for q in p.rglob("*.py") if "__pycache__" not in q.parts)
        else:
            files.update(ROOT.glob(entry))
    assert files, f"CHECKED matches no file: {CHECKED}"
    return sorted(files)


FILES = checked_files()


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _string_pieces(node: ast.AST) -> Iterator[str]:
    """The literal text of a string-valued expression; names and calls are checked where they are defined."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for v in node.values:
            yield from _string_pieces(v)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from _string_pieces(node.left)
        yield from _string_pieces(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _string_pieces(node.body)
        yield from _string_pieces(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from _string_pieces(v)


def _bad_pieces(node: ast.AST) -> list[str]:
    return [s for s in _string_pieces(node) if not is_source(s.strip().strip(";").strip())]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _source_values(tree: ast.AST) -> Iterator[tuple[int, str, ast.AST]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _callee(node)
            if name.endswith("Error") or name in INPUT_SOURCE_CALLS:
                continue
            for kw in node.keywords:
                if kw.arg == "source":
                    yield node.lineno, f"{name}(source=...)", kw.value
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and SOURCE_NAME.match(t.id):
                    yield node.lineno, t.id, node.value


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_sources_are_upstream_urls(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [f"{_rel(path)}:{line} {what}: {piece!r}"
           for line, what, value in _source_values(tree) for piece in _bad_pieces(value)]
    assert bad == [], "sources must be https URLs joined by '; ' (prose goes in detail):\n" + "\n".join(bad)


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """Every string constant and every comment of a module, with its line."""
    src = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_no_reference_outside_the_repository(path: Path) -> None:
    bad = [f"{_rel(path)}:{line}: {text.strip()[:120]!r}"
           for line, text in _texts(path) if any(rx.search(text) for rx in FORBIDDEN)]
    assert bad == [], "cite docs/ or an upstream URL, not the research notes or internal issues:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_no_citation_written_as_prose(path: Path) -> None:
    """Tables of (..., source) tuples are not `source=` arguments; they must hold URLs all the same."""
    bad = []
    for line, text in _texts(path):
        prose = URLS.sub("", text)
        if PROSE_CITATION.search(prose):
            bad.append(f"{_rel(path)}:{line}: {text.strip()[:120]!r}")
    assert bad == [], "write the citation as a URL:\n" + "\n".join(bad)


def test_the_rule_itself() -> None:
    assert is_source(None) and is_source("") and is_source("https://github.com/verl-project/verl/blob/v0.9.0/setup.py")
    assert is_source("https://pypi.org/project/verl/0.9.1/; https://github.com/vllm-project/vllm-ascend/issues/6206")
    for prose in ("npu-smi info Health column", "verl 0.9.1 wheel METADATA", "doctor probes (DESIGN.md)",
                  "https://x.org/a (see §3)", "https://x.org/a;https://x.org/b", "http://x.org/a"):
        assert not is_source(prose), prose
    tree = ast.parse('finding("x", source="verl.md §1.4")\nSRC_A = "https://a.org/b; " "c"\n'
                     'InputError("m", source="bug.json")\nfinding("y", source=SRC_A + "; https://c.org/d")')
    flagged = [(what, piece) for _line, what, value in _source_values(tree) for piece in _bad_pieces(value)]
    assert sorted(flagged) == [("SRC_A", "https://a.org/b; c"), ("finding(source=...)", "verl.md §1.4")]
    assert PROSE_CITATION.search("vllm-project/vllm-ascend#130") and PROSE_CITATION.search("PR !2650 'support verl'")
    assert not PROSE_CITATION.search(URLS.sub("", "https://github.com/vllm-project/vllm-ascend/issues/130"))
