"""What a script's branch choices say of the device a path runs on, read from what the shell walker records at each
choice (`Choice.said`: the value tested and the words or patterns it matched or did not), never from the label's
text. Lint uses it three ways: to judge a path's rules as an NPU or a GPU run, to leave out with `--target` the paths
another device takes, and — handed to the walker — to keep apart the paths whose device differs (two arms that reach
the same state would otherwise be merged into one path labelled with the choices they share, and the device lost)
and to follow both sides of a test that compares a default the script's user overrides (`DEVICE=${DEVICE:-gpu}`,
`[ "${DEVICE:-gpu}" = gpu ]`) with a device name: the device is the user's choice, not the script's constant.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.launch.shell.expand import glob_match
from doctor.launch.shell.world import Choice, Said

_NPU_NAMES, _OTHER_NAMES = ("npu", "ascend"), ("gpu", "cuda", "nvidia")


def names_device(said: Said) -> bool | None:
    """Whether a value that `said` holds for names an NPU (True), names another device or not an NPU (False), or says
    nothing of the device (None): `npu)`, `[[ $X == npu* ]]` true: an NPU; `gpu|cuda)`, `[ "$X" = gpu ]` true: another
    device; `[ "$X" = npu ]` false, `!= npu` true, an arm after `npu)` (`*)`): not an NPU (`= gpu` false says only
    "not a GPU": nothing)."""
    pats = [p.lower() for p in said.patterns]
    npu = any(glob_match(n, p) for n in _NPU_NAMES for p in pats)
    other = any(glob_match(n, p) for n in _OTHER_NAMES for p in pats)
    if said.matches:
        return True if npu and not other else False if other and not npu else None
    return False if npu else None


def device_branch(label: tuple[str, ...]) -> tuple[bool, str] | None:
    """(whether the path runs on NPUs, the choice that says it) when one of its branch choices tests a value against
    device names (`case` arms with `|` and patterns, the arms before the one taken, `[ … = … ]`, `[[ … == npu* ]]`,
    `test`, `!=`, `elif`). verl v0.9.0's run_qwen3_235b_a22b_megatron.sh takes `case "${DEVICE}" in gpu) … npu) …`;
    its GPU paths were judged as NPU runs ("64 NPUs are not divisible …"). A choice that says "not an NPU" decides (an
    NPU run does not take that path; the last such choice is named), else one that says "an NPU"."""
    said: tuple[bool, str] | None = None
    for choice in label:
        for s in choice.said if isinstance(choice, Choice) else ():
            npu = names_device(s)
            if npu is False or (npu and said is None):
                said = (npu, choice)
    return said


def device_of(label: tuple[str, ...]) -> bool | None:
    """The device a path's choices say (True: an NPU, False: not one, None: nothing): the walker merges two paths only
    where this is the same for both and for the choices they share."""
    said = device_branch(label)
    return None if said is None else said[0]


def compares_device(said: tuple[Said, ...]) -> bool:
    """Whether a test compares a value with a device name (`= gpu`, `npu)`, `== npu*`; not `*)`, which any value
    matches, nor `gpu|npu)`): where that value is a default the environment may replace, which device runs is the
    user's to choose, so both sides are followed."""
    return any(names_device(replace(s, matches=True)) is not None for s in said)


def gpu_by_default(label: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """(the choice, the variables) when the choice that makes a path another device's than an NPU is the side a default
    of the script takes for variables it leaves to the environment (`Choice.defaulted`): verl main's
    tests/special_e2e/run_v1_separate_async.sh runs under uv with CUDA extras when `[ "${DEVICE:-gpu}" = gpu ]`, and
    its Ascend wrapper sets no DEVICE, so an NPU run takes that side unless its job exports DEVICE. None otherwise
    (a probe such as verl's `$(python3 -c 'import torch_npu' …)` decides by the host: no default is taken)."""
    said = device_branch(label)
    if said is None or said[0] is not False:
        return None
    names = getattr(said[1], "defaulted", ())
    return (said[1], names) if names else None


def npu_settings(choice: str, labels: list[tuple[str, ...]]) -> list[str]:
    """What an NPU run's job sets to keep off `choice`, a side a default took (gpu_by_default): the first variable the
    default read, with the word the script's NPU side names where one does (`npu)`, `= npu` true, on any path's
    `labels`), else `npu`; the other variables; and each guard the same `&&` list tests (`Choice.guards`: verl main's
    VERL_USE_UV=0 beside `[ "${DEVICE:-gpu}" = gpu ]`)."""
    names = list(getattr(choice, "defaulted", ()))
    words = [p for label in labels for c in label for s in getattr(c, "said", ()) if s.matches and names_device(s)
             for p in s.patterns if p.lower() in _NPU_NAMES]
    guards = [f"{k}={v}" for k, v in getattr(choice, "guards", ()) if k not in names]
    return [f"{names[0]}={words[0] if words else 'npu'}", *names[1:], *guards] if names else guards
