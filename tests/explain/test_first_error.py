"""The first error line `no-known-signature` names when a log's failure is wrapped by Ray: Ray's
`RayTaskError(T): ray::f() (pid=…)` line names the call, the task's own traceback below it names the failure."""

from __future__ import annotations

from dataclasses import replace

from doctor.explain.stream import explain_lines, read_signatures

# A verl worker's failure as its issue quotes it (https://github.com/verl-project/verl/issues/6773): Ray's wrapper,
# the cause's traceback and exception line, then the chain sentence and the wrapper's own frames.
VERL_WRAPPED = [
    "ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.actor_rollout_init_model() (pid=4591, "
    "ip=172.36.2.44, actor_id=deebc0c1099943dc9616a62902000000, repr=<verl.single_controller.ray.base.WorkerDict "
    "object at 0xee2cc7407dd0>)",
    '  File "/tmp/ray/session_2026-06-16_06-00-29_209229_721/runtime_resources/working_dir_files/_ray_pkg_06040502ad95'
    'b181/verl/utils/device.py", line 197, in get_npu_versions',
    '    result = subprocess.run(["npu-smi", "info", "-t", "board", "-i", "1"], capture_output=True, text=True, '
    "check=True)",
    "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/usr/local/python3.11.14/lib/python3.11/subprocess.py", line 571, in run',
    "    raise CalledProcessError(retcode, process.args,",
    "subprocess.CalledProcessError: Command '['npu-smi', 'info', '-t', 'board', '-i', '1']' returned non-zero exit "
    "status 215.",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "ray::WorkerDict.actor_rollout_init_model() (pid=4591, ip=172.36.2.44, actor_id=deebc0c1099943dc9616a62902000000)",
    '  File "/usr/local/python3.11.14/lib/python3.11/concurrent/futures/_base.py", line 456, in result',
    "    return self.__get_result()",
]


def _first_error(lines: list[str]) -> tuple[int, str]:
    db = read_signatures()
    found = explain_lines(lines, db=replace(db, signatures=()), attribution=False)  # no signature knows it
    assert [f.id for f in found] == ["no-known-signature"], [f.id for f in found]
    first = found[0].evidence["first_error"]
    assert first["text"] in found[0].detail
    return first["line"], first["text"]


def test_a_ray_wrapped_failure_names_the_innermost_exception_line():
    assert _first_error(VERL_WRAPPED) == (7, VERL_WRAPPED[6])


def test_the_same_behind_a_ray_actor_prefix_and_for_an_exception_named_only_by_the_wrapper():
    prefix = "(WorkerDict pid=4591) "
    lines = [prefix + "RayTaskError(BadZipFile): ray::WorkerDict.load() (pid=4591, ip=10.0.0.2)",
             prefix + '  File "/usr/lib/python3.11/zipfile.py", line 1369, in _RealGetContents',
             prefix + '    raise BadZipFile("File is not a zip file")',
             prefix + "zipfile.BadZipFile: File is not a zip file"]
    assert _first_error(lines) == (4, lines[3])


def test_a_wrapper_without_its_traceback_or_followed_by_other_lines_stays_the_first_error_line():
    wrapper = VERL_WRAPPED[0]
    assert _first_error([wrapper]) == (1, wrapper)
    # the next lines are not a traceback (no frame): the wrapper is what the log says
    assert _first_error([wrapper, "Training stopped: see the worker log"]) == (1, wrapper)
    assert _first_error([wrapper, *VERL_WRAPPED[1:6], "Error executing job with overrides: []"])[0] == 1


def test_a_task_that_waited_on_a_failed_task_names_the_inner_tasks_exception():
    # Ray 2.60's driver output for outer() calling ray.get(unpack.remote(path)) (a run made here)
    lines = ["ray.exceptions.RayTaskError(BadZipFile): ray::outer() (pid=25990, ip=192.0.2.2)",
             '  File "/tmp/job/ray_nested.py", line 14, in outer',
             "    return ray.get(unpack.remote(path))",
             "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
             "ray.exceptions.RayTaskError(BadZipFile): ray::unpack() (pid=25991, ip=192.0.2.2)",
             '  File "/tmp/job/ray_nested.py", line 11, in unpack',
             "    return zipfile.ZipFile(path).namelist()",
             '  File "/usr/lib/python3.11/zipfile.py", line 1369, in _RealGetContents',
             '    raise BadZipFile("File is not a zip file")',
             "zipfile.BadZipFile: File is not a zip file"]
    assert _first_error(lines) == (10, lines[9])
