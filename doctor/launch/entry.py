"""Which config an entry point composes and which engine it then runs, as verl's entry points decide it.

`verl.trainer.main_ppo` is `@hydra.main(config_path="config", config_name="ppo_trainer")` at every release
the rules know (https://github.com/verl-project/verl/blob/v0.9.0/verl/trainer/main_ppo.py): with no
`--config-name` it composes `ppo_trainer`, whose engine is FSDP unless `model_engine=megatron|mindspeed|…`
(a config group since 0.7; `ppo_megatron_trainer` is that same composition and is marked deprecated from
0.9.0, https://github.com/verl-project/verl/blob/v0.9.0/verl/trainer/config/ppo_megatron_trainer.yaml).
`--config-path` is relative to the entry point's own directory. Experimental and recipe entry points
(`verl.experimental.one_step_off_policy.main_ppo`, `recipe.dapo.main_dapo`, …) keep their yaml in a `config`
directory beside them, which the PyPI wheel carries for `verl.*` modules but not for `recipe.*`.
The engine is read from the composed `actor_rollout_ref.actor.strategy` when composition ran, else from the
overrides and the config name.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from doctor.launch.override_list import Override

DEFAULT_NAMES = {  # when the entry module's source is not here to read its @hydra.main
    "verl.trainer.main_ppo": "ppo_trainer",
    "verl.experimental.one_step_off_policy.main_ppo": "one_step_off_ppo_trainer",
    "verl.experimental.fully_async_policy.fully_async_main": "fully_async_ppo_trainer",
    "verl.trainer.fsdp_sft_trainer": "sft_trainer",
    "verl.trainer.sft_trainer": "sft_trainer_engine",
    "verl.trainer.sft_trainer_ray": "sft_trainer_engine",
    # @hydra.main of verl/trainer/main_eval.py and main_generation.py (v0.6.1; main_eval unchanged to v0.9.0)
    "verl.trainer.main_eval": "evaluation",
    "verl.trainer.main_generation": "generation",
}


def is_sft(entry: str) -> bool:
    """An SFT trainer: it composes an sft config, and main_ppo's rules do not apply to it."""
    return "sft_trainer" in entry.rsplit(".", 1)[-1]


def trains(entry: str) -> bool:
    """The entry point runs the PPO trainer (main_ppo, its variants, a recipe's main_*). verl's generation entries
    only start rollout servers and generate (verl v0.9.0 verl/trainer/main_generation_server.py: no actor, no
    trainer validation), and its evaluation entries only score a parquet of responses (verl/trainer/main_eval.py and
    recipe/r1/main_eval.py compose `evaluation.yaml`: data, custom_reward_function, ray_kwargs; no actor), so the
    trainer's batch rules say nothing about them."""
    name = entry.rsplit(".", 1)[-1]
    return not is_sft(entry) and not name.startswith(("main_generation", "main_eval"))


def validates(entry: str, trainer_config: Path | None) -> bool | None:
    """Whether the entry point runs verl's `validate_config` (verl/utils/config.py), the only place that holds the
    train batch against the actor's mini batch (ActorConfig.validate): verl.trainer.main_ppo and the entries that call
    it (one_step_off_policy, most recipes) do; verl's VLA trainer (verl/experimental/vla/main_ppo.py, v0.7.0's
    recipe/vla) does not, and its workers take any mini batch. Read from the entry module's source when it is beside
    the config (the release's tree or wheel): True when it names `validate_config` or imports from
    verl.trainer.main_ppo (whose TaskRunner calls it); False when it does neither; None when the source is not here."""
    if entry == "verl.trainer.main_ppo":
        return True
    text = _entry_source(entry, _repo_root(trainer_config))
    if text is None:
        return None
    return "validate_config" in text or "verl.trainer.main_ppo" in text


MEGATRON_ENGINES = ("megatron", "mindspeed")
_STRATEGY_ENGINE = {"fsdp": "fsdp", "fsdp2": "fsdp", "dp": "fsdp", "megatron": "megatron", "mindspeed": "mindspeed",
                    "veomni": "veomni", "torchtitan": "torchtitan", "automodel": "automodel"}


@dataclass(frozen=True)
class Selection:
    entry: str
    config_dir: Path | None  # where this entry point's yaml lives here (None: not available)
    config_name: str
    why: str  # how the config was chosen, for the report
    missing: str | None = None  # why config_dir is None
    fix: str | None = None  # what gives the run's config here, when config_dir is None


def relative_config_dir(entry: str) -> Path:
    """The yaml directory of an entry module, relative to the repository root (`verl/trainer/config`)."""
    parts = entry.split(".")[:-1]
    return Path(*parts, "config")


