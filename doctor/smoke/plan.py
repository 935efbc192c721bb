"""The smoke run as a launch spec: a tiny GRPO job on the megatron strategy with MindSpeed flash attention.

The spec goes through `doctor.launch` — the same validator and override writer `doctor launch` uses — so
the smoke proves the exact overrides the tool recommends. What the smoke adds on top, as `extra_overrides`:
no validation before training (`trainer.val_before_train=False`; test_freq/save_freq stay -1 = no validation,
no checkpoint), torch.compile off for actor and ref (as verl's own NPU smoke script does since v0.7.1,
docs/verl-mindspeed.md "The smoke run"), and Ray isolation (its own temp dir).

Sizes mirror verl's `tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh` scaled down: rollout n=2, one or
two training steps, micro batch 1, and batches that satisfy verl's divisibility rules (docs/verl-mindspeed.md,
"verl's batch rules").
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doctor.errors import InputError
from doctor.report import Finding, finding

ASSUMED_NPUS = 8  # dry-run on a host without NPUs: plan for an A2 node (chips.DEFAULT_NPUS_PER_NODE)
MAX_DP = 2  # a smoke needs DP>1 to exercise the gradient all-reduce, not more

TRAIN_BATCH = 8
MINI_BATCH = 8
MICRO_BATCH = 1
LOGPROB_MICRO = 2
ROLLOUT_N = 2
MAX_PROMPT = 256
MAX_RESPONSE = 64
GPU_MEMORY_UTILIZATION = 0.3


def visible_npus(environ: Mapping[str, str] | None = None, dev_glob: str = "/dev/davinci[0-9]*") -> int:
    """NPUs this process may use: `ASCEND_RT_VISIBLE_DEVICES` if set, else the /dev/davinciN nodes."""
    env = os.environ if environ is None else environ
    vis = env.get("ASCEND_RT_VISIBLE_DEVICES")
    if vis is not None and vis.strip():
        return len([x for x in vis.split(",") if x.strip()])
    return len([p for p in glob.glob(dev_glob) if re.search(r"davinci\d+$", p)])


@dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    dp: int
    visible: int
    assumed: bool  # no NPU visible: planned for ASSUMED_NPUS

    @property
    def world(self) -> int:
        return self.tp * self.pp * self.dp

    def to_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "npus": self.world, "visible": self.visible,
                "assumed": self.assumed}


def choose_layout(visible: int, tp: int | None = None, pp: int | None = None) -> Layout:
    """TP/PP defaults that fit the devices (TP2 from 2 NPUs, PP2 from 4, like verl's TP2/PP2 smoke), then the
    largest power-of-two DP up to MAX_DP that still fits. Explicit TP/PP that do not fit are refused."""
    assumed = visible < 1
    n = ASSUMED_NPUS if assumed else visible
    t = tp if tp is not None else (2 if n >= 2 else 1)
    p = pp if pp is not None else (2 if n >= 4 else 1)
    if t < 1 or p < 1:
        raise InputError("--tp and --pp must be >= 1")
    if t * p > n:
        raise InputError(f"TP×PP = {t * p} needs more NPUs than are visible ({n})",
                         path="--tp/--pp")
    dp = 1
    while dp * 2 <= MAX_DP and t * p * dp * 2 <= n:
        dp *= 2
    return Layout(tp=t, pp=p, dp=dp, visible=visible, assumed=assumed)


def smoke_extra_overrides(ray_overrides: list[str]) -> list[str]:
    return [
        "trainer.val_before_train=False",
        "actor_rollout_ref.actor.use_torch_compile=False",
        "actor_rollout_ref.ref.use_torch_compile=False",
        *ray_overrides,
    ]


def build_spec(
    *,
    layout: Layout,
    steps: int,
    verl_version: str,
    model_dir: Path,
    train_file: Path,
    val_file: Path,
    megatron_bridge: bool,
    ray_overrides: list[str],
) -> Any:
    """The LaunchSpec (doctor.launch.spec) for the smoke run."""
    from doctor.launch.spec import LaunchSpec

    return LaunchSpec(
        verl_version=verl_version,
        model=str(model_dir),
        nodes=1,
        npus_per_node=layout.world,
        tp=layout.tp,
        pp=layout.pp,
        cp=1,
        ep=1,
        megatron_bridge=megatron_bridge,
        algorithm="grpo",
        train_files=str(train_file),
        val_files=str(val_file),
        train_batch_size=TRAIN_BATCH,
        ppo_mini_batch_size=MINI_BATCH,
        ppo_micro_batch_size_per_gpu=MICRO_BATCH,
        log_prob_micro_batch_size_per_gpu=LOGPROB_MICRO,
        max_prompt_length=MAX_PROMPT,
        max_response_length=MAX_RESPONSE,
        rollout_n=ROLLOUT_N,
        rollout_tp=layout.tp,
        rollout_name="vllm",
        gpu_memory_utilization=GPU_MEMORY_UTILIZATION,
        lr=1e-6,
        total_epochs=1,
        total_training_steps=steps,
        test_freq=-1,
        save_freq=-1,
        project_name="verl_doctor",
        experiment_name="doctor_smoke",
        extra_overrides=tuple(smoke_extra_overrides(ray_overrides)),
    )


@dataclass(frozen=True)
class LaunchOutput:
    overrides: list[str]
    findings: list[Finding]
    script: str | None
    missing: list[str]  # launch API pieces that were not available (reported, never silently skipped)
    config_name: str = "ppo_trainer"  # the config launch composed and validated, and its script runs


def through_launch(spec: Any) -> LaunchOutput:
    """Validate, write overrides and render the script with doctor.launch; report what it lacks."""
    import importlib

    launch = importlib.import_module("doctor.launch")
    missing: list[str] = []

    ov_fn = getattr(launch, "overrides", None)
    if not callable(ov_fn):
        ov_fn = getattr(importlib.import_module("doctor.launch.overrides"), "overrides", None)
    if not callable(ov_fn):
        raise InputError("doctor.launch provides no overrides(spec)")
    overrides = list(ov_fn(spec))

    findings: list[Finding] = []
    validate = getattr(launch, "validate", None)
    if callable(validate):
        findings = list(validate(spec))
    else:
        missing.append("doctor.launch.validate")
        findings.append(
            finding(
                "smoke-launch-validator-missing",
                "warning",
                "config",
                "The launch validator is not available; the smoke overrides were not validated",
                evidence={"module": "doctor.launch"},
                fix="Update the doctor; the run itself will still show any config error.",
            )
        )
    script = None
    render = getattr(launch, "render_script", None)
    if callable(render):
        script = str(render(spec))
    else:
        missing.append("doctor.launch.render_script")
    from doctor.launch.override_list import config_name_for

    # the run uses the config validation composed (verl 0.9: ppo_trainer with model_engine=megatron), as the script does
    return LaunchOutput(overrides=overrides, findings=findings, script=script, missing=missing,
                        config_name=config_name_for(spec.verl_version))


def recommended_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables `doctor launch`'s script exports (HCCL ports/timeouts, Ray device visibility, …), with the
    script's `${X:-default}` rule: a value the user already exported is kept (so it is not listed here)."""
    try:
        from doctor.launch.render import RECOMMENDED_ENV
    except ImportError:
        return {}
    return {name: value for name, value, _why in RECOMMENDED_ENV if not environ.get(name)}


_TARGET_PROBE = (
    "import importlib.metadata as m, json, sys\n"
    "def v(n):\n"
    "    try:\n"
    "        return m.version(n)\n"
    "    except Exception:\n"
    "        return None\n"
    "print(json.dumps({'verl': v('verl'), 'megatron_bridge': v('megatron-bridge'),"
    " 'python': '%d.%d.%d' % sys.version_info[:3]}))\n"
)


@dataclass(frozen=True)
class Target:
    python: str
    verl: str | None
    megatron_bridge: str | None
    python_version: str | None


def probe_target(python: str, timeout: float = 30.0) -> Target:
    """Versions in the training interpreter, read from package metadata (no import of verl or torch)."""
    import json
    import subprocess

    try:
        out = subprocess.run(  # noqa: S603 - fixed argv
            [python, "-c", _TARGET_PROBE], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(f"cannot run the training interpreter: {e}", source=python) from e
    if out.returncode != 0:
        raise InputError(f"the training interpreter failed: {out.stderr.strip()[-300:]}", source=python)
    try:
        d = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise InputError(f"unexpected output from the training interpreter: {out.stdout[-200:]!r}", source=python) from e
    return Target(python=python, verl=d.get("verl"), megatron_bridge=d.get("megatron_bridge"),
                  python_version=d.get("python"))
