"""A real vLLM sdist read from PyPI the way the knowledge refresh reads it (part of the real-world tier:
DOCTOR_REALWORLD=1; streams the start of vllm-0.10.0.tar.gz, 9 MB at most, not in .ci/run): what vLLM 0.10.0 installs
when built with VLLM_TARGET_DEVICE=empty is what profiles/requirements-git.toml ships for it."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                                reason="real PyPI download: run with DOCTOR_REALWORLD=1 (nox -s realworld)")


def test_vllm_0_10_0s_sdist_declares_what_the_table_ships():
    from doctor.knowledge.requirements_git import load
    from tools.refresh_knowledge import pypi, vllm_empty

    got = vllm_empty.read(pypi.Http(), ["0.10.0"])["0.10.0"]
    assert isinstance(got, dict), got
    assert got["path"] == "requirements/common.txt" and got["sdist"] == "vllm-0.10.0.tar.gz"
    assert "transformers >= 4.53.2" in got["requires_dist"]
    ours = load().vllm_empty_target("0.10.0")
    assert ours is not None
    assert (list(ours.requires_dist), ours.requires_python) == (got["requires_dist"], got["requires_python"])
