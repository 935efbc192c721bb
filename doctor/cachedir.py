"""Where the doctor keeps what it can rebuild: `$XDG_CACHE_HOME/verl-ascend-doctor` (default `~/.cache/...`).

One place, so the parsed-profile cache and the smoke workload cache always sit side by side and a user who
points XDG_CACHE_HOME elsewhere (a shared CI cache) moves both."""

from __future__ import annotations

import os


def cache_dir(*parts: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verl-ascend-doctor", *parts)
