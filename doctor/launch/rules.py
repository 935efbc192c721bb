"""Validation of a set of verl overrides (from a spec or a parsed script): every problem is a Finding that
names the override key to change.

Rules and their sources (error = verl/Megatron/MindSpeed reject it; warning = risky or silently changed):
- FA: MindSpeed's verl page marks FA "must be on"; verl < 0.8.0 passes the override dict to `repatch` as-is,
  0.8.0+ engine `setdefault("use_flash_attn", True)` (shared/reference/verl.md §2.1-§2.2, mindspeed.md §2.1).
- mbridge + VPP: verl issue #4815, MindSpeed docs/zh/user-guide/verl.md, verl npu_advance_features.md §5;
  `use_mbridge must be True` (verl engine transformer_impl.py, 0.8.0+) (verl.md §3).
- vanilla_mbridge false needs `megatron.bridge` (verl 0.9.0 #6951; verl.md §2.3).
- SP/EP/recompute/VPP/heads/layers: Megatron core_v0.12.1 TransformerConfig / ModelParallelConfig
  `__post_init__` error texts (mindspeed.md §2.2); SP on the verl key with TP=1: McoreEngineConfig warning
  "set sequence parallel to false as TP size is 1" (verl.md §3).
- World size and batch rules: verl `verl/utils/config.py::validate_config`, ActorConfig, engine workers (verl.md §3).
- Hydra prefixes: verl.md §2.4 (`+` on an absent key, `+` fails on a non-null key, `++ref…` replaces the dict).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctor.launch.features import (
    NEWEST_KNOWN,
    OLDEST_KNOWN,
    OVERRIDE_DICT_KEYS,
    REF,
    REF_O,
    SRC_HYDRA,
    A,
    O,
    at_least,
    default_use_mbridge,
    default_vanilla_mbridge,
    engine_defaults_fa,
    key_info,
    mbridge_required,
    needs_trainer_device,
    ref_inherits_parallel,
)
from doctor.launch.model_config import ModelInfo, is_gated_silu
from doctor.launch.override_list import CONFIG_NAME, Override
from doctor.report import Finding, finding

SRC_MEGATRON = "Megatron-LM core_v0.12.1 TransformerConfig/ModelParallelConfig __post_init__ (shared/reference/mindspeed.md §2.2)"
SRC_VERL_VALIDATE = "verl verl/utils/config.py::validate_config and workers (shared/reference/verl.md §3)"
SRC_VPP = "verl issue #4815; MindSpeed docs/zh/user-guide/verl.md; verl docs npu_advance_features.md §5"


@dataclass
class Context:
    """What the rules know besides the overrides: target verl, the model, the target environment."""

    verl_version: str
    model: ModelInfo | None = None
    megatron_bridge: bool | None = None  # Megatron-Bridge importable in the target env; None = unknown
    config_name: str | None = CONFIG_NAME
    origin: str = "launch"  # 'launch' or 'lint' (wording only)
    notes: list[str] = field(default_factory=list)


class _View:
    """The overrides as the effective config sees them (last override of a key wins)."""

    def __init__(self, ovs: list[Override]) -> None:
        self.ovs = ovs
        self.last: dict[str, Override] = {}
        for o in ovs:
            if o.prefix == "~":  # Hydra delete: the key is gone from the composed config
                self.last.pop(o.key, None)
            else:
                self.last[o.key] = o

    def has(self, key: str) -> bool:
        return key in self.last

    def get(self, key: str, default: Any = None) -> Any:
        o = self.last.get(key)
        return default if o is None else o.py

    def int(self, key: str, default: int | None = None) -> int | None:
        v = self.get(key, default)
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v
        return None

    def bool(self, key: str, default: bool | None = None) -> bool | None:
        v = self.get(key, default)
        return v if isinstance(v, bool) else None

    def num(self, key: str, default: float | None = None) -> float | None:
        v = self.get(key, default)
        if isinstance(v, bool):
            return None
        return float(v) if isinstance(v, (int, float)) else None

    def ev(self, *keys: str) -> dict[str, Any]:
        return {k: self.last[k].text for k in keys if k in self.last}


def check(ovs: list[Override], ctx: Context) -> list[Finding]:
    """All rules over `ovs`; findings in rule order."""
    v = _View(ovs)
    out: list[Finding] = []
    for rule in (_version_known, _config_name, _prefixes, _ref_override, _strategy, _fa, _mbridge, _sp, _ep_sp,
                 _recompute, _vpp, _cp, _moe, _fused, _heads_layers, _world_and_batch, _gpu_mem, _old_verl,
                 _model_path):
        out.extend(rule(v, ctx))
    return out


def _version_known(v: _View, ctx: Context) -> list[Finding]:
    ver = ctx.verl_version
    if not at_least(ver, OLDEST_KNOWN):
        return [finding("launch-verl-version-unknown", "warning", ("verl",), f"verl {ver} is older than the rules know",
                        detail=f"The key tables cover verl {OLDEST_KNOWN}..{NEWEST_KNOWN}.",
                        evidence={"verl_version": ver}, fix=f"Use verl >= {OLDEST_KNOWN}.",
                        source="shared/reference/verl.md §2.5")]
    if at_least(ver, NEWEST_KNOWN) and ver != NEWEST_KNOWN and not ver.startswith(NEWEST_KNOWN):
        return [finding("launch-verl-version-newer", "info", ("verl",), f"verl {ver} is newer than the rules know "
                        f"({NEWEST_KNOWN}); rules of {NEWEST_KNOWN} applied", evidence={"verl_version": ver})]
    return []


def _config_name(v: _View, ctx: Context) -> list[Finding]:
    name = (ctx.config_name or "").removesuffix(".yaml")
    if name == CONFIG_NAME or v.get("model_engine") == "megatron":
        return []
    return [finding("launch-config-name", "error", ("config", "verl"),
                    f"--config-name is {ctx.config_name or 'not given (verl uses ppo_trainer)'}, not {CONFIG_NAME}",
                    detail="Without the megatron trainer config the FSDP engine runs and MindSpeed is never used; "
                           "the megatron.* keys do not exist there.",
                    evidence={"config_name": ctx.config_name}, fix=f"Pass --config-name={CONFIG_NAME}.",
                    key="--config-name", source="verl.md §6.3 (main_ppo entry; NPU scripts use ppo_megatron_trainer)")]


def _prefixes(v: _View, ctx: Context) -> list[Finding]:
    """Static Hydra prefix rules from the per-release key tables (real composition re-checks when possible)."""
    out: list[Finding] = []
    ver = ctx.verl_version
    for o in v.ovs:
        if o.prefix == "~" or o.key.startswith(REF_O) or o.key.startswith(REF):
            continue
        state, info = key_info(o.key, ver)
        if state == "unknown":
            continue
        ev: dict[str, Any] = {"override": o.text, "verl_version": ver}
        if o.line:
            ev["line"] = o.line
        if o.prefix == "" and state == "absent":
            out.append(finding("launch-key-needs-plus", "error", ("config",),
                               f"{o.key} is not in verl {ver}'s config: Hydra refuses it without '+'",
                               detail=f"Hydra: Could not override '{o.key}'. To append to your config use +{o.text}",
                               evidence=ev, fix=f"Write +{o.text} (or ++{o.text}).", key=o.key, source=SRC_HYDRA))
        elif state == "removed":
            assert info is not None
            out.append(finding("launch-key-removed", "error" if o.prefix == "" else "warning", ("config", "verl"),
                               f"{o.key} was removed in verl {info.removed}",
                               detail=f"verl {ver} no longer has this key"
                                      + (" (Hydra: Could not override … not in struct)." if o.prefix == "" else "."),
                               evidence=ev, fix=f"Delete the override {o.text}.", key=o.key,
                               source="shared/reference/verl.md §0 item 6, §2.5 (0.9.1 removed megatron.grad_offload)"))
        elif o.prefix == "+" and state == "present":
            out.append(finding("launch-key-plus-on-existing", "error", ("config",),
                               f"'+{o.key}' fails: the key exists in verl {ver}'s config with a value",
                               detail=f"Hydra: Could not append to config. An item is already at '{o.key}'.",
                               evidence=ev, fix=f"Write {o.key}={o.value} (no '+') or ++{o.key}={o.value}.",
                               key=o.key, source=SRC_HYDRA))
    return out


def _actor_dict_keys(v: _View, ver: str) -> list[str]:
    keys = [k for k, info in OVERRIDE_DICT_KEYS.items() if at_least(ver, info.since)]
    for o in v.ovs:
        if o.key.startswith(O) and o.prefix != "~":
            k = o.key[len(O):]
            if k not in keys:
                keys.append(k)
    return keys


def _ref_override(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    ref_set = [o for o in v.ovs if o.key.startswith(REF_O)]
    if not ref_set:
        return out
    actor_keys = _actor_dict_keys(v, ver)
    replaced = [o for o in ref_set if o.prefix == "++"]
    if replaced:
        kept = {o.key[len(REF_O):] for o in ref_set}
        lost = [k for k in actor_keys if k not in kept]
        o = replaced[0]
        out.append(finding("launch-ref-override-replaced", "warning", ("config",),
                           f"'++{o.key}' replaces the ref's whole override_transformer_config",
                           detail="The ref dict is an interpolation of the actor's; '++' on a key under it replaces "
                                  f"the inherited dict, so the ref loses: {', '.join(lost) or '(nothing)'}.",
                           evidence={"override": o.text, "keys_lost": lost}, key=o.key,
                           fix="Set MindSpeed keys on actor_rollout_ref.actor.megatron.override_transformer_config "
                               "only (the ref inherits them), or repeat every lost key on the ref.",
                           source="shared/reference/verl.md §2.4 (verified with hydra-core 1.3.8)"))
    for o in ref_set:
        k = o.key[len(REF_O):]
        if o.prefix == "":
            out.append(finding("launch-key-needs-plus", "error", ("config",),
                               f"{o.key}: the ref's override dict is an interpolation; Hydra refuses a plain key",
                               detail=f"Hydra: Key '{k}' is not in struct.", evidence={"override": o.text}, key=o.key,
                               fix="Set it on the actor's override_transformer_config (the ref inherits it).",
                               source=SRC_HYDRA))
        elif o.prefix == "+" and not replaced:
            actor_val = v.get(O + k, None) if v.has(O + k) else (
                None if k not in OVERRIDE_DICT_KEYS or OVERRIDE_DICT_KEYS[k].null_default
                or not at_least(ver, OVERRIDE_DICT_KEYS[k].since) else "default")
            if actor_val is not None:
                out.append(finding("launch-key-plus-on-existing", "error", ("config",),
                                   f"'+{o.key}' fails: the ref inherits {k} from the actor",
                                   detail=f"Hydra: Could not append to config. An item is already at '{o.key}'.",
                                   evidence={"override": o.text}, key=o.key,
                                   fix="Drop the ref override; the ref inherits the actor's value.", source=SRC_HYDRA))
    return out


def _strategy(v: _View, ctx: Context) -> list[Finding]:
    s = v.get("actor_rollout_ref.actor.strategy")
    if s is None or s == "megatron":
        return []
    return [finding("launch-strategy", "error", ("config",), f"actor strategy is {s!r}, not megatron",
                    detail="MindSpeed is only used by verl's megatron strategy.",
                    evidence=v.ev("actor_rollout_ref.actor.strategy"), key="actor_rollout_ref.actor.strategy",
                    fix="Write actor_rollout_ref.actor.strategy=megatron.", source="verl.md §2.2")]


def _fa(v: _View, ctx: Context) -> list[Finding]:
    key = O + "use_flash_attn"
    fa = v.get(key, None)
    src = "MindSpeed docs/zh/user-guide/verl.md (FA must be on); verl.md §2.1-§2.2; mindspeed.md §2.2"
    if v.has(key) and fa is not True:
        return [finding("launch-fa-off", "error", ("config", "mindspeed"), f"flash attention is off ({key}={fa})",
                        detail="MindSpeed needs FA: 'Flash Attention is required when using transformer_engine, "
                               "please set --use-flash-attn' / 'Please set micro_batch_size or set use_flash_attn=True'.",
                        evidence=v.ev(key), key=key, fix=f"Write +{key}=True.", source=src)]
    if not v.has(key) and not engine_defaults_fa(ctx.verl_version):
        return [finding("launch-fa-missing", "error", ("config", "mindspeed"),
                        f"flash attention is not switched on (verl {ctx.verl_version} has no default)",
                        detail="verl < 0.8.0 passes override_transformer_config to MindSpeed's repatch as-is, so "
                               "without the key FA stays off and MindSpeed fails.",
                        evidence={"verl_version": ctx.verl_version}, key=key, fix=f"Add +{key}=True.", source=src)]
    return []


def _mbridge(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    use = v.bool(A + "use_mbridge", default_use_mbridge(ver))
    if mbridge_required(ver) and use is False:
        out.append(finding("launch-mbridge-required", "error", ("config", "mbridge"),
                           f"verl {ver} requires use_mbridge=True", evidence=v.ev(A + "use_mbridge"),
                           detail="The engine asserts 'use_mbridge must be True' (the legacy worker is gone since 0.8.0).",
                           key=A + "use_mbridge", fix=f"Write {A}use_mbridge=True (VPP is then unavailable).",
                           source="verl engine transformer_impl.py (shared/reference/verl.md §3)"))
    vpp = v.int(A + "virtual_pipeline_model_parallel_size")
    if vpp is not None and vpp > 1 and use:
        fix = (f"Drop {A}virtual_pipeline_model_parallel_size (verl {ver} needs mbridge, so VPP is unavailable)."
               if mbridge_required(ver) else f"Write {A}use_mbridge=False when using VPP, or drop VPP.")
        out.append(finding("launch-mbridge-vpp", "error", ("config", "mbridge"),
                           "mbridge cannot be combined with virtual pipeline parallel (VPP)",
                           detail="Known failure: IndexError: too many indices for tensor of dimension 3.",
                           evidence={**v.ev(A + "virtual_pipeline_model_parallel_size", A + "use_mbridge"),
                                     "use_mbridge": use},
                           key=A + "virtual_pipeline_model_parallel_size", fix=fix, source=SRC_VPP))
    elif vpp is not None and vpp > 1 and mbridge_required(ver):
        out.append(finding("launch-vpp-unsupported", "error", ("config", "mbridge"),
                           f"VPP is unavailable on verl {ver}: it needs mbridge off, which the engine refuses",
                           evidence=v.ev(A + "virtual_pipeline_model_parallel_size", A + "use_mbridge"),
                           key=A + "virtual_pipeline_model_parallel_size",
                           fix=f"Drop VPP, or use verl < 0.8.0 with {A}use_mbridge=False.", source=SRC_VPP))
    if at_least(ver, "0.9.0") and use:
        vanilla = v.bool(A + "vanilla_mbridge", default_vanilla_mbridge(ver))
        if vanilla is False and ctx.megatron_bridge is not True:
            sev = "error" if ctx.megatron_bridge is False else "warning"
            out.append(finding("launch-vanilla-mbridge", sev, ("config", "mbridge"),
                               f"verl {ver} uses Megatron-Bridge (vanilla_mbridge=False), which NPU stacks do not install",
                               detail="verl >= 0.9.0 defaults vanilla_mbridge to false; without megatron.bridge it "
                                      "prints 'Megatron-Bridge package not found' and raises."
                                      + ("" if ctx.megatron_bridge is False else
                                         " (Whether megatron.bridge is installed on the target is unknown.)"),
                               evidence={**v.ev(A + "vanilla_mbridge"), "megatron_bridge_installed": ctx.megatron_bridge},
                               key=A + "vanilla_mbridge", fix=f"Write {A}vanilla_mbridge=True.",
                               source="verl #6951 (shared/reference/verl.md §2.3, §8)"))
    return out


def _sp(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    tp = v.int(A + "tensor_model_parallel_size", 1)
    sp_o = v.get(O + "sequence_parallel")
    sp_a = v.get(A + "sequence_parallel")
    if tp == 1 and sp_o is True:
        out.append(finding("launch-sp-without-tp", "error", ("config", "megatron"),
                           "sequence_parallel=True in override_transformer_config with TP=1",
                           detail="Megatron: 'Can not use sequence parallelism without tensor parallelism'.",
                           evidence=v.ev(O + "sequence_parallel", A + "tensor_model_parallel_size"),
                           key=O + "sequence_parallel", fix="Drop the override (or set TP > 1).", source=SRC_MEGATRON))
    elif tp == 1 and sp_a is True and v.has(A + "sequence_parallel"):
        out.append(finding("launch-sp-tp1-ignored", "warning", ("config", "verl"),
                           "sequence_parallel=True with TP=1: verl turns it off",
                           detail="McoreEngineConfig: 'set sequence parallel to false as TP size is 1'.",
                           evidence=v.ev(A + "sequence_parallel", A + "tensor_model_parallel_size"),
                           key=A + "sequence_parallel", fix=f"Drop {A}sequence_parallel=True or set TP > 1.",
                           source="verl McoreEngineConfig.__post_init__ (verl.md §3)"))
    if isinstance(sp_o, bool) and isinstance(sp_a, bool) and sp_o != sp_a:
        out.append(finding("launch-sp-mismatch", "warning", ("config",),
                           "the two sequence_parallel keys disagree",
                           detail="MindSpeed reads the override dict, verl's engine reads the megatron key.",
                           evidence=v.ev(O + "sequence_parallel", A + "sequence_parallel"), key=O + "sequence_parallel",
                           fix="Write the same value to both keys.", source="mindspeed.md §2.1 (keys verl owns)"))
    do_a, do_o = v.get(A + "use_distributed_optimizer"), v.get(O + "use_distributed_optimizer")
    if isinstance(do_a, bool) and isinstance(do_o, bool) and do_a != do_o:
        out.append(finding("launch-dist-opt-mismatch", "warning", ("config",),
                           "the two use_distributed_optimizer keys disagree",
                           detail="The optimizer reads the verl key; the override dict only sets MindSpeed's args.",
                           evidence=v.ev(O + "use_distributed_optimizer", A + "use_distributed_optimizer"),
                           key=O + "use_distributed_optimizer", fix="Write the same value to both keys.",
                           source="mindspeed.md §2.1 (keys verl owns)"))
    return out


def _ep_sp(v: _View, ctx: Context) -> list[Finding]:
    tp = v.int(A + "tensor_model_parallel_size", 1)
    ep = v.int(A + "expert_model_parallel_size", 1)
    sp_o = v.get(O + "sequence_parallel")
    sp = sp_o if isinstance(sp_o, bool) else v.bool(A + "sequence_parallel", True)
    if tp and ep and tp > 1 and ep > 1 and sp is False:
        return [finding("launch-ep-tp-needs-sp", "error", ("config", "megatron"),
                        "expert parallel with tensor parallel needs sequence parallel",
                        detail="Megatron: 'When using expert parallelism and tensor parallelism, sequence "
                               "parallelism must be used'.",
                        evidence=v.ev(A + "tensor_model_parallel_size", A + "expert_model_parallel_size",
                                      A + "sequence_parallel", O + "sequence_parallel"),
                        key=O + "sequence_parallel" if isinstance(sp_o, bool) else A + "sequence_parallel",
                        fix="Turn sequence parallel on (--sp).", source=SRC_MEGATRON)]
    return []


def _recompute(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    kg, km, kn = O + "recompute_granularity", O + "recompute_method", O + "recompute_num_layers"
    g, m, n = v.get(kg), v.get(km), v.get(kn)
    ev = v.ev(kg, km, kn)

    def f(id_: str, sev: str, title: str, key: str, fix: str, detail: str = "") -> None:
        out.append(finding(id_, sev, ("config", "megatron"), title, detail=detail, evidence=ev, key=key, fix=fix,
                           source=SRC_MEGATRON))

    if g is not None and g not in ("full", "selective"):
        f("launch-recompute-invalid", "error", f"recompute_granularity {g!r} is not full or selective", kg,
          "Use full or selective.", 'Megatron: \'When using recompute_granuarlity: X must be "full"or "selective".\'')
    if m is not None and m not in ("uniform", "block"):
        f("launch-recompute-invalid", "error", f"recompute_method {m!r} is not uniform or block", km,
          "Use uniform or block.", "Megatron: 'recompute_method: X must be \"block\" or \"uniform\".'")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        f("launch-recompute-invalid", "error", f"recompute_num_layers {n!r} is not an integer", kn, "Use an integer.")
        n = None
    if g == "full":
        if m is None:
            f("launch-recompute-incomplete", "error", "recompute full needs recompute_method", km,
              f"Add {km}=uniform (or block).",
              "Megatron: 'Using recompute_granularity: full so recompute_method must be \"block\" or \"uniform\"'.")
        if n is None:
            f("launch-recompute-incomplete", "error", "recompute full needs recompute_num_layers", kn,
              f"Add {kn}=1 (layers per checkpoint chunk).",
              "Megatron: 'When using recompute_granularity: full recompute_num_layers must be between 1 and "
              "num_layers_per_pipeline_rank'.")
    elif g == "selective":
        if n is not None:
            f("launch-recompute-selective-layers", "error", "recompute selective rejects recompute_num_layers", kn,
              f"Drop {kn}.", "Megatron: 'When using recompute_granularity: selective recompute_num_layers must be None.'")
        if m is not None:
            f("launch-recompute-selective-method", "warning", "recompute_method has no effect with selective", km,
              f"Drop {km} (only used with full).",
              "Megatron's training args reject it ('recompute method is not yet supported for selective'); "
              "TransformerConfig ignores it.")
    elif g is None and (m is not None or n is not None):
        f("launch-recompute-without-full", "warning", "recompute_method/num_layers without recompute_granularity=full",
          kg, f"Add {kg}=full.", "verl NPU docs: recompute_method/num_layers only take effect with granularity full.")
    model = ctx.model
    pp = v.int(A + "pipeline_model_parallel_size", 1)
    if g == "full" and isinstance(n, int) and model and model.num_layers and pp:
        per_rank = model.num_layers // pp
        if not 1 <= n <= per_rank:
            f("launch-recompute-layers-range", "error",
              f"recompute_num_layers={n} is outside 1..{per_rank} (layers per pipeline stage)", kn,
              f"Use a value in 1..{per_rank}.",
              f"Megatron: 'recompute_num_layers must be between 1 and num_layers_per_pipeline_rank: {per_rank}'.")
    return out


def _vpp(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    k = A + "virtual_pipeline_model_parallel_size"
    vpp = v.int(k)
    pp = v.int(A + "pipeline_model_parallel_size", 1)
    if vpp is None or vpp <= 1 or pp is None:
        return out
    if pp <= 1:
        out.append(finding("launch-vpp-needs-pp", "error", ("config", "megatron"), "VPP needs PP > 1",
                           detail="Megatron: 'pipeline-model-parallel size should be greater than 1 with interleaved "
                                  "schedule'.", evidence=v.ev(k, A + "pipeline_model_parallel_size"), key=k,
                           fix=f"Set {A}pipeline_model_parallel_size > 1 or drop VPP.", source=SRC_MEGATRON))
    m = ctx.model
    if m and m.num_layers and m.num_layers % (pp * vpp):
        out.append(finding("launch-vpp-layers-indivisible", "error", ("config", "model"),
                           f"{m.num_layers} layers are not divisible by PP*VPP = {pp * vpp}",
                           detail="Megatron: 'num_layers_per_pipeline_rank should be divisible by vp_size'.",
                           evidence={**v.ev(k), "num_layers": m.num_layers}, key=k,
                           fix="Choose PP and VPP whose product divides the layer count.", source=SRC_MEGATRON))
    return out


def _cp(v: _View, ctx: Context) -> list[Finding]:
    cp_a = v.int(A + "context_parallel_size", 1)
    cp_o = v.get(O + "context_parallel_size")
    src = "MindSpeed docs/zh/user-guide/verl.md (CP in both keys); mindspeed.md §2.1, §6"
    if v.has(O + "context_parallel_size") and cp_a is not None and cp_o != cp_a:
        return [finding("launch-cp-mismatch", "error", ("config", "mindspeed"),
                        f"the two context_parallel_size keys disagree ({cp_a} vs {cp_o})",
                        detail="verl builds the groups from the megatron key, MindSpeed patches from the dict.",
                        evidence=v.ev(A + "context_parallel_size", O + "context_parallel_size"),
                        key=O + "context_parallel_size", fix="Write the same CP to both keys.", source=src)]
    if cp_a and cp_a > 1 and not v.has(O + "context_parallel_size") and not at_least(ctx.verl_version, "0.8.0"):
        return [finding("launch-cp-override-missing", "warning", ("config", "mindspeed"),
                        "CP > 1 but override_transformer_config.context_parallel_size is not set",
                        detail="verl < 0.8.0's legacy worker hands MindSpeed only the override dict, so MindSpeed's "
                               "CP patches may not be applied.",
                        evidence=v.ev(A + "context_parallel_size"), key=O + "context_parallel_size",
                        fix=f"Add +{O}context_parallel_size={cp_a}.", source=src)]
    return []


def _moe(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    m = ctx.model
    if m is None:
        return out
    ep = v.int(A + "expert_model_parallel_size", 1)
    etp = v.int(A + "expert_tensor_parallel_size")
    moe_keys = [(A + "expert_model_parallel_size", ep is not None and ep > 1),
                (A + "expert_tensor_parallel_size", etp is not None and etp > 1),
                (O + "moe_grouped_gemm", v.get(O + "moe_grouped_gemm") is True),
                (O + "use_fused_moe_token_permute_and_unpermute",
                 v.get(O + "use_fused_moe_token_permute_and_unpermute") is True)]
    if not m.is_moe:
        for key, on in moe_keys:
            if on:
                out.append(finding("launch-moe-on-dense", "error", ("config", "model"),
                                   f"{key.rsplit('.', 1)[1]} is a MoE feature but the model has no experts",
                                   detail=f"{m.path}/config.json has no num_experts / num_local_experts / n_routed_experts.",
                                   evidence={**v.ev(key), "model_type": m.model_type}, key=key,
                                   fix="Drop it for a dense model.", source="mindspeed.md §2.2 (MoE rows)"))
    elif ep and m.num_experts and m.num_experts % ep:
        out.append(finding("launch-experts-indivisible", "error", ("config", "model"),
                           f"{m.num_experts} experts are not divisible by EP={ep}",
                           evidence={**v.ev(A + "expert_model_parallel_size"), "num_experts": m.num_experts},
                           key=A + "expert_model_parallel_size", fix="Choose an EP that divides the expert count.",
                           source="Megatron MoE layer (experts split evenly over EP ranks; mindspeed.md §2.2)"))
    return out


def _fused(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    pe, rope = v.get(O + "position_embedding_type"), v.get(O + "use_fused_rotary_pos_emb")
    if rope is True and pe != "rope":
        out.append(finding("launch-fused-prereq-missing", "error", ("config", "mindspeed"),
                           "fused RoPE needs position_embedding_type=rope",
                           detail="MindSpeed: '--use-fused-rotary-pos-emb must enable with--position-embedding-type=rope'.",
                           evidence=v.ev(O + "use_fused_rotary_pos_emb", O + "position_embedding_type"),
                           key=O + "position_embedding_type", fix=f"Add +{O}position_embedding_type=rope.",
                           source="MindSpeed fused_rope.py (mindspeed.md §2.2)"))
    for flag, pre, want in ((O + "use_fused_swiglu", O + "swiglu", True), (O + "use_fused_rmsnorm", O + "normalization", "RMSNorm")):
        if v.get(flag) is True and v.get(pre) != want:
            out.append(finding("launch-fused-prereq-missing", "warning", ("config", "mindspeed"),
                               f"{flag.rsplit('.', 1)[1]} without {pre.rsplit('.', 1)[1]}={want}",
                               detail="MindSpeed's verl table writes both keys for this fusion.",
                               evidence=v.ev(flag, pre), key=pre, fix=f"Add +{pre}={want}.", source=SRC_HYDRA))
    m = ctx.model
    if m is None:
        return out
    if (pe == "rope" or rope is True) and m.rotary is False:
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           "fused RoPE on a model without rotary position embeddings",
                           evidence={**v.ev(O + "position_embedding_type"), "model_type": m.model_type},
                           key=O + "position_embedding_type", fix="Drop the RoPE fusion for this model.",
                           source="model config.json (no rope_theta/rope_scaling)"))
    if (v.get(O + "normalization") == "RMSNorm" or v.get(O + "use_fused_rmsnorm") is True) and m.normalization == "LayerNorm":
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           "RMSNorm fusion on a LayerNorm model",
                           evidence={**v.ev(O + "normalization", O + "use_fused_rmsnorm"), "normalization": m.normalization},
                           key=O + "normalization", fix="Drop the RMSNorm fusion for this model.",
                           source="model config.json (layer_norm_eps, no rms_norm_eps)"))
    if (v.get(O + "swiglu") is True or v.get(O + "use_fused_swiglu") is True) and is_gated_silu(m) is False:
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           f"SwiGLU fusion on a model whose activation is {m.activation}",
                           evidence={**v.ev(O + "swiglu", O + "use_fused_swiglu"), "activation": m.activation},
                           key=O + "swiglu", fix="Drop the SwiGLU fusion for this model.",
                           source="model config.json hidden_act"))
    return out


def _heads_layers(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    m = ctx.model
    if m is None:
        return out
    tp = v.int(A + "tensor_model_parallel_size", 1)
    pp = v.int(A + "pipeline_model_parallel_size", 1)
    kt, kp = A + "tensor_model_parallel_size", A + "pipeline_model_parallel_size"
    if tp and m.num_heads and m.num_heads % tp:
        out.append(finding("launch-heads-indivisible", "error", ("config", "model"),
                           f"{m.num_heads} attention heads are not divisible by TP={tp}",
                           detail=f"Megatron: 'num_attention_heads ({m.num_heads}) must be a multiple of "
                                  f"tensor_model_parallel_size ({tp}).'",
                           evidence={**v.ev(kt), "num_heads": m.num_heads}, key=kt, fix="Choose a TP that divides the heads.",
                           source=SRC_MEGATRON))
    if tp and m.num_kv_heads and m.num_kv_heads % tp:
        out.append(finding("launch-kv-heads-indivisible", "error", ("config", "model"),
                           f"{m.num_kv_heads} KV heads are not divisible by TP={tp}",
                           detail=f"Megatron: 'num_query_groups ({m.num_kv_heads}) must be a multiple of "
                                  f"tensor_model_parallel_size ({tp}).'",
                           evidence={**v.ev(kt), "num_kv_heads": m.num_kv_heads}, key=kt,
                           fix="Choose a TP that divides the KV heads.", source=SRC_MEGATRON))
    if pp and m.num_layers and m.num_layers % pp:
        out.append(finding("launch-layers-indivisible", "error", ("config", "model"),
                           f"{m.num_layers} layers are not divisible by PP={pp}",
                           detail="Megatron: 'num_layers should be divisible by pipeline_model_parallel_size'.",
                           evidence={**v.ev(kp), "num_layers": m.num_layers}, key=kp,
                           fix="Choose a PP that divides the layers.", source=SRC_MEGATRON))
    return out


def _world_and_batch(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    npn, nn = v.int("trainer.n_gpus_per_node", 8), v.int("trainer.nnodes", 1)
    tp = v.int(A + "tensor_model_parallel_size", 1)
    pp = v.int(A + "pipeline_model_parallel_size", 1)
    cp = v.int(A + "context_parallel_size", 1)
    if None in (npn, nn, tp, pp, cp):
        return out
    assert npn and nn and tp and pp and cp
    n_gpus, mp = npn * nn, tp * pp * cp
    if n_gpus % mp:
        out.append(finding("launch-world-size-indivisible", "error", ("config", "cluster"),
                           f"{n_gpus} NPUs are not divisible by TP*PP*CP = {mp}",
                           detail=f"verl: 'n_gpus ({n_gpus}) must be divisible by model_parallel_size (TP*PP) times "
                                  "context_parallel_size (CP)'; Megatron: 'world_size is not divisible by'.",
                           evidence=v.ev("trainer.n_gpus_per_node", "trainer.nnodes", A + "tensor_model_parallel_size",
                                         A + "pipeline_model_parallel_size", A + "context_parallel_size"),
                           key="trainer.n_gpus_per_node", fix="Choose TP, PP and CP whose product divides the NPU count.",
                           source=SRC_VERL_VALIDATE))
        return out
    dp = n_gpus // mp
    rtp = v.int("actor_rollout_ref.rollout.tensor_model_parallel_size", 2)
    if rtp and n_gpus % rtp:
        out.append(finding("launch-rollout-tp-indivisible", "error", ("config", "cluster"),
                           f"rollout TP={rtp} does not divide {n_gpus} NPUs",
                           detail="verl: 'rollout world_size: … is not divisible by infer_world_size'.",
                           evidence=v.ev("actor_rollout_ref.rollout.tensor_model_parallel_size"),
                           key="actor_rollout_ref.rollout.tensor_model_parallel_size",
                           fix="Choose a rollout TP that divides the NPU count.", source=SRC_VERL_VALIDATE))
    if v.get("actor_rollout_ref.actor.use_dynamic_bsz") is True:
        return out
    micro = v.int("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
    if micro is None and v.get("actor_rollout_ref.actor.ppo_micro_batch_size") is None:
        out.append(finding("launch-micro-batch-missing", "error", ("config",),
                           "actor micro batch size is not set",
                           evidence={"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": None,
                                     "actor_rollout_ref.actor.use_dynamic_bsz": v.get("actor_rollout_ref.actor.use_dynamic_bsz")},
                           detail="verl: \"[actor] Please set at least one of 'actor.ppo_micro_batch_size' or "
                                  "'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is not enabled.\"",
                           key="actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
                           fix="Set actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu.", source=SRC_VERL_VALIDATE))
    tbs = v.int("data.train_batch_size", 1024)
    n = v.int("actor_rollout_ref.rollout.n", 1)
    mini = v.int("actor_rollout_ref.actor.ppo_mini_batch_size", 256)
    if micro and tbs and n:
        minimal = dp * micro
        if (tbs * n) % minimal:
            out.append(finding("launch-batch-indivisible", "error", ("config",),
                               f"train_batch_size*n = {tbs * n} is not divisible by DP*micro = {minimal}",
                               detail=f"verl: 'real_train_batch_size ({tbs * n}) must be divisible by minimal possible "
                                      f"batch size ({minimal})'.",
                               evidence=v.ev("data.train_batch_size", "actor_rollout_ref.rollout.n",
                                             "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu") | {"dp": dp},
                               key="data.train_batch_size", fix="Make train_batch_size*rollout.n a multiple of DP*micro.",
                               source=SRC_VERL_VALIDATE))
    if tbs and mini and tbs < mini:
        out.append(finding("launch-mini-batch-too-large", "error", ("config",),
                           f"train_batch_size ({tbs}) must be >= ppo_mini_batch_size ({mini})",
                           evidence=v.ev("data.train_batch_size", "actor_rollout_ref.actor.ppo_mini_batch_size"),
                           key="actor_rollout_ref.actor.ppo_mini_batch_size", fix="Lower ppo_mini_batch_size.",
                           source="verl ActorConfig.validate (verl.md §3)"))
    if mini and n and (mini * n) % dp:
        out.append(finding("launch-mini-batch-dp", "error", ("config",),
                           f"ppo_mini_batch_size*n = {mini * n} is not divisible by DP = {dp}",
                           detail="verl engine worker: mini-batch must divide by the data-parallel size.",
                           evidence=v.ev("actor_rollout_ref.actor.ppo_mini_batch_size") | {"dp": dp},
                           key="actor_rollout_ref.actor.ppo_mini_batch_size", fix="Make it a multiple of DP.",
                           source="verl workers/engine_workers.py (verl.md §3)"))
    needs_ref = v.get("actor_rollout_ref.actor.use_kl_loss") is True or v.get("algorithm.use_kl_in_reward") is True
    roles = [("rollout", "actor_rollout_ref.rollout")] + ([("ref", "actor_rollout_ref.ref")] if needs_ref else [])
    for role, base in roles:
        if v.get(base + ".log_prob_use_dynamic_bsz") is True:
            continue
        if v.get(base + ".log_prob_micro_batch_size_per_gpu") is None and v.get(base + ".log_prob_micro_batch_size") is None:
            out.append(finding("launch-log-prob-micro-batch-missing", "error", ("config",),
                               f"{role} log_prob micro batch size is not set",
                               evidence={base + ".log_prob_micro_batch_size_per_gpu": None,
                                         **v.ev("actor_rollout_ref.actor.use_kl_loss", "algorithm.use_kl_in_reward")},
                               detail=f"verl: \"[{base}] Please set at least one of '{base}.log_prob_micro_batch_size' "
                                      f"or '{base}.log_prob_micro_batch_size_per_gpu'.\"",
                               key=base + ".log_prob_micro_batch_size_per_gpu",
                               fix=f"Set {base}.log_prob_micro_batch_size_per_gpu.", source=SRC_VERL_VALIDATE))
    return out


def _gpu_mem(v: _View, ctx: Context) -> list[Finding]:
    k = "actor_rollout_ref.rollout.gpu_memory_utilization"
    g = v.num(k)
    if g is not None and g > 0.9:
        return [finding("launch-gpu-memory-utilization", "warning", ("config", "vllm-ascend"),
                        f"rollout gpu_memory_utilization={g} leaves little room for the training engine",
                        detail="Actor (Megatron) and rollout share each NPU; verl's NPU examples use 0.6.",
                        evidence=v.ev(k), key=k, fix="Use 0.9 or less (0.6 in verl's NPU examples).",
                        source="verl NPU example scripts (shared/reference/verl.md §4.2)")]
    return []


def _old_verl(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    if needs_trainer_device(ver) and v.get("trainer.device") != "npu":
        out.append(finding("launch-trainer-device", "error", ("config", "verl"),
                           f"verl {ver} needs trainer.device=npu", evidence=v.ev("trainer.device"),
                           detail="Before 0.7.0 verl does not detect the NPU (auto_set_device came in 0.7.0); "
                                  "the yaml default is cuda.",
                           key="trainer.device", fix="Add trainer.device=npu.",
                           source="verl 392791bdd auto_set_device (shared/reference/verl.md §4.3)"))
    if not ref_inherits_parallel(ver):
        for name in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
            val = v.int(A + name, 1)
            if val is not None and val != 1 and not v.has(REF + name):
                out.append(finding("launch-ref-parallel-implicit", "warning", ("config", "verl"),
                                   f"verl {ver}: ref {name} defaults to 1, actor uses {val}",
                                   detail="Up to 0.6.x the ref's TP/PP/CP are literal 1 in the yaml, not inherited.",
                                   evidence=v.ev(A + name), key=REF + name, fix=f"Add {REF}{name}={val}.",
                                   source="shared/reference/verl.md §2.5 (ref defaults)"))
    return out


def _model_path(v: _View, ctx: Context) -> list[Finding]:
    nn = v.int("trainer.nnodes", 1)
    path = v.get("actor_rollout_ref.model.path")
    if nn and nn > 1 and path is not None:
        return [finding("launch-model-path-every-node", "warning", ("config", "cluster"),
                        f"{nn} nodes: the model path must exist on every node",
                        detail=f"Every Ray worker loads {path} from its own filesystem.",
                        evidence=v.ev("actor_rollout_ref.model.path", "trainer.nnodes"),
                        key="actor_rollout_ref.model.path",
                        fix="Put the model on shared storage or copy it to the same path on every node.",
                        source="verl workers load the HF config/weights locally on each node")]
    return []
