"""`doctor check` as a user runs it: text, JSON (validated against the report schema), JUnit, exit codes,
waivers, cluster input, a crashing check, and the live run on this NPU-less machine."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from doctor.checks.runner import REGISTRY, Check
from doctor.cli import cli
from tests.conftest import SCHEMAS
from tests.stacks import healthy

HAS_NPU = bool(glob.glob("/dev/davinci[0-9]*"))


@pytest.fixture(scope="module")
def schema(shared_dir):
    return json.loads((SCHEMAS / "report.schema.json").read_text())


def write(tmp_path: Path, name: str, data: dict) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def broken(tmp_path: Path) -> str:
    d = healthy()
    d["packages"]["torch"]["version"] = "2.12.0"  # ABI break with torch-npu 2.8.0
    d["host"]["shm_gb"] = 0.06  # a warning too
    return write(tmp_path, "broken.json", d)


def test_healthy_stack_exits_0_and_names_the_profile(tmp_path):
    r = run("check", "--from", write(tmp_path, "ok.json", healthy()))
    assert r.exit_code == 0, r.output
    assert "profile: verl-0.7.1-cann8.5.0-a2" in r.stdout and "CANN 8.5.0" in r.stdout


def test_text_groups_by_component_with_fix_lines(tmp_path):
    r = run("check", "--from", broken(tmp_path))
    assert r.exit_code == 1
    out = r.stdout
    assert "[✗] torch-npu" in out and "[torch-npu-torch-mismatch]" in out and "fix: Install torch==2.8.0" in out
    assert "[!] system" in out and "shm-too-small" in out
    assert "check: errors" in out


def test_verbose_adds_facts_sources_and_passing_checks(tmp_path):
    r = run("check", "-v", "--from", broken(tmp_path))
    assert "facts: arch=aarch64" in r.stdout and "cann=8.5.0" in r.stdout
    assert "source: " in r.stdout and "check cann-toolkit pass" in r.stdout


def test_json_is_one_valid_report(tmp_path, schema):
    r = run("--json", "check", "--from", broken(tmp_path))
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema)
    assert data["status"] == "error" and data["profile"]["name"] == "verl-0.7.1-cann8.5.0-a2"
    ids = {f["id"] for f in data["findings"]}
    assert {"torch-npu-torch-mismatch", "shm-too-small"} <= ids
    for f in data["findings"]:
        if f["severity"] != "info":
            assert f["evidence"] and f["fix"]["text"] and f["source"]
    assert {c["status"] for c in data["checks"]} >= {"pass", "fail", "warn"}


def test_junit_one_testcase_per_check(tmp_path):
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    r = run("check", "--from", broken(tmp_path), "--junit", str(junit))
    assert r.exit_code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) > 20
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    # torch 2.12 breaks both torch-npu's and vllm-ascend's torch pin (the matrix), and torch-npu 2.8.0's own
    # torch==2.8.0 (its cp311 aarch64 wheel's METADATA on PyPI, which this target would install: declared-requirements)
    assert sorted(failed) == ["declared-requirements", "torch-torch-npu-base", "vllm-ascend-matrix"]
    assert suite.get("failures") == "3"


def _one_error_case(xml: str | Path) -> ET.Element:
    """The JUnit document of a run that could not do its job: one suite, one testcase, its <error>; the counts and
    attributes Jenkins' xUnit junit-10.xsd requires (testsuite name/tests/failures/errors, testcase name)."""
    root = ET.parse(xml).getroot() if isinstance(xml, Path) else ET.fromstring(xml)
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("1", "1", "0")
    assert suite.get("name") and case.get("name") and case.find("failure") is None
    error = case.find("error")
    assert error is not None and error.get("message") and error.get("type") == case.get("name")
    return case


