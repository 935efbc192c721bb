"""Hard rules shared by `doctor check` and the installer's resolver.

The seed rule lives here (not inside a check) so that `doctor install` can refuse a user pin that
violates it with the same words `doctor check` uses to report it.
"""

from __future__ import annotations

from packaging.version import Version

from doctor.knowledge.versions import CannVersion, parse_pkg_version

SEED_RULE_CANN = "8.3.RC1"
SEED_RULE_MIN = "0.9.1"
SEED_RULE_PACKAGES = ("vllm", "vllm-ascend")
SEED_RULE_SOURCE = (
    "project seed rule (DESIGN.md 'Knowledge': CANN newer than 8.3.RC1 => vllm and vllm-ascend >= 0.9.1); "
    "consistent with vllm-ascend versioning_policy.md, where every release paired with CANN > 8.3.RC1 is >= 0.11.0rc2 "
    "(shared/reference/cann_torchnpu_vllm.md §0.7, §1.1)"
)


def cann_newer_than_seed(cann: str | None) -> bool | None:
    """True when CANN is newer than 8.3.RC1 (semantic order: 8.3.RC1.alpha001 is older); None when the
    version cannot be read or names only a series ("8.3") that straddles the boundary."""
    c = CannVersion.try_parse(cann) if cann else None
    if c is None:
        return None
    seed = CannVersion(SEED_RULE_CANN)
    if c.is_ambiguous_against(seed):
        return None
    return c > seed


def seed_rule_violation(cann: str | None, pkg: str, version: str | None) -> str | None:
    """The seed rule as a predicate: a message when installing/keeping `pkg==version` on this CANN breaks
    it, else None (also None when a fact is unknown: no rule fires on unknowns).

    >>> seed_rule_violation("8.3.RC2", "vllm", "0.7.3")
    'vllm 0.7.3 is too old for CANN 8.3.RC2: CANN newer than 8.3.RC1 needs vllm and vllm-ascend 0.9.1 or newer'
    """
    name = pkg.lower().replace("_", "-")
    if name not in SEED_RULE_PACKAGES:
        return None
    if not cann_newer_than_seed(cann):
        return None
    v = parse_pkg_version(version)
    if v is None:
        return None
    if Version(v.public) >= Version(SEED_RULE_MIN):
        return None
    return (f"{name} {version} is too old for CANN {cann}: CANN newer than {SEED_RULE_CANN} needs vllm and "
            f"vllm-ascend {SEED_RULE_MIN} or newer")
