"""Failure classes (issue 23, item 2 at the class level): what an exception's type or an error line's own words say
when no frame, path, library, module or code names the package. Each input is written in the format its
documentation defines (Python's exceptions and warnings, OmegaConf / Hydra, torch's dispatcher, CANN's log line,
klog, bash, CMake), not copied from a corpus report."""

from __future__ import annotations

import pytest

from bench.explain_speed import _LINES
from doctor.explain.classes import exception_class, line_class
from doctor.explain.events import MAX_EVENTS, MAX_WARNINGS, EventReader
from doctor.explain.stream import explain_lines
from doctor.report import Severity
from tests.explain.generic import errors

SITE = "/usr/local/python3.10/lib/python3.10/site-packages"


@pytest.mark.parametrize(("line", "fid", "comps"), [
    ("requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded",
     "network-error", ("network", "env")),
    ("ConnectionRefusedError: [Errno 111] Connection refused", "network-error", ("network", "env")),
    ("torch.distributed.DistNetworkError: The client socket has timed out after 600s", "network-error",
     ("network", "env")),
    ("torch.distributed.DistBackendError: [PG ID 0 Rank 3] HCCL communicator was aborted",
     "collective-backend-error", ("hccl", "network")),
    ("omegaconf.errors.ConfigAttributeError: Key 'ppo_micro_batch' is not in struct\n", "config-rejected",
     ("config", "python")),
    ("omegaconf.errors.ConfigKeyError: Key 'x' is not in struct    full_key: actor_rollout_ref.actor.x",
     "config-rejected", ("config", "verl")),
    ("pydantic_core._pydantic_core.ValidationError: 1 validation error for EngineArgs", "config-rejected",
     ("config", "python")),
    ("yaml.scanner.ScannerError: mapping values are not allowed here", "config-rejected", ("config", "python")),
    ("NotImplementedError: Could not run 'npu::npu_format_cast' with arguments from the 'CPU' backend.",
     "operator-not-registered", ("torch-npu", "config")),
    ("NotImplementedError: Could not run 'aten::_foo' with arguments from the 'Meta' backend.",
     "operator-not-registered", ("torch", "config")),
    ('RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\'', "operator-dtype-unsupported", ("torch", "config")),
    ("TypeError: 'type' object is not subscriptable", "python-too-old", ("python", "config")),
    ("ValueError: num_heads (28) must be divisible by tensor_model_parallel_size (8)", "check-failed",
     ("config", "model")),
    ("RuntimeError: connect() timed out.", "network-error", ("network", "env")),
])
def test_an_exception_without_frames_is_named_by_its_class(line, fid, comps):
    f = errors([line])[0]
    assert (f.id, f.components) == (fid, comps)
    assert f.evidence["read"].startswith(("the exception", "the error line")) and f.source.startswith("https://")


@pytest.mark.parametrize(("line", "fid", "comps"), [
    ("Could not override 'actor_rollout_ref.rollout.nn'.", "config-rejected", ("config", "verl")),
    ("Error merging override trainer.n_gpus_per_node=eight", "config-rejected", ("config", "verl")),
    ("E1203 10:11:12.123456    7 reflector.go:138] failed to list *v1alpha1.Job: the server could not find it",
     "cluster-component-error", ("cluster", "config")),
    ("run.sh: line 3: $'\\r': command not found", "shell-cannot-run-script", ("system", "config")),
    ("train.sh: line 9: syntax error near unexpected token `fi'", "shell-cannot-run-script", ("system", "config")),
    ("CMake Error at CMakeLists.txt:4 (find_package):", "native-build-failed", ("system", "python")),
    ("make[2]: *** [CMakeFiles/op.dir/build.make:76: op.o] Error 1", "native-build-failed", ("system", "python")),
    ("  error: subprocess-exited-with-error", "native-build-failed", ("system", "python")),
    ("[ERROR] RUNTIME(4242,python3):2025-01-02-03:04:05.678.901 [stream.cc:1010]4242 Sync:Stream synchronize failed",
     "cann-module-error", ("cann", "model")),
    ("[ERROR] HCCL(4242,python3):2025-01-02-03:04:05.678.901 [transport.cc:77]4242 [Link]connect failed",
     "cann-module-error", ("hccl", "network")),
    ("[ERROR] DRV(4242,python3):2025-01-02-03:04:05.678.901 [hdc.c:12]4242 drvHdcSessionConnect failed",
     "cann-module-error", ("driver", "npu")),
    ("rank 3: error: connection to 10.0.0.2:29500 timed out", "network-error", ("network", "env")),
    ("HCCL error: heartbeat lost between rank 0 and rank 5", "network-error", ("hccl", "network")),
])
def test_an_error_line_is_named_by_its_own_words(line, fid, comps):
    f = errors([line])[0]
    assert (f.id, f.components) == (fid, comps)


