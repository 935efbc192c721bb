"""Knowledge as data: the MindSpeed feature table and verl's megatron key schema per release.

The feature table is MindSpeed's verl page (https://github.com/Ascend/MindSpeed/blob/92f0e92234ddb7a7643ab9fd8e1a6f316e15be2e/docs/zh/user-guide/verl.md) with the column "how a script must write it" from verl's Hydra rules (the `+`/`++` override grammar on verl's yaml).
The key schema is the history of `actor_rollout_ref.actor.megatron` (read from the verl tags and
the PyPI wheels); it was re-checked against the generated yaml of the PyPI wheels 0.6.1, 0.7.1, 0.8.0, 0.9.0 and
0.9.1 (the test `test_rows_compose_against_older_real_configs` repeats that when DOCTOR_TEST_VERL_CONFIGS is set). It is what lets `lint` say "needs +" for a verl version whose config files are not installed;
when they are, the real Hydra composition (hydra_compose.py) is the final word.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from doctor.knowledge.releases import LaunchEra, load_releases
from doctor.knowledge.versions import parse_pkg_version, release
from doctor.launch import sources as S

A = "actor_rollout_ref.actor.megatron."
O = A + "override_transformer_config."  # noqa: E741 - the issue's own name for the prefix
REF = "actor_rollout_ref.ref.megatron."
REF_O = REF + "override_transformer_config."



@dataclass(frozen=True)
class FeatureRow:
    """One row of the MindSpeed feature table.

    `ms_keys` are the keys MindSpeed's table names; `writes` is how `launch` writes them (prefix + full key,
    `A`/`O` expanded). `prerequisites` are keys the feature also needs written; `constraints` says what the
    validator checks for it (rules.py); `option` is the launch option that turns it on.
    """

    name: str
    title: str
    option: str
    ms_keys: tuple[str, ...]
    writes: tuple[str, ...]
    prerequisites: tuple[str, ...] = ()
    constraints: str = ""
    source: str = S.MINDSPEED_VERL


FEATURES: tuple[FeatureRow, ...] = (
    FeatureRow("fa", "Flash attention (must be on)", "(always)", (O + "use_flash_attn",),
               ("+" + O + "use_flash_attn",),
               constraints="False is always an error; missing is an error below verl 0.8.0 (the legacy worker "
                           "passes the dict to repatch as-is; 0.8.0+ engine setdefaults it True)"),
    FeatureRow("tp", "Tensor parallel", "--tp", (A + "tensor_model_parallel_size",), (A + "tensor_model_parallel_size",),
               constraints="heads and KV heads divisible by TP; world size divisible by TP*PP*CP"),
    FeatureRow("pp", "Pipeline parallel", "--pp", (A + "pipeline_model_parallel_size",),
               (A + "pipeline_model_parallel_size",), constraints="layers divisible by PP (x VPP)"),
    FeatureRow("ep", "Expert parallel", "--ep", (A + "expert_model_parallel_size",), (A + "expert_model_parallel_size",),
               constraints="MoE model only; experts divisible by EP; EP>1 with TP>1 needs SP"),
    FeatureRow("etp", "Expert tensor parallel", "--etp", (A + "expert_tensor_parallel_size",),
               (A + "expert_tensor_parallel_size",), constraints="MoE model only"),
    FeatureRow("sp", "Sequence parallel", "--sp", (O + "sequence_parallel",),
               ("+" + O + "sequence_parallel", A + "sequence_parallel"),
               constraints="True in the override dict with TP=1 is rejected by Megatron; on the verl key verl "
                           "turns it off with a warning"),
    FeatureRow("dist_opt", "Distributed optimizer", "--dist-opt", (O + "use_distributed_optimizer",),
               ("+" + O + "use_distributed_optimizer", A + "use_distributed_optimizer"),
               constraints="the verl key is what the optimizer reads"),
    FeatureRow("recompute", "Recompute", "--recompute", (O + "recompute_method", O + "recompute_granularity",
                                                          O + "recompute_num_layers"),
               (O + "recompute_granularity", O + "recompute_method", O + "recompute_num_layers"),
               constraints="full needs method and layers; selective rejects layers; layers within layers per stage"),
    FeatureRow("cp", "Context parallel", "--cp", (A + "context_parallel_size", O + "context_parallel_size"),
               (A + "context_parallel_size", "+" + O + "context_parallel_size"),
               constraints="both keys must agree; world size divisible by TP*PP*CP"),
    FeatureRow("mbridge", "mbridge", "--mbridge", (A + "use_mbridge",), (A + "use_mbridge",),
               constraints="not with VPP; verl >= 0.8.0 asserts use_mbridge must be True"),
    FeatureRow("rope", "Fused RoPE", "--fused rope", (O + "position_embedding_type", O + "use_fused_rotary_pos_emb"),
               ("+" + O + "position_embedding_type", "+" + O + "use_fused_rotary_pos_emb"),
               prerequisites=(O + "position_embedding_type",),
               constraints="model must use rotary embeddings; MindSpeed asserts position_embedding_type=rope"),
    FeatureRow("swiglu", "Fused SwiGLU", "--fused swiglu", (O + "swiglu", O + "use_fused_swiglu"),
               ("+" + O + "swiglu", "+" + O + "use_fused_swiglu"), prerequisites=(O + "swiglu",),
               constraints="model MLP must be gated SiLU (SwiGLU)"),
    FeatureRow("rmsnorm", "Fused RMSNorm", "--fused rmsnorm", (O + "normalization", O + "use_fused_rmsnorm"),
               ("+" + O + "normalization", "+" + O + "use_fused_rmsnorm"), prerequisites=(O + "normalization",),
               constraints="model must use RMSNorm"),
    FeatureRow("gmm", "MoE grouped GEMM", "--fused gmm", (O + "moe_grouped_gemm",), ("+" + O + "moe_grouped_gemm",),
               constraints="MoE model only"),
    FeatureRow("permute", "MoE token permute/unpermute fusion", "--fused permute",
               (O + "use_fused_moe_token_permute_and_unpermute",),
               ("+" + O + "use_fused_moe_token_permute_and_unpermute",), constraints="MoE model only"),
)

FEATURES_BY_NAME = {f.name: f for f in FEATURES}


@dataclass(frozen=True)
class KeyInfo:
    """A key in verl's yaml: the first release that has it, the first that dropped it (both from the release
    table, profiles/releases.toml), whether its default is null (Hydra allows `+` on a null key), and whether it
    is a dict (`+` merges into a dict)."""

    since: str
    removed: str | None = None
    null_default: bool = False
    is_dict: bool = False


# What the release table cannot say about a key: its shape in verl's yaml (the same in every release that has it).
MEGATRON_NULL_DEFAULT = frozenset({"expert_tensor_parallel_size", "virtual_pipeline_model_parallel_size",
                                   "dist_checkpointing_path", "max_seqlen_per_dp_cp_rank"})
MEGATRON_DICTS = frozenset({"override_transformer_config", "override_ddp_config", "override_mcore_model_config",
                            "router_replay", "qat"})
OVERRIDE_NULL_DEFAULT = frozenset({"recompute_granularity", "recompute_method", "recompute_num_layers"})

# Keys `launch` writes outside the megatron block that changed over time (verl's ppo_trainer.yaml at each tag).
OTHER_KEYS: dict[str, KeyInfo] = {
    "trainer.device": KeyInfo(since="0.4.1"),
}


@functools.lru_cache(maxsize=1)
def megatron_keys() -> dict[str, KeyInfo]:
    """actor_rollout_ref.actor.megatron.* over verl's releases, from the release table."""
    return {k: KeyInfo(since, removed, null_default=k in MEGATRON_NULL_DEFAULT, is_dict=k in MEGATRON_DICTS)
            for k, (since, removed) in load_releases().key_history("megatron").items()}


