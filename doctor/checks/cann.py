"""CANN toolkit, kernels/ops, NNAL, driver and the set_env.sh environment."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from doctor.checks.cluster_facts import npu_less_skip
from doctor.checks.facts import (
    arch,
    cann,
    driver,
    env,
    env_known,
    env_unset,
    family,
    installed,
    npu_host,
    val,
    ver,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge import chips as chipmod
from doctor.knowledge.matrix import DRIVER_MINIMUM, DRIVER_RECOMMENDED, SRC_DRIVER
from doctor.knowledge.versions import CannVersion, DriverVersion
from doctor.report import Finding, finding
from doctor.snapshot.model import UNKNOWN, Snapshot, known

SRC_SET_ENV = ("https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py; "
               "https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst")
_TOOLKIT_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_TOOLKIT_LATEST_HOME")  # what the probe reads first
_INSTALL_CANN = "Install the CANN toolkit for this chip (e.g. Ascend-cann-toolkit_<ver>_linux-<arch>.run --install) and source its set_env.sh."


def _where_no_toolkit(snap: Snapshot) -> str:
    """Where the probe looked for a toolkit, from what the snapshot says: the Ascend root it found, or that none of
    the roots the probe reads (/usr/local/Ascend, $HOME/Ascend) exists, and the variables that name a toolkit.
    "the Ascend root" alone names no directory an operator could list."""
    asc = snap.ascend
    root = getattr(asc, "root", UNKNOWN) if asc is not None and known(asc) else UNKNOWN
    if isinstance(root, str) and root:
        where = f"Neither ascend-toolkit/ nor cann-<ver>/ was found under {root}"
    elif root is None:
        where = "No Ascend directory exists (neither /usr/local/Ascend nor $HOME/Ascend)"
    else:
        where = "Neither ascend-toolkit/ nor cann-<ver>/ was found under the Ascend root"
    named = [f"${n}={v}" for n in _TOOLKIT_VARS if (v := env(snap, n))]
    return where + (f"; {', '.join(named)} holds none either" if named else "")


@check("cann-toolkit", "cann",
       findings=("cann-arch-mismatch", "cann-not-installed", "cann-outside-profile", "cann-version-unreadable"))
def cann_toolkit(ctx: CheckContext) -> Iterator[Finding]:
    """The CANN toolkit is installed and its version readable."""
    snap = ctx.snapshot
    asc = snap.ascend
    if not known(asc):
        skip("the snapshot has no Ascend facts")
    tk = snap.ascend_part("toolkit")
    if (asc is None or tk is None) and ctx.node and (why := npu_less_skip(snap)):
        skip(why)
    if asc is None or tk is None:
        yield finding(
            "cann-not-installed", "error", ("cann",), "No Ascend CANN toolkit found",
            detail=f"{_where_no_toolkit(snap)}; torch-npu cannot load libascendcl.so / libhccl.so without it.",
            evidence={"ascend_root": val(asc, "root")}, fix=_INSTALL_CANN,
            source="https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py; https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md")
        return
    if not known(tk):
        skip("the snapshot does not say whether a CANN toolkit is installed")
    v = tk.version  # a missing key is unknown; null (or garbage) is what the probe could not read
    if known(v) and (v is None or CannVersion.try_parse(v) is None):
        yield finding(
            "cann-version-unreadable", "warning", ("cann",), "The CANN toolkit version could not be read",
            detail="No version.info / ascend_toolkit_install.info gave a version; pairing rules are skipped.",
            evidence={"version": v, "path": val(tk, "path")},
            fix="Check <toolkit>/<arch>-linux/ascend_toolkit_install.info (key version=) or reinstall the toolkit.",
            source="https://github.com/verl-project/verl/blob/v0.9.0/.github/workflows/e2e_ascend.yml")
    tarch = val(tk, "arch")
    harch = arch(snap)
    if tarch and harch and tarch != harch:
        yield finding(
            "cann-arch-mismatch", "error", ("cann", "system"), f"CANN toolkit is built for {tarch}, the host is {harch}",
            evidence={"toolkit_arch": tarch, "host_arch": harch}, fix=f"Install the {harch} toolkit package.",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md")
    p = ctx.profile
    c = cann(snap)
    if p is not None and c is not None and not p.cann_matches(c[1]) and ctx.options.get("profile_forced"):
        yield finding(
            "cann-outside-profile", "warning", ("cann",),
            f"CANN {c[0]} is outside {p.name}'s range [{p.cann_min}, {p.cann_max})",
            evidence={"cann": c[0], "profile": p.name},
            fix=(f"Use a CANN in [{p.cann_min}, {p.cann_max})" if p.cann_unknown else f"Use CANN {p.cann_version}")
            + " for this stack, or drop --profile.",
            source=p.source)


@check("cann-set-env", "cann",
       findings=("cann-env-points-elsewhere", "cann-multiple-toolkits", "cann-set-env-not-sourced"))
def cann_set_env(ctx: CheckContext) -> Iterator[Finding]:
    """set_env.sh is sourced: ASCEND_HOME_PATH, ASCEND_OPP_PATH and the toolkit lib64 on LD_LIBRARY_PATH."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    tk = snap.ascend_part("toolkit")
    if tk is None:
        skip("no CANN toolkit (cann-toolkit reports it)")
    if not known(tk) and not npu_host(snap):
        skip("nothing says this is an Ascend host")
    missing = _set_env_missing(snap)
    home = env(snap, "ASCEND_HOME_PATH") or env(snap, "ASCEND_TOOLKIT_HOME")
    opp = env(snap, "ASCEND_OPP_PATH")
    if missing:
        script = _set_env_path(snap)
        yield finding(
            "cann-set-env-not-sourced", "error", ("env", "cann"), "CANN set_env.sh is not sourced in this environment",
            detail="Missing: " + ", ".join(missing) + ". torch_npu then fails with `libhccl.so: cannot open shared "
                   "object file` / `Please run 'source set_env.sh' in the CANN installation path`.",
            evidence={"missing": missing, "ASCEND_HOME_PATH": home, "ASCEND_OPP_PATH": opp},
            fix=f"source {script} (add it to your shell profile or the job's launch script).", source=SRC_SET_ENV)
        return
    # several toolkits: the env must point at the one the probe found active
    tks = snap.ascend_part("toolkits")
    if isinstance(tks, list) and len(tks) > 1 and home:
        versions = [t.version for t in tks if known(t.version) and t.version]
        named = [v for v in versions if _names_version(home, v)]
        active = val(tk, "version")
        if named and active and active not in named:
            yield finding(
                "cann-env-points-elsewhere", "warning", ("env", "cann"),
                f"ASCEND_HOME_PATH points at CANN {named[0]}, but the active toolkit is {active}",
                detail=f"{len(tks)} toolkits are installed ({', '.join(versions)}); mixing one toolkit's libraries with "
                       "another's kernels or headers fails at op load or JIT compile time.",
                evidence={"ASCEND_HOME_PATH": home, "toolkits": versions, "active": active},
                fix=f"source the set_env.sh of the toolkit you mean to use ({_set_env_path(snap)}) in a fresh shell.",
                source=SRC_SET_ENV)
        elif len(versions) > 1:
            yield finding(
                "cann-multiple-toolkits", "info", ("cann",), f"{len(tks)} CANN toolkits are installed",
                evidence={"toolkits": versions, "ASCEND_HOME_PATH": home},
                source="https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/utils/collect_env.py")


