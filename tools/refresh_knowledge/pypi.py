"""PyPI: every release of the projects the tables track, with upload dates and wheel tags, from the JSON API
(https://pypi.org/pypi/<project>/json), and what each release declares (Requires-Python, Requires-Dist) from
the METADATA of one wheel (a pure py3-none-any one if any, else its smallest; named in the row), read through HTTP byte ranges (or the PKG-INFO at the top of its sdist when
it has no wheel). A release with platform wheels only has its Linux siblings read too (one per machine and Python):
those that declare the same are named in the row, those of one machine that declare something else are kept as that
machine's declaration (`machines`: torch-npu's x86_64 wheels pin `torch==X+cpu`, its aarch64 ones `torch==X`).
The per-version JSON (/pypi/<project>/<version>/json) and PEP 658 `.metadata` files are not used: the PyPI this
project is refreshed from answers 404 for both (checked again 2026-12-07), while files and byte ranges are served;
the METADATA inside the wheel is the file PEP 658 serves.

It writes profiles/requirements/ (an index and one file per project), the table the doctor's checks read through doctor/knowledge/requirements.py,
and gives the refresh the release lists it compares with the tables. Standard library only (urllib), every
request bounded by a timeout; no answer is `PyPIError` (the refresh exits 2). `python -m
tools.refresh_knowledge.pypi [--out FILE]` rewrites the table (`--files-only`: the same releases and declarations,
only each release's published files re-read, one JSON API request per project; `--reread NAME` with it: that
project's declarations read again too); tests pass an `Http` replaying
recorded answers.
"""

from __future__ import annotations

import argparse
import datetime
import email.parser
import http.client
import io
import json
import os
import re
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

from packaging.version import InvalidVersion, Version

API = "https://pypi.org/pypi"
SCHEMA = "doctor.requirements/1"
TIMEOUT = 30.0
# every project a table, a profile or a check names (normalised names)
CORE = ("verl", "vllm", "vllm-ascend", "torch-npu", "torch", "transformers", "accelerate", "peft", "trl",
        "megatron-core", "mbridge", "ray", "triton-ascend", "tensordict", "numpy")
# what the stacks around them declare, so a bug report's stated versions of these are judged too: the torch
# family, the Hugging Face libraries, the other trainers / engines Ascend reports name, and every name verl, vllm
# or vllm-ascend lists in Requires-Dist that the ownership table (doctor/knowledge/ownership.py) maps to a
# component. Not `apex`: PyPI's project of that name is not NVIDIA Apex (which is built from git).
ECOSYSTEM = ("torchvision", "torchaudio", "tokenizers", "huggingface-hub", "datasets", "safetensors", "deepspeed",
             "sglang", "xformers", "flash-attn", "triton", "transformer-engine", "liger-kernel", "xgrammar",
             "torchdata", "hydra-core", "codetiming", "dill", "pybind11", "pylatexenc", "qwen-vl-utils", "wandb",
             "tensorboard", "pandas", "pyarrow", "scipy", "pillow", "protobuf", "pydantic", "tiktoken",
             "sentencepiece", "einops", "opencv-python-headless", "cloudpickle", "msgpack", "pyzmq", "psutil",
             "pyyaml", "decorator", "packaging", "setuptools")
