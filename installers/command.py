"""`doctor install` as a function: options -> Report. inputs -> plan -> (dry-run | download | execute | rollback).

The CLI module only parses options; everything here returns data (a Report with `plan` and `steps`), so the
same flow is testable without Click and the JSON report is the contract. The target is always explicit
(`--venv` or `--python`): the doctor never installs into its own environment by default.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctor.console import Console
from doctor.errors import InputError, RefusedError
from doctor.installers import findings as fd
from doctor.installers import halfvenv
from doctor.installers import journal as jr
from doctor.installers import wheelhouse as wh
from doctor.installers.backends import Source, make_backend, shown
from doctor.installers.execute import SATISFIED, STEP_TIMEOUT, Executor, StepResult, new_clone_detail
from doctor.installers.gitsrc import parse_mirrors
from doctor.installers.plan import IndexOptions, Plan
from doctor.installers.resolve import (
    Facts,
    facts_from_snapshot,
    nearest_profiles,
    parse_git_refs,
    parse_sets,
    resolve,
)
from doctor.installers.satisfy import satisfied, snapshot_view
from doctor.installers.wheelfit import TargetPython
from doctor.report import Report
from doctor.snapshot.model import Snapshot


@dataclass
class Options:
    profile: str | None = None
    sets: tuple[str, ...] = ()
    git_refs: tuple[str, ...] = ()
    python: str | None = None
    venv: str | None = None
    backend: str = "auto"
    dry_run: bool = False
    from_snapshot: str | None = None
    arch: str | None = None
    python_version: str | None = None
    glibc: str | None = None
    download_only: str | None = None
    wheelhouse: str | None = None
    offline: bool = False
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    git_mirrors: tuple[str, ...] = ()
    rollback: bool = False
    list_journals: bool = False
    log: str | None = None
    src: str | None = None
    env_file: str | None = None
    isolated: bool = False
    root: str = "/"
    profiles_dir: str | None = None
    step_timeout: float | None = None
    no_check: bool = False
    no_host_check: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Target:
    """Where the plan goes: the interpreter to install into (None: another machine), whether its venv is still
    to be made, the interpreter whose facts stand in until then, and the prefix."""

    python: str | None
    create: bool = False
    facts_python: str | None = None
    prefix: str | None = None
    # {project: version} that `python -m venv` of facts_python puts into the venv to be made (installers.venvpip)
    venv_installs: dict[str, str] = field(default_factory=dict)


def run(opts: Options, console: Console) -> Report:
    t_start = time.monotonic()
    _validate(opts)
    sets, git_refs = parse_sets(opts.sets), parse_git_refs(opts.git_refs)
    if opts.rollback:
        from doctor.installers import rollback as rb

        python = _rollback_python(opts)
        return rb.listing(python, console) if opts.list_journals else rb.rollback(python, console)
    source, bundles = _source(opts)  # a folder that is not a wheelhouse is refused before anything is made
    tgt = _target(opts)
    snap, target_env = _facts_source(opts, tgt, console)
    override = _refuse_managed(opts, target_env)
    where = "the snapshot" if opts.from_snapshot else "this host"
    facts = facts_from_snapshot(snap, arch=opts.arch, python_version=opts.python_version, glibc=opts.glibc, where=where)
    profile, reason = _profile(opts, snap, facts)
    if tgt.prefix is None:
        tgt.prefix = target_env.prefix if target_env is not None else _snapshot_prefix(snap)
    base = Path(tgt.prefix) if tgt.prefix else Path.cwd()
    src_dir = os.path.abspath(opts.src) if opts.src else str(base / "src")
    env_path = os.path.abspath(opts.env_file) if opts.env_file else str(base / "doctor-env.sh")
    python_flag = "--python-version" if opts.python_version else "--from" if opts.from_snapshot else "--python"
    bundled = {name: str(b["commit"]) for name, b in bundles.items() if b.get("commit")}
    plan = resolve(profile, facts, sets=sets, git_refs=git_refs, python=tgt.python, src_dir=src_dir, env_path=env_path,
                   prefix=tgt.prefix, reason=reason, python_flag=python_flag, bundled=bundled)
    from doctor.installers.setcheck import (
        check_release_exists,
        check_served_by_index,
        check_served_offline,
        check_sets,
    )

    # a --set version the source cannot serve: exit 2 now, before anything is made, not at the last install step
    # (offline: what the wheelhouse holds; a local --index-url mirror: its listing; else PyPI's release table, where
    # it covers the project)
    # and a served version none of whose files fits the target's Python, machine and glibc (wheelfit)
    unchecked: list[str] = []
    unread: dict[str, list[str]] = {}
    unfit: dict[str, str] = {}
    installed = {n: d.version for n, d in target_env.dists.items()} if target_env is not None else \
        _new_venv_holds(opts, tgt)
    target = TargetPython(_python_full(opts, snap, facts), facts.arch, facts.glibc) \
        if re.fullmatch(r"\d+\.\d+", facts.python_version) else None  # a snapshot's odd Python: not judged
    if opts.offline and opts.wheelhouse:
        manifest = wh.load(opts.wheelhouse)
        house = str(Path(opts.wheelhouse).resolve())
        unfit = check_served_offline(sets, house, wh.held(manifest, opts.wheelhouse), installed, target)
        _refuse_unservable(plan, manifest, house, installed, target, sets,
                           pip_step_runs=_pip_step_runs(opts, override, target_env, tgt))
    elif sets:
        served: set[str] = set()
        if source.index.index_url:  # the mirror and its extras replace every index the plan names
            served, unread, unfit = check_served_by_index(
                sets, [source.index.index_url, *source.index.extra_index_urls], source.find_links, installed,
                built=getattr(profile, "built_from_source", frozenset()), target=target)
        unchecked = check_release_exists(profile, {n: v for n, v in sets.items() if n not in served and n not in unfit},
                                         facts.python_version, facts.arch, target.version if target else None,
                                         target)
    # a --set pin check would call an error: exit 2; one it would warn on: said (against the plan without --set)
    set_warnings = check_sets(profile, facts, plan, sets, base=lambda: resolve(
        profile, facts, git_refs=git_refs, python=tgt.python, src_dir=src_dir, env_path=env_path, prefix=tgt.prefix,
        reason=reason, python_flag=python_flag, bundled=bundled))
    report = Report(command="install", profile={"name": profile.name, "reason": reason, "source": profile.source})
    if unchecked or unread or unfit:
        report.extra["set_unchecked"] = {n: sets[n] for n in (*unchecked, *unread, *unfit)}
    if unchecked:
        console.print("; ".join(f"--set {n}={sets[n]}" for n in unchecked) + ": not checked before the run (the PyPI "
                      "release table of profiles/requirements/ keeps releases since 2023 and no dev builds); the install "
                      "step finds out whether the index serves it")
    for n, why in unfit.items():
        console.print(f"--set {n}={sets[n]}: whether it fits {target} is not known before the run ({why}); the "
                      "install step finds out")
    for n, places in unread.items():
        console.print(f"--set {n}={sets[n]}: not checked against {', '.join(shown([p]) for p in places)} before the "
                      "run (an http(s) index is not read until a step installs from it); the install step finds out "
                      "whether it serves it")
    report.extra["plan"] = plan.to_dict()
    if override:
        report.extra["break_system_packages"] = override
        console.print(console.style(f"PEP 668: {target_env.python} is managed by the OS, and {override} turns pip's "
                                    "guard off for it: the steps install into it (pip reads that override; uv, which "
                                    "does not, is given --break-system-packages), where they may overwrite files the "
                                    "OS package manager owns", "yellow"))
    report.findings += set_warnings
    if opts.download_only:  # the wheelhouse is made here for another machine: its host is not judged here
        from doctor.installers.download import download

        return download(opts, plan, report, console)
    report.findings += fd.system_findings(plan, where=where)
    mirrors = parse_mirrors(opts.git_mirrors)
    backend = make_backend(opts.backend, isolated=opts.isolated, break_system_packages=bool(override))
    _refuse_elsewhere(opts, backend, tgt)
    _pip_settings(opts, plan, backend, tgt, report, console)
    header = f"profile {plan.profile} ({profile.source})"
    if opts.dry_run:
        return _dry_run(opts, plan, report, console, snap=snap, target_env=target_env, tgt=tgt,
                        ex_args={"backend": backend, "source": source, "mirrors": mirrors, "bundles": bundles,
                                 "env_header": header})
    if tgt.create:
        tgt.python = _make_venv(opts, console)
        target_env = None
    assert tgt.python is not None
    return _execute(opts, plan, report, console, profile=profile, python=tgt.python, target_env=target_env,
                    ex_args={"backend": backend, "source": source, "mirrors": mirrors, "bundles": bundles,
                             "env_header": header}, t_start=t_start)


def _dry_run(o: Options, plan: Plan, report: Report, console: Console, *, snap: Snapshot, target_env: Any, tgt: Target,
             ex_args: dict[str, Any]) -> Report:
    where = "the snapshot" if o.from_snapshot else "this host"
    if o.from_snapshot or target_env is None:
        view = snapshot_view(snap, sources=plan.sources(), env_ok=_env_ok_from_snapshot(plan, snap) if o.from_snapshot
                             else False)
        ex = Executor(plan, python=tgt.python or "<target python>", log_path=os.devnull, **ex_args)
        plan = ex.plan  # offline: the sources at their bundles' commits
        report.extra["plan"] = plan.to_dict()
        # a venv to be made: its clones are new too (not for --from: those paths are another machine's)
        steps = [StepResult(s.id, s.kind, s.title, SATISFIED if satisfied(s, view, plan) else "pending",
                            command=ex.describe(s), detail="" if o.from_snapshot else new_clone_detail(s, ex.src_dir, tgt.prefix))
                 for s in plan.steps]
    else:
        assert tgt.python is not None
        _refuse_interrupted(target_env.prefix, tgt.python)
        ex = Executor(plan, python=tgt.python, log_path=os.devnull, **ex_args)
        steps = ex.statuses(target_env)
        plan = ex.plan  # with the pip step, when the target's pip runs it
        report.extra["plan"] = plan.to_dict()
        pip = ex.pip_note(target_env)
        if pip is not None:
            report.extra["pip"] = pip
            console.print(f"pip: {pip['runs']} {pip['version'] or '(none)'} runs the steps; the target's pip is "
                          f"{pip['target_pip'] or 'absent'}; editable installs need >= {pip['floor']} (PEP 660)")
    report.extra["steps"] = [s.to_dict() for s in steps]
    report.extra["dry_run"] = True
    report.extra["downloads"] = ex.downloads(steps)
    tool = next((t for t in ("pip", "uv") if report.extra.get(f"{t}_config")), None)
    if tool:  # what pip's or uv's configuration adds, and the steps follow
        from doctor.installers import pipsettings as ps
        from doctor.installers.execute import DEFAULT_INDEX

        report.extra["downloads"] = ps.downloads(report.extra[f"{tool}_config"], report.extra["downloads"],
                                                 offline=o.offline, default_index=DEFAULT_INDEX)
        if report.extra["downloads"]["find_links"]:
            report.extra["downloads"]["configured_by"] = [tool]
    fd.split_host(report, o.no_host_check)
    fd.print_plan(console, plan, steps, where, new_venv=tgt.create and not o.from_snapshot)
    fd.print_downloads(console, report.extra["downloads"], isolated=o.isolated, offline=bool(o.offline))
    fd.print_host(console, report)
    return report


def _pip_step_runs(o: Options, override: Any, target_env: Any, tgt: Target) -> bool:
    """Whether the run will add the pip step (the target's own pip runs the plan: installers.execute.pip_step): for
    an existing target, and for a venv still to be made, which the pip backend makes with `python -m venv` (its
    pip is the one that Python bundles, judged as the target's: _new_venv_holds)."""
    from doctor.installers.backends import PipBackend

    backend = make_backend(o.backend, isolated=o.isolated, break_system_packages=bool(override))
    return (target_env is not None or tgt.create) and isinstance(backend, PipBackend) and not backend.own


def _new_venv_holds(o: Options, tgt: Target) -> dict[str, str]:
    """What a venv still to be made holds once made: the wheels ensurepip installs when `python -m venv` makes it
    (installers.venvpip), nothing when `uv venv` does (_venv_maker) or there is no venv to make."""
    return dict(tgt.venv_installs) if tgt.create and _venv_maker(o) is None else {}


def _venv_maker(o: Options) -> str | None:
    """The uv that makes the venv (`uv venv`, no pip in it), None when `python -m venv` does."""
    from doctor.installers.backends import find_uv

    return find_uv() if o.backend in ("auto", "uv") else None


def _refuse_unservable(plan: Plan, manifest: wh.Manifest, house: str, installed: dict[str, str],
                       target: TargetPython | None, sets: dict[str, str], *, pip_step_runs: bool = False) -> None:
    """An --offline plan a step of which the wheelhouse cannot serve (a requirement it holds no fitting file of, a
    source it holds no bundle of) is exit 2 now, before the venv is made or anything in the target changes, naming
    each one, its step and the `--download-only` that rebuilds the wheelhouse (installers/housecheck.py). What steps
    read after a clone is read from the bundles first (installers/clonereqs.py), and the pip step the run adds
    when the target's pip runs the plan is judged with the rest."""
    from dataclasses import replace

    from doctor.installers.backends import PIP_FLOOR
    from doctor.installers.clonereqs import BundleFiles, after_clone
    from doctor.installers.housecheck import gaps, refusal
    from doctor.installers.plan import INSTALL, Step
    from doctor.installers.setcheck import held_offers

    files = wh.held(manifest, house)
    if pip_step_runs:  # the step execute.pip_step puts first, with the same requirement
        plan = replace(plan, steps=(Step("pip", INSTALL, f"Bring the target's pip to >= {PIP_FLOOR}",
                                         requirements=(f"pip>={PIP_FLOOR}",)), *plan.steps))
    with BundleFiles(house, manifest.git) as bundled:
        more = after_clone(plan, bundled.read)
    found = gaps(plan, lambda name: held_offers(files, name), installed, target, manifest.git, more)
    if found:
        raise RefusedError(refusal(found, plan, house, target, manifest.target, sets),
                           source=str(Path(house) / wh.MANIFEST))


def _python_full(o: Options, snap: Snapshot, facts: Facts) -> str:
    """The target's Python as precisely as known (X.Y.Z from the interpreter or the snapshot, X.Y from
    --python-version): a Requires-Python such as `>=3.10.4` needs the patch level."""
    from doctor.snapshot.model import known

    v = snap.python.version if not o.python_version and known(snap.python) and known(snap.python.version) else None
    return str(v) if isinstance(v, str) and v.split(".")[:2] == facts.python_version.split(".") else facts.python_version


def _refuse_interrupted(prefix: str, python: str) -> None:
    """An install that died without restoring (SIGKILL, power loss) leaves a `running` journal: the run refuses
    until `--rollback`, and so does the dry run (its plan would be read off the half-installed environment). A
    `running` journal whose run still holds the lock is another install at work, and is said so (exit 2)."""
    bad = jr.interrupted(prefix)
    if bad is not None and jr.locked(prefix):
        raise RefusedError(f"another `doctor install` is running on this environment (journal {bad.dir}, started "
                           f"{bad.data.get('started')}): wait for it to end, then run this again; it is not an "
                           "interrupted install, so do not roll it back", source=str(jr.state_root(prefix) / "lock"))
    if bad is not None:
        raise RefusedError(f"an earlier install was interrupted (journal {bad.dir}, state {bad.state}, started "
                           f"{bad.data.get('started')}); run `doctor install --rollback --python {python}` to restore the "
                           "environment it recorded, then try again", source="doctor install")


def _execute(o: Options, plan: Plan, report: Report, console: Console, *, profile: Any, python: str, target_env: Any,
             ex_args: dict[str, Any], t_start: float) -> Report:
    from doctor.installers.target import probe

    prefix = target_env.prefix if target_env is not None else probe(python).prefix
    _refuse_interrupted(prefix, python)
    log_path = o.log or str(jr.state_root(prefix) / "logs" /
                            f"install-{_dt.datetime.now(_dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.log")
    ex = Executor(plan, python=python, log_path=log_path, progress=console.status,
                  preflight=(lambda: wh.verify(str(o.wheelhouse))) if o.wheelhouse else None,
                  step_timeout=STEP_TIMEOUT if o.step_timeout is None else o.step_timeout, **ex_args)
    with jr.lock(prefix):
        outcome = ex.run(target_env)
    report.extra["steps"] = [r.to_dict() for r in outcome.results]
    report.extra["log"] = log_path
    report.extra["backend"] = ex_args["backend"].name
    report.extra["seconds"] = round(time.monotonic() - t_start, 3)  # probe + plan + execute
    if outcome.journal:
        report.extra["journal"] = outcome.journal
    house = Path(o.wheelhouse).resolve() if o.wheelhouse and o.offline else None  # an --offline install's
    report.findings += fd.outcome_findings(outcome, log_path, python, str(house) if house else None,
                                           sets=parse_sets(o.sets))
    if outcome.ok and outcome.changed and not o.no_check:
        report.findings += fd.post_check(o.root, python, profile, report,
                                         offline=str(house / wh.WHEELS) if house else None,
                                         env_file=plan.env.path if plan.env else None, sets=parse_sets(o.sets))
    fd.split_host(report, o.no_host_check)
    fd.print_outcome(console, outcome)
    fd.print_host(console, report)
    return report


# -- inputs ---------------------------------------------------------------------------------------------------


def _validate(o: Options) -> None:
    if o.python and o.venv and o.rollback:
        raise InputError("give --python or --venv, not both, with --rollback", source="--venv")
    if o.list_journals and not o.rollback:
        # `doctor install --list` is what a new user types to see what can be installed: name where that list is
        raise InputError("lists the install history, with --rollback only (`doctor install --rollback --list --venv "
                         "DIR`); the verified stacks doctor install can install are listed by `doctor profiles`",
                         source="--list")
    if o.from_snapshot and not (o.dry_run or o.download_only):
        raise InputError("--from plans for another machine: use it with --dry-run or --download-only", source="--from")
    if o.step_timeout is not None and not o.step_timeout > 0:  # 0 read as "unset" (3 h); below 0 failed every step
        raise InputError(f"--step-timeout takes seconds above 0, not {o.step_timeout:g}", source="--step-timeout")
    if o.offline and not o.wheelhouse:
        raise InputError("--offline needs --wheelhouse DIR (made by --download-only)", source="--offline")
    if o.download_only and (o.wheelhouse or o.rollback or o.dry_run):
        raise InputError("--download-only builds a wheelhouse; it cannot be combined with --wheelhouse, --rollback or "
                         "--dry-run", source="--download-only")
    if o.rollback and (o.dry_run or o.profile or o.sets or o.git_refs):
        raise InputError("--rollback takes only the target (--python/--venv)", source="--rollback")
    if not (o.venv or o.python or o.from_snapshot or o.download_only):
        raise InputError("say where to install: --venv DIR (created if missing) or --python PATH (an existing "
                         "environment's interpreter); the doctor never installs into its own environment by default",
                         source="--venv")
    if not o.from_snapshot:
        _refuse_bad_target(o)


def _refuse_bad_target(o: Options) -> None:
    """A --venv that is a file, and a --venv or --python that is the doctor's own environment, are refused: the
    README promises the doctor never installs into itself (its own packages would be replaced under it)."""
    own = os.path.realpath(sys.prefix)
    if o.venv:
        if os.path.exists(o.venv) and not os.path.isdir(o.venv):
            raise InputError(f"{o.venv} exists and is not a directory (--venv takes a venv directory, created if "
                             "missing)", source="--venv")
        if os.path.realpath(o.venv) == own:
            raise InputError(f"{o.venv} is the doctor's own environment; install into another venv", source="--venv")
        _refuse_dead_interpreter(o.venv)
        halfvenv.refuse(o.venv)
        _refuse_foreign_directory(o.venv)
    if o.python:
        import shutil

        exe = o.python if os.sep in o.python else shutil.which(o.python)
        root = halfvenv.venv_of(exe) if exe else None
        if root is not None:
            halfvenv.refuse(root, "--python")
        # the interpreter's environment is the directory above its bin/ (a venv's python links to the base one,
        # so the file itself is not resolved)
        if exe and os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(exe)))) == own:
            raise InputError(f"{o.python} is the doctor's own interpreter ({sys.prefix}); pass another environment's "
                             "python, or --venv DIR", source="--python")