def _set_env_missing(snap: Snapshot) -> list[str]:
    """What set_env.sh would have set and the snapshot says is not set. A variable a partial snapshot does
    not list is unknown, so it is never reported missing (snapshot rule 6)."""
    home = env(snap, "ASCEND_HOME_PATH") or env(snap, "ASCEND_TOOLKIT_HOME")
    missing = []
    if not home and env_unset(snap, "ASCEND_HOME_PATH") and env_unset(snap, "ASCEND_TOOLKIT_HOME"):
        missing.append("ASCEND_HOME_PATH")
    if env_unset(snap, "ASCEND_OPP_PATH"):
        missing.append("ASCEND_OPP_PATH")
    ld = env(snap, "LD_LIBRARY_PATH")
    if ld is None and not env_unset(snap, "LD_LIBRARY_PATH"):
        return missing  # LD_LIBRARY_PATH unknown
    ld_parts = [x.rstrip("/") for x in (ld or "").split(":") if x]
    if home and not any(x.startswith(home.rstrip("/")) and x.endswith("lib64") for x in ld_parts):
        missing.append(f"LD_LIBRARY_PATH entry {home.rstrip('/')}/lib64")
    elif not home and not any(re.search(r"/(ascend-toolkit|cann)[^:]*/lib64$", x) for x in ld_parts):
        missing.append("LD_LIBRARY_PATH entry <toolkit>/lib64")
    return missing


