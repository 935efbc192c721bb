"""Read an existing verl launch script into the overrides `main_ppo` would receive — without running it.

A small bash word reader (not a shell): line continuations, comments, single/double quotes and backslash
escapes, `VAR=value` / `export VAR=value` assignments, `${VAR:-default}` / `${VAR}` / `$VAR`, bash arrays
`NAME=(...)` / `NAME+=(...)` expanded by `"${NAME[@]}"`, and the `python3 -m verl.trainer.main_ppo` (or
`main_ppo.py`) invocation with `--config-name`. shlex cannot be used for the words themselves: its POSIX
mode drops the quote kind, and whether `$HOME` expands depends on it. Each resulting argument is what
Python's argv would hold; `shlex.split` semantics are matched for quoting (tests compare the two).
Nothing is executed: `$(…)`, backticks and variables the script does not define stay literal and are
reported as unresolved; `"$@"` (pass-through arguments) is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doctor.errors import InputError
from doctor.launch.override_list import Override, parse_override

Part = tuple[str, bool]  # (text, expandable)
_OPS = (";;", "&&", "||", ">>", ">&", "&>", "<<", ";", "&", "|", "(", ")", "<", ">")
_REDIRECTS = (">>", ">&", "&>", "<<", "<", ">")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_ENTRY = ("verl.trainer.main_ppo",)
_ENTRY_FILES = ("main_ppo.py",)


@dataclass
class Word:
    parts: list[Part]
    line: int

    @property
    def raw(self) -> str:
        return "".join(t for t, _ in self.parts)


@dataclass
class Op:
    op: str
    line: int


@dataclass
class Invocation:
    line: int
    config_name: str | None = None
    config_path: str | None = None
    args: list[str] = field(default_factory=list)
    overrides: list[Override] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    passthrough: bool = False  # "$@" was given


@dataclass
class ParsedScript:
    invocations: list[Invocation]
    variables: dict[str, str | list[str]]
    unresolved: list[str]


class _Lexer:
    def __init__(self, text: str, source: str) -> None:
        self.s = text
        self.i = 0
        self.line = 1
        self.source = source
        self.tokens: list[Word | Op] = []
        self.parts: list[Part] = []
        self.word_line = 1
        self.in_word = False

    def error(self, msg: str) -> InputError:
        return InputError(msg, source=self.source, path=f"line {self.line}")

    def add(self, text: str, expandable: bool) -> None:
        if not self.in_word:
            self.in_word, self.word_line = True, self.line
        if self.parts and self.parts[-1][1] == expandable:
            self.parts[-1] = (self.parts[-1][0] + text, expandable)
        else:
            self.parts.append((text, expandable))

    def end_word(self) -> None:
        if self.in_word:
            self.tokens.append(Word(self.parts, self.word_line))
        self.parts, self.in_word = [], False

    def span(self, open_: str, close: str) -> str:
        """From s[i] (just after the opener) to the matching closer; returns the inner text incl. closer."""
        depth, start = 1, self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "\n":
                self.line += 1
            if c == "'" and open_ == "(":
                j = self.s.find("'", self.i + 1)
                if j < 0:
                    break
                self.line += self.s.count("\n", self.i, j)
                self.i = j + 1
                continue
            if c == open_ and open_ != close:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return self.s[start:self.i]
            self.i += 1
        raise self.error(f"unterminated '{open_}'")

    def dollar(self) -> str:
        """s[i] is '$': consume a $(...), ${...} or $NAME reference, return its text."""
        s, i = self.s, self.i
        if s.startswith("$(", i):
            self.i += 2
            return "$(" + self.span("(", ")")
        if s.startswith("${", i):
            self.i += 2
            return "${" + self.span("{", "}")
        self.i += 1
        return "$"

    def run(self) -> list[Word | Op]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
                if nxt == "\n":
                    self.line += 1
                elif nxt:
                    self.add(nxt, False)
                self.i += 2
            elif c in " \t\r":
                self.end_word()
                self.i += 1
            elif c == "\n":
                self.end_word()
                self.tokens.append(Op("\n", self.line))
                self.line += 1
                self.i += 1
            elif c == "#" and not self.in_word:
                j = s.find("\n", self.i)
                self.i = len(s) if j < 0 else j
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    raise self.error("unterminated single quote")
                self.add(s[self.i + 1:j], False)
                self.line += s.count("\n", self.i, j)
                self.i = j + 1
            elif c == '"':
                self.i += 1
                self.add("", False)
                self.double_quoted()
            elif c == "$":
                self.add(self.dollar(), True)
            elif c == "`":
                j = self.i + 1
                while j < len(s) and s[j] != "`":
                    j += 2 if s[j] == "\\" else 1
                if j >= len(s):
                    raise self.error("unterminated backtick")
                self.add(s[self.i:j + 1], True)
                self.line += s.count("\n", self.i, j)
                self.i = j + 1
            elif c in ";&|()<>":
                if c in "<>" and self.in_word and all(t.isdigit() for t, _ in self.parts):
                    self.parts, self.in_word = [], False  # "2>" : file descriptor number
                self.end_word()
                for op in _OPS:
                    if s.startswith(op, self.i):
                        self.tokens.append(Op(op, self.line))
                        self.i += len(op)
                        break
            else:
                self.add(c, True)
                self.i += 1
        self.end_word()
        return self.tokens

    def double_quoted(self) -> None:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] == "\n":
                    self.line += 1
                else:
                    self.add(s[self.i + 1], False)
                self.i += 2
            elif c == "$":
                self.add(self.dollar(), True)
            elif c == "`":
                j = s.find("`", self.i + 1)
                if j < 0:
                    raise self.error("unterminated backtick")
                self.add(s[self.i:j + 1], True)
                self.i = j + 1
            else:
                if c == "\n":
                    self.line += 1
                self.add(c, False if c in "~" else True)
                self.i += 1
        raise self.error("unterminated double quote")


class _Expander:
    def __init__(self) -> None:
        self.vars: dict[str, str | list[str]] = {}
        self.unresolved: list[str] = []

    def note(self, name: str) -> None:
        if name not in self.unresolved:
            self.unresolved.append(name)

    def scalar(self, name: str) -> str | None:
        v = self.vars.get(name)
        if isinstance(v, list):
            return v[0] if v else ""
        return v

    def expand_text(self, text: str) -> str:
        """Expand $-references in `text` (already known to be expandable)."""
        out: list[str] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == "`":
                j = text.find("`", i + 1)
                j = len(text) - 1 if j < 0 else j
                self.note(text[i:j + 1])
                out.append(text[i:j + 1])
                i = j + 1
                continue
            if c != "$":
                out.append(c)
                i += 1
                continue
            if text.startswith("$(", i):
                depth, j = 0, i + 1
                while j < len(text):
                    if text[j] == "(":
                        depth += 1
                    elif text[j] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                self.note(text[i:j + 1])
                out.append(text[i:j + 1])
                i = j + 1
                continue
            if text.startswith("${", i):
                depth, j = 0, i + 1
                while j < len(text):
                    if text[j] == "{":
                        depth += 1
                    elif text[j] == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                out.append(self.brace(text[i + 2:j], text[i:j + 1]))
                i = j + 1
                continue
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", text[i + 1:])
            if not m:
                out.append("$")
                i += 1
                continue
            name = m.group(0)
            val = self.scalar(name) if _NAME.match(name) else None
            if val is None:
                self.note("$" + name)
                out.append("$" + name)
            else:
                out.append(val)
            i += 1 + len(name)
        return "".join(out)

    def brace(self, inner: str, literal: str) -> str:
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?$", inner, re.S)
        if not m:
            self.note(literal)
            return literal
        name, op, arg = m.group(1), m.group(2), m.group(3)
        val = self.scalar(name)
        if op is None:
            if val is None:
                self.note(literal)
                return literal
            return val
        empty_counts = op.startswith(":")
        unset = val is None or (empty_counts and val == "")
        kind = op[-1]
        if kind in "-=":
            if unset:
                d = self.expand_text(arg)
                if kind == "=":
                    self.vars[name] = d
                return d
            return val or ""
        if kind == "+":
            return "" if unset else self.expand_text(arg)
        if unset:  # ${X:?msg}
            self.note(literal)
            return literal
        return val or ""

    def expand_word(self, w: Word) -> list[str]:
        """A word -> its argv words (arrays and "$@" can give several or none)."""
        raw = w.raw
        whole = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}", raw)
        if whole and len([p for p in w.parts if p[0]]) == 1:
            v = self.vars.get(whole.group(1))
            if isinstance(v, list):
                return list(v)
            if isinstance(v, str):
                return [v]
            self.note(raw)
            return [raw]
        if raw in ("$@", "$*", "${@}", "${*}"):
            return []
        return ["".join(self.expand_text(t) if exp else t for t, exp in w.parts)]


def _statements(tokens: list[Word | Op]) -> list[list[Word | Op]]:
    """Split on separators; keep `NAME=( ... )` arrays (which may span lines) inside one statement."""
    out: list[list[Word | Op]] = []
    cur: list[Word | Op] = []
    depth = 0
    for t in tokens:
        if isinstance(t, Op):
            if t.op == "(" and cur and isinstance(cur[-1], Word) and _ASSIGN.match(cur[-1].raw) \
                    and cur[-1].raw.endswith("="):
                depth += 1
                cur.append(t)
                continue
            if t.op == ")" and depth:
                depth -= 1
                cur.append(t)
                continue
            if depth:
                continue  # newlines inside an array
            if t.op in ("\n", ";", "&&", "||", "|", "&", ";;"):
                if cur:
                    out.append(cur)
                cur = []
                continue
        cur.append(t)
    if cur:
        out.append(cur)
    return out


def _is_entry(words: list[str], i: int) -> bool:
    w = words[i]
    if w in _ENTRY and i > 0 and words[i - 1] == "-m":
        return True
    return any(w == f or w.endswith("/" + f) for f in _ENTRY_FILES)


def parse_script(text: str, source: str = "-") -> ParsedScript:
    """Parse a launch script into its main_ppo invocations. InputError on unreadable shell syntax."""
    tokens = _Lexer(text, source).run()
    ex = _Expander()
    invocations: list[Invocation] = []
    for stmt in _statements(tokens):
        i = 0
        # Leading assignments (and export/declare NAME=value).
        while i < len(stmt):
            t = stmt[i]
            if not isinstance(t, Word):
                break
            raw = t.raw
            if raw in ("export", "declare", "local", "readonly", "typeset") or (raw.startswith("-") and i > 0):
                i += 1
                continue
            m = _ASSIGN.match(raw)
            if not m or not t.parts or not t.parts[0][1]:
                break
            name, plus = m.group(1), m.group(2)
            nxt = stmt[i + 1] if i + 1 < len(stmt) else None
            if raw == m.group(0) and isinstance(nxt, Op) and nxt.op == "(":
                j, items = i + 2, []
                while j < len(stmt) and not (isinstance(stmt[j], Op) and stmt[j].op == ")"):  # type: ignore[union-attr]
                    if isinstance(stmt[j], Word):
                        items.extend(ex.expand_word(stmt[j]))  # type: ignore[arg-type]
                    j += 1
                old = ex.vars.get(name)
                ex.vars[name] = (list(old) if isinstance(old, list) else ([old] if old else [])) + items \
                    if plus else items
                i = j + 1
                continue
            value_word = Word(_strip_prefix(t.parts, len(m.group(0))), t.line)
            val = "".join(ex.expand_text(tx) if e else tx for tx, e in value_word.parts)
            if plus:
                old = ex.scalar(name) or ""
                val = old + val
            ex.vars[name] = val
            i += 1
        words_tok: list[Word] = []
        skip_next = False
        for t in stmt[i:]:
            if isinstance(t, Op):
                skip_next = t.op in _REDIRECTS
                continue
            if skip_next:  # the target of a redirection (file name or fd)
                skip_next = False
                continue
            words_tok.append(t)
        if not words_tok:
            continue
        argv: list[tuple[str, int]] = []
        passthrough = False
        for w in words_tok:
            if w.raw in ("$@", "$*", "${@}", "${*}"):
                passthrough = True
            argv.extend((a, w.line) for a in ex.expand_word(w))
        words = [a for a, _ in argv]
        for k in range(len(words)):
            if _is_entry(words, k):
                invocations.append(_invocation(argv[k + 1:], argv[k][1], passthrough))
                break
    return ParsedScript(invocations, ex.vars, ex.unresolved)


def _strip_prefix(parts: list[Part], n: int) -> list[Part]:
    out: list[Part] = []
    for t, e in parts:
        if n >= len(t):
            n -= len(t)
            continue
        out.append((t[n:], e))
        n = 0
    return out


def _invocation(args: list[tuple[str, int]], line: int, passthrough: bool) -> Invocation:
    inv = Invocation(line=line, passthrough=passthrough, args=[a for a, _ in args])
    k = 0
    while k < len(args):
        a, ln = args[k]
        for flag, attr in (("--config-name", "config_name"), ("-cn", "config_name"),
                           ("--config-path", "config_path"), ("-cp", "config_path")):
            if a == flag and k + 1 < len(args):
                setattr(inv, attr, args[k + 1][0])
                k += 1
                break
            if a.startswith(flag + "="):
                setattr(inv, attr, a[len(flag) + 1:])
                break
        else:
            o = parse_override(a, ln)
            if o is None:
                inv.ignored.append(a)
            else:
                inv.overrides.append(o)
        k += 1
    return inv
