"""Attribution: name the component that ships what an error event names.

An engineer reads a log by asking which package ships the thing that failed: the frame, the file, the library,
the module, the code. Signatures know specific causes; attribution explains the rest at the class level, with the
ownership table the whole doctor shares (`doctor.knowledge.ownership`: module -> distribution -> component,
file path / shared library / header -> the package that ships it):

* a traceback frame's path -> its distribution (`site-packages/<top>/`, an editable tree a snapshot names, a
  source checkout whose directory is a package's import name) or the Ascend install tree (cann / kernels / nnal /
  driver); stdlib frames are skipped;
* a shared library or header -> the package that ships it; an undefined symbol in a package's own library -> that
  package against what it was built with;
* the module of a ModuleNotFoundError -> the distribution that provides it (a missing *submodule* of an installed
  package is a version mismatch);
* an API mismatch at a frame boundary (TypeError unexpected / missing argument, AttributeError on a module or
  class, ImportError "cannot import name X from Y") -> the caller's and the callee's distributions, as a version
  mismatch ("align A with B"). The callee is the package the error is raised in (the innermost frame's, or the
  module's); the caller is the first frame outwards that another distribution owns: the last boundary crossed.
  When every frame is one package's there is no boundary: that package's own parts disagree (never "align A
  with A");
* an exception raised inside a package's own code -> that package, with the configuration that fed it, and the
  package whose frame called into it when that is another (`doctor.explain.boundary`: MindSpeed's get_full_args
  calling Megatron's get_args); raised in the user's own code (outside every distribution) -> config / user code;
* a failure's traceback that nothing else reads (an exception class outside the checked ones, a library no table
  names) -> where it was raised and who called, as such (`doctor.explain.boundary.raised_unread`);
* a torch operator missing from its namespace (`'_OpNamespace' '_C_ascend' object has no attribute 'op'`) -> the
  package that registers that namespace (`doctor.knowledge.ownership.owner_of_op_namespace`), not torch, whose
  `torch/_ops.py` only raises it; with the caller across the boundary when a frame says who called;
* a CANN / HCCL error code -> the component its module part names (`doctor.explain.codes`); pip's "no matching
  distribution" -> the package it names.

Each `Attribution` says what it read (`evidence["read"]`: the frame, path, library, module or code). Pure logic.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from doctor.explain.attributed import Attribution
from doctor.explain.attributed import components as _comps
from doctor.explain.boundary import STDLIB_MODULES, caller_said, crossing, entered, possessive, raised_unread
from doctor.explain.boundary import where as _where
from doctor.explain.classes import Class, exception_class, line_class
from doctor.explain.codes import owner_of_code, owner_of_npu_err
from doctor.explain.events import Event, Frame
from doctor.explain.lexicon import FAILURE as FAILURE_WORDS
from doctor.explain.lexicon import components_named
from doctor.knowledge.ownership import (
    NAMESPACE_PACKAGE_SOURCE,
    Owner,
    ascend_build_of_module,
    component_of_distribution,
    distribution_of_module,
    owner_of_header,
    owner_of_library,
    owner_of_op_namespace,
    owner_of_path,
    sets_version_attribute,
)
from doctor.report import Severity

SOURCE = "https://docs.python.org/3.11/library/traceback.html"
OWNERSHIP_SOURCE = "https://packaging.python.org/en/latest/specifications/recording-installed-packages/"
TRANSFORMERS_MODULES = "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/utils/hub.py"
# A frame in the interpreter's own library or generated code belongs to no package; a notebook cell's pseudo-file
# (`<ipython-input-3-…>`, IPython's `<ipython In[3]>` as the event reader names `Cell In[3]`) is the job's own code.
_STDLIB = re.compile(r"(?:^<(?!ipython[ -])[^>]*>$|/lib/python3(?:\.\d+)?/(?!site-packages/|dist-packages/)[^/]+(?:/[^/]+)?$|"
                     r"^<frozen |/lib/python3\.\d+/(?:importlib|concurrent|multiprocessing|asyncio|runpy|subprocess)"
                     r"(?:/|\.py))")
# Exceptions that say "the program was given a value it does not accept" (raised by a package: fed by the config).
_CHECK_TYPES = frozenset({"ValueError", "KeyError", "AssertionError", "TypeError", "IndexError", "NotImplementedError",
                          "FileNotFoundError", "RuntimeError", "AttributeError", "StopIteration", "ZeroDivisionError",
                          # the interpreter's own errors of the code in the frame (a misspelt name, a local used
                          # before it is assigned: https://docs.python.org/3/library/exceptions.html#NameError)
                          "NameError", "UnboundLocalError"})
# A package's native library that misses a symbol was built against another release of what it links to.
_LINKS_AGAINST = {"torch-npu": "torch", "vllm-ascend": "torch-npu", "nnal": "cann", "torch": "system",
                  "vllm": "torch", "transformer-engine": "torch", "mindspeed": "torch-npu"}



# Ray unpacks a job's runtime_env working_dir under <temp>/session_*/runtime_resources/working_dir_files/_ray_pkg_<hash>/
# (ray/_private/ray_constants.py DEFAULT_RUNTIME_ENV_DIR_NAME, ray/_private/runtime_env/working_dir.py): the path holds
# a directory named `ray` (/tmp/ray), but the files are the job's own.
_RAY_WORKING_DIR = "/runtime_resources/working_dir_files/"


def checkout_roots(frames: list[Frame]) -> frozenset[str]:
    """The directories a traceback shows to be source checkouts rather than packages: one named like an import name
    that holds a package directory of the same name (`/work/verl/verl/workers/x.py`: /work/verl is the checkout, the
    package is /work/verl/verl). Another top-level directory in such a checkout is a package of its own
    (`/work/verl/megatron/training/x.py` is megatron's, put on sys.path with verl's checkout), not the checkout's."""
    roots: set[str] = set()
    for frame in frames:
        parts = frame.path.replace("\\", "/").split("/")
        for i, seg in enumerate(parts[:-2]):
            if seg.isidentifier() and parts[i + 1] == seg:
                roots.add("/".join(parts[: i + 1]))
    return frozenset(roots)


def frame_owner(frame: Frame, snapshot: Any = None, roots: frozenset[str] = frozenset()) -> Owner | None:
    """The package a frame's file belongs to; None for user code; an Owner with component "stdlib" is never
    returned: stdlib frames are skipped by the callers (`is_stdlib`). `roots`: the source checkouts the traceback
    shows (`checkout_roots`), whose name is not the package of the files below them."""
    path = frame.path.replace("\\", "/")
    if _RAY_WORKING_DIR in path:
        return None  # the job's own code, as Ray copied its runtime_env working_dir (not a source tree of ray)
    own = owner_of_path(frame.path, snapshot)
    if own is not None:
        return own
    if "/transformers_modules/" in path:
        # a model repository's own code that transformers loaded with trust_remote_code: it copies the repo's .py
        # files under HF_MODULES_CACHE/transformers_modules/ (transformers 5.24 utils/hub.py,
        # TRANSFORMERS_DYNAMIC_MODULE_NAME; dynamic_module_utils.py)
        return Owner("model", None, f"{path.split('/transformers_modules/', 1)[0]}/transformers_modules/ -> the model "
                     f"repository's own code (trust_remote_code) ({TRANSFORMERS_MODULES})")
    # A source checkout (`/workspace/verl/verl/trainer/x.py`, `vllm/model_executor/...`): a directory named like a
    # package's import name, with the file under it.
    parts = frame.path.replace("\\", "/").split("/")
    for i, seg in enumerate(parts[:-1]):
        if parts[i + 1] != seg and "/".join(parts[: i + 1]) in roots:
            continue  # a checkout holding this file's package as a directory of its own: the package is below
        dist = distribution_of_module(seg, snapshot) if seg.isidentifier() else None
        if dist is not None:
            comp = component_of_distribution(dist) or "python"
            return Owner(comp, dist, f"{'/'.join(parts[: i + 1])}/ -> {dist} (a source tree named like its package)")
        # a git checkout is named like its repository, which for the stack's packages is the distribution's name
        # (`/home/vllm-ascend/csrc/...`, `/work/torch-npu/...`)
        named = component_of_distribution(seg) if "-" in seg else None
        if named is not None and named != "python":
            return Owner(named, seg, f"{'/'.join(parts[: i + 1])}/ -> {seg} (a source checkout named like the "
                                    "distribution)")
    return None


def is_stdlib(frame: Frame) -> bool:
    if frame.path == "<stdin>" or (frame.path == "<string>" and frame.func == "<module>"):
        return False  # the job's own code: a script piped to `python -`, or `python -c` (traceback: `File "<string>",
        # line N, in <module>`); a generated function (`<string>` in dataclasses' `__init__`) stays the interpreter's
    return bool(_STDLIB.search(frame.path.replace("\\", "/")))


def _frames_with_owners(ev: Event, snapshot: Any) -> list[tuple[Frame, Owner | None]]:
    roots = checkout_roots(ev.frames)
    return [(f, frame_owner(f, snapshot, roots)) for f in ev.frames if not is_stdlib(f)]


