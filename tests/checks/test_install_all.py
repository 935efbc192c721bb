"""checks.install_all: one command for the install lines of many findings, beside each finding's own line."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from doctor.checks.diagnose import diagnose
from doctor.checks.install_all import install_all
from doctor.console import Console
from doctor.render import render_text
from doctor.report import finding
from tests.fakes import venv_without_pip

EXE = "/opt/my venv/bin/python"  # a path that needs quoting


def _f(key: str, *commands: str, severity: str = "error", fid: str = "requirement-missing"):  # noqa: ANN202
    return finding(fid, severity, ("python",), key, fix="Install it.", commands=commands, key=key)


def test_plain_install_lines_of_one_pip_become_one_command_with_each_requirement_quoted():
    q = shlex.quote(EXE)
    (line,) = install_all([
        _f("v:a", f"{q} -m pip install 'a'"),
        _f("v:b", f"{q} -m pip install 'b!=0.9.0,<=0.10.0,>=0.8.0'"),
        _f("v:c", f"{q} -m pip install 'ray[default]>=2.41.0'", severity="warning"),
        _f("v:d", f"{q} -m pip install --force-reinstall --no-deps 'd==1.0'"),  # a per-package option: its own line
        _f("v:e", "pip uninstall -y e"),
        _f("v:i", f"{q} -m pip install 'i'", severity="info"),
    ])
    assert line["findings"] == ["requirement-missing:v:a", "requirement-missing:v:b", "requirement-missing:v:c"]
    assert shlex.split(line["command"]) == [EXE, "-m", "pip", "install", "a", "b!=0.9.0,<=0.10.0,>=0.8.0",
                                            "ray[default]>=2.41.0"]
    assert "'b!=0.9.0,<=0.10.0,>=0.8.0'" in line["command"] and "'ray[default]>=2.41.0'" in line["command"]


def test_lines_that_run_elsewhere_or_disagree_are_not_merged():
    assert install_all([_f("v:a", "pip install 'a'")]) == []  # one finding: its own line says it all
    q = shlex.quote(EXE)
    ensure = f"{q} -m ensurepip"
    (uv,) = install_all([_f("v:a", f"uv pip install --python {q} 'a'"), _f("v:b", f"uv pip install --python {q} b"),
                         _f("v:c", "/x/python -m pip install c")])
    assert uv["command"] == f"uv pip install --python {q} a b"
    (ep,) = install_all([_f("v:a", ensure, f"{q} -m pip install a"), _f("v:b", ensure, f"{q} -m pip install b")])
    assert ep["command"] == f"{ensure} && {q} -m pip install a b"
    # two findings that want numpy in two ranges: numpy stays on their own lines
    (both,) = install_all([_f("v:numpy", "pip install 'numpy>=2'"), _f("w:numpy", "pip install 'numpy<2'"),
                           _f("v:a", "pip install a"), _f("v:b", "pip install b")])
    assert both["requirements"] == ["a", "b"] and both["findings"] == ["requirement-missing:v:a",
                                                                        "requirement-missing:v:b"]
    nodes = install_all([_f("v:a", "pip install a"), finding("requirement-missing", "error", ("python",), "x",
                                                              fix="f", commands=("pip install b",), node="n2")])
    assert nodes == []  # two hosts: two pips


def test_a_fix_sentence_that_is_itself_a_plain_install_line_is_taken_too():
    """package-code-needs-unmet writes its fix as the command line itself (`fix: .../python -m pip install
    'cachetools'`, no `$` line). Real: a venv with verl 0.7.1, numpy 2.2.6 and transformers 5.10.4 got `fix all at
    once` for numpy and kernels only; cachetools, which verl's trainer imports at load, was left out of it."""
    q = shlex.quote(EXE)
    (line,) = install_all([
        finding("package-code-needs-unmet", "error", ("python",), "c", fix=f"{q} -m pip install 'cachetools'"),
        _f("v:numpy", f"{q} -m pip install 'numpy<2.0.0'"),
        finding("x", "error", ("python",), "y", fix=f"{q} -m pip install 'z<5' (or upgrade verl)."),  # prose: not
    ])
    assert install_all([finding("x", "error", ("python",), "y", fix="Run pip install a in the venv"),
                        finding("x", "error", ("python",), "z", fix="Run pip install b in the venv")]) == []
    assert line["requirements"] == ["cachetools", "numpy<2.0.0"]
    assert line["findings"] == ["package-code-needs-unmet", "requirement-missing:v:numpy"]


