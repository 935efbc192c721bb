"""What `doctor install` reports: the host prerequisites, the outcome of a run, the post-install check, and the
human lines for both (the plan table of a dry run, one line per step after a run).

Host findings (CANN, kernels, NNAL, driver, firmware, devices) and the Python stack's findings are kept apart:
`--no-host-check` (image builds, CI runners: no CANN, no NPU) reports the host's separately, outside the exit
code, so a complete, verified Python stack exits 0 there.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from doctor.console import Console
from doctor.installers import upstream as up
from doctor.installers.execute import DEFAULT_INDEX, DONE, FAILED, SATISFIED, Outcome, StepResult
from doctor.installers.plan import Plan
from doctor.installers.restoreline import clones_left
from doctor.report import Finding, Report, finding

SYSTEM_COMPONENTS = {"cann": "cann", "kernels": "kernels", "nnal": "nnal", "driver": "driver", "firmware": "firmware"}
HOST_COMPONENTS = frozenset({"cann", "kernels", "nnal", "driver", "firmware", "npu", "hccl", "network", "cluster"})


def system_findings(plan: Plan, *, where: str = "this host") -> list[Finding]:
    """One error per host prerequisite that is not met (absent, or the wrong version). Without a toolkit the
    other parts were not looked for meaningfully: CANN itself is reported then."""
    out = []
    cann_found = any(r.component == "cann" and r.found for r in plan.system)
    for r in plan.system:
        if r.component == "firmware" or not (r.ok is False or (r.found is None and (r.component == "cann" or cann_found))):
            continue
        missing = r.found is None
        out.append(finding(
            f"install-system-{r.component}-{'missing' if missing else 'mismatch'}", "error", SYSTEM_COMPONENTS[r.component],
            f"{r.package} is needed ({r.component} {'not found' if missing else f'{r.found} found'} on {where}; "
            f"profile needs {r.need})",
            detail="The doctor installs only the Python-level stack. CANN, kernels, NNAL and the driver are system "
                   "packages installed as root from Huawei's .run files.",
            evidence={"component": r.component, "need": r.need, "found": r.found, "profile": plan.profile},
            fix=f"Install {r.package} (Huawei .run package, as root), then source its set_env.sh and re-run `doctor install`"
                " (or pass --no-host-check when building an image without CANN).",
            source=up.INSTALL_GUIDE))
    return out


def is_host(f: Finding) -> bool:
    return bool(f.components) and f.components[0] in HOST_COMPONENTS


def split_host(report: Report, no_host_check: bool) -> None:
    """With --no-host-check, host findings leave the verdict and go to `host_findings` (still shown)."""
    if not no_host_check:
        return
    host = [f for f in report.findings if is_host(f)]
    report.findings = [f for f in report.findings if not is_host(f)]
    report.extra["host_findings"] = [f.to_dict() for f in host]


# an installer's OSError on the target's file system, as pip (`[Errno 1] Operation not permitted: '/path'`) and uv
# (`` `/path`: Operation not permitted (os error 1)``, or `... to /path: No space left on device (os error 28)`) print it
_OS_ERROR = re.compile(r"\[Errno (?P<no>\d+)\] (?P<why>[^:\n]+?)(?:: '(?P<path>[^']+)')?\s*$"
                       r"|(?:`(?P<qpath>/[^`]+)`| to (?P<topath>/\S+)): (?P<uwhy>[^:\n]+?) \(os error (?P<uno>\d+)\)\s*$")
_UNWRITABLE = {1, 13, 30}  # EPERM (an immutable flag), EACCES (not the user's), EROFS (a read-only mount)
_FULL = {28, 122}  # ENOSPC, EDQUOT
_TOO_LARGE = 27  # EFBIG: the run's file size limit (`ulimit -f`), or the file system's largest file


def os_error_fix(tail: list[str], prefix: str) -> str | None:
    """The fix for a step that failed writing the target (the last OSError line of the log tail names the cause):
    neither the network nor the wheelhouse, so say which path and what to look at. None for any other failure."""
    for line in reversed(tail):
        m = _OS_ERROR.search(line)
        if not m:
            continue
        no = int(m.group("no") or m.group("uno"))
        why = (m.group("why") or m.group("uwhy")).strip()
        where = m.group("path") or m.group("qpath") or m.group("topath") or prefix
        if no in _UNWRITABLE:  # the path may be one the installer was creating: its directory is what refused
            both = f"{os.path.dirname(where)} {where}"
            return (f"{where} cannot be written ({why}): run `doctor install` as the user who owns the environment, or "
                    f"make it and the directory that holds it writable (`ls -ld {both}`; `lsattr -d {both}` shows an "
                    f"immutable flag, `findmnt -T {where}` a read-only mount), then run it again.")
        if no in _FULL:
            where = m.group("path") or prefix  # pip's own path may be its TMPDIR; uv's is a file in the target
            return (f"{why} on the file system that holds {where}: free space there (`df -h {where}`; pip and uv "
                    "also write to TMPDIR and their caches), then run `doctor install` again.")
        if no == _TOO_LARGE:
            return (f"{why} writing under {where}: the run's file size limit is below what it writes (`ulimit -f` "
                    "shows it; `ulimit -f unlimited` in the shell that runs `doctor install`), or the file system "
                    f"there has a small largest file (`findmnt -T {where}`); then run `doctor install` again.")
        return None
    return None


# what pip ("Could not find a version that satisfies the requirement transformers==5.2.0 (from versions: 5.3.0)")
# and uv ("Because there is no version of numpy==1.25.2 and you require ...") print for a pin the index lacks
_PIP_NO_VERSION = re.compile(r"Could not find a version that satisfies the requirement ([A-Za-z0-9][A-Za-z0-9._-]*)"
                             r"\s*==\s*([^\s;,)]+)(?: \(from versions: ([^)]*)\))?")
_UV_NO_VERSION = re.compile(r"there is no version of ([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;,]+?)(?= and |,|$)")


def unserved_set(tail: list[str], sets: Mapping[str, str]) -> str:
    """The fix for a step that failed because the index had no release a `--set` pin names: the user's flag, not
    "network, index, disk" (seen on a mirror without transformers 5.2.0: the run cloned and built everything,
    then the last resolve stopped). Empty when the tail names no such pin."""
    from doctor.snapshot.model import normalize_name

    want = {normalize_name(k): v for k, v in sets.items()}
    for ln in reversed(tail):
        m = _PIP_NO_VERSION.search(ln) or _UV_NO_VERSION.search(ln)
        if m is None or want.get(normalize_name(m.group(1))) != m.group(2):
            continue
        has = m.group(3) if m.re is _PIP_NO_VERSION else None
        name, ver = m.group(1), m.group(2)
        return (f"`--set {name}={ver}` names a release the index this run used does not serve"
                + (f" (it has: {has.strip() or 'none'})" if has is not None else "")
                + ": pin one it serves, point --index-url / --extra-index-url at one that has it, or drop the --set.")
    return ""


def outcome_findings(outcome: Outcome, log_path: str, python: str, wheelhouse: str | None = None,
                     sets: Mapping[str, str] | None = None) -> list[Finding]:
    """`wheelhouse`: the install ran offline from it (--offline), where no network or index is asked. `sets`: the
    run's --set pins (a failure over one of them names the flag)."""
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
    # no failed step: the run stopped before its first one began, writing its journal (a full disk, a file limit)
    what = (f"interrupted by {outcome.interrupted}" if outcome.interrupted else f"step {failed.id} failed" if failed
            else "stopped before its first step, recording the environment")
    causes = (f"a wheel {wheelhouse} lacks or that is damaged: rebuild it with --download-only where the index is "
              "reachable; or disk" if wheelhouse else "network, index, disk")
    tail = failed.log_tail if failed else [outcome.error or ""]  # the doctor's own OSError, when no step ran
    disk = os_error_fix(tail, os.path.dirname(os.path.dirname(python))) if not outcome.fix else None
    pin = unserved_set(failed.log_tail, sets or {}) if failed and not outcome.fix and not disk else ""
    stopped = (f"Nothing to repair: the run was stopped by {outcome.interrupted}"
               + (" and the environment put back as it was" if restored.get("ok") else "")
               + "; run `doctor install` again to start over (if a step had hung, the log tail above shows where: an "
                 f"index that does not answer, a long build). The full log: {log_path}.")
    fix = (f"The full log: {log_path}." if outcome.fix else f"{disk} The full log: {log_path}." if disk else
           f"{pin} The full log: {log_path}." if pin else
           stopped if outcome.interrupted and (restored.get("ok") or not outcome.changed) else
           f"Read the full log in {log_path}, fix the cause ({causes}) and run `doctor install` again.")
    out.append(finding(
        "install-interrupted" if outcome.interrupted else "install-step-failed", "error", "system",
        f"install {what}; the environment was {rest}",
        detail=(outcome.error or "") + ("\n--- log tail ---\n" + "\n".join(failed.log_tail[-15:]) if failed and failed.log_tail else "")
        + ("\n--- clones ---\n" + "\n".join(restored["clones"]) if restored.get("clones") else ""),
        evidence={"step": failed.id if failed else None, "log": log_path, "journal": outcome.journal,
                  "restored": restored.get("ok"), "restore_diff": restored.get("diff"),
                  **({"clones": restored["clones"]} if restored.get("clones") else {})},
        fix=(outcome.fix + " " if outcome.fix else "") + fix,
    ))
    if outcome.changed and not restored.get("ok"):
        out.append(finding("install-restore-failed", "error", "system",
                           "the environment could not be restored to what it was before the install",
                           evidence={"journal": outcome.journal, "error": restored.get("error")},
                           fix=f"Run `doctor install --rollback --python {python}` to retry the restore."))
    # what the restore left in a clone (a user's later work, a git command that failed): the warning --rollback
    # gives, not only a line of the failure's detail
    out += clones_left(restored.get("clones_left") or [],
                       f"the restore after the {'interrupted' if outcome.interrupted else 'failed'} install")
    return out


