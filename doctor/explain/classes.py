"""Failure classes: what an error says about its cause when no frame, path, library, module or code names a package.

Ownership (`doctor.explain.attribution`) asks *who ships* what failed. Some errors answer a different question just
as well: *what kind* of failure it is. The exception's class or the error line's own words say so, as their
documentation defines them:

* a network exception (`ConnectionError`, `TimeoutError`, `ssl.SSLError`, requests' / urllib3's / torch.distributed's
  network errors) -> network;
* a configuration reader's exception (OmegaConf, Hydra, pydantic, PyYAML, json, argparse) -> config, and verl when the
  key it names is one of verl's top-level config sections;
* torch's dispatcher: an operator with no kernel for a backend or a dtype -> the package that registers the operator
  (torch, or torch_npu for `npu::` operators) and the config that chose the dtype / device;
* a Python too old for the syntax the code uses (PEP 585 / 604 generics) -> python;
* a failed subprocess / build tool (`CMake Error`, `make: ***`, `gcc: error`, pip's wheel build) -> system / python;
* a shell that could not run a script (`command not found`, `syntax error near unexpected token`, `$'\\r'`) -> system;
* a line in klog's format (`E1024 19:45:08.438884 6 file.go:127] ...`): Kubernetes / MindCluster -> cluster;
* a network error in an error line (timed out, refused, unreachable, heartbeat lost, a socket that cannot be made or
  bound: "Address family not supported by protocol", "Cannot assign requested address") -> network (hccl when HCCL /
  HCCP says it);
* an exception with no frames whose message is a check (`must`, `should`, `exceeds`, `not supported`, ...) -> the
  config and model it checked.

Class rules run after ownership: a package that ships the failure is the better answer. Pure logic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doctor.explain.lexicon import NOTICE_RECORD, components_named
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Severity

PY_EXC = "https://docs.python.org/3/library/exceptions.html"
REQUESTS_EXC = "https://requests.readthedocs.io/en/latest/api/#exceptions"
TORCH_DIST_EXC = "https://pytorch.org/docs/stable/distributed.html#torch.distributed.DistNetworkError"
OMEGACONF_EXC = "https://omegaconf.readthedocs.io/en/latest/structured_config.html#errors"
HYDRA_OVERRIDES = "https://hydra.cc/docs/advanced/override_grammar/basic/"
PYDANTIC_EXC = "https://docs.pydantic.dev/latest/errors/validation_errors/"
TORCH_DISPATCH = "https://pytorch.org/tutorials/advanced/dispatcher.html"
PEP_585 = "https://peps.python.org/pep-0585/"
PEP_604 = "https://peps.python.org/pep-0604/"
KLOG = "https://github.com/kubernetes/klog#klog"
GRPC_GO_LOG = "https://github.com/grpc/grpc-go/blob/2bf7f3420d99927e93954c3bdb6add95da4f4f84/grpclog/internal/loggerv2.go"
BASH_MANUAL = "https://www.gnu.org/software/bash/manual/bash.html#Shell-Syntax"
CMAKE = "https://cmake.org/cmake/help/latest/manual/cmake.1.html"
CANN_LOG = "https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/logreference/logreference_0001.html"
GLIBC_TLS = "https://sourceware.org/glibc/wiki/Tunables#Static_TLS"
CTYPES_FIND = "https://docs.python.org/3/library/ctypes.html#finding-shared-libraries"
TORCH_FORK = "https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing"
PY_MP_MAIN = "https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods"
SETUPTOOLS_PKG = "https://setuptools.pypa.io/en/latest/pkg_resources.html#exceptions"
NUMPY2_ABI = "https://numpy.org/devdocs/numpy_2_0_migration_guide.html#numpy-2-0-migration-guide"
ACLNN_LOOKUP = ("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/csrc/"
                "aclnn_torch_adapter/op_api_common.h#L699")
PIP_BUILD = "https://pip.pypa.io/en/stable/reference/build-system/"
OOM_SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/"
              "NPUCachingAllocator.cpp#L1387")


@dataclass(frozen=True)
class Class:
    """A failure class: its finding id, components, title, what it means, the fix, and its source."""

    id: str
    components: tuple[str, ...]
    title: str
    detail: str
    fix: str
    source: str
    severity: Severity = Severity.ERROR


# -- Python exceptions, by the class the exception's documentation defines

_NETWORK_TYPES = frozenset("""ConnectionError ConnectionRefusedError ConnectionResetError ConnectionAbortedError
    TimeoutError timeout gaierror herror SSLError SSLCertVerificationError SSLZeroReturnError SSLEOFError
    ConnectTimeout ReadTimeout ConnectTimeoutError ReadTimeoutError MaxRetryError NewConnectionError ProxyError
    ProtocolError RemoteDisconnected URLError IncompleteRead ChunkedEncodingError DistNetworkError DistStoreError
    LocalEntryNotFoundError""".split())
# Modules whose exceptions are all about reading a configuration (their documentation's error lists).
_CONFIG_MODULES = ("omegaconf", "hydra", "pydantic", "pydantic_core", "yaml", "argparse", "tomllib", "toml",
                   "jsonschema")
_CONFIG_TYPES = frozenset("""ConfigKeyError ConfigAttributeError ConfigTypeError ConfigValueError ConfigIndexError
    MissingMandatoryValue InterpolationKeyError InterpolationResolutionError InterpolationToMissingValueError
    UnsupportedInterpolationType ReadonlyConfigError KeyValidationError GrammarParseError ConfigCompositionException
    OverrideParseException MissingConfigException InstantiationException ScannerError ParserError ConstructorError
    JSONDecodeError ArgumentError TOMLDecodeError""".split())
# verl's top-level config sections (its trainer config: ppo_trainer.yaml and the sft / generation configs).
_VERL_SECTIONS = re.compile(r"\b(?:actor_rollout_ref|algorithm|critic|reward_model|custom_reward_function|"
                            r"trainer|data|ray_init|ray_kwargs|global_profiler|transfer_queue)\.\w")
# pkg_resources / importlib.metadata: an installed distribution's version does not satisfy a requirement, or is absent.
_DIST_TYPES = frozenset({"VersionConflict", "ContextualVersionConflict", "DistributionNotFound", "PackageNotFoundError",
                         "RequirementParseError"})
# torch's dispatcher: "Could not run 'npu::npu_format_cast' with arguments from the 'CPU' backend" and the dtype
# switch of ATen kernels: "\"lerp_kernel_scalar\" not implemented for 'Half'".
_NO_KERNEL = re.compile(r"Could not run '(?P<op>[\w:.]+)' with arguments from the '(?P<backend>\w+)' backend")
_NO_DTYPE = re.compile(r"\"(?P<kernel>\w+)\" not implemented for '(?P<dtype>\w+)'")
_OLD_PYTHON = re.compile(r"'type' object is not subscriptable|unsupported operand type\(s\) for \|: 'type'")
# The words of a check's message: the program compared a value with what it accepts.
_CHECK_WORDS = re.compile(
    r"\b(?:must|should|expect(?:s|ed)?|exceeds?|exceeded|divisible|invalid|not supported|unsupported|only supports?|"
    r"requires?|required|cannot be|can ?not be|larger than|smaller than|greater than|less than|mismatch|"
    r"out of range|does not match|doesn't match|not match|not allowed|at least|at most|not equal|not found|"
    r"not exist|does not exist|no such)\b", re.I)
_CHECKED_TYPES = frozenset({"ValueError", "AssertionError", "RuntimeError", "Exception", "KeyError", "TypeError",
                            "NotImplementedError", "IndexError"})


def exception_class(etype: str, path: str, message: str, has_frames: bool) -> Class | None:
    """The class a Python exception's type (or its message, for torch's dispatcher) defines; None if it says none."""
    module = path.rsplit(".", 1)[0] if "." in path else ""
    top = module.split(".", 1)[0]
    if etype == "DistBackendError":
        hccl = "HCCL" in message or "hccl" in message or "ERR02" in message
        return Class(
            "collective-backend-error", ("hccl", "network") if hccl else ("network", "system"),
            f"The collective backend ({'HCCL' if hccl else 'NCCL / Gloo'}) failed",
            "torch.distributed raises DistBackendError when its backend library fails: a collective that could not "
            "connect, a peer rank that died, a link or shared-memory transport that failed. The rank that failed "
            "first has the cause in its own log.",
            "Find the first rank that failed (its log, before this line); check the links and addresses the backend "
            "uses (HCCL_IF_IP / the rank table for HCCL) and its timeouts (HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT).",
            TORCH_DIST_EXC)
    if etype == "OutOfMemoryError":
        # torch's device allocators raise it (torch_npu 9e73e70 NPUCachingAllocator.cpp: TORCH_CHECK_WITH(
        # OutOfMemoryError, false, "NPU out of memory. Tried to allocate ...")): the run asked for more device memory
        # than was free
        npu = "NPU" in message or "npu" in module or not message
        return Class(
            "device-out-of-memory", ("config", "npu" if npu else "torch"),
            f"The {'NPU' if npu else 'device'} ran out of memory ({etype})",
            f"{etype} is raised by the device's caching allocator when a tensor cannot be allocated: what the model, "
            "batch and caches keep on the device is more than it has free (or another process holds it).",
            "Lower what the run keeps on the device (micro batch size, sequence length, the rollout's "
            "gpu_memory_utilization / KV cache, offload), or use more devices; PYTORCH_NPU_ALLOC_CONF="
            "expandable_segments:True helps when reserved memory is much larger than allocated.", OOM_SOURCE)
    if etype in _NETWORK_TYPES or (top in ("requests", "urllib3", "httpx", "aiohttp") and "Timeout" in etype):
        return Class(
            "network-error", ("network", "env"), f"A network operation failed ({etype})",
            f"{etype} is a network error by its definition: a connection refused, reset or timed out, a name that "
            "does not resolve, a TLS handshake that failed. The peer (another node, the master address, a model hub, "
            "a package index) was not reachable from this host as configured.",
            "Check the address and port the job uses (MASTER_ADDR / MASTER_PORT, the hub or index URL), that the peer "
            "is up, and the route from this host (firewall, proxy variables, HCCL_IF_IP / GLOO_SOCKET_IFNAME).",
            TORCH_DIST_EXC if etype.startswith("Dist") else (REQUESTS_EXC if top == "requests" else PY_EXC))
    if etype in _CONFIG_TYPES or top in _CONFIG_MODULES:
        verl = bool(_VERL_SECTIONS.search(message))
        return Class(
            "config-rejected", ("config", "verl") if verl else ("config", "python"),
            f"The configuration was rejected by its reader ({etype})",
            f"{etype} is raised by a configuration reader (OmegaConf / Hydra / pydantic / YAML / JSON / argparse): a "
            "key that the schema does not have, a value of the wrong type, a missing mandatory value or a file that "
            "does not parse." + (" The key is one of verl's config sections." if verl else ""),
            "Fix the key or value the message names (compare it with the config of the installed release: "
            "doctor lint SCRIPT checks a launch script's overrides).",
            OMEGACONF_EXC if top == "omegaconf" else (PYDANTIC_EXC if top.startswith("pydantic") else HYDRA_OVERRIDES))
    if etype in _DIST_TYPES:
        return Class(
            "installed-version-conflict", _conflict_components(message),
            f"An installed distribution does not satisfy a requirement ({etype})",
            f"{etype}: a package checked the installed distributions at start-up (pkg_resources / importlib.metadata) "
            "and one is missing or at a version outside the range it requires.",
            "Install the version the message names (pip check lists every unmet requirement; doctor check compares "
            "them with the stack profile).", SETUPTOOLS_PKG)
    if cls := _message_class(message):
        return cls
    if etype == "FileNotFoundError" and not has_frames and "[Errno" not in message:
        # Python raises it for ENOENT on a path the program opens (its documentation); with no frame to say whose
        # code opened it, the path is the configuration's, and on a cluster it must exist on every node (the
        # "[Errno 2] No such file or directory" form is path-not-found's, a signature)
        return Class(
            "file-not-found", ("config", "cluster"), "A file the job opens does not exist where it runs",
            f"FileNotFoundError: {message[:200]} — the path the program opened is not there on the node that ran it: "
            "a configured path that is wrong, or a file that exists only where it was written (a checkpoint's "
            "metadata saved on one node, data on the launching node only).",
            "Check the path the message names; put data, configs and checkpoints on storage every node sees (or copy "
            "them to each node).", PY_EXC + "#FileNotFoundError")
    if m := _NO_KERNEL.search(message):
        npu = m.group("op").startswith("npu::") or m.group("backend").upper().startswith(("NPU", "PRIVATEUSE1"))
        owner = "torch-npu" if npu else "torch"
        return Class(
            "operator-not-registered", (owner, "config"),
            f"The operator {m.group('op')} has no kernel for the {m.group('backend')} backend",
            f"torch's dispatcher found no kernel of {m.group('op')} for the {m.group('backend')} backend: the tensors "
            f"are on a device the operator does not support, or the {owner} release installed does not register it.",
            f"Move the tensors to the device the operator supports, or install the {owner} release that registers it "
            "(the one the stack profile pins).", TORCH_DISPATCH)
    if m := _NO_DTYPE.search(message):
        return Class(
            "operator-dtype-unsupported", ("torch", "config"),
            f"The kernel {m.group('kernel')} does not support {m.group('dtype')}",
            f"The kernel {m.group('kernel')} has no {m.group('dtype')} implementation in the torch build that ran "
            "(a newer torch may add it; the device's own kernels may differ).",
            f"Run that operation in another dtype (a float32 cast around it), or install the torch release that "
            f"implements it for {m.group('dtype')}.", TORCH_DISPATCH)
    if _OLD_PYTHON.search(message):
        return Class(
            "python-too-old", ("python", "config"), "The code uses typing syntax the running Python does not have",
            "`list[int]` / `dict[str, X]` on builtins needs Python 3.9 (PEP 585) and `X | Y` needs 3.10 (PEP 604): "
            "the interpreter that ran is older than the code's Requires-Python.",
            "Run the job with the Python the stack profile names (doctor check compares it with each package's "
            "Requires-Python).", PEP_604 if "|" in message else PEP_585)
    if not has_frames and etype in _CHECKED_TYPES and _CHECK_WORDS.search(message):
        return Class(
            "check-failed", ("config", "model"), f"The run stopped on a check of its input ({etype})",
            f"{etype}: {message[:200]} — the message states what was expected: a setting, the model's shape or the "
            "data did not pass a check of the program that read it. No frame of the log names the package.",
            "Change the setting the message names (or the model / data it checked); the full traceback (rerun with "
            "HYDRA_FULL_ERROR=1 for verl) names the package that checks it.", PY_EXC)
    return None


# The aclnn adapters (torch_npu's and vllm-ascend's op_api_common.h) look an operator up in CANN's libopapi.so.
_OP_NOT_IN_CANN = re.compile(r"(?P<op>aclnn\w+) or \w+GetWorkspaceSize not in (?P<lib>[\w.]+)")
# A message that says two releases disagree: a version word with a verdict, or two version numbers set against each
# other ("built with 2.1 but found 2.3", "requires CANN >= 8.0, got 7.0").
_VERSION_WORDS = re.compile(
    r"\b(?:version|versions|compiled|built)\b.{0,80}?\b(?:mismatch(?:ed)?|incompatible|not compatible|"
    r"does(?:n't| not) match|not match|not supported|unsupported|too old|too new|is older|is newer|requires?|"
    r"expected|required|is not the same)\b"
    r"|\b(?:mismatch(?:ed)?|incompatible)\b.{0,60}?\bversions?\b"
    # two release numbers (three parts: 2.1.0, not a size such as 2.00 GiB or a shape) set against each other
    r"|\b\d+\.\d+\.\w+\b.{1,60}?\b(?:but|while|whereas|got|found|installed is)\b.{1,40}?\b\d+\.\d+\.\w+", re.I)
# ld.so's symbol versions (GLIBC_2.34, GLIBCXX_3.4.30, CXXABI_1.3.13) are the C/C++ runtime's, not a package's.
_RELEASE = re.compile(r"\b\d+\.\d+")
_SYMBOL_VERSION = re.compile(r"\b(?:GLIBC|GLIBCXX|CXXABI|GCC)_\d")
_TLS = re.compile(r"cannot allocate memory in static TLS block")
_NO_LIB = re.compile(r"(?P<lib>[\w.+-]+) library not found|cannot load library '(?P<lib2>[^']+)'|"
                     r"cannot open shared ?object file")
_FORKED = re.compile(r"Cannot re-initialize (?P<dev>\w+) in forked subprocess")
_BOOTSTRAP = re.compile(r"before the current process has finished its bootstrapping phase|forgotten to use the proper "
                        r"idiom")
_NUMPY_ABI = re.compile(r"compiled (?:using|with|against) NumPy 1\.x|must be compiled with NumPy 2|"
                        r"numpy\.dtype size changed, may indicate binary incompatibility|_ARRAY_API not found")
_VERSION_REQUIRED = re.compile(r"\b(?P<pkg>[A-Za-z][\w.-]*)\s*(?:>=|==|~=|<=|>|<)\s*\d[\w.]*(?:,\s*[<>=!~]+\s*\d[\w.]*)*"
                               r" (?:is|are) required"
                               # transformers' "Using the `Trainer` with `PyTorch` requires `accelerate>=1.1.0`"
                               r"|\brequires? [`'\"](?P<pkg2>[A-Za-z][\w.-]*)\s*(?:>=|==|~=)\s*\d[\w.]*[`'\"]")
_NOT_A_PACKAGE = frozenset("the a an it its them this that these those our your their all any one some required "
                           "missing needed correct right latest newest proper".split())
_PLEASE_INSTALL = re.compile(r"[Pp]lease (?:run )?(?:install|[`'\"]?pip install) (?:`|'|\")?(?P<pkg>[A-Za-z][\w.-]*)")


# pkg_resources' VersionConflict / ContextualVersionConflict print their args, (dist, req[, required_by]):
# `(numpy 2.2.4 (/site-packages), Requirement.parse('numpy==1.26.4'), {'vllm-ascend'})`; their report() reads
# "{dist} is installed but {req} is required by {required_by}".
_CONFLICT_DIST = re.compile(r"^\(?\s*(?P<dist>[A-Za-z][\w.-]*) \d[\w.+!-]*")
_CONFLICT_BY = re.compile(r"(?:\{|required by \{?)'(?P<by>[A-Za-z][\w.-]*)'")


def _conflict_components(message: str) -> tuple[str, ...]:
    """The installed distribution that does not fit and the one that requires it, as components; python, env when
    the message names neither (a bare DistributionNotFound)."""
    named = [m.group("dist") for m in [_CONFLICT_DIST.search(message)] if m] + \
        [m.group("by") for m in [_CONFLICT_BY.search(message)] if m]
    comps = [c for n in named if (c := component_of_distribution(n)) not in (None, "python")]
    if not comps:
        return ("python", "env")
    return tuple(dict.fromkeys(comps)) if len(set(comps)) > 1 else (comps[0], "python")


_CONNECT_FAILED = re.compile(r"\b(?:could not|couldn't|can't|cannot|unable to|failed to) connect to\b", re.I)


def _message_class(message: str) -> Class | None:
    """Classes a message's own wording defines, whatever the exception type (or none) that carries it."""
    if _CONNECT_FAILED.search(message):
        # a client that could not reach its server (transformers 5.24 utils/hub.py raises it as an OSError): the
        # network's, whoever wrote the message
        return exception_class("ConnectionError", "ConnectionError", message, False)
    if m := _OP_NOT_IN_CANN.search(message):
        return Class(
            "operator-missing-from-cann", ("kernels", "cann"),
            f"CANN's {m.group('lib')} has no {m.group('op')}: the operator is newer than the CANN installed",
            f"The package calling {m.group('op')} (torch_npu or a plugin's custom op) was built for a CANN release "
            f"whose operator library has it; the installed CANN / kernels package does not (or {m.group('lib')} is "
            "not on the loader path).",
            "Install the CANN toolkit and kernels release the calling package's release notes pair it with "
            "(doctor check compares them), and source its set_env.sh.", ACLNN_LOOKUP)
    if _TLS.search(message):
        return Class(
            "static-tls-exhausted", ("system", "env"), "A library cannot be loaded: the static TLS block is full",
            "glibc could not fit a library's thread-local storage into the static TLS block it reserves at start-up: "
            "a library with initial-exec TLS (libgomp from a wheel's .libs, on aarch64 above all) was loaded late, "
            "after others had used the space.",
            "Load it first: export LD_PRELOAD=<the path in the message> (or import that package before torch), or "
            "raise the reserve with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=<bytes> on glibc >= 2.33.",
            GLIBC_TLS)
    if m := _FORKED.search(message):
        return Class(
            "device-initialised-before-fork", ("env", "python"),
            f"A forked process cannot use the {m.group('dev')}: it was initialised before the fork",
            f"The {m.group('dev')} runtime was initialised in the parent, then a child was started with the 'fork' "
            "method; the runtime cannot be re-initialised in a forked child.",
            "Use the 'spawn' start method (for vLLM: VLLM_WORKER_MULTIPROC_METHOD=spawn; in Python: "
            "multiprocessing.set_start_method('spawn')), or do not touch the device before starting workers.",
            TORCH_FORK)
    if _BOOTSTRAP.search(message):
        return Class(
            "spawn-without-main-guard", ("python", "config"),
            "A process was started while the main module was still being imported",
            "With the 'spawn' start method each child imports the main module again; code that starts processes at "
            "import time (no `if __name__ == '__main__':` guard) starts them again in each child.",
            "Put the script's entry code under `if __name__ == '__main__':`.", PY_MP_MAIN)
    if _NUMPY_ABI.search(message):
        return Class(
            "numpy-abi-mismatch", ("numpy", "python"), "A compiled module was built for another NumPy major release",
            "An extension module compiled against NumPy 1.x cannot run with NumPy 2 (and the reverse): NumPy 2.0 "
            "changed its C ABI.",
            "Install numpy<2 (the range the stack's packages declare), or the releases of the compiled packages built "
            "for NumPy 2.", NUMPY2_ABI)
    if m := _VERSION_REQUIRED.search(message):
        pkg = m.group("pkg") or m.group("pkg2")
        comp = component_of_distribution(pkg) or "python"
        return Class(
            "package-version-required", (comp, "python") if comp != "python" else ("python", "env"),
            f"A package requires another release of {pkg}",
            f"The message states a version range of {pkg} that the installed {pkg} is outside of: the code was "
            f"written for another {pkg} release.",
            f"Install {pkg} in the range the message states (doctor check compares the stack's declared ranges).",
            SETUPTOOLS_PKG)
    if (m := _PLEASE_INSTALL.search(message)) and m.group("pkg").lower() not in _NOT_A_PACKAGE:
        pkg = m.group("pkg").split("[", 1)[0]
        comp = component_of_distribution(pkg) or "python"
        return Class(
            "package-asked-for", ("python", "env") if comp == "python" else (comp, "python"),
            f"The program asks for {pkg} to be installed",
            f"A feature of the run needs {pkg} (or one of its extras), which is not installed in this interpreter.",
            f"Install {m.group('pkg')} into the interpreter that runs the job (at the release the stack pins).",
            PY_EXC)
    # a release is numbered with dots: autograd's "is at version 1; expected version 0" is a tensor's counter
    if _VERSION_WORDS.search(message) and _RELEASE.search(message) and not _SYMBOL_VERSION.search(message):
        named = [c for c, _ in components_named(message) if c not in ("config", "cluster")]
        if named:
            comps = tuple(named[:2]) if len(named) > 1 else (named[0], "python")
            return Class(
                "versions-disagree", comps, f"The message says releases do not fit together ({', '.join(comps)})",
                "The error states a version that is not the one the code was built for or requires: two packages "
                f"of the stack are from releases not made for each other ({' and '.join(named[:3])} are named).",
                "Install the releases the stack profile pins together (doctor check compares the installed versions "
                "with the profiles and with each package's declared requirements).", SETUPTOOLS_PKG)

    if m := _NO_LIB.search(message):
        lib = m.group("lib") or m.group("lib2") or "a shared library"
        return Class(
            "system-library-missing", ("system", "env"), f"The system library {lib} cannot be loaded",
            f"A Python package loads {lib} through ctypes / cffi at run time; it is not installed on the system or "
            "not on the loader's path.",
            f"Install the system package that provides {lib} (apt / yum), or add its directory to LD_LIBRARY_PATH.",
            CTYPES_FIND)
    return None


