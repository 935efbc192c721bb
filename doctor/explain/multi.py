"""Many logs at once: a Ray session's `logs/` directory, one log per node or rank, or several files.

A multi-node job that dies leaves an HCCL timeout on every rank and the real cause on one. Each log is
scanned (in parallel processes when there is enough to read), its findings get the node they came from, and
the error events are put on one time line:

* the node is the first directory under the given directory (`DIR/node-1/worker.log` -> `node-1`), else the
  file name without its suffix (`rank3.log` -> `rank3`), always the file name in one Ray node's session logs/
  (its events/ subdirectory is no node); a Ray driver line `(Actor pid=1, ip=10.0.0.2)` names its node itself;
* the logs that match nothing and hold no error-looking line get one note between them, not one each;
* an event is the first line of each finding (its timestamp is the line's own, or the last one before it);
* the root-cause node is the one whose earliest *root-cause* event comes first; knock-on events (signatures with
  `role = "knock-on"`: HCCL wait/socket timeouts, dead peers) never make a node the root cause while another
  node has a real error. This is how MindCluster's Ascend FaultDiag reads a cluster's logs: it takes each
  device's first error, sets aside the devices whose errors are all communication timeouts, and reports the
  remaining devices, earliest first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doctor.errors import InputError
from doctor.explain import timestamps
from doctor.explain.compressed import DECOMPRESS_TO_STDOUT, has_codec
from doctor.explain.db import SignatureDB, read_signatures
from doctor.explain.findings import (
    NO_MATCH_ID,
    ROLE_LABEL,
    attributions,
    build_findings,
    handled_hits,
    handled_severity,
    kept_hits,
    own_time,
)
from doctor.explain.lognames import described, log_stem, split_log_name
from doctor.explain.scanner import DEFAULT_CONTEXT, Hit, ScanResult
from doctor.explain.stream import scan_path
from doctor.report import Finding, Severity, finding

MAX_FILES = 10_000
PARALLEL_BYTES = 32 * 1024 * 1024  # below this much to read, one process is faster than starting more
ROOT_NODE_ID = "root-cause-node"
_RAY_PREFIX = re.compile(r"^\((?:[^()]*?) pid=\d+, ip=([0-9A-Za-z.:\-]+)\)")


@dataclass(frozen=True)
class LogInput:
    path: Path
    node: str
    walked: bool = False  # found by walking a directory, not named by the user


@dataclass(frozen=True)
class Skipped:
    """A file a directory's walk left unread, and why: the report says so rather than leave it out without a word."""
    path: Path
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "reason": self.reason}


@dataclass(frozen=True)
class Event:
    node: str
    log: str
    id: str
    title: str
    role: str  # "root", "knock-on", "unmatched" (a first error line no signature explains) or "handled" (never the root)
    line: int
    text: str
    time: float | None
    severity: Severity = Severity.WARNING

    def to_dict(self) -> dict[str, Any]:
        d = {"node": self.node, "log": self.log, "id": self.id, "role": ROLE_LABEL.get(self.role, self.role),
             "line": self.line, "time": timestamps.format_epoch(self.time), "text": self.text}
        if self.time is not None and not own_time(self.text, self.time):
            d["time_from"] = "earlier line"  # dated by the nearest earlier timestamp: its own line holds none
        return d


def discover(paths: list[str]) -> list[LogInput]:
    """The log files behind the arguments: files as given, directories walked for logs (doctor.explain.lognames)."""
    return discover_all(paths)[0]


def discover_all(paths: list[str]) -> tuple[list[LogInput], list[Skipped]]:
    """The log files behind the arguments, and the files the directories' walks left unread (with the reason)."""
    out: list[LogInput] = []
    skipped: list[Skipped] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            found, left = _walk_logs(p)
            skipped.extend(left)
            if not found:
                others = f"; {_some([s.path.name for s in left])} there are no logs" if left else ""
                raise InputError(f"no log files ({described()}) in the directory{others}", source=arg)
            ray = _ray_node(p)  # one node's processes: each log by its file, events/ and old/ are no nodes
            out.extend(LogInput(f, log_stem(f.name) if ray else _node_name(f.relative_to(p)), walked=True)
                       for f in found)
        elif p.exists():
            out.append(LogInput(p, log_stem(p.name)))
        else:
            raise InputError("cannot read log: No such file or directory", source=arg)
    if len(out) > MAX_FILES:
        raise InputError(f"{len(out)} log files; at most {MAX_FILES} are read at once", source=paths[0])
    return out, skipped


def read_and_skipped(logs: list[dict[str, Any]], skipped: list[dict[str, str]]) -> str:
    """The lines a text report shows when a directory's walk left files unread: the files read, the ones not, and
    why (the --json report lists every one under "logs" and "skipped")."""
    lines = [f"read: {_some([Path(x['log']).name for x in logs])}"]
    by_reason: dict[str, list[str]] = {}
    for s in skipped:
        by_reason.setdefault(s["reason"], []).append(Path(s["path"]).name)
    for reason, names in by_reason.items():
        lines.append(f"not read ({reason}): {_some(names)}")
    return "\n".join(lines)


