"""What the stacks' git sources declare at the commits they pin: profiles/requirements-git.toml.

MindSpeed and Megatron-LM are installed from git only (`pip install -e` of a checkout, or PYTHONPATH), and the stacks
build vllm-ascend and verl from a checkout too, often at a branch commit past the release tag: PyPI's table
(doctor/knowledge/requirements.py) holds none of those declarations. Their `setup.py` / requirements files /
`pyproject.toml` were read at each pinned commit (vllm-ascend's and verl's by `python -m tools.refresh_knowledge
--write-git-requirements`). A snapshot that names the commit (`modules.mindspeed.git.commit`), or states the release
a chosen stack builds from git, but not the package's own METADATA is judged by this entry. Read and validated on
first use; a malformed file is an InputError naming the file and the key (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.location import table_path
from doctor.knowledge.requirements import declaration
from doctor.knowledge.validate import Validator
from doctor.tomlfile import read_toml

SCHEMA = "doctor.requirements-git/1"
FILE = "requirements-git.toml"
_RELEASE = {"project", "commit", "ref", "version", "requires_python", "requires_dist", "read_from", "source"}


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
class GitTable:
    read: str
    releases: tuple[GitDeclared, ...]

    def at(self, project: str, commit: str) -> GitDeclared | None:
        """The entry of `project` at `commit` (a full sha, or an unambiguous prefix of at least 7 characters)."""
        c = commit.strip().lower()
        if len(c) < 7:
            return None
        hits = [r for r in self.releases if r.project == project and r.commit.startswith(c)]
        return hits[0] if len(hits) == 1 else None


def parse(data: object, source: str) -> GitTable:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "release"}, "", required=("schema", "read", "release"))
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
    return GitTable(read, tuple(out))


_TABLES: dict[str, GitTable] = {}


def load(path: str | None = None) -> GitTable:
    """The table in use: the knowledge directory's copy, else the packaged one (an older carried-in knowledge
    directory may predate this file)."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "requirements table of git sources"), p)
    return _TABLES[p]


def declared_at(project: str, commit: str) -> GitDeclared | None:
    """What `project` declares at `commit`, None when the table does not hold that commit."""
    return load().at(project, commit)
