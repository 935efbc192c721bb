"""Who prints this message: a bare exception or logged line attributed to the package whose source writes it
(doctor/explain/messages.py over profiles/message_owners.json, read from the upstream sources)."""

from __future__ import annotations

from bench.explain_speed import SHORT_LOG
from doctor.explain.messages import FINDING_ID, load_table
from doctor.explain.signatures import explain_lines
from doctor.report import Severity

# Real upstream messages, as the shipped table read them:
# verl main 1dda039, verl/workers/config/rollout.py RolloutConfig.__post_init__ (a configuration check)
# (the check no signature knows: its sync-mode check now has one, verl-rollout-sync-mode-removed, which wins)
VERL_CONFIG = ("ValueError: rollout.disaggregation.enabled=True requires rollout.name in ('sglang', 'vllm'); "
               "got 'hf'.")
# vllm-ascend main 182b75e, vllm_ascend/ascend_config.py AscendConfig.__init__ (logger.warning)
VLLM_ASCEND_WARNING = ("(EngineCore_DP0 pid=30023) WARNING 12-03 10:00:00 [ascend_config.py:123] enable_reduce_sample "
                       "is an experimental feature. Use with caution.")
# MindSpeed 028de58, mindspeed/core/context_parallel/utils.py AdaptiveCpOps.adaptive_remap (not a config check)
MINDSPEED_RUNTIME = "RuntimeError: Only 2-dimensional self-attention mask supported in adaptive cp"


def _owned(lines: list[str]):
    return [f for f in explain_lines(lines) if f.id == FINDING_ID]


def test_a_bare_verl_config_check_message_names_verl_and_the_raising_file():
    (f,) = _owned([VERL_CONFIG])
    assert f.severity is Severity.ERROR and f.components == ("config", "verl")
    assert "verl/workers/config/rollout.py" in f.title and "RolloutConfig.__post_init__" in f.title
    owner = f.evidence["owners"][0]
    assert owner["distribution"] == "verl" and owner["version"].startswith("main@")
    assert f.source.startswith("https://github.com/verl-project/verl/blob/") and f.source.endswith(
        "/verl/workers/config/rollout.py")


def test_a_message_cut_short_or_logged_instead_of_raised_is_still_found():
    cut = VERL_CONFIG[: VERL_CONFIG.index(";")]
    (f,) = _owned(["[2025-06-16 15:11:06,443] [ERROR] [main_ppo.py:64:main] " + cut.removeprefix("ValueError: ")])
    assert f.components == ("config", "verl") and f.severity is Severity.ERROR


def test_a_package_error_that_is_no_config_check_names_the_package_first():
    (f,) = _owned([MINDSPEED_RUNTIME])
    assert f.severity is Severity.ERROR and f.components == ("mindspeed", "config")
    assert "mindspeed/core/context_parallel/utils.py" in f.title and "adaptive_remap" in f.title


def test_a_logged_vllm_ascend_warning_is_vllm_ascend_at_warning():
    findings = explain_lines([VLLM_ASCEND_WARNING])
    (f,) = [x for x in findings if x.id == FINDING_ID]
    assert f.severity is Severity.WARNING and f.components == ("vllm-ascend", "config")
    assert all(x.severity is not Severity.ERROR for x in findings)


def test_a_specific_signature_still_wins_over_the_message_owner():
    # verl's own batch-size check: the signature verl-batch-size-invalid knows it; no message-owner finding
    findings = explain_lines(["ValueError: [critic] ppo_mini_batch_size (256) must be divisible by "
                              "ppo_micro_batch_size (3)"])
    assert findings[0].id == "verl-batch-size-invalid"
    assert not [f for f in findings if f.id == FINDING_ID]


def test_a_frame_attribution_is_not_replaced_by_the_message():
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.10/site-packages/verl/workers/config/rollout.py", line 120, in __post_init__',
             "    raise ValueError(msg)", VERL_CONFIG]
    assert explain_lines(lines)[0].id == "error-in-package"


def test_os_text_and_unknown_messages_name_nobody():
    assert not _owned(["FileNotFoundError: [Errno 2] No such file or directory: 'common.pt'"])
    assert not _owned(["RuntimeError: the frobnicator refused the widget configuration entirely"])


def test_the_short_log_does_not_load_the_table():
    load_table.cache_clear()
    findings = explain_lines(SHORT_LOG.splitlines())
    assert findings and load_table.cache_info().currsize == 0
    explain_lines([VERL_CONFIG])
    assert load_table.cache_info().currsize == 1  # the same process does load it when an event needs it


