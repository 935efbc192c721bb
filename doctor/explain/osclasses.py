"""Failure classes the operating system and its programs define, for an error line no package owns.

`doctor.explain.classes` reads what an exception's type or an error line's words say. These are the classes whose
definition is the operating system's (or its programs' conventions), so they hold whatever wrote the line:

* an `errno` number printed with a failure (`get sem errno =13`, `open failed, errno: 28`): the system call failed for
  the reason the number is defined for (Linux, include/uapi/asm-generic/errno-base.h and errno.h) -> system (the
  network for the socket numbers, which `classes` already reads from their texts);
* a program's own error line, `program: message` (GNU Coding Standards, "Formatting Error Messages"; POSIX
  utilities print their diagnostics the same way): the system program failed on what it was given -> system;
* a program that a tool looks for and does not find (`Unable to find the ... utility \\`X\\``, `command X not found`)
  -> system (the host lacks the program) and env (PATH);
* a script or program installed where PATH does not look (pip: "The script X is installed in 'DIR' which is not on
  PATH") -> env;
* a process killed by a signal whose cause the system defines (SIGBUS: shared memory or a mapping that cannot be
  backed; SIGKILL: the OOM killer or a supervisor; signal(7)) -> system;
* a timeout whose message names the setting that bounds it (`increase RAY_CGRAPH_get_timeout which is currently 10
  seconds`: Ray's compiled graph, ray/dag/compiled_dag_node.py
  of ray 2.60.0, raising RayChannelTimeoutError): the component reading the variable, and env (the
  value to raise).

Read after `classes.line_class` (its classes are more precise), only for lines that are no notice. Pure logic.
"""

from __future__ import annotations

import re

from doctor.explain.class_phrases import OS_PHRASES
from doctor.explain.classes import Class
from doctor.explain.lexicon import NOTICE_RECORD, components_named, env_var_component
from doctor.knowledge.ownership import owner_of_path
from doctor.report import Severity

ERRNO_SOURCE = "https://github.com/torvalds/linux/blob/v6.6/include/uapi/asm-generic/errno-base.h"
ERRNO_MORE_SOURCE = "https://github.com/torvalds/linux/blob/v6.6/include/uapi/asm-generic/errno.h"
GNU_ERRORS = "https://www.gnu.org/prep/standards/html_node/Errors.html"
BASH_SEARCH = "https://www.gnu.org/software/bash/manual/bash.html#Command-Search-and-Execution"
PIP_SCRIPTS = ("https://github.com/pypa/pip/blob/26.3/src/pip/_internal/operations/install/wheel.py"
               "#L125")  # message_about_scripts_not_on_PATH
RAY_CGRAPH = "https://docs.ray.io/en/latest/ray-core/api/doc/ray.exceptions.RayChannelTimeoutError.html"
PY_TIMEOUT = "https://docs.python.org/3/library/exceptions.html#TimeoutError"
PY_CALLED = "https://docs.python.org/3/library/subprocess.html#subprocess.CalledProcessError"

# errno -> (symbol, strerror text, components, what to check). The numbers are the Linux generic ones (x86, arm64,
# riscv share them). Socket numbers (ECONNREFUSED, ETIMEDOUT, ...) are the network's: classes reads their texts.
_ERRNO: dict[int, tuple[str, str, tuple[str, ...], str]] = {
    1: ("EPERM", "Operation not permitted", ("system", "config"),
        "the user the process runs as (root or the group that owns the device / file), and the container's "
        "capabilities"),
    2: ("ENOENT", "No such file or directory", ("system", "config"),
        "that the file, device node or program the call names exists in this host or container"),
    5: ("EIO", "Input/output error", ("system", "npu"), "the disk or device (dmesg)"),
    6: ("ENXIO", "No such device or address", ("system", "driver"), "that the device exists and its driver is loaded"),
    11: ("EAGAIN", "Resource temporarily unavailable", ("system", "config"),
         "the process and thread limits (ulimit -u, the container's pids limit)"),
    12: ("ENOMEM", "Cannot allocate memory", ("system", "config"),
         "free host memory and the container's memory limit"),
    13: ("EACCES", "Permission denied", ("system", "config"),
         "the owner and mode of the file, device node or IPC object (ls -l, ipcs) against the user the process "
         "runs as"),
    16: ("EBUSY", "Device or resource busy", ("system", "npu"),
          "which process holds the device or resource (another job or container)"),
    19: ("ENODEV", "No such device", ("system", "driver"), "that the device exists and its driver is loaded"),
    23: ("ENFILE", "Too many open files in system", ("system", "env"), "the system's file limit (fs.file-max)"),
    24: ("EMFILE", "Too many open files", ("system", "env"), "the process's open-file limit (ulimit -n)"),
    28: ("ENOSPC", "No space left on device", ("system", "env"),
         "free space of the file system written to (df -h; /dev/shm for shared memory)"),
    30: ("EROFS", "Read-only file system", ("system", "config"), "that the path written to is mounted read-write"),
    122: ("EDQUOT", "Disk quota exceeded", ("system", "env"), "the user's quota on the file system written to"),
}
# `errno =13`, `errno: 28`, `errno is 2`, `(errno 13)`, `errno=13`; never errno 0 (success). `[Errno N]` is Python's
# OSError text, read with its exception type elsewhere; here only when it is on a plain line.
_ERRNO_RX = re.compile(r"\berrno\s*(?:=|:|is|was)?\s*(?P<n>[1-9]\d{0,2})\b|\[Errno (?P<n2>[1-9]\d{0,2})\]", re.I)

