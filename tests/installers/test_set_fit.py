"""A `--set` version a source serves is also checked for fit when the plan is made: a wheel's tags (python / abi /
platform, the manylinux glibc level) and its Requires-Python (the file's METADATA / PKG-INFO, a PEP 503 link's
data-requires-python, or the PyPI release table's) against the target's Python, machine and glibc. None fits: exit
2 before anything is made, naming each file, why, and the versions there that fit; fit unknown (an sdist only):
named in the plan and in `set_unchecked`. It used to pass the plan and fail at the last install step (pip: "No
matching distribution found"), after every clone and build.

The file names and Requires-Python values are PyPI's own (its JSON API and its simple pages for torch-npu, torch,
numpy and transformers, read 2026-12-07); the wheels are tiny local ones with those names and that metadata. On
the real verl 0.7.1 A2 profile, with a target made by plain `python3 -m venv`, or a snapshot (`--from`) for
another machine."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from tests.cli.test_install import doctor
from tests.installers.test_housecheck import stopped_by_the_rest_only
from tests.installers.test_set_offline import tree
from tests.installers.wheelkit import make_wheel

PROFILE = "verl-0.7.1-cann8.5.0-a2"

# https://pypi.org/pypi/torch-npu/json, release 2.1.0: every file (cp38-cp310 only)
TORCH_NPU_210 = (
    "cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64", "cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64",
    "cp39-cp39-manylinux_2_17_aarch64.manylinux2014_aarch64", "cp38-cp38-manylinux_2_17_x86_64.manylinux2014_x86_64",
    "cp39-cp39-manylinux_2_27_x86_64", "cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64",
    "cp38-cp38-manylinux_2_17_aarch64.manylinux2014_aarch64")
# release 2.8.0.post2: manylinux_2_28 only
TORCH_NPU_280_POST2 = tuple(f"cp{p}-cp{p}-manylinux_2_28_{m}" for p in (39, 310, 311, 312) for m in ("x86_64", "aarch64"))
# https://pypi.org/pypi/torch/json, release 2.1.0, its cp311 Linux wheels
TORCH_210_CP311 = ("cp311-cp311-manylinux1_x86_64", "cp311-cp311-manylinux2014_aarch64")

# https://pypi.org/simple/numpy/ as PyPI serves it: the Linux wheels of CPython 3.10/3.11 and the sdists
NUMPY_PAGE = """<!DOCTYPE html>
<html>
<head><title>Links for numpy</title></head>
<body>
<h1>Links for numpy</h1>
<a href="https://files.pythonhosted.org/packages/45/b7/de7b8e67f2232c26af57c205aaad29fe17754f793404f59c8a730c7a191a/numpy-1.21.6.zip#sha256=ecb55251139706669fdec2ff073c98ef8e9a84473e51e716211b41aa0f18e656" data-requires-python="&gt;=3.7,&lt;3.11">numpy-1.21.6.zip</a><br/>
<a href="https://files.pythonhosted.org/packages/6f/7b/036000a55680e6c7eb81502b0aa27ce0ed65d4d8805613909967d9f8baf6/numpy-1.21.6-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl#sha256=5f30427731561ce75d7048ac254dbe47a2ba576229250fb60f0fb74db96501a1" data-requires-python="&gt;=3.7,&lt;3.11">numpy-1.21.6-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl</a><br/>
<a href="https://files.pythonhosted.org/packages/57/ba/d8cbdfd507b541bb247beff24d9d7304ac8ffc379cf585701187d45d4512/numpy-1.21.6-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl#sha256=f17e562de9edf691a42ddb1eb4a5541c20dd3f9e65b09ded2beb0799c0cf29bb" data-requires-python="&gt;=3.7,&lt;3.11">numpy-1.21.6-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl</a><br/>
<a href="https://files.pythonhosted.org/packages/65/6e/09db70a523a96d25e115e71cc56a6f9031e7b8cd166c1ac8438307c14058/numpy-1.26.4.tar.gz#sha256=2a02aba9ed12e4ac4eb3ea9421c420301a0c6460d9830d74a9df87efa4912010" data-requires-python="&gt;=3.9">numpy-1.26.4.tar.gz</a><br/>
<a href="https://files.pythonhosted.org/packages/3a/d0/edc009c27b406c4f9cbc79274d6e46d634d139075492ad055e3d68445925/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl#sha256=666dbfb6ec68962c033a450943ded891bed2d54e6755e35e5835d63f4f6931d5" data-requires-python="&gt;=3.9">numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl</a><br/>
</body>
</html>
"""


def _host_fits_the_files() -> bool:
    """The venv tests name files for this machine: x86_64 with glibc >= 2.28 (the CI host: Debian 12, glibc 2.36)."""
    import platform

    libc, ver = platform.libc_ver()
    return platform.machine() == "x86_64" and libc == "glibc" and tuple(map(int, ver.split(".")[:2])) >= (2, 28)


ON_THIS_HOST = pytest.mark.skipif(not _host_fits_the_files(), reason="the venv target's files are x86_64 glibc >= 2.28")


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    v = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(v)], check=True, timeout=120)  # bundled pip
    return v


def house_of(root: Path, wheels: dict[str, tuple[str, tuple[str, ...]]], **meta: str) -> Path:
    """A wheelhouse of tiny wheels under PyPI's file names: {key: (project, version), tags}; `meta`: Requires-Python
    per project-version key."""
    for key, tags in wheels.items():
        name, version = key.split("==")
        for tag in tags:
            make_wheel(root / wh.WHEELS, name, version, tag=tag, requires_python=meta.get(key))
    wh.write(root, wh.scan(root, wh.Manifest(profile=PROFILE, target={})))
    return root


def snapshot(tmp_path: Path, arch: str, python: str, libc: str | None) -> str:
    """Another machine's facts, as `doctor collect` writes them (`--from`)."""
    f = tmp_path / f"node-{arch}-{python}-{libc}.json"
    host: dict[str, str] = {"arch": arch, **({"libc": libc} if libc else {})}
    f.write_text(json.dumps({"schema": "doctor.snapshot/1", "host": host, "python": {"version": python}}))
    return str(f)


