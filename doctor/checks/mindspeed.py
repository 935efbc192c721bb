"""MindSpeed and Megatron: branch pairing, `repatch` (without it verl skips MindSpeed silently), a single
Megatron on the path, and no NVIDIA TransformerEngine beside MindSpeed."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from packaging.version import Version

from doctor.checks.facts import (
    absent,
    cann,
    checkout_commit,
    env_unset,
    installed,
    origins,
    pver,
    py_version,
    val,
    ver,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.matrix import (
    MINDSPEED_UNPAIRED,
    PTA_CANN,
    TRAINER_CANN_MINIMUM,
    MindSpeedRow,
    mindspeed_rows,
    torch_npu_cann,
)
from doctor.knowledge.versions import CannVersion, parse_pkg_version, pkg_satisfies, release
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# MindSpeed patches Megatron by name: 'RuntimeError: no exist X of <module megatron...>' when its branch does
# not match the installed Megatron.
SRC_PATCH = "https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/mindspeed/patch_utils.py"
MEGATRON_LM = "https://github.com/NVIDIA/Megatron-LM.git"


def _ms_target(snap: Any) -> tuple[tuple[MindSpeedRow, ...], set[tuple[int, int]], str]:
    """What a MindSpeed install targets: the rows of the MindSpeed<->Megatron table for its git branch (or, with
    no branch known, every branch whose setup.py reports its version), and the Megatron-core series they accept.
    A branch the table does not know falls back to its name (`core_r0.16.0` -> 0.16), then to its version."""
    m = snap.module("mindspeed")
    git = val(m, "git")
    branch = val(git, "branch") if git else None
    branch = branch if isinstance(branch, str) else None
    v = parse_pkg_version(val(m, "version")) or pver(snap, "mindspeed")
    rows = mindspeed_rows(branch, str(v) if v is not None else None)
    if rows:
        why = f"branch {branch}" if branch and rows[0].branch == branch else f"version {v}"
        return rows, {r.series for r in rows}, why
    line, why = _ms_line(snap)
    return (), ({line} if line else set()), why


def _ms_line(snap: Any) -> tuple[tuple[int, int] | None, str]:
    """The MindSpeed release line of an install (`core_r0.17.0` -> 0.17): from its git branch when it names one,
    else from its metadata version."""
    m = snap.module("mindspeed")
    git = val(m, "git")
    branch = val(git, "branch") if git else None
    if isinstance(branch, str):
        mm = re.search(r"core_r(\d+)\.(\d+)", branch)
        if mm:
            return (int(mm[1]), int(mm[2])), f"branch {branch}"
    v = parse_pkg_version(val(m, "version")) or pver(snap, "mindspeed")
    if v is not None and v.release[:3] != (0, 0, 1):
        return (v.major, v.minor), f"version {v}"
    return None, ""


def _megatron_requires_python(row: MindSpeedRow) -> str | None:
    """The Requires-Python PyPI's megatron-core release of the branch's Megatron declares (0.17.1: >=3.12); None when
    the README names only a series or the table does not hold the release."""
    if not row.exact:
        return None
    from doctor.knowledge.requirements import load_requirements

    d = load_requirements().declared("megatron-core", row.megatron)
    return d.requires_python if d is not None and d.requires_python else None


def _megatron_version(snap: Any) -> str | None:
    m = snap.module("megatron")
    v = val(m, "version")
    if isinstance(v, str):
        return v
    return ver(snap, "megatron-core")


def _mindspeed_present(snap: Any) -> bool:
    return bool(installed(snap, "mindspeed")) or bool(origins(snap, "mindspeed"))


@check("mindspeed-megatron", "mindspeed",
       findings=("mindspeed-megatron-mismatch", "mindspeed-megatron-missing", "mindspeed-megatron-patch-untested", "mindspeed-pypi-placeholder"))
def mindspeed_megatron(ctx: CheckContext) -> Iterator[Finding]:
    """MindSpeed's branch targets the installed Megatron-core release."""
    snap = ctx.snapshot
    if not _mindspeed_present(snap):
        skip("MindSpeed is not installed (or not known to be)")
    msv = ver(snap, "mindspeed")
    if msv and parse_pkg_version(msv) is not None and parse_pkg_version(msv).release[:3] == (0, 0, 1):  # type: ignore[union-attr]
        yield finding(
            "mindspeed-pypi-placeholder", "error", ("mindspeed",), f"mindspeed {msv} from PyPI is a placeholder",
            detail="The PyPI project is not functional; MindSpeed is installed from git (gitcode.com/Ascend/MindSpeed).",
            evidence={"mindspeed": msv},
            fix="pip uninstall -y mindspeed; git clone https://gitcode.com/Ascend/MindSpeed.git && git -C MindSpeed checkout "
                "<branch> && pip install -e MindSpeed", source="https://pypi.org/project/mindspeed/0.0.1.dev1/")
        return
    mg = snap.module("megatron")
    if mg is None:
        rows, _, why = _ms_target(snap)
        lines: tuple[str, ...] = ()
        fix = "Clone Megatron-LM at the ref MindSpeed targets and `pip install -e Megatron-LM` (or put it on PYTHONPATH)."
        if rows:  # the Megatron-LM ref the branch's README names (core_r0.17.0 -> tag core_v0.17.1)
            from doctor.installers.gitsrc import checkout_lines

            lines = (*checkout_lines(MEGATRON_LM, rows[0].checkout, None, "Megatron-LM"), "pip install --no-deps -e Megatron-LM")
            how = ("install it editable with --no-deps (its dependencies name an unpinned torch), or put it on "
                   "PYTHONPATH")
            rp, py = _megatron_requires_python(rows[0]), py_version(snap)
            if rp and py is not None and pkg_satisfies(str(py), rp) is False:
                # Megatron-LM core_v0.17.1 declares >=3.12 while MindSpeed core_r0.17.0's README names Python 3.10
                lines = lines[:3]
                how = (f"note that it (megatron-core {rows[0].megatron} on PyPI) requires Python {rp} and this "
                       f"interpreter is {py}, so `pip install -e` refuses it (requires a different Python): use a "
                       f"Python that meets {rp}, or put the checkout on PYTHONPATH, which skips that declaration")
            fix = (f"Fetch Megatron-LM {rows[0].checkout}, the Megatron-LM MindSpeed ({why}) documents, and {how}; keep "
                   "the Megatron-LM directory, it stays the source Python imports megatron from.")
        yield finding(
            "mindspeed-megatron-missing", "error", ("megatron", "mindspeed"), "MindSpeed is installed but Megatron is not importable",
            detail="`import mindspeed.megatron_adaptor` needs megatron.core importable first.",
            evidence={"mindspeed": msv, **({"megatron_lm": rows[0].checkout} if rows else {})}, fix=fix, commands=lines,
            source=(rows[0].source + "; " if rows else "") + "https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/docs/user-guide/installation.md; https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/mindspeed/megatron_adaptor.py")
        return
    rows, accepted, why = _ms_target(snap)
    mv = _megatron_version(snap)
    mvp = parse_pkg_version(mv)
    if not accepted or mvp is None:
        skip("the MindSpeed branch or the Megatron version is unknown")
    if (mvp.major, mvp.minor) not in accepted:
        want = " or ".join(f"{a}.{b}" for a, b in sorted(accepted))
        ref = rows[0].checkout if rows else next(f"core_r{a}.{b}.0" for a, b in sorted(accepted))
        yield finding(
            "mindspeed-megatron-mismatch", "error", ("megatron", "mindspeed"),
            f"MindSpeed targets Megatron-core {want} ({why}), Megatron is {mv}",
            detail="MindSpeed patches Megatron functions by name; another release fails at import with "
                   "`RuntimeError: no exist ...` or ModuleNotFoundError under mindspeed/patch_utils.py."
                   + (f" {rows[0].branch}'s README names Megatron-LM {rows[0].megatron}." if rows else ""),
            evidence={"mindspeed": why, "megatron": mv, "accepted": want},
            fix=f"Check out Megatron-LM {ref} (or the MindSpeed branch matching your Megatron).",
            source=rows[0].source if rows else SRC_PATCH)
        return
    same = [r for r in rows if r.series == (mvp.major, mvp.minor)]
    documented = {r.megatron for r in same}
    if len(documented) == 1 and same[0].exact and release(mvp) != release(Version(same[0].megatron)):
        r = same[0]
        yield finding(
            "mindspeed-megatron-patch-untested", "warning", ("megatron", "mindspeed"),
            f"MindSpeed ({why}) is documented with Megatron-core {r.megatron}, this is {mv}",
            evidence={"megatron": mv, "documented": r.megatron}, fix=f"git -C Megatron-LM checkout {r.checkout}",
            source=r.source)


