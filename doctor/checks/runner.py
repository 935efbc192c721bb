"""The check registry and runner.

A check is a pure function `CheckContext -> iterable of Finding`: no I/O, no imports of heavy modules.
Area modules register their checks with `@check(...)`; `AREA_MODULES` is the one list of those modules.
The runner isolates checks from each other: one that raises becomes a `check-crashed` finding with its
traceback, and the rest still run (the command then exits 2).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from doctor.checks.fix_target import for_target, route_of
from doctor.report import CheckResult, CheckStatus, Finding, Severity, finding
from doctor.snapshot.model import Snapshot

# Every module that registers checks, in report order. Import is lazy (only `doctor check` pays for it).
AREA_MODULES: tuple[str, ...] = (
    "doctor.checks.system",
    "doctor.checks.cann",
    "doctor.checks.devices",
    "doctor.checks.torch_npu",
    "doctor.checks.vllm",
    "doctor.checks.mindspeed",
    "doctor.checks.chip_support",
    "doctor.checks.packages",
    "doctor.checks.declared",
    "doctor.checks.later_bounds",
    "doctor.checks.yanked",
    "doctor.checks.wheel_tags",
    "doctor.checks.shared_files",
    "doctor.checks.installed_files",
    "doctor.checks.host_facts",
    "doctor.checks.cxx_runtime",
    "doctor.checks.limits",
    "doctor.checks.env",
    "doctor.checks.env_values",
    "doctor.checks.env_guidance",
    "doctor.checks.network",
    "doctor.checks.npu_network",
    "doctor.checks.deep",
    "doctor.checks.cluster",
    "doctor.checks.cluster_npu_net",
)


@dataclass
class CheckContext:
    """What a check may look at. `profile` is the chosen verified stack (or None); `nodes` is set for
    cluster checks: (node name, snapshot or None, error)."""

    snapshot: Snapshot
    profile: Any = None
    node: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    nodes: Sequence[tuple[str, Snapshot | None, str | None]] = ()


CheckFn = Callable[[CheckContext], Iterable[Finding]]


@dataclass(frozen=True)
class Check:
    """One registered check: a pure function of the snapshot(s) in one area, run by id (`--only`, `--ignore`)."""

    id: str
    area: str
    fn: CheckFn
    cluster: bool = False  # runs once over all nodes instead of once per snapshot
    doc: str = ""
    findings: tuple[str, ...] = ()  # every finding id it can report (tests hold this to its code)
    # the knowledge tables it reads on any host with installed packages, each loaded once per process: a live
    # check loads them while the target interpreter is still being probed (`load_tables`)
    tables: tuple[Callable[[], object], ...] = ()


REGISTRY: dict[str, Check] = {}


def check(id: str, area: str, *, cluster: bool = False, findings: tuple[str, ...] = (),
          tables: tuple[Callable[[], object], ...] = ()) -> Callable[[CheckFn], CheckFn]:
    """Register a check function under a stable id and an area (the report groups by area), with the
    finding ids it reports (so `--only`/`--ignore` can take finding ids and refuse names that match nothing)
    and the loaders of the tables it reads on any host with packages (`load_tables`)."""

    def deco(fn: CheckFn) -> CheckFn:
        if id in REGISTRY and REGISTRY[id].fn is not fn:
            raise ValueError(f"duplicate check id {id!r}")
        REGISTRY[id] = Check(id=id, area=area, fn=fn, cluster=cluster, doc=(fn.__doc__ or "").strip(),
                             findings=tuple(findings), tables=tuple(tables))
        return fn

    return deco


def load_tables(registry: dict[str, Check]) -> None:
    """Load the tables the checks read on any host with packages, while a live host's target interpreter is
    still being probed: the doctor waits ~0.1-0.2 s for that child on another core, and parsing the tables
    then (instead of after it answered, when the checks run) takes them off the time `doctor check` takes.
    Each loader keeps what it loaded for the process, so the check reads the same object. A table that fails
    to load is left to its check, which loads it again and reports the failure as it always does."""
    for c in registry.values():
        for load in c.tables:
            try:
                load()
            except Exception:  # noqa: BLE001, S112 - the check meets the same failure and reports it
                continue


class Skipped(Exception):
    """Raised by a check (before it yields anything) that could not look: the facts it needs are unknown,
    or it does not apply to this snapshot. The check is then `skip` with this reason, never `pass`."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


