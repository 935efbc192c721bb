"""The boundary a traceback crosses into the code that raised: which package raised, which of its functions was
called, and who called it.

A traceback lists its frames outermost first. Walking out from the innermost frame outside the standard library,
the frames of one package form a run: the package that raised (as far as the frames say), entered at the run's
outermost frame — the function that was called. The frame just outside that run is the caller: another package (it
calls, patches or wraps the one that raised: MindSpeed's `get_full_args` calling Megatron's `get_args`), or the
job's own code, or nothing (the traceback starts in the package). That pair is where to look when the exception is
the callee's check but the call is the caller's (verl's Megatron worker -> MindSpeed's `repatch` -> Megatron's
`get_args` -> `AssertionError: args is not initialized.`: Megatron asserts, MindSpeed called it too early).

A package is named by its distribution (`doctor.knowledge.ownership`), or, for an installed package the tables do
not name, by its directory under site-packages (`jinja2`). `raised_unread` is the last reading of a traceback no
signature and no other rule explains: where it was raised and who called, said as such. Pure logic.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from doctor.explain.attributed import Attribution
from doctor.explain.attributed import components as _comps
from doctor.explain.events import Event, Frame
from doctor.knowledge.ownership import Owner, component_of_distribution, distribution_of_module
from doctor.report import Severity

SOURCE = "https://docs.python.org/3.11/library/traceback.html"
# an installed package's directory: `.../site-packages/<top>/...`, `.../dist-packages/<top>/...`
_INSTALLED = re.compile(r"/(?:site|dist)-packages/(?P<top>[A-Za-z_][\w]*)(?:/|\.py$)")
STDLIB_MODULES = frozenset(sys.stdlib_module_names)  # the interpreter's own top-level modules
# A stop the process was told to make, no failure of the code it stopped in: Ctrl-C or SIGINT, sys.exit, a generator
# or task closed (https://docs.python.org/3/library/exceptions.html#exception-hierarchy: BaseException, not Exception)
_STOPS = frozenset({"KeyboardInterrupt", "SystemExit", "GeneratorExit", "CancelledError"})


@dataclass(frozen=True)
class Crossing:
    """`frame`, `own`, `name`: the innermost frame outside the stdlib, its package (None: the job's own code) and
    that package's name ('' for the job's code). `entry`: the outermost frame of that package's innermost run (the
    function called into it). `caller`, `caller_own`, `caller_name`: the frame just outside the run, its package and
    name (None / None / '' when the traceback starts in the package)."""

    frame: Frame
    own: Owner | None
    name: str
    entry: Frame
    caller: Frame | None = None
    caller_own: Owner | None = None
    caller_name: str = ""

    @property
    def called_by_package(self) -> bool:
        """The caller is another package's frame (not the job's code, not the same package)."""
        return self.caller is not None and self.caller_own is not None and self.caller_name != self.name


def package_name(frame: Frame, own: Owner | None) -> str:
    """The name a package is known by: its distribution, else the directory it is installed as, else its
    component; '' for the job's own code."""
    if own is None:
        return ""
    if own.distribution:
        return own.distribution
    if own.component == "model":
        return "the model"  # a model repository's own code (trust_remote_code: attribution.frame_owner)
    m = _INSTALLED.search(frame.path.replace("\\", "/"))
    return m.group("top") if m else own.component


def crossing(owned: list[tuple[Frame, Owner | None]]) -> Crossing | None:
    """The run of the innermost package's frames and the frame just outside it (`owned`: the frames outside the
    stdlib with their owners, outermost first, as attribution reads them)."""
    if not owned:
        return None
    frame, own = owned[-1]
    name = package_name(frame, own)
    entry = frame
    for outer, outer_own in reversed(owned[:-1]):
        outer_name = package_name(outer, outer_own)
        if outer_name != name or (outer_own is None) != (own is None):
            return Crossing(frame, own, name, entry, outer, outer_own, outer_name)
        entry = outer
    return Crossing(frame, own, name, entry)


