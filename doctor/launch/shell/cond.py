"""`[ … ]`, `[[ … ]]` and `test …`: evaluated when their operands are known, otherwise unknown (the
interpreter then follows both branches). A comparison of one unknown variable with a literal (`[ "$DEVICE" =
npu ]`) also says what the variable must hold on each side, so a later `case "$DEVICE"` takes the same side; a
comparison of an unknown value with a known word or pattern (`[[ $DEVICE == npu* ]]`) says, as a `Said`, what the
value matches on each side (lint reads a path's device from it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doctor.launch.shell.expand import Expander, glob_match
from doctor.launch.shell.tree import Node
from doctor.launch.shell.values import Str
from doctor.launch.shell.world import Said


@dataclass
class Cond:
    status: bool | None  # None: depends on what the script cannot know
    if_true: dict[str, str] = field(default_factory=dict)  # variable -> value it must hold when true
    if_false: dict[str, str] = field(default_factory=dict)
    # variables that hold what the environment set when true / false: the script gave them an empty default
    # (`X=${X:-}`) and the test asks whether the environment set them (`[ -n "$X" ]`)
    env_if_true: frozenset[str] = frozenset()
    env_if_false: frozenset[str] = frozenset()
    said_true: tuple[Said, ...] = ()  # what the tested values match when true / false
    said_false: tuple[Said, ...] = ()
    # variable -> a word it does not hold when true / false (`[ "$DEVICE" = npu ]` false): a variable an earlier
    # `case` arm limited to words (World.one_of) is limited to the others
    unlike_true: dict[str, str] = field(default_factory=dict)
    unlike_false: dict[str, str] = field(default_factory=dict)

    def negate(self) -> Cond:
        return Cond(None if self.status is None else not self.status, self.if_false, self.if_true,
                    self.env_if_false, self.env_if_true, self.said_false, self.said_true, self.unlike_false,
                    self.unlike_true)


_INT_OPS = {"-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
            "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b}


def sole_variable(n: Node) -> str | None:
    """The variable a word consists of (`$X`, `${X}`, `"$X"`), else None."""
    if n.type == "string":
        inner = [c for c in n.children if c.type not in ('"',)]
        return sole_variable(inner[0]) if len(inner) == 1 else None
    if n.type == "simple_expansion":
        v = next((c for c in n.children if c.type == "variable_name"), None)
        return v.text if v else None
    if n.type == "expansion" and len(n.children) == 3 and n.children[1].type == "variable_name":
        return n.children[1].text
    return None


def test_node(n: Node, ex: Expander, double: bool) -> Cond:
    """One expression inside [ ] / [[ ]]."""
    t = n.type
    if t == "parenthesized_expression":
        inner = n.named
        return test_node(inner[0], ex, double) if inner else Cond(None)
    if t == "unary_expression":
        op = n.children[0].text
        operand = n.named[-1] if n.named else None
        if op == "!" and operand is not None:
            return test_node(operand, ex, double).negate()
        return _unary(op, operand, ex)
    if t == "binary_expression":
        op_node = n.child("operator") or (n.children[1] if len(n.children) == 3 else None)
        op = op_node.text if op_node else ""
        left, right = n.children[0], n.children[-1]
        if op in ("&&", "-a", "||", "-o"):
            a, b = test_node(left, ex, double), test_node(right, ex, double)
            return _and(a, b) if op in ("&&", "-a") else _or(a, b)
        return _binary(op, left, right, ex, double)
    s = ex.scalar(n)  # a lone word: true when non-empty
    return Cond(None if not s.known else bool(s.text))


def _unary(op: str, operand: Node | None, ex: Expander) -> Cond:
    seen, ex.from_env = ex.from_env, set()
    s = ex.scalar(operand) if operand is not None else Str()
    defaulted, ex.from_env = ex.from_env, seen | ex.from_env
    if op in ("-z", "-n"):
        if not s.known:
            return Cond(None)
        if s.text == "" and defaulted:
            # `X=${X:-}; [ -n "$X" ] || exit 1`: empty only because the environment was taken not to set X, which
            # is the run's to say (a clean environment would stop every path here: "no entry point is run"); on the
            # side where it is set, X holds what the environment gave it
            var = sole_variable(operand) if operand is not None else None
            env = frozenset((var,)) if var else frozenset()
            return Cond(None, env_if_true=env) if op == "-n" else Cond(None, env_if_false=env)
        return Cond((s.text == "") == (op == "-z"))
    if op == "-v" and s.known:
        return Cond(ex.scope.get(s.text) is not None)
    return Cond(None)  # files, terminals, …: the target machine decides


def _binary(op: str, left: Node, right: Node, ex: Expander, double: bool) -> Cond:
    a, b = ex.scalar(left), ex.scalar(right)
    if op in ("=", "==", "!="):
        equal = None
        if a.known and b.known:
            if double and right.type not in ("string", "raw_string"):
                equal = glob_match(a.text, b.text)
            else:
                equal = a.text == b.text
        if equal is not None:
            return Cond(equal if op != "!=" else not equal)
        glob = double and right.type not in ("string", "raw_string")  # `[[ $X == npu* ]]`: a pattern
        return _equality(sole_variable(left), b, _said(a, b, glob, (left.text, right.text)), op == "!=")
    if op in _INT_OPS:
        if a.known and b.known and re.fullmatch(r"\s*-?\d+\s*", a.text) and re.fullmatch(r"\s*-?\d+\s*", b.text):
            return Cond(_INT_OPS[op](int(a.text), int(b.text)))
        return Cond(None)
    if op == "=~" and a.known and b.known:
        try:
            return Cond(re.search(b.text, a.text) is not None)
        except re.error:
            return Cond(None)
    if op in ("<", ">") and a.known and b.known:
        return Cond(a.text < b.text if op == "<" else a.text > b.text)
    return Cond(None)


def _equality(var: str | None, word: Str, said: tuple[tuple[Said, ...], tuple[Said, ...]], negated: bool) -> Cond:
    """`X = word` of an unknown X (`said`: what each side says of it): on its true side X is the word, on its false side
    it is not (a word with pattern characters says neither); `!=` the other way round."""
    cond = Cond(None, said_true=said[0], said_false=said[1])
    if var and word.known and not any(c in word.text for c in "*?["):
        cond.if_true, cond.unlike_false = {var: word.text}, {var: word.text}
    return cond.negate() if negated else cond


def _said(a: Str, b: Str, glob: bool, written: tuple[str, str] | None = None) -> tuple[tuple[Said, ...], tuple[Said, ...]]:
    """(true side, false side) of `a = b` when one side is known text and the other is not: the unknown value
    (named by its `written` text when given) matches the known word (a pattern when `glob`: the right side of
    `[[ … == … ]]` unquoted) or does not."""
    texts = written or (a.text, b.text)
    if b.known and not a.known:
        value, word = texts[0], b.text
    elif a.known and not b.known and not glob:
        value, word = texts[1], a.text
    else:
        return (), ()
    if not glob and any(c in word for c in "*?["):  # a literal that reads as a pattern: said nothing
        return (), ()
    return (Said(value, (word,), True),), (Said(value, (word,), False),)


def _and(a: Cond, b: Cond) -> Cond:
    if a.status is False or b.status is False:
        return Cond(False)
    if a.status and b.status:
        return Cond(True)
    return Cond(None, {**a.if_true, **b.if_true}, {}, a.env_if_true | b.env_if_true,
                said_true=a.said_true + b.said_true, unlike_true={**a.unlike_true, **b.unlike_true})


def _or(a: Cond, b: Cond) -> Cond:
    if a.status or b.status:
        return Cond(True)
    if a.status is False and b.status is False:
        return Cond(False)
    return Cond(None, {}, {**a.if_false, **b.if_false}, env_if_false=a.env_if_false | b.env_if_false,
                said_false=a.said_false + b.said_false, unlike_false={**a.unlike_false, **b.unlike_false})


def test_command(n: Node, ex: Expander) -> Cond:
    """A test_command node ([ … ] or [[ … ]])."""
    double = bool(n.children) and n.children[0].type == "[["
    inner = n.named
    if not inner:
        return Cond(False)
    return test_node(inner[0], ex, double)


def test_argv(words: list[Str], variables: list[str | None] | None = None) -> Cond:
    """`test …` / `[ … ]` written as a plain command: the common one- to three-word forms. `variables`: per word,
    the variable it consists of (`"$DEVICE"`), so that `[ "$DEVICE" = npu ]` says what DEVICE holds on each side
    as `[[ … ]]` does."""
    w = words[1:-1] if words and words[0].text == "[" else words[1:]
    if any(not x.known for x in w):
        neg = bool(w) and w[0].known and w[0].text == "!"
        t3 = w[1:] if neg else w
        if len(t3) == 3 and t3[1].known and t3[1].text in ("=", "==", "!="):  # `test "$DEVICE" = npu`
            aligned = variables is not None and len(variables) == len(words) and not t3[0].known
            var = variables[1 + neg] if aligned and variables else None
            return _equality(var, t3[2], _said(t3[0], t3[2], False), (t3[1].text == "!=") != neg)
        return Cond(None)
    t = [x.text for x in w]
    if not t:
        return Cond(False)
    neg = t[0] == "!"
    if neg:
        t = t[1:]
    res: bool | None
    if len(t) == 1:
        res = bool(t[0])
    elif len(t) == 2 and t[0] in ("-z", "-n"):
        res = (t[1] == "") == (t[0] == "-z")
    elif len(t) == 3 and t[1] in ("=", "==", "!="):
        res = (t[0] == t[2]) == (t[1] != "!=")
    elif len(t) == 3 and t[1] in _INT_OPS and all(re.fullmatch(r"-?\d+", x) for x in (t[0], t[2])):
        res = _INT_OPS[t[1]](int(t[0]), int(t[2]))
    else:
        res = None
    return Cond(None if res is None else (res != neg))
