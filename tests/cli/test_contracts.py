"""The promises every command keeps, run as a user runs them (a real `python -m doctor` process):

* `--json`: stdout is exactly one `doctor.report/1` document on a success, on a finding and on a usage error;
* a closed stdout (`doctor ... | head -1`) ends quietly with 141, never "internal error ... this is a bug";
* the environment twins the README names work as named.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

import jsonschema
import pytest

from tests.conftest import ROOT, SCHEMAS
from tests.fakes import fake_npu_smi, make_ascend_root
from tests.launch.helpers import QWEN3_06B, write_model
from tests.stacks import healthy

SCHEMA = json.loads((SCHEMAS / "report.schema.json").read_text())
LIBATB = "ImportError: libatb.so: cannot open shared object file: No such file or directory\n"
LINT_OK = """python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\
    actor_rollout_ref.actor.strategy=megatron \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \\
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
"""
# EP > 1 with TP > 1 and SP off: Megatron rejects it (launch-ep-tp-needs-sp)
LINT_BAD = LINT_OK.replace("use_flash_attn=True", "use_flash_attn=True \\\n"
                           "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
                           "    actor_rollout_ref.actor.megatron.expert_model_parallel_size=2 \\\n"
                           "    actor_rollout_ref.actor.megatron.sequence_parallel=False")


def doctor(*args: str, env: dict[str, str] | None = None, stdout: int | None = subprocess.PIPE,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("DOCTOR_") and k != "NO_COLOR"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "doctor", *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          env=full, timeout=timeout, cwd=str(ROOT))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("contracts")
    out: dict[str, str] = {}

    def put(name: str, text: str) -> None:
        (d / name).write_text(text)
        out[name] = str(d / name)

    put("healthy.json", json.dumps(healthy()))
    sick = healthy()
    sick["packages"]["vllm-ascend"]["version"] = "0.7.3"
    put("sick.json", json.dumps(sick))
    no_cann = healthy()
    no_cann["ascend"]["toolkit"] = None
    put("no-cann.json", json.dumps(no_cann))
    put("not-json.txt", "this is not a snapshot\n")
    put("ok.log", "step 1 done\n")
    put("atb.log", "loading\n" + LIBATB)
    put("ok.sh", LINT_OK)
    put("bad.sh", LINT_BAD)
    put("file.py", "print('not a launch script')\n")
    (d / "empty").mkdir()
    out["empty"] = str(d / "empty")
    out["model"] = write_model(d / "models", "Qwen3-0.6B", QWEN3_06B)
    out["workdir"] = str(d / "smoke")
    fake_npu_smi(d / "bin", "hang")
    out["ascend-root"] = str(make_ascend_root(d, "a2-cann8.3rc1-old-layout"))
    out["hang-path"] = f"{d / 'bin'}:{os.environ['PATH']}"
    return out


def _need_verl() -> None:
    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed (pip install --no-deps verl==0.9.1)")


# command -> {case: (argv, exit codes, env)}; every case prints one report with --json
def _cases(f: dict[str, str]) -> dict[str, dict[str, tuple[list[str], set[int], dict[str, str]]]]:
    cases = _argv(f)
    hang = {"PATH": f["hang-path"]}
    out = {}
    for command, by_case in cases.items():
        out[command] = {k: (argv, {code} if isinstance(code, int) else code, hang if command == "collect" else {})
                        for k, (argv, code) in by_case.items()}
    return out


def _argv(f: dict[str, str]) -> dict[str, dict[str, tuple[list[str], int | set[int]]]]:
    launch = ["launch", "--no-compose", "--model", f["model"], "--verl-version", "0.9.0"]
    lint = ["lint", "--no-compose", "--verl-version", "0.9.0"]
    smoke = ["smoke", "--dry-run", "--ignore-preflight", "--workdir", f["workdir"]]
    install = ["install", "--dry-run", "--backend", "pip", "--from"]
    return {
        "check": {"success": (["check", "--from", f["healthy.json"]], 0),
                  "finding": (["check", "--from", f["sick.json"]], 1),
                  "usage": (["check", "--from", f["not-json.txt"]], 2)},
        "collect": {"success": (["collect", "--root", f["empty"], "--npu-smi-timeout", "5"], 0),
                    "finding": (["collect", "--root", f["ascend-root"], "--npu-smi-timeout", "0.2"], 0),  # npu-smi hangs
                    "usage": (["collect", "--root", f["not-json.txt"]], 2)},
        # a dry run whose host prerequisites are not met (no CANN on the snapshot) exits 1
        "install": {"success": (install + [f["healthy.json"], "--profile", "verl-0.7.1-cann8.5.0-a2"], 0),
                    "finding": (install + [f["no-cann.json"], "--profile", "verl-0.7.1-cann8.5.0-a2"], 1),
                    "usage": (install + [f["healthy.json"], "--backend", "conda"], 2)},
        "launch": {"success": (launch, 0), "finding": (launch + ["--tp", "3"], 1),
                   "usage": (launch + ["--tp", "abc"], 2)},
        "lint": {"success": (lint + [f["ok.sh"]], 0), "finding": (lint + [f["bad.sh"]], 1),
                 "usage": (lint + [f["file.py"]], 2)},
        "explain": {"success": (["explain", f["ok.log"]], 0), "finding": (["explain", f["atb.log"]], 1),
                    "usage": (["explain", f["ok.log"] + ".missing"], 2)},
        "smoke": {"success": (smoke, 0), "finding": (smoke + ["--tp", "8", "--pp", "4"], 2),
                  "usage": (smoke + ["--steps", "3"], 2)},
        "profiles": {"success": (["profiles"], 0), "finding": (["profiles", "--dir", f["empty"]], 0),
                     "usage": (["profiles", "show", "no-such-profile"], 2)},
        "diff": {"success": (["diff", f["healthy.json"], f["healthy.json"]], 0),
                 "finding": (["diff", f["healthy.json"], f["sick.json"]], 1),
                 "usage": (["diff", f["healthy.json"]], 2)},
    }


COMMANDS = ("check", "collect", "install", "launch", "lint", "explain", "smoke", "profiles", "diff")
CASES = [(c, k) for c in COMMANDS for k in ("success", "finding", "usage")]


@pytest.mark.parametrize(("command", "case"), CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_json_stdout_is_one_report(files, command, case):
    if command == "smoke":
        _need_verl()
    argv, codes, env = _cases(files)[command][case]
    r = doctor("--json", *argv, env=env)
    assert r.returncode in codes, r.stderr
    report = json.loads(r.stdout)  # the whole of stdout is one document
    jsonschema.validate(report, SCHEMA)
    assert report["command"] == command
    if case == "usage":
        assert report["status"] == "error" and len(report["findings"]) == 1, report
        assert report["findings"][0]["title"] and report["findings"][0]["fix"]["text"]
    elif case == "finding":
        assert report["findings"], report


def test_json_after_the_command_and_usage_errors_before_any_command(files):
    r = doctor("check", "--json", "--npu-smi-timeout", "-1")
    assert r.returncode == 2 and json.loads(r.stdout)["findings"][0]["id"] == "usage-error"
    assert "--npu-smi-timeout" in r.stderr
    r = doctor("--json", "no-such-command")
    assert r.returncode == 2 and json.loads(r.stdout)["command"] == "doctor"
    r = doctor("profiles", "--json", "show", "verl-0.7.1-cann8.5.0-a2")  # a group's --json reaches its command
    assert r.returncode == 0 and json.loads(r.stdout)["profiles"][0]["name"] == "verl-0.7.1-cann8.5.0-a2"


# -- closed pipe -----------------------------------------------------------------------------------------


def _closed_stdout(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run with stdout a pipe nobody reads any more (`| head -1` after its line)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return doctor(*argv, stdout=w, env=env)
    finally:
        os.close(w)


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_pipe_ends_quietly(files, command):
    if command == "smoke":
        _need_verl()
    argv, _, env = _cases(files)[command]["finding" if command in ("launch", "lint") else "success"]
    for extra in ([], ["-v"], ["--json"]):
        if command == "launch" and extra != ["--json"]:
            argv = _cases(files)["launch"]["success"][0]  # the script itself goes to stdout
        r = _closed_stdout(*extra, *argv, env=env)
        assert r.returncode == 141, (extra, r.returncode, r.stderr)
        for noise in ("internal error", "Traceback", "Exception ignored", "BrokenPipe"):
            assert noise not in r.stderr, (extra, r.stderr)


# -- environment twins ------------------------------------------------------------------------------------


def _readme_twins() -> list[str]:
    text = (ROOT / "README.md").read_text()
    para = text[text.index("Global options"):text.index("**Exit codes")]
    return re.findall(r"`(DOCTOR_[A-Z_]+)=", para)


def test_every_env_twin_the_readme_names_works(files):
    twins = _readme_twins()
    assert set(twins) == {"DOCTOR_JSON", "DOCTOR_NO_COLOR", "DOCTOR_VERBOSE", "DOCTOR_QUIET", "DOCTOR_KNOWLEDGE"}
    argv = ["check", "--from", files["healthy.json"]]
    assert json.loads(doctor(*argv, env={"DOCTOR_JSON": "1"}).stdout)["command"] == "check"
    know = json.loads(doctor("--json", *argv, env={"DOCTOR_KNOWLEDGE": str(ROOT / "profiles")}).stdout)["knowledge"]
    assert know["copy"] == "DOCTOR_KNOWLEDGE" and know["dir"] == str(ROOT / "profiles")
    assert "check profile-pins" in doctor(*argv, env={"DOCTOR_VERBOSE": "1"}).stdout
    assert "[" not in doctor(*argv, env={"DOCTOR_QUIET": "1"}).stdout.split("check:")[0]
    tty = doctor("--help", env={"DOCTOR_NO_COLOR": "1"})
    assert "DOCTOR_NO_COLOR" in tty.stdout and "\x1b[" not in tty.stdout
    # no undocumented twin: the auto-prefix names click would invent do nothing
    assert doctor(*argv, env={"DOCTOR_JSON_MODE": "1"}).stdout.lstrip()[:1] != "{"


# -- optional dependencies ----------------------------------------------------------------------------------


def test_missing_optional_dependency_names_the_extra(files, tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    for mod in ("yaml", "pyarrow"):
        (shim / f"{mod}.py").write_text('raise ModuleNotFoundError("No module named " + repr(__name__), name=__name__)\n')
    env = {"PYTHONPATH": str(shim)}
    spec = tmp_path / "layout.yaml"
    spec.write_text("tp: 2\n")
    r = doctor("--json", "launch", "--spec", str(spec), env=env)
    # the line names the doctor's own interpreter: a bare `pip` is whichever is first on PATH (README's install does
    # not activate .venv), where verl-ascend-doctor is not installed and PyPI has none ("No matching distribution")
    line = f"{shlex.quote(sys.executable)} -m pip install 'verl-ascend-doctor[launch]'"
    assert r.returncode == 2 and line in r.stderr
    report = json.loads(r.stdout)["findings"][0]
    assert report["id"] == "extra-not-installed" and line in json.dumps(report)
    _need_verl()
    r = doctor("smoke", "--dry-run", "--ignore-preflight", "--workdir", str(tmp_path / "w"), env=env)
    assert r.returncode == 2 and f"{shlex.quote(sys.executable)} -m pip install 'verl-ascend-doctor[smoke]'" in r.stderr
    assert "internal error" not in r.stderr


def test_missing_hydra_at_compose_time_is_a_missing_extra_in_json(tmp_path):
    """hydra is imported only when the config is composed: its absence was reported as `input-invalid` with "Fix or
    replace the input the message names", though nothing the user gave was wrong."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "hydra.py").write_text('raise ModuleNotFoundError("No module named " + repr(__name__), name=__name__)\n')
    model = write_model(tmp_path / "models", "Qwen3-0.6B", QWEN3_06B)
    # a cache of its own: a compose cached by an earlier run is read back without Hydra (rightly no error); the
    # unpacked verl config is shared so the test does not download it again
    from doctor.cachedir import cache_dir

    ours = tmp_path / "xdg" / "verl-ascend-doctor"
    ours.mkdir(parents=True)
    if os.path.isdir(cache_dir("verl")):
        (ours / "verl").symlink_to(cache_dir("verl"))
    r = doctor("--json", "launch", "--model", str(model), "--tp", "1", "--verl-version", "0.9.1", "--compose",
               env={"PYTHONPATH": str(shim), "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    f = json.loads(r.stdout)["findings"][0]
    assert r.returncode == 2 and f["id"] == "extra-not-installed", f
    assert f"{shlex.quote(sys.executable)} -m pip install 'verl-ascend-doctor[launch]'" in f["fix"]["text"]
    assert "--no-compose" in f["fix"]["text"]


def test_extras_table_matches_pyproject():
    import tomllib

    from doctor.cli.options import EXTRAS

    module_of = {"ray": "ray", "hydra-core": "hydra", "omegaconf": "omegaconf", "pyyaml": "yaml", "numpy": "numpy",
                 "safetensors": "safetensors", "tokenizers": "tokenizers", "pyarrow": "pyarrow",
                 "tree-sitter": "tree_sitter", "tree-sitter-bash": "tree_sitter_bash"}
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        dists = [re.split(r"[<>=!\[; ]", d)[0].lower() for d in extras[extra]]
        assert sorted(module_of[d] for d in dists) == sorted(modules), extra


def test_readme_names_the_extra_next_to_each_command_that_needs_one():
    """--ray needs the cluster's own Ray release rather than the `ray` extra (Ray refuses a driver of another
    release, and the extra installs the newest): its section names that line."""
    text = (ROOT / "README.md").read_text()
    for section, line in (("## `doctor launch`", "verl-ascend-doctor[launch]"),
                          ("## `doctor smoke`", "verl-ascend-doctor[smoke]"), ("## Whole cluster", "'ray==VERSION'")):
        body = text[text.index(section):]
        end_of_block = body.index("```", body.index("```") + 3) + 3
        body = body[:body.find("\n\n", end_of_block + 1)]  # the first example block and the paragraph after it
        assert line in body, section