@pytest.mark.parametrize("line", [
    "INFO 12-03 10:00:00 [engine.py:12] connect timeout=30 retries=3",
    "WARNING 12-03 10:00:00 [ray.py:1] connection refused, retrying in 1s",
    "(TaskRunner pid=12) init_process_group(backend='hccl', timeout=1800)",
    "HCCL_CONNECT_TIMEOUT=1500",
    "make sure the config is right",
    "step:10 - timing/gen:1.23 - timing/update_actor:2.0",
])
def test_ordinary_lines_are_not_errors(line):
    assert line_class(line) is None
    assert errors([line]) == [] and errors([line], specific=True) == []


def test_a_healthy_training_log_with_warnings_gives_no_error():
    lines = [*_LINES, f"{SITE}/torch_npu/utils/collect_env.py:58: UserWarning: Warning: The /usr/local/Ascend "
                      "owner does not match the current user.", "INFO: ray timeout set to 1800"]
    found = explain_lines(lines)
    assert not [f for f in found if f.severity is Severity.ERROR]
    w = [f for f in found if f.id == "warning-from-package" and f.components[0] == "torch-npu"]
    assert w and w[0].severity is Severity.WARNING and "site-packages/torch_npu/" in w[0].evidence["read"]


def test_a_warning_ranks_after_the_failure_it_preceded():
    found = explain_lines([
        f"{SITE}/transformers/modeling_utils.py:10: FutureWarning: `resume_download` is deprecated",
        "ConnectionResetError: [Errno 104] Connection reset by peer",
    ])
    assert found[0].id == "network-error" and found[1].id == "warning-from-package"
    assert found[1].components[0] == "transformers" and "later release removes it" not in found[1].title


def test_warnings_never_crowd_the_errors_out_of_the_event_budget():
    reader = EventReader()
    n = 0
    for _ in range(MAX_EVENTS * 2):
        n += 1
        reader.feed(n, f"{SITE}/torch/x.py:1: UserWarning: noise {n}")
    n += 1
    reader.feed(n, "ConnectionResetError: [Errno 104] Connection reset by peer")
    kinds = [e.kind for e in reader.events]
    assert kinds.count("warning") == MAX_WARNINGS and kinds[-1] == "python"


def test_ownership_wins_over_the_class():
    # a FileNotFoundError raised inside a package is that package's (with the config that fed it)
    lines = ["Traceback (most recent call last):", f'  File "{SITE}/transformers/utils/hub.py", line 3, in f',
             "    open(p)", "FileNotFoundError: [Errno 2] No such file or directory: 'tokenizer.json'"]
    f = errors(lines)[0]
    assert f.id == "error-in-package" and f.components == ("transformers", "config")


def test_a_specific_signature_wins_over_a_class():
    # CMake's error has a signature of its own: the class gives way to it
    assert [f.id for f in errors(["CMake Error at CMakeLists.txt:4 (find_package):"], specific=True)] == [
        "cmake-configure-failed"]


def test_unknown_exception_without_check_words_has_no_class():
    assert exception_class("RuntimeError", "RuntimeError", "something odd happened", False) is None
    assert exception_class("ValueError", "ValueError", "must be positive", True) is None  # frames: ownership decides


@pytest.mark.parametrize(("line", "comps"), [
    # (with its return code the line is read by the code: tests/explain/test_dcmi.py)
    ("dcmi module initialize failed.", ("driver", "config")),
    ("Unable to register worker with raylet", ("ray", "config")),
    ("the socversion Ascend910B1 of bin package does not match the device Ascend310P3", ("npu", "config")),
    ("HCCL_CONNECT_TIMEOUT reached: rank 3 lost", ("hccl", "network")),
])
def test_a_plain_failure_line_names_the_component_whose_name_it_carries(line, comps):
    (f,) = errors([line])  # the database without its specific signatures: some of these lines have their own
    assert (f.id, f.components) == ("error-line-names-component", comps)
    assert "->" in f.evidence["read"]


@pytest.mark.parametrize("lines", [
    ["the job failed"],  # a failure, but no component named
    ["INFO 12-03 10:00:00 [worker.py:1] raylet connection failed once, retrying"],  # logged at info
    ["raylet started on node 10.0.0.1"],  # names a component, states no failure
])
def test_the_last_resort_stays_silent_without_a_failure_and_a_name(lines):
    assert errors(lines, specific=True) == []


