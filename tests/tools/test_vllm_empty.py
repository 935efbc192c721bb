"""What vLLM declares when built with VLLM_TARGET_DEVICE=empty, read from its sdist without running setup.py
(tools/refresh_knowledge/vllm_empty.py), compared with profiles/requirements-git.toml and written back into it.
The sdists are small tar.gz archives built here, shaped like vLLM's (no network)."""

from __future__ import annotations

import io
import json
import random
import shutil
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import tomllib

from doctor.knowledge.requirements_git import load, parse
from tools.refresh_knowledge import git_requirements as gr
from tools.refresh_knowledge import vllm_empty as ve
from tools.refresh_knowledge.diff import Findings

ROOT = Path(__file__).parents[2]

# shaped like vLLM 0.8.4 on (setup.py's get_requirements() reads requirements/<file>, following -r)
SETUP = '''
import os
VLLM_TARGET_DEVICE = envs.VLLM_TARGET_DEVICE
ROOT_DIR = Path(__file__).parent

def _no_device() -> bool:
    return VLLM_TARGET_DEVICE == "empty"

def _is_cuda() -> bool:
    return VLLM_TARGET_DEVICE == "cuda"

def get_requirements() -> list[str]:
    """Get Python package dependencies from requirements.txt."""
    requirements_dir = ROOT_DIR / "requirements"

    def _read_requirements(filename: str) -> list[str]:
        with open(requirements_dir / filename) as f:
            requirements = f.read().strip().split("\\n")
        resolved_requirements = []
        for line in requirements:
            if line.startswith("-r "):
                resolved_requirements += _read_requirements(line.split()[1])
            elif not line.startswith("--") and not line.startswith("#") and line.strip() != "":
                resolved_requirements.append(line)
        return resolved_requirements

    if _no_device():
        requirements = _read_requirements("common.txt")
    elif _is_cuda():
        requirements = _read_requirements("cuda.txt")
    else:
        raise ValueError("Unsupported platform")
    return requirements

setup(version=get_vllm_version(), ext_modules=ext_modules, install_requires=get_requirements(),
      extras_require={"tensorizer": ["tensorizer>=2.9.0"]}, cmdclass=cmdclass)
'''
PYPROJECT = '[project]\nname = "vllm"\nrequires-python = ">=3.10,<3.14"\ndynamic = ["version", "dependencies"]\n'
COMMON = ("regex # Replace re\ncachetools\n# a comment\n-r base.txt\n--extra-index-url https://x\n\n"
          "transformers >= 4.56.0, < 5  # Required\nprotobuf >= 5.29.6 # CVE\n")
# vLLM 0.7.1's shape: files at the root through get_path(), the empty target reading requirements-cpu.txt
SETUP_071 = SETUP.replace('    requirements_dir = ROOT_DIR / "requirements"\n', "").replace(
    "open(requirements_dir / filename)", "open(get_path(filename))").replace('"common.txt"', '"requirements-cpu.txt"')


