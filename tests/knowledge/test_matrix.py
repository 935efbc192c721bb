

def test_torch_npu_rows_are_found_as_versions_not_strings():
    """`2.1.0.rc1` normalises to `2.1.0rc1`: the lookup compares versions, so the table's rc rows are reachable."""
    from doctor.knowledge.matrix import TORCH_NPU, torch_npu_cann

    for row in TORCH_NPU:
        assert torch_npu_cann(row.version) == row.cann, row.version
    assert torch_npu_cann("2.1.0.rc1") is not None and torch_npu_cann("2.1.0rc1") == torch_npu_cann("2.1.0.rc1")