def attribute(ev: Event, snapshot: Any = None) -> Attribution | None:
    """What the event's frames, paths, libraries, modules or codes say about who ships the failure."""
    for rule in (_warning, _oom_killed, _op_namespace, _api_mismatch, _module_missing, _version_node, _library, _symbol_version, _symbol, _header, _compile_file, _allocator, _dcmi, _hccl_code, _code, _pip, _typed_class, _hang, _named_wait,
                 _raised_in, _exception_class, _extension, _named_in_text, _message_owner, _checked_class,
                 _line_class, _os_class, _names_component, _user_raised, _raised_unread):
        got = rule(ev, snapshot)
        if got is not None:
            # a printed warning is not a failure by itself, whoever owns it (Event.printed_warning)
            severity = Severity.WARNING if ev.printed_warning and got.severity == Severity.ERROR else got.severity
            return Attribution(**{**got.__dict__, "severity": severity, "line": ev.line, "text": ev.text,
                                  "time": ev.time})
    return None


# -- rules, most specific first

# The classes an exception's type defines more precisely than the package it was raised in (a network error raised
# inside requests is the network's, not requests'); the others give way to ownership.
_TYPED_FIRST = frozenset({"network-error", "collective-backend-error", "installed-version-conflict", "versions-disagree",
                          "device-out-of-memory",
                          # classes whose wording names their cause (doctor.explain.classes._message_class)
                          "operator-missing-from-cann", "static-tls-exhausted", "device-initialised-before-fork",
                          "spawn-without-main-guard", "numpy-abi-mismatch", "package-version-required",
                          "package-asked-for", "system-library-missing", "config-rejected", "operator-not-registered", "operator-dtype-unsupported",
                          "python-too-old"})


def _from_class(cls: Class, read: str) -> Attribution:
    return Attribution(cls.id, cls.severity, cls.components, cls.title, cls.detail, cls.fix, cls.source, read)


def _class_of(ev: Event) -> Class | None:
    if ev.kind != "python" or not ev.exc_type:
        return None
    return exception_class(ev.exc_type, ev.facts.get("exception_path", ev.exc_type), ev.facts.get("message", ""),
                           bool(ev.frames))


def _typed_class(ev: Event, snapshot: Any) -> Attribution | None:
    cls = _class_of(ev)
    if cls is None or cls.id not in _TYPED_FIRST:
        return None
    return _from_class(cls, f"the exception {ev.facts.get('exception_path', ev.exc_type)} -> {cls.id}")


def _extension(ev: Event, snapshot: Any) -> Attribution | None:
    """A loader naming the extension / plugin it could not load (doctor.explain.loaders): that package."""
    if ev.kind not in ("python", "log", "failure", "text"):
        return None
    from doctor.explain.loaders import extension_named

    return extension_named(ev.facts.get("message") or ev.text, snapshot)


def _message_owner(ev: Event, snapshot: Any) -> Attribution | None:
    """Who writes this text: the package whose source raises or logs the message (`doctor.explain.messages`; its
    table is read only when an event gets this far)."""
    if ev.kind not in ("python", "log", "failure"):
        return None
    from doctor.explain.messages import attribute_message

    return attribute_message(ev)


def _checked_class(ev: Event, snapshot: Any) -> Attribution | None:
    cls = _class_of(ev)
    if cls is None or cls.id in _TYPED_FIRST:
        return None
    return _from_class(cls, f"the exception {ev.facts.get('exception_path', ev.exc_type)} -> {cls.id}")


LAST_RESORT_ID = "error-line-names-component"
_SECOND = ((re.compile(r"not found|no such|not exist", re.I), "config"),
           (re.compile(r"time(?:d)? ?out|times out|refused|unreachable|lost", re.I), "network"),
           (re.compile(r"denied|errno", re.I), "system"))


def _names_component(ev: Event, snapshot: Any) -> Attribution | None:
    """The last resort: a plain line stating a failure that names a component's daemon, tool, library, variable,
    chip or module (`doctor.explain.lexicon`). Kept only when nothing else in the log is an error."""
    if ev.kind not in ("failure", "python", "log") or ev.frames or ev.facts.get("level") == "warning":
        return None
    # an exception with no frame is read by its message (its type names nothing a component ships)
    named = components_named(ev.text if ev.kind == "failure" else ev.facts.get("message", ""))
    if ev.kind == "log" and not FAILURE_WORDS.search(ev.facts.get("message", "")):
        return None  # a logged error line that states no failure is not read by its names
    if not named:
        return None
    comps = [c for c, _ in named[:2]]
    if len(comps) == 1:
        comps.append(next((c for rx, c in _SECOND if rx.search(ev.text)), "config"))
    read = "; ".join(r for _, r in named[:2])
    first = comps[0]
    return Attribution(
        LAST_RESORT_ID, Severity.ERROR, _comps(*comps),
        f"A failure line names {first}: start there",
        f"No signature, traceback, library or code explains the log. Its line \"{ev.text[:160]}\" states a failure "
        f"and names what {first} ships ({read}). This is where an engineer starts reading, not a diagnosis.",
        f"Read {first}'s own log and documentation for this message; check {first}'s version against the stack "
        "profile (doctor check) and the setting the line names.",
        OWNERSHIP_SOURCE, read)


WARNINGS_SOURCE = "https://docs.python.org/3/library/warnings.html#warnings.formatwarning"


def _warning(ev: Event, snapshot: Any) -> Attribution | None:
    """`<file>.py:<line>: <Category>: <message>`: a Python warning, owned by the package whose file issued it."""
    if ev.kind != "warning":
        return None
    path, cat = ev.facts["path"], ev.facts["category"]
    frame = Frame(path, 0, "")
    if is_stdlib(frame):
        return None
    own = frame_owner(frame, snapshot)
    who = (own.distribution or own.component) if own is not None else "the job's own code"
    comps = _comps(own.component, "config") if own is not None else ("config", "model")
    later = cat in ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")
    read = f"{path} -> {own.how}" if own is not None else f"{path} -> no installed package owns it"
    return Attribution(
        "warning-from-package", Severity.WARNING, comps,
        f"{who} warns ({cat}): not a failure by itself",
        f"A {cat} printed by {who}: {ev.facts['message'].rstrip('.')}. A warning does not stop the run; it matters "
        "only when the "
        "run then fails on what it warns about" + (" (a deprecated use that a later release removes)." if later
                                                   else "."),
        ("Nothing to change if the run went on; otherwise, or before upgrading " + who + ", change the use the "
         "warning names." if later else f"Nothing to change if the run went on; otherwise act on what {who} warns "
         "about (its message names the setting or input)."),
        WARNINGS_SOURCE, read)


def _line_class(ev: Event, snapshot: Any) -> Attribution | None:
    if ev.kind not in ("text", "build", "python", "log") or (ev.kind == "log" and ev.facts.get("level") != "error"):
        return None
    # an exception's message read like an error line (`RuntimeError: connect() timed out` is the network's)
    cls = line_class(ev.text if ev.kind not in ("python", "log") else f"error: {ev.facts.get('message', '')}")
    if cls is None:
        return None
    return _from_class(cls, f"the error line's own words -> {cls.id}")


def _os_class(ev: Event, snapshot: Any) -> Attribution | None:
    """The class the operating system or a program's convention gives the line (doctor.explain.osclasses): an
    errno, a program's own error line, a program not found or not on PATH, a timeout setting named; an NPU
    hardware unit's failure named in one identifier (doctor.explain.npu_units); a memory budget logged negative
    (doctor.explain.memory_budget); a process killed by a signal whose cause the system defines."""
    if ev.kind not in ("text", "python", "log", "failure", "signal") or ev.signature is not None:
        return None  # a class signature that matched the line (permission-denied, path-not-found) says it already
    from doctor.explain.memory_budget import budget_class
    from doctor.explain.npu_units import unit_class
    from doctor.explain.osclasses import os_class
    from doctor.explain.pipclasses import pip_class

    text = ev.text if ev.kind in ("text", "failure", "signal") else ev.facts.get("message", "")
    cls = os_class(text) or unit_class(text) or budget_class(text) or pip_class(text)
    if cls is None or (ev.kind == "log" and ev.facts.get("level") != "error" and cls.severity is Severity.ERROR):
        return None
    return _from_class(cls, f"the error line's own words -> {cls.id}")


def _api_mismatch(ev: Event, snapshot: Any) -> Attribution | None:
    f = ev.facts
    etype = f.get("exception")
    if f.get("class") == "NoneType":
        return None  # an attribute read on None (types.NoneType): a value never set, no package's API (_raised_in)
    owned = _frames_with_owners(ev, snapshot)
    if etype in ("ImportError", "AttributeError") and f.get("module") and f.get("name"):
        callee = distribution_of_module(f["module"], snapshot)
        if callee is None:
            return None
        callee_comp = component_of_distribution(callee) or "python"
        if etype == "ImportError" and f.get("path") == "unknown location":
            return _shadowed(f["module"], f["name"], callee, callee_comp)
        if etype == "AttributeError" and f["name"] == "__version__" and sets_version_attribute(f["module"]):
            return _unversioned(f["module"], callee, callee_comp)
        if etype == "ImportError" and f.get("circular") and (got := _shadowed_by_file(f, callee, callee_comp, snapshot)):
            return got
        caller = _caller(owned, exclude=callee)
        what = (f"cannot import name '{f['name']}' from '{f['module']}'" if etype == "ImportError"
                else f"module '{f['module']}' has no attribute '{f['name']}'")
        read = f"{what} -> {f['module'].split('.')[0]} is shipped by {callee}"
        return _mismatch(callee, callee_comp, caller, read, f"{f['module']}.{f['name']}")
    if etype == "TypeError" and "call" in f and owned and (got := _called_on_the_line(ev, owned, snapshot)) is not None:
        return got
    if etype == "TypeError" and "call" in f and owned:
        # A call that does not fit the callee's signature fails at the call site, or in the callee's own wrapper
        # that passes the arguments on (vllm's LLM(**kwargs) -> EngineArgs(**kwargs)): the innermost frame's
        # package is the one called; the caller is across the last boundary into it.
        if (got := _at_boundary(owned, f.get("call") or "a call")) is not None:
            return _named_class_outside(ev, owned, snapshot) or got
    if etype == "AttributeError" and f.get("class") and owned:
        api = f"{f['class']}.{f['name']}"
        if (got := _at_boundary(owned, api)) is not None:
            return _known_missing_api(owned, api) or _named_class_outside(ev, owned, snapshot, api) or got
    return _class_api(ev, owned, snapshot)


