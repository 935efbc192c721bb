"""Who owns what: importable module -> distribution -> doctor component, and file path / shared library /
header -> the package that ships it.

One table for the whole doctor, so `check` (which package declares a requirement, which component to change)
and `explain` (which package a traceback frame, a missing library or a missing header belongs to) attribute
the same thing the same way. Two sources, in this order:

1. what the stack itself says, when a snapshot carries it: each distribution's top-level import names (its
   `top_level.txt`, or the first path segment of its RECORD, collected by the in-target probe as
   `packages.<dist>.top_level`), editable source trees (`location`, `url` of direct_url.json), and where the
   probed modules resolve (`modules.<name>.origins`);
2. a packaged table for the ecosystem (below), for snapshots that lack those fields (hand-written ones, older
   collectors) and for names that no distribution declares (CANN's Python packages `te`, `tbe`, ...).

Pure logic: no file is read here; everything comes from the arguments and the tables.
"""

from __future__ import annotations

import re
import weakref
from typing import Any, NamedTuple

from doctor.report import COMPONENTS

_NORM = re.compile(r"[-_.]+")


def normalize(dist: str) -> str:
    """PEP 503: lower case, runs of `-_.` become `-` (`Torch_NPU` -> `torch-npu`)."""
    return _NORM.sub("-", dist).lower()


# -- distribution -> component -----------------------------------------------------------------------------

# Distributions that are a doctor component of their own (doctor/report.py COMPONENTS), by PEP 503 name.
# Every other distribution is a Python package without one: component "python".
_DIST_COMPONENTS: dict[str, str] = {
    "torch": "torch", "torch-npu": "torch-npu", "torchvision": "torchvision",
    "vllm": "vllm", "vllm-ascend": "vllm-ascend",
    "triton": "triton", "pytorch-triton": "triton", "triton-ascend": "triton-ascend",
    "mindspeed": "mindspeed", "mindspeed-llm": "mindspeed", "mindspeed-rl": "mindspeed", "mindspeed-mm": "mindspeed",
    "megatron-core": "megatron", "megatron-lm": "megatron",
    "mbridge": "mbridge",
    "transformer-engine": "transformer-engine", "transformer-engine-torch": "transformer-engine",
    "transformer-engine-cu12": "transformer-engine",
    "verl": "verl", "transformers": "transformers", "numpy": "numpy", "ray": "ray",
    # CANN's own Python packages, when installed as wheels by older CANN toolkits (te, topi, hccl, op_gen, ...:
    # the whl files under <toolkit>/lib64 / fwkacllib/lib64 that the toolkit's install script pip-installs).
    "te": "cann", "topi": "cann", "op-gen": "cann", "op-compile-tool": "cann", "opc-tool": "cann",
    "schedule-search": "cann", "auto-tune": "cann", "dataflow": "cann", "llm-datadist": "cann", "hccl": "hccl",
}
assert set(_DIST_COMPONENTS.values()) <= COMPONENTS


_DIST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def component_of_distribution(dist: str) -> str | None:
    """The component a distribution belongs to: its own one (`megatron-core` -> "megatron"), else "python"
    (every installed distribution is a Python package); None for an empty or malformed name."""
    if not isinstance(dist, str) or not dist.strip() or not _DIST_NAME.fullmatch(dist.strip()):
        return None
    return _DIST_COMPONENTS.get(normalize(dist.strip()), "python")


# -- module -> distribution --------------------------------------------------------------------------------

