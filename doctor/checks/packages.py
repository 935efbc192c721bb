"""Python packages against the verified stack and against known-bad combinations: triton next to
triton-ascend, numpy 2 with old torch, transformers outside verl's window, CUDA-only packages."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from doctor.checks.declared import declared_rejects_pair
from doctor.checks.facts import (
    absent,
    cann,
    checkout_commit,
    devices,
    env,
    family,
    git_commit,
    installed,
    npu_host,
    npu_runtime,
    pver,
    py_version,
    unlisted_path_dirs,
    val,
    ver,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.known_bad import KNOWN_BAD
from doctor.knowledge.missing_api import MISSING_APIS
from doctor.knowledge.ownership import component_of_distribution
from doctor.knowledge.releases import release_for
from doctor.knowledge.versions import CannVersion, parse_pkg_version, pkg_satisfies
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot, known, normalize_name

if TYPE_CHECKING:
    from doctor.knowledge.import_surface import CallerRelease, Unmet

# Packages whose absence stops verl on NPU: reported by their own checks (torch_npu area), skipped here.
_OWN_CHECK = {"torch", "torch-npu"}


@check("profile-pins", "packages", findings=("package-missing", "package-off-profile"))
def profile_pins(ctx: CheckContext) -> Iterator[Finding]:
    """Every package the verified stack pins is installed at a version the pin allows."""
    snap, p = ctx.snapshot, ctx.profile
    if p is None:
        skip("no verified stack (profile) applies")
    # Without verl the pins are what `doctor install` would change, not a fault of what runs here (a vLLM Ascend
    # inference host, a LLaMA-Factory box, a host before its verl install): said as info, with the same fix.
    sev, why = ("warning", "") if ver(snap, "verl") is not None else (
        "info", " verl is not installed (or not stated): this is what installing that stack would change, not a fault "
                "of what runs here.")
    for name, spec in p.pins.items():
        v = ver(snap, name)
        if v is None:
            if absent(snap, name) and name not in _OWN_CHECK:
                yield finding(
                    "package-missing", sev, (_comp(name),), f"{name} is not installed ({p.name} pins {spec})",
                    detail=why.strip(),
                    evidence={"package": name, "profile": p.name, "pin": spec},
                    fix=_plan_fix(ctx, name), source=p.source)
            continue
        ok = pkg_satisfies(v, spec)
        if ok is False:
            yield finding(
                "package-off-profile", sev, (_comp(name),),
                f"{name} {v} is not the version {p.name} pins ({spec})",
                detail="Off the documented matrix: this combination was not tested upstream." + why,
                evidence={"package": name, name: v, "pin": spec, "profile": p.name},
                fix=_plan_fix(ctx, name), source=p.source)


def _plan_fix(ctx: CheckContext, name: str) -> str:
    """The command `doctor install`'s plan runs for this package (never a PyPI line that installs another build)."""
    from doctor.installers.fixline import plan_command  # only when a package is off its profile

    return plan_command(ctx.profile, ctx.snapshot, name)


_COMPS = {"torch", "torch-npu", "torchvision", "vllm", "vllm-ascend", "triton", "triton-ascend", "mindspeed", "mbridge",
          "transformer-engine", "verl", "transformers", "numpy", "ray"}


def _comp(name: str) -> str:
    if name in _COMPS:
        return name
    if name == "megatron-core":
        return "megatron"
    return "python"


