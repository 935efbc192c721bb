"""A hang: a stack dump whose thread stands inside a collective operation.

A job that hangs prints no exception; what an engineer reads is a stack dump taken while it hung: Python's
faulthandler watchdog (`faulthandler.dump_traceback_later(timeout)` prints "Timeout (H:MM:SS)!" and then every
thread's stack, innermost frame first) or its "Current thread" dump on a signal. When a thread's innermost frames are
torch.distributed's collective functions (distributed_c10d.py: all_reduce, all_gather, broadcast, barrier, ...), the
process is waiting for the other ranks: torch's documentation of the collectives requires every rank of the group
to call each one, in the same order, and a rank that never arrives (it failed, took another branch, or cannot reach
this one) leaves the others blocked until the backend's timeout. The collective layer (HCCL on Ascend) and the link
are where to look, starting with the rank that is not in the collective. torch_npu replaces some of them with its own
(torch_npu/distributed/distributed_c10d.py: _batch_isend_irecv, _gather, the uneven all_gather / reduce_scatter).

py-spy's `dump` (what Ray's `ray stack` and its dashboard's "Stack Trace" run on every worker) prints the same stacks
from outside the process: the event reader (doctor.explain.events) keeps a thread of such a dump only when
`stack_hang` reads it. A thread whose innermost frames are Ray's `ray.get` / `ray.wait` (ray/_private/worker.py)
waits for a remote task or actor that has not returned: the hang is in that worker (Ray's "Debugging Hangs" guide:
dump the workers' stacks).

A wait can also be named by the program that waits: Ray's raylet pushes a warning to the driver when a task, actor or
lease "cannot be scheduled right now" (src/ray/raylet/scheduling/cluster_task_manager.cc / cluster_lease_manager.cc:
"It requires {…} for placement, however the cluster currently cannot provide the requested resources"), and its
autoscaler says "No available node types can fulfill resource requests {…}*N" (python/ray/autoscaler/v2/event_logger.py). Nothing fails after it: the job waits for
resources the cluster does not have (NPUs Ray did not detect, a placement group larger than the nodes). Pure logic.
"""

from __future__ import annotations

import re
from typing import Any

from doctor.explain.attributed import Attribution
from doctor.explain.class_phrases import WATCHDOG as WATCHDOG  # the header (read by the event reader)
from doctor.report import Severity

SOURCE = "https://pytorch.org/docs/stable/distributed.html#collective-functions"
FAULTHANDLER = "https://docs.python.org/3/library/faulthandler.html#faulthandler.dump_traceback_later"
PY_SPY = "https://github.com/benfred/py-spy/blob/master/src/dump.rs"
RAY_HANGS = "https://docs.ray.io/en/latest/ray-observability/user-guides/debug-apps/debug-hangs.html"
# a faulthandler frame carries the whole path; a py-spy frame the path below its sys.path entry (`torch/distributed/...`)
_C10D = re.compile(r"(?:^|/)torch(?:_npu)?/distributed/(?:distributed_c10d|c10d_logger)\.py$")
COLLECTIVES = frozenset("""all_reduce all_gather all_gather_into_tensor _all_gather_base all_gather_object
    all_to_all all_to_all_single barrier monitored_barrier broadcast broadcast_object_list reduce reduce_scatter
    reduce_scatter_tensor _reduce_scatter_base gather gather_object scatter scatter_object_list send recv isend irecv
    batch_isend_irecv _batch_isend_irecv _gather _gather_object _reduce_scatter_tensor_uneven
    _all_gather_into_tensor_uneven""".split())
RAY_INFEASIBLE = ("https://github.com/ray-project/ray/blob/ray-2.60.0/src/ray/raylet/scheduling/"
                  "cluster_lease_manager.cc")
RAY_NPU = "https://github.com/ray-project/ray/blob/ray-2.60.0/python/ray/_private/accelerators/npu.py"
# the raylet's infeasible-lease warning (older: "The actor or task with ID …") and the autoscaler's
_UNSCHEDULABLE = re.compile(r"(?:cannot be scheduled right now|No available node types can fulfill resource requests?)"
                            r"(?:(?::|\..*?It requires)? ?(?P<req>\{[^}]*\}(?:\*\d+)?(?:, \{[^}]*\}(?:\*\d+)?)*))?")
