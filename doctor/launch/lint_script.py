"""`doctor lint`: every entry-point call of a script, on every path bash can take through it, checked against
the config that entry point composes for the target verl version, with the rules that apply to its engine and
device. A finding that holds on some paths only is a warning naming those paths; an error only when every path
has it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from doctor.launch import entry as E
from doctor.launch import sources as S
from doctor.launch.device_branch import device_branch as _device_branch
from doctor.launch.device_branch import gpu_by_default, npu_settings
from doctor.launch.launcher import launcher_findings
from doctor.launch.model_config import ModelInfo
from doctor.launch.model_key import ModelKey, model_key
from doctor.launch.rules import Context, check, hub_id
from doctor.launch.script_parser import Call, CutOff, Invocation, ParsedScript
from doctor.launch.validation import (
    MODEL_KEY,
    compose_findings,
    load_model,
    model_missing,
    resolve_config_dir,
    with_hydra,
)
from doctor.report import Finding, Fix, Severity, finding, first_few

_HEADER = re.compile(r"^# .*written by doctor \S+ for verl (\S+?)\.?$", re.M)


@dataclass
class Options:
    verl_version: str | None = None
    model: str | None = None
    verl_config: str | None = None
    compose: bool | None = None
    megatron_bridge: bool | None = None
    target: str = "auto"  # auto | npu | gpu
    script_path: str | None = None  # the script's file name (an `*_npu.sh` says the target)


def target_version(text: str, opts: Options) -> tuple[str | None, str]:
    """The verl version to lint against and where it came from."""
    from doctor.launch import hydra_compose

    if opts.verl_version:
        return opts.verl_version, "--verl-version"
    m = _HEADER.search(text)
    if m:
        return m.group(1), "the script's header"
    stated = _stated_by_tree(opts.verl_config)
    if stated:  # the release the overrides are composed against says which it is (a checkout: 0.10.0.dev)
        return stated, "--verl-config's tree"
    inst, _ = hydra_compose.installed_verl()
    return (inst, "the installed verl") if inst else (None, "")


def _stated_by_tree(verl_config: str | None) -> str | None:
    """The version `verl/version/version` states beside `--verl-config DIR` (DIR = verl/trainer/config of a checkout,
    a site-packages verl or the doctor's cache of a wheel; verl's setup.py reads the same file). None for a bare copy
    of a config directory."""
    if not verl_config:
        return None
    cfg = Path(verl_config).resolve()
    if not (cfg.name == "config" and cfg.parent.name == "trainer" and cfg.parent.parent.name == "verl"):
        return None
    from doctor.knowledge.versions import parse_pkg_version
    from doctor.launch.hydra_compose import tree_version

    text = tree_version(cfg.parent.parent)
    return text if text and parse_pkg_version(text) is not None else None


def inferred_version(parsed: ParsedScript, newest: str) -> tuple[str, str]:
    """The release to lint a script against when nothing states it: the newest in which every config group option
    the script selects exists (`model_engine=mindspeed`: 0.9.0), else the newest the doctor knows."""
    from doctor.launch.removed_keys import newest_with

    chosen = {f"{o.key}/{o.value}": o.text for call in parsed.invocations for inv in call.alternatives
              for o in inv.overrides if "." not in o.key and "@" not in o.key and o.prefix != "~" and o.value}
    found = newest_with(set(chosen), newest)
    if found is None:
        return newest, "the newest release it knows"
    return found, "the newest release with " + ", ".join(sorted(chosen.values()))


def lint_parsed(parsed: ParsedScript, text: str, opts: Options) -> tuple[list[Finding], str | None, list[dict[str, Any]]]:
    """(findings, verl version, per-call summaries) for a parsed script."""
    from doctor.launch.features import known_releases

    findings: list[Finding] = []
    version, how = target_version(text, opts)
    if version is None:
        version, why = inferred_version(parsed, known_releases()[1])
        findings.append(finding("lint-verl-version-unknown", "warning", ("verl",),
                                f"no verl version to lint against; the rules of {version} were applied ({why})",
                                detail="No --verl-version, no `written by doctor … for verl X` header, no verl installed.",
                                evidence={"verl_version": version},
                                fix="Pass --verl-version VERSION (the verl the cluster runs)."))
    trainer_dir, note = resolve_config_dir(version, opts.verl_config, opts.compose)
    if note is not None:
        findings.append(note)
    calls = parsed.invocations
    if not calls:
        findings.append(finding("lint-no-invocation", "warning", ("config",),
                                "no verl entry point (python3 -m verl.trainer.main_ppo, a recipe main_*) is run here",
                                detail="Nothing was checked.", fix="Lint the script that starts the training run."))
    summaries = []
    notes = _walk_notes(parsed, calls, opts.target)
    findings.extend(f for f in notes if f.id == "lint-overrides-cut-off")  # the cause first: it explains others
    for call in calls:
        found = _blame_cut_off(lint_call(call, version, trainer_dir, opts), call, parsed.cut_off)
        if call.alternatives[0].file is not None:
            found = [_in_callee(f, call.alternatives[0]) for f in found]
        elif len(calls) > 1:
            found = [replace(f, title=f"line {call.line}: {f.title}", evidence={**f.evidence, "line": call.line})
                     for f in found]
        findings.extend(found)
        summaries.append(_summary(call))
    findings.extend(f for f in notes if f.id != "lint-overrides-cut-off")
    if not how:  # the version was inferred: a key an earlier release has fits a release the script may be for
        findings = [_unstated(f, version) for f in findings]
    return findings, version, summaries


def _in_callee(f: Finding, inv: Invocation) -> Finding:
    """A finding on a call in a script the linted one runs (`bash other.sh`): it is placed at that script's line,
    where the entry point and its overrides are written (an override the wrapper passes through "$@" is at the line
    that expands "$@"), and names the wrapper's line that ran it."""
    chain = " → ".join(f"{os.path.basename(p)} line {n}" for p, n in inv.via)
    where = f"{os.path.basename(inv.file or '')} line {inv.line}"
    return replace(f, title=f"{where} (run by {chain}): {f.title}",
                   evidence={**f.evidence, "line": inv.line, "file": inv.file,
                             "via": [{"file": p, "line": n} for p, n in inv.via]})