# torch/_ops.py: `'_OpNamespace' '<ns>' object has no attribute '<op>'` (torch 2.13.0 wheel, _OpNamespace.__getattr__)
_OP_MISSING = re.compile(r"'_OpNamespace' '(?P<ns>\w+)' object has no attribute '(?P<op>\w+)'")


def _op_namespace(ev: Event, snapshot: Any) -> Attribution | None:
    """An operator missing from `torch.ops.<ns>`: torch raises the error, but the operator is the package's that
    registers the namespace (its compiled library not built or not loaded, or a release without that operator).
    A frame of another distribution outside the registering one is the caller: the two releases do not match."""
    if ev.kind not in ("python", "log", "failure"):
        return None
    m = _OP_MISSING.search(ev.facts.get("message") or ev.text)
    if m is None:
        return None
    own = owner_of_op_namespace(m.group("ns"))
    if own is None:
        return None
    dist = own.distribution or own.component
    op = f"torch.ops.{m.group('ns')}.{m.group('op')}"
    owned = [(f, o) for f, o in _frames_with_owners(ev, snapshot) if o is None or o.distribution != "torch"]
    caller = _caller(owned, exclude=dist)
    read = f"{m.group('op')} in {own.how}"
    if caller is not None:
        got = _mismatch(dist, own.component, caller, read, op)
        return replace(got, detail=got.detail + f" The operator is looked up in {dist}'s compiled library: if that "
                       "library was not built or not loaded, no release of the caller finds it.")
    return Attribution(
        "api-version-mismatch", Severity.ERROR, _comps(own.component, "python"),
        f"{op} is not registered: {dist}, which registers torch.ops.{m.group('ns')}, does not provide it",
        f"torch raised the error, but it only looks the operator up: {dist} registers the {m.group('ns')} namespace "
        f"from its compiled library. Either that library was not built or not loaded in this process (a source install "
        f"without its custom operators, an import that did not run), or the installed {dist} release has no "
        f"{m.group('op')} (the calling code was written for another release). Read: {read}.",
        f"Check that {dist}'s compiled operators are installed and imported (reinstall {dist} from the wheel or "
        f"rebuild it with its custom operators), and that {dist} is the release the calling code and the stack "
        "profile pin (doctor check compares the versions).",
        OWNERSHIP_SOURCE, read)


# CPython's import_from (Python/ceval.c) prints "(unknown location)" when the module has no __file__: a namespace
# package (PEP 420), i.e. a directory of that name without __init__.py found on sys.path before the installed package
IMPORT_FROM_SOURCE = "https://github.com/python/cpython/blob/v3.11.0/Python/ceval.c"


def _shadowed(module: str, name: str, dist: str, comp: str) -> Attribution:
    """`cannot import name X from 'vllm' (unknown location)`: what Python imported as vllm is no installed package
    but a bare directory (a source checkout or a folder of that name in the working directory)."""
    top = module.split(".")[0]
    read = (f"cannot import name '{name}' from '{module}' (unknown location) -> {module} has no file: a namespace "
            f"package, not the installed {dist}")
    return Attribution(
        "package-shadowed-by-directory", Severity.ERROR, _comps(comp, "env"),
        f"'{top}' was imported from a bare directory, not the installed {dist}",
        f"Python prints '(unknown location)' for a module without a file: it found a directory named {top} with no "
        f"__init__.py on sys.path (the working directory, a source checkout, PYTHONPATH) before any installed {dist}, "
        f"or {dist} is not installed at all. No release of {dist} is involved. Read: {read}.",
        f"Run from another directory (or rename the folder named {top}), remove it from PYTHONPATH, and check that "
        f"`python -c \"import {top}; print({top}.__file__)\"` shows the installed {dist}.",
        IMPORT_FROM_SOURCE, read)


def _unversioned(module: str, dist: str, comp: str) -> Attribution:
    """`module 'vllm' has no attribute '__version__'`: every release of vllm sets it in its __init__, so what Python
    imported as vllm did not run that __init__ — a bare directory named vllm (a namespace package) or a broken
    install; no release of vllm or of its caller is involved."""
    got = _shadowed(module, "__version__", dist, comp)
    read = (f"module '{module}' has no attribute '__version__' -> every {dist} release sets it in "
            f"{module}/__init__.py ({sets_version_attribute(module)}): the imported {module} did not run it")
    return replace(
        got, title=f"'{module}' was not imported from the installed {dist} (it has no __version__)",
        detail=(f"{dist} sets __version__ in its own __init__.py, so no installed release lacks it: Python imported "
                f"something else as {module} — a directory named {module} without __init__.py (a namespace package, "
                f"PEP 420: the working directory, a source checkout, PYTHONPATH) found before the installed {dist}, "
                f"or a {dist} install without its package files. No release of {dist} is involved. Read: {read}."),
        source=NAMESPACE_PACKAGE_SOURCE, read=read)


def _shadowed_by_file(f: dict[str, str], dist: str, comp: str, snapshot: Any) -> Attribution | None:
    """`cannot import name X from partially initialized module 'datasets' (most likely due to a circular import)
    (/work/datasets.py)`: the module being imported is a file no installed package owns, named like the package
    (the job's own `datasets.py` in the working directory): it imported itself instead of the installed one."""
    path = f.get("path", "")
    top = f["module"].split(".")[0]
    if not path or path == "unknown location" or frame_owner(Frame(path, 0, ""), snapshot) is not None:
        return None
    stem = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if stem not in (f"{top}.py", top, "__init__.py") or (stem == "__init__.py" and f"/{top}/" not in path):
        return None
    read = f"partially initialized module '{f['module']}' ({path}) -> a file of the job's own named like {dist}'s {top}"
    return Attribution(
        "package-shadowed-by-file", Severity.ERROR, _comps("config", comp),
        f"The job's own {stem} shadows the installed {dist}",
        f"Python was importing '{top}' from {path}, which no installed package owns: a file of the job named like "
        f"{dist}'s module, found first on sys.path (the script's directory comes first). Importing {top} from it "
        f"imported the file itself, which is why its names are not there (Python calls it a circular import). "
        f"Read: {read}.",
        f"Rename {path} (and delete its __pycache__), or run from another directory, so that `import {top}` finds "
        f"the installed {dist}.", IMPORT_FROM_SOURCE, read)


# The OOM killer's own words: the kernel's "Out of memory: Killed process N", cgroup / Ray "OOM kill", "oom-kill"
# (never a setting's name: `vm.oom_kill_allocating_task`, `oom_kill_disable`)
_OOM_KILLED = re.compile(r"Out of memory: Kill|\boom[- ]kill\b|\boom_kill\b(?!_)|\bOOM kill\b")
OOM_SOURCE = "https://github.com/torvalds/linux/blob/v6.6/mm/oom_kill.c"


def _oom_killed(ev: Event, snapshot: Any) -> Attribution | None:
    """A process the OOM killer ended (the kernel's, a cgroup's, Ray's memory monitor): the host's memory ran out —
    not the NPU's. What used it is the job's configuration (workers, batch, offload, data loading)."""
    if ev.kind != "signal" or not _OOM_KILLED.search(ev.text):
        return None
    read = f"the line names the OOM killer ({ev.facts.get('signal', 'OOM kill')}) -> host memory"
    return Attribution(
        "host-oom-killed", Severity.ERROR, ("system", "config"),
        "A process was killed because the host ran out of memory (OOM killer)",
        "The kernel's (or a cgroup's / Ray's) out-of-memory killer ended a process: the host's RAM, or the container's "
        "memory limit, was used up. Device (NPU) memory is not involved. Read: " + read + ".",
        "Lower what the job keeps in host memory (fewer workers or data-loader processes, smaller batches, no CPU "
        "offload of optimizer / parameters), or raise the container's memory limit; `dmesg` / the cgroup's memory "
        "events say which process was killed.",
        OOM_SOURCE, read)


