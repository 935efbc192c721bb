"""A process that logs an exception and then re-raises it (vLLM's engine core: `logger.exception("EngineCore failed
to start.")`, then `raise e`, vllm v0.13.0 vllm/v1/engine/core.py run_engine_core) prints its logged record, whose last
line is the exception, and then multiprocessing's `Process NAME:` and the same exception's traceback. A pasted log
often stops inside that traceback: the exception is the logged line just above it, the same failure."""

from __future__ import annotations

from doctor.explain.stream import explain_lines

# Real output: a process named EngineCore_DP0 that logs through vLLM's format (vllm/logger.py _FORMAT, _DATE_FORMAT;
# decorate_logs' `(NAME pid=N) ` prefix) and re-raises, run under Python 3.11; the paste starts at the logged
# exception line and stops inside the process's traceback.
_TAG = "(EngineCore_DP0 pid=2441) "
_SITE = "/tmp/h105/repro/site/lib/python3.11/site-packages/vllm/v1/engine/core.py"
_MP = "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/process.py"
PROCESS_TRACEBACK = [
    "Process EngineCore_DP0:",
    "Traceback (most recent call last):",
    f'  File "{_MP}", line 314, in _bootstrap',
    "    self.run()",
    f'  File "{_MP}", line 108, in run',
    "    self._target(*self._args, **self._kwargs)",
    f'  File "{_SITE}", line 59, in run_engine_core',
    "    raise e",
    f'  File "{_SITE}", line 56, in run_engine_core',
    "    EngineCore()",
    f'  File "{_SITE}", line 45, in __init__',
    "    check_config(8192)",
]
LOGGED = _TAG + "ERROR 12-06 16:50:09 [core.py:58] ValueError: Unknown quantization method ascend_w8a8"
CUT = [LOGGED, *(_TAG + line for line in PROCESS_TRACEBACK)]


def _errors(lines: list[str]) -> list:
    return [f for f in explain_lines(lines) if f.severity.value == "error"]


def test_the_logged_exception_leads_and_its_cut_traceback_does_not_say_it_is_missing():
    errors = _errors(CUT)
    assert errors[0].evidence["line"] == 1, [(f.id, f.evidence["line"]) for f in errors]
    assert errors[0].components[0] == "vllm"
    assert "traceback-ends-in-package" not in [f.id for f in errors]
    assert not any("not in the log" in f.title for f in errors)


def test_a_message_the_terminal_wrapped_still_stands_above_its_traceback():
    # the record's message cut by a terminal's width onto unindented lines of the same process
    wrapped = [_TAG + "ERROR 12-06 16:50:09 [core.py:58] ValueError: No free NPU on this node: 8 are held by pla",
               "cement groups NPU_group_0 .. NPU_group_7 of another job on node 10.0.0.1 for the",
               "engine of this one, started 2",
               *(_TAG + line for line in PROCESS_TRACEBACK)]
    errors = _errors(wrapped)
    assert errors[0].evidence["line"] == 1, [(f.id, f.evidence["line"]) for f in errors]
    assert "traceback-ends-in-package" not in [f.id for f in errors]


def test_another_processs_cut_traceback_is_still_its_own_failure():
    other = [LOGGED, *("(EngineCore_DP1 pid=2442) " + line for line in PROCESS_TRACEBACK)]
    assert "traceback-ends-in-package" in [f.id for f in _errors(other)]


def test_a_traceback_far_below_the_logged_line_is_still_its_own_failure():
    far = [LOGGED, *(f"INFO 12-06 16:50:1{i} [loader.py:12] loading shard {i}" for i in range(8)),
           *PROCESS_TRACEBACK]
    assert "traceback-ends-in-package" in [f.id for f in _errors(far)]


# The whole record `logger.exception("EngineCore failed to start.")` prints in vLLM's format (each line of the
# traceback behind the same prefix), then the process's traceback, cut off: the same run as above.
_LOGGER = _TAG + "ERROR 12-06 16:50:09 [core.py:58] "
RECORD = [
    _LOGGER + "EngineCore failed to start.",
    _LOGGER + "Traceback (most recent call last):",
    _LOGGER + f'  File "{_SITE}", line 56, in run_engine_core',
    _LOGGER + "    EngineCore()",
    _LOGGER + f'  File "{_SITE}", line 45, in __init__',
    _LOGGER + "    check_config(8192)",
    _LOGGER + f'  File "{_SITE}", line 36, in check_config',
    _LOGGER + '    raise ValueError(os.environ["MSG"])',
    LOGGED,
    *(_TAG + line for line in PROCESS_TRACEBACK),
]


def test_the_exception_leads_the_record_that_heads_its_traceback():
    errors = _errors(RECORD)
    assert errors[0].evidence["line"] == 9, [(f.id, f.evidence["line"]) for f in errors]
    assert errors[0].title.startswith("ValueError")
    # the record's own finding, if any, follows it; the cut traceback below adds none
    assert [f.evidence["line"] for f in errors[1:]] in ([], [1])
    assert "traceback-ends-in-package" not in [f.id for f in errors]
