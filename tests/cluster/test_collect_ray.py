"""`collect_ray` and `doctor check --ray` against a REAL Ray cluster simulated on this host.

Three `ray start` nodes on 127.0.0.1 (tests/ray_sim.py), each with its own environment:
  head      DOCTOR_ROOT -> fake A2 host, CANN 8.3.RC1, Ray NPU=8
  w-cann    DOCTOR_ROOT -> fake A3 host, CANN 9.1.0,  Ray NPU=16   (the CANN-skewed node)
  w-nonpu   DOCTOR_ROOT -> fake A2 host, CANN 8.3.RC1, no Ray NPU  (the missing-resource node)
Later tests add a fourth node whose npu-smi freezes the Ray worker that runs it (SIGSTOP on its parent:
a node that hangs mid-collect), and finally kill that node's raylet while it hangs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from doctor.checks.runner import run_checks  # noqa: E402
from doctor.cluster.collect_ray import collect_ray  # noqa: E402
from doctor.errors import DoctorError  # noqa: E402
from tests.conftest import SCHEMAS
from tests.fakes import make_ascend_root  # noqa: E402
from tests.ray_sim import SimCluster  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("roots")
    return {"a2": make_ascend_root(base, "a2-cann8.3rc1-old-layout"),
            "a3": make_ascend_root(base, "a3-cann9.1.0-new-layout")}


@pytest.fixture(scope="module")
def sim(roots: dict[str, Path]):
    c = SimCluster()
    try:
        c.start([
            ("head", {"DOCTOR_ROOT": str(roots["a2"])}, {"NPU": 8}),
            ("w-cann", {"DOCTOR_ROOT": str(roots["a3"])}, {"NPU": 16}),
            ("w-nonpu", {"DOCTOR_ROOT": str(roots["a2"])}, {}),
        ])
        yield c
    finally:
        c.stop()


def _node(sim: SimCluster, name: str):
    return next(n for n in sim.nodes if n.name == name)


def test_each_node_is_probed_in_its_own_environment(sim: SimCluster, roots, shared_dir):
    import jsonschema
    import ray

    cl = collect_ray(sim.address, None, timeout=60)
    by = {n.node: n for n in cl.nodes}
    # named <node name>/<node id>, head first, every node answered
    assert [n.node for n in cl.nodes] == [_node(sim, x).full_name for x in ("head", "w-cann", "w-nonpu")]
    assert all(n.error is None and n.snapshot is not None for n in cl.nodes)
    expect = {"head": ("a2", "8.3.RC1", 8, 8.0, True), "w-cann": ("a3", "9.1.0", 16, 16.0, False),
              "w-nonpu": ("a2", "8.3.RC1", 8, None, False)}
    schema = json.loads((SCHEMAS / "snapshot.schema.json").read_text())
    for name, (root, cann, ndev, npu, head) in expect.items():
        snap = by[_node(sim, name).full_name].snapshot
        assert snap.extra["collect"]["root"] == str(roots[root])  # DOCTOR_ROOT of that node's raylet
        assert snap.ascend.toolkit.version == cann
        assert sum(1 for f in snap.ascend.device_files if "/davinci" in f and f[-1].isdigit()) == ndev
        assert snap.ray["resources"].get("NPU") == npu
        assert snap.ray["is_head"] is head
        assert snap.ray["version"] == ray.__version__
        assert snap.ray["node_id"] == _node(sim, name).node_id
        assert snap.python.executable.startswith(sys.prefix) or Path(snap.python.executable).parent == Path(sys.executable).parent
        assert snap.is_complete and snap.has_package("ray")
        jsonschema.validate(snap.to_dict(), schema)
    meta = cl.extra["ray"]
    assert meta["driver_ray_version"] == ray.__version__ and len(meta["nodes"]) == 3
    assert all(m["seconds"] is not None for m in meta["nodes"])


def test_check_ray_json_reports_cann_skew_and_missing_npu_resource(sim: SimCluster):
    """Must-show: `doctor check --ray --json` on the 3-node cluster names both nodes."""
    t0 = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "doctor", "check", "--ray", "--address", sim.address, "--ray-timeout", "60", "--json"],
        capture_output=True, text=True, timeout=180, cwd=str(REPO),
    )
    assert time.monotonic() - t0 < 60
    assert p.returncode == 1, p.stderr  # an error finding (the missing NPU resource)
    report = json.loads(p.stdout)
    cann_node, nonpu = _node(sim, "w-cann").full_name, _node(sim, "w-nonpu").full_name
    assert [(n["node"], n["ok"]) for n in report["nodes"]] == [
        (_node(sim, "head").full_name, True), (cann_node, True), (nonpu, True)]
    [skew] = [f for f in report["findings"] if f["id"] == "cluster-cann-skew"]
    assert skew["node"] is None and skew["evidence"]["nodes"] == [cann_node]
    assert "9.1.0 on w-cann/" in skew["title"] and skew["severity"] == "warning"
    [npu] = [f for f in report["findings"] if f["id"] == "cluster-npu-resource-missing"]
    assert npu["node"] == nonpu and npu["severity"] == "error" and npu["evidence"]["npus"] == 8
    # the head with NPUs and a matching resource is not accused of anything NPU-related
    assert not [f for f in report["findings"] if f["id"].startswith("cluster-npu-resource")
                and f["node"] != nonpu]


def test_deep_on_the_cluster_gives_every_node_its_imports_and_installed_files_against_record(sim: SimCluster):
    """`check --ray --deep` / `collect --ray --deep`: each node runs the --deep imports and RECORD comparison in
    its worker's environment, as `collect --deep` there would (here no node has torch_npu: each import fails as
    such; the test interpreter's stack files are compared), within --ray-timeout + --deep-timeout."""
    t0 = time.monotonic()
    cl = collect_ray(sim.address, None, timeout=60, deep_timeout=60)
    assert time.monotonic() - t0 < 150
    assert len(cl.nodes) == 3 and all(n.error is None and n.snapshot is not None for n in cl.nodes)
    for n in cl.nodes:
        snap = n.snapshot
        assert set(snap.imports) == {"torch_npu", "mindspeed.megatron_adaptor", "vllm_ascend"}
        assert snap.imports["torch_npu"].ok is False and "torch_npu" in (snap.imports["torch_npu"].error or "")
        vf = snap.to_dict()["python"]["verified_files"]
        assert "error" not in vf and vf["budget"] > 0 and isinstance(vf["dists"], list), vf
    plain = collect_ray(sim.address, None, timeout=60)  # without --deep the nodes do neither, as before
    assert all("imports" not in n.snapshot.to_dict() and "verified_files" not in n.snapshot.to_dict()["python"]
               for n in plain.nodes)


