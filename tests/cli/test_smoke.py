"""`doctor smoke` end to end as a user runs it: a real process, exit codes, stdout JSON, JUnit, files written.

The trainer is the fake script (DOCTOR_SMOKE_TRAINER seam); everything else is real: the workload build,
the launch spec through doctor.launch (real Hydra on the installed verl config), the runner, the verdict and
the signature matcher.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import SCHEMAS, assert_valid_junit

FAKE = str(Path(__file__).resolve().parents[1] / "smoke" / "fake_trainer.py")
SCHEMA = SCHEMAS / "report.schema.json"


def doctor(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("DOCTOR_")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, env=full,
                          timeout=timeout)


def _schema_check(doc: dict) -> None:
    if not SCHEMA.is_file():
        return
    import jsonschema

    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def _need_verl() -> None:
    import importlib.util

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed (pip install --no-deps verl==0.9.1)")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("smoke-work")


def test_dry_run_json_passes_and_its_artifacts_are_valid(workdir: Path) -> None:
    _need_verl()
    r = doctor("smoke", "--dry-run", "--json", "--workdir", str(workdir))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # stdout holds exactly one JSON document
    _schema_check(doc)
    assert doc["command"] == "smoke" and doc["dry_run"] is True
    # a host that is not ready (no NPU here) is said: its errors stand as "(ignored)" warnings, never "ok"
    assert doc["status"] == ("warning" if doc["preflight"].get("ignored") else "ok")
    assert doc["workload"]["valid"] is True
    assert {a["name"] for a in doc["artifacts"]} >= {"data/train.parquet", "data/test.parquet",
                                                     "model/model.safetensors", "model/config.json",
                                                     "model/tokenizer.json", "model/tokenizer_config.json",
                                                     "model/generation_config.json"}
    for a in doc["artifacts"]:
        assert hashlib.sha256(Path(a["path"]).read_bytes()).hexdigest() == a["sha256"]
    argv = doc["argv"]
    assert argv[:3] == [sys.executable, "-m", "verl.trainer.main_ppo"]
    composed = next(f for f in doc["findings"] if f["id"] == "launch-schema-composed")["evidence"]["config_name"]
    assert f"--config-name={composed}" in argv  # the run is the config validation composed (issue 25 item 13)
    assert "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True" in argv
    assert "actor_rollout_ref.actor.strategy=megatron" in argv
    assert doc["env_set"]["RAY_TMPDIR"] == doc["ray_temp_dir"]
    assert not Path(doc["ray_temp_dir"]).exists() and not Path(doc["run_dir"]).exists()  # nothing started
    assert {c["id"]: c["status"] for c in doc["checks"]}["smoke-run"] == "skip"


def test_dry_run_human_prints_command_env_and_artifacts(workdir: Path) -> None:
    _need_verl()
    r = doctor("smoke", "--dry-run", "--workdir", str(workdir), env={"RAY_ADDRESS": "10.1.1.1:6379"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "command (" in out and "verl.trainer.main_ppo" in out and "RAY_TMPDIR=" in out
    assert "  env -u RAY_ADDRESS \\\n" in out
    assert "model/model.safetensors" in out and "reused" in out  # second build of the same key


def test_dry_run_prints_one_shell_command_that_runs_the_trainer_as_the_smoke_would(workdir: Path, tmp_path: Path) -> None:
    """The dry run is what a user takes to the NPU host: its command, pasted into bash, starts the trainer with the
    argv and environment the smoke run would give it. Before, the command was one line and the variables a list
    (`env (set):` NAME=value lines, `env (unset): NAME`) the user had to turn into exports by hand."""
    _need_verl()
    r = doctor("--json", "smoke", "--dry-run", "--workdir", str(workdir), env={"RAY_ADDRESS": "10.1.1.1:6379"})
    doc = json.loads(r.stdout)
    r = doctor("smoke", "--dry-run", "--workdir", str(workdir), env={"RAY_ADDRESS": "10.1.1.1:6379"})
    lines = r.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("command (")) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].endswith("\\")) + 1
    command = "\n".join(line[2:] for line in lines[start:end])
    seen = tmp_path / "seen.json"
    probe = ("import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, "
             f"open({str(seen)!r}, 'w'))")
    command = command.replace(f"{doc['argv'][0]} -m verl.trainer.main_ppo", f"{sys.executable} -c {shlex.quote(probe)}", 1)
    subprocess.run(["bash", "-c", command], check=True, env={**os.environ, "RAY_ADDRESS": "10.1.1.1:6379"}, timeout=60)
    got = json.loads(seen.read_text())
    # each dry run has its own run id (its Ray temp dir): the JSON run's, renamed to the human run's
    doc = json.loads(json.dumps(doc).replace(doc["env_set"]["DOCTOR_SMOKE_RUN_ID"], got["env"]["DOCTOR_SMOKE_RUN_ID"]))
    assert got["argv"] == doc["argv"][3:]  # every override, byte for byte ('trainer.logger=["console"]' among them)
    assert "RAY_ADDRESS" not in got["env"]
    assert {k: got["env"].get(k) for k in doc["env_set"]} == doc["env_set"]


def test_dry_run_on_a_host_with_check_errors_ends_saying_the_run_would_be_refused(workdir: Path) -> None:
    _need_verl()
    if doctor("check", "--json").returncode != 1:
        pytest.skip("this host has no check errors to refuse on")
    r = doctor("smoke", "--dry-run", "--workdir", str(workdir))
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("a real run would be refused: `doctor check` found") and "--ignore-preflight" in last


def test_preflight_errors_refuse_the_run(workdir: Path) -> None:
    _need_verl()
    check = doctor("check", "--json")
    if check.returncode != 1:
        pytest.skip("this host has no check errors to refuse on")
    errors = {f["id"] for f in json.loads(check.stdout)["findings"] if f["severity"] == "error"}
    r = doctor("smoke", "--json", "--workdir", str(workdir), env=_fake_env("pass"))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    ids = {f["id"] for f in doc["findings"]}
    assert "smoke-preflight-failed" in ids and errors <= ids
    assert "run" not in doc and "workload" not in doc  # refused before anything was built or started


def _fake_env(mode: str, **more: str) -> dict[str, str]:
    return {"DOCTOR_SMOKE_TRAINER": FAKE, "FAKE_TRAINER_MODE": mode, **more}


def test_passing_run_reports_metrics_and_writes_junit(workdir: Path, tmp_path: Path, junit_schema) -> None:
    _need_verl()
    junit = tmp_path / "smoke.xml"
    r = doctor("smoke", "--json", "--ignore-preflight", "--steps", "2", "--workdir", str(workdir), "--junit", str(junit),
               env=_fake_env("pass"))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    _schema_check(doc)
    assert doc["verdict"] == "pass" and set(doc["metrics"]) == {"1", "2"}
    assert doc["metrics"]["2"]["actor/grad_norm"] == 0.82 and doc["throughput"] == 15.36
    assert "smoke-passed" in {f["id"] for f in doc["findings"]}
    assert Path(doc["log"]).is_file() and "step:2 - " in Path(doc["log"]).read_text()
    script = Path(doc["launch_script"])
    assert subprocess.run(["bash", "-n", str(script)], timeout=30).returncode == 0
    assert "step 2:" in r.stderr  # progress on screen (stderr), JSON alone on stdout
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert {"smoke-preflight", "smoke-workload", "smoke-launch-spec", "smoke-run", "smoke-step-1", "smoke-step-2"} <= set(cases)
    assert all(c.find("failure") is None for c in cases.values())
    assert_valid_junit(junit_schema, junit)
    assert not Path(doc["ray_temp_dir"]).exists()  # removed after a pass


def test_failing_run_exits_1_with_the_diagnosis(workdir: Path, tmp_path: Path, junit_schema) -> None:
    _need_verl()
    junit = tmp_path / "smoke.xml"
    r = doctor("smoke", "--json", "--ignore-preflight", "--workdir", str(workdir), "--junit", str(junit),
               env=_fake_env("fail"))
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    ids = {f["id"] for f in doc["findings"]}
    assert {"smoke-exit-nonzero", "smoke-step-missing", "cann-libhccl-missing"} <= ids
    failures = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert set(failures) == {"smoke-run", "smoke-step-1"}
    assert "libhccl" in ET.parse(junit).getroot().find(".//testcase[@name='smoke-run']/failure").text
    assert_valid_junit(junit_schema, junit)
    assert not Path(doc["ray_temp_dir"]).exists()  # the run wrote no Ray logs there: an empty dir is not kept


def test_nan_loss_fails(workdir: Path) -> None:
    _need_verl()
    r = doctor("smoke", "--json", "--ignore-preflight", "--workdir", str(workdir), env=_fake_env("nan"))
    assert r.returncode == 1
    assert "smoke-metric-not-finite" in {f["id"] for f in json.loads(r.stdout)["findings"]}


@pytest.mark.slow
def test_hung_run_is_ended_at_the_time_limit(workdir: Path, tmp_path: Path) -> None:
    _need_verl()
    r = doctor("smoke", "--json", "--ignore-preflight", "--workdir", str(workdir), "--run-timeout", "3",
               env=_fake_env("hang", FAKE_TRAINER_PIDS=str(tmp_path / "pids.json")))
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert "smoke-timeout" in {f["id"] for f in doc["findings"]} and doc["run"]["timed_out"] is True
    import psutil

    for pid in json.loads((tmp_path / "pids.json").read_text()):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_usage_errors_exit_2(workdir: Path, tmp_path: Path) -> None:
    assert doctor("smoke", "--steps", "3", "--dry-run").returncode == 2
    r = doctor("smoke", "--dry-run", "--workdir", str(workdir), "--python", str(tmp_path / "nope" / "python3"))
    assert r.returncode == 2 and "nope/python3" in r.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = doctor("smoke", "--dry-run", "--workdir", str(blocker / "w"))
    assert r.returncode == 2 and str(blocker / "w") in r.stderr
    r = doctor("smoke", "--dry-run", "--workdir", str(workdir), "--tp", "8", "--pp", "4")
    assert r.returncode == 2 and "needs more NPUs" in r.stderr


@pytest.mark.npu
def test_real_smoke_run_on_npu(tmp_path: Path) -> None:
    """The real thing: verl + MindSpeed + vLLM on this host's NPUs (skipped where there are none)."""
    junit = tmp_path / "smoke.xml"
    r = doctor("smoke", "--json", "--junit", str(junit), "--steps", "1", timeout=3600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass" and "1" in doc["metrics"]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_ci_examples_run_check_install_smoke_with_real_options(name: str) -> None:
    """Every `doctor …` line in the CI examples uses options the commands really have, and JUnit is published."""
    import shlex

    import yaml

    from doctor.cli import cli

    text = (EXAMPLES / name).read_text()
    doc = yaml.safe_load(text)  # valid YAML

    def strings(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for v in node.values():
                yield from strings(v)
        elif isinstance(node, list):
            for v in node:
                yield from strings(v)

    calls = []
    for line in "\n".join(strings(doc)).replace("\\\n", " ").splitlines():
        if '/bin/doctor"' not in line:
            continue
        words = shlex.split(line.split('/bin/doctor"', 1)[1].split("||")[0].split(">")[0].rstrip("'\""))
        calls.append(words)
    assert {w[0] for w in calls} == {"check", "install", "smoke"}
    import click

    for words in calls:
        cmd = cli.get_command(click.Context(cli), words[0])
        known = {o for p in cmd.params for o in getattr(p, "opts", [])}
        for w in words[1:]:
            if w.startswith("--"):
                assert w in known, f"{name}: doctor {words[0]} has no option {w}"
        if words[0] in ("check", "smoke"):
            assert "--junit" in words
    assert "junit" in text.lower() and ("report_paths" in text or "reports:" in text)


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_ci_examples_install_the_doctor_from_where_it_is(name: str, tmp_path: Path) -> None:
    """The examples' "install the doctor" line installs what it names: `pip install "verl-ascend-doctor[smoke]"`
    asked PyPI, which has no such project (HTTP 404; pip: "No matching distribution found"), so every job stopped at
    its first step. The line now installs `$DOCTOR_SRC` (the doctor's checkout or wheel on the runner): with it
    pointing at this checkout, pip resolves the doctor with its `smoke` extra from it, no index asked."""
    import re
    import subprocess
    import sys

    import yaml

    text = (EXAMPLES / name).read_text()
    (line,) = [x for x in text.splitlines() if re.search(r'bin/pip" install (?!--upgrade)', x)]
    (spec,) = re.findall(r'install "([^"]+)"', line)
    assert "verl-ascend-doctor[" not in spec, f"{name}: {spec} is asked of PyPI, which has no verl-ascend-doctor"
    doc = yaml.safe_load(text)
    env = doc.get("variables") or next(j["env"] for j in doc["jobs"].values())
    assert "DOCTOR_SRC" in env, f"{name}: DOCTOR_SRC is not set"
    spec = spec.replace("${DOCTOR_SRC}", str(EXAMPLES.parents[1])).replace("$DOCTOR_SRC", str(EXAMPLES.parents[1]))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                        "--no-build-isolation", "-q", "--report", "-", spec],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    assert [(i["metadata"]["name"], i.get("requested_extras")) for i in json.loads(r.stdout)["install"]] == \
        [("verl-ascend-doctor", ["smoke"])]


@pytest.mark.slow
def test_cancel_by_sigterm_ends_the_run_and_its_processes(workdir: Path, tmp_path: Path) -> None:
    """A CI cancel (SIGTERM to the doctor) cleans up like Ctrl-C: exit 2, nothing of the run left."""
    import signal
    import time

    import psutil

    _need_verl()
    pids_file = tmp_path / "pids.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCTOR_")}
    env.update(_fake_env("hang", FAKE_TRAINER_PIDS=str(pids_file)))
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "smoke", "--json", "--ignore-preflight",
                             "--workdir", str(workdir)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while not pids_file.exists() or not pids_file.read_text():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    trainer = [c.pid for c in psutil.Process(proc.pid).children()]
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    doc = json.loads(out)
    assert doc["run"]["interrupted"] is True and "smoke-interrupted" in {f["id"] for f in doc["findings"]}
    for pid in [*json.loads(pids_file.read_text()), *trainer]:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
