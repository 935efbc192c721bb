"""The launcher a script starts its entry point with: torchrun (or `python -m torch.distributed.run` / `.launch`),
read from its options and the `PET_*` variables the script exports (torchrun takes each option from `PET_<NAME>`
when the command line does not give it). On it, `doctor check`'s rule on a loopback rendezvous address
(master-addr-loopback), with the same logic and text, on what the script itself fixes: a value the script gives only
when the environment does not (`MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}`) is the job's to set, never a finding; a node
count that is such a default makes the finding a warning.

An entry point run by Ray (main_ppo and the other trainers verl starts with `ray.init`) is not judged here: verl's
RayWorkerGroup hands every worker MASTER_ADDR itself (the rank-0 worker node's Ray address), so a MASTER_ADDR the
script exports never reaches a rendezvous (_create_worker in
https://github.com/verl-project/verl/blob/v0.9.0/verl/single_controller/ray/base.py)."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.checks.network import loopback_host, master_addr_loopback, node_count
from doctor.launch.script_parser import Invocation
from doctor.report import Finding

_MODULES = ("torch.distributed.run", "torch.distributed.launch")
_FLAGS = frozenset({"standalone", "no_python", "run_path", "module", "use_env"})  # torchrun options with no value


@dataclass(frozen=True)
class Setting:
    """One torchrun setting as the script gives it: a command-line option or a `PET_*` export."""

    name: str  # as written: `--master_addr`, `PET_MASTER_ADDR`
    value: str
    line: int | None
    known: bool = True
    from_env: tuple[str, ...] = ()  # the environment variables whose default it is (see World.from_env)
    ref: str | None = None  # the variable an option's value expands, and the line that sets it
    set_at: int | None = None

    def where(self) -> str:
        """`on line 6; ADDR set on line 2`, `exported on line 3`."""
        at = f"line {self.line}" if self.line else "the script"
        if self.name.startswith("PET_"):
            return f"exported on {at}"
        return f"on {at}" + (f"; {self.ref} set on line {self.set_at}" if self.ref and self.set_at else "")


def torchrun_settings(inv: Invocation) -> dict[str, Setting] | None:
    """torchrun's settings the script gives the call (option name with `_`: `master_addr`), None when the entry
    point is not started by torchrun."""
    words = inv.launcher
    start = next((i + 1 for i, w in enumerate(words) if w.known and (
        w.text.rsplit("/", 1)[-1] == "torchrun" or (w.text in _MODULES and i and words[i - 1].text == "-m"))), None)
    if start is None:
        return None
    out = {name[4:].lower(): Setting(name, value, inv.export_lines.get(name), True, inv.exports_from_env.get(name, ()))
           for name, value in inv.exports.items() if name.startswith("PET_")}
    k = start
    while k < len(words):
        w = words[k]
        k += 1
        if not w.text.startswith("--"):
            continue  # `-m` before the module
        name, eq, value = w.text[2:].partition("=")
        key = name.replace("-", "_")
        if eq:
            out[key] = Setting("--" + name, value, w.line, w.known, w.from_env, w.ref, w.set_at)
        elif key in _FLAGS:
            out[key] = Setting("--" + name, "", w.line)
        elif k < len(words) and not words[k].text.startswith("-"):
            v = words[k]
            k += 1
            out[key] = Setting("--" + name, v.text, v.line, v.known, v.from_env, v.ref, v.set_at)
    return out


def _endpoint_host(endpoint: str) -> str:
    ep = endpoint.strip()
    if ep.startswith("["):
        return ep[: ep.find("]") + 1] if "]" in ep else ep
    return ep.rsplit(":", 1)[0] if ep.count(":") == 1 else ep


def launcher_findings(inv: Invocation) -> list[Finding]:
    """master-addr-loopback on the rendezvous address torchrun gets from the script, when the script also says the
    job spans several nodes (torchrun's --nnodes above 1, or --node_rank 1 or more)."""
    opts = torchrun_settings(inv)
    if opts is None or "standalone" in opts:
        return []  # --standalone: a local rendezvous on one node
    endpoint, backend = opts.get("rdzv_endpoint"), opts.get("rdzv_backend")
    addr: Setting | None
    if endpoint is not None and endpoint.value:
        addr, host_text = endpoint, _endpoint_host(endpoint.value)
    elif backend is None or backend.value == "static":
        addr = opts.get("master_addr")  # the static rendezvous dials --master_addr:--master_port
        host_text = addr.value if addr else ""
    else:
        return []
    if addr is None or not addr.known or addr.from_env or (host := loopback_host(host_text)) is None:
        return []  # not loopback, not known, or only a default the job's environment replaces
    rank, nodes = opts.get("node_rank"), opts.get("nnodes")
    by: Setting | None = None
    if rank is not None and rank.known and rank.value.strip().isdigit() and int(rank.value) >= 1:
        by, why = rank, f"{rank.name}={rank.value.strip()} {rank.where()}: this is not rank 0's node"
    elif nodes is not None and nodes.known and (n := node_count(nodes.value)) is not None and n > 1:
        by, why = nodes, f"{nodes.name}={nodes.value.strip()} {nodes.where()}"
    if by is None:
        return []
    if by.from_env:
        why += f", the script's default when the environment does not set {', '.join(by.from_env)}"
    name = addr.name
    return [master_addr_loopback(
        name, addr.value, host, why,
        {"launcher": "torchrun", name: addr.value, "line": addr.line, by.name: by.value,
         **({"set_at_line": addr.set_at} if addr.set_at else {}), **({"defaults": list(by.from_env)} if by.from_env else {})},
        where=f" ({addr.where()}, for torchrun)" if addr.name.startswith("PET_") else f" (torchrun {addr.where()})",
        fix=f"Set {f'{addr.ref} (line {addr.set_at})' if addr.ref and addr.set_at else f'{name} (line {addr.line})'}"
            " to rank 0's node address on the cluster network, the same on every node (e.g. the one the job's "
            "environment gives: `--master_addr=${MASTER_ADDR:?}`); 127.0.0.1 and localhost are for a single node.",
        severity="warning" if by.from_env else "error")]
