"""Each validation rule fires on the mistake it describes, names the key, and stays quiet on the fix."""

from __future__ import annotations

import pytest

from doctor.launch import LaunchSpec, validate
from doctor.launch.features import REF_O, A
from doctor.launch.features import O as OTC
from doctor.launch.model_config import load_model_config
from doctor.launch.override_list import build_overrides, parse_override
from doctor.launch.rules import Context, check
from doctor.report import Severity


def run(texts: list[str], version: str = "0.9.1", model=None, megatron_bridge=None, config_name="ppo_megatron_trainer"):
    ovs = [parse_override(t) for t in texts]
    assert all(ovs), texts
    return check(ovs, Context(verl_version=version, model=model, megatron_bridge=megatron_bridge,
                              config_name=config_name))


def by_id(findings, id_):
    return [f for f in findings if f.id == id_]


BASE = [
    "actor_rollout_ref.actor.strategy=megatron",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
    "actor_rollout_ref.actor.ppo_mini_batch_size=8",
    "data.train_batch_size=16",
    "actor_rollout_ref.rollout.n=2",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4",
    "trainer.n_gpus_per_node=8",
    "trainer.nnodes=1",
    f"{A}vanilla_mbridge=True",
]


def errors(fs):
    return sorted({f.id for f in fs if f.severity is Severity.ERROR})


def test_base_is_clean():
    assert errors(run(BASE)) == []


def test_fa_false_is_always_an_error():
    for version in ("0.7.1", "0.9.1"):
        f = by_id(run(BASE + [f"+{OTC}use_flash_attn=False"], version), "launch-fa-off")
        assert f and f[0].key == OTC + "use_flash_attn" and f[0].severity is Severity.ERROR


def test_fa_missing_is_an_error_only_below_080():
    assert by_id(run(BASE, "0.7.1"), "launch-fa-missing")[0].key == OTC + "use_flash_attn"
    assert by_id(run(BASE, "0.8.0"), "launch-fa-missing") == []
    assert by_id(run(BASE + [f"+{OTC}use_flash_attn=True"], "0.7.1"), "launch-fa-missing") == []


def test_mbridge_vpp_and_required():
    vpp = [f"{A}pipeline_model_parallel_size=2", f"{A}virtual_pipeline_model_parallel_size=2"]
    f = by_id(run(BASE + vpp + [f"+{OTC}use_flash_attn=True"], "0.7.1"), "launch-mbridge-vpp")
    assert f and f[0].components == ("config", "mbridge")  # 0.7.x defaults use_mbridge=True
    ok = run(BASE + vpp + [f"{A}use_mbridge=False", f"+{OTC}use_flash_attn=True"], "0.7.1")
    assert "launch-mbridge-vpp" not in errors(ok) and "launch-mbridge-required" not in errors(ok)
    off = run(BASE + vpp + [f"{A}use_mbridge=False"], "0.9.1")
    assert "launch-mbridge-required" in errors(off)


FA = f"+{OTC}use_flash_attn=True"
VPP = [f"{A}pipeline_model_parallel_size=2", f"{A}virtual_pipeline_model_parallel_size=2"]


@pytest.mark.parametrize("version,extra", [("0.8.0", []), ("0.9.1", []), ("0.7.1", ["trainer.use_legacy_worker_impl=disable"])])
def test_mbridge_with_vpp_is_no_error_on_the_engine_worker(version, extra):
    """The IndexError of mbridge with VPP (verl-project/verl#4815) is the legacy megatron worker's; main_ppo runs
    the engine worker from 0.8.0 (the legacy one deleted) and on 0.7.x with use_legacy_worker_impl=disable, and
    upstream's Ascend CI runs mbridge with PP=2, VPP=2 there. Before, every such run was refused."""
    found = run(BASE + VPP + [f"{A}use_mbridge=True", FA, *extra], version)
    assert "launch-mbridge-vpp" not in errors(found), found
    assert errors(found) == []


@pytest.mark.parametrize("impl", ["auto", "enable"])
def test_mbridge_with_vpp_is_an_error_on_the_legacy_worker(impl):
    f = by_id(run(BASE + VPP + [FA, f"trainer.use_legacy_worker_impl={impl}"], "0.7.1"), "launch-mbridge-vpp")
    assert f and f[0].severity is Severity.ERROR and "use_legacy_worker_impl=disable" in f[0].fix.text
    assert "megatron_workers.py" in f[0].detail and "#L128-L163" in f[0].source