def _some(names: list[str], at_most: int = 8) -> str:
    return ", ".join(names[:at_most]) + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


def _walk_logs(top: Path) -> tuple[list[Path], list[Skipped]]:
    """The log files under `top` (live, rotated and compressed), and the other files, each with why it is not read;
    hidden files and directories left out. A directory this user may not list (another user's node directory, mode
    0700) is exit 2 naming it, as an unreadable log file is: its logs are never silently left out of the time line
    (Path.rglob skips it without a word)."""
    denied: list[OSError] = []
    found: list[Path] = []
    skipped: list[Skipped] = []
    for dirpath, dirnames, filenames in os.walk(top, onerror=denied.append):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath, name)
            if name.startswith(".") or not f.is_file():
                continue
            parts = split_log_name(name)
            if parts is None:
                skipped.append(Skipped(f, f"not a log's name; logs are {described()}"))
            elif parts[2] == ".zst" and not has_codec("zstd"):
                skipped.append(Skipped(f, "zstd-compressed, and this Python has no zstd codec; "
                                          f"`{DECOMPRESS_TO_STDOUT['zstd']} FILE | doctor explain -` reads it"))
            else:
                found.append(f)
    if denied:
        e = denied[0]
        raise InputError(f"cannot read the directory: {e.strerror or e}", source=str(e.filename or top))
    return sorted(found), skipped


def _node_name(rel: Path) -> str:
    return rel.parts[0] if len(rel.parts) > 1 else log_stem(rel.name)


# What every Ray node's session logs/ directory holds (its raylet's, and on the head the GCS server's): the files
# in it and under it (events/event_RAYLET.log, old/) are logs of that node's processes; a subdirectory is no node
# (https://docs.ray.io/en/latest/ray-observability/user-guides/configure-logging.html#logging-directory-structure)
_RAY_NODE_FILES = ("raylet.out", "raylet.err", "gcs_server.out")


def _ray_node(top: Path) -> bool:
    """Whether the directory is one Ray node's session logs/ (a directory of nodes' directories is not)."""
    return any((top / name).is_file() for name in _RAY_NODE_FILES)


def _scan_one(args: tuple[str, str | None, int]) -> ScanResult:
    path, db_path, context_lines = args
    return scan_path(path, db=read_signatures(db_path), context_lines=context_lines)


def scan_all(inputs: list[LogInput], db: SignatureDB, *, db_path: str | None, context_lines: int = DEFAULT_CONTEXT,
             jobs: int | None = None) -> list[ScanResult]:
    """Scan every log, in worker processes when the logs are big enough to be worth it."""
    total = sum(_size(i.path) for i in inputs)
    workers = min(len(inputs), jobs or os.cpu_count() or 1)
    args = [(str(i.path), db_path, context_lines) for i in inputs]
    if workers > 1 and total >= PARALLEL_BYTES:
        # imported here: only logs worth processes need the pool (see doctor.explain.parts)
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(_scan_one, args))
    one = jobs if len(args) == 1 else 1  # a single big log may still be read in parts
    return [scan_path(a[0], db=db, context_lines=context_lines, jobs=one) for a in args]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def events_of(db: SignatureDB, log: LogInput, res: ScanResult, snapshot: object = None) -> list[Event]:
    """The log's findings as events: its signature hits and its attributed error events (doctor.explain.events)."""
    kept = kept_hits(db, res)
    atts, yielded = attributions(db, res, kept, snapshot)
    handled = handled_hits(db, res, kept)
    # a traceback the log shows as handled (the process went on) makes no node the root cause: role "handled"
    out = [_event(log, sig_id, db.get(sig_id).title_for(hit.text), "handled" if sig_id in handled else db.get(sig_id).role, hit,
                  handled_severity(db.get(sig_id).severity, handled[sig_id]) if sig_id in handled
                  else db.get(sig_id).severity)
           for sig_id, hit in kept.items() if sig_id not in yielded]
    for att, _count, chained in atts:
        hit = Hit(line=att.line, text=att.text, before=[], time=att.time)
        role = "handled" if att.extra.get("handled") else "knock-on" if chained else "root"
        out.append(_event(log, att.id, att.title, role, hit, att.severity))
    if not out and res.first_error is not None:
        out.append(_event(log, "first-error-line", "First error line (no known signature)", "unmatched",
                          res.first_error))
    return out


def _event(log: LogInput, sig_id: str, title: str, role: str, hit: Hit,
           severity: Severity = Severity.WARNING) -> Event:
    m = _RAY_PREFIX.match(hit.text)
    return Event(node=m.group(1) if m else log.node, log=str(log.path), id=sig_id, title=title, role=role,
                 line=hit.line, text=hit.text, time=hit.time, severity=severity)


def timeline(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.time is None, e.time or 0.0, e.node, e.line))


def root_cause(events: list[Event]) -> Event | None:
    """The first real failure: earliest root-cause event, else earliest unmatched error, else earliest event.
    None when times cannot say which of two nodes' failures of that kind came first (no time on one of them: the
    order would be the nodes' names)."""
    ordered = timeline(events)
    for roles in (("root",), ("unmatched",), ("knock-on",)):
        for e in ordered:
            if e.role in roles:
                rivals = [o for o in ordered if o.role == e.role and o.node != e.node]
                if rivals and (e.time is None or any(o.time is None for o in rivals)):
                    return None
                return e
    return None


