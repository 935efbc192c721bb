"""One path through a script: the variables, functions and positional parameters bash would hold there, and
the branch choices that led to it (a script whose `if`/`case` depends on what it cannot know has several)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from doctor.launch.shell.values import Str, Value

# Variables whose presence says the script prepares an Ascend NPU run (CANN, HCCL, torch-npu, vllm-ascend).
_NPU_VAR = re.compile(r"^(ASCEND_|HCCL_|VLLM_ASCEND|NPU_|ACL_|ACLNN_|LCCL_|MINDSPEED|ATB_|CPU_AFFINITY_CONF$|"
                      r"PYTORCH_NPU_ALLOC_CONF$|TASK_QUEUE_ENABLE$|COMBINED_ENABLE$|INF_NAN_MODE_ENABLE$|"
                      r"RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES$|MULTI_STREAM_MEMORY_REUSE$)")


def npu_variable(name: str) -> bool:
    return bool(_NPU_VAR.match(name))


@dataclass(frozen=True)
class Said:
    """What a branch choice says of a value the script cannot know: it matches one of `patterns` (bash patterns:
    a `case` arm's, `[[ $X == npu* ]]`'s right side; a literal of `[ "$X" = npu ]`) or, with `matches` False,
    none of them (the false side of a test, a `case` arm after the arms bash tried first)."""

    subject: str  # the value's source text, e.g. "${DEVICE}"
    patterns: tuple[str, ...]
    matches: bool


class Choice(str):
    """A branch choice as a path's label shows it (`line 60: if `[ "${DEVICE}" = npu ]` false`), with what it
    says of the values it tested (`said`), so a reader of the label (lint's device branches) need not parse it, and
    — on the side a default of the script takes where the user may set the variable at launch (`[ "${DEVICE:-gpu}"
    = gpu ]` true, with DEVICE set nowhere) — the environment variables left unset there (`defaulted`): a run takes
    this side unless its job sets them — and, where an `&&` list joins this test to others that a default decided
    (`guards`), the value of each such variable that makes its test false and so keeps a run off this side too: verl
    main's `[ "${VERL_USE_UV:-1}" != 0 ] && [ "${DEVICE:-gpu}" = gpu ]` takes the uv launch by DEVICE's default
    unless the job sets DEVICE or VERL_USE_UV=0."""

    said: tuple[Said, ...]
    defaulted: tuple[str, ...]
    guards: tuple[tuple[str, str], ...]

    def __new__(cls, text: str, said: tuple[Said, ...] = (), defaulted: tuple[str, ...] = (),
                guards: tuple[tuple[str, str], ...] = ()) -> Choice:
        obj = super().__new__(cls, text)
        obj.said = said
        obj.defaulted = defaulted
        obj.guards = guards
        return obj


@dataclass
class World:
    vars: dict[str, Value] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    funcs: dict[str, object] = field(default_factory=dict)
    args: list[Str] = field(default_factory=list)
    label: tuple[str, ...] = ()
    hints: set[str] = field(default_factory=set)  # why this path looks like an NPU run
    status: bool | None = True
    dead: bool = False  # `exit` (or `exec`) ended the script on this path
    returning: bool = False  # `return` inside a function
    name: str = "script.sh"
    # per function call: each `local` name's value (None: unset) and World.from_env before the call shadowed it
    locals_stack: list[dict[str, tuple[Value | None, frozenset[str]]]] = field(default_factory=list)
    # variable -> the words it is one of on this path: a `case` branch of several literal patterns (`gpu | npu)`)
    # taken while the value is unknown; a later `case` on it takes only the branches those words reach
    one_of: dict[str, frozenset[str]] = field(default_factory=dict)
    # variable -> the environment variables whose absence its value relies on (`X=${X:-127.0.0.1}`: {"X"}): what the
    # script gives it only when the environment does not (a default, not a value the script fixes)
    from_env: dict[str, frozenset[str]] = field(default_factory=dict)
    # environment variables whose default a test opened on this path (Interpreter.opens): the path took the default
    # or the environment's value there, so a later test of them is decided by that, not opened again
    chosen: frozenset[str] = frozenset()

    # -- Scope protocol (expand.py) ----------------------------------------------------------------------
    def get(self, name: str) -> Value | None:
        return self.vars.get(name)

    def set(self, name: str, value: Value) -> None:
        self.vars[name] = value
        self.one_of.pop(name, None)
        self.from_env.pop(name, None)
        if npu_variable(name):
            self.hints.add(f"sets {name}")

    def positional(self) -> list[Str]:
        return self.args

    def script_name(self) -> str:
        return self.name

    # -- paths -----------------------------------------------------------------------------------------
    def copy(self) -> World:
        return World(dict(self.vars), set(self.exported), dict(self.funcs), list(self.args), self.label,
                     set(self.hints), self.status, self.dead, self.returning, self.name,
                     [dict(d) for d in self.locals_stack], dict(self.one_of), dict(self.from_env), self.chosen)

    def fork(self, choice: str) -> World:
        w = self.copy()
        w.label = self.label + (choice,)
        return w

    def unset(self, name: str) -> None:
        self.vars.pop(name, None)
        self.one_of.pop(name, None)
        self.from_env.pop(name, None)
        self.exported.discard(name)

    def signature(self) -> tuple[object, ...]:
        """Two paths with the same signature behave the same from here on (they are merged)."""
        return (tuple(sorted((k, repr(v)) for k, v in self.vars.items())), tuple(sorted(self.exported)),
                tuple(sorted(self.funcs)), tuple(repr(a) for a in self.args), self.dead, self.returning,
                tuple(sorted(self.hints)), tuple(sorted((k, tuple(sorted(v))) for k, v in self.one_of.items())),
                tuple(sorted(self.chosen)))


def shared(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    """The choices two labels share: the label of the path they merge into."""
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return tuple(out)


def mergeable(a: tuple[str, ...], b: tuple[str, ...], apart: Callable[[tuple[str, ...]], object] | None) -> bool:
    """Whether paths with labels `a` and `b` may become one labelled with the choices they share: not when a reader
    of the labels (`apart`: lint's device of a path) tells them apart, or would no longer read the same of the shared
    choices (a `gpu)` arm and a `*)` arm after `npu)` are both "not an NPU"; the choices they share say nothing)."""
    if apart is None:
        return True
    said = apart(a)
    return said == apart(b) == apart(shared(a, b))


def merge(worlds: list[World], apart: Callable[[tuple[str, ...]], object] | None = None) -> list[World]:
    """Drop dead paths' duplicates and merge paths that reached the same state (their label becomes the
    choices they share; a value one of them took from a default the environment can change stays such a value),
    except paths `apart` tells apart (see mergeable)."""
    out: dict[tuple[object, ...], list[World]] = {}
    for w in worlds:
        group = out.setdefault(w.signature(), [])
        have = next((h for h in group if mergeable(h.label, w.label, apart)), None)
        if have is None:
            group.append(w)
            continue
        for k, v in w.from_env.items():
            have.from_env[k] = have.from_env.get(k, frozenset()) | v
        have.label = shared(have.label, w.label)
    return [w for group in out.values() for w in group]
