"""Failure classes the operating system and its programs define (doctor/explain/osclasses.py): an errno, a program's
own `program: message` line, a program a tool cannot find or that is not on PATH, a timeout whose message names the
variable bounding it. Read with the generic database (no specific signature), as attribution reads wording no
signature knows. The inputs are the programs' own output, run here (coreutils 9.1, GNU tar 1.34, UnZip 6.00), or
the text of the source that prints them (Ray 2.60.0, pip 26.3), not a corpus report's."""

from __future__ import annotations

import pytest

from doctor.explain.osclasses import os_class
from doctor.explain.stream import explain_lines
from doctor.report import Severity
from tests.explain.generic import errors, generic_db


def found(lines: list[str]):
    return explain_lines(lines, db=generic_db())


@pytest.mark.parametrize(("line", "sym", "comps"), [
    ("semget failed, errno = 13", "EACCES", ("system", "config")),
    ("open /dev/shm/hccl_buf failed errno: 28", "ENOSPC", ("system", "env")),
    ("[proc] shm_open returned -1 (errno 24)", "EMFILE", ("system", "env")),
    ("ioctl on device node returned errno=16", "EBUSY", ("system", "npu")),
])
def test_an_errno_on_an_error_line_is_the_system_call_it_names(line, sym, comps):
    (f,) = errors([line])
    assert f.id == "system-call-failed" and f.components == comps
    assert sym in f.title and "errno-base.h" in f.source


def test_an_errno_that_is_zero_unknown_or_on_a_notice_line_is_no_failure():
    assert os_class("call returned, errno = 0") is None
    assert os_class("got errno 95 from the kernel") is None  # a number this table does not define
    assert errors(["INFO 12-03 10:00:00 [shm.py:12] retry after errno 11",
                   "[W socket.cpp:464] [c10d] The server socket cannot be initialized (errno: 97 - Address family)"]) == []


@pytest.mark.parametrize("line", [
    "cp: cannot stat '/nonexistent/x': No such file or directory",
    "tar: /nonexistent.tar: Cannot open: No such file or directory",
    "unzip:  cannot find or open /nonexistent.zip, /nonexistent.zip.zip or /nonexistent.zip.ZIP.",
    "mkdir: cannot create directory ‘/proc/x’: No such file or directory",
])
def test_a_system_programs_own_error_line_is_the_systems(line):
    # each printed by the program itself here, in the GNU "program: message" format
    (f,) = errors([line])
    assert f.id == "system-program-error" and f.components[0] == "system"
    assert "gnu.org" in f.source


def test_a_heading_word_or_a_component_before_the_colon_is_no_system_program():
    assert os_class("error: cannot find the file") is None  # a compiler's / tool's level word, not a program
    assert os_class("fatal: could not read Username for 'https://github.com'") is None  # git's level word
    cls = os_class("raylet: cannot connect to the GCS")  # a component's daemon: that component first
    assert cls is not None and cls.components == ("ray", "system")


def test_a_tool_that_cannot_find_a_program_is_the_system_and_path():
    (f,) = errors(["ERROR: Unable to locate the executable `dkms`; install it first."])
    assert f.id == "program-missing" and f.components == ("system", "env") and "dkms" in f.title
    (g,) = errors(["error: program 'ninja' not found"])
    assert g.id == "program-missing"


def test_a_console_script_outside_path_is_an_env_warning_not_an_error():
    # pip 26.3 src/pip/_internal/operations/install/wheel.py message_about_scripts_not_on_PATH, logged at WARNING
    lines = ["WARNING: The scripts torchrun and convert-onnx-to-caffe2 are installed in '/home/u/.local/bin' which "
             "is not on PATH.",
             "  Consider adding this directory to PATH or, if you prefer to suppress this warning, use "
             "--no-warn-script-location."]
    (f,) = found(lines)
    assert f.id == "program-not-on-path" and f.severity is Severity.WARNING and f.components == ("env", "python")


def test_a_timeout_whose_message_names_its_variable_is_that_components_and_the_envs():
    # Ray 2.60.0 ray/dag/compiled_dag_node.py: RayChannelTimeoutError's text when a submit times out
    (f,) = errors(["If the execution is expected to take a long time, increase RAY_CGRAPH_submit_timeout which is "
                   "currently 10 seconds. Otherwise, this may indicate that execution is hanging."])
    assert f.id == "timeout-setting-exceeded" and f.components == ("ray", "env")
    assert "RAY_CGRAPH_submit_timeout" in f.fix.text
    cls = os_class("Please consider increasing HCCL_CONNECT_TIMEOUT for a large cluster")
    assert cls is not None and cls.components == ("hccl", "env")
    # a line that only sets a timeout states no failure
    assert os_class("Setting HCCL_EXEC_TIMEOUT=1800") is None
    assert errors(["export HCCL_CONNECT_TIMEOUT=1200", "INFO: increase VLLM_RPC_TIMEOUT if needed"]) == []


def test_a_process_killed_by_sigbus_is_shared_memory_and_by_sigkill_the_oom_killer_or_a_supervisor():
    # torch 2.13 libtorch_python.so: "DataLoader worker (pid {}) is killed by signal: {}. " with strsignal's text;
    # signal(7): SIGBUS "Bus error (bad memory access)", SIGKILL cannot be caught
    (f,) = errors(["RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. "])
    assert f.id == "process-killed-by-signal" and f.components == ("system", "env") and "SIGBUS" in f.title
    assert "signal.7" in f.source
    (g,) = errors(["ERROR: worker 3 was terminated by signal SIGKILL"])
    assert g.id == "process-killed-by-signal" and g.components == ("system", "config")
    assert os_class("child exited with signal 7 (SIGBUS)") is not None
    # a signal the system gives no cause for is not read here (a crash: whose code, the frames say)
    assert os_class("worker killed by signal: Segmentation fault") is None


