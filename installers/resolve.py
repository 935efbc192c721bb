"""Facts + profile + `--set` pins -> Plan. Pure: no I/O, no subprocess, so every plan is a unit test.

The step order is the upstream documented sequence (shared/reference/verl.md §1.4 eras B–D,
cann_torchnpu_vllm.md §1.3, mindspeed.md §1.1–§1.2):

1. remove mainline triton (and a triton-ascend at the wrong version): triton and triton-ascend share the
   `triton/` package directory, so verl's docs/script always `pip uninstall -y triton triton-ascend` first;
2. torch, torch-npu, torchvision (torchaudio) as one resolver call — on x86 `torch==X+cpu` from the PyTorch
   CPU index, because torch-npu's x86 wheels pin the `+cpu` build (cann_torchnpu_vllm.md §2.4);
3. vLLM from its git tag with `VLLM_TARGET_DEVICE=empty`, then vllm-ascend (source or wheel as the profile says);
4. triton removed again (vLLM on x86 pulls it in; vllm-ascend Dockerfile) and triton-ascend installed;
5. Megatron-LM at the pinned ref, commit verified: on PYTHONPATH for verl <= 0.7.0, `pip install -e --no-deps`
   before MindSpeed from 0.7.1 on (the `--no-deps` keeps pip away from the NPU torch: mindspeed.md §1.3);
6. MindSpeed cloned at the pinned ref/commit, installed editable; mbridge;
7. verl: `requirements-npu.txt`, then `pip install -e . --no-deps` (verl's Dockerfiles; verl.md §1.6, cann §8);
8. final pins (the torch stack, transformers, numpy) — vllm-ascend and MindSpeed requirements move them;
9. doctor-env.sh.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from doctor.errors import InputError, RefusedError
from doctor.installers.plan import (
    CLONE,
    EDITABLE,
    ENVFILE,
    INSTALL,
    PYTORCH_CPU_INDEX,
    UNINSTALL,
    EnvSpec,
    GitSource,
    IndexOptions,
    Plan,
    Step,
    SystemRequirement,
    Target,
)
from doctor.knowledge.versions import CannVersion, DriverVersion, parse_pkg_version, pkg_satisfies
from doctor.snapshot.model import UNKNOWN, Snapshot, known, normalize_name

TORCH_STACK = ("torch", "torch-npu", "torchvision", "torchaudio")
CPU_LOCAL = ("torch", "torchvision", "torchaudio")  # the packages the PyTorch CPU index serves as +cpu
FINAL = ("transformers", "numpy")

# git source key in a profile -> (clone dir, distribution, top-level module)
SOURCES = {
    "vllm": ("vllm", "vllm", "vllm"),
    "vllm-ascend": ("vllm-ascend", "vllm-ascend", "vllm_ascend"),
    "megatron-lm": ("Megatron-LM", "megatron-core", "megatron"),
    "mindspeed": ("MindSpeed", "mindspeed", "mindspeed"),
    "verl": ("verl", "verl", "verl"),
}

SYSTEM_SOURCE = ("CANN, kernels, NNAL and the driver are system packages installed as root from Huawei's .run files "
                 "(verl install_guidance.rst; shared/reference/verl.md §1.4): the doctor never installs them")


@dataclass(frozen=True)
class Facts:
    """What resolution needs to know about the target host and environment."""

    arch: str
    python_version: str  # "3.11"
    glibc: str | None = None
    cann: str | None = None
    chip: str | None = None
    driver: str | None = None
    kernels: str | None = None
    nnal: str | None = None
    ascend_root: str | None = None
    toolkit_path: str | None = None
    installed: Mapping[str, str | None] = field(default_factory=dict)


def _glibc(libc: Any) -> str | None:
    if isinstance(libc, str):
        m = re.search(r"(\d+\.\d+)", libc)
        if m and ("glibc" in libc.lower() or re.fullmatch(r"\s*\d+\.\d+\s*", libc)):
            return m.group(1)
    return None


def facts_from_snapshot(snap: Snapshot, *, arch: str | None = None, python_version: str | None = None,
                        glibc: str | None = None) -> Facts:
    """Facts from any snapshot (live or --from); explicit --arch/--python-version/--glibc win."""
    from doctor.knowledge import chips

    host = snap.host if known(snap.host) else None
    py = snap.python if known(snap.python) else None
    a = arch or (host.arch if host is not None and known(host.arch) else None)
    pv = python_version or (py.version if py is not None and known(py.version) else None)
    if not a:
        raise InputError("the target's arch is unknown: pass --arch aarch64|x86_64", source="--arch")
    if not pv:
        raise InputError("the target's Python version is unknown: pass --python-version X.Y", source="--python-version")
    pv = ".".join(pv.split(".")[:2])

    def ver(part: str) -> str | None:
        c = snap.ascend_part(part)
        return c.version if c not in (None, UNKNOWN) and known(c.version) and c.version else None

    tk = snap.ascend_part("toolkit")
    fam = chips.family(snap)
    root = snap.ascend_part("root")
    installed = {n: p.version for n, p in snap.packages.items()} if known(snap.packages) else {}
    return Facts(arch=a, python_version=pv, glibc=glibc or (_glibc(host.libc) if host is not None and known(host.libc) else None),
                 cann=ver("toolkit"), chip=fam if isinstance(fam, str) else None, driver=ver("driver"),
                 kernels=ver("kernels"), nnal=ver("nnal"), ascend_root=root if isinstance(root, str) else None,
                 toolkit_path=tk.path if tk not in (None, UNKNOWN) and known(tk.path) else None, installed=installed)


# -- user pins ------------------------------------------------------------------------------------------------


def parse_sets(specs: Sequence[str]) -> dict[str, str]:
    """`--set PKG=VERSION` -> {normalised name: version}; InputError on anything else."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, ver = spec.partition("=")
        name, ver = name.strip(), ver.strip().lstrip("=")
        if not sep or not name or not ver or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise InputError(f"expected PKG=VERSION, got {spec!r}", source="--set")
        if parse_pkg_version(ver) is None:
            raise InputError(f"{ver!r} is not a version", source="--set", path=name)
        out[normalize_name(name)] = ver
    return out


