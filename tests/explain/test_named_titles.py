"""A config message that names a key says it in the finding's title, not only in the evidence line.

Hydra quotes the key it refuses (hydra v1.3.2 config_loader_impl.py: "Could not override '{override.key_or_group}'",
"Could not append to config. An item is already at '{...}'"; OmegaConf: "Key '...' is not in struct"); the
signature's `name` group carries it into the title (doctor.explain.db.Signature.title_for).
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines


def _first(lines: list[str]):  # type: ignore[no-untyped-def]
    return explain_lines(lines)[0]


def test_a_refused_override_names_its_key_in_the_title():
    # as https://github.com/SwanHubX/SwanLab-Docs/pull/170 quotes it (a verl command from an integration doc)
    f = _first(["Could not override 'val_generations_to_log_to_wandb'. To append to your config use "
                "+val_generations_to_log_to_wandb=1 Key 'val_generations_to_log_to_wandb' is not in struct",
                "    full_key: val_generations_to_log_to_wandb",
                "    object_type=dict"])
    assert f.id == "hydra-could-not-override", f.id
    assert f.title.endswith(": 'val_generations_to_log_to_wandb'"), f.title


def test_the_struct_and_append_messages_name_their_key_too():
    f = _first(["omegaconf.errors.ConfigKeyError: Key 'use_flash_attn' is not in struct"])
    assert f.id == "hydra-key-not-in-struct" and f.title.endswith(": 'use_flash_attn'"), (f.id, f.title)
    f = _first(["Could not append to config. An item is already at 'actor_rollout_ref.actor.megatron.sequence_parallel'."])
    assert f.id == "hydra-could-not-append", f.id
    assert f.title.endswith(": 'actor_rollout_ref.actor.megatron.sequence_parallel'"), f.title


def test_a_signature_without_a_name_keeps_its_title():
    f = _first(["ImportError: libatb.so: cannot open shared object file: No such file or directory"])
    assert f.id == "nnal-libatb-missing" and f.title == "The CANN NNAL (ATB) library libatb.so cannot be loaded", f.title
