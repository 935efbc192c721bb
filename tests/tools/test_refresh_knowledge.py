"""`python -m tools.refresh_knowledge` on small upstream repositories built here: it reads the files our tables
cite at the cited tags, reports new releases, changed pins and missing rows, and says which differences our
data explains."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.knowledge.matrix import MindSpeedRow, TorchNpuRow, VllmAscendRow
from doctor.knowledge.profiles import load_profiles
from doctor.knowledge.releases import load_releases
from tools.refresh_knowledge import Knowledge, refresh
from tools.refresh_knowledge.gitdir import GitDir

ROOT = Path(__file__).parents[2]
V = "https://github.com/verl-project/verl/blob/v0.7.1"
DOC = "docs/ascend_tutorial/ascend_quick_start.rst"
QUICK_START = """Ascend quick start
=====

+---------------+----------------------+
| software      | version              |
+---------------+----------------------+
| Python        | >= 3.10, <3.12       |
+---------------+----------------------+
| CANN          | == 8.5.0             |
+---------------+----------------------+
| torch         | == 2.8.0             |
+---------------+----------------------+
| torch_npu     | == {torch_npu}       |
+---------------+----------------------+
| torchvision   | == 0.22.1            |
+---------------+----------------------+
| HDK           | >= 25.3.RC1          |
+---------------+----------------------+

.. code-block:: bash

    git clone --depth 1 --branch v0.13.0 https://github.com/vllm-project/vllm.git
    git clone -b releases/v0.13.0 https://github.com/vllm-project/vllm-ascend.git
    pip install mbridge
"""
PROFILE = f"""name = "verl-0.7.1-cann8.5.0-a2"
verl = "0.7.1"
source = "{V}/{DOC}"
chips = ["A2"]
arches = ["aarch64"]
python = ">=3.10,<3.12"
python_recommended = "3.11"

[cann]
version = "8.5.0"
min = "8.5.0"
max = "9.0.0"
driver_min = "25.3.rc1"

[pins]
torch = "==2.8.0"
torch-npu = "==2.8.0"
torchvision = "==0.22.1"
vllm = "==0.13.0"
vllm-ascend = "==0.13.*"

[git.mindspeed]
repo = "https://gitcode.com/Ascend/MindSpeed.git"
ref = "core_r0.16.0"
commit = "{{ms_commit}}"

[git.megatron-lm]
repo = "https://github.com/NVIDIA/Megatron-LM.git"
ref = "core_r0.16.0"

[provenance]
python = "{V}/{DOC}"
cann = "{V}/{DOC}"
driver_min = "{V}/{DOC}"
torch = "{V}/{DOC}"
torch-npu = "{V}/{DOC}"
torchvision = "{V}/{DOC}"
vllm = "{V}/{DOC}"
vllm-ascend = "{V}/{DOC}"
"""
RELEASES = """schema = 1
knowledge_date = "2026-12-01"
profiles_from = "0.7.1"

[[release]]
verl = "0.7.1"
date = "2026-03-16"
tag = "v0.7.1"
source = "https://github.com/verl-project/verl/tree/v0.7.1"
python = ">=3.10"
python_source = "https://github.com/verl-project/verl/blob/v0.7.1/pyproject.toml"
numpy = "<2.0.0"
numpy_source = "https://github.com/verl-project/verl/blob/v0.7.1/setup.py"
"""
POLICY = """| vLLM Ascend | vLLM | Python | Stable CANN | PyTorch/torch_npu | Triton Ascend |
|---|---|---|---|---|---|
| v0.13.0 | v0.13.0 | >= 3.10, < 3.12 | 8.5.0 | 2.8.0 / 2.8.0.post2 | 3.2.0 |
"""
ROW_0120 = "| v0.12.0rc1 | v0.12.0 | >= 3.10, < 3.12 | 8.3.RC2 | 2.8.0 / 2.8.0 | N/A |\n"


class Repo:
    """A real git repository built commit by commit (fixed identity, no user config)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                    "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path)}
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True,
                              env=self.env, timeout=30).stdout.strip()

    def commit(self, files: dict[str, str], *, tag: str | None = None, branch: str | None = None) -> str:
        if branch:
            self.git("checkout", "-q", "-B", branch)
        for rel, text in files.items():
            f = self.path / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"commit {tag or branch or ''}")
        if tag:
            self.git("tag", tag)
        return self.git("rev-parse", "HEAD")


