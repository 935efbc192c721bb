"""pip and uv as installer backends: each turns a step into one command line for the *target* interpreter.

Backends only build argv + environment; running, logging and timeouts are the executor's job, so command
lines can be printed by `--dry-run` and compared in tests. Modelled on pipx's `backends/` split.

- pip runs from the doctor's own environment with `--python TARGET` when that pip has the option (pip >= 22.3),
  so a target created with `venv --without-pip` works; otherwise the target's `python -m pip` runs, and the plan
  brings it to PIP_FLOOR first (an explicit, journalled step: installers.execute.pip_step).
- pip's editable installs pass `--use-pep517`: a setup.py-only project (MindSpeed) is then built through PEP 660
  (pip >= 21.3, setuptools >= 64 in the build environment, which isolation provides), which records
  direct_url.json. Without it, pip before 25.3 falls back to `setup.py develop` whenever setuptools and `wheel`
  are importable in the target (vllm-ascend's build requirements install `wheel`): an egg-link with no
  direct_url.json, which no verifier can read as "editable from this clone" and no RECORD describes.
- uv runs `uv pip install --python TARGET` with `--index-strategy unsafe-best-match`: uv's default
  (`first-index`) would take `torch` from the first index that has the name at all, so the PyTorch CPU index
  could never serve `torch==X+cpu` next to PyPI (https://docs.astral.sh/uv/pip/compatibility/#packages-that-exist-on-multiple-indexes).
- `isolated=True` ignores user/site configuration and environment (pip `--isolated` + PIP_CONFIG_FILE=/dev/null,
  uv `--no-config` + UV_NO_CONFIG=1): reproducible installs, and hermetic tests on hosts with a pip.conf.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from doctor.errors import InputError
from doctor.installers.plan import IndexOptions


@dataclass(frozen=True)
class Source:
    """Where an install may look: index options, or a local wheelhouse (`find_links` + `no_index`)."""

    index: IndexOptions = field(default_factory=IndexOptions)
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    offline: bool = False


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # set in the child environment
    unset: tuple[str, ...] = ()  # removed from the child environment

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        for k in self.unset:
            env.pop(k, None)
        env.update(dict(self.env))
        return env


def shown(argv: tuple[str, ...] | list[str]) -> str:
    """A command as the doctor prints and logs it: credentials in its URLs (`--index-url https://u:TOKEN@…`, a
    `--git-mirror` with a token) become `<redacted>`, as pip masks them in its own output; the command run keeps them.
    Shell-quoted, so a printed line pastes as the command it was: a bare `numpy<2.0.0` would be a redirection."""
    import shlex

    from doctor.snapshot.redact import redact_url_credentials

    return redact_url_credentials(shlex.join(argv))


# environment variables that would leak this host's installer configuration into an isolated run
_PIP_VARS = ("PIP_",)
_UV_VARS = ("UV_",)


def _config_vars(prefixes: tuple[str, ...], keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(k for k in os.environ if k.startswith(prefixes) and k not in keep)


class Backend(ABC):
    name = "?"

    def __init__(self, *, isolated: bool = False, break_system_packages: bool = False) -> None:
        self.isolated = isolated
        # the user turned pip's PEP 668 guard off for the target (snapshot rule 15): pip reads that override itself;
        # uv reads neither PIP_BREAK_SYSTEM_PACKAGES nor pip.conf, so its steps carry the flag
        self.break_system_packages = break_system_packages
        # what each install step carries against the user's pip or uv configuration (installers.pipsettings.Neutral,
        # installers.uvsettings)
        self.neutral_args: tuple[str, ...] = ()
        self.neutral_env: tuple[tuple[str, str], ...] = ()
        self.neutral_unset: tuple[str, ...] = ()

    @abstractmethod
    def install(self, python: str, requirements: Sequence[str] = (), *, editable: str | None = None,
                source: Source = Source(), no_deps: bool = False, no_build_isolation: bool = False,
                env: Sequence[tuple[str, str]] = ()) -> Command: ...

    @abstractmethod
    def uninstall(self, python: str, packages: Sequence[str]) -> Command: ...


PIP_FLOOR = "21.3"  # PEP 660 editable installs (`--use-pep517 -e` of a setup.py-only project)
PIP_PYTHON_OPTION = "22.3"  # `pip --python TARGET`


def own_pip_version() -> str | None:
    """The version of the pip in the doctor's own environment, None without one."""
    from importlib import metadata

    if importlib.util.find_spec("pip") is None:
        return None
    try:
        return metadata.version("pip")
    except metadata.PackageNotFoundError:
        return None


