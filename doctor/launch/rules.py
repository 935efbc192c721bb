"""Validation of a set of verl overrides (from a spec or a parsed script): every problem is a Finding that
names the override key to change.

The rules read the overrides as the effective config sees them (the last override of a key wins) and, when
verl's config was composed, fall back to the composed values instead of hard-coded defaults. Which rules
apply follows the run: Megatron/MindSpeed rules (rules_megatron.py, rules_batch.py) only for the megatron and
mindspeed engines, with the engine's own key space (`actor_rollout_ref.actor.megatron.*` +
`override_transformer_config`, or `actor_rollout_ref.actor.mindspeed.*` + `mcore_kwargs`); rules about Ascend
NPU stacks only when the run targets an NPU (otherwise they are info, titled "if run on NPU"). Every finding
names its upstream source (doctor.launch.sources).
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field, replace
from typing import Any

from doctor.knowledge.releases import load_releases
from doctor.launch import sources as S
from doctor.launch.features import (
    REF,
    REF_O,
    at_least,
    key_info,
    known_releases,
    needs_trainer_device,
    override_dict_keys,
    ref_inherits_parallel,
)
from doctor.launch.model_config import ModelInfo
from doctor.launch.override_list import CONFIG_NAME, UNKNOWN, Override
from doctor.report import Finding, Severity, finding

KEY_SPACES = {  # engine -> (engine block, MindSpeed/Megatron option dict)
    "megatron": ("actor_rollout_ref.actor.megatron.", "actor_rollout_ref.actor.megatron.override_transformer_config."),
    "mindspeed": ("actor_rollout_ref.actor.mindspeed.", "actor_rollout_ref.actor.mindspeed.mcore_kwargs."),
}
# Rules about what an Ascend NPU stack needs (MindSpeed, CANN-era verl defaults, no Megatron-Bridge).
NPU_ONLY = frozenset({"launch-fa-missing", "launch-fa-off", "launch-trainer-device", "launch-vanilla-mbridge",
                      "launch-cp-override-missing", "launch-cp-mismatch", "launch-fused-prereq-missing",
                      "launch-mbridge-vpp", "launch-rollout-not-on-npu"})
# Rollout engines with an Ascend NPU backend: vLLM through vllm-ascend (https://docs.vllm.ai/projects/ascend/),
# SGLang natively (https://docs.sglang.io/platforms/ascend_npu.html), and HF generate (torch-npu). TensorRT-LLM
# is NVIDIA-only; verl's own example refuses it on NPU
# (verl main 1dda039, examples/grpo_trainer/run_qwen3_8b_fsdp.sh: "INFER_BACKEND=trtllm
# is only supported with DEVICE=gpu").
NPU_ROLLOUTS = frozenset({"vllm", "sglang", "hf"})
GPU_ONLY_ROLLOUTS = frozenset({"trtllm"})  # a name in neither set is judged against the release's registry


@dataclass
class Context:
    """What the rules know besides the overrides: target verl, the model, the target environment, the run."""

    verl_version: str
    model: ModelInfo | None = None
    megatron_bridge: bool | None = None  # Megatron-Bridge importable in the target env; None = unknown
    config_name: str | None = CONFIG_NAME
    origin: str = "launch"  # 'launch' or 'lint'
    notes: list[str] = field(default_factory=list)
    engine: str = "megatron"  # megatron | mindspeed | fsdp | veomni | …
    npu: bool | None = True  # the run targets an Ascend NPU (None: the script does not say)
    flat: dict[str, Any] | None = None  # the composed config's leaves, when composed
    trains: bool = True  # the entry point trains (main_ppo, a recipe); a generation server only runs the rollout
    validates: bool | None = True  # it runs verl's validate_config (entry.validates; None: its source is not here)
    outside: dict[str, str] = field(default_factory=dict)  # sections filled from config not here (ComposeResult)


class _View:
    """The overrides as the effective config sees them (last override of a key wins), over the composed
    config's values when there is one."""

    def __init__(self, ovs: list[Override], ctx: Context | None = None) -> None:
        self.ovs = ovs
        self.flat = ctx.flat if ctx is not None else None
        self.A, self.O = KEY_SPACES.get(ctx.engine if ctx is not None else "megatron", KEY_SPACES["megatron"])
        self.last: dict[str, Override] = {}
        for o in ovs:
            if o.prefix == "~":  # Hydra delete: the key is gone from the composed config
                self.last.pop(o.key, None)
            else:
                self.last[o.key] = o
        self.unknown = {k for k, o in self.last.items() if o.unknown}  # values only the run knows

    def has(self, key: str) -> bool:
        return key in self.last

    def get(self, key: str, default: Any = None) -> Any:
        o = self.last.get(key)
        if o is not None:
            return o.py
        if self.flat is not None and key in self.flat:
            value = self.flat[key]
            return UNKNOWN if isinstance(value, str) and "${" in value else value
        return default

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

    def known(self, key: str) -> builtins.bool:
        """The key's value is known (not a `$(…)`/environment value the run decides)."""
        o = self.last.get(key)
        return o is None or not o.unknown

    def ev(self, *keys: str) -> dict[str, Any]:
        return {k: self.last[k].display for k in keys if k in self.last}