@functools.lru_cache(maxsize=1)
def override_dict_keys() -> dict[str, KeyInfo]:
    """Keys present inside the default override_transformer_config dict, from the release table."""
    return {k: KeyInfo(since, removed, null_default=k in OVERRIDE_NULL_DEFAULT)
            for k, (since, removed) in load_releases().key_history("override").items()}


def known_releases() -> tuple[str, str]:
    """(oldest, newest) verl release whose key schema the release table holds (dated snapshots left out)."""
    rows = [r.verl for r in load_releases().launch_rows() if not r.snapshot]
    return rows[0], rows[-1]


def _launch_era(version: str) -> LaunchEra:
    """The launch era of `version`: its release row, else the newest row below it; older than every row with
    a launch table, the oldest such row."""
    table = load_releases()
    row = table.era(version)
    if row is None or row.launch is None:
        row = table.launch_rows()[0]
    assert row.launch is not None
    return row.launch


def vt(version: str) -> tuple[int, int, int]:
    """Release tuple of a verl version ('0.8.0.dev' -> (0, 8, 0)); unparsable -> (0, 0, 0)."""
    v = parse_pkg_version(version)
    if v is None:
        return (0, 0, 0)
    r = release(v)
    return (r[0], r[1], r[2])


def at_least(version: str, ref: str) -> bool:
    return vt(version) >= vt(ref)


