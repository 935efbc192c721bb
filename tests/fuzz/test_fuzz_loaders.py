"""Loaders of user-supplied files: profiles, the requirements table, launch scripts (lint), signature databases,
launch specs.

Each either returns a value or raises InputError with the file named in the message; nothing else escapes,
so the CLI turns every bad input into exit 2 with a reason."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.errors import InputError
from doctor.knowledge.profiles import parse_profile
from doctor.knowledge.requirements import ProjectSummary, parse_index, parse_project
from doctor.launch.script_parser import parse_script

from ._budget import fuzz

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROFILES = [tomllib.loads(p.read_text()) for p in sorted((ROOT / "profiles" / "stacks").glob("*.toml"))]
SHARED = ROOT.parent / "shared"
SCRIPTS = [p.read_text() for p in sorted((SHARED / "cases").glob("*.lint.sh"))] or [
    "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer a=1 \\\n  b=2\n"]

leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.text(max_size=12),
                 st.sampled_from([">=8.3.RC1", "<9.0", "==2.5.1", "~=1", "8.5.0", "a2", "A3", "x86_64", ">=3.10,<3.12",
                                  "not a spec", "", "9.0.0-beta.1"]))


@st.composite
def mutated_profile(draw, docs=None):
    doc = copy.deepcopy(draw(st.sampled_from(docs or PROFILES)))
    for _ in range(draw(st.integers(1, 5))):
        node, path = doc, []
        while isinstance(node, dict) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node)))
            path.append(key)
            if not isinstance(node[key], dict):
                break
            node = node[key]
        if not isinstance(node, dict) or not node:
            continue
        key = draw(st.sampled_from(sorted(node)))
        op = draw(st.sampled_from(["drop", "set", "add"]))
        if op == "drop":
            del node[key]
        elif op == "set":
            node[key] = draw(st.one_of(leaf, st.lists(leaf, max_size=3), st.dictionaries(st.text(max_size=6), leaf, max_size=2)))
        else:
            node[draw(st.text(max_size=8))] = draw(leaf)
    return doc


@fuzz
@given(mutated_profile())
def test_profile_loader(doc):
    try:
        parse_profile(doc, "fuzz.toml")
    except InputError as e:
        assert str(e).startswith("fuzz.toml")


@st.composite
def mutated_script(draw):
    text = draw(st.sampled_from(SCRIPTS))
    i = draw(st.integers(0, len(text)))
    junk = draw(st.one_of(st.text(max_size=20), st.sampled_from(["\\\n", "'", '"', "$(", "${", "`", "(", ")", "=(", "\n)",
                                                                  "<<EOF\n", "#", "&&", ";;", "$X", "\x00"]),
                            # a brace before an astral character crashed tree-sitter-bash's scanner (#337)
                            st.builds("{".__add__, st.characters(min_codepoint=0x10000)),
                            st.builds("{".__add__, st.sampled_from(["\U00105456", "\U00031860", "\U000E0000"]))))
    cut = draw(st.integers(0, 10))
    return text[:i] + junk + text[i + cut:]


@fuzz
@given(st.one_of(st.text(max_size=300), mutated_script()))
def test_lint_script_parser(text):
    try:
        parse_script(text, "fuzz.sh")
    except InputError as e:
        assert "fuzz.sh" in str(e)


@fuzz
@given(st.text(max_size=400))
def test_signature_db_loader(tmp_path_factory, text):
    from doctor.explain.signatures import load_signatures

    p = tmp_path_factory.getbasetemp() / "fuzz-sigs.toml"
    p.write_text(text)
    try:
        load_signatures(p)
    except InputError as e:
        assert str(p) in str(e)


@fuzz
@given(st.one_of(st.text(max_size=200), mutated_script()))
def test_lint_parser_input_holds_no_astral_character(text):
    """What tree-sitter-bash reads never holds the characters its scanner crashes on (#337), and keeps every byte
    offset and every ASCII byte of the script (so node text and positions are the script's own)."""
    from doctor.launch.shell.tree import parser_bytes

    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: parse_script refuses it before the parser
        return
    data = parser_bytes(text)
    assert len(data) == len(raw) and not any(0xF0 <= b <= 0xF7 for b in data)
    assert all(a == b for a, b in zip(raw, data, strict=True) if a < 0x80)


# the requirements table's files, as packaged: the index and small project files (flash-attn's has `unstated`)
_REQ = ROOT / "profiles" / "requirements"
REQ_DOCS = [json.loads((_REQ / n).read_text()) for n in ("index.json", "torch-npu.json", "mbridge.json",
                                                               "flash-attn.json")]


@fuzz
@given(mutated_profile(REQ_DOCS))
def test_requirements_table_loaders(doc):
    try:
        if doc.get("schema") == "doctor.requirements-index/1" or "project" not in doc:
            parse_index(doc, "fuzz/index.json")
        else:
            name = str(doc.get("project"))
            parse_project(doc, "fuzz/x.json", name, str(doc.get("read")), ProjectSummary(1, "1.0"))
    except InputError as e:
        assert str(e).startswith("fuzz/")


ENV_VALUES = tomllib.loads((ROOT / "profiles" / "env-values.toml").read_text())


@st.composite
def mutated_rows(draw, table, sections, extra_keys=("extra",), value=None):
    """`table` with a few rows' keys (of its arrays `sections`) dropped, replaced or added, and now and then its
    schema or read date replaced."""
    doc = copy.deepcopy(table)
    if value is None:
        value = st.one_of(leaf, st.lists(leaf, max_size=3), st.dictionaries(st.text(max_size=6), leaf, max_size=2))
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from([*sections, "schema", "read"]))
        if section in ("schema", "read"):
            doc[section] = draw(leaf)
            continue
        rows = doc[section]
        row = rows[draw(st.integers(0, len(rows) - 1))]
        key = draw(st.sampled_from(sorted(row) + list(extra_keys)))
        if draw(st.booleans()):
            row.pop(key, None)
        else:
            row[key] = draw(value)
    return doc


@fuzz
@given(mutated_rows(ENV_VALUES, ["reader", "var", "option"]))
def test_env_values_table_loader(doc):
    from doctor.knowledge.env_values import parse

    try:
        parse(doc, "fuzz/env-values.toml")
    except InputError as e:
        assert str(e).startswith("fuzz/env-values.toml")


ENV_GUIDANCE = tomllib.loads((ROOT / "profiles" / "env-guidance.toml").read_text())


@st.composite
def mutated_env_guidance(draw):
    """The table of upstream guidance on environment values with a few rows' keys dropped, replaced or added."""
    doc = copy.deepcopy(ENV_GUIDANCE)
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from(["rule", "rule", "schema", "read"]))
        if section != "rule":
            doc[section] = draw(leaf)
            continue
        row = doc["rule"][draw(st.integers(0, len(doc["rule"]) - 1))]
        key = draw(st.sampled_from(sorted(row) + ["extra"]))
        if draw(st.booleans()):
            row.pop(key, None)
        else:
            cond = st.sampled_from(["installed:verl", "installed:vllm-ascend>=x", "chip:A9", "env:X", "env:a=b",
                                    "cann:>=9.0.0", "driver:not", "other:1", ""])
            row[key] = draw(st.one_of(leaf, st.lists(st.one_of(leaf, cond), max_size=3),
                                      st.dictionaries(st.text(max_size=6), leaf, max_size=2)))
    return doc