# The frameworks that run beside verl on Ascend hosts and whose trackers feed the failure corpus (tests/corpus/,
# tests/fresh/: ms-swift, LLaMA-Factory, lmdeploy, GPUStack threads; ModelScope is the hub ms-swift and
# verl's VERL_USE_MODELSCOPE download from): a report from those trackers states their versions beside verl's
# stack, and they declare torch / transformers / vllm bounds of their own. Each is the PyPI project its repository
# publishes (github.com/modelscope/ms-swift, hiyouga/LLaMA-Factory, InternLM/lmdeploy, modelscope/modelscope,
# gpustack/gpustack) with releases since 2023 (LLaMA-Factory published as `llmtuner` before 0.6: not tracked).
FRAMEWORKS = ("ms-swift", "llamafactory", "lmdeploy", "modelscope", "gpustack")
# Criterion: every project the newest release in this table of verl, vllm, vllm-ascend, transformers, ray and
# megatron-core declares in Requires-Dist outside an extra (what `pip install` of that release brings in, so what
# a bug report's `pip list` of such a stack states), not already tracked above; listed from the table itself
# (read 2026-12-06: vllm 0.34.0, vllm-ascend 0.30.0rc2, transformers 5.25.0, ray 2.60.0; verl's and
# megatron-core's were all tracked already). tests/tools/test_pypi.py keeps the list complete for the
# shipped table. None left out: under the size policy (SINCE, no dev releases) the whole table is 131 projects,
# 6111 releases, 12.2 MB (was 56, 2483, 7.2 MB), and a project's file is read only when a snapshot states that
# project. py-cpuinfo has no release since 2023: its index line says so (0 releases), as codetiming's does.
DEPENDENCIES = ("aiohttp", "anthropic", "apache-tvm-ffi", "arctic-inference", "blake3", "cachetools", "cbor2",
                "certifi", "click", "cmake", "compressed-tensors", "depyf", "fastapi", "fastokens", "fastsafetensors",
                "filelock", "flashinfer-python", "humming-kernels", "ijson", "instanttensor", "jsonschema",
                "kernels", "lark", "llguidance", "lm-format-enforcer", "mcp", "memcache-hybrid", "memfabric-hybrid",
                "mistral-common", "model-hosting-container-standards", "msgspec", "multidict", "ninja", "numba",
                "nvidia-cudnn-frontend", "nvidia-cutlass-dsl", "nvtx", "openai", "opentelemetry-api",
                "opentelemetry-exporter-otlp", "opentelemetry-sdk", "opentelemetry-semantic-conventions-ai",
                "orjson", "oss-harmony", "outlines-core", "pandas-stubs", "partial-json-parser", "pip",
                "prometheus-client", "prometheus-fastapi-instrumentator", "py-cpuinfo", "pybase64",
                "pynvvideocodec", "python-json-logger", "quack-kernels", "quart", "regex", "requests",
                "setproctitle", "setuptools-scm", "six", "starlette", "tilelang", "tokenspeed-mla", "torchcodec",
                "tqdm", "typer", "typing-extensions", "watchfiles", "wheel")
PROJECTS = CORE + ECOSYSTEM + FRAMEWORKS + DEPENDENCIES

class PyPIError(Exception):
    """PyPI did not answer, or answered something that is not its JSON API (the refresh cannot do its job)."""


def normalize(name: str) -> str:
    """PEP 503 name: 'Torch_NPU' -> 'torch-npu'."""
    return re.sub(r"[-_.]+", "-", name).lower()


class Http:
    """What the reader needs from the network: a whole small document, a byte range of a file, a stream.
    Tests replace it with one that replays recorded answers (tests/tools/pypi_recorded/)."""

    def __init__(self, timeout: float = TIMEOUT, tries: int = 3) -> None:
        self.timeout = timeout
        self.tries = max(1, tries)

    def _open(self, url: str, headers: dict[str, str] | None = None) -> Any:
        req = urllib.request.Request(url, headers={"User-Agent": "verl-ascend-doctor refresh_knowledge", **(headers or {})})
        for attempt in range(self.tries):
            try:
                return urllib.request.urlopen(req, timeout=self.timeout)  # noqa: S310 - https URLs only
            except urllib.error.HTTPError as e:
                if e.code < 500 or attempt == self.tries - 1:
                    raise PyPIError(f"{url}: HTTP {e.code} {e.reason}") from None
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                if attempt == self.tries - 1:
                    raise PyPIError(f"{url}: no answer ({getattr(e, 'reason', None) or e})") from None
            time.sleep(2.0 * (attempt + 1))  # a refresh makes thousands of requests: one dropped is not fatal
        raise PyPIError(f"{url}: no answer")

    def _fetch(self, url: str, headers: dict[str, str] | None = None) -> tuple[bytes, int, str]:
        """The whole answer (body, status, Content-Range); an answer cut off mid-body is asked for again, like a
        dropped connection (a refresh reads thousands of byte ranges)."""
        for attempt in range(self.tries):
            with self._open(url, headers) as r:
                try:
                    headers_in = getattr(r, "headers", None) or {}
                    return self._read(r, url), getattr(r, "status", 200), headers_in.get("Content-Range", "")
                except PyPIError:
                    if attempt == self.tries - 1:
                        raise
            time.sleep(2.0 * (attempt + 1))
        raise PyPIError(f"{url}: no answer")

    def get(self, url: str) -> bytes:
        return self._fetch(url)[0]

    def get_range(self, url: str, start: int, end: int) -> tuple[bytes, int]:
        """Bytes start..end (inclusive; start < 0: the last -start bytes) and the file's total size."""
        rng = f"bytes={start}" if start < 0 else f"bytes={start}-{end}"
        data, status, content_range = self._fetch(url, {"Range": rng})
        total = content_range.rpartition("/")[2]
        if status != 206 or not total.isdigit():
            raise PyPIError(f"{url}: the server ignores byte ranges (HTTP {status})")
        return data, int(total)

    def stream(self, url: str) -> IO[bytes]:
        r: IO[bytes] = self._open(url)
        return r

    def _read(self, r: Any, url: str) -> bytes:
        try:
            data: bytes = r.read()
        except (TimeoutError, OSError, http.client.HTTPException) as e:  # IncompleteRead: the answer was cut off
            raise PyPIError(f"{url}: answer cut off ({e})") from None
        return data


