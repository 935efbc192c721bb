import pytest

from tests.stacks import bare, diagnose_dict, found, healthy


def test_hccl_timeout_multi_node():
    d = bare(env={}, ray={"nodes": [{"alive": True}, {"alive": True}]})
    assert "hccl-connect-timeout-short" not in found(d)  # partial: not listing it does not say it is unset
    d["complete"] = True
    assert found(d)["hccl-connect-timeout-short"] == "warning"
    d["env"]["HCCL_CONNECT_TIMEOUT"] = "1800"
    assert "hccl-connect-timeout-short" not in found(d)


def test_hccl_timeout_single_node_unset_is_fine():
    assert "hccl-connect-timeout-short" not in found(healthy())


def test_hccl_timeout_invalid():
    assert found(bare(env={"HCCL_CONNECT_TIMEOUT": "soon"}))["hccl-connect-timeout-invalid"] == "error"


def test_hccl_port_in_use_and_custom_base():
    assert "hccl-port-in-use" not in found(bare(env={}, network={"listening_ports": [60000]}))  # base unknown
    assert found(bare(env={}, network={"listening_ports": [60000]}, complete=True))["hccl-port-in-use"] == "warning"
    d = bare(env={"HCCL_IF_BASE_PORT": "61000"}, network={"listening_ports": [60000]})
    assert "hccl-port-in-use" not in found(d)


def test_hccl_host_socket_port_range_replaces_the_base_port_where_hccl_reads_it():
    """HCCL_HOST_SOCKET_PORT_RANGE overrides HCCL_IF_BASE_PORT (CANN 8.1.RC1+, A3 / 950, A2 training servers only; not
    310P or first-generation 910): judged there instead of 60000-60015; unknown whether it is read -> no finding."""
    def d(rng, ports, chip="Ascend910_9391", version="8.5.0"):
        return bare(env={"HCCL_HOST_SOCKET_PORT_RANGE": rng}, network={"listening_ports": ports}, complete=True,
                    ascend={"toolkit": {"version": version}, "devices": [{"id": 0, "chip_index": 0, "chip": chip}]})
    assert "hccl-port-in-use" not in found(d("auto", [60000]))  # the OS picks HCCL's host ports
    assert "hccl-port-in-use" not in found(d("61000-61015", [60000]))
    assert found(d("61000-61015, 61100", [61003]))["hccl-port-in-use"] == "warning"
    (f,) = [f for f in diagnose_dict(d("61000-61015", [61003])).findings if f.id == "hccl-port-in-use"]
    assert "HCCL_HOST_SOCKET_PORT_RANGE=61000-61015" in f.title and "envref_07_0143" in f.source
    # not read: the base port range is judged as before
    assert found(d("61000-61015", [60001], chip="310P3"))["hccl-port-in-use"] == "warning"
    assert "hccl-port-in-use" not in found(d("61000-61015", [61003], chip="310P3"))
    assert found(d("auto", [60001], version="8.0.0"))["hccl-port-in-use"] == "warning"
    # A2 (the server model decides) or an unknown CANN: which range HCCL takes is unknown, so neither is judged
    assert "hccl-port-in-use" not in found(d("auto", [60000], chip="910B3"))
    assert "hccl-port-in-use" not in found(d("61000-61015", [61003], chip="910B3"))
    no_cann = d("61000-61015", [61003])
    del no_cann["ascend"]["toolkit"]
    assert "hccl-port-in-use" not in found(no_cann)


def test_ray_head_port_is_not_a_collision():
    d = bare(env={}, network={"listening_ports": [60001]}, ray={"address": "10.0.0.1:60001", "nodes": []})
    assert "hccl-port-in-use" not in found(d)


@pytest.mark.parametrize("var,value,fid,sev", [
    ("GLOO_SOCKET_IFNAME", "^lo,docker,veth,eni", "socket-ifname-syntax", "error"),
    ("GLOO_SOCKET_IFNAME", "eth9", "socket-ifname-missing", "error"),
    ("TP_SOCKET_IFNAME", "eth0,eth1", "socket-ifname-not-single", "error"),
    ("GLOO_SOCKET_IFNAME", "enp189s0f0,lo", "socket-ifname-not-single", "warning"),
    ("HCCL_SOCKET_IFNAME", "=eth9", "socket-ifname-missing", "error"),
])
def test_socket_ifname(var, value, fid, sev):
    d = healthy()
    d["env"][var] = value
    assert found(d)[fid] == sev


