"""Turn a Report into what people and machines read: grouped text, the JSON document, a JUnit file."""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

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
    elif console.human is not console.out:  # people's text on stderr: line by line, as it goes
        render_text(report, console, strict=strict, before_summary=before_summary)
    else:
        _render_at_once(report, console, strict, before_summary)
    return report.exit_code(strict=strict)


def _render_at_once(report: Report, console: Console, strict: bool, before_summary: Callable[[], None] | None) -> None:
    """The text report on stdout in one write. Under PYTHONUNBUFFERED=1 (container images set it) each line was a
    write of its own, so `doctor check | head -1` met the closed pipe (141) whenever head exited before the last
    line; written at once, a report shorter than the pipe's buffer is whole in it and the run keeps its own exit
    code, as `seq 3 | head -1` does. A closed pipe or a full disk still fails that one write."""
    import io

    out, buf = console.out, io.StringIO()
    console.out = buf
    try:
        render_text(report, console, strict=strict, before_summary=before_summary)
    finally:
        console.out = out
        if text := buf.getvalue():
            console.print(text.removesuffix("\n"), min_verbosity=-1)


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
        folds = fold(fs) if c.verbosity <= 0 else {}
        for f in fs:
            if id(f) in folds:
                if (group := folds[id(f)]) is not None:
                    _say_fold(group, c, say, printed)
                continue
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
        same = printed.get((line.get("node"), line["command"]))
        if same is not None:  # one folded block held every finding it stands for: its line is this one
            say(c.style(f"fix all at once{where}", "cyan", "bold") + f": the command of {same} above{rest}")
        else:
            say(c.style(f"fix all at once{where}", "cyan", "bold") + f" (the install lines of {len(line['findings'])} "
                f"findings above, in one pip run{rest}):")
            say(f"  $ {line['command']}")
        if pull := line.get("torch_first"):  # doctor.checks.torch_first: no torch here to keep pinned
            from doctor.checks.torch_first import sentence

            say(c.style(f"  {sentence(pull)}", "yellow"))
    if before_summary is not None:
        before_summary()
    if note := _name_note(report):
        say(c.style(note, "dim"))
    s = report.summary
    word = {"ok": c.style("ok", "green", "bold"), "warning": c.style("warnings", "yellow", "bold"), "error": c.style("errors", "red", "bold")}[report.status]
    if strict and report.status == "warning":  # the summary says what the exit code does
        word = c.style("failed (strict: warnings fail)", "red", "bold")
    say(f"{report.command}: {word} — {s['error']} error(s), {s['warning']} warning(s), {s['info']} info{_checks_clause(report)}")


def _name_note(report: Report) -> str | None:
    """doctor.invocation's note when a finding tells the user to run `doctor …` and that name does not run this
    doctor (`.venv/bin/doctor check`, the README's first line, with the venv not activated)."""
    from doctor.invocation import mentions_doctor, name_note

    texts = [t for f in report.findings for t in (f.detail, *((f.fix.text, *f.fix.commands) if f.fix else ()))]
    return name_note() if mentions_doctor(texts) else None


def _checks_clause(report: Report) -> str:
    """`; 40 check(s) ran, 8 skipped` — only for commands that run checks (launch and lint validate rules); smoke's
    are its stages (preflight, workload, launch spec, devices, run), said so; explain's one entry (the log read
    against the signatures) would say nothing a user can use."""
    if not report.checks or report.command == "explain":
        return ""
    skipped = sum(1 for ch in report.checks if ch.status is CheckStatus.SKIP)
    ran = len(report.checks) - skipped
    what = "stage(s)" if report.command == "smoke" else "check(s)"
    return f"; {ran} {what} ran" + (f", {skipped} skipped" if skipped else "")


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
    (warnings give exit 1) a check's warnings fail it too: the file a CI publishes agrees with the exit code. Times
    have three decimals, as pytest writes them: Jenkins' xUnit junit-10.xsd (SUREFIRE_TIME) refuses more."""
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
                         f'time="0.000"><error type={quoteattr(f.id)} message={quoteattr(f.title)}>'
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
        cases.append(f'  <testcase classname={quoteattr(classname)} name={quoteattr(label)} time="{ch.seconds:.3f}">{body}</testcase>')
    total = sum(c.seconds for c in report.checks)
    head = (f'<testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}" time="{total:.3f}">')
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


