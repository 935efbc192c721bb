"""`doctor explain` on multi-process logs as verl prints them (doctor.explain.processes): Ray's `(Actor pid=N, ip=…)`
and `(raylet)` tags, vLLM's worker tags nested in them, torch's `[rank3]:` and torch elastic's `[default0]:`, Open
MPI's `[1,0]<stderr>:`, and Ray's ` [repeated Nx across cluster]` dedup suffix.

- Whether a process went on after an exception it logged at error level is read from that process's own next lines:
  before, on a torchrun log another rank's info lines counted, and a dead rank's exception read as handled (warning).
- Ray's dedup suffix is no part of the message: before, it stayed in messages and evidence, and a signature anchored at
  a message's end missed the line; a traceback header with it was not read as one.
- The same failure printed by several processes is one finding that says how many and which (evidence `processes`,
  `process_names`) and how many more copies Ray folded (`repeated_across_cluster`).

The real logs (multiproc/*.log, multiproc/cases.toml: each thread's URL and cause) are quoted from public threads;
the made ones are minimal logs in the launchers' own prefix formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.explain.processes import printed_by_words, process_of, repeated, unrepeated
from doctor.explain.stream import explain_lines, explain_path
from doctor.report import Severity
from doctor.tomlfile import read_toml

HERE = Path(__file__).parent / "multiproc"
CASES = read_toml(HERE / "cases.toml")


def _traceback(prefix: str, exc: str = "ValueError: bad batch") -> list[str]:
    return [f"{prefix}Traceback (most recent call last):",
            f'{prefix}  File "/usr/local/lib/python3.10/site-packages/verl/trainer/ppo/ray_trainer.py", line 42, in fit',
            f"{prefix}    step()",
            f"{prefix}{exc}"]


def _logged(prefix: str) -> list[str]:
    """A process logging an exception at error level with its traceback (`logger.exception(msg)`)."""
    return [f"{prefix}2025-01-01 10:00:00,000 ERROR train.py:10 -- step failed", *_traceback(prefix)]


def _errors(findings):
    return [f for f in findings if f.severity is Severity.ERROR]


# -- which process printed a line

@pytest.mark.parametrize("prefix, process", [
    ("(WorkerDict pid=2262481, ip=10.52.48.37) ", "WorkerDict pid=2262481, ip=10.52.48.37"),
    ("(TaskRunner pid=33823) ", "TaskRunner pid=33823"),
    ("(pid=18747) ", "pid=18747"),
    ("(raylet) ", "raylet"),
    ("(vLLMHttpServer pid=3847687) (Worker_TP1 pid=3849557) ", "vLLMHttpServer pid=3847687 / Worker_TP1 pid=3849557"),
    ("[rank3]: ", "rank3"),
    ("[default0]:", "default0"),
    ("[1,0]<stderr>:", "1,0"),
    ("3: ", None),  # srun's label and a paste's line number look alike: no process
    ("", None),
    ("> ", None),
])
def test_the_process_a_launcher_prefix_names(prefix, process):
    assert process_of(prefix) == process


def test_rays_dedup_suffix_and_its_one_time_note_are_no_part_of_the_line():
    line = "(WorkerDict pid=1) Invalid handle. Cannot load symbol cublasLtGetVersion [repeated 7x across cluster]"
    noted = (line + " (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see "
             "https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication "
             "for more options.)")
    for text in (line, noted):
        assert unrepeated(text) == "(WorkerDict pid=1) Invalid handle. Cannot load symbol cublasLtGetVersion"
        assert repeated(text.encode()) == 7
    assert repeated(b"(WorkerDict pid=1) step 3 [repeated 7x across cluster] done") == 0  # only at a line's end
    assert unrepeated("no suffix") == "no suffix"


# -- "went on" per process

def test_a_rank_that_logged_its_exception_did_not_go_on_because_another_rank_did():
    lines = [*_logged("[rank1]: "),
             "[rank0]: 2025-01-01 10:00:01,000 INFO train.py:20 -- step 2 done",
             "[rank0]: 2025-01-01 10:00:02,000 INFO train.py:20 -- step 3 done"]
    found = explain_lines(lines)
    assert [f.id for f in _errors(found)] == ["error-in-package"]
    assert "handled" not in _errors(found)[0].evidence


def test_a_rank_that_logged_its_exception_and_went_on_itself_is_handled():
    # the guard: the same rank's own next lines still say it went on
    lines = [*_logged("[rank1]: "),
             "[rank1]: 2025-01-01 10:00:01,000 INFO train.py:20 -- step 2 done",
             "[rank1]: 2025-01-01 10:00:02,000 INFO train.py:20 -- step 3 done"]
    found = explain_lines(lines)
    assert not _errors(found)
    assert [f.evidence.get("handled") for f in found if f.id == "error-in-package"] == ["exception"]


def test_two_ranks_interleaved_tracebacks_each_keep_their_own_frames():
    # torchrun ranks write at once: their tracebacks' lines interleave. Each exception takes its own rank's frames;
    # before, one open traceback took both ranks' frames and rank0's ValueError read as raised in torch_npu
    rank0 = _traceback("[rank0]: ", "ValueError: micro batch is 0")
    rank1 = [line.replace("verl/trainer/ppo/ray_trainer.py", "transformers/trainer.py")
             for line in _traceback("[rank1]: ", "KeyError: 'input_ids'")]
    found = _errors(explain_lines([line for pair in zip(rank0, rank1, strict=True) for line in pair]))
    err = next(f for f in found if f.id == "error-in-package")
    assert err.evidence["line"] == 7 and "/verl/trainer/ppo/ray_trainer.py" in err.evidence["read"]
    assert "/transformers/" not in err.evidence["read"]


def test_a_traceback_pasted_with_line_numbers_is_one_traceback():
    # the guard: `N: ` before each line is a paste's line number as often as srun's label; read as processes, each
    # frame would stand apart and the exception would lose its traceback
    lines = [f"{n}: {line}" for n, line in enumerate(_traceback(""), 1)]
    assert [f.id for f in _errors(explain_lines(lines))] == ["error-in-package"]


# -- Ray's dedup suffix

def test_a_signature_anchored_at_the_message_end_matches_a_line_ray_folded():
    found = explain_lines(["(WorkerDict pid=9, ip=10.0.0.2) bash: ninja: command not found [repeated 7x across cluster]"])
    hit = next(f for f in found if f.id == "system-tool-missing")
    assert hit.evidence["repeated_across_cluster"] == 7 and "[repeated" not in hit.evidence["text"]


def test_a_traceback_header_ray_folded_is_read_as_one():
    # a warning record right above a traceback header says the exception was handled; with Ray's suffix on the
    # header the traceback's frames were read as quoted without one, and the handled exception was an error
    p = "(WorkerDict pid=9) "
    lines = [f"{p}WARNING 01-01 10:00:00 [loader.py:12] retrying the download",
             f"{p}Traceback (most recent call last): [repeated 3x across cluster]",
             f'{p}  File "/usr/local/lib/python3.10/site-packages/verl/utils/fs.py", line 3, in copy',
             f"{p}    shutil.copy(src, dst)",
             f"{p}ValueError: bad path",
             f"{p}INFO 01-01 10:00:01 [loader.py:20] downloaded"]
    found = explain_lines(lines)
    assert not _errors(found)
    assert [f.evidence.get("handled") for f in found if f.id == "error-in-package"] == ["warning"]


# -- a Python warning's message on its next line (the dedup suffix hid the ':' that announces it)

_WARNED = ["/usr/local/lib/python3.11/site-packages/vllm/connections.py:8: RuntimeWarning: Failed to read commit hash:",
           "No module named 'vllm._version'",
           "  from vllm.version import __version__ as VLLM_VERSION"]


@pytest.mark.parametrize("prefix, suffix", [("", ""), ("(pid=18749) ", " [repeated 6x across cluster]")])
def test_the_next_line_of_a_warning_whose_message_announces_it_is_the_warnings(prefix, suffix):
    # warnings.formatwarning writes a message with its line breaks: vLLM's `Failed to read commit hash:\n{e}`
    found = explain_lines([f"{prefix}{line}{suffix}" for line in _WARNED])
    assert not _errors(found)
    assert [f.evidence.get("handled") for f in found if f.id == "module-of-package-missing"] == ["warned"]


def test_a_line_below_a_warning_that_announces_nothing_is_its_own():
    # the guard: a warning whose message ended, then the failure line
    lines = ["/opt/job/train.py:3: UserWarning: slow tokenizer in use", *_WARNED[1:]]
    assert [f.id for f in _errors(explain_lines(lines))] == ["module-of-package-missing"]
    # and another process's line below the warning is that process's
    lines = [f"(pid=1) {_WARNED[0]}", f"(pid=2) {_WARNED[1]}"]
    assert [f.id for f in _errors(explain_lines(lines))] == ["module-of-package-missing"]


# -- one finding for a traceback several processes printed

@pytest.mark.parametrize("prefix", ["[rank{}]: ", "[default{}]:", "(WorkerDict pid=10{}, ip=10.0.0.2) "])
def test_one_traceback_from_four_processes_is_one_finding_that_says_so(prefix):
    lines = [line for i in range(4) for line in _traceback(prefix.format(i), "ValueError: micro batch is 0")]
    found = _errors(explain_lines(lines))
    assert [f.id for f in found] == ["error-in-package"]
    assert found[0].evidence["occurrences"] == 4 and found[0].evidence["processes"] == 4
    assert found[0].evidence["process_names"][0] == process_of(prefix.format(0))


def test_one_signature_line_from_four_ranks_is_one_finding_that_names_them():
    lines = [f"[rank{i}]: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU {i}; 60.97 GiB total "
             f"capacity; 58.92 GiB already allocated)" for i in (0, 1, 2, 10)]
    found = _errors(explain_lines(lines))
    assert len(found) == 1
    assert found[0].evidence["process_names"] == ["rank0", "rank1", "rank2", "rank10"]
    assert printed_by_words(found[0].evidence) == " (4 processes: rank0, rank1, rank2, rank10)"


def test_a_single_process_says_nothing_of_processes():
    found = _errors(explain_lines(_traceback("[rank0]: ")))
    assert found and "processes" not in found[0].evidence and printed_by_words(found[0].evidence) == ""


# -- the real logs

@pytest.mark.parametrize("name", sorted(CASES))
def test_real_multiprocess_logs(name):
    case = CASES[name]
    assert case["url"].startswith("https://github.com/") and case["cause"]
    found = explain_path(str(HERE / f"{name}.log"))[0]
    assert sorted({f.id for f in found}) == sorted(case["expect"])
    for f in found:  # no message or evidence keeps Ray's dedup suffix
        assert "across cluster]" not in f.evidence.get("text", "") + f.title + (f.detail or "")


def test_real_ray_log_counts_the_copies_ray_folded():
    found = {f.id: f for f in explain_path(str(HERE / "nccl-1591.log"))[0]}
    assert found["message-owner"].evidence["repeated_across_cluster"] == 14
    assert found["message-owner"].evidence["text"].endswith("deadlock in distributed execution.")
    warned = [f for f in explain_path(str(HERE / "verl-949-desc.log"))[0] if f.id == "warning-from-package"]
    vllm = next(f for f in warned if "vllm" in f.components)
    assert vllm.evidence["text"].endswith("RuntimeWarning: Failed to read commit hash:")
    assert vllm.evidence["repeated_across_cluster"] == 6
    # the log's only error before was that warning's second line (module-of-package-missing); the failure it shows is
    # cut off inside its traceback
    assert not [f for f in explain_path(str(HERE / "verl-949-desc.log"))[0] if f.severity is Severity.ERROR]
