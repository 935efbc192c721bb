"""`doctor collect`: what a user runs, what lands in the file, and what the bundle holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.probes import collect_snapshot
from doctor.snapshot.bundle import safe_member_name
from tests.conftest import SCHEMAS
from tests.fakes import (
    ASCEND_KINDS,
    EXPECTED,
    EXPECTED_SOC,
    FIXTURE_FOR_KIND,
    fake_npu_smi,
    make_ascend_root,
    make_site_packages,
    write,
)


@pytest.fixture(scope="module")
def snapshot_schema(shared_dir: Path) -> dict:
    return json.loads((SCHEMAS / "snapshot.schema.json").read_text())


@pytest.fixture(scope="module")
def report_schema(shared_dir: Path) -> dict:
    return json.loads((SCHEMAS / "report.schema.json").read_text())


def run(args: list[str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str] | None = None):
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    return CliRunner().invoke(cli, ["collect", *args], catch_exceptions=False)


@pytest.mark.parametrize("kind", ASCEND_KINDS)
def test_collect_on_every_fake_root_validates(tmp_path: Path, kind: str, snapshot_schema: dict,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_ascend_root(tmp_path, kind)
    fixture = FIXTURE_FOR_KIND.get(kind)
    bin_dir = tmp_path / "bin"
    if fixture:
        fake_npu_smi(bin_dir, fixture)
    out = tmp_path / "node0.json"
    r = run(["-o", str(out), "--root", str(root)], monkeypatch, {"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, snapshot_schema)
    assert doc["complete"] is True and doc["schema"] == "doctor.snapshot/1"
    asc = doc["ascend"]
    assert asc["toolkit"]["version"] == EXPECTED[kind]["toolkit"]
    assert [p["device_id"] for p in asc["pci"]] == [EXPECTED[kind]["pci"]] * EXPECTED[kind]["pci_count"]
    if fixture:
        assert asc["npu_smi"]["status"] == "ok"
        assert {d["soc"] for d in asc["devices"]} == {EXPECTED_SOC[fixture]}
    else:
        assert asc["npu_smi"]["status"] == "missing" and "devices" not in asc
    assert "pytest" in doc["packages"] and doc["modules"]["torch"]["origins"]
    assert set(doc["collect"]["probes"]) == {"ascend_files", "npu_smi", "hccn", "pci", "python", "env", "system", "network"}


def test_stdout_is_the_snapshot_without_o(tmp_path: Path, snapshot_schema: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    r = run(["--root", str(make_ascend_root(tmp_path, "310p"))], monkeypatch)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, snapshot_schema)
    assert doc["ascend"]["kernels"]["soc"] == "ascend310p"
    assert "collected in" in r.stderr


def test_json_mode_prints_one_report(tmp_path: Path, report_schema: dict, snapshot_schema: dict,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    r = run(["--json"], monkeypatch)
    assert r.exit_code == 0
    rep = json.loads(r.stdout)
    jsonschema.validate(rep, report_schema)
    assert rep["command"] == "collect" and rep["status"] == "ok"
    jsonschema.validate(rep["snapshot"], snapshot_schema)
    out = tmp_path / "s.json"
    r = run(["--json", "-o", str(out)], monkeypatch)
    rep = json.loads(r.stdout)
    assert rep["output"] == str(out) and "snapshot" not in rep
    jsonschema.validate(json.loads(out.read_text()), snapshot_schema)


def test_env_secrets_are_redacted_in_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "s.json"
    r = run(["-o", str(out)], monkeypatch, {"HF_TOKEN": "hf_supersecret", "ASCEBD_RT_VISIBLE_DEVICES": "0,1",
                                            "HF_ENDPOINT": "https://bob:hunter2@mirror.example/hf"})
    assert r.exit_code == 0
    text = out.read_text()
    assert "hf_supersecret" not in text and "hunter2" not in text
    env = json.loads(text)["env"]
    assert env["HF_TOKEN"] == "<redacted>" and env["ASCEBD_RT_VISIBLE_DEVICES"] == "0,1"


def test_a_package_installed_from_a_url_with_credentials_is_redacted(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install git+https://user:TOKEN@git.corp/x.git` records the URL, token included, in direct_url.json: the
    snapshot a user attaches to a bug report (`collect -o`, not only the bundle) carries it as `<redacted>`."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    make_site_packages(site, {"private_pkg": "1.0"}, direct_url={"private_pkg": {
        "url": "https://ci-user:ghp_tok3nSECRET@git.corp/x.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}})
    out = tmp_path / "s.json"
    r = run(["--python", str(venv / "bin" / "python"), "-o", str(out), "--bundle", str(tmp_path / "b.tar.gz")],
            monkeypatch)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "tok3nSECRET" not in text and "ci-user" not in text
    assert json.loads(text)["packages"]["private-pkg"]["url"] == "https://<redacted>@git.corp/x.git"
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                assert b"tok3nSECRET" not in tar.extractfile(m).read(), m.name  # type: ignore[union-attr]


def test_output_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "s.json"
    out.write_text("previous content")
    r = run(["-o", str(out)], monkeypatch)
    assert r.exit_code == 2 and "--overwrite" in r.stderr and out.read_text() == "previous content"
    r = run(["-o", str(out), "--overwrite"], monkeypatch)
    assert r.exit_code == 0
    json.loads(out.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]  # no temp file left behind
    # a target directory that is really a file: exit 2, a message naming the file, nothing written
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    r = run(["-o", str(blocker / "s.json")], monkeypatch)
    assert r.exit_code == 2
    assert f"{blocker / 's.json'}: cannot write the snapshot" in r.stderr
    assert blocker.read_text() == "x"


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(["--root", str(tmp_path / "missing")], monkeypatch).exit_code == 2
    assert run(["--python", str(tmp_path / "missing")], monkeypatch).exit_code == 2
    assert run(["--npu-smi-timeout", "0"], monkeypatch).exit_code == 2
    assert run(["--deep", "--deep-timeout", "0"], monkeypatch).exit_code == 2


@pytest.mark.parametrize("cmd", ["collect", "check"])
def test_ray_with_deep_asks_every_node_for_the_deep_facts_with_their_own_bound(
        cmd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--ray --deep`: each node records the imports and its installed files against RECORD (bounded by
    --deep-timeout, on top of --ray-timeout), then the NPU ping round; before, the nodes did neither and the
    only --deep work was the pings (collect refused the combination)."""
    from doctor.cluster import collect_ray as cr
    from doctor.snapshot.model import cluster_from_dict

    got: dict[str, object] = {}

    def fake(**kw: object):  # type: ignore[no-untyped-def]
        got.update(kw)
        return cluster_from_dict({"schema": "doctor.cluster/1", "nodes": [
            {"node": "n1", "snapshot": None, "error": "timeout: no answer"}]})

    monkeypatch.setattr(cr, "collect_ray", fake)
    r = CliRunner().invoke(cli, [cmd, "--ray", "--deep", "--deep-timeout", "30", "--ray-timeout", "20"],
                           catch_exceptions=False)
    assert r.exit_code != 2, r.stderr
    assert got["deep_timeout"] == 30 and got["reach_timeout"] == 30 and got["timeout"] == 20
    got.clear()
    CliRunner().invoke(cli, [cmd, "--ray"], catch_exceptions=False)
    assert got["deep_timeout"] is None and got["reach_timeout"] is None


