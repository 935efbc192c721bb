"""Host limits judged by what Ray reads: the open-files limit (ray.init's raise and its 4096 warning) and the free
space of Ray's temp dir (local_fs_capacity_threshold). Each rule is silent when its fact is unknown."""

from __future__ import annotations

from typing import Any

from doctor.checks.limits import open_files_limit, ray_reachable_nofile, ray_temp_disk
from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict


def _run(fn: Any, doc: dict[str, Any]) -> list[Any] | str:
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **doc})
    try:
        return list(fn(CheckContext(snapshot=snap)))
    except Skipped as e:
        return f"skip: {e.reason}"


def test_ray_init_raises_the_soft_limit_toward_the_hard_one():
    assert ray_reachable_nofile(1024, 524288) == 65536  # capped at 65536
    assert ray_reachable_nofile(1024, 2048) == 2048
    assert ray_reachable_nofile(1024, 1024) == 1024
    assert ray_reachable_nofile(100000, 200000) == 100000  # never lowered
    assert ray_reachable_nofile(1024, None) == 65536 and ray_reachable_nofile(None, None) is None


def test_a_hard_limit_below_4096_is_a_warning_with_the_numbers_and_the_fix():
    (f,) = _run(open_files_limit, {"host": {"limits": {"nofile_soft": 1024, "nofile_hard": 1024},
                                            "in_container": True}})
    assert f.id == "nofile-limit-low" and f.severity.value == "warning" and f.components == ("system", "ray")
    assert "1024" in f.title and "4096" in f.title
    assert f.fix.commands == ("ulimit -n 65536",) and "--ulimit nofile=65536:65536" in f.fix.text
    assert f.evidence == {"nofile_soft": "1024", "nofile_hard": "1024", "ray_init_raises_to": "1024"}
    assert "ray-2.60.0/python/ray/_private/worker.py" in f.source and "worker_pool.cc" in f.source
    (f,) = _run(open_files_limit, {"host": {"limits": {"nofile_soft": 1024, "nofile_hard": 2048}}})
    assert f.id == "nofile-limit-low" and "2048" in f.title and "docker" not in f.fix.text


def test_a_low_soft_limit_ray_init_can_raise_is_info_for_ray_start():
    (f,) = _run(open_files_limit, {"host": {"limits": {"nofile_soft": 1024, "nofile_hard": 524288}}})
    assert f.id == "nofile-soft-limit-low" and f.severity.value == "info"
    assert "1024" in f.title and "65536" in f.title and "ray start" in f.title
    assert f.fix.commands == ("ulimit -Sn 65536",)  # the soft limit only: the hard one allows it without root
    (f,) = _run(open_files_limit, {"host": {"limits": {"nofile_soft": 1024, "nofile_hard": 20000}}})
    assert "raises it to 20000" in f.title and f.fix.commands == ("ulimit -Sn 20000",)
    # a report that states only `ulimit -n 1024`: the hard limit and so ray.init's raise are not known
    (f,) = _run(open_files_limit, {"host": {"limits": {"nofile_soft": 1024}}})
    assert f.id == "nofile-soft-limit-low" and f.evidence["nofile_hard"] == "not known"
    assert f.fix.commands == ("ulimit -Sn $(ulimit -Hn)",)


def test_enough_or_unlimited_or_unknown_or_no_ray_is_silent():
    assert _run(open_files_limit, {"host": {"limits": {"nofile_soft": 4096, "nofile_hard": 4096}}}) == []
    assert _run(open_files_limit, {"host": {"limits": {"nofile_soft": None, "nofile_hard": None}}}) == []
    assert _run(open_files_limit, {"host": {"limits": {"nofile_soft": 65536, "nofile_hard": 1048576}}}) == []
    assert _run(open_files_limit, {"host": {"cpu_count": 8}}).startswith("skip:")  # an older snapshot
    assert _run(open_files_limit, {}).startswith("skip:")
    assert _run(open_files_limit, {"host": {"limits": {"nproc_soft": 100}}}).startswith("skip:")
    no_ray = {"complete": True, "packages": {"torch": {"version": "2.5.1"}},
              "host": {"limits": {"nofile_soft": 1024, "nofile_hard": 1024}}}
    assert _run(open_files_limit, no_ray) == []


def _disk(used: float, roles: list[str], path: str = "/tmp") -> dict[str, Any]:
    return {"path": path, "paths": [path], "roles": roles, "total_gb": 100.0, "free_gb": round(100 * (1 - used), 2),
            "used_fraction": used}


