"""What the installed distributions declare, against what is installed: `pip check`, for the snapshot's
interpreter (doctor/knowledge/pipcheck.py holds the evaluation).

A snapshot that only states versions (a bug report, an older collector) has no METADATA to read: for those
packages the declaration of the same release as published on PyPI is used (profiles/requirements/, read by
the knowledge refresh tool; doctor/knowledge/requirements.py), and the finding names that release's page; a release
the chosen stack builds from git (vllm-ascend, verl, MindSpeed, Megatron) is judged by what its checkout declares at
the commit the stack pins (profiles/requirements-git.toml), and vLLM on an Ascend host by what its
VLLM_TARGET_DEVICE=empty build installs (the same file's [[vllm_empty_target]]: requirements/common.txt of its sdist).

Each unmet requirement is one finding naming the declaring distribution, the requirement, what is installed
and the METADATA it was read from. Severity by where the declaring package sits:
- error on verl's import path: verl, what verl itself requires, and the torch / torch-npu / vllm /
  vllm-ascend / MindSpeed / Megatron stack (these are imported when a verl job starts);
- warning for any other installed distribution, except a requirement the declaring package checks itself when
  imported (profiles/code-needs.toml `[[enforces]]`: transformers' dependency_versions_check): an error wherever it is;
- info when the chosen profile names the conflict as upstream's own (`upstream_conflicts`): the documented
  stack itself carries it, so it must not turn a verified stack red (docs/design.md severity policy); only on a
  snapshot with an Ascend fact (chip, devices, CANN, torch-npu, vllm-ascend), the stack those conflicts are of.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from doctor.checks.facts import (
    checkout_commit,
    git_commit,
    installed,
    installed_from,
    npu_host,
    os_package,
    pver,
    unlisted_path_dirs,
    val,
    ver,
)
from doctor.checks.runner import CheckContext, check, reported, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.knowledge.pipcheck import (
    Lookup,
    Unmet,
    bare,
    needs_through,
    required_through,
    requirement_names,
    same_requirement,
    unmet,
)
from doctor.knowledge.versions import parse_pkg_version, release
from doctor.report import Finding, Fix, finding
from doctor.snapshot.model import known

if TYPE_CHECKING:
    from doctor.knowledge.requirements import RequirementsTable

# The packages a verl job imports on Ascend, whatever verl's own METADATA lists (MindSpeed and Megatron come
# from git and are not in it): docs/verl-mindspeed.md, verl's Ascend install guide.
STACK = frozenset({
    "verl", "torch", "torch-npu", "torchvision", "vllm", "vllm-ascend", "triton-ascend", "mindspeed", "megatron-core",
    "mbridge", "transformers", "tensordict", "ray", "numpy",
})
PIP_CHECK_SOURCE = "https://pip.pypa.io/en/stable/cli/pip_check/"


def _severity(u: Unmet, on_path: set[str], conflicts: tuple[Mapping[str, str], ...],
              at_load: AtLoad | None) -> tuple[str, Mapping[str, str] | None]:
    for c in conflicts:
        if c.get("package") == u.package and same_requirement(c.get("requirement", ""), u.requirement):
            return "info", c
    if u.built_on:
        # a run set's addition is an error when the package's entry modules import it at load (verl 0.9.1's trainer:
        # cachetools, fastapi, uvicorn, transfer_queue), a warning otherwise (nvtx, torchcodec: a feature's)
        # (unless a PYTHONPATH directory no listed distribution describes can hold the module: then the snapshot
        # cannot say the import fails)
        return ("error" if at_load is not None and at_load.module and not at_load.unlisted else "warning"), None
    if u.clash or u.held:
        # an extra inferred in use that cannot be: a leftover, not what the package runs with; or one another installed
        # package's requirement rules out, that nothing asked for (pip installed the package without it)
        return "warning", None
    return ("error" if u.package in on_path else "warning"), None


class AtLoad(NamedTuple):
    """Whether a package's release, as the import-surface table read it, imports a required distribution when its
    entry modules load: the module and the first file:line that imports it ("" when none does)."""

    module: str
    at: str
    entries: tuple[str, ...]  # the package's modules followed
    read: str  # where the table read the release (PyPI's verl-0.9.1-py3-none-any.whl; v0.9.0, commit ...)
    unlisted: tuple[str, ...] = ()  # PYTHONPATH directories no listed distribution describes (may hold the module)


def _at_load(u: Unmet, snap: Any, held: Mapping[str, frozenset[str]] | None = None) -> AtLoad | None:
    """What the import-surface table says of a run set's addition (`u.built_on`): None when it does not read the
    declaring package's release, or neither the snapshot nor the ownership table names the addition's modules (then
    it stays a warning). Only such a finding loads the table."""
    if not u.built_on or not isinstance(u.version, str) or not u.version:
        return None
    from doctor.knowledge.import_surface import imported_at_load
    from doctor.knowledge.ownership import modules_of_distribution

    mods = modules_of_distribution(u.name, snap)
    got = imported_at_load(u.package, u.version, commit=checkout_commit(snap, u.package)) if mods else None
    if got is None:
        return None  # the release is not read, or no table says what the distribution installs
    rel, loads = got
    hit = next((m for m in sorted(mods) if m in loads.modules), "")
    dirs = tuple(unlisted_path_dirs(snap, (hit,), held)) if hit and u.kind == "missing" else ()
    return AtLoad(hit, loads.modules[hit] if hit else "", loads.entries, rel.where, dirs)


def _components(u: Unmet) -> tuple[str, ...]:
    declaring = component_of_distribution(u.package) or "python"
    first = "python" if u.kind == "python" else (component_of_distribution(u.name) or "python")
    return (first,) + ((declaring,) if declaring != first else ())


def _release_of(version: str | None) -> str:
    """0.11.0 of a stated 0.11.0 or of its empty build 0.11.0+empty (the public version, PEP 440)."""
    v = parse_pkg_version(version)
    return v.public if v is not None else (version or "")


def _from_vllm_empty_target(u: Unmet) -> bool:
    """The requirement was read from vLLM's empty-target requirements file at a tag (requirements-git.toml), for a
    package Ascend does not install from PyPI. The table's module is imported for it only when such a package has an
    unmet requirement: a check of a host without vLLM does not load it."""
    if not u.source or u.package not in _NOT_THE_PYPI_BUILD_ON_ASCEND:
        return False
    from doctor.knowledge.requirements_git import VLLM_TAG_FILES

    return u.source.startswith(VLLM_TAG_FILES)


def _where(u: Unmet) -> str:
    if u.metadata:
        return u.metadata
    if u.source and _from_vllm_empty_target(u):
        # requirements-git.toml [[vllm_empty_target]]: the sdist's requirements file for VLLM_TARGET_DEVICE=empty
        path = u.source.split("/", 7)[-1]  # requirements/common.txt
        return (f"{path}, the requirements file vLLM {_release_of(u.version)}'s sdist installs when built with "
                f"VLLM_TARGET_DEVICE=empty as on Ascend (its setup.py's get_requirements(); {u.source})")
    if u.source and not u.source.startswith("https://pypi.org/"):
        # requirements-git.toml: a git checkout's own files at the commit (the stack's source build, MindSpeed)
        return f"the files {u.package} {u.version} is built from, at the commit read ({u.source})"
    if u.source:
        return f"the published metadata of {u.package} {u.version} ({u.source})"
    return f"{u.package}'s METADATA"


# On Ascend, vllm-ascend's install guide builds vLLM from source with VLLM_TARGET_DEVICE=empty (or installs vLLM
# first and vllm-ascend second, which replaces the torch the vLLM wheel pinned): there the vLLM wheel's published
# Requires-Dist (torch==X, xformers, ...) is not what is installed. A stated release (0.11.0) or its empty build
# (0.11.0+empty) is judged by what that build installs: the requirements file setup.py reads for the empty target,
# read from the release's sdist (profiles/requirements-git.toml [[vllm_empty_target]]); a release that table does not
# hold by its Requires-Python only. Off Ascend (no vllm-ascend, no NPU facts) vLLM is PyPI's build and its published
# METADATA holds in full. https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md
_NOT_THE_PYPI_BUILD_ON_ASCEND = frozenset({"vllm"})


def _empty_target(project: str, version: str) -> tuple[str | None, tuple[str, ...], str] | None:
    """On Ascend: what vLLM `version` (a release, or its `+empty` build) declares when built with
    VLLM_TARGET_DEVICE=empty; None for another project or a release the table does not hold."""
    if project not in _NOT_THE_PYPI_BUILD_ON_ASCEND:
        return None
    from doctor.knowledge.requirements_git import vllm_empty_target

    e = vllm_empty_target(version)
    return (e.requires_python, e.requires_dist, e.source) if e is not None else None


def published(project: str, version: str, python: str | None = None, arch: str | None = None,
              profile: Any = None, ascend: bool = False,
              table: RequirementsTable | None = None) -> tuple[str | None, tuple[str, ...], str] | None:
    """What a release declares on PyPI (the shipped table), or None when the table does not hold it or it does
    not apply: a local version label (`2.5.1+cpu`, `0.9.1+empty`) or the chosen stack's own source build of a
    package (`profile.builds`: a git step in its plan) is another build than PyPI's; metadata read from a
    platform wheel applies only to the Python and machine its wheels name (`python` X.Y.Z, `arch`; a fact the
    snapshot does not state rules none out), and a stated machine whose wheels declare something else is judged
    by that machine's declaration (the row's `machines`, `Declared.on`: torchvision 0.15.0's x86_64 wheels pin
    `torch==2.0.0+cu117` where its aarch64 ones name `torch`); an unstated machine by the row alone. On an Ascend
    stack (`ascend`) vLLM's Requires-Dist is not PyPI's."""
    if "+" in version or (profile is not None and profile.builds(project, version)):
        return None
    from doctor.knowledge.requirements import declared  # a project's file loads only when a snapshot needs it

    row = table.declared(project, version) if table is not None else declared(project, version)
    d = row.on(python, arch) if row is not None else None
    if d is None:
        return None
    requires_dist = () if ascend and project in _NOT_THE_PYPI_BUILD_ON_ASCEND else d.requires_dist
    return d.requires_python, requires_dist, d.source_for(python, arch)


def _source_builds(profile: Any, ascend: bool) -> Any:
    """The chosen profile, for its source builds (`profile.builds`), only when the snapshot shows an Ascend host
    (a chip, devices, CANN, torch-npu or vllm-ascend): the verified stacks are Ascend stacks, and a report that
    states only versions (verl 0.7.0 with vllm 0.16.0 on a CUDA host) says nothing that it was installed the way
    a stack's plan builds it from git. Without that evidence a release is what PyPI publishes for it."""
    return profile if ascend and callable(getattr(profile, "builds", None)) else None


