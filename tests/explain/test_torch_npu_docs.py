"""`doctor explain` on the messages torch_npu's and Ascend's own documentation quotes (the installation FAQ, the
README FAQ of the 5.0 / 3.0 branches, the porting & training guide's FAQ, the troubleshooting cases, the error-code
pages, TorchAir's FAQ and graph-failure cases, Ascend/docs' install guides) and on the device-fault messages torch_npu's NPUException.cpp prints: each is
explained by the finding the doc's cause names, and the outputs the docs show as healthy give no error."""

from __future__ import annotations

import pytest

from doctor.explain.signatures import explain_lines
from doctor.report import Severity

# (lines as the doc quotes them, the finding that must lead, its components)
DOC_MESSAGES = [
    # docs/zh/installation_guide/faq.md (master aa047be)
    (["Processing ./torch_npu-2.7.1-cp39-cp39-linux_aarch64.whl",
      "ERROR: torch_npuxxx.whl is not a supported wheel on this platform"],
     "pip-wheel-not-supported-on-platform", ("python", "env")),
    (['  File "/home/pytorch/torchnpugen/utils.py", line 80, in check_path_owner_consistent',
      "    raise RuntimeError(msg)",
      "RuntimeError: The path does not exist: "
      "/home/pytorch/third_party/op-plugin/op_plugin/config/v2r7/op_plugin_functions.yaml"],
     "torch-npu-build-submodule-missing", ("torch-npu", "system")),
    (["[100%] Linking CXX executable libtorch_resnet",
      "/usr/bin/ld: warning: libgfortran-b6d57c85.so.5.0.0, needed by /usr/local/python3.8.5/lib/python3.8/"
      "site-packages/torch/lib/../../torch.libs/libopenblasp-r0-56e95da7.3.24.so, not found (try using     -rpath "
      "or -rpath-link)",
      "/usr/bin/ld: /usr/local/python3.8.5/lib/python3.8/site-packages/torch/lib/../../torch.libs/"
      "libopenblasp-r0-56e95da7.3.24.so: undefined reference to `_gfortran_concat_string@GFORTRAN_8'",
      "collect2: error: ld returned 1 exit status",
      "make[2]: *** [CMakeFiles/libtorch_resnet.dir/build.make:101: libtorch_resnet] Error 1"],
     "libtorch-openblas-gfortran-unlinked", ("torch", "system")),
    # installation_guide/references: installing_gcc_11-2-0.md, installing_cmake_3-18-4.md (master 9e73e70)
    (["gmp-6.1.0.tar.bz2: FAILED", "sha512sum: WARNING: 1 computed checksum did NOT match",
      "error: Cannot verify integrity of possibly corrupted file gmp-6.1.0.tar.bz2"],
     "gcc-prerequisite-download-corrupt", ("network", "system")),
    (["ln: failed to create symbolic link '/usr/bin/cmake': File exists"], "symlink-already-exists", ("system",)),
    # README.zh.md FAQ (v5.0.rc3-pytorch2.1.0 579994f; its figures QA.png, QA1.png, FAQ.png)
    (["/root/pytorch/third_party/breakpad/src/client/linux/dump_writer_common/thread_info.h:61:22: error: field "
      "'regs' has incomplete type 'google_breakpad::user_regs_struct'"],
     "pytorch-build-breakpad-incomplete-type", ("torch", "system")),
    (["c1: error: invalid feature modifier in ‘-march=armv8.2-a+dotprod’",
      "make[2]: *** [confu-deps/XNNPACK/CMakeFiles/XNNPACK.dir/build.make:15949: confu-deps/XNNPACK/CMakeFiles/"
      "XNNPACK.dir/src/qs8-gemm/gen/1x8c4-minmax-neondot.c.o] Error 1"],
     "pytorch-build-xnnpack-march-unsupported", ("torch", "system")),
    (["RuntimeError: Initialize:/opt/pytorch/pytorch/c10/npu/sys_ctrl/npu_sys_ctrl.cpp:39 NPU error, error code is "
      "507008",
      "EH9999: Inner Error!",
      "        [Init][Version]init soc version failed, ret = 507008[FUNC:ReportInnerError][FILE:log_inner.cpp]"
      "[LINE:138]",
      "        get device msg feature can not support offline mode.[FUNC:GetDevMsg][FILE:api_impl.cc][LINE:3212]",
      "        rtGetDevMsg execute failed, reason=[feature not support][FUNC:FuncErrorReason]"
      "[FILE:error_message_manage.cc][LINE:45]"],
     "npu-container-devices-not-mounted", ("env", "driver")),
    # the porting & training guide's FAQ (f42d1ad) and its figures FAQ13, FAQ15, FAQ8-1
    (["[ERROR] CCECPU(10730,aicpu_scheduler):2021-01-24-15:27:58.554.684 [../../../../../../aicpu/aicpu_device/"
      "aicpu_processer/ae_so_manager.cc:482][LoadSo][tid:10741][AICPU_PROCESSER] Single so manager init failed, "
      "soFile is /usr/lib64/aicpu_kernels/libpt_kernels.so.",
      "[ERROR] CCECPU(10730,aicpu_scheduler):2021-01-24-15:27:58.554.747 [../../../../../../aicpu/aicpu_device/"
      "aicpu_processer/ae_kernel_lib_aicpu.cc:99][CallKernelApi][tid:10741][AICPU_PROCESSER] Get RunCpuKernel api "
      "from /usr/lib64/libpt_kernels.so failed, ret:2."],
     "cann-aicpu-kernels-so-not-loaded", ("cann", "env")),
    (["[ERROR] ASCENDCL(16713,python3.7.5):2021-01-26-17:18:17.536.596 [../../../../../../acl/utils/"
      "acl_dynamic_shape_op_map.h:268]16850 Get: Match op inputs failed. opType = PTIndexPut, inputDesc = "
      "4~0_0_0_-2_-2_false|0_0_-2_false|9_0_0_-2_-2_false|9_0_0_-2_-2_false|"],
     "cann-dynamic-shape-op-inputs-mismatch", ("model", "cann")),
    (["[ERROR] GE(23099,python3.7):2020-11-18-14:35:23.770.801 [framework/domi/engine_manager/"
      "dnnengine_manager.cc:266]23358 GetDNNEngineName: ErrorNo: 1343242282(assign engine failed) "
      "GetDNNEngineName:Op type TopKD of ops kernel AIcoreEngine is unsupported, reason:Op TopKD not supported "
      "reason: The number of attrs in op desc and op store does not match, check whether the attrs in op store are "
      "all in graph. Op store name is tbe-builtin.",
      "[ERROR] GE(23099,python3.7):2020-11-18-14:35:23.772.049 [framework/domi/engine_manager/"
      "dnnengine_manager.cc:277]23358 GetDNNEngineName: ErrorNo: 1343242282(assign engine failed) Can't find any "
      "supported ops kernel and engine of TopKD, type is TopKD"],
     "cann-op-unsupported-in-op-store", ("model", "kernels")),
    # the porting guide's figures FAQ1, FAQ3, FAQ9 / FAQ9-1 (f42d1ad): ExchangeDevice, HelpACLExecute, Initialize
    (['  File "/root/archiconda3/envs/x/lib/python3.7/site-packages/torch/npu/__init__.py", line 121, in set_device',
      "    torch._C._npu_setDevice(torch.device(device).index)",
      "RuntimeError: ExchangeDevice:/home/x/pytorch/c10/npu/sys_ctrl/npu_sys_ctrl.cpp:56 NPU error, error code is 500000",
      "Error in atexit._run_exitfuncs:",
      "Traceback (most recent call last):",
      '  File "/root/archiconda3/envs/x/lib/python3.7/site-packages/torch/__init__.py", line 429, in _npu_shutdown',
      "    torch._C._npu_shutdown()",
      "RuntimeError: npuSynchronizeDevice:/home/x/code/pytorch/c10/npu/NPUStream.cpp:776 NPU error, error code is "
      "200005"],
     "torch-npu-device-switched-in-thread", ("config", "model")),
    (["---Thread---281472684564960: device=0, write_idx=2, read_idx=1, status=1, ret = 500000",
      "terminate called after throwing an instance of 'c10::Error'",
      "  what():  HelpACLExecute:/home/x/pytorch/c10/npu/NPUStream.cpp:158 (HelpACLExecute at "
      "/home/x/pytorch/c10/npu/NPUStream.cpp:159)"],
     "torch-npu-task-queue-error-hidden", ("cann", "torch-npu")),
    (["RuntimeError: Initialize:/home/x/code/pytorch/c10/npu/sys_ctrl/npu_sys_ctrl.cpp:44 NPU error, error code is "
      "500000",
      "[ERROR] TDT(17652,python):2020-11-18-14:04:23.035.363 [../../../../../../tdt/common/src/log.cpp:144]deviceId: 0 "
      "drvHdcSessionConnect failed, ret = 35,",
      "[ERROR] RUNTIME(17652,python):2020-11-18-14:04:23.035.411 [../../../../../../runtime/feature/src/"
      "runtime.cc:1000]17652 startAicpuExecutor:TsdOpen failed. devId=0, tdt error=1655054"],
     "npu-device-start-failed-tsd", ("driver", "firmware")),
    (["terminate called after throwing an instance of 'c10::Error'",
      "  what():  0 INTERNAL ASSERT FAILED at /home/x/pytorch/c10/npu/NPUStream.cpp:146, please report a bug to "
      "PyTorch. Could not compute stream ID for 0xffff9f77fd28 on device -1 (something has gone horribly wrong!) "
      "(NPUStream_getStreamId at /home/x/pytorch/c10/npu/NPUStream.cpp:146)"],
     "torch-npu-set-device-after-backward", ("config", "model")),
    # troubleshooting: command_output.md's figure CANN_software_error_code.png, operator_called_error.md,
    # runtimeerror_Inner_Error.md's figure RuntimeError.png (master 9e73e70)
    (["[W OpParamMaker.cpp:342] Warning: EZ3002: 2024-11-05-22:29:32.218.118 Optype [ReduceAny] of Ops kernel "
      "[AIcoreEngine] is unsupported. Reason: [tbe-custom]:op type ReduceAny is not found in this op store."
      "[tbe-custom]:op type ReduceAny is not found in this op store.[Dynamic shape check]: data type DT_FLOAT of "
      "input [x] is not supported. All supported data type and format of tensor input0.x is: Data Type: "
      "{DT_BOOL,DT_BOOL}Format:{ND,ND}[Static shape check]:data type DT_FLOAT of input [x] is not supported.",
      "        No supported Ops kernel and engine are found for [ReduceAny14], optype [ReduceAny].",
      "        build op model failed, result = 500002[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
      "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
      "working operator name is ReduceAny.",
      "[ERROR] 2024-11-05-22:29:32 (PID:46229, Device:0, RankID:-1) ERR00100 PTA call acl api failed"],
     "cann-op-unsupported-in-op-store", ("model", "kernels")),
    (["RuntimeError: call aclnnArange failed, detail:EZ9999: Inner Error!",
      "EZ9999: [PID: 775] 2025-02-16-12:18:25.258.321 Cannot find bin of op Range, integral key "
      "0/1/|int64/ND/int64/ND/int64/ND/int64/ND/.",
      "        TraceBack (most recent call last):",
      "       Cannot find binary for op Range.",
      "       Kernel GetWorkspace failed. opType: 9",
      "[ERROR] 2025-02-16-12:18:25 (PID:775, Device:0, RankID:-1) ERR01100 OPS call acl api failed"],
     "cann-op-binary-not-found", ("kernels", "model")),
    (["RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
      "working operator name is HcclBatchSendRecv.",
      "Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the "
      "accurate stacktrace, please set the environment variable ASCEND_LAUNCH_BLOCKING=1.",
      "[ERROR] 2024-09-04-15:38:57 (PID:280, Device:2, RankID:2) ERR00100 PTA call acl api failed"],
     "torch-npu-hccl-op-inner-error", ("hccl", "network")),
    # TorchAir (torch_npu's graph mode, Ascend/torchair fced884): docs/zh/appendix/faq.md and cases/*.md
    (["[libprotobuf ERROR descriptor_database.cc:644] File already exists in database: dvpp_tensor_shape.proto",
      "[libprotobuf FATAL descriptor.cc:1371] CHECK failed: GeneratedDatabase()->Add(encoded_file_descriptor, size):",
      "torch._dynamo.exc.BackendCompilerFailed: backend='functools.partial(<function _npu_backend at 0xfffdb1f92820>, "
      "compiler_config=<torchair.configs.compiler_config.CompilerConfig object at 0xfffa5d17a160>, aot_config=None, "
      "custom_decompositions={})' raised:",
      "RuntimeError: CHECK failed: GeneratedDatabase()->Add(encoded_file_descriptor, size):"],
     "torchair-te-cann-mismatch-protobuf", ("cann", "torch-npu")),
    (["E89999:[PID:260559] 2024-11-06-15:44:43.218.474 op[FloorDiv_1] op dtype is not same, type1:DT_FLOAT, "
      "type2:DT_INT64[FUNC:CheckTwoInputDtypeSame]",
      "       TraceBack (most recent call last):",
      "       Verifying FloorDiv_1 failed.[FUNC:InferShapeAndType][FILE:infershape_pass.cc][LINE:129]",
      "       [Compile][Graph]Compile graph failed, error code:1343225857, session_id:0, graph_id:0."
      "[FUNC:CompileGraph][FILE:ge_api.cc]"],
     "torchair-ge-op-dtype-not-same", ("torch-npu", "model")),
    (["RuntimeError: E19025: [PID: 44349] 2024-12-05-16:19:12.399.912 Input tensor is invalid. Reason: The Output "
      "memory provided by the user, plus 64 bytes for data alignment, is smaller than op_size in the model, which is "
      "an illegal behavior. Output size=8192 , op_size=16416.",
      "       Check output size failed, index 0, user size 8192, op size 16416."
      "[FUNC:ConstructZeroCopyIoActiveBaseAddrs][FILE:davinci_model.cc][LINE:5728]"],
     "torchair-custom-op-output-size-mismatch", ("model", "torch-npu")),
    (["torch._dynamo.exc.TorchRuntimeError: Failed running call_function custom_define.npu_custom_batch_matmul_cce(*("
      "FakeTensor(..., device='npu:4', size=(3072, 2048), dtype=torch.int8),), **{}): tensor's device must be "
      "'meta', got cpu instead"],
     "torchair-meta-tensor-not-on-meta-device", ("model", "torch-npu")),
    (["E89999: [PID: 8383] 2025-06-28-17:38:17.580.416 op[Transpose], attr[perm], has wrong value[2], it should be "
      "less than input shape size[2][FUNC:TransposeCommonInferShape][FILE:transformation_ops.cc][LINE:1039]"],
     "torchair-ge-transpose-perm-invalid", ("model", "torch-npu")),
    (["NotImplementedError: torch.ops.aten._adaptive_avg_pool3d.default ge_converter is not implemented!"],
     "torchair-ge-converter-missing", ("torch-npu", "model")),
    (["torch._dynamo.exc.Unsupported: unsupported operator: npu.custom.default (see https://docs.google.com/document/"
      "d/1GgvOe7C8_NVOMLOCwDaYV1mXXyHMXY7ExoewHqooxrs/edit#heading=h.64r4npvq0w0 for how to fix)"],
     "graph-custom-op-meta-missing", ("model", "torch-npu")),
    (["AssertionError: assert not torch._C._dispatch_tls_local_exclude_set().has(torch._C.DispatchKey.Python)"],
     "graph-custom-op-meta-missing", ("model", "torch-npu")),
    (["RuntimeError: Found a custom (non-ATen) operator that either mutates or its inputs: "
      "npu::npu_xp_inplace_custom.. Getting these operators to work with functionalization requires some extra "
      "work. For mutable ops you need to register a corresponding out-of-place variant of the op, and you also need "
      "to"], "graph-custom-inplace-op-not-functionalized", ("model", "torch")),
    (["[ERROR] RUNTIME(1567697,python3):2026-03-28-11:32:18.888.239 [davinci_kernel_task.cc:1639]1568661 "
      "PrintErrorInfoForDavinciTask:[DFX_INFO]Aicore kernel execute failed, device_id=0, stream_id=70, "
      "report_stream_id=73, task_id=0, flip_num=0, fault kernel_name=te_superkernel_911c4c5214b52a01ea224923a6130"],
     "torchair-superkernel-op-failed", ("model", "torch-npu")),
    # Ascend/docs sources/roll/install.rst (b224fcc)
    (["RuntimeError: CMake configuration failed: Command '['/pathto/miniconda3/envs/roll/bin/python3.10', '-m', "
      "'pybind11', '--cmake']' returned non-zero exit status 2."],
     "vllm-ascend-build-pybind11-cmake-flag", ("vllm-ascend", "python")),
    # torch_npu/csrc/core/npu/NPUException.cpp (9e73e70): the device-fault messages, and the runtime's reasons
    (["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:403 NPU function error: HBM MULTI BIT ECC "
      "ERROR.time is 1732766162, error code is 507054",
      "[ERROR] 2025-01-15-20:59:48 (PID:6038, Device:0, RankID:-1) ERR00100 PTA call acl api failed"],
     "npu-hbm-multi-bit-ecc-error", ("npu",)),
    (["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:403 NPU function error: SUSPECT MEM ERROR, "
      "error code is 507055"], "npu-suspect-device-memory-error", ("npu",)),
    (["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:403 NPU function error: UB LINK ERROR, "
      "error code is 507056"], "npu-interconnect-link-error", ("npu", "network")),
    (["        rtStreamSynchronize execute failed, reason=[link error][FUNC:FuncErrorReason]"
      "[FILE:error_message_manage.cc][LINE:53]"], "npu-interconnect-link-error", ("npu", "network")),
    (["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:403 NPU function error: HCCL OP RETRY "
      "FAILED, error code is 507904"], "hccl-op-retry-failed", ("hccl", "network")),
    (["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:403 NPU function error: SUSPECT REMOTE "
      "ERROR, error code is 507057"], "npu-suspect-remote-error", ("npu", "cluster")),
    (["        rtStreamSynchronize execute failed, reason=[device mem error][FUNC:FuncErrorReason]"
      "[FILE:error_message_manage.cc][LINE:53]"], "npu-uce-memory-fault", ("npu",)),
    (["        rtStreamSynchronize execute failed, reason=[device task abort][FUNC:FuncErrorReason]"
      "[FILE:error_message_manage.cc][LINE:53]"], "npu-force-stopped", ("npu", "cluster")),
    # environment-variable docs (INF_NAN_MODE_FORCE_DISABLE, TORCH_NPU_FALLBACK_CPU_DISABLE) with the messages
    # NpuVariables.cpp / CpuFallbackUtils.h print, and feature_value_detection.md with torch_npu/asd/asd.py's
    (["RuntimeError: INF_NAN_MODE_ENABLE shouldn't be set to 0 on the current device. If you want to disable "
      "inf-nan mode, please export INF_NAN_MODE_FORCE_DISABLE=1"], "npu-inf-nan-mode-disable-refused", ("env", "npu")),
    (["RuntimeError: The operator 'aten::linalg_lstsq.out' would execute its main computation on CPU through "
      "dispatcher backend fallback, but CPU fallback is disabled by TORCH_NPU_FALLBACK_CPU_DISABLE=1.",
      "[ERROR] 2024-11-28-11:37:15 (PID:6547, Device:0, RankID:-1) ERR01007 OPS feature not supported"],
     "npu-cpu-fallback-disabled", ("env", "model")),
    (["[Warning][Rank 3]: The result of Matmul checksum is abnormal!"], "npu-matmul-checksum-abnormal", ("npu",)),
    (["[Warning][2025-01-15-20:59:48] [Rank 3]: feature detection detects abnormal results!",
      "Grad-norm spike: index 0, time 2025-01-15-20:59:48, param name model.layers.0.mlp.weight, abnormal value 1e5"],
     "npu-feature-value-abnormal", ("npu", "model")),
]


