"""doctor.knowledge.pipcheck: which Requires-Dist lines a target runs with."""

from __future__ import annotations


def test_an_extra_named_for_what_it_tests_is_a_development_extra():
    """datasets 2.21.0-5.2.0 declare `protobuf<4.0.0; extra == "tests_numpy2"` (PEP 685: tests-numpy2): taken as a
    runtime extra, every datasets release refused protobuf 5.x, and a snapshot naming datasets without its version
    beside protobuf 5.29.6 got "no release of datasets accepts protobuf 5.29.6"."""
    from doctor.knowledge.pipcheck import dev_only, runtime_extras

    for line in ('protobuf<4.0.0; extra == "tests-numpy2"', "protobuf (<4.0.0) ; extra == 'tests_numpy2'",
                 'torchao; extra == "test-fp8"'):
        assert dev_only(line) and runtime_extras(line) == (), line
    assert runtime_extras('torch>=2.0; extra == "torch"') == ("torch",)
    assert not dev_only('deepspeed; extra == "deepspeed"')
