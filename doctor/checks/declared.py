"""What the installed distributions declare, against what is installed: `pip check`, for the snapshot's
interpreter (doctor/knowledge/pipcheck.py holds the evaluation).

Each unmet requirement is one finding naming the declaring distribution, the requirement, what is installed
and the METADATA it was read from. Severity by where the declaring package sits (issue 22):
- error on verl's import path: verl, what verl itself requires, and the torch / torch-npu / vllm /
  vllm-ascend / MindSpeed / Megatron stack (these are imported when a verl job starts);
- warning for any other installed distribution;
- info when the chosen profile names the conflict as upstream's own (`upstream_conflicts`): the documented
  stack itself carries it, so it must not turn a verified stack red (docs/design.md severity policy).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.knowledge.pipcheck import Unmet, bare, requirement_names, same_requirement, unmet
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# The packages a verl job imports on Ascend, whatever verl's own METADATA lists (MindSpeed and Megatron come
# from git and are not in it): docs/verl-mindspeed.md, verl's Ascend install guide.
STACK = frozenset({
    "verl", "torch", "torch-npu", "torchvision", "vllm", "vllm-ascend", "triton-ascend", "mindspeed", "megatron-core",
    "mbridge", "transformers", "tensordict", "ray", "numpy",
})
PIP_CHECK_SOURCE = "https://pip.pypa.io/en/stable/cli/pip_check/"


def _severity(u: Unmet, on_path: set[str], conflicts: tuple[Mapping[str, str], ...]) -> tuple[str, Mapping[str, str] | None]:
    for c in conflicts:
        if c.get("package") == u.package and same_requirement(c.get("requirement", ""), u.requirement):
            return "info", c
    return ("error" if u.package in on_path else "warning"), None


def _components(u: Unmet) -> tuple[str, ...]:
    declaring = component_of_distribution(u.package) or "python"
    first = "python" if u.kind == "python" else (component_of_distribution(u.name) or "python")
    return (first,) + ((declaring,) if declaring != first else ())


def _where(u: Unmet) -> str:
    return u.metadata or f"{u.package}'s METADATA"


@check("declared-requirements", "packages",
       findings=("requirement-missing", "requirement-version-unmet", "requires-python-unmet"))
def declared_requirements(ctx: CheckContext) -> Iterator[Finding]:
    """Every Requires-Dist and Requires-Python the installed distributions declare is met (pip check)."""
    snap = ctx.snapshot
    if not known(snap.packages) or not any(known(p.requires_dist) or known(p.requires_python)
                                          for p in snap.packages.values()):
        skip("the snapshot does not record what the packages declare (Requires-Dist; `doctor collect` records it)")
    on_path = set(STACK) | requirement_names(snap, "verl")
    conflicts: tuple[Mapping[str, str], ...] = tuple(getattr(ctx.profile, "upstream_conflicts", ()) or ())
    for u in unmet(snap):
        sev, conflict = _severity(u, on_path, conflicts)
        yield _finding(u, sev, conflict, ctx)


def _finding(u: Unmet, sev: str, conflict: Mapping[str, str] | None, ctx: CheckContext) -> Finding:
    decl = f"{u.package} {u.version}" if u.version else u.package
    evidence: dict[str, Any] = {"package": u.package, "version": u.version, "requirement": u.requirement,
                                "requires": u.name, "installed": u.installed, "metadata": u.metadata}
    if u.extra:
        evidence["extra"] = u.extra
    src = conflict["source"] if conflict else PIP_CHECK_SOURCE
    detail_src = f"Declared in {_where(u)}."
    if conflict:
        detail_src += f" The verified stack {ctx.profile.name} carries this conflict upstream ({conflict['source']})."
    if u.kind == "python":
        return finding(
            "requires-python-unmet", sev, _components(u),
            f"{decl} requires Python {u.requirement}; the interpreter is {u.installed}",
            detail=f"Requires-Python is what the package's own METADATA declares: pip would not install this release "
                   f"for this interpreter, and it may use syntax or APIs this Python lacks. {detail_src}",
            evidence=evidence, key=f"{u.package}:python",
            fix=f"Use a Python that satisfies {u.requirement} for this environment, or install a release of "
                f"{u.package} that supports Python {u.installed}.",
            source=src)
    if u.kind == "missing":
        why = f" (for its extra [{u.extra}])" if u.extra else ""
        return finding(
            "requirement-missing", sev, _components(u),
            f"{decl} requires {u.requirement}{why}, which is not installed",
            detail=f"The package declares this requirement for this interpreter and platform, and no distribution "
                   f"named {u.name} is installed: importing the code that needs it fails with ModuleNotFoundError. "
                   f"{detail_src}",
            evidence=evidence, key=f"{u.package}:{u.name}",
            fix=f"Install what {u.package} declares (into the same interpreter).",
            commands=(f"pip install '{bare(u.requirement)}'",), source=src)
    return finding(
        "requirement-version-unmet", sev, _components(u),
        f"{decl} requires {u.requirement}, but {u.name} {u.installed} is installed",
        detail=f"The installed {u.name} is outside the range the package declares (pip check reports the same "
               f"conflict). {detail_src}",
        evidence=evidence, key=f"{u.package}:{u.name}",
        fix=f"Install a {u.name} in the declared range, or a release of {u.package} that accepts {u.name} {u.installed}.",
        commands=(f"pip install '{bare(u.requirement)}'",), source=src)
