"""`doctor explain` on a 200 MB Ray-style training log vs plain Python line reading, same machine, same run.

The log is generated in a temporary directory at bench time (never committed): interleaved Ray/vLLM/verl INFO
and warning lines, progress bars, a few ANSI-coloured lines, and three real failure lines near the end. The
baseline is what any log tool must at least do: `for line in open(path)` (text mode, UTF-8). Target: explain
within 3x of it, with bounded memory (peak RSS independent of the log size).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile

from bench._measure import clean_env, compare, table

SHORT_TARGET = 0.3  # seconds for a 10-line log: start-up, loading the database, one block
# A 10-line log as a user pastes it: a traceback ending in a Python error no signature names precisely.
SHORT_LOG = (
    "INFO 06-16 15:10:58 [__init__.py:44] plugin ascend loaded.\n"
    "(TaskRunner pid=12345) step:3 - actor/pg_loss:0.0213\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/python3.10/lib/python3.10/site-packages/verl/trainer/main_ppo.py", line 64, in main\n'
    "    run_ppo(config)\n"
    '  File "/usr/local/python3.10/lib/python3.10/site-packages/vllm/engine/arg_utils.py", line 1012, in __init__\n'
    "    raise ValueError(msg)\n"
    "ValueError: max_num_batched_tokens (512) is smaller than max_model_len (4096).\n"
    "(TaskRunner pid=12345) exiting\n"
    "done\n"
)
SIZE = int(os.environ.get("DOCTOR_BENCH_EXPLAIN_MB", "200")) * 1024 * 1024
TARGET = 3.0

_LINES = (
    "(TaskRunner pid=12345) INFO 06-16 15:10:58 [__init__.py:44] plugin ascend loaded.",
    "(WorkerDict pid=2231, ip=10.0.0.2) step:{i} - actor/pg_loss:0.0213 - actor/entropy:1.2312 - critic/score/mean:"
    "0.532 - response_length/mean:512.3 - timing_s/gen:12.31",
    "[2025-06-16 15:11:06,443] [INFO] [comm.py:637:init_distributed] cdb=None",
    '(vLLMHttpServer pid=8871) INFO:     127.0.0.1:53422 - "POST /v1/completions HTTP/1.1" 200 OK',
    "Training Progress:  {i}%|████▍     | 44/100 [12:31<15:55, 17.07s/it]",
    "(WorkerDict pid=2231, ip=10.0.0.2) [rank3]:[W616 15:12:01.123456 ProcessGroupHCCL.cpp:123] Warning: tensor "
    "sizes torch.Size([4096, 4096]) do not match the bucket view",
    "(raylet) [2025-06-16 15:11:06,443 I 1234 5678] node_manager.cc:1234: Worker 0x1234abcd registered with node",
    "\x1b[36m(WorkerDict pid=2231, ip=10.0.0.2)\x1b[0m INFO 06-16 15:12:03 [model_runner.py:1153] Loading weights "
    "took 3.21 seconds",
    "(WorkerDict pid=2231, ip=10.0.0.2) INFO 06-16 15:12:05 [config.py:1382] Using max model len 4096 for the "
    "chat template of Qwen2.5-7B-Instruct, dtype=torch.bfloat16, enforce_eager=False, tensor_parallel_size=2",
    "(WorkerDict pid=2231, ip=10.0.0.2) /usr/local/python3.10/lib/python3.10/site-packages/torch/utils/data/"
    "dataloader.py:557: UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max "
    "number of worker in current system is 4, which is smaller than what this DataLoader is going to create.",
    "(TaskRunner pid=12345) validation generation end, {i} samples of the test set took 41.2 seconds to finish",
    "(WorkerDict pid=2231, ip=10.0.0.2) Loading checkpoint shards: 100%|██████████| 4/4 [00:0{i}<00:00,  1.12it/s]",
    "(TaskRunner pid=12345) Filtering prompts longer than 1024 tokens: 100%|██████████| 7473/7473 [00:03<00:00, "
    "2076.58 examples/s]",
)
# Real failure lines (vllm-ascend#19, Ascend/pytorch HCCL_timeout troubleshooting case, torch_npu FAQ).
_FAILURES = (
    "(VllmWorkerProcess pid=20493) ERROR 06-16 15:15:39 multiproc_worker_utils.py:240] RuntimeError: NPU out of "
    "memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity; 10.24 GiB already allocated)",
    "EI0002: [PID: 7277] 2025-06-16-15:17:45.645.648 The wait execution of the Notify register times out.",
    "ImportError: libhccl.so: cannot open shared object file: No such file or directory",
)

PLAIN = "import sys\nfor line in open(sys.argv[1], encoding='utf-8', errors='replace'):\n    pass\n"
# The same command with the pure-`re` pre-filter the doctor falls back to when ahocorasick-rs cannot be imported.
RE_FALLBACK = ("import sys\nimport doctor.explain.prefilter as p\np.BACKEND = 're'\nfrom doctor.cli import main\n"
               "main()\n")
PLAIN_BINARY = "import sys\nfor line in open(sys.argv[1], 'rb'):\n    pass\n"


def make_log(path: str, size: int = SIZE) -> int:
    """Write about `size` bytes of log; returns the number of lines."""
    rng = random.Random(17)
    chunk = []
    for _ in range(20_000):
        chunk.append(rng.choice(_LINES).replace("{i}", str(rng.randint(0, 999))))
    block = ("\n".join(chunk) + "\n").encode()
    lines = 0
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            fh.write(block)
            written += len(block)
            lines += len(chunk)
            if written >= size * 0.9 and _FAILURES:
                fh.write(("\n".join(_FAILURES) + "\n").encode())
                lines += len(_FAILURES)
                written += 1
    return lines


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def run(repeat: int = 5) -> dict:
    repeat = max(1, min(repeat, 3))  # each round reads 200 MB five times
    load_before = _load()
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "run.log")
        n = make_log(log)
        size_mb = os.path.getsize(log) / 1024 / 1024
        cmds = {
            "python: for line in open(log)": [sys.executable, "-c", PLAIN, log],
            "python: for line in open(log, 'rb')": [sys.executable, "-c", PLAIN_BINARY, log],
            "doctor explain --json LOG": [sys.executable, "-m", "doctor", "--json", "explain", log],
            "doctor explain --jobs 1 (one process)": [sys.executable, "-m", "doctor", "--json", "explain", "--jobs",
                                                      "1", log],
            "doctor explain --jobs 1, re fallback": [sys.executable, "-c", RE_FALLBACK, "--json", "explain", "--jobs",
                                                     "1", log],
        }
        m = compare(cmds, repeat=repeat, env=clean_env(), cwd=d)
    plain, binary, explain, single, fallback = (m[k] for k in cmds)
    ratio = explain.seconds / plain.seconds if plain.seconds else float("nan")
    return {
        "title": "explain vs plain line reading",
        "rows": [r.to_dict() for r in (plain, binary, explain, single, fallback)],
        "ratios": {"doctor explain / text line reading (time)": ratio,
                   "doctor explain --jobs 1 / text line reading (time)": single.seconds / max(plain.seconds, 1e-9),
                   "doctor explain / binary line reading (time)": explain.seconds / max(binary.seconds, 1e-9),
                   "doctor explain --jobs 1 with the re fallback / text line reading (time)":
                       fallback.seconds / max(plain.seconds, 1e-9)},
        "notes": [f"log: {size_mb:.0f} MB, {n} lines, generated in a temp dir; explain exits 1 (it finds the errors)",
                  f"doctor explain peak RSS {explain.peak_rss_mb:.0f} MB (bounded: the log is streamed)",
                  f"load average {load_before} before, {_load()} after, on {os.cpu_count()} CPUs (a busy machine "
                  "slows the longer command more: compare runs at similar load)"],
        "table": table(f"doctor explain on a {size_mb:.0f} MB log vs plain Python line reading",
                       [plain, binary, explain, single, fallback], baseline="python: for line in open(log)")
        + f"\n  doctor explain takes {ratio:.2f}x the plain text line reading (target <= {TARGET:.0f}x); in one "
        f"process {single.seconds / max(plain.seconds, 1e-9):.2f}x; with the re fallback pre-filter "
        f"{fallback.seconds / max(plain.seconds, 1e-9):.2f}x",
    }


def run_short(repeat: int = 7) -> dict:
    """`doctor explain` on a 10-line log, whole process (interpreter start included) vs `python -c pass`."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "short.log")
        with open(log, "w", encoding="utf-8") as fh:
            fh.write(SHORT_LOG)
        cmds = {"python -c pass": [sys.executable, "-c", "pass"],
                "doctor explain LOG (10 lines)": [sys.executable, "-m", "doctor", "explain", log]}
        m = compare(cmds, repeat=repeat, env=clean_env(), cwd=d)
    base, short = (m[k] for k in cmds)
    return {
        "title": "explain on a 10-line log",
        "rows": [r.to_dict() for r in (base, short)],
        "ratios": {"doctor explain on 10 lines (seconds)": short.seconds},
        "notes": [f"load average {_load()} on {os.cpu_count()} CPUs"],
        "table": table("doctor explain on a 10-line log", [base, short], baseline="python -c pass")
        + f"\n  doctor explain on a 10-line log takes {short.seconds:.2f} s (target < {SHORT_TARGET} s)",
    }


if __name__ == "__main__":
    if "--short" in sys.argv[1:]:
        res = run_short()
        print(res["table"])
        print("\n".join(f"  note: {n}" for n in res["notes"]))
        sys.exit(0)
    res = run(int(os.environ.get("DOCTOR_BENCH_REPEAT", "3")))
    print(res["table"])
    print("\n".join(f"  note: {n}" for n in res["notes"]))
