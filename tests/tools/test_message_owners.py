"""tools/message_owners.py: the message templates of a source tree, read from a git repo at a commit, and the
refusal of a malformed data file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.errors import InputError
from doctor.explain.messages import load_table, owners_of
from tools.message_owners import Source, build, templates_of

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
import logging
import warnings

logger = logging.getLogger(__name__)


class TrainerConfig:
    def __post_init__(self):
        assert self.tp > 0, f"tensor_model_parallel_size must be positive, got {self.tp}"
        if self.micro > self.mini:
            raise ValueError("micro_batch_size_per_device ({}) must not exceed {}".format(self.micro, self.mini))
        raise NotImplementedError("Unsupported rollout engine %s for this backend" % self.name)


def load(path):
    logger.warning("Falling back to the eager attention implementation because %s", path)
    logger.error(f"Checkpoint shard {path} is truncated")
    warnings.warn(f"The {path} argument is deprecated and will be removed", FutureWarning)
    _p_assert(path is not None, "Expects a checkpoint directory to resume from")
    raise RuntimeError("first line of a long message\\n with a second line")
    raise ValueError(path)                     # no literal: nothing to record
    raise KeyError("too short")                # under 12 characters: not distinctive
'''


def test_every_raise_assert_log_and_warning_form_gives_its_template():
    got = {(t.kind, t.func, t.pieces) for t in templates_of(MODULE)}
    assert got == {
        ("assert", "TrainerConfig.__post_init__", ("tensor_model_parallel_size must be positive, got ", "")),
        ("raise:ValueError", "TrainerConfig.__post_init__", ("micro_batch_size_per_device (", ") must not exceed ", "")),
        ("raise:NotImplementedError", "TrainerConfig.__post_init__",
         ("Unsupported rollout engine ", " for this backend")),
        ("log:warning", "load", ("Falling back to the eager attention implementation because ", "")),
        ("log:error", "load", ("Checkpoint shard ", " is truncated")),
        ("warn:FutureWarning", "load", ("The ", " argument is deprecated and will be removed")),
        ("assert", "load", ("Expects a checkpoint directory to resume from",)),
        ("raise:RuntimeError", "load", ("first line of a long message", "")),  # cut at its first line
    }


def test_a_file_that_does_not_parse_gives_no_template():
    assert templates_of("def broken(:\n    raise ValueError('a message long enough to keep')\n") == []


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A tiny git repo: pkg/config.py (a configuration check), tests/ (never read) and a later commit."""
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "tests").mkdir()
    (work / "pkg" / "config.py").write_text(MODULE, encoding="utf-8")
    (work / "tests" / "test_x.py").write_text("raise ValueError('a message that only a test raises')\n")
    _git(work, "init", "-q")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    commit = _git(work, "rev-parse", "HEAD")
    (work / "pkg" / "config.py").write_text("raise ValueError('a message added by the second commit')\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    return work / ".git", commit


def test_a_git_source_is_read_at_its_commit_and_the_table_finds_the_message(repo, tmp_path):
    gitdir, commit = repo
    src = Source("verl", "verl", str(gitdir), commit, ("pkg", "tests"), "https://github.com/verl-project/verl")
    data = build([src], mirror=Path("/"), date="2026-12-03")
    (row,) = data["sources"]
    assert row["commit"] == commit and row["url"].endswith(f"/tree/{commit}") and row["component"] == "verl"
    paths = {f[1] for f in data["files"]}
    assert paths == {"pkg/config.py"}  # tests/ is not the package; the second commit is not read
    out = tmp_path / "owners.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    table = load_table(str(out))
    (site,) = owners_of("micro_batch_size_per_device (8) must not exceed 4", table=table)
    assert (site.path, site.func, site.kind) == ("pkg/config.py", "TrainerConfig.__post_init__", "raise:ValueError")
    assert owners_of("a message added by the second commit", table=table) == []
    assert owners_of("micro_batch_size_per_device is fine", table=table) == []  # one piece is not the template


@pytest.mark.parametrize("defect", [
    lambda d: d.update(schema="doctor.message_owners/0"),
    lambda d: d["sources"][0].update(component="not-a-component"),
    lambda d: d["sources"][0].update(commit="abc"),
    lambda d: d["files"][0].__setitem__(0, 7),
    lambda d: d["files"][0][2][0].__setitem__(1, "shout:loudly"),
    lambda d: d["files"][0][2][0].__setitem__(2, []),
    lambda d: d.update(read="yesterday"),
    lambda d: d.update(classes=[[0, "pkg/config.py", ["not an identifier"]]]),
    lambda d: d.update(classes=[[9, "pkg/config.py", ["TrainerConfig"]]]),
])
def test_a_malformed_table_is_refused_with_exit_2(repo, tmp_path, defect):
    gitdir, commit = repo
    data = build([Source("verl", "verl", str(gitdir), commit, ("pkg",), "https://github.com/verl-project/verl")],
                 mirror=Path("/"), date="2026-12-03")
    defect(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_table(str(bad))
    assert str(bad) in str(err.value)
    run = subprocess.run([sys.executable, "-m", "tools.message_owners", "check", str(bad)], cwd=ROOT,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 2, run.stderr
    assert str(bad) in run.stderr


def test_the_shipped_table_is_valid_and_names_its_sources():
    table = load_table()
    ids = {o.id for o in table.sources}
    assert {"verl", "vllm-ascend", "mindspeed", "torch-npu", "megatron", "torch", "transformers"} <= ids
    assert all(o.commit or o.version for o in table.sources)
    assert len(table.templates) > 10_000


CPP = '''
namespace c10_npu {
void SetDevice(c10::DeviceIndex device) {
  TORCH_CHECK(device >= 0, "device index must be non-negative, got ", device, PTA_ERROR(ErrCode::VALUE));
  TORCH_CHECK_VALUE(count, "No NPUs are available on this host " "at all");
  TORCH_NPU_WARN_ONCE("The operator ", name, " runs in high accuracy but with low performance");
  ASCEND_LOGE("Device %d set failed with error code %d, please check the driver", device, ret);
  TORCH_CHECK(a, "short");
  TORCH_CHECK(b, msg);
}
}
'''


def test_the_cpp_checks_whose_message_reaches_python_give_templates(tmp_path):
    from tools.message_owners import cpp_templates_of, main

    got = {(t.kind, t.func, t.pieces) for t in cpp_templates_of(CPP)}
    assert got == {
        ("raise:RuntimeError", "SetDevice", ("device index must be non-negative, got ", "")),
        ("raise:ValueError", "SetDevice", ("No NPUs are available on this host at all",)),
        ("warn:UserWarning", "SetDevice", ("The operator ", " runs in high accuracy but with low performance")),
        ("log:error", "SetDevice", ("Device ", " set failed with error code ", ", please check the driver")),
    }
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "npu.cpp").write_text(CPP)
    (tmp_path / "pkg.py").write_text(MODULE)
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["extract", str(tmp_path)]) == 0
    rows = json.loads(out.getvalue())
    assert {r["path"] for r in rows} == {"csrc/npu.cpp", "pkg.py"} and len(rows) == 12


def test_a_message_built_in_a_variable_first_is_read_from_its_assignment():
    src = '''
def check(cfg):
    msg = f"The rollout batch size {cfg.n} is not divisible by the number of workers"
    msg += f" ({cfg.w})"
    raise ValueError(msg)


def passthrough(msg):
    raise RuntimeError(msg)                  # a parameter: no text to read
'''
    assert [(t.kind, t.pieces) for t in templates_of(src)] == [
        ("raise:ValueError", ("The rollout batch size ", " is not divisible by the number of workers (", ")"))]


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 50) | st.text(max_size=20),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4),
                     max_leaves=25)
