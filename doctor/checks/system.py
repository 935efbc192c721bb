"""Host and interpreter: Python version windows, CPU arch, and source trees in the cwd that shadow
installed packages."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from doctor.checks.commands import install_dry_run
from doctor.checks.facts import arch, npu_host, pver, py_version, val, ver
from doctor.checks.no_stack import (
    SRC_VENV,
    STACK,
    holds_no_stack,
    name_the_training_python,
    not_installed,
    python_named,
)
from doctor.checks.runner import CheckContext, check, reported, skip
from doctor.knowledge.matrix import SRC_PT_COMPAT, torch_npu_pythons
from doctor.knowledge.ownership import component_of_distribution
from doctor.knowledge.releases import release_for
from doctor.knowledge.versions import pkg_satisfies, release
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot

# (package, first release that needs it, min Python, why, source). Hard limits: the code cannot run below them.
# vllm-ascend: PEP 604 annotations fail on Python 3.9; the pull request cited raised python_requires to >=3.10.
# llamafactory 0.9.4 and 0.9.5 (git tags and PyPI wheels, read 2026-12-06): hparams/model_args.py imports
# typing.Self (Python 3.11) at module level, and `llamafactory-cli train / chat / api / export / webui` load hparams
# (train/tuner.py, chat/chat_model.py import it at module level); their Requires-Python says >=3.11.0.
# verl's own Python range is in its row of profiles/releases.toml (the release's Requires-Python).
_INSTALLED_BY_DOCTOR = ("verl", "vllm-ascend")
_LF = "https://github.com/hiyouga/LlamaFactory/blob/v0.9.4/src/llamafactory"
_PY_FLOORS: tuple[tuple[str, str, tuple[int, int], str, str], ...] = (
    ("vllm-ascend", "0.11.0rc0", (3, 10), "vllm-ascend {since} and newer need Python {floor} or newer",
     "https://github.com/vllm-project/vllm-ascend/issues/3728; https://github.com/vllm-project/vllm-ascend/pull/3926"),
    ("llamafactory", "0.9.4", (3, 11), "llamafactory {since} and newer import typing.Self (Python {floor}) in "
     "llamafactory/hparams/model_args.py, which llamafactory-cli train, chat, api, export and webui load "
     "(ImportError: cannot import name 'Self' from 'typing')",
     f"{_LF}/hparams/model_args.py#L20; {_LF}/hparams/__init__.py#L19; {_LF}/train/tuner.py#L28"),
)

# releases whose code fails on a Python newer than they were written for, while their metadata does not say so
# (pkg, first release that works, the first Python that breaks the older ones, why, source)
_PY_CEILINGS: tuple[tuple[str, str, tuple[int, int], str, str], ...] = (
    ("hydra-core", "1.3.0", (3, 11), "hydra-core before {fixed} gives dataclass fields instance defaults "
     "(hydra/conf/__init__.py: `override_dirname: OverrideDirname = OverrideDirname()`, 1.0.7-1.2.0's wheels), which "
     "Python {ceiling}'s dataclasses reject as unhashable: `import hydra` raises ValueError: mutable default ... for "
     "field override_dirname is not allowed (verl's main_ppo imports hydra); 1.3.0 uses default_factory. Its metadata "
     "declares no Requires-Python",
     "https://docs.python.org/3/library/dataclasses.html#mutable-default-values; "
     "https://pypi.org/project/hydra-core/1.2.0/#files; https://pypi.org/project/hydra-core/1.3.0/#files"),
)


@check("python-version", "system",
       findings=("python-outside-profile", "python-too-new-for-package", "python-too-old-for-package"))
def python_version(ctx: CheckContext) -> Iterator[Finding]:
    """Python inside what installed packages and the chosen stack support."""
    snap = ctx.snapshot
    py = py_version(snap)
    if py is None:
        skip("the target Python's version is not known")
    pys = ".".join(str(x) for x in release(py))
    yield from (f for _, f in package_pythons(snap))
    p = ctx.profile
    if p is not None and p.python_fits(pys) is False:
        yield finding(
            "python-outside-profile", "warning", ("python",),
            f"Python {pys} is outside the verified stack's range {p.python}",
            detail=f"{p.name} documents Python {p.python}" + (f" (recommended {p.python_recommended})" if p.python_recommended else "")
            + "; wheels for other versions may not exist or be untested.",
            evidence={"python": pys, "profile": p.name, "range": p.python},
            fix=f"Use Python {p.python_recommended or p.python} for this stack.", source=p.source)


def package_pythons(snap: Snapshot) -> Iterator[tuple[str, Finding]]:
    """(package, python-too-old/new-for-package) for each installed package whose code, build or release row rules
    the snapshot's Python out. declared-requirements leaves such a package's Requires-Python to these findings when
    this run reports them: one fact, said once, with the fix that rebuilds the environment."""
    py = py_version(snap)
    if py is None:
        return
    pys = ".".join(str(x) for x in release(py))
    for pkg, since, floor, why, source in _PY_FLOORS:
        have = pver(snap, pkg)
        if have is not None and not have < type(have)(since) and release(py, 2) < floor:
            want = f"{floor[0]}.{floor[1]}"
            yield pkg, _too_old(pys, pkg, ver(snap, pkg), f">={want}", source, why.format(since=since, floor=want))
    for pkg, fixed, ceiling, why, source in _PY_CEILINGS:
        have = pver(snap, pkg)
        if have is not None and have < type(have)(fixed) and release(py, 2) >= ceiling:
            top = f"{ceiling[0]}.{ceiling[1]}"
            comp = component_of_distribution(pkg)
            yield pkg, finding(
                "python-too-new-for-package", "error", ("python",) + ((comp,) if comp and comp != "python" else ()),
                f"Python {pys} is too new for {pkg} {ver(snap, pkg)}",
                detail=why.format(fixed=fixed, ceiling=top) + ".",
                evidence={"python": pys, pkg: ver(snap, pkg), "requires": f"<{top}", "fixed_in": fixed},
                fix=f"Install {pkg} {fixed} or newer (or use a Python below {top}).",
                commands=(f"pip install '{pkg}>={fixed}'",), source=source)
    yield from (("torch-npu", f) for f in _torch_npu_python(snap, py, pys))
    row = release_for(ver(snap, "verl"))
    if row is not None and pkg_satisfies(pys, row.python) is False:
        lows = [s for s in SpecifierSet(row.python) if s.operator in (">=", ">") and not pkg_satisfies(pys, str(s))]
        if lows:
            yield "verl", _too_old(pys, "verl", ver(snap, "verl"), row.python, row.python_source,
                                   f"verl {row.verl} declares Requires-Python {row.python}")
        else:
            yield "verl", finding(
                "python-too-new-for-package", "error", ("python", "verl"),
                f"Python {pys} is too new for verl {ver(snap, 'verl')}",
                detail=f"verl {row.verl} declares Requires-Python {row.python}.",
                evidence={"python": pys, "verl": ver(snap, "verl"), "requires": row.python},
                fix=f"Use a Python inside {row.python} for this verl.", source=row.python_source)


def _torch_npu_python(snap: Snapshot, py: Version, pys: str) -> Iterator[Finding]:
    """torch-npu is built only for the Pythons Ascend's compatibility table lists for its PyTorch base (torch-npu
    2.6.0: 3.9-3.11); on another Python there is no wheel, and an installed one is not for this interpreter."""
    tn = ver(snap, "torch-npu")
    pythons = torch_npu_pythons(tn)
    if not pythons:
        return
    xy = f"{py.release[0]}.{py.release[1] if len(py.release) > 1 else 0}"
    if xy in pythons:
        return
    too_new = Version(xy) > max(Version(p) for p in pythons)
    yield finding(
        "python-too-new-for-package" if too_new else "python-too-old-for-package", "error", ("python", "torch-npu"),
        f"Python {pys} is too {'new' if too_new else 'old'} for torch-npu {tn}",
        detail=f"Ascend builds torch-npu {tn} for Python {', '.join(pythons)} only (its PyTorch base's row of the "
               "compatibility table): there is no wheel for this interpreter.",
        evidence={"python": pys, "torch-npu": tn, "pythons": list(pythons)},
        fix=f"Use Python {pythons[-1]} (or another of {', '.join(pythons)}) for torch-npu {tn}, or a torch-npu built "
            f"for Python {xy}.", source=SRC_PT_COMPAT)


def _too_old(pys: str, pkg: str, v: str | None, requires: str, source: str, why: str) -> Finding:
    comp = component_of_distribution(pkg)  # llamafactory is no component: the finding is python's alone
    return finding(
        "python-too-old-for-package", "error", ("python",) + ((comp,) if comp and comp != "python" else ()),
        f"Python {pys} is too old for {pkg} {v}",
        detail=f"{why}; imports fail at start-up.", evidence={"python": pys, pkg: v, "requires": requires},
        # `doctor install` builds verl's stack: another trainer (llamafactory) is reinstalled by its own procedure
        fix=(f"Create the environment with a Python {requires} and reinstall the stack (`doctor install`)."
             if pkg in _INSTALLED_BY_DOCTOR else f"Create the environment with a Python {requires} and reinstall {pkg} "
             "there."),
        commands=(install_dry_run(None),) if pkg in _INSTALLED_BY_DOCTOR else (), source=source)  # a new venv


@check("host-arch", "system", findings=("arch-outside-profile", "arch-unsupported"))
def host_arch(ctx: CheckContext) -> Iterator[Finding]:
    """Ascend software ships for aarch64 and x86_64 only."""
    a = arch(ctx.snapshot)
    if a is None:
        skip("the CPU architecture is not known")
    if a not in ("aarch64", "x86_64"):
        yield finding(
            "arch-unsupported", "error", ("system",), f"CPU architecture {a} has no Ascend software",
            detail="CANN, torch-npu and vllm-ascend are published for aarch64 and x86_64 only.",
            evidence={"arch": a}, fix="Run on an aarch64 or x86_64 Ascend host.",
            source="https://pypi.org/project/torch-npu/2.7.1/#files; https://pypi.org/project/vllm-ascend/0.13.0/#files")
    p = ctx.profile
    if p is not None and a in ("aarch64", "x86_64") and a not in p.arches:
        yield finding(
            "arch-outside-profile", "warning", ("system",), f"{p.name} is not documented for {a}",
            evidence={"arch": a, "profile": p.name, "arches": list(p.arches)},
            fix="Pick a profile for this architecture with `doctor check --profile NAME`.", source=p.source)


# top-level import name -> (distribution, compiled: a source checkout cannot import without a build)
_SHADOWABLE = {
    "torch_npu": ("torch-npu", True), "torch": ("torch", True), "vllm_ascend": ("vllm-ascend", True),
    "vllm": ("vllm", True), "mindspeed": ("mindspeed", False), "megatron": ("megatron-core", False),
    "verl": ("verl", False), "transformers": ("transformers", False), "triton": ("triton-ascend", True),
}


def _is_path_hook(origin: str) -> bool:
    """https://github.com/pypa/setuptools/blob/v70.0.0/setuptools/command/editable_wheel.py (PATH_PLACEHOLDER)."""
    base = posixpath.basename(str(origin))
    return base.startswith("__editable__.") and base.endswith(".__path_hook__")


