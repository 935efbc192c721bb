"""Results of the `--deep` import probes (snapshot.imports), turned into findings by their error text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from doctor.checks.facts import absent, installed, val
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# error text -> (finding id, components, why, fix, source); first match wins
_SIGNATURES: tuple[tuple[str, str, tuple[str, ...], str, str, str], ...] = (
    (r"libatb\.so", "import-needs-nnal", ("nnal", "cann"), "NNAL/ATB is missing or not sourced.",
     "Install Ascend-cann-nnal for the toolkit and `source /usr/local/Ascend/nnal/atb/set_env.sh`.",
     "https://github.com/vllm-project/vllm-ascend/issues/130"),
    (r"lib(hccl|ascendcl|ascend_hal|c_sec)\.so|Please run 'source set_env\.sh'|PTA resource not found",
     "import-needs-cann-env", ("env", "cann"), "CANN libraries are not on the library path (set_env.sh not sourced, "
     "or the driver is not mounted).", "source /usr/local/Ascend/ascend-toolkit/set_env.sh (and mount the driver in containers).",
     "https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py"),
    (r"Two accelerators cannot be used", "import-cuda-torch", ("torch",), "A CUDA torch is installed.",
     "Install the CPU torch build matching torch-npu.", "https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py"),
    (r"libtorch_npu\.so: undefined symbol|_C\..*undefined symbol", "import-torch-abi", ("torch-npu", "torch"),
     "torch and torch-npu are from different releases (ABI mismatch).",
     "Install the torch release torch-npu was built for.",
     "https://github.com/sgl-project/sglang/issues/28628; https://github.com/Ascend/pytorch/issues/35"),
    (r"No module named 'torch_npu\._C'", "import-source-tree", ("torch-npu", "python"),
     "An unbuilt torch_npu source tree is imported instead of the installed package.",
     "Run from another directory.", "https://github.com/Ascend/pytorch/issues/24"),
    (r"transformer_engine|_load_cudnn", "import-transformer-engine", ("transformer-engine", "mindspeed"),
     "NVIDIA transformer_engine breaks MindSpeed's import.", "pip uninstall -y transformer-engine",
     "https://github.com/modelscope/ms-swift/issues/6968"),
    (r"no exist|patch_utils", "import-mindspeed-megatron", ("megatron", "mindspeed"),
     "MindSpeed's branch does not match the installed Megatron.", "Check out the Megatron ref the MindSpeed branch targets.",
     "https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/mindspeed/patch_utils.py"),
    (r"cannot import name 'repatch'", "import-mindspeed-no-repatch", ("mindspeed",),
     "This MindSpeed predates `repatch`; verl skips it silently.", "Use MindSpeed 2.2.0_core_r0.12.1 or newer.",
     "https://github.com/Ascend/MindSpeed/commit/8b14ec4c4897e77d6734175d0e05e89fc9fe3b58"),
    (r"No module named 'megatron", "import-megatron-missing", ("megatron", "mindspeed"), "Megatron is not importable.",
     "pip install -e Megatron-LM (or add it to PYTHONPATH).",
     "https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/docs/user-guide/installation.md; https://github.com/NVIDIA/Megatron-LM/blob/core_v0.12.1/setup.py"),
)

_TARGETS = {"torch_npu": "torch-npu", "mindspeed.megatron_adaptor": "mindspeed", "vllm_ascend": "vllm-ascend"}


@check("deep-imports", "deep",
       findings=("import-failed", "import-mindspeed-failed", "import-torch-npu-failed", "import-vllm-ascend-failed", "torch-npu-no-devices"))
def deep_imports(ctx: CheckContext) -> Iterator[Finding]:
    """`import torch_npu` (+ device count), `import mindspeed.megatron_adaptor`, `import vllm_ascend` succeed."""
    snap = ctx.snapshot
    if not known(snap.imports):
        skip("no --deep imports in the snapshot (run `doctor check --deep`)")
    for mod, res in snap.imports.items():
        comp = _TARGETS.get(mod, "python")
        if res.ok:
            detail = res.detail if known(res.detail) and isinstance(res.detail, dict) else {}
            if mod == "torch_npu" and detail.get("device_count") == 0:
                yield finding(
                    "torch-npu-no-devices", "error", ("npu", "torch-npu"), "torch_npu imports but sees 0 NPUs",
                    detail="torch.npu.device_count() is 0: check ASCEND_RT_VISIBLE_DEVICES (ascending, in range) and the "
                           "container's device nodes.",
                    evidence={"device_count": 0, **{k: v for k, v in detail.items() if k != "device_count"}},
                    fix="Fix ASCEND_RT_VISIBLE_DEVICES / the device mounts; set RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 with Ray.",
                    source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/faq/faq.rst")
            continue
        err = res.error if known(res.error) and res.error else "unknown error"
        dist = _TARGETS.get(mod)
        if dist and absent(snap, dist) and "No module named" in err:
            # not installed here at all (a complete snapshot says so): the import's own error names whatever it
            # met first (`import torch_npu` in the doctor's own venv: "No module named 'torch'"), not the cause
            exe = val(snap.python, "executable") or "the interpreter examined"
            # the doctor's own environment (README's install: its venv holds the doctor): `doctor install` refuses
            # to install there (--python of the doctor's own interpreter is exit 2), so the stack goes to a venv
            install = ("install the verified stack into a venv of its own (the doctor does not install into its own "
                       "environment): `doctor install --venv DIR`" if installed(snap, "verl-ascend-doctor")
                       else f"install the verified stack there: `doctor install --python {exe}`")
            yield finding(
                f"import-{comp}-failed", "error", (comp,),
                f"`import {mod}` failed: {dist} is not installed in {exe}",
                detail=f"The import ran in {exe}, which has no {dist} distribution ({err.splitlines()[-1][:160]}). "
                       "`--deep` imports in the interpreter the check examines: the doctor's own environment unless "
                       "--python names the training environment's.",
                evidence={"module": mod, "error": err[-2000:], "installed": False, "python": exe,
                          "seconds": res.seconds if known(res.seconds) else None},
                fix=f"If {exe} is not the training environment, name that one: `doctor check --deep --python "
                    f"<its python>`; else {install}.")
            continue
        timeout = "timed out" in err.lower() or "timeout" in err.lower()
        sig = next((s for s in _SIGNATURES if re.search(s[0], err)), None)
        comps = sig[2] if sig else (comp,)
        yield finding(
            f"import-{comp}-failed" if comp != "python" else "import-failed", "error", comps,
            f"`import {mod}` {'hung' if timeout else 'failed'}: {err.splitlines()[-1][:160] if err.splitlines() else err}",
            detail=(sig[3] if sig else "The import raised; see the error text.") + (f" ({sig[1]})" if sig else ""),
            evidence={"module": mod, "error": err[-2000:], "seconds": res.seconds if known(res.seconds) else None},
            fix=sig[4] if sig else f"Run `python -c 'import {mod}'` in the target environment and fix the first error.",
            source=sig[5] if sig else None)