@pytest.mark.parametrize(("lines", "want", "components"), DOC_MESSAGES,
                         ids=[f"{m[1]}-{i}" for i, m in enumerate(DOC_MESSAGES)])
def test_a_message_the_docs_quote_is_explained_by_the_cause_they_give(lines, want, components):
    found = explain_lines(lines)
    assert found and found[0].id == want, [f.id for f in found]
    assert found[0].components == components
    assert found[0].source.startswith(("https://github.com/Ascend/pytorch/blob/", "https://github.com/Ascend/docs/",
                                       "https://github.com/Ascend/mind-cluster/", "https://github.com/Ascend/torchair/"))


def test_an_aten_operator_without_a_meta_kernel_is_not_blamed_on_a_custom_operator():
    found = explain_lines(["torch._dynamo.exc.Unsupported: unsupported operator: aten.nonzero.default (see "
                           "https://docs.google.com/document/d/1GgvOe7C8_NVOMLOCwDaYV1mXXyHMXY7ExoewHqooxrs/edit)"])
    assert "graph-custom-op-meta-missing" not in [f.id for f in found]


def test_the_suspect_memory_reason_is_not_read_as_a_confirmed_uce():
    found = explain_lines(["        rtStreamSynchronize execute failed, reason=[suspect device mem error]"
                           "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]"])
    assert [f.id for f in found] == ["npu-suspect-device-memory-error"]


