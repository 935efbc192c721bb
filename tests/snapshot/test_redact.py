"""Redaction of env values, bundle files and pip freeze lines."""

from __future__ import annotations

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
