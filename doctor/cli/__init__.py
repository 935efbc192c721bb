"""`doctor` command line: a Click group that imports each command's module only when it runs.

Start-up must stay cheap (`doctor --version` well under 0.3 s), so nothing heavy is imported here.
"""

from __future__ import annotations

import importlib
import os
import sys

# Flags that change nothing the in-target probe runs with. A command line of only these and `check` (from the
# `doctor` script or `python -m doctor`) is a live check whose first act is `start_target_probe(None)`: that probe
# starts here, before click and the commands are imported, and the check takes it over (pyenv.start_early). Any
# other command line (--python, --from, --root, --help, ...) is left to click alone.
_PLAIN_CHECK_FLAGS = frozenset({"check", "--json", "--no-color", "-v", "-vv", "-vvv", "--verbose", "-q", "--quiet",
                                "--strict", "--deep"})


def _plain_live_check(argv: list[str]) -> bool:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entry = bool(argv) and (os.path.basename(argv[0]) == "doctor"
                            or os.path.abspath(argv[0]) == os.path.join(here, "__main__.py"))
    return entry and argv[1:].count("check") == 1 and all(a in _PLAIN_CHECK_FLAGS for a in argv[1:])


if _plain_live_check(sys.argv):
    # A live check is one short process whose objects (modules, knowledge tables, snapshot, report) live until it
    # exits: the cyclic collector's ~75 passes over them during a run (every 700 allocations) took ~3 % of its CPU
    # and freed ~600 objects. `main` freezes the heap at the end as for every command.
    import gc

    gc.disable()
    from doctor.probes.pyenv import start_early

    start_early()

import click  # noqa: E402 - after the probe's early start

# name -> (module, short help). One module per command, loaded on demand.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("doctor.cli.check", "Diagnose this machine (or snapshots / a Ray cluster) and print findings with fixes."),
    "collect": ("doctor.cli.collect", "Write a snapshot of this host and Python environment (secrets redacted)."),
    "install": ("doctor.cli.install", "Resolve, plan and install the verified stack for this machine; roll back on failure."),
    "smoke": ("doctor.cli.smoke", "Run a tiny verl GRPO job (megatron + MindSpeed, flash attention on) and give a verdict."),
    "launch": ("doctor.cli.launch", "Write a validated verl launch script for a model and parallel layout."),
    "lint": ("doctor.cli.lint", "Validate an existing verl launch script's overrides."),
    "explain": ("doctor.cli.explain", "Match a failure log against known signatures and say what to change."),
    "profiles": ("doctor.cli.profiles", "List or show the verified stacks (profiles)."),
    "diff": ("doctor.cli.diff", "Show what differs between two snapshots."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[name][0])
        cmd: click.Command = module.command
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                          list[str]]:
        # click says only "No such command 'chek'." (it suggests for options, not commands): name the close one
        # and the commands there are, as `--jsn` gets "Did you mean one of: '--json', '--junit'?"
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=1)
            ctx.fail(f"No such command {name!r}." + (f" (Did you mean {close[0]!r}?)" if close else "")
                     + f" Commands: {', '.join(COMMANDS)}.")
        return super().resolve_command(ctx, args)

    # A usage error click finds while parsing is exit 2, and under --json also the one report on stdout.
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: object) -> click.Context:
        argv = list(args)
        try:
            ctx = super().make_context(info_name, args, parent, **extra)  # type: ignore[arg-type]
        except click.ClickException as e:
            _usage_error(e, argv)
            raise
        ctx.meta["doctor.argv"] = argv
        return ctx

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["doctor.argv"] = list(args)  # for --version, which runs while click parses, before --json is read
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as e:
            _usage_error(e, ctx.meta.get("doctor.argv", []))
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from the table above so `doctor --help` imports no command module.
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # doctor.cli.options (and click's own pieces it uses) load only when --version is given
        from doctor.cli.options import print_version

        print_version(ctx, param, value)


def _usage_error(e: click.ClickException, argv: list[str]) -> None:
    from doctor.cli.options import report_usage_error

    report_usage_error(e, argv)


# The environment twins are exactly the ones the README names (no auto prefix: no undocumented twins).
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit (under --json: one report whose `version` holds it).")
@click.option("--json", "json_mode", is_flag=True, envvar="DOCTOR_JSON",
              help="Print one JSON report on stdout and nothing else there. [env DOCTOR_JSON=1]")
@click.option("--no-color", is_flag=True, envvar="DOCTOR_NO_COLOR",
              help="No colour (also NO_COLOR, TERM=dumb, CI, non-TTY). [env DOCTOR_NO_COLOR=1]")
@click.option("-v", "--verbose", count=True, envvar="DOCTOR_VERBOSE",
              help="More detail: passing checks, facts, sources, tracebacks. [env DOCTOR_VERBOSE=N]")
@click.option("-q", "--quiet", is_flag=True, envvar="DOCTOR_QUIET", help="Only problems. [env DOCTOR_QUIET=1]")
@click.option("--knowledge", "knowledge", metavar="DIR", envvar="DOCTOR_KNOWLEDGE",
              type=click.Path(exists=True, file_okay=False),
              help="Use this copy of the knowledge (a profiles/ directory: stacks/, releases.toml, signatures.toml, "
                   "requirements/) instead of the packaged one; validated the same way. [env DOCTOR_KNOWLEDGE=DIR]")
@click.pass_context
def cli(ctx: click.Context, json_mode: bool, no_color: bool, verbose: int, quiet: bool, knowledge: str | None) -> None:
    """Diagnose, install and smoke-test verl + MindSpeed training stacks on Huawei Ascend NPUs.

    Exit codes: 0 no error findings, 1 at least one error finding (or a warning with --strict; for
    `doctor diff`, the snapshots differ), 2 the doctor could not do its job (bad input, crashed check).
    """
    ctx.ensure_object(dict)
    ctx.obj.update(json_mode=json_mode, no_color=no_color, verbose=verbose, quiet=quiet)
    # the loaders (doctor/knowledge/location.py) and worker processes read it from the environment; the reports
    # name what the user used (`--knowledge`, or DOCTOR_KNOWLEDGE when the variable gave it)
    from doctor.knowledge.location import use_override

    typed = ctx.get_parameter_source("knowledge") == click.core.ParameterSource.COMMANDLINE
    use_override(knowledge if knowledge and typed else None, "--knowledge" if typed else None)


def main() -> None:
    from doctor.textenc import fit_streams

    fit_streams()  # a GBK or latin-1 locale: `?` for what it cannot write, never UnicodeEncodeError
    try:
        cli.main(prog_name="doctor", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    finally:
        # The process ends here. At shutdown CPython frees what the command built (a snapshot, the knowledge
        # tables, the report) by reference counts and then runs full collections over the whole heap, which find
        # almost nothing: ~30 ms of a ~0.4 s `doctor check` on this project's CI machine. Moving the heap to the
        # permanent generation leaves those collections nothing to walk. atexit handlers and __del__ methods run as
        # before; only objects in reference cycles are left for the OS to reclaim with the process.
        import gc

        gc.freeze()
