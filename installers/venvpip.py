"""What `python -m venv` puts into the venv it makes: the wheels the interpreter's ensurepip installs.

A `--venv DIR` that does not exist yet is made by the run (`python -m venv`, with the pip backend), and until then
nothing is installed there to judge the plan's pre-flight against. But what the new venv will hold is known: venv
runs ensurepip, and ensurepip installs the wheels its interpreter carries (pip 23.2.1 and setuptools 65.5.0 on
CPython 3.11.7, pip 23.0.1 and setuptools 65.5.0 on 3.10.13, pip 21.2.3 on 3.10.0). The pip step (pip >= 21.3,
installers.execute.pip_step) is then judged against that pip before the venv is made, as it is against an existing
target's: an offline run whose wheelhouse cannot bring an old bundled pip up is refused before its first change.

Read from the interpreter's ensurepip package without running it, choosing as ensurepip does (CPython 3.10 to
3.13, `ensurepip._get_packages` / `_find_wheel_pkg_dir_pip`): the wheels in the directory the build names as its
WHEEL_PKG_DIR (Fedora's and Debian's /usr/share/python-wheels, where the distributor keeps them instead of
`_bundled`) when it holds a wheel of each package `_bundled` carries (or `_bundled` is gone), else those of
`ensurepip/_bundled` in the stdlib. Nothing readable (no ensurepip: Debian's python3-venv not installed, where
`python -m venv` fails anyway): unknown, and the step is judged as before, against nothing installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from packaging.utils import InvalidWheelFilename, parse_wheel_filename


def wheel_versions(names: Iterable[str]) -> dict[str, str]:
    """{project: version} of the wheel file names (the highest name of a project when two are there, as ensurepip
    takes the last of its sorted listing); anything not a wheel is left out."""
    out: dict[str, str] = {}
    for n in sorted(names):
        try:
            name, version, _build, _tags = parse_wheel_filename(n)  # as pip reads it (PEP 427)
        except InvalidWheelFilename:
            continue
        out[str(name)] = str(version)
    return out


def choose(bundled: Iterable[str], wheel_pkg_dir: Iterable[str] | None) -> dict[str, str]:
    """What ensurepip installs, from the listings of `_bundled` and of WHEEL_PKG_DIR (None: the build names none)."""
    own = wheel_versions(bundled)
    if wheel_pkg_dir is None:
        return own
    theirs = wheel_versions(wheel_pkg_dir)
    return theirs if "pip" in theirs and set(own) <= set(theirs) else own


def venv_installs(stdlib: str | None, wheel_pkg_dir: str | None,
                  listdir: Callable[[str], list[str]] = os.listdir) -> dict[str, str]:
    """{project: version} that `python -m venv` installs for the interpreter whose stdlib directory and
    WHEEL_PKG_DIR are given (the target probe reads both); {} when neither can be read."""
    def listing(path: str | None) -> list[str] | None:
        if not path:
            return None
        try:
            return listdir(path)
        except OSError:
            return None

    bundled = listing(os.path.join(stdlib, "ensurepip", "_bundled") if stdlib else None)
    return choose(bundled or (), listing(wheel_pkg_dir))