def test_the_last_resort_gives_way_to_any_other_error():
    found = errors(["Unable to register worker with raylet",
                    "ConnectionResetError: [Errno 104] Connection reset by peer"])
    assert [f.id for f in found] == ["network-error"]


@pytest.mark.parametrize(("line", "fid", "comps"), [
    ("ImportError: /opt/venv/lib/python3.11/site-packages/scikit_learn.libs/libgomp-a34b3233.so.1.0.0: cannot "
     "allocate memory in static TLS block", "static-tls-exhausted", ("system", "env")),
    ("OSError: cannot load library 'libsndfile.so': libsndfile.so: cannot open shared object file",
     "system-library-missing", ("system", "env")),
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method", "device-initialised-before-fork", ("env", "python")),
    ("RuntimeError: An attempt has been made to start a new process before the current process has finished its "
     "bootstrapping phase.", "spawn-without-main-guard", ("python", "config")),
    ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2.1.0 as it may crash.",
     "numpy-abi-mismatch", ("numpy", "python")),
    ("ImportError: peft>=0.11.0 is required for a normal functioning of this module", "package-version-required",
     ("python", "env")),
    ("ImportError: torch_npu>=2.5.1 is required, but found 2.1.0", "package-version-required", ("torch-npu", "python")),
    ("ImportError: Please install librosa to use audio features", "package-asked-for", ("python", "env")),
    ("RuntimeError: aclnnFooBar or aclnnFooBarGetWorkspaceSize not in libopapi.so, or libopapi.so not found.",
     "operator-missing-from-cann", ("kernels", "cann")),
    # (the distribution it names is the component: tests/explain/test_api_classes.py)
    ("pkg_resources.VersionConflict: (numpy 2.1.0, Requirement.parse('numpy<2'))", "installed-version-conflict",
     ("numpy", "python")),
])
def test_a_message_is_named_by_the_class_its_wording_defines(line, fid, comps):
    f = errors([line])[0]
    assert (f.id, f.components) == (fid, comps)


@pytest.mark.parametrize(("line", "comps"), [
    ("[ERROR] 2025-01-02-03:04:05 (PID:77, Device:0, RankID:3) ERR02200 DIST call hccl api failed.", ("hccl", "network")),
    ("[ERROR] 2025-01-02-03:04:05 (PID:77, Device:0, RankID:-1) ERR00100 PTA call acl api failed",
     ("cann", "torch-npu")),
    ("RuntimeError: x must be 2-D ERR01001 OPS invalid parameter", ("config", "torch-npu")),
    # the UNKNOWN layer (99) and the application exception (999) of torch_npu/utils/_error_code.py and its error-code docs
    ("[ERROR] 2025-01-02-03:04:05 (PID:77, Device:0, RankID:-1) ERR99012 UNKNOWN permission error", ("system", "env")),
    ("[ERROR] 2025-01-02-03:04:05 (PID:77, Device:0, RankID:-1) ERR00999 PTA applicaiton exception",
     ("config", "python")),
])
def test_a_torch_npu_code_is_read_by_its_layer_and_code(line, comps):
    (f,) = errors([line])  # without the specific signatures (two of these codes have their own)
    assert (f.id, f.components) == ("torch-npu-code-owner", comps)
    assert "NPUException.h" in f.source or ("_error_code.py" in f.source and ("ERR99" in line or "999 " in line))


@pytest.mark.parametrize(("line", "comp"), [
    ("HCCL 建链失败", "hccl"),
    ("RuntimeError: NPU is in a state the driver does not accept", "npu"),
])
def test_the_last_resort_reads_chinese_failure_words_and_bare_exception_messages(line, comp):
    (f,) = errors([line])
    assert f.id == "error-line-names-component" and f.components[0] == comp


@pytest.mark.parametrize(("line", "comps"), [
    ("RuntimeError: torch_npu was built for torch 2.1.0 but torch 2.3.1 is installed: version mismatch",
     ("torch-npu", "torch")),
    ("The CANN version 8.0.RC1 is not supported by this vllm_ascend release", ("cann", "vllm-ascend")),
])
def test_a_message_that_sets_releases_against_each_other_names_the_packages(line, comps):
    f = errors([line])[0]
    assert (f.id, f.components) == ("versions-disagree", comps)


def test_a_version_line_without_a_verdict_is_not_an_error():
    assert errors(["Using vLLM version 0.9.1 with torch 2.5.1"]) == []


@pytest.mark.parametrize("line", [
    "ValueError: Available KV cache memory: -0.87 GiB but the model needs 2.50 GiB on vllm",
    "RuntimeError: expected hidden size 4.096 k but got 2.048 k in the vllm layer",
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.FloatTensor [5]], which is output 0 of AddBackward0, is at version 1; expected version 0 instead.",
])
def test_sizes_set_against_each_other_are_not_versions(line):
    assert not [f for f in errors([line]) if f.id == "versions-disagree"]