# Ray's blocking calls (ray/_private/worker.py: `get` -> Worker.get_objects, `wait`)
_RAY_WORKER = re.compile(r"(?:^|/)ray/_private/worker\.py$")
RAY_WAITS = frozenset({"get", "get_objects", "wait"})


def stack_hang(frames: list[Any], dump: str = FAULTHANDLER) -> Attribution | None:
    """What a thread's stack dumped while the job hung waits for (frames outermost first): a collective, or a Ray
    task; None for a thread that waits for nothing we can name (an idle pool thread is no failure)."""
    return collective_hang(frames, dump) or ray_wait_hang(frames, dump)


def _innermost_python(frames: list[Any]) -> list[Any]:
    """The innermost few Python frames, innermost first: py-spy's `--native` (and Ray's dashboard with native=1)
    puts the C/C++ frames the wait runs in (`pthread_cond_wait (libc.so.6)`, `c10d::Work::wait
    (libtorch_cpu.so)`) inside them; a wrapper (c10d_logger) may sit inside the collective."""
    return list(reversed([f for f in frames if f.path.endswith(".py")][-4:]))


def ray_wait_hang(frames: list[Any], dump: str = FAULTHANDLER) -> Attribution | None:
    """The attribution of a dumped stack standing in ray.get / ray.wait; None for any other stack."""
    for frame in _innermost_python(frames):
        if _RAY_WORKER.search(frame.path.replace("\\", "/")) and frame.func in RAY_WAITS:
            where = f"{frame.func} ({frame.path}:{frame.line})"
            return Attribution(
                "ray-wait-hang", Severity.ERROR, ("ray",),
                "The process hung waiting on ray.get: a Ray task or actor it called has not returned",
                f"Read: a stack dumped while the job hung stands in Ray's {frame.func} ({where}). ray.get blocks "
                "until the remote task or actor method returns; the caller is not stuck itself, the worker running "
                "that call is (in a collective waiting for another rank, a loop, or a worker that died and is "
                "being retried).",
                "Dump the workers' stacks (`ray stack` on each node, or the dashboard's Stack Trace) and find the "
                "actor that has not returned; a worker standing in a collective waits for a rank that never "
                "arrived (HCCL_EXEC_TIMEOUT / HCCL_CONNECT_TIMEOUT only bound that wait); `ray list tasks` shows "
                "the ones still running.",
                RAY_HANGS, f"{where} (a stack dumped while the job hung, {dump})")
    return None


def collective_hang(frames: list[Any], dump: str = FAULTHANDLER) -> Attribution | None:
    """The attribution of a dumped stack whose innermost torch.distributed frame is a collective (frames outermost
    first, as the event reader keeps them); None for any other stack."""
    for frame in _innermost_python(frames):
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
                SOURCE, f"{where} (a stack dumped while the job hung, {dump})")
    return None


def named_wait(text: str) -> Attribution | None:
    """A line in which the program that waits names what it waits for (Ray's unschedulable resource request); None
    for any other line."""
    m = _UNSCHEDULABLE.search(text)
    if m is None:
        return None
    req = m.group("req") or ""
    npu = "NPU" in req
    what = f"the resources it requires ({req})" if req else "resources no node offers"
    return Attribution(
        "ray-resources-unschedulable", Severity.ERROR, ("ray", "config", *(("npu",) if npu else ())),
        "The job waits for Ray resources the cluster cannot provide (it hangs, nothing fails)",
        f"Read: Ray cannot place a task or actor: {what}. No error follows; the job waits until the resources appear, "
        "which on a fixed cluster is never: the request is larger than the nodes (n_gpus_per_node x nnodes, a "
        "placement group's bundles), or a node's NPUs were not registered with Ray (Ray counts them with AscendCL or "
        "/dev/davinci*, and honours ASCEND_RT_VISIBLE_DEVICES).",
        "Compare `ray status` (the resources each node registered) with what the job asks for; start Ray on each node "
        "where the NPUs are visible (or `ray start --resources='{\"NPU\": 8}'`), and make the trainer's "
        "n_gpus_per_node / nnodes fit them.",
        RAY_INFEASIBLE, f"{m.group(0)} ({RAY_NPU})",
        extra={"waits_for": req or "resources"})  # a wait: the root cause only where nothing fails (findings)
