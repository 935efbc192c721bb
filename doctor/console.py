"""The one I/O facade. Commands return results; only this module writes to the terminal.

With `--json`, stdout carries exactly one JSON document and every human line goes to stderr. Colour is
off under `--no-color`, `NO_COLOR`, CI, `TERM=dumb`, or when the stream is not a terminal, decided for stdout and
stderr apart (`doctor check 2>err.log` on a terminal: the report in colour, err.log plain); prompts and spinners are
off in CI and when stdin/stderr are not terminals.
"""

from __future__ import annotations

import errno
import io
import json
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn

from doctor.textenc import stand_ins, writes_everything

_CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")


def running_in_ci(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(v) not in (None, "", "0", "false", "False") for v in _CI_VARS)


_STYLES = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36", "dim": "2", "bold": "1"}


def _styled(text: str, styles: tuple[str, ...]) -> str:
    if not styles:
        return text
    return f"\x1b[{';'.join(_STYLES[s] for s in styles)}m{text}\x1b[0m"


def dumb_terminal(environ: dict[str, str] | None = None) -> bool:
    """TERM=dumb: a terminal that shows escape sequences as text (Emacs' M-x shell and compilation buffers, editors'
    command panes). git prints no colour there (check_auto_color in
    https://github.com/git/git/blob/master/color.c), nor does the doctor."""
    env = os.environ if environ is None else environ
    return env.get("TERM") == "dumb"