def _target(snap: Any) -> tuple[str | None, str | None]:
    """The snapshot's Python version and machine, which a platform wheel's tags must fit."""
    py = snap.python if known(snap.python) else None
    host = snap.host if known(snap.host) else None
    ver, arch = getattr(py, "version", None), getattr(host, "arch", None)
    return (ver if isinstance(ver, str) and ver else None), (arch if isinstance(arch, str) and arch else None)


def release_lookup(snap: Any, profile: Any = None) -> Lookup | None:
    """The release tables, only when some listed package lacks its own declaration (a live snapshot never
    needs them): the git table for a MindSpeed / Megatron checkout at a known commit, vLLM's empty-target build on
    an Ascend host (a release or its `+empty` build), else PyPI's, except for the chosen profile's own source
    builds."""
    pkgs = snap.packages if known(snap.packages) else {}
    if not any(not known(p.requires_dist) and p.version for p in pkgs.values()):
        return None
    python, arch = _target(snap)
    ascend = npu_host(snap) or bool(installed(snap, "vllm-ascend"))
    stack = _source_builds(profile, ascend)
    tables: list[RequirementsTable] = []  # the table in use, found at the first look-up and kept: finding it
    # (the knowledge directory the environment names) cost more than the look-up, once per package listed

    def lookup(project: str, version: str) -> tuple[str | None, tuple[str, ...], str] | None:
        # a git checkout at a commit the snapshot names; else the stack's own source build at the commit it pins
        commit = git_commit(snap, project) or (stack.build_commit(project, version) if stack is not None else None)
        if commit is not None:
            from doctor.knowledge.requirements_git import declared_at

            g = declared_at(project, commit)
            if g is not None:
                return g.requires_python, g.requires_dist, g.source
        built = _empty_target(project, version) if ascend else None
        if built is not None:
            return built
        if not tables:
            from doctor.knowledge.requirements import load_requirements

            tables.append(load_requirements())
        return published(project, version, python, arch, stack, ascend, tables[0])

    return lookup


