"""vLLM and vllm-ascend: the seed rule, the vllm-ascend release row (vLLM, torch, torch-npu, CANN, chips),
the build-time device type, and vllm-ascend runtime settings."""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import re
from collections.abc import Iterator
from typing import NamedTuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from doctor.checks.commands import install_dry_run
from doctor.checks.declared import declared_rejects_pair
from doctor.checks.facts import arch as host_arch
from doctor.checks.facts import cann, driver, env, env_known, env_unset, family, installed, pver, val, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.matrix import (
    SRC_VA_MATRIX,
    SRC_VA_POLICY,
    VLLM_ASCEND,
    CannAlt,
    VllmAscendRow,
    install_doc,
    vllm_ascend_row,
)
from doctor.knowledge.releases import knowledge_fix
from doctor.knowledge.seed import SEED_RULE_PACKAGES, SEED_RULE_SOURCE, seed_rule_violation
from doctor.knowledge.versions import CannVersion, DriverVersion, parse_pkg_version, pkg_satisfies, release
from doctor.report import Finding, finding
from doctor.snapshot.model import Snapshot, known

# vllm-ascend's release notes (main, 2026-08-22), every release's section
_VA_NOTES = ("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/docs/source/"
             "user_guide/release_notes.md")


# A vllm-ascend source tree names the vLLM it pairs with (https://github.com/vllm-project/vllm-ascend/pull/9801, in
# every tree since v0.21.0rc1): `.github/vllm-release-tag.commit`, the vLLM release its CI tests (v0.23.0 at tag
# v0.23.0, v0.27.1 on main at 2026-08-22), and `.github/vllm-main-verified.commit`, the vLLM main commit it is verified
# against. main keeps no code for older vLLM releases once the tag moves ("removes the remaining vLLM v0.23.0
# compatibility paths from main": https://github.com/vllm-project/vllm-ascend/pull/12019), so for a checkout this,
# not the nearest release's row of the matrix, is the pairing.
_VA_REPO = "https://github.com/vllm-project/vllm-ascend"
_ANCHOR_PR = "https://github.com/vllm-project/vllm-ascend/pull/9801"
_RELEASE_FILE = ".github/vllm-release-tag.commit"
_MAIN_FILE = ".github/vllm-main-verified.commit"
# a setuptools_scm version's local label names the commit built: 0.27.2.dev37+g1a2b3c4d.empty
_SCM_SHA = re.compile(r"g([0-9a-f]{7,40})")


class AnchorVerdict(NamedTuple):
    """What the checkout's anchor says about the installed vLLM: `agrees`, and the refs compared."""

    agrees: bool
    main_build: bool  # vLLM is a build of a main commit (compared with the main-verified commit)
    anchor: str  # the tag or commit the tree names
    vllm: str  # the installed vLLM (version, or the commit built)
    file: str  # the anchor file compared with
    source: str
    # a main build of another vLLM series than the release a *release* tree names (v0.23.0 beside 0.27.2.devN): what
    # vllm-ascend-matrix calls a plugin that cannot load, an error still, not merely unverified
    off_series: bool = False


def _vllm_main_commit(snap: Snapshot, v: Version) -> str | None:
    """The vLLM main commit installed: the `g<sha>` of a dev version's local label, else the commit of a vLLM
    checkout the module is imported from; None for a release build (or when neither says)."""
    if not (v.is_devrelease or v.local):
        return None
    for part in (v.local or "").split("."):
        m = _SCM_SHA.fullmatch(part)
        if m:
            return m.group(1)
    if not v.is_devrelease:
        return None  # 0.27.1+empty: a release, its local label only says how it was built
    commit = val(val(snap.module("vllm"), "git"), "commit")
    return commit if isinstance(commit, str) else None


def anchor_verdict(snap: Snapshot) -> AnchorVerdict | None:
    """The vllm-ascend checkout's own pairing with the installed vLLM, or None when it cannot be decided (no
    checkout or no anchor file in it, vLLM's version unknown, a dev vLLM whose commit is unknown). Versions are
    compared as versions: `v0.27.1` names 0.27.1, and `0.27.1+empty` (vLLM built with VLLM_TARGET_DEVICE=empty)
    is that release."""
    git = val(snap.module("vllm_ascend"), "git")
    v = parse_pkg_version(snap.version("vllm"))  # also a build without tags (0.1.devN+g<sha>): its commit counts
    if git is None or v is None:
        return None
    at = val(git, "commit")
    blob = f"{_VA_REPO}/blob/{at}/" if isinstance(at, str) else None
    main = _vllm_main_commit(snap, v)
    if v.is_devrelease or main is not None:
        anchor = val(git, "vllm_main_verified")
        if main is None or not isinstance(anchor, str):
            return None
        same = anchor.startswith(main) or main.startswith(anchor)
        rel = parse_pkg_version(val(git, "vllm_release_tag"))
        vav = pver(snap, "vllm-ascend")
        release_tree = isinstance(val(git, "tag"), str) or (vav is not None and not vav.is_devrelease and not vav.local)
        off = release_tree and rel is not None and release(Version(v.public), 2) != release(rel, 2)
        return AnchorVerdict(same, True, anchor, main, _MAIN_FILE, f"{blob}{_MAIN_FILE}" if blob else _VA_REPO,
                             off_series=not same and off)
    tag = val(git, "vllm_release_tag")
    want = parse_pkg_version(tag)
    if want is None:
        return None
    return AnchorVerdict(Version(v.public) == want, False, str(tag), str(ver(snap, "vllm")), _RELEASE_FILE,
                         f"{blob}{_RELEASE_FILE}" if blob else _VA_REPO)


@check("vllm-ascend-vllm-anchor", "vllm",
       findings=("vllm-ascend-vllm-anchor-mismatch", "vllm-ascend-vllm-main-unverified"))
