"""`doctor check` as a function: snapshot(s) -> profile selection -> checks -> known deviations -> Report.

The CLI only gathers inputs (files, live probe, Ray) and options; everything that decides a verdict is
here or in the checks, so tests can diagnose a snapshot dict without a terminal.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.version import Version

from doctor.checks.facts import cann, family, pver
from doctor.checks.runner import run_checks
from doctor.errors import InputError, UsageError
from doctor.knowledge.profiles import Profile, chip_pool, load_profiles, same_verl_line, select_profile
from doctor.knowledge.releases import knowledge_fix, knowledge_summary, load_releases
from doctor.knowledge.versions import CannVersion
from doctor.report import CheckResult, CheckStatus, Finding, Report, Severity, finding
from doctor.snapshot.model import Cluster, Snapshot
from doctor.tomlfile import read_toml

Node = tuple[str | None, Snapshot | None, str | None]


@dataclass
class CheckConfig:
    """Waivers and defaults from `--config FILE`, `[tool.doctor]` in pyproject.toml, or doctor.toml."""

    only: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    profile: str | None = None
    strict: bool = False
    source: str | None = None


_CONFIG_KEYS = {"only", "ignore", "profile", "strict"}


def describe_config(cfg: CheckConfig) -> str | None:
    """The line check prints whenever a waivers file applied: which file, and everything it changed."""
    if not cfg.source:
        return None
    parts = [f"ignore {', '.join(cfg.ignore)}" if cfg.ignore else "",
             f"only {', '.join(cfg.only)}" if cfg.only else "",
             f"profile {cfg.profile}" if cfg.profile else "", "strict (warnings fail)" if cfg.strict else ""]
    said = "; ".join(p for p in parts if p)
    return f"config: {cfg.source} applies: {said or 'nothing (the table is empty)'}"


def load_check_config(path: str | None = None, cwd: str | os.PathLike[str] | None = None) -> CheckConfig:
    """Read waivers. An explicit file may hold a `[tool.doctor]` table or the keys at top level; without
    one, `doctor.toml` then `pyproject.toml` ([tool.doctor] only) in `cwd` are used when present."""
    if path is not None:
        return _parse_config(os.fspath(path), explicit=True)
    try:
        base = os.fspath(cwd) if cwd is not None else os.getcwd()
    except FileNotFoundError:  # a deleted working directory holds no waivers file
        return CheckConfig()
    for name in ("doctor.toml", "pyproject.toml"):
        p = os.path.join(base, name)
        if os.path.isfile(p):
            cfg = _parse_config(p, explicit=name == "doctor.toml")
            if cfg.source:
                return cfg
    return CheckConfig()


def _parse_config(p: str, *, explicit: bool) -> CheckConfig:
    data = read_toml(p)
    table: Any = data.get("tool", {}).get("doctor") if isinstance(data.get("tool"), dict) else None
    where = "tool.doctor"
    if table is None:
        if not explicit:
            return CheckConfig()
        table, where = data, ""
    if not isinstance(table, dict):
        raise InputError("must be a table", source=p, path=where or None)
    unknown = sorted(set(table) - _CONFIG_KEYS - ({"tool"} if not where else set()))
    if unknown:
        raise InputError(f"unknown key (allowed: {', '.join(sorted(_CONFIG_KEYS))})", source=p,
                         path=f"{where + '.' if where else ''}{unknown[0]}")
    cfg = CheckConfig(source=p)
    for key in ("only", "ignore"):
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InputError("must be an array of strings", source=p, path=f"{where + '.' if where else ''}{key}")
        setattr(cfg, key, list(v))
    prof = table.get("profile")
    if prof is not None and not isinstance(prof, str):
        raise InputError("must be a string", source=p, path=f"{where + '.' if where else ''}profile")
    cfg.profile = prof
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise InputError("must be true or false", source=p, path=f"{where + '.' if where else ''}strict")
    if cfg.only or cfg.ignore:
        check_waivers(cfg.only, cfg.ignore, file=p, where=where)
    cfg.strict = strict
    return cfg


def nodes_from_documents(docs: Sequence[tuple[str, Snapshot | Cluster]]) -> tuple[list[Node], bool]:
    """(label, document) pairs -> check inputs, and whether to treat them as a cluster. A cluster file
    without nodes has nothing to check: that is bad input (exit 2), never "ok"."""
    nodes: list[Node] = []
    cluster = False
    for label, doc in docs:
        if isinstance(doc, Cluster):
            cluster = True
            if not doc.nodes:
                raise InputError("a cluster document without nodes has nothing to check", source=label, path="nodes")
            for n in doc.nodes:
                nodes.append((n.node, n.snapshot, n.error if n.snapshot is None else None))
        else:
            nodes.append((label, doc, None))
    given: list[tuple[str, Snapshot | None, str]] = []  # (file, snapshot, what to call it), in the order given
    for label, doc in docs:
        given += ([(label, n.snapshot, f"node {n.node} of {label}") for n in doc.nodes] if isinstance(doc, Cluster)
                  else [(label, doc, label)])
    _refuse_the_same_snapshot_twice(given)
    if len(nodes) > 1:
        cluster = True
    if not cluster and nodes:
        nodes = [(None, nodes[0][1], nodes[0][2])]
    return nodes, cluster


def _refuse_the_same_snapshot_twice(nodes: Sequence[tuple[str, Snapshot | None, str]]) -> None:
    """Two snapshot files that are one snapshot (the same file given twice, or a copy: same host, same collection time,
    same facts) are not two nodes: read as a cluster they doubled every finding and added the multi-node rules (HCCL
    timeouts) to a single host. A host's before/after pair has two collection times and is compared with `doctor
    diff`. Hostname and second alone do not make one snapshot: containers on the host's network share its hostname,
    hosts left at a default name ("localhost") share theirs, and pdsh collects them all in the same second; their
    facts differ. `nodes`: (the file, a snapshot, what to call it). The nodes of one cluster file are not compared
    with each other (Ray nodes in containers of one host can be alike to the second), but with every other file: a
    node's own snapshot given beside its cluster file is that node twice."""
    from doctor.snapshot.model import known

    seen: dict[tuple[str, str], list[tuple[str, str, Snapshot]]] = {}
    for label, snap, name in nodes:
        if snap is None:
            continue
        host = snap.host.hostname if known(snap.host) and snap.host is not None and known(snap.host.hostname) else None
        at = snap.collected_at if known(snap.collected_at) else None
        if not (isinstance(host, str) and host and isinstance(at, str) and at):
            continue
        for file, first, other in seen.setdefault((host, at), []):  # facts compared for the same host and second
            if other == snap and (file != label or first == name):  # a cluster's own nodes are not compared
                same = "given twice" if first == name else f"the same snapshot as {first}"
                raise InputError(f"{same} (host {host}, collected {at}): a cluster is one snapshot per node; "
                                 "`doctor diff A B` compares two snapshots of one host", source=name)
        seen[host, at].append((label, name, snap))


def _path_names(nodes: Sequence[tuple[str | None, Snapshot | None, str | None]]) -> dict[str, frozenset[str]]:
    """What each PYTHONPATH directory no listed distribution describes holds, for a snapshot probed on this host:
    looked at here, once, so the checks that ask whether such a directory can hold a missing module stay pure."""
    from doctor.checks.facts import unlisted_path_dirs
    from doctor.probes.path_entries import top_level_names

    return {d: top_level_names(d) for _, snap, _ in nodes if snap is not None for d in unlisted_path_dirs(snap)}


# profile selection reports these itself (pseudo-check `profile-selection`, area cann)
SELECTION_FINDINGS = ("cann-newer-than-profiles", "cann-older-than-profiles", "verl-newer-than-profiles", "no-profile",
                      "profile-facts-unknown", "profile-wrong-chip")


def check_waivers(only: Sequence[str], ignore: Sequence[str], *, file: str | None = None, where: str = "") -> None:
    """Every `--only`/`--ignore` name must be an area, a check id or a finding id: a misspelt waiver
    would otherwise run everything, or waive nothing, in silence. Names from a waivers `file` (its table `where`)
    are refused naming that file and key (input-invalid), the flags' own as a bad command line (usage-error)."""
    from difflib import get_close_matches

    from doctor.checks.runner import load_all, waiver_names

    kinds = waiver_names(load_all())
    kinds["checks"].add("profile-selection")
    kinds["findings"].update(SELECTION_FINDINGS)
    valid = set().union(*kinds.values())
    for key, names in (("only", only), ("ignore", ignore)):
        bad = [n for n in names if n not in valid]
        if bad:
            near = get_close_matches(bad[0], sorted(valid), n=1)
            flag = f"`{key}`" if file else f"--{key}"
            message = (f"{bad[0]!r} matches no area, check id or finding id"
                       + (f" (did you mean {near[0]!r}?)" if near else "")
                       + f"; {flag} takes an area ({', '.join(sorted(kinds['areas']))}), a group header of the output "
                         f"({', '.join(sorted(kinds['headers']))}), a check id "
                         f"({', '.join(sorted(kinds['checks']))}) or a finding id (README: Finding ids)")
            if file:
                raise InputError(message, source=file, path=f"{where + '.' if where else ''}{key}")
            raise UsageError(message, source=f"--{key}")


def diagnose(
    nodes: Sequence[Node],
    *,
    profiles: list[Profile] | None = None,
    forced_profile: str | None = None,
    only: Sequence[str] = (),
    ignore: Sequence[str] = (),
    cluster: bool = False,
    live: bool = True,
    local: bool = False,
    command: str = "check",
    python_named: bool = False,
) -> Report:
    """Run every selected check on every snapshot and return the report (not rendered). `live=False`:
    the snapshots come from files, so findings say "the snapshot" where they would say "this host". `local`: the
    one snapshot was probed on this host with the doctor's environment (a live `check`), so fixes may look up
    what runs here (doctor.probes: whether `uv` is on PATH, what a PYTHONPATH directory holds), looked up here before
    the checks run. `command`: the doctor command the checks run for (`smoke`'s preflight), which a fix that says
    "run this again with --python" names; `python_named`: its --python named the interpreter examined (a fix then
    says to name another one instead, not to name one)."""
    profs = load_profiles() if profiles is None else profiles
    if forced_profile:
        from doctor.knowledge.profiles import find_profile

        find_profile(profs, forced_profile)  # InputError before any work when the name is wrong
    if only or ignore:
        check_waivers(only, ignore)
    chosen: dict[int, tuple[Profile | None, str]] = {}
    for _, snap, _ in nodes:
        if snap is not None:
            chosen[id(snap)] = select_profile(snap, profs, forced_profile)
    # multi_node: the nodes are of one job across hosts (a Ray cluster of two or more nodes, the unreachable ones
    # included). A one-node Ray cluster is a cluster (its cross-node checks still run) but not a multi-node job: what
    # only matters between hosts (the hostname Gloo binds, RoCE ports) is not an error there.
    options: dict[str, Any] = {"cluster": cluster, "multi_node": cluster and len(nodes) > 1,
                               "profile_forced": bool(forced_profile), "local": local and not cluster,
                               "command": command, "python_named": python_named and local and not cluster}
    if options["local"]:
        from doctor.probes.uv import uv_here

        options["path_names"] = _path_names(nodes)
        options["uv"] = uv_here(os.environ.get("PATH")).for_user()  # how the fixes' uv lines name uv here
    findings, results = run_checks(list(nodes), profile_for=lambda s: chosen[id(s)][0], only=only, ignore=ignore,
                                   options=options)
    if _selection_wanted(only, ignore):
        for node, snap, _ in nodes:
            if snap is not None:
                sel, result = _selection_check(snap, profs, chosen[id(snap)], node, only, ignore)
                findings.extend(sel)
                results.append(result)
    if not results:
        raise InputError("the waivers leave no check to run", source="--only/--ignore")
    findings = apply_deviations(findings, nodes, chosen)
    if not live:
        findings = [_about_the_snapshot(f) for f in findings]
    results = _restatus(results, findings)
    report = Report(command="check", findings=findings, checks=results)
    report.extra["knowledge"] = knowledge_summary()
    from doctor.checks.facts import ver
    from doctor.checks.install_all import install_all

    keep = {node: [f"torch=={v}"] for node, snap, _ in nodes if snap is not None and (v := ver(snap, "torch"))}
    together = install_all(findings, keep)  # the findings' install lines as one command, beside each finding's own
    paired = {node for node, snap, _ in nodes if snap is not None and snap.has_package("torch-npu")}
    report.findings = _keep_torch(_say_torch_first(together, findings, nodes), keep, paired)
    if together:
        report.extra["install_all"] = together
    first = next(((n, s) for n, s, _ in nodes if s is not None), None)
    if first is not None:
        p, why = chosen[id(first[1])]
        report.profile = {"name": p.name if p else None, "reason": why}
        if p is not None:
            report.profile["source"] = p.source
    if cluster:
        report.nodes = [{"node": n or "?", "ok": s is not None, "error": e} for n, s, e in nodes]
        names: dict[str, str | None] = {}
        for n, s, _ in nodes:
            if s is not None:
                pr = chosen[id(s)][0]
                names[n or "?"] = pr.name if pr is not None else None
        report.extra["profiles"] = names
    return report


def _selection_wanted(only: Sequence[str], ignore: Sequence[str]) -> bool:
    from doctor.checks.runner import REGISTRY, headers

    names = {"cann", "profile-selection", *SELECTION_FINDINGS, *headers(REGISTRY)}
    if "profile-selection" in ignore or "cann" in ignore:
        return False
    return not only or bool(names & set(only))


def _selection_check(snap: Snapshot, profs: list[Profile], chosen: tuple[Profile | None, str], node: str | None,
                     only: Sequence[str], ignore: Sequence[str]) -> tuple[list[Finding], CheckResult]:
    """Profile selection's facts as the findings of its own pseudo-check, timed like the others."""
    t0 = time.perf_counter()
    from doctor.checks.runner import REGISTRY, headers

    heads = headers(REGISTRY)
    narrowed = bool(only) and not {"cann", "profile-selection"} & set(only)  # picked by finding id or header

    def kept(f: Finding) -> bool:
        head = f.components[0] if f.components else ""
        if f.id in ignore or (head in ignore and head in heads):
            return False
        return not narrowed or f.id in only or head in only

    sel = [replace(f, node=node, check="profile-selection") for f in _selection_findings(snap, profs, *chosen)
           if kept(f)]
    return sel, CheckResult("profile-selection", "cann", CheckStatus.of(sel), time.perf_counter() - t0, node)


_THIS_HOST = re.compile(r"\b(on|in) this host\b|\bthis host\b")


def _say_torch_first(lines: list[dict[str, Any]], findings: list[Finding],
                     nodes: Sequence[tuple[str | None, Snapshot | None, Any]]) -> list[Finding]:
    """Each summary line of a target whose complete package list has no torch names the packages that would make
    pip install one (`torch_first`; doctor.checks.torch_first): there is no torch to keep pinned. So does each
    finding's own fix there whose pip line would (the findings returned)."""
    from doctor.checks.facts import absent

    torchless = {node for node, snap, _ in nodes if snap is not None and absent(snap, "torch")}
    if not torchless:
        return findings
    from doctor.checks.torch_first import torch_pullers, with_torch_first
    from doctor.knowledge.requirements import load_requirements

    table = load_requirements()
    for line in lines:
        if line.get("node") in torchless and (pull := torch_pullers(line["requirements"], table)):
            line["torch_first"] = pull
    return with_torch_first(findings, torchless, table)


def _keep_torch(findings: list[Finding], keep: dict[Any, list[str]], paired: set[Any]) -> list[Finding]:
    """Each finding's own pip line that would resolve a package requiring torch pins the installed torch, as the
    summary line does (doctor.checks.torch_first.with_torch_kept)."""
    if not any(f.fix is not None and f.node in keep and "pip install" in " ".join((f.fix.text, *f.fix.commands))
               for f in findings):
        return findings
    from doctor.checks.torch_first import with_torch_kept
    from doctor.knowledge.requirements import load_requirements

    return with_torch_kept(findings, {node: pins[0] for node, pins in keep.items()}, load_requirements(), paired)


def _about_the_snapshot(f: Finding) -> Finding:
    """A snapshot from a file is not "this host": say "the snapshot" in what the finding states."""
    def sub(text: str) -> str:
        return _THIS_HOST.sub(lambda m: "in the snapshot" if m.group(1) else "the snapshot", text)

    title, detail = sub(f.title), sub(f.detail)
    return f if (title, detail) == (f.title, f.detail) else replace(f, title=title, detail=detail)


def _selection_findings(snap: Snapshot, profs: list[Profile], prof: Profile | None, why: str) -> list[Finding]:
    from doctor.knowledge.profiles import wrong_chip

    out: list[Finding] = []
    fam = family(snap)
    bad_chip = wrong_chip(prof, fam if isinstance(fam, str) else None, profs, "on this host") if prof else None
    if bad_chip and prof is not None:  # only a forced profile can be for another chip: selection filters by chip
        out.append(finding(
            "profile-wrong-chip", "error", ("npu", "kernels"), bad_chip,
            detail="The CANN kernels (ops), driver and firmware packages are built per chip family; a stack for "
                   "another chip names (and `doctor install` would plan) the wrong ones.",
            evidence={"profile": prof.name, "profile_chips": list(prof.chips), "chip": fam},
            fix=f"Drop --profile (the doctor picks the stack for {fam}) or pass a profile for {fam} (`doctor profiles`).",
            source=prof.source))
    c = cann(snap)
    if c is not None and profs:
        out.extend(_cann_range_findings(c, chip_pool(snap, profs), prof, _other_trainer(snap)))
    v = pver(snap, "verl")
    rel = [p.verl_version for p in profs if not p.is_snapshot]
    own_snapshot = prof is not None and prof.is_snapshot and same_verl_line(prof, v)
    if v is not None and rel and Version(v.public) > max(rel) and not own_snapshot:
        beyond = load_releases().newer_than_known(str(v))
        out.append(finding(
            "verl-newer-than-profiles", "info", ("verl",), f"verl {v} is newer than every verified release stack",
            detail=(f"No verl release after {max(rel)} has a profile yet"
                    + (f"; verl {v} is newer than every release the doctor knows." if beyond else ".")),
            evidence={"verl": str(v), "newest_profile_verl": str(max(rel))},
            fix=knowledge_fix() if beyond else None, source=prof.source if prof else load_releases().newest.source))
    if prof is not None and prof.unknown:
        out.append(finding(
            "profile-facts-unknown", "info", tuple(_UNKNOWN_COMPONENT.get(k, "verl") for k in prof.unknown),
            f"{prof.name} leaves {' and '.join(prof.unknown)} unknown",
            detail="The upstream stack names no version for them yet: " + "; ".join(f"{k}: {t}" for k, t in prof.unknown.items())
            + ". Checks of these pairings use the vendor tables only.",
            evidence={"profile": prof.name, "unknown": sorted(prof.unknown)}, source=prof.source))
    if prof is None and c is not None and not out:
        out.append(finding("no-profile", "info", ("cann",), "No verified stack applies", detail=why,
                           evidence={"cann": c[0], "chip": family(snap)}))
    return out


_UNKNOWN_COMPONENT = {"cann": "cann", "torch-npu": "torch-npu", "driver": "driver", "torch": "torch"}


def _other_trainer(snap: Snapshot) -> str | None:
    """Another trainer installed without verl (matrix.TRAINER_CANN_MINIMUM): the stack is that trainer's."""
    from doctor.knowledge.matrix import TRAINER_CANN_MINIMUM

    if snap.has_package("verl"):
        return None
    return next((t for t in TRAINER_CANN_MINIMUM if snap.has_package(t)), None)


def _cann_range_findings(c: tuple[str, CannVersion], profs: list[Profile], prof: Profile | None,
                         other: str | None = None) -> list[Finding]:
    """CANN above every profile's range (info; newer than the doctor's knowledge says so) or below all (a warning).
    `other`, a trainer installed without verl, runs the stack: below verl's stacks but not below the oldest CANN that
    trainer's own docs give is info (LLaMA-Factory's README: minimum CANN 8.0.RC1); below that too, a warning saying so."""
    from doctor.knowledge.matrix import newest_known_cann

    top = max(CannVersion(p.cann_max) for p in profs)
    documented = max(CannVersion(p.cann_version) for p in profs)
    low = min(CannVersion(p.cann_min) for p in profs)
    known_top = CannVersion(newest_known_cann())
    if not c[1] < top and not c[1].is_ambiguous_against(top):
        beyond = c[1] > known_top and not c[1].is_ambiguous_against(known_top)
        return [finding(
            "cann-newer-than-profiles", "info", ("cann",), f"CANN {c[0]} is newer than every verified stack",
            detail=f"The newest verified stack documents CANN {documented}; checks use {prof.name if prof else 'no profile'}. "
                   + (f"CANN {c[0]} is newer than every CANN the doctor knows (up to {known_top})." if beyond else
                      f"Vendor tables know CANN up to {known_top}, but no verl release documents a stack on it yet."),
            evidence={"cann": c[0], "newest_profile_cann": str(documented), "newest_known_cann": str(known_top)},
            fix=knowledge_fix() if beyond else None, source=prof.source if prof else load_releases().newest.source)]
    if c[1] < low and not c[1].is_ambiguous_against(low):
        from doctor.knowledge.matrix import TRAINER_CANN_MINIMUM

        floor, floor_src = TRAINER_CANN_MINIMUM[other] if other else ("", "")
        theirs = bool(other) and not (c[1] < CannVersion(floor) and not c[1].is_ambiguous_against(CannVersion(floor)))
        own = (f" verl is not installed, and {other}'s own docs go back to CANN {floor}: this matters only for a verl "
               "install on this host." if theirs else
               f" Nor does {other}, installed without verl: its own docs give CANN {floor} as the oldest." if other else "")
        return [finding(
            "cann-older-than-profiles", "info" if theirs else "warning", ("cann",),
            f"CANN {c[0]} is older than every verified stack",
            detail=f"No verl release documents an Ascend stack on this CANN (the oldest profile starts at {low})." + own,
            evidence={"cann": c[0], "oldest_profile_cann": str(low)},
            fix="Upgrade CANN (and driver) to a verified stack: see `doctor profiles`.",
            source=min(profs, key=lambda p: CannVersion(p.cann_min)).source + (f"; {floor_src}" if other else ""))]
    return []


def apply_deviations(findings: list[Finding], nodes: Sequence[Node],
                     chosen: dict[int, tuple[Profile | None, str]]) -> list[Finding]:
    """Warnings that the node's own verified stack documents become info, citing that stack."""
    by_node: dict[str | None, tuple[Profile | None, Snapshot]] = {}
    for n, s, _ in nodes:
        if s is not None:
            by_node[n] = (chosen[id(s)][0], s)
    out = []
    for f in findings:
        prof_snap = by_node.get(f.node)
        if f.severity is Severity.WARNING and prof_snap and prof_snap[0] is not None:
            prof, snap = prof_snap
            assert prof is not None
            c = cann(snap)
            ev = {**f.evidence, **({"cann": f.evidence.get("cann", c[0])} if c else {})}
            fam = family(snap)
            if fam:
                ev.setdefault("chip", fam)
            dev = prof.deviation_for(f.id, ev)
            if dev is not None:
                f = replace(f, severity=Severity.INFO, title=f"{f.title} (known deviation of {prof.name})",
                            detail=(f.detail + " " if f.detail else "") + dev.reason, source=dev.source, fix=None)
        out.append(f)
    return out


def _restatus(results: list[CheckResult], findings: list[Finding]) -> list[CheckResult]:
    """Statuses after waivers and known deviations changed the findings."""
    out = []
    for r in results:
        if r.status is CheckStatus.CRASH or r.status is CheckStatus.SKIP:
            out.append(r)
            continue
        out.append(replace(r, status=CheckStatus.of(f for f in findings if f.check == r.id and f.node == r.node)))
    return out


def facts(snap: Snapshot) -> dict[str, Any]:
    """The handful of facts `-v` prints before the findings."""
    from doctor.checks.facts import arch, driver, py_version, ver

    c = cann(snap)
    d = driver(snap)
    out: dict[str, Any] = {
        "arch": arch(snap), "python": str(py_version(snap)) if py_version(snap) else None,
        "chip": family(snap), "cann": c[0] if c else None, "driver": d[0] if d else None,
    }
    for p in ("torch", "torch-npu", "vllm", "vllm-ascend", "mindspeed", "megatron-core", "transformers", "verl", "numpy"):
        out[p] = ver(snap, p)
    return out
