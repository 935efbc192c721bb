"""The plan's steps, one builder per stage, in the upstream order (verl's install_vllm_mcore_npu.sh and release
Dockerfiles, vllm-ascend's Dockerfile):

1. remove mainline triton (and a wrong triton-ascend): they share the `triton/` package directory;
2. torch, torch-npu, torchvision (torchaudio) as one resolver call; on x86 `torch==X+cpu` from the PyTorch CPU
   index, because torch-npu's x86 wheels require the `+cpu` build;
3. vLLM from its tag with `VLLM_TARGET_DEVICE=empty`, then vllm-ascend: where it builds without isolation, its
   build and runtime requirements first (with isolation, so a source-only dependency such as arctic-inference
   builds in its own environment), then vllm-ascend itself `--no-build-isolation --no-deps`;
4. Megatron-LM at the pinned commit (PYTHONPATH for verl <= 0.7.0, editable `--no-deps` from 0.7.1), MindSpeed
   editable, mbridge; 5. verl with its dependencies and requirements-npu.txt, in the release's order (from PyPI, the
   profile's `verl_requirements` lines); 6. the final pins (transformers, xgrammar, ...);
7. last, after every step that resolves dependencies: triton removed again and triton-ascend installed
   `--no-deps` (x86 resolves pull mainline triton back in: vLLM, xgrammar; a stack without triton-ascend only has
   triton removed); 8. what the run installed that the
   re-pins left required by nothing removed (installers.orphans); 9. doctor-env.sh.
Build steps run with TORCH_DEVICE_BACKEND_AUTOLOAD=0 (an import of torch must not load torch_npu on a host
without CANN) and, without npu-smi, the SOC_VERSION of the profile's chip family.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from doctor.installers import upstream as up
from doctor.installers import versionfile as vf
from doctor.installers.plan import CLONE, EDITABLE, INSTALL, PRUNE, UNINSTALL, GitSource, IndexOptions, Step
from doctor.knowledge.versions import parse_pkg_version

TORCH_STACK = ("torch", "torch-npu", "torchvision", "torchaudio")
CPU_LOCAL = ("torch", "torchvision", "torchaudio")  # the packages the PyTorch CPU index serves as +cpu
FINAL = ("transformers", "numpy")
CONFLICTS = ("triton", "triton-ascend")

# git source key in a profile -> (clone dir, distribution, top-level module, where its version lives)
SOURCES = {
    "vllm": ("vllm", "vllm", "vllm", vf.SCM),
    "vllm-ascend": ("vllm-ascend", "vllm-ascend", "vllm_ascend", vf.SCM),
    "megatron-lm": ("Megatron-LM", "megatron-core", "megatron", vf.MEGATRON_FILE),
    "mindspeed": ("MindSpeed", "mindspeed", "mindspeed", vf.SETUP_PY),
    "verl": ("verl", "verl", "verl", vf.VERL_FILE),
}
# the tag a release version has in each source repository (`--set megatron-core=0.16.1` -> core_v0.16.1)
TAG_FORMAT = {"vllm": "v{}", "vllm-ascend": "v{}", "megatron-lm": "core_v{}", "verl": "v{}"}
BUILD_ENV = (("TORCH_DEVICE_BACKEND_AUTOLOAD", "0"),)


@dataclass
class Ctx:
    """What every builder reads: the profile, facts, resolved pins and git sources, index options."""

    profile: Any
    facts: Any
    pins: dict[str, str]
    git: dict[str, Any]
    src: str
    cpu: IndexOptions
    extra: IndexOptions
    overridden: frozenset[str] = frozenset()  # git keys whose ref the user chose (--git-ref / --set)
    # clone dir -> the commit a wheelhouse's bundle holds (offline, the source is that commit: execute._pin_bundled)
    bundled: Mapping[str, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)

    @property
    def arch(self) -> str:
        return str(self.facts.arch)

    def era(self, flag: str) -> bool:
        """An installer era gate of this profile's verl release, read from profiles/releases.toml
        ([release.install]); a verl the table has no install row for gets none of the newer steps."""
        from doctor.knowledge.releases import load_releases

        row = load_releases().era(self.profile.verl)
        return bool(row is not None and row.install is not None and getattr(row.install, flag))

    def doc(self) -> str:
        """The profile's own upstream install instructions: its script when it has one, else its install doc."""
        scripts = [u for u in getattr(self.profile, "sources", ()) if u.endswith(".sh")]
        return scripts[0] if scripts else str(self.profile.source)

    def source(self, key: str) -> GitSource:
        g = self.git[key]
        d, _dist, mod, vkind = SOURCES[key]
        return GitSource(name=d, url=g.repo, ref=g.ref, commit=g.commit, module=mod, version_from=vkind,
                         tags=vkind == vf.SCM, submodules=key == "vllm-ascend" and self.era("vllm_ascend_submodules"))

    def at_pin(self, key: str) -> bool:
        """The clone of `key` will be at the profile's commit: no ref the user chose, no bundle of another commit."""
        from doctor.installers.gitsrc import matches

        s = self.source(key)
        b = self.bundled.get(s.name)
        return key not in self.overridden and bool(s.commit) and (b is None or matches(b, s.commit))

    def expect(self, key: str) -> tuple[tuple[str, str | None], ...]:
        """The version the pinned commit computes (the profile records what its version file says); a ref the user
        chose is read from the clone at run time (satisfy.View.clone_versions), so only the dist is named here."""
        g = self.git[key]
        dist = SOURCES[key][1]
        if key in self.overridden and not g.version:
            return ((dist, ""),)
        if g.version:
            return ((dist, f"=={g.version}"),)
        spec = self.pins.get(dist)
        return ((dist, spec or ""),)

    def build_env(self, key: str) -> tuple[tuple[str, str], ...]:
        env = list(BUILD_ENV)
        if key == "vllm":
            env.insert(0, ("VLLM_TARGET_DEVICE", "empty"))
        if key == "vllm-ascend":
            if self.facts.npu_seen is not True:
                env.append(("SOC_VERSION", up.SOC_VERSION.get(self.chip(), up.SOC_VERSION["A2"])))
            if not self.facts.cann:
                env.append(("COMPILE_CUSTOM_KERNELS", "0"))
        return tuple(env)

    def chip(self) -> str:
        return str(self.facts.chip or (self.profile.chips[0] if self.profile.chips else "A2"))


