"""`doctor check` reports environment values their reader accepts but that their own upstream says break the run in
the setting the snapshot shows (profiles/env-guidance.toml, each row quoted from the package's code or docs at a tag
or a versioned CANN page).

User-visible behaviour through `diagnose`; the real-artifact tier runs the exports of upstream verl's own NPU
example scripts (shared/realworld/verl-scripts) with every documented stack: no error, and only the warnings whose
source is upstream's own guidance against what the script sets."""

from __future__ import annotations

from typing import Any

import pytest

from doctor.checks.env_guidance import env_guidance
from doctor.checks.runner import CheckContext, Skipped
from doctor.errors import InputError
from doctor.knowledge.env_guidance import load, parse
from doctor.snapshot.model import snapshot_from_dict
from doctor.tomlfile import read_toml
from tests.checks.test_env_values import SCRIPTS, exports
from tests.stacks import bare, diagnose_dict, healthy

A2 = {"devices": [{"id": 0, "chip": "910B3"}]}
A3 = {"devices": [{"id": 0, "soc": "Ascend910_9382"}]}


def ours(d: dict[str, Any]) -> list[Any]:
    return [f for f in diagnose_dict(d).findings if f.id == "env-value-against-guidance"]


def pkgs(**versions: str | None) -> dict[str, Any]:
    return {k.replace("_", "-"): ({"version": v} if v else {}) for k, v in versions.items()}


def test_launch_blocking_with_vllm_ascend_acl_graph_is_an_error_naming_the_upstream_refusal() -> None:
    got = ours(bare(env={"ASCEND_LAUNCH_BLOCKING": "1"}, packages=pkgs(vllm_ascend="0.13.0")))
    assert len(got) == 1
    f = got[0]
    assert (f.severity.value, f.components[:2]) == ("error", ("env", "vllm-ascend"))
    assert f.title.startswith("ASCEND_LAUNCH_BLOCKING=1: ")
    assert "ACL graph is incompatible with ASCEND_LAUNCH_BLOCKING=1" in f.detail
    assert "graph mode" in f.detail and "does not record" in f.detail  # the condition the snapshot cannot show
    assert f.evidence["rule"] == "launch-blocking-aclgraph" and "installed:vllm-ascend>=0.11.0rc1" in f.evidence["conditions"]
    assert "v0.11.0rc1/vllm_ascend/platform.py" in f.source
    assert "unset ASCEND_LAUNCH_BLOCKING" in f.fix.text


def test_a_release_before_the_refusal_and_an_unknown_release_stay_silent() -> None:
    assert ours(bare(env={"ASCEND_LAUNCH_BLOCKING": "1"}, packages=pkgs(vllm_ascend="0.10.2rc1"))) == []
    assert ours(bare(env={"ASCEND_LAUNCH_BLOCKING": "1"}, packages=pkgs(vllm_ascend=None))) == []
    assert ours(bare(env={"ASCEND_LAUNCH_BLOCKING": "0"}, packages=pkgs(vllm_ascend="0.13.0"))) == []


def test_aiv_expansion_freezes_vllm_ascend_on_a2_and_is_left_alone_on_a3() -> None:
    env = {"HCCL_OP_EXPANSION_MODE": "AIV"}
    on_a2 = ours(bare(env=env, packages=pkgs(vllm_ascend="0.13.0"), ascend=A2))
    assert [(f.evidence["rule"], f.severity.value, f.components[:2]) for f in on_a2] == [
        ("hccl-aiv-a2-freeze", "warning", ("env", "hccl"))]
    assert "freezing issues on A2" in on_a2[0].detail
    assert ours(bare(env=env, packages=pkgs(vllm_ascend="0.13.0"), ascend=A3)) == []
    assert ours(bare(env=env, packages=pkgs(vllm_ascend="0.13.0"))) == []  # chip unknown: silent


def test_task_queue_2_with_a_verl_vllm_ascend_rollout_unless_the_rollout_gets_its_own_value() -> None:
    d = bare(env={"TASK_QUEUE_ENABLE": "2"}, packages=pkgs(verl=None, vllm_ascend=None))
    got = ours(d)
    assert [(f.evidence["rule"], f.severity.value) for f in got] == [("task-queue-2-rollout-graph", "warning")]
    assert "VLLM_ASCEND_TASK_QUEUE_ENABLE=1" in got[0].fix.text
    d["env"]["VLLM_ASCEND_TASK_QUEUE_ENABLE"] = "1"
    assert ours(d) == []
    # training alone (no vLLM Ascend): 2 is what verl's guide recommends
    assert ours(bare(env={"TASK_QUEUE_ENABLE": "2"}, packages=pkgs(verl=None))) == []


