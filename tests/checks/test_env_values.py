"""`doctor check` judges the values of the variables the stack reads against what each reader takes
(profiles/env-values.toml, read from HCCL's, torch_npu's and vllm-ascend's source at release tags).

User-visible behaviour through `diagnose` (what `check --from` prints); the real-artifact tier runs the exports of
upstream verl's own NPU example scripts (shared/realworld/verl-scripts) and every documented stack's exports through
the check: none of them may be flagged."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from doctor.checks.env_values import env_values
from doctor.checks.runner import CheckContext, Skipped
from doctor.errors import InputError
from doctor.knowledge.env_values import JUDGED_ELSEWHERE, load, parse
from doctor.snapshot.model import snapshot_from_dict
from doctor.tomlfile import read_toml
from tests.conftest import SHARED
from tests.stacks import bare, diagnose_dict, healthy

IDS = ("env-value-invalid", "env-value-ignored")


def ours(d: dict[str, Any]) -> list[Any]:
    return [f for f in diagnose_dict(d).findings if f.id in IDS]


def one(d: dict[str, Any]) -> Any:
    got = ours(d)
    assert len(got) == 1, [f.title for f in got]
    return got[0]


def snap(env: dict[str, str], cann: str | None = None, **pkgs: str) -> dict[str, Any]:
    d = bare(env=env, packages={k.replace("_", "-"): {"version": v} for k, v in pkgs.items()})
    if cann:
        d["ascend"] = {"toolkit": {"version": cann}}
    return d


def test_task_queue_enable_true_is_read_as_zero_by_torch_npu() -> None:
    f = one(snap({"TASK_QUEUE_ENABLE": "true"}, torch_npu="2.5.1"))
    assert (f.id, f.severity.value, f.components) == ("env-value-ignored", "warning", ("torch-npu", "env"))
    assert "TASK_QUEUE_ENABLE='true' is read as 0" in f.title and "torch-npu 2.5.1" in f.title
    assert "0, 1 or 2" in f.detail and f.evidence["release"] == "2.5.1"
    assert f.fix.text == "export TASK_QUEUE_ENABLE=1"
    assert f.source.startswith("https://github.com/Ascend/pytorch/blob/v")
    three = one(snap({"TASK_QUEUE_ENABLE": "3"}, torch_npu="2.7.1"))
    assert (three.id, three.severity.value) == ("env-value-invalid", "error")
    assert not ours(snap({"TASK_QUEUE_ENABLE": "2"}, torch_npu="2.7.1"))
    assert not ours(snap({"TASK_QUEUE_ENABLE": "false"}, torch_npu="2.7.1"))  # read as 0, which it says


def test_the_accepted_values_follow_the_release() -> None:
    # HCCL_ASYNC_ERROR_HANDLING takes 0/1 up to 2.7.1.post1 and 0-3 from 2.7.1.post2 (Ascend Extension 7.3.0)
    assert one(snap({"HCCL_ASYNC_ERROR_HANDLING": "2"}, torch_npu="2.7.1")).severity.value == "error"
    assert not ours(snap({"HCCL_ASYNC_ERROR_HANDLING": "2"}, torch_npu="2.7.1.post2"))
    # HCCL_OP_EXPANSION_MODE: AICPU_TS from CANN 9.1.0; names are case-sensitive
    assert one(snap({"HCCL_OP_EXPANSION_MODE": "AICPU_TS"}, cann="9.0.0")).id == "env-value-invalid"
    assert not ours(snap({"HCCL_OP_EXPANSION_MODE": "AICPU_TS"}, cann="9.1.0"))
    f = one(snap({"HCCL_OP_EXPANSION_MODE": "aiv"}, cann="8.5.0"))
    assert (f.severity.value, f.components[0]) == ("error", "hccl") and f.fix.text == "export HCCL_OP_EXPANSION_MODE=AIV"


def test_a_release_outside_the_table_is_not_judged_and_unknown_is_judged_where_all_agree() -> None:
    assert not ours(snap({"HCCL_OP_EXPANSION_MODE": "aiv"}, cann="8.3.RC1"))  # no HCCL source read before 8.5.0
    # unknown CANN: every release read rejects 'aiv', 8.1/8.2 by using the default (their reference), 8.5 and later
    # by failing the collective: the mildest holds for all
    f = one(snap({"HCCL_OP_EXPANSION_MODE": "aiv"}))
    assert (f.id, f.severity.value) == ("env-value-ignored", "warning") and "8.1.RC1 to 9.2.0-beta.1" in f.title
    assert one(snap({"HCCL_OP_EXPANSION_MODE": "HOST_TS"}, cann="8.2.RC1")).id == "env-value-ignored"
    assert not ours(snap({"HCCL_OP_EXPANSION_MODE": "AICPU_TS"}))  # 9.1.0 takes it: releases disagree
    f = one(snap({"HCCL_DETERMINISTIC": "1"}))
    assert "every release read (8.5.0 to 9.2.0-beta.1)" in f.title and f.evidence["release"] is None
    assert not ours(snap({"HCCL_DETERMINISTIC": "True"}))  # upper-cased by the reader


def test_pytorch_npu_alloc_conf_grammar() -> None:
    f = one(snap({"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:true"}, torch_npu="2.5.1"))
    assert f.severity.value == "error" and "True or False" in f.detail
    assert f.fix.text == 'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"'
    both = one(snap({"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:128"}, torch_npu="2.7.1"))
    assert "together with max_split_size_mb" in both.title
    assert one(snap({"PYTORCH_NPU_ALLOC_CONF": "segment_size_mb:64"}, torch_npu="2.5.1")).id == "env-value-invalid"
    assert not ours(snap({"PYTORCH_NPU_ALLOC_CONF": "segment_size_mb:64"}, torch_npu="2.7.1.post2"))
    assert one(snap({"PYTORCH_NPU_ALLOC_CONF": "garbage_collection_threshold:1.5"}, torch_npu="2.6.0")).severity.value == "error"
    assert one(snap({"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb"}, torch_npu="2.6.0")).severity.value == "error"
    # a torch-npu build with a local label is the release it was built from
    assert not ours(snap({"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}, torch_npu="2.7.1.post2+gitabc1234"))
    # unknown torch-npu: 'true' is refused by every release read (before 2.1.0 the key did not exist at all)
    assert one(snap({"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:true"})).severity.value == "error"


def test_vllm_ascend_reads_its_switches_with_int() -> None:
    f = one(snap({"VLLM_ASCEND_ENABLE_NZ": "false"}, vllm_ascend="0.13.0"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("vllm-ascend", "env"))
    assert f.fix.text == "export VLLM_ASCEND_ENABLE_NZ=0"
    assert not ours(snap({"VLLM_ASCEND_ENABLE_NZ": "false"}, vllm_ascend="0.9.1"))  # not read by that release
    assert not ours(snap({"VLLM_ASCEND_ENABLE_NZ": " 1"}, vllm_ascend="0.13.0"))  # int() strips blanks


def test_cpu_affinity_conf_word_is_skipped_by_torch_npu() -> None:
    f = one(snap({"CPU_AFFINITY_CONF": "true"}, torch_npu="2.7.1"))
    assert (f.id, f.severity.value) == ("env-value-ignored", "warning") and f.fix.text == "export CPU_AFFINITY_CONF=1"
    assert one(snap({"CPU_AFFINITY_CONF": "mode:on,npu0:0-23"}, torch_npu="2.7.1")).id == "env-value-ignored"
    for ok in ("1", "2", "mode:1,npu0:0-23,npu1:24-47", "off"):
        assert not ours(snap({"CPU_AFFINITY_CONF": ok}, torch_npu="2.7.1")), ok


def test_verl_log_level_names_are_case_sensitive() -> None:
    f = one(snap({"VERL_LOGGING_LEVEL": "debug"}, verl="0.7.1"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("verl", "env"))
    assert f.fix.text == "export VERL_LOGGING_LEVEL=DEBUG"
    assert not ours(snap({"VERL_LOGGING_LEVEL": "INFO"}, verl="0.9.1"))
    f = one(snap({"VERL_USE_MODELSCOPE": "1"}, verl="0.9.1"))
    assert (f.id, f.fix.text) == ("env-value-ignored", "export VERL_USE_MODELSCOPE=true") and "ignored" in f.title


def test_hccl_intra_link_switches_are_judged_together() -> None:
    both = one(snap({"HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "1"}, cann="8.5.0"))
    assert (both.severity.value, both.components[0]) == ("error", "hccl") and "HCCL_INTRA_ROCE_ENABLE=1" in both.title
    assert not ours(snap({"HCCL_INTRA_PCIE_ENABLE": "0", "HCCL_INTRA_ROCE_ENABLE": "1"}, cann="8.5.0"))
    # RoCE off with PCIe unset is refused, but only where the snapshot says PCIe is unset (a complete one)
    assert not ours(snap({"HCCL_INTRA_ROCE_ENABLE": "0"}, cann="8.5.0"))
    d = snap({"HCCL_INTRA_ROCE_ENABLE": "0"}, cann="8.5.0")
    d["complete"] = True
    assert "HCCL_INTRA_PCIE_ENABLE unset" in one(d).title


def test_hccl_algo_grammar_is_hccls_own() -> None:
    # the reference's own examples, a level2 list, blanks (dropped by HCCL): taken at every tag read
    for ok in ("level0:NA;level1:NHR", "allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:H-D_R",
               "level0:NA;level1:H-D_R;level2:NHR", "level0:NA; level1:pipeline"):
        assert not ours(snap({"HCCL_ALGO": ok}, cann="8.5.0")), ok
        assert not ours(snap({"HCCL_ALGO": ok}, cann="9.2.0-beta.1")), ok
    f = one(snap({"HCCL_ALGO": "level0:NA;level1:RING"}, cann="9.1.0"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("hccl", "env"))
    assert "'RING'" in f.title and "case-sensitive" in f.title and "H-D_R" in f.detail
    assert f.source == "https://github.com/hicann/hccl/blob/v8.5.0/src/common/alg_env_config.cc"
    for bad, why in (("level0:NA;level1:ring/allreduce=level0:NA;level1:ring", "mixes"),
                     ("level0:NA;level1:ring;", "empty item"), ("level1:ring;level1:NHR", "level1 twice"),
                     ("level4:ring", "'level4'"), ("ring", "not level:algo"), ("all_reduce=level0:NA;level1:ring", "operator"),
                     ("allreduce=level0:null;level1:ring", "level0:null")):
        assert why in one(snap({"HCCL_ALGO": bad}, cann="8.5.0")).title, bad
    assert not ours(snap({"HCCL_ALGO": "level1:RING"}, cann="8.2.RC1"))  # HCCL before 8.5 was not read
    assert one(snap({"HCCL_ALGO": "level1:RING"})).id == "env-value-invalid"  # unknown CANN: every tag read refuses


def test_hccl_op_retry_enable_is_a_level_list() -> None:
    assert not ours(snap({"HCCL_OP_RETRY_ENABLE": "L1:1,L2:0"}, cann="9.1.0"))
    assert not ours(snap({"HCCL_OP_RETRY_ENABLE": "L1:1, L2:1"}, cann="8.5.0"))
    f = one(snap({"HCCL_OP_RETRY_ENABLE": "L1:true"}, cann="9.1.0"))
    assert (f.id, f.severity.value) == ("env-value-invalid", "error") and "L1: 0 or 1" in f.detail
    assert one(snap({"HCCL_OP_RETRY_ENABLE": "1"}, cann="9.1.0")).id == "env-value-invalid"
    assert "L3" in one(snap({"HCCL_OP_RETRY_ENABLE": "L1:1,L3:1"}, cann="9.1.0")).title


def test_hccl_split_ratio_must_be_a_number() -> None:
    name = "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO"
    assert one(snap({name: "half"}, cann="9.1.0")).severity.value == "error"
    assert not ours(snap({name: "0.6"}, cann="9.2.0-beta.1"))
    assert not ours(snap({name: "half"}, cann="9.0.0"))  # read from 9.1.0 on


def test_hccl_debug_config_names_any_case_no_blanks() -> None:
    for ok in ("ALG,TASK,RESOURCE", "alg,task", "^task,alg", "AIV_OPS_EXC"):
        assert not ours(snap({"HCCL_DEBUG_CONFIG": ok}, cann="8.5.0")), ok
    f = one(snap({"HCCL_DEBUG_CONFIG": "alg, task"}, cann="9.2.0-beta.1"))  # the reference: a blank makes it invalid
    assert (f.id, f.severity.value) == ("env-value-invalid", "error") and "' task'" in f.title
    assert one(snap({"HCCL_DEBUG_CONFIG": "1"})).id == "env-value-invalid"  # unknown CANN: every tag read refuses


def test_hccl_if_base_port_range() -> None:
    assert not ours(snap({"HCCL_IF_BASE_PORT": "50000"}, cann="9.1.0"))
    f = one(snap({"HCCL_IF_BASE_PORT": "65530"}, cann="9.2.0-beta.1"))
    assert (f.id, f.severity.value) == ("env-value-invalid", "error") and "[1024, 65520]" in f.detail
    assert f.fix.text.startswith("Set HCCL_IF_BASE_PORT to a value")
    assert one(snap({"HCCL_IF_BASE_PORT": "true"}, cann="9.1.0")).fix.text.startswith("Set ")  # never "=1"
    assert not ours(snap({"HCCL_IF_BASE_PORT": "80"}, cann="9.0.0"))  # read from 9.1.0 on


def test_hccl_op_retry_params_keys_and_ranges() -> None:
    for ok in ("MaxCnt:3,HoldTime:5000,IntervalTime:1000", "MaxCnt:5, HoldTime:5000, IntervalTime:5000"):
        assert not ours(snap({"HCCL_OP_RETRY_PARAMS": ok}, cann="9.1.0")), ok
    f = one(snap({"HCCL_OP_RETRY_PARAMS": "MaxCnt:20,HoldTime:5000,IntervalTime:1000"}, cann="9.1.0"))
    assert (f.id, f.severity.value) == ("env-value-invalid", "error") and "MaxCnt: an integer in [1, 10]" in f.detail
    assert "HoldTime" in one(snap({"HCCL_OP_RETRY_PARAMS": "MaxCnt:3,HoldTime:70000,IntervalTime:1"}, cann="9.1.0")).title
    assert one(snap({"HCCL_OP_RETRY_PARAMS": "MaxCount:3"}, cann="9.1.0")).id == "env-value-invalid"


def test_p2p_hccl_buffsize_is_collected_and_judged() -> None:
    from doctor.probes.envvars import is_relevant

    assert is_relevant("P2P_HCCL_BUFFSIZE")
    f = one(snap({"P2P_HCCL_BUFFSIZE": "-1"}, torch_npu="2.7.1"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("torch-npu", "env"))
    assert one(snap({"P2P_HCCL_BUFFSIZE": "20MB"}, torch_npu="2.7.1")).id == "env-value-ignored"
    for ok in ("0", "20"):
        assert not ours(snap({"P2P_HCCL_BUFFSIZE": ok}, torch_npu="2.9.0")), ok
    assert not ours(snap({"P2P_HCCL_BUFFSIZE": "-1"}, torch_npu="2.3.1"))  # before the check


def test_hccl_socket_port_ranges() -> None:
    for name in ("HCCL_HOST_SOCKET_PORT_RANGE", "HCCL_NPU_SOCKET_PORT_RANGE"):
        for ok in ("auto", "60000-60050", "60000,60050-60100,60150-60160", "56000, 56005"):
            assert not ours(snap({name: ok}, cann="9.1.0")), (name, ok)
        f = one(snap({name: "60000-60100,60050-60200"}, cann="9.2.0-beta.1"))
        assert (f.id, f.severity.value) == ("env-value-invalid", "error") and "overlaps" in f.title
        for bad in ("AUTO", "0-100", "60100-60000", "70000", "60000:60050"):
            assert one(snap({name: bad}, cann="9.1.0")).id == "env-value-invalid", (name, bad)
    assert not ours(snap({"HCCL_HOST_SOCKET_PORT_RANGE": "AUTO"}, cann="8.5.0"))  # read from 9.1.0 on


def test_hccl_dfs_config_items_are_key_value_and_its_switches_are_hccls() -> None:
    # ParseDfsConfig (CANN 9.1.0 on): blanks dropped, lower-cased, ',' items of exactly key:value; inconsistent_check
    # on/first/off; task_exception on/off from 9.2.0-beta.1; keys the communicator reads are left alone
    upstream = "connection_fault_detection_time:30,cluster_heartbeat:on,stuck_detection:on,inconsistent_check:off,task_monitor_interval:0"
    for ok in (upstream, "INCONSISTENT_CHECK:First", "inconsistent_check : on", "cluster_heartbeat:off"):
        assert not ours(snap({"HCCL_DFS_CONFIG": ok}, cann="9.1.0")), ok
    f = one(snap({"HCCL_DFS_CONFIG": "inconsistent_check:true"}, cann="9.1.0"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("hccl", "env"))
    assert "inconsistent_check: on, first or off" in f.detail and f.source.startswith("https://github.com/hicann/hccl/blob/v9.")
    for bad in ("cluster_heartbeat:on,", "cluster_heartbeat=on", "a:b:c", "stuck_detection:on,,cluster_heartbeat:on"):
        assert "is not key:value" in one(snap({"HCCL_DFS_CONFIG": bad}, cann="9.2.0-beta.1")).title, bad
    assert not ours(snap({"HCCL_DFS_CONFIG": "task_exception:true"}, cann="9.1.0"))  # 9.1.0 passes the key over
    assert one(snap({"HCCL_DFS_CONFIG": "task_exception:true"}, cann="9.2.0-beta.1")).id == "env-value-invalid"
    assert not ours(snap({"HCCL_DFS_CONFIG": "inconsistent_check:true"}, cann="9.0.1"))  # not read before 9.1.0


def test_torch_npu_process_group_and_device_checks() -> None:
    from doctor.probes.envvars import is_relevant

    assert is_relevant("NPU_ASD_ENABLE") and is_relevant("ACL_DEVICE_SYNC_TIMEOUT")
    for name, bad, good in (("HCCL_DESYNC_DEBUG", "2", "1"), ("NPU_ASD_ENABLE", "4", "3"), ("ACL_DEVICE_SYNC_TIMEOUT", "0", "600")):
        f = one(snap({name: bad}, torch_npu="2.7.1"))
        assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("torch-npu", "env")), name
        assert not ours(snap({name: good}, torch_npu="2.7.1")), name
        assert not ours(snap({name: bad}, torch_npu="2.1.0.post8")), name  # before the TORCH_CHECK (Ascend Extension 6.0.0)
    assert "ACL_DEVICE_SYNC_TIMEOUT='-5' is outside" in one(snap({"ACL_DEVICE_SYNC_TIMEOUT": "-5"}, torch_npu="2.12.0")).title
    for name in ("TORCH_HCCL_ZERO_COPY", "INF_NAN_MODE_FORCE_DISABLE"):
        f = one(snap({name: "true"}, torch_npu="2.9.0"))
        assert (f.id, f.severity.value) == ("env-value-ignored", "warning") and f.fix.text == f"export {name}=1", name
        assert not ours(snap({name: "1"}, torch_npu="2.9.0")), name
    assert not ours(snap({"TORCH_HCCL_ZERO_COPY": "true"}, torch_npu="2.4.0.post2"))  # read from 2.4.0.post4 on


def test_vllm_ascend_eplb_switches_are_compared_as_text() -> None:
    from doctor.probes.envvars import is_relevant

    assert is_relevant("DYNAMIC_EPLB") and is_relevant("EXPERT_MAP_RECORD")
    f = one(snap({"DYNAMIC_EPLB": "True"}, vllm_ascend="0.11.0"))  # == "true" there
    assert (f.id, f.severity.value, f.components) == ("env-value-ignored", "warning", ("vllm-ascend", "env"))
    assert f.fix.text == "export DYNAMIC_EPLB=true"
    assert not ours(snap({"DYNAMIC_EPLB": "True"}, vllm_ascend="0.13.0"))  # .lower() in ("true", "1") from 0.12.0rc1
    assert one(snap({"DYNAMIC_EPLB": "yes"}, vllm_ascend="0.25.1rc1")).id == "env-value-ignored"
    assert one(snap({"EXPERT_MAP_RECORD": "1"}, vllm_ascend="0.18.0")).id == "env-value-ignored"
    assert not ours(snap({"EXPERT_MAP_RECORD": "true", "DYNAMIC_EPLB": "1"}, vllm_ascend="0.18.0"))
    assert not ours(snap({"DYNAMIC_EPLB": "True"}, vllm_ascend="0.10.2rc1"))  # not read before 0.11.0rc1


def test_mindspeed_reads_its_log_level_and_the_asd_switch() -> None:
    import logging.config

    from doctor.knowledge.env_values import _judge_text
    from doctor.probes.envvars import is_relevant

    assert is_relevant("MIND_SPEED_LOG_LEVEL")
    f = one(snap({"MIND_SPEED_LOG_LEVEL": "info"}, mindspeed="0.12.1"))
    assert (f.id, f.severity.value, f.components) == ("env-value-invalid", "error", ("mindspeed", "env"))
    assert f.fix.text == "export MIND_SPEED_LOG_LEVEL=INFO" and "mindspeed 0.12.1" in f.title
    assert not ours(snap({"MIND_SPEED_LOG_LEVEL": "DEBUG"}, mindspeed="0.12.1"))
    assert not ours(snap({"MIND_SPEED_LOG_LEVEL": "info"}, mindspeed="0.8.0"))  # no log_config.py there
    got = {(x.components[0], x.id) for x in ours(snap({"NPU_ASD_ENABLE": "true"}, mindspeed="0.8.0", torch_npu="2.7.1"))}
    assert got == {("mindspeed", "env-value-invalid"), ("torch-npu", "env-value-ignored")}  # int() raises; strtol reads 0
    row = load().rows_of("MIND_SPEED_LOG_LEVEL")[0]
    for s in ("INFO", "info", "20", "WARNING", " DEBUG", "Error", "NOTSET"):
        # the handler's level is checked as the root's is (logging._checkLevel); no logger is touched here
        config = {"version": 1, "disable_existing_loggers": False,
                  "handlers": {"console": {"class": "logging.NullHandler", "level": s}}}
        try:
            logging.config.dictConfig(config)
            takes = True
        except ValueError:
            takes = False
        assert (_judge_text(row, row.rule, s, "MIND_SPEED_LOG_LEVEL") is None) == takes, s


def test_two_readers_of_one_variable() -> None:
    got = {(f.components[0], f.id) for f in ours(snap({"HCCL_BUFFSIZE": "200MB"}, cann="9.1.0", torch_npu="2.7.1"))}
    assert got == {("hccl", "env-value-invalid"), ("torch-npu", "env-value-ignored")}


def test_silent_cases() -> None:
    assert not ours(snap({"SOME_OTHER_VAR": "x", "TASK_QUEUE_ENABLE": ""}, torch_npu="2.5.1"))
    d = healthy()
    d["env"]["VLLM_ASCEND_ENABLE_NZ"] = "false"
    del d["packages"]["vllm-ascend"]  # a complete snapshot without vllm-ascend: nothing reads it
    assert not ours(d)


def test_healthy_documented_stacks_give_no_finding() -> None:
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        d = stack_snapshot(p)
        assert not ours(d), (p.name, [f.title for f in ours(d)])


# --------------------------------------------------------------------------- real artifacts

SCRIPTS = sorted((SHARED / "realworld" / "verl-scripts").glob("v*/scripts/**/*.sh"))
_EXPORT = re.compile(r"^\s*export\s+([A-Z_][A-Z0-9_]*)=(.*?)\s*$")


def exports(path: Path) -> dict[str, str]:
    """The literal `export NAME=value` lines of a script (quotes removed, ${NAME:-default} as its default; values
    built from other variables are left out)."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _EXPORT.match(line)
        if not m:
            continue
        v = re.sub(r"\s+#.*$", "", m.group(2)).strip().strip("\"'")
        v = re.sub(r"^\$\{[A-Z_][A-Z0-9_]*:-([^}]*)\}$", r"\1", v)
        if "$" not in v and "`" not in v:
            out[m.group(1)] = v
    return out


