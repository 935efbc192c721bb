"""Real PyPI packages in plain `python3 -m venv` targets: pairs that `pip check` passes and the doctor judges (part
of the real-world tier: DOCTOR_REALWORLD=1; downloads ~150 MB, not in .ci/run).

- Ray 2.8.0 names pydantic only under its extras, each `pydantic<2`; with `ray[default]` and pydantic 2.5.0 pip check
  is clean (it does not judge extras nobody recorded) and `ray start --head` fails in Ray's pydantic shim: the doctor
  reports requirement-version-unmet, an error.
- Ray 2.49.0 with click 8.3.0, which Ray 2.50.0 excludes for a break on Python 3.10: pip check is clean, on this
  Python `ray start --head` works, and the doctor reports requirement-excluded-by-later-release as info only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                                reason="real PyPI installs: run with DOCTOR_REALWORLD=1 (nox -s realworld)")
REPO = Path(__file__).resolve().parents[2]


def _venv(path: Path, *reqs: str) -> Path:
    py = path / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    for group in reqs:
        subprocess.run([str(py), "-m", "pip", "install", "-q", *group.split()], check=True, timeout=1800)
    return py


def _ray_start(py: Path) -> subprocess.CompletedProcess[str]:
    """`ray start --head` with a short temp dir (Ray's AF_UNIX socket paths must stay under 108 bytes)."""
    import tempfile

    ray = py.parent / "ray"
    with tempfile.TemporaryDirectory(prefix="r", dir="/tmp") as tmp:
        env = {**os.environ, "RAY_TMPDIR": tmp}
        try:
            return subprocess.run([str(ray), "start", "--head", "--num-cpus", "1", "--temp-dir", tmp],
                                  capture_output=True, text=True, timeout=300, env=env)
        finally:
            subprocess.run([str(ray), "stop", "--force"], capture_output=True, timeout=120, env=env)


def _findings(py: Path) -> list[dict]:
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py), "--only", "packages"],
                        capture_output=True, text=True, timeout=300, cwd=REPO,
                        env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(cp.stdout)["findings"]


def test_ray_2_8_with_pydantic_2_fails_to_start_and_is_an_error(tmp_path):
    py = _venv(tmp_path / "v", "ray[default]==2.8.0", "pydantic==2.5.0")
    assert subprocess.run([str(py), "-m", "pip", "check"], capture_output=True).returncode == 0
    started = _ray_start(py)
    assert started.returncode != 0 and "pydantic_compat" in started.stdout + started.stderr
    (f,) = [f for f in _findings(py) if f["evidence"].get("requires") == "pydantic"]
    assert (f["id"], f["severity"]) == ("requirement-version-unmet", "error")


def test_ray_2_49_with_click_8_3_0_starts_here_and_is_info_only(tmp_path):
    py = _venv(tmp_path / "v", "ray==2.49.0 click==8.3.0")
    assert subprocess.run([str(py), "-m", "pip", "check"], capture_output=True).returncode == 0
    assert _ray_start(py).returncode == 0
    (f,) = [f for f in _findings(py) if f["id"] == "requirement-excluded-by-later-release"]
    assert f["severity"] == "info" and f["evidence"]["excluded_by"] == "ray 2.50.0"