def _unstated(f: Finding, version: str) -> Finding:
    """A key `version` removed (`megatron.grad_offload`, gone in 0.9.1) in a script that does not say which verl it
    is for: it fails on `version` and runs on the releases that have it, so it is a warning that names both, not an
    error on a guess."""
    if f.id != "launch-key-removed" or f.severity is not Severity.ERROR:
        return f
    last, gone = f.evidence.get("last_release"), f.evidence.get("removed_in") or version
    have = f"verl {last} has it" if last else "the releases before it have it"
    return replace(f, severity=Severity.WARNING, title=f"{f.title} — no verl version was stated, and {have}",
                   fix=Fix(f"Pass --verl-version (the verl the cluster runs); from verl {gone} on: "
                           f"{f.fix.text if f.fix else 'delete the override.'}"))


def _blame_cut_off(found: list[Finding], call: Call, cut: list[CutOff]) -> list[Finding]:
    """A finding about a key that a cut-off line sets (the run gets verl's default instead: n_gpus_per_node 8, no
    log-prob micro batch) is fixed by the missing `\\`, not by what the rule would otherwise ask for."""
    sets = {w.split("=", 1)[0].lstrip("+~"): (c, w) for c in cut if c.entry_line == call.line for w in c.words
            if "=" in w}
    out = []
    for f in found:
        if f.key not in sets:
            out.append(f)
            continue
        c, word = sets[f.key]
        fix = f"End line {c.entry_end} with ` \\`: line {c.line} sets {word}, which the run never receives."
        out.append(replace(f, detail=(f"{f.detail} " if f.detail else "") + f"The script sets {f.key} on line {c.line}, "
                           f"but that line is cut off from the entry point (lint-overrides-cut-off): the run gets "
                           f"verl's default.", fix=Fix(fix), evidence={**f.evidence, "cut_off_line": c.line}))
    return out


def lint_call(call: Call, version: str, trainer_dir: Path | None, opts: Options) -> list[Finding]:
    paths, off = on_target(call.alternatives, opts.target)
    skipped = [_skipped(call, off, opts.target)] if off else []
    if not paths:
        return skipped + _device_defaults(call, opts.target == "npu")
    per_path = [lint_path(inv, version, trainer_dir, opts) for inv in paths]
    npu = [next((f.evidence.get("npu") for f in found if f.id == "lint-engine"), None) for found in per_path]
    return merge_paths(paths, per_path, npu) + skipped + _device_defaults(call, opts.target == "npu" or (
        opts.target == "auto" and True in npu))


def _device_defaults(call: Call, on_npu: bool) -> list[Finding]:
    """On an NPU run (`--target npu`, or a script whose other paths lint judged NPU runs), a path another device takes
    by a default of a variable the script leaves unset (device_branch.gpu_by_default): the NPU run takes it too
    unless its job sets the variable. lint judges that path as the other device's (or, with --target npu, leaves it
    out), so the condition it rests on is said, once per branch, with every setting that keeps the run off that side
    (device_branch.npu_settings: DEVICE=npu, and VERL_USE_UV=0 where the same `&&` list tests it)."""
    if not on_npu:
        return []
    out, seen = [], set()
    labels = [inv.label for inv in call.alternatives]
    for inv in call.alternatives:
        hit = gpu_by_default(inv.label)
        if hit is None or hit[0] in seen:
            continue
        choice, names = hit
        seen.add(choice)
        shown, sets = ", ".join(names), npu_settings(choice, labels)
        also = [s for s in sets[1:] if "=" in s]
        out.append(finding(
            "lint-device-default", "warning", ("config",),
            f"{shown} {'is' if len(names) == 1 else 'are'} not set by the script: an NPU run takes {choice} — "
            f"another device's side — unless its job sets {' or '.join(sets)}",
            detail=f"The side is the one the script's default for {shown} takes; the script (and any script that runs "
                   f"it) sets {'it' if len(names) == 1 else 'them'} nowhere. Its other side was linted as the NPU run.",
            evidence={"variables": list(names), "branch": str(choice), "line": call.line, "settings": sets},
            fix=f"Export {sets[0]} for an NPU run (as its job, or a wrapper, would), or set it in the script"
                + (f"; or export {' or '.join(also)}, which the same `&&` list also tests: either keeps the run off "
                   "that side." if also else ".")))
    return out


