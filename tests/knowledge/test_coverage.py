"""doctor.knowledge.coverage: what three tables cover, read without validating them, so a check can skip a host that
gives it nothing to judge before importing and validating the table (the loaders still refuse a malformed file)."""

from __future__ import annotations

from doctor.checks.packages import import_surface
from doctor.checks.runner import CheckContext, Skipped
from doctor.knowledge.coverage import env_guidance_names, env_variable_names, import_callers_read
from doctor.snapshot.model import snapshot_from_dict


def test_the_packaged_tables_give_their_names_and_caller_releases():
    names = env_variable_names()
    assert names and {"TASK_QUEUE_ENABLE", "HCCL_OP_EXPANSION_MODE", "PYTORCH_NPU_ALLOC_CONF"} <= names
    read = import_callers_read()
    assert read and {"verl", "mbridge", "mindspeed"} <= set(read)
    assert ("0.9.0", next(c for v, c in read["verl"] if v == "0.9.0")) in read["verl"]
    from doctor.knowledge.env_guidance import load

    assert env_guidance_names() == frozenset(r.var for r in load().rules)


def test_a_file_without_the_expected_shape_is_none(tmp_path):
    bad = tmp_path / "import-surface.json"
    bad.write_text('{"callers": [1, 2]}')
    assert import_callers_read(str(bad)) is None
    bad.write_text("not json")
    assert import_callers_read(str(bad)) is None
    toml = tmp_path / "env-values.toml"
    toml.write_text('schema = "x"\nvar = [1]\n')
    assert env_variable_names(str(toml)) is None
    guidance = tmp_path / "env-guidance.toml"
    guidance.write_text('schema = "x"\nrule = [{var = 1}]\n')
    assert env_guidance_names(str(guidance)) is None


def test_import_surface_skips_a_caller_release_it_did_not_read_and_judges_one_it_did():
    def run(verl: str, transformers: str = "5.3.0") -> list:
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
            "verl": {"version": verl}, "transformers": {"version": transformers}}})
        try:
            return list(import_surface(CheckContext(snapshot=snap)))
        except Skipped as s:
            return [s.reason]
    # transformers is a caller too (of torch, from 4.30.0): one it did not read, beside a verl it did not read
    assert run("0.9.2", "4.29.0") == ["no installed caller release is one the table of imports read"]
    assert run("0.9.2") == []  # transformers 5.3.0 was read: judged, nothing unmet
    assert [f.id for f in run("0.6.1")] == ["package-imports-missing-name"]
