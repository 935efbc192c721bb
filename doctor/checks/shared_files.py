"""Files two installed distributions both install with different content (`python.shared_files`, snapshot rule 11),
read from what each distribution's RECORD declares.

pip installs a wheel's files over whatever is there and never compares RECORDs across distributions, and `pip check`
reads only Requires-Dist: two distributions that ship the same module (`jwt` and `PyJWT`, `opencv-python` and
`opencv-python-headless`, mainline `triton` and `triton-ascend`) leave whichever was installed last on disk, and
uninstalling either deletes files the other needs. The RECORD digests say which paths differ; the probe recomputes
the digest of one of them to say whose copy is on disk now. An egg-info install (`setup.py install`) lists its
files in installed-files.txt without digests: its shared files are compared through the file on disk, which
differs when it is not the other one's RECORD copy; two egg-info installs are not compared.

Severity: an error when one of the two is a package a verl job imports on Ascend (the stack set of
doctor/checks/declared.py): its code on disk is not the release it declares. A warning otherwise. Files that both
list with the same digest (namespace packages written the pkgutil way: `opencensus/__init__.py`) are not a finding.
The triton / triton-ascend pair has its own finding (triton-with-triton-ascend), which says what to keep.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.declared import STACK
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import known, normalize_name

PIP_INSTALL_DOC = "https://packaging.python.org/en/latest/specifications/recording-installed-packages/"
# pairs another check reports with a specific fix (doctor/checks/packages.py, triton)
_REPORTED_ELSEWHERE = frozenset({frozenset({"triton", "triton-ascend"})})


def _version(pkgs: Any, name: str, here: str | None) -> str | None:
    """The version `packages` gives for `name`, unless that is another copy of it (earlier on sys.path, in another
    site directory) than the one in the directory `here`: the snapshot does not say this copy's version."""
    p: Any = pkgs.get(name)
    if p is None or not (known(p.version) and p.version):
        return None
    there = p.location if known(p.location) and p.location else None
    return p.version if there is None or here is None or there == here else None


def _keep(a: str, b: str) -> str | None:
    """The one to keep when exactly one of the two is a package of the stack."""
    on = [n for n in (a, b) if n in STACK]
    return on[0] if len(on) == 1 else None


@check("shared-files", "packages", findings=("files-overwritten-by-another-package",))
def shared_files(ctx: CheckContext) -> Iterator[Finding]:
    """No two installed distributions install the same file with different content."""
    py = ctx.snapshot.python
    items = py.shared_files if known(py) and known(py.shared_files) else None
    if items is None:
        skip("the snapshot does not say which files distributions share (older snapshot, or not collected)")
    pkgs = ctx.snapshot.packages if known(ctx.snapshot.packages) else {}
    for it in items:
        if not (known(it.dists) and len(it.dists) == 2 and known(it.differ) and it.differ):
            continue
        a, b = (normalize_name(n) for n in it.dists)
        if frozenset({a, b}) in _REPORTED_ELSEWHERE:
            continue
        top = it.top_level if known(it.top_level) else "?"
        if (it.differ == 1 and known(it.examples) and list(it.examples) == [f"{top}/__init__.py"]
                and a.startswith(normalize_name(top) + "-") and b.startswith(normalize_name(top) + "-")):
            # two portions of a pkgutil / pkg_resources namespace (backports.weakref, backports.functools_lru_cache),
            # each shipping its own variant of the <top>/__init__.py that declares it: any of them serves all
            continue
        on_disk = normalize_name(it.on_disk) if known(it.on_disk) and it.on_disk else None
        loser = (b if on_disk == a else a) if on_disk else None
        keep = _keep(a, b)

        here = it.location if known(it.location) and it.location else None

        def named(n: str, here: str | None = here) -> str:
            v = _version(pkgs, n, here)
            return f"{n} {v}" if v else n

        examples = list(it.examples) if known(it.examples) else []
        total = it.files if known(it.files) else it.differ
        disk = (f"{named(on_disk)}'s copy is on disk (installed last), so {named(loser)} runs with files that are "
                "not its own" if on_disk and loser else "neither RECORD's digest matches the file on disk (an egg-info "
                "install, whose installed-files.txt records no digest, cannot be recognised)")
        comps = tuple(dict.fromkeys(component_of_distribution(n) or "python" for n in ((loser, on_disk) if loser and on_disk else (a, b))))
        cmds: tuple[str, ...] = ()
        if keep:
            other = b if keep == a else a
            v = _version(pkgs, keep, here)
            fix = (f"Keep {keep}, which the stack imports: uninstall both, then reinstall {keep} alone (and drop "
                   f"whatever requires {other}).")
            cmds = (f"pip uninstall -y {a} {b}", f"pip install --no-deps --force-reinstall '{keep}" + (f"=={v}'" if v else "'"))
        else:
            fix = (f"Keep one of them: uninstall both and reinstall the one your code needs (`pip uninstall -y {a} {b}` "
                   f"then `pip install --no-deps --force-reinstall <that one>`); a package that requires the other one "
                   "must then be satisfied another way.")
        yield finding(
            "files-overwritten-by-another-package", "error" if a in STACK or b in STACK else "warning", comps,
            f"{named(a)} and {named(b)} install the same files under {top}: {it.differ} of {total} differ",
            detail=f"Both RECORDs list {total} file(s) under {top} in {here or 'the same site directory'}, "
                   f"{it.differ} with different digests" + (f" (e.g. {', '.join(examples)})" if examples else "")
                   + f"; {disk}. pip overwrote one copy with the other and does not check this (pip check reads "
                   "Requires-Dist only); uninstalling either one deletes files the other needs.",
            evidence={"dists": [a, b], "top_level": top, "files": total, "differ": it.differ, "examples": examples,
                      "on_disk": on_disk},
            key=f"{a} + {b}", fix=fix, commands=cmds, source=PIP_INSTALL_DOC)
