"""Run an external command with a hard deadline and leave nothing behind.

`npu-smi` can hang on a sick card (principle 4 of docs/design.md). The child gets its own session
(`start_new_session=True`), so on timeout the whole process group — the command and anything it
spawned — is killed with SIGKILL. The outcome is data (`ok`, `missing`, `timeout`, `error`), never an
exception.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass
class RunResult:
    """How an external command went, as data: a hung or missing command is a status, not an exception."""

    argv: list[str]
    status: str  # ok (ran, any exit code) | missing | timeout | error (could not start)
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    seconds: float = 0.0
    error: str | None = None

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except OSError:
        pass


@dataclass
class Started:
    """A child started by `start`, to be collected by `finish`. `result` is set when it could not start."""

    argv: list[str]
    t0: float
    proc: subprocess.Popen[bytes] | None = None
    result: RunResult | None = None


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin_data: bytes | None = None,
) -> Started:
    """Start argv (never through a shell) in its own session and hand it its whole stdin now, so it works
    while the caller does something else. stdin_data must fit a pipe buffer (64 KiB) or the write blocks
    until the child reads it."""
    t0 = time.monotonic()
    args = [str(a) for a in argv]
    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as e:
        return Started(args, t0, result=RunResult(args, "missing", seconds=time.monotonic() - t0,
                                                  error=f"not found: {e.filename or args[0]}"))
    except OSError as e:
        return Started(args, t0, result=RunResult(args, "error", seconds=time.monotonic() - t0,
                                                  error=f"cannot run {args[0]}: {e.strerror or e}"))
    if stdin_data is not None and proc.stdin is not None:
        try:
            proc.stdin.write(stdin_data)
        except BrokenPipeError:  # it exited without reading: its output and exit code will say why
            pass
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.stdin = None  # communicate() must not touch the closed pipe
    return Started(args, t0, proc)


def finish(started: Started, timeout: float) -> RunResult:
    """Wait for a started child at most `timeout` seconds (counted from now); on timeout kill its group."""
    if started.result is not None:
        return started.result
    proc, args, t0 = started.proc, started.argv, started.t0
    assert proc is not None
    if timeout <= 0:
        _kill_group(proc)
        proc.wait()
        return RunResult(args, "timeout", proc.returncode, seconds=time.monotonic() - t0, error="no time left in the budget")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        # The group is dead; collect what it printed without waiting on pipes a stray grandchild
        # outside the group might still hold open.
        try:
            out, err = proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            proc.wait(timeout=1.0)
        return RunResult(args, "timeout", proc.returncode, out or b"", err or b"", time.monotonic() - t0,
                         f"no answer within {timeout:.1f} s; killed")
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    return RunResult(args, "ok", proc.returncode, out, err, time.monotonic() - t0)


def run_bounded(
    argv: Sequence[str],
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin_data: bytes | None = None,
) -> RunResult:
    """Run argv (never through a shell) for at most `timeout` seconds."""
    if timeout <= 0:
        return RunResult([str(a) for a in argv], "timeout", seconds=0.0, error="no time left in the budget")
    return finish(start(argv, env=env, cwd=cwd, stdin_data=stdin_data), timeout)
