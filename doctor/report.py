"""The result types every command returns: findings, check results and the report (`doctor.report/1`).

Commands build these; only `doctor.render` turns them into text, JSON or JUnit. Keeping results as data
is what lets the same findings feed the console, `--json`, `--junit` and the cluster table.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "doctor.report/1"

COMPONENTS = frozenset(
    """system python cann kernels nnal driver firmware npu torch torch-npu torchvision vllm vllm-ascend triton
    triton-ascend mindspeed megatron mbridge transformer-engine verl transformers numpy ray hccl network env
    config model cluster""".split()
)


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class CheckStatus(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    CRASH = "crash"

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> CheckStatus:
        """The status of a check that ran and found these: fail on an error, warn on a warning, else pass."""
        worst = max((f.severity.rank for f in findings), default=-1)
        return {2: cls.FAIL, 1: cls.WARN}.get(worst, cls.PASS)

    @property
    def rank(self) -> int:
        """Severity rank of the status (2 fail/crash, 1 warn, 0 pass, -1 skip): what an area header shows."""
        return {"fail": 2, "crash": 2, "warn": 1, "pass": 0}.get(self.value, -1)


@dataclass(frozen=True)
class Fix:
    """What to do about a finding: a sentence, and the commands that do it when there are any."""

    text: str
    commands: tuple[str, ...] = ()
    # the packages its pip line would take torch for, in a target with none (doctor.checks.torch_first)
    torch_first: tuple[str, ...] = ()
    # the installed releases pinned on its pip line so pip keeps them (`torch==2.9.0`; doctor.checks.torch_first)
    kept: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"text": self.text, "commands": list(self.commands)}
        if self.torch_first:
            d["torch_first"] = list(self.torch_first)
        if self.kept:
            d["kept"] = list(self.kept)
        return d


@dataclass(frozen=True)
class Finding:
    """One thing the user should know, with the change that fixes it.

    `components[0]` is the component to change. `source` names the upstream doc, code or issue the rule
    comes from; it is shown under `-v` and kept in JSON so every verdict can be traced.
    """

    id: str
    severity: Severity
    components: tuple[str, ...]
    title: str
    detail: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: Fix | None = None
    key: str | None = None
    node: str | None = None
    source: str | None = None
    check: str | None = None  # id of the check that produced it (set by the check runner)

    def __post_init__(self) -> None:
        bad = [c for c in self.components if c not in COMPONENTS]
        if bad:
            raise ValueError(f"finding {self.id}: unknown component(s) {bad}")
        if not self.components:
            raise ValueError(f"finding {self.id}: needs at least one component")
        if not isinstance(self.severity, Severity):
            object.__setattr__(self, "severity", Severity(self.severity))

    def with_node(self, node: str | None) -> Finding:
        from dataclasses import replace

        return replace(self, node=node)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "severity": self.severity.value,
            "components": list(self.components),
            "title": self.title,
            "detail": self.detail,
            "evidence": _jsonable(self.evidence),
            "fix": self.fix.to_dict() if self.fix else None,
            "key": self.key,
            "node": self.node,
        }
        if self.source:
            d["source"] = self.source
        if self.check:
            d["check"] = self.check
        return d


def finding(
    id: str,
    severity: str | Severity,
    components: str | tuple[str, ...] | list[str],
    title: str,
    *,
    detail: str = "",
    evidence: dict[str, Any] | None = None,
    fix: str | None = None,
    commands: tuple[str, ...] | list[str] = (),
    key: str | None = None,
    node: str | None = None,
    source: str | None = None,
) -> Finding:
    """Short constructor used by checks, so a rule reads like the sentence it reports."""
    comps = (components,) if isinstance(components, str) else tuple(components)
    return Finding(
        id=id,
        severity=Severity(severity),
        components=comps,
        title=title,
        detail=detail,
        evidence=dict(evidence or {}),
        fix=Fix(fix, tuple(commands)) if fix else None,
        key=key,
        node=node,
        source=source,
    )


@dataclass(frozen=True)
class CheckResult:
    """One check: its status, how long it took, why it was skipped and (if it crashed) the traceback."""

    id: str
    area: str
    status: CheckStatus
    seconds: float = 0.0
    node: str | None = None
    traceback: str | None = None
    reason: str | None = None  # why a skipped check did not look

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "area": self.area, "status": self.status.value, "seconds": round(self.seconds, 6)}
        if self.node is not None:
            d["node"] = self.node
        if self.reason:
            d["reason"] = self.reason
        if self.traceback:
            d["traceback"] = self.traceback
        return d


@dataclass
class Report:
    """What a command returns. `extra` holds command-specific top-level fields (plan, metrics, log ...)."""

    command: str
    findings: list[Finding] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    profile: dict[str, Any] | None = None
    nodes: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # True when the doctor itself failed (a crashed check, a run that could not start): exit 2.
    internal_error: bool = False

    @property
    def summary(self) -> dict[str, int]:
        s = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            s[f.severity.value] += 1
        return s

    @property
    def status(self) -> str:
        s = self.summary
        if s["error"]:
            return "error"
        if s["warning"]:
            return "warning"
        return "ok"

    def exit_code(self, strict: bool = False) -> int:
        """0 = no error findings; 1 = an error (or a warning under --strict); 2 = the doctor failed."""
        if self.internal_error or any(c.status is CheckStatus.CRASH for c in self.checks):
            return 2
        s = self.summary
        if s["error"] or (strict and s["warning"]):
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema": SCHEMA,
            "command": self.command,
            "status": self.status,
            "summary": self.summary,
            "findings": [f.to_dict() for f in sorted_findings(self.findings)],
            "checks": [c.to_dict() for c in self.checks],
        }
        if self.profile is not None:
            d["profile"] = self.profile
        if self.nodes is not None:
            d["nodes"] = self.nodes
        for k, v in self.extra.items():
            d[k] = _jsonable(v)
        return d


def short_name(node: str) -> str:
    """`name/<56-hex Ray node id>` -> `name/<first 8>` for titles, tables and the lines that tag a finding with its
    node; evidence and --json keep full names."""
    head, sep, tail = node.rpartition("/")
    if sep and len(tail) > 12 and all(c in "0123456789abcdef" for c in tail.lower()):
        return f"{head}/{tail[:8]}"
    return node


def first_few(items: Sequence[str], n: int, sep: str = ", ") -> str:
    """The first `n` of `items` joined by `sep`, with " …" when more were left out: titles and details name a few
    and keep every one in evidence, so a finding stays one line wide however many keys it folds."""
    return sep.join(list(items)[:n]) + (" …" if len(items) > n else "")


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then info; stable within a severity (checks order their own)."""
    return sorted(findings, key=lambda f: -f.severity.rank)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return str(value)


def failure_report(command: str, finding_id: str, message: str, *, fix: str) -> Report:
    """The one report `--json` prints when a command could not do its job (exit 2): a single error finding
    with the message (which names the flag, file or path) and what to do."""
    f = finding(finding_id, "error", ("system",), message, evidence={"message": message}, fix=fix)
    return Report(command=command, findings=[f], internal_error=True)
