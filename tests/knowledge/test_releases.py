"""The verl release table (profiles/releases.toml): it loads, it agrees with the profiles and with the modules
that used to keep their own per-release constants, and a verl release is diagnosed against its own row."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.knowledge.profiles import load_profiles
from doctor.knowledge.releases import load_releases, parse_releases, releases_path
from doctor.knowledge.versions import pkg_satisfies
from doctor.tomlfile import read_toml
from tests.stacks import diagnose_dict, found, pin_version, stack_snapshot

TABLE = load_releases()
PROFILES = load_profiles()


def test_every_profile_has_its_release_row_and_every_profiled_release_its_profiles():
    for p in PROFILES:
        row = TABLE.by_version.get(p.verl)
        assert row is not None and row.no_profile is None, p.name
        assert row.snapshot == p.is_snapshot
    for row in TABLE.rows:
        if row.version >= load_releases().by_version[TABLE.profiles_from].version and row.no_profile is None:
            chips = {c for p in PROFILES if p.verl == row.verl for c in p.chips}
            assert {"A2", "A3"} <= chips, row.verl


def test_profiles_agree_with_their_release_row():
    """The stack a profile documents satisfies what its verl release itself requires."""
    for p in PROFILES:
        row = TABLE.by_version[p.verl]
        assert pkg_satisfies(p.python_recommended or "", row.python) is not False, p.name
        tr = p.pin("transformers")
        if tr and row.transformers:
            assert pkg_satisfies(pin_version(tr), row.transformers), (p.name, tr, row.transformers)
        np_pin = p.pin("numpy")
        if np_pin and row.numpy:
            assert pkg_satisfies(pin_version(np_pin), row.numpy), p.name
        mg = p.git.get("megatron-lm")
        if row.install is not None and mg is not None:
            assert (mg.install == "pythonpath") == (row.install.megatron_install == "pythonpath"), p.name
        if row.install is not None:
            assert row.install.mbridge == (row.version.release >= (0, 7)), p.name


def test_every_pin_names_its_upstream_source():
    for p in PROFILES:
        missing = [k for k in p.pins if k not in p.provenance]
        assert missing == [], (p.name, missing)
        for key in ("python", "cann"):
            assert key in p.provenance, (p.name, key)
        for key in p.choices:
            assert key.split(".")[0] in (*p.pins, "triton", "numpy", "python", "cann", "driver_min", "torch-npu",
                                         "mbridge", "git"), (p.name, key)


def test_launch_reads_its_eras_from_the_table(monkeypatch, tmp_path):
    """A release's launch rules are its row: flip the 0.9.0 row's model_engine_key in a copy of the table and
    launch selects the megatron trainer config for 0.9.0 again (no constant in doctor/launch to edit)."""
    from doctor.knowledge import releases
    from doctor.launch import features
    from doctor.launch.override_list import config_name_for

    assert config_name_for("0.9.0") == "ppo_trainer" and config_name_for("0.8.0") == "ppo_megatron_trainer"
    text = Path(releases.releases_path()).read_text()
    rows = re.split(r"(?m)^(?=\[\[release\]\]$)", text)
    rows = [r.replace("model_engine_key = true", "model_engine_key = false") if 'verl = "0.9.0"' in r else r
            for r in rows]
    edited = tmp_path / "releases.toml"
    edited.write_text("".join(rows))
    monkeypatch.setattr(releases, "_TABLE", releases.load_releases(edited))
    for fn in (features.megatron_keys, features.override_dict_keys):
        fn.cache_clear()
    assert config_name_for("0.9.0") == "ppo_megatron_trainer" and config_name_for("0.9.1") == "ppo_trainer"


def test_era_flags_step_at_the_releases_that_changed_them():
    from doctor.launch import features as f

    assert [f.mbridge_required(v) for v in ("0.7.1", "0.8.0")] == [False, True]
    assert [f.needs_trainer_device(v) for v in ("0.6.1", "0.7.0")] == [True, False]
    assert [f.default_vanilla_mbridge(v) for v in ("0.6.1", "0.7.0", "0.8.0", "0.9.0")] == [False, True, True, False]
    assert f.known_releases() == (TABLE.launch_rows()[0].verl, max(r.verl for r in TABLE.launch_rows()
                                                                     if not r.snapshot))


def test_snapshot_keeps_the_keys_main_had_on_its_date():
    assert "grad_offload" in TABLE.megatron_keys_at("0.10.0.dev0")
    assert "grad_offload" not in TABLE.megatron_keys_at("0.9.1")
    assert "grad_offload" in TABLE.megatron_keys_at("0.9.0")


@pytest.mark.parametrize("installed,row", [("0.8.0.dev", "0.8.0"), ("0.10.0.dev", "0.10.0.dev20260822"), ("0.9.2", "0.9.1"),
                                           ("0.11.0", None), ("0.10.0", None), ("0.3.0", None)])
def test_row_lookup(installed, row):
    r = TABLE.row(installed)
    assert (r.verl if r else None) == row
    assert TABLE.newer_than_known(installed) == (installed in ("0.11.0", "0.10.0"))


def test_noxfile_installs_the_newest_release():
    import importlib.util

    spec = importlib.util.spec_from_file_location("noxfile_under_test", Path(__file__).parents[2] / "noxfile.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    fake = types.ModuleType("nox")
    fake.options = types.SimpleNamespace()  # type: ignore[attr-defined]
    fake.session = lambda f=None, **kw: f if f else (lambda g: g)  # type: ignore[attr-defined]
    fake.Session = object  # type: ignore[attr-defined]
    saved = sys.modules.get("nox")
    sys.modules["nox"] = fake
    try:
        spec.loader.exec_module(mod)
    finally:
        if saved is None:
            del sys.modules["nox"]
        else:
            sys.modules["nox"] = saved
    newest = [r for r in TABLE.rows if not r.snapshot][-1]
    assert mod.VERL_WHEEL == f"verl=={newest.verl}"
    assert set(mod.OLDER_VERL) == {p.verl for p in PROFILES if not p.is_snapshot and p.verl != newest.verl}


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d.update(schema=2), "schema: unsupported schema"),
    (lambda d: d["release"][0].update(python="three"), "release[0].python: not a version specifier"),
    (lambda d: d["release"][0].update(python_source="https://github.com/verl-project/verl/blob/main/pyproject.toml"),
     "release[0].python_source: points at the moving branch 'main'"),
    (lambda d: d["release"][0].update(snapshot=True), "release[0].verl: a snapshot row needs"),
    (lambda d: d["release"][2]["launch"].pop("mbridge_required"), "release[2].launch.mbridge_required: required key"),
    (lambda d: d["release"].append(dict(d["release"][0])), "duplicate release '0.4.0'"),
])
def test_loader_refuses_bad_tables_naming_the_key(edit, needle):
    data = read_toml(releases_path())
    edit(data)
    with pytest.raises(InputError) as e:
        parse_releases(data, "releases.toml")
    assert "releases.toml" in str(e.value) and needle in str(e.value)


# -- a verl 0.9.1 stack is diagnosed against its own profile and row ----------------------------------------


def test_verl_091_stack_is_diagnosed_against_the_091_profile():
    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a3")
    d = stack_snapshot(p)
    report = diagnose_dict(d)
    assert report.profile["name"] == "verl-0.9.1-cann9.1.0-a3"
    assert [f.id for f in report.findings if f.severity.value != "info"] == []
    d["python"]["version"] = "3.13.1"
    f = found(d)
    assert f["python-too-new-for-package"] == "error"
    d["python"]["version"] = "3.12.3"
    d["packages"]["transformers"]["version"] = "5.11.0"
    # verl 0.9.1's own METADATA (transformers<5.11) rejects it: one error, from that declaration, not a second one
    # from the doctor's window of the same pair
    (f,) = [f for f in diagnose_dict(d).findings if "transformers" in f.components and f.severity.value == "error"]
    assert f.id == "requirement-version-unmet" and f.evidence["package"] == "verl", f


def test_950_stack_says_its_cann_and_torch_npu_are_unknown():
    p = next(x for x in PROFILES if x.name == "verl-0.9.0-cannunknown-950")
    assert p.cann_unknown and "torch-npu" not in p.pins
    report = diagnose_dict(stack_snapshot(p))
    assert report.profile["name"] == p.name
    unknown = [f for f in report.findings if f.id == "profile-facts-unknown"]
    assert unknown and unknown[0].severity.value == "info" and "cann" in unknown[0].evidence["unknown"]
    assert [f.id for f in report.findings if f.severity.value != "info"] == []


def test_check_states_its_knowledge_date():
    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a2")
    report = diagnose_dict(stack_snapshot(p))
    k = report.to_dict()["knowledge"]
    assert k["date"] == TABLE.knowledge_date and k["newest"]["vllm-ascend"] == "0.30.0rc2"
    assert k["newest"]["cann"] == "9.2.0" and "tools.refresh_knowledge" in k["refresh"]


@pytest.mark.parametrize("cann,beyond", [("9.2.0", False), ("9.3.0", True)])
def test_cann_newer_than_every_profile(cann, beyond):
    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a2")
    d = stack_snapshot(p)
    d["ascend"]["toolkit"]["version"] = d["ascend"]["kernels"]["version"] = d["ascend"]["nnal"]["version"] = cann
    report = diagnose_dict(d)
    f = next(x for x in report.findings if x.id == "cann-newer-than-profiles")
    assert f.severity.value == "info" and report.profile["name"] == "verl-0.9.1-cann9.1.0-a2"
    assert (f.fix is not None and "tools.refresh_knowledge" in f.fix.text) == beyond
    assert ("newer than every CANN the doctor knows" in f.detail) == beyond


def test_check_cli_prints_the_knowledge_date(tmp_path):
    import json

    from click.testing import CliRunner

    from doctor.cli import cli

    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a2")
    f = tmp_path / "node.json"
    f.write_text(json.dumps(stack_snapshot(p)))
    r = CliRunner().invoke(cli, ["check", "--from", str(f)])
    out = r.output + (r.stderr if r.stderr_bytes is not None else "")
    assert f"knowledge: {TABLE.knowledge_date}" in out and "vllm-ascend 0.30.0rc2" in out
    r = CliRunner().invoke(cli, ["--json", "check", "--from", str(f)])
    doc = json.loads(r.stdout)
    assert doc["knowledge"]["date"] == TABLE.knowledge_date and doc["profile"]["name"] == p.name
