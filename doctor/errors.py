"""Errors that mean "the doctor could not do its job" (exit code 2).

Findings are about the user's machine; these are about the doctor's input. Every one names what it
could not read and why, so a user never has to guess which file or key was wrong.
"""

from __future__ import annotations


class DoctorError(Exception):
    """The doctor could not do its job: usage error, unreadable input, refused request. Exit 2."""

    exit_code = 2

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


class InputError(DoctorError):
    """A snapshot, profile, spec or script could not be read or does not have the expected shape."""


class RefusedError(DoctorError):
    """The request is understood but refused by a rule (e.g. a pin that breaks the seed rule)."""
