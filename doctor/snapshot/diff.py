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


# What `doctor diff` prints by default: the same changes, grouped so that one logical change reads as one line.
# An entry of a keyed collection (an NPU, a /dev node, a module copy) present on one side only is one line per
# collection; a field that changes the same way on several entries is one line naming them; lines that explain a
# failure (packages, versions, env, errors and status) come first. JSON keeps every key.

_NODES = "ascend.device_access.nodes."
_NOUNS = {"ascend.devices": "NPUs", _NODES.rstrip("."): "device files"}
_NAMED = ("modules", "imports")  # `modules.<name>.<field>`: one entry per module


def line(key: str, x: Any, y: Any) -> tuple[str, str, str]:
    """One change as (sign, key, text): `+` only in B, `-` only in A, `~` changed (`x -> y`)."""
    return ("+", key, str(y)) if x == UNKNOWN_MARK else ("-", key, str(x)) if y == UNKNOWN_MARK else ("~", key, f"{x} -> {y}")


def _split(key: str) -> tuple[str, str, str] | None:
    """(collection, entry, field) for a key inside a keyed collection, else None."""
    if key.startswith(_NODES):
        rest = key[len(_NODES):]
        entry, dot, field = rest.rpartition(".")
        return (_NODES.rstrip("."), entry, "." + field) if dot and entry else None
    i = key.find("[")
    j = key.find("]", i + 1)
    if i > 0 and j > 0:
        return key[:i], key[i + 1:j], key[j + 1:]
    top, _, rest = key.partition(".")
    name, dot, field = rest.partition(".")
    if top not in _NAMED or not name:
        return None
    return (top, name, "." + field) if dot else (top, name, "")  # `modules.numpy: null`: the entry itself


def _key(coll: str, names: list[str], field: str = "") -> str:
    if coll in _NAMED:
        return f"{coll}.{names[0]}{field}" if len(names) == 1 else f"{coll}.{{{_entries(names)}}}{field}"
    return f"{coll}[{_entries(names)}]{field}"


def _entries(names: list[str]) -> str:
    """`0-7`, `0, 2, 5`, or the names joined: the entries a grouped line stands for."""
    if len(names) > 2 and all(n.isdigit() for n in names):
        ids = sorted(int(n) for n in names)
        if ids == list(range(ids[0], ids[-1] + 1)):
            return f"{ids[0]}-{ids[-1]}"
    return ", ".join(names[:4]) + (f", +{len(names) - 4} more" if len(names) > 4 else "")


def _items(x: Any, y: Any, env: bool) -> str:
    """A list (or a `:`-separated env value) that changed in part, as the items it lost and gained."""
    if env and isinstance(x, str) and isinstance(y, str) and ":" in x + y:
        x, y = x.split(":"), y.split(":")
    if not (isinstance(x, list) and isinstance(y, list)) or not set(map(str, x)) & set(map(str, y)):
        return ""
    lost = [str(v) for v in x if v not in y]
    gained = [str(v) for v in y if v not in x]
    parts = ([f"without {', '.join(lost)}"] if lost else []) + ([f"with {', '.join(gained)}"] if gained else [])
    return "; ".join(parts) or f"reordered: {', '.join(map(str, y))}"


def _rank(key: str) -> int:
    field = key.rsplit(".", 1)[-1]
    if key.startswith("packages."):
        return 0
    if "version" in field:
        return 1
    if key.startswith("env."):
        return 2
    if field in ("error", "status", "ok", "health") or key.startswith("imports."):
        return 3
    return 4


def summarize(a: Snapshot, b: Snapshot, changes: list[tuple[str, Any, Any]]) -> list[tuple[str, str, str]]:
    """`changes` (from diff_snapshots) as display lines [(sign, key, text)]: sign `+` only in B, `-` only in A,
    `~` changed; most important first. Every change is on exactly one line (an entry recorded as null on the side
    it is missing from is the "only in" line's)."""
    fa, fb = flatten(a), flatten(b)
    present: tuple[set[tuple[str, str]], set[tuple[str, str]]] = (set(), set())
    for side, flat in zip(present, (fa, fb), strict=True):
        # an entry recorded as null (`modules.numpy: null`: probed, not found) is not there on that side
        side.update(s[:2] for k, v in flat.items() if (s := _split(k)) and (s[2] or v is not None))
    lines: list[tuple[str, str, str]] = []
    whole: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # (coll, sign) -> entry -> field -> value
    fields: dict[tuple[str, str, str, str], list[str]] = {}  # (coll, field, sign, text) -> entries
    for key, x, y in changes:
        sign, _, text = line(key, x, y)
        if sign == "~":
            text = _items(fa[key], fb[key], key.startswith("env.")) or text
        s = _split(key)
        if s is None:
            lines.append((sign, key, text))
            continue
        coll, entry, field = s
        only = ("-" if (coll, entry) not in present[1] else "+" if (coll, entry) not in present[0] else "")
        if only and sign != only and not field and (x if sign == "-" else y) is None:
            continue  # the other side's null entry: the "only in" line of the entry says it (it read "- X None" too)
        if only and sign == only:
            whole.setdefault((coll, sign), {}).setdefault(entry, {})[field.lstrip(".")] = x if sign == "-" else y
        else:
            fields.setdefault((coll, field, sign, text), []).append(entry)
    for (coll, sign), entries in whole.items():
        common = {f: v for f, v in next(iter(entries.values())).items()
                  if v is not None and all(e.get(f, UNKNOWN_MARK) == v for e in entries.values())}
        what = f"{len(entries)} {_NOUNS.get(coll, 'entries')} " if len(entries) > 1 else ""
        facts = ", ".join(f"{f}={v}" for f, v in sorted(common.items()))
        lines.append((sign, _key(coll, list(entries)), f"{what}only in {'A' if sign == '-' else 'B'}" + (f" ({facts})" if facts else "")))
    for (coll, field, sign, text), names in fields.items():
        suffix = f"  ({len(names)} {_NOUNS.get(coll, 'entries')})" if len(names) > 1 else ""
        lines.append((sign, _key(coll, names, field), text + suffix))
    return sorted(lines, key=lambda t: (_rank(t[1]), t[1]))
