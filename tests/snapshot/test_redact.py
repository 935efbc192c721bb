"""Redaction of env values, bundle files and pip freeze lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from doctor.snapshot.redact import REDACTED, is_secret_name, redact_text, redact_url_credentials, redact_value


def test_secret_names() -> None:
    for n in ("HF_TOKEN", "aws_secret_access_key", "DB_PASSWORD", "API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "AUTH_HEADER"):
        assert is_secret_name(n)
    assert not is_secret_name("ASCEND_HOME_PATH")


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
