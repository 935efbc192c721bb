"""The `--deep` RoCE reachability matrix, printed under the node table: one row per source node, one column
per target node, `ok` / `FAIL` / `?` (not tested), failures named below it."""

from __future__ import annotations

from collections.abc import Sequence

from doctor.checks.cluster_npu_net import reach_matrix
from doctor.console import Console
from doctor.report import short_name
from doctor.snapshot.model import Snapshot


def render_reach_matrix(nodes: Sequence[tuple[str, Snapshot | None, str | None]], console: Console) -> None:
    alive = [(n, s) for n, s, _e in nodes if s is not None]
    matrix = reach_matrix(alive)
    if not matrix or console.json_mode:
        return
    names = [n for n, _s in alive]
    labels = [short_name(n) for n in names]
    width = max(len(x) for x in [*labels, "from \\ to"])
    c = console
    c.print("")
    c.print(c.style("RoCE reachability (--deep: hccn_tool -ping from one NPU of each node)", "bold"))
    c.print("  ".join(["from \\ to".ljust(width), *(x.ljust(width) for x in labels)]).rstrip())
    failures = []
    for src, label in zip(names, labels, strict=True):
        row = matrix.get(src, {})
        cells = []
        for dst in names:
            r = row.get(dst)
            text = "-" if dst == src else "?" if r is None or r.get("ok") is None else "ok" if r["ok"] else "FAIL"
            cells.append(c.style(text.ljust(width), "red", "bold") if text == "FAIL" else text.ljust(width))
            if r is not None and r.get("ok") is False:
                failures.append(f"{label} NPU {r.get('device')} -> {short_name(dst)} {r.get('address')}: "
                                f"{r.get('error') or 'no reply'}")
        c.print("  ".join([label.ljust(width), *cells]).rstrip())
    for f in failures:
        c.print(c.style(f"  unreachable: {f}", "red"))