def req(name: str, spec: str | None, arch: str) -> str:
    """A requirement string; on x86 an exact torch/torchvision/torchaudio pin becomes the +cpu build."""
    if not spec:
        return name
    v = exact(spec)
    if arch == "x86_64" and name in CPU_LOCAL and v is not None and "*" not in spec and "+" not in v:
        return f"{name}=={v}+cpu"
    return f"{name}{spec}"


def exact(spec: str) -> str | None:
    """The version of an exact pin ('==2.8.0', '==0.13.*' -> '0.13.0' lower bound), None otherwise."""
    import re

    m = re.fullmatch(r"===?\s*([^,\s]+)", spec.strip())
    if not m:
        return None
    v = m.group(1)
    if v.endswith(".*"):
        v = v[:-2] + ".0"
    return v if parse_pkg_version(v) is not None else None


def conflicts(c: Ctx) -> None:
    ta_pin = c.pins.get("triton-ascend")
    if not ta_pin:
        return
    installed = c.facts.installed
    remove = ["triton"]
    ta_now = installed.get("triton-ascend")
    from doctor.knowledge.versions import pkg_satisfies

    if ta_now is not None and ("triton" in installed or not pkg_satisfies(ta_now, ta_pin)):
        remove.append("triton-ascend")
    c.steps.append(Step("remove-conflicts", UNINSTALL, "Remove mainline triton (conflicts with triton-ascend)",
                        packages=tuple(remove), reason="triton and triton-ascend share the triton/ package directory",
                        source_ref=up.SCRIPT_D))


