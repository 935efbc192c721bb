"""A local, installable copy of a profile's stack: wheels with the real names, versions and Requires-Dist pins,
bare git repositories with the real ref names, and the `--git-mirror` flags that point the plan at them.

What the fakes keep from the real thing (shared/reference/cann_torchnpu_vllm.md §2.4, §8; mindspeed.md §4):
torch-npu pins `torch==X+cpu` on x86 and `torch==X` on aarch64; vllm-ascend pins torch-npu to its own post
release (the deviation the final re-pin repairs); MindSpeed requires `numpy<=1.26.0`; vLLM built with
VLLM_TARGET_DEVICE=empty reports `X+empty`; Megatron-LM installs the `megatron-core` distribution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from doctor.installers.plan import CLONE, EDITABLE, INSTALL, Plan
from doctor.installers.resolve import SOURCES
from tests.installers.wheelkit import make_source_repo, make_wheel

# candidate versions for non-exact pins (first match wins)
CANDIDATES = {
    "numpy": ["1.26.4", "1.26.0", "2.2.6"],
    "transformers": ["4.57.6", "4.57.1", "5.10.4"],
    "mbridge": ["0.15.1"],
    "vllm-ascend": ["0.13.0", "0.23.0", "0.11.0rc1", "0.9.1"],
}


def choose(name: str, spec: str) -> str:
    """A version that meets `spec`: the exact pin, else the first candidate, a version the spec itself names (the
    floor of `>=X`), a `==X.*` series' first release, or a plain 1.0."""
    m = re.fullmatch(r"==\s*([^,*]+)", spec.strip())
    if m:
        return m.group(1)
    s = SpecifierSet(spec)
    named = [sp.version for sp in s if not sp.version.endswith(".*")]
    for c in [*CANDIDATES.get(name, []), *named, "1.0"]:
        if s.contains(Version(c), prereleases=True):
            return c
    m = re.fullmatch(r"==\s*(.+)\.\*", spec.strip())
    if m:
        return m.group(1) + (".0" if m.group(1).count(".") < 2 else "")
    raise ValueError(f"no candidate version for {name}{spec}")


def _split(req: str) -> tuple[str, str]:
    """(name, specifier) of a requirement line, extras and markers read by `packaging` (`ray[default]>=2.41`)."""
    r = Requirement(req)
    return canonicalize_name(r.name), str(r.specifier)


def _git_requirement(req: str, repos: Path) -> str:
    """A bare repo for a `name @ git+URL@REF` requirement, with a package of that name at REF; the `--git-mirror`
    flag (URL=repo) that serves it."""
    r = Requirement(req)
    assert r.url, req
    url, _, ref = r.url.removeprefix("git+").rpartition("@") if r.url.count("@") else (r.url, "", "main")
    module = canonicalize_name(r.name).replace("-", "_")
    bare = repos / (r.name + ".git")
    make_source_repo(bare, dist=r.name, packages={f"{module}/__init__.py": ""},
                     refs=[("tag" if re.match(r"^v\d", ref) else "branch", ref or "main", "0.1.0")])
    return f"{url}={bare}"


@dataclass
class Stack:
    wheels: Path
    mirrors: list[str]
    commits: dict[str, str]
    git_refs: list[str]  # `--git-ref NAME=REF` for each source: the local repos' commits are not the profile's


