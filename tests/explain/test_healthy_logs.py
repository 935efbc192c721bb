"""`doctor explain` on real healthy text gives no error and no warning: short excerpts of logs and files that real,
successful runs wrote (each with its origin), the places where a signature or a failure rule once read a notice, a
comment or a counter as a failure."""

from __future__ import annotations

from pathlib import Path

from doctor.explain.multi import explain_many
from doctor.explain.stream import explain_path
from doctor.report import Severity

# A healthy Ray 2.60 job's raylet.out (tests/explain/test_real_runs.py's ray_job.py, run here 2026-12-03): the
# end of the periodic state dump, whose counters name failures that did not happen.
RAYLET_STATE_DUMP = """\
[2026-12-03 15:38:55,780 I 2326 2326] (raylet) node_manager.cc:492: [state-dump] NodeManager:
[state-dump] Node name: 192.0.2.2
[state-dump] - num chunks received total: 0
[state-dump] - num chunks received failed (all): 0
[state-dump] - num chunks received failed / cancelled: 0
[state-dump] - num chunks received failed / plasma error: 0
[state-dump] Event stats:
[state-dump] Global stats: 0 total (0 active)
"""

# vllm-ascend's tutorials (docs/source/tutorials/models/Qwen3.5-27B-Qwen3.6-27B.md, main 182b75e): the serve script
# users run and paste with their logs; its comment names out of memory as what the setting avoids.
VLLM_ASCEND_SCRIPT = """\
export HCCL_BUFFSIZE=512
# To reduce memory fragmentation and avoid out of memory
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
vllm serve /root/.cache/Qwen3.5-27B --tensor-parallel-size 2
"""


