"""`doctor launch`: build a launch spec, validate it (rules + verl's real Hydra config), then write it."""

from __future__ import annotations

import os
from typing import Any

import click

from doctor.cli.options import doctor_command, output_file_options, output_options, root_option, strict_option
from doctor.launch.examples import LARGE, SMALL


def _by_example(field: str) -> str:
    """A default the closest upstream NPU example sets (so the model changes it), said as such in --help."""
    return (f"[from the closest upstream NPU example: {getattr(SMALL, field)} for a {SMALL.name}, "
            f"{getattr(LARGE, field)} for a {LARGE.name}]")


_SPEC_OPTIONS = (
    "model", "verl_version", "nodes", "npus_per_node", "tp", "pp", "vpp", "cp", "ep", "etp", "sp", "recompute",
    "recompute_method", "recompute_layers", "dist_opt", "fused", "mbridge", "megatron_bridge", "algorithm",
    "train_files", "val_files", "train_batch_size", "ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu",
    "log_prob_micro_batch_size_per_gpu", "max_prompt_length", "max_response_length", "rollout_n", "rollout_tp",
    "rollout_name", "gpu_memory_utilization", "lr", "total_epochs", "total_training_steps", "test_freq",
    "save_freq", "project_name", "experiment_name", "node_rank", "head_address", "ray_port", "cann_set_env",
    "nnal_set_env", "offload", "dynamic_bsz", "max_token_len_per_npu", "max_model_len", "enforce_eager",
    "free_cache_engine", "hccl_aiv",
)


def _opt(*names: str, **kw: Any) -> Any:
    return click.option(*names, default=kw.pop("default", None), show_default=False, **kw)


@click.command("launch")
@_opt("--spec", "spec_file", type=click.Path(dir_okay=False), help="YAML or TOML file with these options (schema: doctor.launch.spec).")
@_opt("--model", metavar="DIR", help="Local Hugging Face model directory (config.json is read).")
@_opt("--verl-version", metavar="VER", help="Target verl version, the one the cluster runs [default: a verl "
                                              "installed in the doctor's own interpreter; else required].")
