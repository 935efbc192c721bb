"""Snapshot loader: bad input is refused naming the file, the path inside it and the reason; every shared
case and every collected snapshot round-trips; the cluster form; missing (unknown) vs null (absent)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.probes import collect_snapshot
from doctor.snapshot.model import UNKNOWN, Cluster, Snapshot, load_document, normalize_name, parse_document

S = "doctor.snapshot/1"


def _err(text: str | bytes, source: str = "node0.json") -> InputError:
    with pytest.raises(InputError) as ei:
        parse_document(text, source)
    return ei.value


def test_not_json() -> None:
    e = _err("{not json", "node0.json")
    assert str(e).startswith("node0.json: not valid JSON") and "line 1" in str(e)
    assert e.exit_code == 2


def test_not_utf8() -> None:
    assert "not UTF-8" in str(_err(b'{"schema": "\xff"}'))


@pytest.mark.parametrize(("doc", "path", "reason"), [
    ({"schema": "doctor.snapshot/2"}, "schema", "schema must be 'doctor.snapshot/1'"),
    ({"host": {}}, "schema", "missing 'schema'"),
    ({"schema": S, "host": {"cpu_count": "many"}}, "host.cpu_count", "must be integer"),
    ({"schema": S, "ascend": {"devices": [{"id": 0}, {"id": "one"}]}}, "ascend.devices[1].id", "must be integer"),
    ({"schema": S, "packages": {"torch": {"version": 2.5}}}, "packages.torch.version", "must be string, got number"),
    ({"schema": S, "modules": {"megatron": {"origins": "/Megatron-LM"}}}, "modules.megatron.origins", "must be an array"),
    ({"schema": S, "env": {"PATH": None}}, "env.PATH", "not null"),
    ({"schema": S, "packages": {"torch_npu": {"version": "2.5.1"}, "Torch-NPU": {"version": "2.1.0"}}},
     "packages.Torch-NPU", "listed twice"),
])
def test_wrong_shapes_name_file_path_and_reason(doc: dict, path: str, reason: str) -> None:
    e = _err(json.dumps(doc), "bug.json")
    assert e.source == "bug.json" and e.path == path and reason in e.message
    assert str(e).startswith(f"bug.json: {path}: ")


def test_top_level_must_be_an_object() -> None:
    assert "must be a JSON object" in str(_err("[1, 2]"))


def test_missing_is_unknown_null_is_absent() -> None:
    partial = parse_document(json.dumps({"schema": S, "ascend": {"toolkit": None}, "packages": {"Torch_NPU": {"version": "2.5.1"}}}), "x")
    assert isinstance(partial, Snapshot)
    assert partial.ascend.toolkit is None and partial.ascend.driver is UNKNOWN
    assert partial.version("torch-npu") == "2.5.1" and partial.has_package("vllm") is None  # not complete: unknown
    complete = parse_document(json.dumps({"schema": S, "complete": True, "packages": {}}), "x")
    assert complete.has_package("vllm") is False


def _normalized(doc: dict) -> dict:
    if "packages" in doc:
        doc = {**doc, "packages": {normalize_name(k): v for k, v in doc["packages"].items()}}
    return doc


def test_every_shared_case_round_trips(shared_dir: Path) -> None:
    files = sorted((shared_dir / "cases").glob("*.snapshot.json"))
    assert len(files) >= 10
    for f in files:
        original = json.loads(f.read_text())
        snap = load_document(str(f))
        assert isinstance(snap, Snapshot)
        assert snap.to_dict() == _normalized(original), f.name
        assert parse_document(snap.to_json(), f.name).to_dict() == snap.to_dict()


def test_a_collected_snapshot_round_trips(tmp_path: Path) -> None:
    snap = collect_snapshot(python=sys.executable, npu_smi_timeout=2.0, path=str(tmp_path), cwd=str(tmp_path))
    again = parse_document(snap.to_json(), "live.json")
    assert again.to_dict() == snap.to_dict()
    assert again.to_dict()["collect"]["probes"]["python"]["status"] == "ok"  # unknown keys are kept


def test_cluster_form() -> None:
    doc = {"schema": "doctor.cluster/1", "nodes": [
        {"node": "10.0.0.1", "snapshot": {"schema": S, "host": {"hostname": "a"}}, "error": None},
        {"node": "10.0.0.2", "snapshot": None, "error": "timeout: no answer within 30 s"}], "ray": {"address": "x"}}
    c = parse_document(json.dumps(doc), "cluster.json")
    assert isinstance(c, Cluster)
    assert c.nodes[0].snapshot.host.hostname == "a" and c.nodes[1].snapshot is None
    assert c.to_dict() == doc


@pytest.mark.parametrize(("nodes", "path"), [
    ("x", "nodes"),
    ([{"snapshot": None}], "nodes[0].node"),
    ([{"node": "a", "error": 3}], "nodes[0].error"),
    ([{"node": "a", "snapshot": {"schema": S, "host": {"cpu_count": 1.5}}}], "nodes[0].snapshot.host.cpu_count"),
    ([{"node": "a", "snapshot": {"schema": "other"}}], "nodes[0].snapshot.schema"),
])
def test_cluster_errors_name_the_node_path(nodes, path: str) -> None:
    e = _err(json.dumps({"schema": "doctor.cluster/1", "nodes": nodes}), "cluster.json")
    assert e.source == "cluster.json" and e.path == path


def test_load_document_file_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_document(str(tmp_path / "missing.json"))
    with pytest.raises(InputError, match="cannot read"):
        load_document(str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps({"schema": S}).encode())))
    assert isinstance(load_document("-"), Snapshot)


def test_the_server_model_is_a_host_fact_older_snapshots_lack(shared_dir: Path) -> None:
    """`host.dmi` (rule 17): read into the model, null = no DMI directory, a snapshot from before it stays valid
    and leaves it unknown, a wrong shape is refused by the loader and the schema alike."""
    import jsonschema

    from tests.conftest import SCHEMAS

    schema = json.loads((SCHEMAS / "snapshot.schema.json").read_text())
    older = {"schema": S, "host": {"hostname": "node-0", "arch": "aarch64"}}
    jsonschema.validate(older, schema)
    assert parse_document(json.dumps(older), "old.json").host.dmi is UNKNOWN
    atlas = {"schema": S, "host": {"dmi": {"sys_vendor": "Huawei", "product_name": "Atlas 800T A2"}}}
    jsonschema.validate(atlas, schema)
    snap = parse_document(json.dumps(atlas), "a2.json")
    assert snap.host.dmi.product_name == "Atlas 800T A2" and snap.host.dmi.board_name is UNKNOWN
    assert snap.to_dict() == atlas
    assert parse_document(json.dumps({"schema": S, "host": {"dmi": None}}), "x").host.dmi is None
    bad = {"schema": S, "host": {"dmi": {"product_name": 800}}}
    e = _err(json.dumps(bad), "bad.json")
    assert e.path == "host.dmi.product_name"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