# Top-level import name -> distribution, for the ecosystem, where no snapshot says better. Read from each
# distribution's top_level.txt / RECORD (as the wheels install them: torch -> torch, functorch, torchgen;
# yaml and _yaml -> pyyaml; attr and attrs -> attrs; google -> protobuf and the google-* dists share it) and
# from the projects' setup files (torch_npu: Ascend/pytorch setup.py packages; megatron: megatron-core's
# pyproject; mindspeed: MindSpeed setup.py).
MODULE_DISTRIBUTIONS: dict[str, str] = {
    "torch": "torch", "functorch": "torch", "torchgen": "torch",
    "torch_npu": "torch-npu", "torchvision": "torchvision", "torchaudio": "torchaudio",
    "vllm": "vllm", "vllm_ascend": "vllm-ascend",
    "triton": "triton",  # triton-ascend installs the same `triton` package (see component_of_module)
    "triton_ascend": "triton-ascend",
    "megatron": "megatron-core",  # or a Megatron-LM source tree on PYTHONPATH (owner_of_path tells them apart)
    "mindspeed": "mindspeed", "mindspeed_llm": "mindspeed-llm", "mindspeed_rl": "mindspeed-rl",
    "mbridge": "mbridge",
    "transformer_engine": "transformer-engine", "transformer_engine_torch": "transformer-engine-torch",
    # Transformer Engine up to 1.7 built its PyTorch extension as the top-level module transformer_engine_extensions
    # (https://github.com/NVIDIA/TransformerEngine/blob/4e7caa1c35e301c31e563e19a75bd51e220b0b2c/setup.py#L509, tag
    # v1.7); 1.8 renamed it transformer_engine_torch (build_tools/pytorch.py)
    "transformer_engine_extensions": "transformer-engine",
    "verl": "verl", "transformers": "transformers", "numpy": "numpy", "ray": "ray",
    "accelerate": "accelerate", "peft": "peft", "trl": "trl", "tensordict": "tensordict", "datasets": "datasets",
    "tokenizers": "tokenizers", "safetensors": "safetensors", "huggingface_hub": "huggingface-hub",
    "hydra": "hydra-core", "omegaconf": "omegaconf", "codetiming": "codetiming", "dill": "dill",
    "pyarrow": "pyarrow", "pandas": "pandas", "wandb": "wandb", "tensorboard": "tensorboard",
    "torchdata": "torchdata", "pylatexenc": "pylatexenc", "qwen_vl_utils": "qwen-vl-utils",
    "yaml": "pyyaml", "_yaml": "pyyaml", "cv2": "opencv-python-headless", "sklearn": "scikit-learn",
    "PIL": "pillow", "google": "protobuf", "attr": "attrs", "attrs": "attrs", "dateutil": "python-dateutil",
    "decorator": "decorator", "sympy": "sympy", "cffi": "cffi", "psutil": "psutil", "scipy": "scipy",
    "cloudpickle": "cloudpickle", "ml_dtypes": "ml-dtypes", "tornado": "tornado", "absl": "absl-py",
    "einops": "einops", "sentencepiece": "sentencepiece", "tiktoken": "tiktoken", "xgrammar": "xgrammar",
    "pybind11": "pybind11", "packaging": "packaging", "setuptools": "setuptools", "pkg_resources": "setuptools",
    "pydantic": "pydantic", "msgpack": "msgpack", "zmq": "pyzmq", "flash_attn": "flash-attn", "apex": "apex",
    "deepspeed": "deepspeed", "liger_kernel": "liger-kernel", "xformers": "xformers", "bitsandbytes": "bitsandbytes",
    # what verl 0.9.1's [verl-core] extra adds (their PyPI wheels' RECORD: TransferQueue 0.1.11 installs
    # transfer_queue beside recipe, scripts, tests and tutorial), for a snapshot where one is missing
    "transfer_queue": "transferqueue", "cachetools": "cachetools", "fastapi": "fastapi", "uvicorn": "uvicorn",
    "msgspec": "msgspec", "mathruler": "mathruler", "torchcodec": "torchcodec", "nvtx": "nvtx",
    # what verl's trainer imports at load without declaring it (the `loads` of profiles/import-surface/verl/: 0.2-0.4
    # filelock, 0.4.0 openai and starlette, 0.7.1-0.9.1 aiohttp and orjson, 0.9.x regex, every release from 0.3 tqdm)
    # and the rest of what verl's releases declare (profiles/requirements/verl.json, extras included): each wheel's
    # top_level.txt, else the first segments of its RECORD, read 2026-12-05 from the PyPI wheels aiohttp 3.14.5,
    # filelock 4.3.2, openai 3.63.0, orjson 3.13.0, regex 2026.12.2, starlette 1.10.0, tqdm 4.70.1, fsspec 2026.9.0,
    # hf_transfer 0.1.9, kubernetes 37.0.2, math_verify 0.9.0, matplotlib 3.11.2, flash_linear_attention 0.6.0 (fla),
    # onnxscript 0.7.2, pre_commit 4.7.0, pytest 9.2.0 (also `py`, a shim of the `py` distribution's name: left out),
    # pytest_asyncio 1.5.0, pytest_rerunfailures 16.7, sglang 0.5.23, sglang_router 0.3.2, sglang_kernel 0.4.10
    # (sgl_kernel; also triton_kernels, which other distributions install too: left out), torch_memory_saver 0.0.10
    # (its hook-mode extension modules left out), veomni 0.1.12, yapf 0.43.0, cupy_cuda13x 14.2.0 (every cupy-cudaXX
    # build installs the same three, as triton above), nvidia_modelopt 0.47.0; pyext's only sdist does not build on
    # Python 3.11, its setup.py names py_modules=['pyext']
    # (https://github.com/refi64/PyExt/blob/1df791469b0b9cdeedd5de1ab2ad1255b5122215/setup.py); tensorrt-llm's wheel
    # (several GB) was not fetched: its setup.py packages `tensorrt_llm`
    # (https://github.com/NVIDIA/TensorRT-LLM/blob/ed53795b33fc139493f762a1c6c53f691cf52d38/setup.py). Not here: a
    # top-level name other distributions share (megatron-bridge installs megatron/bridge/ into megatron-core's
    # `megatron`; nvidia-mathdx installs nvidia/mathdx/ beside every nvidia-*), and py-spy, which installs no module.
    "aiohttp": "aiohttp", "filelock": "filelock", "openai": "openai", "orjson": "orjson", "regex": "regex",
    "starlette": "starlette", "tqdm": "tqdm", "fsspec": "fsspec", "hf_transfer": "hf-transfer",
    "kubernetes": "kubernetes", "math_verify": "math-verify", "matplotlib": "matplotlib", "mpl_toolkits": "matplotlib",
    "pylab": "matplotlib", "fla": "flash-linear-attention", "onnxscript": "onnxscript", "pre_commit": "pre-commit",
    "pytest": "pytest", "_pytest": "pytest", "pytest_asyncio": "pytest-asyncio",
    "pytest_rerunfailures": "pytest-rerunfailures", "sglang": "sglang", "sglang_router": "sglang-router",
    "sgl_kernel": "sglang-kernel", "torch_memory_saver": "torch-memory-saver", "veomni": "veomni", "yapf": "yapf",
    "yapf_third_party": "yapf", "cupy": "cupy-cuda13x", "cupyx": "cupy-cuda13x", "cupy_backends": "cupy-cuda13x",
    "modelopt": "nvidia-modelopt", "modelopt_recipes": "nvidia-modelopt", "pyext": "pyext",
    "tensorrt_llm": "tensorrt-llm",
}