# -- error lines that are not Python exceptions

# Hydra's and OmegaConf's own messages when the exception type is not printed (HYDRA_FULL_ERROR unset): the
# override grammar's errors and the config node's error context (`full_key: ...`).
_HYDRA = re.compile(r"Could not override '|Error merging override|Could not append to config|Could not delete from "
                    r"config|Key '[^']+' is not in struct|Missing mandatory value|Interpolation key '[^']*' not found|"
                    r"^\s*full_key: \S")
# CANN's log line: `[ERROR] MODULE(pid,process):date [file:line]tid func:message`; the module is the CANN part that
# logged it (the log reference lists them).
_CANN_LOG = re.compile(r"\[(?:ERROR|EVENT)\]\s*(?P<module>[A-Z][A-Z0-9_]+)\(\d+,")
_CANN_LOG_MODULES: tuple[tuple[frozenset[str], tuple[str, ...], str, str], ...] = (
    (frozenset("HCCL HCCP ROCE TSDUMP HCCN".split()), ("hccl", "network"), "the collective communication library",
     "the usual cause is a link or a peer rank: the rank that failed first, a NIC or address HCCL cannot reach, or "
     "a timeout shorter than the job's start-up"),
    (frozenset("DRV DEVMM HDC DCMI DMP TSDRV DEVDRV PCIE DVPP QUEUE_SCHEDULE".split()), ("driver", "npu"),
     "the driver", "the usual cause is the device or its driver: a device another process holds, a driver / "
     "firmware release the CANN release does not support, or a device in a fault state (npu-smi info)"),
)
_KLOG = re.compile(r"^[EF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./@-]+\.go:\d+\]")
_GO_ERROR = re.compile(r"\[ERROR\]\s+\d{4}/\d\d/\d\d [\d:.]+\s+\d+\s+[\w./-]+\.go:\d+")
# grpc-go's own logger (grpclog/internal/loggerv2.go at 2bf7f34: Go's log.LstdFlags date, then "ERROR: " / "FATAL: ";
# a component's logger prefixes "[transport] ", "[core] " ...): a Go gRPC client or server, on this stack a cluster
# component, not the Python job (whose gRPC is the C++ core's, `E0000 00:00:...` lines)
_GRPC_GO = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:ERROR|FATAL): \[\w[\w-]*\] ")
_SHELL = re.compile(r": command not found\b|syntax error near unexpected token|\$'\\r': command not found|"
                    r"bad interpreter: |/bin/(?:ba)?sh\^M")
