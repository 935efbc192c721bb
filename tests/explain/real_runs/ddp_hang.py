import faulthandler
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    time.sleep(30)  # never reaches the collective before rank 0's watchdog fires
faulthandler.dump_traceback_later(3, exit=True)
dist.all_reduce(torch.ones(4))
