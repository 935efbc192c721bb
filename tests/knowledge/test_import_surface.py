"""profiles/import-surface/: what mbridge / verl / MindSpeed releases import from megatron.core (transformers,
vLLM) at load, and which callee releases lack it, read from the sources at their tags (tools/refresh_knowledge/import_surface.py).
The packaged table loads and holds the facts read; every verified stack's pins pass it; a malformed copy is an
input error naming the file and the key."""

from __future__ import annotations

import copy
import json
import os

import pytest

from doctor.errors import InputError
from doctor.knowledge import import_surface
from doctor.knowledge.import_surface import load, unmet


def test_the_packaged_table_holds_the_releases_read_and_what_they_import():
    t = load()
    assert t.read == "2026-12-06"
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
    # verl main at the commit the 0.10.0.dev stack pins (requirements-git.toml), a source build found by its commit:
    # its engine workers import uvicorn at load (a real venv: "No module named 'uvicorn'")
    (dev,) = [r for r in t.callers["verl"].releases if r.source_build]
    assert (dev.version, dev.ref, dev.commit[:9], dev.date) == ("0.10.0.dev0", "main", "1dda039b9", "2026-08-22")
    assert dev.loads is not None and dev.loads.modules["uvicorn"] == "verl/workers/rollout/utils.py:20"
    # verl 0.6.0-0.7.0 import AutoModelForVision2Seq from transformers when verl/utils/model.py loads; transformers
    # 5.0 removed it (read from PyPI's wheels)
    u = unmet(t, "verl", "transformers", caller_version="0.6.1", callee_version="5.0.0")
    assert u is not None and u.names == (("transformers", "AutoModelForVision2Seq", "verl/utils/model.py:28"),)
    assert unmet(t, "verl", "transformers", caller_version="0.7.1", callee_version="5.0.0") is None
    assert {r.version for r in t.callees["transformers"].releases} >= {"4.57.6", "5.0.0", "5.10.4"}
    # MindSpeed's adaptor imports no megatron.core name at module level (it patches inside functions), only torch's
    assert all(set(r.imports) == {"torch"} for r in t.callers["mindspeed"].releases)



def test_huggingface_hub_and_vllm_as_a_caller_read_from_pypi_files():
    """huggingface_hub from its PyPI wheels (every final release): its package is lazy (`__getattr__, __dir__,
    __all__ = _attach(...)`), serving the names of its submod_attrs table, a literal in the call up to 0.9.1 and
    `_SUBMOD_ATTRS` from 0.10.0; accelerate (its wheels) and vLLM (its sdists) read as callers at every release."""
    t = load()
    hub = t.callees["huggingface-hub"]
    assert {"0.9.1", "0.20.3", "0.21.0", "0.36.2", "1.0.0"} <= {r.version for r in hub.releases}
    assert all(r.ref.startswith(f"huggingface_hub-{r.version}-") and len(r.sha256) == 64 for r in hub.releases)
    # served by the lazy table at 0.9.1 (the literal) and 0.10.0 (_SUBMOD_ATTRS): not missing there
    assert {"0.9.1", "0.10.0"}.isdisjoint(hub.missing["huggingface_hub:hf_hub_download"])
    assert "0.20.3" in hub.missing["huggingface_hub:split_torch_state_dict_into_shards"]
    assert "0.21.0" not in hub.missing["huggingface_hub:split_torch_state_dict_into_shards"]
    acc = {r.version: r for r in t.callers["accelerate"].releases}
    assert acc["0.32.0"].ref == "accelerate-0.32.0-py3-none-any.whl" and acc["0.32.0"].commit == ""
    assert acc["0.32.0"].imports["huggingface-hub"] == {
        "huggingface_hub:split_torch_state_dict_into_shards": "src/accelerate/accelerator.py:34"}
    u = unmet(t, "accelerate", "huggingface-hub", caller_version="0.32.0", callee_version="0.20.3")
    assert u is not None and u.source.startswith("https://github.com/huggingface/accelerate/blob/v0.32.0/")
    # peft 0.13.x declare huggingface_hub>=0.17.0 but import huggingface_hub.errors' HFValidationError (0.23.0 on)
    u = unmet(t, "peft", "huggingface-hub", caller_version="0.13.2", callee_version="0.22.2")
    assert u is not None and ("huggingface_hub.errors", "HFValidationError") in [n[:2] for n in u.names]
    assert unmet(t, "peft", "huggingface-hub", caller_version="0.13.2", callee_version="0.23.0") is None
    vllm = {r.version: r for r in t.callers["vllm"].releases}
    assert vllm["0.9.1"].ref == "vllm-0.9.1.tar.gz" and vllm["0.9.1"].entries == ("vllm", "vllm.entrypoints.llm")
    assert set(vllm["0.9.1"].imports) == {"transformers", "huggingface-hub", "torch"}
    # vLLM 0.26.0 imports transformers 5's tokenizer backends at load (vllm/tokenizers/hf.py); 4.57.6 lacks them
    u = unmet(t, "vllm", "transformers", caller_version="0.26.0", callee_version="4.57.6")
    assert u is not None and ("transformers", "PythonBackend", "vllm/tokenizers/hf.py:9") in u.names