def _called_on_the_line(ev: Event, owned: list[tuple[Frame, Owner | None]], snapshot: Any = None) -> Attribution | None:
    """The innermost frame's own source line constructs a class another distribution defines
    (`AsyncEngineArgs(**engine_args)` in vllm-ascend's code): a call that does not fit its signature fails at the
    call site, before the callee runs, so that class's package is the one called and the frame's package the caller.
    A class of the frame's own package (vllm's `LLM` passing its kwargs on to `EngineArgs`) is left to the boundary
    rule; so is a model implementation (a class under a `models/` folder of the one package defining it). A class
    several packages define is the one of them the frame's distribution declares it runs with
    (doctor.explain.declared), when it declares exactly one: that package's API, also under its `models/`
    (megatron/core/models/gpt/gpt_model.py's GPTModel, which verl declares and constructs)."""
    f = ev.facts
    code = f.get("code", "")
    call = f.get("call") or ""
    cls = _called_class(call) or (_constructed(code) if call == "__init__" else "")
    frame, own = owned[-1]
    if not cls or own is None or not re.search(rf"(?<![\w]){re.escape(cls)}\s*\(", code):
        return None
    from doctor.explain.declared import the_one_declared
    from doctor.explain.messages import class_owners

    candidates = _reached_through(class_owners(cls), cls, code)
    owners, declared = the_one_declared(candidates, _key(own), snapshot)
    if len(owners) != 1 or ("/models/" in owners[0][1] and len(candidates) == 1):
        return None
    origin, path = owners[0]
    if origin.distribution == _key(own):
        return None
    caller = (_key(own), own.component, f"{_where(frame)} -> {own.how}")
    read = f"the failing line `{code}` constructs {cls} -> defined by {_defined_in(origin, path)}{_declared(cls, declared)}"
    return _mismatch(origin.distribution, origin.component, caller, read, f"{cls}.__init__")


def _called_class(call: str) -> str:
    """The class a call's name is qualified by (`GPTModel.__init__` -> GPTModel); '' for a bare name."""
    parts = call.split(".")
    return parts[-2] if len(parts) >= 2 else ""


def _defined_in(origin: Any, path: str) -> str:
    return f"{origin.distribution} ({path}, read at {origin.distribution} {origin.version})"


def _declared(cls: str, declared: str) -> str:
    """What doctor.explain.declared read to pick one of several packages defining `cls` ('' when it did not)."""
    return f"; of the packages defining {cls}, {declared}" if declared else ""


def _named_class_outside(ev: Event, owned: list[tuple[Frame, Owner | None]], snapshot: Any,
                         member: str = "") -> Attribution | None:
    """Every frame is one distribution's, but the call the message names is a class's that distribution does not
    define (`GPTModel.__init__()` raised on verl's `model = model_cls(**kw)`), or the attribute it reads is missing
    from an object of such a class (`member`: `'GDNAttentionMetadataBuilder' object has no attribute
    'aclgraph_support'` in vllm-ascend's code, the class being vLLM's): the class's package is the one called —
    the single package defining it, or the one of several the frames' distribution declares — and the frames'
    distribution the caller, not an inconsistency of its own. None when any frame is another's or the job's."""
    keys = {_key(own) if own is not None else None for _, own in owned}
    frame, own = owned[-1]
    if len(keys) != 1 or own is None or not own.distribution:
        return None
    api = member or ".".join((ev.facts.get("call") or "").split(".")[-2:])
    cls = _called_class(api)
    if not cls[:1].isupper():
        return None
    from packaging.utils import canonicalize_name

    from doctor.explain.declared import the_one_declared
    from doctor.explain.messages import class_owners

    owners = class_owners(cls)
    if not owners or any(canonicalize_name(o.distribution) == canonicalize_name(own.distribution) for o, _ in owners):
        return None
    owners, declared = the_one_declared(owners, own.distribution, snapshot)
    if len(owners) != 1 or ("/models/" in owners[0][1] and not declared):
        return None
    origin, path = owners[0]
    read = (f"the {'attribute' if member else 'call'} {api} names {cls}, which {own.distribution} does not define -> defined by "
            f"{_defined_in(origin, path)}{_declared(cls, declared)}")
    caller = (_key(own), own.component, f"{_where(frame)} -> {own.how}")
    return _mismatch(origin.distribution, origin.component, caller, read, api)


def _class_api(ev: Event, owned: list[tuple[Frame, Owner | None]], snapshot: Any = None) -> Attribution | None:
    """`Trainer.__init__() got an unexpected keyword argument`, `'TransformerConfig' object has no attribute`: no
    package frame says who was called, but the class does — the package that defines a public class of that name
    (`doctor.explain.messages.class_owners`, read from the packages' sources; several packages defining it are all
    named, more than three: nobody; the one of them the calling frame's distribution declares, when it declares
    exactly one — doctor.explain.declared)."""
    f = ev.facts
    etype = f.get("exception")
    code = f.get("code", "")
    if etype == "TypeError":
        api = f.get("call") or ""
        cls = _called_class(api)
        if not cls and api == "__init__" and (built := _constructed(code)):
            cls, api = built, f"{built}.__init__"  # `__init__() got ...`: the class the failing line constructs
    elif etype == "AttributeError" and f.get("class"):
        cls, api = f["class"], f"{f['class']}.{f.get('name', '')}"
    else:
        return None
    cls = cls.rsplit(".", 1)[-1]
    if not cls[:1].isupper():
        return None
    from doctor.explain.declared import the_one_declared
    from doctor.explain.messages import class_owners

    owners = _reached_through(class_owners(cls), cls, code)
    if not owners:
        return None
    declared = ""
    if len(owners) > 1:
        outside = {o.distribution for o, _ in owners}
        nearest = next((own.distribution for _, own in reversed(owned)
                        if own is not None and own.distribution and own.distribution not in outside), None)
        owners, declared = the_one_declared(owners, nearest, snapshot)
    comps = [c for o, _ in owners if (c := o.component) != "python"] or ["python"]
    dists = [o.distribution for o, _ in owners]
    read = f"the class {cls} -> defined by " + "; ".join(_defined_in(o, path) for o, path in owners) + _declared(cls, declared)
    caller = _caller(owned, exclude=dists[0])
    got = _mismatch(dists[0] if len(dists) == 1 else " / ".join(dists), comps[0], caller, read, api)
    if all("/models/" in path for _, path in owners) and not declared:
        # a model implementation (transformers/models/..., vllm/model_executor/models/...): its signature is the
        # model's own, so the mismatch is between the caller and this model's code (not a class the caller
        # declares the package of: that is the package's API)
        return replace(got, components=_comps(comps[0], "model"))
    if len(comps) > 1 and caller is None:
        got = replace(got, components=_comps(*comps, "python"))
    return got


# `x.y.Foo(` in a source line: a call of a CamelCase name (a class), with the module or object it is reached through
_CLASS_CALL = re.compile(r"(?<![\w.])(?P<path>(?:[A-Za-z_]\w*\.)*)(?P<cls>[A-Z]\w*)\s*\(")


def _constructed(code: str) -> str:
    """The class the source line constructs: the innermost (last) `Foo(` of the line, evaluated first."""
    calls = [m.group("cls") for m in _CLASS_CALL.finditer(code)]
    return calls[-1] if calls else ""


def _reached_through(owners: list[tuple[Any, str]], cls: str, code: str) -> list[tuple[Any, str]]:
    """Several packages define the class: the one whose module the source line reaches it through
    (`tensor_parallel.VocabParallelEmbedding(` -> megatron/core/tensor_parallel/...); all of them otherwise."""
    if len(owners) < 2 or not code:
        return owners
    quals = {m.group("path").rstrip(".").rsplit(".", 1)[-1] for m in _CLASS_CALL.finditer(code)
             if m.group("cls") == cls and m.group("path")}
    quals.discard("")
    kept = [(o, path) for o, path in owners
            if any(f"/{q}/" in f"/{path}" or f"/{path}".endswith(f"/{q}.py") for q in quals)]
    return kept or owners


def _key(own: Owner) -> str:
    return own.distribution or own.component


def _at_boundary(owned: list[tuple[Frame, Owner | None]], api: str) -> Attribution | None:
    """The API mismatch at the last boundary crossed: walking out from the innermost frame, the first frame that
    another distribution (or the job's own code) owns made the call into the innermost frame's distribution."""
    frame, own = owned[-1]
    if own is None:
        return None
    callee = _key(own)
    read = f"{_where(frame)} -> {own.how}"
    for outer, outer_own in reversed(owned[:-1]):
        if outer_own is None:
            # the job's own code called the package
            return _mismatch(callee, own.component, None, f"{read}; caller {_where(outer)} (the job's own code)", api)
        if _key(outer_own) != callee:
            caller = (_key(outer_own), outer_own.component, f"{_where(outer)} -> {outer_own.how}")
            return _mismatch(callee, own.component, caller, read, api)
    return _own_inconsistency(callee, own.component, read, api)


def _known_missing_api(owned: list[tuple[Frame, Owner | None]], api: str) -> Attribution | None:
    """Every frame is one distribution's and the class member it reads (`ModelType.encoder_and_decoder` in mbridge's
    code) is one the doctor's table of removed APIs (doctor.knowledge.missing_api, the rows `doctor check` judges
    installed versions by) says that distribution calls on another package that no longer has it in some
    releases: the mismatch is with that package (megatron-core), not inside the caller."""
    from packaging.utils import canonicalize_name

    from doctor.knowledge.missing_api import MISSING_APIS

    if len({_key(own) if own is not None else None for _, own in owned}) != 1:
        return None
    frame, own = owned[-1]
    if own is None or not own.distribution:
        return None
    for row in MISSING_APIS:
        if canonicalize_name(row.package) != canonicalize_name(own.distribution) or row.api.split()[-1] != api:
            continue
        caller = (_key(own), own.component, f"{_where(frame)} -> {own.how}")
        read = f"{api} -> {row.api} ({row.needs} {row.missing}: {row.why})"
        got = _mismatch(row.needs, component_of_distribution(row.needs) or "python", caller, read, api)
        return replace(got, fix=(f"Install a {row.needs} release that still has {api} ({row.needs}{row.missing} "
                                 f"lacks it) alongside {own.distribution}, or a release of {own.distribution} that no "
                                 f"longer uses it; `doctor check` compares the installed pair "
                                 f"(package-calls-missing-api)."),
                       source=row.source.split("; ")[-1])  # the callee's definition that lacks it
    return None


