"""Where the knowledge files live: the packaged `profiles/` directory, or a newer copy a cluster carried in.

`DOCTOR_KNOWLEDGE=DIR` (or the global `doctor --knowledge DIR`, which sets it) names a directory laid out like
the packaged `profiles/` (stacks/, releases.toml, signatures.toml, requirements/). Every loader reads its
file from here and validates it exactly as it validates the packaged copy, so an air-gapped cluster updates
the knowledge by copying a directory, not by installing a new wheel.
"""

from __future__ import annotations

import os

ENV = "DOCTOR_KNOWLEDGE"


def packaged_dir() -> str:
    """`profiles/` inside the installed doctor package (the repo's top-level `profiles/` in a checkout)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiles")


def override_dir() -> str | None:
    """The directory DOCTOR_KNOWLEDGE names (absolute), None when it is unset or empty."""
    d = os.environ.get(ENV, "").strip()
    return os.path.abspath(d) if d else None


# How the user named the copy in use, when the CLI's `--knowledge DIR` set ENV (the reports say what was typed,
# not an environment variable the user never set); reset by every invocation of the CLI.
_NAMED_BY: tuple[str, str] | None = None


def use_override(path: str | None, named_by: str | None) -> None:
    """The CLI's `--knowledge DIR` (named_by "--knowledge"), or None: the environment's DOCTOR_KNOWLEDGE, if any."""
    global _NAMED_BY
    if path is None or named_by is None:
        _NAMED_BY = None
        return
    os.environ[ENV] = os.path.abspath(path)
    _NAMED_BY = (named_by, os.environ[ENV])


def override_named_by() -> str | None:
    """`--knowledge` or `DOCTOR_KNOWLEDGE`: what named the copy in use (None: the packaged copy)."""
    if override_dir() is None:
        return None
    return _NAMED_BY[0] if _NAMED_BY is not None and os.environ.get(ENV) == _NAMED_BY[1] else ENV


def knowledge_dir() -> str:
    return override_dir() or packaged_dir()


def knowledge_file(*parts: str) -> str:
    """A file of the knowledge in use: knowledge_file('requirements', 'index.json'), knowledge_file('stacks')."""
    return os.path.join(knowledge_dir(), *parts)


def table_path(name: str, path: str | None = None) -> str:
    """A table file in use: `path` when given, else the knowledge directory's copy, else the packaged one (a
    knowledge directory carried in from an older doctor may predate the file)."""
    if path:
        return path
    p = knowledge_file(name)
    return p if os.path.exists(p) else os.path.join(packaged_dir(), name)