@_opt("--nodes", type=int, help="Number of nodes [1].")
@_opt("--npus-per-node", type=int, help="NPUs per node [from the chip: A2 8, A3 16].")
@_opt("--chip", type=click.Choice(["A2", "A3", "950"]), help="Chip family (sets the NPUs-per-node default).")
@_opt("--tp", type=int, help="Tensor parallel size.")
@_opt("--pp", type=int, help="Pipeline parallel size.")
@_opt("--vpp", type=int, help="Virtual pipeline size (needs PP > 1 and mbridge off).")
@_opt("--cp", type=int, help="Context parallel size (written to both CP keys).")
@_opt("--ep", type=int, help="Expert parallel size (MoE).")
@_opt("--etp", type=int, help="Expert tensor parallel size (MoE).")
@_opt("--sp/--no-sp", help="Sequence parallel (both keys) [verl default].")
@_opt("--recompute", type=click.Choice(["full", "selective"]), help="Recompute granularity.")
@_opt("--recompute-method", type=click.Choice(["uniform", "block"]), help="Recompute method (full only).")
@_opt("--recompute-layers", type=int, help="recompute_num_layers (full only).")
@_opt("--dist-opt/--no-dist-opt", help="Distributed optimizer (both keys) [verl default].")
@_opt("--fused", metavar="LIST", help="Comma list of rope,swiglu,rmsnorm,gmm,permute.")
@_opt("--mbridge/--no-mbridge", help="actor.megatron.use_mbridge [verl default].")
@_opt("--megatron-bridge/--no-megatron-bridge", help="Megatron-Bridge installed on the target [detected here].")
@_opt("--algorithm", type=click.Choice(["grpo", "ppo", "dapo"]), help="RL algorithm [grpo].")
@_opt("--train-files", help="Training parquet file(s) [~/data/gsm8k/train.parquet: verl's GSM8K example].")
@_opt("--val-files", help="Validation parquet file(s) [~/data/gsm8k/test.parquet].")
@_opt("--train-batch-size", type=int, help="data.train_batch_size [128].")
@_opt("--ppo-mini-batch-size", type=int, help="actor ppo_mini_batch_size [32].")
@_opt("--micro-batch-size", "ppo_micro_batch_size_per_gpu", type=int, help="actor ppo_micro_batch_size_per_gpu [2].")
@_opt("--log-prob-micro-batch-size", "log_prob_micro_batch_size_per_gpu", type=int, help="ref/rollout log_prob micro batch per NPU [4].")
@_opt("--max-prompt-length", type=int, help="[512]")
@_opt("--max-response-length", type=int, help="[1024]")
@_opt("--rollout-n", type=int, help="Responses per prompt [5].")
@_opt("--rollout-tp", type=int, help=f"Rollout (vLLM) tensor parallel size {_by_example('rollout_tp')}.")
@_opt("--rollout-name", help="Rollout engine [vllm].")
@_opt("--gpu-memory-utilization", type=float, help=f"Rollout memory fraction {_by_example('gpu_memory_utilization')}.")
@_opt("--lr", type=float, help="Actor learning rate [1e-6].")
@_opt("--total-epochs", type=int, help="[1]")
@_opt("--total-training-steps", type=int, help="Stop after N steps.")
@_opt("--test-freq", type=int, help="[-1]")
@_opt("--save-freq", type=int, help="[-1]")
@_opt("--project-name", help="trainer.project_name.")
@_opt("--experiment-name", help="trainer.experiment_name.")
@_opt("--node-rank", type=int, help="Default NODE_RANK written into a multi-node script [0].")
@_opt("--head-address", help="Default Ray head address written into a multi-node script.")
@_opt("--ray-port", type=int, help="Ray head port [6379].")
@_opt("--cann-set-env", metavar="PATH", help="CANN set_env.sh to source.")
@_opt("--nnal-set-env", metavar="PATH", help="NNAL set_env.sh to source ('' to skip).")
@_opt("--offload/--no-offload", help="Actor param/grad/optimizer offload [from the closest upstream NPU example].")
@_opt("--dynamic-bsz/--no-dynamic-bsz", help="Dynamic batch size on actor, ref and rollout [from the example].")
@_opt("--max-token-len-per-npu", type=int, help="Max tokens per NPU with dynamic batch size [prompt + response].")
@_opt("--max-model-len", type=int, help="Rollout max_model_len [from the example].")
@_opt("--enforce-eager/--no-enforce-eager", help="Rollout enforce_eager [from the example].")
@_opt("--free-cache-engine/--no-free-cache-engine", help="Rollout free_cache_engine [verl default].")
@_opt("--hccl-aiv/--no-hccl-aiv", help="Export HCCL_OP_EXPANSION_MODE=AIV [where upstream does: MoE/large, verl >= 0.9].")
@click.option("--override", "extra_overrides", multiple=True, metavar="KEY=VALUE", help="Extra Hydra override (repeatable).")
@_opt("--verl-config", type=click.Path(file_okay=False), help="verl's trainer/config directory to compose against.")
@click.option("--compose/--no-compose", default=None, help="Require / skip the real Hydra composition [auto].")
@click.option("--format", "fmt", type=click.Choice(["script", "overrides", "yaml"]), default="script", show_default=True)
@output_file_options("the script (or the overrides / YAML; script: mode 0755)")
@strict_option()
@root_option(dest="sys_root", hidden=True)
@output_options
@doctor_command(data_stdout=True)
def command(console: Any, spec_file: str | None, chip: str | None, verl_config: str | None, compose: bool | None,
            fmt: str, output: str | None, overwrite: bool, strict: bool, sys_root: str, extra_overrides: tuple[str, ...],
            **opts: Any) -> int:
    """Write a validated verl + MindSpeed launch script (or its overrides / composed YAML).

    Nothing is written when a rule finds an error: the findings say which key to change.
    """
    from doctor.launch import hydra_compose
    from doctor.launch.env import default_npus_per_node, megatron_bridge_installed
    from doctor.launch.spec import build_spec, load_spec_file
    from doctor.report import Report, finding

    values: dict[str, Any] = load_spec_file(spec_file) if spec_file else {}
    for k in _SPEC_OPTIONS:
        if opts.get(k) is not None:
            values[k] = opts[k]
    model = values.get("model")
    if isinstance(model, str) and model and os.path.isdir(os.path.expanduser(model)):
        # a local model directory: the script runs from another directory (and on other nodes), so the path it
        # writes is absolute; a path that does not exist here (another node's) is kept as given
        values["model"] = os.path.abspath(os.path.expanduser(model))
    if extra_overrides:
        values["extra_overrides"] = list(values.get("extra_overrides") or []) + list(extra_overrides)
    notes = []
    if not values.get("verl_version"):
        inst, _ = hydra_compose.installed_verl()
        if inst:
            values["verl_version"] = inst
            notes.append(finding("launch-verl-version-installed", "info", ("verl",),
                                 f"target verl {inst} (the installed one)", evidence={"verl_version": inst}))
        else:
            _no_verl_version(spec_file)
    if values.get("npus_per_node") is None:
        n, why = default_npus_per_node(chip, sys_root)
        values["npus_per_node"] = n
        notes.append(finding("launch-npus-per-node", "info", ("npu",), f"{n} NPUs per node: {why}",
                             evidence={"npus_per_node": n}, fix="Pass --npus-per-node (A2: 8, A3: 16)."))
    if values.get("megatron_bridge") is None:
        values["megatron_bridge"] = megatron_bridge_installed()
    notes += _data_defaults(values)
    notes += _model_default(values)
    notes += _example_defaults(values)
    notes += _pinned_etp(values)
    spec = build_spec(values, source=spec_file or "command line")

    from doctor.launch.validation import downloads_config, validate

    if downloads_config(spec.verl_version, verl_config, compose):
        console.status(f"verl {spec.verl_version}'s config is not cached here: downloading its wheel with pip (first "
                       "use only)…")
    findings = notes + validate(spec, compose=compose, config_dir=verl_config)
    from doctor.launch.override_list import overrides as _overrides

    report = Report(command="launch", findings=findings,
                    extra={"verl_version": spec.verl_version, "spec": spec.to_dict(), "overrides": _overrides(spec)})
    if report.exit_code(strict=strict) != 0:
        report.extra["written"] = None
        console.status("not written: fix the error findings first" if report.summary["error"]
                       else "not written: warnings under --strict")
        # stdout stays empty (a `> run.sh` never captures a report); with --json it holds the report
        return _emit(report, console if console.json_mode else _stderr_console(console), strict)
    text = _render(spec, fmt, compose, verl_config)
    if output:
        _write(output, text, executable=(fmt == "script"))
        report.extra["written"] = os.path.abspath(output)
        if console.json_mode is False:
            console.status(f"wrote {output}")
        return _emit(report, console, strict)
    if console.json_mode:
        report.extra["text"] = text
        report.extra["written"] = None
        return _emit(report, console, strict)
    # The script itself goes to stdout (so `> run.sh` works); findings go to stderr.
    code = _emit(report, _stderr_console(console), strict)
    console.out.write(text)
    console.out.flush()
    return code