def _refuse_foreign_directory(venv: str) -> None:
    """A --venv that is an existing directory with files in it but no interpreter and no `pyvenv.cfg` is someone's
    directory, not a venv (`--venv ~/myproject`, a typo for its `.venv`): `python3 -m venv` writes a venv into it,
    among the user's files, and `uv venv` refuses with a hint to `--clear` it, which deletes them. Refused before
    anything is planned or made; a missing or empty directory is made into a venv as before."""
    if not os.path.isdir(venv) or os.path.lexists(os.path.join(venv, "bin", "python")):
        return
    if os.path.exists(os.path.join(venv, "pyvenv.cfg")):
        return
    try:
        entries = sorted(os.listdir(venv))
    except OSError:
        return
    if not entries:
        return
    shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
    raise InputError(f"{venv} is a directory that is not a venv (no bin/python, no pyvenv.cfg; it holds {shown}), so "
                     "nothing was done: --venv takes a venv, or a new or empty directory to make one in. Name the "
                     "venv itself (e.g. its .venv), or a new directory", source="--venv")


def _refuse_dead_interpreter(venv: str) -> None:
    """A venv whose `bin/python` is a link to an interpreter that was removed or moved (a pyenv or module Python
    uninstalled, an image rebuilt) is neither a target nor a place for a new venv: taken as missing, the run would
    make a venv over it, which uv refuses ("A virtual environment already exists") and `python3 -m venv` does over
    the user's packages. Refused before anything is planned or made, naming the dead link and the repair that keeps
    the packages (`venv --upgrade` from a Python of the version `pyvenv.cfg` records)."""
    vpy = os.path.join(venv, "bin", "python")
    if not os.path.islink(vpy) or os.path.exists(vpy):
        return
    version = halfvenv.made_from(venv) or ""
    python = f"python{version}" if version else "python3"
    raise InputError(f"{venv} is a venv whose interpreter is gone: {vpy} leads to {os.path.realpath(vpy)}, which does "
                     "not exist (the Python it was made from was removed or moved), so nothing was done. Point it at an "
                     f"installed Python{' ' + version if version else ''} (`{python} -m venv --upgrade "
                     f"{shlex.quote(venv)}` keeps its packages), or choose another --venv", source="--venv")