def vllm_ascend_vllm_anchor(ctx: CheckContext) -> Iterator[Finding]:
    """A vllm-ascend source checkout beside the vLLM its own tree names (see `anchor_verdict`). When this decides
    the pair, vllm-ascend-matrix does not judge it again from the nearest release's row."""
    snap = ctx.snapshot
    a = anchor_verdict(snap)
    if a is None:
        skip("vllm-ascend is not a checkout naming its vLLM, or the installed vLLM is not known")
    if a.agrees:
        return
    git = val(snap.module("vllm_ascend"), "git")
    where = git.extra.get("root")  # what collect records beside the git facts (not a model field)
    tree = f"the vllm-ascend checkout{f' at {where}' if where else ''}"
    if a.main_build:
        tag = val(git, "vllm_release_tag")
        yield finding(
            "vllm-ascend-vllm-main-unverified", "error" if a.off_series else "warning", ("vllm", "vllm-ascend"),
            f"vLLM is built from main commit {a.vllm}, not the commit {tree} is verified against ({a.anchor[:12]})"
            + (f", and is not of the vLLM series of the release it pairs with ({tag})" if a.off_series else ""),
            detail=f"{tree[0].upper()}{tree[1:]} names in {a.file} the vLLM main commit its CI verified it with. "
                   + (f"It is a release tree, which targets vLLM {tag} (its {_RELEASE_FILE}); vLLM {ver(snap, 'vllm')} "
                      "is a build of another series, whose interfaces the release's platform plugin was not written "
                      "for (a release beside another vLLM series: see vllm-ascend-vllm-mismatch)."
                      if a.off_series else
                      "Another main commit is untested with this vllm-ascend, not known to be broken: vLLM main changes "
                      "the interfaces the platform plugin uses between those commits."),
            evidence={"vllm_commit": a.vllm, "verified_commit": a.anchor, "vllm": ver(snap, "vllm"),
                      "vllm_release_tag": tag, "file": a.file},
            fix=(f"Install vLLM {tag}, the release this tree pairs with, built the Ascend way: git clone --depth 1 "
                 f"--branch {tag} https://github.com/vllm-project/vllm && cd vllm && VLLM_TARGET_DEVICE=empty pip "
                 "install -e ." if a.off_series else
                 f"Build vLLM at {a.anchor} with VLLM_TARGET_DEVICE=empty (git checkout {a.anchor} && "
                 "VLLM_TARGET_DEVICE=empty pip install -e .)"
                 + (f", or the release the checkout pairs with, {tag}." if isinstance(tag, str) else ".")),
            source=f"{a.source}; {_ANCHOR_PR}" + (f"; {SRC_VA_POLICY}" if a.off_series else ""))
        return
    want = a.anchor[1:] if a.anchor[:1] in "vV" else a.anchor
    got = pver(snap, "vllm")
    yield finding(
        "vllm-ascend-vllm-anchor-mismatch", "error", ("vllm", "vllm-ascend"),
        f"vllm {a.vllm} is not the vLLM release {tree} pairs with ({a.anchor}, its {a.file})",
        detail=f"A vllm-ascend tree names in {a.file} the one vLLM release its CI tests it with; its main branch drops "
               "the code for older vLLM releases when that tag moves (https://github.com/vllm-project/vllm-ascend/pull/"
               "12019), and a release tree targets its own. Another vLLM breaks the platform plugin's imports.",
        evidence={"vllm": a.vllm, "vllm_release_tag": a.anchor, "vllm-ascend": ver(snap, "vllm-ascend"),
                  "vllm_ascend_commit": val(git, "commit"), "file": a.file},
        fix=f"Install vLLM {want} built the Ascend way, as vllm-ascend's installation guide does: git clone --depth 1 "
            f"--branch {a.anchor} https://github.com/vllm-project/vllm && cd vllm && VLLM_TARGET_DEVICE=empty pip "
            f"install -e . (or check out the vllm-ascend tree that pairs with vLLM {got.public if got else a.vllm}).",
        source=f"{a.source}; {_ANCHOR_PR}")


@check("vllm-cann-minimum", "vllm", findings=("vllm-below-minimum-for-cann",))
def vllm_cann_minimum(ctx: CheckContext) -> Iterator[Finding]:
    """The seed rule: CANN newer than 8.3.RC1 needs vllm and vllm-ascend >= 0.9.1."""
    snap = ctx.snapshot
    c = cann(snap)
    if c is None:
        skip("the CANN version is not known")
    for pkg in SEED_RULE_PACKAGES:
        v = ver(snap, pkg)
        msg = seed_rule_violation(c[0], pkg, v)
        if msg:
            pin = ctx.profile.pin(pkg) if ctx.profile else None
            yield finding(
                "vllm-below-minimum-for-cann", "error", (pkg, "cann"), f"{pkg} {v} is too old for CANN {c[0]}",
                detail="CANN newer than 8.3.RC1 needs vllm and vllm-ascend 0.9.1 or newer.",
                evidence={pkg: v, "cann": c[0], "minimum": "0.9.1"},
                fix=f"Install the stack for CANN {c[0]}" + (f" ({pkg}{pin})" if pin else "") + ".",
                commands=(install_dry_run(snap, ctx.profile),) if ctx.profile else (),
                source=SEED_RULE_SOURCE)


@check("vllm-ascend-matrix", "vllm",
       findings=("vllm-ascend-cann-pairing", "vllm-ascend-chip-unsupported", "vllm-ascend-newer-than-known",
                 "vllm-ascend-python-unsupported", "vllm-ascend-torch-mismatch", "vllm-ascend-torch-npu-pairing",
                 "vllm-ascend-torch-npu-unreleased-build", "vllm-ascend-triton-ascend-pairing",
                 "vllm-ascend-vllm-mismatch"))
