"""What a run installed that nothing installed requires any more, once the re-pins are done (the `remove-orphans`
step). Pure logic over the installed set; the executor probes the target and runs the uninstall.

Why: a resolving step installs the newest release of a package (vLLM's build resolves transformers 5.25.0, whose
base Requires-Dist names `kernels<0.20,>=0.19.1`), its requirements come with it, and the final pins move that
package back (transformers==5.10.4, as upstream's install_vllm_mcore_npu.sh does). What the newer release pulled in
stays behind, required by nothing, and may be outside the range the re-pinned release names in its extras, which
pip's own check and the doctor's post-install check then call unmet. The stack upstream verified never had it.

The rule, iterated to a fixed point (an orphan's own orphaned requirements go too):
- only a distribution that was absent before the run (the journal's record) can go; nothing that was there;
- nothing the plan names: the profile's pins, every requirement of its install steps (their `-r` files
  included: verl's requirements-npu.txt lines are asked for by name, not required by a dependency), the
  distributions its editable installs make;
- a distribution stays while an installed distribution requires it in its base Requires-Dist, with the marker
  evaluated for the target; a requirement behind an extra counts only when that extra is requested (by an
  installed distribution's requirement, `ray[default]`, or by the plan's own lines). A marker the target's facts
  cannot decide counts as met, and a line that does not parse keeps the name it starts with: unknowns keep.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

from doctor.knowledge.pipcheck import marker_applies
from doctor.snapshot.model import normalize_name

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def marker_env(python_version: str, arch: str) -> dict[str, str]:
    """The PEP 508 variables known of the target: its Python and machine; the installer targets CPython on Linux
    (its downloads ask for `--implementation cp`). Others are left out, so a marker that needs them is undecided (and
    the requirement kept). Read by the orphan removal and the wheelhouse pre-flight (installers/housecheck.py)."""
    env = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": arch,
           "implementation_name": "cpython", "platform_python_implementation": "CPython",
           "python_full_version": python_version, "python_version": ".".join(python_version.split(".")[:2])}
    return {k: v for k, v in env.items() if v}


def parse(line: str) -> tuple[str, frozenset[str], Marker | None] | None:
    """(normalised name, requested extras, marker) of a requirement line; a line packaging refuses keeps the name it
    starts with and no marker (so it counts); None when it names nothing."""
    try:
        r = Requirement(line)
    except InvalidRequirement:
        m = _NAME.match(line)
        return (normalize_name(m.group(1)), frozenset(), None) if m else None
    return normalize_name(r.name), frozenset(normalize_name(e) for e in r.extras), r.marker


def named(lines: Iterable[str]) -> dict[str, frozenset[str]]:
    """The distributions a plan's own requirement lines name, with the extras they request (options skipped)."""
    out: dict[str, frozenset[str]] = {}
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-", ".", "/")):
            continue
        p = parse(line)
        if p is not None:
            out[p[0]] = out.get(p[0], frozenset()) | p[1]
    return out


def required(requires: Mapping[str, Iterable[str]], asked: Mapping[str, frozenset[str]],
             env: Mapping[str, str]) -> set[str]:
    """Names required by the distributions of `requires` (name -> its Requires-Dist lines): base lines whose marker
    holds (or cannot be decided) for the target, and lines of an extra that is requested, by `asked` or by another
    line counted here, until nothing more is requested."""
    extras: dict[str, set[str]] = {n: set(e) for n, e in asked.items()}
    out: set[str] = set()
    parsed = {n: [p for p in map(parse, lines) if p is not None] for n, lines in requires.items()}
    changed = True
    while changed:
        changed = False
        for name, reqs in parsed.items():
            active = ("", *sorted(extras.get(name, ())))
            for dep, want, marker in reqs:
                if marker is not None and not any(marker_applies(marker, env, e) is not False for e in active):
                    continue
                have = extras.setdefault(dep, set())
                if dep not in out or not want <= have:
                    out.add(dep)
                    have |= want
                    changed = True
    return out


def orphans(requires: Mapping[str, Iterable[str]], before: Iterable[str], keep: Mapping[str, frozenset[str]],
            env: Mapping[str, str]) -> list[str]:
    """The installed distributions (`requires`: name -> Requires-Dist lines) to remove: absent `before` the run, not
    in `keep` (the plan's names, with the extras it asks for) and required by no distribution that stays, to a
    fixed point. Sorted."""
    was = {normalize_name(n) for n in before}
    left = {normalize_name(n): list(r) for n, r in requires.items()}
    gone: list[str] = []
    while True:
        need = required(left, keep, env)
        drop = sorted(n for n in left if n not in was and n not in keep and n not in need)
        if not drop:
            return sorted(gone)
        gone += drop
        for n in drop:
            del left[n]
