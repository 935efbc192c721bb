"""What `lint` and `launch` refuse as input (exit 2, naming the file and the reason) rather than report on.

README's exit-code contract: input that cannot be what the command needs is exit 2 with the file and the reason.
An empty script was linted into a report whose one warning (lint-no-invocation) said "nothing was checked", exit 0:
a CI job linting a script that a failed `git checkout` or a `> run.sh` redirect left empty passed. A `--model`
path that exists here but holds no readable model (a directory without config.json, a config.json that is not
JSON) was a warning too, and launch wrote the script around it. A `--model` path that does not exist here stays a
warning for launch: README's laptop that prepares the cluster's job has no copy of the model, and no test here can
tell a typo from a path only the cluster's nodes have. lint's `--model` is read here and nowhere else, so a path
that does not exist is exit 2 there.
"""

from __future__ import annotations


def script_without_commands(text: str) -> str | None:
    """Why a script holds nothing to lint ("the file is empty", "the file holds only comments"), or None."""
    if not text.strip():
        return "the file is empty"
    if all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()):
        return "the file holds only comments"
    return None