def torch_stack(c: Ctx) -> None:
    stack = [req(n, c.pins[n], c.arch) for n in TORCH_STACK if n in c.pins]
    if not stack:
        return
    x86 = c.arch == "x86_64"
    c.steps.append(Step("torch-stack", INSTALL, "Install torch, torch-npu and torchvision at the profile's pins",
                        requirements=tuple(stack), index=c.cpu,
                        reason="torch-npu pins torch exactly; on x86 the +cpu build from the PyTorch CPU index" if x86
                        else "torch-npu pins torch exactly (aarch64 PyPI torch is a CPU build)",
                        source_ref=up.TORCH_NPU_X86 if x86 else c.doc()))


def vllm(c: Ctx) -> None:
    for key in ("vllm", "vllm-ascend"):
        if key in c.git and c.git[key].install != "wheel":
            s = c.source(key)
            c.steps.append(Step(f"clone-{key}", CLONE, f"Clone {s.url} at {s.ref}", source=s,
                                source_ref=up.at(s.url, s.commit or s.ref)))
            if key == "vllm":
                c.steps.append(Step("install-vllm", EDITABLE, "Build vLLM from source with VLLM_TARGET_DEVICE=empty",
                                    source=s, editable_dist="vllm", env=c.build_env(key), index=c.cpu,
                                    expect=c.expect(key), reason="the PyPI vllm wheels are CUDA builds",
                                    source_ref=c.doc()))
            else:
                _vllm_ascend(c, s)
        elif key in c.pins:
            c.steps.append(Step(f"install-{key}", INSTALL, f"Install {key} {c.pins[key]}",
                                requirements=(f"{key}{c.pins[key]}",), index=c.cpu.merged(c.extra), env=BUILD_ENV,
                                source_ref=c.doc()))


def _vllm_ascend(c: Ctx, s: GitSource) -> None:
    no_iso = c.era("vllm_ascend_no_build_isolation")
    env = c.build_env("vllm-ascend")
    why = []
    if ("SOC_VERSION", up.SOC_VERSION.get(c.chip(), "")) in env:
        why.append(f"SOC_VERSION={dict(env)['SOC_VERSION']} for {c.chip()} (no npu-smi to ask; {up.VA_SOC})")
    if ("COMPILE_CUSTOM_KERNELS", "0") in env:
        why.append(f"COMPILE_CUSTOM_KERNELS=0: no CANN toolkit to compile the custom kernels with ({up.VA_CPU_BUILD})")
    if no_iso:
        c.steps.append(Step("vllm-ascend-build-deps", INSTALL, "Install vllm-ascend's build and runtime requirements",
                            requirements=up.SCRIPT_D_BEFORE_VLLM_ASCEND, build_for="install-vllm-ascend",
                            requirement_files=("requirements.txt",), index=c.cpu.merged(c.extra), env=env,
                            reason="its pyproject [build-system].requires and requirements.txt at the pinned commit, plus "
                                   "the setuptools-scm upstream's script installs first; built with isolation, so a "
                                   "source-only dependency (arctic-inference) builds in its own environment",
                            source_ref=up.VERL_DOCKERFILE))
    c.steps.append(Step("install-vllm-ascend", EDITABLE, "Install vllm-ascend from source", source=s,
                        editable_dist="vllm-ascend", env=env, index=c.cpu.merged(c.extra), no_build_isolation=no_iso,
                        no_deps=no_iso, expect=c.expect("vllm-ascend"),
                        reason="vllm-ascend source build (the profile's branch)" + ("; " + "; ".join(why) if why else ""),
                        source_ref=up.VERL_DOCKERFILE if no_iso else c.doc()))


