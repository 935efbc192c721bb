"""Walk a bash script the way bash would run it, without running anything: assignments, `export`, arrays, functions,
`source` of a file (found as `bash OTHER.sh` finds OTHER.sh), `if`/`case`/`&&`/`||` (both sides when the condition is
not known, as separate paths), `for` loops over known words, subshells and pipelines (their assignments do not
survive), `exit`. Every command whose words contain a verl entry point (`-m MODULE` or `…/main_*.py`) is recorded
with the words bash would pass it on that path. Heredoc bodies are data; command substitutions are holes; no external
command, `$(…)` or `eval` is ever executed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from doctor.launch.shell.cond import Cond, sole_variable, test_argv, test_command
from doctor.launch.shell.expand import SET_BY_ENVIRONMENT, Expander, glob_match
from doctor.launch.shell.tree import Node, parse
from doctor.launch.shell.values import Hole, Str, Value
from doctor.launch.shell.world import Choice, Said, World, merge, npu_variable
from doctor.launch.shell.wrapper import Launch, how_run, launch_chain, passes_own_arguments, resolve

MAX_PATHS = 16
MAX_LOOP = 32
MAX_DEPTH = 8


@dataclass
class Call:
    """One command that runs an entry point, on one path."""

    line: int
    site: tuple[int, tuple[int, ...]]  # (offset of the command, loop iterations): same site = alternatives
    argv: list[Str]
    lines: list[int]
    label: tuple[str, ...]
    hints: set[str]
    unsplit: list[str]  # unquoted unknown expansions that bash may split into several words
    exports: dict[str, str] = field(default_factory=dict)  # the exported variables whose value the walk knows
    # per argv word, and per known export: the environment variables whose default it took (World.from_env)
    from_env: list[frozenset[str]] = field(default_factory=list)
    exports_from_env: dict[str, frozenset[str]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # per argv word, the script's text it was expanded from
    # a call in a script another one runs (`bash other.sh`, see wrapper.py): that script's path and text, the chain
    # of (script, line) that ran it, and whether every command on that chain handed its own arguments on ("$@")
    file: str | None = None
    text: str | None = None
    via: tuple[tuple[str, int], ...] = ()
    outer_args: bool = True


@dataclass(frozen=True)
class CutOff:
    """A command of override words only, right after an entry-point command that ended without `\\`: bash runs
    it as a command of its own (`command not found`), and the entry point never receives those overrides."""

    entry_line: int
    entry_end: int  # the line the entry-point command ends on
    line: int
    words: tuple[str, ...]


@dataclass
class Walk:
    calls: list[Call] = field(default_factory=list)
    cut_off: list[CutOff] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be followed (said in the report)


def _known_exports(w: World) -> dict[str, str]:
    """The environment the entry point starts with, as far as the script sets it: each exported variable (also a
    `NAME=value` prefix of the command) whose value is known on this path."""
    out: dict[str, str] = {}
    for name in sorted(w.exported):
        v = w.get(name)
        if isinstance(v, Str) and v.known:
            out[name] = v.text
    return out


class Interpreter:
    def __init__(self, path: str | None, is_entry: Callable[[list[Str]], int | None]) -> None:
        self.path = path
        self.is_entry = is_entry
        self.walk = Walk()
        self.loop: tuple[int, ...] = ()
        self.depth = 0
        self.after_entry: tuple[int, int] | None = None  # first/last line of the entry-point command just run
        self.word_env: list[frozenset[str]] = []  # of the words() last expanded: per word, Call.from_env
        self.word_sources: list[str] = []
        # a test that reads a default the environment may replace (`[ "$NODE_RANK" != 0 ]` with NODE_RANK=${NODE_RANK:-1})
        # is left to the run: set for a second walk when the script's defaults reach no entry point
        self.open_defaults = False
        # how the reader of the paths (lint) tells them apart: paths it reads differently are never merged into one
        # (world.mergeable), and a test that compares a default the environment may replace with words it names
        # (a device: `[ "${DEVICE:-gpu}" = gpu ]`) is the user's choice, both sides followed (see `opened`)
        self.apart: Callable[[tuple[str, ...]], object] | None = None
        self.opens: Callable[[tuple[Said, ...]], bool] | None = None
        # a script run by another (`bash other.sh`): see run_script
        self.via: tuple[tuple[str, int], ...] = ()
        self.text: str | None = None
        self.site_base: tuple[int, tuple[int, ...]] | None = None
        self.outer_args = True
        self.stack: frozenset[str] = frozenset({os.path.realpath(path)}) if path else frozenset()
        self.reading: str | None = None  # the file `source` is reading (BASH_SOURCE[0] there), None: the script

    # -- helpers ---------------------------------------------------------------------------------------
    def ex(self, w: World) -> Expander:
        e = Expander(w)
        e.unresolved = self.walk.unresolved
        if self.path:
            e.script_dirs = {"$0": os.path.dirname(os.path.abspath(self.path)),
                             "BASH_SOURCE": os.path.dirname(os.path.abspath(self.reading or self.path))}
        return e

    def note(self, text: str) -> None:
        if text not in self.walk.notes:
            self.walk.notes.append(text)

    def run(self, root: Node, world: World) -> list[World]:
        return self.block(root.children, [world])

    def block(self, stmts: list[Node], worlds: list[World]) -> list[World]:
        for s in stmts:
            if s.type in ("comment", ";", "\n", "&", ";;", "{", "}", "do", "done", "then", "fi", "else", "esac"):
                continue
            if s.type not in ("command", "redirected_statement"):
                self.after_entry = None
            nxt: list[World] = []
            for w in worlds:
                if w.dead or w.returning:
                    nxt.append(w)
                else:
                    nxt.extend(self.stmt(s, w))
            worlds = merge([w for w in nxt if not w.dead], self.apart)
            if len(worlds) > MAX_PATHS:
                self.note(f"more than {MAX_PATHS} paths through the script; only the first {MAX_PATHS} were followed")
                worlds = worlds[:MAX_PATHS]
        return worlds

    # -- statements ------------------------------------------------------------------------------------
    def stmt(self, n: Node, w: World) -> list[World]:
        t = n.type
        handler = _HANDLERS.get(t)
        if handler is not None:
            return handler(self, n, w)
        if t in ("variable_assignment", "variable_assignments"):
            for a in ([n] if t == "variable_assignment" else n.named):
                self.assign(a, w)
            w.status = True
            return [w]
        if t in ("compound_statement", "do_group"):
            return self.block(n.children, [w])
        if t == "ERROR":
            self.note(f"line {n.line}: the bash grammar could not read `{n.text.strip()[:60]}`; skipped")
        return [w]

    def assign(self, a: Node, w: World, local: bool = False, export: bool = False) -> None:
        name_node = a.child("name") or (a.children[0] if a.children else None)
        if name_node is None:
            return
        name, index = name_node.text, None
        if name_node.type == "subscript":
            idx = name_node.child("index")
            nm = name_node.child("name")
            name, index = (nm.text if nm else name), (idx.text if idx else None)
        op = next((c.text for c in a.children if c.type in ("=", "+=")), "=")
        value_node = a.child("value") or (a.children[-1] if len(a.children) > 2 else None)
        ex = self.ex(w)
        if local and w.locals_stack and name not in w.locals_stack[-1]:
            w.locals_stack[-1][name] = (w.get(name), w.from_env.get(name, frozenset()))
        value: Value
        if value_node is not None and value_node.type == "array":
            items = []
            for el in value_node.named:
                if el.type == "comment":
                    continue
                for f in ex.fields(el):
                    items.append(Str(f.parts, f.origin or el.line))
            old = w.get(name)
            value = ((old if isinstance(old, list) else ([old] if old else [])) + items) if op == "+=" else items
        else:
            value = ex.scalar(value_node) if value_node is not None else Str()
            if op == "+=":
                old = w.get(name)
                value = (old + [value]) if isinstance(old, list) else ((old or Str()) + value)
        if index is not None and index.isdigit() and not isinstance(value, list):
            arr = w.get(name)
            arr = list(arr) if isinstance(arr, list) else ([arr] if arr else [])
            i = int(index)
            arr += [Str()] * (i + 1 - len(arr))
            arr[i] = value
            value = arr
        deps = ex.from_env | (w.from_env.get(name, frozenset()) if op == "+=" or index is not None else frozenset())
        w.set(name, value)
        if deps:
            w.from_env[name] = frozenset(deps)
        if export:
            w.exported.add(name)

    def declaration(self, n: Node, w: World) -> list[World]:
        kw = n.children[0].text if n.children else "declare"
        export = kw == "export" or any(c.type == "word" and c.text.startswith("-") and "x" in c.text
                                       for c in n.children)
        for c in n.children[1:]:
            if c.type == "variable_assignment":
                self.assign(c, w, local=kw == "local", export=export)
            elif c.type == "variable_name" and export:
                w.exported.add(c.text)
                if npu_variable(c.text):
                    w.hints.add(f"exports {c.text}")
        w.status = True
        return [w]

    def unset(self, n: Node, w: World) -> list[World]:
        for c in n.named:
            if c.type == "variable_name" or (c.type == "word" and not c.text.startswith("-")):
                w.unset(c.text)
        w.status = True
        return [w]

    def redirected(self, n: Node, w: World) -> list[World]:
        body = n.child("body") or next((c for c in n.children if c.type not in _REDIRECTS), None)
        return self.stmt(body, w) if body is not None else [w]

    def subshell(self, n: Node, w: World) -> list[World]:
        out = self.block(n.children, [w.copy()])
        w.status = out[0].status if len(out) == 1 else None
        return [w]

    def pipeline(self, n: Node, w: World) -> list[World]:
        status: bool | None = None
        for c in n.named:
            out = self.stmt(c, w.copy())
            status = out[0].status if len(out) == 1 else None
        w.status = status
        return [w]

    def negated(self, n: Node, w: World) -> list[World]:
        out = self.stmt(n.named[-1], w) if n.named else [w]
        for o in out:
            o.status = None if o.status is None else not o.status
        return out

    def list_(self, n: Node, w: World) -> list[World]:
        left, right = n.children[0], n.children[-1]
        op = n.children[1].text if len(n.children) > 2 else "&&"
        out: list[World] = []
        tests = op == "&&" and _is_test(left) and _is_test(right)
        left_guard = self.guard(left, w) if tests else ()
        for lw in self.condition(left, w, f"line {left.line}: `{_short(left.text)}`"):
            if lw.dead:
                out.append(lw)
            elif lw.status is (op == "&&") and _is_test(right):  # `[ … ] && [ "${DEVICE:-gpu}" = gpu ]`: see opened
                guards = left_guard + (self.guard(right, lw) if tests else ())
                out.extend(_guarded(r, len(w.label), guards)
                           for r in self.condition(right, lw, f"line {right.line}: `{_short(right.text)}`"))
            elif lw.status is (op == "&&"):
                out.extend(self.stmt(right, lw))
            else:
                out.append(lw)
        return out

    def condition(self, n: Node, w: World, what: str) -> list[World]:
        """Run a condition; a result bash would only know at run time gives two paths (true, false)."""
        cond = None
        if _is_test(n):
            cond, read = self.test(n, w)
            if self.open_defaults and read:
                cond = Cond(None)
            elif cond.status is not None and read:
                opened = self.opened(n, w, cond, read, what)
                if opened is not None:
                    return opened
        elif n.type == "compound_statement" and n.children and n.children[0].type == "((" and n.named:
            cond = _arith_cond(n.named[0], self.ex(w))  # `(( … ))`: true when the value is not 0
        if cond is None:
            res = self.stmt(n, w)
            if all(r.status is not None for r in res):
                return res
            cond_worlds: list[World] = []
            for r in res:
                if r.status is None:
                    cond_worlds += self.split(r, Cond(None), what)
                else:
                    cond_worlds.append(r)
            return cond_worlds
        return self.split(w, cond, what)

    def test(self, n: Node, w: World) -> tuple[Cond, frozenset[str]]:
        """A `[[ … ]]`, `[ … ]` or `test …` on this path, and the environment variables whose default it read."""
        if n.type == "test_command":
            ex = self.ex(w)
            return test_command(n, ex), frozenset(ex.from_env)
        words = self.words(n, w)[0]
        args = [c for c in n.children if c.type not in ("variable_assignment", *_REDIRECTS) and c.is_named]
        names = [sole_variable(c.named[0] if c.type == "command_name" and c.named else c) for c in args]
        return test_argv(words, names), frozenset().union(*self.word_env[1:])

    def split(self, w: World, cond: Cond, what: str) -> list[World]:
        if cond.status is not None:
            w.status = cond.status
            return [w]
        yes, no = w.fork(Choice(f"{what} true", cond.said_true)), w.fork(Choice(f"{what} false", cond.said_false))
        yes.status, no.status = True, False
        _bind(yes, cond, True)
        _bind(no, cond, False)
        return [yes, no]

    def opened(self, n: Node, w: World, cond: Cond, read: frozenset[str], what: str) -> list[World] | None:
        """A test the script's defaults decide, that compares one of them with words the reader names (`opens`): the
        default is what runs unless the user sets the variable at launch (`DEVICE=${DEVICE:-gpu}`, then `[ "$DEVICE"
        = npu ]`; verl main's `[ "${DEVICE:-gpu}" = gpu ]`), so both sides are paths — the default's, with the value
        the script gives, and the other, with the environment's value (unknown, or the word the test names). None
        when the test is not such a one."""
        env = self.environment_world(w, read)
        if env is None:
            return None
        seen = list(self.walk.unresolved)
        other = self.test(n, env)[0]
        if other.status is not None or self.opens is None or not self.opens(other.said_true + other.said_false):
            self.walk.unresolved[:] = seen  # a probe: the test stays decided, nothing only the run knows was read
            return None
        side = bool(cond.status)
        default = w.fork(Choice(f"{what} {'true' if side else 'false'}", other.said_true if side else other.said_false,
                                tuple(sorted(read - w.chosen))))
        default.status, default.chosen = side, w.chosen | read
        changed = env.fork(Choice(f"{what} {'false' if side else 'true'}", other.said_false if side else other.said_true))
        changed.status = not side
        _bind(changed, other, not side)
        return [default, changed]

    def guard(self, n: Node, w: World) -> tuple[tuple[str, str], ...]:
        """(variable, value) for a test that a default of the script decides true on this path where the environment
        may set that one variable, and names the value that makes it false (`[ "${VERL_USE_UV:-1}" != 0 ]`:
        VERL_USE_UV=0): a run that sets it leaves the `&&` list false. Nothing is recorded as read (a probe)."""
        seen = list(self.walk.unresolved)
        try:
            cond, read = self.test(n, w)
            names = read - w.chosen
            env = self.environment_world(w, read) if cond.status is True and len(names) == 1 else None
            if env is None:
                return ()
            words = [p for s in self.test(n, env)[0].said_false if s.matches for p in s.patterns
                     if p and not any(c in p for c in "*?[")]
            return ((next(iter(names)), words[0]),) if words else ()
        finally:
            self.walk.unresolved[:] = seen

    def environment_world(self, w: World, read: frozenset[str]) -> World | None:
        """This path with the environment variables `read` (whose defaults a test read) set by the environment: each,
        and every variable the script set from their defaults, a value only the run knows. None when the path already
        chose them (an earlier test opened them) or no reader asks (`opens`)."""
        names = read - w.chosen
        if not names or self.opens is None:
            return None
        env = w.copy()
        env.chosen = w.chosen | read
        for k in [k for k, deps in w.from_env.items() if deps & names] + [k for k in names if w.get(k) is None]:
            env.set(k, Str((Hole(f"${k}", SET_BY_ENVIRONMENT),)))
        return env

    def if_(self, n: Node, w: World) -> list[World]:
        parts = _if_parts(n)
        out: list[World] = []
        pending = [w]
        for cond_nodes, body in parts:
            nxt: list[World] = []
            for pw in pending:
                if cond_nodes is None:  # else
                    out.extend(self.block(body, [pw]))
                    continue
                cws = self.block(cond_nodes[:-1], [pw]) if len(cond_nodes) > 1 else [pw]
                for cw in cws:
                    last = cond_nodes[-1]
                    for r in self.condition(last, cw, f"line {last.line}: if `{_short(last.text)}`"):
                        (out.extend(self.block(body, [r])) if r.status else nxt.append(r))
            pending = nxt
            if not pending:
                break
        out.extend(pending)  # no branch taken
        return out

    def case(self, n: Node, w: World) -> list[World]:
        subject_node = n.child("value") or next((c for c in n.named if c.type != "case_item"), None)
        items = [c for c in n.children if c.type == "case_item"]
        ex = self.ex(w)
        subject = ex.scalar(subject_node) if subject_node is not None else Str()
        var = sole_variable(subject_node) if subject_node is not None else None
        out: list[World] = []
        # the words an earlier branch limited the variable to (`gpu | npu)`), less those earlier items took
        left = set(w.one_of[var]) if var and var in w.one_of and not subject.known else None
        shown = _short(subject_node.text if subject_node else "")
        arms = [[ex.scalar(p) for p in item.all("value")] or [ex.scalar(item.named[0])] for item in items]
        # a subject the script's defaults decide and the user may set (`case "${DEVICE:-gpu}"` with device arms): the
        # arm the default takes runs with the default (`w`), every other arm with the environment's value (`base`)
        default, base, unset = None, w, tuple(sorted(frozenset(ex.from_env) - w.chosen))
        env = self.environment_world(w, frozenset(ex.from_env)) if subject.known and subject_node is not None else None
        if env is not None and self.opens is not None \
                and self.opens(tuple(Said(shown, tuple(p.text for p in a), True) for a in arms)):
            seen = list(self.walk.unresolved)
            unknown = self.ex(env).scalar(subject_node)  # type: ignore[arg-type]
            if not unknown.known:
                default, subject, base = subject.text, unknown, env
                w = w.copy()
                w.chosen = env.chosen
            else:
                self.walk.unresolved[:] = seen
        tried: tuple[Said, ...] = ()  # the arms bash tried before this one: the value matched none of them
        for item, scalars in zip(items, arms, strict=True):
            patterns = [p.text for p in scalars]
            said = Said(shown, tuple(patterns), True) if all(p.known for p in scalars) else None
            body = [c for c in item.children if c.field not in ("value", "termination") and c.type not in (")", "|")]
            if subject.known:
                if any(glob_match(subject.text, p) for p in patterns):
                    return self.block(body, [w])
                continue
            literal = [p.text for p in scalars if p.known and not any(c in p.text for c in "*?[")]
            words = set(literal) if len(literal) == len(patterns) else None
            if left is not None and var and all(p.known for p in scalars):
                words = {x for x in left if any(glob_match(x, p) for p in patterns)}
                left -= words
                if not words:
                    continue
            elif left is not None:  # a pattern only the run knows may take any of them
                words = set(left)
            takes_default = default is not None and any(glob_match(default, p) for p in patterns)
            branch = (w if takes_default else base).fork(Choice(f"line {item.line}: case {shown} → {'|'.join(patterns)})",
                                                               tried + ((said,) if said else ()),
                                                               unset if takes_default else ()))
            if takes_default:
                default = None  # bash takes the first arm that matches
            if var and words and len(words) == 1:
                branch.set(var, Str.of(next(iter(words))))
            elif var and words:
                branch.one_of[var] = frozenset(words)
            out.extend(self.block(body, [branch]))
            if "*" in patterns or left == set():
                return out
            if said:
                tried += (replace(said, matches=False),)
        if subject.known:
            return [w]
        out.append((w if default is not None else base).fork(Choice(f"line {n.line}: case {shown} → no pattern", tried,
                                                                    unset if default is not None else ())))
        return out

    def for_(self, n: Node, w: World) -> list[World]:
        var = n.child("variable")
        values = n.all("value")
        body = n.child("body") or next((c for c in n.children if c.type == "do_group"), None)
        if body is None:
            return [w]
        ex = self.ex(w)
        words = [f for v in values for f in ex.fields(v)] if values else list(w.args)
        if len(words) > MAX_LOOP:
            self.note(f"line {n.line}: loop over {len(words)} items; the first {MAX_LOOP} were followed")
            words = words[:MAX_LOOP]
        worlds = [w]
        outer = self.loop
        for i, word in enumerate(words):
            self.loop = outer + (i,)
            for cw in worlds:
                if var is not None:
                    cw.set(var.text, word)
            worlds = self.block(body.children, worlds)
        self.loop = outer
        return worlds

    def while_(self, n: Node, w: World) -> list[World]:
        body = n.child("body") or next((c for c in n.children if c.type == "do_group"), None)
        cond = [c for c in n.children if c.field == "condition" and c.type not in (";", "\n")]
        worlds = [w]
        if cond:
            worlds = self.condition(cond[-1], w, f"line {n.line}: while `{_short(cond[-1].text)}`")
        ran = [x for x in worlds if x.status is (n.children[0].type == "while")]
        rest = [x for x in worlds if x not in ran]
        if body is not None and ran:
            ran = self.block(body.children, ran)  # followed once
        return ran + rest

    def function_def(self, n: Node, w: World) -> list[World]:
        name = n.child("name")
        body = n.child("body") or (n.named[-1] if n.named else None)
        if name is not None and body is not None:
            w.funcs[name.text] = (body, self.reading)  # bash: BASH_SOURCE[0] in its body is the defining file
        w.status = True
        return [w]

    # -- simple commands -------------------------------------------------------------------------------
    def words(self, n: Node, w: World) -> tuple[list[Str], list[int], list[str]]:
        ex = self.ex(w)
        argv: list[Str] = []
        lines: list[int] = []
        self.word_env, self.word_sources = [], []
        for c in n.children:
            if c.type == "variable_assignment" or c.type in _REDIRECTS or not c.is_named:
                continue
            target = c.named[0] if c.type == "command_name" and c.named else c
            ex.from_env = set()
            for f in ex.fields(target):
                argv.append(f)
                lines.append(f.origin or target.line)
                self.word_env.append(frozenset(ex.from_env))
                self.word_sources.append(target.text)
        unsplit = sorted({h.text for f in argv for h in f.holes if h.splits and len(f.parts) == 1})
        return argv, lines, unsplit

    def command(self, n: Node, w: World) -> list[World]:
        prefix = [c for c in n.children if c.type == "variable_assignment"]
        if not any(c.type == "command_name" for c in n.children):
            for a in prefix:
                self.assign(a, w)
            w.status = True
            return [w]
        argv, lines, unsplit = self.words(n, w)
        env = w.copy()
        for a in prefix:
            self.assign(a, env, export=True)
        if not argv:
            return [w]
        at = self.is_entry(argv)
        if at is not None:
            exports = _reaching(_known_exports(env), launch_chain(argv[:at])[1])
            self.walk.calls.append(Call(n.line, self.site(n), argv, lines, w.label,
                                        set(w.hints) | set(env.hints), unsplit, exports, list(self.word_env),
                                        {k: env.from_env[k] for k in exports if env.from_env.get(k)},
                                        list(self.word_sources), self.path if self.via else None,
                                        self.text, self.via, self.outer_args))
            w.status = None
            self.after_entry = (n.line, n.line + n.text.rstrip().count("\n"))
            return [w]
        entry, self.after_entry = self.after_entry, None
        words = [a.text for a in prefix] + [f.text for f in argv]
        if entry is not None and all(_OVERRIDE_WORD.match(f.text) for f in argv):
            cut = CutOff(entry[0], entry[1], n.line, tuple(words))
            if cut not in self.walk.cut_off:
                self.walk.cut_off.append(cut)
            w.status = False  # bash: command not found
            return [w]
        script = how_run(argv)
        if script is not None:
            return self.run_script(n, w, env, argv, script)
        from doctor.launch.shell.builtins import run_builtin

        return run_builtin(self, n, w, argv)

    def site(self, n: Node) -> tuple[int, tuple[int, ...]]:
        """Where a command is: its offset and loop iterations, inside the command that ran this script (if any)."""
        if self.site_base is None:
            return n.start, self.loop
        return self.site_base[0], self.site_base[1] + (-1, n.start) + self.loop

    def run_script(self, n: Node, w: World, env: World, argv: list[Str], run: Launch) -> list[World]:
        """`bash other.sh args…`: walk other.sh as the process bash starts for it — the exported variables (with the
        command's `NAME=value` prefixes) and the arguments reach it, nothing else does; behind `sudo` (without -E)
        or in a Ray job the exports do not reach it either, and a note says so. Its entry-point calls are recorded
        with its own lines and the chain that ran it. Where it cannot be found, a note says so."""
        at = run.at
        word = argv[at]
        target = resolve(word, self.path)
        what = f"line {n.line}: `{_short(n.text)}` runs {word.text}"
        if target is None:
            self.note(f"{what}, which was not found beside the script or under its directories (a path only the run "
                      "knows, or a file not here); its entry points were not checked")
        elif os.path.realpath(target) in self.stack:
            self.note(f"{what}, which is already running on this chain (a cycle); not followed again")
        elif self.depth >= MAX_DEPTH:
            self.note(f"{what}: scripts nested deeper than {MAX_DEPTH} were not followed")
        else:
            try:
                with open(target, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError):
                self.note(f"{what}, which could not be read")
            else:
                if not run.inherit:
                    self.note(f"{what}: {run.reset}, so the variables this script exports were not passed to it"
                              + (f" except {', '.join(sorted(run.keep))}" if run.keep else ""))
                self._run_child(n, w, env, _launch_args(argv[at + 1:], run), run, target, text)
        w.status = None
        if argv[0].text == "exec":
            w.dead = True
        return [w]

    def _run_child(self, n: Node, w: World, env: World, args: list[Str], run: Launch, target: str,
                   text: str) -> None:
        child = Interpreter(target, self.is_entry)
        child.walk, child.open_defaults, child.depth = self.walk, self.open_defaults, self.depth + 1
        child.apart, child.opens = self.apart, self.opens
        child.via = self.via + ((self.path or "-", n.line),)
        child.text, child.site_base = text, self.site(n)
        child.outer_args = self.outer_args and passes_own_arguments(n.text)
        child.stack = self.stack | {os.path.realpath(target)}
        # the arguments' lines are the callee's (where it expands "$@"), not the wrapper's array items
        cw = World(name=target, args=[Str(a.parts) for a in args], label=w.label, hints=set(env.hints))
        for name in sorted(env.exported):
            if (not run.inherit and name not in run.keep) or name in run.unset:
                continue
            v = env.get(name)
            if v is not None:
                cw.vars[name] = v
                if env.from_env.get(name):
                    cw.from_env[name] = env.from_env[name]
            cw.exported.add(name)
        for word in run.env:
            name, _, value = word.partition("=")
            cw.set(name, Str.of(value))
            cw.exported.add(name)
        child.run(parse(text), cw)

    def call_function(self, fn: tuple[Node, str | None], w: World, args: list[Str]) -> list[World]:
        """Run a function's body with its arguments. `${BASH_SOURCE[0]}` there is the file that defined it, even when
        a script calls it after `source` returned (bash's BASH_SOURCE array: the function's own source file), while
        `$0` stays the script."""
        if self.depth >= MAX_DEPTH:
            self.note("functions nested deeper than 8 calls were not followed")
            return [w]
        body, defined_in = fn
        saved = w.args
        w.args = args
        w.locals_stack.append({})
        self.depth += 1
        reading, self.reading = self.reading, defined_in
        out = self.stmt(body, w)
        self.reading = reading
        self.depth -= 1
        for o in out:
            frame = o.locals_stack.pop() if o.locals_stack else {}
            for k, (v, deps) in frame.items():
                (o.unset(k) if v is None else o.set(k, v))
                if v is not None and deps:
                    o.from_env[k] = deps
            o.args = saved
            o.returning = False
        return out

    def source(self, words: list[Str], w: World, line: int) -> list[World]:
        target = words[1].value() if len(words) > 1 else None
        if target and ("ascend" in target.lower() or target.endswith("set_env.sh")):
            w.hints.add(f"sources {target}")
        # found as `bash OTHER.sh` is (wrapper.candidates): beside the script, through its SCRIPT_DIR idiom
        # (`source "${SCRIPT_DIR}/env.sh"`, verl v0.6.1's 96gb megatron examples), or under a parent directory
        path = resolve(words[1], self.path) if len(words) > 1 else None
        what = f"line {line}: `source {words[1].text if len(words) > 1 else ''}` was not read"
        if path is None:
            self.note(f"{what} (not found beside the script or under its directories: a path only the run knows, "
                      "or a file not here)")
            w.status = None
            return [w]
        if self.depth >= MAX_DEPTH:
            self.note(f"{what} (files nested deeper than {MAX_DEPTH} were not read)")
            w.status = None
            return [w]
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            self.note(f"line {line}: `source {target}` could not be read")
            return [w]
        self.depth += 1
        reading, self.reading = self.reading, path
        out = self.block(parse(text).children, [w])
        self.depth -= 1
        self.reading = reading
        return out


def _reaching(exports: dict[str, str], run: Launch) -> dict[str, str]:
    """The exports an entry point the launchers before it start gets (`srun … env -u X A=1 python3 -m …`): none
    behind sudo without -E or in a Ray job (but those the launcher keeps), less `env -u`, plus `env A=1`."""
    out = {k: v for k, v in exports.items() if (run.inherit or k in run.keep) and k not in run.unset}
    for word in run.env:
        name, _, value = word.partition("=")
        out[name] = value
    return out


def _launch_args(args: list[Str], run: Launch) -> list[Str]:
    """The arguments the script gets: xargs adds the words it reads from standard input (after them, or in place of
    its -I string), which only the run knows."""
    stdin = Hole("<xargs input>", "standard input of xargs", splits=True)
    if run.replace:
        return [Str((stdin,)) if a.known and run.replace in a.text else a for a in args]
    return args + [Str((stdin,))] if run.stdin_args else args


_OVERRIDE_WORD = re.compile(r"^(?:\+\+|\+|~)?[A-Za-z_][\w\-]*(?:\.[\w\-@/]+)+=")  # a dotted Hydra key=value word
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect", "heredoc_body", "heredoc_start")


def _is_test(n: Node) -> bool:
    return n.type == "test_command" or (n.type == "command" and _name(n) in ("[", "test"))


def _guarded(w: World, start: int, guards: tuple[tuple[str, str], ...]) -> World:
    """`w` with `guards` (Interpreter.guard) on the choices an `&&` list of tests made that a default decided
    (`Choice.defaulted`), on the side where the list is true: the side a run also leaves by those values."""
    if not guards or w.status is not True:
        return w
    label = tuple(Choice(c, c.said, c.defaulted, c.guards + guards) if isinstance(c, Choice) and c.defaulted else c
                  for c in w.label[start:])
    w.label = w.label[:start] + label
    return w


def _bind(w: World, cond: Cond, side: bool) -> None:
    """What a test's side says the variables hold: `[[ $X == npu ]]` true: X is npu; past `[ -n "$X" ]` on its true
    side X is what the environment set, not the empty default."""
    binding, env = (cond.if_true, cond.env_if_true) if side else (cond.if_false, cond.env_if_false)
    for k, v in binding.items():
        w.set(k, Str.of(v))
    for k, v in (cond.unlike_true if side else cond.unlike_false).items():
        if k in w.one_of and k not in binding:  # `[ "$DEVICE" = npu ]` false after `gpu | npu)`: DEVICE is gpu
            rest = w.one_of[k] - {v}
            if len(rest) == 1:
                w.set(k, Str.of(next(iter(rest))))
            else:
                w.one_of[k] = rest
    for k in env:
        w.set(k, Str((Hole(f"${k}", SET_BY_ENVIRONMENT),)))


def _arith_cond(expr: Node, ex: Expander) -> Cond:
    from doctor.launch.shell.arith import ArithUnknown, evaluate

    try:
        return Cond(evaluate(expr, ex) != 0)
    except ArithUnknown:
        return Cond(None)


def _name(n: Node) -> str:
    cn = next((c for c in n.children if c.type == "command_name"), None)
    return cn.text if cn else ""


def _short(text: str) -> str:
    t = " ".join(text.split())
    return t if len(t) <= 60 else t[:57] + "..."


def _if_parts(n: Node) -> list[tuple[list[Node] | None, list[Node]]]:
    """[(condition statements, body statements)] for if / elif…, then (None, else body)."""
    parts: list[tuple[list[Node] | None, list[Node]]] = []

    def split(children: list[Node]) -> tuple[list[Node], list[Node]]:
        cond: list[Node] = []
        body: list[Node] = []
        seen_then = False
        for c in children:
            if c.type == "then":
                seen_then = True
            elif c.type in ("elif_clause", "else_clause", "if", "elif", "fi", ";", "\n", "comment"):
                continue
            elif seen_then:
                body.append(c)
            else:
                cond.append(c)
        return cond, body

    cond, body = split(n.children)
    parts.append((cond, body))
    for c in n.children:
        if c.type == "elif_clause":
            parts.append(split(c.children))
        elif c.type == "else_clause":
            parts.append((None, [k for k in c.children if k.type != "else"]))
    return parts


_HANDLERS: dict[str, Callable[[Interpreter, Node, World], list[World]]] = {
    "command": Interpreter.command,
    "declaration_command": Interpreter.declaration,
    "unset_command": Interpreter.unset,
    "redirected_statement": Interpreter.redirected,
    "subshell": Interpreter.subshell,
    "pipeline": Interpreter.pipeline,
    "negated_command": Interpreter.negated,
    "list": Interpreter.list_,
    "if_statement": Interpreter.if_,
    "case_statement": Interpreter.case,
    "for_statement": Interpreter.for_,
    "while_statement": Interpreter.while_,
    "function_definition": Interpreter.function_def,
    "test_command": lambda self, n, w: self.split(w, test_command(n, self.ex(w)), f"line {n.line}: `{_short(n.text)}`"),
    "c_style_for_statement": lambda self, n, w: self.block((n.child("body") or n).children, [w]),
}

__all__ = ["Call", "Hole", "Interpreter", "Walk"]
