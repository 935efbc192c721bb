"""`doctor launch` through the real CLI: files written (0755, atomic, no silent overwrite), refusal on error
findings, --spec files, formats, chip defaults, and the four classic mistakes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.conftest import SCHEMAS
from tests.launch.helpers import QWEN3_06B, require_verl_config, write_model


@pytest.fixture(scope="module")
def verl_cfg():
    return require_verl_config()

A = "actor_rollout_ref.actor.megatron."
OTC = A + "override_transformer_config."


def launch(*args: str, **kw):
    return CliRunner().invoke(cli, ["launch", *args], catch_exceptions=False, **kw)


@pytest.fixture
def model(tmp_path: Path) -> str:
    return write_model(tmp_path / "models", "Qwen3-0.6B", QWEN3_06B)


def test_writes_executable_script_that_passes_bash_n(tmp_path, model, verl_cfg):
    out = tmp_path / "run.sh"
    r = launch("--model", model, "--tp", "2", "--pp", "2", "--fused", "rope,swiglu,rmsnorm", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    text = out.read_text()
    assert f"+{OTC}use_fused_rmsnorm=True" in text and f"{A}vanilla_mbridge=True" in text
    assert subprocess.run(["bash", "-n", str(out)], timeout=20).returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".doctor-")] == []
    # refuses to overwrite, then --overwrite / --force replace it
    out.write_text("precious\n")
    r = launch("--model", model, "--no-compose", "-o", str(out))
    assert r.exit_code == 2 and "--overwrite" in r.output and out.read_text() == "precious\n"
    for flag in ("--overwrite", "--force"):
        out.write_text("precious\n")
        assert launch("--model", model, "--no-compose", "-o", str(out), flag).exit_code == 0
        assert out.read_text().startswith("#!/usr/bin/env bash")


def test_script_on_stdout_findings_on_stderr(model, verl_cfg):
    r = launch("--model", model, "--tp", "2")
    assert r.exit_code == 0
    assert r.stdout.startswith("#!/usr/bin/env bash\n")
    assert "launch: ok" in r.stderr and "launch: ok" not in r.stdout


def test_json_report_carries_overrides_and_keys(model, verl_cfg, shared_dir):
    import jsonschema

    r = launch("--json", "--model", model, "--tp", "2", "--sp", "--gpu-memory-utilization", "0.95")
    rep = json.loads(r.stdout)
    jsonschema.validate(rep, json.loads((SCHEMAS / "report.schema.json").read_text()))
    assert rep["command"] == "launch"
    assert f"+{OTC}sequence_parallel=True" in rep["overrides"]
    assert rep["text"].startswith("#!/usr/bin/env bash")
    warn = [f for f in rep["findings"] if f["id"] == "launch-gpu-memory-utilization"]
    assert warn and warn[0]["key"] == "actor_rollout_ref.rollout.gpu_memory_utilization"
    assert r.exit_code == 0
    r = launch("--json", "--strict", "--no-compose", "--model", model, "--gpu-memory-utilization", "0.95")
    assert r.exit_code == 1 and json.loads(r.stdout)["written"] is None


@pytest.mark.parametrize("args,version,id_,key", [
    (["--pp", "2", "--vpp", "2"], "0.7.1", "launch-mbridge-vpp", A + "virtual_pipeline_model_parallel_size"),
    (["--tp", "1", "--sp"], "0.9.1", "launch-sp-without-tp", OTC + "sequence_parallel"),
    (["--override", f"~{OTC}use_flash_attn"], "0.7.1", "launch-fa-missing", OTC + "use_flash_attn"),
    (["--override", f"{OTC}use_fused_rmsnorm=True"], "0.9.1", "launch-key-needs-plus", OTC + "use_fused_rmsnorm"),
    (["--no-mbridge"], "0.9.1", "launch-mbridge-required", A + "use_mbridge"),
    (["--override", f"++{OTC}use_flash_attn=False"], "0.9.1", "launch-fa-off", OTC + "use_flash_attn"),
])
def test_launch_refuses_the_classic_mistakes(tmp_path, model, args, version, id_, key, verl_cfg):
    out = tmp_path / "run.sh"
    r = launch("--json", "--model", model, "--verl-version", version, *args, "-o", str(out))
    rep = json.loads(r.stdout)
    assert r.exit_code == 1
    hits = [f for f in rep["findings"] if f["id"] == id_]
    assert hits and hits[0]["key"] == key and hits[0]["severity"] == "error", rep["findings"]
    assert not out.exists()


def test_launch_writes_mbridge_with_vpp_for_the_engine_worker(tmp_path, model, verl_cfg):
    """From 0.8.0 main_ppo runs only the engine worker, which runs mbridge with VPP (upstream's Ascend CI does, PP=2
    VPP=2); the IndexError of verl-project/verl#4815 is the legacy worker's. Before, launch refused to write it."""
    out = tmp_path / "run.sh"
    r = launch("--json", "--model", model, "--verl-version", "0.9.1", "--pp", "2", "--vpp", "2", "--mbridge",
               "-o", str(out))
    rep = json.loads(r.stdout)
    assert [f["id"] for f in rep["findings"] if f["severity"] == "error"] == [], rep["findings"]
    assert r.exit_code == 0 and out.exists()
    assert f"{A}virtual_pipeline_model_parallel_size=2" in out.read_text()


