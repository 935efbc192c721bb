"""A hang: a stack dump whose thread stands inside a collective operation.

A job that hangs prints no exception; what an engineer reads is a stack dump taken while it hung: Python's
faulthandler watchdog (`faulthandler.dump_traceback_later(timeout)` prints "Timeout (H:MM:SS)!" and then every
thread's stack, innermost frame first) or its "Current thread" dump on a signal. When a thread's innermost frames are
torch.distributed's collective functions (distributed_c10d.py: all_reduce, all_gather, broadcast, barrier, ...), the
process is waiting for the other ranks: torch's documentation of the collectives requires every rank of the group
to call each one, in the same order, and a rank that never arrives (it failed, took another branch, or cannot reach
this one) leaves the others blocked until the backend's timeout. The collective layer (HCCL on Ascend) and the link
are where to look, starting with the rank that is not in the collective. Pure logic.
"""

from __future__ import annotations

import re
from typing import Any

from doctor.explain.attributed import Attribution
from doctor.explain.class_phrases import WATCHDOG as WATCHDOG  # the header (read by the event reader)
from doctor.report import Severity

SOURCE = "https://pytorch.org/docs/stable/distributed.html#collective-functions"
FAULTHANDLER = "https://docs.python.org/3/library/faulthandler.html#faulthandler.dump_traceback_later"
_C10D = re.compile(r"torch/distributed/(?:distributed_c10d|c10d_logger)\.py$")
COLLECTIVES = frozenset("""all_reduce all_gather all_gather_into_tensor _all_gather_base all_gather_object
    all_to_all all_to_all_single barrier monitored_barrier broadcast broadcast_object_list reduce reduce_scatter
    reduce_scatter_tensor _reduce_scatter_base gather gather_object scatter scatter_object_list send recv isend irecv
    batch_isend_irecv""".split())


def collective_hang(frames: list[Any]) -> Attribution | None:
    """The attribution of a dumped stack whose innermost torch.distributed frame is a collective (frames outermost
    first, as the event reader keeps them); None for any other stack."""
    for frame in reversed(frames[-4:]):  # the innermost few: a wrapper (c10d_logger) may sit inside the collective
        path = frame.path.replace("\\", "/")
        if _C10D.search(path) and frame.func in COLLECTIVES:
            where = f'File "{frame.path}", line {frame.line}, in {frame.func}'
            return Attribution(
                "collective-hang", Severity.ERROR, ("hccl", "network"),
                f"The process hung inside a collective ({frame.func}): it waits for another rank",
                f"Read: a stack dump taken while the job hung stands in torch.distributed's {frame.func} ({where}). "
                "Every rank of the group must call each collective in the same order; this one is waiting for a rank "
                "that has not arrived: a rank that failed earlier (its own log), that took another branch (a "
                "different number of steps or micro batches), or that cannot reach this one over the collective's "
                "links.",
                "Find the rank that is not in the collective (its log and stack); check the links and addresses HCCL "
                "uses (HCCL_IF_IP, the rank table, hccn_tool -net_health) and that every rank runs the same schedule; "
                "HCCL_EXEC_TIMEOUT / HCCL_CONNECT_TIMEOUT only bound how long the others wait.",
                SOURCE, f"{where} (a stack dumped while the job hung, {FAULTHANDLER})")
    return None
