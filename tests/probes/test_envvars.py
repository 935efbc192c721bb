"""Env collection: relevant prefixes and names, near-miss typos, secret redaction (snapshot.md rule 3)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from doctor.probes.envvars import collect_env, edit_distance, near_miss


def test_relevant_collected_irrelevant_not() -> None:
    env = {"ASCEND_RT_VISIBLE_DEVICES": "0,1", "HCCL_CONNECT_TIMEOUT": "1200", "PATH": "/usr/bin", "MASTER_PORT": "29500",
           "HOME": "/root", "TERM": "xterm", "LANG": "C.UTF-8", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "HF_HOME": "/hf"}
    got = collect_env(env)
    assert set(got) == {"ASCEND_RT_VISIBLE_DEVICES", "HCCL_CONNECT_TIMEOUT", "PATH", "MASTER_PORT",
                        "TORCH_DEVICE_BACKEND_AUTOLOAD", "HF_HOME"}
    assert list(got) == sorted(got)


def test_names_whose_values_check_judges_are_collected() -> None:
    # torch_npu and vllm-ascend read these without a prefix; `check` judges their values (profiles/env-values.toml)
    from doctor.knowledge.env_values import load

    env = {"INF_NAN_MODE_ENABLE": "true", "COMBINED_ENABLE": "1", "USE_OPTIMIZED_MODEL": "0", "STREAMS_PER_DEVICE": "8"}
    assert set(collect_env(env)) == set(env)
    unprefixed = {n for n in load().names() if not n.startswith(("ASCEND_", "HCCL_", "VLLM_", "PYTORCH_NPU_"))}
    assert not {n for n in unprefixed if not collect_env({n: "1"}) and n not in ("VERBOSE", "SELECT_GATING_TOPK_SOTFMAX_EXPERTS")}


def test_near_misses_are_collected() -> None:
    env = {"ASCEBD_RT_VISIBLE_DEVICES": "0", "ascend_rt_visible_devices": "1", "MASTER_ADRR": "x", "HCLL_IF_IP": "1.2.3.4",
           "PYTORCH_NUP_ALLOC_CONF": "expandable_segments:True", "NCCL_SOCKET_IFNAME": "eth0", "XDG_DATA_DIRS": "/x",
           "LC_ALL": "C", "GOPATH": "/go"}
    got = collect_env(env)
    assert set(got) == {"ASCEBD_RT_VISIBLE_DEVICES", "ascend_rt_visible_devices", "MASTER_ADRR", "HCLL_IF_IP",
                        "PYTORCH_NUP_ALLOC_CONF", "NCCL_SOCKET_IFNAME"}
    assert near_miss("ASCEBD_RT_VISIBLE_DEVICES") == "ASCEND_"
    assert near_miss("MASTER_ADRR") == "MASTER_ADDR"
    assert near_miss("ASCEND_RT_VISIBLE_DEVICES") is None


def test_secrets_are_redacted() -> None:
    env = {"HF_TOKEN": "hf_abc", "VLLM_API_KEY": "k", "RAY_AUTH_MODE": "token", "HF_ENDPOINT": "https://u:p4ss@mirror/x",
           "TORCH_HOME": "/t", "PIP_PASSWORD": "nope"}
    got = collect_env(env)
    assert got["HF_TOKEN"] == got["VLLM_API_KEY"] == got["RAY_AUTH_MODE"] == "<redacted>"
    assert got["HF_ENDPOINT"] == "https://<redacted>@mirror/x"
    assert got["TORCH_HOME"] == "/t"
    assert "PIP_PASSWORD" not in got


def test_edit_distance() -> None:
    assert edit_distance("ASCEND", "ASCEBD") == 1
    assert edit_distance("GLOO", "GOLO") == 1  # transposition
    assert edit_distance("abc", "abc") == 0
    assert edit_distance("a", "abcdef") == 3  # capped at limit + 1


@given(st.text(max_size=12), st.text(max_size=12))
def test_edit_distance_properties(a: str, b: str) -> None:
    d = edit_distance(a, b, limit=30)
    assert d == edit_distance(b, a, limit=30)
    assert (d == 0) == (a == b)
    assert d <= max(len(a), len(b))


def _osa(a: str, b: str) -> int:
    """Textbook optimal-string-alignment distance, no shortcuts: the reference for the pruned version."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@given(st.text(alphabet="ACDEGHLNOSTU_", max_size=14), st.text(alphabet="ACDEGHLNOSTU_", max_size=14),
       st.integers(min_value=0, max_value=3))
def test_edit_distance_is_the_capped_osa_distance(a: str, b: str, limit: int) -> None:
    """The early exits (length gap, distinct-letter gap, row minimum) never change a result within the cap."""
    got, true = edit_distance(a, b, limit), _osa(a, b)
    assert got == true if true <= limit else got > limit


@given(st.dictionaries(st.text(min_size=1, max_size=30), st.text(max_size=50), max_size=20))
def test_collect_env_never_raises(env: dict[str, str]) -> None:
    got = collect_env(env)
    assert set(got) <= set(env)