# verl's declared distributions the table above leaves out on purpose (tests/knowledge/test_ownership.py checks that
# every other one has its modules here): a top-level name shared with other distributions, or no module at all
NO_MODULE_OF_ITS_OWN = frozenset({"megatron-bridge", "nvidia-mathdx", "py-spy"})

# Import names no pip distribution owns: CANN's Python packages, which the toolkit's set_env.sh puts on
# PYTHONPATH (<toolkit>/python/site-packages: te, tbe, topi, ...; pyACL's `acl`), per
# docs/ascend-install-layouts.md.
_MODULE_ONLY_COMPONENTS: dict[str, str] = {
    "te": "cann", "tbe": "cann", "topi": "cann", "acl": "cann", "te_fusion": "cann", "op_gen": "cann",
    "op_compile_tool": "cann", "schedule_search": "cann", "auto_tune": "cann", "dataflow": "cann",
    "llm_datadist": "cann", "asc_op_compile_base": "cann", "hccl": "hccl",
}


class _Index:
    """A snapshot's own answers, computed once per snapshot: module -> dist (top_level), editable trees."""

    def __init__(self, snapshot: Any) -> None:
        self.modules: dict[str, str] = {}
        self.trees: list[tuple[str, str, str]] = []  # (directory, dist, what said so)
        pkgs = getattr(snapshot, "packages", None)
        if isinstance(pkgs, dict):
            for name, pkg in sorted(pkgs.items()):
                tops = getattr(pkg, "top_level", None)
                if isinstance(tops, list):
                    for t in tops:
                        if isinstance(t, str) and t:
                            self.modules.setdefault(t, name)
                if getattr(pkg, "editable", None) is True:
                    loc = getattr(pkg, "location", None)
                    url = getattr(pkg, "url", None)
                    if isinstance(url, str) and url.startswith("file://"):
                        self.trees.append((_clean(url[len("file://"):]), name, f"direct_url.json of {name}: {url}"))
                    if isinstance(loc, str) and loc and not re.search(_SITE, loc + "/"):
                        self.trees.append((_clean(loc), name, f"{name} is installed editable from {loc}"))
        mods = getattr(snapshot, "modules", None)
        if isinstance(mods, dict):
            for mod, facts in mods.items():
                for origin in getattr(facts, "origins", None) or []:
                    if isinstance(origin, str) and not re.search(_SITE, origin):
                        dist = self.modules.get(mod) or MODULE_DISTRIBUTIONS.get(mod)
                        if dist:
                            self.trees.append((_clean(origin), dist, f"`{mod}` resolves to {origin}"))
        self.trees.sort(key=lambda t: -len(t[0]))