@pytest.mark.skipif(not SCRIPTS, reason="shared/realworld/verl-scripts is not available")
def _judged(d: dict[str, Any]) -> list[Any]:
    """The check's findings on a snapshot document; a skip (no variable of the table set) finds nothing."""
    try:
        return list(env_values(CheckContext(snapshot=snapshot_from_dict(d))))
    except Skipped:
        return []


def test_a_host_that_sets_none_of_the_variables_skips_before_validating_the_table(monkeypatch) -> None:
    """Most hosts set none of the table's variables: the check says so without paying for the table's validation
    (a malformed table is still refused where a variable it judges is set)."""
    import doctor.knowledge.env_values as ev

    monkeypatch.setattr(ev, "_TABLES", {})
    monkeypatch.setattr(ev, "parse", lambda data, source: (_ for _ in ()).throw(InputError("bad table", source=source)))
    with pytest.raises(Skipped, match="none of the variables"):
        list(env_values(CheckContext(snapshot=snapshot_from_dict(bare(env={"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/x"})))))
    with pytest.raises(InputError, match="bad table"):
        list(env_values(CheckContext(snapshot=snapshot_from_dict(bare(env={"TASK_QUEUE_ENABLE": "true"})))))


def test_upstream_verl_npu_scripts_exports_give_no_finding() -> None:
    from doctor.knowledge.profiles import load_profiles

    table = load()
    seen: set[str] = set()
    stacks = [{"torch-npu": p.pins.get("torch-npu", ""), "vllm-ascend": p.pins.get("vllm-ascend", ""), "cann": p.cann_version}
              for p in load_profiles()] + [{}]
    for script in SCRIPTS:
        env = exports(script)
        seen.update(n for n in env if n in table.names())
        for st in stacks:
            pkgs = {k: {"version": re.sub(r"^[=<>~!]+|\.\*$", "", v)} for k, v in st.items() if k != "cann" and v}
            d = bare(env=env, packages=pkgs)
            if st.get("cann") and st["cann"] != "unknown":
                d["ascend"] = {"toolkit": {"version": st["cann"]}}
            bad = _judged(d)
            assert not bad, (str(script), st, [f.title for f in bad])
    # the scripts do exercise the table: their HCCL / torch_npu / vllm-ascend settings are judged, and pass
    assert {"TASK_QUEUE_ENABLE", "HCCL_OP_EXPANSION_MODE", "PYTORCH_NPU_ALLOC_CONF", "HCCL_BUFFSIZE", "CPU_AFFINITY_CONF",
            "HCCL_ASYNC_ERROR_HANDLING", "VLLM_ASCEND_ENABLE_NZ"} <= seen, seen


