"""pip's own verdicts that name a package and the Python it asks for, read without a signature.

pip refuses a distribution whose Requires-Python excludes the running interpreter: "Package 'X' requires a different
Python: 3.8.10 not in '>=3.10'" (pip 26.3, _internal/resolution/legacy/resolver.py, UnsupportedPythonVersion). The
interpreter is the one to change (or the package's release): python first, then the package's component. Pure
logic apart from the ownership table.
"""

from __future__ import annotations

import re

from doctor.explain.classes import Class
from doctor.knowledge.ownership import component_of_distribution

SOURCE = "https://github.com/pypa/pip/blob/26.3/src/pip/_internal/resolution/legacy/resolver.py#L105"
_REQUIRES_PYTHON = re.compile(r"Package '(?P<pkg>[\w.-]+)' requires a different Python: (?P<py>\d[\w.+]*) not in "
                              r"'(?P<spec>[^']+)'")
PHRASES: tuple[tuple[str, ...], ...] = (("requires a different Python",),)


def pip_class(text: str) -> Class | None:
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
