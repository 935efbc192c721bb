"""Shared fixtures for the launch/lint tests: model directories (real config.json shapes) and verl's config files.

verl's config comes from the real verl 0.9.1 wheel installed with `pip install --no-deps verl==0.9.1`
(CI does this). Its absence fails the tests that need it rather than skipping them: a schema check that
silently never runs would prove nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doctor.launch.hydra_compose import installed_verl
from doctor.launch.shell.values import Str
from doctor.launch.shell.wrapper import how_run

QWEN25_05B = {  # Qwen/Qwen2.5-0.5B-Instruct config.json (fields the rules read)
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu", "hidden_size": 896,
    "intermediate_size": 4864, "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "vocab_size": 151936, "tie_word_embeddings": True,
}
QWEN3_06B = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_act": "silu", "hidden_size": 1024,
    "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000, "vocab_size": 151936,
}
QWEN3_MOE = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_act": "silu", "hidden_size": 2048,
    "num_attention_heads": 32, "num_hidden_layers": 48, "num_key_value_heads": 4, "num_experts": 128,
    "num_experts_per_tok": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "vocab_size": 151936,
}
GPT2 = {
    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new", "n_embd": 768,
    "n_head": 12, "n_layer": 12, "n_positions": 1024, "layer_norm_epsilon": 1e-05, "vocab_size": 50257,
}


def write_model(root: Path, name: str, cfg: dict) -> str:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return str(d)


@pytest.fixture
def models(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "models"
    return {
        "dense": write_model(root, "Qwen3-0.6B", QWEN3_06B),
        "qwen25": write_model(root, "Qwen2.5-0.5B-Instruct", QWEN25_05B),
        "moe": write_model(root, "Qwen3-30B-A3B", QWEN3_MOE),
        "gpt2": write_model(root, "gpt2", GPT2),
    }


def verl_file(dest: Path, rev: str, path: str) -> Path:
    """`path` of verl at `rev`, read from the git mirror ($DOCTOR_REALWORLD_MIRRORS/verl-project+verl) into `dest`
    under its own name; the test is skipped where there is no mirror (CI)."""
    import subprocess

    from tests.realworld.upstream import mirror_git_dir

    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    out = dest / Path(path).name
    out.write_text(subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{rev}:{path}"], check=True,
                                  capture_output=True, text=True).stdout, encoding="utf-8")
    return out


def verl_tree(dest: Path, rev: str, *paths: str) -> Path:
    """verl's package (its config, version and source) and `paths` at `rev`, from the same git mirror, extracted under
    `dest` at their repository paths (a wrapper finds the script it runs, lint finds the config); skipped as above."""
    import subprocess

    from tests.realworld.upstream import mirror_git_dir

    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    data = subprocess.run(["git", f"--git-dir={git_dir}", "archive", rev, "verl", *paths], check=True,
                          capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=data, check=True)
    return dest


def require_verl_config() -> Path:
    version, cdir = installed_verl()
    if cdir is None or version != "0.9.1":
        pytest.fail(f"these tests compose against the real verl 0.9.1 config; found verl {version} at {cdir}. "
                    "Install it with: pip install --no-deps verl==0.9.1")
    return cdir


@pytest.fixture(scope="session")
def verl_config_dir() -> Path:
    return require_verl_config()


def shell_script(words: list[Str]) -> tuple[int, list[str]] | None:
    """(index of the script word, the `NAME=value` words set for it) when the command runs a script file with a
    shell, as `how_run` gives them; None otherwise."""
    run = how_run(words)
    return None if run is None else (run.at, run.env)