_GOOD = {"schema": "doctor.message_owners/1", "read": "2026-12-03",
         "sources": [{"id": "verl", "distribution": "verl", "component": "verl", "version": "0.9.1",
                      "url": "https://pypi.org/project/verl/0.9.1/"}],
         "files": [[0, "verl/x.py", [["f", "raise:ValueError", ["a message long enough to index", ""]]]]]}


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from([("schema",), ("read",), ("sources",), ("sources", 0), ("sources", 0, "version"),
                             ("files",), ("files", 0), ("files", 0, 2), ("files", 0, 2, 0), ("files", 0, 2, 0, 2)]),
       value=_JSON)
def test_any_defect_is_an_input_error_never_a_crash(tmp_path_factory, path, value):
    import copy

    data = copy.deepcopy(_GOOD)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    f = tmp_path_factory.mktemp("fuzz") / "owners.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    try:
        load_table(str(f))
    except InputError as exc:
        assert str(f) in str(exc)


class _FakePyPI:
    """The two answers `pypi_trees` asks PyPI for: the project's JSON and the file it picks."""

    def __init__(self, files: dict[str, bytes], listing: list[dict]) -> None:
        self.files, self.listing, self.asked = files, listing, []

    def get(self, url: str) -> bytes:
        self.asked.append(url)
        if url.endswith("/json"):
            return json.dumps({"info": {"name": "pkg"}, "releases": {"1.0": self.listing}}).encode()
        return self.files[url.rsplit("/", 1)[1]]


