"""torch and torch-npu: the base-version ABI pin, CUDA builds on an NPU host, torchvision, and the
torch-npu <-> CANN pairing."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from doctor.checks.commands import install_dry_run
from doctor.checks.facts import absent, arch, cann, npu_host, pver, val, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.matrix import (
    SRC_PT_COMPAT,
    SRC_TORCHVISION,
    newest_torch_npu,
    torch_npu_cann,
    torch_npu_row,
    torchvision_for_torch,
)
from doctor.knowledge.releases import knowledge_fix
from doctor.knowledge.versions import CannVersion, release
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# The torch_npu wheel pins torch==X exactly (x86_64: torch==X+cpu), written by its setup.py.
SRC_PIN = "https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/setup.py; https://pypi.org/project/torch-npu/2.7.1/"


@check("torch-npu-installed", "torch_npu", findings=("torch-not-installed", "torch-npu-not-installed"))
def torch_npu_installed(ctx: CheckContext) -> Iterator[Finding]:
    """torch and torch-npu are installed on an NPU host (complete snapshots only)."""
    snap = ctx.snapshot
    if not npu_host(snap):
        skip("nothing says this is an Ascend host")
    if not snap.is_complete:
        skip("a partial snapshot cannot say a package is not installed")
    for pkg in ("torch", "torch-npu"):
        if absent(snap, pkg):
            pin = ctx.profile.pin(pkg) if ctx.profile else None
            yield finding(
                f"{pkg}-not-installed", "error", (pkg,), f"{pkg} is not installed in this Python environment",
                detail="verl runs on Ascend through torch + torch-npu; nothing can reach the NPU without them.",
                evidence={"python": val(snap.python, "executable")},
                fix=f"Install {pkg}{pin or ''} (`doctor install` installs the verified stack).",
                commands=(install_dry_run(snap, ctx.profile),), source=SRC_PIN)


@check("torch-torch-npu-base", "torch_npu", findings=("torch-npu-torch-mismatch",))
def torch_torch_npu_base(ctx: CheckContext) -> Iterator[Finding]:
    """torch-npu is built against one exact torch release: the major.minor.micro must match."""
    snap = ctx.snapshot
    t, n = pver(snap, "torch"), pver(snap, "torch-npu")
    if t is None or n is None:
        skip("torch's or torch-npu's version is not known")
    if release(t) != release(n):
        tb, nb = ".".join(map(str, release(t))), ".".join(map(str, release(n)))
        yield finding(
            "torch-npu-torch-mismatch", "error", ("torch-npu", "torch"),
            f"torch {ver(snap, 'torch')} does not match torch-npu {ver(snap, 'torch-npu')}",
            detail=f"torch-npu {ver(snap, 'torch-npu')} is built for torch {nb}; with torch {tb} libtorch_npu.so fails "
                   "to load (`undefined symbol: _ZNK3c1010TensorImpl...`).",
            evidence={"torch": ver(snap, "torch"), "torch-npu": ver(snap, "torch-npu")},
            fix=f"Install torch=={nb}{'+cpu' if arch(snap) == 'x86_64' else ''} (or the torch-npu built for torch {tb}).",
            source=SRC_PIN + "; https://github.com/sgl-project/sglang/issues/28628")


@check("torch-cuda-build", "torch_npu", findings=("torch-cuda-build", "torch-not-cpu-build-x86"))
def torch_cuda_build(ctx: CheckContext) -> Iterator[Finding]:
    """No CUDA torch on an NPU host; on x86 the torch build must be the +cpu one."""
    snap = ctx.snapshot
    tv = ver(snap, "torch")
    if tv is None:
        skip("torch's version is not known")
    if not npu_host(snap):
        skip("nothing says this is an Ascend host")
    t = pver(snap, "torch")
    local = (t.local or "") if t is not None else ""
    tmod = snap.module("torch")
    build = val(tmod, "build") or {}
    cuda = build.get("cuda") if isinstance(build, dict) else None
    nvidia = sorted(k for k in (snap.packages or {}) if k.startswith("nvidia-")) if known(snap.packages) else []
    if local.startswith("cu") or local.startswith("rocm") or cuda:
        yield finding(
            "torch-cuda-build", "error", ("torch",), f"torch {tv} is a CUDA build on an Ascend host",
            detail="torch_npu refuses to load next to CUDA: `Two accelerators cannot be used at the same time in "
                   "PyTorch: npu and cuda`.",
            evidence={"torch": tv, "cuda": cuda or local},
            fix=("pip install --force-reinstall --index-url https://download.pytorch.org/whl/cpu torch=="
                 f"{'.'.join(map(str, release(t)))}" if t else "Install the CPU build of torch."),
            source="https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py")
        return
    if arch(snap) == "x86_64" and t is not None and not local.startswith("cpu"):
        sure = bool(nvidia)
        yield finding(
            "torch-not-cpu-build-x86", "error" if sure else "warning", ("torch", "system"),
            f"torch {tv} on x86_64 is not the +cpu build torch-npu requires",
            detail="On x86_64 the default PyPI torch is the CUDA build; torch-npu's wheel pins torch==X+cpu from the "
                   "PyTorch CPU index." + (f" CUDA runtime packages are installed: {', '.join(nvidia[:4])}." if nvidia else ""),
            evidence={"torch": tv, "arch": "x86_64", "nvidia_packages": nvidia[:10]},
            fix=f"pip install --force-reinstall --index-url https://download.pytorch.org/whl/cpu torch=={'.'.join(map(str, release(t)))}+cpu",
            source=SRC_PIN + "; https://github.com/vllm-project/vllm-ascend/issues/1411")


@check("torchvision-pairing", "torch_npu", findings=("torchvision-torch-mismatch",))
def torchvision_pairing(ctx: CheckContext) -> Iterator[Finding]:
    """torchvision 0.(N+15) goes with torch 2.N."""
    snap = ctx.snapshot
    tv, t = pver(snap, "torchvision"), ver(snap, "torch")
    want = torchvision_for_torch(t)
    if tv is None or want is None:
        skip("torchvision's or torch's version is not known")
    if f"{tv.major}.{tv.minor}" != want:
        yield finding(
            "torchvision-torch-mismatch", "warning", ("torchvision", "torch"),
            f"torchvision {ver(snap, 'torchvision')} does not belong to torch {t}",
            detail=f"torch {t} pairs with torchvision {want}.x; a mismatched torchvision fails on its compiled ops "
                   "(`operator torchvision::nms does not exist`).",
            evidence={"torchvision": ver(snap, "torchvision"), "torch": t},
            fix=f"pip install torchvision=={want}.* --no-deps", source=SRC_TORCHVISION)


@check("torch-npu-cann", "torch_npu",
       findings=("torch-npu-cann-pairing", "torch-npu-dev-build", "torch-npu-newer-than-known"))
def torch_npu_cann_pairing(ctx: CheckContext) -> Iterator[Finding]:
    """torch-npu is built and tested for one CANN release (a recommendation: tables disagree by source)."""
    snap = ctx.snapshot
    tn, c = ver(snap, "torch-npu"), cann(snap)
    if tn is None or c is None:
        skip("torch-npu's or CANN's version is not known")
    n = pver(snap, "torch-npu")
    if n is not None and n.is_devrelease:
        yield finding(
            "torch-npu-dev-build", "info", ("torch-npu",), f"torch-npu {tn} is a dev/POC build",
            detail="Dev builds come from Huawei's mirror, not PyPI, and are tied to the NNAL/ATB of their date.",
            evidence={"torch-npu": tn}, source="https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/docs/source/community/versioning_policy.md")
    want = torch_npu_cann(tn)
    if want is None:
        newest = newest_torch_npu()
        if n is not None and Version(n.public) > newest:
            yield finding(
                "torch-npu-newer-than-known", "info", ("torch-npu",),
                f"torch-npu {tn} is newer than the compatibility table the doctor knows (up to {newest})",
                evidence={"torch-npu": tn, "cann": c[0]}, fix=knowledge_fix(), source=SRC_PT_COMPAT)
        # not in the table: the pairing could not be judged (skipped, never a pass; what was found stands)
        skip(f"torch-npu {tn} is not in the compatibility table the doctor knows")
    wc = CannVersion(want)
    if c[1].is_ambiguous_against(wc) or c[1] == wc:
        return
    older = c[1] < wc
    yield finding(
        "torch-npu-cann-pairing", "warning", ("torch-npu", "cann"),
        f"torch-npu {tn} is built for CANN {want}, this host has CANN {c[0]}",
        detail=("torch-npu newer than the toolkit may call ACL functions the toolkit lacks ('Please upgrade CANN version')."
                if older else "This pairing is off Ascend/pytorch's compatibility table."),
        evidence={"torch-npu": tn, "cann": c[0], "expected_cann": want},
        fix=f"Use the torch-npu release listed for CANN {c[0]}, or CANN {want}.",
        source=row.source if (row := torch_npu_row(tn)) else SRC_PT_COMPAT)