def _refuse_managed(o: Options, env: Any) -> str | None:
    """An interpreter the OS manages (PEP 668: not a venv, EXTERNALLY-MANAGED in its stdlib directory, as
    Debian's /usr/bin/python3) is refused before anything is planned or made: pip and uv refuse every install
    step there (`externally-managed-environment`), so a run would stop at its first step after cloning into and
    writing its journal under the OS's prefix (/usr/src, /usr/doctor-env.sh), and a dry run would list steps that
    cannot run. A venv made from that interpreter (`--venv DIR --python EXE`) is not managed and installs as usual.

    Unless the user turned pip's guard off for it (snapshot rule 15: PIP_BREAK_SYSTEM_PACKAGES, or
    `break-system-packages = true` in a pip.conf pip reads) for both commands a plan runs, install and uninstall:
    then pip would run each step, and so does the install, saying so; uv, which reads neither, is given
    `--break-system-packages`. Returns what turned it off (None: not managed). Not under `--isolated`, which hides
    pip's configuration and PIP_* variables from the steps, nor when the override covers one command only: the
    doctor does not widen an override the user made."""
    if env is None or not env.externally_managed:
        return None
    if env.pip_override and not o.isolated:
        return str(env.pip_override)
    python = shlex.quote(env.python)
    why = ""
    if env.pip_override:
        why = (f" {env.pip_override} turns pip's guard off, but --isolated hides pip's configuration and PIP_* "
               "variables from the steps: drop --isolated to install into it anyway.")
    elif env.break_system_packages:
        only = ", ".join(f"pip {c} ({s})" for c, s in sorted(env.break_system_packages.items()))
        why = (f" The user's override (break-system-packages) covers {only} only; a plan also runs the other "
               "command.")
    raise InputError(f"{env.python} is managed by the OS (PEP 668: its standard library directory holds "
                     "EXTERNALLY-MANAGED): pip and uv refuse to install into it, so nothing was done." + why
                     + f" Install into a venv made from it: `doctor install --venv verl-venv --python {python}`",
                     source="--venv" if o.venv else "--python")


