"""A stand-in for `python -m verl.trainer.main_ppo` (the runner's DOCTOR_SMOKE_TRAINER seam).

It prints what verl prints (docs/verl-mindspeed.md "Log lines": Ray-prefixed `step:N - key:value` lines with np.float64 values)
and behaves as FAKE_TRAINER_MODE says: pass | nan | fail | hang | nosteps.
FAKE_TRAINER_DUMP (optional): write {"argv": …, "env": …} there. FAKE_TRAINER_PIDS (hang): child pids.
"""

import json
import os
import subprocess
import sys
import time

mode = os.environ.get("FAKE_TRAINER_MODE", "pass")
steps = 1
for a in sys.argv[1:]:
    if a.startswith("trainer.total_training_steps="):
        steps = int(a.split("=", 1)[1])
dump = os.environ.get("FAKE_TRAINER_DUMP")
if dump:
    with open(dump, "w") as fh:
        json.dump({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}, fh)

pid = os.getpid()
P = f"\x1b[36m(TaskRunner pid={pid})\x1b[0m "
print("ray init kwargs: {'num_cpus': None, 'runtime_env': {'env_vars': {'TOKENIZERS_PARALLELISM': 'true'}}}", flush=True)
print(P + f"Total training steps: {steps}", flush=True)

if mode == "fail":
    print(P + "Traceback (most recent call last):", flush=True)
    print(P + '  File "/usr/local/lib/python3.11/site-packages/torch_npu/__init__.py", line 12, in <module>', flush=True)
    print(P + "ImportError: libhccl.so: cannot open shared object file: No such file or directory", flush=True)
    print("Error executing job with overrides: ['algorithm.adv_estimator=grpo']", flush=True)
    sys.exit(1)

if mode == "hang":
    tmp = os.environ.get("RAY_TMPDIR", "/nonexistent")
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    child = subprocess.Popen(sleeper)  # same process group
    daemon = subprocess.Popen([*sleeper, f"--temp-dir={tmp}/ray"], start_new_session=True)  # like a raylet
    worker = subprocess.Popen(sleeper, start_new_session=True)  # retitled worker: only the env marks it
    with open(os.environ["FAKE_TRAINER_PIDS"], "w") as fh:
        json.dump([child.pid, daemon.pid, worker.pid], fh)
    print(P + "Training Progress:   0%|          | 0/1 [00:00<?, ?it/s]", flush=True)
    time.sleep(600)
    sys.exit(0)

if mode == "nosteps":
    sys.exit(0)

for s in range(1, steps + 1):
    loss = "np.float64(nan)" if mode == "nan" else f"np.float64({-0.0123 * s})"
    print(
        P + f"step:{s} - training/global_step:{s} - training/epoch:0 - actor/entropy:np.float64(6.93) - "
        f"actor/pg_loss:{loss} - actor/pg_clipfrac:np.float64(0.0) - actor/ppo_kl:np.float64(0.0) - "
        f"actor/grad_norm:np.float64(0.8{s}) - actor/lr:np.float64(1e-06) - critic/score/mean:np.float64(0.0) - "
        f"response_length/mean:np.float64(64.0) - timing_s/gen:np.float64(3.2) - timing_s/step:np.float64(12.5) - "
        f"perf/total_num_tokens:np.int64(1536) - perf/throughput:np.float64(15.36)",
        flush=True,
    )
print(P + "Final validation metrics: None", flush=True)
sys.exit(0)