def post_check(root: str, python: str, profile: Any, report: Report, offline: str | None = None,
               env_file: str | None = None, sets: Mapping[str, str] | None = None) -> list[Finding]:
    """Re-probe and run `doctor check` the way the stand-alone check does (the profile's known deviations
    honoured), so the report says what the check now finds. `offline`: the wheelhouse's wheels directory of an
    --offline install, which its fixes install from (see offline_fixes). `env_file`: the doctor-env.sh the run
    wrote, read back (envfile.read) and applied as sourcing it would (envfile.environ: its PYTHONPATH and every
    export), the environment the user trains in: probed without its PYTHONPATH (Megatron-LM's clone, for verl <=
    0.7.0), every such install ended in a false `mindspeed-megatron-missing` error (exit 1); without its exports,
    in a false `ray-noset-visible-devices-unset` warning wherever ASCEND_RT_VISIBLE_DEVICES is set.
    `sets`: the run's --set pins (set_pins_honoured)."""
    try:
        from doctor.checks.diagnose import diagnose
        from doctor.installers import envfile
        from doctor.probes import collect_snapshot

        env = envfile.environ(envfile.read(env_file), os.environ) if env_file and os.path.isfile(env_file) else None
        snap = collect_snapshot(root=root, python=python, environ=env or dict(os.environ))
        # this host, the doctor's environment (as a live `doctor check`): fix lines name a uv that runs here
        checked = diagnose([(None, snap, None)], profiles=[profile], forced_profile=profile.name, local=True)
    except Exception as e:  # noqa: BLE001 - the install itself succeeded; say the check could not run
        return [finding("install-post-check-failed", "warning", "system", f"the post-install check could not run: {e}",
                        evidence={"error": f"{type(e).__name__}: {e}"}, fix="Run `doctor check` yourself.")]
    report.checks += checked.checks
    found = set_pins_honoured(list(checked.findings), sets or {})
    return offline_fixes(found, offline) if offline else found


