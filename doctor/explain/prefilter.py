"""The literal pre-filter: a few byte regexes that find, at C speed, every line that *could* match.

Python's `re` has no multi-string search. What it does fast is this: a regex that starts with one fixed byte
runs a tight C loop from one occurrence of that byte to the next (about 0.3 ns a byte), and a regex that
starts with a fixed two-byte string also compares the second byte inside that loop. Every stop where the
rest of the regex has to be tried costs far more (tens of ns), and a regex that starts with a *set* of bytes
checks each byte of the log through a slow call. So the plan, made once per log from the counts of its first
region, is:

* every pattern is covered by one *gate*: a single byte or a two-byte string of one of its fixed phrases;
* all single-byte gates share one pass: the region is translated so that each of them becomes byte 0, and
  one regex starting with byte 0 continues with a trie of the rest of every phrase (look-behinds check the
  part before the gate);
* each two-byte gate gets a pass of its own over the untranslated region (worth it for phrases made only
  of common letters, where a single byte would stop the search every few bytes).

Gates are picked by greedy weighted set cover under a cost model measured with CPython 3.11 on a 200 MB
log. The plan only decides speed: whatever it picks, a line holding one of a pattern's phrases is found.

This plan is the fallback: where the compiled automaton of `doctor.explain.aho` can be imported (the
`ahocorasick-rs` dependency), `build_prefilter` returns that one, which finds the same lines about three
times faster and needs no sample of the log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from doctor.explain import aho

SAMPLE_BYTES = 256 * 1024  # bytes of the log used to count bytes
PAIR_SAMPLE_BYTES = 16 * 1024  # bytes used to count two-byte strings
MIN_SAMPLE = 64 * 1024  # below this the static byte order is used (and the compiled pre-filter is shared)
SENTINEL = 0  # the byte every single-byte gate is translated to

# Cost model, in ns per byte of log (times the share of the bytes concerned).
PASS_NS = 0.33  # one tight-loop pass over the log
TRANSLATE_NS = 0.6  # translating the log for the shared pass (paid once, whatever the gates)
ATTEMPT_NS = 50.0  # trying the rest of a regex where its first byte occurs
STOP_NS = 10.0  # stopping at the first byte of a two-byte gate to compare the second
POOLED_SHARE = 0.003  # a pattern with a byte rarer than this never needs a two-byte gate
FALSE_NS = 30_000.0  # a false candidate line: decoded and tried against every signature in Python

# Bytes from rarest to most common in typical training logs; used before a sample is seen and to break ties.
_STATIC_ORDER = (
    b"\x1b`~^|\\;!?$#@&*%'\"<>{}QJZXVKYWUHGBjqzxkvMFLOPDCNTIRSAEwygbf9876543"
    b"mpuhldc()[]=+_-,.:/201ntioase r\t\n"
)
_STATIC_RANK = {b: i for i, b in enumerate(_STATIC_ORDER)}
_STATIC_SHARES = {b: 1e-4 * 1.08**rank for b, rank in _STATIC_RANK.items()}
# "aho": the compiled automaton (doctor.explain.aho); "re": the regex plan below (no compiled dependency).
BACKEND = "aho" if aho.AVAILABLE else "re"


class Prefilter:
    """`candidates(region)` gives the (start, end) offsets of the lines that may match, in order, each once
    (end is the offset of the line's newline, or -1 when the region ends without one)."""

    def __init__(self, table: bytes | None, shared: re.Pattern[bytes] | None,
                 passes: tuple[re.Pattern[bytes], ...]) -> None:
        self.table, self.shared, self.passes = table, shared, passes

    def candidates(self, region: bytes) -> list[tuple[int, int]]:
        starts: set[int] = set()
        if self.shared is not None and self.table is not None:
            _collect(self.shared, region.translate(self.table), starts)
        for rx in self.passes:
            _collect(rx, region, starts)
        return [(start, region.find(b"\n", start)) for start in sorted(starts)]


def _collect(rx: re.Pattern[bytes], buf: bytes, starts: set[int]) -> None:
    pos = 0
    while (m := rx.search(buf, pos)) is not None:
        starts.add(buf.rfind(b"\n", 0, m.start()) + 1)
        end = buf.find(b"\n", m.end())
        if end < 0:
            return
        pos = end + 1


class Sample:
    """Byte counts of a log's first region (the plan is tuned to them)."""

    def __init__(self, region: bytes) -> None:
        head = region[:SAMPLE_BYTES]
        self.shares = {b: head.count(b) / len(head) for b in set(head)} if head else {}
        self.pairs = region[:PAIR_SAMPLE_BYTES]
        counts: dict[bytes, int] = {}
        for i in range(len(self.pairs) - 1):
            key = self.pairs[i : i + 2]
            counts[key] = counts.get(key, 0) + 1
        self._pair_shares = {k: c / len(self.pairs) for k, c in counts.items()}

    def pair_share(self, key: bytes) -> float:
        return self._pair_shares.get(key, 0.0)

    def follower_shares(self, table: bytes) -> dict[int, float]:
        """How often each byte follows a gate byte, once the region is translated with `table`."""
        moved = self.pairs.translate(table)
        counts: dict[int, int] = {}
        at = moved.find(SENTINEL)
        while 0 <= at < len(moved) - 1:
            counts[moved[at + 1]] = counts.get(moved[at + 1], 0) + 1
            at = moved.find(SENTINEL, at + 1)
        total = max(sum(counts.values()), 1)
        return {b: c / total for b, c in counts.items()}


def sample_of(region: bytes) -> Sample | None:
    """The sample to tune to, or None when the region is too short to say more than the static order (or
    the automaton, which needs none, is used)."""
    return Sample(region) if len(region) >= MIN_SAMPLE and BACKEND == "re" else None


def build_prefilter(options: Iterable[tuple[str, ...]], sample: Sample | None = None, *, large: bool = False
                    ) -> Prefilter | aho.AhoPrefilter | None:
    """The pre-filter for patterns given by their fixed phrases (any one phrase of a pattern will do): the
    compiled automaton (`large`: the kind for a log past aho.LARGE_LOG), or else the regex plan tuned to `sample`;
    None when there is no phrase at all. Without a sample the plan and the compiled regexes are shared by every
    call with the same patterns."""
    opts = tuple(sorted({o for o in options if o}))
    if not opts:
        return None
    if BACKEND == "aho":
        return aho.build(opts, large)
    if sample is None:
        return _compile(_static_plan(opts))
    return _compile(plan(opts, sample))


@lru_cache(maxsize=8)
def _static_plan(opts: tuple[tuple[str, ...], ...]) -> tuple[tuple[bytes, bytes, int], ...]:
    return plan(opts, None)


def plan(opts: tuple[tuple[str, ...], ...], sample: Sample | None) -> tuple[tuple[bytes, bytes, int], ...]:
    """(phrase, gate, where the regex enters the phrase) for the patterns: greedy weighted set cover of the
    patterns by gates, taking each time the gate that covers the most patterns not yet covered per ns."""
    shares = sample.shares if sample is not None else _STATIC_SHARES
    pair_share = sample.pair_share if sample is not None else (lambda key: 0.0)
    pats = [tuple(run.encode("utf-8") for run in runs) for runs in opts]
    costs: dict[bytes, float] = {}

    def cost(key: bytes) -> float:
        if key not in costs:
            rank = _STATIC_RANK.get(key[0], 255) / 1e9  # ties: the rarer byte in the static order
            if len(key) == 1:
                costs[key] = ATTEMPT_NS * shares.get(key[0], 0.0) + rank
            else:
                costs[key] = PASS_NS + STOP_NS * shares.get(key[0], 0.0) + ATTEMPT_NS * pair_share(key) + rank
        return costs[key]

    keys_of = [_gate_keys(runs, shares) for runs in pats]
    holders: dict[bytes, list[int]] = {}
    for n, keys in enumerate(keys_of):
        for key in keys:
            holders.setdefault(key, []).append(n)
    left = {key: len(ns) for key, ns in holders.items()}
    uncovered = set(range(len(pats)))
    chosen: set[bytes] = set()
    while uncovered:
        best = max((k for k, c in left.items() if c), key=lambda k: left[k] / cost(k))
        chosen.add(best)
        for n in holders[best]:
            if n in uncovered:
                uncovered.discard(n)
                for key in keys_of[n]:
                    left[key] -= 1
    picks = [min((k for k in keys if k in chosen), key=cost) for keys in keys_of]
    return _entries(_assign(pats, picks, shares, cost), sample)


def _assign(pats: list[tuple[bytes, ...]], picks: list[bytes], shares: Mapping[int, float],
            cost: Callable[[bytes], float]) -> list[tuple[bytes, bytes]]:
    """Each pattern's phrase and gate, shortest phrases first and without a phrase that holds a kept one (a
    line holding it also holds the shorter one). Once the single-byte gates are translated, a phrase made
    mostly of them matches by chance, and every such false candidate line costs FALSE_NS: when that costs
    more than a two-byte gate (an open pass costs only its attempts), the phrase gets the two-byte gate."""
    pooled = {k[0] for k in picks if len(k) == 1}
    moved_share = sum(shares.get(b, 0.0) for b in pooled)
    chosen = []
    for runs, gate in zip(pats, picks, strict=True):
        phrase = next(run for run in runs if gate in run[: len(run) - 2 + len(gate)])  # a byte gate: not last
        chance = 1.0
        for b in phrase:
            chance *= moved_share if b in pooled else shares.get(b, 0.0)
        chosen.append((chance * FALSE_NS if len(gate) == 1 else 0.0, runs, phrase, gate))
    open_pairs = {gate for *_, gate in chosen if len(gate) == 2}
    out: dict[bytes, bytes] = {}
    for false_cost, runs, phrase, gate in sorted(chosen, key=lambda c: -c[0]):
        if false_cost > 0:
            pairs = {run[i : i + 2]: run for run in runs for i in range(len(run) - 1)}
            best = min(pairs, key=lambda k: cost(k) - (PASS_NS if k in open_pairs else 0.0))
            if false_cost > cost(best) - (PASS_NS if best in open_pairs else 0.0):
                phrase, gate = pairs[best], best
                open_pairs.add(best)
        out.setdefault(phrase, gate)
    kept: list[tuple[bytes, bytes]] = []
    for phrase, gate in sorted(out.items(), key=lambda e: (len(e[0]), e)):
        if not any(k in phrase for k, _ in kept):
            kept.append((phrase, gate))
    return kept


def _gate_keys(runs: tuple[bytes, ...], shares: Mapping[int, float]) -> set[bytes]:
    """Candidate gates of one pattern: its bytes, and its two-byte strings when all its bytes are common."""
    keys = {bytes([b]) for run in runs for b in run[:-1]}  # the last byte would leave nothing to follow it
    if min(shares.get(k[0], 0.0) for k in keys) > POOLED_SHARE:
        keys.update(run[i : i + 2] for run in runs for i in range(len(run) - 1))
    return keys


def _entries(kept: list[tuple[bytes, bytes]], sample: Sample | None) -> tuple[tuple[bytes, bytes, int], ...]:
    """Where each phrase enters its regex. A two-byte gate: where it occurs. A single-byte gate: at a
    translated gate byte with something after it, chosen so that the bytes that follow are few and rare
    after a gate byte in the sample (the shared regex tries each of them at every stop). Greedy cover of
    the phrases by following byte."""
    pooled = {gate[0] for _, gate in kept if len(gate) == 1}
    table = _table(pooled)
    after = sample.follower_shares(table) if sample is not None else {}
    out = [(phrase, gate, phrase.index(gate)) for phrase, gate in kept if len(gate) == 2]
    singles = [phrase for phrase, gate in kept if len(gate) == 1]
    follows = [{m[i + 1]: i for i in reversed(range(len(m) - 1)) if m[i] == SENTINEL}
               for m in (p.translate(table) for p in singles)]

    def weight(b: int) -> float:
        return after.get(b, 0.0) + (1 + _STATIC_RANK.get(b, 255)) * 1e-6

    chosen: set[int] = set()
    left = [n for n, f in enumerate(follows) if f]
    while left:
        counts: dict[int, int] = {}
        for n in left:
            for b in follows[n]:
                counts[b] = counts.get(b, 0) + 1
        best = max(counts, key=lambda b: counts[b] / weight(b))
        chosen.add(best)
        left = [n for n in left if best not in follows[n]]
    for phrase, f in zip(singles, follows, strict=True):
        usable = [b for b in f if b in chosen]
        at = f[min(usable, key=weight)] if usable else phrase.translate(table).index(SENTINEL)
        out.append((phrase, bytes([phrase[at]]), at))
    return tuple(sorted(out))


def _table(pooled: Iterable[int]) -> bytes:
    gates = set(pooled)
    return bytes(SENTINEL if b in gates else b for b in range(256))


@lru_cache(maxsize=16)
def _compile(entries: tuple[tuple[bytes, bytes, int], ...]) -> Prefilter:
    """The regexes of a plan: one shared regex over the translated region for the single-byte gates (led by
    a look-ahead on the bytes that may follow a gate), one regex per two-byte gate."""
    pooled = {phrase[at] for phrase, gate, at in entries if len(gate) == 1}
    table = _table(pooled) if pooled else None
    shared_trie: dict = {}
    pair_tries: dict[bytes, dict] = {}
    for phrase, gate, at in entries:
        if len(gate) == 1 and table is not None:
            _add(shared_trie, phrase.translate(table), at, 1)
        else:
            _add(pair_tries.setdefault(gate, {}), phrase, at, 2)
    shared = None
    if shared_trie:
        follow = sorted(k for k in shared_trie if k is not None)
        guard = b"(?=[" + b"".join(re.escape(bytes([b])) for b in follow) + b"])" if len(follow) > 2 else b""
        shared = re.compile(re.escape(bytes([SENTINEL])) + (guard if None not in shared_trie else b"")
                            + _trie_regex(shared_trie))
    passes = tuple(re.compile(re.escape(gate) + _trie_regex(trie)) for gate, trie in sorted(pair_tries.items()))
    return Prefilter(table, shared, passes)


def _add(trie: dict, phrase: bytes, at: int, width: int) -> None:
    """Enter `phrase` into the trie of its gate (which starts at `at` and is `width` bytes long)."""
    node = trie
    for b in phrase[at + width :]:
        node = node.setdefault(b, {})
    node.setdefault(None, set()).add(phrase if at else b"")


def _trie_regex(node: dict) -> bytes:
    """Regex for the rest of a phrase trie: children by next byte, leaves as look-behinds (an empty leaf
    matches at once, which makes the rest of the node irrelevant)."""
    leaves = node.get(None, set())
    if b"" in leaves:
        return b""
    alts = [b"(?<=" + re.escape(raw) + b")" for raw in sorted(leaves)]
    alts += [re.escape(bytes([b])) + _trie_regex(child)
             for b, child in sorted((k, v) for k, v in node.items() if k is not None)]
    return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"
