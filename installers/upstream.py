"""Where each install step comes from upstream: the URLs (at a tag or commit) a plan step and a finding cite, and
the few values the plan takes from upstream files (SOC_VERSION per chip family, the source projects' layout).

Every URL here opens at a fixed tag or commit, so what it says cannot move under the plan.
"""

from __future__ import annotations

VERL = "https://github.com/verl-project/verl/blob"
VA = "https://github.com/vllm-project/vllm-ascend/blob"
VA_AT = "c835624845a279a0f13074c0d2e684a7ec5fb632"  # releases/v0.23.0 on the verl v0.9.0 release date

# verl's install guide: CANN, kernels, NNAL and the driver are system packages from Huawei's .run files (its HDK/CANN
# part), and the environment a shell needs (set_env.sh, the exports) that doctor-env.sh writes
INSTALL_GUIDE = f"{VERL}/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst"
# triton and triton-ascend share the triton/ package directory: verl's script removes both first
SCRIPT_D = f"{VERL}/v0.9.0/scripts/install_vllm_mcore_npu.sh"
# "In x86, triton will be installed by vllm ... we need to uninstall it"; triton-ascend installed after vllm-ascend
VA_DOCKERFILE = f"{VA}/{VA_AT}/Dockerfile"
# the line before triton-ascend (v0.9.1, the verl 0.6.1 stack's): the same uninstall of triton after vLLM, nothing after
VA_DOCKERFILE_PRE_TRITON_ASCEND = f"{VA}/0740d10211fcdcaa00d29e8659d7de892f5ed4d8/Dockerfile"
# the SOC_VERSION a build without npu-smi needs, per chip (Dockerfile* defaults)
VA_SOC = f"{VA}/{VA_AT}/docs/source/installation.md"
# the no-device CI job: SOC_VERSION set, COMPILE_CUSTOM_KERNELS=0, tests with TORCH_DEVICE_BACKEND_AUTOLOAD=0
VA_CPU_BUILD = f"{VA}/{VA_AT}/.github/workflows/_selected_tests.yaml"
# vllm-ascend's own build requirements and runtime requirements (setup.py reads requirements.txt)
# torch-npu's x86 wheels require torch==X+cpu, which only the PyPI-compatible PyTorch CPU index serves
TORCH_NPU_X86 = "https://github.com/Ascend/pytorch/blob/v2.10.0-26.0.0/README.md"
MINDSPEED_INSTALL = "https://gitcode.com/Ascend/MindSpeed/blob/e4772499f7eb9fa9a68919dd1eaddef00e915b2d/docs/zh/user-guide/installation.md"
MINDSPEED_NOT_ON_PYPI = "https://gitcode.com/Ascend/MindSpeed/blob/e4772499f7eb9fa9a68919dd1eaddef00e915b2d/README.md"
# the release Dockerfile: `pip install -r requirements.txt`, then vllm-ascend `--no-build-isolation --no-deps`
VERL_DOCKERFILE = f"{VERL}/v0.9.0/docker/ascend/Dockerfile.ascend_9.1.0_a2"

# SOC_VERSION a vllm-ascend build needs where npu-smi cannot tell it (VA_SOC: "Atlas A2: ascend910b1, Atlas A3:
# ascend910_9391, Atlas 300I DUO: ascend310p1, Atlas 950DT: ascend950dt_9582")
SOC_VERSION = {"A2": "ascend910b1", "A3": "ascend910_9391", "310P": "ascend310p1", "950": "ascend950dt_9582"}

# what upstream's own install script installs right before the vllm-ascend `--no-build-isolation` build
# (SCRIPT_D step 1: `pip install setuptools-scm`)
SCRIPT_D_BEFORE_VLLM_ASCEND = ("setuptools-scm",)


def repo_web(url: str) -> str:
    """https://github.com/o/r.git -> https://github.com/o/r (gitcode and github both serve /blob/<ref>/<path>)."""
    u = url.rstrip("/")
    return u[:-4] if u.endswith(".git") else u


def at(url: str, ref: str, path: str = "") -> str:
    """A file (or the tree) of a repository at a tag or commit."""
    return f"{repo_web(url)}/{'blob' if path else 'tree'}/{ref}" + (f"/{path}" if path else "")
