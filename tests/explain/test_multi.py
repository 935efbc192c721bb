"""`explain` over several logs: a simulated 4-node job whose logs are built from real failure lines.

Node c ran out of NPU memory first; the other three nodes then report what ranks report when a peer dies (HCCL
notify-wait / socket timeouts, a lost heartbeat). The messages are copied from public reports (URLs below); only
timestamps, PIDs and addresses were aligned into one coherent timeline.
"""

from __future__ import annotations

from pathlib import Path

from doctor.explain.multi import ROOT_NODE_ID, discover, explain_many

# vllm-project/vllm-ascend#19 (NPU out of memory in a vLLM worker)
OOM = ("(VllmWorkerProcess pid=20493) ERROR 03-05 07:15:39 multiproc_worker_utils.py:240] RuntimeError: NPU out of "
       "memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity; 10.24 GiB already allocated; 10.24 GiB "
       "current active; 19.79 MiB free; 10.65 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
       "memory try setting max_split_size_mb to avoid fragmentation.")
RAY_START = "2025-03-05 07:10:02,118\tINFO worker.py:1821 -- Connecting to existing Ray cluster at address: 10.0.0.1:6379..."
# vllm-project/vllm-ascend#486 (EI0006 on the surviving ranks)
EI0006 = ("[rank1]: EI0006: [PID: 1292363] 2025-03-05-07:17:40.444.436 Getting socket times out. Reason: Remote Rank did "
          "not send the data in time. Please check the reason for the rank being stuck")
DIST = "[rank1]: [ERROR] 2025-03-05-07:17:41 (PID:1292363, Device:1, RankID:1) ERR02200 DIST call hccl api failed."
# Ascend/pytorch docs/zh/user_guide/troubleshooting/troubleshooting_cases/HCCL_timeout.md (EI0002, heartbeat lost)
EI0002 = ("EI0002: [PID: 7277] 2025-03-05-07:17:45.645.648 The wait execution of the Notify register times out. Reason: "
          "The Notify register has not received the Notify record from remote rank [6].")
LOCATION = ("Cluster Exception Location[IP/ID]:[10.0.0.3/6], Arrival Time:[Wed Mar  5 07:15:50 2025], "
            "Discoverer:[10.0.0.2/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, "
            "2. Network Disconnected")
# vllm-project/vllm-ascend#1955 (link set-up timeout on a surviving rank)
LINK = ("[ERROR] HCCL(2717288,python3):2025-03-05-07:17:38.177.194 [hccl_socket_manager.cc:778] [2734049][Wait]"
        "[LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]")
FILLER = "(WorkerDict pid=4242) INFO 03-05 07:12:00 [model_runner.py:123] Loading weights took 3.2 s"


def four_nodes(root: Path) -> Path:
    logs = {
        "node-a": [RAY_START, FILLER, EI0006, DIST],
        "node-b": [RAY_START, FILLER, LOCATION, EI0002],
        "node-c": [RAY_START, FILLER, OOM],
        "node-d": [RAY_START, FILLER, LINK],
    }
    for node, lines in logs.items():
        d = root / node
        d.mkdir(parents=True)
        (d / "worker-01000000ffffffff-12345.err").write_text("\n".join(lines) + "\n")
        (d / "raylet.out").write_text(RAY_START + "\n")
    return root


def test_four_nodes_name_the_node_that_failed_first(tmp_path):
    findings, extra = explain_many([str(four_nodes(tmp_path / "session"))])
    first = findings[0]
    assert first.id == ROOT_NODE_ID
    assert first.node == "node-c" and first.evidence["id"] == "npu-out-of-memory"
    assert extra["root_cause"]["node"] == "node-c"
    assert sorted(first.evidence["knock_on_nodes"]) == ["node-a", "node-b", "node-d"]
    knock = {e["id"] for e in extra["root_cause"]["knock_on"]}
    assert {"hccl-connect-timeout", "hccl-notify-wait-timeout"} <= knock
    times = [e["time"] for e in extra["timeline"] if e["time"]]
    assert times == sorted(times)
    assert {f.node for f in findings if f.id != "no-known-signature"} == {"node-a", "node-b", "node-c", "node-d"}
    # the four raylet.out files say nothing: one note names them (and the nodes), not four
    (quiet,) = [f for f in findings if f.id == "no-known-signature"]
    assert quiet.evidence["nodes"] == ["node-a", "node-b", "node-c", "node-d"] and len(quiet.evidence["logs"]) == 4