def at_least(version: str | None, floor: str) -> bool:
    from doctor.knowledge.versions import parse_pkg_version

    v, f = parse_pkg_version(version or ""), parse_pkg_version(floor)
    return v is not None and f is not None and v >= f


class PipBackend(Backend):
    name = "pip"

    def __init__(self, *, isolated: bool = False, own: str | None | bool = True,
                 break_system_packages: bool = False) -> None:
        """`own`: True = the doctor's pip when it has `--python` (the version is read), a version string to say
        which, False/None = always the target's pip."""
        super().__init__(isolated=isolated, break_system_packages=break_system_packages)
        version = own_pip_version() if own is True else own or None
        self.own: str | None = version if at_least(version, PIP_PYTHON_OPTION) else None

    def runs(self, target_pip: str | None) -> tuple[str, str | None]:
        """(whose pip runs the steps, its version)."""
        return ("the doctor's pip (--python TARGET)", self.own) if self.own else ("the target's pip", target_pip)

    def _base(self, python: str) -> list[str]:
        if self.own:
            base = [sys.executable, "-m", "pip", "--python", python]
        else:
            base = [python, "-m", "pip"]
        if self.isolated:
            base.append("--isolated")
        return base + ["--disable-pip-version-check", "--no-input"]

    def _wrap(self, argv: list[str], env: Sequence[tuple[str, str]]) -> Command:
        extra = list(env)
        unset: tuple[str, ...] = ()
        if self.isolated:
            extra.append(("PIP_CONFIG_FILE", os.devnull))
            unset = _config_vars(_PIP_VARS)
        return Command(tuple(argv), tuple(extra), unset)

    def install(self, python: str, requirements: Sequence[str] = (), *, editable: str | None = None,
                source: Source = Source(), no_deps: bool = False, no_build_isolation: bool = False,
                env: Sequence[tuple[str, str]] = ()) -> Command:
        argv = self._base(python) + ["install", "--progress-bar", "off"]
        # PIP_USER=1 or `user = true` in a pip.conf sends each install to ~/.local (a venv: pip refuses instead),
        # outside the target and out of reach of its restore, ahead of its site-packages for every run of that
        # Python by that user; pip's hidden --no-user (21.3 on) wins over both. --isolated ignores them already.
        argv += [] if self.isolated else ["--no-user", *self.neutral_args]
        argv += _source_args(source, trusted_flag="--trusted-host")
        argv += ["--use-pep517"] if editable else []  # PEP 660, never `setup.py develop` (module docstring)
        argv += _install_args(requirements, editable, no_deps, no_build_isolation)
        cmd = self._wrap(argv, [*self.neutral_env, *env])
        return replace(cmd, unset=(*cmd.unset, *self.neutral_unset)) if self.neutral_unset else cmd

    def uninstall(self, python: str, packages: Sequence[str]) -> Command:
        return self._wrap(self._base(python) + ["uninstall", "-y", *packages], ())

    def download(self, requirements: Sequence[str], dest: str, *, python_version: str, platforms: Sequence[str],
                 source: Source = Source(), no_deps: bool = False, binary_only: bool = True) -> Command:
        """`pip download` for the target: for another kind of machine, binary wheels for its platform tags and
        Python (pip allows no sdist there); for this machine's kind (`platforms` empty), sdists where no wheel
        exists, preferring wheels."""
        argv = self._own_argv() + ["download", "--progress-bar", "off", "--dest", dest]
        if binary_only or platforms:
            major_minor = python_version.replace(".", "")
            argv += ["--only-binary=:all:", "--python-version", python_version, "--implementation", "cp",
                     "--abi", f"cp{major_minor}", "--abi", "abi3", "--abi", "none"]
            for p in platforms:
                argv += ["--platform", p]
        else:
            argv.append("--prefer-binary")
        argv += _source_args(source, trusted_flag="--trusted-host")
        if no_deps:
            argv.append("--no-deps")
        argv += list(requirements)
        return self._wrap(argv, ())


    def _own_argv(self) -> list[str]:
        """The doctor's own pip, for what has no target interpreter to run in (downloads, a resolution for another
        machine)."""
        return [sys.executable, "-m", "pip"] + (["--isolated"] if self.isolated else []) + \
            ["--disable-pip-version-check", "--no-input"]

    def resolve_report(self, requirements: Sequence[str], report: str, *, python_version: str,
                       foreign: bool = False, platforms: Sequence[str] = (), target: str | None = None,
                       source: Source = Source()) -> Command:
        """One resolution of `requirements`, written as pip's installation report (`install --dry-run
        --ignore-installed --report`, pip >= 22.2): for another kind of machine (`foreign`), binary wheels for its
        platform tags and Python into a throw-away `--target`."""
        argv = self._own_argv() + ["install", "--dry-run", "--ignore-installed", "--report", report, "--prefer-binary"]
        if foreign:
            argv += ["--target", str(target), "--only-binary=:all:", "--python-version", python_version,
                     *[x for p in platforms for x in ("--platform", p)]]
        argv += _source_args(source, trusted_flag="--trusted-host") + list(requirements)
        return self._wrap(argv, ())