def declared_rejects_pair(ctx: CheckContext, package: str, dep: str) -> bool:
    """`package`'s own METADATA (or its release's published one) rejects the installed `dep`: declared-requirements
    reports that pair, with the declaration as its source, so a check of the doctor's own table of the pair stays
    silent (one finding per broken pair, not two at two severities with two pieces of advice) -- unless the waivers
    drop that finding (`--ignore declared-requirements`, `--only transformers-outside-verl-window`): then the other
    check's is the pair's only word."""
    from doctor.knowledge.pipcheck import declared_rejects

    if not reported(ctx, "declared-requirements", "requirement-version-unmet", component_of_distribution(dep) or "python"):
        return False
    return declared_rejects(ctx.snapshot, package, dep, release_lookup(ctx.snapshot, ctx.profile))


@check("declared-requirements", "packages",
       findings=("requirement-missing", "requirement-version-unmet", "requires-python-unmet"))
def declared_requirements(ctx: CheckContext) -> Iterator[Finding]:
    """Every Requires-Dist and Requires-Python the installed distributions declare is met (pip check)."""
    snap = ctx.snapshot
    if not known(snap.packages) or not snap.packages:
        skip("the snapshot lists no packages")
    lookup = release_lookup(snap, ctx.profile)
    ascend = npu_host(snap) or bool(installed(snap, "vllm-ascend"))
    found = list(unmet(snap, lookup, ascend=ascend))
    if not found and lookup is None and not any(known(p.requires_dist) or known(p.requires_python)
                                                for p in snap.packages.values()):
        skip("the snapshot does not record what the packages declare (Requires-Dist; `doctor collect` records it)")
    on_path = set(STACK) | requirement_names(snap, "verl", lookup)
    # upstream's conflicts are those of its Ascend install: a snapshot with no Ascend fact (a CPU venv's freeze, whose
    # verl version alone chose the stack) gives no sign it was installed that way, as for vLLM's torch pin
    conflicts: tuple[Mapping[str, str], ...] = tuple(getattr(ctx.profile, "upstream_conflicts", ()) or ()) if ascend else ()
    through: dict[str, tuple[str, ...]] | None = None  # read only when a package off that set declares something unmet
    for u in found:
        at_load = _at_load(u, snap, ctx.options.get("path_names"))
        chain: tuple[str, ...] = ()
        if u.package not in on_path:
            if through is None:
                through = required_through(snap, on_path | {"verl"}, lookup, verl_commit=checkout_commit(snap, "verl"))
            chain = through.get(u.package, ())
        if _left_to_code_needs(u, ctx) or _left_to_python_version(u, ctx) or _left_to_torch_npu_pin(u, ctx):
            continue
        sev, conflict = _severity(u, on_path | ({u.package} if chain else set()), conflicts, at_load)
        documented = (_documented(u) or _paired(u, snap, lookup)) if ascend and conflict is None else None
        if documented:
            sev, conflict = "info", documented
        enforced = _enforced(u) if conflict is None else None
        if enforced is not None:
            sev = "error"
        os_dir = os_package(snap, u.package) if sev == "warning" else None
        f = _finding(u, "info" if os_dir else sev, conflict, ctx, at_load, lookup, chain, enforced)
        yield _as_os_package(f, u, os_dir) if os_dir else f


def _as_os_package(f: Finding, u: Unmet, where: str) -> Finding:
    """An OS package's unmet declaration (off verl's import path): info, whose fix is the OS package manager's, never
    pip into the distributor's directory."""
    from dataclasses import replace

    what = "Requires-Python" if u.kind == "python" else bare(u.requirement)
    return replace(
        f, evidence={**f.evidence, "os_package": where},
        detail=f"{f.detail} {u.package} lies in {where}, the OS package manager's directory of this externally "
               f"managed interpreter (PEP 668), and no wheel installer recorded it: it is the distribution's package "
               f"(apt, dnf), whose dependencies its package manager installs. Distributions ship optional parts as "
               f"separate packages (Debian's python3-gi leaves pycairo to python3-gi-cairo), so an upstream "
               f"requirement left out says nothing about the stack.",
        fix=Fix(f"Nothing to change for the stack. If you use the part of {u.package} that needs {what}, install it "
                f"with the OS package manager (the distribution's python3-... package), not pip."))


def _left_to_code_needs(u: Unmet, ctx: CheckContext) -> bool:
    """A declared range the package's code also checks, and the code-needs check finds unmet (LLaMA-Factory's
    check_dependencies): that finding says what actually runs, and this one would say it twice. Only when this run
    reports that finding: under `--only declared-requirements` (or a waiver of code-needs) this one speaks."""
    if u.kind not in ("version", "missing") or not isinstance(u.version, str) or not u.version:
        return False
    from doctor.checks.packages import code_need_unmet

    head = component_of_distribution(u.name) or "python"
    return (reported(ctx, "code-needs", "package-code-needs-unmet", head)
            and code_need_unmet(ctx.snapshot, u.package, u.version, u.name))


def _left_to_python_version(u: Unmet, ctx: CheckContext) -> bool:
    """A Requires-Python the python-version check also finds unmet for the same package (verl's release row, a
    package whose code needs a newer Python, torch-npu's builds): that finding says it with the fix that rebuilds the
    environment, and this one would say it twice. Only when this run reports that finding."""
    if u.kind != "python":
        return False
    from doctor.checks.system import package_pythons

    return any(pkg == u.package and reported(ctx, "python-version", f.id, f.components[0])
               for pkg, f in package_pythons(ctx.snapshot))