@check("mindspeed-llm", "mindspeed",
       findings=("mindspeed-llm-megatron-mismatch", "mindspeed-llm-mindspeed-mismatch", "mindspeed-llm-cann-pairing",
                 "mindspeed-llm-torch-pairing"))
def mindspeed_llm(ctx: CheckContext) -> Iterator[Finding]:
    """MindSpeed-LLM against its pairing table: the Megatron-core, MindSpeed branch, CANN and PyTorch it names."""
    snap = ctx.snapshot
    llm = ver(snap, "mindspeed-llm")
    if llm is None:
        skip("MindSpeed-LLM is not installed (or not known to be)")
    # its table loads only where MindSpeed-LLM is
    from doctor.knowledge.mindspeed_llm import mindspeed_llm_row

    row = mindspeed_llm_row(llm)
    if row is None:
        skip(f"MindSpeed-LLM {llm} is not in the pairing table the doctor knows (2.1.0 and older report 0.0.1)")
    want = Version(row.megatron)
    mv = _megatron_version(snap)
    mvp = parse_pkg_version(mv)
    if mvp is not None and release(mvp, 2) != release(want, 2):
        yield finding(
            "mindspeed-llm-megatron-mismatch", "error", ("megatron", "mindspeed"),
            f"MindSpeed-LLM {llm} is paired with Megatron-core {row.megatron}, Megatron is {mv}",
            detail="MindSpeed-LLM patches Megatron-LM through MindSpeed's patch manager, by attribute name: another "
                   "Megatron release fails at import (`RuntimeError: no exist ...` under mindspeed/patch_utils.py).",
            evidence={"mindspeed-llm": llm, "megatron": mv, "paired": row.megatron},
            fix=f"git -C Megatron-LM checkout core_v{row.megatron} (the MindSpeed-LLM pairing table's Megatron).",
            source=f"{row.source}; {SRC_PATCH}")
    if _mindspeed_present(snap):
        line, why = _ms_line(snap)
        git = val(snap.module("mindspeed"), "git")
        branch = val(git, "branch") if git else None
        off_line = line is not None and line != release(want, 2)
        off_branch = isinstance(branch, str) and branch not in row.mindspeed and not off_line
        if off_line or off_branch:
            yield finding(
                "mindspeed-llm-mindspeed-mismatch", "warning", ("mindspeed",),
                f"MindSpeed-LLM {llm} is paired with MindSpeed {' / '.join(row.mindspeed)}, this MindSpeed is {why}",
                detail="MindSpeed-LLM imports MindSpeed's features and patches by name; its table pairs each release with one "
                       "MindSpeed branch.",
                evidence={"mindspeed-llm": llm, "mindspeed": why, "paired": list(row.mindspeed)},
                fix=f"git -C MindSpeed checkout {row.mindspeed[0]} && pip install -e MindSpeed", source=row.source)
    c = cann(snap)
    if c is not None:
        rcs = [x for x in (CannVersion.try_parse(s) for s in row.cann) if x is not None]
        if not any(c[1].series == rc.series or c[1].is_ambiguous_against(rc) for rc in rcs):
            yield finding(
                "mindspeed-llm-cann-pairing", "warning", ("mindspeed", "cann"),
                f"MindSpeed-LLM {llm} is paired with CANN {' / '.join(row.cann)}, this host has CANN {c[0]}",
                evidence={"mindspeed-llm": llm, "cann": c[0], "paired": list(row.cann)},
                fix=f"Use the MindSpeed-LLM release its table pairs with CANN {c[0]}.", source=row.source)
    t = pver(snap, "torch")
    if t is not None and release(t) != release(Version(row.torch)):
        yield finding(
            "mindspeed-llm-torch-pairing", "warning", ("torch", "mindspeed"),
            f"MindSpeed-LLM {llm} is paired with PyTorch {row.torch}, this is {ver(snap, 'torch')}",
            evidence={"mindspeed-llm": llm, "torch": ver(snap, "torch"), "paired": row.torch},
            fix=f"Install torch {row.torch} with its torch-npu.", source=row.source)