@fuzz
@given(mutated_env_guidance())
def test_env_guidance_table_loader(doc):
    from doctor.knowledge.env_guidance import parse

    try:
        parse(doc, "fuzz/env-guidance.toml")
    except InputError as e:
        assert str(e).startswith("fuzz/env-guidance.toml")


def _later_bounds_doc() -> dict:
    """A small later-bounds document: the shipped one cut to three projects (its shape, real lines)."""
    full = json.loads((ROOT / "profiles" / "later-bounds.json").read_text())
    keep = ("ray", "vllm-ascend", "tensordict")
    return {**full, "newest": {k: full["newest"][k] for k in keep},
            "clauses": {k: full["clauses"][k] for k in keep}, "projects": {k: full["projects"][k] for k in keep}}


LATER_BOUNDS = _later_bounds_doc()


@st.composite
def mutated_later_bounds(draw):
    doc = copy.deepcopy(draw(mutated_profile([LATER_BOUNDS])))
    projects = doc.get("projects")
    if isinstance(projects, dict) and projects and draw(st.booleans()):
        deps = projects[draw(st.sampled_from(sorted(projects)))]
        if isinstance(deps, dict) and deps:
            changes = deps[draw(st.sampled_from(sorted(deps)))]
            if isinstance(changes, list) and changes:
                c = changes[draw(st.integers(0, len(changes) - 1))]
                if isinstance(c, dict):
                    c[draw(st.sampled_from(["since", "lines", "x"]))] = draw(
                        st.one_of(leaf, st.lists(st.one_of(leaf, st.text(max_size=20)), max_size=3)))
    return doc