def _left_to_torch_npu_pin(u: Unmet, ctx: CheckContext) -> bool:
    """torch-npu's exact torch pin broken at the release (torch 2.1.0 beside torch-npu 2.4.0): the torch-npu check
    says so with what fails (libtorch_npu.so's undefined symbols) and the +cpu build x86_64 needs, where this
    finding's pip line would take PyPI's CUDA torch; one finding for the pair, not two errors. A pin broken only in
    its local part (`torch==X+cpu` beside torch X on x86_64) is the torch-cuda-build check's: `torch-not-cpu-build-x86`
    (or `torch-cuda-build`) says the same with the PyTorch CPU index's install line. Only when this run reports the
    finding that says it."""
    if u.kind != "version" or u.package != "torch-npu" or u.name != "torch":
        return False
    from doctor.checks.torch_npu import cpu_build_finding

    t, n = pver(ctx.snapshot, "torch"), pver(ctx.snapshot, "torch-npu")
    if t is None or n is None:
        return False
    if release(t) != release(n):
        return reported(ctx, "torch-torch-npu-base", "torch-npu-torch-mismatch", "torch-npu")
    fid = cpu_build_finding(ctx.snapshot)
    return fid is not None and reported(ctx, "torch-cuda-build", fid, "torch")


def _enforced(u: Unmet) -> Any:
    """The code-needs table's `[[enforces]]` row when the declaring package checks this requirement itself when it
    is imported (transformers' dependency_versions_check): then the unmet requirement is an import failure wherever
    the package is used. A missing package its check skips when absent (tokenizers) is not one."""
    if not isinstance(u.version, str) or not u.version:
        return None
    from doctor.knowledge.code_needs import enforced

    row = enforced(u.package, u.version)
    name = "python" if u.kind == "python" else u.name
    if row is None or name not in row.names or (u.kind == "missing" and name in row.when_installed):
        return None
    return row


def _documented(u: Unmet) -> Mapping[str, str] | None:
    """vllm-ascend's own release notes or matrix name another torch-npu / triton-ascend build for the release than
    the one its requirements pin (the release matrix's `*_also`: v0.18.0 "Upgraded to 2.9.0.post1+git4c901a4 ... This
    version can't install by default, please upgrade manually", v0.11.0 "TorchNPU is upgraded to 2.7.1.post1 ... hard
    to add it to auto dependence"): installing it is the documented procedure, so pip check's conflict is upstream's own."""
    if u.kind != "version" or u.package != "vllm-ascend" or u.installed is None:
        return None
    from doctor.knowledge.matrix import vllm_ascend_row

    row = vllm_ascend_row(u.version)
    got = parse_pkg_version(u.installed)
    alts = {"torch-npu": row.torch_npu_also, "triton-ascend": row.triton_ascend_also}.get(u.name, ()) if row else ()
    if row is None or got is None or not any(parse_pkg_version(a) == got for a in alts):
        return None
    from doctor.knowledge.matrix import SRC_VA_NOTES, SRC_VA_POLICY

    return {"package": u.package, "requirement": u.requirement, "documented": row.version,
            "source": f"{SRC_VA_NOTES}; {SRC_VA_POLICY}; {row.source}"}


def _paired(u: Unmet, snap: Any, lookup: Lookup | None) -> Mapping[str, str] | None:
    """vLLM's empty-target requirement (requirements/common.txt) that the vllm-ascend release installed beside it,
    paired with that vLLM release in the release matrix, rules out altogether (vllm-ascend 0.18.0's
    `opencv-python-headless<=4.11.0.86` against vLLM 0.18.0's `>=4.13.0`), while the installed version meets
    vllm-ascend's: both releases as documented cannot be met at once, so pip check's conflict is upstream's own."""
    if u.kind != "version" or not _from_vllm_empty_target(u) or u.installed is None:
        return None
    from packaging.requirements import InvalidRequirement, Requirement

    from doctor.knowledge.matrix import vllm_ascend_row
    from doctor.knowledge.pipcheck import declared_excluding

    va = val(snap.package("vllm-ascend"), "version")
    row = vllm_ascend_row(va if isinstance(va, str) else None)
    release = parse_pkg_version(_release_of(u.version))
    if row is None or release is None or release not in {parse_pkg_version(v) for v in (row.vllm, *row.vllm_also)}:
        return None
    try:
        spec = str(Requirement(bare(u.requirement)).specifier)
    except InvalidRequirement:
        return None
    theirs = [r for p, r in declared_excluding(snap, u.name, spec, lookup) if p == "vllm-ascend"]
    if not theirs or not all(_meets(u.installed, r) for r in theirs):
        return None
    return {"package": u.package, "requirement": u.requirement, "paired": row.version, "excluded_by": theirs[0],
            "source": f"{u.source}; {row.source}"}


