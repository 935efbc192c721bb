"""The shipped signature database without its specific signatures, and the errors explain gives with it: what the
doctor says of wording no signature knows (the class rules and attribution alone). Shared by the class tests."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from doctor.explain.stream import explain_lines, read_signatures
from doctor.report import Severity


@cache
def generic_db():
    db = read_signatures()
    return replace(db, signatures=tuple(s for s in db.signatures if s.fallback or s.yields))


def errors(lines: list[str], *, specific: bool = False):
    """The error findings of `lines`: with the generic database, or the whole shipped one (`specific`)."""
    found = explain_lines(lines, db=None if specific else generic_db())
    return [f for f in found if f.severity is Severity.ERROR]
