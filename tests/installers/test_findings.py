"""installers.findings: the post-install check judges like `doctor check` (known deviations honoured), and
--no-host-check keeps host findings out of the verdict."""

from __future__ import annotations

import pytest

from doctor.installers import findings as fd
from doctor.report import Report, finding


def test_post_install_check_honours_the_profiles_known_deviations(monkeypatch, profile) -> None:
    """Issue 15 item 7: the stand-alone check reports a warning the profile documents as a known deviation as info;
    the check after an install must too (it ran the checks without the deviations and warned)."""
    import dataclasses

    from doctor.knowledge.profiles import Deviation
    from doctor.snapshot.model import snapshot_from_dict
    from tests.cli.test_install import machine

    base = profile("verl-0.9.0-cann9.0.0-a2")
    d = machine(base, "aarch64", installed=True)
    monkeypatch.setattr("doctor.probes.collect_snapshot", lambda **_kw: snapshot_from_dict(d))
    warned = [f for f in fd.post_check("/", "/venv/bin/python", base, Report(command="install"))
              if f.severity.name == "WARNING"]
    assert warned, "the snapshot must raise a warning to document"
    dev = Deviation(finding=warned[0].id, reason="documented by this stack", source="https://example.invalid/doc")
    p = dataclasses.replace(base, deviations=(*base.deviations, dev))
    report = Report(command="install")
    got = {f.id: f for f in fd.post_check("/", "/venv/bin/python", p, report)}
    assert got[warned[0].id].severity.name == "INFO" and "known deviation" in got[warned[0].id].title
    assert report.checks


def test_no_host_check_moves_host_findings_out_of_the_verdict() -> None:
    r = Report(command="install", findings=[
        finding("cann-missing", "error", ("cann",), "no CANN", source="x"),
        finding("npu-missing", "error", ("npu", "driver"), "no NPU", source="x"),
        finding("torch-npu-torch-mismatch", "error", ("torch-npu", "torch"), "mismatch", source="x")])
    fd.split_host(r, no_host_check=False)
    assert len(r.findings) == 3
    fd.split_host(r, no_host_check=True)
    assert [f.id for f in r.findings] == ["torch-npu-torch-mismatch"]
    assert [f["id"] for f in r.extra["host_findings"]] == ["cann-missing", "npu-missing"]


def test_an_offline_installs_fixes_install_from_the_wheelhouse(tmp_path) -> None:
    """After `install --wheelhouse H --offline` on an air-gapped host, the post-install check's fixes were online pip
    lines (`pip install 'pillow'`, the profile's --extra-index-url): pip waits out its retries on the unreachable
    index and fails. They now install from H's wheels with --no-index, and say what to do for a package H lacks."""
    import os
    import subprocess

    from tests.installers.test_rollback_guard import bundled_pip_venv
    from tests.installers.wheelkit import make_wheel

    wheels = tmp_path / "house" / "wheels"
    make_wheel(wheels, "pillow", "11.0.0")
    py = bundled_pip_venv(tmp_path / "venv")
    f = finding("package-imports-undeclared-missing", "error", "verl", "verl imports PIL, pillow is not installed",
                fix="Install pillow into the same interpreter.",
                commands=(f"{py} -m pip install 'pillow' --extra-index-url https://download.pytorch.org/whl/cpu "
                          "--trusted-host download.pytorch.org", "doctor check"))
    [got] = fd.offline_fixes([f], str(wheels))
    assert got.fix.commands[1] == "doctor check" and "downloaded on the connected host" in got.fix.text
    assert "download.pytorch.org" not in got.fix.commands[0]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "PIP_RETRIES": "0"}
    cp = subprocess.run(got.fix.commands[0], shell=True, env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0 and "Successfully installed pillow-11.0.0" in cp.stdout, cp.stdout + cp.stderr


def test_a_failed_offline_install_names_the_wheelhouse_not_the_network() -> None:
    """An --offline install asks no index: a failed step there is a wheel the wheelhouse lacks or a damaged one, and
    the fix says so instead of 'network, index'."""
    from doctor.installers import execute as ex
    from doctor.installers.plan import INSTALL, Step

    step = Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",))
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail="pip exited with 1")], ok=False,
                     changed=True, restored={"ok": True}, error="torch-stack: pip exited with 1")
    online = fd.outcome_findings(out, "/log", "/t/bin/python")[0]
    assert "network, index" in str(online.fix)
    offline = fd.outcome_findings(out, "/log", "/t/bin/python", "/media/wh")[0]
    assert offline.id == "install-step-failed" and "network" not in str(offline.fix)
    assert "a wheel /media/wh lacks or that is damaged" in str(offline.fix) and "--download-only" in str(offline.fix)