def test_mbridge_off_on_the_0_7_engine_worker_is_refused_by_its_engine():
    """0.7.x's engine worker asserts use_mbridge like 0.8.0's (transformer_impl.py at v0.7.0 / v0.7.1)."""
    assert "launch-mbridge-required" in errors(run(BASE + [f"{A}use_mbridge=False", FA,
                                                           "trainer.use_legacy_worker_impl=disable"], "0.7.1"))
    assert "launch-mbridge-required" not in errors(run(BASE + [f"{A}use_mbridge=False", FA], "0.7.1"))


def test_vanilla_mbridge_needs_megatron_bridge_on_090():
    base = [t for t in BASE if "vanilla_mbridge" not in t]
    assert by_id(run(base, "0.9.1", megatron_bridge=False), "launch-vanilla-mbridge")[0].severity is Severity.ERROR
    # unknown installation: 0.9.1's Ascend install ships Megatron-Bridge (releases.toml npu_megatron_bridge), so info
    assert by_id(run(base, "0.9.1"), "launch-vanilla-mbridge")[0].severity is Severity.INFO
    assert by_id(run(base, "0.9.1", megatron_bridge=True), "launch-vanilla-mbridge") == []
    assert by_id(run(base, "0.8.0", megatron_bridge=False), "launch-vanilla-mbridge") == []


def test_sp_in_override_dict_with_tp1_is_error_but_verl_key_only_warns():
    f = by_id(run(BASE + [f"+{OTC}sequence_parallel=True"]), "launch-sp-without-tp")
    assert f and f[0].key == OTC + "sequence_parallel"
    w = by_id(run(BASE + [f"{A}sequence_parallel=True"]), "launch-sp-tp1-ignored")
    assert w and w[0].severity is Severity.WARNING and w[0].key == A + "sequence_parallel"
    assert by_id(run(BASE + [f"{A}tensor_model_parallel_size=2", f"+{OTC}sequence_parallel=True"]),
                 "launch-sp-without-tp") == []


def test_ep_with_tp_needs_sp():
    ovs = BASE + [f"{A}tensor_model_parallel_size=2", f"{A}expert_model_parallel_size=2", f"{A}sequence_parallel=False"]
    assert by_id(run(ovs), "launch-ep-tp-needs-sp")[0].key == A + "sequence_parallel"
    assert by_id(run(ovs[:-1]), "launch-ep-tp-needs-sp") == []  # verl default SP=True


def test_recompute_rules(models):
    m = load_model_config(models["dense"])  # 28 layers
    full_no_method = run(BASE + [f"{OTC}recompute_granularity=full", f"{OTC}recompute_num_layers=1"], model=m)
    assert by_id(full_no_method, "launch-recompute-incomplete")[0].key == OTC + "recompute_method"
    full_no_layers = run(BASE + [f"{OTC}recompute_granularity=full", f"{OTC}recompute_method=uniform"], model=m)
    assert by_id(full_no_layers, "launch-recompute-incomplete")[0].key == OTC + "recompute_num_layers"
    sel = run(BASE + [f"{OTC}recompute_granularity=selective", f"{OTC}recompute_num_layers=2"], model=m)
    assert by_id(sel, "launch-recompute-selective-layers")
    rng = run(BASE + [f"{A}pipeline_model_parallel_size=2", f"{OTC}recompute_granularity=full",
                      f"{OTC}recompute_method=block", f"{OTC}recompute_num_layers=15"], model=m)
    assert by_id(rng, "launch-recompute-layers-range")[0].title.startswith("recompute_num_layers=15 is outside 1..14")
    ok = run(BASE + [f"{OTC}recompute_granularity=full", f"{OTC}recompute_method=uniform", f"{OTC}recompute_num_layers=1"], model=m)
    assert errors(ok) == []
    bad = run(BASE + [f"{OTC}recompute_granularity=partial"])
    assert by_id(bad, "launch-recompute-invalid")