# Folding: one block for a declarer's unmet requirements that read alike. A venv with PyPI's verl 0.9.1 installed
# `--no-deps` has one finding per requirement (28) and per undeclared import (9), each with the same paragraph and
# fix sentence around another name: 171 lines, most of them saying "verl's requirements are not installed". Findings stay separate in the report
# (--json, --junit, the counts): only the console text folds them, and `-v` prints every block in full.

# the finding ids that fold, with how a group's title reads: the masked title of one finding -> the group's
_PLURAL = {
    "requirement-missing": (re.compile(r"^(?P<decl>.+?) requires <name>(?P<why>.*), which is not installed$"),
                            "{decl} requires {n} packages{why} that are not installed"),
    "requirement-version-unmet": (
        re.compile(r"^(?P<decl>.+?) requires <name>(?P<why>.*), but <name> <installed> is installed$"),
        "{decl} requires {n} packages{why} at releases other than the installed ones"),
    # doctor.checks.packages.imports_at_load: what verl imports at load and does not declare
    "package-imports-undeclared-missing": (
        re.compile(r"^(?P<decl>.+?) imports <name> when its trainer loads, and <name> is not installed(?P<why>)$"),
        "{decl} imports modules of {n} packages when its trainer loads, and they are not installed"),
}


@dataclass(frozen=True)
class Fold:
    """Findings printed as one block: a title counting them, one line per requirement (what only that finding says),
    the detail and the fix they share, and one command that does every finding's."""

    members: tuple[Finding, ...]
    who: str  # the declaring package and release: `verl 0.9.1`
    title: str
    items: tuple[tuple[str, str], ...]  # (the requirement, what only its finding says)
    detail: str
    fix: str
    commands: tuple[str, ...]


def _tokens(f: Finding) -> list[tuple[str, str]]:
    """What differs from one requirement finding to the next, longest first, with the placeholder it reads as. The
    range, the name and a module read alike: `accelerate` is both, `tensordict>=0.8.0` names `tensordict`, and
    pillow's `PIL` is `orjson`'s `orjson`."""
    from packaging.requirements import InvalidRequirement, Requirement

    from doctor.knowledge.pipcheck import bare

    ev = f.evidence
    out = []
    req = ev.get("requirement")
    if isinstance(req, str) and req:
        out.append((bare(req), "<name>"))
        try:
            out.append((Requirement(req).name, "<name>"))  # as written: `qwen_vl_utils`, not `qwen-vl-utils`
        except InvalidRequirement:
            pass
    for name in (ev.get("requires"), (f.key or "").partition(":")[2]):
        if isinstance(name, str) and name:
            out.append((name, "<name>"))
    if isinstance(ev.get("installed"), str) and ev["installed"]:
        out.append((ev["installed"], "<installed>"))
    out.extend((m, "<name>") for m in ev.get("modules") or () if isinstance(m, str))  # `PIL` of pillow
    return sorted({t for t in out if t[0]}, key=lambda t: -len(t[0]))


def _mask(text: str, tokens: list[tuple[str, str]]) -> str:
    """`text` with each token (as a whole word: `torch` is not masked inside `torch-npu`) read as its placeholder."""
    for token, ph in tokens:
        text = re.sub(rf"(?<![\w.+-]){re.escape(token)}(?![\w+-]|\.\w)", ph, text)
    return text


def _sentences(text: str) -> list[str]:
    """A paragraph cut after each `. ` (a version's dots have no space after them)."""
    return [s for s in re.split(r"(?<=\.)\s+", text.strip()) if s]


