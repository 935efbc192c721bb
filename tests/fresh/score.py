"""Score `doctor explain` on the fresh test set (tests/fresh/reports.toml): real reports no rule was written from.

    python -m tests.fresh.score                                     # this worktree's doctor
    cd OTHER && PYTHONPATH=$PWD python /path/to/tests/fresh/score.py  # another branch's doctor, same labels

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


def load() -> list[Any]:
    return list(corpus.load_file(REPORTS))


def results() -> list[tuple[Any, bool, list[Any]]]:
    """(report, hit, findings) for every report with log lines."""
    from doctor.explain.stream import explain_lines

    out = []
    for r in load():
        if r.log is None:
            continue
        findings = explain_lines(r.log.splitlines())
        out.append((r, corpus.hit(findings, r.components, r.severity), findings))
    return out


def _finding(f: Any) -> str:
    return f"{f.id} [{f.severity.value}] {'/'.join(f.components[:2])}"


def summary() -> str:
    import doctor

    rows = results()
    good = sum(ok for _, ok, _ in rows)
    lines = [f"doctor from {Path(doctor.__file__).resolve().parent.parent}",
             f"fresh: {good}/{len(rows)} = {good / len(rows):.0%} explained" if rows else "fresh: no reports"]
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


def main() -> int:
    print(summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
