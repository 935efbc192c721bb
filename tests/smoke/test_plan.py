"""The smoke's launch spec: layouts that fit the devices, and overrides that compose against the real verl
config through doctor.launch's validator (real Hydra, installed verl 0.9.1 wheel)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.smoke import plan, runner


@pytest.mark.parametrize(
    ("visible", "tp", "pp", "want"),
    [
        (0, None, None, (2, 2, 2, True)),  # no NPU: planned for an 8-NPU node
        (1, None, None, (1, 1, 1, False)),
        (2, None, None, (2, 1, 1, False)),
        (4, None, None, (2, 2, 1, False)),
        (8, None, None, (2, 2, 2, False)),
        (16, None, None, (2, 2, 2, False)),
        (8, 4, 1, (4, 1, 2, False)),
        (8, 1, 1, (1, 1, 2, False)),
        (6, 2, 2, (2, 2, 1, False)),
    ],
)
def test_choose_layout(visible, tp, pp, want) -> None:
    lay = plan.choose_layout(visible, tp, pp)
    assert (lay.tp, lay.pp, lay.dp, lay.assumed) == want
    assert lay.world <= (visible or plan.ASSUMED_NPUS)


def test_layout_that_does_not_fit_is_refused() -> None:
    with pytest.raises(InputError, match="needs more NPUs"):
        plan.choose_layout(4, 4, 2)


def test_visible_npus_from_env_or_device_nodes(tmp_path: Path) -> None:
    assert plan.visible_npus({"ASCEND_RT_VISIBLE_DEVICES": "0,1,2"}) == 3
    for name in ("davinci0", "davinci1", "davinci_manager", "davinci12"):
        (tmp_path / name).touch()
    assert plan.visible_npus({}, str(tmp_path / "davinci[0-9]*")) == 3


def _installed_verl() -> str:
    try:
        return importlib.metadata.version("verl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("verl not installed (pip install --no-deps verl==0.9.1)")


@pytest.mark.parametrize(("tp", "pp", "steps"), [(2, 2, 1), (1, 1, 2), (4, 2, 1)])
def test_spec_composes_against_real_verl_config(tmp_path: Path, tp: int, pp: int, steps: int) -> None:
    version = _installed_verl()
    lay = plan.choose_layout(8, tp, pp)
    spec = plan.build_spec(layout=lay, steps=steps, verl_version=version, model_dir=tmp_path / "model",
                           train_file=tmp_path / "train.parquet", val_file=tmp_path / "test.parquet",
                           megatron_bridge=False, ray_overrides=runner.ray_isolation_overrides(Path("/tmp/doctor-ray-x")))
    out = plan.through_launch(spec)
    assert out.missing == []
    errors = [f for f in out.findings if f.severity.value == "error"]
    assert errors == [], [f.title for f in errors]
    assert "launch-schema-composed" in {f.id for f in out.findings}
    ov = out.overrides
    for must in (
        "algorithm.adv_estimator=grpo",
        "actor_rollout_ref.actor.strategy=megatron",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
        f"actor_rollout_ref.actor.megatron.tensor_model_parallel_size={tp}",
        f"actor_rollout_ref.actor.megatron.pipeline_model_parallel_size={pp}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.n=2",
        f"actor_rollout_ref.rollout.gpu_memory_utilization={plan.GPU_MEMORY_UTILIZATION}",
        f"trainer.total_training_steps={steps}",
        "trainer.val_before_train=False",
        "trainer.test_freq=-1",
        "trainer.save_freq=-1",
        "+ray_kwargs.ray_init._temp_dir=/tmp/doctor-ray-x/ray",
    ):
        assert must in ov, must
    assert any(o.startswith("trainer.logger=") and "console" in o for o in ov)
    assert out.script is not None and "verl.trainer.main_ppo" in out.script


def test_probe_target_reads_versions_without_importing_verl() -> None:
    t = plan.probe_target(sys.executable)
    assert t.python_version and t.python_version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    try:
        assert t.verl == importlib.metadata.version("verl")
    except importlib.metadata.PackageNotFoundError:
        assert t.verl is None


def test_probe_target_bad_interpreter(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot run"):
        plan.probe_target(str(tmp_path / "python3"))
    with pytest.raises(InputError, match="failed"):
        plan.probe_target("/bin/false")


def test_recommended_env_keeps_user_values() -> None:
    env = plan.recommended_env({"HCCL_CONNECT_TIMEOUT": "3000"})
    assert "HCCL_CONNECT_TIMEOUT" not in env
    assert env.get("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES") == "1"