@pytest.mark.parametrize("argv, finding_id, said", [
    (["check", "--python", "/nonexistent"], "usage-error", "Invalid value for '--python': /nonexistent: no such file"),
    (["check", "--bogus"], "usage-error", "No such option '--bogus'"),
    (["smoke", "--dry-run", "--tp", "zero"], "usage-error", "Invalid value for '--tp'"),
    (["check", "--only", "netwrok"], "usage-error", "netwrok"),
    (["check", "--from", "{missing}"], "input-invalid", "cannot read"),
])
def test_junit_names_the_error_of_a_run_that_could_not_do_its_job(tmp_path, argv, finding_id, said):
    """`doctor check --python /nonexistent --junit FILE` exited 2 and wrote no FILE (click refused the command line
    before the command ran; an unreadable --from failed inside it): a CI that publishes FILE showed nothing, or the
    previous run's file. Whenever FILE is known, it holds one testcase with an <error> naming the failure, as pytest's
    --junitxml records its own internal error; the exit code stays 2."""
    junit = tmp_path / "check.xml"
    argv = [a.format(missing=tmp_path / "nope.json") for a in argv]
    r = run(*argv, "--junit", str(junit))
    assert r.exit_code == 2, r.output
    case = _one_error_case(junit)
    assert case.get("name") == finding_id and case.get("classname") == f"doctor.{argv[0]}"
    assert said in case.find("error").get("message") and "fix:" in case.find("error").text
    # --json as well: stdout keeps its one document, FILE still written
    junit.unlink()
    r = run("--json", *argv, "--junit", str(junit))
    assert r.exit_code == 2 and json.loads(r.stdout)["findings"][0]["id"] == finding_id
    assert _one_error_case(junit).get("name") == finding_id
    # `--junit -`: stdout holds the XML (click's usage text is on stderr)
    r = run(*argv, "--junit", "-")
    assert r.exit_code == 2 and _one_error_case(r.stdout).get("name") == finding_id


def test_junit_is_not_guessed_where_the_command_line_does_not_give_it(tmp_path):
    """`--profile --junit FILE` gives --profile the value `--junit` (FILE is then an extra argument): no FILE was
    asked for, none is written; nor for an option of `doctor` itself, before any command is known. Read by check's own
    option parser, `--profile NAME --junit FILE` does give it."""
    f = tmp_path / "f.xml"
    r = run("check", "--profile", "--junit", str(f))
    assert r.exit_code == 2 and not f.exists()
    r = run("--knowledge", str(tmp_path / "none"), "check", "--junit", str(f))
    assert r.exit_code == 2 and not f.exists()
    r = run("check", "--profile", "--strict", "--junit", str(f), "extra")
    assert r.exit_code == 2 and "unexpected extra argument" in _one_error_case(f).find("error").get("message")


def test_a_junit_report_already_written_is_kept_when_the_run_fails_after_it(tmp_path):
    from doctor.cli.options import write_failure_junit
    from doctor.console import Console
    from doctor.render import write_junit
    from doctor.report import Report

    junit = tmp_path / "check.xml"
    console = Console()
    console.junit = str(junit)
    write_junit(Report(command="check"), str(junit), console)
    full = junit.read_text()
    write_failure_junit(console, "check", "internal-error", "cannot write: No space left on device", "")
    assert junit.read_text() == full


def test_strict_turns_warnings_into_exit_1(tmp_path):
    d = healthy()
    d["host"]["shm_gb"] = 0.06
    f = write(tmp_path, "warn.json", d)
    assert run("check", "--from", f).exit_code == 0
    assert run("check", "--from", f, "--strict").exit_code == 1