def check_seed_rule(cann: str | None, pins: Mapping[str, str], *, origin: str) -> None:
    """Refuse (exit 2) a pin that breaks the seed rule: CANN newer than 8.3.RC1 needs vllm and vllm-ascend
    >= 0.9.1 (doctor.knowledge.seed; DESIGN.md 'Knowledge')."""
    from doctor.knowledge import seed as rules

    for pkg in rules.SEED_RULE_PACKAGES:
        spec = pins.get(pkg)
        if not spec:
            continue
        ver = _exact(spec)
        if ver is None:
            continue
        msg = rules.seed_rule_violation(cann, pkg, ver)
        if msg:
            raise RefusedError(f"{origin} {pkg}=={ver} breaks the seed rule (CANN newer than {rules.SEED_RULE_CANN} "
                               f"needs vllm and vllm-ascend >= {rules.SEED_RULE_MIN}); this host has CANN {cann}: {msg}",
                               source=origin)


def _exact(spec: str) -> str | None:
    """The version of an exact pin ('==2.8.0', '==0.13.*' -> '0.13.0' lower bound), None otherwise."""
    s = spec.strip()
    m = re.fullmatch(r"===?\s*([^,\s]+)", s)
    if not m:
        return None
    v = m.group(1)
    if v.endswith(".*"):
        v = v[:-2] + ".0"
    return v if parse_pkg_version(v) is not None else None


# -- compatibility gates ----------------------------------------------------------------------------------------


