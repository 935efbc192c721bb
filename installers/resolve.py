"""Facts + profile + `--set` / `--git-ref` choices -> Plan. Pure: no I/O, no subprocess, so every plan is a unit test.

The step builders and their upstream order live in installers.steps; this module gathers the facts, validates
the user's choices against the profile and the rules, and runs the builders in order.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from doctor.errors import InputError, RefusedError
from doctor.installers import steps as st
from doctor.installers import upstream as up
from doctor.installers.gitsrc import is_sha
from doctor.installers.plan import (
    ENVFILE,
    EnvSpec,
    IndexOptions,
    Plan,
    Step,
    SystemRequirement,
    Target,
)
from doctor.knowledge.profiles import PYTORCH_CPU_INDEX
from doctor.knowledge.versions import (
    CannVersion,
    DriverVersion,
    base_version,
    parse_pkg_version,
)
from doctor.snapshot.model import UNKNOWN, Snapshot, known, normalize_name

TORCH_STACK, CPU_LOCAL, FINAL, SOURCES = st.TORCH_STACK, st.CPU_LOCAL, st.FINAL, st.SOURCES
SYSTEM_SOURCE = ("CANN, kernels, NNAL and the driver are system packages installed as root from Huawei's .run files "
                 f"({up.INSTALL_GUIDE}): the doctor never installs them")
_PY_VERSION = re.compile(r"3\.\d{1,2}")
_GLIBC = re.compile(r"\d+\.\d+")


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
    firmware: str | None = None
    ascend_root: str | None = None
    toolkit_path: str | None = None
    installed: Mapping[str, str | None] = field(default_factory=dict)
    npu_seen: bool | None = None  # npu-smi listed devices (True), found none or is absent (False), unknown (None)
    where: str = "this host"  # how messages name the machine: "this host" or "the snapshot" (--from)


def _glibc(libc: Any) -> str | None:
    """"2.35" from a snapshot's "glibc 2.35" (read by the wheel-tag judge's reader, `tagfit.host_libc`) or from a
    bare "2.35"; None for another C library."""
    if not isinstance(libc, str):
        return None
    if re.fullmatch(r"\s*\d+\.\d+\s*", libc):
        return libc.strip()
    from doctor.knowledge.tagfit import GLIBC, host_libc

    kind, version = host_libc(libc)
    return f"{version[0]}.{version[1]}" if kind == GLIBC and version else None


def check_python_version(pv: str, flag: str = "--python-version") -> str:
    """`3.11` or `3.11.4` -> `3.11`; anything else is exit 2 naming the flag."""
    short = ".".join(pv.strip().split(".")[:2])
    if not _PY_VERSION.fullmatch(short) or not all(p.isdigit() for p in pv.strip().split(".")):
        raise InputError(f"{pv!r} is not a Python version (expected X.Y, e.g. 3.11)", source=flag)
    return short


def check_glibc(g: str) -> str:
    if not _GLIBC.fullmatch(g.strip()):
        raise InputError(f"{g!r} is not a glibc version (expected X.Y, e.g. 2.35)", source="--glibc")
    return g.strip()


def facts_from_snapshot(snap: Snapshot, *, arch: str | None = None, python_version: str | None = None,
                        glibc: str | None = None, where: str = "this host") -> Facts:
    """Facts from any snapshot (live or --from); explicit --arch/--python-version/--glibc win."""
    from doctor.knowledge import chips

    host = snap.host if known(snap.host) else None
    py = snap.python if known(snap.python) else None
    a = arch or (host.arch if host is not None and known(host.arch) else None)
    if python_version:
        pv: str | None = check_python_version(python_version)
    else:
        pv = py.version if py is not None and known(py.version) else None
    if glibc:
        glibc = check_glibc(glibc)
    if not a:
        raise InputError(f"the arch of {where} is unknown: pass --arch aarch64|x86_64", source="--arch")
    if not pv:
        raise InputError(f"the Python version of {where} is unknown: pass --python-version X.Y", source="--python-version")
    pv = ".".join(pv.split(".")[:2])

    def ver(part: str) -> str | None:
        c = snap.ascend_part(part)
        return c.version if c not in (None, UNKNOWN) and known(c.version) and c.version else None

    tk = snap.ascend_part("toolkit")
    fam = chips.family(snap)
    root = snap.ascend_part("root")
    devs = snap.ascend_part("devices")
    npu_seen = bool(devs) if isinstance(devs, list) else (False if devs is None else None)
    installed = {n: p.version for n, p in snap.packages.items()} if known(snap.packages) else {}
    return Facts(arch=a, python_version=pv, glibc=glibc or (_glibc(host.libc) if host is not None and known(host.libc) else None),
                 cann=ver("toolkit"), chip=fam if isinstance(fam, str) else None, driver=ver("driver"),
                 kernels=ver("kernels"), nnal=ver("nnal"), firmware=ver("firmware"),
                 ascend_root=root if isinstance(root, str) else None,
                 toolkit_path=tk.path if tk not in (None, UNKNOWN) and known(tk.path) else None, installed=installed,
                 npu_seen=npu_seen, where=where)


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


def parse_git_refs(specs: Sequence[str]) -> dict[str, str]:
    """`--git-ref NAME=REF` -> {name as typed: ref}; names are checked against the profile in `resolve`."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, ref = spec.partition("=")
        name, ref = name.strip(), ref.strip()
        if not sep or not name or not ref or any(c.isspace() for c in ref) or ref.startswith("-"):
            raise InputError(f"expected NAME=REF (a branch, tag or commit), got {spec!r}", source="--git-ref")
        out[name] = ref
    return out


