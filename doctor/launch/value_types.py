"""Each override's value against the type the config gives its key: the field's annotation in the dataclass that
backs its section (schema.py), else the type of the yaml default of that release (`bool`, `int`, `float`), and
the values of the enumerations verl dispatches on (`actor_rollout_ref.rollout.name` from the release's rollout
registry, `algorithm.adv_estimator` from its `AdvantageEstimator` and `register_adv_est` names).

A word where only a numeric yaml default (no dataclass) says a number is expected is a warning: some keys also
take a sentinel word, which the entry point's own code names (the SFT trainer's `test_freq=after_each_epoch`,
read by sentinels.py and then not a finding at all). Hydra composes any scalar into verl's
untyped yaml, so `use_kl_loss=Ture` starts a run with the string "Ture"
(truthy: KL loss on) and `ppo_micro_batch_size_per_gpu=one` fails only once verl does arithmetic with it. Values
only the run knows, interpolations and null are not judged.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from doctor.launch import sources as S
from doctor.launch.override_list import UNKNOWN, Override
from doctor.launch.schema import field_type
from doctor.report import Finding, finding

ROLLOUT_NAME = "actor_rollout_ref.rollout.name"
ADV_ESTIMATOR = "algorithm.adv_estimator"
_SCALARS = ("bool", "int", "float", "str")
_FLOAT_WORDS = ("inf", "-inf", "+inf", "nan")


_INT_LEAF = re.compile(r"(?:batch_size|batch_size_per_gpu|_per_gpu|max_token_len)$")


def expected(annotation: str | None, default_type: str | None, key: str = "") -> str | None:
    """bool / int / float / str from a dataclass annotation (`Optional[int]`, `int | None`), else the default's;
    a null default with no dataclass (verl < 0.6) is an int for the batch-size keys verl divides by. A yaml default
    of 0 or 1 says "a number", not which kind."""
    if annotation:
        a = re.sub(r"^Optional\[(.*)\]$", r"\1", annotation.replace(" ", ""))
        parts = [p for p in a.split("|") if p != "None"]
        if len(parts) == 1 and parts[0] in _SCALARS:
            return parts[0]
        return None  # a union, a list, a Literal, a nested config: not judged
    if default_type == "bool":
        return "bool"
    if default_type in ("int", "float", None) and _INT_LEAF.search(key.rsplit(".", 1)[-1]):
        return "int"
    if default_type in ("int", "float"):  # `entropy_coeff: 0` is a float field: a yaml int says only "a number"
        return "float"
    return None


def mismatch(want: str, value: Any, text: str) -> bool:
    if value is UNKNOWN or value is None or "${" in text:
        return False
    if want == "bool":
        return not isinstance(value, bool)
    if want == "int":
        return isinstance(value, str) or (isinstance(value, float) and not value.is_integer())
    if want == "float":
        return isinstance(value, str) and value.strip().lower() not in _FLOAT_WORDS
    return False


def check_values(ovs: list[Override], flat: dict[str, Any] | None, default_types: dict[str, str],
                 root: Path | None, main_ppo: bool, flagged: set[str | None], entry: str | None = None) -> list[Finding]:
    """A finding per override whose value is not of its key's type, or not one of its enumeration's values. A word
    the entry point's own code takes in that key (sentinels.py: the SFT trainer's `test_freq=after_each_epoch`) is
    not a type mistake."""
    from doctor.launch.sentinels import sentinel_words

    out: list[Finding] = []
    words = sentinel_words(root, entry)
    enums = {ROLLOUT_NAME: rollout_names(root), ADV_ESTIMATOR: adv_estimators(root)}
    for o in ovs:
        if o.prefix == "~" or o.value is None or o.unknown or o.key in flagged:
            continue
        value = o.py
        allowed = enums.get(o.key)
        if allowed and isinstance(value, str) and "${" not in o.value and value not in allowed:
            sev = "error" if main_ppo else "warning"  # a recipe may register its own estimator
            out.append(finding("launch-value-not-allowed", sev, ("config", "verl"),
                               f"{o.key}={value}: not one of this release's values ({', '.join(sorted(allowed))})",
                               key=o.key, evidence={"override": o.text, "allowed": sorted(allowed)},
                               fix=f"Write one of {', '.join(sorted(allowed))}.", source=S.VERL_TRAINER_YAML))
            continue
        annotation = field_type(flat, root, o.key)
        want = expected(annotation, default_types.get(o.key), o.key)
        if want is None or not mismatch(want, value, o.value) or value in words.get(o.key, ()):
            continue
        how = {"bool": "True or False", "int": "an integer", "float": "a number"}[want]
        # only a numeric yaml default says it: the code may also take a word (sft's test_freq=after_each_epoch)
        sev = "error" if annotation is not None or want in ("bool", "int") else "warning"
        out.append(finding("launch-value-type", sev, ("config",),
                           f"{o.key}={o.value}: verl's config expects {how} here",
                           detail=f"{o.key} is a {want} in this release's config; Hydra passes '{o.value}' through "
                                  "as a string, and verl misreads it (any non-empty string is true) or fails later.",
                           key=o.key, evidence={"override": o.text, "expected": want, **({"line": o.line} if o.line else {})},
                           fix=f"Write {o.key}=<{want}>.", source=S.HYDRA_OVERRIDES))
    return out


@lru_cache(maxsize=16)
def _tree(path: str) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def rollout_names(root: Path | None) -> frozenset[str]:
    """The keys of `_ROLLOUT_REGISTRY` in verl/workers/rollout/base.py (verl ≥ 0.6); empty when not here."""
    tree = _tree(str(root / "verl" / "workers" / "rollout" / "base.py")) if root else None
    names: set[str] = set()
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_ROLLOUT_REGISTRY" for t in node.targets) \
                and isinstance(node.value, ast.Dict):
            for k in node.value.keys:
                first = k.elts[0] if isinstance(k, ast.Tuple) and k.elts else k
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value)
    return frozenset(names)


def adv_estimators(root: Path | None) -> frozenset[str]:
    """`AdvantageEstimator` values and `register_adv_est("name")` names of verl/trainer/ppo/core_algos.py."""
    tree = _tree(str(root / "verl" / "trainer" / "ppo" / "core_algos.py")) if root else None
    names: set[str] = set()
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.ClassDef) and node.name == "AdvantageEstimator":
            names |= {s.value.value for s in node.body if isinstance(s, ast.Assign)
                      and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)}
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register_adv_est" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return frozenset(names)
