"""What a refresh finds: differences between our tables and the upstream files, each explained or not.

A difference is *explained* when our data says why it differs (a profile's `[choices]` entry, a row's
alternative values, a fact read from PyPI rather than from git); everything else is for the maintainer to fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from doctor.knowledge.versions import CannVersion, DriverVersion

# kinds of difference, in the order they are printed
KINDS = ("new-release", "missing-row", "changed", "not-in-clone", "stale")


@dataclass(frozen=True)
class Difference:
    repo: str  # verl | vllm-ascend | torch-npu | mindspeed
    kind: str
    subject: str  # what of ours differs: "verl-0.7.1-cann8.5.0-a2 mbridge", "vllm-ascend 0.13.0rc2 torch-npu"
    ours: str | None
    upstream: str | None
    where: str  # the upstream file (URL at the ref read) or ref
    explained: str | None = None

    def line(self) -> str:
        mark = "·" if self.explained else "✗"
        vals = f"ours {self.ours or '-'}, upstream {self.upstream or '-'}"
        out = f"  {mark} {self.kind:<12} {self.subject}: {vals}  [{self.where}]"
        if self.explained:
            out += f"\n      explained: {self.explained}"
        return out


@dataclass
class Findings:
    """Differences plus counts of what was checked, per repository."""

    diffs: list[Difference] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    unchecked: dict[str, list[str]] = field(default_factory=dict)  # repo -> facts not checkable from git (with why)

    def add(self, d: Difference) -> None:
        self.diffs.append(d)

    def count(self, repo: str, n: int = 1) -> None:
        self.checked[repo] = self.checked.get(repo, 0) + n

    def skip(self, repo: str, what: str) -> None:
        self.unchecked.setdefault(repo, []).append(what)

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.diffs if not d.explained]


# -- comparing values as upstream docs spell them ----------------------------------------------------------

_NOPIN = {"", "latest", "latest release", "最新版本"}


def upstream_spec(text: str | None) -> str | None:
    """Doc spelling -> a specifier or None for unpinned: '== 2.5.1' -> '==2.5.1', 'v4.52.4' -> '==4.52.4',
    '>=v4.57.1' -> '>=4.57.1', '0.20.1+cpu' -> '==0.20.1', 'latest release' -> None."""
    if text is None:
        return None
    t = text.strip().lower().replace(" ", "")
    if t in _NOPIN:
        return None
    t = re.sub(r"(?<=[<>=!~])v(?=\d)", "", t)
    t = re.sub(r"^v(?=\d)", "", t)
    t = re.sub(r"\+cpu\b", "", t)
    if re.match(r"^\d", t):
        t = "==" + t
    return t


def ref_version(ref: str | None) -> str | None:
    """A git ref naming a release -> its version: 'v0.23.0' / 'releases/v0.23.0' -> '0.23.0'."""
    m = re.search(r"v?(\d+\.\d+\.\d+(?:\.\d+)?(?:rc\d+|\.post\d+)?)$", ref or "")
    return m.group(1) if m else None


def same_pin(ours: str | None, upstream: str | None) -> bool:
    """A profile pin against the upstream's: both unpinned; an exact upstream version our pin allows exactly
    (==0.13.* allows 0.13.0); or equal specifier sets."""
    if upstream is None or ours is None:
        return upstream is None and ours is None
    try:
        u, o = SpecifierSet(upstream), SpecifierSet(ours)
    except InvalidSpecifier:
        return ours.replace(" ", "") == upstream.replace(" ", "")
    exact = [s for s in u if s.operator == "=="] if len(u) == 1 else []
    if exact and "*" not in exact[0].version:
        return any(s.operator == "==" for s in o) and o.contains(exact[0].version, prereleases=True)
    return u == o


def python_spec(text: str | None) -> str | None:
    """'== 3.10' / '3.11' -> '==3.10.*'; '>=3.10, <3.12' -> '>=3.10,<3.12'."""
    s = upstream_spec(text)
    if s and re.match(r"^==\d+\.\d+$", s):
        s += ".*"
    return s


def same_spec(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a == b
    try:
        return SpecifierSet(a) == SpecifierSet(b)
    except InvalidSpecifier:
        return a.replace(" ", "") == b.replace(" ", "")


def cann_text(text: str | None) -> str:
    """A doc CANN cell -> the version, or 'unknown' when it names none ('to be filled in at release')."""
    t = (text or "").strip().lstrip("=>< ").strip()
    return t if CannVersion.try_parse(t) is not None else "unknown"


def same_cann(a: str | None, b: str | None) -> bool:
    ca, cb = CannVersion.try_parse(a or ""), CannVersion.try_parse(b or "")
    if ca is None or cb is None:
        return (a or "unknown").lower() == (b or "unknown").lower()
    return ca == cb


def same_driver(a: str | None, b: str | None) -> bool:
    da, db = DriverVersion.try_parse((a or "").lstrip("=>< ")), DriverVersion.try_parse((b or "").lstrip("=>< "))
    return da is not None and db is not None and da == db


def version_key(v: str) -> Version:
    try:
        return Version(v)
    except InvalidVersion:
        return Version("0")
