"""`doctor check`: gather snapshot(s) (live, --from files, or --ray), diagnose, render."""

from __future__ import annotations

from typing import Any

import click

from doctor.cli.options import (
    add_deep,
    doctor_command,
    given,
    junit_option,
    npu_smi_timeout_option,
    output_options,
    profile_option,
    python_option,
    ray_options,
    refuse_unrunnable_python,
    root_option,
    strict_option,
)
from doctor.console import Console
from doctor.errors import UsageError


@click.command("check")
@click.option("--from", "from_files", multiple=True, metavar="FILE",
              help="Diagnose a snapshot or cluster file instead of this host ('-' = stdin). Repeat for a cluster.")
@click.option("--from-report", "from_report", metavar="FILE",
              help="Diagnose the environment a bug report or log states (collect_env output, npu-smi info, pip list/"
                   "freeze, CANN's install.info, `name: version` lines, NAME=value) instead of this host ('-' = stdin).")
@profile_option("profile_name")
@click.option("--only", multiple=True, metavar="NAME",
              help="Run only these: an area (system, cann, devices, torch_npu, vllm, mindspeed, packages, env, network, "
                   "npu_network, deep, cluster), a group header of the output (npu: what is listed under [npu]), a check id, "
                   "or a finding id (only that finding is reported). Repeatable.")
@click.option("--ignore", multiple=True, metavar="NAME",
              help="Waive an area, a group header of the output, a check id or a finding id. Repeatable.")
@click.option("--config", "config_file", metavar="FILE",
              help="Waivers file ([tool.doctor] only/ignore/profile/strict). Default: doctor.toml or pyproject.toml in cwd.")
@click.option("--deep", is_flag=True, help="Also import torch_npu, mindspeed.megatron_adaptor, vllm_ascend in subprocesses "
              "and compare the installed files of the stack's distributions with their RECORD (size, sha256); "
              "with --ray: that on every node, then RoCE-ping one NPU address of every other node from each node.")
@click.option("--deep-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, metavar="SECONDS",
              help="Seconds per --deep import and for the file comparison (with --ray: on each node, added to "
                   "--ray-timeout; and for the whole ping round, at most 60).")
