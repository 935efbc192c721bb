"""What says the interpreter examined is not (yet) a training environment, shared by the two checks that can say
it, so that one finding says it and its fix is printed once.

`target-interpreter` (doctor.checks.system) sees the doctor's own venv holding none of the stack; `deep-imports`
(doctor.checks.deep) sees `--deep`'s imports of torch_npu, mindspeed.megatron_adaptor and vllm_ascend fail because
nothing of them is installed. Run from a login node's doctor venv, both are true of the same interpreter, and each
import used to be an error of its own with the same long fix. Here: which imports failed for want of an install
(`not_installed`), whether the interpreter is the doctor's own with none of the stack (`holds_no_stack`), and the
one fix that names the training environment's python (`name_the_training_python`).
"""

from __future__ import annotations

from doctor.checks.facts import absent
from doctor.checks.runner import REGISTRY, CheckContext, headers
from doctor.snapshot.model import ImportResult, Snapshot, known

# what a training environment for this stack holds: one of them in the examined interpreter means it is one
STACK = ("verl", "torch", "torch-npu", "vllm", "vllm-ascend", "mindspeed", "megatron-core")
SRC_VENV = "https://docs.python.org/3/library/venv.html"
# `--deep`'s imports (doctor.probes.deep.PROBES) -> the distribution that installs each
DEEP_TARGETS = {"torch_npu": "torch-npu", "mindspeed.megatron_adaptor": "mindspeed", "vllm_ascend": "vllm-ascend"}


def holds_no_stack(snap: Snapshot) -> bool:
    """A complete snapshot of an interpreter holding verl-ascend-doctor and none of `STACK`: the doctor's own venv."""
    return bool(snap.is_complete and snap.has_package("verl-ascend-doctor")
                and not any(snap.has_package(n) for n in STACK))


def not_installed(ctx: CheckContext) -> list[tuple[str, str, ImportResult]]:
    """(module, distribution, result) of each `--deep` import that failed because nothing of it is installed: a
    complete snapshot says the distribution is not, the error is a ModuleNotFoundError (whatever name it met first:
    `import torch_npu` without torch says 'torch'), and the probe found no copy of the module's top-level package on
    the path either. verl's install guide puts MindSpeed on PYTHONPATH without installing it: there the import's own
    error is the failure to report (doctor.checks.deep), not "not installed". A module whose own finding id
    (`import-mindspeed-failed`) or header this run's `--ignore` waives is left out, as its finding was."""
    snap = ctx.snapshot
    if not known(snap.imports):
        return []
    _only, ignore = ctx.options.get("waivers", ((), ()))
    out = []
    for mod, res in snap.imports.items():
        dist = DEEP_TARGETS.get(mod)
        err = res.error if known(res.error) and isinstance(res.error, str) else ""
        if res.ok or dist is None or not absent(snap, dist) or "No module named" not in err:
            continue
        top = snap.module(mod.split(".")[0])
        if known(top) and top is not None:
            continue
        if f"import-{dist}-failed" in ignore or (dist in ignore and dist in headers(REGISTRY)):
            continue  # its own finding (deep-imports' fall-through) is the one the runner drops
        out.append((mod, dist, res))
    return out


def name_the_training_python(ctx: CheckContext, deep: bool) -> str:
    """The fix for a report of an interpreter that is not the training environment: name the one that is (on a
    snapshot, collect it again from there: `check --from` refuses --python)."""
    flag = " --deep" if deep else ""
    instead = " with --python instead" if python_named(ctx) else ""  # the one --python named is not it
    if not ctx.options.get("local") and not ctx.options.get("cluster"):
        return (f"Collect the snapshot again from the training environment's interpreter{instead} (the python that "
                f"runs verl.trainer.main_ppo): `doctor collect{flag} --python PY -o FILE`, then `doctor check --from FILE`")
    command = ctx.options.get("command") or "check"  # smoke's preflight: `doctor smoke --python PY` is meant
    return (f"Name the training environment's interpreter{instead} (the python that runs verl.trainer.main_ppo): "
            f"`doctor {command}{flag if command == 'check' else ''} --python PY`")


def python_named(ctx: CheckContext) -> bool:
    """Whether --python named the interpreter examined: this run's flag on a live check, what the snapshot recorded
    (`python.named`) on one from a file; a snapshot from before the field says nothing (False)."""
    if ctx.options.get("local"):
        return bool(ctx.options.get("python_named"))
    named = ctx.snapshot.python.named if known(ctx.snapshot.python) else False
    return named is True