def on_target(alternatives: list[Invocation], target: str) -> tuple[list[Invocation], list[int]]:
    """(the paths a run on `target` can take, the indexes of those it cannot): with --target npu a path through the
    script's `gpu)` arm (or `[ "$DEVICE" = npu ]` false) is one an NPU host never takes, so its findings are not the
    NPU run's; with --target gpu, likewise a path through an NPU arm. A call only such paths reach is not linted
    (verl main's tests/special_e2e/run_ppo_trainer_megatron.sh runs main_ppo once under `[ "$device_name" ==
    "cuda" ]` and once under `== "npu"`)."""
    if target == "auto":
        return alternatives, []
    said = [_device_branch(inv.label) for inv in alternatives]
    off = [i for i, s in enumerate(said) if s is not None and s[0] != (target == "npu")]
    return [inv for i, inv in enumerate(alternatives) if i not in off], off


def _skipped(call: Call, off: list[int], target: str) -> Finding:
    """The paths --target left out, and why: a branch a run on `target` never takes (`gpu)`, `[ "$DEVICE" = npu ]`
    false), or the side a default of the script takes (`[ "${DEVICE:-gpu}" = gpu ]` true, DEVICE set nowhere), which
    such a run does take unless its job sets the variable — said so, not "does not take" (lint-device-default warns of
    it on an NPU run)."""
    alternatives = call.alternatives
    device = "an NPU" if target == "npu" else "a GPU"
    branches = list(dict.fromkeys(b[1] for i in off if (b := _device_branch(alternatives[i].label)) is not None))
    never = [str(b) for b in branches if not getattr(b, "defaulted", ())]
    names = path_names(alternatives) if len(alternatives) > 1 else ["; ".join(alternatives[0].label)]
    what = ("the entry-point call was not linted" if len(off) == len(alternatives)
            else f"{len(off)} of {len(alternatives)} paths were not linted")
    why = [f"{device} run does not take {first_few(never, 3, '; ')}"] if never else []
    labels = [inv.label for inv in alternatives]
    for side in branches:
        defaulted: tuple[str, ...] = getattr(side, "defaulted", ())
        if defaulted:
            sets = npu_settings(side, labels) if target == "npu" else list(defaulted)
            why.append(f"{side} is another device's side, which {device} run takes unless its job sets "
                       + " or ".join(sets) + (" (lint-device-default)" if target == "npu" else ""))
    return finding("lint-paths-off-target", "info", ("config",),
                   f"--target {target}: {what}; {'; '.join(why)}",
                   detail="Not linted: " + " | ".join(names[i] for i in off) + ".",
                   evidence={"target": target, "paths": [names[i] for i in off], "branches": [str(b) for b in branches],
                             "line": call.line})


def lint_path(inv: Invocation, version: str, trainer_dir: Path | None, opts: Options) -> list[Finding]:
    """Findings for one entry-point call on one path."""
    out: list[Finding] = []
    if inv.ignored:
        out.append(finding("lint-ignored-arguments", "info", ("config",),
                           "arguments that are not Hydra overrides were ignored: " + " ".join(inv.ignored),
                           evidence={"ignored": inv.ignored}))
    if inv.unknown_args:
        out.append(finding("lint-unknown-arguments", "info", ("config",),
                           "arguments bash splits from values only the run knows were not checked: "
                           + ", ".join(inv.unknown_args), evidence={"expansions": inv.unknown_args}))
    at = len(out)  # where the model's note goes (known once the config is: its model key)
    absent = E.absent_module(inv.entry, trainer_dir)
    data_only = E.shipped_without_code(inv.entry, trainer_dir) if absent is not None else None
    if data_only is not None:  # a wheel that left the package's code out: a checkout of the release runs it
        out.append(_entry_not_in_wheel(inv.entry, absent[0] if absent else "", data_only, version))
    elif absent is not None:  # the run stops at the import: no config is read, no rule of the trainer applies
        return (out + [_entry_missing(inv.entry, *absent)]
                + environment_findings(inv.exports, inv.export_lines, documented_stack(version)) + launcher_findings(inv))
    sel = E.select(inv.entry, inv.config_name, inv.config_path, trainer_dir)
    ctx = Context(verl_version=version, megatron_bridge=opts.megatron_bridge, config_name=sel.config_name,
                  origin="lint", npu=_targets_npu(inv, opts, opts.script_path), trains=E.trains(inv.entry),
                  validates=E.validates(inv.entry, trainer_dir))
    hydra: list[Finding] = []
    if inv.unknown_config and opts.compose is not False:  # upstream's tests/special_e2e/run_test.sh: `--config-name "$1"`
        out.append(finding("lint-entry-not-composed", "warning", ("config", "verl"),
                           f"{inv.entry}: its config was not composed ({inv.unknown_config}: a value only the run knows)",
                           detail="The rules ran on the overrides alone; keys were not checked against a config, and "
                                  "main_ppo's rules give warnings at most.",
                           evidence={"entry": inv.entry, "config": inv.unknown_config},
                           fix="Lint the script that runs this one with the config name, or pass it here.",
                           source=S.VERL_MAIN_PPO))
    elif sel.config_dir is not None and opts.compose is not False:
        hydra, _ = compose_findings(inv.overrides, ctx, sel.config_dir, sel.config_name,
                                    main_ppo=inv.entry == "verl.trainer.main_ppo", entry=inv.entry)
    else:
        ctx.engine, _ = E.engine_of(inv.overrides, sel.config_name, None)
        if sel.missing and opts.compose is not False and trainer_dir is not None:
            out.append(finding("lint-entry-not-composed", "warning", ("config", "verl"),
                               f"{inv.entry}: its config was not composed ({sel.missing})",
                               detail="The rules ran on the overrides alone; keys were not checked against a config.",
                               evidence={"entry": inv.entry, "config_name": sel.config_name},
                               fix=sel.fix or "Pass --verl-config pointing at the trainer config of a verl checkout "
                                              "that has it.",
                               source=S.VERL_MAIN_PPO))
    model = model_key(sel.config_name, ctx.flat)
    ctx.model, note = _model(inv, opts, model)
    if note is not None:
        out.insert(at, note)
    engine, why = E.engine_of(inv.overrides, sel.config_name, ctx.flat, ctx.outside)
    out.append(finding("lint-engine", "info", ("config",),
                       f"{inv.entry} composes {sel.config_name} ({sel.why}); engine {engine} ({why})"
                       + ("" if engine in E.MEGATRON_ENGINES else ": Megatron/MindSpeed rules not applied"),
                       evidence={"entry": inv.entry, "config_name": sel.config_name, "engine": engine,
                                 "npu": ctx.npu, "npu_hints": inv.hints}))
    found = [] if E.is_sft(inv.entry) else check(inv.overrides, ctx)  # main_ppo's rules are not SFT's
    found += _model_left_to_verl(inv, ctx, opts, model)
    if (sel.config_dir is None and inv.entry != "verl.trainer.main_ppo") or inv.unknown_config:
        found = [_other_entry(f, inv.entry) for f in found]
    found = cluster_defaults(found, inv.override_defaults)
    return (out + with_hydra(found, hydra) + environment_findings(inv.exports, inv.export_lines, documented_stack(version))
            + launcher_findings(inv))