def test_a_line_for_what_an_installed_release_declares_is_left_out_when_another_line_replaces_that_release():
    """Real (a venv with verl 0.7.1 and transformers 5.10.4): one run of `'transformers<5.0.0' ... 'kernels<0.13,
    >=0.12.0'` installed kernels for transformers 5.10.4's extras while it put transformers 4.57.6 in its place,
    whose extras want kernels<=0.9: the next check reported the kernels pair again. The kernels line stays the
    finding's own, to run if transformers stays."""
    q = shlex.quote(EXE)
    kernels = finding("requirement-version-unmet", "error", ("python",), "k", fix="Install it.",
                      commands=(f"{q} -m pip install 'kernels<0.13,>=0.12.0'",), key="transformers:kernels",
                      evidence={"package": "transformers", "requires": "kernels"})
    (line,) = install_all([_f("w", f"{q} -m pip install 'transformers<5.0.0'", fid="transformers-outside-verl-window"),
                           kernels, _f("v:numpy", f"{q} -m pip install 'numpy<2.0.0'")])
    assert line["requirements"] == ["transformers<5.0.0", "numpy<2.0.0"]
    assert "requirement-version-unmet:transformers:kernels" not in line["findings"]


def test_the_line_says_which_findings_with_commands_it_leaves_to_their_own_lines():
    """`fix all at once` read as every fix. Real (check --profile verl-0.9.1-cann9.1.0-a2 on a venv with verl 0.9.1
    --no-deps): it took 19 findings, while 17 requirement-missing findings (the stack's own
    `pip install verl==0.9.1 --extra-index-url ...` line), the torch pins and the Megatron clone were left to their
    own lines, unsaid."""
    q = shlex.quote(EXE)
    stack = finding("requirement-missing", "error", ("python",), "s", fix="Install what verl declares.",
                    commands=(f"{q} -m pip install verl==0.9.1 --extra-index-url X",), key="verl:accelerate")
    prose = finding("cann-not-installed", "error", ("cann",), "c", fix="Install the CANN toolkit.")
    (line,) = install_all([_f("v:a", f"{q} -m pip install a"), _f("v:b", f"{q} -m pip install b"), stack, prose])
    assert line["others"] == ["requirement-missing:verl:accelerate"]
    from doctor.report import Report

    r = Report(command="check", findings=[], checks=[])
    r.extra["install_all"] = [line]
    out: list[str] = []
    con = Console(json_mode=False)
    con.print = lambda text="", **_kw: out.append(text)  # type: ignore[method-assign]
    render_text(r, con)
    assert "1 other finding's own line above is not in it" in "\n".join(out)


def _wheel(d: Path, name: str, version: str, *requires: str) -> None:
    """A pure wheel of one empty module, written by hand (no build backend, no index)."""
    import zipfile

    tag = f"{name}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{name}.py": "", f"{tag}.dist-info/METADATA": meta,
             f"{tag}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(d / f"{tag}-py3-none-any.whl", "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{tag}.dist-info/RECORD", "".join(f"{p},,\n" for p in files) + f"{tag}.dist-info/RECORD,,\n")