def _data_defaults(values: dict[str, Any]) -> list[Any]:
    """Data files neither the command line nor the spec gave: the script reads the spec's defaults, verl's GSM8K
    example paths, which exist only where verl's examples/data_preprocess/gsm8k.py wrote them (its
    --local_save_dir default, ~/data/gsm8k). Said, so that a script the report calls ok does not first fail on
    data nobody chose."""
    from doctor.launch.spec import LaunchSpec
    from doctor.report import finding

    unset = {k: getattr(LaunchSpec, k) for k in ("train_files", "val_files") if not values.get(k)}
    if not unset:
        return []
    flags = " and ".join(f"--{k.replace('_', '-')}" for k in unset)
    return [finding(
        "launch-data-default", "info", ("config",),
        f"no {flags}: the script reads verl's GSM8K example data ({', '.join(unset.values())})",
        detail=("Those files exist only where verl's examples/data_preprocess/gsm8k.py (in the verl repository, "
                "not the wheel) saved them: its --local_save_dir default is ~/data/gsm8k, on every node that runs "
                "the job."),
        evidence=dict(unset),
        fix=f"Pass {flags} (parquet files at the same path on every node), or prepare GSM8K there with verl's "
            "examples/data_preprocess/gsm8k.py.",
        source="https://github.com/verl-project/verl/blob/v0.9.0/examples/data_preprocess/gsm8k.py")]


def _model_default(values: dict[str, Any]) -> list[Any]:
    """No --model (nor a spec `model`, nor an override of actor_rollout_ref.model.path): the script leaves the model
    to verl's config, whose path is a placeholder (`~/models/deepseek-llm-7b-chat` in every release's model config)
    (validation.model_missing, which lint shares)."""
    from doctor.launch.validation import MODEL_KEY, model_missing

    given = [o for o in values.get("extra_overrides") or () if o.lstrip("+~").split("=", 1)[0] == MODEL_KEY]
    if values.get("model") or given:
        return []
    return [model_missing("no --model",
                          "Pass --model DIR (a local Hugging Face model directory, at the same path on every node).")]


