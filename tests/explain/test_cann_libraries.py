"""A library CANN's toolkit ships is CANN's when the loader cannot find it, whatever program asked for it.

libdummy_tls.so is built by CANN's opbase beside libnnopbase.so (hicann/opbase 79ed04c,
src/nnopbase/tls_guardian/CMakeLists.txt: add_library(dummy_tls SHARED ...)) and installed in the toolkit's lib64.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines


def test_libdummy_tls_missing_is_a_cann_library():
    # as https://github.com/gpustack/gpustack/issues/1393 quotes it (llama-box built against a newer CANN)
    fs = explain_lines(["/root/.local/share/pipx/venvs/gpustack/lib/python3.11/site-packages/gpustack/third_party/bin/"
                        "llama-box/llama-box: error while loading shared libraries: libdummy_tls.so: cannot open shared "
                        "object file:"])
    assert fs[0].id == "cann-library-missing" and fs[0].components[0] == "cann", (fs[0].id, fs[0].components)


def test_a_library_no_table_knows_stays_the_generic_one():
    fs = explain_lines(["./app: error while loading shared libraries: libfoo_unknown.so.3: cannot open shared object "
                        "file: No such file or directory"])
    assert fs[0].id != "cann-library-missing", fs[0].id


def test_the_shared_ownership_table_knows_it_too():
    from doctor.knowledge.ownership import owner_of_library

    own = owner_of_library("/usr/local/Ascend/ascend-toolkit/latest/lib64/libdummy_tls.so")
    assert own is not None and own.component == "cann", own