def test_strict_junit_fails_the_checks_that_give_exit_1(tmp_path):
    """README's CI line `check ... --strict --junit check.xml`: a warning makes the run exit 1, so the JUnit file the
    CI publishes must show that check failed (it said failures="0" and the job's red had no failing test)."""
    d = healthy()
    d["host"]["shm_gb"] = 0.06
    f = write(tmp_path, "warn.json", d)
    for strict in ((), ("--strict",)):
        junit = tmp_path / f"junit{len(strict)}.xml"
        r = run("check", "--from", f, "--junit", str(junit), *strict)
        suite = ET.parse(junit).getroot().find("testsuite")
        failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
        assert r.exit_code == len(strict) and suite.get("failures") == str(len(failed)) == str(len(strict))
    assert "[warning] shm-too-small" in failed[0].find("failure").text
    # a waivers file's `strict = true` counts the same
    cfg = tmp_path / "waivers.toml"
    cfg.write_text("strict = true\n")
    r = run("check", "--from", f, "--config", str(cfg), "--junit", "-")
    assert r.exit_code == 1 and ET.fromstring(r.stdout).find("testsuite").get("failures") == "1"


def test_only_and_ignore(tmp_path):
    f = broken(tmp_path)
    r = run("--json", "check", "--from", f, "--only", "network")
    data = json.loads(r.stdout)
    assert {c["area"] for c in data["checks"]} == {"network"} and r.exit_code == 0
    r = run("--json", "check", "--from", f, "--ignore", "torch-npu-torch-mismatch", "--ignore", "shm-too-small",
            "--ignore", "vllm-ascend-torch-mismatch", "--ignore", "requirement-version-unmet")
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and not {"torch-npu-torch-mismatch", "shm-too-small"} & {x["id"] for x in data["findings"]}
    r = run("check", "--from", f, "--only", "netwrok")
    assert r.exit_code == 2 and "netwrok" in r.stderr and "network" in r.stderr


def test_a_check_whose_findings_were_all_waived_is_skipped_not_passed(tmp_path):
    """`--ignore ID` hides a finding; the check that raised it did not pass (JUnit said cann-toolkit passed on a host
    without CANN): it is skipped, its reason naming what was waived and by which option."""
    f = broken(tmp_path)
    data = json.loads(run("--json", "check", "--from", f).stdout)
    check = next(x["check"] for x in data["findings"] if x["id"] == "torch-npu-torch-mismatch")
    assert next(c for c in data["checks"] if c["id"] == check)["status"] == "fail"
    r = run("--json", "check", "--from", f, "--ignore", "torch-npu-torch-mismatch")
    got = next(c for c in json.loads(r.stdout)["checks"] if c["id"] == check)
    assert got["status"] == "skip" and got["reason"] == "waived by --ignore: torch-npu-torch-mismatch"
    r = run("check", "--from", f, "--only", "npu", "--junit", "-")  # a header: every check runs, other findings drop
    case = next(c for c in ET.fromstring(r.stdout).iter("testcase") if c.get("name") == check)
    skipped = case.find("skipped")
    assert skipped is not None and case.find("failure") is None
    assert skipped.get("message") == "not asked for by --only npu: torch-npu-torch-mismatch"


def test_waivers_from_pyproject_and_config_file(tmp_path, monkeypatch):
    f = broken(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.doctor]\nignore = ["torch-npu-torch-mismatch", "vllm-ascend-matrix", '
                                        '"declared-requirements"]\n')
    monkeypatch.chdir(proj)
    assert run("check", "--from", f).exit_code == 0
    cfg = tmp_path / "waivers.toml"
    cfg.write_text('ignore = ["shm-too-small"]\nstrict = true\n')
    monkeypatch.chdir(tmp_path)
    r = run("check", "--from", f, "--config", str(cfg))
    assert r.exit_code == 1 and "[shm-too-small]" not in r.stdout and "applies: ignore shm-too-small" in r.stdout
    d = healthy()
    d["host"]["shm_gb"] = 0.06
    warn_only = write(tmp_path, "warn.json", d)
    cfg.write_text("strict = true\n")
    assert run("check", "--from", warn_only).exit_code == 0
    assert run("check", "--from", warn_only, "--config", str(cfg)).exit_code == 1
    (tmp_path / "doctor.toml").write_text('[tool.doctor]\nignore = ["shm-too-small"]\nstrict = true\n')
    assert run("check", "--from", warn_only).exit_code == 0  # doctor.toml in cwd: waived, strict
    cfg.write_text('ignroe = ["x"]\n')
    r = run("check", "--from", f, "--config", str(cfg))
    assert r.exit_code == 2 and str(cfg) in r.stderr and "ignroe" in r.stderr


