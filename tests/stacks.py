"""Build the snapshot of a verified stack exactly as its profile documents it (tests only).

Used to prove that a profile's own stack passes `doctor check` with zero errors, and as a healthy base
that single tests break one fact at a time.
"""

from __future__ import annotations

import copy
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from doctor.knowledge.matrix import vllm_ascend_row
from doctor.knowledge.profiles import Profile

CHIP_ROWS = {
    "A2": [{"id": i, "chip_index": 0, "phy_id": i, "chip": "910B3", "soc": "Ascend910B3", "health": "OK",
            "hbm_total_mb": 65536, "hbm_used_mb": 3390, "processes": []} for i in range(8)],
    "A3": [{"id": i // 2, "chip_index": i % 2, "phy_id": i, "chip": "Ascend910", "soc": "Ascend910_9392",
            "health": "OK", "hbm_total_mb": 65536, "hbm_used_mb": 3400, "processes": []} for i in range(16)],
    "950": [{"id": i, "chip_index": 0, "phy_id": i, "chip": "Ascend950DT", "soc": "Ascend950DT", "health": "OK",
             "hbm_total_mb": 131072, "hbm_used_mb": 4096, "processes": []} for i in range(8)],
}
KERNEL_SOC = {"A2": "ascend910b3", "A3": "ascend910_9392", "950": "ascend950dt_9582"}
PCI_ID = {"A2": "d802", "A3": "d803", "950": "d806"}
DEVICE_TYPE = {"A2": "A2", "A3": "A3", "950": "A5"}  # vllm_ascend/_build_info.py __device_type__


def pin_version(spec: str, name: str | None = None) -> str:
    """A concrete version satisfying a pin: ==X -> X, ==X.* -> X.0; a range -> the newest release of `name` the
    requirements table knows inside it, the one a resolver takes (datasets<5.1.0 has no lower bound, and
    datasets 5.0.1 needs pyarrow>=21.0.0 of the pyarrow>=19.0.0,<=24.0.0 pin); without a table row, <2.0.0 ->
    1.26.4 and other ranges -> their lower bound."""
    s = SpecifierSet(spec)
    if name is not None and not any(sp.operator == "==" for sp in s):
        from doctor.knowledge.requirements import load_requirements

        inside = [v for v in load_requirements().projects.get(name, {}) if v in s]
        if inside:
            return str(max(inside, key=Version))
    for sp in s:
        if sp.operator == "==":
            return sp.version[:-2] + (".0" if sp.version.count(".") < 3 else "") if sp.version.endswith(".*") else sp.version
    for sp in s:
        if sp.operator == ">=":
            return sp.version
    if any(sp.operator == "<" and sp.version.startswith("2") for sp in s):
        return "1.26.4"
    raise ValueError(f"no concrete version for {spec}")


def installed_version(name: str, spec: str, arch: str) -> str:
    """The version the stack's plan installs for a pin: on x86_64 the plan takes torch, torchvision and torchaudio
    from the PyTorch CPU index as their `+cpu` builds (installers.steps.req: torch-npu's x86_64 wheels pin
    `torch==X+cpu`), elsewhere the pinned release itself."""
    from installers.steps import CPU_LOCAL

    v = pin_version(spec, name)
    return f"{v}+cpu" if arch == "x86_64" and name in CPU_LOCAL and "+" not in v else v


def versions_only(p: Profile, arch: str = "aarch64", python: str | None = None) -> dict[str, Any]:
    """The stack as a bug report states it: the versions the profile's plan installs (no METADATA, and no local
    label but the `+cpu` of the x86_64 torch builds, which is part of the version `pip list` shows), the Python and
    machine, nothing else: `check --from` then judges it by the published metadata."""
    return {"schema": "doctor.snapshot/1",
            "python": {"version": f"{python or p.python_recommended or '3.11'}.9", "implementation": "CPython"},
            "host": {"arch": arch},
            "packages": {name: {"version": installed_version(name, spec, arch)} for name, spec in p.pins.items()}}