def _entry_missing(entry: str, path: str, near: list[str]) -> Finding:
    package = entry.rsplit(".", 1)[0]
    hint = f" (in {package}: {', '.join(near)})" if near else ""
    return finding("launch-entry-missing", "error", ("config", "verl"),
                   f"{entry} is not in the verl linted against: no {path}{hint}",
                   detail=f"python -m {entry} stops with 'No module named {entry}' before Hydra reads a config. "
                          "The release linted against is the one whose trainer config was given (its Python files "
                          "are beside it).",
                   key=None, evidence={"entry": entry, "module": path, "near": near},
                   fix=f"Use the entry point this release has{hint}, or lint against the verl the script was "
                       "written for.", source=S.PYTHON_M)


def _entry_not_in_wheel(entry: str, path: str, package: str, version: str) -> Finding:
    return finding("launch-entry-not-in-wheel", "warning", ("config", "verl"),
                   f"{entry}: the verl {version} linted against has {package}/ without its Python code (no {path}); "
                   "a checkout of the release has it",
                   detail=f"{package}/ holds only data files in the release linted against: a wheel whose build left "
                          "that directory's code out (it has no __init__.py, so find_packages skips it, while its "
                          f"config is package data). python -m {entry} runs from a checkout of the release installed "
                          "with `pip install -e .`, as verl's Ascend install guide installs it, and stops with 'No "
                          f"module named {entry}' where verl was installed from the wheel. The script was linted "
                          "against the config beside the entry point.",
                   key=None, evidence={"entry": entry, "module": path, "package": package},
                   fix="Run it with verl installed from a checkout of the release (git clone; pip install -e .), "
                       "not from the PyPI wheel.", source=S.PYTHON_M)


_CLUSTER_KEYS = ("trainer.nnodes", "trainer.n_gpus_per_node")


def cluster_defaults(found: list[Finding], defaults: dict[str, tuple[str, ...]]) -> list[Finding]:
    """An error that rests on a node or NPU count the script takes from the environment with a default
    (`NNODES=${NNODES:-1}` … `trainer.nnodes=${NNODES}`, how upstream's multi-node scripts take it from the job) is a
    warning that says so: it holds for the default, and the job may set another count. Values the script fixes
    still decide (launcher.py treats torchrun's node count the same way)."""
    from_env = {k: defaults[k] for k in _CLUSTER_KEYS if defaults.get(k)}
    if not from_env:
        return found
    out = []
    for f in found:
        keys = [k for k in from_env if k in f.evidence]
        if f.severity is Severity.ERROR and keys:
            names = sorted({n for k in keys for n in from_env[k]})
            said = ", ".join(f"{k}={f.evidence[k].split('=', 1)[-1]}" for k in keys)
            f = replace(f, severity=Severity.WARNING,
                        title=f"{f.title} — with the script's default {said}, which the environment may replace "
                              f"({', '.join(names)})",
                        evidence={**f.evidence, "defaults": names})
        out.append(f)
    return out