def _names_version(path: str, version: str) -> bool:
    return re.search(rf"(^|[/-]){re.escape(version)}(/|$)", path, re.I) is not None


def _toolkit_path(snap: Snapshot) -> str | None:
    tk = snap.ascend_part("toolkit")
    path = val(tk, "path") if known(tk) and tk is not None else None
    return path if isinstance(path, str) and path.startswith("/") else None


def _ascend_prefix(snap: Snapshot) -> str:
    """The install prefix of the toolkit the snapshot found (`<prefix>/ascend-toolkit/<ver>` or
    `<prefix>/cann-<ver>`: `--install-path`, $HOME/Ascend for a non-root install); /usr/local/Ascend when unknown."""
    path = _toolkit_path(snap)
    if path is not None:
        m = re.match(r"^(/.*?)/(?:ascend-toolkit/[^/]+|cann-[^/]+)/?$", path)
        if m:
            return m.group(1)
    return "/usr/local/Ascend"


def _set_env_path(snap: Snapshot) -> str:
    c = cann(snap)
    prefix = _ascend_prefix(snap)
    path = _toolkit_path(snap) or ""
    if "/ascend-toolkit/" in path:  # the old layout, whatever the version says
        return f"{prefix}/ascend-toolkit/set_env.sh"
    if "/cann-" in path or (c is not None and c[1] >= CannVersion("8.5.0")):
        return f"{prefix}/cann/set_env.sh (or {prefix}/ascend-toolkit/set_env.sh)"
    return f"{prefix}/ascend-toolkit/set_env.sh"


def _nnal_set_env(snap: Snapshot) -> str:
    """NNAL's set_env.sh: beside the ATB the snapshot found, else under the toolkit's prefix."""
    n = snap.ascend_part("nnal")
    path = val(n, "path") if known(n) and n is not None else None
    if isinstance(path, str) and path.startswith("/") and path.rstrip("/").endswith("/nnal/atb"):
        return f"{path.rstrip('/')}/set_env.sh"
    return f"{_ascend_prefix(snap)}/nnal/atb/set_env.sh"


@check("cann-kernels", "cann",
       findings=("cann-kernels-missing", "cann-kernels-version-mismatch", "cann-kernels-wrong-soc"))
