"""A hang read from a stack dump (doctor/explain/hangs.py): Python's faulthandler watchdog prints "Timeout
(H:MM:SS)!" and every thread's stack, innermost frame first ("Thread 0x...", `File "...", line N in func`); a thread
standing in torch.distributed's collective is waiting for another rank. The real run: two gloo ranks under torchrun,
rank 1 never reaches the all_reduce, rank 0's watchdog dumps its stack after 3 s."""

from __future__ import annotations

from doctor.explain.stream import explain_lines, explain_path
from doctor.report import Severity
from tests.explain.generic import generic_db
from tests.explain.test_real_runs import HERE, _free_port, _run

# faulthandler's watchdog output, as it printed it here for a gloo all_reduce whose peer never came (torch 2.13)
DUMP = ["Timeout (0:00:05)!",
        "Thread 0x00007ffa020a2b80 (most recent call first):",
        '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252 in all_reduce',
        '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper',
        '  File "/tmp/hang/hang.py", line 8 in <module>']


def test_a_watchdog_dump_standing_in_a_collective_is_a_hang_waiting_for_another_rank():
    (f,) = [f for f in explain_lines(DUMP, db=generic_db()) if f.severity is Severity.ERROR]
    assert f.id == "collective-hang" and f.components == ("hccl", "network")
    assert "all_reduce" in f.title and "distributed_c10d.py" in f.evidence["read"]


def test_a_dumped_thread_that_waits_elsewhere_is_no_failure_and_a_plain_thread_block_stays_ignored():
    idle = ["Timeout (0:30:00)!", "Thread 0x00007f2a (most recent call first):",
            '  File "/usr/lib/python3.11/threading.py", line 320 in wait',
            '  File "/usr/local/lib/python3.11/site-packages/ray/_private/worker.py", line 900 in get_objects']
    assert [f for f in explain_lines(idle, db=generic_db()) if f.severity is Severity.ERROR] == []
    # without the watchdog's header, other threads' stacks (a logged stack, a crash dump's) are not read
    assert all(f.id != "collective-hang" for f in explain_lines(DUMP[1:], db=generic_db()))


def test_a_real_torchrun_job_whose_peer_never_joins_the_collective_is_read_as_a_hang(tmp_path):
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp_hang.py")], tmp_path, "ddp_hang", ok=False)
    assert "Timeout (0:00:03)!" in log.read_text(errors="replace")
    found = [f for f in explain_path(str(log))[0] if f.severity is Severity.ERROR]
    assert "collective-hang" in [f.id for f in found], [(f.id, f.components) for f in found]
