"""Regenerate doctor/launch/removed_keys.json: which config keys each verl release dropped, computed by composing
the trainer configs of consecutive releases with real Hydra and diffing their key paths.

    python -m tools.verl_removed_keys GIT_DIR [--extra VERSION=CONFIG_DIR ...]

GIT_DIR is a clone of github.com/verl-project/verl (a bare one will do); every release tag from v0.4.0 on is read
with `git archive`. `--extra` adds a release whose tag is not in the clone (its verl/trainer/config directory).
Composed per release: ppo_trainer, ppo_megatron_trainer, and ppo_trainer with model_engine=megatron where that
group exists. Config group options (`model_engine/mindspeed`) that not every release has are listed with the releases that
have them (`group_options`), and every key path the oldest release lacks with the first release that has it
(`added_in`); and, apart, per SFT trainer config (`sft_trainer`, `sft_trainer_engine` with each `engine=X`), the
key paths that config's first release lacks with the first release that has them (`added_in_by_config`) and the
key paths one of its releases dropped with the releases that have them (`present_in_by_config`). A key is
recorded only when some release has it and a later one does not, and that later release
does not hold it in an open mapping: a key that left a yaml default while its parent section stays a plain
mapping (`rollout.engine_kwargs.sglang: {}`, which verl hands to SGLang whole) is still read by
the consumer of that mapping, so `+key` there is not "removed" (doctor/launch/schema.py `open_mapping`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from packaging.version import Version

OUT = Path(__file__).resolve().parents[1] / "doctor" / "launch" / "removed_keys.json"


def _composed(cdir: Path, name: str, ovs: list[str]) -> tuple[set[str], dict[str, Any], dict[str, int]]:
    """(every key path, the leaves, the mappings) of config `name` composed with `ovs` by real Hydra."""
    from hydra import compose, initialize_config_dir

    from doctor.launch.hydra_compose import flatten

    with initialize_config_dir(config_dir=str(cdir), version_base=None):
        cfg = compose(config_name=name, overrides=ovs)
    flat, dicts = flatten(cfg)
    return {k for k in set(flat) | set(dicts) if k and not k.endswith("._target_")}, flat, dicts


def keys_of(cdir: Path) -> tuple[set[str], dict[str, Any], dict[str, int]]:
    """(every key path of the composed trainer configs, their merged leaves and mappings)."""
    out: set[str] = set()
    flats: dict[str, Any] = {}
    maps: dict[str, int] = {}
    runs: list[tuple[str, list[str]]] = [("ppo_trainer", []), ("ppo_megatron_trainer", [])]
    if (cdir / "model_engine" / "megatron.yaml").is_file():
        runs.append(("ppo_trainer", ["model_engine=megatron"]))
    for name, ovs in runs:
        if not (cdir / f"{name}.yaml").is_file():
            continue
        keys, flat, dicts = _composed(cdir, name, ovs)
        out |= keys
        flats.update(flat)
        maps.update(dicts)
    return out, flats, maps


SFT_CONFIGS = ("sft_trainer", "sft_trainer_engine")


def sft_keys_of(cdir: Path) -> dict[str, tuple[set[str], dict[str, Any], dict[str, int]]]:
    """Per SFT trainer config of a release (the legacy `sft_trainer`, the engine trainer's `sft_trainer_engine`
    composed with each `engine=X` option the release has): every key path, leaves and mappings, as `keys_of` reads
    the PPO configs. Kept apart from those: the SFT trainers read `data.*` / `model.*` sections of their own."""
    out: dict[str, tuple[set[str], dict[str, Any], dict[str, int]]] = {}
    engines = sorted(y.stem for y in (cdir / "engine").glob("*.yaml")) if (cdir / "engine").is_dir() else []
    for name in SFT_CONFIGS:
        if not (cdir / f"{name}.yaml").is_file():
            continue
        runs: list[list[str]] = [[]] + ([[f"engine={e}"] for e in engines] if name == "sft_trainer_engine" else [])
        keys: set[str] = set()
        flats: dict[str, Any] = {}
        maps: dict[str, int] = {}
        for ovs in runs:
            k, flat, dicts = _composed(cdir, name, ovs)
            keys |= k
            flats.update(flat)
            maps.update(dicts)
        out[name] = (keys, flats, maps)
    return out


def options_of(cdir: Path) -> set[str]:
    """The config group options of a release (`model_engine/mindspeed`): what `group=option` can select."""
    return {f"{g.name}/{y.stem}" for g in cdir.iterdir() if g.is_dir() and not g.name.startswith("_")
            for y in g.glob("*.yaml")}


def dropped(prev: set[str], cur: tuple[set[str], dict[str, Any], dict[str, int]]) -> set[str]:
    """Keys of `prev` that the release `cur` no longer reads: gone from its config, and the nearest section of
    theirs that it still has is not an open mapping (schema.under_open_mapping)."""
    from doctor.launch.schema import under_open_mapping

    keys, flat, dicts = cur
    return {k for k in prev - keys if under_open_mapping(flat, dicts, k) is None}


def first_releases(present: dict[str, set[str]], releases: list[str]) -> dict[str, str]:
    """Each key path the oldest release does not have -> the first release that has it (`added_in`): a key unknown to
    the target and known to a later release is named with the release that added it."""
    out: dict[str, str] = {}
    for v in releases[1:]:
        for k in present[v] - present[releases[0]]:
            out.setdefault(k, v)
    return dict(sorted(out.items()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("git_dir")
    ap.add_argument("--extra", action="append", default=[])
    a = ap.parse_args()
    tags = [t for t in subprocess.run(["git", "--git-dir", a.git_dir, "tag"], capture_output=True, text=True,
                                      check=True).stdout.split() if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    tags = sorted((t for t in tags if Version(t[1:]) >= Version("0.4.0")), key=lambda t: Version(t[1:]))
    composed: dict[str, tuple[set[str], dict[str, Any], dict[str, int]]] = {}
    options: dict[str, set[str]] = {}
    sft: dict[str, dict[str, tuple[set[str], dict[str, Any], dict[str, int]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in tags:
            data = subprocess.run(["git", "--git-dir", a.git_dir, "archive", t, "verl/trainer/config"],
                                  capture_output=True, check=True).stdout
            dest = Path(tmp, t)
            with tarfile.open(fileobj=BytesIO(data)) as tf:
                tf.extractall(dest, filter="data")
            composed[t[1:]] = keys_of(dest / "verl" / "trainer" / "config")
            options[t[1:]] = options_of(dest / "verl" / "trainer" / "config")
            sft[t[1:]] = sft_keys_of(dest / "verl" / "trainer" / "config")
        for e in a.extra:
            v, d = e.split("=", 1)
            composed[v] = keys_of(Path(d))
            options[v] = options_of(Path(d))
            sft[v] = sft_keys_of(Path(d))
    present = {v: c[0] for v, c in composed.items()}
    releases = sorted(present, key=Version)
    removed: set[str] = set()
    for prev, cur in zip(releases, releases[1:], strict=False):
        removed |= dropped(present[prev], composed[cur])
    table = {k: [v for v in releases if k in present[v]] for k in sorted(removed)}
    added = first_releases(present, releases)
    # per SFT config, from the first release that has it: keys that config's oldest release lacks, and keys one of
    # its releases dropped (with the releases that have them), as for the PPO configs above
    added_sft, removed_sft = {}, {}
    for name in SFT_CONFIGS:
        have = [v for v in releases if name in sft[v]]
        if have:
            added_sft[name] = first_releases({v: sft[v][name][0] for v in have}, have)
            gone: set[str] = set()
            for prev, cur in zip(have, have[1:], strict=False):
                gone |= dropped(sft[prev][name][0], sft[cur][name])
            removed_sft[name] = {k: [v for v in have if k in sft[v][name][0]] for k in sorted(gone)}
    everywhere = set.intersection(*options.values()) if options else set()
    groups = {o: [v for v in releases if o in options[v]] for o in sorted(set().union(*options.values()) - everywhere)}
    OUT.write_text(json.dumps({"source": "composed verl trainer configs (tools/verl_removed_keys.py)",
                               "releases": releases, "present_in": table, "group_options": groups,
                               "added_in": added, "added_in_by_config": added_sft,
                               "present_in_by_config": removed_sft}, indent=0, sort_keys=True) + "\n",
                   encoding="utf-8")
    print(f"{len(table)} keys dropped by some release, {len(added)} added after {releases[0]}, "
          f"{len(releases)} releases -> {OUT}")
    for name, keys in added_sft.items():
        first = next(v for v in releases if name in sft[v])
        print(f"{name}: {len(keys)} keys added after {first} (its first release here), "
              f"{len(removed_sft[name])} dropped by one of its releases")


if __name__ == "__main__":
    main()
