"""Profiles: the loader refuses bad files by name, selection follows the documented rules, and every
profile's own documented stack passes `doctor check` with zero errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from doctor.checks.diagnose import diagnose
from doctor.errors import InputError
from doctor.knowledge.profiles import installed_stacks_dir, load_profile_file, load_profiles, select_profile
from doctor.report import Severity
from doctor.snapshot.model import snapshot_from_dict
from tests.stacks import stack_snapshot

PROFILES = load_profiles()
SRC = Path(installed_stacks_dir())


def test_documented_stacks_are_all_there():
    names = {p.name for p in PROFILES}
    for verl, cann in [("0.6.1", "8.2.rc1"), ("0.7.0", "8.3.rc1"), ("0.7.1", "8.5.0"), ("0.8.0", "9.0.0"),
                       ("0.9.0", "9.0.0"), ("0.9.1", "9.1.0"), ("0.10.0.dev20260822", "9.1.0")]:
        for chip in ("a2", "a3"):
            assert f"verl-{verl}-cann{cann}-{chip}" in names
    assert "verl-0.9.0-cannunknown-950" in names
    assert not any("main" in n for n in names)  # a main profile is a named, dated snapshot
    for p in PROFILES:
        assert p.source.startswith("https://") and p.pins and p.git.get("mindspeed") and p.git.get("megatron-lm")


def test_profiles_are_newest_first():
    assert PROFILES[0].verl == "0.10.0.dev20260822" and PROFILES[0].is_snapshot and PROFILES[-1].verl == "0.6.1"


def _copy(tmp_path: Path, name: str = "verl-0.7.1-cann8.5.0-a2") -> Path:
    d = tmp_path / "profiles"
    d.mkdir(exist_ok=True)
    dst = d / f"{name}.toml"
    shutil.copy(SRC / f"{name}.toml", dst)
    return dst


@pytest.mark.parametrize("edit,needle", [
    (lambda t: 'frobnicate = 1\n' + t, "frobnicate: unknown key"),
    (lambda t: t.replace('torch = "==2.8.0"', 'torch = "=>2.8"'), "pins.torch: not a version specifier"),
    (lambda t: t.replace('version = "8.5.0"\nmin', 'version = "eight"\nmin'), "cann.version: not a CANN version"),
    (lambda t: t.replace('max = "9.0.0"', 'max = "8.5.0"'), "cann.max: range is empty"),
    (lambda t: t.replace('max = "9.0.0"\n', ''), "cann.max: required key is missing"),
    (lambda t: t.replace('/blob/v0.7.1/docs', '/blob/main/docs', 1), "moving branch 'main'"),
    (lambda t: t.replace('verl = "0.7.1"', 'verl = "main"'), "verl: must be a version"),
    (lambda t: t.replace('torch = "https://github.com/verl-project/verl/blob/v0.7.1/', 'torch = "see notes/', 1),
     "provenance.torch: must be an https:// URL"),
    (lambda t: t.replace('chips = [\n    "A2",', 'chips = [\n    "A9",'), "chips: must list"),
    (lambda t: t.replace('python = ">=3.10,<3.12"', 'python = "three"'), "python: not a version specifier"),
    (lambda t: t.replace('finding = "torchvision-torch-mismatch"', 'finding = "Not An Id"'), "finding: must be a kebab-case"),
    (lambda t: t.replace("[pins]", "[pins\n"), "not valid TOML"),
    # a git step's `install` given as an array (found by the profile fuzz test: it raised TypeError, not exit 2)
    (lambda t: t.replace('install = "empty-target"', 'install = ["empty-target"]'), "install: must be one of"),
    # a commit the clone is verified against must be one: "zzz" or a tag name passed the loader and failed mid-install
    (lambda t: t.replace('commit = "51c3f6190034dbe8f27538c6ee6c40ebf95bafd3"', 'commit = "zzz"'),
     "git.mindspeed.commit: not a commit (7 to 40 hex digits): 'zzz'"),
    (lambda t: t.replace('commit = "72506c983"', 'commit = "v0.13.0"'), "commit: not a commit (7 to 40 hex digits)"),
])
def test_loader_refuses_bad_profiles_naming_the_file(tmp_path, edit, needle):
    f = _copy(tmp_path)
    f.write_text(edit(f.read_text()))
    with pytest.raises(InputError) as e:
        load_profiles(f.parent)
    assert str(f) in str(e.value) and needle in str(e.value)


def test_name_must_match_file(tmp_path):
    f = _copy(tmp_path)
    f.rename(f.parent / "verl-0.7.1-cann8.5.0-a3.toml")
    with pytest.raises(InputError, match="must equal the file name"):
        load_profile_file(f.parent / "verl-0.7.1-cann8.5.0-a3.toml")


def test_every_toml_in_a_profile_dir_is_a_profile(tmp_path):
    """Signatures live beside profiles/stacks, not in it: a stray TOML there is refused by name, not skipped."""
    f = _copy(tmp_path)
    (f.parent / "signatures.toml").write_text("[[signature]]\nid = 'x'\n")
    with pytest.raises(InputError) as e:
        load_profiles(f.parent)
    assert "signatures.toml" in str(e.value)


# -- selection ---------------------------------------------------------------------------------------------


def snap(cann=None, chip="910B3", arch=None, py=None, verl=None):
    d: dict = {"schema": "doctor.snapshot/1", "ascend": {"devices": [{"id": 0, "chip": chip}]}}
    if cann:
        d["ascend"]["toolkit"] = {"version": cann}
    if arch:
        d["host"] = {"arch": arch}
    if py:
        d["python"] = {"version": py}
    if verl:
        d["packages"] = {"verl": {"version": verl}}
    return snapshot_from_dict(d)


@pytest.mark.parametrize("cann,chip,expect", [
    ("8.2.RC1", "910B3", "verl-0.6.1-cann8.2.rc1-a2"),
    ("8.2.RC2", "910B3", "verl-0.6.1-cann8.2.rc1-a2"),
    ("8.3.RC1", "910B3", "verl-0.7.0-cann8.3.rc1-a2"),  # lower bound inclusive
    ("8.3.RC1.alpha001", "910B3", "verl-0.6.1-cann8.2.rc1-a2"),  # alpha ships before 8.3.RC1
    ("8.3.RC2", "Ascend910_9392", "verl-0.7.0-cann8.3.rc1-a3"),
    ("8.5.0", "910B3", "verl-0.7.1-cann8.5.0-a2"),  # upper bound of 0.7.0 exclusive
    ("9.0.0", "910B3", "verl-0.9.0-cann9.0.0-a2"),  # tie: newest
    ("9.1.0", "910B3", "verl-0.9.1-cann9.1.0-a2"),  # tie with the main snapshot: the release
    ("9.1.0", "Ascend950DT", "verl-0.9.0-cannunknown-950"),
    ("9.3.0", "910B3", "verl-0.9.1-cann9.1.0-a2"),  # newer than every profile: the newest release
])
def test_select_by_cann_half_open_and_chip(cann, chip, expect):
    p, why = select_profile(snap(cann, chip), PROFILES)
    assert p is not None and p.name == expect, why
    assert cann in why


def test_tie_broken_by_installed_verl():
    p, why = select_profile(snap("9.0.0", verl="0.8.0"), PROFILES)
    assert p.name == "verl-0.8.0-cann9.0.0-a2" and "installed verl 0.8.0" in why


def test_older_cann_selects_none_and_says_why():
    p, why = select_profile(snap("8.0.RC1"), PROFILES)
    assert p is None and "older than every verified stack" in why


def test_a_chip_no_stack_serves_selects_none_and_checks_blame_no_profile():
    # vllm-ascend's collect_env on an Atlas 300I (https://github.com/vllm-project/vllm-ascend/issues/2416):
    # 310P3 NPUs, CANN 8.2.RC1. No verl stack is for the 310P; picking the A3 one (the last by name) made the
    # selection call its own pick "forced for another chip" (an error, fix "Drop --profile" the user never passed)
    # and judged the packages against the A3 stack's pins.
    s = snap("8.2.RC1", chip="310P3", arch="aarch64", py="3.11.13")
    p, why = select_profile(s, PROFILES)
    assert p is None and "no verified stack for chip 310P" in why
    # the README: `no-profile` says why another chip's stack is no fallback
    assert "another chip's stack names the wrong kernels" in why
    rep = diagnose([(None, s, None)], live=False)
    ids = {f.id for f in rep.findings}
    assert "profile-wrong-chip" not in ids and "package-off-profile" not in ids and "no-profile" in ids


def test_python_and_arch_filters():
    p, why = select_profile(snap("9.0.0", py="3.12.3"), PROFILES)
    assert p is not None and "no verified stack for Python 3.12.3" in why
    p, why = select_profile(snap("9.1.0", py="3.12.3", arch="x86_64"), PROFILES)
    assert p.name == "verl-0.9.1-cann9.1.0-a2" and "Python 3.12.3" in why and "arch x86_64" in why


def test_main_snapshot_is_chosen_for_a_dev_verl_of_its_line_only():
    p, why = select_profile(snap("9.1.0", verl="0.10.0.dev0"), PROFILES)
    assert p.name == "verl-0.10.0.dev20260822-cann9.1.0-a2" and "installed verl 0.10.0.dev0" in why
    p, _ = select_profile(snap("9.1.0", verl="0.10.0"), PROFILES)  # a later final release is not the snapshot
    assert p.name == "verl-0.9.1-cann9.1.0-a2"


def test_forced_profile_and_unknown_name():
    p, why = select_profile(snap("8.0.RC1"), PROFILES, forced="verl-0.7.0-cann8.3.rc1-a3")
    assert p.name == "verl-0.7.0-cann8.3.rc1-a3" and "forced" in why
    with pytest.raises(InputError, match="no profile named"):
        select_profile(snap("8.0.RC1"), PROFILES, forced="nope")


def test_unknown_cann_uses_installed_verl():
    p, why = select_profile(snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {"verl": {"version": "0.7.1"}}}),
                            PROFILES)
    assert p is not None and p.verl == "0.7.1"


# -- each profile's own stack --------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["aarch64", "x86_64"])
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_documented_stack_has_zero_errors(profile, arch):
    s = snapshot_from_dict(stack_snapshot(profile, arch))
    report = diagnose([(None, s, None)], profiles=PROFILES)
    assert report.profile["name"] == profile.name
    errors = [f"{f.id}: {f.title}" for f in report.findings if f.severity is Severity.ERROR]
    assert errors == []
    # known deviations are reported as info, never as warnings of the stack itself
    assert [f.id for f in report.findings if f.severity is Severity.WARNING] == []
    assert report.exit_code(strict=True) == 0


@pytest.mark.parametrize("arch", ["aarch64", "x86_64"])
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_versions_only_form_of_a_documented_stack_has_zero_errors(profile, arch):
    """The stack as a bug report states it (`pip list`'s versions, the Python and machine): on x86_64 the plan
    installs torch from the PyTorch CPU index, `2.10.0+cpu`, which torch-npu's x86_64 wheels pin; judged by what
    the releases publish for that machine, it gives no error from any check."""
    from tests.stacks import versions_only

    s = snapshot_from_dict(versions_only(profile, arch))
    report = diagnose([(None, s, None)], profiles=PROFILES, forced_profile=profile.name)
    assert [f"{f.id}: {f.title}" for f in report.findings if f.severity is Severity.ERROR] == []


def test_deviation_only_applies_to_its_own_stack():
    p = next(x for x in PROFILES if x.name == "verl-0.7.1-cann8.5.0-a2")
    d = stack_snapshot(p)
    d["packages"]["torchvision"]["version"] = "0.22.1"
    forced = diagnose([(None, snapshot_from_dict(d), None)], profiles=PROFILES, forced_profile="verl-0.8.0-cann9.0.0-a2")
    tv = [f for f in forced.findings if f.id == "torchvision-torch-mismatch"]
    assert tv and tv[0].severity is Severity.WARNING


def test_an_upstream_conflict_named_twice_is_refused(tmp_path):
    """Two merges once left the same conflict twice in a stack: the loader refuses it, naming the entry."""
    f = _copy(tmp_path)
    block = ('\n[[upstream_conflicts]]\npackage = "mindspeed"\nrequirement = "numpy<=1.26.0"\n'
             'source = "https://github.com/Ascend/MindSpeed/blob/v0.1/setup.py"\n')
    f.write_text(f.read_text() + block + block)
    with pytest.raises(InputError) as e:
        load_profiles(f.parent)
    assert str(f) in str(e.value) and "upstream_conflicts[" in str(e.value) and "twice" in str(e.value)


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("blob/1dda039b9c6311889a9c9a26040677e1254814f9/requirements-npu.txt",
                        "blob/v0.9.0/requirements-npu.txt"),
    lambda t: t.replace('commit = "1dda039b9c6311889a9c9a26040677e1254814f9"\nversion = "0.10.0.dev"',
                        'version = "0.10.0.dev"'),
], ids=["file-at-another-tag", "clone-without-commit"])
def test_verl_requirements_of_a_git_verl_must_be_the_file_at_its_pinned_commit(tmp_path, edit):
    """A git verl's clone has its own requirements file; the profile's lines stand for it only at the commit the
    clone is pinned to (there they pin a line that names a moving branch): any other file is refused at load."""
    f = _copy(tmp_path, "verl-0.10.0.dev20260822-cann9.1.0-a2")
    text = f.read_text()
    f.write_text(edit(text))
    assert f.read_text() != text
    with pytest.raises(InputError) as e:
        load_profiles(f.parent)
    assert str(f) in str(e.value) and "verl_requirements.file: must be the file at" in str(e.value)


def test_every_shipped_profiles_verl_requirement_lines_are_requirements():
    """Checked where the install plan reads them, not at load: the shipped ones are checked here."""
    from doctor.knowledge.profiles import verl_requirement_lines

    read = {p.name: verl_requirement_lines(p) for p in PROFILES if p.verl_requirements}
    assert {"verl-0.9.1-cann9.1.0-a2", "verl-0.9.1-cann9.1.0-a3", "verl-0.10.0.dev20260822-cann9.1.0-a2",
            "verl-0.10.0.dev20260822-cann9.1.0-a3"} <= set(read) and all(read.values())


@pytest.mark.parametrize("profile", load_profiles(), ids=lambda p: p.name)
def test_no_code_need_is_left_to_the_resolver(profile) -> None:
    """A range a profile leaves open (its own pin, or else what its verl release declares) must not admit a release
    whose code needs what the profile's pins rule out: the resolver takes the newest. verl 0.6.1-0.8.0 declare
    numpy<2.0.0 and pyarrow>=19.0.0, and pyarrow 26.x raises at import under numpy 1.x: the real-world tier's
    install of verl-0.8.0-cann9.0.0-a2 resolved pyarrow 26.0.1 and `import verl.trainer.main_ppo` could not work."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    from doctor.knowledge.code_needs import load
    from doctor.knowledge.requirements import declared, load_requirements

    table = load_requirements()
    ranges: dict[str, SpecifierSet] = {}
    verl = declared("verl", str(profile.verl_version))
    for line in verl.requires_dist if verl is not None else ():
        r = Requirement(line)
        if r.marker is None or r.marker.evaluate({"extra": ""}):
            ranges[r.name.lower()] = r.specifier
    for name, spec in profile.pins.items():
        ranges[name.lower()] = SpecifierSet(spec)
    left = []
    for need in load().needs:
        if need.package not in ranges or need.needed not in ranges:
            continue
        # the needed package's real releases (PyPI's, from the requirements table) the profile allows
        allowed = [v for v in table.projects.get(need.needed, {}) if v in ranges[need.needed]]
        ruled_out = bool(allowed) and not any(v in SpecifierSet(need.specifier) for v in allowed)
        open_to = [v for v in need.read_at if v in ranges[need.package]]
        if ruled_out and open_to:
            left.append(f"{need.package} {open_to} needs {need.requires}; the profile allows "
                        f"{need.needed}{ranges[need.needed]}")
    assert not left, left


def _unconditional(name: str, version: str) -> dict[str, object]:
    """A release's requirements that apply on x86_64 / aarch64 Linux CPython 3.11 without extras: name -> specifier."""
    from packaging.requirements import Requirement

    from doctor.knowledge.requirements import declared

    d = declared(name, version)
    out: dict[str, object] = {}
    for line in d.requires_dist if d is not None else ():
        r = Requirement(line)
        env = {"extra": "", "python_version": "3.11", "sys_platform": "linux", "platform_system": "Linux",
               "platform_machine": "aarch64"}
        if r.marker is None or r.marker.evaluate(env):
            out[r.name.lower()] = r.specifier
    return out


@pytest.mark.parametrize("profile", load_profiles(), ids=lambda p: p.name)
def test_the_final_re_pin_leaves_no_open_package_broken(profile) -> None:
    """The plan's final-pins step re-pins transformers (and the torch stack, numpy) after the resolves that installed
    verl's requirements, and pip does not revisit what it installed before: a package verl leaves open whose newest
    release needs what the re-pinned versions rule out is left broken. verl 0.7.1 leaves datasets open; datasets
    5.2.0 needs huggingface-hub>=1.31.0 and transformers 4.57.6 caps it <1.0: the real-world tier's install of
    verl-0.7.1-cann8.5.0-a2 ended with datasets 5.2.0 beside huggingface-hub 0.36.2 (requirement-version-unmet)."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.requirements import declared, load_requirements

    def newest(name: str, spec: SpecifierSet) -> str | None:
        ok = []
        for v in table.projects.get(name, {}):
            try:
                if not Version(v).is_prerelease and v in spec:
                    ok.append(Version(v))
            except InvalidVersion:
                continue
        return str(max(ok)) if ok else None

    table = load_requirements()
    plan = resolve(profile, Facts(arch="aarch64", python_version="3.11", chip=profile.chips[0], npu_seen=False),
                   src_dir="/x")
    final = {}
    for step in plan.steps:
        if step.id == "final-pins":
            for line in step.requirements:
                r = Requirement(line)
                final[r.name.lower()] = r.specifier
    verl = declared("verl", str(profile.verl_version))
    bounded = {r.name.lower(): r.specifier for r in map(Requirement, verl.requires_dist if verl else ())
               if r.marker is None or r.marker.evaluate({"extra": ""})}
    left = []
    for line in verl.requires_dist if verl is not None else ():
        r = Requirement(line)
        name = r.name.lower()
        if (r.marker is not None and not r.marker.evaluate({"extra": ""})) or name in final:
            continue
        p = newest(name, r.specifier)
        # what the re-pins hold itself: accelerate 1.16.0 (2026-11-16) needs torch>=2.6.0, and 0.6.1 re-pins 2.5.1;
        # a bound verl declares itself (numpy<2.0.0) is in the resolve that picks the open package (pandas 2.x)
        for dep, dspec in (_unconditional(name, p) if p is not None else {}).items():
            if dep in final and not str(bounded.get(dep, "")) and newest(dep, final[dep] & SpecifierSet(str(dspec))) is None:
                left.append(f"{name} {p} needs {dep}{dspec}; the final pins hold {dep}{final[dep]}")
        for q, qspec in final.items():
            qv = newest(q, qspec)
            if p is None or qv is None:
                continue
            need_p, need_q = _unconditional(name, p), _unconditional(q, qv)
            for dep in set(need_p) & set(need_q):
                if dep in final or not table.projects.get(dep):
                    continue
                if newest(dep, SpecifierSet(str(need_p[dep])) & SpecifierSet(str(need_q[dep]))) is None:
                    left.append(f"{name} {p} needs {dep}{need_p[dep]}; {q} {qv} needs {dep}{need_q[dep]}")
    assert not left, left


@pytest.mark.parametrize("profile", load_profiles(), ids=lambda p: p.name)
def test_verl_editable_install_takes_no_release_the_stack_refuses(profile) -> None:
    """Where the plan installs verl from its clone with its dependencies after requirements-npu.txt (upstream's
    `pip install -r requirements-npu.txt && pip install -v -e .`), pip takes the newest release of every package verl
    declares that the installed one does not meet, and does not revisit what vLLM's resolve installed beside it. verl
    0.9.0 declares numpy>=2.0.0 over requirements-npu.txt's numpy<2.0.0: the real-world tier's install of
    verl-0.9.0-cann9.0.0-a2 ended with numpy 2.4.6 beside mistral-common 1.13.1 (vLLM 0.23.0's requirement), which
    declares numpy<2.4 on Python <= 3.12 (requirement-version-unmet, an error on verl's import path). What the final
    pins re-pin is judged at that pin; a conflict the profile names as upstream's own is left to it."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    from doctor.installers.plan import EDITABLE
    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.requirements import load_requirements

    table = load_requirements()

    def newest(name: str, spec: SpecifierSet) -> str | None:
        """The release pip takes on Python 3.11: the newest final release in `spec` whose Requires-Python admits it."""
        ok = []
        for v, d in table.projects.get(name, {}).items():
            try:
                if not Version(v).is_prerelease and v in spec and "3.11" in SpecifierSet(d.requires_python or ""):
                    ok.append(Version(v))
            except InvalidVersion:
                continue
        return str(max(ok)) if ok else None

    plan = resolve(profile, Facts(arch="aarch64", python_version="3.11", chip=profile.chips[0], npu_seen=False),
                   src_dir="/x")
    ids = [s.id for s in plan.steps]
    if not ("install-verl" in ids and "verl-requirements" in ids and ids.index("install-verl") > ids.index("verl-requirements")
            and plan.steps[ids.index("install-verl")].kind == EDITABLE):
        pytest.skip("verl is not installed from its clone after requirements-npu.txt")
    final = {canonicalize_name(Requirement(line).name): Requirement(line).specifier
             for s in plan.steps if s.id == "final-pins" for line in s.requirements}
    named = {(canonicalize_name(c["package"]), canonicalize_name(Requirement(c["requirement"]).name))
             for c in profile.upstream_conflicts}
    taken = {}
    for name, spec in _unconditional("verl", str(profile.verl_version)).items():
        n = canonicalize_name(name)
        # only a lower bound makes pip replace what requirements-npu.txt installed (numpy<2.0.0 leaves numpy 1.26.x)
        if any(sp.operator in (">=", ">", "~=") for sp in spec):
            pick = newest(n, final.get(n, SpecifierSet(str(spec))))
            if pick is not None:
                taken[n] = pick
    left = []
    for q, qspec in profile.pins.items():
        qv = newest(canonicalize_name(q), SpecifierSet(qspec))
        for dep, dspec in (_unconditional(q, qv) if qv is not None else {}).items():
            dv = newest(canonicalize_name(dep), SpecifierSet(str(dspec)))
            for n, need in (_unconditional(dep, dv) if dv is not None else {}).items():
                n = canonicalize_name(n)
                if n in taken and taken[n] not in SpecifierSet(str(need)) and (canonicalize_name(dep), n) not in named:
                    left.append(f"{dep} {dv} (through {q} {qv}) needs {n}{need}; verl's install takes {n} {taken[n]}")
    assert not left, sorted(set(left))


@pytest.mark.parametrize("name", ["verl-0.6.1-cann8.2.rc1-a2", "verl-0.6.1-cann8.2.rc1-a3"])
def test_the_0_6_1_final_pins_hold_an_opencv_that_accepts_their_numpy(name) -> None:
    """vLLM 0.9.1 leaves opencv-python-headless open (>=4.11.0) and the release's numpy is <2.0.0: the real-world
    tier's install of verl-0.6.1-cann8.2.rc1-a2 ended with opencv-python-headless 5.1.0.95 (numpy>=2) beside numpy
    1.26.0 (requirement-version-unmet). The final pins hold a line whose newest release accepts their numpy."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.requirements import load_requirements

    def newest(project: str, spec: SpecifierSet) -> str | None:
        ok = [Version(v) for v in table.projects.get(project, {}) if not Version(v).is_prerelease and v in spec]
        return str(max(ok)) if ok else None

    table = load_requirements()
    profile = next(p for p in load_profiles() if p.name == name)
    for arch in ("x86_64", "aarch64"):
        plan = resolve(profile, Facts(arch=arch, python_version="3.11", chip=profile.chips[0], npu_seen=False), src_dir="/x")
        final = {Requirement(x).name.lower(): Requirement(x).specifier for x in plan.step("final-pins").requirements}
        cv = newest("opencv-python-headless", SpecifierSet(">=4.11.0") & final.get("opencv-python-headless", SpecifierSet()))
        assert cv is not None
        wants = _unconditional("opencv-python-headless", cv).get("numpy", SpecifierSet())
        assert newest("numpy", final["numpy"] & SpecifierSet(str(wants))) is not None, (arch, cv, str(wants))
