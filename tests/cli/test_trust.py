"""Never "ok" without having checked, and the messages say what the user typed (issue 13), through the real CLI."""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from doctor.cli import COMMANDS, cli
from tests.conftest import ROOT
from tests.fakes import externally_managed_python
from tests.launch.helpers import QWEN3_06B, write_model
from tests.stacks import healthy


def run(*args: str, **kw):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, **kw)


def snap_file(tmp_path: Path, data: dict, name: str = "s.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


# -- a target that cannot be checked is exit 2 ---------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "collect", "install", "smoke"])
def test_a_target_interpreter_that_does_not_exist_is_exit_2(command, tmp_path):
    r = run(command, "--python", "/opt/tarin-venv/bin/python")
    assert r.exit_code == 2 and "--python" in r.stderr and "/opt/tarin-venv/bin/python" in r.stderr


def test_a_target_interpreter_that_does_not_run_is_exit_2_for_check(tmp_path):
    bad = tmp_path / "python3"
    bad.write_text("#!/bin/sh\nexit 3\n")
    bad.chmod(0o755)
    r = run("check", "--python", str(bad))
    assert r.exit_code == 2 and "cannot run the target interpreter" in r.stderr and "--python" in r.stderr
    (tmp_path / "notexec").write_text("x")
    assert run("check", "--python", str(tmp_path / "notexec")).exit_code == 2


def test_check_root_and_timeout_are_validated_as_collect_does(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    for command in ("check", "collect"):
        r = run(command, "--root", str(f))
        assert r.exit_code == 2 and "--root" in r.stderr and "is a file" in r.stderr
        r = run(command, "--npu-smi-timeout", "-1")
        assert r.exit_code == 2 and "--npu-smi-timeout" in r.stderr


def test_from_with_live_host_options_is_refused_naming_them(tmp_path):
    s = snap_file(tmp_path, healthy())
    r = run("check", "--from", s, "--python", sys.executable, "--root", str(tmp_path))
    assert r.exit_code == 2 and "--root" in r.stderr and "--python" in r.stderr and "--from" in r.stderr
    assert run("check", "--from", s, "--npu-smi-timeout", "3").exit_code == 2


def test_an_empty_cluster_file_is_exit_2(tmp_path):
    c = snap_file(tmp_path, {"schema": "doctor.cluster/1", "nodes": []}, "cluster.json")
    r = run("check", "--from", c)
    assert r.exit_code == 2 and "cluster.json" in r.stderr and "nodes" in r.stderr


def test_waivers_that_leave_nothing_to_run_are_exit_2(tmp_path):
    from doctor.checks.runner import load_all

    areas = sorted({c.area for c in load_all().values()})
    ignore = [a for area in areas for a in ("--ignore", area)] + ["--ignore", "profile-selection"]
    r = run("check", "--from", snap_file(tmp_path, healthy()), *ignore)
    assert r.exit_code == 2 and "no check" in r.stderr


# -- skipped is its own state ----------------------------------------------------------------------------------


def test_verbose_and_junit_show_skipped_checks_with_their_reason(tmp_path):
    d = healthy()
    del d["packages"]["torch-npu"]  # complete snapshot: torch-npu is not installed
    s = snap_file(tmp_path, d)
    junit = tmp_path / "check.xml"
    r = run("check", "-v", "--from", s, "--junit", str(junit))
    assert re.search(r"- check deep-imports skipped: no --deep imports", r.stdout)
    assert not re.search(r"check deep-imports pass", r.stdout)
    assert "skipped" in r.stdout.splitlines()[-1]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and int(suite.get("skipped", "0")) >= 1
    case = next(c for c in suite.iter("testcase") if c.get("name") == "deep-imports")
    skipped = case.find("skipped")
    assert skipped is not None and "--deep" in skipped.get("message", "")
    report = json.loads(run("--json", "check", "--from", s).stdout)
    st = {c["id"]: c for c in report["checks"]}
    assert st["deep-imports"]["status"] == "skip" and st["deep-imports"]["reason"]
    assert st["torch-torch-npu-base"]["status"] == "skip"  # no torch-npu version: nothing to compare


def test_no_ok_header_above_a_failing_check_and_real_durations(tmp_path):
    d = healthy()
    d["ascend"]["devices"] = []
    d["ascend"]["pci"] = []
    d["ascend"]["device_files"] = []
    r = run("check", "-v", "--from", snap_file(tmp_path, d))
    lines = r.stdout.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s+✗ check \S+ fail", line):
            header = next(x for x in reversed(lines[:i]) if x.startswith("["))
            assert not header.startswith("[✓]"), (header, line)
    times = re.findall(r"\((\S+ (?:µs|ms|s))\)", r.stdout)
    assert times and "0.0 ms" not in times and any(t != "<1 µs" for t in times)


def test_launch_and_lint_do_not_say_zero_checks_ran(tmp_path):
    model = write_model(tmp_path / "m", "Qwen3-0.6B", QWEN3_06B)
    r = run("launch", "--no-compose", "--model", model, "--verl-version", "0.9.0", "-o", str(tmp_path / "run.sh"))
    assert "check(s) ran" not in r.output
    r = run("lint", "--no-compose", "--verl-version", "0.9.0", str(tmp_path / "run.sh"))
    assert "check(s) ran" not in r.output and r.output.strip()


def test_explain_says_no_check_count_and_smoke_counts_stages(tmp_path):
    # explain reads one log against the signatures: "1 check(s) ran" told a user nothing; smoke's are its stages
    log = tmp_path / "clean.log"
    log.write_text("hello\nworld\n")
    r = run("explain", str(log))
    assert r.output.strip().splitlines()[-1] == "explain: ok — 0 error(s), 0 warning(s), 1 info", r.output
    from doctor.console import Console
    from doctor.render import emit
    from doctor.report import CheckResult, CheckStatus, Report

    out = io.StringIO()
    emit(Report("smoke", findings=[], checks=[CheckResult("smoke-preflight", "smoke", CheckStatus.PASS, 0.1),
                                              CheckResult("smoke-run", "smoke", CheckStatus.SKIP, 0.0)]),
         Console(out=out, err=io.StringIO()))
    assert out.getvalue().strip().splitlines()[-1].endswith("; 1 stage(s) ran, 1 skipped"), out.getvalue()


# -- profile selection says when it chose between equals ----------------------------------------------------------


def test_unknown_chip_says_a2_and_a3_both_match_and_which_rule_chose(tmp_path):
    d = healthy("verl-0.7.1-cann8.5.0-a2")
    for k in ("devices", "pci", "device_files", "kernels"):
        d["ascend"].pop(k)
    report = json.loads(run("--json", "check", "--from", snap_file(tmp_path, d)).stdout)
    why = report["profile"]["reason"]
    assert "chip unknown" in why
    assert "verl-0.7.1-cann8.5.0-a2 and verl-0.7.1-cann8.5.0-a3 both match" in why and "--profile" in why


# -- waivers ---------------------------------------------------------------------------------------------------


def test_waiver_names_that_match_nothing_are_refused_with_the_valid_ones(tmp_path):
    s = snap_file(tmp_path, healthy())
    for flag in ("--ignore", "--only"):
        r = run("check", "--from", s, flag, "bogus-id")
        assert r.exit_code == 2 and "bogus-id" in r.stderr and "matches no" in r.stderr
        assert "torch_npu" in r.stderr and "profile-pins" in r.stderr  # areas and check ids listed
    r = run("check", "--from", s, "--ignore", "shm-to-small")
    assert "did you mean 'shm-too-small'" in r.stderr
    assert json.loads(run("--json", "check", "--from", s, "--only", "bogus-id").stdout)["findings"][0]["id"] == \
        "usage-error"  # a bad value on the command line


def test_a_waivers_file_name_that_matches_nothing_names_the_file_and_key(tmp_path, monkeypatch):
    """A misspelt name in pyproject.toml's [tool.doctor] is refused naming that file and key, not a flag the user
    did not pass."""
    s = snap_file(tmp_path, healthy())
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[tool.doctor]\nignore = ["shm-to-small"]\n')
    monkeypatch.chdir(proj)
    r = run("check", "--from", s)
    first = r.stderr.strip().splitlines()[0]
    assert r.exit_code == 2 and first.startswith(f"error: {proj / 'pyproject.toml'}: tool.doctor.ignore: 'shm-to-small'")
    assert "did you mean 'shm-too-small'" in first and "--ignore" not in first
    rep = json.loads(run("--json", "check", "--from", s).stdout)
    assert rep["findings"][0]["id"] == "input-invalid"
    monkeypatch.chdir(tmp_path)  # no waivers file here: the flag's name is the flag's
    r = run("check", "--from", s, "--ignore", "bogus-id")
    assert "--ignore: 'bogus-id'" in r.stderr


def test_only_and_ignore_take_areas_check_ids_and_finding_ids(tmp_path):
    d = healthy()
    d["host"]["shm_gb"] = 0.06
    d["packages"]["flash-attn"] = {"version": "2.5.0"}
    s = snap_file(tmp_path, d)

    def ids(*args: str) -> set[str]:
        return {f["id"] for f in json.loads(run("--json", "check", "--from", s, *args).stdout)["findings"]}

    both = ids()
    assert {"shm-too-small", "cuda-only-packages"} <= both
    assert ids("--only", "shm-too-small") == {"shm-too-small"}  # a finding id in --only
    assert "shm-too-small" not in ids("--ignore", "network")  # an area in --ignore
    assert "shm-too-small" not in ids("--ignore", "shm-size")  # a check id in --ignore
    assert "cuda-only-packages" in ids("--ignore", "shm-too-small")


def test_a_misspelt_area_module_is_an_error(monkeypatch):
    from doctor.checks import runner

    monkeypatch.setattr(runner, "AREA_MODULES", (*runner.AREA_MODULES, "doctor.checks.netwrok"))
    with pytest.raises(ModuleNotFoundError):
        runner.load_all()


def test_each_check_declares_the_finding_ids_its_code_reports():
    """`@check(..., findings=...)` is what --only/--ignore accept; it must say what the function's code says."""
    from doctor.checks.runner import load_all

    reg = load_all()

    def literal_ids(fn: ast.AST) -> set[str]:
        return {n.args[0].value for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "")
                == "finding" and n.args and isinstance(n.args[0], ast.Constant)}

    for path in sorted((ROOT / "doctor" / "checks").glob("*.py")):
        body = ast.parse(path.read_text()).body
        helpers = {fn.name: fn for fn in body if isinstance(fn, ast.FunctionDef)}
        for fn in body:
            deco = [d for d in getattr(fn, "decorator_list", []) if isinstance(d, ast.Call)
                    and getattr(d.func, "id", "") == "check"]
            if not deco:
                continue
            cid = deco[0].args[0].value  # type: ignore[attr-defined]
            called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            literal = literal_ids(fn).union(*(literal_ids(helpers[c]) for c in called if c in helpers))
            assert literal <= set(reg[cid].findings), (cid, sorted(literal - set(reg[cid].findings)))
            dynamic = set(reg[cid].findings) - literal
            assert all(re.search(re.escape(x), (ROOT / "README.md").read_text()) for x in dynamic), cid


# -- stdout holds nothing on failure; one definition per shared option -------------------------------------------


def test_a_refused_layout_writes_nothing_to_stdout(tmp_path):
    model = write_model(tmp_path / "m", "Qwen3-0.6B", QWEN3_06B)
    r = run("launch", "--no-compose", "--model", model, "--verl-version", "0.9.0", "--tp", "3")
    assert r.exit_code == 1 and r.stdout == "" and "launch-heads-indivisible" in r.stderr


def _params() -> dict[str, list[tuple[str, click.Parameter]]]:
    by_flag: dict[str, list[tuple[str, click.Parameter]]] = {}
    ctx = click.Context(cli)
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        cmds = [(name, cmd)] + ([(f"{name} {n}", c) for n, c in cmd.commands.items()]
                                if isinstance(cmd, click.Group) else [])
        for label, c in cmds:
            for p in c.params:
                for opt in getattr(p, "opts", []):
                    by_flag.setdefault(opt, []).append((label, p))
    return by_flag


@pytest.mark.parametrize("flag", ["--python", "--root", "--npu-smi-timeout", "--junit", "--strict", "--profile",
                                  "-o", "--overwrite", "--ray", "--address", "--ray-timeout"])
def test_a_shared_option_is_one_definition(flag):
    uses = _params()[flag]
    assert len(uses) >= 2, uses

    def shape(p: click.Parameter) -> str:
        info = p.to_info_dict()
        return json.dumps({k: info[k] for k in ("type", "opts", "default", "is_flag", "count", "multiple")
                           if k in info}, sort_keys=True, default=str)

    shapes = {label: shape(p) for label, p in uses}
    assert len(set(shapes.values())) == 1, shapes


def test_bundle_help_says_the_name_is_used_as_given_and_collect_root_is_a_directory():
    r = run("collect", "--help")
    assert "FILE.tar.gz" not in r.output and "as given" in r.output
    assert "--root DIRECTORY" in run("check", "--help").output


# -- messages name what the user typed ---------------------------------------------------------------------------


def test_messages_name_the_flag_the_user_typed():
    r = run("launch", "--no-compose", "--verl-version", "0.9.0", "--tp", "0")
    assert r.exit_code == 2 and "--tp:" in r.stderr and "command line: tp" not in r.stderr


def test_a_flag_left_to_its_default_is_not_named():
    """`--compose: cannot compose ...` when the user never passed --compose: the flag is dropped from the message."""
    from doctor.cli.options import _name_the_flag
    from doctor.errors import InputError

    @click.command()
    @click.option("--compose/--no-compose", default=None)
    def cmd(compose):  # pragma: no cover - only its parameters are used
        pass

    ctx = cmd.make_context("launch", [])
    e = _name_the_flag(InputError("cannot compose verl 0.7.1's config", path="--compose"), ctx)
    assert str(e) == "cannot compose verl 0.7.1's config"
    ctx = cmd.make_context("launch", ["--compose"])
    assert str(_name_the_flag(InputError("cannot compose", path="--compose"), ctx)) == "--compose: cannot compose"


def test_findings_about_a_snapshot_say_the_snapshot(tmp_path):
    d = healthy()
    d["ascend"]["devices"], d["ascend"]["pci"], d["ascend"]["device_files"] = [], [], []
    report = json.loads(run("--json", "check", "--from", snap_file(tmp_path, d)).stdout)
    titles = [f["title"] for f in report["findings"]]
    assert "No Ascend NPU is visible in the snapshot" in titles
    assert not any("this host" in t for t in titles)


def _suggested_commands() -> set[str]:
    """Every `doctor ...` command a finding suggests: explain's signatures, the checks' literal command lines, and
    the install line checks build (`doctor.checks.commands.install_dry_run`) for each kind of target."""
    from types import SimpleNamespace

    import tomllib

    from doctor.checks.commands import install_dry_run
    from doctor.knowledge.profiles import load_profiles

    sigs = tomllib.loads((ROOT / "profiles" / "signatures.toml").read_text())["signature"]
    commands = {c for s in sigs for c in s.get("commands", []) if c.startswith("doctor ")}
    for path in (ROOT / "doctor").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "commands" and isinstance(node.value, (ast.Tuple, ast.List)):
                for e in node.value.elts:
                    commands |= {e.value} if isinstance(e, ast.Constant) and str(e.value).startswith("doctor ") else set()
                    # a built `doctor` line goes through install_dry_run, which this test runs for every target
                    assert not (isinstance(e, ast.JoinedStr) and isinstance(e.values[0], ast.Constant)
                                and str(e.values[0].value).startswith("doctor ")), f"{path}: an f-string doctor command"
    profile = next(p for p in load_profiles() if p.name == "verl-0.9.1-cann9.1.0-a3")
    managed = externally_managed_python()  # Debian's: install refuses it and the line names a venv made from it
    for exe in ("/usr/bin/python3", sys.executable, None):
        snap = SimpleNamespace(python=SimpleNamespace(executable=exe, externally_managed=exe == managed)) if exe else None
        commands |= {install_dry_run(snap), install_dry_run(snap, profile)}
    return commands


def _ray_session(tmp_path, path: str):
    """`path` (under /tmp/ray) as the host that ran Ray has it, under tmp_path: a session's logs with a raylet.out."""
    d = tmp_path / path.lstrip("/")
    d.mkdir(parents=True, exist_ok=True)
    (d / "raylet.out").write_text("[2026-12-03 15:38:55,780 I 2326 2326] (raylet) main.cc:180: Setting cluster ID\n")
    return d


def test_suggested_commands_are_runnable(tmp_path, monkeypatch):
    """Every `doctor ...` command a finding suggests (explain's signatures, the checks) runs as given on an Ascend
    host (a fake root; `--dry-run` added where it would install): none is a usage error (exit 2). Trial item 5:
    `doctor install --dry-run` alone exits 2 ("say where to install")."""
    import shlex

    from tests.fakes import make_ascend_root

    root = str(make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    commands = _suggested_commands()
    assert "doctor check" in commands and "doctor install --dry-run --venv verl-venv" in commands
    usr = ("--venv verl-venv " if externally_managed_python() else "") + "--python /usr/bin/python3"
    assert f"doctor install --profile verl-0.9.1-cann9.1.0-a3 --dry-run {usr}" in commands
    ran = 0
    for line in sorted(commands):
        argv = shlex.split(line)[1:]
        if any(a.isupper() or "<" in a for a in argv):
            continue  # prose placeholders (`doctor install --profile NAME`) live in fix text, not commands
        ctx = click.Context(cli)
        cmd = cli.get_command(ctx, argv[0])
        assert cmd is not None, line
        if "--ray" in argv:  # needs a running Ray cluster: parses as given
            cmd.make_context(argv[0], argv[1:], parent=ctx)
            continue
        if argv[0] == "install" and "--dry-run" not in argv:
            argv.append("--dry-run")
        if any(p.name == "root" for p in cmd.params):
            argv += ["--root", root]
        if argv[0] == "explain":  # a Ray session's logs are there on the host whose log suggested them, not here
            argv = [a if not a.startswith("/tmp/ray/") else str(_ray_session(tmp_path, a)) for a in argv]
        r = run(*argv)
        assert r.exit_code != 2, f"{line!r} is not runnable as suggested: {r.stderr[-400:]}"
        ran += 1
    assert ran >= 5
    assert not list(work.iterdir())  # a dry run creates nothing (no verl-venv)


def test_a_flag_the_user_did_not_type_is_not_blamed(tmp_path):
    """`install --python-version 3.9`: the refusal must not say `--python:` (never typed)."""
    r = run("install", "--dry-run", "--from", snap_file(tmp_path, healthy()), "--python-version", "3.9",
            "--profile", "verl-0.7.1-cann8.5.0-a2")
    assert r.exit_code == 2 and "needs Python" in r.stderr and "--python:" not in r.stderr


def test_profile_selection_declares_every_finding_id_it_reports():
    """The pseudo-check `profile-selection` (diagnose.py) reports ids outside the registry: each one must be in
    SELECTION_FINDINGS, or `--only`/`--ignore ID` refuses an id the tool itself prints."""
    from doctor.checks.diagnose import SELECTION_FINDINGS

    tree = ast.parse((ROOT / "doctor" / "checks" / "diagnose.py").read_text())
    emitted = {n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "")
               == "finding" and n.args and isinstance(n.args[0], ast.Constant)}
    assert emitted <= set(SELECTION_FINDINGS), sorted(emitted - set(SELECTION_FINDINGS))


# -- `--junit -` is stdout, as `-o -` (trial item 9) ---------------------------------------------------------


def test_junit_dash_is_stdout_and_the_human_text_goes_to_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = healthy()
    del d["packages"]["torch-npu"]
    s = snap_file(tmp_path, d)
    r = run("check", "--from", s, "--junit", "-")
    assert r.exit_code == 1 and not (tmp_path / "-").exists()  # never a file named `-`
    suite = ET.fromstring(r.stdout).find("testsuite")  # stdout is exactly the XML document
    assert suite is not None and suite.get("name") == "doctor-check" and int(suite.get("failures", "0")) >= 1
    assert "torch-npu-not-installed" in r.stderr and "check: errors" in r.stderr.splitlines()[-1]


@pytest.mark.parametrize("argv", [("--json", "check", "--junit", "-"), ("check", "--json", "--junit", "-"),
                                  ("--json", "smoke", "--dry-run", "--junit", "-")])
def test_junit_dash_with_json_is_refused_stdout_holds_one_document(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(*argv)
    assert r.exit_code == 2 and not (tmp_path / "-").exists()
    doc = json.loads(r.stdout)  # still exactly one JSON document
    assert doc["findings"][0]["id"] == "usage-error" and "--junit" in doc["findings"][0]["title"]
    assert "--junit: - is stdout" in r.stderr


# -- smoke without verl in the interpreter says to pass the training one (trial item 12) ---------------------


def test_smoke_without_verl_says_to_pass_the_training_interpreter(tmp_path, monkeypatch):
    import subprocess

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    py = str(bare / "bin" / "python")
    r = run("smoke", "--dry-run", "--python", py)
    assert r.exit_code == 2 and "verl is not installed in this interpreter" in r.stderr
    assert "pass --python with the training environment's interpreter" in r.stderr
    assert f"doctor install --dry-run --python {py}" in r.stderr
    # the doctor's own interpreter without verl: no install plan offered for it (the doctor never installs there),
    # a new venv's instead (a new user on a login node has no training environment to pass yet)
    monkeypatch.setattr(sys, "prefix", str(bare))
    monkeypatch.setattr(sys, "executable", py)
    r = run("smoke", "--dry-run")
    assert r.exit_code == 2 and "verl is not installed in the doctor's own interpreter" in r.stderr
    assert "--python with the training environment's interpreter" in r.stderr and "--python " + py not in r.stderr
    assert "`doctor install --venv DIR --dry-run` plans one" in r.stderr


def test_launch_writes_an_existing_relative_model_path_as_absolute(tmp_path, monkeypatch):
    # trial item 12: `--model m/Qwen3-8B` was written as a relative model.path (breaks when run from elsewhere)
    write_model(tmp_path / "m", "Qwen3-0.6B", QWEN3_06B)
    monkeypatch.chdir(tmp_path)
    r = run("launch", "--no-compose", "--model", "m/Qwen3-0.6B", "--verl-version", "0.9.0", "--format", "overrides",
            "-o", "o.txt")
    assert r.exit_code == 0, r.output
    paths = [x for x in (tmp_path / "o.txt").read_text().splitlines() if x.startswith("actor_rollout_ref.model.path=")]
    assert paths == [f"actor_rollout_ref.model.path={tmp_path / 'm' / 'Qwen3-0.6B'}"]


def _check_commands(snapshot: Path) -> set[str]:
    """The `doctor ...` commands `doctor check` prints for this snapshot (what a user copies)."""
    r = run("--json", "check", "--from", str(snapshot))
    return {c for f in json.loads(r.stdout)["findings"] for c in (f.get("fix") or {}).get("commands") or ()
            if c.startswith("doctor ")}


def _fails_as_written(line: str, snapshot: Path) -> str | None:
    """Why the line would exit 2 on the snapshot's machine: an install that names no target (`say where to
    install`), or any usage error when run against the snapshot (`--from`: that machine, planned here)."""
    import shlex

    argv = shlex.split(line)[1:]
    if argv[0] == "install":
        if not {"--python", "--venv"} & set(argv):
            return "no --python / --venv: exit 2 'say where to install'"
        argv = [a for i, a in enumerate(argv) if a != "--python" and (i == 0 or argv[i - 1] != "--python")]
        argv += [] if "--dry-run" in argv else ["--dry-run"]
        argv += ["--from", str(snapshot)] + ([] if "--venv" in argv else ["--venv", "verl-venv"])
    r = run(*argv, "--from", str(snapshot)) if argv[0] == "check" else run(*argv)
    # a fact the (hand-written) snapshot lacks is the emulation's limit, not the command's: the machine knows it
    return r.stderr[-300:] if r.exit_code == 2 and "of the snapshot is unknown" not in r.stderr else None


def test_commands_check_prints_for_broken_stacks_are_runnable(tmp_path, monkeypatch):
    snaps = [ROOT / "tests" / "golden" / "check-sick.snapshot.json",
             *sorted((ROOT.parent / "shared" / "cases").glob("*.snapshot.json"))]
    monkeypatch.chdir(tmp_path)
    bad, seen = {}, 0
    for snap in (s for s in snaps if s.exists()):
        for line in _check_commands(snap):
            seen += 1
            why = _fails_as_written(line, snap)
            if why:
                bad[line] = why
    assert seen and not bad, bad
