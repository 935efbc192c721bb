"""Upstream guidance on environment values their reader accepts but that break a run in a stated setting:
profiles/env-guidance.toml.

profiles/env-values.toml says which values a reader refuses or misreads. This table holds the other half: values
the reader takes as written, which upstream says fail, hang, give wrong results or do nothing when something else
holds: a chip family (HCCL_OP_EXPANSION_MODE=AIV freezes vLLM Ascend on A2), another variable (HCCL_DETERMINISTIC
=strict with saturation mode), a package release (ASCEND_LAUNCH_BLOCKING=1 with vLLM Ascend's ACL graph). Each row
quotes its primary source (the package's code or docs at a tag, a versioned CANN page) and says what the run must
also do for the failure to happen when the snapshot cannot show it (`needs`: graph mode, sleep mode, a TP size).

Conditions are evaluated by the check (doctor/checks/env_guidance.py) with three answers: holds, does not hold,
unknown. A row fires only when every condition is known to hold: an unknown fact keeps it silent.

Pure parsing here; read and validated on first use (`load`), never at import; a malformed file is an InputError
naming the file and the key (exit 2).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from doctor.knowledge.chips import A2, A3, A5, GEN1, P310, P310B
from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import CannVersion, DriverVersion, ascend_satisfies, valid_specifier
from doctor.report import COMPONENTS
from doctor.tomlfile import read_toml

SCHEMA = "doctor.env-guidance/1"
FILE = "env-guidance.toml"
EFFECTS = ("fails", "hangs", "wrong-results", "no-effect", "slower", "memory")
SEVERITIES = ("error", "warning", "info")
FAMILIES = (A2, A3, A5, GEN1, P310, P310B)
_RULE = {"id", "var", "values", "nocase", "any_nonzero", "values_contain", "when", "when_any", "unless",
         "nocase_env", "needs", "effect", "severity", "components", "summary", "fix", "quote", "source", "read_at"}
_REQUIRED = ("id", "var", "effect", "severity", "components", "summary", "fix", "quote", "source", "read_at")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_DIST = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


class Cond(NamedTuple):
    """One condition: `kind` installed | chip | env | cann | driver. installed: `name` the distribution, `arg` a
    PEP 440 specifier or ""; chip: `name` the family; env: `name` the variable, `op` "=" or "!=", `arg` the text
    ("" with "=" means unset); cann / driver: `arg` clauses compared as Ascend versions. `text` is the row's text."""

    kind: str
    name: str
    op: str
    arg: str
    text: str


class Guidance(NamedTuple):
    id: str
    var: str
    values: tuple[str, ...]
    nocase: bool
    any_nonzero: bool
    contains: tuple[str, ...]
    when: tuple[Cond, ...]
    when_any: tuple[Cond, ...]
    unless: tuple[Cond, ...]
    nocase_env: bool
    needs: str | None
    effect: str
    severity: str
    components: tuple[str, ...]
    summary: str
    fix: str
    quote: str
    source: str
    read_at: tuple[str, ...]

    def triggered(self, value: str) -> bool:
        """Does the variable's value trip the row?"""
        text = value.strip()
        if self.values and (text.upper() if self.nocase else text) in self.values:
            return True
        if self.any_nonzero:
            try:
                return int(text) != 0
            except ValueError:
                return False  # not a number: the reader refuses it (env-values judges that)
        return any(c in value for c in self.contains)


class Table(NamedTuple):
    read: str
    rules: tuple[Guidance, ...]