def check_target(profile: Any, facts: Facts) -> None:
    """Refuse what the profile cannot serve: an inference card, another arch, another Python."""
    if facts.chip in ("310P", "310"):
        raise RefusedError(
            f"Atlas 300I/310P ({facts.chip}) are inference cards: MindSpeed training is not supported there "
            "(MindSpeed install guide lists Atlas A2/A3 training and Ascend 950 only; shared/reference/mindspeed.md §1.5). "
            "Use vllm-ascend for inference instead.", source="doctor install")
    if facts.arch not in profile.arches:
        raise RefusedError(f"profile {profile.name} is verified for {', '.join(profile.arches)}, not {facts.arch}",
                           source="--profile")
    if pkg_satisfies(facts.python_version + ".0", profile.python) is False:
        raise RefusedError(f"profile {profile.name} needs Python {profile.python}; the target has {facts.python_version}",
                           source="--python")


def nearest_profiles(profiles: Sequence[Any], facts: Facts, n: int = 3) -> list[str]:
    """Profiles sorted by CANN distance to the host (then newest), for the 'no matching profile' message."""
    c = CannVersion.try_parse(facts.cann) if facts.cann else None

    def key(p: Any) -> tuple[Any, ...]:
        pc = CannVersion(p.cann_version)
        dist = abs((pc.major * 100 + pc.minor) - (c.major * 100 + c.minor)) if c is not None else 0
        return (dist, facts.chip not in p.chips, facts.arch not in p.arches)

    ranked = sorted(profiles, key=key)[:n]
    return [f"{p.name} (CANN {p.cann_version}, chips {'/'.join(p.chips)}, Python {p.python})" for p in ranked]


# -- the plan -------------------------------------------------------------------------------------------------


def _req(name: str, spec: str | None, arch: str) -> str:
    """A requirement string; on x86 an exact torch/torchvision/torchaudio pin becomes the +cpu build."""
    if not spec:
        return name
    v = _exact(spec)
    if arch == "x86_64" and name in CPU_LOCAL and v is not None and "*" not in spec and "+" not in v:
        return f"{name}=={v}+cpu"
    return f"{name}{spec}"


def system_requirements(profile: Any, facts: Facts) -> tuple[SystemRequirement, ...]:
    chip = (facts.chip or (profile.chips[0] if profile.chips else "A2"))
    c = CannVersion.try_parse(facts.cann) if facts.cann else None
    need = f">={profile.cann_min}" + (f",<{profile.cann_max}" if profile.cann_max else "")
    ok = None if facts.cann is None else bool(c is not None and profile.cann_matches(c))
    new_line = CannVersion(profile.cann_version).major >= 9
    reqs = [SystemRequirement("cann", f"Ascend-cann-toolkit {profile.cann_version}", need, facts.cann, ok)]
    kpkg = f"Ascend-cann-{chip}-ops {profile.cann_version}" if new_line else \
        f"Ascend-cann-kernels-{'910b' if chip == 'A2' else chip.lower()} {profile.cann_version}"
    kc = CannVersion.try_parse(facts.kernels) if facts.kernels else None
    reqs.append(SystemRequirement("kernels", kpkg, profile.cann_version, facts.kernels,
                                  None if facts.kernels is None else bool(c is not None and kc is not None and kc == c)))
    if profile.nnal:
        nc = CannVersion.try_parse(facts.nnal) if facts.nnal else None
        reqs.append(SystemRequirement("nnal", f"Ascend-cann-nnal {profile.cann_version}", profile.cann_version,
                                      facts.nnal, None if facts.nnal is None else bool(nc is not None and c is not None and nc == c)))
    if profile.driver_min:
        dv = DriverVersion.try_parse(facts.driver) if facts.driver else None
        reqs.append(SystemRequirement("driver", f"Ascend-hdk-{chip.lower()}-npu-driver >= {profile.driver_min}",
                                      f">={profile.driver_min}", facts.driver,
                                      None if facts.driver is None else bool(dv is not None and not dv < DriverVersion(profile.driver_min))))
    return tuple(reqs)


def _set_env_files(profile: Any, facts: Facts) -> tuple[str, ...]:
    """The profile's set_env.sh files, moved to the host's Ascend root; the CANN 9 layout (`<root>/cann`)
    sources cann/set_env.sh instead of ascend-toolkit/set_env.sh (verl.md §1.4 'set_env.sh')."""
    root = facts.ascend_root
    out = []
    for f in profile.set_env:
        if root and f.startswith("/usr/local/Ascend/"):
            f = os.path.join(root, f[len("/usr/local/Ascend/"):])
        if facts.toolkit_path and "/ascend-toolkit" not in facts.toolkit_path and "/cann" in facts.toolkit_path \
                and f.endswith("ascend-toolkit/set_env.sh"):
            f = f[: -len("ascend-toolkit/set_env.sh")] + "cann/set_env.sh"
        out.append(f)
    return tuple(dict.fromkeys(out))


