"""Facts out of upstream files: install-doc version tables, shell install commands, requirements files,
pyproject/setup.py requirements, Dockerfiles, vllm-ascend's release matrix, torch-npu's compatibility table
and MindSpeed's README. Pure text in, dicts out; nothing here knows our tables.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

# names as upstream docs spell them -> the field (distribution name or stack part) they give
FIELDS = {
    "python": "python", "cann": "cann", "hdk": "driver", "torch": "torch", "pytorch": "torch",
    "torch_npu": "torch-npu", "torch-npu": "torch-npu", "torchvision": "torchvision", "torchaudio": "torchaudio",
    "triton": "triton", "triton-ascend": "triton-ascend", "triton_ascend": "triton-ascend",
    "transformers": "transformers", "vllm": "vllm", "vllm-ascend": "vllm-ascend", "vllm_ascend": "vllm-ascend",
    "megatron-lm": "megatron-lm", "megatron": "megatron-lm", "mindspeed": "mindspeed", "mbridge": "mbridge",
    "ray": "ray", "numpy": "numpy", "verl": "verl", "sglang": "sglang",
}
# git repositories the install commands clone -> field
REPOS = {"vllm-project/vllm": "vllm", "vllm-project/vllm-ascend": "vllm-ascend", "Ascend/MindSpeed": "mindspeed",
         "NVIDIA/Megatron-LM": "megatron-lm", "verl-project/verl": "verl", "volcengine/verl": "verl"}


@dataclass
class DocFacts:
    """What an install doc or script states: table versions, pip pins, git refs (first occurrence wins)."""

    versions: dict[str, str] = field(default_factory=dict)  # field -> version text from a version table
    recommended: dict[str, str] = field(default_factory=dict)  # field -> the "recommended" value next to it
    pip: dict[str, str] = field(default_factory=dict)  # distribution -> specifier ("" = unpinned) from pip install
    refs: dict[str, str] = field(default_factory=dict)  # field -> git ref / commit the commands check out

    def merged(self, other: DocFacts) -> DocFacts:
        out = DocFacts(dict(self.versions), dict(self.recommended), dict(self.pip), dict(self.refs))
        for mine, theirs in ((out.versions, other.versions), (out.recommended, other.recommended),
                             (out.pip, other.pip), (out.refs, other.refs)):
            for k, v in theirs.items():
                mine.setdefault(k, v)
        return out


_LIT = re.compile(r"``([^`]*)``")
_GRID = re.compile(r"^\s*\|\s*([A-Za-z][\w\- ]*?)\s*\|\s*([^|]+?)\s*\|")
_SIMPLE = re.compile(r"^([A-Za-z][\w\-]*)(?:\s{2,}|\s+(?=``))(\S.*)$")


def _clean(value: str) -> tuple[str, str | None]:
    """Table cell text -> (value, recommended value or None): ``>=3.10, <3.12``\\ ，推荐 ``3.11`` -> ('>=3.10, <3.12', '3.11')."""
    lits = _LIT.findall(value)
    if lits:
        rec = lits[1] if len(lits) > 1 and re.search(r"推荐|recommend", value, re.I) else None
        return lits[0].strip(), rec
    return value.strip().split("  ")[0].strip(), None


def table_versions(text: str, facts: DocFacts) -> None:
    """Version tables: rst grid (| CANN | == 8.3.RC1 |), rst simple (CANN  ``9.0.0``  ...) and markdown rows."""
    for line in text.splitlines():
        m = _GRID.match(line) or _SIMPLE.match(line.strip())
        if not m:
            continue
        name = FIELDS.get(m.group(1).strip().lower())
        if name is None:
            continue
        raw = m.group(2)
        if _SIMPLE.match(line.strip()) and not _GRID.match(line) and "``" not in raw and not re.search(r"\d", raw.split()[0]):
            continue  # prose that happens to start with a package name
        value, rec = _clean(raw)
        if not value:
            continue
        facts.versions.setdefault(name, value)
        if rec:
            facts.recommended.setdefault(name, rec)


def _commands(text: str) -> list[list[str]]:
    """Shell commands in a doc or script, split at && ; | and line continuations (comments dropped)."""
    joined = re.sub(r"\\\n", " ", text)
    out: list[list[str]] = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith(("#", "..")) or not line:
            continue
        line = line.removeprefix("RUN ").strip()
        for part in re.split(r"&&|;|\|\|", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            if words:
                out.append(words)
    return out


def _repo_field(url: str) -> str | None:
    m = re.search(r"(?:github\.com|gitcode\.com|gitee\.com)/([\w.\-]+/[\w.\-]+?)(?:\.git)?/?$", url)
    return REPOS.get(m.group(1)) if m else None


def commands(text: str, facts: DocFacts) -> None:
    """pip install pins and the git refs of git clone (-b/--branch) and a following git checkout."""
    last: str | None = None
    for w in _commands(text):
        if w[0] in ("pip", "pip3") and len(w) > 1 and w[1] == "install" or w[:3] == ["python", "-m", "pip"]:
            _pip(w[w.index("install") + 1:] if "install" in w else [], facts)
        elif w[0] == "git" and len(w) > 1 and w[1] == "clone":
            url = next((x for x in w[2:] if "://" in x), "")
            last = _repo_field(url)
            ref = next((w[i + 1] for i, x in enumerate(w[:-1]) if x in ("-b", "--branch")), None)
            if last and ref:
                facts.refs.setdefault(last, ref)
        elif w[0] == "git" and len(w) > 2 and w[1] == "checkout" and last:
            facts.refs.setdefault(last, w[2])
        elif w[0] == "cd" and len(w) > 1:
            name = w[1].strip("/").split("/")[-1].lower()
            if name != "..":
                last = {"vllm": "vllm", "vllm-ascend": "vllm-ascend", "mindspeed": "mindspeed",
                        "megatron-lm": "megatron-lm", "verl": "verl"}.get(name)


def _pip(args: list[str], facts: DocFacts) -> None:
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-r", "-e", "--index-url", "--extra-index-url", "--extra-index", "--trusted-host", "-i", "-c"):
            skip = True
            continue
        if a.startswith("-") or "/" in a or a == ".":
            continue
        m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", a)
        if not m:
            continue
        name = m.group(1).lower().replace("_", "-")
        facts.pip.setdefault(name, m.group(3).strip())


def doc_facts(text: str | None) -> DocFacts:
    facts = DocFacts()
    if text:
        table_versions(text, facts)
        commands(text, facts)
    return facts


def requirements(text: str | None) -> dict[str, str]:
    """requirements.txt -> {distribution: specifier}."""
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*([<>=!~][^;]*)?", line)
        if m and not line.startswith("-"):
            out.setdefault(m.group(1).lower().replace("_", "-"), (m.group(3) or "").strip())
    return out


def requires_python(pyproject: str | None, setup_py: str | None = None) -> str | None:
    for text, pat in ((pyproject, r'^requires-python\s*=\s*"([^"]+)"'), (setup_py, r'python_requires\s*=\s*["\']([^"\']+)')):
        m = re.search(pat, text or "", re.M)
        if m:
            return m.group(1).replace(" ", "")
    return None


def setup_requirement(setup_py: str | None, name: str) -> str | None:
    """The specifier a setup.py string literal gives `name` ('numpy<2.0.0' -> '<2.0.0'; bare 'numpy' -> '')."""
    for m in re.finditer(r"[\"']([A-Za-z0-9_.\-]+)\s*([<>=!~][^\"';]*)?[\"']", setup_py or ""):
        if m.group(1).lower() == name:
            return (m.group(2) or "").replace(" ", "")
    return None


_CANN_BUILD = re.compile(r"^(\d+\.\d+\.\w+(?:-(?:alpha|beta|rc)\.\d+)?)", re.I)


def dockerfile(text: str | None) -> dict[str, str]:
    """ARG defaults and the CANN version of the base image (FROM …/cann:<ver>-<chip>-…): `cann` the release, `cann_build`
    with its pre-release label (9.1.0-beta.1-310p-… -> 9.1.0 / 9.1.0-beta.1)."""
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r'^\s*ARG\s+(\w+)=["\']?([^"\'\s]*)', line)
        if m:
            out.setdefault(m.group(1), m.group(2))
        m = re.match(r"^\s*FROM\s+\S*cann:(\S+)", line)
        if m and "cann" not in out:
            tag = m.group(1).replace("${CANN_VERSION}", out.get("CANN_VERSION", ""))
            out["cann"] = tag.split("-")[0].split("_")[0]
            b = _CANN_BUILD.match(tag)
            out["cann_build"] = b.group(1) if b else out["cann"]
    return out


def markdown_table(text: str | None, first_header: str) -> list[list[str]]:
    """Rows (cells, stripped) of the first markdown table whose header's first cell is `first_header`."""
    rows: list[list[str]] = []
    inside = False
    for line in (text or "").splitlines():
        s = line.strip()
        if not s.startswith("|"):
            if inside:
                break
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if not inside:
            inside = cells[0].lower() == first_header.lower()
            continue
        if set(cells[0]) <= set("-: "):
            continue
        rows.append(cells)
    return rows