def _pinned_etp(values: dict[str, Any]) -> list[Any]:
    """ETP left open on a layout only ETP=1 fits: write expert_tensor_parallel_size=1. verl's config leaves it null,
    and Megatron then takes ETP = TP, so EP*TP*PP must divide the NPUs; where it does not and EP*PP does, the script
    would carry a layout that breaks at start-up (launch-expert-world-indivisible), which pinning ETP avoids."""
    from doctor.launch.sources import MEGATRON_PARALLEL_STATE
    from doctor.report import finding

    got = [values.get(k, d) for k, d in (("tp", 1), ("pp", 1), ("ep", 1), ("nodes", 1), ("npus_per_node", None))]
    ints = [x for x in got if type(x) is int and x > 0]
    if values.get("etp") is not None or len(ints) != len(got):
        return []
    tp, pp, ep, nodes, npn = ints
    n = nodes * npn
    if ep == 1 or tp == 1 or not n % (ep * tp * pp) or n % (ep * pp):
        return []
    values["etp"] = 1
    return [finding("launch-etp-pinned", "info", ("config",),
                    f"expert_tensor_parallel_size=1: with ETP = TP (Megatron's default when it is unset) "
                    f"EP*ETP*PP = {ep}*{tp}*{pp} does not divide {n} NPUs, with ETP=1 it does",
                    evidence={"tp": tp, "pp": pp, "ep": ep, "npus": n, "etp": 1},
                    fix="Pass --etp to choose another expert tensor parallel size.",
                    source=MEGATRON_PARALLEL_STATE)]


def _asks_for_experts(values: dict[str, Any]) -> list[str]:
    """The options of a launch that only a MoE model takes (launch-moe-on-dense refuses each on a dense one)."""
    ep = values.get("ep")
    fused = values.get("fused") or ()
    fused = fused.split(",") if isinstance(fused, str) else list(fused)
    return ([f"--ep {ep}"] if isinstance(ep, int) and ep > 1 else []) + [f"--fused {f}" for f in fused
                                                                        if f in ("gmm", "permute")]


def _example_defaults(values: dict[str, Any]) -> list[Any]:
    """Fill the memory/rollout settings the user left open from the closest upstream NPU example."""
    from doctor.launch.examples import closest
    from doctor.launch.features import at_least
    from doctor.launch.validation import load_model
    from doctor.report import finding

    info, _ = load_model(values.get("model"))
    # no config.json here (a laptop preparing the cluster's job): a layout with experts (EP > 1, the MoE fusions)
    # says the model is MoE, whose example is the large one, as closest() decides from the config
    experts = info is None and _asks_for_experts(values)
    ex = LARGE if experts else closest(info)
    length = int(values.get("max_prompt_length") or 512) + int(values.get("max_response_length") or 1024)
    version = str(values.get("verl_version") or "0")
    defaults = {"offload": ex.offload, "dynamic_bsz": ex.dynamic_bsz, "enforce_eager": ex.enforce_eager,
                "hccl_aiv": ex.hccl_aiv and at_least(version, "0.9.0"), "rollout_tp": ex.rollout_tp,
                "gpu_memory_utilization": ex.gpu_memory_utilization,
                "max_model_len": length if ex.offload else None,
                "rollout_tuning": ex.rollout_tuning or None}
    if values.get("dynamic_bsz", ex.dynamic_bsz):
        defaults["max_token_len_per_npu"] = length
    taken = {k: v for k, v in defaults.items() if values.get(k) is None and v is not None}
    values.update(taken)
    if not taken:
        return []
    tuning: dict[str, Any] = {}
    if taken.get("rollout_tuning"):
        from doctor.launch.features import npu_rollout_settings

        sets, where = npu_rollout_settings(version, str(values.get("rollout_name") or "vllm"))
        if sets:
            tuning = {"rollout_tuning_overrides": list(sets), "rollout_tuning_source": where}
        else:  # this release's NPU examples set nothing for the engine
            del taken["rollout_tuning"]
    fix = "Pass the option (e.g. --offload/--no-offload, --rollout-tp) to choose otherwise."
    assumed = ""
    if experts:
        assumed = ("; assumed from the layout's experts (" + ", ".join(experts) + "): the model's config.json is not "
                   "readable here")
    elif info is None:  # no config.json here: the size that picks the example is not known
        assumed = "; assumed: the model's config.json is not readable here"
        fix = (f"For a MoE model or a dense one of ~5B parameters or more pass --offload --rollout-tp "
               f"{LARGE.rollout_tp} --gpu-memory-utilization {LARGE.gpu_memory_utilization} (upstream's "
               f"{LARGE.name} example), or run where the model directory exists; p" + fix[1:])
    return [finding("launch-defaults-from-example", "info", ("config",),
                    f"memory and rollout settings from upstream's closest NPU example, "
                    f"{ex.url.rsplit('/', 1)[-1]} ({ex.name}{assumed}): "
                    + ", ".join(f"{k}={v}" for k, v in taken.items())
                    + (f" ({', '.join(tuning['rollout_tuning_overrides'])}, as {tuning['rollout_tuning_source']} sets them)"
                       if tuning.get("rollout_tuning_overrides") else ""),
                    evidence={"example": ex.url, **taken, **tuning}, source=ex.url, fix=fix)]