def test_what_vllm_serve_loads_and_trls_peft_imports_under_is_peft_available():
    """vLLM's `command`: the `vllm` console script each sdist declares (setup.py's vllm.scripts up to 0.7.1, then
    vllm.entrypoints.cli.main, whose main imports every subcommand's module from 0.10), and the names only it
    imports; trl 0.4.2-0.7.1 import peft's prepare_model_for_int8_training (peft 0.10.0 removed it), 0.7.2 on
    prepare_model_for_kbit_training (0.4.0 on), under `if is_peft_available():`; trl 0.8 on is lazy: nothing."""
    t = load()
    vllm = {r.version: r for r in t.callers["vllm"].releases}
    assert [(vllm[v].command.name, vllm[v].command.entries[0]) for v in ("0.6.3", "0.7.3", "0.13.0")] == [
        ("vllm serve", "vllm.scripts"), ("vllm serve", "vllm.entrypoints.cli.main"),
        ("vllm serve", "vllm.entrypoints.cli.main")]
    assert "vllm.entrypoints.cli.serve" in vllm["0.13.0"].command.entries
    # torch too: the serve path's own torch names (a bare `import torch` is never recorded)
    assert "torch:" not in vllm["0.9.1"].command.only.get("torch", ()) and "torch" in vllm["0.9.1"].command.only
    assert {k: v for k, v in vllm["0.9.1"].command.only.items() if k != "torch"} == {"huggingface-hub": frozenset({
        "huggingface_hub.constants:", "huggingface_hub:HfFileSystem", "huggingface_hub:snapshot_download"}),
        "transformers": frozenset({"transformers.dynamic_module_utils:get_class_from_dynamic_module",
                                   "transformers.utils:SAFE_WEIGHTS_INDEX_NAME", "transformers:AutoModelForCausalLM"})}
    assert all(set(r.command.only.get("transformers", ())) <= set(r.imports["transformers"]) for r in vllm.values())
    trl = {r.version: r for r in t.callers["trl"].releases}
    assert trl["0.7.1"].imports["peft"]["peft:prepare_model_for_int8_training"] == "trl/models/modeling_base.py:30"
    # lazy from 0.8: `import trl` imports nothing of peft; what it imports is what a served name loads (`lazy`)
    assert trl["0.8.0"].imports["peft"].keys() == trl["0.8.0"].lazy["peft"].keys()
    u = unmet(t, "trl", "peft", caller_version="0.7.1", callee_version="0.10.0")
    assert u is not None and u.fixed_in[-1] == "0.9.0" and [n[1] for n in u.names] == [
        "prepare_model_for_int8_training"]
    assert unmet(t, "trl", "peft", caller_version="0.7.1", callee_version="0.9.0") is None


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
    """The documented stacks' verl and Megatron-Core are releases the table read, and none lacks a name verl imports;
    nor does their torch lack a name verl, mbridge, vllm-ascend or vLLM imports."""
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    t = load()
    judged = judged_tf = judged_vllm = judged_ascend = judged_torch = 0
    for p in load_profiles():
        snap = stack_snapshot(p)
        verl = snap["packages"]["verl"]["version"]
        megatron = snap["packages"].get("megatron-core", {}).get("version") or snap["modules"]["megatron"]["version"]
        transformers = snap["packages"]["transformers"]["version"]
        vllm = snap["packages"]["vllm"]["version"].partition("+")[0]  # a source build at a release: 0.23.0+empty
        torch = snap["packages"]["torch"]["version"].partition("+")[0]  # torch 2.5.1+cpu on x86
        for caller in ("verl", "mbridge"):
            for callee, v in (("megatron-core", megatron), ("transformers", transformers), ("vllm", vllm),
                              ("torch", torch)):
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
        assert unmet(t, "vllm-ascend", "torch", caller_version=ascend, callee_version=torch) is None, p.name
        assert unmet(t, "vllm", "torch", caller_version=vllm, callee_version=torch) is None, p.name
        judged_ascend += any(r.version == ascend for r in t.callers["vllm-ascend"].releases)
        judged_torch += any(r.version == verl for r in t.callers["verl"].releases) and any(
            r.version == torch for r in t.callees["torch"].releases)
    assert judged >= 8 and judged_tf >= 8 and judged_vllm >= 8 and judged_ascend >= 4 and judged_torch >= 8