class UvBackend(Backend):
    name = "uv"

    def __init__(self, *, isolated: bool = False, uv: str | None = None, break_system_packages: bool = False) -> None:
        super().__init__(isolated=isolated, break_system_packages=break_system_packages)
        found = uv or find_uv()
        if not found:
            raise InputError("uv is not installed (use --backend pip, or install uv)", source="--backend uv")
        self.uv = found

    def _wrap(self, argv: list[str], env: Sequence[tuple[str, str]]) -> Command:
        extra = list(env)
        unset: tuple[str, ...] = ()
        if self.isolated:
            extra.append(("UV_NO_CONFIG", "1"))
            unset = _config_vars(_UV_VARS, keep=("UV_CACHE_DIR",))
        return Command(tuple(argv), tuple(extra), unset)

    def install(self, python: str, requirements: Sequence[str] = (), *, editable: str | None = None,
                source: Source = Source(), no_deps: bool = False, no_build_isolation: bool = False,
                env: Sequence[tuple[str, str]] = ()) -> Command:
        argv = [self.uv, "pip", "install", "--python", python, "--index-strategy", "unsafe-best-match"]
        if self.isolated:
            argv.append("--no-config")
        if self.break_system_packages:
            argv.append("--break-system-packages")
        argv += _source_args(source, trusted_flag="--allow-insecure-host")
        if source.offline:
            argv.append("--offline")
        argv += [] if self.isolated else list(self.neutral_args)
        argv += _install_args(requirements, editable, no_deps, no_build_isolation)
        return self._wrap(argv, [*self.neutral_env, *env])

    def uninstall(self, python: str, packages: Sequence[str]) -> Command:
        argv = [self.uv, "pip", "uninstall", "--python", python]
        if self.isolated:
            argv.append("--no-config")
        if self.break_system_packages:
            argv.append("--break-system-packages")
        return self._wrap(argv + list(packages), ())


def _install_args(requirements: Sequence[str], editable: str | None, no_deps: bool,
                  no_build_isolation: bool) -> list[str]:
    """The end of an install command, the same for pip and `uv pip`."""
    argv = (["--no-deps"] if no_deps else []) + (["--no-build-isolation"] if no_build_isolation else [])
    argv += list(requirements)
    return argv + (["-e", editable] if editable else [])


def _source_args(source: Source, *, trusted_flag: str) -> list[str]:
    argv: list[str] = []
    if source.no_index:
        argv.append("--no-index")
    else:
        if source.index.index_url:
            argv += ["--index-url", source.index.index_url]
        for u in source.index.extra_index_urls:
            argv += ["--extra-index-url", u]
        for h in source.index.trusted_hosts:
            argv += [trusted_flag, h]
    for d in source.find_links:
        argv += ["--find-links", d]
    return argv


def find_uv() -> str | None:
    """uv next to the doctor's interpreter (pip-installed into the same venv), then on PATH (doctor.probes.uv)."""
    from doctor.probes.uv import uv_here

    return uv_here().to_run()


def make_backend(name: str, *, isolated: bool = False, break_system_packages: bool = False) -> Backend:
    """`auto` picks uv when it is present, else pip."""
    if name == "auto":
        name = "uv" if find_uv() else "pip"
    if name == "uv":
        return UvBackend(isolated=isolated, break_system_packages=break_system_packages)
    if name == "pip":
        return PipBackend(isolated=isolated, break_system_packages=break_system_packages)
    raise InputError(f"unknown backend {name!r} (auto, pip or uv)", source="--backend")