_INDEXES: dict[int, tuple[weakref.ref[Any], _Index]] = {}


def _index(snapshot: Any) -> _Index | None:
    if snapshot is None:
        return None
    hit = _INDEXES.get(id(snapshot))
    if hit is not None and hit[0]() is snapshot:
        return hit[1]
    idx = _Index(snapshot)
    key = id(snapshot)

    def _forget(_ref: weakref.ref[Any]) -> None:
        _INDEXES.pop(key, None)

    try:
        ref = weakref.ref(snapshot, _forget)
    except TypeError:
        return idx
    _INDEXES[key] = (ref, idx)
    return idx


def distribution_of_module(module: str, snapshot: Any = None) -> str | None:
    """The distribution that installs a module's top-level package (`torch_npu.npu.utils` -> "torch-npu"):
    the snapshot's own `top_level` names first, else the packaged table; None when neither knows it."""
    if not isinstance(module, str) or not module:
        return None
    top = module.split(".")[0]
    idx = _index(snapshot)
    if idx is not None and top in idx.modules:
        return idx.modules[top]
    return MODULE_DISTRIBUTIONS.get(top)


def modules_of_distribution(dist: str, snapshot: Any = None) -> frozenset[str]:
    """The top-level modules a distribution installs: the snapshot's own `top_level` of it when it lists the
    distribution with them (what its top_level.txt / RECORD says), else the packaged table's names for it (a
    distribution that is not installed); empty when neither knows."""
    name = normalize(dist)
    pkgs = getattr(snapshot, "packages", None)
    tops = getattr(pkgs.get(name), "top_level", None) if isinstance(pkgs, dict) else None
    if isinstance(tops, list) and tops:
        return frozenset(t for t in tops if isinstance(t, str) and t)
    return _table_modules().get(name, frozenset())


_BY_DIST: dict[str, frozenset[str]] = {}


def _table_modules() -> dict[str, frozenset[str]]:
    """MODULE_DISTRIBUTIONS inverted (distribution -> its modules), built on first use."""
    if not _BY_DIST:
        out: dict[str, set[str]] = {}
        for mod, dist in MODULE_DISTRIBUTIONS.items():
            out.setdefault(dist, set()).add(mod)
        _BY_DIST.update({d: frozenset(m) for d, m in out.items()})
    return _BY_DIST


def component_of_module(module: str, snapshot: Any = None) -> str | None:
    """The component a module belongs to (`megatron.core` -> "megatron", `yaml` -> "python", `te` -> "cann");
    None for a module no table or snapshot knows (user code, or a package the doctor has no row for)."""
    if not isinstance(module, str) or not module:
        return None
    top = module.split(".")[0]
    dist = distribution_of_module(module, snapshot)
    if dist is not None:
        return component_of_distribution(dist)
    return _MODULE_ONLY_COMPONENTS.get(top)


# -- paths -------------------------------------------------------------------------------------------------


class Owner(NamedTuple):
    """Who ships a file: the component, the distribution when a pip distribution does, and one line saying
    what was read to decide (`site-packages/vllm_ascend/ -> vllm-ascend`)."""

    component: str
    distribution: str | None
    how: str


# Path, library and header patterns are compiled on first use (re's own cache): `doctor explain` asks who owns a
# file, `doctor check` never does, and compiling them at import took ~0.9 ms of every check.
_SITE = r"/(?:site|dist)-packages/"
_MOD_SUFFIX = r"(?:\.cpython-[^/]*|\.abi3|\.pypy[^/]*)?\.(?:py|pyc|pyi|so|pyd)$"
_INFO_DIR = r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*?)-[^-/]+\.(?:dist|egg)-info$"


def in_installed_package(path: str) -> bool:
    """The file or package directory lies under site-packages or dist-packages (a wheel's files)."""
    return re.search(_SITE + r"[^/]+(?:/|$)", _clean(path)) is not None


def _clean(path: str) -> str:
    p = path.replace("\\", "/")
    p = re.sub(r"/+", "/", p)
    return p.rstrip("/") or "/"


