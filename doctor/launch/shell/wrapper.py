"""Which other script a command runs, and where that script is on disk — so lint can follow a wrapper.

Upstream verl starts runs through wrappers: main's `tests/special_e2e/run_v1_separate_async_ascend.sh` builds the
Ascend overrides and ends with `exec bash "${SCRIPT_DIR}/run_v1_separate_async.sh" "${params[@]}" "$@"`, and
`tests/special_e2e/sft/test_sft_engine_all.sh` runs `BACKEND=megatron … bash tests/special_e2e/sft/run_sft_engine.sh`
(a path relative to the repository root, where upstream's CI runs it). A lint that stops at the wrapper checks
nothing, so the walker runs the script the command names in a new process of its own (only exported variables and
the arguments reach it).

Pure logic: the file system is asked only whether a candidate path is a file (`exists`, injectable).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from doctor.launch.shell.values import Hole, Str

SHELLS = ("bash", "sh", "dash", "zsh")
# Commands that run the command after them (in the same process, or a child with the same environment and
# arguments): per command, its options that take the next word as a value, and how many operands come before the
# command (`timeout DURATION`). verl's own docs start a run with `nohup bash examples/…/run_….sh … > log 2>&1 &`
# (docs/sglang_multiturn/search_tool_example.rst); `timeout`, `setsid`, `stdbuf`, `nice` are coreutils /
# util-linux commands of the same kind (their man pages give the options).
_PREFIXES: dict[str, tuple[frozenset[str], int]] = {
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "command": (frozenset(), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "setsid": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
}


def _after_prefix(words: list[str | None], i: int) -> int | None:
    """The index of the word after prefix command `words[i]` and its options and operands; None when that command
    does not run what follows it (`command -v bash`)."""
    name = os.path.basename(words[i] or "")
    takes_value, operands = _PREFIXES[name]
    i += 1
    while i < len(words) and words[i] is not None and (words[i] or "").startswith("-") and words[i] != "-":
        w = words[i] or ""
        if w == "--":
            i += 1
            break
        if w in ("-v", "-V") and name == "command":
            return None
        i += 2 if w in takes_value else 1
    return i + operands

# `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, `$(dirname "$0")`, `$(dirname $(readlink -f "$0"))`,
# `$(realpath "$(dirname "${BASH_SOURCE[0]}")")`, `` `dirname $0` ``: the directory of the running script. Read as
# its words: only these commands and `$0` / `${BASH_SOURCE[0]}`, with `dirname` and the script's name in it.
_SCRIPT_DIR_WORDS = {"cd", "dirname", "pwd", "-P", "realpath", "readlink", "-f", "&&", ";", "$0", "${0}",
                     "$BASH_SOURCE", "${BASH_SOURCE}", "${BASH_SOURCE[0]}", ">/dev/null", "2>&1", "--"}


def script_dir_of(text: str) -> str | None:
    """Which file's directory a command substitution names, when it is one of the usual ways to name it:
    "BASH_SOURCE" (the file bash is reading, a sourced file while it is read) or "$0" (the script bash runs, also
    inside a file it sources); None for anything else."""
    words = re.sub(r"\$\(|`|\)|\"|'", " ", text).split()
    if "dirname" not in words or not all(w in _SCRIPT_DIR_WORDS for w in words):
        return None
    if any("BASH_SOURCE" in w for w in words):
        return "BASH_SOURCE"
    return "$0" if any("0" in w for w in words) else None


def is_script_dir(hole: Hole) -> bool:
    """Whether a command substitution is one of the usual ways to name the running script's own directory."""
    return hole.why == "command substitution" and script_dir_of(hole.text) is not None


