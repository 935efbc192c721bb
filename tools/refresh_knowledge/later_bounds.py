"""`python -m tools.refresh_knowledge.later_bounds`: derive profiles/later-bounds.json from the requirements table
(profiles/requirements/, what PyPI publishes for every release of the tracked projects).

Nothing is read from the network: the table is the input, and the output is a pure function of it
(doctor/knowledge/later_bounds.py's `document`), so tests can assert that the shipped file is what the shipped
table gives. Run it after `python -m tools.refresh_knowledge --write-requirements` (which calls it).

Usage: python -m tools.refresh_knowledge.later_bounds [--requirements DIR] [--out FILE] [--check]
Exit 0: written (or, with --check, the file is current); 1: with --check, the file differs; 2: the table cannot
be read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from doctor.errors import InputError
from doctor.knowledge.later_bounds import FILE, document
from doctor.knowledge.requirements import read_dir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def derived(requirements_dir: str) -> dict[str, Any]:
    """The later-bounds document for the requirements table in `requirements_dir`."""
    table = read_dir(requirements_dir)
    projects = {name: {ver: d.requires_dist for ver, d in table.projects[name].items()} for name in table.index}
    return document(table.read, projects)


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def write(requirements_dir: str, out: str) -> dict[str, Any]:
    from doctor.atomic import write_text_atomic

    doc = derived(requirements_dir)
    write_text_atomic(out, text(doc))
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.refresh_knowledge.later_bounds",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--requirements", default=os.path.join(ROOT, "profiles", "requirements"))
    ap.add_argument("--out", default=os.path.join(ROOT, "profiles", FILE))
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    a = ap.parse_args(argv)
    try:
        if a.check:
            want = text(derived(a.requirements))
            try:
                with open(a.out, encoding="utf-8") as fh:
                    have = fh.read()
            except OSError:
                have = ""
            if have != want:
                print(f"later_bounds: {a.out} is not what {a.requirements} gives: run "
                      "`python -m tools.refresh_knowledge.later_bounds`", file=sys.stderr)
                return 1
            return 0
        doc = write(a.requirements, a.out)
    except InputError as e:
        print(f"later_bounds: {e}", file=sys.stderr)
        return 2
    n = sum(len(d) for d in doc["projects"].values())
    print(f"later_bounds: {len(doc['projects'])} projects, {n} bounded dependencies (table read {doc['read']}) "
          f"-> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