# --------------------------------------------------------------------------- the table itself


def test_the_table_loads_and_leaves_other_checks_variables_alone() -> None:
    table = load()
    assert len(table.rows) > 50 and {"hccl", "torch-npu", "vllm-ascend", "verl", "mindspeed"} == set(table.readers)
    assert not table.names() & JUDGED_ELSEWHERE


def _doc() -> dict[str, Any]:
    from doctor.knowledge.location import packaged_dir

    return read_toml(str(Path(packaged_dir()) / "env-values.toml"), "table")


@pytest.mark.parametrize("edit, key", [
    (lambda d: d["var"][0].update(parse="bogus"), "var[0].parse"),
    (lambda d: d["var"][0].update(releases="not a range"), "var[0].releases[0]"),
    (lambda d: d["var"][0].update(name="HCCL_CONNECT_TIMEOUT"), "var[0].name"),
    (lambda d: d["var"][0].update(read_at=["7.0.0"]), "var[0].read_at[0]"),
    (lambda d: d["var"][0].update(source="https://github.com/hicann/hccl/blob/master/x.cc"), "var[0].source"),
])
def test_a_broken_table_names_the_key(edit: Any, key: str) -> None:
    d = _doc()
    edit(d)
    with pytest.raises(InputError) as e:
        parse(d, "env-values.toml")
    assert f"env-values.toml: {key}:" in str(e.value)


