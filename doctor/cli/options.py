"""What every command shares: the output options (also accepted after the command name), the options
several commands take (one definition each, so `--root` or `--python` means the same everywhere), and
the `doctor_command` wrapper that keeps the contracts every command promises:

* `--json`: stdout holds exactly one `doctor.report/1` document, also when the command fails (exit 2);
* a `DoctorError` is exit 2 with one clear line naming the flag, file or path (never a traceback);
* a missing optional dependency says which extra to install; a closed stdout (`| head`) ends quietly.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import click

from doctor.console import Console, quiet_broken_pipe
from doctor.errors import DoctorError, ExtraNotInstalled, RefusedError, UsageError

F = TypeVar("F", bound=Callable[..., Any])

# -- output options -----------------------------------------------------------------------------------

# (group option name, command option name); the group's options also read DOCTOR_JSON, DOCTOR_NO_COLOR,
# DOCTOR_VERBOSE and DOCTOR_QUIET (see doctor.cli).
_OUTPUT = (("json_mode", "cmd_json"), ("no_color", "cmd_no_color"), ("verbose", "cmd_verbose"), ("quiet", "cmd_quiet"))


def output_options(f: F) -> F:
    """Add --json/--no-color/-v/-q to a command; values merge with the group's."""
    f = click.option("-q", "--quiet", "cmd_quiet", is_flag=True, help="Only problems.")(f)
    f = click.option("-v", "--verbose", "cmd_verbose", count=True, help="More detail.")(f)
    f = click.option("--no-color", "cmd_no_color", is_flag=True, help="No colour.")(f)
    f = click.option("--json", "cmd_json", is_flag=True, help="One JSON report on stdout, nothing else there.")(f)
    f = click.option("--knowledge", "cmd_knowledge", metavar="DIR", type=click.Path(exists=True, file_okay=False),
                     help="A newer copy of the knowledge (profiles/) to use instead of the packaged one.")(f)
    return f


def make_console(ctx: click.Context, kwargs: dict[str, Any], *, data_stdout: bool = False) -> Console:
    """The console for this invocation: the output options given to the command, to any group above it
    (`doctor profiles --json show X`) and to `doctor` itself, or their environment twins."""
    knowledge = kwargs.pop("cmd_knowledge", None)
    if knowledge:  # `doctor check --knowledge DIR`: the same as `doctor --knowledge DIR check` (DOCTOR_KNOWLEDGE)
        from doctor.knowledge.location import use_override

        use_override(knowledge, "--knowledge")
    vals: dict[str, Any] = {group: kwargs.pop(cmd, None) for group, cmd in _OUTPUT}
    c: click.Context | None = ctx.parent
    while c is not None:
        for group, cmd in _OUTPUT:
            for name in (group, cmd):
                v = c.params.get(name)
                if v:
                    vals[group] = (vals[group] or 0) + v if group == "verbose" else True
        c = c.parent
    return Console.create(json_mode=bool(vals["json_mode"]), no_color=bool(vals["no_color"]),
                          verbose=int(vals["verbose"] or 0), quiet=bool(vals["quiet"]), data_stdout=data_stdout)


# -- options several commands share -------------------------------------------------------------------


class TargetPython(click.ParamType):
    """`--python`: a path (kept as given, made absolute — a venv's python is a symlink that must not be
    resolved out of the venv) or a bare name looked up on PATH; it must be an executable file."""

    name = "PATH|NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        import shutil

        text = os.fspath(value)
        if os.sep in text or os.path.exists(text):
            if not os.path.exists(text):
                self.fail(f"{text}: no such file", param, ctx)
            if not os.path.isfile(text) or not os.access(text, os.X_OK):
                self.fail(f"{text}: not an executable file", param, ctx)
            return os.path.abspath(text)
        found = shutil.which(text)
        if not found:
            self.fail(f"{text}: not found on PATH", param, ctx)
        return found


def python_option(note: str = "") -> Callable[[F], F]:
    return click.option(
        "--python", "python", type=TargetPython(), default=None,
        help="Target interpreter whose packages count: a path, or a name on PATH such as python3.10 "
             "(default: the one running doctor)." + (f" {note}" if note else ""))


def root_option(*, dest: str = "root", hidden: bool = False) -> Callable[[F], F]:
    return click.option(
        "--root", dest, type=click.Path(exists=True, file_okay=False), default="/", show_default=True, hidden=hidden,
        help="Read the machine's files (Ascend installs, /dev, /proc, /sys) under this prefix (a mounted image, "
             "a test fixture).")