# `program: message`: a lower-case program name first on the line, then a failure (GNU's format; a file name may
# come between: `unzip: cannot find or open X`, `tar: x.tar: Cannot open: No such file or directory`). Words that
# head other kinds of lines (a compiler's `error:`, git's `fatal:`, a logger's level) are no program.
_PROGRAM_LINE = re.compile(
    r"^(?P<prog>[a-z][\w.+-]{1,30}):\s+(?:[^\s:]+:\s+)?(?P<msg>(?:cannot|can't|could not|couldn't|unable to|failed to|"
    r"No such file|Permission denied|not found|invalid option|unrecognized option|missing operand|"
    r"Cannot open|error while|fatal error)\b.*)", re.I)
_NOT_PROGRAM = frozenset("""error errors warning warnings note fatal info hint debug usage caused reason detail details
    message exception traceback file line error_msg err msg tip notice trace critical cause solution""".split())
# A tool that looks for a program and does not find it; the program named in quotes or backticks.
_PROGRAM_MISSING = re.compile(
    r"\b(?:unable to|cannot|can't|could not|couldn't|failed to) (?:find|locate)\b[^;.]{0,40}?"
    r"\b(?:utility|program|command|executable|binary|tool)\b\s*[`'\"‘]?(?P<p>[\w.+-]+)?"
    r"|\b(?:utility|program|command|executable|binary|tool) [`'\"‘](?P<p2>[\w.+-]+)[`'\"’] (?:was |is )?"
    r"(?:not found|not installed|could not be found|cannot be found)", re.I)
# A script or program installed where PATH does not look.
_NOT_ON_PATH = re.compile(r"\bwhich (?:is|are) not on PATH\b|\b(?:is|are) not (?:on|in) (?:your |the )?PATH\b")
# A message that names the variable bounding a timeout and asks for more: `increase RAY_CGRAPH_get_timeout which is
# currently 10 seconds` (Ray), `consider increasing HCCL_CONNECT_TIMEOUT`; a recommendation to raise it, never a line
# that only sets one (`Setting HCCL_EXEC_TIMEOUT=1800`).
_TIMEOUT_SETTING = re.compile(
    r"\b(?:increase|increasing|raise|raising|extend|extending|enlarge)\b[^.;]{0,60}?"
    r"\b(?-i:(?P<var>[A-Z][A-Z0-9]*_[A-Za-z0-9_]*?(?:TIMEOUT|[Tt]imeout)[A-Za-z0-9_]*))", re.I)
# CPython's subprocess.CalledProcessError (Lib/subprocess.py __str__): "Command '%s' returned non-zero exit status %d."
# with the command as given: a list's repr (`['npu-smi', 'info']`) or a shell string
_COMMAND_FAILED = re.compile(r"\bCommand '(?P<cmd>.+)' returned non-zero exit status (?P<status>-?\d+)\b")
_NOT_ERROR = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:INFO|DEBUG|TRACE)\b|^\W*\[W(?:\d{4} [\d:.]+)? ?[\w.-]+:\d+\]", re.I)
_WARNING = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:WARNING|WARN)\b", re.I)

# A process ended by a signal, as strsignal(3) names it or by its number / name: `killed by signal: Bus error`
# (torch's DataLoader), `terminated by signal SIGBUS`, `exited with signal 7 (SIGBUS)`. signal(7): SIGBUS is "Bus
# error (bad memory access)": a mapped page that cannot be backed, on Linux most often a full /dev/shm (shared memory
# tensors, a memory-mapped file on it); SIGKILL cannot be caught: the kernel's OOM killer or a supervisor (a
# scheduler's memory limit) ended the process.
_SIGNALLED = re.compile(r"\b(?:killed|terminated|stopped|exited|died|ended|crashed)\b[^.;]{0,20}?\b(?:by|with|on|due "
                        r"to) signal:? ?(?:\d+ \()?(?P<sig>Bus error|Killed|SIGBUS|SIGKILL|7|9)\b"
                        # CPython 3.11 subprocess.CalledProcessError: "Command '%s' died with %r." (a Signals member);
                        # torch elastic's ProcessFailure: "Signal 9 (SIGKILL) received by PID 4242"
                        r"|\bdied with <Signals\.(?P<sig3>SIGBUS|SIGKILL): \d+>"
                        r"|\bSignal \d+ \((?P<sig4>SIGBUS|SIGKILL)\) received by PID\b")