def install(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip", *args,
                  env={**env, "NO_COLOR": "1"})


@ON_THIS_HOST
def test_an_offline_set_version_with_no_wheel_for_the_target_is_refused_before_the_venv_is_made(tmp_path,
                                                                                              hermetic) -> None:
    """A wheelhouse made for Python 3.10 (PyPI's cp310 wheels of torch-npu 2.8.0.post2, both machines) used for a
    Python 3.11 venv: `--set torch-npu=2.8.0.post2` fits none of them; its 2.8.0 cp311 wheel fits. Then the
    brief's aarch64 user: `--set torch-npu=2.1.0` (with torch 2.1.0), whose seven files on PyPI are cp38-cp310."""
    cp310 = tuple(t for t in TORCH_NPU_280_POST2 if t.startswith("cp310"))
    house = house_of(tmp_path / "house", {"torch-npu==2.8.0.post2": cp310, "torch-npu==2.1.0": TORCH_NPU_210,
                                          "torch==2.1.0": TORCH_210_CP311,
                                          "torch-npu==2.8.0": ("cp311-cp311-manylinux_2_28_x86_64",
                                                               "cp311-cp311-manylinux_2_28_aarch64")})
    venv = tmp_path / "venv"
    cp = install(hermetic, "--wheelhouse", str(house), "--offline", "--venv", str(venv), "--set", "torch-npu=2.8.0.post2")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert (f"torch-npu 2.8.0.post2: no file of it that the wheelhouse {house.resolve()} serves fits the target "
            "(CPython 3.11.") in err, err
    assert ("for another Python or machine: torch_npu-2.8.0.post2-cp310-cp310-manylinux_2_28_x86_64.whl, "
            "torch_npu-2.8.0.post2-cp310-cp310-manylinux_2_28_aarch64.whl.") in err
    assert "Pin a version that fits: it holds torch-npu 2.1.0, 2.8.0" not in err  # 2.1.0 has no cp311 wheel
    assert "Pin a version that fits: it holds torch-npu 2.8.0" in err and "--set" in err
    assert not venv.exists()

    node = snapshot(tmp_path, "aarch64", "3.11.6", "glibc 2.35")
    cp = install(hermetic, "--wheelhouse", str(house), "--offline", "--from", node, "--dry-run",
                 "--set", "torch=2.1.0", "--set", "torch-npu=2.1.0")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    # the target machine's wheels first, the rest counted
    aarch64 = sorted(f"torch_npu-2.1.0-{t}.whl" for t in TORCH_NPU_210 if t.endswith("aarch64"))
    assert ("torch-npu 2.1.0: no file of it that the wheelhouse " in err
            and f"fits the target (CPython 3.11.6 on aarch64, glibc 2.35): for another Python or machine: "
            f"{', '.join(aarch64)} and 4 more files." in err), err