@strict_option()
@junit_option()
@root_option()
@python_option()
@npu_smi_timeout_option()
@ray_options
@output_options
@doctor_command
def command(console, from_files, from_report, profile_name, only, ignore, config_file, deep, deep_timeout, strict, junit_file,
            root, python, npu_smi_timeout, use_ray, address, ray_timeout) -> int:  # type: ignore[no-untyped-def]
    """Diagnose this machine (or snapshots / a Ray cluster) and print findings with fixes.

    Exit 0: no errors; 1: an error finding (or a warning with --strict); 2: the doctor could not do its job."""
    _refuse_combinations(from_files + ((from_report,) if from_report else ()), use_ray, deep,
                         "--from-report" if from_report and not from_files else "--from")
    if from_files and from_report:
        raise UsageError("use either --from or --from-report, not both")
    live = None
    if not from_files and not from_report and not use_ray:
        # Start probing first: the target interpreter and npu-smi run as children on other cores while this
        # process imports the rules and parses the profiles.
        console.status("probing this host…")
        live = _start_live(root, python, npu_smi_timeout)

    from doctor.checks.diagnose import diagnose, facts, load_check_config, nodes_from_documents
    from doctor.render import emit, write_junit

    cfg = load_check_config(config_file)
    if live is not None:
        # what the command line alone decides is said before the probe is waited for (npu-smi may take up to
        # --npu-smi-timeout on a sick card): a profile name that does not exist, waivers that match nothing
        from doctor.checks.diagnose import check_waivers
        from doctor.knowledge.profiles import find_profile, load_profiles

        if forced := profile_name or cfg.profile:
            find_profile(load_profiles(), forced)
        if only or ignore or cfg.only or cfg.ignore:
            check_waivers(list(only) or cfg.only, list(ignore) + cfg.ignore)
    if from_files:
        from doctor.snapshot.model import load_document

        docs = [(f, load_document(f)) for f in from_files]
        nodes, cluster = nodes_from_documents(docs)
    elif from_report:
        stated = _stated(from_report)
        nodes, cluster = [(None, stated[0], None)], False
    elif use_ray:
        from doctor.cluster.collect_ray import REACH_TIMEOUT, collect_ray

        cl = collect_ray(address=address, python=python, timeout=ray_timeout, root=root,
                         reach_timeout=min(deep_timeout, REACH_TIMEOUT) if deep else None,
                         deep_timeout=deep_timeout if deep else None)
        nodes, _ = nodes_from_documents([("ray", cl)])
        cluster = True
    else:
        assert live is not None
        nodes, cluster = [(None, _live_snapshot(live, python, deep, deep_timeout, console), None)], False
    report = diagnose(nodes, forced_profile=profile_name or cfg.profile, only=list(only) or cfg.only,
                      ignore=list(ignore) + cfg.ignore, cluster=cluster, live=not (from_files or from_report),
                      local=live is not None, python_named=bool(python))
    if from_report:
        _as_report(report)
        _say_stated(report, stated[1], from_report, console)
    if cfg.source:
        report.extra["config"] = cfg.source
        from doctor.checks.diagnose import describe_config

        # said every time, even with -q: a waiver that is applied in silence turns a failing host into "ok"
        console.print(console.style(describe_config(cfg) or "", "yellow"), min_verbosity=-1)
    if cluster and not console.json_mode and console.verbosity >= 0:
        from doctor.cluster.table import render_cluster_table

        render_cluster_table([(n or "", s, e) for n, s, e in nodes], console)
    if not console.json_mode and console.verbosity >= 1:
        for node, nsnap, _ in nodes:
            if nsnap is None:
                continue
            fs = ", ".join(f"{k}={v}" for k, v in facts(nsnap).items() if v is not None)
            console.print(console.style(f"facts{f' [{node}]' if node else ''}: {fs or 'none known'}", "dim"))
    strict = bool(strict if strict is not None else cfg.strict)
    if junit_file:
        write_junit(report, junit_file, console, strict=strict)
    return emit(report, console, strict=strict)


def _stated(path: str) -> tuple[Any, Any]:
    """The partial snapshot of what the report at `path` states (exit 2 when it cannot be read or states nothing
    the doctor reads: an empty verdict would read as "ok")."""

    from doctor.errors import InputError
    from doctor.snapshot.kind import doctor_document_kind
    from doctor.snapshot.loader import BUNDLE_HINT, binary_kind
    from doctor.snapshot.model import snapshot_from_dict
    from doctor.snapshot.stated import read_stated

    try:
        if path == "-":
            import sys

            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot read the report: {e.strerror or e}", source=path) from None
    if path == "-":
        path = "stdin"
    if kind := binary_kind(raw):
        raise InputError(f"not text: {kind}{BUNDLE_HINT}: a report is the text a bug report pastes", source=path)
    text = raw.decode("utf-8", errors="replace")
    if doctor_document_kind(text):
        raise InputError("is a doctor snapshot, not a report's text: read it with `doctor check --from FILE`",
                         source=path)
    stated = read_stated(text)
    if not stated.facts:
        why = (" (every fact it states is stated twice with different values: "
               + ", ".join(c[0].key for c in stated.conflicts) + ")") if stated.conflicts else ""
        raise InputError("states no version, device or setting the doctor reads (collect_env output, npu-smi info, "
                         f"pip list/freeze, CANN's install.info, `name: version` lines, NAME=value){why}", source=path)
    return snapshot_from_dict(stated.document(), source=path), stated


def _as_report(report: Any) -> None:
    """The rules speak of "the snapshot"; here the facts are what a report states, and the findings say so."""
    import re
    from dataclasses import replace

    def say(text: str | None) -> str | None:
        if not text:
            return text
        return re.sub(r"\b([Tt])he snapshot(?!s)", lambda m: f"{m[1]}he report", text)

    report.findings = [replace(f, title=say(f.title), detail=say(f.detail),
                               fix=replace(f.fix, text=say(f.fix.text)) if f.fix else f.fix) for f in report.findings]
    report.checks = [replace(c, reason=say(c.reason)) for c in report.checks]


