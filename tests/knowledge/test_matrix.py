

def test_torch_npu_rows_are_found_as_versions_not_strings():
    """`2.1.0.rc1` normalises to `2.1.0rc1`: the lookup compares versions, so the table's rc rows are reachable."""
    from doctor.knowledge.matrix import TORCH_NPU, torch_npu_cann

    for row in TORCH_NPU:
        assert torch_npu_cann(row.version) == row.cann, row.version
    assert torch_npu_cann("2.1.0.rc1") is not None and torch_npu_cann("2.1.0rc1") == torch_npu_cann("2.1.0.rc1")


def test_cann_alternatives_are_bound_to_a_host_and_to_builds_the_row_accepts():
    """Every CannAlt names a chip family or arch the doctor knows (or none), builds the row itself accepts (so the
    release's torch-npu / triton-ascend pairing checks agree with it), a readable CANN, and an upstream source; a
    pre-release CANN only for a chip family (vLLM Ascend's 310P image), never for every host."""
    from doctor.knowledge.matrix import VLLM_ASCEND
    from doctor.knowledge.versions import CannVersion

    alts = [(r, a) for r in VLLM_ASCEND for a in r.cann_alts]
    assert len(alts) >= 10
    for r, a in alts:
        assert a.on in (None, "310P", "x86_64", "aarch64"), (r.version, a)
        assert a.needs in (None, "warning", "error") and (a.needs is None or a.on is not None), (r.version, a)
        assert a.source.startswith("https://") and a.says, (r.version, a)
        assert a.torch_npu is None or a.torch_npu in r.torch_npu_versions(), (r.version, a)
        assert a.triton_ascend is None or a.triton_ascend in (r.triton_ascend, *r.triton_ascend_also), (r.version, a)
        assert not CannVersion(a.cann).is_prerelease or a.on == "310P", (r.version, a)


def test_a_cann_alternative_applies_only_to_its_host_and_builds():
    from doctor.knowledge.matrix import vllm_ascend_row

    r = vllm_ascend_row("0.18.0")
    assert r is not None and "9.0.0" not in r.cann_versions()
    assert "9.0.0" in r.host_canns("A2", "aarch64", "2.9.0.post2", "3.2.1")
    assert "9.0.0" in r.host_canns("A2", "aarch64", "2.9.0.post2", None)  # triton-ascend not installed / not known
    assert "9.0.0" not in r.host_canns("A2", "aarch64", "2.9.0", "3.2.0")
    b = vllm_ascend_row("0.21.0rc1")
    assert b is not None and "9.1.0-beta.1" in b.host_canns("310P") and "9.1.0-beta.1" not in b.host_canns("A2")
    # torch-npu builds pair with the CANN they are named for: 2.9.0.post2 with 9.0.0, not with 0.18.0's 8.5.1
    pairs = r.torch_npu_canns("A2", "aarch64")
    assert ("2.9.0.post2", "9.0.0") in pairs and ("2.9.0.post2", "8.5.1") not in pairs
    assert ("2.9.0.post1+git4c901a4", "8.5.1") in pairs and ("2.9.0", "8.5.1") in pairs