def _cond(v: Validator, text: Any, path: str) -> Cond:
    s = v.req(text, path)
    kind, _, rest = s.partition(":")
    if kind == "installed":
        m = _DIST.match(rest)
        if not m:
            raise v.fail(path, f"installed: needs a distribution name, got {s!r}")
        spec = m.group(2).strip()
        if spec and not valid_specifier(spec):
            raise v.fail(path, f"not a version specifier: {spec!r}")
        return Cond(kind, m.group(1), "", spec, s)
    if kind == "chip":
        if rest not in FAMILIES:
            raise v.fail(path, f"chip family must be one of {', '.join(FAMILIES)}, got {rest!r}")
        return Cond(kind, rest, "", "", s)
    if kind == "env":
        op = "!=" if "!=" in rest else "="
        name, sep, arg = rest.partition(op)
        if not sep or not _NAME.match(name):
            raise v.fail(path, f'env: takes NAME=text, NAME= (unset) or NAME!=text, got {s!r}')
        return Cond(kind, name, op, arg, s)
    if kind in ("cann", "driver"):
        probe = (CannVersion if kind == "cann" else DriverVersion).try_parse("8.0.0" if kind == "cann" else "24.1.0")
        if probe is None or ascend_satisfies(probe, rest) is None:
            raise v.fail(path, f"{kind}: takes clauses such as >=9.0.0 or <23.0.0, got {s!r}")
        return Cond(kind, "", "", rest, s)
    raise v.fail(path, f"a condition is installed:, chip:, env:, cann: or driver:, got {s!r}")


def _conds(v: Validator, value: Any, path: str) -> tuple[Cond, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise v.fail(path, "must be an array of conditions")
    return tuple(_cond(v, x, f"{path}[{i}]") for i, x in enumerate(value))


def parse(data: object, source: str) -> Table:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "rule"}, "", required=("schema", "read", "rule"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["rule"], list):
        raise v.fail("rule", "must be an array of tables")
    rules: list[Guidance] = []
    seen: set[str] = set()
    for i, raw in enumerate(t["rule"]):
        p = f"rule[{i}]"
        r = v.keys(raw, _RULE, p, required=_REQUIRED)
        rid = v.req(r["id"], f"{p}.id")
        if not _ID.match(rid) or rid in seen:
            raise v.fail(f"{p}.id", f"must be a unique kebab-case name, got {rid!r}")
        seen.add(rid)
        var = v.req(r["var"], f"{p}.var")
        if not _NAME.match(var):
            raise v.fail(f"{p}.var", f"not an environment variable name: {var!r}")
        nocase = v.boolean(r.get("nocase"), f"{p}.nocase", False)
        values = tuple(x.upper() if nocase else x for x in v.strs(r.get("values"), f"{p}.values"))
        contains = v.strs(r.get("values_contain"), f"{p}.values_contain")
        any_nonzero = v.boolean(r.get("any_nonzero"), f"{p}.any_nonzero", False)
        if not (values or contains or any_nonzero):
            raise v.fail(p, "a rule needs values, values_contain or any_nonzero")
        effect = v.req(r["effect"], f"{p}.effect")
        if effect not in EFFECTS:
            raise v.fail(f"{p}.effect", f"must be one of {', '.join(EFFECTS)}")
        severity = v.req(r["severity"], f"{p}.severity")
        if severity not in SEVERITIES:
            raise v.fail(f"{p}.severity", f"must be one of {', '.join(SEVERITIES)}")
        comps = v.strs(r["components"], f"{p}.components")
        bad = [c for c in comps if c not in COMPONENTS]
        if not comps or bad:
            raise v.fail(f"{p}.components", f"must name components of doctor/report.py COMPONENTS, not {bad}")
        read_at = v.strs(r["read_at"], f"{p}.read_at")
        if not read_at:
            raise v.fail(f"{p}.read_at", "must list what was read")
        rules.append(Guidance(
            rid, var, values, nocase, any_nonzero, contains, _conds(v, r.get("when"), f"{p}.when"),
            _conds(v, r.get("when_any"), f"{p}.when_any"), _conds(v, r.get("unless"), f"{p}.unless"),
            v.boolean(r.get("nocase_env"), f"{p}.nocase_env", False), v.s(r.get("needs"), f"{p}.needs", optional=True),
            effect, severity, comps, v.req(r["summary"], f"{p}.summary"), v.req(r["fix"], f"{p}.fix"),
            v.req(r["quote"], f"{p}.quote"), v.sources(r["source"], f"{p}.source"), read_at))
    return Table(read, tuple(rules))


_TABLES: dict[str, Table] = {}


def load(path: str | None = None) -> Table:
    """The table in use (location.table_path: the knowledge directory's copy, else the packaged one), validated on
    first use."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "table of upstream guidance on environment values"), p)
    return _TABLES[p]
