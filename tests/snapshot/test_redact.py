"""Redaction of env values, bundle files and pip freeze lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from doctor.snapshot.redact import REDACTED, is_secret_name, redact_text, redact_url_credentials, redact_value


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


@given(st.text())
def test_redaction_never_raises_and_is_idempotent(s: str) -> None:
    once = redact_text(s)
    assert redact_text(once) == once
