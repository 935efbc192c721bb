import logging
import sys

import ray

ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1])
@ray.remote
def step(x):
    logging.getLogger("worker").warning("worker %d: a warning a healthy run prints", x)
    print("worker step", x, flush=True)
    return x * 2
print("results", ray.get([step.remote(i) for i in range(3)]), flush=True)
ray.shutdown()
