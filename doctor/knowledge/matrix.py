"""Vendor compatibility tables as data: what each upstream says pairs with what, every row with the upstream
URL (at a tag or commit) it was read from.

Checks turn a mismatch against these tables into a *warning* unless the row documents an ABI break; verified
stacks (profiles) that deviate from a table list that as a known deviation. Where two upstream sources
disagree, the row keeps the one it was read from and lists the other as an accepted alternative (`*_also`),
so a pairing that an upstream documents is never reported. `python -m tools.refresh_knowledge` re-reads every
row from clones of the upstream repositories.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

from typing import NamedTuple

from packaging.version import Version

from doctor.knowledge.versions import parse_pkg_version

_VA = "https://github.com/vllm-project/vllm-ascend"
SRC_VA_POLICY = "https://github.com/vllm-project/vllm-ascend/blob/v0.25.1rc1/docs/source/community/versioning_policy.md"
SRC_VA_MATRIX = SRC_VA_POLICY  # the release matrix; each row names its own tag below
# vllm-ascend's release notes, every release, read whole at main 182b75e (2026-08-22, the newest snapshot)
SRC_VA_NOTES = ("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/docs/source/"
                "user_guide/release_notes.md")
SRC_PT_COMPAT = "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/COMPATIBILITY.en.md"
# TorchNPU 26.2.0 (October 2026): its release notes pair all seven 26.2.0 wheels with CANN 9.2.0
SRC_PT_NOTES_2620 = "https://github.com/Ascend/pytorch/blob/04937a13212ac75868424b6e9dae31ff4d9d9866/docs/zh/release_notes.md"
SRC_DRIVER = "https://github.com/Ascend/docs/blob/36ae37d3834de5b9a0449a28e0f442f2bea3593f/_static/package_info.js"
SRC_TORCHVISION = "https://github.com/pytorch/vision/blob/v0.25.0/README.md"


class CannAlt(NamedTuple):
    """A CANN a vllm-ascend release documents for part of its hosts, beside its matrix row's own: on one chip family or
    CPU arch (`on`: vLLM Ascend builds its 310P image on another CANN, Dockerfile.310p), and/or with the torch-npu /
    triton-ascend builds its release notes cut for that CANN ("If CANN has been upgraded to version 9.0.0, please
    upgrade TorchNPU version to 2.9.0.post2"): the CANN is documented there only with those builds. `needs`: on `on`,
    a CANN older than this one is what the notes say the release does not run right with; the value is that finding's
    severity ("error" where every source of the release agrees, "warning" for a known issue the CANN fixes, or where
    the release's own images disagree with its notes)."""

    cann: str
    source: str
    says: str  # what the source says, quoted or paraphrased, for the finding's detail
    on: str | None = None  # a chip family ("310P") or a CPU arch ("x86_64", as host.arch says it); None: any host
    torch_npu: str | None = None  # the torch-npu build that goes with this CANN (a public version)
    triton_ascend: str | None = None  # the triton-ascend build that goes with it
    needs: str | None = None  # "error" / "warning": on `on`, an older CANN is reported (see above)

    def on_host(self, family: str | None, arch: str | None) -> bool:
        return self.on is None or self.on in (family, arch)

    def with_builds(self, torch_npu: str | None, triton_ascend: str | None) -> bool:
        """No installed build other than the ones named (a package not installed, or its version not known, rules
        nothing out)."""
        return _same_build(self.torch_npu, torch_npu) and _same_build(self.triton_ascend, triton_ascend)


def _same_build(want: str | None, got: str | None) -> bool:
    g = parse_pkg_version(got)
    return want is None or g is None or Version(g.public) == Version(want)


class VllmAscendRow(NamedTuple):
    """One vllm-ascend release and the stack its tag pins.

    Read, per tag: vLLM from the Dockerfile's VLLM_TAG (what its CI builds), torch / torch-npu / triton-ascend
    from requirements.txt (what pip enforces), Python and CANN from the tag's versioning_policy.md release
    matrix (CANN from the Dockerfile's base image where the matrix has no row). `*_also` are values another
    upstream source gives for the same release (the matrix vs requirements.txt vs Dockerfile)."""

    version: str
    vllm: str
    python: str
    cann: str | None
    torch: str  # requirement on torch as the tag's requirements say it
    torch_npu: str | None  # exact torch-npu pin, None when unpinned
    a3: bool  # Atlas A3 listed as supported
    source: str = ""
    vllm_also: tuple[str, ...] = ()
    torch_npu_also: tuple[str, ...] = ()
    cann_also: tuple[str, ...] = ()
    triton_ascend: str | None = None
    triton_ascend_also: tuple[str, ...] = ()  # another triton-ascend a source gives for it (the matrix, release notes)
    branch: str | None = None  # a release-branch row: builds of `branch` after its last tag
    note: str = ""
    # the unreleased torch-npu nightly the tag's installation.md installs by hand ("vllm-ascend relies on an
    # unreleased version of torch-npu"): the released torch-npu builds before it lack ops this release calls
    torch_npu_unreleased: str | None = None
    # CANNs the release documents for some hosts only (a chip family, a CPU arch, or with the builds cut for that
    # CANN): not in cann_versions(), which every host may use; see host_canns()
    cann_alts: tuple[CannAlt, ...] = ()

    def vllm_versions(self) -> tuple[str, ...]:
        return (self.vllm, *self.vllm_also)

    def torch_npu_versions(self) -> tuple[str, ...]:
        return ((self.torch_npu[2:],) if self.torch_npu else ()) + self.torch_npu_also

    def cann_versions(self) -> tuple[str, ...]:
        return ((self.cann,) if self.cann else ()) + self.cann_also

    def host_cann_alts(self, family: str | None = None, arch: str | None = None, torch_npu: str | None = None,
                       triton_ascend: str | None = None) -> tuple[CannAlt, ...]:
        """The alternatives documented for this host: its chip family or CPU arch, with the builds it has."""
        return tuple(a for a in self.cann_alts if a.on_host(family, arch) and a.with_builds(torch_npu, triton_ascend))

    def host_canns(self, family: str | None = None, arch: str | None = None, torch_npu: str | None = None,
                   triton_ascend: str | None = None) -> tuple[str, ...]:
        """Every CANN the release documents for this host: the matrix's, and the alternatives that apply to it."""
        alts = self.host_cann_alts(family, arch, torch_npu, triton_ascend)
        return tuple(dict.fromkeys(self.cann_versions() + tuple(a.cann for a in alts)))

    def torch_npu_canns(self, family: str | None = None, arch: str | None = None) -> tuple[tuple[str, str], ...]:
        """(torch-npu build, CANN) pairs the release documents on this host: its pin and the other builds its sources
        name (`torch_npu_also`) on its own CANNs, except a build an alternative binds to another CANN, which pairs
        with that one; an alternative naming no build pairs the pin with its CANN."""
        bound = {a.torch_npu for a in self.cann_alts if a.torch_npu}
        builds = [b for b in self.torch_npu_versions() if b not in bound]
        pairs = [(b, c) for b in builds for c in self.cann_versions()]
        pin = self.torch_npu[2:] if self.torch_npu else None
        pairs += [(b, a.cann) for a in self.cann_alts if a.on_host(family, arch) and (b := a.torch_npu or pin)]
        return tuple(dict.fromkeys(pairs))


def _r(v: str, vllm: str, py: str, cann: str | None, torch: str, tn: str | None, a3: bool = True,
       **kw: object) -> VllmAscendRow:
    kw.setdefault("source", f"{_VA}/tree/v{v}")
    return VllmAscendRow(v, vllm, py, cann, torch, tn, a3, **kw)  # type: ignore[arg-type]


def _pypi(v: str) -> str:
    return f"https://pypi.org/project/vllm-ascend/{v}/"


_P39 = ">=3.9,<3.12"
_P310 = ">=3.10,<3.12"
_P313 = ">=3.10,<3.13"
_A3_FAQ = f"{_VA}/blob/v0.9.1/docs/source/faqs.md"


def _df310p(v: str) -> str:
    return f"{_VA}/blob/v{v}/Dockerfile.310p"


# vllm-ascend's 310P image builds on the CANN 9.1.0 beta from v0.20.2rc1 (Dockerfile.310p: FROM
# quay.io/ascend/cann:9.1.0-beta.1-310p-..., "[CI] Upgrade 310P CANN image to 9.1.0-beta.1":
# https://github.com/vllm-project/vllm-ascend/pull/9710) to v0.25.1rc1 (v0.23.0's image moves to CANN 9.1.0); v0.21.0rc1's
# release notes: "CANN: 9.0.0 for A2/A3/Ascend 950 ...; 310P uses CANN 9.1.0 beta"; v0.24.0rc1's and v0.25.1rc1's
# installation guides ("Atlas inference products"): "CANN == 9.1.0-beta.1". Read at those tags of the mirror.
def _beta310p(v: str, *more: str) -> tuple[CannAlt, ...]:
    return (CannAlt("9.1.0-beta.1", "; ".join((_df310p(v), *more)), f"vllm-ascend v{v}'s 310P image builds on CANN "
                    "9.1.0-beta.1 (Dockerfile.310p), not on the CANN of its release matrix", on="310P"),)


# v0.18.0 and v0.19.1rc1 name CANN 9.0.0 with the builds cut for it ("If CANN has been upgraded to version 9.0.0,
# please upgrade TorchNPU version to 2.9.0.post2 synchronously"; v0.18.0 also triton-ascend "to 3.2.1 synchronously"):
# 9.0.0 beside their 8.5.1-era builds (torch-npu 2.9.0 / 2.9.0.post1+git4c901a4, triton-ascend 3.2.0) stays off-matrix
_UP_900 = ("its release notes: \"If CANN has been upgraded to version 9.0.0, please upgrade TorchNPU version to "
           "2.9.0.post2 synchronously\"")
_CANN_900_0180 = (
    CannAlt("9.0.0", SRC_VA_NOTES, f"{_UP_900}, and triton-ascend \"to 3.2.1 synchronously\" (v0.18.0 Dependencies)",
            torch_npu="2.9.0.post2", triton_ascend="3.2.1"),
    # a warning, not an error: its own 310P image (Dockerfile.310p) and 310P tutorial still run CANN 8.5.1
    CannAlt("9.0.0", f"{SRC_VA_NOTES}; {_df310p('0.18.0')}; {_VA}/blob/v0.18.0/docs/source/tutorials/hardwares/310p.md",
            "its release notes (v0.18.0 Dependencies): CANN was upgraded to 8.5.1, and \"310P device supporting ... "
            "need upgrades CANN version to 9.0.0\" (its own Dockerfile.310p and 310P tutorial still use a CANN 8.5.1 "
            "image)", on="310P", torch_npu="2.9.0.post2", needs="warning"),
    CannAlt("9.0.0", f"{SRC_VA_NOTES}; https://github.com/vllm-project/vllm-ascend/issues/7993",
            "its release notes (v0.18.0 Known Issue): \"there is a known issue on x86 arch, and this issue has been "
            "resolved with CANN 9.0.0, if you want to deploy vllm-ascend on x86, please upgrade CANN version manually\"",
            on="x86_64", torch_npu="2.9.0.post2", triton_ascend="3.2.1", needs="warning"),
)


def install_doc(v: str) -> str:
    """The installation guide at a vllm-ascend tag (where its torch-npu and CANN prerequisites are stated)."""
    return f"{_VA}/blob/v{v}/docs/source/installation.md"


VLLM_ASCEND: tuple[VllmAscendRow, ...] = (
    _r("0.7.1rc1", "0.7.1", ">=3.9", "8.0.0", "==2.5.1", None, False,
       torch_npu_unreleased="2.5.1.dev20250218"),
    _r("0.7.3rc1", "0.7.3", ">=3.9", "8.0.0", ">=2.5.1", None, False,
       torch_npu_unreleased="2.5.1.dev20250308"),
    _r("0.7.3rc2", "0.7.3", ">=3.9", "8.0.0", ">=2.5.1", None, False,
       torch_npu_unreleased="2.5.1.dev20250320"),
    _r("0.7.3", "0.7.3", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.7.3.post1", "0.7.3", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.8.4rc1", "0.8.4", _P39, "8.0.0", ">=2.5.1", None, False,
       torch_npu_unreleased="2.5.1.dev20250320"),
    _r("0.8.4rc2", "0.8.4", _P39, "8.0.0", ">=2.5.1", "==2.5.1", False),
    _r("0.8.5rc1", "0.8.5.post1", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.0rc1", "0.9.0", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.0rc2", "0.9.0", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.1rc1", "0.9.1", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1.post1.dev20250528", False),
    _r("0.9.2rc1", "0.9.2", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1.post1.dev20250619", False),
    _r("0.9.1rc2", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", False),
    _r("0.9.1rc3", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", False, cann_also=("8.1.RC1",),
       note="The tag's own matrix (the v0.9.1-dev branch table) says CANN 8.1.RC1; later matrices and its Dockerfile say 8.2.RC1."),
    _r("0.9.1", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", True,
       note=f"Atlas A3 Training is listed among the supported products in the tag's FAQ ({_A3_FAQ})."),
    _r("0.10.0rc1", "0.10.0", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.10.1rc1", "0.10.1.1", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724", vllm_also=("0.10.1",),
       note="The matrix says vLLM 'v0.10.1/v0.10.1.1'; the tag's Dockerfile builds v0.10.1.1."),
    _r("0.10.2rc1", "0.10.2", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.11.0rc0", "0.11.0rc3", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.11.0rc1", "0.11.0", _P39, "8.3.RC1", "==2.7.1", "==2.7.1"),
    _r("0.11.0rc2", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1"),
    _r("0.11.0rc3", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1", torch_npu_also=("2.7.1.post1",),
       note="requirements.txt pins torch-npu==2.7.1; the matrix says 2.7.1.post1."),
    _r("0.11.0", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1", torch_npu_also=("2.7.1.post1",),
       note="requirements.txt (and the PyPI wheel's METADATA) pin torch-npu==2.7.1; the matrix says 2.7.1.post1."),
    _r("0.12.0rc1", "0.12.0", _P310, "8.3.RC2", "==2.8.0", "==2.8.0"),
    _r("0.13.0rc1", "0.13.0", _P310, "8.3.RC2", "==2.8.0", "==2.8.0", triton_ascend="3.2.0.dev2025110717",
       note="requirements.txt pins no triton-ascend; the tag's release notes and its Qwen3-Next / DeepSeek-V3.2 "
            "tutorials install the dev build 3.2.0.dev2025110717 by hand (docs/source/user_guide/release_notes.md)."),
    _r("0.13.0rc2", "0.13.0", _P310, "8.5.0", "==2.8.0", "==2.8.0", torch_npu_also=("2.8.0.post1",), triton_ascend="3.2.0",
       note="requirements.txt pins torch-npu==2.8.0; the matrix says 2.8.0.post1."),
    _r("0.13.0rc3", "0.13.0", _P310, "8.5.1", "==2.8.0", "==2.8.0.post2", triton_ascend="3.2.0"),
    _r("0.13.0", "0.13.0", _P310, "8.5.0", "==2.8.0", "==2.8.0.post2", triton_ascend="3.2.0"),
    _r("0.14.0rc1", "0.14.1", _P310, "8.5.0", "==2.9.0", "==2.9.0", triton_ascend="3.2.0"),
    _r("0.15.0rc1", "0.15.0", _P310, "8.5.0", "==2.9.0", "==2.9.0", triton_ascend="3.2.0"),
    _r("0.16.0rc1", "0.16.0", _P310, "8.5.1", "==2.9.0", "==2.9.0", triton_ascend="3.2.0", cann_also=("8.5.0",),
       note="The tag's own matrix says CANN 8.5.0; later matrices and its Dockerfile say 8.5.1."),
    _r("0.17.0rc1", "0.17.0", _P310, "8.5.1", "==2.9.0", "==2.9.0", triton_ascend="3.2.0"),
    _r("0.18.0rc1", "0.18.0", _P310, "8.5.1", "==2.9.0", "==2.9.0", triton_ascend="3.2.0",
       torch_npu_also=("2.9.0.post1+git4c901a4",), triton_ascend_also=("3.2.0.dev20260322",),
       note="The v0.18.0 tag's matrix gives rc1 torch-npu 2.9.0.post1+git4c901a4; requirements.txt pins 2.9.0."),
    _r("0.18.0", "0.18.0", _P310, "8.5.1", "==2.9.0", "==2.9.0", triton_ascend="3.2.0",
       torch_npu_also=("2.9.0.post1+git4c901a4", "2.9.0.post2"), triton_ascend_also=("3.2.0.dev20260322", "3.2.1"),
       note="requirements.txt pins torch-npu==2.9.0 and triton-ascend==3.2.0; the matrix says 2.9.0.post1+git4c901a4 "
            "and 3.2.0.dev20260322. Its release notes (Dependencies, at 182b75e): \"If CANN has been upgraded to version "
            "9.0.0, please upgrade TorchNPU version to 2.9.0.post2\" and triton-ascend \"to 3.2.1 synchronously\" (CANN "
            "9.0.0 is an alternative bound to those builds, not in cann_also: triton-ascend 3.2.0, this row's pin, is "
            "not documented for it).", cann_alts=_CANN_900_0180),
    _r("0.18.1.dev0", "0.18.0", _P310, "9.0.0", "==2.9.0", "==2.9.0.post2", triton_ascend="3.2.1", branch="releases/v0.18.0",
       source="https://github.com/vllm-project/vllm-ascend/tree/a2796db45beb541a52aaaa35ff3da4863c91f62a",
       note="Builds of the releases/v0.18.0 branch after v0.18.0 (they report 0.18.1.devN): a2796db45 (2026-05-20) "
            "re-pinned torch-npu 2.9.0.post2, triton-ascend 3.2.1 and CANN 9.0.0, before verl v0.8.0 cloned the branch."),
    _r("0.19.1rc1", "0.19.1", _P310, "8.5.1", "==2.9.0", "==2.9.0", triton_ascend="3.2.0",
       triton_ascend_also=("3.2.0.dev20260322",), torch_npu_also=("2.9.0.post1+git4c901a4", "2.9.0.post2"),
       note="Its release notes' Known Issues give triton-ascend 3.2.0.dev20260322 as the workaround for a g++ internal "
            "compiler error of 3.2.0, and (at 182b75e) \"Please upgrade to 2.9.0.post1+git4c901a4\" for torch-npu, "
            "\"If CANN has been upgraded to version 9.0.0, please upgrade TorchNPU version to 2.9.0.post2\".",
       cann_alts=(CannAlt("9.0.0", SRC_VA_NOTES, f"{_UP_900} (v0.19.1rc1 Known Issues)", torch_npu="2.9.0.post2"),)),
    _r("0.20.2rc1", "0.20.2", _P310, "9.0.0", "==2.10.0", "==2.10.0", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.20.2rc1")),
    _r("0.21.0rc1", "0.21.0", _P313, "9.0.0", "==2.10.0", "==2.10.0", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.21.0rc1", SRC_VA_NOTES)),
    _r("0.22.1rc1", "0.22.1", _P313, "9.0.0", "==2.10.0", "==2.10.0", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.22.1rc1")),
    _r("0.23.0rc1", "0.23.0", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.23.0rc1")),
    _r("0.24.0rc1", "0.24.0", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.24.0rc1", install_doc("0.24.0rc1"))),
    _r("0.23.0", "0.23.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2", cann_also=("9.0.1",),
       torch_npu_also=("2.10.0.post2",),
       cann_alts=(CannAlt("9.0.1", f"{_VA}/blob/v0.23.0/docs/source/community/versioning_policy.md",
                          "the v0.23.0 tag's own matrix gives the rc1 stack: CANN 9.0.1 with torch-npu 2.10.0.post2",
                          torch_npu="2.10.0.post2"),),
       note="The tag's own matrix still gives the rc1 stack (CANN 9.0.1, torch-npu 2.10.0.post2); its requirements.txt, "
            "Dockerfile and every later matrix say torch-npu 2.10.0.post4 and CANN 9.1.0."),
    _r("0.25.1rc1", "0.25.1", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2", triton_ascend="3.2.1",
       cann_alts=_beta310p("0.25.1rc1", install_doc("0.25.1rc1"))),
    _r("0.23.0.post1", "0.23.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.23.0.post1"), note="Read from the PyPI sdist (2026-09-22): requirements.txt, versioning_policy.md."),
    _r("0.26.0rc1", "0.26.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.26.0rc1"), note="Read from the PyPI sdist (2026-09-03): the matrix gives CANN 9.1.0."),
    _r("0.27.1rc1", "0.27.1", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.27.1rc1"), note="Read from the PyPI sdist (2026-09-24)."),
    _r("0.28.0rc1", "0.28.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.28.0rc1"),
       note="Read from the PyPI sdist (2026-10-09); its matrix has no row for itself: CANN from the Dockerfile base image."),
    _r("0.29.0rc1", "0.29.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.29.0rc1"),
       note="Read from the PyPI sdist (2026-10-09); its matrix has no row for itself: CANN from the Dockerfile base image."),
    _r("0.30.0rc1", "0.30.0", _P313, "9.2.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2", cann_also=("9.1.0",),
       source=_pypi("0.30.0rc1"),
       note="Read from the PyPI sdist (2026-10-12): the matrix says CANN 9.2.0, the Dockerfile still builds on 9.1.0."),
    _r("0.30.0rc2", "0.30.0", _P313, "9.2.0", "==2.10.0", "==2.10.0.post4", triton_ascend="3.2.2",
       source=_pypi("0.30.0rc2"),
       note="Read from the PyPI sdist (2026-10-13): no matrix row for itself; the Dockerfile builds vLLM v0.30.0 on a "
            "CANN 9.2.0 base image (9.2.0_20260930220649)."),
)


def vllm_ascend_row(version: str | None) -> VllmAscendRow | None:
    """The matrix row for an installed vllm-ascend: exact public version first; for a branch / dev build
    (0.13.1.dev5+g…) the newest row of the same major.minor at or below it (a release-branch row such as
    0.18.1.dev0 covers the branch's later builds)."""
    v = parse_pkg_version(version)
    if v is None:
        return None
    pub = Version(v.public)
    for row in VLLM_ASCEND:
        if Version(row.version) == pub:
            return row
    same = [r for r in VLLM_ASCEND if Version(r.version).release[:2] == pub.release[:2] and Version(r.version) <= pub]
    if not same:
        return None
    return max(same, key=lambda r: Version(r.version))


class TorchNpuRow(NamedTuple):
    """A torch-npu build and the CANN it is built and tested for."""

    version: str
    cann: str
    source: str
    note: str = ""


_PT = "https://github.com/Ascend/pytorch"


def _pt_branch(commit: str) -> str:
    return f"{_PT}/blob/{commit}/version.txt"


# COMPATIBILITY.en.md at master 9e73e708 (2026-08-21) is the table (active and historical rows); builds it does
# not list come from the version.txt of their `v<torch>-<TorchNPU release>` branch, whose suffix decodes to a CANN
# by the table's own branch column (PTA_CANN), or from their PyPI release.
PTA_CANN = {"26.2.0": "9.2.0", "26.1.0": "9.1.0", "26.0.0": "9.0.0", "7.3.0": "8.5.0", "7.2.0": "8.3.RC1", "7.1.0": "8.2.RC1",
            "7.0.0": "8.1.RC1", "6.0.0": "8.0.0", "6.0.rc3": "8.0.RC3", "6.0.rc2": "8.0.RC2", "6.0.rc1": "8.0.RC1",
            "5.0.0": "7.0.0", "5.0.rc3": "7.0.RC1", "5.0.rc2": "6.3.RC2"}
_COMPAT_ROWS = {
    "9.1.0": ("2.12.0", "2.11.0", "2.10.0.post4", "2.9.0.post6", "2.7.1.post8"),
    "9.0.0": ("2.9.0.post2", "2.8.0.post4", "2.7.1.post4"),
    "8.5.0": ("2.9.0", "2.8.0.post2", "2.7.1.post2", "2.6.0.post5"),
    "8.3.RC1": ("2.8.0", "2.7.1", "2.6.0.post3", "2.1.0.post17"),
    "8.2.RC1": ("2.6.0", "2.5.1.post1", "2.1.0.post13"),
    "8.1.RC1": ("2.5.1", "2.4.0.post4", "2.3.1.post6", "2.1.0.post12"),
    "8.0.0": ("2.4.0.post2", "2.3.1.post4", "2.1.0.post10"),
    "8.0.RC3": ("2.4.0", "2.3.1.post2", "2.1.0.post8"),
    "8.0.RC2": ("2.3.1", "2.2.0.post2", "2.1.0.post6"),
    "8.0.RC1": ("2.2.0", "2.1.0.post4"),
    "7.0.0": ("2.1.0", "2.0.1.post1"),
    "7.0.RC1": ("2.1.0.rc1", "2.0.1"),
    "6.3.RC2": ("2.0.1.rc1",),
}
# (version, branch, commit the branch's version.txt was read at, 2026-08-22)
_BRANCH_ROWS = (
    ("2.12.0.post2", "v2.12.0-26.1.0", "42d8c46e6bb0ededf8cf3e4f324b670e4bddc316"),
    ("2.11.0.post2", "v2.11.0-26.1.0", "d0c34067860f6517df4cf34b003aed6ee3c32f4d"),
    ("2.10.0.post6", "v2.10.0-26.1.0", "f48eb6ecf09e8fb302fcacb12a738caa762e1c6d"),
    ("2.10.0.post2", "v2.10.0-26.0.0", "8a33cdd6f159625e4ed73d614763f7985f92083e"),
    ("2.9.0.post8", "v2.9.0-26.1.0", "323a8176b6fadd58adfe265524a1865a862a7a44"),
    ("2.9.0.post4", "v2.9.0-26.0.0", "82a855102b72dd3d4f9f92d3aa01361bac5520ac"),
    ("2.9.0.post1", "v2.9.0-7.3.0", "9a918166922ee507361a713b52072ca717ba5a59"),
    ("2.8.0.post5", "v2.8.0-26.0.0", "d9d5433c75da516d5a7e04cb7aaaf7b9dd7111fd"),
    ("2.8.0.post3", "v2.8.0-7.3.0", "44070563dcd108439e32e96ea184e2891dae9196"),
    ("2.8.0.post1", "v2.8.0-7.2.0", "c7b6b321c0a711d46f961f8585149a1da48fb3d9"),
    ("2.7.1.post10", "v2.7.1-26.1.0", "928743e649ee25c8da47670791b2f7fee34fd3b0"),
    ("2.7.1.post6", "v2.7.1-26.0.0", "89d88d4560c996734712e9b5585c7745f21875d2"),
    ("2.7.1.post3", "v2.7.1-7.3.0", "90441fa551dc016f9f3c6eedb427ae6cfa83ed0c"),
    ("2.7.1.post1", "v2.7.1-7.2.0", "831bb29476ef7f0613017c812f10d90b7c86b707"),
    ("2.6.0.post6", "v2.6.0-7.3.0", "0db038ca42a917da2db0d4fd06a68735029f3363"),
    ("2.6.0.post4", "v2.6.0-7.2.0", "ad9d514913d41bf2525ba78537ee8853cb38fcb8"),
    ("2.6.0.post2", "v2.6.0-7.1.0", "44886de91c40fed9b432649900315e64aa735291"),
    ("2.5.1.post3", "v2.5.1-7.1.0", "7c59c54b2e5e73bbc8cb1e7bc88522c8366f0608"),
    ("2.4.0.post5", "v2.4.0-7.0.0", "3788e4f7cca0537a19a8371119dfec2fa5336f80"),
    ("2.4.0.post3", "v2.4.0-6.0.0", "38dc4eecba8f8d4f0acd13ab32d2f526da48c102"),
    ("2.4.0.post1", "v2.4.0-6.0.rc3", "6855da3b9d5742bd6972a3d9c5c2ec267d1c26d9"),
    ("2.3.1.post5", "v2.3.1-6.0.0", "c77b8ae3b2b0aa19491261521fd24b9f19b273ba"),
    ("2.3.1.post3", "v2.3.1-6.0.rc3", "3d1997a5f6954c7e6904e95770cd7b1e5fafb5ef"),
    ("2.3.1.post1", "v2.3.1-6.0.rc2", "6c0d5d22f95ea56797b2b4a96b0686b4e25330d6"),
    ("2.2.0.post3", "v2.2.0-6.0.rc2", "b9aab990390cac9b4d9dcaa0b67b1f88ff5a9497"),
)
# COMPATIBILITY.en.md "PyTorch and Python versions": the Pythons Ascend builds torch-npu for, per PyTorch base (a
# torch-npu release carries its PyTorch base in its version: 2.6.0.post3 -> 2.6.0). No wheel exists for another Python.
TORCH_NPU_PYTHONS: dict[str, tuple[str, ...]] = {
    "2.13.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.12.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.11.0": ("3.10", "3.11", "3.12", "3.13", "3.14"),
    "2.10.0": ("3.10", "3.11", "3.12", "3.13"),
    "2.9.0": ("3.10", "3.11", "3.12", "3.13"),
    "2.8.0": ("3.9", "3.10", "3.11", "3.12", "3.13"),
    "2.7.1": ("3.9", "3.10", "3.11", "3.12", "3.13"),
    "2.6.0": ("3.9", "3.10", "3.11"),
    "2.5.1": ("3.9", "3.10", "3.11"),
    "2.4.0": ("3.8", "3.9", "3.10", "3.11"),
    "2.3.1": ("3.8", "3.9", "3.10", "3.11"),
    "2.2.0": ("3.8", "3.9", "3.10"),
    "2.1.0": ("3.8", "3.9", "3.10", "3.11"),
    "1.11.0": ("3.7", "3.8", "3.9", "3.10"),
}


def torch_npu_pythons(torch_npu: str | None) -> tuple[str, ...] | None:
    """The Python X.Y versions torch-npu `torch_npu` is built for (its PyTorch base's row), None when unknown."""
    v = parse_pkg_version(torch_npu)
    if v is None:
        return None
    return TORCH_NPU_PYTHONS.get(".".join(str(x) for x in (v.release + (0, 0))[:3]))


TORCH_NPU: tuple[TorchNpuRow, ...] = (
    *(TorchNpuRow(v, c, SRC_PT_COMPAT) for c, vs in _COMPAT_ROWS.items() for v in vs),
    *(TorchNpuRow(v, PTA_CANN[b.rsplit("-", 1)[1]], _pt_branch(c), note=f"version.txt of branch {b}")
      for v, b, c in _BRANCH_ROWS),
    TorchNpuRow("2.10.0", "9.0.0", "https://pypi.org/project/torch-npu/2.10.0/",
                note="TorchNPU 26.0.0 (CANN 9.0.0) added PyTorch 2.10.0; vllm-ascend v0.20.2rc1 pairs it with CANN 9.0.0."),
    *(TorchNpuRow(v, "9.2.0", SRC_PT_NOTES_2620, note="TorchNPU 26.2.0 release notes (branch v" + b + "-26.2.0); "
                  "PyPI upload 2026-10-15" + ("; the 2.14.0 PyPI description's 'Install CANN 9.1.0' is not the "
                                              "vendor's pairing table" if v == "2.14.0" else ""))
      for v, b in (("2.14.0", "2.14.0"), ("2.13.0", "2.13.0"), ("2.12.0.post3", "2.12.0"), ("2.11.0.post3", "2.11.0"),
                   ("2.10.0.post7", "2.10.0"), ("2.9.0.post9", "2.9.0"), ("2.7.1.post11", "2.7.1"))),
)


# torch-npu builds PyPI publishes that no vendor table pairs with a CANN (so they have no TorchNpuRow and an
# installed one is off the table): the refresh accepts them with these notes instead of reporting new releases.
TORCH_NPU_UNPAIRED: tuple[tuple[str, str, str], ...] = (
    ("2.1.0.post3", "https://pypi.org/project/torch-npu/2.1.0.post3/",
     "Uploaded 2024-04-19; no COMPATIBILITY.en.md row, release notes table or branch version.txt names it."),
    ("2.9.1", "https://pypi.org/project/torch-npu/2.9.1/",
     "Uploaded 2026-05-11; no COMPATIBILITY.en.md row, release notes table or branch version.txt names it (the v2.9.0 "
     "branches give 2.9.0.postN)."),
)

# torch-npu builds that a trainer's own Ascend install guide runs on a CANN other than the one Ascend/pytorch's table
# pairs them with (vllm-ascend's pairings are its rows' `torch_npu_canns`): a pairing an upstream documents for its
# stack is not reported. (build, CANN, who documents it, source); read 2026-12-06.
_SWIFT_NPU = ("https://github.com/modelscope/ms-swift/blob/a884c6f22339d041623e205032cb3dbd854eb085/docs/source_en/"
              "BestPractices/NPU-support.md")
_MSRL_INSTALL = "https://github.com/Ascend/MindSpeed-RL/blob/4b30d034e4fb6abc5ce844a667491e8a3cc4909c/docs/install_guide.md"
_LF_MAIN = "https://github.com/hiyouga/LlamaFactory/blob/ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30"
TORCH_NPU_CANN_DOCUMENTED: tuple[tuple[str, str, str, str], ...] = (
    ("2.7.1.post2", "8.5.1", "ms-swift v4.1.0-v4.2.3 (NPU guide: CANN == 8.5.1, torch_npu == 2.7.1.post2)", _SWIFT_NPU),
    ("2.5.1", "8.3.RC1", "MindSpeed-RL 2.2.0 (install guide's version table)", _MSRL_INSTALL),
    ("2.5.1", "8.5.0", "MindSpeed-RL 2.3.0 (install guide's version table)", _MSRL_INSTALL),
    ("2.7.1", "8.5.0", "MindSpeed-RL master (install guide's version table)", _MSRL_INSTALL),
    ("2.10.0.post2", "9.1.0", "LLaMA-Factory main's NPU images (docker/docker-npu: cann:9.1.0 base, requirements/npu.txt)",
     f"{_LF_MAIN}/docker/docker-npu/Dockerfile; {_LF_MAIN}/requirements/npu.txt"),
)


# verl's profiles are verl's stacks. These trainers document Ascend stacks of their own; installed without verl, the
# stack is theirs. Each with the oldest CANN its own docs give for any of its releases, and where (read 2026-12-06):
# LLaMA-Factory's README "Ascend NPU" table, "Minimum" column, v0.7.1 to v0.9.4 (v0.9.5 drops the table and builds
# its image on 9.0.0); ms-swift's NPU guide, CANN == 8.3.RC1 (v3.11-v4.0), == 8.5.1 (v4.1-v4.2), >= 8.5.1 (v4.3 on);
# MindSpeed-LLM 2.2.0's compatibility table (8.3.RC1 down to 8.0.RC2); MindSpeed-RL's install guide (2.0.0 on 8.1.RC1).
TRAINER_CANN_MINIMUM: dict[str, tuple[str, str]] = {
    "llamafactory": ("8.0.RC1", "https://github.com/hiyouga/LlamaFactory/blob/95ac3f2373b82662c1bd855c284d3379e6a763d3/"
                                "README.md"),
    "ms-swift": ("8.3.RC1", "https://github.com/modelscope/ms-swift/blob/7537fa8e7c8825e015516bfd2bcbfc0f4f5f626f/docs/"
                            "source_en/BestPractices/NPU-support.md"),
    "mindspeed-llm": ("8.0.RC2", "https://github.com/Ascend/MindSpeed-LLM/blob/57c33296592ed12f59396e59461a5bd8d0d589d0/"
                                 "docs/zh/release_notes_llm.md"),
    "mindspeed-rl": ("8.1.RC1", _MSRL_INSTALL),
}


def torch_npu_row(version: str | None) -> TorchNpuRow | None:
    """The table row of an installed torch-npu, compared as versions (`2.1.0.rc1` is the row `2.1.0.rc1`;
    a local label such as `+git…` is ignored)."""
    v = parse_pkg_version(version)
    if v is None:
        return None
    want = Version(v.public)
    return next((r for r in TORCH_NPU if parse_pkg_version(r.version) == want), None)


def torch_npu_cann(version: str | None) -> str | None:
    row = torch_npu_row(version)
    return row.cann if row else None


def newest_torch_npu() -> Version:
    return max(v for r in TORCH_NPU if (v := parse_pkg_version(r.version)) is not None)


# CANN -> the oldest driver the official quick-install mapping pairs with it (verified rows only): a CANN at or
# above the key needs at least this driver. Later CANNs only have documented recommendations (warnings) below.
DRIVER_MINIMUM: tuple[tuple[str, str], ...] = (
    ("7.0.RC1", "23.0.rc3"),
    ("8.0.RC1", "24.1.rc1"),
    ("8.0.RC3", "24.1.rc2"),
    ("8.2.RC1", "25.0.rc1"),
)
_VERL = "https://github.com/verl-project/verl/blob"
DRIVER_RECOMMENDED: tuple[tuple[str, str, str], ...] = (
    ("8.3.RC1", "25.3.rc1", f"{_VERL}/v0.7.0/docs/ascend_tutorial/ascend_sglang_quick_start.rst"),
    ("8.5.0", "25.5.0", f"{_VERL}/v0.8.0/docs/ascend_tutorial/get_start/install_guidance.rst"),
    ("9.0.0", "26.0.rc1", f"{_VERL}/v0.8.0/docs/ascend_tutorial/get_start/install_guidance.rst"),
    ("9.1.0", "26.0.rc1", f"{_VERL}/1dda039b9c6311889a9c9a26040677e1254814f9/docs/ascend_tutorial/get_start/install_guidance.rst"),
)

# Every CANN release the tables above know, newest last, with where its newest appearance was read. A CANN
# newer than all of these is newer than the doctor's knowledge.
KNOWN_CANN: tuple[tuple[str, str], ...] = (
    ("9.1.0", SRC_PT_COMPAT),
    ("9.2.0", f"{SRC_PT_NOTES_2620}; {_pypi('0.30.0rc2')}"),
)


def newest_known_cann() -> str:
    return KNOWN_CANN[-1][0]


def torchvision_for_torch(torch_version: str | None) -> str | None:
    """'2.8.0' -> '0.23': the torchvision minor line built against that torch (2.x only)."""
    v = parse_pkg_version(torch_version)
    if v is None or v.major != 2 or len(v.release) < 2:
        return None
    return f"0.{v.minor + 15}"


class MindSpeedRow(NamedTuple):
    """A MindSpeed branch and the Megatron-LM its README documents.

    `megatron` is the Megatron-core release it names ("0.12.1"), or a series ("0.16") when the README checks out
    a moving Megatron branch; `checkout` is the Megatron-LM ref to check out for it (a ref Megatron-LM has);
    `reports` is the version MindSpeed's own setup.py gives (not always the Megatron it targets)."""

    branch: str
    reports: str
    megatron: str
    checkout: str
    source: str
    note: str = ""
    readme_checkout: str | None = None  # what the README literally checks out, when that is not `checkout`
    cann: str | None = None  # the CANN the MindSpeed / MindSpeed-LLM release notes pair the branch with
    torch: str | None = None  # the PyTorch they pair it with
    pairing_source: str = ""  # the release notes that say so

    @property
    def series(self) -> tuple[int, int]:
        r = Version(self.megatron).release
        return (r[0], r[1])

    @property
    def exact(self) -> bool:
        """The README names one Megatron-core release (0.12.1), not only its line (0.12)."""
        return len(Version(self.megatron).release) == 3


def _ms(commit: str) -> str:
    return f"https://github.com/Ascend/MindSpeed/blob/{commit}/README.md"


_CORE_V0121 = "the README checks out Megatron-LM tag core_v0.12.1"
_MS_NOTES = "https://github.com/Ascend/MindSpeed/blob/028de58ca629d035185b00ff7d1eb7eff4f7fd48/docs/zh/release_notes_core.md"
_LLM_NOTES_2620 = "https://github.com/Ascend/MindSpeed-LLM/blob/26.2.0/docs/zh/release_notes_llm.md"
_R017 = ("The README says 'git checkout core_r0.17.1', a ref Megatron-LM does not have: its 0.17.1 is tag core_v0.17.1 "
         "(branch core_r0.17.0 has moved on to 0.17.2). setup.py still reports 0.12.1.")
# Read at the branch heads of the MindSpeed mirror of 2026-07-21 (the newest commit it holds).
MINDSPEED_MEGATRON: tuple[MindSpeedRow, ...] = (
    MindSpeedRow("master", "0.12.1", "0.12.1", "core_v0.12.1", _ms("028de58ca629d035185b00ff7d1eb7eff4f7fd48"), _CORE_V0121),
    MindSpeedRow("26.2.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _LLM_NOTES_2620,
                 "MindSpeed-LLM 26.2.0's release notes pair this branch with Megatron-LM core_v0.12.1, PyTorch 2.10.0, "
                 "TorchNPU 26.2.0 and CANN 9.2.0; the branch is newer than the MindSpeed mirror (2026-07-21), so "
                 "'reports 0.12.1' is inferred from every other *_core_r0.12.1 branch's setup.py.",
                 cann="9.2.0", torch="2.10.0", pairing_source=_LLM_NOTES_2620),
    MindSpeedRow("26.1.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _ms("57a33053c4eccd5b14aa58e3ca595ab414e65b94"),
                 cann="9.1.0", torch="2.7.1", pairing_source=_MS_NOTES),
    MindSpeedRow("26.0.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _ms("3c44c134f396fc14a22a38934c7d5d8bedb37ff5"),
                 cann="9.0.0", torch="2.7.1", pairing_source=_MS_NOTES),
    MindSpeedRow("2.3.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _ms("674226a15a8214cc0c78f986b0b89fbe6b879ba1")),
    MindSpeedRow("2.2.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _ms("a654440c14159a68c8a7f1e1665a89bdec8e74f0")),
    MindSpeedRow("2.1.0_core_r0.12.1", "0.12.1", "0.12.1", "core_v0.12.1", _ms("5a9ee296b4d80991c53f9ee16738788550e5cc08")),
    MindSpeedRow("1.0.0_core_r0.6.0", "0.6.0", "0.6", "core_r0.6.0", _ms("25b60baa78daab5efaf85abee67cb0012b14d2c7")),
    MindSpeedRow("1.0.0_core_r0.7.0", "0.7.0", "0.7", "core_r0.7.0", _ms("af939b4b7e4a1c4a1552089983544a57cc81cef7")),
    MindSpeedRow("core_r0.6.0", "0.6.0", "0.6", "core_r0.6.0", _ms("199daaa776cd90fac55ca1b0e27cf27d48333229")),
    MindSpeedRow("core_r0.7.0", "0.7.0", "0.7", "core_r0.7.0", _ms("ffc055fceecf7e23e79a1a68aa173f42b45185ee")),
    MindSpeedRow("2.1.0_core_r0.8.0", "0.8.0", "0.8", "core_r0.8.0", _ms("1e898a29c7505860dc711295349472e8a9dd66f4")),
    MindSpeedRow("2.0.0_core_r0.8.0", "0.8.0", "0.8", "core_r0.8.0", _ms("c721ce33e5995c2f2f8f91a433d726f2571053b7")),
    MindSpeedRow("core_r0.8.0", "0.8.0", "0.8", "core_r0.8.0", _ms("46f6ca8c3d04d9abd591f80346db8a8ebdb2eccd")),
    MindSpeedRow("core_r0.9.0", "0.9.0", "0.9", "core_r0.9.0", _ms("2c920f7e8eb5af004e2c006cd22979b2072cf8ce")),
    MindSpeedRow("core_r0.10.0", "0.10.0", "0.10", "core_r0.10.0", _ms("341447fa2143949feb0ef6e4a276a7ad70cbe080")),
    MindSpeedRow("core_r0.14.0", "0.14.1", "0.14", "core_r0.14.0", _ms("71b9e055b2183f5e0247c2e9d869f7c4890bdb45")),
    MindSpeedRow("core_r0.15.3", "0.15.3", "0.15.3", "v0.15.3", _ms("d0d5809d4323eb908f89e87958de254465eb57b4")),
    MindSpeedRow("core_r0.16.0", "0.16.0", "0.16", "core_r0.16.0", _ms("e4772499f7eb9fa9a68919dd1eaddef00e915b2d"),
                 "core_r0.16.0 is a moving Megatron-LM branch (0.16.2 at 2026-04-17)"),
    MindSpeedRow("core_r0.17.0", "0.12.1", "0.17.1", "core_v0.17.1", _ms("1f5feb86da9e6ccc6f8e981f5f0ac655a2d00ae5"), _R017,
                 readme_checkout="core_r0.17.1"),
    MindSpeedRow("core_r0.18.0", "0.12.1", "0.17.1", "core_v0.17.1", _ms("4213c91313fe4de6da12794109515f6275572750"), _R017,
                 readme_checkout="core_r0.17.1"),
)


# MindSpeed Core's compatibility tables (release_notes_core.md "版本兼容性说明", where "/" means cannot be paired): per
# branch, the CANN releases and the TorchNPU releases (PTA_CANN keys) its tables mark "/".
MINDSPEED_UNPAIRED: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("26.0.0_core_r0.12.1", ("9.1.0",), ("26.1.0",), _MS_NOTES),
)


def mindspeed_rows(branch: str | None = None, reports: str | None = None) -> tuple[MindSpeedRow, ...]:
    """The rows for a MindSpeed checkout: by its branch when known, else every row whose setup.py reports
    `reports` (0.12.1 is reported by the *_core_r0.12.1 branches and by core_r0.17.0 / core_r0.18.0 alike)."""
    if branch:
        rows = tuple(r for r in MINDSPEED_MEGATRON if r.branch == branch)
        if rows:
            return rows
    if reports:
        v = parse_pkg_version(reports)
        if v is not None:
            return tuple(r for r in MINDSPEED_MEGATRON if Version(r.reports) == Version(v.public))
    return ()
