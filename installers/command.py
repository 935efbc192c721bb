"""`doctor install` as a function: options -> Report. collect -> plan -> (dry-run | download | execute | rollback).

The CLI module only parses options; everything here returns data (a Report with `plan` and `steps`), so the
same flow is testable without Click and the JSON report is the contract.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctor.console import Console
from doctor.errors import InputError, RefusedError
from doctor.installers import journal as jr
from doctor.installers import wheelhouse as wh
from doctor.installers.backends import PipBackend, Source, make_backend
from doctor.installers.execute import DONE, FAILED, SATISFIED, Executor, Outcome, StepResult
from doctor.installers.gitsrc import bundle_submodules, make_bundle, parse_mirrors
from doctor.installers.plan import CLONE, EDITABLE, INSTALL, IndexOptions, Plan
from doctor.installers.resolve import Facts, facts_from_snapshot, nearest_profiles, parse_sets, resolve
from doctor.installers.satisfy import satisfied, snapshot_view
from doctor.report import Finding, Report, finding
from doctor.snapshot.model import Snapshot

SYSTEM_COMPONENTS = {"cann": "cann", "kernels": "kernels", "nnal": "nnal", "driver": "driver"}


@dataclass
class Options:
    profile: str | None = None
    sets: tuple[str, ...] = ()
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
    log: str | None = None
    src: str | None = None
    env_file: str | None = None
    isolated: bool = False
    root: str = "/"
    profiles_dir: str | None = None
    step_timeout: float | None = None
    no_check: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def run(opts: Options, console: Console) -> Report:
    t_start = time.monotonic()
    _validate(opts)
    if opts.rollback:
        return _rollback(opts, console)
    python, created = _target_python(opts, console)
    snap, target_env = _facts_source(opts, python, console)
    if created and target_env is not None:
        # planning into a venv that does not exist yet: nothing is installed there
        snap.packages = {}
        target_env.dists.clear()
    facts = facts_from_snapshot(snap, arch=opts.arch, python_version=opts.python_version, glibc=opts.glibc)
    profile, reason = _profile(opts, snap, facts)
    prefix: str | None = (os.path.abspath(opts.venv) if created and opts.venv else target_env.prefix) \
        if target_env is not None else (opts.venv or _snapshot_prefix(snap))
    base = Path(prefix) if prefix else Path.cwd()
    src_dir = os.path.abspath(opts.src) if opts.src else str(base / "src")
    env_path = os.path.abspath(opts.env_file) if opts.env_file else str(base / "doctor-env.sh")
    plan = resolve(profile, facts, sets=parse_sets(opts.sets), python=python, src_dir=src_dir, env_path=env_path,
                   prefix=prefix, reason=reason)
    report = Report(command="install", profile={"name": profile.name, "reason": reason, "source": profile.source})
    report.extra["plan"] = plan.to_dict()
    report.findings += _system_findings(plan)
    if opts.download_only:
        return _download(opts, plan, report, console)
    mirrors = parse_mirrors(opts.git_mirrors)
    backend = make_backend(opts.backend, isolated=opts.isolated)
    source, bundles = _source(opts)
    header = f"profile {plan.profile} ({profile.source})"
    if opts.dry_run:
        if opts.from_snapshot:
            view = snapshot_view(snap, sources=plan.sources(), env_ok=_env_ok_from_snapshot(plan, snap))
            ex = Executor(plan, backend, "<target python>", source=source, log_path=os.devnull, mirrors=mirrors)
            steps = [StepResult(s.id, s.kind, s.title, SATISFIED if satisfied(s, view) else "pending",
                                command=ex.describe(s)) for s in plan.steps]
        else:
            assert python is not None and target_env is not None
            ex = Executor(plan, backend, python, source=source, log_path=os.devnull, mirrors=mirrors, bundles=bundles,
                          env_header=header)
            steps = ex.statuses(target_env)
        report.extra["steps"] = [s.to_dict() for s in steps]
        report.extra["dry_run"] = True
        _print_plan(console, plan, steps)
        return report
    assert python is not None
    # an earlier run that died without restoring must be dealt with first
    prefix_s = str(target_env.prefix) if target_env is not None else str(prefix)
    bad = jr.interrupted(prefix_s)
    if bad is not None:
        raise RefusedError(f"an earlier install was interrupted (journal {bad.dir}, state {bad.state}, started "
                           f"{bad.data.get('started')}); run `doctor install --rollback --python {python}` to restore the "
                           "environment it recorded, then try again", source="doctor install")
    log_path = opts.log or str(jr.state_root(prefix_s) / "logs" /
                               f"install-{_dt.datetime.now(_dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.log")
    ex = Executor(plan, backend, python, source=source, log_path=log_path, mirrors=mirrors, bundles=bundles,
                  progress=console.status, env_header=header,
                  preflight=(lambda: wh.verify(str(opts.wheelhouse))) if opts.wheelhouse else None,
                  **({"step_timeout": opts.step_timeout} if opts.step_timeout else {}))
    with jr.lock(prefix_s):
        outcome = ex.run(target_env)
    report.extra["steps"] = [r.to_dict() for r in outcome.results]
    report.extra["log"] = log_path
    report.extra["backend"] = backend.name
    report.extra["seconds"] = round(time.monotonic() - t_start, 3)  # probe + plan + execute
    if outcome.journal:
        report.extra["journal"] = outcome.journal
    report.findings += _outcome_findings(outcome, log_path, python)
    if outcome.ok and outcome.changed and not opts.no_check:
        report.findings += _post_check(opts, python, profile, report)
    _print_outcome(console, plan, outcome)
    return report


# -- inputs ---------------------------------------------------------------------------------------------------


def _validate(o: Options) -> None:
    if o.python and o.venv and o.rollback:
        raise InputError("give --python or --venv, not both, with --rollback", source="--venv")
    if o.from_snapshot and not (o.dry_run or o.download_only):
        raise InputError("--from plans for another machine: use it with --dry-run or --download-only", source="--from")
    if o.offline and not o.wheelhouse:
        raise InputError("--offline needs --wheelhouse DIR (made by --download-only)", source="--offline")
    if o.download_only and (o.wheelhouse or o.rollback or o.dry_run):
        raise InputError("--download-only builds a wheelhouse; it cannot be combined with --wheelhouse, --rollback or "
                         "--dry-run", source="--download-only")
    if o.rollback and (o.dry_run or o.profile or o.sets):
        raise InputError("--rollback takes only the target (--python/--venv)", source="--rollback")


def _target_python(o: Options, console: Console) -> tuple[str | None, bool]:
    """The interpreter to install into; `--venv DIR` creates DIR when it has none (not in a dry run)."""
    if o.from_snapshot and (o.dry_run or o.download_only):
        return None, False
    if o.venv:
        vpy = Path(o.venv) / "bin" / "python"
        if vpy.exists():
            return str(vpy), False
        if o.dry_run or o.download_only:
            return o.python or sys.executable, True
        base = o.python or sys.executable
        console.status(f"creating venv {o.venv} from {base}")
        from doctor.installers.backends import find_uv

        uv = find_uv() if o.backend in ("auto", "uv") else None
        cmd = [uv, "venv", "--python", base, o.venv] if uv else [base, "-m", "venv", o.venv]
        env = dict(os.environ)
        if o.isolated:
            env["UV_NO_CONFIG"] = "1"
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        if cp.returncode != 0 or not vpy.exists():
            raise InputError(f"cannot create the venv: {(cp.stderr or cp.stdout).strip()[-300:]}", source=o.venv)
        return str(vpy), False
    return o.python or sys.executable, False


def _facts_source(o: Options, python: str | None, console: Console) -> tuple[Snapshot, Any]:
    from doctor.installers.target import probe

    if o.from_snapshot:
        from doctor.snapshot.model import load_document

        doc = load_document(o.from_snapshot)
        if not isinstance(doc, Snapshot):
            raise InputError("a cluster file holds several machines; pass one node's snapshot", source=o.from_snapshot)
        return doc, None
    assert python is not None
    if o.download_only:
        # the wheelhouse is for another machine: its facts are the flags, the rest comes from this host
        return _minimal_snapshot(probe(python)), None
    console.status("probing the target environment")
    return _host_snapshot(o.root, python)


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
        raise RefusedError(f"no verified stack matches this machine ({reason}). Nearest profiles: " + "; ".join(near)
                           + ". Choose one with --profile NAME if you accept the difference.", source="doctor install")
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


# -- findings -------------------------------------------------------------------------------------------------


def _system_findings(plan: Plan) -> list[Finding]:
    out = []
    cann_found = any(r.component == "cann" and r.found for r in plan.system)
    for r in plan.system:
        # without a toolkit the other parts were not looked for meaningfully: report CANN itself only
        if r.ok is False or (r.found is None and (r.component == "cann" or cann_found)):
            missing = r.found is None
            out.append(finding(
                # warning, not error: `doctor install` reports on the Python stack it installs; `doctor check`
                # reports the missing system package as the error it is for running
                f"install-system-{r.component}-{'missing' if missing else 'mismatch'}", "warning",
                SYSTEM_COMPONENTS[r.component],
                f"{r.package} is needed ({r.component} {'not found' if missing else f'{r.found} found'}; profile needs {r.need})",
                detail="The doctor installs only the Python-level stack. CANN, kernels, NNAL and the driver are system "
                       "packages installed as root from Huawei's .run files.",
                evidence={"component": r.component, "need": r.need, "found": r.found, "profile": plan.profile},
                fix=f"Install {r.package} (Huawei .run package, as root), then source its set_env.sh and re-run `doctor install`.",
                source="verl install_guidance.rst (HDK/CANN install); shared/reference/verl.md §1.4"))
    return out


def _outcome_findings(outcome: Outcome, log_path: str, python: str) -> list[Finding]:
    out: list[Finding] = []
    if outcome.ok:
        done = [r.id for r in outcome.results if r.status == DONE]
        if done:
            out.append(finding("install-complete", "info", "system", f"installed: {len(done)} step(s) ran, "
                               f"{len(outcome.results) - len(done)} already satisfied",
                               evidence={"ran": done, "diff": outcome.diff or {}, "journal": outcome.journal}))
        else:
            out.append(finding("install-nothing-to-do", "info", "system", "every step is already satisfied; nothing changed",
                               evidence={"steps": len(outcome.results)}))
        return out
    failed = next((r for r in outcome.results if r.status == FAILED), None)
    restored = outcome.restored or {}
    rest = "restored" if restored.get("ok") else "NOT fully restored" if outcome.changed else "unchanged"
    what = f"interrupted by {outcome.interrupted}" if outcome.interrupted else f"step {failed.id if failed else '?'} failed"
    out.append(finding(
        "install-interrupted" if outcome.interrupted else "install-step-failed", "error", "system",
        f"install {what}; the environment was {rest}",
        detail=(outcome.error or "") + ("\n--- log tail ---\n" + "\n".join(failed.log_tail[-15:]) if failed and failed.log_tail else ""),
        evidence={"step": failed.id if failed else None, "log": log_path, "journal": outcome.journal,
                  "restored": restored.get("ok"), "restore_diff": restored.get("diff")},
        fix=f"Read the full log in {log_path}, fix the cause (network, index, disk) and run `doctor install` again.",
    ))
    if outcome.changed and not restored.get("ok"):
        out.append(finding("install-restore-failed", "error", "system",
                           "the environment could not be restored to what it was before the install",
                           evidence={"journal": outcome.journal, "error": restored.get("error")},
                           fix=f"Run `doctor install --rollback --python {python}` to retry the restore."))
    return out


def _post_check(o: Options, python: str, profile: Any, report: Report) -> list[Finding]:
    """Re-probe and run the check, so the report says what the check now finds."""
    try:
        from doctor.checks.runner import run_checks
        from doctor.probes import collect_snapshot

        snap = collect_snapshot(root=o.root, python=python)
        findings, results = run_checks([(None, snap, None)], profile_for=lambda _s: profile)
    except Exception as e:  # noqa: BLE001 - the install itself succeeded; say the check could not run
        return [finding("install-post-check-failed", "warning", "system", f"the post-install check could not run: {e}",
                        evidence={"error": f"{type(e).__name__}: {e}"}, fix="Run `doctor check` yourself.")]
    report.checks += results
    return findings


# -- rollback -------------------------------------------------------------------------------------------------


def _rollback(o: Options, console: Console) -> Report:
    from doctor.installers.target import probe

    python = str(Path(o.venv) / "bin" / "python") if o.venv else (o.python or sys.executable)
    env = probe(python)
    j = jr.latest(env.prefix)
    if j is None or j.state in (jr.ROLLED_BACK, jr.UNDONE):
        raise RefusedError("nothing to roll back: no finished or interrupted install is recorded for this environment",
                           source=str(jr.state_root(env.prefix) / "journal"))
    report = Report(command="install")
    only = None if j.state in (jr.RUNNING, jr.RESTORE_FAILED) else set(j.data.get("changed") or [])
    console.status(f"rolling back {j.dir} ({j.state})")
    with jr.lock(env.prefix), jr.signals_deferred():
        res = j.restore(python, only=only)
        j.set_state(jr.UNDONE if j.state == jr.DONE and res["ok"] else jr.ROLLED_BACK if res["ok"] else jr.RESTORE_FAILED)
    report.extra["rollback"] = {"journal": str(j.dir), "ok": res["ok"], "diff": res["diff"]}
    if res["ok"]:
        report.findings.append(finding("install-rolled-back", "info", "system",
                                       f"restored the environment recorded before install {j.data.get('id')}",
                                       evidence={"journal": str(j.dir), "diff": res["diff"]}))
    else:
        report.findings.append(finding("install-restore-failed", "error", "system", "rollback did not restore every distribution",
                                       evidence={"journal": str(j.dir), "diff": res["diff"]},
                                       fix="Compare `pip freeze` with freeze_before in the journal and reinstall what differs."))
    console.print(f"rollback {'done' if res['ok'] else 'INCOMPLETE'}: removed {res['diff']['added']}, "
                  f"put back {res['diff']['changed'] + res['diff']['removed']}")
    return report


# -- download-only --------------------------------------------------------------------------------------------


def _download(o: Options, plan: Plan, report: Report, console: Console) -> Report:
    assert o.download_only
    root = Path(o.download_only).resolve()
    (root / wh.WHEELS).mkdir(parents=True, exist_ok=True)
    (root / wh.GIT).mkdir(parents=True, exist_ok=True)
    pip = PipBackend(isolated=o.isolated)
    mirrors = parse_mirrors(o.git_mirrors)
    platforms = wh.manylinux_platforms(plan.target.arch, plan.target.glibc)
    user_index = IndexOptions(o.index_url, tuple(o.extra_index_urls))
    log_path = o.log or str(root / "download.log")
    work = root / ".work"
    work.mkdir(exist_ok=True)
    manifest = wh.Manifest(profile=plan.profile, target={**plan.target.to_dict(), "platforms": platforms},
                           created=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    steps: list[StepResult] = []
    with open(log_path, "a", encoding="utf-8") as log:
        def say(m: str) -> None:
            log.write(m.rstrip("\n") + "\n")
            log.flush()

        for s in plan.steps:
            t0 = time.monotonic()
            try:
                if s.kind == CLONE and s.source is not None:
                    console.status(f"bundling {s.source.name} at {s.source.ref}")
                    bundle = root / wh.GIT / f"{s.source.name}.bundle"
                    commit = make_bundle(s.source, bundle, work, mirrors=mirrors, log=say, keep=True)
                    manifest.git[s.source.name] = {"url": s.source.url, "ref": s.source.ref, "commit": commit,
                                                   "bundle": f"{wh.GIT}/{bundle.name}"}
                    if s.source.submodules:
                        sub_dir = f"{wh.GIT}/{s.source.name}.submodules"
                        subs = bundle_submodules(work / s.source.name, root / sub_dir, log=say)
                        manifest.git[s.source.name]["submodules"] = [
                            {"path": m["path"], "commit": m["commit"], "bundle": f"{sub_dir}/{m['bundle']}"} for m in subs]
                elif s.kind in (INSTALL, EDITABLE):
                    reqs = list(s.requirements) if s.kind == INSTALL else list(s.build_requires)
                    if s.kind == EDITABLE and not s.no_deps and s.source is not None:
                        # the source tree's own dependencies, resolved for the target (pip builds its metadata)
                        reqs.append(str(work / s.source.name))
                    if "-r" in reqs:  # a requirements file inside a clone: read it from the bundling work tree
                        i = reqs.index("-r")
                        name = Path(reqs[i + 1]).parent.name
                        reqs[i + 1] = str(work / name / Path(reqs[i + 1]).name)
                    if not reqs:
                        continue
                    console.status(f"downloading {' '.join(reqs)}")
                    idx = user_index if (user_index.index_url or user_index.extra_index_urls) else s.index
                    cmd = pip.download(reqs, str(root / wh.WHEELS), python_version=plan.target.python_version,
                                       platforms=platforms, source=Source(index=idx), no_deps=s.no_deps and s.kind == INSTALL)
                    say("$ " + " ".join(cmd.argv))
                    cp = subprocess.run(cmd.argv, env={**cmd.environ(), **dict(s.env)}, stdout=log, stderr=subprocess.STDOUT,
                                        timeout=7200)
                    if cp.returncode != 0:
                        raise InputError(f"pip download failed for step {s.id} (see {log_path})", source=str(root))
                else:
                    continue
                steps.append(StepResult(s.id, s.kind, s.title, DONE, time.monotonic() - t0))
            except Exception as e:
                steps.append(StepResult(s.id, s.kind, s.title, FAILED, time.monotonic() - t0, detail=str(e)))
                report.extra["steps"] = [r.to_dict() for r in steps]
                shutil.rmtree(work, ignore_errors=True)
                raise
    shutil.rmtree(work, ignore_errors=True)
    wh.scan(root, manifest)
    wh.write(root, manifest)
    report.extra["steps"] = [r.to_dict() for r in steps]
    report.extra["wheelhouse"] = {"dir": str(root), "artifacts": len(manifest.artifacts), "platforms": platforms,
                                  "log": log_path}
    report.findings.append(finding("install-wheelhouse-written", "info", "system",
                                   f"wheelhouse {root}: {len(manifest.artifacts)} artifacts with sha256 in manifest.json",
                                   evidence={"dir": str(root), "git": sorted(manifest.git)}))
    console.print(f"wheelhouse {root}: {len(manifest.artifacts)} artifact(s); install on the target with\n"
                  f"  doctor install --profile {plan.profile} --wheelhouse {root} --offline")
    return report


# -- human output ---------------------------------------------------------------------------------------------


def _print_plan(console: Console, plan: Plan, steps: list[StepResult]) -> None:
    c = console
    t = plan.target
    c.print(f"target: Python {t.python_version} on {t.arch}" + (f", glibc {t.glibc}" if t.glibc else "")
            + (f" ({t.python})" if t.python else ""))
    for req in plan.system:
        mark = c.style("✓", "green") if req.ok else c.style("✗", "red") if req.ok is False else c.style("?", "yellow")
        c.print(f"  {mark} system {req.component}: {req.package} (found {req.found or 'nothing'}) — not installed by the doctor")
    width = max(len(s.id) for s in plan.steps)
    for i, (s, r) in enumerate(zip(plan.steps, steps, strict=True), 1):
        st = c.style("satisfied", "green") if r.status == SATISFIED else c.style("will run", "yellow")
        c.print(f"  {i:2d}. {s.id.ljust(width)}  {st:>9}  {s.title}")
        if c.verbosity >= 1 and r.command:
            c.print(c.style(f"        $ {r.command}", "dim"))
    todo = sum(1 for r in steps if r.status != SATISFIED)
    c.print(f"dry run: {todo} of {len(steps)} step(s) would run; nothing was changed")


def _print_outcome(console: Console, plan: Plan, outcome: Outcome) -> None:
    for r in outcome.results:
        mark = {"satisfied": "=", "done": "✓", "failed": "✗", "not-run": "-"}.get(r.status, "?")
        console.print(f"  {mark} {r.id}: {r.status}" + (f" ({r.seconds:.1f} s)" if r.seconds else ""))
