"""What a new user met, round 2 (issue 25): verdicts that are not so, fixes that break the stack, inputs and
outputs, and a crash, each through the real CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from doctor.cli import cli
from tests.conftest import ROOT


def run(*args: str, **kw):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, **kw)


def doctor_proc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, **kw):
    """The doctor in a child process (a crash of the interpreter must show as a signal, not kill the tests)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=full_env, **kw)


# -- 15: no input crashes the process ---------------------------------------------------------------------------


def test_lint_survives_a_brace_before_a_four_byte_character(tmp_path):
    """tree-sitter-bash#337: `{` then U+105456 made the scanner read out of bounds (SIGSEGV, exit -11)."""
    for i, body in enumerate([b"{\xf4\x85\x91\x96", b"echo {\xf4\x85\x91\x96}\n",
                              b"python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 x={\xf4\x85\x91\x96\n"]):
        script = tmp_path / f"s{i}.sh"
        script.write_bytes(body)
        r = doctor_proc("lint", str(script), "--json")
        assert r.returncode in (0, 1), (body, r.returncode, r.stderr)
        assert json.loads(r.stdout)["findings"] is not None


def test_astral_characters_do_not_change_what_lint_reads():
    """The placeholder keeps every node's offsets and text: the tree of a script with emoji (which the unguarded
    parser happens to survive) is the same node for node whether the guard maps them or not."""
    from doctor.launch.shell import tree

    text = ("# \U0001F600 run\nMSG='\U0001F680 go'\npython3 -m verl.trainer.main_ppo trainer.project_name=\U00020000x "
            "data.path=\"${HOME}/\U0001F4BE\" $\U0001F600 {a,\U0001F600} ${x:-\U0001F600}\ncat <<EOF\n\U0001F600\nEOF\n")
    raw = subprocess.run([sys.executable, "-c", (
        "import sys, json, tree_sitter as t, tree_sitter_bash as b\n"
        "p = t.Parser(t.Language(b.language())); data = sys.stdin.buffer.read()\n"
        "def walk(n): return [n.type, n.start_byte, n.end_byte, [walk(c) for c in n.children]]\n"
        "print(json.dumps(walk(p.parse(data).root_node)))")], input=text.encode(), capture_output=True, timeout=60)
    assert raw.returncode == 0, raw.stderr

    def walk(n):
        return [n.type, n.start_byte, n.end_byte, [walk(c) for c in n.children]]

    assert tree.parser_bytes(text) != text.encode() and len(tree.parser_bytes(text)) == len(text.encode())
    assert walk(tree.parser().parse(tree.parser_bytes(text)).root_node) == json.loads(raw.stdout)
    root = tree.parse(text)
    assert root.text == text


# -- 1: waivers from a config file are said, and the summary agrees with the exit code -----------------------


