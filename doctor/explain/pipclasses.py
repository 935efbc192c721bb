"""Installers' and build tools' own verdicts that name the package they wanted, read without a signature.

pip refuses a distribution whose Requires-Python excludes the running interpreter: "Package 'X' requires a different
Python: 3.8.10 not in '>=3.10'" (pip 26.3, _internal/resolution/legacy/resolver.py, UnsupportedPythonVersion). The
interpreter is the one to change (or the package's release): python first, then the package's component.

CMake's find_package names the package whose configuration file it could not find (cmake 3.25 as run here: "Could
not find a package configuration file provided by "Torch" with any of the following names", "asked CMake to find a
package configuration file provided by "Torch", but CMake did not find one"; a Find module's "Could NOT find
Python3 (missing: ...)"): that component is not installed where the build looks (CMAKE_PREFIX_PATH, <Pkg>_DIR). Pure
logic apart from the ownership table.
"""

from __future__ import annotations

import re

from doctor.explain.class_phrases import PIP_PHRASES
from doctor.explain.classes import Class
from doctor.knowledge.ownership import component_of_distribution

SOURCE = "https://github.com/pypa/pip/blob/26.3/src/pip/_internal/resolution/legacy/resolver.py#L105"
_REQUIRES_PYTHON = re.compile(r"Package '(?P<pkg>[\w.-]+)' requires a different Python: (?P<py>\d[\w.+]*) not in "
                              r"'(?P<spec>[^']+)'")
CMAKE_SOURCE = "https://cmake.org/cmake/help/latest/command/find_package.html"
_CMAKE_PACKAGE = re.compile(r"configuration file provided by \"(?P<pkg>[\w.+-]+)\"|\bCould NOT find (?P<pkg2>[\w.+-]+)"
                            r" \(missing:")
PHRASES = PIP_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def pip_class(text: str) -> Class | None:
    if c := _cmake_class(text):
        return c
    m = _REQUIRES_PYTHON.search(text)
    if m is None:
        return None
    pkg, py, spec = m.group("pkg"), m.group("py"), m.group("spec")
    comp = component_of_distribution(pkg)
    return Class(
        "requires-python-unmet", ("python", comp) if comp not in (None, "python") else ("python", "env"),
        f"{pkg} does not support Python {py} (Requires-Python {spec})",
        f"pip read {pkg}'s Requires-Python ({spec}) and the interpreter it installs into is Python {py}: that release "
        f"of {pkg} is not made for it.",
        f"Install into a Python inside {spec} (the stack profile names the Python of each verified stack; doctor "
        f"check compares it), or pick a {pkg} release whose Requires-Python accepts {py}.", SOURCE)


def _cmake_class(text: str) -> Class | None:
    m = _CMAKE_PACKAGE.search(text)
    if m is None:
        return None
    pkg = m.group("pkg") or m.group("pkg2")
    base = re.sub(r"\d+$", "", pkg)  # Python3 -> Python
    low = base.lower()
    comp = "python" if low == "python" else component_of_distribution(low) or component_of_distribution(
        low.replace("_", "-"))
    comps: tuple[str, ...] = (comp, "env") if comp is not None and (comp != "python" or low == "python") \
        else ("system", "env")
    return Class(
        "build-package-not-found", comps, f"The build cannot find the package {pkg} (CMake find_package)",
        f"CMake's find_package looked for {pkg} (its {pkg}Config.cmake, or a Find module's libraries and headers) "
        "and did not find it where it looks: the package is not installed for this build, or its directory is not "
        f"on CMAKE_PREFIX_PATH / {pkg}_DIR.",
        f"Install {pkg} (the release the stack pins), or point the build at it: CMAKE_PREFIX_PATH=<its prefix> "
        f"(for torch: python -c 'import torch; print(torch.utils.cmake_prefix_path)'), or {pkg}_DIR.", CMAKE_SOURCE)