def test_missing_plus_is_also_caught_by_real_hydra(model, verl_cfg):
    """A key the static tables do not know: only the composition can reject it."""
    r = launch("--json", "--model", model, "--override", "actor_rollout_ref.actor.no_such_knob=1")
    rep = json.loads(r.stdout)
    hit = [f for f in rep["findings"] if f["key"] == "actor_rollout_ref.actor.no_such_knob"]
    assert hit and hit[0]["id"] == "launch-key-not-in-config" and "Could not override" in hit[0]["detail"]
    assert "+" + "actor_rollout_ref.actor.no_such_knob" not in hit[0]["fix"]["text"]  # a dataclass: '+' would fail
    assert r.exit_code == 1


def test_spec_files_yaml_and_toml(tmp_path, model, verl_cfg):
    y = tmp_path / "spec.yaml"
    y.write_text(f"model: {model}\ntp: 2\npp: 2\nfused: [rope, rmsnorm]\nrecompute: full\nrecompute-method: uniform\n"
                 "recompute_layers: 1\nextra_overrides: ['trainer.val_before_train=False']\n")
    r = launch("--json", "--spec", str(y), "--pp", "1")  # the command line wins over the file
    rep = json.loads(r.stdout)
    assert r.exit_code == 0, rep["findings"]
    assert rep["spec"]["tp"] == 2 and rep["spec"]["pp"] == 1 and rep["spec"]["fused"] == ["rope", "rmsnorm"]
    assert "trainer.val_before_train=False" in rep["overrides"]
    t = tmp_path / "spec.toml"
    t.write_text(f'model = "{model}"\nverl_version = "0.7.1"\ncp = 2\n')  # 0.7.1: key tables, no compose
    rep = json.loads(launch("--json", "--spec", str(t)).stdout)
    assert f"+{OTC}context_parallel_size=2" in rep["overrides"] and rep["verl_version"] == "0.7.1"


@pytest.mark.parametrize("content,where", [
    ("tp: 2\nbogus_key: 1\n", "bogus_key"),
    ("tp: -1\n", "tp"),
    ("fused: [rope, warp]\n", "fused"),
    ("tp: [\n", "not valid YAML"),
    ("- a\n- b\n", "mapping"),
])
def test_bad_spec_file_exit_2_names_file_and_key(tmp_path, content, where):
    f = tmp_path / "bad.yaml"
    f.write_text(content)
    r = launch("--spec", str(f))
    assert r.exit_code == 2
    assert str(f) in r.output and where in r.output


def test_unwritable_output_exit_2_nothing_created(tmp_path, model):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    r = launch("--model", model, "-o", str(blocker / "run.sh"))  # ENOTDIR
    assert r.exit_code == 2 and "cannot write" in r.output


def test_formats_overrides_and_yaml(model, verl_cfg):
    r = launch("--model", model, "--no-compose", "--format", "overrides", "--tp", "2")
    lines = r.stdout.splitlines()
    assert f"+{OTC}use_flash_attn=True" in lines and f"{A}tensor_model_parallel_size=2" in lines
    r = launch("--model", model, "--format", "yaml", "--tp", "2")
    import yaml

    cfg = yaml.safe_load(r.stdout)
    mega = cfg["actor_rollout_ref"]["actor"]["megatron"]
    assert mega["override_transformer_config"]["use_flash_attn"] is True and mega["tensor_model_parallel_size"] == 2


