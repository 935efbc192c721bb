"""Loading a signature database for use: read and validated by `db`, and each example run through the scanner.

This sits above the scanner and the findings (it runs them), so `db` needs neither: before, db imported the stream
module inside a function to run the examples, and the two modules imported each other.
"""

from __future__ import annotations

from pathlib import Path

from doctor.errors import InputError
from doctor.explain.db import SignatureDB, read_signatures
from doctor.explain.stream import explain_lines


def load_signatures(path: str | Path | None = None) -> SignatureDB:
    """The shipped database (None: read once, its examples are run by the test suite), or the file at `path`,
    refused (InputError naming the file and the signature) when one of its examples is not explained by its own
    signature."""
    db = read_signatures(path)
    if path is not None:
        for sig in db.signatures:
            for example in sig.examples:
                found = [f.id for f in explain_lines([*sig.example_context, example], db=db, context_lines=0,
                                                     attribution=False)]
                if sig.id not in found:
                    raise InputError(f"its example is not explained by it (got {found or 'nothing'}): {example!r}",
                                     source=db.path, path=f"signature {sig.id}")
    return db
