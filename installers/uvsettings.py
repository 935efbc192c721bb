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
  `UV_PRERELEASE`, `UV_EXCLUDE_NEWER` (a pin uploaded later fails its step), `UV_BUILD_CONSTRAINT`, and every
  configuration file uv will read (its settings are not judged one by one: `--isolated` ignores them).

uv has no variable for `--no-deps`, `--only-binary` or `--no-binary` (none in `uv pip install --help`): in uv those
come only from a configuration file, which is named.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from doctor.installers.pipsettings import (
    FOLLOWED,
    NEUTRALISED,
    REFUSED,
    Neutral,
    Setting,
    judge_constraint,
)
from doctor.probes.pipconf import FALSE, TRUE, read_text

BOOLEAN = ("UV_NO_BUILD_ISOLATION", "UV_NO_EDITABLE", "UV_REQUIRE_HASHES", "UV_OFFLINE", "UV_SYSTEM_PYTHON")
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
}
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
    value is unset, a false boolean changes nothing), then every configuration file uv reads."""
    out: list[Setting] = []
    for name in sorted(environ):
        value = environ[name].strip()
        if not value or not (name in _FIXED or name in ("UV_CONSTRAINT", "UV_OFFLINE")):
            continue
        said = f"{name}={value}"
        if name in BOOLEAN:
            if value.lower() in FALSE:
                continue
            if value.lower() not in TRUE:
                out.append(Setting(name, value, said, REFUSED, "not a boolean: uv stops on it before every step"))
                continue
        if name == "UV_CONSTRAINT":
            action, how = judge_constraint(value, pins, read or read_text)
            how = how.replace("pip", "uv")
        elif name == "UV_OFFLINE":
            if offline:
                continue  # the steps pass --offline anyway
            action, how = REFUSED, "uv would download nothing, and the plan installs from an index"
        elif name == "UV_RESOLUTION" and value == "highest":
            continue
        else:
            action, how = _FIXED[name]
        out.append(Setting(name, value, said, action, how))
    for path in config_files(environ, cwd):
        out.append(Setting("config-file", path, f"uv configuration {path}", FOLLOWED,
                           "uv reads its settings for every step; they are not judged one by one (--isolated passes "
                           "--no-config)"))
    return out


def neutralising(settings: list[Setting]) -> Neutral:
    """The arguments and environment each `uv pip install` step carries to neutralise `settings`."""
    on = {s.option for s in settings if s.action == NEUTRALISED}
    args = ("--resolution", "highest") if "UV_RESOLUTION" in on else ()
    return Neutral(args, tuple((n, v) for n, v in NEUTRAL_ENV.items() if n in on), ())