def _finding(u: Unmet, sev: str, conflict: Mapping[str, str] | None, ctx: CheckContext,
             at_load: AtLoad | None = None, lookup: Lookup | None = None, chain: tuple[str, ...] = (),
             enforced: Any = None) -> Finding:
    decl = f"{u.package} {u.version}" if u.version else u.package
    evidence: dict[str, Any] = {"package": u.package, "version": u.version, "requirement": u.requirement,
                                "requires": u.name, "installed": u.installed, "metadata": u.metadata}
    if u.extra:
        evidence["extra"] = u.extra
    if u.inferred:
        evidence["extra_inferred"] = True
    if u.clash:
        (dist, needs), (pkg, holds) = u.clash
        evidence["cannot_run_beside"] = {dist: needs, pkg: holds}
    if u.source:
        evidence["published"] = u.source
    src = conflict["source"] if conflict else (u.source or PIP_CHECK_SOURCE)
    detail_src = f"Declared in {_where(u)}."
    if u.clash:
        (dist, needs), (_, holds) = u.clash
        detail_src += (f" This {u.name} cannot be what {decl} runs with: it requires {needs}, {decl} requires {holds}, "
                       f"and no release meets both, so one of the two is unmet wherever both are installed. It is "
                       f"what a change of the set left behind (nothing installed requires it), and {decl}'s extras "
                       f"that name it are not in use: a warning, not an error.")
    if u.held:
        holder, holds = u.held
        evidence["held_by"] = {holder: holds}
        detail_src += (f" Nothing installed asks for {u.package}[{u.extra}], so pip neither installed nor checks its "
                       f"requirements; {' '.join(x for x in (holder, ver(ctx.snapshot, holder)) if x)} requires {holds}, "
                       f"which no release in {bare(u.requirement)} meets: pip would refuse {u.package}[{u.extra}] "
                       f"beside it. What {decl} needs {u.name} for (its [{u.extra}] extra) cannot run with this "
                       f"{u.name}; the rest of it does not need the extra: a warning, not an error.")
    if enforced is not None:
        evidence["checked_at_import"] = enforced.source
        says = enforced.says(bare(u.requirement), u.name, u.installed if u.kind != "missing" else None)
        detail_src += (f" {decl} checks this itself, so wherever it is used {says}: {enforced.read_from} "
                       f"({enforced.source}).")
    if chain:
        evidence["required_through"] = list(chain)
        detail_src += (f" {needs_through(ctx.snapshot, chain, u.package)}"
                       + (f", none of them asking for its [{u.extra}] extra." if u.held else
                          f": where that chain imports {u.package}, {u.package}'s own import of {u.name} runs too."))
    untold = _untold_target(u, ctx.snapshot)
    if untold:
        evidence["target"] = f"not stated ({untold})"
        detail_src += (f" The snapshot does not state its {untold}: this is what the published wheel named there "
                       "declares; a wheel for another target of the same release may declare otherwise.")
    if conflict and conflict.get("documented"):
        detail_src += (f" vllm-ascend {conflict['documented']}'s release notes / compatibility matrix name {u.name} "
                       f"{u.installed} for this release, to be installed by hand over its pin ({conflict['source']}).")
    elif conflict and conflict.get("paired"):
        detail_src += (f" vllm-ascend {conflict['paired']}, which its release matrix pairs with this vLLM release, "
                       f"declares {conflict['excluded_by']}, which vLLM {_release_of(u.version)}'s range rules out: no "
                       f"{u.name} meets both, so the documented pair carries this conflict upstream "
                       f"({conflict['source']}).")
    elif conflict:
        detail_src += f" The verified stack {ctx.profile.name} carries this conflict upstream ({conflict['source']})."
    hidden = _hidden(u, ctx.snapshot) if u.kind == "version" and not conflict else None
    if hidden:
        loc, prefix, copies = hidden
        evidence["found_at"], evidence["hides"] = loc, copies
        own = ", ".join(f"{u.name} {c.get('version')} in {c['location']}" for c in copies)
        detail_src += (f" Python finds this {u.name} at {loc}, outside the environment ({prefix}), before the "
                       f"environment's own {own}: PYTHONPATH, the working directory or a .pth file puts it first on "
                       f"sys.path, and pip installs into the environment without removing it (\"Not uninstalling "
                       f"{u.name} at {loc}, outside environment\").")
    if u.kind == "python":
        return finding(
            "requires-python-unmet", sev, _components(u),
            f"{decl} requires Python {u.requirement}; the interpreter is {u.installed}",
            detail=f"Requires-Python is what the package's own METADATA declares: pip would not install this release "
                   f"for this interpreter, and it may use syntax or APIs this Python lacks. {detail_src}",
            evidence=evidence, key=f"{u.package}:python",
            fix=f"Use a Python that satisfies {u.requirement} for this environment, or install a release of "
                f"{u.package} that supports Python {u.installed}.",
            source=src)
    if u.built_on:
        evidence["built_on"] = list(u.built_on)
        detail_src += (f" {u.package}'s [{u.extra}] extra restates all its base requirements and adds this one; its "
                       f"extras [{'], ['.join(u.built_on)}] each require {u.package}[{u.extra}]: that is what "
                       f"{u.package} runs with, whichever of them is meant, and a plain `pip install {u.package}` "
                       f"leaves it out.")
        if at_load is not None:
            entries = ", ".join(at_load.entries)
            if at_load.module:
                evidence["imported_at_load"] = {"module": at_load.module, "at": at_load.at, "read": at_load.read,
                                                **({"pythonpath_unlisted": list(at_load.unlisted)}
                                                   if at_load.unlisted else {})}
                detail_src += (f" {decl} imports `{at_load.module}` at module level ({at_load.at}), in what loading "
                               f"{entries} runs (read from {at_load.read}): "
                               + (f"unless PYTHONPATH's {', '.join(at_load.unlisted)} holds `{at_load.module}` (the "
                                  f"snapshot lists no distribution there), that import fails." if at_load.unlisted
                                  else "without it that import fails." if u.kind == "missing" else
                                  f"that import runs against this {u.name}."))
            else:
                evidence["imported_at_load"] = None
                detail_src += (f" Loading {entries} imports none of {u.name}'s modules (read from {at_load.read}): "
                               f"what needs it fails only when used.")
    if u.kind == "missing":
        why = (f" (its [{u.extra}] extra, which its extras [{'], ['.join(u.built_on)}] build on)" if u.built_on
               else f" (for its extra [{u.extra}])" if u.extra else "")
        return finding(
            "requirement-missing", sev, _components(u),
            f"{decl} requires {bare(u.requirement)}{why}, which is not installed",
            detail=f"The package declares this requirement for this interpreter and platform, and no distribution "
                   f"named {u.name} is installed: importing the code that needs it fails with ModuleNotFoundError. "
                   f"{detail_src}",
            evidence=evidence, key=f"{u.package}:{u.name}",
            fix=_fix(f"Install what {u.package} declares (into the same interpreter).", u, conflict, ctx),
            commands=_commands(u, conflict, ctx), source=src)
    why = (f" (its [{u.extra}] extra, which its extras [{'], ['.join(u.built_on)}] build on)" if u.built_on else
           f" (in every extra that names it: [{u.extra.replace(', ', '], [')}]; {u.name} is installed and nothing "
           f"else requires it)" if u.inferred and u.extra and ", " in u.extra else
           f" (its [{u.extra}] extra, which nothing installed asks for)" if u.held else
           f" (its [{u.extra}] extra, in use since {u.name} is installed)" if u.inferred
           else f" (for its extra [{u.extra}])" if u.extra else "")
    fix = _fix(f"Install a {u.name} in the declared range, or a release of {u.package} that accepts {u.name} "
               f"{u.installed}.", u, conflict, ctx)
    commands = _commands(u, conflict, ctx)
    held = _held_by_others(u, ctx.snapshot, lookup) if commands == (f"pip install '{bare(u.requirement)}'",) and not hidden else None
    if held:
        fix, commands = held
    if u.held:
        holder, holds = u.held
        fix = (f"Nothing to change for what needs {u.package} without its [{u.extra}] extra (pip installed it so). To "
               f"use what that extra serves, install a {holder} whose requirement on {u.name} admits "
               f"{bare(u.requirement)}, or a release of {u.package} whose [{u.extra}] extra accepts {u.name} "
               f"{u.installed} ({holder} requires {holds}).")
        commands = ()
    if hidden:
        loc, _, copies = hidden
        meets = [c for c in copies if _meets(c.get("version"), u.requirement)]
        fix = (f"Take {loc} off the path (PYTHONPATH, or run from another directory) or remove {u.name} from it"
               + (f": the environment's own {u.name} {meets[0].get('version')} meets the requirement." if meets else
                  f", and install a {u.name} in the declared range into the environment."))
        commands = () if meets else commands
    return finding(
        "requirement-version-unmet", sev, _components(u),
        f"{decl} requires {bare(u.requirement)}{why}, but {u.name} {u.installed} is installed",
        detail=f"The installed {u.name} is outside the range the package declares ("
               + ("pip check does not report it: it reads only the requirements outside extras" if u.extra else
                  "pip check reports the same conflict") + f"). {detail_src}",
        evidence=evidence, key=f"{u.package}:{u.name}", fix=fix, commands=commands, source=src)


