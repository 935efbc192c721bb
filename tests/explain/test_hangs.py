"""A hang read from a stack dump (faulthandler, py-spy) or from a wait its program names (Ray cannot place a
request) (doctor/explain/hangs.py): Python's faulthandler watchdog prints "Timeout
(H:MM:SS)!" and every thread's stack, innermost frame first ("Thread 0x...", `File "...", line N in func`); a thread
standing in torch.distributed's collective is waiting for another rank. The real run: two gloo ranks under torchrun,
rank 1 never reaches the all_reduce, rank 0's watchdog dumps its stack after 3 s."""

from __future__ import annotations

import pytest

from doctor.explain.stream import explain_lines, explain_path
from doctor.report import Severity
from tests.explain.generic import errors, generic_db
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
            '  File "/usr/lib/python3.11/queue.py", line 171 in get',
            '  File "/usr/local/lib/python3.11/site-packages/tqdm/_monitor.py", line 60 in run']
    assert [f for f in explain_lines(idle, db=generic_db()) if f.severity is Severity.ERROR] == []
    # without the watchdog's header, other threads' stacks (a logged stack, a crash dump's) are not read
    assert all(f.id != "collective-hang" for f in explain_lines(DUMP[1:], db=generic_db()))


def test_a_real_torchrun_job_whose_peer_never_joins_the_collective_is_read_as_a_hang(tmp_path):
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp_hang.py")], tmp_path, "ddp_hang", ok=False)
    assert "Timeout (0:00:03)!" in log.read_text(errors="replace")
    found = [f for f in explain_path(str(log))[0] if f.severity is Severity.ERROR]
    assert "collective-hang" in [f.id for f in found], [(f.id, f.components) for f in found]


# py-spy 0.4.3's `dump` of rank 0 of tests/explain/real_runs/ddp_hang_pyspy.py, as it printed it here (src/dump.rs:
# `Thread <id> (<status>): "<name>"`, then `    func (file:line)` innermost first, the path below its sys.path entry)
PYSPY = ["Process 31445: /work/venv/bin/python -u ddp_hang_pyspy.py",
         "Python v3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)",
         "",
         'Thread 31445 (idle): "MainThread"',
         "    all_reduce (torch/distributed/distributed_c10d.py:3252)",
         "    _exception_logger.<locals>.wrapper (torch/distributed/c10d_logger.py:83)",
         "    <module> (ddp_hang_pyspy.py:17)"]


def test_a_py_spy_dump_standing_in_a_collective_is_a_hang_waiting_for_another_rank():
    (f,) = errors(PYSPY)
    assert f.id == "collective-hang" and f.components == ("hccl", "network")
    assert "distributed_c10d.py" in f.evidence["read"] and "py-spy" in f.evidence["read"]


def test_a_py_spy_dump_behind_a_launcher_prefix_with_locals_and_torch_npus_own_collective_is_read():
    lines = ["[rank0]:Thread 0x7F3A2B1C0740 (active+gil): \"MainThread\"",
             "[rank0]:    _all_gather_into_tensor_uneven (torch_npu/distributed/distributed_c10d.py:460)",
             "[rank0]:        Arguments:",
             "[rank0]:            output: <Tensor>",
             "[rank0]:    gather_logits (/workspace/job/train.py:88)"]
    (f,) = errors(lines)
    assert f.id == "collective-hang" and "_all_gather_into_tensor_uneven" in f.title


def test_a_py_spy_dump_waiting_in_ray_get_is_a_hang_in_the_worker_it_waits_for():
    lines = ['Thread 4242 (idle): "MainThread"',
             "    get_objects (ray/_private/worker.py:969)",
             "    get (ray/_private/worker.py:2922)",
             "    wrapper (ray/_private/client_mode_hook.py:103)",
             "    fit (verl/trainer/ppo/ray_trainer.py:1200)",
             "    <module> (main_ppo.py:40)"]
    (f,) = errors(lines)
    assert f.id == "ray-wait-hang" and f.components == ("ray",)
    assert "ray stack" in f.fix.text and "HCCL_EXEC_TIMEOUT" in f.fix.text


def test_a_py_spy_dumps_idle_threads_and_a_thread_line_without_py_spys_status_are_no_failure():
    idle = ['Thread 4300 (idle): "Thread-1 (_monitor)"',
            "    wait (threading.py:324)",
            "    run (tqdm/_monitor.py:60)",
            "    _bootstrap (threading.py:1002)",
            'Thread 4301 (idle): "ray_listen_error_messages"',
            "    listen_error_messages (ray/_private/worker.py:2150)"]
    assert errors(idle) == []
    # frame-like lines without py-spy's thread header are not a stack
    assert errors(PYSPY[4:]) == []


