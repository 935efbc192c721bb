"""One command for the installs a report asks for, beside each finding's own line.

A venv where verl was installed with `--no-deps` gets one finding per missing requirement (30 on verl 0.9.1), each
with its own `pip install 'X'` line: right one by one, and tiresome to paste. Lines that differ only in what they
install (the same interpreter's pip, no per-package flag such as `--no-deps` or `--force-reinstall`, the same steps
before it: `-m ensurepip`) are put together into one `pip install A B 'C>=1'` line, each requirement shell-quoted as
it needs, and pip resolves them together. A requirement on a distribution that another finding's line names with a
different range is left to its own line (the two findings disagree; one pip run would refuse both). Each finding
keeps its own fix; this only adds the summary (the report's `install_all`). A fix whose sentence is itself such a
line (no command lines beside it) counts like one. A requirement finding's line is left out when another line of the
same run installs the package whose declaration it is about (kernels for transformers 5.10.4's extras beside
`'transformers<5.0.0'`): that run replaces the release the line was for. The installed torch is kept (`keep`: its
`torch==X` joins the line): pip resolving the run together would otherwise be free to replace it for a requirement of
one of the packages (tensordict 0.15 needs torch>=2.11) with PyPI's build, a CUDA torch of several GB on x86_64 that
torch-npu was not built against; pinned, pip says which requirement conflicts instead. Pure: it reads findings."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.report import Finding, Severity, sorted_findings

# the options that pick where an install runs (uv pip's target interpreter), not what it installs
_TARGET_OPTIONS = ("--python",)


def pip_install_words(line: str) -> tuple[tuple[str, ...], list[str]] | None:
    """(the command up to what it installs, the words after it) of one `... pip install ...` command (`pip`,
    `<python> -m pip`, `uv pip ... --python X`); None for any other line (another pip command, `&&`, `;`, a pipe)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if "install" not in words or any(w in ("&&", ";", "|") for w in words):
        return None
    i = words.index("install")
    if i == 0 or words[i - 1] != "pip":
        return None
    head, rest = words[:i + 1], words[i + 1:]
    while rest and rest[0] in _TARGET_OPTIONS and len(rest) > 1:
        head, rest = head + rest[:2], rest[2:]
    return tuple(head), rest


def _split(line: str) -> tuple[tuple[str, ...], list[str]] | None:
    """(the command up to what it installs, the requirements) of a plain `... pip install REQ...` line; None for any
    other line (another pip command, a per-package option, `&&`, an editable or a local path)."""
    got = pip_install_words(line)
    if got is None:
        return None
    head, rest = got
    if not rest or any(w.startswith("-") or "/" in w.partition("@")[0] for w in rest):
        return None
    return head, rest


def is_command(head: tuple[str, ...]) -> bool:
    """A sentence's `... pip install` is a command line, not prose ("Run pip install x in the venv"): it starts with
    pip, uv or an interpreter's path."""
    return head[0] in ("pip", "uv") or head[0].startswith("/")


def requirement_name(req: str) -> str | None:
    """The canonical distribution name a requirement string names; None when it is not one."""
    try:
        return canonicalize_name(Requirement(req).name)
    except InvalidRequirement:
        return None


def install_all(findings: Iterable[Finding], keep: Mapping[Any, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """The summary lines: for each node and each way of running pip that two or more errors or warnings install
    with, `command` (one line, the steps before it joined with `&&`), the `requirements` it installs, the
    `findings` (id and key) it stands for and the `others` of that node whose fix has command lines this one does not
    run (another option, a stack's index, a clone, a range two findings disagree on). `keep`: per node, the installed
    releases the run must not replace (`torch==2.9.0`); each joins the line unless a finding's own line names that
    distribution, and `kept` lists them."""
    # per node, steps before and pip: (finding, its (name, requirement) pairs, the package its declaration is of)
    groups: dict[tuple[Any, ...], list[tuple[str, list[tuple[str | None, str]], str | None]]] = {}
    commanded: list[tuple[Any, str]] = []  # (node, finding) of every error or warning whose fix has command lines
    for f in sorted_findings(list(findings)):
        if f.severity is Severity.INFO or f.fix is None:
            continue
        if f.fix.commands:
            commanded.append((f.node, f"{f.id}:{f.key}" if f.key else f.id))
        # a fix with no command lines whose sentence is itself one (`fix: .../python -m pip install 'cachetools'`)
        lines = f.fix.commands or (f.fix.text,)
        pip = [(k, s) for k, c in enumerate(lines) if (s := _split(c)) is not None
               and (f.fix.commands or is_command(s[0]))]
        if len(pip) != 1:
            continue
        k, (head, reqs) = pip[0]
        names = [requirement_name(r) for r in reqs]
        if None in names:
            continue
        g = groups.setdefault((f.node, tuple(lines[:k]), head), [])
        premise = f.evidence.get("package") if f.id.startswith("requirement-") else None
        g.append((f"{f.id}:{f.key}" if f.key else f.id, list(zip(names, reqs, strict=True)),
                  requirement_name(premise) if isinstance(premise, str) else None))
    out = []
    for (node, before, head), members in groups.items():
        # a line for what an installed release declares is moot when the same run replaces that release
        members = [m for m in members
                   if m[2] is None or not any(m[2] == n for o in members if o is not m for n, _ in o[1])]
        wanted: dict[str | None, set[str]] = {}
        for _, own, _ in members:
            for name, req in own:
                wanted.setdefault(name, set()).add(req)
        agreed = {n for n, r in wanted.items() if len(r) == 1}
        reqs = list(dict.fromkeys(r for _, own, _ in members for n, r in own if n in agreed))
        by = [fid for fid, own, _ in members if any(n in agreed for n, _ in own)]
        if len(by) < 2:
            continue
        kept = [r for r in (keep or {}).get(node, ()) if requirement_name(r) not in wanted]
        line = " && ".join([*before, f"{shlex.join(head)} {' '.join(shlex.quote(r) for r in reqs + kept)}"])
        others = list(dict.fromkeys(fid for n, fid in commanded if n == node and fid not in by))
        out.append({"command": line, "requirements": reqs, "findings": by, "others": others,
                    **({"kept": kept} if kept else {}), **({"node": node} if node else {})})
    return out
