"""Which marks an encoding gets ASCII stand-ins for, and when a stream writes every character."""

from __future__ import annotations

import io

from doctor.textenc import stand_ins, writes_everything


def stream(encoding: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding)


def test_only_what_the_encoding_lacks_is_replaced():
    gbk = stand_ins(stream("gbk"))
    assert "✗✓".translate(gbk) == "x+"
    assert "… — × →".translate(gbk) == "… — × →"  # GBK has them
    assert "[✗] a … b".translate(stand_ins(stream("ascii"))) == "[x] a ... b"
    assert stand_ins(stream("utf-8")) == {} and stand_ins(io.StringIO()) == {}


def test_writes_everything():
    assert writes_everything(stream("utf-8")) and writes_everything(stream("gb18030"))
    assert writes_everything(io.StringIO())  # no encoding: str as it is
    assert not writes_everything(stream("gbk")) and not writes_everything(stream("latin-1"))