def test_npus_per_node_from_chip_and_sysfs(tmp_path, model):
    rep = json.loads(launch("--json", "--no-compose", "--model", model, "--chip", "A3").stdout)
    assert rep["spec"]["npus_per_node"] == 16
    dev = tmp_path / "root" / "sys" / "bus" / "pci" / "devices" / "0000:c1:00.0"
    dev.mkdir(parents=True)
    (dev / "vendor").write_text("0x19e5\n")
    (dev / "device").write_text("0xd803\n")
    rep = json.loads(launch("--json", "--no-compose", "--model", model, "--root", str(tmp_path / "root")).stdout)
    assert rep["spec"]["npus_per_node"] == 16
    (tmp_path / "empty").mkdir()
    rep = json.loads(launch("--json", "--no-compose", "--model", model, "--root", str(tmp_path / "empty")).stdout)
    assert rep["spec"]["npus_per_node"] == 8
    assert any(f["id"] == "launch-npus-per-node" for f in rep["findings"])


def test_verl_version_required_without_installed_verl(monkeypatch, model, tmp_path):
    from doctor.launch import hydra_compose

    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no release config unpacked before
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # and no wheel to be had
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    r = launch("--model", model)
    # README's first launch example on a machine set up as README says (the doctor in a venv of its own): the
    # message names the interpreter that has no verl and a release to pass
    assert r.exit_code == 2 and "--verl-version" in r.output and sys.executable in r.output
    from doctor.knowledge.releases import load_releases

    newest = [row.version for row in load_releases().rows if not row.snapshot][-1]
    assert f"e.g. --verl-version {newest} (the newest the doctor knows)" in r.output
    rep = json.loads(launch("--json", "--model", model).stdout)
    assert [f["id"] for f in rep["findings"]] == ["usage-error"]
    r = launch("--json", "--model", model, "--verl-version", "0.9.1")
    rep = json.loads(r.stdout)
    assert any(f["id"] == "launch-schema-not-composed" and f["severity"] == "warning" for f in rep["findings"])
    r = launch("--model", model, "--verl-version", "0.9.1", "--compose")
    assert r.exit_code == 2 and "--verl-config" in r.output


def test_unreadable_model_dir_warns_and_multinode_warns(tmp_path, verl_cfg):
    rep = json.loads(launch("--json", "--no-compose", "--model", str(tmp_path / "nowhere"), "--nodes", "2").stdout)
    got = {f["id"]: f for f in rep["findings"]}
    assert got["launch-model-unreadable"]["severity"] == "warning"
    assert got["launch-model-path-every-node"]["key"] == "actor_rollout_ref.model.path"
    # the model's size is not known here (a login node without the model): the small-model defaults are said to be
    # assumed, with the options upstream's large-model example takes for a Qwen3-8B
    ex = got["launch-defaults-from-example"]
    assert "assumed" in ex["title"] and "config.json" in ex["title"]
    assert "--offload --rollout-tp 4 --gpu-memory-utilization 0.5" in ex["fix"]["text"]


def test_an_unreadable_model_with_experts_in_the_layout_gets_the_moe_example(tmp_path):
    """README's spec example (Qwen3-30B-A3B, EP 4, `fused: [..., gmm]`) launched on a laptop without the model: its
    config.json is not readable, so the small dense model's example was taken (no offload, rollout TP 2, memory 0.6)
    for a layout that only a MoE model takes. EP > 1 or a MoE fusion now picks the MoE example, saying why."""
    def defaults(*args):
        rep = json.loads(launch("--json", "--no-compose", "--model", str(tmp_path / "nowhere"), "--verl-version",
                                "0.9.1", *args).stdout)
        return next(f for f in rep["findings"] if f["id"] == "launch-defaults-from-example")

    moe = defaults("--tp", "4", "--pp", "2", "--ep", "4", "--fused", "rope,gmm", "--nodes", "2")
    assert "run_grpo_qwen3_30b_megatron_sglang_npu.sh" in moe["title"]
    assert "assumed from the layout's experts (--ep 4, --fused gmm)" in moe["title"]
    assert moe["evidence"]["offload"] is True and moe["evidence"]["rollout_tp"] == 4
    assert defaults("--tp", "2", "--fused", "permute")["evidence"]["offload"] is True
    dense = defaults("--tp", "2", "--fused", "rope,swiglu")
    assert "run_qwen3_0_6b_megatron_vllm_ascend.sh" in dense["title"] and dense["evidence"]["offload"] is False


