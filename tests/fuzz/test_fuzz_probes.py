"""Probe parsers: arbitrary and mutated real inputs return a value (or a recorded error), never raise."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.probes import _netlink, ascend_files, hccn_parse, npu_smi
from doctor.probes import _target_probe as target

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


def _nl_msg(kind, payload):
    import struct

    raw = struct.pack("=IHHII", 16 + len(payload), kind, 2, 1, 0) + payload
    return raw + b"\0" * (-len(raw) % 4)


def _nl_rta(kind, data):
    import struct

    raw = struct.pack("=HH", 4 + len(data), kind) + data
    return raw + b"\0" * (-len(raw) % 4)


def _netlink_reply():
    """A well-formed RTM_GETLINK + RTM_GETADDR dump for one interface, as the kernel sends it."""
    import socket
    import struct

    link = struct.pack("=BxHiII", 0, 1, 2, 0x41, 0) + _nl_rta(_netlink.IFLA_IFNAME, b"eth0\0")
    a4 = struct.pack("=BBBBI", socket.AF_INET, 24, 0, 0, 2) + _nl_rta(_netlink.IFA_LOCAL, bytes([192, 0, 2, 2]))
    a6 = struct.pack("=BBBBI", socket.AF_INET6, 64, 0, 0, 2) + _nl_rta(_netlink.IFA_ADDRESS, bytes(15) + b"\1")
    return (_nl_msg(_netlink.RTM_NEWLINK, link) + _nl_msg(_netlink.RTM_NEWADDR, a4) + _nl_msg(_netlink.RTM_NEWADDR, a6)
            + _nl_msg(_netlink.NLMSG_DONE, bytes(4)))


@st.composite
def mutated_bytes(draw, sample):
    data = bytearray(sample)
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        op = draw(st.sampled_from("fdit"))
        if not data:
            break
        if op == "f":
            data[i] = draw(st.integers(0, 255))
        elif op == "d":
            del data[i]
        elif op == "i":
            data[i:i] = draw(st.binary(max_size=8))
        else:
            del data[i:]
    return bytes(data)


@fuzz
@given(st.one_of(st.binary(max_size=600), mutated_bytes(_netlink_reply())))
def test_netlink_parsers(data):
    """Kernel replies, cut and flipped: messages or an OSError, and every link/address is data or None."""
    try:
        msgs = _netlink.parse_messages(data)
    except OSError:
        return
    for _kind, payload in msgs:
        link = _netlink.parse_link(payload)
        assert link is None or (isinstance(link[0], int) and isinstance(link[1], str))
        addr = _netlink.parse_addr(payload)
        assert addr is None or isinstance(addr[1], str)


class _Header:
    """What the probe asks of a distribution, answering with fuzzed METADATA text."""

    def __init__(self, text):
        self.text = text

    def read_header(self, fname):
        return self.text if fname == "METADATA" else None

    @property
    def metadata(self):
        raise ValueError("no parser here")


@fuzz
@given(st.one_of(st.text(max_size=300),
                 st.lists(st.sampled_from(["Metadata-Version: 2.1", "Name: torch-npu", "Version: 2.5.1.post1", "name:x",
                                           "VERSION: 1", "", "\r", "Summary: a\n\nName: late", "\x00", "Name:"]),
                          max_size=8).map("\n".join)))
def test_metadata_header_reader(text):
    name, version = target._name_version(_Header(text))
    assert name is None or isinstance(name, str)
    assert version is None or isinstance(version, str)