def test_an_aarch64_target_on_an_older_glibc_is_judged_by_its_manylinux_level(tmp_path, hermetic) -> None:
    """torch-npu 2.8.0.post2 publishes manylinux_2_28 wheels only: an aarch64 snapshot on glibc 2.27 fits none of
    them (PEP 600), one on 2.28 fits, and one whose glibc is unknown has no level held against it."""
    house = house_of(tmp_path / "house", {"torch-npu==2.8.0.post2": TORCH_NPU_280_POST2})
    args = ("--wheelhouse", str(house), "--offline", "--dry-run", "--set", "torch-npu=2.8.0.post2")
    cp = install(hermetic, "--from", snapshot(tmp_path, "aarch64", "3.11.6", "glibc 2.27"), *args)
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert "fits the target (CPython 3.11.6 on aarch64, glibc 2.27)" in err, err
    assert "; for a newer glibc than 2.27: torch_npu-2.8.0.post2-cp311-cp311-manylinux_2_28_aarch64.whl." in err
    assert "It holds no torch-npu that fits: add a file built for the target" in err
    for libc in ("glibc 2.28", None):  # the pin fits: only what the stub lacks of the rest of the plan stops it
        cp = install(hermetic, "--from", snapshot(tmp_path, "aarch64", "3.11.6", libc), *args)
        assert stopped_by_the_rest_only(cp, "torch-npu"), cp.stderr