def test_the_generic_acl_lines_give_way_to_the_operator_cause():
    # the ERR01100 / ERR00100 wrappers and the 500002 graph-engine code are the same failure, not others
    ez3002 = next(m[0] for m in DOC_MESSAGES if "EZ3002" in m[0][0])
    no_bin = next(m[0] for m in DOC_MESSAGES if m[1] == "cann-op-binary-not-found")
    ids = [f.id for f in explain_lines(ez3002 + no_bin)]
    assert ids[0] == "cann-op-unsupported-in-op-store" and "cann-op-binary-not-found" in ids, ids
    assert "torch-npu-acl-call-failed" not in ids and "acl-internal-ge-error" not in ids


HEALTHY = {
    # README.zh.md (579994f): the installation check, and the import warning its FAQ calls harmless
    "install-check": [
        "tensor([[-0.6066, 6.3385,  0.0379, 3.3356],",
        "        [ 2.9243, 3.3134, -1.5465, 0.1916],",
        "        [-2.1807, 0.2008, -1.1431, 2.1523]], device='npu:0')",
    ],
    "shallow-copy-warning": [
        "[W OperatorEntry.cpp:121] Warning: Overriding a previously registered kernel for the same operator and the "
        "same dispatch key",
        "  operator: aten::_has_compatible_shallow_copy_type(Tensor self, Tensor from) -> (bool)",
        "    registered at /usr1/workspace/FPTA_Daily_Plugin_open_v1.8.1-3.0.rc2/CODE/build/aten/src/ATen/"
        "RegisterSchema.cpp:20",
        "  dispatch key: Math",
    ],
    # docs/zh/installation_guide/references/check_installed_versions.md (master)
    "versions": ["Python 3.13.0", "torch     2.13.0+cpu", "torch_npu      2.13.0rc1"],
    # the porting guide's FAQ: a plog line it says to ignore
    "plog-notice": [
        "[ERROR] GE(53976,python3.7.5):2021-07-19-16:43:33.428.822 [operator.cc:330]55056 GetInputConstDataOut: "
        "ErrorNo: -1(failed) [COMP][DEFAULT][Get][InputImpl] failed, dst_name:perm",
    ],
    # docs/zh/api/environment_variable/op_execution/INF_NAN_MODE_ENABLE.md (master): saturation / INF_NAN outputs
    # feature_value_detection.md: one spike is an INFO event, not a failure
    "grad-norm-event": ["[Event][2025-01-15-20:59:48] [Rank 3]: A grad-norm spike may happen, param name x, abnormal "
                        "value 3.0, previous value 1.0, history avg 1.0, bp time 3, normal count 10."],
    "inf-nan": ["# tensor([65504.], device='npu:0', dtype=torch.float16)",
                "# tensor([nan], device='npu:0', dtype=torch.float16)"],
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_an_output_the_docs_show_as_healthy_gives_no_error(name):
    found = explain_lines(HEALTHY[name])
    assert not [f.id for f in found if f.severity is Severity.ERROR], [(f.id, f.severity) for f in found]
