"""The Ray driver's own bookkeeping, without a cluster (it imports ray only when it runs)."""

from __future__ import annotations

import importlib.util

from doctor.cluster.collect_ray import DRIVER


def _driver():  # a script run by the target interpreter, not a module of the package
    spec = importlib.util.spec_from_file_location("doctor_ray_driver", DRIVER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_timed_out_node_says_how_long_the_driver_waited_with_deep():
    """`check --ray --ray-timeout 30 --deep` waits 30 + 120 s (--deep-timeout's default) for the nodes; a node
    past it read 'no answer within 30 s', and the user would raise --ray-timeout blind to the 120 s."""
    drv = _driver()
    base = ["--out", "o.json", "--address", "auto", "--timeout", "30", "--package", ".", "--entry", "m:f"]
    node = {"NodeID": "n1", "NodeName": "10.0.0.2"}
    args = drv._parse_args([*base, "--deep-timeout", "120"])
    assert drv._wait(args)[0] == 150
    entry, _ = drv._node_result(None, None, node, None, None, drv._wait(args)[1])
    assert entry["error"] == ("timeout: no answer within 150 s (--ray-timeout 30 + --deep-timeout 120) "
                              "(task force-cancelled)")
    args = drv._parse_args(base)
    entry, _ = drv._node_result(None, None, node, None, None, drv._wait(args)[1])
    assert entry["error"] == "timeout: no answer within 30 s (task force-cancelled)"