def _snap(tmp_path: Path, data: dict, name: str = "s.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def test_a_waivers_file_in_the_cwd_is_named_with_what_it_waived(tmp_path, monkeypatch):
    from tests.stacks import healthy

    d = healthy()
    d["ascend"]["devices"] = []
    d["ascend"]["pci"] = []
    d["ascend"]["device_files"] = []
    s = _snap(tmp_path, d)
    assert run("check", "--from", s).exit_code == 1  # no NPU: an error
    (tmp_path / "pyproject.toml").write_text('[tool.doctor]\nignore = ["devices"]\n')
    monkeypatch.chdir(tmp_path)
    for flags in ((), ("-v",), ("-q",)):
        r = run("check", "--from", s, *flags)
        assert r.exit_code == 0
        assert f"config: {tmp_path / 'pyproject.toml'} applies: ignore devices" in r.output, (flags, r.output)


def test_strict_from_a_config_file_makes_the_summary_say_failed(tmp_path, monkeypatch):
    from tests.stacks import healthy

    d = healthy()
    d["env"]["HCCL_CONNECT_TIMEOUT"] = "60"  # a warning only
    s = _snap(tmp_path, d)
    (tmp_path / "doctor.toml").write_text("strict = true\n")
    monkeypatch.chdir(tmp_path)
    r = run("check", "--from", s)
    last = r.output.strip().splitlines()[-1]
    assert r.exit_code == 1 and last.startswith("check: failed (strict: warnings fail)"), r.output
    assert "strict (warnings fail)" in r.output
    report = json.loads(run("--json", "check", "--from", s).stdout)
    assert report["strict"] is True and report["status"] == "warning"


# -- 2: a check that could not judge is skipped, with its reason, everywhere ------------------------------------


def test_cann_checks_without_a_toolkit_are_skipped_not_passed(tmp_path):
    import xml.etree.ElementTree as ET

    from tests.stacks import healthy

    d = healthy()
    d["ascend"]["toolkit"] = None
    d["ascend"]["toolkits"] = []
    d["ascend"]["kernels"] = None
    d["ascend"]["nnal"] = None
    for name in ("torch-npu", "vllm-ascend"):
        d["packages"].pop(name, None)
    s = _snap(tmp_path, d)
    junit = tmp_path / "c.xml"
    r = run("check", "-v", "--from", s, "--junit", str(junit))
    assert "check cann-kernels pass" not in r.output and "check cann-nnal pass" not in r.output
    assert "- check cann-kernels skipped: no CANN toolkit" in r.output, r.output
    assert "- check cann-nnal skipped: no CANN toolkit" in r.output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    case = next(c for c in suite.iter("testcase") if c.get("name") == "cann-kernels")
    assert case.find("skipped") is not None


def test_smoke_dry_run_does_not_pass_a_preflight_whose_errors_it_ignored(tmp_path):
    import importlib.util
    import io

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    from doctor.console import Console
    from doctor.render import junit_xml, render_text
    from doctor.report import finding
    from doctor.smoke.session import SmokeOptions, run_smoke

    def broken(python: str):
        return [finding("cann-not-installed", "error", "cann", "No Ascend CANN toolkit found", evidence={}, fix="x")]

    console = Console(json_mode=True, out=io.StringIO(), err=io.StringIO())
    rep = run_smoke(SmokeOptions(workdir=tmp_path / "w", dry_run=True), console, preflight=broken)
    assert rep.exit_code() == 0
    pre = next(c for c in rep.checks if c.id == "smoke-preflight")
    assert pre.status.value == "skip" and "--dry-run" in (pre.reason or "")
    xml = junit_xml(rep, "doctor-smoke")
    assert '<testcase classname="doctor.smoke.smoke" name="smoke-preflight"' in xml
    case = xml.split('name="smoke-preflight"')[1].split("</testcase>")[0]
    assert "<skipped" in case
    out = io.StringIO()
    render_text(rep, Console(out=out, err=io.StringIO()))
    assert "[✓] cann" not in out.getvalue() and "(ignored) No Ascend CANN toolkit found" in out.getvalue()


# -- 3: a profile forced for another chip --------------------------------------------------------------------


def test_a_profile_forced_for_another_chip_is_an_error_and_install_refuses_it(tmp_path):
    from tests.stacks import healthy

    s = _snap(tmp_path, healthy("verl-0.7.1-cann8.5.0-a2"))
    r = run("check", "--from", s, "--profile", "verl-0.7.1-cann8.5.0-a3")
    assert r.exit_code == 1 and "[profile-wrong-chip]" in r.output
    assert "verl-0.7.1-cann8.5.0-a2" in r.output  # the right stack is named
    assert "[profile-wrong-chip]" not in run("check", "--from", s, "--profile", "verl-0.7.1-cann8.5.0-a2").output
    r = run("install", "--from", s, "--profile", "verl-0.7.1-cann8.5.0-a3", "--dry-run", "--venv", str(tmp_path / "v"))
    assert r.exit_code == 2 and "--profile" in r.stderr and "A3" in r.stderr and "A2" in r.stderr
    assert "Ascend-hdk-a2" not in r.output


# -- 4: check and install agree on Python, and upstream's own release image is accepted -------------------------


def test_verl_061_on_upstreams_python_311_image_is_accepted_by_check_and_install(tmp_path):
    from tests.stacks import healthy

    d = healthy("verl-0.6.1-cann8.2.rc1-a2")
    d["python"]["version"] = "3.11.9"  # Dockerfile.ascend_8.2.rc1_a2 at v0.6.1: FROM cann:8.2.rc1-910b-ubuntu22.04-py3.11
    s = _snap(tmp_path, d)
    r = run("check", "--from", s)
    assert "python-outside-profile" not in r.output and "verl-0.6.1-cann8.2.rc1-a2" in r.output
    r = run("install", "--from", s, "--dry-run", "--venv", str(tmp_path / "v"))
    assert r.exit_code == 0, r.output


def test_check_and_install_judge_python_by_one_rule():
    """For every profile and Python 3.8-3.14: check's python-outside-profile iff install refuses that Python."""
    from dataclasses import replace

    from doctor.checks.diagnose import diagnose
    from doctor.errors import RefusedError
    from doctor.installers.resolve import check_target, facts_from_snapshot
    from doctor.knowledge.profiles import load_profiles
    from doctor.snapshot.model import snapshot_from_dict
    from tests.stacks import stack_snapshot

    profiles = load_profiles()
    for p in profiles:
        for minor in range(8, 15):
            d = stack_snapshot(p, p.arches[0])
            d["python"]["version"] = f"3.{minor}.2"
            snap = snapshot_from_dict(d, "t")
            warned = any(f.id == "python-outside-profile" for f in
                         diagnose([(None, snap, None)], profiles=profiles, forced_profile=p.name).findings)
            facts = replace(facts_from_snapshot(snap, where="the snapshot"), chip=p.chips[0])
            try:
                check_target(p, facts)
                refused = False
            except RefusedError as e:
                refused = "Python" in e.message
            assert warned == refused, (p.name, minor, warned, refused)


# -- 5: EP larger than the NPUs --------------------------------------------------------------------------------


def test_ep_that_no_default_etp_fits_is_an_error_and_nothing_is_written(tmp_path):
    out = tmp_path / "run.sh"
    r = run("launch", "--ep", "16", "--chip", "A2", "-o", str(out))
    assert r.exit_code == 1 and not out.exists()
    assert "✗ 8 NPUs are not divisible by EP*ETP*PP" in r.output and "[launch-expert-world-indivisible]" in r.output
    r = run("launch", "--ep", "16", "--tp", "2", "--chip", "A2", "-o", str(out))  # ETP=TP=2 or 1: neither fits
    assert r.exit_code == 1 and not out.exists() and "(and with ETP=1)" in r.output
    r = run("launch", "--ep", "4", "--tp", "4", "--chip", "A2", "-o", str(out))  # ETP=TP breaks, ETP=1 fits: pinned
    assert "not divisible" not in r.output and "[launch-etp-pinned]" in r.output and out.exists()
    assert "expert_tensor_parallel_size=1" in out.read_text()


# -- 6: a package's fix line is the command the install plan runs for it ------------------------------------


def _off_profile_fixes(tmp_path: Path, profile: str, arch: str) -> dict[str, str]:
    from tests.stacks import healthy

    d = healthy(profile, arch=arch)
    for name, pkg in d["packages"].items():
        if name in ("torch", "torch-npu", "torchvision", "vllm", "vllm-ascend", "transformers", "triton-ascend", "verl"):
            pkg["version"] = "0.0.1"
    report = json.loads(run("--json", "check", "--from", _snap(tmp_path, d, f"{profile}-{arch}.json"),
                            "--profile", profile).stdout)
    return {f["evidence"]["package"]: f["fix"]["text"] for f in report["findings"] if f["id"] == "package-off-profile"}


def test_off_profile_fix_lines_never_install_another_build(tmp_path):
    fixes = _off_profile_fixes(tmp_path, "verl-0.9.1-cann9.1.0-a2", "x86_64")
    # vLLM and vllm-ascend are built from source (VLLM_TARGET_DEVICE=empty): PyPI's vllm wheel is a CUDA build
    assert fixes["vllm"] == fixes["vllm-ascend"]
    assert fixes["vllm"].startswith("doctor install --profile verl-0.9.1-cann9.1.0-a2 --")  # with its target
    # on x86 the torch stack is the +cpu build from the PyTorch CPU index, in one resolver call with torch-npu
    assert "torch==2.10.0+cpu" in fixes["torch"] and "--extra-index-url https://download.pytorch.org/whl/cpu" in fixes["torch"]
    assert "torch-npu==2.10.0.post4" in fixes["torch"]
    # verl with its dependencies, as upstream's script installs it (never --no-deps: its requirements would be missing)
    assert "pip install verl==0.9.1 " in fixes["verl"] and "--no-deps" not in fixes["verl"]
    # the line of the plan's last step for it (pip runs by the snapshot's interpreter: `<python> -m pip`)
    triton = re.sub(r"\S+ -m pip ", "pip ", fixes["triton-ascend"])
    assert triton.startswith("pip uninstall -y triton triton-ascend && pip install triton-ascend==3.2.2 --no-deps")
    arm = _off_profile_fixes(tmp_path, "verl-0.9.1-cann9.1.0-a2", "aarch64")
    assert "+cpu" not in arm["torch"] and "download.pytorch.org" not in arm["torch"]


def test_every_fix_line_is_a_step_of_the_plan(tmp_path):
    """For every profile and arch: each off-profile fix is `doctor install --profile P` or exactly the requirements
    of one INSTALL step of the real plan for that machine."""
    import shlex

    from doctor.installers.resolve import facts_from_snapshot, resolve
    from doctor.knowledge.profiles import load_profiles
    from doctor.snapshot.model import snapshot_from_dict
    from tests.stacks import healthy

    for p in load_profiles():
        if p.is_snapshot:
            continue
        for arch in p.arches:
            fixes = _off_profile_fixes(tmp_path, p.name, arch)
            assert fixes, (p.name, arch)
            plan = resolve(p, facts_from_snapshot(snapshot_from_dict(healthy(p.name, arch=arch), "t")))
            steps = {s.requirements for s in plan.steps if s.requirements}
            for name, fix in fixes.items():
                if fix.startswith(f"doctor install --profile {p.name} --"):
                    continue
                words = shlex.split(fix.split("&&")[-1])
                after = words[words.index("install") + 1:]
                reqs = tuple(after[:next((i for i, w in enumerate(after) if w.startswith("-")), len(after))])
                assert reqs in steps, (p.name, arch, name, fix)


# -- 8: install never targets a file or the doctor's own environment ----------------------------------------------


def test_install_refuses_a_file_as_venv_and_the_doctors_own_environment(tmp_path):
    r = run("install", "--dry-run", "--venv", "/etc/passwd")
    assert r.exit_code == 2 and "--venv" in r.stderr and "not a directory" in r.stderr
    r = run("install", "--dry-run", "--venv", sys.prefix)
    assert r.exit_code == 2 and "--venv" in r.stderr and "own environment" in r.stderr
    r = run("install", "--dry-run", "--python", sys.executable)
    assert r.exit_code == 2 and "--python" in r.stderr and "own interpreter" in r.stderr
    r = run("--json", "install", "--dry-run", "--venv", sys.prefix)
    assert r.exit_code == 2 and json.loads(r.stdout)["status"] == "error"


# -- 9: a missing [smoke] extra is named, cache or no cache -----------------------------------------------------


def test_smoke_with_a_cached_workload_and_no_pyarrow_names_the_extra(tmp_path):
    """Build the workload once, then run the dry run where pyarrow cannot be imported (a sitecustomize that blocks
    it, as in an environment without the [smoke] extra)."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    work = tmp_path / "w"
    first = doctor_proc("smoke", "--dry-run", "--json", "--workdir", str(work))
    assert first.returncode in (0, 1), first.stderr
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pyarrow', 'tokenizers', 'safetensors'):\n"
        "            raise ModuleNotFoundError(f\"No module named '{name}'\", name=name)\n"
        "sys.meta_path.insert(0, _Block())\n")
    r = doctor_proc("smoke", "--dry-run", "--workdir", str(work),
                    env={"PYTHONPATH": f"{block}{os.pathsep}{ROOT}"})
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "verl-ascend-doctor[smoke]" in r.stderr and "Delete the work directory" not in r.stdout + r.stderr


# -- 10: an empty path argument (an unset "$LOG") is a usage error ------------------------------------------------


def test_an_empty_path_argument_is_exit_2_not_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.log").write_text("RuntimeError: ACL stream synchronize failed, error code:507035\n")
    for argv in (["explain", ""], ["explain", "x.log", ""], ["lint", ""], ["check", "--from", ""],
                 ["collect", "-o", ""], ["launch", "--spec", ""], ["diff", "", ""]):
        r = run(*argv)
        assert r.exit_code == 2 and "empty" in r.stderr, (argv, r.output)
        assert "big.log" not in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.log"]
    r = run("launch", "--nnal-set-env", "", "-o", str(tmp_path / "run.sh"))  # '' documented as "skip NNAL"
    assert r.exit_code == 0, r.output


# -- 11: redaction of *PASSWD* -------------------------------------------------------------------------------------


def test_passwd_variables_are_redacted_in_the_snapshot_and_the_bundle(tmp_path):
    import tarfile

    snap, bundle = tmp_path / "s.json", tmp_path / "b.tgz"
    r = doctor_proc("collect", "-o", str(snap), "--bundle", str(bundle),
                    env={"HCCL_PASSWD": "hunter2-hccl", "ASCEND_PASSWD": "hunter2-ascend"})
    assert r.returncode == 0, r.stderr
    text = snap.read_text()
    assert "hunter2" not in text and json.loads(text)["env"]["HCCL_PASSWD"] == "<redacted>"
    with tarfile.open(bundle) as t:
        for m in t.getmembers():
            f = t.extractfile(m)
            assert f is None or b"hunter2" not in f.read(), m.name


def test_every_secret_word_is_documented():
    from doctor.snapshot.redact import NOT_SECRET, SECRET_PARTS, SECRET_WORDS

    for doc in (ROOT / "README.md", ROOT / "docs" / "schemas" / "snapshot.md"):
        text = " ".join(doc.read_text().split())
        for word in (*SECRET_WORDS, *SECRET_PARTS, *NOT_SECRET):
            assert f"{word}," in text or f"{word} " in text, (doc.name, word)


# -- 12: no literal `~` in the override list or the composed YAML --------------------------------------------------


def test_overrides_and_yaml_formats_resolve_home_instead_of_a_literal_tilde(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    from omegaconf import OmegaConf

    home = os.path.expanduser("~")
    ov = tmp_path / "o.txt"
    r = run("launch", "--format", "overrides", "-o", str(ov))
    assert r.exit_code == 0, r.output
    lines = [x for x in ov.read_text().splitlines() if x.startswith("data.train_files=")]
    assert lines and "~" not in lines[0]
    from hydra.core.override_parser.overrides_parser import OverridesParser

    o = OverridesParser.create().parse_overrides(lines)[0]
    cfg = OmegaConf.create({"data": {"train_files": o.value()}})
    assert OmegaConf.to_container(cfg, resolve=True)["data"]["train_files"] == f"{home}/data/gsm8k/train.parquet"
    y = tmp_path / "c.yaml"
    r = run("launch", "--format", "yaml", "-o", str(y))
    assert r.exit_code == 0, r.output
    data = OmegaConf.to_container(OmegaConf.load(y).data, resolve=True)
    assert data["train_files"] == f"{home}/data/gsm8k/train.parquet"
    assert data["val_files"] == f"{home}/data/gsm8k/test.parquet"


# -- 13: smoke runs exactly the config it composed ---------------------------------------------------------------


def test_smoke_runs_the_config_it_composed_and_launch_writes(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    r = doctor_proc("smoke", "--dry-run", "--json", "--workdir", str(tmp_path / "w"))
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    composed = next(f for f in doc["findings"] if f["id"] == "launch-schema-composed")
    name = composed["evidence"]["config_name"]
    assert f"--config-name={name}" in doc["argv"] and "--config-name=ppo_megatron_trainer" not in doc["argv"]
    script = run("launch", "--verl-version", doc["target"]["verl"]).stdout
    assert f"--config-name={name} " in script
    if doc["target"]["verl"].startswith("0.9"):
        assert name == "ppo_trainer" and "model_engine=megatron" in doc["argv"]


# -- 14: smaller ones ------------------------------------------------------------------------------------------


def test_collect_that_cannot_write_its_bundle_leaves_no_snapshot(tmp_path):
    out = tmp_path / "ok.json"
    r = doctor_proc("collect", "--bundle", "/nonexistent/x.tgz", "-o", str(out))
    assert r.returncode == 2 and "/nonexistent/x.tgz" in r.stderr and not out.exists()


def test_a_full_stdout_is_a_clear_exit_2_not_a_doctor_bug(tmp_path):
    import pytest

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    snap = _snap(tmp_path, __import__("tests.stacks", fromlist=["healthy"]).healthy())
    for argv in (["check", "--from", snap], ["--json", "check", "--from", snap], ["launch"]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "doctor", *argv], stdout=full, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        assert "No space left on device" in r.stderr and "bug in the doctor" not in r.stderr
        assert "Exception ignored" not in r.stderr


def test_a_full_stderr_is_exit_2_too_and_json_still_gets_its_report(tmp_path):
    """`doctor check > log 2>&1` on a full disk: both streams fail. That was exit 1 (the error line itself could not
    be written, and the OSError escaped as an uncaught traceback nobody saw); a full stderr under `--json` with
    stdout fine was blamed on stdout, which was then pointed at /dev/null: exit 1 and an empty stdout."""
    import pytest

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    snap = _snap(tmp_path, __import__("tests.stacks", fromlist=["healthy"]).healthy())
    log = tmp_path / "fine.log"
    log.write_text("all fine here\n")
    for argv in (["check", "--from", snap], ["--json", "check", "--from", snap], ["explain", str(log)]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "doctor", *argv], stdout=full, stderr=full,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert r.returncode == 2, argv
    for argv in (["--json", "check", "--root", str(tmp_path)], ["--json", "check", "--from", snap],
                 ["--json", "explain", str(log)]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "doctor", *argv], stdout=subprocess.PIPE, stderr=full,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        assert r.returncode == 2, argv
        doc = json.loads(r.stdout)  # one document: the report, or the failure's when nothing was judged yet
        if "--root" in argv:  # its first stderr line ("probing this host…") is written before any judgement
            assert [f["id"] for f in doc["findings"]] == ["doctor-failed"], doc["findings"]
            assert "stderr: cannot write: No space left on device" in doc["findings"][0]["title"]


def test_dash_output_is_stdout_not_a_file_named_dash(tmp_path):
    r = doctor_proc("launch", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("#!/usr/bin/env bash")
    r = doctor_proc("collect", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["schema"].startswith("doctor.snapshot")
    assert not (tmp_path / "-").exists()


def test_one_hccl_connect_timeout_in_check_launch_and_explain(tmp_path):
    import re

    from doctor.knowledge.hccl_env import CONNECT_TIMEOUT
    from tests.stacks import healthy

    d = healthy()
    d["env"]["HCCL_CONNECT_TIMEOUT"] = "60"
    report = json.loads(run("--json", "check", "--from", _snap(tmp_path, d)).stdout)
    fix = next(f["fix"]["text"] for f in report["findings"] if f["id"] == "hccl-connect-timeout-invalid")
    script = run("launch").stdout
    log = tmp_path / "run.log"
    log.write_text("[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] "
                   "[2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]\n")
    explained = json.loads(run("--json", "explain", str(log)).stdout)
    said = {
        "check": re.findall(r"HCCL_CONNECT_TIMEOUT=(\d+)", fix),
        "launch": re.findall(r"HCCL_CONNECT_TIMEOUT:-(\d+)|HCCL_CONNECT_TIMEOUT=(\d+)", script),
        "explain": re.findall(r"HCCL_CONNECT_TIMEOUT=(\d+)", json.dumps(explained["findings"])),
    }
    values = {k: {x for m in v for x in (m if isinstance(m, tuple) else (m,)) if x} for k, v in said.items()}
    assert values == {"check": {CONNECT_TIMEOUT}, "launch": {CONNECT_TIMEOUT}, "explain": {CONNECT_TIMEOUT}}, values
    # and nowhere in the shipped rules or signatures is another value advised
    texts = [p.read_text() for p in (ROOT / "doctor").rglob("*.py")] + [(ROOT / "profiles" / "signatures.toml").read_text()]
    advised = {v for t in texts for v in re.findall(r"HCCL_CONNECT_TIMEOUT=(\d+)", t)}
    assert advised <= {CONNECT_TIMEOUT}, advised


def test_launch_help_does_not_state_a_fixed_default_the_model_changes(tmp_path):
    import re

    from tests.launch.helpers import QWEN3_MOE, write_model

    text = " ".join(run("launch", "--help").output.split())
    model = write_model(tmp_path, "moe", QWEN3_MOE)
    r = run("--json", "launch", "--model", model, "--tp", "4", "--ep", "2", "--chip", "A3", "-o", str(tmp_path / "r.sh"))
    note = next(f for f in json.loads(r.stdout)["findings"] if f["id"] == "launch-defaults-from-example")["title"]
    for flag, key in (("--rollout-tp", "rollout_tp"), ("--gpu-memory-utilization", "gpu_memory_utilization")):
        used = re.search(rf"{key}=([0-9.]+)", note)
        assert used, note
        shown = re.search(rf"{flag} \S+ (.*?)(?= --|$)", text)
        assert shown and used.group(1) in shown.group(1), (flag, used.group(1), shown.group(1) if shown else None)


def test_a_mistyped_override_key_gets_no_plus_hint_anywhere(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    r = run("--json", "launch", "--override", "actor_rollout_ref.actor.optim.lrr=1e-6", "-o", str(tmp_path / "r.sh"))
    f = next(x for x in json.loads(r.stdout)["findings"] if x.get("key") == "actor_rollout_ref.actor.optim.lrr")
    assert f["id"] == "launch-key-not-in-config" and "actor_rollout_ref.actor.optim.lr=" in f["fix"]["text"]
    assert "+actor_rollout_ref" not in (f["detail"] or "") and "To append" not in (f["detail"] or "")


def test_explain_ends_with_its_summary_and_dates_only_lines_that_hold_a_time(tmp_path):
    log = tmp_path / "t.log"
    log.write_text("2025-07-23 03:49:50 INFO starting\n"
                   "RuntimeError: ACL stream synchronize failed, error code:507035\n")
    r = run("explain", str(log))
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("explain: errors"), lines
    ev = next(x for x in lines if "line 2" in x)
    assert "[2025-07-23" not in ev and "no timestamp; the last one before it: 2025-07-23 03:49:50" in ev
    report = json.loads(run("--json", "explain", str(log)).stdout)
    f = next(x for x in report["findings"] if x["evidence"].get("line") == 2)
    assert f["evidence"]["time_from"] == "earlier line"


def test_the_950_stack_never_names_a_cann_release_upstream_has_not_named(tmp_path):
    from tests.stacks import healthy

    d = healthy("verl-0.9.0-cannunknown-950")
    d["ascend"]["toolkit"]["version"] = "8.5.0"
    r = run("--json", "install", "--from", _snap(tmp_path, d), "--profile", "verl-0.9.0-cannunknown-950", "--dry-run",
            "--venv", str(tmp_path / "v"))
    report = json.loads(r.stdout)
    text = json.dumps(report["findings"]) + json.dumps(report.get("plan", {}).get("system", []))
    assert "Ascend-cann-toolkit 9.1.0" not in text and "-ops 9.1.0" not in text and "Ascend-cann-nnal 9.1.0" not in text
    from doctor.knowledge.profiles import find_profile, load_profiles

    p = find_profile(load_profiles(), "verl-0.9.0-cannunknown-950")
    assert f"[{p.cann_min}, {p.cann_max})" in text and "inferred" in text


def test_ignore_preflight_does_not_announce_a_preflight_gate(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl not installed")
    r = doctor_proc("smoke", "--dry-run", "--ignore-preflight", "--workdir", str(tmp_path / "w"))
    assert "preflight: doctor check" not in r.stderr and "--ignore-preflight" in r.stderr, r.stderr


def test_every_group_header_of_check_is_a_name_only_and_ignore_accept():
    import re

    snap = str(ROOT / "tests" / "golden" / "check-sick.snapshot.json")
    out = run("check", "--from", snap).output
    heads = re.findall(r"^\[.\] (\S+)$", out, re.M)
    assert "npu" in heads or len(heads) > 3, out
    from doctor.checks.runner import headers, load_all

    pure = headers(load_all())  # a header that is also an area (vllm, system, ...) keeps meaning the area
    assert "npu" in pure and "python" in pure
    for h in heads:
        r = run("check", "--from", snap, "--only", h)
        assert r.exit_code in (0, 1), (h, r.output)
        if h in pure:
            assert re.findall(r"^\[.\] (\S+)$", r.output, re.M) == [h], (h, r.output)
            r = run("check", "--from", snap, "--ignore", h)
            assert r.exit_code in (0, 1) and f"] {h}\n" not in r.output, (h, r.output)


def test_a_bad_environment_twin_is_named_as_the_variable(tmp_path):
    for var in ("DOCTOR_VERBOSE", "DOCTOR_QUIET"):
        r = doctor_proc("check", "--from", "/nonexistent.json", env={var: "abc"})
        assert r.returncode == 2 and f"{var}='abc'" in r.stderr, (var, r.stderr)


def test_every_id_the_readme_lists_under_check_is_one_check_only_accepts():
    import re

    text = (ROOT / "README.md").read_text()
    section = text.split("### `doctor check`", 1)[1].split("\n### ", 1)[0]
    ids = [i for row in section.splitlines() if row.startswith("| `")
           for i in re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", row.split("|")[1])]
    assert len(ids) > 50
    snap = str(ROOT / "tests" / "golden" / "check-sick.snapshot.json")
    refused = [i for i in ids if "matches no area" in run("check", "--from", snap, "--only", i).stderr]
    assert not refused, refused


# -- 7: --set refuses a pin check would call an error, allows and says a warning-level one ----------------------------


def test_set_refuses_a_pin_that_check_would_call_an_error(tmp_path):
    from tests.stacks import healthy

    s = _snap(tmp_path, healthy("verl-0.9.1-cann9.1.0-a2"))
    r = run("install", "--from", s, "--profile", "verl-0.9.1-cann9.1.0-a2", "--set", "transformers=4.57.1",
            "--dry-run", "--venv", str(tmp_path / "v"))
    assert r.exit_code == 2 and "--set" in r.stderr and "transformers" in r.stderr, r.output
    assert "verl 0.9.1" in r.stderr and ">=5.5.3" in r.stderr
    # the same stack as check sees it: the pin is an error there
    d = healthy("verl-0.9.1-cann9.1.0-a2")
    d["packages"]["transformers"]["version"] = "4.57.1"
    checked = json.loads(run("--json", "check", "--from", _snap(tmp_path, d, "c.json")).stdout)
    assert any(f["id"] == "requirement-version-unmet" and f["severity"] == "error"
               and f["evidence"]["requires"] == "transformers" for f in checked["findings"])
    r = run("install", "--from", s, "--profile", "verl-0.9.1-cann9.1.0-a2", "--set", "transformers=5.9.0",
            "--dry-run", "--venv", str(tmp_path / "v"))
    assert r.exit_code != 2 and "install-set-breaks-requirement" not in r.output, r.output


def test_set_allows_and_says_a_warning_level_pin(tmp_path):
    from tests.stacks import healthy

    # verl 0.7.0 (no NPU gate on transformers) and its vllm-ascend v0.11.0rc1 checkout put no bound on transformers;
    # its vLLM v0.11.0, built with VLLM_TARGET_DEVICE=empty, declares transformers >= 4.55.2 (requirements/common.txt)
    d = healthy("verl-0.7.0-cann8.3.rc1-a2")
    d["packages"]["trl"] = {"version": "0.23.0"}  # declares transformers>=4.56.1; not on verl's import path
    r = run("--json", "install", "--from", _snap(tmp_path, d), "--set", "transformers=4.56.0", "--dry-run",
            "--venv", str(tmp_path / "v"))
    report = json.loads(r.stdout)
    said = [f for f in report["findings"] if f["id"] == "install-set-breaks-requirement"]
    assert r.exit_code in (0, 1) and said and said[0]["severity"] == "warning", report["findings"]
    assert said[0]["title"].startswith("--set transformers=4.56.0: trl 0.23.0 requires transformers>=4.56.1")
    # below vLLM's own floor the pin is refused: that build is on verl's import path (until this stack's vLLM was
    # judged by its empty-target requirements, transformers=4.49.0 passed here as a trl warning)
    r = run("--json", "install", "--from", _snap(tmp_path, d), "--set", "transformers=4.49.0", "--dry-run",
            "--venv", str(tmp_path / "v"))
    refused = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "request-refused"]
    assert r.exit_code == 2 and len(refused) == 1, refused
    assert "breaks what vllm 0.11.0 declares (transformers >= 4.55.2)" in refused[0]["title"]
    assert "https://github.com/vllm-project/vllm/blob/v0.11.0/requirements/common.txt" in refused[0]["title"]


def test_a_release_the_tables_do_not_hold_is_skipped_not_passed(tmp_path):
    from tests.stacks import healthy

    d = healthy()
    d["packages"]["torch-npu"]["version"] = "2.0.1.post77"  # in no compatibility table
    d["packages"]["vllm-ascend"]["version"] = "0.0.3"  # in no release matrix
    report = json.loads(run("--json", "check", "--from", _snap(tmp_path, d)).stdout)
    st = {c["id"]: c for c in report["checks"]}
    assert st["torch-npu-cann"]["status"] == "skip" and "compatibility table" in st["torch-npu-cann"]["reason"]
    assert st["vllm-ascend-matrix"]["status"] == "skip" and "release matrix" in st["vllm-ascend-matrix"]["reason"]


def test_explain_of_several_logs_says_which_events_took_their_time_from_an_earlier_line(tmp_path):
    # the root-cause timeline of a directory of logs marks the times its lines do not hold, as one log's JSON does
    (tmp_path / "a.log").write_text("2025-07-23 03:49:50 INFO starting\n"
                                    "RuntimeError: ACL stream synchronize failed, error code:507035\n")
    (tmp_path / "b.log").write_text("[ERROR] 2025-07-23-03:50:01 (PID:77, Device:1, RankID:1) ERR02200 DIST call "
                                    "hccl api failed.\n")
    report = json.loads(run("--json", "explain", str(tmp_path)).stdout)
    dated = {e["log"].rsplit("/", 1)[-1]: e for e in report["timeline"] if e["time"]}
    assert dated["a.log"]["time_from"] == "earlier line" and "time_from" not in dated["b.log"]
    root = next(f for f in report["findings"] if f["id"] == "root-cause-node")
    assert root["evidence"]["log"].endswith("a.log") and root["evidence"]["time_from"] == "earlier line"


def test_set_below_what_the_stacks_own_vllm_ascend_build_declares_is_refused(tmp_path):
    """verl 0.7.1's stack builds vllm-ascend from releases/v0.13.0 at 06a285f, whose requirements.txt says
    transformers>=4.57.4, < 5: a pin below it is refused, naming that file (PyPI's wheel of another commit is not it)."""
    from tests.stacks import healthy

    d = healthy("verl-0.7.1-cann8.5.0-a2")
    # 4.56.0: inside what the stack's vLLM v0.13.0 declares for its empty build (transformers >= 4.56.0, < 5)
    r = run("--json", "install", "--from", _snap(tmp_path, d), "--set", "transformers=4.56.0", "--dry-run",
            "--venv", str(tmp_path / "v"))
    refused = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "request-refused"]
    assert r.exit_code == 2 and len(refused) == 1, refused
    text = refused[0]["title"] + refused[0]["detail"]
    assert "vllm-ascend" in text and "transformers>=4.57.4" in text.replace(", ", ",")
    assert "vllm-ascend/blob/06a285f3716728cfdc84146ca023180ebb35784a/requirements.txt" in text
