"""Probe parsers: arbitrary and mutated real inputs return a value (or a recorded error), never raise."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.probes import _target_probe as target
from doctor.probes import ascend_files, hccn_parse, npu_smi

from ._budget import fuzz

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


def _samples(sub: str, pattern: str) -> list[str]:
    d = FIXTURES / sub
    return [p.read_text(errors="replace") for p in sorted(d.glob(pattern))] if d.is_dir() else []


NPU_SMI = _samples("npu-smi", "*.txt") or ["+---+\n| NPU Name | Health |\n"]
INFO = _samples("info", "*.info") + _samples("info", "*.cfg") or ["Version=8.3.RC1\n"]
HCCN_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "hccn"
HCCN = [p.read_text(errors="replace") for p in sorted(HCCN_DIR.iterdir()) if p.name != "SOURCES.md"]


@st.composite
def mutated(draw, corpus):
    """A real sample cut, spliced, with lines dropped/duplicated and random bytes inserted."""
    text = draw(st.sampled_from(corpus))
    lines = text.splitlines()
    ops = draw(st.lists(st.tuples(st.sampled_from("dcitr"), st.integers(0, max(len(lines), 1))), max_size=6))
    for op, i in ops:
        if not lines:
            break
        i %= len(lines)
        if op == "d":
            del lines[i]
        elif op == "c":
            lines.insert(i, lines[i])
        elif op == "i":
            lines.insert(i, draw(st.text(max_size=30)))
        elif op == "t":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        else:
            lines[i] = lines[i].replace("|", draw(st.sampled_from(["", "||", "| |", "+"])))
    return "\n".join(lines)


@fuzz
@given(st.one_of(st.text(max_size=400), mutated(NPU_SMI)))
def test_npu_smi_parsers(text):
    info = npu_smi.parse_info(text)
    assert isinstance(info, dict)
    assert isinstance(npu_smi.parse_board(text), dict)


@fuzz
@given(st.one_of(st.text(max_size=300), mutated(HCCN)), st.sampled_from([None, 0, 1, 13, -9]))
def test_hccn_tool_parsers(text, rc):
    for parse in (hccn_parse.parse_link, hccn_parse.parse_ip, hccn_parse.parse_net_health, hccn_parse.parse_speed,
                  hccn_parse.parse_link_stat, hccn_parse.parse_optical, hccn_parse.parse_gateway):
        out = parse(text)
        assert isinstance(out, dict) and out
    ping = hccn_parse.parse_ping(text, rc)
    assert ping["ok"] in (True, False, None)
    conf = hccn_parse.parse_hccn_conf(text)
    assert all(isinstance(k, int) and isinstance(v, dict) for k, v in conf["devices"].items())


@fuzz
@given(st.one_of(st.text(max_size=300), mutated(INFO)), st.sampled_from(["toolkit", "driver", "nnal", "kernels", "firmware", "x"]))
def test_version_file_parsers(text, kind):
    assert isinstance(ascend_files.parse_kv(text), dict)
    assert isinstance(ascend_files.parse_colon_kv(text), dict)
    v = ascend_files.parse_version_cfg(text)
    assert v is None or isinstance(v, str)
    ascend_files.parse_version_file(kind, text)
    ascend_files.nnal_version(text)
    ascend_files.soc_from_ops_package(text[:60])


@fuzz
@given(st.one_of(st.text(max_size=200),
                 st.lists(st.sampled_from(["__device_type__ = 'A2'", "__soc_version__ = 'ascend910b1'",
                                           "__sleep_mode_enabled__ = True", "x: str = 'y'", "cuda = None",
                                           "__version__ = '2.5.1+cpu'", "git_version = b'x'", "def f(:", "a = [1",
                                           "import os", "a = b = 'c'", "\x00", "'''"]), max_size=6).map("\n".join)))
def test_build_info_reader(text):
    out = target.simple_assignments(text)
    assert isinstance(out, dict)
    assert all(isinstance(v, (str, int, float, bool, type(None))) for v in out.values())


_LINE_ENDS = st.text(alphabet=["\r", "\n", "a", " ", ":", "\t"], max_size=40)


@fuzz
@given(_LINE_ENDS)
def test_header_end_is_where_the_first_blank_line_starts(text):
    """The str.find search for the end of METADATA's headers finds what `\\r?\\n\\r?\\n` finds first."""
    import re

    m = re.search(r"\r?\n\r?\n", text)
    assert target._header_end(text) == (m.start() if m else -1)


