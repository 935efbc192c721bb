"""The builtins a launch script uses, as they change the walker's state; every other command is an external
program whose outcome is unknown (it is never run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from doctor.launch.shell.cond import test_argv
from doctor.launch.shell.tree import Node
from doctor.launch.shell.values import Hole, Str
from doctor.launch.shell.world import World

if TYPE_CHECKING:
    from doctor.launch.shell.interp import Interpreter

_TRUE = (":", "true", "echo", "printf", "cd", "pushd", "popd", "shopt", "trap", "wait", "sleep", "ulimit",
         "umask", "alias", "hash", "break", "continue", "mkdir", "touch", "chmod", "export", "declare",
         "typeset", "local", "readonly")


def run_builtin(it: Interpreter, n: Node, w: World, argv: list[Str]) -> list[World]:
    name = argv[0].text
    fn = w.funcs.get(name)
    if fn is not None:
        return it.call_function(fn, w, argv[1:])  # type: ignore[arg-type]
    if name in ("export", "declare", "typeset", "local", "readonly"):
        _declare(w, name, argv[1:], it.word_env[1:])
    elif name == "unset":
        for a in argv[1:]:
            if not a.text.startswith("-"):
                w.unset(a.text)
    elif name in ("source", "."):
        return it.source(argv, w, n.line)
    elif name == "exit":
        w.dead = True
        return [w]
    elif name == "exec":
        if len(argv) > 1:
            w.dead = True
            return [w]
    elif name == "return":
        w.returning = True
        w.status = argv[1].text in ("", "0") if len(argv) > 1 and argv[1].known else True
        return [w]
    elif name == "set":
        if len(argv) > 1 and argv[1].text == "--":
            w.args = list(argv[2:])
    elif name == "shift":
        k = int(argv[1].text) if len(argv) > 1 and argv[1].text.isdigit() else 1
        w.args = w.args[k:]
    elif name == "eval":
        it.note(f"line {n.line}: `eval` was not followed")
        w.status = None
        return [w]
    elif name == "read":
        for a in argv[1:]:
            if a.known and a.text.isidentifier():
                w.set(a.text, Str((Hole(f"${a.text}", "read at run time"),)))
        w.status = None
        return [w]
    elif name in ("[", "test"):
        w.status = test_argv(argv).status
        return [w]
    elif name == "false":
        w.status = False
        return [w]
    elif name not in _TRUE:
        if name == "npu-smi" or name.endswith("/npu-smi"):
            w.hints.add("runs npu-smi")
        w.status = None
        return [w]
    w.status = True
    return [w]


def _declare(w: World, kw: str, args: list[Str], from_env: list[frozenset[str]]) -> None:
    """`export A=1` written so that the grammar saw plain words (see tree.py): NAME=value per word."""
    for a, deps in zip(args, from_env + [frozenset()] * (len(args) - len(from_env)), strict=True):
        first = a.parts[0] if a.parts else ""
        if not isinstance(first, str) or first.startswith("-"):
            continue
        name, eq, rest = first.partition("=")
        if not name.isidentifier():
            continue
        if eq:
            w.set(name, Str((rest,) + a.parts[1:]) if rest else Str(a.parts[1:]))
            if deps:
                w.from_env[name] = deps
        if kw == "export":
            w.exported.add(name)
            from doctor.launch.shell.world import npu_variable

            if npu_variable(name):
                w.hints.add(f"exports {name}")