def possessive(name: str) -> str:
    """`verl's`, `transformers'`."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def where(frame: Frame) -> str:
    return f'File "{frame.path}", line {frame.line}' + (f", in {frame.func}" if frame.func else "")


def func_of(frame: Frame) -> str:
    """A frame's function, or its file's name for a module's top level (`<module>`, a template's `top-level
    template code`)."""
    name = frame.func.split(".")[-1] if frame.func else ""
    return name if name.isidentifier() else frame.path.replace("\\", "/").rsplit("/", 1)[-1]


def entered(c: Crossing) -> str:
    """The function of the raising package that the caller called (the run's outermost frame); with no caller, the
    innermost frame's own function."""
    return func_of(c.entry if c.caller is not None else c.frame)


def caller_said(c: Crossing) -> tuple[str, str]:
    """(", called by mindspeed's get_full_args", "caller: File ..., in get_full_args -> <how>"); ('', '') when the
    caller is no other package."""
    if not c.called_by_package:
        return "", ""
    assert c.caller is not None and c.caller_own is not None
    return (f", called by {possessive(c.caller_name)} {func_of(c.caller)}",
            f"caller: {where(c.caller)} -> {c.caller_own.how}")


def class_owner(path: str, owned: list[tuple[Frame, Owner | None]], snapshot: Any = None) -> tuple[str, str | None]:
    """Who defines the exception class `path` (its module's top-level package): (its name, its component or None);
    ('', None) for a built-in exception. The standard library's modules are Python's; a package's, its distribution
    or the directory under site-packages a frame shows."""
    if "." not in path:
        return "", None
    module = path.rsplit(".", 1)[0]
    top = module.split(".")[0]
    if top in STDLIB_MODULES or top.lstrip("_") in STDLIB_MODULES:
        return f"Python's standard library ({module})", None
    dist = distribution_of_module(module, snapshot)
    if dist is not None:
        return dist, component_of_distribution(dist) or "python"
    for frame, own in owned:
        m = _INSTALLED.search(frame.path.replace("\\", "/"))
        if own is not None and m and m.group("top") == top:
            return top, own.component
    return f"the module {module}", None


def _defined(path: str, who: str) -> str:
    return f"The exception class {path} is " + (f"defined by {who}." if who else "a built-in exception.")


def raised_unread(ev: Event, owned: list[tuple[Frame, Owner | None]], snapshot: Any = None) -> Attribution | None:
    """A failure's traceback that no signature and no other rule reads (an exception class outside the ones that
    say "a value was rejected", a library's class raised while another package's frame is innermost, a package no
    table names): where it was raised, the function called into that code and who called it — a place to read, not
    a cause. Not when a signature matched the event, even a class one (torchrun's ChildFailedError is a knock-on);
    not for a stop the process was told to make (`_STOPS`), nor for a traceback the log shows as handled (logged at
    warning / info level, or CPython's `Exception ignored in:`): the process went on."""
    if ev.kind != "python" or not ev.frames or not ev.exc_type or ev.facts.get("unfinished") \
            or ev.facts.get("stack_dump") or ev.facts.get("handled") or ev.signature is not None:
        return None
    exc = ev.exc_type
    path = ev.facts.get("exception_path") or exc
    if exc in _STOPS:
        return None
    last = ev.frames[-1]
    c = crossing(owned)
    cls_said, cls_comp = class_owner(path, owned, snapshot)
    below = ""
    if c is None:
        # every frame is the interpreter's own library (or generated code): no package, no caller
        read = f"{where(last)} -> Python's standard library"
        return Attribution(
            "exception-in-traceback", Severity.ERROR, _comps(cls_comp, "python", "config"),
            f"{exc} raised in Python's standard library ({func_of(last)})",
            f"No signature or rule knows this exception; its traceback says where it was raised. Read: {read}. "
            f"{_defined(path, cls_said)} This is where to read, not a diagnosis.",
            f"Read the message with the frame named ({where(last)}): what the program passed to it is what failed; "
            "the frames above it say which code passed it.",
            SOURCE, read)
    if last is not c.frame:
        below = f" (below it, {where(last)}: Python's standard library)"
    if c.own is None:
        here = "the job's own code"
        read = f"{where(c.frame)} -> no installed distribution or Ascend package owns it: the job's own code{below}"
        comps = _comps(cls_comp, "config", "model")
    else:
        here = f"{possessive(c.name)} code"
        read = f"{where(c.frame)} -> {c.own.how}{below}"
        comps = _comps(c.own.component, cls_comp, c.caller_own.component if c.called_by_package and c.caller_own
                       else None, "config")
    into = f"{here} ({entered(c)})" if c.own is None else f"{possessive(c.name)} {entered(c)}"
    # the class as the log names it when the standard library defines it (`_csv.Error`); a package's class with its
    # package when that is not the one that raised (jinja2's TemplateError raised in transformers' code)
    title_cls = (path if cls_said.startswith("Python's") else exc if cls_comp is None or cls_said == c.name
                 else f"{possessive(cls_said)} {exc}")
    if c.called_by_package:
        by, caller_read = caller_said(c)
        title = f"{title_cls} raised in {into}{by}"
        called = f"; {caller_read}"
        who = c.caller_name
    elif c.caller is not None:
        title = f"{title_cls} raised in {into}, called from the job's own code ({func_of(c.caller)})"
        called = f"; caller: {where(c.caller)} (the job's own code)"
        who = "the job's own code"
    else:
        title = f"{title_cls} raised in {into}"
        called, who = "", ""
    entry = f"; entered at {where(c.entry)}" if c.caller is not None and c.entry is not c.frame else ""
    detail = (f"No signature or rule knows this exception; its traceback says where it was raised: the innermost "
              f"frame outside the standard library (or the call there into native code, which has no Python frame). "
              f"Read: {read}{entry}{called}. {_defined(path, cls_said)} This is where to read, not a diagnosis.")
    if c.own is None:
        fix = (f"Read the message with the job's own code at {where(c.frame)}: fix that code, or the data or "
               "configuration value it was reading.")
    elif who:
        assert c.caller is not None
        fix = (f"Read the message with {possessive(c.name)} code at {where(c.frame)}: {c.name} could not do what "
               f"{who} asked of it at {where(c.caller)} — check the value or input {who} passed on, and that "
               f"{c.name} is the release {who} was written for (doctor check compares the installed versions with "
               "the stack profile); search the message in both packages' issues.")
    else:
        fix = (f"Read the message with {possessive(c.name)} code at {where(c.frame)}: check the value or input it "
               f"was given, and that {c.name} is the release the stack profile pins (doctor check); search the "
               f"message in {possessive(c.name)} issues.")
    return Attribution("exception-in-traceback", Severity.ERROR, comps, title, detail, fix, SOURCE,
                       f"{read}{entry}{called}",
                       extra={"raised_in": c.name or "the job's own code", **({"caller": who} if who else {})})