_BUILD = re.compile(r"^CMake Error\b|^make(?:\[\d+\])?: \*\*\*|^ninja: build stopped|^(?:gcc|g\+\+|cc|c\+\+|clang(?:\+\+)?|"
                    r"nvcc|ld|collect2)(?:: | fatal ?: )(?:fatal )?error\b|^nvcc fatal|error: invalid command '|"
                    r"Failed building wheel for |ERROR: Failed to build |error: subprocess-exited-with-error|"
                    r"metadata-generation-failed|error: command '[^']+' failed")
_ERRORISH = re.compile(r"\b(?:error|errors|failed|failure|fatal|abort(?:ed)?|exception|cannot|could not|unable)\b|"
                       r"\[ERROR\]|\bERROR\b", re.I)
_NET_WORDS = re.compile(
    r"\btimed? ?out\b|\btimes out\b|\btimeout\b|connection refused|connect(?:ion)? (?:failed|reset)|no route to host|"
    r"network is unreachable|name or service not known|temporary failure in name resolution|"
    r"address already in use|heartbeat lost|\bGoAway\b|ssl routines|tls handshake|\bunreachable\b|"
    r"connectFullMesh|socket (?:error|timeout)|"
    # a client that could not reach its server at all (huggingface_hub / transformers: "We couldn't connect to
    # 'https://huggingface.co' to load this file")
    r"\b(?:could not|couldn't|can't|cannot|unable to|failed to) connect to\b|"
    # the socket errno texts of a connection that cannot even start (errno(3): EAFNOSUPPORT, EADDRNOTAVAIL)
    r"address family not supported|cannot assign requested address", re.I)
