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


def socket_port_ranges(value: str) -> list[tuple[int, int]] | str | None:
    """HCCL_HOST_SOCKET_PORT_RANGE / HCCL_NPU_SOCKET_PORT_RANGE as HCCL reads them: "auto" (the OS picks the ports),
    the (lo, hi) ranges of `60000,60050-60100` (blanks dropped), or None when HCCL refuses the text (the env-values
    check reports that one)."""
    s = value.replace(" ", "")
    if s == "auto":
        return "auto"
    out: list[tuple[int, int]] = []
    for item in s.split(",") if s else ():
        lo, sep, hi = item.partition("-")
        hi = hi if sep else lo
        if not (lo.isascii() and hi.isascii() and lo.isdigit() and hi.isdigit()) or int(lo) > int(hi):
            return None
        out.append((int(lo), int(hi)))
    return out or None
