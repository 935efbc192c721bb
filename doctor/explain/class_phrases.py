"""The fixed phrases of the failure classes read beside the signatures, for the scanner's pre-filter.

The pre-filter (doctor.explain.scanner) needs every phrase at start-up; the modules that read the lines
(doctor.explain.osclasses, pipclasses, dcmi, hccl_codes, npu_units, memory_budget, hangs) compile their regexes only
when a candidate line first reaches them (doctor.explain.events imports them then). A line must hold one of a
module's phrases to be read by it. Pure data.
"""

from __future__ import annotations

import re

# doctor.explain.osclasses
OS_PHRASES: tuple[tuple[str, ...], ...] = (
    ("errno",), ("Errno",), (": cannot",), (": can't",), (": Cannot",), (": could not",), (": unable",),
    (": failed",), (": No such file",), (": not found",), (": Permission denied",), (": invalid option",),
    (": unrecognized option",), (": missing operand",), ("utility",), ("executable",), ("not on PATH",),
    ("not in PATH",), ("not in your PATH",), ("not on your PATH",), ("_timeout",), ("_TIMEOUT",), (" signal",), ("Signal ",), ("<Signals.",), (" Killed ",), ("Killed",), (" Bus error ",),
    ("returned non-zero exit status",),
)
# doctor.explain.pipclasses
PIP_PHRASES: tuple[tuple[str, ...], ...] = (("requires a different Python",), ("configuration file provided by",),
                                        ("Could NOT find",))
# doctor.explain.dcmi
DCMI_PHRASES: tuple[tuple[str, ...], ...] = (("dcmi",), ("DCMI",), ("Dcmi",))
# doctor.explain.hccl_codes
HCCL_PHRASES: tuple[tuple[str, ...], ...] = (("HCCL function error",),)
# doctor.explain.npu_units
UNIT_PHRASES: tuple[tuple[str, ...], ...] = tuple((p,) for p in (
    "hwts_", "HWTS_", "_hwts", "_HWTS", "sdma_", "SDMA_", "_sdma", "_SDMA", "aicore_", "AICORE_", "aic_", "AIC_",
    "aiv_", "AIV_", "aicpu_", "AICPU_", "ffts", "FFTS"))
# doctor.explain.memory_budget
BUDGET_PHRASES: tuple[tuple[str, ...], ...] = ((": -",), (":-",), ("= -",), ("=-",))
# py-spy's `dump` thread header (src/dump.rs: `Thread <id> (<status>): "<name>"`, status idle / active / active+gil /
# gil, src/stack_trace.rs status_str): the scanner then reads the frame lines below it (they hold no phrase)
PYSPY_PHRASES: tuple[tuple[str, ...], ...] = (("(idle)",), ("(active)",), ("(active+gil)",), ("(gil)",))
PYSPY_THREAD = re.compile(r'^\s*Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:idle|active|active\+gil|gil)\)(?:: "[^"]*")?\s*$')
# doctor.explain.hangs named_wait: Ray's raylet / autoscaler naming a resource request it cannot place
WAIT_PHRASES: tuple[tuple[str, ...], ...] = (("scheduled right now",), ("fulfill resource request",))
# faulthandler's watchdog header (CPython Modules/faulthandler.c: "Timeout (%lu:%02lu:%02lu)!"): the event reader
# checks every candidate line for it (doctor.explain.hangs reads the stacks that follow)
WATCHDOG = re.compile(r"^\s*Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!\s*$")