_HCCL_WORDS = re.compile(r"\bHCC[LP]\b|hccl|\bEI\d{4}\b|\bEJ\d{4}\b|Notify|rank ?table", re.I)
# (c10's warning records, `[W socket.cpp:464] ...` / `[W1203 10:11:12.123456 socket.cpp:464] ...`, are warnings too:
# torch's c10d prints one when an IPv6 socket cannot be made and goes on with IPv4)
_NOT_ERROR = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:INFO|DEBUG|WARNING|WARN)\b|\btimeout\s*[=:]\s*\d|"
                        r"^\W*\[W(?:\d{4} [\d:.]+)? ?[\w.-]+:\d+\]|"
                        r"\btimeout\b[^.]*\b(?:set|is|to)\b\s*\d", re.I)

# The phrases a line must hold to be read here (the scanner's pre-filter gets them with the event phrases).
LINE_PHRASES: tuple[tuple[str, ...], ...] = (
    ("command not found",), ("syntax error near",), ("bad interpreter",), ("CMake Error",), ("make:",), ("make[",), ("ninja:",),
    ("fatal",), ("invalid command",), ("Failed building wheel",), ("Failed to build",), ("subprocess-exited",),
    ("metadata-generation-failed",), ("timed out",), ("timeout",), ("Timeout",), ("TIMEOUT",), ("times out",),
    ("refused",), ("Refused",), ("unreachable",), ("Unreachable",), ("no route",), ("No route",),
    ("name resolution",), ("service not known",), ("already in use",), ("Heartbeat",), ("heartbeat",),
    ("GoAway",), ("SSL",), ("ssl",), ("handshake",), ("connectFullMesh",), (".go:",), ("Connection reset",),
    ("Address family not supported",), ("address family not supported",), ("Cannot assign requested",),
    ("connect to",),
    ("cannot assign requested",),
    ("connection reset",), ("connect failed",), ("Timed out",), ("TIMED OUT",), ("Could not override",),
    ("Error merging override",), ("Could not append to config",), ("Could not delete from config",),
    ("is not in struct",), ("[ERROR]",), ("[EVENT]",), ("Missing mandatory value",), ("Interpolation key",), ("full_key:",),
    ("static TLS",), ("library not found",), ("cannot load library",), ("forked subprocess",),
    ("bootstrapping phase",), ("proper idiom",), ("NumPy",), ("_ARRAY_API",), ("is required",), ("are required",),
    ("lease install",), ("lease run",), ("requires `",), ("requires '",), ('requires "',), ("require `",),
    ("VersionConflict",), ("DistributionNotFound",), ("GetWorkspaceSize not in",), ("version",), ("Version",), ("compiled",),
)


