import io
import os
import xml.etree.ElementTree as ET

import pytest

from doctor.atomic import write_text_atomic
from doctor.console import Console
from doctor.render import emit, junit_xml
from doctor.report import CheckResult, CheckStatus, Finding, Report, finding


def _report() -> Report:
    e = finding("cann-missing", "error", "cann", "CANN toolkit not found", evidence={"root": "/"}, fix="Install CANN.",
                commands=["doctor install --dry-run"])
    e = e.__class__(**{**e.__dict__, "check": "cann-toolkit"})
    i = finding("python-version", "info", "python", "Python 3.11.7")
    i = i.__class__(**{**i.__dict__, "check": "python"})
    return Report("check", findings=[i, e], checks=[
        CheckResult("cann-toolkit", "cann", CheckStatus.FAIL, 0.001),
        CheckResult("python", "python", CheckStatus.PASS, 0.0),
        CheckResult("boom", "system", CheckStatus.CRASH, 0.0, traceback="Traceback: boom"),
        CheckResult("skipped", "system", CheckStatus.SKIP, 0.0),
    ])


def test_text_output_groups_by_area_and_shows_fix():
    out = io.StringIO()
    c = Console(out=out, err=io.StringIO())
    code = emit(_report(), c)
    text = out.getvalue()
    assert code == 2  # a crashed check
    assert "[✗] cann" in text and "CANN toolkit not found" in text and "fix: Install CANN." in text
    assert "$ doctor install --dry-run" in text
    assert text.index("cann") < text.index("python")  # errors first
    assert "1 error(s)" in text


def test_verbose_lists_passing_checks_and_tracebacks():
    out = io.StringIO()
    emit(_report(), Console(out=out, err=io.StringIO(), verbosity=1))
    assert "check python pass" in out.getvalue() and "Traceback: boom" in out.getvalue()


def test_json_mode_writes_only_json_to_stdout():
    import json

    out, err = io.StringIO(), io.StringIO()
    emit(_report(), Console(json_mode=True, out=out, err=err))
    doc = json.loads(out.getvalue())
    assert doc["schema"] == "doctor.report/1" and err.getvalue() == ""


def test_junit_one_testcase_per_check():
    root = ET.fromstring(junit_xml(_report()))
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("errors") == "1"
    fail = suite.find("testcase[@name='cann-toolkit']/failure")
    assert fail is not None and "CANN toolkit not found" in fail.get("message", "")
    assert suite.find("testcase[@name='skipped']/skipped") is not None


def test_junit_failure_carries_the_detail_and_the_commands():
    """A CI page shows the JUnit file, not the console: `doctor check --junit` on an NPU-less box (2026-12-06) gave
    npu-not-visible's title and fix only, not why (npu-smi missing, no device nodes, nothing on PCI), and a
    requirement finding's fix sentence without the pip line the console prints under it."""
    e = finding("npu-not-visible", "error", "npu", "No Ascend NPU is visible on this host",
                detail="npu-smi was not found; there are no /dev/davinciN nodes.", fix="Run on an Ascend host.",
                commands=["pip install 'fastapi'"])
    e = e.__class__(**{**e.__dict__, "check": "npu-visible"})
    rep = Report("check", findings=[e], checks=[CheckResult("npu-visible", "devices", CheckStatus.FAIL, 0.0)])
    fail = ET.fromstring(junit_xml(rep)).find("testsuite/testcase[@name='npu-visible']/failure")
    assert fail is not None and fail.text is not None
    assert "npu-smi was not found; there are no /dev/davinciN nodes." in fail.text
    assert "$ pip install 'fastapi'" in fail.text


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.json"
    write_text_atomic(str(target), "x" * 10)
    assert target.read_text() == "x" * 10
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError):
        write_text_atomic(str(blocker / "sub.json"), "data")  # ENOTDIR even as root
    assert sorted(os.listdir(tmp_path)) == ["file", "out.json"]


def test_quiet_keeps_problems_and_summary_but_hides_info():
    out = io.StringIO()
    emit(_report(), Console(out=out, err=io.StringIO(), verbosity=-1))
    text = out.getvalue()
    assert "CANN toolkit not found" in text and "fix: Install CANN." in text
    assert "Python 3.11.7" not in text and "check: errors" in text


def test_atomic_write_gives_the_mode_a_plain_open_would(tmp_path):
    old = os.umask(0o022)
    try:
        write_text_atomic(str(tmp_path / "a.json"), "{}")
        write_text_atomic(str(tmp_path / "b.sh"), "true", mode=0o755)
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.sh").stat().st_mode & 0o777 == 0o755


