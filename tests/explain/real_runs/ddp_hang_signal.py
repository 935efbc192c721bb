"""Two gloo ranks; rank 1 never reaches the all_reduce. Rank 0 registers faulthandler on SIGUSR1 (all threads); while
it waits in the collective, rank 1 sends it SIGUSR1 (its stacks go to the job's output), then ends the job."""

import faulthandler
import os
import signal
import time
from pathlib import Path

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
pids = Path(os.environ["HANG_DIR"])
if dist.get_rank() == 0:
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    (pids / "rank0.pid").write_text(str(os.getpid()))
    dist.all_reduce(torch.ones(4))  # never completes: rank 1 does not call it
else:
    while not (pids / "rank0.pid").exists():
        time.sleep(0.1)
    time.sleep(2)  # rank 0 is inside the collective by now
    pid = int((pids / "rank0.pid").read_text())
    os.kill(pid, signal.SIGUSR1)
    time.sleep(1)
    os.kill(pid, signal.SIGKILL)
    os._exit(0)
