import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(2) * dist.get_rank()
dist.all_reduce(t)
print("rank", dist.get_rank(), t.tolist(), flush=True)
dist.barrier()
dist.destroy_process_group()
