"""The NPU's own hardware units in an error's name: the device's task scheduler reporting what failed on the chip.

The Ascend task scheduler (TS) names its errors by the hardware unit that failed and how (hicann/driver,
src/sdk_driver/ts_agent/inc/tsch/task_scheduler_error.h at ef377e9: TS_ERROR_SDMA_TIMEOUT "hwts sdma timeout",
TS_ERROR_HWTS_EXCEPTION, TS_ERROR_AICORE_RESET_FAILED, TS_ERROR_AIC_TRAP_RD_OVERFLOW, TS_ERROR_FFTSPLUS_TASK_TIMEOUT,
...); the driver's handlers and logs use the same words in their identifiers (`..._hwts_sdma_timeout`). An identifier
that joins such a unit (HWTS: the hardware task scheduler; SDMA: its DMA engine; AI Core / AI Vector / AI CPU; FFTS:
the fast task scheduler) with a failure (timeout, error, exception, trap, overflow, reset / fail) says the device
failed executing a task: the NPU (its state, the task it ran, the work mode the chip is set to) and its driver.
Pure logic.
"""

from __future__ import annotations

import re

from doctor.explain.class_phrases import UNIT_PHRASES
from doctor.explain.classes import Class

SOURCE = ("https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/sdk_driver/ts_agent/"
          "inc/tsch/task_scheduler_error.h#L187")
_UNITS = {"hwts": "the hardware task scheduler (HWTS)", "sdma": "the system DMA engine (SDMA)",
          "aicore": "an AI Core", "aic": "an AI Core", "aiv": "an AI Vector core", "aivec": "an AI Vector core",
          "aicpu": "an AI CPU", "ffts": "the fast task scheduler (FFTS)", "fftsplus": "the fast task scheduler (FFTS+)"}
# one identifier (letters, digits, underscores) holding a unit and, after it, a failure; not a counter that reads 0
_UNIT_FAILURE = re.compile(
    r"(?<![\w])(?P<ident>(?:[A-Za-z0-9]+_)*?(?P<unit>hwts|sdma|aicore|aic|aivec|aiv|aicpu|fftsplus|ffts)_"
    r"(?:[A-Za-z0-9]+_)*?(?P<what>timeout|time_out|error|err|exception|trap|overflow|fail|failed)(?:_[A-Za-z0-9]+)*)"
    r"(?![\w])(?!\s*[:=]\s*0\b)", re.I)
PHRASES = UNIT_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def unit_class(text: str) -> Class | None:
    """The class of a line naming an NPU hardware unit's failure in one identifier; None otherwise."""
    m = _UNIT_FAILURE.search(text)
    if m is None:
        return None
    unit, what = m.group("unit").lower(), m.group("what").lower()
    return Class(
        "npu-unit-failure", ("npu", "driver"), f"The NPU's {unit.upper()} reported a {what.replace('_', '')} "
        f"({m.group('ident')})",
        f"{m.group('ident')} names {_UNITS[unit]} of the chip and how it failed, in the words of the device's task "
        "scheduler errors: a task on the device did not complete. The device, its work mode or the task it ran "
        "failed, not the Python code that waits for it.",
        "Check the device's health and mode (npu-smi info; npu-smi info -t health), the device log "
        "(msnpureport, /var/log/npu/) around that time, and the driver / firmware release against the CANN release "
        "(doctor check); a collective that hangs on every rank points at the link or the work mode of the chips.",
        SOURCE)