def test_check_of_a_no_deps_install_prints_one_command_that_runs_and_json_has_it(tmp_path):
    """A real venv (without pip) holding a distribution installed --no-deps (a fake dist-info, read by the probe's
    importlib.metadata): every missing requirement keeps its finding and its line, and one line after the findings
    installs them all; it runs as printed (offline, from wheels made here) and the check after it finds none."""
    venv = tmp_path / "v"
    py, site = venv_without_pip(venv)
    dist = site / "mylib-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mylib\nVersion: 1.0\nRequires-Dist: alpha-pkg>=1.0\n"
                                   "Requires-Dist: beta_pkg!=0.9,<=2.0\nRequires-Dist: gamma; extra == 'x'\n")
    (dist / "RECORD").write_text("")
    from doctor.probes import collect_snapshot

    def check() -> Any:  # noqa: ANN401
        return diagnose([(None, collect_snapshot(python=str(py)), None)], only=["declared-requirements"], local=True)

    rep = check()
    assert sorted(f.key for f in rep.findings) == ["mylib:alpha-pkg", "mylib:beta-pkg"]
    (line,) = rep.extra["install_all"]
    assert shlex.split(line["command"])[-2:] == ["alpha-pkg>=1.0", "beta_pkg!=0.9,<=2.0"]
    assert "'beta_pkg!=0.9,<=2.0'" in line["command"]
    assert json.loads(json.dumps(rep.to_dict()))["install_all"][0]["command"] == line["command"]
    out: list[str] = []
    con = Console(json_mode=False)
    con.print = lambda text="", **_kw: out.append(text)  # type: ignore[method-assign]
    render_text(rep, con)
    text = "\n".join(out)
    # the console folds the two findings into one block whose one line is the run's; -v prints each in full
    assert "mylib 1.0 requires 2 packages that are not installed" in text and "mylib:alpha-pkg" not in text
    assert text.count(f"$ {line['command']}") == 1 < text.index("fix all at once") - text.index(line["command"])
    verbose: list[str] = []
    con = Console(json_mode=False, verbosity=1)
    con.print = lambda text="", **_kw: verbose.append(text)  # type: ignore[method-assign]
    render_text(rep, con)
    v = "\n".join(verbose)
    assert v.index("fix all at once") > max(v.index("mylib:alpha-pkg"), v.index("mylib:beta-pkg"))
    assert f"  $ {line['command']}" in v and "-m pip install 'alpha-pkg>=1.0'\n" in v  # each line stays
    wheels = tmp_path / "w"
    wheels.mkdir()
    _wheel(wheels, "alpha_pkg", "1.2")
    _wheel(wheels, "beta_pkg", "2.0")
    env = {"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    r = subprocess.run(["bash", "-c", line["command"]], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    after = check()
    assert after.findings == [] and "install_all" not in after.extra


def test_the_one_command_keeps_the_installed_torch(tmp_path):
    """pip resolving the missing requirements together may replace torch for one of them (tensordict 0.15 needs
    torch>=2.11): from PyPI that is a CUDA build of several GB that torch-npu was not built for. The line pins the
    installed torch, so the run stops on the conflict and leaves torch as it was. Real venv, real pip, offline wheels
    made here, a newer 'torch' among them for pip to be tempted by."""
    venv = tmp_path / "v"
    py, site = venv_without_pip(venv)
    for name, version, requires in (("torch", "2.9.0", ""), ("mylib", "1.0", "Requires-Dist: alpha-pkg>=1.0\n"
                                                                         "Requires-Dist: beta-pkg\n")):
        dist = site / f"{name}-{version}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}")
        (dist / "RECORD").write_text("")
    from doctor.probes import collect_snapshot

    rep = diagnose([(None, collect_snapshot(python=str(py)), None)], only=["declared-requirements"], local=True)
    (line,) = rep.extra["install_all"]
    assert line["kept"] == ["torch==2.9.0"] and shlex.split(line["command"])[-1] == "torch==2.9.0"
    out: list[str] = []
    con = Console(json_mode=False)
    con.print = lambda text="", **_kw: out.append(text)  # type: ignore[method-assign]
    render_text(rep, con)
    assert "torch==2.9.0 keeps the installed release" in "\n".join(out)
    wheels = tmp_path / "w"
    wheels.mkdir()
    _wheel(wheels, "alpha_pkg", "1.2", "torch>=2.11")
    _wheel(wheels, "beta_pkg", "2.0")
    _wheel(wheels, "torch", "2.13.0")
    env = {"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    r = subprocess.run(["bash", "-c", line["command"]], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode != 0 and "torch" in r.stderr
    assert (site / "torch-2.9.0.dist-info").is_dir() and not (site / "torch-2.13.0.dist-info").exists()


def test_with_no_torch_in_the_target_the_line_names_what_would_pull_one(tmp_path):
    """No torch to keep pinned: the line still installs what is missing, and the report names the packages whose
    newest release (the requirements table, as pip would pick an unpinned name) requires torch, so the stack's torch
    goes in first. A target with torch installed gets no such note (the torch is kept instead)."""
    from doctor.probes import collect_snapshot

    def target(name: str, with_torch: bool) -> str:
        venv = tmp_path / name
        py, site = venv_without_pip(venv)
        dists = [("mylib", "1.0", "Requires-Dist: accelerate\nRequires-Dist: peft\nRequires-Dist: pyyaml\n")]
        dists += [("torch", "2.9.0", "")] if with_torch else []
        for dname, version, requires in dists:
            dist = site / f"{dname}-{version}.dist-info"
            dist.mkdir(parents=True)
            (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dname}\nVersion: {version}\n{requires}")
            (dist / "RECORD").write_text("")
        return str(py)

    rep = diagnose([(None, collect_snapshot(python=target("bare", False)), None)], only=["declared-requirements"],
                   local=True)
    (line,) = rep.extra["install_all"]
    assert line["torch_first"] == ["accelerate", "peft"] and "kept" not in line
    out: list[str] = []
    con = Console(json_mode=False)
    con.print = lambda text="", **_kw: out.append(text)  # type: ignore[method-assign]
    render_text(rep, con)
    text = "\n".join(out)
    assert "torch is not installed in this environment and accelerate, peft require it" in text
    assert text.rindex("torch is not installed in this") > text.index(f"  $ {line['command']}")
    # each finding's own line has the same trap, and says so (fix.torch_first, and its text)
    own = {f.evidence["requires"]: f.fix for f in rep.findings if f.id == "requirement-missing"}
    assert {n: fx.torch_first for n, fx in own.items()} == {"accelerate": ("accelerate",), "peft": ("peft",),
                                                            "pyyaml": ()}
    py = tmp_path / "bare" / "bin" / "python"
    assert own["accelerate"].commands == (f"{py} -m ensurepip", f"{py} -m pip install 'accelerate'")
    assert own["accelerate"].text.endswith(
        "torch is not installed in this environment and accelerate requires it: pip would take PyPI's torch (on "
        "x86_64 a CUDA build of several GB), not the build torch-npu pairs with. Install the stack's torch and "
        "torch-npu first (`doctor install` does, at the profile's pins), then this fix.")
    assert "torch is not installed" not in own["pyyaml"].text
    assert [f["fix"]["torch_first"] for f in rep.to_dict()["findings"] if f["fix"].get("torch_first")] == [
        ["accelerate"], ["peft"]]
    rep = diagnose([(None, collect_snapshot(python=target("torch", True)), None)], only=["declared-requirements"],
                   local=True)
    (line,) = rep.extra["install_all"]
    assert "torch_first" not in line and line["kept"] == ["torch==2.9.0"]
    assert not [f for f in rep.findings if f.fix is not None and f.fix.torch_first]


def test_each_finding_line_that_would_resolve_torch_keeps_the_installed_one(tmp_path):
    """A finding's own line is pasted alone as often as the summary line: `pip install 'accelerate'` in a target with
    torch 2.9.0 lets pip take a newer torch for an accelerate that needs one (PyPI's build, not the one torch-npu was
    built against). The line pins the installed torch, so pip stops on the conflict and torch stays; a line for a
    package that does not require torch (pyyaml) is left as it is. Real venv, real pip, offline wheels made here."""
    from doctor.probes import collect_snapshot

    venv = tmp_path / "v"
    py, site = venv_without_pip(venv)
    for name, version, requires in (("torch", "2.9.0", ""),
                                    ("mylib", "1.0", "Requires-Dist: accelerate\nRequires-Dist: pyyaml\n")):
        dist = site / f"{name}-{version}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}")
        (dist / "RECORD").write_text("")
    rep = diagnose([(None, collect_snapshot(python=str(py)), None)], only=["declared-requirements"], local=True)
    own = {f.evidence["requires"]: f.fix for f in rep.findings if f.id == "requirement-missing"}
    assert own["accelerate"].kept == ("torch==2.9.0",)
    assert own["accelerate"].commands[-1] == f"{py} -m pip install 'accelerate' torch==2.9.0"
    assert "torch==2.9.0 is on the line so pip keeps the installed torch" in own["accelerate"].text
    assert own["pyyaml"].kept == () and own["pyyaml"].commands[-1] == f"{py} -m pip install 'pyyaml'"
    assert [f["fix"].get("kept") for f in rep.to_dict()["findings"]] == [["torch==2.9.0"], None]
    (line,) = rep.extra["install_all"]  # the summary line is as before: torch kept once, at its end
    assert line["kept"] == ["torch==2.9.0"] and line["command"].count("torch==2.9.0") == 1
    wheels = tmp_path / "w"
    wheels.mkdir()
    _wheel(wheels, "accelerate", "1.0", "torch>=2.11")
    _wheel(wheels, "torch", "2.13.0")
    for c in own["accelerate"].commands:
        if c.endswith("ensurepip"):
            subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=600, check=True)
    env = {"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    r = subprocess.run(["bash", "-c", own["accelerate"].commands[-1]], capture_output=True, text=True, timeout=600,
                       env=env)
    assert r.returncode != 0 and "torch" in r.stderr
    assert (site / "torch-2.9.0.dist-info").is_dir() and not (site / "torch-2.13.0.dist-info").exists()