def _stderr_console(console: Any) -> Any:
    from doctor.console import Console

    return Console(json_mode=False, color=console.stderr_color, verbosity=console.verbosity, out=console.err,
                   err=console.err)


def _emit(report: Any, console: Any, strict: bool) -> int:
    from doctor.render import emit

    return emit(report, console, strict=strict)


def _render(spec: Any, fmt: str, compose: bool | None, verl_config: str | None) -> str:
    from doctor.errors import DoctorError

    if fmt == "overrides":
        from doctor.launch.render import render_overrides

        return render_overrides(spec)
    if fmt == "yaml":
        from doctor.launch.compose_cache import compose_cached
        from doctor.launch.override_list import build_overrides, config_name_for
        from doctor.launch.validation import resolve_config_dir

        cdir, _ = resolve_config_dir(spec.verl_version, verl_config, True if compose is None else compose)
        if cdir is None:
            raise DoctorError("--format yaml needs verl's config files: "
                              + ("drop --no-compose" if compose is False else "install verl or pass --verl-config DIR"))
        ovs = build_overrides(spec)
        res = compose_cached(ovs, cdir, config_name_for(spec.verl_version), spec.verl_version)
        if res.yaml is None:  # cached from a composition with other paths: compose this one
            res = compose_cached(ovs, cdir, config_name_for(spec.verl_version), spec.verl_version, use_cache=False)
        if res.yaml is None:  # pragma: no cover - validation already refused
            raise DoctorError("verl's config did not compose")
        return res.yaml
    from doctor.launch.render import render_script

    text = render_script(spec)
    _bash_n(text)
    return text


def _bash_n(text: str) -> None:
    """The script must parse (`bash -n`) before it is handed out; a failure here is the doctor's bug."""
    import shutil
    import subprocess

    from doctor.errors import DoctorError

    bash = shutil.which("bash")
    if bash is None:
        return
    try:
        r = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:  # pragma: no cover
        raise DoctorError("bash -n timed out on the rendered script") from None
    if r.returncode != 0:
        raise DoctorError(f"internal error: rendered script fails bash -n: {r.stderr.strip()}")


def _write(path: str, text: str, *, executable: bool) -> None:
    from doctor.atomic import write_text_atomic
    from doctor.errors import InputError

    try:
        write_text_atomic(path, text, mode=0o755 if executable else 0o644)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", source=path) from None


def _no_verl_version(spec_file: str | None) -> None:
    """No --verl-version, none in the spec and no verl beside the doctor (README's install puts the doctor in a
    venv of its own, so this is the first run's case): exit 2 naming the interpreter that was looked at and a
    release to pass, since the config keys and prefixes written depend on it."""
    import sys

    from doctor.errors import UsageError
    from doctor.knowledge.releases import load_releases

    finals = [r.version for r in load_releases().rows if not r.snapshot]
    where = f"--verl-version (or verl_version in {spec_file})" if spec_file else "--verl-version"
    raise UsageError(f"{where} is required: no verl is installed in the doctor's interpreter ({sys.executable}) "
                     f"to take it from; pass the verl release the cluster runs"
                     + (f", e.g. --verl-version {finals[-1]} (the newest the doctor knows)" if finals else ""))