@check("cwd-shadowing", "system", findings=("cwd-shadows-package",))
def cwd_shadowing(ctx: CheckContext) -> Iterator[Finding]:
    """A source tree in the current directory wins over the installed package on sys.path[0]."""
    snap = ctx.snapshot
    cwd = val(snap.host, "cwd")
    if not isinstance(cwd, str) or not cwd:
        skip("the working directory is not known")
    cwd = posixpath.normpath(cwd)
    for mod, (dist, compiled) in _SHADOWABLE.items():
        m = snap.module(mod)
        # setuptools' editable finder puts a placeholder entry (`__editable__.<dist>.finder.__path_hook__`) on a
        # namespace package's path; made absolute it looks like a directory in the cwd, but it is no file at all
        o = [x for x in (val(m, "origins") or []) if not _is_path_hook(x)]
        if not o:
            continue
        first = posixpath.normpath(o[0])
        if posixpath.dirname(first) != cwd:
            continue
        pkg = snap.package(dist)
        loc = val(pkg, "location") if pkg else None
        if isinstance(loc, str) and posixpath.normpath(loc) == cwd and all(posixpath.normpath(x) == first for x in o[1:]):
            # an editable install of this very checkout: the cwd copy *is* the installed one. A checkout's own
            # egg-info (left by an earlier `pip install -e .`) also puts the package's location in the cwd; then a
            # second origin is the installed copy that the checkout hides
            continue
        comp = "torch-npu" if mod == "torch_npu" else ("megatron" if mod == "megatron" else dist)
        if comp not in ("torch", "torch-npu", "vllm", "vllm-ascend", "mindspeed", "megatron", "verl", "transformers",
                        "triton-ascend"):
            comp = "python"
        yield finding(
            "cwd-shadows-package", "error" if compiled else "warning", (comp, "python", "system"),
            f"`import {mod}` picks up the source tree in the current directory",
            detail=(f"{first} is found before the installed {dist} because Python puts the working directory first on "
                    "sys.path" + ("; an unbuilt checkout has no compiled extension (e.g. `No module named 'torch_npu._C'`)."
                                  if compiled else ".")),
            evidence={"module": mod, "origin": first, "cwd": cwd, "other_origins": o[1:]},
            fix=f"Run from another directory (cd ~) or remove {first} from the path.",
            source="https://github.com/Ascend/pytorch/issues/24")


