"""The human node × component table for cluster input (`doctor check --ray`, a cluster file).

One row per node, one column per component. Key columns are always shown; any other column only when its
value differs between nodes (all columns with -v). A cell whose value differs from the majority is
highlighted (red, and marked `*` so it shows without colour too) — the same rule the skew findings use
(`doctor.checks.cluster_facts.odd_ones`). Nodes that could not be probed get a row with their error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from doctor.checks.cluster_facts import (
    ASCEND_PARTS,
    NOT_INSTALLED,
    collect,
    expected_npus,
    left_out_of_skew,
    odd_ones,
    ray_npu,
    table_columns,
)
from doctor.console import Console
from doctor.report import short_name
from doctor.snapshot.model import UNKNOWN, Cluster, Snapshot

PARTS = {label: part for part, label, _kind in ASCEND_PARTS}  # table column -> ascend.<part>
KEY_COLUMNS = ("cann", "driver", "npus", "ray NPU", "python", "ray", "torch", "torch-npu", "roce up")
NodeRow = tuple[str, Snapshot | None, str | None]


def _rows_in(nodes: Cluster | Sequence[NodeRow]) -> list[NodeRow]:
    if isinstance(nodes, Cluster):
        return [(n.node, n.snapshot, n.error) for n in nodes.nodes]
    return list(nodes)


def table_rows(nodes: Cluster | Sequence[NodeRow], verbose: bool = False) -> tuple[list[str], list[list[tuple[str, bool]]]]:
    """Pure part: (headers, rows of (cell text, is odd)). A node without a snapshot gets a row of two
    cells: its name and `(not probed: <error>)`. Exposed for tests and other renderers."""
    rows_in = _rows_in(nodes)
    alive = [(n, s) for n, s, _e in rows_in if s is not None]
    snaps = dict(alive)
    headers = ["node"]
    cols: list[tuple[dict[str, Any], set[str]]] = []
    for label, fact in table_columns():
        values = collect(alive, fact)
        if not values:
            continue
        if label == "ray NPU":  # not a skew: each node's Ray NPU resource should match its own NPUs
            odd = {n for n, s in alive if n in values and _npu_mismatch(s)}
        else:  # the skew findings' rule, with the nodes they leave out (an NPU-less head's absent CANN)
            part = PARTS.get(label, label)
            odd = set(odd_ones({n: v for n, v in values.items() if not left_out_of_skew(snaps[n], part)})[0])
        if label not in KEY_COLUMNS and not odd and not verbose:
            continue
        if not verbose and label not in KEY_COLUMNS and all(v.text == NOT_INSTALLED for v in values.values()):
            continue
        headers.append(label)
        cols.append((values, odd))
    from doctor.checks.cluster_npu_net import cross_node_columns

    for label, values, odd in cross_node_columns(alive):
        headers.append(label)
        cols.append((values, odd))
    rows: list[list[tuple[str, bool]]] = []
    for name, snap, err in rows_in:
        row = [(short_name(name), False)]
        if snap is None:
            row.append((f"(not probed: {(err or 'no snapshot').splitlines()[0][:80]})", True))
            rows.append(row)
            continue
        for values, odd_nodes in cols:
            v = values.get(name)
            row.append(("?" if v is None else v.text, name in odd_nodes))
        rows.append(row)
    return headers, rows


def _npu_mismatch(snap: Snapshot) -> bool:
    want, have = expected_npus(snap), ray_npu(snap)
    if want is UNKNOWN or have is UNKNOWN:
        return False
    return (have or 0) != want


def render_cluster_table(nodes: Cluster | Sequence[NodeRow], console: Console) -> None:
    """Print the table to the console's human stream (nothing under --json)."""
    if console.json_mode:
        return
    headers, rows = table_rows(nodes, verbose=console.verbosity >= 1)
    failed = [s is None for _n, s, _e in _rows_in(nodes)]
    marked = [[(f"{t}*" if odd else t, odd) for t, odd in row] for row in rows]
    width = [len(h) for h in headers]
    for row, bad in zip(marked, failed, strict=True):
        cells = row[:1] if bad else row
        for i, (t, _odd) in enumerate(cells):
            width[i] = max(width[i], len(t))
    c = console
    c.print(c.style("  ".join(h.ljust(width[i]) for i, h in enumerate(headers)).rstrip(), "bold"))
    for row, bad in zip(marked, failed, strict=True):
        if bad:  # name, then the error across the rest of the row
            c.print(row[0][0].ljust(width[0]) + "  " + c.style(row[1][0], "red"))
            continue
        texts = [c.style(t.ljust(width[i]), "red", "bold") if odd else t.ljust(width[i])
                 for i, (t, odd) in enumerate(row)]
        c.print("  ".join(texts).rstrip())
    if any(odd for row in rows for _t, odd in row[1:]):
        c.print(c.style("* differs from the majority of nodes (ray NPU: from the node's own NPU count)", "dim"))
    from doctor.cluster.reach_table import render_reach_matrix

    render_reach_matrix(_rows_in(nodes), console)