# the table's layout: the index, one file per caller release, one per callee
GOOD = {
    "index.json": {"schema": "doctor.import-surface/2", "read": "2026-12-04",
                   "callers": {"br": {"url": "https://github.com/x/br", "key": "version", "releases": [
                       {"version": "1.0", "ref": "v1.0", "commit": "a" * 40, "file": "br/1.0.json"}]}},
                   "callees": {"megatron-core": {"url": "https://github.com/NVIDIA/Megatron-LM", "releases": [
                       {"version": "0.1.0", "ref": "core_v0.1.0", "commit": "b" * 40}], "file": "megatron-core.json"}}},
    "br/1.0.json": {"caller": "br", "version": "1.0", "commit": "a" * 40, "entries": ["br"],
                    "imports": {"megatron-core": {"megatron.core.utils:old": "br/util.py:1"}}},
    "megatron-core.json": {"callee": "megatron-core", "rows": [{"missing": ["0.1.0"],
                                                                "names": ["megatron.core.utils:old"]}]},
}


def _write(tmp_path, files: dict[str, object]) -> str:
    for f, data in files.items():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(json.dumps(data))
    return str(tmp_path / "index.json")


def _use(index: str):  # noqa: ANN202
    """Every file of the table read, as a check judging br 1.0 on megatron-core 0.1.0 reads them."""
    t = load(index)
    u = unmet(t, "br", "megatron-core", caller_version="1.0", callee_version="0.1.0")
    dict(t.callees["megatron-core"].no_module)
    return u


def _bad(file: str, path: str, value: object) -> dict[str, object]:
    d = copy.deepcopy(GOOD)
    *keys, last = path.split("/")
    t: object = d[file]
    for k in keys:
        t = t[int(k)] if isinstance(t, list) else t[k]  # type: ignore[index]
    if isinstance(t, list) and int(last) == len(t):
        t.append(value)  # a row added
    else:
        t[int(last) if isinstance(t, list) else last] = value  # type: ignore[index]
    return d


@pytest.mark.parametrize(("file", "path", "value", "where", "key"), [
    ("index.json", "schema", "doctor.import-surface/1", "index.json", "schema"),
    ("index.json", "callers/br/key", "tag", "index.json", "callers.br.key"),
    ("index.json", "callers/br/releases/0/commit", "abc", "index.json", "callers.br.releases[0].commit"),
    ("index.json", "callers/br/releases/0/version", "one", "index.json", "callers.br.releases[0].version"),
    ("index.json", "callers/br/releases/0/file", "../br/1.0.json", "index.json", "callers.br.releases[0].file"),
    ("index.json", "callers/br/releases/0/file", "br/2.0.json", "index.json", "callers.br.releases[0].file"),
    ("index.json", "callees/megatron-core/file", "absent.json", "index.json", "callees.megatron-core.file"),
    ("br/1.0.json", "commit", "c" * 40, "br/1.0.json", "commit"),
    ("br/1.0.json", "imports", {"vllm": {}}, "br/1.0.json", "imports.vllm"),
    ("br/1.0.json", "callee_entries", {"vllm": ["br"]}, "br/1.0.json", "callee_entries"),
    ("br/1.0.json", "imports/megatron-core", {"megatron.core.utils:old": " "}, "br/1.0.json",
     "imports.megatron-core.megatron.core.utils:old"),
    ("br/1.0.json", "imports/megatron-core", {"megatron.core.utils:old:x": "br/util.py:1"}, "br/1.0.json",
     "imports.megatron-core"),
    ("megatron-core.json", "callee", "vllm", "megatron-core.json", "callee"),
    ("megatron-core.json", "rows/0/missing", ["0.9.9"], "megatron-core.json", "rows[0].missing"),
    ("megatron-core.json", "rows/0/missing", ["0.1.0..0.1.0"], "megatron-core.json", "rows[0].missing"),
    ("megatron-core.json", "rows/0/names", ["no-colon"], "megatron-core.json", "rows[0].names"),
    ("megatron-core.json", "rows/1", {"names": ["megatron.core.utils:old"]}, "megatron-core.json", "rows[1].names"),
    ("megatron-core.json", "rows", [], "br/1.0.json", "imports.megatron-core"),
    ("megatron-core.json", "rows/0", {"no_module": ["0.1.0"], "names": ["megatron.core.utils:old"]},
     "megatron-core.json", "rows[0].no_module"),
])
def test_a_malformed_table_names_the_file_and_key(tmp_path, file, path, value, where, key):
    u = _use(_write(tmp_path / "good", GOOD))
    assert u is not None and u.names == (("megatron.core.utils", "old", "br/util.py:1"),)
    with pytest.raises(InputError) as e:
        _use(_write(tmp_path / "bad", _bad(file, path, value)))
    assert e.value.path == key and str(e.value.source) == str(tmp_path / "bad" / where)