def _site_owner(path: str, snapshot: Any) -> Owner | None:
    matches = list(re.finditer(_SITE, path))
    if not matches:
        return None
    m = matches[-1]
    rest = path[m.end():]
    first = rest.split("/")[0]
    if not first:
        return None
    info = re.match(_INFO_DIR, first)
    if info:
        named = normalize(info.group("name"))
        return Owner(component_of_distribution(named) or "python", named, f"{m.group(0)[1:]}{first}/ -> {named}")
    top = re.sub(_MOD_SUFFIX, "", first)
    where = f"{m.group(0)[1:]}{first}" + ("/" if "/" in rest else "")
    dist = distribution_of_module(top, snapshot)
    if dist is not None:
        idx = _index(snapshot)
        how = "its top_level names" if idx is not None and top in idx.modules else "the ecosystem table"
        return Owner(component_of_distribution(dist) or "python", dist, f"{where} -> {dist} ({how})")
    comp = _MODULE_ONLY_COMPONENTS.get(top)
    if comp is not None:
        return Owner(comp, None, f"{where} -> {comp}'s Python package {top}")
    return Owner("python", None, f"{where} -> an installed Python package ({top}) the tables do not name")


def _tree_owner(path: str, snapshot: Any) -> Owner | None:
    idx = _index(snapshot)
    if idx is None:
        return None
    for tree, dist, said in idx.trees:
        if path == tree or path.startswith(tree + "/"):
            return Owner(component_of_distribution(dist) or "python", dist, f"{tree}/ -> {dist} ({said})")
    return None


# The Ascend install tree (docs/ascend-install-layouts.md): the
# first directory under the root decides, and inside a toolkit the op-kernel directories are the chip's
# kernels/ops package (opp_kernel/ up to 8.3; opp/built-in/op_impl/ai_core/tbe/kernel/<soc>/ in both layouts).
_ASCEND_ROOT = r"^(?P<root>.*?/Ascend)/(?P<top>[^/]+)(?P<rest>(?:/.*)?)$"
_TOOLKIT_TOP = r"^(?:ascend-toolkit|cann|cann-[^/]+|latest)$"
_KERNELS = r"/(?:opp_kernel|opp/built-in/op_impl)(?:/|$)"
_OTHER_TREES = {
    "driver": "driver", "firmware": "firmware", "nnal": "nnal", "add-ons": "driver",
}


def _ascend_owner(path: str, snapshot: Any) -> Owner | None:
    root: str | None = None
    asc = getattr(snapshot, "ascend", None) if snapshot is not None else None
    r = getattr(asc, "root", None)
    if isinstance(r, str) and r and (path == r or path.startswith(r.rstrip("/") + "/")):
        root = r.rstrip("/")
    if root is not None:
        rest = path[len(root):].lstrip("/")
        top, _, tail = rest.partition("/")
        tail = "/" + tail if tail else ""
    else:
        m = re.match(_ASCEND_ROOT, path)
        if m is None:
            return _fixed_owner(path)
        root, top, tail = str(m.group("root")), str(m.group("top")), str(m.group("rest"))
    if top in _OTHER_TREES:
        comp = _OTHER_TREES[top]
        return Owner(comp, None, f"{root}/{top}/ -> {comp} (Ascend install layout)")
    if re.match(_TOOLKIT_TOP, top):
        if kernels := re.search(_KERNELS, tail):
            return Owner("kernels", None, f"{root}/{top}/.../{kernels.group(0).strip('/')} -> the chip's "
                         "kernels/ops package (Ascend install layout)")
        return Owner("cann", None, f"{root}/{top}/ -> the CANN toolkit (Ascend install layout)")
    return _fixed_owner(path)


_FIXED = (
    (r"^/usr/local/dcmi(?:/|$)", "driver", "/usr/local/dcmi/ -> the driver's DCMI library"),
    (r"^/usr/local/s?bin/npu-smi$", "driver", "npu-smi -> the driver package"),
    (r"^/etc/ascend_install\.info$", "driver", "/etc/ascend_install.info -> the driver's install record"),
)


def _fixed_owner(path: str) -> Owner | None:
    for pat, comp, how in _FIXED:
        if re.search(pat, path):
            return Owner(comp, None, how)
    return None


def owner_of_path(path: str, snapshot: Any = None) -> Owner | None:
    """The package a file belongs to: an Ascend install directory (cann / kernels / nnal / driver / firmware);
    a source tree the snapshot names (an editable install's location or URL, a probed module's origin); a
    `site-packages/<top>/` entry's distribution. None for a path outside all of them: the caller's user code."""
    if not isinstance(path, str) or not path.strip():
        return None
    p = _clean(path.strip())
    return _ascend_owner(p, snapshot) or _tree_owner(p, snapshot) or _site_owner(p, snapshot)


