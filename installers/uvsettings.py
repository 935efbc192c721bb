"""uv's own configuration that would change what `uv pip install` does, decided per setting before the first change.

With `--backend uv` (or `auto` finding uv) the steps are `uv pip install`, which reads none of pip's configuration but
its own: `UV_*` variables (each `uv pip install` option names its variable in `uv pip install --help`: "[env:
UV_CONSTRAINT=]"; https://docs.astral.sh/uv/reference/environment/) and uv.toml / pyproject.toml `[tool.uv]` files
(https://docs.astral.sh/uv/concepts/configuration-files/). The command line wins over both. Decided as
installers/pipsettings.py decides pip's (the same Setting, actions and messages), not under `--isolated` (the steps
then pass `--no-config` and drop the variables):

- neutralised: `UV_RESOLUTION` (`lowest` takes the oldest release of what the plan leaves open) by `--resolution
  highest`; `UV_NO_BUILD_ISOLATION` and `UV_NO_EDITABLE` (which would install the sources as copies) by `=0` in the
  step's environment (uv reads booleans as clap's boolish values: `UV_REQUIRE_HASHES=0` installs an unhashed pin
  that `=1` refuses, uv 0.13.10); `UV_PYTHON` / `UV_SYSTEM_PYTHON` by the steps' own `--python TARGET`;
  `UV_INDEX_STRATEGY` by their `--index-strategy unsafe-best-match`;
- refused (exit 2): a `UV_CONSTRAINT` file that excludes a version the plan pins or cannot be read (as pip's),
  `UV_OVERRIDE` and `UV_EXCLUDE` (they replace or drop what the steps ask for), `UV_REQUIRE_HASHES` (the pins carry
  no hashes), `UV_TORCH_BACKEND` (uv would fetch torch from its own choice of PyTorch index, not the plan's),
  `UV_OFFLINE` for an install that downloads (offline installs pass `--offline` anyway), a boolean uv cannot read;
- followed and named: `UV_INDEX`, `UV_DEFAULT_INDEX`, `UV_INDEX_URL`, `UV_EXTRA_INDEX_URL`, `UV_FIND_LINKS`,
  `UV_PRERELEASE`, `UV_EXCLUDE_NEWER` (a pin uploaded later fails its step), `UV_BUILD_CONSTRAINT`.

Every configuration file uv will read is named, and each of its settings that changes what the steps install is
decided by the same table (`_FIXED`, keyed by the variable of the same option; CONFIG_KEYS maps a file's keys, top
level and `[pip]`, to it): `resolution`, `python`, `system`, `index-strategy` are neutralised by the same flags
(the command line wins over a file, as over a variable); `constraint-dependencies` is judged as a UV_CONSTRAINT file;
`override-dependencies`, `exclude-dependencies`, `require-hashes`, `torch-backend`, `offline` are refused as their
variables are; indexes, find-links, `prerelease`, `exclude-newer`, `build-constraint-dependencies` are followed. Two
rules are the file's own. What the steps undo through their environment (`UV_NO_BUILD_ISOLATION=0`) does not reach
a file: uv reads a false flag as not given, and the file's `no-build-isolation = true` stands (uv 0.13.10: an sdist
whose build needs setuptools fails under `UV_NO_BUILD_ISOLATION=0`, builds under `--build-isolation`), so there it is
refused. And the settings uv has no variable for (none in `uv pip install --help`) have their own rows: `no-deps`
(the steps would install without their dependencies), `only-binary`, `no-binary` and `no-build` (`--only-binary
:none:` on the command line does not empty a file's set: uv 0.13.10 still refuses the sdist), `target` and `prefix`
(uv installs there whatever `--python` the steps pass) are refused. A file uv cannot parse stops uv before every
step: refused. Its other keys (cache-dir, link-mode, ...) are named with the file, not judged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from doctor.installers.pipsettings import (
    FOLLOWED,
    NEUTRALISED,
    REFUSED,
    Neutral,
    Setting,
    judge_constraint,
    judge_constraint_lines,
)
from doctor.probes.pipconf import FALSE, TRUE, read_text

BOOLEAN = ("UV_NO_BUILD_ISOLATION", "UV_NO_EDITABLE", "UV_REQUIRE_HASHES", "UV_OFFLINE", "UV_SYSTEM_PYTHON", "no-deps",
           "no-build")
_FIXED = {
    "UV_RESOLUTION": (NEUTRALISED, "each install step passes --resolution highest: the newest release the plan allows"),
    "UV_NO_BUILD_ISOLATION": (NEUTRALISED, "each install step runs with UV_NO_BUILD_ISOLATION=0; the steps the plan "
                                           "builds without isolation pass --no-build-isolation"),
    "UV_NO_EDITABLE": (NEUTRALISED, "each install step runs with UV_NO_EDITABLE=0: the sources install editable, as "
                                    "the plan and its post-install check expect"),
    "UV_PYTHON": (NEUTRALISED, "the steps pass --python TARGET, which wins"),
    "UV_SYSTEM_PYTHON": (NEUTRALISED, "the steps pass --python TARGET, which wins"),
    "UV_INDEX_STRATEGY": (NEUTRALISED, "the steps pass --index-strategy unsafe-best-match, which wins"),
    "UV_OVERRIDE": (REFUSED, "uv would replace what the steps ask for with its lines"),
    "UV_EXCLUDE": (REFUSED, "uv would leave out what its lines name, whatever the steps ask for"),
    "UV_REQUIRE_HASHES": (REFUSED, "the plan's pins carry no hashes: uv refuses the first install step"),
    "UV_TORCH_BACKEND": (REFUSED, "uv would fetch torch and its kin from a PyTorch index of its own choice, not the "
                                  "plan's"),
    "UV_INDEX": (FOLLOWED, "every step also reads it"),
    "UV_EXTRA_INDEX_URL": (FOLLOWED, "every step also reads it"),
    "UV_DEFAULT_INDEX": (FOLLOWED, "the steps that name no index of their own read it"),
    "UV_INDEX_URL": (FOLLOWED, "the steps that name no index of their own read it"),
    "UV_FIND_LINKS": (FOLLOWED, "every step also installs from it"),
    "UV_PRERELEASE": (FOLLOWED, "how uv takes pre-releases for what the plan does not pin"),
    "UV_EXCLUDE_NEWER": (FOLLOWED, "uv ignores releases uploaded after it: a pin uploaded later fails its step"),
    "UV_BUILD_CONSTRAINT": (FOLLOWED, "uv holds the build requirements of every source it builds to it"),
    # set only in a configuration file (uv has no variable for them)
    "no-deps": (REFUSED, "uv would install what the steps name without its dependencies (verl, vLLM, the final pins), "
                         "and the target would end without them"),
    "only-binary": (REFUSED, "uv would refuse every sdist the plan builds, and a step's --only-binary :none: does not "
                             "empty a configuration file's set"),
    "no-binary": (REFUSED, "uv would build every wheel the plan chose from its sdist, and a step's --no-binary :none: "
                           "does not empty a configuration file's set"),
    "no-build": (REFUSED, "uv would refuse every sdist and source the plan builds"),
    "target": (REFUSED, "uv would install into that directory, whatever --python the steps pass"),
    "prefix": (REFUSED, "uv would install under that prefix, whatever --python the steps pass"),
}
# a configuration file's key (top level, or `[pip]`, which `uv pip` commands read first) -> its row of _FIXED: the
# variable of the same option, or the key itself where uv has none; `constraint-dependencies` is judged as a
# UV_CONSTRAINT file, `offline` as UV_OFFLINE, `index` (an array of tables) as UV_INDEX / UV_DEFAULT_INDEX
CONFIG_KEYS = {"resolution": "UV_RESOLUTION", "no-build-isolation": "UV_NO_BUILD_ISOLATION", "python": "UV_PYTHON",
               "system": "UV_SYSTEM_PYTHON", "index-strategy": "UV_INDEX_STRATEGY",
               "override-dependencies": "UV_OVERRIDE", "exclude-dependencies": "UV_EXCLUDE",
               "require-hashes": "UV_REQUIRE_HASHES", "torch-backend": "UV_TORCH_BACKEND",
               "index-url": "UV_INDEX_URL", "extra-index-url": "UV_EXTRA_INDEX_URL", "find-links": "UV_FIND_LINKS",
               "prerelease": "UV_PRERELEASE", "exclude-newer": "UV_EXCLUDE_NEWER",
               "build-constraint-dependencies": "UV_BUILD_CONSTRAINT", "constraint-dependencies": "UV_CONSTRAINT",
               "offline": "UV_OFFLINE", "no-deps": "no-deps", "only-binary": "only-binary", "no-binary": "no-binary",
               "no-build": "no-build", "target": "target", "prefix": "prefix"}
NEUTRAL_ENV = {"UV_NO_BUILD_ISOLATION": "0", "UV_NO_EDITABLE": "0"}


def config_files(environ: Mapping[str, str], cwd: str) -> list[str]:
    """The configuration files `uv pip install` reads, as uv finds them: UV_CONFIG_FILE, else the nearest uv.toml or
    pyproject.toml with a `[tool.uv]` table from the working directory up, then the user's (`$XDG_CONFIG_HOME` or
    ~/.config, + uv/uv.toml) and the system's ($XDG_CONFIG_DIRS or /etc/xdg, + uv/uv.toml, then /etc/uv/uv.toml).
    None under UV_NO_CONFIG."""
    if (environ.get("UV_NO_CONFIG") or "").lower() in TRUE:
        return []
    if environ.get("UV_CONFIG_FILE"):
        return [environ["UV_CONFIG_FILE"]]
    out: list[str] = []
    for d in [Path(cwd), *Path(cwd).parents]:
        if (d / "uv.toml").is_file():
            out.append(str(d / "uv.toml"))
            break
        py = read_text(str(d / "pyproject.toml"))
        if py is not None and "[tool.uv" in py:
            out.append(str(d / "pyproject.toml"))
            break
    home = environ.get("HOME") or os.path.expanduser("~")
    user = Path(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")) / "uv" / "uv.toml"
    dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    out += [str(p) for p in [user, *(Path(d) / "uv" / "uv.toml" for d in dirs), Path("/etc/uv/uv.toml")]
            if p.is_file()]
    return out


def judge(environ: Mapping[str, str], *, cwd: str, offline: bool, pins: Mapping[str, set[str]],
          read: Callable[[str], str | None] | None = None) -> list[Setting]:
    """The decision for every UV_* variable of `environ` that changes what the steps install and is set (an empty
    value is unset, a false boolean changes nothing), then for every configuration file uv reads: the file, named,
    and each of its settings (config_settings)."""
    read = read or read_text
    out: list[Setting] = []
    for name in sorted(environ):
        value = environ[name].strip()
        if not value or not (name in _FIXED or name in ("UV_CONSTRAINT", "UV_OFFLINE")):
            continue
        said = f"{name}={value}"
        if name == "UV_CONSTRAINT":
            action, how = judge_constraint(value, pins, read)
            out.append(Setting(name, value, said, action, how.replace("pip", "uv")))
            continue
        got = decide(name, value, said, offline=offline)
        if got is not None:
            out.append(got)
    for path in config_files(environ, cwd):
        out += config_settings(path, offline=offline, pins=pins, read=read)
    return out


def decide(name: str, value: str, said: str, *, offline: bool) -> Setting | None:
    """One setting's row of _FIXED (`name`: its variable, or its key where uv has none), None when it changes
    nothing (a false boolean, `highest` resolution, `offline` for an install that reads only the wheelhouse)."""
    if name in BOOLEAN:
        if value.lower() in FALSE:
            return None
        if value.lower() not in TRUE:
            return Setting(name, value, said, REFUSED, "not a boolean: uv stops on it before every step")
    if name == "UV_OFFLINE":
        if offline:
            return None  # the steps pass --offline anyway
        return Setting(name, value, said, REFUSED, "uv would download nothing, and the plan installs from an index")
    if name == "UV_RESOLUTION" and value == "highest":
        return None
    action, how = _FIXED[name]
    return Setting(name, value, said, action, how)


def config_settings(path: str, *, offline: bool, pins: Mapping[str, set[str]],
                    read: Callable[[str], str | None]) -> list[Setting]:
    """Each setting of one configuration file that changes what the steps install, decided by its row of _FIXED
    (CONFIG_KEYS), then the file itself, named with the keys that are not judged."""
    from doctor.errors import InputError
    from doctor.tomlfile import load_toml

    text = read(path)
    if text is None:
        return [Setting("config-file", path, f"uv configuration {path}", REFUSED,
                        "it cannot be read: uv stops before every step")]
    try:
        doc = load_toml(text.encode("utf-8"), path)
    except InputError as e:
        return [Setting("config-file", path, f"uv configuration {path}", REFUSED,
                        f"uv cannot parse it ({e.message}) and stops before every step")]
    top = ((doc.get("tool") or {}).get("uv") or {}) if os.path.basename(path) == "pyproject.toml" else doc
    out: list[Setting] = []
    rest: list[str] = []
    pip = top.get("pip")
    tables: tuple[tuple[str, dict[str, Any]], ...] = (("", top), ("[pip] ", pip if isinstance(pip, dict) else {}))
    for section, table in tables:
        for key, raw in table.items():
            if not section and key == "pip":
                continue
            said = f"{section}{key} = {json.dumps(raw)} ({path})"
            if not section and key == "index" and isinstance(raw, list):
                for entry in raw:
                    url = entry.get("url") if isinstance(entry, dict) else None
                    if url:
                        row = "UV_DEFAULT_INDEX" if entry.get("default") is True else "UV_INDEX"
                        out.append(Setting(row, str(url), f"index = {url} ({path})", *_FIXED[row]))
                continue
            if key not in CONFIG_KEYS:
                rest.append(f"{section}{key}")
                continue
            name = CONFIG_KEYS[key]
            if name == "UV_CONSTRAINT":
                reqs = [str(x) for x in raw] if isinstance(raw, list) else [str(raw)]
                action, how = judge_constraint_lines([(f"{key} in {path}", "\n".join(reqs))], pins)
                out.append(Setting(name, " ".join(reqs), said, action, how.replace("pip", "uv")))
                continue
            value = _value(raw)
            got = decide(name, value, said, offline=offline) if value else None
            if got is not None and got.action == NEUTRALISED and name in NEUTRAL_ENV:
                got = Setting(name, value, said, REFUSED, f"the steps' {name}={NEUTRAL_ENV[name]} does not undo it in "
                              "a configuration file (uv reads a false flag as not given, and the file's value stands)")
            if got is not None:
                out.append(got)
    how = "uv reads it for every step; what of it changes what the steps install is judged setting by setting"
    out.append(Setting("config-file", path, f"uv configuration {path}", FOLLOWED,
                       how + (f"; not judged: {', '.join(rest)}" if rest else "")))
    return out


def _value(raw: object) -> str:
    """A configuration value as its variable would carry it: true as `true`, a list space-separated; false, an empty
    list or one of only `:none:` set nothing (empty)."""
    if isinstance(raw, bool):
        return "true" if raw else ""
    if isinstance(raw, list):
        return " ".join(str(x) for x in raw if str(x) != ":none:")
    return str(raw).strip()


def neutralising(settings: list[Setting]) -> Neutral:
    """The arguments and environment each `uv pip install` step carries to neutralise `settings`."""
    on = {s.option for s in settings if s.action == NEUTRALISED}
    args = ("--resolution", "highest") if "UV_RESOLUTION" in on else ()
    return Neutral(args, tuple((n, v) for n, v in NEUTRAL_ENV.items() if n in on), ())