def cann_kernels(ctx: CheckContext) -> Iterator[Finding]:
    """The op-kernel (ops) package for this chip is installed and matches the toolkit."""
    snap = ctx.snapshot
    tk = snap.ascend_part("toolkit")
    k = snap.ascend_part("kernels")
    if not known(k):
        skip("the snapshot does not say whether the kernels package is installed")
    c = cann(snap)
    fam = family(snap)
    pkg = _kernels_package(fam, c[1] if c else None)
    if k is not None:
        # The SOC the binaries were built for against the chip: needs no toolkit fact.
        yield from _kernels_soc(k, fam, pkg)
    if not known(tk) or tk is None:
        # without a toolkit neither "kernels missing" nor a version mismatch can be told: not a pass
        skip("no CANN toolkit in the snapshot: nothing to match the kernels package against")
    if k is None:
        yield finding(
            "cann-kernels-missing", "error", ("kernels", "cann"), "The CANN kernels (ops) package is not installed",
            detail="Only the toolkit is installed; aclnn operators have no precompiled binaries, e.g. `Op Cast does "
                   "not has any binary ... errno:561000`.",
            evidence={"cann": c[0] if c else None, "chip": fam},
            fix=f"Install {pkg} matching the toolkit version and chip.",
            source="https://github.com/hiyouga/LlamaFactory/issues/3796; https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md; "
                   "https://github.com/vllm-project/vllm-ascend/blob/v0.18.0/docs/source/installation.md")
        return
    kv = val(k, "version")
    kc = CannVersion.try_parse(kv) if isinstance(kv, str) else None
    if c is not None and kc is not None and not kc.is_ambiguous_against(c[1]) and kc != c[1]:
        yield finding(
            "cann-kernels-version-mismatch", "warning", ("kernels", "cann"),
            f"Kernels package {kv} does not match toolkit {c[0]}",
            evidence={"kernels": kv, "cann": c[0]}, fix=f"Install the {c[0]} kernels/ops package for this chip.",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md")


def _kernels_soc(k: Any, fam: Any, pkg: str) -> Iterator[Finding]:
    """The kernels package's SOC belongs to another chip family than the devices'."""
    soc = val(k, "soc")
    kfam = chipmod.soc_family(soc) if soc else None
    if soc and kfam is None and isinstance(soc, str):
        low = soc.lower()
        kfam = "A3" if ("a3" in low or "910_93" in low) else "A2" if "910b" in low else None
    if kfam and known(fam) and fam and kfam != fam:
        yield finding(
            "cann-kernels-wrong-soc", "error", ("kernels", "npu"), f"The kernels package is built for {soc}, the chip is {fam}",
            detail="Kernel binaries for another SOC do not load: `the socversion ... of bin package does not match the "
                   "current device socverison`.",
            evidence={"kernels_soc": soc, "chip_family": fam}, fix=f"Install {pkg}.",
            source="https://github.com/vllm-project/vllm-ascend/issues/6676; https://github.com/vllm-project/vllm-ascend/blob/v0.18.0/docs/source/installation.md")


def _kernels_package(fam: str | None, c: CannVersion | None) -> str:
    new = c is not None and c >= CannVersion("8.5.0")
    tag = {"A2": "910b", "A3": "A3", "310P": "310p", "950": "950"}.get(fam or "", "<chip>")
    if new:
        return f"Ascend-cann-{tag}-ops_<ver>_linux-<arch>.run"
    if fam == "A3":
        return "Atlas-A3-cann-kernels_<ver>_linux-<arch>.run"
    return f"Ascend-cann-kernels-{tag}_<ver>_linux-<arch>.run"


@check("cann-nnal", "cann",
       findings=("cann-nnal-missing", "cann-nnal-not-sourced", "cann-nnal-version-mismatch"))
def cann_nnal(ctx: CheckContext) -> Iterator[Finding]:
    """NNAL/ATB is installed (vllm-ascend and torch-npu's ATB ops link libatb.so) and matches the toolkit."""
    snap = ctx.snapshot
    n = snap.ascend_part("nnal")
    if not known(n):
        skip("the snapshot does not say whether NNAL is installed")
    c = cann(snap)
    if n is None:
        va, tn = installed(snap, "vllm-ascend"), installed(snap, "torch-npu")
        if not (va or tn) and not val(snap.ascend, "toolkit"):
            skip("no CANN toolkit and nothing that links NNAL (vllm-ascend, torch-npu) in the snapshot")
        if not (va or tn):
            if ctx.profile is not None and ctx.profile.nnal and val(snap.ascend, "toolkit"):
                yield finding(
                    "cann-nnal-missing", "warning", ("nnal", "cann"), "CANN NNAL (ATB) is not installed",
                    detail=f"{ctx.profile.name} installs NNAL next to the toolkit; vllm-ascend needs it.",
                    evidence={"cann": c[0] if c else None}, fix="Install Ascend-cann-nnal_<ver>_linux-<arch>.run for the toolkit version.",
                    source=ctx.profile.source)
            return
        sev = "error" if va or _torch_npu_dev(ver(snap, "torch-npu")) else "warning"
        yield finding(
            "cann-nnal-missing", sev, ("nnal", "cann"), "CANN NNAL (ATB) is not installed",
            detail="torch-npu builds used by vllm-ascend link libatb.so from NNAL; without it `import torch_npu` fails "
                   "with `libatb.so: cannot open shared object file` and vLLM reports `Failed to infer device type`.",
            evidence={"cann": c[0] if c else None, "vllm-ascend": ver(snap, "vllm-ascend"), "torch-npu": ver(snap, "torch-npu")},
            fix="Install Ascend-cann-nnal_<ver>_linux-<arch>.run matching the toolkit, then "
                f"`source {_nnal_set_env(snap)}`.",
            source="https://github.com/vllm-project/vllm-ascend/issues/130; https://github.com/vllm-project/vllm-ascend/issues/2727; https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/docs/source/faqs.md")
        return
    nv = val(n, "version")
    nc = CannVersion.try_parse(nv) if isinstance(nv, str) else None
    if c is not None and nc is not None and not nc.is_ambiguous_against(c[1]) and nc != c[1]:
        yield finding(
            "cann-nnal-version-mismatch", "warning", ("nnal", "cann"), f"NNAL {nv} does not match toolkit {c[0]}",
            detail="ATB built for another CANN fails with undefined symbols in libtbe_adapter.so / libatb.so.",
            evidence={"nnal": nv, "cann": c[0]}, fix=f"Install NNAL {c[0]}.",
            source="https://github.com/Ascend/pytorch/issues/99")
    if installed(snap, "vllm-ascend") and env_unset(snap, "ATB_HOME_PATH"):
        yield finding(
            "cann-nnal-not-sourced", "warning", ("env", "nnal"), "NNAL's set_env.sh is not sourced",
            detail="ATB_HOME_PATH is unset, so libatb.so is not on LD_LIBRARY_PATH for vllm-ascend.",
            evidence={"ATB_HOME_PATH": None}, fix=f"source {_nnal_set_env(snap)}",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md; https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst")


def _torch_npu_dev(v: str | None) -> bool:
    return bool(v) and ".dev" in str(v)


@check("driver-firmware", "cann", findings=("driver-firmware-incompatible",))
def driver_firmware(ctx: CheckContext) -> Iterator[Finding]:
    """The installed firmware and driver accept each other, by the lists each declares and the driver's own rule
    (doctor/knowledge/hdk_compat.py)."""
    snap = ctx.snapshot
    drv, fw = snap.ascend_part("driver"), snap.ascend_part("firmware")
    fw_list = _extra(drv, "compatible_version_fw")
    if not fw_list:
        skip("the driver's version.info (its compatible_version_fw list) is not in the snapshot")
    fv, dv = val(fw, "version"), val(drv, "version")
    if not isinstance(fv, str) or not fv:
        skip("the firmware version is not known")
    from doctor.knowledge import hdk_compat  # the driver's rule: only for a host whose versions it can judge

    drv_list = _extra(fw, "compatible_version_drv")
    verdict = hdk_compat.compatible(fv, dv if isinstance(dv, str) else None, fw_list, drv_list)
    if verdict is not False:
        return
    yield finding(
        "driver-firmware-incompatible", "error", ("firmware", "driver", "npu"),
        f"NPU firmware {fv} and driver {dv} do not accept each other",
        detail=(f"The driver accepts firmware {fw_list} (its version.info) and the firmware accepts drivers "
                f"{drv_list or 'unknown'}; neither list holds the other"
                if fv >= hdk_compat.FIRST_COMPATIBLE_FW else
                f"The driver treats firmware older than {hdk_compat.FIRST_COMPATIBLE_FW.rstrip('.')} as incompatible")
               + " (the rule npu-smi's compatibility status comes from): devices fail to start or run with errors.",
        evidence={"firmware": fv, "driver": dv, "compatible_version_fw": fw_list, "compatible_version_drv": drv_list},
        fix="Install the firmware package of the same Ascend HDK release as the driver (Ascend-hdk-*-npu-firmware_*.run, "
            "then reboot), or the driver that matches this firmware.",
        source=hdk_compat.SOURCE)


def _extra(component: Any, key: str) -> str | None:
    """A key of a driver / firmware fact the model keeps in `extra` (their version.info lines)."""
    v = getattr(component, "extra", {}).get(key) if known(component) and component is not None else None
    return v if isinstance(v, str) and v.strip() else None


@check("cann-driver", "cann", findings=("driver-below-recommended", "driver-missing", "driver-too-old"))
def cann_driver(ctx: CheckContext) -> Iterator[Finding]:
    """The NPU driver (HDK) is present and new enough for the toolkit."""
    snap = ctx.snapshot
    d = snap.ascend_part("driver")
    c = cann(snap)
    if d is None and known(snap.ascend) and snap.ascend is not None and val(snap.ascend, "toolkit"):
        in_ct = val(snap.host, "in_container")
        yield finding(
            "driver-missing", "error", ("driver", "npu"),
            "The NPU driver is not visible" + (" inside this container" if in_ct else ""),
            detail="No /usr/local/Ascend/driver/version.info: without the driver libraries (libascend_hal.so) nothing "
                   "can open a device." + (" Containers must mount the host driver." if in_ct else ""),
            evidence={"in_container": in_ct},
            fix=("Start the container with -v /usr/local/Ascend/driver:/usr/local/Ascend/driver (and the device nodes), "
                 "or use the Ascend Docker Runtime." if in_ct else "Install the Ascend HDK driver and firmware for this chip."),
            source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/dockerfile_build_guidance.rst; https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md")
        return
    dr = driver(snap)
    if dr is None or c is None:
        skip("the driver or the CANN version is unknown")
    dv = dr[1]
    need = None
    for cmin, dmin in DRIVER_MINIMUM:
        cm = CannVersion(cmin)
        if c[1].is_ambiguous_against(cm):
            continue
        if c[1] >= cm:
            need = dmin
    if need is not None:
        nd = DriverVersion(need)
        if not dv.is_ambiguous_against(nd) and dv < nd:
            yield finding(
                "driver-too-old", "error", ("driver", "cann", "firmware"),
                f"Driver {dr[0]} is older than CANN {c[0]} needs ({need} or newer)",
                detail="A CANN newer than its driver fails at device open or hangs (e.g. plog 'watchdog timeout').",
                evidence={"driver": dr[0], "cann": c[0], "driver_min": need},
                fix=f"Upgrade the Ascend HDK driver and firmware to {need} or newer (or use a CANN that matches the driver).",
                source=SRC_DRIVER + "; https://github.com/vllm-project/vllm-ascend/issues/5468")
            return
    rec, why = None, ""
    for cmin, dmin, src in DRIVER_RECOMMENDED:
        cm = CannVersion(cmin)
        if not c[1].is_ambiguous_against(cm) and c[1] >= cm:
            rec, why = dmin, src
    p = ctx.profile
    if p is not None and p.driver_min and p.cann_matches(c[1]):
        rec, why = p.driver_min, p.source
    if rec is not None:
        rd = DriverVersion(rec)
        if not dv.is_ambiguous_against(rd) and dv < rd:
            yield finding(
                "driver-below-recommended", "warning", ("driver", "cann"),
                f"Driver {dr[0]} is older than the {rec} documented for CANN {c[0]}",
                evidence={"driver": dr[0], "cann": c[0], "recommended": rec},
                fix=f"Upgrade the Ascend HDK driver and firmware to {rec}.", source=why)
