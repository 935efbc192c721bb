"""A Ray job that asks for NPUs the node does not have: the raylet warns that the task cannot be scheduled, and the
job waits (here: until ray.get's timeout)."""

import sys

import ray

ray.init(num_cpus=1, include_dashboard=False, _temp_dir=sys.argv[1])


@ray.remote(resources={"NPU": 8})
def step():
    return 1


try:
    ray.get(step.remote(), timeout=20)
except ray.exceptions.GetTimeoutError:
    print("still waiting after 20 s", flush=True)