@pytest.mark.parametrize("error, said", [
    ("[Errno 27] File too large", "ulimit -f"),  # real: `ulimit -f 4` in the shell, the journal's write
    ("[Errno 28] No space left on device", "df -h /t"),
])
def test_a_run_that_stops_writing_its_journal_names_that_and_the_cause_not_a_step_or_the_wheelhouse(
        error: str, said: str) -> None:
    """Before its first step a run records the environment; a write there that fails was reported as
    "install step ? failed" with the wheelhouse as the cause."""
    from doctor.installers import execute as ex

    out = ex.Outcome([ex.StepResult("torch-stack", "install", "torch", ex.NOT_RUN)], ok=False, changed=False,
                     error=error)
    f = fd.outcome_findings(out, "/log", "/t/bin/python", "/media/wh")[0]
    assert "?" not in f.title and "before its first step" in f.title and "unchanged" in f.title
    assert said in str(f.fix) and "/media/wh" not in str(f.fix), f.fix


# what pip (26.3 and the 23.2.1 `python3 -m venv` bundles: the same line) and uv printed here into a site-packages
# made immutable (`chattr +i`) and onto a full tmpfs (`mount -t tmpfs -o size=30m`)
PIP_EPERM = "ERROR: Could not install packages due to an OSError: [Errno 1] Operation not permitted: '/t/lib/python3.11/site-packages/torch'"
UV_EPERM = ("error: Failed to install: mbridge-0.15.1-py3-none-any.whl (mbridge==0.15.1)\n"
            "  cause: Failed to create directory `/t/lib/python3.11/site-packages/mbridge`\n"
            "  cause: failed to create directory `/t/lib/python3.11/site-packages/mbridge`: Operation not permitted (os error 1)")
PIP_ENOSPC = "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"
UV_ENOSPC = ("  cause: failed to copy file from /c/archive-v0/x/bigpkg-1.0.dist-info/RECORD to "
             "/t/lib/python3.11/site-packages/bigpkg-1.0.dist-info/RECORD: No space left on device (os error 28)")


@pytest.mark.parametrize("tail, where, kind", [
    (PIP_EPERM, "/t/lib/python3.11/site-packages/torch", "cannot be written (Operation not permitted)"),
    (UV_EPERM, "/t/lib/python3.11/site-packages/mbridge", "cannot be written (Operation not permitted)"),
    (PIP_ENOSPC, "/t", "No space left on device"),
    (UV_ENOSPC, "/t", "No space left on device"),
])
@pytest.mark.parametrize("house", [None, "/media/wh"])
def test_a_step_pip_could_not_write_names_the_path_and_the_cause(tail, where, kind, house) -> None:
    """A step that failed on the target's file system (read-only, immutable, not the user's, full) is neither the
    network nor the wheelhouse: the fix names the path and what to look at."""
    from doctor.installers import execute as ex
    from doctor.installers.plan import INSTALL, Step

    step = Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",))
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail="pip exited with 1",
                                    log_tail=["Installing collected packages: torch", *tail.splitlines()])],
                     ok=False, changed=True, restored={"ok": True}, error="torch-stack: pip exited with 1")
    f = fd.outcome_findings(out, "/log", "/t/bin/python", house)[0]
    fix = str(f.fix)
    assert kind in fix and where in fix, fix
    assert "network" not in fix and "damaged" not in fix and "/log" in fix
    if "space" in kind:
        assert f"df -h {where}" in fix
    else:
        both = f"{where.rsplit('/', 1)[0]} {where}"  # the directory that refused to hold it, and the path
        assert f"ls -ld {both}" in fix and f"lsattr -d {both}" in fix


def test_an_offline_installs_fix_whose_sentence_is_the_pip_line_installs_from_the_wheelhouse_too() -> None:
    """verl 0.7.1's cachetools need (package-code-needs-unmet) came out of the post-check of a real `--offline`
    install as `fix: /t/bin/python -m pip install 'cachetools'`, a sentence that is itself the command, with no
    command lines: offline_fixes read only the command lines and left it reaching for PyPI."""
    f = finding("package-code-needs-unmet", "error", "verl", "verl 0.7.1's code imports cachetools, which is not installed",
                fix="/t/bin/python -m pip install 'cachetools'")
    g = finding("package-code-needs-unmet", "error", "verl", "x",
                fix="git -C /t/src/MindSpeed checkout abc && /t/bin/python -m pip install -e /t/src/MindSpeed")
    prose = finding("x", "warning", "verl", "x", fix="Reinstall it; pip install keeps the rest.")
    got, got_g, same = fd.offline_fixes([f, g, prose], "/media/wh/wheels")
    assert got.fix.commands == ("/t/bin/python -m pip install 'cachetools' --no-index --find-links /media/wh/wheels",)
    assert "from the wheelhouse (/media/wh/wheels)" in got.fix.text and "pip install" not in got.fix.text
    assert got_g.fix.commands == ("git -C /t/src/MindSpeed checkout abc && /t/bin/python -m pip install -e "
                                  "/t/src/MindSpeed --no-index --find-links /media/wh/wheels",)
    assert same is prose


