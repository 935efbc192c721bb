"""Attribution by ownership (issue 23, items 2-4): the component that ships the frame, path, library, header,
module or code an error names; generic signatures give way to it; specific ones win."""

from __future__ import annotations

import pytest

from bench.explain_speed import _LINES
from doctor.explain.codes import owner_of_code
from doctor.explain.stream import explain_lines
from doctor.report import Severity

SITE = "/usr/local/python3.10/lib/python3.10/site-packages"


def tb(*frames: str, exc: str) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for f in frames:
        out += [f'  File "{f}", line 12, in run', "    do()"]
    return [*out, exc]


def first(lines):
    found = explain_lines(lines)
    return found[0]


def test_an_assertion_inside_a_library_names_the_library_not_config_model():
    # python-check-failed alone said [config, model]; the frame says which package raised it.
    f = first(tb(f"{SITE}/verl/trainer/main_ppo.py", f"{SITE}/mindspeed/core/context_parallel/utils.py",
                 exc="AssertionError: expected the sequence length to divide the context-parallel size"))
    assert f.id == "error-in-package" and f.components[:2] == ("mindspeed", "config")
    assert "site-packages/mindspeed/" in f.evidence["read"] and f.evidence["line"] == 6


def test_an_exception_in_the_users_own_script_is_config_and_user_code():
    f = first(tb("/home/me/train.py", f"{SITE}/torch/nn/modules/module.py", "/home/me/model.py",
                 exc="ValueError: hidden size 4095 is not divisible by 32 heads"))
    assert f.id == "error-in-user-code" and f.components == ("config", "model")
    assert "/home/me/model.py" in f.evidence["read"]


def test_cannot_import_name_is_a_version_mismatch_between_caller_and_callee():
    f = first(tb(f"{SITE}/verl/workers/rollout/vllm_rollout.py",
                 exc=f"ImportError: cannot import name 'get_tensor_model_parallel_group' from "
                     f"'vllm.distributed.parallel_state' ({SITE}/vllm/distributed/parallel_state.py)"))
    assert f.id == "api-version-mismatch" and f.components == ("vllm", "verl")
    assert f.evidence["caller"] == "verl" and f.evidence["callee"] == "vllm"
    assert "Align verl with vllm" in f.fix.text
    # the pairs the shipped stack profiles pin together are named, newest first
    assert "pin them together as verl 0.10.0.dev20260822 with vllm 0.23.0; verl 0.9.1 with vllm 0.23.0" in f.fix.text


def test_an_unexpected_keyword_in_a_librarys_call_yields_to_the_frame():
    f = first(tb(f"{SITE}/verl/workers/fsdp_workers.py", f"{SITE}/vllm/entrypoints/llm.py",
                 exc="TypeError: EngineArgs.__init__() got an unexpected keyword argument 'max_num_seqs_x'"))
    assert f.id == "api-version-mismatch" and f.components == ("vllm", "verl")
    ids = [x.id for x in explain_lines(tb(f"{SITE}/verl/a.py", f"{SITE}/vllm/b.py",
                                          exc="TypeError: f() got an unexpected keyword argument 'x'"))]
    assert "python-api-unexpected-keyword" not in ids  # the generic signature gave way


def test_a_missing_submodule_of_an_installed_package_and_a_missing_package():
    f = first(["ModuleNotFoundError: No module named 'vllm_ascend.patch.platform'"])
    assert f.id == "module-of-package-missing" and f.components[0] == "vllm-ascend"


def test_a_submodule_another_package_imports_and_the_installed_one_lacks_is_a_version_mismatch():
    # Python names `vllm.worker` only when `vllm` itself imported: verl's rollout was written for a vllm with it
    f = first(tb(f"{SITE}/verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py",
                 exc="ModuleNotFoundError: No module named 'vllm.worker'"))
    assert f.id == "api-version-mismatch" and f.components == ("vllm", "verl")
    assert f.evidence["caller"] == "verl" and f.evidence["callee"] == "vllm"
    assert "Align verl with vllm" in f.fix.text and "vllm_rollout_spmd.py" in f.evidence["read"]
    # the package's own import, a private (compiled) module, or the job's own code: a build that lacks it
    for frames, mod in (((f"{SITE}/vllm/engine/llm_engine.py",), "vllm.worker"),
                        ((f"{SITE}/verl/workers/rollout/vllm_rollout.py",), "vllm._C"),
                        (("/home/me/train.py",), "vllm.worker")):
        f = first(tb(*frames, exc=f"ModuleNotFoundError: No module named '{mod}'"))
        assert f.id == "module-of-package-missing" and f.components[0] == "vllm", (frames, mod)