def check_seed_rule(cann: str | None, pins: Mapping[str, str], *, origin: str, whose: str = "this host has") -> None:
    """Refuse (exit 2) a pin that breaks the seed rule: CANN newer than 8.3.RC1 needs vllm and vllm-ascend
    >= 0.9.1 (doctor.knowledge.seed)."""
    from doctor.knowledge import seed as rules

    for pkg in rules.SEED_RULE_PACKAGES:
        spec = pins.get(pkg)
        ver = st.exact(spec) if spec else None
        if ver is None:
            continue
        msg = rules.seed_rule_violation(cann, pkg, ver)
        if msg:
            raise RefusedError(f"{origin} {pkg}=={ver} breaks the seed rule (CANN newer than {rules.SEED_RULE_CANN} "
                               f"needs vllm and vllm-ascend >= {rules.SEED_RULE_MIN}); {whose} CANN {cann}: {msg}",
                               source=origin)


def known_packages(profile: Any) -> set[str]:
    """What `--set` may name for a profile: its pins, its git sources' distributions, the torch stack."""
    names = {normalize_name(k) for k in profile.pins} | set(TORCH_STACK) | set(FINAL) | {"mbridge", "triton-ascend"}
    names |= {SOURCES[normalize_name(k)][1] for k in profile.git if normalize_name(k) in SOURCES}
    return names


def validate_sets(profile: Any, sets: Mapping[str, str], pins: Mapping[str, str]) -> None:
    """Unknown names and pins that break an exact pairing (torch-npu and torchaudio share torch's X.Y.Z) are
    exit 2, naming `--set` and the pin."""
    names = known_packages(profile)
    for name in sets:
        if name not in names:
            near = difflib.get_close_matches(name, sorted(names), n=1)
            raise InputError(f"{name} is not a package profile {profile.name} installs"
                             + (f" (did you mean {near[0]}?)" if near else "") + f"; it installs {', '.join(sorted(names))}",
                             source="--set", path=name)
    torch = st.exact(pins["torch"]) if "torch" in pins else None
    for other in ("torch-npu", "torchaudio"):
        o = st.exact(pins[other]) if other in pins else None
        if torch and o and (other in sets or "torch" in sets) and base_version(torch) != base_version(o):
            raise RefusedError(f"--set leaves torch {torch} beside {other} {o}: {other} {o} is built for torch "
                               f"{base_version(o)} exactly (same X.Y.Z); set both, e.g. --set torch={base_version(o)}",
                               source="--set", path="torch" if "torch" in sets else other)