def policy_rows(text: str | None) -> dict[str, dict[str, str]]:
    """vllm-ascend versioning_policy.md release matrix -> {'0.13.0rc2': {vllm, python, cann, torch, torch_npu, triton}}."""
    out: dict[str, dict[str, str]] = {}
    for cells in markdown_table(text, "vLLM Ascend"):
        if len(cells) < 5 or not cells[0].lstrip().startswith("v"):
            continue
        torch, _, tn = cells[4].partition("/")
        out[cells[0].strip().lstrip("v")] = {
            "vllm": cells[1].strip(), "python": cells[2].replace(" ", ""), "cann": cells[3].strip(),
            "torch": torch.strip(), "torch_npu": tn.strip(), "triton": cells[5].strip() if len(cells) > 5 else "",
        }
    return out


def _compat_cells(text: str | None) -> list[list[str]]:
    """The version rows of Ascend/pytorch COMPATIBILITY.en.md: [package version, branch, PyTorch, 'CANN x']."""
    rows = []
    for line in (text or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.match(r"^\d+\.\d+\.\d+", cells[0]) and cells[-1].upper().startswith("CANN "):
            rows.append(cells)
    return rows


def compat_rows(text: str | None) -> dict[str, str]:
    """Ascend/pytorch COMPATIBILITY.en.md -> {torch-npu version: CANN} (every table, active and historical)."""
    out: dict[str, str] = {}
    for cells in _compat_cells(text):
        out.setdefault(cells[0], cells[-1][5:].strip())
    return out


def compat_branches(text: str | None) -> dict[str, str]:
    """Its branch column's TorchNPU release lines -> CANN ('v2.9.0-26.0.0' -> {'26.0.0': '9.0.0'})."""
    out: dict[str, str] = {}
    for cells in _compat_cells(text):
        if re.match(r"^v\d+\.\d+\.\d+-", cells[1]):
            out.setdefault(cells[1].split("-", 1)[1], cells[-1][5:].strip())
    return out


def mindspeed_megatron(readme: str | None) -> dict[str, str]:
    """MindSpeed README -> {'checkout': the Megatron-LM ref it checks out, 'version': the Megatron-LM version it names}."""
    out: dict[str, str] = {}
    text = readme or ""
    m = re.search(r"Megatron-LM\s*版本\s*\|\s*([0-9][0-9.]*)", text)
    if m:
        out["version"] = m.group(1)
    last = None
    for w in _commands(text):
        if w[:2] == ["git", "clone"]:
            last = _repo_field(next((x for x in w[2:] if "://" in x), ""))
            ref = next((w[i + 1] for i, x in enumerate(w[:-1]) if x in ("-b", "--branch")), None)
            if last == "megatron-lm" and ref:
                out.setdefault("checkout", ref)
        elif w[:2] == ["git", "checkout"] and len(w) > 2 and last == "megatron-lm":
            out.setdefault("checkout", w[2])
        elif w[0] == "cd" and len(w) > 1 and w[1].strip("/").lower() == "megatron-lm":
            last = "megatron-lm"
    return out


def md_tables(text: str | None) -> list[list[dict[str, str]]]:
    """Every markdown table in `text` as rows of {header cell: cell} (headers and cells stripped)."""
    tables: list[list[dict[str, str]]] = []
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for line in (text or "").splitlines() + [""]:
        s = line.strip()
        if not s.startswith("|"):
            if header is not None:
                tables.append(rows)
            header, rows = None, []
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if header is None:
            header = cells
        elif all(set(c) <= set("-: ") for c in cells):
            continue
        else:
            rows.append(dict(zip(header, cells, strict=False)))
    return tables


_CANN_IN_CELL = re.compile(r"\d+\.\d+\.(?:\d+|RC\d+)", re.I)


def first_cann(cell: str | None) -> str | None:
    """'商用版：9.0.0<br>社区版：9.0.0' -> '9.0.0'; '在研版本' (in development) -> None."""
    m = _CANN_IN_CELL.search(cell or "")
    return m.group(0) if m else None


def _column(row: dict[str, str], *names: str) -> str | None:
    """The cell whose header contains one of `names` (release notes rename columns between releases)."""
    for h, v in row.items():
        if any(n.lower() in h.lower() for n in names):
            return v
    return None


def torch_npu_release_notes(text: str | None) -> list[dict[str, str]]:
    """Ascend/pytorch docs/zh/release_notes.md -> [{'wheel', 'cann', 'line', 'branch'}]: the table that pairs each
    TorchNPU wheel (安装包版本) with its CANN (both the 26.0.0 layout, CANN first, and the 26.1.0+ layout)."""
    out = []
    for table in md_tables(text):
        for row in table:
            wheel, cann = _column(row, "安装包版本"), first_cann(_column(row, "CANN版本"))
            if wheel and cann and re.match(r"^\d+\.\d+\.\d+", wheel):
                out.append({"wheel": wheel, "cann": cann, "line": _column(row, "TorchNPU版本") or "",
                            "branch": _column(row, "代码分支名称") or ""})
    return out


def mindspeed_release_notes(text: str | None) -> list[dict[str, str]]:
    """MindSpeed release_notes_core.md / MindSpeed-LLM release_notes_llm.md -> [{'branch', 'cann', 'torch',
    'megatron'}]: each MindSpeed Core branch and the CANN / PyTorch (and Megatron-LM) the notes pair it with.
    Rows still 'in development' (在研版本, no CANN) are left out."""
    out = []
    seen: set[tuple[str, str]] = set()
    for table in md_tables(text):
        for row in table:
            branch, cann = _column(row, "MindSpeed Core代码分支"), first_cann(_column(row, "CANN版本"))
            torch = _column(row, "PyTorch版本") or ""
            if not branch or not cann or (branch, cann) in seen:
                continue
            seen.add((branch, cann))
            out.append({"branch": branch, "cann": cann, "torch": torch.strip(),
                        "megatron": (_column(row, "Megatron") or "").strip()})
    return out


_VA_NOTE = re.compile(r"^##\s+v(\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?)\s*(?:-\s*(\d{4}\.\d{2}\.\d{2}))?", re.M)


def vllm_ascend_release_notes(text: str | None) -> dict[str, str]:
    """vllm-ascend docs/source/user_guide/release_notes.md -> {version: date 'YYYY.MM.DD' or ''} per '## vX - date'."""
    return {m.group(1): m.group(2) or "" for m in _VA_NOTE.finditer(text or "")}
