"""No check crashes on odd but schema-valid snapshots: unknown, null, empty and unparseable values."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.report import CheckStatus
from tests.stacks import diagnose_dict, healthy
from tests.test_sources import SOURCELESS

versions = st.sampled_from(["", "unknown", "8.3", "8.3.RC1", "9.0.0-beta.1", "2.5.1+cpu", "0.0.1.dev1", "2.8.0+cu128",
                            "x.y.z", "1", "25.0.rc1.1", "0.13.1.dev5+gabc", "3.9", "3.13.0", "9999.0"])
maybe_version = st.one_of(st.none(), versions)
PKGS = ["torch", "torch-npu", "torchvision", "vllm", "vllm-ascend", "triton", "triton-ascend", "mindspeed",
        "megatron-core", "transformers", "verl", "numpy", "transformer-engine", "flash-attn", "ray", "mbridge"]
ENV = ["ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "HCCL_CONNECT_TIMEOUT", "HCCL_IF_BASE_PORT",
       "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "PYTORCH_NPU_ALLOC_CONF", "ASCEND_HOME_PATH",
       "LD_LIBRARY_PATH", "ASCEBD_RT_VISIBLE_DEVICES", "VLLM_VERSION"]
env_values = st.sampled_from(["", "0", "1,0", "0,0", "a", "^lo", "=eth0", "eth0,eth1", "expandable_segments:True",
                              "-5", "99999999999999999999", ":::", "/usr/local/Ascend/ascend-toolkit/latest"])


@st.composite
def snapshots(draw):
    d = healthy(draw(st.sampled_from(["verl-0.6.1-cann8.2.rc1-a3", "verl-0.7.1-cann8.5.0-a2", "verl-0.10.0.dev20260822-cann9.1.0-a2"])),
                draw(st.sampled_from(["aarch64", "x86_64", "riscv64"])))
    for p in draw(st.lists(st.sampled_from(PKGS), max_size=6)):
        d["packages"][p] = {"version": draw(maybe_version)}
    for p in draw(st.lists(st.sampled_from(list(d["packages"])), max_size=3)):
        d["packages"].pop(p, None)
    for k in draw(st.lists(st.sampled_from(ENV), max_size=5)):
        d["env"][k] = draw(env_values)
    for part in draw(st.lists(st.sampled_from(["toolkit", "kernels", "nnal", "driver"]), max_size=3)):
        d["ascend"][part] = draw(st.one_of(st.none(), st.builds(dict), st.fixed_dictionaries({"version": maybe_version})))
    if draw(st.booleans()):
        d["ascend"]["npu_smi"] = draw(st.sampled_from([None, {}, {"status": "timeout"}, {"status": "error", "error": None}]))
    if draw(st.booleans()) and isinstance(d.get("python"), dict):  # python.libstdcxx: odd, partial and firing values
        d["python"]["libstdcxx"] = draw(st.sampled_from([
            None, {}, {"glibcxx": "3.4"}, {"path": "/x", "glibcxx": "3.4.x", "cxxabi": None, "system": None},
            {"path": "/opt/conda/lib/libstdc++.so.6", "glibcxx": "3.4.19", "cxxabi": "1.3.7",
             "system": {"path": "/usr/lib64/libstdc++.so.6", "glibcxx": "3.4.30", "cxxabi": None}}]))
    for key in draw(st.lists(st.sampled_from(["ascend", "env", "packages", "modules", "host", "python", "network"]),
                             max_size=2, unique=True)):
        d.pop(key)
    if draw(st.booleans()) and "ascend" in d:
        d["ascend"] = None
    if draw(st.booleans()) and isinstance(d.get("modules"), dict):
        d["modules"]["megatron"] = draw(st.one_of(st.none(), st.just({}), st.just({"origins": [], "version": "bad"})))
        d["modules"]["mindspeed"] = draw(st.one_of(st.none(), st.just({"git": None, "features": {}})))
    d["complete"] = draw(st.booleans())
    d["imports"] = draw(st.sampled_from([{}, {"torch_npu": {"ok": False}}, {"x": {"ok": False, "error": ""}}]))
    return d


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_no_check_crashes(d):
    report = diagnose_dict(d)
    crashed = [(c.id, c.traceback) for c in report.checks if c.status is CheckStatus.CRASH]
    assert crashed == []
    for f in report.findings:
        if f.severity.value != "info":
            assert f.fix is not None and f.fix.text and (f.source or f.id in SOURCELESS), f.id
