"""The runner against a fake trainer: success, failure with a known signature, a hang ended at the timeout
with nothing of the run left alive (and nothing else touched), and the Ray isolation of its environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from doctor.smoke import runner
from doctor.smoke.logparse import scan_file

FAKE = str(Path(__file__).with_name("fake_trainer.py"))


@pytest.fixture(autouse=True)
def _ray_dirs_removed(monkeypatch):
    """The runner tests make real /tmp/doctor-ray-<id> dirs (the run owns them in `doctor smoke`): remove them."""
    made: list[Path] = []
    real = runner.make_ray_temp_dir
    monkeypatch.setattr(runner, "make_ray_temp_dir", lambda run_id: made.append(real(run_id)) or made[-1])
    yield
    import shutil

    for d in made:
        shutil.rmtree(d, ignore_errors=True)


def _run(tmp_path: Path, mode: str, timeout: float = 30.0, env_extra: dict[str, str] | None = None, steps: int = 1,
         on_line=None):
    run_id = runner.new_run_id()
    ray_tmp = runner.make_ray_temp_dir(run_id)
    base = {**os.environ, "FAKE_TRAINER_MODE": mode, **(env_extra or {})}
    env = runner.run_env(base, ray_tmp=ray_tmp, run_id=run_id)
    argv = runner.trainer_argv(sys.executable, [f"trainer.total_training_steps={steps}"], FAKE)
    res = runner.run(argv, env, tmp_path / "run.log", timeout=timeout, ray_tmp=ray_tmp, run_id=run_id,
                     cwd=str(tmp_path), on_line=on_line, grace=2.0)
    return res, ray_tmp, run_id


def test_success_logs_to_file_and_streams_lines(tmp_path: Path) -> None:
    seen: list[str] = []
    res, ray_tmp, _ = _run(tmp_path, "pass", steps=2, on_line=seen.append)
    assert res.started and res.exit_code == 0 and not res.timed_out
    text = (tmp_path / "run.log").read_text()
    assert "step:2 - " in text and "Total training steps: 2" in text
    assert any("step:1 - " in line for line in seen)
    scan = scan_file(str(tmp_path / "run.log"))
    assert sorted(scan.steps) == [1, 2] and scan.total_training_steps == 2
    assert res.survivors == []
    ray_tmp.rmdir()


def test_failure_exit_code_and_signature_in_log(tmp_path: Path) -> None:
    res, ray_tmp, _ = _run(tmp_path, "fail")
    assert res.exit_code == 1 and not res.timed_out
    log = tmp_path / "run.log"
    assert "libhccl.so: cannot open shared object file" in log.read_text()
    from doctor.explain.signatures import explain_file

    ids = [f.id for f in explain_file(str(log))]
    assert "cann-libhccl-missing" in ids
    ray_tmp.rmdir()


def test_hang_is_ended_at_timeout_with_no_orphans(tmp_path: Path) -> None:
    # An unrelated process (the user's own, e.g. their Ray cluster) that must survive the clean-up.
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    pids_file = tmp_path / "pids.json"
    try:
        t0 = time.monotonic()
        res, ray_tmp, _ = _run(tmp_path, "hang", timeout=3.0, env_extra={"FAKE_TRAINER_PIDS": str(pids_file)})
        elapsed = time.monotonic() - t0
        assert res.timed_out and res.exit_code is not None and res.exit_code < 0
        assert elapsed < 25
        children = json.loads(pids_file.read_text())
        assert len(children) == 3
        # The trainer, its same-group child, the daemon naming our temp dir and the env-marked worker: all gone.
        for pid in [*children, res_pid(res)]:
            assert not _alive(pid), f"pid {pid} survived"
        # The two that left the process group were found by the sweep (temp-dir cmdline, run-id env).
        assert set(children[1:]) <= set(res.ended_pids)
        assert res.survivors == []
        assert _alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()
    assert "Training Progress" in (tmp_path / "run.log").read_text()


def res_pid(res: runner.RunResult) -> int:
    # The trainer's pid is printed in its Ray-style prefix.
    text = Path(res.log_path).read_text()
    return int(text.split("(TaskRunner pid=")[1].split(")")[0])


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_environment_is_isolated_from_user_ray(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    user = {"RAY_ADDRESS": "10.0.0.1:6379", "RAY_GCS_SERVER_PORT": "6379", "FAKE_TRAINER_DUMP": str(dump)}
    res, ray_tmp, run_id = _run(tmp_path, "pass", env_extra=user)
    assert res.exit_code == 0
    env = json.loads(dump.read_text())["env"]
    assert "RAY_ADDRESS" not in env and "RAY_GCS_SERVER_PORT" not in env
    assert env["RAY_TMPDIR"] == str(ray_tmp) and env[runner.RUN_ID_ENV] == run_id
    assert env["HYDRA_FULL_ERROR"] == "1"
    assert len(str(runner.ray_session_dir(ray_tmp))) < 60  # room for Ray's session/sockets path (< 107 bytes)
    ray_tmp.rmdir()


def test_missing_interpreter_is_reported_not_raised(tmp_path: Path) -> None:
    run_id = runner.new_run_id()
    res = runner.run(["/nonexistent/python3", "-m", "x"], {}, tmp_path / "log", timeout=5, ray_tmp=tmp_path,
                     run_id=run_id)
    assert not res.started and "/nonexistent/python3" in (res.start_error or "")


def test_trainer_argv_uses_module_or_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runner.TRAINER_ENV, raising=False)
    assert runner.trainer_argv("py", ["a=1"]) == ["py", "-m", "verl.trainer.main_ppo", "a=1"]
    assert runner.trainer_argv("py", ["a=1"], "/f.py") == ["py", "/f.py", "a=1"]
    monkeypatch.setenv(runner.TRAINER_ENV, "/g.py")
    assert runner.trainer_argv("py", []) == ["py", "/g.py"]


def test_ray_isolation_overrides_name_the_temp_dir(tmp_path: Path) -> None:
    ov = runner.ray_isolation_overrides(tmp_path)
    assert f"+ray_kwargs.ray_init._temp_dir={tmp_path}/ray" in ov
    assert len(ov) == 1


@pytest.mark.slow
def test_trainer_dies_with_a_killed_doctor(tmp_path: Path) -> None:
    """SIGKILL to the doctor cannot be caught; the trainer still gets SIGTERM (PR_SET_PDEATHSIG)."""
    import signal

    log = tmp_path / "run.log"
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from doctor.smoke import runner\n"
        f"rt = Path({str(tmp_path)!r}) / 'ray'\n"
        "rt.mkdir()\n"
        "env = runner.run_env({**os.environ, 'FAKE_TRAINER_MODE': 'hang', "
        f"'FAKE_TRAINER_PIDS': {str(tmp_path / 'pids.json')!r}}}, ray_tmp=rt, run_id='killtest')\n"
        f"runner.run(runner.trainer_argv(sys.executable, [], {FAKE!r}), env, Path({str(log)!r}), timeout=120,"
        " ray_tmp=rt, run_id='killtest')\n"
    )
    doctor = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 30
    while "TaskRunner pid=" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    trainer = res_pid(runner.RunResult(argv=[], log_path=log))
    doctor.send_signal(signal.SIGKILL)
    doctor.wait()
    deadline = time.monotonic() + 10
    while _alive(trainer) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(trainer)
    # Its helpers (left alive here: no Ray reaper in the fake) are still this run's; end them by run id.
    ended, survivors = runner.sweep(None, tmp_path / "ray", "killtest", grace=2.0)
    assert survivors == []


def test_heartbeat_ticks_while_the_trainer_is_quiet(tmp_path: Path) -> None:
    ticks: list[float] = []
    run_id = runner.new_run_id()
    ray_tmp = runner.make_ray_temp_dir(run_id)
    argv = [sys.executable, "-c", "import time; time.sleep(1.2)"]
    res = runner.run(argv, runner.run_env(os.environ, ray_tmp=ray_tmp, run_id=run_id), tmp_path / "log",
                     timeout=30, ray_tmp=ray_tmp, run_id=run_id, on_tick=ticks.append, tick_seconds=0.3)
    assert res.exit_code == 0 and not res.timed_out
    assert len(ticks) >= 2 and ticks == sorted(ticks)
    ray_tmp.rmdir()
