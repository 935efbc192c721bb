"""A vllm-ascend checkout's own vLLM refs (`.github/vllm-release-tag.commit`, `.github/vllm-main-verified.commit`,
https://github.com/vllm-project/vllm-ascend/pull/9801), read by the real gitrepo code from a real git work tree,
and through the real target probe (a venv whose vLLM is fake dist-info read by importlib.metadata) into a
snapshot the vllm-ascend-vllm-anchor check judges."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.probes.gitrepo import add_git_facts, vllm_anchors
from doctor.probes.pyenv import run_target_probe, to_snapshot_parts
from tests.fakes import make_git_repo, make_package, make_site_packages, write
from tests.stacks import diagnose_dict

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1"}
MAIN = "cdc4824a21eaa986d4d1fee90a7e6465c9f706e6"  # main's vllm-main-verified.commit at 2026-08-22


def _checkout(root: Path, release: bytes | None, main: bytes | None = None, *, tag: str | None = None) -> str:
    """A vllm-ascend work tree: the package dir and the anchor files as given (None: no such file)."""
    make_package(root, "vllm_ascend", {"_build_info.py": "__device_type__ = 'A2'\n"})
    if release is not None:
        (root / ".github").mkdir(exist_ok=True)
        (root / ".github" / "vllm-release-tag.commit").write_bytes(release)
    if main is not None:
        (root / ".github").mkdir(exist_ok=True)
        (root / ".github" / "vllm-main-verified.commit").write_bytes(main)
    return make_git_repo(root, tag=tag)


def _git_of(root: Path) -> tuple[dict[str, Any], list[str]]:
    doc: dict[str, Any] = {"modules": {"vllm_ascend": {"kind": "package", "origins": [str(root / "vllm_ascend")]}}}
    errors = add_git_facts(doc, ENV)
    return doc["modules"]["vllm_ascend"].get("git", {}), errors


def test_a_tagged_checkout_names_its_vllm_release_and_main_commit(tmp_path: Path) -> None:
    # the bytes of tag v0.23.0: the release file ends in a newline, the main file has none
    sha = _checkout(tmp_path / "va", b"v0.23.0\n", b"ee0da84ab9e04ac7610e28580af62c365e898389", tag="v0.23.0")
    git, errors = _git_of(tmp_path / "va")
    assert errors == []
    assert git["commit"] == sha and git["tag"] == "v0.23.0"
    assert git["vllm_release_tag"] == "v0.23.0"
    assert git["vllm_main_verified"] == "ee0da84ab9e04ac7610e28580af62c365e898389"


@pytest.mark.parametrize(("release", "main", "want", "reasons"), [
    (None, None, {}, 0),  # a tree before v0.21.0rc1: no file, no fact, no complaint
    (b"", None, {}, 1),  # empty
    (b"  \n\t", b"\n", {}, 2),  # whitespace only
    (b"main\n", MAIN.encode(), {"vllm_main_verified": MAIN}, 1),  # a branch name is not a release tag
    (b"0.23.0\n", b"zzzz", {}, 2),  # CI wants the leading v; not hex
    (b"\xff\xfe\x00", None, {}, 1),  # not text
    (b"v0.23.0" + b" " * 300, None, {}, 1),  # longer than such a file ever is
    (b" v0.27.1 \r\n", b" cdc4824\n", {"vllm_release_tag": "v0.27.1", "vllm_main_verified": "cdc4824"}, 0),
    (b"v0.11.0rc3\n", None, {}, 1),  # CI's pattern needs a '.' or '-' before any suffix
    (b"v0.9.2-rc1\n", None, {"vllm_release_tag": "v0.9.2-rc1"}, 0),
])
def test_odd_anchor_files_are_not_facts_and_say_why(tmp_path: Path, release: bytes | None, main: bytes | None,
                                                     want: dict[str, str], reasons: int) -> None:
    _checkout(tmp_path / "va", release, main)
    git, errors = _git_of(tmp_path / "va")
    assert {k: v for k, v in git.items() if k.startswith("vllm_")} == want
    assert len(errors) == reasons and all("not recorded" in e for e in errors), errors
    assert git["commit"]  # the other git facts stand


def test_an_unreadable_anchor_is_a_reason_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "va"
    _checkout(root, None)
    (root / ".github" / "vllm-release-tag.commit").mkdir(parents=True)  # a directory where the file should be
    errors: list[str] = []
    assert vllm_anchors(str(root), errors) == {}
    assert len(errors) == 1 and "vllm-release-tag.commit" in errors[0]


def test_only_vllm_ascend_reads_the_files(tmp_path: Path) -> None:
    """Megatron-LM or MindSpeed checkouts pay for no extra read: the files mean something in vllm-ascend only."""
    root = tmp_path / "other"
    make_package(root, "mindspeed", {})
    write(root / ".github" / "vllm-release-tag.commit", "v0.23.0\n")
    make_git_repo(root)
    doc: dict[str, Any] = {"modules": {"mindspeed": {"kind": "package", "origins": [str(root / "mindspeed")]}}}
    assert add_git_facts(doc, ENV) == []
    assert "vllm_release_tag" not in doc["modules"]["mindspeed"]["git"]


def probe_checkout(tmp_path: Path, va: Path, vllm_version: str) -> dict[str, Any]:
    """The snapshot of a throw-away venv (made once per tmp_path): vLLM as fake dist-info of `vllm_version` (real
    importlib.metadata reads it; a previous one is replaced), vllm_ascend importable from the checkout `va` through a
    path line in a .pth (no dist-info, as with a bare clone on the path). tests/probes/test_gitrepo_anchors_upstream.py
    runs it on a clone of the real repository."""
    venv = tmp_path / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    for old in site.glob("vllm-*.dist-info"):
        shutil.rmtree(old)
    make_site_packages(site, {"vllm": vllm_version})
    write(site / "vllm_ascend_src.pth", f"{va}\n")
    env = {**ENV, "HOME": str(tmp_path)}
    doc, err, _ = run_target_probe(str(venv / "bin" / "python"), environ=env, cwd=str(tmp_path), timeout=120)
    assert err is None and doc is not None, err
    assert add_git_facts(doc, env) == []
    return {"schema": "doctor.snapshot/1", "complete": True, **to_snapshot_parts(doc)}


def test_through_the_real_probe_the_checkouts_release_decides_the_pair(tmp_path: Path) -> None:
    va = tmp_path / "vllm-ascend"
    sha = _checkout(va, b"v0.23.0\n", b"ee0da84ab9e04ac7610e28580af62c365e898389", tag="v0.23.0")
    d = probe_checkout(tmp_path, va, "0.27.1+empty")
    git = d["modules"]["vllm_ascend"]["git"]
    assert (git["vllm_release_tag"], git["commit"]) == ("v0.23.0", sha)
    found = {f.id: f for f in diagnose_dict(d).findings}
    f = found["vllm-ascend-vllm-anchor-mismatch"]
    assert f.severity.value == "error" and "0.27.1+empty" in f.title and "v0.23.0" in f.title
    assert f.source.startswith(f"https://github.com/vllm-project/vllm-ascend/blob/{sha}/.github/vllm-release-tag.commit")
    assert "--branch v0.23.0" in f.fix.text and "VLLM_TARGET_DEVICE=empty" in f.fix.text
    # the same venv with the vLLM the tree names: nothing about the pair
    d = probe_checkout(tmp_path, va, "0.23.0+empty")
    ids = {f.id for f in diagnose_dict(d).findings}
    assert not ids & {"vllm-ascend-vllm-anchor-mismatch", "vllm-ascend-vllm-main-unverified", "vllm-ascend-vllm-mismatch"}