def _flagged(findings) -> list[tuple[str, object]]:
    return [(f.id, f.evidence.get("text")) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_a_ray_session_directory_of_a_healthy_job_gives_no_warning(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "raylet.out").write_text(RAYLET_STATE_DUMP)
    for empty in ("raylet.err", "gcs_server.err", "dashboard.out", "monitor.err"):  # Ray leaves these empty
        (logs / empty).write_bytes(b"")
    findings, extra = explain_many([str(logs)])
    assert _flagged(findings) == []
    assert "root_cause" not in extra
    assert {d["bytes"] for d in extra["logs"]} == {0, len(RAYLET_STATE_DUMP)}  # the empty files are still listed


def test_a_directory_of_only_empty_logs_still_says_nothing_was_readable(tmp_path: Path) -> None:
    (tmp_path / "raylet.err").write_bytes(b"")
    (tmp_path / "gcs_server.err").write_bytes(b"")
    findings, _ = explain_many([str(tmp_path)])
    assert {f.id for f in findings if f.severity is Severity.WARNING} == {"log-unreadable"}


def test_an_empty_log_named_on_the_command_line_is_still_reported(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("step 1 loss 0.5\n")
    (tmp_path / "b.log").write_bytes(b"")
    findings, _ = explain_many([str(tmp_path / "a.log"), str(tmp_path / "b.log")])
    assert "log-unreadable" in [f.id for f in findings]


def test_a_script_comment_that_names_out_of_memory_is_no_failure(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(VLLM_ASCEND_SCRIPT)
    assert _flagged(explain_path(str(log))[0]) == []


def test_the_out_of_memory_failure_itself_is_still_found(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(VLLM_ASCEND_SCRIPT + "cuda error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n")
    assert [i for i, _ in _flagged(explain_path(str(log))[0])] == ["device-out-of-memory"]


def test_a_comment_of_an_install_script_is_no_failure_line(tmp_path: Path) -> None:
    # MindSpeed-RL's docs/zh/install_guide.md (Ascend/MindSpeed-RL): "note: MindSpeed RL does not support triton;
    # uninstall triton-ascend if the environment has it", a comment of the install commands users paste.
    log = tmp_path / "install.log"
    log.write_text("# 注意：MindSpeed RL不支持 triton，如果环境中有 triton-ascend 需卸载\npip uninstall -y triton-ascend\n")
    assert _flagged(explain_path(str(log))[0]) == []
    # verl v0.6.1's tests/special_npu/run_qwen3_06b_ppo.sh (/work/shared/realworld/verl-scripts), as a user pastes it.
    log.write_text("set -x\n# TODO (FightingZhen) Env VLLM_USE_V1=1 is not supported in vllm==0.7.3\n"
                   "python3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=128 \\\n")
    assert _flagged(explain_path(str(log))[0]) == []


def test_a_short_environment_setup_script_is_no_quoted_message(tmp_path: Path) -> None:
    # Read as a quoted message, each line of a log this short is looked up among the packages' own messages; the
    # set-up lines of MindSpeed-LLM's docs/en/mindspore/install_guide.md and MindSpeed-RL's
    # docs/zh/solutions/r1_zero_qwen25_7b.md are commands and comments, no message of Megatron's.
    for name, text in (("setenv.sh", "# Set environment variables.\n"
                                     "source /usr/local/Ascend/cann/set_env.sh                 "
                                     "# Change this to the actual Toolkit installation path.\n"),
                       ("grpo.sh", "export HCCL_CONNECT_TIMEOUT=1800\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n\n"
                                   "python cli/train_grpo.py --config-name grpo_qwen25_7b_A3.yaml\n"),
                       # torch_npu's docs/zh/api/environment_variable/memory_management/PYTORCH_NO_NPU_MEMORY_CACHING.md
                       ("unset.sh", "unset PYTORCH_NO_NPU_MEMORY_CACHING\n")):
        log = tmp_path / name
        log.write_text(text)
        assert _flagged(explain_path(str(log))[0]) == [], name


# `python -m torch.utils.collect_env` of torch 2.13.0+cpu, run here 2026-12-03 (vllm-ascend's and verl's bug templates
# ask for this report): fields it could not read, and lscpu's CPU vulnerability lines.
COLLECT_ENV = """\
Collecting environment information...
PyTorch version: 2.13.0+cpu
Is debug build: False
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A
Clang version: Could not collect
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
Vulnerability Spec rstack overflow:      Not affected
Vulnerability Tsx async abort:           Not affected
[conda] Could not collect
"""

# `torch.__config__.show()` of the same torch (its build settings line up to LAPACK_INFO): compiler flags that name
# overflow and error warnings.
TORCH_BUILD_SETTINGS = (
    '  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, COMMIT_SHA=cf30153c4c131c8164ee7798e5022d810682e2cb, '
    'CUDA_FLAGS= -DLIBCUDACXX_ENABLE_SIMPLIFIED_COMPLEX_OPERATIONS -Xfatbin -compress-all  -Wno-deprecated-gpu-ta'
    'rgets --expt-extended-lambda -DCUB_WRAPPED_NAMESPACE=at_cuda_detail -DDISABLE_CUSPARSE_DEPRECATED -DCUDA_HAS'
    '_FP16=1 -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ -D__CUDA_N'
    'O_BFLOAT16_CONVERSIONS__ -DC10_NODEPRECATED, CXX_COMPILER=/opt/rh/gcc-toolset-13/root/usr/bin/c++, CXX_FLAGS'
    '= -fvisibility-inlines-hidden -DUSE_PTHREADPOOL -DNDEBUG -DUSE_KINETO -DUSE_FBGEMM -DUSE_PYTORCH_QNNPACK -DS'
    'YMBOLICATE_MOBILE_DEBUG_HANDLE -O2 -fPIC -DC10_NODEPRECATED -Wall -Wextra -Werror=return-type -Werror=non-vi'
    'rtual-dtor -Werror=range-loop-construct -Werror=bool-operation -Wnarrowing -Wno-missing-field-initializers -'
    'Wno-unknown-pragmas -Wno-unused-parameter -Wno-strict-overflow -Wno-strict-aliasing -Wno-stringop-overflow -'
    'Wsuggest-override -Wno-psabi -Wno-error=old-style-cast -faligned-new -Wno-maybe-uninitialized -fno-math-errn'
    'o -fno-trapping-math -Werror=format -Wno-dangling-reference -Wno-error=dangling-reference -Wno-stringop-over'
    'flow, LAPACK_INFO=mkl'
    "\n")


def test_torch_collect_env_and_build_settings_are_no_failure(tmp_path: Path) -> None:
    for name, text in (("collect_env.txt", COLLECT_ENV), ("config.txt", TORCH_BUILD_SETTINGS)):
        log = tmp_path / name
        log.write_text(text)
        assert _flagged(explain_path(str(log))[0]) == [], name


def test_a_failure_after_the_environment_report_is_still_read(tmp_path: Path) -> None:
    log = tmp_path / "issue.txt"
    log.write_text(COLLECT_ENV + "RuntimeError: Clang version could not be read: no such file /usr/bin/clang\n")
    assert _flagged(explain_path(str(log))[0])


def test_the_kernel_boot_messages_are_no_failure(tmp_path: Path) -> None:
    # `dmesg` of this machine's boot (Linux 6.18, 2026-12-03): the memory map's holes, which every boot reports.
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.002828] Initmem setup node 0 [mem 0x0000000000001000-0x000000063fffffff]\n"
                   "[    0.002861] On node 0, zone DMA: 1 pages in unavailable ranges\n"
                   "[    0.003276] On node 0, zone DMA: 97 pages in unavailable ranges\n"
                   "[    0.093273] TSC deadline timer available\n")
    assert _flagged(explain_path(str(log))[0]) == []


def test_a_short_list_of_launch_options_is_no_quoted_message(tmp_path: Path) -> None:
    # MindSpeed's docs/zh/features/async-ddp.md: the options a user adds to the pretrain script (a Megatron
    # message that names the option is no reason to read the option as that message).
    log = tmp_path / "args.txt"
    log.write_text("--use-distributed-optimizer\n--overlap-grad-reduce\n")
    assert _flagged(explain_path(str(log))[0]) == []
    log.write_text("    --overlap-param-gather \\\n    --micro-batch-size 1 \\\n")
    assert _flagged(explain_path(str(log))[0]) == []
