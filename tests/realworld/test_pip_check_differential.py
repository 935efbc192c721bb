"""`pip check` as the oracle, on plain `python3 -m venv` targets built from real PyPI releases (part of the real-world
tier: DOCTOR_REALWORLD=1; ~2.5 GB from PyPI with torch 2.13.0 from this machine's disk or PyPI's CPU wheel; not in
.ci/run). Every line `pip check` prints must be a doctor finding on the same package, requirement and installed
version, and every requirement finding the doctor adds must be one of its documented differences: the run set
(verl 0.9.1's `[verl-core]`, README "What the stack declares"), an extra of a stack package in use
(transformers' `[torch]` beside torch), and Requires-Python, which pip check does not judge. Where `import
verl.trainer.main_ppo` fails, the doctor's package findings hold an error. torch is pinned in every pip run that
could resolve it (`torch==2.13.0`) or kept out with `--no-deps`: no requirement pulls PyPI's CUDA build.

Figures seen when this was written (pip 23.2.1 in the venvs; pip 26.3 for the platform case): verl 0.9.1 with
transformers 4.57.6, tensordict 0.9.0, numpy 1.26.4, accelerate 0.20.0, tokenizers 0.19.1 `--no-deps`: 8 lines, 8
findings (all errors), plus the 10 run-set findings; transformers 4.46.3 with tokenizers 0.22.1 and huggingface-hub
1.0.0: 5 of 5; verl 0.6.1 `--no-deps` with numpy 2.2.6 and numba 0.60.0: 19 of 19; verl 0.9.1 `--no-deps` with no
torch: 15 of 15, and accelerate, peft, torchdata and tensordict's own lines say torch goes in first; tensordict 0.3.2
(`torch==2.2.2`) beside torch 2.13.0: 2 of 2; regex's aarch64 wheel and PyYAML's cp312 wheel: pip check's "not
supported on this platform", which the doctor said nothing of until wheel-not-for-this-platform.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                                reason="real PyPI installs: run with DOCTOR_REALWORLD=1 (nox -s realworld)")
REPO = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"  # pinned in every pip run that resolves, so no requirement pulls a CUDA build
NOT_PACKAGES = {"cann", "npu", "driver", "firmware", "kernels-cann", "system"}
REQUIREMENT_IDS = ("requirement-missing", "requirement-version-unmet")


def _venv(path: Path, *groups: str) -> Path:
    py = path / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    for group in groups:
        subprocess.run([str(py), "-m", "pip", "install", "-q", *group.split()], check=True, timeout=3600)
    return py


def _pip_check(py: Path) -> list[tuple[str, ...]]:
    """pip check's lines, parsed: ("version", pkg, requirement name, installed), ("missing", pkg, name), ("platform",
    pkg, version)."""
    out = subprocess.run([str(py), "-m", "pip", "check"], capture_output=True, text=True, timeout=300).stdout
    lines: list[tuple[str, ...]] = []
    for line in out.splitlines():
        if m := re.match(r"(\S+) \S+ has requirement ([A-Za-z0-9._-]+).*, but you have \S+ (\S+)\.$", line):
            lines.append(("version", canonicalize_name(m[1]), canonicalize_name(m[2]), m[3]))
        elif m := re.match(r"(\S+) \S+ requires (\S+), which is not installed\.$", line):
            lines.append(("missing", canonicalize_name(m[1]), canonicalize_name(m[2])))
        elif m := re.match(r"(\S+) (\S+) is not supported on this platform$", line):
            lines.append(("platform", canonicalize_name(m[1]), m[2]))
        else:
            assert line == "No broken requirements found.", line
    return lines


def _findings(py: Path) -> list[dict]:
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py)],
                        capture_output=True, text=True, timeout=900, cwd=REPO,
                        env={**os.environ, "PYTHONPATH": str(REPO)})
    return [f for f in json.loads(cp.stdout)["findings"] if not set(f["components"]) <= NOT_PACKAGES]


def _agree(py: Path) -> tuple[list[dict], list[dict]]:
    """Assert every pip check line is a finding; return (the findings pip check matched, the requirement findings
    it did not)."""
    fs = _findings(py)
    matched: list[dict] = []
    for line in _pip_check(py):
        if line[0] == "platform":
            hit = [f for f in fs if f["id"] == "wheel-not-for-this-platform" and f["evidence"]["package"] == line[1]
                   and f["evidence"]["version"] == line[2]]
        else:
            hit = [f for f in fs if f["id"] in REQUIREMENT_IDS and canonicalize_name(f["evidence"]["package"]) == line[1]
                   and canonicalize_name(f["evidence"]["requires"]) == line[2]
                   and (line[0] == "missing" or f["evidence"]["installed"] == line[3])]
        assert hit, (line, [(f["id"], f["title"]) for f in fs])
        matched += hit
    extra = [f for f in fs if f["id"] in REQUIREMENT_IDS and f not in matched]
    return matched, extra


def _main_ppo_fails(py: Path) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    return subprocess.run([str(py), "-c", "import verl.trainer.main_ppo"], capture_output=True, timeout=900,
                          cwd="/", env=env).returncode != 0


def _run_set(f: dict) -> bool:
    return f["evidence"].get("extra") == "verl-core" and bool(f["evidence"].get("built_on"))


def test_verl_0_9_1_with_its_requirements_broken_no_deps(tmp_path):
    py = _venv(tmp_path / "v", TORCH, f"{TORCH} verl==0.9.1",
               "--no-deps transformers==4.57.6 tensordict==0.9.0 numpy==1.26.4 accelerate==0.20.0 tokenizers==0.19.1")
    matched, extra = _agree(py)
    assert len(matched) >= 8 and {f["severity"] for f in matched} == {"error"}
    assert extra and all(_run_set(f) for f in extra)
    assert _main_ppo_fails(py)


def test_transformers_tokenizers_huggingface_hub_mismatch(tmp_path):
    py = _venv(tmp_path / "v", TORCH, f"{TORCH} transformers==4.46.3",
               "--no-deps tokenizers==0.22.1 huggingface-hub==1.0.0")
    matched, extra = _agree(py)
    assert len(matched) == 5 and extra == []


def test_verl_0_6_1_no_deps_beside_numpy_2_and_numba(tmp_path):
    py = _venv(tmp_path / "v", TORCH, f"{TORCH} numpy==2.2.6", "--no-deps verl==0.6.1", f"{TORCH} numba==0.60.0",
               "--no-deps numpy==2.2.6")
    matched, extra = _agree(py)
    by = {(f["evidence"]["package"], f["evidence"]["requires"]): f["severity"] for f in matched}
    assert by[("verl", "numpy")] == "error" and by[("numba", "numpy")] == "warning" and extra == []
    assert _main_ppo_fails(py)


def test_verl_0_9_1_no_deps_without_torch_each_line_says_torch_goes_first(tmp_path):
    py = _venv(tmp_path / "v", "--no-deps verl==0.9.1", "numpy==2.2.6 hydra-core==1.3.2 packaging")
    matched, extra = _agree(py)
    assert len(matched) == 15 and all(_run_set(f) for f in extra)
    first = {f["evidence"]["requires"] for f in matched + extra if f["fix"].get("torch_first")}
    assert first == {"accelerate", "peft", "torchdata", "tensordict"}
    assert _main_ppo_fails(py)


def test_an_exact_torch_pin_an_extra_and_a_requires_python_pip_check_does_not_judge(tmp_path):
    py = _venv(tmp_path / "v", TORCH, f"{TORCH} transformers[torch]==4.57.6",
               "--no-deps accelerate==0.25.0 tensordict==0.3.2",
               "--no-deps --ignore-requires-python dataclasses==0.8")
    matched, extra = _agree(py)
    assert sorted((f["evidence"]["package"], f["evidence"]["requires"]) for f in matched) == [
        ("tensordict", "cloudpickle"), ("tensordict", "torch")]
    # transformers' [torch] extra (torch is installed, transformers is a stack package): accelerate>=0.26.0
    assert [(f["evidence"]["package"], f["evidence"]["requires"]) for f in extra] == [("transformers", "accelerate")]
    assert extra[0]["evidence"].get("extra_inferred") is True
    (rp,) = [f for f in _findings(py) if f["id"] == "requires-python-unmet"]
    assert rp["evidence"]["package"] == "dataclasses"


def test_wheels_for_another_machine_or_python_are_what_pip_check_says_unsupported(tmp_path):
    py = _venv(tmp_path / "v", "-U pip")
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    other = "manylinux2014_x86_64" if os.uname().machine == "aarch64" else "manylinux2014_aarch64"
    python = "3.12" if sys.version_info[:2] != (3, 12) else "3.11"
    for opts in (f"--platform {other} regex==2024.11.6", f"--python-version {python} pyyaml==6.0.2"):
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:", "--target", site,
                        *opts.split()], check=True, timeout=900)
    lines = _pip_check(py)
    if not any(line[0] == "platform" for line in lines):
        pytest.skip("this pip check does not judge wheel tags (pip < 23.3)")
    matched, _ = _agree(py)
    assert {f["evidence"]["package"] for f in matched} == {"regex", "pyyaml"}
    assert subprocess.run([str(py), "-c", "import regex"], capture_output=True, timeout=300).returncode != 0
