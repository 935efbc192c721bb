"""Score `doctor explain` on a fresh test set: real reports no rule was written from.

    python -m tests.fresh.score                                     # tests/fresh/reports.toml, this worktree's doctor
    python -m tests.fresh.score reports2.toml                       # the second fresh set (a name in tests/fresh/)
    python -m tests.fresh.score reports4.toml                       # the fourth set (reports3.toml is the third)
    python -m tests.fresh.score reports5.toml                       # the fifth set (session five, 23 reports)
    python -m tests.fresh.score reports6.toml                       # the sixth set (session six, 16 reports; 13+ held back)
    python -m tests.fresh.score reports7.toml                       # the seventh set (15 reports; 8+ held back)
    python -m tests.fresh.score reports8.toml                       # the eighth set (15 reports; 8+ held back)
    python -m tests.fresh.score reports9.toml                       # the ninth set (10 reports; 5 held back)
    python -m tests.fresh.score reports10.toml                      # the tenth set (7 reports; 3 held back)
    python -m tests.fresh.score reports11.toml                      # the eleventh set (11 reports; 5 held back)
    python -m tests.fresh.score reports12.toml                      # the twelfth set (8 reports; 4 held back)
    python -m tests.fresh.score reports13.toml                      # the thirteenth set (6 reports; 3 held back)
    cd OTHER && PYTHONPATH=$PWD python /path/to/tests/fresh/score.py [FILE]  # another branch's doctor, same labels

FILE is a file name in tests/fresh/ or a path; the default stays reports.toml so earlier figures reproduce.

The reports, their validation and the hit rule come from the files next to this one (loaded by path), so any
branch's `doctor` package is measured against the same labels with the corpus's rule (`corpus.hit`): some finding
at the expected severity or worse names an expected component first or second. This set is no half of the corpus,
so its misses may be printed.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPORTS = HERE / "reports.toml"
REPORTS2 = HERE / "reports2.toml"
REPORTS3 = HERE / "reports3.toml"
REPORTS4 = HERE / "reports4.toml"
REPORTS5 = HERE / "reports5.toml"
REPORTS6 = HERE / "reports6.toml"
REPORTS7 = HERE / "reports7.toml"
REPORTS8 = HERE / "reports8.toml"
REPORTS9 = HERE / "reports9.toml"
REPORTS10 = HERE / "reports10.toml"
REPORTS11 = HERE / "reports11.toml"
REPORTS12 = HERE / "reports12.toml"
REPORTS13 = HERE / "reports13.toml"


def _corpus_module() -> ModuleType:
    """tests/corpus/corpus.py of this checkout, whatever `tests` package PYTHONPATH would resolve first."""
    path = HERE.parent / "corpus" / "corpus.py"
    spec = importlib.util.spec_from_file_location("_fresh_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


corpus = _corpus_module()


def resolve(name: str | Path | None = None) -> Path:
    """The reports file: None is reports.toml; a bare name is looked up next to this file, else taken as a path."""
    if name is None:
        return REPORTS
    path = Path(name)
    if not path.is_absolute() and (HERE / path).is_file():
        return HERE / path
    return path


def load(path: Path = REPORTS) -> list[Any]:
    return list(corpus.load_file(path))


def results(path: Path = REPORTS) -> list[tuple[Any, bool, list[Any]]]:
    """(report, hit, findings) for every report with log lines."""
    from doctor.explain.stream import explain_lines

    out = []
    for r in load(path):
        if r.log is None:
            continue
        findings = explain_lines(r.log.splitlines())
        out.append((r, corpus.hit(findings, r.components, r.severity), findings))
    return out


def _finding(f: Any) -> str:
    return f"{f.id} [{f.severity.value}] {'/'.join(f.components[:2])}"


def summary(path: Path = REPORTS) -> str:
    import doctor

    rows = results(path)
    good = sum(ok for _, ok, _ in rows)
    label = "fresh" if path == REPORTS else f"fresh {path.name}"  # the default line reads as it always did
    lines = [f"doctor from {Path(doctor.__file__).resolve().parent.parent}",
             f"{label}: {good}/{len(rows)} = {good / len(rows):.0%} explained" if rows else f"{label}: no reports"]
    total, hits = Counter(r.category for r, _, _ in rows), Counter(r.category for r, ok, _ in rows if ok)
    for cat, n in sorted(total.items(), key=lambda kv: (hits[kv[0]] / kv[1], -kv[1])):
        lines.append(f"  {cat:17} {hits[cat]:2}/{n:<2} {hits[cat] / n:4.0%}")
    missed = [(r, fs) for r, ok, fs in rows if not ok]
    if missed:
        lines.append("missed (expected -> found):")
        for r, fs in missed:
            found = "; ".join(_finding(f) for f in fs[:3]) or "nothing"
            lines.append(f"  {r.id}: {'/'.join(r.components)} [{r.severity}] -> {found}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        print("usage: python -m tests.fresh.score [REPORTS_FILE]", file=sys.stderr)
        return 2
    path = resolve(args[0] if args else None)
    if not path.is_file():
        print(f"error: no reports file {path}", file=sys.stderr)
        return 2
    print(summary(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
