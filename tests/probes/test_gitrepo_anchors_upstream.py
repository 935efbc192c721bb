"""The vLLM anchors of the real vllm-ascend repository, read from a git mirror ($DOCTOR_REALWORLD_MIRRORS/
vllm-project+vllm-ascend, as the real-world install tier reads it): at every tag the mirror holds, the anchor files
are facts exactly from the first tag that carries them (v0.21.0rc1, https://github.com/vllm-project/vllm-ascend/pull/9801)
and a release tag's file names its own vLLM release; and a real clone at v0.23.0, importable through a .pth in a
plain venv whose vLLM is dist-info, is judged by the vLLM its tree names. Skipped where the mirror is not (CI).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from doctor.probes.gitrepo import VLLM_ANCHORS, vllm_anchors
from tests.fakes import write
from tests.probes.test_gitrepo_anchors import probe_checkout
from tests.realworld.upstream import mirror_git_dir
from tests.stacks import diagnose_dict

FIRST = (0, 21, 0)  # v0.21.0rc1
GIT_DIR = mirror_git_dir("vllm-project+vllm-ascend")
pytestmark = pytest.mark.skipif(GIT_DIR is None, reason="needs $DOCTOR_REALWORLD_MIRRORS/vllm-project+vllm-ascend")


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=300).stdout


def _release(tag: str) -> tuple[int, ...] | None:
    m = re.match(r"v(\d+)\.(\d+)\.(\d+)", tag)
    return tuple(int(x) for x in m.groups()) if m else None


def test_every_tag_states_its_vllm_from_v0_21_0rc1_on(tmp_path: Path) -> None:
    tags = [t for t in _git(f"--git-dir={GIT_DIR}", "tag").split() if _release(t)]
    assert len(tags) > 20, tags
    files = [rel for _, rel, _ in VLLM_ANCHORS]
    stated = 0
    for tag in tags:
        tree = tmp_path / tag
        tree.mkdir()
        present = _git(f"--git-dir={GIT_DIR}", "ls-tree", "--name-only", tag, "--", *files).split()
        for rel in present:
            write(tree / rel, _git(f"--git-dir={GIT_DIR}", "show", f"{tag}:{rel}"))
        errors: list[str] = []
        got = vllm_anchors(str(tree), errors)
        assert errors == [], (tag, errors)
        rel_tag = _release(tag)
        assert rel_tag is not None
        assert bool(got) == (rel_tag >= FIRST), (tag, got)
        if got:
            stated += 1
            assert set(got) == {"vllm_release_tag", "vllm_main_verified"}, (tag, got)
            named = _release(got["vllm_release_tag"])
            # a release pairs with the vLLM release of its own number (versioning policy); a candidate tag may still
            # name the previous one
            assert named is not None and named[:2] <= rel_tag[:2], (tag, got)
    assert stated >= 5


def test_a_real_clone_at_v0_23_0_is_judged_by_the_vllm_its_tree_names(tmp_path: Path) -> None:
    va = tmp_path / "vllm-ascend"
    _git("clone", "-q", "--shared", "--no-checkout", str(GIT_DIR), str(va))
    _git("-c", "advice.detachedHead=false", "checkout", "-q", "v0.23.0", cwd=va)
    d = probe_checkout(tmp_path, va, "0.27.1+empty")
    git = d["modules"]["vllm_ascend"]["git"]
    assert git["tag"] == "v0.23.0" and git["vllm_release_tag"] == "v0.23.0"
    found = {f.id: f for f in diagnose_dict(d).findings}
    f = found["vllm-ascend-vllm-anchor-mismatch"]
    assert f.severity.value == "error" and "v0.23.0" in f.title
    assert "vllm-ascend-vllm-mismatch" not in found  # one verdict per pair
    d = probe_checkout(tmp_path, va, "0.23.0+empty")
    ids = {f.id for f in diagnose_dict(d).findings}
    assert not ids & {"vllm-ascend-vllm-anchor-mismatch", "vllm-ascend-vllm-main-unverified", "vllm-ascend-vllm-mismatch"}
