"""A `--set` pin judged the way `doctor check` would judge the stack it leaves.

`--set transformers=4.57.1` on a verl 0.9.1 stack (verl declares transformers>=5.5.3,!=5.6.0,<5.11) used to give
`install: ok` and a multi-GB install that check then calls broken. So before anything runs, check's own
`declared-requirements` rule runs on the stack the plan would leave: the plan's pins (after `--set`) at their
exact versions, over what the target already has, for the snapshot's Python and arch. What each release declares
comes from the published-metadata table (profiles/requirements.json). Only what a `--set` pin breaks counts
(the verified stack's own pins are check's business): an error there (a package on verl's import path) refuses
the install, exit 2, naming `--set`; a warning is allowed and said as an `install-set-breaks-requirement`
finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from doctor.errors import RefusedError
from doctor.report import Finding, finding


def plan_packages(plan: Any, installed: Mapping[str, str | None]) -> dict[str, str]:
    """name -> version the target holds after the plan: what is installed, overlaid by the plan's exact pins.
    A range or wildcard pin leaves the installed version when it satisfies the pin, else the version unknown."""
    from doctor.installers import steps as st
    from doctor.knowledge.versions import pkg_satisfies

    out = {n: v for n, v in installed.items() if v}
    for name, spec in plan.pins:
        v = st.exact(spec) if "*" not in spec else None
        if v is not None:
            out[name] = v
        elif not (name in out and pkg_satisfies(out[name], spec)):
            out.pop(name, None)
    return out


def check_sets(profile: Any, facts: Any, plan: Any, sets: Mapping[str, str]) -> list[Finding]:
    """Refuse (RefusedError, exit 2) a --set pin that check would call an error; the warning-level ones back."""
    if not sets:
        return []
    from doctor.checks.declared import declared_requirements
    from doctor.checks.runner import CheckContext, Skipped
    from doctor.snapshot.model import normalize_name, snapshot_from_dict

    pkgs = plan_packages(plan, facts.installed)
    snap = snapshot_from_dict({
        "schema": "doctor.snapshot/1",
        "host": {"arch": facts.arch},
        "python": {"version": f"{facts.python_version}.0"},
        "packages": {n: {"version": v} for n, v in pkgs.items()},
    }, "<the plan>")
    try:
        found = list(declared_requirements(CheckContext(snapshot=snap, profile=profile)))
    except Skipped:
        return []
    names = {normalize_name(n) for n in sets}
    mine = [f for f in found if f.evidence.get("package") in names or f.evidence.get("requires") in names]
    errors = [f for f in mine if f.severity.value == "error"]
    if errors:
        f = errors[0]
        culprit = f.evidence["requires"] if f.evidence.get("requires") in names else f.evidence["package"]
        raise RefusedError(
            f"{culprit}={sets.get(culprit) or pkgs.get(culprit)} breaks what {f.evidence['package']} "
            f"{f.evidence.get('version')} declares ({f.evidence.get('requirement')}); `doctor check` would report "
            f"it as an error ({f.id}, {f.source}). Pin a version the requirement allows, or leave {culprit} to the "
            "profile", source="--set", path=culprit)
    def title(f: Finding) -> str:
        e = f.evidence
        culprit = e["requires"] if e.get("requires") in names else e["package"]
        return (f"--set {culprit}={sets.get(culprit) or pkgs.get(culprit)}: {e['package']} {e.get('version')} "
                f"requires {e.get('requirement')}")

    return [finding(
        "install-set-breaks-requirement", "warning", f.components, title(f),
        detail=(f.detail + " " if f.detail else "") + "Allowed (`doctor check` would warn, not fail); installed as asked.",
        evidence=dict(f.evidence), fix=f.fix.text if f.fix else None, source=f.source) for f in mine
        if f.severity.value == "warning"]
