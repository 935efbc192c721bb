"""One big log read by several processes at once, with the same result as one scanner reading all of it.

The file is cut just after a newline into about equal parts, one per process (the calling process reads the
first). Each part is scanned by its own `LogScanner`; the results are merged in file order: line numbers
are shifted by the lines of the parts before, a signature's first hit is the one in the earliest part and
its count is the sum, a context rule counts as met if it was met in any part, and the evidence lines after
a hit at a part's end are taken from the next part. Each part's scanner is first shown the 16 KiB before
the part (context and timestamps for its first lines), and timestamps without a year get the first full
year in the log's first block (printed without a year when that block states none either).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from doctor.explain import timestamps
from doctor.explain.db import DEFAULT_DB, SignatureDB, read_signatures
from doctor.explain.events import merge_events
from doctor.explain.scanner import (
    BLOCK,
    MAX_LINE_NUMBERS,
    PROBE_BYTES,
    TIME_WINDOW,
    Hit,
    LogScanner,
    ScanResult,
)

PART_BYTES = 48 * 1024 * 1024  # a part smaller than this is not worth a process
MAX_PARTS = 8
DEFAULT_YEAR = 2025


def cuts(path: str, size: int, parts: int) -> list[tuple[int, int]]:
    """Byte ranges [start, end) of the parts, each starting at a line start."""
    starts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(k * size // parts)
            fh.readline()
            pos = fh.tell()
            if starts[-1] < pos < size:
                starts.append(pos)
    return list(zip(starts, [*starts[1:], size], strict=True))


def part_count(size: int, jobs: int | None) -> int:
    """How many processes to use for a file of `size` bytes (1: read it in this process). Without an explicit
    `jobs`, only the CPUs the load average leaves idle count: on a busy machine more processes only wait."""
    if jobs is None:
        cpus = os.cpu_count() or 1
        try:
            jobs = max(1, round(cpus - os.getloadavg()[0]))
        except OSError:  # no load average on this platform
            jobs = cpus
    return max(1, min(jobs, MAX_PARTS, size // PART_BYTES))


def scan_parts(path: str, size: int, *, db: SignatureDB, context_lines: int, parts: int) -> ScanResult:
    ranges = cuts(path, size, parts)
    with open(path, "rb") as fh:
        stated = timestamps.full_year(fh.read(PROBE_BYTES))
    db_path = None if Path(db.path) == DEFAULT_DB else db.path
    args = [(path, start, end, db_path, context_lines, stated) for start, end in ranges]
    # imported here: the process pool (multiprocessing, pickle, socket: ~20 ms) serves only a log worth parts
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=len(args) - 1) as pool:
        rest = pool.map(_scan_range, args[1:])
        first = _scan_range(args[0], db)
        results = [first, *rest]
    return merge(results, context_lines)


def _scan_range(args: tuple[str, int, int, str | None, int, int | None], db: SignatureDB | None = None) -> ScanResult:
    path, start, end, db_path, context_lines, stated = args
    scanner = LogScanner(db if db is not None else read_signatures(db_path), context_lines=context_lines,
                         default_year=stated or DEFAULT_YEAR, year_stated=stated is not None)
    with open(path, "rb") as fh:
        if start:  # the lines just before the part: context and timestamps for its first lines
            fh.seek(max(0, start - TIME_WINDOW))
            before = fh.read(start - fh.tell())
            scanner.prime(before[before.find(b"\n") + 1 :] if fh.tell() > TIME_WINDOW else before)
        fh.seek(start)
        left = end - start
        while left > 0:
            chunk = fh.read(min(BLOCK, left))
            if not chunk:
                break
            scanner.feed_bytes(chunk)
            left -= len(chunk)
    scanner.close()
    return scanner.result()


def merge(results: list[ScanResult], context_lines: int) -> ScanResult:
    """The results of consecutive parts of one log, as one result."""
    if results[0].binary:
        return results[0]
    hits: dict[str, Hit] = {}
    runner_up: dict[str, dict[str, Hit]] = {}
    first_error: Hit | None = None
    unmet: dict[str, set[int]] | None = None
    base = 0
    for k, res in enumerate(results):
        after = results[k + 1].head if k + 1 < len(results) else []
        for sig_id, hit in res.hits.items():
            _add(hits, sig_id, _shift(hit, base, after, context_lines))
        for sig_id, table in res.runner_up.items():
            for other, hit in table.items():
                _add(runner_up.setdefault(sig_id, {}), other, _shift(hit, base, after, context_lines))
        if first_error is None and res.first_error is not None:
            first_error = _shift(res.first_error, base, after, context_lines)
        unmet = dict(res.unmet_rules) if unmet is None else {
            sig: rules & res.unmet_rules.get(sig, set()) for sig, rules in unmet.items()}
        base += res.lines_read
    unmet = {sig: rules for sig, rules in (unmet or {}).items() if rules}
    bases = [sum(r.lines_read for r in results[:k]) for k in range(len(results))]
    events, dropped = merge_events([(r.events, b, r.events_dropped) for r, b in zip(results, bases, strict=True)])
    head, last = results[0], results[-1]
    return ScanResult(
        lines_read=base, bytes_read=sum(r.bytes_read for r in results), hits=hits, runner_up=runner_up,
        unmet_context=set(unmet), first_error=first_error, binary=head.binary,
        has_text=any(r.has_text for r in results), unmet_rules=unmet, head=head.head, tail=last.tail,
        events=events, events_dropped=dropped,
    )


def _shift(hit: Hit, base: int, after: list[str], context_lines: int) -> Hit:
    """The hit with line numbers of the whole log and its "after" lines completed from the next part (the
    "before" lines and timestamps of a part's first lines come from priming its scanner)."""
    missing = context_lines - len(hit.after)
    return replace(hit, line=hit.line + base, lines=[n + base for n in hit.lines],
                   after=[*hit.after, *after[:missing]] if missing > 0 else hit.after,
                   others=[_shift(o, base, after, context_lines) for o in hit.others])


def _add(table: dict[str, Hit], sig_id: str, hit: Hit) -> None:
    seen = table.get(sig_id)
    if seen is None:
        table[sig_id] = hit
    else:
        seen.count += hit.count
        seen.lines = [*seen.lines, *hit.lines][:MAX_LINE_NUMBERS]
        seen.others = [*seen.others, replace(hit, others=[]), *hit.others][:MAX_LINE_NUMBERS - 1]
        seen.warned += hit.warned
        seen.processes |= hit.processes
        seen.repeated += hit.repeated