# -- compatibility gates ----------------------------------------------------------------------------------------


def check_target(profile: Any, facts: Facts, *, python_flag: str = "--python") -> None:
    """Refuse what the profile cannot serve: an inference card, another chip family, another arch, another Python."""
    if facts.chip in ("310P", "310"):
        raise RefusedError(
            f"Atlas 300I/310P ({facts.chip}) are inference cards: MindSpeed training is not supported there "
            f"(MindSpeed lists Atlas A2/A3 training products: {up.MINDSPEED_NOT_ON_PYPI}). "
            "Use vllm-ascend for inference instead.", source="doctor install")
    from doctor.knowledge.profiles import wrong_chip

    bad_chip = wrong_chip(profile, facts.chip, where=f"of {facts.where}")
    if bad_chip:  # the plan would name (and the env file source) the other chip's kernels, driver and firmware
        raise RefusedError(bad_chip + "; see `doctor profiles`", source="--profile")
    if facts.arch not in profile.arches:
        raise RefusedError(f"profile {profile.name} is verified for {', '.join(profile.arches)}, not {facts.arch} "
                           f"({facts.where})", source="--profile")
    if profile.python_fits(facts.python_version) is False:
        raise RefusedError(f"profile {profile.name} needs Python {profile.python}; {facts.where} has {facts.python_version}",
                           source=python_flag)


def nearest_profiles(profiles: Sequence[Any], facts: Facts, n: int = 3) -> list[str]:
    """Profiles sorted by CANN distance to the host, then releases before dated main snapshots and the newest first
    (as select_profile prefers them), for the 'no matching profile' message. Without the release order a host with no
    CANN was offered the main snapshot's two stacks first, in the table's file order."""
    c = CannVersion.try_parse(facts.cann) if facts.cann else None

    def key(p: Any) -> tuple[Any, ...]:
        pc = CannVersion(p.cann_version)
        dist = abs((pc.major * 100 + pc.minor) - (c.major * 100 + c.minor)) if c is not None else 0
        return (dist, facts.chip not in p.chips, facts.arch not in p.arches, p.is_snapshot)

    newest_first = sorted(profiles, key=lambda p: (p.verl_version, p.name), reverse=True)
    ranked = sorted(newest_first, key=key)[:n]
    return [f"{p.name} (CANN {cann_said(p)}, chips {'/'.join(p.chips)}, Python {p.python})" for p in ranked]


def cann_said(profile: Any) -> str:
    """The profile's CANN as the profile says it: its version, or, where upstream names none, "unknown" and the range
    inferred for it (as the plan says it): its low end, 9.1.0 for the 950 stack, is no CANN anyone documented."""
    if profile.cann_unknown:
        return f"unknown, inferred [{profile.cann_min}, {profile.cann_max})"
    return str(profile.cann_version)


# -- host prerequisites -------------------------------------------------------------------------------------------


def driver_minimum(profile: Any) -> str | None:
    """The profile's driver minimum, else the one the check's matrix gives for its CANN."""
    if profile.driver_min:
        return str(profile.driver_min)
    from doctor.knowledge.matrix import DRIVER_MINIMUM

    c = CannVersion(profile.cann_version)
    need = None
    for cmin, dmin in DRIVER_MINIMUM:
        if not c.is_ambiguous_against(CannVersion(cmin)) and c >= CannVersion(cmin):
            need = dmin
    return need


