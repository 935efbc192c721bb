"""profiles/code-needs.toml: what releases' code needs beyond their metadata. The packaged table loads and every row
names the releases it was read at; the check's list of covered packages matches the table; a malformed copy is an
input error naming the file and the key."""

from __future__ import annotations

import pytest

from doctor.errors import InputError
from doctor.knowledge.code_needs import enforced, load, needs_of, parse


def test_the_packaged_table_loads_and_each_row_was_read_within_its_releases():
    t = load()
    assert t.read == "2026-12-07" and t.needs
    for n in t.needs:
        assert n.read_at and all(n.applies_to(r) for r in n.read_at)
        assert n.source.startswith(("https://github.com/huggingface/transformers/blob/v",
                                    "https://github.com/NVIDIA/Megatron-LM/blob/core_v",
                                    "https://github.com/verl-project/verl/blob/v",
                                    "https://github.com/apache/arrow/blob/apache-arrow-",
                                    "https://github.com/hiyouga/LLaMA-Factory/blob/v"))
    assert [n.requires for n in needs_of("transformers", "4.51.3", t) if n.needed == "torch"] == ["torch>=2.1"]
    assert [n.requires for n in needs_of("Transformers", "5.8.0", t)] == ["torch>=2.4"]
    assert [n for n in needs_of("transformers", "4.49.0", t) if n.needed == "torch"] == [] and needs_of("transformers", "9.0.0", t) == []
    assert [n.requires for n in needs_of("megatron-core", "0.18.0", t)] == ["nvidia-resiliency-ext>=0.6.0"]
    assert needs_of("megatron-core", "0.16.1", t) == []
    assert [n.requires for n in needs_of("verl", "0.4.1", t) if not n.on] == ["setuptools<82"]
    assert not [n for n in needs_of("verl", "0.5.0", t) if not n.on]
    assert [n.requires for n in needs_of("pyarrow", "26.0.1", t)] == ["numpy>=2.0"]
    assert needs_of("pyarrow", "25.0.1", t) == [] and needs_of("pyarrow", "27.0.0", t) == []
    assert [(n.requires, n.absent_breaks) for n in needs_of("verl", "0.7.1", t)] == [("cachetools", True)]
    assert not needs_of("verl", "0.8.0", t)  # from 0.8.0 at load: the import-surface table's loads record
    assert not any(n.absent_breaks for n in t.needs if n.package != "verl")
    # verl's transformers gate on Ascend NPU: 0.4.0 4.51.0, 0.4.1-0.6.1 4.52.4, none from 0.7.0
    assert [(n.requires, n.on) for n in needs_of("verl", "0.4.0", t) if n.on] == [("transformers>=4.51.0", "npu")]
    assert [n.requires for n in needs_of("verl", "0.6.1", t) if n.on] == ["transformers>=4.52.4"]
    assert not [n for n in needs_of("verl", "0.7.0", t) if n.on]
    # a row listing several requirements is one need each; LLaMA-Factory's all carry its bypass
    lf = needs_of("llamafactory", "0.9.3", t)
    assert [n.needed for n in lf] == ["transformers", "datasets", "accelerate", "peft", "trl", "deepspeed"]
    assert {n.bypass for n in t.needs if n.package == "llamafactory" and n.needed != "deepspeed"} == {"DISABLE_VERSION_CHECK"}
    assert [n.requires for n in needs_of("llamafactory", "0.7.1", t)][0] == "transformers>=4.37.2"
    assert needs_of("llamafactory", "0.7.0", t) == [] and needs_of("llamafactory", "0.9.6", t) == []
    # transformers checks its own declared requirements at import: accelerate's check can never fail, so not listed
    e = enforced("transformers", "4.51.3", t)
    assert e is not None and {"tokenizers", "huggingface-hub", "python"} <= e.names and "accelerate" not in e.names
    assert e.when_installed == {"tokenizers"} and "requests" not in enforced("transformers", "5.0.0", t).names
    assert enforced("transformers", "4.35.2", t) is None and enforced("transformers", "5.26.0", t) is None
    # LLaMA-Factory 0.9.3-0.9.4 check deepspeed only when training with a DeepSpeed config: a warning-level row
    ds = [(n.requires, n.severity, n.bypass) for v in ("0.9.3", "0.9.4") for n in needs_of("llamafactory", v, t)
          if n.needed == "deepspeed"]
    assert ds == [("deepspeed<=0.16.9,>=0.10.0", "warning", ""),  # 0.9.3: mandatory, DISABLE_VERSION_CHECK does not skip it
                  ("deepspeed<=0.16.9,>=0.10.0", "warning", "DISABLE_VERSION_CHECK")]
    assert not [n for v in ("0.9.2", "0.9.5") for n in needs_of("llamafactory", v, t) if n.needed == "deepspeed"]
    # transformers 4.38.0-4.42.4's Trainer needs accelerate 0.26.0 (use_seedable_sampler): only code that builds one
    assert [(n.requires, n.severity) for n in needs_of("transformers", "4.41.2", t) if n.needed == "accelerate"] == [
        ("accelerate>=0.26.0", "warning")]
    assert not [n for v in ("4.37.2", "4.43.0") for n in needs_of("transformers", v, t) if n.needed == "accelerate"]
    # and 4.46.0-4.57.6's TrainingArguments needs accelerate 1.1.0 for data_seed: only runs that set it
    assert [(n.requires, n.severity) for n in needs_of("transformers", "4.57.6", t) if n.needed == "accelerate"] == [
        ("accelerate>=1.1.0", "warning")]
    warned = {("llamafactory", "deepspeed"), ("transformers", "accelerate")}
    assert {n.severity for n in t.needs if (n.package, n.needed) not in warned} == {"error"}


