"""Parse bash with tree-sitter-bash (a maintained bash grammar, MIT) and give the walker plain nodes.

tree-sitter and tree-sitter-bash come with the `launch` extra; without them `doctor lint` stops with exit 2
and names the extra. One grammar quirk is repaired here: tree-sitter-bash 0.23-0.25 folds a line of several
assignments (`A=1 B=2`) into the command on the *next* line (`A=1 B=2 export C=3` becomes one command with
`export` as its name). Bash ends the statement at the newline, so such a command is split back in two.

One grammar bug is guarded here: tree-sitter-bash's external scanner (0.23.3-0.25.1, tree-sitter-bash#337) reads
out of bounds on `{` followed by a 4-byte UTF-8 character and kills the interpreter with SIGSEGV on Linux. The
grammar gives every character above U+FFFF the same role (bash has no syntax outside ASCII), so each one is
handed to the parser as two 2-byte characters of the same class: the byte length, hence every node's offsets, is
unchanged, and node text is always cut from the script's own bytes, so what lint reports cannot change. (The
grammar never finds the end of a heredoc whose delimiter is not ASCII; an astral one now reads as a BMP one does.)

One more quirk is repaired the same way: in a simple command the grammar lexes `==` and `=~` as operator tokens, not
words, though bash passes them as arguments (`test "$X" == npu`: bash's test takes `==` for `=`). The walker, reading
a command's words, lost them (`test "$X" npu`, which compares nothing), and the scanner's state after one breaks
the next `case` arm's `)` into an ERROR node that swallows the script's first lines. Such a token is handed to the
parser as a word of the same length (`=_`), and its node text is the script's own `==` again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from doctor.errors import InputError, extra_install_command


def extra_hint() -> str:
    return f"{extra_install_command('launch')} (tree-sitter and tree-sitter-bash read the script)"

_PARSER: Any = None


class MissingDependency(InputError):
    """A package of an optional extra is not installed (exit 2, the message names the extra)."""

    finding_id = "extra-not-installed"  # the id every command's missing extra reports (doctor.errors)

    def __init__(self, message: str, **kw: Any) -> None:
        self.fix = extra_hint()
        super().__init__(message, **kw)


def parser() -> Any:
    global _PARSER
    if _PARSER is None:
        try:
            import tree_sitter
            import tree_sitter_bash
        except ImportError as e:
            raise MissingDependency(f"{e.name or 'tree-sitter'} is not installed; {extra_hint()}") from None
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


@dataclass
class Node:
    """A tree-sitter node reduced to what the walker needs (type, field name, text, children, line)."""

    type: str
    text: str
    line: int  # 1-based
    children: list[Node]
    field: str | None = None
    start: int = 0
    end: int = 0
    is_named: bool = True

    def child(self, field: str) -> Node | None:
        return next((c for c in self.children if c.field == field), None)

    def all(self, field: str) -> list[Node]:
        return [c for c in self.children if c.field == field]

    @property
    def named(self) -> list[Node]:
        """Children that are not punctuation or keywords (tree-sitter's named nodes)."""
        return [c for c in self.children if c.is_named]


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _placeholder(m: re.Match[str]) -> str:
    """Two 2-byte characters (4 UTF-8 bytes, like the astral one) that keep its alphanumeric class."""
    return "\u00aa\u00aa" if m.group().isalnum() else "\u00a6\u00a6"


def parser_bytes(text: str) -> bytes:
    """The bytes handed to tree-sitter: the script's UTF-8 with astral characters mapped (see the module doc)."""
    return _ASTRAL.sub(_placeholder, text).encode("utf-8")


_OPERATOR_WORDS = frozenset({"==", "=~"})  # operator tokens of a simple command that bash reads as words


def _operator_words(n: Any) -> list[tuple[int, int]]:
    """The byte ranges of the `==` / `=~` tokens tree-sitter made children of a simple command (see the module doc);
    not those of `[[ … ]]`, `[ … ]` or `(( … ))`, which are operators there."""
    out: list[tuple[int, int]] = []
    stack = [n]
    while stack:
        node = stack.pop()
        if node.type == "command":
            out += [(c.start_byte, c.end_byte) for c in node.children if not c.is_named and c.type in _OPERATOR_WORDS]
        stack.extend(node.children)
    return out


def parse(text: str) -> Node:
    """The whole script as a Node tree (byte offsets are converted to str offsets)."""
    data = text.encode("utf-8")
    src = parser_bytes(text) if _ASTRAL.search(text) else data
    tree = parser().parse(src)
    spots = _operator_words(tree.root_node)
    if spots:  # parsed again with each such token as a word: the same bytes' length, the same offsets
        buf = bytearray(src)
        for start, end in spots:
            buf[start:end] = b"=_"
        tree = parser().parse(bytes(buf))
    if len(data) == len(text):
        offsets = None
    else:  # byte offset -> str offset, for scripts with non-ASCII text
        offsets = [0] * (len(data) + 1)
        pos = 0
        for i, ch in enumerate(text):
            for _ in range(len(ch.encode("utf-8"))):
                offsets[pos] = i
                pos += 1
        offsets[pos] = len(text)
    return _convert(tree.root_node, data, None, offsets)


def _convert(n: Any, data: bytes, field: str | None, offsets: list[int] | None) -> Node:
    kids = [_convert(c, data, n.field_name_for_child(i), offsets) for i, c in enumerate(n.children)]
    start, end = (n.start_byte, n.end_byte) if offsets is None else (offsets[n.start_byte], offsets[n.end_byte])
    node = Node(n.type if not n.is_missing else "MISSING", data[n.start_byte:n.end_byte].decode("utf-8", "replace"),
                n.start_point[0] + 1, kids, field, start, end, bool(n.is_named))
    if node.type in ("program", "compound_statement", "do_group", "if_statement", "elif_clause", "else_clause",
                     "case_item", "subshell"):
        node.children = _split_folded(node.children)
    return node


def _split_folded(children: list[Node]) -> list[Node]:
    """Undo the grammar's folding of `A=1 B=2 <newline> cmd` into one command (see the module doc)."""
    out: list[Node] = []
    for c in children:
        if c.type != "command":
            out.append(c)
            continue
        name_at = next((i for i, k in enumerate(c.children) if k.type == "command_name"), None)
        if name_at is None or name_at == 0 or c.children[name_at - 1].type != "variable_assignment":
            out.append(c)
            continue
        prev, name = c.children[name_at - 1], c.children[name_at]
        gap = c.text[prev.end - c.start:name.start - c.start]
        if "\n" not in gap.replace("\\\n", ""):
            out.append(c)
            continue
        out.append(Node("variable_assignments", c.text[:prev.end - c.start], c.line, c.children[:name_at], c.field,
                        c.start, prev.end))
        rest = c.children[name_at:]
        out.append(Node("command", c.text[name.start - c.start:], name.line, rest, c.field, name.start, c.end))
    return out


def leaf_text(n: Node) -> bool:
    """True when a node (typically ERROR) holds only punctuation/word leaves: its text can stand literally."""
    return all(not k.children and k.type not in ("$", "${", "$(", "`", "$((") for k in n.children)