def fold(fs: list[Finding]) -> dict[int, Fold | None]:
    """Groups of two or more findings of one area (in report order) that print as one block: the same id, node,
    severity and declaring package, titles and fixes that differ only in the requirement's name, range and installed
    release, and one command that does all their fixes. The first member maps to its Fold, the others to None; a
    finding not in any group is not in the result (keyed by id(): a Finding, its evidence a dict, does not hash).
    Details may differ: what only one finding says goes on its line."""
    groups: dict[tuple[Any, ...], list[tuple[Finding, list[tuple[str, str]]]]] = defaultdict(list)
    for f in fs:
        if f.id not in _PLURAL or not isinstance(_label(f), str):
            continue
        tokens = _tokens(f)
        fix_own = tuple(s for s in _sentences(_mask(_fix_text(f), tokens)) if "<" in s) if f.fix else None
        # the masked title names the declaring package and release (`verl 0.9.1 requires <name>`)
        groups[(f.id, f.node, f.severity, _mask(f.title, tokens), fix_own)].append((f, tokens))
    out: dict[int, Fold | None] = {}
    for (fid, _, _, title, _), members in groups.items():
        m = _PLURAL[fid][0].match(title)
        if len(members) < 2 or m is None or "<" in m["decl"] + m["why"]:
            continue
        fs = [f for f, _ in members]
        if len({f.fix.commands if f.fix else () for f in fs}) == 1:
            commands = fs[0].fix.commands if fs[0].fix else ()
        else:  # the findings whose pip lines one run does (install_all); one with another option stays apart
            # imported here: it brings `packaging` (~20 ms), which a report with no such group (explain's) never needs
            from doctor.checks.install_all import install_all

            kept = list(dict.fromkeys(k for f in fs if f.fix for k in f.fix.kept))
            lines = install_all([_unpinned(f) for f in fs], {fs[0].node: kept} if kept else None)
            if len(lines) != 1:
                continue
            covered = lines[0]["findings"]  # `id:key`, or the id of a finding without a key
            if any(not f.key for f in fs) and len(covered) != len(fs):
                continue
            members = [(f, t) for f, t in members if (f"{f.id}:{f.key}" if f.key else f.id) in covered]
            commands = (lines[0]["command"],)
        if len(members) < 2:
            continue
        out[id(members[0][0])] = _fold(m["decl"], _PLURAL[fid][1].format(decl=m["decl"], why=m["why"], n=len(members)),
                                       members, commands)
        out.update({id(f): None for f, _ in members[1:]})
    return out


def _fold(who: str, title: str, members: list[tuple[Finding, list[tuple[str, str]]]], commands: tuple[str, ...]) -> Fold:
    """The block of one group: the sentences of the details every finding has said once (a name read as `<name>`),
    the rest on each finding's line; the fix's sentences once; `commands` does every finding's fix."""
    fs = [f for f, _ in members]
    pieces = [[(_mask(s, tokens), s) for s in _sentences(f.detail)] for f, tokens in members]
    same = {s for s, _ in pieces[0] if all(any(s == o for o, _ in p) for p in pieces[1:])}
    own = [" ".join(s for masked, s in p if masked not in same) for p in pieces]
    # the words every finding's own sentence starts and ends with (names masked) are said once too, where it stood
    common = _common_words([" ".join(m for m, _ in p if m not in same) for p in pieces]) if all(own) else None
    mid = " ".join([*common[0], "…", *common[1]]) if common else None
    shared = list(dict.fromkeys(s if s in same else mid for s, _ in pieces[0]))
    if common is not None:
        head, tail = common
        own = [_unwrap(" ".join(o.split()[len(head):len(o.split()) - len(tail)]).rstrip(",;:")) for o in own]
    fix = " ".join(dict.fromkeys(s for f, tokens in members if f.fix for s in _sentences(_mask(_fix_text(f), tokens))))
    if pull := list(dict.fromkeys(p for f in fs if f.fix for p in f.fix.torch_first)):
        from doctor.checks.torch_first import sentence

        fix += " " + sentence(pull, "this fix" if len(commands) > 1 else "this line")
    items = [str(_label(f)) for f in fs]
    return Fold(tuple(fs), who, title, tuple(zip(items, own, strict=True)), _plural(" ".join(x for x in shared if x)),
                _plural(fix), commands)


# A shared sentence says each listed requirement where one finding named its own: the masked name, read in the
# plural (the checks' sentences name one package; the block lists them above).
_PLURAL_WORDS = (
    (re.compile(r"`import <name>` …"), "these imports"),
    (re.compile(r"declares this requirement"), "declares these requirements"),
    (re.compile(r"and adds this one"), "and adds these"),
    (re.compile(r"neither installs it with"), "neither installs them with"),
    (re.compile(r"without it that import fails"), "without them those imports fail"),
    (re.compile(r"nor reports it missing"), "nor reports them missing"),
    (re.compile(r"needs it fails"), "needs them fails"),
    (re.compile(r"leaves it out"), "leaves them out"),
    (re.compile(r"imports … in what"), "imports them in what"),
    (re.compile(r"The import raises"), "Each import raises"),
    (re.compile(r"(?<=[.:] )No distribution named <name> is|^No distribution named <name> is"), "None of them is"),
    (re.compile(r"no distribution named <name> is"), "none of them is"),
    (re.compile(r"<name>'s"), "their"),
    (re.compile(r"does not name <name>"), "names none of them"),
    (re.compile(r"Install <name>"), "Install them"),
    (re.compile(r"'<name>'"), "'…'"),
    (re.compile(r"`import <name>`"), "`import …`"),
    (re.compile(r"<name>"), "each of them"),
    (re.compile(r"<installed>"), "the installed release"),
)