def _json(http: Http, url: str) -> dict[str, Any]:
    raw = http.get(url)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise PyPIError(f"{url}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict):
        raise PyPIError(f"{url}: not a PyPI JSON API answer (no 'info')")
    return data


class _RemoteFile(io.RawIOBase):
    """A file on the server read through byte ranges, so zipfile reads a wheel's METADATA (its central directory
    and one member) without downloading the wheel: torch's are hundreds of MB."""

    _BLOCK = 1 << 16

    def __init__(self, http: Http, url: str) -> None:
        self.http, self.url, self.pos = http, url, 0
        tail, self.size = http.get_range(url, -self._BLOCK, 0)
        self.blocks: dict[int, bytes] = {}
        self._tail = (self.size - len(tail), tail)  # the end of the file: zip's directory and its locator

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        base, tail = self._tail
        if self.pos >= base:
            out = tail[self.pos - base:end - base]
        else:
            out = self._ranged(self.pos, end)
        self.pos += len(out)
        return out

    def _ranged(self, start: int, end: int) -> bytes:
        first, last = start // self._BLOCK, (end - 1) // self._BLOCK
        missing = [b for b in range(first, last + 1) if b not in self.blocks]
        if missing:
            lo, hi = missing[0] * self._BLOCK, min(self.size, (missing[-1] + 1) * self._BLOCK) - 1
            data, _ = self.http.get_range(self.url, lo, hi)
            for b in range(missing[0], missing[-1] + 1):
                self.blocks[b] = data[(b - missing[0]) * self._BLOCK:(b - missing[0] + 1) * self._BLOCK]
        buf = b"".join(self.blocks[b] for b in range(first, last + 1))
        return buf[start - first * self._BLOCK:end - first * self._BLOCK]


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<ver>[^-]+)(?:-(?P<build>\d[^-]*))?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def wheel_tag(filename: str) -> str | None:
    """'torch_npu-2.14.0-cp311-cp311-manylinux_2_28_aarch64.whl' -> 'cp311-cp311-manylinux_2_28_aarch64'."""
    m = _WHEEL.match(filename)
    return f"{m['py']}-{m['abi']}-{m['plat']}" if m else None


def _pure(filename: str) -> bool:
    """A wheel for every Python 3 and platform (`...-py3-none-any.whl`, `py2.py3-none-any`)."""
    tag = wheel_tag(filename)
    return tag is not None and tag.endswith("-none-any") and tag.split("-")[0].split(".")[-1].startswith("py")


@dataclass(frozen=True)
class PypiFile:
    filename: str
    url: str
    size: int
    requires_python: str | None


