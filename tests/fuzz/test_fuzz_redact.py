"""Redactor: an issued token or a private key block, set anywhere in arbitrary text between separators, never
survives `redact_text` (bundle files), `redact_line` (quoted log lines) or `redact_value` (collected env values); the
result is stable under a second pass and nothing raises."""

from hypothesis import given
from hypothesis import strategies as st

from doctor.snapshot.redact import redact_line, redact_text, redact_value

from ._budget import fuzz

TOKENS = [
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ",
    "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab",
    "glpat-xT3kPqR9sLmN2vBwY7zA", "glpat-0123456789abcdefABCDEF_-0123.01.1a2b3c4d5", "GR1348941PQrAlrwIUScCvc8l6dWY",
    "AKIAIOSFODNN7EXAMPLE", "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1GfEdCbA0",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oOPkCoM\n-----END EC PRIVATE KEY-----",
]
# what a token sits between in env dumps, JSON, command lines and URLs (a word character would make it another word)
SEPARATORS = st.sampled_from([" ", "\n", "\t", "=", ": ", "\"", "'", ",", ";", "(", ")", "[", "]", "{", "}", "/", "@", "|"])
text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


@fuzz
@given(text, SEPARATORS, st.sampled_from(TOKENS), SEPARATORS, text)
def test_no_token_survives_any_redactor(before: str, left: str, token: str, right: str, after: str) -> None:
    doc = before + left + token + right + after
    body = token.splitlines()[1] if "PRIVATE KEY" in token else token[-12:]
    for redact in (redact_text, redact_line, lambda s: redact_value("VLLM_EXTRA", s)):
        once = redact(doc)
        assert body not in once, (redact, doc, once)
        assert redact(once) == once
