"""Regenerate doctor/launch/removed_keys.json: which config keys each verl release dropped, computed by composing
the trainer configs of consecutive releases with real Hydra and diffing their key paths.

    python -m tools.verl_removed_keys GIT_DIR [--extra VERSION=CONFIG_DIR ...]

GIT_DIR is a clone of github.com/verl-project/verl (a bare one will do); every release tag from v0.4.0 on is read
with `git archive`. `--extra` adds a release whose tag is not in the clone (its verl/trainer/config directory).
Composed per release: ppo_trainer, ppo_megatron_trainer, and ppo_trainer with model_engine=megatron where that
group exists. A key is recorded only when some release has it and a later one does not.
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

from packaging.version import Version

OUT = Path(__file__).resolve().parents[1] / "doctor" / "launch" / "removed_keys.json"


def keys_of(cdir: Path) -> set[str]:
    from hydra import compose, initialize_config_dir

    from doctor.launch.hydra_compose import flatten

    out: set[str] = set()
    runs = [("ppo_trainer", []), ("ppo_megatron_trainer", [])]
    if (cdir / "model_engine" / "megatron.yaml").is_file():
        runs.append(("ppo_trainer", ["model_engine=megatron"]))
    for name, ovs in runs:
        if not (cdir / f"{name}.yaml").is_file():
            continue
        with initialize_config_dir(config_dir=str(cdir), version_base=None):
            cfg = compose(config_name=name, overrides=ovs)
        flat, dicts = flatten(cfg)
        out |= {k for k in set(flat) | set(dicts) if k and not k.endswith("._target_")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("git_dir")
    ap.add_argument("--extra", action="append", default=[])
    a = ap.parse_args()
    tags = [t for t in subprocess.run(["git", "--git-dir", a.git_dir, "tag"], capture_output=True, text=True,
                                      check=True).stdout.split() if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    tags = sorted((t for t in tags if Version(t[1:]) >= Version("0.4.0")), key=lambda t: Version(t[1:]))
    present: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in tags:
            data = subprocess.run(["git", "--git-dir", a.git_dir, "archive", t, "verl/trainer/config"],
                                  capture_output=True, check=True).stdout
            dest = Path(tmp, t)
            with tarfile.open(fileobj=BytesIO(data)) as tf:
                tf.extractall(dest, filter="data")
            present[t[1:]] = keys_of(dest / "verl" / "trainer" / "config")
        for e in a.extra:
            v, d = e.split("=", 1)
            present[v] = keys_of(Path(d))
    releases = sorted(present, key=Version)
    removed: dict[str, list[str]] = {}
    for prev, cur in zip(releases, releases[1:], strict=False):
        for k in present[prev] - present[cur]:
            removed.setdefault(k, [])
    table = {k: [v for v in releases if k in present[v]] for k in sorted(removed)}
    OUT.write_text(json.dumps({"source": "composed verl trainer configs (tools/verl_removed_keys.py)",
                               "releases": releases, "present_in": table}, indent=0, sort_keys=True) + "\n",
                   encoding="utf-8")
    print(f"{len(table)} keys dropped by some release, {len(releases)} releases -> {OUT}")


if __name__ == "__main__":
    main()