def _say_stated(report: Any, stated: Any, path: str, console: Console) -> None:
    """What was read, with its lines, before the verdict: a user checks the reading, not only the findings."""
    report.extra["stated"] = [{"fact": f.key, "value": f.value, "line": f.line} for f in stated.facts]
    report.extra["stated_conflicts"] = [[{"fact": f.key, "value": f.value, "line": f.line} for f in c]
                                        for c in stated.conflicts]
    if console.json_mode or console.verbosity < 0:
        return
    where = "stdin" if path == "-" else path  # as the errors name it (`- = stdin`)
    console.print(console.style(f"stated in {where}: " + "; ".join(stated.described(console.verbosity >= 1)), "dim"))
    if not any(f.severity.value in ("error", "warning") for f in report.findings):
        # "ok" on a report means only that what it states breaks no rule: say how little could be judged
        ran = sum(1 for c in report.checks if c.status.value != "skip")
        console.print(console.style(
            f"what the report states breaks none of the rules that could judge it ({ran} check(s)); the others need "
            "facts it does not state (-v lists them): this is not a verdict on the rest of that environment", "yellow"))
    for c in stated.conflicts:
        said = " vs ".join(f"{f.value} (line {f.line})" for f in c)
        console.print(console.style(f"stated twice, left unknown: {c[0].key.partition('.')[2] or c[0].key} {said}",
                                    "yellow"))


def _refuse_combinations(from_files: tuple[str, ...], use_ray: bool, deep: bool, flag: str = "--from") -> None:
    """Options that describe the live host mean nothing for a snapshot file: refuse them, naming them."""
    if from_files and use_ray:
        raise UsageError(f"use either {flag} or --ray, not both")
    if deep and from_files:
        raise UsageError("--deep probes this host (or, with --ray, every node, and pings between their NPUs); it cannot be "
                         f"combined with {flag}: `doctor collect --deep -o FILE` on the host records the same imports "
                         "and files, which `doctor check --from FILE` judges")
    if from_files:
        live_only = given("root", "python", "npu_smi_timeout", "address", "ray_timeout")
        if live_only:
            raise UsageError(f"{', '.join(live_only)} describe{'s' if len(live_only) == 1 else ''} the machine to "
                             f"probe; with {flag} the "
                             + ("report" if flag == "--from-report" else "snapshot")
                             + " is diagnosed as it is: drop " + ("it" if len(live_only) == 1 else "them"))


def _live_snapshot(live: _Background, python: str | None, deep: bool, deep_timeout: float, console: Console) -> Any:
    """The live host's snapshot (exit 2 when the target interpreter could not run), with --deep imports."""
    from doctor.checks.runner import load_all, load_tables
    from doctor.knowledge.profiles import load_profiles
    from doctor.knowledge.releases import load_releases

    load_profiles()
    load_releases()
    load_tables(load_all())
    collection = live.result()
    refuse_unrunnable_python(collection.probes, python)
    snap = collection.snapshot
    if deep:
        add_deep(snap, python, deep_timeout, console)
    return snap


def _start_live(root: str, python: str | None, npu_smi_timeout: float) -> _Background:
    """Start the target interpreter's probe at once (it runs ~0.1 s on another core), then the other
    probes in a thread, so both overlap with this process importing the rules."""
    from doctor.probes.pyenv import start_target_probe

    started = start_target_probe(python)

    def collect():  # type: ignore[no-untyped-def]
        from doctor.probes.host import CollectOptions, collect

        return collect(CollectOptions(root=root, python=python, npu_smi_timeout=npu_smi_timeout,
                                      started_python=started))

    return _Background(collect)


class _Background:
    """Run one function in a thread; `result()` joins and re-raises what it raised."""

    def __init__(self, fn) -> None:  # type: ignore[no-untyped-def]
        import threading

        self._value = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._value = fn()
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                self._error = e

        self._thread = threading.Thread(target=run, name="doctor-live-collect", daemon=True)
        self._thread.start()

    def result(self):  # type: ignore[no-untyped-def]
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