# `doctor check`'s rules on the values of environment variables, which hold as much for a script's exports as for a
# host's environment: the table of values each reader takes (HCCL, torch_npu, vllm-ascend, verl), upstream's guidance
# on values that break a run in a setting (only its rows whose every condition the exports show), HCCL's timeouts
# (HCCL_EVENT_TIMEOUT against HCCL_EXEC_TIMEOUT when both are exported), an address where an interface name belongs,
# the form of ASCEND_RT_VISIBLE_DEVICES, a misspelt name. The readers' releases are not known here, so the table
# judges only what every release read agrees on; facts of a host (its interfaces, its devices, its nodes, what is
# installed) stay unknown, and the rules that need them skip. The rendezvous address is the launcher's (launcher.py).
ENV_CHECKS = ("env-values", "env-guidance", "hccl-timeout", "hccl-exec-timeout", "hccl-event-timeout", "socket-ifname",
              "host-nic", "visible-devices", "env-near-miss")


def documented_stack(verl_version: str) -> dict[str, str]:
    """The readers' releases every documented stack of this verl release agrees on (profiles/stacks: an exact
    torch-npu pin, the CANN), which the rules on values can assume when a script says nothing else; {} when none."""
    from doctor.knowledge.profiles import load_profiles
    from doctor.knowledge.versions import parse_pkg_version

    want = parse_pkg_version(verl_version)
    stacks = [p for p in load_profiles() if want is not None and p.verl_version == want]
    out: dict[str, str] = {}
    pins = {p.pins.get("torch-npu") or "" for p in stacks}
    if len(pins) == 1 and (pin := pins.pop()).startswith("==") and "*" not in pin:
        out["torch-npu"] = pin[2:]
    canns = {p.cann_version for p in stacks}
    if len(canns) == 1 and (c := canns.pop()) and c != "unknown":
        out["cann"] = c
    return out


def environment_findings(exports: dict[str, str], lines: dict[str, int] | None = None,
                         stack: dict[str, str] | None = None) -> list[Finding]:
    """The check rules on the variables the script exports with a known value, each finding saying it is the
    script's export and the line that sets the variable it names (one code path: the rules are `doctor check`'s
    own, run on a snapshot of those variables). With `stack` (the releases the target verl's documented stacks pin),
    they run a second time with those releases: what only that run finds is a warning that says the assumption (a
    newer torch_npu refuses what older ones let pass)."""
    if not exports:
        return []
    plain = _judge_exports(exports, {})
    if not stack:
        return _titled(plain, exports, lines, "")
    seen = {(f.id, _named(f, exports)) for f in plain}
    assumed = ", ".join(f"{'CANN' if k == 'cann' else k} {v}" for k, v in sorted(stack.items()))
    extra = [replace(f, severity=Severity.WARNING if f.severity is Severity.ERROR else f.severity,
                     evidence={**f.evidence, "assumed": dict(stack)})
             for f in _judge_exports(exports, stack) if (f.id, _named(f, exports)) not in seen]
    return _titled(plain, exports, lines, "") + _titled(extra, exports, lines, f" (with the documented stack's {assumed})")


def _judge_exports(exports: dict[str, str], stack: dict[str, str]) -> list[Finding]:
    from doctor.checks.runner import run_checks
    from doctor.snapshot.model import snapshot_from_dict

    doc: dict[str, Any] = {"schema": "doctor.snapshot/1", "env": dict(exports)}
    if stack.get("torch-npu"):
        doc["packages"] = {"torch-npu": {"version": stack["torch-npu"]}}
    if stack.get("cann"):
        doc["ascend"] = {"toolkit": {"version": stack["cann"]}}
    found, _ = run_checks([(None, snapshot_from_dict(doc), None)], only=ENV_CHECKS)
    return [f for f in found if f.severity is not Severity.INFO]


def _named(f: Finding, exports: dict[str, str]) -> str | None:
    return next((n for n in sorted(exports, key=len, reverse=True) if n in f.title), None)


def _titled(found: list[Finding], exports: dict[str, str], lines: dict[str, int] | None, assumption: str) -> list[Finding]:
    out = []
    for f in found:
        named = _named(f, exports)
        at = (lines or {}).get(named) if named else None
        where = f" (line {at})" if at else ""
        out.append(replace(f, title=f"exported by the script{where}{assumption}: {f.title}",
                           evidence={**f.evidence, "exported": True, **({"set_at_line": at} if at else {})}))
    return out


def _other_entry(f: Finding, entry: str) -> Finding:
    """main_ppo's rules on an entry point whose own config and trainer were not read: a warning at most."""
    if f.severity is not Severity.ERROR:
        return f
    return replace(f, severity=Severity.WARNING, title=f"{f.title} (main_ppo's rule; {entry} was not composed)")


# what lint cannot check without the model's config.json (rules_megatron: the Megatron/MindSpeed engines)
_MODEL_CHECKS = ("attention and KV heads against TP, layers against PP and VPP, recompute layers, experts against EP, "
                 "fused kernels against the model's activation and experts (rules of the Megatron/MindSpeed engines)")


