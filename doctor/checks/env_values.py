"""Environment variables set to a value their reader refuses or silently misreads (profiles/env-values.toml).

Each variable in the table is judged against the release of its reader the snapshot holds (the CANN toolkit for
HCCL, the installed torch-npu / vllm-ascend): `env-value-invalid` when the reader refuses the value (HCCL fails
the collective with EI0001, torch_npu raises in TORCH_CHECK, vllm-ascend's int() raises ValueError),
`env-value-ignored` when it falls back to its default or reads the text as something else (torch_npu reads
TASK_QUEUE_ENABLE=true as 0). A variable outside the table, or a reader release outside the releases read, is not
judged; when the reader's version is unknown, only what every release read agrees on is reported. A reader a
complete snapshot says is not installed reads nothing. The variables other checks judge (network.py, env.py,
devices.py, vllm.py) take no row in the table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from doctor.checks.facts import absent, cann, env, env_known, env_unset, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot

_ON = frozenset({"true", "on", "yes", "y", "enable", "enabled"})
_OFF = frozenset({"false", "off", "no", "n", "disable", "disabled"})


def _reader_version(snap: Snapshot, version_of: str) -> tuple[str | None, bool]:
    """(the reader's version, whether the reader is known to be absent)."""
    if version_of == "cann":
        got = cann(snap)
        return (got[0] if got else None), snap.ascend_part("toolkit") is None
    return ver(snap, version_of), absent(snap, version_of)


def _suggest(name: str, value: str, verdict: object) -> str:
    """The export that says what the value meant, when that is clear; else the values the reader takes."""
    from doctor.knowledge.env_values import Verdict

    assert isinstance(verdict, Verdict)
    rule = verdict.row.rule
    key = verdict.row.key
    m = re.search(rf"{re.escape(key)}\s*:\s*([^,]*)", value) if key else None
    text = m.group(1) if m else value
    low = text.strip().lower()
    meant: str | None = None
    if rule.parse in ("text", "text-nocase"):
        word = "true" if low in _ON | {"1"} else ("false" if low in _OFF | {"0"} else low)
        meant = next((str(v) for v in rule.values if str(v).lower() in (low, word)), None)
    elif rule.parse == "affinity":
        meant = "1" if low in _ON else None
    elif rule.parse in ("strtol", "python-int", "digits"):
        one = 1 in rule.values or not rule.values
        meant = "1" if low in _ON and one else ("0" if low in _OFF and (0 in rule.values or not rule.values) else None)
        meant = meant if meant is not None and rule.takes(int(meant)) else None  # a port or a size is no switch
    if meant is not None and key:
        return f'export {name}="{value[:m.start(1)]}{meant}{value[m.end(1):]}"' if m else f"export {name}={meant}"
    if meant is not None:
        return f"export {name}={meant}"
    what = f"{key}: " if key else ""
    return f"Set {name} to a value its reader takes ({what}{verdict.accepts}), or unset it."


@check("env-values", "env", findings=("env-value-invalid", "env-value-ignored"))
def env_values(ctx: CheckContext) -> Iterator[Finding]:
    """Variables the stack reads hold a value their reader (HCCL, torch_npu, vllm-ascend, verl, MindSpeed) takes as written."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    from doctor.knowledge.coverage import env_variable_names

    wanted = env_variable_names()
    if wanted is not None and not any(n in wanted and env(snap, n) for n in snap.env):
        skip("none of the variables the table of values judges is set")
    from doctor.knowledge.env_values import judge, judge_unknown, load

    table = load()
    names = table.names()

    def other(n: str) -> str | None:
        return "" if env_unset(snap, n) else env(snap, n)

    for name in sorted(snap.env):
        value = env(snap, name)
        if name not in names or not value:
            continue
        for reader in table.readers_of(name):
            version, gone = _reader_version(snap, reader.version_of)
            if gone:
                continue
            if version is not None:
                verdict = judge(table, name, value, reader.name, version, other)
                where = f"{reader.name} {version}"
                releases: list[str] = [version]
            else:
                got = judge_unknown(table, name, value, reader.name, other)
                verdict = got[0] if got else None
                releases = list(got[1]) if got else []
                where = f"{reader.name}, every release read ({releases[0]} to {releases[-1]})" if got else ""
            if verdict is None:
                continue
            row = verdict.row
            yield finding(
                "env-value-invalid" if verdict.kind == "invalid" else "env-value-ignored", verdict.severity,
                (reader.name, "env"), f"{where}: {verdict.why}",
                detail=f"{reader.name} takes {verdict.accepts}. {row.does}. Read from {row.read_from}.",
                evidence={"variable": name, "value": value, "accepts": verdict.accepts, "reader": reader.name,
                          "release": version, "releases_read": releases, "read_from": row.read_from},
                fix=_suggest(name, value, verdict), source=row.source)