def test_hccl_prefix_match_and_exclusion_are_valid():
    d = healthy()
    d["env"]["HCCL_SOCKET_IFNAME"] = "enp"
    assert "socket-ifname-missing" not in found(d)
    d["env"]["HCCL_SOCKET_IFNAME"] = "^=docker0"
    assert not any(k.startswith("socket-ifname") for k in found(d))


def test_small_shm():
    d = healthy()
    d["host"]["shm_gb"] = 0.0625
    assert found(d)["shm-too-small"] == "warning"


def test_an_address_in_a_socket_ifname_variable_is_an_error_naming_the_interface_that_carries_it():
    """*_SOCKET_IFNAME take interface names: an IP there (Primus PR 1063, a `hostname -I` fallback) makes every rank
    die in Gloo with `Unable to find address for: <ip>`. Judged without the interface list; with it, the fix names
    the interface that carries the address (and HCCL_IF_IP for HCCL)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    assert found(bare(env={"GLOO_SOCKET_IFNAME": "10.0.0.5"}))["socket-ifname-is-address"] == "error"
    d = bare(env={"HCCL_SOCKET_IFNAME": "10.0.0.5", "TP_SOCKET_IFNAME": "fe80::1"},
             network={"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                                     {"name": "enp189s0f0", "addresses": ["10.0.0.5"], "up": True}]})
    fs = {f.evidence and next(iter(f.evidence)): f for f in diagnose([(None, snapshot_from_dict(d), None)]).findings
          if f.id == "socket-ifname-is-address"}
    assert fs["HCCL_SOCKET_IFNAME"].fix.text == "export HCCL_SOCKET_IFNAME=enp189s0f0; the address itself goes in HCCL_IF_IP=10.0.0.5"
    assert "TP_SOCKET_IFNAME" in fs and fs["TP_SOCKET_IFNAME"].components[:2] == ("network", "env")
    ids = found(d)
    assert "socket-ifname-missing" not in ids  # one finding per variable
    for name in ("eth0", "bond0.2093", "enp"):  # names, also a VLAN name with a dot
        assert "socket-ifname-is-address" not in found(bare(env={"GLOO_SOCKET_IFNAME": name}))


def test_vllm_host_ip_that_is_not_the_address_ray_knows_the_node_by_is_an_error():
    """vLLM's distributed troubleshooting: on a node with several addresses vLLM and Ray must use the same one
    (VLLM_HOST_IP and `ray start --node-ip-address`); vLLM PR 15071: the Ray head picked eth1 while VLLM_HOST_IP named
    eth0's address."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    nics = {"interfaces": [{"name": "eth0", "addresses": ["10.0.1.12"], "up": True},
                           {"name": "eth1", "addresses": ["192.168.1.12"], "up": True}]}
    two = {"address": "192.168.1.12:6379", "nodes": [{"address": "192.168.1.12", "alive": True},
                                                     {"address": "192.168.1.13", "alive": True}]}
    d = bare(env={"VLLM_HOST_IP": "10.0.1.12"}, network=nics, ray=two)
    (f,) = [f for f in diagnose([(None, snapshot_from_dict(d), None)]).findings if f.id == "vllm-host-ip-not-ray-node-ip"]
    assert f.severity.value == "error" and f.components[:2] == ("network", "ray")
    assert f.title == "Ray knows this node as 192.168.1.12, but VLLM_HOST_IP=10.0.1.12"
    assert "--node-ip-address=10.0.1.12" in f.fix.text
    # the same address, a worker node whose own address matches, an unknown Ray view, VLLM_HOST_IP unset: silent
    assert "vllm-host-ip-not-ray-node-ip" not in found(bare(env={"VLLM_HOST_IP": "192.168.1.12"}, network=nics, ray=two))
    worker = {"interfaces": [{"name": "eth0", "addresses": ["192.168.1.13"], "up": True}]}
    assert "vllm-host-ip-not-ray-node-ip" not in found(bare(env={"VLLM_HOST_IP": "192.168.1.13"}, network=worker, ray=two))
    assert "vllm-host-ip-not-ray-node-ip" not in found(bare(env={"VLLM_HOST_IP": "10.0.1.12"}, network=nics))
    assert "vllm-host-ip-not-ray-node-ip" not in found(bare(env={}, network=nics, ray=two))
    # interfaces unknown: a one-node cluster's node is this host
    one = {"nodes": [{"address": "192.168.1.12", "alive": True}]}
    assert found(bare(env={"VLLM_HOST_IP": "10.0.1.12"}, ray=one))["vllm-host-ip-not-ray-node-ip"] == "error"
    assert "vllm-host-ip-not-ray-node-ip" not in found(bare(env={"VLLM_HOST_IP": "10.0.1.12"}, ray=two))


