"""installers.wheelhouse: manifest with sha256, verification, paths that cannot escape the directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from doctor.errors import InputError, RefusedError
from doctor.installers import wheelhouse as wh
from tests.installers.wheelkit import make_wheel


def test_manylinux_tags_follow_glibc() -> None:
    tags = wh.manylinux_platforms("aarch64", "2.35")
    assert tags[:2] == ["linux_aarch64", "manylinux_2_35_aarch64"] and "manylinux_2_34_aarch64" in tags
    assert "manylinux2014_aarch64" in tags and not any("x86_64" in t for t in tags)
    old = wh.manylinux_platforms("x86_64", "2.28")
    assert "manylinux_2_34_x86_64" not in old and "manylinux_2_28_x86_64" in old and "manylinux1_x86_64" in old
    assert wh.manylinux_platforms("x86_64", None)[:3] == ["linux_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    with pytest.raises(InputError):
        wh.manylinux_platforms("x86_64", "two.thirty")


@pytest.mark.parametrize(("arch", "glibc"), [("x86_64", "2.35"), ("x86_64", "2.28"), ("x86_64", "2.12"),
                                             ("aarch64", "2.31"), ("aarch64", "2.17")])
def test_the_download_asks_for_every_platform_pip_on_the_target_supports(monkeypatch, arch, glibc) -> None:
    """`pip download --platform` takes the names it is given (a manylinux_2_N one is not widened to the older
    levels), so the wheelhouse names every platform packaging lists on the target: the list stopped at
    manylinux_2_17 on x86_64 (no manylinux_2_12 … 2_5 for a wheel that states only those) and named
    manylinux2014 for a glibc 2.12 host, which cannot load its wheels."""
    from tests.knowledge.test_tagfit import packaging_platforms

    version = tuple(int(x) for x in glibc.split("."))
    assert wh.manylinux_platforms(arch, glibc) == packaging_platforms(monkeypatch, arch, "glibc", version)


@pytest.fixture
def house(tmp_path: Path) -> Path:
    make_wheel(tmp_path / "wheels", "torch-npu", "2.7.1", requires=["torch==2.7.1+cpu"])
    make_wheel(tmp_path / "wheels", "torch", "2.7.1+cpu")
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "MindSpeed.bundle").write_bytes(b"# v2 git bundle\n")
    m = wh.Manifest(profile="p", target={"arch": "x86_64"}, git={"MindSpeed": {"bundle": "git/MindSpeed.bundle", "commit": "abc"}})
    wh.write(tmp_path, wh.scan(tmp_path, m))
    return tmp_path


def test_verify_accepts_an_intact_wheelhouse(house: Path) -> None:
    m = wh.verify(house)
    assert {a.kind for a in m.artifacts} == {"wheel", "bundle"}
    data = json.loads((house / "manifest.json").read_text())
    assert data["schema"] == "doctor.wheelhouse/1" and all(len(a["sha256"]) == 64 for a in data["artifacts"])


def test_tampered_wheel_is_refused(house: Path) -> None:
    w = next((house / "wheels").glob("torch_npu*.whl"))
    w.write_bytes(w.read_bytes() + b"x")
    with pytest.raises(RefusedError, match=r"torch_npu-2\.7\.1-py3-none-any\.whl: sha256 mismatch"):
        wh.verify(house)


def test_unlisted_file_is_refused(house: Path) -> None:
    make_wheel(house / "wheels", "torch", "2.7.1")  # a CUDA-looking torch slipped in: find-links would see it
    with pytest.raises(RefusedError, match="not in the manifest"):
        wh.verify(house)


def test_missing_file_is_refused(house: Path) -> None:
    next((house / "wheels").glob("torch-*.whl")).unlink()
    with pytest.raises(RefusedError, match="listed but missing"):
        wh.verify(house)


@pytest.mark.parametrize("bad", ["../outside.whl", "/etc/passwd", "wheels/../../x", "wheels\\x.whl", "wheels//x"])
def test_paths_cannot_escape(house: Path, bad: str) -> None:
    data = json.loads((house / "manifest.json").read_text())
    data["artifacts"].append({"path": bad, "sha256": "0" * 64, "size": 1})
    (house / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(RefusedError, match="path"):
        wh.verify(house)


def test_symlink_out_of_the_wheelhouse_is_refused(house: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "evil.whl"
    outside.write_bytes(b"evil")
    os.symlink(outside, house / "wheels" / "evil.whl")
    data = json.loads((house / "manifest.json").read_text())
    data["artifacts"].append({"path": "wheels/evil.whl", "sha256": wh.sha256_file(outside), "size": 4})
    (house / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(RefusedError, match="outside the wheelhouse"):
        wh.verify(house)


def test_bad_manifest_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no manifest.json"):
        wh.verify(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(InputError, match="manifest.json"):
        wh.verify(tmp_path)


def test_submodule_bundles_are_verified_like_the_rest(tmp_path: Path) -> None:
    subs = tmp_path / "git" / "vllm-ascend.submodules"
    subs.mkdir(parents=True)
    (tmp_path / "git" / "vllm-ascend.bundle").write_bytes(b"# v2 git bundle\n")
    (subs / "00-csrc_third_party_catlass.bundle").write_bytes(b"# v2 git bundle\n")
    entry = {"bundle": "git/vllm-ascend.bundle", "commit": "abc",
             "submodules": [{"path": "csrc/third_party/catlass", "commit": "def",
                             "bundle": "git/vllm-ascend.submodules/00-csrc_third_party_catlass.bundle"}]}
    m = wh.Manifest(profile="p", target={}, git={"vllm-ascend": entry})
    wh.write(tmp_path, wh.scan(tmp_path, m))
    assert wh.verify(tmp_path).git["vllm-ascend"]["submodules"][0]["path"] == "csrc/third_party/catlass"
    # a submodule bundle the artifact list does not hold is refused before anything is installed
    data = json.loads((tmp_path / "manifest.json").read_text())
    data["artifacts"] = [a for a in data["artifacts"] if "submodules" not in a["path"]]
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    (subs / "00-csrc_third_party_catlass.bundle").unlink()
    with pytest.raises(RefusedError, match="catlass"):
        wh.verify(tmp_path)
    # a malformed submodule entry is bad input (exit 2) naming where it is
    data["git"]["vllm-ascend"]["submodules"] = [{"path": "x"}]
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(InputError) as e:
        wh.load(tmp_path)
    assert e.value.path == "git.vllm-ascend.submodules[0]"
