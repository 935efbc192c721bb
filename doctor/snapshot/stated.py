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
- a markdown table with a `Version` / `版本` column; the `llamafactory-cli env` / `transformers-cli env` block;
  `torch_npu.__version__` and the version printed under it; `uname` and the arch it printed; the device rows of an
  npu-smi table pasted without its header; `ls -l .../ascend-toolkit/latest` (links into `../<version>/`); CANN's
  installer file named on a label line; the vllm-ascend image tag (the project tags each image with the release it
  installs) on a label, `FROM` or `docker run|pull` line; the firmware `upgrade-tool ... --version` reports; the
  arch an OS / platform label names; a line listing only `name==version` pins and a chip, comma-separated;
  `python3 -m sglang.check_env`'s `Python:` and `NPU 0,1,...: <chip>` lines;
- `NAME=value` / `export NAME=value` lines of the variables the stack reads (HCCL_*, ASCEND_*, VLLM_*, LD_LIBRARY_PATH
  ...); `NAME=value command` / `NAME=value \\` prefixes are read for the run they start (the first word), never
  for an install or build command (`VLLM_TARGET_DEVICE=empty pip install .` is a build setting).

A markdown quote marker (`> `), a label's full-width brackets (`【Cann-Toolkit】:`), its bold (`**OS:**`), a note
before its colon (`Driver Version (from npu-smi info):`) and backticks around a whole value are dropped first. Install commands (`pip install x==1.0`, `wget ...run`) are never
read: they say what was asked for, and reports of failed installs are full of them. These forms were added from the
real-report tier (tests/snapshot/stated_tier.py), whose first run showed them missed.

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
                elif name == "chip":
                    asc.setdefault("devices", [{"chip": f.value}])  # a family, not a count: no id
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


_NOTE = re.compile(r"\s*\(.*$")


def _pkg_version(text: str) -> str | None:
    """A package version as stated: `v0.9.1` -> 0.9.1, `0.11.0rc1 (git sha: 1a2b3c4)` -> 0.11.0rc1; None unless it
    parses as one (doctor.knowledge.versions.parse_pkg_version)."""
    from doctor.knowledge.versions import parse_pkg_version

    t = _clean(text)
    if "(" in t:
        t = _NOTE.sub("", t)
    if t[:1] in ("v", "V") and t[1:2].isdigit():
        t = t[1:]
    if t.lower() in _NOT_COLLECTED or parse_pkg_version(t) is None:
        return None
    return t


def _ascend_version(text: str, kind: str) -> str | None:
    from doctor.knowledge.versions import CannVersion, DriverVersion, InvalidVersion

    t = _clean(re.sub(r"\s+\(.*$", "", _clean(text)))  # `8.5.0 (/usr/local/Ascend/cann-8.5.0)`: a note after it
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
# `python3 -m sglang.check_env` prints `Python: ` and sys.version (`3.11.15 (main, May 13 2026, ...) [GCC ...]`)
_PY_SYS_VERSION = re.compile(r"^Python\s*:\s*(3\.\d+\.\d+)\s+\((?:main|default)\b")
_PY_PLATFORM = re.compile(r"^Python platform\s*:\s*(\S+)")
_LIBC = re.compile(r"^Libc version\s*:\s*glibc-(\d+\.\d+)\b")
_OS = re.compile(r"^OS\s*:\s*(.+?)\s*(?:\((x86_64|aarch64)\))?\s*$")
_LSCPU_ARCH = re.compile(r"^Architecture\s*:\s*(x86_64|aarch64)\s*$")
_LIB_LINE = re.compile(r"^\[(?:pip3?|conda)\]\s+([A-Za-z0-9][A-Za-z0-9._-]*)(?:==|\s+)(\S+)")


def _platform(plat: str, i: int, line: str) -> Iterator[Fact]:
    """`platform.platform()` as collect_env and `transformers-cli env` print it:
    `Linux-5.15.0-25-generic-aarch64-with-glibc2.34` states the arch and the libc."""
    head, _, libc = plat.partition("-with-")
    arch = head.rsplit("-", 1)[-1]
    if arch in _ARCHES:
        yield Fact("host.arch", arch, i, line)
    if g := re.fullmatch(r"glibc(\d+\.\d+)", libc):
        yield Fact("host.libc", f"glibc {g[1]}", i, line)


