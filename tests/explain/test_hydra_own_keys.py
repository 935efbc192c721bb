"""A key under `hydra:` that Hydra's own schema rejects is a Hydra version the config was not written for.

OmegaConf rejects a key a structured config lacks with `Key '<key>' not in '<Class>'` (omry/omegaconf 021b30d
omegaconf/dictconfig.py). When the class is one of Hydra's own (hydra/conf/__init__.py: HydraConf, JobConf, RunDir,
...), the key sits in the config's `hydra:` node and this hydra-core release has no such field; the same message for a
user's own dataclass is no Hydra version problem. Every log below is quoted from a real report.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines

# https://github.com/denisyarats/proto/issues/2 (a Hydra 0.11 config under hydra-core 1.x)
HYDRA_NAME = [
    "Key 'name' not in 'HydraConf'",
    "        full_key: hydra.name",
    "        reference_type=Optional[HydraConf]",
    "        object_type=HydraConf",
]
# https://github.com/hydra-ecosystem/hydra/issues/1515 (a `+key` into the user's own dataclass A)
USER_DATACLASS = [
    "Error merging override +a.j=2",
    "Key 'j' not in 'A'",
    "\tfull_key: a.j",
    "\treference_type=A",
    "\tobject_type=A",
]
# https://github.com/omry/omegaconf/issues/291 (merging a subclass into the user's DBConfig)
USER_SUBCLASS = [
    "omegaconf.errors.ConfigKeyError: Key 'timeout' not in 'DBConfig'",
    "        full_key: timeout",
    "        reference_type=Optional[DBConfig]",
    "        object_type=DBConfig",
]


def test_a_key_hydras_own_schema_lacks_is_a_hydra_version_mismatch():
    fs = explain_lines(HYDRA_NAME)
    assert fs[0].id == "hydra-own-key-unknown", [f.id for f in fs]
    assert fs[0].components[0] == "config"
    assert "'name'" in fs[0].title


def test_the_same_message_for_a_users_dataclass_is_not_hydras():
    for lines in (USER_DATACLASS, USER_SUBCLASS):
        ids = [f.id for f in explain_lines(lines)]
        assert "hydra-own-key-unknown" not in ids, ids
