"""What every command shares: output options (also accepted after the command name), the console,
and turning a DoctorError into exit 2 with its message."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from doctor.console import Console
from doctor.errors import DoctorError

F = TypeVar("F", bound=Callable[..., Any])


def output_options(f: F) -> F:
    """Add --json/--no-color/-v/-q to a command; values merge with the group's."""
    f = click.option("-q", "--quiet", "cmd_quiet", is_flag=True, help="Only problems.")(f)
    f = click.option("-v", "--verbose", "cmd_verbose", count=True, help="More detail.")(f)
    f = click.option("--no-color", "cmd_no_color", is_flag=True, help="No colour.")(f)
    f = click.option("--json", "cmd_json", is_flag=True, help="One JSON report on stdout, nothing else there.")(f)
    return f


def make_console(ctx: click.Context, kwargs: dict[str, Any]) -> Console:
    obj = ctx.find_root().obj or {}
    # pop every option first: `a or kwargs.pop(...)` would leave it in kwargs when the group set it
    cmd = {k: kwargs.pop(k, None) for k in ("cmd_json", "cmd_no_color", "cmd_verbose", "cmd_quiet")}
    return Console.create(
        json_mode=bool(obj.get("json_mode") or cmd["cmd_json"]),
        no_color=bool(obj.get("no_color") or cmd["cmd_no_color"]),
        verbose=int(obj.get("verbose", 0)) + int(cmd["cmd_verbose"] or 0),
        quiet=bool(obj.get("quiet") or cmd["cmd_quiet"]),
    )


def doctor_command(f: Callable[..., int | None]) -> Callable[..., None]:
    """Wrap a command body `f(console, **options) -> exit code`: builds the console, maps DoctorError to
    exit 2 with a clear message (never a traceback), and exits with the returned code."""

    @functools.wraps(f)
    @click.pass_context
    def wrapper(ctx: click.Context, **kwargs: Any) -> None:
        for k in ("cmd_json", "cmd_no_color", "cmd_verbose", "cmd_quiet"):
            kwargs.setdefault(k, None)
        console = make_console(ctx, kwargs)
        try:
            code = f(console, **kwargs)
        except DoctorError as e:
            # stdout stays empty: with --json it holds one report or nothing
            console.error(str(e))
            sys.exit(e.exit_code)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - the doctor's own crash is exit 2 with a message, not a traceback
            import traceback

            console.error(f"internal error: {type(e).__name__}: {e} (this is a bug in the doctor; -v shows the traceback)")
            if console.verbosity >= 1:
                console.err.write(traceback.format_exc())
            sys.exit(2)
        sys.exit(code or 0)

    return wrapper
