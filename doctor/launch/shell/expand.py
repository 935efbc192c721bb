"""Word expansion as bash does it, over tree-sitter-bash nodes: quoting (single, double, `$'…'`), parameter
expansion with its operators (`:-` `-` `:=` `=` `:+` `+` `:?` `?` `#` `##` `%` `%%` `/` `//` `^^` `,,` `:off:len`
and `${#X}`), arrays (`${a[@]}`, `${a[i]}`, `${#a[@]}`), positional parameters and `$@`, arithmetic, tilde
expansion, word splitting of unquoted results. A command substitution is never run: it is a `Hole`.

The variables live in the `Scope` the interpreter passes in (`get`/`set`); a variable the script never sets is
unset (so `${X:-d}` gives `d`, as bash run with a clean environment does) except the few every login shell has
(HOME, USER, PWD, …), which are holes with a path-like sample.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Protocol

from doctor.launch.shell.arith import ArithUnknown, evaluate
from doctor.launch.shell.tree import Node, leaf_text
from doctor.launch.shell.values import FieldBuilder, Hole, Str, Value, concat, scalar
from doctor.launch.shell.wrapper import script_dir_of

ENVIRONMENT = {"HOME": "/home/user", "USER": "user", "LOGNAME": "user", "PWD": "/work", "OLDPWD": "/work",
               "HOSTNAME": "host", "SHELL": "/bin/bash", "PATH": "/usr/bin:/bin", "TMPDIR": "/tmp",
               "RANDOM": "1234", "SECONDS": "0", "BASH_SOURCE": "script.sh", "UID": "1000"}


class Scope(Protocol):
    def get(self, name: str) -> Value | None: ...

    def set(self, name: str, value: Value) -> None: ...

    def positional(self) -> list[Str]: ...

    def script_name(self) -> str: ...


# why a variable whose empty default the script tested (`X=${X:-}; [ -n "$X" ]`) is unknown on the side where it is set
SET_BY_ENVIRONMENT = "set by the environment (the script's test of it passed)"


def env_hole(name: str, text: str | None = None) -> Hole:
    return Hole(text or f"${name}", "environment", ENVIRONMENT.get(name, "UNRESOLVED"))


class Expander:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.unresolved: list[str] = []
        # the environment variables whose absence what this expander read relies on (`${X:-d}` gave `d`, or a
        # variable set from such a default was read): see World.from_env
        self.from_env: set[str] = set()
        # "$0" / "BASH_SOURCE" -> the directory of the script bash runs / of the file it reads (a sourced one), for
        # the substitutions that name it (wrapper.script_dir_of); empty when the script has no path
        self.script_dirs: dict[str, str] = {}

    # -- words ---------------------------------------------------------------------------------------------

    def fields(self, node: Node) -> list[Str]:
        """One argv word node -> the words bash passes (none, one or several)."""
        b = FieldBuilder(split=True)
        self._word(node, b, quoted=False)
        return b.result()

    def scalar(self, node: Node | None) -> Str:
        """A word in a non-splitting context (assignment value, case subject, `[[`): one string."""
        if node is None:
            return Str()
        b = FieldBuilder(split=False)
        self._word(node, b, quoted=False, assignment=True)
        fields = b.result()
        if len(fields) == 1:
            return fields[0]
        joined: list[Str] = []  # `X="${A[@]}"`: bash joins the elements with a space
        for i, f in enumerate(fields):
            joined += [Str.of(" "), f] if i else [f]
        return concat(joined)

    def _word(self, n: Node, b: FieldBuilder, quoted: bool, assignment: bool = False) -> None:
        t = n.type
        if t in ("word", "number", "extglob_pattern", "special_variable_name", "variable_name", "regex"):
            b.literal(_unescape_word(n.text, b, self, first=not b.cur and not b.fields, assignment=assignment))
        elif t == "raw_string":
            b.literal(n.text[1:-1])
        elif t == "ansi_c_string":
            b.literal(_ansi_c(n.text[2:-1]))
        elif t in ("string", "translated_string"):
            self._dquoted(n, b)
        elif t == "concatenation":
            for c in n.children:
                self._word(c, b, quoted, assignment)
        elif t in ("simple_expansion", "expansion"):
            self._expansion(n, b, quoted)
        elif t == "command_substitution" or t == "process_substitution":
            h = Hole(n.text, "command substitution", splits=not quoted)
            kind = script_dir_of(n.text)
            if kind in self.script_dirs:
                h = Hole(n.text, "command substitution", splits=not quoted, base=self.script_dirs[kind])
            self.note(n.text)
            (b.quoted if quoted else b.unquoted)(Str((h,)))
        elif t == "arithmetic_expansion":
            (b.quoted if quoted else b.unquoted)(self.arith(n))
        elif t == "ERROR" and leaf_text(n):
            b.literal(n.text)
        else:
            self.note(n.text)
            b.quoted(Str((Hole(n.text, "unsupported syntax"),)))

    def _dquoted(self, n: Node, b: FieldBuilder) -> None:
        inner = n.children[1:-1] if n.children and n.children[0].type in ('"', '$"') else n.children
        if len(inner) == 1 and inner[0].type in ("simple_expansion", "expansion"):
            from doctor.launch.shell.params import expand_parameter

            result = expand_parameter(self, inner[0], True)
            if isinstance(result, list):  # "$@" / "${a[@]}": as many words as items, none when empty
                b.fields_break(result)
            else:
                b.quoted(result)
            return
        b.literal("")
        pos = inner[0].start if inner else n.end
        for c in inner:
            if c.start > pos:  # text the grammar left between children
                b.literal(_unescape_dq(n.text[pos - n.start:c.start - n.start]))
            if c.type == "string_content":
                b.literal(_unescape_dq(c.text))
            else:
                lead = len(c.text) - len(c.text.lstrip(" \t"))
                if lead and c.type in ("expansion", "simple_expansion"):  # tree-sitter puts the blank before a
                    b.literal(c.text[:lead])  # `${` that follows another expansion inside its token: keep it
                self._word(c, b, quoted=True)
            pos = c.end
        if n.children and n.children[-1].type == '"' and n.children[-1].start > pos:
            b.literal(_unescape_dq(n.text[pos - n.start:n.children[-1].start - n.start]))

    # -- parameter expansion ------------------------------------------------------------------------------

    def _expansion(self, n: Node, b: FieldBuilder, quoted: bool) -> None:
        from doctor.launch.shell.params import expand_parameter

        result = expand_parameter(self, n, quoted)
        if isinstance(result, list):  # "${a[@]}" / "$@": several words
            if quoted:
                b.fields_break(result)
            else:
                for i, s in enumerate(result):
                    if i:
                        b.finish()
                    b.unquoted(s)
            return
        (b.quoted if quoted else b.unquoted)(result)

    def lookup(self, name: str, text: str) -> Value | None:
        """A variable's value; a login-shell variable the script never set is a hole; None = unset."""
        if name.isdigit():
            if name == "0":
                return Str.of(self.scope.script_name())
            pos = self.scope.positional()
            i = int(name)
            return pos[i - 1] if i <= len(pos) else None
        v = self.scope.get(name)
        self.from_env |= getattr(self.scope, "from_env", {}).get(name, frozenset())
        if v is None and name in ENVIRONMENT:
            self.note(text)
            return Str((env_hole(name, text),))
        if isinstance(v, Str) and any(h.why == SET_BY_ENVIRONMENT for h in v.holes):
            self.note(text)  # past the script's `[ -n "$X" ]`: what the environment set (interp.split)
        return v

    def note(self, text: str) -> None:
        if text not in self.unresolved:
            self.unresolved.append(text)

    # -- arithmetic -------------------------------------------------------------------------------------

    def arith(self, n: Node) -> Str:
        exprs = [c for c in n.named]
        try:
            value = 0
            for e in exprs:
                value = evaluate(e, self)
            return Str.of(str(value))
        except ArithUnknown:
            self.note(n.text)
            return Str((Hole(n.text, "arithmetic over unknown values", "1"),))

    def arith_var(self, name: str) -> int:
        """A variable inside $(( )): its value read as an arithmetic expression (unset or empty = 0)."""
        v = self.lookup(name, name)
        s = scalar(v) if v is not None else None
        if s is None:
            return 0
        text = s.value()
        if text is None:
            raise ArithUnknown(name)
        text = text.strip()
        if not text:
            return 0
        if re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        from doctor.launch.shell.arith import evaluate_text

        return evaluate_text(text, self)


def glob_match(text: str, pattern: str) -> bool:
    """bash pattern matching (case, ${X#pat}): fnmatch's syntax is close enough for launch scripts."""
    return fnmatch.fnmatchcase(text, pattern)


def _unescape_word(text: str, b: FieldBuilder, ex: Expander, first: bool, assignment: bool) -> str:
    """Unquoted literal text: backslash escapes and line continuations removed; `~` at the start (and after
    `=`/`:` in an assignment) becomes $HOME, a hole."""
    if first and text.startswith("~") and (len(text) == 1 or text[1] == "/"):
        b.cur.append(env_hole("HOME", "~"))
        b.started = True
        text = text[1:]
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unescape_dq(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
              "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(body: str) -> str:
    def rep(m: re.Match[str]) -> str:
        s = m.group(1)
        if s in _C_ESCAPES:
            return _C_ESCAPES[s]
        if s[0] == "x":
            return chr(int(s[1:], 16))
        if s[0] in "uU":
            return chr(int(s[1:], 16))
        if s[0].isdigit():
            return chr(int(s, 8) & 0xFF)
        return "\\" + s

    return re.sub(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)", rep, body)
