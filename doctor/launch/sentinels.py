"""The words an entry point's own code takes in a key whose yaml default is a number.

verl's engine SFT trainers (`verl/trainer/sft_trainer.py`, `sft_trainer_ray.py`, 0.6 on) read
`trainer.test_freq` / `trainer.save_freq` as a step count unless the value is the word `after_each_epoch`:

    self.test_freq = self.config.trainer.test_freq
    if self.test_freq == "after_each_epoch":
        self.test_freq = self.steps_per_epoch

so `trainer.test_freq=after_each_epoch` (upstream's `tests/special_e2e/sft/run_sft_engine.sh`) is valid there, and
not in main_ppo's trainer, nor in the legacy `fsdp_sft_trainer`, which does `global_step % test_freq`. The words
are read from the entry module of the release being linted (its source, not a table kept here): every comparison
`==` / `!=` / `in` of a config key (directly, or through an attribute it was copied to) with a string literal.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


def entry_module(root: Path | None, entry: str | None) -> Path | None:
    """The source file of an entry module (`verl.trainer.sft_trainer`) under a release's source root."""
    if root is None or not entry or not entry.replace(".", "").replace("_", "").isalnum():
        return None
    path = root.joinpath(*entry.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def sentinel_words(root: Path | None, entry: str | None) -> dict[str, frozenset[str]]:
    """config key (`trainer.test_freq`) -> the string literals the entry module compares it with; {} when the
    module's source is not here."""
    path = entry_module(root, entry)
    return _words(str(path)) if path is not None else {}


@lru_cache(maxsize=16)
def _words(path: str) -> dict[str, frozenset[str]]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    alias: dict[str, str] = {}  # `self.test_freq` -> `trainer.test_freq`
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, source = _chain(node.targets[0]), _config_key(_chain(node.value))
            if target and source:
                alias[target] = source
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        if not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            continue
        chain = _chain(node.left)
        key = _config_key(chain) or (alias.get(chain) if chain else None)
        if key is None:
            continue
        right = node.comparators[0]
        items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                found.setdefault(key, set()).add(item.value)
    return {k: frozenset(v) for k, v in found.items()}


def _chain(node: ast.expr) -> str | None:
    """`self.config.trainer.test_freq` for an attribute chain on a name, else None."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not names:
        return None
    return ".".join([node.id, *reversed(names)])


def _config_key(chain: str | None) -> str | None:
    """The config key a chain reads: `self.config.trainer.x` / `config.trainer.x` -> `trainer.x`."""
    for prefix in ("self.config.", "config."):
        if chain and chain.startswith(prefix) and "." in chain[len(prefix):]:
            return chain[len(prefix):]
    return None