def test_collect_ray_writes_a_cluster_document_and_check_reads_it(sim: SimCluster, tmp_path):
    """`doctor collect --ray -o` then `doctor check --from` (offline) gives the same cross-node verdict, and the
    human output shows the node x component table with the odd CANN marked."""
    out = tmp_path / "cluster.json"
    p = subprocess.run([sys.executable, "-m", "doctor", "collect", "--ray", "--address", sim.address,
                        "--ray-timeout", "60", "-o", str(out)], capture_output=True, text=True, timeout=180, cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "doctor.cluster/1" and len(doc["nodes"]) == 3
    assert all(n["snapshot"]["schema"] == "doctor.snapshot/1" for n in doc["nodes"])
    p = subprocess.run([sys.executable, "-m", "doctor", "--no-color", "check", "--from", str(out)],
                       capture_output=True, text=True, timeout=60, cwd=str(REPO))
    assert p.returncode == 1
    cann_node = _node(sim, "w-cann").full_name
    assert "9.1.0*" in p.stdout  # the odd one out is marked in the table
    assert "cluster-cann-skew" in p.stdout and "cluster-npu-resource-missing" in p.stdout
    assert cann_node.split("/")[0] in p.stdout


HANG = "#!/bin/sh\n: > \"$DOCTOR_TEST_MARK\"\nkill -STOP $PPID\n"


@pytest.fixture(scope="module")
def hung(sim: SimCluster, roots, tmp_path_factory: pytest.TempPathFactory):
    """A fourth node whose npu-smi stops (SIGSTOP) the Ray worker that runs it: the node hangs."""
    bindir = tmp_path_factory.mktemp("hangbin")
    exe = bindir / "npu-smi"
    exe.write_text(HANG)
    exe.chmod(0o755)
    mark = bindir / "started"
    node = sim.add("w-hang", {"DOCTOR_ROOT": str(roots["a2"]), "PATH": f"{bindir}:{os.environ['PATH']}",
                              "DOCTOR_TEST_MARK": str(mark)}, {"NPU": 8})
    return node, mark


def test_hung_node_times_out_and_the_rest_are_reported(sim: SimCluster, hung):
    node, mark = hung
    t0 = time.monotonic()
    # 20 s: on a loaded 2-core CI machine a Ray worker can take ~10 s to start and unpack the doctor before the
    # node's npu-smi even runs; the bound below is what the test is about (the hung node costs the timeout only).
    cl = collect_ray(sim.address, None, timeout=20)
    elapsed = time.monotonic() - t0
    assert mark.exists(), "the hanging npu-smi never ran"
    assert elapsed < 20 + 12, f"collect took {elapsed:.1f} s with a 20 s node timeout"
    by = {n.node: n for n in cl.nodes}
    assert len(cl.nodes) == 4
    bad = by[node.full_name]
    assert bad.snapshot is None and bad.error.startswith("timeout:")
    assert all(n.snapshot is not None for n in cl.nodes if n.node != node.full_name)
    findings, _ = run_checks([(n.node, n.snapshot, n.error) for n in cl.nodes], only=("cluster",))
    [f] = [f for f in findings if f.id == "cluster-node-timeout"]
    assert f.node == node.full_name


def test_node_killed_mid_collect_is_recorded_with_its_error(sim: SimCluster, hung):
    node, mark = hung
    mark.unlink(missing_ok=True)
    result: dict[str, object] = {}

    def run() -> None:
        t0 = time.monotonic()
        try:
            result["cluster"] = collect_ray(sim.address, None, timeout=45)
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            result["error"] = e
        result["seconds"] = time.monotonic() - t0

    th = threading.Thread(target=run)
    th.start()
    deadline = time.monotonic() + 40
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mark.exists(), "the node's probe never started"
    sim.kill_node(node)  # its raylet and every worker under it, while the probe hangs there
    th.join(90)
    assert not th.is_alive() and "error" not in result, result
    assert result["seconds"] < 45, "a dead node must not cost the whole timeout"
    cl = result["cluster"]
    by = {n.node: n for n in cl.nodes}
    dead = by.get(node.full_name)
    assert dead is not None and dead.snapshot is None
    assert not dead.error.startswith("timeout"), dead.error
    others = [n for n in cl.nodes if n.node != node.full_name]
    assert len(others) == 3 and all(n.snapshot is not None for n in others)
    findings, _ = run_checks([(n.node, n.snapshot, n.error) for n in cl.nodes], only=("cluster",))
    assert [f.node for f in findings if f.id == "cluster-node-unreachable"] == [node.full_name]


def test_target_python_without_ray_is_a_clear_error(tmp_path: Path):
    venv = tmp_path / "noray"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    with pytest.raises(DoctorError) as e:
        collect_ray("127.0.0.1:1", str(venv / "bin" / "python"), timeout=5)
    msg = str(e.value)
    assert "ray is not importable" in msg and str(venv) in msg and "--python" in msg


def test_doctor_without_ray_and_no_python_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch):
    import doctor.cluster.collect_ray as cc

    monkeypatch.setattr(cc, "_doctor_has_ray", lambda: False)
    with pytest.raises(DoctorError) as e:
        cc.collect_ray(None, None, timeout=5)
    assert "pip install 'ray==VERSION'`, VERSION being what `ray --version` prints" in str(e.value)
    assert e.value.exit_code == 2