def test_libraries_headers_and_paths_name_their_shipper():
    f = first(["OSError: /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libtbe_adapter.so: undefined symbol: "
               "_ZN3Mki2DlC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEb"])
    assert f.components[0] == "nnal"
    f = first(["/tmp/build/op.cpp:3:10: fatal error: acl/acl_base.h: No such file or directory"])
    assert f.id == "header-of-package-missing" and f.components == ("cann", "system")
    assert "acl/acl_base.h" in f.evidence["read"]


def test_the_rocE_and_hccp_layer_codes_have_an_owner():
    assert owner_of_code("EJ0003")[0] == ("network", "hccl")
    assert owner_of_code("EI0013")[0] == ("network", "hccl")
    assert owner_of_code("EL0004")[0] == ("driver", "npu")
    assert owner_of_code("EZ9999")[0][0] == "cann" and owner_of_code("EZ1001")[0][0] == "model"
    assert owner_of_code("561103")[0][0] == "kernels" and owner_of_code("999999") is None
    # a code in a form no signature knows is still attributed by its module part
    f = first(["rdma setup: EJ0004 ra_socket_init fail"])
    assert f.id == "error-code-owner" and f.components == ("network", "hccl") and "EJ0004" in f.evidence["read"]


def test_every_acl_return_code_torch_npu_documents_has_an_owner():
    # NPUErrorCodes.h's 148046-148052 (ACL feature errors) and 300000 (storage limit) were missing
    assert owner_of_code("148049")[0] == ("env", "cann")  # ASCEND_OPP_PATH unset or wrong
    assert owner_of_code("148050")[0] == ("model", "cann")  # the operator does not support dynamic shapes
    assert owner_of_code("148046")[0][0] == "config" and owner_of_code("148052")[0][0] == "config"
    assert owner_of_code("300000")[0] == ("system", "npu")
    assert owner_of_code("148053")[0][0] == "config"  # acl_base.h's ACL_ERROR_INVALID_BUNDLE_MODEL_ID
    # codes the headers do not list are owned by their family in the aclError list (the narrowest range wins)
    assert owner_of_code("148054")[0][0] == "config" and owner_of_code("300001")[0] == ("system",)
    assert owner_of_code("245000")[1].startswith("GE: memory allocation")  # the header's row, not the family's
    # the graph engine's ACL_ERROR_GE_* codes (CANN's ge_error_codes.h), reported by graph mode
    assert owner_of_code("145021")[0] == ("model", "cann") and owner_of_code("245000")[0] == ("config", "npu")
    assert owner_of_code("345102")[0] == ("npu", "driver") and owner_of_code("545601")[0] == ("cann", "npu")


def test_a_specific_signature_still_wins():
    f = first(tb(f"{SITE}/torch_npu/__init__.py",
                 exc="ImportError: libhccl.so: cannot open shared object file: No such file or directory"))
    assert f.id == "cann-libhccl-missing"


def test_a_chained_exception_ranks_its_cause_first():
    lines = [*tb(f"{SITE}/vllm/engine/llm.py", exc="KeyError: 'max_model_len'"), "",
             "During handling of the above exception, another exception occurred:", "",
             *tb("/home/me/run.py", exc="RuntimeError: engine failed")]
    found = explain_lines(lines)
    assert [f.id for f in found][:1] == ["error-in-package"] and found[0].components[0] == "vllm"


HEALTHY_NOTICES = [
    "(WorkerDict pid=2231) WARNING 06-16 15:12:03 [__init__.py:28] No module named 'flash_attn': using the eager path",
    "INFO 06-16 15:10:58 [importing.py:53] Triton not installed; ModuleNotFoundError: No module named 'triton'",
    "[W616 15:12:01.123456 ProcessGroupHCCL.cpp:123] Warning: libfoo.so: cannot open shared object file, falling back",
]


@pytest.mark.parametrize("block", [1, 3])
def test_a_healthy_training_log_gives_no_error(block):
    lines = [line.replace("{i}", str(n)) for n in range(block) for line in [*_LINES, *HEALTHY_NOTICES]]
    assert all(f.severity is not Severity.ERROR for f in explain_lines(lines)), \
        [(f.id, f.evidence.get("text")) for f in explain_lines(lines)]


def test_an_exception_class_or_a_file_named_on_the_line_names_its_package():
    f = first(["vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already."])
    assert f.id == "error-in-package" and f.components == ("vllm", "config")
    f = first(["RuntimeError: failed at /usr/local/python3.10/lib/python3.10/site-packages/vllm_ascend/worker/"
               "model_runner_v1.py:812 while capturing"])
    assert f.id == "error-names-package" and f.components[0] == "vllm-ascend"
    assert "site-packages/vllm_ascend/" in f.evidence["read"]