@check("triton", "packages", findings=("triton-on-npu", "triton-with-triton-ascend"))
def triton(ctx: CheckContext) -> Iterator[Finding]:
    """Mainline triton and triton-ascend share the `triton` package directory: only triton-ascend may stay."""
    snap = ctx.snapshot
    t, ta = installed(snap, "triton"), installed(snap, "triton-ascend")
    if t is None and ta is None:
        skip("the snapshot does not say whether triton or triton-ascend is installed")
    if t and ta:
        yield finding(
            "triton-with-triton-ascend", "error", ("triton", "triton-ascend"),
            "triton and triton-ascend are both installed",
            detail="Both install the `triton` package; mainline triton (pulled in by vllm -> xgrammar on x86) overwrites "
                   "triton-ascend's files (triton/backends/compiler.py) and Ascend kernels fail to compile.",
            evidence={"triton": ver(snap, "triton"), "triton-ascend": ver(snap, "triton-ascend")},
            fix="pip uninstall -y triton triton-ascend && pip install --force-reinstall --no-deps triton-ascend"
                + (f"{ctx.profile.pin('triton-ascend')}" if ctx.profile and ctx.profile.pin("triton-ascend") else ""),
            source="https://github.com/triton-lang/triton-ascend/issues/306; https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/Dockerfile")
    elif t and npu_host(snap):
        yield finding(
            "triton-on-npu", "warning", ("triton",), "Mainline (CUDA) triton is installed on an Ascend host",
            detail="vLLM pulls it in on x86; it does not work on Ascend and shadows triton-ascend if that is added later.",
            evidence={"triton": ver(snap, "triton")}, fix="pip uninstall -y triton",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/Dockerfile")


@check("triton-ascend-release", "packages", findings=("triton-ascend-cann-pairing", "triton-ascend-chip-unsupported"))
def triton_ascend_release(ctx: CheckContext) -> Iterator[Finding]:
    """triton-ascend is cut per CANN release and compiles for the SoCs its CANN's bishengir-compile knows: the installed
    release (or, its version unknown, the one the installed vllm-ascend release pins) is documented for this host's CANN
    series and chip."""
    snap = ctx.snapshot
    ta, c, fam = ver(snap, "triton-ascend"), cann(snap), family(snap)
    va = ver(snap, "vllm-ascend") if ta is None and installed(snap, "triton-ascend") is not False else None
    if (ta is None and va is None) or (c is None and not fam):
        skip("triton-ascend's version (or the vllm-ascend release that pins it), or both the CANN version and the chip "
             "family, are not known")
    from doctor.knowledge.triton_ascend import triton_ascend_canns  # its table: only where it can judge

    yield from _triton_ascend_chip(snap, ta, va, c, fam)
    if ta is None:
        return
    doc = triton_ascend_canns(ta)
    if c is None or doc is None:
        return
    canns, sources = doc
    rcs = [x for x in (CannVersion.try_parse(s) for s in canns) if x is not None]
    if any(c[1].series == rc.series or c[1].is_ambiguous_against(rc) for rc in rcs):
        return
    # an error: the source binds them one to one ("强绑定 ... 一一对应"), not as a recommendation, and a release of
    # another CANN series fails in ways hard to place (3.2.0 on CANN 9.1.0, fixed by 3.2.2:
    # https://github.com/triton-lang/triton-ascend/issues/2018).
    # A CANN newer than every one the doctor knows has no documented triton-ascend yet: a warning there, as for any
    # version newer than the knowledge (never an error).
    from doctor.knowledge.matrix import newest_known_cann

    newer = c[1] > CannVersion(newest_known_cann())
    yield finding(
        "triton-ascend-cann-pairing", "warning" if newer else "error", ("triton-ascend", "cann"),
        f"triton-ascend {ta} is documented for CANN {' / '.join(canns)}, this host has CANN {c[0]}",
        detail="triton-ascend compiles kernels with the bisheng toolchain of the CANN it was released for; MindSpeed-LLM's "
               "release notes bind triton-ascend to CANN one to one (\"Triton-Ascend版本与CANN版本强绑定，Triton-Ascend的使用"
               "应该与CANN版本一一对应\"): a release of another CANN series is not a supported pair.",
        evidence={"triton-ascend": ta, "cann": c[0], "documented_cann": list(canns)},
        fix=f"Install the triton-ascend release paired with CANN {c[0]} (the stack's pin), or the CANN it is paired with.",
        source="; ".join(sources))


def _triton_ascend_chip(snap: Snapshot, ta: str | None, va: str | None, c: tuple[str, CannVersion] | None,
                        fam: str | None) -> Iterator[Finding]:
    """triton-ascend-chip-unsupported: the host's SoC is not a bishengir-compile target of the CANN the release is paired
    with (SoC rows), or its family is not in the release matrix (family rows); on 310P no release compiles at all."""
    from packaging.version import Version

    from doctor.knowledge.chips import GEN1
    from doctor.knowledge.matrix import VLLM_ASCEND
    from doctor.knowledge.triton_ascend import (
        NO_TRITON_FAMILIES,
        SRC_TA_TARGET,
        SRC_VA_310P,
        TRITON_ASCEND_CHIPS,
        soc_key,
        triton_ascend_chip_row,
    )

    pin = None
    if ta is None:
        pub = parse_pkg_version(va)
        pin = next((r for r in VLLM_ASCEND if pub is not None and r.triton_ascend
                    and Version(r.version) == Version(pub.public)), None)
    version = ta if pin is None else pin.triton_ascend
    row = triton_ascend_chip_row(version)
    if row is None:
        return
    keys: list[str] = []
    for d in devices(snap) or []:
        k = next((x for x in (soc_key(val(d, "soc")), soc_key(val(d, "chip"))) if x), None)
        if k and k not in keys:
            keys.append(k)
    no_triton = fam in NO_TRITON_FAMILIES or any(k.startswith("310p") for k in keys)
    # the SoC list is the bishengir-compile of the CANN the release is paired with: another CANN on the host has its own
    by_soc = row.socs is not None and bool(keys) and (c is None or ".".join(map(str, c[1].series)) == row.cann)
    bad = [k for k in keys if row.socs is not None and k not in row.socs] if by_soc else []
    # a first-generation Ascend 910 (npu-smi '910B' with 32 GB, '910ProB', PCI d801) names no SoC a target list could
    # hold, and no bishengir-compile release registers one (Options.td, `def Target`, at every commit the rows cite:
    # Atlas A2 / A3 / 950 SoCs only), whatever CANN is on the host
    gen1 = fam == GEN1 and not keys and row.socs is not None
    if not (no_triton or bad or gen1 or (not by_soc and row.families and fam and fam not in row.families)):
        return
    what = (f"the triton-ascend vllm-ascend {va} pins ({version})" if pin is not None else f"triton-ascend {ta}")
    names = [f"Ascend{k.upper()}" for k in (bad or keys)]
    host = " / ".join(names) if names else f"{fam} chips"
    if by_soc and bad:
        title = (f"{what} compiles for no {host} target: this SoC is not among the bishengir-compile targets of the CANN "
                 f"{row.cann} it is paired with")
    elif gen1:
        title = (f"{what} compiles for no first-generation Ascend 910: bishengir-compile has targets for Atlas A2 / A3 "
                 "(and 950) SoCs only")
    else:
        title = f"{what} does not support this host's {host}" + (
            "" if no_triton else f": its release matrix lists Atlas {' / '.join(row.families or ())}")
    others = [r.versions[0] for r in TRITON_ASCEND_CHIPS
              if r.socs and not r.inferred and bad and all(k in r.socs for k in bad)]
    detail = ("triton-ascend compiles every kernel with `bishengir-compile --target=<this device's SoC>` from the CANN "
              "it is paired with; a SoC it has no target for fails every Triton kernel (\"for the --target option: "
              "Cannot find option named ...\"): models and features built on Triton kernels (vllm-ascend's Qwen3-Next / "
              "Qwen3.5 linear attention, among others) fail, others run.")
    if not by_soc and not gen1:
        detail = ("Its release note's compatibility matrix names the hardware products it was released for; on another "
                  "chip family its Triton kernels are not supported (models and features built on them fail).")
    if no_triton:
        detail = ("No triton-ascend release compiles for the 310P: no bishengir-compile release has a 310P target, "
                  "vLLM Ascend documents triton / triton-ascend as not supported on the Atlas 300I DUO (installed, they "
                  "\"may cause unexpected issues\": its Triton code paths run and fail), and triton-ascend's maintainers "
                  "plan no 310P3 support.")
    if pin is not None:
        detail += (f" triton-ascend's version is not known: this judges the build vllm-ascend {va} pins ({pin.source}), "
                   "as if it is installed.")
    if row.inferred:
        detail += f" Inferred: {row.inferred}."
    if no_triton:
        fix = ("pip uninstall -y triton-ascend triton (vLLM Ascend runs the 310P without Triton: its 310P image removes "
               "both; remove a site-packages/triton directory left behind too).")
    elif others:
        fix = (f"Use triton-ascend {' / '.join(others)} with the CANN it is paired with (their bishengir-compile "
               f"targets {host}), e.g. the vllm-ascend release whose stack pins it.")
    elif gen1:
        fix = ("No triton-ascend release compiles for this chip: run Triton kernels on Atlas A2 / A3, or keep off the "
               "models and features built on them here.")
    else:
        fix = "Use the triton-ascend release (and CANN) documented for this chip, or run Triton kernels on Atlas A2 / A3."
    sources = [row.source] + ([SRC_TA_TARGET] if by_soc or gen1 else []) + ([SRC_VA_310P] if no_triton else []) + ([pin.source] if pin is not None else [])
    yield finding(
        "triton-ascend-chip-unsupported", "error" if no_triton and pin is None else "warning", ("triton-ascend", "npu"),
        title, detail=detail,
        evidence={"triton-ascend": ta or version, "stand_in_for_vllm_ascend": va if pin is not None else None,
                  "soc": names or None, "chip_family": fam,
                  "supported_socs": [f"Ascend{k.upper()}" for k in row.socs] if by_soc and row.socs else None,
                  "supported_families": list(row.families) if row.families else None, "inferred": row.inferred or None},
        fix=fix, source="; ".join(sources))

# CANN's Python dependencies as vllm-ascend's installation guide installs them ("pip3 install attrs 'numpy<2.0.0'
# decorator sympy ..."), up to v0.19.1rc1 (CANN 8.5.1); the commit that moved the guide to CANN 9.0.0 dropped the cap
# (fc5cbd6, v0.20.2rc1 installs plain `numpy`). The maintainers: "Currently, CANN can't support numpy >= 2.x"
# (torch_npu init fails with error 500001: https://github.com/vllm-project/vllm-ascend/pull/472), still so with CANN 8.2
# (the v0.10.0rc1 release checklist: https://github.com/vllm-project/vllm-ascend/issues/2210).
NUMPY2_CANN_FROM = CannVersion("9.0.0")
NUMPY2_CANN_SOURCE = ("https://github.com/vllm-project/vllm-ascend/blob/v0.19.1rc1/docs/source/installation.md; "
                      "https://github.com/vllm-project/vllm-ascend/commit/fc5cbd6effc40748676522309e608b908378be2c")
# CANN's own dependency list (the installation guide's "运行依赖列表"): numpy >= 1.19.2 and <= 1.24 at 8.3.RC1; at 8.5.0
# numpy < 2.0 with Python < 3.13 and numpy > 2.1 with Python >= 3.13 (the first CANN on Python 3.13). A toolkit whose
# version could not be read is one of these unless it is 9.0.0 or later: a warning, not numpy2-with-cann's error.
NUMPY2_CANN_DEPS_SOURCE = ("https://www.hiascend.com/document/detail/zh/canncommercial/83RC1/softwareinst/instg/"
                           "instg_0045.html; https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/"
                           "instg/instg_0045.html")


# vllm-ascend's own requirements.txt (its wheels' Requires-Dist) caps numpy<2.0.0 at every tag from v0.7.3 to
# v0.19.1rc1 and lists plain `numpy` from v0.20.2rc1 (the first release on CANN 9.0.0) on: read with git show at each
# tag. A known release is pip check's business (declared); a vllm-ascend named without its version can be either.
NUMPY2_VA_SOURCE = ("https://github.com/vllm-project/vllm-ascend/blob/v0.19.1rc1/requirements.txt; "
                    "https://github.com/vllm-project/vllm-ascend/blob/v0.20.2rc1/requirements.txt; "
                    "https://github.com/vllm-project/vllm-ascend/blob/v0.7.3/requirements.txt; "
                    "https://github.com/vllm-project/vllm-ascend/pull/472")


def _toolkit_version_unreadable(snap: Snapshot) -> bool:
    """A toolkit is installed and its version was looked for and not read (null or garbage); a missing key is unknown."""
    tk = snap.ascend_part("toolkit")
    if not known(tk) or tk is None or not known(tk.version):
        return False
    return tk.version is None or CannVersion.try_parse(tk.version) is None


def _python_313_or_later(snap: Snapshot) -> bool:
    v = py_version(snap)
    return v is not None and v.release[:2] >= (3, 13)


@check("numpy", "packages", findings=("numpy2-with-cann", "numpy2-with-vllm-ascend", "numpy2-with-cann-version-unknown",
                                      "numpy2-with-old-torch", "numpy2-with-verl"))
def numpy(ctx: CheckContext) -> Iterator[Finding]:
    """numpy 2 breaks torch wheels built against numpy 1.x and CANN before 9.0.0; the NPU stacks pin numpy<2."""
    snap = ctx.snapshot
    n, t = pver(snap, "numpy"), pver(snap, "torch")
    if n is None:
        skip("numpy's version is not known")
    if n.major < 2:
        return
    c = cann(snap)
    if (c is not None and c[1] < NUMPY2_CANN_FROM and not c[1].is_ambiguous_against(NUMPY2_CANN_FROM)
            and not _python_313_or_later(snap)):  # there CANN 8.5 lists numpy > 2.1 (NUMPY2_CANN_DEPS_SOURCE)
        yield finding(
            "numpy2-with-cann", "error", ("numpy", "cann"),
            f"numpy {ver(snap, 'numpy')} with CANN {c[0]}, whose Python dependencies need numpy<2.0.0",
            detail="CANN's operator compiler (te / tbe) runs in the training process with this interpreter's numpy; "
                   "the CANN installation steps install 'numpy<2.0.0' for every CANN before 9.0.0, and with numpy 2 "
                   "torch_npu's device init fails (error code 500001, 'The internal ACL of the system is incorrect').",
            evidence={"numpy": ver(snap, "numpy"), "cann": c[0], "requires": "numpy<2.0.0",
                      "from_cann": str(NUMPY2_CANN_FROM)},
            fix="pip install 'numpy<2.0.0' (e.g. numpy==1.26.4), or a CANN 9.0.0+ stack.",
            commands=("pip install 'numpy<2.0.0'",), source=f"{NUMPY2_CANN_SOURCE}; {NUMPY2_CANN_DEPS_SOURCE}")
    elif (c is None and _toolkit_version_unreadable(snap) and installed(snap, "vllm-ascend")
          and ver(snap, "vllm-ascend") is None):
        # neither side of the split is known: a warning (the releases from v0.20.2rc1 on, with CANN 9, accept numpy 2).
        # The CANN side must be stated as unreadable: a snapshot that does not state it may hold CANN 9.0.0 and a
        # vllm-ascend that accepts numpy 2 (an unknown fact is no finding)
        yield finding(
            "numpy2-with-vllm-ascend", "warning", ("numpy", "vllm-ascend"),
            f"numpy {ver(snap, 'numpy')} with a vllm-ascend whose release is not known: every release from v0.7.3 to "
            "v0.19.1rc1 requires numpy<2.0.0",
            detail="vllm-ascend's requirements cap numpy<2.0.0 from v0.7.3 to v0.19.1rc1 (the CANN 8.x releases: CANN's "
                   "operator compiler and torch_npu's device init fail with numpy 2, error 500001); from v0.20.2rc1 on "
                   "(CANN 9.0.0) they list plain numpy. The vllm-ascend release is not known here and the CANN "
                   "toolkit's version could not be read: unless both are the newer ones, numpy must be below 2.",
            evidence={"numpy": ver(snap, "numpy"), "requires": "numpy<2.0.0", "through": "0.19.1rc1",
                      "uncapped_from": "0.20.2rc1"},
            fix="pip install 'numpy<2.0.0' (e.g. numpy==1.26.4), unless this is vllm-ascend 0.20.2rc1 or later on "
                "CANN 9.0.0 or later.",
            commands=("pip install 'numpy<2.0.0'",), source=NUMPY2_VA_SOURCE)
    elif c is None and _toolkit_version_unreadable(snap) and not _python_313_or_later(snap):
        # a toolkit whose version the probe could not read: every CANN before 9.0.0 lists numpy<2 for Python < 3.13
        # (a snapshot that does not state the version says nothing about it: no finding)
        yield finding(
            "numpy2-with-cann-version-unknown", "warning", ("numpy", "cann"),
            f"numpy {ver(snap, 'numpy')} with a CANN toolkit whose version is not known: every CANN before 9.0.0 "
            "needs numpy<2.0 (with Python < 3.13)",
            detail="CANN's installation guide lists numpy >= 1.19.2 and < 2.0 (<= 1.24 at 8.3.RC1) among its Python "
                   "dependencies for every release before 9.0.0 unless Python is 3.13 or later; its operator compiler "
                   "(te / tbe) runs with this interpreter's numpy and fails under numpy 2 (`np.float_ was removed in "
                   "the NumPy 2.0 release`). The toolkit's version could not be read here, so whether it is 9.0.0 or "
                   "later is not known.",
            evidence={"numpy": ver(snap, "numpy"), "cann": None, "requires": "numpy<2.0.0",
                      "from_cann": str(NUMPY2_CANN_FROM)},
            fix="pip install 'numpy<2.0.0' (e.g. numpy==1.26.4) unless the toolkit is CANN 9.0.0 or later; "
                "cat <toolkit>/version.cfg (or ascend_toolkit_install.info) shows its version.",
            commands=("pip install 'numpy<2.0.0'",), source=NUMPY2_CANN_DEPS_SOURCE)
    if t is not None and t.release[:2] < (2, 3):
        yield finding(
            "numpy2-with-old-torch", "error", ("numpy", "torch"),
            f"numpy {ver(snap, 'numpy')} is too new for torch {ver(snap, 'torch')}",
            detail="torch 2.1/2.2 wheels (the builds older torch-npu pairs with) are compiled against NumPy 1.x and fail "
                   "with NumPy 2 (`A module that was compiled using NumPy 1.x cannot be run in NumPy 2`).",
            evidence={"numpy": ver(snap, "numpy"), "torch": ver(snap, "torch")}, fix="pip install 'numpy<2' (e.g. numpy==1.26.4)",
            source="https://github.com/hiyouga/LlamaFactory/pull/4382; https://github.com/Ascend/docs/issues/22")
        return
    pin = ctx.profile.pin("numpy") if ctx.profile else None
    if pin and pkg_satisfies(ver(snap, "numpy"), pin) is False:
        return  # reported as package-off-profile
    row = release_for(ver(snap, "verl"))
    if (row is not None and row.numpy and pkg_satisfies(ver(snap, "numpy"), row.numpy) is False
            and not declared_rejects_pair(ctx, "verl", "numpy")):
        yield finding(
            "numpy2-with-verl", "warning", ("numpy", "verl"),
            f"numpy {ver(snap, 'numpy')} with verl {ver(snap, 'verl')}, which requires numpy{row.numpy}",
            evidence={"numpy": ver(snap, "numpy"), "verl": ver(snap, "verl"), "requires": row.numpy},
            fix=f"pip install 'numpy{row.numpy}'", source=row.numpy_source)


@check("transformers-window", "packages", findings=("transformers-outside-verl-window",))
def transformers_window(ctx: CheckContext) -> Iterator[Finding]:
    """transformers inside the window the installed verl supports (its row of profiles/releases.toml)."""
    snap = ctx.snapshot
    verl, tr = ver(snap, "verl"), ver(snap, "transformers")
    row = release_for(verl)
    if row is None or tr is None or not row.transformers:
        skip("verl's or transformers' version, or verl's transformers window, is not known")
    spec = row.transformers
    if row.transformers_on == "npu" and npu_runtime(snap) is False:
        # verl imports what breaks only under `elif is_npu_available:` (0.4-0.5's npu_flash_attention): a host the
        # snapshot shows without an NPU runtime (no torch-npu in a complete list, no Ascend software, no device)
        # never runs it (a real CPU venv: verl 0.5.0's trainer and workers import beside transformers 4.57.6)
        skip(f"verl {verl}'s transformers window ({spec}) holds only on an Ascend NPU, and the snapshot shows none")
    if pkg_satisfies(tr, spec) is False and not declared_rejects_pair(ctx, "verl", "transformers"):
        yield finding(
            "transformers-outside-verl-window", "error", ("transformers", "verl"),
            f"transformers {tr} is outside what verl {verl} supports ({spec})",
            detail=(f"verl {verl} imports `index_first_axis` from `transformers.integrations.npu_flash_attention` "
                    f"on an Ascend NPU (under `elif is_npu_available:`), which transformers 4.56 moved: `cannot import "
                    f"name 'index_first_axis'` when its actor, critic or workers load." if row.transformers_on == "npu"
                    else f"The window comes from {row.transformers_source}: it is not a name verl {verl} imports at "
                         f"load (a missing one is package-imports-missing-name), so the import can succeed and what is "
                         f"not supported fails later, in the run."),
            evidence={"transformers": tr, "verl": verl, "supported": spec},
            fix=f"Install a transformers in verl {verl}'s window ({spec}), or upgrade verl to a release whose window "
                f"holds transformers {tr}.",
            commands=(f"pip install 'transformers{spec}'",), source=row.transformers_source)


@check("known-bad-release", "packages", findings=("package-known-bad-release",))
def known_bad_release(ctx: CheckContext) -> Iterator[Finding]:
    """An installed release that a public thread established as broken (doctor/knowledge/known_bad.py)."""
    snap = ctx.snapshot
    for row in KNOWN_BAD:
        v = ver(snap, row.package)
        if v is None or pkg_satisfies(v, row.spec) is not True or (row.npu_only and not npu_host(snap)):
            continue
        beside = ver(snap, row.with_package) if row.with_package else None
        # the other package installed without a stated release: only what holds for every release of it is said
        unknown = bool(row.with_package and beside is None and row.unknown_spec and installed(snap, row.with_package)
                       and pkg_satisfies(v, row.unknown_spec) is True)
        if row.with_package and not unknown and (
                beside is None or not any(pkg_satisfies(beside, s) is True for s in row.with_specs)):
            continue
        # a row bound to some Pythons: judged only where the snapshot states one of them (another could be fine)
        py = val(snap.python, "version") if row.python else None
        if row.python and not (isinstance(py, str) and py and pkg_satisfies(py, row.python) is True):
            continue
        use = row.install or row.fixed_in or row.instead
        fix = (f"Install {row.package} {row.install} (the first release with the fix that is not itself known to break "
               "here), or a later one paired with this torch and CANN." if row.install else
               f"Install {row.package} {row.fixed_in} (the release that fixed it), or a later one paired with this torch "
               "and CANN." if row.fixed_in else
               f"Install {row.package} {row.instead} (the release the upstream that hit it pins), or another release "
               "outside the broken one.") + (f" {row.fix_note}" if row.fix_note else "")
        command = f"pip install '{row.package}=={use}' --no-deps" if row.command is None else row.command
        with_ = (f" beside {row.with_package} {beside}" if beside else
                 f" beside {row.with_package} (version not known)" if unknown else "")
        detail = f"{row.package} {v}{with_}: {row.breaks}."
        if unknown:
            detail += (f" That holds for {row.with_package} {' or '.join(row.with_specs)}; {row.unknown_note}.")
        if row.python:
            detail += f" It breaks on Python {row.python}; this is Python {py}."
        yield finding(
            "package-known-bad-release", "warning" if unknown else row.severity, (row.component, *row.also),
            f"{row.package} {v} is a release known to break{with_}",
            detail=detail,
            evidence={"package": row.package, row.package: v, "bad": row.spec,
                      **({"python": py, "bad_on_python": row.python} if row.python else {}),
                      **({row.with_package: beside} if beside else {}),
                      **({"bad_with": {row.with_package: list(row.with_specs)}} if unknown else {})},
            fix=fix, commands=(command,) if command else (), source=row.source)


def _version_of(snap: Snapshot, name: str) -> str | None:
    """An installed distribution's version; Megatron-Core also from the probed megatron module (a git checkout on
    PYTHONPATH has no dist-info)."""
    if name == "megatron-core":
        m = snap.module("megatron")
        v = getattr(m, "version", None) if m else None
        if isinstance(v, str) and v:
            return v
    return ver(snap, name)


@check("missing-api", "packages", findings=("package-calls-missing-api",))
def missing_api(ctx: CheckContext) -> Iterator[Finding]:
    """A release that calls an API the installed release of another package lacks, removed since or not there yet
    (doctor/knowledge/missing_api.py)."""
    snap = ctx.snapshot
    for row in MISSING_APIS:
        caller, callee = ver(snap, row.package), _version_of(snap, row.needs)
        if callee is None or pkg_satisfies(callee, row.missing) is not True:
            continue
        if row.spec:
            if caller is None or pkg_satisfies(caller, row.spec) is not True:
                continue
        elif not installed(snap, row.package):
            continue
        comps = tuple(dict.fromkeys(c for c in (component_of_distribution(row.package),
                                                component_of_distribution(row.needs)) if c))
        who = f"{row.package} {caller}" if caller else row.package
        yield finding(
            "package-calls-missing-api", "error", comps or ("python",),
            f"{who} calls {row.api}, which {row.needs} {callee} does not have",
            detail=f"{row.package}{' ' + row.spec if row.spec else ''} calls {row.api}; {row.why}: {row.breaks}.",
            evidence={row.package: caller, row.needs: callee, "api": row.api, "missing_in": row.missing},
            fix=f"Install a {row.needs} release that has {row.api} alongside {row.package}, or a {row.package} release "
                "that no longer calls it.",
            source=row.source)


# The callers and callees profiles/import-surface/ was read for (tools/refresh_knowledge/import_surface.py):
# the table is loaded only when a callee's release and a caller are known (tests/knowledge/test_import_surface.py
# checks these agree with the table). A caller or callee installed from git is also matched by its commit.
IMPORT_CALLERS = ("mbridge", "verl", "mindspeed", "vllm-ascend", "trl", "peft", "vllm", "accelerate", "transformers")
IMPORT_CALLEES = ("megatron-core", "transformers", "vllm", "accelerate", "torchdata", "huggingface-hub",
                  "tensordict", "peft", "torch")
# A local label on these callers and callees is a build of the release's own files (vLLM built from source at a
# release on Ascend reports 0.9.1+empty, VLLM_TARGET_DEVICE=empty; torch's 2.5.1+cpu, 2.1.0+cu121 wheels hold the
# same Python files as 2.5.1, 2.1.0): judged as that release.
_LOCAL_IS_BUILD = frozenset({"vllm", "torch"})
# When a caller's entry modules run: vLLM imports vllm-ascend's through its plugin entry points (vllm serve, an
# LLM(...), verl's vLLM rollout), never a user's `import vllm_ascend`.
_LOADED_WHEN = {"vllm-ascend": "when vLLM loads the vllm-ascend plugin"}


def _from_index(snap: Snapshot, name: str) -> bool:
    """Installed from an index (a release's own files): the probe read no direct_url.json (PEP 610) for it, and it
    is not editable. Unknown (a stated report, an older snapshot) is not from an index."""
    p = snap.package(name)
    return val(p, "editable") is False and not val(p, "url")


def _nearest(versions: tuple[str, ...], installed: str) -> list[str]:
    """The final releases closest to `installed` on either side (the newest older one, the oldest newer one)."""
    from packaging.version import InvalidVersion, Version

    try:
        have = Version(installed)
        finals = sorted({Version(v) for v in versions if not Version(v).is_prerelease})
    except InvalidVersion:
        return []
    below, above = [v for v in finals if v < have], [v for v in finals if v > have]
    return [str(v) for v in (below[-1:] + above[:1])]


def _release_of(snap: Snapshot, name: str) -> str | None:
    """A caller's or callee's release: its version, without a local label where that label marks a build."""
    v = _version_of(snap, name)
    if not v or name not in _LOCAL_IS_BUILD:
        return v
    p = parse_pkg_version(v)
    return p.public if p is not None else v


def _import_line(module: str, name: str) -> str:
    """The statement (or, for an attribute path the module body reads, `.x.y`, the expression) that needs it."""
    return f"{module}{name}" if name.startswith(".") else f"from {module} import {name}" if name else f"import {module}"


def _raises(module: str, name: str) -> str:
    """The error the caller's load raises on a name the callee lacks."""
    if name.startswith("."):  # an attribute path read at load (`torch:.compiler.disable`)
        owner, _, last = f"{module}{name}".rpartition(".")
        return f"AttributeError: module '{owner}' has no attribute '{last}'"
    return f"ImportError: cannot import name '{name}' from '{module}'"


def _maybe_read(snap: Snapshot, caller: str, read: tuple[tuple[str, str], ...]) -> bool:
    """Whether the table can judge this caller: its version unknown (judged on what every release read imports),
    its commit or its version one that was read."""
    v, c = _release_of(snap, caller), (checkout_commit(snap, caller) or "").lower()
    if len(c) >= 7 and any(rc.lower().startswith(c) for _, rc in read):
        return True
    if not v:
        return not c
    want = parse_pkg_version(v)
    return want is not None and any((got := parse_pkg_version(rv)) is not None and got == want for rv, _ in read)


@check("import-surface", "packages", findings=("package-imports-missing-name",))
def import_surface(ctx: CheckContext) -> Iterator[Finding]:
    """A release whose modules import at load a name the installed release of another package does not define
    (`ImportError: cannot import name ...`), read from both packages' sources at their tags
    (profiles/import-surface/)."""
    snap = ctx.snapshot
    callees = {n: (_release_of(snap, n), git_commit(snap, n)) for n in IMPORT_CALLEES}
    callees = {n: vc for n, vc in callees.items() if vc[0] or vc[1]}
    callers = [n for n in IMPORT_CALLERS if installed(snap, n) or ver(snap, n) or git_commit(snap, n)]
    if not callees or not callers:
        skip("no caller and callee release the table of imports covers is known")
    from doctor.knowledge.coverage import import_callers_read

    read = import_callers_read()
    if read is not None and not any(_maybe_read(snap, c, read.get(c, ())) for c in callers):
        skip("no installed caller release is one the table of imports read")
    from doctor.knowledge.import_surface import load, unmet

    table = load()
    for caller in callers:
        cv, cc = _release_of(snap, caller), checkout_commit(snap, caller)
        for callee, (dv, dc) in callees.items():
            u = unmet(table, caller, callee, caller_version=cv, caller_commit=cc, callee_version=dv,
                      callee_commit=dc, from_index=_from_index(snap, caller))
            if u is None or cv and code_need_unmet(snap, caller, cv, callee):
                # the caller's own code needs more of the callee than is installed (transformers turns PyTorch off
                # below its minimum, so what it imports under `if is_torch_available():` does not run):
                # package-code-needs-unmet says so
                continue
            yield _import_finding(u, caller, callee, cv, cc, dv, dc, table.read, _stack_pin(ctx, callee, dv))


@check("imports-at-load", "packages", findings=("package-imports-undeclared-missing",))
def imports_at_load(ctx: CheckContext) -> Iterator[Finding]:
    """Every package verl's trainer imports when it loads is installed, declared or not: verl 0.8.0-0.9.0 import
    cachetools, fastapi and uvicorn (0.9.0 also transfer_queue) at module level and name none of them in their
    metadata, so `pip install verl` and `pip check` leave them out. Read from verl's own modules (the `loads` record
    of profiles/import-surface/verl/); judged on a complete snapshot only (a report that does not list a package
    does not say it is missing). Declared requirements are judged by declared-requirements, and the stack's own
    packages (torch, Megatron from git, ...) by their checks."""
    snap = ctx.snapshot
    v = ver(snap, "verl")
    # a collected snapshot: it read verl's METADATA and lists every installed distribution with its top-level names
    # (one that states versions, or an older collector's, has no reliable "not installed" for pillow or yaml)
    if not isinstance(v, str) or not v or not snap.is_complete or not known(snap.packages["verl"].requires_dist):
        skip("verl is not installed, or the snapshot did not read its metadata")
    from doctor.knowledge.import_surface import imported_at_load, load

    got = imported_at_load("verl", v, commit=checkout_commit(snap, "verl"))
    if got is None:
        skip(f"the table of imports did not read verl {v}")
    from doctor.checks.declared import STACK
    from doctor.knowledge.ownership import distribution_of_module, normalize
    from doctor.knowledge.pipcheck import line_name

    rel, loads = got
    declared = {normalize(n) for x in snap.packages["verl"].requires_dist or () if (n := line_name(x))}
    missing: dict[str, list[tuple[str, str]]] = {}
    for module, at in sorted(loads.modules.items()):
        dist = distribution_of_module(module, snap)
        if dist is None or normalize(dist) in declared or normalize(dist) in STACK or not absent(snap, dist):
            continue  # unknown owner, judged elsewhere, or installed
        missing.setdefault(normalize(dist), []).append((module, at))
    entries = " / ".join(loads.entries)
    url = load().callers["verl"].url
    # a PYTHONPATH directory no distribution describes can hold the module (vendored, copied without its dist-info),
    # and so can an installed distribution whose top-level names the snapshot does not know (an egg-info with only
    # PKG-INFO: a fork such as pillow-simd installs PIL under another name)
    held = ctx.options.get("path_names")
    unnamed = _unknown_top_level(snap) if missing else []
    for dist, mods in missing.items():
        dirs = unlisted_path_dirs(snap, [m for m, _ in mods], held)
        where = "; ".join(f"`import {m}` ({at})" for m, at in mods)
        file, _, line = mods[0][1].rpartition(":")
        source = f"{url}/blob/{rel.commit or 'v' + rel.version}/{file}#L{line}"
        maybe = ([f"PYTHONPATH's {', '.join(dirs)} holds it (the snapshot lists no distribution there)"] if dirs
                 else []) + ([f"{_few(unnamed)} install{'s' if len(unnamed) == 1 else ''} it (the snapshot does not "
                              f"say what {'it installs' if len(unnamed) == 1 else 'they install'})"] if unnamed else [])
        unless = f" Unless {' or '.join(maybe)}, the import raises" if maybe else " The import raises"
        yield finding(
            "package-imports-undeclared-missing", "warning" if maybe else "error",
            tuple(dict.fromkeys((_comp(dist), "verl"))),
            f"verl {v} imports {mods[0][0]} when its trainer loads, and {dist} is not installed",
            detail=f"verl's modules run {where} at module level when {entries} load (read from {rel.where}), but "
                   f"verl {v}'s metadata does not name {dist}: pip neither installs it with verl nor reports it "
                   f"missing.{unless} ModuleNotFoundError: No module named '{mods[0][0]}'.",
            evidence={"verl": v, "requires": dist, "modules": [m for m, _ in mods], "at": [a for _, a in mods],
                      "read": rel.where, **({"pythonpath_unlisted": dirs} if dirs else {}),
                      **({"top_level_unknown": unnamed} if unnamed else {})},
            fix=f"Install {dist} into the same interpreter.", commands=(f"pip install '{dist}'",),
            source=source)


def _unknown_top_level(snap: Snapshot) -> list[str]:
    """The installed distributions whose top-level names the snapshot does not record (no top_level.txt and no
    RECORD, or an older collector): any of them may install the module a check looks for."""
    return sorted(n for n, p in snap.packages.items() if not isinstance(val(p, "top_level"), list))


def _few(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" (and {len(names) - 4} more)" if len(names) > 4 else "")


def _served(caller: str, via: list[str]) -> str:
    """`from trl import DPOTrainer` (trl.trainer.dpo_trainer), for the lazily served names that load these imports."""
    names = list(dict.fromkeys(v.split(":")[1] for v in via))
    mods = list(dict.fromkeys(v.split(":")[0] for v in via))
    return f"`from {caller} import {', '.join(names[:3])}`{' (and more)' if len(names) > 3 else ''} ({_few(mods)})"


def _loaded_when(rel: CallerRelease, caller: str, callee: str, names: tuple[tuple[str, str, str], ...],
                 lazy: Mapping[str, str] | None = None) -> str:
    """When the caller's modules run these imports: when it is imported (its entry modules), when a command it
    installs loads (`vllm serve`: its console script's modules), for the names only that command imports, or when a
    name its package serves lazily is imported (`from trl import DPOTrainer`), for the names only that loads."""
    if lazy:
        entries = " / ".join(rel.entries_for(callee)) or caller
        return (f"when {_served(caller, [lazy[f'{m}:{n}'] for m, n, _ in names])} loads the module serving that "
                f"name ({caller}'s package serves its names lazily: `import {entries}` alone loads, and a job that "
                "imports none of these names is not affected)")
    imported = (f"{_LOADED_WHEN.get(caller, f'when {caller} is imported')} "
                f"(`import {' / '.join(rel.entries_for(callee)) or caller}`)")
    cmd = rel.command
    only = cmd.only.get(callee, frozenset()) if cmd is not None else frozenset()
    by_command = [n for n in names if f"{n[0]}:{n[1]}" in only]
    if cmd is None or not by_command:
        return imported
    loads = f"when `{cmd.name}` loads (`import {' / '.join(cmd.entries)}`)"
    if len(by_command) == len(names):
        return loads
    return f"{imported}, and {_few([n[1] or n[0] for n in by_command])} {loads}"


def _stack_pin(ctx: CheckContext, name: str, v: str | None) -> str | None:
    """`<profile> pins <name> <spec>` when the chosen stack pins this package and the installed release is that pin."""
    p = ctx.profile
    spec = p.pins.get(name) if p is not None else None
    return f"{p.name} pins {name} {spec}" if p is not None and spec and v and pkg_satisfies(v, spec) else None


def _import_finding(u: Unmet, caller: str, callee: str, cv: str | None, cc: str | None, dv: str | None,
                    dc: str | None, read: str, pinned: str | None = None) -> Finding:
    """An error when the caller's release imports what the callee release lacks; a warning when only a source build
    that declares the same version does (the release itself, and its PyPI wheel, load). `pinned`: the callee release
    is the chosen stack's pin, so another caller release comes first in the fix."""
    got = u.callee_release
    build = not u.names and u.source_build is not None
    rel = u.source_build if build and u.source_build is not None else u.cited
    names = u.source_names if build else u.names
    who = (f"{caller} {rel.version} built from {rel.ref} ({rel.commit[:9]})" if build else
           f"{caller} {rel.version} at {rel.ref} ({rel.commit[:9]})" if u.caller_release and cc else
           f"{caller} {rel.version}" if u.caller_release else caller)
    have = f"{callee} {dv}" if dv else f"{callee} at {got.commit[:9] or got.ref}"
    module, name, _ = names[0]
    attribute = name.startswith(".")
    more = f" (and {len(names) - 1} more)" if len(names) > 1 else ""
    lines = "; ".join(f"`{_import_line(m, n)}` ({w})" for m, n, w in names[:6]) + (" …" if len(names) > 6 else "")
    scope = (f"at {rel.ref} (commit {rel.commit[:9]}, {rel.date})" if build else
             f"at {rel.ref} (commit {rel.commit[:9]})" if u.caller_release and rel.commit else
             f"in {rel.where}" if u.caller_release else  # a release read from its wheel (verl 0.9.1)
             f"in every {caller} release read, cited at {rel.ref}")
    them = "them" if len(names) > 1 else "it"
    lazy = dict(u.lazy) if not build else {}
    near = _nearest(u.fixed_in, got.version)
    art = "an" if callee[:1] in "aeiou" else "a"  # an accelerate release
    fix_rel = (f"{art} {callee} release that defines {them} (of the releases read: {' or '.join(near)})" if near else
               f"{art} {callee} release that defines {them}")
    comps = tuple(dict.fromkeys(c for c in (component_of_distribution(caller), component_of_distribution(callee))
                                if c))
    caveat = (f"The {caller} {u.cited.version} release ({u.cited.ref}) imports nothing {callee} {got.version} lacks, "
              f"but {caller}'s {rel.ref} still declares version {rel.version}: a source build (pip install git+..., "
              f"a checkout) reports {rel.version} over these files. " if build else "")
    fix = (f"If this {caller} was built from source: install the {caller} {rel.version} release from PyPI, or "
           + (f"{callee} {' or '.join(near)} (the nearest release{'s' if len(near) > 1 else ''} read that "
                 f"define{'' if len(near) > 1 else 's'} {them})." if near else
              f"{art} {callee} release that defines {them}.") if build else
           f"Install another {caller} release that supports {callee} {got.version}: {pinned}. Or install "
           f"{fix_rel}, off that stack." if pinned else
           f"Install {fix_rel}, or another {caller} release that supports {callee} {got.version}.")
    # only a lazily served name loads them (`from trl import DPOTrainer`): `import trl` works, and a job that never
    # asks for that name (verl imports none of trl) runs; a warning
    when = f"when {_served(caller, [lazy[f'{module}:{name}']])} loads it" if lazy else "at load"
    return finding(
        "package-imports-missing-name", "warning" if build or lazy else "error", comps or ("python",),
        (f"{who} reads {module}{name} {when}, which {have} does not have{more}" if attribute else
         f"{who} imports {name or module} from {module if name else callee} {when}, which {have} does not "
         f"have{more}"),
        detail=f"{caveat}{caller}'s modules run {lines} {scope} {_loaded_when(rel, caller, callee, names, lazy)}; "
               f"{callee} {got.version} ({got.where}) "
               "does not "
               + ("have the module: " if module in u.no_module else f"define {them}: ")
               + (f"the import raises ModuleNotFoundError: No module named '{module}'" if module in u.no_module else
                  f"{'reading it' if attribute else 'the import'} raises {_raises(module, name)}")
               + f". Read from both sources with ast (profiles/import-surface/, read {read}).",
        evidence={caller: cv or cc, callee: dv or dc, "imports": [f"{m}:{n}" for m, n, _ in names],
                  "read_at": {caller: rel.ref, callee: got.ref}, **({"source_build": rel.commit} if build else {}),
                  **({"lazy": lazy} if lazy else {})},
        fix=fix, source=u.source)


# The packages profiles/code-needs.toml has rows for: the table is read only when one of them has a stated version
# (doctor/knowledge/code_needs.py loads it on first use); a new row's package is added here too
# (tests/knowledge/test_code_needs.py checks the two agree).
CODE_NEEDS_PACKAGES = frozenset({"transformers", "megatron-core", "verl", "pyarrow", "llamafactory"})


def _code_needs_table() -> Any:
    from doctor.knowledge.code_needs import load

    return load()


@check("code-needs", "packages", findings=("package-code-needs-unmet",), tables=(_code_needs_table,))
def code_needs(ctx: CheckContext) -> Iterator[Finding]:
    """What a release's code needs beyond its metadata (profiles/code-needs.toml: the version gates it raises on or
    turns a dependency off at, module-level calls into newer APIs), against the installed release of that package."""
    snap = ctx.snapshot
    stated = {name: v for name in CODE_NEEDS_PACKAGES if isinstance(v := ver(snap, name), str) and v}
    if not stated:
        skip("no package the table of code needs covers has a known version")
    table = _code_needs_table()
    for name, version in sorted(stated.items()):
        for need, have in _unmet_needs(snap, name, version, table):
            if have is None and not need.bypass:  # an absent_breaks row: the code imports it whatever is installed
                from doctor.knowledge.ownership import modules_of_distribution

                mods = modules_of_distribution(need.needed, snap)
                yield _code_need_absent(name, version, need, table.read,
                                        unlisted_path_dirs(snap, mods, ctx.options.get("path_names")))
            else:
                yield _code_need_finding(ctx, name, version, need, have, table)


def _unmet_needs(snap: Any, name: str, version: str, table: Any = None) -> Iterator[tuple[Any, str | None]]:
    """(need, the installed version of what it needs, None when that is absent) for each row of `name` `version` the
    snapshot does not meet: a row whose host condition holds (`on = "npu"`: torch_npu finds an NPU), with the needed
    package outside it, or absent where the row's code raises on that too (a require_version check, `bypass`; an
    import whatever is installed, `absent_breaks`). The one decision the check and declared-requirements share."""
    from doctor.knowledge.code_needs import needs_of

    for need in needs_of(name, version, table):
        if need.on == "npu" and npu_runtime(snap) is not True:
            continue  # the gate runs only where torch_npu finds an NPU
        have = ver(snap, need.needed)
        if isinstance(have, str):
            if need.met_by(have) is False:
                yield need, have
        elif (need.bypass or need.absent_breaks) and absent(snap, need.needed):
            # require_version raises PackageNotFoundError on a missing package too
            yield need, None


def code_need_unmet(snap: Any, package: str, version: str, needed: str) -> bool:
    """Whether the code-needs check reports `package` `version`'s need of `needed` as unmet (its version gate or
    require_version check, not a bare import): declared-requirements leaves that pair to it. Only an error-level need
    stands for the pair: a warning-level one is a gate one use reaches (transformers 4.46's data_seed needs accelerate
    1.1.0) and leaves what every use needs (the declared accelerate>=0.26.0) to be said as well."""
    name, wanted = normalize_name(package), normalize_name(needed)
    return name in CODE_NEEDS_PACKAGES and any(
        n.needed == wanted and n.severity == "error" and (have is not None or bool(n.bypass))
        for n, have in _unmet_needs(snap, name, version))


def _code_need_finding(ctx: CheckContext, name: str, version: str, need: Any, have: str | None,
                     table: Any) -> Finding:
    """A need the installed `need.needed` (`have`; None: not installed, for a check that raises on that too) does not
    meet: an error, a warning when the snapshot's environment sets the row's bypass."""
    snap = ctx.snapshot
    comps = tuple(dict.fromkeys(c for c in (component_of_distribution(need.needed),
                                            component_of_distribution(name)) if c))
    commands: tuple[str, ...]
    if have is None:
        fix, commands = f"Install {need.requires}.", (f"pip install '{need.requires}'",)
    else:
        fix, commands = _code_need_fix(ctx, name, version, need, have, table)
    got = f"{need.needed} {have} is installed" if have else f"{need.needed} is not installed"
    bypass = env(snap, need.bypass) if need.bypass else None
    bypassed = need.bypassed_by(bypass)
    on = " on an Ascend NPU" if need.on == "npu" else ""
    evidence: dict[str, Any] = {name: version, need.needed: have, "needs": need.requires, "releases": need.releases,
                                "read_at": list(need.read_at)}
    if need.on:
        evidence["on"] = need.on
    if need.bypass:
        evidence["bypass"] = {need.bypass: bypass}
    host = (f" The snapshot lists torch-npu {ver(snap, 'torch-npu') or ''}".rstrip()
            + (f" and {len(devices(snap) or [])} NPU(s)" if devices(snap) else "")
            + f", so this gate runs when {name} is imported." if need.on == "npu" else "")
    if bypassed:
        return finding(
            "package-code-needs-unmet", "warning", comps or ("python",),
            f"{name} {version}'s check of {need.requires} is bypassed ({need.bypass}={bypass}); {got}",
            detail=f"In {name} {need.releases}, {need.read_from}: {need.breaks}. {need.bypass}={bypass} in the "
                   f"snapshot's environment skips that check, so {name} runs "
                   + (f"with {need.needed} {have}, a release its check rejects" if have else f"without {need.needed}")
                   + f" (read from the files of {name} {', '.join(need.read_at)}, {table.read}).",
            evidence=evidence, fix=f"{fix} Leaving {need.bypass} set runs {name} on a {need.needed} it does not "
                                   f"support: remove the bypass once the versions fit.",
            commands=commands, source=need.source)
    if need.bypass:
        fix += (f" Or, as a bypass, set {need.bypass}=1: {name} then skips this check and runs with "
                + (f"{need.needed} {have}, which it does not support." if have else f"no {need.needed}."))
    return finding(
        "package-code-needs-unmet", need.severity, comps or ("python",),
        f"{name} {version}'s code needs {need.requires}{on}; {got}",
        detail=f"In {name} {need.releases}, {need.read_from}: {need.breaks}"
               + (f" (or PackageNotFoundError: the '{need.requires}' distribution was not found)" if not have else "")
               + ". "
               + ("Its metadata does not say so: pip "
                  f"installs it beside {need.needed} {have} without a complaint" if not need.bypass else
                  f"{name} checks this itself when it starts, whatever pip accepted")
               + f" (read from the files of {name} {', '.join(need.read_at)}, {table.read}).{host}",
        evidence=evidence, fix=fix, commands=commands, source=need.source)


def _within(ctx: CheckContext, name: str, need: Any) -> tuple[str, str]:
    """The need, narrowed by what the other installed packages declare on the needed package where that leaves part
    of it out, and what narrowed it: ('transformers<4.53.0,>=4.52.4', " (the need within vllm-ascend 0.9.1's
    transformers<4.53.0)") rather than a bare `transformers>=4.52.4` that pip would meet with a 5.x the stack's
    vllm-ascend rules out; (`need.requires`, "") when nothing narrows it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from doctor.checks.declared import release_lookup
    from doctor.knowledge.pipcheck import declared_ranges, narrows

    try:
        want = SpecifierSet(need.specifier)
    except InvalidSpecifier:
        return need.requires, ""
    by = [(p, r, s) for p, r, s in declared_ranges(ctx.snapshot, need.needed, release_lookup(ctx.snapshot, ctx.profile))
          if p != name and narrows(s, want)]
    if not by:
        return need.requires, ""
    spec = want
    for _, _, s in by:
        spec &= s
    named = "; ".join(f"{' '.join(x for x in (p, ver(ctx.snapshot, p)) if x)}'s {r}" for p, r, _ in by)
    return f"{need.needed}{spec}", f" (the need within {named})"


def _code_need_fix(ctx: CheckContext, name: str, version: str, need: Any, have: str,
                   table: Any) -> tuple[str, tuple[str, ...]]:
    """Move the needed package up to the need, unless an installed package's own requirement on it (Requires-Dist,
    or its release's published one) rules that out (verl 0.7.1's numpy<2.0.0 against pyarrow 26's numpy>=2.0): then
    the first fix is a `name` release from before the need began (the earliest release the table finds it in), which
    leaves the stack's cap as it is."""
    from doctor.checks.declared import excluded_by, release_lookup
    from doctor.knowledge.pipcheck import declared_excluding

    other = f"a {name} release that runs on {need.needed} {have}"
    caps = [(p, r) for p, r in declared_excluding(ctx.snapshot, need.needed, need.specifier,
                                                  release_lookup(ctx.snapshot, ctx.profile)) if p != name]
    if not caps:
        req, within = _within(ctx, name, need)
        if need.needed == "torch":
            # torch moves with torch-npu / vllm (one stack): a bare pip line would take PyPI's build, so no command
            return (f"Install {req}{within} (with the torch-npu / vllm releases of the same stack), or {other}.", ())
        return f"Install {req}{within}, or {other}.", (f"pip install '{req}'",)
    since = _need_begins(name, need, have, table)
    by = excluded_by(ctx.snapshot, caps)
    before = f"{name}<{since}" if since else None
    return ((f"Install {other}" + (f" ({before}: the table of code needs finds this need from {name} {since} on)"
                                   if before else "")
             + f": {by}, which rules {need.requires} out. Or install {need.requires} together with releases of "
               f"{', '.join(p for p, _ in caps)} that allow it."),
            (f"pip install '{before}'",) if before else ())


def _need_begins(name: str, need: Any, have: str, table: Any) -> str | None:
    """The earliest release of `name` from which the table's rows need more of `need.needed` than `have` (the lower
    bound of the first such row: `>=26.0.0` of pyarrow's numpy>=2.0), None when that row has no lower bound."""
    from packaging.specifiers import SpecifierSet

    floors = []
    for row in table.needs:
        if row.package == name and row.needed == need.needed and row.met_by(have) is False:
            floors += [c.version for c in SpecifierSet(row.releases) if c.operator == ">="]
    parsed = [(v, f) for f in floors if (v := parse_pkg_version(f)) is not None]
    return min(parsed)[1] if parsed else None


def _code_need_absent(name: str, version: str, need: Any, read: str, dirs: list[str]) -> Finding:
    """A need whose package the code imports whatever is installed, on a complete snapshot without that package: a
    warning when a PYTHONPATH directory no listed distribution describes could hold the module."""
    comps = tuple(dict.fromkeys(c for c in (component_of_distribution(name),) if c))
    return finding(
        "package-code-needs-unmet", "warning" if dirs else "error", comps or ("python",),
        f"{name} {version}'s code imports {need.needed}, which is not installed",
        detail=f"In {name} {need.releases}, {need.read_from}: {need.breaks}. Its metadata does not name "
               f"{need.needed}, so pip neither installs it nor complains that it is missing (read from the files of "
               f"{name} {', '.join(need.read_at)}, {read})."
               + (f" PYTHONPATH's {', '.join(dirs)} may hold it: the snapshot lists no distribution there." if dirs
                  else ""),
        evidence={name: version, need.needed: None, "needs": need.requires, "releases": need.releases,
                  "read_at": list(need.read_at), **({"pythonpath_unlisted": dirs} if dirs else {})},
        fix=f"pip install '{need.requires}'", source=need.source)


_CUDA_ONLY = ("apex", "flash-attn", "flash-attn-3", "liger-kernel", "xformers", "bitsandbytes", "deepspeed-kernels")


@check("cuda-only-packages", "packages", findings=("cuda-only-packages",))
def cuda_only_packages(ctx: CheckContext) -> Iterator[Finding]:
    """CUDA-only packages on an Ascend host: unusable, and some break imports."""
    snap = ctx.snapshot
    if not npu_host(snap):
        skip("nothing says this is an Ascend host")
    if not known(snap.packages):
        skip("the snapshot lists no packages")
    found = [n for n in _CUDA_ONLY if n in snap.packages]
    nvidia = sorted(n for n in snap.packages if n.startswith("nvidia-"))
    te = [n for n in snap.packages if n.startswith("transformer-engine")]
    ms = installed(snap, "mindspeed")
    if te and not ms:
        found += te  # beside MindSpeed it is an error of its own (mindspeed area)
    if found or nvidia:
        yield finding(
            "cuda-only-packages", "warning", ("python",),
            f"CUDA-only packages are installed on an Ascend host: {', '.join((found + nvidia)[:6])}"
            + (" …" if len(found + nvidia) > 6 else ""),
            detail="They cannot run on NPU; flash-attn / liger-kernel are unsupported in verl on Ascend (flash attention "
                   "comes from MindSpeed or transformers' NPU path), and nvidia-* usually arrive with a CUDA torch.",
            evidence={"packages": found, "nvidia": nvidia[:20]},
            fix="pip uninstall -y " + " ".join((found + nvidia)[:12]),
            source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst")
