"""profiles/import-surface.json: what mbridge / verl / MindSpeed releases import from megatron.core (transformers,
vLLM) at load, and which callee releases lack it, read from the sources at their tags (tools/refresh_knowledge/import_surface.py).
The packaged table loads and holds the facts read; every verified stack's pins pass it; a malformed copy is an
input error naming the file and the key."""

from __future__ import annotations

import copy
import json

import pytest

from doctor.errors import InputError
from doctor.knowledge.import_surface import load, parse, unmet


def test_the_packaged_table_holds_the_releases_read_and_what_they_import():
    t = load()
    assert t.read == "2026-12-04"
    from doctor.checks.packages import IMPORT_CALLEES, IMPORT_CALLERS

    assert set(t.callers) == set(IMPORT_CALLERS) and set(t.callees) == set(IMPORT_CALLEES)
    mc = t.callees["megatron-core"]
    assert {"0.12.1", "0.13.0", "0.14.0", "0.16.1", "0.19.0"} <= {r.version for r in mc.releases}
    mb = {r.version: r for r in t.callers["mbridge"].releases if not r.source_build}
    assert {"0.13.0", "0.13.1", "0.15.1"} <= set(mb)
    # mbridge 0.13.0's util.py imports megatron.core.distributed.custom_fsdp at module level; Megatron-Core renamed
    # it to distributed.fsdp in 0.14.0rc6
    u = unmet(t, "mbridge", "megatron-core", caller_version="0.13.0", callee_version="0.14.0")
    assert u is not None and u.names == (("megatron.core.distributed.custom_fsdp", "FullyShardedDataParallel",
                                          "mbridge/core/util.py:248"),)
    assert "0.13.1" in u.fixed_in and "0.14.0" not in u.fixed_in
    # mbridge's tag v0.15.1 (and its PyPI wheel, the same files) does not import
    # get_tensor_model_parallel_group_if_none: the mbridge 50 reporter ran a later source build
    assert not any("get_tensor_model_parallel_group_if_none" in k for r in mb.values()
                   for k in r.imports.get("megatron-core", {}))
    u = unmet(t, "mbridge", "megatron-core", caller_version="0.15.1", callee_version="0.12.1")
    assert u is not None and u.names == () and u.source_build is not None and u.source_build.ref == "main"
    assert [n[:2] for n in u.source_names] == [("megatron.core.utils", "get_tensor_model_parallel_group_if_none")]
    (head,) = [r for r in t.callers["mbridge"].releases if r.source_build]  # main still declares 0.15.1
    assert head.version == "0.15.1" and head.date
    # verl 0.6.0-0.7.0 import AutoModelForVision2Seq from transformers when verl/utils/model.py loads; transformers
    # 5.0 removed it (read from PyPI's wheels)
    u = unmet(t, "verl", "transformers", caller_version="0.6.1", callee_version="5.0.0")
    assert u is not None and u.names == (("transformers", "AutoModelForVision2Seq", "verl/utils/model.py:28"),)
    assert unmet(t, "verl", "transformers", caller_version="0.7.1", callee_version="5.0.0") is None
    assert {r.version for r in t.callees["transformers"].releases} >= {"4.57.6", "5.0.0", "5.10.4"}
    # MindSpeed's adaptor imports no megatron.core name at module level (it patches inside functions)
    assert all(not r.imports for r in t.callers["mindspeed"].releases)