def _model(inv: Invocation, opts: Options, model: ModelKey | None) -> tuple[ModelInfo | None, Finding | None]:
    """The model facts for the rules: --model, else the directory the script's actor_rollout_ref.model.path names
    when its config.json is readable here. A path that is not (a path on the cluster, a value only the run knows) is
    named, with the checks that need it: a script linted away from its cluster usually has one. An entry point whose
    config loads its model from another key (the SFT trainers' `model.partial_pretrain` / `model.path`) or none
    (main_eval) runs none of those checks, so nothing is said of its model here (launch-model-missing still is)."""
    if opts.model is not None:
        return load_model(opts.model)
    if model is None or model.key != MODEL_KEY:
        return None, None
    o = next((o for o in reversed(inv.overrides) if o.key == MODEL_KEY and o.prefix != "~"), None)
    if o is None:
        return load_model(None)
    path = o.py if isinstance(o.py, str) and not o.unknown else None
    if path and os.path.isfile(os.path.join(os.path.expanduser(path), "config.json")):
        return load_model(os.path.expanduser(path))
    shown = o.display.split("=", 1)[-1]
    local = path is not None and os.path.isdir(os.path.expanduser(path))
    why = ("a value only the run knows" if path is None else "it has no config.json" if local
           else "a Hugging Face model id; lint does not download it" if hub_id(path) else "no such directory here")
    return None, finding("launch-model-unknown", "info", ("model",),
                         f"the script's model path {shown} is not readable here ({why}): heads/layers/experts "
                         "checks skipped",
                         detail=f"Not checked without the model's config.json: {_MODEL_CHECKS}.",
                         evidence={"model": shown, **({"line": o.line} if o.line else {})}, key=MODEL_KEY,
                         fix="Pass --model DIR (a copy of that model's directory, or of its config.json) to run them.")


def _model_left_to_verl(inv: Invocation, ctx: Context, opts: Options, model: ModelKey | None) -> list[Finding]:
    """A call that sets not the key its config loads the model from (`model`: actor_rollout_ref.model.path, an SFT
    trainer's model.partial_pretrain / model.path), over a composed config whose value there is still verl's
    placeholder (main_ppo's config, sft_trainer.yaml's `~/models/gemma-1.1-7b-it`; a recipe's own config that names a
    model is not): launch's warning launch-model-missing. Without a composed config the default is not known here,
    and nothing is said."""
    if opts.model is not None or ctx.flat is None or model is None or model.placeholder is None:
        return []
    if ctx.flat.get(model.key) != model.placeholder or any(o.key == model.key for o in inv.overrides):
        return []
    said = (f", or set by {first_few(inv.unknown_args, 3)} (arguments only the run knows)" if inv.unknown_args
            else "" if inv.passthrough else "; this call passes none of the script's arguments on (no \"$@\")")
    return [model_missing(f"no {model.key}",
                          f"Add {model.key}=DIR (a Hugging Face model directory at the same path on every node) "
                          "to the call.", said, model)]


HOST_NPUS = "/dev/davinci[0-9]*"  # the NPUs of this host (a glob, so tests can point it elsewhere)
_NPU_NAME = re.compile(r"(?:^|[_\-/.])(?:npu|ascend)(?:[_\-/.]|$)", re.I)


def _targets_npu(inv: Invocation, opts: Options, path: str | None = None) -> bool | None:
    """Whether the run targets an Ascend NPU: --target, else trainer.device, else what the script says (Ascend/HCCL/
    vllm-ascend variables, a sourced set_env.sh, vllm-ascend settings among the overrides, an `*_npu.sh` name),
    else whether this host has NPUs; None when nothing says."""
    if opts.target != "auto":
        return opts.target == "npu"
    device = next((o.py for o in reversed(inv.overrides) if o.key == "trainer.device"), None)
    if device in ("cuda", "gpu"):
        return False
    if device == "npu":
        return True
    branch = _device_branch(inv.label)
    if branch is not None:  # the script's own branch on its device: `case "$DEVICE" in gpu)` is a GPU run
        if branch[0]:
            inv.hints.append(branch[1])
        return branch[0]
    if inv.hints:
        return True
    if any("ascend" in o.key.lower() for o in inv.overrides):
        inv.hints.append("vllm-ascend settings among the overrides")
        return True
    if path and _NPU_NAME.search(os.path.basename(path)):
        inv.hints.append(f"the script's name ({os.path.basename(path)})")
        return True
    import glob

    if glob.glob(HOST_NPUS):
        inv.hints.append("this host has Ascend NPUs")
        return True
    return None


def path_names(alternatives: list[Invocation]) -> list[str]:
    """What sets each path apart: the branch choices not shared by all of them."""
    common = set.intersection(*(set(a.label) for a in alternatives)) if alternatives else set()
    return ["; ".join(c for c in a.label if c not in common) or "the path with no branch taken" for a in alternatives]


_CHOICE = re.compile(r"^line (?P<line>\d+): (?:(?P<case>case .+?) → (?P<arm>[^→]+)|(?P<test>.+) (?P<side>true|false))$")