def test_a_release_requires_torch_only_through_a_line_that_names_it_and_only_such_lines_are_parsed(monkeypatch):
    """The requirements index says whether PyPI's newest release of each project requires torch (decided when the
    table is written, asked of every fix line). A requirement named torch is a line that
    starts with those five letters (any case, after PEP 508's blanks); only those are parsed, with the same verdicts:
    an extra's torch does not count, a platform marker does, torchvision / torch-npu are other projects."""
    import packaging.requirements

    from doctor.knowledge import requirements

    parsed: list[str] = []
    real = packaging.requirements.Requirement
    monkeypatch.setattr(packaging.requirements, "Requirement", lambda line: parsed.append(line) or real(line))
    cases = {
        ("numpy>=1.26", "torch>=2.1.0"): True,
        ("\t Torch (>=2.0) ; platform_machine == 'x86_64'",): True,
        ("TORCH",): True,
        ("torch>=2.0; extra == 'gpu'", "pyyaml"): False,
        ("torchvision>=0.20", "torch-npu==2.8.0", "torch_npu", "pytorch-lightning", "torch >>2"): False,
        ("accelerate", "peft ; python_version >= '3.9'", "safetensors>=0.4.3"): False,
    }
    for lines, requires in cases.items():
        assert requirements.requires_torch(lines) is requires, lines
    assert parsed == ["torch>=2.1.0", "\t Torch (>=2.0) ; platform_machine == 'x86_64'", "TORCH",
                      "torch>=2.0; extra == 'gpu'", "torchvision>=0.20", "torch-npu==2.8.0", "torch_npu",
                      "torch >>2"]


def test_the_kept_torch_is_called_torch_npus_build_only_where_torch_npu_is_installed():
    """`check --deep` in a venv with a CPU torch and verl, no torch-npu (real run, 2026-12-07): four fixes said
    "torch==2.13.0+cpu is on the line so pip keeps the installed torch (the build torch-npu pairs with)", a pairing
    that venv does not have. Where torch-npu is installed the words stay."""
    from doctor.checks.torch_first import with_torch_kept
    from doctor.knowledge.requirements import load_requirements

    f = finding("requirement-missing", "error", ("python",), "verl requires peft", fix="Install what verl declares.",
                commands=("/v/bin/python -m pip install 'peft'",))
    keep, table = {None: "torch==2.13.0+cpu"}, load_requirements()
    [cpu] = with_torch_kept([f], keep, table)
    [npu] = with_torch_kept([f], keep, table, paired={None})
    assert cpu.fix.commands == npu.fix.commands == ("/v/bin/python -m pip install 'peft' torch==2.13.0+cpu",)
    assert "keeps the installed torch: a release" in cpu.fix.text and "torch-npu" not in cpu.fix.text
    assert "keeps the installed torch (the build torch-npu pairs with): a release" in npu.fix.text
