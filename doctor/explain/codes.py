"""Error-code families: which component a CANN / HCCL / ACL / aclnn error code names (`profiles/error_codes.toml`).

A CANN code `E<module><4 digits>` carries the module that raised it in its second character (GE, FE, AI CPU,
Runtime, ACL, HCCL, HCCP, Driver, operator API, ...); 0000-8999 are user errors, 9000-9999 internal ones. A few HCCL
codes name a layer of their own (the RoCE / UB links, ranktables, ports) and are listed one by one. The numeric ACL
and aclnn return codes are ranges. The data file cites the documentation of each family; this module only reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from doctor.report import COMPONENTS
from doctor.tomlfile import read_toml

SCHEMA = "doctor.error_codes/1"
DEFAULT_CODES = Path(__file__).resolve().parent.parent / "profiles" / "error_codes.toml"
_CANN = re.compile(r"^E(?P<module>[0-9A-Z])(?P<num>\d{4})$")


@dataclass(frozen=True)
class CodeTable:
    modules: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str]]  # letter -> (module, user, internal, source)
    codes: dict[str, tuple[str, tuple[str, ...], str]]  # code -> (meaning, components, source)
    ranges: tuple[tuple[int, int, str, tuple[str, ...], str], ...]  # (low, high, meaning, components, source)


def owner_of_code(code: str, table: CodeTable | None = None) -> tuple[tuple[str, ...], str, str] | None:
    """(components, meaning, source URL) for an error code (`EJ0003`, `EZ9999`, `561103`); None if unknown."""
    t = table if table is not None else load_codes()
    if code in t.codes:
        meaning, comps, source = t.codes[code]
        return comps, meaning, source
    if m := _CANN.match(code):
        row = t.modules.get(m.group("module"))
        if row is None:
            return None
        module, user, internal, source = row
        inner = int(m.group("num")) >= 9000
        return (internal if inner else user), f"{module}, {'internal' if inner else 'user'} error", source
    if code.isdigit():
        n = int(code)
        # the narrowest range that holds the code: a header's single code before the family its list gives
        rows = [r for r in t.ranges if r[0] <= n <= r[1]]
        if rows:
            _, _, meaning, comps, source = min(rows, key=lambda r: r[1] - r[0])
            return comps, meaning, source
    return None


@lru_cache(maxsize=2)
def load_codes(path: str | None = None) -> CodeTable:
    """The table (validated: a defect is an InputError naming the file and key), read on the first code asked."""
    from doctor.knowledge.validate import Validator  # imports `packaging`: only when a code is attributed

    src = str(path or DEFAULT_CODES)
    data = read_toml(src, "error-code table")
    v = Validator(src)
    v.keys(data, {"schema", "sources", "cann_module", "code", "acl_range"}, "", required=("schema", "sources"))
    v.schema(data["schema"], SCHEMA)
    if not isinstance(data["sources"], dict):
        raise v.fail("sources", "must be a table of name = URL")
    sources = {k: v.url(u, f"sources.{k}", pinned=False) for k, u in data["sources"].items()}

    def rows(key: str) -> list[Any]:
        got = data.get(key, [])
        if not isinstance(got, list):
            raise v.fail(key, f"must be an array of tables ([[{key}]])")
        return got

    def comps(value: Any, path: str) -> tuple[str, ...]:
        out = v.strs(value, path)
        bad = [c for c in out if c not in COMPONENTS]
        if not out or bad:
            raise v.fail(path, f"must be components of doctor.report.COMPONENTS, got {list(out)}")
        return out

    def source(row: dict[str, Any], path: str) -> str:
        key = v.req(row.get("source"), f"{path}.source")
        if key not in sources:
            raise v.fail(f"{path}.source", f"names no entry of [sources]: {key!r}")
        return sources[key]

    modules = {}
    for i, row in enumerate(rows("cann_module")):
        p = f"cann_module[{i}]"
        v.keys(row, {"letter", "module", "user", "internal", "source"}, p, required=("letter", "module", "user",
                                                                                     "internal", "source"))
        letter = v.req(row["letter"], f"{p}.letter")
        if not re.fullmatch(r"[0-9A-Z]", letter) or letter in modules:
            raise v.fail(f"{p}.letter", "must be one new character 0-9 / A-Z")
        modules[letter] = (v.req(row["module"], f"{p}.module"), comps(row["user"], f"{p}.user"),
                           comps(row["internal"], f"{p}.internal"), source(row, p))
    codes = {}
    for i, row in enumerate(rows("code")):
        p = f"code[{i}]"
        v.keys(row, {"code", "meaning", "components", "source"}, p, required=("code", "meaning", "components", "source"))
        code = v.req(row["code"], f"{p}.code")
        if not _CANN.match(code) or code in codes:
            raise v.fail(f"{p}.code", "must be a new CANN code E<module><4 digits>")
        codes[code] = (v.req(row["meaning"], f"{p}.meaning"), comps(row["components"], f"{p}.components"),
                       source(row, p))
    ranges = []
    for i, row in enumerate(rows("acl_range")):
        p = f"acl_range[{i}]"
        v.keys(row, {"low", "high", "meaning", "components", "source"}, p,
               required=("low", "high", "meaning", "components", "source"))
        low, high = row["low"], row["high"]
        if not (isinstance(low, int) and isinstance(high, int) and 0 < low <= high):
            raise v.fail(p, "low and high must be integers, 0 < low <= high")
        ranges.append((low, high, v.req(row["meaning"], f"{p}.meaning"), comps(row["components"], f"{p}.components"),
                       source(row, p)))
    return CodeTable(modules, codes, tuple(sorted(ranges)))


# torch_npu's own codes ERR<submodule:2><code:3> (torch_npu/csrc/core/npu/NPUException.h: SubModule, ErrCode; the
# Python side, torch_npu/utils/_error_code.py, adds the UNKNOWN layer 99 and the application exception 999, which the
# error-code docs list too: docs/zh/user_guide/troubleshooting/error_code_description/error_code_information.md).
TORCH_NPU_CODES = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/"
                   "npu/NPUException.h#L58")
TORCH_NPU_PY_CODES = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/utils/"
                      "_error_code.py#L9")
_SUBMODULES = {0: "PTA", 1: "OPS", 2: "DIST", 3: "GRAPH", 4: "PROF", 99: "UNKNOWN"}
# ErrCode -> (meaning, components); DIST (the distributed layer) puts hccl first wherever the layer decides.
_ERRCODES: dict[int, tuple[str, tuple[str, ...]]] = {
    1: ("invalid parameter", ("config", "torch-npu")), 2: ("invalid type", ("config", "torch-npu")),
    3: ("invalid value", ("config", "torch-npu")), 4: ("invalid pointer", ("torch-npu", "model")),
    5: ("internal error", ("torch-npu", "cann")), 6: ("memory error", ("npu", "config")),
    7: ("not supported", ("torch-npu", "config")), 8: ("not found", ("env", "torch-npu")),
    9: ("unavailable", ("npu", "env")), 10: ("system call failed", ("system", "env")),
    11: ("timeout", ("npu", "network")), 12: ("permission denied", ("system", "env")),
    100: ("a call into CANN's ACL failed", ("cann", "torch-npu")), 200: ("a call into HCCL failed", ("hccl", "network")),
    300: ("a call into CANN's graph engine failed", ("cann", "torch-npu")),
    999: ("an exception of the application or a library it uses (printed before the code)", ("config", "python")),
}


def owner_of_npu_err(code: str) -> tuple[tuple[str, ...], str, str] | None:
    """(components, meaning, source) for torch_npu's `ERR02200`-style code; None for an unknown one."""
    m = re.fullmatch(r"ERR(\d\d)(\d{3})", code)
    if m is None:
        return None
    sub, num = _SUBMODULES.get(int(m.group(1))), int(m.group(2))
    if sub is None or num not in _ERRCODES:
        return None
    meaning, comps = _ERRCODES[num]
    if sub == "DIST" and comps[0] not in ("hccl", "config", "system"):
        comps = ("hccl", comps[0])
    python_only = sub == "UNKNOWN" or num == 999
    return comps, f"torch_npu {sub}: {meaning}", TORCH_NPU_PY_CODES if python_only else TORCH_NPU_CODES
