"""The mined corpus of real failure reports (tests/corpus/*.toml): loading, the fixed split, the scoring.

Each `[[report]]` is one public thread (or documentation entry) that names the cause of a failure. The split is
fixed by a hash of the report id, so adding reports never moves old ones between halves:

    half(id) = "fit" if sha256(id)[0] is even else "held-out"

Signatures (`profiles/signatures.toml`) and check rules are written from the fitting half only; the held-out half
is scored with the same rule as the public cases: a finding at the expected severity or worse whose first or
second component is one of the expected components.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
RANK = {"info": 0, "warning": 1, "error": 2}
# The broad categories a report belongs to (the class of failure, not the product that showed it).
CATEGORIES = (
    "library-missing", "package-missing", "version-mismatch", "install-build", "env-setup", "device", "memory",
    "communication", "config", "operator", "user-code", "upstream-bug", "multiprocessing", "download",
    "benign-noise", "hang",
)
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_FIELDS = {"id", "url", "category", "components", "severity", "log", "env", "cause", "fix", "snapshot", "check"}


@dataclass(frozen=True)
class Report:
    id: str
    tracker: str  # the corpus file it lives in
    url: str
    category: str
    components: tuple[str, ...]
    severity: str
    log: str | None
    env: dict[str, Any]
    cause: str
    fix: str
    snapshot: dict[str, Any] | None = None
    check_components: tuple[str, ...] = ()
    check_severity: str = "error"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def half(self) -> str:
        return half(self.id)

    def snapshot_document(self) -> dict[str, Any] | None:
        if self.snapshot is None:
            return None
        return {"schema": "doctor.snapshot/1", **self.snapshot}


def half(report_id: str) -> str:
    return "fit" if hashlib.sha256(report_id.encode()).digest()[0] % 2 == 0 else "held-out"


def load(folder: Path = HERE) -> list[Report]:
    out: list[Report] = []
    for path in sorted(folder.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for entry in data.get("report", []):
            out.append(_report(entry, path.stem))
    return _unique(out)


def _unique(reports: list[Report]) -> list[Report]:
    """The reports, refused (ValueError naming the file and id) when two share an id."""
    seen: set[str] = set()
    for r in reports:
        if r.id in seen:
            raise ValueError(f"{r.tracker}.toml: duplicate report id {r.id!r}")
        seen.add(r.id)
    return reports


def load_file(path: Path) -> list[Report]:
    """The reports of one TOML file anywhere (e.g. tests/fresh/reports.toml), validated like the corpus's own
    files and checked for duplicate ids within the file; `load()` is unchanged and never reads such a file."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    return _unique([_report(entry, Path(path).stem) for entry in data.get("report", [])])


def _report(e: dict[str, Any], tracker: str) -> Report:
    where = f"{tracker}.toml report {e.get('id')!r}"
    unknown = set(e) - _FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
    for key in ("id", "url", "category", "components", "cause", "fix"):
        if not e.get(key):
            raise ValueError(f"{where}: missing {key}")
    if not _ID.match(e["id"]):
        raise ValueError(f"{where}: id must be kebab-case")
    if e["category"] not in CATEGORIES:
        raise ValueError(f"{where}: category {e['category']!r} is not one of {CATEGORIES}")
    if not str(e["url"]).startswith("https://"):
        raise ValueError(f"{where}: url must be an https:// address")
    _check_components(e, where)
    if not (e.get("log") or "").strip() and "snapshot" not in e:
        raise ValueError(f"{where}: a report needs its log lines, a snapshot, or both")
    check = e.get("check", {})
    if "snapshot" in e and not check.get("components"):
        raise ValueError(f"{where}: a snapshot needs [report.check] components")
    log = e.get("log")
    return Report(
        id=e["id"], tracker=tracker, url=e["url"], category=e["category"], components=tuple(e["components"]),
        severity=e.get("severity", "error"), log=log if log and log.strip() else None, env=dict(e.get("env", {})),
        cause=e["cause"], fix=e["fix"], snapshot=e.get("snapshot"),
        check_components=tuple(check.get("components", ())), check_severity=check.get("severity", "error"),
    )


def _check_components(e: dict[str, Any], where: str) -> None:
    from doctor.report import COMPONENTS

    for key, comps in (("components", e["components"]), ("check.components", e.get("check", {}).get("components", []))):
        bad = [c for c in comps if c not in COMPONENTS]
        if bad:
            raise ValueError(f"{where}: {key} {bad} are not in doctor.report.COMPONENTS")
    for key in ("severity",):
        if e.get(key, "error") not in RANK or e.get("check", {}).get(key, "error") not in RANK:
            raise ValueError(f"{where}: severity must be one of {sorted(RANK)}")


def hit(findings: list[Any], components: tuple[str, ...], severity: str) -> bool:
    """The public-case rule: some finding at `severity` or worse names an expected component first or second."""
    want = set(components)
    return any(RANK[f.severity.value] >= RANK[severity] and want & set(f.components[:2]) for f in findings)


def unread_keys(model: Any, path: str = "") -> list[str]:
    """The key paths of a loaded snapshot that the model does not read (what rides along in an `extra`): a fact a
    report's snapshot states under a key doctor.snapshot/1 does not have measures nothing, since no check sees it."""
    import dataclasses

    out: list[str] = []
    if dataclasses.is_dataclass(model):
        out += [f"{path}.{k}" for k in (getattr(model, "extra", None) or {})]
        for f in dataclasses.fields(model):
            if f.name != "extra":
                out += unread_keys(getattr(model, f.name), f"{path}.{f.name}")
    elif isinstance(model, dict):
        for k, v in model.items():
            out += unread_keys(v, f"{path}.{k}")
    elif isinstance(model, list):
        for i, v in enumerate(model):
            out += unread_keys(v, f"{path}[{i}]")
    return out