def _verl_at_least(profile: Any, v: str) -> bool:
    return profile.verl == "main" or Version(profile.verl) >= Version(v)


def resolve(profile: Any, facts: Facts, *, sets: Mapping[str, str] | None = None, python: str | None = None,
            src_dir: str | None = None, env_path: str | None = None, prefix: str | None = None,
            reason: str = "") -> Plan:
    """The plan for `profile` on a host with `facts`, after the user's `--set` pins."""
    sets = dict(sets or {})
    check_target(profile, facts)
    pins: dict[str, str] = {normalize_name(k): v for k, v in profile.pins.items()}
    check_seed_rule(facts.cann, pins, origin=f"profile {profile.name} pins")
    check_seed_rule(facts.cann, {k: f"=={v}" for k, v in sets.items()}, origin="--set")
    git = {normalize_name(k): g for k, g in profile.git.items()}
    for name in sets:
        key = next((k for k, v in SOURCES.items() if name in (k, v[1]) and k in git), None)
        if key is not None and key not in ("vllm", "vllm-ascend"):
            raise InputError(f"{name} is installed from git at the profile's ref ({git[key].ref}); a version pin cannot "
                             "choose a commit — pick another profile instead", source="--set", path=name)
    for name, ver in sets.items():
        pins[name] = f"=={ver}"
        if name in ("vllm", "vllm-ascend") and name in git:
            g = git[name]
            ref = f"v{ver}"
            git[name] = type(g)(repo=g.repo, ref=ref, commit=None, version=ver, install=g.install)
    arch = facts.arch
    cpu = IndexOptions(extra_index_urls=(profile.index_x86_cpu_torch or PYTORCH_CPU_INDEX,)) if arch == "x86_64" else IndexOptions()
    extra = IndexOptions(extra_index_urls=tuple(profile.index_extra),
                         trusted_hosts=tuple(_host(u) for u in profile.index_extra if u.startswith("http://") or "osinfra" in u))
    steps: list[Step] = []
    src = src_dir or "src"
    installed = {normalize_name(k): v for k, v in facts.installed.items()}

    # 1. conflicts
    ta_pin = pins.get("triton-ascend")
    remove = ["triton"]
    ta_now = installed.get("triton-ascend")
    if ta_pin and ta_now is not None and ("triton" in installed or not pkg_satisfies(ta_now, ta_pin)):
        remove.append("triton-ascend")
    if ta_pin:
        steps.append(Step("remove-conflicts", UNINSTALL, "Remove mainline triton (conflicts with triton-ascend)",
                          packages=tuple(remove), reason="triton and triton-ascend share the triton/ package directory",
                          source_ref="verl install_vllm_mcore_npu.sh step 1; verl.md §1.4"))

    # 2. torch stack
    stack = [_req(n, pins[n], arch) for n in TORCH_STACK if n in pins]
    if stack:
        steps.append(Step("torch-stack", INSTALL, "Install torch, torch-npu and torchvision at the profile's pins",
                          requirements=tuple(stack), index=cpu,
                          reason="torch-npu pins torch exactly; on x86 the +cpu build from the PyTorch CPU index" if arch == "x86_64"
                          else "torch-npu pins torch exactly (aarch64 PyPI torch is a CPU build)",
                          source_ref="cann_torchnpu_vllm.md §2.4; verl.md §1.4 era B step 2-3"))

    # 3. vLLM and vllm-ascend
    def source(key: str) -> GitSource:
        g = git[key]
        d, _dist, mod = SOURCES[key]
        return GitSource(name=d, url=g.repo, ref=g.ref, commit=g.commit, module=mod,
                         submodules=key == "vllm-ascend" and _verl_at_least(profile, "0.8.0"))

    def dist_expect(key: str) -> tuple[tuple[str, str | None], ...]:
        # a checkout reports its own version string: tag v0.8.0 of verl says 0.8.0.dev, a release branch
        # built with setuptools-scm says 0.13.1.devN+g…; `==X.Y.Z.*` accepts those and nothing of another release
        g = git[key]
        dist = SOURCES[key][1]
        spec = pins.get(dist)
        if g.version:
            v = parse_pkg_version(g.version)
            plain = v is not None and v.pre is None and v.dev is None and v.post is None and v.local is None
            spec = f"=={g.version}.*" if plain and "*" not in g.version else f"=={g.version}"
        return ((dist, spec),) if spec else ((dist, ""),)

    era_d = _verl_at_least(profile, "0.8.0")
    for key, extra_env, title in (("vllm", (("VLLM_TARGET_DEVICE", "empty"),), "Build vLLM from source with VLLM_TARGET_DEVICE=empty"),
                                  ("vllm-ascend", (), "Install vllm-ascend from source")):
        if key in git and git[key].install != "wheel":
            s = source(key)
            steps.append(Step(f"clone-{key}", CLONE, f"Clone {s.url} at {s.ref}", source=s,
                              source_ref="verl.md §1.4; cann_torchnpu_vllm.md §1.3"))
            steps.append(Step(f"install-{key}", EDITABLE, title, source=s, editable_dist=SOURCES[key][1],
                              env=extra_env, index=cpu.merged(extra) if key == "vllm-ascend" else cpu,
                              no_build_isolation=key == "vllm-ascend" and era_d, expect=dist_expect(key),
                              build_requires=("setuptools>=64", "wheel", "setuptools-scm>=8"),
                              reason="the PyPI vllm wheels are CUDA builds" if key == "vllm" else
                              "vllm-ascend source build (the profile's branch)",
                              source_ref="verl.md §1.4 eras B-D; VA installation.md"))
        elif key in pins:
            steps.append(Step(f"install-{key}", INSTALL, f"Install {key} {pins[key]}", requirements=(f"{key}{pins[key]}",),
                              index=cpu.merged(extra), source_ref="cann_torchnpu_vllm.md §1.3 (v0.9+ wheels)"))

    # 4. triton-ascend
    if ta_pin:
        steps.append(Step("remove-triton", UNINSTALL, "Remove the triton that vLLM pulled in", packages=("triton",),
                          source_ref="vllm-ascend Dockerfile ('pip uninstall -y triton'); cann_torchnpu_vllm.md §1.3"))
        steps.append(Step("triton-ascend", INSTALL, f"Install triton-ascend {ta_pin}",
                          requirements=(f"triton-ascend{ta_pin}",), index=extra, no_deps=True,
                          reason="after vLLM, so nothing replaces it", source_ref="verl.md §1.4 era D step 3"))

    # 5./6. Megatron-LM and MindSpeed
    pythonpath: list[str] = []
    if "megatron-lm" in git:
        s = source("megatron-lm")
        steps.append(Step("clone-megatron-lm", CLONE, f"Clone Megatron-LM at {s.ref}", source=s,
                          source_ref="mindspeed.md §1.2-§1.3"))
        if git["megatron-lm"].install == "pythonpath":
            pythonpath.append(os.path.join(src, s.name))
        else:
            steps.append(Step("install-megatron-lm", EDITABLE, "Install Megatron-LM editable, --no-deps", source=s,
                              editable_dist="megatron-core", no_deps=True, expect=dist_expect("megatron-lm"),
                              build_requires=("setuptools>=64", "wheel", "pybind11"),
                              reason="--no-deps: Megatron's requirements pull an unpinned (CUDA) torch",
                              source_ref="verl.md §1.4 era C (pip install -e Megatron-LM, before MindSpeed); mindspeed.md §1.3"))
    if "mindspeed" in git:
        s = source("mindspeed")
        steps.append(Step("clone-mindspeed", CLONE, f"Clone MindSpeed at {s.commit or s.ref}", source=s,
                          source_ref="mindspeed.md §1.1 (not installable from PyPI: §0.1)"))
        steps.append(Step("install-mindspeed", EDITABLE, "Install MindSpeed editable", source=s, editable_dist="mindspeed",
                          expect=dist_expect("mindspeed"), build_requires=("setuptools>=64", "wheel"),
                          source_ref="mindspeed.md §1.1 ('pip install -e MindSpeed')"))
    if "mbridge" in pins or _verl_at_least(profile, "0.7.0"):
        spec = pins.get("mbridge")
        steps.append(Step("mbridge", INSTALL, f"Install mbridge {spec or '(latest)'}", requirements=(_req("mbridge", spec, arch),),
                          source_ref="verl.md §1.4 era B step 7 ('pip install mbridge')"))

    # 7. verl
    if "verl" in git:
        s = source("verl")
        steps.append(Step("clone-verl", CLONE, f"Clone verl at {s.commit or s.ref}", source=s, source_ref="verl.md §1.4"))
        steps.append(Step("verl-requirements", INSTALL, "Install verl's requirements-npu.txt",
                          requirements=("-r", os.path.join(src, s.name, "requirements-npu.txt")), index=cpu,
                          expect=dist_expect("verl"), verify=False, source_ref="verl.md §1.6"))
        steps.append(Step("install-verl", EDITABLE, "Install verl editable, --no-deps", source=s, editable_dist="verl",
                          no_deps=True, expect=dist_expect("verl"), build_requires=("setuptools>=64", "wheel"),
                          reason="verl's PyPI metadata is CUDA-oriented; its Dockerfiles install it --no-deps",
                          source_ref="verl.md §0.6, §1.5; cann_torchnpu_vllm.md §8"))
    elif "verl" in pins:
        steps.append(Step("install-verl", INSTALL, f"Install verl {pins['verl']} --no-deps", requirements=(f"verl{pins['verl']}",),
                          no_deps=True, source_ref="cann_torchnpu_vllm.md §8"))

    # 8. final pins
    final = [_req(n, pins[n], arch) for n in (*TORCH_STACK, *FINAL) if n in pins]
    final += [_req(n, pins[n], arch) for n in sorted(pins) if n not in TORCH_STACK + FINAL and n not in SOURCES_DISTS
              and n not in ("triton-ascend", "mbridge")]
    if final:
        steps.append(Step("final-pins", INSTALL, "Re-pin the torch stack, transformers and numpy",
                          requirements=tuple(dict.fromkeys(final)), index=cpu,
                          reason="vllm-ascend and MindSpeed requirements move torch-npu and numpy",
                          source_ref="verl.md §1.4 era D step 9; mindspeed.md §4 (numpy<=1.26.0)"))

    # 9. env file
    env = EnvSpec(path=env_path or "doctor-env.sh", set_env_files=_set_env_files(profile, facts),
                  pythonpath=tuple(pythonpath), exports=tuple(sorted(profile.exports.items())))
    steps.append(Step("env-file", ENVFILE, f"Write {env.path}", reason="sources set_env.sh, exports PYTHONPATH and "
                      "the recommended variables", source_ref="verl.md §1.4 'set_env.sh'"))
    ids = [s.id for s in steps]
    assert len(ids) == len(set(ids)), ids
    target = Target(python=python, python_version=facts.python_version, arch=arch, glibc=facts.glibc, src_dir=src_dir,
                    prefix=prefix)
    notes = [SYSTEM_SOURCE, *profile.notes]
    return Plan(profile=profile.name, reason=reason, target=target, steps=tuple(steps), env=env,
                system=system_requirements(profile, facts), pins=tuple(sorted(pins.items())), notes=tuple(notes))


SOURCES_DISTS = {v[1] for v in SOURCES.values()} | set(SOURCES)


def _host(url: str) -> str:
    from urllib.parse import urlparse

    return urlparse(url).hostname or url


def spec_ok(spec: str) -> bool:
    try:
        SpecifierSet(spec)
    except Exception:
        return False
    return True