def _refuse_elsewhere(o: Options, backend: Any, tgt: Target) -> None:
    """pip's own configuration (PIP_TARGET, PIP_PREFIX, PIP_ROOT, or `target` / `prefix` / `root` in a pip.conf pip
    reads) would send every pip step to a directory of its own, not into the target interpreter: the plan would land
    there (and, on an interpreter the OS manages, get past PEP 668's check, which pip skips for those), and the
    steps' checks would judge an interpreter that did not change. Refused before anything runs, naming the setting;
    not under --isolated (which hides pip's configuration from the steps) nor with uv, which reads neither."""
    if o.isolated or backend.name != "pip" or o.from_snapshot:
        return
    from doctor.probes.pipconf import install_elsewhere

    said = install_elsewhere(os.environ, tgt.prefix or sys.prefix)
    if said:
        raise InputError(f"pip's configuration sends every `pip install` to a directory of its own ({said}), not into "
                         f"{tgt.python or 'the target'}: the steps would install there. Unset it for this run, or "
                         "pass --isolated (the steps then ignore pip's configuration)", source=said)


def _pip_settings(o: Options, plan: Plan, backend: Any, tgt: Target, report: Report, console: Console) -> None:
    """pip's configuration that changes what the steps install (PIP_NO_DEPS, PIP_CONSTRAINT, PIP_ONLY_BINARY, a
    pip.conf's `no-deps = true`, ...), decided per setting before anything runs (installers/pipsettings.py): exit 2
    for what no flag undoes; what the steps neutralise or follow is said before the plan (`pip_config` in --json)
    and the install steps carry the neutralising flags and environment. Not under --isolated (pip reads none of it
    then), with uv (which reads none of it) or for another machine (--from)."""
    if o.isolated or o.from_snapshot:
        return
    from doctor.installers import pipsettings as ps

    if backend.name == "uv":  # uv reads none of pip's configuration, but its own (installers/uvsettings.py)
        from doctor.installers import uvsettings as us

        found = us.judge(os.environ, cwd=os.getcwd(), offline=o.offline, pins=ps.plan_pins(plan))
        n = us.neutralising(found)
    else:
        from doctor.probes.pipconf import install_settings

        found = ps.judge(install_settings(os.environ, tgt.prefix or sys.prefix, ps.WANTED),
                         own_pip=bool(getattr(backend, "own", None)), offline=o.offline, pins=ps.plan_pins(plan))
        n = ps.neutralising(found)
    bad = ps.refusal(found, backend.name)
    if bad:
        raise InputError(bad, source=ps.redacted(next(s.said for s in found if s.action == ps.REFUSED)))
    if not found:
        return
    backend.neutral_args, backend.neutral_env, backend.neutral_unset = n.args, n.env, n.unset
    report.extra[f"{backend.name}_config"] = [s.to_dict() for s in found]
    console.print(f"{backend.name}'s configuration, as the steps will meet it (--isolated ignores it all):\n"
                  + "\n".join(ps.lines(found)))