def select(entry: str, config_name: str | None, config_path: str | None, trainer_config: Path | None) -> Selection:
    """The config `entry` composes, given `--config-name/--config-path` and verl's trainer config directory."""
    name = (config_name or "").removesuffix(".yaml") or None
    rel = relative_config_dir(entry)
    root = _repo_root(trainer_config)
    if config_path not in (None, "config", "./config"):
        cp = Path(config_path)
        base = (root / Path(*entry.split(".")[:-1])) if root else None
        cdir = cp if cp.is_absolute() else (base / cp if base else None)
        if (cdir is None or not cdir.is_dir()) and (cp.is_absolute() or "$" in config_path):
            cdir = in_release(config_path, root, trainer_config)
        if cdir is None or not cdir.is_dir():
            return Selection(entry, None, name or _default_name(entry, root), f"--config-path={config_path}",
                             f"--config-path {config_path} (relative to {entry}) is not available here")
        return Selection(entry, cdir, name or _default_name(entry, root), f"--config-path={config_path}")
    if entry == "verl.trainer.main_ppo" or rel == Path("verl", "trainer", "config"):
        cdir = trainer_config
    elif root is not None and (root / rel).is_dir():
        cdir = root / rel
    else:
        where, fix = recipe_missing(root, rel) if entry.startswith("recipe.") \
            else ("not beside the trainer config used here", None)
        return Selection(entry, None, name or _default_name(entry, root), "entry point",
                         f"{entry}'s config directory ({rel}) is not available: {where}", fix)
    chosen = name or _default_name(entry, root)
    why = f"--config-name={chosen}" if name else f"{entry}'s default config {chosen}"
    return Selection(entry, cdir, chosen, why)


def recipe_missing(root: Path | None, rel: Path) -> tuple[str, str | None]:
    """Why a recipe's config is not in the verl tree linted against, and how to get it there. A wheel never ships
    recipe/. A checkout of verl from v0.7.1 on has recipe/ as a git submodule (its .gitmodules names
    verl-project/verl-recipe), empty until it is initialised; an older checkout has recipe/ in its own tree."""
    if root is None or not any((root / f).is_file() for f in ("setup.py", "pyproject.toml", ".gitmodules")):
        return "recipe configs are not part of the verl wheel", None
    try:
        modules = (root / ".gitmodules").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        modules = ""
    section = next((s for s in modules.split("[submodule") if re.search(r"^\s*path\s*=\s*recipe\s*$", s, re.M)), None)
    if section is not None and not any((root / "recipe").glob("*")):
        url = m.group(1) if (m := re.search(r"^\s*url\s*=\s*(\S+)", section, re.M)) else "verl-recipe"
        return (f"recipe/ of the verl checkout at {root} is a git submodule ({url}) that is not "
                f"checked out, so it has no {rel}",
                f"Check the submodule out (git -C {root} submodule update --init recipe, in a clone of verl) and "
                "lint again.")
    return f"the verl checkout at {root} has no {rel}", None


def in_release(config_path: str, root: Path | None, trainer_config: Path | None) -> Path | None:
    """An absolute `--config-path` (or one built from `$(pwd)`/`$VAR`) that names a directory of a verl tree
    (`/verl/trainer/config`, `/workspace/verl/examples/x/config`): that directory of the release being linted,
    found by the longest tail of the path that exists under its root."""
    parts = [p for p in config_path.split("/") if p and "$" not in p and p != "."]
    for i in range(len(parts)):
        tail = Path(*parts[i:])
        if tail == Path("verl", "trainer", "config") and trainer_config is not None:
            return trainer_config
        if root is not None and (root / tail).is_dir():
            return root / tail
    return None


def _repo_root(trainer_config: Path | None) -> Path | None:
    if trainer_config is None:
        return None
    p = trainer_config.resolve()
    if p.name == "config" and p.parent.name == "trainer" and p.parent.parent.name == "verl":
        return p.parent.parent.parent
    return None


def _entry_source(entry: str, root: Path | None) -> str | None:
    """The text of the entry module under the repository (or site-packages) root, None when it is not there."""
    if root is None:
        return None
    try:
        return (root / Path(*entry.split("."))).with_suffix(".py").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def absent_module(entry: str, trainer_config: Path | None) -> tuple[str, list[str]] | None:
    """(the module's path, its package's modules nearest in name) when the verl tree linted against carries verl's
    Python sources (verl/trainer/main_ppo.py beside the config, as every release has it: a checkout or an installed
    wheel) and `python -m ENTRY`
    would find no module there: `verl.trainer.main_generation` and `verl.trainer.fsdp_sft_trainer` are in the 0.7.0
    wheel and not in 0.7.1's. Such a run stops at "No module named …" before Hydra reads a config, so a
    compose failure (no `generation.yaml` either) would name the wrong cause. None when the module is there, the
    entry is not verl's, or the tree has only the config files (nothing is known then)."""
    root = _repo_root(trainer_config)
    parts = entry.split(".")
    if root is None or parts[0] != "verl" or not (root / "verl" / "trainer" / "main_ppo.py").is_file():
        return None
    base = root / Path(*parts)
    if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
        return None
    package = base.parent
    names = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__") if package.is_dir() else []
    return "/".join(parts) + ".py", difflib.get_close_matches(parts[-1], names, n=3, cutoff=0.6)