def key_info(full_key: str, version: str) -> tuple[str, KeyInfo | None]:
    """Classify a full override key against verl `version`'s schema.

    Returns (state, info) with state one of: 'present', 'present-null', 'present-dict', 'absent', 'removed',
    'unknown' (a key this table does not describe: only real composition can judge it)."""
    table: dict[str, KeyInfo] | None = None
    rel = full_key
    if full_key.startswith(O):
        table, rel = override_dict_keys(), full_key[len(O):]
        if "." in rel:
            return "unknown", None
        info = table.get(rel)
        if info is None:
            return "absent", None  # any other key inside the dict: not in verl's yaml
    elif full_key.startswith(A):
        rel = full_key[len(A):]
        head = rel.split(".", 1)[0]
        table = megatron_keys()
        info = table.get(head)
        if info is None:
            return "absent", None
        if "." in rel:
            if head in ("override_ddp_config", "override_mcore_model_config") and at_least(version, info.since):
                return "absent", info  # empty dicts: any sub-key needs +
            return "unknown", info
        present = load_releases().megatron_keys_at(version)
        if present is not None and head not in present:  # a dated snapshot keeps keys a later release dropped
            return ("removed" if at_least(version, info.since) else "absent"), info
        if present is not None:
            return ("present-dict" if info.is_dict else "present-null" if info.null_default else "present"), info
    elif full_key in OTHER_KEYS:
        info = OTHER_KEYS[full_key]
    else:
        return "unknown", None
    if not at_least(version, info.since):
        return "absent", info
    if info.removed and at_least(version, info.removed):
        return "removed", info
    if info.is_dict:
        return "present-dict", info
    return ("present-null" if info.null_default else "present"), info


def prefix_for(full_key: str, version: str) -> str:
    """The Hydra prefix `launch` writes for a key on `version`: '' when the key exists, '+' when it does not."""
    state, _ = key_info(full_key, version)
    return "" if state in ("present", "present-null", "present-dict", "unknown") else "+"


def default_use_mbridge(version: str) -> bool:
    """verl's default for actor.megatron.use_mbridge (false in 0.5-0.6.x, true from 0.7.0)."""
    return _launch_era(version).use_mbridge_default


def default_vanilla_mbridge(version: str) -> bool:
    """True in 0.7.0-0.8.x; false from 0.9.0 (#6951), which needs Megatron-Bridge."""
    return _launch_era(version).vanilla_mbridge_default


def npu_megatron_bridge(version: str) -> tuple[bool, str | None]:
    """(whether this release's Ascend install ships Megatron-Bridge, the file that says so)."""
    era = _launch_era(version)
    return era.npu_megatron_bridge, era.npu_megatron_bridge_source


def npu_rollout_settings(version: str, engine: str) -> tuple[tuple[str, ...], str | None]:
    """(the rollout overrides this release's NPU quick start sets for `engine`, where it sets them)."""
    era = _launch_era(version)
    return tuple(era.npu_rollout.get(engine, ())), era.npu_rollout_source


def megatron_bridge_default(version: str) -> bool:
    """From 0.9.0 verl's default bridge is Megatron-Bridge (vanilla_mbridge=False)."""
    return _launch_era(version).megatron_bridge_default


def ref_inherits_parallel(version: str) -> bool:
    """Ref TP/PP/CP are literal 1 up to 0.6.x, oc.select from the actor since 0.7.0."""
    return _launch_era(version).ref_inherits_parallel


def engine_defaults_fa(version: str) -> bool:
    """Since 0.8.0 the only path is the MindSpeed engine, which setdefaults use_flash_attn=True."""
    return _launch_era(version).engine_defaults_fa


def mbridge_required(version: str) -> bool:
    """Since 0.8.0 the engine asserts `use_mbridge must be True` (legacy worker deleted)."""
    return _launch_era(version).mbridge_required


def needs_trainer_device(version: str) -> bool:
    """<= 0.6.x needs trainer.device=npu; 0.7.0 added auto_set_device."""
    return _launch_era(version).trainer_device_required


def model_engine_key(version: str) -> bool:
    """From 0.9.0 the engine is chosen by the top-level `model_engine=megatron|mindspeed` on `ppo_trainer`
    (ppo_megatron_trainer is deprecated there)."""
    return _launch_era(version).model_engine_key


def cp_needs_override_key(version: str) -> bool:
    """Before 0.8.0 context parallelism must also be written into override_transformer_config."""
    return _launch_era(version).cp_needs_override_key