@dataclass(frozen=True)
class PypiRelease:
    """One release as PyPI lists it: when its first file was uploaded, its wheel tags, yanked or not (PEP 592: every
    file yanked; the reason the maintainers gave, "" when they gave none)."""

    project: str
    version: str
    uploaded: str  # YYYY-MM-DD of the earliest file
    wheels: tuple[str, ...]  # wheel tags (py-abi-platform)
    sdist: bool
    yanked: bool
    files: tuple[PypiFile, ...] = ()
    yanked_reason: str = ""

    @property
    def url(self) -> str:
        return f"https://pypi.org/project/{self.project}/{self.version}/"

    @property
    def key(self) -> Version:
        return Version(self.version)


def file_url(project_url: str, url: str) -> str:
    """A file's URL as the JSON API gives it (absolute, or relative to the project page on a mirror)."""
    return urllib.parse.urljoin(project_url, url)


def releases(project: str, http: Http) -> list[PypiRelease]:
    """Every release of `project` that has files (PyPI keeps empty entries for deleted uploads), oldest first.
    Versions PEP 440 cannot read are left out (none of the tracked projects has one since 2019)."""
    p = normalize(project)
    url = f"{API}/{p}/json"
    data = _json(http, url)
    rels = data.get("releases")
    if not isinstance(rels, dict):
        raise PyPIError(f"{url}: no 'releases' table")
    out: list[PypiRelease] = []
    for ver, files in rels.items():
        if not files or not isinstance(files, list):
            continue
        try:
            Version(ver)
        except InvalidVersion:
            continue
        dates = [str(f.get("upload_time_iso_8601") or f.get("upload_time") or "")[:10] for f in files]
        dates = [d for d in dates if re.match(r"^\d{4}-\d{2}-\d{2}$", d)]
        fl = tuple(PypiFile(str(f.get("filename", "")), file_url(url, str(f.get("url", ""))), int(f.get("size") or 0),
                            f.get("requires_python") or None) for f in files)
        tags = sorted({t for f in fl if (t := wheel_tag(f.filename))})
        yanked = all(bool(f.get("yanked")) for f in files)
        reason = next((str(f["yanked_reason"]).strip() for f in files if f.get("yanked_reason")), "") if yanked else ""
        out.append(PypiRelease(p, ver, min(dates) if dates else "", tuple(tags),
                               any(f.filename.endswith((".tar.gz", ".zip")) for f in fl), yanked, fl, reason))
    return sorted(out, key=lambda r: r.key)


def _metadata_text(text: str, where: str) -> dict[str, Any]:
    msg = email.parser.Parser().parsestr(text, headersonly=True)
    rp = msg.get("Requires-Python")
    return {"requires_python": str(rp).strip() if rp and str(rp).strip() else None,
            "requires_dist": [str(x).strip() for x in msg.get_all("Requires-Dist") or []],
            "dynamic": [str(x).strip().lower() for x in msg.get_all("Dynamic") or []],
            "metadata_version": str(msg.get("Metadata-Version") or ""), "where": where}


def wheel_metadata(http: Http, f: PypiFile) -> dict[str, Any]:
    """The METADATA of a wheel on the server, read through byte ranges."""
    try:
        with zipfile.ZipFile(_RemoteFile(http, f.url)) as z:
            name = next((n for n in z.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)), None)
            if name is None:
                raise PyPIError(f"{f.url}: no *.dist-info/METADATA in the wheel")
            return _metadata_text(z.read(name).decode("utf-8", "replace"), f.filename)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise PyPIError(f"{f.url}: not a readable wheel ({e})") from None


def sdist_metadata(http: Http, f: PypiFile) -> dict[str, Any]:
    """The PKG-INFO at the top of an sdist, read from the start of the .tar.gz stream (it stops there)."""
    try:
        with http.stream(f.url) as s, tarfile.open(fileobj=s, mode="r|gz") as t:
            for m in t:
                if re.match(r"^[^/]+/PKG-INFO$", m.name) and m.isfile():
                    fh = t.extractfile(m)
                    if fh is not None:
                        return _metadata_text(fh.read().decode("utf-8", "replace"), f.filename)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise PyPIError(f"{f.url}: not a readable sdist ({e})") from None
    raise PyPIError(f"{f.url}: no top-level PKG-INFO in the sdist")