def _rollback_python(o: Options) -> str:
    python = str(Path(o.venv) / "bin" / "python") if o.venv else str(o.python)
    if not Path(python).exists():
        raise InputError(f"no interpreter at {python}, so no install there to roll back: name the --venv or --python "
                         "the install was given", source="--venv" if o.venv else "--python")
    return python


def _target(o: Options) -> Target:
    """The interpreter to install into; a `--venv DIR` without one is made later (never in a dry run), and until
    then facts come from the interpreter it will be made from, with nothing installed."""
    if o.from_snapshot:
        return Target(python=None, prefix=o.venv)
    if o.venv:
        vpy = Path(o.venv) / "bin" / "python"
        if vpy.exists():
            return Target(python=str(vpy))
        return Target(python=str(vpy.absolute()), create=True, facts_python=o.python or sys.executable,
                      prefix=os.path.abspath(o.venv))
    if o.python:
        return Target(python=o.python)
    return Target(python=None, facts_python=sys.executable)  # --download-only for this machine's kind


def _make_venv(o: Options, console: Console) -> str:
    assert o.venv
    vpy = Path(o.venv) / "bin" / "python"
    base = o.python or sys.executable
    console.status(f"creating venv {o.venv} from {base}")
    uv = _venv_maker(o)
    cmd = [uv, "venv", "--python", base, o.venv] if uv else [base, "-m", "venv", o.venv]
    env = dict(os.environ)
    if o.isolated:
        env["UV_NO_CONFIG"] = "1"
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if cp.returncode != 0 or not vpy.exists():
        raise InputError(f"cannot create the venv: {(cp.stderr or cp.stdout).strip()[-300:]}", source=o.venv)
    return str(vpy)


