"""Version types for what PEP 440 cannot order: CANN toolkits, Ascend drivers, and package strings as
Ascend docs spell them.

CANN order (docs/versions.md: the release order, chosen over torch_npu's numeric formula because alpha
builds ship *before* their RC):

    8.0.T13 < 8.0.RC1 < 8.0.RC2.alpha003 < 8.0.RC2 < 8.0.RC3 < 8.0.0 < 8.1.RC1 < ... < 8.5.0
    9.0.0~weekly.X < 9.0.0-alpha.1 < 9.0.0-beta.1 < 9.0.0-rc.1 < 9.0.0 < 9.0.1

"RC era" versions (X.Y.RCn) of a series sort below its "final era" (X.Y.Z). A two-part string such as
"8.3" (hand-written snapshots) names a whole series: `precision == 2` and comparisons against a full
version of the same series are ambiguous, which `is_ambiguous_against` lets rules check first.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# stage weights inside one release: dev < alpha < beta < rc < final < post
_STAGE = {"dev": -4, "t": -4, "weekly": -4, "alpha": -3, "a": -3, "beta": -2, "b": -2, "rc": -1, "": 0}

_ASCEND_RE = re.compile(
    r"""^\s*v?(?P<maj>\d+)\.(?P<min>\d+)
    (?:
        \.rc(?P<rc>\d+)(?:[.\-]?(?P<rcpre>alpha|beta|a|b)\.?(?P<rcpren>\d+))?      # 8.0.RC2 / 8.0.RC2.alpha003
      | \.t(?P<t>\d+)                                                           # 8.0.T13
      | \.(?P<patch>\d+)
        (?:[.\-]?(?P<pre>alpha|beta|rc|a|b)[.\-]?(?P<pren>\d+)?)?               # 9.0.0-beta.1 / 7.0.1.beta1
        (?:~weekly\.(?P<weekly>\d+)(?:\.(?P<weeklyn>\d+))?)?                    # 9.2.0~weekly.20260902.01
    )?
    (?P<extra>(?:\.[0-9a-z]+)*)                                                 # .1 / .0.B028 / .1.220
    \s*$""",
    re.X | re.I,
)


@functools.total_ordering
class _AscendVersion:
    """Shared grammar of CANN toolkit and Ascend driver versions; subclasses are not comparable to each other."""

    kind = "ascend"
    __slots__ = ("text", "major", "minor", "precision", "stage", "_key")

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise InvalidVersion(f"{self.kind} version must be a string, got {type(text).__name__}")
        m = _ASCEND_RE.match(text)
        if not m:
            raise InvalidVersion(f"not a {self.kind} version: {text!r}")
        self.text = text.strip()
        self.major = int(m["maj"])
        self.minor = int(m["min"])
        extra = tuple(_extra_key(p) for p in (m["extra"] or "").split(".") if p)
        if m["rc"] is not None:
            stage = _STAGE[m["rcpre"].lower()] if m["rcpre"] else 0
            n = int(m["rcpren"]) if m["rcpren"] else 0
            body: tuple[Any, ...] = (0, int(m["rc"]), stage, n)
            self.precision = 3
        elif m["t"] is not None:
            body = (0, 0, _STAGE["t"], int(m["t"]))
            self.precision = 3
        elif m["patch"] is not None:
            if m["weekly"] is not None:
                body = (1, int(m["patch"]), _STAGE["weekly"], int(m["weekly"]), int(m["weeklyn"] or 0))
            elif m["pre"]:
                body = (1, int(m["patch"]), _STAGE[m["pre"].lower()], int(m["pren"] or 0))
            else:
                body = (1, int(m["patch"]), 0, 0)
            self.precision = 3
        else:
            if extra:
                raise InvalidVersion(f"not a {self.kind} version: {text!r}")
            body = (-1,)
            self.precision = 2
        # alpha / beta / T / weekly / -rc.N builds sort below their release (stage < 0); a series ("8.3") is none
        self.stage = body[2] if len(body) > 2 else 0
        self._key = (self.major, self.minor, *body, extra)

    @classmethod
    def parse(cls, text: str) -> Any:
        return cls(text)

    @classmethod
    def try_parse(cls, text: Any) -> Any:
        try:
            return cls(text)
        except (InvalidVersion, TypeError):
            return None

    @property
    def is_prerelease(self) -> bool:
        """An alpha / beta / T / weekly build or a 9.x "-rc.N", not the release it precedes (8.3.RC1 itself is a
        release: CANN's RC-era versions are what Ascend publishes)."""
        return self.stage < 0

    @property
    def series(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def is_ambiguous_against(self, other: _AscendVersion) -> bool:
        """True when one side names only a series ("8.3") and the other is inside that series."""
        return (self.precision == 2 or other.precision == 2) and self.series == other.series and self.precision != other.precision

    def _check(self, other: object) -> _AscendVersion:
        if isinstance(other, str):
            return type(self)(other)
        if type(other) is not type(self):
            raise TypeError(f"cannot compare {self.kind} version with {type(other).__name__}")
        return other  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        try:
            o = self._check(other)
        except (TypeError, InvalidVersion):
            return NotImplemented
        return self._key == o._key

    def __lt__(self, other: object) -> bool:
        o = self._check(other)
        return self._key < o._key

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


def _extra_key(part: str) -> tuple[int, Any]:
    return (1, int(part)) if part.isdigit() else (0, part.lower())


class CannVersion(_AscendVersion):
    """A CANN toolkit version as printed: 8.0.RC2.alpha003, 8.3.RC1, 8.5.0, 9.0.0-beta.1, 8.0.T13 ..."""

    kind = "CANN"


class DriverVersion(_AscendVersion):
    """An Ascend driver (HDK) version: 24.1.rc3, 24.1.rc3.5, 25.0.rc1.1, 25.2.0, 26.0.rc1 ..."""

    kind = "driver"


_ASCEND_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")
_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq, "!=": operator.ne}


def ascend_satisfies(version: _AscendVersion, spec: str) -> bool | None:
    """Does a CANN or driver version satisfy `spec`, clauses such as ">=8.5.0,<9.0.0-beta.1" read as versions of
    the same kind (PEP 440 specifiers cannot read 8.3.RC1)? None when a clause cannot be read."""
    kind = type(version)
    for clause in spec.split(","):
        m = _ASCEND_CLAUSE.match(clause)
        bound = kind.try_parse(m.group(2)) if m else None
        if m is None or bound is None:
            return None
        if not _OPS[m.group(1)](version, bound):
            return False
    return True


_PAREN = re.compile(r"\s*\(.*\)\s*$")


def parse_pkg_version(text: Any) -> Version | None:
    """A Python package version as installed or as Ascend docs write it ("2.1.0.rc1", "1.11.0.rc2 (beta)",
    "2.5.1+cpu.cxx11.abi", "0.9.1+empty"); None when it is not a version at all."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _pkg_version(text)


def untagged_build(v: Version | None) -> bool:
    """setuptools-scm's version for a checkout with no tag in reach (a shallow or tag-less clone): tag 0.0 assumed,
    so 0.1.dev<commits>+g<sha> (https://github.com/pytest-dev/pytest/pull/5652: pytest-0.1.dev57+g28ddc62). It
    names the commit built, never a release: no version rule can judge it."""
    return (v is not None and v.release in ((0, 1), (0, 1, 0)) and v.dev is not None
            and any(re.fullmatch(r"g[0-9a-f]{7,40}", part) for part in (v.local or "").split(".")))


# A check run reads the same few hundred version strings again and again (the env-values table alone asks ~1000
# times whether a release is in a range): each string is parsed once per process. A Version is immutable.
@functools.lru_cache(maxsize=4096)
def _pkg_version(text: str) -> Version | None:
    try:
        return Version(_PAREN.sub("", text.strip()))
    except InvalidVersion:
        return None


def release(v: Version, n: int = 3) -> tuple[int, ...]:
    """The first `n` release numbers, padded with zeros: 2.5 -> (2, 5, 0); 2.5.1.post1 -> (2, 5, 1)."""
    return tuple((list(v.release) + [0] * n)[:n])


def base_version(text: Any) -> str | None:
    """major.minor.micro of a package version: what torch and torch-npu must share."""
    v = parse_pkg_version(text)
    if v is None:
        return None
    return ".".join(str(x) for x in release(v))


def pkg_satisfies(version: Any, spec: str, *, prereleases: bool = True) -> bool | None:
    """Does an installed version satisfy a PEP 440 specifier? None when either side cannot be read.

    Local labels are ignored by `==X.Y.Z` (PEP 440), so torch 2.5.1+cpu satisfies ==2.5.1."""
    if not isinstance(version, str):
        return None  # what parse_pkg_version says of it
    return _satisfies(version, spec, prereleases)


@functools.lru_cache(maxsize=8192)
def _satisfies(version: str, spec: str, prereleases: bool) -> bool | None:
    """pkg_satisfies on text, answered once per process: validating the env-values table alone asks ~550
    times, ~300 of them distinct."""
    v = parse_pkg_version(version)
    if v is None:
        return None
    s = _specifier_set(spec)
    return None if s is None else s.contains(v, prereleases=prereleases)


def valid_specifier(spec: str) -> bool:
    return _specifier_set(spec) is not None


@functools.lru_cache(maxsize=4096)
def _specifier_set(spec: str) -> SpecifierSet | None:
    """The parsed specifier, once per text per process (never handed out: a SpecifierSet is not frozen)."""
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None