# Which platform wheel's METADATA to read when a release has no pure one: the doctor applies it only to the
# Python and machine its tags name (Declared.fits), so a Linux wheel of the machines Ascend servers have (aarch64
# first: Atlas 800 A2/A3 are Kunpeng hosts; then x86_64), for the Pythons the documented stacks run (3.10, 3.11),
# is the one whose metadata can apply to a report; a macOS wheel (torch's smallest) never could.
_PREFERRED_PYTHONS = ("cp310", "cp311")


def _wheel_preference(f: PypiFile) -> tuple[int, int, int, int]:
    tag = wheel_tag(f.filename) or ""
    py, _abi, plat = (tag.split("-") + ["", "", ""])[:3]
    arch = 0 if "linux" in plat and plat.endswith("aarch64") else 1 if "linux" in plat and plat.endswith("x86_64") else 2
    pys = py.split(".")
    rank = min((_PREFERRED_PYTHONS.index(p) for p in pys if p in _PREFERRED_PYTHONS), default=len(_PREFERRED_PYTHONS))
    return (0 if _pure(f.filename) else 1, arch, rank, f.size)


def declared(http: Http, r: PypiRelease) -> dict[str, Any] | None:
    """What one release declares, from one wheel's METADATA, else its sdist's PKG-INFO when that lists its
    requirements (Metadata-Version 2.2+ without Requires-Dist in Dynamic); None when neither can say.

    The wheel is a pure one (`py3-none-any`: its metadata holds for every target) when the release has one, else
    a Linux aarch64, then x86_64 one, for CPython 3.10, then 3.11, the smallest of its rank (_wheel_preference); the
    source URL's fragment names the file, so its tags are kept with the row and the doctor applies a platform
    wheel's metadata only to the Python and machine they name. Without a pure wheel, the Linux siblings for the
    other Pythons a report may state (SIBLING_PYTHONS) are read too, and those whose Requires-Python and
    Requires-Dist are the same as the first's are listed in `wheels`: the row then applies to their targets too (a
    sibling that declares something else is left out, so nothing is claimed for its target).

    Siblings are compared by what they mean (`_meaning`: the requirement set, not its order or spelling: Ray lists
    the same requirements in another order per wheel, torch 2.6.0's x86_64 wheels write `name (==X) ; marker`).
    Those that declare something else are grouped by machine: when every such wheel of one machine declares the
    same, that declaration is kept under `machines` (torch-npu's x86_64 wheels declare `torch==X+cpu`, its aarch64
    ones `torch==X`), see `machines`."""
    wheels = sorted((f for f in r.files if f.filename.endswith(".whl")), key=_wheel_preference)
    sdists = [f for f in r.files if f.filename.endswith(".tar.gz")]
    same: list[str] = []
    other_md: list[tuple[PypiFile, dict[str, Any]]] = []
    if wheels:
        md = wheel_metadata(http, wheels[0])
        for f in _siblings(wheels):
            other = wheel_metadata(http, f)
            if _meaning(other) == _meaning(md):
                same.append(f.filename)
            else:
                other_md.append((f, other))
    elif sdists:
        md = sdist_metadata(http, sdists[0])
        if not md["requires_dist"] and (Version(md["metadata_version"] or "1.0") < Version("2.2")
                                        or "requires-dist" in md["dynamic"]):
            return None
    else:
        return None
    rp = md["requires_python"] or next((f.requires_python for f in r.files if f.requires_python), None)
    out = {"requires_python": rp, "requires_dist": md["requires_dist"], "uploaded": r.uploaded,
           "source": f"{r.url}#{md['where']}"}
    if same:
        out["wheels"] = same
    by_machine = machines(other_md)
    if by_machine:
        out["machines"] = by_machine
    out["files"] = file_targets(r)
    out.update(listing(r))
    return out


