"""The built wheel (not the editable install) carries everything an installed `doctor` needs at run time:
the profiles and the signature database, the in-target probe script and the Ray driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--isolated", "--no-deps", "--no-build-isolation",
                        "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("verl_ascend_doctor-*.whl")
    return whl


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("doctor/probes/_target_probe.py", "doctor/cluster/_ray_driver.py",
                     "doctor/profiles/signatures.toml", "doctor/profiles/error_codes.toml", "doctor/profiles/message_owners.json", "doctor/profiles/stacks/verl-0.7.1-cann8.5.0-a2.toml",
                     "doctor/installers/plan.py", "doctor/cli/check.py",
                     # the table of imports: its index, a caller release's file, a callee's file
                     "doctor/profiles/import-surface/index.json", "doctor/profiles/import-surface/vllm-ascend/0.9.1.json",
                     "doctor/profiles/import-surface/vllm.json"):
        assert required in names, required
    assert sum(n.startswith("doctor/profiles/stacks/") and n.endswith(".toml") for n in names) >= 12
    # exactly one top-level import name: nothing outside doctor/ but the dist-info
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"doctor"}
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "doctor = doctor.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
    assert not [n for n in names if n.startswith("tests/")]


def test_installed_wheel_finds_its_data(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--isolated", "--no-deps", "--no-index",
                        "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    assert r.returncode == 0, r.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = lambda *a: subprocess.run([sys.executable, *a], capture_output=True, text=True, timeout=120,  # noqa: E731
                                    env=env, cwd=tmp_path)
    where = run("-c", "import doctor, doctor.installers; print(doctor.__file__); print(doctor.installers.__file__)")
    assert where.stdout.split() == [str(target / "doctor" / "__init__.py"),
                                    str(target / "doctor" / "installers" / "__init__.py")]
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info")) == ["bin", "doctor"]
    req = target / "doctor" / "profiles" / "requirements"  # the PyPI table: an index and one file per project
    assert (req / "index.json").is_file() and (req / "torch-npu.json").is_file()
    listing = run("-m", "doctor", "--json", "profiles")
    assert listing.returncode == 0, listing.stderr
    assert len(json.loads(listing.stdout)["profiles"]) >= 12
    log = tmp_path / "run.log"
    log.write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    explained = run("-m", "doctor", "--json", "explain", str(log))
    assert explained.returncode == 1 and "cann-libhccl-missing" in explained.stdout
    snap = run("-m", "doctor", "collect")
    assert snap.returncode == 0 and json.loads(snap.stdout)["complete"] is True
