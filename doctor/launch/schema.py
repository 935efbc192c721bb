"""What verl's own source says about a config section: whether a mapping is open (a plain dict that takes any
new key) or backed by a dataclass (its yaml has `_target_: verl.….SomeConfig`, and verl builds the section with
`SomeConfig(**section)`, so a key the class does not declare fails at start-up with
`TypeError: SomeConfig.__init__() got an unexpected keyword argument`), and the declared type of each field.

The dataclass is read from the release's source files with `ast` (nothing of verl is imported): the module of
`_target_`, or the package of that name, beside the config directory being composed. When the source is not
here the section is still known to be closed, but its fields are not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

TARGET = "_target_"


@dataclass(frozen=True)
class DataclassInfo:
    name: str  # the `_target_` (dotted)
    fields: dict[str, str]  # field name -> its annotation as written (`bool`, `Optional[int]`, `str | None`)


def verl_root(config_dir: str | Path | None) -> Path | None:
    """The directory holding the `verl` package of a config directory of that tree (…/verl/trainer/config, a
    recipe's or an experimental entry point's `config`)."""
    if config_dir is None:
        return None
    p = Path(config_dir).resolve()
    for cand in (p, *p.parents):  # verl/trainer/config, verl/experimental/x/config, recipe/x/config
        if (cand / "verl" / "trainer").is_dir():
            return cand
    return None


def section_target(flat: dict[str, Any] | None, section: str) -> str | None:
    """The `_target_` of a composed section (`actor_rollout_ref.actor.checkpoint`), None for a plain mapping."""
    if not flat:
        return None
    t = flat.get(f"{section}.{TARGET}" if section else TARGET)
    return t if isinstance(t, str) and t else None


def dataclass_info(root: Path | None, target: str) -> DataclassInfo | None:
    """The fields verl's source declares for `target`, or None when that source is not here."""
    if root is None or "." not in target:
        return None
    return _info(str(root), target)


@lru_cache(maxsize=256)
def _info(root: str, target: str) -> DataclassInfo | None:
    module, name = target.rsplit(".", 1)
    classes = _classes(root, module)
    if name not in classes:
        return None
    fields: dict[str, str] = {}
    seen: set[str] = set()

    def collect(cls: str) -> None:
        if cls in seen or cls not in classes:
            return
        seen.add(cls)
        node = classes[cls]
        for base in node.bases:  # a base's fields first: the subclass may redeclare one
            bname = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            collect(bname)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                ann = ast.unparse(stmt.annotation)
                if not ann.startswith("ClassVar") and not stmt.target.id.startswith("_"):
                    fields[stmt.target.id] = ann

    collect(name)
    return DataclassInfo(target, fields)


@lru_cache(maxsize=64)
def _classes(root: str, module: str) -> dict[str, ast.ClassDef]:
    """Every class defined in `module` (a file, or every file of a package) and in verl's base_config."""
    base = Path(root, *module.split("."))
    files = [base.with_suffix(".py")] if base.with_suffix(".py").is_file() else sorted(base.glob("*.py"))
    files.append(Path(root, "verl", "base_config.py"))
    out: dict[str, ast.ClassDef] = {}
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, node)
    return out


def is_open(flat: dict[str, Any] | None, dicts: dict[str, int], section: str, root: Path | None,
            key: str) -> tuple[bool, str | None]:
    """(whether `section` accepts the new `key` with '+', the dataclass that closes it when it does not)."""
    if section not in dicts:
        return False, None
    target = section_target(flat, section)
    if target is None:
        return True, None
    info = dataclass_info(root, target)
    if info is not None and key in info.fields:
        return True, None
    return False, target


def open_mapping(flat: dict[str, Any] | None, dicts: dict[str, int], section: str) -> bool:
    """Whether `section` is a mapping verl hands on whole rather than a schema of its own: a plain mapping (no
    `_target_`, the notion `is_open` uses for '+') that is empty by default (`engine_kwargs.sglang: {}`), a dict
    field of a dataclass section (`rollout.engine_kwargs`, `model.override_config`), or inside such a mapping. A key
    that leaves the yaml default of such a mapping is still read by its consumer (SGLang, vLLM, the HF config);
    a plain section of a release without dataclasses (verl <= 0.5's `actor.profile`) is not one."""
    if not section or section not in dicts or section_target(flat, section) is not None:
        return False
    if dicts[section] == 0:
        return True
    parent = section.rsplit(".", 1)[0] if "." in section else ""
    if not parent:
        return False
    return section_target(flat, parent) is not None or open_mapping(flat, dicts, parent)


def under_open_mapping(flat: dict[str, Any] | None, dicts: dict[str, int], key: str) -> str | None:
    """The open mapping (open_mapping) that holds `key` in a composed config: its nearest section that exists
    there, when that one is open; None when that section is a dataclass or a closed plain section."""
    parts = key.split(".")
    for n in range(len(parts) - 1, 0, -1):
        section = ".".join(parts[:n])
        if section in dicts:
            return section if open_mapping(flat, dicts, section) else None
    return None


def field_type(flat: dict[str, Any] | None, root: Path | None, key: str) -> str | None:
    """The declared annotation of `key` in the dataclass of its section, when that source is here. A section with
    no `_target_` of its own inside one that has one (`algorithm.rollout_correction` in `AlgoConfig`) is the class
    its field in that dataclass is annotated with (`rollout_correction: Optional[RolloutCorrectionConfig]`), as
    verl builds it."""
    if "." not in key:
        return None
    section, leaf = key.rsplit(".", 1)
    parts = section.split(".")
    for n in range(len(parts), 0, -1):
        target = section_target(flat, ".".join(parts[:n]))
        if target is None:
            continue
        info = dataclass_info(root, target)
        for child in parts[n:]:  # down the nested dataclass fields to the key's own section
            cls = _field_class(info.fields.get(child)) if info is not None else None
            info = dataclass_info(root, f"{target.rsplit('.', 1)[0]}.{cls}") if cls else None
        return info.fields.get(leaf) if info is not None else None
    return None


def _field_class(annotation: str | None) -> str | None:
    """The class a field holds (`Optional[RolloutCorrectionConfig]`, `RolloutCorrectionConfig | None`, a quoted
    forward reference), None for anything else (a dict, a union of classes, a scalar)."""
    if not annotation:
        return None
    a = annotation.replace(" ", "").replace('"', "").replace("'", "")
    a = a[len("Optional["):-1] if a.startswith("Optional[") and a.endswith("]") else a
    parts = [p for p in a.split("|") if p != "None"]
    return parts[0] if len(parts) == 1 and parts[0].isidentifier() and parts[0][:1].isupper() else None
