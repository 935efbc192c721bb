import sys

import ray

ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1])
@ray.remote
def step(cfg):
    if cfg["micro_batch"] > cfg["batch"]:
        raise ValueError(f"micro_batch ({cfg['micro_batch']}) must not exceed batch ({cfg['batch']})")
    return 1
ray.get(step.remote({"micro_batch": 8, "batch": 4}))