def _plural(text: str) -> str:
    """`text` with the placeholders _mask left read as words about the listed requirements."""
    for pattern, words in _PLURAL_WORDS:
        text = pattern.sub(words, text)
    return text


def _unwrap(text: str) -> str:
    """`(verl/utils/tracking.py:29)` -> `verl/utils/tracking.py:29`: a line's own words without the parentheses
    that held them in the sentence."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") and "(" not in text[1:-1] else text


def _label(f: Finding) -> str | None:
    """A folded finding's line: the requirement as its fix installs it, the installed release when it is the wrong
    one, the module imported when its name is not the package's (`pillow (import PIL)`); None: not one to fold."""
    from doctor.knowledge.pipcheck import bare

    ev = f.evidence
    req = ev.get("requirement") if isinstance(ev.get("requirement"), str) else ev.get("requires")
    if not isinstance(req, str) or not req:
        return None
    inst, mods = ev.get("installed"), [m for m in ev.get("modules") or () if isinstance(m, str)]
    return (bare(req) + (f" ({inst} is installed)" if isinstance(inst, str) and inst else "")
            + (f" (import {', '.join(mods)})" if mods and mods != [req] else ""))


def _fix_text(f: Finding) -> str:
    """The fix's sentence without the torch-first note doctor.checks.torch_first.with_torch_first put at its end (it
    names the finding's own package): the group says it once, of all the packages in it that pull torch."""
    from doctor.checks.torch_first import sentence

    text = f.fix.text if f.fix else ""
    if f.fix and f.fix.torch_first:
        for then in ("this line", "this fix"):
            text = text.removesuffix(" " + sentence(f.fix.torch_first, then))
    return text


def _unpinned(f: Finding) -> Finding:
    """The finding with the installed torch's pin (`fix.kept`, which doctor.checks.torch_first.with_torch_kept put
    at the end of its pip lines) taken off them again: the group's one line gets it back once, last, from
    install_all's `keep`, as the `fix all at once` line does."""
    if f.fix is None or not f.fix.kept:
        return f
    tails = tuple(f" {shlex.quote(k)}" for k in f.fix.kept)
    cmds = tuple(next((c[:-len(t)] for t in tails if c.endswith(t)), c) for c in f.fix.commands)
    return replace(f, fix=replace(f.fix, commands=cmds))


def _common_words(texts: list[str]) -> tuple[list[str], list[str]] | None:
    """The words every text starts with and ends with, when they are most of each text (what differs is a module
    and a file in one sentence), else None: the shared words are said once, the rest on each finding's line."""
    words = [t.split() for t in texts]
    short = min(len(w) for w in words)
    head = 0
    while head < short and len({w[head] for w in words}) == 1:
        head += 1
    tail = 0
    while tail < short - head and len({w[len(w) - 1 - tail] for w in words}) == 1:
        tail += 1
    if head + tail >= short or 2 * (head + tail) < short:  # a text with nothing of its own, or mostly its own
        return None
    return words[0][:head], words[0][len(words[0]) - tail:]


def _say_fold(g: Fold, c: Console, say: Callable[[str], None], printed: dict[tuple[str | None, str], str]) -> None:
    """One group as the console prints it (see Fold)."""
    first = g.members[0]
    mark, color = _MARK[first.severity]
    where = f" [{short_name(first.node)}]" if first.node else ""
    say(f"    {c.style(mark, color)} {g.title}{where}" + c.style(f"  [{first.id}]", "dim"))
    for req, own in g.items:
        say(f"        - {req}" + c.style(f": {own}", "dim") if own else f"        - {req}")
    if g.detail and first.severity is not Severity.INFO:
        say(c.style(f"        {g.detail}", "dim"))
    if g.fix:
        say(f"        {c.style('fix:', 'cyan')} {g.fix}")
    label = f"{first.id} ({g.who}, {len(g.members)} findings)"
    for cmd in g.commands:
        seen = printed.setdefault((first.node, cmd), label)
        say(f"          $ {cmd}" if seen == label else c.style(f"          (the same command as {seen} above)", "dim"))