def build(plan: Plan, root: Path, *, broken: str | None = None) -> Stack:
    """Wheels for every requirement of the plan and bare repos for every git source, under root.
    `broken` names a distribution whose wheel fails to install midway."""
    wheels = root / "wheels"
    arch = plan.target.arch
    pins = dict(plan.pins)
    torch_req = None
    if "torch" in pins:
        tv = choose("torch", pins["torch"])
        torch_req = f"torch=={tv}+cpu" if arch == "x86_64" else f"torch=={tv}"
    made: set[tuple[str, str]] = set()

    def wheel(name: str, version: str) -> None:
        if (name, version) in made:
            return
        made.add((name, version))
        requires: list[str] = []
        if name == "torch-npu" and torch_req:
            requires = [torch_req]
        if name in ("torchvision", "torchaudio") and torch_req:
            requires = [torch_req]
        make_wheel(wheels, name, version, requires=requires, broken=(name == broken))

    mirrors: list[str] = []
    for step in plan.steps:
        if step.kind == INSTALL:
            for r in step.requirements:
                if r == "-r" or r.startswith("/") or "requirements" in r:
                    continue
                if " @ git+" in r:  # `TransferQueue @ git+https://…@main` (verl 0.9.1's NPU requirements)
                    mirrors.append(_git_requirement(r, root / "repos"))
                    continue
                name, spec = _split(r)
                wheel(name, choose(name, spec) if spec else CANDIDATES.get(name, ["1.0"])[0])
    # what the source repos require
    tnv = choose("torch-npu", pins["torch-npu"]) if "torch-npu" in pins else None
    if tnv:
        wheel("torch-npu", tnv + ".post2" if ".post" not in tnv else tnv)
    wheel("numpy", "1.26.0")
    commits = {}
    for step in plan.steps:
        if step.kind != CLONE or step.source is None:
            continue
        s = step.source
        key = next(k for k, v in SOURCES.items() if v[0] == s.name)
        _d, dist, module = SOURCES[key][:3]
        version = next((spec for st in plan.steps if st.kind == EDITABLE and st.source == s for _n, spec in st.expect), None)
        version = choose(dist, version) if version else "0.0.1"
        requires: list[str] = []
        files = {f"{module}/__init__.py": f"__version__ = {version!r}\n"}
        if key == "megatron-lm":
            files = {"megatron/core/__init__.py": "", "megatron/core/package_info.py": f"VERSION = {version!r}\n"}
            requires = ["torch"]  # unpinned, as Megatron's requirements are: --no-deps must keep it away
        if key == "vllm-ascend" and tnv:
            requires = [f"torch-npu=={tnv}.post2" if ".post" not in tnv else f"torch-npu=={tnv}"]
        if key == "mindspeed":
            requires = ["numpy<=1.26.0"]
        kind = "tag" if re.match(r"^(v\d|core_v)", s.ref) else "branch"
        bare = root / "repos" / (s.name + ".git")
        shas = make_source_repo(bare, dist=dist, packages=files, refs=[(kind, s.ref, version)], requires=requires,
                                device_env="VLLM_TARGET_DEVICE" if key == "vllm" else None)
        if key == "verl":
            # verl's own requirements file, read by the verl-requirements step
            from tests.installers.wheelkit import git

            work = bare.with_name(bare.name + ".work")
            # with a git requirement, as main's file holds at 1dda039b9 (every stand-in verl clone carries it, so each
            # git-verl profile's install maps it to a mirror and its wheelhouse carries it as a source archive)
            tq = "TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main"
            (work / "requirements-npu.txt").write_text(f"numpy<2.0.0\n{tq}\n")
            mirrors.append(_git_requirement(tq, root / "repos"))
            git("add", "-A", cwd=work)
            git("commit", "-q", "-m", "requirements", cwd=work)
            if kind == "tag":
                git("tag", "-f", s.ref, cwd=work)
            else:  # the work tree may have that branch checked out (`main`): -B moves it either way
                git("checkout", "-q", "-B", s.ref, cwd=work)
            git("push", "-q", "-f", str(bare), f"{'refs/tags/' if kind == 'tag' else 'refs/heads/'}{s.ref}", cwd=work)
            shas[s.ref] = git("rev-parse", "HEAD", cwd=work)
        mirrors.append(f"{s.url}={bare}")
        commits[s.name] = shas[s.ref]
    return Stack(wheels=wheels, mirrors=mirrors, commits=commits, git_refs=[f"{s.name}={s.ref}" for s in plan.sources()])