def test_a_pypi_release_is_read_from_its_pure_wheel_and_names_its_release(tmp_path):
    import io
    import zipfile

    from tools.message_owners import pypi_trees

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("swiftpkg/args.py", "class SwiftArguments:\n    pass\n\nclass _Private:\n    pass\n\n"
                                       "def check(n):\n    raise ValueError(f'--max_length must be at least {n} tokens')\n")
    listing = [{"filename": "ms_swift-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "url": "https://f/x.whl"},
               {"filename": "ms_swift-1.0-py3-none-any.whl", "url": "https://f/pure.whl"},
               {"filename": "ms_swift-1.0.tar.gz", "url": "https://f/sd.tar.gz"}]
    http = _FakePyPI({"pure.whl": buf.getvalue()}, listing)
    (src,) = pypi_trees(tmp_path, [("ms-swift", "1.0", ("swiftpkg",))], http=http)
    assert http.asked == ["https://pypi.org/pypi/ms-swift/json", "https://f/pure.whl"]
    data = build([src], date="2026-12-03")
    assert data["sources"][0]["url"] == "https://pypi.org/project/ms-swift/1.0/"
    assert data["sources"][0]["component"] == "python"  # no component of its own
    out = tmp_path / "t.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    (site,) = owners_of("--max_length must be at least 8 tokens", table=load_table(str(out)))
    assert site.path == "swiftpkg/args.py"
    assert data["classes"] == [[0, "swiftpkg/args.py", ["SwiftArguments"]]]  # public, top-level classes only
    from doctor.explain.messages import class_owners

    ((origin, path),) = class_owners("SwiftArguments", table=load_table(str(out)))
    assert (origin.distribution, path) == ("ms-swift", "swiftpkg/args.py")
    pypi_trees(tmp_path, [("ms-swift", "1.0", ("swiftpkg",))], http=http)  # unpacked already: not fetched again
    assert len(http.asked) == 2


CPP_STRUCT = '''
static bool BlockComparatorAddress(const Block* a, const Block* b) {
  return a->ptr < b->ptr;
}

struct ExpandableHostAllocator : public HostAllocatorImpl {
 public:
  std::pair<void*, void*> allocate(size_t orig_size) override {
    bool found = get_free_block(params) || alloc_block(params);
    if (!found) {
      ASCEND_LOGE(
          "Get a block from the existing pool failed. Try to free cached blocks and reallocate.");
    }
    auto it = std::make_pair(
        "not a function", 1);
    return it;
  }
};

BlockState::BlockState(Block* block)
    : device(block->device),
      gc_count_base(block->gc_count) {
  TORCH_CHECK(block->event_count == 0, "Events should have synchronized when checkpointing block");
}

void Reader::read() {
  AT_DISPATCH_ALL_TYPES(dtype, "read", [&] {
    TORCH_CHECK(ok, "the value could not be read from the stream");
  });
  const char* brace = "}}}";
  TORCH_CHECK(ok, "the reader was left in a broken state");
}
'''


def test_a_cpp_check_is_credited_to_the_function_whose_body_holds_it():
    """torch_npu's 'Get a block ...' sits in a method defined inside a struct: it was credited to the last function
    defined at column 0 above it (BlockComparatorAddress). A constructor, a macro's block and braces in strings are
    told apart by the braces."""
    from tools.message_owners import cpp_templates_of

    got = {"".join(p or "*" for p in t.pieces)[:30]: t.func for t in cpp_templates_of(CPP_STRUCT)}
    assert got == {"Get a block from the existing ": "allocate", "Events should have synchronize": "BlockState",
                   "the value could not be read fr": "read", "the reader was left in a broke": "read"}, got


def test_build_again_reads_the_named_sources_at_their_recorded_commit_and_keeps_the_others(repo, tmp_path):
    from tools.message_owners import build_again

    gitdir, commit = repo
    a = Source("verl", "verl", str(gitdir), commit, ("pkg",), "https://github.com/verl-project/verl")
    b = Source("verl@old", "verl", str(gitdir), commit, ("pkg",), "https://github.com/verl-project/verl")
    kept = build([a, b], mirror=Path("/"), date="2026-12-03")
    for _, _, found in kept["files"]:
        for row in found:
            row[0] = "stale"  # what an older reader credited
    kept["sources"][0]["ref"] = "main"
    # the mirror's ref moved on (the repo fixture has a second commit): the recorded commit is read, not the tip
    again = build_again(kept, ["verl"], mirror=Path("/"), known=[
        Source("verl", "verl", str(gitdir), "HEAD", ("pkg",), "https://github.com/verl-project/verl")])
    assert again["read"] == "2026-12-03" and again["sources"][0]["commit"] == commit
    assert again["sources"][0]["ref"] == "main" and again["sources"][1] == kept["sources"][1]
    funcs = {s: {row[0] for si, _path, found in again["files"] if si == s for row in found} for s in (0, 1)}
    assert "TrainerConfig.__post_init__" in funcs[0] and "stale" not in funcs[0] and funcs[1] <= {"stale"}
    assert not any("second commit" in "".join(p for p in row[2] if p) for _, _, f in again["files"] for row in f)
    with pytest.raises(SystemExit, match="not a source"):
        build_again(kept, ["nope"], mirror=Path("/"))