def test_a_missing_symbol_names_the_library_that_exports_it():
    f = first(["/usr/bin/ld: op_kernel.o: in function `run': undefined reference to `aclnnFlashAttentionScoreV3'"])
    assert f.id == "native-symbol-mismatch" and f.components == ("cann", "system")
    f = first(["ImportError: /x/site-packages/vllm_ascend/vllm_ascend_C.so: undefined symbol: "
               "_ZN6c10_npu20getCurrentNPUStreamEa"])
    assert f.components == ("vllm-ascend", "torch-npu")


def test_a_const_member_symbol_is_read_through_its_qualifier_and_nnal_namespaces_are_nnal():
    # _ZNK: a const member function (Itanium mangling puts K between _ZN and the name); AsdOps:: is NNAL's.
    f = first(["undefined symbol: _ZNK6AsdOps3Ops18GetOperationByNameERKSs"])
    assert f.id == "native-symbol-mismatch" and f.components[0] == "nnal", (f.id, f.components)
    f = first(["undefined symbol: _ZNK3c1010TensorImpl4sizeEl"])
    assert f.id == "native-symbol-mismatch" and f.components[0] == "torch", (f.id, f.components)


def test_a_snapshot_names_the_editable_tree_a_frame_lies_in(tmp_path):
    import json

    from click.testing import CliRunner

    from doctor.cli import cli

    log = tmp_path / "run.log"
    log.write_text("\n".join(tb("/work/rl/trainer_lib/core/loop.py", exc="KeyError: 'advantages'")) + "\n")
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"schema": "doctor.snapshot/1", "packages": {
        "trainer-lib": {"version": "0.1.0", "editable": True, "location": "/work/rl", "top_level": ["trainer_lib"]}}}))
    without = json.loads(CliRunner().invoke(cli, ["--json", "explain", str(log)]).output)
    assert without["findings"][0]["id"] == "error-in-user-code"
    r = CliRunner().invoke(cli, ["--json", "explain", "--snapshot", str(snap), str(log)])
    f = json.loads(r.output)["findings"][0]
    assert f["id"] == "error-in-package" and f["components"][:2] == ["python", "config"]
    assert "trainer-lib is installed editable from /work/rl" in f["evidence"]["read"]
    bad = CliRunner().invoke(cli, ["explain", "--snapshot", str(tmp_path / "absent.json"), str(log)])
    assert bad.exit_code == 2


def test_a_resolver_conflict_names_both_packages():
    f = first(["ERROR: Cannot install vllm==0.9.1 and torch==2.5.1 because these package versions have conflicting "
               "dependencies."])
    assert f.id == "pip-resolver-conflict" and f.components == ("vllm", "torch", "python")
    f = first(["    vllm-ascend 0.9.1 depends on torch-npu==2.5.1.post1"])
    assert f.components[:2] == ("vllm-ascend", "torch-npu")


VLLM_KWARG = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'enable_sleep_mode_v2'"


def test_an_unexpected_keyword_passed_through_vllm_is_verl_against_vllm_not_vllm_against_itself():
    # trial item 3: verl's rollout -> vllm's LLM(**kwargs) -> vllm's EngineArgs: the boundary is verl -> vllm
    f = first(tb(f"{SITE}/verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py",
                 f"{SITE}/vllm/entrypoints/llm.py", f"{SITE}/vllm/engine/arg_utils.py", exc=VLLM_KWARG))
    assert f.id == "api-version-mismatch" and f.components == ("vllm", "verl")
    assert f.evidence["caller"] == "verl" and f.evidence["callee"] == "vllm"
    assert "verl calls vllm" in f.title and "vllm makes a call" not in f.title
    assert f.fix.text.startswith("Align verl with vllm")
    assert "Align vllm with" not in f.fix.text and "verl 0.9.1 with vllm 0.23.0" in f.fix.text
    assert "vllm_rollout_spmd.py" in f.evidence["read"]


def test_an_api_mismatch_with_every_frame_in_one_package_is_its_own_inconsistency():
    f = first(tb(f"{SITE}/vllm/entrypoints/llm.py", f"{SITE}/vllm/engine/arg_utils.py", exc=VLLM_KWARG))
    assert f.id == "api-version-mismatch" and f.components[0] == "vllm"
    assert "vllm's own code" in f.title and "Align" not in f.fix.text
    assert "caller" not in f.evidence


def test_an_api_mismatch_called_from_the_jobs_own_code_names_no_caller_package():
    f = first(tb("/home/me/train.py", f"{SITE}/verl/trainer/main_ppo.py", "/home/me/rollout.py",
                 f"{SITE}/vllm/entrypoints/llm.py", exc=VLLM_KWARG))
    assert f.id == "api-version-mismatch" and f.components == ("vllm", "python")
    assert "/home/me/rollout.py" in f.evidence["read"] and "Align" not in f.fix.text