def npu_smi_timeout_option() -> Callable[[F], F]:
    return click.option(
        "--npu-smi-timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS",
        help="Seconds all npu-smi calls together may take; past it npu-smi is killed and counts as hung.")


def ray_options(f: F) -> F:
    """--ray, --address, --ray-timeout."""
    f = click.option("--ray-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
                     metavar="SECONDS", help="Seconds to wait for all nodes (a node past it is recorded as timed out).")(f)
    f = click.option("--address", metavar="ADDR", help="Ray address for --ray (default: RAY_ADDRESS or auto).")(f)
    return click.option("--ray", "use_ray", is_flag=True,
                        help="Probe every alive node of the Ray cluster (needs the cluster's Ray release in the doctor's "
                             "Python, or --python with the training environment's interpreter).")(f)


def profile_option(dest: str = "profile", more: str = "") -> Callable[[F], F]:
    """`--profile NAME`; `more` is what the option means for one command in particular (install: the machine
    without CANN or an NPU, which no stack matches)."""
    return click.option("--profile", dest, metavar="NAME",
                        help="Use this verified stack instead of the one that matches the machine (see `doctor "
                             f"profiles`).{more}")


def strict_option() -> Callable[[F], F]:
    return click.option("--strict", is_flag=True, default=None, help="Warnings also fail (exit 1).")


def junit_option(dest: str = "junit_file") -> Callable[[F], F]:
    """`--junit FILE`; `--junit -` is stdout (as `-o -`): the XML is then stdout's one document and the human
    text goes to stderr (`junit_to_stdout`); with --json it is refused (`refuse_two_stdout_documents`)."""
    return click.option("--junit", dest, type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
                        help="Also write a JUnit XML report to FILE (one testcase per check; `--junit -`: stdout).")


def junit_path(ctx: click.Context, kwargs: dict[str, Any]) -> str | None:
    """The command's --junit FILE (whatever its dest), None when not given or the command has none."""
    return next((kwargs.get(p.name or "") for p in ctx.command.params
                 if isinstance(p, click.Option) and "--junit" in p.opts and kwargs.get(p.name or "")), None)


def junit_to_stdout(ctx: click.Context, kwargs: dict[str, Any]) -> bool:
    """The command's --junit (whatever its dest) was given as `-`."""
    return junit_path(ctx, kwargs) == "-"


def junit_of_usage_error(e: click.ClickException, argv: Sequence[str]) -> str | None:
    """The --junit FILE of a command click refused while parsing its arguments (`--python /nonexistent`, an
    unknown option): read from the raw arguments by that command's own option parser (values not converted), so
    a value that is another option's (`--profile --junit`) is not taken for it. None when the error is not in a
    command with --junit (an option of `doctor` itself), or is about --junit itself."""
    ctx = getattr(e, "ctx", None)
    cmd = getattr(ctx, "command", None)
    param = getattr(e, "param", None)
    if ctx is None or cmd is None or isinstance(cmd, click.Group) or "--junit" in getattr(param, "opts", ()):
        return None
    if not any(isinstance(p, click.Option) and "--junit" in p.opts for p in cmd.params):
        return None
    args = list(argv)
    args = args[: args.index("--")] if "--" in args else args
    if ctx.info_name not in args:
        return None
    args = args[args.index(ctx.info_name) + 1:]
    try:
        lenient = click.Context(cmd, info_name=ctx.info_name, ignore_unknown_options=True, resilient_parsing=True)
        opts, _, _ = cmd.make_parser(lenient).parse_args(args)
    except click.ClickException:  # `--junit` with no value: no FILE to write
        return None
    return junit_path(lenient, opts)


def write_failure_junit(console: Console, command: str, finding_id: str, message: str, fix: str) -> None:
    """The JUnit file of a command that could not do its job (exit 2), when it asked for one and has not written
    its report: one testcase with an <error> naming the failure (what pytest writes for its internal error), so a CI
    that publishes the file shows why. Best effort: a FILE that cannot be written (the failure may be that very
    path) leaves the exit code and the error line to say it; `-` is stdout unless --json holds it."""
    path = console.junit
    if not path or console.junit_written or (path == "-" and console.json_mode):
        return
    from doctor.render import junit_xml
    from doctor.report import failure_report

    console.junit_written = True
    xml = junit_xml(failure_report(command, finding_id, message, fix=fix))
    try:
        if path == "-":
            console.out.write(xml)
            console.out.flush()
        else:
            from doctor.atomic import write_text_atomic

            write_text_atomic(path, xml)
    except OSError:
        pass


