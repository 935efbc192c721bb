"""The facts a bug report states, read into a partial snapshot (`doctor check --from-report FILE`).

A report on the Ascend trackers states its environment in the few forms the trackers' templates ask for, and a
maintainer triaging it checks those by eye against the compatibility tables. Read them into a doctor.snapshot/1
document and `doctor check` judges the same facts with its rules (every rule already treats a fact a partial
snapshot lacks as unknown, never as absent). The forms read, each from its own source:
- the collect_env report of torch (`python -m torch.utils.collect_env`) and of vLLM / vllm-ascend (their
  `collect_env.py`, which vllm-ascend's bug template asks for): `PyTorch version:`, `Python version:`,
  `Python platform:`, `Libc version:`, `OS:`, lscpu's `Architecture:`, `vLLM Version:`, `vLLM Ascend Version:`,
  the `[pip3] name==version` / `[conda] name version ...` library lines and the `ENV Variables:` block;
- `npu-smi info`, read by the same parser as the live probe (doctor.probes.npu_smi.parse_info);
- the CANN toolkit's ascend_toolkit_install.info (`package_name=Ascend-cann-toolkit` then `version=...`), which
  vllm-ascend's collect_env prints under `CANN:`; the driver's version.info (`Version=...`) after a line naming it;
- `pip freeze` (`name==version`) and `pip list` (a `Package  Version` table, or its rows alone as `pip list | grep`
  prints them: a name, column padding, a version);
- a line that is only `name: version` / `name version` / `name==version` for the stack's main names (torch_npu,
  vllm-ascend, CANN, driver, Python, ...), as reports write them in prose lists;
- `NAME=value` / `export NAME=value` lines of the variables the stack reads (HCCL_*, ASCEND_*, VLLM_*, ...).

Every fact keeps the line it was read from, so a finding can be traced to the report. A fact stated twice with
different values (two pasted environments, "works on 2.5.1, fails on 2.6.0") is left out and named as a
conflict: the doctor does not pick one. Version strings must parse with the project's version types (CANN and
the driver are not PEP 440). Values of secret-named variables are redacted. Pure: text in, facts out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from doctor.snapshot._base import normalize_name
from doctor.snapshot.redact import redact_value

SCHEMA = "doctor.snapshot/1"
_ARCHES = ("x86_64", "aarch64")
_NOT_COLLECTED = ("n/a", "none", "could not collect", "unknown", "not found", "not installed", "")


@dataclass(frozen=True)
class Fact:
    """One stated fact: where it goes in the snapshot (`key`), its value, and the report line (1-based)."""

    key: str  # "python.version", "host.arch", "host.libc", "host.os", "packages.<name>", "ascend.toolkit",
    # "ascend.kernels", "ascend.driver", "ascend.npu_smi", "ascend.devices", "env.<NAME>"
    value: Any
    line: int
    text: str


@dataclass(frozen=True)
class Stated:
    """What a report states: the facts kept (one per key), and the keys stated with different values."""

    facts: tuple[Fact, ...]
    conflicts: tuple[tuple[Fact, ...], ...] = field(default=())

    def document(self) -> dict[str, Any]:
        """The doctor.snapshot/1 document of the kept facts (partial: no `complete`, so nothing is 'absent')."""
        doc: dict[str, Any] = {"schema": SCHEMA}
        for f in self.facts:
            section, _, name = f.key.partition(".")
            if section == "python":
                doc.setdefault("python", {})["version"] = f.value
            elif section == "host":
                doc.setdefault("host", {})[name] = f.value
            elif section == "packages":
                doc.setdefault("packages", {})[name] = {"version": f.value}
            elif section == "env":
                doc.setdefault("env", {})[name] = f.value
            elif section == "ascend":
                asc = doc.setdefault("ascend", {})
                if name in ("npu_smi", "devices"):
                    asc[name] = f.value
                else:
                    asc[name] = {"version": f.value}
        return doc

    def described(self, everything: bool = False) -> list[str]:
        """`name value (line N)` for each fact, in report order: what a user checks the reading against. Without
        `everything`, only the stack's own packages are named and the rest (a whole `pip list`) counted."""
        out, others, env = [], 0, 0
        for f in sorted(self.facts, key=lambda f: f.line):
            section, _, name = f.key.partition(".")
            if f.key == "ascend.devices":
                chips = sorted({str(d.get("chip")) for d in f.value if d.get("chip")})
                out.append(f"{len(f.value)} NPU(s){' ' + '/'.join(chips) if chips else ''} (line {f.line})")
            elif f.key == "ascend.npu_smi":
                out.append(f"npu-smi {f.value.get('version')} (line {f.line})")
            elif section == "packages" and not everything and name not in _NAMED_PACKAGES:
                others += 1
            elif section == "env" and not everything:
                env += 1
            else:
                label = {"python.version": "Python", "ascend.toolkit": "CANN", "ascend.kernels": "CANN kernels",
                         "ascend.driver": "driver", "ascend.firmware": "firmware"}.get(f.key, name)
                out.append(f"{label} {f.value} (line {f.line})")
        if others:
            out.append(f"{others} other package(s)")
        if env:
            out.append(f"{env} variable(s)")
        return out


