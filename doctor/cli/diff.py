"""`doctor diff A B`: what differs between two snapshots (versions, Ascend parts, env, modules).

Exit 0 when nothing differs, 1 when something does (like diff(1)), 2 when a file cannot be read. The text output
groups the differences (doctor.snapshot.diff.summarize) and leaves volatile facts out; `-v` lists every key,
volatile ones included. JSON always lists every key.
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
    """Show what differs between two snapshots.

    Exit 0 when nothing differs, 1 when something does (as diff(1)), 2 when a file cannot be read.
    """
    from doctor.errors import InputError
    from doctor.snapshot.diff import UNKNOWN_MARK, diff_snapshots, line, summarize
    from doctor.snapshot.model import Snapshot, load_document

    docs = []
    for path in (a, b):
        d = load_document(path)
        if not isinstance(d, Snapshot):
            raise InputError("is a cluster file; `doctor diff` compares two snapshots (extract a node first)", source=path)
        docs.append(d)
    every = console.verbosity > 0
    changes = diff_snapshots(docs[0], docs[1], volatile=show_all)  # what the exit code and JSON say
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
    everything = changes if show_all else diff_snapshots(docs[0], docs[1], volatile=True)
    shown = everything if every else changes
    hidden = len(everything) - len(shown)
    note = f"{hidden} volatile one(s) not shown (timestamps, memory in use, ports, pids)" if hidden else ""
    if not shown:
        c.print(c.style(f"no differences between {a} and {b}", "green") + (f"; {note}, -v lists them" if note else ""))
        return 0
    c.print(c.style(f"--- {a}", "red") + "\n" + c.style(f"+++ {b}", "green"))
    if every:
        lines = [line(*change) for change in shown]
    else:
        lines = summarize(docs[0], docs[1], changes)
    width = min(max(len(k) for _, k, _ in lines), 40)  # a longer key is followed by its value, not a column
    colour = {"+": "green", "-": "red", "~": "yellow"}
    for sign, key, text in lines:
        c.print(f"{c.style(sign, colour[sign])} {key.ljust(width)}  {text}")
    total = f"{len(shown)} difference(s)" + (f" on {len(lines)} line(s)" if len(lines) < len(shown) else "")
    if note:
        total += f", {note}"
    if hidden or len(lines) < len(shown):
        total += "; -v lists each"
    c.print(c.style(total, "bold"))
    return 1 if changes else 0
