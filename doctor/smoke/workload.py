"""Build (or reuse) the smoke workload — dataset + tiny model — in a work directory keyed on its parameters.

Layout: `<workdir>/workload-<key>/{data/train.parquet, data/test.parquet, model/…, manifest.json}`. The key
is a hash of every parameter that changes the bytes, so a second run with the same options reuses the build
(after re-checking every artifact's size and sha256) and a changed option builds a new one beside it. A build
goes to a temp directory (the atomic writer's temp name: a killed build's is pruned as its leftover) that is renamed
into place, so an interrupted build never looks complete. In the default work directory (the cache's `smoke/`) a
reuse marks the build used and a new build holds the directory to the cache policy (`doctor.cacheprune`); a
`--workdir` of the user's own is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from doctor.errors import InputError
from doctor.smoke import dataset, tiny_model

# Bump when the builders change what they write, so old caches are not reused.
FORMAT = "doctor.smoke.workload/1"
MANIFEST = "manifest.json"
_ENTRY = re.compile(r"workload-[0-9a-f]{16}")  # what build_workload names a build, nothing else


def default_workdir() -> Path:
    """`$XDG_CACHE_HOME/verl-ascend-doctor/smoke` (default `~/.cache/...`): survives between CI jobs on a runner."""
    from doctor.cachedir import cache_dir

    return Path(cache_dir("smoke"))


@dataclass(frozen=True)
class WorkloadParams:
    tp: int = 1
    pp: int = 1
    seed: int = 0
    n_train: int = 64
    n_val: int = 16
    model_dir: str | None = None  # a user's model: no tiny model is built

    def model_spec(self) -> tiny_model.TinyModelSpec | None:
        return None if self.model_dir else tiny_model.TinyModelSpec.for_parallel(self.tp, self.pp, self.seed)

    def material(self) -> dict[str, Any]:
        """Exactly the inputs that change the bytes written (TP/PP only through the model's shapes)."""
        spec = self.model_spec()
        return {
            "format": FORMAT,
            "seed": self.seed,
            "n_train": self.n_train,
            "n_val": self.n_val,
            "model": asdict(spec) if spec else None,
        }

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.material(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Artifact:
    name: str
    path: str
    bytes: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Workload:
    root: Path
    key: str
    train_file: Path
    val_file: Path
    model_dir: Path
    artifacts: tuple[Artifact, ...]
    reused: bool
    params: WorkloadParams
    problems: tuple[str, ...] = field(default=())  # validation problems (empty = valid)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "key": self.key,
            "reused": self.reused,
            "train_file": str(self.train_file),
            "val_file": str(self.val_file),
            "model_dir": str(self.model_dir),
            "model": "user" if self.params.model_dir else "tiny-qwen2",
            "artifacts": [a.to_dict() for a in self.artifacts],
            "valid": not self.problems,
            "problems": list(self.problems),
        }


def build_workload(workdir: str | os.PathLike[str], params: WorkloadParams) -> Workload:
    """Reuse the cached build for `params` if intact, else build it; then validate every artifact."""
    base = Path(workdir).expanduser().absolute()
    _ensure_dir(base)
    key = params.key()
    root = base / f"workload-{key}"
    reused = _intact(root, key)
    ours = base == default_workdir().expanduser().absolute()
    if reused and ours:
        from doctor.cacheprune import touch

        touch(str(root))
    if not reused:
        _build(base, root, key, params)
        if ours:
            from doctor.cacheprune import prune

            prune(str(base), _ENTRY, str(root), directories=True)
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    artifacts = tuple(Artifact(**a) for a in manifest["artifacts"])
    model_dir = Path(params.model_dir).expanduser().absolute() if params.model_dir else root / "model"
    wl = Workload(
        root=root,
        key=key,
        train_file=root / "data" / "train.parquet",
        val_file=root / "data" / "test.parquet",
        model_dir=model_dir,
        artifacts=artifacts,
        reused=reused,
        params=params,
    )
    return _with_problems(wl)


def validate(wl: Workload) -> list[str]:
    """Every reason the workload would not be usable by verl (empty = valid)."""
    out = []
    out += dataset.validate_dataset(wl.train_file)
    out += dataset.validate_dataset(wl.val_file)
    out += tiny_model.validate_model_dir(wl.model_dir, wl.params.tp, wl.params.pp, tiny=wl.params.model_dir is None)
    return out


def _with_problems(wl: Workload) -> Workload:
    from dataclasses import replace

    return replace(wl, problems=tuple(validate(wl)))


def _ensure_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the work directory: {e.strerror or e}", source=str(path)) from e
    if not os.access(path, os.W_OK):
        raise InputError("work directory is not writable", source=str(path))


def _intact(root: Path, key: str) -> bool:
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if manifest.get("format") != FORMAT or manifest.get("key") != key:
        return False
    for a in manifest.get("artifacts", []):
        p = Path(a.get("path", ""))
        try:
            if p.stat().st_size != a["bytes"] or _sha256(p) != a["sha256"]:
                return False
        except (OSError, KeyError):
            return False
    return bool(manifest.get("artifacts"))


def _build(base: Path, root: Path, key: str, params: WorkloadParams) -> None:
    from doctor.atomic import temp_name

    tmp = base / temp_name()
    try:
        rows = dataset.make_rows(params.n_train, params.n_val, params.seed)
        dataset.write_dataset(tmp / "data", params.n_train, params.n_val, params.seed)
        spec = params.model_spec()
        if spec is not None:
            tiny_model.write_model(tmp / "model", spec, list(dataset.corpus(rows)))
        files = sorted(p for p in tmp.rglob("*") if p.is_file())
        artifacts = []
        for p in files:
            final = root / p.relative_to(tmp)
            artifacts.append(
                {"name": str(p.relative_to(tmp)), "path": str(final), "bytes": p.stat().st_size, "sha256": _sha256(p)}
            )
        manifest = {"format": FORMAT, "key": key, "inputs": params.material(), "artifacts": artifacts}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if _intact(root, key):  # a concurrent smoke finished the same build first: use theirs
            return
        if root.exists():  # a damaged earlier build of the same key: ours to replace
            shutil.rmtree(root)
        os.replace(tmp, root)
    except OSError as e:
        raise InputError(f"cannot write the workload: {e.strerror or e}", source=str(getattr(e, "filename", base))) from e
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