def _facts_source(o: Options, tgt: Target, console: Console) -> tuple[Snapshot, Any]:
    from doctor.installers.target import probe

    if o.from_snapshot:
        from doctor.snapshot.model import load_document

        doc = load_document(o.from_snapshot)
        if not isinstance(doc, Snapshot):
            raise InputError("a cluster file holds several machines; pass one node's snapshot", source=o.from_snapshot)
        return doc, None
    python = tgt.python if not tgt.create and tgt.python else tgt.facts_python
    assert python is not None
    if o.download_only:
        # the wheelhouse is for another machine: its facts are the flags, the rest comes from this host
        return _minimal_snapshot(probe(python)), None
    console.status("probing the target environment")
    snap, env = _host_snapshot(o.root, python)
    if tgt.create:
        # planning into a venv that does not exist yet: nothing is installed there, whatever the base has; once
        # made it holds what its maker puts there (_new_venv_holds)
        from doctor.installers.venvpip import venv_installs

        snap.packages = {}
        tgt.venv_installs = venv_installs(env.stdlib, env.wheel_pkg_dir)
        return snap, None
    return snap, env


def _host_snapshot(root: str, python: str) -> tuple[Snapshot, Any]:
    """Host facts (Ascend files, npu-smi, PCI, system, env) from the probes, and the target's installed set
    from doctor.installers.target, in parallel. The full `doctor collect` python probe (module origins, git facts)
    is not needed to plan, and skipping it keeps a run with nothing to do under 2 s."""
    from concurrent.futures import ThreadPoolExecutor

    from doctor.installers.target import probe
    from doctor.probes import host as pc
    from doctor.snapshot.model import snapshot_from_dict

    opts = pc.CollectOptions(root=root, python=python)
    probes = (pc.probe_ascend, pc.probe_npu, pc.probe_pci_devices, pc.probe_host, pc.probe_env)
    with ThreadPoolExecutor(len(probes) + 1) as pool:
        fenv = pool.submit(probe, python)
        futs = [pool.submit(fn, opts) for fn in probes]
        parts = []
        for f in futs:
            try:
                parts.append(f.result(timeout=pc.FILE_PROBE_BOUND + opts.npu_smi_timeout).part)
            except Exception:  # noqa: BLE001 - a failed probe leaves its facts unknown, as in `doctor collect`
                continue
        env = fenv.result()
    data = pc.assemble(parts)
    data.update({"schema": "doctor.snapshot/1", "python": {"version": env.version, "executable": env.python,
                                                           "prefix": env.prefix},
                 "packages": {n: {"version": d.version, "editable": d.editable} for n, d in env.dists.items()},
                 "complete": True})
    data.setdefault("host", {})
    data["host"].setdefault("arch", env.arch)
    if env.glibc:
        data["host"].setdefault("libc", f"glibc {env.glibc}")
    try:
        return snapshot_from_dict(data, "<probe>"), env
    except InputError:
        from doctor.probes import collect_snapshot  # the probes' own assembly drops a malformed section

        return collect_snapshot(root=root, python=python), env