def test_bashs_report_of_a_job_a_signal_ended_is_that_signals_class():
    # bash 5.2 as run here: `kill -9` / `kill -7` of a python child of a script, and of `bash -c`
    (f,) = errors(["/tmp/k.sh: line 6: 12665 Killed                  python3 -c 'import os; os.kill(os.getpid(), 9)'"])
    assert f.id == "process-killed-by-signal" and f.components == ("system", "config")
    (g,) = errors(["/tmp/k2.sh: line 2: 12723 Bus error               python3 -c 'import os; os.kill(os.getpid(), 7)'"])
    assert g.components == ("system", "env")
    (h,) = errors(["bash: 12657 Killed                  sleep 5"])
    assert h.id == "process-killed-by-signal"
    (k,) = errors(["Killed"])  # a lone report without its pid
    assert k.id == "process-killed-by-signal"
    # the words in a sentence are no job report
    assert os_class("2 Killed processes were restarted by the supervisor") is None


def test_a_child_a_signal_ended_as_python_and_torchrun_report_it_is_that_signals_class():
    # CPython 3.11 as run here: subprocess.run([...kill itself with 7...], check=True)
    (f,) = errors(["subprocess.CalledProcessError: Command '['python3', '-c', 'import os; os.kill(os.getpid(), 7)']' "
                   "died with <Signals.SIGBUS: 7>."])
    assert f.id == "process-killed-by-signal" and f.components == ("system", "env")
    # torch elastic's ProcessFailure (torch 2.13 torch/distributed/elastic/multiprocessing/errors/__init__.py)
    assert os_class("  traceback : Signal 9 (SIGKILL) received by PID 4242") is not None


def test_a_client_that_could_not_connect_to_its_server_is_the_network():
    # transformers 5.24 transformers/utils/hub.py: "We couldn't connect to '{HUGGINGFACE_CO_RESOLVE_ENDPOINT}' to load
    # the files, and couldn't find them in the cached files." (an OSError)
    (f,) = errors(["OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
                   "in the cached files."])
    assert f.id == "network-error" and f.components == ("network", "env")
    (g,) = errors(["[ERROR] failed to connect to 10.0.0.2:29500 after 30 attempts"])
    assert g.id == "network-error"


def test_the_component_a_line_names_stays_beside_the_system_class():
    # a path a component ships, or a name the line carries, is where the failing call was made: second
    (f,) = errors(["HCCL init: semget failed, errno = 13"])
    assert f.id == "system-call-failed" and f.components == ("system", "hccl")
    (g,) = errors(["bash: /usr/local/Ascend/ascend-toolkit/set_env.sh: No such file or directory"])
    assert g.id == "system-program-error" and g.components == ("cann", "system")
    (h,) = errors(["ls: cannot access '/usr/local/Ascend/driver/version.info': No such file or directory"])
    assert h.components == ("driver", "system")


def test_a_class_signature_that_matched_the_line_keeps_it():
    # permission-denied (a fallback signature) already says what errno 13 says, with its own fix: no second reading
    found = explain_lines(["PermissionError: [Errno 13] Permission denied: '/data/out'"])
    assert [f.id for f in found] == ["permission-denied"]


# A verl worker's traceback (https://github.com/verl-project/verl/issues/6773, verl/utils/device.py get_npu_versions):
# the command verl ran through subprocess.run(check=True) failed; CPython's CalledProcessError names it and its status.
VERL_NPU_SMI = [
    "ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.actor_rollout_init_model() (pid=4591, ip=172.36.2.44)",
    '  File "/tmp/ray/session_x/runtime_resources/working_dir_files/_ray_pkg_x/verl/utils/device.py", line 197, in '
    "get_npu_versions",
    '    result = subprocess.run(["npu-smi", "info", "-t", "board", "-i", "1"], capture_output=True, text=True, '
    "check=True)",
    '  File "/usr/local/python3.11.14/lib/python3.11/subprocess.py", line 571, in run',
    "    raise CalledProcessError(retcode, process.args,",
    "subprocess.CalledProcessError: Command '['npu-smi', 'info', '-t', 'board', '-i', '1']' returned non-zero exit "
    "status 215.",
]


def test_a_command_a_program_ran_that_failed_is_that_commands_failure():
    findings = explain_lines(VERL_NPU_SMI)
    f = findings[0]
    assert f.id == "command-failed" and f.severity is Severity.ERROR
    assert f.components[0] == "driver" and "npu-smi" in f.title and "215" in f.title
    assert "npu-smi info -t board -i 1" in f.fix.text and "doctor check" in f.fix.text
    # a shell string, and a program no component ships: the system's
    cls = os_class("Command 'git clone https://x/y.git' returned non-zero exit status 128.")
    assert cls is not None and cls.id == "command-failed" and cls.components[0] == "system"
    assert "git clone https://x/y.git" in cls.fix
    # a command a signal ended is the signal's (process-killed-by-signal), not this
    sig = os_class("Command '['python3', 'x.py']' died with <Signals.SIGKILL: 9>.")
    assert sig is not None and sig.id == "process-killed-by-signal"