def _own_inconsistency(dist: str, comp: str, read: str, api: str) -> Attribution:
    """Every frame is one package's: no boundary to align across; its own parts (or what it calls without a Python
    frame) disagree."""
    return Attribution(
        "api-version-mismatch", Severity.ERROR, _comps(comp, "python"),
        f"{dist}'s own code makes a call ({api}) that the code it reaches does not accept",
        f"Every frame of the traceback is {dist}'s: its modules are from different releases (a partial upgrade, a "
        f"source tree over the installed wheel, stale files), or a package it calls without a Python frame (a native "
        f"extension, a dependency) is at a release {dist} was not made for. Read: {read}.",
        f"Reinstall {dist} cleanly at the release the stack profile pins (remove any source tree on PYTHONPATH that "
        f"shadows it), and install the dependency versions that release requires (doctor check compares them).",
        OWNERSHIP_SOURCE, read, extra={"callee": dist})


def _caller(owned: list[tuple[Frame, Owner | None]], exclude: str | None) -> tuple[str, str, str] | None:
    """The nearest frame (innermost first) owned by another distribution: (dist, component, what was read)."""
    for frame, own in reversed(owned):
        if own is not None and own.distribution and own.distribution != exclude:
            return own.distribution, own.component, f"{_where(frame)} -> {own.how}"
    return None


def _mismatch(callee: str, callee_comp: str, caller: tuple[str, str, str] | None, read: str,
              api: str) -> Attribution:
    if caller is None:
        return Attribution(
            "api-version-mismatch", Severity.ERROR, _comps(callee_comp, "python"),
            f"The code calls an API of {callee} that the installed {callee} does not have ({api})",
            f"The call was written for another release of {callee}: the name, keyword or argument was added later "
            "or removed. Read: " + read + ".",
            f"Install the {callee} release the calling code was written for (its requirements or the stack profile "
            f"pin it), or change the call to the installed {callee}'s API.",
            OWNERSHIP_SOURCE, read)
    dist, comp, caller_read = caller
    pairs = pinned_pairs(dist, callee)
    pinned = (" The verified stack profiles pin them together as " + "; ".join(f"{dist} {a} with {callee} {b}"
                                                                          for a, b in pairs[:4]) + ".") if pairs else ""
    return Attribution(
        "api-version-mismatch", Severity.ERROR, _comps(callee_comp, comp),
        f"{dist} calls {callee} with an API the installed {callee} does not have: their versions do not match",
        f"{dist} was written against another release of {callee} ({api}). Read: {read}; caller: {caller_read}.",
        f"Align {dist} with {callee}: install the {callee} release this {dist} pins (doctor check compares them with "
        f"the stack profiles), or the {dist} release made for the installed {callee}.{pinned}",
        OWNERSHIP_SOURCE, f"{read}; caller {caller_read}", extra={"caller": dist, "callee": callee})


@lru_cache(maxsize=32)
def pinned_pairs(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """The (a, b) version pairs the shipped stack profiles pin together, newest first (empty when none pins both).
    Imported here: only a reported mismatch reads every profile (and needs `packaging`'s versions)."""
    from doctor.knowledge.profiles import load_profiles
    from doctor.knowledge.versions import parse_pkg_version

    def pin(p: Any, dist: str) -> str | None:
        return p.verl if dist == "verl" else p.pin(dist)

    try:
        profiles = load_profiles()
    except Exception:  # noqa: BLE001 - a broken profile file is `doctor check`'s to report, not explain's
        return ()

    def bare(spec: str) -> str:
        return spec[2:] if spec.startswith("==") else spec

    def key(pair: tuple[str, str]) -> tuple[int, Any]:
        v = parse_pkg_version(pair[0].removesuffix(".*"))
        return (1, v) if v is not None else (0, pair[0])

    pairs = {(bare(x), bare(y)) for p in profiles if (x := pin(p, a)) and (y := pin(p, b))}
    return tuple(sorted(pairs, key=key, reverse=True))


def _module_missing(ev: Event, snapshot: Any) -> Attribution | None:
    f = ev.facts
    mod = f.get("module")
    if not mod or f.get("exception") not in ("ModuleNotFoundError", "ImportError") or "name" in f:
        return None
    dist = distribution_of_module(mod, snapshot)
    if dist is None:
        return None
    comp = component_of_distribution(dist) or "python"
    if "." in mod:
        read = f"No module named '{mod}' -> {mod.split('.')[0]} is shipped by {dist}"
        importer = _importer(ev, snapshot, dist, mod)
        if importer is not None:
            return _mismatch(dist, comp, importer, read, f"module {mod}")
        return Attribution(
            "module-of-package-missing", Severity.ERROR, _comps(comp, "python"),
            f"{dist} is installed without {mod}: a build or release that lacks it",
            f"The package {dist} is importable but has no {mod}: another release (the module was added, moved or "
            "removed), a build without its compiled part, or a source tree shadowing the installed wheel. " + read,
            f"Install the {dist} release the caller needs (or the wheel instead of the source checkout on "
            "PYTHONPATH), then retry.",
            OWNERSHIP_SOURCE, read)
    read = f"No module named '{mod}' -> shipped by {dist}"
    if (alt := ascend_build_of_module(mod)) is not None and alt[0] != dist:
        # the upstream package and its Ascend build install the same import name: on an Ascend host the Ascend
        # build is the one to install
        ascend, where = alt
        read = f"No module named '{mod}' -> shipped by {ascend} (the Ascend build: {where}) or {dist}"
        return Attribution(
            "module-of-package-missing", Severity.ERROR, _comps(component_of_distribution(ascend), comp, "env"),
            f"{mod.split('.')[0]} is not installed in the interpreter that ran: on Ascend it comes from {ascend}",
            f"Python could not import {mod}. Two distributions install it: {ascend}, the Ascend build, and {dist}, "
            f"the upstream one (which has no Ascend backend). Neither is installed in this environment, or another "
            "interpreter ran the job. " + read,
            f"Install {ascend} (the release the stack profile pins; not {dist} from PyPI) into the interpreter that "
            "runs the job.",
            OWNERSHIP_SOURCE, read)
    return Attribution(
        "module-of-package-missing", Severity.ERROR, _comps(comp, "env"),
        f"{dist} is not installed in the interpreter that ran (module {mod})",
        f"Python could not import {mod}, which {dist} provides: it is not installed in this environment (or another "
        "interpreter / virtualenv ran the job). " + read,
        f"Install {dist} (the release the stack profile pins) into the interpreter that runs the job.",
        OWNERSHIP_SOURCE, read)


def _importer(ev: Event, snapshot: Any, dist: str, mod: str) -> tuple[str, str, str] | None:
    """Python names the whole dotted path only when its first part imported: `No module named 'vllm.worker'` says
    vllm is there without `worker`. Imported from another distribution's code (verl's rollout), that code was
    written for a release of vllm that had it: a version mismatch between the two, not a broken vllm. A private
    module (`vllm._C`, a compiled part) stays a build of the package that lacks it, and so does an import by the
    package itself or by the job's own code. The importer is the innermost frame outside the standard library."""
    if mod.rsplit(".", 1)[-1].startswith("_"):
        return None
    owned = _frames_with_owners(ev, snapshot)
    if not owned:
        return None
    frame, own = owned[-1]
    if own is None or not own.distribution or _key(own) == dist:
        return None
    return _key(own), own.component, f"{_where(frame)} -> {own.how}"


def _library(ev: Event, snapshot: Any) -> Attribution | None:
    lib = ev.facts.get("library")
    if not lib or "symbol" in ev.facts:
        return None
    own = _lib_owner(lib, snapshot)
    if own is None:
        return None
    if ev.kind == "build":
        return Attribution(
            "library-of-package-missing", Severity.ERROR, _comps(own.component, "system"),
            f"The linker cannot find {lib}, which {own.component} ships",
            f"Read: {own.how}. The library's directory is not on the linker path, or the release of "
            f"{own.component} installed no longer ships it.",
            f"Install {own.component} (or the release that ships {lib}) and point the build at its lib directory "
            "(source the CANN set_env.sh for CANN libraries).",
            OWNERSHIP_SOURCE, own.how)
    return Attribution(
        "library-of-package-missing", Severity.ERROR, _comps(own.component, "env"),
        f"{lib} cannot be loaded: it is shipped by {own.component}",
        f"Read: {own.how}. The package is not installed, or its library directory is not on the loader path.",
        f"Install {own.component} or put its library directory on LD_LIBRARY_PATH (for Ascend packages: source "
        "their set_env.sh).",
        OWNERSHIP_SOURCE, own.how)


def _lib_owner(lib: str, snapshot: Any) -> Owner | None:
    """A library named with its path belongs to the tree it lies in (nnal/atb/.../libtbe_adapter.so is NNAL's);
    a bare soname to the package whose file list has it."""
    return (owner_of_path(lib, snapshot) if "/" in lib else None) or owner_of_library(lib)


# The C/C++ namespaces and prefixes of the libraries' exported symbols (their public headers: CANN's acl/acl.h,
# aclnn/*.h, hccl/hccl.h, runtime/rt.h; torch's c10/, ATen/, torch/csrc/; torch_npu's c10_npu / at_npu namespaces).
# Itanium mangling spells a namespace N as <len>N: `_ZN3c10` is c10::, `_ZN6at_npu` at_npu::; a const / volatile
# member function puts K / V (and r) between _ZN and the name (`_ZNK6AsdOps3Ops...` is AsdOps::Ops::... const).
# NNAL's libraries (libatb, libasdops, libmki, liblcal: the library table above) export the atb::, AsdOps::, Mki::
# and Lcal:: namespaces. CANN's liberror_manager exports the ErrorManager class its runtime and graph engine report
# errors through (metadef's inc/common/util/error_manager/error_manager.h, ERROR_MANAGER_SOURCE).
_ZN = r"^_ZN[rVK]*\d*"
ERROR_MANAGER_SOURCE = ("https://github.com/Ascend/metadef/blob/1c41992a258579912468b175c78ad58b7a6a405e/inc/common/"
                        "util/error_manager/error_manager.h")
_SYMBOL_OWNERS = (
    (re.compile(_ZN + r"(?:c10_npu|at_npu|torch_npu)|^(?:c10_npu|at_npu|torch_npu)::"), "torch-npu"),
    (re.compile(_ZN + r"(?:c10|at|torch|caffe2)\d|^(?:c10|at|torch)::|^THNN_|^THC"), "torch"),
    (re.compile(_ZN + r"(?:atb|AsdOps|Mki|Lcal|atb_speed)\d|^(?:atb|AsdOps|Mki|Lcal)::"), "nnal"),
    (re.compile(r"^(?:aclnn|aclop|aclrt|acl[A-Z]|Hccl|hccl[A-Z]|rt[A-Z]|ge::|ErrorManager::)|"
                + _ZN + r"(?:ge|ErrorManager)\d"), "cann"),
)
# Python's C API: the interpreter's exported functions and data are Py* / _Py* (C, not mangled; Include/*.h). Only
# such a symbol says an extension was built for another Python; a mangled C++ name never is the interpreter's.
_PY_CAPI = re.compile(r"^_?Py[A-Z_]")


def _symbol_owner(sym: str) -> str | None:
    for rx, comp in _SYMBOL_OWNERS:
        if rx.search(sym):
            return comp
    return None


def _symbol(ev: Event, snapshot: Any) -> Attribution | None:
    sym, lib = ev.facts.get("symbol"), ev.facts.get("library")
    own = _lib_owner(lib, snapshot) if sym and lib else None
    if sym and own is None and (comp := _symbol_owner(sym)) is not None:
        # no library named, or one no table knows (a third-party extension such as flash_attn_2_cuda.so): the
        # symbol's namespace still says whose release it was built against
        where = f"{lib.rsplit('/', 1)[-1]} " if lib else "The code being linked or loaded "
        return Attribution(
            "native-symbol-mismatch", Severity.ERROR, _comps(comp, "system"),
            f"A symbol {comp} exports is missing: the code was built against another release of {comp}",
            f"Read: the symbol {sym} -> {comp} (its namespace / prefix). {where}expects a "
            f"{comp} release that has it; the installed one does not (renamed, moved or not yet there).",
            f"Build against (or install) the {comp} release the code was written for (or the build of the "
            f"extension made for the installed {comp}).",
            OWNERSHIP_SOURCE, f"symbol {sym} -> {comp}" + (f" (in {lib})" if lib else ""))
    if not sym or not lib or own is None:
        return None
    sym_comp = _symbol_owner(sym)
    if sym_comp == own.component and own.component != "python":
        return _mixed_releases(own, sym)
    other = sym_comp or _LINKS_AGAINST.get(own.component) or ("python" if _PY_CAPI.match(sym) else None)
    if other == own.component != "python":
        other = None  # nothing says whose symbol it is: name no component the reading does not show
    if other is None:
        comps = _comps(own.component, "system")
    else:  # a package with no component of its own (flash-attn's extension): the release it was built against first
        comps = _comps(other, own.component) if own.component == "python" else _comps(own.component, other)
    who = own.component if own.component != "python" else (own.distribution or _extension_module(lib) or "python")
    return Attribution(
        "native-symbol-mismatch", Severity.ERROR, comps,
        f"{who}'s native library misses a symbol: it was built for another release of what it links to",
        f"Read: {own.how}; undefined symbol {sym}. The library was compiled against a different release of "
        f"{other or 'a library it links to'} (or of the compiler's C++ runtime) than the one installed.",
        f"Install the {who} build made for the installed {other} (or the {other} release it pairs with)."
        if other else f"Install the {who} build made for the libraries installed beside it; `ldd -r` on "
        "the library names the one it resolves the symbol against.",
        OWNERSHIP_SOURCE, f"{own.how}; undefined symbol {sym}")


# An extension module's file name: the import name, then the interpreter tag (`.cpython-38-x86_64-linux-gnu`,
# `.abi3`) and `.so` (PEP 3149; importlib.machinery.EXTENSION_SUFFIXES).
_EXTENSION_FILE = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?:\.cpython-[^/]*|\.abi3|\.pypy[^/]*)?\.(?:so|pyd)$")