def vllm_ascend_matrix(ctx: CheckContext) -> Iterator[Finding]:
    """vllm-ascend's release pins: its vLLM, torch (compiled ops: an ABI pin), torch-npu, CANN and chips."""
    snap = ctx.snapshot
    va = ver(snap, "vllm-ascend")
    row = vllm_ascend_row(va)
    if va is None:
        skip("vllm-ascend is not installed (or not known to be)")
    if row is None:
        vp = pver(snap, "vllm-ascend")
        newest = max(Version(r.version) for r in VLLM_ASCEND if r.branch is None)
        if vp is not None and Version(vp.public) > newest:
            yield finding(
                "vllm-ascend-newer-than-known", "info", ("vllm-ascend",),
                f"vllm-ascend {va} is newer than the release matrix the doctor knows (up to {newest})",
                evidence={"vllm-ascend": va, "newest_known": str(newest)}, fix=knowledge_fix(),
                source=next(r.source for r in VLLM_ASCEND if Version(r.version) == newest))
        # not in the matrix: its pins could not be judged (skipped, never a pass; what was found stands)
        skip(f"vllm-ascend {va} is not in the release matrix the doctor knows")
    vav = pver(snap, "vllm-ascend")
    branch_build = vav is not None and (vav.is_devrelease or vav.local is not None)
    vl = pver(snap, "vllm")
    # A branch build beside a vLLM of another series than its release's is a main build that tracks newer vLLM: its
    # commits have moved the release's pins (a main build 1570 commits past v0.19.1rc2 ran vLLM 0.27.1 and torch
    # 2.10.0: https://github.com/vllm-project/vllm-ascend/issues/15035). On the release's own vLLM series it is the
    # release line, whose pins hold.
    got = Version(vl.public) if vl is not None else None
    wants = [Version(w) for w in row.vllm_versions()]
    series = got is not None and any(got.release[:2] == w.release[:2] for w in wants)
    moved = branch_build and got is not None and not series
    # a checkout whose own tree names its vLLM is judged by that (vllm-ascend-vllm-anchor): one verdict per pair
    if got is not None and anchor_verdict(snap) is None:
        if not (series if branch_build else got in wants):
            # A release tracks one vLLM release series ("publish versions matching vLLM", versioning policy); only
            # main / branch builds keep compatibility code for the latest one or two vLLM releases. Another series
            # beside a release is a plugin that cannot load; the same series is an untested build (warning).
            yield finding(
                "vllm-ascend-vllm-mismatch", "warning" if branch_build or series else "error", ("vllm", "vllm-ascend"),
                f"vllm {ver(snap, 'vllm')} is not the vLLM that vllm-ascend {va} targets ({row.vllm})",
                detail="Each vllm-ascend release tracks one vLLM release (RCs included: 0.14.0rc1 -> 0.14.1, 0.8.5rc1 -> "
                       "0.8.5.post1, 0.11.0rc0 -> 0.11.0rc3); other vLLMs break its platform plugin imports.",
                evidence={"vllm": ver(snap, "vllm"), "vllm-ascend": va, "expected_vllm": row.vllm},
                fix=f"Build vLLM v{row.vllm} with VLLM_TARGET_DEVICE=empty (pip install -e . from the tag).",
                source=f"{row.source}; {SRC_VA_POLICY}")
    t = pver(snap, "torch")
    if t is not None and row.torch.startswith("==") and pkg_satisfies(".".join(map(str, release(t))), row.torch) is False:
        yield finding(
            "vllm-ascend-torch-mismatch", "warning" if moved else "error", ("torch", "vllm-ascend", "vllm"),
            f"torch {ver(snap, 'torch')} is not the torch vllm-ascend {va} is built for ({row.torch[2:]})"
            + (f", the pin of the nearest release before it ({row.version})" if moved else ""),
            detail="vllm-ascend's custom ops are compiled against one torch; installing a vLLM that pulls a newer torch "
                   "(e.g. vllm 0.11.0 wants torch 2.8.0, vllm-ascend 0.11.0 pins 2.7.1) leaves them unloadable."
                   + (f" This is a branch build beside vLLM {ver(snap, 'vllm')}, not the vLLM series of {row.version} "
                      f"({row.vllm}): a main build that tracks newer vLLM, whose commits have moved the release's pins "
                      "(a `.devN` version is N commits past it), so the release's pin is a hint here, not a verdict."
                      if moved else ""),
            evidence={"torch": ver(snap, "torch"), "vllm-ascend": va, "vllm": ver(snap, "vllm"), "required": row.torch},
            fix=f"Install vllm first and vllm-ascend second so torch=={row.torch[2:]} and its torch-npu are restored "
                "(pip install --force-reinstall --no-deps torch==... torch-npu==...).",
            source=f"{row.source}; https://github.com/vllm-project/vllm-ascend/issues/5710")
    tn = ver(snap, "torch-npu")
    if tn is not None and row.torch_npu and not any(pkg_satisfies(tn, f"=={x}") for x in row.torch_npu_versions()):
        tnv = pver(snap, "torch-npu")
        pinv = Version(row.torch_npu[2:])
        # vllm-ascend's own metadata pins the build too: declared-requirements says so, as the error it is for pip
        if tnv is not None and release(tnv) == release(pinv) and not declared_rejects_pair(ctx, "vllm-ascend", "torch-npu"):
            yield finding(
                "vllm-ascend-torch-npu-pairing", "warning", ("torch-npu", "vllm-ascend"),
                f"torch-npu {tn} is not the build vllm-ascend {va} pins ({row.torch_npu[2:]})",
                detail="Same torch base, different torch-npu post/dev build: usually works, but it is not what vllm-ascend "
                       "was tested with (its FAQ: install a custom torch-npu after vllm-ascend).",
                evidence={"torch-npu": tn, "vllm-ascend": va, "pinned": row.torch_npu[2:]},
                fix=f"pip install torch-npu=={row.torch_npu[2:]} --no-deps (or keep it if your verified stack says so).",
                source=row.source)
    yield from _unreleased_torch_npu(snap, row, va)
    tap = pver(snap, "triton-ascend")
    if tap is not None and row.triton_ascend:
        pins = (row.triton_ascend, *row.triton_ascend_also)
        if all(Version(tap.public) != Version(p) for p in pins):
            yield finding(
                "vllm-ascend-triton-ascend-pairing", "warning", ("triton-ascend", "vllm-ascend"),
                f"triton-ascend {ver(snap, 'triton-ascend')} is not the triton-ascend vllm-ascend {va} pins "
                f"({' / '.join(pins)})",
                detail="vllm-ascend's Triton kernels are written and tested against the triton-ascend its requirements pin; "
                       "triton-ascend is also cut per CANN release.",
                evidence={"triton-ascend": ver(snap, "triton-ascend"), "vllm-ascend": va, "pinned": list(pins)},
                fix=f"pip install --no-deps triton-ascend=={row.triton_ascend} (from the index the vllm-ascend guide names).",
                source=row.source)
    c = cann(snap)
    if c is not None and row.cann:
        # the matrix's CANN, and the ones the release documents for this host (its chip family, its arch, its builds)
        rcs = [CannVersion(x) for x in row.host_canns(*_host(snap))]
        if not any(c[1].is_ambiguous_against(rc) or c[1].series == rc.series for rc in rcs):
            # older than every CANN the release names: its installation guide's "CANN >= X" / "== X | Required for
            # vllm-ascend and torch-npu" is not met (its ops call what that CANN added); another, newer series is a
            # pairing off the matrix (a warning)
            # (a tagged release only: a build of a release branch is not the tag its guide describes, and the verified
            # verl 0.9.0 stack runs releases/v0.23.0 on CANN 9.0.0)
            older = not branch_build and row.branch is None and all(c[1] < rc for rc in rcs)
            # this CANN series is documented for the release only with other torch-npu / triton-ascend builds (the
            # alternative for this chip family or arch first, then the one for any host)
            unmet = next((a for a in sorted(row.cann_alts, key=lambda a: a.on is None)
                          if a.on_host(*_host(snap)[:2]) and (a.torch_npu or a.triton_ascend)
                          and CannVersion(a.cann).series == c[1].series), None)
            builds = _builds(unmet) if unmet else ""
            yield finding(
                "vllm-ascend-cann-pairing", "error" if older else "warning", ("vllm-ascend", "cann"),
                f"vllm-ascend {va} is matrixed with CANN {row.cann}, this host has CANN {c[0]}"
                + (", older than the CANN it requires" if older else "")
                + (f", documented for it only with {builds}" if unmet else ""),
                detail=(f"vllm-ascend {va}'s installation guide lists CANN {row.cann} as \"Required for vllm-ascend and "
                        "torch-npu\": its custom ops and torch-npu call what that CANN ships." if older else
                        f"Its CANN {unmet.cann} is documented with the builds cut for it: {unmet.says}." if unmet else
                        "This CANN series is off the release's compatibility matrix."),
                evidence={"vllm-ascend": va, "cann": c[0], "expected_cann": row.cann}
                | ({"documented_with": builds} if unmet else {}),
                fix=(f"pip install --no-deps {_pins(unmet)} (the builds vllm-ascend {va}'s release notes name for CANN "
                     f"{unmet.cann}), or use CANN {row.cann} with the release's own pins." if unmet else
                     f"Use the vllm-ascend release for CANN {c[0]} (see `doctor profiles`)"
                     + (f", or upgrade CANN to {row.cann}." if older else ".")),
                source=(f"{install_doc(row.version)}; {row.source}" if older and row.branch is None else
                        f"{unmet.source}; {row.source}" if unmet else row.source))
    py = val(snap.python, "version")
    if py and pkg_satisfies(py, row.python) is False and release(Version(py), 2) >= (3, 10):
        yield finding(
            "vllm-ascend-python-unsupported", "warning", ("python", "vllm-ascend"),
            f"vllm-ascend {va} supports Python {row.python}, this is {py}",
            evidence={"python": py, "vllm-ascend": va, "requires": row.python},
            fix="Use a Python inside the supported range (wheels exist only for those).", source=SRC_VA_MATRIX)
    fam = family(snap)
    if fam == "A3" and not row.a3:
        yield finding(
            "vllm-ascend-chip-unsupported", "warning", ("vllm-ascend", "npu"),
            f"vllm-ascend {va} does not list Atlas A3 as supported",
            evidence={"vllm-ascend": va, "chip": fam}, fix="Use vllm-ascend 0.9.1 or newer on A3.",
            source=_A3_SOURCE)