@fuzz
@given(st.text(alphabet=["a", "/", ",", '"', "\r", "\n", ".", "_"], max_size=60))
def test_record_rows_give_their_first_path_segment(text):
    """Each RECORD row gives its first segment and whether a '/' follows, however the row goes on."""
    import re

    rows = re.compile(r'^"?([^/,\r\n"]*)(/?)', re.M)
    assert set(target._RECORD_HEAD.findall(text)) == set(rows.findall(text))


_HEADER_LINE = st.one_of(
    st.tuples(st.sampled_from(["Name", "Version", "Requires-Dist", "requires-dist", "Requires-Python", "X"]),
              st.text(alphabet=["a", " ", "\t", ":", ";", "=", ">", "1", "."], max_size=12))
    .map(lambda kv: f"{kv[0]}:{kv[1]}"),
    st.text(alphabet=["a", "1", "."], min_size=1, max_size=6).map(lambda t: " " + t),  # a continuation line
)


@fuzz
@given(st.lists(_HEADER_LINE, min_size=1, max_size=12).filter(lambda ls: not ls[0].startswith(" ")))
def test_metadata_headers_read_as_the_email_package_reads_them(lines):
    """METADATA's header block gives every name's values as email's compat32 parser gives them (what
    `importlib.metadata`'s `dist.metadata` is built on): case-insensitive, in order, continuation lines kept."""
    from email.parser import HeaderParser
    from email.policy import compat32

    text = "\n".join(lines) + "\n"
    message = HeaderParser(policy=compat32).parsestr(text)
    headers = target._Headers(text)
    for name in ("Name", "Version", "Requires-Dist", "Requires-Python", "X"):
        assert headers.get_all(name) == message.get_all(name)


class _Dist:
    """A distribution whose RECORD is the fuzzed text (read the way `_read_dist_text` reads a non-path dist)."""

    def __init__(self, record):
        self.record = record

    def read_text(self, name):
        return self.record if name == "RECORD" else None


@fuzz
@given(st.text(alphabet=["p", "/", ",", '"', "\r", "\n", "=", "s", "_", "."], max_size=80),
       st.text(alphabet=["p", "/", ",", '"', "\n", "=", "t"], max_size=80))
def test_shared_files_of_any_two_records_are_counted_never_raised(a, b):
    """Two RECORDs claiming `p`, whatever their text: the shared paths are counted (differ <= files), never raised,
    and the item reads back through to_snapshot_parts into a loadable snapshot."""
    from doctor.probes.pyenv import to_snapshot_parts
    from doctor.snapshot.model import snapshot_from_dict

    target._ERRORS[:] = []
    pairs = [({"name": "a", "location": "/nonexistent", "top_level": ["p"]}, _Dist(a)),
             ({"name": "b", "location": "/nonexistent", "top_level": ["p"]}, _Dist(b))]
    items = target.shared_files(pairs)
    for it in items:
        assert 0 <= it["differ"] <= it["files"] and len(it["examples"]) <= 3
        assert it.get("on_disk") is None  # no such file to hash
    parts = to_snapshot_parts({"python": {"shared_files": items + [{"dists": "x"}, 7]}})
    assert len(parts["python"]["shared_files"]) == len(items)
    snapshot_from_dict({"schema": "doctor.snapshot/1", **parts}, source="fuzz.json")


@fuzz
@given(st.lists(st.sampled_from(["p", "/", ",", '"', "\r", "\n", "=", "s", "_", ".", "./", "/nonexistent/", "/x/"]),
                max_size=30).map("".join),
       st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=4),
                          st.dictionaries(st.sampled_from(["dist", "version", "top_level", "files", "missing",
                                                           "examples", "location", "imports_from"]),
                                          st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                                                    st.lists(st.one_of(st.text(max_size=4), st.integers()), max_size=3)),
                                          max_size=8)), max_size=3))
def test_missing_files_of_any_record_are_counted_never_raised(record, junk):
    """A distribution whose top-level `p` is not on disk, whatever its RECORD says (`./` prefixes, absolute paths
    under its directory or elsewhere, quoting): the files listed under `p` are all missing, never raised; the items,
    and arbitrary junk next to them, read back through to_snapshot_parts into a loadable snapshot."""
    from doctor.probes.pyenv import to_snapshot_parts
    from doctor.snapshot.model import snapshot_from_dict

    target._ERRORS[:] = []
    pairs = [({"name": "a", "version": "1", "location": "/nonexistent", "top_level": ["p"], "editable": False,
               "dist_info": "/nonexistent/a-1.dist-info"}, _Dist(record))]
    items = target.missing_files(pairs)
    for it in items:
        assert 0 < it["missing"] == it["files"] and len(it["examples"]) <= 3
        assert all(p == "p" or p.startswith(("p/", "p.")) for p in it["examples"])
    parts = to_snapshot_parts({"python": {"missing_files": items + junk}})
    assert len(parts["python"]["missing_files"]) >= len(items)
    snapshot_from_dict({"schema": "doctor.snapshot/1", **parts}, source="fuzz.json")


