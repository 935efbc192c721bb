"""What a bash word expands to when part of it cannot be known without running the script.

A `Str` is a sequence of known text and `Hole`s (a command substitution, a variable the environment gives,
a positional parameter without default, arithmetic over such values). Holes keep the source text they stand
for, so a finding can say what was not read, and a `sample` that keeps Hydra's grammar happy when the
override is composed (the value itself is then treated as unknown by every rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SAMPLE = "UNRESOLVED"


@dataclass(frozen=True)
class Hole:
    text: str  # source text, e.g. "$(date +%Y%m%d)" or "$HOME"
    why: str  # "command substitution" | "environment" | "positional parameter" | "unsupported expansion" ...
    sample: str = SAMPLE
    splits: bool = False  # unquoted: bash may split it into several words
    # a substitution naming the running script's directory (wrapper.is_script_dir): that directory, as bash would
    # give it where the substitution ran (`${BASH_SOURCE[0]}` in a sourced file is that file, `$0` the script)
    base: str | None = None


Part = str | Hole


@dataclass(frozen=True)
class Str:
    parts: tuple[Part, ...] = ()
    origin: int | None = field(default=None, compare=False)  # line the text was written on (array items)

    @staticmethod
    def of(text: str) -> Str:
        return Str((text,)) if text else Str()

    @property
    def known(self) -> bool:
        return all(isinstance(p, str) for p in self.parts)

    @property
    def holes(self) -> list[Hole]:
        return [p for p in self.parts if isinstance(p, Hole)]

    @property
    def text(self) -> str:
        """Known text, with each hole written as its source text (for messages)."""
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    @property
    def sample(self) -> str:
        """Known text with each hole replaced by its sample (for composition)."""
        return "".join(p if isinstance(p, str) else p.sample for p in self.parts)

    def value(self) -> str | None:
        """The text when fully known, else None."""
        return self.text if self.known else None

    def __add__(self, other: Str) -> Str:
        return Str(_merge(self.parts + other.parts))

    def __bool__(self) -> bool:
        return bool(self.parts)

    def is_empty(self) -> bool:
        return self.known and self.text == ""


def _merge(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    out: list[Part] = []
    for p in parts:
        if p == "":
            continue
        if out and isinstance(p, str) and isinstance(out[-1], str):
            out[-1] = out[-1] + p
        else:
            out.append(p)
    return tuple(out)


def concat(items: list[Str]) -> Str:
    return Str(_merge(tuple(p for s in items for p in s.parts)))


Value = Str | list[Str]  # a scalar or an indexed array


def scalar(v: Value | None) -> Str | None:
    """A variable read as `$X`: an array gives its first element."""
    if isinstance(v, list):
        return v[0] if v else Str()
    return v


def join(v: Value, sep: str = " ") -> Str:
    if isinstance(v, list):
        out: list[Str] = []
        for i, s in enumerate(v):
            if i:
                out.append(Str.of(sep))
            out.append(s)
        return concat(out)
    return v


IFS = " \t\n"


class FieldBuilder:
    """Collects expansion results into argv words the way bash does: unquoted expansions are split on IFS,
    quoted text never is, and a word that ends up empty with nothing quoted in it disappears."""

    def __init__(self, split: bool = True) -> None:
        self.split = split
        self.fields: list[Str] = []
        self.cur: list[Part] = []
        self.started = False  # the current word has quoted or literal content (survives even if empty)
        self.origin: int | None = None
        self.unsplittable: list[Hole] = []  # unquoted holes that may have split into several words

    def literal(self, text: str) -> None:
        self.cur.append(text)
        self.started = True

    def quoted(self, s: Str) -> None:
        if not self.cur and s.origin is not None:
            self.origin = s.origin
        self.cur.extend(s.parts)
        self.started = True

    def unquoted(self, s: Str) -> None:
        """The result of an unquoted expansion: split known text on IFS (when splitting applies)."""
        if not self.split:
            self.cur.extend(s.parts)
            self.started = self.started or bool(s.parts)
            return
        if not self.cur and s.origin is not None:
            self.origin = s.origin
        for p in s.parts:
            if isinstance(p, Hole):
                if p.splits:
                    self.unsplittable.append(p)
                self.cur.append(p)
                self.started = True
                continue
            pieces = _ifs_split(p)
            for i, piece in enumerate(pieces):
                if i:
                    self.finish()
                if piece:
                    self.cur.append(piece)
                    self.started = True

    def fields_break(self, items: list[Str]) -> None:
        """"${a[@]}" / "$@": each element its own word, the first and last joined to what surrounds them."""
        for i, s in enumerate(items):
            if i:
                self.finish()
            self.quoted(s)

    def finish(self) -> None:
        if self.started or self.cur:
            self.fields.append(Str(_merge(tuple(self.cur)), self.origin))
        self.cur, self.started, self.origin = [], False, None

    def result(self) -> list[Str]:
        self.finish()
        return self.fields


def _ifs_split(text: str) -> list[str]:
    """'a b' -> ['a', 'b']; leading/trailing IFS whitespace gives empty pieces at the ends (word breaks)."""
    out: list[str] = []
    cur = ""
    prev_ws = False
    for ch in text:
        if ch in IFS:
            if not prev_ws:
                out.append(cur)
                cur = ""
            prev_ws = True
        else:
            cur += ch
            prev_ws = False
    out.append(cur)
    return out
