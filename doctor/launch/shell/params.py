"""`${…}` and `$X`: parameter expansion with bash's operators (see expand.py for the list)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from doctor.launch.shell.tree import Node
from doctor.launch.shell.values import Hole, Str, Value, concat, join, scalar

if TYPE_CHECKING:
    from doctor.launch.shell.expand import Expander

_DEFAULTING = (":-", "-", ":=", "=", ":+", "+", ":?", "?")


def expand_parameter(ex: Expander, n: Node, quoted: bool) -> Str | list[Str]:
    """Str, or a list of words for `${a[@]}` / `$@` / `${@:2}`."""
    if n.type == "simple_expansion":
        name_node = next((c for c in n.children if c.type in ("variable_name", "special_variable_name")), None)
        if name_node is None:
            return Str.of(n.text)
        return _plain(ex, name_node.text, None, n.text, quoted)
    kids = n.children[1:-1] if n.children and n.children[0].type == "${" else n.children
    if kids and kids[0].type == "#" and kids[0].field == "operator" and len(kids) == 2:
        return _length(ex, kids[1], n.text)
    if kids and kids[0].type == "!":
        return _unknown(ex, n.text, "indirect expansion")
    if not kids:
        return _unknown(ex, n.text, "unsupported expansion")
    target, ops = kids[0], kids[1:]
    name, index = _target(target)
    if name is None:
        return _unknown(ex, n.text, "unsupported expansion")
    if not ops:
        return _plain(ex, name, index, n.text, quoted)
    op = ops[0].text if ops[0].field == "operator" else None
    args = ops[1:]
    if op in _DEFAULTING:
        return _defaulting(ex, name, index, op, args, n.text, quoted)
    value = _read(ex, name, index, n.text)
    if isinstance(value, list):
        value = join(value)
    if value is None:
        value = Str()
    if not value.known:
        return Str((Hole(n.text, "expansion of an unknown value", splits=not quoted),))
    text = value.text
    result = _operate(ex, text, op, args, n.text)
    return _unknown(ex, n.text, "unsupported expansion") if result is None else Str.of(result)


def _target(node: Node) -> tuple[str | None, str | None]:
    if node.type in ("variable_name", "special_variable_name"):
        return node.text, None
    if node.type == "subscript":
        name = node.child("name")
        idx = node.child("index")
        return (name.text if name else None), (idx.text if idx else None)
    if node.type == "word" and node.text.isdigit():
        return node.text, None
    return None, None


def _read(ex: Expander, name: str, index: str | None, text: str) -> Value | None:
    if name in ("@", "*"):
        return list(ex.scope.positional())
    if name == "#":
        if not ex.scope.positional() and not getattr(ex.scope, "locals_stack", None):
            # the script's own argument count is the run's: `[ "$#" -lt 2 ] && exit 1` takes both ways
            return Str((Hole(text, "positional parameter", "0"),))
        return Str.of(str(len(ex.scope.positional())))
    if name in ("?", "$", "!", "-"):
        return Str((Hole(text, "special parameter", "0"),))
    v = ex.lookup(name, text)
    if index is None or v is None:
        return v
    if index in ("@", "*"):
        return v if isinstance(v, list) else [v]
    arr = v if isinstance(v, list) else [v]
    try:
        i = int(index)
    except ValueError:
        return Str((Hole(text, "array index not known"),))
    return arr[i] if -len(arr) <= i < len(arr) else None


def _plain(ex: Expander, name: str, index: str | None, text: str, quoted: bool) -> Str | list[Str]:
    v = _read(ex, name, index, text)
    many = name in ("@", "*") or index in ("@", "*")
    if v is None:
        if name.isdigit() or not name.isidentifier():
            return _unknown(ex, text, "positional parameter", quoted)
        ex.note(text)
        return Str((Hole(text, "environment", splits=not quoted),))
    if isinstance(v, list):
        if many and not (name == "*" or index == "*"):
            return list(v)
        if many:  # "$*": one word joined by the first IFS character
            return join(v)
        return scalar(v) or Str()
    return v


def _length(ex: Expander, node: Node, text: str) -> Str:
    name, index = _target(node)
    if name is None:
        return _unknown(ex, text, "unsupported expansion")
    v = _read(ex, name, index, text)
    if isinstance(v, list) and index in ("@", "*") or name in ("@", "*"):
        return Str.of(str(len(v) if isinstance(v, list) else 1))
    s = scalar(v) if v is not None else Str()
    if s is None or not s.known:
        return _unknown(ex, text, "length of an unknown value")
    return Str.of(str(len(s.text)))


def _defaulting(ex: Expander, name: str, index: str | None, op: str, args: list[Node], text: str,
                quoted: bool) -> Str | list[Str]:
    v = _read(ex, name, index, text)
    if v is not None and not isinstance(v, list) and v.holes and v.holes[0].why == "environment" \
            and len(v.parts) == 1 and name not in ("HOME", "USER", "PWD", "LOGNAME"):
        v = None  # a login-shell variable is set; any other environment variable counts as unset here
    unset = v is None
    empty = unset or (isinstance(v, list) and not v) or (isinstance(v, Str) and v.is_empty())
    missing = empty if op.startswith(":") else unset
    word = concat([ex.scalar(a) for a in args]) if args else Str()
    kind = op[-1]
    if unset and name.isidentifier() and kind != "?":
        ex.from_env.add(name)  # the environment may set it: the script's word is only a default
    if kind in "-=":
        if not missing:
            return _as_value(v, name, index)
        if kind == "=" and name.isidentifier():
            ex.scope.set(name, word)
            if unset and hasattr(ex.scope, "from_env"):
                ex.scope.from_env[name] = frozenset(ex.from_env)
        return word
    if kind == "+":
        return Str() if missing else word
    if missing:  # ${X:?message}: bash stops the script here
        value = _unknown(ex, text, "required variable (`:?`) not set by the script", quoted)
        if name.isidentifier() and index is None:
            # a run that goes on past this line had X set (non-empty for `:?`) by its environment: from here on X is
            # what only the run knows, not the empty default the script gave it (`X=${X:-}; : "${X:?set X}"`)
            ex.scope.set(name, value)
        return value
    return _as_value(v, name, index)


def _as_value(v: Value | None, name: str, index: str | None) -> Str | list[Str]:
    if isinstance(v, list):
        return list(v) if (name in ("@", "*") or index in ("@", "*")) else (scalar(v) or Str())
    return v if v is not None else Str()


def _operate(ex: Expander, text: str, op: str | None, args: list[Node], src: str) -> str | None:
    from doctor.launch.shell.expand import glob_match

    if op in ("#", "##", "%", "%%"):
        pat = ex.scalar(args[0]).value() if args else ""
        if pat is None:
            return None
        rng = range(len(text) + 1) if op in ("#", "%") else range(len(text), -1, -1)
        for i in rng:
            if op.startswith("#") and glob_match(text[:i], pat):
                return text[i:]
            if op.startswith("%") and glob_match(text[len(text) - i:], pat):
                return text[:len(text) - i]
        return text
    if op in ("/", "//"):
        rest = [a for a in args if a.type != "/"]
        pat = ex.scalar(rest[0]).value() if rest else ""
        rep = ex.scalar(rest[1]).value() if len(rest) > 1 else ""
        if pat is None or rep is None or any(c in pat for c in "*?["):
            return None
        return text.replace(pat, rep) if op == "//" else text.replace(pat, rep, 1)
    if op in ("^^", ",,", "^", ","):
        if op == "^^":
            return text.upper()
        if op == ",,":
            return text.lower()
        return (text[:1].upper() if op == "^" else text[:1].lower()) + text[1:]
    if op == ":":
        nums = [a for a in args if a.type != ":"]
        try:
            off = int(ex.scalar(nums[0]).text) if nums else 0
            length = int(ex.scalar(nums[1]).text) if len(nums) > 1 else None
        except ValueError:
            return None
        start = off if off >= 0 else max(0, len(text) + off)
        return text[start:] if length is None else text[start:start + length]
    return None


def _unknown(ex: Expander, text: str, why: str, quoted: bool = True) -> Str:
    ex.note(text)
    return Str((Hole(text, why, splits=not quoted),))