def excluded_by(snap: Any, caps: list[tuple[str, str]]) -> str:
    """How `pipcheck.declared_excluding`'s (package, requirement) pairs read in a fix: 'verl 0.7.1 requires
    numpy<2.0.0; ...' (the installed version where the snapshot has it)."""
    return "; ".join(" ".join(x for x in (p, ver(snap, p), "requires", r) if x) for p, r in caps)


def _held_by_others(u: Unmet, snap: Any, lookup: Lookup | None) -> tuple[str, tuple[str, ...]] | None:
    """When another installed package's own requirement on `u.name` admits nothing of the declared range (datasets'
    huggingface-hub>=1.31.0 against transformers 4.57.6's <1.0), installing that range breaks the other one, and that
    one's finding moves it back: the fix keeps `u.name` where it is and lets pip pick a release of the declaring package
    that accepts it (`pip install datasets 'huggingface-hub==0.36.2'`: pip leaves the installed datasets for one whose
    range holds the pin). None when nothing else rules the range out."""
    from packaging.requirements import InvalidRequirement, Requirement

    from doctor.knowledge.pipcheck import declared_excluding

    try:
        spec = str(Requirement(bare(u.requirement)).specifier)
    except InvalidRequirement:
        return None
    caps = [(p, r) for p, r in declared_excluding(snap, u.name, spec, lookup) if p != u.package]
    if not spec or not caps or not u.installed:
        return None
    by = excluded_by(snap, caps)
    why = (f"{by}, which rule{'s' if len(caps) == 1 else ''} {bare(u.requirement)} out, so installing that range breaks "
           f"{' and '.join(p for p, _ in caps)}")
    others = (f"Or install {bare(u.requirement)} together with releases"
              f"{' or commits' if any(installed_from(snap, p) for p, _ in caps) else ''} of "
              f"{', '.join(p for p, _ in caps)} that allow it.")
    source = installed_from(snap, u.package)
    if source:
        # pip resolves a bare name from the index: the installed checkout does not satisfy the pinned range, so pip
        # backtracks to an index release (verl main's checkout -> PyPI's verl 0.8.0) rather than to another commit
        text = (f"{u.package} {ver(snap, u.package) or ''} is installed from {source}: `pip install {u.package}` would "
                f"replace it with a release from the index. {why}.")
        if any(installed_from(snap, p) for p, _ in caps):
            return (f"{text} Check out a {u.package} commit that accepts {u.name} {u.installed} and reinstall it from "
                    f"there. {others}", ())
        # the others came from the index: pip can pick releases of them that allow the range, the checkout stays
        return (f"{text} Install {bare(u.requirement)} together with releases of {', '.join(p for p, _ in caps)} that "
                f"allow it (pip picks them with the range held), or check out a {u.package} commit that accepts "
                f"{u.name} {u.installed}.", (f"pip install '{bare(u.requirement)}' {' '.join(p for p, _ in caps)}",))
    pick, bound = _range_others_hold(snap, u, lookup)
    return (f"Keep {u.name} {u.installed} and install a release of {u.package} that accepts it (pip picks one with "
            f"{u.name} held where it is{bound}): {why}. {others}",
            (f"pip install {pick} '{u.name}=={u.installed}'",))


def _range_others_hold(snap: Any, u: Unmet, lookup: Lookup | None) -> tuple[str, str]:
    """How the declaring package goes on the held line: bare, or within what the other installed packages require of
    it. A bare name lets pip take any release that accepts the held pin, one another package rules out among them:
    real (verl 0.9.1 beside transformers 4.57.6 and huggingface-hub 1.33.0), `pip install transformers
    'huggingface-hub==1.33.0'` would install transformers 5.24.0, outside verl's `<5.11`, and the next check names
    verl:transformers. ('name' or "'name<spec>'", the clause for the fix text.)"""
    from packaging.specifiers import SpecifierSet

    from doctor.knowledge.pipcheck import admits_nothing, declared_ranges

    held = [(p, r, spec) for p, r, spec in declared_ranges(snap, u.package, lookup) if p not in (u.package, u.name)]
    both = SpecifierSet()
    for _, _, spec in held:
        both &= spec
    if not held or not str(both) or admits_nothing(both):
        return u.package, ""
    by = "; ".join(" ".join(x for x in (p, ver(snap, p), "requires", r) if x) for p, r, _ in held)
    return f"'{u.package}{both}'", f", inside what {by}"


