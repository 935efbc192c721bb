"""The SoC names each torch_npu release accepts: profiles/torch-npu-socs.toml, read from torch_npu's own source.

torch_npu looks the device's SoC name (ACL's aclrtGetSocName: "Ascend910B3", "Ascend310P3", "Ascend910_9391") up in
an exact string table at device initialisation and raises `Unsupported soc version: <soc>` for a name the table
lacks. The table changes between releases and not monotonically (release branches interleave their post numbers), so
the file holds one row per release read and a version between rows is judged only when the rows on both sides agree
about the SoC.
Read and validated on first use (a check asks), never at import; a malformed file is an InputError naming the file and
the key (exit 2). Pure logic apart from `load`.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version, release
from doctor.tomlfile import read_toml

SCHEMA = "doctor.torch-npu-socs/1"
FILE = "torch-npu-socs.toml"


@dataclass(frozen=True)
class SocSet:
    """The names one table accepts: exact names, and (from TorchNPU 26.0.0) every name that starts with a prefix."""

    name: str
    accepts: frozenset[str]
    prefixes: tuple[str, ...]

    def accepts_soc(self, soc: str) -> bool:
        return soc in self.accepts or any(soc.startswith(p) for p in self.prefixes)


@dataclass(frozen=True)
class SocRelease:
    """A torch_npu release read at its tag: the set it accepts and the file whose code raises on any other name."""

    version: str
    tag: str
    socs: SocSet
    raised_in: str
    source: str  # the table file at the tag
    parsed: Version
    line: tuple[int, ...]  # the PyTorch base the release is built for (2.1.0.post3 -> (2, 1, 0)): one torch-npu line


@dataclass(frozen=True)
class Verdict:
    """Whether a torch-npu version accepts a SoC, and the rows read that say so (the release itself, or the two
    around it, which agree)."""

    accepted: bool
    rows: tuple[SocRelease, ...]


@dataclass(frozen=True)
class SocTable:
    read: str
    repository: str
    table_file: str
    releases: tuple[SocRelease, ...]  # sorted by version
    prereleases: tuple[SocRelease, ...]  # tags newer than every row (betas): never judged, only kept from "no release"

    def canonical(self, soc: str) -> str:
        """`soc` spelt as torch_npu's tables spell it when some table has it in another case ('ascend910b3'), else
        `soc` unchanged."""
        low = soc.lower()
        for r in self.releases + self.prereleases:
            for n in r.socs.accepts:
                if n.lower() == low:
                    return n
            for p in r.socs.prefixes:
                if low.startswith(p.lower()):
                    return p + soc[len(p):]
        return soc

    def knows(self, soc: str) -> bool:
        """Some release or pre-release read accepts `soc` (exactly as spelt)."""
        return any(r.socs.accepts_soc(soc) for r in self.releases + self.prereleases)

    def has_name(self, soc: str) -> bool:
        """Some table read lists `soc` by name (not only by a prefix)."""
        return any(soc in r.socs.accepts for r in self.releases + self.prereleases)

    def line_rows(self, line: tuple[int, ...]) -> list[SocRelease]:
        return [r for r in self.releases if r.line == line]

    def verdict(self, version: str, soc: str) -> Verdict | None:
        """Does torch-npu `version` accept `soc`? None when the rows read cannot say: a version that is not one, a
        line not read, a version below the oldest or above the newest row of its line, or between two rows that
        disagree about `soc`. A local build (2.9.0.post1+git4c901a4) lies after its public release."""
        v = parse_pkg_version(version)
        if v is None:
            return None
        rows = self.line_rows(release(v))
        pub = Version(v.public)
        if not v.local:
            for r in rows:
                if r.parsed == pub:
                    return Verdict(r.socs.accepts_soc(soc), (r,))
        below = [r for r in rows if r.parsed <= pub]
        above = [r for r in rows if r.parsed > pub]
        if not below or not above:
            return None
        lo, hi = below[-1], above[0]
        a = lo.socs.accepts_soc(soc)
        return Verdict(a, (lo, hi)) if a == hi.socs.accepts_soc(soc) else None

    def accepting(self, soc: str, line: tuple[int, ...] | None = None) -> list[SocRelease]:
        """The releases read (of one torch line, or all) that accept `soc`, oldest first."""
        return [r for r in self.releases if (line is None or r.line == line) and r.socs.accepts_soc(soc)]

    def refusing_runs(self, soc: str, line: tuple[int, ...] | None = None) -> list[tuple[str, str]]:
        """The releases read that refuse `soc`, as runs of consecutive rows of one torch line: (first, last)."""
        runs: list[tuple[str, str]] = []
        prev: SocRelease | None = None
        for r in self.releases:
            if line is not None and r.line != line:
                continue
            if r.socs.accepts_soc(soc):
                prev = None
                continue
            if prev is not None and prev.line == r.line and runs:
                runs[-1] = (runs[-1][0], r.version)
            else:
                runs.append((r.version, r.version))
            prev = r
        return runs

    def prerelease_accepts(self, soc: str, line: tuple[int, ...] | None = None) -> SocRelease | None:
        return next((r for r in self.prereleases if (line is None or r.line == line) and r.socs.accepts_soc(soc)), None)


_ROW = {"version", "tag", "socs", "raised_in"}


def parse(data: object, source: str) -> SocTable:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "repository", "table_file", "release", "prerelease", "socs"}, "",
               required=("schema", "read", "repository", "table_file", "release", "socs"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    repo = v.url(t["repository"], "repository", pinned=False).rstrip("/")
    table_file = v.req(t["table_file"], "table_file")
    if not isinstance(t["socs"], dict) or not t["socs"]:
        raise v.fail("socs", "must be a table of named sets")
    sets: dict[str, SocSet] = {}
    for name, raw in t["socs"].items():
        p = f"socs.{name}"
        s = v.keys(raw, {"accepts", "accepts_prefix"}, p, required=("accepts",))
        accepts = v.strs(s["accepts"], f"{p}.accepts")
        prefixes = v.strs(s.get("accepts_prefix"), f"{p}.accepts_prefix")
        for n in accepts + prefixes:
            if not n.startswith("Ascend"):
                raise v.fail(f"{p}.accepts", f"{n!r} is not a SoC name (they start with 'Ascend')")
        if not accepts:
            raise v.fail(f"{p}.accepts", "must list the names the table accepts")
        sets[name] = SocSet(name, frozenset(accepts), prefixes)

    def rows(key: str) -> tuple[SocRelease, ...]:
        raw_rows = t.get(key) or []
        if not isinstance(raw_rows, list):
            raise v.fail(key, "must be an array of tables")
        out = []
        for i, raw in enumerate(raw_rows):
            p = f"{key}[{i}]"
            r = v.keys(raw, _ROW, p, required=tuple(sorted(_ROW)))
            version = v.version(r["version"], f"{p}.version")
            pv = parse_pkg_version(version)
            assert pv is not None  # v.version refused anything else
            tag = v.req(r["tag"], f"{p}.tag")
            if "-pytorch" not in tag:
                raise v.fail(f"{p}.tag", f"{tag!r} is not a release tag v<TorchNPU release>-pytorch<torch>")
            base = ".".join(map(str, release(pv)))
            if not tag.endswith(f"-pytorch{base}"):
                raise v.fail(f"{p}.tag", f"{tag!r} is not a tag of the torch-npu {base} line {version} belongs to")
            socs = v.req(r["socs"], f"{p}.socs")
            if socs not in sets:
                raise v.fail(f"{p}.socs", f"no set named {socs!r} (sets: {', '.join(sets)})")
            raised_in = v.req(r["raised_in"], f"{p}.raised_in")
            out.append(SocRelease(version, tag, sets[socs], raised_in, f"{repo}/blob/{tag}/{table_file}", pv, release(pv)))
        return tuple(out)

    releases = tuple(sorted(rows("release"), key=lambda r: r.parsed))
    if not releases:
        raise v.fail("release", "must list the releases read")
    seen: set[Version] = set()
    for r in releases:
        if r.parsed in seen:
            raise v.fail("release", f"{r.version} has two rows")
        seen.add(r.parsed)
    return SocTable(read, repo, table_file, releases, rows("prerelease"))


_TABLES: dict[str, SocTable] = {}


def load(path: str | None = None) -> SocTable:
    """The table in use: the knowledge directory's copy, else the packaged one (a knowledge directory carried in
    from an older doctor may predate this file)."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "table of the SoC names torch_npu accepts"), p)
    return _TABLES[p]