def test_a_notice_at_the_top_of_the_log_does_not_hide_the_failure_below_it():
    # vLLM's pre-plugin platform notice is an info-level signature; the error after it is still attributed
    found = explain_lines(["INFO 06-16 15:10:58 [__init__.py:44] No platform detected, vLLM is running on "
                           "UnspecifiedPlatform",
                           *tb(f"{SITE}/verl/trainer/main_ppo.py", exc="ValueError: bad batch size")])
    assert [f.id for f in found if f.severity is Severity.ERROR] == ["error-in-package"]
    assert found[0].components == ("verl", "config")


def test_a_call_with_no_frame_is_read_through_the_class_it_names():
    # the class's package (read from the packages' own sources) is the one called
    f = first(["TypeError: TransformerConfig.__init__() got an unexpected keyword argument 'moe_router_dtype'"])
    assert f.id == "api-version-mismatch" and f.components[0] == "megatron", (f.id, f.components)
    assert "megatron/core/transformer/transformer_config.py" in f.evidence["read"]
    f = first(["AttributeError: 'DataProto' object has no attribute 'select_idxs'"])
    assert f.id == "api-version-mismatch" and f.components[0] == "verl"
    # a class several packages define: the library the others build on first (transformers' Trainer)
    f = first(["TypeError: Trainer.__init__() got an unexpected keyword argument 'processing_class'"])
    assert f.components[0] == "transformers", f.components
    # a model implementation: the model's own signature
    f = first(["TypeError: Qwen2VLForConditionalGeneration.__init__() got an unexpected keyword argument 'x'"])
    assert f.components[1] == "model" and f.components[0] in ("vllm", "transformers"), f.components
    # a class no package defines (the job's own): nothing is claimed
    assert first(["TypeError: MyTrainerOverride.compute_loss() got an unexpected keyword argument 'n'"]).id != \
        "api-version-mismatch"


def test_a_call_is_read_through_the_source_line_printed_above_it():
    # Python < 3.10 names only `__init__()`: the failing line says which class it constructs (vLLM's)
    f = first(["    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))",
               "TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'"])
    assert f.id == "api-version-mismatch" and f.components[0] == "vllm", (f.id, f.components)
    assert "AsyncEngineArgs" in f.title
    # a class vLLM, Megatron-Core and DeepSpeed all define: the module the line reaches it through decides, here in a
    # rich traceback whose exception type was lost in the paste (the message in backticks)
    f = first(["│ /env/site-packages/collie/models/llama/model.py:235 in __init__",
               "│ ❱ 235 │   │   self.embed_tokens = tensor_parallel.VocabParallelEmbedding(",
               "`VocabParallelEmbedding.__init__() missing 2 required keyword-only arguments:",
               "'init_method' and 'config'`"])
    assert f.id == "api-version-mismatch" and f.components[0] == "megatron", (f.id, f.components)
    assert "megatron/core/tensor_parallel" in f.evidence["read"] and "vllm" not in f.title
    # without the line, all three stay named; a caret marker line (Python 3.11+) is skipped on the way up
    assert "vllm / megatron-core / deepspeed" in first(
        ["TypeError: VocabParallelEmbedding.__init__() got an unexpected keyword argument 'x'"]).title
    f = first(["    emb = tensor_parallel.VocabParallelEmbedding(1, 2, x=3)", "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^",
               "TypeError: VocabParallelEmbedding.__init__() got an unexpected keyword argument 'x'"])
    assert f.components[0] == "megatron", f.components
    # a logged notice quoting such a message is no failure
    assert first(["INFO: retrying: forward() got an unexpected keyword argument 'x'"]).severity != Severity.ERROR


def test_a_call_that_does_not_fit_fails_at_its_call_site_in_the_callers_package():
    # the innermost frame is vllm-ascend's line constructing vLLM's class: vllm-ascend (caller) against vllm (callee),
    # not "vllm-ascend's own inconsistency"
    f = first(["Traceback (most recent call last):",
               f'  File "{SITE}/vllm_ascend/worker/model_runner_v1.py", line 12, in run',
               "    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))",
               "TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'"])
    assert f.id == "api-version-mismatch" and f.components[:2] == ("vllm", "vllm-ascend"), (f.id, f.components)
    assert f.evidence["caller"] == "vllm-ascend" and f.evidence["callee"] == "vllm"
    # a package passing its kwargs on to its own class stays the boundary rule's (verl -> vllm's LLM -> EngineArgs)
    f = first(["Traceback (most recent call last):", f'  File "{SITE}/verl/workers/rollout/vllm_rollout.py", line 9, in init',
               "    self.llm = LLM(model=path, **kw)", f'  File "{SITE}/vllm/entrypoints/llm.py", line 30, in __init__',
               "    engine_args = EngineArgs(model=model, **kwargs)",
               "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'x'"])
    assert f.components[:2] == ("vllm", "verl") and f.evidence["caller"] == "verl", (f.components, f.evidence)


