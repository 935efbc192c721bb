"""Run the trainer in its own process group with a time limit, isolated from any Ray cluster the user has.

Isolation (why each piece):
- `RAY_ADDRESS` (and the GCS port / namespace / job-config variables) are removed: with `RAY_ADDRESS` set,
  `ray.init()` inside main_ppo would join the user's cluster instead of starting its own.
- Ray gets its own temp dir (`RAY_TMPDIR` and the `ray_kwargs.ray_init._temp_dir` override): without an
  address, `ray.init()` looks for `<temp_dir>/ray_current_cluster` to reconnect to (ray `_private/services.py`
  `get_ray_address_from_environment`); a fresh temp dir means a fresh local cluster. Its GCS port is picked
  at random by `ray.init()`, and the dashboard (fixed default port 8265) is turned off by the caller's override.
- The trainer starts a new session (`start_new_session=True`), so Ctrl-C in the terminal reaches only the
  doctor, and the doctor ends exactly that process group.
- Clean-up never uses `ray stop --force` (it kills every Ray process of the user). It ends our process group,
  then any process whose command line references OUR Ray temp dir or whose environment carries OUR run id
  (Ray daemons that left the group, and workers whose title was rewritten), and their descendants.

Seam for tests: `trainer_script` (or env `DOCTOR_SMOKE_TRAINER`) replaces `-m verl.trainer.main_ppo` by a file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

TRAINER_MODULE = "verl.trainer.main_ppo"
TRAINER_ENV = "DOCTOR_SMOKE_TRAINER"
RUN_ID_ENV = "DOCTOR_SMOKE_RUN_ID"
RAY_TEMP_ENV = "DOCTOR_SMOKE_RAY_TEMP_DIR"

# Variables that would point Ray at an existing cluster or fix its ports.
RAY_CLUSTER_VARS = ("RAY_ADDRESS", "RAY_GCS_SERVER_PORT", "RAY_NAMESPACE", "RAY_JOB_CONFIG_JSON_ENV_VAR", "RAY_RUNTIME_ENV")


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def ray_temp_path(run_id: str) -> Path:
    """A short path under /tmp: Ray's unix sockets live below it and must stay under 107 bytes."""
    base = "/tmp" if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK) else tempfile.gettempdir()
    return Path(base) / f"doctor-ray-{run_id}"


def make_ray_temp_dir(run_id: str) -> Path:
    """Create this run's Ray temp dir (fails if it exists: a run id is never reused)."""
    path = ray_temp_path(run_id)
    path.mkdir(mode=0o700)
    return path


def ray_session_dir(ray_tmp: Path) -> Path:
    """What we pass to `ray.init(_temp_dir=…)`: Ray's default layout under RAY_TMPDIR, made explicit."""
    return ray_tmp / "ray"


def ray_isolation_overrides(ray_tmp: Path) -> list[str]:
    """Hydra override for verl's `ray_kwargs.ray_init` (passed to `ray.init(**…)`; the key is not in the yaml,
    hence `+`). `RAY_TMPDIR` in the environment gives the same temp dir to verl releases without ray_kwargs."""
    return [f"+ray_kwargs.ray_init._temp_dir={ray_session_dir(ray_tmp)}"]


def trainer_argv(python: str, overrides: Sequence[str], trainer_script: str | None = None) -> list[str]:
    """`python -m verl.trainer.main_ppo <overrides>`, or `python <script> <overrides>` for the test seam."""
    script = trainer_script or os.environ.get(TRAINER_ENV) or None
    head = [python, script] if script else [python, "-m", TRAINER_MODULE]
    return [*head, *overrides]