def test_verls_vllm_rollout_against_the_vllm_releases_read_from_pypi_sdists():
    """verl's vLLM rollout modules (what a rollout=vllm job loads) against vLLM's sdists: the release vllm-ascend
    pairs with is what an Ascend stack builds from source."""
    t = load()
    vllm = t.callees["vllm"]
    assert {"0.9.1", "0.11.0", "0.13.0", "0.18.0", "0.23.0", "0.30.0"} <= {r.version for r in vllm.releases}
    assert all(r.ref == f"vllm-{r.version}.tar.gz" and len(r.sha256) == 64 for r in vllm.releases)
    # verl v0.5.0's vllm_rollout_spmd.py (imported by verl/workers/rollout/vllm_rollout/__init__.py at module level)
    # imports SamplingMetadata from vllm.model_executor.sampling_metadata; vLLM 0.11.0's sdist has no such module
    u = unmet(t, "verl", "vllm", caller_version="0.5.0", callee_version="0.11.0")
    assert u is not None and u.names == (("vllm.model_executor.sampling_metadata", "SamplingMetadata",
                                          "verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py:50"),)
    assert u.no_module == {"vllm.model_executor.sampling_metadata"} and "0.10.2" in u.fixed_in
    rel = u.cited
    assert "verl.workers.rollout.vllm_rollout" in rel.entries_for("vllm")
    assert "verl.workers.rollout.vllm_rollout" not in rel.entries_for("transformers")
    # from v0.7.0 the default rollout mode is async: the server replica loads, and it imports
    # vllm.v1.engine.utils.CoreEngineProcManager, a module vLLM 0.9.1 does not have
    u = unmet(t, "verl", "vllm", caller_version="0.7.0", callee_version="0.9.1")
    assert u is not None and [n[:2] for n in u.names] == [("vllm.v1.engine.utils", "CoreEngineProcManager")]
    assert u.names[0][2].startswith("verl/workers/rollout/vllm_rollout/vllm_async_server.py:")
    # before v0.7.0 (mode: sync by default) the async server is not an entry: verl 0.6.1 with vLLM 0.9.1 loads
    assert unmet(t, "verl", "vllm", caller_version="0.6.1", callee_version="0.9.1") is None
    # verl v0.9.0's server imports vllm.entrypoints.openai.parser.harmony_utils, which vLLM 0.11.0 does not have
    u = unmet(t, "verl", "vllm", caller_version="0.9.0", callee_version="0.11.0")
    assert u is not None and ("vllm.entrypoints.openai.parser.harmony_utils", "get_encoding") in [
        n[:2] for n in u.names]
    assert unmet(t, "verl", "vllm", caller_version="0.9.0", callee_version="0.23.0") is None


def test_every_verified_stacks_pins_pass_and_are_judged():
    """The documented stacks' verl and Megatron-Core are releases the table read, and none lacks a name verl imports."""
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    t = load()
    judged = judged_tf = judged_vllm = judged_ascend = 0
    for p in load_profiles():
        snap = stack_snapshot(p)
        verl = snap["packages"]["verl"]["version"]
        megatron = snap["packages"].get("megatron-core", {}).get("version") or snap["modules"]["megatron"]["version"]
        transformers = snap["packages"]["transformers"]["version"]
        vllm = snap["packages"]["vllm"]["version"].partition("+")[0]  # a source build at a release: 0.23.0+empty
        for caller in ("verl", "mbridge"):
            for callee, v in (("megatron-core", megatron), ("transformers", transformers), ("vllm", vllm)):
                assert unmet(t, caller, callee, caller_version=verl if caller == "verl" else None,
                             callee_version=v) is None, (p.name, callee)
        judged += any(r.version == verl for r in t.callers["verl"].releases)
        judged_tf += any(r.version == transformers for r in t.callees["transformers"].releases)
        judged_vllm += any(r.version == verl for r in t.callers["verl"].releases) and any(
            r.version == vllm for r in t.callees["vllm"].releases)
        # vllm-ascend: a tag's build reports the tag's version (0.9.1, 0.11.0rc1); a release branch's build a
        # setuptools_scm dev version (0.23.1.dev1+g50e87d630) no release read has, which is not judged
        ascend = snap["packages"]["vllm-ascend"]["version"]
        assert unmet(t, "vllm-ascend", "vllm", caller_version=ascend, callee_version=vllm) is None, p.name
        judged_ascend += any(r.version == ascend for r in t.callers["vllm-ascend"].releases)
    assert judged >= 8 and judged_tf >= 8 and judged_vllm >= 8 and judged_ascend >= 4


