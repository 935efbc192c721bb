"""The chip families each package's docs support, per release: profiles/chip-support.toml, read from the docs at each
release tag or branch head (verl, MindSpeed, MindSpeed-LLM, MindSpeed-RL, torch-npu).

A row says which families a release's docs list (`supported`), which they rule out for what the package does
(`excluded`: marked "x", or inference-only families beside a training-only list) and which an exhaustive list leaves
out (`unlisted`). `verdict` judges an install by its branch (when a row names it) or its version; with several rows for
one version it judges a family only as far as all of them agree, so an unknown fact stays silent.
Read and validated on first use (a check asks), never at import; a malformed file is an InputError naming the file and
the key (exit 2). Pure logic apart from `load`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import Version

from doctor.knowledge.chips import A2, A3, A5, GEN1, P310, P310B
from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version
from doctor.tomlfile import read_toml

SCHEMA = "doctor.chip-support/1"
FILE = "chip-support.toml"
FAMILIES = (A2, A3, A5, GEN1, P310, P310B)
# a docs page at a commit: github.com/<owner>/<repo>/blob/<40 hex>/<path>
_AT_COMMIT = re.compile(r"^https://github\.com/[\w.\-]+/[\w.\-]+/blob/[0-9a-f]{40}/\S+$")


@dataclass(frozen=True)
class ChipRow:
    """One release's docs: what they list, rule out and leave out, in their words, at a commit."""

    package: str
    versions: tuple[str, ...]
    branches: tuple[str, ...]
    tag: str | None
    supported: tuple[str, ...]
    excluded: tuple[str, ...]
    unlisted: tuple[str, ...]
    says: str
    source: str
    inferred: str

    def label(self) -> str:
        """How the finding names the release read: its branch, tag, or version."""
        if self.branches:
            return f"branch {self.branches[0]}"
        return f"{self.tag or self.versions[0]}"


@dataclass(frozen=True)
class ChipVerdict:
    """What the rows that match an install say about one family: `severity` "error" (every row excludes it), "warning"
    (every row excludes or leaves it out, some leave it out), with the rows that say so."""

    severity: str
    rows: tuple[ChipRow, ...]


@dataclass(frozen=True)
class ChipSupport:
    read: str
    scope: dict[str, str]
    rows: tuple[ChipRow, ...]

    def rows_for(self, package: str, version: str | None, branch: str | None = None) -> tuple[ChipRow, ...]:
        """The rows an install stands for: the row naming its branch, else every row naming its version."""
        mine = [r for r in self.rows if r.package == package]
        if branch:
            by_branch = tuple(r for r in mine if branch in r.branches)
            if by_branch:
                return by_branch
        v = parse_pkg_version(version)
        if v is None:
            return ()
        want = Version(v.public)
        return tuple(r for r in mine if any(Version(x) == want for x in r.versions))

    def verdict(self, package: str, version: str | None, family: str, branch: str | None = None) -> ChipVerdict | None:
        """None when no row matches, or some matching row lists the family or is silent about it."""
        rows = self.rows_for(package, version, branch)
        if not rows:
            return None
        if all(family in r.excluded for r in rows):
            return ChipVerdict("error", rows)
        if all(family in r.excluded or family in r.unlisted for r in rows):
            return ChipVerdict("warning", rows)
        return None

    def supporting(self, package: str, family: str) -> tuple[ChipRow, ...]:
        """The rows of `package` whose docs list `family` (for a fix)."""
        return tuple(r for r in self.rows if r.package == package and family in r.supported)


_ROW = {"package", "versions", "branches", "tag", "supported", "excluded", "unlisted", "says", "source", "inferred"}


def parse(data: object, source: str) -> ChipSupport:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "scope", "row"}, "", required=("schema", "read", "scope", "row"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["scope"], dict) or not t["scope"]:
        raise v.fail("scope", "must be a table: package = what its support list is for")
    scope = {k: v.req(s, f"scope.{k}") for k, s in t["scope"].items()}
    if not isinstance(t["row"], list) or not t["row"]:
        raise v.fail("row", "must be an array of tables")
    rows: list[ChipRow] = []
    for i, raw in enumerate(t["row"]):
        p = f"row[{i}]"
        r = v.keys(raw, _ROW, p, required=("package", "versions", "supported", "says", "source"))
        package = v.req(r["package"], f"{p}.package")
        if package not in scope:
            raise v.fail(f"{p}.package", f"{package!r} has no scope (scope: {', '.join(scope)})")
        versions = v.strs(r["versions"], f"{p}.versions")
        if not versions:
            raise v.fail(f"{p}.versions", "must list the versions the release reports")
        for x in versions:
            v.version(x, f"{p}.versions")
        fams: dict[str, tuple[str, ...]] = {}
        for key in ("supported", "excluded", "unlisted"):
            fams[key] = v.strs(r.get(key), f"{p}.{key}")
            for f in fams[key]:
                if f not in FAMILIES:
                    raise v.fail(f"{p}.{key}", f"{f!r} is not a chip family ({', '.join(FAMILIES)})")
        both = set(fams["supported"]) & (set(fams["excluded"]) | set(fams["unlisted"])) or (
            set(fams["excluded"]) & set(fams["unlisted"]))
        if both:
            raise v.fail(p, f"{sorted(both)[0]!r} is in two of supported / excluded / unlisted")
        src = v.urls(r["source"], f"{p}.source")
        for part in src.split("; "):
            if not _AT_COMMIT.match(part):
                raise v.fail(f"{p}.source", f"{part!r} is not a docs page at a commit (github.com/…/blob/<40 hex>/…)")
        rows.append(ChipRow(package, versions, v.strs(r.get("branches"), f"{p}.branches"),
                            v.s(r.get("tag"), f"{p}.tag", optional=True), fams["supported"], fams["excluded"],
                            fams["unlisted"], v.req(r["says"], f"{p}.says"), src,
                            v.s(r.get("inferred"), f"{p}.inferred", optional=True) or ""))
    seen: set[tuple[str, Version, str]] = set()
    for i, row in enumerate(rows):
        for key in (row.branches or ("",)):
            for x in row.versions:
                k = (row.package, Version(str(parse_pkg_version(x)).split("+")[0]), key)
                if k in seen:
                    raise v.fail(f"row[{i}]", f"{row.package} {x}{' on ' + key if key else ''} has two rows")
                seen.add(k)
    return ChipSupport(read, scope, tuple(rows))


_TABLES: dict[str, ChipSupport] = {}


def load(path: str | None = None) -> ChipSupport:
    """The table in use: the knowledge directory's copy, else the packaged one."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "table of the chip families each package's docs support"), p)
    return _TABLES[p]
