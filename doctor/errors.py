"""Errors that mean "the doctor could not do its job" (exit code 2).

Findings are about the user's machine; these are about the doctor's input. Every one names what it
could not read and why, so a user never has to guess which file or key was wrong.
"""

from __future__ import annotations


class DoctorError(Exception):
    """The doctor could not do its job: usage error, unreadable input, refused request. Exit 2."""

    exit_code = 2
    # the finding id of the one report `--json` prints when this error ends a command (README: finding ids)
    finding_id = "doctor-failed"
    fix = "Read the message above: it names what the doctor could not read, write or run."
    # the fix says what the message does not (doctor.installers.gitsrc.GitError: the --git-mirror that serves a
    # source): the text output prints it under the message, as --json and --junit always carry it
    fix_apart = False

    def __init__(self, message: str, *, source: str | None = None, path: str | None = None) -> None:
        self.message = message
        self.source = source  # the file (or "-") the problem is in
        self.path = path  # where inside it, e.g. "ascend.devices[0].id"
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.source:
            where = self.source
            if self.path:
                where += f": {self.path}"
            where += ": "
        elif self.path:
            where = f"{self.path}: "
        return f"{where}{self.message}"


class UsageError(DoctorError):
    """The command line asks for something the doctor cannot do (options that exclude each other, a bad value)."""

    finding_id = "usage-error"
    fix = "Fix the command line (the message names the option); `doctor COMMAND --help` lists every option."


class InputError(DoctorError):
    """A snapshot, profile, spec or script could not be read or does not have the expected shape."""

    finding_id = "input-invalid"
    fix = "Fix or replace the input the message names (file, path inside it, reason)."


class RefusedError(DoctorError):
    """The request is understood but refused by a rule (e.g. a pin that breaks the seed rule)."""

    finding_id = "request-refused"
    fix = "Change the request as the message says (it names the rule or the file that refused it)."


def extra_install_command(extra: str) -> str:
    """The line that adds one of the doctor's extras to the interpreter the doctor runs in (own_pip_install)."""
    return own_pip_install(f"'verl-ascend-doctor[{extra}]'")


def own_pip_install(requirements: str) -> str:
    """The line that installs `requirements` (shell words, quoted) into the interpreter the doctor runs in. Not a
    bare `pip install 'verl-ascend-doctor[X]'`: the pip first on PATH is another interpreter's when the doctor's venv is not activated
    (README's install runs `.venv/bin/doctor`), and there the package is not installed and PyPI has no such
    distribution ("No matching distribution found"). In the doctor's own interpreter the installed distribution is
    kept and only the extra's requirements are added. A venv made without pip (uv's) gets uv's line for it, naming
    the uv a user of this host runs (doctor.probes.uv: `uv` on PATH, else the doctor's own by its full path)."""
    import importlib.util
    import shlex
    import sys

    exe = shlex.quote(sys.executable)
    if importlib.util.find_spec("pip") is None:
        from doctor.probes.uv import uv_here

        uv = uv_here().for_user()
        if uv is not None:
            return f"{uv} pip install --python {exe} {requirements}"
    return f"{exe} -m pip install {requirements}"


class ExtraNotInstalled(DoctorError):
    """A command needs an optional dependency that is not installed; the message names the extra."""

    finding_id = "extra-not-installed"

    def __init__(self, module: str, extra: str, command: str) -> None:
        self.module, self.extra = module, extra
        self.fix = extra_install_command(extra)
        super().__init__(f"`doctor {command}` needs the optional dependency {module!r}, which is not installed: "
                         f"{self.fix}")