def check(ovs: list[Override], ctx: Context) -> list[Finding]:
    """All rules that apply to this run over `ovs`; findings in rule order."""
    from doctor.launch import rules_batch as RB
    from doctor.launch import rules_megatron as RM

    v = _View(ovs, ctx)
    rules: list[Any] = [_version_known]
    if ctx.origin == "launch":
        rules += [_config_name, _strategy]
    if ctx.engine in KEY_SPACES:
        if ctx.flat is None and ctx.engine == "megatron":
            rules.append(_prefixes)
        rules += [_ref_override, RM.fa, RM.mbridge, RM.sp, RM.ep_sp, RM.recompute, RM.vpp, RM.cp, RM.moe, RM.fused,
                  RM.heads_layers, RB.world_size, RB.parallel_batch, _ref_parallel]
    rules += [RB.batch, _gpu_mem, _trainer_device, _model_path, _rollout_device]
    out: list[Finding] = []
    for rule in rules:
        out.extend(f for f in rule(v, ctx) if not _needs_unknown(f, v))
    if ctx.npu is not True:
        out = [_not_npu(f, ctx.npu) for f in out]
    return out


def _needs_unknown(f: Finding, v: _View) -> bool:
    """A finding that rests on a value only the run knows ($(…), an environment variable) is not reported:
    the rule is skipped (lint lists those values as unresolved)."""
    return bool(v.unknown) and any(k in v.unknown for k in (f.key, *f.evidence))


def _not_npu(f: Finding, npu: bool | None = False) -> Finding:
    """An NPU-only finding on a run that targets another device is info; on a run whose device is unknown it is
    a warning (what breaks on an NPU is not hidden because the script does not name its device)."""
    if f.id not in NPU_ONLY or f.severity is Severity.INFO:
        return f
    if npu is None:
        sev = Severity.WARNING if f.severity is Severity.ERROR else f.severity
        return replace(f, severity=sev, title=f"if run on NPU: {f.title}",
                       detail=(f.detail + " " if f.detail else "") + "(The target device is not known: pass --target "
                                                                    "npu|gpu or set trainer.device.)")
    return replace(f, severity=Severity.INFO, title=f"if run on NPU: {f.title}",
                   detail=(f.detail + " " if f.detail else "") + "(Info: the script does not target an Ascend NPU.)")


def _rollout_device(v: _View, ctx: Context) -> list[Finding]:
    """A rollout engine with no Ascend backend (NPU_ROLLOUTS) in a run that may target an NPU."""
    name = v.get("actor_rollout_ref.rollout.name")
    if not isinstance(name, str) or name not in GPU_ONLY_ROLLOUTS or not v.known("actor_rollout_ref.rollout.name"):
        return []
    return [finding("launch-rollout-not-on-npu", "error", ("config", "verl"),
                    f"rollout engine {name} does not run on Ascend NPUs",
                    detail="Ascend NPUs run vLLM (vllm-ascend), SGLang and HF rollouts; TensorRT-LLM is NVIDIA-only.",
                    evidence=v.ev("actor_rollout_ref.rollout.name"), key="actor_rollout_ref.rollout.name",
                    fix="Write actor_rollout_ref.rollout.name=vllm (vllm-ascend) or sglang.",
                    source=S.VERL_TRTLLM_GPU_ONLY)]


