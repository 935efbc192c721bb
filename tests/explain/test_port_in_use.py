"""A port already taken, in the form torch's libuv TCPStore prints it (libuv's error name, not the errno text).

torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp (pytorch/pytorch 01afc5c, UvTcpServer::makeWithPort) reports a
failed bind / listen as "port: N, useIpv6: B, code: C, name: <uv_err_name>, message: <uv_strerror>"; for a taken port
that is EADDRINUSE / "address already in use" (lower case), which the errno-text pattern does not match.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines


def test_the_libuv_store_message_is_a_taken_port():
    # as https://github.com/xdit-project/mochi-xdit/issues/22 quotes it
    fs = explain_lines(["RuntimeError: The server socket has failed to listen on any local network address. port: 29500, "
                        "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"])
    assert fs[0].id == "port-already-in-use", [f.id for f in fs]


def test_the_bind_form_too():
    # the message UvTcpServer::makeWithPort raises when uv_tcp_bind fails (same file)
    fs = explain_lines(["torch.distributed.DistStoreError: The server socket has failed to bind. port: 29500, useIpv6: "
                        "false, code: -98, name: EADDRINUSE, message: address already in use"])
    assert fs[0].id == "port-already-in-use", [f.id for f in fs]


def test_another_libuv_error_is_not_a_taken_port():
    fs = explain_lines(["RuntimeError: The server socket has failed to listen on any local network address. port: 29500, "
                        "useIpv6: 0, code: -13, name: EACCES, message: permission denied"])
    assert all(f.id != "port-already-in-use" for f in fs), [f.id for f in fs]
