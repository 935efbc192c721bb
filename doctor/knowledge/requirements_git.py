"""What the stacks' git sources declare at the commits they pin: profiles/requirements-git.toml.

MindSpeed and Megatron-LM are installed from git only (`pip install -e` of a checkout, or PYTHONPATH), and the stacks
build vllm-ascend and verl from a checkout too, often at a branch commit past the release tag: PyPI's table
(doctor/knowledge/requirements.py) holds none of those declarations. Their `setup.py` / requirements files /
`pyproject.toml` were read at each pinned commit (vllm-ascend's and verl's by `python -m tools.refresh_knowledge
--write-git-requirements`). A snapshot that names the commit (`modules.mindspeed.git.commit`), or states the release
a chosen stack builds from git, but not the package's own METADATA is judged by this entry. Read and validated on
first use; a malformed file is an InputError naming the file and the key (exit 2).

Its `[[vllm_empty_target]]` entries say what vLLM declares when built from source with VLLM_TARGET_DEVICE=empty, as
vllm-ascend's install guide builds it on Ascend: the requirements file its setup.py reads for that target
(requirements/common.txt; requirements-common.txt / requirements-cpu.txt at the root in 0.7.x) and its
Requires-Python, read from each release's sdist on PyPI (`python -m tools.refresh_knowledge --vllm-sdists
--write-git-requirements`, on `vllm_empty_target_read`). PyPI's metadata of vLLM is its CUDA wheel's, which an
Ascend host does not install."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.location import table_path
from doctor.knowledge.requirements import declaration
from doctor.knowledge.validate import Validator
from doctor.tomlfile import read_toml

SCHEMA = "doctor.requirements-git/1"
FILE = "requirements-git.toml"
_RELEASE = {"project", "commit", "ref", "version", "requires_python", "requires_dist", "read_from", "source"}
_EMPTY = {"version", "sdist", "requires_python", "requires_dist", "read_from", "source"}
# the local version label a VLLM_TARGET_DEVICE=empty build of a release tag reports (vllm 0.11.0+empty)
EMPTY_LABEL = "empty"
# the files of a vLLM release tag: where an empty-target entry's requirements file is cited
VLLM_TAG_FILES = "https://github.com/vllm-project/vllm/blob/v"


@dataclass(frozen=True)
class GitDeclared:
    """One project at one commit: its version there, Requires-Python and requirements, and the file read."""

    project: str
    commit: str
    ref: str
    version: str
    requires_python: str | None
    requires_dist: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class EmptyTargetDeclared:
    """One vLLM release built with VLLM_TARGET_DEVICE=empty: its Requires-Python and the requirements setup.py
    installs for that target, the sdist read and the file at the release tag (`source`)."""

    version: str
    sdist: str
    requires_python: str | None
    requires_dist: tuple[str, ...]
    read_from: str
    source: str

    @property
    def path(self) -> str:
        """The requirements file read (requirements/common.txt), from the tag URL."""
        return self.source.split(f"/blob/v{self.version}/", 1)[-1]


@dataclass(frozen=True)
class GitTable:
    read: str
    releases: tuple[GitDeclared, ...]
    empty_target: tuple[EmptyTargetDeclared, ...] = ()
    empty_target_read: str = ""

    def vllm_empty_target(self, version: str) -> EmptyTargetDeclared | None:
        """The empty-target declaration of vLLM `version`: a release (0.11.0) or its empty build's own label
        (0.11.0+empty); None for another local label, a version not read, or one PEP 440 cannot parse."""
        from doctor.knowledge.versions import parse_pkg_version

        got = parse_pkg_version(version)
        if got is None or (got.local is not None and got.local.lower() != EMPTY_LABEL):
            return None
        want = parse_pkg_version(got.public)
        return next((e for e in self.empty_target if parse_pkg_version(e.version) == want), None)

    def at(self, project: str, commit: str) -> GitDeclared | None:
        """The entry of `project` at `commit` (a full sha, or an unambiguous prefix of at least 7 characters)."""
        c = commit.strip().lower()
        if len(c) < 7:
            return None
        hits = [r for r in self.releases if r.project == project and r.commit.startswith(c)]
        return hits[0] if len(hits) == 1 else None


def parse(data: object, source: str) -> GitTable:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "release", "vllm_empty_target_read", "vllm_empty_target"}, "",
               required=("schema", "read", "release"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["release"], list):
        raise v.fail("release", "must be an array of tables")
    out = []
    for i, raw in enumerate(t["release"]):
        p = f"release[{i}]"
        r = v.keys(raw, _RELEASE, p, required=tuple(sorted(_RELEASE - {"requires_python"})))
        rp, rd = declaration(v, r.get("requires_python") or None, r["requires_dist"], p)
        commit = v.req(r["commit"], f"{p}.commit")
        if len(commit) != 40 or any(ch not in "0123456789abcdef" for ch in commit):
            raise v.fail(f"{p}.commit", "must be a full 40-character commit id")
        v.version(r["version"], f"{p}.version")
        out.append(GitDeclared(v.req(r["project"], f"{p}.project"), commit, v.req(r["ref"], f"{p}.ref"), r["version"],
                               rp, rd, v.url(r["source"], f"{p}.source")))
    return GitTable(read, tuple(out), *_empty_target(v, t))


def _empty_target(v: Validator, t: dict[str, object]) -> tuple[tuple[EmptyTargetDeclared, ...], str]:
    raw = t.get("vllm_empty_target", [])
    if not isinstance(raw, list):
        raise v.fail("vllm_empty_target", "must be an array of tables")
    if raw and "vllm_empty_target_read" not in t:
        raise v.fail("vllm_empty_target_read", "is required with vllm_empty_target entries (the date they were read)")
    when = v.date(t["vllm_empty_target_read"], "vllm_empty_target_read") if "vllm_empty_target_read" in t else ""
    out = []
    for i, e in enumerate(raw):
        p = f"vllm_empty_target[{i}]"
        r = v.keys(e, _EMPTY, p, required=tuple(sorted(_EMPTY - {"requires_python"})))
        rp, rd = declaration(v, r.get("requires_python") or None, r["requires_dist"], p)
        version, source = v.version(r["version"], f"{p}.version"), v.url(r["source"], f"{p}.source")
        if not source.startswith(f"{VLLM_TAG_FILES}{version}/"):
            raise v.fail(f"{p}.source", f"must be a file of the release tag ({VLLM_TAG_FILES}{version}/...)")
        out.append(EmptyTargetDeclared(version, v.req(r["sdist"], f"{p}.sdist"), rp, rd,
                                       v.req(r["read_from"], f"{p}.read_from"), source))
    return tuple(out), when


_TABLES: dict[str, GitTable] = {}


def load(path: str | None = None) -> GitTable:
    """The table in use: the knowledge directory's copy, else the packaged one (an older carried-in knowledge
    directory may predate this file)."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "requirements table of git sources"), p)
    return _TABLES[p]


def vllm_empty_target(version: str) -> EmptyTargetDeclared | None:
    """What vLLM `version` declares when built with VLLM_TARGET_DEVICE=empty, None when the table does not hold it."""
    return load().vllm_empty_target(version)


def declared_at(project: str, commit: str) -> GitDeclared | None:
    """What `project` declares at `commit`, None when the table does not hold that commit."""
    return load().at(project, commit)
