"""doctor/explain has no import circle (issue 23, item 7): every import, at module level or inside a function, of
one explain module by another points one way."""

from __future__ import annotations

import ast
from pathlib import Path

EXPLAIN = Path(__file__).resolve().parents[2] / "doctor" / "explain"


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in EXPLAIN.glob("*.py"):
        name = path.stem
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("doctor.explain."):
                    deps.add(node.module.split(".")[2])
                elif node.module == "doctor.explain":
                    deps.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[2] for a in node.names if a.name.startswith("doctor.explain."))
        graph[name] = deps - {name}
    return graph


def test_no_import_circle_inside_doctor_explain():
    graph = _graph()
    assert {"db", "stream", "scanner", "loading"} <= set(graph)
    state: dict[str, int] = {}

    def visit(n: str, trail: list[str]) -> None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            assert state.get(m) != 1, " -> ".join([*trail, n, m])
            if m not in state:
                visit(m, [*trail, n])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])


def test_the_database_module_imports_no_scanner_or_stream():
    assert not _graph()["db"] & {"stream", "scanner", "findings", "parts", "multi"}
