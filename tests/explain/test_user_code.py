"""User code (issue 23): an exception raised in the job's own code, outside every distribution, is read as the job's
(config, model) and the finding names the frame: a script or a module under /tmp run here by CPython, a notebook cell
as IPython prints it. A frame in a package, an editable install or a source checkout stays the package's
(tests/explain/test_attribution.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.explain.generic import errors

SITE = "/usr/local/lib/python3.10/site-packages"


def _run(tmp_path, name: str, source: str, *more: tuple[str, str]) -> list[str]:
    """The output of a script run here by this interpreter (its traceback as CPython prints it)."""
    for other, text in more:
        (tmp_path / other).write_text(text)
    (tmp_path / name).write_text(source)
    done = subprocess.run([sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    return done.stderr.splitlines()


def test_a_misspelt_name_in_the_jobs_own_script_is_its_code_not_a_package_whose_message_matches(tmp_path):
    # NameError is the interpreter's, about the code of the frame that raised it; before, a package that raises a
    # NameError with the same wording (numpy's defmatrix.py) was named as its owner
    lines = _run(tmp_path, "train.py", "def main():\n    total = 0\n    print(totl)\n\n\nmain()\n")
    assert lines[-1] == "NameError: name 'totl' is not defined. Did you mean: 'total'?"
    for specific in (False, True):
        (f,) = errors(lines, specific=specific)
        assert (f.id, f.components) == ("error-in-user-code", ("config", "model"))
        assert f"{tmp_path}/train.py\", line 3, in main" in f.evidence["read"]


def test_a_local_used_before_assignment_in_a_reward_module_under_tmp_is_the_jobs_code(tmp_path):
    reward = "def compute_score(text):\n    if '####' in text:\n        score = 1.0\n    return score\n"
    lines = _run(tmp_path, "run.py", "from reward_fn import compute_score\n\ncompute_score('no answer')\n",
                 ("reward_fn.py", reward))
    assert lines[-1].startswith("UnboundLocalError: cannot access local variable 'score'")
    (f,) = errors(lines)
    assert (f.id, f.components) == ("error-in-user-code", ("config", "model"))
    assert "reward_fn.py\", line 4, in compute_score" in f.evidence["read"]


# IPython 9.18's verbose traceback (core/ultratb.py, core/tbtools.py _tokens_filename): the exception's type before
# "Traceback (most recent call last)", then each frame's heading, `Cell In[N], line L` for a notebook cell
# (core/compilerop.py format_code_name) or `File <path>:L, in func(args)` (the home directory written `~`), outermost first
NOTEBOOK = ["---------------------------------------------------------------------------",
            "KeyError                                  Traceback (most recent call last)",
            "Cell In[7], line 3",
            "      1 batch = next(iter(loader))",
            "----> 3 loss = step(batch)",
            "",
            "Cell In[5], line 2, in step(batch)",
            "      1 def step(batch):",
            "----> 2     return model(batch['input_idss'])",
            "",
            "KeyError: 'input_idss'"]


def test_a_notebook_cell_as_ipython_prints_it_is_the_jobs_own_code_and_the_finding_names_the_cell():
    (f,) = errors(NOTEBOOK)
    assert (f.id, f.components) == ("error-in-user-code", ("config", "model"))
    assert "In[5]" in f.evidence["read"] and "line 2" in f.evidence["read"]


def test_a_plain_traceback_of_a_notebook_cell_is_the_jobs_code_not_generated_code():
    # the interpreter's format of a cell run by IPython < 8 / ipykernel: `File "<ipython-input-N-hash>"`; `<string>`
    # and `<frozen …>` stay the interpreter's own
    lines = ["Traceback (most recent call last):",
             '  File "<ipython-input-3-1a2b3c4d>", line 2, in <module>',
             "    x = compute(batch)",
             '  File "<ipython-input-2-9f8e7d6c>", line 4, in compute',
             '    return batch["input_idss"]',
             "KeyError: 'input_idss'"]
    (f,) = errors(lines)
    assert f.id == "error-in-user-code" and "<ipython-input-2-9f8e7d6c>" in f.evidence["read"]


def test_an_ipython_frame_in_a_package_is_the_packages_not_the_jobs():
    lines = ["ValueError                                Traceback (most recent call last)",
             "Cell In[2], line 1",
             "----> 1 model(x)",
             "",
             f"File {SITE}/torch/nn/modules/module.py:1751, in Module._call_impl(self, *args, **kwargs)",
             "   1750     return forward_call(*args, **kwargs)",
             "",
             "ValueError: expected input of 4 dimensions, got 3"]
    (f,) = errors(lines)
    assert f.id == "error-in-package" and f.components[0] == "torch"
    assert "torch/nn/modules/module.py" in f.evidence["read"]


def test_an_exception_of_the_scripts_own_class_or_a_bare_exception_is_the_jobs_code(tmp_path):
    # CPython prints a class of __main__ without its module (pythonrun.c print_exception, traceback.py
    # format_exception_only); before, no rule read these and the log had no finding
    own = _run(tmp_path, "prep.py", "class DataError(Exception):\n    pass\n\n\ndef load(rows):\n"
               "    raise DataError('row 12 has no prompt')\n\n\nload([])\n")
    assert own[-1] == "DataError: row 12 has no prompt"
    bare = _run(tmp_path, "score.py", "def score(x):\n    raise Exception('reward model returned no score')\n\n\n"
                "score(1)\n")
    deep = _run(tmp_path, "walk.py", "def walk(node):\n    return walk(node)\n\n\nwalk(0)\n")
    assert deep[-1].startswith("RecursionError: maximum recursion depth exceeded")
    for lines, where in ((own, "prep.py\", line 6, in load"), (bare, "score.py\", line 2, in score"),
                         (deep, "walk.py\", line 2, in walk")):
        for specific in (False, True):
            (f,) = errors(lines, specific=specific)
            assert (f.id, f.components) == ("error-in-user-code", ("config", "model")), lines[-1]
            assert where in f.evidence["read"]


def test_a_syntax_error_in_the_jobs_own_module_is_its_code_and_in_a_package_stays_pythons(tmp_path):
    lines = _run(tmp_path, "run.py", "import helpers\n", ("helpers.py", "def f(:\n    pass\n"))
    assert lines[-1] == "SyntaxError: invalid syntax"
    (f,) = errors(lines, specific=True)
    assert f.id == "error-in-user-code" and "helpers.py\", line 1" in f.evidence["read"]
    package = ["Traceback (most recent call last):", '  File "/home/me/job/run.py", line 3, in <module>',
               "    import vllm", f'  File "{SITE}/vllm/__init__.py", line 12', "    match x:",
               "          ^", "SyntaxError: invalid syntax"]
    assert [g.id for g in errors(package, specific=True)] == ["python-syntax-error"]


def test_a_stop_or_a_system_error_raised_in_the_jobs_frame_is_not_its_code():
    frame = ["Traceback (most recent call last):", '  File "/home/me/job/run.py", line 3, in <module>', "    x()"]
    assert errors([*frame, "KeyboardInterrupt"]) == []
    assert [f.id for f in errors([*frame, "OSError: [Errno 28] No space left on device"])] == ["system-call-failed"]
    called = [*frame, '  File "/usr/lib/python3.10/subprocess.py", line 526, in run', "    raise CalledProcessError(",
              "subprocess.CalledProcessError: Command '['bash', 'prep.sh']' returned non-zero exit status 1."]
    assert all(f.id != "error-in-user-code" for f in errors(called))


def test_the_jobs_module_in_rays_working_dir_is_its_code_not_rays(tmp_path):
    # Ray unpacks runtime_env's working_dir under <temp>/session_*/runtime_resources/working_dir_files/; with Ray's
    # default temp dir (/tmp/ray) the path holds a directory named `ray`, which read as a source tree of ray
    import shutil
    import tempfile
    from pathlib import Path

    from tests.explain.test_real_runs import HERE
    from tests.explain.test_real_runs import _run as _run_job

    work = tmp_path / "job"
    work.mkdir()
    (work / "my_reward.py").write_text("def compute_score(text):\n    return float(text.split(': ')[1])\n")
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    try:
        log = _run_job([str(HERE / "ray_working_dir.py"), str(temp / "ray"), str(work)], tmp_path, "ray_wd", ok=False)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert "/ray/session_" in log.read_text(errors="replace")
    (f,) = errors(log.read_text(errors="replace").splitlines(), specific=True)
    assert (f.id, f.components) == ("error-in-user-code", ("config", "model"))
    assert "/runtime_resources/working_dir_files/" in f.evidence["read"] and "my_reward.py" in f.evidence["read"]


def test_code_given_to_python_on_stdin_or_with_dash_c_is_the_jobs_own(tmp_path):
    # CPython names such code `<stdin>` (`python -`, a heredoc) and `<string>` (`python -c`); they were read as the
    # interpreter's own frames, and a NameError in them fell through to a package whose message has the same words
    piped = subprocess.run([sys.executable, "-"], input="def f():\n    return undefined_nm\nf()\n", cwd=tmp_path,
                           capture_output=True, text=True, timeout=60).stderr.splitlines()
    assert piped[-1] == "NameError: name 'undefined_nm' is not defined"
    (f,) = errors(piped)
    assert (f.id, f.components) == ("error-in-user-code", ("config", "model"))
    assert 'File "<stdin>", line 2, in f' in f.evidence["read"]
    dash_c = subprocess.run([sys.executable, "-c", "x = 1\nraise ValueError('lr must be positive: -1')"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60).stderr.splitlines()
    (g,) = errors(dash_c)
    assert g.id == "error-in-user-code" and 'File "<string>", line 2, in <module>' in g.evidence["read"]


def test_a_function_the_interpreter_generated_is_not_the_jobs_code(tmp_path):
    # dataclasses and namedtuple write their methods as `<string>` functions (dataclasses.py _create_fn): a check
    # a package's dataclass runs there is the package's, as before
    lines = ["Traceback (most recent call last):",
             f'  File "{SITE}/verl/trainer/main_ppo.py", line 40, in main',
             "    cfg = AlgoConfig(**kwargs)",
             '  File "<string>", line 5, in __init__',
             f'  File "{SITE}/verl/trainer/config/algorithm.py", line 88, in __post_init__',
             "    raise ValueError(f'kl_coef must be >= 0, got {self.kl_coef}')",
             "ValueError: kl_coef must be >= 0, got -0.1"]
    assert all(f.id != "error-in-user-code" for f in errors(lines))
    assert all(f.id != "error-in-user-code" for f in errors(lines[:4] + ["TypeError: bad"]))
