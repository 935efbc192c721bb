"""Bash itself as the oracle for what a script's entry-point call receives.

The script runs under real bash with nothing real to run: PATH holds only a few harmless tools (date,
dirname, basename, cat, tee, mkdir, seq, …), every other command is a no-op through bash's
`command_not_found_handle`, `python`/`python3` are functions that record their arguments (NUL-separated) when
they run an entry point and otherwise succeed, and `source` reads only files that exist. HOME and the working
directory are a temporary directory. What bash recorded is then compared with what the walker says, a hole
(`$(…)`, `$HOME`) matching any text.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from doctor.launch.script_parser import Invocation

SAFE_TOOLS = ("date", "dirname", "basename", "cat", "tee", "mkdir", "seq", "printf", "echo", "head", "tail",
              "tr", "cut", "wc", "expr", "sed", "awk", "grep", "readlink", "realpath", "pwd", "true", "false",
              "env", "uname", "id", "whoami", "nproc", "hostname", "sort", "tac", "xargs", "ls", "test")

INJECTED = "envvalue"  # given to a variable bash stopped on (`set -u`): any word holding it matches

PRELUDE = r"""
command_not_found_handle() { return 0; }
__doctor_capture() {
    for a in "$@"; do
        case "$a" in
            verl.*main_*|recipe.*main_*|*main_*.py)
                __doctor_n=$(( ${__doctor_n:-0} + 1 ))
                printf '%s\0' "$@" > "$__DOCTOR_OUT/call.$__doctor_n"
                env -0 > "$__DOCTOR_OUT/env.$__doctor_n"
                return 0 ;;
        esac
    done
    return 0
}
python3() { __doctor_capture "$@"; }
python() { __doctor_capture "$@"; }
source() { if [ -f "$1" ]; then builtin source "$@"; fi; return 0; }
ulimit() { return 0; }
"""


def run_bash(script: Path, tmp: Path, env: dict[str, str] | None = None) -> list[list[str]]:
    """Every entry-point call bash makes running `script` in the sandbox, as argv lists."""
    bindir, out, home = tmp / "bin", tmp / "out", tmp / "home"
    for d in (bindir, out, home):
        d.mkdir(parents=True, exist_ok=True)
    for tool in SAFE_TOOLS:
        real = shutil.which(tool)
        if real and not (bindir / tool).exists():
            (bindir / tool).symlink_to(real)
    runner = tmp / "runner.sh"
    runner.write_text(PRELUDE + f"\nbuiltin source {_q(str(script))}\n", encoding="utf-8")
    full_env = {"PATH": str(bindir), "HOME": str(home), "USER": "user", "__DOCTOR_OUT": str(out), **(env or {})}
    for _ in range(8):  # a variable the script requires (`set -u`) gets a value, then bash runs again
        r = subprocess.run(["/bin/bash", "--norc", "--noprofile", str(runner)], cwd=home, env=full_env, timeout=30,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        missing = re.findall(r"(\w+): unbound variable", r.stderr.decode("utf-8", "replace"))
        if not missing or any(m in full_env for m in missing):
            break
        full_env.update({m: INJECTED for m in missing})
    calls = sorted(out.glob("call.*"), key=lambda p: int(p.name.split(".")[1]))
    return [p.read_bytes().decode("utf-8", "replace").split("\0")[:-1] for p in calls]


def environment_of_calls(tmp: Path) -> list[dict[str, str]]:
    """The environment each entry-point call of the last `run_bash(script, tmp)` started with (`env -0` inside
    the call: what the entry point's process would inherit), in call order."""
    envs = sorted((tmp / "out").glob("env.*"), key=lambda p: int(p.name.split(".")[1]))
    return [dict(item.split("=", 1) for item in p.read_bytes().decode("utf-8", "replace").split("\0") if "=" in item)
            for p in envs]


def exports_agree(ours: Invocation, theirs: dict[str, str]) -> bool:
    """Every variable the walker says the call is started with, with its value, is in bash's environment there."""
    return all(name in theirs and (theirs[name] == value or INJECTED in theirs[name])
               for name, value in ours.exports.items())


def _q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def after_entry(argv: list[str]) -> list[str]:
    for i, a in enumerate(argv):
        if re.match(r"^(verl|recipe)\..*main_", a) or re.search(r"main_\w+\.py$", a):
            return argv[i + 1:]
    return argv


def matches(ours: Invocation, theirs: list[str]) -> bool:
    """Our words (holes as wildcards) against bash's words after the entry point."""
    mine = ours.args
    if len(mine) != len(theirs):
        return False
    return all(_word_pattern(m).fullmatch(t) or INJECTED in t for m, t in zip(mine, theirs, strict=True))


def _word_pattern(text: str) -> re.Pattern[str]:
    """A word as shown by the walker: `$(…)`, backticks, `$NAME`, `${…}`, `$((…))` and `~` stand for any text."""
    parts = re.split(r"(\$\(\(.*?\)\)|\$\([^)]*\)+|`[^`]*`|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?]|^~)",
                     text)
    out = []
    for i, p in enumerate(parts):
        out.append(".*" if i % 2 else re.escape(p))
    return re.compile("".join(out), re.S)


def environment_for(label: tuple[str, ...]) -> dict[str, str]:
    """Variables that make bash take the path a label describes (`case ${DEVICE} → npu)`)."""
    env: dict[str, str] = {}
    for choice in label:
        m = re.search(r"case \"?\$\{?(\w+)\}?\"? → ([\w.-]+)\)", choice)
        if m:
            env[m.group(1)] = m.group(2)
        m = re.search(r"`\[\[? \"?\$\{?(\w+)\}?\"? (?:==|=) \"?([\w.-]*)\"? \]\]?` (true|false)$", choice)
        if m:
            env[m.group(1)] = m.group(2) if m.group(3) == "true" else m.group(2) + "_other"
        m = re.search(r"`\[\[? -([zn]) \"?\$\{?(\w+)\}?\"? \]\]?` (true|false)$", choice)
        if m:
            empty = (m.group(1) == "z") == (m.group(3) == "true")
            env[m.group(2)] = "" if empty else "set"
    return env


__all__ = ["after_entry", "environment_for", "matches", "run_bash", "os"]