def test_a_condition_on_another_variable_and_on_the_driver() -> None:
    strict = ours(bare(env={"HCCL_DETERMINISTIC": "strict", "INF_NAN_MODE_ENABLE": "0"}))
    assert [f.evidence["rule"] for f in strict] == ["hccl-deterministic-strict-saturation"]
    assert ours(bare(env={"HCCL_DETERMINISTIC": "strict", "INF_NAN_MODE_ENABLE": "1"})) == []
    old = ours(bare(env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}, ascend={"driver": {"version": "22.0.0"}}))
    assert [(f.evidence["rule"], f.components[:2]) for f in old] == [("expandable-segments-old-hdk", ("env", "driver"))]
    assert ours(bare(env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"},
                     ascend={"driver": {"version": "24.1.rc2"}})) == []


def test_a_host_that_sets_none_of_the_variables_skips_before_validating_the_table(monkeypatch) -> None:
    import doctor.knowledge.env_guidance as eg

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the table was validated")

    monkeypatch.setattr(eg, "load", refuse)
    with pytest.raises(Skipped):
        list(env_guidance(CheckContext(snapshot=snapshot_from_dict(bare(env={"PATH": "/usr/bin"})))))


def test_documented_stacks_with_their_own_exports_give_no_guidance_finding() -> None:
    from doctor.knowledge.profiles import load_profiles

    for p in load_profiles():
        d = healthy(p.name)
        assert ours(d) == [], p.name


def test_upstream_verl_npu_scripts_exports_give_no_error_and_only_upstream_backed_warnings() -> None:
    """verl's own NPU scripts set TASK_QUEUE_ENABLE=2 next to a graph-mode rollout and HCCL_OP_EXPANSION_MODE=AIV for
    training, which verl's Ascend guide and CANN's reference advise against: warnings, never errors."""
    from doctor.knowledge.profiles import load_profiles

    rules: set[str] = set()
    for script in SCRIPTS:
        env = exports(script)
        for p in load_profiles():
            d = healthy(p.name)
            d["env"] = {**d.get("env", {}), **env}
            for f in ours(d):
                assert f.severity.value != "error", (str(script), p.name, f.title)
                if f.severity.value == "warning":
                    rules.add(f.evidence["rule"])
    # warnings only where verl's Ascend guide (TASK_QUEUE_ENABLE=1 with a graph-mode rollout) or vLLM Ascend / CANN
    # (AIV) say so; a failure that needs a setting the snapshot cannot see (TP=1 with FlashComm1) is info
    assert rules == {"task-queue-2-rollout-graph", "hccl-aiv-a2-freeze", "hccl-aiv-not-for-training"}, rules


# --------------------------------------------------------------------------- the table itself


def test_the_shipped_table_loads_with_a_quote_and_a_primary_source_per_row() -> None:
    t = load()
    assert len(t.rules) >= 20
    for r in t.rules:
        assert r.quote and r.source.startswith("https://") and r.read_at, r.id
        assert r.when or r.when_any, f"{r.id}: a row with no condition would judge every host"


@pytest.mark.parametrize(("path", "value", "words"), [
    ("rule.0.when", ["chip:A9"], "chip family"),
    ("rule.0.when", ["installed:vllm-ascend>=x"], "not a version specifier"),
    ("rule.0.when", ["env:HCCL_X"], "env: takes"),
    ("rule.0.when", ["cann:>=banana"], "cann: takes"),
    ("rule.0.severity", "fatal", "must be one of"),
    ("rule.0.components", ["nope"], "COMPONENTS"),
    ("rule.0.source", "https://example.com/blog", "neither an upstream URL"),
    ("rule.0.values", None, "needs values"),
])
def test_a_malformed_row_is_refused_naming_the_file_and_the_key(path: str, value: Any, words: str) -> None:
    from doctor.knowledge.location import table_path

    doc = read_toml(table_path("env-guidance.toml"))
    section, i, key = path.split(".")
    row = doc[section][int(i)]
    if value is None:
        row.pop(key)
    else:
        row[key] = value
    with pytest.raises(InputError) as e:
        parse(doc, "x/env-guidance.toml")
    assert str(e.value).startswith("x/env-guidance.toml") and words in str(e.value)


def test_the_v1_engine_on_the_0_7_line_is_experimental_also_when_only_vllm_says_the_line() -> None:
    env = {"VLLM_USE_V1": "1"}
    for pk in (pkgs(vllm_ascend="0.7.3"), pkgs(vllm_ascend=None, vllm="0.7.3")):
        got = ours(bare(env=env, packages=pk))
        assert [(f.evidence["rule"], f.severity.value) for f in got] == [("v1-engine-on-0-7", "warning")], pk
        assert "only for test usage" in got[0].detail
    assert ours(bare(env=env, packages=pkgs(vllm_ascend="0.9.1"))) == []
    assert ours(bare(env=env, packages=pkgs(vllm_ascend=None))) == []  # the line unknown: silent


def test_every_variable_a_row_judges_or_names_in_a_condition_is_collected_on_a_live_host() -> None:
    """A row whose variable `doctor collect` drops could never fire on a live host (only on hand-written snapshots)."""
    from doctor.probes.envvars import is_relevant

    names = {r.var for r in load().rules} | {c.name for r in load().rules
                                            for c in (*r.when, *r.when_any, *r.unless) if c.kind == "env"}
    assert not sorted(n for n in names if not is_relevant(n))
