"""Read an existing verl launch script into the Hydra overrides each entry-point call would receive — as bash
would expand them, without running anything.

The script is parsed with tree-sitter-bash and walked by doctor.launch.shell (expansion, arrays, functions,
`source`, branches as separate paths). Each entry-point command (`python3 -m verl.trainer.main_ppo`, a recipe
or experimental `main_*` / `*_main` module such as `fully_async_main`, an SFT trainer such as
`verl.trainer.fsdp_sft_trainer` under `torchrun`, or `…/main_ppo.py`) becomes a `Call`; a call reached on several paths (an
`if`/`case` the script cannot decide by itself) has one `Invocation` per path, its *alternatives*.
Syntax errors are bash's own: `bash -n` (when bash exists) decides, and its message names the line.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field

from doctor.errors import InputError
from doctor.launch.device_branch import compares_device, device_of
from doctor.launch.override_list import Override, parse_override
from doctor.launch.shell.interp import Call as _WalkCall
from doctor.launch.shell.interp import CutOff, Interpreter
from doctor.launch.shell.tree import parse
from doctor.launch.shell.values import Str
from doctor.launch.shell.world import World, mergeable, shared

_MODULE = re.compile(r"^(?:verl|recipe)(?:\.\w+)*\.(?:main_\w+|\w+_main|\w*sft_trainer\w*)$")
_FILE = re.compile(r"(?:^|/)(?:main_\w+|\w+_main|\w*sft_trainer\w*)\.py$")
# Launcher modules that run the module named by their first argument as `__main__` with the arguments after it, so
# `python -m LAUNCHER verl.trainer.sft_trainer k=v …` is that entry point with those overrides. Megatron Lite's verl
# glue, as verl main's examples/sft/gsm8k/run_deepseek_v4_megatron_lite.sh starts it: its main() sets
# `sys.argv = [module, *sys.argv[2:]]`, patches verl, imports its engine (registering "mlite"), then
# `runpy.run_module(module, run_name="__main__", alter_sys=True)` (https://github.com/NVIDIA/Megatron-LM/blob/
# 4463f78179d67691bf6a00f9c2e3062ca9fe41db/experimental/lite/examples/verl/verl_mlite/launch.py).
MODULE_LAUNCHERS = frozenset({"verl_mlite.launch"})


@dataclass(frozen=True)
class Word:
    """A word of the command before the entry point (the launcher: `torchrun --nnodes=2 … -m`)."""

    text: str  # as bash passes it (an unknown part written as its source text)
    line: int
    known: bool
    from_env: tuple[str, ...] = ()  # environment variables whose default (`${X:-d}`) it took: see World.from_env
    ref: str | None = None  # the one variable the word expands (`--master_addr=$ADDR`: ADDR), if one
    set_at: int | None = None  # the line that sets it


@dataclass
class Invocation:
    """One entry-point call on one path through the script."""

    line: int
    entry: str = "verl.trainer.main_ppo"
    config_name: str | None = None
    config_path: str | None = None
    args: list[str] = field(default_factory=list)
    overrides: list[Override] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    passthrough: bool = False  # "$@" was given
    label: tuple[str, ...] = ()  # the branch choices of this path
    hints: list[str] = field(default_factory=list)  # why this path looks like an NPU run
    unknown_args: list[str] = field(default_factory=list)  # unquoted unknown expansions (maybe several words)
    exports: dict[str, str] = field(default_factory=dict)  # exported variables with a known value on this path
    export_lines: dict[str, int] = field(default_factory=dict)  # where each was last set before the call
    exports_from_env: dict[str, tuple[str, ...]] = field(default_factory=dict)  # exports that took a default
    launcher: list[Word] = field(default_factory=list)  # the words before the entry point
    args_from_env: list[tuple[str, ...]] = field(default_factory=list)  # per arg, Word.from_env
    # a call in a script the linted one runs (`bash other.sh`): that script's path, and the (script, line) chain that
    # ran it; `line` and the overrides' lines are that script's own
    file: str | None = None
    via: list[tuple[str, int]] = field(default_factory=list)
    # override key -> the environment variables whose default its value took (`trainer.nnodes=${NNODES}` after
    # `NNODES=${NNODES:-1}`: ("NNODES",)): a value the job may replace
    override_defaults: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # `--config-name "$1"`: a config name only the run knows (the config is then not composed; a `--config-path` with
    # a hole, `$(pwd)/examples/x/config`, is placed by entry.in_release)
    unknown_config: str | None = None


@dataclass
class Call:
    """An entry-point command of the script; `alternatives` are its paths (one when nothing branches)."""

    alternatives: list[Invocation]

    @property
    def line(self) -> int:
        return self.alternatives[0].line

    def __getattr__(self, name: str) -> object:  # the first path's fields, for the common single-path case
        if name == "alternatives":
            raise AttributeError(name)
        return getattr(self.alternatives[0], name)


@dataclass
class ParsedScript:
    invocations: list[Call]
    unresolved: list[str]
    notes: list[str] = field(default_factory=list)
    cut_off: list[CutOff] = field(default_factory=list)  # override-only commands right after an entry point


def entry_index(argv: list[Str]) -> int | None:
    """Index of the entry module (after `-m`, or after `-m` and a launcher module of MODULE_LAUNCHERS) or `main_*.py`
    word, else None."""
    words = [a.value() for a in argv]
    for i, w in enumerate(words):
        if w is None:
            continue
        if i > 0 and words[i - 1] == "-m" and _MODULE.match(w):
            return i
        if i > 1 and words[i - 2] == "-m" and words[i - 1] in MODULE_LAUNCHERS and _MODULE.match(w):
            return i  # `-m verl_mlite.launch verl.trainer.sft_trainer`: the module the launcher runs
        if _FILE.search(w) and (i == 0 or "verl" in w or "recipe" in w or w == "main_ppo.py"):
            return i
    return None


def bash_syntax_error(text: str) -> tuple[int | None, str] | None:
    """(line, message) when bash -n rejects the text; None when it parses (or no bash is installed)."""
    bash = shutil.which("bash")
    if bash is None:
        return None
    from doctor.probes._run import run_bounded

    r = run_bounded([bash, "-n"], 20, stdin_data=text.encode("utf-8"), env={"PATH": "/usr/bin:/bin"})
    if r.status != "ok" or r.returncode == 0:
        return None
    msg = r.err.strip().splitlines()
    m = re.search(r"line (\d+):", msg[0] if msg else "")
    clean = [re.sub(r"^(bash: )?(line \d+: )?", "", x) for x in msg]
    return (int(m.group(1)) if m else None), "; ".join(x for x in clean if x) or "bash -n rejects the script"


def parse_script(text: str, source: str = "-", path: str | None = None) -> ParsedScript:
    """Parse a launch script into its entry-point calls. InputError on shell syntax bash rejects."""
    err = bash_syntax_error(text)
    if err is not None:
        line, msg = err
        raise InputError(f"not valid bash: {msg}", source=source, path=f"line {line}" if line else None)
    root = parse(text)
    it = _interpreter(path)
    it.run(root, World(name=path or source))
    if not it.walk.calls:  # e.g. a worker node's script: NODE_RANK=${NODE_RANK:-1}, then `exec ray start` unless 0
        again = _interpreter(path)
        again.open_defaults = True
        again.run(root, World(name=path or source))
        if again.walk.calls:
            it = again
            it.note("the script's own defaults reach no entry point; the paths on which the environment replaces "
                    "a default that a test reads were followed")
    calls: dict[tuple[int, tuple[int, ...]], list[Invocation]] = {}
    for c in it.walk.calls:
        inv = _invocation(c, text)
        group = calls.setdefault(c.site, [])
        same = next((g for g in group if _same(inv, g) and mergeable(g.label, inv.label, device_of)), None)
        if same is None:
            group.append(inv)
        else:
            same.label = shared(same.label, inv.label)
    ordered = sorted(calls.items(), key=lambda kv: kv[0])
    return ParsedScript([Call(v) for _, v in ordered], it.walk.unresolved, it.walk.notes, it.walk.cut_off)


def _interpreter(path: str | None) -> Interpreter:
    """The walker, reading the script's device branches as lint does (device_branch): paths on different devices
    stay apart, and a test of a device default the user overrides at launch is followed both ways."""
    it = Interpreter(path, entry_index)
    it.apart, it.opens = device_of, compares_device
    return it


def _same(a: Invocation, b: Invocation) -> bool:
    return (a.args, a.config_name, a.config_path, sorted(a.hints), a.exports, a.launcher, a.file, a.via) == (
        b.args, b.config_name, b.config_path, sorted(b.hints), b.exports, b.launcher, b.file, b.via)


_FLAGS = (("--config-name", "config_name"), ("-cn", "config_name"), ("--config-path", "config_path"),
          ("-cp", "config_path"), ("--config-dir", "config_dir"), ("-cd", "config_dir"))


def _invocation(c: _WalkCall, text: str) -> Invocation:
    text = c.text if c.text is not None else text
    at = entry_index(c.argv)
    assert at is not None
    entry = c.argv[at].text
    if entry.endswith(".py"):
        entry = entry.rsplit("/", 1)[-1][:-3]
        entry = "verl.trainer.main_ppo" if entry == "main_ppo" else entry
    rest = list(zip(c.argv[at + 1:], c.lines[at + 1:], strict=True))
    inv = Invocation(line=c.line, entry=entry, args=[a.text for a, _ in rest], label=c.label,
                     hints=sorted(c.hints), unknown_args=list(c.unsplit),
                     passthrough=c.outer_args and _passthrough(text, c.line), file=c.file, via=list(c.via),
                     exports=dict(c.exports), export_lines=_set_lines(text, c.line, c.exports),
                     exports_from_env={k: tuple(sorted(v)) for k, v in c.exports_from_env.items()},
                     launcher=_launcher(c, at, text), args_from_env=[tuple(sorted(d)) for d in c.from_env[at + 1:]])
    k = 0
    while k < len(rest):
        a, ln = rest[k]
        for flag, attr in _FLAGS:
            if a.text == flag and k + 1 < len(rest):
                _set_flag(inv, attr, rest[k + 1][0].text, rest[k + 1][0].known, flag)
                k += 1
                break
            if a.text.startswith(flag + "="):
                _set_flag(inv, attr, a.text[len(flag) + 1:], a.known, flag)
                break
        else:
            if a.text in inv.unknown_args:
                pass  # said once as unknown arguments
            else:
                o = parse_override(a.sample, ln)
                if o is None:
                    inv.ignored.append(a.text)
                else:
                    if not a.known:
                        o = Override(o.key, o.value, o.prefix, ln, tuple(h.text for h in a.holes), a.text)
                    inv.overrides.append(o)
                    env = _named_on(c.from_env[at + 1 + k] if at + 1 + k < len(c.from_env) else frozenset(),
                                    text, ln)
                    if env:
                        inv.override_defaults[o.key] = tuple(sorted(env))
                    else:
                        inv.override_defaults.pop(o.key, None)
        k += 1
    return inv


_REFERENCE = re.compile(r"\$\{?([A-Za-z_]\w*)")


def _named_on(names: frozenset[str], text: str, line: int) -> frozenset[str]:
    """The environment defaults a word took that its own line names (`trainer.nnodes=${NNODES}`). The walk keeps one
    set per array, so an item of `"${params[@]}"` carries what every item read; its line tells which are its own."""
    lines = text.splitlines()
    refs = set(_REFERENCE.findall(lines[line - 1])) if 0 < line <= len(lines) else set()
    return frozenset(n for n in names if n in refs)


def _launcher(c: _WalkCall, at: int, text: str) -> list[Word]:
    """The words before the entry point (`torchrun --nnodes=2 … -m`), each with where its value comes from."""
    out = []
    for a, line, env, src in zip(c.argv[:at], c.lines[:at], c.from_env[:at], c.sources[:at], strict=True):
        refs = set(_REFERENCE.findall(src))
        ref = refs.pop() if len(refs) == 1 else None
        out.append(Word(a.text, line, a.known, tuple(sorted(env)), ref,
                        _set_lines(text, c.line, {ref: ""}).get(ref) if ref else None))
    return out


def _set_lines(text: str, call_line: int, names: dict[str, str]) -> dict[str, int]:
    """The line that last sets each name before (or on) the call's line: `NAME=`, `export NAME=`, `declare -x NAME=`
    at a command's start or as a prefix of the call itself. A name set only by a function or a sourced file has
    none (the finding then names no line)."""
    lines = text.splitlines()
    out: dict[str, int] = {}
    for name in names:
        pat = re.compile(rf"(?:^|[\s;&|(])(?:export\s+|declare\s+-\w*x\w*\s+)?{re.escape(name)}=")
        for n in range(min(call_line, len(lines)), 0, -1):
            if pat.search(lines[n - 1].split("#", 1)[0]):
                out[name] = n
                break
    return out


def _set_flag(inv: Invocation, attr: str, value: str, known: bool = True, flag: str = "") -> None:
    if not known and attr == "config_name":  # `--config-name "$1"`: no name to compose (a path keeps its known part)
        inv.unknown_config = f"{flag} {value}"
        return
    if attr == "config_dir":
        inv.ignored.append(f"--config-dir={value}")
        return
    setattr(inv, attr, value)


def _passthrough(text: str, line: int) -> bool:
    """Whether the command starting at `line` passes the script's own arguments ("$@" / $*) on."""
    lines = text.splitlines()
    i = line - 1
    chunk = []
    while i < len(lines):
        chunk.append(lines[i])
        if not lines[i].rstrip().endswith("\\"):
            break
        i += 1
    return bool(re.search(r'"?\$(\{)?[@*]\}?"?', "\n".join(chunk)))