def test_rays_temp_dir_over_the_threshold_is_an_error():
    (f,) = _run(ray_temp_disk, {"host": {"disks": [_disk(0.96, ["ray_temp", "tmp"]), _disk(0.99, ["cwd"], "/w")]}})
    assert f.id == "ray-tmp-disk-full" and f.severity.value == "error" and f.components == ("system", "ray")
    assert "/tmp" in f.title and "96%" in f.title and "4.0 GB free of 100.0 GB" in f.title and "0.95" in f.title
    assert any("--temp-dir=" in c for c in f.fix.commands) and "OutOfDiskError" in f.detail
    assert f.evidence["threshold"] == 0.95 and f.evidence["used_fraction"] == 0.96
    assert "ray-2.60.0/src/ray/common/ray_config_def.h" in f.source
    # exactly at the threshold counts: Ray's test is `used < threshold` for "not over"
    assert [x.id for x in _run(ray_temp_disk, {"host": {"disks": [_disk(0.95, ["ray_temp"])]}})] == ["ray-tmp-disk-full"]


def test_below_the_threshold_or_another_disk_full_is_silent():
    assert _run(ray_temp_disk, {"host": {"disks": [_disk(0.94, ["ray_temp"]), _disk(0.99, ["cwd"], "/w")]}}) == []


def test_the_threshold_and_the_spill_directory_come_from_rays_environment_variables():
    doc: dict[str, Any] = {"host": {"disks": [_disk(0.90, ["ray_temp"])]}, "env": {"PATH": "/bin",
                                                                                "RAY_local_fs_capacity_threshold": "0.8"}}
    (f,) = _run(ray_temp_disk, doc)
    assert "(0.8)" in f.title and f.evidence["threshold"] == 0.8 and "over 80% full" in f.detail
    doc["env"]["RAY_local_fs_capacity_threshold"] = "1"  # >= 1 turns Ray's monitor off
    assert _run(ray_temp_disk, doc) == []
    # with an object spilling directory set, Ray watches that one: the temp dir's fullness is not the question
    doc = {"host": {"disks": [_disk(0.99, ["ray_temp"]), _disk(0.5, ["ray_spill"], "/data/spill")]},
           "env": {"PATH": "/bin", "RAY_object_spilling_directory": "/data/spill"}}
    assert _run(ray_temp_disk, doc) == []
    doc["host"]["disks"][1]["used_fraction"] = 0.97
    (f,) = _run(ray_temp_disk, doc)
    assert "/data/spill" in f.title and "spilling directory" in f.title


def test_disks_unknown_or_no_ray_is_silent():
    assert _run(ray_temp_disk, {"host": {"cwd": "/w"}}).startswith("skip:")
    assert _run(ray_temp_disk, {"host": {"disks": [_disk(0.99, ["cwd"])]}}).startswith("skip:")
    no_ray = {"complete": True, "packages": {"torch": {"version": "2.5.1"}}, "host": {"disks": [_disk(0.99, ["ray_temp"])]}}
    assert _run(ray_temp_disk, no_ray) == []


def _ray_temp(**kw: Any) -> dict[str, Any]:
    fact = {"path": "/tmp/ray", "checked": "/tmp/ray", "uid": 1001, "owner_uid": 1000, "mode": "0755",
            "writable": False, **kw}
    return {"host": {"ray_temp": fact}}


def test_another_users_ray_temp_dir_is_an_error_naming_owner_and_fix():
    from doctor.checks.limits import ray_temp_writable

    (f,) = _run(ray_temp_writable, _ray_temp())
    assert f.id == "ray-temp-dir-not-writable" and f.severity.value == "error" and f.components == ("system", "ray")
    assert "/tmp/ray" in f.title and "uid 1001" in f.title and "uid 1000" in f.title and "0755" in f.title
    assert f.fix.commands == ('export RAY_TMPDIR="/tmp/ray-$(id -u)"',)
    assert "https://github.com/ray-project/ray/issues/3899" in f.source
    assert f.evidence["writable"] is False


def test_a_ray_temp_dir_that_is_not_there_names_where_it_would_be_made():
    from doctor.checks.limits import ray_temp_writable

    (f,) = _run(ray_temp_writable, _ray_temp(path="/scratch/tmp/ray", checked="/", owner_uid=0))
    assert "/scratch/tmp/ray does not exist" in f.title and "under /" in f.title
    assert "TMPDIR" in f.detail


def test_a_writable_or_unknown_ray_temp_dir_or_no_ray_is_silent():
    from doctor.checks.limits import ray_temp_writable

    assert _run(ray_temp_writable, _ray_temp(writable=True)) == []
    assert _run(ray_temp_writable, {"host": {"cpu_count": 8}}).startswith("skip:")  # older snapshot, root prefix
    assert _run(ray_temp_writable, {"host": {"ray_temp": {"path": "/tmp/ray"}}}).startswith("skip:")
    no_ray = {**_ray_temp(), "complete": True, "packages": {"verl": {"version": "0.7.1"}}}
    assert _run(ray_temp_writable, no_ray) == []