GOOD = {"schema": "doctor.import-surface/1", "read": "2026-12-04",
        "callers": {"br": {"url": "https://github.com/x/br", "key": "version", "releases": [
            {"version": "1.0", "ref": "v1.0", "commit": "a" * 40, "entries": ["br"],
             "imports": {"megatron-core": {"megatron.core.utils:old": "br/util.py:1"}}}]}},
        "callees": {"megatron-core": {"url": "https://github.com/NVIDIA/Megatron-LM", "releases": [
            {"version": "0.1.0", "ref": "core_v0.1.0", "commit": "b" * 40}],
            "names": {"megatron.core.utils:old": {"missing": ["0.1.0"], "unknown": []}}}}}


def _bad(path: str, value: object) -> dict[str, object]:
    d = copy.deepcopy(GOOD)
    *keys, last = path.split("/")
    t: object = d
    for k in keys:
        t = t[int(k)] if isinstance(t, list) else t[k]  # type: ignore[index]
    t[int(last) if isinstance(t, list) else last] = value  # type: ignore[index]
    return d


@pytest.mark.parametrize(("path", "value", "key"), [
    ("schema", "doctor.import-surface/9", "schema"),
    ("callers/br/key", "tag", "callers.br.key"),
    ("callers/br/releases/0/commit", "abc", "callers.br.releases[0].commit"),
    ("callers/br/releases/0/version", "one", "callers.br.releases[0].version"),
    ("callers/br/releases/0/imports", {"vllm": {}}, "callers.br.releases[0].imports.vllm"),
    ("callers/br/releases/0/callee_entries", {"vllm": ["br"]}, "callers.br.releases[0].callee_entries"),
    ("callees/megatron-core/names/megatron.core.utils:old/missing", ["0.9.9"],
     "callees.megatron-core.names.megatron.core.utils:old.missing"),
    ("callees/megatron-core/names", {"no-colon": {"missing": [], "unknown": []}}, "callees.megatron-core.names"),
    ("callees/megatron-core/names", {}, "callers.br"),
    ("callees/megatron-core/names/megatron.core.utils:old", {"missing": [], "unknown": [], "no_module": ["0.1.0"]},
     "callees.megatron-core.names.megatron.core.utils:old.no_module"),
    ("callers/br/releases/0/imports/megatron-core", {"megatron.core.utils:old": " "},
     "callers.br.releases[0].imports.megatron-core.megatron.core.utils:old"),
    ("callers/br/releases/0/imports/megatron-core", {"megatron.core.utils:old:x": "br/util.py:1"},
     "callers.br.releases[0].imports.megatron-core"),
    ("callers_read", {"br": [["1.0", "c" * 40]]}, "callers_read"),
])
def test_a_malformed_table_names_the_file_and_key(path, value, key):
    assert parse(copy.deepcopy(GOOD), "/k/import-surface.json").callers["br"].releases[0].entries == ("br",)
    with pytest.raises(InputError) as e:
        parse(_bad(path, value), "/k/import-surface.json")
    assert e.value.path == key and "/k/import-surface.json" in str(e.value.source)


def test_an_unreadable_or_non_json_table_is_an_input_error(tmp_path):
    p = tmp_path / "import-surface.json"
    p.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load(str(p))
    with pytest.raises(InputError, match="cannot read"):
        load(str(tmp_path / "absent.json"))
    p.write_text(json.dumps(GOOD))
    assert load(str(p)).callees["megatron-core"].missing["megatron.core.utils:old"] == frozenset({"0.1.0"})


