"""`doctor check` run from the doctor's own venv (README's install) examines that venv unless --python names another.

Real run, 2026-12-06: a fresh clone, `python3 -m venv .venv && .venv/bin/python -m pip install . && .venv/bin/doctor
check` on an NPU-less box printed the two host errors and nothing about Python: every package rule skipped, as the
venv holds only the doctor and its five dependencies. On an Ascend host the same run reports torch and torch-npu
missing from the doctor's venv and sends the user to `doctor install`, not to --python. Here the target is a real
venv whose dist-info directories are those of that .venv (pip list there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes import make_site_packages, venv_without_pip

ROOT = Path(__file__).resolve().parents[2]
DOCTOR_VENV = {"verl-ascend-doctor": "0.1.0", "ahocorasick-rs": "1.0.3", "click": "8.5.1", "packaging": "26.4",
               "psutil": "7.2.2", "typing-extensions": "4.16.0"}


def _check(py: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=py.parent)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def _by_id(report: dict, fid: str) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == fid]


def test_the_doctors_own_venv_is_said_to_hold_no_stack(tmp_path):
    py, site = venv_without_pip(tmp_path / "venv")
    make_site_packages(site, DOCTOR_VENV)
    [f] = _by_id(_check(py), "target-holds-no-stack")
    assert f["severity"] == "warning"
    assert str(py) in f["detail"] and "--python PY" in f["fix"]["text"]
    # the user named it with --python: "the doctor examines the interpreter it runs in" was not what happened
    assert "--python named the doctor's own interpreter" in f["detail"] and "runs in unless" not in f["detail"]
    assert "interpreter with --python instead" in f["fix"]["text"]


def test_a_training_env_with_the_doctor_in_it_is_not(tmp_path):
    py, site = venv_without_pip(tmp_path / "train")
    make_site_packages(site, {**DOCTOR_VENV, "verl": "0.9.1"})
    report = _check(py)
    assert not _by_id(report, "target-holds-no-stack")
    [c] = [c for c in report["checks"] if c["id"] == "target-interpreter"]
    assert c["status"] == "skip" and "holds part of the stack" in c["reason"]


def test_an_interpreter_holding_none_of_the_stack_is_said_so_without_the_doctor_in_it(tmp_path):
    """`doctor check --python <a fresh venv>` on an NPU-less box (real run, 2026-12-07): the CANN and NPU errors, and
    nothing about Python: every package rule stands down where nothing says Ascend and verl is not installed, and
    target-holds-no-stack needed the doctor in the target. The examined interpreter holding none of the stack is a
    fact the probe has: one warning naming it, with install's dry-run line for it and the way to name another."""
    py, site = venv_without_pip(tmp_path / "empty")
    make_site_packages(site, {"click": "8.5.1"})
    report = _check(py)
    [f] = _by_id(report, "target-holds-no-stack")
    assert f["severity"] == "warning" and str(py) in f["title"] and "holds none of the training stack" in f["title"]
    assert f["fix"]["commands"] == [f"doctor install --dry-run --python {py}"]
    assert "`doctor check --python PY`" in f["fix"]["text"] and "with --python instead" in f["fix"]["text"]
    assert not [x for x in report["findings"] if x["severity"] == "error" and "python" in x["components"]]


def test_on_an_ascend_host_torch_not_installed_says_it_and_a_stack_keeps_it_quiet():
    """Where something says Ascend, torch-npu-installed's errors already name the missing torch and torch-npu of the
    interpreter examined: the warning stands down (and speaks when they are waived). A documented healthy stack has
    none of it."""
    from tests.stacks import ascend_stack, bare, diagnose_dict, healthy

    host = ascend_stack({}, "8.5.0")
    snap = {**host, "complete": True, "python": {"version": "3.11.9", "executable": "/opt/venv/bin/python"},
            "packages": {"click": {"version": "8.5.1"}}}
    ids = [f.id for f in diagnose_dict(snap).findings]
    assert "torch-not-installed" in ids and "target-holds-no-stack" not in ids
    waived = diagnose_dict(snap, ignore=("torch-not-installed",))
    assert "target-holds-no-stack" in [f.id for f in waived.findings]
    assert "target-holds-no-stack" in [f.id for f in diagnose_dict(bare(complete=True, packages={}, python={
        "executable": "/opt/venv/bin/python"})).findings]
    assert not [f for f in diagnose_dict(healthy()).findings if f.id == "target-holds-no-stack"]


