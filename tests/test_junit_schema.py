"""Every `--junit` file the doctor writes is valid against Jenkins' xUnit junit-10.xsd, the schema a CI's JUnit
publisher checks (and pytest's own --junitxml is tested against): a file the publisher refuses shows the CI page
nothing, whatever the run found. The schema comes from the sdist of the pytest the tests run with (`nox -s tests`
puts it in $DOCTOR_TEST_VERL_CONFIGS/schemas; the `junit_schema` fixture is tests/conftest.py's); each document
here comes from a real command line (smoke's passing and failing runs: tests/cli/test_smoke.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.checks.runner import REGISTRY, Check
from doctor.cli import cli
from tests.conftest import assert_valid_junit
from tests.stacks import healthy


@pytest.fixture(scope="module")
def schema(junit_schema):
    if junit_schema is None:
        pytest.skip("no xmlschema, or no junit-10.xsd under $DOCTOR_TEST_VERL_CONFIGS/schemas (nox -s tests puts it there)")
    return junit_schema


def _write(tmp_path: Path, name: str, data: dict) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def _broken(tmp_path: Path) -> str:
    d = healthy()
    d["packages"]["torch"]["version"] = "2.12.0"  # an error (torch-npu 2.8.0 is built against 2.8.0)
    d["host"]["shm_gb"] = 0.06  # and a warning
    return _write(tmp_path, "broken.json", d)


def _run(tmp_path: Path, *argv: str) -> Path:
    junit = tmp_path / "out.xml"
    CliRunner().invoke(cli, [*argv, "--junit", str(junit)], catch_exceptions=False)
    assert junit.is_file(), argv
    return junit


def test_a_live_check_on_this_host(schema, tmp_path):
    """The run a CI job on an NPU-less runner makes: passes, failures and skipped checks, with their times."""
    assert_valid_junit(schema, _run(tmp_path, "check"))


@pytest.mark.parametrize("strict", [False, True])
def test_a_check_of_a_snapshot_with_errors_and_warnings(schema, tmp_path, strict):
    assert_valid_junit(schema, _run(tmp_path, "check", "--from", _broken(tmp_path), *(["--strict"] if strict else [])))


def test_a_check_of_a_cluster(schema, tmp_path):
    """Testcases named per node (`id[node]`)."""
    other = healthy()
    other["packages"]["torch-npu"]["version"] = "2.8.0.post2"
    a, b = _write(tmp_path, "a.json", healthy()), _write(tmp_path, "b.json", other)
    assert_valid_junit(schema, _run(tmp_path, "check", "--from", a, "--from", b))


def test_a_check_that_crashed(schema, tmp_path, monkeypatch):
    def boom(ctx):
        raise RuntimeError("kaboom <&>")

    monkeypatch.setitem(REGISTRY, "test-boom", Check("test-boom", "system", boom))
    assert_valid_junit(schema, _run(tmp_path, "check", "--from", _write(tmp_path, "ok.json", healthy())))


@pytest.mark.parametrize("argv", [["check", "--only", "netwrok"], ["check", "--from", "/nonexistent.json"],
                                  ["check", "--bogus"]])
def test_a_run_that_could_not_do_its_job(schema, tmp_path, argv):
    assert_valid_junit(schema, _run(tmp_path, *argv))


def test_smoke_refused_by_its_preflight(schema, tmp_path):
    """`doctor smoke` here: no NPU, so the preflight fails and the run is not started."""
    assert_valid_junit(schema, _run(tmp_path, "smoke", "--workdir", str(tmp_path / "w")))