@fuzz
@given(mutated_later_bounds(), st.sampled_from(["2.8.0", "8.3.0", "0.1", "not a version", "2.13.0+cpu", "1!2"]))
def test_later_bounds_table_loader(doc, version):
    """A malformed later-bounds file is an InputError naming it, when loaded or when a pair is judged; never a crash."""
    from doctor.knowledge.later_bounds import excluded_later, parse

    try:
        table = parse(doc, "fuzz/later-bounds.json")
        for name in ("ray", "vllm-ascend", "tensordict"):
            for dep in table.dependency_names(name):
                table.may_exclude(name, dep, version)
                excluded_later(table.changes(name, dep), table.newest.get(name, "0"), "0.1", version, lambda _: True)
    except InputError as e:
        assert str(e).startswith("fuzz/later-bounds.json")


CODE_NEEDS = tomllib.loads((ROOT / "profiles" / "code-needs.toml").read_text())


@fuzz
@given(mutated_rows(CODE_NEEDS, ["need", "need", "enforces"], ["on", "bypass", "bypass_values", "when_installed", "extra"],
                    st.one_of(leaf, st.lists(st.one_of(leaf, st.sampled_from(["torch>=2.1", "npu", "numpy", "1"])),
                                             max_size=3), st.dictionaries(st.text(max_size=6), leaf, max_size=2))))
def test_code_needs_table_loader(doc):
    from doctor.knowledge.code_needs import parse

    try:
        parse(doc, "fuzz/code-needs.toml")
    except InputError as e:
        assert str(e).startswith("fuzz/code-needs.toml")


CHIP_SUPPORT = tomllib.loads((ROOT / "profiles" / "chip-support.toml").read_text())


@fuzz
@given(mutated_rows(CHIP_SUPPORT, ["row"], ["branches", "excluded", "extra"]),
       st.sampled_from(["0.7.1", "0.12.1", "not a version", "2.5.1.post1", None]),
       st.sampled_from(["A2", "A3", "910", "310P", "310", "950"]))
def test_chip_support_table_loader(doc, version, family):
    """A malformed chip-support file is an InputError naming it, when loaded or when a release is judged."""
    from doctor.knowledge.chip_support import parse

    try:
        table = parse(doc, "fuzz/chip-support.toml")
        for package in table.scope:
            table.verdict(package, version, family, "core_r0.16.0")
    except InputError as e:
        assert str(e).startswith("fuzz/chip-support.toml")


REQUIREMENTS_GIT = tomllib.loads((ROOT / "profiles" / "requirements-git.toml").read_text())


@fuzz
@given(mutated_rows(REQUIREMENTS_GIT, ["release", "vllm_empty_target"], ["extra"],
                    st.one_of(leaf, st.lists(st.one_of(leaf, st.sampled_from(["numpy<2", "torch==", "a; extra == 'x'"])),
                                             max_size=3),
                              st.sampled_from(["https://github.com/vllm-project/vllm/blob/v0.11.0/requirements/common.txt",
                                               "https://pypi.org/project/vllm/0.11.0/", "0.11.0+empty"]))),
       st.one_of(st.none(), leaf, st.sampled_from(["drop"])),
       st.one_of(st.text(max_size=12), st.sampled_from(["0.11.0", "0.11.0+empty", "0.11.0+EMPTY", "0.11.0+cpu", "+empty",
                                                         "0.11", "v0.11.0", "0.11.0+empty+x", " 0.18.0 "])))
def test_requirements_git_table_loader(doc, empty_read, version):
    """A malformed requirements-git file (its [[vllm_empty_target]] entries and their read date too) is an InputError
    naming it; a loaded table answers any stated vLLM version without raising."""
    from doctor.knowledge.requirements_git import parse

    if empty_read == "drop":
        doc.pop("vllm_empty_target_read", None)
    elif empty_read is not None:
        doc["vllm_empty_target_read"] = empty_read
    try:
        table = parse(doc, "fuzz/requirements-git.toml")
    except InputError as e:
        assert str(e).startswith("fuzz/requirements-git.toml")
        return
    got = table.vllm_empty_target(version)
    assert got is None or got.source.startswith(f"https://github.com/vllm-project/vllm/blob/v{got.version}/")