def _host(snap: Snapshot) -> tuple[str | None, str | None, str | None, str | None]:
    """What a release's CANN alternatives are bound to (CannAlt): chip family, CPU arch, torch-npu, triton-ascend."""
    return family(snap), host_arch(snap), ver(snap, "torch-npu"), ver(snap, "triton-ascend")


def _builds(a: CannAlt) -> str:
    return " and ".join(f"{n} {v}" for n, v in (("torch-npu", a.torch_npu), ("triton-ascend", a.triton_ascend)) if v)


def _pins(a: CannAlt) -> str:
    return " ".join(f"{n}=={v}" for n, v in (("torch-npu", a.torch_npu), ("triton-ascend", a.triton_ascend)) if v)


def _unreleased_torch_npu(snap: Snapshot, row: VllmAscendRow, va: str) -> Iterator[Finding]:
    """Early vllm-ascend releases whose installation guide says they rely on an unreleased torch-npu nightly
    (`row.torch_npu_unreleased`): a released torch-npu older than that base's final release (2.5.1rc1, 2.4.0) lacks
    ops the release calls (AttributeError on torch_npu._npu_*). A nightly at or after the one named, or the final
    release of that base and later, are not judged here."""
    need_s = row.torch_npu_unreleased
    tnv = pver(snap, "torch-npu")
    if not need_s or tnv is None:
        return
    need = Version(need_s)
    final = Version(".".join(map(str, need.release)))
    pub = Version(tnv.public)
    if pub >= final or (pub.is_devrelease and pub >= need):
        return
    tn = ver(snap, "torch-npu")
    yield finding(
        "vllm-ascend-torch-npu-unreleased-build", "error", ("torch-npu", "vllm-ascend"),
        f"vllm-ascend {va} relies on the unreleased torch-npu {need_s} build; torch-npu {tn} lacks what it calls",
        detail=f"vllm-ascend {va}'s installation guide installs torch-npu {need_s} by hand \"because vllm-ascend relies on "
               f"an unreleased version of torch-npu\"; released builds before {final} do not have the NPU ops it calls "
               "(AttributeError: module 'torch_npu' has no attribute '_npu_...').",
        evidence={"torch-npu": tn, "vllm-ascend": va, "required_build": need_s},
        fix=f"Install the torch-npu {need_s} wheel the guide names (or a later vllm-ascend, which works with a released "
            "torch-npu).", source=install_doc(row.version))


# the first release whose FAQ lists Atlas A3 Training among the supported products
_A3_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/v0.9.1/docs/source/faqs.md"

# Chip families per vllm-ascend release, from its FAQ "What devices are currently supported?" at each tag (and the
# installation guide's SOC list for the Ascend 950): (family, first release that supports it or None for none,
# what the source says, source). A3 is judged by the release matrix above (vllm-ascend-chip-unsupported).
_FAQ = "https://github.com/vllm-project/vllm-ascend/blob/{}/docs/source/faqs.md"
CHIP_SUPPORT = (
    ("310P", "0.10.0rc1", "Atlas 300I (310P) is \"NOT supported yet\" up to v0.9.x; experimental from v0.10.0rc1 "
     "(whose 310P build v0.11.0's FAQ calls the stable one)", _FAQ.format("v0.9.1") + "; " + _FAQ.format("v0.10.0rc1")),
    ("910", None, "Ascend 910 / 910 Pro B (first generation) are \"NOT supported yet, unplanned\" in every release",
     _FAQ.format("v0.23.0")),
    ("310", None, "Atlas 200I A2 (Ascend-cann-kernels-310b: the 310B chips) is \"NOT supported yet, unplanned\" in every "
     "release", _FAQ.format("v0.23.0")),
    ("950", "0.17.0rc1", "the Ascend 950 (Atlas A5) build target (SOC_VERSION ascend950*) first appears in v0.17.0rc1's "
     "installation guide", "https://github.com/vllm-project/vllm-ascend/blob/v0.17.0rc1/docs/source/installation.md"),
)


# Releases whose own FAQ sends a chip family to another release: "[Experimental] Atlas 300I inference series (Atlas 300I
# Duo). Currently for 310I Duo, the stable version is vllm-ascend v0.10.0rc1" (from v0.11.0rc1; the maintainers'
# doc change, https://github.com/vllm-project/vllm-ascend/pull/3455, says why:
# https://github.com/vllm-project/vllm-ascend/pull/2614 broke the 310I Duo, "no confirmed timeline for a fix"). The FAQ line stays in every later release, but v0.14.0rc1's release notes
# (Highlights) say "310P support is back now ... only basic dense and vl models are supported with eager mode", so
# the releases it judges end with v0.13.0 (the last before the return: v0.13.0's notes say nothing of 310P).
# (family, first release, last release, the stable one, source)
_VA_NOTES_014 = "https://github.com/vllm-project/vllm-ascend/blob/v0.14.0rc1/docs/source/user_guide/release_notes.md"
CHIP_STABLE_ELSEWHERE = (
    ("310P", "0.11.0rc1", "0.13.0", "0.10.0rc1",
     _FAQ.format("v0.11.0rc1") + "; " + _FAQ.format("v0.13.0") + "; https://github.com/vllm-project/vllm-ascend/pull/3455; "
     + _VA_NOTES_014),
)


