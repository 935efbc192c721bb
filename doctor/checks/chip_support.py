"""The chip family against each installed package's own docs for its release (profiles/chip-support.toml): a training
package (verl, MindSpeed, MindSpeed-LLM, MindSpeed-RL) on a family its docs rule out, or leave out of an exhaustive list.
vllm-ascend and triton-ascend have their own per-release chip tables (checks/vllm.py, checks/packages.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from doctor.checks.facts import family, val, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot, known

if TYPE_CHECKING:
    from doctor.knowledge.chip_support import ChipRow

# how a finding names a family: the products the docs call it by
FAMILY_NAMES = {
    "A2": "Atlas A2", "A3": "Atlas A3", "950": "Ascend 950",
    "910": "first-generation Ascend 910 (Atlas training series: Atlas 800 model 9000/9010, Atlas 300T)",
    "310P": "310P (Atlas inference series: Atlas 300I Duo / Pro)",
    "310": "310B (Atlas 200I/500 A2 inference products)",
}


SHORT_NAMES = {"910": "first-generation 910", "310P": "310P", "310": "310B"}


def _install(snap: Snapshot, package: str) -> tuple[str | None, str | None]:
    """(the version the install reports, the git branch of its checkout), either None when not known."""
    m = snap.module(package.replace("-", "_"))
    git = val(m, "git") if known(m) and m is not None else None
    branch = val(git, "branch") if git else None
    mv = val(m, "version") if known(m) and m is not None else None
    version = ver(snap, package) or (mv if isinstance(mv, str) and mv.strip() else None)
    return version, branch if isinstance(branch, str) and branch else None


def _names(fams: tuple[str, ...]) -> str:
    return " / ".join(FAMILY_NAMES.get(f, f).split(" (")[0] for f in fams) or "no family"


# No `tables=(load,)`, and its module is imported in the check: the table is read only on a host whose chip family is
# known (an NPU host), so a live check elsewhere neither parses it while the target is probed nor imports its loader
# (~19 M and ~13 M instructions of a `doctor check` on a CPU host).
@check("package-chip-support", "packages", findings=("package-chip-unsupported",))
def package_chip_support(ctx: CheckContext) -> Iterator[Finding]:
    """Each installed package whose docs for its release list chip families (profiles/chip-support.toml) supports this
    host's family: an error when the docs rule it out for what the package does (a training package on the 310P / 310B
    inference chips, MindSpeed 26.x on the first-generation 910), a warning when an exhaustive list leaves it out."""
    snap = ctx.snapshot
    fam = family(snap)
    if not fam:
        skip("the chip family is not known")
    from doctor.knowledge.chip_support import load

    table = load()
    installs = [(p, *_install(snap, p)) for p in table.scope]
    installs = [(p, v, b) for p, v, b in installs if v is not None or b is not None]
    if not installs:
        skip("no package whose docs' chip support is read is installed with a known version")
    for package, version, branch in installs:
        verdict = table.verdict(package, version, fam, branch)
        if verdict is None:
            continue
        yield _finding(table.scope[package], package, version, branch, fam, verdict.severity, verdict.rows,
                       table.supporting(package, fam))


def _finding(scope: str, package: str, version: str | None, branch: str | None, fam: str, severity: str,
             rows: tuple[ChipRow, ...], others: tuple[ChipRow, ...]) -> Finding:
    what = f"{package} {version or ''}".strip() + (f" ({branch})" if branch and rows[0].branches else "")
    listed = tuple(dict.fromkeys(f for r in rows for f in r.supported))
    fam_name = FAMILY_NAMES.get(fam, fam)
    if severity == "error":
        title = f"{what} does not support {scope} on the {fam_name}: its docs list {_names(listed)}"
    else:
        title = f"{what}'s docs do not list the {fam_name} for {scope}: they list {_names(listed)}"
    by_says: dict[str, list[str]] = {}
    for r in rows:
        by_says.setdefault(r.says, []).append(r.label())
    said = "; ".join(f"{', '.join(labels)}: {says}" for says, labels in by_says.items())
    inferred = "; ".join(dict.fromkeys(r.inferred for r in rows if r.inferred and fam in r.excluded))
    short = SHORT_NAMES.get(fam, fam)
    detail = (f"{package}'s docs for this release ({said})." if len(rows) == 1 else
              f"The docs of every {package} release that reports {version} ({said}).")
    if severity == "error":
        detail += (f" They rule the {short} out for {scope}." if not inferred else
                   f" They support {scope} on none of the {short}'s products. Inferred: {inferred}.")
    else:
        detail += (f" The {short} is older than the products they list and not among them: {scope} on it is not "
                   "what the docs support.")
    fix = f"Run {package} on a chip family its docs list ({_names(listed)})"
    alt = [r for r in others if r not in rows]
    if alt:
        fix += (f", or use a {package} release whose docs list the {short} "
                f"({', '.join(dict.fromkeys(r.label() for r in alt))})")
    if fam in ("310P", "310"):
        fix += f"; the {fam} is an inference chip: serve models there, train on Atlas A2 / A3"
    evidence: dict[str, Any] = {
        "package": package, "version": version, "branch": branch, "chip_family": fam,
        "docs_list": list(listed), "read_at": [r.label() for r in rows],
        "docs_rule_out": list(dict.fromkeys(f for r in rows for f in r.excluded)) or None,
        "inferred": inferred or None,
    }
    return finding(
        "package-chip-unsupported", severity, (component_of_distribution(package) or "python", "npu"), title, detail=detail, evidence=evidence,
        fix=fix + ".", key=package, source="; ".join(dict.fromkeys(r.source for r in rows)))
