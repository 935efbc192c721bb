"""Score the mined corpus: `doctor explain` on each report's log lines, `doctor check` on its snapshot.

    python -m tests.corpus.score            # corpus size by tracker and category, rates per half
    python -m tests.corpus.score --misses   # also list the reports each half misses
    python -m tests.corpus.score --by-category   # hit rates per category and half (aggregates only, no ids)
    python -m tests.corpus.score --by-page       # rates of the reports whose page a signature cites, and the rest
    python -m tests.corpus.score --fit           # the fitting half's logs only, with its misses (held-out never run)

Both scorers use the public-case rule (`corpus.hit`): some finding at the expected severity or worse names one of
the expected components first or second.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import tomllib

from doctor.checks.diagnose import diagnose
from doctor.explain.signatures import explain_lines
from doctor.snapshot.model import snapshot_from_dict
from tests.corpus.corpus import Report, hit, load

SIGNATURES = Path(__file__).resolve().parents[2] / "profiles" / "signatures.toml"


def explained(report: Report) -> bool:
    """`doctor explain` on the report's log lines names an expected component at the expected severity."""
    assert report.log is not None
    return hit(explain_lines(report.log.splitlines()), report.components, report.severity)


def diagnosed(report: Report) -> bool:
    """`doctor check` on the snapshot the report's stated facts imply finds the cause."""
    doc = report.snapshot_document()
    assert doc is not None
    snap = snapshot_from_dict(doc, source=f"corpus:{report.id}")
    return hit(diagnose([(None, snap, None)]).findings, report.check_components, report.check_severity)


@dataclass
class Score:
    total: int = 0
    good: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, report_id: str, ok: bool) -> None:
        self.total += 1
        self.good += ok
        if not ok:
            self.misses.append(report_id)

    @property
    def rate(self) -> float:
        return self.good / self.total if self.total else 0.0

    def __str__(self) -> str:
        # one decimal: 118/158 is 74.7 %, which a whole-percent "75%" would show as the 75 % goal met
        return f"{self.good}/{self.total} = {self.rate:.1%}"


@cache
def results() -> tuple[tuple[Report, str, bool], ...]:
    """(report, "logs" | "snapshots", hit) for every scored report, computed once per process."""
    out: list[tuple[Report, str, bool]] = []
    for r in load():
        if r.log is not None:
            out.append((r, "logs", explained(r)))
        if r.snapshot is not None:
            out.append((r, "snapshots", diagnosed(r)))
    return tuple(out)


@cache
def scores() -> dict[tuple[str, str], Score]:
    """(half, "logs" | "snapshots") -> Score."""
    out = {(h, k): Score() for h in ("fit", "held-out") for k in ("logs", "snapshots")}
    for r, kind, ok in results():
        out[(r.half, kind)].add(r.id, ok)
    return out


def by_category(kind: str = "logs") -> dict[str, dict[str, Score]]:
    """category -> half -> Score for one kind of scoring."""
    out: dict[str, dict[str, Score]] = {}
    for r, k, ok in results():
        if k == kind:
            out.setdefault(r.category, {"fit": Score(), "held-out": Score()})[r.half].add(r.id, ok)
    return out


def category_table() -> str:
    """Per-category hit rates of both halves, weakest held-out first: counts only, never a report id."""
    lines = []
    for kind in ("logs", "snapshots"):
        rows = by_category(kind)
        lines.append(f"  {kind} by category (held-out | fit):")
        for cat, halves in sorted(rows.items(), key=lambda kv: (kv[1]["held-out"].rate, -kv[1]["held-out"].total)):
            ho, fit = halves["held-out"], halves["fit"]
            lines.append(f"    {cat:17} {ho.good:3}/{ho.total:<3} {ho.rate:4.0%} | {fit.good:3}/{fit.total:<3} {fit.rate:4.0%}")
    return "\n".join(lines)


def page_key(url: str) -> str:
    """A page independent of the commit it was read at: a GitHub file (owner/repo:path), issue or pull request
    (owner/repo#N, either kind), or a documentation page by its last path segment; other URLs as they are."""
    u = url.strip().split("#")[0].rstrip("/")
    if m := re.match(r"https://github\.com/([^/]+/[^/]+)/(?:blob|tree|raw)/[^/]+/(.+)", u):
        return f"{m[1].lower()}:{m[2]}"
    if m := re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", u):
        return f"{m[1].lower()}#{m[2]}"
    if m := re.match(r"https://(?:www\.)?(hiascend\.com|support\.huawei(?:cloud)?\.com)/.*/([^/?]+?)(?:\.html?|\.md)?"
                     r"(?:\?.*)?$", u):
        return f"{m[1]}:{m[2]}"
    return u


def cited_pages(path: Path = SIGNATURES) -> set[str]:
    """The pages the signature database cites as a source or as the origin of an example."""
    out: set[str] = set()
    for sig in tomllib.loads(path.read_text(encoding="utf-8"))["signature"]:
        for key in ("source", "example_from"):
            out.update(page_key(u) for u in re.findall(r"https://[^\s;,'\"]+", str(sig.get(key, ""))))
    return out


def page_table() -> str:
    """Log hit rates by half and by whether a signature cites the report's own page (a documentation page whose
    other entries were harvested, or the thread itself): the uncited reports are the independent measure."""
    cited = cited_pages()
    rows: dict[tuple[str, bool], Score] = {}
    for r, kind, ok in results():
        if kind == "logs":
            rows.setdefault((r.half, page_key(r.url) in cited), Score()).add(r.id, ok)
    lines = ["  logs by page (the report's page cited by a signature | not cited):"]
    for half in ("fit", "held-out"):
        c, n = rows.get((half, True), Score()), rows.get((half, False), Score())
        lines.append(f"    {half:8} cited {c.good:3}/{c.total:<3} {c.rate:4.0%} | not cited {n.good:3}/{n.total:<3} {n.rate:4.0%}")
    return "\n".join(lines)


def summary(misses: bool = False, categories: bool = False, pages: bool = False) -> str:
    reports = load()
    lines = [f"corpus: {len(reports)} reports"]
    for title, counter in (("by tracker", Counter(r.tracker for r in reports)),
                           ("by category", Counter(r.category for r in reports)),
                           ("by half", Counter(r.half for r in reports))):
        lines.append(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in counter.most_common()))
    for (half, kind), s in scores().items():
        lines.append(f"  {half:8} {kind:9} {s}")
        if misses and s.misses:
            lines.append("    missed: " + " ".join(s.misses))
    if categories:
        lines.append(category_table())
    if pages:
        lines.append(page_table())
    return "\n".join(lines)


def fit_summary() -> str:
    """The fitting half's log rate and misses, to tune on: held-out reports are skipped before anything runs, so
    neither their ids nor their rates can appear (`--misses` prints both halves)."""
    s = Score()
    for r in load():
        if r.half == "fit" and r.log is not None:
            s.add(r.id, explained(r))
    lines = [f"  fit      logs      {s}"]
    if s.misses:
        lines.append("    missed: " + " ".join(s.misses))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_true", help="list the reports each half misses")
    ap.add_argument("--by-category", action="store_true",
                    help="hit rates per category and half (aggregates only: no report ids)")
    ap.add_argument("--by-page", action="store_true",
                    help="log hit rates of the reports whose page a signature cites, and of the rest (aggregates only)")
    ap.add_argument("--fit", action="store_true",
                    help="only the fitting half's logs, with the ids it misses (the held-out half is not run)")
    args = ap.parse_args(argv)
    if args.fit:
        print(fit_summary())
        return 0
    print(summary(args.misses, args.by_category, args.by_page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