def _meaning(md: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """What a METADATA declares, independent of how it is written: Requires-Python as a specifier set and
    Requires-Dist as a set of parsed requirements with PEP 503 names (`torch ==2.12.0` and `torch==2.12.0` are one,
    `ml_dtypes` and `ml-dtypes` too; a line packaging cannot parse is kept as written)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    def req(line: str) -> str:
        try:
            r = Requirement(line)
        except InvalidRequirement:
            return line
        r.name = normalize(r.name)
        return str(r)

    rp = md["requires_python"] or ""
    try:
        rp = str(SpecifierSet(rp))
    except InvalidSpecifier:
        pass
    return rp, frozenset(map(req, md["requires_dist"]))


def _machine(filename: str) -> str:
    plat = (wheel_tag(filename) or "").rsplit("-", 1)[-1]
    return "aarch64" if plat.endswith("aarch64") else "x86_64" if plat.endswith("x86_64") else ""


def machines(other: Sequence[tuple[PypiFile, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The `machines` entry of a row: the sibling wheels that declare something else than the row's source, per
    machine (x86_64, aarch64), when all of that machine's such wheels declare the same (by `_meaning`); a machine
    whose differing wheels disagree among themselves is left out (nothing is claimed for it, as before). Each
    entry is the declaration as its first wheel writes it (`requires_python`, `requires_dist`) and the wheels it
    was read from (`wheels`: the doctor applies it only to their Pythons and machine)."""
    groups: dict[str, list[tuple[PypiFile, dict[str, Any]]]] = {}
    for f, md in other:
        if _machine(f.filename):
            groups.setdefault(_machine(f.filename), []).append((f, md))
    out: dict[str, dict[str, Any]] = {}
    for m, g in sorted(groups.items()):
        if len({_meaning(md) for _, md in g}) == 1:
            md = g[0][1]
            out[m] = {"requires_python": md["requires_python"], "requires_dist": md["requires_dist"],
                      "wheels": [f.filename for f, _ in g]}
    return out


def listing(r: PypiRelease) -> dict[str, Any]:
    """What PyPI's release list says of a release beyond its declaration: whether it was yanked, and why (the
    `yanked` key only for a yanked release; its value is the maintainers' reason, "" when they gave none)."""
    return {"yanked": r.yanked_reason} if r.yanked else {}


def file_targets(r: PypiRelease) -> list[str]:
    """What a release publishes for the doctor's targets (Linux hosts): the tags of its Linux and pure wheels
    (`cp310-cp310-manylinux_2_17_x86_64`, `py3-none-any`, without the name and version), then "sdist" when it has
    a source archive. macOS and Windows wheels are left out (no report's target installs them), which keeps the
    table small: torch publishes a dozen of those per release."""
    tags = {t for f in r.files if (t := wheel_tag(f.filename)) and _linux_or_any(t)}
    return sorted(tags) + (["sdist"] if r.sdist else [])


def _linux_or_any(tag: str) -> bool:
    plat = tag.rsplit("-", 1)[-1]
    return plat == "any" or "linux" in plat


# The Pythons a report on an Ascend host states (CANN supports 3.7-3.12; the stacks run 3.9-3.12): a platform
# release's Linux wheels for these are read as well as the first one.
SIBLING_PYTHONS = ("cp39", "cp310", "cp311", "cp312")


def _siblings(ranked: list[PypiFile]) -> list[PypiFile]:
    """The other Linux aarch64 / x86_64 wheels of a release without a pure wheel: one per (machine, Python of
    SIBLING_PYTHONS), or per machine for abi3 wheels (one covers every later Python), the first in `ranked`
    order of each; none when the first is pure."""
    first = ranked[0]
    if _pure(first.filename):
        return []
    picked: dict[tuple[str, str], PypiFile] = {}
    for f in ranked[1:]:
        tag = wheel_tag(f.filename) or ""
        py, abi, plat = (tag.split("-") + ["", "", ""])[:3]
        arch = "aarch64" if plat.endswith("aarch64") else "x86_64" if plat.endswith("x86_64") else ""
        if "linux" not in plat or not arch:
            continue
        for p in py.split("."):
            key = (arch, "abi3" if abi == "abi3" else p)
            if (p in SIBLING_PYTHONS or abi == "abi3") and key not in picked:
                picked[key] = f
    first_tag = (wheel_tag(first.filename) or "").split("-")
    first_arch = "aarch64" if first_tag[-1].endswith("aarch64") else "x86_64"
    first_keys = {(first_arch, "abi3" if first_tag[1] == "abi3" else p) for p in first_tag[0].split(".")}
    seen: set[str] = {first.filename}
    out = []
    for key, f in picked.items():
        if key not in first_keys and f.filename not in seen:
            seen.add(f.filename)
            out.append(f)
    return out


def read_all(projects: Iterable[str] = PROJECTS, http: Http | None = None, workers: int = 6) -> dict[str, list[PypiRelease]]:
    """The release list of every project (one request each)."""
    h = http or Http()
    names = [normalize(p) for p in projects]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        lists = list(pool.map(lambda p: releases(p, h), names))
    return dict(zip(names, lists, strict=True))


# The size policy: releases uploaded since 2023 (bug reports on Ascend trackers still state 2023 stacks: torch
# 2.1.x, torch-npu 2.1.0.x, numpy 1.26.0-1.26.2, transformers 4.3x; older ones predate every Ascend stack the
# tables cover); dev releases are nightly builds of main that pip never picks without --pre and a pin.
SINCE = "2023-01-01"


def kept(r: PypiRelease) -> bool:
    return r.uploaded >= SINCE and not r.key.is_devrelease


def requirements_table(found: dict[str, list[PypiRelease]], http: Http | None = None, today: str | None = None,
                       workers: int = 6, keep: Callable[[PypiRelease], bool] = kept) -> dict[str, Any]:
    """The requirements document (written as profiles/requirements/ by `write`): per project, per kept release, what it declares. Yanked releases
    are kept: an installed yanked build still declares its needs."""
    h = http or Http()
    jobs = [r for rs in found.values() for r in rs if keep(r)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        decl = list(pool.map(lambda r: declared(h, r), jobs))
    projects: dict[str, dict[str, Any]] = {p: {} for p in found}
    unstated: dict[str, list[str]] = {}
    for r, d in zip(jobs, decl, strict=True):
        if d is not None:
            projects[r.project][r.version] = d
        else:  # an sdist whose PKG-INFO does not state its requirements: recorded, so it is not "missing"
            unstated.setdefault(r.project, []).append(r.version)
    doc: dict[str, Any] = {"schema": SCHEMA, "read": today or datetime.date.today().isoformat(), "projects": projects}
    if unstated:
        doc["unstated"] = unstated
    return doc


def dumps(doc: dict[str, Any]) -> str:
    """One file of the requirements directory (requirements.layout), one release per line: small diffs when a
    refresh adds releases."""
    rels = doc.get("releases")
    if not isinstance(rels, dict):
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    head = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in doc.items() if k != "releases"]
    items = sorted(rels.items(), key=lambda kv: Version(kv[0]))
    body = [f"    {json.dumps(v)}: {json.dumps(d, ensure_ascii=False)}" + ("," if j < len(items) - 1 else "")
            for j, (v, d) in enumerate(items)]
    return "\n".join(["{", *head, '  "releases": {', *body, "  }", "}", ""])


def write(path: str, doc: dict[str, Any]) -> int:
    """Replace the requirements directory `path` with the table (validate `doc` with parse_requirements first).
    Each file goes through a temporary file, the index last, and project files the table no longer holds are
    removed; the bytes written."""
    from doctor.knowledge.requirements import INDEX, layout

    os.makedirs(path, exist_ok=True)
    files = layout(doc)
    size = 0
    for name in sorted(files, key=lambda n: n == INDEX):
        text = dumps(files[name])
        tmp = os.path.join(path, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, os.path.join(path, name))
        size += len(text.encode())
    for old in os.listdir(path):
        if old.endswith(".json") and old not in files:
            os.remove(os.path.join(path, old))
    return size


def default_out() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "profiles", "requirements")