def test_an_unreadable_or_non_json_table_is_an_input_error(tmp_path):
    index = _write(tmp_path, GOOD)
    (tmp_path / "br" / "1.0.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON") as e:
        _use(index)
    assert str(e.value.source) == str(tmp_path / "br" / "1.0.json")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "index.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load(str(tmp_path / "broken" / "index.json"))
    with pytest.raises(InputError, match="cannot read"):
        load(str(tmp_path / "absent.json"))


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


def test_a_check_reads_the_index_and_only_the_files_of_the_releases_it_judges(tmp_path, monkeypatch):
    """doctor/knowledge/coverage.py learns from index.json alone whether an installed caller release was read;
    judging vllm-ascend 0.9.1 on vLLM 0.9.2 reads that release's file and vllm.json, nothing else (each once)."""
    import doctor.jsonfile
    from doctor.knowledge.coverage import import_callers_read
    from doctor.knowledge.location import packaged_dir

    index = str(tmp_path / "index.json")
    _write(tmp_path, GOOD)
    assert import_callers_read(index) == {"br": (("1.0", "a" * 40),)}
    d = os.path.join(packaged_dir(), "import-surface")
    read = import_callers_read(os.path.join(d, "index.json"))
    assert read is not None and ("0.9.1", next(c for v, c in read["vllm-ascend"] if v == "0.9.1")) in read["vllm-ascend"]
    opened: list[str] = []
    real = doctor.jsonfile.read_json
    monkeypatch.setattr(doctor.jsonfile, "read_json", lambda p, what: opened.append(os.path.relpath(p, d)) or real(
        p, what))
    t = import_surface.parse(real(os.path.join(d, "index.json"), "x"), os.path.join(d, "index.json"))
    for _ in range(2):
        u = unmet(t, "vllm-ascend", "vllm", caller_version="0.9.1", callee_version="0.9.2")
        assert u is not None and u.names[0][:2] == ("vllm.model_executor.layers.fused_moe.layer", "MoEConfig")
    assert opened == ["vllm-ascend/0.9.1.json", "vllm.json"]


def test_trl_and_peft_are_read_at_their_pypi_release_tags_for_transformers_accelerate_huggingface_hub_and_torch():
    t = load()
    trl, peft = ({r.version: r for r in t.callers[n].releases} for n in ("trl", "peft"))
    assert {"0.7.11", "0.8.6", "0.29.1", "1.9.0"} <= set(trl) and {"0.15.2", "0.17.0", "0.18.0rc0", "0.20.0"} <= set(peft)
    assert all(set(r.imports) <= {"transformers", "accelerate", "huggingface-hub", "torch"} for r in peft.values())
    assert all(set(r.imports) <= {"transformers", "accelerate", "huggingface-hub", "peft", "torch"} for r in trl.values())
    # lazy from v0.8: `import trl` imports no model code, every import recorded is one a served name's modules make
    assert trl["0.8.6"].imports and trl["0.7.11"].imports and not trl["0.7.11"].lazy
    assert all(names.keys() == trl["0.8.6"].lazy[c].keys() for c, names in trl["0.8.6"].imports.items())
    u = unmet(t, "peft", "transformers", caller_version="0.18.0", callee_version="4.50.3")
    assert u is not None and u.names[0][:2] == ("transformers.modeling_layers", "GradientCheckpointingLayer")