@pytest.fixture()
def upstream(tmp_path: Path) -> dict[str, object]:
    verl = Repo(tmp_path / "verl")
    verl.commit({DOC: QUICK_START.format(torch_npu="2.8.0"), "pyproject.toml": 'requires-python = ">=3.10"\n',
                 "setup.py": 'install_requires = ["numpy<2.0.0", "transformers"]\n'}, tag="v0.7.1")
    va = Repo(tmp_path / "vllm-ascend")
    va.commit({"requirements.txt": "torch==2.8.0\ntorch-npu==2.8.0.post2\ntriton-ascend==3.2.0\n",
               "Dockerfile": "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nARG VLLM_TAG=v0.13.0\n",
               "Dockerfile.a3": "FROM quay.io/ascend/cann:8.5.0-a3-ubuntu22.04-py3.11\n",
               "docs/source/community/versioning_policy.md": POLICY}, tag="v0.13.0")
    pt = Repo(tmp_path / "pytorch")
    pt.commit({"COMPATIBILITY.en.md": "| 2.8.0.post2 | v2.8.0-7.3.0 | 2.8.0 | CANN 8.5.0 |\n"})
    pt.git("branch", "v2.8.0-7.3.0")
    ms = Repo(tmp_path / "MindSpeed")
    ms.commit({"README.md": "x\n"})
    ms_commit = ms.commit({"README.md": "git clone https://github.com/NVIDIA/Megatron-LM.git\ncd Megatron-LM\n"
                                        "git checkout core_r0.16.0\n", "setup.py": "__version__ = '0.16.0'\n"},
                          branch="core_r0.16.0")
    prof = tmp_path / "profiles"
    prof.mkdir()
    (prof / "verl-0.7.1-cann8.5.0-a2.toml").write_text(PROFILE.replace("{ms_commit}", ms_commit))
    (tmp_path / "releases.toml").write_text(RELEASES)
    return {"verl": verl, "vllm-ascend": va, "torch-npu": pt, "mindspeed": ms, "profiles": prof,
            "releases": tmp_path / "releases.toml"}


def knowledge(up: dict[str, object], **rows: tuple[object, ...]) -> Knowledge:
    va_src = "https://github.com/vllm-project/vllm-ascend/tree/v0.13.0"
    return Knowledge(
        releases=load_releases(up["releases"]), profiles=load_profiles(up["profiles"]),
        vllm_ascend=rows.get("va", (VllmAscendRow("0.13.0", "0.13.0", ">=3.10,<3.12", "8.5.0", "==2.8.0", "==2.8.0.post2",
                                                  True, va_src, triton_ascend="3.2.0"),)),
        torch_npu=rows.get("tn", (TorchNpuRow("2.8.0.post2", "8.5.0", "https://pypi.org/project/torch-npu/2.8.0.post2/"),)),
        mindspeed=rows.get("ms", (MindSpeedRow("core_r0.16.0", "0.16.0", "0.16", "core_r0.16.0",
                                               "https://github.com/Ascend/MindSpeed/blob/0000000/README.md"),)),
        date="2026-12-01")


def repos(up: dict[str, object]) -> dict[str, GitDir]:
    return {k: GitDir.open(str(up[k].path)) for k in ("verl", "vllm-ascend", "torch-npu", "mindspeed")}  # type: ignore[attr-defined]


def test_tables_that_match_the_upstream_files_report_nothing(upstream):
    found = refresh(knowledge(upstream), repos(upstream))
    assert found.diffs == [], [d.line() for d in found.diffs]
    assert found.checked["verl"] >= 8 and found.checked["vllm-ascend"] >= 1 and found.checked["mindspeed"] >= 2