# A skip reason speaks of "the snapshot", which a live check (no --from: the doctor probed this host itself) has only
# as its own probe's record: there the reason is said of this machine. Longest phrases first.
_LIVE_WORDS = (
    (" (older snapshot, or not collected)", " (the probe could not read it here)"),
    ("the user collect ran as", "the user the doctor runs as"),
    ("a partial snapshot", "a partial probe"),
    ("fewer than two nodes have a snapshot", "fewer than two nodes were probed"),
    ("in the snapshots", "in the nodes' probes"),
    ("is not set in the snapshot", "is not set on this machine"),
    ("is not in the snapshot", "was not found by the probe of this machine"),
    ("are not in the snapshot", "were not found by the probe of this machine"),
    ("in the snapshot", "on this machine"),
    ("the snapshot's", "the target's"),
    ("the snapshot", "the probe of this machine"),
)


def said_of_this_machine(reason: str) -> str:
    """A skip reason as a live check says it: of this machine, not of a snapshot the user never gave."""
    for old, new in _LIVE_WORDS:
        reason = reason.replace(old, new)
    return reason


def skip(reason: str) -> NoReturn:
    """End a check as skipped, saying why (`skip("no --deep imports in the snapshot")`)."""
    raise Skipped(reason)


def load_all() -> dict[str, Check]:
    """Import every area module (a missing or misspelt one is an ImportError, not a silently smaller run).
    The checks come back in report order: AREA_MODULES order, then each module's own order, whichever module
    happened to be imported first."""
    for mod in AREA_MODULES:
        importlib.import_module(mod)
    rank = {m: i for i, m in enumerate(AREA_MODULES)}
    ordered = sorted(REGISTRY.values(), key=lambda c: rank.get(c.fn.__module__, len(rank)))
    if list(REGISTRY.values()) != ordered:
        REGISTRY.clear()
        REGISTRY.update((c.id, c) for c in ordered)
    return REGISTRY


def _names(c: Check) -> set[str]:
    """What `--only`/`--ignore` may call a check by: its area, its id, or a finding id it reports."""
    return {c.area, c.id, *c.findings}


def headers(registry: dict[str, Check]) -> set[str]:
    """The group headers of check's text output (a finding's first component) that are not also an area: `--only
    npu` keeps what is listed under `[npu]`, `--ignore npu` drops it. A name that is both (cann, system, vllm,
    network, env, cluster) keeps meaning the area."""
    from doctor.report import COMPONENTS

    return set(COMPONENTS) - {c.area for c in registry.values()}


def _selected(c: Check, only: Sequence[str], ignore: Sequence[str]) -> bool:
    if only and not _names(c) & set(only) and not set(only) & headers(REGISTRY):
        return False
    return c.area not in ignore and c.id not in ignore


def _kept(f: Finding, c: Check, only: Sequence[str], ignore: Sequence[str]) -> bool:
    """A finding survives the waivers: not ignored by id or by its header, and, when `--only` picked its check by
    finding id or header alone, one of those asked for."""
    return _kept_id(f.id, f.components[0] if f.components else "", c, only, ignore)


def _kept_id(fid: str, head: str, c: Check, only: Sequence[str], ignore: Sequence[str]) -> bool:
    if fid in ignore or (head in ignore and head in headers(REGISTRY)):
        return False
    if only and c.area not in only and c.id not in only and fid != "check-crashed":
        return fid in only or head in only
    return True


def reported(ctx: CheckContext, check_id: str, finding_id: str, head: str) -> bool:
    """Whether a `finding_id` finding (first component `head`) of check `check_id` survives this run's waivers
    (`--only` / `--ignore` / the config file's): a check that stands down because another reports the same fact
    speaks when that other is waived. True when the run says nothing of its waivers (a check called alone)."""
    only, ignore = ctx.options.get("waivers", ((), ()))
    c = REGISTRY.get(check_id)
    return c is None or (_selected(c, only, ignore) and _kept_id(finding_id, head, c, only, ignore))


def run_one(c: Check, ctx: CheckContext) -> tuple[list[Finding], CheckResult]:
    t0 = time.perf_counter()
    found: list[Finding] = []
    try:
        # how the fixes' pip lines run on this target (doctor.checks.fix_target); `local`: probed on this host
        route = route_of(ctx.snapshot, local=bool(ctx.options.get("local")), uv=ctx.options.get("uv"))
        for f in c.fn(ctx):
            found.append(replace(f, check=c.id, node=f.node if f.node is not None else ctx.node,
                                 fix=for_target(f.fix, route)))
    except Skipped as s:
        # a skip after findings ends the check early; what it found stands, and the check is still `skip` (with
        # its reason) unless what it found is a warning or an error: notes alone are not a pass
        if all(f.severity is Severity.INFO for f in found):
            return found, CheckResult(c.id, c.area, CheckStatus.SKIP, time.perf_counter() - t0, ctx.node,
                                      reason=said_of_this_machine(s.reason) if ctx.options.get("local") else s.reason)
    except Exception as e:  # noqa: BLE001 - a crashed check must not take the others down
        import traceback  # only when a check crashed

        tb = traceback.format_exc()
        f = finding(
            "check-crashed",
            Severity.ERROR,
            ("system",),
            f"check {c.id} crashed: {type(e).__name__}: {e}",
            detail="This is a bug in the doctor, not in your environment. Run with -v for the traceback and report it.",
            evidence={"check": c.id, "exception": f"{type(e).__name__}: {e}"},
            fix="Re-run with `doctor check -v` and attach the output (and `doctor collect -o snap.json`) to a bug report.",
            node=ctx.node,
        )
        dt = time.perf_counter() - t0
        return [replace(f, check=c.id)], CheckResult(c.id, c.area, CheckStatus.CRASH, dt, ctx.node, tb)
    dt = time.perf_counter() - t0
    return found, CheckResult(c.id, c.area, CheckStatus.of(found), dt, ctx.node)


