import json

import jsonschema
import pytest

from doctor.report import CheckResult, CheckStatus, Finding, Report, Severity, finding, first_few
from tests.conftest import SCHEMAS


def _f(sev: str, id_: str = "x-y") -> Finding:
    return finding(id_, sev, "cann", f"{sev} title", evidence={"a": 1}, fix="do it")


def test_unknown_component_is_refused():
    with pytest.raises(ValueError, match="unknown component"):
        finding("a-b", "error", ("gpu",), "t")


def test_status_and_exit_codes():
    assert Report("check").exit_code() == 0 and Report("check").status == "ok"
    r = Report("check", findings=[_f("warning")])
    assert r.status == "warning" and r.exit_code() == 0 and r.exit_code(strict=True) == 1
    r = Report("check", findings=[_f("info"), _f("error")])
    assert r.status == "error" and r.exit_code() == 1
    assert r.summary == {"error": 1, "warning": 0, "info": 1}


def test_crashed_check_means_exit_2_even_without_errors():
    r = Report("check", checks=[CheckResult("c", "cann", CheckStatus.CRASH, 0.0, traceback="tb")])
    assert r.exit_code() == 2


def test_report_json_validates_against_shared_schema(shared_dir):
    schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    r = Report(
        "check",
        findings=[_f("info", "a-b"), _f("error", "c-d").with_node("n1")],
        checks=[CheckResult("c-d", "cann", CheckStatus.FAIL, 0.001)],
        profile={"name": "p", "reason": "r"},
        nodes=[{"node": "n1", "ok": True, "error": None}],
        extra={"plan": [{"step": 1}]},
    )
    d = r.to_dict()
    jsonschema.validate(d, schema)
    assert [f["severity"] for f in d["findings"]] == ["error", "info"]
    assert d["findings"][0]["node"] == "n1" and d["plan"] == [{"step": 1}]


def test_severity_coerced_from_string():
    f = Finding("a", "warning", ("env",), "t")  # type: ignore[arg-type]
    assert f.severity is Severity.WARNING


@pytest.mark.parametrize(("items", "n", "sep", "shown"), [
    ([], 4, ", ", ""),
    (["a", "b"], 4, ", ", "a, b"),
    (["a", "b", "c", "d"], 4, ", ", "a, b, c, d"),
    (["a", "b", "c", "d", "e"], 4, ", ", "a, b, c, d …"),
    (("python3", "-m", "verl.trainer.main_ppo", "x=1"), 3, " ", "python3 -m verl.trainer.main_ppo …"),
])
def test_first_few_names_a_few_and_marks_the_rest(items, n, sep, shown):
    assert first_few(items, n, sep) == shown