def test_vpp_needs_pp_and_divisible_layers(models):
    m = load_model_config(models["dense"])  # 28 layers
    ovs = BASE + [f"{A}use_mbridge=False", f"+{OTC}use_flash_attn=True"]
    assert by_id(run(ovs + [f"{A}virtual_pipeline_model_parallel_size=2"], "0.7.1", model=m), "launch-vpp-needs-pp")
    f = run(ovs + [f"{A}pipeline_model_parallel_size=2", f"{A}virtual_pipeline_model_parallel_size=3"], "0.7.1", model=m)
    assert by_id(f, "launch-vpp-layers-indivisible")


def test_cp_keys_must_agree():
    f = run(BASE + [f"{A}context_parallel_size=2", f"+{OTC}context_parallel_size=4"])
    assert by_id(f, "launch-cp-mismatch")[0].key == OTC + "context_parallel_size"
    assert by_id(run(BASE + [f"{A}context_parallel_size=2", f"+{OTC}context_parallel_size=2"]), "launch-cp-mismatch") == []
    old = run(BASE + [f"{A}context_parallel_size=2", f"+{OTC}use_flash_attn=True"], "0.7.1")
    assert by_id(old, "launch-cp-override-missing")


def test_moe_features_on_dense_model_and_expert_divisibility(models):
    dense = load_model_config(models["dense"])
    for extra in ([f"{A}expert_model_parallel_size=2"], [f"+{OTC}moe_grouped_gemm=True"],
                  [f"+{OTC}use_fused_moe_token_permute_and_unpermute=True"], [f"{A}expert_tensor_parallel_size=2"]):
        f = by_id(run(BASE + extra, model=dense), "launch-moe-on-dense")
        assert f and f[0].key == parse_override(extra[0].lstrip("+")).key
    moe = load_model_config(models["moe"])  # 128 experts
    assert by_id(run(BASE + [f"{A}expert_model_parallel_size=3"], model=moe), "launch-experts-indivisible")
    assert by_id(run(BASE + [f"{A}expert_model_parallel_size=8"], model=moe), "launch-experts-indivisible") == []


def test_heads_kv_heads_layers(models):
    m = load_model_config(models["qwen25"])  # 14 heads, 2 KV heads, 24 layers
    f = run(BASE + [f"{A}tensor_model_parallel_size=4"], model=m)
    assert by_id(f, "launch-heads-indivisible") and by_id(f, "launch-kv-heads-indivisible")
    f = run(BASE + [f"{A}pipeline_model_parallel_size=5", "trainer.n_gpus_per_node=5"], model=m)
    assert by_id(f, "launch-layers-indivisible")[0].key == A + "pipeline_model_parallel_size"


