"""checks.runner: how one check's outcome becomes its state."""

from __future__ import annotations

from doctor.checks.runner import Check, CheckContext, run_one, skip
from doctor.report import CheckStatus, finding
from doctor.snapshot.model import snapshot_from_dict


def _ctx() -> CheckContext:
    return CheckContext(snapshot=snapshot_from_dict({"schema": "doctor.snapshot/1"}))


def test_a_skip_before_any_finding_is_skipped_with_its_reason() -> None:
    def fn(ctx):
        skip("nothing to look at")
        yield  # pragma: no cover

    found, res = run_one(Check("t", "system", fn), _ctx())
    assert found == [] and res.status is CheckStatus.SKIP and res.reason == "nothing to look at"


def test_a_live_checks_skip_reasons_speak_of_this_machine_not_of_a_snapshot() -> None:
    """`doctor check -v` on this host said "npu-smi's device list is not in the snapshot": no snapshot was given.
    A live check (`local`: probed here) says every skip reason of this machine; one from --from keeps its words.
    Every literal skip reason in doctor/checks is read, so a new one cannot bring the word back."""
    import ast
    from pathlib import Path

    from doctor.checks.runner import said_of_this_machine

    def fn(ctx):
        skip("npu-smi's device list is not in the snapshot")
        yield  # pragma: no cover

    live = CheckContext(snapshot=_ctx().snapshot, options={"local": True})
    assert run_one(Check("t", "npu", fn), live)[1].reason == (
        "npu-smi's device list was not found by the probe of this machine")
    assert run_one(Check("t", "npu", fn), _ctx())[1].reason == "npu-smi's device list is not in the snapshot"
    reasons = []
    for path in sorted(Path(__file__).resolve().parents[2].joinpath("doctor", "checks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "skip" and node.args:
                for part in ast.walk(node.args[0]):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        reasons.append(part.value)
    said = [r for r in reasons if "snapshot" in r]
    assert len(said) > 50  # the sources are read
    assert [said_of_this_machine(r) for r in said if "snapshot" in said_of_this_machine(r)] == []


def test_a_skip_after_a_finding_keeps_the_finding() -> None:
    """A check that reports, then finds the rest cannot be judged, must not lose what it reported."""
    def fn(ctx):
        yield finding("t-bad", "error", ("system",), "bad", fix="fix it")
        skip("the rest is unknown")

    found, res = run_one(Check("t", "system", fn), _ctx())
    assert [f.id for f in found] == ["t-bad"] and res.status is CheckStatus.of(found)


def test_pip_fix_commands_run_by_the_snapshots_interpreter(tmp_path):
    """`check --python /tmp/t2/bin/python`: a bare `pip install ...` would run the first pip on PATH (the doctor's
    own venv), so every check's `pip ...` fix is rendered as `<snapshot's python> -m pip ...` (trial item 6)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = {"schema": "doctor.snapshot/1", "complete": True,
           "python": {"version": "3.11.9", "implementation": "CPython", "executable": "/tmp/t 2/bin/python"},
           "host": {"arch": "x86_64"},
           "packages": {"requests": {"version": "2.32.3", "requires_dist": ["urllib3<3,>=1.26"]},
                        "urllib3": {"version": "1.25.0", "requires_dist": []}}}
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(snap), "--only", "packages"],
                       capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                       env={**os.environ, "PYTHONPATH": str(root)})
    rep = json.loads(r.stdout)
    (f,) = [f for f in rep["findings"] if f["id"] == "requirement-version-unmet"]
    assert f["fix"]["commands"] == ["'/tmp/t 2/bin/python' -m pip install 'urllib3<3,>=1.26'"]
    # without a named interpreter the command stays pip's own
    del doc["python"]["executable"]
    snap.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(snap), "--only", "packages"],
                       capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                       env={**os.environ, "PYTHONPATH": str(root)})
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "requirement-version-unmet"]
    assert f["fix"]["commands"] == ["pip install 'urllib3<3,>=1.26'"]


def test_load_tables_loads_what_the_checks_then_read_and_leaves_a_failing_table_to_its_check(monkeypatch) -> None:
    """A live check loads the later-bounds and code-needs tables while the target interpreter is probed; the
    checks then read the same objects. A table that fails to load does not stop the run: its check meets the
    failure and reports it as before."""
    from doctor.checks import later_bounds, packages
    from doctor.checks.runner import load_all, load_tables
    from doctor.knowledge import code_needs
    from doctor.knowledge import later_bounds as bounds_table

    monkeypatch.setattr(bounds_table, "_CACHE", {})
    monkeypatch.setattr(code_needs, "_TABLES", {})
    registry = load_all()
    assert registry["later-release-bounds"].tables and registry["code-needs"].tables
    load_tables(registry)
    assert [t is later_bounds._table() for t in bounds_table._CACHE.values()] == [True]
    assert [t is packages._code_needs_table() for t in code_needs._TABLES.values()] == [True]

    def broken() -> object:
        raise ValueError("malformed table")

    load_tables({"x": Check(id="x", area="packages", fn=lambda ctx: iter(()), tables=(broken,))})
