"""`undefined symbol: NAME, version NODE`: glibc's ld.so (elf/dl-lookup.c, glibc 2.38) appends ", version NODE" for a
versioned reference. The library the loader bound defines NODE without NAME: an older copy found first on the
loader's path. Read by attribution alone (the generic database), whatever printed the line."""

from __future__ import annotations

from tests.explain.generic import errors


def test_a_versioned_symbol_the_bound_library_lacks_is_the_loader_path_and_the_librarys_owner():
    # ld.so's format for an executable: "<prog>: symbol lookup error: <object>: undefined symbol: <name>, version <node>"
    (f,) = errors(["python3: symbol lookup error: /opt/app/libfoo.so: undefined symbol: cublasLtCreate, version "
                   "libcublasLt.so.12"])
    assert f.id == "symbol-version-not-found" and f.components == ("env", "system")
    assert "libcublasLt.so.12" in f.title and "dl-lookup.c" in f.source
    # a node of a library a package ships: that package
    (g,) = errors(["ImportError: /opt/app/ext.so: undefined symbol: aclrtNewApi, version libascendcl.so"])
    assert g.components == ("env", "cann")
    # the C++ runtime's node: the system's libstdc++
    (h,) = errors(["ImportError: /opt/app/ext.so: undefined symbol: _ZSt28__throw_bad_array_new_lengthv, version "
                   "GLIBCXX_3.4.29"])
    assert h.components == ("env", "system") and "C / C++ runtime" in h.evidence["read"]


def test_an_unversioned_undefined_symbol_keeps_its_owners_reading():
    # no version node: the symbol's namespace (torch's c10::) still names whose release the code was built against
    (f,) = errors(["ImportError: /opt/app/ext.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"])
    assert f.id == "native-symbol-mismatch" and f.components[0] == "torch"


def test_a_version_node_the_found_library_lacks_is_that_librarys_owner_and_the_env():
    # glibc elf/dl-version.c: "version `%s' not found (required by %s)" after the library that lacks it
    (f,) = errors(["./train_ext: /usr/lib64/libstdc++.so.6: version `CXXABI_1.3.13' not found (required by "
                   "./train_ext)"])
    assert f.id == "version-node-not-found" and f.components == ("system", "env")
    assert "CXXABI_1.3.13" in f.title and "dl-version.c" in f.source
    # quotes lost in a paste, the object wrapped onto the next line, inside a Python ImportError
    (g,) = errors(["ImportError: /opt/conda/lib/libstdc++.so.6: version GLIBCXX_3.4.32 not found",
                   "    (required by /opt/app/ext.cpython-311-x86_64-linux-gnu.so)"])
    assert g.id == "version-node-not-found" and g.components == ("system", "env")
    # a library a package ships: that package
    (h,) = errors(["ImportError: /usr/local/Ascend/ascend-toolkit/latest/lib64/libhccl.so: version `HCCL_8.0' not "
                   "found (required by /opt/app/libcomm.so)"])
    assert h.components == ("cann", "env")
    # a release that is not found is no version node
    assert all(x.id != "version-node-not-found" for x in errors(["ERROR: version 1.2.3 not found in the index"]))
