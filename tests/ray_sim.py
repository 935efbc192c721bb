"""A real multi-node Ray cluster simulated on one host, for tests and `bench/cluster_scale.py`.

Each node is its own `ray start` (own raylet, own environment) on this machine, so nodes share hostname
and IP but can be given different env vars (DOCTOR_ROOT -> a different fake Ascend root, PATH -> a
different fake npu-smi) and different `--resources`. Everything is small for a 2-core CI machine: one
CPU per node, 80 MB object stores, no dashboard UI.

Isolation: every cluster has its own short --temp-dir and its own ports; `stop()` kills only the
processes whose command line names that temp dir, plus their descendants (raylet's workers and agents
rename themselves `ray::...` but stay its children). It never runs `ray stop`, which would take down
every Ray cluster on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).with_name("ray"))
OBJECT_STORE = 80 * 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SimNode:
    name: str
    env: dict[str, str]
    resources: dict[str, float]
    head: bool = False
    node_id: str | None = None

    @property
    def full_name(self) -> str:
        return f"{self.name}/{self.node_id}"


@dataclass
class SimCluster:
    base_env: dict[str, str] = field(default_factory=dict)
    temp_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="dr", dir="/tmp"))
    port: int = field(default_factory=free_port)
    nodes: list[SimNode] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        (Path(self.temp_dir) / "home").mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "DOCTOR_"))}
        env.update({"RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1",
                    "RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3",
                    # the user's own Ray state stays out: a ~/.ray/auth_token that an earlier `ray.init()` wrote
                    # made the head require a token its workers do not send
                    "HOME": str(Path(self.temp_dir) / "home")})
        env.update(self.base_env)
        env.update(extra)
        return env

    def _start(self, node: SimNode) -> subprocess.Popen[bytes]:
        args = [
            RAY, "start", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
            # one temp dir per node: raylet socket names are picked by probing the session dir, which
            # races when several nodes of one host start at once
            "--object-store-memory", str(OBJECT_STORE), "--temp-dir", f"{self.temp_dir}/{node.name}",
            "--node-name", node.name, "--resources", json.dumps(node.resources),
            "--dashboard-agent-listen-port", str(free_port()), "--disable-usage-stats",
        ]
        if node.head:
            args += ["--head", "--port", str(self.port), "--include-dashboard", "false", "--no-monitor",
                     "--dashboard-port", str(free_port()), "--ray-client-server-port", str(free_port())]
        else:
            # Ray: "only one log monitor should be started per physical host" (the head's)
            args += ["--address", self.address, "--include-log-monitor", "false"]
        log = open(Path(self.temp_dir) / f"start-{node.name}.log", "wb")  # noqa: SIM115 - closed by the child's exit
        return subprocess.Popen(args, env=self._env(node.env), stdout=log, stderr=subprocess.STDOUT,
                                cwd=self.temp_dir)

    def start(self, specs: list[tuple[str, dict[str, str], dict[str, float]]], timeout: float = 120) -> None:
        """Start the head (first spec) and then the other nodes in parallel; wait until all registered."""
        if not specs:
            return
        head = SimNode(specs[0][0], specs[0][1], specs[0][2], head=True)
        self._wait_started([self._start(head)], timeout, [head])
        self.nodes.append(head)
        rest = [SimNode(n, e, r) for n, e, r in specs[1:]]
        procs = [self._start(n) for n in rest]
        self._wait_started(procs, timeout, rest)
        self.nodes.extend(rest)
        self._wait_registered(timeout)

    def add(self, name: str, env: dict[str, str], resources: dict[str, float], timeout: float = 120) -> SimNode:
        node = SimNode(name, env, resources)
        self._wait_started([self._start(node)], timeout, [node])
        self.nodes.append(node)
        self._wait_registered(timeout)
        return node

    def _wait_started(self, procs: list[subprocess.Popen[bytes]], timeout: float, nodes: list[SimNode]) -> None:
        for p, n in zip(procs, nodes, strict=True):
            try:
                rc = p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                raise RuntimeError(f"`ray start` for {n.name} did not return within {timeout} s") from None
            if rc != 0:
                log = (Path(self.temp_dir) / f"start-{n.name}.log").read_text(errors="replace")
                raise RuntimeError(f"`ray start` for {n.name} failed ({rc}):\n{log[-3000:]}")

    def _wait_registered(self, timeout: float) -> None:
        """Learn each node's Ray id from its raylet's command line (`--node-name=` / `--node_id=`).
        `ray start` only returns once its node is registered with the GCS, so no driver is needed."""
        deadline = time.monotonic() + timeout
        while True:
            ids: dict[str, str] = {}
            for p in self.processes():
                try:
                    cmd = p.cmdline()
                except psutil.NoSuchProcess:
                    continue
                if not cmd or not cmd[0].endswith("raylet"):
                    continue
                args = dict(a.split("=", 1) for a in cmd[1:] if a.startswith("--") and "=" in a)
                if "--node-name" in args and "--node_id" in args:
                    ids[args["--node-name"]] = args["--node_id"]
            if all(n.name in ids for n in self.nodes):
                for n in self.nodes:
                    n.node_id = ids[n.name]
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"no raylet found for {[n.name for n in self.nodes if n.name not in ids]}")
            time.sleep(0.2)

    # -- processes -----------------------------------------------------------------------------------

    def processes(self) -> list[psutil.Process]:
        """Every process of this cluster: those naming our temp dir, plus all their descendants."""
        roots = []
        for p in psutil.process_iter(["cmdline"]):
            try:
                cmd = p.info["cmdline"] or []
                # the temp dir names most of them; the client proxy only names the GCS address
                if any(self.temp_dir in a or a.endswith(f":{self.port}") for a in cmd):
                    roots.append(p)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        seen: dict[int, psutil.Process] = {}
        for r in roots:
            seen[r.pid] = r
            try:
                for c in r.children(recursive=True):
                    seen[c.pid] = c
            except psutil.NoSuchProcess:
                continue
        return list(seen.values())

    def raylet(self, node: SimNode) -> psutil.Process:
        """The raylet process of `node` (its --node_name argument names it)."""
        for p in self.processes():
            try:
                cmd = p.cmdline()
            except psutil.NoSuchProcess:
                continue
            if cmd and cmd[0].endswith("raylet") and f"--node-name={node.name}" in cmd:
                return p
        raise LookupError(f"no raylet for {node.name}")

    def kill_node(self, node: SimNode) -> None:
        """SIGKILL the node's raylet and everything under it (its workers and agents)."""
        r = self.raylet(node)
        victims = [r, *r.children(recursive=True)]
        for p in victims:
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass

    def remove(self, node: SimNode, timeout: float = 60) -> None:
        """Kill a node and wait until the GCS no longer counts it as alive."""
        self.kill_node(node)
        self.nodes.remove(node)
        code = (
            "import json,ray,sys\n"
            "ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False)\n"
            "print('@@' + json.dumps([n['NodeID'] for n in ray.nodes() if n['Alive']]))\n"
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = subprocess.run([sys.executable, "-c", code, self.address], capture_output=True, text=True,
                                 timeout=timeout, env=self._env({}))
            lines = [ln[2:] for ln in out.stdout.splitlines() if ln.startswith("@@")]
            if out.returncode == 0 and lines and node.node_id not in json.loads(lines[-1]):
                return
            time.sleep(0.5)
        raise RuntimeError(f"node {node.name} still alive {timeout} s after its raylet was killed")

    def stop(self) -> None:
        procs = self.processes()
        for p in procs:
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(procs, timeout=10)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> SimCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