# -- shared libraries and headers --------------------------------------------------------------------------

_CANN_LIBS_SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/__init__.py; "
                     "docs/ascend-install-layouts.md (<toolkit>/lib64)")
_DRIVER_SOURCE = "docs/ascend-install-layouts.md (driver/lib64/{common,driver}, /usr/local/dcmi)"
_NNAL_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/v0.13.0/docs/source/faqs.md (libatb.so ships with NNAL)"
_TORCH_SOURCE = "torch 2.13.0 wheel RECORD (torch/lib/*.so)"

# soname stem (no `.so`, no version) -> (component, distribution, where it is shipped)
_LIBRARIES: dict[str, tuple[str, str | None, str]] = {}
for _stem in ("libascendcl libhccl libhccl_alg libhcomm libge_runner libge_common libgraph libruntime libopapi "
              "libopapi_nn libopapi_math libaclnn_ops_infer libaclnn_ops_train libaclnn_math libnnopbase "
              "libacl_op_compiler libascend_protobuf libtiling_api libplatform libregister libmsprofiler "
              "libascendalog libmmpa libascend_dump libtbe_adapter libacl_tdt_channel libfmk_parser "
              "libacl_dvpp libascend_ml libprofapi liberror_manager libc_sec_cann").split():
    _LIBRARIES[_stem] = ("cann", None, "the CANN toolkit's lib64 (" + _CANN_LIBS_SOURCE + ")")
# CANN's opbase builds libdummy_tls beside libnnopbase (the `dummy_tls` shared library of its tls_guardian)
_LIBRARIES["libdummy_tls"] = ("cann", None, "the CANN toolkit's lib64 (CANN opbase: https://github.com/hicann/opbase/blob/"
                              "79ed04ccb64c5502d0a5190fc7ecbae948b14cc7/src/nnopbase/tls_guardian/CMakeLists.txt)")
for _stem in "libascend_hal libdrvdsmi_host libc_sec libdcmi libmmpa_driver".split():
    _LIBRARIES[_stem] = ("driver", None, "the NPU driver (" + _DRIVER_SOURCE + ")")
for _stem in "libatb libasdops liblcal libatb_speed libmki".split():
    _LIBRARIES[_stem] = ("nnal", None, "NNAL/ATB (nnal/atb/latest/atb/cxx_abi_*/lib; " + _NNAL_SOURCE + ")")
for _stem in "libtorch_npu libnpu_profiler libop_plugin_atb".split():
    _LIBRARIES[_stem] = ("torch-npu", "torch-npu", "the torch_npu wheel (torch_npu/lib; " + _CANN_LIBS_SOURCE.split(";")[0] + ")")
for _stem in "libc10 libtorch libtorch_cpu libtorch_python libtorch_global_deps libshm libaoti_custom_ops".split():
    _LIBRARIES[_stem] = ("torch", "torch", "the torch wheel (" + _TORCH_SOURCE + ")")

_LIB_STEM = r"^(?P<stem>lib[\w+-]+?)(?:\.so(?:\.[\w.]*)?|\.a)?$"


def owner_of_library(soname: str) -> Owner | None:
    """Which package ships a shared library (`libhccl.so`, `/x/libascend_hal.so.1` -> driver); None when the
    table does not know it."""
    if not isinstance(soname, str) or not soname.strip():
        return None
    base = soname.strip().replace("\\", "/").rsplit("/", 1)[-1]
    m = re.match(_LIB_STEM, base)
    if m is None:
        return None
    row = _LIBRARIES.get(m.group("stem"))
    if row is None and m.group("stem").startswith(("libaclnn_", "libopapi_")):
        row = _LIBRARIES["libopapi"]
    if row is None:
        return None
    comp, dist, where = row
    return Owner(comp, dist, f"{base} -> {where}")