def test_new_release_changed_pin_and_missing_rows_are_reported(upstream):
    verl, va = upstream["verl"], upstream["vllm-ascend"]
    verl.commit({"CHANGELOG": "0.7.2\n"}, tag="v0.7.2")  # type: ignore[attr-defined]
    va.commit({"requirements.txt": "torch==2.9.0\ntorch-npu==2.9.0\n",
               "docs/source/community/versioning_policy.md": POLICY + ROW_0120}, tag="v0.14.0rc1")  # type: ignore[attr-defined]
    upstream["torch-npu"].git("branch", "v2.9.0-7.3.0")  # type: ignore[attr-defined]
    upstream["torch-npu"].commit({"version.txt": "2.9.0.post1\n"}, branch="v2.9.0-7.3.0")  # type: ignore[attr-defined]
    found = refresh(knowledge(upstream), repos(upstream))
    got = {(d.kind, d.subject) for d in found.unexplained}
    assert ("new-release", "verl 0.7.2") in got
    assert ("missing-row", "vllm-ascend 0.14.0rc1") in got and ("missing-row", "vllm-ascend 0.12.0rc1") in got
    assert ("missing-row", "torch-npu 2.9.0.post1") in got


def test_a_changed_upstream_pin_is_unexplained_unless_the_profile_says_why(upstream):
    verl = upstream["verl"]
    verl.commit({DOC: QUICK_START.format(torch_npu="2.8.0.post2")})  # type: ignore[attr-defined]
    verl.git("tag", "-f", "v0.7.1")  # type: ignore[attr-defined]
    found = refresh(knowledge(upstream), repos(upstream))
    d = next(x for x in found.diffs if x.subject == "verl-0.7.1-cann8.5.0-a2 torch-npu")
    assert d.kind == "changed" and d.ours == "==2.8.0" and "2.8.0.post2" in str(d.upstream) and d.explained is None
    f = upstream["profiles"] / "verl-0.7.1-cann8.5.0-a2.toml"  # type: ignore[operator]
    f.write_text(f.read_text() + '\n[choices]\ntorch-npu = "the release image pins 2.8.0"\n')
    found = refresh(knowledge(upstream), repos(upstream))
    d = next(x for x in found.diffs if x.subject == "verl-0.7.1-cann8.5.0-a2 torch-npu")
    assert d.explained == "the release image pins 2.8.0" and not found.unexplained


def test_row_disagreeing_with_its_tag_and_unpinned_git_commit(upstream):
    rows = (VllmAscendRow("0.13.0", "0.13.0", ">=3.10,<3.12", "8.5.0", "==2.8.0", "==2.8.0", True,
                          "https://github.com/vllm-project/vllm-ascend/tree/v0.13.0", triton_ascend="3.2.0"),
            VllmAscendRow("0.12.0rc1", "0.12.0", ">=3.10,<3.12", "8.3.RC2", "==2.8.0", "==2.8.0", True,
                          "https://github.com/vllm-project/vllm-ascend/tree/v0.12.0rc1"),
            VllmAscendRow("0.30.0rc2", "0.30.0", ">=3.10,<3.13", "9.2.0", "==2.10.0", "==2.10.0.post4", True,
                          "https://pypi.org/project/vllm-ascend/0.30.0rc2/"))
    found = refresh(knowledge(upstream, va=rows), repos(upstream))
    subjects = {d.subject: d for d in found.diffs}
    assert subjects["vllm-ascend 0.13.0 torch-npu"].upstream == "==2.8.0.post2"
    assert subjects["vllm-ascend 0.12.0rc1"].kind == "not-in-clone"  # cited at a tag the clone lacks
    assert not any("0.30.0rc2" in s for s in subjects)  # read from PyPI: listed as not re-read, not a difference
    assert any("0.30.0rc2" in x for x in found.unchecked["vllm-ascend"])


