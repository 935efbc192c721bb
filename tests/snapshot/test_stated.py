"""doctor.snapshot.stated: the facts a bug report states, read from the forms reports paste (real outputs of
torch's and vllm-ascend's collect_env, pip list / freeze, npu-smi info and CANN's install.info from public
reports: tests/fixtures/stated/README.md), with the line each came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from doctor.snapshot.model import snapshot_from_dict
from doctor.snapshot.redact import REDACTED
from doctor.snapshot.stated import read_stated

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "stated"


def facts(text: str) -> dict:
    return {f.key: f.value for f in read_stated(text).facts}


def test_vllm_ascend_collect_env_gives_versions_host_devices_and_variables():
    text = (FIX / "vllm-ascend-collect-env.txt").read_text()
    s = read_stated(text)
    got = {f.key: f.value for f in s.facts}
    assert got["packages.torch"] == "2.13.0+cpu"
    assert got["packages.vllm"] == "0.11.0"
    assert got["packages.vllm-ascend"] == "0.11.0rc1.dev12+g1a2b3c4.d20251101"  # "(git sha: ...)" dropped
    assert got["packages.transformers"] == "5.24.0" and got["packages.numpy"] == "2.4.6"
    assert got["python.version"] == "3.11.7"
    assert got["host.libc"] == "glibc 2.36" and got["host.arch"] == "x86_64"
    assert got["env.ASCEND_RT_VISIBLE_DEVICES"] == "0,1"
    assert got["ascend.npu_smi"] == {"status": "ok", "version": "24.1.0"}
    assert [d["chip"] for d in got["ascend.devices"]] == ["910ProB"] * 8
    assert s.conflicts == ()
    line = next(f for f in s.facts if f.key == "packages.vllm")
    assert text.splitlines()[line.line - 1].startswith("vLLM Version: 0.11.0")
    snap = snapshot_from_dict(s.document(), source="report")
    assert snap.version("vllm-ascend") == "0.11.0rc1.dev12+g1a2b3c4.d20251101"
    assert not snap.is_complete  # a package the report does not name is unknown, never "not installed"
    assert snap.has_package("torch-npu") is None


def test_torch_collect_env_gives_torch_python_and_host():
    got = facts((FIX / "torch-collect-env.txt").read_text())
    assert got["packages.torch"] == "2.13.0+cpu"
    assert got["python.version"] == "3.11.7"
    assert got["host.libc"] == "glibc 2.36" and got["host.arch"] == "x86_64"
    assert got["host.os"] == "Debian GNU/Linux 12 (bookworm)"


def test_pip_list_and_pip_freeze_of_one_environment_read_the_same_versions():
    listed = {k: v for k, v in facts((FIX / "pip-list.txt").read_text()).items() if k.startswith("packages.")}
    frozen = {k: v for k, v in facts((FIX / "pip-freeze.txt").read_text()).items() if k.startswith("packages.")}
    assert len(listed) >= 100
    assert {k: v for k, v in listed.items() if k in frozen} == frozen
    assert listed["packages.torch"] == "2.13.0+cpu"


def test_npu_smi_and_toolkit_install_info_pasted_in_a_report():
    got = facts((FIX / "vllm-ascend-834.txt").read_text())
    assert got["ascend.npu_smi"]["version"] == "24.1.rc1"
    assert [d["chip"] for d in got["ascend.devices"]] == ["910B3"]
    assert got["ascend.toolkit"] == "8.1.RC1.alpha001"
    got = facts((FIX / "vllm-ascend-4621.txt").read_text())
    assert got["ascend.toolkit"] == "8.3.RC2" and [d["chip"] for d in got["ascend.devices"]] == ["910B2C"]


def test_prose_version_lines_are_read_and_sentences_are_not():
    got = facts("Environment:\n- vllm-ascend: v0.9.1rc1\n- CANN: 8.1.RC1\n* torch_npu 2.5.1\nPython 3.10\n"
                "NPU driver: 24.1.rc3\n"
                "I upgraded torch to 2.6.0 yesterday and vllm 0.9.2 broke\n")
    assert got == {"packages.vllm-ascend": "0.9.1rc1", "ascend.toolkit": "8.1.RC1", "packages.torch-npu": "2.5.1",
                   "python.version": "3.10", "ascend.driver": "24.1.rc3"}


def test_a_fact_stated_with_two_values_is_left_out_and_named():
    s = read_stated("torch==2.5.1\nvllm==0.9.1\n\nafter the upgrade:\ntorch==2.6.0\nvllm==v0.9.1\n")
    got = {f.key: f.value for f in s.facts}
    assert "packages.torch" not in got and got["packages.vllm"] == "0.9.1"  # v0.9.1 is the same version
    (conflict,) = s.conflicts
    assert [(f.value, f.line) for f in conflict] == [("2.5.1", 1), ("2.6.0", 5)]
    assert "packages" in s.document() and "torch" not in s.document()["packages"]


def test_versions_that_do_not_parse_state_nothing():
    got = facts("vLLM Version: N/A\nPyTorch version: Could not collect\nCANN: 8.x\n[conda] Could not collect\n"
                "package_name=Ascend-cann-toolkit\nversion=latest\n")
    assert got == {}


def test_variables_the_stack_reads_are_kept_secrets_redacted_and_expansions_skipped():
    got = facts("export HCCL_BUFFSIZE=200\nHCCL_CONNECT_TIMEOUT='1500'\nVLLM_API_KEY=sk-123\n"
                "export ASCEND_HOME_PATH=$HOME/Ascend\nHOME=/root\nHF_TOKEN=hf_abc\n")
    assert got == {"env.HCCL_BUFFSIZE": "200", "env.HCCL_CONNECT_TIMEOUT": "1500", "env.VLLM_API_KEY": REDACTED,
                   "env.HF_TOKEN": REDACTED}  # kept as `doctor collect` keeps it: named, its value redacted


def test_the_driver_version_info_needs_a_line_naming_the_driver():
    got = facts("$ cat /usr/local/Ascend/driver/version.info\nVersion=24.1.rc3\nascendhal_version=7.35.23\n")
    assert got == {"ascend.driver": "24.1.rc3"}
    assert facts("Version=24.1.rc3\n") == {}
    assert facts("$ cat /usr/local/Ascend/firmware/version.info\nVersion=7.5.0.1.129\n") == {}


def test_described_names_the_stack_and_counts_the_rest():
    s = read_stated((FIX / "vllm-ascend-collect-env.txt").read_text())
    short = "; ".join(s.described())
    assert "vllm-ascend 0.11.0rc1" in short and "8 NPU(s) 910ProB" in short and "Python 3.11.7" in short
    assert "mypy" not in short and "other package(s)" in short
    assert "mypy 2.4.1" in "; ".join(s.described(everything=True))


def test_grepped_pip_list_rows_and_the_padded_collect_env_form_are_read():
    """vllm-ascend#3793 pastes `pip list | grep -E "torch|vllm"` (no header); vLLM's newer collect_env pads its
    keys (`PyTorch version              : 2.5.1`, vllm#22518)."""
    got = facts('800T A2 arm64 python==3.11\npip list | grep -E "torch|vllm"\ntorch                             2.7.1\n'
                "torch_npu                         2.7.1rc1\ntorchaudio                        2.7.1\n"
                "vllm                              0.11.0\n")
    assert got == {"packages.torch": "2.7.1", "packages.torch-npu": "2.7.1rc1", "packages.torchaudio": "2.7.1",
                   "packages.vllm": "0.11.0"}
    got = facts("OS                           : EulerOS 2.0 (SP10) (aarch64)\n"
                "Libc version                 : glibc-2.28\nPyTorch version              : 2.5.1\n")
    assert got == {"host.os": "EulerOS 2.0 (SP10)", "host.arch": "aarch64", "host.libc": "glibc 2.28",
                   "packages.torch": "2.5.1"}


def test_python_pinned_like_a_package_is_the_interpreter():
    assert facts("python==3.11\ntorch==2.5.1\n") == {"python.version": "3.11", "packages.torch": "2.5.1"}


# what a maintainer reads off each real report by eye (tests/fixtures/stated/README.md): the reader must agree
REAL = {
    "vllm-ascend-834.txt": {"ascend.npu_smi": {"status": "ok", "version": "24.1.rc1"}, "ascend.toolkit": "8.1.RC1.alpha001"},
    "vllm-ascend-4621.txt": {"ascend.npu_smi": {"status": "ok", "version": "25.0.rc1.1"}, "ascend.toolkit": "8.3.RC2"},
    "vllm-ascend-3793.txt": {"packages.torch": "2.7.1", "packages.torch-npu": "2.7.1rc1", "packages.torchaudio": "2.7.1",
                             "packages.torchvision": "0.23.0", "packages.vllm": "0.11.0"},
    "vllm-ascend-pr-175.txt": {"packages.torch": "2.5.1", "host.os": "Ubuntu 22.04.5 LTS", "host.arch": "aarch64",
                               "host.libc": "glibc 2.35", "python.version": "3.10.16"},
    "vllm-22518.txt": {"host.os": "EulerOS 2.0 (SP10)", "host.arch": "aarch64", "host.libc": "glibc 2.28",
                       "packages.torch": "2.5.1"},
    "vllm-10147.txt": {"packages.torch": "2.5.1+cu118", "host.os": "Ubuntu 20.04.6 LTS", "host.arch": "x86_64",
                       "host.libc": "glibc 2.31", "python.version": "3.10.15"},
}


def test_real_reports_read_exactly_what_they_state():
    for name, want in REAL.items():
        s = read_stated((FIX / name).read_text())
        got = {f.key: f.value for f in s.facts if f.key != "ascend.devices"}
        assert got == want, name
        assert s.conflicts == (), name


def test_chinese_labels_and_full_width_colons_are_read():
    got = facts("CANN版本：8.1.RC1\n驱动版本: 24.1.rc3\n固件版本：7.5.0.1.129\ntorch_npu版本：2.5.1\npython版本 3.10\n"
                "torch版本是2.1.0，驱动版本也核对无误7.0.RC1.alpha003， python3.8\n")
    assert got == {"ascend.toolkit": "8.1.RC1", "ascend.driver": "24.1.rc3", "ascend.firmware": "7.5.0.1.129",
                   "packages.torch-npu": "2.5.1", "python.version": "3.10"}


def test_variables_are_the_ones_collect_records_and_never_path():
    """The names torch_npu reads without a prefix (COMBINED_ENABLE, STREAMS_PER_DEVICE) are kept as `doctor collect`
    keeps them; PATH is not: a snapshot env holding PATH reads as a whole environment ("not set" for the rest)."""
    got = facts("COMBINED_ENABLE=1\nSTREAMS_PER_DEVICE=8\nPATH=/usr/bin:/bin\nVERL_LOGGING_LEVEL=debug\n")
    assert got == {"env.COMBINED_ENABLE": "1", "env.STREAMS_PER_DEVICE": "8", "env.VERL_LOGGING_LEVEL": "debug"}
    snap = snapshot_from_dict(read_stated("COMBINED_ENABLE=1\nPATH=/usr/bin\n").document(), source="r")
    assert not snap.env_is_full and snap.getenv("HCCL_BUFFSIZE") is not None and snap.getenv("HCCL_BUFFSIZE") != ""


def test_a_chip_named_on_a_label_line_states_the_family_not_a_count():
    """`NPU: 910B2`, `npu 910B2`, `NPU type: Ascend910B` (llamafactory-cli env), `NPU型号：910B3`, an image's `-a3`
    suffix: a device without an id, used only when no npu-smi table states the devices; prose is not read."""
    for text, chip in (("NPU: 910B2", "910B2"), ("npu 910B2", "910B2"), ("- NPU type: Ascend910B", "Ascend910B"),
                       ("NPU型号：910B3", "910B3"), ("芯片: 310P3", "310P3"),
                       ("image: quay.io/ascend/vllm-ascend:v0.10.2rc1-a3", "Ascend910_93")):
        assert read_stated(text).document()["ascend"]["devices"] == [{"chip": chip}], text
    assert read_stated("The NPU 910B2 is slow\n").facts == ()
    table = (FIX / "vllm-ascend-834.txt").read_text()
    doc = read_stated("NPU: 910B4\n" + table).document()
    assert [d["chip"] for d in doc["ascend"]["devices"]] == ["910B3"] and doc["ascend"]["devices"][0]["id"] == 0


def test_the_arch_on_an_os_label_line():
    """`系统版本：Ubuntu 22.04 LTS ARM64` (https://github.com/PaddlePaddle/Paddle-Lite/issues/10327): Debian's arch
    names (arm64, amd64) are aarch64 and x86_64; read on an OS / platform label only, never in a sentence, and two
    arches on one label state none."""
    assert facts("系统版本：Ubuntu 22.04 LTS ARM64\nCANN版本：6.2.RC1\n") == {"host.arch": "aarch64",
                                                                        "ascend.toolkit": "6.2.RC1"}
    assert facts("- OS: Ubuntu 22.04 amd64\n") == {"host.arch": "x86_64"}
    assert facts("编译并生成 PaddleLite for amd64 and arm64 的部署库\n- OS: x86_64 host, aarch64 container\n") == {}


def test_a_label_in_full_width_brackets_is_a_label():
    """Paddle's issue template writes its labels in 【】 (https://github.com/PaddlePaddle/FastDeploy/issues/2338:
    `- 【Cann-Toolkit】: 7.0.rc1.beta1`, `- 【系统平台】: Linux aarch64(Ubuntu 18.04)`): the brackets are markup, the
    line is the same `name: version` / OS label a report writes without them."""
    got = facts("- 【FastDeploy版本】： fastdeploy master\n- 【系统平台】: Linux aarch64(Ubuntu 18.04)\n"
                "- 【Cann-Toolkit】: 7.0.rc1.beta1\n- 【编译语言】： C++\n")
    assert got == {"ascend.toolkit": "7.0.rc1.beta1", "host.arch": "aarch64"}


def test_cann_named_with_its_product_name_on_a_label_line():
    """`- CANN Version: Ascend CANN Toolkit 8.0.RC3` and `- GPU: Huawei 910B`
    (https://github.com/gpustack/gpustack/issues/755): the product's own name before the version, and a chip on
    the label a GPU project's template has; only CANN's product name is skipped, and a GPU that is not an Ascend
    chip states nothing."""
    got = facts("- GPUStack version: v0.4.0\n- OS: official Docker image\n- GPU: Huawei 910B\n"
                "- CANN Version: Ascend CANN Toolkit 8.0.RC3\n")
    assert got == {"ascend.toolkit": "8.0.RC3", "ascend.chip": "910B"}
    assert facts("- GPU: NVIDIA A100 80GB\n- torch version: Ascend 2.1.0\n- CANN: Ascend CANN Toolkit latest\n") == {}


def test_a_950_chip_is_950_950pr_or_950dt_only_and_910b4_1_is_one_name():
    """A GPU / hardware label opens the door to other vendors' names: `950M` is NVIDIA's GeForce 950M, not an Ascend
    950, so a 950 name is 950, 950PR / 950DT or their _NNNN SoCs; 910B4-1 (a real A2 SoC) is one chip name."""
    for line in ("GPU: 950M", "NPU: 950M", "Hardware: 950M (laptop)", "950M,python==3.10"):
        assert "ascend.chip" not in facts(line + "\n"), line
    assert facts("NPU: Ascend950PR\n") == {"ascend.chip": "Ascend950PR"}
    assert facts("NPU: Ascend950PR_9579\n") == {"ascend.chip": "Ascend950PR_9579"}
    assert facts("NPU: 910B4-1\n") == {"ascend.chip": "910B4-1"}


def test_a_line_listing_only_pins_and_a_chip_is_read_item_by_item():
    """`910B1,python==3.10,transformers==4.51.0` (https://github.com/huggingface/transformers/issues/37992, the
    whole System Info): every item a `name==version` pin or an Ascend chip, so each is a statement; a sentence
    holding pins (`When torch==2.2.0 and torch-npu==2.2.0 ...`) and a requirement range are not."""
    assert facts("910B1,python==3.10,transformers==4.51.0\n") == {
        "ascend.chip": "910B1", "python.version": "3.10", "packages.transformers": "4.51.0"}
    assert facts("When torch==2.2.0 and torch-npu==2.2.0 and transformers>4.49, the error appears.\n"
                 "torch>=2.1,torch_npu==2.1.0\npip install torch==2.1.0,torch_npu==2.1.0\n") == {}


def test_a_bold_label_with_a_note_and_a_quoted_value_is_a_label():
    """`*   **NPU Driver Version (from `npu-smi info`):** `24.1.rc3``, `*   **Hardware:** Huawei Ascend 910B3
    (8-card server)`, `*   **OS:** Linux aarch64 (Ubuntu 22.04)` (https://github.com/gpustack/llama-box/issues/48):
    the bold, the label's parenthesised note and the value's backticks are markup around `label: value`; the build
    names listed below (`llama-box-linux-arm64-cann-8.0.rc2.zip`) state nothing."""
    got = facts("**Environment Details:**\n\n*   **Hardware:** Huawei Ascend 910B3 (8-card server)\n"
                "*   **OS:** Linux aarch64 (Ubuntu 22.04)\n*   **NPU Driver Version (from `npu-smi info`):** `24.1.rc3`\n"
                "*   `llama-box-linux-arm64-cann-8.0.rc2.zip`\n")
    assert got == {"ascend.chip": "910B3", "host.arch": "aarch64", "ascend.driver": "24.1.rc3"}
    assert facts("*   **Hardware:** Huawei Ascend 910B3 and 910B4 mixed\n*   **Note (driver):** see 24.1\n") == {}


def test_sglang_check_env_states_python_and_the_chip():
    """`python3 -m sglang.check_env` (https://github.com/sgl-project/sglang/issues/27920) prints `Python: ` and
    sys.version, and `NPU 0,1,...: <name>` per group of devices: the interpreter and the chip family (not how many
    NPUs: a device count rule needs a table); `CANN: Not Available` states nothing."""
    got = facts("        Python: 3.11.15 (main, May 13 2026, 09:39:24) [GCC 11.4.0]\nNPU available: True\n"
                "NPU 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15: Ascend910_9362\nCANN: Not Available\n")
    assert got == {"python.version": "3.11.15", "ascend.chip": "Ascend910_9362"}
    assert facts("Python: 3.10 or later is required\n") == {}


# The library lines of vllm-ascend's collect_env (https://github.com/vllm-project/vllm-ascend/issues/382, excerpt):
# `[pip3]` is `sys.executable -m pip list` (the interpreter that ran it, whose torch `PyTorch version` names), while
# `[conda]` is `$CONDA_EXE list` of the active conda environment, here another one (prompt `(PyTorch-2.1.0)`).
_PIP3_AND_OTHER_CONDA = """\
PyTorch version: 2.5.1
Python version: 3.10.4 (main, Mar 24 2025, 09:38:57) [GCC 7.3.0] (64-bit runtime)
Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.5.1
[pip3] torch-npu==2.5.1.dev20250308
[pip3] torchvision==0.20.1
[conda] modelarts-pytorch-model-server-arm 1.0.6                     <pip>
[conda] numpy                     1.22.0                    <pip>
[conda] torch                     2.1.0                     <pip>
[conda] torch-npu                 2.1.0.post6.dev20240716           <pip>
[conda] torchvision               0.16.0                    <pip>
vLLM Version: 0.7.3
vLLM Ascend Version: 0.7.3rc1
"""


def test_a_conda_list_of_another_environment_gives_way_to_the_interpreters_pip_list():
    s = read_stated(_PIP3_AND_OTHER_CONDA)
    got = {f.key: f.value for f in s.facts}
    assert got["packages.torch"] == "2.5.1" and got["packages.torch-npu"] == "2.5.1.dev20250308"
    assert got["packages.numpy"] == "1.26.4" and got["packages.torchvision"] == "0.20.1"
    assert "packages.modelarts-pytorch-model-server-arm" not in got  # that environment's, not the interpreter's
    assert s.conflicts == ()


def test_a_conda_list_that_agrees_with_pip3_still_adds_its_other_names():
    text = _PIP3_AND_OTHER_CONDA.replace("1.22.0  ", "1.26.4  ").replace("2.1.0   ", "2.5.1   ").replace(
        "2.1.0.post6.dev20240716", "2.5.1.dev20250308").replace("0.16.0  ", "0.20.1  ")
    got = facts(text)
    assert got["packages.torch"] == "2.5.1" and got["packages.modelarts-pytorch-model-server-arm"] == "1.0.6"


def test_a_local_label_only_one_statement_carries_is_the_same_version():
    # https://github.com/vllm-project/vllm-ascend/issues/2416: `PyTorch version: 2.7.1+cpu` (torch.__version__) and
    # `[pip3] torch==2.7.1` (its distribution's metadata) in one collect_env output: one installation, not two
    s = read_stated("PyTorch version: 2.7.1+cpu\n[pip3] torch==2.7.1\n[pip3] torch_npu==2.7.1rc1\n")
    assert s.conflicts == () and {f.key: f.value for f in s.facts}["packages.torch"] == "2.7.1+cpu"
    s = read_stated("torch==2.7.1+cpu\n---\ntorch==2.7.1+cu126\n")
    assert len(s.conflicts) == 1  # two local labels that differ are two builds


def test_a_chip_label_with_a_card_count_and_an_arch_label_are_read():
    # https://github.com/vllm-project/vllm-ascend/issues/8746 (its Hardware / system list, excerpt)
    text = ("- CPU: 4 x Kunpeng 920, 192 cores total\n- RAM: 509 GiB\n- NPU: 8 x Ascend 910B4\n- HBM per card: 32 GB\n"
            "- OS: Kylin Linux Advanced Server V10 (Sword)\n- Arch: aarch64 / arm64\n- CANN / driver: 25.2.0\n")
    got = facts(text)
    assert got["ascend.chip"] == "910B4" and got["host.arch"] == "aarch64"
    assert not any(k.startswith(("ascend.toolkit", "ascend.driver")) for k in got)  # which one 25.2.0 is: not said
    assert facts("- NPU: 8×910B3\n").get("ascend.chip") == "910B3" and facts("NPU: 8*Ascend910B2").get("ascend.chip")


def test_the_accuracy_reports_label_lists_of_name_version_pairs_are_read():
    # vllm-ascend's accuracy report (https://github.com/vllm-project/vllm-ascend/issues/790, excerpt): HTML markup and
    # a label before a comma-separated list of `name: version` items, each a stack name
    text = ("  <div>\n    <strong>vLLM version:</strong> vLLM: v0.7.3, vLLM Ascend: v0.7.3 <br>\n  </div>\n"
            "      <strong>Software Environment:</strong> CANN: 8.1.0, PyTorch: 2.5.1, torch-npu: 2.5.1 <br>\n"
            "      <strong>Hardware Environment</strong>: Atlas A2 Series <br>\n")
    got = facts(text)
    assert got["packages.vllm"] == "0.7.3" and got["packages.vllm-ascend"] == "0.7.3"
    assert got["ascend.toolkit"] == "8.1.0" and got["packages.torch"] == "2.5.1" and got["packages.torch-npu"] == "2.5.1"
    # a sentence holding the same words states nothing: every item must be a stack name and its version
    assert facts("We tested CANN: 8.1.0, and it failed with torch: 2.5.1, sadly\n") == {}
    assert facts("Environment: CANN: 8.1.0, RAM: 512GB\n") == {}


def test_a_version_table_rows_note_and_npu_row_are_read():
    # the `| 组件 | 版本 |` table of a public twinkle + hyper_parallel FSDP2 reproduction write-up on 8 x 910B3 (excerpt):
    # CANN's value carries its install path in a note, the NPU row a card count and the chip
    text = ("| 组件 | 版本 |\n|------|------|\n| NPU | 8x Ascend 910B3 (npu-smi 26.0.rc1) |\n"
            "| CANN | 8.5.0 (`/home/lsn/Ascend/cann-8.5.0`) |\n| Python | 3.11.15 |\n| torch_npu | 2.7.1 |\n")
    got = facts(text)
    assert got["ascend.toolkit"] == "8.5.0" and got["ascend.chip"] == "910B3" and got["packages.torch-npu"] == "2.7.1"
    assert facts("CANN: 8.5.0 (`/usr/local/Ascend/cann-8.5.0`)\n")["ascend.toolkit"] == "8.5.0"


class _Counted:
    def __init__(self, rx: Any) -> None:
        self.rx, self.calls = rx, 0

    def __getattr__(self, name: str) -> Any:
        self.calls += 1
        return getattr(self.rx, name)


def test_a_plain_pip_list_row_runs_none_of_the_markup_patterns(monkeypatch):
    # each markup pattern needs a character a plain row lacks (`>`, `【`, `<`, `**`, `(`, a backquote): a 600k-row
    # `pip list` ran all six on every row, the largest part of reading it; the reading is the same
    from doctor.snapshot import stated

    names = ("_QUOTE", "_BRACKETED_LABEL", "_HTML_TAG", "_BOLD_LABEL", "_LABEL_NOTE", "_QUOTED_VALUE")
    counted = {n: _Counted(getattr(stated, n)) for n in names}
    for n, c in counted.items():
        monkeypatch.setattr(stated, n, c)
    rows = "\n".join(f"pkg{i}    1.{i}.0" for i in range(200))
    got = read_stated(rows + "\n> **vllm-ascend:** `0.11.0rc1`")
    assert {c.calls for c in counted.values()} <= {0, 1}  # the one marked line only
    assert sum(1 for f in got.facts if f.key.startswith("packages.pkg")) == 200
    assert any(f.key == "packages.vllm-ascend" and f.value == "0.11.0rc1" for f in got.facts)


def test_a_plain_pip_list_row_runs_none_of_the_label_patterns(monkeypatch):
    # a label pattern needs a `:` / `：` / `=` (an image reference `vllm-ascend:`), which a `pip list` row lacks
    from doctor.snapshot import stated

    names = ("_CANN_PRODUCT", "_INSTALLER", "_IMAGE_LINE", "_LIST_LABEL")
    counted = {n: _Counted(getattr(stated, n)) for n in names}
    for n, c in counted.items():
        monkeypatch.setattr(stated, n, c)
    rows = "\n".join(f"pkg{i}    1.{i}.0" for i in range(200))
    got = read_stated(rows + "\nCANN: Ascend CANN Toolkit 8.0.RC3\nimage: quay.io/ascend/vllm-ascend:v0.9.1")
    assert all(c.calls <= 4 for c in counted.values()), {n: c.calls for n, c in counted.items()}  # the 2 labels
    assert {f.key: f.value for f in got.facts if not f.key.startswith("packages.pkg")} == {
        "ascend.toolkit": "8.0.RC3", "packages.vllm-ascend": "0.9.1"}


class _Searches:
    """Counts the calls of a pattern's methods that try every offset of a line (`search`, `sub`, `split`)."""

    def __init__(self, rx: Any) -> None:
        self.rx, self.calls = rx, 0

    def __getattr__(self, name: str) -> Any:
        self.calls += name in ("search", "sub", "split")
        return getattr(self.rx, name)


def test_a_training_logs_lines_run_none_of_the_every_offset_searches(monkeypatch):
    # `doctor explain` reads the environment a log states off its first MiB, mostly lines like verl#5659's Ray
    # log: a `sub` of a `^` pattern, `\buname` and a leading `\s*` try every offset of each, which was most of that
    # read. Each now runs only on a line holding what it needs (a `(` note before a colon, `uname`, `cann` in any
    # case, a list whose first item is a statement). The statements at the edges of those tests are still read:
    # CANN's product name in lower case, a first item with spaces before its separator, a list that starts with
    # a separator, a note before a label's colon, `uname -m` and what it printed.
    from doctor.snapshot import stated

    names = ("_LABEL_NOTE", "_UNAME", "_CANN_PRODUCT", "_LIST_SEP")
    counted = {n: _Searches(getattr(stated, n)) for n in names}
    for n, c in counted.items():
        monkeypatch.setattr(stated, n, c)
    log = (Path(__file__).resolve().parents[1] / "explain" / "multiproc" / "verl-5659.log").read_text() * 40
    said = ("- cann version: Ascend cann toolkit 8.0.RC3\n"
            "CANN: 8.0.RC3 , PyTorch: 2.5.1\n"
            "、python==3.10、910B1\n"
            "Driver Version (from npu-smi info): 24.1.rc3\n"
            "$ uname -m\naarch64\n")
    got = read_stated(log + said)
    calls = {n: c.calls for n, c in counted.items()}
    naming_cann = sum("cann" in x.lower() for x in log.splitlines())  # `Cannot load symbol`: it runs there
    assert calls.pop("_CANN_PRODUCT") <= naming_cann + 2 and all(n <= 4 for n in calls.values()), calls  # said's
    assert {f.key: (f.value, f.line) for f in got.facts} == {
        "ascend.toolkit": ("8.0.RC3", 241), "packages.torch": ("2.5.1", 242), "python.version": ("3.10", 243),
        "ascend.chip": ("910B1", 243), "ascend.driver": ("24.1.rc3", 244), "host.arch": ("aarch64", 246)}
    assert not read_stated(log + said).conflicts


# the installer-label pattern as it was written first: the whole pattern case-insensitive, CJK ranges included
_INSTALLER_FIRST = (r"^[-*]?\s*[A-Za-z\u4e00-\u9fff][\w \u4e00-\u9fff-]{0,40}?\s*[:：=]\s*\S*?Ascend-cann-(toolkit|kernels)"
                    r"(?:-\w+)?_(\d[^_\s]*)_linux(?:-(x86_64|aarch64))?\.run\s*$")


def test_the_installer_labels_classes_match_the_same_characters_as_first_written_every_code_point():
    """The rewrite only changed the two classes holding the ideographs; each still matches exactly one character,
    the same ones under re.I, for every code point (so the two patterns match the same strings the same way)."""
    import re
    import sys

    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    cjk = r"(?-i:[\u4e00-\u9fff])"
    for first, now in ((r"[A-Za-z\u4e00-\u9fff]", rf"(?:[A-Za-z]|{cjk})"),
                       (r"[\w \u4e00-\u9fff-]", rf"(?:[\w -]|{cjk})")):
        assert re.findall(first, everything, re.I) == re.findall(now, everything, re.I), first
    import doctor.snapshot.stated as stated

    assert stated._INSTALLER.pattern == _INSTALLER_FIRST.replace(
        r"[A-Za-z\u4e00-\u9fff]", rf"(?:[A-Za-z]|{cjk})").replace(r"[\w \u4e00-\u9fff-]", rf"(?:[\w -]|{cjk})")
    assert stated._INSTALLER.flags == re.compile(_INSTALLER_FIRST, re.I).flags


def test_the_installer_label_reads_what_the_first_pattern_read_on_random_lines():
    """Property: over random label lines (ASCII in both cases, ideographs, full-width colons, the installer's name
    and look-alikes such as the Kelvin sign and long s that re.I folds), the pattern reads what it first read."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    import doctor.snapshot.stated as stated

    first = re.compile(_INSTALLER_FIRST, re.I)
    piece = st.sampled_from(["CANN", "toolkit", "驱动", "版本", "软件包", "ｃａｎｎ", "\u212a", "\u017f", "İ", "ı", " ", "-", "*",
                             "_", ":", "：", "=", "Ascend-cann-", "ASCEND-CANN-", "aſcend-cann-", "toolkit", "KERNELS",
                             "kernels-910b", "_8.0.RC1", "_9.1.0", "_linux", "-aarch64", "-x86_64", ".run", ".RUN", "\t",
                             "\u4e00", "\u9fff", "\u3400", "\ua000", "é"])
    line = st.lists(st.one_of(piece, st.text(max_size=3)), max_size=14).map("".join)

    @settings(max_examples=1000, deadline=None, database=None)
    @given(line)
    def same(s):
        a, b = first.match(s), stated._INSTALLER.match(s)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), s

    same()
    # and the lines that are meant to be read are read
    for s in ("CANN toolkit = Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run",
              "- 软件包：Ascend-cann-kernels-910b_8.1.RC1_linux-x86_64.run", "驱动 : ASCEND-CANN-TOOLKIT_9.1.0_LINUX.RUN"):
        assert stated._INSTALLER.match(s) and first.match(s).groups() == stated._INSTALLER.match(s).groups()


def test_no_pattern_reading_stated_facts_compiles_an_ideograph_range_case_insensitively():
    """A range of ideographs under re.I is compiled one character at a time with its case variants (~2 ms of every
    run that reads a report or log for its stated facts, for letters that have no case)."""
    import re

    import doctor.snapshot.stated as stated

    slow = [name for name, p in vars(stated).items() if isinstance(p, re.Pattern) and p.flags & re.I
            and "\\u4e00-\\u9fff" in p.pattern.replace(r"(?-i:[\u4e00-\u9fff])", "")]
    assert slow == []
