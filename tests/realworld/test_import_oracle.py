"""The differential import oracle (part of the real-world tier: DOCTOR_REALWORLD=1; torch 2.13.0 from this machine's
disk or PyPI's CPU wheel, the rest from PyPI, ~1 GB; not in .ci/run): a plain `python3 -m venv` target built from
real releases, the imports a verl run needs run in it, and `doctor check` on the same target must agree with them:
no error on the Python packages where everything imports, an error naming the package where an import fails.

- verl 0.7.1 installed with transformers 5.25.0 (which brings kernels 0.19.1), then transformers 4.57.6 and
  datasets 4.8.5 as verl 0.7.1's docs ask ("not support transformers 5.0.0 or higher"): kernels is left behind,
  outside the range transformers 4.57.6 names in its extras, and needing a huggingface-hub transformers 4.57.6
  refuses. Every import works (transformers' hub_kernels integration catches kernels' ImportError); the doctor said
  error (transformers -> kernels) and now says warning.
- The same venv with torchdata 0.7.1 (`--no-deps`; verl declares torchdata without a bound): `import
  verl.trainer.ppo.ray_trainer` fails on `torchdata.stateful_dataloader`, and the doctor's error names verl and
  torchdata (package-imports-missing-name, components verl and python).
- The same venv with verl 0.5.0 and tensordict 0.9.1 (`--no-deps`): its trainer and workers import beside
  transformers 4.57.6 on this CPU host (the `<4.56.0` window comes from an import verl 0.5.0 runs only under `elif
  is_npu_available:`); the doctor said error (transformers-outside-verl-window) and now skips that window here.
- A small venv of its own (~15 MB from PyPI): torch 2.13.0+cpu from this machine's disk (or PyTorch's CPU index) with
  PyPI's torchvision 0.28.0 and torchaudio 2.11.0, the releases vLLM 0.30.0 pins beside torch==2.13.0. PyPI's are CUDA
  builds (version.py: +cu130) whose compiled libraries need libc10_cuda.so: `import torchvision` and `import
  torchaudio` fail, and the doctor, which said nothing (the lines pair), reports torchvision-torch-mismatch and
  torchaudio-torch-mismatch as errors.
- vLLM 0.30.0 in a venv of its own (`pip install torch==2.13.0 vllm==0.30.0`: ~1.5 GB from PyPI, ~5.6 GB on disk):
  `import vllm` works on this CPU-only host, `from vllm import LLM` fails on torchvision (the case above, on the
  rollout path: transformers' image_utils imports it), and the doctor's error names it; with transformers 4.57.6
  `--no-deps` under it (vLLM 0.30.0 requires >=5.10.4) the doctor also names vLLM's import of transformers.
- A small venv of its own: hydra-core 1.1.2 with the omegaconf 2.1.2 and antlr4-python3-runtime 4.8 it pins (pip
  check clean, no Requires-Python) fails `import hydra` on Python 3.11+ (what verl's main_ppo imports first), and the
  doctor, which said nothing, reports python-too-new-for-package.
- A venv of trl 0.19.1 with transformers 5.10.4: `import trl` works (its package is lazy), `from trl import
  DPOTrainer` fails on a name transformers 5 removed; the doctor, which said nothing, warns naming DPOTrainer, and
  says nothing once transformers 4.57.6 is installed.
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
TORCH = "torch==2.13.0"  # pinned in every pip run, so no requirement pulls a CUDA build
RUN_IMPORTS = {
    "transformers": "from transformers import AutoModelForCausalLM, AutoTokenizer",
    "qwen2": "from transformers.models.qwen2 import modeling_qwen2",
    "peft": "import peft",
    "accelerate": "import accelerate",
    "tensordict": "import tensordict",
    "datasets": "import datasets",
    "main_ppo": "import verl.trainer.main_ppo",
    "ray_trainer": "import verl.trainer.ppo.ray_trainer",
    "fsdp_workers": "import verl.workers.fsdp_workers",
}
# the target's own findings that are not about its Python packages (this machine has no NPU and no CANN)
NOT_PACKAGES = {"cann", "npu", "driver", "firmware", "kernels-cann", "system"}


def _pip(py: Path, *args: str) -> None:
    subprocess.run([str(py), "-m", "pip", "install", "-q", *args], check=True, timeout=3600)


def _failing_imports(py: Path) -> dict[str, str]:
    out = {}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    for key, code in RUN_IMPORTS.items():
        cp = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=900, cwd="/", env=env)
        if cp.returncode:
            out[key] = (cp.stderr.strip().splitlines() or ["?"])[-1]
    return out


def _package_findings(py: Path) -> list[dict]:
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py), "--only", "packages"],
                        capture_output=True, text=True, timeout=600, cwd=REPO,
                        env={**os.environ, "PYTHONPATH": str(REPO)})
    return [f for f in json.loads(cp.stdout)["findings"] if not set(f["components"]) <= NOT_PACKAGES]


@pytest.fixture(scope="module")
def verl_071_after_transformers_5(tmp_path_factory):
    venv = tmp_path_factory.mktemp("oracle") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    _pip(py, TORCH)
    # pyarrow 26 raises at import under numpy 1.x (verl 0.7.1 caps numpy<2): package-code-needs-unmet's case, not this
    _pip(py, TORCH, "verl==0.7.1", "transformers==5.25.0", "pyarrow==25.0.1", "cachetools")
    _pip(py, TORCH, "transformers==4.57.6", "datasets==4.8.5", "huggingface-hub==0.36.2")
    return py


def test_a_leftover_kernels_beside_transformers_4_imports_and_is_no_error(verl_071_after_transformers_5):
    py = verl_071_after_transformers_5
    freeze = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    assert "kernels==0.19.1" in freeze and "transformers==4.57.6" in freeze
    assert _failing_imports(py) == {}
    fs = _package_findings(py)
    assert [f["id"] for f in fs if f["severity"] == "error"] == []
    (k,) = [f for f in fs if f["evidence"].get("requires") == "kernels"]
    assert k["severity"] == "warning" and "kernels" in k["evidence"]["cannot_run_beside"]


def test_torchdata_without_stateful_dataloader_fails_the_trainer_and_is_an_error(verl_071_after_transformers_5):
    py = verl_071_after_transformers_5
    _pip(py, "--no-deps", "torchdata==0.7.1")
    try:
        failing = _failing_imports(py)
        assert "torchdata.stateful_dataloader" in failing["ray_trainer"]
        errors = [f for f in _package_findings(py) if f["severity"] == "error"]
        assert [f["id"] for f in errors] == ["package-imports-missing-name"]
        assert errors[0]["evidence"]["imports"] == ["torchdata.stateful_dataloader:StatefulDataLoader"]
        assert errors[0]["evidence"]["torchdata"] == "0.7.1"
    finally:
        _pip(py, "--no-deps", "torchdata==0.11.0")


def test_verl_0_5_beside_transformers_4_57_imports_on_a_host_without_npu_and_is_no_error(verl_071_after_transformers_5):
    py = verl_071_after_transformers_5
    _pip(py, "--no-deps", "verl==0.5.0", "tensordict==0.9.1")
    try:
        assert _failing_imports(py) == {}
        assert [f["id"] for f in _package_findings(py) if f["severity"] == "error"] == []
    finally:
        _pip(py, "--no-deps", "verl==0.7.1", "tensordict==0.10.0")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the break is Python 3.11's dataclasses")
def test_hydra_core_1_1_fails_to_import_on_python_3_11_and_is_an_error(tmp_path):
    venv = tmp_path / "h"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    _pip(py, "hydra-core==1.1.2", "omegaconf==2.1.2", "antlr4-python3-runtime==4.8")
    assert subprocess.run([str(py), "-m", "pip", "check"], capture_output=True).returncode == 0
    imp = subprocess.run([str(py), "-c", "import hydra"], capture_output=True, text=True, timeout=300)
    assert imp.returncode != 0 and "for field override_dirname is not allowed" in imp.stderr
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py), "--only",
                         "python-too-new-for-package"], capture_output=True, text=True, timeout=600, cwd=REPO,
                        env={**os.environ, "PYTHONPATH": str(REPO)})
    (f,) = json.loads(cp.stdout)["findings"]
    assert (f["id"], f["severity"], f["evidence"]["hydra-core"]) == ("python-too-new-for-package", "error", "1.1.2")


def _run(py: Path, code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    return subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=900, cwd="/", env=env)


def _errors(py: Path, *only: str) -> dict[str, dict]:
    """doctor check's error findings on the target, by id (the last one of an id)."""
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py),
                         *(a for o in only for a in ("--only", o))], capture_output=True, text=True, timeout=900,
                        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return {f["id"]: f for f in json.loads(cp.stdout)["findings"] if f["severity"] == "error"}