def _snapshot_prefix(snap: Snapshot) -> str | None:
    from doctor.snapshot.model import known

    if known(snap.python) and known(snap.python.prefix) and snap.python.prefix:
        return str(snap.python.prefix)
    return None


def _minimal_snapshot(env: Any) -> Snapshot:
    from doctor.snapshot.model import snapshot_from_dict

    return snapshot_from_dict({"schema": "doctor.snapshot/1", "host": {"arch": env.arch, "libc": f"glibc {env.glibc}" if env.glibc else None},
                               "python": {"version": env.version}})


def _profile(o: Options, snap: Snapshot, facts: Facts) -> tuple[Any, str]:
    from doctor.knowledge.profiles import load_profiles, select_profile

    profiles = load_profiles(o.profiles_dir)
    prof, reason = select_profile(snap, profiles, forced=o.profile)
    if prof is None:
        near = nearest_profiles(profiles, facts)
        # with no CANN, --profile alone ends in install-system-cann-missing (exit 1): name the flag an image build
        # or a CPU-only runner needs in the same breath, as the README's own line for that case does
        bare = (" (no CANN here, as on an image build or a CI runner: add --no-host-check, which reports the host's "
                "CANN, kernels and driver apart from the verdict)") if facts.cann is None and not o.no_host_check else ""
        raise RefusedError(f"no verified stack matches {facts.where} ({reason}). Nearest profiles: " + "; ".join(near)
                           + f". Choose one with --profile NAME if you accept the difference{bare}.",
                           source="doctor install")
    if not o.profile:
        from doctor.installers.resolve import check_target

        try:
            check_target(prof, facts)
        except RefusedError as e:
            near = nearest_profiles(profiles, facts)
            raise RefusedError(f"{e.message}. Nearest profiles: " + "; ".join(near), source="doctor install") from None
    return prof, reason


