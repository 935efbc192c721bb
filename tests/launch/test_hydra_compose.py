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


def _plugin(root, name: str):
    """A package that brings its own config group option through `hydra.searchpath` (as verl_mlite does)."""
    pkg = root / name
    (pkg / "config" / "actor").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('lint imported me')\n")  # lint must not run its code
    (pkg / "config" / "__init__.py").write_text("")
    (pkg / "config" / "actor" / "lite_actor.yaml").write_text("strategy: megatron\nengine:\n  tp: 1\n  pp: 1\n")
    return pkg


LITE = ["actor@actor_rollout_ref.actor=lite_actor", "actor_rollout_ref.actor.engine.tp=2",
        "trainer.n_gpus_per_node=8"]


def test_a_search_path_source_that_is_not_here_leaves_its_overrides_unchecked_not_wrong(verl_config_dir):
    # upstream's Megatron Lite examples (verl v0.9.0 examples/grpo_trainer/run_*_megatron_lite.sh) add
    # pkg://verl_mlite.config: its actor option and the keys it defines drew 13 errors
    res = hydra_compose.compose(ovs(["hydra.searchpath=[pkg://absent_mlite_xyz.config]", *LITE,
                                     "trainer.not_a_key=1"]), verl_config_dir)
    errors = {f.key for f in res.findings if f.severity.value == "error"}
    assert errors == {"trainer.not_a_key"}  # what verl's own config holds is still judged
    outside = [f for f in res.findings if f.id == "launch-config-outside"]
    assert len(outside) == 1 and outside[0].severity.value == "info"
    assert outside[0].evidence["overrides"] == LITE[:2]
    assert outside[0].evidence["searchpath"] == ["pkg://absent_mlite_xyz.config"]


def test_a_search_path_source_that_is_here_is_composed_with_without_importing_it(verl_config_dir, tmp_path,
                                                                                 monkeypatch):
    _plugin(tmp_path, "present_mlite_xyz")
    monkeypatch.syspath_prepend(str(tmp_path))
    sp = "hydra.searchpath=[pkg://present_mlite_xyz.config]"
    res = hydra_compose.compose(ovs([sp, *LITE]), verl_config_dir)
    assert res.findings == [] and res.flat["actor_rollout_ref.actor.engine.tp"] == 2
    res = hydra_compose.compose(ovs([sp, *LITE, "actor_rollout_ref.actor.engine.tpx=2"]), verl_config_dir)
    assert [(f.severity.value, f.key) for f in res.findings] == [("error", "actor_rollout_ref.actor.engine.tpx")]


def test_hydras_own_settings_are_not_keys_of_verls_config(verl_config_dir):
    res = hydra_compose.compose(ovs(["hydra.run.dir=/tmp/run", "hydra.job.chdir=False", *GOOD]), verl_config_dir)
    assert res.findings == []
    # also when another override fails and every override is located one by one
    res = hydra_compose.compose(ovs(["hydra.run.dir=/tmp/run", *GOOD, BAD[0]]), verl_config_dir)
    assert [f.key for f in res.findings] == [OTC + "use_fused_swiglu"]