def refuse_two_stdout_documents(console: Console, junit_stdout: bool) -> None:
    if junit_stdout and console.json_mode:
        raise UsageError("- is stdout, which holds the one --json document: give --junit a FILE", path="--junit")


def output_file_options(what: str) -> Callable[[F], F]:
    """-o/--output FILE and --overwrite/--force: an existing FILE is refused unless --overwrite is given
    (the wrapper refuses it before the command does any work)."""

    def deco(f: F) -> F:
        f = click.option("--overwrite", "--force", "overwrite", is_flag=True,
                         help="Replace an existing output file.")(f)
        return click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
                            metavar="FILE", callback=_dash_is_stdout,
                            help=f"Write {what} to FILE (atomically) instead of stdout (`-o -`: stdout).")(f)

    return deco


def _dash_is_stdout(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`-o -` is stdout, as for every Unix tool, never a file named `-`."""
    return None if value == "-" else value


def refuse_overwrite(path: str | None, overwrite: bool, flag: str = "--output") -> None:
    """An existing output file is replaced only with --overwrite."""
    # a regular file (or a dangling link) would be replaced; a device or FIFO such as /dev/null is written to
    if path and os.path.lexists(path) and (os.path.isfile(path) or not os.path.exists(path)) and not overwrite:
        raise RefusedError(f"exists; pass --overwrite (or --force) to replace it ({flag})", source=path)


def given(*names: str) -> list[str]:
    """The flags among these option names that the user typed (not defaults), as typed names (`--root`)."""
    ctx = click.get_current_context()
    out = []
    for name in names:
        src = ctx.get_parameter_source(name)
        if src is not None and src.name in ("COMMANDLINE", "ENVIRONMENT"):
            out.append(flag_name(ctx.command, name))
    return out


def flag_name(command: click.Command, dest: str) -> str:
    """The long flag of the option stored under `dest` (`ppo_micro_batch_size_per_gpu` -> `--micro-batch-size`)."""
    for p in command.params:
        if isinstance(p, click.Option) and p.name == dest:
            longs = [o for o in p.opts if o.startswith("--")]
            return longs[0] if longs else p.opts[0]
    return dest


def refuse_unrunnable_python(probes: dict[str, Any], python: str | None) -> None:
    """A target interpreter that could not run the probe at all is exit 2, not a warning."""
    st = probes.get("python")
    if st is None or getattr(st, "status", "ok") != "error":
        return
    why = st.errors[0] if st.errors else "it printed no result"
    raise UsageError(f"cannot run the target interpreter {python or sys.executable}: {why}", path="--python")


def add_deep(snap: Any, python: str | None, timeout: float, console: Console) -> None:
    """The `--deep` facts of this host into `snap` (doctor.probes.deep.add_deep_facts), saying what runs: the imports
    of what is installed, the comparison when there is something to compare (doctor.probes.deep.deep_status)."""
    from doctor.probes.deep import add_deep_facts, deep_status, imports_worth_saying

    modules = imports_worth_saying(snap.has_package)

    def say(n: int) -> None:
        if (line := deep_status(modules, n)) is not None:
            console.status(line)

    add_deep_facts(snap, python, timeout, on_start=say)


# -- the wrapper -----------------------------------------------------------------------------------------

# Optional dependencies by extra (module names; tests hold them to pyproject.toml), and the extra a command
# names first when a module is in several.
EXTRAS: dict[str, tuple[str, ...]] = {
    "ray": ("ray",),
    "launch": ("hydra", "omegaconf", "yaml", "tree_sitter", "tree_sitter_bash"),
    "smoke": ("numpy", "safetensors", "tokenizers", "pyarrow", "hydra", "omegaconf", "yaml"),
}
_COMMAND_EXTRA = {"smoke": "smoke", "launch": "launch", "lint": "launch"}


def extra_for(module: str | None, command: str) -> str | None:
    top = (module or "").split(".")[0]
    extras = [x for x, mods in EXTRAS.items() if top in mods]
    if not extras:
        return None
    preferred = _COMMAND_EXTRA.get(command)
    return preferred if preferred in extras else extras[0]


# options where an empty value is documented to mean "none" (`--nnal-set-env ''` skips NNAL)
EMPTY_MEANS_NONE = {"nnal_set_env"}
_PATH_METAVARS = {"FILE", "DIR", "PATH", "SNAPSHOT"}


def refuse_empty_paths(ctx: click.Context, values: dict[str, Any]) -> None:
    """An empty file, directory or log argument is a usage error (exit 2), never "the current directory" or "no
    file": `doctor explain "$LOG"` with LOG unset would otherwise read the whole cwd tree, `--spec ""` be ignored."""
    for p in ctx.command.params:
        v = values.get(p.name or "")
        given = v if isinstance(v, (tuple, list)) else (v,)
        if "" not in given or p.name in EMPTY_MEANS_NONE:
            continue
        pathlike = isinstance(p, click.Argument) or isinstance(p.type, click.Path) \
            or (p.metavar or "").split("|")[0].upper() in _PATH_METAVARS
        if pathlike:
            label = p.opts[0] if isinstance(p, click.Option) else (p.metavar or p.name or "").split(" ")[0]
            raise UsageError("the value is empty (an unset shell variable?): give a path", path=label)


def command_name(ctx: click.Context) -> str:
    """The `doctor` subcommand this context belongs to (`profiles` for `doctor profiles show`)."""
    c = ctx
    while c.parent is not None and c.parent.parent is not None:
        c = c.parent
    return c.info_name or "doctor"


def doctor_command(f: Callable[..., int | None] | None = None, *, data_stdout: bool = False) -> Any:
    """Wrap a command body `f(console, **options) -> exit code`. `data_stdout`: without `-o`, the
    command's stdout carries data (a script, a snapshot), so its human text goes to stderr."""
    if f is None:
        return functools.partial(doctor_command, data_stdout=data_stdout)
    body = f

    @functools.wraps(body)
    @click.pass_context
    def wrapper(ctx: click.Context, **kwargs: Any) -> None:
        junit_stdout = junit_to_stdout(ctx, kwargs)
        console = make_console(ctx, kwargs, data_stdout=(data_stdout and not kwargs.get("output")) or junit_stdout)
        console.junit = junit_path(ctx, kwargs)
        name = command_name(ctx)
        try:
            refuse_two_stdout_documents(console, junit_stdout)
            refuse_empty_paths(ctx, kwargs)
            if "overwrite" in kwargs:
                refuse_overwrite(kwargs.get("output"), bool(kwargs["overwrite"]))
            code = body(console, **kwargs)
            console.flush()
        except BrokenPipeError:
            quiet_broken_pipe()
        except DoctorError as e:
            fail(console, name, _name_the_flag(e, ctx))
        except click.ClickException as e:
            fail(console, name, UsageError(e.format_message()))
        except ModuleNotFoundError as e:
            extra = extra_for(e.name, name)
            if extra is None:
                crash(console, name, e)
            fail(console, name, ExtraNotInstalled(e.name or "?", extra, name))
        except (click.exceptions.Exit, click.Abort, KeyboardInterrupt, SystemExit):
            raise
        except OSError as e:
            where = console.output_failed(e)
            if where is not None:  # the output cannot be written (a full disk): the machine's, not a doctor bug
                fail(console, name, DoctorError(f"cannot write: {e.strerror or e}", source=where))
            crash(console, name, e)
        except Exception as e:  # noqa: BLE001 - the doctor's own crash is exit 2 with a message, not a traceback
            crash(console, name, e)
        sys.exit(code or 0)

    return wrapper


def _name_the_flag(e: DoctorError, ctx: click.Context) -> DoctorError:
    """Say the flag the user typed: `command line: tp: must be ...` -> `--tp: must be ...`; and never blame
    a flag the user did not pass (`--compose: cannot compose ...` when --compose was left to its default)."""
    if e.source == "command line" and e.path and "." not in e.path:
        flag = flag_name(ctx.command, e.path)
        if flag != e.path:
            e.source, e.path = None, flag
    for attr in ("source", "path"):
        if _untyped_flag(getattr(e, attr), ctx):
            setattr(e, attr, None)
    e.args = (str(e),)
    return e


def _untyped_flag(name: str | None, ctx: click.Context) -> bool:
    """Is `name` one of this command's flags that the user left to its default?"""
    if not name or not name.startswith("--"):
        return False
    param = next((p for p in ctx.command.params if isinstance(p, click.Option)
                  and name in (*p.opts, *p.secondary_opts)), None)
    source = ctx.get_parameter_source(param.name) if param is not None and param.name else None
    return source is not None and source.name not in ("COMMANDLINE", "ENVIRONMENT")


def fail(console: Console, command: str, e: DoctorError) -> NoReturn:
    """Exit 2 (or the error's code) with one line on stderr; under --json also the one report on stdout."""
    from doctor.report import failure_report

    # an error whose fix is not in its message (a git source's `--git-mirror` line) has it printed under it
    said = str(e) + (f"\n  fix: {e.fix}" if e.fix_apart and e.fix else "")
    try:
        _unless_full(console, lambda: console.error(said))
        if console.json_mode and not console.emitted:
            _unless_full(console, lambda: console.emit_json(
                failure_report(command, e.finding_id, str(e), fix=e.fix).to_dict()))
        _unless_full(console, lambda: write_failure_junit(console, command, e.finding_id, str(e), e.fix))
        _unless_full(console, console.flush)
    except BrokenPipeError:
        quiet_broken_pipe()
    sys.exit(e.exit_code)


def _unless_full(console: Console, write: Callable[[], None]) -> None:
    """Write the failure itself; a stream the disk refuses too (`doctor check > log 2>&1` on a full disk) loses
    it, and the exit code still says it."""
    try:
        write()
    except OSError as lost:
        if console.output_failed(lost) is None:
            raise


def crash(console: Console, command: str, e: BaseException) -> NoReturn:
    import traceback

    tb = traceback.format_exc()
    msg = f"internal error: {type(e).__name__}: {e} (this is a bug in the doctor; -v shows the traceback)"
    err = DoctorError(msg)
    err.finding_id, err.fix = "internal-error", "Re-run with -v and attach the output to a bug report."
    if console.verbosity >= 1:
        try:
            console.err.write(tb)
        except BrokenPipeError:
            quiet_broken_pipe()
    fail(console, command, err)


def _name_the_variable(e: click.ClickException) -> None:
    """A bad value that came from an environment twin (DOCTOR_VERBOSE=abc) is said as that variable, not as the
    flag the user never typed."""
    if not isinstance(e, click.BadParameter) or e.ctx is None or e.param is None or not e.param.name:
        return
    src = e.ctx.get_parameter_source(e.param.name)
    env = e.param.envvar if isinstance(e.param.envvar, str) else None
    if src is not None and src.name == "ENVIRONMENT" and env:
        e.param_hint = f"{env}={os.environ.get(env, '')!r} (the environment twin of {'/'.join(e.param.opts)})"


def json_asked(argv: Sequence[str]) -> bool:
    """`--json` on the command line (before a `--`) or DOCTOR_JSON set, read from the raw arguments: for what runs
    before click has parsed `--json` (a usage error, the eager `--version`)."""
    args = list(argv)
    args = args[: args.index("--")] if "--" in args else args
    return "--json" in args or os.environ.get("DOCTOR_JSON", "") not in ("", "0")


def print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`doctor --version`: `doctor X.Y.Z`; under `--json` (or DOCTOR_JSON) the one report, as for everything
    `--json` prints, with the version as its top-level `version` (click's eager option runs before `--json` is
    parsed, so the raw arguments say whether it was given). An output the machine refuses (`> /dev/full`) is exit 2
    with the reason, as for every command."""
    if not value or ctx.resilient_parsing:
        return
    from doctor import __version__

    console = Console(json_mode=json_asked(ctx.meta.get("doctor.argv", ())))
    try:
        if console.json_mode:
            from doctor.report import Report

            console.emit_json(Report(command="doctor", extra={"version": __version__}).to_dict())
        else:
            console.print(f"doctor {__version__}")
        console.flush()
    except BrokenPipeError:
        quiet_broken_pipe()
    except OSError as e:
        where = console.output_failed(e)
        if where is None:
            raise
        fail(console, "doctor", DoctorError(f"cannot write: {e.strerror or e}", source=where))
    ctx.exit(0)


def report_usage_error(e: click.ClickException, argv: Sequence[str]) -> None:
    """A usage error click found while parsing (before any command ran): exit 2, and under --json (or
    DOCTOR_JSON) the one report on stdout, so a CI step that parses stdout still gets a document."""
    from doctor.report import failure_report

    setattr(e, "exit_code", 2)  # noqa: B010 - a usage error is exit 2 everywhere (click's plain ClickException is 1)
    _name_the_variable(e)
    args = list(argv)
    args = args[: args.index("--")] if "--" in args else args
    junit = junit_of_usage_error(e, argv)
    if not json_asked(args) and not junit:
        return
    from doctor.cli import COMMANDS

    command = next((a for a in args if not a.startswith("-")), "doctor")
    command = command if command in COMMANDS else "doctor"
    if junit:  # a command with --junit: the one click was parsing
        command = getattr(getattr(e, "ctx", None), "info_name", None) or command
    report = failure_report(command, "usage-error", e.format_message(), fix=UsageError.fix)
    console = Console(json_mode=json_asked(args))
    console.junit = junit
    try:
        if console.json_mode:
            console.emit_json(report.to_dict())
        write_failure_junit(console, command, "usage-error", e.format_message(), UsageError.fix)
    except BrokenPipeError:
        quiet_broken_pipe()