def branch_points(names: list[str], few: int = 4) -> str:
    """The branches that make the paths, each said once with the choices taken at it (`case "${DEVICE}" → gpu) at line
    56 / npu) at line 59`), instead of every path in full: verl v0.9.0's run_qwen3_235b_a22b_megatron.sh has 6 paths
    from 3 branches, ~700 characters as a list. The first `few` branches, then how many more (-v lists the paths)."""
    points: dict[str, list[str]] = {}
    for name in names:
        for choice in name.split("; "):
            m = _CHOICE.match(choice)
            if m is None:  # "the path with no branch taken": a path, not a branch
                continue
            if m.group("case"):  # each arm of a case has its own line
                at, arm = m.group("case") + " →", f"{m.group('arm')} at line {m.group('line')}"
            else:
                at, arm = f"line {m.group('line')}: {m.group('test')}", m.group("side")
            arms = points.setdefault(at, [])
            if arm and arm not in arms:
                arms.append(arm)
    said = [f"{at} {' / '.join(arms)}".rstrip() for at, arms in points.items()]
    more = f" and {len(said) - few} more" if len(said) > few else ""
    return f"{len(said)} branch{'es' if len(said) != 1 else ''}: " + "; ".join(said[:few]) + more


def merge_paths(alternatives: list[Invocation], per_path: list[list[Finding]],
                npu: list[bool | None] | None = None) -> list[Finding]:
    """One list of findings for a call reached on several paths (see the module doc). With `npu` (per path: whether
    it runs on NPUs), a finding only on paths that run on another device, in a script whose other paths run on NPUs,
    is info: the branch an NPU run takes does not have it."""
    if len(per_path) == 1:
        return per_path[0]
    names = path_names(alternatives)
    seen: dict[tuple[str, str | None], list[tuple[int, Finding]]] = {}
    for i, found in enumerate(per_path):
        for f in found:
            seen.setdefault((f.id, f.key), []).append((i, f))
    out: list[Finding] = []
    for items in seen.values():
        paths = sorted({i for i, _ in items})
        f = max((x for _, x in items), key=lambda x: x.severity.rank)
        if len(paths) == len(per_path):
            out.append(f)
            continue
        where = [names[i] for i in paths]
        sev = Severity.WARNING if f.severity is Severity.ERROR else f.severity
        if npu and True in npu and all(npu[i] is False for i in paths) and sev is not Severity.INFO:
            sev = Severity.INFO
            f = replace(f, detail=(f"{f.detail} " if f.detail else "") + "(Info: only paths that run on another "
                                  "device have it; the script's NPU paths do not.)")
        said = _paths_where(alternatives, paths)
        said = (f"on the {len(paths)} of {len(per_path)} paths where {said}" if said
                else f"on {len(paths)} of {len(per_path)} paths ({' | '.join(where)})")
        out.append(replace(f, severity=sev, title=f"{said}: {f.title}", evidence={**f.evidence, "paths": where}))
    return out


def _paths_where(alternatives: list[Invocation], paths: list[int]) -> str | None:
    """The branch choices that alone tell the paths in `paths` from the others, when there are such: the choices
    every one of them took that no other path took all of. verl v0.9.0's run_qwen3_235b_a22b_megatron.sh branches
    on `case "${DEVICE}"` and two `if`s; a finding of its four GPU paths listed all four with both `if`s each,
    where `case "${DEVICE}" → gpu)` says it. None when no such choices exist (the paths are listed then)."""
    everywhere = set.intersection(*(set(a.label) for a in alternatives))
    common = set.intersection(*(set(alternatives[i].label) for i in paths)) - everywhere
    if not common or any(common <= set(a.label) for j, a in enumerate(alternatives) if j not in paths):
        return None
    return "; ".join(c for c in alternatives[paths[0]].label if c in common)


def _cut_off(c: CutOff) -> Finding:
    """Overrides bash runs as a command of their own: the entry point's line ended without a backslash."""
    shown = first_few(c.words, 3, " ")
    return finding("lint-overrides-cut-off", "error", ("config",),
                   f"line {c.line}: {len(c.words)} override(s) are cut off from the entry point of line {c.entry_line} "
                   f"(its command ends at line {c.entry_end} without `\\`)",
                   detail=f"The command that starts at line {c.entry_line} ends at line {c.entry_end} without a trailing "
                          "`\\`, so bash runs "
                          f"line {c.line} ({shown}) as a command of its own (command not found) and the training run "
                          "never receives these overrides.",
                   evidence={"entry_line": c.entry_line, "entry_end": c.entry_end, "line": c.line,
                             "overrides": list(c.words)},
                   fix=f"End line {c.entry_end} with ` \\` (and every line up to line {c.line}).", source=S.BASH_MANUAL)


def _summary(call: Call) -> dict[str, Any]:
    names = path_names(call.alternatives)
    first = call.alternatives[0]
    return {"line": call.line, **({"file": first.file, "via": [{"file": p, "line": n} for p, n in first.via]}
                                  if first.file else {}), "entry": first.entry, "config_name": first.config_name,
            "config_path": first.config_path, "overrides": [o.display for o in first.overrides],
            "paths": [{"path": n, "npu_hints": a.hints, "overrides": [o.display for o in a.overrides]}
                      for n, a in zip(names, call.alternatives, strict=True)] if len(call.alternatives) > 1 else []}