def with_files(path: str, found: dict[str, list[PypiRelease]], today: str | None = None, http: Http | None = None,
               workers: int = 6, reread: Iterable[str] = ()) -> dict[str, Any]:
    """The table in directory `path` with each release's `files` (file_targets) and `yanked` (listing) from the
    release lists `found` (one JSON API request per project): the same projects, releases and declarations,
    re-stamped with the day PyPI was read. A release PyPI no longer lists files for keeps its row without `files`
    (and without `yanked`: PyPI keeps no yanked file list for it). A kept release PyPI lists that the table lacks (one
    uploaded since the table's declarations were read) has its declaration read and added, one wheel or sdist each:
    a table stamped with a day holds every release published by then (a date re-stamped over a missing release made
    2026-12-05's table lack four releases uploaded in November). The projects named in `reread` (`--reread`) have
    the declaration of every kept release PyPI lists read again (what a change to `declared` adds, e.g.
    `machines`, without a whole refresh); their releases PyPI no longer lists keep their rows."""
    from doctor.knowledge.requirements import read_dir

    table = read_dir(path)
    projects: dict[str, dict[str, Any]] = {}
    unstated: dict[str, list[str]] = {}
    raws: dict[str, dict[str, Any]] = {}
    for p in table.index:
        with open(os.path.join(path, f"{p}.json"), encoding="utf-8") as fh:
            raws[p] = json.load(fh)
    again = {normalize(p) for p in reread}
    new = [r for p, raw in raws.items() for r in found.get(p, [])
           if kept(r) and (r.version not in raw["releases"] or p in again) and r.version not in raw.get("unstated", ())]
    h = http or Http()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        decl = list(zip(new, pool.map(lambda r: declared(h, r), new), strict=True))
    for p, raw in raws.items():
        listed = {r.version: r for r in found.get(p, [])}
        rels = {}
        for ver, e in raw["releases"].items():
            e = {k: v for k, v in e.items() if k not in ("files", "yanked")}
            if ver in listed:
                e["files"] = file_targets(listed[ver])
                e.update(listing(listed[ver]))
            rels[ver] = e
        projects[p] = rels
        if raw.get("unstated"):
            unstated[p] = list(raw["unstated"])
    for r, d in decl:
        if d is not None:
            projects[r.project][r.version] = d
        elif r.version not in projects[r.project]:  # a re-read row keeps what it said
            unstated.setdefault(r.project, []).append(r.version)
    doc: dict[str, Any] = {"schema": SCHEMA, "read": today or datetime.date.today().isoformat(), "projects": projects}
    if unstated:
        doc["unstated"] = unstated
    return doc


