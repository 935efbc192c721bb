"""The rendered script runs for real (with python3 shimmed on PATH): hostile values reach Python byte for
byte, nothing in them runs, set_env files are sourced under `set +u` with NNAL's --cxx_abi=1."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser

from doctor.launch import LaunchSpec, overrides, render_script
from doctor.launch.override_list import hydra_quote
from doctor.launch.render import RECOMMENDED_ENV, render_overrides


def _exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _env_files(tmp: Path) -> tuple[Path, Path]:
    cann = tmp / "cann_set_env.sh"
    # Like CANN 9.x: reads a variable that is unset (fails under `set -u` unless the script turns it off).
    cann.write_text('export ASCEND_HOME_PATH=/fake/cann\nexport CMAKE_PREFIX_PATH="$UNSET_DOCTOR_TEST_VAR:x"\n')
    nnal = tmp / "nnal_set_env.sh"
    nnal.write_text('printf "%s\\n" "$@" > "$NNAL_ARGS_OUT"\n')
    return cann, nnal


def _run(script: str, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    shim = tmp / "shim"
    shim.mkdir(exist_ok=True)
    out = tmp / "argv.bin"
    _exe(shim / "python3", '#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\nenv > "$ENV_OUT"\n')
    sp = _exe(tmp / "run.sh", script)
    env = {"PATH": f"{shim}:/usr/bin:/bin", "ARGV_OUT": str(out), "ENV_OUT": str(tmp / "env.txt"),
           "NNAL_ARGS_OUT": str(tmp / "nnal_args.txt"), "HOME": str(tmp)}
    r = subprocess.run(["bash", str(sp), *extra], env=env, capture_output=True, text=True, timeout=30, cwd=tmp)
    argv = out.read_bytes().decode().split("\0")[:-1] if out.exists() else []
    return r, argv


HOSTILE = ("my model's \"dir\" $(touch {m1}) `touch {m2}` ${{HOME}} $HOME \\ back\\slash\n"
           "second line\ttab ;|&<>*?[]{{}}!#~ end\\")


def test_hostile_model_path_reaches_python_byte_for_byte_and_runs_nothing(tmp_path, verl_config_dir):
    m1, m2 = tmp_path / "ran1", tmp_path / "ran2"
    path = HOSTILE.format(m1=m1, m2=m2)
    cann, nnal = _env_files(tmp_path)
    spec = LaunchSpec(verl_version="0.9.1", model=path, train_files=path + "/train.parquet", tp=2,
                      cann_set_env=str(cann), nnal_set_env=str(nnal), experiment_name="x'; rm -rf / #")
    r, argv = _run(render_script(spec), tmp_path, "trainer.val_before_train=False")
    assert r.returncode == 0, r.stderr
    want = [o if not o.startswith("data.val_files=") else argv[3 + i] for i, o in enumerate(overrides(spec))]
    assert argv == ["-m", "verl.trainer.main_ppo", "--config-name=ppo_trainer", *want, "trainer.val_before_train=False"]
    val = next(a for a in argv if a.startswith("data.val_files="))  # `~/…` reaches verl expanded by bash
    assert "~" not in val and val.endswith("/data/gsm8k/test.parquet")
    assert not m1.exists() and not m2.exists()
    # ... and verl's real config, composed by Hydra from exactly that argv, holds the exact path.
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(verl_config_dir), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=argv[3:])
    assert cfg.actor_rollout_ref.model.path == path
    assert cfg.data.train_files == path + "/train.parquet"
    assert cfg.trainer.experiment_name == "x'; rm -rf / #"
    # set_env files: sourced with set +u (the unset read did not abort), NNAL with --cxx_abi=1.
    assert (tmp_path / "nnal_args.txt").read_text().split() == ["--cxx_abi=1"]
    env = (tmp_path / "env.txt").read_text()
    assert "ASCEND_HOME_PATH=/fake/cann" in env
    for name, value, _ in RECOMMENDED_ENV:
        assert f"{name}={value}" in env


def test_user_exports_win_over_recommended_values(tmp_path):
    cann, nnal = _env_files(tmp_path)
    script = render_script(LaunchSpec(verl_version="0.9.1", cann_set_env=str(cann), nnal_set_env=str(nnal)))
    script = script.replace("set -euo pipefail", "set -euo pipefail\nexport HCCL_CONNECT_TIMEOUT=7200", 1)
    r, _ = _run(script, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "HCCL_CONNECT_TIMEOUT=7200" in (tmp_path / "env.txt").read_text()


def test_missing_set_env_file_stops_before_python(tmp_path):
    spec = LaunchSpec(verl_version="0.9.1", cann_set_env=str(tmp_path / "nope.sh"), nnal_set_env="")
    r, argv = _run(render_script(spec), tmp_path)
    assert r.returncode == 1 and argv == []
    assert "nope.sh" in r.stderr


def test_each_recommended_export_has_one_comment():
    lines = render_script(LaunchSpec(verl_version="0.9.1")).splitlines()
    for name, _, why in RECOMMENDED_ENV:
        i = next(k for k, ln in enumerate(lines) if ln.startswith(f"export {name}="))
        assert lines[i - 1] == f"# {why}"


def _ray_role(tmp: Path, script: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str], bool]:
    """Run the multi-node script with ray, python3 and ip shimmed: (result, ray's argv, whether verl ran). The ip
    shim answers `ip route get` with the source address in $IP_SRC, or fails like iproute2 given a host name."""
    shim = tmp / "shim"
    shim.mkdir(exist_ok=True)
    for f in ("ray.txt", "py"):
        (tmp / f).unlink(missing_ok=True)
    _exe(shim / "ray", '#!/bin/sh\nprintf "%s\\n" "$@" > "$RAY_OUT"\n')
    _exe(shim / "python3", '#!/bin/sh\necho 2\ntouch "$PY_RAN"\n')  # 2 nodes alive, then "verl" runs
    _exe(shim / "ip", '#!/bin/sh\n[ -n "$IP_SRC" ] || { echo "Error: any valid prefix is expected" >&2; exit 1; }\n'
                      'echo "$3 via 172.16.0.1 dev enp189s0f0 src $IP_SRC uid 0"\necho "    cache"\n')
    sp = _exe(tmp / "run.sh", script)
    r = subprocess.run(["bash", str(sp)], env={"PATH": f"{shim}:/usr/bin:/bin", "RAY_OUT": str(tmp / "ray.txt"),
                                              "PY_RAN": str(tmp / "py"), "HOME": str(tmp), **env},
                       capture_output=True, text=True, timeout=30, cwd=tmp)
    ray = (tmp / "ray.txt").read_text().splitlines() if (tmp / "ray.txt").exists() else []
    return r, ray, (tmp / "py").exists()


def test_multinode_script_head_and_worker(tmp_path):
    spec = LaunchSpec(verl_version="0.9.1", nodes=2, npus_per_node=16, tp=4, head_address="10.1.2.3",
                      cann_set_env="", nnal_set_env="", ray_port=6380)
    script = render_script(spec)
    assert 'RAY_PORT="${RAY_PORT:-6380}"' in script
    assert "HEAD_ADDRESS=10.1.2.3" in script and "trainer.nnodes=2" in script
    assert subprocess.run(["bash", "-n"], input=script, text=True, timeout=20).returncode == 0
    # A worker (NODE_RANK=1) joins the head and never runs verl.
    r, ray, ran = _ray_role(tmp_path, script, NODE_RANK="1", NODE_IP="192.168.10.7")
    assert r.returncode == 0, r.stderr
    assert ray == ["start", "--address=10.1.2.3:6380", "--node-ip-address=192.168.10.7", "--block"] and not ran


def test_multinode_script_gives_ray_the_node_address_on_both_roles(tmp_path):
    """On a multi-homed Ascend node (management NIC + data NICs) Ray's own guess is the default-route NIC: the script
    passes NODE_IP, or this node's source address towards the head, to `ray start --node-ip-address` on the head and
    on every worker; with neither it stops before Ray starts."""
    spec = LaunchSpec(verl_version="0.9.1", nodes=2, npus_per_node=16, tp=4, head_address="10.1.2.3",
                      cann_set_env="", nnal_set_env="")
    script = render_script(spec)
    r, ray, ran = _ray_role(tmp_path, script, NODE_RANK="0", NODE_IP="10.1.2.3")
    assert r.returncode == 0, r.stderr
    assert ray == ["start", "--head", "--node-ip-address=10.1.2.3", "--port=6379"] and ran
    # NODE_IP unset: the source address of this node's route towards HEAD_ADDRESS (the head's own: its address).
    r, ray, _ = _ray_role(tmp_path, script, NODE_RANK="1", IP_SRC="172.16.0.8")
    assert r.returncode == 0, r.stderr
    assert ray == ["start", "--address=10.1.2.3:6379", "--node-ip-address=172.16.0.8", "--block"]
    r, ray, _ = _ray_role(tmp_path, script, NODE_RANK="0", IP_SRC="10.1.2.3")
    assert ray[:3] == ["start", "--head", "--node-ip-address=10.1.2.3"]
    # A value with spaces or $(...) reaches ray as one argument and runs nothing.
    r, ray, _ = _ray_role(tmp_path, script, NODE_RANK="1", NODE_IP="10.0.0.9 $(touch pwned)")
    assert "--node-ip-address=10.0.0.9 $(touch pwned)" in ray and not (tmp_path / "pwned").exists()
    # Nothing to go on (a host name as HEAD_ADDRESS, no iproute2): a clear stop, Ray not started.
    for rank in ("0", "1"):
        r, ray, ran = _ray_role(tmp_path, script, NODE_RANK=rank, HEAD_ADDRESS="head-node")
        assert r.returncode == 1 and ray == [] and not ran
        assert "set NODE_IP to this node's address on the cluster network" in r.stderr
    # A worker with no head address at all is told that first.
    r, ray, _ = _ray_role(tmp_path, render_script(LaunchSpec(verl_version="0.9.1", nodes=2, cann_set_env="",
                                                             nnal_set_env="")), NODE_RANK="1", NODE_IP="10.0.0.9")
    assert r.returncode == 1 and ray == [] and "set HEAD_ADDRESS" in r.stderr


def test_render_overrides_one_per_line():
    spec = LaunchSpec(verl_version="0.9.1", tp=2)
    assert render_overrides(spec).splitlines() == overrides(spec)


def test_hydra_quote_round_trips_through_hydra():
    parser = OverridesParser.create()
    for value in ["plain/path", "a b", "it's", 'q"q', "${x}", "a\\${x}", "t\\", "1e-6", "true", "null", "", "~/d",
                  "x,y", "[1]", "a=b", "\\'"]:
        text = "k=" + hydra_quote(value)
        assert parser.parse_overrides([text])[0].value() == value or value in ("${x}", "a\\${x}"), value
    from omegaconf import OmegaConf

    for value in ["${x}", "a\\${x}", "$${y}"]:
        v = parser.parse_overrides(["k=" + hydra_quote(value)])[0].value()
        assert OmegaConf.create({"k": v}).k == value


def test_older_verl_script_passes_bash_n():
    script = render_script(LaunchSpec(verl_version="0.7.1", tp=2, pp=2, fused=("rope", "swiglu", "rmsnorm")))
    assert subprocess.run(["bash", "-n"], input=script, text=True, timeout=20).returncode == 0
    assert script.startswith("#!/usr/bin/env bash\n")
