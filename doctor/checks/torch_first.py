"""Which packages of a `fix all at once` line would make pip install torch, in a target that has none.

The summary line keeps an installed torch pinned (doctor.checks.install_all `keep`). With no torch in the target
there is nothing to keep: pip resolves the line and takes PyPI's torch for whichever package requires it (accelerate,
peft, torchdata, tensordict: verl's own requirements) — on x86_64 a CUDA build of several GB, on any machine a
release chosen by the newest requirement, not the build torch-npu pairs with. The line stays (it is right for
everything else); the report says which packages pull torch, so the stack's torch goes in first. Read from the
requirements table's index: whether each package's newest release (what pip would pick for an unpinned name)
requires torch outside extras (doctor.knowledge.requirements.requires_torch, decided when the table is written).
The same holds for each finding's own line (`pip install 'accelerate>=0.21.0'`): a finding whose fix would pull
torch into such a target says so in its fix (`with_torch_first`), in the words the summary line uses (`sentence`).
In a target that has torch, each finding's own line that would resolve such a package gets the installed torch
pinned on it, as the summary line does (`with_torch_kept`): `pip install 'vllm==0.11.0'` alone lets pip replace the
torch torch-npu was built against with the one vllm pins; with `torch==2.9.0` beside it pip keeps torch, or names
the conflict and changes nothing. Pure: the table is passed in."""

from __future__ import annotations

import shlex
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from doctor.checks.install_all import is_command, pip_install_words, requirement_name
from doctor.report import Finding, Fix


def torch_pullers(requirements: Iterable[str], table: Any) -> list[str]:
    """The names among `requirements` whose newest release in `table` (doctor.knowledge.requirements) requires torch,
    in their order; torch itself when the line names it. Unknown packages say nothing."""
    out: list[str] = []
    for req in requirements:
        name = requirement_name(req)
        if name is None or name in out:
            continue
        if name == "torch":
            out.append(name)
            continue
        if table.newest_requires_torch(name):
            out.append(name)
    return out


def sentence(pullers: Sequence[str], then: str = "this line") -> str:
    """What to do first, said of `pullers` (torch_pullers' names): the summary line's note and each fix's."""
    verb = "requires" if len(pullers) == 1 else "require"
    return (f"torch is not installed in this environment and {', '.join(pullers)} {verb} it: pip would take PyPI's "
            "torch (on x86_64 a CUDA build of several GB), not the build torch-npu pairs with. Install the stack's "
            f"torch and torch-npu first (`doctor install` does, at the profile's pins), then {then}.")


# options of `pip install` that leave pip resolving the dependencies of what it installs (`--no-deps` does not)
_RESOLVING = frozenset({"-U", "--upgrade", "--force-reinstall", "--no-cache", "--no-cache-dir", "--pre", "--user",
                        "-q", "--quiet"})


def _line_requirements(line: str) -> list[str]:
    """The requirements a pip install line resolves with their dependencies: none under `--no-deps`, nor for a line
    with another option (an index, a constraints file: what it takes is not the table's) or a path."""
    got = pip_install_words(line)
    if got is None:
        return []
    rest = got[1]
    if any(w.startswith("-") and w not in _RESOLVING for w in rest):
        return []
    return [w for w in rest if not w.startswith("-") and "/" not in w.partition("@")[0]]


def fix_pullers(fix: Fix | None, table: Any) -> list[str]:
    """The packages a fix's pip install lines (its commands, or its sentence when that is itself the command line)
    would take torch for, in a target that has none. A line that names torch installs the torch it means (the CPU
    index's build): torch is not a puller of its own fix."""
    if fix is None:
        return []
    own = pip_install_words(fix.text) if not fix.commands else None
    lines = fix.commands or ((fix.text,) if own is not None and is_command(own[0]) else ())
    reqs = [r for line in lines for r in _line_requirements(line)]
    if any(requirement_name(r) == "torch" for r in reqs):
        return []
    return torch_pullers(reqs, table)


def with_torch_first(findings: Iterable[Finding], torchless: set[Any], table: Any) -> list[Finding]:
    """The findings, each one of a node in `torchless` whose own fix would pull torch carrying `sentence` in its fix
    text and the pullers as `fix.torch_first`."""
    out = []
    for f in findings:
        pull = fix_pullers(f.fix, table) if f.node in torchless and f.fix is not None else []
        if pull and f.fix is not None:
            then = "this fix" if len(f.fix.commands) > 1 else "this line"
            f = replace(f, fix=replace(f.fix, text=f"{f.fix.text.rstrip()} {sentence(pull, then)}",
                                       torch_first=tuple(pull)))
        out.append(f)
    return out


def _pullers_of_line(line: str, table: Any) -> list[str]:
    reqs = _line_requirements(line)
    if any(requirement_name(r) == "torch" for r in reqs):
        return []
    return torch_pullers(reqs, table)


def with_torch_kept(findings: Iterable[Finding], keep: Mapping[Any, str], table: Any,
                    paired: Container[Any] = ()) -> list[Finding]:
    """The findings, each one of a node in `keep` ({node: "torch==X"}, its installed torch) whose own pip install
    lines would resolve a package that requires torch getting that pin on each such line (and on its sentence, when
    the sentence is itself the line), a note in its text and the pin as `fix.kept`; the note says that torch is the
    build torch-npu pairs with only on a node in `paired` (torch-npu installed: a CPU venv has no such pairing to
    keep). A line that names torch, has
    `--no-deps`, an index or another option pip would not resolve the table's releases with is left as it is."""
    out = []
    for f in findings:
        pin = keep.get(f.node)
        fix = f.fix
        if pin is None or fix is None:
            out.append(f)
            continue
        own = pip_install_words(fix.text) if not fix.commands else None
        text_is_line = own is not None and is_command(own[0])
        commands = tuple(f"{c} {shlex.quote(pin)}" if _pullers_of_line(c, table) else c for c in fix.commands)
        text = fix.text
        if text_is_line and _pullers_of_line(text, table):
            text = f"{text} {shlex.quote(pin)}"
        if commands == fix.commands and text == fix.text:
            out.append(f)
            continue
        why = " (the build torch-npu pairs with)" if f.node in paired else ""
        note = (f"{pin} is on the line so pip keeps the installed torch{why}: a release that needs another torch "
                "makes pip name the conflict and change nothing, rather than replace it.")
        text = text if text_is_line else f"{text.rstrip()} {note}"
        out.append(replace(f, fix=replace(fix, text=text, commands=commands, kept=(pin,))))
    return out
