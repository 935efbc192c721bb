"""`doctor explain` on the logs of real runs made here: a Ray job (its driver output and every file of its session's
logs/ directory), a two-process torch.distributed (gloo) job under torchrun, and a transformers model training on
CPU. Healthy runs must give no error; a real failure (transformers' Trainer without accelerate) must be named. The
logs are the real programs' own output, not written by hand; nothing is downloaded (the model is built from a
config)."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doctor.explain.stream import explain_path
from doctor.report import Severity

HERE = Path(__file__).parent / "real_runs"


def _run(args: list[str], tmp: Path, name: str, ok: bool = True) -> Path:
    env = {**os.environ, "HOME": str(tmp / "home"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    (tmp / "home").mkdir(exist_ok=True)
    out = tmp / f"{name}.log"
    with out.open("wb") as fh:
        rc = subprocess.run([sys.executable, *args], stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                            timeout=300).returncode
    assert (rc == 0) is ok, out.read_text(errors="replace")[-3000:]
    return out


def _errors(path: Path) -> list[tuple[str, object]]:
    return [(f.id, f.evidence.get("text")) for f in explain_path(str(path))[0] if f.severity is Severity.ERROR]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_healthy_ray_job_and_its_session_logs_give_no_error(tmp_path):
    import shutil
    import tempfile

    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    try:
        _ray_job(tmp_path, temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _ray_job(tmp_path: Path, temp: Path) -> None:
    driver = _run([str(HERE / "ray_job.py"), str(temp)], tmp_path, "ray")
    assert "results [0, 2, 4]" in driver.read_text(errors="replace")
    logs = [p for p in (temp / "session_latest" / "logs").iterdir() if p.is_file() and p.stat().st_size]
    assert any(p.name.startswith("raylet") for p in logs) and any(p.name.startswith("gcs_server") for p in logs)
    found = {p.name: _errors(p) for p in [driver, *logs]}
    assert not any(found.values()), {k: v for k, v in found.items() if v}
    # the whole directory, as a user points at it: one note for the logs that say nothing (dashboard, monitor, idle
    # workers: thirteen notes before), and its events/ subdirectory is no node of its own
    from doctor.explain.multi import explain_many

    findings, extra = explain_many([str(temp / "session_latest" / "logs")])
    assert not [f for f in findings if f.severity is Severity.ERROR]
    quiet = [f for f in findings if f.id == "no-known-signature"]
    assert len(quiet) == 1 and len(quiet[0].evidence["logs"]) > 5, [f.title for f in quiet]
    assert "events" not in {log["node"] for log in extra["logs"]}


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_second_ray_on_the_host_leaves_only_notes_in_its_session_logs(tmp_path):
    """Two Ray instances on one host (another user's, another job's): the second cannot bind Ray's fixed metrics
    and agent ports and logs exceptions and retries about it, yet its job runs. explain must not call that
    session's logs failed: the notes it gives are info, and they name Ray's own ports."""
    import shutil
    import tempfile

    first, second = (Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")) for _ in range(2))
    ready, release = tmp_path / "ready", tmp_path / "release"
    env = {**os.environ, "HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0"}
    holder = subprocess.Popen([sys.executable, str(HERE / "ray_hold.py"), str(first), str(ready), str(release)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)
    try:
        for _ in range(1200):
            if ready.exists() or holder.poll() is not None:
                break
            time.sleep(0.1)
        assert ready.exists(), "the first Ray instance did not come up"
        _ray_job(tmp_path, second)
        logs = [p for p in (second / "session_latest" / "logs").iterdir() if p.is_file() and p.stat().st_size]
        notes = {f.id for p in logs for f in explain_path(str(p))[0] if f.severity is Severity.INFO}
        assert "ray-metrics-port-taken" in notes, notes
    finally:
        release.write_text("go")
        holder.wait(timeout=120)
        shutil.rmtree(first, ignore_errors=True)
        shutil.rmtree(second, ignore_errors=True)


def test_a_healthy_torchrun_gloo_job_gives_no_error(tmp_path):
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp.py")], tmp_path, "ddp")
    assert log.read_text(errors="replace").count("[1.0, 1.0]") == 2  # both ranks (their lines may interleave)
    assert _errors(log) == []


def test_a_healthy_transformers_training_loop_gives_no_error(tmp_path):
    log = _run([str(HERE / "train_loop.py")], tmp_path, "train")
    text = log.read_text(errors="replace")
    assert "step 3 loss" in text and "done" in text
    assert _errors(log) == []


@pytest.mark.skipif(importlib.util.find_spec("accelerate") is not None, reason="accelerate is installed here")
def test_transformers_trainer_without_accelerate_is_named_as_the_package_it_asks_for(tmp_path):
    log = _run([str(HERE / "train_loop.py"), "trainer", str(tmp_path / "out")], tmp_path, "trainer", ok=False)
    (first, *_) = explain_path(str(log))[0]
    assert first.severity is Severity.ERROR and first.id == "package-version-required", (first.id, first.components)
    assert "accelerate" in first.title and first.components[0] == "python"


def _failing_ray_job(tmp_path: Path, name: str) -> Path:
    import shutil
    import tempfile

    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    try:
        return _run([str(HERE / f"{name}.py"), str(temp)], tmp_path, name, ok=False)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_ray_task_that_rejects_its_config_is_read_at_the_jobs_own_frame(tmp_path):
    log = _failing_ray_job(tmp_path, "ray_fail")
    first = explain_path(str(log))[0][0]
    assert (first.id, first.components) == ("error-in-user-code", ("config", "model")), (first.id, first.components)
    assert "ray_fail.py" in first.evidence["read"]


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_ray_task_failing_on_an_unknown_error_names_the_tasks_exception_not_rays_wrapper(tmp_path):
    log = _failing_ray_job(tmp_path, "ray_unknown")
    found = {f.id: f for f in explain_path(str(log))[0]}
    # no signature knows it: the task's traceback says where it was raised (the driver's INFO line right above the
    # uncaught traceback is no sign it was handled: the job died on it)
    assert list(found) == ["exception-in-traceback"], list(found)
    # Ray prints `ray.exceptions.RayTaskError(BadZipFile): ray::unpack() (pid=…)` and the task's traceback below it
    first = found["exception-in-traceback"]
    assert first.severity is Severity.ERROR and first.evidence["text"] == "zipfile.BadZipFile: File is not a zip file"
    assert any("RayTaskError(BadZipFile)" in line for line in log.read_text().splitlines()[: first.evidence["line"] - 1])
    assert first.title.startswith("zipfile.BadZipFile raised in the job's own code (unpack)"), first.title


def test_a_torchrun_rank_that_fails_is_the_root_and_the_others_are_knock_ons(tmp_path):
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp_fail.py")], tmp_path, "ddp_fail", ok=False)
    found = explain_path(str(log))[0]
    assert (found[0].id, found[0].components) == ("error-in-user-code", ("config", "model"))
    assert "ddp_fail.py" in found[0].evidence["read"]
    assert "torch-elastic-child-failed" in [f.id for f in found[1:]]


def test_ray_260s_authentication_notice_is_info_and_leaves_an_unknown_failure_unknown():
    """Ray 2.60 logs `WARNING authentication_token_setup.py:85 -- Token authentication is enabled for this Ray
    cluster...` at every start (a real driver log's first line): an info notice, never a warning, so a log whose
    failure no signature knows still says that it knows none."""
    log = ("2026-12-06 14:04:37,760\tWARNING authentication_token_setup.py:85 -- Token authentication is enabled for "
           "this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out. For more information, see "
           "https://docs.ray.io/en/latest/ray-security/token-auth.html\n"
           "2026-12-06 14:04:42,488\tINFO worker.py:2038 -- Started a local Ray instance.\n")
    from doctor.explain.stream import explain_lines

    found = {f.id: f.severity for f in explain_lines(log.splitlines())}
    assert found == {"ray-token-auth-notice": Severity.INFO}, found  # was a message-owner warning
    failing = log + ("Traceback (most recent call last):\n  File \"/usr/lib/python3.11/zipfile.py\", line 1, in x\n"
                     "    raise BadZipFile(\"File is not a zip file\")\nzipfile.BadZipFile: File is not a zip file\n")
    found = {f.id: f.severity for f in explain_lines(failing.splitlines())}
    assert found.get("no-known-signature") is Severity.INFO and Severity.WARNING not in found.values(), found


def test_the_loaders_ignored_ld_preload_line_is_a_note_and_the_real_failure_stays_first(tmp_path):
    """An LD_PRELOAD entry that does not exist (an Ubuntu jemalloc path on an openEuler image) makes the real ld.so
    print `ERROR: ld.so: object '...' from LD_PRELOAD cannot be preloaded (cannot open shared object file): ignored.`
    in every process, and the process runs on. explain called that line system-library-missing, an error; it is an
    info note, and the run's own failure is still the first finding."""
    env = {**os.environ, "LD_PRELOAD": "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"}
    out = tmp_path / "preload.log"
    with out.open("wb") as fh:
        subprocess.run(["/bin/sh", "-c", f"{sys.executable} -c 'print(1)'; {sys.executable} -c 'import torch_npu'"],
                       stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, timeout=120)
    text = out.read_text()
    assert "from LD_PRELOAD cannot be preloaded" in text and "No module named 'torch_npu'" in text, text
    found = explain_path(str(out))[0]
    assert found[0].severity is Severity.ERROR and "torch_npu" in str(found[0].evidence.get("text")), found[0]
    notes = {f.id: f.severity for f in found[1:]}
    assert notes.get("ld-preload-ignored") is Severity.INFO and "system-library-missing" not in notes, notes
    healthy = tmp_path / "healthy.log"
    healthy.write_text("\n".join(ln for ln in text.splitlines() if "torch_npu" not in ln and "Traceback" not in ln
                                 and not ln.startswith(" ")) + "\n")
    assert [(f.id, f.severity) for f in explain_path(str(healthy))[0]] == [("ld-preload-ignored", Severity.INFO)]
