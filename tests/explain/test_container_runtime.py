"""Ascend Docker Runtime's prestart hook refusing a host file it bind-mounts into the container (MindCluster's
ascend-docker-cli: u_mount.c prints `failed to mount src: PATH.` when utils.c's CheckExternalFile rejects the path, after
`Please check the write permission!` for a path or parent writable by others / the group)."""

from __future__ import annotations

from doctor.explain.stream import explain_lines

# gpustack deploying a model in a container (https://github.com/gpustack/gpustack/issues/4299), as the issue quotes it.
GPUSTACK = [
    "2026-01-19 10:06:41.774455+08:00 - 250580 - gpustack_runtime.deployer.docker - WARNING - Mirrored deployment "
    "enabled, but no Container name set, using hostname(deploy.bocloud.k8s) instead",
    "2026-01-19 10:06:44.248620+08:00 - gpustack.worker.serve_manager - ERROR - Error provisioning model instance "
    "bge-m3-Zgj7o: Failed to create workload bge-m3-Zgj7o: Docker Server Error: failed to create task for container: "
    "failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: "
    "error during container init: error running prestart hook #0: exit status 255, stdout: , stderr: runc start "
    "prestart-hook ...verify parameters valid and parse runtime optionssetup container config ...prepare necessary "
    "configenter container's mount namespacedo mountingPlease check the write permission!",
    "failed to mount src: /usr/local/bin/npu-smi.failed to mount dev.failed to do file mounting for.failed to mount "
    "files.failed to do mounting.failed to setup container.: unknown",
]

# docker-compose starting an NPU container (https://github.com/google-deepmind/alphafold/issues/1073), as quoted.
COMPOSE = [
    "[root@bogon engine-service]# docker-compose up -d",
    "Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create "
    "failed: runc create failed: unable to start container process: error during container init: error running "
    "prestart hook #0: exit status 255, stdout: , stderr: runc start prestart-hook ...verify parameters valid and parse "
    "runtime optionssetup container config ...prepare necessary configenter container's mount namespacedo "
    "mountingPlease check the write permission!",
    "failed to mount src: /usr/local/bin/npu-smi.failed to mount dev.failed to do file mounting for.failed to mount "
    "files.failed to do mounting.failed to setup container.: unknown",
]


def _errors(lines: list[str]) -> list:
    return [f for f in explain_lines(lines) if f.severity.value == "error"]


def test_the_runtime_refusing_a_file_others_can_write_names_the_permission_and_the_path():
    for lines in (GPUSTACK, COMPOSE):
        found = _errors(lines)
        assert [f.id for f in found] == ["ascend-docker-mount-writable"], [(f.id, f.components) for f in found]
        f = found[0]
        assert f.components == ("system", "cluster")
        assert "/usr/local/bin/npu-smi" in f.evidence["text"] and "chmod go-w" in f.fix.text


def test_the_refusal_without_its_reason_line_is_the_general_finding():
    found = _errors([GPUSTACK[-1]])
    assert [f.id for f in found] == ["ascend-docker-mount-refused"], [f.id for f in found]
    assert "symbolic link" in found[0].detail


def test_other_programs_mount_failures_are_not_the_runtimes():
    for line in ("failed to mount src nfs server: mount failed: exit status 32",
                 "failed to mount src: (2) No such file or directory"):
        assert not any(f.id.startswith("ascend-docker-") for f in explain_lines([line])), line