def test_pypis_cuda_torchvision_and_torchaudio_beside_torch_cpu_fail_to_import_and_are_errors(tmp_path):
    venv = tmp_path / "tv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    _pip(py, TORCH)
    _pip(py, TORCH, "torchvision==0.28.0", "torchaudio==2.11.0")
    if "+cpu" not in _run(py, "import torch; print(torch.__version__)").stdout:
        pytest.skip("torch 2.13.0 here is not the +cpu build (this machine's disk wheel)")
    assert "operator torchvision::nms does not exist" in _run(py, "import torchvision").stderr
    assert "Could not load this library" in _run(py, "import torchaudio").stderr
    errs = _errors(py, "torchvision-pairing", "torchaudio-build")
    assert errs["torchvision-torch-mismatch"]["evidence"]["torchvision_build"] == "0.28.0+cu130"
    assert errs["torchaudio-torch-mismatch"]["evidence"]["torchaudio_build"] == "2.11.0+cu130"


def test_vllm_0_30_beside_torch_cpu_fails_on_torchvision_and_the_doctor_names_it(tmp_path):
    venv = tmp_path / "vllm"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    _pip(py, TORCH)
    _pip(py, TORCH, "vllm==0.30.0")
    if "+cpu" not in _run(py, "import torch; print(torch.__version__)").stdout:
        pytest.skip("torch 2.13.0 here is not the +cpu build (this machine's disk wheel)")
    assert _run(py, "import vllm").returncode == 0
    llm = _run(py, "from vllm import LLM, SamplingParams")
    assert "operator torchvision::nms does not exist" in llm.stderr
    assert "torchvision-torch-mismatch" in _errors(py, "packages", "torchvision-pairing")
    _pip(py, "--no-deps", "transformers==4.57.6")
    errs = _errors(py, "packages", "torchvision-pairing")
    assert {"torchvision-torch-mismatch", "package-imports-missing-name"} <= set(errs)
    assert errs["package-imports-missing-name"]["evidence"]["vllm"] == "0.30.0"