def main(argv: Sequence[str] | None = None, http: Http | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.refresh_knowledge.pypi",
                                 description="Rewrite profiles/requirements/ from PyPI's JSON API.")
    ap.add_argument("--out", metavar="DIR", default=default_out(), help="where to write (default: %(default)s)")
    ap.add_argument("--project", action="append", metavar="NAME", help="only these projects (default: every tracked one)")
    ap.add_argument("--files-only", action="store_true",
                    help="keep the table's releases and declarations; only (re)record what files each publishes "
                         "and whether PyPI yanked it, and read the declarations of releases published since")
    ap.add_argument("--reread", action="append", metavar="NAME", default=[],
                    help="with --files-only: read every kept release's declaration of this project again")
    args = ap.parse_args(argv)
    if args.reread and not args.files_only:
        ap.error("--reread needs --files-only (a whole refresh reads every declaration anyway)")
    try:
        if args.files_only:
            from doctor.knowledge.requirements import read_dir

            found = read_all(list(read_dir(args.out).index), http)
            doc = with_files(args.out, found, http=http, reread=args.reread)
        else:
            found = read_all(args.project or PROJECTS, http)
            doc = requirements_table(found, http)
    except PyPIError as e:
        print(f"refresh_knowledge.pypi: {e}", file=sys.stderr)
        return 2
    from doctor.errors import InputError
    from doctor.knowledge.requirements import parse_requirements

    try:
        parse_requirements(doc, args.out)  # validated before it replaces the files
    except InputError as e:
        print(f"refresh_knowledge.pypi: PyPI's answers make an invalid table: {e}", file=sys.stderr)
        return 2
    size = write(args.out, doc)
    n = sum(len(v) for v in doc["projects"].values())
    print(f"{args.out}: {len(doc['projects'])} projects, {n} releases, {size // 1024} KiB, read {doc['read']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