def _inside(path: str, prefix: str) -> bool:
    import posixpath

    path, prefix = posixpath.normpath(path), posixpath.normpath(prefix)
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _hidden(u: Unmet, snap: Any) -> tuple[str, str, list[dict[str, Any]]] | None:
    """(where, prefix, copies) when the copy of the required package Python finds lies outside the interpreter's
    virtual environment (a PYTHONPATH or `pip install --target` directory, a checkout in the cwd) and hides copies
    inside it: pip's line would install into the environment and leave the outside copy first on sys.path (pip
    uninstalls only what lies inside a virtual environment: https://github.com/pypa/pip/blob/23.2.1/src/pip/_internal/utils/misc.py, is_local)."""
    prefix = val(snap.python, "prefix")
    base = snap.python.extra.get("base_prefix") if known(snap.python) and snap.python is not None else None  # probe's
    pkg = snap.package(u.name)
    loc = val(pkg, "location")
    if not isinstance(prefix, str) or not prefix or not isinstance(base, str) or base == prefix:
        return None  # not a virtual environment: pip counts every copy as its own there (user site included)
    if not isinstance(loc, str) or _inside(loc, prefix):
        return None
    copies = [dict(c) for c in (pkg.extra.get("shadowed") or []) if isinstance(c, dict)
              and isinstance(c.get("location"), str) and _inside(c["location"], prefix)]
    return (loc, prefix, copies) if copies else None


def _meets(version: Any, requirement: str) -> bool:
    """Whether a version lies in the requirement's range, pre-releases included as pip check counts them (unknown or
    unreadable: no)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    try:
        return isinstance(version, str) and Requirement(requirement).specifier.contains(Version(version),
                                                                                         prereleases=True)
    except (InvalidRequirement, InvalidVersion):
        return False


def _untold_target(u: Unmet, snap: Any) -> str:
    """'Python version' / 'machine' / both when a platform wheel's published metadata judged this package without
    the snapshot stating that fact (a bug report); '' otherwise (METADATA read, a pure wheel, an sdist)."""
    if u.metadata or not u.source or not u.source.endswith(".whl") or u.source.endswith("-none-any.whl"):
        return ""
    python, arch = _target(snap)
    return " and ".join(x for x, v in (("Python version", python), ("machine", arch)) if v is None)


def _fix(text: str, u: Unmet, conflict: Mapping[str, str] | None, ctx: CheckContext) -> str:
    """An upstream conflict is the verified stack as documented: the fix is to keep it, not to undo its pin."""
    if conflict and conflict.get("documented"):
        return (f"Nothing to change: vllm-ascend {conflict['documented']}'s own documentation installs {u.name} "
                f"{u.installed} over its pin; installing the declared range would undo it.")
    if conflict and conflict.get("paired"):
        return (f"Nothing to change: {u.name} {u.installed} meets vllm-ascend {conflict['paired']}'s "
                f"{conflict['excluded_by']}, and no release meets that and vLLM's range together (upstream's own "
                "conflict).")
    if conflict:
        return (f"Nothing to change: {ctx.profile.name} installs {u.name} this way on purpose (upstream's own "
                f"conflict); installing the declared range would undo the stack's pin.")
    return text


def _commands(u: Unmet, conflict: Mapping[str, str] | None, ctx: CheckContext) -> tuple[str, ...]:
    """A package the verified stack pins is installed the way its plan does (index, build, --no-deps): PyPI's
    `torch` or `vllm` for a bare range is another build on Ascend (CUDA wheels). When the profile's own pin of the
    required package is outside the range, the declaring package is the one off the stack: its plan line. Packages
    the stack does not pin get pip's own line."""
    if conflict:
        return ()
    # a run set's addition gets its own line like any requirement, not `pip install 'verl[verl-core]==0.9.1'`: that
    # re-resolves the package's base requirements too and moves what a stack holds back on purpose (the Ascend
    # stacks keep numpy<2 against verl 0.9.1's numpy>=2.0.0: profiles' upstream_conflicts)
    profile = ctx.profile
    pins = getattr(profile, "pins", {}) if profile is not None else {}
    names = (u.name, u.package) if _pin_meets(pins.get(u.name), u.requirement) else (u.package,)
    for name in names if not u.built_on else names[:1] if len(names) == 2 else ():
        # nor the package's own plan line for a run set's addition: `pip install verl==0.9.1` installs no extra
        if name in pins:
            from doctor.installers.fixline import plan_command  # only when such a finding exists

            return (plan_command(profile, ctx.snapshot, name),)
    if u.name in pins:
        from doctor.installers.fixline import doctor_install

        return (doctor_install(profile, ctx.snapshot),)
    return (f"pip install '{bare(u.requirement)}'",)


def _pin_meets(pin: str | None, requirement: str) -> bool:
    """Whether the profile's exact pin (`==X`) lies in the requirement's range (unknown: no)."""
    return pin is not None and pin.startswith("==") and _meets(pin[2:].strip(), requirement)


@check("published-files", "packages", findings=("release-has-no-wheel-for-target", "release-pin-has-no-wheel-for-target"))
def published_files(ctx: CheckContext) -> Iterator[Finding]:
    """A stated release of the stack publishes a wheel pip can install for the snapshot's Python and machine (a
    machine stated without its Python: for some Python), and so does each release it pins exactly."""
    snap = ctx.snapshot
    python, arch = _target(snap)
    pkgs = snap.packages if known(snap.packages) else {}
    # only stated versions (a bug report, a partial snapshot, the plan of `install --set`): a package whose
    # METADATA the snapshot read is installed, whatever PyPI publishes
    stated = sorted((n, p.version) for n, p in pkgs.items()
                    if n in STACK and isinstance(p.version, str) and p.version and not known(p.requires_dist))
    if (python is None and arch is None) or not stated:
        skip("no stated release of the stack with the snapshot's Python version or machine")
    from doctor.knowledge.requirements import load_requirements  # a project's file loads only when needed

    table = load_requirements()
    ascend = npu_host(snap) or bool(installed(snap, "vllm-ascend"))
    stack = _source_builds(ctx.profile, ascend)
    for name, version in stated:
        if "+" in version or (stack is not None and stack.builds(name, version)):
            continue  # another build than PyPI's (a local label, the stack's own source build)
        if ascend and name in _NOT_THE_PYPI_BUILD_ON_ASCEND:
            continue  # vLLM on Ascend is built from source (VLLM_TARGET_DEVICE=empty), not PyPI's wheel
        d = table.declared(name, version)
        if d is None:
            continue
        what = d.installable(python, arch)
        if what == "none" or (what == "sdist" and d.platform_wheels):
            if not (name == "torch-npu" and python and _torch_npu_python_known(version, python)):
                # torch-npu's Pythons: python-too-new/old-for-package (checks/system.py) says it
                yield _no_wheel(name, version, what, python, arch, d, table)
            if what == "none":
                continue  # the release itself cannot be installed: what it pins does not matter
        # the pins of the wheel this target installs: a machine's own declaration where its wheels differ (`machines`)
        yield from _pins_without_wheel(snap, name, version, d.on(python, arch) or d, python, arch, table)