def run_env(base: Mapping[str, str], *, ray_tmp: Path, run_id: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The trainer's environment: the user's, minus Ray cluster pointers, plus isolation and `extra`."""
    env = {k: v for k, v in base.items() if k not in RAY_CLUSTER_VARS}
    env.update(extra or {})
    env.update(
        {
            "RAY_TMPDIR": str(ray_tmp),
            RAY_TEMP_ENV: str(ray_tmp),
            RUN_ID_ENV: run_id,
            "PYTHONUNBUFFERED": "1",
            "HYDRA_FULL_ERROR": "1",  # full traceback in the log, so the signature matcher sees the real error
            "RAY_USAGE_STATS_ENABLED": "0",  # air-gapped clusters: no usage-stats upload attempt
        }
    )
    for k in RAY_CLUSTER_VARS:
        env.pop(k, None)
    return env


@dataclass
class RunResult:
    argv: list[str]
    log_path: Path
    exit_code: int | None = None
    started: bool = False
    start_error: str | None = None
    timed_out: bool = False
    interrupted: bool = False
    wall_seconds: float = 0.0
    ended_pids: list[int] = field(default_factory=list)  # processes the clean-up had to end
    survivors: list[int] = field(default_factory=list)  # processes that would not die (should be empty)

    def to_dict(self) -> dict[str, object]:
        return {
            "argv": self.argv,
            "log": str(self.log_path),
            "exit_code": self.exit_code,
            "started": self.started,
            "start_error": self.start_error,
            "timed_out": self.timed_out,
            "interrupted": self.interrupted,
            "wall_seconds": round(self.wall_seconds, 3),
            "ended_pids": self.ended_pids,
            "survivors": self.survivors,
        }


LineHook = Callable[[str], None]


def run(
    argv: Sequence[str],
    env: Mapping[str, str],
    log_path: Path,
    *,
    timeout: float,
    ray_tmp: Path,
    run_id: str,
    cwd: str | os.PathLike[str] | None = None,
    on_line: LineHook | None = None,
    grace: float = 10.0,
    on_tick: Callable[[float], None] | None = None,
    tick_seconds: float = 60.0,
) -> RunResult:
    """Run `argv`, tee its output (stdout+stderr) to `log_path` and `on_line`, end it at `timeout` seconds;
    `on_tick(elapsed)` is called every `tick_seconds` while it runs (a heartbeat for quiet phases).

    Always sweeps this run's leftovers on the way out (normal exit, failure, timeout, Ctrl-C): a crashed
    driver can leave Ray daemons behind, and they must not outlive the run.
    """
    result = RunResult(argv=list(argv), log_path=log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
                list(argv),
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # only calls prctl: safe between fork and exec
            )
        except OSError as e:
            result.start_error = f"{argv[0]}: {e.strerror or e}"
            log.write(f"doctor: could not start {argv[0]}: {e}\n".encode())
            return result
        result.started = True
        pgid = proc.pid  # session leader: its pid is the group id
        reader = threading.Thread(target=_pump, args=(proc, log, on_line), daemon=True)
        reader.start()
        previous = _sigterm_as_interrupt()
        try:
            deadline = t0 + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    result.timed_out = True
                    _end_group(pgid, grace)
                    result.exit_code = _reap(proc)
                    break
                try:
                    result.exit_code = proc.wait(timeout=min(left, tick_seconds))
                    break
                except subprocess.TimeoutExpired:
                    if on_tick is not None and time.monotonic() < deadline:
                        on_tick(time.monotonic() - t0)
        except KeyboardInterrupt:
            result.interrupted = True
            _end_group(pgid, min(grace, 5.0))  # a CI cancel sends SIGKILL soon after: be quick
            result.exit_code = _reap(proc)
        finally:
            _restore_sigterm(previous)
            ended, survivors = sweep(pgid, ray_tmp, run_id, grace=min(grace, 5.0))
            result.ended_pids, result.survivors = ended, survivors
            reader.join(timeout=5.0)
            result.wall_seconds = time.monotonic() - t0
    return result


def _die_with_parent() -> None:
    """In the child: get SIGTERM if the doctor dies (even by SIGKILL). Ray's reaper then ends the rest of the
    group when the driver goes (ray `_private/services.py` start_reaper), so nothing outlives a killed doctor."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG = 1 (Linux)
    except Exception:  # noqa: BLE001 - not Linux / no libc: the timeout and sweep still apply
        pass


def _sigterm_as_interrupt() -> object:
    """A CI cancel or `kill` sends SIGTERM to the doctor: treat it like Ctrl-C so the run is cleaned up."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, handler)


def _restore_sigterm(previous: object) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]


def _pump(proc: subprocess.Popen[bytes], log: object, on_line: LineHook | None) -> None:
    assert proc.stdout is not None
    for raw in iter(proc.stdout.readline, b""):
        log.write(raw)  # type: ignore[attr-defined]
        log.flush()  # type: ignore[attr-defined]
        if on_line is not None:
            try:
                on_line(raw.decode("utf-8", errors="replace"))
            except Exception:  # noqa: BLE001 - a display hook must never break the run
                pass


def _reap(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        return None


def _killpg(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _end_group(pgid: int, grace: float) -> None:
    """SIGTERM the group (Ray and Python shut down cleanly on it), then SIGKILL whatever is left."""
    if not _killpg(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return
        time.sleep(0.1)
    _killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    import psutil

    for p in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error, OSError):
            continue
    return False


def find_run_processes(pgid: int | None, ray_tmp: Path, run_id: str) -> list[int]:
    """Pids of this run: members of its process group, processes whose command line mentions its Ray temp
    dir or whose environment carries its run id, and all their descendants. Never the doctor itself."""
    import psutil

    me = os.getpid()
    marker = str(ray_tmp)
    found: set[int] = set()
    for p in psutil.process_iter(["pid", "cmdline"]):
        if p.pid == me:
            continue
        try:
            if pgid is not None and os.getpgid(p.pid) == pgid:
                found.add(p.pid)
                continue
            cmd = " ".join(p.info.get("cmdline") or ())
            if marker and marker in cmd:
                found.add(p.pid)
                continue
            if p.environ().get(RUN_ID_ENV) == run_id:
                found.add(p.pid)
        except (psutil.Error, OSError):
            continue
    for pid in list(found):
        try:
            found.update(c.pid for c in psutil.Process(pid).children(recursive=True))
        except psutil.Error:
            continue
    found.discard(me)
    return sorted(found)


def sweep(pgid: int | None, ray_tmp: Path, run_id: str, *, grace: float = 5.0) -> tuple[list[int], list[int]]:
    """End every process of this run that is still alive. Returns (ended, survivors)."""
    import psutil

    pids = find_run_processes(pgid, ray_tmp, run_id)
    procs = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            p.terminate()
            procs.append(p)
        except psutil.Error:
            continue
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    _, still = psutil.wait_procs(alive, timeout=grace)
    return [p.pid for p in procs], [p.pid for p in still]