def numpy_1216_sdist(folder: Path) -> Path:
    """numpy-1.21.6.zip as PyPI serves it, cut down to its PKG-INFO's header (Metadata-Version 2.1, Requires-Python
    >=3.7,<3.11; sha256 ecb55251... of the real 10 MB file, read 2026-12-07) and a setup.py."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "numpy-1.21.6.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("numpy-1.21.6/PKG-INFO", "Metadata-Version: 2.1\nName: numpy\nVersion: 1.21.6\nPlatform: Linux\n"
                                            "Requires-Python: >=3.7,<3.11\n")
        z.writestr("numpy-1.21.6/setup.py", "raise SystemExit('not built here')\n")
    return path


@ON_THIS_HOST
def test_a_files_own_requires_python_is_read_from_its_metadata(tmp_path, venv, hermetic) -> None:
    """An offline wheelhouse for the Python 3.11 venv that holds numpy 1.21.6 as PyPI's cp310 wheel and its zip
    sdist (PKG-INFO: Requires-Python >=3.7,<3.11), a release older than the PyPI table keeps: only the files say it.
    Then transformers 5.21.0 (a pure wheel, METADATA Requires-Python >=3.11.0) for a Python 3.10 machine."""
    house = tmp_path / "house"
    numpy_1216_sdist(house / wh.WHEELS)
    house_of(house, {"numpy==1.21.6": ("cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64",),
                     "numpy==1.26.4": ("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",),
                     "transformers==5.21.0": ("py3-none-any",), "transformers==4.57.6": ("py3-none-any",)},
             **{"numpy==1.21.6": ">=3.7,<3.11", "numpy==1.26.4": ">=3.9", "transformers==5.21.0": ">=3.11.0",
                "transformers==4.57.6": ">=3.9.0"})
    py = str(venv / "bin" / "python")
    before = tree(venv)
    cp = install(hermetic, "--wheelhouse", str(house), "--offline", "--python", py, "--set", "numpy=1.21.6")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert ("for another Python or machine: numpy-1.21.6-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl; "
            "Requires-Python >=3.7,<3.11: numpy-1.21.6.zip.") in err, err
    assert "Pin a version that fits: it holds numpy 1.26.4" in err
    assert tree(venv) == before and not (venv / ".doctor").exists()

    cp = install(hermetic, "--from", snapshot(tmp_path, "x86_64", "3.10.12", "glibc 2.35"), "--wheelhouse",
                 str(house), "--offline", "--dry-run", "--set", "transformers=5.21.0")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert "fits the target (CPython 3.10.12 on x86_64, glibc 2.35): Requires-Python >=3.11.0: " \
        "transformers-5.21.0-py3-none-any.whl." in err, err
    assert "Pin a version that fits: it holds transformers 4.57.6" in err


@ON_THIS_HOST
def test_a_local_index_page_is_judged_by_its_data_requires_python_and_tags(tmp_path, venv, hermetic) -> None:
    """numpy 1.21.6 on PyPI's own page: cp310 wheels and a zip, all `>=3.7,<3.11`; the Python 3.11 venv fits
    none. 1.26.4 fits; an index that serves 1.26.4 as an sdist only cannot be judged, and says so."""
    simple = tmp_path / "simple"
    (simple / "numpy").mkdir(parents=True)
    (simple / "numpy" / "index.html").write_text(NUMPY_PAGE)
    py = str(venv / "bin" / "python")
    before = tree(venv)
    cp = install(hermetic, "--python", py, "--index-url", simple.as_uri(), "--set", "numpy=1.21.6")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert f"numpy 1.21.6: no file of it that {simple.as_uri()} serves fits the target (CPython 3.11." in err, err
    assert "Requires-Python >=3.7,<3.11: numpy-1.21.6.zip;" in err
    assert ("for another Python or machine: numpy-1.21.6-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl, "
            "numpy-1.21.6-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl.") in err
    assert "Pin a version that fits: it serves numpy 1.26.4" in err
    assert tree(venv) == before and not (venv / ".doctor").exists()
    cp = install(hermetic, "--python", py, "--index-url", simple.as_uri(), "--set", "numpy=1.26.4", "--dry-run", "--json")
    assert cp.returncode == 0 and "set_unchecked" not in json.loads(cp.stdout), cp.stderr

    only = tmp_path / "sdist-only"
    (only / "numpy").mkdir(parents=True)
    (only / "numpy" / "index.html").write_text("\n".join(line for line in NUMPY_PAGE.splitlines()
                                                         if "1.26.4-cp311" not in line))
    cp = install(hermetic, "--python", py, "--index-url", only.as_uri(), "--set", "numpy=1.26.4", "--dry-run", "--json")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["set_unchecked"] == {"numpy": "1.26.4"}
    err = " ".join(cp.stderr.split())
    assert ("--set numpy=1.26.4: whether it fits CPython 3.11." in err
            and "is not known before the run (an sdist (pip builds it): numpy-1.26.4.tar.gz); the install step finds "
            "out" in err), err


def test_online_the_release_tables_requires_python_refuses_a_release_the_target_python_cannot_install(
        tmp_path, hermetic) -> None:
    """profiles/requirements/ records transformers 5.21.0's Requires-Python (>=3.11.0, its only wheel is pure): a
    Python 3.10 machine cannot install it from PyPI; the refusal names the nearest release that admits 3.10. (On
    the base, check_sets refused it later as "transformers=5.21.0 breaks what transformers 5.21.0 declares
    (>=3.11.0)", naming no release that fits.)"""
    cp = install(hermetic, "--from", snapshot(tmp_path, "x86_64", "3.10.12", "glibc 2.35"), "--dry-run",
                 "--set", "transformers=5.21.0")
    assert cp.returncode == 2, cp.stderr
    err = " ".join(cp.stderr.split())
    assert ("transformers 5.21.0 requires Python >=3.11.0 (its Requires-Python, "
            "https://pypi.org/project/transformers/5.21.0/#transformers-5.21.0-py3-none-any.whl;") in err, err
    assert "and the target is Python 3.10.12: pip skips every file of it; pin 5.20." in err


def test_online_the_release_tables_files_are_judged_for_the_targets_glibc(tmp_path, hermetic) -> None:
    """profiles/requirements/ records torch-npu 2.8.0.post2's files as PyPI lists them (manylinux_2_28 wheels only,
    no sdist): an aarch64 or x86_64 machine on glibc 2.27 cannot install it from PyPI. The refusal is wheelfit's
    (the one a wheelhouse's files get) and names the nearest release one of whose wheels fits: 2.5.1.post1 on
    aarch64 (manylinux2014), 2.6.0.post5 on x86_64 (2.6's x86_64 wheels are manylinux2014, its aarch64 ones
    manylinux_2_28). glibc 2.28, or a glibc the snapshot does not state, is not held against it."""
    args = ("--dry-run", "--set", "torch-npu=2.8.0.post2")
    for arch, python, near in (("aarch64", "3.10.12", "2.5.1.post1"), ("x86_64", "3.11.6", "2.6.0.post5")):
        cp = install(hermetic, "--from", snapshot(tmp_path, arch, python, "glibc 2.27"), *args)
        assert cp.returncode == 2, cp.stderr
        err = " ".join(cp.stderr.split())
        assert "creating venv" not in err and "[1/" not in err, err
        cp_tag = "cp" + python.replace(".", "")[:3]
        assert (f"torch-npu 2.8.0.post2: no file of it that PyPI publishes fits the target (CPython {python} on "
                f"{arch}, glibc 2.27)") in err, err
        assert f"for a newer glibc than 2.27: torch_npu-2.8.0.post2-{cp_tag}-{cp_tag}-manylinux_2_28_{arch}.whl" in err
        assert "https://pypi.org/project/torch-npu/2.8.0.post2/" in err
        assert f"pin {near}, the nearest release with a wheel that fits the target" in err, err
    for libc in ("glibc 2.28", None):
        cp = install(hermetic, "--from", snapshot(tmp_path, "aarch64", "3.10.12", libc), *args)
        assert cp.returncode == 0, cp.stderr
    cp = install(hermetic, "--from", snapshot(tmp_path, "aarch64", "3.10.12", None), "--glibc", "2.27", *args)
    assert cp.returncode == 2 and "glibc 2.27): for a newer glibc than 2.27" in " ".join(cp.stderr.split())


def test_a_release_table_row_is_judged_as_its_pypi_files_would_be() -> None:
    """wheelfit.release_offers names the table's tag triples as PyPI names the files (its JSON API, read
    2026-12-07: torch_npu-2.8.0.post2-cp310-cp310-manylinux_2_28_aarch64.whl, ...), so `judge` reads them."""
    from doctor.installers.wheelfit import TargetPython, judge, release_offers
    from doctor.knowledge.requirements import declared

    d = declared("torch-npu", "2.8.0.post2")
    assert d is not None and sorted(d.files) == sorted(TORCH_NPU_280_POST2)
    offers = release_offers("torch-npu", "2.8.0.post2", d.files, d.requires_python)
    assert "torch_npu-2.8.0.post2-cp310-cp310-manylinux_2_28_aarch64.whl" in [o.file for o in offers]
    assert judge(offers, TargetPython("3.10.12", "aarch64", "2.27"))[0] is False
    assert judge(offers, TargetPython("3.10.12", "aarch64", "2.28"))[0] is True
    assert judge(offers, TargetPython("3.10.12", "aarch64"))[0] is True  # glibc unknown: no level held against it
    # an sdist (vllm 0.9.1 publishes one) leaves the fit to the build: not refused
    v = declared("vllm", "0.9.1")
    assert v is not None and "sdist" in v.files
    assert judge(release_offers("vllm", "0.9.1", v.files, v.requires_python),
                 TargetPython("3.10.12", "aarch64", "2.17"))[0] is None


def test_an_online_release_is_judged_once_for_the_first_reason_that_applies() -> None:
    """The release table's row of a --set release gets one judgement (`release_unfit`), whose first reason picks the
    refusal: torch-npu 2.8.0.post2 (cp39-cp312 wheels, manylinux_2_28 only, no sdist) on Python 3.13 has no wheel
    at all, whatever the glibc ("files", not "glibc"); on 3.10 aarch64 with glibc 2.27 only the glibc level stands in
    the way; glibc 2.28, or one not known, leaves it installable. transformers 5.21.0 is a pure wheel whose
    Requires-Python is >=3.11.0."""
    from doctor.installers.wheelfit import release_unfit
    from doctor.knowledge.requirements import declared

    d = declared("torch-npu", "2.8.0.post2")
    assert d is not None
    assert release_unfit(d, "3.13", "aarch64", "2.27", "3.13.1") == "files"
    assert release_unfit(d, "3.10", "aarch64", "2.27", "3.10.12") == "glibc"
    assert release_unfit(d, "3.10", "aarch64", "2.28", "3.10.12") is None
    assert release_unfit(d, "3.10", "aarch64", None, "3.10.12") is None
    t = declared("transformers", "5.21.0")
    assert t is not None and release_unfit(t, "3.10", "x86_64", "2.17", "3.10.12") == "requires-python"
    assert release_unfit(t, "3.11", "x86_64", "2.17", "3.11.7") is None


def test_the_release_a_requires_python_refusal_names_has_a_wheel_for_the_targets_glibc() -> None:
    """`--set vllm=0.32.0` (Requires-Python >=3.11) for Python 3.10.12 on x86_64 with glibc 2.27: the refusal names the
    nearest release that admits 3.10.12 "and has a wheel for it". 0.31.0's only x86_64 wheel is
    cp38-abi3-manylinux_2_28_x86_64 (pip builds its sdist on glibc 2.27); 0.21.0's is manylinux_2_24 (PyPI's files,
    profiles/requirements/vllm.json)."""
    from doctor.installers.wheelfit import python_admits
    from doctor.knowledge.requirements import load_requirements

    t = load_requirements()

    def admits(e):
        return python_admits((e.on("3.10", "x86_64") or e).requires_python, "3.10.12") is True

    assert t.nearest_installable("vllm", "0.32.0", "3.10", "x86_64", admits=admits) == "0.31.0"
    assert t.nearest_installable("vllm", "0.32.0", "3.10", "x86_64", admits=admits, glibc="2.27") == "0.21.0"