def test_hccl_if_ip_must_be_one_address_of_this_host():
    """CANN's HCCL_IF_IP: one IPv4/IPv6 address of the host NIC (an interface name goes in HCCL_SOCKET_IFNAME)."""
    nics = {"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                           {"name": "enp189s0f0", "addresses": ["10.0.0.5"], "up": True}]}
    assert found(bare(env={"HCCL_IF_IP": "enp189s0f0"}))["hccl-if-ip-invalid"] == "error"
    assert found(bare(env={"HCCL_IF_IP": "10.0.0.5,10.0.0.6"}))["hccl-if-ip-invalid"] == "error"
    assert found(bare(env={"HCCL_IF_IP": "10.0.0.9"}, network=nics))["hccl-if-ip-not-on-host"] == "error"
    for d in (bare(env={"HCCL_IF_IP": "10.0.0.5"}, network=nics), bare(env={"HCCL_IF_IP": "10.0.0.9"})):
        assert not {"hccl-if-ip-invalid", "hccl-if-ip-not-on-host"} & set(found(d))  # its own address; NICs unknown


def test_a_multi_node_job_on_several_nics_that_names_none_is_a_warning():
    """Without HCCL_IF_IP / HCCL_SOCKET_IFNAME HCCL takes the first non-docker, non-lo NIC by name (CANN's
    HCCL_IF_IP page), Gloo the hostname's address: a multi-node job on a host with several NICs must name one."""
    two = {"nodes": [{"address": "10.0.0.5", "alive": True}, {"address": "10.0.0.6", "alive": True}]}
    nics = {"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                           {"name": "docker0", "addresses": ["172.17.0.1"], "up": True},
                           {"name": "eth0", "addresses": ["192.168.1.5"], "up": True},
                           {"name": "enp189s0f0", "addresses": ["10.0.0.5"], "up": True}]}
    d = bare(env={}, complete=True, network=nics, ray=two)
    assert found(d)["host-nic-not-chosen"] == "warning"
    assert "host-nic-not-chosen" not in found(bare(env={}, network=nics, ray=two))  # partial env: unset is unknown
    for named in ({"HCCL_IF_IP": "10.0.0.5"}, {"GLOO_SOCKET_IFNAME": "enp189s0f0"}):
        assert "host-nic-not-chosen" not in found(bare(env=named, complete=True, network=nics, ray=two))
    one_nic = {"interfaces": nics["interfaces"][:3]}  # lo, docker0, eth0
    assert "host-nic-not-chosen" not in found(bare(env={}, complete=True, network=one_nic, ray=two))
    assert "host-nic-not-chosen" not in found(bare(env={}, complete=True, network=nics))  # not known to be multi-node


