"""PyPI against the tables: every release PyPI publishes of a tracked project must be explained by a row (verl:
a release row and its profiles; vllm-ascend: a matrix row; torch-npu: a CANN row, or an entry of
TORCH_NPU_UNPAIRED), and every release the size policy keeps must be in profiles/requirements/. A published
release nothing explains is an unexplained `new-release`. What the kept releases declare (Requires-Python,
Requires-Dist) is compared with the rows that restate it (a verl row's Python, a vllm-ascend row's torch /
torch-npu / triton-ascend pins)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from doctor.knowledge.requirements import RequirementsTable
from tools.refresh_knowledge.diff import Difference, Findings, same_spec
from tools.refresh_knowledge.pypi import PypiRelease, kept

REPO = "pypi"


def _where(r: PypiRelease) -> str:
    return r.url


def _what(r: PypiRelease) -> str:
    arches = sorted({a for t in r.wheels for a in ("aarch64", "x86_64") if a in t})
    files = f"wheels {'/'.join(arches) or 'any'}" if r.wheels else "sdist only"
    return f"PyPI, uploaded {r.uploaded}, {files}"


def check(found: Mapping[str, list[PypiRelease]], k: Any, req: RequirementsTable, out: Findings) -> None:
    """`k` is the refresh's Knowledge (releases, profiles, vllm_ascend, torch_npu rows)."""
    for project, rels in found.items():
        for r in rels:
            out.count(REPO)
            explained = _row(project, r, k, out)
            if explained is False:
                continue
            if kept(r) and req.declared(project, r.version) is None and r.version not in req.unstated(project):
                out.add(Difference(REPO, "new-release", f"{project} {r.version}", None,
                                   f"{_what(r)}; not in profiles/requirements/", _where(r)))
    _declared(k, req, out)


def _row(project: str, r: PypiRelease, k: Any, out: Findings) -> bool:
    """Report `r` when no row explains it; False when it was reported (so the requirements table is not also asked)."""
    v = r.key
    if project == "verl":
        if v.is_devrelease or v < k.releases.rows[0].version:
            return True  # a nightly, or older than the release table (before any Ascend stack)
        row = next((x for x in k.releases.rows if x.version == v), None)
        if row is None:
            out.add(Difference(REPO, "new-release", f"verl {r.version}", None, _what(r), _where(r)))
            return False
        if v >= Version(k.releases.profiles_from) and row.no_profile is None \
                and not any(Version(p.verl) == v for p in k.profiles):
            out.add(Difference(REPO, "new-release", f"verl {r.version} profiles", None, _what(r), _where(r)))
        return True
    if project == "vllm-ascend":
        rows = {Version(x.version): x for x in k.vllm_ascend}
        if v < min(rows) or v in rows:
            return True
        out.add(Difference(REPO, "new-release", f"vllm-ascend {r.version}", None, _what(r), _where(r)))
        return False
    if project == "torch-npu":
        from doctor.knowledge.matrix import TORCH_NPU_UNPAIRED

        rows = {Version(x.version): x for x in k.torch_npu}
        if v.release[0] < 2 or v in rows:
            return True
        unpaired = {Version(u[0]): u for u in TORCH_NPU_UNPAIRED}
        final = Version(v.base_version)
        if v in unpaired:
            out.add(Difference(REPO, "new-release", f"torch-npu {r.version}", None, _what(r), _where(r),
                               f"TORCH_NPU_UNPAIRED: {unpaired[v][2]}"))
        elif v.is_prerelease and final in rows:
            out.add(Difference(REPO, "new-release", f"torch-npu {r.version}", None, _what(r), _where(r),
                               f"a release candidate of {final}, whose row pairs it with CANN {rows[final].cann}"))
        else:
            out.add(Difference(REPO, "new-release", f"torch-npu {r.version}", None, _what(r), _where(r)))
            return False
        return True
    return True


def _pin(reqs: tuple[str, ...], name: str) -> str | None:
    """The unconditional specifier `reqs` give `name` ('torch-npu==2.10.0.post4' -> '==2.10.0.post4'), None without."""
    for line in reqs:
        if ";" in line:
            continue
        m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*(.*)$", line)
        if m and re.sub(r"[-_.]+", "-", m.group(1)).lower() == name:
            return m.group(2).replace(" ", "")
    return None


def _declared(k: Any, req: RequirementsTable, out: Findings) -> None:
    for row in k.releases.rows:
        d = req.declared("verl", row.verl) if not row.snapshot else None
        if d is None or d.requires_python is None:
            continue
        out.count(REPO)
        if not same_spec(row.python, d.requires_python):
            out.add(Difference(REPO, "changed", f"release {row.verl} python", row.python, d.requires_python, d.source))
    for row in k.vllm_ascend:
        d = req.declared("vllm-ascend", row.version) if row.branch is None else None
        if d is None:
            continue
        out.count(REPO)
        tn = _pin(d.requires_dist, "torch-npu")
        if tn and tn.startswith("==") and tn[2:] not in row.torch_npu_versions():
            out.add(Difference(REPO, "changed", f"vllm-ascend {row.version} torch-npu", row.torch_npu, tn, d.source))
        torch = _pin(d.requires_dist, "torch")
        if torch and not same_spec(row.torch, torch):
            out.add(Difference(REPO, "changed", f"vllm-ascend {row.version} torch", row.torch, torch, d.source))
        ta = _pin(d.requires_dist, "triton-ascend")
        if ta and row.triton_ascend and ta.lstrip("=") != row.triton_ascend:
            out.add(Difference(REPO, "changed", f"vllm-ascend {row.version} triton-ascend", row.triton_ascend, ta,
                               d.source, row.note or None))
