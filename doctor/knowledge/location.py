"""Where the knowledge files live: the packaged `profiles/` directory, or a newer copy a cluster carried in.

`DOCTOR_KNOWLEDGE=DIR` (or the global `doctor --knowledge DIR`, which sets it) names a directory laid out like
the packaged `profiles/` (stacks/, releases.toml, signatures.toml, requirements.json). Every loader reads its
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


def knowledge_dir() -> str:
    return override_dir() or packaged_dir()


def knowledge_file(*parts: str) -> str:
    """A file of the knowledge in use: knowledge_file('requirements.json'), knowledge_file('stacks')."""
    return os.path.join(knowledge_dir(), *parts)
