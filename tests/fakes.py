"""Builders of fake machines for tests: Ascend roots, npu-smi scripts, site-packages with real dist-info.

Everything here uses the real file names and key formats of docs/ascend-install-layouts.md
and the real npu-smi pastes in shared/fixtures/npu-smi, so the probes under test read what a real
machine would show them. Other helpers import these:

    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")   # then --root root
    fake_npu_smi(bin_dir, "vllm-ascend-5111")                       # then PATH=bin_dir
    make_site_packages(site, {"torch": "2.5.1", "torch_npu": "2.5.1.post1"}, editable={"verl": src})
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

NPU_SMI_FIXTURES = SHARED / "fixtures" / "npu-smi"

ASCEND_KINDS = (
    "a2-cann8.3rc1-old-layout",
    "a3-cann9.1.0-new-layout",
    "310p",
    "missing-kernels",
    "missing-nnal",
    "corrupt-version-info",
    "non-utf8-version-info",
    "symlink-loop",
    "file-instead-of-dir",
)

# What a correct probe must report for each kind (toolkit version, active path, kernels SOC or None,
# NNAL version or None, driver version or None, PCI device id, number of PCI functions).
EXPECTED: dict[str, dict[str, Any]] = {
    "a2-cann8.3rc1-old-layout": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1",
                                 "layout": "old", "arch": "aarch64", "kernels_soc": "ascend910b", "nnal": "8.3.RC1",
                                 "driver": "25.3.rc1", "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
    "a3-cann9.1.0-new-layout": {"toolkit": "9.1.0", "path": "/usr/local/Ascend/cann-9.1.0", "layout": "new",
                                "arch": "aarch64", "kernels_soc": "ascend910_93", "nnal": "9.1.0",
                                "driver": "26.0.rc1", "firmware": "7.8.0.6.201", "pci": "d803", "pci_count": 16},
    "310p": {"toolkit": "8.0.0", "path": "/usr/local/Ascend/ascend-toolkit/8.0.0", "layout": "old", "arch": "x86_64",
             "kernels_soc": "ascend310p", "nnal": "8.0.0", "driver": "24.1.rc2", "firmware": "7.3.0.1.231",
             "pci": "d500", "pci_count": 1},
    "missing-kernels": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1", "layout": "old",
                        "arch": "aarch64", "kernels_soc": None, "nnal": "8.3.RC1", "driver": "25.3.rc1",
                        "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
    "missing-nnal": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1", "layout": "old",
                     "arch": "aarch64", "kernels_soc": "ascend910b", "nnal": None, "driver": "25.3.rc1",
                     "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
    # driver/version.info and the toolkit's install.info are garbage: the toolkit version still comes
    # from runtime/version.info (version_dir), the driver version is null with an error.
    "corrupt-version-info": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1",
                             "layout": "old", "arch": "aarch64", "kernels_soc": "ascend910b", "nnal": "8.3.RC1",
                             "driver": None, "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
    # GBK bytes around the Version= lines: versions are still read.
    "non-utf8-version-info": {"toolkit": "9.1.0", "path": "/usr/local/Ascend/cann-9.1.0", "layout": "new",
                              "arch": "aarch64", "kernels_soc": "ascend910_93", "nnal": "9.1.0",
                              "driver": "26.0.rc1", "firmware": "7.8.0.6.201", "pci": "d803", "pci_count": 16},
    # ascend-toolkit/latest -> latest and cann -> cann: recorded, the versioned dir is still found.
    "symlink-loop": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1", "layout": "old",
                     "arch": "aarch64", "kernels_soc": "ascend910b", "nnal": "8.3.RC1", "driver": "25.3.rc1",
                     "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
    # /usr/local/Ascend/driver and nnal/atb are regular files.
    "file-instead-of-dir": {"toolkit": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1",
                            "layout": "old", "arch": "aarch64", "kernels_soc": "ascend910b", "nnal": None,
                            "driver": None, "firmware": "7.8.0.5.216", "pci": "d802", "pci_count": 8},
}

# npu-smi fixture that matches each healthy kind, and board answers per chip family (docs/npu-smi.md).
FIXTURE_FOR_KIND = {"a2-cann8.3rc1-old-layout": "vllm-ascend-5111", "a3-cann9.1.0-new-layout": "vllm-ascend-960",
                    "310p": "ascend-pytorch-94"}
BOARD = {
    "vllm-ascend-5111": ("        NPU ID                         : 0\n"
                         "        Product Name                   : IT21HMDC_Bin5\n"
                         "        Software Version               : 25.2.0\n"
                         "        Firmware Version               : 7.8.0.6.201\n"
                         "        PCI Device ID                  : 0xD802\n"
                         "        Chip Count                     : 1\n"),
    "vllm-ascend-5111-c0": ("        NPU ID                         : 0\n"
                            "        Chip ID                        : 0\n"
                            "        Chip Type                      : Ascend\n"
                            "        Chip Name                      : 910B2\n"),
    "vllm-ascend-960": ("        NPU ID                         : 0\n"
                        "        Product Name                   : IT22HMDA_2_S\n"
                        "        Firmware Version               : 7.5.0.1.129\n"
                        "        PCI Device ID                  : 0xD803\n"
                        "        Chip Count                     : 2\n"),
    "vllm-ascend-960-c0": ("        NPU ID                         : 0\n"
                           "        NPU Name                       : 9392\n"
                           "        Chip ID                        : 0\n"
                           "        Chip Name                      : Ascend910\n"),
    "ascend-pytorch-94": ("        NPU ID                         : 1792\n"
                          "        Chip Count                     : 2\n"),
    "ascend-pytorch-94-c0": ("        NPU ID                         : 1792\n"
                             "        Chip ID                        : 0\n"
                             "        Chip Type                      : Ascend\n"
                             "        Chip Name                      : 310P3\n"),
}
EXPECTED_SOC = {"vllm-ascend-5111": "Ascend910B2", "vllm-ascend-960": "Ascend910_9392", "ascend-pytorch-94": "Ascend310P3"}


def write(path: Path, content: str | bytes, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def write_tree(base: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        write(base / rel, content)
    return base


def symlink(link: Path, target: str) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(target, link)


# -- Ascend roots ---------------------------------------------------------------------------------------


def _toolkit_install_info(version: str, inner: str, arch: str, path: str) -> str:
    return (f"package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion={inner}\n"
            f"compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]\n"
            f"arch={arch}\nos=linux\npath={path}\n")


def _component_info(internal: str, version_dir: str) -> str:
    return (f"Version={internal}\nversion_dir={version_dir}\ntimestamp=20250724_194044950\n"
            f'required_package_amct_acl_version="8.3"\nrequired_package_opp_kernel_version=">=7.6, <=8.3"\n')


def _nnal_info(version: str, arch: str) -> str:
    return (f"    Ascend-cann-atb : {version}\n    Ascend-cann-atb Version : {version}.B150\n"
            f"    Platform : {arch}\n    branch : br_release_cann_{version}_20251226\n    commit id : f10dc203\n")


def _driver_info(version: str, inner: str) -> str:
    return (f"Version={version}\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\n"
            f"Innerversion={inner}\ncompatible_version=[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]\n"
            f"compatible_version_fw=[7.0.0,8.9.9]\npackage_version={version}\n")


def _firmware_info(version: str, driver: str) -> str:
    return (f"Version={version}\nfirmware_version=1.0\npackage_version={driver}\n"
            "compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.],[26.0,26.0.]\n")


_INSTALL_INFO = ("UserName=HwHiAiUser\nUserGroup=HwHiAiUser\nDriver_Install_Type=full\n"
                 "Driver_Install_Path_Param=/usr/local/Ascend\nDriver_Install_For_All=yes\nDriver_Install_Mode=normal\n"
                 "Firmware_Install_Type=full\nFirmware_Install_Path_Param=/usr/local/Ascend\n")


def _host_files(root: Path, davinci: int, pci_dev: str, pci_count: int, *, same_bus: bool = False) -> None:
    write(root / "etc/os-release", 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n')
    drv = root / "usr/local/Ascend/driver"
    if drv.is_dir():
        for sub in ("lib64/common", "lib64/driver", "tools"):
            (drv / sub).mkdir(parents=True, exist_ok=True)
    (root / "usr/local/dcmi").mkdir(parents=True, exist_ok=True)
    write(root / "etc/ascend_install.info", _INSTALL_INFO)
    for i in range(davinci):
        write(root / f"dev/davinci{i}", "")
    for n in ("davinci_manager", "devmm_svm", "hisi_hdc"):
        write(root / "dev" / n, "")
    (root / "dev/shm").mkdir(parents=True, exist_ok=True)
    buses = [0xC1, 0xC2, 0x81, 0x82, 0x01, 0x02, 0x41, 0x42, 0x9D, 0x9F, 0x99, 0x9B, 0x95, 0x97, 0x91, 0x93]
    for i in range(pci_count):
        bus = buses[0] if same_bus else buses[i % len(buses)] + (i // len(buses))
        d = root / f"sys/bus/pci/devices/0000:{bus:02x}:00.{0 if not same_bus else i}"
        write(d / "vendor", "0x19e5\n")
        write(d / "device", f"0x{pci_dev}\n")
        write(d / "class", "0x120000\n")
    # a Huawei NIC (same vendor, network class) and an Intel device must not count as NPUs
    write(root / "sys/bus/pci/devices/0000:7d:00.0/vendor", "0x19e5\n")
    write(root / "sys/bus/pci/devices/0000:7d:00.0/device", "0xa222\n")
    write(root / "sys/bus/pci/devices/0000:7d:00.0/class", "0x020000\n")
    write(root / "sys/bus/pci/devices/0000:00:1f.0/vendor", "0x8086\n")
    write(root / "sys/bus/pci/devices/0000:00:1f.0/device", "0x1234\n")
    write(root / "sys/bus/pci/devices/0000:00:1f.0/class", "0x120000\n")


def _old_layout(asc: Path, version: str, internal: str, inner: str, arch: str, soc: str | None,
                *, latest: bool = True) -> Path:
    tk = asc / "ascend-toolkit"
    vdir = tk / version
    write(tk / "set_env.sh", "export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest\n")
    write(vdir / f"{arch}-linux/ascend_toolkit_install.info",
          _toolkit_install_info(version, inner, arch, f"/usr/local/Ascend/ascend-toolkit/{version}/{arch}-linux"))
    (vdir / f"{arch}-linux/devlib").mkdir(parents=True, exist_ok=True)
    for comp in ("runtime", "compiler", "opp", "toolkit"):
        write(vdir / comp / "version.info", _component_info(internal, version))
    if soc:
        write(vdir / "opp_kernel/version.info", _component_info(internal, version) + "ops_version=1.0\nadk_version=1.0\n")
        (vdir / f"opp/built-in/op_impl/ai_core/tbe/kernel/{soc}").mkdir(parents=True, exist_ok=True)
        (vdir / "opp/built-in/op_impl/ai_core/tbe/kernel/config").mkdir(parents=True, exist_ok=True)
    if latest:
        # `latest` is a real directory of relative symlinks plus version.cfg (docs/ascend-install-layouts.md, old layout)
        lat = tk / "latest"
        lat.mkdir(parents=True, exist_ok=True)
        for comp in ("runtime", "compiler", "opp", "toolkit", f"{arch}-linux", *(["opp_kernel"] if soc else [])):
            symlink(lat / comp, f"../{version}/{comp}")
        write(lat / "version.cfg", f"# version: 1.0\nruntime_running_version=[{internal}:{version}]\n"
                                   f"compiler_running_version=[{internal}:{version}]\n"
                                   f"runtime_installed_version=[{internal}:{version}]\n")
    return vdir


def _nnal(asc: Path, version: str, arch: str) -> None:
    atb = asc / "nnal/atb"
    write(atb / "set_env.sh", "source /usr/local/Ascend/nnal/atb/latest/atb/set_env.sh\n")
    write(atb / version / "version.info", _nnal_info(version, arch))
    for abi in ("cxx_abi_0", "cxx_abi_1"):
        (atb / version / "atb" / abi / "lib").mkdir(parents=True, exist_ok=True)
    symlink(atb / "latest", version)


def _new_layout(asc: Path, version: str, inner: str, arch: str, ops: str | None) -> Path:
    c = asc / f"cann-{version}"
    write(c / "set_env.sh", f"export ASCEND_HOME_PATH=/usr/local/Ascend/cann-{version}\n")
    write(c / "share/info/runtime/version.info", f"Version={version}\n")
    write(c / "share/info/hccl/version.info", f"Version={version}\n")
    write(c / f"{arch}-linux/ascend_toolkit_install.info",
          _toolkit_install_info(version, inner, arch, f"/usr/local/Ascend/cann-{version}"))
    write(c / "compiler/version.info", f"Version={version}\nversion_dir=cann\n")
    write(c / "opp/version.info", f"Version={version}\nversion_dir=cann\n")
    if ops:
        write(c / f"{arch}-linux/ascend_ops_install.info",
              f"package_name={ops}\nversion={version}\ninnerversion={inner}\narch={arch}\nos=linux\n"
              f"path=/usr/local/Ascend/cann-{version}\n")
    return c


def make_ascend_root(tmp_path: Path, kind: str) -> Path:
    """A fake machine root for `--root` with the Ascend files of `kind` (one of ASCEND_KINDS).
    EXPECTED[kind] holds what the probes must report for it."""
    if kind not in ASCEND_KINDS:
        raise ValueError(f"unknown fake Ascend root kind {kind!r}; one of {ASCEND_KINDS}")
    root = Path(tmp_path) / f"root-{kind}"
    asc = root / "usr/local/Ascend"
    if kind in ("a3-cann9.1.0-new-layout", "non-utf8-version-info"):
        _new_layout(asc, "8.5.0", "V100R001C25SPC001B212", "aarch64", "Ascend-cann-A3-ops")  # older, inactive
        _new_layout(asc, "9.1.0", "V100R001C11SPC001B243", "aarch64", "Ascend-cann-A3-ops")
        symlink(asc / "cann", "cann-9.1.0")
        write(asc / "ascend-toolkit/set_env.sh", "source /usr/local/Ascend/cann/set_env.sh\n")
        symlink(asc / "ascend-toolkit/latest", "/usr/local/Ascend/cann")  # absolute, as in CANN images
        _nnal(asc, "9.1.0", "aarch64")
        write(asc / "driver/version.info", _driver_info("26.0.rc1", "V100R001C10SPC001B257"))
        write(asc / "firmware/version.info", _firmware_info("7.8.0.6.201", "26.0.rc1"))
        _host_files(root, 16, "d803", 16)
        write(root / "etc/ascend_install.info", _INSTALL_INFO + "Driver_Install_Status=complete\n")
        if kind == "non-utf8-version-info":
            write(asc / "cann-9.1.0/share/info/runtime/version.info",
                  b"# \xb0\xe6\xb1\xbe\xd0\xc5\xcf\xa2 (GBK)\nVersion=9.1.0\n\xff\xfe\n")
            write(asc / "driver/version.info", b"\xd5\xe2\xca\xc7\nVersion=26.0.rc1\npackage_version=26.0.rc1\n\x80\x81")
            write(asc / "nnal/atb/9.1.0/version.info", b"    Ascend-cann-atb : 9.1.0\n" + b"    \xc6\xbd\xcc\xa8 : aarch64\n")
        return root
    if kind == "310p":
        _old_layout(asc, "8.0.0", "7.6.0.1.220", "V100R001C20SPC001B251", "x86_64", "ascend310p")
        _nnal(asc, "8.0.0", "x86_64")
        write(asc / "driver/version.info", _driver_info("24.1.rc2", "V100R001C18SPC001B233"))
        write(asc / "firmware/version.info", _firmware_info("7.3.0.1.231", "24.1.rc2"))
        _host_files(root, 2, "d500", 1)
        return root
    # A2 family, CANN 8.3.RC1 old layout, and its damaged variants
    _old_layout(asc, "8.3.RC1", "8.3.0.1.200", "V100R001C23SPC001B231", "aarch64",
                None if kind == "missing-kernels" else "ascend910b", latest=kind != "symlink-loop")
    if kind != "missing-nnal":
        _nnal(asc, "8.3.RC1", "aarch64")
    write(asc / "driver/version.info", _driver_info("25.3.rc1", "V100R001C23SPC002B212"))
    write(asc / "firmware/version.info", _firmware_info("7.8.0.5.216", "25.3.rc1"))
    _host_files(root, 8, "d802", 8)
    if kind == "corrupt-version-info":
        write(asc / "driver/version.info", b"\x00\x13\x8b\x08garbage\x00\xff\n=\n==broken")
        write(asc / "ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info", b"\x1f\x8b\x08\x00\x00truncated")
    elif kind == "symlink-loop":
        symlink(asc / "ascend-toolkit/latest", "latest")
        symlink(asc / "cann", "/usr/local/Ascend/cann")
        symlink(asc / "nnal/atb/latest", "../atb/latest")
    elif kind == "file-instead-of-dir":
        import shutil

        shutil.rmtree(asc / "driver", ignore_errors=True)
        write(asc / "driver", "this should be a directory\n")
        shutil.rmtree(asc / "nnal/atb")
        write(asc / "nnal/atb", "not a directory\n")
    return root


# -- npu-smi --------------------------------------------------------------------------------------------


def fake_npu_smi(bin_dir: Path, spec: str, *, board: dict[str, str] | None = None) -> Path:
    """Write an executable `npu-smi` into bin_dir.

    spec: a fixture name from shared/fixtures/npu-smi (e.g. "vllm-ascend-5111"), "hang" (sleeps forever and
    starts a sleeping child; both write their pids to bin_dir/*.pid), "exit1" (dcmi failure, exit 1), or
    literal output text for `npu-smi info`. `board` overrides the board answers {"": text, "-c0": text}."""
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "npu-smi"
    if spec == "hang":
        body = (f'echo $$ > {shlex.quote(str(bin_dir / "npu-smi.pid"))}\n'
                f'sleep 600 & echo $! > {shlex.quote(str(bin_dir / "child.pid"))}\n'
                "sleep 600\n")
    elif spec == "exit1":
        body = 'echo "dcmi module initialize failed. ret is -8005" >&2\nexit 1\n'
    else:
        is_name = "\n" not in spec and len(spec) < 200
        fixture = NPU_SMI_FIXTURES / f"{spec}.txt" if is_name else NPU_SMI_FIXTURES / "-"
        if not fixture.is_file() and is_name and re.fullmatch(r"[A-Za-z0-9_.-]+", spec):
            raise FileNotFoundError(f"no npu-smi fixture {fixture} (pass output text, 'hang' or 'exit1')")
        info = fixture.read_text(encoding="utf-8") if fixture.is_file() else spec
        info_file = write(bin_dir / "npu-smi.info.txt", info)
        boards = board or ({"": BOARD.get(spec, ""), "-c0": BOARD.get(f"{spec}-c0", "")})
        b_file = write(bin_dir / "npu-smi.board.txt", boards.get("", ""))
        c_file = write(bin_dir / "npu-smi.board-c0.txt", boards.get("-c0", ""))
        body = (
            'if [ "$1" = "info" ] && [ "$2" = "-t" ] && [ "$3" = "board" ]; then\n'
            f'  if [ "$6" = "-c" ]; then cat {shlex.quote(str(c_file))}; else cat {shlex.quote(str(b_file))}; fi\n'
            "  exit 0\n"
            "fi\n"
            'if [ "$1" = "info" ] && [ $# -eq 1 ]; then\n'
            f"  cat {shlex.quote(str(info_file))}\n"
            "  exit 0\n"
            "fi\n"
            'echo "Error parameter of $*" >&2\nexit 2\n'
        )
    write(exe, "#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


# -- Python environments --------------------------------------------------------------------------------


def make_site_packages(
    site_dir: Path,
    dists: dict[str, str],
    *,
    editable: dict[str, Path | str] | None = None,
    direct_url: dict[str, dict[str, Any]] | None = None,
    installer: str = "pip",
    top_level: dict[str, list[str]] | None = None,
    requires: dict[str, list[str]] | None = None,
    requires_python: dict[str, str] | None = None,
) -> Path:
    """Real `*.dist-info` directories (METADATA, INSTALLER, RECORD, direct_url.json) that the real
    importlib.metadata reads. `editable={"verl": "/src/verl"}` writes a PEP 660 direct_url.json with
    dir_info.editable; `direct_url` writes arbitrary direct_url.json content per distribution; `requires` and
    `requires_python` write Requires-Dist / Requires-Python lines into METADATA."""
    site_dir = Path(site_dir)
    site_dir.mkdir(parents=True, exist_ok=True)
    dists = dict(dists)
    editable = editable or {}
    direct_url = dict(direct_url or {})
    for name, src in editable.items():
        direct_url.setdefault(name, {"url": Path(src).resolve().as_uri(), "dir_info": {"editable": True}})
        dists.setdefault(name, "0.0.0")
    for name, version in dists.items():
        stem = f"{name.replace('-', '_')}-{version}"
        di = site_dir / f"{stem}.dist-info"
        declared = "".join(f"Requires-Dist: {r}\n" for r in (requires or {}).get(name, []))
        if requires_python and name in requires_python:
            declared = f"Requires-Python: {requires_python[name]}\n" + declared
        write(di / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: fake {name}\n"
                               f"{declared}\nlong description\n")
        write(di / "INSTALLER", f"{installer}\n")
        write(di / "RECORD", "")
        if name in direct_url:
            write(di / "direct_url.json", json.dumps(direct_url[name]))
        if top_level and name in top_level:
            write(di / "top_level.txt", "\n".join(top_level[name]) + "\n")
    return site_dir


def make_package(base: Path, name: str, files: dict[str, str] | None = None, *, init: str | None = "") -> Path:
    """A package directory `base/name` with __init__.py (unless init is None: a namespace portion) and files."""
    pkg = Path(base) / name
    pkg.mkdir(parents=True, exist_ok=True)
    if init is not None:
        write(pkg / "__init__.py", init)
    for rel, content in (files or {}).items():
        write(pkg / rel, content)
    return pkg


def make_git_repo(path: Path, *, branch: str = "main", tag: str | None = None, dirty: bool = False) -> str:
    """A real git repository at `path` with one commit (and optionally an annotated tag); returns the sha."""
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path)}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True,
                              env=env, timeout=30).stdout.strip()

    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", branch)
    if not any(p.name != ".git" for p in path.iterdir()):
        write(path / "README", "x\n")
    git("add", "-A")
    git("commit", "-q", "-m", "init")
    if tag:
        git("tag", "-a", tag, "-m", tag)
    if dirty:
        tracked = next(p for p in sorted(path.rglob("*")) if p.is_file() and ".git" not in p.parts)
        tracked.write_text(tracked.read_text() + "\n# local change\n")
    return git("rev-parse", "HEAD")


def externally_managed_python() -> str | None:
    """The OS's interpreter when it is externally managed (PEP 668: Debian 12, Ubuntu 23.04+), else None. Tests
    only read it and check that nothing installs into it."""
    import subprocess

    exe = "/usr/bin/python3"
    if not os.path.exists(exe):
        return None
    r = subprocess.run([exe, "-c", "import os, sys, sysconfig; print(sys.prefix == sys.base_prefix and os.path.isfile("
                                   "os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"],
                       capture_output=True, text=True, timeout=60)
    return exe if r.stdout.strip() == "True" else None


def venv_without_pip(path: Path) -> tuple[Path, Path]:
    """A real venv without pip (fast) and its site-packages, where a test puts the dist-info directories the target's
    importlib.metadata then reads: (its python, the site directory)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=300)
    py = path / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    return py, site
