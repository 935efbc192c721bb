"""The declarations of the stacks' source builds (vllm-ascend, verl) read from git the way their setup.py builds them,
compared with profiles/requirements-git.toml and written back into it (tools/refresh_knowledge/git_requirements.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from doctor.knowledge.requirements_git import load, parse
from tests.tools.test_refresh_knowledge import Repo
from tools.refresh_knowledge import git_requirements as gr
from tools.refresh_knowledge.diff import Findings
from tools.refresh_knowledge.gitdir import GitDir

ROOT = Path(__file__).parents[2]

VA_SETUP = '''
def get_requirements():
    def _read_requirements(filename):
        ...
    requirements = _read_requirements("requirements.txt")
    return requirements

setup(name="vllm_ascend", python_requires=">=3.10", install_requires=get_requirements())
'''
VERL_SETUP = '''
install_requires = ["numpy<2.0.0", "ray[default]>=2.41.0"]
VLLM_REQUIRES = ["vllm>=0.8.5,<=0.11.0"]
TQ_REQUIRES = ["TransferQueue @ git+https://github.com/TransferQueue/TransferQueue.git@68c04e7"]
extras_require = {"vllm": VLLM_REQUIRES, "transferqueue": TQ_REQUIRES}
setup(name="verl", install_requires=install_requires, extras_require=extras_require)
'''


@pytest.fixture()
def clones(tmp_path: Path) -> dict[str, object]:
    va = Repo(tmp_path / "vllm-ascend")
    va_commit = va.commit({"setup.py": VA_SETUP,
                           "requirements.txt": "# comment\ncmake>=3.26\n--extra-index-url https://x\n-r requirements/common.txt\n"
                                               "torch-npu==2.8.0.post2  # the pin\n\ntransformers<4.53.0\n",
                           "requirements/common.txt": "numpy<2.0.0\n"})
    verl = Repo(tmp_path / "verl")
    verl_commit = verl.commit({"setup.py": VERL_SETUP, "pyproject.toml": '[project]\nrequires-python = ">=3.10"\n'})
    git = {"vllm-ascend": SimpleNamespace(commit=va_commit, ref="releases/v0.13.0", version="0.13.1.dev14", install=None),
           "verl": SimpleNamespace(commit=verl_commit, ref="v0.6.1", version="0.6.1", install=None),
           "vllm": SimpleNamespace(commit=va_commit, ref="v0.13.0", version="0.13.0", install="empty-target")}
    profile = SimpleNamespace(name="verl-0.7.1-cann8.5.0-a2", git=git)
    return {"repos": {"vllm-ascend": GitDir.open(str(va.path)), "verl": GitDir.open(str(verl.path))},
            "profiles": [profile], "va": va_commit, "verl": verl_commit}


def test_each_setup_py_is_read_the_way_it_builds_its_requirements(clones):
    repos = clones["repos"]
    va = gr.declared(repos["vllm-ascend"], "vllm-ascend", clones["va"])
    # comments, options and blank lines are skipped, -r is followed in place, trailing comments cut
    assert va["requires_dist"] == ["cmake>=3.26", "numpy<2.0.0", "torch-npu==2.8.0.post2", "transformers<4.53.0"]
    assert va["requires_python"] == ">=3.10"
    verl = gr.declared(repos["verl"], "verl", clones["verl"])
    assert verl["requires_dist"] == [
        "numpy<2.0.0", "ray[default]>=2.41.0", 'vllm>=0.8.5,<=0.11.0; extra == "vllm"',
        'TransferQueue @ git+https://github.com/TransferQueue/TransferQueue.git@68c04e7 ; extra == "transferqueue"']
    assert verl["requires_python"] == ">=3.10"  # from pyproject.toml: setup.py gives none


def test_extras_pyproject_states_itself_win_over_setup_pys_as_setuptools_builds_them(tmp_path):
    """verl main at 1dda039: pyproject.toml's [project] lists `dependencies` as dynamic (setup.py's install_requires)
    but states `optional-dependencies` itself, so setuptools ignores setup.py's extras_require and the built METADATA
    has pyproject's extras ([verl-core] with uvicorn); the entry then cites pyproject.toml."""
    repo = Repo(tmp_path / "verl")
    pyproject = ('[project]\nname = "verl"\nrequires-python = ">=3.10"\ndynamic = ["version", "dependencies"]\n'
                 '[project.optional-dependencies]\nverl-core = ["uvicorn", "verl[transferqueue]"]\n'
                 'transferqueue = ["TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main"]\n')
    c = repo.commit({"setup.py": VERL_SETUP, "pyproject.toml": pyproject})
    got = gr.declared(GitDir.open(str(repo.path)), "verl", c)
    assert got["requires_dist"] == [
        "numpy<2.0.0", "ray[default]>=2.41.0", 'uvicorn; extra == "verl-core"', 'verl[transferqueue]; extra == "verl-core"',
        'TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main ; extra == "transferqueue"']
    assert got["path"] == "pyproject.toml" and "optional-dependencies (static" in got["read_from"]
    # listed in `dynamic`, the extras stay setup.py's
    c = repo.commit({"setup.py": VERL_SETUP, "pyproject.toml": pyproject.replace('"dependencies"]', '"dependencies", '
                                                                                  '"optional-dependencies"]')})
    got = gr.declared(GitDir.open(str(repo.path)), "verl", c)
    assert 'vllm>=0.8.5,<=0.11.0; extra == "vllm"' in got["requires_dist"] and got["path"] == "setup.py"