# v0.21.0rc1's release notes: the FULL_AND_PIECEWISE graph mode "Requires HDK 25.5.1+ / CANN 8.5.0+"; its Known Issues:
# "HDK < 25.5.1 / CANN < 8.5.0 stacks still have the old stream-budget limitation, which may cause graph capture
# failures or fallback to PIECEWISE mode. Upgrade to HDK 25.5.1+ / CANN 8.5.0+ is recommended."
_GRAPH_HDK = ("0.21.0rc1", "25.5.1")


@check("vllm-ascend-graph-driver", "vllm", findings=("vllm-ascend-graph-driver-old",))
def vllm_ascend_graph_driver(ctx: CheckContext) -> Iterator[Finding]:
    """vllm-ascend 0.21.0rc1 and later with a driver (HDK) older than its graph mode's 25.5.1."""
    snap = ctx.snapshot
    vp, d = pver(snap, "vllm-ascend"), driver(snap)
    if vp is None or d is None:
        skip("vllm-ascend's version or the driver version is not known")
    first, need = _GRAPH_HDK
    nd = DriverVersion(need)
    if Version(vp.public) < Version(first) or d[1].is_ambiguous_against(nd) or not d[1] < nd:
        return
    yield finding(
        "vllm-ascend-graph-driver-old", "warning", ("driver", "vllm-ascend"),
        f"driver {d[0]} is older than the HDK {need} vllm-ascend {ver(snap, 'vllm-ascend')}'s FULL_AND_PIECEWISE graph "
        "mode needs",
        detail="vllm-ascend v0.21.0rc1's release notes: with HDK < 25.5.1 the old stream-budget limitation remains, which "
               "may cause graph capture failures or a fallback to PIECEWISE mode.",
        evidence={"driver": d[0], "vllm-ascend": ver(snap, "vllm-ascend"), "recommended": need},
        fix=f"Upgrade the driver and firmware (HDK) to {need} or newer.", source=_VA_NOTES)


@check("vllm-ascend-chip-support", "vllm", findings=("vllm-ascend-release-chip-unsupported",
                                                    "vllm-ascend-chip-stable-release-elsewhere"))
def vllm_ascend_chip_support(ctx: CheckContext) -> Iterator[Finding]:
    """The installed vllm-ascend release supports this host's chip family (310P, 310B, first-generation 910, 950)."""
    snap = ctx.snapshot
    vp, fam = pver(snap, "vllm-ascend"), family(snap)
    # a family no release supports is judged without the version (a report that names its chip, not its release)
    if (vp is None and not installed(snap, "vllm-ascend")) or not isinstance(fam, str) or not fam:
        skip("vllm-ascend (or its version) or the chip family is not known")
    for chip, first, says, src in CHIP_SUPPORT:
        if fam != chip:
            continue
        if first is not None and (vp is None or Version(vp.public) >= Version(first)):
            continue
        yield finding(
            "vllm-ascend-release-chip-unsupported", "error", ("vllm-ascend", "npu"),
            f"vllm-ascend {ver(snap, 'vllm-ascend') or '(any release)'} does not support the {chip} chip family",
            detail=f"Its FAQ / installation guide: {says}. Its custom operators and kernels are not built for this chip.",
            evidence={"vllm-ascend": ver(snap, "vllm-ascend"), "chip": chip, "first_supported": first},
            fix=(f"Use vllm-ascend {first} or newer on {chip}." if first else
                 f"Run vllm-ascend on a supported chip (Atlas A2 / A3); {chip} is not supported by any release."),
            source=src)
    for chip, first, last, stable, src in CHIP_STABLE_ELSEWHERE:
        if vp is None or fam != chip or not Version(first) <= Version(vp.public) <= Version(last):
            continue
        yield finding(
            "vllm-ascend-chip-stable-release-elsewhere", "error", ("vllm-ascend", "npu"),
            f"vllm-ascend {ver(snap, 'vllm-ascend')} is broken on {chip}: its own FAQ names v{stable} as the stable "
            f"release for this chip",
            detail=f"vllm-ascend {ver(snap, 'vllm-ascend')}'s FAQ: \"Currently for 310I Duo, the stable version is "
                   f"vllm-ascend v{stable}\"; its maintainers pinned that release because a graph-mode change "
                   "(https://github.com/vllm-project/vllm-ascend/pull/2614) broke the Atlas 300I Duo with no fix in sight; "
                   "310P support came back only in v0.14.0rc1 (its release notes).",
            evidence={"vllm-ascend": ver(snap, "vllm-ascend"), "chip": chip, "stable_release": stable},
            fix=f"Use vllm-ascend {stable} (its {chip.lower()} image) on {chip}, or v0.14.0rc1 or later, whose release "
                "notes bring 310P support back (basic dense and VL models, eager mode; more models in later releases).",
            source=src)


@check("vllm-ascend-host-cann", "vllm", findings=("vllm-ascend-chip-needs-cann", "vllm-ascend-arch-needs-cann"))
def vllm_ascend_host_cann(ctx: CheckContext) -> Iterator[Finding]:
    """A vllm-ascend release whose release notes need a newer CANN than its matrix's on some hosts (CannAlt.needs):
    v0.18.0 on 310P ("310P device supporting ... need upgrades CANN version to 9.0.0") and on x86 (a known issue
    "resolved with CANN 9.0.0")."""
    snap = ctx.snapshot
    row, c = vllm_ascend_row(ver(snap, "vllm-ascend")), cann(snap)
    if row is None or c is None:
        skip("vllm-ascend's release (in the matrix) or the CANN version is not known")
    fam, where = family(snap), host_arch(snap)
    for a in row.cann_alts:
        need = CannVersion(a.cann)
        if not a.needs or a.on is None or not a.on_host(fam, where) or c[1].is_ambiguous_against(need) \
                or not c[1] < need:
            continue
        va = ver(snap, "vllm-ascend")
        chip = a.on == fam
        yield finding(
            "vllm-ascend-chip-needs-cann" if chip else "vllm-ascend-arch-needs-cann", a.needs,
            ("vllm-ascend", "cann", "npu") if chip else ("vllm-ascend", "cann", "system"),
            f"vllm-ascend {va} " + (f"supports {a.on} only with CANN {a.cann}, this host has CANN {c[0]}" if chip else
                                    f"has a known issue on {a.on} that CANN {a.cann} fixes; this host has CANN {c[0]}"),
            detail=f"vllm-ascend {va}'s matrix pairs it with CANN {row.cann}; {a.says}.",
            evidence={"vllm-ascend": va, "chip" if chip else "arch": a.on, "cann": c[0], "needs": a.cann},
            fix=f"Install CANN {a.cann} (toolkit, ops and NNAL)" + (f" with {_builds(a)}" if _builds(a) else "")
                + f" on {a.on}.", source=a.source)


