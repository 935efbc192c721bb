"""`doctor check --from-report FILE`: the environment a bug report states, judged by the check rules, with the
lines it was read from; bad input is exit 2 naming the file (reports: tests/fixtures/stated/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from doctor.cli import cli
from tests.conftest import SCHEMAS

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "stated"


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_a_pasted_npu_smi_and_toolkit_info_are_judged_together():
    """vllm-ascend#834 pastes `npu-smi info` (driver 24.1.rc1, 910B3) and CANN 8.1.RC1.alpha001's install.info:
    the driver rule reads both and names the line each came from."""
    r = run("check", "--from-report", str(FIX / "vllm-ascend-834.txt"))
    assert r.exit_code == 1, r.output
    assert "stated in" in r.stdout and "CANN 8.1.RC1.alpha001 (line 16)" in r.stdout
    assert "npu-smi 24.1.rc1 (line 6)" in r.stdout
    assert "[driver-too-old]" in r.stdout


def test_collect_env_output_reaches_the_release_rules():
    """vllm-ascend's collect_env on first-generation 910 chips: no vllm-ascend release supports them."""
    r = run("check", "--from-report", str(FIX / "vllm-ascend-collect-env.txt"))
    assert r.exit_code == 1, r.output
    assert "[vllm-ascend-release-chip-unsupported]" in r.stdout
    assert "8 NPU(s) 910ProB" in r.stdout


def test_json_carries_the_stated_facts_with_their_lines(shared_dir):
    schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    r = run("--json", "check", "--from-report", str(FIX / "vllm-ascend-4621.txt"))
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema)
    stated = {s["fact"]: (s["value"], s["line"]) for s in doc["stated"]}
    assert stated["ascend.toolkit"] == ("8.3.RC2", 16)
    assert doc["stated_conflicts"] == []
    assert any(f["id"] == "driver-below-recommended" for f in doc["findings"])


def test_stdin_and_conflicts_are_said():
    r = run("check", "--from-report", "-", input="CANN: 8.5.0\ntorch==2.5.1\ntorch==2.6.0\n")
    assert "stated twice, left unknown: torch 2.5.1 (line 2) vs 2.6.0 (line 3)" in r.stdout
    assert "CANN 8.5.0 (line 1)" in r.stdout
    assert "stated in stdin: CANN 8.5.0 (line 1)" in r.stdout  # `-` is named as the errors name it, not "stated in -"


def test_a_report_that_states_nothing_is_exit_2_naming_the_file(tmp_path):
    p = tmp_path / "report.md"
    p.write_text("It crashes when I start the trainer. Please help!\n")
    r = run("check", "--from-report", str(p))
    assert r.exit_code == 2
    assert str(p) in r.output and "states no version" in r.output
    r = run("check", "--from-report", str(tmp_path / "missing.txt"))
    assert r.exit_code == 2 and "cannot read the report" in r.output


def test_from_report_refuses_what_describes_a_live_host(tmp_path):
    p = tmp_path / "r.txt"
    p.write_text("CANN: 8.5.0\n")
    for extra, said in ((["--from", str(p)], "--from or --from-report"), (["--deep"], "--from-report"),
                        (["--root", str(tmp_path)], "with --from-report the report is diagnosed as it is")):
        r = run("check", "--from-report", str(p), *extra)
        assert r.exit_code == 2, (extra, r.output)
        assert said in r.output, (extra, r.output)


def test_explain_names_the_environment_a_log_states_and_the_command_that_judges_it(tmp_path):
    log = tmp_path / "my issue.log"
    log.write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
                   + (FIX / "vllm-ascend-4621.txt").read_text())
    r = run("explain", str(log))
    assert "the log also states an environment (1 NPU(s) 910B2C (line 6)" in r.stdout
    assert f"`doctor check --from-report '{log}'`" in r.stdout
    doc = json.loads(run("--json", "explain", str(log)).stdout)
    assert {"fact": "ascend.toolkit", "value": "8.3.RC2", "line": 17} in doc["stated"]
    plain = tmp_path / "plain.log"
    plain.write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
                     "export HCCL_BUFFSIZE=200\n")
    r = run("--json", "explain", str(plain))
    assert "stated" not in json.loads(r.stdout)  # variables alone are not an environment


def test_a_chip_label_picks_its_family_profile_and_states_no_device_count(tmp_path):
    """An A2 chip named on a label line chooses the A2 stack (not A3 'the last by name'), and naming a chip says
    nothing of how many NPUs there are: ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 is not 'out of range'."""
    p = tmp_path / "r.md"
    p.write_text("NPU: 910B2\nCANN: 8.3.RC2\nASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n")
    r = run("check", "--from-report", str(p))
    assert "-a2" in r.stdout.split("profile: ", 1)[1].split()[0]
    assert "visible-devices-out-of-range" not in r.stdout and r.exit_code == 0
    assert "breaks none of the rules that could judge it" in r.stdout  # ok is not a verdict on the rest


def test_findings_on_a_report_speak_of_the_report(tmp_path):
    """The rules say "the snapshot"; on --from-report the facts are what a report states, and titles, details,
    fixes and skip reasons say "the report" (JSON too)."""
    p = tmp_path / "r.md"
    p.write_text("vllm-ascend: 0.7.3rc1\nCANN: 8.1.RC1\n")
    doc = json.loads(run("--json", "check", "--from-report", str(p)).stdout)
    (f,) = [f for f in doc["findings"] if f["id"] == "vllm-ascend-cann-pairing"]
    assert "the report has CANN 8.1.RC1" in f["title"]
    said = json.dumps(doc["findings"]) + json.dumps([c.get("reason") for c in doc["checks"]])
    assert "the snapshot" not in said.lower() and "the report" in said


def test_the_wrong_one_of_from_and_from_report_is_named(tmp_path):
    """A snapshot passed to --from-report (or a pasted report to --from) is exit 2 naming the other flag, not
    'states no version' / 'not valid JSON' alone; a binary file (the `collect --bundle` archive) says it is one."""
    snap = tmp_path / "node0.json"
    snap.write_text(json.dumps({"schema": "doctor.snapshot/1", "packages": {"torch": {"version": "2.5.1"}}}))
    r = run("check", "--from-report", str(snap))
    assert r.exit_code == 2 and str(snap) in r.output and "doctor check --from" in r.output, r.output
    report = tmp_path / "issue.md"
    report.write_text("PyTorch version: 2.5.1\nvLLM Ascend Version: 0.7.3rc1\n")
    r = run("check", "--from", str(report))
    assert r.exit_code == 2 and str(report) in r.output and "--from-report" in r.output, r.output
    bundle = tmp_path / "bug.tar.gz"
    import gzip

    bundle.write_bytes(gzip.compress(b"PyTorch version: 2.5.1\n" * 50))
    r = run("check", "--from-report", str(bundle))
    assert r.exit_code == 2 and "not text" in r.output and "gzip" in r.output, r.output
    r = run("check", "--from", str(bundle))
    assert r.exit_code == 2 and "gzip" in r.output and "doctor-bundle/snapshot.json" in r.output, r.output
    r = run("check", "--from-report", "-", input="")
    assert r.exit_code == 2 and "stdin" in r.output, r.output
    r = run("check", "--from", "-", input="")
    assert r.exit_code == 2 and "stdin: is empty" in r.output, r.output
