"""An NPU hardware unit's failure named in one identifier (doctor/explain/npu_units.py), in the words of the device's
task scheduler errors (hicann/driver task_scheduler_error.h at ef377e9: TS_ERROR_SDMA_TIMEOUT "hwts sdma timeout",
TS_ERROR_HWTS_EXCEPTION, TS_ERROR_AICORE_RESET_FAILED, TS_ERROR_AIC_TRAP_RD_OVERFLOW, ...). Read with the generic
database."""

from __future__ import annotations

import pytest

from doctor.explain.npu_units import unit_class
from tests.explain.generic import errors


@pytest.mark.parametrize("line", [
    "ts report error: TS_ERROR_HWTS_EXCEPTION",
    "[2026-12-03 10:11:12] device 3: TS_ERROR_AICORE_RESET_FAILED",
    "devdrv: hwts_sdma_copy_error on stream 12",
    "TS_ERROR_FFTSPLUS_TASK_TIMEOUT",
])
def test_an_identifier_naming_an_npu_units_failure_is_the_npus(line):
    (f,) = errors([line])
    assert f.id == "npu-unit-failure" and f.components == ("npu", "driver")
    assert "task_scheduler_error.h" in f.source


def test_a_unit_without_a_failure_a_zero_counter_or_a_notice_is_none():
    assert unit_class("hwts_task_log enabled") is None
    assert unit_class("aicore_error_count: 0") is None
    assert unit_class("the aic error was fixed") is None  # separate words: no identifier
    assert errors(["[INFO] RUNTIME(1234,python):2026-12-03 hwts_sdma_timeout set to 1800"]) == []
