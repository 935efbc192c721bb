"""Who a frame belongs to when the traceback runs through source checkouts (real runs of Python made here, in
trees shaped like the ones users run from).

A checkout named like its package holds that package as a directory of the same name (`…/verl/verl/workers/…`);
another top-level directory in it is a package of its own that was put on sys.path with the checkout
(`…/verl/megatron/training/…`, Megatron-LM's `megatron` copied beside verl's), not the checkout's code.

An attribute missing from an object of a class the frames' package does not define (`'GDNAttentionMetadataBuilder'
object has no attribute 'aclgraph_support'` in vllm-ascend's code, the builder being vLLM's) is that package reading
an API of the class's package, not an inconsistency of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from doctor.explain.stream import explain_lines
from doctor.report import Severity

# Megatron-LM's megatron/training/global_vars.py get_args, as a checkout beside verl's package holds it
_MEGATRON = {
    "megatron/__init__.py": "",
    "megatron/training/__init__.py": "",
    "megatron/training/global_vars.py": (
        "_GLOBAL_ARGS = None\n\n\n"
        "def get_args():\n    _ensure_var_is_initialized(_GLOBAL_ARGS, 'args')\n    return _GLOBAL_ARGS\n\n\n"
        "def _ensure_var_is_initialized(var, name):\n"
        "    assert var is not None, '{} is not initialized.'.format(name)\n"),
}


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _run(module: str, tmp: Path, *paths: Path) -> list[str]:
    env = {"PYTHONPATH": ":".join(str(p) for p in paths), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", module], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp,
                          env=env, timeout=60, text=True)
    assert done.returncode != 0, done.stdout
    return done.stdout.splitlines()


def _errors(lines: list[str]) -> list:
    return [f for f in explain_lines(lines) if f.severity is Severity.ERROR]


def test_a_package_beside_the_checkouts_own_is_its_own(tmp_path):
    checkout = tmp_path / "workspace" / "verl"
    _tree(checkout, {
        "verl/__init__.py": "",
        "verl/workers/__init__.py": "",
        "verl/workers/megatron_workers.py": (
            "from megatron.training.global_vars import get_args\n\n\n"
            "def repatch():\n    return get_args()\n\n\nif __name__ == '__main__':\n    repatch()\n"),
        **_MEGATRON,
    })
    lines = _run("verl.workers.megatron_workers", tmp_path, checkout)
    assert lines[-1] == "AssertionError: args is not initialized.", lines
    assert f'"{checkout}/megatron/training/global_vars.py"' in "\n".join(lines)
    raised = [f for f in _errors(lines) if f.id == "error-in-package"]
    assert raised and raised[0].components[0] == "megatron", [(f.id, f.components, f.title) for f in _errors(lines)]


def test_the_checkouts_own_package_is_still_the_checkouts(tmp_path):
    checkout = tmp_path / "workspace" / "verl"
    _tree(checkout, {
        "verl/__init__.py": "",
        "verl/trainer/__init__.py": "",
        "verl/trainer/main_ppo.py": "def run(n):\n    if n < 1:\n        raise ValueError(f'n must be >= 1, got {n}')\n\n\n"
                                    "if __name__ == '__main__':\n    run(0)\n",
    })
    lines = _run("verl.trainer.main_ppo", tmp_path, checkout)
    raised = [f for f in _errors(lines) if f.id == "error-in-package"]
    assert raised and raised[0].components[0] == "verl", [(f.id, f.components) for f in _errors(lines)]


def test_an_attribute_missing_from_another_packages_class_is_read_across_packages(tmp_path):
    ascend, vllm = tmp_path / "vllm-workspace" / "vllm-ascend", tmp_path / "vllm-workspace" / "vllm"
    _tree(vllm, {
        "vllm/__init__.py": "",
        "vllm/v1/__init__.py": "",
        "vllm/v1/attention/__init__.py": "",
        "vllm/v1/attention/backends/__init__.py": "",
        "vllm/v1/attention/backends/gdn_attn.py": "class GDNAttentionMetadataBuilder:\n    pass\n",
    })
    _tree(ascend, {
        "vllm_ascend/__init__.py": "",
        "vllm_ascend/worker/__init__.py": "",
        "vllm_ascend/worker/model_runner_v1.py": (
            "from vllm.v1.attention.backends.gdn_attn import GDNAttentionMetadataBuilder\n\n\n"
            "def initialize_aclgraph_capture():\n    builder = GDNAttentionMetadataBuilder()\n"
            "    if builder.aclgraph_support.value < 1:\n        pass\n\n\n"
            "if __name__ == '__main__':\n    initialize_aclgraph_capture()\n"),
    })
    lines = _run("vllm_ascend.worker.model_runner_v1", tmp_path, ascend, vllm)
    assert lines[-1] == "AttributeError: 'GDNAttentionMetadataBuilder' object has no attribute 'aclgraph_support'"
    found = [f for f in _errors(lines) if f.id == "api-version-mismatch"]
    assert found and found[0].components[0] == "vllm" and "vllm-ascend calls vllm" in found[0].title, \
        [(f.id, f.components, f.title) for f in _errors(lines)]


def test_an_exception_in_one_package_called_by_another_names_the_caller(tmp_path):
    """verl's Megatron worker -> MindSpeed's repatch -> get_full_args -> Megatron's get_args -> `AssertionError: args
    is not initialized.` (the shape of https://github.com/verl-project/verl/issues/2932: Megatron asserts, MindSpeed
    called it before Megatron's arguments were parsed): the finding names Megatron's get_args and MindSpeed's
    get_full_args, the frame just outside Megatron's, so the user looks at the MindSpeed / Megatron pair."""
    checkout, mindspeed = tmp_path / "workspace" / "verl", tmp_path / "workspace" / "MindSpeed"
    _tree(mindspeed, {
        "mindspeed/__init__.py": "",
        "mindspeed/args_utils.py": "from megatron.training.global_vars import get_args\n\n\n"
                                   "def get_full_args():\n    full_args = get_args()\n    return full_args\n",
        "mindspeed/megatron_adaptor.py": "from mindspeed.args_utils import get_full_args\n\n\n"
                                         "def repatch(config):\n    full_args = get_full_args()\n    return full_args\n",
    })
    _tree(checkout, {
        "verl/__init__.py": "",
        "verl/workers/__init__.py": "",
        "verl/workers/megatron_workers.py": (
            "from mindspeed.megatron_adaptor import repatch\n\n\n"
            "class ActorRolloutRefWorker:\n    def __init__(self, config):\n        repatch(config)\n\n\n"
            "if __name__ == '__main__':\n    ActorRolloutRefWorker({})\n"),
        **_MEGATRON,
    })
    lines = _run("verl.workers.megatron_workers", tmp_path, checkout, mindspeed)
    assert lines[-1] == "AssertionError: args is not initialized.", lines
    raised = [f for f in _errors(lines) if f.id == "error-in-package"]
    assert raised, [(f.id, f.components, f.title) for f in _errors(lines)]
    f = raised[0]
    assert f.title == "AssertionError raised in megatron-core's get_args, called by mindspeed's get_full_args", f.title
    assert f.components[:2] == ("megatron", "config") and "mindspeed" in f.components, f.components
    assert f.evidence["caller"] == "mindspeed" and f.evidence["callee"] == "megatron-core"
    assert "mindspeed / megatron-core pair" in f.detail
    assert "the installed mindspeed is not the release made for the installed megatron-core" in f.fix.text


def test_an_exception_in_a_package_called_by_the_jobs_own_code_names_no_package_caller(tmp_path):
    """The frame just outside the raising package is the job's script: no other package to pair it with (the
    finding stays the package's own, as before)."""
    checkout = tmp_path / "workspace" / "verl"
    _tree(checkout, {
        "verl/__init__.py": "",
        "verl/trainer/__init__.py": "",
        "verl/trainer/main_ppo.py": "def run(n):\n    if n < 1:\n        raise ValueError(f'n must be >= 1, got {n}')\n",
    })
    (tmp_path / "job.py").write_text("from verl.trainer.main_ppo import run\n\nrun(0)\n")
    env = {"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "job.py"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path,
                          env=env, timeout=60, text=True)
    raised = [f for f in _errors(done.stdout.splitlines()) if f.id == "error-in-package"]
    assert raised and raised[0].title == "ValueError raised inside verl's own code"
    assert "caller" not in raised[0].evidence