# -- the readers: each yields Facts from the report's lines ------------------------------------------------------

def _clean(text: str) -> str:
    return text.strip().strip("`").strip()


def _pkg_version(text: str) -> str | None:
    """A package version as stated: `v0.9.1` -> 0.9.1, `0.11.0rc1 (git sha: 1a2b3c4)` -> 0.11.0rc1; None unless it
    parses as one (doctor.knowledge.versions.parse_pkg_version)."""
    from doctor.knowledge.versions import parse_pkg_version

    t = _clean(text)
    t = re.sub(r"\s*\(.*$", "", t)
    if t[:1] in ("v", "V") and t[1:2].isdigit():
        t = t[1:]
    if t.lower() in _NOT_COLLECTED or parse_pkg_version(t) is None:
        return None
    return t


def _ascend_version(text: str, kind: str) -> str | None:
    from doctor.knowledge.versions import CannVersion, DriverVersion, InvalidVersion

    t = _clean(text)
    try:
        (CannVersion if kind == "cann" else DriverVersion)(t)
    except InvalidVersion:
        return None
    return t


_COLLECT_ENV = (
    (re.compile(r"^PyTorch version\s*:\s*(.+)$"), "torch"),
    (re.compile(r"^vLLM Version\s*:\s*(.+)$"), "vllm"),
    (re.compile(r"^vLLM Ascend Version\s*:\s*(.+)$"), "vllm-ascend"),
)
_PY_VERSION = re.compile(r"^Python version\s*:\s*(\d+\.\d+(?:\.\d+)?)\b")
_PY_PLATFORM = re.compile(r"^Python platform\s*:\s*(\S+)")
_LIBC = re.compile(r"^Libc version\s*:\s*glibc-(\d+\.\d+)\b")
_OS = re.compile(r"^OS\s*:\s*(.+?)\s*(?:\((x86_64|aarch64)\))?\s*$")
_LSCPU_ARCH = re.compile(r"^Architecture\s*:\s*(x86_64|aarch64)\s*$")
_LIB_LINE = re.compile(r"^\[(?:pip3?|conda)\]\s+([A-Za-z0-9][A-Za-z0-9._-]*)(?:==|\s+)(\S+)")