_PROBE_FIX = {
    "python": "Point --python at the training environment's interpreter (Python >= 3.8) and run `doctor collect -v` "
              "to see its error.",
    "npu_smi": "npu-smi hung or failed: re-run with a longer --npu-smi-timeout (e.g. 30); if it still hangs, the "
               "driver or a card is sick (check `dmesg`, then reset the card or reboot).",
}


@check("target-interpreter", "system", findings=("target-holds-no-stack",))
def target_interpreter(ctx: CheckContext) -> Iterator[Finding]:
    """The interpreter examined is a training environment, not only the doctor's. README's install puts the doctor
    in a venv of its own, and `check` examines the interpreter it runs in unless `--python` names another: run so,
    it finds verl-ascend-doctor and none of the stack, every package rule has nothing to judge, and the report says
    nothing about the environment the user meant (a venv has its own packages: the training one is elsewhere).
    Any other interpreter holding none of the stack on a host where nothing says Ascend (`--python` naming an empty
    venv on a login node) is said too: the package rules stand down there, so the report was about the host alone."""
    snap = ctx.snapshot
    if not snap.is_complete:
        skip("a partial snapshot cannot say the stack is not installed")
    if any(snap.has_package(n) for n in STACK):
        skip("the interpreter examined holds part of the stack")
    own = holds_no_stack(snap)
    if not own and npu_host(snap) and reported(ctx, "torch-npu-installed", "torch-not-installed", "torch"):
        skip("torch-not-installed says it: torch and torch-npu are not installed on this Ascend host")
    if not_installed(ctx) and reported(ctx, "deep-imports", "import-not-installed", "python"):
        # one finding, one fix: `--deep`'s imports that failed here for the same reason say it (doctor.checks.deep)
        skip("import-not-installed says it: `--deep` imported none of the stack in the "
             + ("doctor's own environment" if own else "interpreter examined"))
    exe = val(snap.python, "executable")
    if not own:
        other = name_the_training_python(ctx, deep=False)
        yield finding(
            "target-holds-no-stack", "warning", ("python",),
            f"The interpreter examined holds none of the training stack: {exe or 'its path is not known'}",
            detail=(f"None of {', '.join(STACK)} is installed there: verl cannot run with it, and the rules about "
                    "the Python stack had nothing to judge, so the rest of this report is about the host alone."),
            evidence={"python": exe},
            fix=(f"If it is meant to run verl, install the verified stack into it (the plan: the command below); if "
                 f"not, {other[0].lower()}{other[1:]}."),
            commands=(install_dry_run(snap, ctx.profile),),
            source=SRC_VENV)
        return
    yield finding(
        "target-holds-no-stack", "warning", ("python",),
        "The interpreter examined holds the doctor and none of the training stack",
        detail=(f"{exe or 'The interpreter'} has verl-ascend-doctor installed and none of {', '.join(STACK)}: "
                "no rule about the Python stack had anything to judge. "
                + ("--python named the doctor's own interpreter" if python_named(ctx) else
                   "The doctor examines the interpreter it runs in unless --python names another")
                + ", and a venv holds only its own packages: the environment that runs verl is another interpreter, "
                "or has not been built yet."),
        evidence={"python": exe},
        fix=name_the_training_python(ctx, deep=False) + "; to build one, `doctor install --venv DIR --dry-run`.",
        source=SRC_VENV)


@check("probe-status", "system", findings=("probe-failed",))
def probe_status(ctx: CheckContext) -> Iterator[Finding]:
    """A probe that timed out or crashed leaves its facts unknown: say so, so silence is not read as health."""
    meta = ctx.snapshot.extra.get("collect")
    probes = meta.get("probes") if isinstance(meta, dict) else None
    if not isinstance(probes, dict):
        skip("the snapshot does not record how its probes ran")
    for name, st in sorted(probes.items()):
        if not isinstance(st, dict) or st.get("status") not in ("timeout", "error"):
            continue
        errs = [str(e) for e in (st.get("errors") or [])][:5]
        yield finding(
            "probe-failed", "warning", ("system",), f"The {name} probe {'timed out' if st['status'] == 'timeout' else 'failed'}",
            detail="Its facts are unknown, so the checks that need them stayed silent. " + "; ".join(errs),
            evidence={"probe": name, "status": st.get("status"), "errors": errs, "seconds": st.get("seconds")},
            fix=_PROBE_FIX.get(name, "Run `doctor collect -v` to see the probe's error."))
