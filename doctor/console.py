"""The one I/O facade. Commands return results; only this module writes to the terminal.

With `--json`, stdout carries exactly one JSON document and every human line goes to stderr. Colour is
off under `--no-color`, `NO_COLOR`, CI, or when the stream is not a terminal; prompts and spinners are
off in CI and when stdin/stderr are not terminals.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any

_CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")


def running_in_ci(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(v) not in (None, "", "0", "false", "False") for v in _CI_VARS)


_STYLES = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36", "dim": "2", "bold": "1"}


@dataclass
class Console:
    """The one I/O facade: `--json` data goes to stdout, everything meant for people to stderr."""

    json_mode: bool = False
    color: bool = False
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose
    interactive: bool = False
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    err: IO[str] = field(default_factory=lambda: sys.stderr)

    @classmethod
    def create(cls, *, json_mode: bool = False, no_color: bool = False, verbose: int = 0, quiet: bool = False) -> Console:
        ci = running_in_ci()
        human = sys.stderr if json_mode else sys.stdout
        color = not (no_color or "NO_COLOR" in os.environ or ci or json_mode) and _isatty(human)
        interactive = not ci and _isatty(sys.stdin) and _isatty(sys.stderr)
        return cls(json_mode=json_mode, color=color, verbosity=-1 if quiet else verbose, interactive=interactive)

    @property
    def human(self) -> IO[str]:
        """Where people-facing text goes: stderr when stdout is reserved for JSON."""
        return self.err if self.json_mode else self.out

    def style(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(_STYLES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def print(self, text: str = "", *, min_verbosity: int = 0) -> None:
        if self.verbosity >= min_verbosity:
            print(text, file=self.human)

    def status(self, text: str) -> None:
        """Progress line: always stderr, hidden under -q."""
        if self.verbosity >= 0:
            print(self.style(text, "dim"), file=self.err, flush=True)

    def error(self, text: str) -> None:
        print(self.style("error: ", "red", "bold") + text, file=self.err)

    def emit_json(self, data: Any) -> None:
        self.out.write(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False))
        self.out.write("\n")
        self.out.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