def test_a_warning_first_does_not_hide_a_later_error():
    findings = explain_lines([VLLM_ASCEND_WARNING, "some output", MINDSPEED_RUNTIME])
    owned = [(f.severity, f.components[0]) for f in findings if f.id == FINDING_ID]
    assert owned == [(Severity.ERROR, "mindspeed"), (Severity.WARNING, "vllm-ascend")]  # the error ranks first


def test_the_shipped_templates_find_their_own_package_when_printed():
    """Round trip over a fixed sample of the table: fill every wildcard, print the message the way its kind
    reaches a log, and read it back. The misses are by design: a text more than 3 packages share (optimizer checks
    copied everywhere), one shorter than 16 literal characters, or one that names a missing module."""
    import random

    from doctor.explain.events import EventReader
    from doctor.explain.messages import attribute_message

    table = load_table()
    heads = {"assert": "AssertionError: ", "log:error": "ERROR 12-03 10:00:00 [x.py:1] ",
             "log:warning": "WARNING 12-03 10:00:00 [x.py:1] "}
    found = tried = 0
    for i in random.Random(5).sample(range(len(table.templates)), 200):
        site = table.templates[i]
        if site.kind.startswith("warn:"):
            continue
        head = f"{site.kind[6:]}: " if site.kind.startswith("raise:") else heads[site.kind]
        ev = EventReader().feed(1, head + ("val" if not site.pieces[0] else "") + "7".join(site.pieces))
        tried += 1
        att = attribute_message(ev, table) if ev is not None else None
        found += att is not None and table.sources[site.origin].distribution in {
            o["distribution"] for o in att.extra["owners"]}
    assert tried > 150 and found >= 0.9 * tried, (found, tried)


def test_the_indexed_table_is_kept_in_the_cache_and_a_changed_file_is_read_and_validated_again(tmp_path, monkeypatch):
    import json
    import os

    import pytest

    from doctor.errors import InputError
    from doctor.explain.messages import DEFAULT_TABLE, owners_of

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    table = tmp_path / "owners.json"
    table.write_bytes(DEFAULT_TABLE.read_bytes())
    first = load_table.__wrapped__(str(table))
    cached = list((tmp_path / "cache").rglob("*.marshal"))
    assert len(cached) == 1
    again = load_table.__wrapped__(str(table))  # from the cache: the same table
    assert again.sites == first.sites and again.index == first.index and again.origins == first.origins
    text = "ppo_mini_batch_size must be greater than or equal to the number of GPUs"
    assert [s.path for s in owners_of(text, table=again)] == [s.path for s in owners_of(text, table=first)]
    cached[0].write_bytes(b"not marshal")  # a damaged cache is read past, never trusted
    assert load_table.__wrapped__(str(table)).sites == first.sites
    data = json.loads(table.read_text())
    data["sources"][0]["component"] = "nonsense"
    table.write_text(json.dumps(data))
    os.utime(table, ns=(1, 1))  # whatever its mtime, a changed size or mtime is another key
    with pytest.raises(InputError, match="component"):
        load_table.__wrapped__(str(table))


def test_the_table_read_is_left_out_of_later_garbage_collections(tmp_path, monkeypatch):
    """The table is ~146,000 tuples that live as long as the run. The collections after it was read walked them
    all, ~60 ms of a 67-line log's run (more than reading them): read from the file or from the cache, they are
    moved out of the collector's reach (gc.freeze), and the collector runs again after; a table that fails to read
    is not frozen."""
    import gc
    import json

    import pytest

    from doctor.errors import InputError
    from doctor.explain.messages import DEFAULT_TABLE

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    table = tmp_path / "owners.json"
    table.write_bytes(DEFAULT_TABLE.read_bytes())
    gc.unfreeze()
    try:
        for source in ("the file", "the cache"):
            read = load_table.__wrapped__(str(table))
            assert gc.get_freeze_count() > len(read.sites), source
            assert gc.isenabled()
            gc.unfreeze()
        data = json.loads(table.read_text())
        data["sources"][0]["component"] = "nonsense"
        table.write_text(json.dumps(data))
        with pytest.raises(InputError, match="component"):
            load_table.__wrapped__(str(table))
        assert gc.get_freeze_count() == 0 and gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_text_two_packages_raise_names_the_component_of_each_and_no_bare_python():
    # transformers' Trainer.compute_loss text, copied by ms-swift (a package with no component of its own)
    f = explain_lines(["ValueError: The model did not return a loss from the inputs, only the following keys: "
                       "logits. For reference, the inputs it received are input_ids,attention_mask."])[0]
    assert f.id == FINDING_ID and f.components == ("transformers", "config"), f.components
    assert {o["distribution"] for o in f.evidence["owners"]} == {"transformers", "ms-swift"}


