"""Tools tests never reach the network: PyPI is replayed from tests/tools/pypi_recorded/ (pypi_fake.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.refresh_knowledge import pypi

    def refuse(self: object, url: str, headers: object = None) -> None:
        raise AssertionError(f"a test tried to reach {url}: use tests/tools/pypi_fake.RecordedPyPI")

    monkeypatch.setattr(pypi.Http, "_open", refuse)
