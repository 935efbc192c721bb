"""Validation of the knowledge files (profiles, the release table): every refusal names the file and the key.

Shared by doctor/knowledge/profiles.py and doctor/knowledge/releases.py, so a broken knowledge file reads the
same everywhere: `<file>: <key path>: <reason>`, exit 2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from doctor.errors import InputError
from doctor.knowledge.versions import CannVersion, parse_pkg_version, valid_specifier

# An upstream URL a user can open, pinned to a tag, a commit or a released artifact: a GitHub/GitCode blob,
# tree, commit, issue or pull page, or a versioned PyPI release page.
_PINNED_URL = re.compile(
    r"^https://(?:(?:github\.com|gitcode\.com)/[\w.\-]+/[\w.\-]+/(?:(?:blob|tree|raw)/[^/\s]+(?:/\S*)?|commit/[0-9a-f]{7,40}"
    r"|issues/\d+|pull/\d+|releases/tag/\S+)|pypi\.org/project/[\w.\-]+/[\w.\-+!]+/\S*)$")
_MOVING_REFS = {"main", "master", "dev", "develop", "HEAD"}
# A page of Huawei's documentation for one release of a product (CANN, Ascend Extension for PyTorch):
# …/canncommercial/81RC1/…, …/CANNCommunityEdition/82RC1alpha002/…, …/Pytorch/600/…; the reference for what is not
# published as source.
_ASCEND_DOC = re.compile(r"^https://(?:www\.)?hiascend\.com/(?:document/detail|doc_center/source)/(?:zh|en)/"
                         r"[A-Za-z]+/\d+[0-9A-Za-z]*/\S+\.html$")


_REF = re.compile(r"^https://[^/]+/[^/]+/[^/]+/(?:blob|tree|raw)/([^/\s]+)")


@lru_cache(maxsize=4096)
def pinned_url_problem(url: str) -> str | None:
    """Why `url` is not an upstream URL at a tag, commit or release (None when it is one). Remembered: the profiles
    and tables a `doctor check` loads cite ~125 URLs ~510 times (the same guide in every stack of a release)."""
    if not _PINNED_URL.match(url):
        return "must be an upstream URL at a tag, a commit or a PyPI release (github.com/…/blob/<tag>/…, pypi.org/project/<name>/<version>/)"
    m = _REF.match(url)
    if m and m.group(1) in _MOVING_REFS:
        return f"points at the moving branch {m.group(1)!r}: use the tag or the commit it was read at"
    return None


class Validator:
    """Checks values of one parsed file; `fail` builds the InputError naming the file and key path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, msg: str) -> InputError:
        return InputError(msg, source=self.source, path=path or None)

    def schema(self, value: Any, expected: Any, path: str = "schema") -> None:
        """The file's format marker: one refusal wording for every loader."""
        if value != expected:
            raise self.fail(path, f"unsupported schema {value!r} (this doctor reads {expected!r})")

    def keys(self, table: Any, allowed: set[str], path: str, required: Iterable[str] = ()) -> dict[str, Any]:
        if not isinstance(table, dict):
            raise self.fail(path, "must be a table")
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(f"{path + '.' if path else ''}{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(allowed))})")
        for r in required:
            if r not in table:
                raise self.fail(f"{path + '.' if path else ''}{r}", "required key is missing")
        return table

    def s(self, value: Any, path: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, "must be a non-empty string")
        return value

    def req(self, value: Any, path: str) -> str:
        """A required non-empty string."""
        s = self.s(value, path)
        assert s is not None
        return s

    def strs(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not (set(map(type, value)) <= {str} and all(value)):  # C-level passes
            raise self.fail(path, "must be an array of non-empty strings")
        return tuple(value)

    def boolean(self, value: Any, path: str, default: bool | None = None) -> bool:
        if value is None and default is not None:
            return default
        if not isinstance(value, bool):
            raise self.fail(path, "must be true or false")
        return value

    def cann(self, value: Any, path: str) -> str:
        s = self.req(value, path)
        if CannVersion.try_parse(s) is None:
            raise self.fail(path, f"not a CANN version: {s!r} (e.g. 8.3.RC1, 8.5.0, 9.0.0-beta.1)")
        return s

    def spec(self, value: Any, path: str) -> str:
        s = self.req(value, path)
        if not valid_specifier(s):
            raise self.fail(path, f"not a version specifier: {s!r} (e.g. ==2.8.0, >=3.10,<3.12)")
        return s

    def version(self, value: Any, path: str) -> str:
        s = self.req(value, path)
        if parse_pkg_version(s) is None:
            raise self.fail(path, f"not a version: {s!r}")
        return s

    def url(self, value: Any, path: str, *, pinned: bool = True) -> str:
        s = self.req(value, path)
        if not s.startswith("https://"):
            raise self.fail(path, f"must be an https:// URL, got {s!r}")
        if pinned:
            problem = pinned_url_problem(s)
            if problem:
                raise self.fail(path, f"{problem}; got {s!r}")
        return s

    def urls(self, value: Any, path: str) -> str:
        """One or more pinned upstream URLs joined by '; ' (the form user-visible `source` fields take)."""
        s = self.req(value, path)
        for part in s.split("; "):
            self.url(part, path)
        return s

    def sources(self, value: Any, path: str) -> str:
        """One or more sources joined by '; ', each a pinned upstream URL or a versioned hiascend.com page."""
        s = self.req(value, path)
        for part in s.split("; "):
            if not _ASCEND_DOC.match(part) and pinned_url_problem(part) is not None:
                raise self.fail(path, f"{part!r} is neither an upstream URL at a tag, commit, issue or pull request "
                                      "nor a versioned hiascend.com page")
        return s

    def date(self, value: Any, path: str) -> str:
        s = self.req(value, path)
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", s):
            raise self.fail(path, f"must be a date YYYY-MM-DD, got {s!r}")
        return s