def test_a_command_line_shared_by_findings_is_printed_once_and_json_keeps_every_one():
    """A profile's stack line fixes many requirement findings: the text prints it under the first and names that
    finding under the others (a copy per finding read as that many runs); a line on another node is its own, and
    --json keeps each finding's commands."""
    import json

    line = "TORCH_DEVICE_BACKEND_AUTOLOAD=0 /v/bin/python -m pip install verl==0.9.1"
    fs = [finding("requirement-missing", "error", "verl", f"verl requires {n}", key=f"verl:{n}", fix="Install.",
                  commands=[line] + ([f"pip install {n}"] if n == "ray" else []))
          for n in ("ray", "tensordict", "peft")]
    fs.append(finding("requirement-missing", "error", "verl", "verl requires ray", key="verl:ray", fix="Install.",
                      commands=[line], node="n2"))
    report = Report("check", findings=fs, checks=[])
    out = io.StringIO()
    emit(report, Console(out=out, err=io.StringIO()))
    text = out.getvalue()
    assert text.count(f"$ {line}") == 2, text  # once, and once for node n2
    assert text.count("(the same command as requirement-missing (verl:ray) above)") == 2, text
    assert "$ pip install ray" in text
    out = io.StringIO()
    emit(report, Console(out=out, err=io.StringIO(), json_mode=True))
    data = json.loads(out.getvalue())
    assert [f["fix"]["commands"][0] for f in data["findings"]] == [line] * 4


def test_a_ray_node_is_named_whole_once_and_short_on_each_finding_line():
    """`check --ray` names a node `address/<56-hex node id>`: 70 characters on every finding line read as noise
    (seen on a real one-node Ray 2.60.0 cluster); the node line says it whole, finding and check lines say the first
    8 hex digits, as the cluster table does, and --json keeps the whole name."""
    import json

    node = "192.0.2.2/6ca384fcc9e6dff534496b8f2cebcbf0636d419f26d226c622078ffc"
    f = finding("requirement-missing", "error", "verl", "verl requires dill", key="verl:dill", fix="Install.",
                commands=["pip install dill"], node=node)
    report = Report("check", findings=[f], checks=[CheckResult("declared", "python", CheckStatus.FAIL, 0.0, node=node)],
                    nodes=[{"node": node, "ok": True}])
    out = io.StringIO()
    emit(report, Console(out=out, err=io.StringIO(), verbosity=1))
    text = out.getvalue()
    assert text.count(node) == 1 and f"node {node}" in text, text
    assert "verl requires dill (verl:dill) [192.0.2.2/6ca384fc]" in text and "check declared [192.0.2.2/6ca384fc]" in text
    out = io.StringIO()
    emit(report, Console(out=out, err=io.StringIO(), json_mode=True))
    assert json.loads(out.getvalue())["findings"][0]["node"] == node


def _no_deps_check(*args: str) -> str:
    """`doctor check ARGS --from` the snapshot `doctor collect` took of a plain venv holding PyPI's verl 0.9.1 wheel
    installed `--no-deps` (tests/golden/check-no-deps.snapshot.json): what a cluster operator who ran
    `pip install --no-deps verl` sees."""
    from click.testing import CliRunner

    from doctor.cli import cli

    snap = os.path.join(os.path.dirname(__file__), "golden", "check-no-deps.snapshot.json")
    r = CliRunner().invoke(cli, ["--no-color", *args, "check", "--from", snap], catch_exceptions=False)
    assert r.exit_code == 1, r.output
    return r.stdout


def test_unmet_requirements_of_one_declarer_print_as_one_block_and_stay_findings():
    """verl installed `--no-deps` has one finding per requirement (28 of them), each printed as 4-5 lines with the
    same paragraph and fix sentence: 170 lines to say "verl's requirements are not installed; run this line". The
    console folds those of one declarer that read alike into one block (a title counting them, a line per
    requirement, the paragraph and the fix once, one pip line); --json, --junit, -v and the counts keep each one."""
    import json
    import shlex

    from doctor.knowledge.pipcheck import bare

    doc = json.loads(_no_deps_check("--json"))
    missing = [f for f in doc["findings"] if f["id"] == "requirement-missing"]
    plain = [f for f in missing if f["components"][0] == "python" and "extra" not in f["evidence"]]
    assert len(missing) == 28 and len(plain) == 15  # the report keeps one finding per requirement
    text = _no_deps_check()
    assert "verl 0.9.1 requires 15 packages that are not installed  [requirement-missing]" in text
    for f in plain:
        assert f"        - {bare(f['evidence']['requirement'])}\n" in text and f"({f['key']})" not in text
    # the paragraph and the fix sentence once per block, not once per finding; one pip line installs the block
    assert text.count("The package declares this requirement") == 3  # numpy, ray, transformers' own findings
    assert text.count("The package declares these requirements") == 3  # the 3 blocks, said of the list above
    assert "<name>" not in text and "<installed>" not in text  # a block's words, not the placeholders it folded
    assert text.count("fix: Install what verl declares") == 6
    (line,) = [x for x in text.splitlines() if x.startswith("          $ ") and "accelerate" in x]
    assert shlex.split(line)[5:] == [bare(f["evidence"]["requirement"]) for f in plain]
    # the import facts that differ stay, on the line of the requirement they are about
    assert "        - fastapi: `fastapi` at module level (verl/workers/rollout/utils.py:22)\n" in text
    # what verl imports at load and does not declare folds the same way, naming the module where it is not the name
    undeclared = [f for f in doc["findings"] if f["id"] == "package-imports-undeclared-missing"]
    assert f"verl 0.9.1 imports modules of {len(undeclared)} packages when its trainer loads" in text
    assert "        - pillow (import PIL): verl/experimental/agent_loop/agent_loop.py:43\n" in text
    assert text.count("pip neither installs them with verl") == 1 < len(undeclared)
    assert "fix: Install them into the same interpreter." in text
    # the counts are of findings, not of blocks
    s = doc["summary"]
    assert text.splitlines()[-1].startswith(f"check: errors — {s['error']} error(s), {s['warning']} warning(s)")
    assert s["error"] + s["warning"] >= len(missing)
    quiet = _no_deps_check("-q")
    assert "verl 0.9.1 requires 15 packages that are not installed" in quiet and "(verl:accelerate)" not in quiet
    verbose = _no_deps_check("-v")  # every finding's block in full
    assert all(f"({f['key']})  [requirement-missing]" in verbose for f in missing)
    assert verbose.count("The package declares this requirement") == len(missing)
    assert verbose.count("pip neither installs it with verl") == len(undeclared)