def test_please_install_the_driver_is_not_a_package_named_the():
    assert not [f for f in errors(["RuntimeError: Please install the latest driver and firmware"])
                if f.id == "package-asked-for"]



def test_the_last_resort_never_replaces_a_fallback_signature():
    # device-out-of-memory is a fallback signature written for this line; the last resort would read "NPU" on it
    # and then, as another error is there, drop itself: the log would lose its only finding
    found = [f for f in explain_lines(["npu allocator failed: out of memory at the hbm of device 3"])
             if f.severity is Severity.ERROR]
    assert found and found[0].id == "device-out-of-memory"


def test_a_component_named_by_its_own_name_is_read():
    (f,) = errors(["Version mismatch: the cluster was started with Ray 2.9.0, this process with Ray 2.40.0"])
    assert f.id == "versions-disagree" and f.components[0] == "ray"


def test_a_runtime_symbol_version_is_the_system_not_a_package_even_without_the_quotes():
    # a log pasted into markdown loses the backquote of ld.so's "version `GLIBCXX_3.4.29' not found"
    (f,) = errors(["ImportError: /opt/conda/lib/libstdc++.so.6: version GLIBCXX_3.4.29 not found (required by "
                   "/usr/local/lib/python3.10/site-packages/torch/lib/libtorch.so)"], specific=True)
    assert f.id == "glibc-version-too-old" and f.components[0] == "system"


def test_an_attributed_line_without_its_own_time_says_where_its_time_came_from():
    (f,) = errors(["2025-07-23 03:49:50 INFO starting", "ConnectionResetError: [Errno 104] Connection reset by peer"])
    assert f.evidence["time"].startswith("2025-07-23 03:49:50") and f.evidence["time_from"] == "earlier line"


def test_a_socket_that_cannot_be_made_or_bound_is_a_network_error_unless_logged_as_a_warning():
    # errno(3) EAFNOSUPPORT / EADDRNOTAVAIL: the connection could not even start. NCCL logs its errors at WARN (its
    # documented error level); the same words in c10's `[W ...]` warning record are torch falling back to IPv4.
    nccl = "e66aa18dc444:3171:3171 [0] include/socket.h:311 NCCL WARN Socket creation failed : Address family not " \
           "supported by protocol"
    (f,) = errors([nccl], specific=True)
    assert f.id == "network-error" and f.components == ("network", "env")
    (g,) = errors(["RuntimeError: bind failed: Cannot assign requested address"], specific=True)
    assert g.components[0] == "network"
    c10d = ["[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address "
            "family not supported by protocol).",
            "[W1203 10:11:12.123456000 socket.cpp:697] [c10d] The client socket cannot be initialized to connect to "
            "[localhost]:29500 (errno: 97 - Address family not supported by protocol)."]
    assert errors(c10d, specific=True) == []


def test_a_process_the_oom_killer_ended_is_host_memory_not_the_npus():
    # the event reader kept the OOM kill as a signal event, but nothing attributed it: wording no signature knows
    # said nothing (or the last resort's names)
    (f,) = errors(["[  812.345678] Out of memory: Killed process 4242 (python3) total-vm:912345678kB, "
                   "anon-rss:812345678kB"])
    assert f.id == "host-oom-killed" and f.components == ("system", "config")
    (g,) = errors(["  OOM kill reason: user cgroup memory upper bound was met or exceeded"])
    assert g.id == "host-oom-killed"
    # a setting's name is no kill
    assert errors(["vm.oom_kill_allocating_task = 0", "memory.oom_control: oom_kill_disable 0"]) == []


def test_a_grpc_go_error_line_is_a_cluster_components_not_a_network_failure_of_the_job():
    # grpc-go (grpclog/internal/loggerv2.go at 2bf7f34): Go's log.LstdFlags date, "ERROR: ", the component's "[x] "
    (f,) = errors(['2026/02/09 15:25:22 ERROR: [transport] Client received GoAway with error code ENHANCE_YOUR_CALM '
                   'and debug data equal to ASCII "too_many_pings".'])
    assert f.id == "cluster-component-error" and f.components == ("cluster", "config")
    assert "grpc-go" in f.source and "grpc-go" in f.detail
    # its info lines are no error; klog's lines keep their reading
    assert errors(["2026/02/09 15:25:22 INFO: [core] [Channel #1] Channel Connectivity change to READY"]) == []
    (g,) = errors(["E0209 15:25:22.123456    4242 reflector.go:147] failed to list *v1.Pod: connection refused"])
    assert g.id == "cluster-component-error"
