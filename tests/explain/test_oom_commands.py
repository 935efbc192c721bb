"""The command a signature's fix prints is the first thing a user runs. A worker the kernel's OOM killer took (the
raylet's SYSTEM_ERROR line, Ray's own example log) is found in the kernel log and the dead worker's log, and fixed
by memory or limits: `doctor check` re-probes the software stack and says nothing about it."""

from __future__ import annotations

import re

from doctor.explain.stream import explain_lines

# the raylet's line, as signatures.toml's example for ray-worker-died-system-error quotes it from a real log
RAYLET = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
          "the problem, check the logs for the dead worker. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
          "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) "
          "The process is killed by SIGKILL by OOM killer due to high memory usage.")


def test_a_host_oom_kill_points_at_the_kernel_log_not_at_doctor_check():
    found = [f for f in explain_lines([RAYLET]) if f.id == "ray-worker-died-system-error"]
    assert found and found[0].fix is not None
    commands = found[0].fix.commands
    assert "doctor check" not in commands
    assert commands[0].startswith("dmesg") and "killed process" in commands[0]
    assert "doctor explain /tmp/ray/session_latest/logs" in commands  # Ray's default session log directory


def test_no_signature_about_the_oom_killer_or_host_memory_answers_with_doctor_check():
    from doctor.explain.db import read_signatures

    said = re.compile(r"OOM killer|host memory", re.I)
    wrong = [s.id for s in read_signatures().signatures
             if said.search(f"{s.title} {s.detail}") and "doctor check" in s.commands]
    assert wrong == []
