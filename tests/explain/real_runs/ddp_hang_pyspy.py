"""Two gloo ranks; rank 1 never reaches the all_reduce. While rank 0 waits in it, rank 1 runs `py-spy dump` on rank 0
(what Ray's `ray stack` runs on every worker) into the job's output, then both exit."""

import os
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
pids = Path(os.environ["HANG_DIR"])
if dist.get_rank() == 0:
    (pids / "rank0.pid").write_text(str(os.getpid()))
    dist.all_reduce(torch.ones(4))  # never completes: rank 1 does not call it
else:
    while not (pids / "rank0.pid").exists():
        time.sleep(0.1)
    time.sleep(2)  # rank 0 is inside the collective by now
    pid = (pids / "rank0.pid").read_text()
    spy = Path(sys.executable).with_name("py-spy")
    native = ["--native"] if os.environ.get("HANG_NATIVE") else []  # C/C++ frames too, innermost (py-spy --native)
    print(subprocess.run([str(spy), "dump", *native, "--pid", pid], capture_output=True, text=True).stdout, flush=True)
    os.kill(int(pid), 9)
    os._exit(0)
