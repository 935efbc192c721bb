"""Whether the user turned pip's PEP 668 guard off for an externally managed interpreter (snapshot rule 15).

pip refuses `install` and `uninstall` in an interpreter whose stdlib directory holds EXTERNALLY-MANAGED, unless its
`--break-system-packages` option is on; like every pip option it can come from pip's configuration: a
PIP_BREAK_SYSTEM_PACKAGES environment variable or `break-system-packages = true` in a pip.conf. This reads that
configuration the way pip does (pip/_internal/configuration.py and cli/parser.py, read, not copied), without
importing pip: the files of `config_files`, each later one winning per section; sections `[global]`, then the
command's own (`[install]`, `[uninstall]`), then the environment variable; empty values skipped; each value read
as pip's strtobool reads it, the last one deciding. A value that is no boolean, or a file configparser cannot
parse, stops pip before the command: no override then; nor when pip's require-virtualenv is on for the command
(read the same way), which refuses it outside a venv first. Each case was run against pip 23.0.1 (Debian 12) and pip
26.3 on Debian's /usr/bin/python3 (`pip install --dry-run`, `pip uninstall` of a name not installed).

It runs in the doctor right after the in-target probe, with the environment and `sys.prefix` the probe had (the
probe script must stay small and cheap), and only for an interpreter the probe found externally managed. A file
that does not name the option is read, never parsed: configparser is imported only when one does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

COMMANDS = ("install", "uninstall")  # the pip commands the guard stops
# pip's own options read here: the override, and require-virtualenv (alias require-venv), which makes pip refuse
# install and uninstall outside a venv whatever else is set (real: PIP_BREAK_SYSTEM_PACKAGES=1 with
# PIP_REQUIRE_VIRTUALENV=1, Debian's pip: "Could not find an activated virtualenv (required)")
_OPTIONS = {"break-system-packages": "break-system-packages", "require-virtualenv": "require-virtualenv",
            "require-venv": "require-virtualenv"}
# the `pip install` options that send an install to a directory of its own instead of the interpreter's site
# directories (and so also past PEP 668's check: https://github.com/pypa/pip/blob/23.0.1/src/pip/_internal/commands/install.py)
ELSEWHERE = ("target", "prefix", "root")
_NAMED = re.compile(r"break[-_]system[-_]packages|require[-_]v|target|prefix|root", re.I)
# the boolean words pip's strtobool reads (and uv's UV_* booleans, clap's boolish values: the same six each way)
TRUE = ("y", "yes", "t", "true", "on", "1")
FALSE = ("n", "no", "f", "false", "off", "0")


def _option(name: str) -> str:
    """A configuration name as pip matches it to an option: lower case, `_` as `-`, no leading `--`."""
    return name.lower().replace("_", "-").removeprefix("--")


def config_files(environ: Mapping[str, str], prefix: str) -> list[str]:
    """The files pip reads on Linux, lowest precedence first: the global ones ($XDG_CONFIG_DIRS or /etc/xdg, each
    + /pip/pip.conf, then /etc/pip.conf), the user's (~/.pip/pip.conf, then $XDG_CONFIG_HOME or ~/.config +
    /pip/pip.conf; not when PIP_CONFIG_FILE names a file that exists), the interpreter's (`prefix`/pip.conf), then
    PIP_CONFIG_FILE. None when PIP_CONFIG_FILE is os.devnull."""
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    home = environ.get("HOME") or os.path.expanduser("~")

    def expand(p: str) -> str:
        return home + p[1:] if p == "~" or p.startswith("~/") else p

    dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "").split(os.pathsep) if d.strip()] or ["/etc/xdg"]
    files = [os.path.join(expand(d), "pip", "pip.conf") for d in dirs] + ["/etc/pip.conf"]
    if not (env_file and os.path.exists(env_file)):
        xdg_home = (environ.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
        files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(xdg_home, "pip", "pip.conf")]
    return files + [os.path.join(prefix, "pip.conf")] + ([env_file] if env_file else [])


def read_text(path: str) -> str | None:
    """A configuration or constraint file's text (its first 256 KiB), None when it cannot be read."""
    try:
        with open(path, "rb") as fh:  # binary, decoded once: a text wrapper per file costs more than the read
            return fh.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return None


def pip_override(environ: Mapping[str, str], prefix: str) -> tuple[dict[str, str], list[str]]:
    """({command: what turns pip's guard off for it, "PIP_BREAK_SYSTEM_PACKAGES=1" or a pip.conf's path}, for
    `install` and `uninstall`; errors: what made pip stop before reading it)."""
    values, errors = _values(environ, prefix)
    if errors:
        return {}, errors
    found: dict[str, str] = {}
    for command in COMMANDS:
        by, stops = _setting(values, "break-system-packages", command, errors)
        venv_only, stops_too = _setting(values, "require-virtualenv", command, errors)
        if by is not None and venv_only is None and not (stops or stops_too):  # outside a venv pip refuses anyway
            found[command] = by
    return found, errors