def _version_known(v: _View, ctx: Context) -> list[Finding]:
    ver = ctx.verl_version
    oldest, newest = known_releases()
    if not at_least(ver, oldest):
        return [finding("launch-verl-version-unknown", "warning", ("verl",), f"verl {ver} is older than the rules know",
                        detail=f"The key tables cover verl {oldest}..{newest}.",
                        evidence={"verl_version": ver}, fix=f"Use verl >= {oldest}.",
                        source=S.VERL_MEGATRON_YAML)]
    if load_releases().newer_than_known(ver):
        return [finding("launch-verl-version-newer", "info", ("verl",), f"verl {ver} is newer than the rules know "
                        f"({newest}); rules of {newest} applied", evidence={"verl_version": ver})]
    return []


def _config_name(v: _View, ctx: Context) -> list[Finding]:
    name = (ctx.config_name or "").removesuffix(".yaml")
    if name == CONFIG_NAME or v.get("model_engine") in KEY_SPACES:
        return []
    return [finding("launch-config-name", "error", ("config", "verl"),
                    f"--config-name is {ctx.config_name or 'not given (verl uses ppo_trainer)'}, not {CONFIG_NAME}",
                    detail="Without the megatron trainer config the FSDP engine runs and MindSpeed is never used; "
                           "the megatron.* keys do not exist there.",
                    evidence={"config_name": ctx.config_name}, fix=f"Pass --config-name={CONFIG_NAME}.",
                    key="--config-name", source=S.VERL_MAIN_PPO)]


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
                               evidence=ev, fix=f"Write +{o.text} (or ++{o.text}).", key=o.key, source=S.MINDSPEED_VERL))
        elif state == "removed":
            assert info is not None
            out.append(finding("launch-key-removed", "error" if o.prefix == "" else "warning", ("config", "verl"),
                               f"{o.key} was removed in verl {info.removed}",
                               detail=f"verl {ver} no longer has this key"
                                      + (" (Hydra: Could not override … not in struct)." if o.prefix == "" else "."),
                               evidence=ev, fix=f"Delete the override {o.text}.", key=o.key,
                               source=S.VERL_MEGATRON_YAML))
        elif o.prefix == "+" and state == "present":
            out.append(finding("launch-key-plus-on-existing", "error", ("config",),
                               f"'+{o.key}' fails: the key exists in verl {ver}'s config with a value",
                               detail=f"Hydra: Could not append to config. An item is already at '{o.key}'.",
                               evidence=ev, fix=f"Write {o.key}={o.value} (no '+') or ++{o.key}={o.value}.",
                               key=o.key, source=S.MINDSPEED_VERL))
    return out


def _actor_dict_keys(v: _View, ver: str) -> list[str]:
    keys = [k for k, info in override_dict_keys().items() if at_least(ver, info.since)]
    for o in v.ovs:
        if o.key.startswith(v.O) and o.prefix != "~":
            k = o.key[len(v.O):]
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
                           source=S.HYDRA_OVERRIDES))
    for o in ref_set:
        k = o.key[len(REF_O):]
        if o.prefix == "":
            out.append(finding("launch-key-needs-plus", "error", ("config",),
                               f"{o.key}: the ref's override dict is an interpolation; Hydra refuses a plain key",
                               detail=f"Hydra: Key '{k}' is not in struct.", evidence={"override": o.text}, key=o.key,
                               fix="Set it on the actor's override_transformer_config (the ref inherits it).",
                               source=S.MINDSPEED_VERL))
        elif o.prefix == "+" and not replaced:
            actor_val = v.get(v.O + k, None) if v.has(v.O + k) else (
                None if k not in override_dict_keys() or override_dict_keys()[k].null_default
                or not at_least(ver, override_dict_keys()[k].since) else "default")
            if actor_val is not None:
                out.append(finding("launch-key-plus-on-existing", "error", ("config",),
                                   f"'+{o.key}' fails: the ref inherits {k} from the actor",
                                   detail=f"Hydra: Could not append to config. An item is already at '{o.key}'.",
                                   evidence={"override": o.text}, key=o.key,
                                   fix="Drop the ref override; the ref inherits the actor's value.", source=S.MINDSPEED_VERL))
    return out