# --------------------------------------------------------------------------- the parses are the readers' own

_SAMPLES = ["1", "0", "2", " 3", "+1", "-1", "true", "True", "1.0", "1e3", "12abc", "0x10", "", " ", "07", "1_000",
            "\t4", "\u0661", "99999999999", "- 1", "1 ", "on", "2\n"]


def test_strtol_is_libc_strtol() -> None:
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.strtol.restype = ctypes.c_long
    libc.strtol.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
    from doctor.knowledge.env_values import _strtol

    for s in _SAMPLES:
        if not s.isascii():
            continue
        end = ctypes.c_char_p()
        raw = s.encode()
        n = libc.strtol(raw, ctypes.byref(end), 10)
        consumed = len(raw) - len(end.value or b"")
        ours_n, whole = _strtol(s)
        assert ours_n == n, s
        assert whole == (consumed == len(raw) and consumed > 0 and n == ours_n and bool(s.strip())), s


def test_python_int_is_int() -> None:
    from doctor.knowledge.env_values import Rule, _judge_text

    for s in _SAMPLES:
        try:
            int(s)
            takes = True
        except ValueError:
            takes = False
        row = load().rows_of("VLLM_ASCEND_ENABLE_NZ")[0]
        assert (_judge_text(row, Rule("python-int"), s, "X") is None) == takes, repr(s)


def test_verl_log_levels_are_what_logging_takes() -> None:
    import logging

    row = load().rows_of("VERL_LOGGING_LEVEL")[0]
    from doctor.knowledge.env_values import _judge_text

    for s in ("DEBUG", "debug", "INFO", "Info", "WARN", "WARNING", "10", "FATAL", "NOTSET", "TRACE", " INFO"):
        try:
            logging.getLogger("env-values-test").setLevel(s)
            takes = True
        except ValueError:
            takes = False
        assert (_judge_text(row, row.rule, s, "VERL_LOGGING_LEVEL") is None) == takes, s