def test_world_size_and_batch_rules():
    f = run(BASE + [f"{A}tensor_model_parallel_size=3"])
    assert by_id(f, "launch-world-size-indivisible")
    f = run([t for t in BASE if "ppo_micro" not in t])
    assert by_id(f, "launch-micro-batch-missing")
    f = run(BASE + ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=3"])  # 16*2 % (8*3)
    assert by_id(f, "launch-batch-indivisible")[0].key == "data.train_batch_size"
    f = run(BASE + ["actor_rollout_ref.actor.ppo_mini_batch_size=32"])
    assert by_id(f, "launch-mini-batch-too-large")
    f = run([t for t in BASE if "ref.log_prob" not in t] + ["actor_rollout_ref.actor.use_kl_loss=True"])
    assert by_id(f, "launch-log-prob-micro-batch-missing")[0].key == "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu"
    f = run(BASE + ["actor_rollout_ref.rollout.tensor_model_parallel_size=3"])
    assert by_id(f, "launch-rollout-tp-indivisible")
    assert errors(run(BASE + ["actor_rollout_ref.actor.use_dynamic_bsz=True",
                              "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=3"])) == []


def test_gpu_memory_utilization_warning():
    f = by_id(run(BASE + ["actor_rollout_ref.rollout.gpu_memory_utilization=0.95"]), "launch-gpu-memory-utilization")
    assert f and f[0].severity is Severity.WARNING
    assert by_id(run(BASE + ["actor_rollout_ref.rollout.gpu_memory_utilization=0.9"]), "launch-gpu-memory-utilization") == []


def test_prefix_rules_from_key_tables():
    f = run(BASE + [f"{OTC}use_fused_rmsnorm=True"], "0.7.1")
    assert by_id(f, "launch-key-needs-plus")[0].key == OTC + "use_fused_rmsnorm"
    f = run(BASE + [f"+{A}sequence_parallel=True"], "0.7.1")
    assert by_id(f, "launch-key-plus-on-existing")[0].key == A + "sequence_parallel"
    assert by_id(run(BASE + [f"+{OTC}recompute_method=uniform"], "0.7.1"), "launch-key-plus-on-existing") == []
    assert by_id(run(BASE + [f"+{OTC}attention_backend=flash"], "0.7.1"), "launch-key-plus-on-existing")
    assert by_id(run(BASE + [f"{A}vanilla_mbridge=True"], "0.6.1"), "launch-key-needs-plus")
    f = run(BASE + [f"{A}grad_offload=True"], "0.9.1")
    assert by_id(f, "launch-key-removed") and by_id(run(BASE + [f"{A}grad_offload=True"], "0.9.0"), "launch-key-removed") == []


def test_ref_override_replacement_names_lost_keys():
    f = run(BASE + [f"+{OTC}use_flash_attn=True", f"{OTC}recompute_granularity=full", f"++{REF_O}use_flash_attn=True"])
    w = by_id(f, "launch-ref-override-replaced")
    assert w and w[0].severity is Severity.WARNING
    lost = w[0].evidence["keys_lost"]
    assert "recompute_granularity" in lost and "attention_backend" in lost and "use_flash_attn" not in lost
    f = run(BASE + [f"+{OTC}use_flash_attn=True", f"+{REF_O}use_flash_attn=True"])
    assert by_id(f, "launch-key-plus-on-existing")[0].key == REF_O + "use_flash_attn"
    assert by_id(run(BASE + [f"{REF_O}recompute_method=uniform"]), "launch-key-needs-plus")


def test_old_verl_needs_device_and_explicit_ref_layout():
    ovs = BASE + [f"+{OTC}use_flash_attn=True", f"{A}tensor_model_parallel_size=2"]
    f = run(ovs, "0.6.1")
    assert by_id(f, "launch-trainer-device")[0].key == "trainer.device"
    assert by_id(f, "launch-ref-parallel-implicit")[0].key == "actor_rollout_ref.ref.megatron.tensor_model_parallel_size"
    fixed = run(ovs + ["trainer.device=npu", "actor_rollout_ref.ref.megatron.tensor_model_parallel_size=2"], "0.6.1")
    assert by_id(fixed, "launch-trainer-device") == [] and by_id(fixed, "launch-ref-parallel-implicit") == []
    assert by_id(run(ovs, "0.7.0"), "launch-trainer-device") == []


def test_config_name_and_strategy():
    assert by_id(run(BASE, config_name=None), "launch-config-name")
    assert by_id(run(BASE, config_name="ppo_megatron_trainer.yaml"), "launch-config-name") == []
    assert by_id(run(BASE + ["actor_rollout_ref.actor.strategy=fsdp"]), "launch-strategy")


def test_fused_prerequisites_and_model_conflicts(models):
    gpt2 = load_model_config(models["gpt2"])
    f = run(BASE + [f"+{OTC}normalization=RMSNorm", f"+{OTC}use_fused_rmsnorm=True"], model=gpt2)
    assert by_id(f, "launch-fused-model-conflict")[0].key == OTC + "normalization"
    f = run(BASE + [f"+{OTC}swiglu=True", f"+{OTC}use_fused_swiglu=True"], model=gpt2)
    assert by_id(f, "launch-fused-model-conflict")[0].key == OTC + "swiglu"
    f = run(BASE + [f"+{OTC}position_embedding_type=rope", f"+{OTC}use_fused_rotary_pos_emb=True"], model=gpt2)
    assert by_id(f, "launch-fused-model-conflict")[0].key == OTC + "position_embedding_type"
    f = run(BASE + [f"+{OTC}use_fused_rotary_pos_emb=True"])
    assert by_id(f, "launch-fused-prereq-missing")[0].severity is Severity.ERROR


@pytest.mark.parametrize("fused", ["rmsnorm", "swiglu", "rope"])
def test_launch_refuses_fusion_the_model_contradicts(fused, models):
    spec = LaunchSpec(verl_version="0.9.1", model=models["gpt2"], fused=(fused,), tp=1)
    assert "launch-fused-model-conflict" in errors(validate(spec, compose=False))


def test_every_finding_names_a_key_or_is_info(models):
    spec = LaunchSpec(verl_version="0.6.1", model=models["qwen25"], tp=4, pp=5, vpp=2, cp=2, ep=2,
                      fused=("gmm", "rmsnorm"), recompute="selective", recompute_layers=2, sp=True,
                      gpu_memory_utilization=0.95, npus_per_node=8)
    fs = validate(spec, compose=False)
    assert len(errors(fs)) >= 6
    for f in fs:
        if f.severity is not Severity.INFO:
            assert f.key, f.id
            assert f.fix and f.fix.text, f.id
            assert f.source, f.id
            assert f.evidence, f.id


def test_every_rule_finding_carries_evidence_fix_and_source(models):
    """Run every mistake this module knows about at once; each warning/error follows the report contract."""
    m = load_model_config(models["qwen25"])
    texts = [t for t in BASE if "micro" not in t] + [
        f"+{OTC}use_flash_attn=False", f"+{OTC}sequence_parallel=True", f"{A}sequence_parallel=True",
        f"{A}virtual_pipeline_model_parallel_size=2", f"{A}use_mbridge=False", f"{A}context_parallel_size=3",
        f"+{OTC}context_parallel_size=2", f"{OTC}recompute_granularity=full", f"{A}expert_model_parallel_size=2",
        f"+{OTC}use_fused_rotary_pos_emb=True", f"+{OTC}use_fused_rmsnorm=True", f"{OTC}use_fused_swiglu=True",
        "actor_rollout_ref.rollout.gpu_memory_utilization=0.99", f"++{REF_O}x=1", f"+{A}seed=1",
        "actor_rollout_ref.actor.use_kl_loss=True", f"{A}tensor_model_parallel_size=4", "trainer.nnodes=2",
        "actor_rollout_ref.model.path=/m", f"{A}grad_offload=True",
    ]
    fs = run(texts, "0.9.1", model=m, megatron_bridge=False, config_name=None)
    assert len({f.id for f in fs}) >= 15
    for f in fs:
        if f.severity is not Severity.INFO:
            assert f.key and f.fix and f.fix.text and f.source and f.evidence, f


def test_build_overrides_version_rules():
    def keys(v, **kw):
        return [o.text for o in build_overrides(LaunchSpec(verl_version=v, **kw))]

    assert f"{A}vanilla_mbridge=True" in keys("0.9.1")
    assert not any("vanilla_mbridge" in k for k in keys("0.9.1", megatron_bridge=True))
    assert not any("vanilla_mbridge" in k for k in keys("0.8.0"))
    old = keys("0.6.1", tp=2, pp=2, cp=2)
    assert "actor_rollout_ref.ref.megatron.tensor_model_parallel_size=2" in old
    assert "actor_rollout_ref.ref.megatron.context_parallel_size=2" in old
    assert not any(k.startswith("actor_rollout_ref.ref.megatron.tensor") for k in keys("0.7.0", tp=2))
    for v in ("0.6.1", "0.9.1"):
        assert f"+{OTC}use_flash_attn=True" in keys(v)
        assert "trainer.device=npu" in keys(v)


@pytest.mark.parametrize("path", ["Qwen/Qwen3-32B", "Qwen/Qwen2.5-VL-32B-Instruct", "hdfs://nn:9000/models/qwen"])
def test_a_hub_id_or_hdfs_model_path_needs_no_copy_on_every_node(path):
    """verl's copy_to_local takes a Hugging Face model id or an hdfs:// path and gives each node its own copy (the
    upstream NPU scripts' `model.path=Qwen/Qwen3-32B` on 2-16 nodes): never the every-node warning. A hub id
    that may also be a relative directory is said, as info."""
    multi = [t for t in BASE if not t.startswith("trainer.nnodes")] + ["trainer.nnodes=4"]
    got = by_id(run(multi + [f"actor_rollout_ref.model.path={path}"]), "launch-model-path-every-node")
    assert [f.severity for f in got] == ([] if path.startswith("hdfs://") else [Severity.INFO])
    for local in ("/data/models/Qwen3-32B", "$HOME/models/Qwen3-32B", "models/qwen3/32b", "./Qwen3-32B"):
        got = by_id(run(multi + [f"actor_rollout_ref.model.path={local}"]), "launch-model-path-every-node")
        assert [f.severity for f in got] == [Severity.WARNING], local