def test_no_model_is_a_warning_naming_the_placeholder_the_script_would_run(tmp_path, model):
    """`doctor launch --verl-version 0.9.1` without --model said "launch: ok" (one info: model checks skipped) and
    wrote a script with no actor_rollout_ref.model.path: verl then loads its config's placeholder,
    ~/models/deepseek-llm-7b-chat, and the run fails on it. A warning says so; a model given any way has none."""
    def ids(*args):
        rep = json.loads(launch("--json", "--no-compose", "--verl-version", "0.9.1", *args).stdout)
        return {f["id"]: f for f in rep["findings"]}

    got = ids()
    f = got["launch-model-missing"]
    assert f["severity"] == "warning" and f["key"] == "actor_rollout_ref.model.path"
    assert "~/models/deepseek-llm-7b-chat" in f["title"] and "--model DIR" in f["fix"]["text"]
    assert "launch-model-missing" not in ids("--model", model)
    assert "launch-model-missing" not in ids("--override", "actor_rollout_ref.model.path=/models/m")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"model: {model}\n")
    assert "launch-model-missing" not in ids("--spec", str(spec))


def test_launch_then_lint_round_trip(tmp_path, model, verl_cfg):
    out = tmp_path / "run.sh"
    assert launch("--model", model, "--tp", "2", "--cp", "2", "--sp", "--dist-opt", "--recompute", "full",
                  "--recompute-method", "block", "--recompute-layers", "2", "-o", str(out)).exit_code == 0
    r = CliRunner().invoke(cli, ["lint", "--json", str(out)])
    rep = json.loads(r.stdout)
    assert r.exit_code == 0, rep["findings"]
    assert rep["summary"]["error"] == 0 and rep["summary"]["warning"] == 0
    assert os.access(out, os.X_OK)


