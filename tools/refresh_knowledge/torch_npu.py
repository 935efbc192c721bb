"""torch-npu (Ascend/pytorch): COMPATIBILITY.en.md and the release notes (docs/zh/release_notes.md: each TorchNPU
wheel and its CANN) at the default branch against our torch-npu -> CANN rows, and every `v<torch>-<TorchNPU
release>` branch's version.txt (the builds those tables do not list yet)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from doctor.knowledge.matrix import PTA_CANN, TorchNpuRow
from tools.refresh_knowledge import extract
from tools.refresh_knowledge.diff import Difference, Findings, same_cann
from tools.refresh_knowledge.gitdir import GitDir
from tools.refresh_knowledge.verl import parse_url

REPO = "Ascend/pytorch"
NOTES = "docs/zh/release_notes.md"
_BRANCH = re.compile(r"^v(\d+\.\d+\.\d+)-(\d+\.\d+\.(?:\d+|rc\d+))$")


def check(git: GitDir, rows: Iterable[TorchNpuRow], out: Findings) -> None:
    ours = {r.version: r for r in rows}
    head = git.head_branch() or "master"
    text = git.show(head, "COMPATIBILITY.en.md") if git.has(head) else None
    compat = extract.compat_rows(text)
    lines = extract.compat_branches(text)
    url = f"https://github.com/{REPO}/blob/{git.commit(head) if git.has(head) else head}/COMPATIBILITY.en.md"
    for v, cann in compat.items():
        out.count("torch-npu")
        r = ours.get(v)
        if r is None:
            if _pre_2(v):
                continue  # torch-npu 1.x: before any stack the doctor covers
            out.add(Difference("torch-npu", "missing-row", f"torch-npu {v}", None, f"CANN {cann}", url))
        elif not same_cann(r.cann, cann):
            out.add(Difference("torch-npu", "changed", f"torch-npu {v} CANN", r.cann, cann, url, r.note or None))
    notes_url = url.replace("COMPATIBILITY.en.md", NOTES)
    for n in extract.torch_npu_release_notes(git.show(head, NOTES) if git.has(head) else None):
        out.count("torch-npu")
        r = ours.get(n["wheel"])
        if r is None:
            out.add(Difference("torch-npu", "missing-row", f"torch-npu {n['wheel']}", None,
                               f"CANN {n['cann']} (TorchNPU {n['line']})", notes_url))
        elif not same_cann(r.cann, n["cann"]):
            out.add(Difference("torch-npu", "changed", f"torch-npu {n['wheel']} CANN", r.cann, n["cann"], notes_url,
                               r.note or None))
        line = n["line"]
        if line and line not in PTA_CANN:
            out.add(Difference("torch-npu", "missing-row", f"TorchNPU release {line}", None, f"CANN {n['cann']}", notes_url))
        elif line and not same_cann(PTA_CANN[line], n["cann"]):
            out.add(Difference("torch-npu", "changed", f"TorchNPU release {line} CANN", PTA_CANN[line], n["cann"], notes_url))
    for pta, cann in lines.items():
        if pta in PTA_CANN and not same_cann(PTA_CANN[pta], cann):
            out.add(Difference("torch-npu", "changed", f"TorchNPU release {pta} CANN", PTA_CANN[pta], cann, url))
    for b in git.branches():
        m = _BRANCH.match(b)
        if not m or not m.group(1).startswith("2."):
            continue  # torch-npu 1.x lines predate every stack the doctor covers
        burl = f"https://github.com/{REPO}/blob/{git.commit(b)}/version.txt"
        line_cann = PTA_CANN.get(m.group(2)) or lines.get(m.group(2))
        if line_cann is None:
            out.add(Difference("torch-npu", "missing-row", f"TorchNPU release {m.group(2)} (branch {b})", None,
                               "a release line PTA_CANN does not decode", burl))
            continue
        cann = line_cann
        for v in _versions(git.show(b, "version.txt")):
            out.count("torch-npu")
            r = ours.get(v)
            if r is None:
                out.add(Difference("torch-npu", "missing-row", f"torch-npu {v}", None, f"CANN {cann} (branch {b})", burl))
            elif not same_cann(r.cann, cann) and v not in compat:
                out.add(Difference("torch-npu", "changed", f"torch-npu {v} CANN", r.cann, f"{cann} (branch {b})", burl))
    for r in ours.values():
        cited = parse_url(r.source)
        if cited is not None and cited[0] == REPO and cited[2] == NOTES:
            if not git.has(cited[1]):  # release notes newer than this clone: said, not re-read
                out.skip("torch-npu", f"{r.version} ({r.source}: a commit newer than this clone)")
            continue
        if cited is None or cited[0] != REPO or not cited[2].endswith("version.txt"):
            if cited is None:
                out.skip("torch-npu", f"{r.version} ({r.source})")
            continue
        if not git.has(cited[1]):
            out.add(Difference("torch-npu", "not-in-clone", f"torch-npu {r.version}", cited[1], None, r.source))
        elif r.version not in _versions(git.show(cited[1], "version.txt")):
            out.add(Difference("torch-npu", "changed", f"torch-npu {r.version} source", r.version,
                               ",".join(_versions(git.show(cited[1], "version.txt"))), r.source))


def _versions(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").splitlines() if x.strip() and not x.lstrip().startswith("#")]


def _pre_2(v: str) -> bool:
    return not v.startswith("2.")