def test_a_setup_py_of_another_shape_is_refused_not_guessed(clones, tmp_path):
    other = Repo(tmp_path / "other")
    c = other.commit({"setup.py": 'setup(name="vllm_ascend", install_requires=open("reqs.in").read().split())\n'})
    with pytest.raises(gr.Unreadable, match="get_requirements"):
        gr.declared(GitDir.open(str(other.path)), "vllm-ascend", c)
    c = other.commit({"setup.py": "setup(name='verl', install_requires=load_them())\n"})
    with pytest.raises(gr.Unreadable, match="not a literal"):
        gr.declared(GitDir.open(str(other.path)), "verl", c)


def test_rows_are_written_into_the_table_and_then_compare_equal(clones, tmp_path):
    table = tmp_path / "requirements-git.toml"
    shutil.copy(ROOT / "profiles" / "requirements-git.toml", table)
    before = load(str(table))
    found = Findings()
    gr.check(clones["repos"], clones["profiles"], before, found)
    # the two pinned commits are not in the packaged table; the empty-target vLLM build is not read
    assert sorted((d.kind, d.subject) for d in found.diffs) == [
        ("missing-row", "verl-0.7.1-cann8.5.0-a2 git.verl requirements"),
        ("missing-row", "verl-0.7.1-cann8.5.0-a2 git.vllm-ascend requirements")]
    gr.write(str(table), gr.rows(clones["repos"], clones["profiles"]), "2026-12-06")
    import tomllib

    after = parse(tomllib.loads(table.read_text()), str(table))
    assert after.read == "2026-12-06"
    assert {r.project for r in after.releases} == {"mindspeed", "megatron-core", "vllm-ascend", "verl"}
    assert [r.commit for r in after.releases if r.project in gr.PROJECTS] == [clones["verl"], clones["va"]]
    # the hand-written MindSpeed / Megatron entries are kept as they were
    assert [r for r in after.releases if r.project not in gr.PROJECTS] == [
        r for r in before.releases if r.project not in gr.PROJECTS]
    found = Findings()
    gr.check(clones["repos"], clones["profiles"], after, found)
    assert found.diffs == []
    assert after.at("vllm-ascend", clones["va"]).source.endswith(f"/{clones['va']}/requirements.txt")
    # a table entry that no longer says what the commit declares is a difference
    table.write_text(table.read_text().replace('"transformers<4.53.0"', '"transformers<4.54.0"'))
    found = Findings()
    gr.check(clones["repos"], clones["profiles"], parse(tomllib.loads(table.read_text()), str(table)), found)
    assert [(d.kind, d.subject) for d in found.diffs] == [
        ("changed", "verl-0.7.1-cann8.5.0-a2 git.vllm-ascend requirements")]


def test_writing_with_one_clone_keeps_the_other_projects_entries(clones, tmp_path, monkeypatch, capsys):
    """`python -m tools.refresh_knowledge --verl CLONE --write-git-requirements` (no --vllm-ascend) deleted every
    vllm-ascend entry of the table (7 on the real mirrors): only the projects whose clone was given are rewritten,
    and the run says what it wrote. With neither clone, the option is refused before anything is written."""
    import tomllib

    import tools.refresh_knowledge as rk

    shutil.copytree(ROOT / "profiles", tmp_path / "k")
    monkeypatch.setenv("DOCTOR_KNOWLEDGE", str(tmp_path / "k"))
    table = tmp_path / "k" / "requirements-git.toml"
    before = parse(tomllib.loads(table.read_text()), str(table))
    rk._write_git_requirements({"verl": clones["repos"]["verl"]}, SimpleNamespace(profiles=clones["profiles"]))
    after = parse(tomllib.loads(table.read_text()), str(table))
    assert [r for r in after.releases if r.project != "verl"] == [r for r in before.releases if r.project != "verl"]
    assert [r.commit for r in after.releases if r.project == "verl"] == [clones["verl"]]
    assert "wrote 1 verl entry" in capsys.readouterr().out
    text = table.read_text()
    assert rk.main(["--torch-npu", str(clones["repos"]["verl"].path), "--write-git-requirements", "--no-pypi"]) == 2
    assert "--write-git-requirements reads --verl / --vllm-ascend" in capsys.readouterr().err
    assert table.read_text() == text