def test_logs_are_discovered_per_node_directory(tmp_path):
    inputs = discover([str(four_nodes(tmp_path / "s"))])
    assert sorted({i.node for i in inputs}) == ["node-a", "node-b", "node-c", "node-d"]
    assert len(inputs) == 8


def test_one_file_per_rank_and_ray_prefixes_name_the_node(tmp_path):
    a = tmp_path / "rank0.log"
    b = tmp_path / "rank1.log"
    a.write_text(RAY_START + "\n(TaskRunner pid=30188, ip=10.0.0.2) " + EI0006 + "\n")
    b.write_text(RAY_START + "\n(WorkerDict pid=468350, ip=10.0.0.3) " + OOM + "\n")
    findings, extra = explain_many([str(a), str(b)])
    assert findings[0].id == ROOT_NODE_ID
    assert extra["root_cause"]["node"] == "10.0.0.3"


def test_only_timeouts_everywhere_still_names_the_earliest(tmp_path):
    (tmp_path / "n1.log").write_text(EI0002 + "\n")
    (tmp_path / "n2.log").write_text(LINK + "\n")
    findings, extra = explain_many([str(tmp_path)])
    assert findings[0].id == ROOT_NODE_ID and findings[0].node == "n2"
    assert extra["root_cause"]["role"] == "knock-on"


def test_no_first_failure_is_named_when_no_line_says_when(tmp_path):
    """Two logs with a real failure each and no time on any line (pasted tracebacks): which came first is not known,
    so no root-cause-node claims one (it used to name the file whose name sorts first); each failure is still
    reported on its node. With a time on each, the earlier one is named."""
    fork = "RuntimeError: Cannot re-initialize NPU in forked subprocess"
    atb = "ImportError: libatb.so: cannot open shared object file: No such file or directory"
    (tmp_path / "raylet.out").write_text(atb + "\n")
    (tmp_path / "worker-1.err").write_text(fork + "\n")
    findings, extra = explain_many([str(tmp_path)])
    assert ROOT_NODE_ID not in {f.id for f in findings} and "root_cause" not in extra
    assert {(f.id, f.node) for f in findings} >= {("nnal-libatb-missing", "raylet"), ("npu-fork-reinit", "worker-1")}
    (tmp_path / "raylet.out").write_text("2025-03-05 07:18:00,000 start\n" + atb + "\n")
    (tmp_path / "worker-1.err").write_text("2025-03-05 07:11:00,000 start\n" + fork + "\n")
    findings, extra = explain_many([str(tmp_path)])
    assert findings[0].id == ROOT_NODE_ID and findings[0].node == "worker-1"


def test_the_root_cause_node_reads_attributed_events(tmp_path):
    # No signature knows node a's error; attribution does (the frame is vllm's), and it came before node b's timeout.
    (tmp_path / "a.log").write_text(
        "2025-03-05 07:10:00,000 start\n2025-03-05 07:11:06,443 worker crashed:\nTraceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/vllm/worker/model_runner.py", line 3, in run\n    x()\n'
        "ValueError: block table shape mismatch\n")
    (tmp_path / "b.log").write_text(EI0002 + "\n")
    findings, extra = explain_many([str(tmp_path)])
    assert findings[0].id == "root-cause-node" and findings[0].node == "a"
    assert extra["root_cause"]["id"] == "error-in-package"


# Run as uid/gid 65534: root reads every directory whatever its mode, so only a real non-root process sees the
# kernel refuse one. Imports first, then the ids are dropped.
_DISCOVER_AS_NOBODY = """
import json, os, sys
from doctor.errors import InputError
from doctor.explain.multi import discover
os.setgroups([]); os.setegid(65534); os.seteuid(65534)
try:
    print(json.dumps({"logs": [str(i.path) for i in discover(sys.argv[1:])]}))
except InputError as e:
    print(json.dumps({"error": str(e)}))
"""