@pytest.mark.parametrize("cmd", ["collect", "check"])
def test_ray_without_ray_in_the_doctor_is_the_missing_extra(cmd: str, report_schema: dict,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`--ray` with no Ray in the doctor's interpreter (README's first lines install none) is the `ray` extra
    missing: `extra-not-installed` whose fix is the line that installs it, as for lint's and launch's extra. It was
    `doctor-failed`, whose fix said only "Read the message above". The line pins the cluster's Ray release: it was
    the `ray` extra, whose newest Ray the cluster refuses as a driver ("Version mismatch") unless it runs that one."""
    import doctor.cluster.collect_ray as cc

    monkeypatch.setattr(cc, "_doctor_has_ray", lambda: False)
    r = CliRunner().invoke(cli, ["--json", cmd, "--ray"], catch_exceptions=False)
    assert r.exit_code == 2
    rep = json.loads(r.stdout)
    jsonschema.validate(rep, report_schema)
    (f,) = rep["findings"]
    assert f["id"] == "extra-not-installed"
    assert f"`{sys.executable} -m pip install 'ray==VERSION'`, VERSION being what `ray --version` prints on a node" \
        in f["fix"]["text"], f["fix"]["text"]
    assert "verl-ascend-doctor[ray]" not in f["fix"]["text"] and "--python" in f["fix"]["text"]


def test_failing_target_python_is_exit_2_and_nothing_is_written(tmp_path: Path, report_schema: dict,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bad = write(tmp_path / "python3", "#!/bin/sh\necho 'error while loading shared libraries: libpython3.9.so' >&2\nexit 127\n", mode=0o755)
    out = tmp_path / "s.json"
    r = run(["--json", "-o", str(out), "--python", str(bad)], monkeypatch)
    assert r.exit_code == 2
    rep = json.loads(r.stdout)
    jsonschema.validate(rep, report_schema)
    assert [f["id"] for f in rep["findings"]] == ["usage-error"]
    assert "libpython3.9.so" in rep["findings"][0]["title"] and "--python" in rep["findings"][0]["title"]
    assert not out.exists()


def test_hung_npu_smi_costs_its_timeout_and_is_recorded(tmp_path: Path, snapshot_schema: dict,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npu_smi(tmp_path / "bin", "hang")
    out = tmp_path / "s.json"
    t0 = time.monotonic()
    r = run(["-o", str(out), "--npu-smi-timeout", "1", "--root", str(make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout"))],
            monkeypatch, {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"})
    assert time.monotonic() - t0 < 30  # the fake sleeps 600 s
    assert r.exit_code == 0
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, snapshot_schema)
    assert doc["ascend"]["npu_smi"]["status"] == "timeout"
    assert len(doc["ascend"]["pci"]) == 16  # the chip is still known from PCI
    assert doc["collect"]["probes"]["npu_smi"]["errors"]


def test_bundle_holds_redacted_raw_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")
    fake_npu_smi(tmp_path / "bin", "vllm-ascend-5111")
    # a secret inside a file the probe reads, and in the env
    info = root / "etc/ascend_install.info"
    info.write_text(info.read_text() + "Repo_Password=p@ssw0rd\nMirror=https://alice:s3cret@mirror.example/ascend\n")
    bundle = tmp_path / "bug.tar.gz"
    r = run(["-o", str(tmp_path / "s.json"), "--root", str(root), "--bundle", str(bundle)], monkeypatch,
            {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "VLLM_API_KEY": "sk-live-123"})
    assert r.exit_code == 0, r.output
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        contents = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
        assert all(not n.startswith("/") and ".." not in n.split("/") and n.startswith("doctor-bundle/") for n in names)
        tar.extractall(tmp_path / "x", filter="data")  # the strict filter accepts every member
    for must in ("doctor-bundle/snapshot.json", "doctor-bundle/README.txt", "doctor-bundle/collect.json",
                 "doctor-bundle/python/pip-freeze.txt", "doctor-bundle/env.txt", "doctor-bundle/npu-smi/commands.txt",
                 "doctor-bundle/npu-smi/0-info.stdout.txt", "doctor-bundle/files/etc/ascend_install.info",
                 "doctor-bundle/files/usr/local/Ascend/driver/version.info",
                 "doctor-bundle/files/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info"):
        assert must in names, must
    everything = "\n".join(contents.values())
    for secret in ("p@ssw0rd", "s3cret", "sk-live-123"):
        assert secret not in everything
    assert "Repo_Password=<redacted>" in contents["doctor-bundle/files/etc/ascend_install.info"]
    assert "VLLM_API_KEY=<redacted>" in contents["doctor-bundle/env.txt"]
    assert "| 0       0                 | 16143" in contents["doctor-bundle/npu-smi/0-info.stdout.txt"]
    assert "pytest==" in contents["doctor-bundle/python/pip-freeze.txt"]
    # the target probe's answer as it printed it
    assert json.loads(contents["doctor-bundle/python/probe.json"])["probe"] == "doctor.target-probe/1"
    assert json.loads(contents["doctor-bundle/snapshot.json"]) == json.loads((tmp_path / "s.json").read_text())


@pytest.mark.parametrize(("name", "safe"), [
    ("files/usr/local/x", "doctor-bundle/files/usr/local/x"), ("/etc/passwd", "doctor-bundle/etc/passwd"),
    ("../../evil", "doctor-bundle/evil"), ("a/./b/../c", "doctor-bundle/a/b/c"), ("..", None), ("", None),
])
def test_member_names_cannot_escape(name: str, safe: str | None) -> None:
    assert safe_member_name(name) == safe


def test_collect_snapshot_api(tmp_path: Path) -> None:
    """The entry point other commands (check, the Ray node runner) call."""
    root = make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout")
    fake_npu_smi(tmp_path / "bin", "vllm-ascend-960")
    snap = collect_snapshot(root=str(root), python=sys.executable, npu_smi_timeout=5.0,
                            environ={"PATH": "/usr/bin:/bin", "HOME": "/root", "HCCL_BUFFSIZE": "200"},
                            path=str(tmp_path / "bin"), cwd=str(tmp_path))
    assert snap.is_complete and snap.getenv("HCCL_BUFFSIZE") == "200" and snap.getenv("ASCEND_HOME_PATH") is None
    assert snap.ascend.toolkit.version == "9.1.0" and len(snap.ascend.devices) == 16
    assert snap.ascend.devices[1].chip_index == 1 and snap.ascend.devices[1].phy_id == 1
    assert snap.host.cwd == str(tmp_path)
    assert snap.has_package("pytest") is True and snap.has_package("surely-not-installed-xyz") is False
    from doctor.knowledge.chips import family

    assert family(snap) == "A3"


def test_real_command_never_imports_torch(tmp_path: Path) -> None:
    """End to end through the installed entry point; the doctor process itself imports no heavy module."""
    code = ("import sys, runpy; sys.argv=['doctor','collect','-o',sys.argv[1]]\n"
            "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit as e: code = e.code\n"
            "heavy=[m for m in ('torch','torch_npu','vllm','megatron','mindspeed','transformers','numpy','ray') if m in sys.modules]\n"
            "print('HEAVY=' + ','.join(heavy)); print('CODE=%s' % code)")
    out = tmp_path / "s.json"
    p = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "HEAVY=\n" in p.stdout and "CODE=0" in p.stdout, p.stdout + p.stderr
    assert json.loads(out.read_text())["modules"]["torch"]["origins"]


def test_python_by_name_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.99").symlink_to(sys.executable)
    out = tmp_path / "s.json"
    r = run(["-o", str(out), "--python", "python3.99"], monkeypatch, {"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["collect"]["probes"]["python"]["status"] == "ok"
    r = run(["--python", "python3.98"], monkeypatch)
    assert r.exit_code == 2 and "not found on PATH" in r.output


def test_collect_snapshot_accepts_options(tmp_path: Path) -> None:
    from doctor.probes.host import CollectOptions

    snap = collect_snapshot(CollectOptions(root=str(make_ascend_root(tmp_path, "310p")), path=str(tmp_path), cwd=str(tmp_path)))
    assert snap.ascend.toolkit.version == "8.0.0" and snap.ascend.npu_smi.status == "missing"


def test_collect_records_the_server_model_from_the_roots_dmi_strings(tmp_path: Path, snapshot_schema: dict,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.probes.test_dmi import ATLAS, fake_dmi

    root = fake_dmi(make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout"), ATLAS)
    out = tmp_path / "node0.json"
    r = run(["-o", str(out), "--root", str(root)], monkeypatch)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, snapshot_schema)
    assert doc["host"]["dmi"]["product_name"] == "Atlas 800T A2" and doc["host"]["dmi"]["sys_vendor"] == "Huawei"
    assert "2102314FFF10N1000001" not in out.read_text()


def test_real_token_formats_where_users_keep_them_leave_no_trace_in_the_snapshot_or_bundle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real `collect -o --bundle` with tokens of their vendors' formats in the places a verl host has them: env
    (named and innocent names, Ray's runtime_env JSON with a job's env_vars), ~/.pip/pip.conf and ~/.netrc under
    HOME, the token remote of a source clone on PYTHONPATH, a package installed from a token URL. Huawei Cloud
    AK/SK, GitLab tokens, a JWT and a PEM key survived in the snapshot and in bundle members; what diagnosis reads
    (versions, paths, ASCEND_* / HCCL_* values) must stay as it was."""
    secrets = {"hf": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "ghp": "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ",
               "ghs": "ghs_Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNm", "glpat": "glpat-xT3kPqR9sLmN2vBwY7zA",
               "wandb": "0f3c9a7be1d24c6f8a5b9e0d1c2f3a4b5c6d7e8f", "sk": "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1GfEdCbA0",
               "akia": "AKIAIOSFODNN7EXAMPLE", "aws": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
               "hw_ak": "QTWAOYTTINDUT2QVKYUC", "hw_sk": "MFyfvK41ba2giqM7Uio6PznpdUKGpownRZlmVmHc",
               "redis": "r3d1sP4ssw0rdRay", "pip": "p1pC0nfPassw0rd", "db": "dbS3cr3tPw",
               "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
               "pem": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"}
    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")
    fake_npu_smi(tmp_path / "bin", "vllm-ascend-5111")
    home = tmp_path / "home"
    write(home / ".pip/pip.conf", f"[global]\nindex-url = https://alice:{secrets['pip']}@pypi.corp/simple\n")
    write(home / ".netrc", f"machine api.wandb.ai\n  login user\n  password {secrets['wandb']}\n")
    clone = tmp_path / "src/MindSpeed"
    write(clone / "mindspeed/__init__.py", "")
    for args in (["init", "-q"], ["remote", "add", "origin", f"https://oauth2:{secrets['glpat']}@gitlab.com/c/MindSpeed.git"]):
        subprocess.run(["git", "-C", str(clone), *args], check=True, timeout=60)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    make_site_packages(next((venv / "lib").glob("python*/site-packages")), {"private_pkg": "1.0"}, direct_url={
        "private_pkg": {"url": f"https://x-access-token:{secrets['ghs']}@github.com/c/x.git",
                        "vcs_info": {"vcs": "git", "commit_id": "abc123"}}})
    job_env = {"WANDB_API_KEY": secrets["wandb"], "HUAWEICLOUD_SDK_AK": secrets["hw_ak"],
               "HUAWEICLOUD_SDK_SK": secrets["hw_sk"], "GITLAB_CI_PAT": secrets["glpat"],
               "MLFLOW_TRACKING_URI": f"postgresql://mlflow:{secrets['db']}@db:5432/mlflow"}
    pem = f"-----BEGIN PRIVATE KEY-----\n{secrets['pem']}\n-----END PRIVATE KEY-----"
    kept = {"ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3", "HCCL_CONNECT_TIMEOUT": "1800", "HCCL_IF_IP": "10.0.0.2",
            "HCCL_SOCKET_IFNAME": "eth0", "ASCEND_TOOLKIT_HOME": "/usr/local/Ascend/ascend-toolkit/latest",
            "VLLM_VERSION": "0.9.1", "TASK_QUEUE_ENABLE": "2", "TRANSFORMERS_CACHE": "/data/hf_cache",
            "PYTHONPATH": str(clone)}
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(home), **kept,
           "HF_TOKEN": secrets["hf"], "GITHUB_TOKEN": secrets["ghp"], "WANDB_API_KEY": secrets["wandb"],
           "VLLM_API_KEY": secrets["sk"], "AWS_ACCESS_KEY_ID": secrets["akia"], "AWS_SECRET_ACCESS_KEY": secrets["aws"],
           "HUAWEICLOUD_SDK_AK": secrets["hw_ak"], "HUAWEICLOUD_SDK_SK": secrets["hw_sk"],
           "RAY_REDIS_PASSWORD": secrets["redis"], "PIP_INDEX_URL": f"https://alice:{secrets['pip']}@pypi.corp/simple",
           "RAY_JOB_CONFIG_JSON_ENV_VAR": json.dumps({"runtime_env": {"env_vars": job_env}}),
           "VERL_OBS_AK": secrets["hw_ak"], "VERL_OBS_SK": secrets["hw_sk"], "VLLM_REMOTE_JWT": secrets["jwt"],
           "RAY_GITLAB_REMOTE": secrets["glpat"],
           "VLLM_SIGNING": pem}
    out, bundle = tmp_path / "s.json", tmp_path / "b.tar.gz"
    r = run(["-o", str(out), "--root", str(root), "--python", str(venv / "bin/python"), "--bundle", str(bundle)],
            monkeypatch, env)
    assert r.exit_code == 0, r.output
    texts = {"snapshot": out.read_text(), "report": r.output}
    with tarfile.open(bundle) as tar:
        texts |= {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    leaks = sorted((label, name) for label, secret in secrets.items() for name, text in texts.items()
                   if secret[-12:] in text)
    assert not leaks
    snap_env = json.loads(texts["snapshot"])["env"]
    assert {k: snap_env[k] for k in kept} == kept
    assert snap_env["VERL_OBS_SK"] == snap_env["VLLM_SIGNING"] == snap_env["RAY_GITLAB_REMOTE"] == "<redacted>"


def test_a_probe_error_quoting_a_secret_is_redacted_in_the_snapshot(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A pip.conf line configparser refuses is quoted in the python probe's error, which the snapshot records under
    `collect.probes.python.errors`: `[line 3]: 'token hf_…'` reached the `-o` file as it was (the bundle's copy was
    redacted). Real on an externally managed interpreter (the only one whose pip.conf the probe reads)."""
    from doctor.probes.host import ProbeStatus
    from tests.fakes import externally_managed_python

    hf = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
    assert ProbeStatus("ok", 0.1, [f"pip configuration /p: [line 3]: 'token {hf}'"]).errors == [
        "pip configuration /p: [line 3]: 'token <redacted>'"]
    exe = externally_managed_python()
    if exe is None:
        pytest.skip("/usr/bin/python3 is absent or not externally managed here")
    home = tmp_path / "home"
    write(home / ".pip/pip.conf", f"[global]\nbreak-system-packages = true\ntoken {hf}\n")
    out = tmp_path / "s.json"
    r = run(["-o", str(out), "--python", exe], monkeypatch, {"HOME": str(home)})
    assert r.exit_code == 0, r.output
    errors = json.loads(out.read_text())["collect"]["probes"]["python"]["errors"]
    assert any("[line  3]: 'token <redacted>" in e for e in errors), errors
    assert hf[-12:] not in out.read_text()
