"""pip's own configuration that would change what the install does, decided per setting before the first change.

Every `pip install` option can also come from the environment (`PIP_<LONG_NAME>`) or a pip.conf (`[global]`,
`[install]`), and the command line wins over both, the environment over the files
(https://pip.pypa.io/en/stable/topics/configuration/). The steps are pip commands, so a user's `PIP_NO_DEPS=1`
was followed silently: verl, vLLM and the final pins installed without their dependencies, and the target ended
missing them. Each setting that changes what a step installs is, with the pip backend and not under `--isolated`
(which ignores all of it; uv reads neither), one of:

- neutralised, explicitly, in each install step, and said in the plan: what the plan decides itself. `no-deps`
  and `ignore-installed` (store_true options with no flag that turns them off) get `PIP_NO_DEPS=0` /
  `PIP_IGNORE_INSTALLED=0` in the step's environment, which beats any pip.conf (a step that skips dependencies
  passes `--no-deps` itself); `only-binary` / `no-binary` get `--only-binary=:none: --no-binary=:none:`, which
  empty pip's sets ("`:none:` to empty the set"): which file a step installs (a wheel, or the sdist the
  wheelhouse carries where none exists) is what the plan and the wheel-fit judge decided. `python` sends pip to
  another interpreter: the doctor's pip passes `--python TARGET`, which wins. `dry-run` (pip installs nothing and
  the step looks done) and `ignore-requires-python` (pip takes releases the target's Python cannot run) get `=0` in
  the step's environment. `no-build-isolation` is a store_false option pip reads inverted (its strtobool lands in
  `build_isolation`: PIP_NO_BUILD_ISOLATION=0 or `no-build-isolation = false` builds every sdist and source in the
  target's own environment, without the build requirements the wheelhouse carries): `=1` in the step's environment
  restores isolation, and the steps the plan builds without it pass `--no-build-isolation`, which wins; `use-pep517`
  set false (the legacy setup.py build) gets `--use-pep517`, which the editable steps pass anyway;
- refused (exit 2), naming it, where no flag undoes it and following it breaks the run or the user's policy:
  `constraint` (a constraint holds versions against the plan's pins, and pip has no option that drops it; an empty
  value is ignored, so it cannot be blanked), `requirement` and `editable` (pip adds those to every step),
  `require-hashes` (the plan's pins carry no hashes: pip refuses the first install step), `python` when the
  target's own pip runs the steps, a boolean pip cannot read, and what pip stops on for an install: any value of
  `no-use-pep517`, and `platform` / `python-version` / `implementation` / `abi` (only with `--target`). `target` / `prefix` / `root`
  are refused by the command's own check (they send the steps elsewhere);
- followed, and named in the plan: where packages come from (`index-url`, `extra-index-url`, `find-links`,
  `no-index`: a mirror is the user's to choose, but the plan says what the steps will read besides what it names)
  and how pip chooses among versions for what the plan leaves open (`pre`, `upgrade`, `force-reinstall`,
  `prefer-binary`, `upgrade-strategy`), and what every build gets (`config-settings`, `global-option`,
  `build-option`). `isolated-mode` from the configuration comes too late to hide the configuration it is read from:
  not judged.

Each was run against the pip `python3 -m venv` bundles (23.2.1) and pip 26.3: `PIP_NO_DEPS=1` installs a wheel
without its requirement, `PIP_NO_DEPS=0` in the environment installs it again over `no-deps = true` in a pip.conf,
`--only-binary=:none:` installs an sdist under `PIP_ONLY_BINARY=:all:`, `--no-binary=:none:` a wheel under
`PIP_NO_BINARY=:all:`, `PIP_REQUIRE_HASHES=1` refuses an unhashed requirement.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from doctor.installers.plan import INSTALL
from doctor.installers.satisfy import requirement_lines
from doctor.probes.pipconf import FALSE, TRUE, read_text
from doctor.snapshot.model import normalize_name

NEUTRALISED, REFUSED, FOLLOWED = "neutralised", "refused", "followed"

# pip's configuration names (long options, aliases included) -> the option they set
WANTED = {"no-deps": "no-deps", "no-dependencies": "no-deps", "ignore-installed": "ignore-installed",
          "only-binary": "only-binary", "no-binary": "no-binary", "python": "python", "constraint": "constraint",
          "requirement": "requirement", "editable": "editable", "require-hashes": "require-hashes",
          "index-url": "index-url", "extra-index-url": "extra-index-url", "find-links": "find-links",
          "no-index": "no-index", "pre": "pre", "upgrade": "upgrade", "force-reinstall": "force-reinstall",
          "prefer-binary": "prefer-binary", "upgrade-strategy": "upgrade-strategy",
          "no-build-isolation": "no-build-isolation", "use-pep517": "use-pep517", "no-use-pep517": "no-use-pep517",
          "dry-run": "dry-run", "ignore-requires-python": "ignore-requires-python", "platform": "platform",
          "python-version": "python-version", "implementation": "implementation", "abi": "abi",
          "config-settings": "config-settings", "global-option": "global-option", "build-option": "build-option"}
BOOLEAN = frozenset({"no-deps", "ignore-installed", "require-hashes", "no-index", "pre", "upgrade", "force-reinstall",
                     "prefer-binary", "no-build-isolation", "use-pep517", "dry-run", "ignore-requires-python"})
# store_false options: pip stores strtobool(value) in the option's dest, so a false value turns the option on
# (pip/_internal/cli/parser.py: PIP_NO_BUILD_ISOLATION=0 builds without isolation, =1 changes nothing) and so does
# use-pep517 set false (the legacy setup.py build it names --no-use-pep517)
INVERTED = frozenset({"no-build-isolation", "use-pep517"})
# the environment value that each step carries to undo an option pip has no flag for
NEUTRAL_ENV = {"no-deps": "0", "ignore-installed": "0", "dry-run": "0", "ignore-requires-python": "0",
               "no-build-isolation": "1"}


@dataclass(frozen=True)
class Setting:
    """One option pip's configuration sets: where (`said`: `PIP_NO_DEPS=1`, `no-deps = true (/etc/pip.conf)`), what
    the install does with it, and why / how."""

    option: str
    value: str
    said: str
    action: str
    how: str

    def to_dict(self) -> dict[str, str]:
        return {"option": self.option, "value": redacted(self.value), "setting": redacted(self.said),
                "action": self.action, "how": self.how}


def redacted(text: str) -> str:
    """A credential in a URL (`https://user:token@host`) as `<redacted>`, as the commands shown mask it: what the plan
    prints and --json carries of a setting (the steps still read it from pip's configuration)."""
    return re.sub(r"(://)[^/@\s]+@", r"\1<redacted>@", text)


def plan_pins(plan: Any) -> dict[str, set[str]]:
    """The exact versions the plan's install steps pin (`torch==2.8.0+cpu`): what a constraint must admit."""
    out: dict[str, set[str]] = {}
    for step in plan.steps:
        if step.kind != INSTALL:
            continue
        for line in step.requirements:
            try:
                r = Requirement(line)
            except InvalidRequirement:
                continue
            specs = list(r.specifier)
            if len(specs) == 1 and specs[0].operator == "==" and not specs[0].version.endswith(".*"):
                out.setdefault(normalize_name(r.name), set()).add(specs[0].version)
    return out


def judge_constraint(value: str, pins: Mapping[str, set[str]], read: Callable[[str], str | None]) -> tuple[str, str]:
    """A constraint file is followed while it admits every version the plan pins (this host's own
    /etc/xdg/pip/pip.conf caps torch<=2.14.1, which the profiles' torch pins are inside); refused when a line
    excludes one (pip has no option that drops a constraint, and an empty value is ignored, so the step that pins
    it would fail), or when a local file cannot be read (pip stops at the first install step). A URL is not
    fetched before the run."""
    texts: list[tuple[str, str]] = []
    for path in value.split():
        if "://" in path:
            return FOLLOWED, f"pip holds every step to it; {path} (a URL) is not read before the run"
        text = read(path)
        if text is None:
            return REFUSED, f"{path} cannot be read: pip stops at the first install step"
        texts.append((path, text))
    return judge_constraint_lines(texts, pins)


def judge_constraint_lines(texts: list[tuple[str, str]], pins: Mapping[str, set[str]]) -> tuple[str, str]:
    """judge_constraint on constraint lines already read: (where, text) pairs, a file's or a uv configuration's
    `constraint-dependencies`."""
    clash: list[str] = []
    lines = 0
    for path, text in texts:
        for line, r in requirement_lines(text.splitlines()):
            lines += 1
            for version in sorted(pins.get(normalize_name(r.name), ())):
                if not r.specifier.contains(version, prereleases=True):
                    clash.append(f"{line} ({path}) excludes the plan's {r.name}=={version}")
    if clash:
        return REFUSED, ("; ".join(clash) + ": pip would fail the step that pins it, and has no option that drops a "
                         "constraint (an empty value is ignored)")
    return FOLLOWED, (f"pip holds what the plan leaves open to its {lines} line(s); every version the plan pins is "
                      "inside them")


def _decide(option: str, value: str, *, own_pip: bool, offline: bool, pins: Mapping[str, set[str]],
            read: Callable[[str], str | None]) -> tuple[str, str]:
    """(action, how) for one option that is on."""
    if option == "no-deps":
        return NEUTRALISED, ("each install step runs with PIP_NO_DEPS=0 (pip has no flag that turns dependencies back "
                             "on; the environment wins over any pip.conf); the steps that skip them pass --no-deps")
    if option == "ignore-installed":
        return NEUTRALISED, ("each install step runs with PIP_IGNORE_INSTALLED=0: pip uninstalls what a step replaces, "
                             "as the restore and the post-install check expect")
    if option == "no-build-isolation":
        return NEUTRALISED, ("each install step runs with PIP_NO_BUILD_ISOLATION=1 (pip reads this option inverted: "
                             "=1 keeps isolation); the steps the plan builds without it pass --no-build-isolation")
    if option == "use-pep517":
        return NEUTRALISED, "each install step passes --use-pep517: sources build through PEP 517, never setup.py"
    if option == "no-use-pep517":
        return REFUSED, "pip stops on any value of it (\"A value was passed for --no-use-pep517\")"
    if option == "dry-run":
        return NEUTRALISED, "each install step runs with PIP_DRY_RUN=0: pip would install nothing and say it did"
    if option == "ignore-requires-python":
        return NEUTRALISED, ("each install step runs with PIP_IGNORE_REQUIRES_PYTHON=0: what the plan leaves open "
                             "stays inside the target's Python, as the wheel-fit check judged it")
    if option in ("platform", "python-version", "implementation", "abi"):
        return REFUSED, ("pip stops on it: platform and interpreter options are for `pip download` and `--target` "
                         "(\"When restricting platform and interpreter constraints ...\")")
    if option in ("config-settings", "global-option", "build-option"):
        return FOLLOWED, "every source a step builds gets it"
    if option in ("only-binary", "no-binary"):
        return NEUTRALISED, ("each install step passes --only-binary=:none: --no-binary=:none: (empties both): "
                             "wheels or sdists as the plan chose them")
    if option == "python":
        if own_pip:
            return NEUTRALISED, "the doctor's pip passes --python TARGET, which wins"
        return REFUSED, "the target's pip would re-run itself under that interpreter and install into it"
    if option == "constraint":
        return judge_constraint(value, pins, read)
    if option in ("requirement", "editable"):
        return REFUSED, "pip would add it to every install step"
    if option == "require-hashes":
        return REFUSED, "the plan's pins carry no hashes: pip refuses the first install step"
    if option in ("index-url", "extra-index-url"):
        if offline:
            return FOLLOWED, "not read offline: the steps pass --no-index"
        return FOLLOWED, ("the steps that name no index of their own read it" if option == "index-url"
                          else "every step also reads it (pip takes the newest version any index serves)")
    if option == "find-links":
        return FOLLOWED, ("every step also installs from it" + (", beyond the wheelhouse the plan was checked against"
                                                                 if offline else ""))
    if option == "no-index":
        return FOLLOWED, ("the steps read no index, only --find-links folders" if not offline
                          else "the steps pass --no-index anyway")
    return FOLLOWED, {"pre": "pip may take pre-releases for what the plan does not pin",
                      "upgrade": "pip upgrades what the steps name to the newest release the plan allows",
                      "force-reinstall": "pip reinstalls every package a step resolves, present or not",
                      "prefer-binary": "pip prefers an older wheel to a newer sdist for what the plan does not pin",
                      "upgrade-strategy": "how pip upgrades the dependencies of what it upgrades"}.get(option, "")


def judge(settings: Mapping[str, tuple[str, str]], *, own_pip: bool, offline: bool,
          pins: Mapping[str, set[str]] | None = None, read: Callable[[str], str | None] | None = None) -> list[Setting]:
    """The decision for every option of `settings` (pip's configuration as `install_settings` reads it: option ->
    (value, where)) that is on: a boolean set false changes nothing; one pip cannot read stops pip (refused).
    `pins`: the plan's exact versions (`plan_pins`), which a constraint file (`read` returns its text, None when it
    cannot be read) must admit."""
    out: list[Setting] = []
    for option, (value, said) in settings.items():
        if option in BOOLEAN:
            if value.lower() in (TRUE if option in INVERTED else FALSE):
                continue
            if value.lower() not in TRUE + FALSE:
                out.append(Setting(option, value, said, REFUSED, "not a boolean: pip stops on it before every step"))
                continue
        action, how = _decide(option, value, own_pip=own_pip, offline=offline, pins=pins or {},
                              read=read or read_text)
        out.append(Setting(option, value, said, action, how))
    return out


@dataclass(frozen=True)
class Neutral:
    """What each pip install step carries to neutralise the settings: arguments, environment, and the environment
    aliases it drops (`PIP_NO_DEPENDENCIES` beside the `PIP_NO_DEPS=0` that replaces it: pip reads both, and which
    one it reads last is the environment's order)."""

    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    unset: tuple[str, ...] = ()


def neutralising(settings: list[Setting]) -> Neutral:
    """The arguments and environment each pip install step carries to neutralise `settings`."""
    on = {s.option for s in settings if s.action == NEUTRALISED}
    args: tuple[str, ...] = ("--only-binary=:none:", "--no-binary=:none:") if on & {"only-binary", "no-binary"} else ()
    args += ("--use-pep517",) if "use-pep517" in on else ()
    env = tuple((f"PIP_{o.upper().replace('-', '_')}", v) for o, v in NEUTRAL_ENV.items() if o in on)
    unset = tuple(f"PIP_{n.upper().replace('-', '_')}" for n, o in WANTED.items() if o in on and n != o
                  and o in NEUTRAL_ENV)
    return Neutral(args, env, unset)


def refusal(settings: list[Setting], tool: str = "pip") -> str | None:
    """The exit-2 message for the settings the install refuses, None when there are none (`tool`: pip or uv, whose
    configuration it is)."""
    bad = [s for s in settings if s.action == REFUSED]
    if not bad:
        return None
    return (f"{tool}'s configuration would change what the install does, and no flag of a step undoes it, so nothing "
            "was done: " + "; ".join(f"{redacted(s.said)} ({s.how})" for s in bad) + ". Unset it for this run, or pass "
            f"--isolated (the steps then ignore {tool}'s configuration and {tool.upper()}_* variables)")


def lines(settings: list[Setting]) -> list[str]:
    """What the plan output says of the settings it neutralises or follows."""
    return [f"  {redacted(s.said)} — {s.action}: {s.how}" for s in settings if s.action != REFUSED]


# uv's variables (installers/uvsettings.py) for the same places: UV_INDEX adds an index as --extra-index-url does
_UV_SOURCES = {"UV_INDEX_URL": "index-url", "UV_DEFAULT_INDEX": "index-url", "UV_EXTRA_INDEX_URL": "extra-index-url",
               "UV_INDEX": "extra-index-url", "UV_FIND_LINKS": "find-links"}


def downloads(settings: list[Mapping[str, str]], found: Mapping[str, list[str]], *, offline: bool,
              default_index: str) -> dict[str, list[str]]:
    """The plan's `downloads from:` (Executor.downloads: indexes, git) with what pip's configuration adds and the
    steps follow: its `index-url` in place of pip's default where a step names none, its `extra-index-url`s, and its
    `find-links` folders or pages (`find_links`; read offline too); uv's variables for the same. `settings` as
    `pip_config` / `uv_config` in --json hold them (Setting.to_dict). A credential in a URL is `<redacted>`."""
    on: dict[str, list[str]] = {}
    for s in settings:
        if s["action"] == FOLLOWED:
            on.setdefault(_UV_SOURCES.get(s["option"], s["option"]), []).extend(s["value"].split())
    indexes = list(found.get("indexes", []))
    if indexes and not offline:
        if on.get("index-url"):
            indexes = [redacted(on["index-url"][0]) if u == default_index else u for u in indexes]
        indexes += [redacted(u) for u in on.get("extra-index-url", [])]
    return {**found, "indexes": list(dict.fromkeys(indexes)),
            "find_links": [redacted(u) for u in on.get("find-links", [])]}