def _collect_env(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        for rx, name in _COLLECT_ENV:
            m = rx.match(line)
            if m and (v := _pkg_version(m[1])):
                yield Fact(f"packages.{name}", v, i, line)
        if m := _PY_VERSION.match(line):
            yield Fact("python.version", m[1], i, line)
        elif m := _PY_PLATFORM.match(line):
            plat = m[1]
            head, _, libc = plat.partition("-with-")
            arch = head.rsplit("-", 1)[-1]
            if arch in _ARCHES:
                yield Fact("host.arch", arch, i, line)
            if g := re.fullmatch(r"glibc(\d+\.\d+)", libc):
                yield Fact("host.libc", f"glibc {g[1]}", i, line)
        elif m := _LIBC.match(line):
            yield Fact("host.libc", f"glibc {m[1]}", i, line)
        elif (m := _OS.match(line)) and m[1].lower() not in _NOT_COLLECTED:
            yield Fact("host.os", m[1], i, line)
            if m[2]:
                yield Fact("host.arch", m[2], i, line)
        elif m := _LSCPU_ARCH.match(line):
            yield Fact("host.arch", m[1], i, line)
        elif (m := _LIB_LINE.match(line)) and (v := _pkg_version(m[2])):
            yield Fact(f"packages.{normalize_name(m[1])}", v, i, line)


_FREEZE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*$")
_LIST_HEAD = re.compile(r"^Package\s+Version\b")
_LIST_RULE = re.compile(r"^-{3,}\s+-{3,}")
_LIST_ROW = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s+(\S+)(?:\s+\S.*)?$")
# `pip list | grep torch` keeps no header: a name, two or more spaces of column padding, a version, nothing else
_GREPPED_ROW = re.compile(r"^([A-Za-z][A-Za-z0-9._-]*)\s{2,}(\d[^\s]*)$")


def _pip(lines: list[str]) -> Iterator[Fact]:
    in_list = False
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if _LIST_HEAD.match(line):
            in_list = False
            continue
        if _LIST_RULE.match(line):
            in_list = True
            continue
        if in_list:
            m = _LIST_ROW.match(line)
            if m and (v := _pkg_version(m[2])):
                yield Fact(f"packages.{normalize_name(m[1])}", v, i, line)
                continue
            in_list = False
        if (m := _FREEZE.match(line) or _GREPPED_ROW.match(line)) and (v := _pkg_version(m[2])):
            name = normalize_name(m[1])
            if name != "python":
                yield Fact(f"packages.{name}", v, i, line)
            elif re.fullmatch(r"3\.\d+(?:\.\d+)?", v):  # `python==3.11` states the interpreter
                yield Fact("python.version", v, i, line)


# ascend_toolkit_install.info and its siblings: `package_name=Ascend-cann-<part>[-<soc>]`, then `version=...`
_PACKAGE_NAME = re.compile(r"^package_name\s*=\s*Ascend-cann-(toolkit|kernels)\b", re.I)
_VERSION_KV = re.compile(r"^version\s*=\s*(\S+)\s*$", re.I)
_DRIVER_VERSION = re.compile(r"^Version\s*=\s*(\S+)\s*$")


def _ascend_files(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        m = _PACKAGE_NAME.match(line)
        if m:
            part = m[1].lower()
            for j in range(i, min(i + 4, len(lines))):
                v = _VERSION_KV.match(lines[j].strip())
                if v and (ver := _ascend_version(v[1], "cann")):
                    yield Fact(f"ascend.{part}", ver, j + 1, lines[j].strip())
                    break
            continue
        d = _DRIVER_VERSION.match(line)
        if d and i > 1:
            before = " ".join(x.lower() for x in lines[max(0, i - 3):i - 1])
            if "driver" in before and "firmware" not in before and (ver := _ascend_version(d[1], "driver")):
                yield Fact("ascend.driver", ver, i, line)


def _npu_smi(lines: list[str]) -> Iterator[Fact]:
    """Each `npu-smi info` table (its header line and the table lines that follow), read by the live parser."""
    from doctor.probes.npu_smi import parse_info

    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if "npu-smi" in line.lower() and line.startswith("|") and "version" in line.lower():
            start = i
            j = i + 1
            while j < len(lines) and lines[j].strip()[:1] in ("|", "+"):
                j += 1
            block = "\n".join(lines[max(0, start - 1):j])
            info = parse_info(block)
            if info.get("version"):
                yield Fact("ascend.npu_smi", {"status": "ok", "version": info["version"]}, start + 1, line)
            devices = [{k: d[k] for k in ("id", "chip", "health", "hbm_total_mb", "hbm_used_mb") if d.get(k) is not None}
                       for d in info.get("devices") or []]
            if devices:
                yield Fact("ascend.devices", devices, start + 1, line)
            i = j
            continue
        i += 1


# `name: version` alone on a line (a report's prose list); the stack's names only, so a sentence is never read
_NAMES = {
    "cann": "ascend.toolkit", "cann-toolkit": "ascend.toolkit", "toolkit": "ascend.toolkit",
    "driver": "ascend.driver", "npu-driver": "ascend.driver", "hdk": "ascend.driver", "驱动": "ascend.driver",
    "firmware": "ascend.firmware", "固件": "ascend.firmware",
    "python": "python.version",
    "torch": "packages.torch", "pytorch": "packages.torch", "torch-npu": "packages.torch-npu",
    "vllm": "packages.vllm", "vllm-ascend": "packages.vllm-ascend", "verl": "packages.verl",
    "mindspeed": "packages.mindspeed", "megatron-core": "packages.megatron-core", "transformers": "packages.transformers",
    "ray": "packages.ray", "triton-ascend": "packages.triton-ascend", "numpy": "packages.numpy",
    "mbridge": "packages.mbridge", "tensordict": "packages.tensordict", "torchvision": "packages.torchvision",
}
_NAMED_PACKAGES = frozenset(k.partition(".")[2] for k in _NAMES.values() if k.startswith("packages."))
# (Ascend reports are often written in Chinese: `CANN版本：8.1.RC1`, `驱动版本: 24.1.rc3`, with a full-width colon)
_NAMED = re.compile(r"^[-*•]?\s*(?P<name>[A-Za-z驱动固件][A-Za-z _.驱动固件-]*?)(?:\s+version|\s*版本)?\s*(?::|：|==|=|\s)\s*"
                    r"(?P<ver>v?\d[^\s,;，；]*)\s*$", re.I)


def _named(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        m = _NAMED.match(line)
        if not m:
            continue
        key = _NAMES.get(normalize_name(re.sub(r"\s+", "-", m["name"].strip())))
        if key is None:
            continue
        if key.startswith("ascend."):
            ver = _ascend_version(m["ver"], "cann" if key == "ascend.toolkit" else "driver") if key != "ascend.firmware" \
                else (m["ver"] if re.fullmatch(r"\d+(?:\.\d+){2,4}", m["ver"]) else None)
        elif key == "python.version":
            ver = m["ver"] if re.fullmatch(r"3\.\d+(?:\.\d+)?", m["ver"]) else None
        else:
            ver = _pkg_version(m["ver"])
        if ver:
            yield Fact(key, ver, i, line)


# the variables the stack reads, by prefix (CANN/HCCL, torch / torch_npu, vLLM / vllm-ascend, Ray, torch.distributed)
_ENV_PREFIXES = ("ASCEND_", "HCCL_", "ACL_", "ATB_", "ASDOPS_", "TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF", "INF_NAN_MODE",
                 "PYTORCH_", "TORCH_", "VLLM_", "RAY_", "GLOO_", "TP_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT",
                 "WORLD_SIZE", "NPU_", "LCCL_", "MINDSPEED_", "OMP_NUM_THREADS")
_ENV_LINE = re.compile(r"^(?:export\s+)?([A-Z][A-Z0-9_]*)=(.*)$")


def _env(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        m = _ENV_LINE.match(line)
        if not m or not m[1].startswith(_ENV_PREFIXES):
            continue
        value = m[2].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if "$" in value or "`" in value:  # a shell expansion states no value
            continue
        yield Fact(f"env.{m[1]}", redact_value(m[1], value), i, line)


_READERS = (_collect_env, _pip, _ascend_files, _npu_smi, _named, _env)


def read_stated(text: str) -> Stated:
    """The facts `text` states, first statement of each key kept; a key stated with two values is a conflict."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    by_key: dict[str, list[Fact]] = {}
    for reader in _READERS:
        for f in reader(lines):
            by_key.setdefault(f.key, []).append(f)
    kept: list[Fact] = []
    conflicts: list[tuple[Fact, ...]] = []
    for _key, facts in by_key.items():
        values: list[Fact] = []
        for f in sorted(facts, key=lambda f: f.line):
            if not any(_same(f.value, v.value) for v in values):
                values.append(f)
        if len(values) == 1:
            kept.append(min(facts, key=lambda f: f.line))
        else:
            conflicts.append(tuple(values))
    return Stated(tuple(sorted(kept, key=lambda f: (f.line, f.key))), tuple(conflicts))


def _same(a: Any, b: Any) -> bool:
    """Two statements agree: equal, or versions equal as the project's types compare them (2.5.1 == v2.5.1)."""
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        from doctor.knowledge.versions import parse_pkg_version

        va, vb = parse_pkg_version(a), parse_pkg_version(b)
        return va is not None and va == vb
    return False