def shipped_without_code(entry: str, trainer_config: Path | None) -> str | None:
    """The entry module's package directory (`verl/experimental/one_step_off_policy`) when the verl tree linted
    against has that directory with files in it but no Python module at all. verl 0.7.1's wheel is such a tree for
    its experimental trainers (one_step_off_policy, fully_async_policy, vla): those directories have no
    `__init__.py` at v0.7.1, so setuptools' find_packages leaves their code out while the package-data globs still
    ship their `config/*.yaml`. A checkout of that tag has `main_ppo.py` there, and verl's Ascend install guide
    installs from a checkout (`pip install -v -e .`), so the missing module says how verl was installed, not that
    the script is wrong. None otherwise (the package directory is absent, or holds Python files: a module really
    removed, as `verl.trainer.main_generation` after 0.7.0)."""
    root = _repo_root(trainer_config)
    parts = entry.split(".")
    if root is None or parts[0] != "verl" or len(parts) < 3:
        return None
    package = root / Path(*parts[:-1])
    try:
        children = list(package.iterdir())
    except OSError:
        return None
    if not children or any(c.suffix == ".py" for c in children if c.is_file()):
        return None
    return "/".join(parts[:-1])


def _default_name(entry: str, root: Path | None) -> str:
    """The entry module's `@hydra.main(config_name=…)`, read from its source when it is here."""
    text = _entry_source(entry, root)
    if text is not None:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "main":
                for kw in node.keywords:
                    if kw.arg == "config_name" and isinstance(kw.value, ast.Constant):
                        return str(kw.value.value)
    return DEFAULT_NAMES.get(entry, "ppo_trainer")


def engine_of(ovs: list[Override], config_name: str, flat: dict[str, object] | None,
              outside: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(engine, how it was decided): megatron, mindspeed, fsdp, veomni, … , or "unknown" when the actor section
    comes from a config group option that is not on this machine (`outside`: section -> its override; see
    ComposeResult.outside_sections): verl's default actor composed in its place says nothing of the run's engine."""
    last = {o.key: o for o in ovs if o.prefix != "~"}
    brought = _actor_from(outside or {})
    if brought is not None:
        s_o = last.get("actor_rollout_ref.actor.strategy")
        if s_o is not None and isinstance(s_o.py, str):
            return _STRATEGY_ENGINE.get(s_o.py, s_o.py), f"actor_rollout_ref.actor.strategy={s_o.py}"
        return "unknown", f"actor_rollout_ref.actor comes from {brought}, whose config is not on this machine"
    if flat is not None:
        s = flat.get("actor_rollout_ref.actor.strategy")
        if isinstance(s, str):
            return _STRATEGY_ENGINE.get(s, s), f"composed actor_rollout_ref.actor.strategy={s}"
    s_o = last.get("actor_rollout_ref.actor.strategy")
    if s_o is not None and isinstance(s_o.py, str):
        return _STRATEGY_ENGINE.get(s_o.py, s_o.py), f"actor_rollout_ref.actor.strategy={s_o.py}"
    me = last.get("model_engine")
    if me is not None and isinstance(me.py, str):
        return _STRATEGY_ENGINE.get(me.py, me.py), f"model_engine={me.py}"
    sft = _sft_engine(last, flat, outside or {})  # the engine SFT trainer's `engine` group (sft_trainer_engine.yaml)
    if sft is not None:
        return sft
    if config_name.removesuffix(".yaml") in ("ppo_megatron_trainer", "one_step_off_ppo_megatron_trainer"):
        return "megatron", f"--config-name={config_name}"
    return "fsdp", f"{config_name} defaults to the FSDP engine"


def _sft_engine(last: Mapping[str, Override], flat: dict[str, object] | None,
                outside: Mapping[str, str]) -> tuple[str, str] | None:
    """The engine of verl's engine SFT trainer: its `engine@engine` group (`engine=megatron`), read from the composed
    `engine.strategy`, else the composed section's `_target_` (megatron.yaml names McoreEngineConfig and writes no
    strategy), else the group override itself — that override alone when its option is not on this machine
    (`engine=mlite` from `hydra.searchpath=[pkg://verl_mlite.config]`, verl main's Megatron Lite SFT example): the
    default engine composed in its place says nothing of the run's."""
    e = last.get("engine")
    if "engine" in outside and e is not None and isinstance(e.py, str):
        return _STRATEGY_ENGINE.get(e.py, e.py), f"engine={e.py}, whose config is not on this machine"
    if flat is not None:
        s = flat.get("engine.strategy")
        if isinstance(s, str):
            return _STRATEGY_ENGINE.get(s, s), f"composed engine.strategy={s}"
        t = flat.get("engine._target_")
        if isinstance(t, str) and t.rsplit(".", 1)[-1].startswith("Mcore"):
            return "megatron", f"composed engine._target_={t}"
    if e is not None and isinstance(e.py, str):
        return _STRATEGY_ENGINE.get(e.py, e.py), f"engine={e.py}"
    return None


def _actor_from(outside: Mapping[str, str]) -> str | None:
    """The override that fills the actor section from outside: its package is the actor section or holds it, or it is
    an option of the actor group without a package."""
    for section, text in outside.items():
        if section in ("actor", "actor_rollout_ref", "actor_rollout_ref.actor"):
            return text
    return None
