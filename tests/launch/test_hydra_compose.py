"""Real Hydra composition against the installed verl 0.9.1 config: every rejected override is a finding
with its key, found in one pass, and the result agrees with Hydra's own compose."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hydra import compose as hcompose
from hydra import initialize_config_dir
from hydra.errors import HydraException

from doctor.errors import InputError
from doctor.launch import hydra_compose
from doctor.launch.override_list import parse_override

A = "actor_rollout_ref.actor.megatron."
OTC = A + "override_transformer_config."

BAD = [
    f"{OTC}use_fused_swiglu=True",  # missing +
    f"+{A}sequence_parallel=True",  # + on an existing key
    "actor_rollout_ref.actor.fsdp_config.grad_offload=False",  # section absent in the megatron config
    f"{A}grad_offload=True",  # removed in 0.9.1
]
GOOD = [f"+{OTC}use_flash_attn=True", f"{A}tensor_model_parallel_size=2", "trainer.n_gpus_per_node=8"]


def ovs(texts):
    return [parse_override(t) for t in texts]


def test_all_rejections_found_with_keys(verl_config_dir):
    res = hydra_compose.compose(ovs(GOOD + BAD), verl_config_dir)
    got = {f.key: f.id for f in res.findings}
    assert got == {
        OTC + "use_fused_swiglu": "launch-key-needs-plus",
        A + "sequence_parallel": "launch-key-plus-on-existing",
        "actor_rollout_ref.actor.fsdp_config.grad_offload": "launch-key-not-in-config",
        A + "grad_offload": "launch-key-not-in-config",  # near miss of param_offload: no "+" advised
    }
    assert res.config is None and sorted(res.rejected) == sorted(BAD)
    with initialize_config_dir(config_dir=str(verl_config_dir), version_base=None):  # the rest composes
        hcompose(config_name="ppo_megatron_trainer", overrides=GOOD)
    assert all(f.evidence["override"] in BAD for f in res.findings)


@pytest.mark.parametrize("bad", BAD)
def test_agrees_with_hydra_compose_itself(bad, verl_config_dir):
    """Oracle: Hydra's compose raises for exactly the overrides we flag."""
    with pytest.raises(HydraException):
        with initialize_config_dir(config_dir=str(verl_config_dir), version_base=None):
            hcompose(config_name="ppo_megatron_trainer", overrides=GOOD + [bad])
    res = hydra_compose.compose(ovs(GOOD + [bad]), verl_config_dir)
    assert [f.evidence["override"] for f in res.findings] == [bad]


def test_clean_overrides_compose_once(verl_config_dir):
    res = hydra_compose.compose(ovs(GOOD + ["model_engine=megatron"]), verl_config_dir)
    assert res.findings == [] and res.config.actor_rollout_ref.actor.strategy == "megatron"
    assert res.config.actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn is True


def test_syntax_errors_are_findings(verl_config_dir):
    res = hydra_compose.compose(ovs(["data.train_files=a b'c"]), verl_config_dir)
    assert [f.id for f in res.findings] == ["launch-override-syntax"]


def test_installed_verl_found_without_importing_it():
    code = ("import sys; from doctor.launch.hydra_compose import installed_verl; v, d = installed_verl(); "
            "print(v, d is not None, 'verl' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["0.9.1", "True", "False", "False"]


def test_config_dir_must_hold_the_trainer_yaml(tmp_path):
    with pytest.raises(InputError) as e:
        hydra_compose.check_config_dir(tmp_path)
    assert str(tmp_path) in str(e.value)
