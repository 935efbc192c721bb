"""Installed (or stated) releases that PyPI lists as yanked, with the reason their maintainers gave.

PEP 592: a yanked release is one its maintainers withdrew without deleting it, because it is broken or otherwise
not to be used (transformers 4.57.0 "Error in the setup causing installation issues", numpy 2.4.0 "Backward
compatibility bug", torchvision 0.15.0 "Contains an incorrect torch dependency"). pip still installs it for an exact
pin (`==`), which is how it lands in an environment: an old requirements file, a lock file, a copied command line.
pip says so once, at install time; nothing says so afterwards. The yanked flag and the reason are what PyPI's release
list declares (profiles/requirements/ records them with the read date; the index holds them, so this check reads no
project file unless it has something to report).

A warning: the maintainers' reason may matter to this job or not ("The documentation is not building correctly"),
and the finding quotes it so the user can tell. A build that is not PyPI's (a local version label, an editable or
VCS install, the chosen stack's own source build) is another artifact than the one yanked and is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import known

PYPI_FILES = "https://files.pythonhosted.org/"  # PyPI's file host: an archive from there is the file PyPI published


def _pypi_build(name: str, pkg: Any, profile: Any) -> bool:
    """Whether the installed distribution is (as far as the snapshot says) the file PyPI published: not an
    editable or VCS / directory install, nor an archive from elsewhere than PyPI's file host (a wheel file is taken
    for PyPI's, wherever it was copied from), and not a release the chosen stack builds from source."""
    if pkg.editable is True or (known(pkg.commit) and pkg.commit):
        return False
    url = pkg.url if known(pkg.url) and isinstance(pkg.url, str) else ""
    if url and not url.endswith(".whl") and not url.startswith(PYPI_FILES):
        return False
    return not (profile is not None and profile.builds(name, pkg.version))


def _line(version: str) -> tuple[int, ...] | None:
    """The release line (major.minor) of a version, None when it cannot be read."""
    from doctor.knowledge.versions import parse_pkg_version

    v = parse_pkg_version(version)
    return v.release[:2] if v is not None else None


def later_release(table: Any, name: str, version: str) -> str | None:
    """The release to move to: the first later final release PyPI did not yank, of the same major.minor when there
    is one (numpy 2.4.0 -> 2.4.1); a later pre-release only for a pre-release with no final after it; None when the
    table holds none. The smallest move, not the newest patch: a package released in lockstep with another one pins
    it exactly (torchvision 0.15.1 requires torch==2.0.0, 0.15.2 torch==2.0.1), so the next release is the one that
    keeps the rest of the environment."""
    from packaging.version import Version

    from doctor.knowledge.versions import parse_pkg_version

    v = parse_pkg_version(version)
    if v is None:
        return None
    later = sorted((Version(k), k) for k, d in table.projects[name].items() if d.yanked is None and Version(k) > v)
    pool = [(w, k) for w, k in later if not w.is_prerelease] or (later if v.is_prerelease else [])
    same = [k for w, k in pool if w.release[:2] == v.release[:2]]
    return same[0] if same else (pool[0][1] if pool else None)


def _table() -> Any:
    from doctor.knowledge.requirements import load_requirements  # its index only, until a release was yanked

    return load_requirements()


@check("yanked-releases", "packages", findings=("release-yanked",), tables=(_table,))
def yanked_releases(ctx: CheckContext) -> Iterator[Finding]:
    """No installed release is one PyPI lists as yanked."""
    snap = ctx.snapshot
    pkgs = snap.packages if known(snap.packages) else {}
    if not pkgs:
        skip("no packages in the snapshot")
    table = _table()
    for name, pkg in sorted(pkgs.items()):
        version = pkg.version
        if not isinstance(version, str) or not version or name not in table.index:
            continue
        reason = table.yanked(name, version)
        if reason is None or not _pypi_build(name, pkg, ctx.profile):
            continue
        to = later_release(table, name, version)
        said = f'"{reason}"' if reason else "(no reason given)"
        page = f"https://pypi.org/project/{name}/{version}/"
        yield finding(
            "release-yanked", "warning", (component_of_distribution(name) or "python",),
            f"{name} {version} is a release PyPI lists as yanked: {said}",
            detail=f"Its maintainers withdrew {name} {version} from PyPI (PEP 592: yanked releases are broken or not "
                   f"to be used); pip installs it only for an exact pin. "
                   + (f"Their reason: {said}. " if reason else "They gave no reason. ")
                   + f"Read from PyPI's release list on {table.read}.",
            evidence={"package": name, "version": version, "reason": reason, "later_release": to,
                      "table_read": table.read},
            key=name,
            fix=(f"Install {name} {to}, the first later release {'of its line ' if _line(to) == _line(version) else ''}"
                 "that PyPI did not yank"
                 if to else f"Install a later release of {name} that PyPI did not yank")
                + f", and drop the exact pin (`{name}=={version}`) that chose the yanked one.",
            commands=(f"pip install '{name}=={to}'" if to else f"pip install --upgrade '{name}'",),
            source=page)