def _strategy(v: _View, ctx: Context) -> list[Finding]:
    s = v.get("actor_rollout_ref.actor.strategy")
    if s is None or s in KEY_SPACES or not v.known("actor_rollout_ref.actor.strategy"):
        return []
    return [finding("launch-strategy", "error", ("config",), f"actor strategy is {s!r}, not megatron",
                    detail="MindSpeed is only used by verl's megatron strategy.",
                    evidence=v.ev("actor_rollout_ref.actor.strategy"), key="actor_rollout_ref.actor.strategy",
                    fix="Write actor_rollout_ref.actor.strategy=megatron.", source=S.VERL_MEGATRON_ENGINE)]


def _gpu_mem(v: _View, ctx: Context) -> list[Finding]:
    k = "actor_rollout_ref.rollout.gpu_memory_utilization"
    g = v.num(k)
    if g is not None and g > 0.9:
        return [finding("launch-gpu-memory-utilization", "warning", ("config", "vllm-ascend"),
                        f"rollout gpu_memory_utilization={g} leaves little room for the training engine",
                        detail="Actor (Megatron) and rollout share each NPU; verl's NPU examples use 0.6.",
                        evidence=v.ev(k), key=k, fix="Use 0.9 or less (0.6 in verl's NPU examples).",
                        source=S.NPU_EXAMPLE)]
    return []


def _trainer_device(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    if needs_trainer_device(ver) and v.known("trainer.device") and v.get("trainer.device") != "npu":
        out.append(finding("launch-trainer-device", "error", ("config", "verl"),
                           f"verl {ver} needs trainer.device=npu", evidence=v.ev("trainer.device"),
                           detail="Before 0.7.0 verl does not detect the NPU (auto_set_device came in 0.7.0); "
                                  "the yaml default is cuda.",
                           key="trainer.device", fix="Add trainer.device=npu.",
                           source=S.VERL_AUTO_SET_DEVICE))
    return out


def _ref_parallel(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    if not ref_inherits_parallel(ver):
        for name in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
            val = v.int(v.A + name, 1)
            if val is not None and val != 1 and not v.has(REF + name):
                out.append(finding("launch-ref-parallel-implicit", "warning", ("config", "verl"),
                                   f"verl {ver}: ref {name} defaults to 1, actor uses {val}",
                                   detail="Up to 0.6.x the ref's TP/PP/CP are literal 1 in the yaml, not inherited.",
                                   evidence=v.ev(v.A + name), key=REF + name, fix=f"Add {REF}{name}={val}.",
                                   source=S.VERL_061_TRAINER_YAML))
    return out


# a Hugging Face (or ModelScope) model id, `org/name`: verl's copy_to_local hands it to the hub client, which downloads
# it on every node; a relative directory of that shape is possible, so it is said as info
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9_-]")


def hub_id(path: str) -> bool:
    """`Qwen/Qwen3-8B`: what verl's copy_to_local reads as a hub model id (when no such directory exists)."""
    return bool(_HUB_ID.fullmatch(path)) and ".." not in path


def _model_path(v: _View, ctx: Context) -> list[Finding]:
    nn = v.int("trainer.nnodes", 1)
    path = v.get("actor_rollout_ref.model.path")
    if nn and nn > 1 and isinstance(path, str) and path.startswith("hdfs://"):
        return []  # copy_to_local copies it to each node's local cache
    if nn and nn > 1 and isinstance(path, str) and hub_id(path):
        return [finding("launch-model-path-every-node", "info", ("config", "cluster"),
                        f"{nn} nodes: {path} is read as a Hugging Face model id, which every node downloads",
                        detail="verl's copy_to_local takes a local path, an hdfs:// path or a Hugging Face model "
                               f"id; unless {path} is a directory under the working directory (then it must exist "
                               "on every node), each node fetches it from the hub into its own cache.",
                        evidence=v.ev("actor_rollout_ref.model.path", "trainer.nnodes"),
                        key="actor_rollout_ref.model.path",
                        fix="Nothing to change; for an offline cluster put the model on shared storage and give "
                            "its absolute path.",
                        source=S.VERL_COPY_TO_LOCAL)]
    if nn and nn > 1 and path is not None:
        return [finding("launch-model-path-every-node", "warning", ("config", "cluster"),
                        f"{nn} nodes: the model path must exist on every node",
                        detail=f"Every Ray worker loads {path} from its own filesystem.",
                        evidence=v.ev("actor_rollout_ref.model.path", "trainer.nnodes"),
                        key="actor_rollout_ref.model.path",
                        fix="Put the model on shared storage or copy it to the same path on every node.",
                        source=S.VERL_ENGINE_WORKERS)]
    return []
