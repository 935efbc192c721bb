"""One test per MindSpeed feature-table row: the rendered script writes the row's keys the way the table
says, the overrides compose against the real verl 0.9.1 config through Hydra, and the script passes bash -n.
For verl 0.6.1 / 0.7.1 (config files not installable next to 0.9.1) the same rows are checked against the
per-release key tables of shared/reference/verl.md §2.5 (static prefix rules)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from doctor.launch import LaunchSpec, overrides, render_script, validate
from doctor.launch.features import FEATURES, FEATURES_BY_NAME, A, key_info, prefix_for
from doctor.launch.features import O as OTC
from doctor.report import Severity

# Options that switch each row on, with a layout that is valid for the model used.
ROW_SPECS: dict[str, dict] = {
    "fa": {},
    "tp": {"tp": 2},
    "pp": {"pp": 2},
    "ep": {"ep": 2, "tp": 2, "sp": True},
    "etp": {"ep": 2, "etp": 1},
    "sp": {"tp": 2, "sp": True},
    "dist_opt": {"dist_opt": True},
    "recompute": {"recompute": "full", "recompute_method": "uniform", "recompute_layers": 1},
    "cp": {"cp": 2},
    "mbridge": {"mbridge": True},
    "rope": {"fused": ("rope",)},
    "swiglu": {"fused": ("swiglu",)},
    "rmsnorm": {"fused": ("rmsnorm",)},
    "gmm": {"fused": ("gmm",)},
    "permute": {"fused": ("permute",)},
}
MOE_ROWS = {"ep", "etp", "gmm", "permute"}


def test_every_row_has_a_spec():
    assert set(ROW_SPECS) == {f.name for f in FEATURES}


def _spec(row: str, models: dict[str, str], version: str = "0.9.1") -> LaunchSpec:
    model = models["moe"] if row in MOE_ROWS else models["dense"]
    return LaunchSpec(verl_version=version, model=model, **ROW_SPECS[row])


def _script_words(script: str) -> list[str]:
    start = script.index("python3 -m verl.trainer.main_ppo")
    return shlex.split(script[start:].replace("\\\n", " "))


@pytest.mark.parametrize("row", [f.name for f in FEATURES])
def test_row_written_composed_and_bash_n(row, models, verl_config_dir):
    feature = FEATURES_BY_NAME[row]
    spec = _spec(row, models)
    script = render_script(spec)
    words = _script_words(script)
    for key in feature.writes:  # '+O.x' or 'A.x': the exact prefix the table demands
        assert any(w.startswith(key + "=") for w in words), (key, words)
        if not key.startswith("+"):
            assert not any(w.startswith("+" + key + "=") for w in words)
    findings = validate(spec, compose=True, config_dir=verl_config_dir)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert errors == [], [(f.id, f.key, f.title) for f in errors]
    assert any(f.id == "launch-schema-composed" for f in findings)
    r = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("version", ["0.6.1", "0.7.1"])
@pytest.mark.parametrize("row", [f.name for f in FEATURES if f.name != "mbridge"])
def test_row_prefixes_for_older_verl_from_key_tables(row, version, models):
    """Without that release's yaml, the table's prefix rules decide; no prefix error may be produced."""
    spec = _spec(row, models, version)
    ovs = overrides(spec)
    for key in FEATURES_BY_NAME[row].writes:
        assert any(o.startswith(key + "=") for o in ovs), (key, ovs)
    findings = validate(spec, compose=False)
    bad = [f for f in findings if f.severity is Severity.ERROR]
    assert bad == [], [(f.id, f.key) for f in bad]


def test_mbridge_row_on_older_verl(models):
    # 0.6.x: use_mbridge exists (false by default) and VPP is allowed with it off.
    spec = LaunchSpec(verl_version="0.6.1", model=models["dense"], mbridge=False, pp=2, vpp=2)
    assert f"{A}use_mbridge=False" in overrides(spec)
    assert [f.id for f in validate(spec, compose=False) if f.severity is Severity.ERROR] == []


def test_key_tables_match_verl_091_yaml(verl_config_dir):
    """The per-release table must agree with the real 0.9.1 yaml for every key it lists."""
    import yaml

    gen = yaml.safe_load((verl_config_dir / "_generated_ppo_megatron_trainer.yaml").read_text())
    mega = gen["actor_rollout_ref"]["actor"]["megatron"]
    from doctor.launch.features import megatron_keys, override_dict_keys

    for name in megatron_keys():
        state, info = key_info(A + name, "0.9.1")
        assert (state != "removed") == (name in mega), name
        if name in mega and state != "removed":
            assert (mega[name] is None) == (state == "present-null"), name
    for name in override_dict_keys():
        assert name in mega["override_transformer_config"], name
    assert prefix_for(OTC + "use_flash_attn", "0.9.1") == "+"
    assert prefix_for(OTC + "recompute_method", "0.4.1") == "+"
    assert prefix_for(OTC + "recompute_method", "0.5.0") == ""


OLD_CONFIGS = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")


@pytest.mark.slow
@pytest.mark.skipif(not OLD_CONFIGS, reason="set DOCTOR_TEST_VERL_CONFIGS=DIR with DIR/<version>/verl/trainer/config "
                                            "(yaml files extracted from `pip download --no-deps verl==<version>`)")
@pytest.mark.parametrize("version", ["0.6.1", "0.7.0", "0.7.1", "0.8.0", "0.9.0"])
def test_rows_compose_against_older_real_configs(version, models):
    """Optional: the key tables and every row against older releases' real yaml (one verl can be installed)."""
    import yaml

    from doctor.launch.features import megatron_keys

    cdir = Path(OLD_CONFIGS) / version / "verl" / "trainer" / "config"
    mega = yaml.safe_load((cdir / "_generated_ppo_megatron_trainer.yaml").read_text())["actor_rollout_ref"]["actor"]["megatron"]
    for name in megatron_keys():
        assert (key_info(A + name, version)[0] not in ("absent", "removed")) == (name in mega), (version, name)
    for f in FEATURES:
        kw = {"mbridge": False} if f.name == "mbridge" and version == "0.6.1" else ROW_SPECS[f.name]
        spec = LaunchSpec(verl_version=version, model=models["moe"] if f.name in MOE_ROWS else models["dense"], **kw)
        bad = [(x.id, x.key) for x in validate(spec, compose=True, config_dir=cdir) if x.severity is Severity.ERROR]
        assert bad == [], (version, f.name, bad)
