"""Error events (issue 23, item 1): a log read into tracebacks, build / loader errors, error codes, pip errors and
signals, streaming; a `\\r` is a line break."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from doctor.explain.events import MAX_EVENTS, MAX_FRAMES, EventReader
from doctor.explain.parts import merge
from doctor.explain.scanner import LogScanner
from doctor.explain.stream import explain_lines
from tests.fuzz._budget import fuzz


def scan(data: bytes, block: int | None = None):
    s = LogScanner()
    if block:
        for i in range(0, len(data), block):
            s.feed_bytes(data[i : i + block])
    else:
        s.feed_bytes(data)
    s.close()
    return s.result()


CHAINED = b"""INFO starting
Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/verl/workers/rollout.py", line 10, in generate
    x()
  File "/usr/lib/python3.10/site-packages/vllm/engine/llm.py", line 20, in __init__
    y
KeyError: 'max_model_len'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/home/me/train.py", line 3, in <module>
    main()
(WorkerDict pid=12, ip=10.0.0.2) RuntimeError: engine failed
"""


def test_a_chained_traceback_is_two_events_with_frames_and_the_link():
    res = scan(CHAINED)
    first, second = res.events
    assert (first.kind, first.line, first.exc_type) == ("python", 7, "KeyError")
    assert [f.path.rsplit("site-packages/", 1)[1] for f in first.frames] == ["verl/workers/rollout.py",
                                                                             "vllm/engine/llm.py"]
    assert first.frames[1].func == "__init__" and first.frames[1].line == 20
    assert second.exc_type == "RuntimeError" and second.chained_from == 0
    assert [f.path for f in second.frames] == ["/home/me/train.py"]


RAY_MISMATCH = b"""Traceback (most recent call last):
  File "/opt/conda/lib/python3.9/site-packages/ray/_private/worker.py", line 1510, in init
    connect(
RuntimeError: Version mismatch: The cluster was started with:
    Ray: 2.12.0
    Python: 3.11.11
This process on node 10.0.0.8 was started with:
    Ray: 2.42.0
    Python: 3.9.21

INFO next record
"""


def test_an_exception_message_that_ends_with_a_colon_goes_on_below():
    ev = scan(RAY_MISMATCH).events[0]
    assert ev.facts["message"].startswith("Version mismatch: The cluster was started with: Ray: 2.12.0")
    assert ev.facts["message"].endswith("Python: 3.9.21") and "INFO" not in ev.facts["message"]
    f = explain_lines(RAY_MISMATCH.decode().splitlines())[0]
    assert f.id == "versions-disagree" and set(f.components) == {"ray", "python"}, (f.id, f.components)
    # a message that does not end with ':' is one line: what follows is another record
    one = scan(b"ValueError: bad value\n    Ray: 2.12.0\n").events[0]
    assert one.facts["message"] == "bad value"


def test_a_bare_exception_is_an_exception_event():
    ev = scan(b'  File "/x/site-packages/ray/services.py", line 574, in check\n    raise Exception(m)\n'
              b"Exception: the cluster and this process disagree\n").events[0]
    assert ev.kind == "python" and ev.exc_type == "Exception" and ev.frames


def test_pythons_call_error_quoted_without_its_type_is_a_typeerror_with_the_line_above():
    ev = scan(b"    x = mod.Foo(a=1)\n`Foo.__init__() missing 2 required keyword-only arguments:\n'a' and 'b'`\n").events[0]
    assert ev.kind == "python" and ev.exc_type == "TypeError" and ev.facts["call"] == "Foo.__init__"
    assert ev.facts["code"] == "x = mod.Foo(a=1)" and "'a' and 'b'" in ev.facts["message"]
    # a frame line right above is where the code would be, not code itself; other errors read no code
    ev = scan(b'  File "/x/y.py", line 3, in f\nTypeError: f() takes 1 positional argument but 2 were given\n').events[0]
    assert ev.facts["call"] == "f" and "code" not in ev.facts
    assert "code" not in scan(b"    x = f(1)\nValueError: bad value\n").events[0].facts
    # a sentence that merely mentions such a call is no event
    assert not scan(b"The fix: forward() got an unexpected keyword argument is gone now\n").events


CUT_SHORT = b"""  File "/env/lib/python3.10/site-packages/verl/workers/megatron_workers.py", line 57, in init_model
    self.actor_module = self._build_model()
  File "/env/lib/python3.10/site-packages/megatron/core/models/gpt/gpt_model.py", line 48, in __init__
    self.rotary = RotaryEmbedding(**kw)
  File "/env/lib/python3.10/functools.py", line 369, in wrapper
    return f(*a)
"""


def test_a_traceback_cut_before_its_exception_line_is_still_read_at_its_innermost_package_frame():
    ev = scan(CUT_SHORT).events[0]
    assert ev.kind == "python" and ev.facts["unfinished"] and len(ev.frames) == 3
    f = explain_lines(CUT_SHORT.decode().splitlines())[0]
    assert f.id == "traceback-ends-in-package" and f.components[0] == "megatron", (f.id, f.components)
    assert "megatron/core/models/gpt/gpt_model.py" in f.evidence["read"]


def test_frames_of_a_logged_stack_or_an_idle_thread_are_no_failure_and_faulthandler_reads_innermost_first():
    stack = (b"WARNING something odd\nStack (most recent call last):\n"
             b'  File "/env/lib/python3.10/site-packages/vllm/engine/llm.py", line 20, in run\n    x()\n')
    assert scan(stack).events == []
    dump = (b"Fatal Python error: Aborted\n\nThread 0x00007f00 (most recent call first):\n"
            b'  File "/env/lib/python3.10/site-packages/ray/_private/worker.py", line 9 in wait\n\n'
            b"Current thread 0x00007f01 (most recent call first):\n"
            b'  File "/env/lib/python3.10/site-packages/torch_npu/npu/utils.py", line 5 in synchronize\n'
            b'  File "/env/lib/python3.10/site-packages/verl/workers/actor.py", line 7 in step\n')
    evs = [e for e in scan(dump).events if e.facts.get("unfinished")]
    assert len(evs) == 1 and evs[0].frames[-1].path.endswith("torch_npu/npu/utils.py")
    assert all("ray" not in f.path for f in evs[0].frames)


def test_the_same_events_whatever_the_block_size():
    whole = scan(CHAINED).events
    assert [(e.line, e.facts, e.frames) for e in scan(CHAINED, block=7).events] == \
           [(e.line, e.facts, e.frames) for e in whole]


def test_build_loader_code_pip_and_signal_events_name_what_failed():
    lines = [
        "fatal error: acl/acl_rt.h: No such file or directory",
        "/usr/bin/ld: cannot find -lhccl",
        "OSError: /x/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3c104impl3fooEv",
        "EJ0003: [PID: 159] Failed to bind the IP port.",
        "RuntimeError: call aclnnCast failed, error code is 561103",
        "ERROR: No matching distribution found for torch-npu==2.1.0rc1",
        "Segmentation fault (core dumped)",
        "ModuleNotFoundError: No module named 'vllm_ascend.ops'",
        "ImportError: cannot import name 'Foo' from 'transformers.utils' (/x/site-packages/transformers/utils/__init__.py)",
    ]
    res = scan(("\n".join(lines) + "\n").encode())
    got = [(e.kind, e.facts) for e in res.events]
    assert got[0] == ("build", {"header": "acl/acl_rt.h"})
    assert got[1] == ("build", {"library": "libhccl"})
    assert got[2][0] == "python" and got[2][1]["symbol"] == "_ZN3c104impl3fooEv"
    assert got[2][1]["library"] == "/x/site-packages/torch_npu/lib/libtorch_npu.so"
    assert got[3] == ("code", {"code": "EJ0003"})
    assert got[4][1]["acl_code"] == "561103"
    assert got[5] == ("pip", {"packages": "torch-npu==2.1.0rc1"})
    assert got[6][0] == "signal"
    assert got[7][1]["module"] == "vllm_ascend.ops"
    assert got[8][1]["module"] == "transformers.utils" and got[8][1]["name"] == "Foo"


def test_an_error_after_a_long_progress_bar_on_the_same_line_is_found():
    # The bar is redrawn with \r; before, only the first 64 KiB of that "line" was read and the error was lost.
    data = b"start\nTraining " + b"\xe2\x96\x88" * 40_000 + b"\r" + b"#" * 30_000 + \
        b"\rImportError: libhccl.so: cannot open shared object file: No such file or directory\r\nnext\n"
    for block in (None, 4096):
        res = scan(data, block)
        assert "cann-libhccl-missing" in res.hits, block
        assert res.events[-1].facts["library"] == "libhccl.so"
    assert scan(b"a\r\nb\r\nc\r\n").lines_read == 3  # \r\n stays one break


def test_memory_is_bounded_events_and_frames():
    reader = EventReader()
    reader.feed(1, "Traceback (most recent call last):")
    for n in range(500):
        reader.feed(2 + n, f'  File "/x/site-packages/pkg/m{n}.py", line 1, in f')
    ev = reader.feed(502, "RecursionError: maximum recursion depth exceeded")
    assert ev is not None and len(ev.frames) == MAX_FRAMES and ev.frames_dropped == 500 - MAX_FRAMES
    assert ev.frames[0].path.endswith("m0.py") and ev.frames[-1].path.endswith("m499.py")
    for n in range(3 * MAX_EVENTS):
        reader.feed(1000 + n, f"ValueError: bad {n}")
    assert len(reader.events) == MAX_EVENTS and reader.dropped == 3 * MAX_EVENTS + 1 - MAX_EVENTS


def test_parts_merge_events_in_log_order_with_shifted_lines():
    a, b = scan(CHAINED), scan(CHAINED)
    merged = merge([a, b], 2)
    assert [e.line for e in merged.events] == [7, 14, 7 + a.lines_read, 14 + a.lines_read]
    assert merged.events[3].chained_from == 2


def test_info_lines_are_not_exceptions():
    assert explain_lines(["INFO all good", "WARNING: nothing to see"])[0].id == "no-known-signature"
    assert scan(b"[INFO] RuntimeError counters reset\n").events == []


def test_a_traceback_logged_by_vllm_or_python_logging_is_read_behind_the_logger_prefix():
    res = scan(b"(EngineCore_DP0 pid=3) ERROR 12-16 01:53:33 [core.py:845] Traceback (most recent call last):\n"
               b'(EngineCore_DP0 pid=3) ERROR 12-16 01:53:33 [core.py:845]   File "/x/site-packages/vllm/v1/core.py", '
               b"line 3, in run\n"
               b"(EngineCore_DP0 pid=3) ERROR 12-16 01:53:33 [core.py:845] ValueError: bad block size\n"
               b"[2025-06-16 15:11:06,443] [ERROR] [comm.py:637:init] KeyError: 'rank'\n")
    a, b = res.events
    assert a.exc_type == "ValueError" and [f.path for f in a.frames] == ["/x/site-packages/vllm/v1/core.py"]
    assert b.exc_type == "KeyError"


def test_an_exception_inside_a_line_is_an_event_but_not_on_info_lines():
    res = scan(b"[E OpParamMaker.cpp:273] call failed: vllm.engine.async_llm_engine.AsyncEngineDeadError: loop died\n"
               b"INFO retrying after ConnectionError: reset by peer\n")
    (ev,) = res.events
    assert ev.facts["exception_path"] == "vllm.engine.async_llm_engine.AsyncEngineDeadError"


_PIECES = st.sampled_from([
    "Traceback (most recent call last):", '  File "/x/site-packages/vllm/a.py", line 3, in f', "ValueError: x",
    "During handling of the above exception, another exception occurred:", "EJ0003: bind", "Killed",
    "fatal error: acl/acl.h: No such file or directory", "undefined symbol: _ZN3c104fooEv", "\r", "INFO ok",
])


@fuzz
@given(st.lists(st.one_of(_PIECES, st.text(max_size=80)), max_size=300))
def test_any_lines_give_bounded_events_and_valid_attributions(lines):
    from doctor.explain.attribution import attribute
    from doctor.report import COMPONENTS

    reader = EventReader()
    for n, line in enumerate(lines, 1):
        reader.feed(n, line)
    reader.close()
    assert len(reader.events) <= MAX_EVENTS
    for ev in reader.events:
        assert len(ev.frames) <= MAX_FRAMES
        assert ev.chained_from is None or 0 <= ev.chained_from < len(reader.events)
        att = attribute(ev)
        assert att is None or (att.components and set(att.components) <= COMPONENTS and att.read)


def test_a_prefix_the_log_puts_before_every_line_is_learned_from_its_traceback():
    # a prefix no table knows: its shape (digits free) is learned from the traceback header, then stripped
    log = [f"node07/rank{n} @@ {line}" for n, line in enumerate([
        "Traceback (most recent call last):",
        '  File "/env/lib/python3.10/site-packages/vllm/engine/llm.py", line 20, in __init__',
        "    self.engine = Engine(**kw)",
        "TypeError: Engine.__init__() got an unexpected keyword argument 'seed'"])]
    ev = scan("\n".join(log).encode() + b"\n").events[0]
    assert ev.exc_type == "TypeError" and [f.path.rsplit("/", 1)[-1] for f in ev.frames] == ["llm.py"]


def test_the_prefixes_of_containers_launchers_and_loggers_are_read_past_but_a_level_is_kept():
    from doctor.explain.events import strip_prefix

    for prefixed in ("> ValueError: x", "2025-01-01T10:00:00.123456789Z stderr F ValueError: x",
                     "trainer-1  | ValueError: x", "0: ValueError: x", "[default0]:ValueError: x",
                     "2025-01-01 10:00:00,123 - root - ERROR - ValueError: x",
                     "2025-01-01 10:00:00.123 | ERROR    | swift.llm:main:12 - ValueError: x"):
        assert strip_prefix(prefixed) == "ValueError: x", prefixed
    # a warning or info line keeps its level: it is not an error
    assert strip_prefix("2025-01-01 10:00:00,123 WARNING x").endswith("WARNING x")
    assert strip_prefix("2025-01-01 10:00:00.123 | INFO     | a:b:1 - hi").startswith("INFO")
    assert strip_prefix("trainer-1  | WARNING x") == "WARNING x"
    # a signature anchored at the line start still matches behind such a prefix
    plain = explain_lines(["nvcc fatal : Unsupported gpu architecture 'compute_86'"])[0]
    assert explain_lines(["> nvcc fatal : Unsupported gpu architecture 'compute_86'"])[0].id == plain.id


def test_notice_records_and_zero_counters_state_no_failure_but_an_error_record_does():
    from doctor.explain.lexicon import states_failure

    # Ray's C++ processes log at info with a level letter; its state dump counts failures that did not happen
    assert not states_failure("[2026-12-03 13:30:20,613 I 6716 6720] (gcs_server) ray_syncer_bidi_reactor_base.h:243: "
                              "Failed to read a message from node: c457ec1e7e168fd4969b6bc2556d1c304c1cfd96")
    assert not states_failure("[state-dump] - num chunks received failed / plasma error: 0")
    assert not states_failure("num ray task events failed to report to aggregator: 0")
    assert not states_failure("I1203 10:11:12.123456  77 x.cc:12] connect failed, retrying")
    assert states_failure("[2026-12-03 13:30:20,613 E 6716 6720] (raylet) node_manager.cc:1: Failed to register worker")
    assert states_failure("Error: 0 nodes are available")  # a zero that is no counter's value
    # Ray's Python processes: `date\tLEVEL file.py:n -- msg`, an error record is an event, a warning is a warning
    ev = scan(b"2026-12-03 13:33:32,327\tERROR worker.py:421 -- The worker died unexpectedly\n").events[0]
    assert (ev.kind, ev.facts["level"], ev.facts["logger"]) == ("log", "error", "worker.py:421")
    assert explain_lines(["2026-12-03 13:33:32,327\tWARNING authentication_token_setup.py:85 -- Token authentication "
                          "is enabled for this Ray cluster."])[0].severity.value != "error"


def test_warning_records_in_glog_ray_and_dated_formats_are_warnings_not_errors_nor_silence():
    for line, logger in (("W1203 10:11:12.123456    77 node_manager.cc:12] Failed to send a heartbeat, retrying",
                          "node_manager.cc:12"),
                         ("[2026-12-03 13:30:20,613 W 6716 6720] (raylet) worker_pool.cc:501: Some workers failed to "
                          "register in time", "worker_pool.cc:501"),
                         ("2025-01-01 10:00:00,123 WARNING The tokenizer could not be loaded, falling back", None)):
        (ev,) = scan(line.encode() + b"\n").events
        assert (ev.kind, ev.facts["level"], ev.facts.get("logger")) == ("log", "warning", logger), line
    ev = scan(b"E1203 10:11:12.123456    77 raylet.cc:9] The raylet exited: out of memory\n").events[0]
    assert (ev.kind, ev.facts["level"]) == ("log", "error")


# vLLM's start-up check (vllm/v1/worker/gpu_worker.py; vllm-ascend's NPUWorker copies it), as a paste that wrapped
# the exception's one line at 80 columns: the phrase the signature knows is split across the wrap.
_WRAPPED = ["ValueError: Free memory on device (10.1/61.0 GiB) on startup is less than desired",
            "GPU memory utilization (0.9, 54.9 GiB). Decrease GPU memory utilization or",
            "reduce GPU memory used by other processes."]


def test_an_exception_message_wrapped_by_a_paste_is_matched_whole():
    f = explain_lines(_WRAPPED)[0]
    assert f.id == "vllm-gpu-memory-utilization-too-high" and f.components[:2] == ("config", "npu")
    assert f.evidence["line"] == 1
    # a message that ends its sentence is not continued: the next line stays a line of its own
    ids = [x.id for x in explain_lines(["ValueError: the setting is wrong.", *_WRAPPED[1:]])]
    assert "vllm-gpu-memory-utilization-too-high" not in ids


def test_a_log_quoted_with_cat_n_line_numbers_is_read_behind_them():
    # `cat -n` / `nl` put the line number and a tab before each line: the exception line was not read behind it, so
    # the traceback looked cut short and was blamed on torch's frame.
    lines = ['  1143\t[rank3]:   File "/usr/local/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 608, '
             'in forward',
             "  1144\t[rank3]:     return F.conv3d(",
             "  1145\t[rank3]: RuntimeError: InnerRun:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:234 OPS "
             "function error: Conv3D, error code is 500002"]
    ev = scan("\n".join(lines).encode() + b"\n").events[0]
    assert ev.kind == "python" and ev.exc_type == "RuntimeError" and ev.frames
    assert "traceback-ends-in-package" not in [f.id for f in explain_lines(lines)]


def test_an_exception_line_with_its_message_on_the_next_lines_is_read_with_them():
    # CPython writes `Type: value` (traceback.py, _format_final_exc_line): a line that stops after `ImportError:` has
    # its message on the lines below it (a message that begins with a newline, or a paste broken after the colon). It
    # was read as an exception without a message, so only the words of the next lines were read, not the import.
    lines = ["Failed to import VLLM Rollout. Please make sure vllm is installed.", "", "ImportError:",
             "cannot import name 'Fp8LinearOp'", "from vllm.model_executor.layers.quantization.utils.w8a8_utils"]
    ev = [e for e in scan("\n".join(lines).encode() + b"\n").events if e.kind == "python"][0]
    assert ev.exc_type == "ImportError" and "cannot import name 'Fp8LinearOp'" in ev.facts["message"]
    lines = ["ImportError:", "cannot import name 'Fp8LinearOp' from "
             "'vllm.model_executor.layers.quantization.utils.w8a8_utils' "
             "(/usr/local/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/utils/w8a8_utils.py)"]
    f = explain_lines(lines)[0]
    assert f.id == "api-version-mismatch" and f.components[0] == "vllm" and f.evidence["line"] == 1
    # an exception line with its message on the same line is not continued onto a following unrelated line
    assert explain_lines(["ImportError: cannot import name 'LLM' from 'vllm' (/x/vllm/__init__.py)",
                          "the next line says nothing"])[0].evidence["read"].count("the next line") == 0


# A real traceback (CPython 3.11, packaging 24) whose exception is named neither ...Error nor ...Exception.
NAMED_OTHERWISE = b"""INFO starting job
Traceback (most recent call last):
  File "/opt/job/train.py", line 5, in <module>
    check("dev-build")
  File "/opt/venv/lib/python3.11/site-packages/packaging/version.py", line 466, in __init__
    raise InvalidVersion(f"Invalid version: {version!r}")
packaging.version.InvalidVersion: Invalid version: 'dev-build'
"""


def test_the_line_below_the_last_frame_is_the_exception_line_whatever_the_exception_is_called():
    """packaging's InvalidVersion, zipfile's BadZipFile: read by its place, so the traceback is not 'cut short' and
    explain names the package whose own exception it is, at the exception's line; behind Ray's prefix too. A plain
    line that happens to follow a frame (`Done`) is no exception."""
    for data in (NAMED_OTHERWISE, NAMED_OTHERWISE.replace(b"\n", b"\n(WorkerDict pid=7, ip=10.0.0.2) ")):
        ev = scan(data).events[0]
        assert (ev.kind, ev.exc_type, ev.line, len(ev.frames)) == ("python", "InvalidVersion", 7, 2), ev
        assert "unfinished" not in ev.facts and ev.facts["message"] == "Invalid version: 'dev-build'"
        (f,) = [f for f in explain_lines(data.decode().splitlines()) if f.severity.value == "error"]
        assert (f.id, f.components[0], f.evidence["line"]) == ("error-in-package", "python", 7), f
        assert "packaging" in f.title and "not in the log" not in f.title
        # numpy's vendored copy of packaging's parser writes the same words; the frame says packaging raised it
        assert not any("numpy" in x.title for x in explain_lines(data.decode().splitlines()))
    bad_zip = NAMED_OTHERWISE.replace(b"packaging.version.InvalidVersion: Invalid version: 'dev-build'",
                                      b"zipfile.BadZipFile: File is not a zip file")
    assert scan(bad_zip).events[0].exc_type == "BadZipFile"
    done = NAMED_OTHERWISE.replace(b"packaging.version.InvalidVersion: Invalid version: 'dev-build'", b"Done")
    assert scan(done).events[0].facts.get("unfinished")