def set_pins_honoured(findings: list[Finding], sets: Mapping[str, str]) -> list[Finding]:
    """The post-check without `package-off-profile` for a package installed at the version the user's --set asked
    for: that is what --set means (the plan said so, and `install-set-breaks-requirement` says what it breaks), and
    the finding's fix re-pins the profile's release, undoing the flag (offline, from a wheelhouse that does not
    hold that release: seen with --set xgrammar=0.1.32, fix 'xgrammar==0.1.33 --no-index --find-links HOUSE')."""
    from doctor.snapshot.model import normalize_name

    want = {normalize_name(k): v for k, v in sets.items()}

    def asked(f: Finding) -> bool:
        pkg = str(f.evidence.get("package") or "")
        return f.id == "package-off-profile" and want.get(normalize_name(pkg)) == f.evidence.get(pkg)

    return [f for f in findings if not asked(f)]


# a fix sentence that is a command line (fix_target writes the target's `<python> -m pip ...` into it): each `&&` part
# starts with a command, not a word of prose
_COMMAND_SENTENCE = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:\S*/)?(?:python[\d.]*|pip[\d.]*|uv|git)\s(?:(?! [A-Z][a-z]).)*$")
_INDEX_OPTION = re.compile(r"\s+(?:--extra-index-url|--index-url|-i|--trusted-host)(?:=|\s+)\S+")