def _extension_module(lib: str | None) -> str | None:
    """The import name of an extension module installed on its own at the top of site-packages
    (`…/dist-packages/transformer_engine_extensions.cpython-38-x86_64-linux-gnu.so` -> transformer_engine_extensions):
    the name that says whose library it is when no table knows the package."""
    if not lib or not re.search(r"/(?:site|dist)-packages/[^/]+$", lib):
        return None
    m = _EXTENSION_FILE.match(lib.rsplit("/", 1)[-1])
    return m.group("name") if m else None


def _mixed_releases(own: Owner, sym: str) -> Attribution:
    """The library and the symbol it misses are one component's (CANN's libruntime.so missing ErrorManager::…, which
    CANN's liberror_manager exports): the loader put together that component's libraries from different releases
    or C++ ABI builds (two installs on LD_LIBRARY_PATH, a version-numbered directory beside `latest`, a partial
    upgrade), not a build against another package."""
    comp = own.component
    return Attribution(
        "native-symbol-mismatch", Severity.ERROR, _comps(comp, "env"),
        f"{comp}'s libraries come from different releases: one misses a symbol another {comp} library exports",
        f"Read: {own.how}; undefined symbol {sym} -> {comp} (its namespace / prefix). The library and the symbol it "
        f"needs are both {comp}'s, so the loader found {comp} libraries of different releases (or C++ ABI builds): "
        f"two {comp} installs on LD_LIBRARY_PATH, a version-numbered directory next to the one set_env.sh names, or "
        "an upgrade that replaced only part of it.",
        f"Use one {comp} install: source only its set_env.sh and drop other {comp} directories from "
        f"LD_LIBRARY_PATH, or reinstall {comp} as one release.",
        ERROR_MANAGER_SOURCE if "ErrorManager" in sym else OWNERSHIP_SOURCE,
        f"{own.how}; undefined symbol {sym} -> {comp}")


DL_LOOKUP = "https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-lookup.c;hb=glibc-2.38"
# The version nodes of the C / C++ runtime (glibc, libstdc++, libgcc): the system's.
_RUNTIME_NODE = re.compile(r"^(?:GLIBC|GLIBCXX|CXXABI|GCC)_\d")


def _symbol_version(ev: Event, snapshot: Any) -> Attribution | None:
    """`undefined symbol: NAME, version NODE` (ld.so's message for a versioned reference, elf/dl-lookup.c): the
    object was linked against a library whose version node NODE has NAME; the library the loader bound at run time
    defines NODE without it, so it is another (older) release of that library, found first on the loader's path.
    The path (env) and the library's owner (the C / C++ runtime's nodes: system), whatever package printed it."""
    node, sym = ev.facts.get("symbol_version"), ev.facts.get("symbol")
    if not node or not sym:
        return None
    own = None if _RUNTIME_NODE.match(node) else _lib_owner(node, snapshot) if ".so" in node else None
    comp = own.component if own is not None else "system"
    what = own.how if own is not None else (f"{node} -> the C / C++ runtime" if _RUNTIME_NODE.match(node)
                                            else f"{node} -> a library no package table knows")
    return Attribution(
        "symbol-version-not-found", Severity.ERROR, _comps("env", comp),
        f"The loader bound another release of the library that defines {node}",
        f"Read: undefined symbol {sym}, version {node} ({what}). The code was linked against a release of that "
        f"library whose {node} interface has {sym}; the copy the loader found first (LD_LIBRARY_PATH, the "
        "system's library directories, another package's bundled copy) is an older release without it.",
        "Find which copy is loaded (ldd on the failing library, or LD_DEBUG=libs) and remove the directory of the "
        "wrong one from LD_LIBRARY_PATH, or install the release of the library the code was built against.",
        DL_LOOKUP, f"undefined symbol {sym}, version {node} -> {what}")


