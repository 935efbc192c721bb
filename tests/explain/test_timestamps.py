"""What explain says of a time whose format has no year (vLLM's `ERROR 01-13 07:50:04`, glog's `E0113 07:50:04`):
the year is the one a full date of the same log states, else it is not said. The sort key still needs a year
(DEFAULT_YEAR), so the ordering of events is the same either way; only the printed time differs."""

from __future__ import annotations

from doctor.explain import timestamps
from doctor.explain.multi import explain_many
from doctor.explain.stream import explain_lines
from doctor.report import Severity

VLLM_ERROR = ("ERROR 01-13 07:50:04 [core.py:700] EngineCore failed to start.",
              "RuntimeError: shape '[19, -1]' is invalid for input of size 640")
GLOG_ERROR = ("E0113 07:50:04.123456 4242 ProcessGroupHCCL.cpp:1010] [Rank 3] Watchdog caught collective operation",
              "RuntimeError: shape '[19, -1]' is invalid for input of size 640")


def _times(lines: list[str]) -> list[str]:
    found = [f for f in explain_lines(lines) if f.severity is Severity.ERROR]
    assert found
    return [f.evidence["time"] for f in found if "time" in f.evidence]


def test_a_year_less_stamp_is_printed_without_a_year_the_log_does_not_state():
    for lines in (VLLM_ERROR, GLOG_ERROR):
        times = _times(list(lines))
        assert times and all(t.startswith("01-13 07:50:04") for t in times), times


def test_a_full_date_elsewhere_in_the_log_states_the_year():
    for lines in (VLLM_ERROR, GLOG_ERROR):
        times = _times(["2026-01-13 07:49:58,001 INFO starting the server", *lines])
        assert times and all(t.startswith("2026-01-13 07:50:04") for t in times), times


def test_the_sort_key_is_the_same_with_the_year_assumed():
    stated = timestamps.parse(b"ERROR 01-13 07:50:04 [core.py:700] x", 2025)
    assumed = timestamps.parse(b"ERROR 01-13 07:50:04 [core.py:700] x", 2025, year_stated=False)
    assert stated == assumed
    assert timestamps.format_epoch(stated) == "2025-01-13 07:50:04.000"
    assert timestamps.format_epoch(assumed) == "01-13 07:50:04.000"
    full = timestamps.parse(b"2024-01-13 07:50:04,5 ERROR x", 2025, year_stated=False)  # its own line states it
    assert timestamps.format_epoch(full) == "2024-01-13 07:50:04.500"


def test_several_logs_name_the_first_failure_without_a_year_none_states(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "run.log").write_text("\n".join(VLLM_ERROR) + "\n")
    (tmp_path / "b" / "run.log").write_text("ERROR 01-13 07:51:10 [core.py:700] EngineCore failed to start.\n"
                                            "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    findings, extra = explain_many([str(tmp_path)])
    assert [e["node"] for e in extra["timeline"]][:1] == ["a"]
    assert all("2025" not in (e["time"] or "") for e in extra["timeline"])
    root = next(f for f in findings if f.id == "root-cause-node")
    assert "at 01-13 07:50:04" in root.detail and "2025" not in root.detail