def _source(o: Options) -> tuple[Source, dict[str, dict[str, Any]]]:
    """Where packages come from. A wheelhouse's manifest is read here; its hashes are verified right before
    the first change (Executor preflight), so a run with nothing to do stays fast."""
    if o.wheelhouse:
        m = wh.load(o.wheelhouse)
        root = Path(o.wheelhouse).resolve()
        bundles = {name: {"bundle": str(wh.safe_path(root, g["bundle"])), "commit": g.get("commit"),
                          "submodules": {sm["path"]: str(wh.safe_path(root, sm["bundle"])) for sm in g.get("submodules", [])}}
                   for name, g in m.git.items()}
        if o.offline:
            return Source(find_links=(str(root / wh.WHEELS),), no_index=True, offline=True), bundles
        return Source(index=IndexOptions(o.index_url, tuple(o.extra_index_urls)), find_links=(str(root / wh.WHEELS),)), bundles
    return Source(index=IndexOptions(o.index_url, tuple(o.extra_index_urls))), {}


def _env_ok_from_snapshot(plan: Plan, snap: Snapshot) -> bool | None:
    """From a snapshot, the env file counts as in effect when its exports and PYTHONPATH entries are set and
    the set_env.sh files were sourced (ASCEND_HOME_PATH or ASCEND_TOOLKIT_HOME set)."""
    from doctor.snapshot.model import known

    if plan.env is None:
        return True
    if not known(snap.env):
        return False
    env = snap.env
    if any(env.get(k) != v for k, v in plan.env.exports):
        return False
    pp = (env.get("PYTHONPATH") or "").split(":")
    if any(os.path.basename(p.rstrip("/")) not in {os.path.basename(x.rstrip("/")) for x in pp} for p in plan.env.pythonpath):
        return False
    if plan.env.set_env_files and not (env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME")):
        return False
    return True
