"""How a finding's `pip ...` commands run on the target the snapshot examined (snapshot rule 13).

Checks write their fixes as plain `pip ...` lines (a verified stack's plan line may set its environment first:
`TORCH_DEVICE_BACKEND_AUTOLOAD=0 pip install ...`, kept as it is); the runner passes every fix through `for_target`
once. A bare `pip` runs whichever pip is first on PATH (the doctor's own venv, pipx under `check --python`), which installs
elsewhere, so each line is made to name the target interpreter, in the way that target can run:

- pip is in the target, or the snapshot does not say (older snapshots): `<exe> -m pip ...`, as always.
- no pip, and uv made the venv (`uv = X.Y.Z` in pyvenv.cfg) or installed a package there (INSTALLER `uv`):
  `uv pip <command> --python <exe> ...`. The probe cannot tell whether `uv` is on the user's PATH (finding it
  would cost the probe an import); the doctor can, for a target on its own host (`check`, `check --python`: the
  probe ran with the doctor's environment; doctor.probes.uv, looked up by diagnose): `uv` when PATH has it, else the doctor's own uv by its full path (the
  one `doctor install` runs), else, with ensurepip there, the ensurepip route below, else no command and a
  sentence saying how to get uv. For a snapshot from a file or a Ray node, whose PATH the doctor cannot look at,
  the line stays `uv pip` (uv made or installed into that venv there). uv pip takes every flag the fixes use (`--force-reinstall`, `--no-deps`,
  `--index-url`, `--upgrade`, `--target`, `-e`) except `--user`, which it refuses ("pip's `--user` is
  unsupported"): such a line gets no command. `uninstall -y` loses its `-y` (uv never asks; it warns that the
  flag has no effect); `--force-reinstall` gains `--no-cache` (uv links from its cache, which an edit in place
  in the venv changed too).
- no pip, ensurepip there: `<exe> -m ensurepip` first (it installs the pip wheel CPython bundles, offline), then
  `<exe> -m pip ...`.
- no pip and no ensurepip (Debian ships ensurepip apart, in python3-venv), or the snapshot does not say: no pip
  command, and the text says pip is missing.
- an externally managed interpreter (PEP 668: not a venv, EXTERNALLY-MANAGED in its stdlib directory): pip
  refuses `install` and `uninstall` there (`externally-managed-environment`), `--user` included, so no pip command
  is printed. The text says the OS manages it and points to a venv (a plain one: `--system-site-packages`
  would also put the user site, where a broken copy may sit, ahead of the venv's own), its lines without `--user`
  (a venv has no user site: pip refuses `--user` there, "Can not perform a '--user' install") and without
  `--no-deps` (a new venv has none of the dependencies it keeps: torch installed so fails at `import torch`). Not
  `--break-system-packages`: that overwrites files the OS package manager owns and later replaces, which PEP 668
  exists to prevent. Not the same command rewritten for a new venv either: `pip uninstall` there cannot remove
  the interpreter's own copy, so the line would not do what the finding asks.
- a `pip install` into a directory of its own (`--target`, `--prefix`, `--root`) on an externally managed interpreter:
  pip skips PEP 668's check for it and the interpreter is not changed, so it is `<exe> -m pip ...`, with no override
  needed and no note that the OS's interpreter changes.
- an externally managed interpreter whose user turned pip's guard off (snapshot rule 15:
  PIP_BREAK_SYSTEM_PACKAGES, or `break-system-packages = true` in a pip.conf pip reads): pip runs the commands
  the override covers (`install`, `uninstall`, or both), so those lines are `<exe> -m pip ...` as in a venv, and
  the text says they change the OS's interpreter itself and what turned the guard off. The doctor does not
  add `--break-system-packages` where the user did not: a line the override does not cover (an `uninstall` when
  only `[install]` sets it) is handled as above.

A fix that cannot be made runnable keeps its sentence (what has to change) and loses the commands that would
fail; its other commands (`apt-get`, `doctor install`) stay.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

from doctor.report import Fix
from doctor.snapshot.model import known

PIP, UV, ENSUREPIP, NO_PIP, MANAGED, NO_UV = "pip", "uv", "ensurepip", "no-pip", "managed", "no-uv"
UV_INSTALL = "https://docs.astral.sh/uv/getting-started/installation/"

# the environment a plan step sets before its pip (doctor.installers.fixline: `TORCH_DEVICE_BACKEND_AUTOLOAD=0 pip
# install ...`), each value as shlex.quote writes it
_ENV = r"(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|[^\s']+)* )*"
# `pip <command>` at the start of a line or after `&&` / `;`, after the environment it sets
_PIP = re.compile(rf"(^|&& |; )({_ENV})pip (\S+)(?= |$)")
_YES = re.compile(r" (?:-y|--yes)(?= |$)")
_NOT_IN_A_NEW_VENV = re.compile(r" (?:--user|--no-deps)(?= |$)")
_GUARDED = ("install", "uninstall")  # the pip commands PEP 668's guard stops, and `--break-system-packages` lets run
# `pip install` into a directory of its own: pip skips PEP 668's check for these ("Specifying --root, --target, or
# --prefix disables the check"), so they run on a managed interpreter without changing it
# https://github.com/pypa/pip/blob/23.0.1/src/pip/_internal/commands/install.py
_OWN_DIRECTORY = re.compile(r" (?:--target|--prefix|--root|-t)(?:[ =]|$)")


@dataclass(frozen=True)
class Route:
    """How pip lines run on one target: `how` (one of PIP, UV, ENSUREPIP, NO_PIP, MANAGED) and the interpreter,
    shell-quoted."""

    how: str
    exe: str
    # MANAGED only: (pip command, what turns its PEP 668 guard off there), rule 15; () when nothing does
    overridden: tuple[tuple[str, str], ...] = ()
    uv: str = "uv"  # UV only: the uv command, shell-quoted (a full path when PATH has none)


def _fact(py: Any, name: str) -> Any:
    v = getattr(py, name, None)
    return v if known(v) else None


def route_of(snap: Any, local: bool = False, uv: str | None = None) -> Route | None:
    """The snapshot's route, None when it names no interpreter (the fix is then left as the check wrote it).
    `local`: the snapshot is of this host, with the doctor's environment (a live `check`, `check --python`), and `uv`
    is the uv a user of this host runs (doctor.probes.uv, looked up by diagnose before the checks: None when there is
    none); otherwise `uv` is assumed, as before."""
    py = snap.python if known(getattr(snap, "python", None)) else None
    exe = _fact(py, "executable")
    if not isinstance(exe, str) or not exe:
        return None
    quoted = shlex.quote(exe)
    if _fact(py, "externally_managed") is True:
        over = _fact(py, "break_system_packages")  # rule 15; with no pip in it there is nothing to run
        if not isinstance(over, dict) or _fact(py, "pip") is False:
            over = {}
        return Route(MANAGED, quoted, tuple(sorted((k, v) for k, v in over.items()
                                                   if k in _GUARDED and isinstance(v, str))))
    if _fact(py, "pip") is not False:  # present, or a snapshot that does not say: as before rule 13
        return Route(PIP, quoted)
    if isinstance(_fact(py, "uv_venv"), str) or _uv_installed(snap):
        if not local:
            return Route(UV, quoted)
        if uv is not None:
            return Route(UV, quoted, uv=uv)
        return Route(ENSUREPIP if _fact(py, "ensurepip") is True else NO_UV, quoted)
    return Route(ENSUREPIP if _fact(py, "ensurepip") is True else NO_PIP, quoted)


def _uv_installed(snap: Any) -> bool:
    pkgs = snap.packages if known(getattr(snap, "packages", None)) else {}
    return any(getattr(p, "installer", None) == "uv" for p in pkgs.values())


def _is_pip(line: str) -> bool:
    """A command line that runs pip first, itself or after the environment it sets (`A=1 pip install ...`)."""
    m = _PIP.match(line)
    return m is not None and not m.group(1)


def _runs_pip(text: str) -> bool:
    """A fix sentence that is a command line running pip: `pip ...` first, or after `&&` (`git -C MindSpeed checkout
    X && pip install -e MindSpeed`). Not `; pip` inside a sentence: prose ("...); pip installs it only for ...")."""
    return _is_pip(text) or re.search(rf"&& {_ENV}pip ", text) is not None


def _run_by(line: str, pip: str, after: str = "") -> str:
    """`line` with each `pip <command>` run as `<pip> <command><after>`, the environment set before it kept."""
    return _PIP.sub(lambda m: f"{m.group(1)}{m.group(2)}{pip} {m.group(3)}{after}", line)


def _rewrite(line: str, route: Route) -> str | None:
    """One pip line for the route; None when the route cannot run it."""
    if route.how in (PIP, ENSUREPIP):
        return _run_by(line, f"{route.exe} -m pip")
    if route.how == UV and not re.search(r"(^| )--user( |$)", line):
        return _uv_flags(_run_by(line, f"{route.uv} pip", f" --python {route.exe}"), route.uv)
    if route.how == MANAGED and ((route.overridden and _overridden(line, route)) or _elsewhere(line)):
        return _run_by(line, f"{route.exe} -m pip")
    return None


def _elsewhere(line: str) -> bool:
    """Every guarded pip command of the line is an install into a directory of its own (`--target`, `--prefix`,
    `--root`): pip runs it on a managed interpreter without any override, and the interpreter stays as it is (real,
    Debian 12's pip 23.0.1: `/usr/bin/python3 -m pip install --target DIR x` installs, a plain or `--user` install is
    refused with externally-managed-environment)."""
    guarded = [(m.group(3), p) for p in re.split(r" && |; ", line) if (m := _PIP.match(p)) and m.group(3) in _GUARDED]
    return bool(guarded) and all(cmd == "install" and _OWN_DIRECTORY.search(p) for cmd, p in guarded)


def _overridden(line: str, route: Route) -> bool:
    """Every guarded pip command of the line is one the user's override covers."""
    covered = {cmd for cmd, _ in route.overridden}
    return all(m.group(3) in covered for m in _PIP.finditer(line) if m.group(3) in _GUARDED)