def megatron_mindspeed(c: Ctx) -> None:
    if "megatron-lm" in c.git:
        s = c.source("megatron-lm")
        c.steps.append(Step("clone-megatron-lm", CLONE, f"Clone Megatron-LM at {s.ref}", source=s,
                            source_ref=up.at(s.url, s.commit or s.ref)))
        if c.git["megatron-lm"].install == "pythonpath":
            c.pythonpath.append(os.path.join(c.src, s.name))
        else:
            c.steps.append(Step("install-megatron-lm", EDITABLE, "Install Megatron-LM editable, --no-deps", source=s,
                                editable_dist="megatron-core", no_deps=True, expect=c.expect("megatron-lm"),
                                env=BUILD_ENV, reason="--no-deps: Megatron's dependencies name an unpinned torch",
                                source_ref=up.at(s.url, s.commit or s.ref, "pyproject.toml")))
    if "mindspeed" in c.git:
        s = c.source("mindspeed")
        c.steps.append(Step("clone-mindspeed", CLONE, f"Clone MindSpeed at {s.commit or s.ref}", source=s,
                            reason="MindSpeed is not installable from PyPI", source_ref=up.MINDSPEED_NOT_ON_PYPI))
        c.steps.append(Step("install-mindspeed", EDITABLE, "Install MindSpeed editable", source=s, editable_dist="mindspeed",
                            expect=c.expect("mindspeed"), env=BUILD_ENV, source_ref=up.MINDSPEED_INSTALL))
    if "mbridge" in c.pins or c.era("mbridge"):
        spec = c.pins.get("mbridge")
        c.steps.append(Step("mbridge", INSTALL, f"Install mbridge {spec or '(latest)'}",
                            requirements=(req("mbridge", spec, c.arch),), source_ref=c.doc()))


def verl(c: Ctx) -> None:
    """verl with its dependencies (upstream's scripts run `pip install -e .`, which resolves them) and the
    release's requirements-npu.txt, in the order the release's script has them."""
    if "verl" in c.git:
        s = c.source("verl")
        c.steps.append(Step("clone-verl", CLONE, f"Clone verl at {s.commit or s.ref}", source=s,
                            source_ref=up.at(s.url, s.commit or s.ref)))
        requirements = Step("verl-requirements", INSTALL, "Install verl's requirements-npu.txt",
                            requirements=("-r", os.path.join(c.src, s.name, "requirements-npu.txt")), index=c.cpu.merged(c.extra),
                            verify=False, env=BUILD_ENV,
                            source_ref=up.at(s.url, s.commit or s.ref, "requirements-npu.txt"))
        if getattr(c.profile, "verl_requirements", None) and c.at_pin("verl"):
            # the clone's file at the pinned commit, with the line the profile pins (TransferQueue from git main, a
            # moving branch); a ref the user chooses, or a wheelhouse's bundle of another commit, reads that clone's
            # own file
            requirements = profile_requirements(c, "the profile carries the lines of the file at the pinned commit, "
                                                "with the doctor's pin of a line that names a moving branch")
        editable = Step("install-verl", EDITABLE, "Install verl editable, with its dependencies", source=s,
                        editable_dist="verl", expect=c.expect("verl"), env=BUILD_ENV, index=c.cpu.merged(c.extra),
                        reason="upstream's install script runs `pip install -e .`: verl's install_requires "
                               "(tensordict, hydra-core, ray, ...) come with it",
                        source_ref=c.doc())
        # from 0.9.1 upstream's script installs verl before requirements-npu.txt, so those pins have the last word
        c.steps.extend((editable, requirements) if c.era("verl_before_requirements") else (requirements, editable))
    elif "verl" in c.pins:
        c.steps.append(Step("install-verl", INSTALL, f"Install verl {c.pins['verl']} with its dependencies",
                            requirements=(f"verl{c.pins['verl']}",), index=c.cpu.merged(c.extra), env=BUILD_ENV,
                            reason="upstream's install script installs verl with its dependencies (`pip install -e .`); "
                                   "its Requires-Dist (tensordict, hydra-core, ray, ...) is what `import verl` needs",
                            source_ref=c.doc()))
        if getattr(c.profile, "verl_requirements", None):
            c.steps.append(profile_requirements(c, "the profile carries its lines (verl from PyPI has no clone to read it "
                                                "from)"))


def profile_requirements(c: Ctx, why: str) -> Step:
    """The verl-requirements step from the profile's `verl_requirements` lines (checked as requirements here)."""
    from doctor.knowledge.profiles import verl_requirement_lines

    reqs = c.profile.verl_requirements
    name = str(reqs["file"]).rsplit("/", 1)[-1]
    return Step("verl-requirements", INSTALL, f"Install verl's {name}", requirements=verl_requirement_lines(c.profile),
                index=c.cpu.merged(c.extra), env=BUILD_ENV,
                reason=f"upstream's script installs {name} beside verl; {why}", source_ref=str(reqs["file"]))