DL_VERSION = "https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-version.c;hb=glibc-2.38"


def _version_node(ev: Event, snapshot: Any) -> Attribution | None:
    """`LIB: version `NODE' not found (required by OBJECT)` (ld.so, elf/dl-version.c): OBJECT was built against a
    release of LIB that defines the interface NODE; the LIB the loader found is older. The C / C++ runtime's nodes
    (GLIBC_, GLIBCXX_, CXXABI_, GCC_) are the system's (its libstdc++ / glibc older than the build's, or an older
    copy in a conda env or a package's lib directory found first); another library's node is its owner's."""
    node = ev.facts.get("version_node")
    if not node:
        return None
    lib = ev.facts.get("version_lib", "")
    runtime = bool(_RUNTIME_NODE.match(node))
    own = None if runtime else _lib_owner(lib or node, snapshot) if ".so" in (lib or node) else None
    comp = own.component if own is not None else "system"
    what = own.how if own is not None else (f"{node} -> the C / C++ runtime (glibc / libstdc++ / libgcc)" if runtime
                                            else f"{node} -> a library no package table knows")
    name = lib.rsplit("/", 1)[-1] if lib else "the library"
    return Attribution(
        "version-node-not-found", Severity.ERROR, _comps(comp, "env"),
        f"{name} is older than the code needs: its version {node} is missing",
        f"Read: version {node} not found ({what}). The code was built against a release of {name} that defines "
        f"{node}; the copy the loader found is older" + (f" ({lib})" if lib else "") + ": the system's, or an older "
        "copy found first (a conda environment's lib, LD_LIBRARY_PATH, a package's bundled copy).",
        f"Put a {name} that has {node} first on the loader's path (the newer system or conda one: "
        f"strings {name} | grep {node.split('_')[0]}_ lists what a copy has), or install a build of the failing "
        "package made for this system.", DL_VERSION, f"version {node} not found -> {what}")


def _header(ev: Event, snapshot: Any) -> Attribution | None:
    header = ev.facts.get("header")
    if not header:
        return None
    own = owner_of_header(header)
    if own is None:
        return None
    return Attribution(
        "header-of-package-missing", Severity.ERROR, _comps(own.component, "system"),
        f"The compiler cannot find {header}, which {own.component} ships",
        f"Read: {own.how}. The include path does not reach it, or the {own.component} release installed moved or "
        "dropped the header.",
        f"Build against the {own.component} release the sources were written for, with its include directory on the "
        "include path (for CANN: source set_env.sh).",
        OWNERSHIP_SOURCE, own.how)


def _compile_file(ev: Event, snapshot: Any) -> Attribution | None:
    path = ev.facts.get("file")
    if ev.kind != "build" or not path:
        return None
    own = owner_of_path(path, snapshot) or owner_of_header(path)
    if own is None:
        return None
    return Attribution(
        "header-of-package-missing", Severity.ERROR, _comps(own.component, "system"),
        f"Native code fails to compile in a file {own.component} ships",
        f"Read: {own.how}. The sources being built expect another release of {own.component}, or the compiler is "
        "not the one it supports.",
        f"Build against the {own.component} release the sources were written for.",
        OWNERSHIP_SOURCE, own.how)


def _allocator(ev: Event, snapshot: Any) -> Attribution | None:
    """An error raised in a caching allocator's allocation function (doctor.explain.raised_at): device memory, ahead
    of the runtime code it carries."""
    text = ev.facts.get("message") or ev.text
    if ev.kind not in ("python", "code", "log", "failure", "text") or "CachingAllocator" not in text:
        return None
    from doctor.explain.raised_at import allocation_failed

    return allocation_failed(text)


def _dcmi(ev: Event, snapshot: Any) -> Attribution | None:
    """A return code of the driver's management interface (doctor.explain.dcmi): the reason it names."""
    code = ev.facts.get("dcmi_code")
    if not code:
        return None
    from doctor.explain.dcmi import attribute_dcmi

    return attribute_dcmi(code)


def _hccl_code(ev: Event, snapshot: Any) -> Attribution | None:
    """An HcclResult torch_npu reports for an HCCL call (doctor.explain.hccl_codes): the layer it names."""
    code = ev.facts.get("hccl_code")
    if not code:
        return None
    from doctor.explain.hccl_codes import attribute_hccl

    return attribute_hccl(code, setup=ev.facts.get("hccl_setup") == "1")


def _code(ev: Event, snapshot: Any) -> Attribution | None:
    for key in ("code", "acl_code", "npu_err"):
        code = ev.facts.get(key)
        if code and (hit := (owner_of_npu_err(code) if key == "npu_err" else owner_of_code(code))) is not None:
            comps, meaning, source = hit
            return Attribution(
                "torch-npu-code-owner" if key == "npu_err" else "error-code-owner", Severity.ERROR, comps,
                f"Error code {code}: {meaning}",
                f"Read: the error code {code} on line {ev.line}. Its documentation names the module that raised it.",
                "Read the lines before the code (the first error of the run) and the component's documentation for "
                "the code.",
                source, f"error code {code} -> {meaning}")
    return None


def _pip(ev: Event, snapshot: Any) -> Attribution | None:
    pkgs = ev.facts.get("packages")
    if ev.kind != "pip" or not pkgs or pkgs == "(resolver)":
        return None
    names = [re.split(r"[=<>!~\[; ]", p, maxsplit=1)[0] for p in pkgs.split()]
    comps = [(n, c) for n in names if n and (c := component_of_distribution(n)) not in (None, "python")]
    if len(names) >= 2:
        # a resolver conflict: two packages whose requirements cannot both hold
        if not comps:
            return None
        a, b = names[0], names[1]
        return Attribution(
            "pip-resolver-conflict", Severity.ERROR,
            _comps(*(c for _, c in comps), "python"),
            f"pip cannot install {a} and {b} together: their requirements conflict",
            f"Read: {pkgs} ({ev.text}). The two releases require versions of each other (or of a shared dependency) "
            "that cannot both hold: one of them is not the release the other was made for.",
            f"Install the {a} / {b} pair the stack profile pins (doctor check names it), or let pip choose {b} for "
            f"the {a} release you need.",
            OWNERSHIP_SOURCE, f"pip: {pkgs}")
    name = names[0]
    if not comps:
        return None
    comp = comps[0][1]
    return Attribution(
        "pip-package-unavailable", Severity.ERROR, _comps(comp, "python"),
        f"pip cannot install {name} as asked: the release, Python or index does not serve it",
        f"Read: {pkgs}. {name} belongs to {comp}; its releases for this platform come from the index its vendor "
        "documents (torch's +cpu wheels from download.pytorch.org, Ascend packages from their release pages), "
        "for the Python versions listed there.",
        f"Install {name} from the index and with the version the stack profile pins (pip index versions {name}).",
        OWNERSHIP_SOURCE, f"pip: {pkgs}")


def _hang(ev: Event, snapshot: Any) -> Attribution | None:
    """A thread's stack dumped while the job hung (faulthandler's watchdog, py-spy's dump): stuck in a collective or
    in ray.get (doctor.explain.hangs); any other dumped stack is no failure by itself."""
    if ev.kind != "python" or not ev.facts.get("stack_dump") or not ev.frames:
        return None
    from doctor.explain.hangs import FAULTHANDLER, PY_SPY, stack_hang

    return stack_hang(ev.frames, PY_SPY if ev.facts.get("dump") == "py-spy" else FAULTHANDLER)


def _named_wait(ev: Event, snapshot: Any) -> Attribution | None:
    """A line in which the program that waits names what it waits for (doctor.explain.hangs.named_wait)."""
    if ev.kind != "text" or not any(p in ev.text for p in ("scheduled right now", "fulfill resource request")):
        return None
    from doctor.explain.hangs import named_wait

    return named_wait(ev.text)


def _raised_in(ev: Event, snapshot: Any) -> Attribution | None:
    unfinished = bool(ev.facts.get("unfinished"))
    if ev.kind != "python" or not ev.frames or not (unfinished or ev.exc_type in _CHECK_TYPES) \
            or ev.facts.get("stack_dump"):
        return None
    owned = _frames_with_owners(ev, snapshot)
    if not owned:
        return None
    frame, own = owned[-1]
    if unfinished:
        if own is None:
            return None  # the job's own frame, and no exception to say what it rejected: nothing to name
        who = own.distribution or own.component
        return Attribution(
            "traceback-ends-in-package", Severity.ERROR, _comps(own.component, "config"),
            f"A traceback ends in {who}'s own code (its exception line is not in the log)",
            f"Read: {_where(frame)} -> {own.how}: the innermost frame of a traceback whose exception line is cut off "
            f"(a log cut short, a paste that stops at the frames). The failure is in {who}, or in what it was given.",
            f"Find the exception line below the traceback in the full log; then check {who}'s version against the "
            "stack profile (doctor check) and the setting or input it was given.",
            SOURCE, f"{_where(frame)} -> {own.how}")
    if own is None:
        return _in_user_code(ev, frame)
    # frames of the process's traceback below the logged exception, cut off before its end (doctor.explain.events)
    cut = (": the innermost frame the log shows of the traceback that re-raised it, cut off below (the exception "
           "may come from code it called)") if ev.facts.get("frames_cut") else ""
    got = Attribution(
        "error-in-package", Severity.ERROR, _comps(own.component, "config"),
        f"{ev.exc_type} raised inside {own.distribution or own.component}'s own code",
        f"Read: {_where(frame)} -> {own.how}{cut}. The package rejected what it was given (a setting, an input, a "
        "model file) or it does not work with the packages around it.",
        f"Read the message: change the value {own.distribution or own.component} rejects, or install the release of "
        f"{own.distribution or own.component} the stack profile pins.",
        SOURCE, f"{_where(frame)} -> {own.how}")
    return _with_caller(got, ev.exc_type or "", owned)