def test_crashed_check_exits_2_and_others_still_run(tmp_path, monkeypatch):
    def boom(ctx):
        raise RuntimeError("kaboom")

    monkeypatch.setitem(REGISTRY, "test-boom", Check("test-boom", "system", boom))
    r = run("--json", "check", "--from", write(tmp_path, "ok.json", healthy()))
    assert r.exit_code == 2
    data = json.loads(r.stdout)
    crashed = [c for c in data["checks"] if c["status"] == "crash"]
    assert [c["id"] for c in crashed] == ["test-boom"] and "kaboom" in crashed[0]["traceback"]
    assert any(f["id"] == "check-crashed" for f in data["findings"])
    assert sum(c["status"] == "pass" for c in data["checks"]) > 20


def test_several_snapshots_are_a_cluster(tmp_path, schema):
    a = write(tmp_path, "a.json", healthy())
    d = healthy()
    d["packages"]["torch-npu"]["version"] = "2.8.0.post2"
    b = write(tmp_path, "b.json", d)
    r = run("--json", "check", "--from", a, "--from", b)
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema)
    assert [n["node"] for n in data["nodes"]] == [a, b] and all(n["ok"] for n in data["nodes"])
    assert {f["node"] for f in data["findings"] if f["id"] == "package-off-profile"} == {b}


def test_one_snapshot_given_twice_is_not_a_cluster(tmp_path):
    """`check --from snap.json --from snap.json` (or a copy of it) read one host as a two-node cluster: every
    finding twice and the multi-node rules on top. The same host's snapshot collected later is still taken as given."""
    d = healthy()
    d["collected_at"] = "2026-12-05T10:29:43Z"
    a = write(tmp_path, "a.json", d)
    copy = write(tmp_path, "copy.json", d)
    r = CliRunner().invoke(cli, ["check", "--from", a, "--from", a])
    assert r.exit_code == 2 and "given twice (host node-0, collected 2026-12-05T10:29:43Z)" in r.output
    r = CliRunner().invoke(cli, ["check", "--from", a, "--from", copy])
    assert r.exit_code == 2 and f"the same snapshot as {a}" in r.output and "doctor diff" in r.output
    d["collected_at"] = "2026-12-05T11:00:00Z"
    later = write(tmp_path, "later.json", d)
    assert run("check", "--from", a, "--from", later).exit_code == 0