def explain_many(paths: list[str], *, db: SignatureDB | None = None, db_path: str | None = None,
                 context_lines: int = DEFAULT_CONTEXT, jobs: int | None = None,
                 snapshot: object = None) -> tuple[list[Finding], dict[str, Any]]:
    """Diagnose several logs; returns the findings (each with its node) and the report's extra fields."""
    db = db if db is not None else read_signatures(db_path)
    inputs, skipped = discover_all(paths)
    results = scan_all(inputs, db, db_path=db_path, context_lines=context_lines, jobs=jobs)
    findings: list[Finding] = []
    events: list[Event] = []
    # A Ray session's logs/ always holds empty .err/.out files of processes that printed nothing: an empty file
    # found by walking a directory is no defect of the input (it is still listed under "logs"), unless every log is.
    quiet = any(r.bytes_read for r in results)
    silent: list[tuple[LogInput, ScanResult, list[Finding]]] = []  # walked logs: no signature, no error-looking line
    for log, res in zip(inputs, results, strict=True):
        if quiet and log.walked and not res.bytes_read:
            continue
        got = build_findings(db, res, log=str(log.path), snapshot=snapshot)
        if log.walked and [f.id for f in got] == [NO_MATCH_ID] and res.first_error is None:
            silent.append((log, res, got))
            continue
        findings.extend(f.with_node(log.node) for f in got)
        events.extend(events_of(db, log, res, snapshot))
    if len(silent) == 1:  # its own note, as built
        log, _, got = silent[0]
        findings.extend(f.with_node(log.node) for f in got)
    elif silent:
        findings.append(_silent_logs(db, silent))
    first = root_cause(events)
    line = timeline(events)
    extra: dict[str, Any] = {
        "logs": [{"log": str(i.path), "node": i.node, "lines": r.lines_read, "bytes": r.bytes_read}
                 for i, r in zip(inputs, results, strict=True)],
        "timeline": [e.to_dict() for e in line[:200]],
    }
    if skipped:  # only when some are: a directory read whole needs no list of what was not
        extra["skipped"] = [s.to_dict() for s in skipped]
    if first is not None:
        knock = [e for e in line if e.node != first.node and (e.role == "knock-on" or _after(e, first))]
        extra["root_cause"] = {**first.to_dict(), "knock_on": [e.to_dict() for e in knock[:100]]}
        findings.insert(0, _root_finding(first, knock, len({i.node for i in inputs})))
    return findings, extra


def _silent_logs(db: SignatureDB, silent: list[tuple[LogInput, ScanResult, list[Finding]]]) -> Finding:
    """One info for the logs of a walked directory that match no signature and hold no error-looking line (a Ray
    session's dashboard, monitor and idle workers' files), instead of one each: they say the same thing."""
    names = [str(log.path) for log, _, _ in silent]
    nodes = sorted({log.node for log, _, _ in silent})
    lines = sum(res.lines_read for _, res, _ in silent)
    shown = ", ".join(Path(n).name for n in names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return Finding(
        id=NO_MATCH_ID, severity=Severity.INFO, components=("system",),
        title=f"No known failure signature in {len(names)} logs",
        detail=f"{lines} line(s) read from {shown}; none matched the {len(db)} signatures in {db.path}, and no line "
               "in them looks like an error.",
        evidence={"logs": names, "lines_read": lines, **({"node": nodes[0]} if len(nodes) == 1 else {"nodes": nodes})},
        check="explain", node=nodes[0] if len(nodes) == 1 else None)


def _after(e: Event, first: Event) -> bool:
    return e.time is not None and first.time is not None and e.time >= first.time


def _root_finding(first: Event, knock: list[Event], n_nodes: int) -> Finding:
    others = sorted({e.node for e in knock})
    when = timestamps.format_epoch(first.time)
    what = first.title if first.role != "unmatched" else f"an error no signature knows: {first.text}"
    detail = (f"Of {n_nodes} node(s)/log(s), the earliest failure that is not a communication timeout is on "
              f"{first.node}{' at ' + when if when else ''} (line {first.line} of {first.log}): {what}.")
    if others:
        detail += f" The errors on {', '.join(others[:10])}{' ...' if len(others) > 10 else ''} came after it " \
                  "(HCCL timeouts and lost peers are what a rank reports when another rank died)."
    # The summary ranks with the failure it names (an error when the first failure is one).
    return finding(
        ROOT_NODE_ID, first.severity, ("cluster",), f"The first failure was on {first.node}: {first.id}",
        detail=detail, evidence={**first.to_dict(), "knock_on_nodes": others},
        fix=f"Fix the failure on {first.node} first; the other nodes' errors follow from it.",
        node=first.node, source="https://github.com/Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58/"
        "component/ascend-faultdiag/src/ascend_fd/pkg/diag/root_cluster/utils.py",
    )