@pytest.mark.parametrize("native", [False, True])
def test_a_real_py_spy_dump_of_a_rank_waiting_for_its_peer_is_read_as_a_hang(tmp_path, monkeypatch, native):
    # with --native, py-spy prints the C/C++ frames the wait runs in (pthread_cond_wait, c10d::Work::wait, a
    # pybind11 dispatcher) inside the Python ones: the Python frames still say which collective
    monkeypatch.setenv("HANG_DIR", str(tmp_path))
    if native:
        monkeypatch.setenv("HANG_NATIVE", "1")
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp_hang_pyspy.py")], tmp_path, "pyspy_hang", ok=False)
    text = log.read_text(errors="replace")
    assert "(idle)" in text and ("c10d::Work::wait" in text) is native
    found = [f for f in explain_path(str(log))[0] if f.severity is Severity.ERROR]
    assert found[0].id == "collective-hang", [(f.id, f.components) for f in found]


# Ray's raylet warning (cluster_task_manager.cc / cluster_lease_manager.cc) as the driver logs it
INFEASIBLE = ("2025-06-01 10:00:00,123\tWARNING worker.py:2046 -- The actor or task with ID ffffffffffffffff01000000 "
              "cannot be scheduled right now. It requires {CPU: 1.000000}, {NPU: 8.000000} for placement, however the "
              "cluster currently cannot provide the requested resources. The required resources may be added as "
              "autoscaling takes place or placement groups are scheduled. Otherwise, consider reducing the resource "
              "requirements of the task.")


def test_a_request_ray_cannot_place_is_a_named_wait_even_logged_as_a_warning():
    (f,) = errors([INFEASIBLE])
    assert f.id == "ray-resources-unschedulable" and f.components == ("ray", "config", "npu")
    assert "{CPU: 1.000000}, {NPU: 8.000000}" in f.evidence["read"] and "ray status" in f.fix.text
    # a CPU-only request names no NPU
    (g,) = errors([INFEASIBLE.replace(", {NPU: 8.000000}", "")])
    assert g.components == ("ray", "config")


def test_a_wait_ranks_after_an_error_that_follows_it():
    lines = [INFEASIBLE, "Traceback (most recent call last):", '  File "/home/me/train.py", line 3, in <module>',
             "    main()", "ValueError: micro_batch (8) must not exceed batch (4)"]
    assert [f.id for f in errors(lines)] == ["error-in-user-code", "ray-resources-unschedulable"]


def test_a_real_ray_job_asking_for_npus_the_node_lacks_is_read_as_a_wait_for_resources(tmp_path):
    import shutil
    import tempfile
    from pathlib import Path

    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    try:
        log = _run([str(HERE / "ray_unschedulable.py"), str(temp)], tmp_path, "ray_unschedulable")
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert "still waiting" in log.read_text(errors="replace")
    found = [f for f in explain_path(str(log))[0] if f.severity is Severity.ERROR]
    assert [(f.id, f.components) for f in found] == [("ray-resources-unschedulable", ("ray", "config", "npu"))]


def test_a_stack_dumped_on_request_standing_in_a_collective_is_a_hang_and_after_a_fatal_error_a_crash():
    # faulthandler.register(SIGUSR1, all_threads=True) prints the other threads, then "Current thread ...", with no
    # header; after "Fatal Python error: Segmentation fault" the same block is the crash's stack
    dump = ["Thread 0x00007f2a1c7fe640 (most recent call first):",
            '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
            '  File "/usr/local/lib/python3.10/site-packages/tqdm/_monitor.py", line 60 in run',
            "",
            "Current thread 0x00007f2b0a4f3740 (most recent call first):",
            *DUMP[2:]]
    assert [f.id for f in errors(dump)] == ["collective-hang"]
    crash = ["Fatal Python error: Segmentation fault", "", *dump]
    assert "collective-hang" not in [f.id for f in errors(crash)]
    # a dump on request that stands in no wait stays what it was: a traceback cut short
    other = ["Current thread 0x00007f2b0a4f3740 (most recent call first):",
             '  File "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501 in _call_impl',
             '  File "/home/me/train.py", line 120 in <module>']
    assert [f.id for f in errors(other)] == ["traceback-ends-in-package"]


def test_a_real_rank_dumped_by_sigusr1_while_its_peer_never_joins_is_read_as_a_hang(tmp_path, monkeypatch):
    monkeypatch.setenv("HANG_DIR", str(tmp_path))
    log = _run(["-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
                str(HERE / "ddp_hang_signal.py")], tmp_path, "signal_hang", ok=False)
    assert "Current thread 0x" in log.read_text(errors="replace")
    found = [f for f in explain_path(str(log))[0] if f.severity is Severity.ERROR]
    assert found[0].id == "collective-hang", [(f.id, f.components) for f in found]