@pytest.mark.parametrize("house", [None, "/media/wh"])
def test_an_interrupted_run_is_not_told_to_fix_a_cause(house) -> None:
    """Ctrl-C (or SIGTERM from a scheduler) mid-step: the environment is restored and nothing is broken; the fix
    said "fix the cause (a wheel /media/wh lacks or that is damaged ...)" (real run: SIGINT twice then SIGTERM to the
    process group during an sdist build of triton-ascend)."""
    from doctor.installers import execute as ex
    from doctor.installers.plan import INSTALL, Step

    step = Step("triton-ascend", INSTALL, "triton-ascend", requirements=("triton-ascend==3.2.0",))
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail="interrupted by SIGINT",
                                    log_tail=["Building wheel for triton-ascend (pyproject.toml): started"])],
                     ok=False, changed=True, restored={"ok": True}, error="interrupted by SIGINT", interrupted="SIGINT")
    f = fd.outcome_findings(out, "/log", "/t/bin/python", house)[0]
    fix = str(f.fix)
    assert f.id == "install-interrupted" and "fix the cause" not in fix and "damaged" not in fix, fix
    assert "stopped by SIGINT" in fix and "run `doctor install` again" in fix and "/log" in fix


# the tails of a real trial (plain `python3 -m venv` targets, a mirror index without the pinned release): pip 26.3
# (--python TARGET) at final-pins of verl-0.8.0-cann9.0.0-a3 under --set transformers=5.2.0, and uv 0.13.9 at
# final-pins of verl-0.6.1-cann8.2.rc1-a2 under --set numpy=1.25.2
PIP_NO_VERSION = ["Requirement already satisfied: torchaudio==2.9.0+cpu in ./v80b/lib/python3.11/site-packages (2.9.0+cpu)",
                  "ERROR: Could not find a version that satisfies the requirement transformers==5.2.0 (from versions: 5.3.0)",
                  "ERROR: No matching distribution found for transformers==5.2.0"]
UV_NO_VERSION = ["Using Python 3.11.7 environment at: v61f", "error: No solution found when resolving dependencies",
                 "  cause: Because there is no version of numpy==1.25.2 and you require numpy==1.25.2, we can conclude "
                 "that your requirements are unsatisfiable."]


@pytest.mark.parametrize("tail, sets, want", [
    (PIP_NO_VERSION, {"transformers": "5.2.0"}, "`--set transformers=5.2.0` names a release the index this run used "
                                                "does not serve (it has: 5.3.0)"),
    (UV_NO_VERSION, {"numpy": "1.25.2"}, "`--set numpy=1.25.2` names a release the index this run used does not serve:"),
    (PIP_NO_VERSION, {"numpy": "1.25.2"}, None),  # the missing release is the profile's, not the user's pin
    (UV_NO_VERSION, {}, None),
])
def test_a_step_that_failed_over_an_unserved_set_pin_names_the_flag(tail, sets, want) -> None:
    from doctor.installers import execute as ex
    from doctor.installers.plan import INSTALL, Step

    step = Step("final-pins", INSTALL, "Re-pin", requirements=("transformers==5.2.0",))
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail="exited with 1", log_tail=tail)],
                     ok=False, changed=True, restored={"ok": True}, error="final-pins: exited with 1")
    f = fd.outcome_findings(out, "/log", "/t/bin/python", sets=sets)[0]
    assert f.id == "install-step-failed" and f.fix is not None
    if want is None:
        assert "--set" not in f.fix.text and "network, index, disk" in f.fix.text, f.fix.text
    else:
        assert f.fix.text.startswith(want) and "network" not in f.fix.text, f.fix.text
        assert f.fix.text.endswith("The full log: /log.")


def test_the_post_check_honours_a_set_pin_and_keeps_every_other_off_profile_finding() -> None:
    """`doctor check`'s own profile-pins rule, on the stack a --set left (xgrammar 0.1.32 where verl-0.8.0's profile
    pins 0.1.33, as the real trial installed it offline), warns package-off-profile with a fix that re-pins 0.1.33:
    undoing the flag, and offline failing (the wheelhouse holds 0.1.32). After the install that warning goes for the
    pinned package at the pinned version, and stays for anything else off the profile."""
    from doctor.checks.packages import profile_pins
    from doctor.checks.runner import CheckContext
    from doctor.knowledge.profiles import load_profiles
    from doctor.snapshot.model import snapshot_from_dict

    p = next(x for x in load_profiles() if x.name == "verl-0.8.0-cann9.0.0-a3")
    pkgs = {"verl": "0.8.0", "xgrammar": "0.1.32", "transformers": "5.2.0"}
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {k: {"version": v} for k, v in pkgs.items()}})
    found = list(profile_pins(CheckContext(snapshot=snap, profile=p)))
    off = {f.evidence["package"] for f in found if f.id == "package-off-profile"}
    assert {"xgrammar", "transformers"} <= off, off
    kept = fd.set_pins_honoured(found, {"xgrammar": "0.1.32"})
    assert {f.evidence["package"] for f in kept if f.id == "package-off-profile"} == off - {"xgrammar"}
    # a --set at another version than the one installed: the warning stays
    assert fd.set_pins_honoured(found, {"xgrammar": "0.1.31"}) == found