def run_checks(
    snapshots: Sequence[tuple[str | None, Snapshot | None, str | None]],
    *,
    profile_for: Callable[[Snapshot], Any] | None = None,
    only: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: dict[str, Any] | None = None,
) -> tuple[list[Finding], list[CheckResult]]:
    """Run per-node checks on each snapshot, then cluster checks once when there is more than one node.

    `snapshots` is [(node name or None, snapshot or None when the node failed, error)]. `only` and `ignore`
    take areas, check ids and finding ids: an ignored finding id is dropped whichever check raised it."""
    registry = load_all()
    findings: list[Finding] = []
    results: list[CheckResult] = []
    per_node = [c for c in registry.values() if not c.cluster and _selected(c, only, ignore)]
    cluster = [c for c in registry.values() if c.cluster and _selected(c, only, ignore)]
    for node, snap, _err in snapshots:
        if snap is None:
            continue
        prof = profile_for(snap) if profile_for else None
        ctx = CheckContext(snapshot=snap, profile=prof, node=node,
                           options={**(options or {}), "waivers": (tuple(only), tuple(ignore))})
        for c in per_node:
            f, r = run_one(c, ctx)
            findings.extend(f)
            results.append(r)
    if len(snapshots) > 1 or (options or {}).get("cluster"):
        first = next((s for _, s, _ in snapshots if s is not None), Snapshot())
        ctx = CheckContext(snapshot=first, options=dict(options or {}), nodes=[(n or "", s, e) for n, s, e in snapshots])
        for c in cluster:
            f, r = run_one(c, ctx)
            findings.extend(f)
            results.append(r)
    if only or ignore:
        kept = [f for f in findings if _kept(f, registry[f.check] if f.check in registry else _ANY, only, ignore)]
        results = _waived_statuses(results, findings, kept, only, ignore, registry)
        findings = kept
    return findings, results


def _waived_statuses(results: list[CheckResult], found: list[Finding], kept: list[Finding],
                     only: Sequence[str], ignore: Sequence[str], registry: dict[str, Check]) -> list[CheckResult]:
    """A check whose every finding the waivers dropped did not pass: it is `skip`, its reason naming what was waived
    and by which option (`--ignore cann-not-installed` made JUnit say cann-toolkit passed on a host without CANN). A
    check that keeps some of its findings is judged by those (doctor.checks.diagnose restatus)."""
    dropped: dict[tuple[str | None, str | None], dict[str, list[str]]] = {}
    left = {(f.check, f.node) for f in kept}
    for f in found:
        if (f.check, f.node) in left:
            continue
        # the waiver that dropped it: --ignore's alone would, else --only's
        by = "--ignore" if not _kept(f, registry.get(f.check or "", _ANY), (), ignore) else "--only"
        ids = dropped.setdefault((f.check, f.node), {}).setdefault(by, [])
        if f.id not in ids:
            ids.append(f.id)
    out = []
    for r in results:
        by_option = dropped.get((r.id, r.node))
        if by_option and r.status in (CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL):
            said = [f"waived by --ignore: {', '.join(by_option['--ignore'])}"] if "--ignore" in by_option else []
            if "--only" in by_option:
                said.append(f"not asked for by --only {', '.join(only)}: {', '.join(by_option['--only'])}")
            r = replace(r, status=CheckStatus.SKIP, reason="; ".join(said))
        out.append(r)
    return out


_ANY = Check(id="", area="", fn=lambda ctx: ())


def waiver_names(registry: dict[str, Check]) -> dict[str, set[str]]:
    """Every name `--only`/`--ignore` accept, by kind (areas, check ids, finding ids)."""
    return {
        "areas": {c.area for c in registry.values()},
        "headers": headers(registry),
        "checks": set(registry),
        "findings": {fid for c in registry.values() for fid in c.findings} | {"check-crashed"},
    }
