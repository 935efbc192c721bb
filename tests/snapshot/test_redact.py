"""Redaction of env values, bundle files and pip freeze lines."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from doctor.snapshot.redact import (
    REDACTED,
    is_secret_name,
    redact_line,
    redact_text,
    redact_url_credentials,
    redact_value,
)


def test_secret_names() -> None:
    for n in ("HF_TOKEN", "aws_secret_access_key", "DB_PASSWORD", "API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "AUTH_HEADER"):
        assert is_secret_name(n)
    assert not is_secret_name("ASCEND_HOME_PATH")


def test_pw_as_a_name_part_is_a_secret_but_the_shells_working_directories_are_paths() -> None:
    # trial item 12: HCCL_PW (an allow-listed prefix) was captured unredacted
    for n in ("HCCL_PW", "hccl_pw", "PW_FILE", "MYSQL_PWD", "DB_PWD", "ASCEND.PW", "X-PW-Y"):
        assert is_secret_name(n), n
    for n in ("PWD", "OLDPWD", "pwd", "HCCL_POWER", "NPU_PWR_LIMIT", "PWDIR_X", "MPWD", "HCCL_IF_IP"):
        assert not is_secret_name(n), n
    out = redact_text("PWD=/home/me/run\nOLDPWD=/home/me\nHCCL_PW=hunter2\nexport DB_PWD=s3cr3t\n")
    assert "PWD=/home/me/run" in out and "OLDPWD=/home/me" in out
    assert "hunter2" not in out and "s3cr3t" not in out and "HCCL_PW=<redacted>" in out


def test_collected_env_redacts_hccl_pw() -> None:
    from doctor.probes.envvars import collect_env

    env = collect_env({"HCCL_PW": "hunter2", "HCCL_IF_IP": "10.0.0.1", "PWD": "/home/me", "PATH": "/bin"})
    assert env["HCCL_PW"] == REDACTED and env["HCCL_IF_IP"] == "10.0.0.1"
    assert env.get("PWD", "/home/me") == "/home/me"


def test_url_credentials() -> None:
    assert redact_url_credentials("https://user:pass@host/simple") == f"https://{REDACTED}@host/simple"
    assert redact_url_credentials("mb @ git+https://ghp_x@github.com/a/b.git@abc") == f"mb @ git+https://{REDACTED}@github.com/a/b.git@abc"
    assert redact_url_credentials("file:///src/verl") == "file:///src/verl"
    assert redact_url_credentials("user@host") == "user@host"


def test_values_and_text() -> None:
    assert redact_value("HF_TOKEN", "x") == REDACTED
    assert redact_value("PIP_INDEX_URL", "https://a:b@h/") == f"https://{REDACTED}@h/"
    text = "export HF_TOKEN=abc\nVersion=1\nSECRET: s3\nPATH=/bin\nurl=https://a:b@h\n"
    out = redact_text(text)
    assert "abc" not in out and "s3" not in out and "a:b@" not in out
    assert "Version=1" in out and "PATH=/bin" in out and "export HF_TOKEN=<redacted>" in out


def test_secrets_inside_a_collected_value_are_redacted() -> None:
    # Ray's job supervisor sets this in the driver's environment: the job's runtime_env, as `ray job submit
    # --runtime-env-json` passed it, env_vars and all (ray/dashboard/modules/job/job_supervisor.py)
    from doctor.probes.envvars import collect_env

    job = ('{"runtime_env": {"env_vars": {"WANDB_API_KEY": "0123456789abcdef0123", "HF_TOKEN": "hf_secret", '
           '"TOKENIZERS_PARALLELISM": "true"}, "working_dir": "/data/verl"}, "metadata": {}}')
    env = collect_env({"RAY_JOB_CONFIG_JSON_ENV_VAR": job, "VLLM_EXTRA": "--api-key=sk-abc123 --port 8000",
                       "PATH": "/opt/run_token:/usr/bin", "LD_LIBRARY_PATH": "/x/auth_key:/usr/lib",
                       "ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest"})
    got = env["RAY_JOB_CONFIG_JSON_ENV_VAR"]
    assert "0123456789abcdef0123" not in got and "hf_secret" not in got
    assert '"TOKENIZERS_PARALLELISM": "true"' in got and '"working_dir": "/data/verl"' in got
    assert env["VLLM_EXTRA"] == f"--api-key={REDACTED} --port 8000"
    # search paths keep their directories (`dir_token:/usr/bin` is not a key and its value)
    assert env["PATH"] == "/opt/run_token:/usr/bin" and env["LD_LIBRARY_PATH"] == "/x/auth_key:/usr/lib"
    assert env["ASCEND_HOME_PATH"] == "/usr/local/Ascend/ascend-toolkit/latest"


@given(st.text())
def test_redaction_never_raises_and_is_idempotent(s: str) -> None:
    once = redact_text(s)
    assert redact_text(once) == once


def test_secret_query_parameters_and_bearer_values_are_redacted() -> None:
    """Real collect on this host with HF_ENDPOINT='https://hf-mirror.example/?access_token=…', a pre-signed
    ASCEND_…_URL (`sig=`, `X-Amz-Signature=`) and VLLM_…='Authorization: Bearer …' kept every token: only URL
    userinfo and secret-named variables were redacted."""
    from doctor.probes.envvars import collect_env

    env = collect_env({"HF_ENDPOINT": "https://hf-mirror.example/?access_token=QtokQ1&rev=main",
                       "VLLM_API_BASE": "https://x.example/v1?api_key=QtokQ2",
                       "ASCEND_CUSTOM_URL": "https://u.example/p?sig=QtokQ4&X-Amz-Signature=QtokQ5&X-Amz-Date=20261205",
                       "VLLM_HTTP_HEADERS": "Authorization: Bearer QtokQ6",
                       "VLLM_PLAIN": "https://x.example/v1?page=2&sort=asc", "PATH": "/bin"})
    assert not any("Qtok" in v for v in env.values()), env
    assert env["HF_ENDPOINT"] == f"https://hf-mirror.example/?access_token={REDACTED}&rev=main"
    assert env["ASCEND_CUSTOM_URL"].endswith("&X-Amz-Date=20261205")
    assert env["VLLM_HTTP_HEADERS"] == f"Authorization: Bearer {REDACTED}"
    assert env["VLLM_PLAIN"] == "https://x.example/v1?page=2&sort=asc"  # no secret word: kept
    assert "QtokQ7" not in redact_text("MODEL_URL=https://s3.example/m.bin?X-Amz-Credential=QtokQ7\n")
    assert redact_url_credentials("see https://host/a?b=c for details") == "see https://host/a?b=c for details"
    assert redact_text("Basic usage: run it\n") == "Basic usage: run it\n"  # prose, not a credential
    # the scheme is case-insensitive (RFC 9110): a lower-case header line is a credential too
    assert "dXNlcjpwYXNzd29yZA" not in redact_text("curl -H 'authorization: basic dXNlcjpwYXNzd29yZA==' https://x\n")
    assert "QtokQ8" not in redact_text("hdr=token QtokQ8abcdef\n")


def test_a_log_line_loses_its_secrets_and_keeps_the_rest() -> None:
    """What `explain` quotes: a secret-named variable anywhere in the line, a hub token by its shape, URL
    credentials; not a class name (KeyError), TOKENIZERS_PARALLELISM, max_tokens or prose ('cache key: ...')."""
    hf = "hf_" + "a1B2" * 9
    assert redact_line(f"export HF_TOKEN={hf}") == f"export HF_TOKEN={REDACTED}"
    assert redact_line("env={'HF_TOKEN': 'abc123', 'PATH': '/usr/bin'}") == f"env={{'HF_TOKEN': '{REDACTED}', 'PATH': '/usr/bin'}}"
    assert redact_line(f"huggingface-cli login --token {hf} failed") == f"huggingface-cli login --token {REDACTED} failed"
    assert redact_line("aws_secret_access_key = wJalrXUtnFEMI") == f"aws_secret_access_key = {REDACTED}"
    assert redact_line("git clone https://me:ghp_x@github.com/a/b") == f"git clone https://{REDACTED}@github.com/a/b"
    for kept in ("KeyError: 'model.layers.0.mlp'", "TOKENIZERS_PARALLELISM=false max_tokens: 100", "cache key: abc",
                 "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "time=12:30:01 level=ERROR"):
        assert redact_line(kept) == kept


@given(st.text(max_size=200))
def test_redact_line_never_grows_a_secret_back_and_is_stable(text: str) -> None:
    once = redact_line(text)
    assert redact_line(once) == once


def test_a_secret_named_option_on_a_logged_command_line_is_redacted() -> None:
    line = "vllm serve /m --api-key sk-abc123 --max-num-batched-tokens 8192 --tokenizer-mode auto --hf-token='a b'"
    assert redact_line(line) == ("vllm serve /m --api-key <redacted> --max-num-batched-tokens 8192 "
                                 "--tokenizer-mode auto --hf-token=<redacted>")
    # the next option is not a value, and an option that is not secret-named keeps its value
    assert redact_line("--disable-auth --port 8000") == "--disable-auth --port 8000"


# Tokens of the shapes their issuers document (examples: AWS's own documented key id, jwt.io's sample token; the rest
# made to the documented prefix and length), under names that say nothing: a runtime_env JSON, a bundle file.
ISSUED = {
    "gitlab personal": "glpat-xT3kPqR9sLmN2vBwY7zA",
    "gitlab routable": "glpat-0123456789abcdefABCDEF_-0123.01.1a2b3c4d5",
    "gitlab deploy": "gldt-Zy9Xw8Vu7Ts6Rq5Po4Nm",
    "gitlab runner registration": "GR1348941PQrAlrwIUScCvc8l6dWY",
    "hugging face org": "api_org_" + "kLmNoPqRsTuVwXyZaBcDeFgHiJkLmNoPqR",
    "aws temporary": "ASIAIOSFODNN7EXAMPLE",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


def test_issued_token_shapes_are_redacted_under_any_name_and_diagnosis_values_are_kept() -> None:
    """A GitLab token, a JWT, an HF org token, an AWS temporary key id under an innocent name (VLLM_…, RAY_…, inside
    Ray's runtime_env JSON) survived a real collect: only hf_/gh*_/AKIA/sk- shapes were known."""
    from doctor.probes.envvars import collect_env

    env = {f"VERL_X{i}": f"prefix {tok}," for i, tok in enumerate(ISSUED.values())}
    env["RAY_JOB_CONFIG_JSON_ENV_VAR"] = json.dumps({"runtime_env": {"env_vars": {"GITLAB_CI": ISSUED["gitlab deploy"]}}})
    kept = {"VERL_COMMIT": "0f3c9a7be1d24c6f8a5b9e0d1c2f3a4b5c6d7e8f", "VLLM_VERSION": "0.9.1+empty",
            "ASCEND_TOOLKIT_HOME": "/usr/local/Ascend/ascend-toolkit/8.3.RC1", "HCCL_IF_IP": "10.0.0.2",
            "HCCL_CONNECT_TIMEOUT": "1800", "ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
            "VLLM_ASCEND_MODEL": "/data/sk-models/Qwen2.5-7B-Instruct", "RAY_TASK": "task-glpat-x", "PATH": "/bin"}
    got = collect_env({**env, **kept})
    for name, tok in ISSUED.items():
        assert all(tok not in v and tok[-12:] not in v for v in got.values()), name
    assert got["VERL_X0"] == f"prefix {REDACTED},"
    assert {k: got[k] for k in kept} == kept


def test_a_cloud_ak_sk_pair_is_secret_by_its_name_part_and_task_or_mask_are_not() -> None:
    """HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK (Huawei Cloud's SDKs), OBS_AK / MA_SK (ModelArts jobs) were kept: AK
    and SK are no secret word and too short to look for inside a word (TASK_QUEUE_ENABLE, vllm's --task)."""
    for n in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "OBS_AK", "MA_SK", "obs.sk", "AK", "SK"):
        assert is_secret_name(n), n
    for n in ("TASK_QUEUE_ENABLE", "HCCL_PEAK", "MASK_RATIO", "ASK", "SKIP_X", "AKX"):
        assert not is_secret_name(n), n
    line = '{"HUAWEICLOUD_SDK_AK": "QTWAOYTTINDUT2QVKYUC", "HUAWEICLOUD_SDK_SK": "MFyfvK41ba2giqM7Uio6PznpdUKGpownRZlmVmHc"}'
    assert redact_line(line) == f'{{"HUAWEICLOUD_SDK_AK": "{REDACTED}", "HUAWEICLOUD_SDK_SK": "{REDACTED}"}}'
    assert redact_line("obsutil cp --obs-sk Pq8mZ3xV7n --task generate TASK_QUEUE_ENABLE=2") == (
        f"obsutil cp --obs-sk {REDACTED} --task generate TASK_QUEUE_ENABLE=2")
    assert redact_text("export MA_SK=Pq8mZ3xV7n\nASCEND_HOME=/usr/local/Ascend\n") == (
        f"export MA_SK={REDACTED}\nASCEND_HOME=/usr/local/Ascend\n")


def test_a_private_key_block_and_a_token_in_a_bundle_file_are_redacted() -> None:
    """`redact_text` (every bundle member) knew secret-named assignments and URL credentials only: a PEM private
    key block or a bare token on a line of a file went into the bundle as it was."""
    pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
           "-----END OPENSSH PRIVATE KEY-----")
    text = f"Version=8.3.RC1\n{pem}\nmirror login {ISSUED['gitlab personal']} ok\n"
    assert redact_text(text) == f"Version=8.3.RC1\n{REDACTED}\nmirror login {REDACTED} ok\n"
    # an env value holding the key (newlines and all), and a block cut short: redacted to the end
    assert redact_value("VLLM_SIGNING", pem) == REDACTED
    assert redact_line("key: -----BEGIN RSA PRIVATE KEY----- MIIEvQIBADANBg") == f"key: {REDACTED}"
    assert redact_text("-----BEGIN PUBLIC KEY-----\nMFkw\n") == "-----BEGIN PUBLIC KEY-----\nMFkw\n"  # not a secret
