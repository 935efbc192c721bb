"""From one log's hits to the findings a user reads, ranked root cause first.

Rules, in the order they apply:

1. A signature whose `context` rules did not all match is dropped; the lines it won go to the best
   signature without context. The `assert`-line catch-all is dropped where each line it matched is a frame's code
   in the traceback of another exception the log shows (`_code_of_another_exception`).
2. A signature listed in another reported signature's `supersedes` is dropped (a symptom explained by its
   root cause), and `fallback` signatures are dropped when anything else was reported.
3. One finding per signature; the evidence is the first matching line (with its line number, a few context
   lines, the occurrence count and, when the log has one, its timestamp).
   A signature every occurrence of which is the exception line of a traceback the log shows as handled (see 4;
   doctor.explain.events marks it: logged at warning / info level with its traceback, or `Exception ignored in:`,
   and the process went on; logged at error level, `logger.exception(msg)`, and the same process logging on after
   it without saying it stops), or a line printed as a Python warning (`path:N: UserWarning: ...`), follows the same rule as attribution: it is at most a warning (a notice at info
   level) titled `(handled: the run went on)`, not the run's failure, and it does not stand as the first root
   cause that makes later events knock-ons. A handled event after which the process went on is not the run's
   failure. Except a `lasting` signature: what it reports outlives the exception that carried it — a fault of
   the device (a task that failed on the NPU, an HBM / link / RAS fault) or of its communication (an HCCL / NCCL
   communicator that failed or timed out) leaves the stream, device or communicator broken, and catching the
   exception mends none of it; the next step fails on it, so it keeps its severity and rank. One occurrence not
   handled (or more occurrences than the hit lists) keeps the signature's severity too, and the finding shows the
   first listed occurrence not handled, which made it an error (`shown_hit`).
4. Attribution (doctor.explain.attribution) explains the error events no signature explains, and those only a
   generic signature (`fallback`, or `yields = true`: python-api-unexpected-keyword, python-check-failed, the
   compiler ones, pip's no-matching-distribution) matched: the component that ships the frame, path, library,
   module or code the event names. Where it knows something, the generic signature's finding gives way to it. A
   signature whose context never came did not fire: the rules read its event as its runner-up's, or as one no
   signature matched. Only events before the first specific root-cause finding are attributed (what comes after
   is a knock-on).
   A traceback the log shows as handled (logged at warning or info level, or CPython's `Exception ignored in:`)
   gets at most a warning (a notice at info level) that says so: the process caught it and went on.
   An exception or logged line that nothing there attributes is looked up among the messages the packages'
   sources write (doctor.explain.messages, `message-owner`); a warning ranks as a knock-on, never a root cause.
5. Ranking: root causes before knock-on errors (`role = "knock-on"`: HCCL timeouts, dead peers, ...), catch-all
   `fallback` signatures last, then by first occurrence; a logged error record that heads an exception's traceback
   (`logger.exception(msg)`) right after that exception. `evidence.rank` and `evidence.role` say where each
   finding stands.

A log with no readable text gives the warning `log-unreadable`; a log whose lines match no signature gives the
info finding `no-known-signature`, naming its first error-looking line when there is one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from doctor.explain import timestamps
from doctor.explain.attribution import LAST_RESORT_ID, Attribution, attribute
from doctor.explain.db import Signature, SignatureDB
from doctor.explain.events import is_python_warning
from doctor.explain.processes import printed_by
from doctor.explain.scanner import HEAD_LINES, Hit, ScanResult
from doctor.report import Finding, Fix, Severity

NO_MATCH_ID = "no-known-signature"
UNREADABLE_ID = "log-unreadable"
ROLE_LABEL = {"root": "root-cause", "knock-on": "knock-on"}


def kept_hits(db: SignatureDB, res: ScanResult) -> dict[str, Hit]:
    """The hits that become findings (rules 1 and 2)."""
    hits = dict(res.hits)
    for sig_id in list(hits):
        if unmet(db.get(sig_id), res):
            del hits[sig_id]
            for other_id, hit in res.runner_up.get(sig_id, {}).items():
                cur = hits.get(other_id)
                if cur is None or hit.line < cur.line:
                    if cur is not None:
                        hit.count += cur.count
                        hit.warned += cur.warned
                    hits[other_id] = hit
                else:
                    cur.count += hit.count
                    cur.warned += hit.warned
    if ASSERT_LINE_ID in hits and _code_of_another_exception(hits[ASSERT_LINE_ID], res):
        del hits[ASSERT_LINE_ID]
    superseded = {s for sig_id in hits for s in db.get(sig_id).supersedes}
    kept = {k: v for k, v in hits.items() if k not in superseded}
    if any(not db.get(k).fallback for k in kept):
        kept = {k: v for k, v in kept.items() if not db.get(k).fallback}
    handled = handled_lines(res)
    return {k: v if db.get(k).lasting else shown_hit(v, handled) for k, v in kept.items()}


def handled_lines(res: ScanResult) -> dict[int, str]:
    """The exception lines of the tracebacks the log shows as handled, each with how (the event's `handled` fact)."""
    return {ev.line: how for ev in res.events if (how := ev.facts.get("handled"))}


def shown_hit(hit: Hit, handled: dict[int, str]) -> Hit:
    """The hit as its finding shows it (rule 3): where its first occurrence was handled (or printed as a Python
    warning) and a later listed one was not, that later one made the signature an error, so its line, text, context
    and time are what the user reads and what ranks it (its count and line list stay the whole hit's). A `lasting`
    signature is not passed here: its first occurrence, caught or not, is the fault that broke the run."""
    if hit.line not in handled and not is_python_warning(hit.text):
        return hit
    later = next((o for o in hit.others if o.line not in handled and not is_python_warning(o.text)), None)
    if later is None:
        return hit
    return replace(hit, line=later.line, text=later.text, before=later.before, after=later.after, time=later.time)


# The catch-all for an `assert` statement's source line in a traceback (its AssertionError line cut off the paste).
ASSERT_LINE_ID = "python-assert-statement-failed"


def _code_of_another_exception(hit: Hit, res: ScanResult) -> bool:
    """Every line the assert-line catch-all matched is a frame's code inside a traceback whose exception line the log
    shows and which is not an AssertionError (`assert n % size == 0` over `TypeError: not all arguments converted
    during string formatting`: a value of the wrong type failed inside the condition): that exception says what
    failed, and the assert is only where; its own finding tells it. An AssertionError's traceback keeps the
    catch-all (a bare `AssertionError` says nothing the assert line does not)."""
    lines = hit.lines or [hit.line]
    if hit.count != len(lines):
        return False
    spans = [(ev.line - int(ev.facts["traceback_above"]), ev.line) for ev in res.events
             if ev.kind == "python" and "traceback_above" in ev.facts and ev.exc_type
             and ev.exc_type != "AssertionError"]
    return all(any(start < n < end for start, end in spans) for n in lines)


def unmet(sig: Signature, res: ScanResult) -> bool:
    """The signature's context never came, so it does not fire; a `quoted` signature's context is not asked of a
    log that is only a quoted message (at most SHORT_LOG lines)."""
    return bool(sig.context) and sig.id in res.unmet_context and not (sig.quoted and res.lines_read <= SHORT_LOG)


def rank_key(sig: Signature, hit: Hit) -> tuple[int, int, int, int]:
    return (1 if sig.role == "knock-on" else 0, 1 if sig.fallback else 0, hit.line, 0)


def generic(sig: Signature) -> bool:
    """A class signature that gives way to attribution where attribution knows more."""
    return sig.fallback or sig.yields


HCCL_CODE_ID = "hccl-code-owner"


def _code_reads_knock_on(sig: Signature, ev: Any, first_root: int | None) -> bool:
    """A knock-on signature (`HCCL function error: ` → hccl-collective-failed: "read the HCCL code next to it") on a
    line that carries torch_npu's HcclResult code, in a log no root-cause signature explains: the code names the
    layer that refused the call (doctor.explain.hccl_codes), which the knock-on's generic words do not."""
    return sig.role == "knock-on" and first_root is None and "hccl_code" in ev.facts


def handled_hits(db: SignatureDB, res: ScanResult, hits: dict[str, Hit]) -> dict[str, str]:
    """The signatures of `hits` whose every occurrence is the exception line of a traceback the log shows as handled
    (rule 3), each with how it was handled (`warning`, `info`, `ignored`: the event's `handled` fact), or a line the
    program printed as a Python warning (`warned`: `warnings.warn` after catching what it names); never a `lasting`
    one. An occurrence the hit does not list (more than it keeps) counts as not handled."""
    handled = handled_lines(res)
    out: dict[str, str] = {}
    for sig_id, hit in hits.items():
        lines = hit.lines or [hit.line]
        if db.get(sig_id).lasting:
            continue
        if hit.warned and hit.warned == hit.count:
            # a Python warning (`path:N: UserWarning: x is not available: ModuleNotFoundError(...)`), each time: the
            # program caught what it warns of and went on (the scanner counts them: a log's warnings are not all
            # kept as events)
            out[sig_id] = "warned"
        elif hit.count == len(lines) and all(n in handled for n in lines):
            out[sig_id] = handled[lines[0]]
    return out


def attributions(db: SignatureDB, res: ScanResult, kept: dict[str, Hit],
                 snapshot: object = None) -> tuple[list[tuple[Attribution, int, bool]], set[str]]:
    """The attributed events (one per attribution id: the first, with its count and whether it was raised while
    handling an earlier exception: a knock-on of its cause) and the generic signatures they replace."""
    # Only an error-level signature is a root cause: a notice (vLLM's pre-plugin platform message, a deprecation)
    # at the top of a log must not hide the failure below it; nor does a handled one (rule 3): the process went on.
    handled = handled_hits(db, res, kept)
    specific = [h.line for k, h in kept.items() if not generic(db.get(k)) and db.get(k).role == "root"
                and db.get(k).severity is Severity.ERROR and k not in handled]
    first_root = min(specific) if specific else None
    # a signature whose context never came did not fire: it makes no catch-all line a symptom; nor does one handled
    handled_any = handled_hits(db, res, res.hits)
    any_specific = any(not db.get(k).fallback and db.get(k).severity is Severity.ERROR and not unmet(db.get(k), res)
                       and k not in handled_any for k in res.hits)
    found: dict[tuple[str, Severity], list] = {}
    printers: dict[tuple[str, Severity], tuple[set[str], list[int]]] = {}  # the processes that printed each, Ray's folds
    yielded: set[str] = set()
    for ev in res.events:
        sig = ev.signature
        if sig is not None and unmet(db.get(sig), res):
            # its context never came: the signature did not fire; the line's runner-up (if any) explains it
            sig = next((k for k, h in res.runner_up.get(sig, {}).items() if h.line == ev.line), None)
        coded = sig is not None and _code_reads_knock_on(db.get(sig), ev, first_root)
        if sig is not None and not generic(db.get(sig)) and not coded:
            continue  # a specific signature explains the line
        if sig is not None and db.get(sig).fallback and any_specific:
            continue  # a catch-all line in a log where something specific matched: a symptom
        if first_root is not None and ev.line > first_root:
            continue
        if ev.facts.get("repeats_below"):
            continue  # a printed heading that repeats the exception below it: that exception's finding tells it
        if sig != ev.signature:
            ev = replace(ev, signature=sig)  # the attribution rules read the signature that fired, if any
        att = attribute(ev, snapshot)
        if att is not None and (how := ev.facts.get("handled")):
            att = as_handled(att, how)
        if coded and (att is None or att.id != HCCL_CODE_ID):
            continue  # only the code's own reading replaces the knock-on signature
        if att is None or (sig is not None and att.id == "error-code-owner"):
            continue  # an error code's family is what its signature already says
        if att.id == LAST_RESORT_ID and sig is not None:
            continue  # the last resort never replaces a signature (it reads only names on a line)
        if sig is not None:
            yielded.add(sig)
        if below := ev.facts.get("heads_below"):
            # a logged record heading the traceback of an exception (`logger.exception(msg)`): ranked with it
            att = replace(att, extra={**att.extra, "exception_line": ev.line + int(below)})
        # one per id and severity (a warning never absorbs a later error of the same id); a package's warnings one
        # per package
        key = (f"{att.id}:{att.components[0]}" if att.id == "warning-from-package" else att.id, att.severity)
        if key in found:
            found[key][1] += 1
        else:
            found[key] = [att, 1, ev.chained_from is not None]
        seen = printers.setdefault(key, (set(), [0]))
        if ev.process is not None:
            seen[0].add(ev.process)
        seen[1][0] += ev.repeated
    return [(with_processes(a, *printers[key]), n, chained) for key, (a, n, chained) in found.items()], yielded


def with_processes(att: Attribution, processes: set[str], folded: list[int]) -> Attribution:
    """An attribution whose events several processes printed says which (the same traceback from every rank is one
    finding, not one per rank), and how many more copies Ray folded into them."""
    said = printed_by(processes, folded[0])
    return replace(att, extra={**att.extra, **said}) if said else att


# how a traceback was shown as handled (doctor.explain.events: the line above its `Traceback` header) -> what it says
# and the severity its attribution keeps at most
_HANDLED = {
    "warning": ("logged at warning level (`logger.warning(msg, exc_info=True)`)", Severity.WARNING),
    "info": ("logged at info level (`logger.info(msg, exc_info=True)`)", Severity.INFO),
    "ignored": ("reported by the interpreter as `Exception ignored in: ...` (raised in `__del__` or a callback, "
                "then dropped)", Severity.WARNING),
    "warned": ("printed as a Python warning (`warnings.warn`: `path:N: UserWarning: ...`)", Severity.WARNING),
    "exception": ("logged at error level with its traceback (`logger.exception(msg)`), the process logging on after "
                  "it as before", Severity.WARNING),
}


def as_handled(att: Attribution, how: str) -> Attribution:
    """A traceback the log shows as handled (a `logger.warning(msg, exc_info=True)` record, CPython's `Exception
    ignored in:`) did not end the run: the process caught it and went on. Its attribution still says where it was
    raised, but as at most a warning (an info-level record: a notice) that says it was handled, so it never ranks
    above the run's failure nor makes a log whose only traceback was handled an error."""
    most, title, detail = _handled_words(how, att.title, att.detail)
    if att.severity.rank <= most.rank:
        return att
    return replace(att, severity=most, title=title, detail=detail, extra={**att.extra, "handled": how})


def handled_severity(severity: Severity, how: str) -> Severity:
    """The severity a traceback handled `how` keeps: at most a warning (a notice at info level)."""
    most = _HANDLED.get(how, _HANDLED["warning"])[1]
    return severity if severity.rank <= most.rank else most


def _handled_words(how: str, title: str, detail: str) -> tuple[Severity, str, str]:
    """The severity a handled traceback keeps at most, and the title and detail that say it was handled."""
    said, most = _HANDLED.get(how, _HANDLED["warning"])
    return most, f"{title} (handled: the run went on)", (
        f"Handled, not the run's failure: this traceback was {said} and the process went on; read it only if the "
        f"run misbehaved after it. {detail}").rstrip()


def as_handled_finding(f: Finding, how: str) -> Finding:
    """A signature's finding on a handled traceback (rule 3): what `as_handled` makes of an attribution."""
    most, title, detail = _handled_words(how, f.title, f.detail)
    if f.severity.rank <= most.rank:
        return f
    return replace(f, severity=most, title=title, detail=detail, evidence={**f.evidence, "handled": how})


def build_findings(db: SignatureDB, res: ScanResult, *, log: str | None = None,
                   snapshot: object = None, attribution: bool = True) -> list[Finding]:
    """The findings of one log; `attribution=False`: signatures only (a database's own example check)."""
    if res.binary or not res.has_text:
        return [unreadable_finding(res, log)]
    kept = kept_hits(db, res)
    atts, yielded = attributions(db, res, kept, snapshot) if attribution else ([], set())
    if any(not db.get(k).fallback or db.get(k).severity is Severity.ERROR for k in kept) or any(a.id != LAST_RESORT_ID and a.severity is Severity.ERROR for a, _, _ in atts):
        atts = [t for t in atts if t[0].id != LAST_RESORT_ID]  # the last resort only where nothing else is an error
    kept = {k: h for k, h in kept.items() if k not in yielded}
    handled = handled_hits(db, res, kept)
    # (group, line): specific root causes and attributions by line, then knock-ons, then catch-alls
    entries: list[tuple[tuple[int, int, int, int], Finding]] = []
    for k, h in kept.items():
        sig = db.get(k)
        found = signature_finding(sig, h, rank=0, log=log)
        entries.append((rank_key(sig, h), as_handled_finding(found, handled[k]) if k in handled else found))
    for att, count, chained in atts:
        # a wait a program names (doctor.explain.hangs: Ray cannot place a request) ranks after what failed: a job
        # that waited and then failed failed on its error; one where nothing failed hung on the wait
        group = 1 if chained or "waits_for" in att.extra else 0
        # a logged record that heads an exception's traceback ranks right after that exception: the exception says
        # why (`EngineCore failed to start.` above vLLM's `ValueError: ...`)
        heads = att.extra.get("exception_line")
        entries.append(((group, 0, heads or att.line, 1 if heads else 0),
                        attribution_finding(att, count, chained, log=log)))
    # errors first, then warnings, then notices: a notice or a warning never ranks above the failure
    entries.sort(key=lambda e: (-e[1].severity.rank, e[0]))
    out = [_ranked(f, i + 1) for i, (_, f) in enumerate(entries)]
    if not out and attribution and (said := _said_by_a_package(res, snapshot)) is not None:
        return [_ranked(attribution_finding(said, 1, log=log), 1)]
    if out and _error_beside_notices(res, out):
        # only notices (Ray's start-up warnings, harmless messages) and an error line none of them is: that error is
        # still unknown, and the note says so rather than leave the notices as the whole answer
        return [*out, _ranked(no_match_finding(db, res, log, beside=len(out)), len(out) + 1)]
    return out or [no_match_finding(db, res, log)]


def _error_beside_notices(res: ScanResult, out: list[Finding]) -> bool:
    first = res.first_error
    return (first is not None and all(f.severity is Severity.INFO for f in out)
            and all(f.evidence.get("line") != first.line for f in out))


# A log this short is a quoted message (a bug report's one or two lines), not a run's output.
SHORT_LOG = HEAD_LINES


def _said_by_a_package(res: ScanResult, snapshot: object) -> Attribution | None:
    """Nothing else explains a short log: its lines may still be a package's own message, pasted without the
    exception type or logger prefix that would make them an event (`X does not appear to have a file named Y`).
    Each of its first lines (but a script's comments and `export` / `source` lines) is looked up in the message-owner table (doctor.explain.messages)."""
    if res.lines_read > SHORT_LOG:
        return None
    from doctor.explain.events import Event, is_notice, strip_prefix
    from doctor.explain.lexicon import SCRIPT_LINE
    from doctor.explain.loglines import LogLineReader
    from doctor.explain.messages import attribute_message

    for i, text in enumerate(res.head[:SHORT_LOG]):
        if not text.strip() or SCRIPT_LINE.match(text):
            continue  # a shell script's comment or set-up line is a command, no message
        logged = LogLineReader().read(strip_prefix(text))
        if logged is not None:  # a logged error / warning record: looked up at its level
            ev = Event("log", i + 1, text, facts=logged)
        elif is_notice(text):
            continue  # logged at info / debug level: no failure
        else:
            ev = Event("failure", i + 1, text, facts={"message": text.strip()})
        att = attribute_message(ev)
        if att is not None:
            return replace(att, line=i + 1, text=text)
    return None


def _ranked(f: Finding, rank: int) -> Finding:
    f.evidence["rank"] = rank
    return f


def attribution_finding(att: Attribution, count: int, chained: bool = False, *, log: str | None) -> Finding:
    evidence: dict[str, Any] = {"line": att.line, "text": att.text, "occurrences": count, "read": att.read,
                                "rank": 0, "role": ROLE_LABEL["knock-on" if chained else "root"], **att.extra}
    if att.time is not None:
        evidence["time"] = timestamps.format_epoch(att.time)
        if not own_time(att.text, att.time):
            evidence["time_from"] = "earlier line"  # as for a signature's line: its own line holds no time
    if log:
        evidence["log"] = log
    return Finding(
        id=att.id,
        severity=att.severity,
        components=att.components,
        title=att.title,
        detail=att.detail,
        evidence=evidence,
        fix=Fix(att.fix, ()),
        source=att.source,
        check="explain",
    )


def hit_evidence(hit: Hit) -> dict[str, Any]:
    evidence: dict[str, Any] = {"line": hit.line, "text": hit.text, "occurrences": hit.count}
    if hit.count > 1:
        evidence["lines"] = list(hit.lines)
    evidence.update(printed_by(hit.processes, hit.repeated))
    if hit.before or hit.after:
        evidence["context"] = {"before": list(hit.before), "after": list(hit.after)}
    if hit.time is not None:
        evidence["time"] = timestamps.format_epoch(hit.time)
        if not own_time(hit.text, hit.time):
            evidence["time_from"] = "earlier line"  # the scanner dated it by the nearest earlier timestamp
    return evidence


def own_time(text: str, t: float) -> bool:
    """Whether the matched line itself holds the timestamp `t` (else it came from a line before it): as the scanner
    marked it (`timestamps.Own`), else (a time that lost the mark on its way) whether the text shown holds it."""
    if isinstance(t, timestamps.Own):
        return True
    import datetime

    year = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).year
    own = timestamps.parse(text.encode("utf-8", "replace"), year)
    return own is not None and abs(own - t) < 1e-3