def test_an_extension_no_table_knows_is_read_through_its_symbols_namespace():
    f = first(["ImportError: /env/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
               "_ZN3c104cuda9SetDeviceEi"])
    assert f.id == "native-symbol-mismatch" and f.components[0] == "torch", (f.id, f.components)
    f = first(["OSError: /home/x/dlinfer/vendor/ascend/ascend_extension.so: undefined symbol: "
               "_ZN7c10_npu3acl20AclrtPeekAtLastErrorE17aclrtLastErrLevel"])
    assert f.components[0] == "torch-npu", f.components


def test_an_extension_module_alone_at_the_top_of_site_packages_is_named_by_its_import_name():
    # flash-attn's CUDA extension, installed as the top-level module flash_attn_2_cuda (no table knows the name), as
    # https://github.com/Dao-AILab/flash-attention/issues/1816 quotes it: the finding names the module, not "python"
    f = first(["ImportError: /usr/local/lib/python3.11/dist-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
               "undefined symbol: _ZN3c104cuda9SetDeviceEab"])
    assert f.id == "native-symbol-mismatch" and f.components[0] == "torch", (f.id, f.components)
    assert f.title.startswith("flash_attn_2_cuda's native library misses a symbol"), f.title
    assert "Install the flash_attn_2_cuda build made for the installed torch" in f.fix.text


def test_transformer_engines_old_extension_module_is_transformer_engines():
    # Transformer Engine up to 1.7 built its torch extension as the top-level module transformer_engine_extensions
    # (NVIDIA/TransformerEngine v1.7 setup.py, CUDAExtension(name="transformer_engine_extensions")), as
    # https://github.com/huggingface/accelerate/issues/1475 quotes it: the ownership table names the component
    f = first(["ImportError: /usr/local/lib/python3.8/dist-packages/transformer_engine_extensions.cpython-38-x86_64-"
               "linux-gnu.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKNSt7__cxx1112basic_stringIcSt11char_"
               "traitsIcESaIcEEE"])
    assert f.id == "native-symbol-mismatch" and f.components[:2] == ("transformer-engine", "torch"), (f.id, f.components)
    assert "Install the transformer-engine build made for the installed torch" in f.fix.text, f.fix.text


def test_a_source_checkout_named_like_its_distribution_owns_its_files():
    f = first(["/home/vllm-ascend/csrc/kernels/pos_encoding_kernels.cpp:357:9: error: use of undeclared identifier "
               "'rope_custom_true_half'"])
    assert f.components[0] == "vllm-ascend", (f.id, f.components)


def test_an_operator_missing_from_its_namespace_is_the_registering_packages_not_torchs():
    # torch/_ops.py raises it, but the operator is vllm-ascend's (csrc/torch_binding.cpp registers _C_ascend): the
    # message-owner rule named torch (the raiser) with config.
    f = first(["RuntimeError: Orchestrator initialization failed: Dummy run failed: '_OpNamespace' '_C_ascend' "
               "object has no attribute 'moe_gating_top_k'"])
    assert f.id == "api-version-mismatch" and f.components[0] == "vllm-ascend" and "torch" not in f.components
    assert "torch.ops._C_ascend.moe_gating_top_k is not registered" in f.title
    assert "registered by vllm-ascend" in f.evidence["read"] and "csrc/torch_binding.cpp" in f.evidence["read"]
    # with a traceback: torch's own frame is not the callee; the frame that called across the boundary is the caller
    f = first(tb(f"{SITE}/vllm_ascend/ops/fused_moe.py", f"{SITE}/torch/_ops.py",
                 exc="AttributeError: '_OpNamespace' 'npu' object has no attribute 'npu_moe_gating_top_k'"))
    assert f.id == "api-version-mismatch" and f.components == ("torch-npu", "vllm-ascend")
    assert f.evidence["caller"] == "vllm-ascend" and f.evidence["callee"] == "torch-npu"
    # vLLM's own custom-op library (`_C`), and a namespace no package row knows is left to the other rules
    assert first(["AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'"]).components[0] == "vllm"
    assert first(["AttributeError: '_OpNamespace' 'my_ext' object has no attribute 'f'"]).id != "api-version-mismatch"


def test_a_missing_module_that_the_ascend_build_installs_names_the_ascend_build_first():
    # triton-ascend installs the `triton` package (its setup.py); the rule named only PyPI's triton, which has no
    # Ascend backend.
    f = first(["ModuleNotFoundError: No module named 'triton'"])
    assert f.id == "module-of-package-missing" and f.components[:2] == ("triton-ascend", "triton")
    assert "Install triton-ascend" in f.fix.text and "triton-ascend/blob/" in f.evidence["read"]
    # a module only one distribution installs is unchanged
    assert first(["ModuleNotFoundError: No module named 'vllm_ascend'"]).components[0] == "vllm-ascend"