def _same_cann(found: str | None, want: CannVersion | None, toolkit_ok: bool | None) -> bool | None:
    """Kernels and NNAL must be the toolkit's own release, and that toolkit the profile's: kernels that match a
    wrong toolkit are reinstalled with it, so they are not met either."""
    if found is None:
        return None
    got = CannVersion.try_parse(found)
    return bool(got is not None and want is not None and got == want and toolkit_ok is not False)


def system_requirements(profile: Any, facts: Facts) -> tuple[SystemRequirement, ...]:
    """CANN toolkit, kernels, NNAL, driver and firmware: what the profile needs, what is there, whether it is enough
    (None: not found / not probed)."""
    chip = facts.chip or (profile.chips[0] if profile.chips else "A2")
    c = CannVersion.try_parse(facts.cann) if facts.cann else None
    need = f">={profile.cann_min}" + (f",<{profile.cann_max}" if profile.cann_max else "")
    ok = None if facts.cann is None else bool(c is not None and profile.cann_matches(c))
    new_line = CannVersion(profile.cann_version).major >= 9
    # a stack whose upstream names no CANN yet (the 950 one) has only an inferred range: never a release to install
    shown = (f"in [{profile.cann_min}, {profile.cann_max}) (upstream names no CANN for {profile.name} yet; the range "
             "is inferred)") if getattr(profile, "cann_unknown", False) else profile.cann_version
    reqs = [SystemRequirement("cann", f"Ascend-cann-toolkit {shown}", need, facts.cann, ok)]
    kpkg = f"Ascend-cann-{chip}-ops" if new_line else f"Ascend-cann-kernels-{'910b' if chip == 'A2' else chip.lower()}"
    kpkg += f" {profile.cann_version}" if shown == profile.cann_version else " (the toolkit's release)"
    same = f"the toolkit's release ({facts.cann})" if ok else \
        profile.cann_version if shown == profile.cann_version else "the toolkit's release"
    reqs.append(SystemRequirement("kernels", kpkg, same, facts.kernels, _same_cann(facts.kernels, c, ok)))
    if profile.nnal:
        reqs.append(SystemRequirement("nnal", "Ascend-cann-nnal " + (profile.cann_version if shown == profile.cann_version
                                                                    else "(the toolkit's release)"), same,
                                      facts.nnal, _same_cann(facts.nnal, c, ok)))
    dmin = driver_minimum(profile)
    if dmin:
        dv = DriverVersion.try_parse(facts.driver) if facts.driver else None
        reqs.append(SystemRequirement("driver", f"Ascend-hdk-{chip.lower()}-npu-driver >= {dmin}", f">={dmin}", facts.driver,
                                      None if facts.driver is None else bool(dv is not None and not dv < DriverVersion(dmin))))
    # firmware ships with the driver (the same HDK release); the doctor has no firmware minimum of its own
    reqs.append(SystemRequirement("firmware", f"Ascend-hdk-{chip.lower()}-npu-firmware (the driver's HDK release)",
                                  "the driver's HDK release", facts.firmware, None))
    return tuple(reqs)


def _set_env_files(profile: Any, facts: Facts) -> tuple[str, ...]:
    """The profile's set_env.sh files, moved to the host's Ascend root; the CANN 9 layout (`<root>/cann`)
    sources cann/set_env.sh instead of ascend-toolkit/set_env.sh."""
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


# -- the plan -------------------------------------------------------------------------------------------------


