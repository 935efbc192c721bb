"""Flatten two snapshots into dotted keys and list what differs: the pure half of `doctor diff`.

Keys read like the snapshot (`packages.torch-npu`, `ascend.toolkit.version`, `env.HCCL_CONNECT_TIMEOUT`,
`modules.megatron.origins`), so a difference names where to look. Volatile facts (collection time,
listening ports, HBM in use, process ids, memory, free disk space) are left out unless asked for: they differ between any
two runs and hide the change that matters.
"""

from __future__ import annotations

from typing import Any

from doctor.snapshot.model import Snapshot

_VOLATILE_PREFIXES = ("collected_at", "tool.", "network.listening_ports", "host.memory_gb", "host.shm_gb",
                      "python.sys_path", "collect.", "host.container_evidence")
_VOLATILE_PARTS = (".hbm_used_mb", ".processes", ".seconds", ".free_gb", ".used_fraction")


def flatten(snap: Snapshot) -> dict[str, Any]:
    d = snap.to_dict()
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k == "packages" and isinstance(v, dict):
            for name, p in v.items():
                out[f"packages.{name}"] = _pkg(p)
        elif k == "env" and isinstance(v, dict):
            for name, val in v.items():
                out[f"env.{name}"] = val
        elif k == "ascend" and isinstance(v, dict):
            for part, pv in v.items():
                if part == "devices" and isinstance(pv, list):
                    out["ascend.devices.count"] = len(pv)
                    for dev in pv:
                        if isinstance(dev, dict):
                            key = f"ascend.devices[{dev.get('id')}" + (f".{dev.get('chip_index')}" if dev.get("chip_index") else "") + "]"
                            _walk(dev, key, out)
                else:
                    _walk(pv, f"ascend.{part}", out)
        else:
            _walk(v, k, out)
    return out


def _pkg(p: Any) -> Any:
    if not isinstance(p, dict):
        return p
    v = p.get("version")
    extra = [f"{k}={p[k]}" for k in ("editable", "url", "commit") if p.get(k)]
    return f"{v}" + (f" ({', '.join(extra)})" if extra else "")


def _walk(v: Any, key: str, out: dict[str, Any]) -> None:
    if isinstance(v, dict) and v:
        for k, sub in v.items():
            _walk(sub, f"{key}.{k}", out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            name = x.get("name") or x.get("path") or x.get("address") or i
            _walk(x, f"{key}[{name}]", out)
    else:
        out[key] = v


UNKNOWN_MARK = "(not probed)"


def diff_snapshots(a: Snapshot, b: Snapshot, *, volatile: bool = False) -> list[tuple[str, Any, Any]]:
    """[(key, value in A, value in B)] for every key whose value differs, sorted by key. A key one side
    never probed shows UNKNOWN_MARK there; `null` (probed, absent) stays None."""
    fa, fb = flatten(a), flatten(b)
    out = []
    for key in sorted(set(fa) | set(fb)):
        if not volatile and (key.startswith(_VOLATILE_PREFIXES) or any(p in key for p in _VOLATILE_PARTS)):
            continue
        x, y = fa.get(key, UNKNOWN_MARK), fb.get(key, UNKNOWN_MARK)
        if x != y:
            out.append((key, _show(x), _show(y)))
    return out


def _show(v: Any) -> Any:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) if v else "[]"
    return v
