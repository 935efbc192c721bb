"""`doctor-env.sh`: one file to source before training, instead of a page of exports.

It sources the CANN/NNAL `set_env.sh` files the profile needs (verl's docs source
`ascend-toolkit/set_env.sh` and `nnal/atb/set_env.sh` from v0.7.0 on; CANN 9.x installs use `cann/set_env.sh`:
https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst), puts Megatron-LM on PYTHONPATH where that era's docs do, and exports the
profile's recommended variables. Huawei's set_env.sh files read unset variables, so they are sourced with
`set +u` and the caller's `-u` is restored afterwards. Every value is quoted with shlex.quote: a path with a
space or a quote cannot break out of its assignment.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from doctor.installers.plan import EnvSpec

_KEEP_PYTHONPATH = '"${PYTHONPATH:+:$PYTHONPATH}"'  # what was on PYTHONPATH stays, after the file's entries
_NAME_OK = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _check_name(name: str) -> str:
    if not name or name[0].isdigit() or set(name) - _NAME_OK:
        raise ValueError(f"not a shell variable name: {name!r}")
    return name


def render(spec: EnvSpec, *, header: str = "") -> str:
    q = shlex.quote
    lines = ["# doctor-env.sh — written by `doctor install`; source it:  . " + q(spec.path)]
    if header:
        lines += [f"# {h}" for h in header.splitlines()]
    lines += [
        "case $- in *u*) _doctor_had_u=1 ;; *) _doctor_had_u= ;; esac",
        "set +u",
    ]
    for f in spec.set_env_files:
        lines += [
            f"if [ -f {q(f)} ]; then . {q(f)}; else echo {q('doctor-env.sh: missing ' + f)} >&2; fi",
        ]
    lines += ['if [ -n "$_doctor_had_u" ]; then set -u; fi', "unset _doctor_had_u"]
    if spec.pythonpath:
        joined = ":".join(spec.pythonpath)
        lines.append(f'export PYTHONPATH={q(joined)}{_KEEP_PYTHONPATH}')
    for k, v in spec.exports:
        lines.append(f"export {_check_name(k)}={q(v)}")
    return "\n".join(lines) + "\n"


def is_current(spec: EnvSpec, *, header: str = "") -> bool:
    try:
        return Path(spec.path).read_text(encoding="utf-8") == render(spec, header=header)
    except OSError:
        return False


def write(spec: EnvSpec, *, header: str = "") -> Path:
    from doctor.atomic import write_text_atomic

    p = Path(spec.path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(str(p), render(spec, header=header))
    return p


def read(path: str) -> EnvSpec:
    """The EnvSpec of a doctor-env.sh `render` wrote (the lines it writes, read back with shlex: `. FILE` of each
    set_env.sh, `export PYTHONPATH=...` and `export NAME=VALUE`); lines it does not write (a hand edit) are left out.
    OSError when the file cannot be read."""
    text = Path(path).read_text(encoding="utf-8")
    set_env: list[str] = []
    pythonpath: tuple[str, ...] = ()
    exports: list[tuple[str, str]] = []
    for ln in text.splitlines():
        if ln.startswith("if [ -f ") and "; then . " in ln:
            words = shlex.split(ln.split(";", 1)[0])  # if [ -f FILE ]
            if len(words) == 5:
                set_env.append(words[3])
        elif ln.startswith("export PYTHONPATH=") and ln.endswith(_KEEP_PYTHONPATH):
            words = shlex.split(ln[: -len(_KEEP_PYTHONPATH)])
            if len(words) == 2:
                pythonpath = tuple(words[1].partition("=")[2].split(":"))
        elif ln.startswith("export "):
            words = shlex.split(ln)
            name, eq, value = words[1].partition("=") if len(words) == 2 else ("", "", "")
            if eq and name and not set(name) - _NAME_OK:
                exports.append((name, value))
    return EnvSpec(path, set_env_files=tuple(set_env), pythonpath=pythonpath, exports=tuple(exports))


def environ(spec: EnvSpec, base: Mapping[str, str]) -> dict[str, str]:
    """`base` as sourcing the file leaves it, as far as Python can tell without a shell: its PYTHONPATH entries
    first (then what was there) and its exports. The set_env.sh files it sources are CANN's shell scripts, not
    evaluated here."""
    out = dict(base)
    if spec.pythonpath:
        out["PYTHONPATH"] = os.pathsep.join([*spec.pythonpath, *([base["PYTHONPATH"]] if base.get("PYTHONPATH") else [])])
    out.update(dict(spec.exports))
    return out