def line_class(text: str) -> Class | None:
    """The class an error line's own words define (None for an ordinary line, or info / warning lines)."""
    if cls := _message_class(text):
        return cls
    if _HYDRA.search(text):
        return exception_class("ConfigKeyError", "omegaconf.errors.ConfigKeyError", text, False)
    if m := _CANN_LOG.search(text):
        module = m.group("module")
        comps: tuple[str, ...] = ("cann", "model")
        what = "CANN's runtime / graph engine / operator stack"
        usual = ("the usual cause is an operator that failed on what the model gave it (a shape, dtype or address), "
                 "or an operator package that does not match the CANN release")
        for names, c, w, u in _CANN_LOG_MODULES:
            if module in names:
                comps, what, usual = c, w, u
        return Class(
            "cann-module-error", comps, f"CANN's {module} module logged an error",
            f"The line is a CANN log line whose module field is {module}: {what}; {usual}.",
            "Read the first [ERROR] line of the CANN log (ASCEND_GLOBAL_LOG_LEVEL=3, plog under ~/ascend/log) and the "
            "operator or error code it names; check that the CANN toolkit, kernels and torch_npu releases pair "
            "(doctor check).", CANN_LOG)
    grpc = bool(_GRPC_GO.search(text))
    if grpc or _KLOG.search(text) or _GO_ERROR.search(text):
        return Class(
            "cluster-component-error", ("cluster", "config"), "A cluster component (Kubernetes / MindCluster) logged "
            "an error",
            ("The line is grpc-go's log format (date, time, ERROR / FATAL, [component])" if grpc else
             "The line is in klog's format (E/F, date, time, thread, file.go:line)") + ": a Go component of the "
            "cluster (the scheduler, Volcano, an Ascend device plugin or exporter, ClusterD) failed, not the "
            "training job.",
            "Read that component's log and its deployment (CRDs installed, its config map, the node labels and "
            "device annotations it needs).", GRPC_GO_LOG if grpc else KLOG)
    if _SHELL.search(text):
        return Class(
            "shell-cannot-run-script", ("system", "config"), "The shell could not run the script",
            "The shell stopped before the job started: a command that is not on PATH, or a script it cannot parse "
            "(Windows CRLF line endings show as $'\\r' and as a syntax error near an unexpected token).",
            "Install the command or fix PATH; convert the script to Unix line endings (dos2unix SCRIPT / sed -i "
            "'s/\\r$//' SCRIPT).", BASH_MANUAL)
    if _BUILD.search(text):
        pip = "wheel" in text or "subprocess-exited" in text or "metadata-generation" in text
        return Class(
            "native-build-failed", ("system", "python"), "A native build failed",
            "A compiler, CMake, make or a package's build backend failed: a build tool, header or library the "
            "source needs is missing or too old / too new for it (the first error above this line says which).",
            "Read the first error of the build (above this line); install the build tool or development package it "
            "names, at the version the package supports, or install a prebuilt wheel instead.",
            PIP_BUILD if pip else CMAKE)
    if _NET_WORDS.search(text) and _ERRORISH.search(text) and not _NOT_ERROR.search(text) \
            and not NOTICE_RECORD.search(text):
        hccl = bool(_HCCL_WORDS.search(text))
        return Class(
            "network-error", ("hccl", "network") if hccl else ("network", "env"),
            "A connection between hosts or processes failed or timed out",
            "The error line states a network failure (a timeout, a refused or reset connection, an unreachable "
            "peer, a lost heartbeat)" + (" in the collective layer (HCCL / HCCP): one rank did not reach the other "
            "in time — its own failure earlier in its log, a wrong NIC, or a timeout too short for the job's "
            "start-up." if hccl else ": the peer was down, the address or port wrong, or the route blocked."),
            "Find the first rank or process that failed (its own log, before this line); then check the addresses "
            "and ports (MASTER_ADDR / MASTER_PORT, HCCL_IF_IP, GLOO_SOCKET_IFNAME) and the timeouts "
            "(HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT).", PY_EXC)
    return None