@check("mindspeed-cann", "mindspeed", findings=("mindspeed-cann-unpaired",))
def mindspeed_cann(ctx: CheckContext) -> Iterator[Finding]:
    """A MindSpeed branch next to a CANN or TorchNPU release its compatibility table marks as not pairable ("/")."""
    snap = ctx.snapshot
    git = val(snap.module("mindspeed"), "git")
    branch = val(git, "branch") if git else None
    rows = [r for r in MINDSPEED_UNPAIRED if r[0] == branch]
    if not isinstance(branch, str) or not rows:
        skip("the MindSpeed branch is unknown or has no compatibility table with a \"/\" entry")
    _, canns, ptas, src = rows[0]
    c = cann(snap)
    tn = ver(snap, "torch-npu")
    tn_cann = torch_npu_cann(tn)
    pta = next((k for k, v in PTA_CANN.items() if tn_cann and v == tn_cann), None)
    bad_cann = c is not None and any(c[1].series == CannVersion(x).series for x in canns)
    bad_pta = pta in ptas
    if not (bad_cann or bad_pta):
        return
    what = " and ".join(x for x in ((f"CANN {c[0]}" if bad_cann and c else ""),
                                    (f"torch-npu {tn} (TorchNPU {pta})" if bad_pta else "")) if x)
    yield finding(
        "mindspeed-cann-unpaired", "warning", ("mindspeed", "cann" if bad_cann else "torch-npu"),
        f"MindSpeed {branch} cannot be paired with {what}",
        detail=f"MindSpeed's compatibility tables mark {branch} with CANN {' / '.join(canns)} and TorchNPU "
               f"{' / '.join(ptas)} as \"/\" (cannot be paired).",
        evidence={"mindspeed_branch": branch, "cann": c[0] if c else None, "torch-npu": tn},
        fix="Use the MindSpeed branch released with this CANN / TorchNPU (26.1.0_core_r0.12.1 pairs with CANN 9.1.0).",
        source=src)


