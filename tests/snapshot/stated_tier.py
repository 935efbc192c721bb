"""The real-report tier of `doctor check --from-report`: environment sections of 28 public threads
(tests/fixtures/stated/README.md says which thread and where each excerpt was cut), with the facts a maintainer
reads off each by eye, written down before the reader was first run on them.

`EXPECTED[name]` uses the snapshot keys of doctor.snapshot.stated.Fact; `ascend.devices` is the sorted list of the
chip names the report shows (the checks judge the chip, a cut table's device count means nothing) and
`ascend.npu_smi` the version npu-smi's header states. `HELD_BACK` fixtures are never used to write a reading rule:
their figure is reported apart. `python -m tests.snapshot.stated_tier` prints expected / right / missed / wrong per
fitting
fixture (wrong: read with another value, or read where the report states nothing a maintainer would take);
`--held-back` adds the held-back fixtures' lines and total (read once, at the end).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "stated"

NPU = "ascend.npu_smi"
DEV = "ascend.devices"


def _smi(version: str) -> dict[str, str]:
    return {"status": "ok", "version": version}


def _ce(torch: str, os_: str, libc: str, py: str, arch: str = "aarch64") -> dict[str, Any]:
    """The facts of a collect_env excerpt cut inside its CPU block."""
    return {"packages.torch": torch, "host.os": os_, "host.arch": arch, "host.libc": f"glibc {libc}",
            "python.version": py}


EXPECTED: dict[str, dict[str, Any]] = {
    "vllm-ascend-750.txt": {NPU: _smi("23.0.3"), DEV: ["910B1"]},
    "vllm-ascend-3403.txt": {NPU: _smi("24.1.0"), DEV: ["910B1"]},
    "vllm-ascend-10504.txt": {**_ce("2.9.0+cpu", "Ubuntu 22.04.5 LTS", "2.35", "3.11.14"), DEV: ["910B2"]},
    "vllm-ascend-10525.txt": {**_ce("2.10.0+cpu", "Ubuntu 22.04.5 LTS", "2.35", "3.10.12"), DEV: ["910B4"]},
    "vllm-ascend-380.txt": _ce("2.5.1", "Ubuntu 18.04 LTS", "2.27", "3.10.16"),
    "vllm-ascend-4807.txt": _ce("2.7.1+cpu", "Ubuntu 22.04.5 LTS", "2.35", "3.11.13"),
    "vllm-ascend-17043.txt": {"ascend.toolkit": "9.1.0", "host.arch": "aarch64", "packages.torch": "2.10.0+cpu",
                              "packages.torch-npu": "2.10.0.post4", "packages.vllm": "0.27.1",
                              "packages.vllm-ascend": "0.19.1rc2.dev1908",
                              "packages.mooncake-transfer-engine-npu": "0.3.11"},  # driver "467992": a build number
    "vllm-ascend-117.txt": {"packages.vllm": "0.7.1", "packages.vllm-ascend": "0.7.1rc1", "packages.torch": "2.5.1",
                            "packages.torch-npu": "2.5.1.dev20250218", "python.version": "3.10"},
    "vllm-ascend-2809.txt": {DEV: ["310P3"]},
    "vllm-ascend-3137.txt": {"ascend.toolkit": "8.3.rc1.alpha002", "packages.torch-npu": "2.7.1.dev20250724"},
    "vllm-ascend-5044.txt": _ce("2.7.1+cpu", "Ubuntu 22.04.5 LTS", "2.35", "3.11.13"),
    "vllm-ascend-1886.txt": _ce("2.5.1", "openEuler 22.03 (LTS-SP4)", "2.34", "3.10.17"),
    "llamafactory-6461.txt": {"packages.llamafactory": "0.9.2.dev0", "host.arch": "aarch64", "host.libc": "glibc 2.34",
                              "python.version": "3.8.20", "packages.torch": "2.1.0", "packages.transformers": "4.46.1",
                              "packages.datasets": "3.1.0", "packages.accelerate": "1.0.1", "packages.peft": "0.12.0",
                              "packages.trl": "0.9.6", "packages.deepspeed": "0.15.4",
                              "packages.bitsandbytes": "0.42.0"},
    "llamafactory-4159.txt": {"packages.llamafactory": "0.7.1", "packages.torch": "2.1",
                              "packages.torch-npu": "2.1.0.post3", "ascend.toolkit": "8.0.RC1",
                              "ascend.kernels": "8.0.RC1", "host.arch": "aarch64"},
    "llamafactory-1444.txt": {NPU: _smi("23.0.rc3")},
    "llamafactory-10418.txt": {NPU: _smi("24.1.rc2")},  # image tag latest-npu-a2 states no version
    "llamafactory-6309.txt": {"packages.llamafactory": "0.9.2.dev0", "host.arch": "aarch64", "host.libc": "glibc 2.28",
                              "python.version": "3.10.15", "packages.torch": "2.1.0", "packages.transformers": "4.46.1",
                              "packages.datasets": "3.1.0", "packages.accelerate": "1.0.1", "packages.peft": "0.12.0",
                              "packages.trl": "0.9.6", "ascend.toolkit": "8.0.RC1.alpha001",
                              "packages.deepspeed": "0.14.4", NPU: _smi("24.1.rc2"), DEV: ["910B4"],
                              "ascend.chip": "Ascend910B4"},  # `- NPU type:` (read since the tier's first run)
    "llamafactory-5189.txt": {"ascend.toolkit": "8.0.RC2", "host.arch": "aarch64"},
    "vllm-ascend-2035.txt": {NPU: _smi("24.1.rc3.7"), DEV: ["Ascend910"]},
    "vllm-ascend-12980.txt": {NPU: _smi("26.0.rc2"), DEV: ["Ascend910"]},
    "vllm-ascend-1778.txt": {
        "env.LD_LIBRARY_PATH": (FIX / "vllm-ascend-1778.txt").read_text().split("\n")[1].partition("=")[2]
        + (FIX / "vllm-ascend-1778.txt").read_text().split("\n")[2],  # the terminal wrapped it over two lines
        "env.ASCEND_AICPU_PATH": "/usr/local/Ascend/ascend-toolkit/latest", "env.ATB_OPSRUNNER_KERNEL_CACHE_TYPE": "3",
        "env.ATB_RUNNER_POOL_SIZE": "64", "env.ATB_STREAM_SYNC_EVERY_OPERATION_ENABLE": "0",
        "env.ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest"},
    "vllm-ascend-3190.txt": {"packages.vllm-ascend": "0.10.2rc1", "ascend.driver": "24.1.0.3",
                             "ascend.firmware": "7.5.0.5.220"},
    "verl-5468.txt": {"packages.verl": "0.8.0.dev0", "ascend.toolkit": "8.3.RC1", "packages.torch": "2.7.1",
                      "packages.triton-ascend": "3.2.0rc4", "packages.vllm": "0.11.0+empty",
                      "packages.vllm-ascend": "0.11.0rc1"},
    "verl-332.txt": {"packages.torch": "2.5.1", "packages.torch-npu": "2.5.1.dev20250320",
                     "packages.verl": "0.2.0.dev0", "packages.vllm": "0.7.1+empty",
                     "packages.vllm-ascend": "0.7.1rc2.dev0+gf17417f.d20250421", "ascend.toolkit": "8.0.0"},
    "verl-6756.txt": {NPU: _smi("26.0.rc1"), DEV: ["910B3"]},
    "ascend-pytorch-14.txt": {"python.version": "3.9.18", "packages.torch": "2.1.0", "packages.torch-npu": "2.1.0.rc1",
                              "host.arch": "aarch64", "ascend.toolkit": "7.0.RC1", DEV: ["910B3"]},
    "vllm-ascend-4376.txt": _ce("2.7.1+cpu", "Ubuntu 22.04.5 LTS", "2.35", "3.11.13"),
    "vllm-ascend-6134.txt": {},  # torch==2.8.0 was in an earlier env; the failing one "has no package installed"
}

# a second set, taken after the fixes the first run showed (in search order, same rules) and written down before
# the reader ran on it: the figure of forms no rule was written from
AFTER: dict[str, dict[str, Any]] = {
    "vllm-ascend-3133.txt": {
        "env.ASCEND_OPP_PATH": "/usr/local/Ascend/ascend-toolkit/latest/opp",
        "env.LD_LIBRARY_PATH": (FIX / "vllm-ascend-3133.txt").read_text().split("\n")[2].partition("=")[2],
        "env.ASCEND_AICPU_PATH": "/usr/local/Ascend/ascend-toolkit/latest", "env.ATB_OPSRUNNER_KERNEL_CACHE_TYPE": "3",
        "env.ATB_RUNNER_POOL_SIZE": "64", "env.ATB_STREAM_SYNC_EVERY_OPERATION_ENABLE": "0",
        "env.ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest",
        "env.ASCEND_AUTOML_PATH": "/usr/local/Ascend/ascend-toolkit/latest/tools"},
    "ms-swift-1243.txt": {"ascend.toolkit": "7.0.0beta1", "packages.transformers": "4.41.2",
                          "packages.ms-swift": "2.2.0.dev0", "packages.torch": "2.3.1", "packages.torch-npu": "2.2.0",
                          "env.ASCEND_RT_VISIBLE_DEVICES": "1"},  # set on the failing `swift sft` run itself
    "ascend-pytorch-10.txt": {"ascend.firmware": "6.4.12.1.241", NPU: _smi("23.0.rc2")},
    "ms-swift-3594.txt": {"ascend.driver": "24.1.0.3", "ascend.toolkit": "8.1.RC1", "packages.torch": "2.5.1",
                          "packages.torch-npu": "2.5.1.dev20250228", "packages.vllm": "0.7.3+empty",
                          "packages.vllm-ascend": "0.7.3rc1", "packages.ms-swift": "3.2.1"},
    "ms-swift-7881.txt": {"env.ASCEND_RT_VISIBLE_DEVICES": "6,7"},  # set on the failing `megatron sft` run
}

# every fifth fixture in the order the searches returned them: never used to write a rule
HELD_BACK = frozenset({"vllm-ascend-380.txt", "vllm-ascend-3137.txt", "llamafactory-1444.txt",
                       "vllm-ascend-12980.txt", "verl-6756.txt"})


def _agree(want: Any, got: Any) -> bool:
    from doctor.snapshot.stated import _same

    return _same(want, got)


def score(name: str) -> dict[str, Any]:
    """right / missed / wrong keys of one fixture (a key read that the maintainer does not read is wrong)."""
    from doctor.snapshot.stated import read_stated

    want = {**EXPECTED, **AFTER}[name]
    s = read_stated((FIX / name).read_text())
    got: dict[str, Any] = {}
    for f in s.facts:
        got[f.key] = sorted({str(d.get("chip")) for d in f.value if d.get("chip")}) if f.key == DEV else f.value
    right = [k for k in want if k in got and _agree(want[k], got[k])]
    missed = [k for k in want if k not in got]
    wrong = [k for k in want if k in got and not _agree(want[k], got[k])] + [k for k in got if k not in want]
    return {"expected": len(want), "right": right, "missed": missed, "wrong": wrong, "got": got,
            "conflicts": [c[0].key for c in s.conflicts]}


def totals(names: list[str]) -> tuple[int, int, int, int]:
    e = r = m = w = 0
    for n in names:
        sc = score(n)
        e, r, m, w = e + sc["expected"], r + len(sc["right"]), m + len(sc["missed"]), w + len(sc["wrong"])
    return e, r, m, w


def main(argv: list[str]) -> int:
    verbose, show_held = "-v" in argv, "--held-back" in argv
    fit = [n for n in EXPECTED if n not in HELD_BACK]
    for n in EXPECTED:
        if n in HELD_BACK and not show_held:
            continue
        sc = score(n)
        tag = " (held back)" if n in HELD_BACK else ""
        print(f"{n}{tag}: expected {sc['expected']} right {len(sc['right'])} missed {len(sc['missed'])} "
              f"wrong {len(sc['wrong'])}")
        if verbose and n not in HELD_BACK:
            for k in sc["missed"]:
                print(f"    missed {k} = {EXPECTED[n][k]!r}")
            for k in sc["wrong"]:
                print(f"    wrong  {k}: read {sc['got'].get(k)!r}, stated {EXPECTED[n].get(k)!r}")
            if sc["conflicts"]:
                print(f"    conflicts {sc['conflicts']}")
    for label, names in (("fitting", fit), ("held back", sorted(HELD_BACK) if show_held else [])):
        if not names:
            continue
        e, r, m, w = totals(names)
        print(f"{label}: {len(names)} reports, facts expected {e} / right {r} / missed {m} / wrong {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
