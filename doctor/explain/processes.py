"""Which process printed a line of a multi-process log, and how often Ray's log deduplication folded it.

A verl job's driver log interleaves the lines of many processes, each behind the prefix its launcher puts there:

- Ray's driver prints a worker's line behind `(<actor or task> pid=<pid>[, ip=<node>]) ` and its own daemons' behind
  `(raylet) `; vLLM's decorate_logs nests its workers' tags inside the actor's (`(vLLMHttpServer pid=1) (Worker_TP1
  pid=2) `), so the process is the innermost tag, named with the tags around it.
- torch elastic (torchrun `--tee`) prefixes each line with `[${role_name}${local_rank}]:` — `[default0]:`, or
  `[trainer0]:` for `--role trainer` — written right before the line, no space between (TailLog's header
  f"[{name}{local_rank}]:", pytorch/pytorch@059a238 torch/distributed/elastic/multiprocessing/tail_log.py); a
  `log_line_prefix_template` (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE) may use `${rank}` instead: `[3]:`
  (string.Template.safe_substitute of role_name, rank, local_rank, pytorch/pytorch@001077c
  torch/distributed/elastic/agent/server/local_elastic_agent.py _start_workers). torch prints a rank's uncaught
  traceback behind `[rank3]:`. TorchX prints a replica's lines behind `<role>/<replica> ` (`ddp/0 [0]:...`,
  meta-pytorch/torchx@0f6bd82 torchx/cli/cmd_log.py print_log_lines), read here before a torch elastic prefix.
- Open MPI's `--tag-output` puts `[<job>,<rank>]<stderr>:` before a line. (Slurm's `srun --label` `<task>: ` is
  not read as a process: a log pasted with its line numbers (`12: `) looks the same, and every line of it would read
  as another process's, each frame of a traceback apart from the next.)

Ray also folds a line that several processes print alike (its words holding no digit) into one, printed once more at
the end of its window with ` [repeated <N>x across cluster]` after it — N more copies from other processes — and,
the first time, a note on how to turn that off (ray python/ray/_private/ray_logging/__init__.py: LogDeduplicator,
DedupState.formatted, _warn_once). That suffix is no part of what the process printed: a message read with it would
not be the message its source writes, and a signature anchored at the message's end would miss it.

Pure logic: a line in, its process (or None) and its text without the suffix out.
"""

from __future__ import annotations

import re
from typing import Any

MAX_NAMES = 8  # process names a finding lists (a 64-rank job's traceback names the first ones and their count)
SOURCE = ("https://github.com/ray-project/ray/blob/754c531cc40dfdc0c43ea2bc247c95fd26ef055d/"
          "python/ray/_private/ray_logging/__init__.py")
# Ray's `(Name pid=12, ip=10.0.0.2)` and its own processes' `(raylet)`; torch's `[rank3]:` and torch elastic's
# `[default0]:` / `[trainer0]:` / `[3]:`; Open MPI's `[1,0]<stderr>:`. Read in the launcher prefix only (the caller
# passes it: doctor.explain.events strip_prefix decides what a prefix is).
ELASTIC_TAG = r"\[(?:[A-Za-z_][\w-]*?)?\d+\]:"  # torch elastic's `[${role_name}${local_rank}]:` or `[${rank}]:`
_RAY_TAG = re.compile(r"\(([^()]*?\bpid=\d+[^()]*|raylet|gcs_server|autoscaler|monitor|dashboard\w*|log_monitor)\)")
_RANK_TAG = re.compile(r"(?:(?P<replica>[A-Za-z_][\w-]*/\d+)(?:\x1b\[[0-9;]*m)* )?\[(?P<tag>(?:[A-Za-z_][\w-]*?)?\d+)\]:"
                       r"|\[(?P<mpi>\d+,\d+)\]<std\w+>:")
# ` [repeated 7x across cluster]`, the one-time note after it, and the colour codes Ray wraps them in (stripped
# before this is read: doctor.explain.scanner._decode)
_REPEATED = re.compile(r"[ \t]*\[repeated (\d+)x across cluster\](?: \(Ray deduplicates logs by default\.[^)\n]*\))?"
                       r"(?=[ \t\r]*$)", re.M)
_REPEATED_BYTES = b"x across cluster]"


def process_of(prefix: str) -> str | None:
    """The process a line's launcher prefix names (`prefix`: the text before the message), or None: the Ray tags
    joined innermost last (`vLLMHttpServer pid=1 / Worker_TP1 pid=2`), else the rank (`rank3`, `default0`,
    `trainer1`, `[3]`, TorchX's `ddp/0 [1]`, `1,0`)."""
    tags = _RAY_TAG.findall(prefix)
    if tags:
        return " / ".join(t.strip() for t in tags)
    m = _RANK_TAG.search(prefix)
    if m is None:
        return None
    if m.group("mpi"):
        return m.group("mpi")
    tag = m.group("tag")
    name = f"[{tag}]" if tag.isdigit() else tag  # `[3]:` names the rank its template put there, as it prints it
    return f"{m.group('replica')} {name}" if m.group("replica") else name


def repeated(raw: bytes) -> int:
    """How many more copies of the line Ray's deduplication folded into it (its `[repeated Nx across cluster]`)."""
    if _REPEATED_BYTES not in raw:
        return 0
    m = _REPEATED.search(raw.decode("utf-8", "replace"))
    return int(m.group(1)) if m else 0


def unrepeated(text: str) -> str:
    """`text` without Ray's dedup suffix (and its one-time note) at a line's end."""
    return _REPEATED.sub("", text) if "x across cluster]" in text else text


def printed_by(processes: set[str], folded: int) -> dict[str, Any]:
    """What a finding's evidence says of the processes that printed its lines: `processes` (how many) and
    `process_names` (the first MAX_NAMES) when more than one did — the same traceback from every rank is one
    finding that says so, not one per rank — and `repeated_across_cluster`, the copies Ray folded into them."""
    said: dict[str, Any] = {}
    if len(processes) > 1:
        said["processes"] = len(processes)
        said["process_names"] = sorted(processes, key=_natural)[:MAX_NAMES]
    if folded:
        said["repeated_across_cluster"] = folded
    return said


def printed_by_words(evidence: dict[str, Any]) -> str:
    """The words the text report adds to an evidence line: ` (4 processes: rank0, rank1, rank2, rank3; +7 more
    across the Ray cluster)`, or ''."""
    parts = []
    if n := evidence.get("processes"):
        names = evidence.get("process_names", [])
        shown = [f"({name})" if " " in name else name for name in names]  # a Ray tag as its prefix shows it
        parts.append(f"{n} processes: {', '.join(shown)}{', …' if n > len(names) else ''}")
    if more := evidence.get("repeated_across_cluster"):
        parts.append(f"+{more} more across the Ray cluster")
    return f" ({'; '.join(parts)})" if parts else ""


def _natural(name: str) -> tuple[object, ...]:
    """`rank2` before `rank10`: the digit runs compared as numbers (split keeps text and numbers alternating)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))