def test_a_log_directory_the_user_cannot_read_is_named_not_skipped() -> None:
    """A non-root user given a Ray session's logs/ with a node directory it may not list (another user's, mode
    0700) gets exit 2 naming that directory, as an unreadable log file already does; the logs of that node are
    never silently left out (the root cause may be there), and a top directory it cannot list is never called
    one with no logs in it."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="doctor-logs-", dir="/tmp"))  # a directory uid 65534 may enter
    try:
        os.chmod(base, 0o755)
        session = four_nodes(base / "session")
        for d in (session, *session.iterdir()):
            os.chmod(d, 0o755)
            for f in d.glob("*.*"):
                os.chmod(f, 0o644)
        os.chmod(session / "node-c", 0o700)  # owned by root: uid 65534 cannot list it
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

        def run(*paths: Path) -> dict:
            out = subprocess.run([sys.executable, "-c", _DISCOVER_AS_NOBODY, *map(str, paths)], env=env,
                                 capture_output=True, text=True, cwd="/", check=True).stdout
            return json.loads(out)

        nested = run(session)
        assert nested.get("error") == f"{session / 'node-c'}: cannot read the directory: Permission denied", nested
        os.chmod(session / "node-c", 0o755)
        assert len(run(session)["logs"]) == 8  # all readable again: every log is found
        os.chmod(session, 0o700)
        top = run(session)
        assert top.get("error") == f"{session}: cannot read the directory: Permission denied", top
    finally:
        shutil.rmtree(base)


def test_logs_that_say_nothing_are_one_note_and_a_ray_nodes_subdirectories_are_no_nodes(tmp_path):
    """A Ray node's session logs/ (raylet.out is there): dashboard, monitor and idle workers' files match nothing and
    hold no error-looking line -- one note for all of them, not one each; a silent log with an error-looking line
    keeps its own; events/event_RAYLET.log is that node's raylet's events, not a node called `events`."""
    for name in ("raylet.out", "dashboard.log", "monitor.log", "gcs_server.out"):
        (tmp_path / name).write_text("2025-03-05 07:10:00,000 INFO started\n")
    (tmp_path / "worker-7.err").write_text("2025-03-05 07:12:00,000 start\nERROR: something nobody knows broke\n")
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "event_RAYLET.log").write_text(
        "2025-03-05 07:11:00,000 start\nRuntimeError: Cannot re-initialize NPU in forked subprocess\n")
    findings, extra = explain_many([str(tmp_path)])
    quiet = [f for f in findings if f.id == "no-known-signature"]
    assert [f.title for f in quiet if "logs" in f.evidence] == ["No known failure signature in 4 logs"]
    assert [f.evidence["log"] for f in quiet if "log" in f.evidence] == [str(tmp_path / "worker-7.err")]
    assert {log["node"] for log in extra["logs"]} == {"raylet", "dashboard", "monitor", "gcs_server", "worker-7",
                                                      "event_RAYLET"}
    assert ("npu-fork-reinit", "event_RAYLET") in {(f.id, f.node) for f in findings}
    # a directory of nodes' directories is named by them, as before
    (tmp_path / "raylet.out").unlink()
    (tmp_path / "gcs_server.out").unlink()
    _, extra = explain_many([str(tmp_path)])
    assert "events" in {log["node"] for log in extra["logs"]}


def test_a_ray_nodes_rotated_and_compressed_logs_are_read_and_other_files_are_named(tmp_path):
    """Ray's components log through RotatingFileHandler (ray/_private/ray_logging: monitor.log -> monitor.log.1) and a
    node's logs are often archived compressed: the walk took *.log/.out/.err/.txt only and left the failure in
    monitor.log.1 / worker-*.err.gz unread without a word. Now they are read, as the node's process they belong to,
    and the files left unread are listed with why."""
    import gzip

    for name in ("raylet.out", "gcs_server.out", "monitor.log", "dashboard.log"):
        (tmp_path / name).write_text(RAY_START + "\n")
    (tmp_path / "monitor.log.1").write_text(RAY_START + "\n" + EI0006 + "\n")
    (tmp_path / "worker-01000000ffffffff-12345.err.gz").write_bytes(gzip.compress((RAY_START + "\n" + OOM + "\n").encode()))
    (tmp_path / "ports_by_node.json").write_text("{}")
    findings, extra = explain_many([str(tmp_path)])
    read = {Path(x["log"]).name: x["node"] for x in extra["logs"]}
    assert read["monitor.log.1"] == "monitor" and read["worker-01000000ffffffff-12345.err.gz"] == \
        "worker-01000000ffffffff-12345"
    assert extra["root_cause"]["node"] == "worker-01000000ffffffff-12345"
    assert [(Path(s["path"]).name, s["reason"].split(";")[0]) for s in extra["skipped"]] == \
        [("ports_by_node.json", "not a log's name")]