def test_accelerate_and_torchdata_read_from_pypi_wheels_and_verl_0_9_1_from_its_wheel():
    """verl declares accelerate and torchdata without a lower bound: their wheels are read (torchdata's cp311
    x86_64 ones), and verl 0.9.1 and peft 0.21.x, whose tags the mirrors lack, from their PyPI wheels."""
    t = load()
    acc, td = t.callees["accelerate"], t.callees["torchdata"]
    assert {"0.0.1", "0.26.1", "1.0.0", "1.16.0"} <= {r.version for r in acc.releases} and len(acc.releases) == 81
    assert [r.version for r in td.releases] == ["0.3.0", "0.6.0", "0.6.1", "0.7.0", "0.7.1", "0.8.0", "0.9.0",
                                               "0.10.0", "0.10.1", "0.11.0"]
    assert all(r.ref.startswith(f"{c.name}-{r.version}-") and r.ref.endswith(".whl") and len(r.sha256) == 64
               and not r.commit for c in (acc, td) for r in c.releases)
    assert {r.ref for r in td.releases if r.version == "0.7.1"} == {
        "torchdata-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"}
    (v091,) = [r for r in t.callers["verl"].releases if r.version == "0.9.1"]
    assert v091.ref == "verl-0.9.1-py3-none-any.whl" and not v091.commit and len(v091.sha256) == 64
    assert v091.imports["torchdata"] == {"torchdata.stateful_dataloader:StatefulDataLoader":
                                         "verl/trainer/ppo/ray_trainer.py:33"}
    u = unmet(t, "verl", "torchdata", caller_version="0.9.1", callee_version="0.7.1")
    assert u is not None and u.no_module == {"torchdata.stateful_dataloader"} and u.fixed_in[0] == "0.8.0"
    assert unmet(t, "verl", "torchdata", caller_version="0.9.1", callee_version="0.11.0") is None
    peft = {r.version: r for r in t.callers["peft"].releases}
    assert {"0.21.0", "0.21.1", "0.21.2"} <= set(peft) and peft["0.21.2"].sha256 and not peft["0.21.2"].commit
    u = unmet(t, "peft", "accelerate", caller_version="0.21.2", callee_version="0.26.1")
    assert u is not None and [n[:2] for n in u.names] == [("accelerate.utils.memory", "clear_device_cache")]
    assert u.names[0][2].startswith("src/peft/utils/loftq_utils.py:") and "0.26.1" not in u.fixed_in
    assert unmet(t, "peft", "accelerate", caller_version="0.21.2", callee_version="1.16.0") is None
    # peft 0.14.0 does not import it yet
    assert unmet(t, "peft", "accelerate", caller_version="0.14.0", callee_version="0.26.1") is None


def test_tensordict_read_from_its_pypi_wheels_for_verl():
    """tensordict's wheels are per platform from 0.2.0 to 0.14.3 (the cp311 manylinux x86_64 one is read), pure
    before and after; verl imports TensorDict from every release, NonTensorData / NonTensorStack from 0.6.0 on."""
    t = load()
    td = t.callees["tensordict"]
    versions = [r.version for r in td.releases]
    assert len(versions) == 39 and versions[0] == "0.0.3" and versions[-1] == "0.15.3" and "0.9.0" in versions
    assert all(r.ref.startswith(f"tensordict-{r.version}-") and len(r.sha256) == 64 for r in td.releases)
    refs = {r.version: r.ref for r in td.releases}
    assert refs["0.1.2"] == "tensordict-0.1.2-py3-none-any.whl"
    assert refs["0.10.0"] == "tensordict-0.10.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    verl = {r.version: r for r in t.callers["verl"].releases}
    assert verl["0.5.0"].imports["tensordict"] == {"tensordict:": "verl/protocol.py:30",
                                                   "tensordict:TensorDict": "verl/protocol.py:34"}
    assert verl["0.9.1"].imports["tensordict"]["tensordict.tensorclass:NonTensorStack"] == \
        "verl/utils/tensordict_utils.py:23"
    u = unmet(t, "verl", "tensordict", caller_version="0.9.1", callee_version="0.3.1")
    assert u is not None and ("tensordict.tensorclass", "NonTensorStack") in [n[:2] for n in u.names]
    assert u.fixed_in[0] == "0.3.2"
    for v in ("0.3.2", "0.8.0", "0.9.1", "0.10.0", "0.15.3"):
        assert unmet(t, "verl", "tensordict", caller_version="0.9.1", callee_version=v) is None, v
    assert unmet(t, "verl", "tensordict", caller_version="0.5.0", callee_version="0.0.3") is None


