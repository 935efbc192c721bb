"""`doctor explain LOG|-`: match a failure log against the known signatures and say what to change."""

from __future__ import annotations

import click

from doctor.cli.options import doctor_command, output_options


@click.command("explain")
@click.argument("log", metavar="LOG|-")
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
@output_options
@doctor_command
def command(console, log: str, signatures_path: str | None, context_lines: int) -> int:
    """Explain a failure LOG (a file, or - for stdin): one finding per known problem, with its fix.

    The log is streamed, so multi-gigabyte Ray logs are fine. Exit 0 when no error signature matched
    (an info finding says when nothing matched at all), 1 when one did, 2 when the log or the
    signature database cannot be read.
    """
    import time

    from doctor.explain.signatures import explain_path, load_signatures
    from doctor.render import emit
    from doctor.report import CheckResult, CheckStatus, Report, Severity

    db = load_signatures(signatures_path)
    t0 = time.perf_counter()
    findings, lines_read = explain_path(log, db=db, context_lines=context_lines)
    report = Report(
        command="explain",
        findings=findings,
        checks=[CheckResult(id="log-signatures", area="explain", status=CheckStatus.of(findings),
                            seconds=time.perf_counter() - t0)],
        extra={"log": log, "lines": lines_read, "signatures": {"path": db.path, "count": len(db)}},
    )
    if not console.json_mode:
        console.print(console.style(f"log: {log} ({lines_read} lines, {len(db)} signatures)", "dim"))
    code = emit(report, console)
    if not console.json_mode and console.verbosity >= 0:
        shown = [f for f in findings if f.severity is not Severity.INFO and "line" in f.evidence]
        if shown:
            console.print(console.style("evidence:", "bold"))
            for f in shown:
                console.print(f"  [{f.id}] line {f.evidence['line']}: {f.evidence['text']}")
    return code