def final_pins(c: Ctx, skip: set[str]) -> None:
    final = [req(n, c.pins[n], c.arch) for n in (*TORCH_STACK, *FINAL) if n in c.pins]
    others = [n for n in sorted(c.pins) if n not in TORCH_STACK + FINAL and n not in skip
              and n not in ("triton-ascend", "mbridge")]
    final += [req(n, c.pins[n], c.arch) for n in others]
    if final:
        # the title names every package the step pins beyond the torch stack, transformers and numpy (xgrammar, ...)
        title = "Re-pin the torch stack, transformers and numpy" + (f", and {', '.join(others)}" if others else "")
        c.steps.append(Step("final-pins", INSTALL, title,
                            requirements=tuple(dict.fromkeys(final)), index=c.cpu, env=BUILD_ENV,
                            reason="vllm-ascend and MindSpeed requirements move torch-npu and numpy",
                            source_ref=c.doc()))


def triton_last(c: Ctx) -> None:
    """After the last step that resolves dependencies: on x86 those resolves bring mainline triton back (vLLM,
    xgrammar), and it overwrites triton-ascend's files in the shared directory, so both go and triton-ascend comes
    back on its own (`--no-deps`): the plan ends with the conflict set removed and triton-ascend in place. A stack
    without triton-ascend that builds vLLM ends with mainline triton removed all the same."""
    ta_pin = c.pins.get("triton-ascend")
    if not ta_pin:
        # a line before triton-ascend (vllm-ascend v0.9.1): its Dockerfile still uninstalls the triton vLLM's xgrammar
        # brings on x86, and the check warns of it on an Ascend host (triton-on-npu)
        if any(s.kind == CLONE and s.source is not None and s.source.name == "vllm" for s in c.steps):
            c.steps.append(Step("remove-triton", UNINSTALL, "Remove the triton that the resolves pulled in",
                                packages=("triton",), expect=(("triton", None),),
                                reason="vLLM's xgrammar brings mainline triton on x86; it does not work on Ascend",
                                source_ref=up.VA_DOCKERFILE_PRE_TRITON_ASCEND))
        return
    c.steps.append(Step("remove-triton", UNINSTALL, "Remove the triton that the resolves pulled in (and the triton-ascend "
                        "it overwrote)", packages=CONFLICTS, expect=(("triton", None),), source_ref=up.VA_DOCKERFILE))
    c.steps.append(Step("triton-ascend", INSTALL, f"Install triton-ascend {ta_pin}", requirements=(f"triton-ascend{ta_pin}",),
                        index=c.extra, no_deps=True, reason="last, so nothing replaces it", source_ref=up.VA_DOCKERFILE))


def prune(c: Ctx) -> None:
    """After the last step that resolves dependencies: what the run installed and the re-pins left required by
    nothing goes (installers.orphans). A resolve took the newest release of a package the final pins move back, and
    that release's requirements stayed (transformers 5.25.0's kernels beside the re-pinned 5.10.4)."""
    if any(resolving(s) for s in c.steps):
        c.steps.append(Step("remove-orphans", PRUNE, "Remove what the re-pins left required by nothing",
                            reason="decided when it runs: what this run installed (absent before it) that neither the "
                                   "plan names nor any installed distribution requires (base Requires-Dist, or an extra "
                                   "one of them requests), to a fixed point; nothing that was there before is removed",
                            source_ref=c.doc()))


def resolving(step: Step) -> bool:
    """A step whose installer resolves dependencies (and so may bring triton back)."""
    return step.kind in (INSTALL, EDITABLE) and not step.no_deps


def ref_for_version(key: str, version: str) -> str | None:
    fmt = TAG_FORMAT.get(key)
    return fmt.format(version) if fmt else None


def source_key(name: str, git: Mapping[str, Any]) -> str | None:
    """The git source a user means by `name`: its profile key, its distribution or its clone directory."""
    from doctor.snapshot.model import normalize_name

    n = normalize_name(name)
    for k, (d, dist, _m, _v) in SOURCES.items():
        if k in git and n in (k, dist, normalize_name(d)):
            return k
    return None