# header path prefix -> (component, distribution, where)
_HEADERS: tuple[tuple[str, str, str | None, str], ...] = (
    ("torch_npu/csrc/", "torch-npu", "torch-npu", "the torch_npu wheel (torch_npu/include)"),
    ("torch_npu/", "torch-npu", "torch-npu", "the torch_npu wheel (torch_npu/include)"),
    ("torch/csrc/", "torch", "torch", "the torch wheel (torch/include; " + _TORCH_SOURCE + ")"),
    ("ATen/", "torch", "torch", "the torch wheel (torch/include)"),
    ("c10/", "torch", "torch", "the torch wheel (torch/include)"),
    ("torch/", "torch", "torch", "the torch wheel (torch/include)"),
    ("acl/", "cann", None, "the CANN toolkit's include/"),
    ("aclnn/", "cann", None, "the CANN toolkit's include/"),
    ("aclnnop/", "cann", None, "the CANN toolkit's include/"),
    ("hccl/", "cann", None, "the CANN toolkit's include/ (HCCL)"),
    ("ge/", "cann", None, "the CANN toolkit's include/"),
    ("graph/", "cann", None, "the CANN toolkit's include/"),
    ("runtime/", "cann", None, "the CANN toolkit's include/"),
    ("tikcfw/", "cann", None, "the CANN toolkit's include/"),
    ("kernel_operator.h", "cann", None, "the CANN toolkit's Ascend C headers"),
    ("atb/", "nnal", None, "NNAL/ATB (nnal/atb/latest/atb/cxx_abi_*/include)"),
    ("ascend_hal.h", "driver", None, "the NPU driver's headers"),
    ("dcmi_interface_api.h", "driver", None, "/usr/local/dcmi (the driver's DCMI)"),
)


def owner_of_header(header: str) -> Owner | None:
    """Which package ships a C/C++ header (`acl/acl.h` -> cann, `torch_npu/csrc/core/npu/NPUStream.h` ->
    torch-npu); a header under an include/ directory is judged from the part after it."""
    if not isinstance(header, str) or not header.strip():
        return None
    h = _clean(header.strip().strip("<>\"'"))
    if "/include/" in h:
        h = h.rsplit("/include/", 1)[1]
    for prefix, comp, dist, where in _HEADERS:
        if h == prefix or h.startswith(prefix):
            return Owner(comp, dist, f"{h} -> {where}")
    return None


# -- torch operator namespaces (`torch.ops.<namespace>.<op>`) -> distribution -------------------------------
# torch's `_OpNamespace` raises "'_OpNamespace' '<ns>' object has no attribute '<op>'" for an operator nobody
# registered under that namespace: the package that registers the namespace (TORCH_LIBRARY(<ns>, m) in its
# compiled library, or torch.library.Library("<ns>", "DEF")) is the one whose operator is missing, not torch.
# Read from the registrations in each package's source:
_VLLM_SDIST = "vLLM 0.11.0 sdist (https://pypi.org/project/vllm/0.11.0/)"
OP_NAMESPACE_SOURCES: dict[str, tuple[str, str]] = {
    # torch's own: ATen's operators; torch/_prims/__init__.py `Library("prims", "DEF")`; the functional
    # collectives torch/distributed/_functional_collectives.py calls (torch 2.13.0 wheel)
    "aten": ("torch", "torch 2.13.0 wheel (ATen's native operators)"),
    "prims": ("torch", "torch 2.13.0 wheel, torch/_prims/__init__.py: Library(\"prims\", \"DEF\")"),
    "_c10d_functional": ("torch", "torch 2.13.0 wheel, torch/distributed/_functional_collectives.py"),
    # torch_npu: the generated schema registration `${custom_library}(npu, m)` and HCCL's custom ops; op-plugin's
    # ATB operators (built into torch_npu as op_plugin_atb)
    "npu": ("torch-npu", "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
                         "torchnpugen/templates/CustomRegisterSchema.cpp"),
    "npu_custom_dist": ("torch-npu", "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
                                     "torch_npu/csrc/distributed/HcclOps.cpp"),
    "atb": ("torch-npu", "https://github.com/Ascend/op-plugin/blob/517f2e7d0f202f38b76310706cb977ca2388ad21/"
                         "op_plugin/ops/atb/LinearAtb.cpp (TORCH_LIBRARY_FRAGMENT(atb, m); op_plugin/CMakeLists.txt "
                         "builds op_plugin_atb)"),
    # vllm-ascend: csrc/torch_binding.cpp `TORCH_LIBRARY_EXPAND(CONCAT(_C, _ascend), ops)` (vllm_ascend_C)
    "_C_ascend": ("vllm-ascend", "https://github.com/vllm-project/vllm-ascend/blob/"
                                 "182b75ea84ff13ece27b57391331ef8935410aea/csrc/torch_binding.cpp"),
    # vLLM: CMakeLists.txt `define_gpu_extension_target(_C | _moe_C | _rocm_C ...)`; csrc/torch_bindings.cpp
    # TORCH_EXTENSION_NAME and CONCAT(TORCH_EXTENSION_NAME, _cache_ops | _cuda_utils | _custom_ar);
    # csrc/cpu/torch_bindings.cpp (_utils, _cpu)
    **{ns: ("vllm", _VLLM_SDIST + ", CMakeLists.txt and csrc/torch_bindings.cpp")
       for ns in ("_C", "_C_cache_ops", "_C_cuda_utils", "_C_custom_ar", "_C_utils", "_C_cpu", "_moe_C", "_rocm_C")},
    # MindSpeed: mindspeed/op_builder/builder.py `Library("mindspeed", "DEF")`
    "mindspeed": ("mindspeed", "https://gitcode.com/Ascend/MindSpeed/blob/028de58ca629d035185b00ff7d1eb7eff4f7fd48/"
                               "mindspeed/op_builder/builder.py"),
}


