"""Which packages of a `fix all at once` line would make pip install torch, in a target that has none.

The summary line keeps an installed torch pinned (doctor.checks.install_all `keep`). With no torch in the target
there is nothing to keep: pip resolves the line and takes PyPI's torch for whichever package requires it (accelerate,
peft, torchdata, tensordict: verl's own requirements) — on x86_64 a CUDA build of several GB, on any machine a
release chosen by the newest requirement, not the build torch-npu pairs with. The line stays (it is right for
everything else); the report says which packages pull torch, so the stack's torch goes in first. Read from the
requirements table's newest release of each package (what pip would pick for an unpinned name), outside extras.
Pure: the table is passed in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.checks.install_all import requirement_name


def _requires_torch(declared: Iterable[str]) -> bool:
    """A release's Requires-Dist names torch outside an extra (an environment marker on the platform or Python still
    counts: the targets are Linux, where such markers hold)."""
    for line in declared:
        try:
            r = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(r.name) == "torch" and (r.marker is None or "extra" not in str(r.marker)):
            return True
    return False


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
        newest = table.newest(name)
        d = table.declared(name, newest) if newest else None
        if d is not None and _requires_torch(d.requires_dist):
            out.append(name)
    return out
