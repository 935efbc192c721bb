"""Which other script a command runs, and where that script is on disk — so lint can follow a wrapper.

Upstream verl starts runs through wrappers: main's `tests/special_e2e/run_v1_separate_async_ascend.sh` builds the
Ascend overrides and ends with `exec bash "${SCRIPT_DIR}/run_v1_separate_async.sh" "${params[@]}" "$@"`, and
`tests/special_e2e/sft/test_sft_engine_all.sh` runs `BACKEND=megatron … bash tests/special_e2e/sft/run_sft_engine.sh`
(a path relative to the repository root, where upstream's CI runs it). A lint that stops at the wrapper checks
nothing, so the walker runs the script the command names in a new process of its own (only exported variables and
the arguments reach it).

Pure logic: the file system is asked only whether a candidate path is a file (`exists`, injectable).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from doctor.launch.shell.values import Hole, Str

SHELLS = ("bash", "sh", "dash", "zsh")
# Commands that run the command after them (in the same process, or a child with the same environment and
# arguments): per command, its options that take the next word as a value, and how many operands come before the
# command (`timeout DURATION`). verl's own docs start a run with `nohup bash examples/…/run_….sh … > log 2>&1 &`
# (docs/sglang_multiturn/search_tool_example.rst); `timeout`, `setsid`, `stdbuf`, `nice` are coreutils /
# util-linux commands of the same kind (their man pages give the options).
_PREFIXES: dict[str, tuple[frozenset[str], int]] = {
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "command": (frozenset(), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "setsid": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
}


def _after_prefix(words: list[str | None], i: int) -> int | None:
    """The index of the word after prefix command `words[i]` and its options and operands; None when that command
    does not run what follows it (`command -v bash`)."""
    name = os.path.basename(words[i] or "")
    takes_value, operands = _PREFIXES[name]
    i += 1
    while i < len(words) and words[i] is not None and (words[i] or "").startswith("-") and words[i] != "-":
        w = words[i] or ""
        if w == "--":
            i += 1
            break
        if w in ("-v", "-V") and name == "command":
            return None
        i += 2 if w in takes_value else 1
    return i + operands

# `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, `$(dirname "$0")`, `$(dirname $(readlink -f "$0"))`,
# `$(realpath "$(dirname "${BASH_SOURCE[0]}")")`, `` `dirname $0` ``: the directory of the running script. Read as
# its words: only these commands and `$0` / `${BASH_SOURCE[0]}`, with `dirname` and the script's name in it.
_SCRIPT_DIR_WORDS = {"cd", "dirname", "pwd", "-P", "realpath", "readlink", "-f", "&&", ";", "$0", "${0}",
                     "$BASH_SOURCE", "${BASH_SOURCE}", "${BASH_SOURCE[0]}", ">/dev/null", "2>&1", "--"}


def is_script_dir(hole: Hole) -> bool:
    """Whether a command substitution is one of the usual ways to name the running script's own directory."""
    if hole.why != "command substitution":
        return False
    words = re.sub(r"\$\(|`|\)|\"|'", " ", hole.text).split()
    return ("dirname" in words and any("0" in w or "BASH_SOURCE" in w for w in words)
            and all(w in _SCRIPT_DIR_WORDS for w in words))


def shell_script(argv: list[Str]) -> tuple[int, list[str]] | None:
    """(index of the script word, the words before it) when the command runs a script file with a shell:
    `bash FILE args`, `sh -x FILE`, `exec bash FILE`, `/usr/bin/env bash FILE`, `env A=1 bash FILE`, `timeout 2h
    bash FILE` (any chain of the `_PREFIXES` commands and `env`). None for
    anything else, `bash -c '…'` and a shell reading standard input included. Variable prefixes `env` takes are
    returned as words (`A=1`) for the caller to export."""
    words = [a.value() for a in argv]
    i: int | None = 0
    env: list[str] = []
    while i is not None and i < len(words) and words[i] is not None:
        name = os.path.basename(words[i] or "")
        if name in _PREFIXES:
            i = _after_prefix(words, i)
        elif name == "env":
            i += 1
            while i < len(words) and words[i] is not None and re.match(r"^[A-Za-z_]\w*=", words[i] or ""):
                env.append(words[i] or "")
                i += 1
        else:
            break
    if i is None:
        return None
    if i >= len(words) or words[i] is None or os.path.basename(words[i] or "") not in SHELLS:
        return None
    i += 1
    while i < len(words):
        w = words[i]
        if w is None:
            return i, env  # an unknown word where the file goes: the caller says it could not be resolved
        if w in ("-c", "-s", "-i") or (w.startswith("-") and not w.startswith("--") and "c" in w[1:]):
            return None
        if w in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if w.startswith(("-", "+")):
            i += 1
            continue
        return i, env
    return None


def candidates(word: Str, script: str | None) -> list[str]:
    """Where bash may find the script a word names, most likely first. `script` is the running script's path.

    A leading script-directory substitution (`${SCRIPT_DIR}/x.sh` with `SCRIPT_DIR="$(cd "$(dirname …)" && pwd)"`)
    is that directory; a relative path is taken relative to the running script's directory, then to each of its
    parent directories (the working directory of upstream's CI is the repository root, which is one of them);
    anything else with a hole in it cannot be placed."""
    here = os.path.dirname(os.path.abspath(script)) if script else None
    parts = word.parts
    if parts and isinstance(parts[0], Hole) and is_script_dir(parts[0]) and here is not None:
        rest = Str(parts[1:])
        if not rest.known:
            return []
        return [os.path.normpath(here + rest.text)] if rest.text.startswith("/") else []
    if not word.known:
        return []
    target = word.text
    if target.startswith("~") or target.startswith("$"):
        return []
    if os.path.isabs(target):
        return [target]
    if here is None:
        return []
    out = [os.path.normpath(os.path.join(here, target))]
    d = here
    while os.path.dirname(d) != d:
        d = os.path.dirname(d)
        out.append(os.path.normpath(os.path.join(d, target)))
    return out


def resolve(word: Str, script: str | None, exists: Callable[[str], bool] = os.path.isfile) -> str | None:
    """The first candidate (see `candidates`) that is a file, else None."""
    return next((c for c in candidates(word, script) if exists(c)), None)


_PASSES_ARGS = re.compile(r'"?\$(\{)?[@*]\}?"?')


def passes_own_arguments(command_text: str) -> bool:
    """Whether a command hands its script's own arguments on (`"$@"`, `$*`)."""
    return bool(_PASSES_ARGS.search(command_text))