def sdist(version: str, files: dict[str, str], tail: dict[str, str] | None = None) -> bytes:
    """A .tar.gz with `files` (then `tail`) under vllm-<version>/, in that order, as `python -m build --sdist`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in {"PKG-INFO": "Metadata-Version: 2.4\nName: vllm\n", **files, **(tail or {})}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"vllm-{version}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


REAL = {"pyproject.toml": PYPROJECT, "requirements/base.txt": "numpy\n", "requirements/common.txt": COMMON,
        "requirements/cuda.txt": "-r common.txt\ntorch==2.9.0\n", "setup.py": SETUP}


class Replay:
    """PyPI's project JSON and file URLs, answered from memory (as tools/refresh_knowledge/pypi.py's Http)."""

    def __init__(self, files: dict[str, bytes], wheels_only: tuple[str, ...] = ()) -> None:
        self.files = files
        rel: dict[str, list[dict[str, Any]]] = {
            v: [{"filename": f"vllm-{v}.tar.gz", "url": f"../../packages/vllm-{v}.tar.gz", "size": len(b),
                 "upload_time_iso_8601": "2026-01-01T00:00:00Z"}] for v, b in files.items()}
        for v in wheels_only:
            rel[v] = [{"filename": f"vllm-{v}-cp38-abi3-manylinux_2_31_x86_64.whl", "url": "x.whl", "size": 1,
                       "upload_time_iso_8601": "2026-01-01T00:00:00Z"}]
        self.project = json.dumps({"info": {"name": "vllm"}, "releases": rel}).encode()
        self.streamed: list[str] = []

    def get(self, url: str) -> bytes:
        assert url == "https://pypi.org/pypi/vllm/json", url  # the per-version JSON is not served
        return self.project

    def stream(self, url: str) -> io.BytesIO:
        self.streamed.append(url)
        return io.BytesIO(self.files[url.rsplit("/vllm-", 1)[1].removesuffix(".tar.gz")])


def members(data: bytes) -> dict[str, str]:
    return ve.sdist_members(io.BytesIO(data), "test.tar.gz")


def test_the_empty_target_requirements_are_read_from_the_sdist_as_setup_py_builds_them():
    d = ve.declared(members(sdist("0.13.0", REAL)))
    # common.txt, -r followed in place, comments / options / blanks skipped, trailing comments cut; not cuda.txt
    assert d["requires_dist"] == ["regex", "cachetools", "numpy", "transformers >= 4.56.0, < 5", "protobuf >= 5.29.6"]
    assert d["requires_python"] == ">=3.10,<3.14"  # pyproject.toml: setup.py gives none
    assert d["path"] == "requirements/common.txt" and "VLLM_TARGET_DEVICE=empty" in d["read_from"]
    # 0.7.1: the root's requirements-cpu.txt and its -r requirements-common.txt; setup.py's own python_requires
    old = {"requirements-common.txt": "transformers >= 4.48.2\n", "pyproject.toml": "[build-system]\n",
           "requirements-cpu.txt": "-r requirements-common.txt\ntorch==2.5.1; platform_machine == \"aarch64\"\n",
           "setup.py": SETUP_071.replace("install_requires=", 'python_requires=">=3.9", install_requires=')}
    d = ve.declared(members(sdist("0.7.1", old)))
    assert d["requires_dist"] == ["transformers >= 4.48.2", 'torch==2.5.1; platform_machine == "aarch64"']
    assert (d["requires_python"], d["path"]) == (">=3.9", "requirements-cpu.txt")


def test_the_stream_stops_once_the_needed_members_are_read():
    """Members after setup.py, pyproject.toml and the requirement files are never read: a damaged rest of the
    archive (here cut off mid-member) does not matter, a damaged needed part does."""
    noise = random.Random(0).randbytes(200_000).hex()  # does not compress: the cut falls inside this member
    whole = sdist("0.13.0", REAL, tail={"vllm/model_executor/big.py": noise})
    cut = whole[: len(whole) // 2]
    assert ve.declared(members(cut))["requires_dist"][-1] == "protobuf >= 5.29.6"
    with pytest.raises(gr.Unreadable, match="not a readable sdist"):
        members(whole[:200])


@pytest.mark.parametrize(("edit", "says"), [
    (("install_requires=get_requirements()", "install_requires=open('r.txt').read().split()"), "get_requirements"),
    (('return VLLM_TARGET_DEVICE == "empty"', 'return VLLM_TARGET_DEVICE in ("empty", "none")'), "_no_device"),
    (('requirements = _read_requirements("common.txt")', 'requirements = _read_requirements(pick())'), "branch"),
    (("    return requirements\n\nsetup", "    return requirements + extra\n\nsetup"), "more than return"),
    (('if line.startswith("-r "):', 'if line.startswith("-c "):'), "-r "),
    (("open(requirements_dir / filename)", "open(Path('reqs') / filename)"), "opens its files"),
])
def test_a_setup_py_of_another_shape_is_refused_naming_what_changed(edit, says):
    files = {**REAL, "setup.py": SETUP.replace(*edit)}
    assert files["setup.py"] != SETUP
    with pytest.raises(gr.Unreadable, match=says):
        ve.declared(files)


def test_read_names_the_release_whose_setup_py_it_cannot_read_and_says_which_it_could_not_fetch():
    http = Replay({"0.13.0": sdist("0.13.0", REAL),
                   "0.18.0": sdist("0.18.0", {**REAL, "setup.py": SETUP.replace("_no_device():", "_empty():")})},
                  wheels_only=("0.15.0",))
    got = ve.read(http, ["0.13.0", "0.15.0", "0.11.0rc3"])
    assert got["0.15.0"] == "PyPI has no sdist of it (wheels only)" and got["0.11.0rc3"] == "PyPI lists no such release"
    assert got["0.13.0"]["source"] == "https://github.com/vllm-project/vllm/blob/v0.13.0/requirements/common.txt"
    assert got["0.13.0"]["sdist"] == "vllm-0.13.0.tar.gz"
    assert http.streamed == ["https://pypi.org/packages/vllm-0.13.0.tar.gz"]  # relative to the project JSON's URL
    with pytest.raises(gr.Unreadable, match=r"vllm 0\.18\.0 \(vllm-0\.18\.0\.tar\.gz\): .*_no_device"):
        ve.read(http, ["0.18.0"])


def test_the_releases_read_are_the_matrix_pairings_and_the_profiles_builds():
    rows = [SimpleNamespace(version="0.10.1rc1", vllm="0.10.1.1", vllm_also=("0.10.1",)),
            SimpleNamespace(version="0.11.0rc1", vllm="0.11.0", vllm_also=())]
    prof = SimpleNamespace(name="verl-x", git={"vllm": SimpleNamespace(version="0.23.0", install="empty-target")})
    wheel = SimpleNamespace(name="verl-y", git={"vllm": SimpleNamespace(version="0.30.0", install="wheel")})
    assert ve.releases(rows, [prof, wheel]) == {"0.10.1.1": "vllm-ascend 0.10.1rc1", "0.10.1": "vllm-ascend 0.10.1rc1",
                                                "0.11.0": "vllm-ascend 0.11.0rc1", "0.23.0": "verl-x"}


def test_rows_are_written_into_the_table_then_compare_equal_and_a_changed_entry_is_a_difference(tmp_path):
    table = tmp_path / "requirements-git.toml"
    shutil.copy(ROOT / "profiles" / "requirements-git.toml", table)
    before = load(str(table))
    http = Replay({"0.13.0": sdist("0.13.0", REAL), "0.99.0": sdist("0.99.0", REAL)}, wheels_only=("0.15.0",))
    found = ve.read(http, ["0.13.0", "0.15.0", "0.99.0"])
    wanted = {"0.13.0": "verl-0.7.1-cann8.5.0-a2", "0.15.0": "vllm-ascend 0.15.0rc1", "0.99.0": "vllm-ascend 0.99.0rc1"}
    out = Findings()
    ve.check(found, wanted, before, out)
    # 0.13.0 differs from the shipped entry (these files are not vLLM's), 0.99.0 is not in it, 0.15.0 cannot be read
    kinds = sorted((d.kind, d.subject.split(" (")[0], bool(d.explained)) for d in out.diffs)
    assert kinds == [("changed", "vllm 0.13.0 empty-target requirements", False),
                     ("missing-row", "vllm 0.99.0 empty-target requirements", False),
                     ("not-in-clone", "vllm 0.15.0 empty-target requirements", True)]
    gr.write(str(table), [], "2026-12-07", (), ve.rows(found))
    after = parse(tomllib.loads(table.read_text()), str(table))
    assert after.empty_target_read == "2026-12-07" and after.read == before.read  # no git entry was rewritten
    assert [e.version for e in after.empty_target] == ["0.13.0", "0.99.0"]
    assert after.releases == before.releases
    assert after.vllm_empty_target("0.13.0+empty").requires_dist[-1] == "protobuf >= 5.29.6"
    out = Findings()
    ve.check(found, wanted, after, out)
    assert [d.kind for d in out.diffs] == ["not-in-clone"]
    # a write of git entries keeps the empty-target entries as they are, byte for byte
    text = table.read_text()
    verl = [{"project": r.project, "commit": r.commit, "ref": r.ref, "version": r.version,
             "requires_python": r.requires_python or "", "requires_dist": list(r.requires_dist),
             "read_from": "x", "source": r.source} for r in after.releases if r.project == "verl"]
    gr.write(str(table), verl, "2026-12-08", ("verl",))
    again = parse(tomllib.loads(table.read_text()), str(table))
    assert again.empty_target == after.empty_target and again.read == "2026-12-08"
    section = "\n[[vllm_empty_target]]\n"
    assert table.read_text().split(section, 1)[1] == text.split(section, 1)[1]
    # an entry that no longer says what the sdist declares is a difference
    table.write_text(text.replace('"protobuf >= 5.29.6"', '"protobuf >= 5.29.5"'))
    out = Findings()
    ve.check(found, wanted, parse(tomllib.loads(table.read_text()), str(table)), out)
    assert sorted(d.kind for d in out.diffs) == ["changed", "changed", "not-in-clone"]


def test_the_shipped_entries_cover_every_vllm_release_a_stack_or_the_matrix_names():
    """Every release the refresh reads has an entry, except those PyPI has no sdist of (0.15.0: wheels only;
    0.11.0rc3: a tag PyPI does not list)."""
    from doctor.knowledge import matrix
    from doctor.knowledge.profiles import load_profiles

    table = load()
    wanted = ve.releases(matrix.VLLM_ASCEND, load_profiles())
    missing = sorted(v for v in wanted if table.vllm_empty_target(v) is None)
    assert missing == ["0.11.0rc3", "0.15.0"]
    assert table.empty_target_read and all(e.sdist == f"vllm-{e.version}.tar.gz" for e in table.empty_target)
