"""Shared test setup: the `npu` marker is skipped unless an Ascend device is really present."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No timing asserts, hypothesis' included: its default 200 ms deadline per example and its too_slow health check fail
# a property test on a loaded machine (2 cores, a parallel run), not on a wrong answer.
settings.register_profile("doctor", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("doctor")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DOCTOR_SHARED", ROOT.parent / "shared"))
# The report and snapshot contracts, as this repo defines them (docs/schemas; extended beyond the brief's copy).
SCHEMAS = ROOT / "docs" / "schemas"


def _has_npu() -> bool:
    return bool(glob.glob("/dev/davinci[0-9]*")) and shutil.which("npu-smi") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_npu():
        return
    skip = pytest.mark.skip(reason="needs an Ascend NPU (none on this machine)")
    for item in items:
        if "npu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's shared/ folder (beside the repo root; DOCTOR_SHARED overrides)."""
    if not SHARED.is_dir():
        pytest.skip(f"shared/ not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def junit_schema():
    """Jenkins' xUnit junit-10.xsd as an xmlschema schema (tests/test_junit_schema.py), None where it is not at hand:
    `nox -s tests` takes it from the sdist of the pytest it runs into $DOCTOR_TEST_VERL_CONFIGS/schemas."""
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")
    xsd = Path(d, "schemas", "junit-10.xsd") if d else None
    try:
        import xmlschema
    except ImportError:
        return None
    return xmlschema.XMLSchema(str(xsd)) if xsd is not None and xsd.is_file() else None


def assert_valid_junit(schema, xml: Path) -> None:
    """`xml` validates against `schema` (the `junit_schema` fixture; None: nothing to validate against), the first
    errors being the assertion's message."""
    if schema is None:
        return
    errors = [str(e).splitlines()[0] for e in schema.iter_errors(str(xml))]
    assert not errors, f"{xml.name}: {errors[:3]}"