def test_a_check_megatron_wrote_and_mindspeed_copied_names_megatron_first():
    f = explain_lines(["AssertionError: Number of layers should be divisible by the pipeline-model-parallel size"])[0]
    assert f.id == FINDING_ID
    dists = {o["distribution"] for o in f.evidence["owners"]}
    assert "megatron-core" in dists and any(d.startswith("mindspeed") for d in dists), dists
    assert f.components.index("megatron") < f.components.index("mindspeed"), f.components


def test_a_short_log_that_is_a_packages_message_without_its_exception_type_is_still_owned():
    from dataclasses import replace

    from doctor.explain.db import read_signatures

    db = read_signatures()
    generic = replace(db, signatures=tuple(s for s in db.signatures if s.fallback or s.yields))
    # pasted without `OSError:` and cut after the file name it formats in
    f = explain_lines(["XXXX does not appear to have a file named tokenization_chatglm.py"], db=generic)[0]
    assert f.id == FINDING_ID and "transformers" in f.components, (f.id, f.components)
    # a longer log is a run's output: its plain lines are not looked up one by one
    many = ["step 1", "step 2", "step 3", "step 4", "XXXX does not appear to have a file named tokenization_chatglm.py"]
    assert explain_lines(many, db=generic)[0].id != FINDING_ID


# ray 2.60.0, ray/_private/services.py determine_plasma_store_config (logger.warning), as a log pasted into an issue
# shows it: Ray's tab after the date turned into spaces, the record wrapped onto indented lines
RAY_PASTED = [
    "2025-10-09 20:16:32,652    WARNING services.py:2159 -- WARNING: The object store is using /tmp instead",
    "  of /dev/shm because /dev/shm has only 5368709120 bytes available. This will harm performance! You may",
    "  be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you can",
    "  increase /dev/shm size by passing '--shm-size=10.24gb' to 'docker run' (or add it to the run_options",
    "  list in a Ray cluster config). Make sure to set this to more than 30% of available RAM.",
]


def test_a_logged_record_wrapped_onto_indented_lines_is_read_whole_and_found():
    # Before: the first line alone ("... using /tmp instead") matched no template: no finding named ray.
    (f,) = _owned(RAY_PASTED)
    assert f.severity is Severity.WARNING and "ray" in f.components[:2]
    assert "ray/_private/services.py" in f.title and f.evidence["line"] == 1
    # a line that is not indented is not part of the record (joined, it would spoil the match)
    (g,) = _owned([*RAY_PASTED[:2], "Connecting to an existing Ray cluster at address: 10.0.0.1:6379..."])
    assert "ray" in g.components[:2]


# torch_npu master 9e73e70, torch_npu/csrc/core/npu/CachingHostAllocator.cpp (logged at error level, and the message
# itself says it is harmless); the run in https://github.com/Ascend/pytorch/issues/108 went on.
TORCH_NPU_IGNORABLE = ("torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free "
                       "cached blocks and reallocate. This error log can be ignored.")


def test_a_line_its_package_logs_as_an_error_but_says_can_be_ignored_is_a_notice_not_the_failure():
    (f,) = _owned([TORCH_NPU_IGNORABLE])
    assert f.severity is Severity.INFO and f.components[0] == "torch-npu"
    assert "can be ignored" in f.title and "not the failure" in f.fix.text
    # beside a real failure it never ranks first, and alone it gives no error (exit 0)
    findings = explain_lines([TORCH_NPU_IGNORABLE, "Traceback (most recent call last):",
                              '  File "/root/train.py", line 10, in <module>', "    import torch_npu",
                              "ImportError: libhccl.so: cannot open shared object file: No such file or directory"])
    assert findings[0].id == "cann-libhccl-missing" and findings[0].severity is Severity.ERROR
    assert [f.severity for f in findings if f.id == FINDING_ID] == [Severity.INFO]


def test_a_message_that_says_another_message_or_a_case_can_be_ignored_keeps_its_level():
    from doctor.explain.messages import says_ignorable

    assert says_ignorable(("Get a block from the existing pool failed. Try to free cached blocks and reallocate. "
                           "This error log can be ignored.",))
    assert says_ignorable(("name_or_path not provided, ", ", this can safely be ignored"))
    # a condition, another message, or flags that "may be ignored" by the package: not a statement about itself
    assert not says_ignorable(("Failed to call deepspeed_load_checkpoint function. If `--resume_only_model true` is "
                               "set, this warning can be ignored. ",))
    assert not says_ignorable(("The following error message 'operation scheduled before its operands' can be "
                               "ignored.",))
    assert not says_ignorable(("The following generation flags are not valid and may be ignored: ", ""))
