"""`doctor explain LOG|DIR|- [LOG...]`: match failure logs against the known signatures and say what to change."""

from __future__ import annotations

from pathlib import Path

import click

from doctor.cli.options import doctor_command, output_options


@click.command("explain")
@click.argument("logs", nargs=-1, metavar="LOG|DIR|- [LOG...]")
@click.option(
    "--signatures",
    "signatures_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Signature database (TOML) to use instead of the built-in profiles/signatures.toml.",
)
@click.option(
    "--context",
    "context_lines",
    type=click.IntRange(0, 10),
    default=2,
    show_default=True,
    help="Log lines kept before and after each match as evidence.",
)
@click.option(
    "--snapshot",
    "snapshot_path",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    help="The run's snapshot (doctor collect): its packages' import names and editable source trees say which "
         "package a traceback frame belongs to.",
)
@click.option("--jobs", type=click.IntRange(1, 64), default=None,
              help="Processes reading logs, or parts of one big log, at once (default: one per CPU, only for large inputs).")
@output_options
@doctor_command
def command(console, logs: tuple[str, ...], signatures_path: str | None, context_lines: int, jobs: int | None,
            snapshot_path: str | None) -> int:
    """Explain failure logs: one finding per known problem, with its fix, root cause first.

    LOG is a file or - for stdin (with no LOG, a pipe or redirect on stdin is read). A DIR (a Ray session's logs/, one log per node or rank) or several LOGs are
    read together: their error events are ordered in time and the node whose failure came first is named,
    with the knock-on errors of the other nodes (HCCL timeouts, lost peers) grouped under it. Logs are
    streamed, so multi-gigabyte Ray logs are fine. Exit 0 when no error signature matched (an info finding
    says when nothing matched, a warning when nothing readable was found), 1 when one did, 2 when a log or
    the signature database cannot be read.
    """
    import shlex
    import sys
    import time

    if not logs:  # `journalctl -u job | doctor explain`, `doctor explain < job.log`
        if sys.stdin is None or sys.stdin.isatty():
            from doctor.errors import UsageError

            raise UsageError("missing: give a log file, a directory of logs (a Ray session's logs/), or - to read "
                             "stdin (a pipe or redirect is read without it)", source="LOG")
        logs = ("-",)

    from doctor.explain.signatures import load_signatures
    from doctor.render import emit
    from doctor.report import CheckResult, CheckStatus, Report, Severity

    if signatures_path is None:
        from doctor.knowledge.location import knowledge_file, override_dir

        if override_dir():  # DOCTOR_KNOWLEDGE / --knowledge: its signatures.toml, not the packaged one
            signatures_path = knowledge_file("signatures.toml")
    db = load_signatures(signatures_path)
    snapshot = None
    if snapshot_path is not None:
        from doctor.snapshot.loader import load_document

        doc = load_document(snapshot_path)
        # a cluster file: the first node that has a snapshot (every node runs the same stack)
        snapshot = next((n.snapshot for n in getattr(doc, "nodes", []) if n.snapshot is not None), None) \
            if hasattr(doc, "nodes") else doc
    for log in logs:
        _refuse_doctor_document(log)
    t0 = time.perf_counter()
    single = len(logs) == 1 and (logs[0] == "-" or not Path(logs[0]).is_dir())
    if single:
        from doctor.explain.signatures import explain_path

        findings, lines_read = explain_path(logs[0], db=db, context_lines=context_lines, jobs=jobs, snapshot=snapshot)
        extra = {"log": logs[0], "lines": lines_read}
        header = f"log: {logs[0]} ({lines_read} line{'' if lines_read == 1 else 's'}, {len(db)} signatures)"
    else:
        from doctor.explain.multi import explain_many

        findings, many = explain_many(list(logs), db=db, db_path=signatures_path, context_lines=context_lines,
                                      jobs=jobs, snapshot=snapshot)
        logs_read: list[dict] = many["logs"]
        extra = many
        total = sum(x["lines"] for x in logs_read)
        header = (f"logs: {len(logs_read)} file{'' if len(logs_read) == 1 else 's'}, {total} line{'' if total == 1 else 's'}, "
                  f"{len(db)} signatures")
        if many.get("skipped"):  # the walk left files unread: say which were read and which were not, and why
            from doctor.explain.multi import read_and_skipped

            header += "\n" + read_and_skipped(logs_read, many["skipped"])
    from doctor.explain.findings import redacted

    findings = [redacted(f) for f in findings]
    report = Report(
        command="explain",
        findings=findings,
        checks=[CheckResult(id="log-signatures", area="explain", status=CheckStatus.of(findings),
                            seconds=time.perf_counter() - t0)],
        extra={**extra, "signatures": {"path": db.path, "count": len(db)}},
    )
    stated = _stated_in(logs[0]) if single and logs[0] != "-" else None
    if stated is not None:
        from doctor.snapshot.redact import redact_value

        report.extra["stated"] = [{"fact": f.key, "value": redact_value(f.key[4:], f.value) if f.key.startswith("env.")
                                   and isinstance(f.value, str) else f.value, "line": f.line} for f in stated.facts]
    if not console.json_mode:
        console.print(console.style(header, "dim"))

    def evidence() -> None:
        if console.verbosity >= 0:
            _print_evidence(console, findings, Severity)
            if stated is not None:
                console.print(console.style(
                    "the log also states an environment (" + "; ".join(stated.described()) + "): "
                    f"`doctor check --from-report {shlex.quote(logs[0])}` judges it against the stack's rules", "dim"))

    return emit(report, console, before_summary=evidence)


