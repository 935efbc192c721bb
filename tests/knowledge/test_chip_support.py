"""profiles/chip-support.toml: the chip families each package's docs support, per release, at a commit. The packaged
table loads and holds what was read; a malformed copy is an input error naming the file and the key."""

from __future__ import annotations

from typing import Any

import pytest

from doctor.errors import InputError
from doctor.knowledge.chip_support import load, parse
from doctor.knowledge.matrix import MINDSPEED_MEGATRON


def test_the_table_holds_what_was_read() -> None:
    t = load()
    assert t.read == "2026-12-06"
    assert {r.package for r in t.rows} == {"verl", "mindspeed", "mindspeed-llm", "mindspeed-rl", "torch-npu"}
    verl = {r.versions[0]: r for r in t.rows if r.package == "verl"}
    assert sorted(verl) == ["0.4.0", "0.4.1", "0.5.0", "0.6.0", "0.6.1", "0.7.0", "0.7.1", "0.8.0", "0.9.0"]
    assert "A3" not in verl["0.5.0"].supported and "A3" in verl["0.6.0"].supported
    assert "950" not in verl["0.8.0"].supported and "950" in verl["0.9.0"].supported
    ms = {r.branches[0]: r for r in t.rows if r.package == "mindspeed"}
    assert "910" in ms["core_r0.16.0"].supported and "910" in ms["core_r0.17.0"].excluded
    # every MindSpeed branch the Megatron table reads at the mirror has a row, except the one newer than the mirror
    assert {r.branch for r in MINDSPEED_MEGATRON} - set(ms) == {"26.2.0_core_r0.12.1"}
    # torch-npu's docs rule nothing out and list the first-generation 910 in every release read
    tn = [r for r in t.rows if r.package == "torch-npu"]
    assert tn and all("910" in r.supported and not r.excluded and not r.unlisted for r in tn)
    assert [r.supported for r in tn if r.versions == ("2.5.1",)] == [("910", "A2")]


def _good(**row: Any) -> dict[str, Any]:
    base = {"package": "verl", "versions": ["0.7.1"], "supported": ["A2"], "excluded": ["310P"], "says": "x",
            "source": "https://github.com/verl-project/verl/blob/bec9ef74768dd201881cd4e54cd0385e87caae27/README.md"}
    return {"schema": "doctor.chip-support/1", "read": "2026-12-06", "scope": {"verl": "training"}, "row": [{**base, **row}]}


@pytest.mark.parametrize(("change", "key"), [
    ({"supported": ["910B"]}, "row[0].supported"),
    ({"unlisted": ["310P"]}, "row[0]"),
    ({"source": "https://github.com/verl-project/verl/blob/v0.7.1/README.md"}, "row[0].source"),
    ({"package": "vllm-ascend"}, "row[0].package"),
    ({"versions": []}, "row[0].versions"),
    ({"versions": ["seven"]}, "row[0].versions"),
])
def test_a_malformed_row_names_the_file_and_key(change: dict[str, Any], key: str) -> None:
    with pytest.raises(InputError) as e:
        parse(_good(**change), "/k/chip-support.toml")
    assert e.value.path == key and "/k/chip-support.toml" in str(e.value.source)


def test_two_rows_for_one_release_are_refused() -> None:
    d = _good()
    d["row"].append(dict(d["row"][0]))
    with pytest.raises(InputError) as e:
        parse(d, "/k/chip-support.toml")
    assert e.value.path == "row[1]" and "two rows" in str(e.value)


def test_a_wrong_schema_is_refused() -> None:
    with pytest.raises(InputError) as e:
        parse({**_good(), "schema": "doctor.chip-support/0"}, "/k/chip-support.toml")
    assert e.value.path == "schema"