def test_no_cluster_at_address_is_a_bounded_clear_error():
    from tests.ray_sim import free_port

    t0 = time.monotonic()
    with pytest.raises(DoctorError) as e:
        collect_ray(f"127.0.0.1:{free_port()}", None, timeout=5, connect_timeout=3)
    assert time.monotonic() - t0 < 30
    assert "127.0.0.1:" in str(e.value)


@pytest.mark.parametrize(("raylet_value", "expect"), [(None, None), ("0,1", "0,1"), ("", "")])
def test_worker_environ_undoes_rays_zero_npu_override(raylet_value, expect):
    """Ray sets ASCEND_RT_VISIBLE_DEVICES="" in tasks without NPUs (older Ray); the raylet's value is real."""
    from doctor.cluster.collect_ray import worker_environ

    env = {k: v for k, v in os.environ.items() if k != "ASCEND_RT_VISIBLE_DEVICES"}
    if raylet_value is not None:
        env["ASCEND_RT_VISIBLE_DEVICES"] = raylet_value
    # a stand-in raylet; read its environment only once it has exec'd (before that /proc shows ours)
    fake_raylet = subprocess.Popen([sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(30)"],
                                   env=env, stdout=subprocess.PIPE)
    try:
        assert fake_raylet.stdout is not None and fake_raylet.stdout.readline() == b"ready\n"
        got = worker_environ({"RAY_RAYLET_PID": str(fake_raylet.pid), "ASCEND_RT_VISIBLE_DEVICES": "", "X": "1"})
    finally:
        fake_raylet.kill()
        fake_raylet.wait()
    assert got.get("ASCEND_RT_VISIBLE_DEVICES") == expect and got["X"] == "1"
    assert worker_environ({"ASCEND_RT_VISIBLE_DEVICES": "2,3"}) == {"ASCEND_RT_VISIBLE_DEVICES": "2,3"}