def _override_note(route: Route) -> str:
    """What a pip line kept on a managed interpreter does, and who allowed it."""
    by = " and ".join(dict.fromkeys(src for _, src in route.overridden))
    return (f" This changes {route.exe} itself, which the OS manages (PEP 668): pip runs it because {by} turns its "
            "guard off (break-system-packages), and may overwrite files the OS package manager owns, which its next "
            f"update may undo; a venv keeps them apart (`doctor install --venv DIR --python {route.exe}`).")


def _uv_flags(line: str, uv: str = "uv") -> str:
    """pip's meaning in uv's flags. `uv pip uninstall` never asks: its `-y` only draws a warning. pip's
    `--force-reinstall` unpacks the wheel again; uv's links the files it unpacked into its cache earlier (hard links,
    its default on one filesystem), which a file edited in place in the venv IS: the edit comes back. `--no-cache`
    unpacks afresh (real: verl's main_ppo.py appended to in a uv venv stayed edited after `uv pip install
    --force-reinstall`)."""
    parts = re.split(r"( && |; )", line)
    def runs(p: str, cmd: str) -> bool:
        return re.match(rf"{_ENV}{re.escape(uv)} pip {cmd} ", p) is not None

    return "".join(_YES.sub("", p) if runs(p, "uninstall") else
                   p.replace(" --force-reinstall", " --force-reinstall --no-cache", 1)
                   if runs(p, "install") and re.search(r" --force-reinstall(?= |$)", p) else p
                   for p in parts)