def test_two_snapshots_of_one_hostname_in_the_same_second_are_two_nodes(tmp_path):
    """Containers on a host's network (or hosts left at one default name) share the hostname, and a pdsh run collects
    them in the same second: real, `collect` and `collect --python /usr/bin/python3` started together here both said
    host vm at 11:17:03Z and were refused as 'the same snapshot'. Their facts differ: they are two nodes."""
    d = healthy()
    d["collected_at"] = "2026-12-05T11:17:03Z"
    a = write(tmp_path, "a.json", d)
    d["python"]["executable"] = "/usr/bin/python3"
    b = write(tmp_path, "b.json", d)
    r = CliRunner().invoke(cli, ["check", "--from", a, "--from", b, "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)["nodes"]) == 2


def test_a_nodes_snapshot_beside_its_cluster_file_is_that_node_twice(tmp_path):
    """Real: a cluster file of two snapshots plus one of them (`--from cl.json --from c1.json`) read three nodes,
    c1's findings twice. A cluster's own nodes are still not compared with each other: Ray nodes in containers
    of one host can be alike to the second."""
    d = healthy()
    d["collected_at"] = "2026-12-05T11:17:03Z"
    node = write(tmp_path, "c1.json", d)
    cl = write(tmp_path, "cl.json", {"schema": "doctor.cluster/1", "nodes": [
        {"node": "n0", "snapshot": d, "error": None}, {"node": "n1", "snapshot": d, "error": None}]})
    r = CliRunner().invoke(cli, ["check", "--from", cl, "--from", node])
    assert r.exit_code == 2 and f"the same snapshot as node n0 of {cl}" in r.output
    r = CliRunner().invoke(cli, ["check", "--from", cl, "--json"])
    assert r.exit_code == 0, r.output
    assert [n["node"] for n in json.loads(r.output)["nodes"]] == ["n0", "n1"]


def test_cluster_file_with_a_failed_node(tmp_path, schema):
    doc = {"schema": "doctor.cluster/1", "nodes": [{"node": "n0", "snapshot": healthy(), "error": None},
                                                     {"node": "n1", "snapshot": None, "error": "timed out"}]}
    r = run("--json", "check", "--from", write(tmp_path, "c.json", doc))
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema)
    assert data["nodes"][1] == {"node": "n1", "ok": False, "error": "timed out"}


def test_bad_input_exits_2_naming_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    r = run("check", "--from", str(p))
    assert r.exit_code == 2 and str(p) in r.stderr
    r = run("check", "--from", str(p), "--deep")
    assert r.exit_code == 2 and "--deep" in r.stderr


def test_forced_profile(tmp_path):
    r = run("--json", "check", "--from", write(tmp_path, "ok.json", healthy()), "--profile", "verl-0.8.0-cann9.0.0-a2")
    data = json.loads(r.stdout)
    assert data["profile"]["name"] == "verl-0.8.0-cann9.0.0-a2" and "forced" in data["profile"]["reason"]
    assert any(f["id"] == "cann-outside-profile" for f in data["findings"])
    assert run("check", "--from", write(tmp_path, "ok.json", healthy()), "--profile", "nope").exit_code == 2


@pytest.mark.skipif(HAS_NPU, reason="this host has an NPU")
def test_live_check_without_npu_says_so_and_exits_1(tmp_path, schema):
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema)
    ids = {f["id"] for f in data["findings"] if f["severity"] == "error"}
    assert {"cann-not-installed", "npu-not-visible"} <= ids



def _mapped_libc() -> str:
    with open("/proc/self/maps") as fh:
        return next(ln.split()[-1] for ln in fh if "/libc.so.6" in ln or "/libc-" in ln)


