"""torch and torch-npu: the base-version ABI pin, CUDA builds on an NPU host, torchvision, the torch-npu <-> CANN
pairing, and the SoC names torch_npu accepts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from doctor.checks.commands import install_dry_run
from doctor.checks.facts import absent, arch, cann, family, installed, module, npu_host, pver, val, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.chips import family_from_name
from doctor.knowledge.matrix import (
    SRC_PT_COMPAT,
    SRC_TORCHVISION,
    TORCH_NPU_CANN_DOCUMENTED,
    VLLM_ASCEND,
    newest_torch_npu,
    torch_npu_cann,
    torch_npu_row,
    torchvision_for_torch,
)
from doctor.knowledge.profiles import PYTORCH_CPU_INDEX
from doctor.knowledge.releases import knowledge_fix
from doctor.knowledge.versions import CannVersion, parse_pkg_version, release
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot, known

if TYPE_CHECKING:
    from doctor.knowledge.torch_npu_socs import SocRelease, SocTable

# The torch_npu wheel pins torch==X exactly (x86_64: torch==X+cpu), written by its setup.py.
SRC_PIN = "https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/setup.py; https://pypi.org/project/torch-npu/2.7.1/"


def _x86_torch_pin(snap: Snapshot, tn: str | None) -> tuple[str, str] | None:
    """What torch-npu `tn` requires of torch on x86_64 and where that was read: the installed distribution's own
    METADATA (a live snapshot), else the x86_64 wheels' declaration of the stated release in the requirements table
    (`machines`: its x86_64 wheels pin `torch==X+cpu` from 2.1.0.post3 to 2.11.0.post3, `torch==X` from 2.12.0rc1,
    where the aarch64 wheels pin `torch==X`). None when neither says: an unstated release, a local build
    (`2.9.0.post1+git4c901a4`: not PyPI's files), one the table does not hold or whose metadata names no torch."""
    from packaging.requirements import InvalidRequirement, Requirement

    pkg = (snap.packages or {}).get("torch-npu") if known(snap.packages) else None
    own = getattr(pkg, "requires_dist", None) if pkg is not None else None
    if known(own) and own is not None:
        lines, source = tuple(own), "torch-npu's METADATA"
    elif tn and "+" not in tn:
        from doctor.knowledge.requirements import declared

        row = declared("torch-npu", tn)
        python = val(snap.python, "version")
        d = row.on(python if isinstance(python, str) else None, "x86_64") if row is not None else None
        if d is None:
            return None
        lines, source = d.requires_dist, d.source_for(python if isinstance(python, str) else None, "x86_64")
    else:
        return None
    for line in lines:
        try:
            r = Requirement(line)
        except InvalidRequirement:
            continue
        if r.name.lower() == "torch" and (r.marker is None or "extra" not in str(r.marker)):
            return f"torch{r.specifier}", source
    return None


@check("torch-npu-installed", "torch_npu", findings=("torch-not-installed", "torch-npu-not-installed"))
def torch_npu_installed(ctx: CheckContext) -> Iterator[Finding]:
    """torch and torch-npu are installed on an NPU host, and torch wherever verl is (complete snapshots only): no verl
    release names torch in its Requires-Dist outside an extra, so pip installs verl without it, and `import verl`
    fails on its first module."""
    snap = ctx.snapshot
    npu = npu_host(snap)
    if not npu and not installed(snap, "verl"):
        skip("nothing says this is an Ascend host, and verl is not installed")
    if not snap.is_complete:
        skip("a partial snapshot cannot say a package is not installed")
    # the interpreter examined by its path: run with --python from a login node, "this Python environment" read as
    # the doctor's own
    exe = val(snap.python, "executable")
    where = exe if isinstance(exe, str) and exe else "this Python environment"
    for pkg in ("torch", "torch-npu") if npu else ("torch",):
        if absent(snap, pkg):
            pin = ctx.profile.pin(pkg) if ctx.profile else None
            yield finding(
                f"{pkg}-not-installed", "error", (pkg,), f"{pkg} is not installed in {where}",
                detail=("verl runs on Ascend through torch + torch-npu; nothing can reach the NPU without them." if npu
                        else f"verl {ver(snap, 'verl') or ''} imports torch as it loads (`import verl` fails: No module "
                             "named 'torch'), and no verl release requires torch outside an extra, so pip installed it "
                             "without. Install the torch of the stack this environment is for: torch-npu needs one exact "
                             "release (`doctor profiles`), on x86_64 the +cpu build from download.pytorch.org; a bare "
                             "`pip install torch` takes PyPI's CUDA build."),
                evidence={"python": exe},
                fix=f"Install {pkg}{pin or ''} (`doctor install` installs the verified stack).",
                commands=(install_dry_run(snap, ctx.profile),),
                source=SRC_PIN if npu else f"https://pypi.org/project/verl/{ver(snap, 'verl') or ''}")


@check("torch-torch-npu-base", "torch_npu", findings=("torch-npu-torch-mismatch",))
def torch_torch_npu_base(ctx: CheckContext) -> Iterator[Finding]:
    """torch-npu is built against one exact torch release: the major.minor.micro must match."""
    snap = ctx.snapshot
    t, n = pver(snap, "torch"), pver(snap, "torch-npu")
    if t is None or n is None:
        skip("torch's or torch-npu's version is not known")
    if release(t) != release(n):
        tb, nb = ".".join(map(str, release(t))), ".".join(map(str, release(n)))
        machine = arch(snap)
        # x86_64: the +cpu build from PyTorch's CPU index (PyPI's is the CUDA one); aarch64: PyPI's is the CPU build
        pip = (f"pip install --index-url {PYTORCH_CPU_INDEX} 'torch=={nb}+cpu'" if machine == "x86_64"
               else f"pip install 'torch=={nb}'" if machine == "aarch64" else None)
        yield finding(
            "torch-npu-torch-mismatch", "error", ("torch-npu", "torch"),
            f"torch {ver(snap, 'torch')} does not match torch-npu {ver(snap, 'torch-npu')}",
            detail=f"torch-npu {ver(snap, 'torch-npu')} is built for torch {nb}; with torch {tb} libtorch_npu.so fails "
                   "to load (`undefined symbol: _ZNK3c1010TensorImpl...`).",
            evidence={"torch": ver(snap, "torch"), "torch-npu": ver(snap, "torch-npu")},
            fix=f"Install torch=={nb}{'+cpu' if machine == 'x86_64' else ''} (or the torch-npu built for torch {tb}).",
            commands=(pip,) if pip else (),
            source=SRC_PIN + "; https://github.com/sgl-project/sglang/issues/28628")


def _torch_cuda(snap: Snapshot) -> Any:
    build = val(snap.module("torch"), "build") or {}
    return build.get("cuda") if isinstance(build, dict) else None


def cpu_build_finding(snap: Snapshot) -> str | None:
    """Which finding `torch-cuda-build` gives of the torch build on an Ascend host: `torch-cuda-build` (a CUDA or
    ROCm torch), `torch-not-cpu-build-x86` (x86_64, torch not the +cpu build), or None. The declared-requirements
    check asks it too: torch-npu's `torch==X+cpu` unmet by torch X is the same fact, said once, by the finding whose
    fix installs from the PyTorch CPU index (a PyPI pip line cannot: PyPI has no +cpu build)."""
    t = pver(snap, "torch")
    if ver(snap, "torch") is None or t is None or not npu_host(snap):
        return None
    local = t.local or ""
    if local.startswith("cu") or local.startswith("rocm") or _torch_cuda(snap):
        return "torch-cuda-build"
    if arch(snap) == "x86_64" and not local.startswith("cpu"):
        return "torch-not-cpu-build-x86"
    return None


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
    cuda = _torch_cuda(snap)
    nvidia = sorted(k for k in (snap.packages or {}) if k.startswith("nvidia-")) if known(snap.packages) else []
    # the CPU build of the release torch-npu is built for (torch-npu-torch-mismatch says when that is not torch's)
    n = pver(snap, "torch-npu")
    base = ".".join(map(str, release(n if n is not None else t))) if t is not None else None
    if cpu_build_finding(snap) == "torch-cuda-build":
        yield finding(
            "torch-cuda-build", "error", ("torch",), f"torch {tv} is a CUDA build on an Ascend host",
            detail="torch_npu refuses to load next to CUDA: `Two accelerators cannot be used at the same time in "
                   "PyTorch: npu and cuda`.",
            evidence={"torch": tv, "cuda": cuda or local},
            fix=(f"pip install --force-reinstall --index-url {PYTORCH_CPU_INDEX} torch=={base}" if base
                 else "Install the CPU build of torch."),
            source="https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/__init__.py")
        return
    if cpu_build_finding(snap) == "torch-not-cpu-build-x86":
        # what torch-npu's x86_64 wheel declares of torch; torch==X+cpu: `pip check` fails on this torch whatever it is
        tn = ver(snap, "torch-npu")
        declares = _x86_torch_pin(snap, tn)
        spec = SpecifierSet(declares[0][len("torch"):], prereleases=True) if declares is not None else SpecifierSet()
        pins_cpu = any(x.version.endswith("+cpu") for x in spec)
        sure = bool(nvidia) or pins_cpu
        who = f"torch-npu{' ' + tn if tn else ''} declares on x86_64 Requires-Dist {declares[0]} ({declares[1]})" \
            if declares is not None else ""
        if pins_cpu:
            pin = (f" {who}: pip check reports it unmet beside torch {tv}, and pip cannot install the two together "
                   "from PyPI (the +cpu build is only on the PyTorch CPU index).")
        elif declares is not None and t is not None and t in spec:
            pin = f" {who}, which this torch meets (pip check passes); the CPU build is still the one for an NPU host."
        else:
            pin = ""
        yield finding(
            "torch-not-cpu-build-x86", "error" if sure else "warning", ("torch", "system"),
            f"torch {tv} on x86_64 is not the +cpu build torch-npu requires",
            detail="On x86_64 the default PyPI torch is the CUDA build; torch-npu's x86_64 wheels (2.1.0.post3 to "
                   "2.11.x) pin torch==X+cpu from the PyTorch CPU index." + pin
                   + (f" CUDA runtime packages are installed: {', '.join(nvidia[:4])}." if nvidia else ""),
            evidence={"torch": tv, "arch": "x86_64", "nvidia_packages": nvidia[:10],
                      **({"torch-npu": tn, "declares": declares[0]} if declares is not None else {})},
            fix=f"pip install --force-reinstall --index-url {PYTORCH_CPU_INDEX} torch=={base}+cpu",
            source=SRC_PIN + "; https://github.com/vllm-project/vllm-ascend/issues/1411"
            + (f"; {declares[1]}" if declares is not None and declares[1].startswith("https://") else ""))


# PyPI's torchvision and torchaudio wheels for Linux x86_64 are CUDA builds: their version.py says `0.28.0+cu130`
# / `2.11.0+cu130` while the distribution is `0.28.0` / `2.11.0`, and their compiled libraries (torchvision/_C.so,
# torchaudio/lib/_torchaudio*.so) link libc10_cuda.so / libtorch_cuda.so, which only a CUDA torch ships. Beside a
# torch without CUDA (`2.13.0+cpu`: torch-npu's x86_64 pin, PyTorch's CPU index) they do not load:
# - torchvision from 0.17.0, whose _meta_registrations.py registers `torchvision::nms` unguarded (0.16.0's sit behind
#   `extension._has_ops()`): `import torchvision` raises `operator torchvision::nms does not exist`; before, only its
#   operators fail at their first call;
# - torchaudio: `_extension._load_lib` passes the loader's error on as-is ("raises the exception as-is", 2.1.0, 2.6.0,
#   2.11.0), so `import torchaudio` raises OSError `Could not load this library: .../_torchaudio...so`.
# Everything importing them fails too: vLLM 0.30.0's `from vllm import LLM` imports transformers' image_utils (which
# imports torchvision) and vllm/multimodal/audio.py (torchaudio). Read from the cp311 manylinux wheels of torchvision
# 0.15.2, 0.16.0, 0.17.0, 0.28.0 and torchaudio 2.1.0, 2.6.0, 2.11.0.
SRC_TORCH_EXT_CUDA = {
    "torchvision": ("https://github.com/pytorch/vision/blob/v0.17.0/torchvision/_meta_registrations.py; "
                    "https://github.com/pytorch/vision/blob/v0.28.0/torchvision/extension.py; "
                    "https://pypi.org/project/torchvision/0.28.0/#files"),
    "torchaudio": ("https://github.com/pytorch/audio/blob/v2.11.0/src/torchaudio/_extension/utils.py; "
                   "https://pypi.org/project/torchaudio/2.11.0/#files"),
}
_IMPORT_RAISES = {"torchvision": Version("0.17.0"), "torchaudio": Version("0")}


def _cuda_label(v: str | None) -> str | None:
    """'0.28.0+cu130' -> 'cu130': a version's CUDA build label, None for another (or no) label."""
    p = parse_pkg_version(v)
    local = (p.local or "") if p is not None else ""
    return local if re.fullmatch(r"cu\d+", local) else None


def _torch_without_cuda(snap: Snapshot) -> bool:
    """The installed torch is a build without CUDA: its version says `+cpu` (or `+rocm…` / `+xpu`), or the version
    file the probe read names no CUDA (torch.version.cuda is None)."""
    t = pver(snap, "torch")
    local = (t.local or "") if t is not None else ""
    if local == "cpu" or local.startswith(("rocm", "xpu")):
        return True
    build = val(module(snap, "torch"), "build")
    return isinstance(build, dict) and "cuda" in build and build["cuda"] is None


def _cuda_build_beside_cpu_torch(snap: Snapshot, name: str, fid: str) -> Iterator[Finding]:
    """`name` (torchvision, torchaudio) is a CUDA build, by its version file or its version, and torch has no CUDA."""
    vm = val(module(snap, name), "version")
    built = next((v for v in (vm if isinstance(vm, str) else None, ver(snap, name)) if _cuda_label(v)), None)
    if built is None or not _torch_without_cuda(snap):
        return
    raises = (v := pver(snap, name)) is not None and Version(v.public) >= _IMPORT_RAISES[name]
    t, lib = ver(snap, "torch"), ("torchvision/_C.so" if name == "torchvision" else "torchaudio/lib/_torchaudio*.so")
    fails = ("`import torchvision` fails with `RuntimeError: operator torchvision::nms does not exist` (from 0.17)"
             if name == "torchvision" else "`import torchaudio` fails with `OSError: Could not load this library`")
    yield finding(
        fid, "error" if raises else "warning", ((name, "torch") if name == "torchvision" else ("torch", "python")),
        f"{name} {built} is a CUDA build; torch {t} has no CUDA",
        detail=(f"{name}'s compiled library ({lib}) of the {_cuda_label(built)} build links libc10_cuda.so and "
                f"libtorch_cuda.so, which torch {t} does not ship, so it does not load. "
                + (f"{fails}, and so does every import that loads it (vLLM's `from vllm import LLM`, transformers' "
                   "image processors)." if raises else
                   "Its operators (nms, roi_align) then fail at their first call (`Couldn't load custom C++ ops`).")
                + f" PyPI's {name} wheels for Linux x86_64 are CUDA builds; the CPU build is `+cpu` on PyTorch's "
                "CPU index."),
        evidence={name: ver(snap, name), f"{name}_build": built, "torch": t},
        fix=f"pip install --force-reinstall --no-deps --index-url {PYTORCH_CPU_INDEX} "
            f"'{name}=={Version(built).public}{'' if arch(snap) not in (None, 'x86_64') else '+cpu'}'",
        source=SRC_TORCH_EXT_CUDA[name])


@check("torchaudio-build", "torch_npu", findings=("torchaudio-torch-mismatch",))
def torchaudio_build(ctx: CheckContext) -> Iterator[Finding]:
    """A CUDA build of torchaudio does not load beside a torch without CUDA."""
    if ver(ctx.snapshot, "torchaudio") is None or ver(ctx.snapshot, "torch") is None:
        skip("torchaudio's or torch's version is not known")
    yield from _cuda_build_beside_cpu_torch(ctx.snapshot, "torchaudio", "torchaudio-torch-mismatch")


@check("torchvision-pairing", "torch_npu", findings=("torchvision-torch-mismatch",))
def torchvision_pairing(ctx: CheckContext) -> Iterator[Finding]:
    """torchvision 0.(N+15) goes with torch 2.N, and a CUDA build of it does not load beside a torch without CUDA."""
    snap = ctx.snapshot
    tv, t = pver(snap, "torchvision"), ver(snap, "torch")
    want = torchvision_for_torch(t)
    if tv is None or want is None:
        skip("torchvision's or torch's version is not known")
    build = list(_cuda_build_beside_cpu_torch(snap, "torchvision", "torchvision-torch-mismatch"))
    if build:
        yield from build  # the build fails to load whatever its line: one finding, the certain cause
        return
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
    # a trainer's guide speaks for a stack without vllm-ascend: with it, its own release notes bind builds to CANNs
    trainers = installed(snap, "vllm-ascend") is not True
    if c[1].is_ambiguous_against(wc) or c[1] == wc or _documented_pairs(tn, c[1], family(snap), arch(snap), trainers):
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


def _documented_pairs(tn: str, c: CannVersion, fam: str | None, host_arch: str | None, trainers: bool) -> bool:
    """An upstream documents this torch-npu build with this CANN: a vllm-ascend release, on this host
    (VllmAscendRow.torch_npu_canns: its pin and the builds its matrix / release notes name, with its matrix's CANN or
    the CANN an alternative binds them to, on the chip family or arch it is for). vllm-ascend v0.13.0rc3 and
    v0.16.0rc1-v0.19.1rc1 run torch-npu 2.8.0.post2 / 2.9.0 on CANN 8.5.1, which Ascend/pytorch's own table, with no 8.5.1 row, pairs with 8.5.0; v0.18.0's
    hand-installed 2.9.0.post1+git4c901a4 is for CANN 8.5.1 and its 2.9.0.post2 for 9.0.0; the 310P images of
    v0.20.2rc1-v0.25.1rc1 run the release's pin on CANN 9.1.0-beta.1. Or, with `trainers` (no vllm-ascend installed,
    whose release notes bind its builds to CANNs: v0.23.0 gives 2.10.0.post2 with 9.0.1, LLaMA-Factory's images with
    9.1.0), a trainer's own Ascend install guide does (TORCH_NPU_CANN_DOCUMENTED: ms-swift, MindSpeed-RL,
    LLaMA-Factory). A pairing an upstream documents for its stack is
    not reported. Builds compare by public version (2.9.0.post1+gitdc51c2d is the x86 wheel of the same build)."""
    from doctor.knowledge.versions import parse_pkg_version

    got = parse_pkg_version(tn)
    if got is None:
        return False

    def same(b: str) -> bool:
        v = parse_pkg_version(b)
        return v is not None and v.public == got.public

    return (any(same(b) and c == CannVersion(x) for r in VLLM_ASCEND for b, x in r.torch_npu_canns(fam, host_arch))
            or (trainers and any(same(b) and c == CannVersion(x) for b, x, _, _ in TORCH_NPU_CANN_DOCUMENTED)))


def _device_socs(snap: Snapshot, table: SocTable) -> list[str]:
    """The SoC names of the host's devices as torch_npu reads them (ACL's SoC name), each once.

    A device's `soc` (npu-smi board info: Chip Type + Chip Name, or Chip Name + '_' + NPU Name) is ACL's spelling; it is
    judged when some torch_npu table has it or the chip family is recognised (a bare 'Ascend910' is neither: driver
    24.1 prints it for A3 chips). An npu-smi chip name ('310B4', '910B3') stands for 'Ascend' + name, CANN's naming,
    only when a torch_npu table has that exact name; any other chip name stays unjudged."""
    asc = snap.ascend
    if not known(asc) or asc is None or not known(asc.devices):
        return []
    out: list[str] = []
    for d in asc.devices:
        name: str | None = None
        if isinstance(d.soc, str) and d.soc.strip() and known(d.soc):
            s = table.canonical(d.soc.strip())
            if table.knows(s) or (s.lower().startswith("ascend") and family_from_name(s) is not None):
                name = s
        elif isinstance(d.chip, str) and d.chip.strip() and known(d.chip):
            c = d.chip.strip()
            s = table.canonical(c if c.lower().startswith("ascend") else "Ascend" + c)
            if table.has_name(s):
                name = s
        if name and name not in out:
            out.append(name)
    return out


def _raises(table_file: str, soc: str) -> str:
    return (f"torch_npu looks the SoC name ACL reports up in its own table ({table_file}) at device initialisation and "
            f"raises `RuntimeError: Unsupported soc version: {soc}` for a name it lacks.")


def _sources(*rows: SocRelease) -> str:
    """The table file at each row's tag, and the file that raises when it is another one (the 1.11.0 line)."""
    urls: list[str] = []
    for r in rows:
        for u in (r.source, f"{r.source.rsplit('/blob/', 1)[0]}/blob/{r.tag}/{r.raised_in}"):
            if u not in urls:
                urls.append(u)
    return "; ".join(urls)


@check("torch-npu-soc", "torch_npu", findings=("torch-npu-soc-unsupported",))
def torch_npu_soc(ctx: CheckContext) -> Iterator[Finding]:
    """torch_npu accepts only the SoC names its own table lists and raises on any other at device initialisation
    (profiles/torch-npu-socs.toml, read at every release tag). A stated release is judged by its row. A torch-npu named
    without its version is an error only when no release read (of its torch line, when torch's version is known)
    accepts the SoC, and a warning naming the releases that refuse it when some do and others do not."""
    snap = ctx.snapshot
    tn = ver(snap, "torch-npu")
    if tn is None and not installed(snap, "torch-npu"):
        skip("torch-npu is not installed, or not known to be")
    if not (known(snap.ascend) and snap.ascend is not None and known(snap.ascend.devices) and snap.ascend.devices):
        skip("the devices' SoC is not known")
    from doctor.knowledge.torch_npu_socs import load

    table = load()
    socs = _device_socs(snap, table)
    if not socs:
        skip("no device states a SoC name torch_npu's tables can judge")
    t = pver(snap, "torch")
    line = release(t) if t is not None else None
    for soc in socs:
        if tn is not None:
            v = table.verdict(tn, soc)
            if v is None or v.accepted:
                continue
            n = pver(snap, "torch-npu")
            same = table.accepting(soc, release(n)) if n is not None else []
            other = same or table.accepting(soc)
            fix = (f"Install torch-npu {same[-1].version} (the newest {'.'.join(map(str, same[-1].line))} release read "
                   f"that accepts {soc}), with the CANN it pairs with." if same else
                   f"Install a torch-npu whose table has {soc}: {other[-1].version} (with torch "
                   f"{'.'.join(map(str, other[-1].line))}) is the newest read." if other else
                   f"Run torch_npu on a device whose SoC its table lists: no release read accepts {soc}.")
            rows = v.rows
            yield finding(
                "torch-npu-soc-unsupported", "error", ("torch-npu", "npu"),
                f"torch-npu {tn} does not support this device's SoC, {soc}",
                detail=f"At device initialisation torch_npu looks the SoC name ACL reports up in its own table "
                       f"({table.table_file}); {soc} is not in the table of torch-npu "
                       f"{' and '.join(r.version for r in rows)} (tag {', '.join(r.tag for r in rows)}), so the first "
                       f"device call raises `RuntimeError: Unsupported soc version: {soc}`.",
                evidence={"soc": soc, "torch-npu": tn, "read_at": [r.tag for r in rows], "read": table.read},
                fix=fix, key=soc, source=_sources(*rows))
            continue
        rows_read = table.line_rows(line) if line is not None else list(table.releases)
        if not rows_read or (table.prerelease_accepts(soc, line) and not table.accepting(soc, line)):
            continue
        if table.accepting(soc, line):
            runs = table.refusing_runs(soc, line)
            if not runs:
                continue
            spans = ", ".join(a if a == b else f"{a} ... {b}" for a, b in runs)
            yield finding(
                "torch-npu-soc-unsupported", "warning", ("torch-npu", "npu"),
                f"some torch-npu releases do not support this device's SoC, {soc}, and the snapshot does not say "
                "which is installed",
                detail=f"{_raises(table.table_file, soc)} The table of torch-npu {spans} lacks {soc}; other releases "
                       f"read have it ({table.read}).",
                evidence={"soc": soc, "torch-npu": None, "torch": ver(snap, "torch"),
                          "refused_by": [list(r) for r in runs], "read": table.read},
                fix=f"Check the installed release (`pip show torch-npu`); if it is one of these, install a torch-npu "
                    f"whose table has {soc} ({table.accepting(soc, line)[-1].version} is the newest read).",
                key=soc, source=_sources(next(r for r in rows_read if r.version == runs[-1][1])))
            continue
        lname = f"torch-npu {'.'.join(map(str, line))} release" if line is not None else "torch-npu release"
        yield finding(
            "torch-npu-soc-unsupported", "error", ("torch-npu", "npu"),
            f"no {lname} read supports this device's SoC, {soc}",
            detail=f"{_raises(table.table_file, soc)} The snapshot names torch-npu without its version; none of the "
                   f"{len(rows_read)} releases read "
                   f"({rows_read[0].version} ... {rows_read[-1].version}, {table.read}) has {soc}.",
            evidence={"soc": soc, "torch-npu": None, "torch": ver(snap, "torch"), "releases_read": len(rows_read),
                      "newest_read": rows_read[-1].version, "read": table.read},
            fix=f"Run torch_npu on a device whose SoC its table lists (Atlas A2 / A3 / 300I: Ascend910B*, Ascend910_93*, "
                f"Ascend310P*), or check whether a torch-npu newer than {rows_read[-1].version} adds {soc}.",
            key=soc, source=_sources(rows_read[-1]))
