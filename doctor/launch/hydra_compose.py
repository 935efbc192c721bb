"""Compose verl's `ppo_megatron_trainer` config with the overrides through real Hydra.

The config files come from the installed verl (found with importlib.util.find_spec, which does not import
verl: importing it pulls in torch) or from `--verl-config DIR`. Hydra stops at the first bad override, so
composition is repeated without each override it rejects (bounded), turning every rejection into a finding
that names the key. hydra-core/omegaconf are imported lazily (the `launch` extra).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctor.errors import InputError, extra_install_command
from doctor.launch import sources as S
from doctor.launch.override_list import CONFIG_NAME, Override
from doctor.report import Finding, finding

MAX_ROUNDS = 30
_KEY_PATTERNS = (
    re.compile(r"Could not override '([^']+)'"),
    re.compile(r"An item is already at '([^']+)'"),
    re.compile(r"Could not delete from config\. '([^']+)'"),
    re.compile(r"Could not delete from config\. The value of '([^']+)'"),
    re.compile(r"Could not append to config\. An item is already at '([^']+)'"),
    re.compile(r"full_key: (\S+)"),
    re.compile(r"Could not find '([^'/]+)/"),  # a config group option that does not exist in this release
)


@dataclass
class ComposeResult:
    config_dir: str
    config: Any = None  # the composed DictConfig (None when any override was rejected, or read from the cache)
    findings: list[Finding] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # override texts Hydra refused
    flat: dict[str, Any] | None = None  # every leaf of the composed config (without the rejected overrides)
    dicts: dict[str, int] = field(default_factory=dict)  # every mapping's path -> how many keys it holds
    yaml: str | None = None  # the composed config as YAML (only when every override was accepted)
    groups: list[str] = field(default_factory=list)  # config groups of the directory (model_engine, actor, …)
    types: dict[str, str] = field(default_factory=dict)  # overridden key -> type of its default (bool, int, …)
    # section a config group option from an added search path fills, when that source is not here -> the override
    # ("actor_rollout_ref.actor" -> "actor@actor_rollout_ref.actor=mlite_actor"); an option without '@' by its group
    outside_sections: dict[str, str] = field(default_factory=dict)


def installed_verl() -> tuple[str | None, Path | None]:
    """(version, config dir) of the verl importable here, without importing it. The version is the one the package
    found says of itself (`verl/version/version`, read by verl's own setup.py): a verl checkout run from its root
    (`python3 -m verl.trainer.main_ppo`, as upstream's scripts say) shadows a verl wheel installed in site-packages,
    and the wheel's metadata would name a release whose config is not the one composed. The installed
    distribution's metadata is used only when the package has no such file."""
    try:
        spec = importlib.util.find_spec("verl")
    except (ImportError, ValueError):
        return None, None
    if spec is None or not spec.submodule_search_locations:
        return None, None
    bases = [Path(loc) for loc in spec.submodule_search_locations]
    version = next((v for b in bases if (v := tree_version(b))), None)
    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as _v

        try:
            version = _v("verl")
        except PackageNotFoundError:
            version = None
    for base in bases:
        cfg = base / "trainer" / "config"
        if (cfg / f"{CONFIG_NAME}.yaml").is_file():
            return version, cfg
    return version, None


def tree_version(verl_dir: Path) -> str | None:
    """The version a verl package directory states of itself (`version/version`, which verl's setup.py and
    `verl/__init__.py` read): a checkout, a site-packages verl or the doctor's cache of a wheel. None without one."""
    try:
        return (verl_dir / "version" / "version").read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def check_config_dir(path: str | Path) -> Path:
    p = Path(path)
    if not any((p / f"{n}.yaml").is_file() for n in ("ppo_trainer", CONFIG_NAME)):
        raise InputError("not a verl config directory (no ppo_trainer.yaml)", source=str(path))
    return p.resolve()


def flatten(cfg: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """(leaf path -> value with interpolations resolved where they resolve, mapping path -> number of keys)."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    flat: dict[str, Any] = {}
    dicts: dict[str, int] = {"": len(cfg)}

    def walk(node: Any, prefix: str) -> None:
        for k in list(node.keys()):
            path = f"{prefix}{k}"
            try:
                value = node[k]
            except Exception:  # noqa: BLE001 - an interpolation that does not resolve outside verl: keep its text
                raw = node._get_node(k)
                value = raw._value() if raw is not None else None
            if isinstance(value, DictConfig):
                dicts[path] = len(value)
                walk(value, path + ".")
            elif isinstance(value, ListConfig):
                try:
                    flat[path] = OmegaConf.to_container(value, resolve=True)
                except Exception:  # noqa: BLE001
                    flat[path] = OmegaConf.to_container(value, resolve=False)
            else:
                flat[path] = value
    walk(cfg, "")
    return flat, dicts


def config_groups(config_dir: str | Path) -> list[str]:
    return sorted(p.name for p in Path(config_dir).iterdir() if p.is_dir() and not p.name.startswith("_"))


def _key_of(message: str) -> str | None:
    for pat in _KEY_PATTERNS:
        m = pat.search(message)
        if m:
            return m.group(1)
    return None


class ComposeNeedsExtra(InputError):
    """hydra-core/omegaconf are missing: the `launch` extra, reported as every missing extra is (`--json`: its id and
    the line that installs it), not as an input to fix."""

    finding_id = "extra-not-installed"

    def __init__(self, message: str) -> None:
        self.fix = f"{extra_install_command('launch')}, or pass --no-compose"
        super().__init__(message)


def compose(ovs: list[Override], config_dir: str | Path, config_name: str = CONFIG_NAME) -> ComposeResult:
    """Compose with all overrides; every override Hydra rejects becomes a finding (id by failure kind), and the
    result holds the config composed from the ones it accepts (`flat`, `dicts`)."""
    try:
        from hydra import compose as hcompose
        from hydra import initialize_config_dir
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException
    except ImportError as e:
        raise ComposeNeedsExtra(f"hydra-core/omegaconf are needed for the schema check ({e}); "
                                f"{extra_install_command('launch')} or pass --no-compose") from None
    cdir = str(Path(config_dir).resolve())
    result = ComposeResult(config_dir=cdir, groups=config_groups(cdir))
    parser = OverridesParser.create()
    pending: list[Override] = []
    for o in ovs:
        try:
            parser.parse_overrides([o.text])
        except HydraException as e:
            result.findings.append(_finding("launch-override-syntax", o, str(e).strip(), cdir))
            result.rejected.append(o.text)
            continue
        pending.append(o)
    name = config_name.removesuffix(".yaml")
    # `hydra.*` overrides set Hydra itself (its run dir, its search path), never a key of verl's config: they are not
    # judged against it. A search path the script adds is composed with, where it can be found here.
    settings = [o for o in pending if is_hydra_setting(o)]
    pending = [o for o in pending if not is_hydra_setting(o)]
    search, outside = searchpath_of(settings, cdir, name)
    if outside:
        result.outside_sections = {g.key.partition("@")[2] or g.key: g.text for g in pending if _foreign(g, cdir)}

    def real_compose(items: list[Override]) -> Any:
        with initialize_config_dir(config_dir=cdir, version_base=None):
            return hcompose(config_name=name, overrides=search + [o.text for o in items])

    result.types = default_types(pending, cdir, name, search)
    try:  # the authoritative check: one real compose with every override
        cfg = real_compose(pending)
        result.flat, result.dicts = flatten(cfg)
        if not result.rejected:
            result.config = cfg
            result.yaml = to_yaml(cfg)
        return result
    except (HydraException, OmegaConfBaseException) as e:
        first_error = e
    # Hydra stops at the first bad override. Find every one: apply them in order, one at a time, onto the
    # composed base with Hydra's own override application (what compose does internally), then recompose.
    found = _locate_all(pending, cdir, name, search)
    located = None
    if found is not None:
        located, partial = found
        result.flat, result.dicts = flatten(partial)
    if located is None:  # Hydra internals not available: recompose without each culprit (bounded)
        located = []
        rest = list(pending)
        err: BaseException | None = first_error
        for _ in range(MAX_ROUNDS):
            if err is None:
                break
            msg = _message(err)
            culprit = _culprit(rest, _key_of(msg))
            if culprit is None:
                break
            located.append((culprit, msg))
            rest = [o for o in rest if o is not culprit]
            try:
                real_compose(rest)
                err = None
            except (HydraException, OmegaConfBaseException) as e2:
                err = e2
    unchecked = [(c, m) for c, m in located if outside and _from_outside(c, pending, cdir)]
    located = [(c, m) for c, m in located if all(c is not u for u, _ in unchecked)]
    for culprit, msg in located:
        result.findings.append(_finding(_classify(msg, culprit), culprit, msg, cdir))
        result.rejected.append(culprit.text)
    result.rejected.extend(c.text for c, _ in unchecked)
    if not located and not unchecked:  # Hydra failed but no single override is to blame
        msg = _message(first_error)
        result.findings.append(finding(
            "launch-compose-failed", "error", ("config", "verl"), "verl's config does not compose",
            detail=msg, evidence={"config_dir": cdir}, key=_key_of(msg),
            fix=_compose_failed_fix(msg, cdir, name), source=S.HYDRA_OVERRIDES))
    from doctor.launch.advice import advise
    from doctor.launch.schema import verl_root

    base_dicts = None
    if result.findings:  # the sections verl's own config has (a '+' override may have created others)
        base = _base([o for o in pending if _is_group_override(o, cdir)], cdir, name, search)
        base_dicts = set(flatten(base)[1]) if base is not None else None
    result.findings = advise(result.findings, result.flat, result.dicts, result.groups, {o.key: o.value for o in ovs},
                             verl_root(cdir), base_dicts)
    if unchecked:
        result.findings.append(_unchecked_finding(unchecked, outside, cdir))
    return result


def _compose_failed_fix(msg: str, cdir: str, name: str) -> str:
    """What to change when Hydra failed and no override is to blame. Hydra's "Cannot find primary config 'X'" means
    the --config-name (with --config-path) names no yaml there: say so, with the primary configs the directory has
    (verl 0.7.1's fully_async_policy script names `fully_async_dapo_trainer`, a config its tag does not ship)."""
    if "Cannot find primary config" not in msg:
        return "Fix what the message names (no single override is to blame: a config file, its defaults list or the config name)."
    import difflib

    try:
        have = sorted(p.stem for p in Path(cdir).glob("*.yaml"))
    except OSError:
        have = []
    near = difflib.get_close_matches(name, have, n=3, cutoff=0.5) or have[:5]
    return (f"--config-name {name} names no yaml in {cdir} (nor on its search path): name a config that is there"
            + (f", e.g. {', '.join(near)}" if near else "") + "; or point --config-path at the directory that has it.")


def is_hydra_setting(o: Override) -> bool:
    """`hydra.run.dir=…`, `hydra.searchpath=[…]`: Hydra's own configuration, not the job's."""
    return o.key == "hydra" or o.key.startswith("hydra.")


def searchpath_of(settings: list[Override], cdir: str, name: str) -> tuple[list[str], list[str]]:
    """(the `hydra.searchpath` override to compose with, the search path entries that are not here).

    A script's `hydra.searchpath=[pkg://verl_mlite.config]` replaces the primary config's search path, as in the
    run; each entry is made to point into this machine as the primary config's are (`_local_source`): a `pkg://`
    package found by its import location (not imported: that would run its code), a `file://` directory that exists. The others are not here: the config
    groups and keys they would bring cannot be checked (Hydra itself only warns that such a path "is not
    available")."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    given = [o for o in settings if o.key == "hydra.searchpath" and o.value is not None]
    if not given:
        return searchpath_override(cdir, name), []
    try:
        parsed = OverridesParser.create().parse_overrides([given[-1].text])[0].value()
    except (HydraException, IndexError):
        return searchpath_override(cdir, name), []
    entries = [str(p) for p in parsed] if isinstance(parsed, list) else [str(parsed)]
    here: list[str] = []
    outside: list[str] = []
    for p in entries:
        local = _local_source(p, cdir)
        (here if local else outside).append(local or p)
    return (["hydra.searchpath=[" + ",".join(f"'{p}'" for p in here) + "]"], outside)


def _local_source(entry: str, cdir: str) -> str | None:
    """A search path entry as a `file://` directory of this machine, or None when it is not here."""
    from doctor.launch.schema import verl_root

    root = verl_root(cdir)
    path: Path | None
    if entry.startswith("pkg://"):
        mod = entry[6:].strip("/").split(".")
        if mod[0] == "verl":  # the release being composed, not whatever verl is importable here
            path = root.joinpath(*mod) if root is not None else None
        else:
            try:
                spec = importlib.util.find_spec(mod[0])  # the top level only: a submodule's spec imports its parent
            except (ImportError, ValueError):
                spec = None
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            path = Path(locations[0]).joinpath(*mod[1:]) if locations else None
    elif entry.startswith("file://") or "://" not in entry:  # Hydra reads an entry with no scheme as file://
        path = Path(entry.removeprefix("file://"))
        if not path.is_absolute() and root is not None:
            path = root / path
    else:
        return None
    return f"file://{path}" if path is not None and path.is_dir() else None


def _from_outside(o: Override, pending: list[Override], cdir: str) -> bool:
    """The override picks a config group option this config tree lacks (one the added search path must bring), or
    sets a key in the section such an option fills: neither can be checked here."""
    foreign = [g for g in pending if _foreign(g, cdir)]
    if any(o is g for g in foreign):
        return True
    for g in foreign:
        head, _, package = g.key.partition("@")
        if not package:
            return True  # the section an option fills without '@' is its defaults-list package: not known here
        if o.key == package or o.key.startswith(package + "."):
            return True
    return False


def _foreign(o: Override, cdir: str) -> bool:
    """A config group option this tree lacks: with an added search path that is not here, it comes from there."""
    return _is_group_override(o, cdir) and not _option_here(o, cdir)


def _option_here(group: Override, cdir: str) -> bool:
    head = group.key.split("@", 1)[0]
    value = (group.value or "").strip()
    return bool(value) and (Path(cdir) / head / f"{value}.yaml").is_file()


def _unchecked_finding(unchecked: list[tuple[Override, str]], outside: list[str], cdir: str) -> Finding:
    keys = [o.text for o, _ in unchecked]
    where = ", ".join(outside)
    return finding(
        "launch-config-outside", "info", ("config",),
        f"{len(keys)} override(s) not checked: they use config from {where}, which is not on this machine",
        detail=f"The script adds {where} to Hydra's search path; the config group options and keys below come from "
               "there, so verl's own config cannot judge them: " + "; ".join(keys),
        evidence={"searchpath": outside, "overrides": keys, "config_dir": cdir},
        fix=f"Lint where {where} is installed (a pkg:// source is found by its import location) to check them.",
        key="hydra.searchpath", source=S.HYDRA_OVERRIDES)


def _classify(msg: str, culprit: Override) -> str:
    kind = _kind(msg)
    missing = re.search(r"Key '([^']+)' is not in struct\s+full_key: (\S+)", msg)
    if kind == "launch-key-needs-plus" and missing and culprit.key.startswith(missing.group(2) + "."):
        kind = "launch-key-not-in-config"  # a parent section is missing: '+' is not the fix
    return kind


_BASE_CACHE: dict[tuple[str, str, tuple[str, ...]], Any] = {}


def _is_group_override(o: Override, cdir: str) -> bool:
    head = o.key.split("@", 1)[0]
    return "." not in head and (Path(cdir) / head).is_dir()


def searchpath_override(cdir: str, name: str) -> list[str]:
    """`hydra.searchpath` of the primary config, made to point into the release being composed: verl runs from its
    source root, so `file://verl/trainer/config` is relative to that root (not to the doctor's working directory),
    and `pkg://verl.trainer.config` is that release's package (not whatever verl is importable here)."""
    from omegaconf import OmegaConf

    from doctor.launch.schema import verl_root

    root = verl_root(cdir)
    try:
        sp = OmegaConf.select(OmegaConf.load(Path(cdir, f"{name}.yaml")), "hydra.searchpath")
    except Exception:  # noqa: BLE001 - an unreadable primary config: Hydra itself will say so
        return []
    if root is None or not sp:
        return []
    given = [str(p) for p in sp]
    out = [_local_source(p, cdir) or p for p in given]
    return ["hydra.searchpath=[" + ",".join(f"'{p}'" for p in out) + "]"] if out != given else []


def _base(groups: list[Override], cdir: str, name: str, search: list[str] | None = None) -> Any:
    """The config composed with the config-group overrides only (what every other override applies onto)."""
    from hydra import compose as hcompose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    search = searchpath_override(cdir, name) if search is None else search
    ckey = (cdir, name, tuple(search) + tuple(o.text for o in groups))
    base = _BASE_CACHE.get(ckey)
    if base is None:
        try:
            with initialize_config_dir(config_dir=cdir, version_base=None):
                base = hcompose(config_name=name, overrides=search + [o.text for o in groups])
        except (HydraException, OmegaConfBaseException):
            return None
        _BASE_CACHE[ckey] = base
    return base


def default_types(pending: list[Override], cdir: str, name: str, search: list[str] | None = None) -> dict[str, str]:
    """The type of each overridden key's default in the base config (interpolations and null are left out)."""
    from omegaconf import DictConfig

    base = _base([o for o in pending if _is_group_override(o, cdir)], cdir, name, search)
    out: dict[str, str] = {}
    for o in pending if base is not None else ():
        node: Any = base
        parts = o.key.split(".")
        for part in parts[:-1]:
            node = node._get_node(part) if isinstance(node, DictConfig) and part in node else None
            if node is None:
                break
        leaf = node._get_node(parts[-1]) if isinstance(node, DictConfig) and parts[-1] in node else None
        if leaf is None or not hasattr(leaf, "_is_interpolation") or leaf._is_interpolation():
            continue
        value = leaf._value()
        if isinstance(value, bool | int | float | str):
            out[o.key] = type(value).__name__
    return out


def _locate_all(pending: list[Override], cdir: str, name: str,
                search: list[str] | None = None) -> tuple[list[tuple[Override, str]], Any] | None:
    """Every override Hydra rejects, in order, and the config with the others applied; None when Hydra's
    internals differ from 1.1-1.3."""
    try:
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from hydra.errors import HydraException
        from omegaconf import OmegaConf
        from omegaconf.errors import OmegaConfBaseException
    except ImportError:
        return None
    apply = getattr(ConfigLoaderImpl, "_apply_overrides_to_config", None)
    if apply is None:
        return None
    groups = [o for o in pending if _is_group_override(o, cdir)]
    base = _base(groups, cdir, name, search)
    bad: list[tuple[Override, str]] = []
    if base is None:  # a group option this release lacks (model_engine=mindspeed on 0.9.1): blame it, keep the rest
        bad = [(g, msg) for g in groups if (msg := _group_error(g, cdir, name, search)) is not None]
        base = _base([g for g in groups if all(g is not b for b, _ in bad)], cdir, name, search) if bad else None
        if base is None:
            return None
    cfg = OmegaConf.create(OmegaConf.to_container(base, resolve=False))
    OmegaConf.set_struct(cfg, True)
    parser = OverridesParser.create()
    out: list[tuple[Override, str]] = []
    for o in pending:
        if o in groups:
            continue
        try:  # a rejected override leaves the config as it was (Hydra validates before it writes)
            apply(parser.parse_overrides([o.text]), cfg)
        except (HydraException, OmegaConfBaseException) as e:
            out.append((o, _message(e)))
    order = {id(o): i for i, o in enumerate(pending)}
    return sorted(bad + out, key=lambda x: order[id(x[0])]), cfg


def _group_error(group: Override, cdir: str, name: str, search: list[str] | None = None) -> str | None:
    """Hydra's message when the config group override alone does not compose, else None (one compose each: with a
    bad group option every other override would otherwise be located by a recompose of its own)."""
    from hydra import compose as hcompose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=cdir, version_base=None):
            hcompose(config_name=name, overrides=(searchpath_override(cdir, name) if search is None else search)
                     + [group.text])
    except (HydraException, OmegaConfBaseException) as e:
        return _message(e)
    return None


def _message(e: BaseException) -> str:
    parts = [str(e).strip()]
    cause = e.__cause__
    if cause is not None and str(cause).strip() and str(cause).strip() not in parts[0]:
        parts.append(str(cause).strip())
    return "\n".join(parts)


def _culprit(pending: list[Override], key: str | None) -> Override | None:
    if key is None:
        return None
    for o in pending:
        if o.key == key:
            return o
    for o in pending:  # "full_key" of a nested failure: the override that wrote a parent or child of it
        if key.startswith(o.key + ".") or o.key.startswith(key + "."):
            return o
    return None


def _kind(msg: str) -> str:
    if "To append to your config use +" in msg or "not in struct" in msg:
        return "launch-key-needs-plus"
    if "An item is already at" in msg:
        return "launch-key-plus-on-existing"
    return "launch-override-rejected"


def _finding(id_: str, o: Override, msg: str, cdir: str) -> Finding:
    fix = {
        "launch-key-needs-plus": f"Write +{o.key}={o.value} if the key is meant to be new, or check its spelling "
                                 "(it may have been removed from this verl).",
        "launch-key-plus-on-existing": f"Write {o.key}={o.value} (no '+') or ++{o.key}={o.value}.",
        "launch-override-syntax": "Quote the value so Hydra's override grammar accepts it.",
        "launch-key-not-in-config": f"Delete {o.text}: its section does not exist in verl's megatron trainer "
                                    "config (it belongs to another trainer config or was removed from this verl).",
    }.get(id_, "Fix or drop this override.")
    first = msg.splitlines()[0] if msg else ""
    ev: dict[str, Any] = {"override": o.text, "config_dir": cdir, "hydra": first}
    if o.line:
        ev["line"] = o.line
    title = {
        "launch-key-needs-plus": f"{o.key} is not in verl's config: Hydra refuses it without '+'",
        "launch-key-plus-on-existing": f"'+{o.key}' fails: the key already exists in verl's config",
        "launch-key-not-in-config": f"{o.key}: no such section in verl's config",
        "launch-override-syntax": f"{o.key}: Hydra cannot parse this override",
    }.get(id_, f"Hydra rejects {o.prefix}{o.key} against verl's config")
    return finding(id_, "error", ("config",), title,
                   detail=msg, evidence=ev, fix=fix, key=o.key,
                   source=S.HYDRA_OVERRIDES)


def to_yaml(config: Any) -> str:
    from omegaconf import OmegaConf

    return str(OmegaConf.to_yaml(config))