_SIGNALS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    "SIGBUS": ("Bus error (bad memory access)", ("system", "env"),
               "a page of a memory mapping could not be backed: on Linux most often shared memory (/dev/shm) that is "
               "full, as in a container started with the default 64 MB",
               "Raise the shared memory (docker --shm-size=16g / --ipc=host, a Kubernetes emptyDir of medium Memory on "
               "/dev/shm), or use fewer DataLoader workers (num_workers)."),
    "SIGKILL": ("Killed", ("system", "config"),
                "SIGKILL cannot be caught: the kernel's OOM killer (dmesg says \"Out of memory: Killed process\") or "
                "a supervisor (a scheduler's or a container's memory limit) ended the process",
                "Check dmesg and the container's memory limit; lower the host memory the run takes (DataLoader "
                "workers, prefetch, CPU offload, rollout batch) or raise the limit."),
}
# bash's report of a job a signal ended (strsignal's text after the job's pid, then the command), as bash 5.2 prints
# it here: `./run.sh: line 6: 12665 Killed                  python3 train.py`, `bash: 12657 Killed  sleep 5`,
# `... 12723 Bus error               python3 ...`; a lone `Killed` is the same report without its pid (bash -c)
_BASH_JOB = re.compile(r"^(?:[^\s:]+: (?:line \d+: )?)?\s*\d+ (?P<sig>Killed|Bus error)(?: \(core dumped\))? {2,}\S"
                       r"|^\s*(?P<sig2>Killed)\s*$")
_SIGNAL_ALIASES = {"Bus error": "SIGBUS", "7": "SIGBUS", "Killed": "SIGKILL", "9": "SIGKILL"}
SIGNAL_SOURCE = "https://man7.org/linux/man-pages/man7/signal.7.html"

# The phrases a line must hold to be read here (added to the scanner's pre-filter with the event phrases).
PHRASES = OS_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def os_class(text: str) -> Class | None:
    """The class the operating system or a program's convention gives an error line; None for other lines and for
    info / debug records (a warning record is read only for PATH)."""
    if _NOT_ERROR.search(text) or NOTICE_RECORD.search(text):
        return None
    warning = bool(_WARNING.search(text))
    if _NOT_ON_PATH.search(text):
        return _not_on_path(text, warning)
    if warning:
        return None
    if m := _SIGNALLED.search(text):
        sig = m.group("sig") or m.group("sig3") or m.group("sig4")
        return _signalled(_SIGNAL_ALIASES.get(sig, sig))
    if m := _BASH_JOB.match(text):
        return _signalled(_SIGNAL_ALIASES[m.group("sig") or m.group("sig2")])
    if m := _COMMAND_FAILED.search(text):
        return _command_failed(m.group("cmd"), m.group("status"))
    if m := _TIMEOUT_SETTING.search(text):
        return _timeout_setting(m.group("var"))
    if m := _PROGRAM_MISSING.search(text):
        return _program_missing(m.group("p") or m.group("p2"))
    if (m := _PROGRAM_LINE.match(text.strip())) and m.group("prog").lower() not in _NOT_PROGRAM:
        return _program_error(m.group("prog"), m.group("msg"), text)
    if m := _ERRNO_RX.search(text):
        n = int(m.group("n") or m.group("n2"))
        if n in _ERRNO:
            return _errno(n, text)
    return None


def _signalled(sig: str) -> Class:
    what, comps, why, fix = _SIGNALS[sig]
    return Class(
        "process-killed-by-signal", comps, f"A process was killed by {sig} ({what})",
        f"The line says a process ended on {sig}, \"{what}\" by signal(7): {why}.", fix, SIGNAL_SOURCE)


def _errno(n: int, text: str) -> Class:
    sym, what, comps, check = _ERRNO[n]
    # the component the line names (its path's owner, or a name it carries) is where the call was made: second
    named = [own.component for p in _PATH.findall(text)[:3] if (own := owner_of_path(p)) is not None
             and own.component not in ("python", "stdlib")] or \
        [c for c, _ in components_named(text) if c not in ("config", "cluster", "system", comps[0])]
    if named and named[0] != comps[0]:
        comps = (comps[0], named[0])
    return Class(
        "system-call-failed", comps, f"A system call failed: errno {n} ({sym}, {what})",
        f"The line reports errno {n}: {sym}, \"{what}\" by the operating system's definition. The call the program "
        "made was refused by the system, not by the package that printed it.",
        f"Check {check}.", ERRNO_MORE_SOURCE if n > 34 else ERRNO_SOURCE)