@check("mindspeed-repatch", "mindspeed", findings=("mindspeed-no-repatch",))
def mindspeed_repatch(ctx: CheckContext) -> Iterator[Finding]:
    """verl imports `repatch` from mindspeed.megatron_adaptor inside try/except ImportError: without it
    MindSpeed is silently skipped."""
    snap = ctx.snapshot
    m = snap.module("mindspeed")
    feats = val(m, "features")
    if not isinstance(feats, dict) or "repatch" not in feats:
        skip("the snapshot does not say whether MindSpeed has `repatch`")
    if feats["repatch"] is False:
        yield finding(
            "mindspeed-no-repatch", "error", ("mindspeed", "verl"),
            "This MindSpeed has no `repatch`: verl will silently run without MindSpeed",
            detail="verl does `from mindspeed.megatron_adaptor import repatch` in try/except ImportError, so "
                   "override_transformer_config (use_flash_attn, fused ops...) never reaches MindSpeed. `repatch` exists "
                   "from 2.2.0_core_r0.12.1 on.",
            evidence={"origins": val(m, "origins"), "git": _git(m)},
            fix="git -C <MindSpeed> checkout 2.3.0_core_r0.12.1 (or core_r0.16.0 for Megatron 0.16) && pip install -e <MindSpeed>",
            source="https://github.com/Ascend/MindSpeed/commit/8b14ec4c4897e77d6734175d0e05e89fc9fe3b58; "
                   "https://github.com/verl-project/verl/blob/v0.9.0/verl/workers/engine/mindspeed/transformer_impl.py")


# MindSpeed core_r0.17.0 on (the MA + TENPU + MindSpeed split) imports MegatronAdaptor first thing in mindspeed/__init__.py
SRC_MA_IMPORT = "https://github.com/Ascend/MindSpeed/blob/1f5feb86da9e6ccc6f8e981f5f0ac655a2d00ae5/mindspeed/__init__.py"
SRC_MA_README = "https://github.com/Ascend/MindSpeed/blob/1f5feb86da9e6ccc6f8e981f5f0ac655a2d00ae5/README.md"
# verl's MindSpeed engine takes `repatch` inside try/except ImportError
SRC_VERL_REPATCH = ("https://github.com/verl-project/verl/blob/1dda039b9c6311889a9c9a26040677e1254814f9/"
                    "verl/workers/engine/mindspeed/transformer_impl.py")