def test_a_live_check_started_with_an_ld_preload_the_loader_ignores_names_it(tmp_path):
    """The real loader prints `ERROR: ld.so: object ... cannot be preloaded ...: ignored.` for a preload path this
    host lacks (upstream verl's NPU scripts preload Ubuntu's aarch64 jemalloc path) and runs the doctor anyway; the
    doctor names the entry, and `collect` keeps what it read."""
    missing = "/usr/lib/aarch64-linux-gnu/libjemalloc-doctor-test.so.2"
    present = _mapped_libc()  # the C library this process runs on: preloading it changes nothing
    env = {**os.environ, "LD_PRELOAD": missing}
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env=env)
    assert f"object '{missing}' from LD_PRELOAD cannot be preloaded" in r.stderr
    found = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "ld-preload-not-loaded"]
    assert [(f["severity"], f["evidence"]["entry"], f["evidence"]["exists"]) for f in found] == [
        ("warning", missing, False)], found
    out = tmp_path / "snap.json"
    r = subprocess.run([sys.executable, "-m", "doctor", "collect", "-o", str(out)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env={**os.environ, "LD_PRELOAD": f"{missing}:{present}"})
    assert r.returncode == 0, r.stderr
    snap = json.loads(out.read_text())
    assert snap["env"]["LD_PRELOAD"] == f"{missing}:{present}"
    assert [(i["entry"], i.get("exists")) for i in snap["host"]["preload"]][:2] == [(missing, False), (present, True)]

def test_help_says_only_and_ignore_take_a_group_header_as_the_readme_does():
    """The README's waivers take "an area, a group header of the output, a check id or a finding id"; `--help`
    named only the other three, so `--only npu` read as unsupported."""
    text = " ".join(run("check", "--help").output.split())
    only = text.split("--only NAME", 1)[1].split("--ignore NAME", 1)[0]
    ignore = text.split("--ignore NAME", 1)[1].split("--config FILE", 1)[0]
    assert "group header of the output" in only and "[npu]" in only
    assert "group header of the output" in ignore


def test_deep_says_what_it_compares_only_when_there_is_something(monkeypatch):
    """`check --deep` in a venv with none of the stack printed "comparing the files of 0 distributions with their
    RECORD…" (real run, 2026-12-07, an empty venv and README's install), and "importing torch_npu,
    mindspeed.megatron_adaptor, vllm_ascend…" with none of them installed: it names only the imports of what is
    installed (or may be: a snapshot that cannot tell), and says nothing when it neither imports nor compares."""
    import io

    import doctor.probes.deep
    from doctor.cli.options import add_deep
    from doctor.console import Console
    from doctor.snapshot.loader import snapshot_from_dict
    from tests.stacks import bare

    def said(n: int, packages: dict[str, str] | None) -> str:
        monkeypatch.setattr(doctor.probes.deep, "add_deep_facts",
                            lambda snap, python, timeout, on_start=None: on_start(n) if on_start else None)
        err = io.StringIO()
        listed = {} if packages is None else {"complete": True,
                                              "packages": {k: {"version": v} for k, v in packages.items()}}
        add_deep(snapshot_from_dict(bare(**listed)), None, 1.0, Console(out=io.StringIO(), err=err))
        return err.getvalue()

    assert said(0, {}) == ""  # an empty venv: nothing to import, nothing to compare
    assert said(2, {"verl": "0.7.1"}) == "comparing the files of 2 distributions with their RECORD…\n"
    assert said(1, {"torch-npu": "2.5.1.post1", "vllm_ascend": "0.9.1"}) == (
        "importing torch_npu, vllm_ascend; comparing the files of 1 distribution with their RECORD…\n")
    assert said(0, None) == "importing torch_npu, mindspeed.megatron_adaptor, vllm_ascend…\n"  # cannot tell


def test_a_wrong_profile_or_waiver_on_this_host_is_said_before_the_probe_is_waited_for(monkeypatch):
    """`doctor check --profile nope` (or `--only nothing`) printed "probing this host…" and waited for the probe —
    npu-smi up to --npu-smi-timeout on a sick card — before saying the name was wrong, which the command line alone
    decides. The probe's answer is not waited for now: the usage error comes first."""
    from doctor.cli import check as check_cli

    def waited(*a, **k):
        raise AssertionError("waited for the probe")

    monkeypatch.setattr(check_cli, "_live_snapshot", waited)
    r = run("check", "--profile", "nope")
    assert r.exit_code == 2 and "no profile named 'nope'" in r.output, r.output
    r = run("check", "--only", "nothing")
    assert r.exit_code == 2 and "'nothing' matches no area" in r.output, r.output
    r = run("check", "--profile", "verl-0.9.1-cann9.1.0-a2", "--only", "npu")  # names that exist: the probe is used
    assert r.exit_code == 2 and "waited for the probe" in r.output + repr(r.exception)


def test_deep_with_a_snapshot_file_says_how_to_get_its_facts_into_one(tmp_path):
    """`doctor check --from snap.json --deep` said only that the two cannot be combined; what a user wants there is
    the deep facts of that host, which `doctor collect --deep` records and `check --from` judges (README)."""
    r = run("check", "--from", write(tmp_path, "s.json", healthy()), "--deep")
    assert r.exit_code == 2
    assert "`doctor collect --deep -o FILE` on the host records the same imports" in " ".join(r.output.split())