def install_elsewhere(environ: Mapping[str, str], prefix: str) -> str | None:
    """What in pip's configuration sends every `pip install` to a directory of its own (`target`, `prefix` or `root`
    from PIP_TARGET / PIP_PREFIX / PIP_ROOT or a pip.conf's [global] / [install]; the last setting of each wins, as
    for the override), said as `PIP_TARGET=/dir` or `target = /dir (/etc/pip.conf)`; None when nothing does (or pip
    stops on its configuration first)."""
    values, errors = _values(environ, prefix)
    if errors:
        return None
    for option in ELSEWHERE:
        said = None
        for section in ("global", "install", ":env:"):
            value, source = values.get((option, section), ("", ""))
            if value.strip():
                said = source if section == ":env:" else f"{option} = {value.strip()} ({source})"
        if said:
            return said
    return None


def _values(environ: Mapping[str, str], prefix: str, wanted: Mapping[str, str] | None = None,
            named: re.Pattern[str] = _NAMED) -> tuple[dict[tuple[str, str], tuple[str, str]], list[str]]:
    """(option, section) -> (value, source) for the options read here (`wanted`: a configuration name as pip
    matches it -> the option it sets, an alias to its option; by default the guard's and ELSEWHERE), as pip's
    configuration sets them (the last file wins; the environment under the section ":env:"); errors: a file pip
    cannot parse stops it. `named` skips a file that names none of them unparsed."""
    wanted = wanted if wanted is not None else {**_OPTIONS, **{o: o for o in ELSEWHERE}}
    values: dict[tuple[str, str], tuple[str, str]] = {}  # (option, section) -> (value, source): the last file wins
    for path in config_files(environ, prefix):
        text = read_text(path)
        if not text or not named.search(text):
            continue
        import configparser

        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text, path)
        except configparser.Error as e:  # pip stops on a file it cannot parse
            return {}, [f"pip configuration {path}: {e}"]
        for section in parser.sections():
            if section in ("global", *COMMANDS):
                for name, value in parser.items(section):
                    if _option(name) in wanted:
                        values[wanted[_option(name)], section] = (value, path)
    for k, v in environ.items():  # pip keeps the last spelling in the environment
        if k.startswith("PIP_") and _option(k[4:]) in wanted:
            values[wanted[_option(k[4:])], ":env:"] = (v, f"{k}={v}")
    return values, []


def install_settings(environ: Mapping[str, str], prefix: str,
                     wanted: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The `pip install` options of `wanted` (a configuration name -> its option: `no-dependencies` -> `no-deps`)
    that pip's configuration sets, each as the value pip reads and where it came from (`PIP_NO_DEPS=1`, or
    `no-deps = true (/etc/pip.conf)`): a pip.conf's `[global]`, then its `[install]`, then the environment, the last
    one that is not empty deciding, as pip's ConfigOptionParser orders them (pip/_internal/cli/parser.py: "ignore
    empty values"). Empty when pip stops on its configuration before any command."""
    names = sorted({*wanted, *wanted.values()}, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(n).replace("\\-", "[-_]") for n in names), re.I)
    values, errors = _values(environ, prefix, wanted, pattern)
    out: dict[str, tuple[str, str]] = {}
    if errors:
        return out
    for option in dict.fromkeys(wanted.values()):
        for section in ("global", "install", ":env:"):
            value, source = values.get((option, section), ("", ""))
            if value.strip():
                out[option] = (value.strip(), source if section == ":env:" else f"{option} = {value.strip()} ({source})")
    return out


def _setting(values: Mapping[tuple[str, str], tuple[str, str]], option: str, command: str,
             errors: list[str]) -> tuple[str | None, bool]:
    """(what turns `option` on for `command`, or None; whether pip stops on a value that is no boolean)."""
    by: str | None = None
    for section in ("global", command, ":env:"):
        value, source = values.get((option, section), ("", ""))
        if value.lower() in TRUE:
            by = source
        elif value.lower() in FALSE:
            by = None
        elif value:  # not a boolean: pip stops on it
            msg = f"{option} = {value!r} ({source}): not a boolean, pip stops on it"
            errors += [msg] if msg not in errors else []
            return None, True
    return by, False


def add_override(doc: dict, environ: Mapping[str, str]) -> None:
    """Into a probe document of an externally managed interpreter: `python.break_system_packages`, with the
    environment the probe ran with; its errors join the document's."""
    py = doc.get("python")
    if not isinstance(py, dict) or py.get("externally_managed") is not True or not isinstance(py.get("prefix"), str):
        return
    found, errors = pip_override(environ, py["prefix"])
    py["break_system_packages"] = found
    if errors and isinstance(doc.get("errors"), list):
        doc["errors"].extend(errors)
