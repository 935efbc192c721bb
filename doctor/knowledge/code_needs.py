"""What a release's code needs from another package beyond what its metadata declares: profiles/code-needs.toml.

The Requires-Dist table (doctor/knowledge/requirements.py) holds what releases declare; this one holds what their
code enforces or calls, read from the releases' files: version gates the code raises on or turns a dependency off
at (transformers' `Disabling PyTorch because PyTorch >= X is required`), and module-level calls into an API the
other package only has from some release. A row applies to the releases its `releases` specifier names, which end
at the newest release read. A row with `absent_breaks = true` is one whose code imports the other package on the path
it names whatever is installed (verl 0.7-0.9.0's trainer imports cachetools, which their metadata never names): a
complete snapshot without that package breaks too; its `requires` may then name the package alone. A row with
`on = "npu"` is a gate the code runs only on an Ascend NPU (verl 0.4-0.6.1's `transformers version >= X is required on
ASCEND NPU`); a row with `bypass = "VAR"` is a check the package skips when that environment variable holds one of
`bypass_values` (LLaMA-Factory's DISABLE_VERSION_CHECK). `requires` may list several requirements the same code checks: each is a need. A row's `severity`
("warning") is for a gate only one use of the package reaches (LLaMA-Factory checks deepspeed only when training with
a DeepSpeed config); an unmet need is an error otherwise.

`[[enforces]]` rows are packages that check their own declared requirements when imported (transformers'
dependency_versions_check runs require_version_core over the Requires-Dist entries of `names`): there an unmet
declared requirement on one of those names is an import failure, whatever depends on the package
(doctor/checks/declared.py). Read and validated on first use (a check asks), never at import; a malformed file is
an InputError naming the file and the key (exit 2).
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

from typing import NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.knowledge.location import table_path
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import pkg_satisfies
from doctor.tomlfile import read_toml

SCHEMA = "doctor.code-needs/1"
FILE = "code-needs.toml"
_NEED = {"package", "releases", "requires", "read_at", "read_from", "breaks", "source"}
_OPTIONAL = {"absent_breaks", "on", "bypass", "bypass_values", "severity"}
_ENFORCES = {"package", "releases", "names", "read_at", "read_from", "breaks", "source"}
_ENFORCES_OPTIONAL = {"when_installed"}
ON = ("npu",)  # the hosts a row can be limited to
SEVERITIES = ("error", "warning")


class CodeNeed(NamedTuple):
    """`package` releases in `releases` need `requires` (a PEP 508 requirement on one other package)."""

    package: str
    releases: str
    requires: str
    needed: str  # the package `requires` names (PEP 503 normalised)
    specifier: str  # its version specifier
    read_at: tuple[str, ...]
    read_from: str
    breaks: str
    source: str
    absent_breaks: bool = False  # the code imports the needed package unconditionally: its absence breaks too
    on: str = ""  # "npu": the code runs this gate only on an Ascend NPU (torch_npu imports, torch.npu.is_available())
    bypass: str = ""  # an environment variable that makes the package skip the check
    bypass_values: tuple[str, ...] = ()  # the values (lower-cased, as the package compares them) that set it
    # "warning" for a gate only one use of the package reaches (LLaMA-Factory checks deepspeed's version only when
    # training with a DeepSpeed config): an unmet need is an error where every use breaks
    severity: str = "error"

    def bypassed_by(self, value: str | None) -> bool:
        """Whether the bypass variable at `value` (None: not set or not known) makes the package skip the check."""
        return bool(self.bypass) and value is not None and value.lower() in self.bypass_values

    def applies_to(self, version: str) -> bool:
        return pkg_satisfies(version, self.releases) is True

    def met_by(self, version: str) -> bool | None:
        """Does `version` of the needed package meet the need? None when it cannot be read."""
        return pkg_satisfies(version, self.specifier)


class Enforces(NamedTuple):
    """`package` releases in `releases` check, when imported, their own declared requirements on `names` (those in
    `when_installed` only when that package is installed) and raise on a mismatch."""

    package: str
    releases: str
    names: frozenset[str]  # PEP 503 normalised; "python" for Requires-Python
    when_installed: frozenset[str]
    read_at: tuple[str, ...]
    read_from: str
    breaks: str
    source: str

    def applies_to(self, version: str) -> bool:
        return pkg_satisfies(version, self.releases) is True

    def says(self, requirement: str, package: str, version: str | None) -> str:
        """What the import raises for `requirement` with `package` at `version` (None: not installed, where
        require_version's importlib.metadata.version(pkg) raises PackageNotFoundError, re-raised with its hint)."""
        if version is None and "raises ImportError:" in self.breaks:
            return (self.breaks.partition("raises ImportError:")[0] + "raises PackageNotFoundError: No package "
                    f"metadata was found for The '{requirement}' distribution was not found and is required by "
                    "this application")
        return (self.breaks.replace("<requirement>", requirement).replace("<package>", package)
                .replace("<version>", str(version)))


class CodeNeedsTable(NamedTuple):
    read: str
    needs: tuple[CodeNeed, ...]
    enforces: tuple[Enforces, ...] = ()

    def packages(self) -> frozenset[str]:
        return frozenset(n.package for n in self.needs)


def _norm(name: str) -> str:
    return canonicalize_name(name.strip())


def parse(data: object, source: str) -> CodeNeedsTable:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "need", "enforces"}, "", required=("schema", "read", "need"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["need"], list):
        raise v.fail("need", "must be an array of tables")
    out = []
    for i, raw in enumerate(t["need"]):
        p = f"need[{i}]"
        r = v.keys(raw, _NEED | _OPTIONAL, p, required=tuple(sorted(_NEED)))
        absent_breaks = r.get("absent_breaks", False)
        if not isinstance(absent_breaks, bool):
            raise v.fail(f"{p}.absent_breaks", "must be true or false")
        on, bypass = r.get("on", ""), r.get("bypass", "")
        if on != "" and on not in ON:
            raise v.fail(f"{p}.on", f"must be one of {', '.join(ON)}")
        if not isinstance(bypass, str) or (bypass and not bypass.replace("_", "").isalnum()):
            raise v.fail(f"{p}.bypass", "must name an environment variable")
        values = r.get("bypass_values", [])
        if not isinstance(values, list) or bool(values) != bool(bypass) or not all(
                isinstance(x, str) and x and x == x.lower() for x in values):
            raise v.fail(f"{p}.bypass_values", "must list the lower-case values that set the bypass, with bypass only")
        severity = r.get("severity", "error")
        if severity not in SEVERITIES:
            raise v.fail(f"{p}.severity", f"must be one of {', '.join(SEVERITIES)}")
        releases = _releases(v, r, p)
        reqs = r["requires"] if isinstance(r["requires"], list) else [r["requires"]]
        if not reqs:
            raise v.fail(f"{p}.requires", "must name a requirement")
        read_at = _read_at(v, r, p, releases)
        for j, line in enumerate(reqs):
            key = f"{p}.requires" + (f"[{j}]" if isinstance(r["requires"], list) else "")
            try:
                req = Requirement(v.req(line, key))
            except InvalidRequirement as e:
                raise v.fail(key, f"not a PEP 508 requirement: {e}") from None
            if (not str(req.specifier) and not absent_breaks) or req.marker is not None or req.extras:
                raise v.fail(key, "must be a package with a version specifier (a bare name only with "
                                  "absent_breaks), without extras or markers")
            out.append(CodeNeed(_norm(v.req(r["package"], f"{p}.package")), releases, str(req), _norm(req.name),
                                str(req.specifier), read_at, v.req(r["read_from"], f"{p}.read_from"),
                                v.req(r["breaks"], f"{p}.breaks"), v.url(r["source"], f"{p}.source"), absent_breaks,
                                on, bypass, tuple(values), severity))
    enforces = []
    raw_enf = t.get("enforces", [])
    if not isinstance(raw_enf, list):
        raise v.fail("enforces", "must be an array of tables")
    for i, raw in enumerate(raw_enf):
        p = f"enforces[{i}]"
        r = v.keys(raw, _ENFORCES | _ENFORCES_OPTIONAL, p, required=tuple(sorted(_ENFORCES)))
        releases = _releases(v, r, p)
        names, when = (_names(v, r.get(k, []), f"{p}.{k}") for k in ("names", "when_installed"))
        if not names or not when <= names:
            raise v.fail(f"{p}.names", "must list the checked packages, when_installed among them")
        enforces.append(Enforces(_norm(v.req(r["package"], f"{p}.package")), releases, names, when,
                                 _read_at(v, r, p, releases), v.req(r["read_from"], f"{p}.read_from"),
                                 v.req(r["breaks"], f"{p}.breaks"), v.url(r["source"], f"{p}.source")))
    return CodeNeedsTable(read, tuple(out), tuple(enforces))