def _collect_env(lines: list[str]) -> Iterator[Fact]:
    """collect_env's fields and library lines. Its `[pip3]` lines are `sys.executable -m pip list` (the interpreter
    that ran it, whose torch `PyTorch version` names) and its `[conda]` lines `$CONDA_EXE list` of the active conda
    environment, which may be another one (torch/utils/collect_env.py: get_pip_packages, get_conda_packages): when
    a `[conda]` line gives a name of those a version they do not, that list is another environment's and is not
    read."""
    own: dict[str, str] = {}
    conda: list[Fact] = []
    for f in _collect_env_lines(lines):
        if f.text.startswith("[conda]"):
            conda.append(f)
            continue
        if f.key.startswith("packages."):
            own.setdefault(f.key, f.value)
        yield f
    if not any(f.key in own and not _same(f.value, own[f.key]) for f in conda):
        yield from conda


def _collect_env_lines(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if ":" not in line and line[:1] != "[":
            continue  # every field below is `Label: value`; a library line starts `[pip3]` / `[conda]`
        for rx, name in _COLLECT_ENV:
            m = rx.match(line)
            if m and (v := _pkg_version(m[1])):
                yield Fact(f"packages.{name}", v, i, line)
        if m := _PY_VERSION.match(line) or _PY_SYS_VERSION.match(line):
            yield Fact("python.version", m[1], i, line)
        elif m := _PY_PLATFORM.match(line):
            yield from _platform(m[1], i, line)
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
_GREPPED_ROW = re.compile(r"^([A-Za-z][A-Za-z0-9._-]*)\s{2,}(\d[^\s]*)(?:\s{2,}/\S*)?$")  # + editable location


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
            if not _NAMES.get(name, "packages.").startswith(("packages.", "python.")):
                continue  # `CANN      8.1.RC1` in an aligned list (ms-swift#3594) is the toolkit, not a package
            if name != "python":
                yield Fact(f"packages.{name}", v, i, line)
            elif re.fullmatch(r"3\.\d+(?:\.\d+)?", v):  # `python==3.11` states the interpreter
                yield Fact("python.version", v, i, line)


# ascend_toolkit_install.info and its siblings: `package_name=Ascend-cann-<part>[-<soc>]`, then `version=...`
_PACKAGE_NAME = re.compile(r"^package_name\s*=\s*Ascend-cann-(toolkit|kernels)\b", re.I)
_VERSION_KV = re.compile(r"^version\s*=\s*(\S+)\s*$", re.I)
_DRIVER_VERSION = re.compile(r"^Version\s*=\s*(\S+)\s*$")


# `upgrade-tool --device_index -1 --component -1 --version` (the driver's tool): every component reports the
# firmware version it runs (`Get component version(6.4.12.1.241) succeed for deviceId(0), ...`, https://github.com/Ascend/pytorch/issues/10)
_UPGRADE_TOOL = re.compile(r"^Get component version\((\d+(?:\.\d+){2,4})\) succeed\b")


def _ascend_files(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if (u := _UPGRADE_TOOL.match(line)) and any("upgrade-tool" in x for x in lines[max(0, i - 12):i]):
            yield Fact("ascend.firmware", u[1], i, line)
            continue
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


# a device row of `npu-smi info`: `| 0     910B1   | OK   | ...`, `| 32768   310P3 | OK |`, `| 0  Ascend910 | OK |`
_SMI_ROW = re.compile(r"^\|\s*(\d+)\s+((?:Ascend)?(?:910|310|950)[A-Za-z0-9_-]*)\s*\|\s*"
                      r"(OK|Warning|Alarm|Critical|Abnormal|Unknown)\s*\|", re.I)


def _npu_smi(lines: list[str]) -> Iterator[Fact]:
    """Each `npu-smi info` table (its header line and the table lines that follow), read by the live parser; the
    device rows of a table pasted without its header give the chips alone."""
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if "npu-smi" in line.lower() and line.startswith("|") and "version" in line.lower():
            start = i
            j = i + 1
            while j < len(lines) and lines[j].strip()[:1] in ("|", "+"):
                j += 1
            from doctor.probes.npu_smi import parse_info  # imported here: a log with no table need not

            info = parse_info("\n".join(lines[max(0, start - 1):j]))
            if info.get("version"):
                yield Fact("ascend.npu_smi", {"status": "ok", "version": info["version"]}, start + 1, line)
            devices = [{k: d[k] for k in ("id", "chip", "health", "hbm_total_mb", "hbm_used_mb") if d.get(k) is not None}
                       for d in info.get("devices") or []]
            if devices:
                yield Fact("ascend.devices", devices, start + 1, line)
            i = j
            continue
        if _SMI_ROW.match(line):  # a table whose header the paste cut (a later comment, a page break)
            start, devices = i, []
            while i < len(lines) and lines[i].strip()[:1] in ("|", "+"):
                if r := _SMI_ROW.match(lines[i].strip()):
                    devices.append({"id": int(r[1]), "chip": r[2], "health": r[3]})
                i += 1
            yield Fact("ascend.devices", devices, start + 1, line)
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
    "llamafactory": "packages.llamafactory", "llama-factory": "packages.llamafactory", "ms-swift": "packages.ms-swift",
}
_NAMED_PACKAGES = frozenset(k.partition(".")[2] for k in _NAMES.values() if k.startswith("packages."))
# (Ascend reports are often written in Chinese: `CANN版本：8.1.RC1`, `驱动版本: 24.1.rc3`, with a full-width colon)
# (a name glued to its version, `cann7.0.0beta1` as ms-swift#1243 writes it, is the same statement)
_NAMED = re.compile(r"^[-*•]?\s*(?P<name>[A-Za-z驱动固件][A-Za-z _.驱动固件-]*?)(?:\s+version|\s*版本)?\s*(?::|：|==|=|\s)?\s*"
                    r"(?P<ver>v?\d[^\s,;，；]*)(?:\s+\([^()]*\))?\s*$", re.I)


# CANN's product name written before its version on a label (`- CANN Version: Ascend CANN Toolkit 8.0.RC3`,
# gpustack#755): skipped for the toolkit only, so `torch: Ascend 2.1.0` still states nothing
_CANN_PRODUCT = re.compile(r"([:：=]\s*)(?:Ascend[\s-]+)?CANN(?:[\s-]+Toolkit)?[\s-]+(?=v?\d)", re.I)


def _has_label_mark(line: str) -> bool:
    """Whether `line` holds a `:`, `：` or `=`, which every label pattern needs (cheaper to ask than to match)."""
    return ":" in line or "=" in line or "：" in line


def _named(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        m, bare = _NAMED.match(line), None
        if m is None:
            # the line without CANN's product name: only a label line naming CANN (in any case) can have one, and
            # asking that is cheaper than the search (it tries every offset of every line)
            if not (_has_label_mark(line) and "cann" in line.lower()):
                continue
            bare = _CANN_PRODUCT.sub(r"\1", line, count=1)
            if bare == line or (m := _NAMED.match(bare)) is None:
                continue
        key = _NAMES.get(normalize_name(re.sub(r"\s+", "-", m["name"].strip())))
        if bare is not None and key != "ascend.toolkit":
            continue
        if key is not None and (ver := _value(key, m["ver"])):
            yield Fact(key, ver, i, line)


def _value(key: str, text: str) -> str | None:
    """`text` as the value of `key`, or None unless it parses as that kind of version."""
    if key in ("ascend.toolkit", "ascend.kernels"):
        return _ascend_version(text, "cann")
    if key == "ascend.driver":
        return _ascend_version(text, "driver")
    if key == "ascend.firmware":
        return _clean(text) if re.fullmatch(r"\d+(?:\.\d+){2,4}", _clean(text)) else None
    if key == "python.version":
        return _clean(text) if re.fullmatch(r"3\.\d+(?:\.\d+)?", _clean(text)) else None
    return _pkg_version(text)


# a markdown table of versions (`| Item | Version |`, `| 组件 | 版本 |`): each row's first cell names the component
_VERSION_HEADS = ("version", "versions", "版本", "版本号")
_OS_NAMES = ("os", "system", "platform", "操作系统", "系统")
_CHIP_NAMES = ("npu", "chip", "hardware", "芯片", "硬件")


def _tables(lines: list[str]) -> Iterator[Fact]:
    col: int | None = None
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if not (line.startswith("|") and line.endswith("|") and len(line) > 2):
            col = None
            continue
        cells = [c.strip().strip("`*").strip() for c in line[1:-1].split("|")]
        if col is None:
            low = [c.lower() for c in cells]
            col = next((k for k, c in enumerate(low) if k > 0 and c in _VERSION_HEADS), None)
            continue
        if re.fullmatch(r"[\s:|-]+", line) or len(cells) <= col:
            continue
        name, value = normalize_name(re.sub(r"\s+", "-", cells[0])), cells[col]
        if name in _CHIP_NAMES:  # `| NPU | 8x Ascend 910B3 (npu-smi 26.0.rc1) |`: the chip, read as on a label line
            yield from _chip_label([f"NPU: {value}"], i, line)
            continue
        if name in _OS_NAMES:
            if a := re.search(r"(?<![A-Za-z0-9])(x86_64|aarch64)(?![A-Za-z0-9])", value):
                yield Fact("host.arch", a[1], i, line)
            continue
        key = _NAMES.get(name) or (f"packages.{name}" if re.fullmatch(r"[a-z][a-z0-9-]*", name) else None)
        if key is not None and (ver := _value(key, value)):
            yield Fact(key, ver, i, line)


# `transformers-cli env` / `llamafactory-cli env` (the templates of transformers and LLaMA-Factory): a block of
# `- Name version: X` items headed by `- `transformers` version: X` or `- `llamafactory` version: X`
_ENV_CMD_HEAD = re.compile(r"^[-*]\s*`?(?:llamafactory|transformers)`?\s+version\s*:", re.I)
_ENV_CMD_ITEM = re.compile(r"^[-*]\s*(?P<label>[^:]+?)\s*:\s*(?P<value>.*)$")
_ENV_CMD_VERSION = re.compile(r"`?(?P<name>[A-Za-z][\w.-]*)`?\s+version(?:\s*\([^)]*\))?", re.I)


def _env_command(lines: list[str]) -> Iterator[Fact]:
    i = 0
    while i < len(lines):
        if not _ENV_CMD_HEAD.match(lines[i].strip()):
            i += 1
            continue
        while i < len(lines) and (item := _ENV_CMD_ITEM.match(lines[i].strip())):
            label, value, line = item["label"].strip(), item["value"].strip(), lines[i].strip()
            i += 1
            if label.lower() == "platform":
                yield from _platform(value.split()[0] if value else "", i, line)
            elif m := _ENV_CMD_VERSION.fullmatch(label):
                name = normalize_name(m["name"])
                key = {"python": "python.version", "pytorch": "packages.torch", "cann": "ascend.toolkit"}.get(
                    name, f"packages.{name}")
                if ver := _value(key, re.sub(r"\s*\(.*$", "", value)):
                    yield Fact(key, ver, i, line)


# `torch_npu.__version__` (a REPL, `python -c "...print(torch_npu.__version__)"`) and the version on the next line
_DUNDER = re.compile(r"\b([A-Za-z_]\w*)\.__version__")
_DUNDER_END = re.compile(r"__version__\s*[)\"';]*\s*$")
# `uname -m` / `uname -a` / `uname -r` and the line it printed
_UNAME = re.compile(r"\buname(?:\s+-[a-z]+)*\s*$")
_ARCH_TOKEN = re.compile(r"(?<![A-Za-z0-9])(x86_64|aarch64)(?![A-Za-z0-9])")


def _printed(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines[:-1], 1):
        if "__version__" not in raw and "uname" not in raw:
            continue  # only a `...__version__` or `uname` line prints what the next line states (`in` is ~20x
            # cheaper than the searches below, which need one of these words: `\buname` scans every offset)
        line = raw.strip()
        dunder = _DUNDER_END.search(line)
        if not dunder and not _UNAME.search(line):
            continue
        nxt = next(((j, x.strip()) for j, x in enumerate(lines[i:i + 3], i + 1) if x.strip()), None)
        if nxt is None:
            continue
        j, out = nxt
        if dunder and (mods := _DUNDER.findall(line)):
            vals = [v.strip("'\"") for v in re.split(r"[\s,]+", out.strip("()[]")) if v]
            if len(vals) == len(mods):
                for mod, v in zip(mods, vals, strict=True):
                    name = normalize_name(mod)
                    if name == "sys" or not (ver := _pkg_version(v)):
                        continue
                    yield Fact(f"packages.{name}", ver, j, out)
        elif _UNAME.search(line) and (a := _ARCH_TOKEN.search(out)):
            yield Fact("host.arch", a[1], j, out)


# a label line naming CANN's installer: `CANN toolkit = Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run`, also under a
# Chinese label. The ideographs are matched case-sensitively (`(?-i:...)`): none has a case, and a range under re.I
# is compiled one character at a time with its case variants, ~2 ms of every run that imports this module.
_CJK = r"(?-i:[\u4e00-\u9fff])"
_INSTALLER = re.compile(rf"^[-*]?\s*(?:[A-Za-z]|{_CJK})(?:[\w -]|{_CJK}){{0,40}}?\s*[:：=]\s*\S*?Ascend-cann-(toolkit|kernels)"
                        r"(?:-\w+)?_(\d[^_\s]*)_linux(?:-(x86_64|aarch64))?\.run\s*$", re.I)
# vllm-ascend's images are tagged with the release they install (quay.io/ascend/vllm-ascend:v0.9.1rc1, -310p/-a3 variants);
# read on a label line (`Base image: ...`, `image: ...`, `IMAGE=...`), `FROM ...` or `docker run|pull ...`, never prose
_IMAGE_LINE = re.compile(r"^(?:[-*]\s*)?(?:FROM\s|docker\s+(?:run|pull|create)\b|[A-Za-z_\u4e00-\u9fff][\w \u4e00-\u9fff]{0,30}[:：=])")
# vllm-ascend's images name the chip they are built for: `vllm-ascend:v0.10.2rc1-a3`, `-310p` (A2 has no suffix)
_IMAGE_CHIP = re.compile(r"vllm-ascend:v?\d+\.\d+\.\d+\S*?-(a3|310p)(?:-[A-Za-z0-9.]+)*(?=[\s\"']|$)", re.I)
_IMAGE = re.compile(r"(?:^|[\s/=\"'])vllm-ascend:v?(\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)(?:-[A-Za-z0-9.]+)*(?=[\s\"']|$)")
# `ls -l .../ascend-toolkit/latest`: its links point into the installed version's directory
_LS_ENTRY = re.compile(r"^[dl-][rwxsStT-]{9}[.+@]?\s")
_LS_LINK = re.compile(r"->\s*(?:\.\./)?(\d[^/\s]*)(?:/|\s*$)")
_LS_ARCH = re.compile(r"->\s*(?:\.\./)?(x86_64|aarch64)-linux\b")


def _install_names(lines: list[str]) -> Iterator[Fact]:
    in_ls = False
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if _has_label_mark(line) and (m := _INSTALLER.match(line)):
            if ver := _ascend_version(m[2], "cann"):
                yield Fact(f"ascend.{m[1].lower()}", ver, i, line)
            if m[3]:
                yield Fact("host.arch", m[3], i, line)
        if "vllm-ascend:" in line and _IMAGE_LINE.match(line) and (m := _IMAGE.search(line)):
            yield Fact("packages.vllm-ascend", m[1], i, line)
        if "ascend-toolkit" in line and re.search(r"\bls\b.*ascend-toolkit", line):
            in_ls = True
            continue
        if in_ls and (_LS_ENTRY.match(line) or re.match(r"^(?:total|总用量)\s+\d+$", line)):
            if (v := _LS_LINK.search(line)) and (ver := _ascend_version(v[1], "cann")):
                yield Fact("ascend.toolkit", ver, i, line)
            elif a := _LS_ARCH.search(line):
                yield Fact("host.arch", a[1], i, line)
            continue
        in_ls = False


# The variables kept: those `doctor collect` records (doctor.probes.envvars.is_relevant: the prefixes and the names
# without one that torch_npu and vllm-ascend read), and a few prefixes reports show that the collector does not
# record. Never PATH: a snapshot whose env holds PATH reads as a whole environment, where a variable not listed is
# "not set" (Snapshot.env_is_full), and a report is never that.
_ENV_PREFIXES = ("ACL_", "ASDOPS_", "PYTORCH_", "NPU_", "LCCL_", "MINDSPEED_", "WORLD_SIZE", "INF_NAN_MODE")


def _kept(name: str) -> bool:
    from doctor.probes.envvars import is_relevant

    return name != "PATH" and (is_relevant(name) or name.startswith(_ENV_PREFIXES))


_ENV_LINE = re.compile(r"^(?:export\s+)?([A-Z][A-Z0-9_]*)=(.*)$")
# a path list a terminal wrapped: the next line goes on with no blank, no `=` and a `/` (vllm-ascend#1778's `env`)
_WRAPPED = re.compile(r"^[^\s=]*/[^\s=]*$")


# the commands that install or build: a variable set on one of them (`VLLM_TARGET_DEVICE=empty pip install .`,
# vllm-ascend#117) is a build setting, not the environment of the run the report is about
_BUILD_COMMANDS = frozenset({"pip", "pip3", "uv", "conda", "mamba", "git", "make", "cmake", "wget", "curl", "apt",
                             "apt-get", "yum", "dnf", "docker", "source", "cd", "ninja"})


def _is_build(words: list[str]) -> bool:
    """`pip install .`, `python setup.py ...`, `python -m pip ...`, `bash Ascend-cann-toolkit_....run --install`."""
    head = words[0].rsplit("/", 1)[-1]
    if head in _BUILD_COMMANDS:
        return True
    if re.fullmatch(r"python3?(?:\.\d+)?", head):
        return words[1:2] == ["setup.py"] or words[1:3] == ["-m", "pip"]
    return head in ("bash", "sh") and len(words) > 1 and words[1].endswith(".run")


def _prefixed_command(lines: list[str], i: int, rest: str) -> list[str]:
    """The words of the command a `NAME=value` prefix is set on: what follows on its line, or (after a `\\`
    continuation) the first line that is not another `NAME=value \\` prefix; empty if nothing follows."""
    if rest.strip() != "\\":
        return rest.split()
    for nxt in lines[i:i + 8]:
        t = nxt.strip().strip("`")
        if not (_ENV_LINE.match(t) and t.endswith("\\")):
            return t.split()
    return []


def _env(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        m = _ENV_LINE.match(line)
        if not m or not _kept(m[1]):
            continue
        value = m[2].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif re.search(r"\s", value):
            # `NAME=value command ...`: set for that one command, which is the run reported unless it installs
            value, _, rest = value.partition(" ")
            words = _prefixed_command(lines, i, rest)
            if not words or _is_build(words):
                continue
        if "$" in value or "`" in value:  # a shell expansion states no value
            continue
        if value.startswith("/") and ":" in value and len(line) >= 80:  # only a line as wide as a terminal wraps
            j = i
            while j < len(lines) and _WRAPPED.match(lines[j].strip()) and not _ENV_LINE.match(lines[j].strip()):
                value += lines[j].strip()
                j += 1
        yield Fact(f"env.{m[1]}", redact_value(m[1], value), i, line)


# An Ascend chip's name: 910* / 310* with whatever suffix (910B4-1 too), and 950 only as 950,
# 950PR / 950DT (and their _NNNN SoCs): a GPU or hardware label with `950M` is NVIDIA's GeForce 950M, not an A5
_CHIP_NAME = r"(?:(?:910|310)[A-Za-z0-9_]*(?:-1)?|950(?:(?:PR|DT)(?:_[A-Za-z0-9]+)?)?)"

# A chip named on a label line: `NPU: 910B2`, `npu 910B2`, `NPU type: Ascend910B`, `NPU型号：910B3`, `芯片: 310P3`
# (llamafactory-cli env prints `- NPU type: …`). It states the family, not how many NPUs: it becomes a device with
# no id, used only when no `npu-smi` table states the devices.
# (`- GPU: Huawei 910B`, gpustack#755: a GPU project's template has no NPU label; the vendor's name may come first)
# (`*   **Hardware:** Huawei Ascend 910B3 (8-card server)`, llama-box#48: a hardware label, a note after the chip)
# (`NPU 0,1,2,3: Ascend910_9362`, sglang.check_env, sglang#27920: the ids of a group of devices, not a count)
# (`- NPU: 8 x Ascend 910B4`, vllm-ascend#8746: a card count before the chip; still only the family is stated)
_CHIP_LABEL = re.compile(r"^[-*•]?\s*(?:npu(?:\s+\d+(?:,\d+)*)?|gpu|chip|device|soc|hardware|芯片|硬件|npu\s*卡?)\s*"
                         r"(?:type|model|name|型号|类型)?"
                         r"\s*[:：=]?\s*(?:\d{1,3}\s*[x×*]\s*)?(?:Huawei\s+|华为\s*)?(?:Ascend\s+(?=\d))?(?:(?:Atlas\s+\S+\s+)?\(?)"
                         r"(?P<chip>(?:Ascend)?" + _CHIP_NAME + r")\)?(?:\s+\([^()]*\))?\s*$", re.I)


def _chip_family(name: str) -> str | None:
    """doctor.knowledge.chips.family_from_name, imported when a chip-shaped name is met: that module imports the
    snapshot model (~20 ms), which a log that names no chip (`doctor explain` reads every log's head) never needs."""
    from doctor.knowledge.chips import family_from_name

    return family_from_name(name)


def _chip_label(lines: list[str], at: int | None = None, said: str | None = None) -> Iterator[Fact]:
    """Chips named on label lines; `at` / `said`: the report line a single synthesized label stands for."""
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        m = _CHIP_LABEL.match(line)
        if m and _chip_family(m["chip"]) is not None:
            yield Fact("ascend.chip", m["chip"], at or i, said or line)
        elif ":" in line and _IMAGE_LINE.match(line) and (g := _IMAGE_CHIP.search(line)):  # `vllm-ascend:` tag
            yield Fact("ascend.chip", {"a3": "Ascend910_93", "310p": "310P"}[g[1].lower()], i, line)


# A line that only lists pins and a chip, comma-separated (`910B1,python==3.10,transformers==4.51.0`, the whole
# System Info of transformers#37992): each item is a statement. Every item must be a `name==version` pin or an
# Ascend chip, so a sentence holding pins and a requirement range (`torch>=2.1`) state nothing.
_SEPARATORS = ",，、;；"
_LIST_SEP = re.compile(rf"\s*[{_SEPARATORS}]\s*")
# searched first: its leading `\s*` makes `_LIST_SEP.search` try every offset of a line that has no separator
_LIST_SEP_CHAR = re.compile(f"[{_SEPARATORS}]")
_LIST_CHIP = re.compile(r"(?:Ascend)?" + _CHIP_NAME, re.I)


def _pin_list(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        facts = _list_items(line, i)
        if facts is None and _has_label_mark(line) and (lab := _LIST_LABEL.match(line)):  # `Software Environment: CANN: 8.1.0, PyTorch: 2.5.1`
            facts = _list_items(lab["rest"], i, line)
        yield from facts or ()


# an item `name: version` of such a list names one of the stack's own components (`vLLM Ascend: v0.7.3`)
_LIST_PAIR = re.compile(r"^(?P<name>[A-Za-z][\w .-]{0,30}?)\s*[:：]\s*(?P<ver>v?\d\S*)$")
_LIST_LABEL = re.compile(r"^[-*•]?\s*[^:：,，]{1,40}[:：]\s*(?P<rest>.+)$")


def _list_items(text: str, i: int, line: str | None = None) -> list[Fact] | None:
    """The facts of `text` when it is a list of two or more statements, each a `name==version` pin, a stack
    component's `name: version` or an Ascend chip; None when any item is something else."""
    sep = _LIST_SEP_CHAR.search(text)
    if sep is None:
        return None  # one item (most lines: splitting each cost more than the rest of this reader)
    # The first item (what `_LIST_SEP.split` gives first: the text before the separator and the spaces before it)
    # is checked before the rest is split: on most lines holding a comma (`(WorkerDict pid=1, ip=...)`) it is
    # no statement, and splitting every such line was most of this reader's time.
    said = line or text
    if (first := text[:sep.start()].rstrip()) and _list_item(first, i, said) is None:
        return None
    items = [x for x in _LIST_SEP.split(text) if x]
    if len(items) < 2:
        return None
    facts: list[Fact] = []
    for item in items:
        if (fact := _list_item(item, i, said)) is None:
            return None
        facts.append(fact)
    return facts


def _list_item(item: str, i: int, said: str) -> Fact | None:
    """One item of such a list as a fact, or None when it is not a statement."""
    if _LIST_CHIP.fullmatch(item) and _chip_family(item) is not None:
        return Fact("ascend.chip", item, i, said)
    if m := _FREEZE.match(item):
        name = normalize_name(m[1])
        key: str | None = _NAMES.get(name) or f"packages.{name}"
    elif m := _LIST_PAIR.match(item):
        key = _NAMES.get(normalize_name(re.sub(r"\s+", "-", m["name"].strip())))
    else:
        return None
    if not (key and (ver := _value(key, m[2]))):
        return None
    return Fact(key, ver, i, said)


# An OS / platform / arch label line (`系统版本：Ubuntu 22.04 LTS ARM64`, Paddle-Lite#10327; `- OS: Ubuntu 22.04 amd64`;
# `- Arch: aarch64 / arm64`, vllm-ascend#8746) states the arch it names; Debian's names arm64 / amd64 are
# aarch64 / x86_64. Two arches on one label state none.
_OS_LABEL = re.compile(r"^[-*•]?\s*(?:os|system|platform|arch|architecture|操作系统|系统平台|系统版本|系统|平台|架构)\s*"
                       r"(?:version|版本)?\s*[:：]\s*(?P<v>.+)$",
                       re.I)
_OS_ARCH = re.compile(r"(?<![A-Za-z0-9])(x86_64|aarch64|arm64|amd64)(?![A-Za-z0-9])", re.I)


def _os_label(lines: list[str]) -> Iterator[Fact]:
    for i, raw in enumerate(lines, 1):
        line = raw.strip().strip("`")
        if not (m := _OS_LABEL.match(line)):
            continue
        arches = {{"arm64": "aarch64", "amd64": "x86_64"}.get(a.lower(), a.lower()) for a in _OS_ARCH.findall(m["v"])}
        if len(arches) == 1:
            yield Fact("host.arch", arches.pop(), i, line)


_READERS = (_collect_env, _pip, _ascend_files, _npu_smi, _named, _tables, _env_command, _printed, _install_names,
            _chip_label, _os_label, _pin_list, _env)


def read_stated(text: str) -> Stated:
    """The facts `text` states, first statement of each key kept; a key stated with two values is a conflict."""
    lines = [_unquote(x) for x in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    by_key: dict[str, list[Fact]] = {}
    for reader in _READERS:
        for f in reader(lines):
            by_key.setdefault(f.key, []).append(f)
    kept: list[Fact] = []
    conflicts: list[tuple[Fact, ...]] = []
    for _key, facts in by_key.items():
        if len(facts) == 1:  # most keys (every row of a long `pip list`) are stated once
            kept.append(facts[0])
            continue
        values: list[Fact] = []
        for f in sorted(facts, key=lambda f: f.line):
            if not any(_same(f.value, v.value) for v in values):
                values.append(f)
        if len(values) == 1:
            kept.append(min(facts, key=lambda f: f.line))
        else:
            conflicts.append(tuple(values))
    return Stated(tuple(sorted(kept, key=lambda f: (f.line, f.key))), tuple(conflicts))


# inline HTML a report's template writes around its labels (vllm-ascend's accuracy report: `<strong>CANN:</strong>`,
# `<br>`): markup, not text
_HTML_TAG = re.compile(r"</?(?:strong|b|em|i|br|div|p|span|code|summary|details)\b[^<>]{0,80}>", re.I)


_QUOTE = re.compile(r"^\s*(?:>[ \t]?)+")
_BRACKETED_LABEL = re.compile(r"^(\s*[-*•]?\s*)【([^】\n]{1,40})】")


def _unquote(line: str) -> str:
    """A markdown quote (`> torch  2.7.1`, verl#5468's pasted `pip list`) is rendering, not text; `>>>` is Python's.
    A label in full-width brackets (`- 【Cann-Toolkit】: 7.0.rc1.beta1`, Paddle's template, FastDeploy#2338) is the
    label without them: the brackets are markup. Each pattern needs a character most lines lack (`>`, `【`, `<`,
    `*`, `(`, a backquote): checking for it first keeps a 600k-row `pip list` from paying for every pattern."""
    if ">" in line and not line.lstrip().startswith(">>>"):
        line = _QUOTE.sub("", line)
    if "【" in line:
        line = _BRACKETED_LABEL.sub(r"\1\2", line)
    if "<" in line:
        line = _HTML_TAG.sub("", line)
    return _unmark_label(line)


# A label in bold with a note (`*   **NPU Driver Version (from `npu-smi info`):** `24.1.rc3``, llama-box#48): the
# bold, the parenthesised note before the colon and the backticks around the whole value are markup
_BOLD_LABEL = re.compile(r"^(\s*[-*•]?\s*)\*\*([^*\n]{1,60}?)\s*([:：]?)\*\*\s*([:：]?)")
_LABEL_NOTE = re.compile(r"^(\s*[-*•]?\s*[^:：()\n]{1,40}?)\s*\([^()\n]{1,60}\)\s*([:：])")
_QUOTED_VALUE = re.compile(r"([:：]\s*)`([^`\n]+)`\s*$")


def _unmark_label(line: str) -> str:
    if "**" in line and (m := _BOLD_LABEL.match(line)):
        if not (m[3] or m[4]):
            return line  # bold words, no label
        line = f"{m[1]}{m[2]}:{line[m.end():]}"
    # `match`, not `sub`: a `^` pattern can only match at the start, but `sub` still tries every offset of the
    # line (most of reading a training log's head, whose lines nearly all hold a `(`)
    if "(" in line and (m := _LABEL_NOTE.match(line)):
        line = m.expand(r"\1\2") + line[m.end():]
    return _QUOTED_VALUE.sub(r"\1\2", line, count=1) if "`" in line else line


def _same(a: Any, b: Any) -> bool:
    """Two statements agree: equal, or versions equal as the project's types compare them (2.5.1 == v2.5.1), also
    when only one carries a local label: collect_env prints torch.__version__ (`2.7.1+cpu`) above the `[pip3]
    torch==2.7.1` its metadata says, one installation (as PEP 440's `==2.7.1` matches `2.7.1+cpu`)."""
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        from doctor.knowledge.versions import parse_pkg_version

        va, vb = parse_pkg_version(a), parse_pkg_version(b)
        if va is None or vb is None:
            return False
        return va == vb or ((va.local is None or vb.local is None) and va.public == vb.public)
    return False
