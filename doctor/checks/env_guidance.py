"""Environment values their reader accepts that upstream says break the run here (profiles/env-guidance.toml).

`env-values` judges what a reader refuses or misreads. This check judges values the reader takes as written but
whose own upstream says they fail, hang, give wrong results or do nothing in a setting the snapshot shows: a chip
family, another variable, a package release, a CANN or driver version. Every condition of a row must be known to
hold (an unknown fact keeps the row silent); a setting no snapshot records (graph mode, sleep mode, a TP size) is
stated in the finding as what the run must also do. The table's loader (doctor/knowledge/env_guidance.py) says
how a row reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from doctor.checks.facts import cann, driver, env, env_known, env_unset, family, installed, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.versions import ascend_satisfies, pkg_satisfies
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot

if TYPE_CHECKING:
    from doctor.knowledge.env_guidance import Cond, Guidance


def holds(cond: Cond, snap: Snapshot, nocase_env: bool = False) -> bool | None:
    """Whether the condition holds on the snapshot: True, False, or None when the snapshot does not say."""
    if cond.kind == "installed":
        have = installed(snap, cond.name)
        if have is not True or not cond.arg:
            return have
        return pkg_satisfies(ver(snap, cond.name), cond.arg)
    if cond.kind == "chip":
        fam = family(snap)
        return None if fam is None else fam == cond.name
    if cond.kind == "env":
        text = (env(snap, cond.name) or "").strip()  # "" is unset, as `NAME=` in a condition
        if not text and not env_unset(snap, cond.name):
            return None
        want = cond.arg.strip()
        if nocase_env:
            text, want = text.upper(), want.upper()
        return (text == want) == (cond.op == "=")
    got = cann(snap) if cond.kind == "cann" else driver(snap)
    return None if got is None else ascend_satisfies(got[1], cond.arg)


def applies(rule: Guidance, snap: Snapshot) -> bool:
    """Every `when` is known to hold, and one `when_any` (when there are any); no `unless` is known to hold (an
    exception the snapshot does not show is named in the fix, not assumed)."""
    def h(c: Cond) -> bool | None:
        return holds(c, snap, rule.nocase_env)

    if not all(h(c) is True for c in rule.when):
        return False
    if rule.when_any and not any(h(c) is True for c in rule.when_any):
        return False
    return not any(h(c) is True for c in rule.unless)


@check("env-guidance", "env", findings=("env-value-against-guidance",))
def env_guidance(ctx: CheckContext) -> Iterator[Finding]:
    """No variable holds a value its own upstream says breaks the run in this setting."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    from doctor.knowledge.coverage import env_guidance_names

    names = env_guidance_names()
    if names is not None and not any(env(snap, n) for n in names):
        skip("none of the variables the table of guidance judges is set")
    from doctor.knowledge.env_guidance import load

    for rule in load().rules:
        value = env(snap, rule.var)
        if value is None or not value.strip() or not rule.triggered(value) or not applies(rule, snap):
            continue
        held = [c.text for c in rule.when] + [c.text for c in rule.when_any if holds(c, snap, rule.nocase_env) is True]
        detail = f"Upstream: \"{rule.quote}\"."
        if rule.needs:
            detail += f" This holds when the run also uses {rule.needs}, which the snapshot does not record."
        yield finding(
            "env-value-against-guidance", rule.severity, rule.components,
            f"{rule.var}={value}: {rule.summary}",
            detail=detail,
            evidence={"variable": rule.var, "value": value, "rule": rule.id, "effect": rule.effect,
                      "conditions": held, "unless": [c.text for c in rule.unless], "needs": rule.needs,
                      "read_at": list(rule.read_at)},
            fix=rule.fix, source=rule.source)