def test_the_check_covers_exactly_the_tables_packages():
    """The check reads the table only when one of these packages has a stated version: a row for a package
    missing here would never be judged."""
    from doctor.checks.packages import CODE_NEEDS_PACKAGES

    assert load().packages() == CODE_NEEDS_PACKAGES


@pytest.mark.parametrize(("row", "key"), [
    ({"read_at": ["4.49.0"]}, "need[0].read_at[0]"),
    ({"requires": "torch"}, "need[0].requires"),
    ({"releases": "four"}, "need[0].releases"),
    ({"source": "https://github.com/huggingface/transformers/blob/main/x.py"}, "need[0].source"),
    ({"absent_breaks": "yes"}, "need[0].absent_breaks"),
    ({"requires": "cachetools", "absent_breaks": False}, "need[0].requires"),
    ({"on": "gpu"}, "need[0].on"),
    ({"bypass": "A B"}, "need[0].bypass"),
    ({"bypass": "X", "bypass_values": []}, "need[0].bypass_values"),
    ({"bypass_values": ["1"]}, "need[0].bypass_values"),
    ({"bypass": "X", "bypass_values": ["True"]}, "need[0].bypass_values"),
    ({"requires": ["torch>=2.1", "numpy"]}, "need[0].requires[1]"),
    ({"severity": "info"}, "need[0].severity"),
])
def test_a_malformed_row_names_the_file_and_key(row, key):
    good = {"package": "transformers", "releases": ">=4.50.0,<4.52.0", "requires": "torch>=2.1",
            "read_at": ["4.50.0"], "read_from": "x", "breaks": "y",
            "source": "https://github.com/huggingface/transformers/blob/v4.50.0/x.py"}
    with pytest.raises(InputError) as e:
        parse({"schema": "doctor.code-needs/1", "read": "2026-12-03", "need": [{**good, **row}]}, "/k/code-needs.toml")
    assert e.value.path == key and "/k/code-needs.toml" in str(e.value.source)


def test_a_malformed_enforces_row_names_the_file_and_key():
    good = {"package": "transformers", "releases": ">=4.36.0,<5.0.0", "names": ["tokenizers"], "read_at": ["4.36.0"],
            "read_from": "x", "breaks": "y", "source": "https://github.com/huggingface/transformers/blob/v4.36.0/x.py"}
    for row, key in [({"names": []}, "enforces[0].names"), ({"when_installed": ["numpy"]}, "enforces[0].names"),
                     ({"read_at": ["5.0.0"]}, "enforces[0].read_at[0]")]:
        with pytest.raises(InputError) as e:
            parse({"schema": "doctor.code-needs/1", "read": "2026-12-06", "need": [], "enforces": [{**good, **row}]},
                  "/k/code-needs.toml")
        assert e.value.path == key
