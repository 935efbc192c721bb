"""Compose once per (config directory, config name, verl version, override set), then read the answer back.

Composing verl's config through Hydra takes 1-2 s (most of `doctor smoke --dry-run` and `doctor lint`); the
same script or smoke spec composes to the same result until a yaml file changes. The result — Hydra's
findings (with their advice), the rejected overrides, the composed config flattened to its leaves and
mappings, and its YAML — is kept as JSON under the doctor's cache directory (`compose/`), keyed by a hash of
the config directory's yaml files (path, size, mtime), the config name, the verl version, hydra-core's version
and the override texts in order. A cache hit imports neither Hydra nor OmegaConf. Entries that cannot be
read are recomposed; writes are atomic, so parallel runs never see half a file. A hit marks its entry used and a
write holds `compose/` to the cache policy (`doctor.cacheprune`): every doctor version and edited checkout composes
anew, and a day of linting scripts wrote 35 MB here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from doctor.launch.hydra_compose import ComposeResult
from doctor.launch.override_list import Override
from doctor.report import Finding, finding

FORMAT = "doctor.compose/3"


def _fingerprint(config_dir: Path) -> str:
    h = hashlib.sha256()
    for root, dirs, files in os.walk(config_dir):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".yaml", ".yml")):
                p = Path(root, f)
                st = p.stat()
                h.update(f"{p.relative_to(config_dir)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _hydra_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hydra-core")
    except PackageNotFoundError:
        return "none"


_PATH = re.compile(r"^/[\w./@+-]*$")


def _normal(o: Override) -> str:
    """An absolute path composes the same whatever it names (Hydra reads it as a plain string), so a per-run
    path (a Ray temp dir, a workload file) does not make every composition new. Rules read overridden keys from
    the overrides themselves, never from the cached config."""
    if o.value is not None and _PATH.match(o.value):
        return f"{o.prefix}{o.key}=<path>"
    return o.text


def cache_key(ovs: list[Override], config_dir: Path, config_name: str, verl_version: str) -> str:
    h = hashlib.sha256()
    from doctor import __version__

    for part in (FORMAT, __version__, _code_fingerprint(), str(config_dir.resolve()), _fingerprint(config_dir),
                 config_name, verl_version,
                 _hydra_version(), *(_normal(o) for o in ovs)):
        h.update(part.encode("utf-8", "replace") + b"\0")
    return h.hexdigest()


_CODE: list[str] = []


def _code_fingerprint() -> str:
    """The code that turns a composition into findings (this module, hydra_compose, advice): a change to it must not
    be answered from a cache written by the code before (an edited checkout keeps its __version__)."""
    if not _CODE:
        h = hashlib.sha256()
        here = Path(__file__).parent
        for name in ("compose_cache.py", "hydra_compose.py", "advice.py"):
            try:
                h.update((here / name).read_bytes())
            except OSError:
                h.update(name.encode())
        _CODE.append(h.hexdigest()[:16])
    return _CODE[0]


def _path(key: str) -> Path:
    from doctor.cachedir import cache_dir

    return Path(cache_dir("compose", key[:2], key + ".json"))


_ENTRY = re.compile(r"[0-9a-f]{64}\.json")  # what _path names under its shard, nothing else


def compose_cached(ovs: list[Override], config_dir: str | Path, config_name: str, verl_version: str,
                   *, use_cache: bool = True) -> ComposeResult:
    """hydra_compose.compose, answered from the cache when the same composition was done before."""
    cdir = Path(config_dir).resolve()
    # a search path the script adds brings config from outside this tree, which the key does not fingerprint
    use_cache = use_cache and not any(o.key == "hydra.searchpath" for o in ovs)
    path = _path(cache_key(ovs, cdir, config_name, verl_version)) if use_cache else None
    if path is not None:
        hit = _load(path)
        if hit is not None:
            from doctor.cacheprune import touch

            touch(str(path))
            if any(_normal(o) != o.text for o in ovs):
                hit.yaml = None  # composed with other paths: the YAML is not this one's
            return hit
    from doctor.launch import hydra_compose

    res = hydra_compose.compose(ovs, cdir, config_name)
    if path is not None:
        from doctor.cacheprune import prune

        _store(path, res)
        prune(str(path.parent.parent), _ENTRY, str(path), shards=True)
    return res


def _load(path: Path) -> ComposeResult | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        return ComposeResult(config_dir=data["config_dir"], findings=[_finding(d) for d in data["findings"]],
                             rejected=list(data["rejected"]), flat=data["flat"], dicts=dict(data["dicts"]),
                             yaml=data.get("yaml"), groups=list(data.get("groups", [])),
                             types=dict(data.get("types", {})))
    except (KeyError, TypeError, ValueError):
        return None


def _store(path: Path, res: ComposeResult) -> None:
    from doctor.atomic import write_text_atomic

    data = {"format": FORMAT, "config_dir": res.config_dir, "findings": [f.to_dict() for f in res.findings],
            "rejected": res.rejected, "flat": res.flat, "dicts": res.dicts, "yaml": res.yaml, "groups": res.groups,
            "types": res.types}
    try:
        text = json.dumps(data, default=str)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(str(path), text)
    except (OSError, TypeError, ValueError):
        pass  # a cache that cannot be written only costs time


def _finding(d: dict[str, Any]) -> Finding:
    fix = d.get("fix") or {}
    return finding(d["id"], d["severity"], tuple(d["components"]), d["title"], detail=d.get("detail", ""),
                   evidence=d.get("evidence") or {}, fix=fix.get("text"), commands=fix.get("commands") or (),
                   key=d.get("key"), source=d.get("source"))