def _refuse_doctor_document(path: str) -> None:
    """A file `doctor collect` wrote, named as a LOG (`doctor explain snap.json` for `--snapshot snap.json LOG`), is
    exit 2 naming the flags that read it: read as a log, its JSON lines (`"error": "npu-smi not found on PATH"`)
    gave a made-up failure and exit 1. Only a file named on the command line: a directory's walk reads logs."""
    if path == "-" or Path(path).is_dir():
        return
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return  # the reader says why it cannot be read
    from doctor.snapshot.kind import doctor_document_kind

    if kind := doctor_document_kind(head):
        from doctor.errors import InputError

        raise InputError(f"is a doctor {kind} (`doctor collect` wrote it), not a log: `doctor check --from FILE` "
                         "diagnoses it, `doctor explain --snapshot FILE LOG` reads a log with it", source=path)


# A report states its environment at its top (the trackers' templates put it first); a log of gigabytes is not
# read twice for it.
STATED_HEAD = 1 << 20


def _stated_in(path: str):  # type: ignore[no-untyped-def]
    """The versions and devices the head of the log states (doctor.snapshot.stated), or None when it states none
    (variables alone are not an environment worth a second command)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(STATED_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return None
    from doctor.snapshot.stated import read_stated

    stated = read_stated(head)
    if not any(not f.key.startswith("env.") for f in stated.facts):
        return None
    return stated


def _print_evidence(console, findings, severity_cls) -> None:
    from doctor.explain.processes import printed_by_words

    shown = [f for f in findings if f.severity is not severity_cls.INFO and "line" in f.evidence]
    first = [f for f in findings if "first_error" in f.evidence]
    if not shown and not first:
        return
    console.print(console.style("evidence:", "bold"))
    for f in shown:
        where = f"{f.node}: " if f.node else ""
        when = ""
        if f.evidence.get("time"):  # a line without its own timestamp is dated by the last one before it: say so
            when = (f" [{f.evidence['time']}]" if f.evidence.get("time_from") != "earlier line"
                    else f" (no timestamp; the last one before it: {f.evidence['time']})")
        console.print(f"  {where}[{f.id}] line {f.evidence['line']}{when}{printed_by_words(f.evidence)}: "
                      f"{f.evidence['text']}")
    for f in first:
        fe = f.evidence["first_error"]
        where = f"{f.node}: " if f.node else ""
        console.print(f"  {where}first error line {fe['line']}: {fe['text']}")