# Commands that start the command after their options somewhere (this host or the job's nodes), each with the
# options that take the next word as a value (two words: Open MPI's `--mca NAME VALUE`, MPICH's `-genv NAME VALUE`).
# Their option lists are the tools' own manuals: Slurm's srun(1) (`--export` decides which variables reach the
# task: ALL by default), Open MPI's mpirun(1) and MPICH's mpiexec (the started processes inherit mpirun's environment
# on its own node), sudo(8) (env_reset: without -E / --preserve-env the command gets a fresh environment, sudoers
# decides the few it keeps; `NAME=value` words before the command are set), GNU findutils' xargs(1) (the words read
# from standard input are appended, or replace the -I string), and `ray job submit … -- CMD` (Ray's job CLI: the
# entrypoint is sent to the cluster's job server with the runtime_env, and runs there in the job's runtime environment,
# not this shell's: https://docs.ray.io/en/latest/cluster/running-applications/job-submission/doc/ray.job_submission.JobSubmissionClient.submit_job.html).
_SRUN_VALUES = frozenset({
    "-A", "-b", "-c", "-C", "-D", "-d", "-e", "-G", "-i", "-J", "-L", "-M", "-m", "-N", "-n", "-o", "-p", "-q", "-S",
    "-T", "-t", "-W", "-w", "-x", "--account", "--begin", "--chdir", "--comment", "--constraint", "--container",
    "--container-image", "--container-mounts", "--container-name", "--container-workdir", "--cpu-bind",
    "--cpus-per-gpu", "--cpus-per-task", "--dependency", "--distribution", "--error", "--exclude", "--export",
    "--gpus", "--gpus-per-node", "--gpus-per-task", "--gres", "--het-group", "--input", "--job-name", "--jobid",
    "--mem", "--mem-per-cpu", "--mem-per-gpu", "--mpi", "--network", "--nodelist", "--nodes", "--ntasks",
    "--ntasks-per-gpu", "--ntasks-per-node", "--output", "--partition", "--qos", "--reservation", "--signal",
    "--threads-per-core", "--time", "--time-min", "--wckey"})
_MPI_VALUES = frozenset({
    "-n", "-np", "-c", "-N", "-H", "-host", "--host", "-hosts", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "-f", "-x", "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-rank-by", "-wdir",
    "--wdir", "-wd", "--prefix", "-prefix", "-npernode", "--npernode", "-ppn", "--rankfile", "-rf",
    "--output-filename", "-genvlist", "-envlist", "--tmpdir", "-launcher", "-bootstrap"})
_LAUNCHERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {  # name: (one-value options, two-value options)
    "srun": (_SRUN_VALUES, frozenset()),
    "mpirun": (_MPI_VALUES, frozenset({"--mca", "-mca", "-gmca", "--gmca", "-genv", "-env"})),
    "mpiexec": (_MPI_VALUES, frozenset({"--mca", "-mca", "-gmca", "--gmca", "-genv", "-env"})),
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group",
                        "--chdir", "--prompt", "--role", "--type", "--other-user", "--command-timeout",
                        "--close-from", "--host"}), frozenset()),
    "xargs": (frozenset({"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter",
                         "--max-args", "--max-procs", "--max-lines", "--max-chars", "--eof"}), frozenset()),
}
_SUDO_NO_RUN = frozenset({"-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-e", "--edit", "-V",
                          "--version", "--help"})


@dataclass
class Launch:
    """How a command runs a script file with a shell: where the file word is, and what of this shell reaches it."""

    at: int  # index of the script word (or of an unknown word where it goes)
    env: list[str] = field(default_factory=list)  # `NAME=value` words set for it (`env A=1`, `sudo A=1`)
    inherit: bool = True  # the exported variables reach it (not after sudo's env_reset, nor in a Ray job)
    keep: frozenset[str] = frozenset()  # when not inherited: the exported names that still reach it
    reset: str = ""  # when not inherited: why (for the report)
    unset: set[str] = field(default_factory=set)  # `env -u NAME`: exported names that do not reach it
    stdin_args: bool = False  # xargs: words from standard input follow the arguments
    replace: str | None = None  # xargs -I STR: each argument holding STR gets standard input's words in its place
    through: list[str] = field(default_factory=list)  # the launchers on the way (`srun`, `sudo`), for the report