# The oldest vllm-ascend release's installation guide: "CANN >= 8.0.0 | Required for vllm-ascend and torch-npu",
# "torch >= 2.5.1 | Required for torch-npu and vllm" (v0.7.1rc1); every later release requires as much or more (the
# release matrix, VLLM_ASCEND).
@check("vllm-ascend-cann-prerelease", "vllm", findings=("vllm-ascend-cann-prerelease",))
def vllm_ascend_cann_prerelease(ctx: CheckContext) -> Iterator[Finding]:
    """A CANN pre-release (8.3.RC1.alpha002, 9.0.0-beta.1, a T or weekly build) beside vllm-ascend, whatever its
    release: the compatibility matrix's "Stable CANN" column names only releases, so no vllm-ascend release was
    tested on it (vllm-ascend's own CI hit torchair failures on one:
    https://github.com/vllm-project/vllm-ascend/issues/3137). Not the one pre-release a release documents for the
    host's chip family (v0.20.2rc1 .. v0.25.1rc1 build their 310P image on CANN 9.1.0-beta.1)."""
    snap = ctx.snapshot
    c = cann(snap)
    if not installed(snap, "vllm-ascend") or c is None:
        skip("vllm-ascend is not installed, or the CANN version is not known")
    if not c[1].is_prerelease:
        return
    row = vllm_ascend_row(ver(snap, "vllm-ascend"))
    if row is not None and any(c[1] == CannVersion(x) for x in row.host_canns(*_host(snap))):
        return  # the release documents this very build for this host (its 310P image on CANN 9.1.0-beta.1)
    stable = sorted({CannVersion(x) for r in VLLM_ASCEND if r.branch is None for x in r.cann_versions()})
    after = [s for s in stable if s > c[1]]
    nearest = after[0] if after else stable[-1]
    users = [r.version for r in VLLM_ASCEND if r.branch is None and str(nearest) in r.cann_versions()]
    va = ver(snap, "vllm-ascend")
    yield finding(
        "vllm-ascend-cann-prerelease", "warning", ("cann", "vllm-ascend"),
        f"CANN {c[0]} is a pre-release, which no vllm-ascend release is tested on",
        detail="vllm-ascend's release compatibility matrix lists one \"Stable CANN\" per release, always a published "
               f"CANN release, never an alpha / beta / T / weekly build; the nearest one to this toolkit is CANN "
               f"{nearest} (vllm-ascend {', '.join(users[:4])}). A pre-release's operators and graph mode (torchair) "
               "may differ from what vllm-ascend was tested on.",
        evidence={"cann": c[0], "vllm-ascend": va, "nearest_stable_cann": str(nearest)},
        fix=f"Install a released CANN that a vllm-ascend release lists (CANN {nearest} for vllm-ascend "
            f"{users[0] if users else 'the matching release'}; see `doctor profiles`).",
        source=f"{SRC_VA_POLICY}; https://github.com/vllm-project/vllm-ascend/issues/3137")


_OLDEST_GUIDE = install_doc("0.7.1rc1")


@check("vllm-ascend-any-release", "vllm", findings=("vllm-ascend-no-release-fits",))
def vllm_ascend_any_release(ctx: CheckContext) -> Iterator[Finding]:
    """vllm-ascend named without its version (a bug report): the stated CANN, torch and Python are within what
    some vllm-ascend release requires. When every release of the matrix rejects one of them, no vllm-ascend the
    reporter can have installed works there, whichever it is."""
    snap = ctx.snapshot
    if not installed(snap, "vllm-ascend") or ver(snap, "vllm-ascend") is not None:
        skip("vllm-ascend is not installed, or its version is known (vllm-ascend-matrix judges that release)")
    rows = [r for r in VLLM_ASCEND if r.branch is None]
    c = cann(snap)
    if c is not None:
        canns = [CannVersion(x) for r in rows for x in r.cann_versions()]
        oldest = min(canns)
        if c[1] < oldest and not c[1].is_ambiguous_against(oldest):
            first = next(r.version for r in rows if oldest in (CannVersion(x) for x in r.cann_versions()))
            yield finding(
                "vllm-ascend-no-release-fits", "error", ("vllm-ascend", "cann"),
                f"no vllm-ascend release supports CANN {c[0]}: the oldest requires CANN {oldest}",
                detail=f"vllm-ascend's installation guide lists CANN as \"Required for vllm-ascend and torch-npu\": {first} "
                       f"needs CANN >= {oldest} and every later release a newer one. The snapshot names vllm-ascend "
                       "without its version, and none of its releases runs on this toolkit.",
                evidence={"cann": c[0], "oldest_supported": str(oldest), "releases_known": len(rows)}, key="cann",
                fix=f"Install CANN {oldest} or newer: the CANN of one vllm-ascend release (see `doctor profiles`).",
                source=f"{_OLDEST_GUIDE}; {SRC_VA_MATRIX}")
    t = pver(snap, "torch")
    if t is not None:
        base = ".".join(map(str, release(t)))
        if not any(pkg_satisfies(base, r.torch) for r in rows):
            floor = min((Version(c.version) for r in rows for c in SpecifierSet(r.torch) if c.operator in ("==", ">=")),
                        default=None)
            yield finding(
                "vllm-ascend-no-release-fits", "error", ("torch", "vllm-ascend"),
                f"no vllm-ascend release works with torch {ver(snap, 'torch')}: the oldest requires torch {floor}",
                detail="Each vllm-ascend release builds its custom ops against one torch (torch >= 2.5.1 \"Required for "
                       "torch-npu and vllm\" from the first release on), and the vLLM releases it plugs into require "
                       "that torch too.",
                evidence={"torch": ver(snap, "torch"), "oldest_supported": str(floor)}, key="torch",
                fix="Install the torch (and torch-npu) of one vllm-ascend release (see `doctor profiles`).",
                source=f"{_OLDEST_GUIDE}; {SRC_VA_MATRIX}")
    py = val(snap.python, "version")
    if py and not any(pkg_satisfies(py, r.python) for r in rows):
        yield finding(
            "vllm-ascend-no-release-fits", "error", ("python", "vllm-ascend"),
            f"no vllm-ascend release supports Python {py}",
            evidence={"python": py, "supported": sorted({r.python for r in rows})}, key="python",
            fix="Use a Python one vllm-ascend release supports (3.10 or 3.11 for current releases).",
            source=SRC_VA_MATRIX)


