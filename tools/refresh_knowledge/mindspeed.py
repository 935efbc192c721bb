"""MindSpeed: every release branch's README (the Megatron-LM it checks out and names) and setup.py (the version
it reports) against the MindSpeed <-> Megatron table; the release notes of MindSpeed (docs/zh/release_notes_core.md)
and MindSpeed-LLM (docs/zh/release_notes_llm.md) at their default branch: the CANN and PyTorch (and Megatron-LM)
each MindSpeed Core branch is paired with."""

from __future__ import annotations

import re
from collections.abc import Iterable

from doctor.knowledge.matrix import MindSpeedRow
from tools.refresh_knowledge import extract
from tools.refresh_knowledge.diff import Difference, Findings, same_cann
from tools.refresh_knowledge.gitdir import GitDir

REPO = "Ascend/MindSpeed"
NOTES = {"mindspeed": ("Ascend/MindSpeed", "docs/zh/release_notes_core.md"),
         "mindspeed-llm": ("Ascend/MindSpeed-LLM", "docs/zh/release_notes_llm.md")}
_BRANCH = re.compile(r"^(?:\d+\.\d+\.\d+_)?core_r\d+\.\d+\.\d+$|^master$")


def check(git: GitDir, rows: Iterable[MindSpeedRow], out: Findings, notes: bool = False) -> None:
    """Every branch's README and setup.py; with `notes`, also the release notes at the default branch."""
    rows = tuple(rows)
    if notes:
        check_notes(git, rows, out)
    ours = {r.branch: r for r in rows}
    for b in sorted(x for x in git.branches() if _BRANCH.match(x)):
        commit = git.commit(b)
        url = f"https://github.com/{REPO}/blob/{commit}/README.md"
        readme = extract.mindspeed_megatron(git.show(b, "README.md"))
        m = re.search(r"__version__\s*=\s*'([^']+)'", git.show(b, "setup.py") or "")
        reports = m.group(1) if m else None
        out.count("mindspeed")
        r = ours.get(b)
        if r is None:
            out.add(Difference("mindspeed", "missing-row", f"MindSpeed {b}", None,
                               f"Megatron-LM {readme.get('version') or readme.get('checkout')}, reports {reports}", url))
            continue
        documented = readme.get("version") or _ref_series(readme.get("checkout"))
        if documented and documented != r.megatron:
            out.add(Difference("mindspeed", "changed", f"MindSpeed {b} Megatron-LM", r.megatron, documented, url))
        ck = readme.get("checkout")
        if ck and ck != (r.readme_checkout or r.checkout):
            out.add(Difference("mindspeed", "changed", f"MindSpeed {b} checkout", r.readme_checkout or r.checkout, ck, url))
        if reports and reports != r.reports:
            out.add(Difference("mindspeed", "changed", f"MindSpeed {b} reports", r.reports, reports,
                               url.replace("README.md", "setup.py")))


def _ref_series(ref: str | None) -> str | None:
    """The Megatron-core a checkout ref names: core_v0.12.1 / v0.15.3 -> exact, a core_rX.Y.0 branch -> 'X.Y'."""
    m = re.match(r"^(?:core_)?v(\d+\.\d+\.\d+)$", ref or "")
    if m:
        return m.group(1)
    m = re.match(r"^core_r(\d+)\.(\d+)\.0$", ref or "")
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return None


def check_notes(git: GitDir, rows: Iterable[MindSpeedRow], out: Findings, name: str = "mindspeed") -> None:
    """The pairings the release notes of MindSpeed (name='mindspeed') or MindSpeed-LLM ('mindspeed-llm') give."""
    ours = {r.branch: r for r in rows}
    repo, path = NOTES[name]
    head = git.head_branch() or "master"
    if not git.has(head):
        return
    url = f"https://github.com/{repo}/blob/{git.commit(head)}/{path}"
    for n in extract.mindspeed_release_notes(git.show(head, path)):
        out.count(name)
        r = ours.get(n["branch"])
        pairing = f"CANN {n['cann']}, torch {n['torch']}" + (f", Megatron-LM {n['megatron']}" if n["megatron"] else "")
        if r is None:
            out.add(Difference(name, "missing-row", f"MindSpeed {n['branch']}", None, pairing, url))
            continue
        if r.cann is None or not same_cann(r.cann, n["cann"]):
            out.add(Difference(name, "changed", f"MindSpeed {n['branch']} CANN", r.cann, n["cann"], url))
        if n["torch"] and r.torch != n["torch"]:
            out.add(Difference(name, "changed", f"MindSpeed {n['branch']} torch", r.torch, n["torch"], url))
        if n["megatron"] and n["megatron"] not in (r.checkout, r.readme_checkout):
            out.add(Difference(name, "changed", f"MindSpeed {n['branch']} Megatron-LM", r.checkout, n["megatron"], url))