def test_every_vllm_ascend_release_read_loads_on_the_vllm_release_its_dockerfile_builds():
    """Each vllm-ascend tag's Dockerfile builds vLLM at VLLM_TAG: that pair imports nothing missing (the rules that
    pick vllm-ascend's entry modules hold at every release read)."""
    # vllm-ascend tag -> its Dockerfile's VLLM_TAG (vllm-ascend Dockerfile at each tag); 0.11.0rc0 (vLLM
    # 0.11.0rc3) and 0.15.0rc1 (vLLM 0.15.0) pair with vLLM releases that have no sdist on PyPI, so are not judged
    pairs = {"0.7.1rc1": "0.7.1", "0.7.3.post1": "0.7.3", "0.8.4rc2": "0.8.4", "0.8.5rc1": "0.8.5.post1",
             "0.9.0rc2": "0.9.0", "0.9.1": "0.9.1", "0.9.2rc1": "0.9.2", "0.10.0rc1": "0.10.0",
             "0.10.1rc1": "0.10.1.1", "0.10.2rc1": "0.10.2", "0.11.0": "0.11.0", "0.12.0rc1": "0.12.0",
             "0.13.0": "0.13.0", "0.14.0rc1": "0.14.1", "0.16.0rc1": "0.16.0", "0.17.0rc1": "0.17.0",
             "0.18.0": "0.18.0", "0.19.1rc1": "0.19.1", "0.20.2rc1": "0.20.2", "0.21.0rc1": "0.21.0",
             "0.22.1rc1": "0.22.1", "0.23.0": "0.23.0", "0.24.0rc1": "0.24.0", "0.25.1rc1": "0.25.1"}
    t = load()
    assert set(pairs) <= {r.version for r in t.callers["vllm-ascend"].releases}
    for va, v in pairs.items():
        assert unmet(t, "vllm-ascend", "vllm", caller_version=va, callee_version=v) is None, (va, v)


def test_the_index_on_the_second_line_says_which_caller_releases_were_read(tmp_path):
    """The tool writes `callers_read` on the table's second line; a check reads that line alone to learn whether
    an installed caller release was read (doctor/knowledge/coverage.py), the loader refuses an index that does not
    match, and a copy written before the index is read whole."""
    from doctor.knowledge.coverage import import_callers_read
    from doctor.knowledge.location import table_path
    from tools.refresh_knowledge.import_surface import dumps

    text = dumps(copy.deepcopy(GOOD))
    assert text.splitlines()[1] == ' "callers_read": {"br":[["1.0","' + "a" * 40 + '"]]},'
    path = tmp_path / "import-surface.json"
    path.write_text(text)
    assert import_callers_read(str(path)) == {"br": (("1.0", "a" * 40),)}
    assert parse(json.loads(text), str(path)).callers["br"].releases[0].version == "1.0"
    path.write_text(json.dumps(GOOD, indent=1))
    assert import_callers_read(str(path)) == {"br": (("1.0", "a" * 40),)}
    with open(table_path("import-surface.json"), encoding="utf-8") as fh:
        assert fh.readline() == "{\n" and fh.readline().startswith(' "callers_read": {"mbridge":')


def test_trl_and_peft_are_read_at_their_pypi_release_tags_for_transformers_only():
    t = load()
    trl, peft = ({r.version: r for r in t.callers[n].releases} for n in ("trl", "peft"))
    assert {"0.7.11", "0.8.6", "0.29.1", "1.9.0"} <= set(trl) and {"0.15.2", "0.17.0", "0.18.0rc0", "0.20.0"} <= set(peft)
    assert all(set(r.imports) <= {"transformers"} for r in (*trl.values(), *peft.values()))
    assert not trl["0.8.6"].imports and trl["0.7.11"].imports  # lazy from v0.8: `import trl` imports no model code
    u = unmet(t, "peft", "transformers", caller_version="0.18.0", callee_version="4.50.3")
    assert u is not None and u.names[0][:2] == ("transformers.modeling_layers", "GradientCheckpointingLayer")