def _after_launcher(words: list[str | None], i: int, run: Launch) -> int | None:
    """The index of the command `words[i]` (a `_LAUNCHERS` command, or `ray` of `ray job submit`) starts, updating
    what reaches that command; None when it starts none (`sudo -l`, a Ray command other than `job submit`)."""
    name = os.path.basename(words[i] or "")
    run.through.append(name)
    if name == "ray":
        if words[i + 1:i + 3] != ["job", "submit"] or "--" not in words[i + 3:]:
            return None
        run.inherit, run.keep, run.reset = False, frozenset(), "a Ray job runs in the job's runtime environment"
        return words.index("--", i + 3) + 1
    one, two = _LAUNCHERS[name]
    i += 1
    while i < len(words) and words[i] is not None and (w := words[i] or "").startswith("-"):
        opt, eq, value = w.partition("=")
        if w == "--":
            i += 1
            break
        if name == "sudo" and w in _SUDO_NO_RUN:
            return None
        if name == "sudo" and (w == "-E" or opt == "--preserve-env"):
            if eq:  # --preserve-env=A,B: those names only
                run.keep = run.keep | frozenset(value.split(","))
            else:
                run.inherit = True
        if name == "srun" and opt == "--export":
            names = (value if eq else (words[i + 1] or "") if i + 1 < len(words) else "").split(",")
            run.inherit, run.reset = "ALL" in names, f"srun --export={','.join(names)} passes only what it names"
            run.keep = frozenset(n for n in names if n and n not in ("ALL", "NONE", "NIL") and "=" not in n)
            run.env += [n for n in names if "=" in n]
        if name == "xargs" and opt == "-I" and not eq:
            run.replace = words[i + 1] if i + 1 < len(words) else None
        elif name == "xargs" and (opt == "--replace" or w.startswith("-i")):  # `-iSTR`, `--replace=STR`: {} if none
            run.replace = (value if opt == "--replace" else w[2:]) or "{}"
        i += 1 + (0 if eq else 2 if w in two else 1 if w in one else 0)
    if name == "sudo":
        while i < len(words) and words[i] is not None and re.match(r"^[A-Za-z_]\w*=", words[i] or ""):
            run.env.append(words[i] or "")
            i += 1
    if name == "xargs":
        run.stdin_args = run.replace is None
    return i


def _after_env(words: list[str | None], i: int, run: Launch) -> int | None:
    """The index of the command `env [options] [NAME=value…]` at `words[i]` runs (GNU coreutils env(1): `-u NAME`
    unsets, `-i` starts from an empty environment, `-C DIR` changes directory); None for `-S` (the command is a
    string it splits)."""
    i += 1
    while i < len(words) and words[i] is not None:
        w = words[i] or ""
        if w in ("-i", "-", "--ignore-environment"):
            run.inherit, run.keep, run.env = False, frozenset(), []
            run.reset = "env -i starts it with an empty environment"
        elif w in ("-u", "--unset", "-C", "--chdir"):
            if w in ("-u", "--unset") and i + 1 < len(words) and words[i + 1]:
                run.unset.add(words[i + 1] or "")
            i += 1
        elif w.startswith(("--unset=", "-u")):
            run.unset.add(w.split("=", 1)[1] if w.startswith("--") else w[2:])
        elif w.startswith(("-S", "--split-string")):
            return None
        elif w.startswith("-"):
            pass  # -0, -v, --debug, `--`
        elif re.match(r"^[A-Za-z_]\w*=", w):
            run.env.append(w)
        else:
            break
        i += 1
    return i