def stack_snapshot(p: Profile, arch: str = "aarch64") -> dict[str, Any]:
    chip = p.chips[0]
    home = "/usr/local/Ascend/ascend-toolkit/latest"
    py = p.python_recommended or "3.11"
    site = f"/opt/venv/lib/python{py}/site-packages"
    pkgs: dict[str, Any] = {}
    for name, spec in p.pins.items():
        v = installed_version(name, spec, arch)
        if name == "vllm":
            v += "+empty"
        pkgs[name] = {"version": v, "location": site}
    va = p.git.get("vllm-ascend")
    if va is not None and va.ref.startswith("releases/v") and "vllm-ascend" in pkgs:
        # a build of a release branch after its tag reports the next patch's dev version (setuptools-scm)
        base = [int(x) for x in va.ref.removeprefix("releases/v").split(".")]
        pkgs["vllm-ascend"]["version"] = f"{base[0]}.{base[1]}.{base[2] + 1}.dev1+g{(va.commit or '0' * 9)[:9]}"
    if "torch-npu" not in pkgs and "vllm-ascend" in pkgs:  # the stack names no torch-npu: vllm-ascend's own pin
        row = vllm_ascend_row(pkgs["vllm-ascend"]["version"])
        if row is not None and row.torch_npu:
            pkgs["torch-npu"] = {"version": row.torch_npu[2:], "location": site}
    rel = p.verl_version.release
    pkgs.setdefault("verl", {"version": f"{rel[0]}.{rel[1]}.{rel[2]}.dev0" if p.is_snapshot else p.verl,
                             "location": "/verl", "editable": True})
    ms = p.git.get("mindspeed")
    mg = p.git.get("megatron-lm")
    pkgs["mindspeed"] = {"version": ms.version if ms else "0.12.1", "location": "/MindSpeed", "editable": True}
    pkgs["megatron-core"] = {"version": mg.version if mg else "0.12.1", "location": "/Megatron-LM", "editable": True}
    pkgs.setdefault("ray", {"version": "2.46.0"})
    pkgs.setdefault("numpy", {"version": "1.26.4"})
    for extra in ("ninja", "pybind11"):
        pkgs.setdefault(extra, {"version": "1.0.0"})
    # real releases: hydra-core before 1.3.0 fails on Python 3.11+ (python-too-new-for-package)
    pkgs.setdefault("hydra-core", {"version": "1.3.2"})
    pkgs.setdefault("omegaconf", {"version": "2.3.0"})
    pkgs.setdefault("einops", {"version": "0.8.1"})  # a real release: later megatron-core releases declare einops~=0.8
    if "vllm" in pkgs:  # every vLLM release the stacks build declares cachetools (profiles/requirements/vllm.json),
        pkgs.setdefault("cachetools", {"version": "6.2.1"})  # which verl 0.7.0-0.9.0's trainer imports undeclared
        pkgs.setdefault("fastapi", {"version": "0.115.0"})  # fastapi[standard]>=0.115.0 (brings uvicorn), which
        pkgs.setdefault("uvicorn", {"version": "0.34.0"})  # verl 0.8.0's engine workers import undeclared
    # CANN's Python-side dependencies, which every documented stack installs with CANN (its base image)
    # sympy as the stack's torch declares it (torch 2.5.1: ==1.13.1; 2.6 and later: >=1.13.3)
    sympy = "1.13.1" if pkgs.get("torch", {}).get("version", "").startswith(("2.1.", "2.2.", "2.3.", "2.4.", "2.5.")) else "1.13.3"
    # protobuf as pip leaves it after vLLM's VLLM_TARGET_DEVICE=empty build: 0.18.0 on declares protobuf>=5.29.6
    # (requirements/common.txt; profiles/requirements-git.toml [[vllm_empty_target]]), earlier releases any protobuf
    protobuf = "5.29.6" if "vllm" in pkgs else "4.25.5"
    # scipy as pip leaves it beside the stack's numpy: 1.13.1 declares numpy<2.3, so a numpy 2.x stack (verl 0.9.0's
    # numpy>=2.0.0,<2.4) has the scipy its own resolve took, 1.15.3 (numpy<2.5)
    scipy = "1.15.3" if Version(pkgs["numpy"]["version"]).major >= 2 else "1.13.1"
    for dep, v in (("attrs", "24.2.0"), ("decorator", "5.1.1"), ("sympy", sympy), ("cffi", "1.17.1"),
                   ("psutil", "6.1.0"), ("scipy", scipy), ("pyyaml", "6.0.2"), ("protobuf", protobuf)):
        pkgs.setdefault(dep, {"version": v})
    devices = copy.deepcopy(CHIP_ROWS[chip])
    return {
        "schema": "doctor.snapshot/1", "complete": True,
        "host": {"hostname": "node-0", "arch": arch, "os": "Ubuntu 22.04.4 LTS", "cpu_count": 192, "memory_gb": 1510.0,
                 "shm_gb": 755.0, "cwd": "/workspace", "in_container": True, "tools": {"ninja": "/usr/bin/ninja", "g++": "/usr/bin/g++"},
                 "torch_extensions_locks": []},
        "python": {"version": f"{py}.9", "executable": "/opt/venv/bin/python", "implementation": "CPython",
                   "prefix": "/opt/venv", "site_packages": [site]},
        "packages": pkgs,
        "modules": {
            "megatron": {"origins": ["/Megatron-LM/megatron"], "version": mg.version if mg else "0.12.1"},
            "mindspeed": {"origins": ["/MindSpeed/mindspeed"], "features": {"repatch": True},
                          "git": {"commit": ms.commit if ms and ms.commit else "0" * 40, "branch": ms.ref if ms else None,
                                  "tag": None, "dirty": False}},
            "vllm_ascend": {"origins": [f"{site}/vllm_ascend"], "build": {"device_type": DEVICE_TYPE[chip]}},
            "torch": {"origins": [f"{site}/torch"], "build": {"cuda": None}},
            "transformer_engine": None,
            # a stack that builds verl from a checkout (main at a pinned commit): the probe reads its git facts
            **({"verl": {"origins": ["/verl/verl"], "git": {"commit": vg.commit, "branch": vg.ref, "tag": None,
                                                             "dirty": False}}}
               if (vg := p.git.get("verl")) is not None and vg.commit else {}),
        },
        "ascend": {
            "root": "/usr/local/Ascend",
            "toolkit": {"version": p.cann_version, "path": f"/usr/local/Ascend/ascend-toolkit/{p.cann_version}", "arch": arch},
            "kernels": {"version": p.cann_version, "soc": KERNEL_SOC[chip]},
            "nnal": {"version": p.cann_version, "path": "/usr/local/Ascend/nnal/atb"},
            "driver": {"version": p.driver_min or "26.0.rc1"},
            "firmware": {"version": "7.7.0.1.231"},
            "npu_smi": {"status": "ok", "version": p.driver_min or "26.0.rc1"},
            "devices": devices,
            "pci": [{"address": f"0000:{0xc1 + i:02x}:00.0", "device_id": PCI_ID[chip]} for i in range(8)],
            "device_files": [f"/dev/davinci{i}" for i in range(len(devices))]
            + ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"],
            "toolkits": [{"version": p.cann_version, "path": f"/usr/local/Ascend/ascend-toolkit/{p.cann_version}", "active": True}],
        },
        "env": {
            "ASCEND_HOME_PATH": home, "ASCEND_TOOLKIT_HOME": home, "ASCEND_OPP_PATH": f"{home}/opp",
            "ASCEND_AICPU_PATH": home, "TOOLCHAIN_HOME": f"{home}/toolkit",
            "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1",
            "LD_LIBRARY_PATH": f"/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib:{home}/lib64:{home}/lib64/plugin/opskernel:"
                               "/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver",
            "PATH": f"{home}/bin:/usr/local/bin:/usr/bin:/bin",
            **dict(p.exports),
        },
        "network": {"interfaces": [{"name": "enp189s0f0", "addresses": ["10.1.2.3"], "up": True},
                                   {"name": "lo", "addresses": ["127.0.0.1"], "up": True}],
                    "listening_ports": [22, 6379]},
    }


