"""`doctor diff A B`: what differs between two snapshots (versions, Ascend parts, env, modules).

Exit 0 when nothing differs, 1 when something does (like diff(1)), 2 when a file cannot be read.
"""

from __future__ import annotations

import click

from doctor.cli.options import doctor_command, output_options


@click.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--all", "show_all", is_flag=True, help="Also compare volatile facts (timestamps, ports, memory, pids).")
@output_options
@doctor_command
def command(console, a: str, b: str, show_all: bool) -> int:  # type: ignore[no-untyped-def]
    """Show what differs between two snapshots."""
    from doctor.errors import InputError
    from doctor.snapshot.diff import UNKNOWN_MARK, diff_snapshots
    from doctor.snapshot.model import Snapshot, load_document

    docs = []
    for path in (a, b):
        d = load_document(path)
        if not isinstance(d, Snapshot):
            raise InputError("is a cluster file; `doctor diff` compares two snapshots (extract a node first)", source=path)
        docs.append(d)
    changes = diff_snapshots(docs[0], docs[1], volatile=show_all)
    if console.json_mode:
        from doctor.render import emit
        from doctor.report import Report, finding

        report = Report("diff", extra={"a": a, "b": b, "changes": [
            {"key": k, "a": None if x == UNKNOWN_MARK else x, "b": None if y == UNKNOWN_MARK else y,
             "in_a": x != UNKNOWN_MARK, "in_b": y != UNKNOWN_MARK} for k, x, y in changes]})
        if changes:
            report.findings.append(finding(
                "snapshots-differ", "warning", ("system",), f"{len(changes)} difference(s) between {a} and {b}",
                evidence={"count": len(changes), "keys": [k for k, _, _ in changes][:20]},
                fix="See `changes`: the keys that differ, with both values."))
        emit(report, console)
        return 1 if changes else 0
    c = console
    if not changes:
        c.print(c.style(f"no differences between {a} and {b}", "green"))
        return 0
    c.print(c.style(f"--- {a}", "red") + "\n" + c.style(f"+++ {b}", "green"))
    width = max(len(k) for k, _, _ in changes)
    for key, x, y in changes:
        if x == UNKNOWN_MARK:
            c.print(f"{c.style('+', 'green')} {key.ljust(width)}  {y}")
        elif y == UNKNOWN_MARK:
            c.print(f"{c.style('-', 'red')} {key.ljust(width)}  {x}")
        else:
            c.print(f"{c.style('~', 'yellow')} {key.ljust(width)}  {x} -> {y}")
    c.print(c.style(f"{len(changes)} difference(s)", "bold"))
    return 1