@fuzz
@given(st.lists(st.sampled_from(["p", "/", ",", '"', "\r", "\n", "=", "sha256", "_", ".", "./", "../", "/site/",
                                 "/x/", "__pycache__/", ".pyc", "12", "-1"]), max_size=30).map("".join))
def test_record_rows_of_any_record_are_inside_the_site_directory_never_raised(record):
    """Whatever a RECORD says (`./` and `../` prefixes, absolute paths under the site directory or elsewhere, quoting,
    sizes that are no number): the rows verify_files compares are relative paths inside the directory, with a
    digest, never compiled files."""
    rows, outside = target._record_rows(record, "/site")
    assert outside >= 0
    for path, algorithm, _digest, size in rows:
        assert not path.startswith(("/", "../")) and "__pycache__/" not in path and not path.endswith(".pyc")
        assert algorithm == algorithm.lower() and (size is None or size >= 0)


_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["seconds", "budget", "dists", "skipped", "dist", "version", "location", "files", "bytes",
                         "modified", "shared", "binary", "missing", "unverified", "unverified_bytes", "outside",
                         "examples", "missing_examples", "path", "size", "expected_size", "kind", "also", "why"]),
        children, max_size=6),
    max_leaves=25)


@fuzz
@given(_JUNK)
def test_the_verified_files_reader_on_any_answer_gives_a_loadable_section_or_none(doc):
    """The probe's `verify_files` answer, however mangled (an old probe, a hand-edited document): None, or what the
    model loads (rule 14), never raised."""
    from doctor.probes.pyenv import verified_files
    from doctor.snapshot.loader import section_from_dict
    from doctor.snapshot.model import VerifiedFiles

    got = verified_files(doc)
    if got is not None:
        section_from_dict(VerifiedFiles, got, "python.verified_files")


_PIP_CONF = ["[global]\nbreak-system-packages = true\n", "[install]\ntarget = /opt/deps\n", "[global]\nprefix=/p\n",
             "[uninstall]\nbreak_system_packages = no\n", "[install]\nroot = /r\nrequire-venv = 1\n"]


@fuzz
@given(mutated(_PIP_CONF), st.dictionaries(st.sampled_from(["PIP_TARGET", "PIP_PREFIX", "PIP_ROOT",
                                                             "PIP_BREAK_SYSTEM_PACKAGES", "PIP_REQUIRE_VIRTUALENV"]),
                                            st.text(max_size=12), max_size=3))
def test_pips_configuration_of_any_file_and_environment_is_read_never_raised(conf, environ):
    import tempfile

    from doctor.probes.pipconf import install_elsewhere, pip_override

    with tempfile.TemporaryDirectory() as d:
        Path(d, "pip.conf").write_text(conf, errors="replace")
        env = {"HOME": d, "XDG_CONFIG_DIRS": d + "/none", "PIP_CONFIG_FILE": str(Path(d, "pip.conf")), **environ}
        found, errors = pip_override(env, d)
        assert set(found) <= {"install", "uninstall"} and isinstance(errors, list)
        where = install_elsewhere(env, d)
        assert where is None or isinstance(where, str)


@fuzz
@given(st.lists(st.sampled_from(["hosts:", "files", "dns", "[NOTFOUND=return]", "#", "passwd: files", "\t", " ", "\n",
                                 "127.0.1.1", "node-0", "NODE-0", "::1", "10.0.0.5", "myhostname", "["]),
                max_size=24).map("".join), st.sampled_from(["node-0", "Node-0", "n"]))
def test_hosts_and_nsswitch_lines_of_any_shape_give_the_hostname_addresses(text, hostname):
    """/etc/hosts and nsswitch.conf of any shape: the hostname's addresses come back as first columns of the file's
    lines, each once; the nsswitch answer is a bool or None; never an exception."""
    from doctor.probes.network import parse_hosts_addresses, parse_nsswitch_hosts_files_first

    got = parse_hosts_addresses(text, hostname)
    firsts = [ln.split("#", 1)[0].split()[0] for ln in text.splitlines() if ln.split("#", 1)[0].split()]
    assert len(set(got)) == len(got) and all(a in firsts for a in got)
    assert parse_nsswitch_hosts_files_first(text) in (True, False, None)
