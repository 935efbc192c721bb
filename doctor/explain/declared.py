"""What a calling distribution declares it runs with: to tell which of several packages defining a class it called.

`GPTModel` is a public class of megatron-core, MindSpeed-LLM and ms-swift (doctor.explain.messages.class_owners):
`GPTModel.__init__() got an unexpected keyword argument` raised in verl's code says only the name. verl declares
megatron-core (its `mcore` / `megatron` extras on PyPI) and its verified stacks install Megatron-LM's core; it
declares neither MindSpeed-LLM nor ms-swift. So the class verl constructs is megatron-core's.

Read, in this order, and all together (a name any of them gives counts):
- the snapshot's own record of the caller: its METADATA's Requires-Dist lines (`packages[dist].requires_dist`);
- the packaged requirements table (doctor.knowledge.requirements): Requires-Dist of every release read, extras
  included (an extra is how a caller opts into a backend: verl[mcore], verl[megatron]);
- the verified stack profiles whose verl is the caller: their pins and the distributions they build from git.

Only the caller's own declarations are read: two packages installed side by side say nothing about which one a
third calls. Imported lazily by attribution: only an event with several candidate owners reads the tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from packaging.utils import canonicalize_name


def _names(lines: Iterable[str]) -> set[str]:
    """The names a Requires-Dist list declares, every marker and extra included (a caller's backend is an extra's
    requirement: verl[mcore]); packaging's PEP 508 parser, a line it rejects names nothing."""
    from packaging.requirements import InvalidRequirement, Requirement

    out: set[str] = set()
    for line in lines:
        try:
            out.add(canonicalize_name(Requirement(line).name))
        except (InvalidRequirement, TypeError):
            continue
    return out


def declared_by(dist: str, snapshot: Any = None) -> frozenset[str]:
    """The distributions `dist` declares it runs with (normalized names; empty when nothing is known of it)."""
    key = canonicalize_name(dist)
    out: set[str] = set()
    packages = getattr(snapshot, "packages", None)
    if isinstance(packages, dict):
        pkg = packages.get(key) or next((p for k, p in packages.items() if canonicalize_name(k) == key), None)
        requires = getattr(pkg, "requires_dist", None)
        if isinstance(requires, list):
            out |= _names(requires)
    try:
        from doctor.knowledge.requirements import load_requirements

        table = load_requirements()
        if key in table.index:
            for rel in table.projects[key].values():
                out |= _names(rel.requires_dist)
    except Exception:  # noqa: BLE001 - a broken table is `doctor check`'s to report, not explain's
        pass
    if key == "verl":
        try:
            from doctor.knowledge.profiles import load_profiles

            for p in load_profiles():
                out |= {canonicalize_name(k) for k in p.pins} | {canonicalize_name(k) for k in p.built_from_source}
        except Exception:  # noqa: BLE001 - as above
            pass
    out.discard(key)
    return frozenset(out)


def the_one_declared(owners: list[tuple[Any, str]], caller: str | None,
                     snapshot: Any = None) -> tuple[list[tuple[Any, str]], str]:
    """Of several (origin, path) owners of a class, the one the caller declares, when it declares exactly one of
    them, with what was read; the owners unchanged and "" otherwise (no caller, or it declares none or several)."""
    if len(owners) < 2 or not caller:
        return owners, ""
    deps = declared_by(caller, snapshot)
    kept = [(o, path) for o, path in owners if canonicalize_name(o.distribution) in deps]
    if len({canonicalize_name(o.distribution) for o, _ in kept}) != 1:
        return owners, ""
    others = ", ".join(sorted({o.distribution for o, _ in owners} - {kept[0][0].distribution}))
    return kept, (f"{caller} declares {kept[0][0].distribution} (its Requires-Dist or its verified stacks), "
                  f"not {others}")