def test_from_a_snapshot_the_fix_collects_again_rather_than_naming_a_flag_from_refuses(tmp_path):
    """`check --from FILE` refuses --python (exit 2): the fix for a snapshot of the doctor's own venv is to collect
    it again from the training interpreter, then check that file."""
    py, site = venv_without_pip(tmp_path / "venv")
    make_site_packages(site, DOCTOR_VENV)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    snap = tmp_path / "snap.json"
    r = subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", str(py), "-o", str(snap)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(snap)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    [f] = _by_id(json.loads(r.stdout), "target-holds-no-stack")
    fix = f["fix"]["text"]
    assert "`doctor collect --python PY -o FILE`, then `doctor check --from FILE`" in fix
    assert "doctor check --python" not in fix
    # the snapshot records that --python named that interpreter: the fix says to name another, as a live check's does
    assert json.loads(snap.read_text())["python"]["named"] is True
    assert "interpreter with --python instead" in fix and "--python named the doctor's own interpreter" in f["detail"]
    # a snapshot from before the field (or hand-written) says nothing of it: the plain wording
    doc = json.loads(snap.read_text())
    del doc["python"]["named"]
    snap.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(snap)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    [f] = _by_id(json.loads(r.stdout), "target-holds-no-stack")
    assert "with --python instead" not in f["fix"]["text"] and "runs in unless --python" in f["detail"]


def test_a_snapshot_of_the_doctors_own_interpreter_says_it_was_not_named(tmp_path):
    """`doctor collect` without --python examines the interpreter it runs in: `python.named` is false."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    snap = tmp_path / "snap.json"
    r = subprocess.run([sys.executable, "-m", "doctor", "collect", "-o", str(snap)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    py = json.loads(snap.read_text())["python"]
    assert py["named"] is False and py["executable"]


def test_deep_in_the_doctors_own_venv_is_one_error_in_json_junit_and_text(tmp_path):
    """`doctor check --deep` from README's install (real run, 2026-12-07, a fresh venv holding the doctor): three
    `import-*-failed` errors, each with the same fix sentence, beside target-holds-no-stack's warning. Now one error,
    the same in the three outputs, its fix (this host's form: `check --deep --python`) printed once; exit 1 still."""
    py, site = venv_without_pip(tmp_path / "venv")
    make_site_packages(site, DOCTOR_VENV)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    xml = tmp_path / "check.xml"
    base = [sys.executable, "-m", "doctor", "check", "--deep", "--deep-timeout", "60", "--python", str(py)]
    r = subprocess.run([*base, "--json", "--junit", str(xml)], capture_output=True, text=True, timeout=300, env=env,
                       cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert not _by_id(report, "target-holds-no-stack")
    assert [f["id"] for f in report["findings"] if f["check"] == "deep-imports"] == ["import-not-installed"]
    [f] = _by_id(report, "import-not-installed")
    assert f["severity"] == "error" and str(py) in f["title"]
    assert "`doctor check --deep --python PY`" in f["fix"]["text"]
    case = xml.read_text().split('name="deep-imports"', 1)[1].split("</testcase>", 1)[0]
    assert case.count("[error") == 1 and "import-not-installed" in case
    r = subprocess.run(base, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    text = r.stdout + r.stderr
    assert text.count("doctor check --deep --python PY") == 1 and "target-holds-no-stack" not in text


def test_smokes_preflight_names_smoke_in_the_fix_that_asks_for_the_training_python(tmp_path):
    """`doctor smoke` run from the doctor's own venv refuses at its preflight (a `doctor check` of that venv): the fix
    that says "name the training environment's interpreter" named `doctor check --python PY`, where the user runs
    `doctor smoke` (smoke takes --python too)."""
    from doctor.checks.diagnose import diagnose
    from doctor.probes import collect_snapshot

    py, site = venv_without_pip(tmp_path / "venv")
    make_site_packages(site, DOCTOR_VENV)
    snap = collect_snapshot(root=str(tmp_path / "root"), python=str(py), npu_smi_timeout=5.0, environ={})
    fixes = {c: [f.fix.text for f in diagnose([(None, snap, None)], local=True, command=c).findings
                 if f.id == "target-holds-no-stack" and f.fix] for c in ("check", "smoke")}
    assert fixes["check"] and "`doctor check --python PY`" in fixes["check"][0]
    assert fixes["smoke"] and "`doctor smoke --python PY`" in fixes["smoke"][0], fixes
    # no --python given: "name" it, not "instead"
    assert not any("instead" in f for fs in fixes.values() for f in fs)
