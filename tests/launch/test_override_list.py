"""Override parsing and the algorithm-specific overrides (composed against the real verl 0.9.1 config)."""

from __future__ import annotations

import pytest

from doctor.launch import LaunchSpec, overrides, validate
from doctor.launch.override_list import parse_override, parse_value
from doctor.report import Severity


@pytest.mark.parametrize("text,prefix,key,value", [
    ("a.b=1", "", "a.b", "1"),
    ("+a.b=x=y", "+", "a.b", "x=y"),
    ("++a.b_c-d=", "++", "a.b_c-d", ""),
    ("~a.b", "~", "a.b", None),
    ("trainer.logger=['console']", "", "trainer.logger", "['console']"),
])
def test_parse_override(text, prefix, key, value):
    o = parse_override(text)
    assert o is not None and (o.prefix, o.key, o.value) == (prefix, key, value) and o.text == text


@pytest.mark.parametrize("text", ["--config-name=x", "-m", "plainword", "=1", "a b=1"])
def test_not_overrides(text):
    assert parse_override(text) is None


def test_parse_value():
    assert [parse_value(v) for v in ["True", "false", "null", "3", "-1", "1e-6", "'q'", "x"]] == \
        [True, False, None, 3, -1, 1e-6, "q", "x"]


@pytest.mark.parametrize("algorithm,expect", [
    ("grpo", ["algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.use_kl_loss=True"]),
    ("dapo", ["algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.clip_ratio_high=0.28",
              "actor_rollout_ref.actor.loss_agg_mode=token-mean"]),
    ("ppo", ["algorithm.adv_estimator=gae", "critic.strategy=megatron",
             "+critic.megatron.override_transformer_config.use_flash_attn=True"]),
])
def test_algorithms_compose(algorithm, expect, models, verl_config_dir):
    spec = LaunchSpec(verl_version="0.9.1", algorithm=algorithm, model=models["dense"], tp=2)
    ovs = overrides(spec)
    for e in expect:
        assert e in ovs
    fs = validate(spec, compose=True, config_dir=verl_config_dir)
    assert [f.id for f in fs if f.severity is Severity.ERROR] == []
    assert any(f.id == "launch-schema-composed" for f in fs)