def owner_of_op_namespace(namespace: str) -> Owner | None:
    """The package that registers a torch operator namespace (`_C_ascend` -> vllm-ascend, `npu` -> torch-npu);
    None for a namespace no row knows (a user's own extension)."""
    row = OP_NAMESPACE_SOURCES.get(namespace) if isinstance(namespace, str) else None
    if row is None:
        return None
    dist, where = row
    comp = component_of_distribution(dist) or "python"
    return Owner(comp, dist, f"torch.ops.{namespace} -> registered by {dist} ({where})")


# -- import names that more than one distribution installs ---------------------------------------------------
# The Ascend build of a package that installs the same top-level package as the upstream one: on this doctor's
# hosts the Ascend build is the one to install. triton-ascend's setup.py names its wheel "triton-ascend"
# (TRITON_WHEEL_NAME) and packages python/triton, so it installs `triton`:
# https://github.com/triton-lang/triton-ascend/blob/a84b1eb52b6215e2c171632f2df0892f1003cfc8/setup.py
MODULE_ASCEND_BUILDS: dict[str, tuple[str, str]] = {
    "triton": ("triton-ascend", "https://github.com/triton-lang/triton-ascend/blob/"
                                "a84b1eb52b6215e2c171632f2df0892f1003cfc8/setup.py"),
}


def ascend_build_of_module(module: str) -> tuple[str, str] | None:
    """(distribution, source) of the Ascend build that installs a module's top-level package (`triton` ->
    triton-ascend), when an upstream distribution installs the same name; None otherwise."""
    if not isinstance(module, str) or not module:
        return None
    return MODULE_ASCEND_BUILDS.get(module.split(".")[0])


# -- top-level packages whose own __init__ sets __version__ ---------------------------------------------------------------
# Every installed release of these packages has `<pkg>.__version__`: their top-level __init__.py sets it. So
# `module '<pkg>' has no attribute '__version__'` means the module Python imported under that name did not run
# that __init__: a bare directory of that name (a namespace package, PEP 420 — e.g. a source checkout in the
# working directory) or an install without its package files. Read from each package's __init__.py:
VERSION_ATTRIBUTE_SOURCES: dict[str, str] = {
    "torch": "torch 2.13.0 wheel, torch/__init__.py: `from torch.torch_version import __version__`",
    "torch_npu": ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/"
                  "torch_npu/__init__.py: `from torch_npu.version import __version__`"),
    "vllm": ("https://github.com/vllm-project/vllm/blob/00bf0c8ffad9dfcfe10153622419faf406195636/vllm/__init__.py "
             "(`__version__`; vllm-ascend's vllm_version_is reads vllm.__version__)"),
    "transformers": "transformers 5.24.0 wheel, transformers/__init__.py: `__version__ = ...`",
    "numpy": "numpy wheel, numpy/__init__.py: `__version__`",
    "ray": "ray wheel, ray/__init__.py: `__version__ = _version.version`",
    "verl": "verl 0.9.1 wheel, verl/__init__.py: `__version__ = f.read().strip()` (version/version)",
    "hydra": "hydra-core 1.3.8 wheel, hydra/__init__.py: `__version__ = \"1.3.8\"`",
    "omegaconf": "omegaconf wheel, omegaconf/__init__.py: `from .version import __version__`",
}
NAMESPACE_PACKAGE_SOURCE = "https://peps.python.org/pep-0420/"


def sets_version_attribute(module: str) -> str | None:
    """Where a top-level package sets `__version__` in its own __init__ (`vllm` -> its __init__.py); None for a
    submodule or a package no row knows (many packages never define it)."""
    if not isinstance(module, str) or "." in module:
        return None
    return VERSION_ATTRIBUTE_SOURCES.get(module)
