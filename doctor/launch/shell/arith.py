"""Bash arithmetic (`$(( ))`) over tree-sitter-bash expression nodes, in 64-bit integers like bash.

Operands that are not known (a command substitution, an environment variable) raise ArithUnknown: the
whole expansion is then a hole, never a guess. Assignment operators (`a++`, `a+=1`) are not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doctor.launch.shell.tree import Node

if TYPE_CHECKING:
    from doctor.launch.shell.expand import Expander


class ArithUnknown(Exception):
    pass


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def _number(text: str) -> int:
    t = text.strip()
    try:
        if "#" in t:
            base, digits = t.split("#", 1)
            return int(digits, int(base))
        if t.lower().startswith("0x"):
            return int(t, 16)
        if len(t) > 1 and t.startswith("0") and t.isdigit():
            return int(t, 8)
        return int(t)
    except ValueError:
        raise ArithUnknown(text) from None


def _c_div(a: int, b: int, mod: bool) -> int:
    if b == 0:
        raise ArithUnknown("division by 0")
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return a - q * b if mod else q


_BINARY: dict[str, Any] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: _c_div(a, b, False), "%": lambda a, b: _c_div(a, b, True),
    "**": lambda a, b: a ** b if b >= 0 else (_ for _ in ()).throw(ArithUnknown("negative exponent")),
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b, "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
}


def evaluate(n: Node, ex: Expander) -> int:
    t = n.type
    if t == "number":
        return _number(n.text)
    if t in ("variable_name", "word"):
        if n.text.isdigit():
            return _number(n.text)
        return ex.arith_var(n.text)
    if t == "parenthesized_expression":
        inner = n.named
        return evaluate(inner[0], ex) if inner else 0
    if t in ("simple_expansion", "expansion", "string", "concatenation", "command_substitution"):
        s = ex.scalar(n)
        if not s.known:
            raise ArithUnknown(n.text)
        return evaluate_text(s.text, ex)
    if t == "unary_expression":
        sign = n.children[0].text
        v = evaluate(n.named[-1], ex)
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}.get(sign, v)
    if t == "binary_expression":
        op = n.child("operator")
        left, right = n.child("left"), n.child("right")
        if op is None or left is None or right is None:
            raise ArithUnknown(n.text)
        if op.text == "&&":
            return int(bool(evaluate(left, ex)) and bool(evaluate(right, ex)))
        if op.text == "||":
            return int(bool(evaluate(left, ex)) or bool(evaluate(right, ex)))
        fn = _BINARY.get(op.text)
        if fn is None:
            raise ArithUnknown(n.text)
        return _wrap(fn(evaluate(left, ex), evaluate(right, ex)))
    if t == "ternary_expression":
        cond = n.named[0]
        yes, no = n.child("consequence"), n.child("alternative")
        if yes is None or no is None:
            raise ArithUnknown(n.text)
        return evaluate(yes if evaluate(cond, ex) else no, ex)
    raise ArithUnknown(n.text)


def evaluate_text(text: str, ex: Expander, depth: int = 0) -> int:
    """A variable's value used in arithmetic is itself an expression (bash re-evaluates it)."""
    if depth > 8:
        raise ArithUnknown(text)
    from doctor.launch.shell.tree import parse

    root = parse(f"$(( {text} ))\n")
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "arithmetic_expansion":
            exprs = node.named
            if len(exprs) != 1:
                raise ArithUnknown(text)
            return evaluate(exprs[0], ex)
        stack.extend(node.children)
    raise ArithUnknown(text)