def healthy(name: str = "verl-0.7.1-cann8.5.0-a2", arch: str = "aarch64") -> dict[str, Any]:
    """A fresh, mutable snapshot dict of one verified stack (zero warnings on its own)."""
    from doctor.knowledge.profiles import find_profile, load_profiles

    return stack_snapshot(find_profile(load_profiles(), name), arch)


def diagnose_dict(d: dict[str, Any], *, forced: str | None = None, only: tuple[str, ...] = (),
                  ignore: tuple[str, ...] = ()) -> Any:
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    return diagnose([(None, snapshot_from_dict(d), None)], forced_profile=forced, only=only, ignore=ignore)


def found(d: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """finding id -> severity value (the worst one when an id repeats)."""
    out: dict[str, Any] = {}
    for f in diagnose_dict(d, **kw).findings:
        if f.id not in out or f.severity.rank > {"info": 0, "warning": 1, "error": 2}[out[f.id]]:
            out[f.id] = f.severity.value
    return out


def bare(**sections: Any) -> dict[str, Any]:
    """A hand-written partial snapshot: only the given sections are known."""
    return {"schema": "doctor.snapshot/1", **sections}


def ascend_stack(pkgs: dict[str, str], cann: str, py: str = "3.11.9") -> dict[str, Any]:
    """A partial snapshot of a documented stack: these package versions on an A2 host (aarch64) with this CANN."""
    return bare(python={"version": py, "implementation": "CPython"}, host={"arch": "aarch64"},
                packages={k: {"version": v} for k, v in pkgs.items()},
                ascend={"toolkit": {"version": cann, "path": f"/usr/local/Ascend/ascend-toolkit/{cann}", "arch": "aarch64"},
                        "devices": CHIP_ROWS["A2"], "driver": {"version": "26.0.rc1"}})
