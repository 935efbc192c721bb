"""A dependency version that a later release of the package declaring it excludes (profiles/later-bounds.json,
derived from the published metadata of every release; doctor/knowledge/later_bounds.py says why that is evidence).

`pip check` judges an installed release by its own METADATA, written before the dependency's breaking release
existed. Ray 2.49 declares `click>=7.0`; click 8.3.0 broke Ray's CLI on Python 3.10, and Ray 2.50 declares
`click!=8.3.0,>=7.0`. A host with Ray 2.49 and click 8.3.0 passes pip check; this check names Ray 2.50's
declaration. Severity (`_grade`): a later bound is evidence, not the installed release's own declaration, and on
real venvs most such bounds did not break the installed pair (5 of 20; Ray 2.49.0 with click 8.3.0, which Ray 2.50.0
excludes for a Python 3.10 break, starts a cluster on Python 3.11). So:
- info by default (said, with no command to run: the fix text says what to do if the pair does fail);
- warning for a bound a later patch release of the installed line added, a `numpy<2` cap of a compiled package
  against numpy 2 (NumPy 2's ABI break), or a floor for the snapshot's Python off verl's import path;
- error where upstream stated the break itself: a floor for the snapshot's Python alone, kept since, by a package
  on verl's import path (Ray 2.56.0: `pydantic>=2.13.0; python_version >= "3.14"`), or the version singled out
  with `!=` and no release since accepting it, by one of the stack's own packages (vLLM 0.19.1's
  `transformers!=5.1.*`: vLLM 0.11.0 with 5.1.0 fails at engine start);
- info when the chosen verified stack runs this release of the declaring package with the installed dependency
  version, or with another one the same bound excludes (megatron-core 0.17.1's `transformers<=5.3.0`).
Development extras (`[dev]`, `[test]`, `[quality]`) never count; a requirement under a runtime extra counts when
the dependency it names is installed (the integration is in use, whoever installed it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.declared import STACK
from doctor.checks.facts import installed, npu_host
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# vLLM on Ascend is built from source over the torch vllm-ascend pairs (VLLM_TARGET_DEVICE=empty), at the release
# vllm-ascend pairs with: the PyPI wheel's torch family bounds are not the build's, nor its CUDA-only requirements
# (_empty_build_declares), and another package's bounds on vLLM (verl's `[vllm]` extra) pin the CUDA wheel (doctor/checks/declared.py, _NOT_THE_PYPI_BUILD_ON_ASCEND;
# doctor/knowledge/pipcheck.py, _SOURCE_BUILT).
_TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "xformers", "triton"})


def _not_judged_on_ascend(name: str, dep: str) -> bool:
    return dep == "vllm" or (name == "vllm" and (dep in _TORCH_FAMILY or not _empty_build_declares(dep)))


def _empty_build_declares(dep: str) -> bool:
    """Some vLLM release built with VLLM_TARGET_DEVICE=empty, as Ascend builds it, declares `dep`
    (profiles/requirements-git.toml [[vllm_empty_target]]: requirements/common.txt, read from the sdists). PyPI's
    wheel adds requirements/cuda.txt: vLLM 0.8.3 to 0.17's `ray[cgraph]` (`!=2.44.*` to 0.10.0), and
    nvidia-cudnn-frontend, are the CUDA build's, which no empty build declares, so a later release's bound on them
    is not the Ascend build's. For what the empty builds do declare, PyPI's lines are common.txt's (the same
    clauses in every release both tables hold), and PyPI's table reads every release, so it judges them. A
    knowledge directory without the empty-target entries: as before, every non-torch dependency is judged."""
    from doctor.knowledge.pipcheck import line_name
    from doctor.knowledge.requirements_git import load

    names = {n for e in load().empty_target for line in e.requires_dist if (n := line_name(line))}
    return not names or dep in names


def _own_lines(pkg: Any, deps: set[str]) -> dict[str, tuple[str, ...]] | None:
    """dependency -> the lines naming it in the package's own METADATA, for `deps`, when the snapshot read it
    (None: not read)."""
    if not known(pkg.requires_dist):
        return None
    from doctor.knowledge.pipcheck import dev_only, line_name

    out: dict[str, list[str]] = {}
    for line in pkg.requires_dist:
        name = line_name(line)
        if name in deps and not dev_only(line):
            out.setdefault(name, []).append(line)
    return {k: tuple(v) for k, v in out.items()}


def _table() -> Any:
    from doctor.knowledge.later_bounds import load

    return load()


@check("later-release-bounds", "packages",
       findings=("requirement-excluded-by-later-release", "requirement-excluded-by-every-release"), tables=(_table,))
def later_release_bounds(ctx: CheckContext) -> Iterator[Finding]:
    """No installed dependency version is one that a later release of the package declaring it excludes."""
    snap = ctx.snapshot
    pkgs = snap.packages if known(snap.packages) else {}
    if not pkgs:
        skip("the snapshot lists no packages")
    table = _table()
    pairs = [(name, dep) for name in sorted(pkgs) if name in table
             for dep in table.dependency_names(name) if dep in pkgs and isinstance(pkgs[dep].version, str)
             and table.may_exclude(name, dep, str(pkgs[dep].version), _release(pkgs[name].version))]
    unversioned = [(n, d) for n, d in pairs if not isinstance(pkgs[n].version, str) or not pkgs[n].version]
    pairs = [p for p in pairs if p not in unversioned]
    if not pairs and not unversioned:
        skip("no installed package has a later release that bounds an installed dependency "
             f"(profiles/later-bounds.json, PyPI read {table.read})")
    from doctor.knowledge.later_bounds import excluded_later
    from doctor.knowledge.pipcheck import line_applies, marker_environment, requirement_names, runtime_extras

    env = marker_environment(snap)

    def applies(line: str) -> bool | None:  # a runtime extra counts when the dependency it names is installed
        return line_applies(line, env, runtime_extras(line))

    ascend = npu_host(snap) or bool(installed(snap, "vllm-ascend"))
    on_path = set(STACK) | requirement_names(snap, "verl")
    own: dict[str, dict[str, tuple[str, ...]] | None] = {}
    for name, dep in pairs:
        if ascend and _not_judged_on_ascend(name, dep):
            continue
        if name not in own:
            own[name] = _own_lines(pkgs[name], {d for n, d in pairs if n == name})
        mine = own[name]
        version, have = str(pkgs[name].version), str(pkgs[dep].version)  # both str: `pairs` kept only those
        ex = excluded_later(table.changes(name, dep), table.newest[name], version, have,
                            applies, None if mine is None else mine.get(dep, ()))
        if ex is not None:
            verified = _verified_by(ctx.profile, name, version, dep, have, ex.clause)
            sev, why = ("info", "") if verified else _grade(ex, name, version, dep, have, on_path)
            ours = mine.get(dep, ()) if mine is not None else _table_lines(table.changes(name, dep), version)
            wanted = _wanted(dep, ours, ex.clause, applies)
            if _admits_nothing(wanted.removeprefix(dep)):
                continue  # the later release moved its own pin past this release's range (torch's triton~=3.8.0,
                # then ~=3.9.0): that is no bound this release lacks, and no dep release meets both
            yield _finding(name, version, dep, have, ex, sev, table.read, verified, wanted, why)
    yield from _any_release(unversioned, pkgs, table, applies, on_path, ascend, ctx.profile)


# NumPy 2.0 broke the C ABI: an extension module compiled against NumPy 1.x fails to import under 2.x ("A module that
# was compiled using NumPy 1.x cannot be run in NumPy 2.x"), so a compiled package's later `numpy<2` cap states a
# break its earlier releases share; a pure-Python package's cap may be a precaution (accelerate 0.30 and
# transformers 4.40 ran under numpy 2.4 here; pandas 2.0.3 and pyarrow 14.0.2 failed at import).
SRC_NUMPY2_ABI = "https://github.com/numpy/numpy/blob/v2.0.0/doc/source/numpy_2_0_migration_guide.rst"


def _grade(ex: Any, name: str, version: str, dep: str, have: str, on_path: set[str]) -> tuple[str, str]:
    """(severity, why) of a later bound. A later bound is evidence, not the installed release's declaration, and
    most such bounds do not break the installed pair: of 20 findings on 21 real venvs built from PyPI (a trust trial
    on 2026-12-04, whose cases tests/checks/test_later_bounds.py keeps), 5 were real breaks. What those 5 had, and the others mostly not, is what makes a warning:
    - the bound came in a later patch release of the installed release's own line (trl 0.12.2's
      `transformers<4.47.0` for 0.12.1; datasets 2.14.5's `fsspec<2023.9.0` for 2.14.4): a fix backported to it;
    - a `numpy<2` cap by a package that publishes compiled wheels, against numpy 2 (NumPy 2's ABI break);
    - upstream stated the break itself: a floor for the snapshot's Python alone (an error on verl's import path), or
      the version singled out with `!=` and no release since accepting it, by one of the stack's own packages (an
      error). Off the stack, such exclusions were all platform- or CI-specific in the trial (wandb's
      `protobuf!=5.28.0`, a Windows bug; tensorboard's `protobuf!=4.24.0`, for its CI): info.
    Everything else is info: said with its release and no command, never a warning."""
    from doctor.knowledge.versions import parse_pkg_version

    if ex.for_this_python and ex.readmitted is None:
        return ("error" if name in on_path else "warning"), "upstream stated the break for this Python"
    if ex.singled_out is not None and name in STACK:
        return "error", "upstream singled the release out as broken and never accepted it again"
    v, since = parse_pkg_version(version), parse_pkg_version(ex.since)
    if v is not None and since is not None and v.release[:2] == since.release[:2]:
        return "warning", f"a later patch release of {name} {v.major}.{v.minor}"
    if dep == "numpy" and _numpy2_cap(ex.clause, have) and _compiled(name, version):
        return "warning", "NumPy 2's ABI break for a compiled package"
    return "info", ""


def _numpy2_cap(clause: str, have: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, Specifier
    from packaging.version import InvalidVersion, Version

    try:
        s = Specifier(clause)
        return (Version(have).major >= 2 and s.contains("1.26.4", prereleases=True)
                and not s.contains("2.0.0", prereleases=True))
    except (InvalidSpecifier, InvalidVersion):
        return False


def _compiled(name: str, version: str) -> bool:
    """The release publishes platform wheels on PyPI (compiled extension modules), from the requirements table."""
    from doctor.knowledge.requirements import declared

    d = declared(name, version)
    return bool(d is not None and d.platform_wheels)


def _release(version: Any) -> str | None:
    """The installed release as the table compares it (None: unknown or unparsable: every clause counts)."""
    from doctor.knowledge.versions import parse_pkg_version

    v = parse_pkg_version(version) if isinstance(version, str) and version else None
    return str(v) if v is not None else None


def _table_lines(changes: Any, version: str) -> tuple[str, ...]:
    from doctor.knowledge.later_bounds import in_effect
    from doctor.knowledge.versions import parse_pkg_version

    v = parse_pkg_version(version)
    current = in_effect(changes, v) if v is not None else None
    return current.lines if current is not None else ()


def _admits_nothing(spec: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from doctor.knowledge.pipcheck import admits_nothing

    try:
        return admits_nothing(SpecifierSet(spec))
    except InvalidSpecifier:
        return False  # the finding stays


def _wanted(dep: str, own: tuple[str, ...], clause: str, applies: Any) -> str:
    """What the fix installs: the installed release's own range for `dep` with the later release's excluding
    clause, not the later release's whole line. Its other clauses, floors above all, say what that release needs
    (verl 0.9.0's `transformers>=5.5.3`), and verl 0.4.1 supports transformers below 4.56 only
    (the transformers-window check)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from doctor.knowledge.pipcheck import specifier_of

    spec = SpecifierSet()
    try:
        spec &= SpecifierSet(clause)
    except InvalidSpecifier:
        return dep
    for line in own:
        if applies(line) is True and (mine := specifier_of(line)) is not None:
            spec &= mine
    return f"{dep}{spec}"


def _any_release(pairs: list[tuple[str, str]], pkgs: Any, table: Any, applies: Any, on_path: set[str],
                 ascend: bool, profile: Any) -> Iterator[Finding]:
    """A package named without its release (a report's `vllm` with no version): an error on verl's import path
    when no release of it accepts the installed dependency version, by its own declaration or by a later release
    that singles the version out (vLLM with transformers 5.3.0: 0.11.0 and before admit it, 0.19.1 names 5.3.* as
    broken, every other release refuses it). Not when the chosen verified stack installs the package (a pin or its
    own source build) beside this dependency version: that stack runs one (verl 0.8.0's vLLM 0.18.0 source build
    with transformers 5.3.0, a documented deviation), so "whichever release, it does not work" is not so."""
    from doctor.knowledge.later_bounds import no_release_accepts

    for name, dep in pairs:
        if ascend and _not_judged_on_ascend(name, dep):
            continue
        if profile is not None and (profile.pin(name) or name in profile.git) and _profile_runs(profile, dep,
                                                                                                str(pkgs[dep].version)):
            continue
        have = str(pkgs[dep].version)
        span = no_release_accepts(table.changes(name, dep), table.newest[name], have, applies)
        if span is None:
            continue
        declaring = component_of_distribution(name) or "python"
        first = component_of_distribution(dep) or "python"
        page = f"https://pypi.org/project/{name}/"
        yield finding(
            "requirement-excluded-by-every-release", "error" if name in on_path else "warning",
            (first,) + ((declaring,) if declaring != first else ()),
            f"no release of {name} accepts {dep} {have} ({name} {span[0]} to {span[1]} read); the snapshot does not "
            f"say which {name} is installed",
            detail=f"Every release of {name} from {span[0]} (the first that declares {dep}) to {span[1]} either "
                   f"excludes {dep} {have} in its own Requires-Dist, or predates a release that names it as broken "
                   f"with `!=` and none since accepting it (profiles/later-bounds.json, from PyPI read {table.read}). "
                   f"Whichever {name} this is, it does not work with {dep} {have}.",
            evidence={"package": name, "version": None, "requires": dep, "installed": have,
                      "releases_read": f"{span[0]}..{span[1]}", "table_read": table.read},
            key=f"{name}:{dep}:any",
            fix=f"Install the {dep} your {name} release declares (`pip show {name}` names the release; its "
                f"Requires-Dist the range).",
            source=page)


def _verified_by(profile: Any, name: str, version: str, dep: str, have: str, clause: str) -> str | None:
    """The chosen profile's name when it runs this release of `name` (a pin it meets, or the profile's own source
    build: Megatron-LM, MindSpeed, vllm-ascend from git) with the installed `dep`, or with a `dep` release it pins
    that the same clause excludes (the verl 0.9.1 stack runs megatron-core 0.16.2 with transformers 5.10.4, above
    megatron-core 0.17.1's `<=5.3.0`): a verified run contradicts the bound for this release."""
    if profile is None or not _profile_runs(profile, name, version):
        return None
    if _profile_runs(profile, dep, have):
        return profile.name
    from packaging.specifiers import InvalidSpecifier, Specifier
    from packaging.version import InvalidVersion, Version

    dep_pin = profile.pin(dep) or ""
    if not dep_pin.startswith("==") or "*" in dep_pin:
        return None
    try:
        return profile.name if not Specifier(clause).contains(Version(dep_pin[2:].strip()), prereleases=True) else None
    except (InvalidSpecifier, InvalidVersion):
        return None


def _profile_runs(profile: Any, dist: str, version: str) -> bool:
    from doctor.knowledge.versions import pkg_satisfies

    pin = profile.pin(dist)
    return pkg_satisfies(version, pin) is True if pin else bool(profile.builds(dist, version))


def _finding(name: str, version: str, dep: str, have: str, ex: Any, sev: str, read: str,
             verified: str | None, wanted: str, why: str = "") -> Finding:
    declaring = component_of_distribution(name) or "python"
    first = component_of_distribution(dep) or "python"
    comps = (first,) + ((declaring,) if declaring != first else ())
    page = f"https://pypi.org/project/{name}/{ex.since}/"
    if ex.readmitted:
        since = (f"The later release {name} {ex.readmitted} accepts {dep} {have} again: either {name} changed or the "
                 "bound was a precaution.")
    else:
        since = f"No release of {name} read after it accepts {dep} {have} again (the newest read is {ex.newest})."
    if ex.singled_out is not None:
        since += (f" {name} {ex.singled_out[0]} still names it as broken (`{ex.singled_out[1]}`), and no release "
                  "since accepts it.")
    if why:
        since += f" Rated {sev}: {why}."
    elif sev == "info" and not verified:
        since += (" Rated info: most later bounds of this kind do not break the installed pair (a cap added as a "
                  "precaution, a break on another platform); it is said so that a failure can be traced to it.")
    fix_up = (f"upgrade {name} to {ex.readmitted} or newer, which admits {dep} {have} again" if ex.readmitted else
              f"upgrade {name} to {ex.since} or newer together with a {dep} release it declares")
    return finding(
        "requirement-excluded-by-later-release", sev, comps,
        f"{dep} {have} is excluded by {name} {ex.since}'s requirement `{ex.clause}`; {name} {version} declares no "
        f"such bound",
        detail=f"{name} {ex.since}, released after {name} {version}, declares `{ex.line}` in its published metadata "
               f"(profiles/later-bounds.json, from PyPI read {read}). Upstream added that bound after {name} "
               f"{version}, most often because a {dep} release broke {name} (on some Python or platform, or for some "
               f"feature): the installed {name} {version} lacks that fix, and its own metadata admits {dep} {have}, "
               f"so pip installs the pair and `pip check` passes; where the break applies, the code fails at import "
               f"or at run time. {since}"
               + (f" The verified stack {verified} runs {name} {version} with a {dep} release this bound excludes: "
                  "a verified run contradicts the bound for this release." if verified else ""),
        evidence={"package": name, "version": version, "requires": dep, "installed": have,
                  "excluded_by": f"{name} {ex.since}", "requirement": ex.line, "clause": ex.clause,
                  "readmitted_in": ex.readmitted, "newest_read": ex.newest, "table_read": read,
                  "singled_out_by": f"{name} {ex.singled_out[0]}" if ex.singled_out else None,
                  "grade": why or ("verified stack" if verified else "evidence only")},
        key=f"{name}:{dep}:later",
        fix=(f"Nothing to change for this bound: {verified} runs {name} {version} past it." if verified else
             f"Nothing to change while {name} works: most such bounds do not break the pair. If {name} fails with "
             f"{dep} {have}, install a {dep} release that {name} {version} declares and {name} {ex.since}'s "
             f"`{ex.clause}` admits (`pip install '{wanted}'`), or {fix_up}." if sev == "info" else
             f"Install a {dep} release that {name} {version} declares and {name} {ex.since}'s `{ex.clause}` admits, "
             f"or {fix_up}."),
        # a command is offered only where the bound is rated a break: an info bound's command would downgrade a
        # working install (transformers 4.40's later `torch<2.7` against a torch 2.13 that runs it)
        commands=() if verified or sev == "info" else (f"pip install '{wanted}'",),
        source=page)