LAYOUTS = {  # dense, MoE, every MindSpeed feature row, two nodes
    "dense-tp2": ("dense", ["--tp", "2"]),
    "dense-tp2-pp2-sp-distopt": ("dense", ["--tp", "2", "--pp", "2", "--sp", "--dist-opt"]),
    "dense-cp2-recompute-full": ("dense", ["--cp", "2", "--recompute", "full", "--recompute-method", "uniform",
                                           "--recompute-layers", "1"]),
    "dense-recompute-selective": ("dense", ["--tp", "2", "--recompute", "selective"]),
    "dense-fused-mbridge": ("dense", ["--tp", "2", "--fused", "rope,swiglu,rmsnorm", "--mbridge"]),
    "moe-ep4-gmm-permute": ("moe", ["--ep", "4", "--etp", "1", "--fused", "gmm,permute"]),
    "moe-tp2-ep2-sp": ("moe", ["--tp", "2", "--ep", "2", "--sp"]),
    "two-nodes": ("dense", ["--nodes", "2", "--tp", "4", "--pp", "2", "--head-address", "10.0.0.1"]),
    "0.7.1-vpp": ("dense", ["--verl-version", "0.7.1", "--pp", "2", "--vpp", "2", "--no-mbridge"]),
    "0.6.1-dense": ("dense", ["--verl-version", "0.6.1", "--tp", "2", "--no-mbridge"]),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_own_launch_output_lints_clean(name, tmp_path, verl_cfg, monkeypatch):
    """`doctor lint` reads what `doctor launch` wrote (the verl version from its header) and finds nothing
    launch did not already say."""
    from tests.launch.helpers import QWEN3_MOE

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kind, args = LAYOUTS[name]
    model = write_model(tmp_path / "models", kind, QWEN3_MOE if kind == "moe" else QWEN3_06B)
    version = next((args[i + 1] for i, a in enumerate(args) if a == "--verl-version"), None)
    extra = []
    if version:
        cdir = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent")) / version / "verl" / "trainer" / "config"
        if not cdir.is_dir():
            pytest.skip(f"no verl {version} config unpacked (DOCTOR_TEST_VERL_CONFIGS)")
        extra = ["--verl-config", str(cdir)]
    out = tmp_path / "run.sh"
    r = CliRunner().invoke(cli, ["--json", "launch", "--model", model, *args, *extra, "-o", str(out)])
    launched = json.loads(r.stdout)
    assert r.exit_code == 0, [f["title"] for f in launched["findings"] if f["severity"] != "info"]
    r = CliRunner().invoke(cli, ["--json", "lint", str(out), "--model", model, *extra])
    report = json.loads(r.stdout)
    assert report["verl_version"] == launched["verl_version"]
    said = {(f["id"], f["key"]) for f in launched["findings"]}
    new = [(f["id"], f["key"]) for f in report["findings"] if f["severity"] != "info" and (f["id"], f["key"]) not in said]
    assert r.exit_code == 0 and new == [], new


def test_failure_writes_nothing_to_stdout(model, verl_cfg):
    r = launch("--model", model, "--tp", "3")  # 16 heads are not divisible by 3
    assert r.exit_code == 1 and r.stdout == "" and "launch-heads-indivisible" in r.stderr


def test_override_values_go_through_the_same_rules(model, verl_cfg):
    r = CliRunner().invoke(cli, ["--json", "launch", "--model", model, "--override",
                                 f"{A}tensor_model_parallel_size=3"])
    report = json.loads(r.stdout)
    assert r.exit_code == 1 and "launch-heads-indivisible" in [f["id"] for f in report["findings"]]


def test_a_verl_version_the_index_does_not_have_is_not_told_to_make_the_index_reachable(monkeypatch, model, tmp_path):
    """`--verl-version 9.9.9` (or a typo): pip reads the index and finds other releases only ("from versions:
    0.9.1"). The fix said "Make the index reachable"; the index was read, the version is what is wrong."""
    from doctor.launch import hydra_compose
    from tests.installers.wheelkit import make_wheel

    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    make_wheel(tmp_path / "index", "verl", "0.9.1")
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # a local index that holds verl 0.9.1 only
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    rep = json.loads(launch("--json", "--model", model, "--verl-version", "9.9.9").stdout)
    f = next(f for f in rep["findings"] if f["id"] == "launch-schema-not-composed")
    assert "has no release verl 9.9.9 (the newest it lists: 0.9.1)" in f["title"]
    assert "Check --verl-version" in f["fix"]["text"] and "reachable" not in f["fix"]["text"]


def test_an_unreachable_index_fix_names_the_release_and_the_interpreter(monkeypatch, model, tmp_path):
    """With no verl beside the doctor and no index, the fix said `pip install --no-deps verl==VERSION`: the version
    was a placeholder although the run knows it (--verl-version), and a bare `pip` is whichever Python's is first on
    PATH, not the doctor's, where the installed verl is looked for. It names both now, as the line to paste."""
    import shlex

    from doctor.launch import hydra_compose

    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # and no wheel to be had
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    rep = json.loads(launch("--json", "--model", model, "--verl-version", "0.9.0").stdout)
    f = next(f for f in rep["findings"] if f["id"] == "launch-schema-not-composed")
    assert "VERSION" not in f["fix"]["text"]
    assert f"`{shlex.quote(sys.executable)} -m pip install --no-deps verl==0.9.0`" in f["fix"]["text"]


def test_the_first_download_of_a_release_config_is_said_before_it_runs(monkeypatch, model, tmp_path):
    """README's first `doctor launch` on a machine without verl fetched the target release's wheel with pip (2.8 s
    here; up to its timeout behind a slow proxy) with nothing on the terminal. A status line says so first — once: a
    cached config, an installed verl of that version or --verl-config needs none."""
    from doctor.launch import hydra_compose
    from doctor.launch.validation import downloads_config

    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the download is tried, and fails: the line is said before it
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    r = launch("--model", model, "--verl-version", "0.9.0", "-o", str(tmp_path / "run.sh"))
    assert "verl 0.9.0's config is not cached here: downloading its wheel with pip (first use only)" in r.output
    assert downloads_config("0.9.0", None, None)
    assert not downloads_config("0.9.0", None, False) and not downloads_config("0.9.0", str(tmp_path), None)
    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: ("0.9.0", tmp_path))
    assert not downloads_config("0.9.0", None, None)


def test_the_defaults_fix_for_an_unreadable_model_is_one_sentence(tmp_path):
    """README's first launch line on a laptop (the model is on the cluster): the defaults finding's fix joined its two
    parts as `…exists; Pass the option…`, a capital after a semicolon. One sentence now."""
    rep = json.loads(launch("--json", "--no-compose", "--model", str(tmp_path / "nowhere"), "--verl-version",
                            "0.9.1").stdout)
    fix = next(f for f in rep["findings"] if f["id"] == "launch-defaults-from-example")["fix"]["text"]
    assert "model directory exists; pass the option (e.g. --offload/--no-offload" in fix, fix