def offline_fixes(findings: list[Finding], wheels: str) -> list[Finding]:
    """An --offline install's host reaches no index: the post-check's `pip install` lines (which name the profile's
    indexes, or PyPI by default) would wait out pip's retries and fail. They install from the wheelhouse instead
    (`--no-index --find-links WHEELS`, the index options dropped), and the fix says that a package the wheelhouse
    lacks has to be downloaded on the connected host."""
    from dataclasses import replace

    from doctor.report import Fix

    links = f" --no-index --find-links {shlex.quote(wheels)}"

    def local(cmd: str) -> str:
        parts = cmd.split(" && ")
        for i, part in enumerate(parts):
            if re.search(r"\bpip install\b", part) and "--no-index" not in part:
                parts[i] = _INDEX_OPTION.sub("", part) + links
        return " && ".join(parts)

    lacks = ("a package it does not hold has to be downloaded on the connected host (`pip download PKG -d DIR`) and "
             "installed with --find-links DIR.")
    out = []
    for f in findings:
        if f.fix is not None and not f.fix.commands and _COMMAND_SENTENCE.match(f.fix.text) and \
                local(f.fix.text) != f.fix.text:  # the sentence is the pip line (`fix: .../python -m pip install X`)
            out.append(replace(f, fix=Fix(f"Install it from the wheelhouse ({wheels}); {lacks}", (local(f.fix.text),))))
            continue
        cmds = tuple(local(c) for c in f.fix.commands) if f.fix else ()
        if f.fix is None or cmds == f.fix.commands:
            out.append(f)
            continue
        text = f"{f.fix.text.rstrip()} Offline, from the wheelhouse ({wheels}); {lacks}"
        out.append(replace(f, fix=Fix(text, cmds)))
    return out


# -- human output ---------------------------------------------------------------------------------------------


def print_system(console: Console, plan: Plan, where: str) -> None:
    c = console
    for req in plan.system:
        mark = c.style("✓", "green") if req.ok else c.style("✗", "red") if req.ok is False else c.style("?", "yellow")
        state = "ok" if req.ok else "NOT MET" if req.ok is False else "not found" if req.found is None else "not checked"
        c.print(f"  {mark} host {req.component}: {req.package} — {state} (found {req.found or 'nothing'} on {where}; "
                f"needs {req.need}); not installed by the doctor")


def print_plan(console: Console, plan: Plan, steps: list[StepResult], where: str = "this host", *,
               new_venv: bool = False) -> None:
    """The dry run's plan. `new_venv`: the --venv does not exist yet; the run creates it before the first step (the
    target line names its python, which is not there yet)."""
    c = console
    t = plan.target
    c.print(f"target: Python {t.python_version} on {t.arch}" + (f", glibc {t.glibc}" if t.glibc else "")
            + (f" ({t.python}" + (", a new venv the run creates first)" if new_venv else ")") if t.python else ""))
    print_system(c, plan, where)
    width = max(len(s.id) for s in plan.steps)
    for i, (s, r) in enumerate(zip(plan.steps, steps, strict=True), 1):
        st = c.style("satisfied", "green") if r.status == SATISFIED else c.style("will run", "yellow")
        c.print(f"  {i:2d}. {s.id.ljust(width)}  {st:>9}  {s.title}")
        if r.detail:
            c.print(f"        {r.detail}")
        if c.verbosity >= 1 and r.command:
            c.print(c.style(f"        $ {r.command}", "dim"))
    todo = sum(1 for r in steps if r.status != SATISFIED)
    c.print(f"dry run: {todo} of {len(steps)} step(s) would run; nothing was changed")


def print_downloads(console: Console, downloads: dict[str, list[str]], *, isolated: bool, offline: bool) -> None:
    """The dry run's last plan line: what the run would download, from where (Executor.downloads)."""
    idx = [u + (" (pip's default: your pip/uv configuration may name another)" if u == DEFAULT_INDEX and not isolated
                else "") for u in downloads["indexes"]]
    parts = ([f"indexes {', '.join(idx)}"] if idx else []) + ([f"git {', '.join(downloads['git'])}"] if downloads["git"]
                                                             else [])
    if downloads.get("find_links"):  # pip's configuration's find-links, which the steps follow
        parts.append(f"find-links {', '.join(downloads['find_links'])} ({downloads.get('configured_by', ['pip'])[0]}'s "
                     "configuration)")
    console.print("downloads from: " + ("; ".join(parts) if parts else
                                        "nothing (offline: the wheelhouse and its git bundles)" if offline else "nothing"))


def print_outcome(console: Console, outcome: Outcome) -> None:
    for r in outcome.results:
        mark = {"satisfied": "=", "done": "✓", "failed": "✗", "not-run": "-"}.get(r.status, "?")
        console.print(f"  {mark} {r.id}: {r.status}" + (f" ({r.seconds:.1f} s)" if r.seconds else "")
                      + (f": {r.detail}" if r.status == "done" and r.detail else ""))


def print_host(console: Console, report: Report) -> None:
    host = report.extra.get("host_findings") or []
    if host:
        console.print(f"host (--no-host-check: not part of the verdict): {len(host)} finding(s)")
        for f in host:
            console.print(f"  - {f['id']}: {f['title']}")