def test_peft_read_at_its_tags_as_a_callee_of_verl():
    """peft is both a caller (of transformers, accelerate, huggingface_hub) and a callee of verl, read at the same
    tags of its mirror: verl's FSDP workers import LoraConfig, TaskType and get_peft_model from it at module level,
    and every peft release read defines them (in src/peft, not reported missing as no module)."""
    t = load()
    as_callee = [(r.version, r.commit) for r in t.callees["peft"].releases]
    as_caller = [(r.version, r.commit) for r in t.callers["peft"].releases if r.commit]
    assert as_callee == as_caller and as_callee[0][0] == "0.0.1" and len(as_callee) >= 30
    verl = {r.version: r for r in t.callers["verl"].releases}
    assert verl["0.4.0"].imports["peft"] == {"peft:LoraConfig": "verl/workers/fsdp_workers.py:31",
                                             "peft:TaskType": "verl/workers/fsdp_workers.py:31",
                                             "peft:get_peft_model": "verl/workers/fsdp_workers.py:31"}
    assert verl["0.9.1"].imports["peft"] == {
        "peft.utils.save_and_load:get_peft_model_state_dict": "verl/utils/fsdp_utils.py:30",
        "peft:LoraConfig": "verl/workers/engine/fsdp/transformer_impl.py:27",
        "peft:TaskType": "verl/workers/engine/fsdp/transformer_impl.py:27",
        "peft:get_peft_model": "verl/workers/engine/fsdp/transformer_impl.py:27"}
    peft = t.callees["peft"]
    assert not any(peft.missing[k] or peft.unknown[k] for r in verl.values() for k in r.imports.get("peft", {}))
    assert not any(peft.unknown.values())
    for caller, callee in (("0.4.0", "0.0.1"), ("0.9.1", "0.0.1"), ("0.9.1", "0.17.1")):
        assert unmet(t, "verl", "peft", caller_version=caller, callee_version=callee) is None


def test_torch_read_through_byte_ranges_of_its_pypi_wheels_for_every_caller():
    """torch is a callee of every caller, each final release from 2.0.0 read from its smallest PyPI wheel (named by
    its sha256); verl 0.3.0.post0 on imports DeviceMesh from torch.distributed (torch 2.4 on) and 0.6.0 on DTensor
    from torch.distributed.tensor (2.5 on); nothing its compiled torch._C may bind is held missing, nor is a name no
    torch release read defines (another package's, such as torch_npu's torch.npu); a bare `import torch` is not
    recorded."""
    t = load()
    torch = t.callees["torch"]
    versions = [r.version for r in torch.releases]
    assert versions[:5] == ["2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2"] and {"2.5.1", "2.6.0", "2.7.1", "2.8.0",
                                                                               "2.9.0", "2.10.0"} <= set(versions)
    assert all(r.ref.startswith(f"torch-{r.version}-") and r.ref.endswith(".whl") and len(r.sha256) == 64
               and not r.commit for r in torch.releases)
    from packaging.version import Version

    assert set(torch.missing["torch.distributed:DeviceMesh"]) == {v for v in versions if Version(v) < Version("2.4")}
    assert torch.missing["torch.distributed.tensor:DTensor"] == frozenset(
        ["2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1"])
    every = frozenset(versions)
    assert not any(torch.missing[k] == every for k in torch.missing)
    assert not any(k.startswith("torch._C") and torch.missing[k] for k in torch.missing)
    callers = {c: {k for r in t.callers[c].releases for k in r.imports.get("torch", {})} for c in t.callers}
    assert all(callers.values()) and not any("torch:" in v for v in callers.values())
    assert unmet(t, "verl", "torch", caller_version="0.3.0.post0", callee_version="2.3.1").names == (
        ("torch.distributed", "DeviceMesh", "verl/utils/fsdp_utils.py:22"),)
    assert unmet(t, "verl", "torch", caller_version="0.3.0.post0", callee_version="2.4.0") is None
