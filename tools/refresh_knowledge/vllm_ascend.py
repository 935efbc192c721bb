"""vllm-ascend: every release tag against the release-matrix rows (requirements.txt, Dockerfile, the tag's own
versioning_policy.md), the release-branch rows at their commits, the newest policy table's rows, and every release
the news (docs/source/user_guide/release_notes.md at the default branch) announces."""

from __future__ import annotations

import re
from collections.abc import Iterable

from doctor.knowledge.matrix import VllmAscendRow
from tools.refresh_knowledge import extract
from tools.refresh_knowledge.diff import Difference, Findings, same_cann, same_spec, version_key
from tools.refresh_knowledge.gitdir import GitDir
from tools.refresh_knowledge.verl import parse_url

REPO = "vllm-project/vllm-ascend"
POLICY = "docs/source/community/versioning_policy.md"
NEWS = "docs/source/user_guide/release_notes.md"
_TAG = re.compile(r"^v\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?$")


def check(git: GitDir, rows: Iterable[VllmAscendRow], out: Findings) -> None:
    rows = list(rows)
    by_version = {r.version: r for r in rows}
    tags = sorted((t for t in git.tags() if _TAG.match(t)), key=lambda t: version_key(t[1:]))
    head = git.head_branch() or "main"
    head_policy = extract.policy_rows(git.show(head, POLICY)) if git.has(head) else {}
    for tag in tags:
        out.count("vllm-ascend")
        if tag[1:] not in by_version:
            out.add(Difference("vllm-ascend", "missing-row", f"vllm-ascend {tag[1:]}", None, f"tag {tag} ({git.date(tag)})",
                               _url(tag, "")))
    for r in rows:
        cited = parse_url(r.source)
        if cited is None or cited[0] != REPO:
            out.skip("vllm-ascend", f"{r.version} ({r.source})")
            continue
        ref = cited[1]
        if not git.has(ref):
            out.add(Difference("vllm-ascend", "not-in-clone", f"vllm-ascend {r.version}", ref, None, r.source))
            continue
        _row(git, r, ref, head_policy, out)
    news = extract.vllm_ascend_release_notes(git.show(head, NEWS)) if git.has(head) else {}
    for v, date in news.items():
        out.count("vllm-ascend")
        if v not in by_version and not any(t[1:] == v for t in tags):
            out.add(Difference("vllm-ascend", "missing-row", f"vllm-ascend {v}", None,
                               f"{head} release notes ({date or 'no date'})", _url(head, NEWS)))
    for v, pol in head_policy.items():
        if v not in by_version and not any(t[1:] == v for t in tags):
            out.add(Difference("vllm-ascend", "missing-row", f"vllm-ascend {v}", None, f"{head} matrix: {pol}",
                               _url(head, POLICY)))


def _url(ref: str, path: str) -> str:
    return f"https://github.com/{REPO}/{'blob' if path else 'tree'}/{ref}/{path}".rstrip("/")


def _row(git: GitDir, r: VllmAscendRow, ref: str, head_policy: dict[str, dict[str, str]], out: Findings) -> None:
    req = extract.requirements(git.show(ref, "requirements.txt"))
    dock = extract.dockerfile(git.show(ref, "Dockerfile"))
    own = extract.policy_rows(git.show(ref, POLICY)).get(r.version, {})
    pol = own or head_policy.get(r.version, {})
    out.count("vllm-ascend")

    def diff(what: str, ours: object, up: object, path: str) -> None:
        out.add(Difference("vllm-ascend", "changed", f"vllm-ascend {r.version} {what}", str(ours), str(up), _url(ref, path),
                           (r.note or "the row keeps this value as an alternative") if _alt(r, what, up) else None))

    if req.get("torch-npu") is not None and (r.torch_npu or "") != req["torch-npu"]:
        diff("torch-npu", r.torch_npu, req["torch-npu"], "requirements.txt")
    if req.get("torch") is not None and not same_spec(r.torch, req["torch"] or None):
        diff("torch", r.torch, req["torch"], "requirements.txt")
    ta = req.get("triton-ascend")
    if ta and r.triton_ascend != ta.lstrip("="):
        diff("triton-ascend", r.triton_ascend, ta, "requirements.txt")
    if pol.get("torch_npu") and pol["torch_npu"] not in r.torch_npu_versions():
        diff("torch-npu (matrix)", r.torch_npu_versions(), pol["torch_npu"], POLICY)
    vllm = dock.get("VLLM_TAG", "").lstrip("v")
    wanted = {x.strip().lstrip("v") for x in pol.get("vllm", "").split("/") if x.strip()} | ({vllm} if vllm else set())
    if r.branch is None and wanted - set(r.vllm_versions()):
        diff("vllm", r.vllm_versions(), sorted(wanted), "Dockerfile")
    cann = pol.get("cann") or dock.get("cann")
    if r.branch is not None:
        cann = dock.get("cann")
    if cann and not any(same_cann(c, cann) for c in r.cann_versions()):
        diff("cann", r.cann_versions(), cann, POLICY if pol.get("cann") and r.branch is None else "Dockerfile")
    if dock.get("cann") and not any(same_cann(c, dock["cann"]) for c in r.cann_versions()):
        diff("cann (Dockerfile)", r.cann_versions(), dock["cann"], "Dockerfile")
    # the 310P image's base: a CANN the row documents for 310P (its own, or a CannAlt for the family)
    p310 = extract.dockerfile(git.show(ref, "Dockerfile.310p")).get("cann_build")
    if p310 and not any(same_cann(c, p310) for c in r.host_canns("310P")):
        diff("cann (Dockerfile.310p)", r.host_canns("310P"), p310, "Dockerfile.310p")
    if pol.get("python") and not same_spec(r.python, pol["python"]):
        diff("python", r.python, pol["python"], POLICY)
    faq = git.show(ref, "docs/source/faqs.md") or ""
    a3 = git.show(ref, "Dockerfile.a3") is not None or bool(re.search(r"Atlas A3 Training", faq))
    if r.branch is None and a3 != r.a3:
        diff("a3", r.a3, a3, "Dockerfile.a3")


def _alt(r: VllmAscendRow, what: str, up: object) -> bool:
    """Our row keeps the other source's value as an accepted alternative, so the disagreement is documented."""
    vals = {str(x).lstrip("=") for x in (up if isinstance(up, list) else [up])}
    if what.startswith("torch-npu"):
        return vals <= set(r.torch_npu_versions())
    if what.startswith("cann"):
        return all(any(same_cann(c, v) for c in r.cann_versions()) for v in vals)
    if what == "vllm":
        return vals <= set(r.vllm_versions())
    return False
