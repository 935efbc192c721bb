"""Files an installed distribution's RECORD lists that are gone from disk (`python.missing_files`, snapshot rule 12).

What `pip uninstall` of one of two distributions that both install one directory leaves (`jwt` and `PyJWT` both
ship `jwt/`; `opencv-python` and `opencv-python-headless` both ship `cv2/`): pip deletes every path the uninstalled
one's RECORD lists, the survivor's too. The survivor stays installed and `pip check` (Requires-Dist only) is
silent, while `import cv2` fails and `import jwt` finds a namespace package without `jwt.encode`. The probe looks
at the file an import needs first (a package's `__init__.py`, a module file) and, only when it is gone, counts
every file the RECORD lists under that name (doctor/probes/_target_probe.py `missing_files` says why not more).

Severity: an error for a package a verl job imports on Ascend (the stack set of doctor/checks/declared.py) or one
verl requires for the target (its Requires-Dist whose marker holds); a warning otherwise. The fix reinstalls that
exact release without touching its dependencies, with the target's own pip.
"""

from __future__ import annotations

from collections.abc import Iterator

from doctor.checks.declared import STACK
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import known, normalize_name

RECORD_DOC = "https://packaging.python.org/en/latest/specifications/recording-installed-packages/"


@check("installed-files", "packages", findings=("installed-files-missing",))
def installed_files(ctx: CheckContext) -> Iterator[Finding]:
    """Every installed distribution still has the files its RECORD lists under its top-level names."""
    py = ctx.snapshot.python
    items = py.missing_files if known(py) and known(py.missing_files) else None
    if items is None:
        skip("the snapshot does not say whether installed files are missing (older snapshot, or not collected)")
    on_path: set[str] | None = None
    for it in items:
        if not (known(it.dist) and it.dist and known(it.missing) and it.missing):
            continue
        if on_path is None:  # verl's requirements are read only when something is missing
            from doctor.knowledge.pipcheck import requirement_names

            on_path = set(STACK) | requirement_names(ctx.snapshot, "verl")
        name = normalize_name(it.dist)
        version = it.version if known(it.version) and it.version else None
        named = f"{name} {version}" if version else name
        top = it.top_level if known(it.top_level) and it.top_level else "?"
        where = it.location if known(it.location) and it.location else "its site directory"
        total = it.files if known(it.files) else it.missing
        examples = list(it.examples) if known(it.examples) else []
        whole = it.missing == total
        pin = f"'{name}=={version}'" if version else f"'{name}'"
        yield finding(
            "installed-files-missing", "error" if name in on_path else "warning",
            (component_of_distribution(name) or "python",),
            f"{named} is installed but " + (f"all {total}" if whole else f"{it.missing} of the {total}")
            + f" files its RECORD lists under {top} " + ("is" if it.missing == 1 and not whole else "are") + " gone",
            detail=f"{named}'s RECORD lists {total} file(s) under {top} in {where}; "
                   + ("none of them is on disk" if whole else f"{it.missing} are not on disk")
                   + (f" (e.g. {', '.join(examples)})" if examples else "")
                   + f", so `import {top}` " + ("fails" if whole else "fails or gives an incomplete package (a directory "
                                                         "left without its __init__.py imports as an empty namespace)")
                   + ". This is what `pip uninstall` of another distribution that installed the same files leaves "
                   "(jwt and PyJWT both own jwt/, opencv-python and opencv-python-headless both own cv2/): pip "
                   "deletes every path the uninstalled one's RECORD lists. pip check reads Requires-Dist only and "
                   "says nothing.",
            evidence={"dist": name, "version": version, "top_level": top, "files": total, "missing": it.missing,
                      "examples": examples},
            key=name,
            fix=f"Reinstall {named} over what is left, without touching its dependencies"
                + ("" if version else " (the snapshot does not say its version: pin the one you had)") + ".",
            commands=(f"pip install --force-reinstall --no-deps {pin}",), source=RECORD_DOC)