def signature_finding(sig: Signature, hit: Hit, *, rank: int, log: str | None) -> Finding:
    evidence = hit_evidence(hit)
    evidence["rank"] = rank
    evidence["role"] = ROLE_LABEL[sig.role]
    components, module = sig.components_for(hit.text)
    if module:
        evidence["module"] = module
    if log:
        evidence["log"] = log
    return Finding(
        id=sig.id,
        severity=sig.severity,
        components=components,
        title=sig.title_for(hit.text),
        detail=sig.detail,
        evidence=evidence,
        fix=Fix(sig.fix, sig.commands),
        source=sig.source,
        check="explain",
    )


def no_match_finding(db: SignatureDB, res: ScanResult, log: str | None, beside: int = 0) -> Finding:
    """`beside`: the notices found beside it (none of them an error), which explain no error line."""
    evidence: dict[str, Any] = {"lines_read": res.lines_read, **({"log": log} if log else {})}
    first = res.first_error
    if first is not None:
        evidence["first_error"] = hit_evidence(first)
        said = (f"only {beside} notice(s) above matched, none an error" if beside else
                f"none matched the {len(db)} signatures in {db.path}")
        detail = (f"{res.lines_read} line(s) read; {said}. The first error line is line {first.line}: {first.text}")
    else:
        detail = (f"{res.lines_read} line(s) read; none matched the {len(db)} signatures in {db.path}, and no line "
                  "looks like an error.")
    return Finding(
        id=NO_MATCH_ID,
        severity=Severity.INFO,
        components=("system",),
        title="No known failure signature in the log",
        detail=detail,
        evidence=evidence,
        fix=Fix(f"Start from line {first.line}, the first error line; if it is a new failure, report it with the log "
                "and a snapshot of the environment, taken on the node that ran it:",
                ("doctor collect -o snapshot.json",))
        if first is not None else None,
        check="explain",
    )


