"""What a plain directory on PYTHONPATH holds: the top-level names `import` can find there. Looked at once, before the
checks run, for a snapshot probed on this host (diagnose `local`), so a check can tell a vendored copy of a missing
package from a project directory that merely sits on PYTHONPATH, without touching the disk itself (checks are pure)."""

from __future__ import annotations

import os


def top_level_names(directory: str) -> frozenset[str]:
    """Module files (any suffix the import system loads: .py, .pyc, extension modules) and subdirectories (regular
    or namespace packages) directly in `directory`; empty when it cannot be read. A subdirectory counts whether or
    not it has an `__init__.py`, as `import` finds a namespace package there too."""
    from importlib.machinery import all_suffixes

    suffixes = tuple(all_suffixes())
    names: set[str] = set()
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.is_dir():
                    if e.name.isidentifier():
                        names.add(e.name)
                elif e.name.endswith(suffixes):
                    names.add(e.name.split(".", 1)[0])
    except OSError:
        return frozenset()
    return frozenset(names)