@check("megatron-adaptor", "mindspeed", findings=("megatron-adaptor-missing",))
def megatron_adaptor(ctx: CheckContext) -> Iterator[Finding]:
    """A MindSpeed whose own `__init__` imports MegatronAdaptor (core_r0.17.0 on) has `megatron_adaptor` importable."""
    snap = ctx.snapshot
    m = snap.module("mindspeed")
    feats = val(m, "features")
    if not isinstance(feats, dict) or "megatron_adaptor" not in feats:
        skip("the snapshot does not say whether MindSpeed imports megatron_adaptor")
    if not feats["megatron_adaptor"] or snap.module("megatron_adaptor") is not None:  # not needed, or importable / unknown
        return
    yield finding(
        "megatron-adaptor-missing", "error", ("mindspeed", "megatron"),
        "This MindSpeed imports megatron_adaptor (MegatronAdaptor), which is not importable",
        detail="mindspeed/__init__.py runs `import megatron_adaptor`, so every MindSpeed import fails with "
               "ModuleNotFoundError: No module named 'megatron_adaptor'. verl's MindSpeed engine takes `repatch` from "
               "mindspeed.megatron_adaptor inside try/except ImportError, so a verl run goes on without MindSpeed "
               "instead of stopping. From core_r0.17.0 on, MindSpeed's README installs MegatronAdaptor, then "
               "TransformerEngineNPU, then MindSpeed (its table names MegatronAdaptor core_r0.17.0).",
        evidence={"origins": val(m, "origins"), "git": _git(m), "megatron_adaptor": None},
        fix="Install MegatronAdaptor from its git repository at the branch MindSpeed's README names, before "
            "TransformerEngineNPU and MindSpeed.",
        commands=("git clone https://gitcode.com/Ascend/MegatronAdaptor.git", "git -C MegatronAdaptor checkout core_r0.17.0",
                  "pip install -e MegatronAdaptor"),
        source=f"{SRC_MA_IMPORT}; {SRC_MA_README}; {SRC_VERL_REPATCH}")


def _git(m: Any) -> dict[str, Any] | None:
    g = val(m, "git")
    if not g:
        return None
    return {k: val(g, k) for k in ("commit", "branch", "tag")}


@check("megatron-present", "mindspeed", findings=("megatron-missing",))
def megatron_present(ctx: CheckContext) -> Iterator[Finding]:
    """A stack that documents Megatron-LM (verl's megatron strategy, which MindSpeed patches) has Megatron importable:
    the megatron-core distribution, or the `megatron` package of a Megatron-LM checkout on the path. verl declares no
    megatron-core before 0.9.1 (0.7.1: only mbridge under [mcore]; 0.9.1: under its [megatron] and [cpu] extras), so
    what it declares cannot say so; the stack's profile can. Beside MindSpeed, `mindspeed-megatron-missing` says it."""
    snap, p = ctx.snapshot, ctx.profile
    mg = p.git.get("megatron-lm") if p is not None else None
    v = ver(snap, "verl")
    if mg is None or not v:
        skip("no verified stack with Megatron-LM applies, or verl is not installed")
    if _mindspeed_present(snap):
        skip("MindSpeed is installed: mindspeed-megatron-missing judges Megatron beside it")
    module = snap.module("megatron")
    # not importable: the probe looked for `megatron` and found none, or (a snapshot without module facts) no
    # megatron-core is installed and no PYTHONPATH could hold a checkout; else importable, or not known to be missing
    if module is not None and not (not known(module) and absent(snap, "megatron-core") and env_unset(snap, "PYTHONPATH")):
        return
    from doctor.knowledge.import_surface import imported_at_load

    got = imported_at_load("verl", v, commit=checkout_commit(snap, "verl"))
    at = got[1].modules.get("megatron") if got is not None else None
    where = (f" verl {v}'s modules import megatron at module level ({at}) when "
             f"{' / '.join(m for m in got[1].entries if 'megatron' in m)} load (read from {got[0].where})"
             if got is not None and at else f" verl {v}'s megatron workers import megatron.core when they load")
    checkout = mg.commit or mg.ref
    from doctor.installers.fixline import doctor_install
    from doctor.installers.gitsrc import checkout_lines

    clone = checkout_lines(mg.repo, mg.ref, mg.commit, "Megatron-LM")
    if mg.install == "pythonpath":
        lines = (*clone, 'export PYTHONPATH="$PWD/Megatron-LM:$PYTHONPATH"')
        how = "and put the checkout on PYTHONPATH"
    else:
        lines = (*clone, "pip install --no-deps -e Megatron-LM")
        how = "and install it editable with --no-deps (its dependencies name an unpinned torch)"

    yield finding(
        "megatron-missing", "error", ("megatron", "verl"),
        f"Megatron is not importable: {p.name} runs verl's megatron strategy on Megatron-LM {mg.ref}",
        detail=f"Neither the megatron-core distribution nor a Megatron-LM checkout on the path provides `megatron`.{where}"
               ": a megatron-strategy run (the one MindSpeed patches on Ascend) stops with ModuleNotFoundError: No "
               "module named 'megatron'. pip does not install it with verl: its metadata names no megatron-core, or "
               "only under an extra.",
        evidence={"verl": v, "profile": p.name, "megatron_lm": mg.ref, "megatron-core": None,
                  **({"imported_at": at} if at else {})},
        fix=f"Fetch Megatron-LM at {mg.ref} ({mg.repo}, commit {checkout}, that commit only: not the whole history) "
            f"{how}, as {p.name} documents; keep the Megatron-LM directory, it stays the source Python imports "
            f"megatron from. Or install the whole stack: `{doctor_install(p, snap)}`.",
        commands=lines, source=p.source)