_DEVICE_TYPES = {"A2": "A2", "A3": "A3", "_310P": "310P", "310P": "310P", "A5": "950"}


@check("vllm-ascend-build", "vllm", findings=("vllm-ascend-build-device-mismatch",))
def vllm_ascend_build(ctx: CheckContext) -> Iterator[Finding]:
    """vllm-ascend's _build_info device type (or SOC) matches the chip it runs on."""
    snap = ctx.snapshot
    m = snap.module("vllm_ascend")
    build = val(m, "build")
    fam = family(snap)
    if not isinstance(build, dict) or not fam:
        skip("vllm-ascend's build info or the chip family is not known")
    dt = build.get("device_type") or build.get("__device_type__")
    soc = build.get("soc_version") or build.get("__soc_version__")
    built = _DEVICE_TYPES.get(str(dt)) if dt else None
    if built is None and soc:
        from doctor.knowledge.chips import soc_family

        built = soc_family(str(soc))
    if built and built != fam:
        yield finding(
            "vllm-ascend-build-device-mismatch", "error", ("vllm-ascend", "npu"),
            f"vllm-ascend was built for {dt or soc}, this host has {fam} chips",
            detail="PyPI wheels are compiled for A2; on A3 the custom kernels do not match the chip.",
            evidence={"built_for": dt or soc, "chip": fam},
            fix="Reinstall vllm-ascend from source on this host (pip install -e . with SOC_VERSION set for the chip) "
                "or from the vendor's per-chip 'variant' index.",
            source="https://github.com/vllm-project/vllm-ascend/issues/6206; https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/setup.py")


# vllm-ascend's sleep-mode allocator asserts that PYTORCH_NPU_ALLOC_CONF has no "expandable_segments:True" from
# v0.9.1rc1 and v0.9.2rc1 on main and in every release from v0.10.0rc1 (read at each tag of the mirror, v0.7.1rc1 to
# v0.25.1rc1); v0.9.0rc2 and earlier and the v0.9.1 line (rc2, rc3, final) test PYTORCH_CUDA_ALLOC_CONF instead.
_CAMEM = ("https://github.com/vllm-project/vllm-ascend/blob/v0.10.0rc1/vllm_ascend/device_allocator/camem.py; "
          "https://github.com/vllm-project/vllm-ascend/blob/v0.25.1rc1/vllm_ascend/device_allocator/camem.py; ")


def _sleep_allocator_reads_npu_conf(snap: Snapshot) -> bool:
    vp = pver(snap, "vllm-ascend")
    if vp is None:
        return False
    pub = Version(vp.public)
    return pub >= Version("0.10.0rc1") or pub in (Version("0.9.1rc1"), Version("0.9.2rc1"))


@check("vllm-ascend-runtime-env", "vllm",
       findings=("vllm-ascend-sleep-expandable-segments", "vllm-version-unparseable", "vllm-ascend-v0-engine",
                 "vllm-version-env-mismatch"))
