"""Loading `doctor.snapshot/1` and `doctor.cluster/1` documents into the model's dataclasses.

Strict but forgiving (the contract is in doctor.snapshot.model): every value is checked against the
dataclass field's type, and a wrongly typed one is refused with the file, the path inside it and the
reason (exit 2 via InputError); keys the model does not know ride along in `extra`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Union

from doctor.errors import InputError
from doctor.snapshot._base import _Model, known, normalize_name

# -- type validation ----------------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}
_FIELDS: dict[type, frozenset[str]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _field_names(cls: type) -> frozenset[str]:
    if cls not in _FIELDS:
        _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls)) - {"extra"}
    return _FIELDS[cls]


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "null"
    if origin is list:
        return "array"
    if origin is dict or (isinstance(tp, type) and issubclass(tp, _Model)):
        return "object"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, str(tp))


@functools.cache
def _shape(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """typing's (origin, args) of a field's type, worked out once per type: a live snapshot asks ~1,900 times for a
    few dozen types (every field type of the models is hashable)."""
    return typing.get_origin(tp), typing.get_args(tp)


def _convert(tp: Any, value: Any, path: str) -> Any:
    origin, args = _shape(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None:
            if type(None) in args:
                return None
            raise _TypeErr(path, f"must be {_type_name(tp)}, not null")
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(a, value, path)
            except _TypeErr as e:
                errors.append(e)
        raise errors[0] if len(errors) == 1 else _TypeErr(path, f"must be {_type_name(tp)}, got {_json_type(value)}")
    if value is None:
        raise _TypeErr(path, f"must be {_type_name(tp)}, not null")
    if origin is list:
        if not isinstance(value, list):
            raise _TypeErr(path, f"must be an array, got {_json_type(value)}")
        (item,) = args
        if item is str and all(isinstance(v, str) for v in value):
            return list(value)  # what the loop below gives for them; a live snapshot holds ~1500 Requires-Dist lines
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _TypeErr(path, f"must be an object, got {_json_type(value)}")
        _, vt = args
        return {k: _convert(vt, v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, _Model):
        if not isinstance(value, dict):
            raise _TypeErr(path, f"must be an object, got {_json_type(value)}")
        return _from_dict(tp, value, path)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    raise _TypeErr(path, f"must be {_type_name(tp)}, got {_json_type(value)}")


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return f"string {v!r}" if len(v) < 40 else "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null" if v is None else type(v).__name__


class _TypeErr(Exception):
    def __init__(self, path: str, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def _from_dict(cls: type, data: dict[str, Any], path: str) -> Any:
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    names = _field_names(cls)
    for k, v in data.items():
        if k in names:
            sub = f"{path}.{k}" if path else k
            kwargs[k] = _convert(hints[k], v, sub)
        else:
            extra[k] = v
    obj = cls(**kwargs)
    obj.extra = extra
    return obj


# -- loading -------------------------------------------------------------------------------------------


def section_from_dict(cls: type, data: Any, path: str, source: str = "<collect>") -> Any:
    """One snapshot section (a `_Model` subclass) from its JSON shape, as a snapshot file's would be read: what a
    probe adds to a collected snapshot afterwards (`python.verified_files` under `--deep`)."""
    try:
        return _convert(cls, data, path)
    except _TypeErr as e:
        raise InputError(e.reason, source=source, path=e.path) from None


def snapshot_from_dict(data: Any, source: str = "<snapshot>", path: str = "") -> Snapshot:
    if not isinstance(data, dict):
        raise InputError(f"a snapshot must be a JSON object, got {_json_type(data)}", source=source, path=path or None)
    schema = data.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise InputError(
            f"schema must be {SNAPSHOT_SCHEMA!r}, got {schema!r}" if "schema" in data else f"missing 'schema' (expected {SNAPSHOT_SCHEMA!r})",
            source=source,
            path=(f"{path}.schema" if path else "schema"),
        )
    try:
        snap: Snapshot = _from_dict(Snapshot, data, path)
    except _TypeErr as e:
        raise InputError(e.reason, source=source, path=e.path) from None
    if known(snap.packages):
        normalized: dict[str, Package] = {}
        for name, pkg in snap.packages.items():
            key = normalize_name(name)
            if key in normalized and normalized[key].version != pkg.version:
                raise InputError(
                    f"package listed twice with different versions ({normalized[key].version!r} and {pkg.version!r})",
                    source=source,
                    path=f"{path + '.' if path else ''}packages.{name}",
                )
            normalized[key] = pkg
        snap.packages = normalized
    return snap


def cluster_from_dict(data: Any, source: str = "<cluster>") -> Cluster:
    if not isinstance(data, dict) or data.get("schema") != CLUSTER_SCHEMA:
        raise InputError(f"schema must be {CLUSTER_SCHEMA!r}", source=source, path="schema")
    nodes_raw = data.get("nodes")
    if not isinstance(nodes_raw, list):
        raise InputError("must be an array of {node, snapshot, error}", source=source, path="nodes")
    nodes: list[ClusterNode] = []
    for i, n in enumerate(nodes_raw):
        p = f"nodes[{i}]"
        if not isinstance(n, dict):
            raise InputError(f"must be an object, got {_json_type(n)}", source=source, path=p)
        name = n.get("node")
        if not isinstance(name, str) or not name:
            raise InputError("'node' must be a non-empty string", source=source, path=f"{p}.node")
        err = n.get("error")
        if err is not None and not isinstance(err, str):
            raise InputError(f"must be a string or null, got {_json_type(err)}", source=source, path=f"{p}.error")
        snap_raw = n.get("snapshot")
        snap = None if snap_raw is None else snapshot_from_dict(snap_raw, source, f"{p}.snapshot")
        nodes.append(ClusterNode(node=name, snapshot=snap, error=err))
    c = Cluster(nodes=nodes)
    c.extra = {k: v for k, v in data.items() if k not in ("schema", "nodes")}
    return c


_MAGIC = ((b"\x1f\x8b", "gzip-compressed data"), (b"PK\x03\x04", "a zip archive"), (b"\xfd7zXZ\x00", "xz-compressed data"),
          (b"BZh", "bzip2-compressed data"), (b"\x28\xb5\x2f\xfd", "zstd-compressed data"), (b"\x7fELF", "an ELF binary"))


# what a binary file given for a snapshot or a report most likely is
BUNDLE_HINT = " (a `doctor collect --bundle` archive holds its snapshot as doctor-bundle/snapshot.json)"


def binary_kind(raw: bytes) -> str | None:
    """What a file that is not text holds (`doctor collect --bundle`'s .tar.gz passed where its snapshot or a
    report's text belongs), or None for text: a known magic number, a tar header, else a NUL byte in its start."""
    for magic, what in _MAGIC:
        if raw.startswith(magic):
            return what
    if raw[257:262] == b"ustar":
        return "a tar archive"
    return "binary data" if b"\x00" in raw[:8192] else None


def parse_document(text: str | bytes, source: str) -> Snapshot | Cluster:
    """Parse JSON text into a Snapshot or a Cluster, whichever its `schema` says."""
    try:
        if isinstance(text, bytes):
            if kind := binary_kind(text):
                raise InputError(f"not text: {kind}{BUNDLE_HINT}", source=source)
            text = text.decode("utf-8")
        if not text.strip():
            raise InputError("is empty: a snapshot is the JSON `doctor collect -o FILE` writes", source=source)
        data = json.loads(text)
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start})", source=source) from None
    except json.JSONDecodeError as e:
        hint = ("" if text.lstrip()[:1] in ("{", "[", "") else
                "; a snapshot is the JSON `doctor collect -o FILE` writes, a bug report's text is read with "
                "`doctor check --from-report FILE`")
        raise InputError(f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno}){hint}", source=source) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", source=source) from None
    if isinstance(data, dict) and data.get("schema") == CLUSTER_SCHEMA:
        return cluster_from_dict(data, source)
    return snapshot_from_dict(data, source)


def load_document(path: str) -> Snapshot | Cluster:
    """Read a snapshot or cluster file ("-" for stdin); any failure is an InputError naming the file."""
    import sys

    try:
        if path == "-":
            raw: bytes = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", source=path) from None
    return parse_document(raw, "stdin" if path == "-" else path)


# doctor.snapshot.model re-exports this module's entry points from its last lines; importing the classes here last,
# once the functions that use them are defined, lets either module be imported first (no cycle at load).
from doctor.snapshot.model import (  # noqa: E402
    CLUSTER_SCHEMA,
    SNAPSHOT_SCHEMA,
    Cluster,
    ClusterNode,
    Package,
    Snapshot,
)