@dataclass
class Console:
    """The one I/O facade: `--json` data goes to stdout, everything meant for people to stderr."""

    json_mode: bool = False
    color: bool = False
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose
    interactive: bool = False
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    err: IO[str] = field(default_factory=lambda: sys.stderr)
    # stdout carries the command's data (a script, a snapshot): people's text goes to stderr
    data_stdout: bool = False
    emitted: bool = field(default=False, init=False)  # the one JSON document is on stdout
    # the command's `--junit FILE` (`-`: stdout), and whether its report was written: a command that fails before
    # it writes one still leaves a file naming the failure (doctor.cli.options.fail)
    junit: str | None = field(default=None, init=False)
    junit_written: bool = field(default=False, init=False)
    # the stream a write of this facade failed on ("stdout" / "stderr"), for output_failed to name
    failed_stream: str | None = field(default=None, init=False)
    # colour on stderr when it is not the human stream (status and error lines, collect's warnings): stderr can be a
    # file while stdout is a terminal (`doctor check 2>err.log`), and a file must not get escape sequences.
    # None: stderr is coloured as `color` says.
    err_color: bool | None = None

    @classmethod
    def create(cls, *, json_mode: bool = False, no_color: bool = False, verbose: int = 0, quiet: bool = False,
               data_stdout: bool = False) -> Console:
        ci = running_in_ci()
        human = sys.stderr if json_mode or data_stdout else sys.stdout
        # no-color.org: NO_COLOR present and not empty (an empty value, e.g. `NO_COLOR= cmd`, keeps colour)
        wanted = not (no_color or os.environ.get("NO_COLOR") or ci or json_mode or dumb_terminal())
        color = wanted and _isatty(human)
        interactive = not ci and _isatty(sys.stdin) and _isatty(sys.stderr)
        return cls(json_mode=json_mode, color=color, verbosity=-1 if quiet else verbose, interactive=interactive,
                   data_stdout=data_stdout, err_color=wanted and _isatty(sys.stderr))

    @property
    def human(self) -> IO[str]:
        """Where people-facing text goes: stderr when stdout is reserved for JSON or for data."""
        return self.err if self.json_mode or self.data_stdout else self.out

    def style(self, text: str, *styles: str) -> str:
        """`text` styled for the human stream (stdout, or stderr under --json and for data commands)."""
        return _styled(text, styles) if self.color else text

    def err_style(self, text: str, *styles: str) -> str:
        """`text` styled for stderr, which may be a file while the human stream is a terminal."""
        return _styled(text, styles) if self.stderr_color else text

    @property
    def stderr_color(self) -> bool:
        return self.color if self.err_color is None or self.human is self.err else self.err_color

    def _write(self, stream: IO[str], text: str, *, flush: bool = False) -> None:
        """Write to stdout or stderr, remembering which one failed (a full disk under only one of them). The marks an
        encoding that is not UTF-8 cannot write get ASCII stand-ins (doctor.textenc)."""
        if table := stand_ins(stream):
            text = text.translate(table)
        try:
            stream.write(text)
            if flush:
                stream.flush()
        except OSError:
            self.failed_stream = "stderr" if stream is self.err else "stdout"
            raise

    def print(self, text: str = "", *, min_verbosity: int = 0) -> None:
        if self.verbosity >= min_verbosity:
            # stderr is line-buffered, as print() leaves it: its line goes out (or fails) here
            self._write(self.human, text + "\n", flush=self.human is self.err)

    def status(self, text: str) -> None:
        """Progress line: always stderr, hidden under -q."""
        if self.verbosity >= 0:
            self._write(self.err, self.err_style(text, "dim") + "\n", flush=True)

    def error(self, text: str) -> None:
        self._write(self.err, self.err_style("error: ", "red", "bold") + text + "\n", flush=True)

    def emit_json(self, data: Any) -> None:
        self.emitted = True
        # escaped where stdout's encoding cannot write every character (write_json), dumped once
        self._write(self.out, json.dumps(data, indent=2, sort_keys=False, ensure_ascii=not writes_everything(self.out))
                    + "\n", flush=True)

    def write_json(self, text: str) -> None:
        """A JSON document on stdout (the report, collect's snapshot), `\\u`-escaped where stdout's encoding cannot
        write every character (a GBK or latin-1 locale): the same document, nothing lost."""
        if not writes_everything(self.out):
            text = json.dumps(json.loads(text), indent=2, sort_keys=False, ensure_ascii=True) + "\n"
        self._write(self.out, text, flush=True)

    def flush(self) -> None:
        """Push out what is buffered, so a closed pipe shows up here (BrokenPipeError) and not at exit."""
        for stream in (self.out, self.err):
            self._write(stream, "", flush=True)

    def output_failed(self, e: OSError) -> str | None:
        """What could not be written when `e` is the machine's and not the doctor's (a full disk: `doctor check >
        /dev/full`, a quota, an I/O error): "stdout", "stderr" or the file, else None (a bug). The stream that
        failed (a write of this facade, or a command's `console.out` / `sys.stdout` / `.err` write) is pointed at
        /dev/null so nothing more is lost to it and the interpreter's last flush is quiet."""
        if e.errno not in _DEVICE_ERRNOS:
            return None
        import traceback

        last = traceback.extract_tb(e.__traceback__)[-1:] if e.__traceback__ else []
        line = (last[0].line or "") if last else ""
        stream = self.failed_stream or ("stderr" if any(w in line for w in (".err.", "sys.stderr")) else None)
        if stream == "stderr":
            # people's text cannot be written: the error line goes nowhere either, and under --json the one
            # report still reaches stdout
            _to_devnull(sys.stderr)
            return "stderr"
        to_stdout = stream == "stdout" or any(w in line for w in (".out.", "sys.stdout"))
        if not to_stdout:
            return e.filename if isinstance(e.filename, str) else "the output file"
        self.emitted = True  # no JSON document can reach stdout any more
        _to_devnull(sys.stdout)
        return "stdout"


# errors of the device written to, never of the doctor: no space, quota, file too large, I/O error
_DEVICE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


BROKEN_PIPE_EXIT = 141


def quiet_broken_pipe() -> NoReturn:
    """The reader of stdout went away (`doctor check | head -1`): stop quietly with 141 (128 + SIGPIPE), as
    coreutils and git do. stdout is pointed at /dev/null so the interpreter's last flush cannot complain."""
    _to_devnull(sys.stdout)
    sys.exit(BROKEN_PIPE_EXIT)


def _to_devnull(stream: IO[str]) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file descriptor (tests): nothing will flush to it at exit


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