def _note(route: Route, lost: list[str]) -> str:
    """Why the fix has no pip command, with the lines it would have run, made to run where they can."""
    then = " && ".join(lost) or "pip ..."
    if route.how == MANAGED:
        only = " and ".join(f"pip {cmd} ({src})" for cmd, src in route.overridden)
        # a venv has no user site: pip refuses `--user` there, and the venv's own copy is what its python imports;
        # a new venv has none of the dependencies `--no-deps` leaves as they are (torch without typing_extensions,
        # verl without packaging: the import fails)
        return (f" pip refuses to change {route.exe}: the OS manages it (PEP 668, externally-managed-environment)"
                + (f"; the user's override covers {only} only" if only else "") + ". "
                f"Install into a venv and run from it: `{route.exe} -m venv DIR`, then "
                f"`{_NOT_IN_A_NEW_VENV.sub('', _run_by(then, 'DIR/bin/python -m pip'))}` "
                f"(or `doctor install --venv DIR --python {route.exe}` for a whole verified stack).")
    if route.how == UV:
        return (f" {route.exe} has no pip, and uv pip has no --user: `{then}` cannot run here; install into the "
                f"venv itself (`{route.uv} pip install --python {route.exe} ...`).")
    if route.how == NO_UV:
        uv_line = _uv_flags(_run_by(then, "uv pip", f" --python {route.exe}"))
        return (f" {route.exe} has no pip (uv made it, or installed into it), no ensurepip to bring pip, and `uv` is "
                f"not on PATH here: install uv ({UV_INSTALL}, e.g. `pipx install uv`), then run `{uv_line}`.")
    return (f" pip is not installed in {route.exe}, and no ensurepip is there to bring it (Debian and Ubuntu ship it "
            "in python3-venv): install pip into it first (the OS's python3-pip, or make the venv with pip), then run "
            f"`{_run_by(then, f'{route.exe} -m pip')}`.")


def for_target(fix: Fix | None, route: Route | None) -> Fix | None:
    """The fix with its `pip ...` commands (and a fix sentence that is itself a pip command line, `pip uninstall
    -y triton && pip install ...`, `git -C MindSpeed checkout X && pip install -e MindSpeed`) made to run on the
    route's target, or dropped with a sentence saying why."""
    if fix is None or route is None or (not _runs_pip(fix.text) and not any(map(_is_pip, fix.commands))):
        return fix
    cmds: list[str] = []
    lost: list[str] = []
    kept = False  # a pip line that changes the interpreter runs as printed (on a managed one: by the user's override)
    for c in fix.commands:
        new = _rewrite(c, route) if _is_pip(c) else c
        if new is None:
            lost.append(c)
        else:
            if route.how == ENSUREPIP and _is_pip(c) and f"{route.exe} -m ensurepip" not in cmds:
                cmds.append(f"{route.exe} -m ensurepip")
            kept = kept or (_is_pip(c) and not _elsewhere(c))
            cmds.append(new)
    text = fix.text
    if _runs_pip(text):
        new_text = _rewrite(text, route)
        if new_text is None:
            lost.append("")
        else:
            kept = kept or not _elsewhere(text)
            text = f"{route.exe} -m ensurepip && {new_text}" if route.how == ENSUREPIP else new_text
    if kept and route.how == MANAGED:
        text = text.rstrip() + _override_note(route)
    if lost:
        text = text.rstrip() + _note(route, [c for c in lost if c])
    return replace(fix, text=text, commands=tuple(cmds))