_PATH = re.compile(r"(?:/[\w.+@-]+){2,}")


def _program_error(prog: str, msg: str, text: str) -> Class:
    # the component shipping the path the program could not use (a CANN set_env.sh, the driver's version.info), else
    # one the program's name or message names, else the system's
    owned = [own.component for p in _PATH.findall(text)[:3] if (own := owner_of_path(p)) is not None
             and own.component not in ("python", "stdlib")]
    named = owned or [c for c, _ in components_named(prog) + components_named(text[len(prog):])
                      if c not in ("config", "cluster", "system")]
    comps = (named[0], "system") if named else ("system", "config")
    return Class(
        "system-program-error", comps, f"The program {prog} failed",
        f"The line is {prog}'s own error message (\"{prog}: message\", the format system programs print): "
        f"{msg[:160]}. The program could not do what the job (or its set-up script) asked of it: a file, "
        "directory or permission it needs is not there.",
        f"Check what {prog} was asked to read or write (the path in the message) and that it exists and is "
        "readable in this host or container; a download step that failed before it leaves such a file missing.",
        GNU_ERRORS)


def _command_failed(cmd: str, status: str) -> Class:
    """A command a Python program ran with check=True (subprocess.run / check_call / check_output) ended non-zero."""
    argv = re.findall(r"'((?:[^'\\]|\\.)*)'", cmd) if cmd.startswith("[") else cmd.split()
    line = " ".join(argv) or cmd
    prog = (argv[0] if argv else cmd).rsplit("/", 1)[-1]
    named = [c for c, _ in components_named(prog) if c not in ("config", "cluster", "system")]
    doctor = (" (`doctor check` runs npu-smi itself and says what it answers)" if prog == "npu-smi" else
              " (`doctor check` runs hccn_tool itself and says what it answers)" if prog == "hccn_tool" else "")
    return Class(
        "command-failed", (named[0], "system") if named else ("system", "config"),
        f"The command {prog} failed (exit status {status})",
        f"The program ran `{line}` and stopped because it ended with exit status {status}: the failure is that "
        f"command's. What it printed went to its own stderr (captured by the program when it ran it with "
        "capture_output, so often not in this log).",
        f"Run `{line}` by hand, as the job's user and in the same host or container, and read what it prints{doctor}.",
        PY_CALLED)


def _program_missing(prog: str | None) -> Class:
    what = f"the program {prog}" if prog else "a program it needs"
    # a tool a component ships (npu-smi: the driver's) is that component's, installed or mounted
    named = [c for c, _ in components_named(prog or "") if c not in ("config", "cluster", "system")]
    return Class(
        "program-missing", (named[0], "system") if named else ("system", "env"), f"A tool cannot find {what}",
        f"The tool searched PATH for {what} and did not find it: the host (or container) lacks the package that "
        "installs it, or its directory is not on PATH.",
        f"Install the system package that provides {prog or 'it'} (apt / yum: the message may name it), or add its "
        "directory to PATH.", BASH_SEARCH)


def _not_on_path(text: str, warning: bool) -> Class:
    script = bool(re.search(r"\bscripts?\b", text))
    return Class(
        "program-not-on-path", ("env", "python") if script else ("env", "system"),
        "A program was installed in a directory that is not on PATH",
        "The program (a console script pip installed, for one) is in a directory the shell's PATH does not list: "
        "running it by name gives \"command not found\".",
        "Add that directory to PATH (export PATH=DIR:$PATH in the job's environment), or run the program by its "
        "full path.", PIP_SCRIPTS if script else BASH_SEARCH,
        Severity.WARNING if warning else Severity.ERROR)


def _timeout_setting(var: str) -> Class:
    comp = env_var_component(var) or "env"
    comps = (comp, "env") if comp != "env" else ("env", "config")
    return Class(
        "timeout-setting-exceeded", comps, f"An operation ran longer than {var} allows",
        f"The message names {var}, the setting that bounds how long the operation may take, and asks for more: "
        f"the operation did not finish within it ({comp} reads it). A slow first step (graph compilation, a large "
        "model's load, many nodes) exceeds a default made for small runs; a peer that died hangs it for good.",
        f"If the operation is expected to take that long, export {var} with a larger value (in every node's "
        "environment); otherwise find the rank or process that stopped (its own log).",
        RAY_CGRAPH if var.upper().startswith("RAY_CGRAPH") else PY_TIMEOUT)