def _choices(profile: Any, facts: Facts, sets: Mapping[str, str],
             git_refs: Mapping[str, str]) -> tuple[dict[str, str], dict[str, Any], frozenset[str]]:
    """The profile's pins and git sources after the user's `--set` and `--git-ref`, validated."""
    pins: dict[str, str] = {normalize_name(k): v for k, v in profile.pins.items()}
    cann = facts.cann or profile.cann_version
    whose = f"{facts.where} has" if facts.cann else f"{facts.where} has no CANN; profile {profile.name} needs"
    check_seed_rule(cann, pins, origin=f"profile {profile.name} pins", whose=whose)
    check_seed_rule(cann, {k: f"=={v}" for k, v in sets.items()}, origin="--set", whose=whose)
    git = {normalize_name(k): g for k, g in profile.git.items()}
    chosen: set[str] = set()
    for name, ver in sets.items():
        pins[name] = f"=={ver}"
        key = st.source_key(name, git)
        if key is None:
            continue
        ref = st.ref_for_version(key, ver)
        if ref is None:
            raise InputError(f"{name} comes from git ({git[key].repo} at {git[key].ref}) and has no release tags to pick "
                             f"{ver} by; choose its ref deliberately with --git-ref {name}=REF", source="--set", path=name)
        git[key] = replace(git[key], ref=ref, commit=None, version=str(parse_pkg_version(ver) or ver))
        chosen.add(key)
    for name, ref in git_refs.items():
        key = st.source_key(name, git)
        if key is None:
            raise InputError(f"{name} is not a git source of profile {profile.name} (its sources: "
                             f"{', '.join(sorted(git))})", source="--git-ref", path=name)
        git[key] = replace(git[key], ref=ref, commit=ref if is_sha(ref) else None, version=None)
        chosen.add(key)
    validate_sets(profile, sets, pins)
    return pins, git, frozenset(chosen)


def resolve(profile: Any, facts: Facts, *, sets: Mapping[str, str] | None = None, python: str | None = None,
            src_dir: str | None = None, env_path: str | None = None, prefix: str | None = None,
            reason: str = "", git_refs: Mapping[str, str] | None = None, python_flag: str = "--python",
            bundled: Mapping[str, str] | None = None) -> Plan:
    """The plan for `profile` on a host with `facts`, after the user's `--set` pins and `--git-ref` choices (and,
    from a wheelhouse, the commits its bundles hold: `bundled`, clone dir -> commit)."""
    check_target(profile, facts, python_flag=python_flag)
    pins, git, chosen = _choices(profile, facts, dict(sets or {}), dict(git_refs or {}))
    cpu = IndexOptions(extra_index_urls=(profile.index_x86_cpu_torch or PYTORCH_CPU_INDEX,)) if facts.arch == "x86_64" \
        else IndexOptions()
    extra = IndexOptions(extra_index_urls=tuple(profile.index_extra),
                         trusted_hosts=tuple(_host(u) for u in profile.index_extra if u.startswith("http://") or "osinfra" in u))
    c = st.Ctx(profile=profile, facts=facts, pins=pins, git=git, src=src_dir or "src", cpu=cpu, extra=extra,
               overridden=chosen, bundled=dict(bundled or {}))
    st.conflicts(c)
    st.torch_stack(c)
    st.vllm(c)
    st.megatron_mindspeed(c)
    st.verl(c)
    st.final_pins(c, skip=SOURCES_DISTS)
    st.triton_last(c)
    st.prune(c)
    env = EnvSpec(path=env_path or "doctor-env.sh", set_env_files=_set_env_files(profile, facts),
                  pythonpath=tuple(c.pythonpath), exports=tuple(sorted(profile.exports.items())))
    c.steps.append(Step("env-file", ENVFILE, f"Write {env.path}", reason="sources set_env.sh, exports PYTHONPATH and "
                        "the recommended variables", source_ref=up.INSTALL_GUIDE))
    ids = [s.id for s in c.steps]
    assert len(ids) == len(set(ids)), ids
    target = Target(python=python, python_version=facts.python_version, arch=facts.arch, glibc=facts.glibc,
                    src_dir=src_dir, prefix=prefix)
    return Plan(profile=profile.name, reason=reason, target=target, steps=tuple(c.steps), env=env,
                system=system_requirements(profile, facts), pins=tuple(sorted(pins.items())),
                notes=(SYSTEM_SOURCE, *profile.notes))


SOURCES_DISTS = {v[1] for v in SOURCES.values()} | set(SOURCES)


def _host(url: str) -> str:
    from urllib.parse import urlparse

    return urlparse(url).hostname or url
