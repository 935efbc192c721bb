import pytest

from tests.stacks import bare, found, healthy


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