def _raised_unread(ev: Event, snapshot: Any) -> Attribution | None:
    """The last reading of a failure's traceback nothing above read: where it was raised and who called
    (doctor.explain.boundary)."""
    if ev.kind != "python" or not ev.frames:
        return None
    return raised_unread(ev, _frames_with_owners(ev, snapshot), snapshot)


def _with_caller(got: Attribution, exc: str, owned: list[tuple[Frame, Owner | None]]) -> Attribution:
    """An exception raised in package A's code called by another package B (the frame just outside A's frames:
    doctor.explain.boundary): the title names both — B broke what A expects, or passed on what A rejects — and the
    fix the B / A pair (the pairs the stack profiles pin), then the value B passed on."""
    c = crossing(owned)
    if c is None or not c.called_by_package or c.own is None:
        return got
    assert c.caller_own is not None
    a, b = c.name, c.caller_name
    by, caller_read = caller_said(c)
    pairs = pinned_pairs(b, a)
    pinned = (" The verified stack profiles pin them together as " + "; ".join(f"{b} {x} with {a} {y}"
                                                                          for x, y in pairs[:4]) + ".") if pairs else ""
    return replace(
        got, title=f"{exc} raised in {possessive(a)} {entered(c)}{by}",
        detail=(f"{got.detail} {b} called into {a} here ({caller_read}; entered at {_where(c.entry)}): "
                f"{possessive(a)} check failed on what {b} passed it or on the state {b} called it in (before {a} was "
                f"set up, with an argument {possessive(a)} release does not take), so the {b} / {a} pair is where to "
                "look."),
        fix=(f"Read the message at {possessive(a)} frame with {possessive(b)} call "
             f"({_where(c.caller) if c.caller else b}): either {b} passed on a setting or input {a} rejects (change it), or the installed {b} is not the "
             f"release made for the installed {a} (doctor check compares the pair with the stack profiles).{pinned}"),
        components=_comps(*got.components, c.caller_own.component), read=f"{got.read}; {caller_read}",
        extra={**got.extra, "caller": b, "callee": a})


def _in_user_code(ev: Event, frame: Frame) -> Attribution:
    return Attribution(
        "error-in-user-code", Severity.ERROR, ("config", "model"),
        f"{ev.exc_type} raised in the job's own code, outside every installed package",
        f"Read: {_where(frame)} -> no installed distribution or Ascend package owns it: the script, model or "
        "dataset code of the job (or the data/config it reads).",
        "Fix the script, model file or the configuration value the message names.",
        SOURCE, _where(frame))


# Built-in exceptions that say the program's own code is wrong (or what it computed): raised in the job's own frame,
# the job's. Not the operating system's (OSError and its subclasses), the host's (MemoryError) or a stop the job was
# told to make (KeyboardInterrupt, SystemExit): https://docs.python.org/3/library/exceptions.html#exception-hierarchy
_PROGRAM_ERRORS = frozenset({"Exception", "RecursionError", "SyntaxError", "IndentationError", "TabError",
                             "ArithmeticError", "OverflowError", "FloatingPointError", "LookupError", "UnicodeError",
                             "UnicodeDecodeError", "UnicodeEncodeError", "BufferError", "EOFError", "ReferenceError"})


def _user_raised(ev: Event, snapshot: Any) -> Attribution | None:
    """The last rule: an exception no rule above read whose traceback ends in the job's own code (its innermost frame
    outside the stdlib is owned by no distribution; for a SyntaxError, the file that does not parse) and whose type is
    no package's: a built-in program error, a class of the job's script (Python prints a class of `__main__` without
    its module: traceback.py format_exception_only) or of a module no distribution ships."""
    if ev.kind != "python" or not ev.frames or not ev.exc_type or ev.facts.get("unfinished") \
            or ev.facts.get("stack_dump"):
        return None
    path = ev.facts.get("exception_path", ev.exc_type)
    if "." in path:
        module = path.rsplit(".", 1)[0]
        if module.split(".")[0] in STDLIB_MODULES or distribution_of_module(module, snapshot) is not None:
            return None
    elif path not in _PROGRAM_ERRORS and _is_builtin_exception(path):
        return None
    owned = _frames_with_owners(ev, snapshot)
    if not owned or owned[-1][1] is not None:
        return None
    return _in_user_code(ev, owned[-1][0])


def _is_builtin_exception(name: str) -> bool:
    return isinstance(getattr(builtins, name, None), type)



def _exception_class(ev: Event, snapshot: Any) -> Attribution | None:
    """`vllm.engine.async_llm_engine.AsyncEngineDeadError: ...`: the exception class is defined by a package. Below a
    traceback, only when its innermost package frame is that package's (`packaging.version.InvalidVersion` raised in
    site-packages/packaging/version.py: its own check, whatever the class is called) and no signature knows the
    event (a class signature, torchrun's ChildFailedError, says it is a knock-on)."""
    path = ev.facts.get("exception_path", "")
    if ev.kind != "python" or "." not in path or (ev.frames and ev.signature is not None):
        return None
    module = path.rsplit(".", 1)[0]
    dist = distribution_of_module(module, snapshot)
    if dist is None:
        return None
    owned = _frames_with_owners(ev, snapshot) if ev.frames else []
    if ev.frames:
        own = owned[-1][1] if owned else None
        if own is None or own.distribution != dist:
            return None
    comp = component_of_distribution(dist) or "python"
    read = f"the exception class {path} -> {module.split('.')[0]} is shipped by {dist}"
    return _with_caller(Attribution(
        "error-in-package", Severity.ERROR, _comps(comp, "config"),
        f"{dist} raised {path.rsplit('.', 1)[1]}",
        f"Read: {read}. The package rejected what it was given (a setting, an input, a model file) or it does not "
        "work with the packages around it.",
        f"Read the message: change the value {dist} rejects, or install the release of {dist} the stack profile pins.",
        SOURCE, read), path.rsplit(".", 1)[1], owned)


# A file path (`.../site-packages/<top>/...`, `/usr/local/Ascend/...`, `torch_npu/csrc/...`) or a dotted module
# (`vllm.engine.arg_utils`) of a package that is a component of its own, inside an error line.
_PATH_IN_TEXT = re.compile(r"(?:/[\w.+-]+)+/[\w.+-]+|(?<![\w/.])[A-Za-z_]\w*/[\w./+-]+")
_MODULE_IN_TEXT = re.compile(r"(?<![\w./-])([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)+")
# A value's repr, not a module: torch's and numpy's dtypes (`torch.float16`, `numpy.int64`), torch.Size / device /
# dtype (`got torch.float16 and torch.bfloat16` names two tensors' dtypes, not torch's code); a tensor's legacy type
# name (`Tensor.type()`: `torch.FloatTensor`, `torch.npu.BFloat16Tensor`; autograd prints `[torch.FloatTensor [5]]`)
_VALUE_REPR = re.compile(r"^(?:torch|numpy)\.(?:b?float\d*(?:_\w+)?|half|double|u?int\d+|bool_?|complex\d+|long|short|"
                         r"q[u]?int\d+|Size|device|dtype|(?:cuda\.|npu\.)?[A-Z][A-Za-z0-9]*Tensor)$")


def _named_in_text(ev: Event, snapshot: Any) -> Attribution | None:
    """The error line itself names a file or module of a package with a component of its own."""
    if ev.kind not in ("python", "loader", "build"):
        return None
    text = ev.facts.get("message", ev.text) if ev.kind == "python" else ev.text
    for m in _PATH_IN_TEXT.finditer(text):
        own = owner_of_path(m.group(0), snapshot) or frame_owner(Frame(m.group(0), 0, ""), snapshot)
        if own is not None and own.component != "python":
            return _named(ev, own.component, f"{m.group(0)} -> {own.how}")
    for m in _MODULE_IN_TEXT.finditer(text):
        dist = distribution_of_module(m.group(1), snapshot)
        comp = component_of_distribution(dist) if dist else None
        if comp is not None and comp != "python" and m.group(0).count(".") >= 1 and not _VALUE_REPR.match(m.group(0)):
            return _named(ev, comp, f"the module {m.group(0)} -> {m.group(1)} is shipped by {dist}")
    return None


def _named(ev: Event, comp: str, read: str) -> Attribution:
    return Attribution(
        "error-names-package", Severity.ERROR, _comps(comp, "config"),
        f"The error names a file or module that {comp} ships",
        f"No signature knows this error; the line names a file or module {comp} ships ({read}). The cause is in "
        f"{comp}, or in the setting or input it was given.",
        f"Read the error with {comp}'s documentation and issues; check that {comp}'s version is the one the stack "
        "profile pins (doctor check), then the setting the message names.",
        OWNERSHIP_SOURCE, read)