def test_a_dtype_in_an_error_message_is_a_value_not_torchs_code():
    # `got torch.float16 and torch.bfloat16` are two tensors' dtypes: error-names-package read torch.float16 as a
    # module and blamed torch.
    f = first(["AssertionError: Input and cos/sin must have the same dtype, got torch.float16 and torch.bfloat16"])
    assert f.id != "error-names-package" and "torch" not in f.components
    # a dotted module of a package is still read
    f = first(["KeyError: 'gate_up_proj' in vllm_ascend.quantization.w8a8"])
    assert f.id == "error-names-package" and f.components[0] == "vllm-ascend"


def test_an_import_from_a_module_of_unknown_location_is_a_directory_shadowing_the_package():
    # "(unknown location)": the module has no file, a namespace package; it was called a version mismatch of vllm
    # ("install the vllm release the calling code was written for"), which no release would fix.
    f = first(["ImportError: cannot import name 'PoolingParams' from 'vllm' (unknown location)"])
    assert f.id == "package-shadowed-by-directory" and f.components == ("vllm", "env")
    assert "vllm.__file__" in f.fix.text
    # with a file path it stays an API mismatch
    f = first([f"ImportError: cannot import name 'PoolingParams' from 'vllm' ({SITE}/vllm/__init__.py)"])
    assert f.id == "api-version-mismatch"


_GPT_LINE = "    model = GPTModel(config=tfconfig, transformer_layer_spec=spec, vocab_size=vocab, vp_stage=vp_stage)"
_GPT_ERR = "TypeError: GPTModel.__init__() got an unexpected keyword argument 'vp_stage'"


def _explain_json(tmp_path, lines, snapshot=None):
    import json

    from click.testing import CliRunner

    from doctor.cli import cli

    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    args = ["--json", "explain", str(log)]
    if snapshot is not None:
        snap = tmp_path / "snap.json"
        snap.write_text(json.dumps({"schema": "doctor.snapshot/1", "packages": snapshot}))
        args[2:2] = ["--snapshot", str(snap)]
    r = CliRunner().invoke(cli, args)
    return json.loads(r.output)["findings"]


def test_a_class_several_packages_define_is_the_one_the_calling_distribution_declares(tmp_path):
    # GPTModel is a public class of megatron-core, MindSpeed-LLM and ms-swift (their sources); verl declares
    # megatron-core (PyPI: verl 0.9.1's `megatron` / `cpu` extras) and its stacks build Megatron-LM's core, never
    # the other two: verl's line constructing GPTModel calls megatron-core
    (f, *_) = _explain_json(tmp_path, ["Traceback (most recent call last):",
                                       f'  File "{SITE}/verl/models/mcore/model_initializer.py", line 80, in initialize',
                                       _GPT_LINE, _GPT_ERR])
    assert f["id"] == "api-version-mismatch" and f["components"][:2] == ["megatron", "verl"], f
    assert f["title"].startswith("verl calls megatron-core "), f["title"]
    assert "verl declares megatron-core" in f["evidence"]["read"]
    # the job's own code declares nothing: all three stay named
    (g, *_) = _explain_json(tmp_path, ["Traceback (most recent call last):",
                                       '  File "/home/me/train.py", line 12, in build', _GPT_LINE, _GPT_ERR])
    assert "megatron-core / mindspeed-llm / ms-swift" in g["title"], g["title"]
    # what the snapshot records the calling distribution declares (its METADATA's Requires-Dist) decides too
    (h, *_) = _explain_json(tmp_path, ["Traceback (most recent call last):",
                                       '  File "/work/rl/trainer_lib/models.py", line 12, in build',
                                       _GPT_LINE, _GPT_ERR],
                            snapshot={"trainer-lib": {"version": "0.1.0", "editable": True, "location": "/work/rl",
                                                      "top_level": ["trainer_lib"],
                                                      "requires_dist": ["ms-swift>=3.8; extra == 'megatron'",
                                                                        "torch"]}})
    assert h["id"] == "api-version-mismatch" and h["title"].startswith("trainer-lib calls ms-swift "), h["title"]