def _on_paths(call: Call, target: str) -> str:
    """`on 6 paths`, and with --target how many of them were linted (lint-paths-off-target names the others)."""
    n = len(call.alternatives)
    linted = len(on_target(call.alternatives, target)[0])
    return f"on {n} paths" + (f" ({linted} linted for --target {target})" if linted != n else "")


def _walk_notes(parsed: ParsedScript, calls: list[Call], target: str = "auto") -> list[Finding]:
    out = [_cut_off(c) for c in parsed.cut_off]
    if len(calls) > 1:
        out.append(finding("lint-several-invocations", "info", ("config",),
                           f"{len(calls)} entry-point calls; each is checked, findings name their line",
                           evidence={"lines": [c.line for c in calls]}))
    multi = [c for c in calls if len(c.alternatives) > 1]
    if multi:
        out.append(finding("lint-paths", "info", ("config",),
                           "the script branches on values it cannot know; each path "
                           + ("was checked: " if target == "auto" else f"{'an NPU' if target == 'npu' else 'a GPU'} run can take was checked: ")
                           + " / ".join(f"the call on line {c.line} {_on_paths(c, target)}, from "
                                        + branch_points(path_names(c.alternatives)) for c in multi),
                           detail="An error found on some paths only is reported as a warning naming them. The paths: "
                                  + " / ".join(f"line {c.line}: " + " | ".join(path_names(c.alternatives))
                                               for c in multi) + ".",
                           evidence={"calls": {c.line: path_names(c.alternatives) for c in multi}}))
    if parsed.unresolved:
        out.append(_unresolved(parsed.unresolved, calls))
    if parsed.notes:
        out.append(finding("lint-not-followed", "info", ("config",),
                           "parts of the script were not followed: " + _notes_once(parsed.notes),
                           evidence={"notes": parsed.notes}))
    return out


def _unresolved(unresolved: list[str], calls: list[Call]) -> Finding:
    """Values only the run knows. Those that reach an override decide a key whose value the rules could not check:
    the keys are named (the first few). The others — a multi-node script's `$(ip route get …)`, `$(seq 1 120)`, its
    Ray readiness loop — are the script's own business at run time, and are counted, not listed (the detail, shown
    with -v, lists every value with the keys it decides; so does evidence)."""
    keys: dict[str, list[str]] = {}  # a value only the run knows -> the keys it decides
    for call in calls:
        for inv in call.alternatives:
            for o in inv.overrides:
                for hole in map(_same_variable, o.unknown):
                    if o.key not in keys.setdefault(hole, []):
                        keys[hole].append(o.key)
            for hole in ([inv.unknown_config] if inv.unknown_config else []) + inv.unknown_args:
                keys.setdefault(hole, [])
    decided = [k for hole, ks in keys.items() for k in ks]
    unresolved = list(dict.fromkeys(map(_same_variable, unresolved)))
    reach = [u for u in unresolved if u in keys] + [h for h in keys if h not in unresolved]
    rest = [u for u in unresolved if u not in keys]
    parts = []
    if decided:
        named = list(dict.fromkeys(decided))
        parts.append(f"{len(named)} override(s) take a value only the run knows, their rules skipped: "
                     + first_few(named, 3))
    elif reach:
        parts.append("arguments or a config name only the run knows (said above): " + first_few(reach, 3))
    if rest:
        parts.append(f"{len(rest)} {'other ' if parts else ''}value(s) only the run knows (command substitutions, "
                     "environment variables) reach no override (-v lists them)" if not parts else
                     f"{len(rest)} other value(s) only the run knows reach no override (-v lists them)")
    return finding("lint-unresolved", "info", ("config",), "; ".join(parts),
                   detail="Known only at run time: " + ", ".join(
                       f"{h} ({', '.join(keys[h])})" if keys.get(h) else h
                       for h in unresolved + [h for h in reach if h not in unresolved]) + ".",
                   evidence={"unresolved": unresolved, "decides": {h: ks for h, ks in keys.items() if ks},
                             "reaches_no_override": rest})


def _same_variable(text: str) -> str:
    """`${X}` and `$X` are one value (the script's `[ -n "${X}" ]` and its override `k=$X`)."""
    m = re.fullmatch(r"\$\{(\w+)\}", text)
    return f"${m.group(1)}" if m else text


def _notes_once(notes: list[str]) -> str:
    """The notes joined, a reason several of them end with said once, after the first group of them: a script
    `launch` writes sources CANN's and NNAL's set_env.sh, and lint on another host said "(not found beside the
    script or under its directories: …)" after each."""
    split = [(m.group(1), m.group(2)) if (m := re.fullmatch(r"(.+) \(([^()]+)\)", n, re.S)) else (n, None)
             for n in notes]
    reasons = [why for _, why in split]
    heads: dict[str, list[str]] = {}  # a reason said by several notes -> their heads, in order
    parts: list[tuple[str, str | None]] = []  # (a note said as it is, None) or ("", a reason its group ends with)
    for note, (head, why) in zip(notes, split, strict=True):
        if why is None or reasons.count(why) == 1:
            parts.append((note, None))
        elif why not in heads:
            heads[why] = [head]
            parts.append(("", why))
        else:
            heads[why].append(head)
    return "; ".join(f"{'; '.join(heads[why])} (each: {why})" if why is not None else note for note, why in parts)
