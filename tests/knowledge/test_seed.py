"""The seed rule as the function the installer calls."""

import pytest

from doctor.knowledge.seed import cann_newer_than_seed, seed_rule_violation


@pytest.mark.parametrize("cann,pkg,version,bad", [
    ("8.3.RC2", "vllm", "0.7.3", True),
    ("8.3.RC2", "vllm-ascend", "0.9.0rc2", True),
    ("8.5.0", "vllm_ascend", "0.9.1rc1", True),  # a pre-release of 0.9.1 is below 0.9.1
    ("8.5.0", "vllm", "0.9.1+empty", False),  # local build label ignored
    ("8.5.0", "vllm-ascend", "0.13.0", False),
    ("8.3.RC1", "vllm", "0.7.3", False),  # not newer than 8.3.RC1
    ("8.3.RC1.alpha001", "vllm", "0.7.3", False),  # alpha ships before the RC
    ("8.3", "vllm", "0.7.3", False),  # series only: cannot tell, no rule fires
    ("9.0.0-beta.1", "vllm", "0.8.5.post1", True),
    ("8.5.0", "torch", "2.1.0", False),  # not a seed-rule package
    (None, "vllm", "0.7.3", False),
    ("8.5.0", "vllm", None, False),
])
def test_seed_rule(cann, pkg, version, bad):
    msg = seed_rule_violation(cann, pkg, version)
    assert (msg is not None) == bad
    if bad:
        assert "0.9.1" in msg and str(cann) in msg


def test_cann_newer_than_seed_unknowns():
    assert cann_newer_than_seed("garbage") is None
    assert cann_newer_than_seed("8.5.0") is True