def unreadable_finding(res: ScanResult, log: str | None) -> Finding:
    """Nothing to explain. Read from standard input (`-`) there is no path to check: what was piped in is."""
    what = "holds binary data" if res.binary else ("is empty" if not res.bytes_read else "holds only blank lines")
    given = ("what was piped in (standard input) is" if log in (None, "-") else f"{log} is")
    return Finding(
        id=UNREADABLE_ID,
        severity=Severity.WARNING,
        components=("system",),
        title="Nothing readable was found in the log",
        detail=f"The log {what} ({res.bytes_read} bytes, {res.lines_read} lines): there is nothing to explain. "
               f"Check that {given} the run's text log (stdout/stderr of the job, a Ray worker-*.out/.err file).",
        evidence={"bytes": res.bytes_read, "lines_read": res.lines_read, "binary": res.binary,
                  **({"log": log} if log else {})},
        fix=Fix("Pass the text log of the failed run (for Ray: the session's logs/ directory)."),
        check="explain",
    )


def redacted(f: Finding) -> Finding:
    """The finding as `explain` prints it: the log lines it quotes (title, detail, evidence) with their secrets
    redacted (doctor.snapshot.redact.redact_line: a token in a URL, an `HF_TOKEN=` in an env dump), since a report
    is pasted into trackers; matching ran on the lines as read."""
    from doctor.snapshot.redact import redact_line

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            return redact_line(x)
        if isinstance(x, list):
            return [walk(i) for i in x]
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        return x

    return replace(f, title=redact_line(f.title), detail=walk(f.detail), evidence=walk(f.evidence))
