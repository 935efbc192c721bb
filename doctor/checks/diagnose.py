"""`doctor check` as a function: snapshot(s) -> profile selection -> checks -> known deviations -> Report.

The CLI only gathers inputs (files, live probe, Ray) and options; everything that decides a verdict is
here or in the checks, so tests can diagnose a snapshot dict without a terminal.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.version import Version

from doctor.checks.facts import cann, family, pver
from doctor.checks.runner import run_checks
from doctor.errors import InputError
from doctor.knowledge.profiles import Profile, load_profiles, select_profile
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


def load_check_config(path: str | None = None, cwd: str | os.PathLike[str] | None = None) -> CheckConfig:
    """Read waivers. An explicit file may hold a `[tool.doctor]` table or the keys at top level; without
    one, `doctor.toml` then `pyproject.toml` ([tool.doctor] only) in `cwd` are used when present."""
    if path is not None:
        return _parse_config(os.fspath(path), explicit=True)
    base = os.fspath(cwd) if cwd is not None else os.getcwd()
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
    cfg.strict = strict
    return cfg


def nodes_from_documents(docs: Sequence[tuple[str, Snapshot | Cluster]]) -> tuple[list[Node], bool]:
    """(label, document) pairs -> check inputs, and whether to treat them as a cluster."""
    nodes: list[Node] = []
    cluster = False
    for label, doc in docs:
        if isinstance(doc, Cluster):
            cluster = True
            for n in doc.nodes:
                nodes.append((n.node, n.snapshot, n.error if n.snapshot is None else None))
        else:
            nodes.append((label, doc, None))
    if len(nodes) > 1:
        cluster = True
    if not cluster and nodes:
        nodes = [(None, nodes[0][1], nodes[0][2])]
    return nodes, cluster


def diagnose(
    nodes: Sequence[Node],
    *,
    profiles: list[Profile] | None = None,
    forced_profile: str | None = None,
    only: Sequence[str] = (),
    ignore: Sequence[str] = (),
    cluster: bool = False,
) -> Report:
    """Run every selected check on every snapshot and return the report (not rendered)."""
    profs = load_profiles() if profiles is None else profiles
    if forced_profile:
        from doctor.knowledge.profiles import find_profile

        find_profile(profs, forced_profile)  # InputError before any work when the name is wrong
    if only:
        from doctor.checks.runner import load_all

        reg = load_all()
        known_names = {c.area for c in reg.values()} | set(reg) | {"profile-selection"}
        bad = [o for o in only if o not in known_names]
        if bad:
            areas = sorted({c.area for c in reg.values()})
            raise InputError(f"unknown area or check {bad[0]!r}; areas: {', '.join(areas)}", source="--only")
    chosen: dict[int, tuple[Profile | None, str]] = {}
    for _, snap, _ in nodes:
        if snap is not None:
            chosen[id(snap)] = select_profile(snap, profs, forced_profile)
    options = {"cluster": cluster, "profile_forced": bool(forced_profile)}
    findings, results = run_checks(list(nodes), profile_for=lambda s: chosen[id(s)][0], only=only, ignore=ignore,
                                   options=options)
    # profile selection facts become findings of their own pseudo-check
    if not only or "cann" in only or "profile-selection" in only:
        for node, snap, _ in nodes:
            if snap is None:
                continue
            sel = [f for f in _selection_findings(snap, profs, *chosen[id(snap)]) if f.id not in ignore]
            sel = [replace(f, node=node, check="profile-selection") for f in sel]
            findings.extend(sel)
            worst = max((f.severity.rank for f in sel), default=-1)
            status = CheckStatus.FAIL if worst == 2 else CheckStatus.WARN if worst == 1 else CheckStatus.PASS
            results.append(CheckResult("profile-selection", "cann", status, 0.0, node))
    findings = apply_deviations(findings, nodes, chosen)
    results = _restatus(results, findings)
    report = Report(command="check", findings=findings, checks=results)
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


def _selection_findings(snap: Snapshot, profs: list[Profile], prof: Profile | None, why: str) -> list[Finding]:
    out: list[Finding] = []
    c = cann(snap)
    if c is not None and profs:
        top = max(CannVersion(p.cann_version) for p in profs)
        low = min(CannVersion(p.cann_min) for p in profs)
        if c[1] > top and not c[1].is_ambiguous_against(top):
            out.append(finding(
                "cann-newer-than-profiles", "info", ("cann",), f"CANN {c[0]} is newer than every verified stack",
                detail=f"The newest verified stack documents CANN {top}; checks use {prof.name if prof else 'no profile'}.",
                evidence={"cann": c[0], "newest_profile_cann": str(top)},
                source=max(profs, key=lambda p: CannVersion(p.cann_version)).source))
        elif c[1] < low and not c[1].is_ambiguous_against(low):
            out.append(finding(
                "cann-older-than-profiles", "warning", ("cann",), f"CANN {c[0]} is older than every verified stack",
                detail=f"No verl release documents an Ascend stack on this CANN (the oldest profile starts at {low}).",
                evidence={"cann": c[0], "oldest_profile_cann": str(low)},
                fix="Upgrade CANN (and driver) to a verified stack: see `doctor profiles`.",
                source=min(profs, key=lambda p: CannVersion(p.cann_min)).source))
    v = pver(snap, "verl")
    rel = [Version(p.verl) for p in profs if p.verl != "main"]
    if v is not None and rel and Version(v.public) > max(rel) and not any(p.verl == "main" for p in profs if p is prof):
        out.append(finding(
            "verl-newer-than-profiles", "info", ("verl",), f"verl {v} is newer than every verified release stack",
            evidence={"verl": str(v), "newest_profile_verl": str(max(rel))},
            source=max((p for p in profs if p.verl != "main"), key=lambda p: Version(p.verl)).source))
    if prof is None and c is not None and not out:
        out.append(finding("no-profile", "info", ("cann",), "No verified stack applies", detail=why,
                           evidence={"cann": c[0], "chip": family(snap)}))
    return out


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
    worst: dict[tuple[str, str | None], int] = {}
    for f in findings:
        if f.check:
            k = (f.check, f.node)
            worst[k] = max(worst.get(k, -1), f.severity.rank)
    out = []
    for r in results:
        if r.status is CheckStatus.CRASH or r.status is CheckStatus.SKIP:
            out.append(r)
            continue
        w = worst.get((r.id, r.node), -1)
        st = CheckStatus.FAIL if w == 2 else CheckStatus.WARN if w == 1 else CheckStatus.PASS
        out.append(replace(r, status=st))
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
