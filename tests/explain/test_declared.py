"""doctor.explain.declared: the names a caller's Requires-Dist declares, read with packaging's PEP 508 parser."""

from __future__ import annotations

from types import SimpleNamespace

from doctor.explain.declared import declared_by


def test_every_requirement_form_names_its_distribution_and_a_malformed_line_names_nothing():
    requires = [
        'Megatron_Core>=0.12.0; extra == "mcore"',  # an extra's requirement counts: it is how a backend is chosen
        "mbridge @ git+https://github.com/ISEEKYAN/mbridge@v0.15.1",  # a direct reference
        "tensordict[h5] (<=0.10.0,>=0.8.0)",  # the old parenthesised form
        "==1.0 not a requirement",
        "",
    ]
    snap = SimpleNamespace(packages={"somecaller-xyz": SimpleNamespace(requires_dist=requires)})
    assert declared_by("somecaller-xyz", snap) == {"megatron-core", "mbridge", "tensordict"}


def test_a_caller_nothing_is_known_of_declares_nothing():
    assert declared_by("nothing-known-of-this-xyz") == frozenset()