def test_hccl_exec_timeout_is_seconds_and_aiv_expansion_caps_it():
    """CANN's HCCL_EXEC_TIMEOUT: seconds (A2/A3: 0-2147483647, default 1836); with HCCL_OP_EXPANSION_MODE=AIV its
    range is 0-1091 and 0 or a larger value is applied as 1091 s."""
    assert found(bare(env={"HCCL_EXEC_TIMEOUT": "30min"}))["hccl-exec-timeout-invalid"] == "error"
    # HCCL's own format: digits with at most two decimals, up to 2147483647 (float() would take the first three)
    for bad in ("1e3", "+60", "1836.125", "99999999999"):
        assert found(bare(env={"HCCL_EXEC_TIMEOUT": bad}))["hccl-exec-timeout-invalid"] == "error", bad
    assert "hccl-exec-timeout-invalid" not in found(bare(env={"HCCL_EXEC_TIMEOUT": "1836.5"}))
    assert found(bare(env={"HCCL_EXEC_TIMEOUT": "1800", "HCCL_OP_EXPANSION_MODE": "AIV"}))["hccl-exec-timeout-capped"] == "warning"
    assert found(bare(env={"HCCL_EXEC_TIMEOUT": "0", "HCCL_OP_EXPANSION_MODE": "aiv"}))["hccl-exec-timeout-capped"] == "warning"
    for env in ({"HCCL_EXEC_TIMEOUT": "1800"}, {"HCCL_EXEC_TIMEOUT": "900", "HCCL_OP_EXPANSION_MODE": "AIV"},
                {"HCCL_EXEC_TIMEOUT": "0"}, {"HCCL_OP_EXPANSION_MODE": "AIV"}):
        assert not {"hccl-exec-timeout-invalid", "hccl-exec-timeout-capped"} & set(found(bare(env=env))), env


