"""Results of the `--deep` import probes (snapshot.imports), turned into findings by their error text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from doctor.checks.commands import install_dry_run
from doctor.checks.facts import val
from doctor.checks.no_stack import (
    DEEP_TARGETS,
    SRC_VENV,
    STACK,
    holds_no_stack,
    name_the_training_python,
    not_installed,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import ImportResult, known

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

@check("deep-imports", "deep",
       findings=("import-failed", "import-mindspeed-failed", "import-not-installed", "import-torch-npu-failed",
                 "import-vllm-ascend-failed", "torch-npu-no-devices"))
def deep_imports(ctx: CheckContext) -> Iterator[Finding]:
    """`import torch_npu` (+ device count), `import mindspeed.megatron_adaptor`, `import vllm_ascend` succeed. One
    that fails where its distribution is installed (or its module is on the path) is an error of its own, named by
    its error text; those that fail because nothing of them is installed are one error, with the fix once."""
    snap = ctx.snapshot
    if not known(snap.imports):
        skip("no --deep imports in the snapshot (run `doctor check --deep`)")
    absent_ones = not_installed(ctx)
    # the interpreter the imports ran in: a fix that says `python` names whichever one is first on the user's PATH
    exe = val(snap.python, "executable") or "python"
    for mod, res in snap.imports.items():
        comp = DEEP_TARGETS.get(mod, "python")
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
        if any(m == mod for m, _, _ in absent_ones):
            continue
        timeout = "timed out" in err.lower() or "timeout" in err.lower()
        sig = next((s for s in _SIGNATURES if re.search(s[0], err)), None)
        comps = sig[2] if sig else (comp,)
        yield finding(
            f"import-{comp}-failed" if comp != "python" else "import-failed", "error", comps,
            f"`import {mod}` {'hung' if timeout else 'failed'}: {_last_line(err)}",
            detail=(sig[3] if sig else "The import raised; see the error text.") + (f" ({sig[1]})" if sig else ""),
            evidence={"module": mod, "error": err[-2000:], "seconds": res.seconds if known(res.seconds) else None},
            fix=sig[4] if sig else f"Run `{exe} -c 'import {mod}'` and fix the first error it shows.",
            source=sig[5] if sig else None)
    if absent_ones:
        yield _not_installed_finding(ctx, absent_ones)


def _last_line(err: str) -> str:
    """The exception line of an import's error text (its last line), bounded for a title."""
    return err.strip().splitlines()[-1][:160] if err.strip() else err


def _not_installed_finding(ctx: CheckContext, absent_ones: list[tuple[str, str, ImportResult]]) -> Finding:
    """One error for the imports that failed because nothing of them is installed in the interpreter examined (the
    doctor's own venv on a login node: all three), naming each module and its distribution, the fix once."""
    snap = ctx.snapshot
    exe = val(snap.python, "executable") or "the interpreter examined"
    mods = [m for m, _, _ in absent_ones]
    dists = [d for _, d, _ in absent_ones]
    imports = ", ".join(f"`import {m}`" for m in mods)
    one = len(mods) == 1
    commands: tuple[str, ...] = ()
    errors = {m: (r.error if known(r.error) and isinstance(r.error, str) else "") for m, _, r in absent_ones}
    said = "; ".join(f"{m}: {_last_line(e)}" for m, e in errors.items())
    if holds_no_stack(snap):
        # the doctor's own environment (README's install): target-holds-no-stack stands down for this finding, and
        # `doctor install` never installs there (--python of the doctor's own interpreter is exit 2)
        title = f"{exe} holds the doctor and none of the training stack: {imports} failed"
        why = (f"{exe} has verl-ascend-doctor installed and none of {', '.join(STACK)}: it is the doctor's own "
               f"environment, not a training one ({said}). `--deep` imports in the interpreter the check examines, "
               "and the doctor examines the one it runs in unless --python names another.")
        fix = name_the_training_python(ctx, deep=True) + "; to build one, `doctor install --venv DIR --dry-run`."
    else:
        title = f"{imports} failed: {', '.join(dists)} {'is' if one else 'are'} not installed in {exe}"
        why = (f"The import{'' if one else 's'} ran in {exe}, which has no {', '.join(dists)} distribution and no "
               f"copy of {'its module' if one else 'their modules'} on the path ({said}). `--deep` imports in the "
               "interpreter the check examines: the doctor's own environment unless --python names the training "
               "environment's.")
        name = name_the_training_python(ctx, deep=True)
        fix = f"If {exe} is not the training environment: {name[0].lower()}{name[1:]}; else install the verified stack"
        if snap.has_package("verl-ascend-doctor"):
            # the doctor's own environment (as the snapshot lists it): `doctor install` refuses it
            fix += " into a venv of its own (the doctor does not install into its own environment): `doctor install "
            fix += "--venv DIR --dry-run`."
        else:
            # install's own target rule (doctor.installers.fixline.install_target): an interpreter the OS manages
            # (PEP 668), which install refuses, gets a new venv made from it; the path is shell-quoted
            line = install_dry_run(snap, ctx.profile)
            fix += (" in a new venv made from it (the OS manages it: `doctor install` refuses to install into it)"
                    if "--venv" in line else " there") + " (a dry run shows the plan first)."
            commands = (line,)
    return finding(
        "import-not-installed", "error", ("python", *dists), title, commands=commands,
        detail=why,
        evidence={"python": exe, "modules": {m: {"distribution": d, "installed": False, "error": errors[m][-2000:],
                                                  "seconds": r.seconds if known(r.seconds) else None}
                                              for m, d, r in absent_ones}},
        fix=fix, source=SRC_VENV)
