"""The one HCCL_CONNECT_TIMEOUT the doctor advises, with where it comes from.

`doctor check` (its fix lines), `doctor launch` (the script's exports, also the smoke run's) and `doctor explain`
(the `hccl-connect-timeout` signature's fix) all say this value, so a user is never told two numbers. It is the
value upstream verl's own NPU example scripts export; HCCL accepts 120-7200 s and defaults to 120 s.
"""

from __future__ import annotations

CONNECT_TIMEOUT = "1500"
CONNECT_TIMEOUT_SOURCE = ("https://github.com/verl-project/verl/blob/v0.9.0/examples/ascend_extras/grpo_trainer/"
                          "run_qwen3_30b_a3b_megatron.sh")
CONNECT_TIMEOUT_RANGE = (120, 7200)