def test_vllm_host_ip_that_is_not_an_address_of_this_host_is_an_error():
    """vLLM's run_cluster.sh: each node its own VLLM_HOST_IP, reachable at that address (the head's address exported
    on every node is the classic slip). Judged only when the host's interfaces are known."""
    nics = {"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                           {"name": "eth0", "addresses": ["10.0.1.13"], "up": True}]}
    assert found(bare(env={"VLLM_HOST_IP": "10.0.1.12"}, network=nics))["vllm-host-ip-not-on-host"] == "error"
    assert "vllm-host-ip-not-on-host" not in found(bare(env={"VLLM_HOST_IP": "10.0.1.13"}, network=nics))
    assert "vllm-host-ip-not-on-host" not in found(bare(env={"VLLM_HOST_IP": "10.0.1.12"}))


# -- Ray's head port and the cluster file ray.init() joins -------------------------------------------------------

HERE = {"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                       {"name": "enp189s0f0", "addresses": ["10.1.2.3"], "up": True}]}
NO_CLUSTER = {"current_cluster": None, "current_cluster_file": "/tmp/ray/ray_current_cluster"}


def _ray_findings(d):
    from tests.stacks import diagnose_dict

    return {f.id: f for f in diagnose_dict(d).findings if f.id.startswith("ray-")}


def test_a_held_6379_with_no_ray_cluster_recorded_fails_ray_start_head():
    d = bare(complete=True, env={}, network={**HERE, "listening_ports": [22, 6379, 6380]}, ray=dict(NO_CLUSTER))
    f = _ray_findings(d)["ray-head-port-in-use"]
    assert f.severity.value == "warning" and f.components[:2] == ("ray", "network") and "6379" in f.title
    assert "ray start --head --port=6381" in f.fix.text and "ss -ltnp" in f.fix.text
    assert f.source.startswith("https://github.com/ray-project/ray/blob/ray-2.46.0/")


def test_6379_held_by_this_hosts_own_head_or_unknown_is_no_finding():
    own = bare(complete=True, env={}, network={**HERE, "listening_ports": [6379, 8265]},
               ray={"current_cluster": "10.1.2.3:6379"})
    assert not _ray_findings(own)  # the head `ray start` recorded here is alive
    nothing_said = bare(complete=True, env={}, network={**HERE, "listening_ports": [6379]})
    assert "ray-head-port-in-use" not in found(nothing_said)  # no ray facts: maybe the user's own head
    assert "ray-head-port-in-use" not in found(healthy())  # the documented stacks list 6379 with no ray facts
    no_ray = bare(complete=True, packages={"numpy": {"version": "1.26.4"}}, network={"listening_ports": [6379]},
                  ray=dict(NO_CLUSTER))
    assert "ray-head-port-in-use" not in found(no_ray)


def test_a_cluster_file_naming_a_dead_head_here_makes_ray_init_fail():
    d = bare(complete=True, env={}, network={**HERE, "listening_ports": [22]},
             ray={"current_cluster": "10.1.2.3:6379", "current_cluster_file": "/scratch/ray/ray_current_cluster"})
    f = _ray_findings(d)["ray-stale-cluster-file"]
    assert f.severity.value == "error" and "10.1.2.3:6379" in f.title and "/scratch/ray/ray_current_cluster" in f.title
    assert "rm /scratch/ray/ray_current_cluster" in f.fix.text and "ray stop" in f.fix.text
    assert "ray-head-port-in-use" not in _ray_findings(d)  # 6379 is free
    d["env"]["RAY_ADDRESS"] = "local"  # ray.init() then never reads the file
    assert "ray-stale-cluster-file" not in _ray_findings(d)
    loop = bare(complete=True, env={}, network={"listening_ports": []}, ray={"current_cluster": "127.0.0.1:6379"})
    assert "ray-stale-cluster-file" in _ray_findings(loop)  # loopback is this host, interfaces or not
    unknown_env = bare(network={**HERE, "listening_ports": []}, ray={"current_cluster": "10.1.2.3:6379"})
    assert "ray-stale-cluster-file" not in _ray_findings(unknown_env)  # RAY_ADDRESS unknown: skipped


def test_a_cluster_file_naming_another_host_is_reported_as_a_fact():
    d = bare(complete=True, env={}, network={**HERE, "listening_ports": [6379]},
             ray={"current_cluster": "10.9.9.9:6379"})
    got = _ray_findings(d)
    assert got["ray-cluster-file-remote"].severity.value == "info" and "10.9.9.9:6379" in got["ray-cluster-file-remote"].title
    assert "ray-head-port-in-use" not in got  # a worker node starts no head
    no_ifaces = bare(complete=True, env={}, network={"listening_ports": []}, ray={"current_cluster": "10.9.9.9:6379"})
    assert not _ray_findings(no_ifaces)  # which host it is cannot be told


@pytest.mark.parametrize("value,listening,expected", [
    ("127.0.0.1:6380", [22], True),
    ("10.1.2.3:6379", [22], True),
    ("ray://localhost:10001", [6379], True),
    ("10.1.2.3:6379", [6379], False),
    ("10.9.9.9:6379", [], False),  # another host's head
    ("auto", [], False),
    ("http://127.0.0.1:8265", [], False),  # the job API's address, not a cluster address
])
def test_ray_address_on_this_host_must_be_listening(value, listening, expected):
    d = bare(complete=True, env={"RAY_ADDRESS": value}, network={**HERE, "listening_ports": listening},
             ray=dict(NO_CLUSTER))
    f = _ray_findings(d).get("ray-address-not-listening")
    assert (f is not None) is expected
    if f is not None:
        assert f.severity.value == "error" and value in f.title and "unset RAY_ADDRESS" in f.fix.text


def test_hccl_and_ray_agree_on_which_ports_this_hosts_ray_holds():
    """One reading of 'ports this host's own Ray uses': HCCL's range over Ray's head port is a collision only when
    it is not this host's own head, and then it is also the port `ray start --head` cannot have."""
    base = {"HCCL_IF_BASE_PORT": "6370"}
    other = bare(complete=True, env=dict(base), network={**HERE, "listening_ports": [6379]}, ray=dict(NO_CLUSTER))
    assert {"hccl-port-in-use", "ray-head-port-in-use"} <= set(found(other))
    mine = bare(complete=True, env=dict(base), network={**HERE, "listening_ports": [6379]},
                ray={"current_cluster": "10.1.2.3:6379"})
    assert not {"hccl-port-in-use", "ray-head-port-in-use"} & set(found(mine))


def test_a_live_cluster_another_user_recorded_is_a_warning():
    """Ray's temp dir is world-writable: on a shared node another user's `ray start` is what ray.init() joins."""
    d = bare(complete=True, env={}, network={**HERE, "listening_ports": [6379]},
             ray={"current_cluster": "10.1.2.3:6379", "current_cluster_uid": 1001, "current_cluster_mine": False})
    f = _ray_findings(d)["ray-cluster-file-other-user"]
    assert f.severity.value == "warning" and "uid 1001" in f.title and "RAY_ADDRESS" in f.fix.text
    d["ray"]["current_cluster_mine"] = True
    assert not _ray_findings(d)
    d["ray"].update(current_cluster_mine=False)
    d["network"]["listening_ports"] = []  # theirs and dead: the stale file is the error
    got = _ray_findings(d)
    assert set(got) == {"ray-stale-cluster-file"} and got["ray-stale-cluster-file"].evidence["owner_uid"] == 1001


def test_hccl_timeout_out_of_range_is_an_error_from_cann_9_1():
    """hcomm refuses a value outside 120-7200 (or not all digits) from CANN 9.1.0: communicator init fails (EI0001);
    before it only the documented range is known, a warning."""
    old = bare(env={"HCCL_CONNECT_TIMEOUT": "60"}, ascend={"toolkit": {"version": "8.5.0"}})
    assert found(old)["hccl-connect-timeout-invalid"] == "warning"
    new = bare(env={"HCCL_CONNECT_TIMEOUT": "60"}, ascend={"toolkit": {"version": "9.1.0"}})
    assert found(new)["hccl-connect-timeout-invalid"] == "error"
    signed = bare(env={"HCCL_CONNECT_TIMEOUT": "+600"}, ascend={"toolkit": {"version": "9.2.0-beta.1"}})
    assert found(signed)["hccl-connect-timeout-invalid"] == "error"
    assert "hccl-connect-timeout-invalid" not in found(
        bare(env={"HCCL_CONNECT_TIMEOUT": "+600"}, ascend={"toolkit": {"version": "8.5.0"}}))
    assert "hccl-connect-timeout-invalid" not in found(
        bare(env={"HCCL_CONNECT_TIMEOUT": "1500"}, ascend={"toolkit": {"version": "9.1.0"}}))


def test_hccl_takes_32_host_ports_from_cann_9_1():
    """HCCL's documentation from CANN 9.1.0: 32 ports from the base (60000-60031 by default); before it 16."""
    def d(version):
        return bare(env={}, network={"listening_ports": [60020]}, complete=True, ascend={"toolkit": {"version": version}})
    assert "hccl-port-in-use" not in found(d("8.5.0"))
    assert found(d("9.1.0"))["hccl-port-in-use"] == "warning"
    (f,) = [f for f in diagnose_dict(d("9.1.0")).findings if f.id == "hccl-port-in-use"]
    assert "HCCL_IF_BASE_PORT.md" in f.source and f.title.startswith("HCCL's host port range 60000-60031 ")


def test_hccl_event_timeout_must_be_above_the_exec_timeout():
    """torch_npu's HCCL_EVENT_TIMEOUT page: when set it must be greater than HCCL_EXEC_TIMEOUT (default 1836 s); a
    positive value becomes the NPU's wait on each collective's event as it is."""
    def fid(env, **kw):
        return found(bare(env=env, **kw)).get("hccl-event-timeout-not-above-exec")

    # the page's own example, 1800, under the default 1836 s: known only when the snapshot says HCCL_EXEC_TIMEOUT is unset
    assert fid({"HCCL_EVENT_TIMEOUT": "1800"}) is None
    assert fid({"HCCL_EVENT_TIMEOUT": "1800"}, complete=True) == "warning"
    assert fid({"HCCL_EVENT_TIMEOUT": "3600", "HCCL_EXEC_TIMEOUT": "7200"}) == "warning"
    assert fid({"HCCL_EVENT_TIMEOUT": "600", "HCCL_EXEC_TIMEOUT": "0"}) == "warning"  # HCCL never times out, the wait does
    for fine in ({"HCCL_EVENT_TIMEOUT": "1900"}, {"HCCL_EVENT_TIMEOUT": "7300", "HCCL_EXEC_TIMEOUT": "7200"},
                 {"HCCL_EVENT_TIMEOUT": "0", "HCCL_EXEC_TIMEOUT": "7200"},  # 0: never
                 {"HCCL_EVENT_TIMEOUT": "-1", "HCCL_EXEC_TIMEOUT": "7200"}):  # negative: torch_npu's default
        assert fid(fine, complete=True) is None, fine
    bad = {"HCCL_EVENT_TIMEOUT": "600", "HCCL_EXEC_TIMEOUT": "1800"}
    assert fid(bad, packages={"torch-npu": {"version": "2.5.1"}}) == "warning"
    # torch-npu releases before Ascend/pytorch v6.0.rc2 do not read the variable; none installed reads nothing
    assert fid(bad, packages={"torch-npu": {"version": "2.1.0.post4"}}) is None
    assert fid(bad, packages={"torch-npu": {"version": "2.2.0"}}) is None
    assert fid(bad, packages={"torch": {"version": "2.5.1"}}, complete=True) is None


def test_a_hostname_on_loopback_breaks_gloo_across_nodes_without_gloo_socket_ifname():
    """torch's Gloo group binds the hostname's address when GLOO_SOCKET_IFNAME is unset and hands it to the peers:
    Debian / Ubuntu's `127.0.1.1 <host>` in /etc/hosts makes the other nodes dial their own loopback."""
    two = {"nodes": [{"address": "10.0.0.5", "alive": True}, {"address": "10.0.0.6", "alive": True}]}
    nics = {"interfaces": [{"name": "lo", "addresses": ["127.0.0.1"], "up": True},
                           {"name": "enp189s0f0", "addresses": ["10.0.0.5"], "up": True}]}

    def gloo(host, env=None, **kw):
        d = bare(host={"hostname": "node-0", **host}, env={} if env is None else env, network=nics, complete=True, **kw)
        return diagnose_dict(d).findings

    loop = {"hostname_addresses": ["127.0.1.1"]}
    [f] = [f for f in gloo(loop, ray=two) if f.id == "gloo-hostname-loopback"]
    assert f.severity.value == "error" and "GLOO_SOCKET_IFNAME=enp189s0f0" in f.fix.text
    # a worker that joins a head on another host is on a multi-node job too
    worker = gloo(loop, ray={"current_cluster": "10.0.0.6:6379"})
    assert "gloo-hostname-loopback" in {f.id for f in worker}
    for quiet in (gloo(loop),  # not known to be multi-node
                  gloo(loop, env={"GLOO_SOCKET_IFNAME": "enp189s0f0"}, ray=two),
                  gloo({"hostname_addresses": ["10.0.0.5"]}, ray=two),
                  gloo({"hostname_addresses": ["10.0.0.5", "127.0.1.1"]}, ray=two),  # order decided by getaddrinfo
                  gloo({"hostname_addresses": []}, ray=two),  # /etc/hosts names it nowhere: DNS decides
                  gloo({}, ray=two)):  # not collected
        assert "gloo-hostname-loopback" not in {f.id for f in quiet}
    partial = bare(host={"hostname": "node-0", **loop}, env={}, ray=two)  # GLOO_SOCKET_IFNAME unset is not known
    assert "gloo-hostname-loopback" not in found(partial)


def test_a_one_node_ray_cluster_is_not_a_multi_node_job():
    """`check --ray` on a Ray cluster of one node (real: Ray 2.60.0 here, a host whose /etc/hosts maps its name to
    127.0.0.1) said "GLOO_SOCKET_IFNAME is unset, on a multi-node job" as an error; two nodes (one unreachable counts)
    are one."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    one = {"nodes": [{"address": "10.0.0.5", "alive": True}]}
    node = bare(host={"hostname": "vm", "hostname_addresses": ["127.0.0.1"]}, env={}, ray=one, complete=True,
                network={"interfaces": [{"name": "eth0", "addresses": ["10.0.0.5"], "up": True}]})

    def ids(*names):
        nodes = [(n, snapshot_from_dict(node) if n != "down" else None, None) for n in names]
        return {f.id for f in diagnose(nodes, cluster=True).findings}

    assert "gloo-hostname-loopback" not in ids("10.0.0.5")
    assert "gloo-hostname-loopback" in ids("10.0.0.5", "down")


def test_ray_nodes_known_by_loopback_or_one_shared_address_send_the_other_nodes_to_themselves():
    """Ray's node IP is where every other node dials a node, and verl's worker group hands the rank-0 node's IP to every
    rank as MASTER_ADDR: in a cluster of two or more live nodes it must be each node's own, non-loopback address."""
    def ray(*addresses, alive=True):
        return bare(ray={"nodes": [{"node_name": f"n{i}", "address": a, "alive": alive} for i, a in enumerate(addresses)]})

    loop = diagnose_dict(ray("10.0.0.5", "127.0.1.1")).findings
    [f] = [f for f in loop if f.id == "ray-node-address-loopback"]
    assert f.severity.value == "error" and f.evidence["nodes"] == ["n1"] and "--node-ip-address" in f.fix.text
    assert found(ray("172.17.0.2", "172.17.0.2", "10.0.0.7"))["ray-node-address-duplicate"] == "error"
    same_name = bare(ray={"nodes": [{"node_name": "w", "address": "172.17.0.2"}, {"node_name": "w", "address": "172.17.0.2"}]})
    assert found(same_name)["ray-node-address-duplicate"] == "error"
    for quiet in (ray("127.0.0.1"),  # one node: loopback is all it needs
                  ray("10.0.0.5", "10.0.0.6"), ray("127.0.0.1", "127.0.0.1", alive=False), bare(ray={})):
        assert not {"ray-node-address-loopback", "ray-node-address-duplicate"} & set(found(quiet))


@pytest.mark.parametrize("env, expected", [
    ({"MASTER_ADDR": "127.0.0.1", "NNODES": "2", "NODE_RANK": "0"}, "error"),
    ({"MASTER_ADDR": "localhost", "NODE_RANK": "1"}, "error"),  # a worker node dials itself
    ({"PET_MASTER_ADDR": "[::1]", "PET_NNODES": "1:4"}, "error"),  # torchrun's own env twins, min:max nodes
    ({"MASTER_ADDR": "127.0.0.1", "NNODES": "1"}, None),  # single node: what torchrun's help offers
    ({"MASTER_ADDR": "127.0.0.1"}, None),  # nothing says the job spans nodes
    ({"MASTER_ADDR": "10.0.0.1", "NNODES": "2", "NODE_RANK": "1"}, None),
])
def test_a_loopback_master_addr_on_a_multi_node_torchrun_job_is_an_error(env, expected):
    got = found(bare(env=env)).get("master-addr-loopback")
    assert got == expected


def test_a_loopback_master_addr_on_a_cluster_snapshot_is_an_error_unless_the_job_may_be_verls():
    """Several Ray nodes make a loopback MASTER_ADDR an error for a job that is not verl's; verl's RayWorkerGroup
    gives each worker the rank-0 node's address, so with verl installed (or not known absent) it is no finding."""
    nodes = {"nodes": [{"alive": True}, {"alive": True}]}
    d = bare(complete=True, env={"MASTER_ADDR": "127.0.0.1"}, ray=nodes, packages={"torch": {"version": "2.8.0"}})
    f = next(f for f in diagnose_dict(d).findings if f.id == "master-addr-loopback")
    assert "several nodes" in f.title and f.components == ("env", "network")
    assert "127.0.0.1" in f.detail and "not 127.0.0.1" in f.fix.text
    for quiet in (bare(env={"MASTER_ADDR": "127.0.0.1"}, ray=nodes),
                  {**d, "packages": {"torch": {"version": "2.8.0"}, "verl": {"version": "0.9.1"}}}):
        assert "master-addr-loopback" not in found(quiet)
    # what the node's own environment says still counts with verl installed
    assert found({**d, "env": {"MASTER_ADDR": "127.0.0.1", "NODE_RANK": "1"},
                  "packages": {"verl": {"version": "0.9.1"}}})["master-addr-loopback"] == "error"