@check("megatron-single-copy", "mindspeed", findings=("megatron-multiple-copies",))
def megatron_single_copy(ctx: CheckContext) -> Iterator[Finding]:
    """Exactly one `megatron` package on the path."""
    snap = ctx.snapshot
    if not isinstance(val(snap.module("megatron"), "origins"), list):
        skip("megatron's import origins are not in the snapshot")
    o = origins(snap, "megatron")
    distinct = list(dict.fromkeys(posixpath.normpath(x) for x in o))
    if len(distinct) > 1:
        yield finding(
            "megatron-multiple-copies", "error", ("megatron", "mindspeed"),
            f"{len(distinct)} copies of megatron are importable",
            detail=f"Python imports {distinct[0]}; the others shadow or are shadowed depending on PYTHONPATH order, so "
                   "MindSpeed and bridges can each end up patching a different Megatron.",
            evidence={"origins": distinct, "megatron-core": ver(snap, "megatron-core"),
                      "PYTHONPATH": snap.getenv("PYTHONPATH") if known(snap.env) else None},
            fix="Keep one Megatron-LM matching the MindSpeed branch: pip uninstall -y megatron-core, or drop the extra "
                "Megatron-LM from PYTHONPATH / MEGATRON_LM_PATH.",
            source="https://github.com/modelscope/ms-swift/issues/9661; https://github.com/modelscope/ms-swift/pull/9245")


@check("transformer-engine", "mindspeed",
       findings=("transformer-engine-npu-missing", "transformer-engine-with-mindspeed"))
def transformer_engine(ctx: CheckContext) -> Iterator[Finding]:
    """No NVIDIA transformer_engine beside MindSpeed <= core_r0.16; core_r0.17+ needs TransformerEngineNPU."""
    snap = ctx.snapshot
    if not _mindspeed_present(snap):
        skip("MindSpeed is not installed (or not known to be)")
    te_mod = snap.module("transformer_engine")
    te_pkgs = [p for p in ("transformer-engine", "transformer-engine-torch", "transformer-engine-cu12") if installed(snap, p)]
    te_present = bool(te_pkgs) or bool(val(te_mod, "origins"))
    target, _ = _ms_line(snap)
    needs_tenpu = target is not None and target >= (0, 17)
    origins_ = val(te_mod, "origins") or []
    npu_fork = any("npu" in o.lower() for o in origins_)
    if needs_tenpu:
        if te_mod is None or (known(te_mod) and not te_present):
            yield finding(
                "transformer-engine-npu-missing", "error", ("transformer-engine", "mindspeed"),
                "MindSpeed core_r0.17+ needs TransformerEngineNPU installed as `transformer_engine`",
                evidence={"mindspeed_target": f"{target[0]}.{target[1]}" if target else None},
                fix="Install MegatronAdaptor, then TransformerEngineNPU (gitcode.com/Ascend/TransformerEngineNPU), then MindSpeed.",
                source="https://github.com/Ascend/MindSpeed/blob/4213c91313fe4de6da12794109515f6275572750/README.md")
        return
    if te_present and not npu_fork:
        yield finding(
            "transformer-engine-with-mindspeed", "error", ("transformer-engine", "mindspeed"),
            "NVIDIA transformer_engine is installed next to MindSpeed",
            detail="MindSpeed stubs transformer_engine only when importing it fails; a real (CUDA) TE crashes in "
                   "_load_cudnn during `import mindspeed.megatron_adaptor`.",
            evidence={"packages": te_pkgs, "origins": origins_},
            fix="pip uninstall -y transformer-engine transformer-engine-torch transformer-engine-cu12",
            source="https://github.com/modelscope/ms-swift/issues/6968; https://github.com/Ascend/MindSpeed/blob/4213c91313fe4de6da12794109515f6275572750/README.md")