def test_a_class_of_another_package_called_through_a_variable_is_that_package_not_an_own_inconsistency(tmp_path):
    # every frame is verl's and the line does not name the class (`model_cls(...)`): the message does, and verl
    # defines no GPTModel; of its three definers verl declares megatron-core
    frames = ["Traceback (most recent call last):",
              f'  File "{SITE}/verl/workers/megatron_workers.py", line 300, in _build_model',
              "    actor_module = make_model(tfconfig)",
              f'  File "{SITE}/verl/models/mcore/registry.py", line 80, in init_mcore_model',
              "    return model_cls(config=tfconfig, vp_stage=vp_stage, **kwargs)"]
    (f, *_) = _explain_json(tmp_path, [*frames, _GPT_ERR])
    assert f["id"] == "api-version-mismatch" and f["components"][:2] == ["megatron", "verl"], f
    assert "which verl does not define" in f["evidence"]["read"]
    # a class verl defines itself stays verl's own inconsistency
    (g, *_) = _explain_json(tmp_path, [*frames, "TypeError: DataProto.__init__() got an unexpected keyword "
                                                "argument 'meta'"])
    assert g["components"][0] == "verl" and g["title"].startswith("verl's own code"), g


@pytest.mark.parametrize("line", [
    # torch 2.13 as run here: autograd prints the tensor's legacy type name (`Tensor.type()`) in brackets
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.FloatTensor [5]], which is output 0 of AddBackward0, is at version 1; expected version 0 instead.",
    "RuntimeError: expected scalar type torch.npu.HalfTensor but found torch.npu.FloatTensor",
])
def test_a_tensors_type_name_in_an_error_message_is_a_value_not_torchs_code(line):
    from tests.explain.generic import errors

    found = errors([line])  # what attribution says where no signature knows the wording
    assert found and all(f.id != "error-names-package" for f in found), [(f.id, f.components) for f in found]
    assert found[0].components == ("config", "model")


def test_a_package_without_its_version_attribute_is_a_directory_shadowing_the_package():
    # torch, torch_npu, vllm, transformers ... set __version__ in their top-level __init__: no installed release of
    # them lacks it. What Python imported under that name is a bare directory (a namespace package: the working
    # directory or a source checkout), as `vllm serve` run from /workspace of the vllm-ascend image; it was called
    # a vllm / vllm-ascend version mismatch, which no release fixes.
    lines = tb("/workspace/vllm-ascend/vllm_ascend/utils.py",
               exc="AttributeError: module 'vllm' has no attribute '__version__'")
    f = first(lines)
    assert f.id == "package-shadowed-by-directory" and f.components == ("vllm", "env")
    assert "__version__" in f.evidence["read"] and "vllm.__file__" in f.fix.text
    assert first(["AttributeError: module 'torch' has no attribute '__version__'"]).components == ("torch", "env")
    # another missing attribute of the same package stays an API mismatch; a submodule's __version__ too
    assert first(["AttributeError: module 'vllm' has no attribute 'LLMEngine'"]).id == "api-version-mismatch"
    assert first(["AttributeError: module 'vllm.utils' has no attribute '__version__'"]).id != \
        "package-shadowed-by-directory"


def test_an_attribute_read_on_none_is_a_value_never_set_not_an_api_mismatch():
    # `'NoneType' object has no attribute 'dtype'`: the code read an attribute of None (a value that was never set,
    # types.NoneType); no release of any package lacks an API here. Inside megatron-core it was "megatron-core's own
    # code makes a call (NoneType.dtype) that the code it reaches does not accept" (a version mismatch); alone on its
    # line it gave no finding at all, while TypeError "'NoneType' object is not subscriptable" is an input check.
    lines = tb(f"{SITE}/megatron/core/tensor_parallel/layers.py",
               exc="AttributeError: 'NoneType' object has no attribute 'dtype'")
    f = first(lines)
    assert f.id == "error-in-package" and f.components[:2] == ("megatron", "config")
    f = first(["AttributeError: 'NoneType' object has no attribute 'dtype'"])
    assert f.id == "python-check-failed" and f.components == ("config", "model")
    # an attribute missing on a real class stays what it was
    assert first(["AttributeError: 'AscendQuantConfig' object has no attribute 'packed_modules_mapping'"]).id != \
        "python-check-failed"


@pytest.mark.parametrize(("line", "comps"), [
    ("npu-smi info: dcmi get device ecc config failed, ret is -8023", ("driver", "config")),
    ("[ERROR] device-plugin: dcmi_get_device_health failed, ret = -8009", ("driver", "system")),
    ("dcmi set device reset failed, ret is -8015", ("npu", "driver")),
    ("DCMI_ERR_CODE_IS_UPGRADING -8017 returned by dcmi_get_device_health", ("npu", "driver")),
    ("dcmi get hccs info failed, ret is -8255", ("npu", "driver")),
])
def test_a_dcmi_return_code_names_the_component_its_documentation_gives(line, comps):
    # The driver's DCMI return-code table (doctor.explain.dcmi): lines with the codes no signature words had no
    # finding at all; the signatures written for some codes still win where they match.
    f = first([line])
    assert f.id == "dcmi-code-owner" and f.components == comps
    assert "DCMI_ERR_CODE" in f.title
    assert first(["npu-smi info: dcmi get device info failed, ret is -8007"]).id == "dcmi-device-not-ready"