def _only(py: Path, name: str) -> list[dict]:
    cp = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--python", str(py), "--only", name],
                        capture_output=True, text=True, timeout=600, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(cp.stdout)["findings"]


def test_a_trl_trainer_its_lazy_package_serves_fails_beside_transformers_5_and_is_a_warning(tmp_path):
    """trl 0.19.1 with transformers 5.10.4 (which trl 0.19.1's `transformers>=4.51.0` admits): `import trl` works,
    `from trl import DPOTrainer` fails (trl.trainer.dpo_trainer imports MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES, which
    transformers 5 removed); the doctor, which said nothing, warns naming DPOTrainer. With transformers 4.57.6 the
    trainer imports and the warning is gone."""
    venv = tmp_path / "t"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    _pip(py, TORCH)
    _pip(py, TORCH, "trl==0.19.1", "transformers==5.10.4")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}

    def imports(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=900, cwd="/", env=env)

    assert imports("import trl").returncode == 0
    bad = imports("from trl import DPOTrainer")
    assert bad.returncode != 0 and "cannot import name 'MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES'" in bad.stderr
    got = [f for f in _only(py, "package-imports-missing-name") if "trl" in f["evidence"]]
    assert [(f["severity"], f["evidence"]["transformers"]) for f in got] == [("warning", "5.10.4")]
    assert got[0]["evidence"]["lazy"][
        "transformers.models.auto.modeling_auto:MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES"].endswith(":DPOTrainer")
    # with datasets 4.8.5: transformers 4.57.6 moves huggingface-hub to 0.36, which the datasets 5 pip took refuses
    _pip(py, TORCH, "transformers==4.57.6", "datasets==4.8.5")
    assert imports("from trl import DPOTrainer, SFTTrainer").returncode == 0
    assert not [f for f in _only(py, "package-imports-missing-name") if "trl" in f["evidence"]]
