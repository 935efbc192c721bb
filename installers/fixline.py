"""The fix line for one package of a verified stack: the command `doctor install`'s plan runs for it.

A check that finds a package off its profile must not advise a command that installs another build: PyPI's
`vllm` wheel is a CUDA build where the plan builds vLLM from source with VLLM_TARGET_DEVICE=empty, and on x86
`torch==X` is the CUDA build where the plan takes `+cpu` from the PyTorch CPU index. So the line is read off the
real plan (resolve() for the snapshot's arch and Python): the INSTALL step that names the package, with its
index, `--no-deps` and environment, and the uninstall the plan runs right before it for the same package; a
package the plan builds from a clone, or a machine the plan cannot be made for, gets `doctor install --profile P`.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from doctor.snapshot.model import normalize_name

NEW_VENV = "verl-venv"


def _own_environment(exe: str) -> bool:
    """The interpreter's environment is the directory above its bin/ (as `doctor install` decides)."""
    env = os.path.dirname(os.path.dirname(os.path.abspath(exe)))
    return os.path.realpath(env) == os.path.realpath(sys.prefix)


def install_target(snap: Any) -> str:
    """Where a suggested `doctor install` installs, so the line runs as written (install needs an explicit target
    and refuses the doctor's own environment): the interpreter the snapshot examined when it is another
    environment, else a new venv (`--venv verl-venv`). An interpreter the OS manages (PEP 668, snapshot rule 13),
    which install refuses, gets a new venv made from it (`--venv verl-venv --python EXE`), unless the user turned
    pip's guard off for it (rule 15, for install and uninstall: install then goes ahead, as pip would)."""
    from doctor.checks.facts import val
    from doctor.installers.target import overridden

    py = getattr(snap, "python", None) if snap is not None else None
    exe = val(py, "executable")
    if isinstance(exe, str) and os.path.isabs(exe) and not _own_environment(exe):
        if val(py, "externally_managed") is True and not overridden(val(py, "break_system_packages")):
            return f"--venv {NEW_VENV} --python {shlex.quote(exe)}"
        return f"--python {shlex.quote(exe)}"
    return f"--venv {NEW_VENV}"


def doctor_install(profile: Any, snap: Any = None) -> str:
    """`doctor install --profile P <target>`: the whole verified stack, into the examined environment."""
    return f"doctor install --profile {shlex.quote(profile.name)} {install_target(snap)}"


def plan_command(profile: Any, snap: Any, name: str) -> str:
    """The shell line the plan for `profile` on the snapshot's machine runs to install `name`."""
    from doctor.errors import DoctorError
    from doctor.installers.plan import EDITABLE, INSTALL, UNINSTALL
    from doctor.installers.resolve import facts_from_snapshot, resolve

    try:
        plan = resolve(profile, facts_from_snapshot(snap))
    except DoctorError:  # arch or Python unknown, or a target the profile does not serve
        return doctor_install(profile, snap)
    want = normalize_name(name)
    steps = list(plan.steps)
    # the last step that installs it is the one whose result the stack keeps (a requirements list may name it
    # earlier, then a later step re-pins it or reinstalls it alone)
    for i, s in reversed(list(enumerate(steps))):
        if s.kind == EDITABLE and s.editable_dist and normalize_name(s.editable_dist) == want:
            return doctor_install(profile, snap)  # built from its clone (build environment, pinned commit)
        if s.kind != INSTALL or s.build_for or not any(_dist(r) == want for r in s.requirements):
            continue
        if any(r.startswith("-") for r in s.requirements):
            return doctor_install(profile, snap)  # a requirements file inside a clone
        line = _pip(s)
        prev = steps[i - 1] if i else None
        if prev is not None and prev.kind == UNINSTALL and want in {normalize_name(p) for p in prev.packages}:
            line = f"pip uninstall -y {' '.join(prev.packages)} && {line}"
        return line
    return doctor_install(profile, snap)


def _dist(requirement: str) -> str:
    import re

    m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return normalize_name(m.group(0)) if m else ""


def _pip(step: Any) -> str:
    parts = [f"{k}={shlex.quote(v)}" for k, v in step.env]
    parts += ["pip", "install", *(shlex.quote(r) for r in step.requirements)]
    if step.no_deps:
        parts.append("--no-deps")
    if step.index.index_url:
        parts += ["--index-url", step.index.index_url]
    for url in step.index.extra_index_urls:
        parts += ["--extra-index-url", url]
    for host in step.index.trusted_hosts:
        parts += ["--trusted-host", host]
    return " ".join(parts)