def vllm_ascend_runtime_env(ctx: CheckContext) -> Iterator[Finding]:
    """Settings vllm-ascend cannot combine: sleep mode with expandable segments; dev vLLM without VLLM_VERSION."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    has_va = installed(snap, "vllm-ascend") or (known(snap.modules) and snap.modules.get("vllm_ascend") is not None
                                                and "vllm_ascend" in snap.modules)
    if not has_va:
        skip("vllm-ascend is not installed (or not known to be)")
    conf = env(snap, "PYTORCH_NPU_ALLOC_CONF") or ""
    if "expandable_segments:true" in conf.replace(" ", "").lower():
        asserts = "expandable_segments:True" in conf and _sleep_allocator_reads_npu_conf(snap)
        yield finding(
            "vllm-ascend-sleep-expandable-segments", "error" if asserts else "warning", ("env", "vllm-ascend"),
            "PYTORCH_NPU_ALLOC_CONF enables expandable segments, which vllm-ascend sleep mode cannot "
            + ("run with" if asserts else "release"),
            detail=("vllm-ascend's sleep-mode allocator (CaMemAllocator, device_allocator/camem.py) asserts "
                    "\"expandable_segments:True\" is not in PYTORCH_NPU_ALLOC_CONF: \"Expandable segments are not "
                    "compatible with memory pool.\" verl's colocated rollout (free_cache_engine, its default) uses "
                    "sleep mode, so the rollout stops when it creates the allocator." if asserts else
                    "With verl's colocated rollout the first sleep does not free the KV cache memory."),
            evidence={"PYTORCH_NPU_ALLOC_CONF": conf, "vllm-ascend": ver(snap, "vllm-ascend")},
            fix='export PYTORCH_NPU_ALLOC_CONF="expandable_segments:False" when vLLM sleep mode (free_cache_engine) is on.',
            source=(_CAMEM if asserts else "") + "https://github.com/modelscope/ms-swift/issues/6636")
    yield from _v0_engine(snap)
    yield from _vllm_version_env(snap)
    vl = ver(snap, "vllm")
    vlp = pver(snap, "vllm")
    # vllm_version_is() compares vllm.__version__ with packaging's Version and raises on InvalidVersion; a vLLM run from
    # a tree without its generated _version.py reports "dev". A PEP 440 dev build (0.13.1.dev3+g1234567.empty) parses
    # and compares (unequal to every release, as a build of main should): nothing to set then, and VLLM_VERSION would
    # send main's code down a release's compatibility path.
    if vl is not None and vlp is None and env_unset(snap, "VLLM_VERSION"):
        yield finding(
            "vllm-version-unparseable", "warning", ("vllm", "env"),
            f"vllm reports version {vl!r}, which vllm-ascend cannot compare",
            detail="vllm-ascend's vllm_version_is() parses vllm.__version__ as a PEP 440 version and raises (\"Invalid vllm "
                   "version ... found. A dev version of vllm is installed probably\") when it is not one, as with a vLLM "
                   "source tree whose _version.py was never generated (it then reports \"dev\").",
            evidence={"vllm": vl},
            fix="export VLLM_VERSION=<the vLLM release the tree is, e.g. 0.13.0> for a release tree; for a tree of vLLM "
                "main, reinstall it from its git clone (VLLM_TARGET_DEVICE=empty pip install -e .), which generates "
                "_version.py, rather than name a release it is not",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/docs/source/faqs.md; "
                   "https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/vllm_ascend/utils.py; "
                   "https://github.com/vllm-project/vllm/blob/v0.13.0/vllm/version.py")


# vllm_version_is() takes VLLM_VERSION, when set, as vLLM's version instead of vllm.__version__ from v0.8.4rc2 on (read
# at every tag of the mirror, v0.7.1rc1 to v0.25.1rc1, and its main of 2026-08-22); vllm-ascend branches on it to
# import and patch what each vLLM release has.
_VLLM_VERSION_IS = ("https://github.com/vllm-project/vllm-ascend/blob/v0.20.2rc1/vllm_ascend/utils.py; "
                    "https://github.com/vllm-project/vllm-ascend/blob/v0.20.2rc1/vllm_ascend/envs.py")


def _vllm_version_env(snap: Snapshot) -> Iterator[Finding]:
    """VLLM_VERSION naming another X.Y.Z than the vLLM installed. The variable exists for a vLLM build whose version
    vllm-ascend cannot read or match (a source tree, an edited X.Y.Z; its FAQ and patch guide); naming another release
    makes vllm-ascend take that release's code paths (imports of modules the installed vLLM may not have). A dev build
    of vLLM (main) stays silent: it is unequal to every release, so naming one is a choice we cannot judge. A value
    packaging cannot parse makes vllm_version_is() raise."""
    raw = env(snap, "VLLM_VERSION")
    vap, vlp = pver(snap, "vllm-ascend"), pver(snap, "vllm")
    if raw is None or not raw.strip() or vap is None or Version(vap.public) < Version("0.8.4rc2"):
        return
    try:
        named: Version | None = Version(raw.strip())
    except InvalidVersion:
        named = None
    have = Version(vlp.public) if vlp is not None else None
    # the same X.Y.Z with another pre/post/local label is the variable's documented use (an edited or patched build
    # of that release, which vllm-ascend should treat as it)
    if named is not None and (have is None or have.is_devrelease or named.release == have.release):
        return
    yield finding(
        "vllm-version-env-mismatch", "warning" if named is not None else "error", ("env", "vllm"),
        (f"VLLM_VERSION={raw} tells vllm-ascend the vLLM release is {named}, but vllm {ver(snap, 'vllm')} is installed"
         if named is not None else f"VLLM_VERSION={raw!r} is not a version vllm-ascend can parse"),
        detail=("vllm-ascend's vllm_version_is() reads VLLM_VERSION, when it is set, instead of the installed vLLM's "
                "version, and chooses what it imports and patches by it: code paths written for "
                f"vLLM {named} run against vLLM {have}." if named is not None else
                "vllm-ascend's vllm_version_is() reads VLLM_VERSION, when it is set, and raises ValueError (\"Invalid "
                "vllm version ... found\") when packaging cannot parse it: vllm-ascend fails as it loads."),
        evidence={"VLLM_VERSION": raw, "vllm": ver(snap, "vllm"), "vllm-ascend": ver(snap, "vllm-ascend")},
        fix=(f"unset VLLM_VERSION (the installed vLLM {have} reports its own version), in every shell and Ray worker"
             if have is not None and not have.is_devrelease else
             "export VLLM_VERSION=<the vLLM release the source tree is, as X.Y.Z, e.g. 0.13.0> in every shell and Ray "
             "worker"),
        source=_VLLM_VERSION_IS)


def _v0_engine(snap: Snapshot) -> Iterator[Finding]:
    """VLLM_USE_V1=0 asks vLLM for its V0 engine. vllm-ascend's release notes: v0.9.1 "V0 Engine is not supported from
    this release. Please always set VLLM_USE_V1=1"; v0.10.0rc1 "V0 is completely removed" (v0.9.2rc1 was the last
    release with V0). From v0.11 vLLM itself dropped the variable
    (https://github.com/vllm-project/vllm-ascend/pull/4086), so there it only does nothing."""
    raw = env(snap, "VLLM_USE_V1")
    vp = pver(snap, "vllm-ascend")
    if raw is None or raw.strip().lower() not in ("0", "false") or vp is None:
        return
    pub = Version(vp.public)
    if not ((release(pub) == (0, 9, 1) and pub.pre is None) or pub >= Version("0.10.0rc1")):
        return
    gone = pub >= Version("0.11.0rc0")
    yield finding(
        "vllm-ascend-v0-engine", "warning" if gone else "error", ("env", "vllm-ascend"),
        f"VLLM_USE_V1={raw} asks for vLLM's V0 engine, which vllm-ascend {ver(snap, 'vllm-ascend')} does not support",
        detail=("vLLM removed VLLM_USE_V1 (vllm-ascend dropped it too): the setting does nothing and V1 runs."
                if gone else "vllm-ascend removed its V0 engine support (release notes of v0.9.1 and v0.10.0rc1); only "
                "the V1 engine works."),
        evidence={"VLLM_USE_V1": raw, "vllm-ascend": ver(snap, "vllm-ascend")},
        fix="unset VLLM_USE_V1 (or export VLLM_USE_V1=1)",
        source=f"{_VA_NOTES}" + ("; https://github.com/vllm-project/vllm-ascend/pull/4086" if gone else ""))


# HCCL's own default for HCCL_BUFFSIZE, in MB; vllm-ascend's MoE dispatch/combine kernels carve their windows
# out of this buffer, so a smaller value makes them address past it.
_HCCL_BUFFSIZE_DEFAULT_MB = 200


@check("hccl-buffsize", "vllm", findings=("hccl-buffsize-below-default",))
def hccl_buffsize(ctx: CheckContext) -> Iterator[Finding]:
    """HCCL_BUFFSIZE set below HCCL's 200 MB default on a vllm-ascend host."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    if not installed(snap, "vllm-ascend"):
        skip("vllm-ascend is not installed (or not known to be)")
    raw = env(snap, "HCCL_BUFFSIZE")
    if not isinstance(raw, str) or not raw.strip().isdigit():
        return
    mb = int(raw.strip())
    if mb >= _HCCL_BUFFSIZE_DEFAULT_MB:
        return
    yield finding(
        "hccl-buffsize-below-default", "warning", ("env", "hccl"),
        f"HCCL_BUFFSIZE={mb} MB is below HCCL's {_HCCL_BUFFSIZE_DEFAULT_MB} MB default",
        detail="vllm-ascend's MoE dispatch/combine operators place their buffers inside the HCCL buffer; with expert "
               "parallelism a small HCCL_BUFFSIZE ends in 'HCCL_BUFFSIZE is too SMALL' or 'The DDR address of the MTE "
               "instruction is out of range'.",
        evidence={"HCCL_BUFFSIZE": raw}, fix="Unset HCCL_BUFFSIZE or raise it (the MoE error prints NEEDED_HCCL_BUFFSIZE).",
        source="https://github.com/vllm-project/vllm-ascend/issues/2674")