def _releases(v: Validator, r: dict[str, object], p: str) -> str:
    releases = v.req(r["releases"], f"{p}.releases")
    if pkg_satisfies("0", releases) is None:
        raise v.fail(f"{p}.releases", f"{releases!r} is not a PEP 440 version specifier")
    return releases


def _read_at(v: Validator, r: dict[str, object], p: str, releases: str) -> tuple[str, ...]:
    read_at = r["read_at"]
    if not isinstance(read_at, list) or not read_at:
        raise v.fail(f"{p}.read_at", "must list the releases whose files were read")
    for j, rel in enumerate(read_at):
        v.version(rel, f"{p}.read_at[{j}]")
        if pkg_satisfies(rel, releases) is not True:
            raise v.fail(f"{p}.read_at[{j}]", f"{rel} is not one of the releases {releases!r} the row covers")
    return tuple(read_at)


def _names(v: Validator, raw: object, key: str) -> frozenset[str]:
    if not isinstance(raw, list):
        raise v.fail(key, "must be an array of package names")
    return frozenset(_norm(v.req(n, f"{key}[{j}]")) for j, n in enumerate(raw))


_TABLES: dict[str, CodeNeedsTable] = {}


def load(path: str | None = None) -> CodeNeedsTable:
    """The table in use: the knowledge directory's copy, else the packaged one (a knowledge directory carried in
    from an older doctor may predate this file)."""
    p = table_path(FILE, path)
    if p not in _TABLES:
        _TABLES[p] = parse(read_toml(p, "table of what releases' code needs"), p)
    return _TABLES[p]


def needs_of(package: str, version: str, table: CodeNeedsTable | None = None) -> list[CodeNeed]:
    """The rows that apply to `package` at `version`."""
    t = table or load()
    name = _norm(package)
    return [n for n in t.needs if n.package == name and n.applies_to(version)]


def enforced(package: str, version: str, table: CodeNeedsTable | None = None) -> Enforces | None:
    """The row saying `package` at `version` checks its own declared requirements when imported, if any."""
    t = table or load()
    name = _norm(package)
    return next((e for e in t.enforces if e.package == name and e.applies_to(version)), None)
