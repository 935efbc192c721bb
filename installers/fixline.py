"""The fix line for one package of a verified stack: the command `doctor install`'s plan runs for it.

A check that finds a package off its profile must not advise a command that installs another build: PyPI's
`vllm` wheel is a CUDA build where the plan builds vLLM from source with VLLM_TARGET_DEVICE=empty, and on x86
`torch==X` is the CUDA build where the plan takes `+cpu` from the PyTorch CPU index. So the line is read off the
real plan (resolve() for the snapshot's arch and Python): the INSTALL step that names the package, with its
index, `--no-deps` and environment, and the uninstall the plan runs right before it for the same package; a
package the plan builds from a clone, or a machine the plan cannot be made for, gets `doctor install --profile P`.
"""

from __future__ import annotations

import shlex
from typing import Any

from doctor.snapshot.model import normalize_name


def doctor_install(profile: Any) -> str:
    return f"doctor install --profile {profile.name}"


def plan_command(profile: Any, snap: Any, name: str) -> str:
    """The shell line the plan for `profile` on the snapshot's machine runs to install `name`."""
    from doctor.errors import DoctorError
    from doctor.installers.plan import EDITABLE, INSTALL, UNINSTALL
    from doctor.installers.resolve import facts_from_snapshot, resolve

    try:
        plan = resolve(profile, facts_from_snapshot(snap))
    except DoctorError:  # arch or Python unknown, or a target the profile does not serve
        return doctor_install(profile)
    want = normalize_name(name)
    steps = list(plan.steps)
    for i, s in enumerate(steps):
        if s.kind == EDITABLE and s.editable_dist and normalize_name(s.editable_dist) == want:
            return doctor_install(profile)  # built from its clone (build environment, pinned commit)
        if s.kind != INSTALL or s.build_for or not any(_dist(r) == want for r in s.requirements):
            continue
        if any(r.startswith("-") for r in s.requirements):
            return doctor_install(profile)  # a requirements file inside a clone
        line = _pip(s)
        prev = steps[i - 1] if i else None
        if prev is not None and prev.kind == UNINSTALL and want in {normalize_name(p) for p in prev.packages}:
            line = f"pip uninstall -y {' '.join(prev.packages)} && {line}"
        return line
    return doctor_install(profile)


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
