"""`pip check` semantics over a snapshot: which requirements the installed distributions declare and the
installed set does not meet.

What the distributions declare is the first ground for a verdict (issue 22): each one's Requires-Python and
Requires-Dist, with markers and extras, as the in-target probe read them from its METADATA (snapshot rule 7).
The evaluation follows pip's own `pip check` (pip/_internal/operations/check.py): a requirement whose marker
is false for the target interpreter is ignored, a missing requirement is one whose name is not installed, and a
version is compared with the specifier allowing pre-releases (`contains(version, prereleases=True)`).
Beyond pip check, the extras other installed distributions ask for (`ray[default]`) are active, so their
requirements count too.

Markers are evaluated for the *snapshot's* interpreter and host, never the doctor's own: a marker that needs a
fact the snapshot does not hold (e.g. platform_machine with no `host.arch`) leaves that requirement unknown and
silent. Pure logic: the snapshot is the only input.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from doctor.snapshot.model import Snapshot, known


@dataclass(frozen=True)
class Unmet:
    """One requirement the installed set does not meet.

    kind: "missing" (the required distribution is not installed), "version" (installed at a version outside
    the specifier) or "python" (the interpreter is outside the declaring distribution's Requires-Python)."""

    kind: str
    package: str  # the declaring distribution (PEP 503 name)
    version: str | None  # its installed version
    requirement: str  # the Requires-Dist line (or the Requires-Python specifier) as declared
    name: str  # the required distribution (PEP 503 name); "python" for kind == "python"
    installed: str | None  # what is installed of it (None: nothing)
    metadata: str | None  # the METADATA file the declaration was read from
    extra: str | None = None  # the extra that activated the requirement, if any


def marker_environment(snap: Snapshot) -> dict[str, str]:
    """The marker variables the snapshot knows (PEP 508), for its interpreter and host. Unknown ones are left
    out, so a marker that needs them is not evaluated against the doctor's own interpreter by accident."""
    env: dict[str, str] = {}
    py = snap.python if known(snap.python) else None
    ver = getattr(py, "version", None)
    if isinstance(ver, str) and ver:
        try:
            v = Version(ver)
            env["python_version"] = f"{v.major}.{v.minor}"
            env["python_full_version"] = ver
        except InvalidVersion:
            pass
    impl = getattr(py, "implementation", None)
    if isinstance(impl, str) and impl:
        env["platform_python_implementation"] = impl
        env["implementation_name"] = impl.lower()
    host = snap.host if known(snap.host) else None
    arch = getattr(host, "arch", None)
    if isinstance(arch, str) and arch:
        env["platform_machine"] = arch
    # Snapshots are of Linux hosts (the probes read /proc, /sys and the Ascend tree): what CPython reports there.
    env.update(sys_platform="linux", platform_system="Linux", os_name="posix")
    kernel = getattr(host, "kernel", None)
    if isinstance(kernel, str) and kernel:
        env["platform_release"] = kernel
    return env


_MARKER_VARS = ("python_version", "python_full_version", "platform_python_implementation", "implementation_name",
                "platform_machine", "sys_platform", "platform_system", "os_name", "platform_release",
                "platform_version", "implementation_version")


def marker_applies(marker: Marker | None, env: Mapping[str, str], extra: str = "") -> bool | None:
    """True / False for the target, None when the marker needs a fact the environment lacks."""
    if marker is None:
        return True
    text = str(marker)
    full = dict(env)
    for var in _MARKER_VARS:
        if var in text and var not in full:
            return None
    # variables the marker does not use still need values for packaging; they cannot change the result
    for var in _MARKER_VARS:
        full.setdefault(var, "")
    full["extra"] = extra
    try:
        return bool(marker.evaluate(full))
    except (UndefinedComparison, UndefinedEnvironmentName, InvalidMarker, ValueError, TypeError):
        return None


@lru_cache(maxsize=8192)
def _parse(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


@lru_cache(maxsize=1024)
def _marker(text: str) -> Marker | None:
    try:
        return Marker(text)
    except InvalidMarker:
        return None


class _Applies:
    """Marker verdicts for one environment, by marker text: a target's ~1500 Requires-Dist lines share a few
    dozen distinct markers (ray alone has ~300 lines under `extra == "..."`), and a requirement is parsed only
    when its marker holds. This keeps the whole evaluation to a few milliseconds."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.cache: dict[tuple[str, str], bool | None] = {}

    def __call__(self, line: str, extra: str = "") -> Requirement | None:
        """The parsed requirement when its marker holds for the target with this extra active, else None (a
        false marker, one needing an unknown fact, or an unparsable line)."""
        _, sep, text = line.partition(";")
        text = text.strip()
        if sep and text:
            if "extra" not in text:
                extra = ""  # the verdict does not depend on it: share the cache entry
            key = (text, extra)
            if key not in self.cache:
                m = _marker(text)
                self.cache[key] = None if m is None else marker_applies(m, self.env, extra)
            if self.cache[key] is not True:
                return None
        return _parse(line)


def active_extras(snap: Snapshot, env: Mapping[str, str], applies: _Applies | None = None) -> dict[str, set[str]]:
    """dist -> extras some installed distribution asks of it (`ray[default]` makes ray's `default` active),
    to a fixed point: an extra's own requirements may ask for more."""
    pkgs = snap.packages if known(snap.packages) else {}
    applies = applies or _Applies(env)
    active: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for name, pkg in pkgs.items():
            lines = [x for x in (pkg.requires_dist if known(pkg.requires_dist) else []) if "[" in x.partition(";")[0]]
            if not lines:
                continue
            for extra in ("", *sorted(active.get(name, ()))):
                for line in lines:
                    req = applies(line, extra)
                    if req is None or not req.extras:
                        continue
                    target = canonicalize_name(req.name)
                    if target not in pkgs:
                        continue
                    new = {canonicalize_name(e) for e in req.extras} - active.get(target, set())
                    if new:
                        active.setdefault(target, set()).update(new)
                        changed = True
    return active


def _contains(spec: SpecifierSet, version: str) -> bool | None:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return None


def unmet(snap: Snapshot) -> Iterator[Unmet]:
    """Every declared requirement the snapshot's installed set does not meet, in package order. Silent for
    what the snapshot cannot tell: a package without `requires_dist`, a version not recorded, a missing
    package on an incomplete snapshot, a marker needing an unknown fact."""
    if not known(snap.packages):
        return
    pkgs = snap.packages
    env = marker_environment(snap)
    applies = _Applies(env)
    extras = active_extras(snap, env, applies)
    pyver = env.get("python_full_version")
    for name in sorted(pkgs):
        pkg = pkgs[name]
        meta = pkg.metadata if known(pkg.metadata) else None
        rp = pkg.requires_python if known(pkg.requires_python) else None
        if rp and pyver:
            try:
                ok = _contains(SpecifierSet(rp), pyver)
            except InvalidSpecifier:
                ok = None
            if ok is False:
                yield Unmet("python", name, pkg.version, rp, "python", pyver, meta)
        if not known(pkg.requires_dist):
            continue
        seen: set[str] = set()
        for extra in ("", *sorted(extras.get(name, ()))):
            for line in pkg.requires_dist:
                if line in seen:
                    continue
                req = applies(line, extra)
                if req is None:
                    continue
                seen.add(line)
                target = canonicalize_name(req.name)
                dep = pkgs.get(target)
                if dep is None:
                    if snap.is_complete:
                        yield Unmet("missing", name, pkg.version, line, target, None, meta, extra or None)
                    continue
                if dep.version is None or not str(req.specifier):
                    continue
                if _contains(req.specifier, dep.version) is False:
                    yield Unmet("version", name, pkg.version, line, target, dep.version, meta, extra or None)


def requirement_names(snap: Snapshot, package: str) -> set[str]:
    """The distributions `package` requires for the target (base requirements whose marker holds): what
    "on verl's import path" widens to."""
    pkg = snap.packages.get(canonicalize_name(package)) if known(snap.packages) else None
    if pkg is None or not known(pkg.requires_dist):
        return set()
    applies = _Applies(marker_environment(snap))
    out: set[str] = set()
    for line in pkg.requires_dist:
        req = applies(line)
        if req is not None:
            out.add(canonicalize_name(req.name))
    return out


def bare(requirement: str) -> str:
    """`name[extras]specifier` without the marker: what a fix installs."""
    req = _parse(requirement)
    if req is None:
        return requirement
    return f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"


def same_requirement(a: str, b: str) -> bool:
    """Two requirement strings name the same distribution with the same specifier (markers aside); a bare
    name matches any specifier of that name."""
    ra, rb = _parse(a), _parse(b)
    if ra is None or rb is None:
        return a.strip() == b.strip()
    if canonicalize_name(ra.name) != canonicalize_name(rb.name):
        return False
    return not str(ra.specifier) or not str(rb.specifier) or ra.specifier == rb.specifier
