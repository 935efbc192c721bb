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
# The rule is this project's hard floor (docs/design.md, "The seed rule"), and MindSpeed's verl guide states it
# literally since commit 6810de8c (2025-09-22): "若使用的CANN版本高于8.3.RC1，vllm和vllm-ascend安装版本须大于等于0.9.1"
# ("CANN higher than 8.3.RC1: vllm and vllm-ascend must be 0.9.1 or newer"; 8.3.RC1 itself is excluded, as here).
# It is weaker than vllm-ascend's release matrix, where every release paired with a CANN newer than 8.3.RC1 is
# 0.11.0rc2 or newer, and verl's v0.6.1 stack pairs CANN 8.2.RC1 with vLLM 0.9.1.
SEED_RULE_SOURCE = (
    "https://github.com/Ascend/MindSpeed/blob/6810de8c41835cdf8dd2f3e14739971d799e0633/docs/user-guide/verl.md; "
    "https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/docs/source/community/versioning_policy.md; "
    "https://github.com/verl-project/verl/blob/v0.6.1/docs/ascend_tutorial/ascend_quick_start.rst"
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