def test_fold_keeps_apart_declarers_ids_and_fixes_that_differ():
    """Only findings of one id, one declaring package (and release), one node and severity fold, and only when one
    command does all their fixes: a `--no-deps` line of one of them (another pip run) keeps it on its own."""
    def req(fid: str, pkg: str, name: str, spec: str = "", installed: str | None = None, cmd: str = "") -> Finding:
        decl = f"{pkg} 1.0"
        title = (f"{decl} requires {name}{spec}, which is not installed" if installed is None else
                 f"{decl} requires {name}{spec}, but {name} {installed} is installed")
        return finding(fid, "error", "python", title, key=f"{pkg}:{name}",
                       detail=f"No distribution named {name} is installed. Declared in {pkg}'s METADATA.",
                       evidence={"package": pkg, "version": "1.0", "requirement": name + spec, "requires": name,
                                 "installed": installed},
                       fix=f"Install what {pkg} declares.", commands=[cmd or f"/v/bin/python -m pip install '{name}{spec}'"])

    fs = [req("requirement-missing", "app", "alpha"), req("requirement-missing", "app", "beta", ">=2"),
          req("requirement-missing", "lib", "gamma"),
          req("requirement-missing", "app", "delta", cmd="/v/bin/python -m pip install --no-deps 'delta'"),
          req("requirement-version-unmet", "app", "eps", "<2", "2.1"),
          req("requirement-version-unmet", "app", "zeta", "<3", "3.0")]
    out = io.StringIO()
    emit(Report("check", findings=fs, checks=[]), Console(out=out, err=io.StringIO()))
    text = out.getvalue()
    assert "app 1.0 requires 2 packages that are not installed" in text
    assert "        - alpha\n        - beta>=2\n" in text
    assert "None of them is installed. Declared in app's METADATA." in text
    assert "$ /v/bin/python -m pip install alpha 'beta>=2'\n" in text
    assert "lib 1.0 requires gamma, which is not installed (lib:gamma)" in text  # another declarer
    assert "app 1.0 requires delta, which is not installed (app:delta)" in text  # its own pip run
    assert "app 1.0 requires 2 packages at releases other than the installed ones" in text
    assert "        - eps<2 (2.1 is installed)\n        - zeta<3 (3.0 is installed)\n" in text
    assert "6 error(s)" in text


class _Writes(io.StringIO):
    """stdout as PYTHONUNBUFFERED=1 leaves it: every write(), with its text, reaches the reader."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, s: str) -> int:
        if s:
            self.writes.append(s)
        return super().write(s)


def test_the_text_report_reaches_stdout_in_one_write():
    """Under PYTHONUNBUFFERED=1 every line of the report was its own write(2): `doctor check | head -1` then met the
    closed pipe (exit 141 in 3 of 6 runs here) where the README says a report shorter than the pipe's buffer is
    written whole and keeps its exit code. The text report is one write now, evidence and summary included; text
    meant for people on stderr (--json, a command whose stdout is data) still goes out line by line."""
    for verbose in (0, 1, -1):
        out = _Writes()
        c = Console(out=out, err=io.StringIO(), verbosity=verbose)
        said: list[str] = []

        def evidence(c: Console = c, said: list[str] = said) -> None:
            said.append("x")
            c.print("evidence: line 3")

        emit(_report(), c, before_summary=evidence)
        assert len(out.writes) == 1 and said, out.writes
        assert "[✗] cann" in out.writes[0] and ("evidence: line 3" in out.writes[0]) == (verbose >= 0)
        assert out.writes[0].endswith("\n") and out.writes[0].rstrip("\n").splitlines()[-1].startswith("check:")
    err = _Writes()
    c = Console(out=io.StringIO(), err=err, data_stdout=True)
    emit(_report(), c)
    assert len(err.writes) > 1 and c.out.getvalue() == ""
