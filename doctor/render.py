"""Turn a Report into what people and machines read: grouped text, the JSON document, a JUnit file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from doctor.console import Console
from doctor.report import CheckStatus, Finding, Report, Severity, short_name, sorted_findings

_MARK = {
    Severity.ERROR: ("✗", "red"),
    Severity.WARNING: ("!", "yellow"),
    Severity.INFO: ("i", "blue"),
}
_CHECK_MARK = {
    CheckStatus.PASS: ("✓", "green"),
    CheckStatus.WARN: ("!", "yellow"),
    CheckStatus.FAIL: ("✗", "red"),
    CheckStatus.SKIP: ("-", "dim"),
    CheckStatus.CRASH: ("☠", "magenta"),
}


def emit(report: Report, console: Console, *, strict: bool = False,
         before_summary: Callable[[], None] | None = None) -> int:
    """Write the report the way the console is set up and return the exit code. `before_summary`: a command's
    own text block (explain's evidence) printed after the findings, so the summary line stays the last line."""
    if strict:
        report.extra["strict"] = True  # JSON readers see why warnings give exit 1
    if console.json_mode:
        console.emit_json(report.to_dict())
    else:
        render_text(report, console, strict=strict, before_summary=before_summary)
    return report.exit_code(strict=strict)


def render_text(report: Report, console: Console, *, strict: bool = False,
                before_summary: Callable[[], None] | None = None) -> None:
    """Findings grouped by the component to change, worst first. `-q` keeps errors, warnings and the
    summary line; `-v` adds detail of info findings, evidence, sources and every check that ran."""
    c = console

    def say(text: str = "") -> None:
        c.print(text, min_verbosity=-1)

    quiet = c.verbosity < 0
    if report.profile and not quiet:
        name = report.profile.get("name") or "none"
        c.print(c.style(f"profile: {name}", "bold") + c.style(f"  ({report.profile.get('reason', '')})", "dim"))
    know = report.extra.get("knowledge")
    if isinstance(know, dict) and not quiet:
        n = know.get("newest") or {}
        copy = "packaged" if know.get("copy") == "packaged" else f"{know.get('dir')} ({know.get('copy')})"
        c.print(c.style(f"knowledge: {know.get('date')}, {copy} (newest known: verl {n.get('verl')}, vllm {n.get('vllm')}, "
                        f"vllm-ascend {n.get('vllm-ascend')}, torch-npu {n.get('torch-npu')}, CANN {n.get('cann')}; "
                        f"PyPI read {know.get('pypi_read')})", "dim"))
    if report.nodes:
        for n in report.nodes:
            if quiet and n.get("ok"):
                continue
            mark = c.style("✓", "green") if n.get("ok") else c.style("✗", "red")
            say(f"{mark} node {n['node']}" + (f": {n['error']}" if n.get("error") else ""))
    by_area: dict[str, list[Finding]] = defaultdict(list)
    for f in sorted_findings(report.findings):
        if quiet and f.severity is Severity.INFO:
            continue
        by_area[f.components[0]].append(f)
    checks_by_area: dict[str, list] = defaultdict(list)
    for ch in report.checks:
        checks_by_area[ch.area].append(ch)
    areas = list(dict.fromkeys([*by_area.keys(), *(checks_by_area.keys() if c.verbosity >= 1 else [])]))
    # a command line already printed for an earlier finding (on the same node) is said once: a profile's stack
    # line fixes many requirement findings, and 17 copies of it read as 17 runs (--json keeps every finding's)
    printed: dict[tuple[str | None, str], str] = {}
    for area in areas:
        fs = by_area.get(area, [])
        shown = checks_by_area.get(area, []) if c.verbosity >= 1 else []
        # the header is the worst of what is listed under it: its findings and (with -v) its checks
        worst = max([f.severity.rank for f in fs] + [ch.status.rank for ch in shown], default=-1)
        if worst < 0 and shown and all(ch.status is CheckStatus.SKIP for ch in shown):
            head_mark = ("-", "dim")
        else:
            head_mark = {2: ("✗", "red"), 1: ("!", "yellow")}.get(worst, ("✓", "green"))
        say(c.style(f"[{head_mark[0]}] {area}", head_mark[1], "bold"))
        for f in fs:
            mark, color = _MARK[f.severity]
            where = f" [{short_name(f.node)}]" if f.node else ""  # the node line above names it whole
            key = f" ({f.key})" if f.key else ""
            say(f"    {c.style(mark, color)} {f.title}{key}{where}" + c.style(f"  [{f.id}]", "dim"))
            if f.detail and (c.verbosity >= 1 or f.severity is not Severity.INFO):
                for line in f.detail.splitlines():
                    say(c.style(f"        {line}", "dim"))
            if f.fix:
                say(f"        {c.style('fix:', 'cyan')} {f.fix.text}")
                label = f.id + key
                for cmd in f.fix.commands:
                    first = printed.setdefault((f.node, cmd), label)
                    say(f"          $ {cmd}" if first == label else
                        c.style(f"          (the same command as {first} above)", "dim"))
            if c.verbosity >= 1 and f.evidence:
                ev = ", ".join(f"{k}={v}" for k, v in f.evidence.items())
                say(c.style(f"        evidence: {ev}", "dim"))
            if c.verbosity >= 1 and f.source:
                say(c.style(f"        source: {f.source}", "dim"))
        for ch in shown:
            m, col = _CHECK_MARK[ch.status]
            node = f" [{short_name(ch.node)}]" if ch.node else ""
            if ch.status is CheckStatus.SKIP:
                say(c.style(f"    {m} check {ch.id}{node} skipped: {ch.reason or 'not applicable'}", col))
            else:
                say(c.style(f"    {m} check {ch.id}{node} {ch.status.value} ({duration(ch.seconds)})", col))
                if ch.traceback:
                    for line in ch.traceback.rstrip().splitlines():
                        say(c.style(f"        {line}", "dim"))
    for line in report.extra.get("install_all") or ():  # doctor.checks.install_all
        where = f" [{short_name(line['node'])}]" if line.get("node") else ""
        others = len(line.get("others") or ())
        rest = ("" if not others else f"; {others} other finding's own line above is not in it" if others == 1 else
                f"; {others} other findings' own lines above are not in it")
        kept = " and ".join(line.get("kept") or ())
        rest += f"; {kept} keeps the installed release" if kept else ""
        say(c.style(f"fix all at once{where}", "cyan", "bold") + f" (the install lines of {len(line['findings'])} "
            f"findings above, in one pip run{rest}):")
        say(f"  $ {line['command']}")
        if pull := line.get("torch_first"):  # doctor.checks.torch_first: no torch here to keep pinned
            from doctor.checks.torch_first import sentence

            say(c.style(f"  {sentence(pull)}", "yellow"))
    if before_summary is not None:
        before_summary()
    s = report.summary
    word = {"ok": c.style("ok", "green", "bold"), "warning": c.style("warnings", "yellow", "bold"), "error": c.style("errors", "red", "bold")}[report.status]
    if strict and report.status == "warning":  # the summary says what the exit code does
        word = c.style("failed (strict: warnings fail)", "red", "bold")
    say(f"{report.command}: {word} — {s['error']} error(s), {s['warning']} warning(s), {s['info']} info{_checks_clause(report)}")


def _checks_clause(report: Report) -> str:
    """`; 40 check(s) ran, 8 skipped` — only for commands that run checks (launch and lint validate rules)."""
    if not report.checks:
        return ""
    skipped = sum(1 for ch in report.checks if ch.status is CheckStatus.SKIP)
    ran = len(report.checks) - skipped
    return f"; {ran} check(s) ran" + (f", {skipped} skipped" if skipped else "")


def duration(seconds: float) -> str:
    """A check's time as measured: `37 µs`, `1.4 ms`, `2.31 s`."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs" if seconds >= 1e-6 else "<1 µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def write_junit(report: Report, path: str, console: Console, suite_name: str | None = None, *,
                strict: bool = False) -> None:
    """`--junit FILE` (atomically) or `--junit -` (stdout, whose human text the console already sent to stderr)."""
    xml = junit_xml(report, suite_name, strict=strict)
    console.junit_written = True  # a failure after this keeps the full report (doctor.cli.options.fail)
    if path == "-":
        console.out.write(xml if xml.endswith("\n") else xml + "\n")
        console.out.flush()
        return
    from doctor.atomic import write_text_atomic
    from doctor.errors import DoctorError

    try:
        write_text_atomic(path, xml)
    except OSError as e:
        raise DoctorError(f"cannot write the JUnit file: {e.strerror or e}", source=path) from None


def junit_xml(report: Report, suite_name: str | None = None, *, strict: bool = False) -> str:
    """One testcase per check; error findings of a check become its failure, a crash its error. Under `strict`
    (warnings give exit 1) a check's warnings fail it too: the file a CI publishes agrees with the exit code."""
    # imported here: xml.sax.saxutils pulls in urllib.request/http.client/ssl (~60 ms) that text and JSON never need
    from xml.sax.saxutils import escape, quoteattr

    name = suite_name or f"doctor-{report.command}"
    cases = []
    failures = errors = skipped = 0
    if report.internal_error and not report.checks:
        # the command could not do its job (exit 2, doctor.report.failure_report): one error testcase per finding, as
        # pytest's --junitxml records its own internal error, so the file a CI publishes says why instead of nothing
        for f in report.findings:
            errors += 1
            cases.append(f'  <testcase classname={quoteattr(f"doctor.{report.command}")} name={quoteattr(f.id)} '
                         f'time="0.000000"><error type={quoteattr(f.id)} message={quoteattr(f.title)}>'
                         f'{escape(_finding_text(f))}</error></testcase>')
    for ch in report.checks:
        fs = [f for f in report.findings if f.check == ch.id and f.node == ch.node]
        classname = f"doctor.{report.command}.{ch.area}"
        label = ch.id + (f"[{ch.node}]" if ch.node else "")
        body = ""
        if ch.status is CheckStatus.CRASH:
            errors += 1
            body = f"<error message={quoteattr('check crashed')}>{escape(ch.traceback or '')}</error>"
        elif ch.status is CheckStatus.FAIL or (strict and ch.status is CheckStatus.WARN):
            failures += 1
            failing = (Severity.ERROR, Severity.WARNING) if strict else (Severity.ERROR,)
            msg = "; ".join(f.title for f in fs if f.severity in failing) or "failed"
            text = "\n".join(_finding_text(f) for f in fs)
            body = f"<failure message={quoteattr(msg)}>{escape(text)}</failure>"
        elif ch.status is CheckStatus.SKIP:
            skipped += 1
            body = f"<skipped message={quoteattr(ch.reason or 'not applicable')}/>"
        elif fs:
            body = f"<system-out>{escape(chr(10).join(_finding_text(f) for f in fs))}</system-out>"
        cases.append(f'  <testcase classname={quoteattr(classname)} name={quoteattr(label)} time="{ch.seconds:.6f}">{body}</testcase>')
    total = sum(c.seconds for c in report.checks)
    head = (f'<testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}" time="{total:.6f}">')
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + head + "\n" + "\n".join(cases) + "\n</testsuite>\n</testsuites>\n"


def _finding_text(f: Finding) -> str:
    """A finding as a CI page shows it: what, why (the detail: "npu-smi was not found" and "npu-smi lists no device"
    are one title with two different causes), the fix and its commands, as the console prints them."""
    s = f"[{f.severity.value}] {f.id}: {f.title}"
    if f.detail:
        s += "".join(f"\n  {line}" for line in f.detail.splitlines())
    if f.fix:
        s += f"\n  fix: {f.fix.text}" + "".join(f"\n    $ {cmd}" for cmd in f.fix.commands)
    return s