def launch_chain(argv: list[Str]) -> tuple[int | None, Launch]:
    """(the index of the command after a chain of the `_PREFIXES` and `_LAUNCHERS` commands and `env`, what of this
    shell's environment reaches it); the index is None when the chain runs no command (`sudo -l`, `command -v`)."""
    words = [a.value() for a in argv]
    i: int | None = 0
    run = Launch(0)
    while i is not None and i < len(words) and words[i] is not None:
        name = os.path.basename(words[i] or "")
        if name in _PREFIXES:
            i = _after_prefix(words, i)
        elif name in _LAUNCHERS or name == "ray":
            if name == "sudo":  # env_reset, unless -E / --preserve-env
                run.inherit, run.keep = False, frozenset()
                run.reset = "sudo resets the environment (env_reset; the sudoers env_keep list may keep some)"
            i = _after_launcher(words, i, run)
        elif name == "env":
            i = _after_env(words, i, run)
        else:
            break
    return i, run


def how_run(argv: list[Str]) -> Launch | None:
    """How the command runs a script file with a shell: `bash FILE args`, `sh -x FILE`, `exec bash FILE`,
    `/usr/bin/env bash FILE`, `env A=1 bash FILE`, `timeout 2h bash FILE`, `srun -N 2 bash FILE`, `mpirun -np 8
    bash FILE`, `sudo -E bash FILE`, `xargs -I {} bash FILE {}`, `ray job submit … -- bash FILE` (see
    `launch_chain`). None for anything else, `bash -c '…'` and a shell reading standard input included."""
    words = [a.value() for a in argv]
    i, run = launch_chain(argv)
    if i is None:
        return None
    if i >= len(words) or words[i] is None or os.path.basename(words[i] or "") not in SHELLS:
        return None
    i += 1
    while i < len(words):
        w = words[i]
        if w is None:
            run.at = i
            return run  # an unknown word where the file goes: the caller says it could not be resolved
        if w in ("-c", "-s", "-i") or (w.startswith("-") and not w.startswith("--") and "c" in w[1:]):
            return None
        if w in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if w.startswith(("-", "+")):
            i += 1
            continue
        run.at = i
        return run
    return None


def candidates(word: Str, script: str | None) -> list[str]:
    """Where bash may find the script a word names, most likely first. `script` is the running script's path.

    A leading script-directory substitution (`${SCRIPT_DIR}/x.sh` with `SCRIPT_DIR="$(cd "$(dirname …)" && pwd)"`)
    is that directory (the one the walker recorded where it ran, else the running script's); a relative path is taken relative to the running script's directory, then to each of its
    parent directories (the working directory of upstream's CI is the repository root, which is one of them);
    anything else with a hole in it cannot be placed."""
    here = os.path.dirname(os.path.abspath(script)) if script else None
    parts = word.parts
    if parts and isinstance(parts[0], Hole) and is_script_dir(parts[0]) and (parts[0].base or here) is not None:
        rest = Str(parts[1:])
        if not rest.known:
            return []
        base = parts[0].base or here
        return [os.path.normpath(f"{base}{rest.text}")] if rest.text.startswith("/") else []
    if not word.known:
        return []
    target = word.text
    if target.startswith("~") or target.startswith("$"):
        return []
    if os.path.isabs(target):
        return [target]
    if here is None:
        return []
    out = [os.path.normpath(os.path.join(here, target))]
    d = here
    while os.path.dirname(d) != d:
        d = os.path.dirname(d)
        out.append(os.path.normpath(os.path.join(d, target)))
    return out


def resolve(word: Str, script: str | None, exists: Callable[[str], bool] = os.path.isfile) -> str | None:
    """The first candidate (see `candidates`) that is a file, else None."""
    return next((c for c in candidates(word, script) if exists(c)), None)


_PASSES_ARGS = re.compile(r'"?\$(\{)?[@*]\}?"?')


def passes_own_arguments(command_text: str) -> bool:
    """Whether a command hands its script's own arguments on (`"$@"`, `$*`)."""
    return bool(_PASSES_ARGS.search(command_text))