def test_without_its_specific_signature_a_dcmi_8005_is_the_driver_s_internal_error_not_a_named_word():
    # the generic database (fallbacks only): "dcmi module initialize failed. ret is -8005" was read by its words
    # (error-line-names-component [driver, config]); the code's documented meaning names the driver, then the NPU
    from tests.explain.generic import errors

    (f,) = errors(["dcmi module initialize failed. ret is -8005"])
    assert (f.id, f.components) == ("dcmi-code-owner", ("driver", "npu"))


def test_a_number_like_a_dcmi_code_on_a_line_without_dcmi_is_no_dcmi_code():
    from doctor.explain.dcmi import dcmi_code

    assert dcmi_code("loss -8005.2 at step 3") is None
    assert dcmi_code("dcmi init failed, error code: -8005") == "-8005"
    assert dcmi_code("dcmi: offset -80050") is None


# mbridge's get_model in a verl job (https://github.com/verl-project/verl/issues/6936): the frame is mbridge's, the
# enum member is megatron-core's, removed by Megatron-Core 0.17.0 (doctor.knowledge.missing_api)
MBRIDGE_MODEL_TYPE = ['File ".../mbridge/core/util.py", line 83, in build_model',
                      "    if model_type == ModelType.encoder_and_decoder:",
                      "AttributeError: type object 'ModelType' has no attribute 'encoder_and_decoder'"]


def test_a_member_a_known_release_of_the_defining_package_removed_names_that_package_not_a_reinstall():
    f = first(MBRIDGE_MODEL_TYPE)
    assert f.id == "api-version-mismatch" and f.components == ("megatron", "mbridge"), (f.id, f.components)
    assert f.evidence["caller"] == "mbridge" and f.evidence["callee"] == "megatron-core"
    assert "mbridge calls megatron-core" in f.title and "Reinstall mbridge" not in f.fix.text
    assert "megatron-core>=0.17.0 lacks it" in f.fix.text and "package-calls-missing-api" in f.fix.text
    assert f.source.startswith("https://github.com/NVIDIA/Megatron-LM/blob/core_v0.17.0/")
    # another member of the same class, which no row names, stays the caller's own inconsistency
    other = first([*MBRIDGE_MODEL_TYPE[:2], "AttributeError: type object 'ModelType' has no attribute 'retro_decoder'"])
    assert "mbridge's own code" in other.title and "Reinstall mbridge" in other.fix.text


# A PaddleX job on a 910B (https://github.com/PaddlePaddle/PaddleX/issues/4749, the line as it quotes it; the thread has
# no confirmed cause): CANN's libruntime.so misses ErrorManager::ATCReportErrMessage, which CANN's liberror_manager
# exports. Library and symbol are both CANN's, so CANN's libraries come from two releases; the old reading said CANN
# was "compiled against a different release of python".
PADDLEX_RUNTIME = ("ValueError: (InvalidArgument) Fail to open library: /usr/local/lib/python3.10/dist-packages/"
                   "paddle_custom_device/libpaddle-custom-npu.so with error: /usr/local/Ascend/ascend-toolkit/"
                   "8.0.RC3.alpha003/aarch64-linux/lib64/libruntime.so: undefined symbol: "
                   "_ZN12ErrorManager19ATCReportErrMessageESsRKSt6vectorISsSaISsEES4_")


def test_a_library_missing_a_symbol_of_its_own_component_is_a_mix_of_that_components_releases():
    f = first([PADDLEX_RUNTIME, "  [Hint: dso_handle should not be null.] (at /paddle/paddle/fluid/platform/init.cc:153)"])
    assert f.id == "native-symbol-mismatch" and f.components == ("cann", "env"), (f.id, f.components)
    assert "different releases" in f.title and "python" not in f.detail and "LD_LIBRARY_PATH" in f.fix.text
    assert f.source.startswith("https://github.com/Ascend/metadef/blob/")


def test_a_mangled_symbol_no_table_knows_names_no_python_a_python_c_api_symbol_does():
    lib = "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/lib64/libge_runner.so"
    f = first([f"ImportError: {lib}: undefined symbol: _ZN5fusion9PassMgr3RunEv"])
    assert f.id == "native-symbol-mismatch" and "python" not in f.components and "python" not in f.detail, \
        (f.components, f.detail)
    f = first([f"ImportError: {lib}: undefined symbol: PyUnicode_AsUTF8AndSize"])
    assert f.components == ("cann", "python"), f.components
