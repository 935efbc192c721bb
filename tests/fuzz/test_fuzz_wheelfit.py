"""What `doctor install --set` reads of a served file when the plan is made (installers/wheelfit.py, setcheck.py): a
local PEP 503 project page (links and their data-requires-python) and a file's own METADATA / PKG-INFO. A mirror or a wheelhouse
is someone else's file: whatever it holds, the readers return offers (or "not read") and the fit is judged, never
an exception (which would be exit 2 as an internal error instead of a plan)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.installers.setcheck import index_offers
from doctor.installers.wheelfit import Offer, TargetPython, judge, python_admits, requires_python

from ._budget import fuzz

NAMES = st.sampled_from([
    "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "numpy-1.21.6.zip",
    "numpy-2.3.0-cp313-cp313t-musllinux_1_2_aarch64.whl", "numpy-1.26.4.tar.gz", "numpy-1.0-py3-none-any.whl",
    "numpy-1.0-cp311-abi3-linux_aarch64.whl", "numpy-x-y-z.whl", "numpy-1.0-1-py3-none-any.whl", "numpy.whl"])
SPECS = st.one_of(st.none(), st.text(max_size=20), st.sampled_from([
    ">=3.7,<3.11", "&gt;=3.9", ">=3.10.4", "~=3", "==3.11.*", "!=", ">=3.11.0", ">= 3.8", "<4"]))
TARGETS = st.builds(TargetPython, st.sampled_from(["3.10", "3.11.7", "3.9.18", "3.12"]),
                    st.sampled_from(["x86_64", "aarch64"]), st.sampled_from([None, "2.17", "2.27", "2.36"]))


@fuzz
@given(links=st.lists(st.tuples(st.one_of(NAMES, st.text(max_size=30)), SPECS), max_size=6),
       junk=st.text(max_size=60), target=TARGETS)
def test_a_local_index_page_reads_to_offers_whatever_it_holds(tmp_path_factory, links, junk, target) -> None:
    root = tmp_path_factory.mktemp("simple")
    (root / "numpy").mkdir()
    body = "".join(f'<a href="{h}"' + (f' data-requires-python="{rp}"' if rp is not None else "") + f">{h}</a>{junk}\n"
                   for h, rp in links)
    (root / "numpy" / "index.html").write_text(f"<html><body>{junk}\n{body}</body></html>", encoding="utf-8",
                                               errors="surrogatepass")
    offers = index_offers(str(root), "numpy")
    assert offers is not None and all(isinstance(o, Offer) for o in offers)
    fits, why = judge(offers, target)
    assert fits in (True, False, None) and isinstance(why, str)


@fuzz
@given(meta=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))),
       top=st.booleans(), packed=st.booleans(),
       kind=st.sampled_from(["numpy-1.0-py3-none-any.whl", "numpy-1.0.zip", "numpy-1.0.tar.gz"]))
def test_a_files_metadata_reads_to_a_requires_python_or_not_read(tmp_path_factory, meta, top, packed, kind) -> None:
    f = Path(tmp_path_factory.mktemp("dist")) / kind
    member = ("numpy-1.0.dist-info/METADATA" if kind.endswith(".whl") else "numpy-1.0/PKG-INFO")
    member = member if top else "x/" + member
    if not packed:
        f.write_bytes(meta)
    elif kind.endswith(".tar.gz"):
        with tarfile.open(f, "w:gz") as t:
            info = tarfile.TarInfo(member)
            info.size = len(meta)
            t.addfile(info, io.BytesIO(meta))
    else:
        with zipfile.ZipFile(f, "w") as z:
            z.writestr(member, meta)
    rp, read = requires_python(str(f))
    assert (rp is None or isinstance(rp, str)) and isinstance(read, bool)
    assert python_admits(rp, "3.11") in (True, False, None)