# Megatron-Core's torch_dist checkpoint writer against torch's. Read from the PyPI wheels: megatron-core 0.12.0, 0.12.1,
# 0.12.2 and 0.12.3 (megatron/core/dist_checkpointing/strategies/filesystem_async.py, write_preloaded_data) call
# torch.distributed.checkpoint.filesystem._write_item(*transform_list, stream, data, write_item, storage_key); torch
# 2.8.0 added a required `serialization_format` parameter (2.7.1's signature ends `storage_key, safe_tensors=False`;
# 2.8.0, 2.9.0 and 2.10.0 end `storage_key, serialization_format`), so each save raises TypeError: _write_item()
# missing 1 required positional argument: 'serialization_format'. Every torch_dist save goes through it: the sync
# save() of an AsyncSaveShardedStrategy runs async_save() and waits (strategies/base.py). megatron-core 0.13.0 passes
# it when torch's signature has it. verl patches Megatron-Core 0.12.1 (exactly) with 0.13's writer at import
# (verl/models/mcore/patch.py, applied in verl/models/mcore/__init__.py): v0.7.1 for torch 2.8.0
# (apply_patch_megatron_v012_with_torch_v28), v0.8.0 and later, through main read at 2026-08-22, for 2.8.0 and 2.9.0
# (apply_patch_megatron_v012_with_torch_v28_v29); no release read patches 2.10 or another 0.12.x. A verl whose
# release (or presence) the snapshot does not state may patch a 0.12.1 + 2.8 / 2.9 pair: then nothing is said.
# 0.12.4 is no PyPI release: it is the core_r0.12.0 branch head (5cb6dbb, "chore: Release 0.12.3", which only sets
# package_info.py to 0.12.4 on top of core_v0.12.3), so its filesystem_async.py is 0.12.3's, read in the Megatron-LM
# mirror: the same call. MindSpeed (master 0c6c0cea, the A5 stack's) patches FileSystemWriterAsync.preload_tensors
# only, not write_preloaded_data. No later 0.12.x exists on the branch.
MEGATRON_CKPT_WRITER = ">=0.12.0,<0.12.5"
TORCH_SERIALIZATION_FORMAT = "2.8.0"
VERL_CKPT_PATCH = (("0.8.0", ("2.8.0", "2.9.0")), ("0.7.1", ("2.8.0",)))  # newest first: verl release, torch it covers
SRC_MEGATRON_CKPT = (
    "https://pypi.org/project/megatron-core/0.12.1/#files; "
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.12.1/megatron/core/dist_checkpointing/strategies/filesystem_async.py; "
    "https://github.com/NVIDIA/Megatron-LM/blob/5cb6dbb3ed04e6fa11a862d90fe898ac2d3ddfad/megatron/core/dist_checkpointing/strategies/filesystem_async.py; "
    "https://github.com/pytorch/pytorch/blob/v2.8.0/torch/distributed/checkpoint/filesystem.py; "
    "https://github.com/verl-project/verl/blob/v0.8.0/verl/models/mcore/patch.py")