def _pins_without_wheel(snap: Any, name: str, version: str, d: Any, python: str | None, arch: str | None,
                        table: Any) -> Iterator[Finding]:
    """A stated release that pins a release (`torch==2.1.2`) publishing no wheel and no sdist for this target:
    pip must install exactly that release with it, finds nothing, and the install of `name` fails as a whole
    (vllm 0.3.0 on Python 3.12: its sdist would build, but torch 2.1.2 has no cp312 wheel). Only exact pins are
    judged: a range could be met by a release the table does not hold."""
    from doctor.knowledge.pipcheck import exact_pins

    for line, dep, pin in exact_pins(snap, d.requires_dist):
        p = table.declared(dep, pin)
        if p is None or p.installable(python, arch) != "none":
            continue
        target = _target_text(python, arch)
        near = table.nearest_installable(name, version, python, arch)
        nd = table.declared(name, near) if near else None
        nd = (nd.on(python, arch) or nd) if nd is not None else None
        if nd is not None and any((q := table.declared(n, v)) is not None and q.installable(python, arch) == "none"
                                  for _, n, v in exact_pins(snap, nd.requires_dist)):
            near = None  # that release pins an uninstallable one too: no advice rather than a wrong one
        arch_only = arch is not None and p.installable(python, None) in ("wheel", "pure")
        comps = tuple(dict.fromkeys((component_of_distribution(name) or "python", "system" if arch_only else "python",
                                     component_of_distribution(dep) or "python")))
        evidence: dict[str, Any] = {"package": name, "version": version, "requirement": line, "requires": dep,
                                    "pinned": pin, "python": _xy(python), "machine": arch,
                                    "pinned_publishes": [f for f in p.files if f != "sdist"], "table_read": table.read}
        if near:
            evidence["nearest"] = near
        page = f"https://pypi.org/project/{dep}/{pin}/"
        yield finding(
            "release-pin-has-no-wheel-for-target", "error", comps,
            f"{name} {version} pins {dep}=={pin}, which publishes no wheel for {target} and no sdist: pip cannot "
            f"install {name} {version}",
            detail=f"{name} {version} declares `{line}` ({d.source}); PyPI's files of {dep} {pin} "
                   f"(profiles/requirements/, read {table.read}) are wheels for {p.wheel_targets} only, so pip's "
                   f"resolver finds no {dep} for this interpreter and machine and installs nothing.",
            evidence=evidence, key=f"{name}:{dep}",
            fix=(f"Install {name} {near}, the nearest release with a wheel for {target}, or use "
                 if near else "Use ") + f"a Python and machine {dep} {pin} publishes wheels for ({p.wheel_targets}).",
            source=page)


def _xy(python: str | None) -> str | None:
    return ".".join(python.split(".")[:2]) if python else None


def _target_text(python: str | None, arch: str | None) -> str:
    """'Python 3.12 on x86_64', 'Python 3.12', or 'Linux aarch64 (any Python)' when only the machine is stated."""
    if python is None:
        return f"Linux {arch} (any Python)"
    return f"Python {_xy(python)}" + (f" on {arch}" if arch else "")


def _torch_npu_python_known(version: str, python: str) -> bool:
    """Whether Ascend's compatibility table lists torch-npu `version`'s Pythons and `python` is not one of them."""
    from doctor.knowledge.matrix import torch_npu_pythons

    pys = torch_npu_pythons(version)
    return bool(pys) and _xy(python) not in (pys or ())


def _no_wheel(name: str, version: str, what: str, python: str | None, arch: str | None, d: Any,
              table: Any) -> Finding:
    xy = _xy(python)
    target = _target_text(python, arch)
    wheels = [f for f in d.files if f != "sdist"]
    page = f"https://pypi.org/project/{name}/{version}/"
    near = table.nearest_installable(name, version, python, arch)
    arch_only = arch is not None and d.installable(python, None) in ("wheel", "pure")
    comps = tuple(dict.fromkeys((component_of_distribution(name) or "python", "system" if arch_only else "python")))
    evidence: dict[str, Any] = {"package": name, "version": version, "python": xy, "machine": arch,
                                "published": wheels + (["sdist"] if what == "sdist" else []),
                                "table_read": table.read}
    if near:
        evidence["nearest"] = near
    pub = f"a Python and machine {name} {version} publishes wheels for ({d.wheel_targets})"
    fix_other = (f"Install {name} {near}, the nearest release with a wheel for {target}, or use {pub}"
                 if near else f"Use {pub}")
    if what == "none":
        return finding(
            "release-has-no-wheel-for-target", "error", comps,
            f"{name} {version} publishes no wheel for {target} and no sdist: pip cannot install it",
            detail=f"PyPI's files of {name} {version} (profiles/requirements/, read {table.read}) are wheels for "
                   f"{d.wheel_targets} only, and no source archive: `pip install {name}=={version}` finds no "
                   f"distribution for this interpreter and machine.",
            evidence=evidence, key=name, fix=f"{fix_other}.", source=page)
    return finding(
        "release-has-no-wheel-for-target", "warning", comps,
        f"{name} {version} publishes no wheel for {target}: pip builds it from source",
        detail=f"PyPI's files of {name} {version} (profiles/requirements/, read {table.read}) are wheels for "
               f"{d.wheel_targets} and an sdist: for this target pip builds the sdist, a compiled extension "
               "that needs the compiler and the CUDA / NPU toolchain its build expects, and fails without them.",
        evidence=evidence, key=name, fix=f"{fix_other}; or build it with its toolchain installed.", source=page)