def test_an_open_etp_that_only_1_fits_is_pinned_to_1(tmp_path):
    """TP 4, PP 2, EP 4 on 2x8 NPUs with no --etp: verl leaves ETP null, Megatron takes ETP = TP and EP*TP*PP = 32
    does not divide 16, so the script written carried a layout that breaks at start-up (a warning only); now launch
    writes expert_tensor_parallel_size=1 (EP*PP = 8 divides 16) and says so. An --etp given is kept and judged."""
    from tests.launch.helpers import QWEN3_MOE

    moe = write_model(tmp_path / "models", "Qwen3-30B-A3B", QWEN3_MOE)
    layout = ("--json", "--no-compose", "--model", moe, "--verl-version", "0.9.1", "--nodes", "2",
              "--npus-per-node", "8", "--tp", "4", "--pp", "2", "--ep", "4")
    r = launch(*layout)
    rep = json.loads(r.stdout)
    assert r.exit_code == 0 and rep["spec"]["etp"] == 1
    assert A + "expert_tensor_parallel_size=1" in rep["overrides"]
    ids = {f["id"]: f["severity"] for f in rep["findings"]}
    assert ids.get("launch-etp-pinned") == "info" and "launch-expert-world-indivisible" not in ids
    r = launch(*layout, "--etp", "4")
    ids = {f["id"]: f["severity"] for f in json.loads(r.stdout)["findings"]}
    assert r.exit_code == 1 and ids["launch-expert-world-indivisible"] == "error" and "launch-etp-pinned" not in ids
    fits = json.loads(launch(*layout[:-2], "--ep", "2").stdout)  # EP*TP*PP = 2*4*2 = 16: ETP stays open
    assert fits["spec"]["etp"] is None and "launch-etp-pinned" not in {f["id"] for f in fits["findings"]}


def test_defaults_from_example_names_the_example_without_verbose(tmp_path, model, verl_cfg):
    """The note on the defaults launch took said "upstream's closest NPU example (small dense model)" and named the
    script only in -v's evidence; the text a user reads names it (the example's file, its URL in `source`)."""
    r = launch("--model", model, "--tp", "2", "-o", str(tmp_path / "run.sh"))
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "[launch-defaults-from-example]" in x)
    assert "closest NPU example, run_qwen3_0_6b_megatron_vllm_ascend.sh (small dense model)" in line, line


def test_a_model_path_that_exists_but_is_no_model_is_exit_2_and_nothing_is_written(tmp_path):
    """`--model DIR` where DIR is there but holds no config.json (a half-copied model, the parent directory typed
    instead of the model's) or a config.json that is not JSON: the run fails loading it, yet launch warned and wrote
    the script, exit 0. Now exit 2 naming the file and the reason, before anything is written. A path that does not
    exist here stays a warning (a login node preparing the cluster's job has no copy), which says so."""
    out = tmp_path / "run.sh"
    models = tmp_path / "models"
    models.mkdir()
    r = launch("--no-compose", "--verl-version", "0.9.1", "--model", str(models), "-o", str(out))
    assert r.exit_code == 2, r.output
    assert f"{models / 'config.json'}: no config.json here (a local Hugging Face model directory is expected)" \
        in r.stderr, r.stderr
    assert not out.exists()
    (models / "config.json").write_text("{\n")
    r = launch("--no-compose", "--verl-version", "0.9.1", "--model", str(models), "-o", str(out))
    assert r.exit_code == 2 and f"{models / 'config.json'}: not valid JSON" in r.stderr, r.stderr
    assert not out.exists()
    r = launch("--no-color", "--no-compose", "--verl-version", "0.9.1", "--model", str(tmp_path / "typo"), "-o", str(out))
    assert r.exit_code == 0 and out.exists(), r.output
    assert f"model {tmp_path / 'typo'} does not exist here: heads/layers/experts checks skipped" in r.output
    assert "a typo fails the run when verl loads the model" in r.output
    r = launch("--strict", "--no-compose", "--verl-version", "0.9.1", "--model", str(tmp_path / "typo"))
    assert r.exit_code == 1, r.output
