from doctor.probes.path_entries import top_level_names


def test_what_a_plain_directory_holds_is_what_import_can_find_there(tmp_path):
    (tmp_path / "cachetools").mkdir()
    (tmp_path / "cachetools" / "__init__.py").write_text("")
    (tmp_path / "nsonly").mkdir()  # a namespace package: no __init__.py, import still finds it
    (tmp_path / "six.py").write_text("")
    (tmp_path / "_zmq.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (tmp_path / "not-a-name").mkdir()
    (tmp_path / "README.md").write_text("")
    assert top_level_names(str(tmp_path)) == {"cachetools", "nsonly", "six", "_zmq"}
    assert top_level_names(str(tmp_path / "gone")) == frozenset()