@check("megatron-ckpt-writer", "mindspeed", findings=("megatron-ckpt-save-fails",))
def megatron_ckpt_writer(ctx: CheckContext) -> Iterator[Finding]:
    """Megatron-Core 0.12.x beside torch 2.8 or later cannot save a torch_dist checkpoint unless verl's patch covers
    the pair: a warning (training runs; the first checkpoint save fails). Silent where a verl of unknown release (or
    presence) could be the one that patches it."""
    snap = ctx.snapshot
    mv, tv = _megatron_version(snap), ver(snap, "torch")
    if mv is None or tv is None:
        skip("Megatron's or torch's version is not known")
    m, t = parse_pkg_version(mv), parse_pkg_version(tv)
    if m is None or t is None or pkg_satisfies(mv, MEGATRON_CKPT_WRITER) is not True:
        return
    tbase = ".".join(map(str, release(t)))
    if Version(tbase) < Version(TORCH_SERIALIZATION_FORMAT):
        return
    covering = [first for first, torches in VERL_CKPT_PATCH if m.base_version == "0.12.1" and tbase in torches]
    v = pver(snap, "verl")
    if covering and v is None and not absent(snap, "verl"):
        return  # a verl that may patch the pair, of a release (or presence) the snapshot does not state: unknown
    if covering and v is not None and Version(v.base_version) >= Version(covering[-1]):
        return  # verl's import-time patch replaces the writer
    hedge = ""
    if covering:
        hedge = f" verl {covering[-1]} and later patch this pair at import; " + (
            f"verl {ver(snap, 'verl')} does not." if v is not None else "verl is not installed here.")
    yield finding(
        "megatron-ckpt-save-fails", "warning", ("megatron", "torch"),
        f"Megatron-Core {mv} cannot save a torch_dist checkpoint with torch {tv}",
        detail=f"Megatron-Core {m.base_version}'s checkpoint writer (dist_checkpointing/strategies/filesystem_async.py) "
               "calls torch's _write_item without the `serialization_format` argument torch 2.8.0 made required: "
               "every save (the sync save runs the async writer) raises `TypeError: _write_item() missing 1 required "
               "positional argument: 'serialization_format'`. Training runs until its first checkpoint." + hedge,
        evidence={"megatron": mv, "torch": tv, "verl": ver(snap, "verl"),
                  "verl_patches_from": covering[-1] if covering else None},
        fix=(f"Upgrade verl to {covering[-1]} or later (it patches Megatron-Core 0.12.1 for torch {tbase}), or "
             if covering else "") + f"use a torch before {TORCH_SERIALIZATION_FORMAT} with Megatron-Core "
            f"{m.base_version}, or Megatron-Core 0.13.0 or later (with the MindSpeed branch for it).",
        source=SRC_MEGATRON_CKPT)


# the other trainers whose own Ascend docs pin a Megatron-LM and a MindSpeed ref (ms-swift's NPU guide, MindSpeed-LLM's
# and MindSpeed-RL's version tables; LLaMA-Factory's NPU docs name neither)
OWN_MEGATRON_TRAINERS = tuple(t for t in TRAINER_CANN_MINIMUM if t != "llamafactory")


@check("mindspeed-profile", "mindspeed", findings=("megatron-off-profile", "mindspeed-off-profile"))
def mindspeed_profile(ctx: CheckContext) -> Iterator[Finding]:
    """MindSpeed and Megatron are the refs the verified stack documents."""
    snap, p = ctx.snapshot, ctx.profile
    if p is None:
        skip("no verified stack (profile) applies")
    other = next((t for t in OWN_MEGATRON_TRAINERS if installed(snap, t)), None)
    if other is not None and not installed(snap, "verl"):
        # the profiles are verl's stacks: another trainer that pins its own Megatron / MindSpeed (ms-swift's NPU guide:
        # Megatron-LM v0.15.3 + MindSpeed core_r0.15.3 on CANN 8.5.1) is judged by its own tables, not by verl's refs
        skip(f"{other} is installed without verl: the MindSpeed and Megatron refs it documents are its own")
    ms = p.git.get("mindspeed")
    if ms is not None and _mindspeed_present(snap):
        target, why = _ms_line(snap)
        want = parse_pkg_version(ms.version)
        if target and want is not None and target != (want.major, want.minor):
            yield finding(
                "mindspeed-off-profile", "warning", ("mindspeed",),
                f"MindSpeed ({why}) is not the {ms.ref} that {p.name} documents",
                evidence={"mindspeed": why, "profile_ref": ms.ref, "profile": p.name},
                fix=f"git -C <MindSpeed> checkout {ms.commit or ms.ref}", source=p.source)
    mg = p.git.get("megatron-lm")
    mv = parse_pkg_version(_megatron_version(snap))
    want = parse_pkg_version(mg.version) if mg else None
    if mg is not None and mv is not None and want is not None and (mv.major, mv.minor) != (want.major, want.minor):
        yield finding(
            "megatron-off-profile", "warning", ("megatron",),
            f"Megatron {mv} is not the {mg.ref} that {p.name} documents",
            evidence={"megatron": str(mv), "profile_ref": mg.ref, "profile": p.name},
            fix=f"git -C <Megatron-LM> checkout {mg.ref}", source=p.source)
