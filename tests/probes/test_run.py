"""run_bounded: outcomes are data (ok / missing / timeout / error) and a timeout leaves no process."""

from __future__ import annotations

import os
import time
from pathlib import Path

from doctor.probes._run import run_bounded
from tests.fakes import write


def test_ok_with_any_exit_code(tmp_path: Path) -> None:
    exe = write(tmp_path / "t", "#!/bin/sh\necho out; echo err >&2; exit 4\n", mode=0o755)
    r = run_bounded([str(exe)], 10)
    assert (r.status, r.returncode, r.out, r.err) == ("ok", 4, "out\n", "err\n")


def test_stdin_is_delivered(tmp_path: Path) -> None:
    r = run_bounded(["cat"], 10, stdin_data=b"hello")
    assert r.out == "hello"


def test_missing_and_not_executable(tmp_path: Path) -> None:
    assert run_bounded([str(tmp_path / "nope")], 5).status == "missing"
    plain = write(tmp_path / "plain", "x")
    r = run_bounded([str(plain)], 5)
    assert r.status == "error" and "cannot run" in r.error


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    exe = write(tmp_path / "t", f"#!/bin/sh\necho started\nsleep 600 & echo $! > {pidfile}\nwait\n", mode=0o755)
    r = run_bounded([str(exe)], 1.0)
    assert r.status == "timeout" and "killed" in r.error
    assert r.out == "started\n"  # what it printed before the deadline is kept
    pid = int(pidfile.read_text())
    # SIGKILL went to the whole group before run_bounded returned; the sleeping child dies when it next runs, which
    # on a loaded machine is not at once (a clean-clone CI read it still 'R'): wait for that, boundedly
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _state(pid) not in (None, "Z", "X"):
        time.sleep(0.05)
    assert _state(pid) in (None, "Z", "X")


def _state(pid: int) -> str | None:
    """The process's state letter from /proc, None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def test_no_budget_left() -> None:
    assert run_bounded(["true"], 0).status == "timeout"


def test_start_then_finish_overlaps_and_collects(tmp_path):
    from doctor.probes._run import finish, start

    st = start(["cat"], stdin_data=b"x" * 1000)
    r = finish(st, 10)
    assert r.status == "ok" and r.stdout == b"x" * 1000


def test_start_missing_binary_is_data():
    from doctor.probes._run import finish, start

    r = finish(start(["/nonexistent/bin/thing"]), 5)
    assert r.status == "missing" and "not found" in (r.error or "")


def test_finish_timeout_kills_the_started_group(tmp_path):
    from doctor.probes._run import finish, start

    pidfile = tmp_path / "child.pid"
    st = start(["sh", "-c", f"sleep 300 & echo $! > {pidfile}; sleep 300"])
    time.sleep(0.3)
    r = finish(st, 0.5)
    assert r.status == "timeout"
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10  # killed, and dead once it next runs (see above)
    while time.monotonic() < deadline and _state(child) not in (None, "Z", "X"):
        time.sleep(0.05)
    assert _state(child) in (None, "Z", "X")
    assert os.getpgid(os.getpid()) != st.proc.pid  # the child had its own group