def test_the_310p_image_cann_is_read_against_the_rows_310p_cann(upstream):
    """Dockerfile.310p's base image (quay.io/ascend/cann:9.1.0-beta.1-310p-...) is a CANN the row must document for
    310P: its own, or a CannAlt for the family; the pre-release label is kept (9.1.0-beta.1 is not 9.1.0)."""
    from doctor.knowledge.matrix import CannAlt

    upstream["vllm-ascend"].commit(  # type: ignore[attr-defined]
        {"Dockerfile.310p": "FROM quay.io/ascend/cann:9.1.0-beta.1-310p-ubuntu22.04-py3.11\n"})
    upstream["vllm-ascend"].git("tag", "-f", "v0.13.0")  # type: ignore[attr-defined]
    row = VllmAscendRow("0.13.0", "0.13.0", ">=3.10,<3.12", "8.5.0", "==2.8.0", "==2.8.0.post2", True,
                        "https://github.com/vllm-project/vllm-ascend/tree/v0.13.0", triton_ascend="3.2.0")
    found = refresh(knowledge(upstream, va=(row,)), repos(upstream))
    (d,) = [x for x in found.unexplained if x.subject == "vllm-ascend 0.13.0 cann (Dockerfile.310p)"]
    assert d.upstream == "9.1.0-beta.1" and d.where.endswith("/v0.13.0/Dockerfile.310p")
    for alt in (CannAlt("9.1.0-beta.1", "https://example.org/x", "x", on="310P"),
                CannAlt("9.1.0-beta.1", "https://example.org/x", "x", on="A2")):
        found = refresh(knowledge(upstream, va=(row._replace(cann_alts=(alt,)),)), repos(upstream))
        assert bool([x for x in found.diffs if "Dockerfile.310p" in x.subject]) == (alt.on != "310P")


def test_cli_exit_codes_and_output(upstream, tmp_path):
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tools.refresh_knowledge", "--verl", str(upstream["verl"].path),  # type: ignore[attr-defined]
                               "--profiles", str(upstream["profiles"]), "--releases", str(upstream["releases"]),
                               "--no-pypi", *extra],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)

    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 unexplained: the tables are current" in r.stdout and "vllm-ascend: not given" in r.stdout
    assert "pypi: not read (--no-pypi)" in r.stdout
    upstream["verl"].commit({"x": "1"}, tag="v0.8.0")  # type: ignore[attr-defined]
    r = run()
    assert r.returncode == 1 and "✗ new-release" in r.stdout and "verl 0.8.0" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tools.refresh_knowledge", "--verl", str(tmp_path / "nope"), "--no-pypi"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not a git directory" in r.stderr


def test_without_pyyaml_the_refresh_exits_2_naming_the_extra(upstream):
    """A missing dependency is 'could not do its job' (2), not 'unexplained differences' (1)."""
    code = ("import sys\nsys.modules['yaml'] = None  # as if PyYAML were not installed\n"
            "from tools.refresh_knowledge import main\n"
            f"raise SystemExit(main(['--verl', {str(upstream['verl'].path)!r}, '--profiles', {str(upstream['profiles'])!r}, "  # type: ignore[attr-defined]
            f"'--releases', {str(upstream['releases'])!r}, '--no-pypi']))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "PyYAML is not installed" in r.stderr and "verl-ascend-doctor[refresh]" in r.stderr


def test_an_internal_error_exits_2_not_1(upstream, monkeypatch, capsys):
    import tools.refresh_knowledge as rk

    def boom(*a: object, **k: object) -> None:
        raise KeyError("actor_rollout_ref")

    monkeypatch.setattr(rk, "refresh", boom)
    rc = rk.main(["--verl", str(upstream["verl"].path), "--profiles", str(upstream["profiles"]),  # type: ignore[attr-defined]
                  "--releases", str(upstream["releases"]), "--no-pypi"])
    assert rc == 2
    assert "could not finish (KeyError" in capsys.readouterr().err
