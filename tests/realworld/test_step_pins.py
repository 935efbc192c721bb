"""The real-world tier's stand-in index must serve every triton-ascend / torch a plan's steps pin, including the pins
in a clone's requirement files at its commit (vllm-ascend releases/v0.23.0 pins triton-ascend 3.2.2 where the verl
v0.9.0 profile installs 3.2.1: with only the profile's pin stood in, the build-deps step found no 3.2.2)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from doctor.installers.plan import CLONE, EDITABLE, INSTALL, GitSource, Plan, Step, Target
from tests.realworld import upstream


def _repo(tmp: Path, text: str) -> tuple[Path, str]:
    work = tmp / "work"
    work.mkdir()
    (work / "requirements.txt").write_text(text)
    run = lambda *a: subprocess.run(["git", *a], cwd=work, check=True, capture_output=True, text=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("add", "-A")
    run("-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "-m", "one")
    sha = run("rev-parse", "HEAD").stdout.strip()
    (work / "requirements.txt").write_text("triton-ascend==9.9.9\n")  # after the pinned commit: not read
    run("commit", "-q", "-am", "two")
    return work / ".git", sha


def test_pins_of_a_clones_requirement_file_at_its_commit_are_stood_in(tmp_path: Path) -> None:
    git_dir, sha = _repo(tmp_path, "# build\ntorch==2.10.0\ntriton-ascend==3.2.2\nnumpy\n--extra-index-url https://example.invalid/simple\nxgrammar>=0.1.30  # build\n")
    src = GitSource(name="vllm-ascend", url="https://github.com/vllm-project/vllm-ascend.git", ref="releases/v0.23.0",
                    commit=sha)
    steps = [Step("clone-vllm-ascend", CLONE, "clone", source=src),
             Step("vllm-ascend-build-deps", INSTALL, "deps", requirements=("setuptools-scm",),
                  build_for="install-vllm-ascend", requirement_files=("requirements.txt",)),
             Step("install-vllm-ascend", EDITABLE, "install", source=src, editable_dist="vllm-ascend")]
    plan = Plan("p", "r", Target("/v/bin/python", "3.11", "x86_64", None, src_dir=str(tmp_path / "src")), steps=tuple(steps),
                pins=(("triton-ascend", "==3.2.1"), ("torch", "==2.10.0+cpu"), ("numpy", "==1.26.4")))
    up = upstream.Upstream(root=tmp_path, repos={"vllm-ascend": git_dir})
    got = upstream.step_pins(plan, up, ("torch", "torchvision", "torchaudio", "triton-ascend"))
    assert got == {("triton-ascend", "3.2.1"), ("triton-ascend", "3.2.2"), ("torch", "2.10.0"), ("torch", "2.10.0+cpu")}
